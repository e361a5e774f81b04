"""Pareto frontiers of throughput per chip against interactivity, and matched-interactivity ratios.

:func:`sweep` checks a whole grid of configurations (chips per worker x attention layout x
concurrency) against memory first (:func:`jalapeno.serving.capacity`) and evaluates the ones that fit in
one array call of :func:`jalapeno.serving.evaluate`; :func:`frontier` keeps its upper
envelope: the configurations no other beats on both interactivity and throughput per chip. Ratios "at
the previous generation's best TBT" compare two frontiers at one interactivity: near the slower
system's maximum interactivity its throughput collapses toward zero, which is why 50-100x ratios appear
there (:func:`throughput_at` interpolates along a frontier in log-log space).

Per-kW figures divide by the watts of one of :data:`jalapeno.power.POWER_BASES`, named in each
frontier's column ``power_basis``. Jalapeño's own builder, fit and frontiers are in
:mod:`jalapeno.subject`.
"""

from __future__ import annotations

import inspect

import numpy as np
import polars as pl

from . import cache, calibration, data, measured, metrics, power, serving, specs
from .errors import UnknownNameError
from .specs import ChipSpec, ModelSpec



#: The prediction procedure lives in :mod:`jalapeno.calibration` (the validation scores it), re-exported here.
DEFAULT_PRECISION, CONCURRENCY, TRANSFER_CHIP, TRANSFER_MODEL = (
    calibration.DEFAULT_PRECISION, calibration.CONCURRENCY, calibration.TRANSFER_CHIP, calibration.TRANSFER_MODEL)
sweep, benchmark_concurrency_cap, chip_stacks, stack_for = (
    calibration.sweep, calibration.benchmark_concurrency_cap, calibration.chip_stacks, calibration.stack_for)


def best_stack(eff: serving.Efficiency) -> str:
    """The calibrated stack with the smallest per-step overhead on any chip generation (the best software
    measured so far; of the fitted ``"<stack>@<generation>"`` overheads, the stack's name, else of the
    stacks' own). A frontier does not use it: its stack is :func:`stack_for` the chip and model."""
    fitted = {k: v for k, v in eff.tau_s.items() if "@" in k} or {k: v for k, v in eff.tau_s.items() if k != "default"}
    return min(fitted, key=fitted.get).split("@", 1)[0]


def envelope(df: pl.DataFrame, x: str = "interactivity_tok_s_user", y: str = "throughput_tok_s_chip") -> pl.DataFrame:
    """The upper-right Pareto envelope of ``df`` (no row has both more ``x`` and more ``y``), sorted by
    ``x``; along it ``y`` never rises as ``x`` rises (:func:`jalapeno.metrics.pareto_envelope`)."""
    if df.is_empty():
        return df
    idx = metrics.pareto_envelope(df[x].to_numpy(), df[y].to_numpy())
    return df[idx.tolist()].sort(x)


#: The columns of a frontier that count (chips, ranks, requests): integers (``Int64``).
COUNTS = ("n_chips", "dp", "concurrency", "chips", "tp", "ep")


