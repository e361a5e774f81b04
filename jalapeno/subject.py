"""The subject chip: Jalapeño's one builder, its one fit to the published points, and its frontiers.

Every chapter that models Jalapeño builds it with :func:`jalapeno_chip` (a scenario of its unpublished
quantities, ``data/jalapeno_unknowns.csv``, plus explicit overrides for a what-if) and gives it the
constants of :func:`fit_jalapeno` (its own per-layer overhead, prefill efficiency and MLA layer cost,
fitted to three published operating points, and under the ``one-point`` reading of its published E2E a
request latency outside the chips fitted to it: :data:`E2E_READINGS`; every other constant is the
calibration on measured chips). The fit's result names the claims it was fitted to (:class:`JalapenoFit`), so a
reproduction of one of them is never counted as a prediction.

The same question gets the same Jalapeño everywhere: the central scenario (HBM 12.288 TB/s, scale-up
1.8 TB/s both directions, a 64-chip domain) with the central fit. A chapter that deliberately varies one
quantity (the systems chapter's fabric scan varies the domain size and the per-hop latency) says so.
"""

from __future__ import annotations

import functools
import itertools
import math
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


#: The two readings of Jalapeño's published E2E (claim ``gptoss-jalapeno-e2e``, 1.03 s at 8k/1k), the one
#: choice the whole book makes about it (every function that fits or models Jalapeño, the agents chapter's
#: calls, the error bands and the end-point-anchored validation take it as ``e2e_reading``):
#:
#: - ``separate`` (the default): the published E2E and the published minimum TBT come from different
#:   configurations (Reading the numbers: read as one point, the E2E would leave 0.4 s for the first
#:   token of a chip whose prefill is its strength). No chip carries a latency outside the chip
#:   (``request_latency_s`` 0 for Jalapeño as for every measured chip); Jalapeño is fitted to its other
#:   three published points, and the E2E is a consistency check (:func:`e2e_consistency`).
#: - ``one-point``: the E2E and the minimum TBT are one configuration. Every chip then carries a request
#:   latency outside the chip, estimated by one rule (:func:`outside_chip_latency_s`): Jalapeño's fitted
#:   to its E2E, a measured chip's from its measured TTFT. The shipped scenario
#:   ``scenarios/e2e-one-point.yml`` builds the book under it.
E2E_READINGS = ("separate", "one-point")
DEFAULT_E2E_READING = "separate"


def check_e2e_reading(e2e_reading: str) -> str:
    """``e2e_reading`` if it is one of :data:`E2E_READINGS`; UnknownNameError listing them otherwise."""
    if e2e_reading not in E2E_READINGS:
        raise UnknownNameError("E2E reading", e2e_reading, E2E_READINGS)
    return e2e_reading


#: Jalapeño's own constants, in the order of :data:`FIT_BOUNDS`: the per-layer step overhead (s), the
#: prefill efficiency (fraction), the request latency outside the chips (s) and the per-layer cost of an
#: MLA layer relative to a GQA layer in its software (:attr:`~jalapeno.serving.Efficiency.mla_layer_factor`).
FIT_CONSTANTS = ("tau_s", "eta_prefill", "request_latency_s", "mla_layer_factor")

#: Per reading of the E2E (:data:`E2E_READINGS`), Jalapeño's fitted constants and the published point each
#: is fitted to (claim id): the per-layer overhead to the minimum TBT, the prefill efficiency to the peak
#: throughput per kW (both gpt-oss-120b 8k/1k), the MLA layer factor to the DeepSeek-R1 single-user speed
#: and, under ``one-point`` only, the request latency outside the chips to the E2E (under ``separate`` it
#: is 0 and the E2E is no target).
JALAPENO_FITS = {
    "separate": (("tau_s", "gptoss-jalapeno-tbt"), ("eta_prefill", "gptoss-jalapeno-tok-per-kw"),
                 ("mla_layer_factor", "dsr1-jalapeno-single-user")),
    "one-point": (("tau_s", "gptoss-jalapeno-tbt"), ("eta_prefill", "gptoss-jalapeno-tok-per-kw"),
                  ("request_latency_s", "gptoss-jalapeno-e2e"), ("mla_layer_factor", "dsr1-jalapeno-single-user")),
}
#: The fit of the default reading (:data:`DEFAULT_E2E_READING`).
JALAPENO_FIT = JALAPENO_FITS[DEFAULT_E2E_READING]


