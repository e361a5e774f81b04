"""The *Systems and networks* chapter (``notebooks/systems.ipynb``): fabrics as graphs, what a collective
costs, TPU 8t against 8i, the Groq 3 LPX rack, GPU prefill + LPU decode, Jalapeño's fabric and capacity.

:func:`compute` returns the chapter's quoted numbers, tables and figures; the physics is in
:mod:`jalapeno.systems`, :mod:`jalapeno.network`, :mod:`jalapeno.subject` and :mod:`jalapeno.serving`.
This module only picks, converts to display units (µs, ms, GB, TB/s) and formats.
"""

from __future__ import annotations

import json
import math

import altair as alt
import numpy as np
import polars as pl

from .. import (bounds, calibration, charts, comparison, data, diagrams, network, pareto, registry, schemes, serving, specs,
               subject)
from .. import capacity_plans as cp
from .. import systems as sy
from ..display import number
from ..errors import CostError, UnknownNameError
from ..specs import ModelSpec
from . import Chapter, Parameter

#: The two TPU fabrics of the comparison and the suffix of their quoted keys.
_TPUS = (("tpu-8t-1024", "8t"), ("tpu-8i-pod", "8i"))

#: The models whose TPU all-to-all the prose quotes (``n/a`` when not among the chosen ``models``).
_QUOTED_A2A_MODELS = ("gpt-oss-120b", "deepseek-r1", "kimi-k2.5")

#: Decode tokens per chip of the TPU all-to-all drop-down (the ``decode_tokens_per_chip`` parameter is added).
_TPU_TOKEN_GRID = (1.0, 8.0, 64.0, 256.0)

#: Fabrics and per-hop latencies (s) of the Jalapeño fabric scan.
_SCAN_FABRICS = ("switched", "torus2d", "torus3d", "dragonfly")
_SCAN_HOP_LATENCIES_S = np.geomspace(0.05e-6, 10e-6, 49)

#: Components of :func:`jalapeno.systems.lpu_budget` the prose quotes, and their key.
_BUDGET_KEYS = (("SRAM reads (weights + KV)", "sram"), ("pipeline hand-offs", "hops"),
                ("tensor-parallel all-reduce", "ar"), ("left for everything else", "left"))


#: What the chapter takes (:class:`jalapeno.chapters.Parameter`); the notebook's parameters cell is generated from it.
PARAMETERS = (
    Parameter("models", ["gpt-oss-120b", "deepseek-r1", "kimi-k2.5"], "the models of every section", names="model"),
    Parameter("systems", ["gb200-nvl72", "gb300-nvl72", "groq-3-lpx", "tpu-8t-1024", "tpu-8i-pod"],
              "the fabrics tabulated", names="system"),
    Parameter("system", "groq-3-lpx", "the fabric whose collectives are tabulated", names="system"),
    Parameter("model", "gpt-oss-120b", "the model of the collectives and the disaggregation comparison", names="model"),
    Parameter("topology", "torus3d", "the kind of the what-if fabric",
              choices=tuple(sy.FABRICS)),
    Parameter("size", 1024, "the what-if fabric's chips, also the TPU comparison's (a multiple of 32)", low=1,
              high=1048576, unit="chips"),
    Parameter("context_tokens", 8192, "the context that sizes each sequence's KV cache", low=1, high=1048576,
              unit="tokens"),
    Parameter("contexts", [8192, 32768, 131072], "the contexts of the capacity section", low=1, high=1048576,
              unit="tokens"),
    Parameter("concurrency", 64, "the sequences whose KV cache is held", low=1, high=100000, unit="sequences"),
    Parameter("weight_bits", 8, "bits per weight of the LPU: 4, 8 or 16", low=4, high=16, unit="bits"),
    Parameter("weight_precision", "fp8", "the weights' precision in the capacity section", names="precision"),
    Parameter("kv_precision", "fp8", "the precision of every KV cache", names="precision"),
    Parameter("plan_precision", "fp4", "the benchmark precision of the capacity plans (weights by the serving "
              "model's recipe)", names="precision"),
    Parameter("decode_tokens", 1024, "the tokens each sequence of a capacity plan generates", low=1, high=1048576,
              unit="tokens"),
    Parameter("gpu", "vera-rubin", "the chip that prefills for the LPUs and serves alone", names="HBM chip"),
    Parameter("decode_tokens_per_chip", 1, "the decode batch per chip of the TPU all-to-all", low=1, high=100000,
              unit="tokens"),
    Parameter("scenario", "central", "Jalapeño's unknowns", choices=tuple(subject.SCENARIOS)),
    Parameter("jalapeno_scale_up_tb_s", None, "Jalapeño's scale-up bandwidth in the fabric scan, both directions "
              "(None: the scenario's)", type=float, low=0, high=100, low_open=True, unit="TB/s"),
    Parameter("alpha0_us", 0.0, "the fixed software latency of each of Jalapeño's collectives", low=0, high=1000000,
              unit="us"),
    Parameter("comm_share", 0.25, "the share of the published TPOT the decode all-to-all may take when sizing "
              "Jalapeño's bandwidth", low=0, high=1),)


def compute(*, models: list[str], systems: list[str], system: str, model: str, topology: str, size: int,
            context_tokens: int, contexts: list[int], concurrency: int, weight_bits: int, weight_precision: str,
            kv_precision: str, plan_precision: str, decode_tokens: int, gpu: str, decode_tokens_per_chip: int,
            scenario: str, jalapeno_scale_up_tb_s: float | None, alpha0_us: float, comm_share: float) -> Chapter:
    """Everything the systems chapter shows, for the notebook's parameters.

    Parameters: those of :data:`PARAMETERS` (type, default, range and unit of each there);
    ``topology`` is one of :data:`jalapeno.systems.FABRICS`.

    Returns a :class:`jalapeno.chapters.Chapter`: the ``sys_*`` numbers its prose quotes, the tables
    ``fabrics``, ``collectives``, ``deepseek_ep``, ``tpu_all_to_all``, ``lpx_sram``, ``gemma_budget``,
    ``system_frontiers``, ``jalapeno_fabric``, ``jalapeno_requirements``, ``capacity``, ``capacity_plans``,
    ``claims`` and the
    figures ``topology_hops``, ``collectives``, ``tpu_all_to_all``, ``gemma_budget``, ``lpu_scaling``,
    ``system_frontiers``, ``jalapeno_fabric``, ``capacity``.

    Raises UnknownNameError for an unknown model, system, chip, precision, topology or scenario, and
    ValueError where a section's model refuses the input (e.g. a ``size`` that is not a multiple of 32).
    """
    if topology not in sy.FABRICS:
        raise UnknownNameError("topology", topology, list(sy.FABRICS))
    ch = Chapter()
    chosen = [specs.model(m) for m in models]
    focus_system, focus_model, gpu_chip = sy.system(system), specs.model(model), specs.chip(gpu)
    fit = subject.fit_jalapeno(scenario)  # Jalapeño's constants, the same fit as the Pareto chapter's

    whatif = _fabrics(ch, systems, focus_system, topology, size)
    _collectives(ch, systems, focus_system, focus_model, whatif, context_tokens)
    _deepseek_check(ch)
    _tpus(ch, chosen, size, decode_tokens_per_chip)
    _lpx(ch, chosen, weight_bits, concurrency, context_tokens, kv_precision)
    _gemma_record(ch, weight_bits, context_tokens, kv_precision)
    _frontiers(ch, focus_model, gpu_chip, scenario, fit, weight_bits, kv_precision)
    _jalapeno_fabric(ch, chosen, scenario, fit, jalapeno_scale_up_tb_s, alpha0_us, comm_share, concurrency,
                     context_tokens, kv_precision)
    _capacity(ch, chosen, systems, contexts, context_tokens, concurrency, weight_precision, kv_precision)
    _capacity_plans(ch, systems, focus_model, scenario, context_tokens, decode_tokens, plan_precision, kv_precision)
    ch.add_table("claims", registry.claims().filter(pl.col("chapter") == "systems").select(
        "claim_id", "claimed", "status", "computed", "published_vs_computed", "check"),
        "The seeds' numbers about these systems: each claim, its status, the value computed and how it is checked")
    return ch


def _shape(shape: tuple[int, ...]) -> str:
    return " x ".join(map(str, shape))


def _quote_or_na(ch: Chapter, key: str, value: object, fmt: str, **quantity) -> str:
    """Quote ``value`` with ``fmt`` (and the ``quantity`` and ``variant`` it shows), or ``n/a`` when it is
    ``None`` (a model or system the parameters left out)."""
    return ch.quote(key, "n/a") if value is None else ch.quote(key, value, fmt, **quantity)


