"""Error bands on Jalapeño's modeled numbers: its unknowns drawn from their sourced ranges, and the
serving model's own error on a chip it has not seen, carried together by Monte Carlo.

Two sources of uncertainty enter every band:

- **Jalapeño's unknowns** (``data/jalapeno_unknowns.csv``: HBM bandwidth, scale-up bandwidth, scale-up
  domain), each drawn between its ``low`` and ``high`` by the ``distribution`` the file states with its
  basis (:data:`jalapeno.data.UNKNOWN_DISTRIBUTIONS`): ``log-uniform``, ``x = low (high / low) ** u``
  with ``u`` uniform on [0, 1); ``log-uniform-powers-of-two``, each power of two from ``low`` to ``high``
  equally likely (:func:`from_unit`).
- **The model's held-out error** (:func:`model_error`): the end-point-anchored validation scheme (c) of
  :mod:`jalapeno.schemes` (each measured chip left out, its constants fitted to its end points as
  Jalapeño's are), its calibrated band (:func:`jalapeno.calibration.band_half_width`, split-conformal)
  read as the central 80 % of a log-normal factor ``exp(sigma z)``, ``z`` standard normal, that
  multiplies every *predicted* Jalapeño quantity (not the published points its constants are fitted
  to, which it reproduces by construction). One ``z`` per draw for every quantity: the validation's
  error is a chip's.

The chain is the fit of :func:`jalapeno.subject.fit_jalapeno`, redone for each node of a grid of the
unknowns (:func:`nodes`: low / central / high of each continuous unknown, every power of two of the
domain; its fitted constants committed, :func:`node_constants`), so that
the unknowns move the fitted constants as they would in the book. A quantity is computed at every node
(:meth:`Ensemble.at_nodes`) and read between nodes by a response surface (:func:`surface`: its
logarithm linear in the logarithm of each continuous unknown between neighbouring nodes, the domain
exact). The Monte Carlo (:data:`N_SAMPLES` draws of a ``numpy.random.Generator`` seeded with
:data:`SEED`) then costs a few vector operations per quantity. A band is the median and the
:data:`BAND` quantiles of the draws (:class:`Band`), quoted through :func:`jalapeno.display.formatted` (with ``noise``).

:func:`sensitivity` ranks the inputs of each quantity by their total-order Sobol index (SALib 1.6.0:
Saltelli's sampling and Jansen's estimators, on the same response surface, of the logarithm of the
quantity); :func:`judge` says whether a published number agrees with a band or disagrees beyond it, the
verdict the Pareto chapter gives (and the claims registry can call).
"""

from __future__ import annotations

import functools
import inspect
import math
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np
import polars as pl

from . import calibration, caveats, data, derived, display, pareto, schemes, subject
from .errors import UnknownNameError

#: Draws of the Monte Carlo: the 10 % and 90 % quantiles of a quantity then carry a Monte Carlo error of
#: about 0.6 % of the band's width per 1 % of probability density (sqrt(p (1 - p) / N) = 0.002 in
#: probability), far below the rounding of any quoted band.
N_SAMPLES = 20_000

#: Seed of the Monte Carlo and of the Sobol sampling (a fixed seed: the same book gives the same bands).
SEED = 20260826

#: The quantiles of a band: 10 % and 90 % (the central 80 % of the draws).
BAND = (0.10, 0.90)

#: Base samples of the Sobol analysis (a power of two; SALib evaluates N x (inputs + 2) points).
SOBOL_BASE = 4096

#: The inputs of a band: the three unknowns (rows of ``jalapeno_unknowns.csv``) and the model's error.
UNKNOWNS = tuple(subject.UNKNOWN_FIELDS)
MODEL_ERROR_INPUT = "model_error"
INPUTS = UNKNOWNS + (MODEL_ERROR_INPUT,)

#: The validation scheme whose error a predicted Jalapeño quantity carries (:func:`model_error`): (c)
#: end-point anchored, the situation of a chip known by a few published end points.
MODEL_ERROR_SCHEME = "anchored"
_DEFAULT_LABEL = schemes.SCHEMES[MODEL_ERROR_SCHEME].label

#: The two verdicts of :func:`judge` (the claims issue owns the registry's status names).
VERDICTS = ("agrees", "disagrees")


