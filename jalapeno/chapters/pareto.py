"""The chapter *Pareto frontiers and the 50-100x ratios* (``notebooks/pareto.ipynb``).

Fits Jalapeño's four own constants to its published points in each scenario of its unknowns
(:func:`jalapeno.subject.fit_jalapeno`), draws its modeled frontiers next to the baselines'
(:func:`jalapeno.pareto.baseline_frontier`: measured, or transferred from measured layouts), recomputes
the three published matched-interactivity ratios (:func:`jalapeno.subject.ratio_table`), splits each into
its three factors (retention x peak ratio x steepness) and shows how a matched ratio grows without bound
as the baseline nears its fastest point.
"""

from __future__ import annotations

import math
from dataclasses import replace

import altair as alt
import numpy as np
import polars as pl

from .. import (baselines, calibration, charts, comparison, data, display, measured, pareto, power,
               schemes, specs, subject, uncertainty)
from ..data import claim_value
from ..display import number
from ..errors import UnknownNameError
from . import Chapter, Parameter, figures, quotes

#: The baselines' chip caps of the sensitivity table (with the chapter's ``baseline_max_chips``).
SENSITIVITY_MAX_CHIPS = (8, 16, 72)

#: The concurrency ranges the chapter's prose discusses (see :func:`jalapeno.pareto.sweep`).
CONCURRENCY_CAPS = ("benchmark", "none")

#: The models whose ratio factors the prose discusses one by one: ``models`` must include them.
DISCUSSED_MODELS = ("gpt-oss-120b", "deepseek-r1")

#: What the chapter takes (:class:`jalapeno.chapters.Parameter`); the notebook's parameters cell is generated from it.
PARAMETERS = (
    Parameter("models", ["gpt-oss-120b", "deepseek-r1", "kimi-k2.5"],
              "the models with a published ratio shown, gpt-oss-120b and deepseek-r1 included; the first is quoted",
              names="model"),
    Parameter("baseline_chips", ["gb200", "gb300"], "the chips drawn next to Jalapeño in the frontier figures",
              names="HBM chip"),
    Parameter("power_basis", "rated", "the power basis of the per-kW throughputs and the explorable figures' start",
              choices=tuple(power.POWER_BASES)),
    Parameter("isl", 8192, "the nominal input length of the frontiers drawn and the baselines", low=1, high=1048576,
              unit="tokens"),
    Parameter("osl", 1024, "the nominal output length of the frontiers drawn and the baselines", low=1, high=1048576,
              unit="tokens"),
    Parameter("baseline_max_chips", 8, "the most chips per decode worker of a baseline modeled outright", low=1,
              high=1024, unit="chips"),
    Parameter("concurrency_cap", "benchmark",
              "benchmark (the top of the benchmark's concurrency sweep per chip) or none, for every frontier "
              "and the fit",
              choices=CONCURRENCY_CAPS),
    Parameter("e2e_reading", subject.DEFAULT_E2E_READING, "the reading of Jalapeño's published E2E for the fit "
              "and the bands: separate (a consistency check, no latency outside the chip) or one-point (a request "
              "latency fitted to it)", choices=subject.E2E_READINGS),
    Parameter("tolerance", 0.15, "how close a scenario's ratio must come to the published one to be said close "
              "(a fraction)", low=0, high=1, low_open=True),)


def compute(*, models: list[str], baseline_chips: list[str], power_basis: str, isl: int, osl: int,
            baseline_max_chips: int, concurrency_cap: str, e2e_reading: str, tolerance: float) -> Chapter:
    """The Pareto chapter's numbers, tables and figures.

    Parameters: those of :data:`PARAMETERS` (type, default, range and unit of each there). ``models``
    need a published ratio (:data:`jalapeno.pareto.PUBLISHED_RATIOS`) and include
    :data:`DISCUSSED_MODELS`. ``isl`` and ``osl`` change the frontiers drawn and the baselines only: the
    fit, the concurrency ranges and the peaks quoted in the first section stay at the published 8k/1k
    workload (claims ``workload-isl``, ``workload-osl``). ``concurrency_cap`` applies to
    :func:`jalapeno.pareto.sweep`. ``e2e_reading`` (:data:`jalapeno.subject.E2E_READINGS`) sets Jalapeño's
    fit and the fits at the nodes of its unknowns behind every band. The verdicts (agrees / disagrees) are not taken with ``tolerance``:
    they are :func:`jalapeno.uncertainty.judge` of each published number against its band (Jalapeño's
    unknowns and the model's held-out error, :mod:`jalapeno.uncertainty`).

    Returns a :class:`~jalapeno.chapters.Chapter`. Tables: ``unknowns``, ``constants``, ``ratio_summary``,
    ``ratios``, ``ratio_bands``, ``drivers``, ``factors``, ``sensitivity``, ``gb300_checks``,
    ``assumption_ratios``, ``fixed_interactivity``. Figures also ``ratio-vs-fastest`` (exported as ``pareto-ratio-vs-fastest``). Figures: ``frontiers-<model>`` for each model (exported as
    ``pareto-<model with dashes>``) and ``ratio-curves``. Raises UnknownNameError for an unknown model,
    chip, power basis or concurrency range and for a model without a published matched ratio; ValueError
    when ``models`` leaves out gpt-oss-120b or DeepSeek-R1 (the prose discusses their factors) or for a
    workload that fits nowhere.
    """
    _check(models, baseline_chips, power_basis, concurrency_cap)
    subject.check_e2e_reading(e2e_reading)
    ch = Chapter()
    fits = {sc: subject.fit_jalapeno(sc, concurrency_cap=concurrency_cap, e2e_reading=e2e_reading)
            for sc in subject.SCENARIOS}
    _unknowns_and_fit(ch, fits, concurrency_cap)
    _frontier_figures(ch, fits, models=models, baseline_chips=baseline_chips, power_basis=power_basis, isl=isl,
                      osl=osl, baseline_max_chips=baseline_max_chips, concurrency_cap=concurrency_cap)
    ratios = subject.ratio_table(models, power_basis=power_basis, fits=fits, concurrency_cap=concurrency_cap)
    ens = uncertainty.ensemble(concurrency_cap, e2e_reading=e2e_reading)
    _ratios(ch, ratios, models=models, power_basis=power_basis, concurrency_cap=concurrency_cap, tolerance=tolerance,
            e2e_reading=e2e_reading)
    _bands(ch, ens, models=models, power_basis=power_basis)
    _factors(ch, ratios, fits, concurrency_cap, ens)
    _ratio_curves(ch, fits, models=models, power_basis=power_basis, isl=isl, osl=osl,
                  baseline_max_chips=baseline_max_chips, concurrency_cap=concurrency_cap)
    _sensitivity(ch, ratios, fits, models=models, power_basis=power_basis, baseline_max_chips=baseline_max_chips,
                 concurrency_cap=concurrency_cap)
    _baseline_question(ch, ens, fits, models=models, power_basis=power_basis)
    return ch



def _check(models, baseline_chips, power_basis, concurrency_cap) -> None:
    """UnknownNameError for a model without a published matched ratio, an unknown chip, power basis or
    concurrency range; ValueError when ``models`` leaves out a model the prose discusses."""
    for m in models:
        if m not in pareto.PUBLISHED_RATIOS:
            raise UnknownNameError("model with a published matched ratio", m, list(pareto.PUBLISHED_RATIOS))
    missing = [m for m in DISCUSSED_MODELS if m not in models]
    if missing:
        raise ValueError(f"models must include {', '.join(missing)}: the chapter discusses its ratio's factors; "
                         f"got {models!r}")
    for c in baseline_chips:
        specs.chip(c)
    if power_basis not in power.POWER_BASES:
        raise UnknownNameError("power basis", power_basis, power.POWER_BASES)
    if concurrency_cap not in CONCURRENCY_CAPS:
        raise UnknownNameError("concurrency cap", concurrency_cap, CONCURRENCY_CAPS)


