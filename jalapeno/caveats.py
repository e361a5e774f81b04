"""The skeptics' what-ifs, each computed: what remains of the published Jalapeño ratios when one
condition of the comparison changes.

Sections (the caveats chapter follows them):

- **Vera Rubin** (:func:`vera_rubin_chip`, :func:`vera_rubin_table`): NVIDIA's next GPU, from its
  preliminary specs (``chip_specs.csv``) with its unpublished power, its bandwidth and its FP4 rate as
  ranges (``whatif_ranges.csv``), projected into the serving model's frontier.
- **Power bases** (:func:`jalapeno.comparison.power_basis_table` over all its rows): rated TDP,
  sustained power, all-in IT power (host and network, both rules of :mod:`jalapeno.power`) and facility
  power (x PUE, cooling and power delivery).
- **Workload shape** (:func:`shape_sweep`): the advantage at other input/output lengths than 8k/1k.
- **Baselines** (:func:`measured_chip_comparison`): the published Jalapeño numbers against every
  measured chip, not only the one the vendor chose.
- **AI-generated kernels** (:func:`amdahl`, :func:`decode_breakdown`, :func:`kernel_speedup_table`):
  Amdahl's law with the time share of attention and MoE blocks from the serving model.
- **HBM4 supply** (:func:`hbm_table`): stacks and bytes of HBM per gigawatt of deployed chips, and chips
  per year under a supply share.
- **"104x"** (:func:`pareto_shape_table`, :func:`matched_ratio_shapes`): the matched-interactivity ratio
  as a function of where on the baseline's frontier it is taken.
- **Business figures** (:func:`business_table`): what the seeds' financial numbers imply by arithmetic.

SI units throughout (W, s, bytes, FLOP/s); ratios are Jalapeño / other unless named otherwise. Every
number comes from ``data/`` (claims, specs, ``whatif_ranges.csv``, ``public_facts.csv``) or from the
serving model (:mod:`jalapeno.serving`, :mod:`jalapeno.pareto`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from . import calibration, measured, metrics, pareto, power, serving, specs, subject
from .data import claim_value, fact, seed_public_data_questions, whatif
from .errors import UnknownNameError
from .metrics import mean_request_length
from .specs import ChipSpec, ModelSpec

# ---- frontier comparisons ----------------------------------------------------------------------------

#: The comparisons a published ratio makes, as functions of two frontiers (see :func:`front_ratios`).
METRICS = ("per_kw_at_peak", "single_user", "e2e", "matched")

#: Published ratio of each (model, metric) as claim ids: (numerator, denominator) or one ratio claim.
PUBLISHED = {
    ("gpt-oss-120b", "per_kw_at_peak"): ("gptoss-jalapeno-tok-per-kw", "gptoss-gb200-tok-per-kw"),
    ("gpt-oss-120b", "single_user"): ("gptoss-jalapeno-single-user", "gptoss-gb200-single-user"),
    ("gpt-oss-120b", "e2e"): ("gptoss-gb200-e2e", "gptoss-jalapeno-e2e"),
    ("gpt-oss-120b", "matched"): ("gptoss-matched-tbt-ratio",),
    ("deepseek-r1", "single_user"): ("single-user-speed-ratio-dsr1",),
    ("deepseek-r1", "matched"): ("dsr1-matched-tbt-ratio",),
    ("kimi-k2.5", "per_kw_at_peak"): ("kimi-per-watt-ratio",),
    ("kimi-k2.5", "single_user"): ("kimi-tbt-ratio",),
    ("kimi-k2.5", "e2e"): ("kimi-e2e-ratio",),
    ("kimi-k2.5", "matched"): ("kimi-matched-tbt-ratio",),
}


def published_ratio(model: str, metric: str) -> tuple[float, str]:
    """The published ratio of ``model`` for ``metric`` and the claim ids it comes from (NaN, "" if none)."""
    if metric not in METRICS:
        raise UnknownNameError("metric", metric, METRICS)
    ids = PUBLISHED.get((specs.model(model).model, metric))
    if not ids:
        return float("nan"), ""
    value = claim_value(ids[0]) / claim_value(ids[1]) if len(ids) == 2 else claim_value(ids[0])
    return value, " / ".join(ids)


def front_ratios(new: pl.DataFrame, old: pl.DataFrame) -> dict[str, float]:
    """The published kinds of ratio between two frontiers (new / old):

    ``per_kw_at_peak``: highest tok/s/kW; ``single_user``: highest interactivity (1 / best TBT);
    ``e2e``: old's lowest E2E / new's lowest E2E; ``matched``: tok/s/kW at old's highest interactivity
    (:func:`jalapeno.pareto.matched_ratio`; NaN when new cannot reach it), with that interactivity as
    ``matched_at``."""
    m = pareto.matched_ratio(new, old)
    return {"per_kw_at_peak": float(new["tok_s_per_kw"].max() / old["tok_s_per_kw"].max()),
            "single_user": float(new["interactivity_tok_s_user"].max() / old["interactivity_tok_s_user"].max()),
            "e2e": float(old["e2e_s"].min() / new["e2e_s"].min()),
            "matched": m["ratio"], "matched_at": m["interactivity_tok_s_user"]}


#: Vera Rubin cases: which column of ``whatif_ranges.csv`` each of its unknowns takes. ``pessimistic``
#: is the slowest, hungriest Rubin the reports allow (for Rubin), ``optimistic`` the fastest, leanest.
VERA_RUBIN_CASES = {
    "pessimistic": {"vera_rubin_hbm_bandwidth": "low", "vera_rubin_fp4": "low", "vera_rubin_tdp": "high"},
    "central": {"vera_rubin_hbm_bandwidth": "central", "vera_rubin_fp4": "central", "vera_rubin_tdp": "central"},
    "optimistic": {"vera_rubin_hbm_bandwidth": "high", "vera_rubin_fp4": "high", "vera_rubin_tdp": "low"},
}


def vera_rubin_chip(case: str = "central") -> ChipSpec:
    """Vera Rubin's ChipSpec (``chip_specs.csv``, preliminary) with its TDP, HBM bandwidth and FP4 rate
    set to one case of :data:`VERA_RUBIN_CASES`; UnknownNameError for another case."""
    if case not in VERA_RUBIN_CASES:
        raise UnknownNameError("Vera Rubin case", case, list(VERA_RUBIN_CASES))
    pick = VERA_RUBIN_CASES[case]
    base = specs.chip("vera-rubin")
    return serving.with_chip(
        base, tdp_w=whatif("vera_rubin_tdp", pick["vera_rubin_tdp"]),
        hbm_bandwidth_bytes_per_s=whatif("vera_rubin_hbm_bandwidth", pick["vera_rubin_hbm_bandwidth"]),
        peak_dense_flops_per_s={**base.peak_dense_flops_per_s, "fp4": whatif("vera_rubin_fp4", pick["vera_rubin_fp4"])})


def vera_rubin_table(models=("gpt-oss-120b", "deepseek-r1", "kimi-k2.5"), *, fit: subject.JalapenoFit | None = None,
                     scenario: str = "central", cases=tuple(VERA_RUBIN_CASES), power_basis: str = "rated",
                     max_chips: int = 8) -> pl.DataFrame:
    """Each published kind of ratio (:data:`METRICS`) of Jalapeño's modeled frontier (``scenario`` of its
    unknowns, fitted constants ``fit``, default :func:`jalapeno.subject.fit_jalapeno`) against the published baseline of each model
    (:data:`jalapeno.pareto.PUBLISHED_RATIOS`; :func:`jalapeno.pareto.baseline_frontier`: measured
    where InferenceMAX measured it, else transferred from measured layouts) and against
    Vera Rubin in each case (modeled, at most ``max_chips`` chips per decode worker, like a modeled
    baseline).

    One row per model, metric and case: ``vs_baseline``, ``vs_vera_rubin``, ``remaining``
    (``vs_vera_rubin / vs_baseline``: the share of the advantage left), ``published`` and
    ``published_projected`` (published x remaining), ``claims``."""
    rows = []
    for m in models:
        key = specs.model(m).model
        _, base_chip = pareto.PUBLISHED_RATIOS.get(key, (None, "gb300"))
        old = pareto.baseline_frontier(key, base_chip, power_basis=power_basis, max_chips=max_chips)
        new = subject.jalapeno_frontier(key, scenario, fit=fit, power_basis=power_basis)
        vs_base = front_ratios(new, old)
        for case in cases:
            vr = pareto.frontier(vera_rubin_chip(case), key, power_basis=power_basis, max_chips=max_chips)
            vs_vr = front_ratios(new, vr)
            for metric in METRICS:
                pub, ids = published_ratio(key, metric)
                remaining = vs_vr[metric] / vs_base[metric]
                rows.append({"model": key, "metric": metric, "case": case, "baseline": base_chip,
                             "baseline_source": old["source"][0], "vs_baseline": vs_base[metric],
                             "vs_vera_rubin": vs_vr[metric], "remaining": remaining, "published": pub,
                             "published_projected": pub * remaining, "claims": ids})
    return pl.DataFrame(rows)


# ---- workload shape -----------------------------------------------------------------------------------

#: The input/output lengths of the sweep (nominal, as the benchmark names them). The longest is 127k in
#: and 1k out: ISL + OSL must fit gpt-oss-120b's context window of 131,072 tokens.
SHAPES = ((1024, 1024), (1024, 8192), (8192, 1024), (32768, 1024), (130048, 1024))


def shape_sweep(model: str = "gpt-oss-120b", baseline: str = "gb200", shapes=SHAPES, *,
                fit: subject.JalapenoFit | None = None, scenario: str = "central", power_basis: str = "rated",
                max_chips: int = 8) -> pl.DataFrame:
    """Jalapeño's advantage (:func:`front_ratios`) at each (ISL, OSL) of ``shapes``: both frontiers from
    the serving model (the baseline modeled even where measured, so that every shape is compared the same
    way), Jalapeño's constants fitted at 8k/1k (``fit``, default :func:`jalapeno.subject.fit_jalapeno`) and
    carried to the other shapes.

    Columns: ``isl``, ``osl``, ``shape`` (``8k/1k``), each metric of :data:`METRICS`, ``matched_at``,
    ``jalapeno_peak_tok_s_kw``, ``baseline_peak_tok_s_kw``. Raises ValueError for a shape no chip fits."""
    rows = []
    for isl, osl in shapes:
        new = subject.jalapeno_frontier(model, scenario, fit=fit, isl=isl, osl=osl, power_basis=power_basis)
        old = pareto.frontier(baseline, model, isl=isl, osl=osl, power_basis=power_basis, max_chips=max_chips)
        r = front_ratios(new, old)
        rows.append({"isl": isl, "osl": osl, "shape": f"{isl // 1024}k/{osl // 1024}k", **r,
                     "jalapeno_peak_tok_s_kw": float(new["tok_s_per_kw"].max()),
                     "baseline_peak_tok_s_kw": float(old["tok_s_per_kw"].max())})
    return pl.DataFrame(rows)


# ---- baselines chosen by the vendor ---------------------------------------------------------------------

def measured_chip_comparison(model: str = "gpt-oss-120b", *, isl: int = 8192, osl: int = 1024,
                             jalapeno_tok_s_kw: float | None = None, jalapeno_tok_s_user: float | None = None) -> pl.DataFrame:
    """The published Jalapeño peak tok/s/kW and single-user speed (claims ``gptoss-jalapeno-tok-per-kw``
    and ``gptoss-jalapeno-single-user``, or the values given) against every chip InferenceMAX measured on
    ``model`` at that shape (best over its stacks and runs, no speculative decoding; per kW of the chip's
    rated TDP).

    Columns: ``chip``, ``vendor``, ``tdp_w``, ``peak_tok_s_kw``, ``best_tok_s_user``, ``per_kw_ratio``,
    ``single_user_ratio``. Only gpt-oss-120b has published Jalapeño numbers on both sides."""
    key = specs.model(model).model
    if key != "gpt-oss-120b":
        raise ValueError(f"published Jalapeño throughput and speed exist for gpt-oss-120b only, got {model!r}")
    pts = measured.points(key, isl=isl, osl=osl)
    pts = pts.with_columns(chip=pl.col("hw").replace_strict({h: calibration.chip_of(h) for h in pts["hw"].unique()}))
    j_kw = claim_value("gptoss-jalapeno-tok-per-kw") if jalapeno_tok_s_kw is None else jalapeno_tok_s_kw
    j_user = claim_value("gptoss-jalapeno-single-user") if jalapeno_tok_s_user is None else jalapeno_tok_s_user
    rows = []
    for chip in sorted(pts["chip"].unique()):
        c = specs.chip(chip)
        p = pts.filter(pl.col("chip") == chip)
        kw = metrics.throughput_per_kw(float(p["tput_per_gpu"].max()), power.power_w(c, "rated"))
        user = float((1.0 / p["mean_tpot"]).max())
        rows.append({"chip": chip, "vendor": c.vendor, "tdp_w": c.tdp_w, "peak_tok_s_kw": kw, "best_tok_s_user": user,
                     "per_kw_ratio": j_kw / kw, "single_user_ratio": j_user / user})
    return pl.DataFrame(rows).sort("peak_tok_s_kw", descending=True)


# ---- AI-generated kernels: Amdahl's law -----------------------------------------------------------------

def amdahl(share, speedup):
    """Whole-program speedup when a part taking ``share`` of the time runs ``speedup`` times faster:
    ``1 / ((1 - share) + share / speedup)`` (Amdahl, AFIPS 1967). Scalars or arrays; ValueError for a
    share outside [0, 1] or a non-positive speedup."""
    f, s = np.asarray(share, dtype=float), np.asarray(speedup, dtype=float)
    if np.any((f < 0) | (f > 1)) or np.any(np.isnan(f)):
        raise ValueError(f"share must lie in [0, 1], got {share!r}")
    if np.any(s <= 0):
        raise ValueError(f"speedup must be positive, got {speedup!r}")
    out = 1.0 / ((1 - f) + f / s)
    return float(out) if out.ndim == 0 else out


def amdahl_curve(speedups=(1.5, 1.8), points: int = 51) -> pl.DataFrame:
    """:func:`amdahl` over shares 0..1 (``points`` evenly spaced) for each block speedup: columns
    ``share``, ``block_speedup``, ``speedup``."""
    f = np.linspace(0.0, 1.0, points)
    return pl.concat([pl.DataFrame({"share": f, "block_speedup": float(s), "speedup": amdahl(f, s)})
                      for s in speedups])


#: Parts of a decode step that the seeds' "selected attention and MoE blocks" can cover.
KERNEL_PARTS = ("kv_attention_s", "attention_weights_s", "expert_weights_s")


def decode_breakdown(model: ModelSpec | str, chip: ChipSpec | str, *, n_chips: float = 1, concurrency: float = 1,
                     dp: float = 1, isl: int = 8192, osl: int = 1024, precision: str | None = None,
                     eff: serving.Efficiency | None = None, stack: str = "default",
                     hbm_bandwidth_bytes_per_s: float | None = None) -> dict[str, float]:
    """One decode step of :func:`jalapeno.serving.evaluate` (same configuration, bandwidth override
    included) split by what it spends its time on (s, per chip): a view of the evaluation's own parts.

    ``kv_attention_s`` (reading the KV cache: attention over the context), ``attention_weights_s``,
    ``expert_weights_s`` (routed experts), ``other_weights_s`` (dense MLP, router, shared experts,
    output head), ``comm_s`` (the evaluation's collectives), ``overhead_s`` (per-layer step overhead);
    ``sum_s``, their sum, and ``decode_step_s``, the evaluation's step (equal to it). The weight term of
    the roofline, ``max(W / BW, F / C)``, is split as the evaluation splits the weight reads when
    memory-bound, in proportion to FLOPs per token when compute-bound. ``memory_bound`` says which.
    Raises what ``evaluate`` raises."""
    m, c = specs.model(model), specs.chip(chip)
    eff = eff or calibration.load()
    precision = precision or pareto.DEFAULT_PRECISION.get(m.model, "fp8")
    r = serving.evaluate(m, c, serving.Layout(n_chips=n_chips, dp=dp, hbm_bandwidth_bytes_per_s=hbm_bandwidth_bytes_per_s),
                         serving.Workload(concurrency=concurrency, isl=isl, osl=osl, precision=precision),
                         stack=stack, eff=eff)
    memory_bound = bool(r.memory_bound)
    if memory_bound:
        shares = np.array([float(r.attention_weights_s), float(r.expert_weights_s), float(r.other_weights_s)])
    else:  # FLOPs per token by part: projections, routed experts, the rest (attention over the context with attention)
        g = m.param_groups()
        f_total = m.decode_flops_per_token(mean_request_length(isl) + mean_request_length(osl) / 2)
        f_exp = 2 * m.routed_active_params()
        f_other = 2 * (g["dense_mlp"] + g["router"] + g["shared_experts"] + m.embedding_params())
        shares = np.array([f_total - f_exp - f_other, f_exp, f_other])
    shares = shares / shares.sum()
    roof_weights = float(np.maximum(r.weights_s, r.compute_s))
    parts = {"kv_attention_s": float(r.kv_s), "attention_weights_s": roof_weights * shares[0],
             "expert_weights_s": roof_weights * shares[1], "other_weights_s": roof_weights * shares[2],
             "comm_s": float(r.collectives_s), "overhead_s": float(r.overhead_s)}
    return {**parts, "decode_step_s": float(r.decode_step_s), "sum_s": sum(parts.values()), "memory_bound": memory_bound}


def kernel_speedup_table(model: str, chip: ChipSpec | str, front: pl.DataFrame, *, eff: serving.Efficiency,
                         stack: str, speedups=(1.5, 1.8), isl: int = 8192, osl: int = 1024) -> pl.DataFrame:
    """Amdahl on the decode step at two operating points of ``front`` (a frontier of ``chip``): its
    highest-interactivity point (``best TBT``) and its highest-throughput point (``peak throughput``).

    ``kernel_share`` is the share of the step in :data:`KERNEL_PARTS` (attention and MoE blocks: the
    most the seeds' "selected blocks" can cover); ``step_speedup_<s>`` the whole-step speedup if all of
    it ran ``s`` times faster; ``share_<part>`` each part's share."""
    best = front.sort("interactivity_tok_s_user").row(-1, named=True)
    peak = front.sort("throughput_tok_s_chip").row(-1, named=True)
    rows = []
    for label, p in (("best TBT", best), ("peak throughput", peak)):
        d = decode_breakdown(model, chip, n_chips=p["n_chips"], concurrency=p["concurrency"], dp=p["dp"],
                             isl=isl, osl=osl, eff=eff, stack=stack)
        share = sum(d[k] for k in KERNEL_PARTS) / d["decode_step_s"]
        row = {"operating_point": label, "n_chips": p["n_chips"], "concurrency": p["concurrency"],
               "decode_step_s": d["decode_step_s"],
               **{f"share_{k.removesuffix('_s')}": d[k] / d["decode_step_s"]
                  for k in ("kv_attention_s", "attention_weights_s", "expert_weights_s", "other_weights_s",
                            "comm_s", "overhead_s")},
               "kernel_share": share}
        for s in speedups:
            row[f"step_speedup_{s:g}"] = amdahl(share, s)
        rows.append(row)
    return pl.DataFrame(rows)


# ---- HBM4 supply -------------------------------------------------------------------------------------------

def hbm_per_stack_bytes(chip: ChipSpec | str = "jalapeno") -> float:
    """HBM capacity per stack (bytes): capacity / stacks (Jalapeño: 216 GB / 6 = 36 GB). ValueError if
    either is unknown."""
    c = specs.chip(chip)
    if not (c.hbm_capacity_bytes and c.hbm_stacks):
        raise ValueError(f"chip {c.chip!r} has no published HBM capacity and stack count")
    return c.hbm_capacity_bytes / c.hbm_stacks


def hbm_table(chips=("jalapeno", "gb200", "gb300", "vera-rubin"), *, power_basis: str = "rated",
              pue: float | None = None, supply_share: float = 0.01) -> pl.DataFrame:
    """HBM per gigawatt of deployed chips and chips per year under a supply share, per chip.

    Power per chip: :func:`jalapeno.power.power_w` under ``power_basis`` (``pue`` for ``facility``; Vera
    Rubin has no TDP in ``chip_specs.csv``: its central what-if TDP is used). Supply: the 2026
    HBM shipment forecast of ``public_facts.csv`` (``hbm_shipments_2026``, bytes). Columns: ``chip``,
    ``hbm_gb``, ``stacks``, ``gb_per_stack``, ``watts_per_chip``, ``chips_per_gw``, ``stacks_per_gw``,
    ``hbm_pb_per_gw``, ``supply_share_per_gw`` (fraction of the year's HBM one GW takes),
    ``chips_per_year`` and ``gw_per_year`` at ``supply_share`` of the supply. Raises ValueError for a
    share outside (0, 1]."""
    if not 0 < supply_share <= 1:
        raise ValueError(f"supply_share must lie in (0, 1], got {supply_share!r}")
    supply = fact("hbm_shipments_2026")
    rows = []
    for name in chips:
        c = specs.chip(name)
        if c.chip == "vera-rubin" and not c.tdp_w:
            c = serving.with_chip(c, tdp_w=whatif("vera_rubin_tdp"))
        watts = power.power_w(c, power_basis, pue=pue)
        chips_gw = 1e9 / watts
        rows.append({"chip": c.chip, "hbm_gb": c.hbm_capacity_bytes / 1e9, "stacks": c.hbm_stacks,
                     "gb_per_stack": hbm_per_stack_bytes(c) / 1e9, "watts_per_chip": watts,
                     "chips_per_gw": chips_gw, "stacks_per_gw": chips_gw * c.hbm_stacks,
                     "hbm_pb_per_gw": chips_gw * c.hbm_capacity_bytes / 1e15,
                     "supply_share_per_gw": chips_gw * c.hbm_capacity_bytes / supply,
                     "chips_per_year": supply_share * supply / c.hbm_capacity_bytes,
                     "gw_per_year": supply_share * supply / c.hbm_capacity_bytes * watts / 1e9})
    return pl.DataFrame(rows)


# ---- "104x": the shape of the frontier -----------------------------------------------------------------------

def pareto_shape_table(new: pl.DataFrame, old: pl.DataFrame, fractions=(0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0),
                       column: str = "tok_s_per_kw") -> pl.DataFrame:
    """The matched-interactivity ratio ``new / old`` of ``column`` taken at fractions of ``old``'s highest
    interactivity (1.0 is the published construction): columns ``fraction``, ``interactivity_tok_s_user``,
    ``old``, ``new``, ``ratio``. ValueError for a fraction outside (0, 1]."""
    f = np.asarray(fractions, dtype=float)
    if np.any((f <= 0) | (f > 1)):
        raise ValueError(f"fractions must lie in (0, 1], got {fractions!r}")
    x = f * float(old["interactivity_tok_s_user"].max())
    y_old, y_new = pareto.throughput_at(old, x, column), pareto.throughput_at(new, x, column)
    return pl.DataFrame({"fraction": f, "interactivity_tok_s_user": x, "old": y_old, "new": y_new,
                         "ratio": y_new / y_old})


def matched_ratio_shapes(models=tuple(pareto.PUBLISHED_RATIOS), *, fit: subject.JalapenoFit | None = None,
                         scenario: str = "central", max_chips: int = 8) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The published matched ratios as the shape of two frontiers, for each of ``models`` that has one
    (:data:`jalapeno.pareto.PUBLISHED_RATIOS`; the others are skipped): Jalapeño's modeled frontier
    (``scenario``, fitted constants ``fit``) against the published baseline's
    (:func:`jalapeno.pareto.baseline_frontier`, at most ``max_chips`` chips per worker where modeled).

    Returns ``(table, curves)``: ``table``, :func:`pareto_shape_table` per model with ``model`` and
    ``baseline`` first; ``curves``, :func:`jalapeno.pareto.ratio_curve` per model with a ``label``
    (``<model> vs <baseline>``). Raises ValueError if no model of ``models`` has a published ratio."""
    keys = list(dict.fromkeys(specs.model(m).model for m in models))
    keys = [k for k in keys if k in pareto.PUBLISHED_RATIOS]
    if not keys:
        raise ValueError(f"no model of {list(models)!r} has a published matched ratio; "
                         f"those that do: {', '.join(pareto.PUBLISHED_RATIOS)}")
    tables, curves = [], []
    for m in keys:
        _, base_chip = pareto.PUBLISHED_RATIOS[m]
        old = pareto.baseline_frontier(m, base_chip, max_chips=max_chips)
        new = subject.jalapeno_frontier(m, scenario, fit=fit)
        tables.append(pareto_shape_table(new, old).with_columns(pl.lit(m).alias("model"), pl.lit(base_chip).alias("baseline")))
        curves.append(pareto.ratio_curve(new, old).with_columns(pl.lit(f"{m} vs {base_chip}").alias("label")))
    table = pl.concat(tables).select("model", "baseline", "fraction", "interactivity_tok_s_user", "old", "new", "ratio")
    return table, pl.concat(curves)


# ---- business figures ---------------------------------------------------------------------------------------

def business_table() -> pl.DataFrame:
    """The seeds' business figures, each with what it implies by arithmetic (``implied``, in ``unit``)
    and the public figure or claims it is computed from (``from``). Columns: ``topic``, ``claims``,
    ``implication``, ``implied``, ``unit``, ``from``."""
    v, hi = claim_value, (lambda c: claim_value(c, high=True))
    rev, dc = fact("nvidia_q2_fy2026_revenue"), fact("nvidia_q2_fy2026_dc_revenue")
    margin, target = v("anthropic-inference-gross-margin") / 100, v("anthropic-ipo-gross-margin-target") / 100
    saving = v("custom-asic-cost-saving") / 100
    watt_lo, watt_hi = v("headline-per-watt-ratio"), hi("headline-per-watt-ratio")
    share_lo, share_hi = v("inference-lifecycle-cost-share") / 100, hi("inference-lifecycle-cost-share") / 100
    rows = [
        ("NVIDIA quarter", "nvidia-revenue-expectation; nvidia-revenue-yoy-growth",
         "growth the 92 billion USD consensus implies over the reported quarter a year earlier",
         100 * (v("nvidia-revenue-expectation") / rev - 1), "%", "public_facts: nvidia_q2_fy2026_revenue"),
        ("NVIDIA quarter", "nvidia-dc-revenue-expectation",
         "data-centre growth the 85.4 billion USD expectation implies", 100 * (v("nvidia-dc-revenue-expectation") / dc - 1),
         "%", "public_facts: nvidia_q2_fy2026_dc_revenue"),
        ("NVIDIA quarter", "nvidia-dc-revenue-expectation; nvidia-revenue-expectation",
         "data-centre share of the expected revenue", 100 * v("nvidia-dc-revenue-expectation") / v("nvidia-revenue-expectation"),
         "%", "claims"),
        ("NVIDIA quarter", "jefferies-nvidia-revenue-estimate; nvidia-revenue-expectation",
         "Jefferies above consensus", 100 * (v("jefferies-nvidia-revenue-estimate") / v("nvidia-revenue-expectation") - 1),
         "%", "claims"),
        ("financing", "nvidia-openai-financing-guarantee; nvidia-dc-revenue-expectation",
         "financing guarantee in quarters of expected NVIDIA data-centre revenue",
         v("nvidia-openai-financing-guarantee") / v("nvidia-dc-revenue-expectation"), "quarters", "claims"),
        ("inference cost", "inference-lifecycle-cost-share; custom-asic-cost-saving",
         "lifetime cost saved if a 50 % cheaper ASIC served all inference (low end of the share)",
         100 * share_lo * saving, "%", "claims"),
        ("inference cost", "inference-lifecycle-cost-share; custom-asic-cost-saving",
         "the same at the high end of the inference share", 100 * share_hi * saving, "%", "claims"),
        ("margins", "anthropic-inference-gross-margin; anthropic-ipo-gross-margin-target",
         "factor by which inference cost must fall, at unchanged prices, to move the margin from 38 % to 77 %",
         (1 - margin) / (1 - target), "x", "claims"),
        ("margins", "anthropic-inference-gross-margin; custom-asic-cost-saving",
         "gross margin after the 50 % ASIC saving, at unchanged prices", 100 * (1 - (1 - margin) * (1 - saving)),
         "%", "claims"),
        ("margins", "anthropic-inference-gross-margin; headline-per-watt-ratio",
         "gross margin if cost fell by the 1.9x per-watt ratio (cost all energy, unchanged prices)",
         100 * (1 - (1 - margin) / watt_hi), "%", "claims"),
        ("margins", "anthropic-inference-gross-margin; headline-per-watt-ratio",
         "the same at the 1.5x low end of the per-watt range", 100 * (1 - (1 - margin) / watt_lo), "%", "claims"),
    ]
    return pl.DataFrame(rows, schema=["topic", "claims", "implication", "implied", "unit", "from"], orient="row")



# ---- which claims each section qualifies ---------------------------------------------------------------------

#: The claims of ``data/claims.csv`` each section of the caveats chapter qualifies (a test checks that
#: every id exists).
SECTION_CLAIMS = {
    "vera-rubin": ("headline-per-watt-ratio", "headline-e2e-ratio", "single-user-speed-ratio-gptoss",
                   "single-user-speed-ratio-dsr1", "gptoss-matched-tbt-ratio", "dsr1-matched-tbt-ratio",
                   "kimi-matched-tbt-ratio", "kimi-per-watt-ratio", "kimi-e2e-ratio", "kimi-tbt-ratio"),
    "power": ("headline-per-watt-ratio", "gptoss-jalapeno-tok-per-kw", "gptoss-gb200-tok-per-kw", "jalapeno-tdp",
              "jalapeno-sustained-power", "gb200-tdp", "gb300-tdp"),
    "shape": ("workload-isl", "workload-osl", "headline-per-watt-ratio", "headline-e2e-ratio",
              "headline-interactive-ratio", "gptoss-matched-tbt-ratio"),
    "baselines": ("tested-model-count", "semianalysis-beat-every-chip", "headline-per-watt-ratio",
                  "single-user-speed-ratio-gptoss", "agent-30-step-saving", "agent-50-step-saving"),
    "kernels": ("ai-kernel-speedup", "model-port-months", "model-port-count", "design-to-tapeout-months"),
    "hbm": ("jalapeno-hbm4-stacks", "jalapeno-hbm-capacity", "hbm-presold-through-year", "hbm-tightest-supply-year",
            "broadcom-gw-deployment-scale"),
    "pareto-shape": ("gptoss-matched-tbt-ratio", "dsr1-matched-tbt-ratio", "kimi-matched-tbt-ratio",
                     "headline-interactive-ratio"),
    "business": ("nvidia-revenue-expectation", "nvidia-revenue-yoy-growth", "nvidia-dc-revenue-expectation",
                 "jefferies-nvidia-revenue-estimate", "nvidia-openai-financing-guarantee",
                 "financing-weeks-before-benchmark", "inference-lifecycle-cost-share", "custom-asic-cost-saving",
                 "anthropic-inference-gross-margin", "anthropic-ipo-gross-margin-target"),
}


def section_claims(registry: pl.DataFrame, section: str) -> pl.DataFrame:
    """The rows of the claims registry (:func:`jalapeno.registry.claims`) a section qualifies, in the order
    of :data:`SECTION_CLAIMS`: ``claim_id``, ``quantity`` (what the claim measures, in words), ``claimed``
    (the value as the article states it, a date as a date), ``chapter``, ``status``.
    UnknownNameError for an unknown section."""
    if section not in SECTION_CLAIMS:
        raise UnknownNameError("section", section, list(SECTION_CLAIMS))
    ids = list(SECTION_CLAIMS[section])
    order = pl.DataFrame({"claim_id": ids, "_i": list(range(len(ids)))})
    return (registry.join(order, on="claim_id").sort("_i")
            .select("claim_id", "quantity", "claimed", "chapter", "status"))


def per_watt_specs(chips: dict[str, ChipSpec | str], precision: str = "fp4") -> pl.DataFrame:
    """Spec ratios per kW of rated TDP for each chip (``chips``: label -> chip): ``tdp_w``,
    ``hbm_tb_s_per_kw``, ``pflops_per_kw`` (dense at ``precision``), ``hbm_gb_per_kw``. ValueError for a
    chip without TDP or bandwidth."""
    rows = []
    for label, c in chips.items():
        c = specs.chip(c)
        if not (c.tdp_w and c.hbm_bandwidth_bytes_per_s):
            raise ValueError(f"chip {c.chip!r} needs a TDP and an HBM bandwidth")
        kw = c.tdp_w / 1e3
        rows.append({"chip": label, "tdp_w": c.tdp_w, "hbm_tb_s_per_kw": c.hbm_bandwidth_bytes_per_s / 1e12 / kw,
                     "pflops_per_kw": c.peak_flops_per_s(precision) / 1e15 / kw,
                     "hbm_gb_per_kw": (c.hbm_capacity_bytes or float("nan")) / 1e9 / kw})
    return pl.DataFrame(rows)


# ---- what the seeds say the public data cannot answer ----------------------------------------------------

#: Where the caveats chapter treats each row of seed 003's table of what the public information can and
#: cannot answer (``data/seed_public_data_questions.csv``, by its ``question``): the section of the chapter
#: (its heading, or the registry's table of claims nothing public can check) and the registry's claims on
#: the row's subject (a test checks that every id exists).
PUBLIC_DATA_TREATMENT = {
    "basis-of-comparison": ("Rated, sustained, all-in: whose watts are counted",
                            ("jalapeno-tdp", "jalapeno-sustained-power", "gb200-tdp")),
    "performance-range": ("One workload shape: 8k/1k",
                          ("inferencex-fixed-sequence-lengths", "long-context-kv-movement-unverified")),
    "software-maturity": ("What cannot be checked",
                          ("model-port-count", "model-port-months", "caveat-software-maturity",
                           "caveat-operations-at-scale")),
    "availability": ("What cannot be checked",
                     ("jalapeno-deployment-year", "jalapeno-scale-rollout-year", "jalapeno-production-qualification",
                      "first-batch-own-capacity")),
}

#: The three lines seed 004 says its score sheet does not print (跑分表没写的三行字), in its order: how the
#: book names each line, and the registry's claims that carry the seed's words for it (their ``quote``).
THREE_LINES = (
    ("the comparison stops at GB300, the last generation, not Vera Rubin",
     ("vera-rubin-early-shipping", "jalapeno-hbm-vs-gb300")),
    ("inference only: training is untouched",
     ("caveat-inference-only", "cuda-training-moat", "richard-ho-needs-nvidia", "nvidia-openai-financing-guarantee")),
    ("the real bottleneck is HBM4, which chip makers and NVIDIA fight for",
     ("jalapeno-hbm4-stacks", "hbm-presold-through-year", "hbm-tightest-supply-year", "hbm4-shared-by-asics-and-gpus")),
)


def claim_reading(row: dict) -> str:
    """A registry row (:func:`jalapeno.registry.claims`) in a reader's words: what the claim measures
    (``quantity``, without the flags' ``1 = stated``) and, unless the claim is a stated flag, its value as
    the article states it (``claimed``): ``open models ported outside the production plan: 3``."""
    words = row["quantity"].replace(" (1 = stated)", "").replace("; 1 = stated)", ")")
    return words if row["unit"] == "flag" else f"{words}: {row['claimed']}"


def _readings(registry: pl.DataFrame, ids) -> pl.DataFrame:
    """The registry's rows of ``ids`` in that order; UnknownNameError for an id the registry lacks."""
    rows = {r["claim_id"]: r for r in registry.filter(pl.col("claim_id").is_in(list(ids))).iter_rows(named=True)}
    for cid in ids:
        if cid not in rows:
            raise UnknownNameError("claim", cid, sorted(registry["claim_id"]))
    return [rows[c] for c in ids]


def public_data_questions(registry: pl.DataFrame) -> pl.DataFrame:
    """Seed 003's table of what the public information can and cannot answer yet
    (:func:`jalapeno.data.seed_public_data_questions`, in the seed's order), with where the caveats chapter
    treats each row (:data:`PUBLIC_DATA_TREATMENT`). One row per question: ``question`` (key),
    ``question_en``, ``answers_en``, ``cannot_answer_en``, ``row_zh`` (the seed's three cells as printed,
    separated by `` | ``), ``section`` (the chapter's heading), ``claims`` (the registry's claims on it by
    :func:`claim_reading`, each with its status, separated by ``; ``), ``n_not_checkable`` (how many of them
    nothing public can check). UnknownNameError for a question :data:`PUBLIC_DATA_TREATMENT` lacks."""
    rows = []
    for q in seed_public_data_questions().iter_rows(named=True):
        if q["question"] not in PUBLIC_DATA_TREATMENT:
            raise UnknownNameError("question", q["question"], list(PUBLIC_DATA_TREATMENT))
        section, ids = PUBLIC_DATA_TREATMENT[q["question"]]
        claims = _readings(registry, ids)
        rows.append({"question": q["question"], "question_en": q["question_en"], "answers_en": q["answers_en"],
                     "cannot_answer_en": q["cannot_answer_en"],
                     "row_zh": " | ".join((q["question_zh"], q["answers_zh"], q["cannot_answer_zh"])),
                     "section": section,
                     "claims": "; ".join(f"{claim_reading(c)} ({c['status']})" for c in claims),
                     "n_not_checkable": sum(c["status"] == "not checkable" for c in claims)})
    return pl.DataFrame(rows)


def three_lines(registry: pl.DataFrame) -> pl.DataFrame:
    """The three lines seed 004's score sheet does not print (:data:`THREE_LINES`, in the seed's order): one
    row per line, ``line`` (the book's name for it), ``quote`` (the seed's words: its claims' ``quote``,
    separated by `` … ``), ``claims`` (:func:`claim_reading` of each with its status, separated by ``; ``),
    ``n_claims``, ``n_not_checkable``. UnknownNameError for a claim id the registry lacks."""
    rows = []
    for line, ids in THREE_LINES:
        claims = _readings(registry, ids)
        quotes = list(dict.fromkeys(c["quote"] for c in claims))  # two claims may share one phrase
        rows.append({"line": line, "quote": " … ".join(quotes),
                     "claims": "; ".join(f"{claim_reading(c)} ({c['status']})" for c in claims),
                     "n_claims": len(claims), "n_not_checkable": sum(c["status"] == "not checkable" for c in claims)})
    return pl.DataFrame(rows)
