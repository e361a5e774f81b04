"""The serving-model chapter: the calibrated constants, the in-sample fit to the InferenceMAX
measurements, and the validation schemes that match each use of the error bar (:mod:`jalapeno.schemes`:
(a) a new generation, (b) a new model-chip pair or shape, (c) end-point anchored), each scored on the
default prediction path with the one statistic (:func:`jalapeno.calibration.frontier_error`) and the
coverage of its 80 % band (:func:`jalapeno.calibration.coverage`), against the ceilings the book claims
(:data:`jalapeno.schemes.CEILINGS`); and a worked example of the model's full step at each chip's
highest-throughput point (:func:`jalapeno.subject.worked_configurations`, shared with the roofline
chapter's batch-1 example)."""

from __future__ import annotations

import math

import altair as alt
import polars as pl

from .. import calibration, charts, data, display, measured, schemes, serving, specs, subject
from ..display import number, plain
from ..errors import UnknownNameError
from ..metrics import mean_request_length
from . import Chapter, Parameter

#: The key stem each row of :func:`jalapeno.schemes.table` is quoted under (``sc_<stem>_median`` ...).
STEMS = {"generation": "generation", "model-chip": "model_chip", "shape": "shape", "anchored": "anchored",
         "anchored-ratio": "ratio"}


#: What the chapter takes (:class:`jalapeno.chapters.Parameter`); the notebook's parameters cell is generated from it.
PARAMETERS = (
    Parameter("shown_series", ["gpt-oss-120b h200 vllm fp4 8192/1024", "gpt-oss-120b b200-trt trt fp4 8192/1024",
                               "gpt-oss-120b gb200 dynamo-trt fp4 8192/1024", "deepseek-r1 b200 sglang fp8 8192/1024"],
              "the measured series drawn against the model (as in calibration.configurations()['series'])"),)


def compute(*, shown_series: list[str]) -> Chapter:
    """The serving-model chapter.

    Parameters: those of :data:`PARAMETERS` (type, default, range and unit of each there). Returns the
    quoted numbers (constants, in-sample errors, each validation scheme's: keys ``sc_*``, the worked
    example's steps: keys ``wb_*``), the tables ``constants``, ``fit_errors``, ``schemes``, ``holdout`` and
    the figures ``fit`` and ``schemes``. Raises UnknownNameError for an unknown series."""
    configs = calibration.configurations()
    series = configs["series"].unique(maintain_order=True).to_list()
    for name in shown_series:
        if name not in series:
            raise UnknownNameError("series", name, series)
    eff = calibration.load()
    ch = Chapter()
    _constants(ch, configs, eff)
    pred = calibration.predict(configs, eff)
    fit_errors = calibration.series_errors(pred, eff)
    s_in = calibration.summary(fit_errors)
    ch.quote("in_frontier_median", 100 * s_in["frontier_distance:median"], "{:.0f}")
    ch.quote("in_tpot_median", 100 * s_in["tpot_err_median:median"], "{:.0f}")
    ch.quote("in_tput_median", 100 * s_in["tput_err_median:median"], "{:.0f}")
    ch.add_table("fit_errors", fit_errors.drop("point_distances"),
                 "In-sample fit per measured series: median and worst error of TPOT and throughput per GPU, "
                 "frontier distances")
    mine = calibration.configurations(measured.points().filter(pl.col("reader_run")))  # a book on a reader's runs
    shown = [*shown_series, *(s for s in mine["series"].unique(maintain_order=True) if s not in shown_series)]
    points = calibration.long_points(pred, shown, mine["run_id"].unique().sort().to_list())
    ch.add_figure("fit", predicted_vs_measured(points), "serving-model-fit")
    _schemes(ch)
    ch.quote("prior_factor", math.exp(calibration.PRIOR_WIDTH), "{:,.0f}")
    _worked_example(ch)
    return ch


