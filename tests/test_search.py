"""The book's search words for printed numbers (jalapeno.publish.search), worked by hand."""

from jalapeno.publish import search


def test_a_number_is_one_word_with_or_without_separators_zeros_and_suffix():
    assert search.number_word("44,960") == search.number_word("44960") == "n44960"
    assert search.number_word("53.70") == search.number_word("53.7") == "n53.7"
    assert search.number_word("104.3x") == search.number_word("104.3") == "n104.3"
    assert search.number_word("12%") == "n12"
    assert search.number_word("1.0") == "n1"


def test_the_index_splits_text_into_those_words():
    lang = search.NumberSearch({})
    assert lang.split("53.70 and 44,960 at 104.3x, 12% of 2026") == [
        "n53.7", "and", "n44960", "at", "n104.3", "n12", "of", "n2026"]


def _sphinx_project(src, pages: dict[str, str]) -> None:
    src.mkdir(exist_ok=True)
    (src / "conf.py").write_text("extensions = ['jalapeno.publish.search']\nhtml_theme = 'basic'\n"
                                 "html_sidebars = {'**': ['globaltoc.html']}\n")
    for name, text in pages.items():
        (src / f"{name}.rst").write_text(text)


def _render(src, out):
    from sphinx.cmd.build import build_main

    assert build_main(["-q", "-b", "html", str(src), str(out)]) == 0
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*.html")}, (out / "searchindex.js").read_bytes()


PAGES = {"index": "Home\n====\n\n.. toctree::\n\n   a\n   b\n",
         "a": "Page A\n======\n\nA zebra counts 53.7 stripes.\n",
         "b": "Page B\n======\n\nA giraffe is 5.5 m tall.\n"}


def test_an_incremental_render_writes_the_changed_page_and_the_index_a_full_render_writes(tmp_path):
    """Page A loses 'zebra' and '53.7' and gains 'okapi': rendered again into the same folder, only A is
    written, and the search index equals a full render's of the same pages, byte for byte (Sphinx alone
    would keep 'zebra' and 'n53.7' as terms of no page)."""
    src, out = tmp_path / "src", tmp_path / "out"
    _sphinx_project(src, PAGES)
    _render(src, out)
    b_written = (out / "b.html").stat().st_mtime_ns
    (src / "a.rst").write_text("Page A\n======\n\nAn okapi counts none.\n")
    pages, index = _render(src, out)
    assert (out / "b.html").stat().st_mtime_ns == b_written and b"okapi" in pages["a.html"]
    fresh = tmp_path / "fresh"
    _sphinx_project(fresh, {**PAGES, "a": "Page A\n======\n\nAn okapi counts none.\n"})
    assert _render(fresh, tmp_path / "fresh-out")[1] == index
    assert b'"zebra"' not in index and b'"n53.7"' not in index and b'"okapi"' in index


def test_a_changed_title_rewrites_every_page_whose_navigation_shows_it(tmp_path):
    src, out = tmp_path / "src", tmp_path / "out"
    _sphinx_project(src, PAGES)
    _render(src, out)
    (src / "b.rst").write_text("Page Bee\n========\n\nA giraffe is 5.5 m tall.\n")
    pages, _ = _render(src, out)
    assert b"Page Bee" in pages["a.html"] and b"Page Bee" in pages["index.html"]