def check(*, topology: str, size: int, weight_bits: int, **_) -> None:
    """Refuse, before anything runs, a ``size`` and ``topology`` whose fabric graphs :func:`compute` would
    build and search above the limits of :func:`jalapeno.network.check_graph`: the TPU 8t torus and the
    8i Boardfly of ``size`` chips (drawn from their graphs) and a Dragonfly what-if fabric (its hops
    searched; the other kinds have closed forms). CostError naming the fabric, its size and the limit;
    UnknownNameError for an unknown topology or a ``weight_bits`` the LPU has no width of
    (:data:`jalapeno.systems.WEIGHT_BITS`: 4, 8, 16); ValueError for a ``size`` no Boardfly is built of."""
    sy.check_weight_bits(weight_bits, where="parameter 'weight_bits'")
    if topology not in sy.FABRICS:
        raise UnknownNameError("topology", topology, list(sy.FABRICS))
    whatif = sy.fabric_topology(topology, size)
    try:
        for t in [s.topology for s in sy.tpu_topologies(size).values()] + [whatif] * (whatif.kind == "dragonfly"):
            network.check_graph(t.kind, t.shape)
    except CostError as exc:
        raise CostError(f"parameters size={size}, topology={topology!r}: {exc}") from None


def _fabrics(ch: Chapter, systems: list[str], focus_system: sy.System, topology: str, size: int):
    """Fabrics as graphs: hop counts of the systems, the TPU fabrics at ``size`` and the what-if fabric."""
    fabric = sy.systems_table(systems)
    ch.add_table("fabrics", fabric.select(
        "system", "chip", "topology", "chips", "ports_per_chip", "diameter_hops", "average_hops",
        (pl.col("hop_latency_s") * 1e6).alias("hop_latency_us"), "hop_latency_status",
        (pl.col("link_bandwidth_bytes_per_s") / 1e9).alias("link_GB_s"),
        (pl.col("bisection_bandwidth_bytes_per_s") / 1e12).alias("bisection_TB_s")),
        "Each fabric as a graph: chips, ports per chip, diameter and average hops, hop latency, link and "
        "bisection bandwidth")
    tpu = sy.tpu_topologies(size)
    t8t, t8i = tpu["tpu-8t-1024"].topology, tpu["tpu-8i-pod"].topology
    shapes = network.torus_shapes(size)
    pod = sy.system("tpu-8i-pod").topology
    lpx_topo = sy.system("groq-3-lpx").topology
    ch.quote("sys_size", size, "{:,}")
    ch.quote("sys_torus_shape", _shape(t8t.shape))
    ch.quote("sys_torus_article", "an" if _shape(t8t.shape).lstrip().startswith(("8", "11", "18")) else "a")
    ch.quote("sys_torus_hops", t8t.diameter_hops())
    ch.quote("sys_torus_avg", t8t.average_hops(), "{:.1f}")
    ch.quote("sys_torus_next_shape", _shape(shapes[1][0]) if len(shapes) > 1 else "none")
    ch.quote("sys_torus_next_hops", shapes[1][1] if len(shapes) > 1 else 0)
    ch.quote("sys_boardfly_shape", _shape(t8i.shape))
    ch.quote("sys_boardfly_hops", t8i.diameter_hops())
    ch.quote("sys_boardfly_bound", t8i.diameter_bound_hops())
    ch.quote("sys_boardfly_avg", t8i.average_hops(), "{:.1f}")
    ch.quote("sys_pod_chips", pod.n_chips, "{:,}")
    ch.quote("sys_pod_hops", pod.diameter_hops())
    ch.quote("sys_hop_cut_pct", 100 * (1 - t8i.diameter_hops() / t8t.diameter_hops()), "{:.0f}")
    ch.quote("sys_claim_torus", data.claim_value("tpu8t-torus-hops"), "{:.0f}")
    ch.quote("sys_claim_boardfly", data.claim_value("tpu8i-boardfly-hops"), "{:.0f}")
    ch.quote("sys_lpx_shape", lpx_topo.label)
    ch.quote("sys_lpx_hops", lpx_topo.diameter_hops())
    whatif = sy.fabric_topology(topology, size, hop_latency_s=focus_system.topology.hop_latency_s,
                                injection_bandwidth_bytes_per_s=focus_system.topology.injection_bandwidth_bytes_per_s)
    ch.quote("sys_whatif", whatif.label)
    ch.quote("sys_whatif_hops", whatif.diameter_hops())
    ch.quote("sys_whatif_avg", whatif.average_hops(), "{:.2f}")
    ch.quote("sys_focus_name", focus_system.display_name)
    ch.add_figure("topology_hops", topology_hops(
        network.size_sweep(), fabric.select("system", "chips", "diameter_hops", "average_hops")), "systems-topology-hops")
    _diagrams(ch, tpu, size)
    return whatif


#: The systems drawn as diagrams beside the hop tables: (slot, system key, what it is called in the title,
#: exported figure name); the TPUs at the chapter's ``size`` (:func:`jalapeno.systems.tpu_topologies`), the
#: others as in ``data/systems.csv``.
_DIAGRAMS = (("diagram_tpu_8t", "tpu-8t-1024", "TPU 8t", "systems-diagram-tpu-8t"),
             ("diagram_tpu_8i", "tpu-8i-pod", "TPU 8i Boardfly", "systems-diagram-tpu-8i"),
             ("diagram_lpx", "groq-3-lpx", "Groq 3 LPX rack", "systems-diagram-groq-3-lpx"),
             ("diagram_nvl72", "gb200-nvl72", "GB200 NVL72", "systems-diagram-nvl72"))

#: How a diagram's title names each kind of fabric.
_KIND_WORDS = {"torus": "3D torus", "dragonfly": "Dragonfly", "switched": "single switch", "ring": "ring", "mesh": "mesh"}


def _diagrams(ch: Chapter, tpu: dict[str, sy.System], size: int) -> None:
    """Node-link diagrams of the fabrics (:func:`jalapeno.diagrams.drawing`), drawn from the same topology
    objects whose hop counts the chapter quotes, so that a change of ``size`` redraws the TPUs."""
    for slot, key, label, name in _DIAGRAMS:
        t = (tpu.get(key) or sy.system(key)).topology
        d = t.diameter_hops()
        hops = f"diameter {d} hop{'' if d == 1 else 's'}, average {number(t.average_hops()):.1f}"
        if t.kind == "switched":
            title = f"{label}: {number(t.n_chips):,} chips on one switch, {hops}"
        else:
            what = "torus" if t.kind == "torus" and len(t.shape) != 3 else _KIND_WORDS[t.kind]
            shape = _shape(t.shape)
            article = "an" if shape.lstrip().startswith(("8", "11", "18")) else "a"  # an 8 x 32, an 11, an 18
            title = f"{label}: {number(t.n_chips):,} chips as {article} {shape} {what}, {hops}"
        ch.add_figure(slot, topology_diagram(diagrams.drawing(t), title=title, size=360 if t.kind == "torus" else 280),
                      name)


def _candidate_drawings(topologies: dict[str, network.Topology], budget_us: dict[str, float | None]) -> dict:
    """One drawing of several fabrics, each panel titled with its fabric, diameter and largest per-hop
    latency (µs) consistent with the published speed (``budget_us``; None: not reached)."""
    parts = {name: diagrams.drawing(t) for name, t in topologies.items()}
    nodes = pl.concat([d["nodes"].with_columns((pl.lit(f"{name}: ") + pl.col("panel")).alias("panel"))
                       for name, d in parts.items()])
    links = pl.concat([d["links"].with_columns((pl.lit(f"{name}: ") + pl.col("panel")).alias("panel"))
                       for name, d in parts.items()])
    panels = {}
    for name, d in parts.items():
        t = topologies[name]
        limit = budget_us.get(name)
        hop = "" if name not in budget_us else (f"; hops up to {number(limit):.2f} µs" if limit is not None else "; too slow")
        for i, (panel, text) in enumerate(d["panels"].items()):
            panels[f"{name}: {panel}"] = (f"{t.label}, diameter {t.diameter_hops()}{hop}" if i == 0 else text)
    notes = [f"{name}: {n}" for name, d in parts.items() for n in d["notes"] if "dashed" not in n]
    notes += sorted({n for d in parts.values() for n in d["notes"] if "dashed" in n})
    return {"nodes": nodes, "links": links, "panels": panels, "notes": notes}


