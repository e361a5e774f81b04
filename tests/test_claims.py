"""The claims registry: statuses that mean one thing each, checks that read the claims they relate and
can fail (every agreeing claim perturbed in memory), and the published GB200 numbers within their
printed rounding."""

import numpy as np
import polars as pl
import pytest

import jalapeno as jp
from jalapeno import comparison, data, metrics, registry, subject, uncertainty

SEEDS = {"000_8705a119be375ace.txt", "001_8e17ab21b5f7c0fc.txt", "002_dacdd2b5b486b283.txt",
         "003_243afe2b3792c736.txt", "004_702e02e5d1f097e4.txt"}


@pytest.fixture(scope="module")
def table():
    return registry.claims()


#: The statuses of a check that computed a value in line with the published one: agreement, or agreement
#: by construction (a fit target read).
IN_LINE = registry.AGREEING + ("fit-determined",)


def _agreeing_ids() -> list[str]:
    return registry.claims().filter(pl.col("status").is_in(IN_LINE))["claim_id"].to_list()


# ---- the published GB200 side, within its printed rounding ---------------------------------------------

def test_gb200_side_of_the_gpt_oss_comparison_from_raw_data():
    s = comparison.baseline_summary()
    assert s.run_id == "20786863188"
    assert s.peak_conc == 512
    assert s.peak_tput_per_gpu == pytest.approx(53_952, abs=0.5)
    assert round(s.tok_s_per_kw) == 44_960          # published 44,960 tok/s/kW
    assert round(s.tpot_s * 1e3, 2) == 1.87          # published TBT 1.87 ms
    assert round(s.e2e_s, 2) == 1.80                 # published E2E 1.80 s
    assert round(s.interactivity_tok_s_user) == 535  # published 535 tok/s


# ---- statuses --------------------------------------------------------------------------------------------

def test_the_kept_evaluation_is_the_registrys_own(table):
    """registry.claims() of the book's table is kept on disk for the chapters' processes: read back, it
    is the evaluation itself, and registry.claim reads its row."""
    fresh = registry._evaluated(None)
    assert table.schema == fresh.schema and table.equals(fresh)
    row = registry.claim("gptoss-gb200-tok-per-kw")
    assert row == fresh.filter(pl.col("claim_id") == "gptoss-gb200-tok-per-kw").row(0, named=True)


def test_every_status_is_known_and_agreement_is_three_of_them(table):
    assert set(table["status"]) <= set(registry.STATUSES)
    assert registry.AGREEING == ("reproduced", "consistent", "predicted, agrees")
    counts = registry.status_counts(table)
    assert list(counts) == list(registry.STATUSES) and sum(counts.values()) == table.height


def test_no_agreeing_status_lacks_a_computed_value(table):
    agreeing = table.filter(pl.col("status").is_in(registry.AGREEING))
    assert agreeing.height > 0
    assert agreeing.filter(pl.col("computed").is_null() | (pl.col("computed") == "")).is_empty()
    assert set(agreeing["claim_id"]) <= set(registry.CHECKS)


def test_a_claim_without_a_check_never_agrees(table):
    unchecked = table.filter(~pl.col("claim_id").is_in(list(registry.CHECKS)))
    assert not set(unchecked["status"]) & set(registry.AGREEING)
    assert unchecked.filter(pl.col("check").is_null()).is_empty()  # each says why


def test_fit_targets_are_the_fits_own_and_never_agree(table):
    targets = subject.fit_jalapeno("central").target_claims
    rows = table.filter(pl.col("claim_id").is_in(list(targets)))
    assert rows.height == len(targets) and set(rows["status"]) == {"fit target"}
    assert set(table.filter(pl.col("treatment") == "fit_target")["claim_id"]) == set(targets)


def test_a_claim_the_fit_names_is_a_fit_target_whatever_its_treatment():
    t = data.claims_table().with_columns(
        treatment=pl.when(pl.col("claim_id") == "gptoss-jalapeno-tbt").then(pl.lit("predict")).otherwise("treatment"))
    row = registry.claim("gptoss-jalapeno-tbt", t)
    assert row["status"] == "fit target" and row["computed"] is None


def test_each_check_kind_matches_the_treatment_in_the_csv(table):
    treatment = dict(zip(table["claim_id"], table["treatment"]))
    assert {cid: c.kind for cid, c in registry.CHECKS.items()} == {cid: treatment[cid] for cid in registry.CHECKS}


