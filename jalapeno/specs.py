"""Typed chip and model specifications, loaded from ``data/``, and the quantities derived from them.

All values are SI: bytes, bytes/s, FLOP/s, W, seconds. Unknown values are ``None``, never invented.
Names are case-insensitive and accept the InferenceMAX keys (``gb200``, ``b200-trt``, ``gptoss``,
``dsr1``, ...).

Formulas (with their sources):

- parameter counts: sums of the weight matrices named in each model's published ``config.json``
  (attention projections, SwiGLU MLP ``3 x hidden x width``, routed and shared experts, router,
  embeddings, norms). Golden values: gpt-oss-120b 116.8e9 / 5.13e9, DeepSeek-V3 671.0e9 / 36.6e9
  (37.6e9 with the input embedding), Llama 3.1 70B 70.55e9 (shared/notes/golden-cases.md, case 2).
- KV cache per token per layer: GQA ``2 x n_kv_heads x head_dim`` values; MLA
  ``kv_lora_rank + qk_rope_head_dim`` values (576 for DeepSeek-V3, arXiv 2505.09343 Table 1);
  sliding-window layers hold at most ``sliding_window`` tokens.
- FLOPs per token: ``2 x active parameters`` for the matrix multiplies plus attention
  ``2 x n_heads x (d_qk + d_v)`` per layer per attended token (``4 n_heads d_head S`` for GQA, the
  modeling reference's formula); MLA decode uses the absorbed form (d_qk = 576, d_v = 512), prefill the
  expanded form (d_qk = 192, d_v = 128).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cached_property, lru_cache

import numpy as np
import polars as pl

from . import data as _data
from .errors import UnknownNameError

#: Bytes per weight or KV value for each precision. MXFP4 carries one 8-bit scale per 32 values
#: (OCP Microscaling spec v1.0), NVFP4 one FP8 scale per 16 values (NVIDIA Blackwell docs);
#: plain ``fp4`` is the nominal 4 bits.
BYTES_PER_VALUE = {"fp4": 0.5, "mxfp4": 4.25 / 8, "nvfp4": 4.5 / 8, "fp8": 1.0, "bf16": 2.0, "fp16": 2.0}

#: Which peak-FLOP/s column serves a precision.
COMPUTE_PRECISIONS = ("fp4", "fp8", "bf16")

#: Other names a chip or a model is asked for by (lower case), and the name of ``data/`` each stands for.
CHIP_ALIASES = {"b200-trt": "b200", "jalapeño": "jalapeno", "rubin": "vera-rubin", "ironwood": "tpu7x",
                "groq-3": "groq-3-lpu", "lpu": "groq-3-lpu"}
MODEL_ALIASES = {"gptoss": "gpt-oss-120b", "gpt-oss": "gpt-oss-120b", "dsr1": "deepseek-r1",
                 "deepseek-r1-0528": "deepseek-r1", "deepseek-v3": "deepseek-r1", "kimi-k2.5-1t": "kimi-k2.5",
                 "kimi": "kimi-k2.5", "llama-3.1-70b-instruct": "llama-3.1-70b"}


def bytes_per_value(precision: str) -> float:
    """Bytes per value of ``precision`` (one of :data:`BYTES_PER_VALUE`); raises UnknownNameError."""
    key = str(precision).lower()
    if key not in BYTES_PER_VALUE:
        raise UnknownNameError("precision", precision, sorted(BYTES_PER_VALUE))
    return BYTES_PER_VALUE[key]


@dataclass(frozen=True)
class ChipSpec:
    """One accelerator, SI units, ``None`` where unknown.

    ``generation``: the chip's architecture generation as its maker names it (``Hopper``, ``Blackwell``,
    ``CDNA 4``, ...; ``chips.csv``, with its source in ``generation_source``), empty when not given: the
    unit of the leave-one-generation-out validation (a new generation arrives with software tuned for it).
    ``provenance`` maps each quantity of ``chip_specs.csv`` to ``(status, source, basis)``.
    A custom chip can be built directly, e.g. ``ChipSpec("mychip", "My chip", hbm_bandwidth_bytes_per_s=8e12,
    peak_dense_flops_per_s={"fp8": 5e15})``.
    """

    chip: str
    display_name: str
    vendor: str = ""
    kind: str = "gpu"
    availability: str = "shipping"
    generation: str = ""
    peak_dense_flops_per_s: dict[str, float] = field(default_factory=dict)
    hbm_capacity_bytes: float | None = None
    hbm_bandwidth_bytes_per_s: float | None = None
    hbm_stacks: float | None = None
    sram_bytes: float | None = None
    sram_bandwidth_bytes_per_s: float | None = None
    scale_up_bandwidth_bytes_per_s: float | None = None
    scale_up_domain_chips: float | None = None
    tdp_w: float | None = None
    sustained_power_w: float | None = None
    allin_power_w: float | None = None
    provenance: dict[str, tuple[str, str, str]] = field(default_factory=dict, compare=False, repr=False)

    def peak_flops_per_s(self, precision: str) -> float:
        """Dense peak FLOP/s at ``precision`` (``fp4``, ``fp8``, ``bf16``; MX/NV variants map to fp4).

        A chip without that precision's tensor cores runs it at the next wider precision it has
        (a Hopper GPU runs FP4 weights with FP8 or BF16 math). Raises ValueError when none is known.
        """
        p = {"mxfp4": "fp4", "nvfp4": "fp4", "fp16": "bf16"}.get(precision.lower(), precision.lower())
        if p not in COMPUTE_PRECISIONS:
            raise UnknownNameError("precision", precision, list(COMPUTE_PRECISIONS))
        for q in COMPUTE_PRECISIONS[COMPUTE_PRECISIONS.index(p):]:
            if self.peak_dense_flops_per_s.get(q):
                return self.peak_dense_flops_per_s[q]
        raise ValueError(f"chip {self.chip!r} has no published peak FLOP/s at {precision} or wider")

    def ridge_point_flop_per_byte(self, precision: str) -> float:
        """Roofline ridge point: peak FLOP/s over HBM bytes/s (FLOP per byte). Williams et al., CACM 2009."""
        if not self.hbm_bandwidth_bytes_per_s:
            raise ValueError(f"chip {self.chip!r} has no known HBM bandwidth")
        return self.peak_flops_per_s(precision) / self.hbm_bandwidth_bytes_per_s


@dataclass(frozen=True)
class ModelSpec:
    """One transformer's architecture, fields named as in its published ``config.json``.

    Integers are ``None`` where the field does not apply (no MLA fields for a GQA model).
    """

    model: str
    display_name: str
    hf_repo: str
    attention: str
    num_hidden_layers: int
    hidden_size: int
    vocab_size: int
    tie_word_embeddings: bool
    num_attention_heads: int
    num_key_value_heads: int | None = None
    head_dim: int | None = None
    q_lora_rank: int | None = None
    kv_lora_rank: int | None = None
    qk_nope_head_dim: int | None = None
    qk_rope_head_dim: int | None = None
    v_head_dim: int | None = None
    sliding_window: int | None = None
    num_sliding_window_layers: int | None = None
    num_global_key_value_heads: int | None = None
    global_head_dim: int | None = None
    attention_k_eq_v: bool | None = None
    intermediate_size: int | None = None
    num_dense_layers: int | None = None
    moe_intermediate_size: int | None = None
    n_routed_experts: int | None = None
    num_experts_per_tok: int | None = None
    n_shared_experts: int | None = None
    max_position_embeddings: int | None = None
    published_total_params: float | None = None
    published_active_params: float | None = None
    source: str = ""

    def check_context(self, tokens: float, what: str = "context") -> None:
        """Raise ValueError if ``tokens`` (a count) exceed the model's context window
        (``max_position_embeddings`` of its ``config.json``; no check where ``data/models.csv`` has none)
        or are not positive."""
        if not tokens > 0:
            raise ValueError(f"{what} must be a positive number of tokens, got {tokens!r}")
        if self.max_position_embeddings and tokens > self.max_position_embeddings:
            raise ValueError(f"{what} of {tokens:,.0f} tokens exceeds {self.model}'s context window of "
                             f"{self.max_position_embeddings:,} tokens (max_position_embeddings)")

    # ---- structure -------------------------------------------------------------------------------
    @property
    def is_moe(self) -> bool:
        return bool(self.n_routed_experts)

    @property
    def num_moe_layers(self) -> int:
        return self.num_hidden_layers - (self.num_dense_layers or 0) if self.is_moe else 0

    @property
    def num_sliding_layers(self) -> int:
        return self.num_sliding_window_layers or 0 if self.sliding_window else 0

    # ---- parameters ------------------------------------------------------------------------------
    def _gqa_dims(self, layer: str) -> tuple[int, int, int]:
        """(KV heads, head dim, K and V tensors: 2, or 1 when K equals V) of a ``local`` or ``global`` layer.
        Models whose full-attention layers differ (Gemma 4: ``num_global_key_value_heads``,
        ``global_head_dim``, ``attention_k_eq_v``) use the global fields on their full layers."""
        d = self.head_dim or self.hidden_size // self.num_attention_heads
        if layer == "global" and self.num_global_key_value_heads:
            return self.num_global_key_value_heads, self.global_head_dim or d, 1 if self.attention_k_eq_v else 2
        return self.num_key_value_heads, d, 2

    def attention_params_per_layer(self, layer: str = "local") -> int:
        """Weights of one attention block (projections and MLA's low-rank norms), no biases."""
        h, n = self.hidden_size, self.num_attention_heads
        if self.attention == "mla":
            d_qk = self.qk_nope_head_dim + self.qk_rope_head_dim
            q = (h * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * n * d_qk) if self.q_lora_rank \
                else h * n * d_qk
            kv = h * (self.kv_lora_rank + self.qk_rope_head_dim) + self.kv_lora_rank \
                + self.kv_lora_rank * n * (self.qk_nope_head_dim + self.v_head_dim)
            return q + kv + n * self.v_head_dim * h
        kv_heads, d, kv_tensors = self._gqa_dims(layer)
        return 2 * h * n * d + kv_tensors * h * kv_heads * d

    def expert_params(self) -> int:
        """Weights of one routed (or shared) expert: SwiGLU ``3 x hidden x moe_intermediate_size``."""
        return 3 * self.hidden_size * (self.moe_intermediate_size or 0)

    def param_groups(self) -> dict[str, float]:
        """Weights by role (counts of parameters): ``attention`` (projections and the layers' RMSNorms),
        ``dense_mlp``, ``router``, ``shared_experts``, ``routed_experts`` (all of them), ``embedding``,
        ``unembedding`` (0 when tied), ``final_norm``."""
        return dict(self._param_groups)

    @cached_property
    def _param_groups(self) -> dict[str, float]:  # a frozen spec's counts: worked out once
        h = self.hidden_size
        n_global = self.num_hidden_layers - self.num_sliding_layers
        moe = self.num_moe_layers
        return {
            "attention": self.num_sliding_layers * self.attention_params_per_layer("local")
            + n_global * self.attention_params_per_layer("global") + self.num_hidden_layers * 2 * h,
            "dense_mlp": (self.num_hidden_layers - moe) * 3 * h * (self.intermediate_size or 0),
            "router": moe * h * (self.n_routed_experts or 0),
            "shared_experts": moe * (self.n_shared_experts or 0) * self.expert_params(),
            "routed_experts": moe * (self.n_routed_experts or 0) * self.expert_params(),
            "embedding": self.embedding_params(),
            "unembedding": 0 if self.tie_word_embeddings else self.embedding_params(),
            "final_norm": h,
        }

    def embedding_params(self) -> int:
        """Input embedding ``vocab x hidden`` (the unembedding is the same size, counted once more when untied)."""
        return self.vocab_size * self.hidden_size

    def total_params(self) -> float:
        """All weights of the text model (MTP modules and vision towers excluded)."""
        return float(sum(self.param_groups().values()))

    def routed_active_params(self) -> float:
        """Routed-expert weights one token uses: ``num_experts_per_tok`` experts in each MoE layer."""
        return self.num_moe_layers * (self.num_experts_per_tok or 0) * self.expert_params()

    def active_params(self, *, include_input_embedding: bool = False) -> float:
        """Weights used per token: routed experts counted ``num_experts_per_tok`` times. The input
        embedding is a table look-up, so it is excluded unless asked for; the output projection is a
        matmul, so it is included (tied or not)."""
        g = self.param_groups()
        dense = g["attention"] + g["dense_mlp"] + g["router"] + g["shared_experts"] + g["final_norm"]
        emb = g["embedding"] if include_input_embedding else 0
        return float(dense + self.routed_active_params() + self.embedding_params() + emb)

    def weight_bytes(self, precision: str = "bf16") -> float:
        """Bytes of all weights at one ``precision`` (see :data:`BYTES_PER_VALUE`)."""
        return self.total_params() * bytes_per_value(precision)

    def active_weight_bytes(self, precision: str = "bf16") -> float:
        """Bytes read per token at batch 1 (active weights, unembedding included)."""
        return self.active_params() * bytes_per_value(precision)

    # ---- KV cache --------------------------------------------------------------------------------
    def kv_values_per_token_per_layer(self, layer: str = "global") -> int:
        """Values cached per token in one ``global`` (full-attention) or ``local`` (sliding) layer:
        GQA ``2 n_kv_heads head_dim`` (1x when K equals V); MLA ``kv_lora_rank + qk_rope_head_dim``."""
        if self.attention == "mla":
            return self.kv_lora_rank + self.qk_rope_head_dim
        kv_heads, d, kv_tensors = self._gqa_dims(layer)
        return kv_tensors * kv_heads * d

    def kv_bytes_per_token(self, kv_precision: str = "bf16") -> float:
        """KV bytes per token over all layers, as if every layer held every token (the ISCA 2025 table)."""
        n_global = self.num_hidden_layers - self.num_sliding_layers
        values = n_global * self.kv_values_per_token_per_layer("global") \
            + self.num_sliding_layers * self.kv_values_per_token_per_layer("local")
        return values * bytes_per_value(kv_precision)

    def kv_bytes_per_sequence(self, context_tokens, kv_precision: str = "bf16"):
        """KV bytes of one sequence of ``context_tokens`` (scalar or array): full-attention layers hold
        every token, sliding-window layers at most ``sliding_window``."""
        s = np.asarray(context_tokens, dtype=float)
        b = bytes_per_value(kv_precision)
        full = (self.num_hidden_layers - self.num_sliding_layers) * self.kv_values_per_token_per_layer("global")
        local = self.num_sliding_layers * self.kv_values_per_token_per_layer("local")
        out = b * (full * s + local * np.minimum(s, self.sliding_window or 0))
        return float(out) if out.ndim == 0 else out

    # ---- FLOPs -----------------------------------------------------------------------------------
    def _attn_dims(self, phase: str) -> tuple[int, int]:
        if self.attention == "mla":
            if phase == "decode":  # absorbed: attend over the latent
                return self.kv_lora_rank + self.qk_rope_head_dim, self.kv_lora_rank
            return self.qk_nope_head_dim + self.qk_rope_head_dim, self.v_head_dim
        d = self.head_dim or self.hidden_size // self.num_attention_heads
        return d, d

    def attended_tokens(self, context_tokens):
        """Sum over layers of the tokens one new token attends to at ``context_tokens`` (array-friendly)."""
        s = np.asarray(context_tokens, dtype=float)
        full = self.num_hidden_layers - self.num_sliding_layers
        return full * s + self.num_sliding_layers * np.minimum(s, self.sliding_window or 0)

    def decode_flops_per_token(self, context_tokens):
        """FLOPs to generate one token at ``context_tokens`` of context: ``2 P_active`` plus attention
        ``2 n_heads (d_qk + d_v)`` per attended token per layer."""
        d_qk, d_v = self._attn_dims("decode")
        out = 2 * self.active_params() + 2 * self.num_attention_heads * (d_qk + d_v) * self.attended_tokens(context_tokens)
        return float(out) if np.ndim(out) == 0 else out

    def prefill_flops(self, prompt_tokens: int) -> float:
        """FLOPs to prefill a prompt of ``prompt_tokens``: ``2 (P_active - P_unembedding)`` per token, the
        output projection once (serving stacks compute logits for the last prompt token only: vLLM,
        SGLang and TensorRT-LLM without prompt log-probabilities, as the benchmark runs them), plus causal
        attention ``2 n_heads (d_qk + d_v)`` per attended pair (token i attends to min(i, window) tokens)."""
        s = int(prompt_tokens)
        d_qk, d_v = self._attn_dims("prefill")
        full = self.num_hidden_layers - self.num_sliding_layers
        w = self.sliding_window or 0
        causal_full = s * (s + 1) / 2
        causal_sliding = (w * (w + 1) / 2 + (s - w) * w) if s > w else causal_full
        attended = full * causal_full + self.num_sliding_layers * causal_sliding
        logits = self.embedding_params()  # the output projection, tied or not
        return (2 * (self.active_params() - logits) * s + 2 * logits
                + 2 * self.num_attention_heads * (d_qk + d_v) * attended)


# ---- registry --------------------------------------------------------------------------------------

_SPEC_FIELD = {
    "hbm_capacity": "hbm_capacity_bytes", "hbm_bandwidth": "hbm_bandwidth_bytes_per_s", "hbm_stacks": "hbm_stacks",
    "sram_capacity": "sram_bytes", "sram_bandwidth": "sram_bandwidth_bytes_per_s",
    "scale_up_bandwidth": "scale_up_bandwidth_bytes_per_s", "scale_up_domain": "scale_up_domain_chips",
    "tdp": "tdp_w", "sustained_power": "sustained_power_w", "allin_power": "allin_power_w",
}


def resolve_name(kind: str, name: object, valid: list[str], aliases: dict[str, str]) -> str:
    """``name`` as one of ``valid``: lower-cased, stripped and looked up in ``aliases`` (:data:`CHIP_ALIASES`,
    :data:`MODEL_ALIASES`) first; UnknownNameError naming the ``kind`` and listing ``valid`` otherwise."""
    key = str(name).strip().lower()
    key = aliases.get(key, key)
    if key not in valid:
        raise UnknownNameError(kind, name, valid)
    return key


def chip_names() -> list[str]:
    """The chip keys of ``data/chips.csv``."""
    return list(_data.load("chips.csv")["chip"])


def hbm_chip_names() -> list[str]:
    """The chips the serving model and the roofline can time: those with an HBM bandwidth and a dense
    peak FLOP/s figure (not Groq's LPU, which holds its weights in SRAM: :mod:`jalapeno.systems`)."""
    return [n for n in chip_names() if chip(n).hbm_bandwidth_bytes_per_s and chip(n).peak_dense_flops_per_s]


def model_names() -> list[str]:
    """The model keys of ``data/models.csv``."""
    return list(_data.load("models.csv")["model"])


def chip(name: str | ChipSpec) -> ChipSpec:
    """The :class:`ChipSpec` of a chip named in ``data/chips.csv`` (case-insensitive; InferenceMAX keys
    such as ``b200-trt`` accepted). A ChipSpec passes through. Raises UnknownNameError listing the chips."""
    if isinstance(name, ChipSpec):
        return name
    return _chip(resolve_name("chip", name, chip_names(), CHIP_ALIASES), str(_data.data_dir()))


@lru_cache(maxsize=None)
def _chip(key: str, folder: str) -> ChipSpec:
    row = _data.load("chips.csv").row(by_predicate=pl.col("chip") == key, named=True)
    kwargs: dict = {"peak_dense_flops_per_s": {}, "provenance": {}}
    for r in _data.chip_specs_si().filter(chip=key).iter_rows(named=True):
        q = r["quantity"]
        kwargs["provenance"][q] = (r["status"], r["source"], r["basis"] or "")
        if q.startswith("peak_dense_flops_"):
            kwargs["peak_dense_flops_per_s"][q.removeprefix("peak_dense_flops_")] = r["value_si"]
        else:
            kwargs[_SPEC_FIELD[q]] = r["value_si"]
    return ChipSpec(chip=key, display_name=row["display_name"], vendor=row["vendor"], kind=row["kind"],
                    availability=row["availability"], generation=row["generation"], **kwargs)


def model(name: str | ModelSpec) -> ModelSpec:
    """The :class:`ModelSpec` of a model named in ``data/models.csv`` (case-insensitive; InferenceMAX
    prefixes ``gptoss`` and ``dsr1`` accepted). Raises UnknownNameError listing the models."""
    if isinstance(name, ModelSpec):
        return name
    return _model(resolve_name("model", name, model_names(), MODEL_ALIASES), str(_data.data_dir()))


@lru_cache(maxsize=None)
def _model(key: str, folder: str) -> ModelSpec:
    row = _data.load("models.csv").row(by_predicate=pl.col("model") == key, named=True)
    names = {f.name for f in fields(ModelSpec)}
    return ModelSpec(**{k: v for k, v in row.items() if k in names})


def short_name(which: ChipSpec | str) -> str:
    """A chip's name as a chart's legend or a table's cell writes it: its ``display_name``
    (``data/chips.csv``) without the vendor in front and the words in parentheses at the end
    (``NVIDIA GB200 (Blackwell GPU in GB200 NVL72)`` -> ``GB200``, ``OpenAI Jalapeño`` -> ``Jalapeño``).
    UnknownNameError for an unknown chip."""
    c = chip(which)
    name = c.display_name.split(" (")[0].strip() if c.display_name.endswith(")") else c.display_name
    if c.vendor and name.startswith(c.vendor + " ") and len(name) > len(c.vendor) + 1:
        name = name[len(c.vendor) + 1:]
    return name