def _collectives(ch: Chapter, systems: list[str], focus_system: sy.System, focus_model: ModelSpec,
                 whatif: network.Topology, context_tokens: int) -> None:
    """What a collective costs on the focus system for the focus model, and against message size."""
    ct = network.collective_table(focus_system.topology, hidden_size=focus_model.hidden_size,
                                  prefill_tokens=context_tokens, experts_per_token=focus_model.num_experts_per_tok or 1)
    ch.add_table("collectives", ct.select(
        "phase", "collective", "message_bytes", (pl.col("time_s") * 1e6).alias("time_us"),
        (pl.col("latency_s") * 1e6).alias("latency_us"), "latency_bound"),
        f"Collectives on the {focus_system.display_name} for {focus_model.display_name}: time and hop latency, "
        f"decode and {number(context_tokens):,}-token prefill")

    def row(phase: str, collective: str) -> dict:
        return ct.filter((pl.col("phase") == phase) & (pl.col("collective") == collective)).row(0, named=True)

    dec, pre = row("decode", "all-reduce"), row("prefill", "all-reduce")
    ch.quote("sys_dec_ar_us", dec["time_s"] * 1e6, "{:.2f}")
    ch.quote("sys_dec_ar_lat_pct", 100 * dec["latency_s"] / dec["time_s"], "{:.0f}")
    ch.quote("sys_pre_ar_us", pre["time_s"] * 1e6, "{:,.0f}")
    ch.quote("sys_pre_ar_lat_pct", 100 * pre["latency_s"] / pre["time_s"], "{:.0f}")
    ch.quote("sys_ctx", context_tokens, "{:,}")
    ch.quote("sys_focus_model", focus_model.display_name)
    topologies = {s.system: s.topology for s in map(sy.system, systems)}
    sweep = network.message_sweep(topologies | {f"what-if {whatif.label}": whatif})
    marks = pl.DataFrame({"label": ["decode, 1 token", f"prefill, {number(context_tokens):,} tokens"],
                          "message_bytes": [focus_model.hidden_size * 2.0, context_tokens * focus_model.hidden_size * 2.0]})
    ch.add_figure("collectives", collective_times(sweep, marks), "systems-collectives")


def _deepseek_check(ch: Chapter) -> None:
    """DeepSeek-V3's all-to-all bound on expert-parallel decode (:func:`jalapeno.network.deepseek_ep_example`)."""
    ex = network.DEEPSEEK_EP_EXAMPLE
    real_hidden = specs.model("deepseek-r1").hidden_size
    ds = network.deepseek_ep_example()
    ds_nvl = network.deepseek_ep_example(bandwidth_bytes_per_s=ex["nvlink_bytes_per_s"])
    ds_7168 = network.deepseek_ep_example(hidden_size=real_hidden)
    ch.quote("sys_ds_tokens", ex["tokens_per_chip"])
    ch.quote("sys_ds_experts", ex["experts_per_token"])
    ch.quote("sys_ds_hidden", ex["hidden_size"], "{:,}")
    ch.quote("sys_ds_ib_gb", ex["infiniband_bytes_per_s"] / 1e9, "{:.0f}")
    ch.quote("sys_ds_nvl_gb", ex["nvlink_bytes_per_s"] / 1e9, "{:.0f}")
    ch.quote("sys_ds_layers", ex["layers"])
    ch.quote("sys_ds_layer_us", ds["per_layer_s"] * 1e6, "{:.2f}")
    ch.quote("sys_ds_tpot_ms", ds["tpot_s"] * 1e3, "{:.2f}")
    ch.quote("sys_ds_tok_s", ds["tok_s_user"], "{:.1f}")
    ch.quote("sys_ds_nvl_tok_s", ds_nvl["tok_s_user"], "{:,.0f}")
    ch.quote("sys_ds_7168_us", ds_7168["per_layer_s"] * 1e6, "{:.1f}")
    ch.quote("sys_ds_7168_tok_s", ds_7168["tok_s_user"], "{:.1f}")
    ch.quote("sys_ds_real_hidden", real_hidden, "{:,}")
    cases = (("InfiniBand, paper's hidden size", ds), ("NVLink 5, paper's hidden size", ds_nvl),
             ("InfiniBand, DeepSeek-V3's hidden size", ds_7168))
    ch.add_table("deepseek_ep", pl.DataFrame([
        {"case": name, "bytes_per_layer": float(r["bytes_per_layer"]), "per_layer_us": r["per_layer_s"] * 1e6,
         "tpot_ms": r["tpot_s"] * 1e3, "tok_s_user": r["tok_s_user"]} for name, r in cases]),
        "DeepSeek-V3's all-to-all bound on expert-parallel decode: bytes and time per layer, TPOT and tok/s/user")


def _tpus(ch: Chapter, chosen: list[ModelSpec], size: int, decode_tokens_per_chip: int) -> None:
    """TPU 8t against 8i: the decode all-to-all of each chosen MoE model, against DeepSeek-R1's budget."""
    tokens = float(decode_tokens_per_chip)
    tpu_a2a = sy.tpu_all_to_all(chosen, size=size, tokens_per_chip=sorted({tokens, *_TPU_TOKEN_GRID}))
    shown = tpu_a2a.filter(pl.col("tokens_per_chip") == tokens)
    ch.add_table("tpu_all_to_all", shown.select(
        "model", "system", "topology", "diameter_hops", "average_hops",
        (pl.col("latency_per_layer_s") * 1e6).alias("latency_per_layer_us"),
        (pl.col("per_layer_s") * 1e6).alias("per_layer_us"), (pl.col("per_token_s") * 1e3).alias("per_token_ms")),
        f"Decode all-to-all of each MoE model on TPU 8t and 8i at {number(size):,} chips, "
        f"{number(decode_tokens_per_chip):,} token(s) per chip: hops and time")
    per_token = {(r["model"], r["system"]): r["per_token_s"] for r in shown.iter_rows(named=True)}
    for name in _QUOTED_A2A_MODELS:
        key = name.replace("-", "_").replace(".", "_")
        for system_name, suffix in _TPUS:
            v = per_token.get((name, system_name))
            _quote_or_na(ch, f"sys_a2a_{key}_{suffix}", None if v is None else v * 1e3, "{:.2f}")
    ratios = [per_token[(m.model, "tpu-8t-1024")] / per_token[(m.model, "tpu-8i-pod")] for m in chosen if m.is_moe]
    _quote_or_na(ch, "sys_a2a_ratio_lo", min(ratios) if ratios else None, "{:.1f}")
    _quote_or_na(ch, "sys_a2a_ratio_hi", max(ratios) if ratios else None, "{:.1f}")
    ch.quote("sys_tpu_tokens", decode_tokens_per_chip, "{:,}")
    dsr1_tpot = subject.target_tpot_s("dsr1-jalapeno-single-user", "tok_s")
    ch.quote("sys_dsr1_budget_ms", dsr1_tpot * 1e3, "{:.2f}")
    ch.quote("sys_dsr1_claim", data.claim_value("dsr1-jalapeno-single-user"), "{:,.0f}")
    for system_name, suffix in _TPUS:
        v = per_token.get(("deepseek-r1", system_name))
        _quote_or_na(ch, f"sys_a2a_share_{suffix}", None if v is None else 100 * v / dsr1_tpot, "{:.0f}")
    ch.add_figure("tpu_all_to_all", tpu_all_to_all(tpu_a2a, tokens), "systems-tpu-all-to-all")


def _lpx(ch: Chapter, chosen: list[ModelSpec], weight_bits: int, concurrency: int, context_tokens: int,
         kv_precision: str) -> None:
    """Groq 3 LPX: the rack's totals from the chip data and the LPUs that hold each model in SRAM."""
    rack = sy.lpx_rack_totals()
    ch.quote("sys_lpx_chips", rack["chips"], "{:,}")
    ch.quote("sys_lpx_sram_mb", rack["sram_bytes_per_chip"] / 1e6, "{:,.0f}")
    ch.quote("sys_lpx_sram_gb", rack["sram_bytes"] / 1e9, "{:,.0f}")
    ch.quote("sys_lpx_bw_tb", rack["sram_bandwidth_bytes_per_s"] / rack["chips"] / 1e12, "{:.2f}")
    ch.quote("sys_lpx_bw_pb", rack["sram_bandwidth_bytes_per_s"] / 1e15, "{:.1f}")
    ch.quote("sys_lpx_flops_pf", rack["peak_fp8_flops_per_s"] / 1e15, "{:,.0f}")
    ch.quote("sys_claim_sram_gb", data.claim_value("groq-lpx-rack-sram"), "{:,.0f}")
    ch.quote("sys_claim_bw_pb", data.claim_value("groq-lpx-rack-sram-bandwidth"), "{:,.0f}")
    with_kv = {"concurrency": concurrency, "context_tokens": context_tokens, "kv_precision": kv_precision}
    sram0 = sy.sram_capacity_table(chosen, weight_bits=weight_bits)
    sram_kv = sy.sram_capacity_table(chosen, weight_bits=weight_bits, **with_kv)
    ch.add_table("lpx_sram", sram0.select(
        "model", (pl.col("weight_bytes") / 1e9).alias("weight_GB"), pl.col("chips").alias("lpus_weights_only"),
        pl.col("racks").alias("racks_weights_only")).join(sram_kv.select(
            "model", (pl.col("kv_bytes") / 1e9).alias("kv_GB"), pl.col("chips").alias("lpus_with_kv"),
            pl.col("racks").alias("racks_with_kv")), on="model"),
        f"LPUs and LPX racks whose SRAM holds each model at {weight_bits} bits: weights only, and with "
        f"{number(concurrency):,} sequences of {number(context_tokens):,} tokens")
    ch.quote("sys_bits", weight_bits)
    ch.quote("sys_conc", concurrency, "{:,}")
    dsv3 = [specs.model("deepseek-r1")]  # the seed's arithmetic is about DeepSeek-V3/R1 whatever the chosen models
    d0 = sy.sram_capacity_table(dsv3, weight_bits=weight_bits).row(0, named=True)
    dk = sy.sram_capacity_table(dsv3, weight_bits=weight_bits, **with_kv).row(0, named=True)
    ch.quote("sys_ds_sram_exact", d0["chips_exact"], "{:,.1f}")
    # a chip count is whole chips (the ceiling of the SRAM it takes); racks are those chips over a rack's,
    # a fraction (the whole racks to deploy are its ceiling)
    default_lpx = weight_bits == 8
    ch.quote("sys_ds_lpus", d0["chips"], "{:,}", quantity="lpx-dsv3-lpus-weights-only" if default_lpx else None)
    ch.quote("sys_ds_racks", d0["racks"], "{:.2f}", quantity="lpx-dsv3-racks-weights-only" if default_lpx else None)
    ch.quote("sys_ds_whole_racks", math.ceil(d0["racks"]))
    ch.quote("sys_ds_lpus_kv", dk["chips"], "{:,}")
    ch.quote("sys_ds_racks_kv", dk["racks"], "{:.2f}")
    ch.quote("sys_claim_ds_chips", data.claim_value("groq-lpx-chips-deepseek-v3"), "{:,.0f}")