def fit_claims(e2e_reading: str = DEFAULT_E2E_READING) -> tuple[str, ...]:
    """The claims Jalapeño's constants are fitted to under ``e2e_reading`` (:data:`JALAPENO_FITS`).
    UnknownNameError for another reading."""
    return tuple(cid for _, cid in JALAPENO_FITS[check_e2e_reading(e2e_reading)])


#: Bounds of the four constants, in the order of :data:`FIT_CONSTANTS` (s, fraction, s, ratio).
#: Physical limits, wide enough that no solution sits on one: a per-layer overhead from 10 ns (a few
#: hundred cycles) to 200 µs (above the slowest measured stack's 87 µs, ``calibration.csv``); a prefill
#: efficiency from 0.1 % to 100 % of peak; a request latency from 0.1 ms to 2 s (the published E2E is
#: 1.03 s); an MLA layer from 0.05 to 10 times a GQA layer (the GPU stacks: 2.3).
FIT_BOUNDS = ((1e-8, 2e-4), (1e-3, 1.0), (1e-4, 2.0), (0.05, 10.0))

#: Starting points of the fit (not a convex problem): each combination of these per-layer overheads
#: (3 and 30 µs: below and at the measured stacks' order) and prefill efficiencies (5 % and 30 %), with
#: a request latency of 0.1 s and an MLA factor of 1; the lowest cost wins, and the first start that
#: solves the equations (cost below :data:`_COST_TIE`) ends the search: none can do better.
FIT_STARTS = {"tau_s": (3e-6, 3e-5), "eta_prefill": (0.05, 0.3), "request_latency_s": (0.1,), "mla_layer_factor": (1.0,)}
#: Two fits' costs closer than this are a tie (the first start's wins); a cost below it solves the
#: equations to about 1e-6 relative (cost = half the sum of the squared log errors), and ends the search.
_COST_TIE = 1e-12


@dataclass(frozen=True)
class JalapenoFit:
    """Jalapeño's fitted constants: ``efficiency`` (the calibration with Jalapeño's own constants under the
    stack name ``jalapeno``), the ``scenario`` of its unknowns, the ``target_claims`` it was fitted to
    (claim ids of ``claims.csv``: these are reproduced by construction, not predicted) and the
    ``concurrency_cap`` of the frontiers it was fitted on; ``overrides``: the (ChipSpec field, SI value)
    pairs set on the scenario's chip (:func:`jalapeno_chip`), empty for a scenario as it stands;
    ``e2e_reading``: the reading of the published E2E it was fitted under (:data:`E2E_READINGS`)."""

    efficiency: serving.Efficiency
    scenario: str
    target_claims: tuple[str, ...]
    concurrency_cap: float | str | None = "benchmark"
    overrides: tuple[tuple[str, float], ...] = ()
    e2e_reading: str = DEFAULT_E2E_READING

    def chip(self) -> ChipSpec:
        """The Jalapeño this fit was made for: :func:`jalapeno_chip` of its scenario and overrides."""
        return jalapeno_chip(self.scenario, **dict(self.overrides))

    def constants(self) -> dict[str, float]:
        """The four constants of :data:`FIT_CONSTANTS` (SI): ``tau_s``, ``eta_prefill``,
        ``request_latency_s`` (0 under the ``separate`` reading), ``mla_layer_factor``."""
        e = self.efficiency
        return {"tau_s": e.tau_s["jalapeno"], "eta_prefill": e.eta_prefill, "request_latency_s": e.request_latency_s,
                "mla_layer_factor": e.mla_layer_factor}


