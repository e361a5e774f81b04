"""The chapter *Reading the numbers* (``notebooks/reading-the-numbers.ipynb``): the GB200 side of the
gpt-oss-120b comparison rebuilt from the raw InferenceMAX points, every headline ratio recomputed from
the published absolute numbers, the per-watt figures under three power bases, what the published E2E
latencies imply, and the status of every claim of the seeds.

The computations are those of :mod:`jalapeno.comparison` (the baseline side, the ratios, the power bases,
the E2E decomposition) and :mod:`jalapeno.registry` (the claims); this module picks the numbers the prose
quotes and the tables and figures it shows.
"""

from __future__ import annotations

import json

import altair as alt
import polars as pl

from .. import charts, comparison, display, measured, metrics, registry, specs, subject
from ..data import cite_seeds, claim_value
from ..display import number
from ..errors import UnknownNameError
from . import Chapter, Parameter
from .claims import key as status_key

#: The statuses the prose counts: every status of the registry, each quoted as ``n_<status>``
#: (:func:`jalapeno.chapters.claims.key`: ``n_predicted_agrees``, ``n_fit_determined``).
STATUSES = registry.STATUSES

#: The quantity each per-watt ratio of the power bases shows (with GB200 the baseline), by its key.
RATIO_QUANTITIES = {"rated": "gptoss-per-watt-ratio-rated", "sustained": "gptoss-per-watt-ratio-jalapeno-sustained",
                    "allin": "gptoss-per-watt-ratio-allin-proportional"}

#: Two per-watt ratios this close (a relative difference) read as one: both shown as the same to 2 decimals.
SAME_RATIO = 0.002

#: The run-to-run spread of the peak tok/s/kW (a fraction) below which the prose calls it negligible
#: next to the ratios discussed (the smallest of which differ by a few tenths).
NEGLIGIBLE_SPREAD = 0.05


#: What the chapter takes (:class:`jalapeno.chapters.Parameter`); the notebook's parameters cell is generated from it.
PARAMETERS = (
    Parameter("baseline", "gb200", "the chip of the measured data compared with Jalapeño", names="measured hardware"),
    Parameter("run_id", "auto", "the benchmark run: auto (the run the published figures cite, else the latest) "
              "or a run id", names="run id"),
    Parameter("baseline_power_w", None, "the power the baseline's throughput is divided by (None: its rated TDP)",
              type=float, low=0, high=5000, low_open=True, unit="W"),
    Parameter("jalapeno_sustained_w", 550.0, "Jalapeño's sustained draw", low=0, high=5000, low_open=True, unit="W"),
    Parameter("jalapeno_allin_w", None, "Jalapeño's all-in power per chip (None: its TDP times the baseline's "
              "all-in / TDP)", type=float, low=0, high=10000, low_open=True, unit="W"),
    Parameter("e2e_reading", subject.DEFAULT_E2E_READING, "the reading of Jalapeño's published E2E this build's "
              "chapters use: separate (a consistency check) or one-point (a latency outside the chip, every chip)",
              choices=subject.E2E_READINGS),)

def check(*, baseline: str, run_id: str, **_) -> None:
    """Refuse, before anything runs, a run id the baseline has no run of at the published workload
    (UnknownNameError listing the runs it has, :func:`jalapeno.comparison.resolve_run`): the names the
    parameter check lists are every chip's runs."""
    model, isl, osl = comparison.PUBLISHED_WORKLOAD
    comparison.resolve_run(model, baseline, isl, osl, run_id)


#: The shipped scenario that builds the book under the reading of the E2E the default does not take.
E2E_SCENARIO = "e2e-one-point"


