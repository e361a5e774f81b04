"""The glossary page and what staging does with it: each term's first use in a chapter links to its entry,
and formulas are typeset as MathML, with nothing loaded from the network (issue 27, item 5)."""

import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
import yaml

from jalapeno.errors import BuildError
from jalapeno.publish import cli, pages

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = ROOT / "book" / "glossary.md"
MATHML = 'xmlns="http://www.w3.org/1998/Math/MathML"'


# ---- the page --------------------------------------------------------------------------------------

def test_the_glossary_is_in_the_table_of_contents():
    toc = yaml.safe_load((ROOT / "book" / "_toc.yml").read_text())
    files = [c["file"] for part in toc["parts"] for c in part["chapters"]]
    assert "glossary" in files


@pytest.mark.parametrize("term", ["TBT", "TPOT", "TTFT", "interactivity", "tok/s/user", "throughput per chip",
                                  "ISL", "OSL", "concurrency", "TP", "EP", "PP", "DP", "KV cache", "MFU", "MBU",
                                  "roofline", "ridge point", "MXFP4", "FP8", "MTP", "MLA", "GQA", "MoE",
                                  "Pareto frontier", "tok/s/kW", "HBM", "SRAM", "disaggregated serving",
                                  "all-to-all", "all-reduce"])
def test_the_glossary_defines_the_terms_the_chapters_use(term):
    terms = pages.glossary_terms(GLOSSARY.read_text())
    assert term in terms
    target = terms[term]
    text = GLOSSARY.read_text()
    entry = text[text.index(f"({target})="):]
    entry = entry[:entry.index("\n(glossary-", 1)] if "\n(glossary-" in entry else entry
    assert re.search(r"\*\*[^*]+\*\*", entry), f"{target} has no bold name"  # a definition follows the target


def test_every_entry_is_a_target_with_its_terms():
    text = GLOSSARY.read_text()
    targets = re.findall(r"^\((glossary-[a-z0-9-]+)\)=$", text, re.M)
    assert len(targets) == len(set(targets)) >= 30
    assert set(pages.glossary_terms(text).values()) == set(targets)  # every target carries a terms line


def test_glossary_terms_reads_each_target_and_its_terms():
    text = ("# Glossary\n\n(glossary-tpot)=\n% terms: TPOT, time per output token\n\n**TPOT**: ...\n\n"
            "(glossary-tp)=\n%terms: TP ,tensor parallelism\n\n**TP**: ...\n\n(not-a-term)=\n% terms: X\n")
    assert pages.glossary_terms(text) == {"TPOT": "glossary-tpot", "time per output token": "glossary-tpot",
                                          "TP": "glossary-tp", "tensor parallelism": "glossary-tp"}


def test_a_term_under_two_entries_is_an_error():
    text = "(glossary-a)=\n% terms: A, shared\n\n(glossary-b)=\n% terms: B, shared\n"
    with pytest.raises(BuildError, match="'shared' under both 'glossary-a' and 'glossary-b'"):
        pages.glossary_terms(text)


# ---- links: the first use in a chapter -------------------------------------------------------------

TERMS = {"TP": "glossary-tp", "TPOT": "glossary-tpot", "E2E": "glossary-e2e", "E2E latency": "glossary-e2e",
         "KV cache": "glossary-kv-cache", "interactivity": "glossary-interactivity",
         "tok/s/user": "glossary-interactivity", "MoE": "glossary-moe"}


def test_the_first_use_links_and_later_ones_do_not():
    cells = ["The TPOT sets the interactivity. A lower TPOT, a higher interactivity.\n",
             "Each TPOT here is plain text.\n"]
    assert pages.link_glossary(cells, TERMS) == [
        "The {ref}`TPOT <glossary-tpot>` sets the {ref}`interactivity <glossary-interactivity>`. "
        "A lower TPOT, a higher interactivity.\n",
        "Each TPOT here is plain text.\n"]


