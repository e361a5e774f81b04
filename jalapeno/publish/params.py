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
is checked before a notebook runs (:func:`check_notebook`), and again by the notebook itself
(:func:`jalapeno.publish.notebook.setup`). NaN and infinities are refused for every numeric parameter, and
every element of a list is checked like a scalar against the type of the default's elements.

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
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

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


class Yaml12Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 core-schema scalars (null, bool, int, float; everything else
    text) instead of YAML 1.1's (no ``020000`` read as octal 8192, no ``yes`` read as true, no dates), that
    refuses aliases (so no recursive or exponentially expanding document) and nesting deeper than
    :data:`MAX_YAML_DEPTH`. Errors are ``yaml.YAMLError`` with the position."""

    yaml_implicit_resolvers: dict = {}
    _depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not accepted", self.peek_event().start_mark)
        if self._depth >= MAX_YAML_DEPTH:
            raise yaml.composer.ComposerError(None, None, f"nested deeper than {MAX_YAML_DEPTH} levels",
                                              self.peek_event().start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_int(self, node):
        text = self.construct_scalar(node)
        m = _YAML12_INT.fullmatch(text)
        if not m:  # an explicit !!int tag on something else
            raise yaml.constructor.ConstructorError(None, None, f"{shown(text)} is not an integer", node.start_mark)
        if len(text) > 4000:  # int() stops at 4,300 digits
            raise yaml.constructor.ConstructorError(None, None, f"an integer of {len(text):,} digits is too long",
                                                    node.start_mark)
        if m["hex"] or m["oct"]:
            return int(m["hex"], 16) if m["hex"] else int(m["oct"], 8)
        return int(text, 10)

    def construct_yaml_float(self, node):
        text = self.construct_scalar(node)
        if not _YAML12_FLOAT.fullmatch(text) and not _YAML12_INT.fullmatch(text):
            raise yaml.constructor.ConstructorError(None, None, f"{shown(text)} is not a number", node.start_mark)
        return float(text.lower().replace(".inf", "inf").replace(".nan", "nan")) if "0x" not in text and "0o" not in text \
            else float(self.construct_yaml_int(node))


#: YAML 1.2 core-schema integers and floats (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
_YAML12_INT = re.compile(r"[-+]?[0-9]+|0o(?P<oct>[0-7]+)|0x(?P<hex>[0-9a-fA-F]+)")
_YAML12_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")


for _tag, _pattern, _first in (
        ("null", r"~|null|Null|NULL|", ["~", "n", "N", ""]),
        ("bool", r"true|True|TRUE|false|False|FALSE", list("tTfF")),
        ("int", _YAML12_INT.pattern, list("-+0123456789")),
        ("float", _YAML12_FLOAT.pattern, list("-+.0123456789"))):
    Yaml12Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(rf"^(?:{_pattern})$"), _first)
Yaml12Loader.add_constructor("tag:yaml.org,2002:int", Yaml12Loader.construct_yaml_int)
Yaml12Loader.add_constructor("tag:yaml.org,2002:float", Yaml12Loader.construct_yaml_float)


def read_yaml(text: str, where: str, error: type[Exception] = ParameterError) -> object:
    """The value of a YAML text under :class:`Yaml12Loader`'s rules. Raises ``error`` (ParameterError by
    default) naming ``where`` for a text over :data:`MAX_YAML_CHARS` characters or one that is not
    valid YAML (an alias, too deep a nesting included)."""
    if len(text) > MAX_YAML_CHARS:
        raise error(f"{where}: {len(text):,} characters is more than the {MAX_YAML_CHARS:,} read as YAML")
    try:
        return yaml.load(text, Loader=Yaml12Loader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as exc:
        raise error(f"{where}: not valid YAML: {_yaml_problem(exc)}") from None


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error in one line: what is wrong and where (line and column), without PyYAML's excerpt."""
    problem = getattr(exc, "problem", None)
    if not problem:
        return " ".join(str(exc).split())
    context, mark = getattr(exc, "context", None), getattr(exc, "problem_mark", None)
    place = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return " ".join(f"{context + ': ' if context else ''}{problem}{place}".split())


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


_INTERVAL = re.compile(r"^in\s*([\[(])\s*([^,\s]+)\s*,\s*([^\])\s]+)\s*([\])])\s*(.*)$")


