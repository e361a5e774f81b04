"""Serving metrics and the benchmark's conventions (SemiAnalysis InferenceMAX / InferenceX).

Definitions (InferenceX ``utils/process_result.py``, vLLM's benchmark client):

- TPOT (time per output token, also TBT) excludes the first token: ``(E2E - TTFT) / (OSL - 1)``.
- interactivity = ``1 / TPOT`` in tokens/s/user.
- E2E = ``TTFT + TPOT x (OSL - 1)``.
- throughput per chip counts input + output tokens over every chip of the configuration.
- request lengths are drawn uniformly from the integers in ``[floor(0.8 L), L]``, so "8k/1k" averages
  7,372.5 input and 921.5 output tokens (InferenceX issue #356).

All times in seconds, throughputs in tokens/s, power in W. Functions accept scalars or numpy arrays.
"""

from __future__ import annotations

import math

import numpy as np

#: Lowest fraction of the nominal length the benchmark client draws.
LENGTH_LOW_FRACTION = 0.8


def mean_request_length(nominal_tokens: int, low_fraction: float = LENGTH_LOW_FRACTION) -> float:
    """Mean of a length drawn uniformly from the integers ``[floor(low_fraction x L), L]`` (tokens).

    8192 -> 7372.5; 1024 -> 921.5. Raises ValueError for a non-positive length.
    """
    if nominal_tokens <= 0:
        raise ValueError(f"nominal length must be positive, got {nominal_tokens!r}")
    return (math.floor(low_fraction * nominal_tokens) + nominal_tokens) / 2


def interactivity_tok_s_user(tpot_s):
    """Interactivity (tokens/s/user) = 1 / TPOT."""
    return 1.0 / np.asarray(tpot_s, dtype=float) if np.ndim(tpot_s) else 1.0 / tpot_s


def e2e_s(ttft_s, tpot_s, osl_tokens):
    """End-to-end request latency: ``TTFT + TPOT x (OSL - 1)`` (s)."""
    return ttft_s + tpot_s * (osl_tokens - 1)


def implied_ttft_s(e2e_s_, tpot_s, osl_tokens):
    """TTFT that an E2E and a TPOT imply for a mean output length: ``E2E - TPOT x (OSL - 1)`` (s)."""
    return e2e_s_ - tpot_s * (osl_tokens - 1)


def implied_osl_tokens(e2e_s_, ttft_s, tpot_s):
    """Output length implied by one measured point: ``(E2E - TTFT) / TPOT + 1`` (tokens)."""
    return (e2e_s_ - ttft_s) / tpot_s + 1


def littles_law_throughput_per_chip(concurrency, isl_tokens, osl_tokens, e2e_s_, chips):
    """Throughput per chip from Little's law: ``concurrency x (ISL + OSL) / E2E / chips`` (tokens/s)."""
    return concurrency * (isl_tokens + osl_tokens) / e2e_s_ / chips


def throughput_per_kw(throughput_tok_s_chip, power_w):
    """Tokens/s per kW of a chip drawing ``power_w`` watts (rated TDP, sustained or all-in: say which)."""
    return throughput_tok_s_chip / (np.asarray(power_w, dtype=float) / 1e3) if np.ndim(power_w) \
        else throughput_tok_s_chip / (power_w / 1e3)


def pareto_envelope(x, y) -> np.ndarray:
    """Indices of the upper-right Pareto envelope of points (``x``: interactivity, ``y``: throughput, or
    any two quantities where more is better): the points no other point beats on both, in increasing
    ``x``; along them ``y`` never rises as ``x`` rises. Of tied points the first is kept. Arrays of
    equal length; an empty input gives an empty index."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    order = np.lexsort((-y, -x))  # x descending, then y descending
    keep, best = [], -np.inf
    for i in order:
        if y[i] > best:
            keep.append(i)
            best = y[i]
    return np.asarray(keep[::-1], dtype=int)


def half_ulp(decimals: int) -> float:
    """Half a unit in the last printed place: a value printed with ``decimals`` decimals stands for
    ``[v - half_ulp, v + half_ulp)``."""
    return 0.5 * 10.0 ** (-decimals)


def rounds_to(computed: float, printed: float, decimals: int) -> bool:
    """True when ``computed`` printed with ``decimals`` decimals gives ``printed`` (no float fuzz)."""
    return abs(computed - printed) <= half_ulp(decimals) * (1 + 1e-9)