def test_whole_words_only_and_the_longest_term_first():
    text = "TPOTs and TPOT-like, STP, TP8; then TP, then E2E latency and E2E, at 20 tok/s/user.\n"
    assert pages.link_glossary([text], TERMS) == [
        "TPOTs and {ref}`TPOT <glossary-tpot>`-like, STP, TP8; then {ref}`TP <glossary-tp>`, then "
        "{ref}`E2E latency <glossary-e2e>` and E2E, at 20 {ref}`tok/s/user <glossary-interactivity>`.\n"]


def test_one_entry_links_once_whichever_of_its_terms_comes_first():
    text = "Speed in tok/s/user, that is interactivity.\n"
    assert pages.link_glossary([text], TERMS) == [
        "Speed in {ref}`tok/s/user <glossary-interactivity>`, that is interactivity.\n"]


def test_a_lower_case_term_also_links_with_a_capital_and_an_acronym_only_as_written():
    text = "Interactivity falls as moe and Moe stay plain, MoE links.\n"
    assert pages.link_glossary([text], TERMS) == [
        "{ref}`Interactivity <glossary-interactivity>` falls as moe and Moe stay plain, "
        "{ref}`MoE <glossary-moe>` links.\n"]


def test_never_inside_code_links_headings_math_roles_or_directive_lines():
    text = ("# TPOT, the heading\n\n"
            "## A worked TP example\n\n"
            "Code `TPOT` and ``a `TP` b``, a role {glue:md}`TPOT`, a link [the TPOT](x.md#tpot), an image\n"
            "![TP](tp.png), a reference [TP][tp], an address https://example.org/TPOT, HTML <abbr title=\"TP\">,\n"
            "math $\\text{TPOT} = 1/x$ and $$\\text{TP}$$ and a comment <!-- TPOT -->.\n\n"
            ":::{dropdown} The TPOT, step by step\n"
            ":class: TP\n"
            "(tp-target)=\n"
            "% a comment on TPOT\n\n"
            "```python\nTPOT = 1\nTP = 2\n```\n\n"
            "Then TPOT and TP.\n"
            ":::\n")
    expected = text.replace("Then TPOT and TP.", "Then {ref}`TPOT <glossary-tpot>` and {ref}`TP <glossary-tp>`.")
    assert pages.link_glossary([text], TERMS) == [expected]


def test_no_terms_leave_the_text_as_it_is():
    assert pages.link_glossary(["TPOT\n"], {}) == ["TPOT\n"]


def test_stage_prose_changes_only_markdown_cells(tmp_path):
    glossary = tmp_path / "glossary.md"
    glossary.write_text("(glossary-tpot)=\n% terms: TPOT\n\n**TPOT**: ...\n")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title\n\nTPOT is $1/x$."),
                                         nbformat.v4.new_code_cell("TPOT = 1"),
                                         nbformat.v4.new_markdown_cell("TPOT again.")])
    pages.stage_prose(nb, glossary)
    assert nb.cells[0].source == (
        "# Title\n\n{ref}`TPOT <glossary-tpot>` is <math " + MATHML + ' display="inline"><mrow><mn>1</mn>'
        "<mo lspace=\"0\" rspace=\"0\">&#x0002F;</mo><mi>x</mi></mrow></math>.")
    assert nb.cells[1].source == "TPOT = 1"
    assert nb.cells[2].source == "TPOT again."


# ---- formulas: MathML at staging -----------------------------------------------------------------------

def test_inline_math_becomes_mathml():
    assert pages.typeset_math("so $x^2$ grows") == (
        "so <math " + MATHML + ' display="inline"><mrow><msup><mi>x</mi><mn>2</mn></msup></mrow></math> grows')


def test_a_displayed_formula_on_its_own_lines_becomes_a_block():
    text = "Then\n\n$$\\frac{1}{T}$$\n\nafter."
    assert pages.typeset_math(text) == (
        "Then\n\n<div class=\"jalapeno-math\"><math " + MATHML + ' display="block"><mrow><mfrac><mrow><mn>1</mn>'
        "</mrow><mrow><mi>T</mi></mrow></mfrac></mrow></math></div>\n\nafter.")