@cache.digests_held()
def frontier(chip: ChipSpec | str, model: ModelSpec | str, *, isl: int = 8192, osl: int = 1024,
             precision: str | None = None, power_basis: str | None = "rated", band: float | None = None,
             **sweep_options) -> pl.DataFrame:
    """The Pareto frontier of ``chip`` serving ``model``: one row per frontier point with
    ``interactivity_tok_s_user``, ``throughput_tok_s_chip`` (input + output tokens, the benchmark's way),
    ``tpot_s``, ``ttft_s``, ``e2e_s``, the configuration (``n_chips``, ``dp``, ``ep``, ``tp``,
    ``concurrency``, and ``chips``, prefill chips included: integers, :data:`COUNTS`), ``within_recipes``
    (False for a point beyond every recipe of the model, see :func:`sweep`) and ``tok_s_per_kw`` under
    ``power_basis`` (a basis of :data:`jalapeno.power.POWER_BASES`, named in column ``power_basis``;
    None: no per-kW columns, for a chip whose power is not published).

    Chip and model names are case-insensitive and accept the benchmark's keys (``gb200``, ``gptoss``,
    ``dsr1``). Options of :func:`sweep` (``eff``, ``stack``, ``max_chips``, ``disagg``,
    ``mtp_tokens_per_step``, ``hbm_bandwidth_bytes_per_s``, ``concurrency_cap``: by default the top of
    the benchmark's own concurrency sweep, None for an unbounded frontier; ``layouts``: ``"recipes"``,
    the layouts and concurrency ranges the benchmark ran on the chip, or ``"all"``, every layout of the
    grid rule; ``training``) pass through, checked there
    (``max_chips=0``, an unknown ``stack`` are errors). Raises UnknownNameError for unknown names, basis,
    stack or option, ValueError for impossible workloads or a model that fits nowhere, CostError for a
    grid above :data:`jalapeno.serving.MAX_CONFIGURATIONS`.

    ``band`` (a nominal probability in (0, 1), e.g. 0.8; default None: no band, the columns above only)
    adds the model's error at each interactivity: ``throughput_tok_s_chip_low`` and ``_high`` =
    ``throughput_tok_s_chip x exp(-+w)`` (tok/s per chip), the same for ``tok_s_per_kw`` when present
    (``tok_s_per_kw_low``, ``tok_s_per_kw_high``), and ``band_scheme``, the validation scheme whose
    held-out error ``w`` is (:func:`jalapeno.calibration.band_scheme`: ``anchored`` (c) for Jalapeño,
    ``generation`` (a) for a chip no benchmark ran, ``model-chip`` (b) for a measured chip with a model
    it was not measured with, ``shape`` (b) for a measured chip and model). ``w`` =
    :func:`jalapeno.calibration.scheme_half_width` (split-conformal on the scheme's held-out points,
    measured vertically as drawn here; log units). A vertical band: it says nothing beyond the frontier's
    fastest point, where a measured chip may still reach (counted in the scheme's coverage as
    ``unreached``). ``training`` does not change the band (it is the committed schemes' error).
    ValueError for a ``band`` outside (0, 1)."""
    if band is not None and (isinstance(band, bool) or not isinstance(band, (int, float)) or not 0 < band < 1):
        raise ValueError(f"band must be a nominal probability strictly between 0 and 1 (e.g. 0.8) or None, got {band!r}")
    options = [k for k in inspect.signature(sweep).parameters if k not in ("chip", "model", "isl", "osl", "precision")]
    for key in sweep_options:
        if key not in options:
            raise UnknownNameError("frontier option", key, options)
    chip_spec, model_spec = specs.chip(chip), specs.model(model)
    watts = None if power_basis is None else power.power_w(chip_spec, power_basis)
    pts = sweep(chip_spec, model_spec, isl=isl, osl=osl, precision=precision, **sweep_options)
    if pts.is_empty():
        raise ValueError(f"{model_spec.model} does not fit on {chip_spec.chip} within the scale-up domain")
    per_kw = [] if watts is None else [
        metrics.throughput_per_kw(pl.col("throughput_tok_s_chip"), watts).alias("tok_s_per_kw"),
        pl.lit(power_basis).alias("power_basis")]
    out = envelope(pts).with_columns(
        (pl.col("n_chips") / pl.col("dp")).alias("tp"), pl.col("n_chips").alias("ep"),
        pl.lit(chip_spec.chip).alias("chip"), pl.lit(model_spec.model).alias("model"), *per_kw)
    fractional = [c for c in COUNTS if (out[c] != out[c].round()).any()]
    if fractional:
        raise AssertionError(f"frontier counts {fractional} are not whole numbers")
    out = out.with_columns(pl.col(COUNTS).cast(pl.Int64))  # whole numbers, as a reader counts them
    return out if band is None else with_band(out, calibration.band_scheme(chip_spec, model_spec, isl=isl, osl=osl), band)