def test_conflicts_name_each_other_and_show_as_conflicting(table):
    rows = table.filter(pl.col("treatment") == "conflict")
    assert rows.height >= 2 and set(rows["status"]) == {"conflicting"}
    pairs = {(r["claim_id"], r["conflicts_with"]) for r in rows.iter_rows(named=True)}
    assert all((b, a) in pairs for a, b in pairs)
    seeds = {cid: set(s.split(";")) for cid, s in zip(table["claim_id"], table["seeds"])}
    # seed 004's "an independent benchmark, not OpenAI grading itself" against seeds 001/003's "OpenAI chose
    # the models and baselines" (vendor-published results)
    assert pairs == {("benchmark-independent", "benchmark-setup-chosen-by-openai"),
                     ("benchmark-setup-chosen-by-openai", "benchmark-independent")}
    assert seeds["benchmark-independent"] == {"004_702e02e5d1f097e4.txt"}
    assert {"001_8e17ab21b5f7c0fc.txt", "003_243afe2b3792c736.txt"} <= seeds["benchmark-setup-chosen-by-openai"]


def test_the_seeds_remaining_claims_are_registered_and_treated(table):
    status = dict(zip(table["claim_id"], table["status"]))
    # seed 004: Jalapeño's HBM capacity and peak compute do not beat GB300's (216 GB < 288 GB; 13.4 < 15 PFLOP/s)
    assert status["jalapeno-hbm-vs-gb300"] == status["jalapeno-compute-vs-gb300"] == "consistent"
    assert status["tpu8i-more-sram"] == "consistent"
    for cid in ("internal-frontier-advantage", "tpu8i-collective-engine", "eval-p95-e2e", "eval-burst-concurrency",
                "eval-structured-output", "caveat-software-maturity", "caveat-operations-at-scale",
                "caveat-portability-lock-in", "caveat-inference-only"):
        assert status[cid] == "not checkable", cid


def test_not_checkable_claims_give_their_reason(table):
    rows = table.filter(pl.col("treatment") == "not_checkable")
    assert rows["reason"].null_count() == 0
    assert (rows["check"] == rows["reason"]).all()


def test_a_check_that_reads_a_fit_target_is_never_agreement(table):
    """Computed from the reads each check's view records, not listed by hand: every check that read a fit
    target and agrees is fit-determined, never consistent, reproduced or predicted-agrees."""
    targets = set(registry.target_claims())
    reads_target = table.filter(pl.col("reads").is_not_null()).filter(
        pl.col("reads").str.split(";").list.eval(pl.element().is_in(list(targets))).list.any())
    assert not set(reads_target["status"]) & set(registry.AGREEING)
    # the ones the audit names: 1 / 0.69 ms, the per-watt range over the 85,448 target, 700 / 169, and
    # Kimi K2.5's best TBT and E2E, whose Jalapeño side the DeepSeek-R1 fit carries over (61 MLA layers)
    for cid in ("gptoss-jalapeno-single-user", "headline-per-watt-ratio", "single-user-speed-ratio-dsr1",
                "kimi-tbt-ratio", "kimi-e2e-ratio", "headline-interactive-ratio", "semianalysis-beat-every-chip"):
        assert cid in set(reads_target["claim_id"]), cid
        assert dict(zip(table["claim_id"], table["status"]))[cid] == "fit-determined", cid


def test_a_new_check_reading_a_target_is_fit_determined(monkeypatch):
    """The rule applies to any check: one registered here that reads the TBT target through its view and
    agrees is fit-determined; the same check reading nothing else is consistent."""
    view = registry.ClaimsView()
    reading = registry.Check("arithmetic", lambda c: registry.Result(f"{c.value('gptoss-jalapeno-tbt'):g}", True, "reads"))
    blind = registry.Check("arithmetic", lambda c: registry.Result("1", True, "reads nothing"))
    monkeypatch.setitem(registry.CHECKS, "gptoss-params", reading)
    assert registry.claim_status("gptoss-params", view)["status"] == "fit-determined"
    assert registry.claim_status("gptoss-params", view)["reads"] == "gptoss-jalapeno-tbt"
    monkeypatch.setitem(registry.CHECKS, "gptoss-params", blind)
    assert registry.claim_status("gptoss-params", view)["status"] == "consistent"


def test_a_disagreeing_check_keeps_its_status_when_it_reads_a_target():
    t = perturbed(data.claims_table(), "single-user-speed-ratio-dsr1", 4 / 3)
    assert registry.claim("single-user-speed-ratio-dsr1", t)["status"] == "inconsistent"