def compute(*, baseline: str, run_id: str, baseline_power_w: float | None, jalapeno_sustained_w: float,
            jalapeno_allin_w: float | None, e2e_reading: str) -> Chapter:
    """The chapter's numbers, tables and figures, for Jalapeño's one published workload (gpt-oss-120b at
    8k/1k, :data:`jalapeno.comparison.PUBLISHED_WORKLOAD`).

    Parameters: those of :data:`PARAMETERS` (type, default, range and unit of each there); the default
    ``jalapeno_allin_w`` is the ``all-in-proportional`` basis of :mod:`jalapeno.power`.

    ``e2e_reading`` (:data:`jalapeno.subject.E2E_READINGS`) is the reading the build's chapters use; the
    chapter shows both readings of Jalapeño's published E2E whatever it is.

    Returns a :class:`~jalapeno.chapters.Chapter` with tables ``runs``, ``ratios``, ``power_bases``,
    ``e2e``, ``e2e_readings`` and ``claims`` and figures ``measured`` and ``power_bases``. Raises
    UnknownNameError for an unknown chip, run or reading, ValueError for a non-positive power or a baseline without a published all-in
    power."""
    subject.check_e2e_reading(e2e_reading)
    ch = Chapter()
    claims = registry.claims()
    printed = {r["claim_id"]: r for r in claims.iter_rows(named=True)}
    model, isl, osl = comparison.PUBLISHED_WORKLOAD
    ch.quote("b_name", specs.chip(baseline).display_name)
    ch.quote("b_label", measured.hardware_label(baseline))  # B200 (TRT) apart from B200
    # the published figures are GB200's whatever the baseline
    is_gb200 = specs.chip(baseline).chip == "gb200"
    ch.quote("printed", "printed" if is_gb200 else "GB200's, printed")
    ch.quote("for_gb200", "" if is_gb200 else " for GB200")

    # The baseline side, from the raw data
    summary = comparison.baseline_summary(model, baseline, baseline_power_w=baseline_power_w, run_id=run_id,
                                         isl=isl, osl=osl)
    ch.quote("run", summary.run_id)
    # GB200's own quantities, named only for GB200's published run (another baseline or run shows its own),
    # and those per kW only at its rated power
    gb200_q = (lambda name: name) if is_gb200 and run_id == "auto" else (lambda name: None)
    rated_q = gb200_q if baseline_power_w is None else (lambda name: None)
    ch.quote("peak_conc", summary.peak_conc)
    ch.quote("peak_tput", summary.peak_tput_per_gpu, "{:,.0f}")
    ch.quote("baseline_power_kw", summary.baseline_power_w / 1e3, "{:.1f}")
    ch.quote("tok_per_kw", summary.tok_s_per_kw, "{:,.0f}", quantity=rated_q("gb200-gptoss-peak-tok-s-kw"))
    ch.quote("single_conc", summary.single_conc)
    ch.quote("tpot_ms", summary.tpot_s * 1e3, "{:.3f}", quantity=gb200_q("gb200-gptoss-min-tpot-ms"))
    ch.quote("e2e_s", summary.e2e_s, "{:.3f}")
    ch.quote("ttft_s", summary.ttft_s, "{:.3f}")
    ch.quote("interactivity", summary.interactivity_tok_s_user, "{:.1f}", quantity=gb200_q("gb200-gptoss-single-user-tok-s"))
    ch.quote("pub_tok_per_kw", claim_value("gptoss-gb200-tok-per-kw"), "{:,.0f}")
    ch.quote("pub_tbt", claim_value("gptoss-gb200-tbt"), "{:.2f}")
    ch.quote("pub_e2e", claim_value("gptoss-gb200-e2e"), "{:.2f}")
    ch.quote("pub_single", claim_value("gptoss-gb200-single-user"), "{:.0f}")
    isl_mean, osl_mean = metrics.mean_request_length(isl), metrics.mean_request_length(osl)
    ch.quote("prompt_share", 100 * isl_mean / (isl_mean + osl_mean), "{:.0f}")
    agreement = comparison.compare_published(summary)
    n_agree = int(agreement["agrees"].sum())
    ch.quote("agreement", "all four published GB200 numbers are reproduced to their printed rounding" if n_agree == 4
             else f"{n_agree} of the four published GB200 numbers are reproduced (the published ones are for "
                  "GB200, gpt-oss-120b, 8k/1k, run 20786863188)")
    pts = measured.points(model, baseline, isl=isl, osl=osl)
    ch.add_figure("measured", measured_points(pts, summary.run_id), f"measured-{model}-{baseline}-{isl}-{osl}")

    # Run-to-run spread
    runs = comparison.runs_table(model, baseline, isl=isl, osl=osl, baseline_power_w=baseline_power_w)
    spread = runs["tok_s_per_kw"].max() / runs["tok_s_per_kw"].min() - 1
    ch.quote("n_runs", runs.height)
    ch.quote("run_spread_pct", 100 * spread, "{:.2f}")
    ch.quote("spread_verdict", "run-to-run noise of this size is far below every ratio discussed here"
             if spread < NEGLIGIBLE_SPREAD else "noise of this size matters when reading ratios of a few tenths")
    # the table's workload and baseline as the prose names them (GB200, gpt-oss-120b 8k/1k), and its power
    workload = f"{specs.model(model).display_name} {isl // 1024}k/{osl // 1024}k"
    b_label = ch.numbers["b_label"]  # as the prose names the baseline
    divided_by = "its rated TDP" if baseline_power_w is None else f"{number(baseline_power_w):,.0f} W"
    ch.add_table("runs", runs, f"Runs of {b_label} on {workload}: peak tok/s/kW at {divided_by}; TPOT, E2E and "
                 "TTFT at the lowest concurrency")

    # Every headline ratio, recomputed
    claim = claim_value
    ch.quote("r_watt", f"{number(claim('headline-per-watt-ratio'))}–{number(claim('headline-per-watt-ratio', high=True))}x")
    ch.quote("r_e2e", f"{number(claim('headline-e2e-ratio'))}–{number(claim('headline-e2e-ratio', high=True))}x")
    ch.quote("r_e2e_pct", f"{number(claim('headline-e2e-reduction-pct')):.0f}–"
                          f"{number(claim('headline-e2e-reduction-pct', high=True)):.0f} %")
    ch.quote("r_su_gptoss", claim("single-user-speed-ratio-gptoss"), "{}x")
    ch.quote("r_su_dsr1", claim("single-user-speed-ratio-dsr1"), "{}x")
    ch.quote("r_interactive", f"{number(claim('headline-interactive-ratio'))}–"
                              f"{number(claim('headline-interactive-ratio', high=True))}x")
    ch.quote("j_single", claim("gptoss-jalapeno-single-user"), "{:,.0f}", quantity="jalapeno-gptoss-single-user-tok-s")
    ch.quote("j_tbt", claim("gptoss-jalapeno-tbt"), "{:.2f}")
    # the lowest unrounded TBT that prints as the published one (printed with 2 decimals, in ms)
    ch.quote("j_tbt_low", claim("gptoss-jalapeno-tbt") - metrics.half_ulp(2), "{:.3f}")
    ch.quote("j_e2e", claim("gptoss-jalapeno-e2e"), "{:.2f}")
    ch.quote("j_tdp_kw", claim("jalapeno-tdp") / 1e3, "{:.1f}")
    ch.quote("tbt_ratio", claim("gptoss-gb200-tbt") / claim("gptoss-jalapeno-tbt"), "{:.1f}",
             quantity="gptoss-tbt-ratio-published")
    ratios = comparison.headline_ratio_arithmetic()
    ch.quote("per_watt_ratio", float(ratios.filter(pl.col("ratio").str.starts_with("per-watt"))["computed"][0]), "{:.2f}",
             quantity="gptoss-per-watt-ratio-rated")
    ch.quote("e2e_ratio", float(ratios.filter(pl.col("ratio") == "E2E latency, gpt-oss")["computed"][0]), "{:.2f}",
             quantity="gptoss-e2e-ratio-published")
    ch.quote("n_ratios_within", int(ratios["in_range_as_printed"].sum()))
    ch.quote("n_ratios", ratios.height)
    # each side of a ratio as the seeds print it, not by its claim id
    ch.add_table("ratios", ratios.with_columns(
        pl.col(side).map_elements(lambda cid: _as_printed(printed[cid]) if cid else None, return_dtype=pl.String)
        for side in ("numerator", "denominator")),
        "The seeds' headline ratios recomputed from their published absolute numbers, next to the printed ranges")
    ch.add_figure("headline_ratios", headline_ratios(ratios), "headline-ratios")

    # Per watt under three power bases
    bases = comparison.power_basis_table(summary, jalapeno_sustained_w=jalapeno_sustained_w,
                                         jalapeno_allin_w=jalapeno_allin_w, baseline_hw=baseline)
    for row in bases.iter_rows(named=True):
        key = {"all-in-proportional": "allin"}.get(row["basis"], row["basis"])
        ch.quote(f"ratio_{key}", row["ratio"], "{:.2f}", quantity=rated_q(RATIO_QUANTITIES.get(key)))
        ch.quote(f"jw_{key}", row["jalapeno_w"], "{:,.0f}")
        ch.quote(f"bw_{key}", row["baseline_w"], "{:,.0f}")
    ch.add_table("power_bases", bases, f"Jalapeño and {b_label} on {workload} under three power bases: watts per chip, "
                 "peak tok/s/kW and their ratio")
    # the seeds' per-watt ratio is at both chips' rated power: a build dividing the baseline by another says so
    rated = bases.filter(pl.col("basis") == "rated")["ratio"][0]
    allin = bases.filter(pl.col("basis") == "all-in-proportional")["ratio"][0]
    ch.quote("allin_reading", "per-watt ratios survive a change of basis only if both sides change together"
             if abs(allin / rated - 1) < SAME_RATIO else
             f"against {number(rated):.2f}x on the first basis, which divides the baseline by the "
             f"{number(summary.baseline_power_w):,.0f} W this build gives it, while the all-in basis takes its "
             "all-in power from InferenceX")
    ch.quote("per_watt_basis", "" if baseline_power_w is None else
             f", from the seeds' numbers, with GB200 at its rated power; with {ch.numbers['b_label']} at "
             f"the {number(baseline_power_w):,.0f} W this build divides it by, {number(rated):.2f}x, next section")
    # the first basis in words: rated on both sides unless this build gives the baseline another power
    ch.quote("rated_basis", "at rated power" if baseline_power_w is None else
             f"at Jalapeño's rated power against the {number(baseline_power_w):,.0f} W this build divides the baseline by")
    grid = comparison.power_basis_grid(summary, jalapeno_sustained_w=jalapeno_sustained_w,
                                       jalapeno_allin_w=jalapeno_allin_w, baseline_hw=baseline)
    start = {r["basis"]: r["jalapeno_w"] for r in bases.iter_rows(named=True)}
    ch.add_figure("power_bases", power_bases_explorable(grid, jalapeno_sustained_w=start["sustained"],
                                                        jalapeno_allin_w=start["all-in-proportional"],
                                                        baseline_label=ch.numbers["b_label"]),
                  f"power-bases-{model}-{baseline}")

    # What the end-to-end latencies imply
    dec = comparison.e2e_decomposition(osl)
    osls = comparison.implied_osl(isl, osl)
    ch.quote("mean_osl", metrics.mean_request_length(osl), "{:.1f}")
    ch.quote("implied_osl_median", osls["implied_osl"].median(), "{:.1f}")
    j = dec.filter(pl.col("chip") == "jalapeno").row(0, named=True)
    g = dec.filter(pl.col("chip") == "gb200").row(0, named=True)
    ch.quote("j_ttft", j["implied_ttft_s"], "{:.2f}", quantity="gptoss-implied-ttft-s")
    ch.quote("g_ttft", g["implied_ttft_s"], "{:.3f}", quantity="gb200-gptoss-implied-ttft-s")
    # GB200's published pair is read against GB200's own measurement, whatever the baseline
    gb200 = summary if is_gb200 else comparison.baseline_summary(model, "gb200", isl=isl, osl=osl)
    ch.quote("g_meas_ttft", gb200.ttft_s, "{:.3f}")
    ch.quote("g_single_conc", gb200.single_conc)
    ch.quote("j_decode", j["decode_s"], "{:.2f}")
    ch.quote("ttft_ratio", j["implied_ttft_s"] / summary.ttft_s, "{:.1f}")
    # each chip by its short name, as the figure names it (display.header: Jalapeño, GB200)
    ch.add_table("e2e", dec.with_columns(pl.col("chip").map_elements(display.header, return_dtype=pl.String)),
                 "Jalapeño's and GB200's published E2E and TBT, the decode over the mean OSL, and the TTFT they imply")
    ch.add_figure("e2e_split", e2e_split(dec, model), f"e2e-split-{model}-{isl}-{osl}")
    _e2e_readings(ch, baseline=baseline, e2e_reading=e2e_reading, printed=printed)

    # Every claim of the seeds
    counts = registry.status_counts(claims)
    for status, n in counts.items():
        ch.quote(status_key(status), n)
    ch.quote("n_claims", claims.height)
    ch.quote("n_agreeing", sum(counts[s] for s in registry.AGREEING))
    disagree = claims.filter(pl.col("status") == "predicted, disagrees")["claim_id"].to_list()
    ch.quote("disagree_text", f"{len(disagree)} prediction{'s' if len(disagree) > 1 else ''} "
             f"disagree{'' if len(disagree) > 1 else 's'} ({', '.join(disagree)}; see {'their chapters' if len(disagree) > 1 else 'its chapter'})"
             if disagree else "no prediction disagrees")
    # this chapter's claims; every claim, once, on the claims page
    ch.add_table("claims", claims.filter(pl.col("chapter") == "reading-the-numbers").select(
        "claim_id", "claimed", "status", "computed", "published_vs_computed", "quantity",
        pl.col("seeds").map_elements(cite_seeds, return_dtype=pl.String), "check"),
        "The seeds' claims this chapter checks: as claimed, status, computed value, the seeds that state each, the check")
    return ch