def _gemma_record(ch: Chapter, weight_bits: int, context_tokens: int, kv_precision: str) -> None:
    """The LPX's Gemma record as a per-token budget, how LPU layouts spend it, and adding LPUs."""
    record_claim = registry.claim("groq-gemma4-tok-s")
    gemma = specs.model(record_claim["model"])
    record = record_claim["value"]
    kw = {"weight_bits": weight_bits, "context_tokens": context_tokens, "kv_precision": kv_precision}
    best = sy.best_lpu_speed(gemma, **kw)
    budget = sy.lpu_budget(gemma, record, **kw)
    ch.add_table("gemma_budget", budget.pivot(on="component", index=["layout", "chips"], values="time_s").with_columns(
        pl.exclude("layout", "chips") * 1e6),
        f"How each LPU layout spends {gemma.display_name}'s per-token budget at {number(record):,.0f} tok/s: "
        "µs per component")
    best_budget = budget.filter(pl.col("layout") == f"{best['stages']} stages x {best['tp']}")
    part = {r["component"]: r for r in best_budget.iter_rows(named=True)}
    ch.quote("sys_record", record, "{:,.0f}")
    ch.quote("sys_gemma", gemma.display_name)
    ch.quote("sys_budget_us", 1e6 / record, "{:.0f}")
    ch.quote("sys_best_layout", f"{best['stages']} stages of {best['tp']} LPUs ({number(best['chips']):.0f} chips)")
    ch.quote("sys_best_tok_s", best["interactivity_tok_s_user"], "{:,.0f}")
    for name, key in _BUDGET_KEYS:
        ch.quote(f"sys_best_{key}_us", part[name]["time_s"] * 1e6, "{:.0f}")
        ch.quote(f"sys_best_{key}_pct", 100 * part[name]["share"], "{:.0f}")
    ch.quote("sys_best_compute_us", part["compute beyond SRAM"]["time_s"] * 1e6, "{:.0f}")
    at_best = sy.lpu_decode(gemma, stages=best["stages"], tp=best["tp"], **kw)
    ch.quote("sys_best_compute_total_us", float(at_best["compute_s"]) * 1e6, "{:.0f}")
    ch.quote("sys_lpu_hop_us", sy.system("groq-3-lpx").topology.hop_latency_s * 1e6, "{:.1f}")
    sync = part["pipeline hand-offs"]["time_s"] + part["tensor-parallel all-reduce"]["time_s"]
    ch.quote("sys_best_bigger", "synchronisation (hand-offs and all-reduces), not SRAM bandwidth,"
             if sync > part["SRAM reads (weights + KV)"]["time_s"] else "SRAM bandwidth, not synchronisation,")
    ch.add_figure("gemma_budget", budget_split(
        budget, f"{gemma.display_name} at {number(record):,.0f} tok/s: where the per-token budget goes"), "systems-gemma-budget")

    scaling = sy.lpu_scaling(gemma, **kw)
    wide = scaling.filter(pl.col("tp") == scaling["tp"].max()).sort("chips")
    first, last = wide.row(0, named=True), wide.row(-1, named=True)
    ch.quote("sys_scale_tp", int(last["tp"]))
    ch.quote("sys_scale_first_chips", int(first["chips"]))
    ch.quote("sys_scale_last_chips", int(last["chips"]))
    ch.quote("sys_scale_first_thr", first["output_tok_s_chip"], "{:,.0f}")
    ch.quote("sys_scale_last_thr", last["output_tok_s_chip"], "{:,.0f}")
    ch.quote("sys_scale_first_user", first["interactivity_tok_s_user"], "{:,.0f}")
    ch.quote("sys_scale_last_user", last["interactivity_tok_s_user"], "{:,.0f}")
    ch.add_figure("lpu_scaling", lpu_scaling(scaling), "systems-lpu-scaling")


def _frontiers(ch: Chapter, focus_model: ModelSpec, gpu_chip: specs.ChipSpec, scenario: str,
               fit: subject.JalapenoFit, weight_bits: int, kv_precision: str) -> None:
    """GPU prefill + LPU decode against a GPU-only and a Jalapeño system (:func:`jalapeno.systems.system_frontiers`)."""
    fronts = sy.system_frontiers(focus_model, gpu_chip, eff=calibration.load(), scenario=scenario, fit=fit,
                                 weight_bits=weight_bits, kv_precision=kv_precision)
    ch.quote("sys_scenario", scenario)
    summary = fronts.group_by("system", maintain_order=True).agg(
        pl.col("interactivity_tok_s_user").max().alias("max_interactivity"),
        pl.col("throughput_tok_s_chip").max().alias("max_throughput_per_chip"))
    ch.add_table("system_frontiers", summary,
                 f"{focus_model.display_name}: highest interactivity (tok/s/user) and throughput per chip of each "
                 f"system, Jalapeño {scenario}")
    top = {r["system"]: r for r in summary.iter_rows(named=True)}
    ch.quote("sys_gpu_name", gpu_chip.display_name)
    for key, label in (("gpu", f"{gpu_chip.chip}, GPU only"), ("jal", "Jalapeño"),
                       ("lpu", f"{gpu_chip.chip} prefill + LPU decode")):
        r = top.get(label, {})
        modeled = key == "jal" and focus_model.model == "gpt-oss-120b" and scenario == "central"
        _quote_or_na(ch, f"sys_{key}_max_x", r.get("max_interactivity"), "{:,.0f}",
                     **({"quantity": "jalapeno-gptoss-single-user-tok-s", "variant": "modeled"} if modeled else {}))
        _quote_or_na(ch, f"sys_{key}_max_y", r.get("max_throughput_per_chip"), "{:,.0f}")
    ch.quote("sys_jal_pub_single", data.claim_value("gptoss-jalapeno-single-user"), "{:,.0f}",
             quantity="jalapeno-gptoss-single-user-tok-s")
    ch.quote("sys_band_pct", 100 * calibration.BAND_LEVEL, "{:.0f}")
    ch.add_figure("system_frontiers", system_frontiers(
        banded_systems(fronts, focus_model, gpu_chip), charts.wrap_title(f"{focus_model.display_name}: three ways to build an inference system")),
        "systems-frontiers")