def test_every_prediction_carries_a_band_with_a_width_and_the_side_of_the_published_value(table):
    preds = table.filter(pl.col("claim_id").is_in([c for c, k in registry.CHECKS.items() if k.kind == "predict"]))
    assert preds.height >= 8
    for r in preds.iter_rows(named=True):
        low, high = (float(x.replace(",", "")) for x in r["computed"].split("–"))
        assert low < high, r["claim_id"]
        assert r["published_vs_computed"] in ("above the band", "below the band", "in the band, above its median",
                                              "in the band, below its median"), r["claim_id"]
    with pytest.raises(ValueError, match="width"):
        registry._predicted(uncertainty.Band(151.0, 151.0, 151.0), 169.0, "zero width")


def test_the_dsr1_baseline_is_judged_against_the_error_of_a_chip_no_benchmark_ran(table):
    """GB300's 151 tok/s/user (transferred from GB200's layouts) carries scheme (a)'s band, a factor
    exp(band_half_width) either way, so the published 169 is within it, above its median."""
    row = table.filter(pl.col("claim_id") == "dsr1-baseline-single-user").row(0, named=True)
    w = uncertainty.model_error("generation").band_half_width
    low, high = (float(x) for x in row["computed"].split("–"))
    assert high / low == pytest.approx(np.exp(2 * w), rel=0.02)   # the printed ends are rounded to 1 tok/s/user
    assert row["status"] == "predicted, agrees" and row["published_vs_computed"] == "in the band, above its median"


def test_position_of_a_published_value_against_a_band():
    assert registry.position(5.0, 1.0, 4.0, 2.0) == "above the band"
    assert registry.position(0.5, 1.0, 4.0, 2.0) == "below the band"
    assert registry.position(1.5, 1.0, 4.0, 2.0) == "in the band, below its median"
    assert registry.position(3.0, 1.0, 4.0, 2.0) == "in the band, above its median"


def test_one_computation_is_one_key(table):
    """kimi-tbt-ratio and headline-interactive-ratio are one computation (Kimi K2.5's best-TBT ratio);
    Jalapeño's HBM capacity and stack count are one check; every other check is its own."""
    key = dict(zip(table["claim_id"], table["computation"]))
    assert key["kimi-tbt-ratio"] == key["headline-interactive-ratio"]
    assert key["jalapeno-hbm-capacity"] == key["jalapeno-hbm4-stacks"]
    assert key["kimi-tbt-ratio"] != key["kimi-e2e-ratio"]
    checked = table.filter(pl.col("computation").is_not_null())
    assert checked["computation"].n_unique() == checked.height - 2


def test_the_performance_claims_are_jalapenos_served_numbers(table):
    perf = {r["claim_id"] for r in table.iter_rows(named=True) if registry.is_performance_claim(r)}
    assert {"headline-per-watt-ratio", "gptoss-matched-tbt-ratio", "kimi-e2e-ratio", "dsr1-jalapeno-single-user"} <= perf
    assert not perf & {"gptoss-gb200-tok-per-kw", "jalapeno-hbm-capacity", "groq-lpu-sram", "benchmark-release-date"}


# ---- checks that can fail -----------------------------------------------------------------------------------

def _decimals(value: float) -> int:
    text = f"{value:.10g}"
    return len(text.split(".")[1]) if "." in text and "e" not in text else 0


#: Claims whose check is a one-sided bound with more slack than a third: perturbed past the bound instead
#: (factor, why).
WIDER = {
    "groq-gemma4-tok-s": (2.5, "the LPU speed bound (about 6,600 tok/s) is almost twice the record"),
    "tpu8i-more-sram": (4.0, "TPU 8i has three times TPU 8t's SRAM: 'more' fails only past that"),
}


def perturbed(table: pl.DataFrame, claim_id: str, factor: float) -> pl.DataFrame:
    """``table`` with the value (and high end) of ``claim_id`` moved by ``factor`` and at least 1.5 units of
    its last printed digit (beyond its rounding)."""
    row = table.filter(pl.col("claim_id") == claim_id).row(0, named=True)

    def move(x):
        if x is None:
            return None
        step = max(abs(x) * abs(factor - 1), 1.5 * 10.0 ** -_decimals(x))
        return x + step if factor > 1 else x - step
    hit = pl.col("claim_id") == claim_id
    return table.with_columns(value=pl.when(hit).then(pl.lit(move(row["value"]))).otherwise("value"),
                              value_high=pl.when(hit).then(pl.lit(move(row["value_high"]))).otherwise("value_high"))