def _unknowns_and_fit(ch: Chapter, fits: dict[str, subject.JalapenoFit], concurrency_cap: str) -> None:
    """Jalapeño's unknowns, its fitted constants per scenario and the concurrency range of the fit."""
    ch.add_table("unknowns", data.jalapeno_unknowns().select(
        pl.col("parameter").replace_strict(INPUT_WORDS, default=pl.col("parameter")), "low", "central", "high", "unit", "basis"),
        "Jalapeño's unknowns: the low, central and high value of each unpublished quantity, its unit and its basis")
    effs = {sc: f.efficiency for sc, f in fits.items()}
    pub_shape = {"isl": int(claim_value("workload-isl")), "osl": int(claim_value("workload-osl"))}  # 8k/1k
    caps = {(m, d): pareto.benchmark_concurrency_cap(m, **pub_shape, disagg=d)
            for m in ("gpt-oss-120b", "deepseek-r1") for d in (False, True)}
    gb200 = measured.points("gpt-oss-120b", "gb200", **pub_shape)
    gb200_peak = gb200.row(gb200["tput_per_gpu"].arg_max(), named=True)
    j_peak = subject.jalapeno_frontier("gpt-oss-120b", "central", fit=fits["central"], **pub_shape,
                                       concurrency_cap=concurrency_cap)
    ch.quote("j_points", j_peak.height)  # the frontier's points, and those beyond every recipe it was not run at
    ch.quote("j_beyond", int((~j_peak["within_recipes"]).sum()))
    j_peak = j_peak.row(j_peak["throughput_tok_s_chip"].arg_max(), named=True)
    ch.quote("j_peak_within", "within one" if j_peak["within_recipes"] else "beyond every one")
    default_cap = concurrency_cap == "benchmark"
    ch.quote("range_intro", "Every modeled frontier in this chapter, Jalapeño's and the baselines modeled outright, spans"
             " the benchmark's own concurrency range" if default_cap else
             f"This build sets `concurrency_cap = {concurrency_cap!r}`. By default every modeled frontier spans the"
             " benchmark's own concurrency range")
    ch.quote("range_assume", "so the book assumes the same range for it. The fits then reach the published peak at the"
             " top of the range" if default_cap else "so the book's default build assumes the same range for it; this"
             " one does not. The fits here reach the published peak")
    ch.quote("cap_gpt", caps["gpt-oss-120b", False], "{:.0f}")
    ch.quote("cap_dsr", caps["deepseek-r1", False], "{:.0f}")
    ch.quote("cap_gpt_disagg", caps["gpt-oss-120b", True], "{:.0f}")
    ch.quote("cap_dsr_disagg", caps["deepseek-r1", True], "{:.0f}")
    ch.quote("gb200_peak_conc", gb200_peak["conc"] / gb200_peak["n_gpus"], "{:.0f}")
    ch.quote("j_peak_conc", j_peak["concurrency"], "{:.0f}")
    ch.quote("j_peak_chips", "one chip" if j_peak["n_chips"] == 1 else f"{number(j_peak['n_chips']):.0f} chips")
    ch.quote("eta_p_lo", 100 * min(e.eta_prefill for e in effs.values()), "{:.1f}")
    ch.quote("eta_p_hi", 100 * max(e.eta_prefill for e in effs.values()), "{:.1f}")
    constants = subject.jalapeno_constants(fits).select(
        "scenario", "e2e_reading", (pl.col("tau_s") * 1e6).alias("tau_us_per_layer"), "eta_prefill",
        (pl.col("request_latency_s") * 1e3).alias("request_latency_ms"), "mla_layer_factor")
    reading = fits["central"].e2e_reading
    ch.quote("e2e_reading", reading)
    ch.quote("n_fit", len(fits["central"].target_claims))
    ch.quote("n_fit_words", {3: "three", 4: "four"}[len(fits["central"].target_claims)])
    calibrated = calibration.load()
    e2e = comparison.e2e_decomposition().to_dicts()
    ch.quote("tbt_ms", claim_value("gptoss-jalapeno-tbt"), "{:.2f}")
    ch.quote("peak_kw", claim_value("gptoss-jalapeno-tok-per-kw"), "{:,.0f}")
    ch.quote("e2e_pub", claim_value("gptoss-jalapeno-e2e"), "{:.2f}")
    ch.quote("dsr1_su", claim_value("dsr1-jalapeno-single-user"), "{:.0f}")
    for col, key, fmt in (("tau_us_per_layer", "tau", "{:.1f}"), ("request_latency_ms", "lat", "{:.0f}"),
                          ("mla_layer_factor", "mla", "{:.2f}")):
        ch.quote(f"{key}_lo", constants[col].min(), fmt)
        ch.quote(f"{key}_hi", constants[col].max(), fmt)
    ch.quote("tau_gpu", calibrated.tau(pareto.best_stack(calibrated)) * 1e6, "{:.1f}")
    ch.quote("mla_gpu", calibrated.mla_layer_factor, "{:.2f}")
    ch.quote("j_ttft", e2e[0]["implied_ttft_s"], "{:.2f}", quantity="gptoss-implied-ttft-s")
    ch.quote("b_ttft", e2e[1]["implied_ttft_s"], "{:.2f}", quantity="gb200-gptoss-implied-ttft-s")
    check = subject.e2e_consistency("central", fit=fits["central"], concurrency_cap=concurrency_cap)
    at = (f"a point of its modeled frontier at {display.formatted(check['interactivity_tok_s_user'], '{:,.0f}', noise=display.FIT_NOISE)} "
          f"tok/s/user (a TPOT of {display.formatted(1e3 * check['tpot_s'], '{:.2f}', noise=display.FIT_NOISE)} ms) has "
          f"that E2E" if check["found"] else "no point of its modeled frontier has that E2E")
    ch.quote("fit_e2e", (
        "The published E2E ({e2e} s) is not fitted: this build takes the `separate` reading of it "
        "(`jalapeno.subject.E2E_READINGS`, the book's default; Reading the numbers gives both readings), "
        "under which the E2E and the minimum TBT come from different configurations, so Jalapeño carries no "
        "request latency outside the chip, as no measured chip does. It is a consistency check instead: in "
        "the central scenario {at}, against {fast} s at the fastest point".format(
            e2e=display.formatted(claim_value("gptoss-jalapeno-e2e"), "{:.2f}"), at=at,
            fast=display.formatted(check["fastest_e2e_s"], "{:.2f}", noise=display.FIT_NOISE)))
        if reading == "separate" else (
        "This build takes the `one-point` reading of the published E2E (`jalapeno.subject.E2E_READINGS`; the "
        "book's default is `separate`, see Reading the numbers): with the minimum TBT it is one operating point, "
        "and a fixed request latency outside the chips is fitted to it ({e2e} s at the fastest point); every "
        "measured chip then carries one too, by the same rule (`jalapeno.subject.outside_chip_latency_s`)".format(
            e2e=display.formatted(claim_value("gptoss-jalapeno-e2e"), "{:.2f}"))))
    # the same sentence in reader words (no package names), which the prose quotes; ``fit_e2e`` stays as published
    ch.quote("e2e_check", (
        "The published E2E ({e2e} s) is not fitted: this build takes the `separate` reading of it (the book's "
        "default; *Reading the numbers* gives both readings), under which the E2E and the minimum TBT come from "
        "different configurations, so Jalapeño carries no request latency outside the chip, as no measured chip "
        "does. It is a consistency check instead: in the central scenario {at}, against {fast} s at the fastest "
        "point".format(e2e=display.formatted(claim_value("gptoss-jalapeno-e2e"), "{:.2f}"), at=at,
                       fast=display.formatted(check["fastest_e2e_s"], "{:.2f}", noise=display.FIT_NOISE)))
        if reading == "separate" else (
        "This build takes the `one-point` reading of the published E2E (the book's default is `separate`, see "
        "*Reading the numbers*): with the minimum TBT it is one operating point, and a fixed request latency "
        "outside the chips is fitted to it ({e2e} s at the fastest point); every measured chip then carries one "
        "too, fitted by the same rule".format(e2e=display.formatted(claim_value("gptoss-jalapeno-e2e"), "{:.2f}"))))
    lat = (f"{ch.numbers['lat_lo']}–{ch.numbers['lat_hi']} ms")
    ch.quote("lat_text", (
        "Under this reading the request latency is 0 in every scenario") if reading == "separate" else (
        f"The request latency, {lat}, is the part of the published E2E the model cannot place on the chip. Read "
        f"with the published TBT, the E2E leaves {ch.numbers['j_ttft']} s for the first token, against "
        f"{ch.numbers['b_ttft']} s for GB200 read the same way. A chip that reaches its published peak throughput "
        "would prefill an 8k prompt far faster than that, so the book carries the difference as a constant and "
        "does not explain it"))
    ch.add_table("constants", constants, f"Jalapeño's own constants fitted to its published points in each scenario, "
                 f"under the {reading} reading of its E2E")


