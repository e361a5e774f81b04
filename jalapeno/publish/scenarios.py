"""What a build is asked to do, checked before anything runs: the chapters' notebooks, their parameters
and scenarios.

A *scenario* is a YAML file naming a set of assumptions (see ``scenarios/``)::

    name: gb300-baseline
    description: What the chapters can say about a GB300 baseline.
    parameters: {}               # for every chosen notebook that declares them
    notebooks:                   # for one notebook each
      roofline: {focus_chip: gb300}
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..data import REPO_ROOT
from ..errors import CostError, JalapenoError, UnknownNameError, shown
from . import params

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"


BOOK_DIR = REPO_ROOT / "book"


SCENARIOS_DIR = REPO_ROOT / "scenarios"


class ScenarioError(JalapenoError):
    """A scenario file is malformed or asks for something no chosen notebook takes; the message names
    the file, the bad key or value and the valid choices."""


def notebook_names() -> list[str]:
    """The chapters' notebook names (file stems in ``notebooks/``), in the book's order: the
    ``chapters/<name>`` entries of ``book/_toc.yml``, the one list of chapters and their order (each is
    ``notebooks/<name>.ipynb``, computed by ``jalapeno/chapters/<name with underscores>.py``)."""
    toc = yaml.safe_load((BOOK_DIR / "_toc.yml").read_text())
    entries = [c["file"] for part in toc.get("parts", [toc]) for c in part.get("chapters", [])]
    names = [e.removeprefix("chapters/") for e in entries if e.startswith("chapters/")]
    return [name for name in names if (NOTEBOOKS_DIR / f"{name}.ipynb").exists()]


def notebook_path(name: str | Path) -> Path:
    """Path of a notebook given its name (``roofline``), file name or path; UnknownNameError otherwise."""
    stem = Path(str(name)).stem
    path = NOTEBOOKS_DIR / f"{stem}.ipynb"
    if not path.exists():
        raise UnknownNameError("notebook", str(name), notebook_names())
    return path


_SCENARIO_KEYS = ("name", "description", "parameters", "notebooks")


_SCENARIO_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")  # matched in full (re.fullmatch): "evil\n" is refused


@dataclass(frozen=True)
class Scenario:
    """A named set of parameter overrides: ``parameters`` for every chosen notebook that declares them,
    ``notebooks`` per notebook (these win). ``source`` is how commands refer to the file."""

    name: str
    description: str
    parameters: dict[str, object] = field(default_factory=dict)
    notebooks: dict[str, dict[str, object]] = field(default_factory=dict)
    source: str = ""


def scenario_names() -> list[str]:
    """Names of the scenario files shipped in ``scenarios/``."""
    return [p.stem for p in sorted(SCENARIOS_DIR.glob("*.yml"))]


def display_path(path: Path) -> str:
    """``path`` relative to the repository when it is inside it, else absolute (how messages name it)."""
    path = path.resolve()
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file (a path, or the name of a file in ``scenarios/``).

    Raises UnknownNameError for an unknown scenario name or notebook, ScenarioError for a malformed
    file or an unknown key. Parameter names and types are checked by :func:`plan`."""
    p = Path(path)
    if not p.exists():
        shipped = SCENARIOS_DIR / f"{p.stem}.yml"
        if p.suffix in ("", ".yml") and len(p.parts) == 1 and shipped.exists():
            p = shipped
        elif p.suffix in ("", ".yml", ".yaml") and len(p.parts) == 1:
            raise UnknownNameError("scenario", str(path), scenario_names())
        else:
            raise ScenarioError(f"scenario file {shown(str(path))} does not exist; shipped scenarios: "
                                f"{', '.join(scenario_names())}")
    where = display_path(p)
    data = params.read_yaml_file(p, where, ScenarioError)
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: a scenario must be a mapping with keys {', '.join(_SCENARIO_KEYS)}")
    for key in data:
        if key not in _SCENARIO_KEYS:
            raise ScenarioError(f"{where}: unknown key {shown(key)}; valid keys: {', '.join(_SCENARIO_KEYS)}")
    name = data.get("name")
    if not isinstance(name, str) or not _SCENARIO_NAME.fullmatch(name):
        raise ScenarioError(f"{where}: 'name' must be lower-case letters, digits and dashes, got {shown(name)}")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ScenarioError(f"{where}: 'description' must be a non-empty text saying what the scenario assumes")
    parameters = data.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise ScenarioError(f"{where}: 'parameters' must be a mapping of name: value, got {shown(parameters)}")
    per_notebook = data.get("notebooks") or {}
    if not isinstance(per_notebook, dict):
        raise ScenarioError(f"{where}: 'notebooks' must map notebook names to parameters, got {shown(per_notebook)}")
    checked: dict[str, dict[str, object]] = {}
    for nb, values in per_notebook.items():
        stem = notebook_path(nb).stem
        if not isinstance(values, dict):
            raise ScenarioError(f"{where}: notebooks.{nb} must be a mapping of name: value, got {shown(values)}")
        checked[stem] = dict(values)
    if not parameters and not checked:
        raise ScenarioError(f"{where}: the scenario sets no parameter (give 'parameters' or 'notebooks')")
    return Scenario(name, " ".join(description.split()), dict(parameters), checked, where)


