"""The book's sources: every seed of data/seeds.csv has an outlet (or "not stated") and a short
citation a reader can read; the chapters' tables cite seeds by those, never by file name; and the
references page renders every seed, the benchmark's repositories and the chips' pages from data/."""

import re
from pathlib import Path

import chapter_sources
import polars as pl
import pytest

import jalapeno as jp
from jalapeno import data
from jalapeno.chapters import claims as claims_chapter
from jalapeno.chapters import reading_the_numbers
from jalapeno.errors import BuildError
from jalapeno.publish import pages
from jalapeno.publish.scenarios import notebook_names

ROOT = Path(__file__).resolve().parents[1]


def test_every_seed_has_an_outlet_and_a_short_citation():
    seeds = data.seeds_table()
    assert seeds.height == 5
    assert seeds["short"].to_list() == ["Seed 000", "Seed 001", "Seed 002", "Seed 003", "Seed 004"]
    for r in seeds.iter_rows(named=True):
        assert r["outlet"] and r["outlet_basis"], r["seed"]
        assert not r["short"].endswith(".txt")
    # none of the five names its own outlet: each row says so, and says what that rests on
    assert set(seeds["outlet"]) == {data.OUTLET_NOT_STATED}
    assert "芯东西" in seeds.filter(seeds["seed"] == "004_702e02e5d1f097e4.txt")["outlet_basis"][0]


def test_the_citations_carry_the_stated_dates_only():
    cites = data.seed_citations()
    assert cites["000_8705a119be375ace.txt"] == "Seed 000"
    assert cites["003_243afe2b3792c736.txt"] == "Seed 003 (2026-08-25)"
    assert cites["004_702e02e5d1f097e4.txt"] == "Seed 004 (2026-08-26)"
    assert data.cite_seeds("000_8705a119be375ace.txt;004_702e02e5d1f097e4.txt") == "Seed 000; Seed 004 (2026-08-26)"


def test_a_stated_outlet_is_cited_with_the_date(edit_data):
    edit_data("seeds.csv", ",headline,not stated,", ",headline,Some Outlet,")  # seed 003, the one headline
    assert data.seed_citations()["003_243afe2b3792c736.txt"] == "Seed 003 (Some Outlet, 2026-08-25)"


def test_a_seed_without_an_outlet_is_refused_by_name(edit_data):
    edit_data("seeds.csv", ",opening,not stated,", ",opening,,")
    with pytest.raises(jp.DataError, match=r"seeds\.csv: line 2, column 'outlet'"):
        data.seeds_table()


def test_a_shared_or_file_name_short_citation_is_refused(edit_data):
    edit_data("seeds.csv", ",Seed 001,", ",Seed 000,")
    with pytest.raises(jp.DataError, match=r"short citation\(s\) 'Seed 000' name more than one seed"):
        data.seeds_table()
    edit_data("seeds.csv", ",Seed 000,", ",000_8705a119be375ace.txt,")
    with pytest.raises(jp.DataError, match=r"'000_8705a119be375ace\.txt' are file names"):
        data.seeds_table()


def test_an_unknown_seed_file_is_named():
    with pytest.raises(jp.UnknownNameError, match=r"unknown seed '999_x\.txt'.*000_8705a119be375ace\.txt"):
        data.cite_seeds("000_8705a119be375ace.txt;999_x.txt")


@pytest.fixture(scope="module")
def claims_ch():
    return claims_chapter.compute(show_status="all", chapter_order=notebook_names())


def test_the_claims_table_cites_no_file_name(claims_ch):
    cells = claims_ch.tables["claims"]["seeds"].to_list()
    checks = claims_ch.tables["claims"]["check"].to_list()
    assert cells and not [c for c in cells + checks if c and ".txt" in c]
    # a conflict's check names the other claim's seeds by citation
    conflict = dict(zip(claims_ch.tables["claims"]["claim_id"], checks))["benchmark-independent"]
    assert conflict.endswith("(conflicts with benchmark-setup-chosen-by-openai, stated by Seed 001; Seed 003 (2026-08-25))")
    assert all(re.fullmatch(r"Seed \d{3}( \([^)]*\))?(; Seed \d{3}( \([^)]*\))?)*", c) for c in cells), cells
    # each cell cites exactly the seeds claims.csv gives for that claim, in its order
    raw = dict(zip(data.claims_table()["claim_id"], data.claims_table()["seeds"]))
    for cid, cell in zip(claims_ch.tables["claims"]["claim_id"], cells):
        assert cell == data.cite_seeds(raw[cid])
    assert "outlet" in claims_ch.tables["seeds"].columns and "short" in claims_ch.tables["seeds"].columns