# ---- the model's own error ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelError:
    """The serving model's held-out error as a log-normal factor ``exp(sigma_log z)``, ``z`` standard
    normal, whose central ``level`` interval is the scheme's calibrated band: ``sigma_log`` =
    ``band_half_width / Phi^-1((1 + level) / 2)`` (natural log units). ``band_half_width``:
    :func:`jalapeno.calibration.band_half_width` of the held-out series (log units); ``median_distance``,
    ``p90_distance``, ``n_series``: the one statistic, :func:`jalapeno.calibration.frontier_error`
    (fractions); ``scheme``: the validation scheme's label (:data:`jalapeno.schemes.SCHEMES`)."""

    sigma_log: float
    median_distance: float
    p90_distance: float
    n_series: int
    band_half_width: float
    level: float = calibration.BAND_LEVEL
    scheme: str = _DEFAULT_LABEL


def error_from_distances(errors, scheme: str = _DEFAULT_LABEL,
                         level: float = calibration.BAND_LEVEL) -> ModelError:
    """:class:`ModelError` of held-out series: ``errors`` as :func:`jalapeno.calibration.frontier_error`
    and :func:`jalapeno.calibration.band_half_width` take them (a table of series,
    :func:`jalapeno.schemes.scheme_errors`, or frontier distances, fractions, one a series, each then one
    point at ``ln(1 + distance)``); the statistic from the first, the band from the second, and
    ``sigma_log`` so that ``exp(sigma_log z)`` has that band as its central ``level`` interval
    (``scipy.stats.norm.ppf``). ValueError for no series or a negative or non-finite distance, or a band
    that no finite width meets (fewer than four series at 80 %)."""
    from scipy.stats import norm  # deferred: scipy.stats is slow to import

    stat = calibration.frontier_error(errors)
    width = calibration.band_half_width(errors, level)
    if not math.isfinite(width):
        raise ValueError(f"model error: {stat.n_series} series cannot set a finite {level:.0%} band")
    return ModelError(float(width / norm.ppf((1 + level) / 2)), stat.median, stat.p90, stat.n_series, width, level,
                      scheme)


def model_error(scheme: str = MODEL_ERROR_SCHEME) -> ModelError:
    """The error a predicted Jalapeño quantity carries: :func:`error_from_distances` of every held-out
    series of validation scheme ``scheme`` (default :data:`MODEL_ERROR_SCHEME`, (c) end-point anchored:
    Jalapeño is known by its published end points, :func:`jalapeno.calibration.band_scheme`), read from
    the committed stage ``schemes`` (:func:`jalapeno.schemes.scheme_errors`). UnknownNameError for
    another scheme."""
    return _model_error(scheme)


@functools.lru_cache(maxsize=None)
def _model_error(scheme: str) -> ModelError:
    errors = schemes.scheme_errors(scheme)
    return error_from_distances(errors, schemes.SCHEMES[scheme].label)


# ---- the unknowns' distributions ------------------------------------------------------------------------

def levels(parameter: str) -> np.ndarray:
    """The grid nodes of one unknown, in SI: low, central, high of a ``log-uniform`` unknown; every power
    of two from low to high of a ``log-uniform-powers-of-two`` one. UnknownNameError for another
    parameter."""
    row = _row(parameter)
    si = data.jalapeno_unknown(parameter, "low") / row["low"]
    if row["distribution"] == "log-uniform":
        return np.array([row["low"], row["central"], row["high"]]) * si
    k_lo, k_hi = math.ceil(math.log2(row["low"]) - 1e-9), math.floor(math.log2(row["high"]) + 1e-9)
    return 2.0 ** np.arange(k_lo, k_hi + 1) * si


def _row(parameter: str) -> dict:
    table = data.jalapeno_unknowns()
    rows = table.filter(pl.col("parameter") == parameter)
    if rows.is_empty():
        raise UnknownNameError("Jalapeño unknown", parameter, table["parameter"].to_list())
    return rows.row(0, named=True)


