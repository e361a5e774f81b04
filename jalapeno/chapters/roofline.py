"""The chapter *Roofline* (``notebooks/roofline.ipynb``): ridge points, where prefill and decode sit on
each chip's roofline, the speed-of-light batch-1 decode bound of each model on each chip, how close the
best single-user speeds come to it, the prefill bound, and what holding the weights in SRAM costs.

Every bound is the serving evaluator at the speed of light (:mod:`jalapeno.bounds`); the measured and published speeds are those of
:func:`jalapeno.comparison.published_vs_roofline`.
"""

from __future__ import annotations

import json
import math

import altair as alt
import numpy as np
import polars as pl

from .. import bounds, charts, comparison, display, pareto, serving, specs, subject
from ..data import claim_value
from ..display import plain
from ..metrics import mean_request_length
from . import Chapter, Parameter

#: The decode batches of the batch sweep: powers of two from 1 to 4,096 sequences.
SWEEP_BATCHES = 2 ** np.arange(0, 13)

#: The model the LPU section always includes: the seeds' LPU chip count is stated for DeepSeek-V3/R1.
LPU_CLAIM_MODEL = "deepseek-r1"


#: What the chapter takes (:class:`jalapeno.chapters.Parameter`); the notebook's parameters cell is generated from it.
PARAMETERS = (
    Parameter("models", ["gpt-oss-120b", "deepseek-r1", "kimi-k2.5"],
              "the models whose speed-of-light bounds the chapter draws (of data/models.csv)", names="model"),
    Parameter("chips", ["jalapeno", "gb200", "gb300", "b200", "h100", "h200", "mi355x", "tpu7x", "vera-rubin"],
              "the chips whose speed-of-light bounds the chapter draws (of data/chips.csv)", names="HBM chip"),
    Parameter("context_tokens", 8192, "the context of each decoded sequence and the prompt whose prefill is bounded",
              low=1, high=1048576, unit="tokens"),
    Parameter("weight_precision", "fp4", "the precision of the weights", names="precision"),
    Parameter("kv_precision", "fp8", "the precision of the KV cache", names="precision"),
    Parameter("focus_model", "gpt-oss-120b", "the model whose phases are placed on the roofline", names="model"),
    Parameter("focus_chip", "jalapeno", "the chip whose phases are placed on the roofline", names="HBM chip"),
    Parameter("lpu", "groq-3-lpu", "the SRAM chip of the last section", names="chip"),
    Parameter("lpu_weight_bits", 8, "bits per weight held in the LPU's SRAM", low=1, high=32, unit="bits"),
    Parameter("lpu_concurrency", 64, "sequences whose KV cache the SRAM also holds", low=1, high=100000,
              unit="sequences"),)


#: Tokens the prefill bound's evaluation decodes after its prompt (:func:`jalapeno.bounds.prefill_time_s`):
#: the prompt and they must fit in the focus model's context window.
PREFILL_BOUND_OUTPUT_TOKENS = 2


def check(*, models: list[str], focus_model: str, context_tokens: int, **_) -> None:
    """Refuse, before anything runs, a ``context_tokens`` inside its declared range that a model's context
    window cannot hold: each of ``models`` decodes sequences of ``context_tokens`` (at most its window), and
    ``focus_model``'s prefill bound takes a prompt of ``context_tokens`` followed by
    :data:`PREFILL_BOUND_OUTPUT_TOKENS` tokens. ValueError naming the parameter, the model, its window and
    the largest value allowed; UnknownNameError for an unknown model."""
    limits = {m: specs.model(m).max_position_embeddings for m in models}
    focus = specs.model(focus_model).max_position_embeddings
    if focus:
        limits[focus_model] = min(limits.get(focus_model) or focus, focus - PREFILL_BOUND_OUTPUT_TOKENS)
    limits = {m: w for m, w in limits.items() if w}
    if limits and context_tokens > min(limits.values()):
        name, most = min(limits.items(), key=lambda kv: kv[1])
        why = (f"the prefill bound's prompt and the {PREFILL_BOUND_OUTPUT_TOKENS} tokens it decodes must fit in "
               f"{name}'s context window of {specs.model(name).max_position_embeddings:,} tokens"
               if name == focus_model and most < specs.model(name).max_position_embeddings
               else f"{name}'s context window is {most:,} tokens")
        raise ValueError(f"context_tokens {context_tokens:,} is too long: {why}; at most {most:,} with these models")