def _as_printed(claim: dict) -> str:
    """A registry row (:func:`jalapeno.registry.claims`) as a reader reads it: whose number it is and its value
    as the article states it (``Jalapeño: 85,448 tok/s/kW``); a ratio as its printed range (``the printed
    1.7–3.6x``)."""
    if claim["unit"] == "x":
        return f"the printed {claim['claimed']}"
    try:  # a chip by its short name (display.header: Jalapeño, GB200)
        who = display.header(specs.chip(claim["subject"]).chip)
    except UnknownNameError:  # a subject that is no chip of chips.csv, e.g. "comparison system (GB200/GB300)"
        who = claim["subject"]
    return f"{who}: {claim['claimed']}"


def _fitted_to(ids, printed: dict) -> str:
    """The published values Jalapeño's constants are fitted to (claim ids ``ids``), each as the article states
    it with its model: ``0.69 ms (gpt-oss-120b), 700 tok/s/user (DeepSeek-R1)``."""
    return ", ".join(f"{printed[c]['claimed']} ({specs.model(printed[c]['model']).display_name})" for c in ids)


def _e2e_readings(ch: Chapter, *, baseline: str, e2e_reading: str, printed: dict) -> None:
    """The two readings of Jalapeño's published E2E (:data:`jalapeno.subject.E2E_READINGS`), each with what
    it implies, and which this build uses: the ``separate`` reading's consistency check
    (:func:`jalapeno.subject.e2e_consistency`) and the ``one-point`` reading's latency outside the chip of
    Jalapeño and of ``baseline`` (:func:`jalapeno.subject.outside_chip_latency_s`). Table ``e2e_readings``:
    ``reading``, ``fitted_to`` (claims), ``jalapeno_outside_ms``, ``<baseline>_outside_ms`` (ms; ``b200_trt``
    for ``b200-trt``),
    ``e2e_check`` (in words)."""
    def fitted(value: float, fmt: str) -> str:
        return display.formatted(value, fmt, noise=display.FIT_NOISE)
    sep = subject.e2e_consistency("central", fit=subject.fit_jalapeno("central", e2e_reading="separate"))
    one = {c: 1e3 * subject.outside_chip_latency_s(c, "one-point") for c in ("jalapeno", baseline)}
    b_name = specs.chip(baseline).display_name
    e2e = display.formatted(sep["published_e2e_s"], "{:.2f}")
    if sep["found"]:
        at = (f"Jalapeño's modeled gpt-oss-120b 8k/1k frontier reaches an E2E of {e2e} s at "
              f"{fitted(sep['interactivity_tok_s_user'], '{:,.0f}')} tok/s/user (a TPOT of "
              f"{fitted(1e3 * sep['tpot_s'], '{:.2f}')} ms, {fitted(sep['concurrency'], '{:.0f}')} sequences on "
              f"{fitted(sep['n_chips'], '{:.0f}')} chips), below its fastest point's "
              f"{fitted(sep['fastest_interactivity_tok_s_user'], '{:,.0f}')} tok/s/user, whose E2E is "
              f"{fitted(sep['fastest_e2e_s'], '{:.2f}')} s: the published E2E is consistent with the model at another "
              f"configuration than the minimum TBT")
    else:
        at = (f"no point of Jalapeño's modeled gpt-oss-120b 8k/1k frontier has an E2E of {e2e} s (its E2Es run from "
              f"{fitted(sep['fastest_e2e_s'], '{:.2f}')} to {fitted(sep['max_e2e_s'], '{:.2f}')} s): the published "
              f"E2E is not consistent with the model at any configuration")
    ch.quote("sep_text", at)
    ch.quote("sep_x", fitted(sep["interactivity_tok_s_user"], "{:,.0f}"))
    ch.quote("sep_tpot_ms", fitted(1e3 * sep["tpot_s"], "{:.2f}"))
    ch.quote("one_j_ms", fitted(one["jalapeno"], "{:.0f}"))
    ch.quote("one_b_ms", fitted(one[baseline], "{:.0f}"))
    ch.quote("e2e_reading", e2e_reading)
    ch.quote("e2e_scenario", E2E_SCENARIO)
    ch.quote("reading_build", f"This build, like the default book, uses the `{subject.DEFAULT_E2E_READING}` reading."
             if e2e_reading == subject.DEFAULT_E2E_READING else
             f"This build uses the `{e2e_reading}` reading instead (as the scenario `{E2E_SCENARIO}` does for every "
             "chapter that models Jalapeño), so its chapters' numbers differ from the default book's.")
    ch.quote("reading_takeaway", (
        f"The book reads Jalapeño's published E2E ({e2e} s) and minimum TBT as two configurations (the `separate` "
        f"reading): no chip's modeled calls carry a latency outside the chip, and "
        + (f"the E2E is met on Jalapeño's modeled frontier at {fitted(sep['interactivity_tok_s_user'], '{:,.0f}')} "
           "tok/s/user" if sep["found"] else "no point of Jalapeño's modeled frontier meets the E2E")
        + f". The scenario `{E2E_SCENARIO}` builds the book under the other reading") if e2e_reading == "separate" else (
        f"This build reads Jalapeño's published E2E ({e2e} s) and minimum TBT as one configuration (the "
        f"`one-point` reading, scenario `{E2E_SCENARIO}`): every chip's calls carry a latency outside the chip, "
        f"{fitted(one['jalapeno'], '{:.0f}')} ms for Jalapeño and {fitted(one[baseline], '{:.0f}')} ms for {b_name}; "
        f"the default book reads them as two configurations"))
    check = (f"a check: met at {fitted(sep['interactivity_tok_s_user'], '{:,.0f}')} tok/s/user" if sep["found"]
             else "a check: not met on the frontier")
    readings = {"separate": ("separate configurations", "three: " + _fitted_to(subject.fit_claims("separate"), printed),
                             0.0, 0.0, check),
                "one-point": ("one configuration", "four: " + _fitted_to(subject.fit_claims("one-point"), printed),
                              one["jalapeno"], one[baseline], "a fit target: reproduced by construction")}
    ch.add_table("e2e_readings", pl.DataFrame([
        {"reading": r, "e2e_and_tbt": v[0], "jalapeno_fitted_to": v[1], "jalapeno_outside_ms": v[2],
         f"{baseline.replace('-', '_')}_outside_ms": v[3], "published_e2e": v[4], "this_build": r == e2e_reading}
        for r, v in readings.items()]),
        "The two readings of Jalapeño's published E2E: what each fits, Jalapeño's and "
        f"{ch.numbers['b_label']}'s latency outside the chip")


