"""The claims registry: every claim of the seed articles with one status that means one thing.

``data/claims.csv`` registers each claim, the seeds that state it and its treatment
(:data:`jalapeno.data.TREATMENTS`). "Published" means stated in OpenAI's results *as relayed by the five
seed articles* (``data/seeds.csv``), never OpenAI's own material. This module gives each claim a status
(:data:`STATUSES`):

- ``reproduced`` / ``not reproduced``: recomputed from the measured InferenceMAX data, equal or not within
  the claim's printed rounding;
- ``consistent`` / ``inconsistent``: an arithmetic check between independent sources (other claims,
  published specs, public facts), with interval arithmetic on the printed rounding (0.69 ms stands for
  [0.685, 0.695) ms);
- ``predicted, agrees`` / ``predicted, disagrees``: a model's prediction (a band over Jalapeño's
  scenarios) judged against the published value by :func:`jalapeno.uncertainty.judge`, the one place that
  decides it;
- ``fit-determined``: a check that agrees but reads a fit target (its :class:`ClaimsView` records the
  claims it reads): its value follows from a number Jalapeño's constants were fitted to, so the agreement
  holds by construction and is no evidence (a disagreeing one keeps its status);
- ``fit target``: a value Jalapeño's constants are fitted to (the claims
  :attr:`jalapeno.subject.JalapenoFit.target_claims` names): reproduced by construction, no evidence;
- ``restated``: both ends of the comparison share one source (a spec row transcribed from the claim
  itself); a mismatch would be ``inconsistent``, a match says only that the transcription is faithful;
- ``conflicting``: two seeds disagree (the other claim in ``conflicts_with``);
- ``not checkable``: no public data or computation can check it; ``check`` says why.

Only :data:`AGREEING` (``reproduced``, ``consistent``, ``predicted, agrees``) count as agreement, and
only a check that computed a value and read no fit target can give one. Beside the status, each claim
carries where the published value lies against what the book computes (``published_vs_computed``: above
or below the band, or where in it), the claims its check read (``reads``) and the computation it shares
with other claims (``computation``), so that a count of agreement counts each computation once.

Each check is a function of this module registered under the claim id it checks, with its kind
(:data:`KIND_STATUSES`). A check reads the claims it relates through a :class:`ClaimsView`, never a
literal copied from them, so that :func:`claims` and :func:`claim_status` can run every check on a modified
claims table in memory (``claims(table)``) without writing a file.
"""

from __future__ import annotations

import datetime
import functools
import math
from dataclasses import dataclass
from typing import Callable

import polars as pl

from . import agents, cache, data, measured, metrics, network, pareto, specs, subject, systems, uncertainty
from .caveats import measured_chip_comparison
from .comparison import baseline_summary
from .data import fact
from .display import cell, formatted, number, scientific
from .errors import DataError, UnknownNameError
from .metrics import half_ulp, rounds_to

#: Every status, in the order the book shows them.
STATUSES = ("reproduced", "not reproduced", "consistent", "inconsistent", "predicted, agrees",
            "predicted, disagrees", "fit-determined", "fit target", "restated", "conflicting", "not checkable")

#: The statuses that count as agreement with the published value.
AGREEING = ("reproduced", "consistent", "predicted, agrees")

#: The status a check of each kind gives when it agrees and when it does not.
KIND_STATUSES = {"reproduce": ("reproduced", "not reproduced"), "arithmetic": ("consistent", "inconsistent"),
                 "restate": ("restated", "inconsistent"), "predict": ("predicted, agrees", "predicted, disagrees")}


# ---- a published range met by a prediction -------------------------------------------------------------

def published_point(low: float, high: float, band: tuple[float, float]) -> float:
    """The point of a published range ``[low, high]`` nearest a model's ``band``: what is
    given for a range claim by :func:`jalapeno.uncertainty.judge` (a band overlapping the range meets it at a point inside both)."""
    return min(max(0.5 * (band[0] + band[1]), low), high)


# ---- the claims a check reads ---------------------------------------------------------------------------

#: Seconds per unit of a claimed duration (:meth:`ClaimsView.seconds`).
SECONDS = {"ms": 1e-3, "s": 1.0}


def claim_date(value: float) -> datetime.date:
    """A claim's value stored as a date ``YYYYMMDD`` (``20260825``, unit ``date (YYYYMMDD)``) as a
    :class:`datetime.date`; ValueError if it is not a valid date."""
    d = int(value)
    return datetime.date(d // 10000, d // 100 % 100, d % 100)


class ClaimsView:
    """The claims a check reads: ``data/claims.csv`` by default, or any table with its columns (a copy
    with one value changed, for a test). ``value(id)``, ``high(id)`` (the high end, else the value),
    ``date(id)``; UnknownNameError listing the ids for an unknown claim. ``read``: the ids read so far
    (:meth:`recording` gives a view of the same claims with none), from which :func:`claim_status` tells
    a check that rests on a fit target."""

    def __init__(self, table: pl.DataFrame | None = None):
        self.table = data.claims_table() if table is None else table
        self._rows = {r["claim_id"]: r for r in self.table.iter_rows(named=True)}
        self.read: set[str] = set()

    def recording(self) -> ClaimsView:
        """A view of the same claims whose ``read`` starts empty."""
        view = object.__new__(ClaimsView)
        view.table, view._rows, view.read = self.table, self._rows, set()
        return view

    def row(self, claim_id: str) -> dict:
        if claim_id not in self._rows:
            raise UnknownNameError("claim", claim_id, list(self._rows))
        self.read.add(claim_id)
        return self._rows[claim_id]

    def value(self, claim_id: str) -> float:
        return float(self.row(claim_id)["value"])

    def high(self, claim_id: str) -> float:
        r = self.row(claim_id)
        return float(r["value_high"] if r["value_high"] is not None else r["value"])

    def date(self, claim_id: str) -> datetime.date:
        return claim_date(self.value(claim_id))

    def seconds(self, claim_id: str) -> float:
        """A duration claim's value in seconds (its unit a key of :data:`SECONDS`); KeyError for another unit."""
        return self.value(claim_id) * SECONDS[self.row(claim_id)["unit"]]


@dataclass(frozen=True)
class Result:
    """Outcome of one check: the computed value as text, whether it agrees, and how it was computed;
    ``published_vs_computed``: where the published value lies against the computed one (None where the
    check gives no direction); ``computation``: a name the checks sharing one computation share (None: the
    check's own)."""

    computed: str
    agrees: bool
    detail: str
    published_vs_computed: str | None = None
    computation: str | None = None


@dataclass(frozen=True)
class Check:
    """A registered check: its kind (a key of :data:`KIND_STATUSES`) and the function of a
    :class:`ClaimsView` that computes it."""

    kind: str
    fn: Callable[[ClaimsView], Result]

    def __call__(self, view: ClaimsView | None = None) -> Result:
        return self.fn(view or ClaimsView())


CHECKS: dict[str, Check] = {}


def check(claim_id: str, kind: str):
    if kind not in KIND_STATUSES:
        raise UnknownNameError("check kind", kind, list(KIND_STATUSES))

    def register(fn: Callable[[ClaimsView], Result]) -> Callable[[ClaimsView], Result]:
        CHECKS[claim_id] = Check(kind, fn)
        return fn
    return register


def _cmp(computed: float, printed: float, decimals: int, how: str, fmt: str = "{:.4g}") -> Result:
    ok = rounds_to(computed, printed, decimals)
    return Result(formatted(computed, fmt), ok, how,
                  None if ok else "above the computed value" if printed > computed else "below the computed value")


def position(published: float, low: float, high: float, median: float) -> str:
    """Where ``published`` lies against a prediction's band (``low``, ``high``) and its ``median``: ``above
    the band``, ``below the band``, or ``in the band, above its median`` / ``below its median`` (at the
    median: ``in the band, at its median``)."""
    if published > high:
        return "above the band"
    if published < low:
        return "below the band"
    return "in the band, " + ("above its median" if published > median else "below its median" if published < median
                              else "at its median")


def _predicted(band: uncertainty.Band, published: float, how: str, computation: str | None = None) -> Result:
    """A prediction's result: ``band`` (:class:`jalapeno.uncertainty.Band`) judged against ``published``
    by :func:`jalapeno.uncertainty.judge`, the one judge of every prediction, its ends as every band is
    shown (:meth:`jalapeno.uncertainty.Band.ends_text`); ValueError for a band of zero width (a
    prediction always carries its error)."""
    if not band.low < band.high:
        raise ValueError(f"a prediction's band must have a width, got {band.low!r}–{band.high!r}")
    return Result(band.ends_text(), uncertainty.judge(published, band) == "agrees",
                  how, position(published, band.low, band.high, band.median), computation)


def _reads(c: ClaimsView, *claim_ids: str) -> str:
    """Read ``claim_ids`` through the view (so that :func:`claim_status` sees the fit targets a model
    prediction rests on) and name them for the check's text."""
    for cid in claim_ids:
        c.row(cid)
    return ", ".join(claim_ids)


def _data_stamp() -> tuple:
    """The data files' names, sizes and modification times. The model results below are memoised
    (``functools.cache``) under it, so they are recomputed when ``data/`` (or the folder
    ``JALAPENO_DATA_DIR`` names) changes, and the registry can be re-evaluated on a changed claims table
    in a fraction of a second: none of them reads a claim it is compared with."""
    folder = data.data_dir()
    return (str(folder),) + tuple(sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns)
                                         for p in folder.rglob("*.csv")))


