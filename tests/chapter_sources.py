"""What a chapter notebook quotes and shows, read from its committed cells (for tests/test_chapter_*.py)."""

import json
import re

import pytest

from jalapeno.publish import params, scenarios


def _cells(name: str, kind: str) -> str:
    nb = json.loads(scenarios.notebook_path(name).read_text())
    return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == kind)


def defaults(name: str) -> dict[str, object]:
    """The notebook's parameters with their defaults (its chapter module's PARAMETERS)."""
    return params.declared(scenarios.notebook_path(name))


def quoted_keys(name: str) -> set[str]:
    """Every key the notebook's prose quotes (``{glue:md}`key```)."""
    return set(re.findall(r"\{glue:md\}`([^`]+)`", _cells(name, "markdown")))


def shown_slots(name: str) -> tuple[set[str], set[str]]:
    """The table slots (``table(ch, "slot")``) and figure slots (``figure(ch, "slot")``) its code shows."""
    code = _cells(name, "code")
    return set(re.findall(r'table\(ch, "([^"]+)"\)', code)), set(re.findall(r'figure\(ch, "([^"]+)"\)', code))


def fixtures(name: str, module, **extra):
    """Module-scoped pytest fixtures ``defaults`` (the notebook's parameters) and ``ch`` (its chapter
    module's ``compute(**defaults, **extra)``, computed once; ``extra``: what the notebook passes besides
    its parameters): ``defaults, ch = fixtures("pareto", chapter)``."""

    @pytest.fixture(scope="module", name="defaults")
    def defaults_():
        return defaults(name)

    @pytest.fixture(scope="module")
    def ch(defaults):
        return module.compute(**defaults, **extra)

    return defaults_, ch


def missing_keys(name: str, chapter) -> list[str]:
    """The keys the notebook's prose quotes that ``chapter`` (a Chapter) does not compute; fails when the
    prose quotes none (a check that could not fail)."""
    keys = quoted_keys(name)
    assert keys, f"{name}: the prose quotes no key"
    return sorted(keys - set(chapter.numbers))


def check_slots(name: str, chapter, also_shown=()) -> None:
    """Assert that every table slot the notebook shows is computed, and that the figures it shows (those
    named literally, plus ``also_shown`` for slots its code builds, e.g. one per model) are exactly the
    figures ``chapter`` computes."""
    tables, figures = shown_slots(name)
    assert tables or figures, f"{name}: the notebook shows nothing"
    assert tables <= set(chapter.tables), sorted(tables - set(chapter.tables))
    assert_captioned(chapter, tables)
    assert figures | set(also_shown) == set(chapter.figures)


def assert_captioned(chapter, tables) -> None:
    """Assert that every table slot of ``tables`` has a caption in ``chapter`` (a Chapter) and that no two
    captions are the same (a reader tells the tables apart by them)."""
    missing = sorted(t for t in tables if not chapter.captions.get(t))
    assert not missing, f"tables without a caption: {missing}"
    captions = [chapter.captions[t] for t in tables]
    assert len(set(captions)) == len(captions), sorted(captions)