def sram_table(models: list[specs.ModelSpec], chip: specs.ChipSpec, *, weight_bits: int, kv_precision: str,
               concurrency: int, context_tokens: int) -> pl.DataFrame:
    """What holding each model in on-chip SRAM takes: its weights at ``weight_bits`` plus the KV cache of
    ``concurrency`` sequences of ``context_tokens`` at ``kv_precision``, over ``chip``'s SRAM per chip
    (:func:`jalapeno.bounds.sram_chips`), in racks of ``groq-lpx-chips-per-rack`` chips (a claim).

    Columns: ``model``, ``weight_GB`` and ``kv_GB`` (1e9 bytes), ``lpus`` (chips), ``racks`` (fractional).
    Raises ValueError for a chip without SRAM."""
    if not chip.sram_bytes:
        raise ValueError(f"chip {chip.chip!r} has no published SRAM capacity")
    per_rack = int(claim_value("groq-lpx-chips-per-rack"))
    rows = []
    for m in models:
        kv_bytes = concurrency * m.kv_bytes_per_sequence(context_tokens, kv_precision)
        n = bounds.sram_chips(m, chip, weight_bits=weight_bits, kv_bytes=kv_bytes)
        rows.append({"model": m.model, "weight_GB": m.total_params() * weight_bits / 8 / 1e9, "kv_GB": kv_bytes / 1e9,
                     "lpus": n, "racks": n / per_rack})
    return pl.DataFrame(rows)


def worked_step(config: dict) -> dict[str, serving.Evaluation]:
    """One decode step of :data:`jalapeno.subject.WORKED_MODEL` in ``config`` (one of
    :func:`jalapeno.subject.worked_configurations`), evaluated twice by :func:`jalapeno.subject.worked_evaluation`:
    ``ideal`` (the roofline: :data:`jalapeno.bounds.SPEED_OF_LIGHT` constants, free collectives) and
    ``fitted`` (the configuration's calibrated or fitted constants: the serving model's prediction, whose
    step is ``kv + max(weights, compute) + collectives + overhead``)."""
    return {"ideal": subject.worked_evaluation(config, **{k: v for k, v in bounds.SPEED_OF_LIGHT.items() if k != "stack"}),
            "fitted": subject.worked_evaluation(config)}