# ---- figures ----

def measured_points(points: pl.DataFrame, highlight_run: str) -> alt.Chart:
    """Throughput per GPU against interactivity of measured points (rows of
    :func:`jalapeno.measured.points`); the points of ``highlight_run`` in colour, the other runs of the
    same configuration in grey, and in a book built on a reader's runs (``reader_run``) theirs as their
    own series, :data:`jalapeno.charts.READER_SOURCE`."""
    df = points.select(
        (1.0 / pl.col("mean_tpot")).alias("interactivity_tok_s_user"), "tput_per_gpu", "conc", "run_id",
        pl.when(pl.col("reader_run")).then(pl.lit(charts.READER_SOURCE))
        .when(pl.col("run_id") == highlight_run).then(pl.lit(f"run {highlight_run}"))
        .otherwise(pl.lit("other runs")).alias("series"),
    ).sort("run_id", "conc")
    domain = [f"run {highlight_run}", "other runs"]
    colours = [charts.CHIP_COLOURS["gb200"], "#c7c7c7"]
    if points["reader_run"].any():
        domain, colours = [*domain, charts.READER_SOURCE], [*colours, charts.SERIES_COLOURS[1]]
    return alt.Chart(df).mark_line(point=True).encode(
        x=alt.X("interactivity_tok_s_user:Q", title="interactivity (tok/s/user, 1 / mean TPOT)", scale=alt.Scale(type="log")),
        y=alt.Y("tput_per_gpu:Q", title="throughput per GPU (input + output tok/s)", scale=alt.Scale(type="log")),
        color=alt.Color("series:N", title=None, scale=alt.Scale(domain=domain, range=colours)),
        detail="run_id:N",
        tooltip=["run_id:N", "conc:Q", alt.Tooltip("tput_per_gpu:Q", format=",.0f"),
                 alt.Tooltip("interactivity_tok_s_user:Q", format=".1f")],
    ).properties(title="Measured points of one configuration: throughput against interactivity")


