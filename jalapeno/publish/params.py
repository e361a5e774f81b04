"""Notebook parameters: declared by the notebook's ``parameters`` cell, checked here.

The names and defaults of a notebook's parameters are read from its cell tagged ``parameters`` with
Python's own parser (``ast``), so a string default that contains ``=`` is read correctly (papermill's
``inspect_notebook`` drops it, papermill issue #864). A value passed for a parameter must have the type
of its default: papermill's ``-p`` injects ``false``, ``none`` or a JSON list as strings (papermill issue
#396), and a float such as ``64.0`` where an integer is expected is refused rather than silently used.

A parameter declares what it accepts in a trailing comment of its line, clauses separated by ``;``::

    context_tokens = 8192                 # in [1, 1048576] tokens
    baseline_power_w = None               # float or None; in (0, 5000] W
    power_basis = "rated"                 # one of: rated, sustained, all-in
    chips = ["gb200", "h200"]             # names: chip
    jalapeno_price_ratio = 1.0            # in (0, inf)

``in`` takes an interval (``[`` and ``]`` include a bound, ``(`` and ``)`` exclude it; ``inf`` for none)
and applies to a number or to every number of a list; ``names:`` checks a name (or every name of a list)
against the registry of that kind (:data:`NAME_KINDS`); ``one of:`` lists the valid strings. Everything
is checked before a notebook runs and again by its ``setup`` (:func:`jalapeno.publish.scenarios.check_chapter`);
every element of a list like a scalar, NaN and infinities refused for every numeric parameter.

Values given as text (``-p``, ``-y``, ``-f``, a scenario file) are read by :func:`read_yaml` under YAML 1.2
core-schema rules (:class:`Yaml12Loader`): ``020000`` is the integer 20000, ``0x10`` and ``0o20`` are 16
(hexadecimal and octal only with their prefix), ``1.4e3`` is a float, ``true``/``false`` (any case
of the first letter, or all capitals) the only booleans (``yes`` and ``on`` are text), ``null`` or ``~``
nothing, and a date is text. A text or file of more than :data:`MAX_YAML_CHARS` characters, nesting
deeper than :data:`MAX_YAML_DEPTH`, an alias (``*name``: the recursive and exponential expansions) or a
file that is not UTF-8 is refused with ParameterError naming where it came from.
"""

from __future__ import annotations

import ast
import contextlib
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

from ..chapters.names import NAME_KINDS
from ..errors import ParameterError, UnknownNameError, shown

#: Largest text or file read as YAML (characters): parameters and scenarios are a few hundred.
MAX_YAML_CHARS = 65_536

#: Most elements of a list parameter: every list a chapter takes sizes its work (chips x models, contexts,
#: token shapes); the longest a chapter could want, every claim of the registry, is 110.
MAX_LIST_ELEMENTS = 256

#: Deepest nesting of YAML collections accepted (a scenario's deepest value, a list of token pairs in
#: one notebook's parameters, is 5 deep).
MAX_YAML_DEPTH = 20

#: YAML 1.2 core-schema integers and floats (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
_YAML12_INT = re.compile(r"[-+]?[0-9]+|0o(?P<oct>[0-7]+)|0x(?P<hex>[0-9a-fA-F]+)")
_YAML12_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")


