"""The claims registry: every numeric claim of the seed articles with a check status.

``data/claims.csv`` registers each claim and its treatment. This module adds a status:

- ``reproduced``: recomputed from the measured InferenceMAX data and equal within the claim's printed
  rounding;
- ``consistent`` / ``inconsistent``: an arithmetic check against other claims or published specs, with
  interval arithmetic on the printed rounding (0.69 ms stands for [0.685, 0.695) ms);
- ``modeled`` / ``model disagrees``: treated by a performance model in the chapter named, which agrees
  with the claim within its tolerance or does not (``open`` while that chapter is not yet in the book);
- ``not reproducible``: no public data can check it; ``reason`` says why.

Each check is a small function of this module, registered under the claim id it checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import polars as pl

from . import caveats, data, pareto, measured, metrics, network, specs, subject, systems
from .caveats import measured_chip_comparison
from .comparison import baseline_summary
from .data import claim_value, date_of_claim, fact
from .errors import UnknownNameError
from .metrics import half_ulp, rounds_to

#: Chapters that exist in the book (a ``model`` claim of another chapter is still ``open``).
BUILT_CHAPTERS = ("reading-the-numbers", "roofline", "pareto", "systems", "agents", "caveats")


@dataclass(frozen=True)
class Result:
    """Outcome of one check: the computed value as text, whether it agrees, and how it was computed."""

    computed: str
    agrees: bool
    detail: str


def v(claim_id: str) -> float:
    return claim_value(claim_id)


def hi(claim_id: str) -> float:
    return claim_value(claim_id, high=True)


def _cmp(computed: float, printed: float, decimals: int, how: str, fmt: str = "{:.4g}") -> Result:
    return Result(fmt.format(computed), rounds_to(computed, printed, decimals), how)


CHECKS: dict[str, Callable[[], Result]] = {}


def check(claim_id: str):
    def register(fn: Callable[[], Result]) -> Callable[[], Result]:
        CHECKS[claim_id] = fn
        return fn
    return register


# ---- reproduced from the measured data --------------------------------------------------------------

@check("gptoss-gb200-tok-per-kw")
def _() -> Result:
    h = baseline_summary(power_w=v("gb200-tdp"))
    return _cmp(h["tok_s_per_kw"], v("gptoss-gb200-tok-per-kw"), 0,
                f"run {h['run_id']}: highest tput_per_gpu {h['peak_tput_per_gpu']:.1f} tok/s (conc "
                f"{h['peak_conc']}) / {h['power_w'] / 1e3:.1f} kW", "{:,.1f}")


@check("gptoss-gb200-tbt")
def _() -> Result:
    h = baseline_summary()
    return _cmp(h["tpot_s"] * 1e3, v("gptoss-gb200-tbt"), 2, f"run {h['run_id']}, conc {h['single_conc']}: mean TPOT")


@check("gptoss-gb200-e2e")
def _() -> Result:
    h = baseline_summary()
    return _cmp(h["e2e_s"], v("gptoss-gb200-e2e"), 2, f"run {h['run_id']}, conc {h['single_conc']}: mean E2E")


@check("gptoss-gb200-single-user")
def _() -> Result:
    h = baseline_summary()
    return _cmp(h["interactivity_tok_s_user"], v("gptoss-gb200-single-user"), 0,
                f"run {h['run_id']}, conc {h['single_conc']}: 1 / mean TPOT", "{:.1f}")


# ---- consistency by arithmetic ------------------------------------------------------------------------

@check("gptoss-jalapeno-single-user")
def _() -> Result:
    tbt = v("gptoss-jalapeno-tbt")
    low, high = 1e3 / (tbt + half_ulp(2)), 1e3 / (tbt - half_ulp(2))
    claimed = v("gptoss-jalapeno-single-user")
    return Result(f"{low:.0f}–{high:.0f}", low <= claimed <= high,
                  f"1 / TBT with TBT printed as {tbt} ms, i.e. in [{tbt - half_ulp(2):.3f}, {tbt + half_ulp(2):.3f}) ms")


@check("headline-e2e-reduction-pct")
def _() -> Result:
    low, high = 100 * (1 - 1 / v("headline-e2e-ratio")), 100 * (1 - 1 / hi("headline-e2e-ratio"))
    ok = rounds_to(low, v("headline-e2e-reduction-pct"), 0) and rounds_to(high, hi("headline-e2e-reduction-pct"), 0)
    return Result(f"{low:.1f}–{high:.1f}", ok, "1 - 1/ratio for the 1.7–3.6x latency ratios")


@check("single-user-speed-ratio-gptoss")
def _() -> Result:
    return _cmp(v("gptoss-jalapeno-single-user") / v("gptoss-gb200-single-user"),
                v("single-user-speed-ratio-gptoss"), 1, "1459 / 535 tok/s/user", "{:.3f}")


@check("single-user-speed-ratio-dsr1")
def _() -> Result:
    return _cmp(v("dsr1-jalapeno-single-user") / v("dsr1-baseline-single-user"),
                v("single-user-speed-ratio-dsr1"), 1, "700 / 169 tok/s/user", "{:.3f}")


@check("headline-per-watt-ratio")
def _() -> Result:
    r = v("gptoss-jalapeno-tok-per-kw") / v("gptoss-gb200-tok-per-kw")
    return Result(f"{r:.3f} (gpt-oss)", v("headline-per-watt-ratio") - 0.05 <= r < hi("headline-per-watt-ratio") + 0.05,
                  "85,448 / 44,960 tok/s/kW must lie in the 1.5–1.9x range as printed")


@check("headline-e2e-ratio")
def _() -> Result:
    r = v("gptoss-gb200-e2e") / v("gptoss-jalapeno-e2e")
    return Result(f"{r:.3f} (gpt-oss)", v("headline-e2e-ratio") - 0.05 <= r < hi("headline-e2e-ratio") + 0.05,
                  "1.80 / 1.03 s must lie in the 1.7–3.6x range as printed")


@check("groq-lpx-rack-sram")
def _() -> Result:
    total_gb = v("groq-lpx-chips-per-rack") * v("groq-lpu-sram") / 1e3
    return _cmp(total_gb, v("groq-lpx-rack-sram"), 0, "256 LPUs x 500 MB (GB = 1e9 B)", "{:.0f}")


@check("groq-lpx-chips-deepseek-v3")
def _() -> Result:
    params = specs.model("deepseek-r1").total_params()
    n = params * 1.0 / (v("groq-lpu-sram") * 1e6)
    return _cmp(n, v("groq-lpx-chips-deepseek-v3"), 0,
                f"DeepSeek-V3 {params / 1e9:.1f} B parameters x 1 byte (8 bits) / 500 MB per LPU, weights only", "{:.1f}")


@check("groq-lpx-racks-deepseek-v3")
def _() -> Result:
    racks = v("groq-lpx-chips-deepseek-v3") / v("groq-lpx-chips-per-rack")
    return Result(f"{racks:.2f}", racks > v("groq-lpx-racks-deepseek-v3"), "1,342 chips / 256 per rack: more than five")


@check("agent-30-step-saving")
def _() -> Result:
    return _cmp(30 * 0.200, v("agent-30-step-saving"), 0, "30 dependent steps x 200 ms saved each", "{:.1f}")


@check("agent-50-step-saving")
def _() -> Result:
    saved = 50 * 1.0
    return Result(f"{saved:.0f} s", 0.75 * v("agent-50-step-saving") <= saved <= v("agent-50-step-saving"),
                  "50 steps x 1 s saved each: 50 s, 'nearly a minute'")


@check("jalapeno-hbm-capacity")
@check("jalapeno-hbm4-stacks")
def _() -> Result:
    per_stack = v("jalapeno-hbm-capacity") / v("jalapeno-hbm4-stacks")
    return Result(f"{per_stack:.0f} GB per stack", per_stack == 12 * 24 / 8,
                  "216 GB / 6 stacks = 36 GB: exactly a 12-high HBM4 stack of 24 Gb dies (12 x 3 GB)")


@check("workload-isl")
def _() -> Result:
    return _cmp(metrics.mean_request_length(int(v("workload-isl"))), 7372.5, 1,
                "InferenceX draws ISL uniformly in [0.8 L, L]: nominal 8,192 means 7,372.5 on average")


@check("workload-osl")
def _() -> Result:
    return _cmp(metrics.mean_request_length(int(v("workload-osl"))), 921.5, 1,
                "InferenceX draws OSL uniformly in [0.8 L, L]: nominal 1,024 means 921.5 on average")


#: Nominal sizes in model names ("120B", "670B", "1T") are round numbers: consistent within 5 %.
NOMINAL_SIZE_TOLERANCE = 0.05


def _size_check(claim_id: str, model: str) -> Callable[[], Result]:
    def fn() -> Result:
        total = specs.model(model).total_params()
        ok = abs(total / v(claim_id) - 1) <= NOMINAL_SIZE_TOLERANCE
        return Result(f"{total / 1e9:,.1f} B", ok,
                      f"total parameters from the {model} config (text model), against the nominal size within 5 %")
    return fn


for _id, _model in (("gptoss-params", "gpt-oss-120b"), ("dsr1-params", "deepseek-r1"),
                    ("kimi-params", "kimi-k2.5"), ("gemma4-params", "gemma-4-31b")):
    CHECKS[_id] = _size_check(_id, _model)


def _ratio_check(model: str) -> Callable[[], Result]:
    def fn() -> Result:
        t = subject.ratio_table([model])
        lo, hi = float(t["ratio"].min()), float(t["ratio"].max())
        published = float(t["published_ratio"][0])
        ok = band_meets(lo, hi, published)
        close = t.filter((pl.col("deviation").abs() <= RATIO_TOLERANCE))["scenario"].to_list()
        where = f"within ±{RATIO_TOLERANCE:.0%} in the {', '.join(close)} scenario" if close else \
            f"no scenario within ±{RATIO_TOLERANCE:.0%}"
        return Result(f"{lo:.0f}–{hi:.0f}x", ok,
                      f"serving model: Jalapeño (three scenarios of its unknowns) against {t['baseline'][0]} "
                      f"({t['baseline_source'][0]}) at the baseline's best interactivity; {where}")
    return fn


#: Agreement the book asks of a modeled ratio.
RATIO_TOLERANCE = 0.15


def band_meets(lo: float, hi: float, published: float) -> bool:
    """Whether a modeled band [lo, hi] (over Jalapeño's scenarios) meets ``published`` widened by the tolerance."""
    return lo <= published * (1 + RATIO_TOLERANCE) and hi >= published * (1 - RATIO_TOLERANCE)

for _id, _model in (("gptoss-matched-tbt-ratio", "gpt-oss-120b"), ("dsr1-matched-tbt-ratio", "deepseek-r1"),
                    ("kimi-matched-tbt-ratio", "kimi-k2.5")):
    CHECKS[_id] = _ratio_check(_model)


def kimi_ratio_band(metric: str, *, concurrency_cap: float | str | None = "benchmark",
                    fits: dict[str, subject.JalapenoFit] | None = None) -> tuple[float, float]:
    """Lowest and highest, over Jalapeño's scenarios (fitted constants ``fits``, default
    :func:`jalapeno.subject.fit_jalapeno`), of one :data:`jalapeno.caveats.METRICS` ratio of Jalapeño's
    Kimi K2.5 frontier against its published baseline's, both over ``concurrency_cap``."""
    old = pareto.baseline_frontier("kimi-k2.5", pareto.PUBLISHED_RATIOS["kimi-k2.5"][1],
                                     concurrency_cap=concurrency_cap)
    vals = [caveats.front_ratios(subject.jalapeno_frontier("kimi-k2.5", sc, fit=(fits or {}).get(sc),
                                                          concurrency_cap=concurrency_cap), old)[metric]
            for sc in subject.SCENARIOS]
    return min(vals), max(vals)


def _kimi_check(claim_id: str, metric: str, label: str) -> Callable[[], Result]:
    def fn() -> Result:
        lo, hi = kimi_ratio_band(metric)
        pub = v(claim_id)
        return Result(f"{lo:.2f}–{hi:.2f}x", band_meets(lo, hi, pub),
                      f"serving model: {label}, Jalapeño (three scenarios of its unknowns) against GB300 transferred "
                      f"from GB200's measured DeepSeek-R1 layouts; agreement within ±{RATIO_TOLERANCE:.0%}")
    return fn


for _id, _metric, _label in (("kimi-per-watt-ratio", "per_kw_at_peak", "highest tok/s/kW at rated power"),
                             ("kimi-tbt-ratio", "single_user", "best TBT (highest interactivity)"),
                             ("kimi-e2e-ratio", "e2e", "lowest E2E")):
    CHECKS[_id] = _kimi_check(_id, _metric, _label)


@check("headline-interactive-ratio")
def _() -> Result:
    vals = {m: caveats.front_ratios(subject.jalapeno_frontier(m, "central"),
                                    pareto.baseline_frontier(m, chip))["single_user"]
            for m, (_, chip) in pareto.PUBLISHED_RATIOS.items()}
    low, high = v("headline-interactive-ratio"), hi("headline-interactive-ratio")
    ok = all(low * (1 - RATIO_TOLERANCE) <= x <= high * (1 + RATIO_TOLERANCE) for x in vals.values())
    return Result(", ".join(f"{x:.2f}x" for x in vals.values()), ok,
                  "serving model, central scenario: Jalapeño's highest interactivity over the published baseline's "
                  f"({', '.join(vals)}); each must lie in the printed range within ±{RATIO_TOLERANCE:.0%} (lowest "
                  f"{min(vals.values()):.2f}x against the printed low end {low:g}x)")


# ---- the systems chapter: racks, pods and their fabrics ---------------------------------------------------

@check("groq-lpu-sram")
def _() -> Result:
    c = specs.chip("groq-3-lpu")
    return _cmp(c.sram_bytes / 1e6, v("groq-lpu-sram"), 0,
                f"on-chip SRAM per LPU in chip_specs.csv ({c.provenance['sram_capacity'][0]}: NVIDIA's Groq 3 LPU spec)",
                "{:.0f} MB")


@check("groq-lpx-chips-per-rack")
def _() -> Result:
    t = systems.system("groq-3-lpx").topology
    return _cmp(t.n_chips, v("groq-lpx-chips-per-rack"), 0,
                f"systems.csv: the LPX rack's shape {'x'.join(map(str, t.shape))} (LPUs per tray x trays, NVIDIA)",
                "{:.0f}")


@check("groq-lpx-rack-sram-bandwidth")
def _() -> Result:
    t = systems.lpx_rack_totals()
    return _cmp(t["sram_bandwidth_bytes_per_s"] / 1e15, v("groq-lpx-rack-sram-bandwidth"), 0,
                f"{t['chips']} LPUs x {t['sram_bandwidth_bytes_per_s'] / t['chips'] / 1e12:.2f} TB/s SRAM bandwidth per "
                "LPU (chip_specs.csv; that per-chip figure is derived from the rack's aggregate, NVIDIA's rounder "
                "per-chip 'about 150 TB/s' is the independent check)", "{:.1f} PB/s")


@check("tpu8t-torus-hops")
def _() -> Result:
    t = systems.system("tpu-8t-1024").topology
    d = t.diameter_hops()
    compact = network.most_compact_torus(t.n_chips, len(t.shape))
    return Result(f"{d} hops", d == v("tpu8t-torus-hops") and compact.shape == t.shape,
                  f"diameter of the {'x'.join(map(str, t.shape))} torus with wraparound (sum of floor(k/2) over its axes), the most compact "
                  f"3D shape of {t.n_chips:,} chips (its diameter is the smallest of every 3D factorisation)")


@check("tpu8i-boardfly-hops")
def _() -> Result:
    pod = systems.system("tpu-8i-pod").topology
    same_size = systems.tpu_topologies(1024)["tpu-8i-pod"].topology
    d_pod, d_1024 = pod.diameter_hops(), same_size.diameter_hops()
    return Result(f"{d_pod} hops", d_pod == d_1024 == v("tpu8i-boardfly-hops"),
                  f"breadth-first search of the Boardfly graph ({pod.label}: {pod.shape[0]} chips a board, {pod.shape[1]} "
                  f"boards a group, groups fully connected; one link per pair of boards and of groups): longest shortest path {d_pod} hops "
                  f"for the {pod.n_chips:,}-chip pod and {d_1024} for {same_size.label} ({same_size.n_chips:,} chips)")


@check("tpu8i-hbm-stacks")
def _() -> Result:
    c = specs.chip("tpu-8i")
    return _cmp(c.hbm_stacks, v("tpu8i-hbm-stacks"), 0,
                f"HBM stacks per TPU 8i in chip_specs.csv ({c.provenance['hbm_stacks'][0]}; SemiAnalysis, relayed)", "{:.0f}")


@check("tpu8i-extra-hbm-stacks")
def _() -> Result:
    i, t = specs.chip("tpu-8i"), specs.chip("tpu-8t")
    return _cmp(i.hbm_stacks - t.hbm_stacks, v("tpu8i-extra-hbm-stacks"), 0,
                f"TPU 8i {i.hbm_stacks:.0f} minus TPU 8t {t.hbm_stacks:.0f} HBM stacks (chip_specs.csv; the 8t count "
                "is also stated by SemiAnalysis, relayed)", "{:.0f}")


@check("groq-gemma4-tok-s")
def _() -> Result:
    best = systems.best_lpu_speed(specs.model("gemma-4-31b"), "groq-3-lpx")
    return Result(f"up to {best['interactivity_tok_s_user']:,.0f} tok/s", best["interactivity_tok_s_user"] >= v("groq-gemma4-tok-s"),
                  f"LPU decode model (systems.lpu_decode: weights and KV in SRAM, pipeline stages x tensor-parallel "
                  f"chips, per-hop and all-reduce latencies of the LPX fabric): the fastest single-user layout on one "
                  f"rack is {best['stages']} stages x {best['tp']} chips; the record needs only that this bound reach it")


# ---- agents and caveats chapters ----------------------------------------------------------------------

@check("tpu-maturity-years")
def _() -> Result:
    first = fact("tpu_first_deployed_year")
    lo = fact("tpu_ironwood_announced_year") - first
    hi = date_of_claim("benchmark-release-date").year - first
    return Result(f"{lo:.0f}–{hi:.0f} years", lo <= v("tpu-maturity-years") <= hi,
                  "TPU v1 deployed 2015 to Ironwood (TPU7x, 2025) and to the benchmark's year (public_facts.csv)")


@check("cuda-ecosystem-years")
def _() -> Result:
    years = date_of_claim("benchmark-release-date").year - fact("cuda_introduced_year")
    return _cmp(years, v("cuda-ecosystem-years"), 0, "CUDA introduced November 2006 (public_facts.csv) to the "
                "benchmark's year", "{:.0f} years")


@check("financing-weeks-before-benchmark")
def _() -> Result:
    days = (date_of_claim("benchmark-release-date") - date_of_claim("nvidia-openai-financing-date")).days
    return _cmp(days / 7, v("financing-weeks-before-benchmark"), 0,
                f"17 August to 25 August 2026 is {days} days (claims nvidia-openai-financing-date, "
                "benchmark-release-date)", "{:.2f} weeks")


@check("nvidia-revenue-yoy-growth")
def _() -> Result:
    expected, reported = v("nvidia-revenue-expectation"), fact("nvidia_q2_fy2026_revenue")
    lo = 100 * ((expected - 0.5e9) / (reported + 0.05e9) - 1)  # 92 billion and 46.7 billion as printed
    hi = 100 * ((expected + 0.5e9) / (reported - 0.05e9) - 1)
    claimed = v("nvidia-revenue-yoy-growth")
    return Result(f"{lo:.1f}–{hi:.1f} %", lo <= claimed + half_ulp(0) and hi >= claimed - half_ulp(0),
                  "consensus 92 billion USD over NVIDIA's reported Q2 FY2026 revenue of 46.7 billion USD "
                  "(public_facts.csv), both taken to their printed rounding")


@check("semianalysis-beat-every-chip")
def _() -> Result:
    t = measured_chip_comparison("gpt-oss-120b")
    beaten = t.filter((pl.col("per_kw_ratio") > 1) & (pl.col("single_user_ratio") > 1)).height
    share = 100 * beaten / t.height
    return _cmp(share, v("semianalysis-beat-every-chip"), 0,
                f"Jalapeño's published gpt-oss-120b 8k/1k peak tok/s/kW and single-user speed beat {beaten} of the "
                f"{t.height} chips InferenceMAX measured ({', '.join(t['chip'])}; no Google chip in the data)",
                "{:.0f} %")


@check("dsr1-baseline-single-user")
def _() -> Result:
    pts = measured.points("deepseek-r1", "gb200", isl=8192, osl=1024)
    best = float((1.0 / pts["mean_tpot"]).max())
    return Result(f"GB200 best measured {best:.0f}", best < v("dsr1-baseline-single-user"),
                  "the fastest GB200 DeepSeek-R1 8k/1k point without speculative decoding is slower than the "
                  "published baseline's 169 tok/s/user: no contradiction, since seed 004 names GB300 (not measured), "
                  "but no measured layout reaches 169 either; the Pareto chapter's GB300 frontier, transferred "
                  "from GB200's layouts, ends at the same speed")


# ---- registry -----------------------------------------------------------------------------------------

def claimed_text(value: float, high: float | None, unit: str) -> str:
    """A claim's value as the article states it: ``2026-08-25`` for a date, ``2026`` for a year,
    ``92 billion USD``, ``117 B params``, ``1.5–1.9x``; other numbers with thousands separators."""
    def one(x: float) -> str:
        if unit.startswith("date"):
            d = f"{int(x):08d}"
            return f"{d[:4]}-{d[4:6]}-{d[6:]}"
        if "year" in unit and unit != "years":
            return f"{int(x)}"
        if unit in ("USD", "params") and abs(x) >= 1e9:
            return f"{x / 1e9:,.4g} billion" if unit == "USD" else f"{x / 1e9:,.4g} B"
        return f"{x:,.4g}" if not float(x).is_integer() else f"{x:,.0f}"
    text = one(value) if high is None else f"{one(value)}–{one(high)}"
    suffix = {"date (YYYYMMDD)": "", "year": "", "fiscal year": " (fiscal year)", "count": "", "x": "x"}.get(unit, f" {unit}")
    return text + suffix


def claims() -> pl.DataFrame:
    """All claims of ``data/claims.csv`` with ``claimed`` (the value as text, with its unit), ``status``,
    ``computed`` and ``check`` columns.

    Raises DataError if the file is malformed, UnknownNameError if a check names a missing claim."""
    table = data.claims_table()
    status, computed, how = [], [], []
    for row in table.iter_rows(named=True):
        fn = CHECKS.get(row["claim_id"])
        if fn is not None:
            r = fn()
            kind = {"reproduce": ("reproduced", "not reproduced"), "model": ("modeled", "model disagrees")}.get(
                row["treatment"], ("consistent", "inconsistent"))
            status.append(kind[0] if r.agrees else kind[1])
            computed.append(r.computed)
            how.append(r.detail)
        elif row["treatment"] == "not_reproducible":
            status.append("not reproducible"); computed.append(None); how.append(row["reason"])
        elif row["treatment"] == "model" or row["treatment"] in ("reproduce", "arithmetic"):
            built = row["chapter"] in BUILT_CHAPTERS
            status.append("modeled" if built and row["treatment"] == "model" else "open")
            computed.append(None)
            how.append(row["reason"] or f"treated in the {row['chapter']} chapter")
    claimed = [claimed_text(r["value"], r["value_high"], r["unit"]) for r in table.iter_rows(named=True)]
    return table.with_columns(pl.Series("claimed", claimed, dtype=pl.Utf8), pl.Series("status", status),
                              pl.Series("computed", computed, dtype=pl.Utf8), pl.Series("check", how, dtype=pl.Utf8))


def claim(claim_id: str) -> dict:
    """One claim's row (with status) as a dict; UnknownNameError listing the ids if absent."""
    table = claims()
    rows = table.filter(pl.col("claim_id") == claim_id)
    if rows.is_empty():
        raise UnknownNameError("claim", claim_id, list(table["claim_id"]))
    return rows.row(0, named=True)
