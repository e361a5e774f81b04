"""The caveats chapter (``notebooks/caveats.ipynb``): each hedge of the seeds as a what-if of
:mod:`jalapeno.caveats`, with the claims each section qualifies.

:func:`compute` returns the chapter's quoted numbers, tables and figures. Table slots: ``claims-<section>``
for each section of :data:`jalapeno.caveats.SECTION_CLAIMS` (the registry rows it qualifies),
``vera-rubin``, ``per-watt-specs``, ``power-bases``, ``shape-sweep``, ``baselines``, ``kernels``, ``hbm``,
``pareto-shape``, ``business``, ``not-reproducible``, ``public-data`` (seed 003's table of what the public
data can and cannot answer, with where the chapter treats each row), ``three-lines`` (the three lines seed
004's score sheet does not print, with the number the chapter computes for each). Figure slots: ``vera-rubin-remaining``,
``power-bases``, ``shape-sweep``, ``amdahl``, ``hbm-per-gw``, ``pareto-shape``.
"""

from __future__ import annotations

import altair as alt
import polars as pl

from .. import agents, caveats, charts, comparison, data, display, pareto, power, registry, specs, subject
from ..data import claim_value
from ..display import number
from ..errors import UnknownNameError
from . import Chapter, Parameter, figures

#: Published claims the prose quotes as they stand: claim id, key, format (revenue in billion USD).
CLAIM_NUMBERS = (("jalapeno-tdp", "j_tdp", "{:,.0f}"), ("gb200-tdp", "b_tdp", "{:,.0f}"),
                 ("gptoss-jalapeno-tok-per-kw", "j_kw", "{:,.0f}"), ("gptoss-jalapeno-tbt", "j_tbt", "{:g}"),
                 ("jalapeno-hbm-capacity", "j_hbm", "{:.0f}"), ("jalapeno-hbm4-stacks", "j_stacks", "{:.0f}"),
                 ("gptoss-matched-tbt-ratio", "r_gptoss", "{:g}"), ("dsr1-matched-tbt-ratio", "r_dsr1", "{:g}"),
                 ("kimi-matched-tbt-ratio", "r_kimi", "{:g}"), ("nvidia-revenue-expectation", "nv_exp", "{:.3g}"),
                 ("nvidia-revenue-yoy-growth", "nv_yoy", "{:g}"),
                 ("anthropic-inference-gross-margin", "an_margin", "{:g}"),
                 ("anthropic-ipo-gross-margin-target", "an_target", "{:g}"))

#: Published ranges the prose quotes as ``low–high``: claim id, key.
CLAIM_RANGES = (("ai-kernel-speedup", "k_claim"), ("inference-lifecycle-cost-share", "life_share"),
                ("headline-per-watt-ratio", "r_watt"))

#: The fractions of the baseline's highest interactivity the prose quotes the matched ratio at (besides 1).
PARETO_SHAPE_FRACTIONS = (0.9, 0.5)


#: What the chapter takes (:class:`jalapeno.chapters.Parameter`); the notebook's parameters cell is generated from it.
PARAMETERS = (
    Parameter("models", ["gpt-oss-120b", "deepseek-r1", "kimi-k2.5"],
              "the models of the Vera Rubin and matched-ratio sections; the first is quoted", names="model"),
    Parameter("scenario", "central", "Jalapeño's unknowns", choices=tuple(subject.SCENARIOS)),
    Parameter("max_chips", 8, "the most chips per worker of a chip modeled outright", low=1, high=1024, unit="chips"),
    Parameter("vera_rubin_cases", ["pessimistic", "central", "optimistic"], "the Vera Rubin cases shown",
              choices=tuple(caveats.VERA_RUBIN_CASES)),
    Parameter("pue", 0.0, "the facility's power usage effectiveness: 0, or 1 to 3", low=0, high=3,
              note="0: the sourced central PUE"),
    Parameter("jalapeno_sustained_w", 550.0, "Jalapeño's sustained power", low=0, high=5000, low_open=True, unit="W"),
    Parameter("shape_model", "gpt-oss-120b", "the model whose workload shapes are swept", names="model"),
    Parameter("shape_baseline", "gb200", "the chip the shapes are swept against", names="HBM chip"),
    Parameter("shapes", [[1024, 1024], [1024, 8192], [8192, 1024], [32768, 1024], [130048, 1024]],
              "the [ISL, OSL] pairs swept", low=1, high=1048576, unit="tokens"),
    Parameter("kernel_model", "gpt-oss-120b", "the model whose decode step Amdahl's law splits", names="model"),
    Parameter("hbm_chips", ["jalapeno", "gb200", "gb300", "vera-rubin"], "the chips of the HBM section",
              names="HBM chip"),
    Parameter("hbm_power_basis", "facility", "the power basis of the HBM section",
              choices=tuple(power.POWER_BASES)),
    Parameter("hbm_supply_share", 0.01, "the share of a year's HBM one buyer gets", low=0, high=1, low_open=True),
    Parameter("agent_profile", "code-editing", "the agent profile of the baselines section", names="agent profile"),)


