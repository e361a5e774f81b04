"""The subject chip: Jalapeño's one builder, its one fit to the published points, and its frontiers.

Every chapter that models Jalapeño builds it with :func:`jalapeno_chip` (a scenario of its unpublished
quantities, ``data/jalapeno_unknowns.csv``, plus explicit overrides for a what-if) and gives it the
constants of :func:`fit_jalapeno` (its own per-layer overhead, prefill efficiency, request latency and
MLA layer cost, fitted to four published operating points; every other constant is the calibration on
measured chips). The fit's result names the claims it was fitted to (:class:`JalapenoFit`), so a
reproduction of one of them is never counted as a prediction.

The same question gets the same Jalapeño everywhere: the central scenario (HBM 12.288 TB/s, scale-up
1.8 TB/s both directions, a 64-chip domain) with the central fit. A chapter that deliberately varies one
quantity (the systems chapter's fabric scan varies the domain size and the per-hop latency) says so.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from . import calibration, data, derived, pareto, power, serving, specs
from .errors import UnknownNameError
from .specs import ChipSpec

#: The scenarios of Jalapeño's unknowns (columns of ``jalapeno_unknowns.csv``).
SCENARIOS = data.CASES

#: Which field of :class:`~jalapeno.specs.ChipSpec` each row of ``jalapeno_unknowns.csv`` sets.
UNKNOWN_FIELDS = {"hbm_bandwidth": "hbm_bandwidth_bytes_per_s", "scale_up_bandwidth": "scale_up_bandwidth_bytes_per_s",
                  "scale_up_domain": "scale_up_domain_chips"}


def jalapeno_chip(scenario: str = "central", **overrides) -> ChipSpec:
    """Jalapeño's ChipSpec: its published specs (``chip_specs.csv``) with its unknowns (HBM bandwidth,
    scale-up bandwidth and domain) set to one scenario of ``jalapeno_unknowns.csv``, then ``overrides``
    (SI fields of ChipSpec, e.g. ``scale_up_bandwidth_bytes_per_s=3.6e12``) for a what-if.
    UnknownNameError for another scenario; ValueError for a non-positive override."""
    if scenario not in SCENARIOS:
        raise UnknownNameError("scenario", scenario, SCENARIOS)
    bad = {k: v for k, v in overrides.items() if isinstance(v, (int, float)) and not v > 0}
    if bad:
        raise ValueError(f"Jalapeño overrides must be positive, got {bad!r}")
    known = {field: data.jalapeno_unknown(parameter, scenario) for parameter, field in UNKNOWN_FIELDS.items()}
    return serving.with_chip(specs.chip("jalapeno"), **{**known, **overrides})


#: Jalapeño's own constants and the published point each is fitted to (claim id): the per-layer step
#: overhead to the minimum TBT, the prefill efficiency to the peak throughput per kW, the request latency
#: outside the chips to the E2E (all gpt-oss-120b 8k/1k), and the per-layer cost of an MLA layer relative
#: to a GQA layer in its software (:attr:`~jalapeno.serving.Efficiency.mla_layer_factor`) to the
#: DeepSeek-R1 single-user speed.
JALAPENO_FIT = (("tau_s", "gptoss-jalapeno-tbt"), ("eta_prefill", "gptoss-jalapeno-tok-per-kw"),
                ("request_latency_s", "gptoss-jalapeno-e2e"), ("mla_layer_factor", "dsr1-jalapeno-single-user"))

#: Bounds of the four fitted constants, in the order of :data:`JALAPENO_FIT` (s, fraction, s, ratio).
#: Physical limits, wide enough that no solution sits on one: a per-layer overhead from 10 ns (a few
#: hundred cycles) to 200 µs (above the slowest measured stack's 87 µs, ``calibration.csv``); a prefill
#: efficiency from 0.1 % to 100 % of peak; a request latency from 0.1 ms to 2 s (the published E2E is
#: 1.05 s); an MLA layer from 0.05 to 10 times a GQA layer (the GPU stacks: 2.3).
FIT_BOUNDS = ((1e-8, 2e-4), (1e-3, 1.0), (1e-4, 2.0), (0.05, 10.0))

#: Starting points of the fit (not a convex problem): each combination of these per-layer overheads
#: (3 and 30 µs: below and at the measured stacks' order) and prefill efficiencies (5 % and 30 %), with
#: a request latency of 0.1 s and an MLA factor of 1; the lowest cost wins, and the first start that
#: solves the four equations (cost below :data:`_COST_TIE`) ends the search: none can do better.
FIT_STARTS = {"tau_s": (3e-6, 3e-5), "eta_prefill": (0.05, 0.3), "request_latency_s": (0.1,), "mla_layer_factor": (1.0,)}
#: Two fits' costs closer than this are a tie (the first start's wins); a cost below it solves the four
#: equations to about 1e-6 relative (cost = half the sum of the squared log errors), and ends the search.
_COST_TIE = 1e-12


@dataclass(frozen=True)
class JalapenoFit:
    """Jalapeño's fitted constants: ``efficiency`` (the calibration with Jalapeño's own constants under the
    stack name ``jalapeno``), the ``scenario`` of its unknowns, the ``target_claims`` it was fitted to
    (claim ids of ``claims.csv``: these are reproduced by construction, not predicted) and the
    ``concurrency_cap`` of the frontiers it was fitted on; ``overrides``: the (ChipSpec field, SI value)
    pairs set on the scenario's chip (:func:`jalapeno_chip`), empty for a scenario as it stands."""

    efficiency: serving.Efficiency
    scenario: str
    target_claims: tuple[str, ...]
    concurrency_cap: float | str | None = "benchmark"
    overrides: tuple[tuple[str, float], ...] = ()

    def chip(self) -> ChipSpec:
        """The Jalapeño this fit was made for: :func:`jalapeno_chip` of its scenario and overrides."""
        return jalapeno_chip(self.scenario, **dict(self.overrides))

    def constants(self) -> dict[str, float]:
        """The four fitted constants (SI): ``tau_s``, ``eta_prefill``, ``request_latency_s``,
        ``mla_layer_factor``."""
        e = self.efficiency
        return {"tau_s": e.tau_s["jalapeno"], "eta_prefill": e.eta_prefill, "request_latency_s": e.request_latency_s,
                "mla_layer_factor": e.mla_layer_factor}