def fit_targets(e2e_reading: str = DEFAULT_E2E_READING) -> np.ndarray:
    """The published points of :data:`JALAPENO_FITS` ``[e2e_reading]`` in the fit's units, in
    :func:`fit_end_points`' order: maximum interactivity on gpt-oss-120b (tok/s/user, 1 / TBT), peak
    throughput per chip (tok/s: the published tok/s/kW x rated TDP, both claims), under ``one-point``
    the E2E at the fastest point (s), and the DeepSeek-R1 maximum interactivity (tok/s/user): three
    values under ``separate``, four under ``one-point``. UnknownNameError for another reading."""
    v = data.claim_value
    e2e = [v("gptoss-jalapeno-e2e")] if check_e2e_reading(e2e_reading) == "one-point" else []
    return np.array([1e3 / v("gptoss-jalapeno-tbt"),
                     v("gptoss-jalapeno-tok-per-kw") * power.power_w(jalapeno_chip(), "rated") / 1e3,
                     *e2e, v("dsr1-jalapeno-single-user")])


def fit_jalapeno(scenario: str = "central", base: serving.Efficiency | None = None, *,
                 concurrency_cap: float | str | None = "benchmark",
                 overrides: dict[str, float] | None = None,
                 e2e_reading: str = DEFAULT_E2E_READING) -> JalapenoFit:
    """Fit Jalapeño's own constants (:data:`JALAPENO_FITS` ``[e2e_reading]``) to its published operating
    points (:func:`fit_targets`): on gpt-oss-120b 8k/1k the minimum TBT (the frontier's maximum
    interactivity; claim ``gptoss-jalapeno-tbt``) and the peak throughput per chip
    (``gptoss-jalapeno-tok-per-kw`` x rated TDP); on DeepSeek-R1 the single-user speed
    (``dsr1-jalapeno-single-user``, the frontier's maximum interactivity); and under the ``one-point``
    reading (:data:`E2E_READINGS`) the E2E at the fastest gpt-oss-120b point (``gptoss-jalapeno-e2e``),
    to which a request latency outside the chips is fitted. Under the default ``separate`` reading that
    latency is 0 (as every measured chip's) and the E2E is a consistency check, :func:`e2e_consistency`:
    three equations in three unknowns (per-layer overhead, prefill efficiency, MLA layer factor); under
    ``one-point`` four in four. Solved by ``scipy.optimize.least_squares`` in log space within
    :data:`FIT_BOUNDS` from each of :data:`FIT_STARTS`; every other constant stays at the calibration on
    measured chips (``base``), so the matched-interactivity ratios and every Kimi K2.5 figure are
    predictions, not fits. The frontiers are those of :func:`jalapeno_chip` (``scenario``) over
    ``concurrency_cap`` (see :func:`jalapeno.pareto.sweep`; by default the benchmark's own range, on the
    assumption that OpenAI ran the same harness). ``overrides``: SI fields of the chip set on top of the
    scenario (:func:`jalapeno_chip`; the error bands of :mod:`jalapeno.uncertainty` fit each node of the
    unknowns this way). UnknownNameError for an unknown scenario or reading."""
    check_e2e_reading(e2e_reading)
    if base is None and concurrency_cap == "benchmark" and not overrides:
        return _fit_default(scenario, e2e_reading)
    base = base or calibration.load()
    chip = jalapeno_chip(scenario, **(overrides or {}))
    eff = fit_end_points(chip, fit_targets(e2e_reading), base, concurrency_cap=concurrency_cap,
                         e2e_reading=e2e_reading)
    return JalapenoFit(eff, scenario, fit_claims(e2e_reading), concurrency_cap,
                       tuple(sorted((overrides or {}).items())), e2e_reading)


#: The models of the end points of :func:`fit_end_points`: gpt-oss-120b for the first (two or three), DeepSeek-R1
#: for the last (the MLA layer cost).
END_POINT_MODELS = ("gpt-oss-120b", "deepseek-r1")


