"""Notebook parameters: declared by the notebook's ``parameters`` cell, checked here.

The names and defaults of a notebook's parameters are read from its cell tagged ``parameters`` with
Python's own parser (``ast``), so a string default that contains ``=`` is read correctly (papermill's
``inspect_notebook`` drops it, papermill issue #864). A value passed for a parameter must have the type
of its default: papermill's ``-p`` injects ``false``, ``none`` or a JSON list as strings (papermill issue
#396), and a float such as ``64.0`` where an integer is expected is refused rather than silently used.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from ..errors import ParameterError, UnknownNameError


def parameters_cell(notebook: dict) -> dict:
    """The cell tagged ``parameters`` of a notebook (nbformat JSON as a dict); ParameterError if none."""
    for cell in notebook.get("cells", []):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            return cell
    raise ParameterError("notebook has no cell tagged 'parameters'")


def declared(notebook: dict | str | Path) -> dict[str, object]:
    """Names and default values of a notebook's parameters, in the order of its ``parameters`` cell.

    Each line of that cell must be ``name = <Python literal>``; anything else raises ParameterError."""
    if not isinstance(notebook, dict):
        notebook = json.loads(Path(notebook).read_text())
    source = "".join(parameters_cell(notebook)["source"])
    out: dict[str, object] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            raise ParameterError(f"parameters cell line {node.lineno}: expected 'name = literal'")
        try:
            out[node.targets[0].id] = ast.literal_eval(node.value)
        except ValueError as exc:
            raise ParameterError(f"parameters cell line {node.lineno}: default is not a literal") from exc
    return out


_TYPES = {"float": float, "int": int, "str": str, "bool": bool}


def _annotated(notebook: dict | str | Path) -> list[tuple[str, str, str]]:
    """(name, default text, trailing comment) of each line of the ``parameters`` cell."""
    if not isinstance(notebook, dict):
        notebook = json.loads(Path(notebook).read_text())
    out = []
    for line in "".join(parameters_cell(notebook)["source"]).splitlines():
        name, _, rest = line.partition("=")
        value, _, comment = rest.partition("#")
        out.append((name.strip(), value.strip(), comment.strip()))
    return out


def declared_types(notebook: dict | str | Path) -> dict[str, type]:
    """Types declared in trailing comments of the ``parameters`` cell for parameters whose default is
    ``None``: ``baseline_power_w = None  # float or None`` declares a float. Other parameters take the
    type of their default."""
    return {name: _TYPES[comment.split(" ")[0]] for name, value, comment in _annotated(notebook)
            if value == "None" and comment and comment.split(" ")[0] in _TYPES}


def declared_choices(notebook: dict | str | Path) -> dict[str, tuple[str, ...]]:
    """Choices declared in trailing comments of the ``parameters`` cell: ``power_basis = "rated"  # one of:
    rated, sustained, all-in`` limits that parameter to those strings, so a bad value is refused before
    anything runs (:func:`check`)."""
    return {name: tuple(c.strip() for c in comment.removeprefix("one of:").split(",") if c.strip())
            for name, _, comment in _annotated(notebook) if comment.startswith("one of:")}


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def check_value(name: str, value: object, default: object, declared_type: type | None = None) -> object:
    """Check one parameter value against its default's type and return it (ints accepted for floats).

    A parameter whose default is ``None`` takes ``None`` or a value of ``declared_type`` (see
    :func:`declared_types`), or anything when no type is declared. Raises ParameterError naming the
    parameter, the value received and the form expected."""
    if default is None:
        if value is None or declared_type is None:
            return value
        return check_value(name, value, declared_type(), None)
    if isinstance(default, bool):
        ok = isinstance(value, bool)
        hint = "True or False (papermill: -p name True, exact spelling)"
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
        hint = "an integer (such as 8192; 8192.0 and '8k' are refused)"
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        hint = "a number"
        value = float(value) if ok else value
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, (list, tuple)) and (len(value) > 0 or len(default) == 0)
        hint = ("a non-empty list such as [a, b] (papermill's -p passes lists as strings: use -y 'name: [a, b]' "
                "or a parameters file, -f)")
    else:
        ok = isinstance(value, type(default))
        hint = f"a {_type_name(default)}"
    if not ok:
        raise ParameterError(f"parameter {name!r} must be {hint}; got {value!r} ({_type_name(value)})")
    return value


def check(values: dict[str, object], defaults: dict[str, object],
          types: dict[str, type] | None = None, choices: dict[str, tuple[str, ...]] | None = None) -> dict[str, object]:
    """Check a set of parameter values against the declared defaults (and the :func:`declared_types` of
    ``None`` defaults, the :func:`declared_choices` of string parameters): an unknown name, or a value
    outside its declared choices, raises UnknownNameError listing the valid ones; a wrong type raises
    ParameterError. Returns the effective parameters (defaults overridden by ``values``)."""
    for name in values:
        if name not in defaults:
            raise UnknownNameError("parameter", name, list(defaults))
    types, choices = types or {}, choices or {}
    for name, valid in choices.items():
        if name in values:
            one_of(f"{name} value", values[name], valid)
    return {name: check_value(name, values.get(name, default), default, types.get(name))
            for name, default in defaults.items()}


def check_notebook(values: dict[str, object], path: str | Path) -> dict[str, object]:
    """:func:`check` against everything the notebook at ``path`` declares (defaults, types, choices)."""
    nb = json.loads(Path(path).read_text())
    return check(values, declared(nb), declared_types(nb), declared_choices(nb))


def one_of(name: str, value: str, valid: list[str] | tuple[str, ...]) -> str:
    """Return ``value`` if it is in ``valid``, else raise UnknownNameError naming ``name`` and the choices."""
    if value not in valid:
        raise UnknownNameError(name, value, list(valid))
    return value