# ---- reproduced from the measured data --------------------------------------------------------------

@check("gptoss-gb200-tok-per-kw", "reproduce")
def check_gptoss_gb200_tok_per_kw(c: ClaimsView) -> Result:
    h = baseline_summary(baseline_power_w=c.value("gb200-tdp"))
    return _cmp(h.tok_s_per_kw, c.value("gptoss-gb200-tok-per-kw"), 0,
                f"run {h.run_id}: highest tput_per_gpu {number(h.peak_tput_per_gpu):.1f} tok/s (conc "
                f"{h.peak_conc}) / {number(h.baseline_power_w / 1e3):.1f} kW", "{:,.1f}")


@check("gptoss-gb200-tbt", "reproduce")
def check_gptoss_gb200_tbt(c: ClaimsView) -> Result:
    h = baseline_summary()
    return _cmp(h.tpot_s * 1e3, c.value("gptoss-gb200-tbt"), 2, f"run {h.run_id}, conc {h.single_conc}: mean TPOT")


@check("gptoss-gb200-e2e", "reproduce")
def check_gptoss_gb200_e2e(c: ClaimsView) -> Result:
    h = baseline_summary()
    return _cmp(h.e2e_s, c.value("gptoss-gb200-e2e"), 2, f"run {h.run_id}, conc {h.single_conc}: mean E2E")


@check("gptoss-gb200-single-user", "reproduce")
def check_gptoss_gb200_single_user(c: ClaimsView) -> Result:
    h = baseline_summary()
    return _cmp(h.interactivity_tok_s_user, c.value("gptoss-gb200-single-user"), 0,
                f"run {h.run_id}, conc {h.single_conc}: 1 / mean TPOT", "{:.1f}")


def _workload_points(c: ClaimsView, claim_id: str, column: str) -> Result:
    """The measured points of the published pair (gpt-oss-120b on GB200) at the nominal length
    ``claim_id`` states in ``column`` (``isl`` or ``osl``): the claim holds when there are any."""
    length = c.value(claim_id)
    pts = measured.points("gpt-oss-120b", "gb200", **{column: int(length)}) if length.is_integer() else \
        measured.points("gpt-oss-120b", "gb200").clear()
    runs = sorted(set(pts["run_id"]))
    return Result(f"{pts.height} points", pts.height > 0,
                  f"InferenceMAX points of the published pair (gpt-oss-120b on GB200) with nominal "
                  f"{column.upper()} {number(length):,.0f} (measured/inferencemax.csv; runs {', '.join(runs) or 'none'}); "
                  f"the benchmark draws each length uniformly in [0.8 L, L], so the mean is "
                  f"{number(metrics.mean_request_length(int(length))):,.1f}")


@check("workload-isl", "reproduce")
def check_workload_isl(c: ClaimsView) -> Result:
    return _workload_points(c, "workload-isl", "isl")


@check("workload-osl", "reproduce")
def check_workload_osl(c: ClaimsView) -> Result:
    return _workload_points(c, "workload-osl", "osl")


# ---- consistency by arithmetic ------------------------------------------------------------------------

@check("gptoss-jalapeno-single-user", "arithmetic")
def check_gptoss_jalapeno_single_user(c: ClaimsView) -> Result:
    tbt = c.value("gptoss-jalapeno-tbt")
    low, high = 1e3 / (tbt + half_ulp(2)), 1e3 / (tbt - half_ulp(2))
    claimed = c.value("gptoss-jalapeno-single-user")
    return Result(f"{number(low):,.0f}–{number(high):,.0f}", low <= claimed <= high,
                  f"1 / TBT with TBT printed as {number(tbt)} ms, i.e. in [{number(tbt - half_ulp(2)):.3f}, {number(tbt + half_ulp(2)):.3f}) ms")


@check("headline-e2e-reduction-pct", "arithmetic")
def check_headline_e2e_reduction_pct(c: ClaimsView) -> Result:
    low, high = 100 * (1 - 1 / c.value("headline-e2e-ratio")), 100 * (1 - 1 / c.high("headline-e2e-ratio"))
    ok = rounds_to(low, c.value("headline-e2e-reduction-pct"), 0) and rounds_to(high, c.high("headline-e2e-reduction-pct"), 0)
    return Result(f"{number(low):.1f}–{number(high):.1f}", ok,
                  f"1 - 1/ratio for the {number(c.value('headline-e2e-ratio')):g}–{number(c.high('headline-e2e-ratio')):g}x latency ratios")


@check("single-user-speed-ratio-gptoss", "arithmetic")
def check_single_user_speed_ratio_gptoss(c: ClaimsView) -> Result:
    j, g = c.value("gptoss-jalapeno-single-user"), c.value("gptoss-gb200-single-user")
    return _cmp(j / g, c.value("single-user-speed-ratio-gptoss"), 1, f"{number(j):,.0f} / {number(g):,.0f} tok/s/user", "{:.3f}")


@check("single-user-speed-ratio-dsr1", "arithmetic")
def check_single_user_speed_ratio_dsr1(c: ClaimsView) -> Result:
    j, b = c.value("dsr1-jalapeno-single-user"), c.value("dsr1-baseline-single-user")
    return _cmp(j / b, c.value("single-user-speed-ratio-dsr1"), 1, f"{number(j):,.0f} / {number(b):,.0f} tok/s/user", "{:.3f}")


#: A range printed with one decimal (1.5–1.9x) stands for values that round to it.
_RANGE_HALF_ULP = half_ulp(1)


def _ratio_in_printed_range(c: ClaimsView, claim_id: str, num_id: str, den_id: str, kimi_id: str, what: str,
                            fmt: str) -> Result:
    """Whether the per-model ratios the seeds give lie in the range ``claim_id`` prints over three models
    (one decimal each end): gpt-oss-120b's from its published numbers (``num_id / den_id``), Kimi K2.5's
    as published (``kimi_id``); DeepSeek-R1's is not published, so an end neither meets is unchecked and
    the text says so."""
    num, den, kimi = c.value(num_id), c.value(den_id), c.value(kimi_id)
    r, low, high = num / den, c.value(claim_id), c.high(claim_id)
    inside = [low - _RANGE_HALF_ULP <= x < high + _RANGE_HALF_ULP for x in (r, kimi)]
    ends = [name for name, end in (("low", low), ("high", high))
            if not any(abs(x - end) < _RANGE_HALF_ULP for x in (r, kimi))]
    return Result(f"{cell(r, 3)}x (gpt-oss), {number(kimi):g}x (Kimi K2.5, as published)", all(inside),
                  f"{formatted(num, fmt)} / {formatted(den, fmt)} {what} (gpt-oss-120b) and Kimi K2.5's published "
                  f"{number(kimi):g}x ({kimi_id}) must lie in the {number(low):g}–{number(high):g}x range as printed; "
                  + (f"the {' and '.join(ends)} end{'s' if len(ends) > 1 else ''} of the range (DeepSeek-R1's, not "
                     "published) no published value checks" if ends else "both ends are published per-model values"))


