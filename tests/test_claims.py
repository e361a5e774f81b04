"""The claims registry: the reproduced GB200 numbers and the arithmetic-checkable claims."""

import polars as pl
import pytest

import jalapeno as jp
from jalapeno import comparison, metrics, registry


@pytest.fixture(scope="module")
def table():
    return registry.claims()


def test_gb200_side_of_the_gpt_oss_comparison_from_raw_data():
    s = comparison.baseline_summary()
    assert s["run_id"] == "20786863188"
    assert s["peak_conc"] == 512
    assert s["peak_tput_per_gpu"] == pytest.approx(53_952, abs=0.5)
    assert round(s["tok_s_per_kw"]) == 44_960          # published 44,960 tok/s/kW
    assert round(s["tpot_s"] * 1e3, 2) == 1.87          # published TBT 1.87 ms
    assert round(s["e2e_s"], 2) == 1.80                 # published E2E 1.80 s
    assert round(s["interactivity_tok_s_user"]) == 535  # published 535 tok/s


def test_reproduced_claims_are_the_four_gb200_numbers(table):
    got = set(table.filter(pl.col("status") == "reproduced")["claim_id"])
    assert got == {"gptoss-gb200-tok-per-kw", "gptoss-gb200-tbt", "gptoss-gb200-e2e", "gptoss-gb200-single-user"}


def test_no_claim_is_inconsistent_and_every_check_ran(table):
    assert table.filter(pl.col("status").is_in(["inconsistent", "not reproduced"])).is_empty()
    checked = table.filter(pl.col("claim_id").is_in(list(registry.CHECKS)))
    assert checked.height == len(registry.CHECKS)
    assert set(checked["status"]) <= {"reproduced", "consistent", "modeled", "model disagrees"}


def test_an_arithmetic_check_can_fail(edit_data):
    edit_data("claims.csv", "groq-lpx-rack-sram,128,", "groq-lpx-rack-sram,140,")
    row = registry.claim("groq-lpx-rack-sram")
    assert row["status"] == "inconsistent" and row["computed"] == "128"


def test_printed_rounding_intervals():
    assert metrics.rounds_to(1.868, 1.87, 2) and not metrics.rounds_to(1.876, 1.87, 2)
    assert metrics.half_ulp(2) == pytest.approx(0.005)
    row = registry.claim("gptoss-jalapeno-single-user")
    assert row["status"] == "consistent" and row["computed"] == "1439–1460"  # 1/0.695 ms .. 1/0.685 ms


def test_headline_ratios():
    r = {row["ratio"]: row for row in comparison.headline_ratios().iter_rows(named=True)}
    assert float(r["per-watt throughput, gpt-oss"]["computed"]) == pytest.approx(85448 / 44960, abs=1e-3)
    assert float(r["E2E latency, gpt-oss"]["computed"]) == pytest.approx(1.80 / 1.03, abs=1e-3)
    assert float(r["single-user speed, DeepSeek-R1"]["computed"]) == pytest.approx(700 / 169, abs=1e-3)
    assert r["E2E latency as a reduction (%)"]["computed"] == "41.2–72.2"
    assert all(row["in_range_as_printed"] for row in r.values())


def test_power_bases():
    t = {row["basis"]: row for row in comparison.power_basis_table(comparison.baseline_summary()).iter_rows(named=True)}
    assert t["rated"]["jalapeno_tok_s_kw"] == pytest.approx(85_448)
    assert t["rated"]["baseline_tok_s_kw"] == pytest.approx(44_960, abs=1)
    assert t["sustained"]["jalapeno_tok_s_kw"] == pytest.approx(85_448 * 700 / 550)
    assert t["all-in-proportional"]["baseline_tok_s_kw"] == pytest.approx(53_952 / 2.1, rel=1e-4)
    assert t["all-in-proportional"]["jalapeno_w"] == pytest.approx(700 * 2.1 / 1.2)
    assert t["all-in-proportional"]["ratio"] == pytest.approx(t["rated"]["ratio"])  # same scaling both sides by default


def test_e2e_decomposition_hand_worked():
    d = {r["chip"]: r for r in comparison.e2e_decomposition().iter_rows(named=True)}
    assert d["jalapeno"]["implied_ttft_s"] == pytest.approx(1.03 - 0.69e-3 * 920.5)
    assert d["gb200"]["implied_ttft_s"] == pytest.approx(1.80 - 1.87e-3 * 920.5)


def test_bad_power_and_unknown_run_are_refused():
    with pytest.raises(ValueError, match="power_w must be a positive number"):
        comparison.baseline_summary(power_w=-5)
    with pytest.raises(jp.UnknownNameError, match="valid run ids: 20737128080"):
        comparison.baseline_summary(run_id="123")


def test_claim_ids_and_seeds():
    table = jp.data.load("claims.csv")
    seeds = {s for cell in table["seeds"] for s in cell.split(";")}
    assert seeds <= {"000_8705a119be375ace.txt", "001_8e17ab21b5f7c0fc.txt", "002_dacdd2b5b486b283.txt",
                     "003_243afe2b3792c736.txt", "004_702e02e5d1f097e4.txt"}
    assert table.filter(pl.col("treatment") == "not_reproducible")["reason"].null_count() == 0


@pytest.mark.parametrize("value, high, unit, text", [
    (20260825, None, "date (YYYYMMDD)", "2026-08-25"), (2027, None, "year", "2027"),
    (92e9, None, "USD", "92 billion USD"), (1.5, 1.9, "x", "1.5–1.9x"), (44960, None, "tok/s/kW", "44,960 tok/s/kW"),
    (1342, None, "count", "1,342"),
])
def test_claimed_text(value, high, unit, text):
    assert registry.claimed_text(value, high, unit) == text
