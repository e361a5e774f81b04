"""Capacity plans: for a chip, a model, a precision and a context, what each tensor-parallel slice holds and
serves once its memory is full (:func:`capacity_plan`).

The question an operator asks first: the smallest slice (chips per model replica) that holds the weights,
the largest batch each slice holds once the weights are in, the decode step at that batch, and the
throughput per chip and request rate that follow. The smallest slice is often not the most efficient one:
a larger slice spreads the weights thinner and frees memory for KV cache, until the KV cache itself stops
shrinking (GQA's KV heads are fewer than the ranks, or MLA's one latent is replicated on every rank).

Every rule is the serving model's (:mod:`jalapeno.serving`), so that a plan agrees with
:func:`jalapeno.serving.capacity` and :func:`jalapeno.serving.evaluate`:

- weights per chip: :attr:`jalapeno.serving.WeightBytes.held` of a slice of ``t`` chips (non-expert
  weights over the ``t`` tensor-parallel ranks, routed experts spread over the ``t`` chips), in exact
  rational arithmetic and rounded up to whole bytes (the largest shard);
- KV per sequence per chip: ``KV(S) / s`` with ``S`` = context + decode tokens (the sequence at its last
  step, the most a server must hold for it), ``s = min(t, KV heads)`` for GQA (the heads split over the
  ranks, replicated beyond the head count) and ``s = 1`` for MLA (the latent, one per token, replicated on
  every rank; the stacks without DP-attention); :meth:`jalapeno.specs.ModelSpec.kv_bytes_per_sequence`;
- usable memory per chip: ``floor(HBM x u)`` with ``u`` the serving model's usable share
  (:func:`jalapeno.serving.usable_hbm_fraction`, ``data/model_constants.csv``: 0.92, a little above
  vLLM's default ``gpu_memory_utilization`` of 0.90; source in that file);
- largest batch: ``B = floor((usable - weights) / KV per sequence)`` (whole bytes, an exact integer);
- decode step at ``B``: the serving model's evaluator (:func:`jalapeno.serving.evaluate`) at the speed of
  light (:data:`jalapeno.serving.SPEED_OF_LIGHT`: peak HBM bandwidth and FLOP/s, collectives free, no
  overhead), every sequence at context + decode tokens: ``T = B KV / BW + max(W(B) / BW, B F / C)``
  (jax-ml/scaling-book ``inference.md``), ``W(B)`` the weights a step reads (the experts a batch of ``B``
  touches, Epoch AI's ``E (1 - (1 - k/E)^B)``). At peak, not at a calibrated ``eta_mem``: the plan is
  physics of the chip alone (the calibration is fitted per stack and sits above this layer), so its
  throughput is an upper bound; a calibrated ``eta_mem`` divides it by ``eta_mem`` where memory is the limit;
- throughput per chip ``B / T / t`` (output tokens per second per chip of decode) and requests per second
  per chip ``B / T / t / decode tokens`` (each request emits ``decode_tokens``; prefill's time not counted,
  so both are bounds).

Before a plan, the count every chapter quotes for "the chips that hold it" (:func:`fewest_chips`): the
fewest chips whose usable memory in a tier (:func:`tier_usable_bytes`: HBM at the usable share ``u``,
on-chip SRAM at :data:`jalapeno.serving.USABLE_SRAM_FRACTION`, a system's host memory per chip at ``u``)
holds the weights and the KV cache of ``c`` sequences spread evenly over the chips: ``t`` the smallest
whole number with ``ceil(W / t) + ceil(c KV(S) / t) <= usable``. Pipeline stages split the layers and a
stage's chips split the tensors and the sequences (the serving model's ``pp`` and ``kv_sharding=
"sequences"``; the LPU arithmetic of :mod:`jalapeno.systems`), so the bytes pool; it is the least a
machine needs to hold them, not what a tensor-parallel slice serves (the plan's rows say that).

Units: SI (bytes, bytes/s, s); tokens and sequences are counts.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import polars as pl

from . import serving, specs
from .errors import UnknownNameError
from .specs import ChipSpec, ModelSpec

#: The memory tiers :func:`fewest_chips` may fill: on-chip SRAM only, HBM, HBM and host memory.
TIERS = ("sram", "hbm", "hbm+host")


def _check_count(name: str, value, minimum: int, what: str) -> None:
    """ValueError unless ``value`` is an integer (not a bool) of at least ``minimum`` (0 or 1), naming it as
    ``"<name> must be a positive|non-negative <what>, got <value>"``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be a {'positive' if minimum else 'non-negative'} {what}, got {value!r}")