@check("headline-per-watt-ratio", "arithmetic")
def check_headline_per_watt_ratio(c: ClaimsView) -> Result:
    return _ratio_in_printed_range(c, "headline-per-watt-ratio", "gptoss-jalapeno-tok-per-kw", "gptoss-gb200-tok-per-kw",
                                   "kimi-per-watt-ratio", "tok/s/kW", "{:,.0f}")


@check("headline-e2e-ratio", "arithmetic")
def check_headline_e2e_ratio(c: ClaimsView) -> Result:
    return _ratio_in_printed_range(c, "headline-e2e-ratio", "gptoss-gb200-e2e", "gptoss-jalapeno-e2e", "kimi-e2e-ratio",
                                   "s", "{:.2f}")


@check("groq-lpx-rack-sram", "arithmetic")
def check_groq_lpx_rack_sram(c: ClaimsView) -> Result:
    n, mb = c.value("groq-lpx-chips-per-rack"), c.value("groq-lpu-sram")
    return _cmp(n * mb / 1e3, c.value("groq-lpx-rack-sram"), 0, f"{number(n):,.0f} LPUs x {number(mb):,.0f} MB (GB = 1e9 B)", "{:.0f}")


@check("groq-lpx-chips-deepseek-v3", "arithmetic")
def check_groq_lpx_chips_deepseek_v3(c: ClaimsView) -> Result:
    params = specs.model("deepseek-r1").total_params()
    n = params * 1.0 / (c.value("groq-lpu-sram") * 1e6)
    return _cmp(n, c.value("groq-lpx-chips-deepseek-v3"), 0,
                f"DeepSeek-V3 {number(params / 1e9):.1f} B parameters x 1 byte (8 bits) / {number(c.value('groq-lpu-sram')):,.0f} MB "
                "per LPU, weights only", "{:.1f}")


@check("groq-lpx-racks-deepseek-v3", "arithmetic")
def check_groq_lpx_racks_deepseek_v3(c: ClaimsView) -> Result:
    chips, per_rack = c.value("groq-lpx-chips-deepseek-v3"), c.value("groq-lpx-chips-per-rack")
    racks = chips / per_rack
    return Result(f"{number(racks):.2f}", racks > c.value("groq-lpx-racks-deepseek-v3"),
                  f"{number(chips):,.0f} chips / {number(per_rack):,.0f} per rack: more than the claimed count")


@check("agent-30-step-saving", "arithmetic")
def check_agent_30_step_saving(c: ClaimsView) -> Result:
    steps, per = c.value("agent-30-steps"), c.value("agent-30-step-per-step-saving")
    saved = steps * c.seconds("agent-30-step-per-step-saving")
    return _cmp(saved, c.value("agent-30-step-saving"), 0,
                f"{number(steps):.0f} dependent steps x {number(per):g} {c.row('agent-30-step-per-step-saving')['unit']} saved each",
                "{:.1f} s")


#: "Nearly" (近) a quantity: at least this share of it and not above it.
NEARLY = 0.75


@check("agent-50-step-saving", "arithmetic")
def check_agent_50_step_saving(c: ClaimsView) -> Result:
    steps, per = c.value("agent-50-steps"), c.value("agent-50-step-per-step-saving")
    saved = steps * c.seconds("agent-50-step-per-step-saving")
    claimed = c.value("agent-50-step-saving")
    return Result(f"{number(saved):.0f} s", NEARLY * claimed <= saved <= claimed,
                  f"{number(steps):.0f} steps x {number(per):g} s saved each: 'nearly' {number(claimed):g} s means {number(NEARLY):.0%} of it or more")


@check("jalapeno-hbm-capacity", "arithmetic")
@check("jalapeno-hbm4-stacks", "arithmetic")
def check_jalapeno_hbm_per_stack(c: ClaimsView) -> Result:
    """Jalapeño's HBM capacity over its stack count against a shipped 12-high HBM4 stack (both claims)."""
    cap, stacks = c.value("jalapeno-hbm-capacity"), c.value("jalapeno-hbm4-stacks")
    shipped_gb = fact("hbm4_12high_stack_capacity") / 1e9
    low, high = (cap - half_ulp(0)) / stacks, (cap + half_ulp(0)) / stacks
    return Result(f"{cell(cap / stacks, 3)} GB per stack", low <= shipped_gb < high,
                  f"{number(cap):g} GB / {number(stacks):g} stacks against the {number(shipped_gb):g} GB of a 12-high HBM4 stack as "
                  "shipped (public_facts.csv: SK hynix)")


@check("jalapeno-hbm-vs-gb300", "arithmetic")
def check_jalapeno_hbm_vs_gb300(c: ClaimsView) -> Result:
    g = specs.chip("gb300")
    r = c.value("jalapeno-hbm-capacity") * 1e9 / g.hbm_capacity_bytes
    return Result(f"{number(r):.2f}", r <= c.value("jalapeno-hbm-vs-gb300"),
                  f"Jalapeño's {number(c.value('jalapeno-hbm-capacity')):g} GB (claim jalapeno-hbm-capacity) over GB300's "
                  f"{number(g.hbm_capacity_bytes / 1e9):g} GB (chip_specs.csv, {g.provenance['hbm_capacity'][0]}: NVIDIA)")


@check("jalapeno-compute-vs-gb300", "arithmetic")
def check_jalapeno_compute_vs_gb300(c: ClaimsView) -> Result:
    g = specs.chip("gb300")
    r = c.value("jalapeno-mxfp4-pflops") * 1e15 / g.peak_flops_per_s("fp4")
    return Result(f"{number(r):.2f}", r <= c.value("jalapeno-compute-vs-gb300"),
                  f"Jalapeño's {number(c.value('jalapeno-mxfp4-pflops')):g} PFLOP/s MXFP4 (claim jalapeno-mxfp4-pflops; dense or "
                  f"sparse not stated) over GB300's {number(g.peak_flops_per_s('fp4') / 1e15):g} PFLOP/s dense FP4 "
                  "(chip_specs.csv: NVIDIA)")


#: Nominal sizes in model names ("120B", "670B", "1T") are round numbers: consistent within 5 %.
NOMINAL_SIZE_TOLERANCE = 0.05


def _nominal_size(c: ClaimsView, claim_id: str, model: str) -> Result:
    """``model``'s total parameters (its config, text model) against the nominal size ``claim_id`` states."""
    total = specs.model(model).total_params()
    ok = abs(total / c.value(claim_id) - 1) <= NOMINAL_SIZE_TOLERANCE
    return Result(f"{cell(total / 1e9, 4)} B", ok,
                  f"total parameters from the {model} config (text model), against the nominal size within "
                  f"{number(NOMINAL_SIZE_TOLERANCE):.0%}")


@check("gptoss-params", "arithmetic")
def check_gptoss_params(c: ClaimsView) -> Result:
    return _nominal_size(c, "gptoss-params", "gpt-oss-120b")


@check("dsr1-params", "arithmetic")
def check_dsr1_params(c: ClaimsView) -> Result:
    return _nominal_size(c, "dsr1-params", "deepseek-r1")


@check("kimi-params", "arithmetic")
def check_kimi_params(c: ClaimsView) -> Result:
    return _nominal_size(c, "kimi-params", "kimi-k2.5")


@check("gemma4-params", "arithmetic")
def check_gemma4_params(c: ClaimsView) -> Result:
    return _nominal_size(c, "gemma4-params", "gemma-4-31b")


# ---- predictions of the serving model ------------------------------------------------------------------