def check(*, pue: float, **_) -> None:
    """Refuse, before anything runs, a ``pue`` below 1 other than 0 (a facility draws at least its IT
    power; 0 stands for the sourced central PUE). ValueError naming the value."""
    if pue != 0 and pue < 1:
        raise ValueError(f"parameter 'pue' must be 0 (the sourced central PUE) or in [1, 3], got {pue:g}")


def compute(*, models: list[str], scenario: str, max_chips: int, vera_rubin_cases: list[str], pue: float,
            jalapeno_sustained_w: float, shape_model: str, shape_baseline: str, shapes: list[list[int]],
            kernel_model: str, hbm_chips: list[str], hbm_power_basis: str, hbm_supply_share: float,
            agent_profile: str) -> Chapter:
    """The caveats chapter.

    Parameters: those of :data:`PARAMETERS` (type, default, range and unit of each there);
    ``vera_rubin_cases`` are cases of :data:`jalapeno.caveats.VERA_RUBIN_CASES`, ``pue`` 0 the central
    value of ``data/whatif_ranges.csv``.

    Returns a :class:`jalapeno.chapters.Chapter` (slots in the module's docstring). Raises
    UnknownNameError for an unknown model, chip, case, scenario, power basis or profile, and what the
    analyses of :mod:`jalapeno.caveats` raise (e.g. ValueError for a shape no chip fits)."""
    _check(models + [shape_model, kernel_model], hbm_chips + [shape_baseline], vera_rubin_cases, scenario,
           hbm_power_basis, agent_profile)
    ch = Chapter()
    pue_used = pue or data.whatif("pue")
    fit = subject.fit_jalapeno(scenario)  # Jalapeño's constants, fitted once
    reg = registry.claims()
    _claims_quoted(ch)
    _vera_rubin(ch, reg, models, fit, scenario, vera_rubin_cases, max_chips)
    _power_bases(ch, reg, pue_used, jalapeno_sustained_w)
    _shape(ch, reg, shape_model, shape_baseline, shapes, fit, scenario, max_chips)
    _baselines(ch, reg, agent_profile, fit, scenario, max_chips)
    _kernels(ch, reg, kernel_model, fit, scenario)
    _hbm(ch, reg, hbm_chips, hbm_power_basis, hbm_supply_share, pue_used)
    _pareto_shape(ch, reg, models, fit, scenario, max_chips)
    _business(ch, reg)
    _public_data(ch, reg)
    _three_lines(ch, reg)
    rest = reg.filter((pl.col("chapter") == "caveats") & (pl.col("status") == "not checkable"))
    ch.quote("n_unverifiable", rest.height)
    ch.add_table("not-reproducible", _shown(rest.select("claim_id", "claimed", "quantity", "check")),
                 "This chapter's claims that no public data can check, as claimed, with the reason for each")
    return ch


def _check(models, chips, cases, scenario, basis, profile) -> None:
    """UnknownNameError for the first unknown name among the parameters."""
    for m in models:
        specs.model(m)
    for c in chips:
        specs.chip(c)
    for case in cases:
        if case not in caveats.VERA_RUBIN_CASES:
            raise UnknownNameError("Vera Rubin case", case, list(caveats.VERA_RUBIN_CASES))
    if scenario not in subject.SCENARIOS:
        raise UnknownNameError("scenario", scenario, list(subject.SCENARIOS))
    if basis not in power.POWER_BASES:
        raise UnknownNameError("power basis", basis, list(power.POWER_BASES))
    agents.profile(profile)


def _chip_name(label: str) -> str:
    """A chip of a shown table by its name in ``chips.csv`` (``gb200`` -> ``NVIDIA GB200 (...)``); a Vera Rubin
    case's label (``vera-rubin central``) as the chip's name and its case."""
    key, _, case = label.partition(" ")
    name = specs.chip(key).display_name
    return f"{name}, {case} case" if case else name


#: How a shown table names the keys of its columns (the figures name kinds of ratio the same way): chips and models by their
#: names in ``chips.csv`` and ``models.csv``, a kind of ratio (:data:`jalapeno.caveats.METRICS`) in words.
READER_NAMES = {"chip": _chip_name, "baseline": _chip_name, "model": lambda m: specs.model(m).display_name,
                "metric": display.header}


def _shown(df: pl.DataFrame) -> pl.DataFrame:
    """A table as the chapter shows it: NaN (a ratio with no published figure) as an empty cell, and the keys
    of :data:`READER_NAMES`' columns in a reader's words."""
    return df.fill_nan(None).with_columns(pl.col(c).map_elements(f, return_dtype=pl.String)
                                          for c, f in READER_NAMES.items() if c in df.columns)


