"""What a build is asked to do, checked before anything runs: the chapters' notebooks, their parameters
and scenarios.

A *scenario* is a YAML file naming a set of assumptions (see ``scenarios/``)::

    name: gb300-baseline
    description: What the chapters can say about a GB300 baseline.
    parameters: {}               # for every chosen notebook that declares them
    notebooks:                   # for one notebook each
      roofline: {focus_chip: gb300}
    measurements: my-runs.jsonl  # optional: a reader's runs the book is rebuilt on (relative to this file)
    chips: my-chip.csv           # optional: the new chips those runs name (relative to this file)
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from ..data import REPO_ROOT
from ..errors import CostError, JalapenoError, ParameterError, UnknownNameError, shown
from . import params

NOTEBOOKS_DIR, BOOK_DIR, SCENARIOS_DIR = REPO_ROOT / "notebooks", REPO_ROOT / "book", REPO_ROOT / "scenarios"
_SCENARIO_KEYS = ("name", "description", "parameters", "notebooks", "measurements", "chips")


class ScenarioError(JalapenoError):
    """A scenario file is malformed or asks for something no chosen notebook takes; the message names
    the file, the bad key or value and the valid choices."""


def notebook_names() -> list[str]:
    """The chapters' notebook names (file stems in ``notebooks/``), in the book's order: the
    ``chapters/<name>`` entries of ``book/_toc.yml``, the one list of chapters and their order (each is
    ``notebooks/<name>.ipynb``, computed by ``jalapeno/chapters/<name with underscores>.py``)."""
    return [name for name in _toc_chapters((BOOK_DIR / "_toc.yml").read_text())
            if (NOTEBOOKS_DIR / f"{name}.ipynb").exists()]


@functools.lru_cache(maxsize=4)
def _toc_chapters(toc_text: str) -> tuple[str, ...]:
    """The ``chapters/<name>`` entries of a table of contents, in order (parsed once for each text: a
    build asks about a dozen times)."""
    toc = yaml.safe_load(toc_text)
    entries = [c["file"] for part in toc.get("parts", [toc]) for c in part.get("chapters", [])]
    return tuple(e.removeprefix("chapters/") for e in entries if e.startswith("chapters/"))


def notebook_path(name: str | Path) -> Path:
    """Path of a notebook given its name (``roofline``), file name or path; UnknownNameError otherwise."""
    path = NOTEBOOKS_DIR / f"{Path(str(name)).stem}.ipynb"
    if not path.exists():
        raise UnknownNameError("notebook", str(name), notebook_names())
    return path


def committed_notebook(name: str | Path) -> nbformat.NotebookNode:
    """The committed notebook ``name`` (:func:`notebook_path`), read and validated once for each content
    of its file (a build's staging asks for each about eight times): shared between callers, so not to be
    changed (``copy.deepcopy`` it first)."""
    return _parsed(notebook_path(name).read_bytes())


@functools.lru_cache(maxsize=32)
def _parsed(content: bytes) -> nbformat.NotebookNode:
    return nbformat.reads(content.decode(), as_version=4)


@dataclass(frozen=True)
class Scenario:
    """A named set of parameter overrides: ``parameters`` for every chosen notebook that declares them,
    ``notebooks`` per notebook (these win). ``source`` is how commands refer to the file. ``measurements``
    and ``chips``: a reader's runs and their new chips (paths, resolved against the scenario file's
    folder) the book is rebuilt on (``jalapeno build --measurements``), or None."""

    name: str
    description: str
    parameters: dict[str, object] = field(default_factory=dict)
    notebooks: dict[str, dict[str, object]] = field(default_factory=dict)
    source: str = ""
    measurements: str | None = None
    chips: str | None = None


def scenario_names() -> list[str]:
    """Names of the scenario files shipped in ``scenarios/``."""
    return [p.stem for p in sorted(SCENARIOS_DIR.glob("*.yml"))]


def display_path(path: Path) -> str:
    """``path`` relative to the repository when it is inside it, else absolute (how messages name it)."""
    path = path.resolve()
    return str(path.relative_to(REPO_ROOT)) if path.is_relative_to(REPO_ROOT) else str(path)


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file (a path, or the name of a file in ``scenarios/``).

    Raises UnknownNameError for an unknown scenario name or notebook, ScenarioError for a malformed
    file or an unknown key. Parameter names and types are checked by :func:`plan`."""
    p = Path(path)
    shipped = SCENARIOS_DIR / f"{p.stem}.yml"
    if not p.exists() and len(p.parts) == 1 and p.suffix in ("", ".yml", ".yaml"):  # a name
        if p.suffix == ".yaml" or not shipped.exists():
            raise UnknownNameError("scenario", str(path), scenario_names())
        p = shipped
    elif not p.exists():
        raise ScenarioError(f"scenario file {shown(str(path))} does not exist; shipped scenarios: "
                            f"{', '.join(scenario_names())}")
    where, keys = display_path(p), ", ".join(_SCENARIO_KEYS)
    data = params.read_yaml_file(p, where, ScenarioError)
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: a scenario must be a mapping with keys {keys}")
    if (key := next((k for k in data if k not in _SCENARIO_KEYS), None)) is not None:
        raise ScenarioError(f"{where}: unknown key {shown(key)}; valid keys: {keys}")
    if not isinstance(name := data.get("name"), str) or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name):  # "evil\n"
        raise ScenarioError(f"{where}: 'name' must be lower-case letters, digits and dashes, got {shown(name)}")
    if not isinstance(description := data.get("description"), str) or not description.strip():
        raise ScenarioError(f"{where}: 'description' must be a non-empty text saying what the scenario assumes")
    parameters = params.mapping(data.get("parameters") or {}, f"{where}: 'parameters'", ScenarioError)
    notebooks = params.mapping(data.get("notebooks") or {}, f"{where}: 'notebooks'", ScenarioError,
                               "notebook names to parameters")
    notebooks = {notebook_path(nb).stem: dict(params.mapping(v, f"{where}: notebooks.{nb}", ScenarioError))
                 for nb, v in notebooks.items()}
    files = {}
    for key in ("measurements", "chips"):  # a reader's files, relative to the scenario file
        value = data.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ScenarioError(f"{where}: {key!r} must be a file's path (relative to the scenario file), got "
                                f"{shown(value)}")
        files[key] = None if value is None else str((p.parent / value).resolve())
        if value is not None and not Path(files[key]).is_file():
            raise ScenarioError(f"{where}: {key!r}: no file {shown(value)} (read relative to the scenario file: "
                                f"{display_path(Path(files[key]))})")
    if files["chips"] and not files["measurements"]:
        raise ScenarioError(f"{where}: 'chips' names the new chips of a measurements file: give 'measurements' too")
    if not parameters and not notebooks and not files["measurements"]:
        raise ScenarioError(f"{where}: the scenario sets no parameter (give 'parameters', 'notebooks' or "
                            "'measurements')")
    return Scenario(name, " ".join(description.split()), dict(parameters), notebooks, where, files["measurements"],
                    files["chips"])


