"""The serving model: one evaluator that turns (model, chip, :class:`Layout`, :class:`Workload`, stack)
into decode step time, TPOT, TTFT, E2E and throughput per chip, for whole grids of configurations at once::

    r = evaluate("gpt-oss-120b", "gb200", Layout(n_chips=8, dp=8), Workload(concurrency=64), stack="trt")
    capacity("gpt-oss-120b", "gb200", Layout(n_chips=8, dp=8), Workload(concurrency=64)).fits

This is the book's one evaluator: every step time (the roofline's, the LPU's, the caveats' breakdowns)
is :func:`evaluate` under some description, and it returns its parts with their total
(:class:`Evaluation`), so a breakdown is the evaluation itself. Each term of the step is one small
function of a resolved :class:`Worker` (:func:`worker`) with its formula and source:
:func:`non_expert_weights_s`, :func:`expert_bytes_read`, :func:`kv_bytes_read`, :func:`step_flops`,
:func:`allreduce_s`, :func:`all_to_all_s`, :func:`handoff_s`, :func:`overhead_s` (summed by
:func:`decode_terms` into a :class:`DecodeStep`), and :func:`prefill_s`, :func:`prefill_interference_s`,
:func:`decoding_sequences`; weight bytes by role are summed once, by :func:`weight_bytes` (the roofline's
too). :func:`capacity` checks memory alone, cheaply, so a sweep evaluates only what fits
(:func:`select` takes those configurations). The roofline is it with ideal constants
(:meth:`Efficiency.ideal`, :func:`free_fabric`); an LPU holds weights and KV in SRAM (``memory="sram"``,
``pp`` pipeline stages); collectives are timed by :mod:`jalapeno.network` on a topology (``fabric``).

A configuration is one *worker* (a :class:`Layout`) and its load (a :class:`Workload`): ``n_chips`` chips
serving ``concurrency`` sequences together, in ``pp``
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
(:data:`MTP_DRAFT_COST`). Weights and KV must fit in :func:`usable_hbm_fraction` of HBM (:func:`capacity`).
"""

from __future__ import annotations

import functools
import math
import statistics
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


def overhead_key(stack: str, generation: str) -> str:
    """The key of ``stack``'s per-layer overhead on chips of ``generation`` in :attr:`Efficiency.tau_s`:
    ``"<stack>@<generation>"``, the generation (:attr:`jalapeno.specs.ChipSpec.generation`) lower-cased with
    its spaces as hyphens (``"vllm@hopper"``, ``"atom@cdna-4"``)."""
    return f"{stack}@{generation.lower().replace(' ', '-')}"