def with_band(front: pl.DataFrame, scheme: str, level: float = calibration.BAND_LEVEL) -> pl.DataFrame:
    """``front`` (a frontier of :func:`frontier`) with the nominal ``level`` band of validation scheme
    ``scheme`` (:func:`jalapeno.calibration.scheme_half_width`, ``w`` in log units): ``<column>_low`` =
    ``<column> x exp(-w)`` and ``<column>_high`` = ``<column> x exp(w)`` for ``throughput_tok_s_chip`` and,
    when present, ``tok_s_per_kw``; and ``band_scheme`` (``scheme``). UnknownNameError for another scheme."""
    w = calibration.scheme_half_width(scheme, level)
    cols = [c for c in ("throughput_tok_s_chip", "tok_s_per_kw") if c in front.columns]
    return front.with_columns(*[(pl.col(c) * float(np.exp(s * w))).alias(f"{c}_{end}")
                                for c in cols for end, s in (("low", -1), ("high", 1))],
                              band_scheme=pl.lit(scheme))


def _points(model: str | None = None, hw: str | None = None, *, isl: int, osl: int, precision: str | None,
            spec_decoding: str) -> pl.DataFrame:
    """Measured points of :func:`jalapeno.measured.points`, of one ``precision`` (None: every precision)."""
    pts = measured.points(model, hw, isl=isl, osl=osl, spec_decoding=spec_decoding)
    return pts if precision is None else pts.filter(pl.col("precision") == precision)


def measured_frontier(model: str, hw: str, *, isl: int = 8192, osl: int = 1024, power_w_: float | None = None,
                      spec_decoding: str = "none", precision: str | None = None) -> pl.DataFrame:
    """The envelope of the measured InferenceMAX points of one model on one hardware key (every run and
    stack; of one ``precision`` if given, with or without speculative decoding as ``spec_decoding``
    says), with ``interactivity_tok_s_user`` = 1 / mean TPOT, ``throughput_tok_s_chip`` = tput_per_gpu
    and ``tok_s_per_kw`` at ``power_w_`` (default: the chip's rated TDP). ValueError when no point
    matches."""
    pts = measured.require(_points(model, hw, isl=isl, osl=osl, precision=precision, spec_decoding=spec_decoding),
                           f"{model} on {hw} at {isl}/{osl}, precision {precision or 'any'}, speculative decoding "
                           f"{spec_decoding}")
    return _measured_envelope(pts, power_w_ or power.power_w(calibration.chip_of(hw), "rated"))


def _measured_envelope(pts: pl.DataFrame, watts: float) -> pl.DataFrame:
    """The envelope of measured points in frontier columns, ``tok_s_per_kw`` at ``watts`` per chip."""
    df = pts.select((1.0 / pl.col("mean_tpot")).alias("interactivity_tok_s_user"),
                    pl.col("tput_per_gpu").alias("throughput_tok_s_chip"), pl.col("mean_tpot").alias("tpot_s"),
                    pl.col("mean_e2el").alias("e2e_s"), "conc", "run_id", "framework")
    return envelope(df).with_columns(metrics.throughput_per_kw(pl.col("throughput_tok_s_chip"), watts).alias("tok_s_per_kw"))


def reader_chips(model: str, *, isl: int = 8192, osl: int = 1024) -> list[str]:
    """The chips (:func:`jalapeno.calibration.chip_of`) a reader's runs of ``model`` at one shape were
    measured on, without speculative decoding, sorted; none in the default book."""
    return sorted({calibration.chip_of(h) for h in _reader_points(model, isl, osl)["hw"].unique()})


def _reader_points(model: str, isl: int, osl: int) -> pl.DataFrame:
    """A reader's measured points of ``model`` at one shape, without speculative decoding."""
    pts = _points(isl=isl, osl=osl, precision=None, spec_decoding="none")
    return pts.filter(pl.col("reader_run") & (pl.col("model_key") == specs.model(model).model))