class Yaml12Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 core-schema scalars instead of YAML 1.1's (the module's rules),
    refusing aliases and nesting deeper than :data:`MAX_YAML_DEPTH`; errors are ``yaml.YAMLError``."""

    yaml_implicit_resolvers: dict = {}
    _depth = 0

    def compose_node(self, parent, index):
        refused = ("aliases (*name) are not accepted" if self.check_event(yaml.AliasEvent) else
                   f"nested deeper than {MAX_YAML_DEPTH} levels" if self._depth >= MAX_YAML_DEPTH else None)
        if refused:
            raise ComposerError(None, None, refused, self.peek_event().start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node):
        text = self.construct_scalar(node)
        if not (m := _YAML12_INT.fullmatch(text)):  # an explicit !!int tag on something else
            raise ConstructorError(None, None, f"{shown(text)} is not an integer", node.start_mark)
        if len(text) > 4000:  # int() stops at 4,300 digits
            raise ConstructorError(None, None, f"an integer of {len(text):,} digits is too long", node.start_mark)
        return int(m["hex"], 16) if m["hex"] else int(m["oct"], 8) if m["oct"] else int(text, 10)

    def construct_yaml_float(self, node):
        text = self.construct_scalar(node)
        if not _YAML12_FLOAT.fullmatch(text) and not _YAML12_INT.fullmatch(text):
            raise ConstructorError(None, None, f"{shown(text)} is not a number", node.start_mark)
        if text.startswith(("0x", "0o")):
            return float(self.construct_yaml_int(node))
        return float(text.lower().replace(".inf", "inf").replace(".nan", "nan"))


for _tag, _pattern, _first in (
        ("null", r"~|null|Null|NULL|", ["~", "n", "N", ""]),
        ("bool", r"true|True|TRUE|false|False|FALSE", list("tTfF")),
        ("int", _YAML12_INT.pattern, list("-+0123456789")),
        ("float", _YAML12_FLOAT.pattern, list("-+.0123456789"))):
    Yaml12Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(rf"^(?:{_pattern})$"), _first)
Yaml12Loader.add_constructor("tag:yaml.org,2002:int", Yaml12Loader.construct_yaml_int)
Yaml12Loader.add_constructor("tag:yaml.org,2002:float", Yaml12Loader.construct_yaml_float)


def read_yaml(text: str, where: str, error: type[Exception] = ParameterError) -> object:
    """The value of a YAML text under :class:`Yaml12Loader`'s rules. Raises ``error`` naming ``where`` for
    a text over :data:`MAX_YAML_CHARS` characters or one that is not valid YAML (an alias, too deep a
    nesting included), in one line: what is wrong and where (line and column), without PyYAML's excerpt."""
    if len(text) > MAX_YAML_CHARS:
        raise error(f"{where}: {len(text):,} characters is more than the {MAX_YAML_CHARS:,} read as YAML")
    try:
        return yaml.load(text, Loader=Yaml12Loader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as exc:
        problem = str(exc)
        if getattr(exc, "problem", None):  # a MarkedYAMLError: what is wrong and where
            context, mark = exc.context, exc.problem_mark
            problem = (f"{context}: " if context else "") + exc.problem + (
                f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "")
        raise error(f"{where}: not valid YAML: {' '.join(problem.split())}") from None


def read_yaml_file(path: str | Path, where: str | None = None, error: type[Exception] = ParameterError) -> object:
    """:func:`read_yaml` of a UTF-8 file (at most :data:`MAX_YAML_CHARS` bytes are read). Raises ``error``
    naming the file (``where``, default its path) for a larger file or one that is not UTF-8 text, OSError
    for one that cannot be read."""
    where = where or str(path)
    with open(path, "rb") as f:
        raw = f.read(MAX_YAML_CHARS + 1)
    if len(raw) > MAX_YAML_CHARS:
        raise error(f"{where}: more than the {MAX_YAML_CHARS:,} bytes read as YAML")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); parameter and "
                    "scenario files are YAML in UTF-8") from None
    return read_yaml(text, where, error)


def mapping(value: object, where: str, error: type[Exception] = ParameterError, of: str = "name: value") -> dict:
    """``value`` if it is a mapping, else ``error`` saying that ``where`` (a file, a key) must be one."""
    if not isinstance(value, dict):
        raise error(f"{where} must be a mapping of {of}, got {shown(value)}")
    return value


def _notebook(notebook: dict | str | Path) -> dict:
    return notebook if isinstance(notebook, dict) else json.loads(Path(notebook).read_text())


def _parameters_cell(notebook: dict | str | Path) -> list[tuple[str, object, str]]:
    """(name, default, trailing comment) of each line of a notebook's (nbformat JSON, or its path)
    ``parameters`` cell. Each line must be ``name = <Python literal>``: ParameterError otherwise, and for
    a notebook with no cell tagged ``parameters``."""
    cells = _notebook(notebook).get("cells", [])
    cell = next((c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])), None)
    if cell is None:
        raise ParameterError("notebook has no cell tagged 'parameters'")
    lines = "".join(cell["source"]).splitlines()
    out = []
    for node in ast.parse("\n".join(lines)).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            raise ParameterError(f"parameters cell line {node.lineno}: expected 'name = literal'")
        try:
            default = ast.literal_eval(node.value)
        except ValueError as exc:
            raise ParameterError(f"parameters cell line {node.lineno}: default is not a literal") from exc
        rest = lines[node.end_lineno - 1].encode()[node.end_col_offset:].decode()  # offsets count UTF-8 bytes
        out.append((node.targets[0].id, default, rest.strip().removeprefix("#").strip()))
    return out


def declared(notebook: dict | str | Path) -> dict[str, object]:
    """Names and default values of a notebook's parameters, in the order of its ``parameters`` cell."""
    return {name: default for name, default, _ in _parameters_cell(notebook)}


_TYPES = {"float": float, "int": int, "str": str, "bool": bool}
_INTERVAL = re.compile(r"^in\s*([\[(])\s*([^,\s]+)\s*,\s*([^\])\s]+)\s*([\])])\s*(.*)$")