def ceiling_status(row: dict) -> str:
    """How a row of :func:`jalapeno.schemes.table` stands against its ceilings
    (:data:`jalapeno.schemes.CEILINGS`), in words: ``met``, ``median missed``, ``p90 missed``, ``both
    missed``; ``none claimed`` for a row without a ceiling (``anchored-ratio``)."""
    if row["scheme"] not in schemes.CEILINGS:
        return "none claimed"
    median, p90 = schemes.CEILINGS[row["scheme"]]
    missed = [name for name, got, ceiling in (("median", row["median"], median), ("p90", row["p90"], p90))
              if got > ceiling]
    return "met" if not missed else "both missed" if len(missed) == 2 else f"{missed[0]} missed"


def _schemes(ch: Chapter) -> None:
    """The validation schemes (:func:`jalapeno.schemes.table`): per row the quoted numbers (keys
    ``sc_<stem>_*``, :data:`STEMS`), the table ``schemes``, the figure ``schemes`` (median and p90 of each
    scheme with a ceiling against it) and the table ``holdout`` (every held-out series of every scheme)."""
    t = schemes.table()
    ch.values["schemes"] = t
    ch.quote("cov_low", 100 * schemes.COVERAGE_RANGE[0], "{:.0f}")
    ch.quote("cov_high", 100 * schemes.COVERAGE_RANGE[1], "{:.0f}")
    rows = []
    coverage_header = f"coverage against {100 * schemes.COVERAGE_RANGE[0]:.0f}-{100 * schemes.COVERAGE_RANGE[1]:.0f} %"
    for r in t.iter_rows(named=True):
        k = STEMS[r["scheme"]]

        def q(name, value, fmt="{}", quantity=None):
            return ch.quote(f"sc_{k}_{name}", value, fmt, quantity=quantity if k == "anchored" else None)
        q("median", 100 * r["median"], "{:.0f}", "scheme-c-heldout-median-pct")
        q("p90", 100 * r["p90"], "{:.0f}", "scheme-c-heldout-p90-pct")
        q("series", r["series"])
        q("folds", r["folds"])
        q("coverage", 100 * r["coverage"], "{:.1f}", "scheme-c-band-coverage-pct")
        q("cov_lo", 100 * r["coverage_low"], "{:.1f}")
        q("cov_hi", 100 * r["coverage_high"], "{:.1f}")
        q("inside", r["inside"])
        q("points", r["points"])
        q("unreached", r["unreached"])
        q("band_factor", math.exp(r["band_half_width"]), "{:.1f}", "scheme-c-band-factor")
        q("coverage_vs", schemes.coverage_status(r["coverage"]))
        status = q("status", ceiling_status(r))
        ceiling = schemes.CEILINGS.get(r["scheme"])
        if ceiling is not None:
            q("ceiling_median", 100 * ceiling[0], "{:.0f}")
            q("ceiling_p90", 100 * ceiling[1], "{:.0f}")
            q("median_vs", "above" if r["median"] > ceiling[0] else "within")
            q("p90_vs", "above" if r["p90"] > ceiling[1] else "within")
        rows.append({
            "scheme": r["label"], "stands for": r["stands_for"], "its band is used for": r["band_for"],
            "series": r["series"], "median (%)": 100 * r["median"], "p90 (%)": 100 * r["p90"],
            "ceiling median / p90 (%)": None if ceiling is None else f"{100 * ceiling[0]:.0f} / {100 * ceiling[1]:.0f}",
            "median and p90 against the ceiling": status, "80 % band (factor either way)": math.exp(r["band_half_width"]),
            "coverage (%)": 100 * r["coverage"], coverage_header: schemes.coverage_status(r["coverage"]),
            "90 % interval (%)": f"{100 * r['coverage_low']:.1f}-{100 * r['coverage_high']:.1f}",
            "points inside / scored": f"{r['inside']} / {r['points']}", "beyond reach": r["unreached"]})
    ch.add_table("schemes", pl.DataFrame(rows),
                 "Each validation scheme, held out on the default path: median and p90 vs its ceiling, its 80 % band "
                 "and coverage")
    claimed = t.filter(pl.col("scheme").is_in(list(schemes.CEILINGS)))
    long = pl.concat([claimed.select(pl.col("label").alias("scheme"), pl.lit(s).alias("statistic"),
                                     (100 * pl.col(s)).alias("error_pct"),
                                     pl.col("scheme").replace_strict({n: 100 * c[i] for n, c in schemes.CEILINGS.items()},
                                                                     return_dtype=pl.Float64).alias("ceiling_pct"))
                      for i, s in enumerate(("median", "p90"))])
    ch.add_figure("schemes", validation_schemes(long), "serving-model-validation")
    errors = schemes.scheme_errors()
    worst = errors.filter(pl.col("scheme") == "anchored").sort("frontier_distance", descending=True).row(0, named=True)
    ch.quote("sc_anchored_worst_series", worst["series"])
    ch.quote("sc_anchored_worst", 100 * worst["frontier_distance"], "{:.0f}")
    for scheme in ("generation", "anchored"):  # what remains in (a) and (c): each fold's median series
        by_fold = errors.filter(pl.col("scheme") == scheme).group_by("fold", maintain_order=True).agg(
            pl.col("frontier_distance").log1p().median().exp().sub(1).alias("median"))
        ch.quote(f"sc_{STEMS[scheme]}_by_fold", "; ".join(
            f"{fold.split('=', 1)[1]} {number(100 * m):.0f} %" for fold, m in by_fold.iter_rows()))
    folds = errors.filter(pl.col("held_at_prior").str.contains("mla_layer_factor"))["fold"].unique(maintain_order=True)
    ch.quote("prior_folds", ", ".join(folds) or "none")
    ch.quote("mla_prior", calibration.PRIORS["mla_layer_factor"], "{:.2f}")
    labels = {n: s.label for n, s in schemes.SCHEMES.items()}
    stacks = {**display.NAMES, **STACK_WORDS}
    ch.add_table("holdout", errors.select(
        pl.col("scheme").replace_strict(labels), pl.col("fold").map_elements(fold_words, return_dtype=pl.String),
        "series", pl.col("stack").replace_strict(stacks, default=pl.col("stack")).alias("stack predicted with"),
        "points", (100 * pl.col("frontier_distance")).alias("frontier distance (%)"),
        pl.col("held_at_prior").map_elements(lambda s: "; ".join(constant_symbol(k) for k in s.split(", ") if k) or "none",
                                             return_dtype=pl.String).alias("constants held at their priors")),
        "Every held-out series of every scheme: the stack the default path predicted it with, its frontier distance")