def reader_frontier(model: str, chip: str, *, isl: int = 8192, osl: int = 1024,
                    power_basis: str = "rated") -> pl.DataFrame | None:
    """The envelope of a reader's own runs (:func:`jalapeno.measured.points`' ``reader_run``: a book built
    with ``jalapeno build --measurements``) of ``model`` on ``chip`` (every hardware key whose chip it is,
    :func:`jalapeno.calibration.chip_of`: ``h100-vllm`` is H100's) at one shape, without speculative
    decoding, in the columns of :func:`measured_frontier` (``tok_s_per_kw`` at the chip's power on
    ``power_basis``); None when the reader ran none there (always, in the default book)."""
    pts = _reader_points(model, isl, osl)
    chip_spec = specs.chip(chip)
    pts = pts.filter(pl.col("hw").is_in([h for h in pts["hw"].unique() if calibration.chip_of(h) == chip_spec.chip]))
    return None if pts.is_empty() else _measured_envelope(pts, power.power_w(chip_spec, power_basis))


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


#: The published matched-interactivity ratios: claim id and the baseline each was measured against
#: (seed 000: GB200 for gpt-oss-120b; seed 004: GB300 for DeepSeek-R1; seed 001 names no system for Kimi
#: K2.5, so GB300, the newer of the two, is assumed).
PUBLISHED_RATIOS = {"gpt-oss-120b": ("gptoss-matched-tbt-ratio", "gb200"),
                    "deepseek-r1": ("dsr1-matched-tbt-ratio", "gb300"),
                    "kimi-k2.5": ("kimi-matched-tbt-ratio", "gb300")}

BASELINE_HOW = ("auto", "measured", "transferred", "modeled")

#: The operating points OpenAI published (as the seeds print them) on each model's frontier chart: claim id,
#: the chip it is of and its words. Each has one coordinate only: a peak throughput per kW of rated TDP
#: without the interactivity it was reached at, or a single-user speed (1 / minimum TBT, tok/s/user)
#: without its throughput. Seed 004 names GB300 as DeepSeek-R1's comparison system (the baseline of
#: :data:`PUBLISHED_RATIOS`); for Kimi K2.5 the seeds print ratios only, so it has none.
PUBLISHED_POINTS = {
    "gpt-oss-120b": (("gptoss-jalapeno-tok-per-kw", "jalapeno", "Jalapeño's peak throughput per kW (rated TDP)"),
                     ("gptoss-jalapeno-single-user", "jalapeno", "Jalapeño's single-user speed (1 / its minimum TBT)"),
                     ("gptoss-gb200-tok-per-kw", "gb200", "GB200's peak throughput per kW (rated TDP)"),
                     ("gptoss-gb200-single-user", "gb200", "GB200's single-user speed (1 / its minimum TBT)")),
    "deepseek-r1": (("dsr1-jalapeno-single-user", "jalapeno", "Jalapeño's single-user speed"),
                    ("dsr1-baseline-single-user", "gb300",
                     "the comparison system's single-user speed (drawn as GB300, seed 004's baseline)")),
    "kimi-k2.5": ()}

#: The unit of a published point's claim and the frontier column it gives (the other stays empty).
_POINT_AXES = {"tok/s/kW": "tok_s_per_kw", "tok/s/user": "interactivity_tok_s_user"}