@dataclass(frozen=True)
class Declaration:
    """What a parameter's comment declares: a type for a ``None`` default, an interval for numbers
    (``low``/``high`` with inclusivity), valid strings (``choices``), a kind of name (``names``) and a unit."""

    type: type | None = None
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = True
    high_open: bool = True
    choices: tuple[str, ...] = ()
    names: str | None = None
    unit: str = ""

    def interval(self) -> str:
        """The interval as written (``[1, 1048576]``), or empty when none is declared."""
        if self.low == -math.inf and self.high == math.inf:
            return ""
        fmt = lambda x: "inf" if math.isinf(x) else f"{int(x)}" if x.is_integer() else repr(x)  # noqa: E731
        return f"{'(' if self.low_open else '['}{fmt(self.low)}, {fmt(self.high)}{')' if self.high_open else ']'}"

    def describe(self) -> str:
        """The declaration in words, for ``jalapeno params`` and error messages."""
        parts = []
        if self.interval():
            parts.append(f"in {self.interval()}" + (f" {self.unit}" if self.unit else ""))
        elif self.unit:
            parts.append(self.unit)
        if self.choices:
            parts.append("one of: " + ", ".join(self.choices))
        if self.names:
            parts.append(f"names: {self.names}")
        return "; ".join(parts)


def _number(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ParameterError(f"{where}: interval bound {text!r} is not a number") from None


def _declaration(name: str, comment: str) -> Declaration:
    fields: dict[str, object] = {}
    for clause in (c.strip() for c in comment.split(";")):
        where = f"parameters cell, {name}"
        if clause.startswith("one of:"):
            fields["choices"] = tuple(c.strip() for c in clause.removeprefix("one of:").split(",") if c.strip())
        elif clause.startswith("names:"):
            kind = clause.removeprefix("names:").strip()
            if kind not in NAME_KINDS:
                raise UnknownNameError(f"name kind (in {where})", kind, list(NAME_KINDS))
            fields["names"] = kind
        elif (m := _INTERVAL.match(clause)):
            fields.update(low=_number(m[2], where), high=_number(m[3], where), low_open=m[1] == "(",
                          high_open=m[4] == ")", unit=m[5].strip())
        elif clause.split(" ")[0] in _TYPES:
            fields["type"] = _TYPES[clause.split(" ")[0]]
            unit = re.search(r"\((.*)\)", clause)
            if unit and "unit" not in fields:
                fields["unit"] = unit[1]
    return Declaration(**fields)


def declarations(notebook: dict | str | Path) -> dict[str, Declaration]:
    """What each parameter of the ``parameters`` cell declares in its trailing comment (see the module's
    documentation); a parameter with no comment declares nothing beyond its default's type."""
    return {name: _declaration(name, comment) for name, _, comment in _annotated(notebook) if name}


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def check_value(name: str, value: object, default: object, declared_type: type | None = None) -> object:
    """Check one parameter value against its default's type and return it (ints accepted for floats).

    A parameter whose default is ``None`` takes ``None`` or a value of ``declared_type`` (see
    :func:`declarations`), or anything when no type is declared. A list's elements are checked the same
    way against the type of the default's first element (a number is text only at the top level, such
    as a run id); a list holds at most :data:`MAX_LIST_ELEMENTS`. Raises ParameterError naming the
    parameter (``name[i]`` for an element), the value received (cut to a few dozen characters) and the
    form expected."""
    if default is None:
        if value is None or declared_type is None:
            return value
        return check_value(name, value, declared_type(), None)
    if isinstance(default, bool):
        ok = isinstance(value, bool)
        hint = "True or False (papermill: -p name True, exact spelling)"
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
        hint = f"an integer (such as {default}; {float(default)}, '{default}k' and True are refused)"
    elif isinstance(default, float):
        if isinstance(value, str):  # papermill's -p passes 1.4e3 (no sign in the exponent) as a string
            try:
                value = float(value)
            except ValueError:
                pass
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        hint = "a number"
        if ok:
            try:
                value = float(value)
            except OverflowError:  # an integer beyond the largest float
                raise ParameterError(f"parameter {name!r} must be a finite number; got {shown(value)}") from None
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, (list, tuple)) and (len(value) > 0 or len(default) == 0)
        hint = ("a non-empty list such as [a, b] (papermill's -p passes lists as strings: use -y 'name: [a, b]' "
                "or a parameters file, -f)")
        if ok and len(value) > MAX_LIST_ELEMENTS:
            raise ParameterError(f"parameter {name!r} holds {len(value):,} elements, more than the {MAX_LIST_ELEMENTS} a "
                                 "list parameter takes")
        if ok and default:
            element = default[0]
            value = type(value)(check_value(f"{name}[{i}]", x, element) if not isinstance(element, str)
                                else _text(f"{name}[{i}]", x) for i, x in enumerate(value))
    elif isinstance(default, str) and isinstance(value, (int, float)) and not isinstance(value, bool):
        value, ok = str(value), True  # a run id typed at the command line reads as a number
    else:
        ok = isinstance(value, type(default))
        hint = f"a {_type_name(default)}"
    if not ok:
        raise ParameterError(f"parameter {name!r} must be {hint}; got {shown(value)} ({_type_name(value)})")
    if isinstance(value, float) and not math.isfinite(value):
        raise ParameterError(f"parameter {name!r} must be a finite number; got {value!r}")
    return value