def from_unit(u: np.ndarray) -> dict[str, np.ndarray]:
    """The inputs for points ``u`` of the unit hypercube (shape ``(n, len(INPUTS))``, columns in the order
    of :data:`INPUTS`): each unknown by the inverse of its distribution (SI), and the model error's
    standard normal ``z = Phi^-1(u)`` (``u`` clipped to [1e-12, 1 - 1e-12])."""
    from scipy.special import ndtri  # deferred: scipy is slow to import

    u = np.atleast_2d(np.asarray(u, dtype=float))
    if u.shape[1] != len(INPUTS):
        raise ValueError(f"from_unit: {len(INPUTS)} columns ({', '.join(INPUTS)}) expected, got {u.shape[1]}")
    out = {}
    for j, p in enumerate(UNKNOWNS):
        row, lv = _row(p), levels(p)
        if row["distribution"] == "log-uniform":
            lo, hi = lv[0], lv[-1]
            out[p] = lo * (hi / lo) ** u[:, j]
        else:
            out[p] = lv[np.minimum((u[:, j] * lv.size).astype(int), lv.size - 1)]
    out[MODEL_ERROR_INPUT] = ndtri(np.clip(u[:, -1], 1e-12, 1 - 1e-12))
    return out


def sample(n: int = N_SAMPLES, seed: int = SEED) -> dict[str, np.ndarray]:
    """``n`` independent draws of :data:`INPUTS` (:func:`from_unit` of ``numpy.random.default_rng(seed)``'s
    uniform draws): one array of ``n`` per input."""
    return from_unit(np.random.default_rng(seed).random((n, len(INPUTS))))


# ---- the response surface -------------------------------------------------------------------------------

def nodes() -> pl.DataFrame:
    """The grid the fit is redone on: every combination of :func:`levels` of the unknowns (SI), one row
    each, in C order (the last unknown varies fastest)."""
    grid = np.meshgrid(*(levels(p) for p in UNKNOWNS), indexing="ij")
    return pl.DataFrame({p: g.ravel() for p, g in zip(UNKNOWNS, grid)})


def surface(values: np.ndarray, inputs: dict[str, np.ndarray]) -> np.ndarray:
    """A quantity between the nodes: ``values`` has shape ``(len(levels(p)) for p in UNKNOWNS) + extra``
    (positive; NaN where a node has none), ``inputs`` holds the unknowns of ``n`` points (SI). Returns
    shape ``(n,) + extra``: ``ln(value)`` interpolated linearly in ``ln(unknown)`` between the neighbouring
    nodes of each ``log-uniform`` unknown (held at the end nodes outside them), the node itself for a
    ``log-uniform-powers-of-two`` unknown (which takes only node values). NaN where a neighbour is NaN."""
    logv = np.log(np.asarray(values, dtype=float))
    points = []
    for p in UNKNOWNS:
        lv, x = levels(p), np.asarray(inputs[p], dtype=float)
        if _row(p)["distribution"] == "log-uniform":
            x = np.clip(x, lv[0], lv[-1])
        else:  # a node value (to 1e-9), taken exactly
            i = np.minimum(np.searchsorted(lv, x * (1 - 1e-12)), lv.size - 1)
            if np.any(np.abs(lv[i] / x - 1) > 1e-9):
                raise ValueError(f"surface: {p} takes only the values {lv.tolist()}")
            x = lv[i]
        points.append(np.log(x))
    from scipy.interpolate import RegularGridInterpolator  # deferred: it imports scipy.optimize, about 0.6 s

    grid = [np.log(levels(p)) for p in UNKNOWNS]
    missing = np.isnan(logv)
    interpolate = lambda v: RegularGridInterpolator(grid, v, method="linear")(np.stack(points, axis=-1))  # noqa: E731
    out = interpolate(np.where(missing, 0.0, logv))
    return np.where(interpolate(missing.astype(float)) > 0, np.nan, np.exp(out))  # a NaN corner of weight > 0


# ---- bands ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Band:
    """A quantity's median and its band: ``low`` and ``high`` are the :data:`BAND` quantiles of the draws
    (``coverage`` = the probability between them)."""

    median: float
    low: float
    high: float
    coverage: float = BAND[1] - BAND[0]

    def decimals(self) -> int:
        """The decimals a band is shown with, the same for its median and both ends: those that give its
        low end two significant digits, none from 10 up (``0.33–3.18``, ``1.5–14.3``, ``37–363``)."""
        return max(0, 1 - math.floor(math.log10(abs(self.low)))) if self.low and math.isfinite(self.low) else 0

    def _shown(self, v: float, fmt: str | None, unit: str) -> str:
        fmt = fmt or f"{{:,.{self.decimals()}f}}"
        return display.formatted(v, fmt, noise=display.FIT_NOISE) + unit

    def ends_text(self, fmt: str | None = None, unit: str = "") -> str:
        """``low–high`` as :meth:`text` shows them."""
        return f"{self._shown(self.low, fmt, unit)}–{self._shown(self.high, fmt, unit)}"

    def text(self, fmt: str | None = None, unit: str = "") -> str:
        """``median (low–high)`` with ``unit`` after each number, each through
        :func:`jalapeno.display.formatted` with a fit's noise (no digit a 1e-9 perturbation could flip), in
        ``fmt`` or (None) with :meth:`decimals`: one precision for every band the book shows."""
        return f"{self._shown(self.median, fmt, unit)} ({self.ends_text(fmt, unit)})"