#: Each section of :data:`jalapeno.caveats.SECTION_CLAIMS` as the caption of its claims table names it.
SECTION_NAMES = {"vera-rubin": "Vera Rubin", "power": "power bases", "shape": "workload shape",
                 "baselines": "models and baselines", "kernels": "AI-generated kernels", "hbm": "HBM4 supply",
                 "pareto-shape": "matched ratios", "business": "business figures"}


def _qualifies(ch: Chapter, reg: pl.DataFrame, section: str) -> None:
    ch.add_table(f"claims-{section}", caveats.section_claims(reg, section),
                 f"The seeds' claims the section on {SECTION_NAMES[section]} qualifies: as claimed, "
                 "with their chapter and status")


def _claims_quoted(ch: Chapter) -> None:
    for cid, key, fmt in CLAIM_NUMBERS:
        ch.quote(key, claim_value(cid) / (1e9 if cid.startswith("nvidia-revenue-exp") else 1), fmt)
    for cid, key in CLAIM_RANGES:
        ch.quote(key, f"{number(claim_value(cid)):g}–{number(claim_value(cid, high=True)):g}")
    ch.quote("asic_saving", claim_value("custom-asic-cost-saving"), "{:g}")
    ch.quote("hbm_supply_gbit", data.fact("hbm_shipments_2026") * 8 / 1e9 / 1e9, "{:.0f}")  # bytes -> Gbit -> billion


def _vera_rubin(ch, reg, models, fit, scenario, cases, max_chips) -> None:
    _qualifies(ch, reg, "vera-rubin")
    for q, key, scale in (("vera_rubin_hbm_bandwidth", "bw", 1e12), ("vera_rubin_fp4", "fp4", 1e15),
                          ("vera_rubin_tdp", "tdp", 1.0)):  # TB/s, PFLOP/s, W
        ch.quote(f"vr_{key}_lo", data.whatif(q, "low") / scale, "{:,.0f}")
        ch.quote(f"vr_{key}_hi", data.whatif(q, "high") / scale, "{:,.0f}")
    vr = caveats.vera_rubin_table(models, fit=fit, scenario=scenario, cases=cases, max_chips=max_chips)
    ch.add_table("vera-rubin", _shown(vr.select("model", "metric", "case", "baseline", "vs_baseline", "vs_vera_rubin",
                                                "remaining", "published", "published_projected")),
                 "Jalapeño's modeled ratios against each model's published baseline and each Vera Rubin case, "
                 "and the share left")
    ch.add_figure("vera-rubin-remaining", remaining_share(vr), "caveats-vera-rubin-remaining")

    def value(model, metric, case, col="vs_vera_rubin"):
        rows = vr.filter((pl.col("model") == model) & (pl.col("metric") == metric) & (pl.col("case") == case))
        return float(rows[col][0]) if rows.height else float("nan")

    m0 = models[0]
    shown = [c for c in ("pessimistic", "central", "optimistic") if c in cases]
    ch.quote("vr_m0", m0)
    ch.quote("vr_perkw_range", " / ".join(f"{number(value(m0, 'per_kw_at_peak', c)):.2f}x" for c in shown))
    ch.quote("vr_cases", " / ".join(shown))
    ch.quote("vr_perkw_base", value(m0, "per_kw_at_peak", shown[0], "vs_baseline"), "{:.2f}",
             **({"quantity": "gptoss-per-watt-ratio-rated", "variant": "modeled Jalapeño"} if m0 == "gpt-oss-120b" else {}))
    su = vr.filter(pl.col("metric") == "single_user")
    ch.quote("vr_su_remaining_min", 100 * su["remaining"].min(), "{:.0f}")
    ch.quote("vr_su_remaining_max", 100 * su["remaining"].max(), "{:.0f}")
    pk = vr.filter(pl.col("metric") == "per_kw_at_peak")
    ch.quote("vr_perkw_remaining_min", 100 * pk["remaining"].min(), "{:.0f}")
    ch.quote("vr_perkw_remaining_max", 100 * pk["remaining"].max(), "{:.0f}")
    ch.quote("vr_behind", pk.filter(pl.col("vs_vera_rubin") < 1).height)
    ch.quote("vr_pairs", pk.height)
    mt = vr.filter(pl.col("metric") == "matched")
    ch.quote("vr_matched_min", mt["vs_vera_rubin"].min(), "{:.0f}")
    ch.quote("vr_matched_max", mt["vs_vera_rubin"].max(), "{:.0f}")

    pws = caveats.per_watt_specs({"jalapeno": subject.jalapeno_chip(scenario),
                                  **{f"vera-rubin {c}": caveats.vera_rubin_chip(c) for c in cases}})
    ch.add_table("per-watt-specs", _shown(pws), "Jalapeño and each Vera Rubin case: rated TDP, and HBM TB/s, dense FP4 "
                 "PFLOP/s and HBM GB per kW of TDP")
    j = pws.filter(pl.col("chip") == "jalapeno").row(0, named=True)
    ch.quote("pw_j_bw", j["hbm_tb_s_per_kw"], "{:.1f}")
    ch.quote("pw_j_fl", j["pflops_per_kw"], "{:.1f}")
    vr_rows = pws.filter(pl.col("chip") != "jalapeno")
    ch.quote("pw_vr_bw", f"{number(vr_rows['hbm_tb_s_per_kw'].min()):.1f}–{number(vr_rows['hbm_tb_s_per_kw'].max()):.1f}")
    ch.quote("pw_vr_fl", f"{number(vr_rows['pflops_per_kw'].min()):.1f}–{number(vr_rows['pflops_per_kw'].max()):.1f}")
    tau = fit.efficiency.tau_s  # per-layer step overhead of each stack (s)
    ch.quote("tau_ratio", min(v for k, v in tau.items() if k not in ("jalapeno", "default")) / tau["jalapeno"],
             "{:.0f}")