def frontier_lines(models: list[str], baseline_chips: list[str], fits: dict[str, subject.JalapenoFit], *,
                   isl: int, osl: int, baseline_max_chips: int, concurrency_cap: str) -> pl.DataFrame:
    """The grid of the explorable frontier figures: every frontier of every model under every power basis
    of :data:`jalapeno.power.POWER_BASES`, Jalapeño's in each scenario of ``fits`` and each baseline's
    (:func:`jalapeno.pareto.baseline_frontier`). One row per frontier point: ``chip``, ``model``,
    ``interactivity_tok_s_user`` (tok/s/user), ``tok_s_per_kw``, ``line`` (``jalapeno, modeled`` or
    ``<chip>, <source>``), ``scenario`` (null on baseline rows), ``power_basis`` and the nominal
    :data:`jalapeno.calibration.BAND_LEVEL` band of every frontier that is not measured
    (:func:`jalapeno.pareto.with_band` with the scheme :func:`jalapeno.calibration.band_scheme` gives it,
    as ``jalapeno.frontier(..., band=0.8)`` does): ``tok_s_per_kw_low``, ``tok_s_per_kw_high`` and
    ``band_scheme`` (the scheme's label, :data:`jalapeno.schemes.SCHEMES`), null on measured rows."""
    cols = ("chip", "model", "interactivity_tok_s_user", "tok_s_per_kw", "tok_s_per_kw_low", "tok_s_per_kw_high",
            "band_scheme")

    def banded(front: pl.DataFrame, chip: str, model: str, source: str) -> pl.DataFrame:
        if source == "measured":
            return front.with_columns(tok_s_per_kw_low=pl.lit(None, pl.Float64), tok_s_per_kw_high=pl.lit(None, pl.Float64),
                                      band_scheme=pl.lit(None, pl.Utf8))
        scheme = calibration.band_scheme(chip, model, isl=isl, osl=osl)
        return pareto.with_band(front, scheme).with_columns(band_scheme=pl.lit(schemes.SCHEMES[scheme].label))

    lines = []
    for m in models:
        for basis in power.POWER_BASES:
            for sc, fit in fits.items():
                f = subject.jalapeno_frontier(m, sc, fit=fit, isl=isl, osl=osl, power_basis=basis,
                                              concurrency_cap=concurrency_cap)
                lines.append(banded(f, calibration.ANCHORED_CHIP, m, "modeled").select(*cols).with_columns(
                    line=pl.lit("jalapeno, modeled"), scenario=pl.lit(sc), power_basis=pl.lit(basis)))
            for c in baseline_chips:
                b = pareto.baseline_frontier(m, c, power_basis=basis, max_chips=baseline_max_chips, isl=isl, osl=osl,
                                             concurrency_cap=concurrency_cap)
                b = banded(b.with_columns(pl.lit(c).alias("chip"), pl.lit(m).alias("model")), c, m, b["source"][0])
                lines.append(b.select(*cols).with_columns(line=pl.lit(f"{c}, {b['source'][0]}"),
                                                          scenario=pl.lit(None, pl.Utf8), power_basis=pl.lit(basis)))
            for c in pareto.reader_chips(m, isl=isl, osl=osl):  # a book on a reader's runs: theirs, on any chip
                yours = pareto.reader_frontier(m, c, isl=isl, osl=osl, power_basis=basis)
                lines.append(banded(yours.with_columns(chip=pl.lit(c), model=pl.lit(m)), c, m, "measured")
                                 .select(*cols).with_columns(line=pl.lit(f"{c}, {charts.READER_SOURCE}"),
                                                             scenario=pl.lit(None, pl.Utf8), power_basis=pl.lit(basis)))
    return pl.concat(lines)


def _frontier_figures(ch: Chapter, fits, *, models, baseline_chips, power_basis, isl, osl, baseline_max_chips,
                      concurrency_cap) -> None:
    """One explorable frontier figure per model (slot ``frontiers-<model>``)."""
    all_lines = frontier_lines(models, baseline_chips, fits, isl=isl, osl=osl, baseline_max_chips=baseline_max_chips,
                               concurrency_cap=concurrency_cap)
    published = published_marks(models, baseline_chips, isl=isl, osl=osl)
    for m in models:
        chart = frontiers_explorable(all_lines.filter(pl.col("model") == m), power_basis=power_basis,
                                     scenario="central", title=f"{specs.model(m).display_name}: Pareto frontiers",
                                     published=published.filter(pl.col("model") == m))
        ch.add_figure(f"frontiers-{m}", chart, f"pareto-{m.replace('.', '-')}")
    _published_quotes(ch, published, models, isl=isl, osl=osl)
    ch.add_table("fixed_interactivity", fixed_interactivity(all_lines, power_basis=power_basis),
                 f"Each frontier's tok/s/kW ({power_basis} power) at fixed interactivity levels, "
                 f"{number(isl):,}/{number(osl):,} tokens, Jalapeño central")
    ch.quote("fixed_levels", ", ".join(f"{number(v):,}" for v in FIXED_LEVELS))


def published_marks(models: list[str], baseline_chips: list[str], *, isl: int, osl: int) -> pl.DataFrame:
    """The published operating points the frontier figures mark (:func:`jalapeno.pareto.published_points`
    of each model, rows as there), those of Jalapeño and of the chips in ``baseline_chips``; none when the
    frontiers are drawn at another workload than the published one (``isl``, ``osl`` in tokens against
    claims ``workload-isl`` and ``workload-osl``)."""
    frames = [pareto.published_points(m) for m in models]
    marks = pl.concat(frames).filter(pl.col("chip").is_in(["jalapeno", *baseline_chips]))
    published = (int(claim_value("workload-isl")), int(claim_value("workload-osl")))
    return marks if (isl, osl) == published else marks.clear()


#: The models' names in the prose.
MODEL_WORDS = {"gpt-oss-120b": "gpt-oss-120b", "deepseek-r1": "DeepSeek-R1", "kimi-k2.5": "Kimi K2.5"}