def _text(name: str, value: object) -> str:
    """A list element where the default's elements are text: text only (a chip list holding a number is
    refused here, naming the parameter, not later in a cell)."""
    if not isinstance(value, str):
        raise ParameterError(f"parameter {name!r} must be a text; got {shown(value)} ({_type_name(value)})")
    return value


def _flat(value: object) -> list[object]:
    if isinstance(value, (list, tuple)):
        return [y for x in value for y in _flat(x)]
    return [value]


def check_declared(name: str, value: object, declaration: Declaration) -> None:
    """Check ``value`` (or every element of a list) against the interval, choices and kind of name that
    ``declaration`` states (a list of names or choices names each once). Raises ParameterError naming the
    parameter, the value and the interval, or UnknownNameError listing the valid choices or names."""
    d = declaration
    if isinstance(value, (list, tuple)) and (d.names or d.choices):
        twice = next((x for i, x in enumerate(value) if x in value[:i]), None)
        if twice is not None:
            raise ParameterError(f"parameter {name!r} names {shown(twice)} twice; give each once")
    for x in _flat(value):
        if isinstance(x, (int, float)) and not isinstance(x, bool) and d.interval():
            below = x < d.low or (d.low_open and x == d.low)
            above = x > d.high or (d.high_open and x == d.high)
            if below or above:
                raise ParameterError(f"parameter {name!r} must be in {d.interval()}" + (f" {d.unit}" if d.unit else "")
                                     + f"; got {shown(x)}")
        if isinstance(x, str) and d.choices:
            one_of(f"{name} value", x, d.choices)
        if isinstance(x, str) and d.names:
            valid = NAME_KINDS[d.names]()
            if x not in valid and d.names == "HBM chip" and x in NAME_KINDS["chip"]():
                raise ParameterError(f"parameter {name!r}: chip {x!r} has no HBM bandwidth and peak FLOP/s figures, "
                                     f"which this chapter times; valid HBM chips: {', '.join(valid)}")
            if x not in valid:
                raise UnknownNameError(d.names, x, valid, where=f"parameter {name!r}")


def check(values: dict[str, object], defaults: dict[str, object],
          declared_: dict[str, Declaration] | None = None) -> dict[str, object]:
    """Check a set of parameter values against the declared defaults and what :func:`declarations`
    states (the type of a ``None`` default, the choices of a text, intervals, kinds of name): an unknown
    name, or a value outside its declared choices or names, raises UnknownNameError listing the valid
    ones; a wrong type, NaN, an infinity or a number outside its interval raises ParameterError. Returns
    the effective parameters (defaults overridden by ``values``)."""
    for name in values:
        if name not in defaults:
            raise UnknownNameError("parameter", name, list(defaults))
    declared_ = declared_ or {}
    for name, d in declared_.items():  # the choices before the type, so a wrong type is named with them
        if d.choices and name in values and not isinstance(values[name], (list, tuple)):
            one_of(f"{name} value", values[name], d.choices)
    out = {name: check_value(name, values.get(name, default), default, declared_.get(name, Declaration()).type)
           for name, default in defaults.items()}
    for name, d in declared_.items():
        if name in values:
            check_declared(name, out[name], d)
    return out


def check_notebook(values: dict[str, object], path: str | Path) -> dict[str, object]:
    """:func:`check` against everything the notebook at ``path`` declares (defaults, types, choices,
    intervals, kinds of name)."""
    nb = json.loads(Path(path).read_text())
    return check(values, declared(nb), declarations(nb))


def defined_names(notebook: dict | str | Path) -> set[str]:
    """Every name a notebook's own code cells bind (assignments, imports, functions, loops), read with
    ``ast``: what :func:`unknown_injected` does not count as an injected parameter."""
    if not isinstance(notebook, dict):
        notebook = json.loads(Path(notebook).read_text())
    out: set[str] = set()
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") != "code" or "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            continue
        source = "".join(cell["source"])
        try:
            tree = ast.parse("\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                out.add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                out.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(node.name)
    return out


#: Names IPython puts in every kernel's namespace.
_KERNEL_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}


def unknown_injected(namespace: dict, notebook: dict | str | Path) -> list[str]:
    """Names in a running notebook's ``namespace`` that neither its code nor IPython defines: what
    papermill injected for a parameter the notebook does not declare (papermill only warns)."""
    known = defined_names(notebook) | _KERNEL_NAMES
    return sorted(n for n in namespace if not n.startswith("_") and n not in known)


def one_of(name: str, value: str, valid: list[str] | tuple[str, ...]) -> str:
    """Return ``value`` if it is in ``valid``, else raise UnknownNameError naming ``name`` and the choices."""
    if value not in valid:
        raise UnknownNameError(name, value, list(valid))
    return value