def fit_targets() -> np.ndarray:
    """The four published points of :data:`JALAPENO_FIT` in the fit's units: maximum interactivity on
    gpt-oss-120b (tok/s/user, 1 / TBT), peak throughput per chip (tok/s: the published tok/s/kW x rated
    TDP, both claims), E2E at the fastest point (s), DeepSeek-R1 maximum interactivity (tok/s/user)."""
    v = data.claim_value
    return np.array([1e3 / v("gptoss-jalapeno-tbt"),
                     v("gptoss-jalapeno-tok-per-kw") * power.power_w(jalapeno_chip(), "rated") / 1e3,
                     v("gptoss-jalapeno-e2e"), v("dsr1-jalapeno-single-user")])


def fit_jalapeno(scenario: str = "central", base: serving.Efficiency | None = None, *,
                 concurrency_cap: float | str | None = "benchmark",
                 overrides: dict[str, float] | None = None) -> JalapenoFit:
    """Fit Jalapeño's four own constants (:data:`JALAPENO_FIT`) to its four published operating points
    (:func:`fit_targets`): on gpt-oss-120b 8k/1k the minimum TBT (the frontier's maximum interactivity;
    claim ``gptoss-jalapeno-tbt``), the peak throughput per chip (``gptoss-jalapeno-tok-per-kw`` x rated
    TDP) and the E2E at the fastest point (``gptoss-jalapeno-e2e``); on DeepSeek-R1 the single-user speed
    (``dsr1-jalapeno-single-user``, the frontier's maximum interactivity). Four equations in four
    unknowns (``scipy.optimize.least_squares`` in log space within :data:`FIT_BOUNDS` from each of
    :data:`FIT_STARTS`); every other constant stays at the calibration on measured chips (``base``), so
    the matched-interactivity ratios and every Kimi K2.5 figure are predictions, not fits. The frontiers
    are those of :func:`jalapeno_chip` (``scenario``) over ``concurrency_cap`` (see
    :func:`jalapeno.pareto.sweep`; by default the benchmark's own range, on the assumption that OpenAI
    ran the same harness). ``overrides``: SI fields of the chip set on top of the scenario
    (:func:`jalapeno_chip`; the error bands of :mod:`jalapeno.uncertainty` fit each draw of the unknowns
    this way). UnknownNameError for an unknown scenario."""
    if base is None and concurrency_cap == "benchmark" and not overrides:
        return _fit_default(scenario)
    base = base or calibration.load()
    chip = jalapeno_chip(scenario, **(overrides or {}))
    eff = fit_end_points(chip, fit_targets(), base, concurrency_cap=concurrency_cap)
    return JalapenoFit(eff, scenario, tuple(cid for _, cid in JALAPENO_FIT), concurrency_cap,
                       tuple(sorted((overrides or {}).items())))