def _with_kv(prec: tuple[str, str, str], kv_precision: str | None) -> tuple[str, str, str]:
    """``prec`` with its KV cache at ``kv_precision`` when given (UnknownNameError for an unknown one)."""
    if kv_precision is None:
        return prec
    specs.bytes_per_value(kv_precision)
    return prec[0], prec[1], kv_precision


def _share(size_bytes: float, share: float) -> int:
    """``floor(size x share)`` in exact rational arithmetic (whole bytes)."""
    return math.floor(Fraction(str(size_bytes)) * Fraction(str(share)))


def tier_usable_bytes(chip: ChipSpec, tier: str = "hbm", *, host_memory_bytes_per_chip: float | None = None) -> int | None:
    """Whole bytes weights and KV cache may fill on one chip in ``tier`` (:data:`TIERS`): ``sram``
    ``floor(SRAM x s)`` (``s`` = :data:`jalapeno.serving.USABLE_SRAM_FRACTION`), ``hbm`` ``floor(HBM x u)``
    (``u`` = :func:`jalapeno.serving.usable_hbm_fraction`; a GPU's or TPU's SRAM holds activations, not the
    weights), ``hbm+host`` that plus ``floor(host x u)`` (the host memory a system gives each chip, at the
    HBM's share: an assumption, no stack publishes one). ``None`` where the chip lacks the tier's memory
    (or, for ``hbm+host``, no host memory is given). UnknownNameError for an unknown tier; ValueError for
    a host memory that is not a positive number of bytes."""
    if tier not in TIERS:
        raise UnknownNameError("memory tier", tier, list(TIERS))
    if host_memory_bytes_per_chip is not None and not 0 < host_memory_bytes_per_chip < math.inf:
        raise ValueError(f"host_memory_bytes_per_chip must be a positive number of bytes, got {host_memory_bytes_per_chip!r}")
    if tier == "sram":
        return _share(chip.sram_bytes, serving.USABLE_SRAM_FRACTION) if chip.sram_bytes else None
    if not chip.hbm_capacity_bytes or (tier == "hbm+host" and not host_memory_bytes_per_chip):
        return None
    u = serving.usable_hbm_fraction()
    return _share(chip.hbm_capacity_bytes, u) + (_share(host_memory_bytes_per_chip, u) if tier == "hbm+host" else 0)


def usable_bytes_per_chip(chip: ChipSpec) -> int:
    """Whole bytes of ``chip``'s HBM weights and KV cache may fill (:func:`tier_usable_bytes` ``hbm``:
    ``floor(HBM x u)``). ValueError without an HBM size."""
    usable = tier_usable_bytes(chip, "hbm")
    if usable is None:
        raise ValueError(f"chip {chip.chip!r} has no HBM capacity figure (hbm_capacity_bytes)")
    return usable