def _published_quotes(ch: Chapter, published: pl.DataFrame, models: list[str], *, isl: int, osl: int) -> None:
    """The published values the prose says the frontier figures mark, which figures mark them, and where
    GB200's measured gpt-oss-120b frontier (the published workload) peaks and ends next to its marks."""
    ch.quote("pub_gb200_kw", claim_value("gptoss-gb200-tok-per-kw"), "{:,.0f}")
    ch.quote("pub_j_su", claim_value("gptoss-jalapeno-single-user"), "{:,.0f}")
    ch.quote("pub_gb200_su", claim_value("gptoss-gb200-single-user"), "{:,.0f}")
    ch.quote("pub_gb200_tbt", claim_value("gptoss-gb200-tbt"), "{:.2f}")
    gb200 = pareto.measured_frontier("gpt-oss-120b", "gb200", isl=int(claim_value("workload-isl")),
                                     osl=int(claim_value("workload-osl")))
    ch.quote("meas_gb200_kw", gb200["tok_s_per_kw"].max(), "{:,.0f}")
    ch.quote("meas_gb200_su", gb200["interactivity_tok_s_user"].max(), "{:,.0f}")
    marked = [MODEL_WORDS.get(m, m) for m in models if m in published["model"].to_list()]
    shape = f"{number(int(claim_value('workload-isl'))):,}/{number(int(claim_value('workload-osl'))):,} tokens"
    ch.quote("pub_marked", (
        "The figures of " + " and ".join(marked) + " mark the operating points OpenAI published (as the seeds "
        f"print them): each is a thin line across the plot with a diamond where it meets its axis, the legend's "
        f"*{PUBLISHED_LABEL}*"
        if marked else
        f"This build draws its frontiers at {number(isl):,}/{number(osl):,} tokens, so no figure marks the "
        f"operating points OpenAI published, all at {shape}"))


#: The interactivity levels (tok/s/user) at which the chapter reads every frontier's throughput per kW.
FIXED_LEVELS = (25, 50, 100, 150, 300, 1000)


def fixed_interactivity(lines: pl.DataFrame, *, power_basis: str, levels=FIXED_LEVELS) -> pl.DataFrame:
    """Throughput per kW of every frontier of ``lines`` (:func:`frontier_lines`; Jalapeño's central scenario)
    at each interactivity level of ``levels`` (tok/s/user), read by :func:`jalapeno.pareto.throughput_at`:
    a comparison that does not hinge on where the slower frontier ends. One row per model and frontier;
    a level beyond a frontier's fastest point reads "not reached"."""
    chosen = lines.filter((pl.col("power_basis") == power_basis)
                          & (pl.col("scenario").is_null() | (pl.col("scenario") == "central")))
    rows = []
    for (model, line), front in chosen.group_by(["model", "line"], maintain_order=True):
        front = front.sort("interactivity_tok_s_user")
        row = {"model": model, "frontier": line + (" (central)" if line.startswith("jalapeno") else "")}
        for level in levels:
            v = pareto.throughput_at(front, level)
            row[f"at {number(level):,} tok/s/user (tok/s/kW)"] = f"{number(v):,.0f}" if math.isfinite(v) else "not reached"
        rows.append(row)
    return pl.DataFrame(rows)


def scenarios_text(names: list[str], tolerance: float) -> str:
    """The scenarios in which a ratio is within ``tolerance`` of the published one, as a phrase:
    ``no scenario within ±15 %``, ``within ±15 % in the low scenario``, ``... in the low and central
    scenarios``."""
    within = f"within ±{number(100 * tolerance):.0f} %"
    if not names:
        return f"no scenario {within}"
    if len(names) == 1:
        return f"{within} in the {names[0]} scenario"
    return f"{within} in the {', '.join(names[:-1])} and {names[-1]} scenarios"


def _ratios(ch: Chapter, ratios: pl.DataFrame, *, models, power_basis, concurrency_cap, tolerance,
            e2e_reading: str = subject.DEFAULT_E2E_READING) -> None:
    """The three matched ratios against the published ones, and under the other concurrency range."""
    alt_cap = "none" if concurrency_cap == "benchmark" else "benchmark"
    alternative = subject.ratio_table(models, power_basis=power_basis, concurrency_cap=alt_cap, e2e_reading=e2e_reading)
    ch.quote("alt_intro", "The benchmark's concurrency range is one of those assumptions. Over an unbounded range"
             " (`concurrency_cap = \"none\"`) the fit reaches Jalapeño's published gpt-oss-120b peak only at far higher"
             " concurrency, with a lower prefill efficiency, which the larger models inherit:"
             if alt_cap == "none" else "Over the benchmark's own concurrency range instead"
             " (`concurrency_cap = \"benchmark\"`, the book's default),")
    close = (pl.col("deviation").abs() <= tolerance)
    summary = ratios.group_by("model", maintain_order=True).agg(
        pl.col("baseline").first(), pl.col("baseline_source").first(), pl.col("published_ratio").first(),
        pl.col("ratio").min().alias("ratio_min_over_scenarios"),
        pl.col("ratio").filter(pl.col("scenario") == "central").first().alias("ratio_central"),
        pl.col("ratio").max().alias("ratio_max_over_scenarios"),
        pl.col("scenario").filter(close).str.join(", ").alias("scenarios_within_tolerance"))
    summary = summary.with_columns(
        within_tolerance=((pl.col("ratio_min_over_scenarios") <= pl.col("published_ratio") * (1 + tolerance))
                          & (pl.col("ratio_max_over_scenarios") >= pl.col("published_ratio") * (1 - tolerance))))
    for row in summary.iter_rows(named=True):
        k = row["model"].split("-")[0]
        ch.quote(f"{k}_low", row["ratio_min_over_scenarios"], "{:.0f}")
        ch.quote(f"{k}_high", row["ratio_max_over_scenarios"], "{:.0f}")
        ch.quote(f"{k}_pub", row["published_ratio"], "{:g}")
        names = row["scenarios_within_tolerance"].split(", ") if row["scenarios_within_tolerance"] else []
        ch.quote(f"{k}_close", scenarios_text(names, tolerance))
    per_scenario = ratios.group_by("scenario", maintain_order=True).agg(close.all().alias("all_within"))
    for row in alternative.group_by("model", maintain_order=True).agg(
            pl.col("ratio").min().alias("lo"), pl.col("ratio").max().alias("hi"),
            (pl.col("deviation").abs() <= tolerance).any().alias("met")).iter_rows(named=True):
        k = row["model"].split("-")[0]
        ch.quote(f"{k}_free_lo", row["lo"], "{:.0f}")
        ch.quote(f"{k}_free_hi", row["hi"], "{:.0f}")
        ch.quote(f"{k}_free_met", "one scenario still meets it" if row["met"] else "no scenario meets it")
    ch.quote("n_ratios", summary.height)
    central_close = ratios.filter(pl.col("scenario") == "central").select(close.sum()).item()
    ch.quote("n_close_central", int(central_close))
    ch.quote("close_verb", "comes" if int(central_close) == 1 else "come")
    ch.quote("tolerance_pct", 100 * tolerance, "{:.0f}")
    n_all = int(per_scenario["all_within"].sum())
    ch.quote("all_three", "no single scenario reproduces all three at once" if n_all == 0
             else f"{n_all} of the {per_scenario.height} scenarios reproduce all three at once")
    ch.add_table("ratio_summary", summary,
                 "Each model's matched ratio: published, lowest, central and highest over the scenarios, those "
                 f"within ±{ch.numbers['tolerance_pct']} %")
    ch.add_table("ratios", ratios.select("model", "scenario", "interactivity_tok_s_user", "baseline_tok_s_kw",
                                         "jalapeno_tok_s_kw", "ratio", "published_ratio", "deviation",
                                         "jalapeno_max_interactivity"),
                 "Matched ratio per model and scenario: Jalapeño's and the baseline's tok/s/kW at the baseline's "
                 "fastest point")