def banded_systems(fronts: pl.DataFrame, model: ModelSpec, gpu_chip: specs.ChipSpec, *, isl: int = 8192,
                   osl: int = 1024) -> pl.DataFrame:
    """``fronts`` (:func:`jalapeno.systems.system_frontiers` at ``isl``/``osl``) with the nominal
    :data:`jalapeno.calibration.BAND_LEVEL` band of each serving-model frontier
    (:func:`jalapeno.pareto.with_band`, the scheme of :func:`jalapeno.calibration.band_scheme`: the GPU
    alone takes its case's, Jalapeño (c) end-point anchored): ``throughput_tok_s_chip_low``, ``_high`` and
    ``band_scheme`` (the scheme's label). The LPU frontier is an upper bound outside the calibrated model,
    which no scheme measured: no band (null)."""
    gpu = f"{gpu_chip.chip}, GPU only"
    scheme = {gpu: calibration.band_scheme(gpu_chip, model, isl=isl, osl=osl), "Jalapeño": calibration.ANCHORED_CHIP}
    parts = []
    for (system,), g in fronts.group_by("system", maintain_order=True):
        if system in scheme:
            key = "anchored" if system == "Jalapeño" else scheme[system]
            parts.append(pareto.with_band(g, key).with_columns(band_scheme=pl.lit(schemes.SCHEMES[key].label)))
        else:
            parts.append(g.with_columns(throughput_tok_s_chip_low=pl.lit(None, pl.Float64),
                                        throughput_tok_s_chip_high=pl.lit(None, pl.Float64),
                                        band_scheme=pl.lit(None, pl.Utf8)))
    return pl.concat(parts, how="vertical_relaxed")


def _jalapeno_fabric(ch: Chapter, chosen: list[ModelSpec], scenario: str, fit: subject.JalapenoFit,
                     jalapeno_scale_up_tb_s: float | None, alpha0_us: float, comm_share: float, concurrency: int,
                     context_tokens: int, kv_precision: str) -> None:
    """Which Jalapeño fabrics are consistent with its published speeds, and what one system for a whole
    workload takes (:func:`jalapeno.systems.jalapeno_fabric_scan`, :func:`jalapeno.systems.jalapeno_requirements`)."""
    jchip = subject.jalapeno_chip(scenario)
    up_bw = jalapeno_scale_up_tb_s * 1e12 if jalapeno_scale_up_tb_s else jchip.scale_up_bandwidth_bytes_per_s
    scan = sy.jalapeno_fabric_scan(scenario=scenario, fit=fit, scale_up_bandwidth_bytes_per_s=up_bw,
                                   alpha0_s=alpha0_us * 1e-6, fabrics=_SCAN_FABRICS,
                                   hop_latencies_s=_SCAN_HOP_LATENCIES_S)
    hop_budget = sy.max_consistent_hop_latency(scan)
    ch.add_table("jalapeno_fabric", hop_budget.filter(pl.col("model") == "deepseek-r1").select(
        "fabric", "chips", "diameter_hops", (pl.col("max_hop_latency_s") * 1e6).alias("max_hop_latency_us"),
        (pl.col("best_tpot_s") * 1e3).alias("best_tpot_ms")).pivot(on="fabric", index=["chips"],
                                                                    values="max_hop_latency_us"),
        "Largest per-hop latency (µs) with which DeepSeek-R1 reaches Jalapeño's published speed, by domain size "
        "and fabric")
    ch.quote("sys_tau_us", fit.efficiency.tau_s["jalapeno"] * 1e6, "{:.1f}")
    ch.quote("sys_mla", fit.efficiency.mla_layer_factor, "{:.2f}")
    ch.quote("sys_domain", int(jchip.scale_up_domain_chips))
    chips_q = "jalapeno-dsr1-single-user-chips"
    ch.quote("sys_ds_fastest_chips", int(subject.fastest_layout("deepseek-r1", scenario, fit=fit)["n_chips"]),
             quantity=chips_q if scenario == "central" else None)
    ch.quote("sys_ds_roofline_chips", comparison.published_vs_roofline().filter(
        (pl.col("model") == "deepseek-r1") & (pl.col("chip") == "jalapeno"))["min_chips"][0],
        quantity=chips_q, variant="speed of light")
    ds_ok = hop_budget.filter((pl.col("model") == "deepseek-r1") & pl.col("max_hop_latency_s").is_not_null())
    ch.quote("sys_ds_min_chips", int(ds_ok["chips"].min()),
             quantity=chips_q if scenario == "central" else None,
             variant="fewest in the fitted model" if scenario == "central" else None)
    switched = ds_ok.filter(pl.col("fabric") == "switched")
    torus = ds_ok.filter(pl.col("fabric") == "torus3d").sort("chips")
    ch.quote("sys_ds_sw_hop_us", switched["max_hop_latency_s"].max() * 1e6, "{:.1f}")
    torus_lo = torus.sort("max_hop_latency_s").row(0, named=True)
    ch.quote("sys_ds_t3_hop_us", torus_lo["max_hop_latency_s"] * 1e6, "{:.2f}")
    ch.quote("sys_ds_t3_hop_hi_us", torus["max_hop_latency_s"].max() * 1e6, "{:.2f}")
    ch.quote("sys_ds_t3_lo_chips", int(torus_lo["chips"]))
    nvl_hop_s = sy.system("gb300-nvl72").topology.hop_latency_s
    ch.quote("sys_nvl_hop_us", nvl_hop_s * 1e6, "{:.1f}")
    ch.quote("sys_jal_bw", up_bw / 1e12, "{:.1f}")
    ch.add_figure("jalapeno_fabric", fabric_hop_budget(hop_budget), "systems-jalapeno-fabric")
    domain = int(jchip.scale_up_domain_chips)
    at_domain = hop_budget.filter((pl.col("model") == "deepseek-r1") & (pl.col("chips") == domain))
    budget = {r["fabric"]: (None if r["max_hop_latency_s"] is None else r["max_hop_latency_s"] * 1e6)
              for r in at_domain.iter_rows(named=True)}
    candidates = {f: sy.fabric_topology(f, domain) for f in _SCAN_FABRICS}
    ch.add_figure("diagram_jalapeno", topology_diagram(
        _candidate_drawings(candidates, budget), size=200, columns=3,
        title=f"Jalapeño's fabric is not published: the candidates for its {domain}-chip domain",
        subtitle=[f"largest per-hop latency with which DeepSeek-R1 still reaches {number(data.claim_value('dsr1-jalapeno-single-user')):,.0f} tok/s"]),
        "systems-diagram-jalapeno")
    ch.quote("sys_comm_share_pct", 100 * comm_share, "{:.0f}")
    req = sy.jalapeno_requirements(chosen, concurrency=concurrency, context_tokens=context_tokens,
                                   kv_precision=kv_precision, comm_share=comm_share, hop_latency_s=nvl_hop_s)
    ch.add_table("jalapeno_requirements", req.select(
        "model", (pl.col("bytes_needed") / 1e9).alias("GB_to_hold"), "chips",
        (pl.col("target_tpot_s") * 1e3).alias("longest_tpot_the_published_figure_allows_ms"),
        (pl.col("required_injection_bytes_per_s") / 1e9).alias("injection_needed_gb_s")),
        f"One Jalapeño system for {number(concurrency):,} users of {number(context_tokens):,} tokens: GB and chips "
        f"to hold each model (weights as the published speeds were run, {sy.REQUIREMENTS_PRECISION.upper()}: "
        f"{recipe_words(chosen, sy.REQUIREMENTS_PRECISION)}; KV cache at {kv_precision.upper()}), TPOT allowed, "
        "bandwidth needed")


def recipe_words(models: list[ModelSpec], precision: str) -> str:
    """The weights' precisions of ``models`` served at the benchmark precision ``precision`` in words, by
    the serving model's recipe (:func:`jalapeno.serving.recipe`): ``"experts at MXFP4, the other weights at
    BF16 (gpt-oss-120b); experts at NVFP4, the other weights at FP8 (DeepSeek-R1)"``, the models named
    only where recipes differ."""
    groups: dict[tuple[str, str], list[str]] = {}
    for m in models:
        groups.setdefault(serving.recipe(m, precision)[:2], []).append(m.display_name)
    return "; ".join(
        (f"every weight at {e.upper()}" if e == o else f"experts at {e.upper()}, the other weights at {o.upper()}")
        + (f" ({', '.join(names)})" if len(groups) > 1 else "") for (e, o), names in groups.items())


def _capacity(ch: Chapter, chosen: list[ModelSpec], systems: list[str], contexts: list[int], context_tokens: int,
              concurrency: int, weight_precision: str, kv_precision: str) -> None:
    """Chips that hold each model and its users' KV cache, per system and memory tier."""
    ctxs = sorted(set(int(c) for c in contexts) | {int(context_tokens)})
    kw = {"contexts": ctxs, "concurrency": concurrency, "weight_precision": weight_precision,
          "kv_precision": kv_precision}
    cap = sy.capacity_table(chosen, systems, jalapeno=True, **kw)
    ch.add_table("capacity", cap.filter(pl.col("context_tokens") == context_tokens).pivot(
        on="tier", index=["system", "model"], values="chips"),
        f"Chips that hold each model and the KV cache of {number(concurrency):,} sequences of "
        f"{number(context_tokens):,} tokens, per system and memory tier (weights served at "
        f"{weight_precision.upper()}: {recipe_words(chosen, weight_precision)}; KV cache at {kv_precision.upper()})")
    long_ctx = max(ctxs)
    ch.quote("sys_long_ctx", long_ctx, "{:,}")
    ch.quote("sys_wprec", weight_precision)
    quoted = (("sys_cap_lpx_chips", "groq-3-lpx", "sram", "chips", "{:,}"),
              ("sys_cap_lpx_racks", "groq-3-lpx", "sram", "systems_needed", "{:.1f}"),
              ("sys_cap_jal_chips", "jalapeno", "hbm", "chips", "{:,}"),
              ("sys_cap_gb200_hbm", "gb200-nvl72", "hbm", "chips", "{:,}"),
              ("sys_cap_gb200_host", "gb200-nvl72", "hbm+host", "chips", "{:,}"))
    for key, system_name, tier, column, fmt in quoted:  # the prose quotes DeepSeek-R1 (n/a if not chosen)
        r = cap.filter((pl.col("system") == system_name) & (pl.col("model") == "deepseek-r1")
                       & (pl.col("context_tokens") == long_ctx) & (pl.col("tier") == tier))
        _quote_or_na(ch, key, None if r.is_empty() else r[column][0], fmt)
    ch.add_figure("capacity", capacity_chips(cap, int(context_tokens), "hbm", concurrency), "systems-capacity")


