"""The serving model: one evaluator that turns (chip, model, layout, concurrency, workload, stack) into
decode step time, TPOT, TTFT, E2E and throughput per chip, for whole grids of configurations at once.

A configuration is one *worker*: ``n_chips`` chips serving ``concurrency`` sequences together, the
attention split ``dp`` ways by data parallelism (DP-attention) and ``n_chips / dp`` ways by tensor
parallelism, the experts of an MoE model spread over all ``n_chips`` (expert parallelism when ``ep``,
else tensor-parallel experts). Workers are independent, so throughput per chip does not depend on how
many run side by side. Optionally prefill runs on separate chips (disaggregated serving).

Decode step of one worker (per chip; SI units)::

    T_decode = KV / (BW eta_m) + max( W(B) / (BW eta_m), F / (C eta_c) )      (roofline, scaling-book form)
             + TP all-reduce: 2 per layer x (alpha + 2 (t-1)/t x B_attn h a / W_link)    (alpha-beta, switched)
             + EP all-to-all: 2 per MoE layer x alpha + B k h (1 + 2) / N x (N-1)/N / W_link
             + layers x f x (tau_stack + beta x B / dp)    (per-step overhead: the stack's, and per sequence)

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
request rate at ``prefill workers / T_prefill``. The benchmark is a closed loop of ``B`` users, so the
request rate is ``min(B / (T_prefill + T_step + TPOT (OSL - 1)), prefill capacity)`` (the asymptotic
bound of mean-value analysis, the first token after ``T_prefill + T_step`` plus a fixed request latency
``lambda`` outside the chips); ``E2E = B / rate``, ``TTFT = E2E - TPOT (OSL - 1)`` includes the wait in
the prefill queue, and throughput per chip counts input + output tokens over every chip
(``rate x (ISL + OSL) / chips``), the benchmark's way. Speculative
decoding (MTP) is an option, off by default: ``a`` accepted tokens per step at a draft cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from . import data as _data
from .metrics import mean_request_length
from .roofline import expected_distinct_experts
from .specs import ChipSpec, ModelSpec, bytes_per_value

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
    """(expert weights, other weights, KV cache) precisions for ``model`` served at ``precision``."""
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
        return self.tau_s.get(stack, self.tau_s.get("default", float(np.median(list(self.tau_s.values())))))


def usable_hbm_fraction() -> float:
    """The share of a chip's HBM weights and KV cache may fill (``data/model_constants.csv``,
    ``usable_hbm_fraction``, with its basis)."""
    return _data.model_constant("usable_hbm_fraction")


def _arr(x) -> np.ndarray:
    return np.asarray(x, dtype=float)


def evaluate(model: ModelSpec, chip: ChipSpec, *, n_chips, concurrency, dp=1, ep=True, isl=8192, osl=1024,
             precision: str = "fp4", stack: str = "default", eff: Efficiency = Efficiency(),
             disagg: bool = False, prefill_chips=None, prefill_tp=1, mtp_tokens_per_step: float = 1.0,
             mtp_draft_cost: float = 0.15, hbm_bandwidth_bytes_per_s: float | None = None) -> dict[str, np.ndarray]:
    """Evaluate one worker configuration per element of the broadcast arrays ``n_chips``, ``concurrency``,
    ``dp`` (and ``prefill_chips`` when ``disagg``).

    ``isl``/``osl`` are the benchmark's nominal lengths (requests average 0.9x of them). Returns a dict of
    arrays: ``tpot_s``, ``ttft_s``, ``e2e_s``, ``interactivity_tok_s_user``, ``throughput_tok_s_chip``,
    ``decode_step_s``, ``prefill_s``, ``comm_s``, ``overhead_s``, ``chips``, ``fits`` (weights and KV in
    HBM) and ``kv_bytes_per_chip``. Raises ValueError for non-positive chips or concurrency, or a ``dp``
    that does not divide ``n_chips``."""
    n, b, dp = np.broadcast_arrays(_arr(n_chips), _arr(concurrency), _arr(dp))
    if np.any(n <= 0) or np.any(b <= 0) or np.any(dp <= 0):
        raise ValueError("n_chips, concurrency and dp must be positive")
    if np.any(np.mod(n, dp) != 0):
        raise ValueError(f"dp must divide n_chips (got n_chips={n_chips!r}, dp={dp!r})")
    tp = n / dp
    w_exp, w_rest, kv_prec = recipe(model, precision)
    b_exp, b_rest = bytes_per_value(w_exp), bytes_per_value(w_rest)
    bw = (hbm_bandwidth_bytes_per_s or chip.hbm_bandwidth_bytes_per_s) * eff.eta_mem
    # math at the experts' precision where the chip has it, else at the activations' (W4A16 on Hopper)
    flops = chip.peak_flops_per_s(w_exp if chip.peak_dense_flops_per_s.get("fp4") or w_exp in ("fp8", "bf16")
                                  else w_rest) * eff.eta_compute
    link = (chip.scale_up_bandwidth_bytes_per_s or 0.0) / 2  # per direction
    layers = model.num_hidden_layers
    g = model.param_groups()
    isl_m, osl_m = mean_request_length(isl), mean_request_length(osl)
    ctx = isl_m + osl_m / 2  # mean context while decoding

    # weights per chip: non-expert parts split over TP ways, experts spread over all chips
    rest = (g["attention"] + g["dense_mlp"] + g["router"] + g["shared_experts"] + g["unembedding"] + g["final_norm"])
    rest_bytes = rest * b_rest / tp
    if model.is_moe:
        touched = expected_distinct_experts(model.n_routed_experts, model.num_experts_per_tok, b)
        expert_read = model.num_moe_layers * touched * model.expert_params() * b_exp / n
        expert_held = g["routed_experts"] * b_exp / n
    else:
        expert_read = expert_held = np.zeros_like(n)
    weights_read = rest_bytes + expert_read  # at the full concurrency (the disaggregated loop recomputes)
    # KV: sequences per attention replica; GQA heads split over TP (up to the KV-head count), MLA replicated
    seqs = b / dp
    kv_split = np.minimum(tp, model.num_key_value_heads or 1) if model.attention == "gqa" else 1.0
    kv_read = seqs * model.kv_bytes_per_sequence(ctx, kv_prec) / kv_split
    kv_held = seqs * model.kv_bytes_per_sequence(isl + osl, kv_prec) / kv_split
    fits = rest_bytes + expert_held + kv_held <= (chip.hbm_capacity_bytes or np.inf) * usable_hbm_fraction()
    step_flops = b * model.decode_flops_per_token(ctx) / n
    roof = kv_read / bw + np.maximum(weights_read / bw, step_flops / flops)

    # communication (alpha-beta, switched scale-up domain)
    def allreduce_at(active):
        return np.where(tp > 1, 2 * layers * (eff.alpha_s + 2 * (tp - 1) / tp * (active / dp) * model.hidden_size
                                              * ALLREDUCE_BYTES / max(link, 1.0)), 0.0)

    allreduce = allreduce_at(b)
    if model.is_moe and ep:
        a2a_bytes = b * model.num_experts_per_tok * model.hidden_size * (DISPATCH_BYTES + COMBINE_BYTES) / n * (n - 1) / n
        all2all = np.where(n > 1, model.num_moe_layers * (2 * eff.alpha_s + a2a_bytes / max(link, 1.0)), 0.0)
    else:
        all2all = np.zeros_like(n)
    comm = allreduce + all2all
    layer_factor = eff.mla_layer_factor if model.attention == "mla" else 1.0
    overhead = layers * layer_factor * (eff.tau(stack) + eff.beta_s * b / dp)
    decode = roof + comm + overhead

    def _decode_at(active):
        """Decode step with ``active`` sequences (same layout): roofline + communication + overhead."""
        if model.is_moe:
            t = expected_distinct_experts(model.n_routed_experts, model.num_experts_per_tok, active)
            w = rest_bytes + model.num_moe_layers * t * model.expert_params() * b_exp / n
        else:
            w = rest_bytes
        kv = (active / dp) * model.kv_bytes_per_sequence(ctx, kv_prec) / kv_split
        f = active * model.decode_flops_per_token(ctx) / n
        scale = active / b
        return kv / bw + np.maximum(w / bw, f / flops) + allreduce_at(active) + all2all * scale \
            + layers * layer_factor * (eff.tau(stack) + eff.beta_s * active / dp)

    # prefill of one mean prompt, on the worker's TP group (aggregated) or a prefill worker (disaggregated)
    p_tp = _arr(prefill_tp) if disagg else tp
    p_flops = model.prefill_flops(int(round(isl_m)))
    # one prefill step reads every weight once for up to PREFILL_CHUNK_TOKENS tokens: short prompts share it
    all_weight_bytes = rest * b_rest + (g["routed_experts"] * b_exp if model.is_moe else 0.0)
    share = min(1.0, isl_m / PREFILL_CHUNK_TOKENS)
    prefill = (np.maximum(p_flops / (p_tp * flops / eff.eta_compute * eff.eta_prefill), share * all_weight_bytes / (p_tp * bw))
               + share * layers * eff.tau(stack) * layer_factor)

    step = decode * (1 + mtp_draft_cost * (mtp_tokens_per_step > 1))
    if disagg:
        p_chips = _arr(prefill_chips)
        capacity = (p_chips / p_tp) / prefill  # prefill requests/s
        kv_transfer = model.kv_bytes_per_sequence(isl_m, kv_prec) / max(link, 1.0)
        active = b.copy()
        for _ in range(8):  # sequences decoding, when prefill holds the rest back (fixed point)
            t_act = _decode_at(active)
            active = np.minimum(b, capacity * t_act * (osl_m - 1) / mtp_tokens_per_step)
        tpot = _decode_at(active) * (1 + mtp_draft_cost * (mtp_tokens_per_step > 1)) / mtp_tokens_per_step
        first = prefill + kv_transfer + step + eff.request_latency_s
        chips = n + p_chips
    else:
        capacity = np.inf
        tpot = (step + np.maximum(b / dp - 1, 0) / osl_m * prefill) / mtp_tokens_per_step
        first = prefill + step + eff.request_latency_s
        chips = n
    rate = np.minimum(b / (first + tpot * (osl_m - 1)), capacity)
    e2e = b / rate
    ttft = e2e - tpot * (osl_m - 1)
    throughput = rate * (isl_m + osl_m) / chips
    return {"tpot_s": tpot, "ttft_s": ttft, "e2e_s": e2e, "interactivity_tok_s_user": 1.0 / tpot,
            "throughput_tok_s_chip": throughput, "decode_step_s": decode, "prefill_s": prefill,
            "comm_s": comm, "overhead_s": overhead, "chips": chips, "fits": fits,
            "kv_bytes_per_chip": kv_held}


def with_chip(chip: ChipSpec, **changes) -> ChipSpec:
    """A copy of ``chip`` with SI fields changed (what-ifs: ``hbm_bandwidth_bytes_per_s=16e12``)."""
    return replace(chip, **changes)
