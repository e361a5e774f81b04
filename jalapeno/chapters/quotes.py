"""Numbers two or more chapters quote under the same keys, so that each is computed and worded once:
:func:`model_error` (the Pareto and verdict chapters)."""

from __future__ import annotations

import math

import polars as pl

from .. import calibration, display, schemes, uncertainty
from . import Chapter


def model_error(ch: Chapter, err: uncertainty.ModelError | None = None) -> None:
    """The model's error a predicted Jalapeño number carries (``err``, default
    :func:`jalapeno.uncertainty.model_error`: scheme (c) end-point anchored), quoted under the keys the
    Pareto and verdict chapters share: ``err_scheme`` (its label), ``err_median``, ``err_p90`` (the one
    statistic, %), ``err_n`` (series), ``err_band_pct`` (the band's nominal level, %), ``err_factor`` (the
    band's half-width as a factor either way, ``exp(band_half_width)``), ``err_sigma`` (the log-normal's
    standard deviation in the logarithm that has that band as its central interval, %), and the band's
    coverage (:func:`jalapeno.calibration.coverage` of the same scheme's held-out series, each fold's width
    chosen without it): ``err_cov`` (%), ``err_cov_lo``, ``err_cov_hi`` (its binomial interval, %),
    ``err_cov_conf`` (that interval's confidence, %), ``err_cov_points`` (points), ``err_cov_verdict`` (the
    coverage against :data:`jalapeno.schemes.COVERAGE_RANGE`, in words); and the same band on the matched
    ratios themselves, the quantity the ratio verdicts judge (row ``anchored-ratio`` of
    :func:`jalapeno.schemes.table`): ``err_ratio_inside`` of ``err_ratio_points`` pairs, ``err_ratio_cov``
    (%), ``err_ratio_cov_lo``, ``err_ratio_cov_hi`` (%) and ``err_ratio_verdict`` (in words)."""
    err = uncertainty.model_error() if err is None else err
    key = next(k for k, v in schemes.SCHEMES.items() if v.label == err.scheme)
    cov = calibration.coverage(schemes.scheme_errors(key), err.level)

    def scheme_c(name: str) -> str | None:  # the quantities these numbers show, when they are scheme (c)'s
        return f"scheme-c-{name}" if key == "anchored" else None
    ch.quote("err_scheme", err.scheme)
    ch.quote("err_median", display.formatted(100 * err.median_distance, "{:.0f}", noise=display.FIT_NOISE),
             quantity=scheme_c("heldout-median-pct"))
    ch.quote("err_p90", display.formatted(100 * err.p90_distance, "{:.0f}", noise=display.FIT_NOISE),
             quantity=scheme_c("heldout-p90-pct"))
    ch.quote("err_n", err.n_series)
    ch.quote("err_sigma", display.formatted(100 * err.sigma_log, "{:.0f}", noise=display.FIT_NOISE))
    ch.quote("err_band_pct", 100 * err.level, "{:.0f}")
    ch.quote("err_factor", math.exp(err.band_half_width), "{:.1f}", quantity=scheme_c("band-factor"))
    ch.quote("err_cov", 100 * cov.share, "{:.1f}", quantity=scheme_c("band-coverage-pct"))  # one decimal: 69.8 % is not the 70 % floor
    ch.quote("err_cov_lo", 100 * cov.low, "{:.1f}")
    ch.quote("err_cov_hi", 100 * cov.high, "{:.1f}")
    low, high = schemes.COVERAGE_RANGE
    status = schemes.coverage_status(cov.share)
    ch.quote("err_cov_verdict", f"{status} the {100 * low:.0f}-{100 * high:.0f} % an {100 * err.level:.0f} % band should hold"
             + {"below": ", so the band is slightly too narrow", "above": ", so the band is wider than it needs to be",
                "within": ""}[status])
    ch.quote("err_cov_conf", 100 * cov.confidence, "{:.0f}")
    ratio = schemes.table().filter(pl.col("scheme") == "anchored-ratio").row(0, named=True)
    ch.quote("err_ratio_inside", ratio["inside"])
    ch.quote("err_ratio_points", ratio["points"])
    ch.quote("err_ratio_cov", 100 * ratio["coverage"], "{:.1f}")
    ch.quote("err_ratio_cov_lo", 100 * ratio["coverage_low"], "{:.1f}")
    ch.quote("err_ratio_cov_hi", 100 * ratio["coverage_high"], "{:.1f}")
    ch.quote("err_ratio_verdict", f"{schemes.coverage_status(ratio['coverage'])} the {100 * low:.0f}-{100 * high:.0f} % range,"
             f" on too few pairs to tell the band's coverage of a ratio apart from its coverage of a frontier")
    ch.quote("err_cov_points", cov.points, "{:,}")