def band(draws: np.ndarray, quantiles=BAND) -> Band:
    """The :class:`Band` of Monte Carlo draws (NaN draws left out; all-NaN gives NaNs)."""
    x = np.asarray(draws, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return Band(math.nan, math.nan, math.nan, quantiles[1] - quantiles[0])
    lo, med, hi = np.quantile(x, [quantiles[0], 0.5, quantiles[1]])
    return Band(float(med), float(lo), float(hi), quantiles[1] - quantiles[0])


def judge(published: float, band_or_range: Band | tuple[float, float]) -> str:
    """``"agrees"`` when ``published`` lies within the band (its ``low`` to ``high``, both included: the
    model's error on an unseen chip and Jalapeño's unknowns together), else ``"disagrees"`` (beyond
    them). ``band_or_range``: a :class:`Band` or ``(low, high)``. ValueError for a NaN or an inverted
    band or a non-finite published value."""
    lo, hi = (band_or_range.low, band_or_range.high) if isinstance(band_or_range, Band) else band_or_range
    if not (math.isfinite(published) and math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise ValueError(f"judge: a finite published value and a band low <= high are needed, got {published!r} "
                         f"against ({lo!r}, {hi!r})")
    return VERDICTS[0] if lo <= published <= hi else VERDICTS[1]


# ---- the fits at the nodes and the ensemble -------------------------------------------------------------

def node_constants(concurrency_cap: float | str | None = "benchmark", *,
                   e2e_reading: str = subject.DEFAULT_E2E_READING) -> pl.DataFrame:
    """Jalapeño's fitted constants (:func:`jalapeno.subject.fit_jalapeno` on the stored calibration, under
    ``e2e_reading``, :data:`jalapeno.subject.E2E_READINGS`) at every node of :func:`nodes`: the node's
    unknowns (SI) and ``tau_s``, ``eta_prefill``, ``request_latency_s`` (0 under ``separate``),
    ``mla_layer_factor``. Read in parts of :data:`NODES_PER_PART` nodes by :func:`jalapeno.derived.frames`
    (stage ``jalapeno-nodes``): the committed table ``data/derived/jalapeno-nodes.jsonl`` for the
    benchmark's concurrency range under both readings (:func:`derive_nodes`), else fitted live (a fraction
    of a second a node) and kept in the cache; a stale committed table is an error naming ``jalapeno
    derive jalapeno-nodes``. UnknownNameError for an unknown reading."""
    subject.check_e2e_reading(e2e_reading)
    return pl.concat(derived.frames("jalapeno-nodes", _node_parts(concurrency_cap, e2e_reading)))


def _node_parts(concurrency_cap: float | str | None,
                e2e_reading: str = subject.DEFAULT_E2E_READING) -> list[tuple[str, str, object]]:
    """The parts of :func:`node_constants`: ``(name, key, compute)``."""
    grid = nodes()

    def compute(part: pl.DataFrame) -> pl.DataFrame:
        base = calibration.load()
        rows = []
        for node in part.iter_rows(named=True):
            fit = subject.fit_jalapeno("central", base=base, concurrency_cap=concurrency_cap,
                                       overrides=_overrides(node), e2e_reading=e2e_reading)
            rows.append({**node, **fit.constants()})
        return pl.DataFrame(rows)

    parts = [grid.slice(i, NODES_PER_PART) for i in range(0, grid.height, NODES_PER_PART)]
    return [(f"concurrency_cap={concurrency_cap!r} e2e_reading={e2e_reading} nodes "
             f"{i * NODES_PER_PART}-{i * NODES_PER_PART + part.height - 1}",
             derived.key("jalapeno-nodes", part, repr(concurrency_cap), e2e_reading), functools.partial(compute, part))
            for i, part in enumerate(parts)]


def derive_nodes(root=None):
    """Fit Jalapeño at every node over the benchmark's concurrency range under each reading of its E2E
    (:data:`jalapeno.subject.E2E_READINGS`: the default book and the shipped scenario ``e2e-one-point``
    read it, so neither refits) and write the committed table of stage ``jalapeno-nodes``
    (:func:`jalapeno.derived.write`; ``root``: the data folder, default the one read). Returns its path.
    The command ``jalapeno derive jalapeno-nodes``."""
    items = [p for r in subject.E2E_READINGS for p in _node_parts("benchmark", r)]
    return derived.write("jalapeno-nodes", [(name, k, compute()) for name, k, compute in items], root)


#: Nodes fitted together in one part of :func:`node_constants` (one cached frame).
NODES_PER_PART = 6


def _overrides(node: dict) -> dict[str, float]:
    return {subject.UNKNOWN_FIELDS[p]: float(node[p]) for p in UNKNOWNS}


@functools.cache
def _frontier_defaults() -> dict[str, object]:
    """The keyword options of :func:`jalapeno.pareto.frontier` itself (``isl``, ``osl``, ``precision``,
    ``power_basis``, ``band``) with their defaults: what a node frontier's key fills in."""
    return {k: p.default for k, p in inspect.signature(pareto.frontier).parameters.items()
            if p.kind is p.KEYWORD_ONLY}


@dataclass(frozen=True)
class Ensemble:
    """Jalapeño's fits at every node of the unknowns (``fits``: an object array shaped like the grid), the
    Monte Carlo draws (``draws``: :func:`sample`), the model's error (``error``), the concurrency range
    and the reading of the published E2E (:data:`jalapeno.subject.E2E_READINGS`) the fits were made under."""

    fits: np.ndarray
    draws: dict
    error: ModelError
    concurrency_cap: float | str | None = "benchmark"
    e2e_reading: str = subject.DEFAULT_E2E_READING
    _frontiers: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def frontier(self, fit: subject.JalapenoFit, model: str, **options) -> pl.DataFrame:
        """Jalapeño's frontier of ``model`` under ``fit``, a fit of the ensemble's nodes
        (:func:`jalapeno.subject.jalapeno_frontier`, central scenario, ``options``, ``concurrency_cap`` the
        ensemble's own unless given), computed once per ensemble: a band asks for the frontier of every
        node once per quantity (the Pareto chapter asks for each of its node frontiers several times). A copy.
        ValueError for a fit that is not one of the nodes'."""
        if not any(f is fit for f in self.fits.flat):
            raise ValueError("the fit is not one of the ensemble's nodes")
        options.setdefault("concurrency_cap", self.concurrency_cap)
        # a default spelled out (power_basis="rated") or left out is one frontier, computed once
        key = (id(fit), model, *sorted({**_frontier_defaults(), **options}.items()))
        if key not in self._frontiers:
            self._frontiers[key] = subject.jalapeno_frontier(model, "central", fit=fit, **options)
        return self._frontiers[key].clone()

    def at_nodes(self, fn: Callable[[subject.JalapenoFit], object]) -> np.ndarray:
        """``fn(fit)`` (a number or an array of one shape) at every node: shape grid + the result's shape."""
        out = [np.asarray(fn(f), dtype=float) for f in self.fits.ravel()]
        return np.stack(out).reshape(self.fits.shape + out[0].shape)

    def draws_of(self, values: np.ndarray | Callable, predicted: bool = True) -> np.ndarray:
        """The Monte Carlo draws of a quantity: ``values`` at the nodes (an array, or ``fn`` for
        :meth:`at_nodes`) read between them by :func:`surface` at each draw of the unknowns, times the
        model's error factor ``exp(sigma z)`` when ``predicted`` (a prediction, not one of the published
        points Jalapeño's constants are fitted to). Shape ``(N,) + extra``."""
        v = self.at_nodes(values) if callable(values) else np.asarray(values, dtype=float)
        s = surface(v, self.draws)
        if predicted:
            f = np.exp(self.error.sigma_log * self.draws[MODEL_ERROR_INPUT])
            s = s * f.reshape((-1,) + (1,) * (s.ndim - 1))
        return s

    def band(self, values: np.ndarray | Callable, predicted: bool = True) -> Band:
        """:func:`band` of :meth:`draws_of`."""
        return band(self.draws_of(values, predicted))


def ensemble(concurrency_cap: float | str | None = "benchmark", n: int = N_SAMPLES, seed: int = SEED, *,
             e2e_reading: str = subject.DEFAULT_E2E_READING) -> Ensemble:
    """The :class:`Ensemble` of the book: the fits of :func:`node_constants` over ``concurrency_cap`` under
    ``e2e_reading``, ``n`` draws seeded with ``seed`` and :func:`model_error`. UnknownNameError for an
    unknown reading."""
    return _ensemble(concurrency_cap, n, seed, subject.check_e2e_reading(e2e_reading))


@functools.lru_cache(maxsize=4)
def _ensemble(concurrency_cap, n, seed, e2e_reading=subject.DEFAULT_E2E_READING) -> Ensemble:
    consts = node_constants(concurrency_cap, e2e_reading=e2e_reading)
    base = calibration.load()
    fits = []
    for row in consts.iter_rows(named=True):
        eff = replace(base, eta_prefill=row["eta_prefill"], request_latency_s=row["request_latency_s"],
                      mla_layer_factor=row["mla_layer_factor"], tau_s={**base.tau_s, "jalapeno": row["tau_s"]})
        fits.append(subject.JalapenoFit(eff, "central", subject.fit_claims(e2e_reading), concurrency_cap,
                                        tuple(sorted(_overrides(row).items())), e2e_reading))
    shape = tuple(levels(p).size for p in UNKNOWNS)
    arr = np.empty(len(fits), dtype=object)
    arr[:] = fits
    return Ensemble(arr.reshape(shape), sample(n, seed), model_error(), concurrency_cap, e2e_reading)


# ---- sensitivity ----------------------------------------------------------------------------------------

def sobol_indices(fn: Callable[[dict[str, np.ndarray]], np.ndarray], names=INPUTS, base: int = SOBOL_BASE,
                  seed: int = SEED) -> pl.DataFrame:
    """First-order and total Sobol indices of ``fn`` (a vectorised function of the inputs of
    :func:`from_unit`, or of any ``names`` when ``fn`` takes points of the unit hypercube: see below)
    with SALib (``SALib.sample.sobol.sample``, Saltelli's scheme without second-order terms, ``base``
    base samples; ``SALib.analyze.sobol.analyze`` with ``seed`` for its bootstrap). ``fn`` gets a dict
    ``{name: u}`` of uniform [0, 1) columns, one per name, and returns one output per row.
    Returns ``input``, ``first_order``, ``total``, ``total_conf`` (95 % bootstrap half-width) and
    ``rank`` (1 = the largest total index)."""
    from SALib.analyze import sobol as sobol_analyze  # deferred: SALib imports pandas
    from SALib.sample import sobol as sobol_sample

    problem = {"num_vars": len(names), "names": list(names), "bounds": [[0.0, 1.0]] * len(names)}
    u = sobol_sample.sample(problem, base, calc_second_order=False, seed=seed)
    y = np.asarray(fn({n: u[:, j] for j, n in enumerate(names)}), dtype=float)
    si = sobol_analyze.analyze(problem, y, calc_second_order=False, seed=seed, print_to_console=False)
    out = pl.DataFrame({"input": list(names), "first_order": np.asarray(si["S1"], float),
                        "total": np.asarray(si["ST"], float), "total_conf": np.asarray(si["ST_conf"], float)})
    return out.with_columns(rank=pl.col("total").rank("ordinal", descending=True).cast(pl.Int64))


def sensitivity(ens: Ensemble, quantities: dict[str, tuple[np.ndarray, bool]], base: int = SOBOL_BASE,
                seed: int = SEED) -> pl.DataFrame:
    """Which input drives each quantity: :func:`sobol_indices` of ``ln(quantity)`` on the response surface
    (``quantities``: name -> (values at the nodes, predicted?); a quantity that is not predicted carries
    no model error, whose index is then 0). One row per quantity and input: ``quantity``, ``input``,
    ``first_order``, ``total``, ``total_conf``, ``rank``; sorted by quantity, then rank."""
    frames = []
    for name, (values, predicted) in quantities.items():
        def fn(u, values=values, predicted=predicted):
            x = from_unit(np.column_stack([u[n] for n in INPUTS]))
            y = np.log(surface(values, x))
            return y + (ens.error.sigma_log * x[MODEL_ERROR_INPUT] if predicted else 0.0)
        frames.append(sobol_indices(fn, INPUTS, base, seed).with_columns(quantity=pl.lit(name)))
    return pl.concat(frames).select("quantity", "input", "first_order", "total", "total_conf", "rank") \
        .sort("quantity", "rank", maintain_order=True)


# ---- the headline ratios --------------------------------------------------------------------------------

def matched_ratio_nodes(ens: Ensemble, model: str, *, power_basis: str = "rated") -> np.ndarray:
    """The published construction of ``model``'s matched ratio (:func:`jalapeno.pareto.matched_ratio`:
    Jalapeño's over the baseline's tok/s/kW at the baseline's fastest point, the baseline of
    :data:`jalapeno.pareto.PUBLISHED_RATIOS` from :func:`jalapeno.pareto.baseline_frontier`) at every
    node of ``ens``. UnknownNameError for a model without a published matched ratio."""
    if model not in pareto.PUBLISHED_RATIOS:
        raise UnknownNameError("model with a published matched ratio", model, list(pareto.PUBLISHED_RATIOS))
    old = pareto.baseline_frontier(model, pareto.PUBLISHED_RATIOS[model][1], power_basis=power_basis,
                                   concurrency_cap=ens.concurrency_cap)
    return ens.at_nodes(lambda f: pareto.matched_ratio(ens.frontier(f, model, power_basis=power_basis), old)["ratio"])


def headline_ratios(ens: Ensemble, models, *, power_basis: str = "rated") -> pl.DataFrame:
    """Each published matched ratio with its band (:func:`matched_ratio_nodes`, a prediction: the model's
    error applies) and the :func:`judge` verdict: ``model``, ``baseline``, ``published_ratio``,
    ``ratio_median``, ``ratio_low``, ``ratio_high`` (the :data:`BAND` quantiles), ``verdict``."""
    rows = []
    for m in models:
        b = ens.band(matched_ratio_nodes(ens, m, power_basis=power_basis))
        published = data.claim_value(pareto.PUBLISHED_RATIOS[m][0])
        rows.append({"model": m, "baseline": pareto.PUBLISHED_RATIOS[m][1], "published_ratio": published,
                     "ratio_median": b.median, "ratio_low": b.low, "ratio_high": b.high,
                     "verdict": judge(published, b)})
    return pl.DataFrame(rows)


def front_ratio_band(ens: Ensemble, model: str, metric: str, *,
                     concurrency_cap: float | str | None = "benchmark") -> Band:
    """The band of one :data:`jalapeno.caveats.METRICS` ratio (``per_kw_at_peak``, ``single_user``, ``e2e``)
    of Jalapeño's ``model`` frontier against its published baseline's (:data:`jalapeno.pareto.PUBLISHED_RATIOS`),
    over the ensemble ``ens``: a prediction, so the model's error applies."""
    old = pareto.baseline_frontier(model, pareto.PUBLISHED_RATIOS[model][1], concurrency_cap=concurrency_cap)
    return ens.band(lambda f: caveats.front_ratios(ens.frontier(f, model, concurrency_cap=concurrency_cap), old)[metric])


def ratio_band_at(ens: Ensemble, model: str, interactivity_tok_s_user: float, baseline_tok_s_kw: float, *,
                  power_basis: str = "rated") -> Band:
    """The band of a matched ratio against a given baseline point: Jalapeño's ``model`` tok/s/kW at
    ``interactivity_tok_s_user`` (:func:`jalapeno.pareto.throughput_at` of its frontier at every node of
    ``ens``, ``power_basis``) over ``baseline_tok_s_kw``, the baseline's tok/s/kW there; NaNs when the
    ratio does not apply (a non-finite input)."""
    if not (math.isfinite(interactivity_tok_s_user) and math.isfinite(baseline_tok_s_kw)):
        return Band(math.nan, math.nan, math.nan)
    j = ens.band(lambda f: pareto.throughput_at(ens.frontier(f, model, power_basis=power_basis), interactivity_tok_s_user))
    return Band(j.median / baseline_tok_s_kw, j.low / baseline_tok_s_kw, j.high / baseline_tok_s_kw)