def _factors(ch: Chapter, ratios: pl.DataFrame, fits: dict[str, subject.JalapenoFit], concurrency_cap: str,
             ens: uncertainty.Ensemble) -> None:
    """Each ratio's three factors, the retentions the published ratios imply, and Kimi K2.5's other ratios."""
    effs = {sc: f.efficiency for sc, f in fits.items()}
    factors = ratios.select("model", "scenario", "jalapeno_retention", "implied_retention", "peak_ratio",
                            "baseline_steepness", "ratio", "published_ratio")
    g = factors.filter(pl.col("model") == "gpt-oss-120b")
    ch.quote("gpt_steep", g["baseline_steepness"][0], "{:.0f}")
    ch.quote("gpt_peak_ratio", g["peak_ratio"][0], "{:.2f}", quantity="gptoss-per-watt-ratio-rated",
             variant="modeled Jalapeño")
    ch.quote("gpt_implied", 100 * g["implied_retention"][0], "{:.0f}")
    ch.quote("gpt_ret_lo", 100 * g["jalapeno_retention"].min(), "{:.0f}")
    ch.quote("gpt_ret_hi", 100 * g["jalapeno_retention"].max(), "{:.0f}")
    implied = factors.group_by("model", maintain_order=True).agg(pl.col("implied_retention").mean())
    ch.quote("implied_lo", 100 * implied["implied_retention"].min(), "{:.0f}")
    ch.quote("implied_hi", 100 * implied["implied_retention"].max(), "{:.0f}")
    domain = data.jalapeno_unknowns().filter(pl.col("parameter") == "scale_up_domain").row(0, named=True)
    ch.quote("domain_lo", domain["low"], "{:.0f}")
    ch.quote("domain_hi", domain["high"], "{:.0f}")
    ch.quote("dsr_fastest_chips", subject.fastest_layout("deepseek-r1", "central", fit=fits["central"],
                                                         concurrency_cap=concurrency_cap)["n_chips"], "{:.0f}",
             quantity="jalapeno-dsr1-single-user-chips" if concurrency_cap == "benchmark" else None)
    for cid, key, metric in (("kimi-per-watt-ratio", "k_watt", "per_kw_at_peak"),
                             ("kimi-tbt-ratio", "k_tbt", "single_user"), ("kimi-e2e-ratio", "k_e2e", "e2e")):
        # the band the claims registry judges too (one source of each band)
        b = uncertainty.front_ratio_band(ens, "kimi-k2.5", metric, concurrency_cap=concurrency_cap)
        ch.quote(f"{key}_model", b.text(unit="x"))
        ch.quote(f"{key}_pub", claim_value(cid), "{:g}")
        ch.quote(f"{key}_ok", uncertainty.judge(claim_value(cid), b))
    kimi_peak = subject.jalapeno_frontier("kimi-k2.5", "central", fit=fits["central"],
                                          concurrency_cap=concurrency_cap)["tok_s_per_kw"].max()
    doubled = replace(effs["central"], eta_prefill=2 * effs["central"].eta_prefill)
    kimi_peak_2x = subject.jalapeno_frontier("kimi-k2.5", "central", fit=replace(fits["central"], efficiency=doubled),
                                             concurrency_cap=concurrency_cap)["tok_s_per_kw"].max()
    d = factors.filter((pl.col("model") == "deepseek-r1") & (pl.col("scenario") == "central")).row(0, named=True)
    watt_low = claim_value("headline-per-watt-ratio")
    ch.quote("dsr_peak_lo", factors.filter(pl.col("model") == "deepseek-r1")["peak_ratio"].min(), "{:.2f}")
    ch.quote("dsr_peak_hi", factors.filter(pl.col("model") == "deepseek-r1")["peak_ratio"].max(), "{:.2f}")
    ch.quote("watt_low", watt_low, "{:g}")
    ch.quote("watt_high", claim_value("headline-per-watt-ratio", high=True), "{:g}")
    ch.quote("dsr_implied_at_low", 100 * d["published_ratio"] / (watt_low * d["baseline_steepness"]), "{:.0f}")
    ch.quote("dsr_ret_central", 100 * d["jalapeno_retention"], "{:.0f}")
    ch.quote("dsr_ratio_at_low", d["jalapeno_retention"] * watt_low * d["baseline_steepness"], "{:.0f}")
    ch.quote("dsr_at", ratios.filter(pl.col("model") == "deepseek-r1")["interactivity_tok_s_user"][0], "{:.0f}")
    ch.quote("dsr_pub_su", claim_value("dsr1-baseline-single-user"), "{:.0f}", quantity="dsr1-comparison-single-user-tok-s")
    steep = dict(factors.group_by("model").agg(pl.col("baseline_steepness").first()).iter_rows())
    pub_peak = {"gpt-oss-120b": claim_value("gptoss-jalapeno-tok-per-kw") / claim_value("gptoss-gb200-tok-per-kw"),
                "kimi-k2.5": claim_value("kimi-per-watt-ratio"), "deepseek-r1": watt_low}
    for m, key in (("gpt-oss-120b", "imp_gpt"), ("kimi-k2.5", "imp_kimi"), ("deepseek-r1", "imp_dsr")):
        if m in steep:
            ch.quote(key, 100 * claim_value(pareto.PUBLISHED_RATIOS[m][0]) / (pub_peak[m] * steep[m]), "{:.0f}")
    ch.quote("k_prefill_gain", kimi_peak_2x / kimi_peak, "{:.2f}")
    ch.add_table("factors", factors, "Each matched ratio's factors per model and scenario: retention, peak ratio, "
                 "steepness; the implied retention")


def _ratio_curves(ch: Chapter, fits, *, models, power_basis, isl, osl, baseline_max_chips, concurrency_cap) -> None:
    """The matched ratio across each baseline's interactivity range (figure ``ratio-curves``)."""
    curves = []
    for m in models:
        claim_id, chip = pareto.PUBLISHED_RATIOS[m]
        old = pareto.baseline_frontier(m, chip, power_basis=power_basis, max_chips=baseline_max_chips, isl=isl,
                                       osl=osl, concurrency_cap=concurrency_cap)
        new = subject.jalapeno_frontier(m, "central", fit=fits["central"], isl=isl, osl=osl, power_basis=power_basis,
                                        concurrency_cap=concurrency_cap)
        curves.append(pareto.ratio_curve(new, old).with_columns(label=pl.lit(f"{m} vs {chip}")))
    curves = pl.concat(curves)
    first = curves.filter(pl.col("label").str.starts_with(models[0]))
    ch.quote("ratio_start", first["ratio"][0], "{:.1f}")
    # the central gpt-oss-120b matched ratio against its default baseline, as the caveats chapter shows it
    default = (models[0] == "gpt-oss-120b" and power_basis == "rated" and concurrency_cap == "benchmark"
               and isl == 8192 and osl == 1024)
    ch.quote("ratio_end", first["ratio"][-1], "{:.0f}", quantity="gptoss-matched-ratio-central" if default else None)
    ch.quote("first_model", models[0])
    ch.quote("dsr_pub", claim_value("dsr1-matched-tbt-ratio"), "{:g}")
    ch.add_figure("ratio-curves", figures.ratio_curves(curves), "pareto-ratio-curves")