@functools.cache
def _matched_ratio_band(model: str, stamp: tuple) -> dict:
    """The band (:class:`jalapeno.uncertainty.Band`) of ``model``'s matched-interactivity ratio
    (:func:`jalapeno.uncertainty.headline_ratios`), its baseline and the baseline's source, for the state
    of ``data/`` that ``stamp`` (:func:`_data_stamp`) names."""
    t = uncertainty.headline_ratios(uncertainty.ensemble(), [model]).row(0, named=True)
    src = subject.ratio_table([model])
    return {"band": uncertainty.Band(t["ratio_median"], t["ratio_low"], t["ratio_high"]), "baseline": t["baseline"],
            "source": src["baseline_source"][0]}


def _matched_ratio(c: ClaimsView, claim_id: str, model: str) -> Result:
    r = _matched_ratio_band(model, _data_stamp())
    return _predicted(r["band"], c.value(claim_id),
                      f"serving model: Jalapeño (its unknowns drawn from their ranges, with the model's "
                      f"{uncertainty.model_error().scheme} error; {number(uncertainty.BAND[0]):.0%}-{number(uncertainty.BAND[1]):.0%} "
                      f"band) against {r['baseline']} ({r['source']}) at the baseline's best interactivity; judged by "
                      f"uncertainty.judge")


@check("gptoss-matched-tbt-ratio", "predict")
def check_gptoss_matched_tbt_ratio(c: ClaimsView) -> Result:
    return _matched_ratio(c, "gptoss-matched-tbt-ratio", "gpt-oss-120b")


@check("dsr1-matched-tbt-ratio", "predict")
def check_dsr1_matched_tbt_ratio(c: ClaimsView) -> Result:
    return _matched_ratio(c, "dsr1-matched-tbt-ratio", "deepseek-r1")


@check("kimi-matched-tbt-ratio", "predict")
def check_kimi_matched_tbt_ratio(c: ClaimsView) -> Result:
    return _matched_ratio(c, "kimi-matched-tbt-ratio", "kimi-k2.5")


@functools.cache
def _kimi_ratio_band(metric: str, stamp: tuple) -> uncertainty.Band:
    return uncertainty.front_ratio_band(uncertainty.ensemble(), "kimi-k2.5", metric)


def kimi_ratio_band(metric: str) -> uncertainty.Band:
    """The band (:class:`jalapeno.uncertainty.Band`) of one :data:`jalapeno.caveats.METRICS` ratio of
    Jalapeño's Kimi K2.5 frontier against its published baseline's
    (:func:`jalapeno.uncertainty.front_ratio_band`, over the benchmark's concurrency range), once per state
    of ``data/``."""
    return _kimi_ratio_band(metric, _data_stamp())


#: The fit targets that pin each Kimi K2.5 ratio's Jalapeño side: Kimi K2.5 has DeepSeek-R1's 61 MLA
#: layers, so the MLA layer factor fitted to DeepSeek-R1's single-user speed, with the per-layer overhead
#: fitted to gpt-oss-120b's minimum TBT, sets its best TBT and the decode of its E2E; its peak tok/s/kW
#: is throughput-bound, which no Kimi or DeepSeek-R1 target fixes.
KIMI_PINNED_BY = {"per_kw_at_peak": (), "single_user": ("gptoss-jalapeno-tbt", "dsr1-jalapeno-single-user"),
                  "e2e": ("gptoss-jalapeno-tbt", "dsr1-jalapeno-single-user")}


def _kimi_ratio(c: ClaimsView, claim_id: str, metric: str, label: str, published: float | None = None) -> Result:
    pinned = KIMI_PINNED_BY[metric]
    how = (f"serving model: {label}, Jalapeño (its unknowns drawn from their ranges, with the model's "
           f"{uncertainty.model_error().scheme} error) against GB300 transferred from GB200's measured DeepSeek-R1 "
           f"layouts; judged by uncertainty.judge")
    if pinned:
        how += f"; Jalapeño's side rests on the fit targets {_reads(c, *pinned)} (Kimi K2.5 has DeepSeek-R1's 61 MLA layers)"
    return _predicted(kimi_ratio_band(metric), c.value(claim_id) if published is None else published, how,
                      computation=f"kimi-k2.5 {metric} ratio")


@check("kimi-per-watt-ratio", "predict")
def check_kimi_per_watt_ratio(c: ClaimsView) -> Result:
    return _kimi_ratio(c, "kimi-per-watt-ratio", "per_kw_at_peak", "highest tok/s/kW at rated power")


@check("kimi-tbt-ratio", "predict")
def check_kimi_tbt_ratio(c: ClaimsView) -> Result:
    return _kimi_ratio(c, "kimi-tbt-ratio", "single_user", "best TBT (highest interactivity)")


@check("kimi-e2e-ratio", "predict")
def check_kimi_e2e_ratio(c: ClaimsView) -> Result:
    return _kimi_ratio(c, "kimi-e2e-ratio", "e2e", "lowest E2E")


@check("headline-interactive-ratio", "predict")
def check_headline_interactive_ratio(c: ClaimsView) -> Result:
    band = kimi_ratio_band("single_user")
    low, high = c.value("headline-interactive-ratio"), c.high("headline-interactive-ratio")
    return _kimi_ratio(c, "headline-interactive-ratio", "single_user",
                       f"Kimi K2.5's highest interactivity, Jalapeño over GB300 transferred, must meet the printed "
                       f"{number(low):g}–{number(high):g}x range at its point nearest the band (the one computation "
                       f"kimi-tbt-ratio shows; gpt-oss-120b's and DeepSeek-R1's ratios are not predictions: Jalapeño's "
                       f"side of each is a fit target)", published_point(low, high, (band.low, band.high)))


@functools.cache
def _dsr1_fastest_baselines(stamp: tuple) -> dict:
    """The fastest point (tok/s/user) of GB300's DeepSeek-R1 8k/1k frontier with its source, and GB200's
    fastest measured point, for the state of ``data/`` ``stamp`` names."""
    gb300 = pareto.baseline_frontier("deepseek-r1", "gb300")
    gb200 = measured.points("deepseek-r1", "gb200", isl=8192, osl=1024)
    return {"gb300": float(gb300["interactivity_tok_s_user"].max()), "source": gb300["source"][0],
            "gb200": float((1.0 / gb200["mean_tpot"]).max())}


#: The validation scheme whose error a chip no benchmark ran carries (GB300 transferred from GB200's
#: layouts): (a) a new generation (:data:`jalapeno.schemes.SCHEMES`).
TRANSFERRED_SCHEME = "generation"


def transferred_band(value: float) -> uncertainty.Band:
    """The band of a quantity the model predicts for a chip no benchmark ran: ``value`` (its median) times
    the central band of scheme :data:`TRANSFERRED_SCHEME`'s held-out error, ``exp(±band_half_width)``
    (:func:`jalapeno.uncertainty.model_error`, the schemes' calibrated 80 % band)."""
    w = uncertainty.model_error(TRANSFERRED_SCHEME).band_half_width
    return uncertainty.Band(value, value * math.exp(-w), value * math.exp(w))


@check("dsr1-baseline-single-user", "predict")
def check_dsr1_baseline_single_user(c: ClaimsView) -> Result:
    r = _dsr1_fastest_baselines(_data_stamp())
    err = uncertainty.model_error(TRANSFERRED_SCHEME)
    return _predicted(transferred_band(r["gb300"]), c.value("dsr1-baseline-single-user"),
                      f"the fastest point of GB300's DeepSeek-R1 8k/1k frontier, {number(r['gb300']):.0f} tok/s/user "
                      f"({r['source']} from GB200's measured layouts, no speculative decoding; the Pareto chapter's "
                      f"baseline), with the error of a chip no benchmark ran ({err.scheme}, its "
                      f"{number(err.level):.0%} band); judged by uncertainty.judge; GB200's fastest measured point is "
                      f"{number(r['gb200']):.0f} tok/s/user")


# ---- the systems chapter: racks, pods and their fabrics ---------------------------------------------------

@check("groq-lpu-sram", "arithmetic")
def check_groq_lpu_sram(c: ClaimsView) -> Result:
    chip = specs.chip("groq-3-lpu")
    return _cmp(chip.sram_bytes / 1e6, c.value("groq-lpu-sram"), 0,
                f"on-chip SRAM per LPU in chip_specs.csv ({chip.provenance['sram_capacity'][0]}: NVIDIA's Groq 3 LPU spec)",
                "{:.0f} MB")


