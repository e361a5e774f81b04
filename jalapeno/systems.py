"""Systems as machines: racks, pods and slices (``data/systems.csv``, ``data/system_specs.csv``), what they
hold, and how their fabrics shape decode.

A :class:`System` is a chip (:mod:`jalapeno.specs`) times a fabric (:class:`jalapeno.network.Topology`
with the system's hop latency and the chip's injection bandwidth). On top of it this module models:

- **capacity**: the fewest chips that hold the weights plus the KV cache of ``concurrency`` sequences of a
  context, per memory tier (on-chip SRAM, HBM, HBM + host memory), each at its usable share:
  :func:`jalapeno.capacity_plans.fewest_chips`, the smallest ``t`` with ``ceil(W / t) + ceil(c x KV(S) / t)
  <= usable bytes per chip``;
- **LPU decode** (:func:`lpu_decode`): a model spread over ``stages`` pipeline stages of ``tp`` chips each,
  weights and KV cache in SRAM: the serving model (:func:`jalapeno.serving.evaluate`) with the SRAM
  memory tier, ``pp = stages``, ideal constants and the system's fabric. Per stage and micro-batch of
  ``b`` sequences::

      t_stage = KV_b / (S BW) + max(W(b) / (S tp BW), b F / (S tp C))
              + 2 (L / S) x all-reduce(b h a)  [tp > 1]  + hand-off(b h a)  [S > 1]

  with ``S`` stages; ``KV_b`` the KV one chip reads: GQA heads split ``min(tp, KV heads)`` ways (``b KV /
  min(tp, heads)``, replicated beyond), an MLA latent kept whole with sequences spread over the stage's
  chips (``ceil(b / tp) KV``, the serving model's ``kv_sharding="sequences"``); ``W(b)`` the weight
  bytes a step of ``b`` tokens reads, ``L`` layers, ``h`` hidden size, ``a`` activation bytes; the
  collectives from :mod:`jalapeno.network` on the stage's group and, for hand-offs, the system's fabric.
  A token visits every stage: ``TPOT = S t_stage``; a full
  pipeline holds ``S`` micro-batches, so the system emits ``b / t_stage`` tokens/s. Hence the chapter's
  point: per chip ``b / (N t_stage)`` falls as chips are added, because the per-hop and all-reduce latencies
  grow with the chip count while the SRAM time of the whole model does not shrink below ``W / (tp BW)``.
- **disaggregation** (:func:`disaggregated_frontier`): prefill on GPUs (the serving model's prefill time,
  :func:`jalapeno.serving.evaluate`), decode on LPUs, and the GPU-only and Jalapeño systems through
  :func:`jalapeno.serving.evaluate`, as throughput per chip against interactivity;
- **TPU 8t against 8i** (:func:`tpu_all_to_all`): the decode all-to-all of the published MoE models on a
  1,024-chip 3D torus and on a Boardfly of the same size;
- **Jalapeño's fabric** (:func:`jalapeno_fabric_scan`): which scale-up domain sizes, topologies and
  per-hop latencies let the serving model reach the published single-user speeds, each collective timed
  on that fabric by :mod:`jalapeno.network`.

Units: SI (bytes, bytes/s, FLOP/s, s). Names are case-insensitive; an unknown one raises
UnknownNameError listing the valid names.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from . import bounds, calibration, capacity_plans, network, pareto, serving, specs, subject
from . import data as _data
from .errors import UnknownNameError
from .pareto import best_stack  # noqa: F401  (re-exported: tests/test_systems.py uses it from here)
from .metrics import mean_request_length, pareto_envelope
from .specs import ChipSpec, ModelSpec

#: Bytes per weight for the LPU's weight widths (the seeds' "8 bits" arithmetic) and their precision names.
WEIGHT_BITS = {4: "fp4", 8: "fp8", 16: "bf16"}


def check_weight_bits(weight_bits: object, where: str = "") -> None:
    """UnknownNameError for a ``weight_bits`` the LPU has no width of (:data:`WEIGHT_BITS`), naming the
    valid ones (``where``: where the value was given)."""
    if weight_bits not in WEIGHT_BITS:
        raise UnknownNameError("LPU weight width", weight_bits, [str(b) for b in WEIGHT_BITS], where=where)


#: The kinds of hypothetical scale-up fabric :func:`fabric_topology` builds.
FABRICS = ("switched", "ring", "torus2d", "torus3d", "dragonfly")


@dataclass(frozen=True)
class System:
    """One machine: ``chip``, ``topology`` (hop latency and injection bandwidth filled in), host memory
    per chip (bytes, ``None`` if unknown), dense FP8 FLOP/s per chip (from the chip, else the system's
    published total over its chips) and ``provenance`` (quantity -> (status, source, basis))."""

    system: str
    display_name: str
    chip: ChipSpec
    topology: network.Topology
    host_memory_bytes_per_chip: float | None = None
    peak_fp8_flops_per_s_per_chip: float | None = None
    provenance: dict[str, tuple[str, str, str]] = field(default_factory=dict, compare=False, repr=False)

    @property
    def n_chips(self) -> int:
        return self.topology.n_chips

    def with_top_level(self, units: int, *, add: bool = False) -> "System":
        """The same machine with ``units`` units at the top of its Dragonfly: the last level replaced (a
        Boardfly of 32 groups instead of 36) or, with ``add``, one more level added (LPX racks joined by one
        link per pair of racks; ``units`` = 1 adds nothing). ValueError for a fabric that is not a Dragonfly."""
        t = self.topology
        if t.kind != "dragonfly":
            raise ValueError(f"system {self.system!r} ({t.label}) is not a Dragonfly; its size is fixed")
        if units < 1:
            raise ValueError(f"units must be positive, got {units!r}")
        shape = (t.shape + (units,) if units > 1 else t.shape) if add else t.shape[:-1] + (units,)
        return replace(self, topology=replace(t, shape=shape))


def system_names() -> list[str]:
    """The system keys of ``data/systems.csv``."""
    return list(_data.systems_table()["system"])


def system(name: str | System) -> System:
    """The :class:`System` named in ``data/systems.csv`` (case-insensitive). Its topology gets the hop
    latency of ``system_specs.csv`` and the chip's scale-up bandwidth / 2 as injection bandwidth (the
    system's own ``scale_up_bandwidth`` row where the chip has none). Raises UnknownNameError."""
    if isinstance(name, System):
        return name
    key = str(name).strip().lower()
    valid = system_names()
    if key not in valid:
        raise UnknownNameError("system", name, valid)
    row = _data.systems_table().row(by_predicate=pl.col("system") == key, named=True)
    chip = specs.chip(row["chip"])
    facts, prov = {}, {"shape": ("described", row["source"], row["basis"])}  # the basis says what is modelled
    for r in _data.system_specs_si().filter(system=key).iter_rows(named=True):
        facts[r["quantity"]] = r["value_si"]
        prov[r["quantity"]] = (r["status"], r["source"], r["basis"] or "")
    bidir = chip.scale_up_bandwidth_bytes_per_s or facts.get("scale_up_bandwidth") or 0.0
    topo = network.topology(row["topology"], row["shape"], hop_latency_s=facts.get("hop_latency", 0.0),
                            injection_bandwidth_bytes_per_s=bidir / 2)
    flops = chip.peak_dense_flops_per_s.get("fp8")
    if not flops and facts.get("peak_dense_flops_fp8"):
        flops = facts["peak_dense_flops_fp8"] / topo.n_chips
    return System(key, row["display_name"], chip, topo, facts.get("host_memory"), flops, prov)