def _sensitivity(ch: Chapter, ratios: pl.DataFrame, fits, *, models, power_basis, baseline_max_chips,
                 concurrency_cap) -> None:
    """The central scenario's ratios against baselines modeled outright at several chip caps."""
    central = ratios.filter(pl.col("scenario") == "central").select(
        "model", "baseline", "baseline_source", "ratio", "published_ratio").with_columns(
        baseline_max_chips=pl.lit(None, pl.Int64))
    sens = pl.concat([central] + [
        subject.ratio_table(models, power_basis=power_basis, baseline_how="modeled", baseline_max_chips=mc,
                            fits={"central": fits["central"]}, concurrency_cap=concurrency_cap)
        .select("model", "baseline", "baseline_source", "ratio", "published_ratio")
        .with_columns(baseline_max_chips=pl.lit(mc, pl.Int64))
        for mc in sorted({baseline_max_chips, *SENSITIVITY_MAX_CHIPS})])
    modeled = sens.filter(pl.col("baseline_source") == "modeled")
    ch.quote("sens_lo", modeled["ratio"].min(), "{:.0f}")
    ch.quote("sens_hi", modeled["ratio"].max(), "{:.0f}")
    ch.add_table("sensitivity", sens, "Central-scenario matched ratios with the baselines above and with baselines "
                 "modeled outright, per chip cap")


#: Jalapeño's unknowns (``data/jalapeno_unknowns.csv``) and the model's own error, the inputs of the error
#: bands, as the tables and the prose name them.
INPUT_WORDS = {"hbm_bandwidth": "HBM bandwidth", "scale_up_bandwidth": "scale-up bandwidth",
               "scale_up_domain": "scale-up domain", "model_error": "model's own error"}


def _key(model: str) -> str:
    """The key the prose quotes a model's numbers under: the first part of its name."""
    return model.split("-")[0]


def _bands(ch: Chapter, ens: uncertainty.Ensemble, *, models, power_basis) -> None:
    """Each headline ratio as a median with its band and the verdict of :func:`jalapeno.uncertainty.judge`
    (table ``ratio_bands``), the model's error the bands carry, and which input drives each ratio (Sobol
    total indices, table ``drivers``)."""
    quotes.model_error(ch, ens.error)
    ch.quote("n_samples", f"{number(uncertainty.N_SAMPLES):,}")
    ch.quote("band_lo_pct", 100 * uncertainty.BAND[0], "{:.0f}")
    ch.quote("band_hi_pct", 100 * uncertainty.BAND[1], "{:.0f}")
    table = uncertainty.headline_ratios(ens, models, power_basis=power_basis)
    for row in table.iter_rows(named=True):
        k = _key(row["model"])
        b = uncertainty.Band(row["ratio_median"], row["ratio_low"], row["ratio_high"])
        ch.quote(f"{k}_band", b.text(unit="x"), **({"quantity": "gptoss-matched-ratio-central", "variant": "Monte Carlo"}
                                                      if row["model"] == "gpt-oss-120b" and power_basis == "rated" else {}))
        ch.quote(f"{k}_verdict", row["verdict"])
    n = int((table["verdict"] == "agrees").sum())
    ch.quote("n_agree", n)
    ch.add_table("ratio_bands", table, "Each published ratio against the model's error band (median, low, high of the "
                 "Monte Carlo draws), its verdict")
    drivers = uncertainty.sensitivity(ens, {m: (uncertainty.matched_ratio_nodes(ens, m, power_basis=power_basis), True)
                                            for m in models})
    drivers = drivers.with_columns(pl.col("input").replace_strict(INPUT_WORDS, default=pl.col("input")))
    ch.add_table("drivers", drivers.rename({"quantity": "model"}),
                 "What drives each model's matched ratio: each input's first-order and total Sobol index, ranked")
    for m in models:
        d = drivers.filter(pl.col("quantity") == m).sort("rank")
        k = _key(m)
        ch.quote(f"{k}_driver", d["input"][0])
        ch.quote(f"{k}_driver_share", display.formatted(100 * d["total"][0], "{:.0f}", noise=display.FIT_NOISE))
        ch.quote(f"{k}_second", d["input"][1])
        ch.quote(f"{k}_second_share", display.formatted(100 * d["total"][1], "{:.0f}", noise=display.FIT_NOISE))


#: The named assumption sets of :data:`jalapeno.baselines.ASSUMPTION_SETS` under the keys the prose quotes.
SET_KEYS = {"benchmark FP4 endpoint": "q_end", "FP8 only": "q_fp8", "MTP": "q_mtp",
            "seeds' single-user speed, final slope extended": "q_seeds", "MTP at the seeds' single-user speed": "q_mtp_seeds"}


def _baseline_question(ch: Chapter, ens: uncertainty.Ensemble, fits, *, models, power_basis) -> None:
    """What the DeepSeek-R1 ratio hinges on (the 104.3x question): the GB300 checks (table ``gb300_checks``),
    each published ratio under each named baseline assumption set with its band and verdict (table
    ``assumption_ratios``) and DeepSeek-R1's ratio against the baseline's fastest interactivity (figure
    ``ratio-vs-fastest``)."""
    checks = baselines.gb300_checks()
    ch.add_table("gb300_checks", checks.select("check", "public_value", "modeled_value", "ratio_modeled_over_public",
                                               "at_interactivity_tok_s_user", "source_id", "note").fill_nan(None),
                 "The GB300 transfer checked against the public GB300 and GB200 points: public and modeled value "
                 "of each ratio")
    by = {r["check"]: r for r in checks.iter_rows(named=True)}
    for key, name in (("chk_peak", "GB300 / GB200, FP4 peak throughput per GPU"),
                      ("chk_116", "GB300 / GB200, FP4 at 116 tok/s/user"),
                      ("chk_fp8_peak", "GB300 FP4 / FP8, peak throughput per GPU"),
                      ("chk_mtp", "GB300 FP4 with MTP / without, at 150 tok/s/user")):
        ch.quote(f"{key}_pub", by[name]["public_value"], "{:.2f}" if by[name]["public_value"] < 10 else "{:.0f}")
        ch.quote(f"{key}_mod", by[name]["modeled_value"], "{:.2f}" if by[name]["modeled_value"] < 10 else "{:.0f}")
        if key in ("chk_116", "chk_mtp"):  # the interactivity each check is taken at (tok/s/user)
            ch.quote(f"{key}_at", by[name]["at_interactivity_tok_s_user"], "{:.0f}")
    table = baselines.ratios_by_assumption(models, power_basis=power_basis, fits={"central": fits["central"]})
    rows = []
    for r in table.iter_rows(named=True):
        b = (uncertainty.ratio_band_at(ens, r["model"], r["interactivity_tok_s_user"], r["baseline_tok_s_kw"],
                                       power_basis=power_basis)
             if math.isfinite(r["ratio"]) else uncertainty.Band(math.nan, math.nan, math.nan))
        rows.append({**{c: r[c] for c in ("model", "assumption_set", "baseline_source", "interactivity_tok_s_user",
                                          "extrapolated", "ratio")},
                     "ratio_median": b.median, "ratio_low": b.low, "ratio_high": b.high,
                     "published_ratio": r["published_ratio"],
                     "verdict": uncertainty.judge(r["published_ratio"], b) if math.isfinite(b.low) else "does not apply"})
    sets = pl.DataFrame(rows, schema_overrides={"baseline_source": pl.Utf8, "extrapolated": pl.Boolean})
    ch.add_table("assumption_ratios", sets.fill_nan(None),  # a set that does not apply: blank cells
                 "Each published ratio under each named assumption about its baseline, Jalapeño central with its band "
                 "and verdict")
    dsr = {r["assumption_set"]: r for r in sets.filter(pl.col("model") == "deepseek-r1").iter_rows(named=True)}
    for name, key in SET_KEYS.items():
        r = dsr[name]
        ch.quote(key, uncertainty.Band(r["ratio_median"], r["ratio_low"], r["ratio_high"]).text(unit="x"),
                 quantity="dsr1-matched-ratio-gb300-mtp" if key == "q_mtp_seeds" and power_basis == "rated" else None)
        ch.quote(f"{key}_verdict", r["verdict"])
        ch.quote(f"{key}_at", r["interactivity_tok_s_user"], "{:.0f}")
    agreeing = [name for name, r in dsr.items() if r["verdict"] == "agrees"]
    ch.quote("q_agreeing", "none of the named sets" if not agreeing else
             ("the set " if len(agreeing) == 1 else "the sets ") + ", ".join(f"*{a}*" for a in agreeing))
    new = subject.jalapeno_frontier("deepseek-r1", "central", fit=fits["central"], power_basis=power_basis)
    old = baselines.baseline_under("deepseek-r1", "benchmark FP4 endpoint", power_basis=power_basis)
    ch.quote("q_implied", baselines.implied_fastest(new, old, claim_value("dsr1-matched-tbt-ratio")), "{:.0f}")
    ch.quote("q_elasticity", -baselines.final_slope(old), "{:.1f}")
    ch.quote("q_pub", claim_value("dsr1-matched-tbt-ratio"), "{:g}")
    curve = baselines.ratio_against_fastest("deepseek-r1", fit=fits["central"], power_basis=power_basis)
    xs = np.unique(curve["fastest_tok_s_user"].to_numpy())
    draws = ens.draws_of(lambda f: pareto.throughput_at(ens.frontier(f, "deepseek-r1", power_basis=power_basis), xs))
    with np.errstate(all="ignore"):
        q = np.nanquantile(draws, [uncertainty.BAND[0], 0.5, uncertainty.BAND[1]], axis=0)
    j = pl.DataFrame({"fastest_tok_s_user": xs, "j_low": q[0], "j_median": q[1], "j_high": q[2]})
    curve = curve.join(j, on="fastest_tok_s_user", how="left").with_columns(
        ratio_low=pl.col("j_low") / pl.col("baseline_tok_s_kw"), ratio_median=pl.col("j_median") / pl.col("baseline_tok_s_kw"),
        ratio_high=pl.col("j_high") / pl.col("baseline_tok_s_kw"),
        line=pl.format("{} {}", pl.col("precision").str.to_uppercase(),
                       pl.when(pl.col("spec_decoding") == "mtp").then(pl.lit("with MTP")).otherwise(pl.lit("no MTP"))))
    ch.add_figure("ratio-vs-fastest", ratio_against_fastest(curve.drop("j_low", "j_median", "j_high"),
                                                            published=claim_value("dsr1-matched-tbt-ratio"),
                                                            seeds_speed=claim_value("dsr1-baseline-single-user")),
                  "pareto-ratio-vs-fastest")


