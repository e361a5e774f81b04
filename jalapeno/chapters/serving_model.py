"""The serving-model chapter: the calibrated constants, the in-sample fit to the InferenceMAX
measurements, and the leave-out validation (one chip, one model on one chip, one workload shape held out
at a time), scored with the prediction procedure itself (:func:`jalapeno.calibration.predicted_frontier`),
through :mod:`jalapeno.calibration`."""

from __future__ import annotations

import math

import polars as pl

from .. import calibration, charts, serving
from ..errors import UnknownNameError
from . import Chapter

#: The leave-out schemes the chapter offers (:data:`jalapeno.calibration.HOLDOUT_SCHEMES`).
HOLDOUT_GROUPS = tuple(calibration.HOLDOUT_SCHEMES)
#: How the schemes are named in the chapter's table and figure.
SCHEME_LABELS = {"chip": "leave one chip out", "model-chip": "leave one (model, chip) out",
                 "shape": "leave one shape out (fit 8k/1k, predict 1k/1k; and the reverse)",
                 "series": "leave one series out"}


def compute(*, holdout_by: list[str], shown_series: list[str], target_frontier_distance: float) -> Chapter:
    """The serving-model chapter.

    ``holdout_by``: the leave-out schemes (:data:`HOLDOUT_GROUPS`); ``shown_series``: the measured
    series drawn against the model (names as in ``calibration.configurations()["series"]``);
    ``target_frontier_distance``: the validation aim (a fraction, 0.10 = 10 %). Returns the quoted
    numbers (constants, in-sample and held-out errors), the tables ``constants``, ``fit_errors``,
    ``schemes``, ``holdout`` and the figures ``fit`` and ``schemes``. Raises UnknownNameError for an
    unknown scheme or series."""
    for by in holdout_by:
        if by not in HOLDOUT_GROUPS:
            raise UnknownNameError("hold-out scheme", by, list(HOLDOUT_GROUPS))
    configs = calibration.configurations()
    series = configs["series"].unique(maintain_order=True).to_list()
    for name in shown_series:
        if name not in series:
            raise UnknownNameError("series", name, series)
    eff = calibration.load()
    ch = Chapter()
    _constants(ch, configs, eff)
    pred = calibration.predict(configs, eff)
    fit_errors = calibration.series_errors(pred, eff)
    s_in = calibration.summary(fit_errors)
    ch.quote("in_frontier_median", 100 * s_in["frontier_distance:median"], "{:.0f}")
    ch.quote("in_tpot_median", 100 * s_in["tpot_err_median:median"], "{:.0f}")
    ch.quote("in_tput_median", 100 * s_in["tput_err_median:median"], "{:.0f}")
    ch.tables["fit_errors"] = fit_errors.drop("point_distances")
    ch.figure("fit", charts.predicted_vs_measured(calibration.long_points(pred, shown_series)), "serving-model-fit")
    held = pl.concat([calibration.holdout(configs, by=b) for b in holdout_by])
    for key, text in calibration.holdout_quotes(held, target_frontier_distance).items():
        ch.numbers[key] = text
    ch.quote("target_pct", 100 * target_frontier_distance, "{:.0f}")
    ch.quote("prior_factor", math.exp(calibration.PRIOR_WIDTH), "{:,.0f}")
    schemes = calibration.scheme_summary(held)
    ch.values["schemes"] = schemes
    ch.tables["schemes"] = schemes.select(
        pl.col("scheme").replace_strict(SCHEME_LABELS).alias("held out"), "folds", "series",
        pl.col("frontier_points").alias("measured frontier points"),
        (100 * pl.col("median")).alias("median distance (%)"), (100 * pl.col("p90")).alias("p90 distance (%)"))
    long = schemes.unpivot(["median", "p90"], index="scheme", variable_name="statistic", value_name="fraction")
    ch.figure("schemes", charts.validation_schemes(
        long.select(pl.col("scheme").replace_strict(SCHEME_LABELS), "statistic",
                    (100 * pl.col("fraction")).alias("distance_pct")), 100 * target_frontier_distance),
        "serving-model-validation")
    ch.tables["holdout"] = held.select("held_out", "series", "points", "tpot_err_median", "tput_err_median",
                                       "frontier_distance", "held_at_prior")
    return ch


def _constants(ch: Chapter, configs: pl.DataFrame, eff: serving.Efficiency) -> None:
    """The stored constants and what the prose says of them (stack overheads, their spread on one chip)."""
    ch.quote("n_points", configs.height, "{:,}")
    ch.quote("n_series", configs["series"].n_unique())
    ch.quote("eta_mem", eff.eta_mem, "{:.2f}")
    ch.quote("eta_compute", eff.eta_compute, "{:.3f}")
    ch.quote("eta_prefill", eff.eta_prefill, "{:.3f}")
    taus = list(eff.tau_s.values())
    ch.quote("tau_min_us", min(taus) * 1e6, "{:.0f}")
    ch.quote("tau_max_us", max(taus) * 1e6, "{:.0f}")
    ch.quote("tau_ratio", max(taus) / min(taus), "{:.1f}")
    stacks = configs.group_by("chip").agg(pl.col("stack").unique()).filter(pl.col("stack").list.len() > 1)
    spreads = sorted(((max(eff.tau(s) for s in row["stack"]) / min(eff.tau(s) for s in row["stack"]), row["chip"],
                       sorted(row["stack"])) for row in stacks.iter_rows(named=True)), reverse=True)
    ratio, chip, names = spreads[0]
    ch.quote("spread_chip", chip.upper())
    ch.quote("spread_stacks", ", ".join(names))
    ch.quote("spread_ratio", ratio, "{:.1f}")
    ch.quote("chunk_tokens", serving.PREFILL_CHUNK_TOKENS, "{:,}")
    ch.quote("alpha_us", eff.alpha_s * 1e6, "{:.1f}")
    ch.quote("alpha_floor_us", calibration.BOUNDS["alpha_s"][0] * 1e6, "{:.0f}")
    ch.quote("mla_factor", eff.mla_layer_factor, "{:.2f}")
    ch.quote("mla_lo", calibration.BOUNDS["mla_layer_factor"][0], "{:g}")
    ch.quote("mla_hi", calibration.BOUNDS["mla_layer_factor"][1], "{:g}")
    ch.tables["constants"] = calibration.stored_table()