def _side_colour(baseline_label: str) -> alt.Color:
    """The colour of the two sides of a per-kW comparison (field ``chip``: ``jalapeno`` or ``baseline``),
    each in its chip's colour, the legend naming them as a reader does (Jalapeño and ``baseline_label``)."""
    return alt.Color("chip:N", title=None, scale=alt.Scale(domain=["jalapeno", "baseline"], range=[
        charts.CHIP_COLOURS["jalapeno"], charts.CHIP_COLOURS["gb200"]]), legend=alt.Legend(
        labelExpr=f"datum.label == 'jalapeno' ? 'Jalapeño' : {json.dumps(baseline_label)}"))


def power_bases(bases: pl.DataFrame, baseline_label: str = "baseline") -> alt.Chart:
    """Tokens/s/kW of Jalapeño and the baseline (named ``baseline_label`` in the legend) under each power
    basis (from :func:`jalapeno.comparison.power_basis_table`)."""
    df = pl.concat([
        bases.select("basis", pl.lit("jalapeno").alias("chip"), pl.col("jalapeno_tok_s_kw").alias("tok_s_kw")),
        bases.select("basis", pl.lit("baseline").alias("chip"), pl.col("baseline_tok_s_kw").alias("tok_s_kw")),
    ])
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("basis:N", title="power basis", sort=["rated", "sustained", "all-in-proportional"]),
        xOffset="chip:N",
        y=alt.Y("tok_s_kw:Q", title="throughput per kW (tok/s/kW)"),
        color=_side_colour(baseline_label),
        tooltip=["basis:N", "chip:N", alt.Tooltip("tok_s_kw:Q", format=",.0f")],
    ).properties(title="Per-kW throughput depends on whose watts are counted")


