"""Checks every chapter module's test makes: its notebook's defaults, and that each number the prose
quotes (``{glue:md}`key```) and each table and figure the notebook shows is computed by the module."""

import json
import re
from pathlib import Path

import pytest

from jalapeno.publish import params, scenarios


def notebook(name: str) -> Path:
    """The path of the chapter's notebook, ``notebooks/<name>.ipynb``."""
    return Path(scenarios.notebook_path(name))


def notebook_defaults(name: str) -> dict[str, object]:
    """The parameters the notebook declares, with their default values."""
    return params.declared(notebook(name))


def _sources(name: str, kind: str) -> str:
    nb = json.loads(notebook(name).read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == kind)


def assert_notebook_uses_are_computed(ch, name: str) -> None:
    """Every key the prose quotes is in ``ch.numbers``; every slot the code cells show with
    ``table(ch.tables["slot"])`` or ``figure(ch, "slot")`` is in ``ch.tables`` or ``ch.figures``."""
    keys = set(re.findall(r"\{glue:md\}`([^`]+)`", _sources(name, "markdown")))
    assert keys and keys <= set(ch.numbers), sorted(keys - set(ch.numbers))
    code = _sources(name, "code")
    tables = set(re.findall(r'ch\.tables\["([^"]+)"\]', code))
    figures = set(re.findall(r'figure\(ch, "([^"]+)"\)', code))
    assert tables and tables <= set(ch.tables), sorted(tables - set(ch.tables))
    assert figures <= set(ch.figures), sorted(figures - set(ch.figures))


# Fixtures for a chapter module's test: the test module names its notebook (``NAME``) and imports its
# chapter module as ``chapter``, then ``from chapter_checks import ch, defaults``.

@pytest.fixture(scope="module")
def defaults(request) -> dict[str, object]:
    """The notebook's default parameters (``NAME`` of the test module)."""
    return notebook_defaults(request.module.NAME)


@pytest.fixture(scope="module")
def ch(request, defaults):
    """The chapter computed once at the notebook's defaults."""
    return request.module.chapter.compute(**defaults)