@check("groq-lpx-chips-per-rack", "arithmetic")
def check_groq_lpx_chips_per_rack(c: ClaimsView) -> Result:
    t = systems.system("groq-3-lpx").topology
    return _cmp(t.n_chips, c.value("groq-lpx-chips-per-rack"), 0,
                f"systems.csv: the LPX rack's shape {'x'.join(map(str, t.shape))} (LPUs per tray x trays, NVIDIA)",
                "{:.0f}")


@check("groq-lpx-rack-sram-bandwidth", "restate")
def check_groq_lpx_rack_sram_bandwidth(c: ClaimsView) -> Result:
    t = systems.lpx_rack_totals()
    return _cmp(t["sram_bandwidth_bytes_per_s"] / 1e15, c.value("groq-lpx-rack-sram-bandwidth"), 0,
                f"{t['chips']} LPUs x {number(t['sram_bandwidth_bytes_per_s'] / t['chips'] / 1e12):.2f} TB/s SRAM bandwidth per "
                "LPU (chip_specs.csv), a per-chip figure derived from this same rack aggregate: a transcription check "
                "(NVIDIA's rounder per-chip 'about 150 TB/s' is the independent figure)", "{:.1f} PB/s")


@check("tpu8t-torus-hops", "arithmetic")
def check_tpu8t_torus_hops(c: ClaimsView) -> Result:
    t = systems.system("tpu-8t-1024").topology
    d = t.diameter_hops()
    compact = network.most_compact_torus(t.n_chips, len(t.shape))
    return Result(f"{d} hops", d == c.value("tpu8t-torus-hops") and compact.shape == t.shape,
                  f"diameter of the {'x'.join(map(str, t.shape))} torus with wraparound (sum of floor(k/2) over its axes), the most compact "
                  f"3D shape of {number(t.n_chips):,} chips (its diameter is the smallest of every 3D factorisation)")


@check("tpu8i-boardfly-hops", "arithmetic")
def check_tpu8i_boardfly_hops(c: ClaimsView) -> Result:
    pod = systems.system("tpu-8i-pod").topology
    same_size = systems.tpu_topologies(1024)["tpu-8i-pod"].topology
    d_pod, d_1024 = pod.diameter_hops(), same_size.diameter_hops()
    return Result(f"{d_pod} hops", d_pod == d_1024 == c.value("tpu8i-boardfly-hops"),
                  f"breadth-first search of the Boardfly graph ({pod.label}: {pod.shape[0]} chips a board, {pod.shape[1]} "
                  f"boards a group, groups fully connected; one link per pair of boards and of groups): longest shortest path {d_pod} hops "
                  f"for the {number(pod.n_chips):,}-chip pod and {d_1024} for {same_size.label} ({number(same_size.n_chips):,} chips)")


@check("tpu8i-hbm-stacks", "arithmetic")
def check_tpu8i_hbm_stacks(c: ClaimsView) -> Result:
    chip = specs.chip("tpu-8i")
    return _cmp(chip.hbm_stacks, c.value("tpu8i-hbm-stacks"), 0,
                f"HBM stacks per TPU 8i in chip_specs.csv ({chip.provenance['hbm_stacks'][0]}; SemiAnalysis, relayed)", "{:.0f}")


@check("tpu8i-extra-hbm-stacks", "restate")
def check_tpu8i_extra_hbm_stacks(c: ClaimsView) -> Result:
    i, t = specs.chip("tpu-8i"), specs.chip("tpu-8t")
    return _cmp(i.hbm_stacks - t.hbm_stacks, c.value("tpu8i-extra-hbm-stacks"), 0,
                f"TPU 8i {number(i.hbm_stacks):.0f} minus TPU 8t {number(t.hbm_stacks):.0f} HBM stacks (chip_specs.csv), where the 8t "
                "row is derived as 8 - 2 from this same sentence: a transcription check", "{:.0f}")


@check("tpu8i-more-sram", "arithmetic")
def check_tpu8i_more_sram(c: ClaimsView) -> Result:
    i, t = specs.chip("tpu-8i"), specs.chip("tpu-8t")
    r = i.sram_bytes / t.sram_bytes
    return Result(f"{number(r):.1f}x", r > c.value("tpu8i-more-sram"),
                  f"TPU 8i {number(i.sram_bytes / 1e6):.0f} MB (Google) over TPU 8t {number(t.sram_bytes / 1e6):.0f} MB (SemiAnalysis, "
                  "relayed) of on-chip SRAM (chip_specs.csv)")


@check("jalapeno-mxfp4-pflops", "restate")
def check_jalapeno_mxfp4_pflops(c: ClaimsView) -> Result:
    j = specs.chip("jalapeno")
    return _cmp(j.peak_flops_per_s("fp4") / 1e15, c.value("jalapeno-mxfp4-pflops"), 1,
                "Jalapeño's FP4 rate in chip_specs.csv, transcribed from this same sentence of seed 001 (no other "
                "source): a transcription check", "{:.1f} PFLOP/s")


@functools.cache
def _fastest_gemma4_lpu(stamp: tuple) -> dict:
    """:func:`jalapeno.systems.best_lpu_speed` of Gemma 4 31B on one LPX rack, for the state of ``data/``
    ``stamp`` names."""
    return systems.best_lpu_speed(specs.model("gemma-4-31b"), "groq-3-lpx")


@check("groq-gemma4-tok-s", "arithmetic")
def check_groq_gemma4_tok_s(c: ClaimsView) -> Result:
    best = _fastest_gemma4_lpu(_data_stamp())
    return Result(f"up to {number(best['interactivity_tok_s_user']):,.0f} tok/s",
                  best["interactivity_tok_s_user"] >= c.value("groq-gemma4-tok-s"),
                  f"LPU decode bound (systems.lpu_decode: weights and KV in SRAM, pipeline stages x tensor-parallel "
                  f"chips, per-hop and all-reduce latencies of the LPX fabric): the fastest single-user layout on one "
                  f"rack is {best['stages']} stages x {best['tp']} chips; the record must not exceed that bound")


# ---- agents and caveats chapters ----------------------------------------------------------------------

@check("tpu-maturity-years", "arithmetic")
def check_tpu_maturity_years(c: ClaimsView) -> Result:
    first = fact("tpu_first_deployed_year")
    lo = fact("tpu_ironwood_announced_year") - first
    hi = c.date("benchmark-release-date").year - first
    return Result(f"{number(lo):.0f}–{number(hi):.0f} years", lo <= c.value("tpu-maturity-years") <= hi,
                  "TPU v1 deployed 2015 to Ironwood (TPU7x, 2025) and to the benchmark's year (public_facts.csv)")


@check("cuda-ecosystem-years", "arithmetic")
def check_cuda_ecosystem_years(c: ClaimsView) -> Result:
    years = c.date("benchmark-release-date").year - fact("cuda_introduced_year")
    return _cmp(years, c.value("cuda-ecosystem-years"), 0, "CUDA introduced November 2006 (public_facts.csv) to the "
                "benchmark's year", "{:.0f} years")


@check("financing-weeks-before-benchmark", "arithmetic")
def check_financing_weeks_before_benchmark(c: ClaimsView) -> Result:
    start, end = c.date("nvidia-openai-financing-date"), c.date("benchmark-release-date")
    days = (end - start).days
    return _cmp(days / 7, c.value("financing-weeks-before-benchmark"), 0,
                f"{start:%d %B} to {end:%d %B %Y} is {days} days (claims nvidia-openai-financing-date, "
                "benchmark-release-date)", "{:.2f} weeks")


@check("nvidia-revenue-yoy-growth", "arithmetic")
def check_nvidia_revenue_yoy_growth(c: ClaimsView) -> Result:
    expected, reported = c.value("nvidia-revenue-expectation"), fact("nvidia_q2_fy2026_revenue")
    lo = 100 * ((expected - 0.5e9) / (reported + 0.05e9) - 1)  # billions printed as 92 and 46.7
    hi = 100 * ((expected + 0.5e9) / (reported - 0.05e9) - 1)
    claimed = c.value("nvidia-revenue-yoy-growth")
    return Result(f"{number(lo):.1f}–{number(hi):.1f} %", lo <= claimed + half_ulp(0) and hi >= claimed - half_ulp(0),
                  f"consensus {number(expected / 1e9):g} billion USD over NVIDIA's reported Q2 FY2026 revenue of "
                  f"{number(reported / 1e9):g} billion USD (public_facts.csv), both taken to their printed rounding")


