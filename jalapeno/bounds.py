"""Roofline bounds for prefill and decode (speed of light: no efficiency factors, no overheads).

The physics of the *Roofline* chapter (whose computation is :mod:`jalapeno.chapters.roofline`).

The roofline is the serving model (:func:`jalapeno.serving.evaluate`) with ideal constants and free
collectives (:data:`SPEED_OF_LIGHT`); this module computes no step time of its own. Decode step of ``B``
sequences on ``N`` chips working as one tensor-parallel group (jax-ml/scaling-book, ``inference.md``:
attention reads the KV cache, the MLP is the larger of its weight-read and its FLOP time)::

    T_step = B x KV_seq / (s BW)  +  max( W(B) / (N BW),  B x F_token / (N C) )

with the KV cache split ``s = min(N, KV heads)`` ways for GQA and replicated (``s = 1``) for MLA, as
the serving model holds it. Weight bytes come from the evaluator's one sum by role
(:func:`jalapeno.serving.weight_bytes`, :func:`jalapeno.serving.expert_bytes_read`).

where ``W(B)`` counts the dense weights plus, for an MoE model, the experts a batch of ``B`` tokens
touches: on average ``E (1 - (1 - k/E)^B)`` distinct experts per layer (Epoch AI, inference-economics).
Arithmetic intensity is FLOPs over bytes; the ridge point is ``C / BW``. At batch 1 a weight-streaming
GEMV has intensity ``2 / b`` FLOP/byte for ``b`` bytes per weight.

Units: bytes, bytes/s, FLOP/s, seconds. Arrays broadcast (batch x context grids in one call).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from . import capacity_plans, serving
from .serving import SPEED_OF_LIGHT, expected_distinct_experts  # noqa: F401  (part of this module's interface)
from .specs import ChipSpec, ModelSpec, bytes_per_value


def has_precision(chip: ChipSpec, precision: str) -> bool:
    """Whether ``chip`` has published FLOP/s at ``precision`` or a wider one."""
    try:
        chip.peak_flops_per_s(precision)
    except ValueError:
        return False
    return True


def decode_weight_bytes(model: ModelSpec, batch, precision: str = "bf16"):
    """Weight bytes one decode step reads for ``batch`` sequences on one chip (array-friendly): every
    non-expert weight and the unembedding, plus the routed experts the batch touches (shared experts
    always), every weight at ``precision``: :func:`jalapeno.serving.weight_bytes` and
    :func:`jalapeno.serving.expert_bytes_read`, the evaluator's own sums."""
    weights = serving.weight_bytes(model, (precision, precision, precision))
    return weights.non_expert + serving.expert_bytes_read(model, weights, np.asarray(batch, dtype=float))


def decode_step(model: ModelSpec, chip: ChipSpec, batch, context_tokens, *, n_chips: int = 1,
                weight_precision: str = "bf16", kv_precision: str = "bf16") -> serving.Evaluation:
    """Speed-of-light decode step for ``batch`` sequences at ``context_tokens`` on ``n_chips`` chips working
    as one tensor-parallel group: :func:`jalapeno.serving.evaluate` with :data:`SPEED_OF_LIGHT` constants
    (every weight at ``weight_precision``, the KV cache at ``kv_precision``; batch and context broadcast).

    Returns the :class:`~jalapeno.serving.Evaluation`: ``kv_s``, ``weights_s``, ``compute_s``,
    ``decode_step_s``, ``decode_tok_s_chip``, ``memory_bound``, ``intensity_flop_per_byte`` (per chip);
    its ``tpot_s`` adds the prefills a chunked-prefill server interleaves, which the roofline leaves out.
    Raises ValueError for a non-positive batch or chip count."""
    batch = np.asarray(batch, dtype=float)
    if np.any(batch <= 0) or n_chips <= 0:
        raise ValueError(f"batch and n_chips must be positive, got batch={batch!r}, n_chips={n_chips!r}")
    workload = serving.Workload(concurrency=batch, context_tokens=context_tokens,
                                precision=(weight_precision, weight_precision, kv_precision))
    return serving.evaluate(model, chip, serving.Layout(n_chips=n_chips), workload, **SPEED_OF_LIGHT)


