"""The changelog page grouped for a reader (issue 27, item 6): each version's changes by chapter, folded,
and within a chapter by the quantity or section that shows each number; reasons whole; a number named in
a reader's words, its internal key only where nothing names it."""

from __future__ import annotations

import pytest

from jalapeno.chapters.quantities import QUANTITIES
from jalapeno.publish import pages

#: Hand-made labels (pages.number_labels' form): two numbers of one quantity (a variant among them), one
#: number named by its sentence, in a section that comes first in the chapter.
LABELS = {"ch": {
    "ratio": {"group": "The per-watt ratio (x)", "label": "the quantity's value", "order": "00005"},
    "ratio_best": {"group": "The per-watt ratio (x)", "label": "best run: the best of every run", "order": "00007"},
    "n": {"group": "Counts", "label": "Of {value} claims, most agree.", "order": "00001"},
}}
VERSIONS = {"0.1.0": {"ch": {"ratio": "1.80", "ratio_best": "1.85", "n": "100", "old": "7"}, "other": {"x": "1"}},
            "0.2.0": {"ch": {"ratio": "1.90", "ratio_best": "1.95", "n": "110", "fresh": "3"}, "other": {"x": "2"}}}
REASONS = {"ch": {"*": "a recalibration of the baseline, with a reason long enough to have been cut at a "
                       "hundred characters by an earlier page, which it must not be any longer",
                  "n": "claims <claim id> added"}}


@pytest.fixture
def page(monkeypatch):
    monkeypatch.setattr(pages, "published_numbers", lambda: VERSIONS)
    monkeypatch.setattr(pages, "reasons", lambda v: REASONS if v == "0.2.0" else {})
    monkeypatch.setattr(pages, "number_labels", lambda: LABELS)
    monkeypatch.setattr(pages, "chapter_titles", lambda: {"other": "Another chapter", "ch": "A chapter"})
    return pages.changelog_page()


def test_changes_are_grouped_by_chapter_then_quantity():
    diff = pages.diff_numbers(VERSIONS["0.1.0"], VERSIONS["0.2.0"])
    chapters = pages.changes_by_chapter(diff, REASONS, LABELS, {"other": "Another chapter", "ch": "A chapter"})
    assert [c["chapter"] for c in chapters] == ["other", "ch"]  # the book's order, not the alphabet's
    ch = chapters[1]
    assert ch["title"] == "A chapter" and ch["why"] == REASONS["ch"]["*"]
    assert ch["counts"] == {"moved": 3, "added": 1, "removed": 1}
    # the section first shown comes first; both numbers of the quantity form one group, in the chapter's order
    assert [(g["group"], [r["key"] for r in g["rows"]]) for g in ch["moved"]] == [
        ("Counts", ["n"]), ("The per-watt ratio (x)", ["ratio", "ratio_best"])]
    counts, ratio = ch["moved"]
    assert counts["rows"][0]["label"] == "Of **110** claims, most agree." and counts["rows"][0]["why"] == "claims <claim id> added"
    assert counts["why_column"] and not ratio["why_column"]  # the chapter's reason is not repeated on each row
    assert [r["label"] for r in ratio["rows"]] == ["the quantity's value", "best run: the best of every run"]
    assert ch["added"] == [{"group": "Numbers no sentence of today's chapter quotes (by their keys)", "why_column": False, "rows": [
        {"label": None, "key": "fresh", "before": "(new)", "after": "3", "why": ""}]}]
    assert [r["key"] for g in ch["removed"] for r in g["rows"]] == ["old"]


def test_the_page_folds_each_chapter_and_shows_reasons_whole(page):
    assert "Changes from version 0.1.0: 4 changed, 1 new, 1 removed." in page
    assert page.index("<summary>Another chapter: 1 changed, 0 new, 0 removed</summary>") < page.index(
        "<summary>A chapter: 3 changed, 1 new, 1 removed</summary>")
    assert page.count('<details class="jalapeno-changes">') == page.count("</details>") == 2
    assert page.count("Why: " + REASONS["ch"]["*"] + "\n") == 1  # whole, once
    # a changed number is a row whose every cell carries its column's header, for the phone's stacked rows
    assert ('<tr><td data-label="number">Of <strong>110</strong> claims, most agree.</td><td data-label="before">100</td>'
            '<td data-label="after">110</td><td data-label="why">claims &lt;claim id&gt; added</td></tr>') in page
    assert ('<thead><tr><th>number</th><th>before</th><th>after</th></tr></thead>\n<tbody>\n'
            '<tr><td data-label="number">the quantity\'s value</td><td data-label="before">1.80</td><td data-label="after">1.90</td></tr>\n'
            '<tr><td data-label="number">best run: the best of every run</td><td data-label="before">1.85</td>'
            '<td data-label="after">1.95</td></tr>\n') in page
    # no key shows where a label exists; a number nothing names shows its key and value
    for key in ("ratio", "n", "ratio_best"):
        assert f"`{key}`" not in page and f"<code>{key}</code>" not in page
    assert "- `fresh`: 3\n" in page and "- `old`: 7\n" in page and '<td data-label="number"><code>x</code></td>' in page