def power_bases_explorable(grid: pl.DataFrame, *, jalapeno_sustained_w: float,
                           jalapeno_allin_w: float, baseline_label: str = "baseline") -> alt.Chart:
    """:func:`power_bases` with two sliders: Jalapeño's sustained power and its all-in power per chip.

    Draws a precomputed grid (:func:`jalapeno.comparison.power_basis_grid`: columns ``basis``, ``chip``,
    ``watts``, ``tok_s_kw``, ``ratio``, ``jalapeno_sustained_w``, ``jalapeno_allin_w``; a knob column is
    empty on the rows that do not depend on it). The sliders take the grid's values of the two knob
    columns and start at ``jalapeno_sustained_w`` and ``jalapeno_allin_w`` (W), which must be among them;
    the static SVG shows that position; the legend names the two chips as a reader does (Jalapeño and
    ``baseline_label``). Raises ValueError for a starting value off the grid."""
    sustained = tuple(grid["jalapeno_sustained_w"].drop_nulls().unique().sort().to_list())
    allin = tuple(grid["jalapeno_allin_w"].drop_nulls().unique().sort().to_list())
    top = float(grid["tok_s_kw"].max()) * 1.05
    chart = alt.Chart(grid).mark_bar().encode(
        x=alt.X("basis:N", title="power basis", sort=["rated", "sustained", "all-in-proportional"], axis=alt.Axis(
            labelAngle=0, labelExpr="datum.label == 'all-in-proportional' ? ['all-in', 'proportional'] : datum.label")),
        xOffset=alt.XOffset("chip:N", sort=["jalapeno", "baseline"]),
        y=alt.Y("tok_s_kw:Q", title="throughput per kW (tok/s/kW)", scale=alt.Scale(domain=[0, top])),
        color=_side_colour(baseline_label),
        tooltip=["basis:N", "chip:N", alt.Tooltip("watts:Q", title="power (W)", format=",.1f"),
                 alt.Tooltip("tok_s_kw:Q", format=",.0f"), alt.Tooltip("ratio:Q", title="Jalapeño / baseline", format=".2f")],
    ).properties(title="Per-kW throughput depends on whose watts are counted")
    return charts.explorable(chart,
                             charts.Knob("jalapeno_sustained_w", sustained, jalapeno_sustained_w, "Jalapeño sustained power (W)"),
                             charts.Knob("jalapeno_allin_w", allin, jalapeno_allin_w, "Jalapeño all-in power per chip (W)"))