def systems_table(names: list[str] | None = None) -> pl.DataFrame:
    """One row per system: ``system``, ``chip``, :meth:`jalapeno.network.Topology.describe` columns, and
    the status of its hop latency."""
    rows = []
    for n in names or system_names():
        s = system(n)
        rows.append({"system": s.system, "chip": s.chip.chip, **s.topology.describe(),
                     "hop_latency_status": s.provenance.get("hop_latency", ("unknown",))[0]})
    return pl.DataFrame(rows)


# ---- Groq 3 LPX: the rack's totals and SRAM capacity ----------------------------------------------------

def lpx_rack_totals(name: str = "groq-3-lpx") -> dict[str, float]:
    """Totals of one LPX rack from the per-chip data: ``chips``, ``sram_bytes`` (chips x SRAM per LPU),
    ``sram_bandwidth_bytes_per_s``, ``scale_up_bandwidth_bytes_per_s`` (both directions summed),
    ``peak_fp8_flops_per_s``."""
    s = system(name)
    n = s.n_chips
    return {"chips": n, "sram_bytes_per_chip": s.chip.sram_bytes, "sram_bytes": n * s.chip.sram_bytes,
            "sram_bandwidth_bytes_per_s": n * s.chip.sram_bandwidth_bytes_per_s,
            "scale_up_bandwidth_bytes_per_s": n * (s.chip.scale_up_bandwidth_bytes_per_s or 0.0),
            "peak_fp8_flops_per_s": n * (s.peak_fp8_flops_per_s_per_chip or 0.0)}


def sram_capacity_table(models: list[ModelSpec], name: str = "groq-3-lpx", *, weight_bits: int = 8,
                        concurrency: int = 0, context_tokens: int = 8192, kv_precision: str = "fp8") -> pl.DataFrame:
    """Chips (and racks) whose SRAM holds each model's weights at ``weight_bits`` plus the KV cache of
    ``concurrency`` sequences of ``context_tokens`` (:func:`jalapeno.bounds.sram_chips`): ``model``,
    ``weight_bytes``, ``kv_bytes``, ``chips``, ``chips_exact`` (``(weight + KV bytes) / SRAM bytes per
    chip``, before rounding up to whole chips), ``racks`` (fractional), ``whole_racks``."""
    s = system(name)
    rows = []
    for m in models:
        kv = concurrency * m.kv_bytes_per_sequence(context_tokens, kv_precision)
        n = bounds.sram_chips(m, s.chip, weight_bits=weight_bits, kv_bytes=kv)
        w = m.total_params() * weight_bits / 8
        rows.append({"model": m.model, "weight_bytes": w, "kv_bytes": float(kv), "chips": n,
                     "chips_exact": (w + kv) / s.chip.sram_bytes, "racks": n / s.n_chips,
                     "whole_racks": math.ceil(n / s.n_chips)})
    return pl.DataFrame(rows)


