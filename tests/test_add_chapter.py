"""The README's "Add a chapter", followed: a chapter is its module and its notebook, plus its line in the
table of contents; the machinery finds it, lists and checks its parameters and generates its
parameters cell with no other registry entry. Done in a temporary copy of notebooks/ and the table of
contents, with the module found through the chapters package's search path; no file of the
repository is written."""

import hashlib
import importlib
import shutil
import sys

import nbformat
import pytest
import test_params

import jalapeno as jp
import jalapeno.chapters
from jalapeno.publish import cli, notebook, params, scenarios

NAME, MODULE = "tiny-example", "tiny_example"

#: Step 1: the chapter module, its one declaration of its parameters, and compute under those names.
CHAPTER_MODULE = '''"""A minimal chapter: how many chips it counts."""

from __future__ import annotations

from . import Chapter, Parameter

PARAMETERS = (
    Parameter("chips", ["gb200", "h200"], "the chips counted", names="HBM chip"),
    Parameter("context_tokens", 8192, "the context of each sequence", low=1, high=1048576, unit="tokens"),
    Parameter("power_w", None, "a power per chip (None: the rated one)", type=float, low=0, high=5000,
              low_open=True, unit="W"),
)


def compute(*, chips: list[str], context_tokens: int, power_w: float | None) -> Chapter:
    """The chapter's one number: the chips counted."""
    ch = Chapter()
    ch.quote("n_chips", len(chips))
    return ch
'''

#: Step 2: the notebook without its parameters cell, which `jalapeno params NAME --write-cell` writes.
CELLS = [nbformat.v4.new_markdown_cell("# A tiny example\n\nIt counts {glue:md}`n_chips` chips.\n\nOne more line."),
         nbformat.v4.new_code_cell(f"from jalapeno.chapters import {MODULE} as chapter\n"
                                   "from jalapeno.publish.notebook import glue_all, setup\n\n"
                                   f'P = setup(globals(), "{NAME}")\nch = chapter.compute(**P)\nglue_all(ch)',
                                   metadata={"tags": ["hide-input"]})]


def _digest(*folders) -> str:
    h = hashlib.sha256()
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            h.update(str(path).encode() + path.read_bytes())
    return h.hexdigest()


@pytest.fixture
def new_chapter(tmp_path, monkeypatch):
    """The three edits of the README's steps 1-3, made in copies: returns the new notebook's path."""
    repo = scenarios.REPO_ROOT
    before = _digest(repo / "notebooks", repo / "book", repo / "jalapeno", repo / "scenarios")
    package = tmp_path / "chapters"
    package.mkdir()
    (package / f"{MODULE}.py").write_text(CHAPTER_MODULE)
    monkeypatch.setattr(jalapeno.chapters, "__path__", [*jalapeno.chapters.__path__, str(package)])
    notebooks, book = tmp_path / "notebooks", tmp_path / "book"
    shutil.copytree(scenarios.NOTEBOOKS_DIR, notebooks)
    shutil.copytree(scenarios.BOOK_DIR, book, ignore=shutil.ignore_patterns("_build"))
    monkeypatch.setattr(scenarios, "NOTEBOOKS_DIR", notebooks)
    monkeypatch.setattr(scenarios, "BOOK_DIR", book)
    nb = nbformat.v4.new_notebook(cells=CELLS)
    nbformat.write(nb, notebooks / f"{NAME}.ipynb")
    toc = book / "_toc.yml"  # step 3: its line, after the agents chapter
    assert "      - file: chapters/agents\n" in toc.read_text()
    toc.write_text(toc.read_text().replace("      - file: chapters/agents\n",
                                           f"      - file: chapters/agents\n      - file: chapters/{NAME}\n"))
    yield notebooks / f"{NAME}.ipynb"
    sys.modules.pop(f"jalapeno.chapters.{MODULE}", None)
    assert _digest(repo / "notebooks", repo / "book", repo / "jalapeno", repo / "scenarios") == before


def test_a_new_chapter_is_found_listed_and_checked_with_no_other_registry(new_chapter, capsys):
    names = scenarios.notebook_names()
    assert names[names.index("agents") + 1] == NAME  # in the table of contents' order

    # its parameters cell, generated from its declaration by the README's command, agrees with it
    assert params.parameters_cell(new_chapter) is None
    assert cli.main(["params", NAME, "--write-cell"]) == 0 and capsys.readouterr().out.strip() == str(new_chapter)
    test_params.test_each_notebooks_parameters_cell_is_generated_from_its_declaration(NAME)  # the agreement check
    assert params.cell_source(NAME) == (
        'chips = ["gb200", "h200"]  # names: HBM chip\n'
        "context_tokens = 8192  # in [1, 1048576] tokens\n"
        "power_w = None  # float or None; in (0, 5000] W")
    assert nbformat.read(new_chapter, as_version=4).cells[0].source.startswith("# A tiny example")

    assert cli.main(["params", NAME]) == 0
    listed = capsys.readouterr().out.splitlines()  # each parameter's line, then its meaning
    assert listed[1].split() == ["chips", "list", "of", "str", "[gb200,", "h200]", "names:", "HBM", "chip"]  # as -p takes it
    assert listed[2].strip() == "the chips counted"
    assert listed[3].startswith("    valid: jalapeno, gb200, ")  # the valid names, from data/
    assert listed[6].split()[:5] == ["power_w", "float", "or", "null", "null"]

    # a build's checks before anything runs, and the notebook's own setup
    runs = scenarios.plan([NAME, "roofline"], {"context_tokens": 4096, "power_w": "1.4e3"})
    assert runs[NAME] == {"context_tokens": 4096, "power_w": 1400.0} and runs["roofline"] == {"context_tokens": 4096}
    with pytest.raises(jp.ParameterError, match=r"parameter 'context_tokens' must be in \[1, 1048576\] tokens; got 0"):
        scenarios.check_chapter(NAME, {"context_tokens": 0})
    with pytest.raises(jp.UnknownNameError, match="parameter 'chips': unknown HBM chip 'gb400'"):
        scenarios.plan([NAME], {"chips": ["gb400"]})
    namespace: dict = {}
    exec(params.cell_source(NAME), namespace)
    namespace.pop("__builtins__")
    assert notebook.setup(namespace, NAME) == params.declared(NAME)

    # compute takes exactly the declared names, keyword-only without defaults (checked of every chapter)
    test_params.test_compute_takes_exactly_the_declared_names_keyword_only_without_defaults(NAME)
    module = importlib.import_module(f"jalapeno.chapters.{MODULE}")
    assert module.compute(**runs[NAME] | {"chips": ["gb200"]}).numbers == {"n_chips": "1"}