@dataclass(frozen=True)
class Declaration:
    """What a parameter's comment declares: a type for a ``None`` default, an interval for numbers
    (``low``/``high`` with inclusivity; ``interval`` as written with its unit, empty for none), valid
    strings (``choices``), a kind of name (``names``) and a unit."""

    type: type | None = None
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = True
    high_open: bool = True
    interval: str = ""
    choices: tuple[str, ...] = ()
    names: str | None = None
    unit: str = ""

    @classmethod
    def parse(cls, name: str, comment: str) -> Declaration:
        """The declaration in parameter ``name``'s trailing ``comment`` (the module's grammar). Raises
        ParameterError for an interval bound that is not a number, UnknownNameError for a kind of name."""
        fields: dict[str, object] = {}
        where = f"parameters cell, {name}"
        for clause in (c.strip() for c in comment.split(";")):
            if clause.startswith("one of:"):
                fields["choices"] = tuple(c.strip() for c in clause.removeprefix("one of:").split(",") if c.strip())
            elif clause.startswith("names:"):
                fields["names"] = clause.removeprefix("names:").strip()
                if fields["names"] not in NAME_KINDS:
                    raise UnknownNameError(f"name kind (in {where})", fields["names"], list(NAME_KINDS))
            elif (m := _INTERVAL.match(clause)):
                try:
                    low, high = float(m[2]), float(m[3])
                except ValueError:
                    raise ParameterError(f"{where}: an interval bound of {clause!r} is not a number") from None
                fields.update(low=low, high=high, low_open=m[1] == "(", high_open=m[4] == ")",
                              interval=f"{m[1]}{m[2]}, {m[3]}{m[4]} {m[5]}".strip(), unit=m[5].strip())
            elif clause.split(" ")[0] in _TYPES:
                fields["type"] = _TYPES[clause.split(" ")[0]]
                if (unit := re.search(r"\((.*)\)", clause)) and "unit" not in fields:
                    fields["unit"] = unit[1]
        return cls(**fields)

    def describe(self) -> str:
        """The declaration in words, for ``jalapeno params`` and error messages."""
        return "; ".join(filter(None, (f"in {self.interval}" if self.interval else self.unit,
                                       self.choices and "one of: " + ", ".join(self.choices),
                                       self.names and f"names: {self.names}")))


def declarations(notebook: dict | str | Path) -> dict[str, Declaration]:
    """What each parameter of the ``parameters`` cell declares in its trailing comment (see the module's
    documentation); a parameter with no comment declares nothing beyond its default's type."""
    return {name: Declaration.parse(name, comment) for name, _, comment in _parameters_cell(notebook)}


def check_value(name: str, value: object, default: object, declared_type: type | None = None, *,
                element: bool = False) -> object:
    """Check one parameter value against its default's type and return it (ints accepted for floats; a
    number typed for a text, such as a run id, taken as text, but not as an ``element`` of a list).

    A ``None`` default takes ``None`` or a value of ``declared_type``, or anything when no type is
    declared. A list (at most :data:`MAX_LIST_ELEMENTS` long) has its elements checked against the
    default's first. Raises ParameterError naming the parameter (``name[i]`` for an element), the value
    (cut short) and the form expected; NaN, infinities and integers beyond any float for a float."""
    if default is None:
        return value if value is None or declared_type is None else check_value(name, value, declared_type())
    if isinstance(default, float) and isinstance(value, str):  # papermill's -p passes 1.4e3 as a string
        with contextlib.suppress(ValueError):
            value = float(value)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if isinstance(default, bool):
        ok, hint = isinstance(value, bool), "True or False (papermill: -p name True, exact spelling)"
    elif isinstance(default, int):
        ok = number and isinstance(value, int)
        hint = f"an integer (such as {default}; {float(default)}, '{default}k' and True are refused)"
    elif isinstance(default, float):
        ok, hint = number, "a number"
        if ok and not abs(value) <= sys.float_info.max:  # NaN, an infinity, an integer beyond the largest float
            raise ParameterError(f"parameter {name!r} must be a finite number; got {shown(value)}")
        value = float(value) if ok else value
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, (list, tuple)) and (len(value) > 0 or len(default) == 0)
        hint = ("a non-empty list such as [a, b] (papermill's -p passes lists as strings: use -y 'name: [a, b]' "
                "or a parameters file, -f)")
        if ok and len(value) > MAX_LIST_ELEMENTS:
            raise ParameterError(f"parameter {name!r} holds {len(value):,} elements, more than the {MAX_LIST_ELEMENTS} a "
                                 "list parameter takes")
        if ok and default:  # a chip list holding a number is refused here, not later in a cell
            value = type(value)(check_value(f"{name}[{i}]", x, default[0], element=True) for i, x in enumerate(value))
    elif isinstance(default, str) and number and not element:
        value, ok = str(value), True  # a run id typed at the command line reads as a number
    else:
        ok = isinstance(value, type(default))
        hint = "a text" if isinstance(default, str) else f"a {type(default).__name__}"
    if not ok:
        kind = "None" if value is None else type(value).__name__
        raise ParameterError(f"parameter {name!r} must be {hint}; got {shown(value)} ({kind})")
    return value