# ---- capacity across tiers ----------------------------------------------------------------------------------

def _capacity_row(label: str, chip: ChipSpec, m: ModelSpec, ctx: int, tier: str, host: float | None,
                  concurrency: int, weight_precision: str, kv_precision: str, chips_per_system: int | None) -> dict | None:
    """One row of :func:`capacity_table` (``None`` where the chip lacks the tier): :func:`jalapeno.capacity_plans.fewest_chips`."""
    if capacity_plans.tier_usable_bytes(chip, tier, host_memory_bytes_per_chip=host) is None:
        return None
    f = capacity_plans.fewest_chips(chip, m, precision=weight_precision, kv_precision=kv_precision,
                                    concurrency=concurrency, context_tokens=ctx, tier=tier,
                                    host_memory_bytes_per_chip=host)
    return {"system": label, "model": m.model, "context_tokens": ctx, "tier": tier,
            "bytes_needed": float(f["weight_bytes"] + f["kv_bytes"]),
            "usable_bytes_per_chip": float(f["usable_bytes_per_chip"]), "chips": f["chips"],
            "systems_needed": f["chips"] / chips_per_system if chips_per_system else None}


def capacity_table(models: list[ModelSpec], names: list[str], *, contexts=(8192, 32768, 131072), concurrency: int = 64,
                   weight_precision: str = "fp8", kv_precision: str = "fp8", jalapeno: bool = False) -> pl.DataFrame:
    """For each system, model, context and memory tier (:data:`jalapeno.capacity_plans.TIERS`; the tiers a
    system lacks left out): the fewest chips that hold the weights (the benchmark precision
    ``weight_precision`` by the serving model's recipe) and ``concurrency`` x the KV cache of one sequence
    of that context, by :func:`jalapeno.capacity_plans.fewest_chips` (each tier at its usable share), and
    how many systems that is. With ``jalapeno``, Jalapeño's rows too (its HBM tier only: its SRAM and host
    memory are not published; ``system`` = ``jalapeno``, ``systems_needed`` empty, no published domain).
    Columns: ``system``, ``model``, ``context_tokens``, ``tier``, ``bytes_needed``,
    ``usable_bytes_per_chip``, ``chips``, ``systems_needed``. ValueError for a negative concurrency."""
    if isinstance(concurrency, bool) or not isinstance(concurrency, (int, np.integer)) or concurrency < 0:
        raise ValueError(f"concurrency must be a non-negative integer, got {concurrency!r}")
    machines = [(s.system, s.chip, s.host_memory_bytes_per_chip, s.n_chips) for s in map(system, names)]
    if jalapeno:
        machines.append(("jalapeno", subject.jalapeno_chip(), None, None))
    rows = [_capacity_row(label, chip, m, int(ctx), tier, host if tier == "hbm+host" else None, concurrency,
                          weight_precision, kv_precision, per_system)
            for label, chip, host, per_system in machines for m in models for ctx in contexts
            for tier in capacity_plans.TIERS if label != "jalapeno" or tier == "hbm"]
    return pl.DataFrame([r for r in rows if r], schema_overrides={"systems_needed": pl.Float64})


# ---- LPU decode: pipeline stages x tensor-parallel chips, weights and KV in SRAM -------------------------------

def _group(s: System, n: int) -> network.Topology:
    """The fabric the ``n`` chips of one pipeline stage talk over: in a Dragonfly, the fewest levels that
    hold ``n`` chips (a tray of 8 LPUs is fully connected, one hop; two trays are three hops apart); in a
    switched fabric, ``n`` chips on the switch; otherwise the whole system's fabric."""
    t = s.topology
    kw = {"hop_latency_s": t.hop_latency_s, "injection_bandwidth_bytes_per_s": t.injection_bandwidth_bytes_per_s}
    if n <= 1:
        return network.switched(1, **kw)
    if t.kind == "dragonfly":
        levels, size = [], 1
        for a in t.shape:
            if size * a >= n:
                levels.append(math.ceil(n / size))
                break
            levels.append(a)
            size *= a
        return network.dragonfly(tuple(levels), **kw) if size * levels[-1] >= n else t
    if t.kind == "switched":
        return network.switched(n, **kw)
    return t


