"""The baseline behind a matched ratio, as named assumptions, and the public GB300 evidence that checks it.

The published 53.7x / 104.3x / ~56x divide Jalapeño's throughput per kW by the baseline's at the
baseline's fastest point (:func:`jalapeno.pareto.matched_ratio`), where the baseline's frontier falls
steeply; so each ratio hinges on three things the seeds do not state about the baseline, carried here as
the fields of :class:`BaselineAssumptions`:

- its **precision** (FP4 or FP8),
- its **speculative decoding** (none or MTP, multi-token prediction),
- its **fastest point**: where its frontier ends (``"end"``: the last point the benchmark measured, or
  transferred from it; ``"seeds"``: the seeds' published single-user speed of the baseline, 169 tok/s/user
  for DeepSeek-R1; or a number in tok/s/user). Below the frontier's end the frontier is cut there; beyond
  it, it is extended by its final slope in log-log space (:func:`value_at`).

:data:`ASSUMPTION_SETS` names the combinations the book discusses, each with its basis;
:func:`ratios_by_assumption` gives each published ratio under each set (the baseline chip and the construction
are those of :data:`jalapeno.pareto.PUBLISHED_RATIOS` and :func:`jalapeno.pareto.baseline_frontier`:
measured where InferenceMAX measured the pair, else transferred from measured layouts; Jalapeño is
:func:`jalapeno.subject.jalapeno_frontier`, power basis ``rated`` as in the Pareto chapter), and
:func:`ratio_against_fastest` the DeepSeek-R1 ratio as a function of the baseline's fastest interactivity.

:func:`gb300_checks` sets the transferred GB300 DeepSeek-R1 frontier and GB200's measured one against the
public GB300 / GB200 points and ratios of ``data/gb300_points.csv`` (:func:`jalapeno.data.gb300_points`).

Which sets reproduce which published ratio (:func:`ratios_by_assumption` computes them; the figures in brackets
are its output when this was written, rated power, agreement within ±15 %, quoted only to explain the
construction):

- 53.7x, gpt-oss-120b against GB200's measured frontier: the benchmark FP4 endpoint and the seeds'
  single-user speed (for gpt-oss-120b 535 tok/s/user, the measured end to within 0.3 %) reproduce it in
  the low scenario of Jalapeño's unknowns only [55x, 54x; central 98x]. GB200 has no FP8 or MTP
  gpt-oss-120b points, so those sets do not apply.
- ~56x, Kimi K2.5 against GB300 transferred from DeepSeek-R1 layouts: the benchmark FP4 endpoint in the
  low scenario [54x; central 102x]; FP8 only [44x central] and MTP [31x] fall short; the seeds publish no
  Kimi K2.5 baseline speed, so the "seeds" sets do not apply.
- 104.3x, DeepSeek-R1 against GB300: no named set [central: FP4 endpoint 81x, FP8 only 37x, MTP 24x,
  seeds' 169 tok/s/user extended 136x, MTP at 169 tok/s/user 8x]. It lies between the FP4 endpoint and
  the extended 169: an FP4 baseline without MTP whose frontier ends at about 160 tok/s/user (158-177 over
  the scenarios; :func:`implied_fastest`), a little beyond the benchmark's 151. With MTP it would need
  the frontier extended to about 590 tok/s/user. So the 104.3x hinges on the fastest point of a no-MTP
  FP4 baseline, where the frontier falls with an elasticity of about -5: each 1 % of extra endpoint speed
  raises the ratio by about 5 %.

What the public evidence favours (``data/gb300_points.csv``, :func:`gb300_checks`): the transferred FP4
frontier agrees with GB300 / GB200 at 116 tok/s/user (1.00 against 1.02) and overstates the peak ratio a
little (1.30 against 1.21, whose GB200 run is seven weeks younger); InferenceX v2 quotes GB300 FP4
without MTP at 150 tok/s/user, consistent with the benchmark's 151 end, and says that at 167 tok/s/user
"it becomes necessary to employ speculative decoding techniques like MTP". For a baseline without MTP the
evidence therefore favours the benchmark FP4 endpoint; a comparison system at the seeds' 169 tok/s/user
most plausibly ran MTP, under which the ratio at 169 tok/s/user is an order of magnitude below 104x. The
FP8 checks disagree (FP4 / FP8 at the peak 2.37 against 2.02; the benchmark's FP8 frontier ends at 96
tok/s/user, short of the public 116): the transferred FP8 baseline is a GB200 Dynamo-SGLang frontier with
no Blackwell Ultra FP8 gain, and a faster FP8 stack would both raise that frontier and move its end out,
so the FP8-only ratio is uncertain in both directions. The MTP gain at 150 tok/s/user is also smaller in
the transfer than in public (about 10x against 21x): near 150 tok/s/user the transferred frontiers put
MTP and no-MTP closer together than InferenceX measured them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from . import data, pareto, specs, subject
from .display import number
from .errors import UnknownNameError

#: Precisions and speculative-decoding modes a baseline can be assumed to run.
PRECISIONS = ("fp4", "fp8")
SPEC_DECODING = ("none", "mtp")
#: Named fastest points: the frontier's own last point, or the seeds' published baseline single-user speed.
FASTEST_POINTS = ("end", "seeds")

#: The seeds' published single-user speed of each model's baseline (claim id of ``claims.csv``, tok/s/user):
#: DeepSeek-R1's comparison system (seed 001, about 169) and GB200 on gpt-oss-120b (seed 000, 1 / 1.87 ms).
#: Kimi K2.5 has none.
SEEDS_BASELINE_SPEED = {"deepseek-r1": "dsr1-baseline-single-user", "gpt-oss-120b": "gptoss-gb200-single-user"}

#: The agreement the book asks of a reproduced ratio (the Pareto chapter's ``tolerance``).
DEFAULT_TOLERANCE = 0.15


@dataclass(frozen=True)
class BaselineAssumptions:
    """What a matched ratio assumes of its baseline. ``precision``: ``fp4`` or ``fp8`` (the measured
    points of that precision); ``spec_decoding``: ``none`` or ``mtp``; ``fastest_point``: ``"end"`` (the
    frontier's last point), ``"seeds"`` (the seeds' published single-user speed of that model's baseline,
    :data:`SEEDS_BASELINE_SPEED`) or a positive number of tok/s/user. UnknownNameError for another name,
    ValueError for a non-positive or non-finite number."""

    precision: str = "fp4"
    spec_decoding: str = "none"
    fastest_point: str | float = "end"

    def __post_init__(self):
        if self.precision not in PRECISIONS:
            raise UnknownNameError("baseline precision", self.precision, PRECISIONS)
        if self.spec_decoding not in SPEC_DECODING:
            raise UnknownNameError("speculative decoding mode", self.spec_decoding, SPEC_DECODING)
        f = self.fastest_point
        if isinstance(f, str):
            if f not in FASTEST_POINTS:
                raise UnknownNameError("fastest point", f, FASTEST_POINTS)
        elif isinstance(f, bool) or not (isinstance(f, (int, float)) and math.isfinite(f) and f > 0):
            raise ValueError(f"fastest_point must be one of {', '.join(FASTEST_POINTS)} or a positive number of "
                             f"tok/s/user, got {f!r}")


#: The named assumption sets, each with its basis.
ASSUMPTION_SETS: dict[str, tuple[BaselineAssumptions, str]] = {
    "benchmark FP4 endpoint": (
        BaselineAssumptions("fp4", "none", "end"),
        "InferenceMAX's FP4 runs without speculative decoding (GB200 measured, GB300 transferred from GB200's "
        "layouts), ending where the benchmark's fastest configuration ends; the book's default baseline (the "
        "envelope over every precision ends at the same FP4 point)"),
    "FP8 only": (
        BaselineAssumptions("fp8", "none", "end"),
        "a baseline served in DeepSeek-R1's released FP8 weights (the seeds do not state the precision): the "
        "benchmark's FP8 runs (GB200 Dynamo-SGLang), ending at their fastest configuration"),
    "MTP": (
        BaselineAssumptions("fp4", "mtp", "end"),
        "the benchmark's FP4 Dynamo-TRT runs with multi-token prediction, ending at their fastest configuration; "
        "InferenceX v2: at the highest interactivities the cheapest configurations all use MTP"),
    "seeds' single-user speed, final slope extended": (
        BaselineAssumptions("fp4", "none", "seeds"),
        "the seeds' single-user speed of the comparison system (DeepSeek-R1: about 169 tok/s/user, seed 001) "
        "reached by the FP4 frontier without speculative decoding, extended past the benchmark's end by its "
        "final log-log slope"),
    "MTP at the seeds' single-user speed": (
        BaselineAssumptions("fp4", "mtp", "seeds"),
        "the seeds' single-user speed reached with MTP, inside the MTP frontier (measured on GB200, transferred to "
        "GB300; no extrapolation); "
        "InferenceX v2: at 167 tok/s/user it becomes necessary to employ speculative decoding like MTP"),
}


def assumption_sets() -> pl.DataFrame:
    """:data:`ASSUMPTION_SETS` as a table: ``assumption_set``, ``precision``, ``spec_decoding``,
    ``fastest_point`` (text), ``basis``."""
    return pl.DataFrame([{"assumption_set": name, "precision": a.precision, "spec_decoding": a.spec_decoding,
                          "fastest_point": str(a.fastest_point), "basis": basis}
                         for name, (a, basis) in ASSUMPTION_SETS.items()])


def _assumptions(name_or_assumptions: str | BaselineAssumptions) -> BaselineAssumptions:
    if isinstance(name_or_assumptions, BaselineAssumptions):
        return name_or_assumptions
    if name_or_assumptions not in ASSUMPTION_SETS:
        raise UnknownNameError("assumption set", name_or_assumptions, list(ASSUMPTION_SETS))
    return ASSUMPTION_SETS[name_or_assumptions][0]


# ---- the frontier past its end ---------------------------------------------------------------------------

def final_slope(front: pl.DataFrame, column: str = "tok_s_per_kw") -> float:
    """The slope ``d ln(column) / d ln(interactivity)`` of a frontier's last segment (its two fastest
    points): the elasticity with which its throughput falls at its end. ValueError for a frontier of
    fewer than two points or whose two fastest points share one interactivity."""
    f = front.sort("interactivity_tok_s_user")
    if f.height < 2:
        raise ValueError(f"a final slope needs at least two frontier points, got {f.height}")
    (x1, x2), (y1, y2) = f["interactivity_tok_s_user"][-2:].to_list(), f[column][-2:].to_list()
    if not x2 > x1:
        raise ValueError(f"the frontier's two fastest points share the interactivity {x2!r} tok/s/user")
    return math.log(y2 / y1) / math.log(x2 / x1)


def value_at(front: pl.DataFrame, interactivity, column: str = "tok_s_per_kw"):
    """``column`` of a frontier at ``interactivity`` (tok/s/user, scalar or array): up to the frontier's
    last point, :func:`jalapeno.pareto.throughput_at` (log-log interpolation); beyond it, the last point's
    value times ``(x / x_end) ** s`` with ``s`` the :func:`final_slope` (a power law continued from the
    frontier's final segment: an assumption, which :func:`is_extrapolated` flags)."""
    x = np.asarray(interactivity, dtype=float)
    f = front.sort("interactivity_tok_s_user")
    x_end, y_end = float(f["interactivity_tok_s_user"][-1]), float(f[column][-1])
    inside = pareto.throughput_at(f, np.minimum(x, x_end), column)
    beyond = x > x_end * (1 + 1e-12)
    out = np.where(beyond, y_end * (x / x_end) ** (final_slope(f, column) if beyond.any() else 0.0), inside)
    return float(out) if out.ndim == 0 else out


def is_extrapolated(front: pl.DataFrame, interactivity) -> bool | np.ndarray:
    """Whether :func:`value_at` extends ``front`` past its last point at ``interactivity``."""
    out = np.asarray(interactivity, dtype=float) > float(front["interactivity_tok_s_user"].max()) * (1 + 1e-12)
    return bool(out) if out.ndim == 0 else out


def ratio_at(new: pl.DataFrame, old: pl.DataFrame, interactivity: float, column: str = "tok_s_per_kw") -> dict[str, float]:
    """``new``'s over ``old``'s ``column`` at one interactivity (tok/s/user): ``new`` interpolated
    (:func:`jalapeno.pareto.throughput_at`, NaN past its end), ``old`` by :func:`value_at` (extended past
    its end by its final slope). Returns ``interactivity_tok_s_user``, ``old``, ``new``, ``ratio`` and
    ``extrapolated`` (1.0 if ``old`` was extended, else 0.0). The matched ratio of
    :func:`jalapeno.pareto.matched_ratio` when ``interactivity`` is ``old``'s last point."""
    x = float(interactivity)
    y_old, y_new = value_at(old, x, column), pareto.throughput_at(new, x, column)
    return {"interactivity_tok_s_user": x, "old": y_old, "new": y_new, "ratio": y_new / y_old,
            "extrapolated": float(is_extrapolated(old, x))}


# ---- baselines under assumptions -------------------------------------------------------------------------

def baseline_under(model: str, assumptions: str | BaselineAssumptions, *, chip: str | None = None,
                   power_basis: str = "rated", isl: int = 8192, osl: int = 1024) -> pl.DataFrame | None:
    """The baseline frontier of ``model`` (on ``chip``, default the chip of
    :data:`jalapeno.pareto.PUBLISHED_RATIOS`) from the measured points of the assumptions' precision and
    speculative decoding: measured where InferenceMAX measured the pair, else transferred from measured
    layouts (:func:`jalapeno.pareto.baseline_frontier`, ``how`` ``measured`` then ``transferred``; never
    modeled outright). None when neither exists (gpt-oss-120b has no FP8 or MTP points on GB200). Columns
    of the baseline frontier (``tok_s_per_kw`` under ``power_basis``, ``source``)."""
    a = _assumptions(assumptions)
    key = specs.model(model).model
    chip = specs.chip(chip or pareto.PUBLISHED_RATIOS.get(key, (None, "gb300"))[1]).chip
    for how in ("measured", "transferred"):
        try:
            return pareto.baseline_frontier(key, chip, how=how, power_basis=power_basis, isl=isl, osl=osl,
                                            precision=a.precision, spec_decoding=a.spec_decoding)
        except UnknownNameError:
            raise
        except ValueError:  # baseline_frontier: no measured point of that kind for this construction
            continue
    return None


def fastest_interactivity(model: str, front: pl.DataFrame, assumptions: str | BaselineAssumptions) -> float:
    """The baseline's fastest interactivity (tok/s/user) under ``assumptions``: the frontier's last point
    (``"end"``), the seeds' published speed of ``model``'s baseline (``"seeds"``, :data:`SEEDS_BASELINE_SPEED`;
    NaN for a model the seeds give none), or the number given."""
    a = _assumptions(assumptions)
    if a.fastest_point == "end":
        return float(front["interactivity_tok_s_user"].max())
    if a.fastest_point == "seeds":
        claim = SEEDS_BASELINE_SPEED.get(specs.model(model).model)
        return float(data.claim_value(claim)) if claim else float("nan")
    return float(a.fastest_point)


def ratios_by_assumption(models=("gpt-oss-120b", "deepseek-r1", "kimi-k2.5"), sets=None, *, scenarios=("central",),
                power_basis: str = "rated", isl: int = 8192, osl: int = 1024, fits: dict | None = None,
                tolerance: float = DEFAULT_TOLERANCE) -> pl.DataFrame:
    """Each published matched ratio (:data:`jalapeno.pareto.PUBLISHED_RATIOS`) recomputed under each
    assumption set (``sets``: names of :data:`ASSUMPTION_SETS` or ``{name: BaselineAssumptions}``; default
    all) and each scenario of Jalapeño's unknowns: Jalapeño's tok/s/kW
    (:func:`jalapeno.subject.jalapeno_frontier`, the fit of ``fits[scenario]`` or
    :func:`jalapeno.subject.fit_jalapeno`) over the baseline's (:func:`baseline_under`) at the baseline's
    fastest interactivity (:func:`fastest_interactivity`), by :func:`ratio_at`, both at ``power_basis``.

    One row per model, set and scenario: ``model``, ``baseline``, ``assumption_set``, ``precision``,
    ``spec_decoding``, ``fastest_point``, ``scenario``, ``baseline_source``, ``baseline_end_tok_s_user``,
    ``interactivity_tok_s_user``, ``extrapolated``, ``baseline_tok_s_kw``, ``jalapeno_tok_s_kw``,
    ``ratio``, ``published_ratio``, ``deviation`` (ratio / published - 1), ``reproduces`` (``|deviation|
    <= tolerance``). A set that does not apply to a model (no measured points of that kind, no published
    baseline speed) has a null ``baseline_source`` and NaN ratio."""
    if sets is None:
        sets = {name: a for name, (a, _) in ASSUMPTION_SETS.items()}
    elif not isinstance(sets, dict):
        sets = {name: _assumptions(name) for name in sets}
    fits = fits or {}
    rows, baselines, news = [], {}, {}
    for m in models:
        key = specs.model(m).model
        claim_id, chip = pareto.PUBLISHED_RATIOS.get(key, (None, "gb300"))
        published = data.claim_value(claim_id) if claim_id else float("nan")
        for name, a in sets.items():
            a = _assumptions(a)
            if (key, a.precision, a.spec_decoding) not in baselines:
                baselines[key, a.precision, a.spec_decoding] = baseline_under(key, a, chip=chip, power_basis=power_basis,
                                                                              isl=isl, osl=osl)
            old = baselines[key, a.precision, a.spec_decoding]
            for sc in scenarios:
                if (key, sc) not in news:
                    fit = fits.get(sc) or subject.fit_jalapeno(sc)
                    news[key, sc] = subject.jalapeno_frontier(key, sc, fit=fit, power_basis=power_basis, isl=isl, osl=osl)
                x = fastest_interactivity(key, old, a) if old is not None else float("nan")
                r = ratio_at(news[key, sc], old, x) if old is not None and math.isfinite(x) else \
                    {"interactivity_tok_s_user": x, "old": float("nan"), "new": float("nan"), "ratio": float("nan"),
                     "extrapolated": float("nan")}
                rows.append({"model": key, "baseline": chip, "assumption_set": name, "precision": a.precision,
                             "spec_decoding": a.spec_decoding, "fastest_point": str(a.fastest_point), "scenario": sc,
                             "baseline_source": None if old is None else old["source"][0],
                             "baseline_end_tok_s_user": float("nan") if old is None else
                             float(old["interactivity_tok_s_user"].max()),
                             "interactivity_tok_s_user": r["interactivity_tok_s_user"],
                             "extrapolated": None if math.isnan(r["extrapolated"]) else bool(r["extrapolated"]),
                             "baseline_tok_s_kw": r["old"], "jalapeno_tok_s_kw": r["new"], "ratio": r["ratio"],
                             "published_ratio": published, "deviation": r["ratio"] / published - 1})
    out = pl.DataFrame(rows, schema_overrides={"baseline_source": pl.Utf8, "extrapolated": pl.Boolean})
    return out.with_columns(reproduces=(pl.col("deviation").abs().fill_nan(None) <= tolerance).fill_null(False))


#: The (precision, speculative decoding) lines of :func:`ratio_against_fastest` by default.
CURVE_LINES = (("fp4", "none"), ("fp8", "none"), ("fp4", "mtp"))


def ratio_curve(new: pl.DataFrame, old: pl.DataFrame, fastest, column: str = "tok_s_per_kw") -> pl.DataFrame:
    """``new``'s over ``old``'s ``column`` if ``old``'s frontier ended at each of ``fastest`` (tok/s/user):
    ``fastest_tok_s_user``, ``baseline`` (:func:`value_at`, extended past its end by its final slope),
    ``jalapeno``, ``ratio``, ``extrapolated``."""
    x = np.asarray(fastest, dtype=float)
    y_old, y_new = value_at(old, x, column), pareto.throughput_at(new, x, column)
    return pl.DataFrame({"fastest_tok_s_user": x, "baseline": y_old, "jalapeno": y_new, "ratio": y_new / y_old,
                         "extrapolated": is_extrapolated(old, x)})


def ratio_against_fastest(model: str = "deepseek-r1", fastest=None, lines=CURVE_LINES, *, scenario: str = "central",
                          fit=None, power_basis: str = "rated", isl: int = 8192, osl: int = 1024) -> pl.DataFrame:
    """The matched ratio as a function of the baseline's fastest interactivity, for the figure: for each
    (precision, speculative decoding) of ``lines`` with a baseline (:func:`baseline_under`) and each
    ``fastest`` (tok/s/user; default 100 to 250 in steps of 5), Jalapeño's tok/s/kW over the baseline's
    there (:func:`ratio_curve`; past the baseline's end, its final slope continued). Long format:
    ``precision``, ``spec_decoding``, ``baseline_source``, ``baseline_end_tok_s_user``,
    ``fastest_tok_s_user``, ``baseline_tok_s_kw``, ``jalapeno_tok_s_kw``, ``ratio``, ``extrapolated``."""
    fastest = np.arange(100.0, 250.0 + 1e-9, 5.0) if fastest is None else fastest
    new = subject.jalapeno_frontier(model, scenario, fit=fit or subject.fit_jalapeno(scenario), power_basis=power_basis,
                                    isl=isl, osl=osl)
    frames = []
    for precision, spec in lines:
        old = baseline_under(model, BaselineAssumptions(precision, spec), power_basis=power_basis, isl=isl, osl=osl)
        if old is None:
            continue
        frames.append(ratio_curve(new, old, fastest).select(
            pl.lit(precision).alias("precision"), pl.lit(spec).alias("spec_decoding"),
            pl.lit(old["source"][0]).alias("baseline_source"),
            pl.lit(float(old["interactivity_tok_s_user"].max())).alias("baseline_end_tok_s_user"),
            "fastest_tok_s_user", pl.col("baseline").alias("baseline_tok_s_kw"),
            pl.col("jalapeno").alias("jalapeno_tok_s_kw"), "ratio", "extrapolated"))
    return pl.concat(frames)


def implied_fastest(new: pl.DataFrame, old: pl.DataFrame, ratio: float, column: str = "tok_s_per_kw",
                    search=(10.0, 1000.0)) -> float:
    """The fastest interactivity (tok/s/user) ``old``'s frontier would need for the matched ratio of
    ``new`` over it (:func:`ratio_at`, extended past ``old``'s end by its final slope) to equal ``ratio``:
    the first crossing on a log grid over ``search`` (1,000 points), interpolated linearly in
    log-interactivity; NaN if the ratio never reaches it there. It reads a published ratio back into the
    baseline endpoint it implies; it tunes nothing."""
    x = np.geomspace(*search, 1000)
    r = ratio_curve(new, old, x, column)["ratio"].to_numpy()
    above = np.flatnonzero(np.nan_to_num(r, nan=-np.inf) >= ratio)
    if above.size == 0:
        return float("nan")
    i = int(above[0])
    if i == 0:
        return float(x[0])
    t = (np.log(ratio) - np.log(r[i - 1])) / (np.log(r[i]) - np.log(r[i - 1]))
    return float(np.exp(np.log(x[i - 1]) + t * (np.log(x[i]) - np.log(x[i - 1]))))


# ---- checks against the public GB300 points ---------------------------------------------------------------

#: The checks of :func:`gb300_checks`: (check, numerator point, denominator point or None, numerator line,
#: denominator line). Points are ids of ``gb300_points.csv``; a ``point`` row is a peak (the lines' peak
#: throughput per chip are compared), a ``ratio`` row is taken at its interactivity (the lines' throughput
#: per chip there; a published ratio over a common baseline divides out). A line is (chip, precision,
#: speculative decoding), ``None`` standing for the ``spec_decoding`` asked of :func:`gb300_checks`.
CHECKS = (
    ("GB300 / GB200, FP4 peak throughput per GPU", "gb300-fp4-peak", "gb200-fp4-peak",
     ("gb300", "fp4", None), ("gb200", "fp4", None)),
    ("GB300 / GB200, FP4 at 116 tok/s/user", "gb300-fp4-vs-h100-at-116", "gb200-fp4-vs-h100-at-116",
     ("gb300", "fp4", None), ("gb200", "fp4", None)),
    ("GB300 FP4 / FP8, peak throughput per GPU", "gb300-fp4-peak", "gb300-fp8-peak",
     ("gb300", "fp4", None), ("gb300", "fp8", None)),
    ("GB300 FP4 / FP8 at 116 tok/s/user", "gb300-fp4-vs-h100-at-116", "gb300-fp8-vs-h100",
     ("gb300", "fp4", None), ("gb300", "fp8", None)),
    ("GB300 FP4 with MTP / without, at 150 tok/s/user", "gb300-fp4-mtp-vs-none-at-150", None,
     ("gb300", "fp4", "mtp"), ("gb300", "fp4", "none")),
)


def line_words(key: tuple[str, str, str]) -> str:
    """A frontier line's key (chip, precision, speculative decoding) as a reader names it:
    ``("gb300", "fp8", "none")`` -> ``GB300 FP8 without MTP``, ``("gb300", "fp4", "mtp")`` -> ``GB300 FP4 with MTP``."""
    chip, precision, spec = key
    return f"{specs.short_name(chip)} {precision.upper()} " + ("with MTP" if spec == "mtp" else "without MTP")


def check_table(lines: dict[tuple[str, str, str], pl.DataFrame | None], points: pl.DataFrame,
                spec_decoding: str = "none") -> pl.DataFrame:
    """The arithmetic of :func:`gb300_checks` on given frontiers: ``lines`` maps (chip, precision,
    speculative decoding) to a frontier (``interactivity_tok_s_user``, ``throughput_tok_s_chip``) or None;
    ``points`` is :func:`jalapeno.data.gb300_points`. For each of :data:`CHECKS`: the public value (the
    numerator's throughput or ratio over the denominator's; a lone ratio row as it is), the modeled value
    (the numerator line's peak over the denominator line's, or their throughputs per chip at the ratio
    row's interactivity; NaN where a line is missing or ends before it) and ``ratio_modeled_over_public``.
    Columns ``check``, ``public_value``, ``source_id``, ``modeled_value``, ``ratio_modeled_over_public``,
    ``at_interactivity_tok_s_user`` (null at a peak), ``modeled_from``, ``note``."""
    by_id = {r["point"]: r for r in points.iter_rows(named=True)}
    rows = []
    for check, num_id, den_id, num_line, den_line in CHECKS:
        num, den = by_id[num_id], by_id[den_id] if den_id else None
        field = "throughput_tok_s_gpu" if num["kind"] == "point" else "ratio_x"
        public = num[field] / den[field] if den else num[field]
        keys = [(c, p, s or spec_decoding) for c, p, s in (num_line, den_line)]
        fronts = [lines.get(k) for k in keys]
        at = None if num["kind"] == "point" else float(num["at_interactivity_tok_s_user"])
        note = ""
        if any(f is None for f in fronts):
            modeled = float("nan")
            note = "no frontier for " + ", ".join(line_words(k) for k, f in zip(keys, fronts) if f is None)
        elif at is None:
            modeled = float(fronts[0]["throughput_tok_s_chip"].max()) / float(fronts[1]["throughput_tok_s_chip"].max())
        else:
            y = [pareto.throughput_at(f, at, "throughput_tok_s_chip") for f in fronts]
            modeled = y[0] / y[1]
            ends = [(line_words(k), float(f["interactivity_tok_s_user"].max())) for k, f in zip(keys, fronts)
                    if at > float(f["interactivity_tok_s_user"].max())]
            note = "; ".join(f"{k}'s frontier ends at {number(e):.0f} tok/s/user" for k, e in ends)
        rows.append({"check": check, "public_value": public, "source_id": " / ".join(i for i in (num_id, den_id) if i),
                     "modeled_value": modeled, "ratio_modeled_over_public": modeled / public,
                     "at_interactivity_tok_s_user": at,
                     "modeled_from": " / ".join(line_words(k) + (f" ({f['source'][0]})" if f is not None and "source" in f.columns
                                                              else "") for k, f in zip(keys, fronts)),
                     "note": note})
    return pl.DataFrame(rows, schema_overrides={"at_interactivity_tok_s_user": pl.Float64})


def gb300_checks(*, spec_decoding: str = "none", isl: int = 8192, osl: int = 1024) -> pl.DataFrame:
    """The transferred GB300 DeepSeek-R1 frontier and GB200's measured one
    (:func:`jalapeno.pareto.baseline_frontier`, of each precision, with ``spec_decoding`` ``none`` or
    ``mtp``) checked against the public points of ``gb300_points.csv`` (:func:`check_table`): GB300 /
    GB200 at the FP4 peak (public 18,131.6 / 14,952.0, about 1.21) and at 116 tok/s/user (100x / 98x over
    one H100 baseline, about 1.02), GB300 FP4 / FP8 at the peak (2.02) and at 116 tok/s/user (100x / 65x,
    about 1.5; low confidence), and GB300 with MTP / without at 150 tok/s/user (about 21x). Throughput per
    chip, so the power basis does not enter (InferenceX charges GB200 and GB300 the same all-in power)."""
    if spec_decoding not in SPEC_DECODING:
        raise UnknownNameError("speculative decoding mode", spec_decoding, SPEC_DECODING)
    wanted = {(c, p, s or spec_decoding) for _, _, _, n, d in CHECKS for c, p, s in (n, d)}
    lines = {}
    for chip, precision, spec in sorted(wanted):
        lines[chip, precision, spec] = baseline_under("deepseek-r1", BaselineAssumptions(precision, spec), chip=chip,
                                                      isl=isl, osl=osl)
    return check_table(lines, data.gb300_points(), spec_decoding)