# ---- figures ----

#: The legend entry of the published operating points on the frontier figures (:func:`frontiers`).
PUBLISHED_LABEL = "published (OpenAI)"


def frontiers(df: pl.DataFrame, y: str = "tok_s_per_kw", title: str = "Pareto frontiers",
              published: pl.DataFrame | None = None) -> alt.Chart | alt.LayerChart:
    """Frontier lines (log-log) from a long frame with ``chip``, ``line`` (one line per frontier, e.g.
    ``gb200, measured``: the chip, then its source), ``interactivity_tok_s_user`` and ``y``. Colour by chip
    (:data:`jalapeno.charts.CHIP_COLOURS`), line style by source (:data:`jalapeno.charts.SOURCE_DASHES`: measured solid, transferred
    dashed, modeled dotted; a reader's runs, :data:`jalapeno.charts.READER_SOURCE`, dash-dotted), each
    line its own ``line``. Raises ValueError for a source that is none of these. With ``<y>_low`` and ``<y>_high`` columns (:func:`frontier_lines`,
    null on measured rows) each other frontier's band is an area under its line, and ``band_scheme`` names
    its validation scheme in the tooltip and the subtitle (a layered chart).

    ``published`` (rows of :func:`published_marks`, ``y`` ``tok_s_per_kw``; default none) adds the
    published operating points as layers drawn after the frontiers', in the figure's one dataset (rows
    with ``published`` set, which the frontier layers leave out): each has one coordinate, so each is a
    thin line across the plot at it (vertical for a single-user speed, horizontal for a throughput per
    kW) with a diamond where it meets its axis, coloured by chip, the diamonds under the legend entry
    :data:`PUBLISHED_LABEL`."""
    sources = {line: line.rsplit(", ", 1)[-1] for line in df["line"].unique().to_list()}
    valid = [*charts.SOURCES, charts.READER_SOURCE]
    unknown = sorted(s for s in sources.values() if s not in valid)
    if unknown:
        raise ValueError(f"frontier source {unknown[0]!r} is not one of {valid}")
    df = df.with_columns(pl.col("line").replace_strict(sources, return_dtype=pl.Utf8).alias("source"))
    chips = df["chip"].to_list()
    marked = published is not None and not published.is_empty() and y == "tok_s_per_kw"
    if marked:  # one dataset: the figure's CSV keeps the frontiers' columns first, then the published points'
        df = pl.concat([df, published.select("chip", "model", "interactivity_tok_s_user", "tok_s_per_kw", "power_basis",
                                             "point", "seeds").with_columns(published=pl.lit(PUBLISHED_LABEL))],
                       how="diagonal_relaxed")
    x = alt.X("interactivity_tok_s_user:Q", title="interactivity (tok/s/user)", scale=alt.Scale(type="log"))
    y_title = "throughput per kW (input + output tok/s/kW)" if y == "tok_s_per_kw" else y
    low, high = f"{y}_low", f"{y}_high"
    banded = low in df.columns and high in df.columns and df[low].drop_nulls().len() > 0
    tooltip = ["line:N", alt.Tooltip("interactivity_tok_s_user:Q", format=",.0f"), alt.Tooltip(f"{y}:Q", format=",.0f")]
    if banded:
        tooltip += [alt.Tooltip(f"{low}:Q", format=",.0f", title=f"{y} band low"),
                    alt.Tooltip(f"{high}:Q", format=",.0f", title=f"{y} band high"),
                    alt.Tooltip("band_scheme:N", title="band's scheme")]
    # no point overlay: with one, Vega-Lite draws the line-style legend as dots that all look alike
    lines = alt.Chart(df)
    if marked:
        lines = lines.transform_filter("!isValid(datum.published)")
    lines = lines.mark_line(strokeWidth=2).encode(
        x=x, y=alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(type="log")),
        color=charts.chip_color(chips, legend=charts.LINE_LEGEND),
        strokeDash=charts.source_dash(reader=charts.READER_SOURCE in sources.values()),
        detail="line:N", order="interactivity_tok_s_user:Q", tooltip=tooltip)
    y_enc = alt.Y(f"{y}:Q", title=y_title, scale=alt.Scale(type="log"))
    marks = _published_layers(df, x, y_enc, chips) if marked else []
    if charts.READER_SOURCE in sources.values():  # a reader's envelope points, visible where theirs is the envelope
        dots = alt.Chart(df).transform_filter(alt.datum.source == charts.READER_SOURCE).mark_point(
            shape="square", filled=True, size=30).encode(x=x, y=y_enc, color=charts.chip_color(chips, legend=None),
                                                          tooltip=tooltip)
        marks = [dots, *marks]
    notes = [*(["thin lines, diamonds: OpenAI's published points (each gives one coordinate)"] if marked else []),
             *([f"squares: the envelope points of {charts.READER_SOURCE}"] if charts.READER_SOURCE in sources.values() else [])]
    note = "; ".join(notes) or None
    if not banded:
        if not marks:
            return lines.properties(title=title)
        return alt.layer(lines, *marks).properties(title=alt.TitleParams(title, subtitle=charts.wrap_title(note)))
    # each modeled or transferred frontier's band, light and under its line; a measured frontier has none
    names = sorted(df["band_scheme"].drop_nulls().unique().to_list())
    band = alt.Chart(df).transform_filter(f"isValid(datum.{low})").mark_area(opacity=0.12).encode(
        x=x, y=alt.Y(f"{low}:Q", title=y_title, scale=alt.Scale(type="log")), y2=f"{high}:Q",
        color=charts.chip_color(df["chip"].to_list(), legend=charts.LINE_LEGEND),
        detail="line:N", tooltip=tooltip)
    subtitle = (f"shaded: each modeled frontier's {100 * calibration.BAND_LEVEL:.0f} % band, of validation scheme "
                + "; ".join(names) + " (a measured frontier has no band)" + (f"; {note}" if note else ""))
    return alt.layer(band, lines, *marks).properties(title=alt.TitleParams(title, subtitle=charts.wrap_title(subtitle)))


