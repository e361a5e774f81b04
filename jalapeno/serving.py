"""The serving model: one evaluator that turns (chip, model, layout, concurrency, workload, stack) into
decode step time, TPOT, TTFT, E2E and throughput per chip, for whole grids of configurations at once.

This is the book's one evaluator: every step time (the roofline's, the LPU's, the caveats' breakdowns)
is :func:`evaluate` under some description, and it returns its parts with their total
(:class:`Evaluation`), so a breakdown is the evaluation itself. The roofline is it with ideal constants
(:meth:`Efficiency.ideal`, :func:`free_fabric`); an LPU holds weights and KV in SRAM (``memory="sram"``,
``pp`` pipeline stages); collectives are timed by :mod:`jalapeno.network` on a topology (``fabric``).

A configuration is one *worker*: ``n_chips`` chips serving ``concurrency`` sequences together, in ``pp``
pipeline stages (default 1), a stage's attention split ``dp`` ways by data parallelism (DP-attention)
and ``n_chips / (pp dp)`` ways by tensor parallelism, the experts of an MoE model spread over a stage's
chips (expert parallelism when ``ep``, else tensor-parallel experts). Workers are independent, so
throughput per chip does not depend on how many run side by side. Optionally prefill runs on separate
chips (disaggregated serving).

Decode step of one worker (per chip, summed over the stages a token visits; SI units;
:func:`decode_step_s`)::

    T_decode = KV / (BW eta_m) + max( W(B) / (BW eta_m), F / (C eta_c) )      (roofline, scaling-book form)
             + TP all-reduce: 2 per layer x network.all_reduce_s(t chips, B_attn h a; alpha0 = alpha)
             + EP all-to-all: 2 per MoE layer x network.all_to_all_s(N chips, B k h (1 or 2) / N x (N-1)/N; alpha)
             + PP hand-offs: pp x network.pipeline_handoff_s(B_attn h a)  [pp > 1]
             + layers x f x (tau_stack + beta x B / dp)    (per-step overhead: the stack's, and per sequence)

On the default fabric (:func:`scale_up_fabric`: one switch, the chip's scale-up bandwidth, no per-hop
latency) an all-reduce is ``alpha + 2 (t-1)/t M / W`` and a dispatch or combine ``alpha + M / W``.

``W(B)``: non-expert weights over the tensor-parallel ways plus the routed experts a step of ``B``
tokens touches, ``E (1 - (1 - k/E)^B) / N`` expert copies per chip (Epoch AI's distinct-experts formula);
``KV``: the worker's cached context (GQA heads split over TP, an MLA latent replicated over TP); ``F``:
``B x`` FLOPs per token over ``N``. Message sizes and hop costs follow the modeling reference
(shared/notes/modeling-reference.md); ``f`` is 1 for a GQA layer and a fitted factor for an MLA layer
(DeepSeek-R1's and Kimi K2.5's layers launch more kernels than gpt-oss's). Prefill of a prompt is
compute-bound, with a floor of one read of every weight per prefill step of ``PREFILL_CHUNK_TOKENS``
tokens, which prompts shorter than that share (``s = min(1, ISL / chunk)``):
``T_prefill = max(F_prefill / (t C eta_p), s W / (t BW eta_m)) + s tau_stack f layers``.

Aggregated serving interleaves prefill with decode (chunked prefill): each decode step carries on average
the prefills of the *other* users of its attention replica that arrive meanwhile, ``(B / dp - 1) / OSL``
of them, so ``TPOT = T_decode + (B / dp - 1) / OSL x T_prefill`` (one user alone decodes undisturbed).
Disaggregated: ``TPOT = T_decode`` at the sequences actually decoding, and the prefill workers cap the
request rate at ``prefill workers / T_prefill``; the sequences decoding are the closed loop's fixed point
``a = min(B, capacity x T_decode(a) x (OSL - 1) / tokens per step)`` (Little's law on the decode stage,
:func:`closed_loop_fixed_point`). The benchmark is a closed loop of ``B`` users, so the
request rate is ``min(B / (T_prefill + T_step + TPOT (OSL - 1)), prefill capacity)`` (the asymptotic
bound of mean-value analysis, the first token after ``T_prefill + T_step`` plus a fixed request latency
``lambda`` outside the chips); ``E2E = B / rate``, ``TTFT = E2E - TPOT (OSL - 1)`` includes the wait in
the prefill queue, and throughput per chip counts input + output tokens over every chip
(``rate x (ISL + OSL) / chips``), the benchmark's way. Speculative
decoding (MTP) is an option, off by default: ``a`` accepted tokens per step at a draft cost
(:data:`MTP_DRAFT_COST`). Weights and KV must fit in :func:`usable_hbm_fraction` of HBM.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace

import numpy as np

from . import data as _data
from . import network, specs
from .errors import CostError, UnknownNameError
from .metrics import mean_request_length
from .specs import ChipSpec, ModelSpec, bytes_per_value

#: Most configurations (elements of the broadcast ``n_chips``, ``concurrency``, ``dp``, ``pp``) one
#: :func:`evaluate` takes: each holds about 330 bytes of intermediate arrays (measured), so 10^6 need
#: about 330 MB. The book's largest call takes 620.
MAX_CONFIGURATIONS = 1_000_000

#: Most configurations x distinct worker layouts (``n_chips``, ``dp``, ``pp``) of one :func:`evaluate`:
#: each distinct layout times its collectives once, in one pass over every configuration.
MAX_LAYOUT_PASSES = 100_000_000


def check_configurations(configurations: int, layouts: int = 1) -> None:
    """Refuse an evaluation of ``configurations`` configurations with ``layouts`` distinct worker layouts
    above :data:`MAX_CONFIGURATIONS` or :data:`MAX_LAYOUT_PASSES`: CostError with the numbers and the
    limit (checked before any array of that size is made)."""
    if configurations > MAX_CONFIGURATIONS:
        raise CostError(f"{configurations:,} configurations in one evaluation is above the limit of "
                        f"{MAX_CONFIGURATIONS:,} (about 330 bytes each); evaluate fewer at once")
    if configurations * layouts > MAX_LAYOUT_PASSES:
        raise CostError(f"{configurations:,} configurations x {layouts:,} distinct worker layouts = "
                        f"{configurations * layouts:,} is above the limit of {MAX_LAYOUT_PASSES:,}; evaluate fewer at once")

#: Tokens one prefill step processes together (chunked prefill's per-step budget; TensorRT-LLM's
#: ``max_num_tokens`` default): prompts shorter than this share one read of the weights and one step overhead.
PREFILL_CHUNK_TOKENS = 8192

#: Activation bytes on the wire: dispatch in FP8, combine and all-reduce in BF16 (DeepSeek ISCA 2025).
DISPATCH_BYTES, COMBINE_BYTES, ALLREDUCE_BYTES = 1.0, 2.0, 2.0

#: Weight and KV precisions of the checkpoints the benchmark served, by (model, benchmark precision):
#: (routed experts, everything else, KV cache). gpt-oss ships MXFP4 experts with BF16 attention
#: (openai/gpt-oss-120b model card); NVIDIA's DeepSeek-R1 FP4 checkpoint is NVFP4 experts with FP8
#: elsewhere (nvidia/DeepSeek-R1-0528-FP4 model card); DeepSeek's own checkpoint is FP8.
RECIPES = {
    ("gpt-oss-120b", "fp4"): ("mxfp4", "bf16", "bf16"),
    ("deepseek-r1", "fp4"): ("nvfp4", "fp8", "fp8"),
    ("deepseek-r1", "fp8"): ("fp8", "fp8", "fp8"),
}
_DEFAULT_RECIPE = {"fp4": ("nvfp4", "fp8", "fp8"), "fp8": ("fp8", "fp8", "fp8"), "bf16": ("bf16", "bf16", "bf16")}


def recipe(model: ModelSpec, precision: str) -> tuple[str, str, str]:
    """(expert weights, other weights, KV cache) precisions for ``model`` served at ``precision`` (one of
    ``fp4``, ``fp8``, ``bf16``: the benchmark's names); UnknownNameError for another precision."""
    if precision not in _DEFAULT_RECIPE:
        raise UnknownNameError("precision", precision, list(_DEFAULT_RECIPE))
    return RECIPES.get((model.model, precision), _DEFAULT_RECIPE[precision])


@dataclass(frozen=True)
class Efficiency:
    """Calibrated constants (fitted to the measured data, see :mod:`jalapeno.calibration`).

    ``eta_mem``: achieved fraction of HBM bandwidth; ``eta_compute``: of dense peak FLOP/s in decode;
    ``eta_prefill``: of dense peak FLOP/s in prefill;
    ``alpha_s``: fixed latency of one collective in a scale-up domain (s); ``beta_s``: per-layer, per-step
    overhead of each sequence an attention replica holds (s: attention kernels, sampling, scheduling);
    ``tau_s``: per-layer, per-step overhead of each serving stack (s), keyed by stack name;
    ``mla_layer_factor``: per-layer overhead of an MLA layer over a GQA layer's (ratio);
    ``request_latency_s``: fixed latency of each request outside the accelerators (front end, tokenisation,
    scheduling; s): it adds to TTFT and E2E and occupies no chip. Not identifiable from the TPOT and
    throughput the calibration fits, so 0 for measured stacks; fitted for Jalapeño to its published E2E."""

    eta_mem: float = 0.7
    eta_compute: float = 0.5
    eta_prefill: float = 0.5
    alpha_s: float = 8e-6
    beta_s: float = 0.3e-6
    tau_s: dict[str, float] = field(default_factory=lambda: {"default": 10e-6})
    request_latency_s: float = 0.0
    mla_layer_factor: float = 1.0

    def tau(self, stack: str) -> float:
        """The per-layer overhead of ``stack`` (s): its own, else ``default``'s, else the median of all."""
        if stack in self.tau_s:
            return self.tau_s[stack]
        return self.tau_s["default"] if "default" in self.tau_s else float(np.median(list(self.tau_s.values())))

    @classmethod
    def ideal(cls) -> "Efficiency":
        """Speed of light: every achieved fraction 1, every latency and overhead 0 (the roofline's constants)."""
        return cls(eta_mem=1.0, eta_compute=1.0, eta_prefill=1.0, alpha_s=0.0, beta_s=0.0, tau_s={"default": 0.0},
                   request_latency_s=0.0, mla_layer_factor=1.0)


def expected_distinct_experts(n_experts: int, k: int, tokens):
    """Expected number of distinct experts that ``tokens`` tokens touch with top-``k`` routing over
    ``n_experts`` experts, routing uniform and independent: ``E (1 - (1 - k/E)^T)`` (Epoch AI,
    inference-economics). Arrays broadcast."""
    t = np.asarray(tokens, dtype=float)
    return n_experts * (1.0 - (1.0 - k / n_experts) ** t)


#: Share of on-chip SRAM that weights and KV cache may fill: all of it, as in the LPU arithmetic of the
#: systems chapter (Groq's compiler places weights and activations statically; an assumption).
USABLE_SRAM_FRACTION = 1.0

#: Cost of one speculative-decoding draft step as a fraction of a decode step (MTP, off by default:
#: ``mtp_tokens_per_step = 1`` makes it irrelevant). An assumption, neither published nor fitted:
#: DeepSeek-V3's MTP module is one transformer block plus the shared output head (about 1/61 of the
#: layers' weights), taken as 15% of a step with its launches and the verification of the draft.
MTP_DRAFT_COST = 0.15

#: Memory tiers a model may be served from: the chip's fields for each, and the usable share.
MEMORY_TIERS = {"hbm": ("hbm_bandwidth_bytes_per_s", "hbm_capacity_bytes", lambda: usable_hbm_fraction()),
                "sram": ("sram_bandwidth_bytes_per_s", "sram_bytes", lambda: USABLE_SRAM_FRACTION)}

#: How the chips of a tensor-parallel group share the KV cache: ``heads`` (GQA heads split over TP, up to
#: the KV-head count, replicated beyond; an MLA latent, one per token, replicated on every chip: the
#: serving stacks without DP-attention) or ``sequences`` (each chip holds and reads whole sequences, the
#: ``ceil(B / tp)`` of the batch it is given: the LPU arithmetic of the systems chapter).
KV_SHARDINGS = ("heads", "sequences")

#: How request lengths relate to the nominal ISL/OSL: ``benchmark`` (InferenceX draws them from 0.9x to
#: 1x of nominal, :func:`jalapeno.metrics.mean_request_length`), ``exact`` (every request is as long as
#: the nominal lengths: the roofline's worked examples).
REQUEST_LENGTHS = ("benchmark", "exact")


def usable_hbm_fraction() -> float:
    """The share of a chip's HBM weights and KV cache may fill (``data/model_constants.csv``,
    ``usable_hbm_fraction``, with its basis)."""
    return _data.model_constant("usable_hbm_fraction")


def _arr(x) -> np.ndarray:
    return np.asarray(x, dtype=float)


def scale_up_fabric(chip: ChipSpec) -> Callable[[int], network.Topology]:
    """The default fabric of a worker on ``chip``: ``k`` chips on one switch (:func:`jalapeno.network.switched`)
    with the chip's scale-up bandwidth / 2 as injection bandwidth (one direction) and no per-hop latency:
    the calibrated :attr:`Efficiency.alpha_s` is the whole fixed latency of a collective on it. Raises
    ValueError, naming the chip, when ``k > 1`` chips of a chip without a scale-up bandwidth must talk."""
    w = (chip.scale_up_bandwidth_bytes_per_s or 0.0) / 2

    def fabric(k: int) -> network.Topology:
        if k > 1 and not w > 0:
            raise ValueError(f"chip {chip.chip!r} has no scale-up bandwidth, so {k} chips of it cannot be timed "
                             f"working together: give one with with_chip(chip, scale_up_bandwidth_bytes_per_s=...)")
        return _switched(k, w)
    return fabric


@functools.lru_cache(maxsize=1024)
def _switched(k: int, injection_bandwidth_bytes_per_s: float) -> network.Topology:
    """:func:`jalapeno.network.switched`, kept: a fit asks for the same few fabrics thousands of times."""
    return network.switched(k, injection_bandwidth_bytes_per_s=injection_bandwidth_bytes_per_s)


def free_fabric(k: int) -> network.Topology:
    """A fabric whose collectives take no time (infinite bandwidth, no latency): the roofline's, which
    counts memory and compute only."""
    return network.switched(k, injection_bandwidth_bytes_per_s=math.inf)


@dataclass(frozen=True)
class Evaluation:
    """What :func:`evaluate` returns: every array has the broadcast shape of its inputs; SI units; all
    per chip of a worker and per decode step (one token of every sequence decoding) unless named otherwise.

    The decode step is the sum of its parts (:func:`decode_step_s` is its one definition)::

        decode_step_s = kv_s + max(weights_s, compute_s) + collectives_s + overhead_s
        weights_s     = attention_weights_s + expert_weights_s + other_weights_s
        collectives_s = allreduce_s + all_to_all_s + handoff_s
        tpot_s        = (decode_step_s + draft_s + prefill_interference_s) / tokens_per_step

    Parts: ``weights_s`` (weight bytes read / bandwidth), split by role into ``attention_weights_s``,
    ``expert_weights_s`` (routed experts) and ``other_weights_s`` (dense MLP, router, shared experts,
    final norm, output head); ``kv_s`` (KV cache read); ``compute_s`` (FLOPs / FLOP/s); ``allreduce_s``
    (tensor parallel), ``all_to_all_s`` (expert parallel), ``handoff_s`` (pipeline stages), all from
    :mod:`jalapeno.network`; ``overhead_s`` (per-layer step overhead); ``draft_s`` (speculative draft);
    ``prefill_interference_s`` (aggregated serving: the prefills of the other users a step carries);
    ``prefill_s`` (one mean prompt); ``kv_transfer_s`` (disaggregated: prefill to decode worker).
    Results: ``tpot_s``, ``ttft_s``, ``e2e_s``, ``throughput_tok_s_chip`` (input + output tokens over every
    chip, prefill chips included), ``chips``; the layout ``n_chips``, ``concurrency``,
    ``active_sequences`` (decoding; below ``concurrency`` when disaggregated prefill holds the rest back),
    ``tokens_per_step``; the work ``weight_bytes_read``, ``kv_bytes_read``, ``flops``; memory
    ``weight_bytes_per_chip``, ``kv_bytes_per_chip`` and ``fits`` (within the usable share of the tier)."""

    weights_s: np.ndarray
    attention_weights_s: np.ndarray
    expert_weights_s: np.ndarray
    other_weights_s: np.ndarray
    kv_s: np.ndarray
    compute_s: np.ndarray
    allreduce_s: np.ndarray
    all_to_all_s: np.ndarray
    handoff_s: np.ndarray
    overhead_s: np.ndarray
    draft_s: np.ndarray
    prefill_interference_s: np.ndarray
    tokens_per_step: float
    prefill_s: np.ndarray
    kv_transfer_s: np.ndarray
    ttft_s: np.ndarray
    e2e_s: np.ndarray
    throughput_tok_s_chip: np.ndarray
    chips: np.ndarray
    n_chips: np.ndarray
    concurrency: np.ndarray
    active_sequences: np.ndarray
    weight_bytes_read: np.ndarray
    kv_bytes_read: np.ndarray
    flops: np.ndarray
    weight_bytes_per_chip: np.ndarray
    kv_bytes_per_chip: np.ndarray
    fits: np.ndarray

    @property
    def collectives_s(self) -> np.ndarray:
        """All-reduce + all-to-all + pipeline hand-offs (s)."""
        return self.allreduce_s + self.all_to_all_s + self.handoff_s

    @property
    def roofline_s(self) -> np.ndarray:
        """``kv_s + max(weights_s, compute_s)`` (s): the memory and compute part of the step."""
        return roofline_s(self.kv_s, self.weights_s, self.compute_s)

    @property
    def decode_step_s(self) -> np.ndarray:
        """The decode step (s): :func:`decode_step_s` of these parts."""
        return decode_step_s(self.kv_s, self.weights_s, self.compute_s, self.collectives_s, self.overhead_s)

    @property
    def tpot_s(self) -> np.ndarray:
        """Time per output token (s): ``(decode_step_s + draft_s + prefill_interference_s) / tokens_per_step``."""
        return (self.decode_step_s + self.draft_s + self.prefill_interference_s) / self.tokens_per_step

    @property
    def interactivity_tok_s_user(self) -> np.ndarray:
        """``1 / tpot_s`` (tok/s/user)."""
        return 1.0 / self.tpot_s

    @property
    def decode_tok_s_chip(self) -> np.ndarray:
        """Output tokens per second per chip of decode alone, prefill ignored: ``active_sequences x
        tokens_per_step / (decode_step_s + draft_s) / n_chips`` (the roofline's throughput)."""
        return self.active_sequences * self.tokens_per_step / (self.decode_step_s + self.draft_s) / self.n_chips

    @property
    def memory_bound(self) -> np.ndarray:
        """Whether reading weights takes at least as long as the FLOPs (bool)."""
        return self.weights_s >= self.compute_s

    @property
    def intensity_flop_per_byte(self) -> np.ndarray:
        """Arithmetic intensity of the step: FLOPs over weight + KV bytes read (per chip)."""
        return self.flops / (self.weight_bytes_read + self.kv_bytes_read)

    #: Names :meth:`as_dict` returns: the fields and the derived quantities.
    DERIVED = ("collectives_s", "roofline_s", "decode_step_s", "tpot_s", "interactivity_tok_s_user",
               "decode_tok_s_chip", "memory_bound", "intensity_flop_per_byte")

    def as_dict(self) -> dict[str, np.ndarray]:
        """Every field and derived quantity as arrays of the broadcast shape (``tokens_per_step`` too)."""
        shape = np.shape(self.tpot_s)
        out = {f.name: np.broadcast_to(np.asarray(getattr(self, f.name)), shape) for f in fields(self)}
        out.update({k: np.broadcast_to(np.asarray(getattr(self, k)), shape) for k in self.DERIVED})
        return out

    def to_frame(self) -> "pl.DataFrame":
        """:meth:`as_dict` flattened into a polars DataFrame, one row per configuration."""
        import polars as pl

        return pl.DataFrame({k: np.ravel(v) for k, v in self.as_dict().items()})


#: Configurations per chunk of :func:`evaluate_grid`: about 40 arrays of this many float64 values stay
#: within a few MB of cache (a 4-million grid evaluated in one call is about 2.4x slower on 2 cores).
GRID_CHUNK = 32_768


def evaluate_grid(model: ModelSpec | str, chip: ChipSpec | str, *, n_chips, concurrency, dp=1,
                  chunk: int = GRID_CHUNK, **kw) -> Evaluation:
    """:func:`evaluate` over a large flat grid (1-D arrays ``n_chips``, ``concurrency`` and ``dp`` of one
    length, or scalars), ``chunk`` configurations at a time, so that peak memory stays bounded and the
    working set fits in cache. The same result as one call, field by field (1-D, the grid's length);
    ``kw`` as for :func:`evaluate`, a per-configuration array among them (``prefill_chips``,
    ``prefill_tp``, ``context_tokens``: 1-D, the grid's length) chunked with the grid. ValueError for arrays
    of different lengths or a non-positive chunk."""
    if chunk < 1:
        raise ValueError(f"chunk must be a positive number of configurations, got {chunk!r}")
    n, b, d = np.broadcast_arrays(np.ravel(n_chips), np.ravel(concurrency), np.ravel(dp))
    per_config = {k for k, v in kw.items() if isinstance(v, np.ndarray) and v.ndim == 1 and v.size == n.size > 1}

    def piece(i: int) -> dict:
        return {k: (v[i:i + chunk] if k in per_config else v) for k, v in kw.items()}
    parts = [evaluate(model, chip, n_chips=n[i:i + chunk], concurrency=b[i:i + chunk], dp=d[i:i + chunk], **piece(i))
             for i in range(0, n.size, chunk)]
    joined = {}
    for f in fields(Evaluation):
        values = [getattr(p, f.name) for p in parts]
        joined[f.name] = values[0] if np.ndim(values[0]) == 0 and f.name == "tokens_per_step" else \
            np.concatenate([np.broadcast_to(v, np.shape(p.tpot_s)) for v, p in zip(values, parts)])
    return Evaluation(**joined)


def roofline_s(kv_s, weights_s, compute_s):
    """The memory and compute part of a decode step (s; scaling-book ``inference.md``: attention reads the
    KV cache, the matrix multiplies take the longer of their weight read and their FLOPs):
    ``kv_s + max(weights_s, compute_s)``. Arrays broadcast."""
    return kv_s + np.maximum(weights_s, compute_s)


def decode_step_s(kv_s, weights_s, compute_s, collectives_s, overhead_s):
    """The decode step (s), the one definition every module uses: :func:`roofline_s` plus what runs
    outside it, ``kv_s + max(weights_s, compute_s) + collectives_s + overhead_s``. Arrays broadcast."""
    return roofline_s(kv_s, weights_s, compute_s) + collectives_s + overhead_s


def closed_loop_fixed_point(sustained: Callable[[np.ndarray], np.ndarray], upper: np.ndarray) -> np.ndarray:
    """The fixed point ``a = min(upper, sustained(a))`` of each element (same shape as ``upper``, > 0):
    ``upper`` (the concurrency) where ``sustained(upper) >= upper``, else the root of
    ``a - sustained(a)`` in ``(0, upper)``, solved by :func:`scipy.optimize.elementwise.find_root`
    (Chandrupatla's bracketed method, T. R. Chandrupatla, Adv. Eng. Softw. 28, 1997) with its default
    tolerances: the bracket closes to within 4 ulps of the root, so the result moves with its inputs' last
    bits by a few ulps at most. ``sustained`` maps an array like ``upper`` elementwise to the sequences a
    step time sustains (sequences, > 0 at 0) and is nondecreasing, as a decode step is in its sequences;
    ``a - sustained(a)`` is then negative at 0 and positive at ``upper``, a valid bracket. Where the map's
    slope stays below one (the prefill capacity times ``OSL`` times a sequence's share of the step, a few
    percent in the benchmark's recipes) the root is unique; else it is one of the fixed points in the
    bracket. RuntimeError, naming the elements, if the solve fails (a non-finite step)."""
    from scipy.optimize.elementwise import find_root

    shape = np.shape(upper)
    top = np.array(upper, dtype=float).ravel()
    at_top = np.broadcast_to(sustained(top.reshape(shape)), shape).ravel()
    out = np.minimum(top, at_top)
    held = np.flatnonzero(at_top < top)
    if held.size:
        def excess(a, idx):  # a - sustained(a) at the held-back elements ``idx`` (find_root drops converged ones)
            trial = out.copy()
            trial[idx] = a
            return a - np.broadcast_to(sustained(trial.reshape(shape)), shape).ravel()[idx]

        res = find_root(excess, (np.zeros(held.size), top[held]), args=(held,))
        if not np.all(res.success):
            raise RuntimeError(f"closed-loop fixed point not solved at elements {held[~res.success].tolist()} "
                               f"(status {res.status[~res.success].tolist()})")
        out[held] = res.x
    return out.reshape(shape)


def _by_size(sizes: np.ndarray, fn) -> np.ndarray:
    """``fn(k, mask)`` for each distinct group size ``k`` of the integer array ``sizes``, where ``mask``
    selects its elements (collectives take one topology at a time; a grid has few distinct sizes)."""
    out = np.zeros(sizes.shape)
    lo, hi = (sizes.min(), sizes.max()) if sizes.size else (0, 0)
    for k in ((lo,) if lo == hi else np.unique(sizes)):
        if k > 1:
            mask = sizes == k
            out[mask] = fn(int(k), mask)
    return out


def evaluate(model: ModelSpec | str, chip: ChipSpec | str, *, n_chips, concurrency, dp=1, ep=True, pp=1, isl=8192, osl=1024,
             precision: str | tuple[str, str, str] = "fp4", stack: str = "default", eff: Efficiency = Efficiency(),
             disagg: bool = False, prefill_chips=None, prefill_tp=1, mtp_tokens_per_step: float = 1.0,
             mtp_draft_cost: float = MTP_DRAFT_COST, hbm_bandwidth_bytes_per_s: float | None = None,
             memory: str = "hbm", fabric: Callable[[int], network.Topology] | None = None,
             context_tokens=None, request_lengths: str = "benchmark", kv_sharding: str = "heads") -> Evaluation:
    """Evaluate one worker configuration per element of the broadcast arrays ``n_chips``, ``concurrency``,
    ``dp``, ``pp`` (and ``prefill_chips`` when ``disagg``): the formulas of the module docstring.

    ``n_chips`` chips in ``pp`` pipeline stages, each stage's ``n_chips / pp`` chips split ``dp`` ways
    for attention (DP-attention) and tensor parallel within; experts spread over a stage's chips (all-to-all
    when ``ep``). ``precision``: the benchmark's name (weights and KV by :func:`recipe`) or a tuple
    (experts, other weights, KV cache). ``memory``: the tier weights and KV live in (:data:`MEMORY_TIERS`),
    its bandwidth replaced by ``hbm_bandwidth_bytes_per_s`` if given. ``fabric(k)``: the topology ``k``
    chips of the worker talk over (default :func:`scale_up_fabric`); each collective's fixed latency is
    ``eff.alpha_s`` plus the topology's hops. ``context_tokens``: the context decode attends to (default
    the mean ISL + half the mean OSL) and each sequence's KV held. ``request_lengths``: see
    :data:`REQUEST_LENGTHS`. ``kv_sharding``: how a tensor-parallel group shares the KV cache
    (:data:`KV_SHARDINGS`).

    Returns an :class:`Evaluation`. Raises CostError above :data:`MAX_CONFIGURATIONS` configurations or
    :data:`MAX_LAYOUT_PASSES` (see :func:`check_configurations`), before any array of that size is made;
    ValueError, naming it and its value, for chips, concurrency,
    ``dp``, ``pp``, ``hbm_bandwidth_bytes_per_s``, ``prefill_chips`` or ``prefill_tp`` that are not
    positive and finite, an ``mtp_tokens_per_step`` below 1, a negative ``mtp_draft_cost``, an ``ep`` or
    ``disagg`` that is not a boolean,
    a ``pp`` that does not divide ``n_chips`` or a ``dp`` that does not divide a stage, a chip without the
    memory tier's figures; UnknownNameError for an unknown memory tier or request-length rule, chip,
    model or precision (``model`` and ``chip`` may be names)."""
    model = model if isinstance(model, ModelSpec) else specs.model(model)
    chip = chip if isinstance(chip, ChipSpec) else specs.chip(chip)
    model.check_context(np.max(_arr(isl)) + np.max(_arr(osl)), "ISL + OSL")
    if context_tokens is not None:
        model.check_context(np.max(_arr(context_tokens)), "context_tokens")
    try:
        shape = np.broadcast_shapes(*(np.shape(x) for x in (n_chips, concurrency, dp, pp)))
    except ValueError:
        raise ValueError(f"n_chips, concurrency, dp and pp must broadcast together, got shapes "
                         f"{[np.shape(x) for x in (n_chips, concurrency, dp, pp)]}") from None
    check_configurations(math.prod(shape))
    n, b, dp, pp = np.broadcast_arrays(_arr(n_chips), _arr(concurrency), _arr(dp), _arr(pp))
    check_configurations(n.size, len(np.unique(np.stack([n.ravel(), dp.ravel(), pp.ravel()]), axis=1).T)
                         if n.size > 1 else 1)
    positive = [("n_chips", n), ("concurrency", b), ("dp", dp), ("pp", pp)]
    if hbm_bandwidth_bytes_per_s is not None:
        positive.append(("hbm_bandwidth_bytes_per_s", _arr(hbm_bandwidth_bytes_per_s)))
    if disagg:
        if prefill_chips is None:
            raise ValueError("a disaggregated evaluation (disagg=True) needs prefill_chips")
        positive += [("prefill_chips", _arr(prefill_chips)), ("prefill_tp", _arr(prefill_tp))]
    for name, v in positive:
        bad = ~((v > 0) & (v < math.inf))  # NaN fails both comparisons
        if bad.any():
            raise ValueError(f"{name} must be positive and finite, got {float(v[bad].flat[0])!r}")
    if not (np.ndim(mtp_tokens_per_step) == 0 and 1 <= mtp_tokens_per_step < math.inf):
        raise ValueError(f"mtp_tokens_per_step must be a finite number of tokens a step emits, at least 1 (1: no "
                         f"speculative decoding), got {mtp_tokens_per_step!r}")
    if not (np.ndim(mtp_draft_cost) == 0 and 0 <= mtp_draft_cost < math.inf):
        raise ValueError(f"mtp_draft_cost must be a finite fraction of a decode step, at least 0, got {mtp_draft_cost!r}")
    for name, flag in (("ep", ep), ("disagg", disagg)):
        if not isinstance(flag, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False, got {flag!r}")
    if np.any(np.mod(n, pp) != 0) or np.any(np.mod(n / pp, dp) != 0):
        raise ValueError(f"pp must divide n_chips and dp the chips of a stage (got n_chips={n_chips!r}, "
                         f"pp={pp!r}, dp={dp!r})")
    if memory not in MEMORY_TIERS:
        raise UnknownNameError("memory tier", memory, list(MEMORY_TIERS))
    if request_lengths not in REQUEST_LENGTHS:
        raise UnknownNameError("request-length rule", request_lengths, list(REQUEST_LENGTHS))
    bw_field, cap_field, usable = MEMORY_TIERS[memory]
    raw_bw = hbm_bandwidth_bytes_per_s or getattr(chip, bw_field)
    if not raw_bw:
        raise ValueError(f"chip {chip.chip!r} has no {memory.upper()} bandwidth figure ({bw_field})")
    fabric = fabric or scale_up_fabric(chip)
    stage = n / pp              # chips of one pipeline stage
    tp = stage / dp             # tensor-parallel ways of attention
    w_exp, w_rest, kv_prec = recipe(model, precision) if isinstance(precision, str) else precision
    b_exp, b_rest = bytes_per_value(w_exp), bytes_per_value(w_rest)
    bw = raw_bw * eff.eta_mem
    # math at the experts' precision where the chip has it, else at the activations' (W4A16 on Hopper)
    flops = chip.peak_flops_per_s(w_exp if chip.peak_dense_flops_per_s.get("fp4") or w_exp in ("fp8", "bf16")
                                  else w_rest) * eff.eta_compute
    layers = model.num_hidden_layers
    g = model.param_groups()
    if request_lengths == "benchmark":
        isl_m, osl_m = mean_request_length(isl), mean_request_length(osl)
    else:
        isl_m, osl_m = float(isl), float(osl)
    ctx = isl_m + osl_m / 2 if context_tokens is None else _arr(context_tokens)  # mean context while decoding
    held_ctx = isl + osl if context_tokens is None else ctx

    # weights per chip, read in a step of all stages: non-expert parts over the TP ways, experts over a
    # stage's chips; the output head is read every step, tied to the input embedding or not
    non_expert_bytes = (g["attention"] + g["dense_mlp"] + g["router"] + g["shared_experts"] + model.embedding_params()
                        + g["final_norm"]) * b_rest / tp
    attention_bytes = g["attention"] * b_rest / tp
    other_bytes = (g["dense_mlp"] + g["router"] + g["shared_experts"] + g["final_norm"]
                   + model.embedding_params()) * b_rest / tp
    # weights held per chip: every weight, the input embedding table included, each stage its own layers
    held = (model.total_params() - g["routed_experts"]) * b_rest / (tp * pp) + g["routed_experts"] * b_exp / n
    # KV: sequences per attention replica; GQA heads split over TP (up to the KV-head count), MLA replicated
    if kv_sharding not in KV_SHARDINGS:
        raise UnknownNameError("KV sharding", kv_sharding, list(KV_SHARDINGS))
    if kv_sharding == "sequences":
        kv_split = tp
    else:
        kv_split = np.minimum(tp, model.num_key_value_heads or 1) if model.attention == "gqa" else 1.0

    def kv_read_bytes(seqs, per_sequence):  # KV one chip reads for ``seqs`` sequences per attention replica
        return np.ceil(seqs / tp) * per_sequence if kv_sharding == "sequences" else seqs * per_sequence / kv_split

    kv_held = (b / dp) * model.kv_bytes_per_sequence(held_ctx, kv_prec) / kv_split / pp
    fits = held + kv_held <= (getattr(chip, cap_field) or np.inf) * usable()
    layer_factor = eff.mla_layer_factor if model.attention == "mla" else 1.0
    act_bytes = model.hidden_size * ALLREDUCE_BYTES  # activations of one token on the wire

    if model.is_moe and ep:
        # timed at the worker's full concurrency and scaled to the active sequences (in ``parts``), fixed
        # latency included: the form data/calibration.csv was fitted with (a collective's latency does not
        # shrink with fewer tokens; charge it whole at the next recalibration). Only disaggregated
        # workers whose prefill holds sequences back have active < concurrency.
        full = b / pp

        def a2a(k, s):
            topo, kw = fabric(k), dict(remote_fraction=(k - 1) / k)
            tok = full[s] / k
            out = [network.moe_all_to_all_bytes(tok, model.num_experts_per_tok, model.hidden_size,
                                                dispatch_bytes=d, combine_bytes=c, **kw)
                   for d, c in ((DISPATCH_BYTES, 0.0), (0.0, COMBINE_BYTES))]
            return sum(network.all_to_all_s(topo, m, alpha0_s=eff.alpha_s) for m in out)
        all2all_full = model.num_moe_layers * _by_size(stage, a2a)

    # what the step's parts take that does not depend on the sequences decoding
    kv_per_sequence = model.kv_bytes_per_sequence(ctx, kv_prec)
    flops_per_token = model.decode_flops_per_token(ctx)
    handoff_sizes = np.where(pp > 1, n, 1)

    def parts(active: np.ndarray) -> dict[str, np.ndarray]:
        """The decode step's parts with ``active`` sequences decoding (same layout); micro-batches of
        ``active / pp`` sequences go through the stages one after the other."""
        micro = active / pp
        if model.is_moe:
            touched = expected_distinct_experts(model.n_routed_experts, model.num_experts_per_tok, micro)
            expert_bytes = model.num_moe_layers * touched * model.expert_params() * b_exp / stage
        else:
            expert_bytes = np.zeros_like(micro)
        kv_bytes = kv_read_bytes(micro / dp, kv_per_sequence)
        step_flops = micro * flops_per_token / stage
        allreduce = 2 * layers * _by_size(tp, lambda k, s: network.all_reduce_s(
            fabric(k), (micro[s] / dp[s]) * act_bytes, alpha0_s=eff.alpha_s))
        if model.is_moe and ep:
            all2all = all2all_full * (active / b)
        else:
            all2all = np.zeros_like(micro)
        handoff = pp * _by_size(handoff_sizes, lambda k, s: network.pipeline_handoff_s(
            fabric(k), (micro[s] / dp[s]) * act_bytes))
        weight_bytes = non_expert_bytes + expert_bytes
        return {"weights_s": weight_bytes / bw, "attention_weights_s": attention_bytes / bw + 0 * micro, "expert_weights_s": expert_bytes / bw,
                "other_weights_s": other_bytes / bw + 0 * micro, "kv_s": kv_bytes / bw, "compute_s": step_flops / flops,
                "allreduce_s": allreduce, "all_to_all_s": all2all, "handoff_s": handoff,
                "overhead_s": layers * layer_factor * (eff.tau(stack) + eff.beta_s * micro / dp),
                "weight_bytes_read": weight_bytes, "kv_bytes_read": kv_bytes,
                "flops": step_flops}

    def step(p: dict[str, np.ndarray]) -> np.ndarray:
        return decode_step_s(p["kv_s"], p["weights_s"], p["compute_s"], p["allreduce_s"] + p["all_to_all_s"] + p["handoff_s"],
                             p["overhead_s"])

    # prefill of one mean prompt, on the worker's chips of one replica (aggregated) or a prefill worker
    # (disaggregated); one prefill step reads every weight once for up to PREFILL_CHUNK_TOKENS tokens
    p_tp = _arr(prefill_tp) if disagg else n / dp
    p_flops = model.prefill_flops(int(round(isl_m)))
    all_weight_bytes = (g["attention"] + g["dense_mlp"] + g["router"] + g["shared_experts"] + g["final_norm"]
                        + model.embedding_params()) * b_rest + (g["routed_experts"] * b_exp if model.is_moe else 0.0)
    share = min(1.0, isl_m / PREFILL_CHUNK_TOKENS)
    prefill = (np.maximum(p_flops / (p_tp * flops / eff.eta_compute * eff.eta_prefill), share * all_weight_bytes / (p_tp * bw))
               + share * layers * eff.tau(stack) * layer_factor)
    draft = mtp_draft_cost * (mtp_tokens_per_step > 1)

    if disagg:
        p_chips = _arr(prefill_chips)
        capacity = (p_chips / p_tp) / prefill  # prefill requests/s
        kv_transfer = network.point_to_point_s(fabric(2), model.kv_bytes_per_sequence(isl_m, kv_prec), hops=1)
        # the sequences decoding: all of them unless prefill holds the rest back, a = capacity x
        # T_step(a) x (OSL - 1) / tokens per step (Little's law on the decode stage of the closed loop)
        held_per_s = capacity * (osl_m - 1) / mtp_tokens_per_step
        active = closed_loop_fixed_point(lambda a: held_per_s * step(parts(a)), b)
        interference = np.zeros_like(b)
        chips = n + p_chips
    else:
        capacity, kv_transfer, active = np.inf, np.zeros_like(b), b
        chips = n
    p = parts(active)
    decode = step(p)
    if not disagg:  # chunked prefill: the prefills of the other users of a replica, spread over OSL steps
        interference = np.maximum(b / dp - 1, 0) / osl_m * prefill
    tpot = (decode * (1 + draft) + interference) / mtp_tokens_per_step
    first = prefill + kv_transfer + decode * (1 + draft) + eff.request_latency_s
    rate = np.minimum(b / (first + tpot * (osl_m - 1)), capacity)
    e2e = b / rate
    return Evaluation(
        weights_s=p["weights_s"],
        attention_weights_s=p["attention_weights_s"], expert_weights_s=p["expert_weights_s"],
        other_weights_s=p["other_weights_s"], kv_s=p["kv_s"], compute_s=p["compute_s"], allreduce_s=p["allreduce_s"],
        all_to_all_s=p["all_to_all_s"], handoff_s=p["handoff_s"], overhead_s=p["overhead_s"], draft_s=decode * draft,
        prefill_interference_s=interference, tokens_per_step=float(mtp_tokens_per_step), prefill_s=prefill,
        kv_transfer_s=kv_transfer + 0 * b, ttft_s=e2e - tpot * (osl_m - 1), e2e_s=e2e,
        throughput_tok_s_chip=rate * (isl_m + osl_m) / chips, chips=chips, n_chips=n, concurrency=b,
        active_sequences=active, weight_bytes_read=p["weight_bytes_read"], kv_bytes_read=p["kv_bytes_read"],
        flops=p["flops"], weight_bytes_per_chip=held + 0 * b, kv_bytes_per_chip=kv_held, fits=fits)


def with_chip(chip: ChipSpec, **changes) -> ChipSpec:
    """A copy of ``chip`` with SI fields changed (what-ifs: ``hbm_bandwidth_bytes_per_s=16e12``)."""
    return replace(chip, **changes)