def _flat(value: object) -> list[object]:
    return [y for x in value for y in _flat(x)] if isinstance(value, (list, tuple)) else [value]


def check(values: dict[str, object], defaults: dict[str, object], declared_: dict[str, Declaration] | None = None,
          what: str = "parameter") -> dict[str, object]:
    """The effective parameters (``defaults`` overridden by ``values``), checked by :func:`check_value` and
    against what :func:`declarations` states, for a value or every element of a list (a list of names or
    choices names each once). An unknown name (a ``what``) or a value outside its declared choices or
    names raises UnknownNameError listing the valid ones; a number outside its interval ParameterError."""
    if (unknown := next((name for name in values if name not in defaults), None)) is not None:
        raise UnknownNameError(what, unknown, list(defaults))
    declared_ = declared_ or {}
    for name, d in declared_.items():  # the choices before the type, so a wrong type is named with them
        if d.choices and name in values and not isinstance(values[name], (list, tuple)) and values[name] not in d.choices:
            raise UnknownNameError(f"{name} value", values[name], list(d.choices))
    out = {name: check_value(name, values.get(name, default), default, declared_.get(name, Declaration()).type)
           for name, default in defaults.items()}
    for name, d in ((n, d) for n, d in declared_.items() if n in values):
        if isinstance(out[name], (list, tuple)) and (d.names or d.choices):
            twice = next((x for i, x in enumerate(out[name]) if x in out[name][:i]), None)
            if twice is not None:
                raise ParameterError(f"parameter {name!r} names {shown(twice)} twice; give each once")
        for x in _flat(out[name]):
            number = isinstance(x, (int, float)) and not isinstance(x, bool)
            if number and not ((d.low < x if d.low_open else d.low <= x) and (x < d.high if d.high_open else x <= d.high)):
                raise ParameterError(f"parameter {name!r} must be in {d.interval}; got {shown(x)}")
            if isinstance(x, str) and d.choices and x not in d.choices:
                raise UnknownNameError(f"{name} value", x, list(d.choices))
            if isinstance(x, str) and d.names and x not in (valid := NAME_KINDS[d.names]()):
                if d.names == "HBM chip" and x in NAME_KINDS["chip"]():
                    raise ParameterError(f"parameter {name!r}: chip {x!r} has no HBM bandwidth and peak FLOP/s figures, "
                                         f"which this chapter times; valid HBM chips: {', '.join(valid)}")
                raise UnknownNameError(d.names, x, valid, where=f"parameter {name!r}")
    return out


def check_notebook(values: dict[str, object], path: str | Path, what: str = "parameter") -> dict[str, object]:
    """:func:`check` against everything the notebook at ``path`` declares (defaults, types, choices,
    intervals, kinds of name)."""
    cell = _parameters_cell(path)
    return check(values, {n: v for n, v, _ in cell}, {n: Declaration.parse(n, c) for n, _, c in cell}, what)


#: Names IPython puts in every kernel's namespace.
_KERNEL_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}


def unknown_injected(namespace: dict, notebook: dict | str | Path) -> list[str]:
    """Names in a running notebook's ``namespace`` that neither IPython nor the notebook's own code cells
    bind (assignments, imports, functions, loops; read with ``ast``): what papermill injected for a
    parameter the notebook does not declare (papermill only warns)."""
    known = set(_KERNEL_NAMES)
    for cell in _notebook(notebook).get("cells", []):
        if cell.get("cell_type") != "code" or "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            continue
        lines = "".join(cell["source"]).splitlines()
        with contextlib.suppress(SyntaxError):  # a cell Python cannot parse binds nothing it can see
            for node in ast.walk(ast.parse("\n".join(x for x in lines if not x.lstrip().startswith(("%", "!"))))):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    known.add(node.id)
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    known.update((a.asname or a.name).split(".")[0] for a in node.names)
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    known.add(node.name)
    return sorted(n for n in namespace if not n.startswith("_") and n not in known)