#: The models of the end points of :func:`fit_end_points`: gpt-oss-120b for the first three, DeepSeek-R1
#: for the fourth (the MLA layer cost).
END_POINT_MODELS = ("gpt-oss-120b", "deepseek-r1")


def fit_end_points(chip: ChipSpec, targets, base: serving.Efficiency, *, stack: str = "jalapeno",
                   concurrency_cap: float | str | None = "benchmark", disagg: tuple[bool, bool] = (False, False),
                   training: pl.DataFrame | None = None, mla_layer_factor: float | None = None) -> serving.Efficiency:
    """The constants of :data:`JALAPENO_FIT` of a chip known only by end points of its frontiers, the way
    Jalapeño's are fitted (:func:`fit_jalapeno`; the end-point-anchored validation,
    :mod:`jalapeno.schemes`, fits a measured chip the same way): ``base`` with the per-layer overhead of
    ``stack`` (s), the prefill efficiency, the request latency outside the chips (s) and, with four
    targets, the MLA layer factor, such that :func:`jalapeno.pareto.frontier` of ``chip`` with that stack
    (over ``concurrency_cap``, read from the rows ``training`` as :func:`jalapeno.calibration.sweep` says)
    reproduces ``targets``, in the units of :func:`fit_targets`: the maximum interactivity on
    gpt-oss-120b 8k/1k (tok/s/user), its peak throughput per chip (tok/s, input + output), the E2E at its
    fastest point (s) and, optionally, the maximum interactivity on DeepSeek-R1 8k/1k (tok/s/user).
    ``disagg``: the serving mode of the gpt-oss-120b and the DeepSeek-R1 frontiers. With three targets the
    MLA factor is held at ``mla_layer_factor`` (ValueError when it is not given, or for another number of
    targets). As many equations as unknowns, solved by ``scipy.optimize.least_squares`` in log space
    within :data:`FIT_BOUNDS` from each of :data:`FIT_STARTS` (the lowest cost wins; a start that solves
    the equations ends the search)."""
    from scipy.optimize import least_squares  # deferred: scipy is slow to import and only the fit needs it

    targets = np.asarray(targets, dtype=float)
    if targets.size not in (3, 4) or (targets.size == 3 and mla_layer_factor is None):
        raise ValueError(f"fit_end_points takes 4 targets, or 3 with mla_layer_factor given; got {targets.size} "
                         f"targets and mla_layer_factor={mla_layer_factor!r}")
    names = [name for name, _ in JALAPENO_FIT][:targets.size]
    options = dict(stack=stack, concurrency_cap=concurrency_cap, training=training)

    def make(z):
        v = dict(zip(names, np.exp(z)))
        return _with_constants(base, tau_s=v["tau_s"], eta_prefill=v["eta_prefill"],
                               request_latency_s=v["request_latency_s"],
                               mla_layer_factor=v.get("mla_layer_factor", mla_layer_factor), stack=stack)

    def fun(z):
        e = make(z)
        g = pareto.frontier(chip, END_POINT_MODELS[0], eff=e, disagg=disagg[0], **options)
        fastest = g.row(g["interactivity_tok_s_user"].arg_max(), named=True)
        got = [fastest["interactivity_tok_s_user"], g["throughput_tok_s_chip"].max(), fastest["e2e_s"]]
        if targets.size == 4:
            d = pareto.frontier(chip, END_POINT_MODELS[1], eff=e, disagg=disagg[1], **options)
            got.append(d["interactivity_tok_s_user"].max())
        return np.log(np.array(got) / targets)

    lo = np.log([b[0] for b in FIT_BOUNDS[:targets.size]])
    hi = np.log([b[1] for b in FIT_BOUNDS[:targets.size]])
    best = None
    for start in itertools.product(*(FIT_STARTS[name] for name in names)):
        sol = least_squares(fun, np.log(start), bounds=(lo, hi), diff_step=1e-3)
        if best is None or sol.cost < best.cost - _COST_TIE:
            best = sol
        if best.cost < _COST_TIE:
            # the equations are solved (the cost is a sum of squares, never below 0), so no later start
            # can beat this one by more than the tie margin: the result is the one every start would give
            break
    return make(best.x)