#: How the held-out table names the two stacks of a scheme that are not a serving stack's.
STACK_WORDS = {"anchored": "its own constants, fitted to its end points",
               "unmeasured-vendor": "the fallback of a vendor with no measured stack"}

#: A stored constant's key as its symbol with its stack and generation (the held-out table's words).
constant_symbol = calibration.constant_symbol


def fold_words(fold: str) -> str:
    """A validation fold (``model-chip=deepseek-r1 gb200``, ``generation=Blackwell``, ``shape=1024/1024``) as
    the held-out table names it, its scheme being in the row's first column: what is left out
    (``deepseek-r1 on gb200``, ``Blackwell``, ``1,024/1,024``)."""
    kind, _, value = fold.partition("=")
    if kind == "model-chip":
        return " on ".join(value.split(" ", 1))
    if kind == "shape":
        return "/".join(f"{int(x):,}" for x in value.split("/"))
    return value


def _constants(ch: Chapter, configs: pl.DataFrame, eff: serving.Efficiency) -> None:
    """The stored constants and what the prose says of them (stack overheads, their spread on one chip)."""
    ch.quote("n_points", configs.height, "{:,}")
    ch.quote("n_series", configs["series"].n_unique())
    ch.quote("eta_mem", eff.eta_mem, "{:.2f}")
    ch.quote("eta_mem_high", calibration.BOUNDS["eta_mem"][1], "{:.2f}")
    ch.quote("eta_compute_high", calibration.BOUNDS["eta_compute"][1], "{:.2f}")
    pts = measured.points()
    ch.quote("n_queue_bound", pts.filter(pl.col("queue_bound")).height, "{:,}")
    ch.quote("n_measured_rows", pts.height, "{:,}")
    ch.quote("queue_bound_occupancy", data.model_constant("queue_bound_occupancy"), "{:.1f}")
    ch.quote("eta_compute", eff.eta_compute, "{:.3f}")
    ch.quote("eta_prefill", eff.eta_prefill, "{:.3f}")
    taus = [v for k, v in eff.tau_s.items() if "@" in k]  # the fitted (stack, generation) overheads
    ch.quote("n_overheads", len(taus))
    ch.quote("tau_min_us", min(taus) * 1e6, "{:.0f}")
    ch.quote("tau_max_us", max(taus) * 1e6, "{:.0f}")
    ch.quote("tau_ratio", max(taus) / min(taus), "{:.1f}")
    ch.quote("vllm_blackwell_us", eff.tau("vllm", "Blackwell") * 1e6, "{:.0f}")
    ch.quote("vllm_hopper_us", eff.tau("vllm", "Hopper") * 1e6, "{:.0f}")
    stacks = configs.group_by("chip").agg(pl.col("stack").unique()).filter(pl.col("stack").list.len() > 1)
    gen = {c: specs.chip(c).generation for c in stacks["chip"]}
    spreads = sorted(((max(eff.tau(s, gen[row["chip"]]) for s in row["stack"])
                       / min(eff.tau(s, gen[row["chip"]]) for s in row["stack"]), row["chip"],
                       sorted(row["stack"])) for row in stacks.iter_rows(named=True)), reverse=True)
    ratio, chip, names = spreads[0]
    ch.quote("spread_chip", chip.upper())
    ch.quote("spread_stacks", ", ".join(names))
    ch.quote("spread_ratio", ratio, "{:.1f}")
    ch.quote("chunk_tokens", serving.PREFILL_CHUNK_TOKENS, "{:,}")
    ch.quote("alpha_us", eff.alpha_s * 1e6, "{:.1f}")
    ch.quote("alpha_floor_us", calibration.BOUNDS["alpha_s"][0] * 1e6, "{:.0f}")
    ch.quote("mla_factor", eff.mla_layer_factor, "{:.2f}")
    ch.quote("mla_lo", calibration.BOUNDS["mla_layer_factor"][0], "{:g}")
    ch.quote("mla_hi", calibration.BOUNDS["mla_layer_factor"][1], "{:g}")
    ch.add_table("constants", constants_table(calibration.stored_table()),
                 "The serving model's stored constants: what each is, its value and its unit (times in µs)")