def test_prose_labels_name_each_number_by_its_sentence_and_section():
    cells = ["# A chapter\n\nThe ratio is {glue:md}`r`x. It moved from {glue:md}`a` to {glue:md}`b`.",
             "## Counts\n\n:::{admonition} Takeaways\n- {glue:md}`n` claims, see {ref}`the table <tbl>`\n:::\n\n"
             "| what | value |\n| --- | --- |\n| **chips** | {glue:md}`c` |"]
    labels = pages.prose_labels(cells, {"r": "1.9", "a": "1", "b": "2", "n": "168", "c": "64"})
    assert labels == {"r": ("A chapter", "The ratio is {value}x."), "a": ("A chapter", "It moved from {value} to 2."),
                      "b": ("A chapter", "It moved from 1 to {value}."), "n": ("Counts", "{value} claims, see the table"),
                      "c": ("Counts", "chips: {value}")}


def test_the_committed_book_labels_a_shared_quantity_and_every_reason_is_whole():
    labels = pages.number_labels()
    # caveats quotes GB200's peak tok/s/kW as a registered quantity: its group is the quantity's description
    what = QUANTITIES["gb200-gptoss-peak-tok-s-kw"].what
    assert labels["caveats"]["pb_b_rated"]["group"] == what[:what.index(" (jalapeno.")]
    assert "jalapeno." not in "".join(v["group"] for c in labels.values() for v in c.values())
    page = pages.changelog_page()
    for version in pages.published_numbers():
        for chapter, told in pages.reasons(version).items():
            for reason in told.values():
                text = " ".join(str(reason).split())
                as_html = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                as_markdown = text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
                assert as_html in page or as_markdown in page, (version, chapter, reason)


def test_a_versions_count_is_written_as_a_reader_writes_it(monkeypatch):
    """1,234 numbers (thousands separated), in 1 chapter (singular)."""
    many = {"0.1.0": {"ch": {f"n{i}": str(i) for i in range(1234)}}}
    monkeypatch.setattr(pages, "published_numbers", lambda: many)
    monkeypatch.setattr(pages, "reasons", lambda v: {})
    monkeypatch.setattr(pages, "number_labels", lambda: {})
    monkeypatch.setattr(pages, "chapter_titles", lambda: {"ch": "A chapter"})
    assert "1,234 numbers in 1 chapter recorded." in pages.changelog_page()


def test_this_builds_page_reads_each_sentence_with_this_builds_numbers():
    """A rerun at 1,400 W: the sentence that quotes the baseline's power and its tok/s/kW reads both as this
    build computed them (53,952 tok/s / 1.4 kW = 38,537), not the changed one beside the release's other."""
    current = pages.committed_numbers()
    current["reading-the-numbers"] = {**current["reading-the-numbers"], "baseline_power_kw": "1.4",
                                      "tok_per_kw": "38,537"}
    page = pages.this_build_page(current, None, True)
    assert "Divided by <strong>1.4</strong> kW that is 38,537 tok/s/kW" in page
    assert "<strong>38,537</strong> tok/s/kW (printed: 44,960)" in page  # its first quote, the takeaway
    assert "that is 44,960 tok/s/kW" not in page and "Divided by 1.2" not in page


def test_a_clause_glued_empty_in_the_release_reads_as_nothing_not_an_empty_cell():
    """The 1,400 W rerun adds a clause the default book glues empty (``per_watt_basis``): its row says the
    release's sentence read on without it."""
    current = pages.committed_numbers()
    assert current["reading-the-numbers"]["per_watt_basis"] == ""
    current["reading-the-numbers"] = {**current["reading-the-numbers"], "per_watt_basis": ", with GB200 at 1,400 W"}
    page, latest = pages.this_build_page(current, None, True), list(pages.published_numbers())[-1]
    assert (f'<td data-label="version {latest}"><em>(nothing: the sentence reads on without it)</em></td>'
            '<td data-label="this build">, with GB200 at 1,400 W</td>') in page
    assert f'<td data-label="version {latest}"></td>' not in page