#: The rows of the power-bases table (:data:`jalapeno.comparison.POWER_BASIS_ROWS`, all of them) and how the
#: table names each.
POWER_BASIS_LABELS = {"rated": "rated", "sustained": "sustained, Jalapeño only", "sustained, both": "sustained, both",
                      "all-in-proportional": "all-in, proportional", "all-in-per-chip": "all-in, per chip",
                      "all-in-per-chip, sustained": "all-in, per chip, sustained", "facility": "facility"}


#: The quantity each per-watt ratio of the power bases shows, by its key (the others are this chapter's alone).
POWER_BASIS_QUANTITIES = {"pb_rated": "gptoss-per-watt-ratio-rated", "pb_sus_j": "gptoss-per-watt-ratio-jalapeno-sustained",
                          "pb_prop": "gptoss-per-watt-ratio-allin-proportional"}


def _power_bases(ch, reg, pue, jalapeno_sustained_w) -> None:
    _qualifies(ch, reg, "power")
    bases = comparison.power_basis_table(bases=tuple(POWER_BASIS_LABELS), pue=pue, jalapeno_sustained_w=jalapeno_sustained_w)
    bases = bases.with_columns(pl.col("basis").replace_strict(POWER_BASIS_LABELS),
                               (pl.col("ratio") / bases["ratio"][0]).alias("ratio_vs_rated"))
    ch.quote("pue_used", pue, "{:.2f}")
    row = {r["basis"]: r for r in bases.iter_rows(named=True)}
    ch.quote("pb_j_rated", row["rated"]["jalapeno_tok_s_kw"], "{:,.0f}")
    ch.quote("pb_b_rated", row["rated"]["baseline_tok_s_kw"], "{:,.0f}", quantity="gb200-gptoss-peak-tok-s-kw")
    for key, basis in (("pb_rated", "rated"), ("pb_sus_j", "sustained, Jalapeño only"),
                       ("pb_sus_both", "sustained, both"), ("pb_prop", "all-in, proportional"),
                       ("pb_per", "all-in, per chip"), ("pb_per_sus", "all-in, per chip, sustained"),
                       ("pb_fac", "facility")):
        ch.quote(key, row[basis]["ratio"], "{:.2f}", quantity=POWER_BASIS_QUANTITIES.get(key))
    ch.quote("pb_hn_w", power.host_network_w("jalapeno", "per-chip"), "{:,.0f}")
    ch.quote("pb_fac_j", row["facility"]["jalapeno_tok_s_kw"], "{:,.0f}")
    ch.add_table("power-bases", bases, "Jalapeño and GB200 on gpt-oss-120b under each power basis (facility at PUE "
                 f"{display.formatted(pue, '{:.2f}')}): watts, peak tok/s/kW, ratios")
    ch.add_figure("power-bases", ratio_bars(bases.select("basis", pl.lit("per-watt ratio").alias("metric"), "ratio"),
                                            "basis", "Per-watt ratio under each power basis"), "caveats-power-bases")


def _shape(ch, reg, model, baseline, shapes, fit, scenario, max_chips) -> None:
    _qualifies(ch, reg, "shape")
    ch.quote("pub_shape", f"{number(claim_value('workload-isl')):,.0f}/{number(claim_value('workload-osl')):,.0f}")
    sw = caveats.shape_sweep(model, baseline, [tuple(s) for s in shapes], fit=fit, scenario=scenario,
                             max_chips=max_chips)
    ch.add_table("shape-sweep", _shown(sw), f"Jalapeño against {specs.short_name(baseline)} on "
                 f"{specs.model(model).display_name}, both modeled, at each ISL/OSL: ratios and peak tok/s/kW")
    long = sw.unpivot(index="shape", on=["per_kw_at_peak", "single_user", "e2e"], variable_name="metric",
                      value_name="ratio").with_columns(pl.col("metric").map_elements(display.header, return_dtype=pl.String))
    ch.add_figure("shape-sweep", ratio_bars(long, "shape", f"{model}: Jalapeño's advantage by workload shape",
                                            "ISL/OSL"), f"caveats-shape-sweep-{model}-{baseline}")
    for metric, key in (("per_kw_at_peak", "sh"), ("single_user", "sh_su")):
        ranked = sw.sort(metric)
        best, worst = ranked.row(-1, named=True), ranked.row(0, named=True)
        ch.quote(f"{key}_best", best["shape"])
        ch.quote(f"{key}_best_r", best[metric], "{:.2f}")
        ch.quote(f"{key}_worst", worst["shape"])
        ch.quote(f"{key}_worst_r", worst[metric], "{:.2f}")


