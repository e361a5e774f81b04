"""Calibrating the serving model on the measured InferenceMAX points, and validating it on held-out series.

The fit adjusts a few physical constants (:class:`~jalapeno.serving.Efficiency`: achieved fractions of
HBM bandwidth and of peak FLOP/s, the latency of one collective, a per-layer step overhead for each
serving stack and the extra cost of an MLA layer) to minimise the squared log errors of TPOT and of throughput per
chip over every measured point without speculative decoding (``scipy.optimize.least_squares``). The
stacks (vLLM, SGLang, TensorRT-LLM, Dynamo, ATOM) get their own overheads, so a chip's efficiency is not
asked to absorb its software. The fitted values are written to ``data/calibration.csv``.

A *series* is one (model, hardware key, stack, precision, ISL/OSL) sweep. The validation schemes of
:mod:`jalapeno.schemes` refit without a group of series (a chip generation, a (model, chip) pair, a
workload shape, a chip) with the same procedure as the full fit: the same neutral start (:data:`START`,
never the stored calibration, which has seen the held-out series) and the same rule for constants the
training set does not inform (:func:`unidentified`): such a constant is held at its prior
(:data:`PRIORS`) instead of being left to wherever the optimiser's floating-point path takes it. They
score the *default path*, the frontier a user's call draws (:func:`default_frontier`: the stack of
:func:`default_stack`, the recipes' layouts and the benchmark's concurrency cap, all read from the fold's
training rows, ``training=``), and report one statistic, :func:`frontier_error` (per series the frontier
distance, then the median and p90 over series), with the coverage of its nominal band
(:func:`band_half_width`, split-conformal on the vertical errors of the held-out points,
:func:`coverage`). :func:`predicted_frontier` (each series' own stack) serves the in-sample fit.

Every fitted constant also carries a weak prior (:data:`PRIOR_WIDTH`): besides the log errors, the fit
minimises ``((ln c - ln c0) / w)**2 / 2`` summed over the fitted constants ``c``, with ``c0`` from
:data:`PRIOR_CENTRE` (the serving model's generic defaults, which no measurement informed) and ``w =
ln 10**4``: a factor of 10,000 either way is one standard deviation. Its basis is numerical, not
physical: a constant the training rows inform barely moves (the measured points' log errors add up to a
curvature of tens to thousands per constant, the prior adds 1 / w**2 = 0.012), while a
direction they do not inform (a peak-FLOP/s efficiency when no training row is compute-bound, a
collective latency traded against the per-layer overheads) gets a unique minimum instead of a flat
valley. It is as wide as that allows: a wider prior (``ln 10**6``) leaves the refit without H200 1e-4
apart on two numeric paths, a narrower one (``ln 1000``) moves more of the chapter's hold-out quotes.

The fit is one ``scipy.optimize.least_squares`` call (:func:`fit`). In a direction only the prior
informs (curvature ``1 / w**2``) its Gauss-Newton steps approach the minimum slowly and it stops where a
step no longer lowers the cost by a relative 1e-12: there the constants may lie a few 1e-3 (in their
logarithm) from the exact minimum, at a cost within about 1e-8 of it, and where exactly depends on the
start and on the floating-point path. A fit's result is therefore a number once produced, not bits to
re-derive identically on every machine.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import polars as pl

from . import cache, data, derived, display, measured, serving, specs
from .display import number
from .errors import UnknownNameError, shown
from .metrics import pareto_envelope
from .serving import Efficiency
from .specs import ChipSpec, ModelSpec

STACKS = ("vllm", "sglang", "trt", "dynamo-trt", "dynamo-sglang", "atom")
#: The fitted scalar constants of :class:`Efficiency` with their bounds (SI), read from
#: ``data/efficiency_bounds.csv`` where each carries its physical evidence and source: no decode kernel
#: reaches the rated HBM bandwidth (FlashMLA: 3,000 of H800's 3.35 TB/s, so ``eta_mem`` <= 0.9), none the
#: dense peak FLOP/s (DeepGEMM: 1,550 of 1,979 TFLOPS, so the compute shares <= 0.8), a collective on a
#: scale-up network costs at least about 1 µs (one NVLink Switch traversal), and an MLA + 256-expert layer
#: (DeepSeek-R1) is taken to cost one to three times a GQA + 128-expert layer (gpt-oss-120b) in per-layer
#: overhead. Then the bounds of every per-layer overhead (``tau_s`` there).
_EFFICIENCY_BOUNDS = data.efficiency_bounds()
BOUNDS = {p: _EFFICIENCY_BOUNDS[p] for p in ("eta_mem", "eta_compute", "eta_prefill", "alpha_s", "beta_s",
                                             "mla_layer_factor")}
_TAU_BOUNDS = _EFFICIENCY_BOUNDS["tau_s"]
_UNITS = {"eta_mem": "fraction", "eta_compute": "fraction", "eta_prefill": "fraction", "alpha_s": "s",
          "beta_s": "s per layer per sequence", "mla_layer_factor": "ratio"}
#: The inference engine a stack runs its workers on: NVIDIA Dynamo orchestrates TensorRT-LLM or SGLang
#: workers (ai-dynamo/dynamo README, "backends"), so an unmeasured Dynamo stack starts from its engine's
#: per-layer overhead.
ENGINE = {"dynamo-trt": "trt", "dynamo-sglang": "sglang"}
#: Where every fit starts (log space): the serving model's generic defaults (:class:`Efficiency`) with a
#: 10 µs per-layer overhead for every stack. Fixed and neutral, so a refit depends on its data alone.
START = Efficiency(tau_s={s: 10e-6 for s in STACKS})
#: The centre of the fit's weak prior (see the module docstring): the neutral start, the constants a chip
#: gets before any calibration. Fixed: never the stored calibration, which has seen every series.
PRIOR_CENTRE = START
#: Values at which a fit holds a constant that no series of its training set informs (see
#: :func:`unidentified`). ``mla_layer_factor``: the median of its prior, log-uniform over the bounds of
#: :data:`BOUNDS` (one to three times a GQA layer's overhead), i.e. their geometric mean sqrt(3): with no
#: data that separate the MLA extra cost from the stacks' own overheads, the fit takes the middle of the
#: stated range rather than either end.
PRIORS = {"mla_layer_factor": float(np.sqrt(BOUNDS["mla_layer_factor"][0] * BOUNDS["mla_layer_factor"][1]))}
#: Width of the weak prior on each fitted log constant (centred on :data:`PRIOR_CENTRE`; see the module docstring):
#: ``ln 10**4``, one standard deviation a factor of 10,000 either way.
PRIOR_WIDTH = math.log(1e4)
#: Stopping tolerances of the fit (:func:`fit`, ``scipy.optimize.least_squares``): relative change of
#: the cost and of the log constants, and the scaled gradient. Far below the data's own precision, so that
#: a fit ends on its minimum (to about 1e-7 in the log constants, the limit a forward-difference Jacobian
#: leaves), not wherever a looser rule happens to fire.
TOLERANCES = {"ftol": 1e-12, "xtol": 1e-12, "gtol": 1e-12}


def chip_of(hw: str, chips: list[str] | None = None) -> str:
    """The chip key of a benchmark hardware key ``hw``: the key itself or its alias
    (:data:`jalapeno.specs.CHIP_ALIASES`: ``b200-trt`` is ``b200``), else the key without a
    ``-<stack>`` suffix (a stack of :data:`STACKS`: a reader's ``h100-vllm`` is ``h100``), when that is
    one of ``chips`` (default: the chips the serving model can time, :func:`jalapeno.specs.hbm_chip_names`).
    UnknownNameError (kind ``chip``) listing ``chips`` otherwise."""
    chips = specs.hbm_chip_names() if chips is None else chips
    key = str(hw).strip().lower()
    key = specs.CHIP_ALIASES.get(key, key)
    if key in chips:
        return key
    for stack in sorted(STACKS, key=len, reverse=True):
        if key.endswith("-" + stack) and key[:-len(stack) - 1] in chips:
            return key[:-len(stack) - 1]
    raise UnknownNameError("chip", hw, chips)


def configurations(points: pl.DataFrame | None = None, *, keep_queue_bound: bool = False) -> pl.DataFrame:
    """Measured points (no speculative decoding) that are not queue-bound (column ``queue_bound`` of
    :func:`jalapeno.measured.points`: fewer than ``queue_bound_occupancy`` of the admitted users decoding
    at a moment, ``model_constants.csv``; the serving model models steady decode, so such a run is neither
    calibrated on nor scored, though the measured charts show it), mapped onto the serving model's worker
    description (``keep_queue_bound``: keep those rows too, for a use that transforms measured points
    rather than fits or scores the model, :func:`jalapeno.pareto.transferred_frontier`):
    ``series``, ``model_key``, ``chip`` (:func:`chip_of` of the hardware key), ``stack``, ``n_chips``, ``dp``,
    ``ep``, ``worker_conc``, ``disagg``, ``prefill_chips``, ``prefill_tp`` next to the measured ``mean_tpot``,
    ``tput_per_gpu``, ``mean_ttft``."""
    pts = measured.points() if points is None else points
    pts = pts.filter((pl.col("spec_decoding") == "none") & (pl.lit(keep_queue_bound) | ~pl.col("queue_bound")))
    known = specs.hbm_chip_names()
    chips = {hw: chip_of(hw, known) for hw in pts["hw"].unique()}
    d = pl.col("disagg")
    workers = pl.when(d).then(pl.col("decode_num_workers")).otherwise(1)
    # decode_tp / decode_ep are not filled in for every disaggregated recipe (the Dynamo-SGLang rows say 1
    # for 4-48 GPU workers): the GPU count per worker is the reliable field
    n = pl.when(d).then(pl.col("num_decode_gpu") / pl.col("decode_num_workers")).otherwise(pl.col("tp"))
    dp_attn = pl.when(d).then(pl.col("decode_dp_attention")).otherwise(pl.col("dp_attention")).fill_null(False)
    ep = pl.when(d).then(pl.col("decode_ep")).otherwise(pl.col("ep")).fill_null(1)
    return pts.select(
        pl.concat_str([pl.col("model_key"), pl.col("hw"), pl.col("framework"), pl.col("precision"),
                       pl.format("{}/{}", pl.col("isl"), pl.col("osl"))], separator=" ").alias("series"),
        "model_key", pl.col("hw").replace_strict(chips).alias("chip"), "hw", pl.col("framework").alias("stack"),
        "precision", "isl", "osl", "conc", "run_id",
        n.cast(pl.Float64).alias("n_chips"),
        pl.when(dp_attn).then(n).otherwise(1).cast(pl.Float64).alias("dp"),
        ((ep > 1) | (dp_attn & (n > 1))).alias("ep"),
        (pl.col("conc") / workers).cast(pl.Float64).alias("worker_conc"),
        d.alias("disagg"),
        pl.when(d).then(pl.col("num_prefill_gpu") / workers).otherwise(0).cast(pl.Float64).alias("prefill_chips"),
        pl.when(d).then(pl.col("num_prefill_gpu") / pl.col("prefill_num_workers")).otherwise(1)
        .cast(pl.Float64).alias("prefill_tp"),
        "mean_tpot", "tput_per_gpu", "mean_ttft", "mean_e2el",
    )


_GROUP_KEYS = ["model_key", "chip", "stack", "precision", "isl", "osl", "disagg", "ep"]


def _groups(configs: pl.DataFrame) -> list[tuple[np.ndarray, dict]]:
    """The rows of ``configs`` split into the groups one :func:`jalapeno.serving.evaluate` call takes: for
    each (model, chip, stack, precision, shape, disaggregation, EP), its row indices and the evaluator's
    arguments but ``eff`` (its :class:`~jalapeno.serving.Layout` and :class:`~jalapeno.serving.Workload`).
    Built once per fit, so that an evaluation of the residuals is the evaluator's arithmetic alone."""
    out = []
    indexed = configs.with_row_index("_row")
    for key, group in indexed.group_by(_GROUP_KEYS, maintain_order=True):
        m, c, stack, prec, isl, osl, disagg, ep = key
        layout = serving.Layout(n_chips=group["n_chips"].to_numpy(), dp=group["dp"].to_numpy(), ep=ep, disagg=disagg,
                                prefill_chips=np.maximum(group["prefill_chips"].to_numpy(), 1),
                                prefill_tp=group["prefill_tp"].to_numpy())
        workload = serving.Workload(concurrency=group["worker_conc"].to_numpy(), isl=isl, osl=osl, precision=prec)
        out.append((group["_row"].to_numpy(), dict(model=specs.model(m), chip=specs.chip(c), layout=layout,
                                                   workload=workload, stack=stack)))
    return out


def _evaluate_groups(groups: list[tuple[np.ndarray, dict]], n_rows: int, eff: Efficiency) -> dict[str, np.ndarray]:
    """TPOT, throughput per chip, TTFT and E2E of every row (``pred_*``, row order) for ``eff``."""
    out = {k: np.empty(n_rows) for k in ("pred_tpot", "pred_tput", "pred_ttft", "pred_e2e")}
    for rows, kw in groups:
        r = serving.evaluate(eff=eff, **kw)
        out["pred_tpot"][rows] = r.tpot_s
        out["pred_tput"][rows] = r.throughput_tok_s_chip
        out["pred_ttft"][rows] = r.ttft_s
        out["pred_e2e"][rows] = r.e2e_s
    return out


def predict(configs: pl.DataFrame, eff: Efficiency) -> pl.DataFrame:
    """Model predictions for each row of :func:`configurations`: adds ``pred_tpot``, ``pred_tput``,
    ``pred_ttft``, ``pred_e2e``. Evaluated in one array call per (model, chip, stack, precision, shape)."""
    return configs.with_columns(**{k: pl.Series(v) for k, v in
                                   _evaluate_groups(_groups(configs), configs.height, eff).items()}
                                ).sort("series", "n_chips", "worker_conc")


def cells(configs: pl.DataFrame) -> tuple[str, ...]:
    """The per-layer overheads a fit on ``configs`` (rows of :func:`configurations`) estimates: one per
    (stack, chip generation) with a row, named ``"<stack>@<generation>"`` (the keys of
    :attr:`Efficiency.tau_s`, :func:`jalapeno.serving.overhead_key`), in the order of :data:`STACKS`
    then generation. The same stack runs at different overheads on different generations (vLLM on B200 and
    on Hopper), so none is shared across generations; a generation no row informs gets the stack's prior
    (:func:`with_priors`)."""
    pairs = configs.select("stack", "chip").unique()
    have = {serving.overhead_key(s, specs.chip(c).generation) for s, c in pairs.iter_rows()}
    return tuple(k for s in (*STACKS, *extra_stacks(configs["stack"])) for k in sorted(have) if k.split("@", 1)[0] == s)


def extra_stacks(stacks) -> tuple[str, ...]:
    """The stacks among ``stacks`` (names, e.g. a column ``stack`` or the overheads of an
    :class:`Efficiency`, ``"<stack>@<generation>"`` read as their stack) that are not of :data:`STACKS`:
    a reader's own stack (``jalapeno build --measurements``, :mod:`jalapeno.measurements`), which a fit on
    its rows gives an overhead of its own per generation (:func:`cells`) and a prior (:func:`with_priors`),
    after those of :data:`STACKS`. Sorted; empty for the shipped rows."""
    return tuple(sorted({str(s).split("@", 1)[0] for s in stacks} - set(STACKS) - {"default"}))


def parameters(configs: pl.DataFrame) -> tuple[str, ...]:
    """The fitted constants of a fit on ``configs``, in the fit's order: :data:`BOUNDS`, then
    ``tau_s:<stack>@<generation>`` for each of :func:`cells`."""
    return tuple(BOUNDS) + tuple(f"tau_s:{c}" for c in cells(configs))


def _vector(eff: Efficiency, names: tuple[str, ...]) -> np.ndarray:
    return np.log(np.asarray([(eff.tau_s[p[6:]] if p[6:] in eff.tau_s else eff.tau(p[6:].split("@", 1)[0]))
                              if p.startswith("tau_s:") else getattr(eff, p) for p in names]))


def _efficiency(x: np.ndarray, names: tuple[str, ...]) -> Efficiency:
    v = dict(zip(names, np.exp(x).tolist()))
    return Efficiency(**{p: v[p] for p in BOUNDS if p in v},
                      tau_s={p[6:]: t for p, t in v.items() if p.startswith("tau_s:")})


def with_priors(eff: Efficiency) -> Efficiency:
    """``eff`` with every stack's prior overhead (``tau_s["<stack>"]``, s), the value :meth:`Efficiency.tau`
    gives the stack on a chip generation none of its fitted overheads (``"<stack>@<generation>"``) covers:
    the geometric mean of the stack's fitted generations; for a stack fitted on none, its engine's prior
    (:data:`ENGINE`: Dynamo runs TensorRT-LLM or SGLang workers) when that was fitted, else the median of
    every fitted overhead. The stated prior of a new generation: its error is what scheme (a) of
    :mod:`jalapeno.schemes` (a generation left out) measures."""
    fitted = {k: v for k, v in eff.tau_s.items() if "@" in k}
    priors = {}
    for s in (*STACKS, *extra_stacks(fitted)):  # a reader's own stack (extra_stacks) from its own generations
        own = [v for k, v in fitted.items() if k.split("@", 1)[0] == s]
        if own:
            priors[s] = float(np.exp(np.mean(np.log(own))))
    for s in STACKS:
        if s not in priors:
            priors[s] = priors.get(ENGINE.get(s), float(np.median(list(fitted.values()))))
    return replace(eff, tau_s={**fitted, **priors})


def residuals(configs: pl.DataFrame, eff: Efficiency) -> np.ndarray:
    """Log errors of TPOT and of throughput per chip, stacked (the fit's objective but its prior), in the row order of
    ``configs``."""
    p = _evaluate_groups(_groups(configs), configs.height, eff)
    return np.concatenate([np.log(p["pred_tpot"] / configs["mean_tpot"].to_numpy()),
                           np.log(p["pred_tput"] / configs["tput_per_gpu"].to_numpy())])


def unidentified(configs: pl.DataFrame) -> tuple[str, ...]:
    """The constants of :data:`BOUNDS` (and ``tau_s:<stack>``) that no series of ``configs`` (rows of
    :func:`configurations`) informs, so a fit on them would leave them to the optimiser's path:

    - ``mla_layer_factor`` unless one stack served both an MLA model and a GQA model: the factor multiplies
      the stack's per-layer overhead, so only such a stack tells it apart from that overhead (in the
      InferenceMAX data only Dynamo-TRT on GB200 does; without it, the per-sequence term alone leaves the
      factor at a bound);
    - ``tau_s:<stack>`` for every stack with no point in ``configs`` (it takes the prior of
      :func:`with_priors`; a stack's overhead on a generation with no point, likewise).
    """
    mla = [m for m in configs["model_key"].unique() if specs.model(m).attention == "mla"]
    kinds = configs.group_by("stack").agg(pl.col("model_key").is_in(mla).any().alias("mla"),
                                          (~pl.col("model_key").is_in(mla)).any().alias("other"))
    out = [] if kinds.filter(pl.col("mla") & pl.col("other")).height else ["mla_layer_factor"]
    present = set(configs["stack"].unique())
    out += [f"tau_s:{s}" for s in STACKS if s not in present]
    return tuple(out)


def fit(configs: pl.DataFrame | None = None, start: Efficiency | None = None,
        max_nfev: int | None = None) -> Efficiency:
    """Fit :class:`Efficiency` to measured configurations (rows of :func:`configurations`; default: all),
    from ``start`` (default :data:`START`): minimise the squared log errors of TPOT and throughput per
    chip (:func:`residuals`) plus the weak prior of the module docstring (:data:`PRIOR_WIDTH`, centred on
    :data:`PRIOR_CENTRE` whatever ``start`` is). A constant the data do not inform (:func:`unidentified`)
    is not fitted: the MLA factor is held at :data:`PRIORS`; one overhead is fitted per (stack, chip
    generation) with a row (:func:`cells`), and every stack gets its prior for the generations it has no
    row on (:func:`with_priors`).

    One ``scipy.optimize.least_squares`` call (trust-region reflective, ``method="trf"``) in log space
    within :data:`BOUNDS` (:data:`_TAU_BOUNDS` for the overheads), to the tolerances :data:`TOLERANCES` or
    ``max_nfev`` evaluations (default scipy's, 100 per fitted constant); scipy's forward differences
    with the Jacobian's sparsity (:func:`jac_sparsity`), so that the constants that move disjoint rows
    share one evaluation. Deterministic: the same inputs give the same bits on one machine."""
    from scipy.optimize import least_squares

    configs = configurations() if configs is None else configs
    held = set(unidentified(configs))
    names = parameters(configs)
    x0 = _vector(replace(start or START, **{p: v for p, v in PRIORS.items() if p in held}), names)
    lo = np.log([BOUNDS[p][0] if p in BOUNDS else _TAU_BOUNDS[0] for p in names])
    hi = np.log([BOUNDS[p][1] if p in BOUNDS else _TAU_BOUNDS[1] for p in names])
    free = np.array([p not in held for p in names])
    groups = _groups(configs)
    measured_log = np.log(np.concatenate([configs["mean_tpot"].to_numpy(), configs["tput_per_gpu"].to_numpy()]))
    centre = _vector(PRIOR_CENTRE, names)[free]  # fixed: never ``start`` or the stored fit

    def fun(z):
        x = x0.copy()
        x[free] = z
        p = _evaluate_groups(groups, configs.height, _efficiency(x, names))
        return np.concatenate([np.log(np.concatenate([p["pred_tpot"], p["pred_tput"]])) - measured_log,
                               (z - centre) / PRIOR_WIDTH])

    sol = least_squares(fun, np.clip(x0[free], lo[free], hi[free]), method="trf", jac="2-point",
                        bounds=(lo[free], hi[free]), jac_sparsity=jac_sparsity(configs, free), x_scale=1.0,
                        max_nfev=max_nfev, **TOLERANCES)
    x = x0.copy()
    x[free] = sol.x
    return with_priors(_efficiency(x, names))


def jac_sparsity(configs: pl.DataFrame, free: np.ndarray | None = None) -> np.ndarray:
    """Which residuals of :func:`fit` each fitted constant can move (bool, shape ``(2 x rows + constants,
    constants)``: the TPOT rows, the throughput rows, then one prior row per constant; ``free`` selects the
    constants of :func:`parameters`, default all): a per-layer overhead ``tau_s:<stack>@<generation>`` only
    the rows of its stack on chips of its generation, the MLA factor only an MLA model's rows (it
    multiplies their per-layer overhead), every other constant every row; each prior row only its own
    constant."""
    names = np.array(parameters(configs))
    free = np.ones(names.size, dtype=bool) if free is None else np.asarray(free, dtype=bool)
    mla = [m for m in configs["model_key"].unique() if specs.model(m).attention == "mla"]
    cell = np.array([serving.overhead_key(s, specs.chip(c).generation)
                     for s, c in zip(configs["stack"], configs["chip"])])
    is_mla = configs["model_key"].is_in(mla).to_numpy()
    names = names[free]
    rows = np.ones((configs.height, names.size), dtype=bool)
    for j, p in enumerate(names):
        if p.startswith("tau_s:"):
            rows[:, j] = cell == p[6:]
        elif p == "mla_layer_factor":
            rows[:, j] = is_mla
    return np.vstack([rows, rows, np.eye(names.size, dtype=bool)])


# ---- the prediction procedure: a chip's grid of layouts, with its own software ----------------------

DEFAULT_PRECISION = {"gpt-oss-120b": "fp4", "deepseek-r1": "fp4", "kimi-k2.5": "fp4"}
CONCURRENCY = np.unique(np.round(np.geomspace(1, 16384, 57)))


#: Where an unmeasured (model, chip) borrows its measured layouts: GB300 shares GB200's NVL72 rack and
#: 8 TB/s HBM3e; Kimi K2.5 shares DeepSeek-V3's architecture (MLA, 61 layers, hidden size 7,168, 8 routed
#: experts per token), so DeepSeek-R1's measured layouts stand in for it.
TRANSFER_CHIP = {"gb300": "gb200"}
TRANSFER_MODEL = {"kimi-k2.5": "deepseek-r1"}


#: The columns of :func:`sweep`, in order.
SWEEP_COLUMNS = ("n_chips", "dp", "concurrency", "tpot_s", "ttft_s", "e2e_s", "interactivity_tok_s_user",
                 "throughput_tok_s_chip", "chips", "within_recipes")


def sweep(chip: ChipSpec | str, model: ModelSpec | str, *, isl: int = 8192, osl: int = 1024,
          precision: str | None = None, eff: serving.Efficiency | None = None, stack: str | None = None,
          max_chips: int | None = None, concurrency=CONCURRENCY, disagg: bool = False,
          mtp_tokens_per_step: float = 1.0, hbm_bandwidth_bytes_per_s: float | None = None,
          concurrency_cap: float | str | None = "benchmark", training: pl.DataFrame | None = None,
          layouts: str = "recipes") -> pl.DataFrame:
    """Every configuration a chip serving a model is predicted at, evaluated; those whose weights and KV
    fit in HBM and whose load stays within ``concurrency_cap`` are returned.

    The configurations (``layouts``): ``"recipes"`` (default), for a chip the benchmark ran served that way
    (:func:`recipes`, read from ``training``), exactly the layouts its recipes run (chips per worker,
    TP or DP attention), each at the values of ``concurrency`` within the range of requests per worker that
    layout was run at, and at that range's two ends; ``"all"``, or a chip with no recipe (Jalapeño, GB300,
    Vera Rubin, the TPUs), the grid rule: chips per worker in powers of two up to the scale-up domain or
    ``max_chips``, TP or DP attention (DP only for an MoE or MLA model), each ``concurrency`` (at least one
    request per attention replica). Column ``within_recipes`` says which configurations lie within a
    recipe: all of a recipe sweep's; of a grid-rule sweep, those whose layout and concurrency match a
    recipe of the model on some measured chip (:func:`reference_recipes`): False marks a frontier point
    beyond what was measured. UnknownNameError for another ``layouts``.

    ``concurrency_cap``: ``"benchmark"`` (the top of the benchmark's own sweep,
    :func:`benchmark_concurrency_cap`: concurrent requests per worker when aggregated, per chip with its
    prefill chips when ``disagg``; none when no run of the model was served that way: capacity and the
    recipes' ranges then bound the load), a number (concurrent requests per chip, prefill chips included), or
    ``"none"`` / None (unbounded). ValueError for another value. ``eff``: default the stored
    calibration; ``stack``: default :func:`stack_for` the chip and model (the software the benchmark ran for
    that pair, else on the chip or its vendor),
    else one of :data:`STACKS` or of ``eff``'s overheads (UnknownNameError listing them); ``max_chips``:
    a positive whole number (ValueError otherwise). ``training``: the measured rows (of
    :func:`configurations`) the two defaults read, the benchmark's concurrency cap and the chip's stacks
    (default every measured run; a validation fold passes its training rows, so that nothing of the
    held-out rows enters its prediction). CostError above
    :data:`jalapeno.serving.MAX_CONFIGURATIONS` configurations, before the grid is made. Capacity comes
    first (:func:`jalapeno.serving.capacity`): only the configurations that fit are evaluated.
    This is the procedure that predicts a chip (:func:`jalapeno.pareto.frontier` is its envelope), and the
    one the validation schemes score (:func:`default_frontier`).

    Returns columns ``n_chips``, ``dp``, ``concurrency``, ``tpot_s``, ``ttft_s``, ``e2e_s``,
    ``interactivity_tok_s_user``, ``throughput_tok_s_chip``, ``chips`` (prefill included), ``within_recipes``."""
    chip, model = specs.chip(chip), specs.model(model)
    eff = eff or load()
    precision = precision or DEFAULT_PRECISION.get(model.model, "fp8")
    if isl <= 0 or osl <= 1:
        raise ValueError(f"isl must be positive and osl above 1, got isl={isl!r}, osl={osl!r}")
    per_worker = False
    if concurrency_cap == "benchmark":
        concurrency_cap = benchmark_concurrency_cap(model, isl=isl, osl=osl, disagg=disagg, training=training)
        per_worker = not disagg
    elif concurrency_cap == "none":
        concurrency_cap = None
    elif isinstance(concurrency_cap, (str, bool)) or (concurrency_cap is not None and not concurrency_cap > 0):
        raise ValueError(f"concurrency_cap must be 'benchmark', 'none' (or None) or a positive number of requests "
                         f"per chip, got {concurrency_cap!r}")
    if max_chips is not None and (isinstance(max_chips, bool) or not isinstance(max_chips, (int, np.integer))
                                  or max_chips < 1):
        raise ValueError(f"max_chips must be a positive whole number of chips per worker (or None: the chip's "
                         f"scale-up domain), got {shown(max_chips)}")
    if stack is not None and stack not in set(STACKS) | set(eff.tau_s):
        raise UnknownNameError("serving stack", stack, sorted(set(STACKS) | set(eff.tau_s)))
    if not (max_chips or chip.scale_up_domain_chips):
        raise ValueError(f"chip {chip.chip!r} has no published scale-up domain; give max_chips (Jalapeño: "
                         f"jalapeno.subject.jalapeno_chip(scenario) sets one)")
    domain = int(max_chips or chip.scale_up_domain_chips)
    layouts = layouts.lower() if isinstance(layouts, str) else layouts
    if layouts not in LAYOUT_CHOICES:
        raise UnknownNameError("layout rule", layouts, list(LAYOUT_CHOICES))
    stack = stack or stack_for(chip, eff, training, model)
    table = recipes(chip, model, disagg=disagg, training=training)[0] if layouts == "recipes" else None
    grid = np.unique(np.asarray(concurrency, dtype=float))
    if table is not None:
        table = table.filter(pl.col("n_chips") <= domain)
        serving.check_configurations(table.height * (grid.size + 2), table.height)
        grid_layouts = [(size, d, np.unique(np.concatenate([grid[(grid >= lo) & (grid <= hi)], [lo, hi]])))
                    for size, d, lo, hi in table.select("n_chips", "dp", "conc_min", "conc_max").iter_rows()]
        within = None
    else:
        sizes = [2 ** i for i in range(0, 8) if 2 ** i <= domain]
        serving.check_configurations(2 * len(sizes) * grid.size, 2 * len(sizes))
        grid_layouts = [(size, d, grid) for size in sizes
                    for d in ({1, size} if model.is_moe or model.attention == "mla" else {1})]
        within = reference_recipes(model, disagg=disagg, training=training)
    n = np.concatenate([np.full(cs.size, size) for size, _, cs in grid_layouts] or [np.empty(0)]).astype(float)
    dp = np.concatenate([np.full(cs.size, d) for _, d, cs in grid_layouts] or [np.empty(0)]).astype(float)
    c = np.concatenate([cs for _, _, cs in grid_layouts] or [np.empty(0)]).astype(float)
    keep = c >= dp  # at least one sequence per attention replica
    n, dp, c = n[keep], dp[keep], c[keep]
    within = np.ones(n.shape, dtype=bool) if within is None else _within(n, dp, c, within)
    if not n.size:
        return pl.DataFrame({k: np.empty(0, dtype=bool if k == "within_recipes" else float) for k in SWEEP_COLUMNS})
    layout = serving.Layout(n_chips=n, dp=dp, ep=True, hbm_bandwidth_bytes_per_s=hbm_bandwidth_bytes_per_s)
    workload = serving.Workload(concurrency=c, isl=isl, osl=osl, precision=precision,
                                mtp_tokens_per_step=mtp_tokens_per_step)
    # capacity first: only the configurations whose weights and KV cache fit are evaluated
    fit = np.flatnonzero(serving.capacity(model, chip, layout, workload).fits)
    layout, workload = serving.select(layout, workload, fit)
    n, dp, c, within = n[fit], dp[fit], c[fit], within[fit]
    if not fit.size:
        return pl.DataFrame({k: np.empty(0, dtype=bool if k == "within_recipes" else float) for k in SWEEP_COLUMNS})
    r = serving.evaluate(model, chip, layout, workload, stack=stack, eff=eff)
    if disagg:  # prefill chips matched to the request rate the decode workers sustain
        rate = c / r.e2e_s
        p_chips = np.maximum(1.0, np.ceil(rate * r.prefill_s))
        r = serving.evaluate(model, chip, replace(layout, disagg=True, prefill_chips=p_chips, prefill_tp=1), workload,
                             stack=stack, eff=eff)
    keep = np.ones(n.shape, dtype=bool)
    if concurrency_cap is not None:
        served = c if per_worker else c / r.chips
        keep &= served <= concurrency_cap * (1 + 1e-9)
    columns = {"n_chips": n, "dp": dp, "concurrency": c, "tpot_s": r.tpot_s, "ttft_s": r.ttft_s, "e2e_s": r.e2e_s,
               "interactivity_tok_s_user": r.interactivity_tok_s_user,
               "throughput_tok_s_chip": r.throughput_tok_s_chip, "chips": r.chips, "within_recipes": within}
    # selected before the table is built: a frontier is thousands of sweeps, each a few hundred rows
    return pl.DataFrame({k: np.broadcast_to(columns[k], n.shape)[keep] for k in SWEEP_COLUMNS})


def concurrency_caps(configs: pl.DataFrame, disagg: bool) -> dict[tuple[str, int, int], float]:
    """The top of the benchmark's concurrency sweep in the rows ``configs`` (of :func:`configurations`)
    served ``disagg``, per (model, ISL, OSL): the largest concurrency of one server when aggregated
    (requests per worker), the largest ``conc / GPUs`` with the prefill GPUs counted when disaggregated
    (``worker_conc / (n_chips + prefill_chips)``, requests per chip). The one definition
    :func:`benchmark_concurrency_cap` reads."""
    return {(m, i, o): float(c) for m, i, o, c in _caps_table(configs, disagg).iter_rows()}


def _caps_table(configs: pl.DataFrame, disagg: bool) -> pl.DataFrame:
    served = (pl.col("worker_conc") / (pl.col("n_chips") + pl.col("prefill_chips"))) if disagg else pl.col("conc")
    caps = configs.filter(pl.col("disagg") == disagg).group_by("model_key", "isl", "osl").agg(served.max())
    return caps.sort("model_key", "isl", "osl")


@functools.lru_cache(maxsize=None)
def _measured_caps(disagg: bool) -> dict[tuple[str, int, int], float]:
    caps = _from_measured(f"concurrency-caps-{'disagg' if disagg else 'agg'}",
                          lambda: _caps_table(configurations(), disagg))
    return {(m, i, o): float(c) for m, i, o, c in caps.iter_rows()}


def _from_measured(kind: str, compute) -> pl.DataFrame:
    """A small table ``compute()`` derives from the measured runs, kept by :func:`jalapeno.data.cached_frame`
    under the measured files' contents: a first frontier in a new process need not parse every run."""
    return data.cached_frame(kind, cache.key(kind, data=data.data_dir() / "measured"), compute)


def benchmark_concurrency_cap(model: ModelSpec | str, *, isl: int = 8192, osl: int = 1024,
                              disagg: bool = False, training: pl.DataFrame | None = None) -> float | None:
    """The top of the benchmark's concurrency sweep for ``model`` at the measured shape nearest to
    ``isl``/``osl`` (smallest ``|ln ISL ratio| + |ln OSL ratio|``), over every measured InferenceMAX run
    without speculative decoding of ``model`` (of its :data:`TRANSFER_MODEL` source when it was not
    measured) served the same way:

    - aggregated (``disagg`` False): the largest concurrency of one server, in concurrent requests per
      worker whatever its chip count (the benchmark sweeps each single-node recipe's concurrency up to a
      fixed top: 128 for gpt-oss-120b and DeepSeek-R1 at 8k/1k);
    - disaggregated: the largest ``conc / GPUs`` (prefill GPUs included), in concurrent requests per
      chip (128 for gpt-oss-120b and 77 for DeepSeek-R1 at 8k/1k, GB200's multi-node recipes, queue-bound
      runs left out).

    The benchmark never loads a server further, so a frontier compared with its measurements is taken
    over the same range. None (no cap) when no run of ``model`` (of its source) was served that way: the
    other way's top says nothing of this way's load (128 requests per aggregated server against up to
    853 per chip disaggregated). ``training``: only these rows of
    :func:`configurations` (:func:`concurrency_caps`; default every measured run)."""
    name = specs.model(model).model
    caps = _measured_caps(disagg) if training is None else concurrency_caps(training, disagg)
    key = name if any(k[0] == name for k in caps) else TRANSFER_MODEL.get(name, name)
    shapes = [(i, o) for m, i, o in caps if m == key]
    if not shapes:
        return None
    i, o = min(shapes, key=lambda s: (abs(np.log(s[0] / isl)) + abs(np.log(s[1] / osl)), s))
    return caps[(key, i, o)]


def chip_stacks(chip: ChipSpec | str, training: pl.DataFrame | None = None) -> tuple[str, ...]:
    """The serving stacks a frontier of ``chip`` may use when the benchmark ran none for its model there
    (:func:`stack_for`): those measured on it for any model (InferenceMAX points without speculative
    decoding), else on the chip it borrows layouts from (:data:`TRANSFER_CHIP`: GB300 takes GB200's), else
    on any chip of its vendor (``chips.csv``). Sorted; empty for a chip none of whose vendor's chips was
    measured (Jalapeño: its stack is its own fitted overhead, named explicitly). ``training``: only these
    rows of :func:`configurations` count as measured (default every measured run)."""
    c = specs.chip(chip)
    measured_on = _stack_table(training)
    for key in (c.chip, TRANSFER_CHIP.get(c.chip, c.chip)):
        rows = measured_on.filter(pl.col("chip") == key)
        if rows.height:
            return tuple(sorted(set(rows["stack"])))
    vendor = [k for k in measured_on["chip"].unique() if specs.chip(k).vendor == c.vendor]
    return tuple(sorted(set(measured_on.filter(pl.col("chip").is_in(vendor))["stack"])))


def model_chip_stacks(chip: ChipSpec | str, model: ModelSpec | str, training: pl.DataFrame | None = None
                      ) -> tuple[str, ...]:
    """The stacks the benchmark ran for ``model`` (its :data:`TRANSFER_MODEL` source when the model has no
    run) on ``chip`` (its :data:`TRANSFER_CHIP` source when the chip has no run), in the rows
    ``training`` (default every measured run): the software a user of that pair would run. Sorted; empty
    when the benchmark ran no such pair."""
    c, m = specs.chip(chip).chip, specs.model(model).model
    table = _stack_table(training)
    m = m if m in set(table["model_key"]) else TRANSFER_MODEL.get(m, m)
    c = c if c in set(table["chip"]) else TRANSFER_CHIP.get(c, c)
    return tuple(sorted(set(table.filter((pl.col("chip") == c) & (pl.col("model_key") == m))["stack"])))


def _stack_table(training: pl.DataFrame | None) -> pl.DataFrame:
    """(model_key, chip, stack) of every measured series of ``training`` (default every measured run)."""
    if training is None:
        return _measured_stack_table()
    return training.select("model_key", "chip", "stack").unique().sort("model_key", "chip", "stack")


@functools.lru_cache(maxsize=None)
def _measured_stack_table() -> pl.DataFrame:
    return _from_measured("model-chip-stacks", lambda: _stack_table(configurations()))


def stack_for(chip: ChipSpec | str, eff: Efficiency, training: pl.DataFrame | None = None,
              model: ModelSpec | str | None = None) -> str:
    """The stack a frontier of ``chip`` serving ``model`` uses by default, from the rows ``training``
    (default every measured run): of the stacks the benchmark ran for that model on that chip
    (:func:`model_chip_stacks`), or, for a pair it never ran (or no ``model``), of the chip's stacks
    (:func:`chip_stacks`: the chip's for any model, its transfer source's, its vendor's), the one with the
    smallest calibrated per-layer overhead on the chip's generation (:meth:`Efficiency.tau`; never the
    best stack of another vendor). ValueError, naming the chip, when none was measured on it or its
    vendor: give ``stack=`` then (or use :func:`default_stack`)."""
    c = specs.chip(chip)
    stacks = (model_chip_stacks(c, model, training) if model is not None else ()) or chip_stacks(c, training)
    if not stacks:
        raise ValueError(f"no serving stack was measured on {c.chip} or another {c.vendor or 'same-vendor'} chip: "
                         f"name one with stack= (calibrated: {', '.join(STACKS)})")
    return min(stacks, key=lambda s: eff.tau(s, c.generation))


#: How a sweep chooses its layouts (``layouts=`` of :func:`sweep`): ``recipes``, the layouts and
#: concurrency ranges the benchmark's recipes run on the chip (:func:`recipes`); ``all``, every layout of
#: the grid rule.
LAYOUT_CHOICES = ("recipes", "all")


def recipes(chip: ChipSpec | str, model: ModelSpec | str, *, disagg: bool = False,
            training: pl.DataFrame | None = None) -> tuple[pl.DataFrame | None, str]:
    """The layouts the benchmark's recipes run on ``chip`` served ``disagg``, in the rows ``training`` (of
    :func:`configurations`, default every measured run): ``(table, source)``, the table one row a layout,
    ``n_chips`` (chips per decode worker; per server when aggregated), ``dp`` (attention replicas) and the
    range of concurrent requests per worker it was run at, ``conc_min`` to ``conc_max``. ``source``:

    - ``model-chip``: the recipes of ``model`` (its :data:`TRANSFER_MODEL` source when the model has no
      run) on ``chip``;
    - ``chip``: the layouts of every model's recipes on ``chip``, each over the range of requests per
      worker the chip was run at as a whole (another model's range at one layout says how far that model
      went there, not this one), when the benchmark ran others there but not this one (the stated
      fallback for a pair it never ran, or left out of a validation fold);
    - ``none`` (table None): the chip has no recipe served that way (Jalapeño, GB300, Vera Rubin, the
      TPUs): :func:`sweep` takes its grid rule and flags the points beyond :func:`reference_recipes`.
    """
    c, m = specs.chip(chip).chip, specs.model(model).model
    table, source = _kept(training, ("recipes", c, m, disagg), lambda table: _recipes(table, c, m, disagg))
    return (None if table is None else table.clone()), source


def _recipes(table: pl.DataFrame, c: str, m: str, disagg: bool) -> tuple[pl.DataFrame | None, str]:
    """:func:`recipes` of chip ``c`` and model ``m`` in the recipe table ``table`` (:func:`_recipe_table`)."""
    table = table.filter((pl.col("chip") == c) & (pl.col("disagg") == disagg))
    if table.is_empty():
        return None, "none"
    m = m if m in set(table["model_key"]) else TRANSFER_MODEL.get(m, m)
    own = table.filter(pl.col("model_key") == m)
    if own.height:
        return own.group_by("n_chips", "dp").agg(pl.col("conc_min").min(), pl.col("conc_max").max()).sort(
            "n_chips", "dp"), "model-chip"
    # another model's range at one layout says how far that model went there, not this one: each layout
    # of the chip takes the range of requests per worker the chip was run at as a whole
    return table.select("n_chips", "dp").unique().sort("n_chips", "dp").with_columns(
        conc_min=pl.lit(table["conc_min"].min()), conc_max=pl.lit(table["conc_max"].max())), "chip"


def reference_recipes(model: ModelSpec | str, *, disagg: bool = False,
                      training: pl.DataFrame | None = None) -> pl.DataFrame:
    """The layouts a grid-rule sweep (a chip with no recipe) is compared with, to say where its frontier
    goes beyond what was measured: the recipes of ``model`` (its :data:`TRANSFER_MODEL` source when it has
    no run) on every measured chip served ``disagg``, columns of :func:`recipes`; empty when none."""
    m = specs.model(model).model

    def compute(table: pl.DataFrame) -> pl.DataFrame:
        table = table.filter(pl.col("disagg") == disagg)
        key = m if m in set(table["model_key"]) else TRANSFER_MODEL.get(m, m)
        return table.filter(pl.col("model_key") == key).group_by("n_chips", "dp").agg(
            pl.col("conc_min").min(), pl.col("conc_max").max()).sort("n_chips", "dp")
    return _kept(training, ("reference", m, disagg), compute).clone()


def _kept(training: pl.DataFrame | None, key: tuple, compute: Callable[[pl.DataFrame], object]):
    """``compute(_recipe_table(training))``, kept under ``key`` while the measured runs' recipe table is the
    same when ``training`` is None (:func:`jalapeno.data.kept_for`: a chapter's sweeps ask for the same
    recipes by the hundred); a validation fold's ``training`` rows are computed each time. The callers
    return copies of what is kept."""
    table = _recipe_table(training)
    if training is not None:
        return compute(table)
    return data.kept_for(("recipes", *key), (table,), lambda: compute(table))


def _recipe_table(training: pl.DataFrame | None) -> pl.DataFrame:
    """(model_key, chip, disagg, n_chips, dp, conc_min, conc_max) of the rows ``training`` (default every
    measured run): each recipe's layout and its range of concurrent requests per worker."""
    if training is None:
        return _measured_recipe_table()
    return training.group_by("model_key", "chip", "disagg", "n_chips", "dp").agg(
        pl.col("worker_conc").min().alias("conc_min"), pl.col("worker_conc").max().alias("conc_max")).sort(
        "model_key", "chip", "disagg", "n_chips", "dp")


@functools.lru_cache(maxsize=None)
def _measured_recipe_table() -> pl.DataFrame:
    return _from_measured("recipes", lambda: _recipe_table(configurations()))


def _within(n: np.ndarray, dp: np.ndarray, c: np.ndarray, table: pl.DataFrame) -> np.ndarray:
    """Whether each configuration (chips, attention replicas, requests per worker) lies within a layout of
    ``table`` (columns of :func:`recipes`) and its concurrency range."""
    out = np.zeros(n.shape, dtype=bool)
    for tn, td, lo, hi in zip(*(table[k] for k in ("n_chips", "dp", "conc_min", "conc_max"))):
        out |= (n == tn) & (dp == td) & (c >= lo * (1 - 1e-9)) & (c <= hi * (1 + 1e-9))
    return out


# ---- the stored calibration --------------------------------------------------------------------------

CALIBRATION_FILE = "calibration.csv"


def save(eff: Efficiency, how: str, path: Path | None = None) -> Path:
    """Write the fitted constants to ``data/calibration.csv`` (parameter, value, unit, how obtained)
    through :func:`jalapeno.data.write_calibration`: the constants of :data:`BOUNDS`, then every per-layer
    overhead of ``eff`` (``tau_s:<stack>@<generation>`` fitted, ``tau_s:<stack>`` the prior of
    :func:`with_priors`), in the order of :data:`STACKS`."""
    order = {s: i for i, s in enumerate(STACKS)}
    taus = sorted(eff.tau_s, key=lambda k: (order.get(k.split("@", 1)[0], len(order)), "@" in k, k))
    rows = [{"parameter": p, "value": f"{number(float(v)):.6g}", "unit": _UNITS[p], "source": how}
            for p, v in [(p, getattr(eff, p)) for p in BOUNDS]]
    rows += [{"parameter": f"tau_s:{k}", "value": f"{number(float(eff.tau_s[k])):.6g}", "unit": "s per layer per step",
              "source": how if "@" in k else "prior of the stack for a generation it was not fitted on "
              "(jalapeno.calibration.with_priors)"} for k in taus]
    return data.write_calibration(rows, path)


def derive_calibration(root: Path | None = None) -> Path:
    """Refit on every measured point (:func:`fit`) and store the constants (:func:`save`, with how they
    were obtained) and the side file of stage ``calibration`` (:func:`jalapeno.derived.write_side`);
    ``root``: the data folder, default the one read. Returns the path of ``calibration.csv``. The command
    ``jalapeno derive calibration``."""
    configs = configurations()
    how = (f"fitted by jalapeno.calibration.fit() (one scipy least_squares call, trust-region reflective, on log "
           f"TPOT and log throughput per GPU, with the weak prior jalapeno.calibration.PRIOR_WIDTH around the "
           f"neutral start) to the {configs.height} measured InferenceMAX points without speculative decoding in "
           f"measured/inferencemax.csv ({configs['series'].n_unique()} series), within the bounds of "
           f"jalapeno.calibration.BOUNDS; refit with `jalapeno derive calibration`")
    path = save(fit(configs), how, None if root is None else Path(root) / CALIBRATION_FILE)
    derived.write_side("calibration", root)
    return path


@functools.lru_cache(maxsize=None)
def _checked(folder: str) -> None:  # once per process and data folder
    derived.check("calibration")


def load() -> Efficiency:
    """The calibration stored in ``data/calibration.csv``. :class:`jalapeno.derived.StaleTableError`,
    naming ``jalapeno derive calibration``, when the repository's data are read and the measured points,
    the specs or the stage's version differ from those it was fitted to."""
    _checked(str(data.data_dir()))
    values = data.calibration_values()
    missing = [p for p in (*BOUNDS, *(f"tau_s:{s}" for s in STACKS)) if p not in values]
    if missing:
        raise data.DataError(f"{data.data_dir() / CALIBRATION_FILE}: missing parameters {missing}")
    return Efficiency(**{p: values[p] for p in BOUNDS},
                      tau_s={p[6:]: v for p, v in values.items() if p.startswith("tau_s:")})


# ---- validation ----------------------------------------------------------------------------------------

def point_distances(meas_x, meas_y, pred_x, pred_y) -> np.ndarray:
    """For each measured point (``meas_x`` interactivity, ``meas_y`` throughput; arrays of one length), the
    shortest distance in log space (natural log of both axes) to the predicted frontier, the polyline
    through the Pareto envelope of (``pred_x``, ``pred_y``). Unitless (log units); ``expm1`` of it is the
    fractional distance the chapter quotes."""
    mx, my = np.log(np.asarray(meas_x, dtype=float)), np.log(np.asarray(meas_y, dtype=float))
    fi = pareto_envelope(np.asarray(pred_x), np.asarray(pred_y))
    px, py = np.log(np.asarray(pred_x)[fi]), np.log(np.asarray(pred_y)[fi])
    if px.size == 1:
        return np.hypot(mx - px[0], my - py[0])
    ax, ay, bx, by = px[:-1], py[:-1], px[1:], py[1:]
    vx, vy = bx - ax, by - ay
    t = np.clip(((mx[:, None] - ax) * vx + (my[:, None] - ay) * vy) / np.maximum(vx * vx + vy * vy, 1e-18), 0, 1)
    return np.hypot(mx[:, None] - (ax + t * vx), my[:, None] - (ay + t * vy)).min(axis=1)


def vertical_errors(meas_x, meas_y, pred_x, pred_y) -> np.ndarray:
    """For each measured point (``meas_x`` interactivity, ``meas_y`` throughput; arrays of one length),
    ``ln(predicted / measured)`` throughput at its interactivity: the predicted frontier is the Pareto
    envelope of (``pred_x``, ``pred_y``), read by log-log interpolation between its points
    (:func:`jalapeno.pareto.throughput_at`'s rule), at its slowest point below it and at its fastest point
    beyond it (clamped: whether a point lies beyond the frontier is for the caller to say). Log units,
    signed: positive where the prediction is optimistic. The error a vertical band (throughput at a given
    interactivity, :func:`jalapeno.pareto.frontier` with ``band=``) is measured by."""
    fi = pareto_envelope(np.asarray(pred_x, dtype=float), np.asarray(pred_y, dtype=float))
    px, py = np.log(np.asarray(pred_x, dtype=float)[fi]), np.log(np.asarray(pred_y, dtype=float)[fi])
    order = np.argsort(px)
    q = np.log(np.asarray(meas_x, dtype=float))
    return np.interp(q, px[order], py[order]) - np.log(np.asarray(meas_y, dtype=float))


def frontier_distance(meas_x, meas_y, pred_x, pred_y) -> float:
    """Median of :func:`point_distances` over the measured points, as a fraction (``exp(d) - 1``)."""
    return float(np.expm1(np.median(point_distances(meas_x, meas_y, pred_x, pred_y))))


def predicted_frontier(series: pl.DataFrame, eff: Efficiency) -> pl.DataFrame:
    """What the prediction procedure says of one series (rows of :func:`configurations` of one
    ``series``): :func:`sweep` of its chip and model at its shape and precision, with its stack and its
    disaggregation, under ``eff``; no measured layout or concurrency is used. Its stack is the series'
    own and its concurrency cap is read from every measured run, the series' included;
    :func:`default_frontier` is the default path, with both read from a fold's training rows."""
    r = series.row(0, named=True)
    return sweep(r["chip"], r["model_key"], isl=int(r["isl"]), osl=int(r["osl"]), precision=r["precision"], eff=eff,
                 stack=r["stack"], disagg=bool(r["disagg"]))


#: The stack a chip is predicted with when no chip of its vendor is among a fold's training rows, so that
#: :func:`stack_for` has none to choose (MI355X left out: no other AMD chip was measured). Its per-layer
#: overhead is the median of the overheads of the stacks the training rows measured: the rule
#: :func:`fit` applies to a stack it never saw (:func:`default_stack`).
FALLBACK_STACK = "unmeasured-vendor"


def default_stack(chip: ChipSpec | str, eff: Efficiency, training: pl.DataFrame | None = None,
                  model: ModelSpec | str | None = None) -> tuple[str, Efficiency]:
    """The stack the default path predicts ``chip`` serving ``model`` with, and the constants it is read
    from: ``(stack_for(chip, eff, training, model), eff)``; for a chip none of whose vendor's chips is in ``training``
    (rows of :func:`configurations`, default every measured run), ``(FALLBACK_STACK, eff')`` with
    ``eff'`` = ``eff`` plus that stack at the median per-layer overhead (s) of the stacks in ``training``
    (:data:`FALLBACK_STACK`)."""
    if chip_stacks(chip, training):
        return stack_for(chip, eff, training, model), eff
    present = sorted(set((configurations() if training is None else training)["stack"]))
    tau = float(np.median([eff.tau(s, specs.chip(chip).generation) for s in present]))
    return FALLBACK_STACK, replace(eff, tau_s={**eff.tau_s, FALLBACK_STACK: tau})


def default_frontier(series: pl.DataFrame, eff: Efficiency, training: pl.DataFrame | None = None) -> pl.DataFrame:
    """The frontier a user's default call draws for one series (rows of :func:`configurations` of one
    ``series``): :func:`sweep` of its chip and model at its shape, precision and serving mode
    (aggregated or disaggregated), with the stack of :func:`default_stack` and the benchmark's
    concurrency cap, both read from ``training`` (default every measured run; a validation fold passes
    its training rows) and nothing from ``series`` but its workload. Unlike :func:`predicted_frontier`,
    the series' own stack is not used. Columns of :func:`sweep` plus ``stack``."""
    r = series.row(0, named=True)
    stack, eff = default_stack(r["chip"], eff, training, r["model_key"])
    return sweep(r["chip"], r["model_key"], isl=int(r["isl"]), osl=int(r["osl"]), precision=r["precision"], eff=eff,
                 stack=stack, disagg=bool(r["disagg"]), training=training).with_columns(stack=pl.lit(stack))


def series_errors(pred: pl.DataFrame, eff: Efficiency, front=None) -> pl.DataFrame:
    """Per series of ``pred`` (:func:`predict` under ``eff``): median and worst absolute TPOT and
    throughput errors at the measured layouts (fractions), the distance from the measured envelope to
    the envelope of the predictions at those layouts (``layout_frontier_distance``: the model's form,
    with the measured layouts' help), and the distance from the measured envelope to the predicted frontier (:func:`predicted_frontier`: the prediction procedure, no measured layout):
    its median over the envelope's points (``frontier_distance``, a fraction) and every point's
    (``point_distances``, log units). ``front``: the frontier each series is scored against, a function
    of the series' rows returning columns ``interactivity_tok_s_user`` and ``throughput_tok_s_chip``
    (default :func:`predicted_frontier` under ``eff``; :func:`default_frontier` scores the default path)."""
    rows = []
    for (series,), g in pred.group_by(["series"], maintain_order=True):
        e_tpot = (g["pred_tpot"] / g["mean_tpot"] - 1).abs()
        e_tput = (g["pred_tput"] / g["tput_per_gpu"] - 1).abs()
        mi = pareto_envelope(1 / g["mean_tpot"].to_numpy(), g["tput_per_gpu"].to_numpy())
        f = predicted_frontier(g, eff) if front is None else front(g)
        d = point_distances((1 / g["mean_tpot"].to_numpy())[mi], g["tput_per_gpu"].to_numpy()[mi],
                            f["interactivity_tok_s_user"].to_numpy(), f["throughput_tok_s_chip"].to_numpy())
        rows.append({"series": series, "points": g.height, "tpot_err_median": e_tpot.median(),
                     "tpot_err_worst": e_tpot.max(), "tput_err_median": e_tput.median(),
                     "tput_err_worst": e_tput.max(),
                     "layout_frontier_distance": frontier_distance(
                         (1 / g["mean_tpot"].to_numpy())[mi], g["tput_per_gpu"].to_numpy()[mi],
                         1 / g["pred_tpot"].to_numpy(), g["pred_tput"].to_numpy()),
                     "frontier_distance": float(np.expm1(np.median(d))),
                     "point_distances": d.tolist()})
    return pl.DataFrame(rows)


#: The columns :func:`with_fold_columns` adds to rows of :func:`configurations`.
FOLD_COLUMNS = ("shape", "model_chip", "generation")


def with_fold_columns(configs: pl.DataFrame) -> pl.DataFrame:
    """Rows of :func:`configurations` with the groups a leave-out scheme holds out (:data:`FOLD_COLUMNS`):
    ``shape`` (``"<ISL>/<OSL>"``), ``model_chip`` (``"<model> <chip>"``) and ``generation`` (the chip's
    :attr:`jalapeno.specs.ChipSpec.generation`, ``chips.csv``)."""
    generation = {c: specs.chip(c).generation for c in configs["chip"].unique()}
    return configs.with_columns(shape=pl.format("{}/{}", pl.col("isl"), pl.col("osl")),
                                model_chip=pl.format("{} {}", pl.col("model_key"), pl.col("chip")),
                                generation=pl.col("chip").replace_strict(generation, return_dtype=pl.Utf8))


def fold_key(stage_name: str, rest: pl.DataFrame, held: pl.DataFrame, start: Efficiency | None = None,
             *parts: object) -> str:
    """The key of a leave-out fold of stage ``stage_name`` (:func:`jalapeno.derived.key`): its training
    rows ``rest``, its held-out rows ``held``, the fit's start (default :data:`START`), priors, bounds,
    prior centre and width and tolerances, then ``parts`` (what else the stage's fold depends on)."""
    return derived.key(stage_name, rest, held, start or START, PRIORS, BOUNDS, _TAU_BOUNDS, PRIOR_CENTRE, PRIOR_WIDTH,
                       TOLERANCES, *parts)


# ---- the one statistic of a validation, and its band's coverage -----------------------------------------

@dataclass(frozen=True)
class FrontierError:
    """The error of a validation scheme (:func:`frontier_error`): ``median`` and ``p90`` of the held-out
    series' frontier distances (fractions: 0.25 is 25 %) and ``n_series``, the number of series."""

    median: float
    p90: float
    n_series: int


def frontier_error(errors) -> FrontierError:
    """The one statistic every validation scheme reports: per series its frontier distance (the median,
    over the points of its measured envelope, of each point's shortest log-space distance to the
    predicted frontier, :func:`point_distances`, as the fraction ``exp(d) - 1``; column
    ``frontier_distance`` of :func:`series_errors`), then the median and the 90th percentile over the
    series, with the number of series. ``errors``: a table with column ``frontier_distance`` (one row a
    series: :func:`series_errors`, :func:`jalapeno.schemes.scheme_errors`) or the
    distances themselves (fractions, one a series). The quantiles are taken of ``ln(1 + distance)``
    (numpy's linear interpolation between order statistics) and returned as fractions;
    :func:`jalapeno.uncertainty.error_from_distances` reports this statistic. Every series weighs the same, however many points
    it has (pooling the points would let a long sweep outvote a short one).
    ValueError for no series or a distance that is negative or not finite."""
    values = errors["frontier_distance"] if isinstance(errors, pl.DataFrame) else errors
    d = np.log1p(np.asarray(values, dtype=float))
    if d.size == 0 or not np.all(np.isfinite(d)) or np.any(d < 0):
        raise ValueError(f"frontier_error: the series' frontier distances must be finite and >= 0, got {values!r}")
    return FrontierError(float(np.expm1(np.median(d))), float(np.expm1(np.quantile(d, 0.9))), int(d.size))


#: The nominal probability of a band (:func:`band_half_width`): the central 80 %.
BAND_LEVEL = 0.8
#: The confidence of the binomial interval on a band's coverage (:func:`coverage`).
COVERAGE_CONFIDENCE = 0.9


def band_scores(errors) -> list[np.ndarray]:
    """The scores a band is chosen by and tested on, one array per held-out series (log units, >= 0):
    ``|vertical_errors|`` of the series' scored points whose interactivity the predicted frontier reaches
    (``point_interactivity <= predicted_top``): a band is drawn in throughput at each interactivity of the
    frontier (:func:`jalapeno.pareto.frontier` with ``band=``), so a point is inside it when its throughput
    lies within the band's factor of the frontier's at its interactivity; a point beyond the frontier's
    fastest point meets no drawn band and is counted apart (:attr:`Coverage.unreached`). ``errors``: a
    table of series with columns ``vertical_errors``, ``point_interactivity``, ``predicted_top``
    (:func:`jalapeno.schemes.scheme_errors`), or frontier distances (fractions, one a series), each read
    as one point at ``ln(1 + distance)``. A series with no reached point has no array."""
    if not isinstance(errors, pl.DataFrame):
        return [np.array([v]) for v in np.log1p(np.asarray(errors, dtype=float))]
    out = []
    for v, x, top in errors.select("vertical_errors", "point_interactivity", "predicted_top").iter_rows():
        reached = np.asarray(x, dtype=float) <= top * (1 + 1e-9)
        if reached.any():
            out.append(np.abs(np.asarray(v, dtype=float)[reached]))
    return out


def _unreached(errors) -> int:
    """The scored points of ``errors`` (as :func:`band_scores` reads them) beyond their frontier's reach."""
    if not isinstance(errors, pl.DataFrame):
        return 0
    return sum(int(np.count_nonzero(np.asarray(x, dtype=float) > top * (1 + 1e-9)))
               for x, top in errors.select("point_interactivity", "predicted_top").iter_rows())


def band_half_width(errors, level: float = BAND_LEVEL) -> float:
    """Half-width ``w`` (natural log units) of the nominal ``level`` band a prediction carries: the true
    throughput at an interactivity is claimed within ``[T exp(-w), T exp(w)]`` of the predicted ``T``.

    Split-conformal (Vovk, Gammerman & Shafer 2005; Lei, G'Sell, Rinaldo, Tibshirani & Wasserman 2018,
    JASA 113:1094, the ``ceil((n + 1) level)``-th smallest score), with each held-out *series* a unit,
    weighted equally however many points it has (as :func:`frontier_error` weighs them; the pooled
    within-group distributions of Dunn, Wasserman & Ramdas, JASA 2023, two-layer hierarchical models): of the ``n`` series of
    ``errors`` (:func:`band_scores`), series ``i`` with ``m_i`` scores puts ``1 / (m_i (n + 1))`` on each,
    a new series ``1 / (n + 1)`` at infinity, and ``w`` is the smallest score whose cumulative weight
    reaches ``level``: the weighted empirical ``level (n + 1) / n`` quantile (``numpy.quantile`` with weights, ``inverted_cdf``), infinite when that exceeds
    1 (fewer than ``level / (1 - level)`` = 4 series at 80 %). No distributional shape is assumed (the
    half-normal reading of the median and p90 that this replaces understated the tails: 55-71 % coverage
    where 80 % was claimed). The scores of the series that the band will be tested on must not be in
    ``errors`` (:func:`coverage` leaves each fold out). ValueError for a level outside (0, 1) or no
    series with a scored point."""
    if not 0 < level < 1:
        raise ValueError(f"a band's level must lie strictly between 0 and 1, got {level!r}")
    scores = band_scores(errors)
    if not scores:
        raise ValueError("band_half_width: no held-out series with a point within its predicted frontier's reach")
    n = len(scores)
    q = level * (n + 1) / n  # the finite scores carry n / (n + 1) of the weight, the new series the rest
    if q > 1:
        return math.inf
    weights = np.concatenate([np.full(v.size, 1 / v.size) for v in scores])
    return float(np.quantile(np.concatenate(scores), q, weights=weights, method="inverted_cdf"))


@dataclass(frozen=True)
class Coverage:
    """How many held-out points a scheme's nominal band holds (:func:`coverage`): ``share`` =
    ``inside / points`` of the points within their predicted frontier's reach, over ``series`` series in
    ``folds`` folds, with the ``confidence`` binomial interval ``low``-``high`` of the share, at the
    band's nominal ``level``; ``unreached``: the scored points beyond the predicted frontier's fastest
    point, which no drawn band meets (not in ``points``)."""

    share: float
    inside: int
    points: int
    series: int
    folds: int
    low: float
    high: float
    level: float = BAND_LEVEL
    confidence: float = COVERAGE_CONFIDENCE
    unreached: int = 0


def coverage(errors: pl.DataFrame, level: float = BAND_LEVEL, confidence: float = COVERAGE_CONFIDENCE) -> Coverage:
    """The share of a scheme's held-out points inside its nominal ``level`` band, the band's width chosen
    by a nested leave-one-fold-out so that no point tests a width it helped choose: for each fold, the
    half-width is :func:`band_half_width` of the series of the *other* folds of the same scheme, and that
    fold's points (:func:`band_scores`: vertical, within the frontier's reach) count as inside when their
    score is at most it. ``errors``: one row a held-out series with columns ``fold``, ``vertical_errors``,
    ``point_interactivity`` and ``predicted_top``, as :func:`jalapeno.schemes.scheme_errors` returns. The
    interval is the exact (Clopper-Pearson) binomial one,
    ``scipy.stats.binomtest(inside, points).proportion_ci(confidence)``; it treats the points as
    independent, which the points of one series are not, so it is narrower than the truth. ValueError for
    a table of fewer than two folds (no width can be chosen without the fold it tests)."""
    from scipy.stats import binomtest  # deferred: scipy.stats is slow to import and only a coverage needs it

    folds = errors["fold"].unique(maintain_order=True).to_list()
    if len(folds) < 2:
        raise ValueError(f"coverage needs at least two folds to choose each fold's band without it, got {folds}")
    inside = points = 0
    for fold in folds:
        width = band_half_width(errors.filter(pl.col("fold") != fold), level)
        d = np.concatenate(band_scores(errors.filter(pl.col("fold") == fold)) or [np.empty(0)])
        inside += int(np.count_nonzero(d <= width))
        points += int(d.size)
    ci = binomtest(inside, points).proportion_ci(confidence_level=confidence)
    return Coverage(inside / points, inside, points, errors.height, len(folds), float(ci.low), float(ci.high), level,
                    confidence, _unreached(errors))


#: The chip whose frontier takes the end-point-anchored band (:func:`band_scheme`): the subject chip,
#: known by a few published end points.
ANCHORED_CHIP = "jalapeno"


def band_scheme(chip: ChipSpec | str, model: ModelSpec | str, *, isl: int, osl: int,
                training: pl.DataFrame | None = None) -> str:
    """The validation scheme whose error a frontier of ``chip`` serving ``model`` at ``isl``/``osl``
    carries (a key of :data:`jalapeno.schemes.SCHEMES`), by what the benchmark measured (every measured
    run without speculative decoding, :func:`configurations`; ``training``: the rows of a calibration
    fitted on others, as :func:`jalapeno.measurements.score` refits without a reader's repeated runs):

    - ``anchored`` (c) for Jalapeño (:data:`ANCHORED_CHIP`), known by its published end points;
    - ``generation`` (a) for a chip no benchmark ran (GB300, whose layouts a transferred baseline borrows
      from GB200, Vera Rubin, the TPUs, MI300X ...): a new chip with software fitted on other chips;
    - ``model-chip`` (b) for a measured chip serving a model it was not measured with;
    - ``shape`` (b) for a measured chip and model at any shape, measured or not: at an unmeasured shape
      the scheme's own case; at a measured one the calibration has seen the points, and the error of the
      nearest held-out case (the same chip and model at the other shape) stands in for the in-sample
      error, which would understate a prediction's error."""
    c, m = specs.chip(chip).chip, specs.model(model).model
    if c == ANCHORED_CHIP:
        return "anchored"
    pairs = _measured_pairs() if training is None else frozenset(training.select("model_key", "chip").unique().iter_rows())
    if c not in {p[1] for p in pairs}:
        return "generation"
    return "shape" if (m, c) in pairs else "model-chip"


@functools.lru_cache(maxsize=None)
def _measured_pairs() -> frozenset[tuple[str, str]]:
    pairs = _from_measured("model-chip-pairs", lambda: configurations().select("model_key", "chip").unique()
                           .sort("model_key", "chip"))
    return frozenset(pairs.iter_rows())


def scheme_half_width(scheme: str, level: float = BAND_LEVEL) -> float:
    """:func:`band_half_width` of every held-out series of one validation scheme (``generation``,
    ``model-chip``, ``shape``, ``anchored``; :data:`jalapeno.schemes.SCHEMES`), read from the committed
    table of stage ``schemes`` (``data/derived/schemes.jsonl``; a stale one is
    :class:`jalapeno.derived.StaleTableError`, naming ``jalapeno derive schemes``): the band a prediction
    in that scheme's situation carries. Log units. UnknownNameError for another scheme."""
    return _scheme_half_width(str(data.data_dir()), scheme, float(level))


@functools.lru_cache(maxsize=None)
def _scheme_half_width(folder: str, scheme: str, level: float) -> float:
    derived.check("schemes")
    table = derived.committed("schemes")
    if table is None:
        raise derived.StaleTableError(f"no committed table of stage schemes: run `{derived.stage('schemes').command}`")
    rows = table.filter((pl.col("kind") == "series") & (pl.col("scheme") == scheme))
    if rows.is_empty():
        raise UnknownNameError("validation scheme", scheme, table["scheme"].unique(maintain_order=True).to_list())
    return band_half_width(rows, level)


def summary(errors: pl.DataFrame) -> dict[str, float]:
    """Median and worst of each error column of :func:`series_errors`."""
    cols = ["tpot_err_median", "tput_err_median", "frontier_distance"]
    out = {}
    for c in cols:
        out[f"{c}:median"] = float(errors[c].median())
        out[f"{c}:worst"] = float(errors[c].max())
    return out


def long_points(pred: pl.DataFrame, series: list[str], reader_runs: list[str] = ()) -> pl.DataFrame:
    """Measured and predicted (interactivity, throughput) of the chosen series in long form, for a chart:
    ``series``, ``kind``, ``interactivity``, ``throughput``; with ``reader_runs`` (the run ids of a
    reader's rows, in a book built on them) also ``runs``: :data:`jalapeno.measured.READER_LABEL` on a
    measured point of theirs, :data:`jalapeno.measured.SHIPPED_LABEL` on another (null on a predicted one)."""
    p = pred.filter(pl.col("series").is_in(series))
    runs = ([pl.when(pl.col("run_id").is_in(list(reader_runs))).then(pl.lit(measured.READER_LABEL))
             .otherwise(pl.lit(measured.SHIPPED_LABEL)).alias("runs")] if reader_runs else [])
    return pl.concat([
        p.select("series", pl.lit("measured").alias("kind"), (1 / pl.col("mean_tpot")).alias("interactivity"),
                 pl.col("tput_per_gpu").alias("throughput"), *runs),
        p.select("series", pl.lit("predicted").alias("kind"), (1 / pl.col("pred_tpot")).alias("interactivity"),
                 pl.col("pred_tput").alias("throughput"), *([pl.lit(None, pl.Utf8).alias("runs")] if reader_runs else [])),
    ])


def parameter_parts(key: str) -> tuple[str, str, str]:
    """A stored constant's key as (constant, stack, generation), the last two empty where the key has
    none: ``tau_s:dynamo-trt@blackwell`` -> ``("tau_s", "dynamo-trt", "blackwell")``, ``eta_mem`` ->
    ``("eta_mem", "", "")`` (the keys of ``data/calibration.csv``)."""
    base, _, scope = key.partition(":")
    stack, _, generation = scope.partition("@")
    return base, stack, generation


#: What each stored constant of the serving model is, in the serving-model chapter's words and symbols.
CONSTANT_WORDS = {"eta_mem": "η_mem: share of peak HBM bandwidth reached", "eta_compute": "η_compute: share of peak "
                  "FLOP/s reached in decode", "eta_prefill": "η_prefill: share of peak FLOP/s reached in prefill",
                  "alpha_s": "α: fixed time of a decode step", "beta_s": "β: time per sequence per layer",
                  "mla_layer_factor": "MLA layer factor: an MLA layer's overhead over a GQA layer's",
                  "tau_s": "τ: per-layer overhead"}


def _scope(key: str) -> tuple[str, str, str]:
    """A stored constant's base and its stack's and generation's names (:func:`parameter_parts`,
    :func:`jalapeno.display.name`; empty where the key has none)."""
    base, stack, generation = parameter_parts(key)
    return base, display.name(stack) if stack else "", display.name(generation) if generation else ""


def constant_symbol(key: str) -> str:
    """A stored constant's key as its symbol (the part of :data:`CONSTANT_WORDS` before the colon) with its
    stack and generation: ``tau_s:dynamo-trt@blackwell`` -> ``τ (Dynamo + TensorRT-LLM on Blackwell)``."""
    base, stack, generation = _scope(key)
    where = " on ".join(x for x in (stack, generation) if x)
    return CONSTANT_WORDS[base].split(":", 1)[0] + (f" ({where})" if where else "")


def constant_words(key: str) -> str:
    """A stored constant (a key of ``data/calibration.csv``) in the reader's words: what it is
    (:data:`CONSTANT_WORDS`), and for an overhead ``tau_s:STACK@GENERATION`` its stack's and generation's
    names (:func:`jalapeno.display.name`; a stack's without a generation is the one for a generation it
    was not fitted on): ``tau_s:vllm@blackwell`` -> ``τ: per-layer overhead, vLLM on Blackwell``."""
    base, stack, generation = _scope(key)
    return CONSTANT_WORDS[base] + (f", {stack}" if stack else "") + (
        f" on {generation}" if generation else " on another generation" if stack else "")


def stored_table() -> pl.DataFrame:
    """The stored calibration (``data/calibration.csv``) without its long source column."""
    return data.calibration_table().select("parameter", "value", "unit")
