"""The verdict page: every headline claim with its computed value and status, counts that add up."""

import chapter_sources
import pytest

import jalapeno as jp
from jalapeno import registry
from jalapeno.chapters import verdict as chapter

NAME = "verdict"
defaults, ch = chapter_sources.fixtures(NAME, chapter)


def test_every_key_and_slot_the_notebook_uses_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []
    chapter_sources.check_slots(NAME, ch)


def test_each_headline_shows_the_registrys_status_and_a_computed_value(ch, defaults):
    table = ch.tables["headlines"]
    assert table.height == len(defaults["claims"])
    assert table["claim"].n_unique() == table.height  # two claims that differ by model read apart
    for claim_id, status, computed in zip(defaults["claims"], table["status"], table["the book computes"]):
        assert status == registry.claim(claim_id)["status"] == ch.numbers[claim_id]
        if status in registry.AGREEING:
            assert computed != "—"  # no agreement without a computed value


def test_counts_add_up_to_the_registry(ch):
    counts = ch.tables["statuses"]
    assert counts["claims"].sum() == len(jp.claims()) == ch.values["n_claims"]
    assert ch.values["n_agreeing"] == counts.filter(counts["counts as agreement"] == "yes")["claims"].sum()
    assert ch.values["n_seeds"] == 5  # the five seed articles of ../shared/seeds


def test_an_unknown_claim_is_refused(defaults):
    with pytest.raises(jp.UnknownNameError, match="unknown claim 'no-such-claim'"):
        chapter.compute(claims=["no-such-claim"])