def _predicted_agreeing_ids() -> list[str]:
    return [c for c in _agreeing_ids() if registry.CHECKS[c].kind == "predict"]


def _checked_agreeing_ids() -> list[str]:
    return [c for c in _agreeing_ids() if registry.CHECKS[c].kind != "predict"]


@pytest.mark.parametrize("claim_id", _checked_agreeing_ids())
def test_perturbing_an_agreeing_claim_changes_its_status(claim_id):
    """A reproduced, consistent or restated claim moved by a third (or past its one-sided bound) fails."""
    base = data.claims_table()
    before = registry.claim(claim_id, base)["status"]
    assert before in IN_LINE
    factors = (WIDER[claim_id][0],) if claim_id in WIDER else (4 / 3, 2 / 3)
    after = {f: registry.claim(claim_id, perturbed(base, claim_id, f))["status"] for f in factors}
    assert any(s not in IN_LINE for s in after.values()), (claim_id, after)


def band_of(claim_id: str, table: pl.DataFrame, monkeypatch) -> tuple[float, float]:
    """The band a predicted claim's check judges it against (what it hands :func:`jalapeno.uncertainty.judge`),
    caught on its way in: the check's own band, not one recomputed here."""
    seen = []
    judge = uncertainty.judge

    def recording(published, band):
        seen.append((band.low, band.high) if isinstance(band, uncertainty.Band) else tuple(band))
        return judge(published, band)
    with monkeypatch.context() as m:
        m.setattr(uncertainty, "judge", recording)
        registry.CHECKS[claim_id](registry.ClaimsView(table))
    assert seen, f"{claim_id}: its check judged nothing"
    return seen[-1]


def moved_to(table: pl.DataFrame, claim_id: str, point: float) -> pl.DataFrame:
    """``table`` with the value of ``claim_id`` at ``point`` (a range moved whole, its ends' ratio kept)."""
    row = table.filter(pl.col("claim_id") == claim_id).row(0, named=True)
    lo, hi = row["value"], row["value_high"]
    if hi is None:
        new_lo, new_hi = point, None
    elif point >= hi:  # above the band: the range's low end just past it
        new_lo, new_hi = point, point * hi / lo
    else:              # below: the range's high end just short of it
        new_lo, new_hi = point * lo / hi, point
    hit = pl.col("claim_id") == claim_id
    return table.with_columns(value=pl.when(hit).then(pl.lit(new_lo)).otherwise("value"),
                              value_high=pl.when(hit).then(pl.lit(new_hi)).otherwise("value_high"))


#: Just outside a band's edge: the factor a predicted claim is moved past its band's high end (and divided
#: below its low end).
PAST_THE_EDGE = 1.05


@pytest.mark.parametrize("claim_id", _predicted_agreeing_ids())
def test_a_predicted_claim_just_outside_its_band_disagrees(claim_id, monkeypatch):
    """Each predicted claim that agrees, moved to just outside its own band (the band's edge x 1.05 and
    / 1.05), disagrees: the verdict reads the band, whatever its width."""
    base = data.claims_table()
    assert registry.claim(claim_id, base)["status"] in ("predicted, agrees", "fit-determined")
    lo, hi = band_of(claim_id, base, monkeypatch)
    after = {edge: registry.claim(claim_id, moved_to(base, claim_id, edge))["status"]
             for edge in (hi * PAST_THE_EDGE, lo / PAST_THE_EDGE) if edge > 0}
    assert after and all(s == "predicted, disagrees" for s in after.values()), (claim_id, (lo, hi), after)


#: Predicted claims that agree within a third of their band's edge, so a third moves them (the test above
#: holds them): gpt-oss-120b's 53.7x against a predicted ratio a factor of about 2.4 above it, inside a
#: band of about 3.1 either way (issue 25: without a latency outside the chip, Jalapeño keeps more of its
#: throughput at GB200's top interactivity).
NEAR_THE_EDGE = ("gptoss-matched-tbt-ratio",)


def test_a_third_no_longer_moves_a_predicted_verdict():
    """The finding the honest bands bring (scheme (c), a factor of about 3-4 either way,
    :func:`jalapeno.uncertainty.model_error`): no published number that a prediction agrees with changes
    its verdict when moved by a third either way (x 4/3, x 2/3). A band narrow enough for a third to
    matter again makes this fail: then move such claims back into the test above it."""
    base = data.claims_table()
    ids = [c for c in _predicted_agreeing_ids() if c not in NEAR_THE_EDGE]
    assert ids
    before = {c: registry.claim(c, base)["status"] for c in ids}
    flipped = {c: f for c in ids for f in (4 / 3, 2 / 3)
               if registry.claim(c, perturbed(base, c, f))["status"] != before[c]}
    assert not flipped, flipped