#: The colour of a printed range's bar in :func:`headline_ratios`: the book's grey of a non-chip mark,
#: :data:`jalapeno.charts.OTHER_COLOUR` (#333333), at 35 % over white.
PRINTED_RANGE_COLOUR = "#b8b8b8"

#: The two marks of :func:`headline_ratios`, as its legend names them.
PRINTED_RANGE = "range the seeds print"
RECOMPUTED = "recomputed from their numbers"


def headline_ratios(ratios: pl.DataFrame) -> alt.LayerChart:
    """The seeds' headline ratios (a row each of :func:`jalapeno.comparison.headline_ratio_arithmetic`:
    ``ratio``, ``computed``, ``published_low``, ``published_high``): the range each prints (a bar from its
    low to its high end, with a tick at each) and the ratio the published per-model numbers give (a point).
    The E2E reduction in % is left out: it restates the E2E range in other units."""
    df = ratios.filter(~pl.col("ratio").str.contains("%")).select(
        "ratio", pl.col("computed").cast(pl.Float64).alias("recomputed_x"), pl.col("published_low").alias("printed_low_x"),
        pl.col("published_high").alias("printed_high_x"))
    # the range's bar in a light grey at full opacity (not a translucent dark one): the legend's swatch, which
    # takes one opacity for every entry, then shows each mark as drawn
    colour = alt.Color("series:N", title=None, scale=alt.Scale(domain=[PRINTED_RANGE, RECOMPUTED],
                                                             range=[PRINTED_RANGE_COLOUR, charts.CHIP_COLOURS["jalapeno"]]),
                       legend=alt.Legend(orient="bottom", direction="vertical"))
    y = alt.Y("ratio:N", title=None, sort=df["ratio"].to_list(), axis=alt.Axis(labelLimit=220))
    tooltip = ["ratio:N", alt.Tooltip("printed_low_x:Q", title="printed low (x)"),
               alt.Tooltip("printed_high_x:Q", title="printed high (x)"), alt.Tooltip("recomputed_x:Q", title="recomputed (x)")]
    base = alt.Chart(df.with_columns(series=pl.lit(PRINTED_RANGE))).encode(y=y, tooltip=tooltip)
    x = alt.X("printed_low_x:Q", axis=alt.Axis(title="Jalapeño / baseline (x)"), scale=alt.Scale(zero=False))
    printed = base.mark_bar(height=8).encode(x=x, x2="printed_high_x:Q", color=colour)
    ends = [base.mark_tick(thickness=2, size=16, color=charts.OTHER_COLOUR).encode(x=alt.X(f"{end}:Q"))
            for end in ("printed_low_x", "printed_high_x")]
    recomputed = alt.Chart(df.with_columns(series=pl.lit(RECOMPUTED))).mark_point(filled=True, size=70, opacity=1).encode(
        x=alt.X("recomputed_x:Q"), y=y, color=colour, tooltip=tooltip)
    return alt.layer(printed, *ends, recomputed).properties(
        # the long row labels narrow the plot: the title starts at the chart's left edge, not over the plot
        title=alt.TitleParams(charts.wrap_title("Headline ratios: printed range and recomputed value"), anchor="start",
                              frame="bounds"))