def plan(notebooks: list[str] | None, parameters: dict[str, object],
         per_notebook: dict[str, dict[str, object]] | None = None,
         overrides: dict[str, object] | None = None) -> dict[str, dict[str, object]]:
    """For each chosen notebook, the parameters it takes, checked against its declared defaults.

    ``parameters`` and ``overrides`` go to every chosen notebook that declares them (``overrides`` win);
    ``per_notebook`` to one notebook each (checked even for a notebook that is not chosen, so a scenario
    is checked whole). A parameter that no chosen notebook declares raises UnknownNameError listing the
    names they do declare; a wrong type raises ParameterError; a computation the parameters size beyond
    its stated limit raises CostError, and a value the chapter's model refuses ParameterError (the
    chapter's own ``check``, see :func:`check_chapter`)."""
    per_notebook = per_notebook or {}
    overrides = overrides or {}
    chosen = [notebook_path(n).stem for n in (notebooks or notebook_names())]
    declared = {n: params.declared(notebook_path(n)) for n in chosen}
    valid = sorted({p for d in declared.values() for p in d})
    for layer in (parameters, overrides):
        for name in layer:
            if name not in valid:
                raise UnknownNameError("parameter", name, valid)
    for nb, values in per_notebook.items():
        stem = notebook_path(nb).stem
        own = declared.get(stem) or params.declared(notebook_path(stem))
        for name in values:
            if name not in own:
                raise UnknownNameError(f"{stem} parameter", name, list(own))
        check_chapter(stem, params.check_notebook(dict(values), notebook_path(stem)))
    out = {}
    for n, defaults in declared.items():
        mine = {k: v for k, v in parameters.items() if k in defaults}
        mine.update(per_notebook.get(n, {}))
        mine.update({k: v for k, v in overrides.items() if k in defaults})
        checked = params.check_notebook(mine, notebook_path(n))
        check_chapter(n, checked)
        out[n] = {k: checked[k] for k in mine}  # as checked: a run id typed as a number becomes text
    return out


def check_chapter(name: str, parameters: dict[str, object]) -> None:
    """Refuse, before notebook ``name`` runs, effective ``parameters`` that its chapter refuses although
    each is inside its declared range: the chapter module's ``check(**parameters)`` if it has one
    (``jalapeno.chapters.systems``: the fabric graphs ``size`` and ``topology`` build, against the stated
    cost limits; ``jalapeno.chapters.agents``: a task longer than the model's context window). Raises
    CostError with the size and the limit, ParameterError naming the notebook for another value the
    chapter's model refuses."""
    import importlib

    module = importlib.import_module(f"jalapeno.chapters.{name.replace('-', '_')}")
    if hasattr(module, "check"):
        try:
            module.check(**parameters)
        except CostError as exc:
            raise CostError(f"{name}: {exc}") from None
        except UnknownNameError:
            raise
        except ValueError as exc:
            raise params.ParameterError(f"{name}: {exc}") from None


def load_parameter_file(path: Path | str) -> dict[str, object]:
    """Parameters from a YAML (or JSON) file holding one mapping, read by :func:`params.read_yaml_file`
    (YAML 1.2 numbers, size and depth limits, UTF-8); ParameterError naming the file otherwise, OSError
    for a file that cannot be read."""
    data = params.read_yaml_file(path)
    if not isinstance(data, dict):
        raise JalapenoError(f"{path}: a parameters file must hold one mapping of name: value, got {type(data).__name__}")
    return data


def describe(name: str, as_json: bool = False) -> str:
    """The parameters notebook ``name`` declares: name, type, default and what it accepts (interval and
    unit, choices, kind of name), as an aligned text table or (``as_json``) JSON."""
    path = notebook_path(name)
    defaults, decl = params.declared(path), params.declarations(path)
    rows = []
    for key, default in defaults.items():
        kind = (decl[key].type or type(default)).__name__
        if isinstance(default, list) and default:
            kind = f"list of {type(default[0]).__name__}"
        if default is None and decl[key].type:
            kind += " or None"
        rows.append({"parameter": key, "type": kind, "default": default, "accepts": decl[key].describe()})
    if as_json:
        return json.dumps(rows, indent=1)
    table = [("parameter", "type", "default", "accepts")] + [
        (r["parameter"], r["type"], repr(r["default"]), r["accepts"]) for r in rows]  # as the page's banner shows it
    widths = [max(len(row[i]) for row in table) for i in range(3)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row[:3], widths)) + "  " + row[3] for row in table)