def _baselines(ch, reg, agent_profile, fit, scenario, max_chips) -> None:
    _qualifies(ch, reg, "baselines")
    mc = caveats.measured_chip_comparison("gpt-oss-120b")
    ch.add_table("baselines", _shown(mc), "Jalapeño's published figures against each chip InferenceMAX measured on "
                 "gpt-oss-120b 8k/1k, per kW of rated TDP")
    top = mc.row(0, named=True)
    ch.quote("bl_top", specs.chip(top["chip"]).display_name)
    ch.quote("bl_top_kw", top["peak_tok_s_kw"], "{:,.0f}")
    ch.quote("bl_top_ratio", top["per_kw_ratio"], "{:.2f}")
    ch.quote("bl_gb200_ratio", mc.filter(pl.col("chip") == "gb200")["per_kw_ratio"][0], "{:.2f}",
             quantity="gptoss-per-watt-ratio-rated", variant="best GB200 run")
    ch.quote("bl_n", mc.height)
    ch.quote("bl_su_min", mc["single_user_ratio"].min(), "{:.2f}")
    task = agents.profile(agent_profile)
    srv = agents.task_servers(task, "gpt-oss-120b", "gb200", scenario=scenario, jalapeno_fit=fit, max_chips=max_chips)
    ct = agents.compounding_table([task], srv)
    ch.quote("ag_profile", agent_profile)
    ch.quote("ag_ratio", ct["task_ratio"][0], "{:.2f}")
    ch.quote("ag_call_ratio", ct["call_ratio_first_step"][0], "{:.2f}")
    ch.quote("ag_task_ratio", ct["task_ratio"][0], "{:.2f}")


def _kernels(ch, reg, model, fit, scenario) -> None:
    _qualifies(ch, reg, "kernels")
    speedups = (claim_value("ai-kernel-speedup"), claim_value("ai-kernel-speedup", high=True))
    front = subject.jalapeno_frontier(model, scenario, fit=fit)
    kt = caveats.kernel_speedup_table(model, subject.jalapeno_chip(scenario), front, eff=fit.efficiency,
                                      stack="jalapeno", speedups=speedups)
    ch.add_table("kernels", _shown(kt).rename(
        {f"step_speedup_{s:g}": f"whole-step speedup, blocks {display.formatted(s, '{:g}')}x faster" for s in speedups}),
        f"{specs.model(model).display_name}'s decode step on Jalapeño at best TBT and peak throughput: share of each "
        "part, Amdahl's speedups")
    pts = pl.concat([kt.select(pl.col("operating_point").alias("label"), pl.col("kernel_share").alias("share"),
                               pl.col(f"step_speedup_{s:g}").alias("speedup")) for s in speedups])
    ch.add_figure("amdahl", amdahl_curves(caveats.amdahl_curve(speedups), pts), f"caveats-amdahl-{model}")
    ch.quote("k_model", model)
    bt, pk = kt.row(0, named=True), kt.row(1, named=True)  # best TBT, peak throughput
    ch.quote("k_share_bt", 100 * bt["kernel_share"], "{:.0f}")
    ch.quote("k_share_pk", 100 * pk["kernel_share"], "{:.0f}")
    ch.quote("k_bt_lo", bt[f"step_speedup_{speedups[0]:g}"], "{:.2f}")
    ch.quote("k_bt_hi", bt[f"step_speedup_{speedups[1]:g}"], "{:.2f}")
    ch.quote("k_pk_lo", pk[f"step_speedup_{speedups[0]:g}"], "{:.2f}")
    ch.quote("k_pk_hi", pk[f"step_speedup_{speedups[1]:g}"], "{:.2f}")
    ch.quote("k_overhead_bt", 100 * bt["share_overhead"], "{:.0f}")
    # a kernel already at the credited share of HBM bandwidth cannot run s times faster: at most eta / s of it
    ch.quote("k_eta", 100 * fit.efficiency.eta_mem / speedups[0], "{:.0f}")
    ch.quote("k_eta_hi", 100 * fit.efficiency.eta_mem / speedups[1], "{:.0f}")