def constants_table(stored: pl.DataFrame) -> pl.DataFrame:
    """The stored constants (``parameter``, ``value``, ``unit``: :func:`jalapeno.calibration.stored_table`)
    as a reader reads them: what each is (:func:`jalapeno.calibration.constant_words`), its value, its unit; a time in
    microseconds (``s per layer per step`` -> ``µs per layer per step``, the value times 1e6), for display only."""
    rows = []
    for key, value, unit in stored.iter_rows():
        what = calibration.constant_words(key)
        if unit == "s" or unit.startswith("s "):
            value, unit = value * 1e6, "µs" + unit[1:]
        rows.append((what, value, unit))
    return pl.DataFrame(rows, schema=["constant", "value", "unit"], orient="row")


#: The operating point of the chapter's worked example (:data:`jalapeno.subject.WORKED_POINTS`).
WORKED_POINT = "peak-throughput"


def _worked_example(ch: Chapter) -> None:
    """The serving model's full step at each chip's highest-throughput frontier point (keys ``wb_*``; ``j``
    Jalapeño, ``g`` GB200), in the order of the evaluator (:func:`jalapeno.serving.evaluate`): the weights
    a batch touches (distinct experts), the KV cache, the FLOPs, ``max(weights, compute)``, the collectives,
    the per-layer overhead, the decode step, the chunked-prefill interference that makes TPOT, the request
    rate of the closed loop and the throughput per chip (input + output tokens). Values in ``ch.values``
    are unformatted (SI or the unit of the key)."""
    m = specs.model(subject.WORKED_MODEL)
    configs = subject.worked_configurations(WORKED_POINT)
    isl_m, osl_m = mean_request_length(subject.WORKED_ISL), mean_request_length(subject.WORKED_OSL)
    ch.quote("wb_model", m.display_name)
    ch.quote("wb_layers", m.num_hidden_layers)
    ch.quote("wb_experts", m.n_routed_experts)
    ch.quote("wb_topk", m.num_experts_per_tok)
    ch.quote("wb_isl", subject.WORKED_ISL, "{:,}")
    ch.quote("wb_osl", subject.WORKED_OSL, "{:,}")
    ch.quote("wb_isl_mean", isl_m, "{:,.1f}")
    ch.quote("wb_osl_mean", osl_m, "{:,.1f}")
    # one sequence on one chip reads the non-expert weights and k experts a layer: the starting point
    one = subject.worked_evaluation(configs["jalapeno"], n_chips=1.0, dp=1.0, concurrency=1.0)
    ch.quote("wb_batch1_weight_gb", plain(one.weight_bytes_read) / 1e9, "{:.2f}")
    for key, config in configs.items():
        k = key[0]
        chip, eff, kw = config["chip"], config["eff"], config["kw"]
        ev = subject.worked_evaluation(config)

        def q(name: str, value, fmt: str = "{}") -> None:
            ch.quote(f"wb_{k}_{name}", value, fmt)
        n, dp, b = float(kw["n_chips"]), float(kw["dp"]), float(kw["concurrency"])
        bw = chip.hbm_bandwidth_bytes_per_s * eff.eta_mem  # the achieved bandwidth the evaluator divides by
        q("chip", chip.display_name)
        q("constants", config["constants"])
        q("stack", kw["stack"])
        q("chips", n, "{:.0f}")
        noun = "chip" if k == "j" else "GPU"
        q("on_chips", f"{number(n):.0f} {noun}" + ("" if n == 1 else "s"))
        q("dp", dp, "{:.0f}")
        q("split", "attention on one replica" if dp == 1 else f"attention split {number(dp):.0f} ways by data parallelism")
        q("tp", n / dp, "{:.0f}")
        q("conc", b, "{:,.0f}")
        q("seqs", b / dp, "{:,.0f}")
        q("bw_tb", chip.hbm_bandwidth_bytes_per_s / 1e12, "{:.1f}")
        q("eta_mem", eff.eta_mem, "{:.2f}")
        q("pflops", plain(ev.flops) / plain(ev.compute_s) / eff.eta_compute / 1e15, "{:.1f}")
        q("eta_compute", eff.eta_compute, "{:.3f}")
        # 1. weights: the non-expert weights over the TP ways, the distinct experts the batch touches over the chips
        q("touched", plain(serving.expected_distinct_experts(m.n_routed_experts, m.num_experts_per_tok, b)), "{:.1f}")
        q("expert_gb", plain(ev.expert_weights_s) * bw / 1e9, "{:.2f}")
        q("nonexpert_gb", plain(ev.attention_weights_s + ev.other_weights_s) * bw / 1e9, "{:.2f}")
        q("weight_gb", plain(ev.weight_bytes_read) / 1e9, "{:.2f}")
        q("weights_ms", plain(ev.weights_s) * 1e3, "{:.3f}")
        # 2. the KV cache of the sequences of each attention replica; 3. the FLOPs at the achieved rate
        q("kv_gb", plain(ev.kv_bytes_read) / 1e9, "{:.1f}")
        q("kv_ms", plain(ev.kv_s) * 1e3, "{:.3f}")
        q("tflop", plain(ev.flops) / 1e12, "{:.2f}")
        q("compute_ms", plain(ev.compute_s) * 1e3, "{:.3f}")
        # 4. the matrix multiplies take the longer of their weight read and their FLOPs
        q("bound", "the FLOPs" if plain(ev.compute_s) > plain(ev.weights_s) else "the weight read")
        q("max_ms", max(plain(ev.weights_s), plain(ev.compute_s)) * 1e3, "{:.3f}")
        q("roofline_ms", plain(ev.roofline_s) * 1e3, "{:.3f}")
        # 5. collectives (jalapeno.network) and 6. the per-layer overhead
        q("allreduce_ms", plain(ev.allreduce_s) * 1e3, "{:.3f}")
        q("all_to_all_ms", plain(ev.all_to_all_s) * 1e3, "{:.3f}")
        q("alpha_us", eff.alpha_s * 1e6, "{:.1f}")
        q("tau_us", eff.tau(kw["stack"], chip.generation) * 1e6, "{:.1f}")
        q("beta_us", eff.beta_s * 1e6, "{:.3f}")
        q("overhead_ms", plain(ev.overhead_s) * 1e3, "{:.3f}")
        # 7. the decode step; 8. the prefills of the other users of a replica, spread over the output
        q("step_ms", plain(ev.decode_step_s) * 1e3, "{:.3f}")
        q("prefill_ms", plain(ev.prefill_s) * 1e3, "{:.1f}")
        q("others", b / dp - 1, "{:,.0f}")
        q("interference_ms", plain(ev.prefill_interference_s) * 1e3, "{:.3f}")
        q("tpot_ms", plain(ev.tpot_s) * 1e3, "{:.3f}")
        q("tok_s_user", plain(ev.interactivity_tok_s_user), "{:.1f}")
        q("interference_pct", 100 * plain(ev.prefill_interference_s) / plain(ev.tpot_s), "{:.0f}")
        # 9. the closed loop: a request takes E2E, B requests in flight; throughput counts input + output
        q("latency_s", eff.request_latency_s, "{:.3f}")
        q("first_s", plain(ev.ttft_s), "{:.3f}")
        q("e2e_s", plain(ev.e2e_s), "{:.2f}")
        q("rate", b / plain(ev.e2e_s), "{:.2f}")
        q("tok_s_chip", plain(ev.throughput_tok_s_chip), "{:,.0f}")
        q("target_tok_s_chip", config["target_tok_s_chip"], "{:,.0f}")
        q("vs_target_pct", 100 * (plain(ev.throughput_tok_s_chip) / config["target_tok_s_chip"] - 1), "{:+.0f}")
    ch.quote("wb_g_target_mode", "disaggregated" if configs["gb200"]["target_disagg"] else "aggregated")