def fewest_chips(chip: ChipSpec | str, model: ModelSpec | str, *, precision: str | tuple[str, str, str] = "fp8",
                 kv_precision: str | None = None, concurrency: int, context_tokens: int, tier: str = "hbm",
                 host_memory_bytes_per_chip: float | None = None) -> dict[str, int]:
    """The fewest chips that hold ``model``'s weights and the KV cache of ``concurrency`` sequences of
    ``context_tokens`` in ``tier``, the bytes spread evenly over them (the module docstring's rule):
    the smallest whole ``t`` with ``ceil(W / t) + ceil(c KV / t) <= usable``.

    ``precision``: the benchmark's name, weights by the serving model's recipe (:func:`jalapeno.serving.recipe`),
    or an explicit (experts, other weights, KV cache) triple of precisions; ``kv_precision``: the KV
    cache's (default the recipe's or the triple's). Returns ``weight_bytes`` (``W``, the whole
    model's), ``kv_bytes`` (``c KV``), ``usable_bytes_per_chip`` and ``chips``, exact integers.

    ``tier``: :data:`TIERS`; ``hbm+host`` reads ``host_memory_bytes_per_chip``, the host memory a system
    gives each chip (:attr:`jalapeno.systems.System.host_memory_bytes_per_chip`), which no other tier takes.

    Raises UnknownNameError for an unknown chip, model, precision or tier; ValueError for a negative or
    non-integer concurrency, a context that is not a positive integer or beyond the model's window, a
    precision that is neither a name nor a triple, a host memory that is not positive or given with another
    tier, or a chip without the tier's memory (naming the tier and the chip's tiers)."""
    chip = chip if isinstance(chip, ChipSpec) else specs.chip(chip)
    model = model if isinstance(model, ModelSpec) else specs.model(model)
    _check_count("concurrency", concurrency, 0, "integer number of sequences")
    _check_count("context_tokens", context_tokens, 1, "integer number of tokens")
    model.check_context(int(context_tokens), "context_tokens")
    if isinstance(precision, str):
        prec = serving.recipe(model, precision)
    else:
        prec = tuple(precision)
        if len(prec) != 3:
            raise ValueError(f"precision must be a benchmark name or an (experts, other weights, KV cache) triple, "
                             f"got {precision!r}")
        for p in prec:
            specs.bytes_per_value(p)  # UnknownNameError for an unknown one
    prec = _with_kv(prec, kv_precision)
    if host_memory_bytes_per_chip is not None and tier != "hbm+host":
        raise ValueError(f"host_memory_bytes_per_chip is read by tier 'hbm+host' only, got it with tier {tier!r}")
    usable = tier_usable_bytes(chip, tier, host_memory_bytes_per_chip=host_memory_bytes_per_chip)
    if not usable:
        has = [t for t in TIERS if tier_usable_bytes(chip, t, host_memory_bytes_per_chip=1.0)]
        if tier in has:  # hbm+host without a host memory
            raise ValueError("tier 'hbm+host' needs host_memory_bytes_per_chip, the host memory a system gives each "
                             "chip (jalapeno.systems.system('gb200-nvl72').host_memory_bytes_per_chip, say)")
        raise ValueError(f"chip {chip.chip!r} has no memory in tier {tier!r}; its tiers: {', '.join(has)}")
    weights = weight_bytes_per_chip(model, prec, 1)
    kv = int(concurrency) * math.ceil(Fraction(float(model.kv_bytes_per_sequence(int(context_tokens), prec[2]))))
    return {"weight_bytes": weights, "kv_bytes": kv, "usable_bytes_per_chip": usable,
            "chips": chips_to_hold(weights, kv, usable)}


