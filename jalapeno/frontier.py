"""Pareto frontiers of throughput per chip against interactivity, and matched-interactivity ratios.

:func:`sweep` evaluates a whole grid of configurations (chips per worker x attention layout x
concurrency) in one array call of :func:`jalapeno.serving.evaluate`; :func:`frontier` keeps its upper
envelope: the configurations no other beats on both interactivity and throughput per chip. Ratios "at
the previous generation's best TBT" compare two frontiers at one interactivity: near the slower
system's maximum interactivity its throughput collapses toward zero, which is why 50-100x ratios appear
there (:func:`throughput_at` interpolates along a frontier in log-log space).

Power bases for per-kW figures: ``rated`` (TDP), ``sustained`` (measured sustained power where
published, else TDP), ``all-in`` (InferenceX's provisioned kW per chip where published, else TDP scaled
by GB200's all-in / TDP ratio).
"""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl

from . import calibration, serving, specs
from .errors import UnknownNameError
from .specs import ChipSpec, ModelSpec

POWER_BASES = ("rated", "sustained", "all-in")
DEFAULT_PRECISION = {"gpt-oss-120b": "fp4", "deepseek-r1": "fp4", "kimi-k2.5": "fp4"}
CONCURRENCY = np.unique(np.round(np.geomspace(1, 16384, 57)))


def power_w(chip: ChipSpec, basis: str = "rated") -> float:
    """The power (W) per chip under a basis; UnknownNameError for an unknown basis, ValueError if the
    chip has no TDP."""
    if basis not in POWER_BASES:
        raise UnknownNameError("power basis", basis, POWER_BASES)
    if not chip.tdp_w:
        raise ValueError(f"chip {chip.chip!r} has no known TDP; give one with ChipSpec(..., tdp_w=...)")
    if basis == "rated":
        return chip.tdp_w
    if basis == "sustained":
        return chip.sustained_power_w or chip.tdp_w
    if chip.allin_power_w:
        return chip.allin_power_w
    gb200 = specs.chip("gb200")
    return chip.tdp_w * gb200.allin_power_w / gb200.tdp_w


def best_stack(eff: serving.Efficiency) -> str:
    """The calibrated stack with the smallest per-step overhead (the best software measured so far)."""
    return min((s for s in eff.tau_s if s != "default"), key=eff.tau)


def sweep(chip: ChipSpec | str, model: ModelSpec | str, *, isl: int = 8192, osl: int = 1024,
          precision: str | None = None, eff: serving.Efficiency | None = None, stack: str | None = None,
          max_chips: int | None = None, concurrency=CONCURRENCY, disagg: bool = False,
          mtp_tokens_per_step: float = 1.0, hbm_bandwidth_bytes_per_s: float | None = None) -> pl.DataFrame:
    """Every configuration of a grid: chips per worker (powers of two up to the scale-up domain or
    ``max_chips``), TP or DP attention, each ``concurrency``; those whose weights and KV fit in HBM.

    Returns columns ``n_chips``, ``dp``, ``concurrency``, ``tpot_s``, ``ttft_s``, ``e2e_s``,
    ``interactivity_tok_s_user``, ``throughput_tok_s_chip``, ``chips`` (prefill included)."""
    chip, model = specs.chip(chip), specs.model(model)
    eff = eff or calibration.load()
    stack = stack or best_stack(eff)
    precision = precision or DEFAULT_PRECISION.get(model.model, "fp8")
    if isl <= 0 or osl <= 1:
        raise ValueError(f"isl must be positive and osl above 1, got isl={isl!r}, osl={osl!r}")
    domain = int(max_chips or chip.scale_up_domain_chips or 8)
    sizes = [2 ** i for i in range(0, 8) if 2 ** i <= domain]
    n, dp, c = [], [], []
    for size in sizes:
        for d in ({1, size} if model.is_moe or model.attention == "mla" else {1}):
            n.append(np.full(len(concurrency), size)); dp.append(np.full(len(concurrency), d)); c.append(concurrency)
    n, dp, c = np.concatenate(n).astype(float), np.concatenate(dp).astype(float), np.concatenate(c).astype(float)
    keep = c >= dp  # at least one sequence per attention replica
    n, dp, c = n[keep], dp[keep], c[keep]
    kw = dict(isl=isl, osl=osl, precision=precision, stack=stack, eff=eff, ep=True,
              mtp_tokens_per_step=mtp_tokens_per_step, hbm_bandwidth_bytes_per_s=hbm_bandwidth_bytes_per_s)
    r = serving.evaluate(model, chip, n_chips=n, concurrency=c, dp=dp, **kw)
    if disagg:  # prefill chips matched to the request rate the decode workers sustain
        rate = c / r["e2e_s"]
        p_chips = np.maximum(1.0, np.ceil(rate * r["prefill_s"]))
        r = serving.evaluate(model, chip, n_chips=n, concurrency=c, dp=dp, disagg=True, prefill_chips=p_chips,
                             prefill_tp=1, **kw)
    df = pl.DataFrame({"n_chips": n, "dp": dp, "concurrency": c, "tpot_s": r["tpot_s"], "ttft_s": r["ttft_s"],
                       "e2e_s": r["e2e_s"], "interactivity_tok_s_user": r["interactivity_tok_s_user"],
                       "throughput_tok_s_chip": r["throughput_tok_s_chip"], "chips": r["chips"],
                       "fits": r["fits"]})
    return df.filter(pl.col("fits")).drop("fits")