def _worked_example(ch: Chapter) -> None:
    """The worked decode step (keys ``we_<j|g>_*``): inputs, the roofline at peak, the constants, the
    collectives and overhead, the total, for Jalapeño (``j``) and GB200 (``g``)."""
    m = specs.model(subject.WORKED_MODEL)
    ch.quote("we_model", m.display_name)
    ch.quote("we_layers", m.num_hidden_layers)
    ch.quote("we_moe_layers", m.num_moe_layers)
    ch.quote("we_experts", m.n_routed_experts)
    ch.quote("we_topk", m.num_experts_per_tok)
    ch.quote("we_hidden", m.hidden_size, "{:,}")
    experts, rest, kv = serving.recipe(m, pareto.DEFAULT_PRECISION[subject.WORKED_MODEL])
    ch.quote("we_recipe", f"{experts.upper()} experts, {rest.upper()} for everything else, a {kv.upper()} KV cache")
    ch.quote("we_ctx", mean_request_length(subject.WORKED_ISL) + mean_request_length(subject.WORKED_OSL) / 2, "{:,.0f}")
    for key, config in subject.worked_configurations("fastest").items():
        k = key[0]
        chip, eff, kw = config["chip"], config["eff"], config["kw"]
        ev = worked_step(config)
        ideal, fitted = ev["ideal"], ev["fitted"]
        bw = chip.hbm_bandwidth_bytes_per_s
        flops_peak = plain(ideal.flops) / plain(ideal.compute_s)  # the FLOP/s the evaluator used (the experts' precision)
        ch.quote(f"we_{k}_chip", chip.display_name)
        ch.quote(f"we_{k}_chips", int(kw["n_chips"]))
        ch.quote(f"we_{k}_ep", "expert parallel" if kw["ep"] else "tensor parallel, experts included")
        ch.quote(f"we_{k}_bw_tb", bw / 1e12, "{:.1f}")
        ch.quote(f"we_{k}_pflops", flops_peak / 1e15, "{:.1f}")
        # the roofline at peak (ideal constants)
        ch.quote(f"we_{k}_weight_mb", plain(ideal.weight_bytes_read) / 1e6, "{:,.1f}")
        ch.quote(f"we_{k}_weights_us", plain(ideal.weights_s) * 1e6, "{:.2f}")
        ch.quote(f"we_{k}_kv_mb", plain(ideal.kv_bytes_read) / 1e6, "{:,.2f}")
        ch.quote(f"we_{k}_kv_us", plain(ideal.kv_s) * 1e6, "{:.2f}")
        ch.quote(f"we_{k}_gflop", plain(ideal.flops) / 1e9, "{:.2f}")
        ch.quote(f"we_{k}_compute_us", plain(ideal.compute_s) * 1e6, "{:.3f}")
        ch.quote(f"we_{k}_roofline_us", plain(ideal.roofline_s) * 1e6, "{:.2f}")
        ch.quote(f"we_{k}_roofline_tok_s", 1 / plain(ideal.roofline_s), "{:,.0f}")
        # the constants and what they add
        ch.quote(f"we_{k}_constants", config["constants"])
        ch.quote(f"we_{k}_stack", kw["stack"])
        ch.quote(f"we_{k}_eta_mem", eff.eta_mem, "{:.2f}")
        ch.quote(f"we_{k}_eta_compute", eff.eta_compute, "{:.3f}")
        ch.quote(f"we_{k}_tau_us", eff.tau(kw["stack"], chip.generation) * 1e6, "{:.1f}")
        ch.quote(f"we_{k}_beta_us", eff.beta_s * 1e6, "{:.2f}")
        ch.quote(f"we_{k}_alpha_us", eff.alpha_s * 1e6, "{:.1f}")
        ch.quote(f"we_{k}_fit_roofline_us", plain(fitted.roofline_s) * 1e6, "{:.2f}")
        ch.quote(f"we_{k}_fit_compute_us", plain(fitted.compute_s) * 1e6, "{:.2f}")
        ch.quote(f"we_{k}_allreduce_us", plain(fitted.allreduce_s) * 1e6, "{:.1f}")
        ch.quote(f"we_{k}_all_to_all_us", plain(fitted.all_to_all_s) * 1e6, "{:.1f}")
        ch.quote(f"we_{k}_overhead_us", plain(fitted.overhead_s) * 1e6, "{:,.1f}")
        ch.quote(f"we_{k}_total_ms", plain(fitted.decode_step_s) * 1e3, "{:.2f}",
                 **({"quantity": "gb200-gptoss-min-tpot-ms", "variant": "modeled"} if k == "g" else {}))
        ch.quote(f"we_{k}_total_tok_s", 1 / plain(fitted.tpot_s), "{:,.0f}",
                 **({"quantity": "jalapeno-gptoss-single-user-tok-s", "variant": "modeled"} if k == "j" else {}))
        ch.quote(f"we_{k}_overhead_pct", 100 * plain(fitted.overhead_s) / plain(fitted.decode_step_s), "{:.0f}")
        ch.quote(f"we_{k}_roofline_pct", 100 * plain(fitted.roofline_s) / plain(fitted.decode_step_s), "{:.0f}")
        ch.quote(f"we_{k}_target_ms", config["target_ms"], "{:.2f}",
                 **({"quantity": "gb200-gptoss-min-tpot-ms", "variant": "best GB200 run"} if k == "g" else {}))