def fit_end_points(chip: ChipSpec, targets, base: serving.Efficiency, *, stack: str = "jalapeno",
                   concurrency_cap: float | str | None = "benchmark", disagg: tuple[bool, bool] = (False, False),
                   training: pl.DataFrame | None = None, mla_layer_factor: float | None = None,
                   e2e_reading: str = DEFAULT_E2E_READING) -> serving.Efficiency:
    """The constants of :data:`JALAPENO_FITS` ``[e2e_reading]`` of a chip known only by end points of its
    frontiers, the way Jalapeño's are fitted (:func:`fit_jalapeno`; the end-point-anchored validation,
    :mod:`jalapeno.schemes`, fits a measured chip the same way): ``base`` with the per-layer overhead of
    ``stack`` (s), the prefill efficiency, under ``one-point`` the request latency outside the chips (s;
    under ``separate`` it is 0) and, with a DeepSeek-R1 target, the MLA layer factor, such that
    :func:`jalapeno.pareto.frontier` of ``chip`` with that stack (over ``concurrency_cap``, read from the
    rows ``training`` as :func:`jalapeno.calibration.sweep` says) reproduces ``targets``, in the units and
    order of :func:`fit_targets`: the maximum interactivity on gpt-oss-120b 8k/1k (tok/s/user), its peak
    throughput per chip (tok/s, input + output), under ``one-point`` the E2E at its fastest point (s) and,
    optionally, the maximum interactivity on DeepSeek-R1 8k/1k (tok/s/user). So ``separate`` takes 2 or 3
    targets, ``one-point`` 3 or 4; without the DeepSeek-R1 target the MLA factor is held at
    ``mla_layer_factor`` (ValueError when it is not given, or for another number of targets).
    ``disagg``: the serving mode of the gpt-oss-120b and the DeepSeek-R1 frontiers. As many equations as
    unknowns, solved by ``scipy.optimize.least_squares`` in log space within :data:`FIT_BOUNDS` from each
    of :data:`FIT_STARTS` (the lowest cost wins; a start that solves the equations ends the search).
    UnknownNameError for another reading."""
    from scipy.optimize import least_squares  # deferred: scipy is slow to import and only the fit needs it

    one_point = check_e2e_reading(e2e_reading) == "one-point"
    targets = np.asarray(targets, dtype=float)
    sizes = (3, 4) if one_point else (2, 3)
    with_mla = targets.size == sizes[1]
    if targets.size not in sizes or (not with_mla and mla_layer_factor is None):
        raise ValueError(f"fit_end_points under the {e2e_reading!r} reading takes {sizes[1]} targets, or {sizes[0]} "
                         f"with mla_layer_factor given; got {targets.size} targets and "
                         f"mla_layer_factor={mla_layer_factor!r}")
    names = [n for n in FIT_CONSTANTS if (n != "request_latency_s" or one_point)
             and (n != "mla_layer_factor" or with_mla)]
    bounds = dict(zip(FIT_CONSTANTS, FIT_BOUNDS))
    options = dict(stack=stack, concurrency_cap=concurrency_cap, training=training)

    def make(z):
        v = dict(zip(names, np.exp(z)))
        return _with_constants(base, tau_s=v["tau_s"], eta_prefill=v["eta_prefill"],
                               request_latency_s=v.get("request_latency_s", 0.0),
                               mla_layer_factor=v.get("mla_layer_factor", mla_layer_factor), stack=stack)

    def fun(z):
        e = make(z)
        g = pareto.frontier(chip, END_POINT_MODELS[0], eff=e, disagg=disagg[0], **options)
        fastest = g.row(g["interactivity_tok_s_user"].arg_max(), named=True)
        got = [fastest["interactivity_tok_s_user"], g["throughput_tok_s_chip"].max()]
        if one_point:
            got.append(fastest["e2e_s"])
        if with_mla:
            d = pareto.frontier(chip, END_POINT_MODELS[1], eff=e, disagg=disagg[1], **options)
            got.append(d["interactivity_tok_s_user"].max())
        return np.log(np.array(got) / targets)

    lo = np.log([bounds[n][0] for n in names])
    hi = np.log([bounds[n][1] for n in names])
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
def _fit_default(scenario: str, e2e_reading: str = DEFAULT_E2E_READING) -> JalapenoFit:
    """:func:`fit_jalapeno` on the stored calibration, once per scenario, reading and process: its four
    constants read by :func:`jalapeno.derived.frames` (stage ``jalapeno-fits``) from the committed table
    ``data/derived/jalapeno-fits.jsonl`` (:func:`derive_fits`: every scenario under both readings), else
    fitted live; a stale table is an error naming ``jalapeno derive jalapeno-fits``."""
    (frame,) = derived.frames("jalapeno-fits", [_default_fit_frame(scenario, e2e_reading)])
    base = calibration.load()
    return JalapenoFit(_with_constants(base, **frame.row(0, named=True)), scenario, fit_claims(e2e_reading),
                       e2e_reading=e2e_reading)


