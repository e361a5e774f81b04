"""Calibrating the serving model on the measured InferenceMAX points, and validating it on held-out series.

The fit adjusts a few physical constants (:class:`~jalapeno.serving.Efficiency`: achieved fractions of
HBM bandwidth and of peak FLOP/s, the latency of one collective, a per-layer step overhead for each
serving stack and the extra cost of an MLA layer) to minimise the squared log errors of TPOT and of throughput per
chip over every measured point without speculative decoding (``scipy.optimize.least_squares``). The
stacks (vLLM, SGLang, TensorRT-LLM, Dynamo, ATOM) get their own overheads, so a chip's efficiency is not
asked to absorb its software. The fitted values are written to ``data/calibration.csv``.

A *series* is one (model, hardware key, stack, precision, ISL/OSL) sweep. Leave-one-out validation
refits without a group of series (one series, one chip, one model or one workload shape) and predicts it,
with the same procedure as the full fit: the same neutral start (:data:`START`, never the stored
calibration, which has seen the held-out series) and the same rule for constants the training set does
not inform (:func:`unidentified`): such a constant is held at its prior (:data:`PRIORS`) instead of being
left to wherever the optimiser's floating-point path takes it.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl

from . import data, measured, serving, specs
from .metrics import pareto_envelope, stable_format
from .serving import Efficiency

STACKS = ("vllm", "sglang", "trt", "dynamo-trt", "dynamo-sglang", "atom")
#: The fitted scalar constants of :class:`Efficiency` with their bounds and units; then one overhead per stack.
#: Two bounds are priors, not conveniences: a collective on a scale-up network costs at least about 1 µs
#: (one NVSwitch round trip), and an MLA + 256-expert layer (DeepSeek-R1) is taken to cost one to three
#: times a GQA + 128-expert layer (gpt-oss-120b) in per-layer overhead: only the one stack that served
#: both models on one chip (Dynamo-TRT on GB200) separates that factor from the stacks' own overheads.
BOUNDS = {"eta_mem": (0.2, 1.0), "eta_compute": (0.05, 1.0), "eta_prefill": (0.02, 1.0), "alpha_s": (1e-6, 1e-4),
           "beta_s": (1e-9, 1e-5), "mla_layer_factor": (1.0, 3.0)}
_UNITS = {"eta_mem": "fraction", "eta_compute": "fraction", "eta_prefill": "fraction", "alpha_s": "s",
          "beta_s": "s per layer per sequence", "mla_layer_factor": "ratio"}
_PARAMS = tuple(BOUNDS) + tuple(f"tau_s:{s}" for s in STACKS)
_TAU_BOUNDS = (1e-7, 2e-4)
#: Where every fit starts (log space): the serving model's generic defaults (:class:`Efficiency`) with a
#: 10 µs per-layer overhead for every stack. Fixed and neutral, so a refit depends on its data alone.
START = Efficiency(tau_s={s: 10e-6 for s in STACKS})
#: Values at which a fit holds a constant that no series of its training set informs (see
#: :func:`unidentified`). ``mla_layer_factor`` = 1: the neutral prior that an MLA layer costs what a GQA
#: layer does (the lower end of its bounds); the MLA extra cost is then not credited without data that
#: separate it from the stacks' own overheads.
PRIORS = {"mla_layer_factor": 1.0}
#: Stopping tolerances of the fit (relative change of the cost and of the log constants, and the scaled
#: gradient): tight enough that a fit ends at the minimum, not wherever a last-bit different path stalls.
_TOLERANCES = {"ftol": 1e-12, "xtol": 1e-12, "gtol": 1e-12}


def configurations(points: pl.DataFrame | None = None) -> pl.DataFrame:
    """Measured points (no speculative decoding) mapped onto the serving model's worker description:
    ``series``, ``model_key``, ``chip``, ``stack``, ``n_chips``, ``dp``, ``ep``, ``worker_conc``,
    ``disagg``, ``prefill_chips``, ``prefill_tp`` next to the measured ``mean_tpot``, ``tput_per_gpu``,
    ``mean_ttft``."""
    pts = measured.points() if points is None else points
    pts = pts.filter(pl.col("spec_decoding") == "none")
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
        "model_key", pl.col("hw").str.replace("-trt", "").alias("chip"), "hw", pl.col("framework").alias("stack"),
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


def predict(configs: pl.DataFrame, eff: Efficiency) -> pl.DataFrame:
    """Model predictions for each row of :func:`configurations`: adds ``pred_tpot``, ``pred_tput``,
    ``pred_ttft``, ``pred_e2e``. Evaluated in one array call per (model, chip, stack, precision, shape)."""
    out = []
    keys = ["model_key", "chip", "stack", "precision", "isl", "osl", "disagg", "ep"]
    for key, group in configs.group_by(keys, maintain_order=True):
        m, c, stack, prec, isl, osl, disagg, ep = key
        r = serving.evaluate(specs.model(m), specs.chip(c), n_chips=group["n_chips"].to_numpy(),
                             concurrency=group["worker_conc"].to_numpy(), dp=group["dp"].to_numpy(), ep=ep,
                             isl=isl, osl=osl, precision=prec, stack=stack, eff=eff, disagg=disagg,
                             prefill_chips=np.maximum(group["prefill_chips"].to_numpy(), 1),
                             prefill_tp=group["prefill_tp"].to_numpy())
        out.append(group.with_columns(pred_tpot=r.tpot_s, pred_tput=r.throughput_tok_s_chip,
                                      pred_ttft=r.ttft_s, pred_e2e=r.e2e_s))
    return pl.concat(out).sort("series", "n_chips", "worker_conc")


def _vector(eff: Efficiency) -> np.ndarray:
    vals = [getattr(eff, p) for p in BOUNDS] + [eff.tau(s) for s in STACKS]
    return np.log(np.asarray(vals))


def _efficiency(x: np.ndarray) -> Efficiency:
    v = np.exp(x)
    n = len(BOUNDS)
    return Efficiency(**{p: float(val) for p, val in zip(BOUNDS, v[:n])},
                      tau_s={s: float(t) for s, t in zip(STACKS, v[n:])})


def residuals(configs: pl.DataFrame, eff: Efficiency) -> np.ndarray:
    """Log errors of TPOT and of throughput per chip, stacked (the fit's objective)."""
    p = predict(configs, eff)
    return np.concatenate([np.log(p["pred_tpot"] / p["mean_tpot"]).to_numpy(),
                           np.log(p["pred_tput"] / p["tput_per_gpu"]).to_numpy()])


def unidentified(configs: pl.DataFrame) -> tuple[str, ...]:
    """The constants of :data:`BOUNDS` (and ``tau_s:<stack>``) that no series of ``configs`` (rows of
    :func:`configurations`) informs, so a fit on them would leave them to the optimiser's path:

    - ``mla_layer_factor`` unless one stack served both an MLA model and a GQA model: the factor multiplies
      the stack's per-layer overhead, so only such a stack tells it apart from that overhead (in the
      InferenceMAX data only Dynamo-TRT on GB200 does; without it, the per-sequence term alone leaves the
      factor at a bound);
    - ``tau_s:<stack>`` for every stack with no point in ``configs``.
    """
    mla = [m for m in configs["model_key"].unique() if specs.model(m).attention == "mla"]
    kinds = configs.group_by("stack").agg(pl.col("model_key").is_in(mla).any().alias("mla"),
                                          (~pl.col("model_key").is_in(mla)).any().alias("other"))
    out = [] if kinds.filter(pl.col("mla") & pl.col("other")).height else ["mla_layer_factor"]
    present = set(configs["stack"].unique())
    out += [f"tau_s:{s}" for s in STACKS if s not in present]
    return tuple(out)


def fit(configs: pl.DataFrame | None = None, start: Efficiency | None = None, max_nfev: int = 400) -> Efficiency:
    """Fit :class:`Efficiency` to measured configurations (default: all), from ``start`` (default
    :data:`START`). A constant the data do not inform (:func:`unidentified`) is not fitted: the MLA factor
    is held at :data:`PRIORS`, and a stack with no point gets the median overhead of the fitted stacks.
    Deterministic (trust-region least squares in log space, tolerances :data:`_TOLERANCES`)."""
    from scipy.optimize import least_squares

    configs = configurations() if configs is None else configs
    held = set(unidentified(configs))
    x0 = _vector(replace(start or START, **{p: v for p, v in PRIORS.items() if p in held}))
    lo = np.log([b[0] for b in BOUNDS.values()] + [_TAU_BOUNDS[0]] * len(STACKS))
    hi = np.log([b[1] for b in BOUNDS.values()] + [_TAU_BOUNDS[1]] * len(STACKS))
    free = np.array([p not in held for p in _PARAMS])

    def fun(z):
        x = x0.copy()
        x[free] = z
        return residuals(configs, _efficiency(x))

    sol = least_squares(fun, np.clip(x0[free], lo[free] + 1e-9, hi[free] - 1e-9), bounds=(lo[free], hi[free]),
                        x_scale=1.0, max_nfev=max_nfev, **_TOLERANCES)
    x = x0.copy()
    x[free] = sol.x
    eff = _efficiency(x)
    absent = [s for s in STACKS if f"tau_s:{s}" in held]
    if absent:  # a stack never seen gets the median of the fitted ones
        fitted = [eff.tau_s[s] for s in STACKS if f"tau_s:{s}" not in held]
        eff = replace(eff, tau_s={**eff.tau_s, **{s: float(np.median(fitted)) for s in absent}})
    return eff


# ---- the stored calibration --------------------------------------------------------------------------

CALIBRATION_FILE = "calibration.csv"


def save(eff: Efficiency, how: str, path: Path | None = None) -> Path:
    """Write the fitted constants to ``data/calibration.csv`` (parameter, value, unit, how obtained)
    through :func:`jalapeno.data.write_calibration`."""
    rows = [{"parameter": p, "value": f"{float(np.exp(v)):.6g}", "unit": _UNITS.get(p, "s per layer per step"),
             "source": how} for p, v in zip(_PARAMS, _vector(eff))]
    return data.write_calibration(rows, path)


def load() -> Efficiency:
    """The calibration stored in ``data/calibration.csv``."""
    values = data.calibration_values()
    missing = [p for p in _PARAMS if p not in values]
    if missing:
        raise data.DataError(f"{data.data_dir() / CALIBRATION_FILE}: missing parameters {missing}")
    return _efficiency(np.log([values[p] for p in _PARAMS]))


# ---- validation ----------------------------------------------------------------------------------------

def frontier_distance(meas_x, meas_y, pred_x, pred_y) -> float:
    """Median, over the measured frontier's points, of the shortest distance in log space (natural log
    of both axes) to the predicted frontier polyline, expressed as a fraction (exp(d) - 1)."""
    mx, my = np.log(meas_x), np.log(meas_y)
    fi = pareto_envelope(np.asarray(pred_x), np.asarray(pred_y))
    px, py = np.log(np.asarray(pred_x)[fi]), np.log(np.asarray(pred_y)[fi])
    if px.size == 1:
        d = np.hypot(mx - px[0], my - py[0])
    else:
        ax, ay, bx, by = px[:-1], py[:-1], px[1:], py[1:]
        vx, vy = bx - ax, by - ay
        t = np.clip(((mx[:, None] - ax) * vx + (my[:, None] - ay) * vy) / np.maximum(vx * vx + vy * vy, 1e-18), 0, 1)
        d = np.hypot(mx[:, None] - (ax + t * vx), my[:, None] - (ay + t * vy)).min(axis=1)
    return float(np.expm1(np.median(d)))


def series_errors(pred: pl.DataFrame) -> pl.DataFrame:
    """Per series: median and worst absolute TPOT and throughput errors (fractions), and the frontier
    distance between measured and predicted envelopes."""
    rows = []
    for (series,), g in pred.group_by(["series"], maintain_order=True):
        e_tpot = (g["pred_tpot"] / g["mean_tpot"] - 1).abs()
        e_tput = (g["pred_tput"] / g["tput_per_gpu"] - 1).abs()
        mi = pareto_envelope(1 / g["mean_tpot"].to_numpy(), g["tput_per_gpu"].to_numpy())
        dist = frontier_distance((1 / g["mean_tpot"].to_numpy())[mi], g["tput_per_gpu"].to_numpy()[mi],
                                 1 / g["pred_tpot"].to_numpy(), g["pred_tput"].to_numpy())
        rows.append({"series": series, "points": g.height, "tpot_err_median": e_tpot.median(),
                     "tpot_err_worst": e_tpot.max(), "tput_err_median": e_tput.median(),
                     "tput_err_worst": e_tput.max(), "frontier_distance": dist})
    return pl.DataFrame(rows)


def holdout(configs: pl.DataFrame | None = None, by: str = "series", start: Efficiency | None = None,
            groups: list[str] | None = None) -> pl.DataFrame:
    """Leave-one-group-out validation: for each value of ``by`` (``series``, ``chip``, ``model_key`` or
    ``shape``), refit without its rows with :func:`fit` (from ``start``, default :data:`START`: the
    stored calibration has seen the held-out rows) and predict them. Returns :func:`series_errors` of the
    held-out predictions with the ``held_out`` group named and ``held_at_prior``, the constants the
    training rows did not inform (:func:`unidentified`; a stack seen only in the held-out group gets the
    median overhead of the others, the MLA factor its prior). ``groups``: only these values of ``by``
    (default every one). Each fold's result is kept by :func:`jalapeno.data.cached_frame`, keyed by its
    training and held-out rows, the start, the priors, the bounds and the package's source, so a second
    run with the same inputs reads it instead of refitting."""
    configs = configurations() if configs is None else configs
    configs = configs.with_columns(shape=pl.format("{}/{}", pl.col("isl"), pl.col("osl")))
    frames = []
    for (value,), held in configs.group_by([by], maintain_order=True):
        if groups is not None and value not in groups:
            continue
        rest = configs.filter(pl.col(by) != value).drop("shape")
        key = data.inputs_digest("holdout", by, value, rest, held, start or START, PRIORS, BOUNDS)
        frames.append(data.cached_frame("holdout", key, lambda rest=rest, held=held, value=value: series_errors(
            predict(held.drop("shape"), fit(rest, start=start))).with_columns(
                held_out=pl.lit(f"{by}={value}"), held_at_prior=pl.lit(", ".join(unidentified(rest))))))
    return pl.concat(frames)


def summary(errors: pl.DataFrame) -> dict[str, float]:
    """Median and worst of each error column of :func:`series_errors` / :func:`holdout`."""
    cols = ["tpot_err_median", "tput_err_median", "frontier_distance"]
    out = {}
    for c in cols:
        out[f"{c}:median"] = float(errors[c].median())
        out[f"{c}:worst"] = float(errors[c].max())
    return out


def holdout_quotes(held: pl.DataFrame, target_frontier_distance: float = 0.10) -> dict[str, str]:
    """The text the serving-model chapter quotes from :func:`holdout` results (series and/or chip folds),
    keyed by glue name: median TPOT and throughput errors and the median and worst frontier distance of
    the series folds (``ho_series_*``, percent, ``meets_target``: ``meets`` or ``misses`` the target),
    median and worst frontier distance of the chip folds (``ho_chip_*``, and the worst one's series), the three series with the
    largest frontier distance (``worst_series``) and the folds that held a constant at its prior
    (``prior_folds``, with ``mla_prior``). Percentages through :func:`jalapeno.metrics.stable_format`."""
    by_series = held.filter(pl.col("held_out").str.starts_with("series="))
    by_chip = held.filter(pl.col("held_out").str.starts_with("chip="))
    out = {}
    if by_series.height:
        s = summary(by_series)
        out |= {"ho_series_median": stable_format(100 * s["frontier_distance:median"]),
                "ho_series_worst": stable_format(100 * s["frontier_distance:worst"]),
                "ho_series_tpot": stable_format(100 * s["tpot_err_median:median"]),
                "ho_series_tput": stable_format(100 * s["tput_err_median:median"]),
                "meets_target": "meets" if s["frontier_distance:median"] <= target_frontier_distance else "misses"}
    if by_chip.height:
        s = summary(by_chip)
        out |= {"ho_chip_median": stable_format(100 * s["frontier_distance:median"]),
                "ho_chip_worst": stable_format(100 * s["frontier_distance:worst"]),
                "ho_chip_worst_series": by_chip.sort("frontier_distance", descending=True)["series"][0]}
    worst = (by_series if by_series.height else held).sort("frontier_distance", descending=True)
    out["worst_series"] = "; ".join(worst.head(3)["series"])
    folds = held.filter(pl.col("held_at_prior").str.contains("mla_layer_factor"))["held_out"].unique(maintain_order=True)
    out["prior_folds"] = ", ".join(f.split("=", 1)[1] for f in folds) or "none"
    out["mla_prior"] = f"{PRIORS['mla_layer_factor']:g}"
    return out


def log_ratio(a, b) -> float:
    """``|ln(a / b)|``: a symmetric relative error."""
    return abs(math.log(a / b))


def long_points(pred: pl.DataFrame, series: list[str]) -> pl.DataFrame:
    """Measured and predicted (interactivity, throughput) of the chosen series in long form, for a chart:
    ``series``, ``kind``, ``interactivity``, ``throughput``."""
    p = pred.filter(pl.col("series").is_in(series))
    return pl.concat([
        p.select("series", pl.lit("measured").alias("kind"), (1 / pl.col("mean_tpot")).alias("interactivity"),
                 pl.col("tput_per_gpu").alias("throughput")),
        p.select("series", pl.lit("predicted").alias("kind"), (1 / pl.col("pred_tpot")).alias("interactivity"),
                 pl.col("pred_tput").alias("throughput")),
    ])


def stored_table() -> pl.DataFrame:
    """The stored calibration (``data/calibration.csv``) without its long source column."""
    return data.calibration_table().select("parameter", "value", "unit")