def plan(notebooks: list[str] | None, parameters: dict[str, object],
         per_notebook: dict[str, dict[str, object]] | None = None,
         overrides: dict[str, object] | None = None) -> dict[str, dict[str, object]]:
    """For each chosen notebook (default: every chapter), the parameters it is given, checked by
    :func:`check_chapter`: ``parameters`` and ``overrides`` for every chosen notebook that declares them
    (``overrides`` win), ``per_notebook`` for one each (also checked alone, even for a notebook not
    chosen, so a scenario is checked whole). A parameter that no chosen notebook declares raises
    UnknownNameError listing the names they do declare."""
    per_notebook, overrides = per_notebook or {}, overrides or {}
    declared = {notebook_path(n).stem: params.declared(notebook_path(n)) for n in (notebooks or notebook_names())}
    valid = sorted({p for d in declared.values() for p in d})
    if (name := next((k for k in [*parameters, *overrides] if k not in valid), None)) is not None:
        raise UnknownNameError("parameter", name, valid)
    for n, values in per_notebook.items():
        check_chapter(stem := notebook_path(n).stem, dict(values), f"{stem} parameter")
    out = {}
    for n, defaults in declared.items():
        layers = (parameters, per_notebook.get(n, {}), overrides)  # the later win
        mine = {k: v for layer in layers for k, v in layer.items() if k in defaults}
        checked = check_chapter(n, mine)
        out[n] = {k: checked[k] for k in mine}  # as checked: a run id typed as a number becomes text
    return out