def _default_fit_frame(scenario: str, e2e_reading: str = DEFAULT_E2E_READING) -> tuple[str, str, object]:
    def compute() -> pl.DataFrame:
        return pl.DataFrame([fit_jalapeno(scenario, base=calibration.load(), e2e_reading=e2e_reading).constants()])
    return (f"scenario={scenario} e2e_reading={e2e_reading}", derived.key("jalapeno-fits", scenario, e2e_reading),
            compute)


def derive_fits(root=None):
    """Fit Jalapeño in every scenario (:data:`SCENARIOS`) under each reading of its E2E
    (:data:`E2E_READINGS`) on the stored calibration over the benchmark's concurrency range and write the
    committed table of stage ``jalapeno-fits`` (:func:`jalapeno.derived.write`; ``root``: the data folder,
    default the one read). Returns its path. The command ``jalapeno derive jalapeno-fits``."""
    items = [_default_fit_frame(sc, r) for r in E2E_READINGS for sc in SCENARIOS]
    return derived.write("jalapeno-fits", [(name, k, compute()) for name, k, compute in items], root)


def jalapeno_constants(fits: dict[str, JalapenoFit]) -> pl.DataFrame:
    """The fitted constants of :func:`fit_jalapeno` per scenario, one row each: ``scenario``, ``tau_s``,
    ``eta_prefill``, ``request_latency_s``, ``mla_layer_factor`` (SI), ``e2e_reading``, ``target_claims``."""
    return pl.DataFrame([{"scenario": sc, **f.constants(), "e2e_reading": f.e2e_reading,
                          "target_claims": ", ".join(f.target_claims)} for sc, f in fits.items()])


# ---- the published E2E under each reading ---------------------------------------------------------------

#: The workload of Jalapeño's published E2E and of the measured TTFT a measured chip's latency outside the
#: chip is read from under the ``one-point`` reading (:func:`outside_chip_latency_s`): model, ISL, OSL
#: (nominal tokens).
E2E_WORKLOAD = ("gpt-oss-120b", 8192, 1024)


def outside_chip_latency_s(chip: ChipSpec | str, e2e_reading: str = DEFAULT_E2E_READING, *,
                           scenario: str = "central") -> float:
    """The request latency outside the chip (s) a chip's modeled calls carry under ``e2e_reading``
    (:data:`E2E_READINGS`; the :attr:`~jalapeno.serving.Efficiency.request_latency_s` of its constants):
    one rule for Jalapeño and every measured chip.

    - ``separate``: 0 for every chip: no published or measured point is read as a latency the chip does not
      explain.
    - ``one-point``: the first-token time observed at the chip's reference point on gpt-oss-120b 8k/1k
      (:data:`E2E_WORKLOAD`) minus the first-token time the serving model gives the chip at that point of
      its modeled frontier (the frontier the book's calls are served on, so that a modeled call then takes
      what was observed). For Jalapeño the observed point is its published E2E (claim
      ``gptoss-jalapeno-e2e``) read with its published minimum TBT as one point, at its modeled
      frontier's fastest point: the request latency of :func:`fit_jalapeno` under ``one-point``
      (``scenario`` of its unknowns), which makes the modeled E2E there the published one (fitted together
      with its other three points). For a measured chip it is its measured mean TTFT at its lowest
      measured concurrency (``data/measured/inferencemax.csv`` through
      :func:`jalapeno.calibration.configurations`: the model's default precision, the median over every
      run, stack and serving mode measured there) minus the TTFT of its modeled frontier's fastest point
      at that concurrency (:func:`jalapeno.pareto.frontier` with the calibrated constants, the best
      measured stack, :data:`OUTSIDE_CHIP_MAX_CHIPS` chips per worker at most); 0 when the model already
      gives the chip more (no negative latency). GB200: 108 ms measured at concurrency 1 (a disaggregated
      8-GPU configuration), 11 ms modeled.

    ValueError for a measured chip without a measured point of that workload under ``one-point``;
    UnknownNameError for an unknown chip, scenario or reading."""
    name = specs.chip(chip).chip if not isinstance(chip, ChipSpec) else chip.chip
    if check_e2e_reading(e2e_reading) == "separate":
        return 0.0
    if name == "jalapeno":
        return fit_jalapeno(scenario, e2e_reading="one-point").efficiency.request_latency_s
    return _measured_outside_chip_latency_s(name)