def _published_layers(df: pl.DataFrame, x: alt.X, y: alt.Y, chips: list[str]) -> list[alt.Chart]:
    """The published points of ``df`` (rows with ``published``, :func:`frontiers`) as four layers: a thin
    vertical line at each single-user speed and a diamond on the x axis, a thin horizontal line at each
    throughput per kW and a diamond on the y axis; coloured by chip (the scale of ``chips``), the diamonds
    under the legend entry :data:`PUBLISHED_LABEL`, tooltips in reader units."""
    color = charts.chip_color(chips, legend=charts.LINE_LEGEND)
    shape = alt.Shape("published:N", title=None, scale=alt.Scale(domain=[PUBLISHED_LABEL], range=["diamond"]))
    words = [alt.Tooltip("point:N", title=PUBLISHED_LABEL), alt.Tooltip("seeds:N", title="source")]
    speed = alt.Chart(df).transform_filter("isValid(datum.published) && isValid(datum.interactivity_tok_s_user)")
    per_kw = alt.Chart(df).transform_filter("isValid(datum.published) && isValid(datum.tok_s_per_kw)")
    speed_tip = words + [alt.Tooltip("interactivity_tok_s_user:Q", format=",.0f", title="interactivity (tok/s/user)"),
                         alt.Tooltip("throughput_not_published:N", title="throughput per kW")]
    kw_tip = words + [alt.Tooltip("tok_s_per_kw:Q", format=",.0f", title="throughput per kW (tok/s/kW, rated TDP)"),
                      alt.Tooltip("interactivity_not_published:N", title="interactivity")]
    speed = speed.transform_calculate(throughput_not_published="'not published'")
    per_kw = per_kw.transform_calculate(interactivity_not_published="'not published'")
    rule = {"strokeWidth": 1, "strokeDash": [1, 2], "opacity": 0.9}
    diamond = {"filled": True, "size": 90, "opacity": 1}
    return [speed.mark_rule(**rule).encode(x=x, color=color, tooltip=speed_tip),
            speed.mark_point(**diamond).encode(x=x, y=alt.value("height"), color=color, shape=shape, tooltip=speed_tip),
            per_kw.mark_rule(**rule).encode(y=y, color=color, tooltip=kw_tip),
            per_kw.mark_point(**diamond).encode(x=alt.value(0), y=y, color=color, shape=shape, tooltip=kw_tip)]


def frontiers_explorable(grid: pl.DataFrame, *, power_basis: str, scenario: str, title: str,
                         published: pl.DataFrame | None = None) -> alt.Chart:
    """:func:`frontiers` over a precomputed grid with two inputs: the power basis (``power_basis`` column,
    every row) and the scenario of Jalapeño's unknowns (``scenario`` column, empty on baseline rows, so
    the baselines stay drawn). Starts at ``power_basis`` and ``scenario``. ``published`` marks the
    published points (:func:`frontiers`): a published throughput per kW is drawn under its own basis
    (rated) only, a single-user speed under every basis and scenario."""
    bases = tuple(sorted(grid["power_basis"].unique().to_list(), key=power.POWER_BASES.index))
    scenarios = tuple(s for s in ("low", "central", "high") if s in grid["scenario"].drop_nulls().to_list())
    return charts.explorable(frontiers(grid, title=title, published=published),
                             charts.Knob("power_basis", bases, power_basis, "power basis", kind="select"),
                             charts.Knob("scenario", scenarios, scenario, "Jalapeño unknowns", kind="select"))


def ratio_against_fastest(df: pl.DataFrame, *, published: float, seeds_speed: float) -> alt.LayerChart:
    """The matched ratio as a function of the baseline's fastest interactivity
    (:func:`jalapeno.baselines.ratio_against_fastest` with a band: ``line``, ``fastest_tok_s_user``,
    ``ratio``, ``ratio_low``, ``ratio_high``, ``extrapolated``, ``baseline_end_tok_s_user``): one line per
    baseline (precision, speculative decoding; dashed where the baseline is extended past its last point by
    its final slope), its band shaded, a horizontal rule at the ``published`` ratio and a vertical one at
    the seeds' single-user speed of the baseline (``seeds_speed``, tok/s/user). Log-log."""
    data = df.select("line", "fastest_tok_s_user", "ratio", "ratio_low", "ratio_high", "extrapolated",
                     "baseline_end_tok_s_user").drop_nulls("ratio").filter(pl.col("ratio").is_finite())
    data = data.with_columns(part=pl.when(pl.col("extrapolated")).then(pl.lit("past the baseline's end (final slope)"))
                             .otherwise(pl.lit("on the baseline's frontier")))
    x = alt.X("fastest_tok_s_user:Q", title="baseline's fastest interactivity (tok/s/user)", scale=alt.Scale(type="log"))
    y_scale = alt.Scale(type="log")
    band = alt.Chart(data).mark_area(opacity=0.15).encode(
        x=x, y=alt.Y("ratio_low:Q", scale=y_scale, title="Jalapeño / baseline throughput per kW"), y2="ratio_high:Q",
        color=alt.Color("line:N", title="baseline"))
    lines = alt.Chart(data).mark_line().encode(
        x=x, y=alt.Y("ratio:Q", scale=y_scale), color=alt.Color("line:N", title="baseline"),
        strokeDash=alt.StrokeDash("part:N", title=None, sort=["on the baseline's frontier"]),
        detail="part:N",
        tooltip=["line:N", alt.Tooltip("fastest_tok_s_user:Q", format=",.0f"), alt.Tooltip("ratio:Q", format=",.1f"),
                 alt.Tooltip("ratio_low:Q", format=",.1f"), alt.Tooltip("ratio_high:Q", format=",.1f")])
    rules = pl.DataFrame({"value": [published], "label": [f"published {published:g}x"]})
    hrule = alt.Chart(rules).mark_rule(color="#888888", strokeDash=[4, 3]).encode(y="value:Q", tooltip=["label:N"])
    vrule = alt.Chart(pl.DataFrame({"value": [seeds_speed], "label": [f"seeds' single-user speed {seeds_speed:g}"]})) \
        .mark_rule(color="#888888", strokeDash=[2, 2]).encode(x="value:Q", tooltip=["label:N"])
    return alt.layer(band, lines, hrule, vrule).properties(
        title="DeepSeek-R1: the matched ratio against the baseline's fastest point")