def test_the_perturbation_sweep_runs_in_memory(data_copy):
    """The sweep reads no file: the claims table on disk is never written."""
    before = (data_copy / "claims.csv").read_text()
    registry.claims(perturbed(data.claims_table(), "gptoss-gb200-tok-per-kw", 4 / 3))
    assert (data_copy / "claims.csv").read_text() == before


def test_a_failing_reproduction_shows_as_not_reproduced(edit_data):
    edit_data("claims.csv", "gptoss-gb200-tok-per-kw,44960,", "gptoss-gb200-tok-per-kw,44961,")
    row = registry.claim("gptoss-gb200-tok-per-kw")
    assert row["status"] == "not reproduced" and row["computed"] == "44,960"  # 44,960.4 to five significant digits


def test_an_arithmetic_check_can_fail(edit_data):
    edit_data("claims.csv", "groq-lpx-rack-sram,128,", "groq-lpx-rack-sram,140,")
    row = registry.claim("groq-lpx-rack-sram")
    assert row["status"] == "inconsistent" and row["computed"] == "128"


def test_the_agent_savings_read_their_claims():
    base = data.claims_table()
    ten = base.with_columns(value=pl.when(pl.col("claim_id") == "agent-30-step-per-step-saving")
                            .then(pl.col("value") * 10).otherwise("value"))
    assert registry.claim("agent-30-step-saving", base)["status"] == "consistent"
    assert registry.claim("agent-30-step-saving", ten)["status"] == "inconsistent"


# ---- the judge of a prediction --------------------------------------------------------------------------

def test_judge_is_the_band_of_the_prediction_ends_included():
    # the band already holds Jalapeño's unknowns and the model's unseen-chip error (jalapeno.uncertainty)
    assert uncertainty.judge(100.0, (80.0, 120.0)) == "agrees"
    assert uncertainty.judge(100.0, (100.0, 120.0)) == "agrees"      # an end counts
    assert uncertainty.judge(100.0, (100.5, 120.0)) == "disagrees"
    assert uncertainty.judge(100.0, (60.0, 99.9)) == "disagrees"
    assert registry.published_point(2.1, 4.1, (4.58, 4.79)) == 4.1
    assert registry.published_point(2.1, 4.1, (1.0, 1.2)) == 2.1


def test_printed_rounding_intervals():
    assert metrics.rounds_to(1.868, 1.87, 2) and not metrics.rounds_to(1.876, 1.87, 2)
    assert metrics.half_ulp(2) == pytest.approx(0.005)
    row = registry.claim("gptoss-jalapeno-single-user")
    assert row["status"] == "fit-determined" and row["computed"] == "1,439–1,460"  # 1/0.695 ms .. 1/0.685 ms, of the TBT target


# ---- what the published ratios and power bases are --------------------------------------------------------

def test_headline_ratios():
    r = {row["ratio"]: row for row in comparison.headline_ratio_arithmetic().iter_rows(named=True)}
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
    with pytest.raises(ValueError, match="baseline_power_w must be a positive number of watts, got -5"):
        comparison.baseline_summary(baseline_power_w=-5)
    with pytest.raises(jp.UnknownNameError, match="valid run ids: 20737128080"):
        comparison.baseline_summary(run_id="123")


# ---- sources --------------------------------------------------------------------------------------------

def test_claims_cite_seeds_that_seeds_csv_lists():
    seeds = data.seeds_table()
    assert set(seeds["seed"]) == SEEDS
    cited = {s for cell in data.claims_table()["seeds"] for s in cell.split(";")}
    assert cited <= SEEDS
    assert seeds["title"].null_count() == 0 and set(seeds["title_kind"]) <= {"headline", "opening"}
    dated = seeds.filter(pl.col("date").is_not_null())
    assert dated["date"].str.to_date("%Y-%m-%d").null_count() == 0


def test_an_unknown_claim_is_named():
    with pytest.raises(jp.UnknownNameError, match="'no-such-claim'"):
        registry.claim("no-such-claim")


@pytest.mark.parametrize("value, high, unit, text", [
    (20260825, None, "date (YYYYMMDD)", "2026-08-25"), (2027, None, "year", "2027"),
    (92e9, None, "USD", "92 billion USD"), (1.5, 1.9, "x", "1.5–1.9x"), (44960, None, "tok/s/kW", "44,960 tok/s/kW"),
    (1342, None, "count", "1,342"), (0, None, "flag", "no"), (1, None, "flag", "yes"), (95, None, "percentile", "P95"),
])
def test_claimed_text(value, high, unit, text):
    assert registry.claimed_text(value, high, unit) == text