#: The most chips per worker of a measured chip's modeled frontier in :func:`outside_chip_latency_s` (the
#: agents chapter's default baseline worker, :func:`jalapeno.agents.frontier_servers`).
OUTSIDE_CHIP_MAX_CHIPS = 8


@functools.lru_cache(maxsize=None)
def _measured_outside_chip_latency_s(chip: str) -> float:
    model, isl, osl = E2E_WORKLOAD
    rows = calibration.configurations().filter(
        (pl.col("model_key") == model) & (pl.col("chip") == chip) & (pl.col("isl") == isl) & (pl.col("osl") == osl)
        & (pl.col("precision") == calibration.DEFAULT_PRECISION[model]))
    if rows.is_empty():
        raise ValueError(f"no measured {model} {isl}/{osl} point on {chip}: the one-point reading of the E2E reads a "
                         f"measured chip's latency outside the chip from its measured TTFT")
    conc = rows["conc"].min()
    measured = float(rows.filter(pl.col("conc") == conc)["mean_ttft"].median())
    eff = calibration.load()
    front = pareto.frontier(chip, model, isl=isl, osl=osl, max_chips=OUTSIDE_CHIP_MAX_CHIPS, eff=eff,
                            stack=pareto.best_stack(eff))
    nearest = (front["concurrency"] - conc).abs()
    there = front.filter(nearest == nearest.min())
    modeled = float(there.row(there["interactivity_tok_s_user"].arg_max(), named=True)["ttft_s"])
    return max(0.0, measured - modeled)


def e2e_consistency(scenario: str = "central", *, fit: JalapenoFit | None = None,
                    concurrency_cap: float | str | None = "benchmark") -> dict[str, object]:
    """The published E2E (claim ``gptoss-jalapeno-e2e``, s) as a consistency check of Jalapeño's modeled
    gpt-oss-120b 8k/1k frontier (:func:`jalapeno_frontier` with ``fit``, default :func:`fit_jalapeno` of
    ``scenario`` under the default reading): is there a point of the frontier whose E2E is the published
    one? Walking the frontier from its fastest point down in interactivity, the first pair of neighbouring
    points whose E2Es bracket it, interpolated linearly in log E2E against log interactivity.

    Returns ``published_e2e_s``, ``found`` (whether such a point exists), ``interactivity_tok_s_user``
    (tok/s/user, NaN when not found), ``tpot_s`` (its inverse, s), ``concurrency`` and ``n_chips`` (of
    the bracketing point with the larger E2E: the layout that serves it), ``fastest_e2e_s`` and
    ``fastest_interactivity_tok_s_user`` (the frontier's fastest point, where the published TBT sits),
    ``max_e2e_s`` (the largest E2E on the frontier) and ``e2e_reading`` (the fit's)."""
    fit = fit or fit_jalapeno(scenario, concurrency_cap=concurrency_cap)
    model, isl, osl = E2E_WORKLOAD
    f = jalapeno_frontier(model, scenario, fit=fit, isl=isl, osl=osl, concurrency_cap=concurrency_cap) \
        .sort("interactivity_tok_s_user", descending=True)
    target = data.claim_value("gptoss-jalapeno-e2e")
    x, e = f["interactivity_tok_s_user"].to_numpy(), f["e2e_s"].to_numpy()
    out = {"published_e2e_s": target, "found": False, "interactivity_tok_s_user": math.nan, "tpot_s": math.nan,
           "concurrency": math.nan, "n_chips": math.nan, "fastest_e2e_s": float(e[0]),
           "fastest_interactivity_tok_s_user": float(x[0]), "max_e2e_s": float(e.max()),
           "e2e_reading": fit.e2e_reading}
    for i in range(len(e) - 1):
        lo, hi = sorted((e[i], e[i + 1]))
        if lo <= target <= hi and e[i] != e[i + 1]:
            w = (math.log(target) - math.log(e[i])) / (math.log(e[i + 1]) - math.log(e[i]))
            xi = math.exp(math.log(x[i]) + w * (math.log(x[i + 1]) - math.log(x[i])))
            j = i if e[i] > e[i + 1] else i + 1
            out |= {"found": True, "interactivity_tok_s_user": xi, "tpot_s": 1.0 / xi,
                    "concurrency": float(f["concurrency"][j]), "n_chips": float(f["n_chips"][j])}
            break
    return out