def published_points(model: str) -> pl.DataFrame:
    """The operating points OpenAI published for ``model`` (:data:`PUBLISHED_POINTS`, values from
    ``claims.csv`` in the claim's unit), one row each: ``chip``, ``model``, ``interactivity_tok_s_user``
    (tok/s/user) and ``tok_s_per_kw`` (tok/s/kW, input + output tokens), exactly one of the two given
    (the other null: not published), ``power_basis`` (``rated`` on a per-kW row, the basis it was
    published on; null on a speed row, which no power basis changes), ``point`` (its words), ``claim_id``
    and ``seeds`` (``seeds 000, 004``). All at the published workload (8k/1k, claims ``workload-isl`` and
    ``workload-osl``). Empty for a model with none; UnknownNameError for a model not in
    :data:`PUBLISHED_POINTS`."""
    if model not in PUBLISHED_POINTS:
        raise UnknownNameError("model with a published ratio", model, list(PUBLISHED_POINTS))
    claims = data.claims_table()
    rows = []
    for claim_id, chip, words in PUBLISHED_POINTS[model]:
        c = claims.filter(pl.col("claim_id") == claim_id).row(0, named=True)
        column = _POINT_AXES[c["unit"]]
        seeds = sorted({s.split("_", 1)[0] for s in c["seeds"].split(";")})
        rows.append({"chip": chip, "model": model,
                     "interactivity_tok_s_user": c["value"] if column == "interactivity_tok_s_user" else None,
                     "tok_s_per_kw": c["value"] if column == "tok_s_per_kw" else None,
                     "power_basis": "rated" if column == "tok_s_per_kw" else None, "point": words,
                     "claim_id": claim_id, "seeds": ("seed " if len(seeds) == 1 else "seeds ") + ", ".join(seeds)})
    schema = {"chip": pl.Utf8, "model": pl.Utf8, "interactivity_tok_s_user": pl.Float64, "tok_s_per_kw": pl.Float64,
              "power_basis": pl.Utf8, "point": pl.Utf8, "claim_id": pl.Utf8, "seeds": pl.Utf8}
    return pl.DataFrame(rows, schema=schema)


def transferred_frontier(model: str, chip: str, *, source_model: str, source_chip: str, isl: int = 8192,
                         osl: int = 1024, power_basis: str = "rated", eff: serving.Efficiency | None = None,
                         precision: str | None = None, spec_decoding: str = "none") -> pl.DataFrame:
    """A frontier for an unmeasured (``model``, ``chip``) from a measured one: each measured point of
    ``source_model`` on ``source_chip`` (of one ``precision`` if given; with or without speculative
    decoding as ``spec_decoding`` says) keeps its recorded layout (chips, concurrency, stack, prefill
    split) and has its TPOT and throughput per chip multiplied by the serving model's ratio, target over
    source, at that layout. Only the ratio is modeled, so the measured layouts (how many chips the
    benchmark used at its fastest point, which sets a matched ratio) carry over. With
    ``spec_decoding="mtp"`` each measured point keeps its measured MTP gain and the ratio is the serving
    model's at the same layout without speculative decoding (the calibration has no MTP term): an
    approximation, stated. Same columns as :func:`measured_frontier` plus ``n_chips``. ValueError when no
    measured point matches."""
    target_model, target_chip = specs.model(model).model, specs.chip(chip)
    src = specs.model(source_model).model
    pts = _points(isl=isl, osl=osl, precision=precision, spec_decoding=spec_decoding)
    # configurations() keeps points without speculative decoding; an MTP point is described by its layout
    cfg = calibration.configurations(pts.with_columns(spec_decoding=pl.lit("none")), keep_queue_bound=True).filter(
        (pl.col("model_key") == src) & (pl.col("chip") == specs.chip(source_chip).chip))
    if cfg.is_empty():
        raise ValueError(f"no measured {src} points on {source_chip} at {isl}/{osl} (precision {precision or 'any'}, "
                         f"speculative decoding {spec_decoding}) to transfer from")
    eff = eff or calibration.load()
    a = calibration.predict(cfg, eff)
    b = calibration.predict(a.with_columns(model_key=pl.lit(target_model), chip=pl.lit(target_chip.chip)), eff)
    df = a.select(
        (pl.col("mean_tpot") * b["pred_tpot"] / pl.col("pred_tpot")).alias("tpot_s"),
        (pl.col("tput_per_gpu") * b["pred_tput"] / pl.col("pred_tput")).alias("throughput_tok_s_chip"),
        (pl.col("mean_e2el") * b["pred_e2e"] / pl.col("pred_e2e")).alias("e2e_s"),
        "conc", "run_id", pl.col("stack").alias("framework"), "n_chips",
    ).with_columns((1.0 / pl.col("tpot_s")).alias("interactivity_tok_s_user"))
    watts = power.power_w(target_chip, power_basis)
    return envelope(df).with_columns(metrics.throughput_per_kw(pl.col("throughput_tok_s_chip"), watts).alias("tok_s_per_kw"))