def _hbm_comparison(hbm: pl.DataFrame) -> str:
    """The sentence comparing a gigawatt of Jalapeño's HBM demand with the other chips of ``hbm``."""
    j = hbm.filter(pl.col("chip") == "jalapeno")["supply_share_per_gw"][0]
    others = hbm.filter(pl.col("chip") != "jalapeno")
    more = others.filter(pl.col("supply_share_per_gw") < j)["chip"].to_list()
    less = others.filter(pl.col("supply_share_per_gw") >= j)["chip"].to_list()
    return ((f"more HBM than a gigawatt of {', '.join(more)}" if more else "no more HBM than any GPU shown")
            + (f", and no more than one of {', '.join(less)}" if more and less else ""))


def _hbm(ch, reg, chips, basis, supply_share, pue) -> None:
    _qualifies(ch, reg, "hbm")
    hbm = caveats.hbm_table(chips, supply_share=supply_share, power_basis=basis, pue=pue)
    ch.add_table("hbm", _shown(hbm), f"HBM per GW of each chip at {power.BASIS_LABELS[basis]} power, and the chips "
                 f"{display.formatted(100 * supply_share, '{:g}')} % of a year's HBM builds")
    ch.add_figure("hbm-per-gw", hbm_per_gw(hbm), "caveats-hbm-per-gw")
    j = hbm.filter(pl.col("chip") == "jalapeno").row(0, named=True)
    ch.quote("hbm_basis", power.BASIS_LABELS[basis])
    ch.quote("hbm_per_stack", caveats.hbm_per_stack_bytes("jalapeno") / 1e9, "{:.0f}")  # GB
    ch.quote("hbm_w", j["watts_per_chip"], "{:,.0f}")
    ch.quote("hbm_chips_gw", j["chips_per_gw"], "{:,.0f}")
    ch.quote("hbm_stacks_gw", j["stacks_per_gw"] / 1e6, "{:.2f}")  # million
    ch.quote("hbm_share_gw", 100 * j["supply_share_per_gw"], "{:.1f}")
    ch.quote("hbm_share", 100 * supply_share, "{:g}")
    ch.quote("hbm_chips_year", j["chips_per_year"], "{:,.0f}")
    ch.quote("hbm_gw_year", j["gw_per_year"], "{:.2f}")
    ch.quote("hbm_presold", claim_value("hbm-presold-through-year"), "{:.0f}")
    ch.quote("hbm_compare", _hbm_comparison(hbm))
    rated = caveats.per_watt_specs({c: (caveats.vera_rubin_chip("central") if c == "vera-rubin" else c) for c in chips})
    others = rated.filter(pl.col("chip") != "jalapeno")["hbm_gb_per_kw"]
    ch.quote("hbm_gbkw_j", rated.filter(pl.col("chip") == "jalapeno")["hbm_gb_per_kw"][0], "{:,.0f}")
    ch.quote("hbm_gbkw_o", f"{number(others.min()):,.0f}–{number(others.max()):,.0f}")


def _pareto_shape(ch, reg, models, fit, scenario, max_chips) -> None:
    _qualifies(ch, reg, "pareto-shape")
    shape_t, curves = caveats.matched_ratio_shapes(models, fit=fit, scenario=scenario, max_chips=max_chips)
    ch.add_table("pareto-shape", _shown(shape_t.rename({"old": "baseline_tok_s_kw", "new": "jalapeno_tok_s_kw"})),
                 "Jalapeño and each model's baseline: tok/s/kW and ratio at fractions "
                 "of the baseline's highest interactivity")
    ch.add_figure("pareto-shape", figures.ratio_curves(curves, "A three-digit ratio is the frontier's shape: "
                                                       "the ratio at each interactivity"), "caveats-pareto-shape")
    m = shape_t["model"][0]
    at = {round(r["fraction"], 2): r["ratio"] for r in shape_t.filter(pl.col("model") == m).iter_rows(named=True)}
    near, half = PARETO_SHAPE_FRACTIONS
    ch.quote("ps_model", m)
    ch.quote("ps_r100", at[1.0], "{:.0f}",
             quantity="gptoss-matched-ratio-central" if m == "gpt-oss-120b" and scenario == "central" else None)
    ch.quote("ps_r90", at[near], "{:.0f}")
    ch.quote("ps_r50", at[half], "{:.1f}")
    ch.quote("ps_f90", 100 * near, "{:.0f}")
    ch.quote("ps_f50", 100 * half, "{:.0f}")
    ch.quote("ps_pub", claim_value(pareto.PUBLISHED_RATIOS[m][0]), "{:g}")


