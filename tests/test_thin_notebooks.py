"""Notebooks stay narrative-thin: the parameters, one call into jalapeno.chapters, and the display."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def lines(nb: dict, kind: str) -> list[str]:
    """Non-blank lines of the cells of ``kind``; for code, comment lines are not counted."""
    out = []
    for cell in nb["cells"]:
        if cell["cell_type"] == kind:
            out += [line for line in "".join(cell["source"]).splitlines()
                    if line.strip() and not (kind == "code" and line.strip().startswith("#"))]
    return out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_notebook_has_more_code_than_prose(path):
    nb = json.loads(path.read_text())
    code, prose = lines(nb, "code"), lines(nb, "markdown")
    assert len(code) <= len(prose), f"{path.name}: {len(code)} code lines, {len(prose)} prose lines"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_computes_through_its_chapter_module(path):
    module = path.stem.replace("-", "_")
    source = "\n".join(lines(json.loads(path.read_text()), "code"))
    assert f"from jalapeno.chapters import {module} as chapter" in source
    assert (ROOT / "jalapeno" / "chapters" / f"{module}.py").exists()


#: The names of the package the prose may show: the public calls a reader makes from Python.
PUBLIC_CALLS = {"`jalapeno.frontier(chip, model)`", "`jalapeno.capacity_plan`"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_prose_names_no_developer_internals(path):
    """Outside a chapter's parameter definitions (folded at build time), the prose names no module,
    function or internal key of the package (`jalapeno.pareto.benchmark_concurrency_cap`, `tau_s:trt`),
    only the public call a reader makes."""
    import re

    found = []
    for cell in json.loads(path.read_text())["cells"]:
        if cell["cell_type"] == "markdown":
            for para in "".join(cell["source"]).split("\n\n"):
                if not para.startswith("Parameters:"):
                    found += [m.group(0) for m in re.finditer(r"`[^`]*(?:jalapeno\.|_s:|\w\(\))[^`]*`", para)]
    assert set(found) <= PUBLIC_CALLS, found