def check_chapter(name: str, values: dict[str, object], what: str = "parameter") -> dict[str, object]:
    """The effective parameters of notebook ``name`` given ``values``, checked as a build does before it
    runs and its ``setup`` again: by :func:`params.check` against the chapter module's ``PARAMETERS`` (an
    unknown name as a ``what``), then
    by the chapter module's ``check(**parameters)`` if it has one, for values its model refuses although
    each is inside its range (``jalapeno.chapters.systems``: the fabric graphs ``size`` and ``topology``
    build, against the stated cost limits; ``jalapeno.chapters.agents``: a task longer than the model's
    context window; ``jalapeno.chapters.roofline``: a context no chosen model's window holds). Raises
    CostError with the size and the limit, ParameterError naming the notebook."""
    module = params.chapter_module(notebook_path(name))
    parameters = params.check(values, module.PARAMETERS, what)
    check = getattr(module, "check", None)
    try:
        if check is not None:
            check(**parameters)
    except CostError as exc:
        raise CostError(f"{name}: {exc}") from None
    except UnknownNameError:
        raise
    except ValueError as exc:
        raise ParameterError(f"{name}: {exc}") from None
    return parameters


def load_parameter_file(path: Path | str) -> dict[str, object]:
    """Parameters from a YAML (or JSON) file holding one mapping, read by :func:`params.read_yaml_file`
    (YAML 1.2 numbers, size and depth limits, UTF-8); ParameterError naming the file otherwise, OSError
    for a file that cannot be read."""
    return params.mapping(params.read_yaml_file(path), f"{path}: a parameters file")


def describe(name: str, as_json: bool = False) -> str:
    """The parameters notebook ``name`` declares (its chapter module's ``PARAMETERS``): name, type,
    default (as ``-p`` takes it, :func:`params.as_typed`: ``null``, ``true``, ``[a, b]``), what it accepts
    (interval and unit, choices, kind of name, and for a kind of name the valid names, from the data as
    the check reads them) and what it means (its ``doc``), as an aligned text table (the meaning and the
    valid names on lines of their own under each parameter) or (``as_json``) JSON (``names``: the valid
    names, or null)."""
    rows = []
    for p in params.declaration(notebook_path(name)):
        kind = p.kind.__name__ + (" or null" if p.default is None else "")
        if isinstance(p.default, list) and p.default:
            kind = f"list of {type(p.default[0]).__name__}"
        rows.append({"parameter": p.name, "type": kind, "default": p.default, "accepts": p.accepts,
                     "meaning": p.doc.replace("(None: ", "(null: "),  # what -p NAME null means
                     "names": params.NAME_KINDS[p.names]() if p.names else None})
    if as_json:
        return json.dumps(rows, indent=1)
    table = [("parameter", "type", "default", "accepts")] + [
        (r["parameter"], r["type"], params.as_typed(r["default"]), r["accepts"]) for r in rows]  # as -p takes it
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row[:3], widths)) + "  " + row[3] for row in table]
    return "\n".join([lines[0]] + [line + (f"\n    {r['meaning']}" if r["meaning"] else "")
                                    + (f"\n    valid: {', '.join(r['names'])}" if r["names"] else "")
                                    for line, r in zip(lines[1:], rows)])