def _business(ch, reg) -> None:
    _qualifies(ch, reg, "business")
    biz = caveats.business_table()
    printed = dict(zip(reg["claim_id"], reg["claimed"]))
    ch.add_table("business", _shown(biz).with_columns(pl.col("claims").map_elements(
        lambda ids: "; ".join(printed[c.strip()] for c in ids.split(";")), return_dtype=pl.String)
        .alias("claims (as printed)")).select("topic", "claims (as printed)", "implication", "implied", "unit", "from"),
        "The seeds' business figures as printed, what each implies by arithmetic, and what that is computed from")
    implied = {topic: biz.filter(pl.col("topic") == topic)["implied"]
               for topic in ("NVIDIA quarter", "financing", "margins", "inference cost")}
    ch.quote("bz_growth", implied["NVIDIA quarter"][0], "{:.0f}")
    ch.quote("bz_dc_growth", implied["NVIDIA quarter"][1], "{:.0f}")
    ch.quote("bz_fin_q", implied["financing"][0], "{:.1f}")
    ch.quote("bz_margin_factor", implied["margins"][0], "{:.1f}")
    ch.quote("bz_margin_asic", implied["margins"][1], "{:.0f}")
    ch.quote("bz_margin_watt_hi", implied["margins"][2], "{:.0f}")
    ch.quote("bz_margin_watt_lo", implied["margins"][3], "{:.0f}")
    ch.quote("bz_life_lo", implied["inference cost"][0], "{:.0f}")
    ch.quote("bz_life_hi", implied["inference cost"][1], "{:.0f}")


def _public_data(ch, reg) -> None:
    """Seed 003's four questions (:func:`jalapeno.caveats.public_data_questions`) with what this chapter
    finds on each: the power bases and the shape sweep for the first two (their quoted numbers), the
    registry's not-checkable claims for the last two."""
    n = ch.numbers
    found = {
        "basis-of-comparison": (f"per-watt ratio {n['pb_rated']}x on rated TDP, {n['pb_sus_both']}x on sustained "
                                f"power for both, {n['pb_per']}x with a GB200's host and network per chip, "
                                f"{n['pb_fac']}x at the facility"),
        "performance-range": (f"per-watt advantage at peak from {n['sh_worst_r']}x ({n['sh_worst']}) to "
                              f"{n['sh_best_r']}x ({n['sh_best']}), single-user from {n['sh_su_worst_r']}x to "
                              f"{n['sh_su_best_r']}x, over the ISL/OSL shapes modeled"),
    }
    pd = caveats.public_data_questions(reg)
    rows = []
    for r in pd.iter_rows(named=True):
        total = len(caveats.PUBLIC_DATA_TREATMENT[r["question"]][1])
        rows.append(found.get(r["question"], f"nothing public checks it: {r['n_not_checkable']} of its {total} "
                                             "claims are not checkable"))
    ch.add_table("public-data", pd.select(
        pl.col("question_en").alias("question"), pl.col("answers_en").alias("what the public data answers"),
        pl.col("cannot_answer_en").alias("what it cannot answer yet"),
        pl.col("row_zh").alias("the seed's row, as printed"),
        pl.col("section").alias("where this chapter treats it"),
        pl.Series("what the chapter finds", rows, dtype=pl.Utf8),
        pl.col("claims").alias("claims registered (status)")),
        "Seed 003's questions: what the public data can and cannot answer, where this chapter treats each, "
        "what it finds")


def _three_lines(ch, reg) -> None:
    """Seed 004's three unprinted lines (:func:`jalapeno.caveats.three_lines`) with the numbers this chapter
    computes for each: the advantage left against the modeled Vera Rubin, what is and is not checkable on
    training, the HBM4 supply arithmetic."""
    n = ch.numbers
    tl = caveats.three_lines(reg)
    training = tl.row(1, named=True)
    computed = [
        (f"against the modeled Vera Rubin {n['vr_perkw_remaining_min']}–{n['vr_perkw_remaining_max']} % of the "
         f"per-watt advantage at peak is left, and Rubin comes out ahead in {n['vr_behind']} of {n['vr_pairs']} "
         f"model and case pairs; {n['vr_su_remaining_min']}–{n['vr_su_remaining_max']} % of the single-user "
         "advantage is left"),
        (f"nothing on training: no training result of any chip is in the book's data, and "
         f"{training['n_not_checkable']} of the line's {training['n_claims']} claims are not checkable; what "
         f"arithmetic can say is that the financing guarantee is {n['bz_fin_q']} quarters of NVIDIA's expected "
         "data-centre revenue"),
        (f"{n['hbm_per_stack']} GB per stack; a gigawatt of Jalapeño at {n['hbm_basis']} power is "
         f"{n['hbm_stacks_gw']} million stacks, {n['hbm_share_gw']} % of the 2026 HBM forecast; "
         f"{n['hbm_share']} % of a year's HBM builds {n['hbm_chips_year']} chips ({n['hbm_gw_year']} GW)"),
    ]
    ch.add_table("three-lines", tl.select(
        pl.col("line").alias("the line the score sheet does not print"), pl.col("quote").alias("the seed's words"),
        pl.Series("what the chapter computes", computed, dtype=pl.Utf8),
        pl.col("claims").alias("claims registered (status)")),
        "The three lines seed 004's score sheet does not print: the seed's words and what this chapter "
        "computes for each")