def compute(*, models: list[str], chips: list[str], context_tokens: int, weight_precision: str, kv_precision: str,
            focus_model: str, focus_chip: str, lpu: str, lpu_weight_bits: int, lpu_concurrency: int) -> Chapter:
    """The chapter's numbers, tables and figures.

    Parameters: those of :data:`PARAMETERS` (type, default, range and unit of each there);
    ``focus_model`` on ``focus_chip`` is also the pair whose prefill is bounded.

    Returns a :class:`~jalapeno.chapters.Chapter` with tables ``ridges``, ``bounds``, ``fraction`` and
    ``sram``, and figures ``roofline``, ``batch_sweep`` and ``fraction``. Raises UnknownNameError for an
    unknown model, chip or precision, ValueError for an ``lpu`` without SRAM."""
    ch = Chapter()
    M = [specs.model(m) for m in models]
    C = [specs.chip(c) for c in chips]
    focus_m, focus_c = specs.model(focus_model), specs.chip(focus_chip)

    # Decode is memory-bound: 2/b FLOPs per byte
    ridges = bounds.ridge_table(C)
    for p in ("fp4", "fp8", "bf16"):
        ch.quote(f"ai_{p}", 2 / specs.bytes_per_value(p), "{:.0f}")
    ch.quote("ridge_min", ridges["ridge_flop_per_byte"].min(), "{:,.0f}")
    ch.quote("ridge_max", ridges["ridge_flop_per_byte"].max(), "{:,.0f}")
    ch.add_table("ridges", ridges.select(
        "chip", "precision", (pl.col("peak_flops_per_s") / 1e15).alias("peak PFLOP/s"),
        (pl.col("hbm_bandwidth_bytes_per_s") / 1e12).alias("HBM TB/s"),
        "ridge_flop_per_byte", "decode_intensity_flop_per_byte"),
        "Ridge point of each chip at each precision it has: peak FLOP/s over HBM bandwidth, beside batch-1 decode's 2/b")

    # The focus model's phases on the rooflines
    phases = bounds.phase_points(focus_m, focus_c, prompt_tokens=context_tokens, context_tokens=context_tokens,
                                 weight_precision=weight_precision, kv_precision=kv_precision)
    ch.quote("prefill_intensity", phases["intensity_flop_per_byte"][-1], "{:,.0f}")
    ch.quote("decode1_intensity", phases["intensity_flop_per_byte"][0], "{:.1f}")
    ch.quote("focus_ridge", focus_c.ridge_point_flop_per_byte(weight_precision), "{:,.0f}")
    ch.quote("wprec", weight_precision.upper())
    ch.add_figure("roofline", roofline(bounds.roofline_curves(C, weight_precision), phases), "roofline")

    # The batch-1 bound, chip by chip
    ch.quote("focus_label", f"{focus_m.display_name} on {focus_c.display_name}")
    ch.quote("ctx", context_tokens, "{:,}")
    decode = bounds.decode_bounds(M, C, context_tokens=context_tokens, weight_precision=weight_precision,
                                  kv_precision=kv_precision)
    ch.add_table("bounds", decode.with_columns(
        (pl.col("weight_bytes") / 1e9).alias("weight_GB"), (pl.col("batch1_step_s") * 1e3).alias("batch1_step_ms")
    ).select("model", "chip", "weight_GB", "min_chips", "batch1_step_ms", "batch1_interactivity_tok_s_user",
             "critical_batch"),
        f"Batch-1 speed-of-light decode of each model on the fewest chips whose usable HBM holds its weights and "
        f"the sequence's KV cache, {context_tokens:,}-token context, every weight at {weight_precision.upper()}, KV "
        f"cache at {kv_precision.upper()}")
    ch.quote("usable_hbm_pct", 100 * serving.usable_hbm_fraction(), "{:.0f}")

    # Throughput against interactivity along the batch
    sweep = bounds.batch_sweep(focus_m, [c for c in C if c.hbm_bandwidth_bytes_per_s], SWEEP_BATCHES,
                               context_tokens=context_tokens, weight_precision=weight_precision,
                               kv_precision=kv_precision)
    ch.add_figure("batch_sweep", batch_sweep(sweep, focus_m.display_name), f"batch-sweep-{focus_model}")

    # How close the best single-user speeds come
    frac = comparison.published_vs_roofline(context_tokens=context_tokens, weight_precision=weight_precision,
                                            kv_precision=kv_precision)

    def row(m: str, c: str) -> dict:
        hit = frac.filter((pl.col("model") == m) & (pl.col("chip") == c))
        return hit.row(0, named=True) if hit.height else {"fraction_of_bound": float("nan"),
                                                          "tok_s_user": float("nan"), "min_chips": 0}

    ch.quote("j_gptoss_frac", 100 * row("gpt-oss-120b", "jalapeno")["fraction_of_bound"], "{:.0f}")
    ch.quote("g_gptoss_speed", row("gpt-oss-120b", "gb200")["tok_s_user"], "{:.1f}",
             quantity="gb200-gptoss-single-user-tok-s", variant="best GB200 run")
    ch.quote("g_gptoss_bound_chips", row("gpt-oss-120b", "gb200")["min_chips"])
    ch.quote("g_gptoss_frac", 100 * row("gpt-oss-120b", "gb200")["fraction_of_bound"], "{:.0f}")
    ch.quote("j_dsr1_frac", 100 * row("deepseek-r1", "jalapeno")["fraction_of_bound"], "{:.0f}")
    ch.quote("g_dsr1_speed", row("deepseek-r1", "gb200")["tok_s_user"], "{:.0f}")
    ch.quote("j_gptoss_speed", row("gpt-oss-120b", "jalapeno")["tok_s_user"], "{:,.0f}",
             quantity="jalapeno-gptoss-single-user-tok-s")
    ch.quote("j_dsr1_speed", row("deepseek-r1", "jalapeno")["tok_s_user"], "{:,.0f}")
    ch.quote("j_hbm_gb", specs.chip("jalapeno").hbm_capacity_bytes / 1e9, "{:.0f}")
    ch.quote("j_dsr1_chips", row("deepseek-r1", "jalapeno")["min_chips"], quantity="jalapeno-dsr1-single-user-chips",
             variant="speed of light")
    ch.quote("pub_dsr1_baseline", claim_value("dsr1-baseline-single-user"), "{:.0f}",
             quantity="dsr1-comparison-single-user-tok-s")
    # the seeds' DeepSeek-R1 comparison system (seed 001: about 169 tok/s/user) beside GB200's measured best
    seeds_row = row(*SEEDS_ROW)
    ch.quote("pub_dsr1_baseline_frac", 100 * claim_value("dsr1-baseline-single-user")
             / seeds_row.get("bound_tok_s_user", math.nan), "{:.0f}")
    ch.quote("g_dsr1_frac", 100 * seeds_row["fraction_of_bound"], "{:.0f}")
    ch.add_table("fraction", frac, "Best single-user speeds, Jalapeño's published and GB200's measured (each at its "
                 f"benchmark's own lengths), over their batch-1 speed-of-light bound at {context_tokens:,} tokens of context")
    ch.add_figure("fraction", fraction_of_bound(frac, seeds_speed=claim_value("dsr1-baseline-single-user")),
                  "fraction-of-roofline")

    # The prefill bound
    ch.quote("prefill_ms", 1e3 * bounds.prefill_time_s(focus_m, focus_c, context_tokens,
                                                       weight_precision=weight_precision), "{:.1f}")
    ch.quote("focus_chip_name", focus_c.display_name)

    # Groq's answer: weights in SRAM
    lpu_chip = specs.chip(lpu)
    lpu_rack = int(claim_value("groq-lpx-chips-per-rack"))
    lpu_models = list({m.model: m for m in M + [specs.model(LPU_CLAIM_MODEL)]}.values())
    sram = sram_table(lpu_models, lpu_chip, weight_bits=lpu_weight_bits, kv_precision=kv_precision,
                      concurrency=lpu_concurrency, context_tokens=context_tokens)
    ch.quote("lpu_name", lpu_chip.display_name)
    ch.quote("lpu_sram_mb", lpu_chip.sram_bytes / 1e6, "{:,.0f}")
    claimed = sram.filter(pl.col("model") == LPU_CLAIM_MODEL).row(0, named=True)
    bare = bounds.sram_chips(specs.model(LPU_CLAIM_MODEL), lpu_chip, weight_bits=lpu_weight_bits)
    ch.quote("lpu_bits", lpu_weight_bits)
    ch.quote("lpu_conc", lpu_concurrency)
    # a chip count is whole chips (the ceiling of the SRAM it takes); racks are those chips over a rack's,
    # a fraction (the whole racks to deploy are its ceiling)
    default_lpx = lpu_weight_bits == 8 and lpu_chip.chip == "groq-3-lpu"
    ch.quote("lpu_chips_dsr1", claimed["lpus"], "{:,}")
    ch.quote("lpu_racks_dsr1", claimed["racks"], "{:.2f}")
    ch.quote("lpu_chips_bare", bare, "{:,}", quantity="lpx-dsv3-lpus-weights-only" if default_lpx else None)
    ch.quote("lpu_racks_bare", bare / lpu_rack, "{:.2f}", quantity="lpx-dsv3-racks-weights-only" if default_lpx else None)
    ch.quote("lpu_whole_racks_bare", math.ceil(bare / lpu_rack))
    ch.quote("lpu_rack", lpu_rack)
    ch.quote("lpu_claim", claim_value("groq-lpx-chips-deepseek-v3"), "{:,.0f}")
    ch.add_table("sram", sram, f"{specs.short_name(lpu_chip)} chips and racks holding each model: {lpu_weight_bits}-bit "
                 f"weights plus the KV cache of {lpu_concurrency} sequences of {context_tokens:,} tokens")

    # Worked example: one decode step, step by step
    _worked_example(ch)
    return ch