def test_each_check_is_named_after_its_claim():
    shared = {"jalapeno-hbm-capacity", "jalapeno-hbm4-stacks"}  # one check relates the two claims
    names = {cid: c.fn.__name__ for cid, c in registry.CHECKS.items()}
    assert {cid: n for cid, n in names.items() if cid not in shared} == \
        {cid: "check_" + cid.replace("-", "_") for cid in names if cid not in shared}
    assert {names[cid] for cid in shared} == {"check_jalapeno_hbm_per_stack"}


# ---- the rest of the seeds: schedules, companies, slips ------------------------------------------------------

#: The one-sided checks of this section with more slack than a third (factor, why), as :data:`WIDER` above.
WIDER.update({
    "agent-tens-of-calls": (6.0, "the seeds' 30 and 50 steps sit well inside 10-99: only a range moved past 50 "
                                 "(x 6 puts its low end at 60) leaves them out"),
})

#: The claims this section registers as not checkable, each with its own reason (the audit's ABSENT and
#: "no row" rows: Q10, Q12, Q13, Q19-Q21, Q26, Q27, Q29, Q43, Q48, Q50, Q52-Q54, Q62, Q63, Q66, Q67, and
#: the other seed sentences about chips, companies, prices and schedules).
NEW_NOT_CHECKABLE = (
    "jalapeno-etymology-slip", "jalapeno-kv-cache-local", "jalapeno-network-in-architecture", "jalapeno-balanced-fungible",
    "jalapeno-no-memory-stacking", "jalapeno-predictable-programming-target", "jalapeno-extends-tpu-road",
    "jalapeno-full-stack-co-optimised", "jalapeno-production-qualification", "tbt-gap-imperceptible-to-readers",
    "interactive-gap-agent-density", "agent-retries-enlarge-gain", "agentx-not-run", "tapeout-fastest-in-history",
    "ai-assisted-chip-design", "model-chip-development-loop", "watch-signals-count", "first-batch-own-capacity",
    "broadcom-steadiest-winner", "jalapeno-codesigned-broadcom", "celestica-system-integration",
    "openai-keeps-deploying-nvidia", "richard-ho-needs-nvidia", "groq-lpx-full-production", "groq-lpu-deterministic",
    "nvidia-gpu-prefill-lpu-decode", "rubin-batch-cost-edge", "vera-rubin-early-shipping",
    "vera-rubin-may-rewrite-comparison", "meta-microsoft-asic-delays", "first-gen-supply-risk", "tsmc-capacity-nvidia",
    "jpmorgan-asic-question", "cuda-training-moat", "openai-nvidia-same-day", "cheapest-stack-pricing-power",
    "apple-a-series-analogy", "labs-shift-to-custom-chips", "model-chip-codesign-norm", "us-ai-power-constrained",
    "groq-tpu-migration-cost", "long-context-kv-movement-unverified", "jalapeno-phase-count",
    "tpu8-training-inference-split", "hbm4-shared-by-asics-and-gpus", "inferencex-fixed-sequence-lengths",
)

#: Reasons too generic to tell a reader what would check the claim.
GENERIC_REASONS = {"no public data", "no data", "nothing to compute", "not checkable", "no public record",
                   "future plan; no public data", "author's opinion; no data", "business statement; no public data"}


def _with(table: pl.DataFrame, claim_id: str, column: str, value) -> pl.DataFrame:
    hit = pl.col("claim_id") == claim_id
    return table.with_columns(pl.when(hit).then(pl.lit(value, dtype=table.schema[column])).otherwise(column).alias(column))


def test_the_new_not_checkable_claims_say_specifically_why(table):
    rows = {r["claim_id"]: r for r in table.filter(pl.col("claim_id").is_in(list(NEW_NOT_CHECKABLE))).iter_rows(named=True)}
    assert set(rows) == set(NEW_NOT_CHECKABLE)
    for cid, r in rows.items():
        assert r["status"] == "not checkable" and r["treatment"] == "not_checkable", cid
        reason = (r["reason"] or "").strip()
        assert reason and reason.lower() not in GENERIC_REASONS and len(reason) >= 80, (cid, reason)
        assert r["check"] == reason, cid
    reasons = [r["reason"] for r in rows.values()]
    assert len(set(reasons)) == len(reasons)  # no reason copied from one claim to another


