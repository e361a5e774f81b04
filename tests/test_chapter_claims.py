"""The claims chapter module: its counts add up to the claims of data/claims.csv, the tables follow the
book's order of chapters, a status filter shows only that status, and every key and slot the notebook
uses is computed."""

import csv

import chapter_sources
import pytest

from jalapeno import data
from jalapeno.chapters import claims as chapter
from jalapeno.errors import UnknownNameError

NAME = "claims"


defaults, ch = chapter_sources.fixtures(NAME, chapter)


def test_every_key_and_slot_the_notebook_uses_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []
    tables, figures = chapter_sources.shown_slots(NAME)
    assert tables == set(ch.tables) and not figures


def test_counts_cover_every_claim_of_the_csv(ch):
    with open(data.data_dir() / "claims.csv", newline="", encoding="utf-8") as f:
        n = sum(1 for _ in csv.DictReader(f))
    assert ch.values["n_claims"] == n
    assert sum(ch.values[f"n_{s.replace(' ', '_')}"] for s in chapter.STATUSES) == n
    by = ch.tables["by-chapter"]
    assert by["total"].sum() == n
    assert by.columns == ["chapter", *chapter.STATUSES, "total"]


def test_tables_follow_the_books_order_of_chapters(ch):
    order = data.chapters()
    for name in ("by-chapter", "claims"):
        seen = ch.tables[name]["chapter"].unique(maintain_order=True).to_list()
        assert seen == [c for c in order if c in seen]


def test_a_status_filter_shows_only_that_status(ch):
    status = next(s for s in chapter.STATUSES if ch.values[f"n_{s.replace(' ', '_')}"])
    only = chapter.compute(show_status=status)
    rows, key = only.tables["claims"], f"n_{status.replace(' ', '_')}"
    assert set(rows["status"]) == {status}
    assert rows.height == only.values[key] == ch.values[key]
    assert only.numbers["shown"] == f"the {rows.height} with status {status!r}"
    assert ch.numbers["shown"] == "all claims" and ch.tables["claims"].height == ch.values["n_claims"]


def test_an_unknown_status_is_named():
    with pytest.raises(UnknownNameError, match="'done'"):
        chapter.compute(show_status="done")