def jalapeno_frontier(model: str, scenario: str = "central", *, fit: JalapenoFit | None = None,
                      e2e_reading: str = DEFAULT_E2E_READING, **options) -> pl.DataFrame:
    """Jalapeño's modeled frontier for ``model`` under one scenario of its unknowns, with the constants of
    ``fit`` (default :func:`fit_jalapeno` over the same ``concurrency_cap`` under ``e2e_reading``); ``options`` pass to
    :func:`jalapeno.pareto.frontier`; the chip is the fit's own (:meth:`JalapenoFit.chip`, with its
    overrides). ValueError when ``fit`` was made for another scenario."""
    fit = fit or fit_jalapeno(scenario, concurrency_cap=options.get("concurrency_cap", "benchmark"),
                              e2e_reading=e2e_reading)
    if fit.scenario != scenario:
        raise ValueError(f"the fit is for the {fit.scenario!r} scenario, the frontier asks for {scenario!r}")
    return pareto.frontier(fit.chip(), model, eff=fit.efficiency, stack="jalapeno",
                             **options).with_columns(pl.lit(scenario).alias("scenario"))


def ratio_table(models=("gpt-oss-120b", "deepseek-r1", "kimi-k2.5"), *, power_basis: str = "rated",
                baseline_how: str = "auto", baseline_max_chips: int = 8, baselines: dict[str, str] | None = None,
                fits: dict[str, JalapenoFit] | None = None,
                concurrency_cap: float | str | None = "benchmark",
                e2e_reading: str = DEFAULT_E2E_READING) -> pl.DataFrame:
    """For each model and each Jalapeño scenario: the ratio of Jalapeño's to the baseline's tok/s/kW at
    the baseline's best interactivity ``x*``, next to the published ratio, and its three factors
    (``ratio = jalapeno_retention x peak_ratio x baseline_steepness``): Jalapeño's throughput at ``x*``
    over its own peak, the two peaks' ratio, the baseline's peak over its throughput at ``x*``.
    ``implied_retention`` is the retention the published ratio implies given the other two factors.
    ``baselines`` overrides the chip of :data:`jalapeno.pareto.PUBLISHED_RATIOS`; ``baseline_how`` and
    ``baseline_max_chips`` pass to :func:`jalapeno.pareto.baseline_frontier`; ``fits`` passes
    :func:`fit_jalapeno` results per scenario (fitted over the same ``concurrency_cap`` under ``e2e_reading``
    when not given)."""
    fits = fits or {sc: fit_jalapeno(sc, concurrency_cap=concurrency_cap, e2e_reading=e2e_reading) for sc in SCENARIOS}
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
