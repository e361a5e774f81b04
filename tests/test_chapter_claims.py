"""The claims chapter module: its counts add up to the claims of data/claims.csv, every status of the
registry is shown (under any data: a failing claim renders as such), the tables follow the book's order
of chapters, a status filter shows only that status, and every key and slot the notebook uses is
computed."""

import csv

import chapter_sources
import pytest

from jalapeno import data, registry
from jalapeno.chapters import claims as chapter
from jalapeno.errors import DataError, UnknownNameError
from jalapeno.publish.scenarios import notebook_names

NAME = "claims"
ORDER = notebook_names()  # what the notebook passes: the book's chapters in order


defaults, ch = chapter_sources.fixtures(NAME, chapter, chapter_order=ORDER)


def test_every_key_and_slot_the_notebook_uses_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []
    tables, figures = chapter_sources.shown_slots(NAME)
    assert tables == set(ch.tables) and not figures
    chapter_sources.assert_captioned(ch, tables)


def test_counts_cover_every_claim_of_the_csv(ch):
    with open(data.data_dir() / "claims.csv", newline="", encoding="utf-8") as f:
        n = sum(1 for _ in csv.DictReader(f))
    assert ch.values["n_claims"] == n
    assert sum(ch.values[chapter.key(s)] for s in chapter.STATUSES) == n
    by = ch.tables["by-chapter"]
    assert by["total"].sum() == n
    assert by.columns == ["chapter", *chapter.STATUSES, "total"]


def test_tables_follow_the_books_order_of_chapters(ch):
    order = ORDER
    for name in ("by-chapter", "claims"):
        seen = ch.tables[name]["chapter"].unique(maintain_order=True).to_list()
        assert seen == [c for c in order if c in seen]


def test_a_status_filter_shows_only_that_status(ch):
    status = next(s for s in chapter.STATUSES if ch.values[chapter.key(s)])
    only = chapter.compute(show_status=status, chapter_order=ORDER)
    rows, key = only.tables["claims"], chapter.key(status)
    assert set(rows["status"]) == {status}
    assert rows.height == only.values[key] == ch.values[key]
    assert only.numbers["shown"] == f"the {rows.height} with status {status!r}"
    assert ch.numbers["shown"] == "all claims" and ch.tables["claims"].height == ch.values["n_claims"]


def test_an_unknown_status_is_named():
    with pytest.raises(UnknownNameError, match="'done'"):
        chapter.compute(show_status="done", chapter_order=ORDER)


def test_every_status_of_the_registry_is_shown_with_its_count(ch):
    assert chapter.STATUSES == registry.STATUSES
    t = ch.tables["statuses"]
    assert t["status"].to_list() == list(registry.STATUSES)
    assert dict(zip(t["status"], t["claims"])) == {s: ch.values[chapter.key(s)] for s in registry.STATUSES}
    assert set(t.filter(t["agreement"] == "yes")["status"]) == set(registry.AGREEING)
    assert ch.values["n_agreeing"] == sum(ch.values[chapter.key(s)] for s in registry.AGREEING)


def test_the_seeds_are_listed_by_file_name_with_a_title(ch):
    seeds = ch.tables["seeds"]
    cited = {s for cell in data.claims_table()["seeds"] for s in cell.split(";")}
    assert cited <= set(seeds["seed"]) and seeds["title"].null_count() == 0


def test_a_failing_claim_is_shown_not_raised(edit_data):
    edit_data("claims.csv", "gptoss-gb200-tok-per-kw,44960,", "gptoss-gb200-tok-per-kw,44961,")
    failing = chapter.compute(show_status="all", chapter_order=ORDER)
    assert failing.values["n_not_reproduced"] == 1
    row = failing.tables["claims"].filter(failing.tables["claims"]["claim_id"] == "gptoss-gb200-tok-per-kw")
    assert row["status"].to_list() == ["not reproduced"]
    only = chapter.compute(show_status="not reproduced", chapter_order=ORDER)
    assert only.tables["claims"]["claim_id"].to_list() == ["gptoss-gb200-tok-per-kw"]


def test_every_claim_belongs_to_a_chapter_of_the_book():
    assert set(data.claims_table()["chapter"]) <= set(ORDER)


def test_a_claim_of_a_chapter_the_book_does_not_have_is_refused(edit_data):
    edit_data("claims.csv", ",reading-the-numbers,", ",reading-the-figures,")
    with pytest.raises(DataError, match="reading-the-figures"):
        chapter.compute(show_status="all", chapter_order=ORDER)


def test_the_claims_table_names_each_treatment_in_words(ch):
    assert set(chapter.TREATMENT_WORDS) == set(data.TREATMENTS)  # every treatment has its words
    shown = set(ch.tables["claims"]["treatment"])
    assert shown <= set(chapter.TREATMENT_WORDS.values()) and "not checkable" in shown
    assert not any("_" in t for t in shown)