def test_a_multiplying_latency_gain_is_inconsistent_with_a_serial_chain(table):
    """Seed 000: "3.6x on a 50-step task multiplies, not adds". A serial chain of steps is linear: the task's
    ratio is the per-call ratio, not its 50th power."""
    row = table.filter(pl.col("claim_id") == "agent-latency-gain-multiplies").row(0, named=True)
    assert row["status"] == "inconsistent"
    assert row["computed"] == f"{registry.ClaimsView().value('agent-latency-gain-multiplies'):.3g}x" == "3.6x"
    assert "not 3.6^50" in row["check"] and "50 x the per-call saving" in row["check"]
    # the check reads its claims: a 2x gain over the same steps gives a 2x task
    two = _with(data.claims_table(), "agent-latency-gain-multiplies", "value", 2.0)
    assert registry.claim("agent-latency-gain-multiplies", two)["computed"] == "2x"


def test_latency_compounding_over_steps_is_inconsistent_with_the_seeds_own_example(table):
    row = table.filter(pl.col("claim_id") == "agent-latency-compounds").row(0, named=True)
    assert row["status"] == "inconsistent" and row["computed"] == "50 s"  # 50 steps x 1 s, no more
    # stated as "does not compound" (0) the same arithmetic agrees
    flat = _with(data.claims_table(), "agent-latency-compounds", "value", 0.0)
    assert registry.claim("agent-latency-compounds", flat)["status"] == "consistent"


def test_tens_of_calls_holds_the_seeds_step_counts(table):
    row = table.filter(pl.col("claim_id") == "agent-tens-of-calls").row(0, named=True)
    assert row["status"] == "consistent" and row["computed"] == "30, 50"
    assert row["value"] == 10 and row["value_high"] == 99
    long = _with(data.claims_table(), "agent-50-steps", "value", 150.0)
    assert registry.claim("agent-tens-of-calls", long)["status"] == "inconsistent"


def test_no_rubin_among_the_comparison_systems(table):
    row = table.filter(pl.col("claim_id") == "comparison-without-rubin").row(0, named=True)
    assert row["status"] == "consistent" and row["computed"] == "no Rubin"
    named = registry.benchmark_comparators(registry.ClaimsView(), exclude="comparison-without-rubin")
    assert "gb200" in named and len(named) >= 4 and not any("rubin" in s.lower() for s in named)
    rubin = _with(data.claims_table(), "gptoss-jalapeno-tbt", "comparator", "NVIDIA Vera Rubin NVL72")
    after = registry.claim("comparison-without-rubin", rubin)
    assert after["status"] == "inconsistent" and after["computed"] == "Rubin in 1"


def test_the_seeds_slips_are_flagged(table):
    rows = {r["claim_id"]: r for r in table.iter_rows(named=True)}
    dense = rows["gptoss-dense-slip"]
    assert dense["status"] == "inconsistent" and dense["computed"] == "128 experts, 4 per token"
    assert dense["reason"].startswith("Seed slip:") and dense["check"].startswith("Seed slip:")
    assert registry.claim("gptoss-dense-slip", _with(data.claims_table(), "gptoss-dense-slip", "value", 0.0))["status"] \
        == "consistent"  # "not dense" agrees with the config
    tbt = rows["tbt-throughput-slip"]
    assert tbt["status"] == "inconsistent" and tbt["computed"] == "0.69 ms < 1.87 ms"
    assert tbt["reason"].startswith("Seed slip:") and "latency" in tbt["check"]
    # a seed that called TBT a latency would agree, but only through the TBT target it reads: fit-determined
    assert registry.claim("tbt-throughput-slip", _with(data.claims_table(), "tbt-throughput-slip", "value", 0.0))["status"] \
        == "fit-determined"
    name = rows["jalapeno-etymology-slip"]
    assert name["status"] == "not checkable" and name["reason"].startswith("Seed slip:") and "Spanish" in name["reason"]


def test_speculative_decoding_and_the_phases_no_longer_conflict(table):
    rows = {r["claim_id"]: r for r in table.iter_rows(named=True)}
    spec, phases = rows["benchmark-speculative-decoding"], rows["jalapeno-phase-count"]
    assert spec["treatment"] == "reproduce" and spec["status"] == "reproduced" and spec["computed"] == "spec_decoding: none"
    assert phases["status"] == "not checkable" and "benchmark-speculative-decoding" in phases["reason"]
    assert spec["conflicts_with"] is None and phases["conflicts_with"] is None
    # the data record speculative decoding where it was used (DeepSeek-R1 MTP on GB200), so "used" is refuted
    used = _with(data.claims_table(), "benchmark-speculative-decoding", "value", 1.0)
    assert registry.claim("benchmark-speculative-decoding", used)["status"] == "not reproduced"
    assert "deepseek-r1 on gb200" in spec["check"]