def critical_batch(model: ModelSpec, chip: ChipSpec, *, weight_precision: str = "bf16",
                   compute_precision: str | None = None, max_batch: int = 1 << 20) -> int:
    """Smallest decode batch at which the matrix multiplies become compute-bound (MLP FLOP time >= weight
    read time), ignoring attention. For a dense model about ``(C / BW) x b / 2``; an MoE model needs more,
    since each expert sees only ``B k / E`` of the tokens. Returns ``max_batch`` if never reached."""
    c = chip.peak_flops_per_s(compute_precision or weight_precision)
    bw = chip.hbm_bandwidth_bytes_per_s
    b = np.unique(np.round(np.geomspace(1, max_batch, 4000)))
    compute = 2 * model.active_params() * b / c
    weights = decode_weight_bytes(model, b, weight_precision) / bw
    hit = np.nonzero(compute >= weights)[0]
    if not hit.size:
        return max_batch
    lo = int(b[hit[0] - 1]) if hit[0] else 1
    for cand in range(lo, int(b[hit[0]]) + 1):  # refine to the exact integer
        if 2 * model.active_params() * cand / c >= float(decode_weight_bytes(model, cand, weight_precision)) / bw:
            return cand
    return int(b[hit[0]])


def prefill_time_s(model: ModelSpec, chip: ChipSpec, prompt_tokens: int, *, n_chips: int = 1,
                   weight_precision: str = "bf16") -> float:
    """Speed-of-light prefill of one prompt of exactly ``prompt_tokens`` on ``n_chips`` chips:
    :func:`jalapeno.serving.evaluate`'s ``prefill_s`` with :data:`SPEED_OF_LIGHT` constants,
    ``max(FLOPs / (N C), s x all weight bytes / (N BW))`` with ``s = min(1, prompt / chunk)`` (s)."""
    workload = serving.Workload(concurrency=1, isl=prompt_tokens, osl=2, request_lengths="exact",
                                precision=(weight_precision, weight_precision, weight_precision))
    r = serving.evaluate(model, chip, serving.Layout(n_chips=n_chips), workload, **SPEED_OF_LIGHT)
    return float(r.prefill_s)


# ---- tables for the roofline chapter (one row per chip, or per chip x model) ---------------------------

def ridge_table(chips: list[ChipSpec], precisions: tuple[str, ...] = ("fp4", "fp8", "bf16")) -> "pl.DataFrame":
    """Ridge point (FLOP per HBM byte) of each chip at each precision it has (no fallback), long format:
    ``chip``, ``precision``, ``peak_flops_per_s``, ``hbm_bandwidth_bytes_per_s``, ``ridge_flop_per_byte``,
    ``decode_intensity_flop_per_byte`` (2 / b at batch 1). Chips without a known HBM bandwidth are left out."""
    import polars as pl

    rows = []
    for c in chips:
        for p in precisions:
            flops = c.peak_dense_flops_per_s.get(p)
            if flops and c.hbm_bandwidth_bytes_per_s:
                rows.append({"chip": c.chip, "precision": p, "peak_flops_per_s": flops,
                             "hbm_bandwidth_bytes_per_s": c.hbm_bandwidth_bytes_per_s,
                             "ridge_flop_per_byte": flops / c.hbm_bandwidth_bytes_per_s,
                             "decode_intensity_flop_per_byte": 2.0 / bytes_per_value(p)})
    return pl.DataFrame(rows)


def decode_bounds(models: list[ModelSpec], chips: list[ChipSpec], *, context_tokens: int = 8192,
                  weight_precision: str = "fp4", kv_precision: str = "fp8") -> "pl.DataFrame":
    """For each model on each chip (with known HBM): the weight bytes (every weight at ``weight_precision``),
    the fewest chips whose usable HBM holds the weights and the one sequence's KV cache at ``context_tokens``
    (``min_chips``: :func:`jalapeno.capacity_plans.fewest_chips`, the HBM at the serving model's usable
    share), and on that many chips the speed-of-light batch-1 decode step (that sequence), its interactivity
    bound, and the critical batch of one chip. Chips without a known HBM size and bandwidth, or without
    FLOP/s at ``weight_precision`` or wider, are left out."""
    import polars as pl

    rows = []
    for m in models:
        weights = float(serving.weight_bytes(m, (weight_precision,) * 3).held)  # every weight, held on one chip
        for c in chips:
            if not (c.hbm_bandwidth_bytes_per_s and c.hbm_capacity_bytes and has_precision(c, weight_precision)):
                continue
            n = capacity_plans.fewest_chips(c, m, precision=(weight_precision, weight_precision, kv_precision),
                                            concurrency=1, context_tokens=context_tokens)["chips"]
            step = decode_step(m, c, 1, context_tokens, n_chips=n, weight_precision=weight_precision,
                               kv_precision=kv_precision)
            rows.append({"model": m.model, "chip": c.chip, "weight_bytes": weights, "min_chips": n,
                         "batch1_step_s": float(step.decode_step_s),
                         "batch1_interactivity_tok_s_user": 1.0 / float(step.decode_step_s),
                         "critical_batch": critical_batch(m, c, weight_precision=weight_precision)})
    return pl.DataFrame(rows)