def _with_constants(base: serving.Efficiency, *, tau_s, eta_prefill, request_latency_s, mla_layer_factor,
                    stack: str = "jalapeno") -> serving.Efficiency:
    """``base`` with Jalapeño's four constants (:meth:`JalapenoFit.constants`; its overhead under the stack
    name ``stack``, default ``jalapeno``)."""
    return replace(base, eta_prefill=float(eta_prefill), request_latency_s=float(request_latency_s),
                   mla_layer_factor=float(mla_layer_factor), tau_s={**base.tau_s, stack: float(tau_s)})


@functools.lru_cache(maxsize=None)
def _fit_default(scenario: str) -> JalapenoFit:
    """:func:`fit_jalapeno` on the stored calibration, once per scenario and process: its four constants
    read by :func:`jalapeno.derived.frames` (stage ``jalapeno-fits``) from the committed table
    ``data/derived/jalapeno-fits.jsonl`` (:func:`derive_fits`), else fitted live; a stale table is an
    error naming ``jalapeno derive jalapeno-fits``."""
    (frame,) = derived.frames("jalapeno-fits", [_default_fit_frame(scenario)])
    base = calibration.load()
    return JalapenoFit(_with_constants(base, **frame.row(0, named=True)), scenario,
                       tuple(cid for _, cid in JALAPENO_FIT))


def _default_fit_frame(scenario: str) -> tuple[str, str, object]:
    def compute() -> pl.DataFrame:
        return pl.DataFrame([fit_jalapeno(scenario, base=calibration.load()).constants()])
    return f"scenario={scenario}", derived.key("jalapeno-fits", scenario), compute


def derive_fits(root=None):
    """Fit Jalapeño in every scenario (:data:`SCENARIOS`) on the stored calibration over the benchmark's
    concurrency range and write the committed table of stage ``jalapeno-fits`` (:func:`jalapeno.derived.write`;
    ``root``: the data folder, default the one read). Returns its path. The command ``jalapeno derive
    jalapeno-fits``."""
    return derived.write("jalapeno-fits", [(name, k, compute()) for name, k, compute in map(_default_fit_frame, SCENARIOS)],
                         root)


def jalapeno_constants(fits: dict[str, JalapenoFit]) -> pl.DataFrame:
    """The fitted constants of :func:`fit_jalapeno` per scenario, one row each: ``scenario``, ``tau_s``,
    ``eta_prefill``, ``request_latency_s``, ``mla_layer_factor`` (SI), ``target_claims``."""
    return pl.DataFrame([{"scenario": sc, **f.constants(), "target_claims": ", ".join(f.target_claims)}
                         for sc, f in fits.items()])