def baseline_frontier(model: str, chip: str, *, power_basis: str = "rated", how: str = "auto", max_chips: int = 8,
                      isl: int = 8192, osl: int = 1024, concurrency_cap: float | str | None = "benchmark",
                      precision: str | None = None, spec_decoding: str = "none") -> pl.DataFrame:
    """The baseline's frontier, with its origin in column ``source``: ``measured`` (every InferenceMAX run
    and stack of that model on that chip at that shape), ``transferred`` (:func:`transferred_frontier`
    from the measured layouts of :data:`TRANSFER_CHIP` / :data:`TRANSFER_MODEL`) or ``modeled``
    (:func:`frontier` with at most ``max_chips`` chips per decode worker, over ``concurrency_cap``). ``how="auto"`` takes the first
    of the three that exists. ``precision`` (None: every precision) and ``spec_decoding`` (``none`` or
    ``mtp``) choose the measured points; a modeled frontier has no speculative decoding. UnknownNameError
    for another ``how``, ValueError when the asked one does not exist."""
    if how not in BASELINE_HOW:
        raise UnknownNameError("baseline construction", how, BASELINE_HOW)
    chip_spec, model_key = specs.chip(chip), specs.model(model).model
    pts = _points(isl=isl, osl=osl, precision=precision, spec_decoding=spec_decoding)

    def have(m: str, c: str) -> bool:
        return pts.filter((pl.col("hw") == c) & (pl.col("model_key") == m)).height > 0

    if how in ("auto", "measured") and have(model_key, chip_spec.chip):
        return measured_frontier(model, chip_spec.chip, isl=isl, osl=osl, power_w_=power.power_w(chip_spec, power_basis),
                                 precision=precision, spec_decoding=spec_decoding).with_columns(pl.lit("measured").alias("source"))
    if how == "measured":
        raise ValueError(f"no measured {model_key} points on {chip_spec.chip} at {isl}/{osl}")
    src_chip = TRANSFER_CHIP.get(chip_spec.chip, chip_spec.chip)
    src_model = model_key if have(model_key, src_chip) else TRANSFER_MODEL.get(model_key, model_key)
    if how in ("auto", "transferred") and have(src_model, src_chip) and (src_chip, src_model) != (chip_spec.chip, model_key):
        return transferred_frontier(model_key, chip_spec.chip, source_model=src_model, source_chip=src_chip, isl=isl,
                                    osl=osl, power_basis=power_basis, precision=precision,
                                    spec_decoding=spec_decoding).with_columns(pl.lit("transferred").alias("source"))
    if how == "transferred":
        raise ValueError(f"no measured layouts to transfer to {model_key} on {chip_spec.chip} at {isl}/{osl} "
                         f"(precision {precision or 'any'}, speculative decoding {spec_decoding})")
    if spec_decoding != "none":
        raise ValueError(f"a modeled frontier has no speculative decoding; no measured {model_key} points with "
                         f"{spec_decoding} on {chip_spec.chip} or {src_chip} at {isl}/{osl}")
    return frontier(chip_spec, model, isl=isl, osl=osl, precision=precision, power_basis=power_basis, max_chips=max_chips,
                    concurrency_cap=concurrency_cap).with_columns(
        pl.lit("modeled").alias("source"))


def ratio_curve(new: pl.DataFrame, old: pl.DataFrame, points: int = 40, column: str = "tok_s_per_kw") -> pl.DataFrame:
    """The ratio of two frontiers' ``column`` across ``old``'s interactivity range (log-spaced), to show how
    it grows without bound as ``old`` approaches its maximum interactivity."""
    lo, hi = old["interactivity_tok_s_user"].min(), old["interactivity_tok_s_user"].max()
    x = np.geomspace(lo, hi, points)
    return pl.DataFrame({"interactivity_tok_s_user": x, "ratio": throughput_at(new, x, column) / throughput_at(old, x, column)})
