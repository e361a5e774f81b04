"""The claims registry: every numeric claim of the seed articles with a check status.

``data/claims.csv`` registers each claim and its treatment. This module adds a status:

- ``reproduced``: recomputed from the measured InferenceMAX data and equal within the claim's printed
  rounding;
- ``consistent`` / ``inconsistent``: an arithmetic check against other claims or published specs, with
  interval arithmetic on the printed rounding (0.69 ms stands for [0.685, 0.695) ms);
- ``modeled``: treated by a performance model in the chapter named (``open`` while that chapter is not
  yet in the book);
- ``not reproducible``: no public data can check it; ``reason`` says why.

Each check is a small function of this module, registered under the claim id it checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import polars as pl

from . import data, metrics, specs
from .comparison import baseline_summary, claim_value
from .errors import UnknownNameError

#: Chapters that exist in the book (a ``model`` claim of another chapter is still ``open``).
BUILT_CHAPTERS = ("reading-the-numbers", "roofline")


@dataclass(frozen=True)
class Result:
    """Outcome of one check: the computed value as text, whether it agrees, and how it was computed."""

    computed: str
    agrees: bool
    detail: str


def half_ulp(decimals: int) -> float:
    """Half a unit in the last printed place: a value printed with ``decimals`` decimals stands for
    ``[v - half_ulp, v + half_ulp)``."""
    return 0.5 * 10.0 ** (-decimals)


def rounds_to(computed: float, printed: float, decimals: int) -> bool:
    """True when ``computed`` printed with ``decimals`` decimals gives ``printed`` (no float fuzz)."""
    return abs(computed - printed) <= half_ulp(decimals) * (1 + 1e-9)


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


# ---- registry -----------------------------------------------------------------------------------------

def claims() -> pl.DataFrame:
    """All claims of ``data/claims.csv`` with ``status``, ``computed`` and ``check`` columns.

    Raises DataError if the file is malformed, UnknownNameError if a check names a missing claim."""
    table = data.load("claims.csv")
    status, computed, how = [], [], []
    for row in table.iter_rows(named=True):
        fn = CHECKS.get(row["claim_id"])
        if fn is not None:
            r = fn()
            kind = "reproduced" if row["treatment"] == "reproduce" else "consistent"
            status.append(kind if r.agrees else ("not reproduced" if kind == "reproduced" else "inconsistent"))
            computed.append(r.computed)
            how.append(r.detail)
        elif row["treatment"] == "not_reproducible":
            status.append("not reproducible"); computed.append(None); how.append(row["reason"])
        elif row["treatment"] == "model" or row["treatment"] in ("reproduce", "arithmetic"):
            built = row["chapter"] in BUILT_CHAPTERS
            status.append("modeled" if built and row["treatment"] == "model" else "open")
            computed.append(None)
            how.append(row["reason"] or f"treated in the {row['chapter']} chapter")
    return table.with_columns(pl.Series("status", status), pl.Series("computed", computed, dtype=pl.Utf8),
                              pl.Series("check", how, dtype=pl.Utf8))


def claim(claim_id: str) -> dict:
    """One claim's row (with status) as a dict; UnknownNameError listing the ids if absent."""
    table = claims()
    rows = table.filter(pl.col("claim_id") == claim_id)
    if rows.is_empty():
        raise UnknownNameError("claim", claim_id, list(table["claim_id"]))
    return rows.row(0, named=True)