def lpu_decode(model: ModelSpec, name: str | System = "groq-3-lpx", *, stages: int, tp: int = 1, batch=1,
               context_tokens: int = 8192, weight_bits: int = 8, kv_precision: str = "fp8") -> dict[str, np.ndarray]:
    """Decode of ``model`` with weights and KV cache in on-chip SRAM: ``stages`` pipeline stages of ``tp``
    chips each (the formula in the module docstring), ``batch`` sequences per micro-batch (scalar or
    array), a full pipeline of ``stages`` micro-batches.

    Returns a dict of arrays over ``batch``: ``chips``, ``concurrency``, ``fits`` (weights + KV within
    SRAM), ``sram_s``, ``compute_s``, ``roofline_s`` (all per token, summed over stages), ``allreduce_s``,
    ``handoff_s``, ``tpot_s``, ``interactivity_tok_s_user``, ``output_tok_s`` (whole system),
    ``output_tok_s_chip``. Raises ValueError for a layout that is not positive or has more stages than
    layers, or a system without SRAM or FLOP/s figures; UnknownNameError for a ``weight_bits`` not in
    :data:`WEIGHT_BITS`."""
    s = system(name)
    if stages < 1 or tp < 1 or stages > model.num_hidden_layers:
        raise ValueError(f"stages must be in 1..{model.num_hidden_layers} (layers) and tp >= 1, got stages={stages!r}, tp={tp!r}")
    check_weight_bits(weight_bits)
    bw, sram, flops = s.chip.sram_bandwidth_bytes_per_s, s.chip.sram_bytes, s.peak_fp8_flops_per_s_per_chip
    if not (bw and sram and flops):
        raise ValueError(f"system {s.system!r} has no SRAM capacity, SRAM bandwidth or FP8 FLOP/s figure")
    b = np.asarray(batch, dtype=float)
    if np.any(b <= 0):
        raise ValueError(f"batch must be positive, got {batch!r}")
    n = stages * tp
    prec = WEIGHT_BITS[weight_bits]
    chip = serving.with_chip(s.chip, peak_dense_flops_per_s={prec: flops})  # the system's FP8 rate, the only one published

    def fabric(k: int) -> network.Topology:  # a stage's chips talk inside their group, stages across the system
        return _group(s, k) if k <= tp else s.topology

    layout = serving.Layout(n_chips=n, pp=stages, ep=False, memory="sram",
                            kv_sharding="sequences" if model.attention == "mla" else "heads")
    workload = serving.Workload(concurrency=stages * b, precision=(prec, prec, kv_precision), context_tokens=context_tokens)
    r = serving.evaluate(model, chip, layout, workload, fabric=fabric, eff=serving.Efficiency.ideal())
    tpot = r.decode_step_s
    return {"chips": np.full_like(b, n), "concurrency": stages * b, "fits": r.fits, "sram_s": r.kv_s + r.weights_s,
            "compute_s": r.compute_s, "roofline_s": r.roofline_s, "allreduce_s": r.allreduce_s,
            "handoff_s": r.handoff_s, "tpot_s": tpot, "interactivity_tok_s_user": 1.0 / tpot,
            "output_tok_s": r.decode_tok_s_chip * n, "output_tok_s_chip": r.decode_tok_s_chip}