def test_dollars_that_are_not_math_and_code_stay():
    text = "It costs $5 and $6, `$x$` in code, and\n```\n$y$\n```\n"
    assert pages.typeset_math(text) == text


def test_characters_markdown_reads_are_escaped_inside_mathml():
    out = pages.typeset_math("$[T e^{-w},\\ T e^{w}]$")
    assert "<mo stretchy=\"false\">&#x0005B;</mo>" in out and "<mo stretchy=\"false\">&#x0005D;</mo>" in out
    assert "[" not in out and "]" not in out


def test_a_formula_latex2mathml_cannot_read_is_an_error():
    with pytest.raises(BuildError, match=r"cannot typeset the formula '\$x\^\$': latex2mathml raised Missing"):
        pages.typeset_math("$x^$")


def test_the_glossary_page_has_formulas_and_all_of_them_typeset():
    out = pages.typeset_math(GLOSSARY.read_text())
    assert out.count("<math ") >= 10
    assert "$" not in out


# ---- the built book ------------------------------------------------------------------------------------

class _Words(HTMLParser):
    """Each text of a page's ``<article>`` holding ``word``, with the ``href`` of the links around it."""

    def __init__(self, word: str):
        super().__init__()
        self.word, self.stack, self.inside, self.hits = re.compile(rf"(?<!\w){re.escape(word)}(?!\w)"), [], False, []

    def handle_starttag(self, tag, attrs):
        self.inside = self.inside or tag == "article"
        self.stack.append((tag, dict(attrs)))

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data):
        if self.inside and self.word.search(data):
            self.hits.append([a.get("href") for t, a in self.stack if t == "a"])


def uses(page: Path, word: str) -> list[list[str]]:
    parser = _Words(word)
    parser.feed(page.read_text())
    return parser.hits


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("glossary") / "site"
    assert cli.main(["build", "roofline", "reading-the-numbers", "--out", str(out)]) == 0
    return out


def test_the_first_tpot_of_a_chapter_links_to_the_glossary(site):
    for chapter in ("roofline", "reading-the-numbers"):
        hits = uses(site / "chapters" / f"{chapter}.html", "TPOT")
        assert hits, chapter
        assert hits[0] == ["../glossary.html#glossary-tpot"], chapter
        assert all("../glossary.html#glossary-tpot" not in h for h in hits[1:]), chapter


def test_the_built_glossary_shows_mathml_and_loads_no_mathjax(site):
    glossary = (site / "glossary.html").read_text()
    assert 'id="glossary-tpot"' in glossary
    assert glossary.count("<math ") >= 10 and "$$" not in glossary
    for page in [site / "glossary.html", *sorted((site / "chapters").glob("*.html"))]:
        assert "mathjax" not in re.sub(r'class="[^"]*"', "", page.read_text()).lower(), page.name
    pages.check_offline(site)


def test_a_chapter_formula_is_typeset_in_the_built_page(site):
    roofline = (site / "chapters" / "roofline.html").read_text()
    assert "<math " in roofline and "max(W/BW, F/C)" not in roofline


def test_a_term_first_used_inside_a_glued_sentence_is_linked_there():
    values = {"at": "a point at 952 tok/s/user (a TPOT of 1.05 ms)", "ratio": "53.7"}
    text = "The ratio {glue:md}`ratio` holds at {glue:md}`at`; the TPOT there is short."
    inlined = pages.inline_glued_terms(text, values, {"TPOT": "glossary-tpot"})
    assert inlined == "The ratio {glue:md}`ratio` holds at a point at 952 tok/s/user (a TPOT of 1.05 ms); the TPOT there is short."
    assert pages.link_glossary([inlined], {"TPOT": "glossary-tpot"}) == [
        "The ratio {glue:md}`ratio` holds at a point at 952 tok/s/user (a {ref}`TPOT <glossary-tpot>` of 1.05 ms); "
        "the TPOT there is short."]