#: The largest slice (chips per replica) the chapter's capacity plans show: tensor parallelism beyond it is
#: not served in practice, and throughput per chip only falls there once the KV cache stops shrinking.
_PLAN_MAX_CHIPS = 64


def _capacity_plans(ch: Chapter, systems: list[str], focus_model: ModelSpec, scenario: str, context_tokens: int,
                    decode_tokens: int, precision: str, kv_precision: str) -> None:
    """The capacity plan (:func:`jalapeno.capacity_plan`) of the focus model on each system's chip with HBM
    and Jalapeño (its ``scenario``), slices up to :data:`_PLAN_MAX_CHIPS` chips, and the most efficient
    slice of each in one sentence. Chips without FLOP/s at the recipe's expert precision, or that no slice
    holds the model on, are named as left out."""
    chips = list({c.chip: c for c in (sy.system(s).chip for s in systems)}.values()) + [subject.jalapeno_chip(scenario)]
    experts = serving.recipe(focus_model, precision)[0]
    frames, left_out = [], []
    for c in chips:
        if not (c.hbm_capacity_bytes and c.hbm_bandwidth_bytes_per_s and bounds.has_precision(c, experts)):
            left_out.append(specs.short_name(c))
            continue
        kw = {"precision": precision, "kv_precision": kv_precision, "context_tokens": int(context_tokens),
              "decode_tokens": int(decode_tokens)}
        try:
            recipe = serving.recipe(focus_model, precision)[:2] + (kv_precision,)
            sizes = [t for t in cp.slice_sizes(c, focus_model, recipe, int(context_tokens) + int(decode_tokens))
                     if t <= _PLAN_MAX_CHIPS]
            plan = cp.capacity_plan(c, focus_model, chips=sizes or None, **kw)
        except ValueError:
            left_out.append(specs.short_name(c))
            continue
        frames.append(plan.with_columns(pl.lit(specs.short_name(c)).alias("chip_name")))
    plans = pl.concat(frames)
    ch.add_table("capacity_plans", plans.select(
        pl.col("chip_name").alias("chip"), pl.col("chips").alias("chips_per_replica"),
        pl.col("weight_bytes_per_chip").cast(pl.Float64).alias("weights_per_chip_bytes"),
        pl.col("kv_bytes_per_sequence_per_chip").cast(pl.Float64).alias("kv_per_sequence_per_chip_bytes"),
        "largest_batch", pl.col("step_s").alias("decode_step_s"), "throughput_tok_s_chip",
        pl.col("requests_per_s_chip").alias("requests_per_s_per_chip")),
        f"Capacity plan of {focus_model.display_name} ({number(context_tokens):,} + {number(decode_tokens):,} tokens, "
        f"served at {precision.upper()}: {recipe_words([focus_model], precision)}) per chip and slice: memory, "
        "largest batch, step, rates")
    best = plans.filter(pl.col("most_efficient"))
    ch.quote("sys_plan_model", focus_model.display_name)
    ch.quote("sys_plan_ctx", int(context_tokens), "{:,}")
    ch.quote("sys_plan_decode", int(decode_tokens), "{:,}")
    ch.quote("sys_plan_usable_pct", 100 * serving.usable_hbm_fraction(), "{:.0f}")
    ch.quote("sys_plan_best", "; ".join(
        f"{r['chip_name']}, {number(r['chips']):,} chip{'' if r['chips'] == 1 else 's'} "
        f"({number(r['largest_batch']):,} sequences, {number(r['throughput_tok_s_chip']):,.0f} tok/s per chip)"
        for r in best.iter_rows(named=True)))
    ch.quote("sys_plan_left_out", ", ".join(left_out) if left_out else "none")


# ---- figures ----