def lpu_layouts(model: ModelSpec, name: str | System = "groq-3-lpx", *, max_chips: int | None = None, batch: int = 1,
                tps=(1, 2, 4, 8, 16, 32, 64), context_tokens: int = 8192, weight_bits: int = 8,
                kv_precision: str = "fp8") -> pl.DataFrame:
    """Every layout (``stages`` x ``tp`` chips, at most ``max_chips``, default the system's) that holds the
    model: one row each with the :func:`lpu_decode` results at ``batch``, sorted by chips."""
    s = system(name)
    max_chips = max_chips or s.n_chips
    rows = []
    for tp in tps:
        for st in range(1, min(model.num_hidden_layers, max_chips // tp) + 1):
            r = lpu_decode(model, s, stages=st, tp=tp, batch=batch, context_tokens=context_tokens,
                           weight_bits=weight_bits, kv_precision=kv_precision)
            if not bool(r["fits"]):
                continue
            rows.append({"stages": st, "tp": tp, **{k: float(v) for k, v in r.items() if k != "fits"}})
    if not rows:
        raise ValueError(f"{model.model} does not fit in the SRAM of {max_chips} chips of {s.system} at {weight_bits} bits")
    return pl.DataFrame(rows).sort("chips", "tp")


def lpu_budget(model: ModelSpec, tok_s_user: float, name: str | System = "groq-3-lpx", *, layouts=None,
               context_tokens: int = 8192, weight_bits: int = 8, kv_precision: str = "fp8") -> pl.DataFrame:
    """How a single-user speed's per-token budget ``1 / tok_s_user`` splits on LPU layouts (``layouts``: a
    list of ``(stages, tp)``; default the fastest layout of each tp on one system). Long format: ``layout``,
    ``chips``, ``component`` (``SRAM reads (weights + KV)``, ``compute beyond SRAM``, ``pipeline hand-offs``,
    ``tensor-parallel all-reduce``, ``left for everything else``), ``time_s``, ``share`` of the budget.
    The last component is the budget minus the modelled ones (negative: the layout is too slow)."""
    s = system(name)
    budget = 1.0 / tok_s_user
    if layouts is None:
        t = lpu_layouts(model, s, context_tokens=context_tokens, weight_bits=weight_bits, kv_precision=kv_precision)
        best = t.sort("tpot_s").group_by("tp", maintain_order=True).first().sort("tp")
        layouts = list(zip(best["stages"].to_list(), best["tp"].to_list()))
    rows = []
    for st, tp in layouts:
        r = {k: float(v) for k, v in lpu_decode(model, s, stages=int(st), tp=int(tp), context_tokens=context_tokens,
                                                  weight_bits=weight_bits, kv_precision=kv_precision).items()}
        parts = {"SRAM reads (weights + KV)": r["sram_s"],
                 "compute beyond SRAM": r["roofline_s"] - r["sram_s"],
                 "pipeline hand-offs": r["handoff_s"], "tensor-parallel all-reduce": r["allreduce_s"]}
        parts["left for everything else"] = budget - sum(parts.values())
        label = f"{int(st)} stages x {int(tp)}"
        for comp, v in parts.items():
            rows.append({"layout": label, "chips": int(st) * int(tp), "component": comp, "time_s": v,
                         "share": v / budget, "tpot_s": r["tpot_s"], "budget_s": budget})
    return pl.DataFrame(rows)


def best_lpu_speed(model: ModelSpec, name: str | System = "groq-3-lpx", **kw) -> dict[str, float]:
    """The fastest single-user layout on one system (:func:`lpu_layouts` at batch 1): ``stages``, ``tp``,
    ``chips``, ``tpot_s``, ``interactivity_tok_s_user``."""
    row = lpu_layouts(model, name, **kw).sort("tpot_s").row(0, named=True)
    return {k: row[k] for k in ("stages", "tp", "chips", "tpot_s", "interactivity_tok_s_user")}


def lpu_scaling(model: ModelSpec, name: str | System = "groq-3-lpx", *, tps=(1, 2, 4, 8), batch: int = 1,
                context_tokens: int = 8192, weight_bits: int = 8, kv_precision: str = "fp8",
                max_chips: int | None = None) -> pl.DataFrame:
    """Adding LPUs: for each ``tp``, every stage count that holds the model (at most ``max_chips``, default
    the system's), with ``chips``, ``interactivity_tok_s_user``, ``output_tok_s_chip`` (full pipeline of
    micro-batches of ``batch``)."""
    t = lpu_layouts(model, name, max_chips=max_chips, batch=batch, tps=tps, context_tokens=context_tokens,
                    weight_bits=weight_bits, kv_precision=kv_precision)
    return t.select("tp", "stages", "chips", "interactivity_tok_s_user", "output_tok_s_chip", "tpot_s")


def lpx_for(model: ModelSpec, *, weight_bits: int = 8, kv_bytes: float = 0.0, name: str = "groq-3-lpx") -> System:
    """The LPX system of as many racks as hold ``model`` at ``weight_bits`` plus ``kv_bytes`` (one rack, or
    racks joined as one more Dragonfly level)."""
    s = system(name)
    racks = math.ceil(bounds.sram_chips(model, s.chip, weight_bits=weight_bits, kv_bytes=kv_bytes) / s.n_chips)
    return s.with_top_level(racks, add=True)


# ---- throughput against interactivity: GPU-only, Jalapeño, GPU prefill + LPU decode --------------------------

def system_frontiers(model: ModelSpec, gpu: ChipSpec, *, eff: serving.Efficiency | None = None,
                     scenario: str = "central", fit: "subject.JalapenoFit | None" = None, weight_bits: int = 8,
                     kv_precision: str = "fp8", isl: int = 8192, osl: int = 1024,
                     concurrency_cap: float | str | None = "benchmark") -> pl.DataFrame:
    """Three ways to build an inference system for ``model``, as frontiers of throughput per chip against
    interactivity: ``gpu`` alone (:func:`jalapeno.pareto.frontier` with the calibrated constants ``eff``
    and the best measured stack), Jalapeño (:func:`jalapeno.subject.jalapeno_frontier`: the ``scenario``
    chip with its fitted constants, the same as the Pareto chapter's) and ``gpu`` prefill + LPU decode
    (:func:`disaggregated_frontier`). The two serving-model frontiers span ``concurrency_cap`` (default the
    benchmark's range); the LPU frontier is an upper bound (no per-layer overhead, no KV transfer).
    Columns ``system``, ``interactivity_tok_s_user``, ``throughput_tok_s_chip``, ``n_chips``,
    ``concurrency``."""
    eff = eff or calibration.load()
    stack = pareto.best_stack(eff)
    cols = ["interactivity_tok_s_user", "throughput_tok_s_chip", "n_chips", "concurrency"]
    gpu_front = pareto.frontier(gpu, model, isl=isl, osl=osl, eff=eff, stack=stack, concurrency_cap=concurrency_cap,
                                  power_basis=None)  # per chip, not per kW: the LPU's power is not published
    jal_front = subject.jalapeno_frontier(model.model, scenario, fit=fit, isl=isl, osl=osl, concurrency_cap=concurrency_cap,
                                          power_basis=None)
    lpu = disaggregated_frontier(model, gpu, weight_bits=weight_bits, kv_precision=kv_precision, eff=eff, stack=stack,
                                 isl=isl, osl=osl, label=f"{gpu.chip} prefill + LPU decode")
    return pl.concat([gpu_front.select(pl.lit(f"{gpu.chip}, GPU only").alias("system"), *cols),
                      jal_front.select(pl.lit("Jalapeño").alias("system"), *cols),
                      lpu.select("system", *cols)], how="vertical_relaxed")


def disaggregated_frontier(model: ModelSpec, gpu: ChipSpec, *, lpx: System | None = None, weight_bits: int = 8,
                           kv_precision: str = "fp8", batches=None, isl: int = 8192, osl: int = 1024,
                           prefill_tp: int = 1, precision: str = "fp4", eff: serving.Efficiency | None = None,
                           stack: str | None = None, kv_sequences: int = 256,
                           label: str = "GPU prefill + LPU decode") -> pl.DataFrame:
    """GPU prefill + LPU decode. Decode runs on ``lpx`` (default: the LPX racks that hold ``model`` at
    ``weight_bits`` plus the KV cache of ``kv_sequences`` sequences, :func:`lpx_for`) in every layout of
    :func:`lpu_decode` that fits, with micro-batches ``batches``; prefill runs on ``prefill_tp``-GPU workers
    of ``gpu`` (the serving model's prefill time of a mean prompt with ``eff`` and ``stack``), as many as the
    request rate needs
    (fractional; ``eff`` default the calibration, ``stack`` its best measured stack). Throughput per chip
    counts input + output tokens over LPUs and GPUs (the benchmark's way); the KV transfer from GPU to LPU
    and queueing are not modelled. Columns ``system``, ``interactivity_tok_s_user``,
    ``throughput_tok_s_chip``, ``n_chips``, ``concurrency``, ``lpu_chips``, ``gpu_chips``."""
    eff = eff or calibration.load()
    stack = stack or pareto.best_stack(eff)
    b = np.asarray(batches if batches is not None else 2.0 ** np.arange(0, 9))
    isl_m, osl_m = mean_request_length(isl), mean_request_length(osl)
    ctx = int(isl_m + osl_m / 2)
    s = lpx or lpx_for(model, weight_bits=weight_bits,
                       kv_bytes=kv_sequences * model.kv_bytes_per_sequence(ctx, kv_precision))
    pre = serving.evaluate(model, gpu, serving.Layout(n_chips=prefill_tp),
                           serving.Workload(concurrency=1, isl=isl, osl=osl, precision=precision), eff=eff, stack=stack)
    t_prefill = float(pre.prefill_s)
    rows = []
    for tp in (t for t in (1, 2, 4, 8, 16, 32, 64) if t <= s.n_chips):
        for st in range(1, min(model.num_hidden_layers, s.n_chips // tp) + 1):
            r = lpu_decode(model, s, stages=st, tp=tp, batch=b, context_tokens=ctx, weight_bits=weight_bits,
                           kv_precision=kv_precision)
            ok = np.asarray(r["fits"], dtype=bool)
            if not ok.any():
                continue
            rate = np.asarray(r["output_tok_s"]) / osl_m
            gpus = rate * t_prefill * prefill_tp
            thr = rate * (isl_m + osl_m) / (st * tp + gpus)
            for i in np.nonzero(ok)[0]:
                rows.append({"interactivity_tok_s_user": float(r["interactivity_tok_s_user"][i]),
                             "throughput_tok_s_chip": float(thr[i]), "n_chips": st * tp,
                             "concurrency": float(r["concurrency"][i]), "lpu_chips": st * tp, "gpu_chips": float(gpus[i])})
    if not rows:
        raise ValueError(f"{model.model} does not fit on {s.system} ({s.n_chips} LPUs) at {weight_bits} bits with any KV cache")
    df = pl.DataFrame(rows)
    keep = pareto_envelope(df["interactivity_tok_s_user"], df["throughput_tok_s_chip"])
    return df[keep].select(pl.lit(label).alias("system"), pl.all())


# ---- TPU 8t (3D torus) against TPU 8i (Boardfly) ---------------------------------------------------------------

def tpu_topologies(size: int = 1024, *, torus_system: str = "tpu-8t-1024", boardfly_system: str = "tpu-8i-pod") -> dict[str, System]:
    """The two TPU fabrics at ``size`` chips: the 8t slice as the most compact 3D torus of ``size`` chips
    and the 8i Boardfly with ``size / 32`` groups of 8 boards of 4 (ValueError if 32 does not divide it)."""
    t, b = system(torus_system), system(boardfly_system)
    per_group = math.prod(b.topology.shape[:-1])
    if size % per_group:
        raise ValueError(f"a Boardfly is built of groups of {per_group} chips; size must be a multiple, got {size!r}")
    torus = replace(t, topology=network.most_compact_torus(size, 3, hop_latency_s=t.topology.hop_latency_s,
                                                           injection_bandwidth_bytes_per_s=t.topology.injection_bandwidth_bytes_per_s))
    return {t.system: torus, b.system: b.with_top_level(size // per_group)}


def tpu_all_to_all(models: list[ModelSpec], *, size: int = 1024, tokens_per_chip=1.0) -> pl.DataFrame:
    """Decode all-to-all of each MoE model with its experts spread over ``size`` chips of TPU 8t (3D torus)
    and TPU 8i (Boardfly), ``tokens_per_chip`` decode tokens on each chip (one value or several): dispatch
    (FP8) and combine (BF16) of ``num_experts_per_tok`` copies of each token, two
    :func:`jalapeno.network.all_to_all_s` per MoE layer. Columns: ``model``, ``system``, ``topology``,
    ``tokens_per_chip``, ``diameter_hops``, ``average_hops``, ``latency_per_layer_s`` (2 x diameter x hop),
    ``per_layer_s``, ``per_token_s`` (x MoE layers), ``moe_layers``. Dense models are left out."""
    topos = tpu_topologies(size)
    rows = []
    for m in models:
        if not m.is_moe:
            continue
        for s in topos.values():
            t = s.topology
            rf = (t.n_chips - 1) / t.n_chips
            for tok in np.atleast_1d(np.asarray(tokens_per_chip, dtype=float)):
                d = network.moe_all_to_all_bytes(tok, m.num_experts_per_tok, m.hidden_size, dispatch_bytes=1.0,
                                                 combine_bytes=0.0, remote_fraction=rf)
                c = network.moe_all_to_all_bytes(tok, m.num_experts_per_tok, m.hidden_size, dispatch_bytes=0.0,
                                                 combine_bytes=2.0, remote_fraction=rf)
                per_layer = network.all_to_all_s(t, d) + network.all_to_all_s(t, c)
                lat = 2 * t.diameter_hops() * t.hop_latency_s
                rows.append({"model": m.model, "system": s.system, "topology": t.label, "tokens_per_chip": float(tok),
                             "diameter_hops": t.diameter_hops(), "average_hops": t.average_hops(),
                             "latency_per_layer_s": lat, "per_layer_s": per_layer,
                             "per_token_s": per_layer * m.num_moe_layers, "moe_layers": m.num_moe_layers})
    return pl.DataFrame(rows)


# ---- Jalapeño's fabric: what the published single-user speeds allow ----------------------------------------------

def fabric_topology(kind: str, n: int, **kw) -> network.Topology:
    """A hypothetical scale-up fabric of ``n`` chips of ``kind``: ``switched``, ``ring``, ``torus2d``,
    ``torus3d`` (most compact shapes) or ``dragonfly`` (fully connected groups of 8 chips, the groups fully
    connected; up to 8 chips, or a size 8 does not divide, one fully connected group). UnknownNameError
    for another kind."""
    if kind == "switched":
        return network.switched(n, **kw)
    if kind == "ring":
        return network.ring(n, **kw)
    if kind in ("torus2d", "torus3d"):
        return network.most_compact_torus(n, 2 if kind == "torus2d" else 3, **kw)
    if kind == "dragonfly":
        a = min(n, 8)
        return network.dragonfly((a, n // a) if n > a and n % a == 0 else (n,), **kw)
    raise UnknownNameError("fabric", kind, list(FABRICS))


def jalapeno_fabric_scan(*, domain_sizes=(1, 2, 4, 8, 16, 32, 64), fabrics=("switched", "torus3d"),
                         hop_latencies_s=None, scenario: str = "central", fit: "subject.JalapenoFit | None" = None,
                         scale_up_bandwidth_bytes_per_s: float | None = None, alpha0_s: float = 0.0,
                         isl: int = 8192, osl: int = 1024, precision: str = "fp4") -> pl.DataFrame:
    """Single-user TPOT of the published models on ``n`` Jalapeño chips (:func:`jalapeno.serving.evaluate`
    at concurrency 1, tensor parallel over the domain, experts spread over it) for each domain size, fabric
    and per-hop latency. Jalapeño is the one of every chapter (:func:`jalapeno.subject.jalapeno_chip` of
    ``scenario``, its scale-up bandwidth overridden by ``scale_up_bandwidth_bytes_per_s`` when given) with
    the constants of :func:`jalapeno.subject.fit_jalapeno` (``fit``, default the scenario's), except what
    the scan varies on purpose: the domain size (``domain_sizes``, where the fit lets a worker span the
    scenario's whole domain) and each collective's fixed latency. Each collective is timed on that fabric
    by :mod:`jalapeno.network` (a fixed ``alpha0`` plus its hops: an all-reduce crosses the diameter
    twice, a dispatch or combine once), where the fit keeps the calibrated latency. Columns: ``model``,
    ``fabric``, ``chips``, ``diameter_hops``, ``hop_latency_s``, ``tpot_s``, ``target_tpot_s``
    (:func:`jalapeno.subject.target_tpot_s`), ``fits``, ``consistent`` (fits in HBM and reaches the
    published speed: TPOT <= target)."""
    hops = np.asarray(hop_latencies_s if hop_latencies_s is not None else np.geomspace(0.05e-6, 10e-6, 25))
    overrides = {} if scale_up_bandwidth_bytes_per_s is None else {"scale_up_bandwidth_bytes_per_s": scale_up_bandwidth_bytes_per_s}
    chip = subject.jalapeno_chip(scenario, **overrides)
    e = replace((fit or subject.fit_jalapeno(scenario)).efficiency, alpha_s=alpha0_s)
    injection = chip.scale_up_bandwidth_bytes_per_s / 2  # one direction
    rows = []
    for model_name, claim_id, kind in subject.SPEED_TARGETS:
        m = specs.model(model_name)
        target = subject.target_tpot_s(claim_id, kind)
        for fab in fabrics:
            for n in domain_sizes:
                d = fabric_topology(fab, n).diameter_hops()
                for h in hops:
                    def fabric(k, fab=fab, h=h):
                        return fabric_topology(fab, k, hop_latency_s=h, injection_bandwidth_bytes_per_s=injection)
                    r = serving.evaluate(m, chip, serving.Layout(n_chips=n),
                                         serving.Workload(concurrency=1, isl=isl, osl=osl, precision=precision),
                                         eff=e, stack="jalapeno", fabric=fabric)
                    tpot = float(r.tpot_s)
                    fits = bool(r.fits)
                    rows.append({"model": m.model, "fabric": fab, "chips": n, "diameter_hops": d, "hop_latency_s": float(h),
                                 "tpot_s": tpot, "target_tpot_s": target, "fits": fits, "consistent": fits and tpot <= target})
    return pl.DataFrame(rows)


def max_consistent_hop_latency(scan: pl.DataFrame) -> pl.DataFrame:
    """From :func:`jalapeno_fabric_scan`: for each model, fabric and domain size that fits, the largest
    scanned per-hop latency still consistent with the published speed (``None`` when none is) and the TPOT at
    the smallest scanned hop latency. Columns ``model``, ``fabric``, ``chips``, ``diameter_hops``,
    ``max_hop_latency_s``, ``best_tpot_s``, ``target_tpot_s``."""
    fit = scan.filter(pl.col("fits"))
    return fit.group_by("model", "fabric", "chips", maintain_order=True).agg(
        pl.col("diameter_hops").first(),
        pl.col("hop_latency_s").filter(pl.col("consistent")).max().alias("max_hop_latency_s"),
        pl.col("tpot_s").min().alias("best_tpot_s"), pl.col("target_tpot_s").first())


#: The benchmark precision :func:`jalapeno_requirements` holds the weights at: that of the published speeds
#: whose TPOT it budgets (gpt-oss-120b's MXFP4 experts; the serving model's recipe for the rest).
REQUIREMENTS_PRECISION = "fp4"


def jalapeno_requirements(models: list[ModelSpec], *, concurrency: int = 64, context_tokens: int = 8192,
                          weight_precision: str = REQUIREMENTS_PRECISION, kv_precision: str = "fp8", comm_share: float = 0.25,
                          hop_latency_s: float = 0.5e-6, fabric: str = "switched") -> pl.DataFrame:
    """What keeping a whole workload inside one connected Jalapeño system takes, per model: the fewest chips
    whose usable HBM holds the weights (the benchmark precision ``weight_precision`` by the serving model's
    recipe) plus the KV cache of ``concurrency`` sequences of ``context_tokens`` (``chips``,
    :func:`jalapeno.capacity_plans.fewest_chips`), and on that many chips of ``fabric`` the injection
    bandwidth per chip (one direction) for the decode step's MoE all-to-all (``concurrency`` tokens) to take
    ``comm_share`` of the published TPOT (``required_injection_bytes_per_s``; ``None`` when the hop
    latencies alone exceed that share)."""
    if not 0 < comm_share <= 1:
        raise ValueError(f"comm_share must be in (0, 1], got {comm_share!r}")
    c = subject.jalapeno_chip()
    targets = {m: subject.target_tpot_s(cid, kind) for m, cid, kind in subject.SPEED_TARGETS}
    rows = []
    for m in models:
        held = capacity_plans.fewest_chips(c, m, precision=weight_precision, kv_precision=kv_precision,
                                           concurrency=concurrency, context_tokens=context_tokens)
        need, n = float(held["weight_bytes"] + held["kv_bytes"]), held["chips"]
        target = targets.get(m.model)
        req = None
        if m.is_moe and n > 1 and target:
            t = fabric_topology(fabric, n, hop_latency_s=hop_latency_s, injection_bandwidth_bytes_per_s=1.0)
            per_chip_bytes = network.moe_all_to_all_bytes(concurrency / n, m.num_experts_per_tok, m.hidden_size,
                                                          remote_fraction=(n - 1) / n)
            budget = comm_share * target - m.num_moe_layers * 2 * t.diameter_hops() * hop_latency_s
            if budget > 0:
                req = m.num_moe_layers * per_chip_bytes * max(1.0, t.average_hops()) / budget
        rows.append({"model": m.model, "bytes_needed": float(need), "chips": n,
                     "target_tpot_s": target, "required_injection_bytes_per_s": req})
    return pl.DataFrame(rows, schema_overrides={"target_tpot_s": pl.Float64, "required_injection_bytes_per_s": pl.Float64})
