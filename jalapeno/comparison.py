"""The published Jalapeño comparison, recomputed: the baseline side from measured data, the headline
ratios from the published numbers, the per-watt figures under several power bases, and the E2E
decomposition.

Sources of each formula: the benchmark's metric definitions (:mod:`jalapeno.metrics`); the published
numbers are read from ``data/claims.csv`` by claim id, never typed here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import polars as pl

from . import bounds, calibration, measured, metrics, power, specs
from .data import claim_value
from .display import number
from .errors import UnknownNameError
from .metrics import rounds_to

#: The InferenceMAX run the published GB200 gpt-oss-120b figures come from (modeling reference:
#: 53,952 tok/s/GPU at conc 512 / 1.2 kW = 44,960 tok/s/kW; conc 1: TPOT 1.868 ms, E2E 1.801 s).
PUBLISHED_RUNS = {("gpt-oss-120b", "gb200", 8192, 1024): "20786863188"}

#: The workload of Jalapeño's published absolute numbers (model, ISL, OSL): only gpt-oss-120b at 8k/1k.
PUBLISHED_WORKLOAD = ("gpt-oss-120b", 8192, 1024)

#: Every row :func:`power_basis_table` can give, by the name its column ``basis`` shows: the bases of
#: :data:`jalapeno.power.POWER_BASES`, and two mixes of Jalapeño's sustained power with another basis.
POWER_BASIS_ROWS = ("rated", "sustained", "sustained, both", "all-in-proportional", "all-in-per-chip",
                    "all-in-per-chip, sustained", "facility")

#: The bases the comparison of *Reading the numbers* shows (:func:`power_basis_table`'s default).
COMPARISON_BASES = ("rated", "sustained", "all-in-proportional")


def run_order(run_id: str) -> tuple:
    """The sort key of a run id, oldest first: InferenceMAX's GitHub run ids by number, then a reader's
    runs (``jalapeno build --measurements``) named otherwise, by name."""
    return (0, int(run_id), "") if run_id.isdigit() else (1, 0, run_id)


def resolve_run(model: str, hw: str, isl: int, osl: int, run_id: str = "auto") -> str:
    """The run to read: ``auto`` is the run the published figures cite for that configuration if there
    is one, else the latest run measured (the highest GitHub run id; a reader's run named otherwise, as
    its file's name, counts as later, :func:`run_order`); an explicit id must exist for the configuration."""
    pts = measured.require(measured.points(model, hw, isl=isl, osl=osl), f"{model} on {hw} at {isl}/{osl}")
    runs = sorted(pts["run_id"].unique(), key=run_order)
    if run_id == "auto":
        return PUBLISHED_RUNS.get((specs.model(model).model, hw, isl, osl), runs[-1])
    if run_id not in runs:
        raise UnknownNameError("run id", run_id, runs)
    return run_id


@dataclass(frozen=True)
class BaselineSummary:
    """The baseline side of the comparison, from one run's raw points (SI units): the run (``run_id``),
    the power its throughput is divided by (``baseline_power_w``, W), the highest-throughput point's
    ``peak_tput_per_gpu`` (input + output tokens/s per GPU), ``peak_conc`` and ``tok_s_per_kw`` (that
    throughput over ``baseline_power_w``), and the lowest-concurrency point's ``single_conc``, mean
    ``tpot_s``, ``e2e_s`` and ``ttft_s`` (s) and ``interactivity_tok_s_user`` (1 / mean TPOT)."""

    run_id: str
    baseline_power_w: float
    peak_tput_per_gpu: float
    peak_conc: int
    tok_s_per_kw: float
    single_conc: int
    tpot_s: float
    e2e_s: float
    ttft_s: float
    interactivity_tok_s_user: float


def baseline_summary(model: str = "gpt-oss-120b", hw: str = "gb200", *, isl: int = 8192, osl: int = 1024,
                     run_id: str = "auto", baseline_power_w: float | None = None) -> BaselineSummary:
    """The :class:`BaselineSummary` of ``hw`` serving ``model`` at ``isl``/``osl`` in run ``run_id``
    (no speculative decoding), its throughput divided by ``baseline_power_w`` (W; default the chip's rated
    TDP, :func:`jalapeno.power.power_w`). Raises ValueError for a non-positive power, UnknownNameError for
    an unknown model, hardware or run."""
    run = resolve_run(model, hw, isl, osl, run_id)
    pts = measured.points(model, hw, isl=isl, osl=osl, run_id=run)
    if baseline_power_w is None:
        baseline_power_w = power.power_w(calibration.chip_of(hw), "rated")
    if baseline_power_w is None or not baseline_power_w > 0:
        raise ValueError(f"baseline_power_w must be a positive number of watts, got {baseline_power_w!r}")
    best = pts.sort("tput_per_gpu", descending=True).row(0, named=True)
    single = pts.sort("conc").row(0, named=True)
    return BaselineSummary(
        run_id=run, baseline_power_w=float(baseline_power_w),
        peak_tput_per_gpu=best["tput_per_gpu"], peak_conc=best["conc"],
        tok_s_per_kw=metrics.throughput_per_kw(best["tput_per_gpu"], baseline_power_w),
        single_conc=single["conc"], tpot_s=single["mean_tpot"], e2e_s=single["mean_e2el"],
        ttft_s=single["mean_ttft"], interactivity_tok_s_user=1.0 / single["mean_tpot"])


def runs_table(model: str = "gpt-oss-120b", hw: str = "gb200", *, isl: int = 8192, osl: int = 1024,
               baseline_power_w: float | None = None) -> pl.DataFrame:
    """One row per measured run of a configuration: its peak tok/s/kW (at ``baseline_power_w``, as
    :func:`baseline_summary`) and its lowest-concurrency TPOT and E2E, to show how much repeated runs of
    one configuration differ."""
    pts = measured.points(model, hw, isl=isl, osl=osl)
    rows = [asdict(baseline_summary(model, hw, isl=isl, osl=osl, run_id=r, baseline_power_w=baseline_power_w))
            for r in sorted(pts["run_id"].unique(), key=run_order)]
    return pl.DataFrame(rows).select(
        "run_id", "peak_conc", "peak_tput_per_gpu", "tok_s_per_kw", "single_conc",
        (pl.col("tpot_s") * 1e3).alias("tpot_ms"), "e2e_s", "ttft_s")


def headline_ratio_arithmetic() -> pl.DataFrame:
    """Each headline ratio of the seeds next to the ratio the published absolute numbers give.

    Columns: ``ratio``, ``numerator``, ``denominator`` (claim ids), ``computed``, ``published_low``,
    ``published_high``, ``in_range_as_printed`` (the computed ratio lies in the published range widened by its printed
    rounding of 0.05)."""
    v = claim_value
    cases = [
        ("per-watt throughput, gpt-oss", "gptoss-jalapeno-tok-per-kw", "gptoss-gb200-tok-per-kw", "headline-per-watt-ratio", False),
        ("E2E latency, gpt-oss", "gptoss-gb200-e2e", "gptoss-jalapeno-e2e", "headline-e2e-ratio", False),
        ("TBT, gpt-oss", "gptoss-gb200-tbt", "gptoss-jalapeno-tbt", "single-user-speed-ratio-gptoss", False),
        ("single-user speed, gpt-oss", "gptoss-jalapeno-single-user", "gptoss-gb200-single-user", "single-user-speed-ratio-gptoss", False),
        ("single-user speed, DeepSeek-R1", "dsr1-jalapeno-single-user", "dsr1-baseline-single-user", "single-user-speed-ratio-dsr1", False),
        ("E2E latency as a reduction (%)", "headline-e2e-ratio", None, "headline-e2e-reduction-pct", True),
    ]
    rows = []
    for label, num, den, ref, pct in cases:
        if pct:
            lo, hi = 100 * (1 - 1 / v(num)), 100 * (1 - 1 / v(num, high=True))
            computed = f"{number(lo):.1f}–{number(hi):.1f}"
            within = abs(lo - v(ref)) <= 0.5 and abs(hi - v(ref, high=True)) <= 0.5
        else:
            r = v(num) / v(den)
            computed = f"{number(r):.3f}"
            within = v(ref) - 0.05 <= r < v(ref, high=True) + 0.05
        rows.append({"ratio": label, "numerator": num, "denominator": den or "", "computed": computed,
                     "published_low": v(ref), "published_high": v(ref, high=True), "in_range_as_printed": within})
    return pl.DataFrame(rows)


def power_basis_table(baseline: BaselineSummary | None = None, *, bases: tuple[str, ...] = COMPARISON_BASES,
                      jalapeno_sustained_w: float | None = None, jalapeno_allin_w: float | None = None,
                      pue: float | None = None, baseline_hw: str = "gb200") -> pl.DataFrame:
    """Tokens/s/kW at peak of Jalapeño and the baseline under each of ``bases``, and their ratio: one row
    per basis, in the order given.

    Throughputs per chip: Jalapeño's published tok/s/kW times its rated TDP (claims
    ``gptoss-jalapeno-tok-per-kw``, ``jalapeno-tdp``); the baseline's highest measured tok/s per GPU
    (``baseline``, default :func:`baseline_summary` of ``baseline_hw``). Watts per chip come from
    :mod:`jalapeno.power`, Jalapeño's host and network watts from the baseline's own all-in power (its
    ``reference``), so that both sides of an all-in ratio change together. The bases
    (:data:`POWER_BASIS_ROWS`):

    - ``rated``: TDP both (the published basis: 85,448 and 44,960 tok/s/kW); the baseline at
      ``baseline.baseline_power_w``, by default its TDP;
    - ``sustained``: Jalapeño's measured sustained power (default the published 550 W,
      ``jalapeno_sustained_w`` otherwise); the baseline's sustained draw is not published, so it stays at
      its rated power: a generous assumption for Jalapeño;
    - ``sustained, both``: the baseline also at Jalapeño's sustained / rated fraction;
    - ``all-in-proportional``: InferenceX's all-in power for the baseline; Jalapeño's all-in is not
      published, so its TDP is scaled by the baseline's all-in / TDP ratio (GB200's: 1,225 W), unless
      ``jalapeno_allin_w`` says otherwise;
    - ``all-in-per-chip``: the baseline's all-in power; the baseline's host and network watts added to
      Jalapeño's TDP (GB200's: 1,600 W);
    - ``all-in-per-chip, sustained``: as ``all-in-per-chip`` on Jalapeño's sustained power;
    - ``facility``: ``all-in-per-chip`` times ``pue`` on both sides (default: the central PUE of
      ``whatif_ranges.csv``).

    Columns: ``basis``, ``jalapeno_w``, ``baseline_w`` (W), ``jalapeno_tok_s_kw``, ``baseline_tok_s_kw``,
    ``ratio`` (Jalapeño / baseline). UnknownNameError for a basis not in :data:`POWER_BASIS_ROWS`,
    ValueError when the baseline chip has no published all-in power."""
    unknown = [b for b in bases if b not in POWER_BASIS_ROWS]
    if unknown:
        raise UnknownNameError("power basis", unknown[0], POWER_BASIS_ROWS)
    baseline = baseline or baseline_summary(hw=baseline_hw)
    chip = specs.chip(calibration.chip_of(baseline_hw))
    if chip.allin_power_w is None:
        raise ValueError(f"no all-in power is published for {chip.chip!r}")
    ref = chip.chip  # Jalapeño's unpublished all-in power is scaled from the baseline's own, so both sides move together
    j_tdp = power.power_w("jalapeno", "rated")
    j_tput = claim_value("gptoss-jalapeno-tok-per-kw") * j_tdp / 1e3  # tok/s/kW x kW: tok/s per chip
    j_sus = power.power_w("jalapeno", "sustained", sustained_w=jalapeno_sustained_w)
    b_tput, b_power = baseline.peak_tput_per_gpu, baseline.baseline_power_w
    watts = {  # basis -> (Jalapeño's watts, the baseline's), computed when asked for
        "rated": lambda: (j_tdp, b_power),
        "sustained": lambda: (j_sus, b_power),
        "sustained, both": lambda: (j_sus, b_power * j_sus / j_tdp),
        "all-in-proportional": lambda: (jalapeno_allin_w or power.power_w("jalapeno", "all-in-proportional", reference=ref),
                                        power.power_w(chip, "all-in-proportional")),
        "all-in-per-chip": lambda: (power.power_w("jalapeno", "all-in-per-chip", reference=ref),
                                    power.power_w(chip, "all-in-per-chip")),
        "all-in-per-chip, sustained": lambda: (
            power.PowerStack(j_sus, power.host_network_w("jalapeno", "per-chip", ref)).total_w,
            power.power_w(chip, "all-in-per-chip")),
        "facility": lambda: (power.power_w("jalapeno", "facility", pue=pue, reference=ref),
                             power.power_w(chip, "facility", pue=pue)),
    }
    out = []
    for basis in bases:
        jw, bw = watts[basis]()
        j_kw, b_kw = metrics.throughput_per_kw(j_tput, jw), metrics.throughput_per_kw(b_tput, bw)
        out.append({"basis": basis, "jalapeno_w": jw, "baseline_w": bw, "jalapeno_tok_s_kw": j_kw,
                    "baseline_tok_s_kw": b_kw, "ratio": j_kw / b_kw})
    return pl.DataFrame(out)


def _grid(start: float, stop: float, step: float, value: float) -> tuple[float, ...]:
    """``start`` to ``stop`` by ``step``, with ``value`` added, sorted; each rounded to 1e-9, so a value
    on the grid but for its last bits (1225 W computed as 700 W x 1.75) is the grid's point, not a second one."""
    n = int(round((stop - start) / step))
    return tuple(sorted({round(start + i * step, 9) for i in range(n + 1)} | {round(float(value), 9)}))


def power_basis_grid(baseline: BaselineSummary, *, jalapeno_sustained_w: float | None = None,
                     jalapeno_allin_w: float | None = None, baseline_hw: str = "gb200",
                     sustained_range_w: tuple[float, float, float] = (300.0, 700.0, 25.0),
                     allin_range_w: tuple[float, float, float] = (700.0, 1750.0, 12.5)) -> pl.DataFrame:
    """:func:`power_basis_table` at every position of two sliders (Jalapeño's sustained power and its
    all-in power per chip), one bar per row, for :func:`jalapeno.chapters.reading_the_numbers.power_bases_explorable`.

    Each range is ``(start, stop, step)`` in watts; the grid adds the effective value of
    ``jalapeno_sustained_w`` and ``jalapeno_allin_w`` (as :func:`power_basis_table` resolves them), where
    the sliders start. Columns: ``basis``, ``chip`` (``jalapeno`` or ``baseline``), ``watts`` (W),
    ``tok_s_kw``, ``ratio`` (Jalapeño / baseline, empty on the baseline's rows),
    ``jalapeno_sustained_w`` and ``jalapeno_allin_w`` (W: the slider position a row belongs to, empty
    where the row does not depend on that slider). The baseline's bars do not move: its sustained draw is
    not published (its rated power stands in) and its all-in power is InferenceX's. Errors as
    :func:`power_basis_table`."""
    def table(sustained: float | None, allin: float | None) -> pl.DataFrame:
        return power_basis_table(baseline, jalapeno_sustained_w=sustained, jalapeno_allin_w=allin,
                                 baseline_hw=baseline_hw)

    base = table(jalapeno_sustained_w, jalapeno_allin_w)
    row = {r["basis"]: r for r in base.iter_rows(named=True)}
    s0, a0 = row["sustained"]["jalapeno_w"], row["all-in-proportional"]["jalapeno_w"]
    rows = []
    for r in base.iter_rows(named=True):
        rows.append({"basis": r["basis"], "chip": "baseline", "watts": r["baseline_w"],
                     "tok_s_kw": r["baseline_tok_s_kw"], "ratio": None,
                     "jalapeno_sustained_w": None, "jalapeno_allin_w": None})
    rows.append({"basis": "rated", "chip": "jalapeno", "watts": row["rated"]["jalapeno_w"],
                 "tok_s_kw": row["rated"]["jalapeno_tok_s_kw"], "ratio": row["rated"]["ratio"],
                 "jalapeno_sustained_w": None, "jalapeno_allin_w": None})
    for basis, grid in (("sustained", _grid(*sustained_range_w, s0)),
                        ("all-in-proportional", _grid(*allin_range_w, a0))):
        for w in grid:
            r = table(w if basis == "sustained" else s0, w if basis == "all-in-proportional" else a0) \
                .filter(pl.col("basis") == basis).row(0, named=True)
            rows.append({"basis": basis, "chip": "jalapeno", "watts": r["jalapeno_w"], "tok_s_kw": r["jalapeno_tok_s_kw"],
                         "ratio": r["ratio"], "jalapeno_sustained_w": w if basis == "sustained" else None,
                         "jalapeno_allin_w": w if basis == "all-in-proportional" else None})
    return pl.DataFrame(rows, schema={"basis": pl.String, "chip": pl.String, "watts": pl.Float64,
                                      "tok_s_kw": pl.Float64, "ratio": pl.Float64,
                                      "jalapeno_sustained_w": pl.Float64, "jalapeno_allin_w": pl.Float64})


def e2e_decomposition(osl_nominal: int = 1024) -> pl.DataFrame:
    """What TTFT each published E2E implies if it came from the same requests as the published TBT:
    ``TTFT = E2E - TBT x (mean OSL - 1)``, with the benchmark's mean output length."""
    osl = metrics.mean_request_length(osl_nominal)
    rows = []
    for chip, e2e_id, tbt_id in (("jalapeno", "gptoss-jalapeno-e2e", "gptoss-jalapeno-tbt"),
                                 ("gb200", "gptoss-gb200-e2e", "gptoss-gb200-tbt")):
        e2e, tbt = claim_value(e2e_id), claim_value(tbt_id) / 1e3
        rows.append({"chip": chip, "e2e_s": e2e, "tbt_ms": tbt * 1e3, "mean_osl": osl,
                     "decode_s": tbt * (osl - 1), "implied_ttft_s": metrics.implied_ttft_s(e2e, tbt, osl)})
    return pl.DataFrame(rows)


def implied_osl(isl: int = 8192, osl: int = 1024) -> pl.DataFrame:
    """Per measured single-node or disaggregated point of a workload shape, the output length its own
    E2E, TTFT and TPOT imply (``(E2E - TTFT) / TPOT + 1``), with ``mean_osl`` the benchmark's mean."""
    pts = measured.points(isl=isl, osl=osl)
    return pts.select("hw", "framework", "conc", "run_id",
                      metrics.implied_osl_tokens(pl.col("mean_e2el"), pl.col("mean_ttft"), pl.col("mean_tpot"))
                      .alias("implied_osl"))


def compare_published(summary: BaselineSummary) -> pl.DataFrame:
    """The baseline numbers of :func:`baseline_summary` next to the published GB200 gpt-oss-120b ones:
    ``quantity``, ``computed``, ``published``, ``agrees`` (equal to the published printed rounding)."""
    cases = [("tok/s/kW at peak throughput", summary.tok_s_per_kw, "gptoss-gb200-tok-per-kw", 0),
             ("TPOT at concurrency 1 (ms)", summary.tpot_s * 1e3, "gptoss-gb200-tbt", 2),
             ("E2E at concurrency 1 (s)", summary.e2e_s, "gptoss-gb200-e2e", 2),
             ("interactivity at concurrency 1 (tok/s/user)", summary.interactivity_tok_s_user, "gptoss-gb200-single-user", 0)]
    return pl.DataFrame([{"quantity": q, "computed": c, "published": claim_value(cid),
                          "agrees": rounds_to(c, claim_value(cid), d)} for q, c, cid, d in cases])


def published_vs_roofline(*, context_tokens: int = 8192, weight_precision: str = "fp4",
                          kv_precision: str = "fp8", isl: int = 8192, osl: int = 1024) -> pl.DataFrame:
    """Best single-user speeds (published for Jalapeño, measured for GB200 without speculative decoding)
    against the speed-of-light batch-1 decode bound on the fewest chips that hold the weights.

    Columns: ``model``, ``chip``, ``source``, ``tok_s_user``, ``min_chips``, ``bound_tok_s_user``,
    ``fraction_of_bound``."""
    cases = [("gpt-oss-120b", "jalapeno", "published", claim_value("gptoss-jalapeno-single-user")),
             ("deepseek-r1", "jalapeno", "published", claim_value("dsr1-jalapeno-single-user"))]
    for m in ("gpt-oss-120b", "deepseek-r1"):
        pts = measured.points(m, "gb200", isl=isl, osl=osl)
        cases.append((m, "gb200", "measured (best, no MTP)", float((1.0 / pts["mean_tpot"]).max())))
    rows = []
    for m, c, source, speed in cases:
        if not bounds.has_precision(specs.chip(c), weight_precision):
            continue
        b = bounds.decode_bounds([specs.model(m)], [specs.chip(c)], context_tokens=context_tokens,
                                   weight_precision=weight_precision, kv_precision=kv_precision).row(0, named=True)
        rows.append({"model": m, "chip": c, "source": source, "tok_s_user": speed, "min_chips": b["min_chips"],
                     "bound_tok_s_user": b["batch1_interactivity_tok_s_user"],
                     "fraction_of_bound": speed / b["batch1_interactivity_tok_s_user"]})
    return pl.DataFrame(rows)