@check("semianalysis-beat-every-chip", "arithmetic")
def check_semianalysis_beat_every_chip(c: ClaimsView) -> Result:
    t = measured_chip_comparison("gpt-oss-120b", jalapeno_tok_s_kw=c.value("gptoss-jalapeno-tok-per-kw"),
                                 jalapeno_tok_s_user=c.value("gptoss-jalapeno-single-user"))
    beaten = t.filter((pl.col("per_kw_ratio") > 1) & (pl.col("single_user_ratio") > 1)).height
    share = 100 * beaten / t.height
    return _cmp(share, c.value("semianalysis-beat-every-chip"), 0,
                f"Jalapeño's published gpt-oss-120b 8k/1k peak tok/s/kW and single-user speed beat {beaten} of the "
                f"{t.height} chips InferenceMAX measured ({', '.join(t['chip'])}; no Google chip in the data)",
                "{:.0f} %")


# ---- the rest of the seeds: schedules, companies, slips --------------------------------------------------

#: A task of the agents model whose calls take this long on the faster server (s). The task latency ratio
#: of two servers with fixed per-call latencies does not depend on it: any positive value gives the same.
_REFERENCE_CALL_S = 1.0


@check("agent-latency-gain-multiplies", "arithmetic")
def check_agent_latency_gain_multiplies(c: ClaimsView) -> Result:
    """Seed 000's "a 3.6x latency gain multiplies over a 50-step task": the task latency ratio of the agents
    task model (:func:`jalapeno.agents.seed_example`: dependent calls in series) for a per-call ratio of the
    claim's value over ``agent-50-steps`` steps. The claim holds only if the task ratio exceeds the per-call
    one; a serial chain is linear in its steps, so it equals it."""
    r, steps = c.value("agent-latency-gain-multiplies"), int(c.value("agent-50-steps"))
    ex = agents.seed_example(steps, (r - 1) * _REFERENCE_CALL_S, base_call_s=_REFERENCE_CALL_S)
    task_ratio = ex["slow_s"] / ex["fast_s"]
    return Result(f"{number(task_ratio):.3g}x", task_ratio > r * (1 + 1e-9),
                  f"agents task model, {steps} dependent calls each {number(r):g}x faster (fixed latencies, no tool time): "
                  f"the task is {number(task_ratio):.3g}x faster, the per-call ratio itself, not {number(r):g}^{steps} = "
                  f"{scientific(format(number(r ** steps), '.2g'))}x; the saving is {steps} x the per-call saving ({number(ex['saving_s']):.4g} s for "
                  f"{number(_REFERENCE_CALL_S):g} s calls): it adds up over the steps, it does not multiply the gain. Only "
                  "timeouts and retries (the agents chapter's timeout sweep) make a task's latency grow faster than its steps")


@check("agent-latency-compounds", "arithmetic")
def check_agent_latency_compounds(c: ClaimsView) -> Result:
    """Seed 000's "each step's latency compounds (复利) over the task", held against its own example
    (``agent-50-steps`` steps, each saving ``agent-50-step-per-step-saving``) through the agents task model
    (:func:`jalapeno.agents.seed_example`): compounding would save more than steps x per-step saving."""
    steps = int(c.value("agent-50-steps"))
    per = c.seconds("agent-50-step-per-step-saving")
    saved = agents.seed_example(steps, per)["saving_s"]
    linear = steps * per
    compounds = saved > linear * (1 + 1e-9)
    return Result(f"{number(saved):.4g} s", float(compounds) == c.value("agent-latency-compounds"),
                  f"agents task model: {steps} dependent calls each {number(per):g} s faster save {number(saved):.4g} s, "
                  f"exactly {steps} x {number(per):g} s = {number(linear):.4g} s: the saving grows linearly with the steps, "
                  "it does not compound")


@check("agent-tens-of-calls", "arithmetic")
def check_agent_tens_of_calls(c: ClaimsView) -> Result:
    """Seed 003's "tens of model and tool calls per task" (几十次) against the step counts of the seeds' own
    agent examples (``agent-30-steps``, ``agent-50-steps``): each must lie in the claimed range."""
    low, high = c.value("agent-tens-of-calls"), c.high("agent-tens-of-calls")
    steps = {cid: c.value(cid) for cid in ("agent-30-steps", "agent-50-steps")}
    return Result(", ".join(f"{number(n):.0f}" for n in steps.values()), all(low <= n <= high for n in steps.values()),
                  f"the dependent steps of the seeds' agent examples ({', '.join(steps)}) against the "
                  f"{number(low):.0f}–{number(high):.0f} calls 'tens' stands for")


def benchmark_comparators(c: ClaimsView, exclude: str = "") -> list[str]:
    """The comparison systems the published benchmark rows name: the distinct ``comparator`` of every claim of
    the view about Jalapeño (``subject`` jalapeno) with a tested ``model``, except ``exclude``."""
    t = c.table.filter((pl.col("subject") == "jalapeno") & pl.col("model").is_not_null()
                       & pl.col("comparator").is_not_null() & (pl.col("claim_id") != exclude))
    return t["comparator"].unique(maintain_order=True).to_list()


@check("comparison-without-rubin", "arithmetic")
def check_comparison_without_rubin(c: ClaimsView) -> Result:
    """Seeds 000 and 004's "Rubin is not in the comparison": whether any comparison system the published
    benchmark rows name (:func:`benchmark_comparators`) is a Rubin system."""
    comparators = benchmark_comparators(c, exclude="comparison-without-rubin")
    rubin = [s for s in comparators if "rubin" in s.lower()]
    return Result("no Rubin" if not rubin else f"Rubin in {len(rubin)}", float(not rubin) == c.value("comparison-without-rubin"),
                  f"the {len(comparators)} comparison systems the published benchmark rows name ({'; '.join(comparators)}): "
                  f"{'none is' if not rubin else ', '.join(rubin) + ' is'} a Rubin system")


@check("gptoss-dense-slip", "arithmetic")
def check_gptoss_dense_slip(c: ClaimsView) -> Result:
    """Seed 003's "dense" for GPT-OSS 120B against its config (:func:`jalapeno.specs.model`: routed experts
    per layer and experts per token)."""
    m = specs.model(c.row("gptoss-dense-slip")["model"])
    return Result(f"{m.n_routed_experts or 0} experts, {m.num_experts_per_tok or 0} per token",
                  float(not m.is_moe) == c.value("gptoss-dense-slip"),
                  f"Seed slip: {m.display_name} has {m.n_routed_experts} routed experts in each of its "
                  f"{m.num_moe_layers} MoE layers, {m.num_experts_per_tok} active per token (models.csv, from its config): "
                  "a mixture of experts, not a dense model")


@check("tbt-throughput-slip", "arithmetic")
def check_tbt_throughput_slip(c: ClaimsView) -> Result:
    """Seed 002's gloss of TBT as a throughput against the registry's own TBT claims: a throughput is larger
    for the faster chip, a time between tokens smaller. Reads gpt-oss-120b's published TBTs and single-user
    speeds (Jalapeño and GB200)."""
    tbt = {k: c.seconds(f"gptoss-{k}-tbt") for k in ("jalapeno", "gb200")}
    speed = {k: c.value(f"gptoss-{k}-single-user") for k in ("jalapeno", "gb200")}
    faster = max(speed, key=speed.get)
    slower = min(speed, key=speed.get)
    larger_when_faster = tbt[faster] > tbt[slower]
    return Result(f"{number(tbt[faster] * 1e3):.2f} ms {'>' if larger_when_faster else '<'} {number(tbt[slower] * 1e3):.2f} ms",
                  float(larger_when_faster) == c.value("tbt-throughput-slip"),
                  f"Seed slip: TBT is a time (claims gptoss-*-tbt are in {c.row('gptoss-jalapeno-tbt')['unit']}); the faster chip "
                  f"({faster}, {number(speed[faster]):,.0f} tok/s/user against {number(speed[slower]):,.0f}) has the "
                  f"{'larger' if larger_when_faster else 'smaller'} TBT, so TBT is "
                  f"{'a throughput' if larger_when_faster else 'a latency, the inverse of the per-user speed, not a throughput'}")