def batch_sweep(model: ModelSpec, chips: list[ChipSpec], batches, *, context_tokens: int = 8192,
                n_chips: int = 1, weight_precision: str = "fp4", kv_precision: str = "fp8") -> "pl.DataFrame":
    """Speed-of-light decode of ``model`` over ``batches`` on each chip (``n_chips`` each): long format
    with ``chip``, ``batch``, ``step_s``, ``interactivity_tok_s_user``, ``output_tok_s_chip``,
    ``memory_bound``."""
    import polars as pl

    frames = []
    b = np.asarray(batches, dtype=float)
    for c in chips:
        r = decode_step(model, c, b, context_tokens, n_chips=n_chips, weight_precision=weight_precision,
                        kv_precision=kv_precision)
        frames.append(pl.DataFrame({"chip": [c.chip] * b.size, "batch": b, "step_s": r.decode_step_s,
                                    "interactivity_tok_s_user": 1.0 / r.decode_step_s,
                                    "output_tok_s_chip": r.decode_tok_s_chip, "memory_bound": r.memory_bound}))
    return pl.concat(frames)


def sram_chips(model: ModelSpec, chip: ChipSpec, *, weight_bits: int = 8, kv_bytes: float = 0.0) -> int:
    """Chips whose on-chip SRAM holds the model's weights at ``weight_bits`` per parameter plus ``kv_bytes``
    of KV cache, both spread evenly over the chips (the LPU arithmetic: 671 GB at 8 bits over 500 MB per
    chip is 1,343 chips): :func:`jalapeno.capacity_plans.chips_to_hold` of the bytes rounded up to whole
    bytes, on the SRAM tier's usable bytes (:func:`jalapeno.capacity_plans.tier_usable_bytes`). ValueError
    for a chip without SRAM."""
    usable = capacity_plans.tier_usable_bytes(chip, "sram")
    if not usable:
        raise ValueError(f"chip {chip.chip!r} has no published SRAM capacity")
    weights = math.ceil(Fraction(model.total_params()) * weight_bits / 8)
    return capacity_plans.chips_to_hold(weights, math.ceil(Fraction(float(kv_bytes))), usable)


def roofline_curves(chips: list[ChipSpec], precision: str = "fp4", intensities=None) -> "pl.DataFrame":
    """Attainable FLOP/s ``min(C, I x BW)`` of each chip over arithmetic intensities ``I`` (FLOP/byte;
    default 0.25 to 16,384 on a log grid): ``chip``, ``intensity_flop_per_byte``, ``attainable_flops_per_s``.
    Chips without HBM bandwidth are left out; ``precision`` falls back as :meth:`ChipSpec.peak_flops_per_s`."""
    import polars as pl

    grid = np.geomspace(0.25, 16384, 57) if intensities is None else np.asarray(intensities, dtype=float)
    frames = [pl.DataFrame({"chip": [c.chip] * grid.size, "intensity_flop_per_byte": grid,
                            "attainable_flops_per_s": np.minimum(c.peak_flops_per_s(precision),
                                                                 grid * c.hbm_bandwidth_bytes_per_s)})
              for c in chips if c.hbm_bandwidth_bytes_per_s and has_precision(c, precision)]
    return pl.concat(frames)


def phase_points(model: ModelSpec, chip: ChipSpec, *, batches=(1, 64, 1024), prompt_tokens: int = 8192,
                 context_tokens: int = 8192, weight_precision: str = "fp4", kv_precision: str = "fp8") -> "pl.DataFrame":
    """Where prefill and decode sit on one chip's roofline: arithmetic intensity (FLOP/byte) and the
    attainable FLOP/s bound, for decode at each batch (weights + KV read per step) and for the prefill
    of one prompt (all weights read once, FLOPs of the whole prompt)."""
    import polars as pl

    c = chip.peak_flops_per_s(weight_precision)
    rows = []
    for b in batches:
        r = decode_step(model, chip, b, context_tokens, weight_precision=weight_precision, kv_precision=kv_precision)
        rows.append({"phase": f"decode, batch {b}", "intensity_flop_per_byte": float(r.intensity_flop_per_byte)})
    flops = model.prefill_flops(prompt_tokens)
    bytes_ = float(decode_weight_bytes(model, prompt_tokens, weight_precision)) \
        + model.kv_bytes_per_sequence(prompt_tokens, kv_precision)
    rows.append({"phase": f"prefill, {prompt_tokens} tokens", "intensity_flop_per_byte": flops / bytes_})
    df = pl.DataFrame(rows)
    return df.with_columns(
        chip=pl.lit(chip.chip), model=pl.lit(model.model),
        attainable_flops_per_s=pl.min_horizontal(pl.lit(c), pl.col("intensity_flop_per_byte") * chip.hbm_bandwidth_bytes_per_s),
        memory_bound=pl.col("intensity_flop_per_byte") < c / chip.hbm_bandwidth_bytes_per_s,
    )