# ---- figures ----

def predicted_vs_measured(df: pl.DataFrame) -> alt.LayerChart:
    """Measured points and the model's predictions for a few series: ``series``, ``interactivity``,
    ``throughput``, ``kind`` (``measured`` or ``predicted``) and, in a book built on a reader's runs,
    ``runs`` (:func:`jalapeno.calibration.long_points`): their measured points drawn as squares, under the
    legend entry :data:`jalapeno.charts.READER_SOURCE`."""
    base = alt.Chart(df).encode(
        x=alt.X("interactivity:Q", title="interactivity (tok/s/user)", scale=alt.Scale(type="log")),
        y=alt.Y("throughput:Q", title="throughput per GPU (tok/s)", scale=alt.Scale(type="log")),
        color=charts.series_color(df["series"].to_list(), "series"),
    )
    dots = base.transform_filter(alt.datum.kind == "measured").mark_point(filled=True, size=30, opacity=0.7)
    if "runs" in df.columns:
        dots = dots.encode(shape=alt.Shape("runs:N", title=None, scale=alt.Scale(
            domain=[measured.SHIPPED_LABEL, charts.READER_SOURCE], range=["circle", "square"])))
    predicted = base.transform_filter(alt.datum.kind == "predicted").mark_point(shape="cross", size=40)
    return alt.layer(dots, predicted).properties(title="Measured (dots) and predicted (crosses), same configurations")


def validation_schemes(df: pl.DataFrame) -> alt.LayerChart:
    """Median and p90 frontier distance (percent, the one statistic) of each validation scheme against the
    ceiling the book claims for it: ``scheme`` (its label), ``statistic`` (``median`` or ``p90``),
    ``error_pct`` and ``ceiling_pct`` (percent); a bar per statistic, a tick at its ceiling."""
    y = alt.Y("scheme:N", title=None, sort=None)
    bars = alt.Chart(df).mark_bar().encode(
        y=y, yOffset=alt.YOffset("statistic:N"),
        x=alt.X("error_pct:Q", title="frontier distance on the default path, held out (%)"),
        color=alt.Color("statistic:N", title=None),
        tooltip=["scheme", "statistic", alt.Tooltip("error_pct:Q", format=".0f"),
                 alt.Tooltip("ceiling_pct:Q", title="ceiling", format=".0f")],
    )
    ticks = alt.Chart(df).mark_tick(color="black", thickness=2, size=12).encode(
        y=y, yOffset=alt.YOffset("statistic:N"), x="ceiling_pct:Q")
    return alt.layer(bars, ticks).properties(
        title="Each validation scheme's median and p90 (bars) against the ceiling the book claims (ticks)")