@check("benchmark-speculative-decoding", "reproduce")
def check_benchmark_speculative_decoding(c: ClaimsView) -> Result:
    """Seeds 001 and 002's "no speculative decoding", on the side of the published comparison the data hold:
    every InferenceMAX point of the published pair (gpt-oss-120b on GB200 at the workload's ISL/OSL, claims
    ``workload-isl``, ``workload-osl``), read without a speculative-decoding filter
    (:func:`jalapeno.measured.points` with ``spec_decoding=None``). Used (1) if any point used it."""
    isl, osl = int(c.value("workload-isl")), int(c.value("workload-osl"))
    pts = measured.points("gpt-oss-120b", "gb200", isl=isl, osl=osl, spec_decoding=None)
    modes = sorted(set(pts["spec_decoding"]))
    used = any(m != "none" for m in modes)
    others = measured.points(spec_decoding=None).filter(pl.col("spec_decoding") != "none")
    elsewhere = sorted(set(others["model_key"] + " on " + others["hw"]))
    return Result(f"spec_decoding: {', '.join(modes) or 'no points'}", pts.height > 0 and float(used) == c.value("benchmark-speculative-decoding"),
                  f"{pts.height} InferenceMAX points of gpt-oss-120b on GB200 at {isl:,}/{osl:,} (measured/inferencemax.csv, runs "
                  f"{', '.join(sorted(set(pts['run_id'])))}), speculative decoding {'used' if used else 'used by none'}: the GB200 "
                  f"side of the published comparison ran without it (the data do record it where used: "
                  f"{', '.join(elsewhere) or 'nowhere'}); Jalapeño's runs are not public")


@check("jalapeno-throughput-and-latency", "arithmetic")
def check_jalapeno_throughput_and_latency(c: ClaimsView) -> Result:
    """Seed 000's "higher throughput and lower latency at once": whether the low ends of the published per-watt
    (``headline-per-watt-ratio``) and end-to-end latency (``headline-e2e-ratio``) ratios both exceed 1."""
    lows = {cid: c.value(cid) for cid in ("headline-per-watt-ratio", "headline-e2e-ratio")}
    both = all(v > 1 for v in lows.values())
    return Result(" and ".join(f"{number(v):g}x" for v in lows.values()), float(both) == c.value("jalapeno-throughput-and-latency"),
                  f"the low ends of {' and '.join(lows)} {'both exceed' if both else 'do not both exceed'} 1: a consistency of "
                  "the seeds' own numbers (their Jalapeño sides rest on fit targets), not evidence of it")


@check("single-chip-throughput-not-crushing", "arithmetic")
def check_single_chip_throughput_not_crushing(c: ClaimsView) -> Result:
    """Seed 000's "absolute single-chip throughput not necessarily crushing": Jalapeño's peak gpt-oss-120b
    throughput per chip (tok/s/kW x rated power) over GB200's, held below the low end of the per-watt
    ratio ``headline-per-watt-ratio``."""
    j = c.value("gptoss-jalapeno-tok-per-kw") * c.value("jalapeno-tdp") / 1e3
    g = c.value("gptoss-gb200-tok-per-kw") * c.value("gb200-tdp") / 1e3
    r, per_watt = j / g, c.value("headline-per-watt-ratio")
    return Result(f"{number(r):.2f}x", float(r < per_watt) == c.value("single-chip-throughput-not-crushing"),
                  f"peak throughput per chip: Jalapeño {number(j):,.0f} tok/s ({number(c.value('gptoss-jalapeno-tok-per-kw')):,.0f} "
                  f"tok/s/kW x {number(c.value('jalapeno-tdp')):,.0f} W) over GB200 {number(g):,.0f} tok/s "
                  f"({number(c.value('gptoss-gb200-tok-per-kw')):,.0f} x {number(c.value('gb200-tdp')):,.0f} W) is "
                  f"{number(r):.2f}x, {'below' if r < per_watt else 'not below'} the lowest per-watt multiple "
                  f"({number(per_watt):g}x): the lead is in work per watt, not per chip")


def _model_developer(c: ClaimsView, claim_id: str) -> Result:
    """Whether the Hugging Face organisation of the repository of the claim's ``model`` (models.csv) is the
    claim's ``subject``."""
    row = c.row(claim_id)
    m = specs.model(row["model"])
    org = m.hf_repo.split("/")[0]
    return Result(org, float(org == row["subject"]) == c.value(claim_id),
                  f"{m.display_name} is published on Hugging Face as {m.hf_repo} (models.csv): organisation {org!r}, "
                  f"the claim names {row['subject']!r}")


@check("gptoss-openai-model", "arithmetic")
def check_gptoss_openai_model(c: ClaimsView) -> Result:
    """Seed 001's "OpenAI's own GPT-OSS 120B": :func:`_model_developer`."""
    return _model_developer(c, "gptoss-openai-model")


@check("kimi-moonshot-model", "arithmetic")
def check_kimi_moonshot_model(c: ClaimsView) -> Result:
    """Seed 001's "Moonshot's Kimi K2.5": :func:`_model_developer`."""
    return _model_developer(c, "kimi-moonshot-model")


@functools.cache
def _lpu_scaling_ends(model: str, stamp: tuple) -> dict:
    """The fewest- and most-chip layouts at the widest tensor-parallel width of
    :func:`jalapeno.systems.lpu_scaling` (``model`` on one Groq 3 LPX rack, the systems chapter's defaults),
    for the state of ``data/`` ``stamp`` names."""
    t = systems.lpu_scaling(specs.model(model))
    wide = t.filter(pl.col("tp") == t["tp"].max()).sort("chips")
    return {"first": wide.row(0, named=True), "last": wide.row(-1, named=True)}


@check("lpx-more-lpus-lower-efficiency", "arithmetic")
def check_lpx_more_lpus_lower_efficiency(c: ClaimsView) -> Result:
    """Seed 002's "more LPUs lower the overall throughput efficiency": output tok/s per chip of the claim's
    model on one LPX rack at the most chips against the fewest (:func:`_lpu_scaling_ends`)."""
    e = _lpu_scaling_ends(c.row("lpx-more-lpus-lower-efficiency")["model"], _data_stamp())
    a, b = e["first"], e["last"]
    lower = b["output_tok_s_chip"] < a["output_tok_s_chip"]
    return Result(f"{number(a['output_tok_s_chip']):,.0f} → {number(b['output_tok_s_chip']):,.0f} tok/s per chip",
                  float(lower) == c.value("lpx-more-lpus-lower-efficiency"),
                  f"LPU decode model (systems.lpu_scaling, one LPX rack, tensor-parallel width {a['tp']:.0f}): from {a['chips']:.0f} to "
                  f"{b['chips']:.0f} LPUs the output per chip goes from {number(a['output_tok_s_chip']):,.0f} to "
                  f"{number(b['output_tok_s_chip']):,.0f} tok/s while the single-user speed goes from "
                  f"{number(a['interactivity_tok_s_user']):,.0f} to {number(b['interactivity_tok_s_user']):,.0f} tok/s")


# ---- registry -----------------------------------------------------------------------------------------