# ---- figures ----

def amdahl_curves(curve: pl.DataFrame, points: pl.DataFrame) -> alt.LayerChart:
    """Whole-step speedup against the accelerated share (:func:`jalapeno.caveats.amdahl_curve`: ``share``,
    ``block_speedup``, ``speedup``), with operating points of the serving model marked (``points``:
    ``label``, ``share``, ``speedup``)."""
    curve = curve.with_columns(pl.col("block_speedup").map_elements(
        lambda s: display.formatted(s, "{}x on the blocks"), return_dtype=pl.String).alias("blocks"))
    lines = alt.Chart(curve).mark_line().encode(
        x=alt.X("share:Q", title="share of decode-step time in the accelerated blocks", axis=alt.Axis(format="%")),
        y=alt.Y("speedup:Q", title="whole-step speedup"),
        color=charts.series_color(curve["blocks"].to_list(), "blocks", legend=charts.LINE_LEGEND),
        strokeDash=charts.series_dash(curve["blocks"].to_list(), "blocks"),
    )
    dots = alt.Chart(points).mark_point(filled=True, size=70, color="black").encode(
        x="share:Q", y="speedup:Q", shape=alt.Shape("label:N", title="serving model"),
        tooltip=["label:N", alt.Tooltip("share:Q", format=".1%"), alt.Tooltip("speedup:Q", format=".3f")],
    )
    return alt.layer(lines, dots).properties(title="Amdahl's law: faster blocks, smaller whole-model gain")


def ratio_bars(df: pl.DataFrame, x: str, title: str, x_title: str | None = None) -> alt.Chart:
    """Ratios (``ratio``, bars from zero, a dashed rule at 1 = parity) by the category ``x`` (titled
    ``x_title``), grouped by ``metric``: for the workload-shape sweep and the power bases of the caveats
    chapter. The bars lie horizontal, one category a row, so long category names stay legible on a phone."""
    data = df.select(x, "metric", "ratio")
    rule = alt.Chart(pl.DataFrame({"x": [1.0]})).mark_rule(color="#888888", strokeDash=[4, 3]).encode(x="x:Q")
    bars = alt.Chart(data).mark_bar().encode(
        y=alt.Y(f"{x}:N", title=x_title, sort=None),
        yOffset=alt.YOffset("metric:N", sort=None),
        x=alt.X("ratio:Q", title="Jalapeño / other"),
        color=charts.series_color(data["metric"].to_list(), "metric"),
        tooltip=[f"{x}:N", "metric:N", alt.Tooltip("ratio:Q", format=",.2f")],
    )
    return alt.layer(bars, rule).properties(title=title)  # rule drawn over the bars


def remaining_share(df: pl.DataFrame) -> alt.Chart:
    """Share of each published advantage left against Vera Rubin (:func:`jalapeno.caveats.vera_rubin_table`:
    ``model``, ``metric``, ``case``, ``remaining``), one point per case."""
    data = df.select("model", pl.col("metric").map_elements(display.header, return_dtype=pl.String), "case", "remaining").with_columns(
        pl.format("{} · {}", pl.col("model"), pl.col("metric")).alias("comparison"))
    return alt.Chart(data).mark_point(filled=True, size=70).encode(
        y=alt.Y("comparison:N", title=None, sort=None),
        x=alt.X("remaining:Q", title=charts.wrap_title("advantage left against Vera Rubin / against the published baseline", 24),
                scale=alt.Scale(type="log")),
        color=charts.series_color(["pessimistic", "central", "optimistic"], "case", "Vera Rubin"),
        shape=alt.Shape("case:N", title="Vera Rubin", scale=alt.Scale(domain=["pessimistic", "central", "optimistic"])),
        tooltip=["model:N", "metric:N", "case:N", alt.Tooltip("remaining:Q", format=".2f")],
    ).properties(title="How much of each published ratio remains against Vera Rubin")


def hbm_per_gw(df: pl.DataFrame) -> alt.Chart:
    """HBM stacks per gigawatt of deployed chips (:func:`jalapeno.caveats.hbm_table`), one bar per chip."""
    data = df.select("chip", "stacks_per_gw", "hbm_pb_per_gw", "watts_per_chip")
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("chip:N", title=None, sort=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("stacks_per_gw:Q", title="HBM stacks per GW of chips"),
        color=charts.chip_color(data["chip"].to_list(), legend=None),
        tooltip=["chip:N", alt.Tooltip("stacks_per_gw:Q", format=",.0f"), alt.Tooltip("hbm_pb_per_gw:Q", format=",.0f"),
                 alt.Tooltip("watts_per_chip:Q", format=",.0f")],
    ).properties(title="HBM a gigawatt of chips needs")