def jalapeno_frontier(model: str, scenario: str = "central", *, fit: JalapenoFit | None = None,
                      **options) -> pl.DataFrame:
    """Jalapeño's modeled frontier for ``model`` under one scenario of its unknowns, with the constants of
    ``fit`` (default :func:`fit_jalapeno` over the same ``concurrency_cap``); ``options`` pass to
    :func:`jalapeno.pareto.frontier`; the chip is the fit's own (:meth:`JalapenoFit.chip`, with its
    overrides). ValueError when ``fit`` was made for another scenario."""
    fit = fit or fit_jalapeno(scenario, concurrency_cap=options.get("concurrency_cap", "benchmark"))
    if fit.scenario != scenario:
        raise ValueError(f"the fit is for the {fit.scenario!r} scenario, the frontier asks for {scenario!r}")
    return pareto.frontier(fit.chip(), model, eff=fit.efficiency, stack="jalapeno",
                             **options).with_columns(pl.lit(scenario).alias("scenario"))


def ratio_table(models=("gpt-oss-120b", "deepseek-r1", "kimi-k2.5"), *, power_basis: str = "rated",
                baseline_how: str = "auto", baseline_max_chips: int = 8, baselines: dict[str, str] | None = None,
                fits: dict[str, JalapenoFit] | None = None,
                concurrency_cap: float | str | None = "benchmark") -> pl.DataFrame:
    """For each model and each Jalapeño scenario: the ratio of Jalapeño's to the baseline's tok/s/kW at
    the baseline's best interactivity ``x*``, next to the published ratio, and its three factors
    (``ratio = jalapeno_retention x peak_ratio x baseline_steepness``): Jalapeño's throughput at ``x*``
    over its own peak, the two peaks' ratio, the baseline's peak over its throughput at ``x*``.
    ``implied_retention`` is the retention the published ratio implies given the other two factors.
    ``baselines`` overrides the chip of :data:`jalapeno.pareto.PUBLISHED_RATIOS`; ``baseline_how`` and
    ``baseline_max_chips`` pass to :func:`jalapeno.pareto.baseline_frontier`; ``fits`` passes
    :func:`fit_jalapeno` results per scenario (fitted over the same ``concurrency_cap`` when not given)."""
    fits = fits or {sc: fit_jalapeno(sc, concurrency_cap=concurrency_cap) for sc in SCENARIOS}
    rows = []
    for m in models:
        claim_id, chip = pareto.PUBLISHED_RATIOS.get(m, (None, "gb300"))
        chip = (baselines or {}).get(m, chip)
        old = pareto.baseline_frontier(m, chip, power_basis=power_basis, how=baseline_how,
                                         max_chips=baseline_max_chips, concurrency_cap=concurrency_cap)
        old_peak = float(old["tok_s_per_kw"].max())
        for sc, f in fits.items():
            new = jalapeno_frontier(m, sc, fit=f, power_basis=power_basis, concurrency_cap=concurrency_cap)
            r = pareto.matched_ratio(new, old)
            new_peak = float(new["tok_s_per_kw"].max())
            peak_ratio, steepness = new_peak / old_peak, old_peak / r["old"]
            published = data.claim_value(claim_id) if claim_id else float("nan")
            rows.append({"model": m, "baseline": chip, "baseline_source": old["source"][0], "scenario": sc,
                         "interactivity_tok_s_user": r["interactivity_tok_s_user"], "baseline_tok_s_kw": r["old"],
                         "jalapeno_tok_s_kw": r["new"], "ratio": r["ratio"], "published_ratio": published,
                         "deviation": r["ratio"] / published - 1,
                         "jalapeno_retention": r["new"] / new_peak, "peak_ratio": peak_ratio,
                         "baseline_steepness": steepness, "implied_retention": published / (peak_ratio * steepness),
                         "jalapeno_max_interactivity": float(new["interactivity_tok_s_user"].max())})
    return pl.DataFrame(rows)


# ---- the published single-user speeds as TPOT budgets ---------------------------------------------------

#: Decimals the published TBT is printed with (``0.32`` ms): it stands for anything that rounds to it.
TBT_PRINTED_DECIMALS = 2