def e2e_split(dec: pl.DataFrame, model: str) -> alt.Chart:
    """Each chip's published E2E latency split in two (rows of :func:`jalapeno.comparison.e2e_decomposition`:
    ``chip``, ``e2e_s``, ``tbt_ms``, ``mean_osl``, ``decode_s``, ``implied_ttft_s``): its decode, the
    benchmark's mean output length times the published TBT, and what that leaves for the first token (the
    implied TTFT), stacked in the order of the colour's domain; ``model`` names the workload in the title."""
    parts = {"decode_s": "decode: mean OSL x TBT", "implied_ttft_s": "the rest: implied TTFT"}
    df = pl.concat([dec.select(pl.col("chip").map_elements(display.header, return_dtype=pl.String), pl.lit(label).alias("part"),
                               pl.col(col).alias("seconds_s"), "tbt_ms", "mean_osl", pl.col("e2e_s").alias("published_e2e_s"))
                    for col, label in parts.items()])
    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("chip:N", title=None, sort=None),
        x=alt.X("seconds_s:Q", axis=alt.Axis(title="published E2E latency (s)"), stack="zero"),
        color=alt.Color("part:N", title=None, sort=list(parts.values()),
                        scale=alt.Scale(domain=list(parts.values()), range=[charts.SERIES_COLOURS[0], charts.SERIES_COLOURS[2]]),
                        legend=alt.Legend(orient="bottom", direction="vertical")),
        tooltip=["chip:N", "part:N", alt.Tooltip("seconds_s:Q", title="seconds", format=".3f"),
                 alt.Tooltip("published_e2e_s:Q", title="published E2E (s)"), alt.Tooltip("tbt_ms:Q", title="published TBT (ms)"),
                 alt.Tooltip("mean_osl:Q", title="mean output tokens", format=".1f")],
    ).properties(title=f"{model}: each published E2E, split into decode and the rest")