def topology_hops(sweep: pl.DataFrame, systems: pl.DataFrame | None = None) -> alt.LayerChart:
    """Hop counts against size for each topology family (:func:`jalapeno.network.size_sweep`), with the
    book's systems as labelled points (``systems``: ``system``, ``chips``, ``diameter_hops``,
    ``average_hops``). A drop-down switches between the diameter and the average hop count."""
    def long(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
        return pl.concat([df.select(*keys, pl.lit(name).alias("metric"), pl.col(col).cast(pl.Float64).alias("hops"))
                          for name, col in (("diameter", "diameter_hops"), ("average", "average_hops"))])

    lines = long(sweep, ["family", "chips", "shape"])
    x = alt.X("chips:Q", title="chips", scale=alt.Scale(type="log", base=2))
    y = alt.Y("hops:Q", title="hops (diameter or average)", scale=alt.Scale(type="log"))
    chart = alt.Chart(lines).mark_line(point=alt.OverlayMarkDef(size=20)).encode(
        x=x, y=y, color=charts.series_color(lines["family"].to_list(), "family", "topology", legend=charts.LINE_LEGEND),
        strokeDash=charts.series_dash(lines["family"].to_list(), "family", "topology"),
        tooltip=["family:N", "shape:N", "chips:Q", alt.Tooltip("hops:Q", format=".2f")])
    layers = [chart]
    if systems is not None:
        pts = long(systems, ["system", "chips"])
        base = alt.Chart(pts).encode(x=x, y=y, tooltip=["system:N", "chips:Q", alt.Tooltip("hops:Q", format=".2f")])
        # one label per drawn point (systems of one size and hop count share it: GB200 and GB300 NVL72), set
        # to the left of the points in the right half of the axis so that none runs off a phone's chart
        named = pts.group_by("metric", "chips", "hops", maintain_order=True).agg(pl.col("system").str.join(", "))
        middle = math.sqrt(float(lines["chips"].min()) * float(lines["chips"].max()))
        layers.append(base.mark_point(shape="diamond", size=90, filled=True, color="black"))
        for align, dx, side in (("left", 7, pl.col("chips") < middle), ("right", -7, pl.col("chips") >= middle)):
            layers.append(alt.Chart(named.filter(side)).mark_text(align=align, dx=dx, dy=-7, fontSize=10).encode(
                x=x, y=y, text="system:N"))
    return charts.explorable(alt.layer(*layers).properties(title="Worst and average path length grow differently with size"),
                             charts.Knob("metric", ("diameter", "average"), "diameter", "hop count", kind="select"))


def collective_times(df: pl.DataFrame, marks: pl.DataFrame | None = None) -> alt.LayerChart:
    """Time of a collective against message size on several fabrics (:func:`jalapeno.network.message_sweep`:
    ``system``, ``collective``, ``message_bytes``, ``time_s``), log-log, a drop-down choosing the collective;
    ``marks`` (``label``, ``message_bytes``) draws vertical rules at the decode- and prefill-sized messages."""
    data = df.with_columns((pl.col("time_s") * 1e6).alias("time_us"))
    x = alt.X("message_bytes:Q", title="message per chip (bytes)", scale=alt.Scale(type="log"))
    lines = alt.Chart(data).mark_line().encode(
        x=x, y=alt.Y("time_us:Q", title="time (µs)", scale=alt.Scale(type="log")),
        color=charts.system_color(data["system"].to_list(), "system", "fabric"),
        strokeDash=charts.series_dash(data["system"].to_list(), "system", "fabric"),
        tooltip=["system:N", "collective:N", alt.Tooltip("message_bytes:Q", format=".3s"), alt.Tooltip("time_us:Q", format=",.2f")])
    layers = [lines]
    if marks is not None:
        base = alt.Chart(marks).encode(x=x)
        last = marks["message_bytes"].max()  # the rightmost rule's label to its left, inside the chart, a line lower
        layers += [base.mark_rule(strokeDash=[4, 3], color="#555555"),
                   alt.Chart(marks.filter(pl.col("message_bytes") < last)).encode(x=x).mark_text(
                       align="left", dx=4, y=8, fontSize=10, color="#555555").encode(text="label:N"),
                   alt.Chart(marks.filter(pl.col("message_bytes") == last)).encode(x=x).mark_text(
                       align="right", dx=-4, y=22, fontSize=10, color="#555555").encode(text="label:N")]
    collectives = tuple(dict.fromkeys(df["collective"].to_list()))
    return charts.explorable(alt.layer(*layers).properties(title="Small messages pay hops, large ones pay bandwidth"),
                             charts.Knob("collective", collectives, collectives[0], "collective", kind="select"))


def budget_split(df: pl.DataFrame, title: str) -> alt.LayerChart:
    """Stacked horizontal bars of a per-token time budget by component and layout
    (:func:`jalapeno.systems.lpu_budget`: ``layout``, ``component``, ``time_s``, ``budget_s``), with the
    budget as a vertical rule. A negative remainder (a layout slower than the budget) is not drawn: its bar
    simply runs past the rule."""
    data = df.filter(pl.col("time_s") > 0).with_columns((pl.col("time_s") * 1e6).alias("time_us"))
    order = list(dict.fromkeys(df["component"].to_list()))
    bars = alt.Chart(data).mark_bar().encode(
        y=alt.Y("layout:N", title="layout (pipeline stages x chips per stage)", sort=list(dict.fromkeys(df["layout"].to_list()))),
        x=alt.X("time_us:Q", title="time per token (µs)", stack="zero"),
        color=charts.series_color(order, "component"),
        order=alt.Order("component_rank:Q"),
        tooltip=["layout:N", "component:N", alt.Tooltip("time_us:Q", format=",.1f"), alt.Tooltip("share:Q", format=".0%")],
    ).transform_calculate(component_rank=f"indexof({json.dumps(order)}, datum.component)")
    budget = float(df["budget_s"][0]) * 1e6
    rule = alt.Chart(pl.DataFrame({"budget_us": [budget]})).mark_rule(color="black", strokeDash=[5, 3]).encode(
        x="budget_us:Q", tooltip=[alt.Tooltip("budget_us:Q", title="budget (µs)", format=",.1f")])
    return alt.layer(bars, rule).properties(title=title)


def lpu_scaling(df: pl.DataFrame) -> alt.VConcatChart:
    """Adding LPUs (:func:`jalapeno.systems.lpu_scaling`): output throughput per chip and single-user speed
    against the chip count, one line per tensor-parallel width ``tp``."""
    base = alt.Chart(df).encode(x=alt.X("chips:Q", title="LPUs", scale=alt.Scale(type="log", base=2)),
                                color=alt.Color("tp:O", title="chips per stage", scale=alt.Scale(range=charts.SERIES_COLOURS)),
                                order="chips:Q",
                                tooltip=["tp:O", "stages:Q", "chips:Q", alt.Tooltip("output_tok_s_chip:Q", format=",.0f"),
                                         alt.Tooltip("interactivity_tok_s_user:Q", format=",.0f")])
    left = base.mark_line(point=alt.OverlayMarkDef(size=12)).encode(
        y=alt.Y("output_tok_s_chip:Q", title="output tok/s per LPU (full pipeline)", scale=alt.Scale(zero=False))
    ).properties(width=250, height=200, title="Throughput per chip falls")
    right = base.mark_line(point=alt.OverlayMarkDef(size=12)).encode(
        y=alt.Y("interactivity_tok_s_user:Q", title="tok/s per user", scale=alt.Scale(zero=False))
    ).properties(width=250, height=200, title="Speed per user")
    # one above the other: Vega-Lite cannot fit a concatenation to its container, and two 250 px views
    # side by side would not fit a phone's column
    return alt.vconcat(left, right).properties(title=charts.wrap_title("Adding LPUs to one model: every hop is paid per token", 36))


def system_frontiers(df: pl.DataFrame, title: str | list[str]) -> alt.Chart | alt.LayerChart:
    """Throughput per chip against interactivity, one frontier per ``system`` (log-log): rows of
    :func:`jalapeno.systems.system_frontiers`. With ``throughput_tok_s_chip_low``/``_high`` and
    ``band_scheme`` (:func:`banded_systems`, null where a frontier has no band) each band is a light area
    under its line, its scheme in the tooltip and the subtitle (a layered chart)."""
    x = alt.X("interactivity_tok_s_user:Q", title="interactivity (tok/s/user, 1 / TPOT)", scale=alt.Scale(type="log"))
    y_title = "throughput per chip (input + output tok/s)"
    color = charts.system_color(df["system"].to_list(), "system", None)
    tooltip = ["system:N", "n_chips:Q", "concurrency:Q", alt.Tooltip("interactivity_tok_s_user:Q", format=",.0f"),
               alt.Tooltip("throughput_tok_s_chip:Q", format=",.0f")]
    banded = "throughput_tok_s_chip_low" in df.columns and df["throughput_tok_s_chip_low"].drop_nulls().len() > 0
    if banded:
        tooltip += [alt.Tooltip("throughput_tok_s_chip_low:Q", format=",.0f", title="band low"),
                    alt.Tooltip("throughput_tok_s_chip_high:Q", format=",.0f", title="band high"),
                    alt.Tooltip("band_scheme:N", title="band's scheme")]
    lines = alt.Chart(df).mark_line(point=alt.OverlayMarkDef(size=22)).encode(
        x=x, y=alt.Y("throughput_tok_s_chip:Q", title=y_title, scale=alt.Scale(type="log")),
        color=color, strokeDash=charts.series_dash(df["system"].to_list(), "system", None),
        order="interactivity_tok_s_user:Q", tooltip=tooltip)
    if not banded:
        return lines.properties(title=title)
    band = alt.Chart(df).transform_filter("isValid(datum.throughput_tok_s_chip_low)").mark_area(opacity=0.12).encode(
        x=x, y=alt.Y("throughput_tok_s_chip_low:Q", title=y_title, scale=alt.Scale(type="log")),
        y2="throughput_tok_s_chip_high:Q", color=color, detail="system:N", tooltip=tooltip)
    names = "; ".join(sorted(df["band_scheme"].drop_nulls().unique().to_list()))
    subtitle = (f"shaded: each serving-model frontier's {100 * calibration.BAND_LEVEL:.0f} % band, of validation scheme "
                f"{names}; the LPU's upper bound has no band")
    return alt.layer(band, lines).properties(title=alt.TitleParams(title, subtitle=charts.wrap_title(subtitle)))


def tpu_all_to_all(df: pl.DataFrame, tokens_per_chip: float) -> alt.Chart:
    """Decode all-to-all time per token of each MoE model on TPU 8t and 8i (:func:`jalapeno.systems.tpu_all_to_all`
    over several ``tokens_per_chip``), split into hop latency and bandwidth; a drop-down picks the decode
    tokens per chip (``tokens_per_chip`` first)."""
    data = pl.concat([
        df.select("model", "system", "tokens_per_chip", pl.lit("hop latency").alias("part"),
                  (pl.col("latency_per_layer_s") * pl.col("moe_layers") * 1e3).alias("ms")),
        df.select("model", "system", "tokens_per_chip", pl.lit("bandwidth").alias("part"),
                  ((pl.col("per_token_s") - pl.col("latency_per_layer_s") * pl.col("moe_layers")) * 1e3).alias("ms")),
    ])
    data = data.with_columns(pl.concat_str([pl.col("model"), pl.col("system")], separator=" on ").alias("case"))
    # the cases down the side: six labels of a model and a pod overlap side by side in a phone's column
    chart = alt.Chart(data).mark_bar().encode(
        y=alt.Y("case:N", title=None, sort=sorted(set(data["case"].to_list()))),
        x=alt.X("ms:Q", title="all-to-all time per output token (ms)", stack="zero"),
        color=charts.series_color(["hop latency", "bandwidth"], "part"),
        order=alt.Order("part_rank:Q"),
        tooltip=["model:N", "system:N", "part:N", alt.Tooltip("ms:Q", format=",.3f")],
    ).transform_calculate(part_rank="datum.part == 'hop latency' ? 0 : 1").properties(
        title="Decode all-to-all: the 3D torus pays its diameter")
    values = tuple(float(v) for v in dict.fromkeys(df["tokens_per_chip"].to_list()))
    return charts.explorable(chart, charts.Knob("tokens_per_chip", values, float(tokens_per_chip), "decode tokens per chip", kind="select"))


def fabric_hop_budget(df: pl.DataFrame) -> alt.Chart:
    """The largest per-hop latency consistent with a published single-user speed against the scale-up domain
    size (:func:`jalapeno.systems.max_consistent_hop_latency`), one line per fabric, dashes per model."""
    data = df.filter(pl.col("max_hop_latency_s").is_not_null() & (pl.col("chips") > 1)).with_columns(
        (pl.col("max_hop_latency_s") * 1e6).alias("max_hop_latency_us"))
    return alt.Chart(data).mark_line(strokeWidth=2).encode(
        x=alt.X("chips:Q", title="chips in the scale-up domain", scale=alt.Scale(type="log", base=2)),
        y=alt.Y("max_hop_latency_us:Q", title="largest per-hop latency consistent (µs)", scale=alt.Scale(type="log")),
        color=charts.series_color(data["fabric"].to_list(), "fabric", "fabric"),
        strokeDash=charts.series_dash(data["model"].to_list(), "model", "published speed", legend=charts.LINE_LEGEND),
        detail="model:N", order="chips:Q",
        tooltip=["model:N", "fabric:N", "chips:Q", "diameter_hops:Q", alt.Tooltip("max_hop_latency_us:Q", format=".2f"),
                 alt.Tooltip("best_tpot_s:Q", format=".2e")],
    ).properties(title="Per-hop latency a Jalapeño fabric can afford at the published speeds")


def capacity_chips(df: pl.DataFrame, context_tokens: int, tier: str, concurrency: int) -> alt.Chart:
    """Chips needed to hold weights plus the KV cache of ``concurrency`` sequences
    (:func:`jalapeno.systems.capacity_table`) per system and model, log scale, with drop-downs for the
    context and the memory tier (starting at ``context_tokens``, ``tier``)."""
    chart = alt.Chart(df).mark_bar().encode(
        y=alt.Y("system:N", title=None), yOffset=alt.YOffset("model:N"),
        x=alt.X("chips:Q", title="chips to hold weights + KV cache", scale=alt.Scale(type="log", domainMin=0.5), stack=None),
        color=charts.series_color(df["model"].to_list(), "model", "model"),
        tooltip=["system:N", "model:N", alt.Tooltip("tier:N", title="memory tier"),
                 alt.Tooltip("context_tokens:Q", title="context (tokens)", format=","), "chips:Q",
                 alt.Tooltip("systems_needed:Q", title="systems", format=",.2f"),
                 alt.Tooltip("bytes_needed:Q", title="bytes to hold", format=".3s")],
    ).properties(title=f"Capacity: chips that hold the weights and the KV cache of {number(concurrency):,} users")
    contexts = tuple(int(c) for c in sorted(set(df["context_tokens"].to_list())))
    tiers = tuple(t for t in ("sram", "hbm", "hbm+host") if t in set(df["tier"].to_list()))
    return charts.explorable(chart, charts.Knob("context_tokens", contexts, int(context_tokens), "context (tokens)", kind="select"),
                             charts.Knob("tier", tiers, tier, "memory tier", kind="select"))


#: Stroke of each kind of link in a fabric diagram (a Dragonfly's levels from dark to light).
_LINK_STROKES = {"link": "#7f7f7f", "switch link": "#7f7f7f", "wraparound": "#7f7f7f",
                 "level 1": "#404040", "level 2": "#8c8c8c", "level 3": "#bdbdbd", "level 4": "#d9d9d9"}


#: A diagram's title breaks into lines of at most this many characters: its titles are names and counts
#: in capitals, wider a character than the prose of a chart's title (:data:`jalapeno.charts.TITLE_CHARS`).
DIAGRAM_TITLE_CHARS = 38


def topology_diagram(drawing: dict[str, object], *, title: str, subtitle: list[str] | None = None,
                     panel_titles: dict[str, str] | None = None, size: int = 260,
                     columns: int | None = None) -> alt.HConcatChart | alt.VConcatChart:
    """A node-link diagram of a fabric from :func:`jalapeno.diagrams.drawing` (``nodes``, ``links``,
    ``panels``, ``notes``): one square panel of ``size`` px per panel of the drawing, side by side; chips
    (and units) filled by their hop count from the ringed reference chip on one scale for every panel,
    a switch as a black square, wraparound links as dashed stubs, a Dragonfly's levels from dark (level 1)
    to light. ``title`` and ``subtitle`` (lines; the drawing's notes are added) head the figure;
    ``panel_titles`` (panel -> text) replace the drawing's own panel descriptions; ``columns`` panels a row
    (default all in one row)."""
    nodes, links = drawing["nodes"], drawing["links"]
    panels = dict(drawing["panels"]) | (panel_titles or {})
    top = max(1, int(nodes["hops"].max() or 1))
    kinds = [k for k in _LINK_STROKES if k in set(links["kind"].to_list())]
    # an ordinal scale: a symbol legend (vl-convert numbers gradient ids across calls, so a gradient
    # legend's SVG would depend on what was drawn before it)
    fill = alt.Fill("hops:O", title="hops from the ringed chip",
                    scale=alt.Scale(scheme="viridis", domain=list(range(top + 1)), reverse=True),
                    legend=alt.Legend(orient="bottom", direction="horizontal", columns=min(top + 1, 8)))
    drawn = []
    for panel, text in panels.items():
        pn, pl_ = nodes.filter(pl.col("panel") == panel), links.filter(pl.col("panel") == panel)
        xs = pn["x"].to_list() + pl_["x"].to_list() + pl_["x2"].to_list()
        ys = pn["y"].to_list() + pl_["y"].to_list() + pl_["y2"].to_list()
        pad = 0.08 * max(max(xs) - min(xs), max(ys) - min(ys), 1.0)
        (x0, x1), (y0, y1) = (min(xs) - pad, max(xs) + pad), (min(ys) - pad, max(ys) + pad)
        unit = min(size, charts.MIN_COLUMN_PX - 40) / max(x1 - x0, y1 - y0)  # px per unit, equal on both axes
        width, height = round((x1 - x0) * unit), round((y1 - y0) * unit)
        x = alt.X("x:Q", axis=None, scale=alt.Scale(domain=[x0, x1], nice=False, zero=False))
        y = alt.Y("y:Q", axis=None, scale=alt.Scale(domain=[y0, y1], nice=False, zero=False))
        count = max(pn.height, 1)
        radius = max(12, min(160, int(9000 / count)))
        layers = [alt.Chart(pl_).mark_rule(strokeWidth=1, strokeOpacity=0.8 if pl_.height < 300 else 0.5).encode(
            x=x, y=y, x2="x2:Q", y2="y2:Q",
            stroke=alt.Stroke("kind:N", title="link", scale=alt.Scale(domain=kinds, range=[_LINK_STROKES[k] for k in kinds])),
            strokeDash=alt.StrokeDash("kind:N", scale=alt.Scale(domain=kinds, range=[[4, 3] if k == "wraparound" else [1, 0] for k in kinds]),
                                      legend=None))]
        chips = pn.filter(pl.col("role") != "switch")
        tooltip = [alt.Tooltip("role:N"), alt.Tooltip("node:Q", title="index"), alt.Tooltip("chips:Q"), alt.Tooltip("hops:Q")]
        layers.append(alt.Chart(chips).mark_circle(size=radius, opacity=1, stroke="black").encode(
            x=x, y=y, fill=fill, strokeWidth=alt.condition(alt.datum.role == "reference chip", alt.value(2.5), alt.value(0.3)),
            tooltip=tooltip))
        switch = pn.filter(pl.col("role") == "switch")
        if switch.height:
            layers.append(alt.Chart(switch).mark_square(size=400, color="black").encode(
                x=x, y=y, tooltip=[alt.Tooltip("role:N")]))
        drawn.append(alt.layer(*layers).properties(width=width, height=height, title=alt.TitleParams(text, fontSize=12)))
    # in a wide sans-serif (DejaVu Sans, the default where no other font is installed) 52 characters of
    # subtitle, or 45 of a title in capitals ("GB200 NVL72: ..."), overflow a phone's 358 px column
    lines = [part for line in list(subtitle or []) + list(drawing["notes"]) for part in _lines(line, charts.TITLE_CHARS)]
    heading = _lines(title, DIAGRAM_TITLE_CHARS)
    head = alt.TitleParams(heading, subtitle=lines, anchor="start") if lines else alt.TitleParams(heading, anchor="start")
    # as many panels a row as fit a phone's column (358 px), at most ``columns``
    per_row = max(1, min(columns or len(drawn), charts.MIN_COLUMN_PX // (max(c.width for c in drawn) + 20)))
    rows = [alt.hconcat(*drawn[i:i + per_row], spacing=20) for i in range(0, len(drawn), per_row)]
    whole = rows[0] if len(rows) == 1 else alt.vconcat(*rows, spacing=16)
    return whole.resolve_scale(fill="shared", stroke="shared").properties(title=head)


def _lines(text: str, chars: int) -> list[str]:
    """``text`` broken at spaces into lines of at most ``chars`` characters (:func:`jalapeno.charts.wrap_title`)."""
    wrapped = charts.wrap_title(text, chars)
    return wrapped if isinstance(wrapped, list) else [wrapped]