#: The published single-user numbers a Jalapeño system must reproduce, as (model, claim id, kind).
SPEED_TARGETS = (("gpt-oss-120b", "gptoss-jalapeno-tbt", "tbt_ms"), ("deepseek-r1", "dsr1-jalapeno-single-user", "tok_s"))


def target_tpot_s(claim_id: str, kind: str) -> float:
    """The longest TPOT a published number allows: a TBT printed with 2 decimals in ms stands for up to
    ``value + half a unit of its last printed digit`` (:data:`TBT_PRINTED_DECIMALS`) ms; a speed in
    tok/s for ``1 / value`` (read as a floor: "about 700"). UnknownNameError for another kind."""
    v = data.claim_value(claim_id)
    if kind == "tbt_ms":
        return (v + 0.5 * 10.0 ** -TBT_PRINTED_DECIMALS) * 1e-3
    if kind == "tok_s":
        return 1.0 / v
    raise UnknownNameError("target kind", kind, ["tbt_ms", "tok_s"])


def fastest_layout(model: str, scenario: str = "central", *, fit: JalapenoFit | None = None, **options) -> dict[str, float]:
    """The fastest point of Jalapeño's modeled frontier for ``model`` (:func:`jalapeno_frontier`): the
    layout the published single-user speed is reproduced on. ``n_chips``, ``dp``, ``concurrency``,
    ``interactivity_tok_s_user``, ``tpot_s``."""
    f = jalapeno_frontier(model, scenario, fit=fit, **options)
    row = f.row(f["interactivity_tok_s_user"].arg_max(), named=True)
    return {k: row[k] for k in ("n_chips", "dp", "concurrency", "interactivity_tok_s_user", "tpot_s")}


# ---- the worked example of the roofline and serving-model chapters ---------------------------------------

#: The worked example: gpt-oss-120b, Jalapeño's unknowns in this scenario, the benchmark's 8k/1k workload
#: (ISL, OSL in tokens; request lengths drawn as the benchmark draws them).
WORKED_MODEL, WORKED_SCENARIO = "gpt-oss-120b", "central"
WORKED_ISL, WORKED_OSL = 8192, 1024

#: The operating points of :func:`worked_configurations`: ``fastest`` (one user: Jalapeño's published
#: fastest point, GB200's best measured TPOT) and ``peak-throughput`` (each chip's highest-throughput
#: point of its modeled frontier, a batch of hundreds of sequences).
WORKED_POINTS = ("fastest", "peak-throughput")