# ---- figures ----

def roofline(curves: pl.DataFrame, points: pl.DataFrame) -> alt.LayerChart:
    """Roofline lines (:func:`jalapeno.bounds.roofline_curves`) with the phases of one model on one
    chip (:func:`jalapeno.bounds.phase_points`) as labelled points."""
    color = charts.chip_color(curves["chip"].to_list() + points["chip"].to_list(), legend=charts.LINE_LEGEND)
    # the axis title in two lines: in one it is cut at a phone's 390 px column
    x = alt.X("intensity_flop_per_byte:Q", title=["arithmetic intensity", "(FLOP per HBM byte)"], scale=alt.Scale(type="log"))
    y = alt.Y("attainable_flops_per_s:Q", title="attainable FLOP/s", scale=alt.Scale(type="log"), axis=alt.Axis(format="~s"))
    # A chip whose roofline is the same line as an earlier chip's (GB200 and MI355X) is drawn dashed on top
    # of it, so both colours show instead of the later one hiding the earlier.
    order = charts.chip_order(curves["chip"].to_list())
    shape = {c: tuple(curves.filter(pl.col("chip") == c)["attainable_flops_per_s"].to_list()) for c in order}
    hidden = [c for i, c in enumerate(order) if shape[c] in [shape[o] for o in order[:i]]]
    under = curves.filter(~pl.col("chip").is_in(hidden))
    over = curves.filter(pl.col("chip").is_in(hidden))
    lines = [alt.Chart(under).mark_line().encode(x=x, y=y, color=color, tooltip=["chip:N"])]
    if hidden:
        lines.append(alt.Chart(over).mark_line(strokeDash=[6, 6], strokeWidth=2.5).encode(
            x=x, y=y, color=color, tooltip=["chip:N"]))
    dots = alt.Chart(points).mark_point(filled=True, size=70, color="black").encode(
        x=x, y=y, shape=alt.Shape("phase:N", title=f"{points['model'][0]} on {points['chip'][0]}"),
        tooltip=["phase:N", alt.Tooltip("intensity_flop_per_byte:Q", format=",.1f"),
                 alt.Tooltip("attainable_flops_per_s:Q", format=".3s")])
    return alt.layer(*lines, dots).properties(title="Roofline: decode sits far left of every ridge point, prefill to the right")