def chips_to_hold(weight_bytes: int, kv_bytes: int, usable_bytes_per_chip: int) -> int:
    """The fewest chips ``t`` that hold ``weight_bytes`` and ``kv_bytes`` spread evenly over them, each
    chip at most ``usable_bytes_per_chip``: the smallest whole ``t >= 1`` with ``ceil(W / t) + ceil(KV / t)
    <= usable`` (whole bytes, exact integer arithmetic; the module docstring's rule). ValueError for a
    usable size that is not a positive whole number of bytes or a negative or fractional byte count."""
    for name, value, minimum in (("weight_bytes", weight_bytes, 0), ("kv_bytes", kv_bytes, 0),
                                 ("usable_bytes_per_chip", usable_bytes_per_chip, 1)):
        _check_count(name, value, minimum, "whole number of bytes")
    w, kv, usable = int(weight_bytes), int(kv_bytes), int(usable_bytes_per_chip)
    t = max(1, -(-(w + kv) // usable))
    while -(-w // t) + -(-kv // t) > usable:  # the two ceilings add at most one byte each
        t += 1
    return t


def weight_bytes_per_chip(model: ModelSpec, recipe: tuple[str, str, str], chips: int) -> int:
    """Whole bytes of weights one chip of a ``chips``-chip tensor-parallel slice holds (the largest shard):
    :attr:`jalapeno.serving.WeightBytes.held` at ``dp = pp = 1``, ``(all but routed experts) x b_other / t +
    routed experts x b_experts / t``: the serving model's sum on one chip (exact in binary floating point:
parameter counts below 2^53 times bytes per value of a few binary digits) over ``t``, rounded up.
    ``recipe``: (experts, other
    weights, KV) precisions (:func:`jalapeno.serving.recipe`)."""
    whole = Fraction(float(serving.weight_bytes(model, recipe).held))  # one chip's: exact (integers x 2^-k)
    return math.ceil(whole / chips)


def kv_bytes_per_sequence_per_chip(model: ModelSpec, chip: ChipSpec, recipe: tuple[str, str, str], held_tokens: int,
                                   chips: int) -> int:
    """Whole bytes of one sequence's KV cache of ``held_tokens`` on one chip of a ``chips``-chip slice, by the
    serving model's ``heads`` sharding (:func:`jalapeno.serving.capacity`, :data:`jalapeno.serving.KV_SHARDINGS`):
    :meth:`jalapeno.specs.ModelSpec.kv_bytes_per_sequence` over ``s`` ways, GQA ``s = min(chips, KV heads)``
    (heads replicated beyond the head count), MLA ``s = 1`` (the latent replicated on every rank); ``s`` is
    read back from :func:`jalapeno.serving.capacity` (an integer), the bytes exact and rounded up."""
    whole = model.kv_bytes_per_sequence(held_tokens, recipe[2])  # exact, as the weights' sum
    one = serving.capacity(model, chip, serving.Layout(n_chips=chips),
                           serving.Workload(concurrency=1, context_tokens=held_tokens, precision=recipe))
    split = round(whole / float(one.kv_bytes))
    return math.ceil(Fraction(whole) / split)


def slice_sizes(chip: ChipSpec, model: ModelSpec, recipe: tuple[str, str, str], held_tokens: int) -> list[int]:
    """The powers of two from the smallest slice whose usable memory holds the weights and one sequence's
    KV cache up to the chip's scale-up domain (:attr:`jalapeno.specs.ChipSpec.scale_up_domain_chips`; 1
    chip when not given). ValueError naming the largest slice and the bytes it is short when none holds."""
    domain = int(chip.scale_up_domain_chips or 1)
    usable = usable_bytes_per_chip(chip)
    powers = [1 << i for i in range(domain.bit_length()) if 1 << i <= domain]
    held = [t for t in powers if weight_bytes_per_chip(model, recipe, t)
            + kv_bytes_per_sequence_per_chip(model, chip, recipe, held_tokens, t) <= usable]
    if not held:
        t = powers[-1]
        need = (weight_bytes_per_chip(model, recipe, t)
                + kv_bytes_per_sequence_per_chip(model, chip, recipe, held_tokens, t))
        raise ValueError(f"{model.model} at {recipe} does not fit on {chip.chip}: its largest slice, {t} chips "
                         f"(the scale-up domain), needs {need:,} bytes per chip for the weights and one sequence "
                         f"of {held_tokens:,} tokens, {need - usable:,} bytes more than the {usable:,} usable")
    return [t for t in powers if t >= held[0]]


def capacity_plan(chip: ChipSpec | str, model: ModelSpec | str, *, precision: str = "fp8",
                  kv_precision: str | None = None, context_tokens: int, decode_tokens: int = 1024,
                  chips=None) -> pl.DataFrame:
    """The capacity plan of ``model`` on ``chip``: one row per tensor-parallel slice size (chips per model
    replica), the formulas and sources of the module docstring.

    ``precision``: the benchmark's name (``fp4``, ``fp8``, ``bf16``), weights by the serving model's recipe
    (:func:`jalapeno.serving.recipe`; gpt-oss at ``fp4`` is MXFP4 experts with BF16 elsewhere);
    ``kv_precision``: the KV cache's (default the recipe's); ``context_tokens``: the prompt each sequence
    brings; ``decode_tokens``: the tokens it generates (each sequence holds context + decode tokens of KV
    at its last step); ``chips``: the slice sizes to plan (default :func:`slice_sizes`: powers of two from
    the smallest that holds the weights and one sequence up to the chip's scale-up domain).

    Returns a polars DataFrame, one row per slice, columns: ``chip``, ``model``, ``chips`` (slice size),
    ``weight_bytes_per_chip``, ``kv_bytes_per_sequence_per_chip``, ``usable_bytes_per_chip``,
    ``largest_batch`` (sequences; all four exact integers), ``kv_bytes_per_chip`` (at that batch),
    ``memory_step_s`` (the weights the step reads and the batch's KV cache, read once at peak HBM
    bandwidth: the step when memory is the limit, s), ``step_s`` (the decode step at that batch, the
    evaluator's ``kv + max(weights, FLOPs)``: ``memory_step_s`` where memory is the limit, s), both null when
    the batch is 0, ``memory_bound`` (the weight read outlasts the FLOPs), ``throughput_tok_s_chip``
    (output tokens/s per chip), ``requests_per_s_chip``, ``most_efficient`` (the slice of the highest throughput per chip; the first
    such on a tie). A listed slice that cannot hold one sequence has batch 0 and throughput 0.

    Raises UnknownNameError for an unknown chip, model or precision (naming the valid ones); ValueError for
    a context or decode length that is not a positive integer or beyond the model's window, a chip without
    HBM figures, an empty ``chips`` or a slice size that is not a positive integer, or a model no slice holds (naming the largest
    slice and the bytes short)."""
    chip = chip if isinstance(chip, ChipSpec) else specs.chip(chip)
    model = model if isinstance(model, ModelSpec) else specs.model(model)
    for name, value in (("context_tokens", context_tokens), ("decode_tokens", decode_tokens)):
        _check_count(name, value, 1, "integer number of tokens")
    held_tokens = int(context_tokens) + int(decode_tokens)
    model.check_context(held_tokens, "context_tokens + decode_tokens")
    prec = _with_kv(serving.recipe(model, precision), kv_precision)
    if not chip.hbm_bandwidth_bytes_per_s:
        raise ValueError(f"chip {chip.chip!r} has no HBM bandwidth figure (hbm_bandwidth_bytes_per_s)")
    if chips is None:
        sizes = slice_sizes(chip, model, prec, held_tokens)
    else:
        sizes = [int(t) for t in np.atleast_1d(chips)]
        if not sizes or any(t <= 0 or t != float(c) for t, c in zip(sizes, np.atleast_1d(chips))):
            raise ValueError(f"chips must be positive integers, got {chips!r}")
    usable = usable_bytes_per_chip(chip)
    rows = []
    for t in sizes:
        w = weight_bytes_per_chip(model, prec, t)
        kv = kv_bytes_per_sequence_per_chip(model, chip, prec, held_tokens, t)
        batch = max(0, (usable - w) // kv)
        row = {"chip": chip.chip, "model": model.model, "chips": t, "weight_bytes_per_chip": w,
               "kv_bytes_per_sequence_per_chip": kv, "usable_bytes_per_chip": usable, "largest_batch": batch,
               "kv_bytes_per_chip": batch * kv, "memory_step_s": None, "step_s": None, "memory_bound": None,
               "throughput_tok_s_chip": 0.0, "requests_per_s_chip": 0.0}
        if batch:
            r = serving.evaluate(model, chip, serving.Layout(n_chips=t),
                                 serving.Workload(concurrency=batch, context_tokens=held_tokens, precision=prec),
                                 **serving.SPEED_OF_LIGHT)
            step = float(r.roofline_s)
            row.update(memory_step_s=float(r.kv_s + r.weights_s), step_s=step, memory_bound=bool(r.memory_bound),
                       throughput_tok_s_chip=batch / step / t,
                       requests_per_s_chip=batch / step / t / decode_tokens)
        rows.append(row)
    if not any(r["largest_batch"] for r in rows):
        t = max(sizes)
        last = rows[sizes.index(t)]
        short = last["weight_bytes_per_chip"] + last["kv_bytes_per_sequence_per_chip"] - usable
        raise ValueError(f"{model.model} at {prec} does not fit on {chip.chip} in any slice listed: the largest, "
                         f"{t} chips, is {short:,} bytes per chip short of the weights and one sequence of "
                         f"{held_tokens:,} tokens ({usable:,} usable)")
    best = max(range(len(rows)), key=lambda i: (rows[i]["throughput_tok_s_chip"], -i))
    for i, r in enumerate(rows):
        r["most_efficient"] = i == best
    return pl.DataFrame(rows, schema_overrides={"memory_step_s": pl.Float64, "step_s": pl.Float64,
                                                "memory_bound": pl.Boolean,
                                                "weight_bytes_per_chip": pl.Int64, "largest_batch": pl.Int64,
                                                "kv_bytes_per_sequence_per_chip": pl.Int64,
                                                "usable_bytes_per_chip": pl.Int64, "kv_bytes_per_chip": pl.Int64})