def worked_configurations(point: str = "fastest") -> dict[str, dict]:
    """The two configurations of the worked examples, :data:`WORKED_MODEL` on Jalapeño and on GB200 at one
    operating point (:data:`WORKED_POINTS`), as :func:`jalapeno.serving.evaluate`'s arguments plus what each is
    checked against. The one definition the roofline chapter (``fastest``) and the serving-model chapter
    (``peak-throughput``) both use.

    ``fastest``: ``jalapeno`` is :func:`fastest_layout` (the chip of :data:`WORKED_SCENARIO`, the
    constants of :func:`fit_jalapeno` under the stack ``jalapeno``), checked against the published minimum
    TBT; ``gb200`` is the layout, stack and serving mode of its best measured point without speculative
    decoding (:func:`jalapeno.calibration.configurations`) with the calibrated constants
    (:func:`jalapeno.calibration.load`), checked against that point's measured TPOT.
    ``peak-throughput``: each chip's highest-throughput point of its modeled (aggregated, chunked-prefill)
    frontier, :func:`jalapeno_frontier` for Jalapeño and :func:`jalapeno.pareto.frontier` with the
    calibrated constants and the chip's own stack (:func:`jalapeno.calibration.stack_for`) for GB200;
    checked against the published peak throughput per chip (claim ``gptoss-jalapeno-tok-per-kw`` x the
    rated TDP, tok/s) and against GB200's highest measured throughput per GPU (every stack and serving
    mode measured; tok/s).

    Each value: ``model`` (name), ``chip`` (ChipSpec), ``eff`` (Efficiency), ``constants`` (``fitted`` or
    ``calibrated``), ``kw`` (the other keywords of the evaluation, flat: its :class:`~jalapeno.serving.Layout`'s
    and :class:`~jalapeno.serving.Workload`'s fields and the stack, split by :func:`jalapeno.serving.split_keywords`), and ``target_ms`` (``fastest``: the published minimum TBT or the
    measured mean TPOT, ms) or ``target_tok_s_chip`` (``peak-throughput``: tok/s per chip, input + output
    tokens; for GB200 also ``target_disagg``, whether the measured point served prefill on separate GPUs).
    UnknownNameError for another ``point``."""
    if point not in WORKED_POINTS:
        raise UnknownNameError("worked-example operating point", point, WORKED_POINTS)
    fit = fit_jalapeno(WORKED_SCENARIO)
    precision = pareto.DEFAULT_PRECISION[WORKED_MODEL]
    workload = {"precision": precision, "isl": WORKED_ISL, "osl": WORKED_OSL}
    cfg = calibration.configurations().filter(
        (pl.col("model_key") == WORKED_MODEL) & (pl.col("chip") == "gb200") & (pl.col("precision") == precision)
        & (pl.col("isl") == WORKED_ISL) & (pl.col("osl") == WORKED_OSL))
    gb200, calibrated = specs.chip("gb200"), calibration.load()

    def layout(row: dict, stack: str) -> dict:  # a modeled frontier point as evaluate's keywords
        return {"n_chips": row["n_chips"], "dp": row["dp"], "concurrency": row["concurrency"], "ep": True,
                "stack": stack, **workload}
    if point == "fastest":
        jal = {"kw": layout(fastest_layout(WORKED_MODEL, WORKED_SCENARIO, fit=fit), "jalapeno"),
               "target_ms": data.claim_value("gptoss-jalapeno-tbt")}
        best = cfg.sort("mean_tpot").row(0, named=True)
        gb = {"kw": {"n_chips": best["n_chips"], "dp": best["dp"], "concurrency": float(best["conc"]), "ep": best["ep"],
                     "stack": best["stack"], "disagg": best["disagg"], "prefill_chips": best["prefill_chips"],
                     "prefill_tp": best["prefill_tp"], **workload},
              "target_ms": best["mean_tpot"] * 1e3}
    else:
        def peak(front: pl.DataFrame) -> dict:
            return front.row(front["throughput_tok_s_chip"].arg_max(), named=True)
        j = peak(jalapeno_frontier(WORKED_MODEL, WORKED_SCENARIO, fit=fit, isl=WORKED_ISL, osl=WORKED_OSL))
        jal = {"kw": layout(j, "jalapeno"), "target_tok_s_chip": fit_targets()[1]}
        stack = calibration.stack_for(gb200, calibrated)
        g = peak(pareto.frontier(gb200, WORKED_MODEL, eff=calibrated, stack=stack, isl=WORKED_ISL, osl=WORKED_OSL,
                                 precision=precision))
        measured_peak = cfg.row(cfg["tput_per_gpu"].arg_max(), named=True)
        gb = {"kw": layout(g, stack), "target_tok_s_chip": measured_peak["tput_per_gpu"],
              "target_disagg": measured_peak["disagg"]}
    return {"jalapeno": {"model": WORKED_MODEL, "chip": fit.chip(), "eff": fit.efficiency, "constants": "fitted", **jal},
            "gb200": {"model": WORKED_MODEL, "chip": gb200, "eff": calibrated, "constants": "calibrated", **gb}}


def worked_evaluation(config: dict, **changes) -> serving.Evaluation:
    """:func:`jalapeno.serving.evaluate` of one configuration of :func:`worked_configurations` with its own
    constants, ``changes`` replacing keywords of its layout, workload or evaluation
    (:func:`jalapeno.serving.split_keywords`; ``eff=serving.Efficiency.ideal()`` for the roofline)."""
    layout, workload, options = serving.split_keywords({"eff": config["eff"]} | config["kw"] | changes)
    return serving.evaluate(config["model"], config["chip"], layout, workload, **options)