def test_reading_the_numbers_cites_no_file_name():
    t = reading_the_numbers.compute(**chapter_sources.defaults("reading-the-numbers")).tables["claims"]
    assert t.height and not [c for c in t["seeds"].to_list() + t["check"].to_list() if c and ".txt" in c]


@pytest.fixture(scope="module")
def references():
    return pages.references_page((ROOT / "book" / "references.md").read_text())


def test_the_references_page_lists_every_seed(references):
    assert pages.REFERENCES_MARKER not in references
    for r in data.seeds_table().iter_rows(named=True):
        row = next(line for line in references.splitlines() if f"`{r['seed']}`" in line)
        assert r["short"] in row and r["title"] in row and r["title_en"] in row and r["outlet"] in row
        assert (str(r["date"]) if r["date"] else "not stated") in row


def test_the_references_page_links_the_benchmark_and_the_datasheets(references):
    assert '<a href="https://github.com/SemiAnalysisAI/InferenceX">' in references
    assert '<a href="https://github.com/gminneci/mantile/tree/72ff84ebfd56ee0b15bd17d7d49a70fbb4e50256/' \
           'reconcile/sources/inferencemax/raw">' in references
    for url in ("https://www.nvidia.com/en-us/data-center/gb200-nvl72/",
                "https://www.nvidia.com/en-us/data-center/gb300-nvl72/",
                "https://www.amd.com/en/products/accelerators/instinct/mi350/mi355x.html"):
        assert f'<a href="{url}">' in references
    # every address any data file cites is on the page, and none that no data file cites
    cited = {u for p in (ROOT / "data").rglob("*.csv") for u in pages._urls(p.read_text())}
    linked = set(re.findall(r'<a href="(https?://[^"]+)"', references))
    assert cited - linked == set()
    assert linked - cited == {"https://github.com/SemiAnalysisAI/InferenceX",
                              "https://github.com/gminneci/mantile/tree/72ff84ebfd56ee0b15bd17d7d49a70fbb4e50256/"
                              "reconcile/sources/inferencemax/raw"}


def test_the_references_page_links_but_loads_nothing_from_the_network(references, tmp_path):
    (tmp_path / "references.html").write_text(references)
    pages.check_offline(tmp_path)  # links are fine
    (tmp_path / "bad.html").write_text('<img src="https://example.org/x.png">')
    with pytest.raises(BuildError, match="bad.html:1 loads from the network"):
        pages.check_offline(tmp_path)


def test_the_references_page_needs_its_marker():
    with pytest.raises(BuildError, match="lacks the marker <!-- jalapeno:references -->"):
        pages.references_page("# References\n")


def test_the_references_page_is_in_the_toc_before_cite():
    toc = (ROOT / "book" / "_toc.yml").read_text()
    assert toc.index("file: references") < toc.index("file: cite")


def test_the_seeds_figures_cite_known_seeds_and_say_why_one_has_no_counterpart(edit_data):
    """The 16 figures and tables the seeds describe or imply (the audit's tally), each cited by seed."""
    rows = data.seed_figures()
    assert rows.height == 16 and rows["figure"].to_list() == [f"f{i}" for i in range(1, 17)]
    assert rows.filter(pl.col("figure") == "f12")["seeds"].item() == "003_243afe2b3792c736.txt"
    edit_data("seed_figures.csv", "f8,002_dacdd2b5b486b283.txt,", "f8,009_missing.txt,")
    with pytest.raises(jp.DataError, match=r"seed_figures\.csv: line 9, column 'seeds': seed '009_missing\.txt' is not in seeds\.csv"):
        data.seed_figures()
    edit_data("seed_figures.csv", "f8,009_missing.txt,", "f8,002_dacdd2b5b486b283.txt,")
    edit_data("seed_figures.csv", ",roofline;batch-sweep-gpt-oss-120b,", ",,")
    with pytest.raises(jp.DataError, match=r"line 9, column 'gap': a figure without counterparts says why"):
        data.seed_figures()
