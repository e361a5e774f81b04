"""The verdict page: the answer in words first, every headline claim with its computed value and status,
counts that add up."""

import re

import chapter_sources
import polars as pl
import pytest

import jalapeno as jp
from jalapeno import caveats, comparison, registry
from jalapeno.chapters import verdict as chapter
from jalapeno.data import claim_value

NAME = "verdict"
defaults, ch = chapter_sources.fixtures(NAME, chapter)


def test_every_key_and_slot_the_notebook_uses_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []
    chapter_sources.check_slots(NAME, ch)


def test_each_headline_shows_the_registrys_status_and_a_computed_value(ch, defaults):
    table = ch.tables["headlines"]
    assert table.height == len(defaults["claims"])
    assert table["claim"].n_unique() == table.height  # two claims that differ by model read apart
    for claim_id, status, computed, where in zip(defaults["claims"], table["status"], table["the book computes"],
                                                 table["published vs computed"]):
        row = registry.claim(claim_id)
        assert status == row["status"] == ch.numbers[claim_id]
        assert where == (row["published_vs_computed"] or "—")
        if status in registry.AGREEING:
            assert computed != "—"  # no agreement without a computed value


def test_counts_add_up_to_the_registry(ch):
    counts = ch.tables["statuses"]
    assert counts["status"].to_list() == list(registry.STATUSES)
    groups = registry.GROUPS
    total = sum(counts[f"{g}: claims"].sum() for g in groups)
    assert total == len(jp.claims()) == ch.values["n_claims"]
    agreeing = counts.filter(pl.col("counts as agreement") == "yes")
    assert ch.values["n_agreeing"] == sum(agreeing[f"{g}: claims"].sum() for g in groups)
    for g in groups:  # a computation is never counted more often than the claims it decides
        assert (counts[f"{g}: computations"] <= counts[f"{g}: claims"]).all()
    assert ch.values["n_seeds"] == 5  # the five seed articles of ../shared/seeds


def test_the_answer_quotes_the_power_bases_the_caveats_chapter_computes(ch):
    bases = comparison.power_basis_table(bases=("rated", "sustained", "sustained, both", "all-in-per-chip"))
    ratio = dict(zip(bases["basis"], bases["ratio"]))
    assert ch.values["pw_rated"] == pytest.approx(ratio["rated"])
    # the published 85,448 / 44,960 tok/s/kW prints as 1.90
    assert ch.numbers["pw_rated"] == "1.90"
    assert ch.values["pw_sus_j"] == pytest.approx(ratio["sustained"])
    assert ch.values["pw_sus_j"] > ch.values["pw_rated"]  # Jalapeño's 550 W sustained against GB200's rated TDP flatters it
    assert ch.values["pw_sus_both"] == pytest.approx(ratio["sustained, both"])
    assert ch.values["pw_allin"] == pytest.approx(ratio["all-in-per-chip"])
    best = caveats.measured_chip_comparison("gpt-oss-120b").sort("peak_tok_s_kw", descending=True).row(0, named=True)
    assert ch.numbers["pw_best_chip"] == best["chip"].upper()
    assert ch.values["pw_best"] == pytest.approx(best["per_kw_ratio"])


@pytest.mark.parametrize("key, claim_id, printed", [("gptoss", "gptoss-matched-tbt-ratio", "53.7"),
                                                    ("dsr1", "dsr1-matched-tbt-ratio", "104.3"),
                                                    ("kimi", "kimi-matched-tbt-ratio", "56")])
def test_each_matched_ratio_as_published_with_where_it_lies(ch, key, claim_id, printed):
    row = registry.claim(claim_id)
    assert ch.numbers[f"r_{key}"] == printed  # the seeds' 53.7x, 104.3x and ~56x
    assert ch.values[f"r_{key}"] == claim_value(claim_id)
    assert ch.numbers[f"{key}_pos"] == row["published_vs_computed"]
    # the band quoted is the one the registry judged: "median (low–high)" with the registry's low–high
    low, high = row["computed"].split("–")
    assert ch.numbers[f"{key}_band"].endswith(f"({low}x–{high}x)")


def test_the_mtp_condition_quotes_the_pareto_chapters_computation(ch):
    from jalapeno import baselines, subject
    r = baselines.ratios_by_assumption(["deepseek-r1"], sets=[chapter.MTP_SET],
                                       fits={"central": subject.fit_jalapeno("central")}).row(0, named=True)
    assert r["spec_decoding"] == "mtp"
    assert ch.values["mtp_at"] == pytest.approx(r["interactivity_tok_s_user"])
    assert ch.values["mtp_at"] == pytest.approx(claim_value("dsr1-baseline-single-user"))  # the seeds' 169 tok/s/user
    median, low, high = (float(x) for x in re.fullmatch(r"([\d.]+)x \(([\d.]+)x–([\d.]+)x\)", ch.numbers["mtp_ratio"]).groups())
    published = claim_value("dsr1-matched-tbt-ratio")
    assert median < published / 2  # with MTP the ratio is nowhere near 104.3x
    assert ch.numbers["mtp_pos"] == registry.position(published, low, high, median)


def test_what_no_measurement_confirms_follows_from_the_counts(ch):
    perf = registry.verdict_counts(jp.claims()).filter(pl.col("group") == registry.GROUPS[0])
    comp = dict(zip(perf["status"], perf["computations"]))
    assert ch.values["perf_claims"] == perf["claims"].sum()
    assert ch.values["perf_computations"] == perf["computations"].sum()
    assert ch.values["perf_agree"] == sum(comp[s] for s in registry.AGREEING)
    assert ch.values["perf_fitted"] == comp["fit-determined"] + comp["fit target"]
    assert ch.values["perf_reproduced"] == comp["reproduced"]
    if comp["reproduced"] == 0:
        assert "no agreeing claim confirms a Jalapeño performance number" in ch.numbers["perf_confirm"]
    else:
        assert ch.numbers["perf_confirm"].startswith(f"{comp['reproduced']} ")


def test_the_confirmation_sentence_changes_with_the_counts(monkeypatch):
    counts = registry.verdict_counts(jp.claims())
    moved = counts.with_columns(pl.when((pl.col("group") == registry.GROUPS[0]) & (pl.col("status") == "reproduced"))
                                .then(2).otherwise(pl.col("computations")).alias("computations"))
    c = chapter.Chapter()
    chapter._performance(c, moved)
    assert c.numbers["perf_confirm"] == "2 are reproduced from measured data"  # "Of the agreeing ones, 2 are ..."
    assert c.values["perf_agree"] == counts.filter((pl.col("group") == registry.GROUPS[0]) & pl.col("agreement"))[
        "computations"].sum() + 2


def test_an_unknown_claim_is_refused(defaults):
    with pytest.raises(jp.UnknownNameError, match="unknown claim 'no-such-claim'"):
        chapter.compute(claims=["no-such-claim"])


def test_a_headline_claim_is_labelled_by_names_not_keys():
    """The verdict table names chips and models as the book does, never by key or a ``;`` list."""
    from jalapeno.chapters import verdict

    r = {"subject": "jalapeno", "comparator": "best existing accelerator", "quantity": "peak single-user speed",
         "model": "gpt-oss-120b;deepseek-r1"}
    assert verdict._claim_label(r) == ("OpenAI Jalapeño vs best existing accelerator: peak single-user speed "
                                       "(gpt-oss-120b, DeepSeek-R1-0528)")
    assert verdict._claim_label({"subject": "agent task", "comparator": "", "quantity": "latency", "model": ""}) == \
        "agent task: latency"