def envelope(df: pl.DataFrame, x: str = "interactivity_tok_s_user", y: str = "throughput_tok_s_chip") -> pl.DataFrame:
    """The upper-right Pareto envelope of ``df`` (no row has both more ``x`` and more ``y``), sorted by
    ``x``; along it ``y`` never rises as ``x`` rises."""
    if df.is_empty():
        return df
    idx = calibration.frontier_points(df[x].to_numpy(), df[y].to_numpy())
    return df[idx.tolist()].sort(x)


def frontier(chip: ChipSpec | str, model: ModelSpec | str, *, isl: int = 8192, osl: int = 1024,
             precision: str | None = None, power_basis: str = "rated", **sweep_options) -> pl.DataFrame:
    """The Pareto frontier of ``chip`` serving ``model``: one row per frontier point with
    ``interactivity_tok_s_user``, ``throughput_tok_s_chip`` (input + output tokens, the benchmark's way),
    ``tpot_s``, ``ttft_s``, ``e2e_s``, the configuration (``n_chips``, ``dp``, ``ep``, ``tp``,
    ``concurrency``) and ``tok_s_per_kw`` under ``power_basis`` (named in column ``power_basis``).

    Chip and model names are case-insensitive and accept the benchmark's keys (``gb200``, ``gptoss``,
    ``dsr1``). Options of :func:`sweep` (``eff``, ``stack``, ``max_chips``, ``disagg``,
    ``mtp_tokens_per_step``, ``hbm_bandwidth_bytes_per_s``) pass through. Raises UnknownNameError for
    unknown names or basis, ValueError for impossible workloads or a model that fits nowhere."""
    chip_spec, model_spec = specs.chip(chip), specs.model(model)
    watts = power_w(chip_spec, power_basis)
    pts = sweep(chip_spec, model_spec, isl=isl, osl=osl, precision=precision, **sweep_options)
    if pts.is_empty():
        raise ValueError(f"{model_spec.model} does not fit on {chip_spec.chip} within the scale-up domain")
    front = envelope(pts)
    return front.with_columns(
        (pl.col("n_chips") / pl.col("dp")).alias("tp"), pl.col("n_chips").alias("ep"),
        (pl.col("throughput_tok_s_chip") / (watts / 1e3)).alias("tok_s_per_kw"),
        pl.lit(power_basis).alias("power_basis"), pl.lit(chip_spec.chip).alias("chip"),
        pl.lit(model_spec.model).alias("model"),
    )


def measured_frontier(model: str, hw: str, *, isl: int = 8192, osl: int = 1024, power_w_: float | None = None,
                      spec_decoding: str = "none") -> pl.DataFrame:
    """The envelope of the measured InferenceMAX points of one model on one hardware key (every run and
    stack), with ``interactivity_tok_s_user`` = 1 / mean TPOT, ``throughput_tok_s_chip`` = tput_per_gpu
    and ``tok_s_per_kw`` at ``power_w_`` (default: the chip's rated TDP)."""
    from . import measured

    pts = measured.require(measured.points(model, hw, isl=isl, osl=osl, spec_decoding=spec_decoding),
                           f"{model} on {hw} at {isl}/{osl}")
    watts = power_w_ or specs.chip(hw.removesuffix("-trt")).tdp_w
    df = pts.select((1.0 / pl.col("mean_tpot")).alias("interactivity_tok_s_user"),
                    pl.col("tput_per_gpu").alias("throughput_tok_s_chip"), pl.col("mean_tpot").alias("tpot_s"),
                    pl.col("mean_e2el").alias("e2e_s"), "conc", "run_id", "framework")
    return envelope(df).with_columns((pl.col("throughput_tok_s_chip") / (watts / 1e3)).alias("tok_s_per_kw"))