def claimed_text(value: float, high: float | None, unit: str) -> str:
    """A claim's value as the article states it: ``2026-08-25`` for a date, ``2026`` for a year,
    ``92 billion USD``, ``117 B params``, ``1.5–1.9x``, ``yes`` / ``no`` for a flag, ``P95`` for a
    percentile; other numbers with thousands separators."""
    if unit == "flag":
        return "yes" if value else "no"
    if unit == "percentile":
        return f"P{number(value):.0f}"

    def one(x: float) -> str:
        if unit.startswith("date"):
            return claim_date(x).isoformat()
        if "year" in unit and unit != "years":
            return f"{int(x)}"
        if unit in ("USD", "params") and abs(x) >= 1e9:
            return f"{number(x / 1e9):,.4g} billion" if unit == "USD" else f"{number(x / 1e9):,.4g} B"
        return f"{number(x):,.4g}" if not float(x).is_integer() else f"{number(x):,.0f}"
    text = one(value) if high is None else f"{one(value)}–{one(high)}"
    suffix = {"date (YYYYMMDD)": "", "year": "", "fiscal year": " (fiscal year)", "count": "", "x": "x"}.get(unit, f" {unit}")
    return text + suffix


def target_claims() -> tuple[str, ...]:
    """The claims Jalapeño's constants are fitted to, as the fit names them
    (:attr:`jalapeno.subject.JalapenoFit.target_claims` of the central scenario's fit)."""
    return subject.fit_jalapeno("central").target_claims


def claim_status(claim_id: str, view: ClaimsView, targets: tuple[str, ...] | None = None) -> dict[str, str | None]:
    """One claim's ``status``, ``computed`` (None when nothing was computed), ``check`` (how, or why
    not), ``published_vs_computed`` (:class:`Result`), ``reads`` (the other claims its check read,
    ``;``-separated, recorded by a fresh :meth:`ClaimsView.recording` of ``view``) and ``computation``
    (the name of the computation behind it: the check's own name unless it shares one) against the
    claims of ``view``. A check that agrees but read a fit target is ``fit-determined``. ``targets``: the
    fit's target claims (default :func:`target_claims`). UnknownNameError for an unknown claim or a
    ``conflicts_with`` naming one."""
    row = view.row(claim_id)
    targets = target_claims() if targets is None else targets
    none = {"computed": None, "published_vs_computed": None, "reads": None, "computation": None}
    if claim_id in targets:
        return {**none, "status": "fit target",
                "check": row["reason"] or "a value Jalapeño's constants are fitted to (jalapeno.subject.fit_jalapeno)"}
    if row["treatment"] == "conflict":
        others = [o for o in (row["conflicts_with"] or "").split(";") if o]
        if not others:
            raise DataError(f"claims.csv: claim {claim_id!r} is a conflict but names no claim in conflicts_with")
        seeds = [data.cite_seeds(view.row(o)["seeds"]) for o in others]
        return {**none, "status": "conflicting",
                "check": f"{row['reason']} (conflicts with {', '.join(others)}, stated by {'; '.join(seeds)})"}
    chk = CHECKS.get(claim_id)
    if chk is None:
        reason = row["reason"] if row["treatment"] == "not_checkable" else \
            f"no check is registered for this claim (treatment {row['treatment']})"
        return {**none, "status": "not checkable", "check": reason or "no reason given"}
    recording = view.recording()
    r = chk(recording)
    read = sorted(recording.read - {claim_id})
    good, bad = KIND_STATUSES[chk.kind]
    fitted = [t for t in read if t in targets]
    status, detail = good if r.agrees else bad, r.detail
    if r.agrees and fitted and good in AGREEING:
        status = "fit-determined"
        detail += (f" (it reads the fit target{'s' if len(fitted) > 1 else ''} {', '.join(fitted)}: the agreement "
                   "follows from what Jalapeño's constants were fitted to, no independent evidence)")
    return {"status": status, "computed": r.computed, "check": detail, "published_vs_computed": r.published_vs_computed,
            "reads": ";".join(read) or None, "computation": r.computation or chk.fn.__name__.removeprefix("check_")}


def claims(table: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every claim of ``table`` (default ``data/claims.csv``; any table with its columns, e.g. a copy with
    one value changed) with ``claimed`` (the value as text, with its unit), ``status`` (one of
    :data:`STATUSES`), ``computed`` and ``check`` columns. The default table's result is kept by
    :func:`jalapeno.data.cached_frame`, keyed by the data files (:func:`jalapeno.cache.key`), so that the
    chapters of a build, each in its own process, evaluate the registry once between them.

    Raises DataError if the file is malformed, UnknownNameError if a check names a missing claim."""
    if table is None:
        key = cache.key("claims", data=data.data_dir())
        if not data.is_cached("claims", key):
            # first what the processes asking at once share out (hold-out refits, node fits), so that one
            # does not wait idle on the registry's lock while the other refits alone
            uncertainty.model_error()
            uncertainty.node_constants()
        return data.cached_frame("claims", key, lambda: _evaluated(None))
    return _evaluated(table)


#: The columns :func:`claim_status` adds to each claim, after ``claimed``.
STATUS_COLUMNS = ("status", "computed", "check", "published_vs_computed", "reads", "computation")


def _evaluated(table: pl.DataFrame | None) -> pl.DataFrame:
    view = ClaimsView(table)
    targets = target_claims()
    rows = [claim_status(cid, view, targets) for cid in view.table["claim_id"]]
    claimed = [claimed_text(r["value"], r["value_high"], r["unit"]) for r in view.table.iter_rows(named=True)]
    return view.table.with_columns(pl.Series("claimed", claimed, dtype=pl.Utf8),
                                   *(pl.Series(k, [r[k] for r in rows], dtype=pl.Utf8) for k in STATUS_COLUMNS))


def is_performance_claim(row: dict) -> bool:
    """Whether a claim (a row of :func:`claims`) is about Jalapeño's performance: its subject is Jalapeño
    and it names the model it was served on (a throughput, a latency, a speed or a ratio of them), as
    against its specs, its schedule, its business and every other chip's numbers."""
    return row["subject"] == "jalapeno" and bool(row["model"])


def claim(claim_id: str, table: pl.DataFrame | None = None) -> dict:
    """One claim's row (with status) as a dict; UnknownNameError listing the ids if absent."""
    view = ClaimsView(table)
    row = dict(view.row(claim_id))
    if table is None:  # the book's own claims: one row of the kept evaluation
        return claims().filter(pl.col("claim_id") == claim_id).row(0, named=True)
    row["claimed"] = claimed_text(row["value"], row["value_high"], row["unit"])
    return {**row, **claim_status(claim_id, view)}


def status_counts(reg: pl.DataFrame) -> dict[str, int]:
    """How many claims of a registry table (:func:`claims`) hold each of :data:`STATUSES` (0 included), in
    that order. ValueError naming a status not in :data:`STATUSES`."""
    counts = dict(reg.group_by("status").len().iter_rows())
    unknown = sorted(set(counts) - set(STATUSES))
    if unknown:
        raise ValueError(f"unknown statuses {unknown}; known: {', '.join(STATUSES)}")
    return {s: counts.get(s, 0) for s in STATUSES}


#: The two groups the verdict counts apart (:func:`verdict_counts`).
GROUPS = ("Jalapeño's performance", "the rest")


def verdict_counts(reg: pl.DataFrame) -> pl.DataFrame:
    """Per group of :data:`GROUPS` (:func:`is_performance_claim`) and status of :data:`STATUSES` (0
    included), in that order: ``claims`` (how many claims hold it) and ``computations`` (how many distinct
    computations give it, ``computation`` of :func:`claim_status`: two claims one computation decides count
    once; a claim nothing computed counts as its own), and ``agreement`` (whether the status counts as
    agreement). ``reg``: a table of :func:`claims`. ValueError naming a status not in :data:`STATUSES`."""
    status_counts(reg)  # unknown statuses refused
    perf = [GROUPS[0] if is_performance_claim(r) else GROUPS[1] for r in reg.iter_rows(named=True)]
    t = reg.with_columns(pl.Series("group", perf, dtype=pl.Utf8),
                         pl.coalesce("computation", "claim_id").alias("_computation"))
    rows = []
    for g in GROUPS:
        for s in STATUSES:
            sel = t.filter((pl.col("group") == g) & (pl.col("status") == s))
            rows.append({"group": g, "status": s, "claims": sel.height, "computations": sel["_computation"].n_unique(),
                         "agreement": s in AGREEING})
    return pl.DataFrame(rows, schema={"group": pl.Utf8, "status": pl.Utf8, "claims": pl.Int64, "computations": pl.Int64,
                                      "agreement": pl.Boolean})