def test_the_audits_absent_claims_are_registered(table):
    ids = set(table["claim_id"])
    audit = {"Q3": "comparison-without-rubin", "Q10": "jalapeno-kv-cache-local", "Q12": "jalapeno-balanced-fungible",
             "Q13": "jalapeno-no-memory-stacking", "Q16": "agent-latency-gain-multiplies",
             "Q19": "tbt-gap-imperceptible-to-readers", "Q20": "interactive-gap-agent-density",
             "Q21": "tapeout-fastest-in-history", "Q26": "celestica-system-integration",
             "Q27": "richard-ho-needs-nvidia", "Q29": "groq-lpx-full-production", "Q43": "meta-microsoft-asic-delays",
             "Q46": "benchmark-independent", "Q48": "tsmc-capacity-nvidia", "Q50": "jpmorgan-asic-question",
             "Q52": "watch-signals-count", "Q53": "cheapest-stack-pricing-power", "Q54": "apple-a-series-analogy",
             "Q60": "gptoss-dense-slip", "Q61": "jalapeno-etymology-slip", "Q62": "jalapeno-production-qualification",
             "Q63": "model-chip-development-loop", "Q66": "model-chip-codesign-norm", "Q67": "groq-tpu-migration-cost"}
    assert {q: cid for q, cid in audit.items() if cid not in ids} == {}
    assert {"broadcom-steadiest-winner", "jalapeno-codesigned-broadcom", "openai-keeps-deploying-nvidia",
            "first-gen-supply-risk", "long-context-kv-movement-unverified"} <= ids


from pathlib import Path  # noqa: E402

SEEDS_DIR = Path("/work/shared/seeds")


@pytest.mark.skipif(not SEEDS_DIR.is_dir(), reason="the seed texts are not on this machine")
def test_each_quote_is_in_a_seed_it_cites():
    """A quote is the seed's own words: found verbatim in one of the seeds its row lists."""
    missing = [r["claim_id"] for r in data.claims_table().iter_rows(named=True)
               if not any(r["quote"] in (SEEDS_DIR / s).read_text(encoding="utf-8") for s in r["seeds"].split(";"))]
    assert missing == []


def test_the_seeds_facts_about_the_tested_models_hold(table):
    status = dict(zip(table["claim_id"], table["status"]))
    computed = dict(zip(table["claim_id"], table["computed"]))
    assert status["gptoss-openai-model"] == status["kimi-moonshot-model"] == "consistent"
    assert (computed["gptoss-openai-model"], computed["kimi-moonshot-model"]) == ("openai", "moonshotai")
    swapped = _with(data.claims_table(), "kimi-moonshot-model", "model", "gpt-oss-120b")
    assert registry.claim("kimi-moonshot-model", swapped)["status"] == "inconsistent"  # gpt-oss is not Moonshot's


def test_throughput_and_latency_at_once_but_not_crushing_per_chip(table):
    rows = {r["claim_id"]: r for r in table.iter_rows(named=True)}
    both = rows["jalapeno-throughput-and-latency"]
    assert both["status"] == "consistent" and both["computed"] == "1.5x and 1.7x"
    slower = _with(data.claims_table(), "headline-e2e-ratio", "value", 0.9)
    assert registry.claim("jalapeno-throughput-and-latency", slower)["status"] == "inconsistent"
    per_chip = rows["single-chip-throughput-not-crushing"]
    # 85,448 x 0.7 / (44,960 x 1.2); Jalapeño's side is the peak tok/s/kW target, so the agreement is fit-determined
    assert per_chip["status"] == "fit-determined" and per_chip["computed"] == "1.11x"
    gb200_at_half = _with(data.claims_table(), "gb200-tdp", "value", 500.0)   # GB200 then 22,480 tok/s per chip
    assert registry.claim("single-chip-throughput-not-crushing", gb200_at_half)["status"] == "inconsistent"


def test_more_lpus_lower_the_throughput_per_chip(table):
    row = table.filter(pl.col("claim_id") == "lpx-more-lpus-lower-efficiency").row(0, named=True)
    assert row["status"] == "consistent" and row["computed"] == "821 → 754 tok/s per chip"
    assert "from 72 to 256 LPUs" in row["check"]