def throughput_at(front: pl.DataFrame, interactivity, column: str = "tok_s_per_kw"):
    """``column`` of a frontier at the given interactivity (tok/s/user), interpolated linearly in log-log
    space between frontier points; NaN beyond the frontier's maximum interactivity; below its minimum,
    the value at the minimum (a slower operating point is always available)."""
    x = np.log(front["interactivity_tok_s_user"].to_numpy())
    y = np.log(front[column].to_numpy())
    q = np.log(np.asarray(interactivity, dtype=float))
    out = np.exp(np.interp(q, x, y))
    out = np.where(q > x.max() + 1e-12, np.nan, out)
    return float(out) if out.ndim == 0 else out


def matched_ratio(new: pl.DataFrame, old: pl.DataFrame, column: str = "tok_s_per_kw",
                  at: float | None = None) -> dict[str, float]:
    """Ratio of ``new``'s to ``old``'s ``column`` at one interactivity: by default ``old``'s maximum
    (its best TBT), the construction of the published 53.7x / 104.3x / ~56x figures; ``at`` sets it
    (for example the published best single-user speed of a baseline that is modeled, not measured)."""
    x = float(old["interactivity_tok_s_user"].max()) if at is None else float(at)
    y_old, y_new = throughput_at(old, x, column), throughput_at(new, x, column)
    return {"interactivity_tok_s_user": x, "old": y_old, "new": y_new, "ratio": y_new / y_old}


# ---- Jalapeño: unknowns bounded by its spec, fitted to its published points ---------------------------

SCENARIOS = ("low", "central", "high")


def unknowns() -> pl.DataFrame:
    """``data/jalapeno_unknowns.csv``: each unpublished Jalapeño quantity with a low, central and high
    value, its unit, basis and source."""
    from . import data

    return data.load("jalapeno_unknowns.csv")


def jalapeno_chip(scenario: str = "central") -> ChipSpec:
    """Jalapeño's ChipSpec with its unknowns (HBM bandwidth, scale-up bandwidth and domain) set to one
    scenario of :func:`unknowns`; UnknownNameError for another scenario name."""
    from .data import UNIT_TO_SI
    from .serving import with_chip

    if scenario not in SCENARIOS:
        raise UnknownNameError("scenario", scenario, SCENARIOS)
    u = {r["parameter"]: r[scenario] * UNIT_TO_SI[r["unit"]] for r in unknowns().iter_rows(named=True)}
    return with_chip(specs.chip("jalapeno"), hbm_bandwidth_bytes_per_s=u["hbm_bandwidth"],
                     scale_up_bandwidth_bytes_per_s=u["scale_up_bandwidth"], scale_up_domain_chips=u["scale_up_domain"])


def fit_jalapeno(scenario: str = "central", base: serving.Efficiency | None = None) -> serving.Efficiency:
    """Fit Jalapeño's two own constants to its two published gpt-oss-120b 8k/1k operating points: the
    minimum TBT (claim ``gptoss-jalapeno-tbt``, the frontier's maximum interactivity) fixes its per-layer
    step overhead (``tau_s['jalapeno']``); the peak throughput per chip (claim
    ``gptoss-jalapeno-tok-per-kw`` x rated TDP) fixes its prefill efficiency. Every other constant stays
    at the calibration fitted on measured chips (``base``), so the matched-interactivity ratios, the E2E
    and every DeepSeek-R1 or Kimi K2.5 figure are predictions, not fits."""
    from dataclasses import replace

    from scipy.optimize import least_squares

    from .comparison import claim_value

    base = base or calibration.load()
    chip = jalapeno_chip(scenario)
    target_x = 1e3 / claim_value("gptoss-jalapeno-tbt")
    target_y = claim_value("gptoss-jalapeno-tok-per-kw") * claim_value("jalapeno-tdp") / 1e3

    def make(z):
        tau, eta_p = np.exp(z)
        return replace(base, eta_prefill=float(eta_p), tau_s={**base.tau_s, "jalapeno": float(tau)})

    def fun(z):
        f = frontier(chip, "gpt-oss-120b", eff=make(z), stack="jalapeno")
        return [np.log(f["interactivity_tok_s_user"].max() / target_x),
                np.log(f["throughput_tok_s_chip"].max() / target_y)]

    lo, hi = np.log([1e-8, 1e-3]), np.log([2e-4, 1.0])
    best = None
    for start in itertools.product([3e-6, 3e-5], [0.05, 0.3]):  # several starts: not a convex problem
        sol = least_squares(fun, np.log(start), bounds=(lo, hi), diff_step=1e-3)
        if best is None or sol.cost < best.cost - 1e-12:
            best = sol
    return make(best.x)