def batch_sweep(sweep: pl.DataFrame, model: str) -> alt.Chart:
    """Speed-of-light output throughput per chip against interactivity over the decode batch
    (:func:`jalapeno.bounds.batch_sweep`), one line per chip."""
    return alt.Chart(sweep).mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        x=alt.X("interactivity_tok_s_user:Q", title="interactivity bound (tok/s/user)", scale=alt.Scale(type="log")),
        y=alt.Y("output_tok_s_chip:Q", title="output throughput bound per chip (tok/s)", scale=alt.Scale(type="log")),
        color=charts.chip_color(sweep["chip"].to_list(), legend=charts.LINE_LEGEND),
        order="batch:Q",
        tooltip=["chip:N", "batch:Q", alt.Tooltip("step_s:Q", format=".3s"), "memory_bound:N"],
    ).properties(title=f"{model}: speed-of-light decode as the batch grows (one chip each)")


#: The row of :func:`fraction_of_bound` the seeds' comparison-system speed is marked on (model, chip).
SEEDS_ROW = ("deepseek-r1", "gb200")

#: The legend title of that mark: the seeds' figure, not a measurement.
SEEDS_LEGEND = "seeds' comparison system"


def fraction_of_bound(df: pl.DataFrame, seeds_speed: float | None = None) -> alt.Chart | alt.LayerChart:
    """Best single-user speed as a fraction of the batch-1 roofline bound
    (:func:`jalapeno.comparison.published_vs_roofline`). With ``seeds_speed`` (tok/s/user: the seeds'
    DeepSeek-R1 comparison system, claim ``dsr1-baseline-single-user``) a black diamond on the
    :data:`SEEDS_ROW` row marks that speed over the same bound (columns ``seeds_tok_s_user`` and
    ``seeds_fraction`` of the figure's one dataset, empty on the other rows), next to the measured bar;
    no diamond when that row is not drawn."""
    label = "datum.model + ' on ' + datum.chip"
    at = (pl.col("model") == SEEDS_ROW[0]) & (pl.col("chip") == SEEDS_ROW[1])
    marked = seeds_speed is not None and df.filter(at).height > 0
    if marked:
        df = df.with_columns(seeds_tok_s_user=pl.when(at).then(pl.lit(float(seeds_speed))).otherwise(None),
                             seeds_fraction=pl.when(at).then(seeds_speed / pl.col("bound_tok_s_user")).otherwise(None))
    x_title = ["single-user speed /", "speed-of-light bound"]  # two lines: one is wider than a phone's plot
    bars = alt.Chart(df).mark_bar().encode(
        y=alt.Y("label:N", title=None, sort=None),
        x=alt.X("fraction_of_bound:Q", title=x_title, axis=alt.Axis(format="%")),
        color=charts.chip_color(df["chip"].to_list()),
        tooltip=["model:N", "chip:N", "source:N", alt.Tooltip("tok_s_user:Q", format=",.0f"),
                 alt.Tooltip("bound_tok_s_user:Q", format=",.0f"), alt.Tooltip("fraction_of_bound:Q", format=".0%")],
    ).transform_calculate(label=label)
    title = "How close each best single-user speed comes to its roofline"
    if not marked:
        return bars.properties(title=title)
    name = f"{display.formatted(seeds_speed, '{:,.0f}')} tok/s/user"  # under the legend title SEEDS_LEGEND
    seeds = alt.Chart(df).transform_calculate(label=label, seeds=json.dumps(name)).transform_filter(
        "isValid(datum.seeds_fraction)").mark_point(filled=True, size=110, color="black").encode(
        y=alt.Y("label:N", title=None, sort=None), x=alt.X("seeds_fraction:Q", title=x_title),
        shape=alt.Shape("seeds:N", title=SEEDS_LEGEND, scale=alt.Scale(domain=[name], range=["diamond"])),
        tooltip=[alt.Tooltip("seeds:N", title=SEEDS_LEGEND),
                 alt.Tooltip("seeds_tok_s_user:Q", format=",.0f", title="seeds' single-user speed (tok/s/user)"),
                 alt.Tooltip("seeds_fraction:Q", format=".0%", title="over the same bound")])
    return alt.layer(bars, seeds).properties(title=title)