@dataclass(frozen=True)
class Efficiency:
    """Calibrated constants (fitted to the measured data, see :mod:`jalapeno.calibration`).

    ``eta_mem``: achieved fraction of HBM bandwidth; ``eta_compute``: of dense peak FLOP/s in decode;
    ``eta_prefill``: of dense peak FLOP/s in prefill;
    ``alpha_s``: fixed latency of one collective in a scale-up domain (s); ``beta_s``: per-layer, per-step
    overhead of each sequence an attention replica holds (s: attention kernels, sampling, scheduling);
    ``tau_s``: per-layer, per-step overhead of each serving stack (s), keyed ``"<stack>@<generation>"``
    (the stack on one chip generation, :func:`overhead_key`) or ``"<stack>"`` (its prior for a generation
    no measurement informs; see :meth:`tau`);
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

    def tau(self, stack: str, generation: str | None = None) -> float:
        """The per-layer overhead of ``stack`` on chips of ``generation`` (s): ``tau_s[overhead_key(stack, generation)]``,
        else the stack's own prior ``tau_s["<stack>"]``, else ``default``'s, else the median of all."""
        if generation and overhead_key(stack, generation) in self.tau_s:
            return self.tau_s[overhead_key(stack, generation)]
        if stack in self.tau_s:
            return self.tau_s[stack]
        return self.tau_s["default"] if "default" in self.tau_s else statistics.median(self.tau_s.values())

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


#: The evaluator's constants at the speed of light (the roofline, :mod:`jalapeno.bounds`; the capacity
#: plans, :mod:`jalapeno.capacity_plans`): ideal constants (every achieved fraction 1, no latency or
#: overhead) and collectives that take no time (memory and compute only).
SPEED_OF_LIGHT = {"eff": Efficiency.ideal(), "fabric": free_fabric, "stack": "default"}


def _unpipelined(pp) -> bool:
    """Whether ``pp`` is the scalar 1 (one pipeline stage, every layout's default): a product or quotient
    by it changes no bit, so the terms skip it, a pass over the grid saved each time."""
    return np.ndim(pp) == 0 and pp == 1


def _per_stage(x, pp):
    """``x / pp``, the share of one of ``pp`` pipeline stages: ``x`` itself when :func:`_unpipelined`."""
    return x if _unpipelined(pp) else x / pp


def _positive(name: str, value) -> np.ndarray:
    """``value`` as a float array; ValueError naming it and its first bad element unless every element is
    positive and finite (NaN fails both comparisons)."""
    v = _arr(value)
    bad = ~((v > 0) & (v < math.inf))
    if bad.any():
        raise ValueError(f"{name} must be positive and finite, got {float(v[bad].flat[0])!r}")
    return v


@dataclass(frozen=True)
class Layout:
    """One worker (:func:`evaluate`'s configuration apart from its load): ``n_chips`` chips in ``pp``
    pipeline stages, each stage's ``n_chips / pp`` chips split ``dp`` ways for attention (DP-attention)
    and tensor parallel within; the experts of an MoE model spread over a stage's chips (all-to-all when
    ``ep``, else tensor-parallel experts).

    ``n_chips``, ``dp``, ``pp``: counts, scalars or arrays that broadcast (a grid of layouts);
    ``disagg``: prefill on ``prefill_chips`` separate chips (per worker, array allowed) in workers of
    ``prefill_tp`` chips; ``memory``: the tier weights and KV live in (:data:`MEMORY_TIERS`), its bandwidth
    replaced by ``hbm_bandwidth_bytes_per_s`` (bytes/s) if given; ``kv_sharding``: how a tensor-parallel
    group shares the KV cache (:data:`KV_SHARDINGS`). Numbers are stored as float arrays.

    Raises CostError above :data:`MAX_CONFIGURATIONS` layouts; ValueError, naming it and its value, for
    ``n_chips``, ``dp``, ``pp``, ``hbm_bandwidth_bytes_per_s``, ``prefill_chips`` or ``prefill_tp`` that are
    not positive and finite, shapes that do not broadcast, an ``ep`` or ``disagg`` that is not a boolean, a
    disaggregated layout without ``prefill_chips``, a ``pp`` that does not divide ``n_chips`` or a ``dp``
    that does not divide a stage; UnknownNameError for an unknown memory tier or KV sharding."""

    n_chips: object = 1.0
    dp: object = 1.0
    pp: object = 1.0
    ep: bool = True
    disagg: bool = False
    prefill_chips: object = None
    prefill_tp: object = 1.0
    memory: str = "hbm"
    kv_sharding: str = "heads"
    hbm_bandwidth_bytes_per_s: float | None = None

    def __post_init__(self):
        try:
            shape = np.broadcast_shapes(*(np.shape(x) for x in (self.n_chips, self.dp, self.pp)))
        except ValueError:
            raise ValueError(f"n_chips, dp and pp must broadcast together, got shapes "
                             f"{[np.shape(x) for x in (self.n_chips, self.dp, self.pp)]}") from None
        check_configurations(math.prod(shape))
        shown = dict(n_chips=self.n_chips, pp=self.pp, dp=self.dp)
        for name in ("n_chips", "dp", "pp"):
            object.__setattr__(self, name, _positive(name, getattr(self, name)))
        if self.hbm_bandwidth_bytes_per_s is not None:
            _positive("hbm_bandwidth_bytes_per_s", self.hbm_bandwidth_bytes_per_s)
        for name in ("ep", "disagg"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.disagg and self.prefill_chips is None:
            raise ValueError("a disaggregated evaluation (disagg=True) needs prefill_chips")
        if self.disagg:
            object.__setattr__(self, "prefill_chips", _positive("prefill_chips", self.prefill_chips))
            object.__setattr__(self, "prefill_tp", _positive("prefill_tp", self.prefill_tp))
        if np.any(np.mod(self.n_chips, self.pp) != 0) or np.any(np.mod(self.n_chips / self.pp, self.dp) != 0):
            raise ValueError(f"pp must divide n_chips and dp the chips of a stage (got n_chips={shown['n_chips']!r}, "
                             f"pp={shown['pp']!r}, dp={shown['dp']!r})")
        if self.memory not in MEMORY_TIERS:
            raise UnknownNameError("memory tier", self.memory, list(MEMORY_TIERS))
        if self.kv_sharding not in KV_SHARDINGS:
            raise UnknownNameError("KV sharding", self.kv_sharding, list(KV_SHARDINGS))


@dataclass(frozen=True)
class Workload:
    """What a worker serves (:func:`evaluate`'s load): ``concurrency`` sequences together (scalar or an
    array that broadcasts with the :class:`Layout`'s), prompts of ``isl`` and answers of ``osl`` tokens
    (nominal; the requests' lengths by ``request_lengths``, :data:`REQUEST_LENGTHS`), ``precision`` the
    benchmark's name (weights and KV by :func:`recipe`) or a tuple (experts, other weights, KV cache);
    ``context_tokens`` the context decode attends to and each sequence's KV held (default the mean ISL +
    half the mean OSL, and ISL + OSL held); speculative decoding emits ``mtp_tokens_per_step`` tokens a
    step at a draft of ``mtp_draft_cost`` of a step (:data:`MTP_DRAFT_COST`; 1 token: off).

    Raises CostError above :data:`MAX_CONFIGURATIONS` concurrencies; ValueError, naming it and its value,
    for a concurrency that is not positive and finite, an ``mtp_tokens_per_step`` below 1 or a negative
    ``mtp_draft_cost``; UnknownNameError for an unknown request-length rule or precision name. The lengths
    are checked against a model's context window by :func:`evaluate`."""

    concurrency: object = 1.0
    isl: float = 8192
    osl: float = 1024
    precision: str | tuple[str, str, str] = "fp4"
    context_tokens: object = None
    request_lengths: str = "benchmark"
    mtp_tokens_per_step: float = 1.0
    mtp_draft_cost: float = MTP_DRAFT_COST

    def __post_init__(self):
        check_configurations(np.size(self.concurrency))
        object.__setattr__(self, "concurrency", _positive("concurrency", self.concurrency))
        t, d = self.mtp_tokens_per_step, self.mtp_draft_cost
        if not (np.ndim(t) == 0 and 1 <= t < math.inf):
            raise ValueError(f"mtp_tokens_per_step must be a finite number of tokens a step emits, at least 1 (1: no "
                             f"speculative decoding), got {t!r}")
        if not (np.ndim(d) == 0 and 0 <= d < math.inf):
            raise ValueError(f"mtp_draft_cost must be a finite fraction of a decode step, at least 0, got {d!r}")
        if self.request_lengths not in REQUEST_LENGTHS:
            raise UnknownNameError("request-length rule", self.request_lengths, list(REQUEST_LENGTHS))
        if isinstance(self.precision, str) and self.precision not in _DEFAULT_RECIPE:
            raise UnknownNameError("precision", self.precision, list(_DEFAULT_RECIPE))

    @property
    def mean_lengths(self) -> tuple[float, float]:
        """(ISL, OSL) of a mean request (tokens): :func:`jalapeno.metrics.mean_request_length` of the
        nominal ones under ``benchmark``, the nominal ones under ``exact``."""
        if self.request_lengths == "benchmark":
            return mean_request_length(self.isl), mean_request_length(self.osl)
        return float(self.isl), float(self.osl)

    @property
    def decode_context(self):
        """Context one decode step attends to (tokens): ``context_tokens``, else mean ISL + mean OSL / 2."""
        isl_m, osl_m = self.mean_lengths
        return isl_m + osl_m / 2 if self.context_tokens is None else _arr(self.context_tokens)

    @property
    def held_context(self):
        """Context each sequence's KV cache holds (tokens): ``context_tokens``, else nominal ISL + OSL."""
        return self.isl + self.osl if self.context_tokens is None else _arr(self.context_tokens)

    def recipe(self, model: ModelSpec) -> tuple[str, str, str]:
        """(experts, other weights, KV cache) precisions of ``model`` under this workload (:func:`recipe`)."""
        return recipe(model, self.precision) if isinstance(self.precision, str) else tuple(self.precision)


def check_layouts(layout: Layout, shape: tuple[int, ...]) -> None:
    """:func:`check_configurations` of a grid of ``shape`` with ``layout``'s distinct (``n_chips``, ``dp``,
    ``pp``) triples, counted exactly (a sort of the grid) only when the product of each field's distinct
    values, an upper bound, could exceed the limit."""
    size = math.prod(shape)
    if size * size <= MAX_LAYOUT_PASSES:  # within the limit however many layouts it has (a fit's small grids)
        return
    bound = math.prod(len(np.unique(x, sorted=False)) for x in (layout.n_chips, layout.dp, layout.pp))
    if size * min(bound, size) > MAX_LAYOUT_PASSES:
        grid = np.stack([np.broadcast_to(x, shape).ravel() for x in (layout.n_chips, layout.dp, layout.pp)])
        check_configurations(size, len(np.unique(grid, axis=1).T))


def check_lengths(model: ModelSpec, workload: Workload) -> None:
    """ValueError unless the workload's ISL + OSL and ``context_tokens`` are positive and within the
    model's context window (:meth:`jalapeno.specs.ModelSpec.check_context`)."""
    model.check_context(np.max(_arr(workload.isl)) + np.max(_arr(workload.osl)), "ISL + OSL")
    if workload.context_tokens is not None:
        model.check_context(np.max(_arr(workload.context_tokens)), "context_tokens")


def split_keywords(keywords: dict) -> tuple[Layout, Workload, dict]:
    """A configuration kept as one flat record of :class:`Layout`, :class:`Workload` and :func:`evaluate`
    keywords (:func:`jalapeno.subject.worked_configurations`' ``kw``) as ``(Layout, Workload, the rest)``:
    each key goes to the value that has a field of its name, the rest (``stack``, ``eff``, ``fabric``) to
    :func:`evaluate`. Errors as the two classes raise."""
    names = {cls: {f.name for f in fields(cls)} for cls in (Layout, Workload)}
    parts = {cls: {k: v for k, v in keywords.items() if k in names[cls]} for cls in names}
    rest = {k: v for k, v in keywords.items() if not any(k in n for n in names.values())}
    return Layout(**parts[Layout]), Workload(**parts[Workload]), rest


def grid_shape(layout: Layout, workload: Workload) -> tuple[int, ...]:
    """The broadcast shape of a layout's and a workload's arrays (``n_chips``, ``concurrency``, ``dp``,
    ``pp``): one configuration per element. ValueError if they do not broadcast together."""
    shapes = [np.shape(x) for x in (layout.n_chips, workload.concurrency, layout.dp, layout.pp)]
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"n_chips, concurrency, dp and pp must broadcast together, got shapes {shapes}") from None


def select(layout: Layout, workload: Workload, index) -> tuple[Layout, Workload]:
    """The configurations at flat positions ``index`` (1-D integer array, or a slice) of the grid of
    ``layout`` x ``workload``: ``concurrency`` and every other array field broadcast to :func:`grid_shape`
    and taken there (1-D), other scalars kept. A per-configuration ``prefill_chips``, ``prefill_tp`` or ``context_tokens`` travels with its
    configuration."""
    shape = grid_shape(layout, workload)

    def take(v):
        return v if v is None or np.ndim(v) == 0 else np.broadcast_to(v, shape).ravel()[index]
    lay = {k: take(getattr(layout, k)) for k in ("n_chips", "dp", "pp", "prefill_chips", "prefill_tp")}
    concurrency = np.broadcast_to(workload.concurrency, shape).ravel()[index]  # 1-D, even on a 0-d grid
    return (_subset(layout, **lay),
            _subset(workload, concurrency=concurrency, context_tokens=take(workload.context_tokens)))


def _subset(checked, **arrays):
    """A copy of a :class:`Layout` or :class:`Workload` whose array fields are replaced by ``arrays``, some
    of its own elements: every element of a checked value passed its checks and a selection keeps them
    together, so the copy is not checked again (:func:`select` takes thousands of chunks of one grid)."""
    out = object.__new__(type(checked))
    out.__dict__.update(checked.__dict__, **arrays)
    return out


@dataclass(frozen=True)
class WeightBytes:
    """A model's weight bytes by role, per chip of one layout (arrays of the layout's shape; bytes), at
    the recipe's precisions: the one place weights are summed.

    ``attention``, ``other`` (dense MLP, router, shared experts, final norm, output head) and their sum
    ``non_expert``: read by every decode step, over the tensor-parallel ways; routed experts, which an MoE
    step reads as many of as it touches (:func:`expert_bytes_read`), by :meth:`experts`;
    ``held``: every weight a chip keeps, the input embedding table included, each stage its own layers
    (non-expert weights over ``tp pp``, routed experts over all ``n_chips``); ``total``: every weight read
    once by the whole worker (a prefill step's floor; the input embedding is a look-up, not read). Each
    per-chip role is computed when first read (a capacity check reads ``held`` alone, over a whole grid)
    from the whole model's bytes by role (``attention_bytes``, ``other_bytes``, their sum ``read_bytes``,
    ``all_but_routed_bytes``, ``routed_bytes``) and the layout's ``n``, ``pp``, ``stage`` and ``tp``."""

    attention_bytes: float
    other_bytes: float
    read_bytes: float
    all_but_routed_bytes: float
    routed_bytes: float
    total: float
    expert_params: int
    expert_bytes_per_value: float
    n: np.ndarray
    pp: np.ndarray
    stage: np.ndarray
    tp: np.ndarray

    @functools.cached_property
    def attention(self) -> np.ndarray:
        return self.attention_bytes / self.tp

    @functools.cached_property
    def other(self) -> np.ndarray:
        return self.other_bytes / self.tp

    @functools.cached_property
    def non_expert(self) -> np.ndarray:
        return self.read_bytes / self.tp

    @functools.cached_property
    def held(self) -> np.ndarray:
        tp_pp = self.tp if _unpipelined(self.pp) else self.tp * self.pp
        return self.all_but_routed_bytes / tp_pp + self.routed_bytes / self.n

    def experts(self, count) -> np.ndarray:
        """Bytes per chip of ``count`` routed experts (array; over all MoE layers) spread over a stage's
        chips: ``count x expert params x bytes per value / stage``."""
        return count * self.expert_params * self.expert_bytes_per_value / self.stage


def weight_bytes(model: ModelSpec, precision: tuple[str, str, str], layout: Layout = Layout()) -> WeightBytes:
    """:class:`WeightBytes` of ``model`` at ``precision`` (experts, other weights, KV: :func:`recipe`'s
    order) on ``layout`` (default one chip: whole-model bytes). Parameter counts by role from
    :meth:`jalapeno.specs.ModelSpec.param_groups`; the output head counts ``vocab x hidden`` whether
    tied to the input embedding or not; the input table is held, not read (untied)."""
    g = model.param_groups()
    b_exp, b_rest = bytes_per_value(precision[0]), bytes_per_value(precision[1])
    n, pp = layout.n_chips, layout.pp
    stage = _per_stage(n, pp)
    tp = stage / layout.dp
    other = g["dense_mlp"] + g["router"] + g["shared_experts"] + g["final_norm"] + model.embedding_params()
    read = g["attention"] + other
    return WeightBytes(
        attention_bytes=g["attention"] * b_rest, other_bytes=other * b_rest, read_bytes=read * b_rest,
        all_but_routed_bytes=(model.total_params() - g["routed_experts"]) * b_rest,
        routed_bytes=g["routed_experts"] * b_exp, expert_params=model.expert_params(), expert_bytes_per_value=b_exp,
        n=n, pp=pp, stage=stage, tp=tp,
        total=read * b_rest + (g["routed_experts"] * b_exp if model.is_moe else 0.0))


def _kv_split(model: ModelSpec, layout: Layout, tp):
    """Ways a tensor-parallel group splits each sequence's KV cache: ``tp`` under ``sequences``; under
    ``heads`` GQA heads over TP up to the KV-head count, an MLA latent replicated (1)."""
    if layout.kv_sharding == "sequences":
        return tp
    return np.minimum(tp, model.num_key_value_heads or 1) if model.attention == "gqa" else 1.0


@dataclass(frozen=True)
class Capacity:
    """What :func:`capacity` returns, per chip of a worker (arrays of the grid's shape; bytes):
    ``weight_bytes`` (:attr:`WeightBytes.held`), ``kv_bytes`` (the cache of the sequences an attention
    replica holds, per chip of a stage), ``usable_bytes`` (the memory tier's capacity times its usable
    share; inf where the chip has no capacity figure) and ``fits`` (``weight_bytes + kv_bytes <= usable_bytes``)."""

    weight_bytes: np.ndarray
    kv_bytes: np.ndarray
    usable_bytes: float
    fits: np.ndarray


def capacity(model: ModelSpec | str, chip: ChipSpec | str, layout: Layout, workload: Workload) -> Capacity:
    """Whether each configuration of ``layout`` x ``workload`` holds its weights and KV cache in the usable
    share of its memory tier (:data:`MEMORY_TIERS`; :func:`usable_hbm_fraction`): weights
    (:func:`weight_bytes`) plus ``(B / dp) x KV(held context) / kv_split / pp`` per chip. Cheap (no step
    is timed), so a sweep calls it first and evaluates only what fits. ValueError as :func:`grid_shape` and
    :func:`check_lengths`; UnknownNameError for an unknown chip or model (which may be names)."""
    model = model if isinstance(model, ModelSpec) else specs.model(model)
    chip = chip if isinstance(chip, ChipSpec) else specs.chip(chip)
    check_lengths(model, workload)
    return _capacity(model, chip, layout, workload, weight_bytes(model, workload.recipe(model), layout))


def _capacity(model: ModelSpec, chip: ChipSpec, layout: Layout, workload: Workload, weights: WeightBytes) -> Capacity:
    """:func:`capacity` with the layout's :class:`WeightBytes` at the workload's recipe given (an
    evaluation has them in its :class:`Worker`); the caller has checked the lengths (:func:`check_lengths`)."""
    shape = grid_shape(layout, workload)
    dp, pp, prec = layout.dp, layout.pp, workload.recipe(model)
    held = np.broadcast_to(weights.held, shape)
    kv = (workload.concurrency / dp) * model.kv_bytes_per_sequence(workload.held_context, prec[2]) \
        / _kv_split(model, layout, weights.tp)
    kv = _per_stage(kv, pp)
    _, cap_field, usable = MEMORY_TIERS[layout.memory]
    usable_bytes = (getattr(chip, cap_field) or np.inf) * usable()
    return Capacity(weight_bytes=held, kv_bytes=np.broadcast_to(kv, shape), usable_bytes=usable_bytes,
                    fits=held + kv <= usable_bytes)


@dataclass(frozen=True)
class Worker:
    """A :class:`Layout` resolved on a chip for a :class:`Workload` and a stack: what the terms of a step
    read (arrays of the grid's shape unless scalar; SI units). Built by :func:`worker`. ``bandwidth`` and
    ``flops``: the achieved rates (bytes/s, FLOP/s: peak x efficiency); ``weights``: per chip
    (:func:`weight_bytes`); ``kv_per_sequence`` (bytes) and ``flops_per_token`` at the decode context;
    ``all_to_all_full_s``: the MoE dispatch and combine at the worker's full concurrency (s; 0 without EP)."""

    model: ModelSpec
    layout: Layout
    n: np.ndarray
    concurrency: np.ndarray
    dp: np.ndarray
    pp: np.ndarray
    stage: np.ndarray
    tp: np.ndarray
    bandwidth: float
    flops: float
    weights: WeightBytes
    kv_split: object
    kv_per_sequence: object
    flops_per_token: object
    all_to_all_full_s: np.ndarray
    eff: Efficiency
    stack: str
    fabric: Callable[[int], network.Topology]
    generation: str | None = None

    @property
    def tau_s(self) -> float:
        """The stack's per-layer overhead on this chip's generation (s, :meth:`Efficiency.tau`)."""
        return self.eff.tau(self.stack, self.generation)

    @property
    def layer_factor(self) -> float:
        """:attr:`Efficiency.mla_layer_factor` for an MLA model, else 1."""
        return self.eff.mla_layer_factor if self.model.attention == "mla" else 1.0


def worker(model: ModelSpec, chip: ChipSpec, layout: Layout, workload: Workload, *, stack: str = "default",
           eff: Efficiency = Efficiency(), fabric: Callable[[int], network.Topology] | None = None) -> Worker:
    """Resolve ``layout`` x ``workload`` on ``chip`` (:class:`Worker`; ``fabric`` default
    :func:`scale_up_fabric`). The decode math runs at the experts' precision where the chip has it, else
    at the activations' (W4A16 on Hopper). ValueError for a chip without the memory tier's bandwidth."""
    bw_field = MEMORY_TIERS[layout.memory][0]
    raw_bw = layout.hbm_bandwidth_bytes_per_s or getattr(chip, bw_field)
    if not raw_bw:
        raise ValueError(f"chip {chip.chip!r} has no {layout.memory.upper()} bandwidth figure ({bw_field})")
    fabric = fabric or scale_up_fabric(chip)
    n, b, dp, pp = np.broadcast_arrays(layout.n_chips, workload.concurrency, layout.dp, layout.pp)
    stage, prec = _per_stage(n, layout.pp), workload.recipe(model)
    tp = stage / dp
    flops = chip.peak_flops_per_s(prec[0] if chip.peak_dense_flops_per_s.get("fp4") or prec[0] in ("fp8", "bf16")
                                  else prec[1]) * eff.eta_compute
    a2a = (moe_all_to_all_s(model, fabric, stage, _per_stage(b, layout.pp), eff.alpha_s) if model.is_moe and layout.ep
           else np.zeros(n.shape))
    ctx = workload.decode_context
    return Worker(model=model, layout=layout, n=n, concurrency=b, dp=dp, pp=pp, stage=stage, tp=tp,
                  bandwidth=raw_bw * eff.eta_mem, flops=flops,
                  weights=weight_bytes(model, prec, layout),
                  kv_split=_kv_split(model, layout, tp), kv_per_sequence=model.kv_bytes_per_sequence(ctx, prec[2]),
                  flops_per_token=model.decode_flops_per_token(ctx), all_to_all_full_s=a2a, eff=eff, stack=stack,
                  fabric=fabric, generation=chip.generation)


# ---- the terms of a decode step: each of ``micro`` sequences per micro-batch (array of the grid's shape) ----

def non_expert_weights_s(w: Worker, micro) -> tuple[np.ndarray, np.ndarray]:
    """(attention, other) weight read of a step (s): :attr:`WeightBytes.attention` and
    :attr:`WeightBytes.other` over the achieved bandwidth, the same at every batch (scaling-book
    ``inference.md``: a decode step streams every weight it uses once)."""
    shape = np.shape(micro)
    return tuple(t if np.shape(t) == shape else np.broadcast_to(t, shape)
                 for t in (w.weights.attention / w.bandwidth, w.weights.other / w.bandwidth))


def expert_bytes_read(model: ModelSpec, weights: WeightBytes, tokens) -> np.ndarray:
    """Routed-expert bytes one chip reads in a step of ``tokens`` tokens a stage (bytes): in each MoE layer
    the :func:`expected_distinct_experts` ``E (1 - (1 - k/E)^B)`` a batch touches (Epoch AI,
    inference-economics), their bytes over a stage's chips (:meth:`WeightBytes.experts`); 0 for a dense
    model. Arrays broadcast."""
    if not model.is_moe:
        return np.zeros(np.broadcast_shapes(np.shape(tokens), np.shape(weights.stage)))
    touched = expected_distinct_experts(model.n_routed_experts, model.num_experts_per_tok, tokens)
    return weights.experts(model.num_moe_layers * touched)


def kv_bytes_read(w: Worker, micro) -> np.ndarray:
    """KV cache bytes one chip reads in a step (bytes): ``micro / dp`` sequences per attention replica of
    ``KV(context)`` each, split ``kv_split`` ways (:data:`KV_SHARDINGS`: GQA heads over TP up to the KV-head
    count, an MLA latent replicated), or ``ceil(seqs / tp)`` whole sequences a chip (``sequences``)."""
    seqs = micro / w.dp
    if w.layout.kv_sharding == "sequences":
        return np.ceil(seqs / w.tp) * w.kv_per_sequence
    return seqs * w.kv_per_sequence / w.kv_split


def step_flops(w: Worker, micro) -> np.ndarray:
    """FLOPs one chip does in a step: ``micro x`` :meth:`~jalapeno.specs.ModelSpec.decode_flops_per_token`
    (2 x active weights + attention over the context) over a stage's chips."""
    return micro * w.flops_per_token / w.stage


def allreduce_s(w: Worker, micro) -> np.ndarray:
    """Tensor-parallel all-reduces of a step (s): 2 per layer (after attention and after the MLP) of the
    replica's ``micro / dp`` tokens x hidden x :data:`ALLREDUCE_BYTES` over its ``tp`` chips,
    :func:`jalapeno.network.all_reduce_s` with fixed latency :attr:`Efficiency.alpha_s` (modeling reference)."""
    act = w.model.hidden_size * ALLREDUCE_BYTES
    return 2 * w.model.num_hidden_layers * _by_size(w.tp, lambda k, s: network.all_reduce_s(
        w.fabric(k), (micro[s] / w.dp[s]) * act, alpha0_s=w.eff.alpha_s))


def moe_all_to_all_s(model: ModelSpec, fabric: Callable[[int], network.Topology], stage, tokens, alpha_s: float):
    """Expert-parallel dispatch (:data:`DISPATCH_BYTES`) and combine (:data:`COMBINE_BYTES`) of ``tokens``
    tokens a stage over its ``stage`` chips, each of ``k`` experts, ``(N-1)/N`` of them remote, in every MoE
    layer (s): :func:`jalapeno.network.moe_all_to_all_bytes` and :func:`jalapeno.network.all_to_all_s`
    (DeepSeek ISCA 2025 wire precisions; modeling reference)."""
    def a2a(k, s):
        topo, kw = fabric(k), dict(remote_fraction=(k - 1) / k)
        out = [network.moe_all_to_all_bytes(tokens[s] / k, model.num_experts_per_tok, model.hidden_size,
                                            dispatch_bytes=d, combine_bytes=c, **kw)
               for d, c in ((DISPATCH_BYTES, 0.0), (0.0, COMBINE_BYTES))]
        return sum(network.all_to_all_s(topo, m, alpha0_s=alpha_s) for m in out)
    return model.num_moe_layers * _by_size(stage, a2a)


def all_to_all_s(w: Worker, active) -> np.ndarray:
    """The step's MoE all-to-all with ``active`` sequences decoding (s): :func:`moe_all_to_all_s` at the
    worker's full concurrency (:attr:`Worker.all_to_all_full_s`) scaled by ``active / concurrency``, fixed
    latency included: the form ``data/calibration.csv`` was fitted with (only disaggregated workers whose
    prefill holds sequences back have fewer active sequences)."""
    return w.all_to_all_full_s * (active / w.concurrency)


def handoff_s(w: Worker, micro) -> np.ndarray:
    """Pipeline hand-offs of a step (s): ``pp`` x :func:`jalapeno.network.pipeline_handoff_s` of the
    replica's ``micro / dp`` tokens x hidden x :data:`ALLREDUCE_BYTES` over the worker's chips; 0 at ``pp = 1``."""
    if _unpipelined(w.layout.pp):
        return np.zeros(w.n.shape)
    act = w.model.hidden_size * ALLREDUCE_BYTES
    return w.pp * _by_size(np.where(w.pp > 1, w.n, 1), lambda k, s: network.pipeline_handoff_s(
        w.fabric(k), (micro[s] / w.dp[s]) * act))


def overhead_s(w: Worker, micro) -> np.ndarray:
    """Per-layer step overhead (s): ``layers x f x (tau_stack + beta x micro / dp)``, ``f`` the
    :attr:`Worker.layer_factor` (calibrated constants, :class:`Efficiency`)."""
    e = w.eff
    return w.model.num_hidden_layers * w.layer_factor * (w.tau_s + e.beta_s * micro / w.dp)


@dataclass(frozen=True)
class DecodeStep:
    """The terms of one decode step (per chip; s, bytes, FLOPs; arrays of the grid's shape), each the
    result of its function (:func:`decode_terms`): ``weights_s`` is the weight read, the non-expert and
    expert bytes read over the bandwidth (``weight_bytes_read / BW``), split by role into
    ``attention_weights_s``, ``other_weights_s`` and ``expert_weights_s`` (which add up to it, to rounding);
    ``collectives_s`` and ``total_s`` (the step, :func:`decode_step_s`) are sums of the terms."""

    weights_s: np.ndarray
    attention_weights_s: np.ndarray
    other_weights_s: np.ndarray
    expert_weights_s: np.ndarray
    kv_s: np.ndarray
    compute_s: np.ndarray
    allreduce_s: np.ndarray
    all_to_all_s: np.ndarray
    handoff_s: np.ndarray
    overhead_s: np.ndarray
    weight_bytes_read: np.ndarray
    kv_bytes_read: np.ndarray
    flops: np.ndarray

    @property
    def collectives_s(self) -> np.ndarray:
        """All-reduce + all-to-all + pipeline hand-offs (s)."""
        return self.allreduce_s + self.all_to_all_s + self.handoff_s

    @property
    def total_s(self) -> np.ndarray:
        """The decode step (s): :func:`decode_step_s` of these terms."""
        return decode_step_s(self.kv_s, self.weights_s, self.compute_s, self.collectives_s, self.overhead_s)


def decode_terms(w: Worker, active) -> DecodeStep:
    """Every term of a decode step of ``w`` with ``active`` sequences decoding (array of the grid's shape):
    micro-batches of ``active / pp`` sequences go through the stages one after the other."""
    micro = _per_stage(active, w.layout.pp)
    attention, other = non_expert_weights_s(w, micro)
    experts, kv, flops = expert_bytes_read(w.model, w.weights, micro), kv_bytes_read(w, micro), step_flops(w, micro)
    weight_bytes = w.weights.non_expert + experts
    return DecodeStep(weights_s=weight_bytes / w.bandwidth, attention_weights_s=attention, other_weights_s=other, expert_weights_s=experts / w.bandwidth,
                      kv_s=kv / w.bandwidth, compute_s=flops / w.flops, allreduce_s=allreduce_s(w, micro),
                      all_to_all_s=all_to_all_s(w, active), handoff_s=handoff_s(w, micro), overhead_s=overhead_s(w, micro),
                      weight_bytes_read=weight_bytes, kv_bytes_read=kv, flops=flops)


def prefill_s(w: Worker, workload: Workload) -> np.ndarray:
    """Prefill of one mean prompt on the worker's chips of one replica (aggregated) or a prefill worker of
    ``prefill_tp`` chips (disaggregated), ``t`` chips (s): compute-bound with a floor of one read of every
    weight per step of :data:`PREFILL_CHUNK_TOKENS` tokens, which shorter prompts share (``s = min(1, ISL /
    chunk)``): ``max(F_prefill / (t C eta_p), s W / (t BW eta_m)) + s tau_stack f layers``."""
    m, e = w.model, w.eff
    isl_m = workload.mean_lengths[0]
    p_tp = _arr(w.layout.prefill_tp) if w.layout.disagg else w.n / w.dp
    share = min(1.0, isl_m / PREFILL_CHUNK_TOKENS)
    return (np.maximum(m.prefill_flops(int(round(isl_m))) / (p_tp * w.flops / e.eta_compute * e.eta_prefill),
                       share * w.weights.total / (p_tp * w.bandwidth))
            + share * m.num_hidden_layers * w.tau_s * w.layer_factor)


def prefill_interference_s(w: Worker, workload: Workload, prefill) -> np.ndarray:
    """Aggregated serving's chunked prefill (s per step): the prefills of the other users of an attention
    replica that arrive meanwhile, ``max(B / dp - 1, 0) / OSL x T_prefill``; 0 when disaggregated."""
    if w.layout.disagg:
        return np.zeros(w.concurrency.shape)
    return np.maximum(w.concurrency / w.dp - 1, 0) / workload.mean_lengths[1] * prefill


def decoding_sequences(w: Worker, workload: Workload, prefill) -> tuple[np.ndarray, np.ndarray]:
    """(prefill capacity in requests/s, sequences decoding) of a worker: ``(inf, B)`` when aggregated;
    disaggregated, ``prefill_chips / prefill_tp / T_prefill`` and the closed loop's fixed point ``a = min(B,
    capacity x T_step(a) x (OSL - 1) / tokens per step)`` (Little's law on the decode stage,
    :func:`closed_loop_fixed_point`)."""
    if not w.layout.disagg:
        return np.inf, w.concurrency
    rate = (_arr(w.layout.prefill_chips) / _arr(w.layout.prefill_tp)) / prefill
    held_per_s = rate * (workload.mean_lengths[1] - 1) / workload.mtp_tokens_per_step
    return rate, closed_loop_fixed_point(lambda a: held_per_s * decode_terms(w, a).total_s, w.concurrency)


@dataclass(frozen=True)
class Evaluation(DecodeStep):
    """What :func:`evaluate` returns: every array has the broadcast shape of its inputs; SI units; all
    per chip of a worker and per decode step (one token of every sequence decoding) unless named otherwise.

    The decode step is the sum of its parts (:func:`decode_step_s` is its one definition)::

        decode_step_s = kv_s + max(weights_s, compute_s) + collectives_s + overhead_s
        weights_s     = attention_weights_s + expert_weights_s + other_weights_s    (to rounding)
        collectives_s = allreduce_s + all_to_all_s + handoff_s
        tpot_s        = (decode_step_s + draft_s + prefill_interference_s) / tokens_per_step

    The decode step's terms are the fields of :class:`DecodeStep`, which it extends (declared once).
    Parts, each the result of one term function (:func:`decode_terms`, :func:`prefill_s`, ...):
    ``weights_s`` (weight bytes read / bandwidth), split by role into ``attention_weights_s``,
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
    ``weight_bytes_per_chip``, ``kv_bytes_per_chip`` and ``fits`` (within the usable share of the tier:
    :func:`capacity`)."""

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
    weight_bytes_per_chip: np.ndarray
    kv_bytes_per_chip: np.ndarray
    fits: np.ndarray

    @property
    def roofline_s(self) -> np.ndarray:
        """``kv_s + max(weights_s, compute_s)`` (s): the memory and compute part of the step."""
        return roofline_s(self.kv_s, self.weights_s, self.compute_s)

    @property
    def decode_step_s(self) -> np.ndarray:
        """The decode step (s): :attr:`DecodeStep.total_s`."""
        return self.total_s

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


def evaluate(model: ModelSpec | str, chip: ChipSpec | str, layout: Layout, workload: Workload, *,
             stack: str = "default", eff: Efficiency = Efficiency(),
             fabric: Callable[[int], network.Topology] | None = None) -> Evaluation:
    """Evaluate one worker configuration per element of the broadcast arrays of ``layout`` (``n_chips``,
    ``dp``, ``pp``, and ``prefill_chips`` when disaggregated) and ``workload`` (``concurrency``): the
    formulas of the module docstring, each term by its own function (:func:`decode_terms`,
    :func:`prefill_s`, :func:`prefill_interference_s`, :func:`decoding_sequences`, :func:`capacity`).

    ``stack``: the serving software whose per-layer overhead applies (:meth:`Efficiency.tau`); ``eff``: the
    calibrated constants; ``fabric(k)``: the topology ``k`` chips of the worker talk over (default
    :func:`scale_up_fabric`), each collective's fixed latency ``eff.alpha_s`` plus the topology's hops.

    Returns an :class:`Evaluation`. Raises CostError above :data:`MAX_CONFIGURATIONS` configurations or
    :data:`MAX_LAYOUT_PASSES` (see :func:`check_configurations`), before any array of that size is made;
    ValueError for a layout and workload that do not broadcast together, an ISL + OSL or
    ``context_tokens`` that is not positive or beyond the model's context window, a chip without the memory
    tier's figures or without a scale-up bandwidth where chips must talk; UnknownNameError for an unknown
    chip, model or precision (``model`` and ``chip`` may be names). :class:`Layout` and :class:`Workload`
    check their own fields."""
    model = model if isinstance(model, ModelSpec) else specs.model(model)
    chip = chip if isinstance(chip, ChipSpec) else specs.chip(chip)
    check_lengths(model, workload)
    shape = grid_shape(layout, workload)
    check_configurations(math.prod(shape))
    check_layouts(layout, shape)
    w = worker(model, chip, layout, workload, stack=stack, eff=eff, fabric=fabric)
    b, tokens = w.concurrency, workload.mtp_tokens_per_step
    isl_m, osl_m = workload.mean_lengths
    prefill = prefill_s(w, workload)
    prefill_rate, active = decoding_sequences(w, workload, prefill)
    step = decode_terms(w, active)
    decode, draft = step.total_s, workload.mtp_draft_cost * (tokens > 1)
    interference = prefill_interference_s(w, workload, prefill)
    if layout.disagg:
        chips = w.n + _arr(layout.prefill_chips)
        kv_transfer = np.full(shape, network.point_to_point_s(
            w.fabric(2), model.kv_bytes_per_sequence(isl_m, workload.recipe(model)[2]), hops=1))
    else:
        chips, kv_transfer = w.n, np.zeros(shape)
    tpot = (decode * (1 + draft) + interference) / tokens
    first = prefill + kv_transfer + decode * (1 + draft) + eff.request_latency_s
    rate = np.minimum(b / (first + tpot * (osl_m - 1)), prefill_rate)
    e2e = b / rate
    memory = _capacity(model, chip, layout, workload, w.weights)
    return Evaluation(
        **{f.name: getattr(step, f.name) for f in fields(DecodeStep)}, draft_s=decode * draft,
        prefill_interference_s=interference, tokens_per_step=float(tokens), prefill_s=prefill,
        kv_transfer_s=kv_transfer, ttft_s=e2e - tpot * (osl_m - 1), e2e_s=e2e,
        throughput_tok_s_chip=rate * (isl_m + osl_m) / chips, chips=chips, n_chips=w.n, concurrency=b,
        active_sequences=active, weight_bytes_per_chip=memory.weight_bytes, kv_bytes_per_chip=memory.kv_bytes,
        fits=memory.fits)


#: Configurations per chunk of :func:`evaluate_grid`: bounds the memory of one evaluation (about 40
#: arrays of this many float64 values, 42 MB) and keeps a grid's arrays from outgrowing the caches (a
#: 4-million grid evaluated in one call is about 2.4x slower on 2 cores). Joining chunks copies every
#: field, which costs more than cache-sized chunks save: 131,072 made ``benchmarks/serving_sweep.py``'s
#: aggregated sweep (a pair's fitting configurations, 46,000 on average, mostly one chunk) 1.3 to 1.4
#: times as fast as 32,768.
GRID_CHUNK = 131_072


def evaluate_grid(model: ModelSpec | str, chip: ChipSpec | str, layout: Layout, workload: Workload, *,
                  chunk: int = GRID_CHUNK, **options) -> Evaluation:
    """:func:`evaluate` over a large grid of ``layout`` x ``workload``, flattened, ``chunk`` configurations
    at a time (:func:`select`), so that peak memory stays bounded (:data:`GRID_CHUNK`). The
    same result as one call, field by field, flattened (1-D, the grid's size); a per-configuration array
    (``prefill_chips``, ``prefill_tp``, ``context_tokens``) travels with its configuration. ``options``:
    :func:`evaluate`'s ``stack``, ``eff``, ``fabric``. ValueError for a non-positive chunk or arrays that
    do not broadcast. A grid of one chunk is :func:`evaluate`'s result, flattened, not copied (a field of
    one value for the whole grid is then a read-only view of the grid's shape)."""
    if chunk < 1:
        raise ValueError(f"chunk must be a positive number of configurations, got {chunk!r}")
    layout, workload = select(layout, workload, slice(None))  # flat, once: each chunk is then a view
    size = math.prod(grid_shape(layout, workload))
    parts = [evaluate(model, chip, *select(layout, workload, slice(i, i + chunk)), **options)
             for i in range(0, size, chunk)]
    shapes = [np.shape(p.concurrency) for p in parts]  # each part's grid (its concurrency is 1-D, the part's size)
    joined = {}
    for f in fields(Evaluation):
        values = [getattr(p, f.name) for p in parts]
        if f.name == "tokens_per_step" and np.ndim(values[0]) == 0:
            joined[f.name] = values[0]
        elif len(parts) == 1:
            joined[f.name] = np.broadcast_to(values[0], shapes[0])
        else:
            joined[f.name] = np.concatenate([np.broadcast_to(v, s) for v, s in zip(values, shapes)])
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
    for k in ((lo,) if lo == hi else np.unique(sizes, sorted=False)):  # any order: the masks are disjoint
        if k > 1:
            mask = sizes == k
            out[mask] = fn(int(k), mask)
    return out


def with_chip(chip: ChipSpec, **changes) -> ChipSpec:
    """A copy of ``chip`` with SI fields changed (what-ifs: ``hbm_bandwidth_bytes_per_s=16e12``)."""
    return replace(chip, **changes)