def jalapeno_frontier(model: str, scenario: str = "central", *, eff: serving.Efficiency | None = None,
                      **options) -> pl.DataFrame:
    """Jalapeño's modeled frontier for ``model`` under one scenario of its unknowns (fitted with
    :func:`fit_jalapeno` unless ``eff`` is given)."""
    eff = eff or fit_jalapeno(scenario)
    return frontier(jalapeno_chip(scenario), model, eff=eff, stack="jalapeno", **options).with_columns(
        pl.lit(scenario).alias("scenario"))


#: The published matched-interactivity ratios: claim id and the baseline each was measured against
#: (seed 000: GB200 for gpt-oss-120b; seed 004: GB300 for DeepSeek-R1; seed 001 names no system for Kimi
#: K2.5, so GB300, the newer of the two, is assumed).
PUBLISHED_RATIOS = {"gpt-oss-120b": ("gptoss-matched-tbt-ratio", "gb200"),
                    "deepseek-r1": ("dsr1-matched-tbt-ratio", "gb300"),
                    "kimi-k2.5": ("kimi-matched-tbt-ratio", "gb300")}


def baseline_frontier(model: str, chip: str, *, power_basis: str = "rated", max_chips: int = 8,
                      isl: int = 8192, osl: int = 1024) -> pl.DataFrame:
    """The baseline's frontier: measured where InferenceMAX measured that model on that chip at that
    shape (every run and stack), else modeled with at most ``max_chips`` chips per decode worker."""
    from . import measured

    chip_spec, model_key = specs.chip(chip), specs.model(model).model
    have = measured.points(isl=isl, osl=osl).filter((pl.col("hw") == chip_spec.chip) & (pl.col("model_key") == model_key))
    if have.height:
        return measured_frontier(model, chip_spec.chip, isl=isl, osl=osl,
                                 power_w_=power_w(chip_spec, power_basis)).with_columns(pl.lit("measured").alias("source"))
    return frontier(chip_spec, model, isl=isl, osl=osl, power_basis=power_basis, max_chips=max_chips).with_columns(
        pl.lit("modeled").alias("source"))


def ratio_table(models=("gpt-oss-120b", "deepseek-r1", "kimi-k2.5"), *, power_basis: str = "rated",
                baseline_max_chips: int = 8, baselines: dict[str, str] | None = None,
                effs: dict[str, serving.Efficiency] | None = None) -> pl.DataFrame:
    """For each model and each Jalapeño scenario: the ratio of Jalapeño's to the baseline's tok/s/kW at
    the baseline's best interactivity, next to the published ratio. ``baselines`` overrides the chip of
    :data:`PUBLISHED_RATIOS`; ``effs`` passes fitted Jalapeño constants per scenario."""
    from .comparison import claim_value

    effs = effs or {sc: fit_jalapeno(sc) for sc in SCENARIOS}
    rows = []
    for m in models:
        claim_id, chip = PUBLISHED_RATIOS.get(m, (None, "gb300"))
        chip = (baselines or {}).get(m, chip)
        old = baseline_frontier(m, chip, power_basis=power_basis, max_chips=baseline_max_chips)
        for sc, eff in effs.items():
            new = jalapeno_frontier(m, sc, eff=eff, power_basis=power_basis)
            r = matched_ratio(new, old)
            published = claim_value(claim_id) if claim_id else float("nan")
            rows.append({"model": m, "baseline": chip, "baseline_source": old["source"][0], "scenario": sc,
                         "interactivity_tok_s_user": r["interactivity_tok_s_user"], "baseline_tok_s_kw": r["old"],
                         "jalapeno_tok_s_kw": r["new"], "ratio": r["ratio"], "published_ratio": published,
                         "deviation": r["ratio"] / published - 1,
                         "jalapeno_max_interactivity": float(new["interactivity_tok_s_user"].max())})
    return pl.DataFrame(rows)


def ratio_curve(new: pl.DataFrame, old: pl.DataFrame, points: int = 40, column: str = "tok_s_per_kw") -> pl.DataFrame:
    """The ratio of two frontiers' ``column`` across ``old``'s interactivity range (log-spaced), to show how
    it grows without bound as ``old`` approaches its maximum interactivity."""
    lo, hi = old["interactivity_tok_s_user"].min(), old["interactivity_tok_s_user"].max()
    x = np.geomspace(lo, hi, points)
    return pl.DataFrame({"interactivity_tok_s_user": x, "ratio": throughput_at(new, x, column) / throughput_at(old, x, column)})
