"""Chapter parameters: declared once by the chapter module's ``PARAMETERS``, checked here.

Each chapter module (``jalapeno/chapters/<name>.py``) declares what its ``compute`` takes as a tuple of
:class:`jalapeno.chapters.Parameter`: name, default, type (for a ``None`` default), interval with its
unit, choices or a kind of name (:data:`NAME_KINDS`)::

    Parameter("context_tokens", 8192, "the context of each sequence", low=1, high=1048576, unit="tokens")
    Parameter("baseline_power_w", None, "the baseline's power", type=float, low=0, high=5000, low_open=True, unit="W")
    Parameter("power_basis", "rated", "the power basis", choices=("rated", "sustained", "all-in"))
    Parameter("chips", ["gb200", "h200"], "the chips compared", names="chip")

The notebook's cell tagged ``parameters`` is generated from it (:func:`cell_source`, written by
``jalapeno params <name> --write-cell``; a test checks every notebook's cell equals it): papermill
injects values after that cell, and :func:`unknown_injected` finds a name it injected that the notebook
does not take. A value passed for a parameter must have the type of its default: papermill's ``-p``
injects ``false``, ``none`` or a JSON list as strings (papermill issue #396), and a float such as
``64.0`` where an integer is expected is refused rather than silently used. An interval applies to a
number or to every number of a list, a kind of name or choices to a text or every text of a list.
Everything is checked before a notebook runs and again by its ``setup``
(:func:`jalapeno.publish.scenarios.check_chapter`); NaN and infinities are refused for every numeric
parameter.

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
import copy
import importlib
import json
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import nbformat
import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

from ..chapters import Parameter
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
        value = float(text.lower().replace(".inf", "inf").replace(".nan", "nan"))
        if math.isinf(value) and "inf" not in text.lower():  # 1e400: typed as a number, read as an infinity
            raise _Unrepresentable(None, None, f"{text} is beyond the largest number a float holds "
                                               f"({sys.float_info.max:.1e})", node.start_mark)
        return value


class _Unrepresentable(ConstructorError):
    """A number typed that no float holds (``1e400``): said as typed, not as invalid YAML."""


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
    except _Unrepresentable as exc:
        raise error(f"{where}: {exc.problem}") from None
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


def chapter_module(notebook: str | Path) -> ModuleType:
    """The chapter module of notebook ``notebook`` (its name, file name or path):
    ``jalapeno/chapters/<name with underscores>.py``, imported."""
    return importlib.import_module(f"jalapeno.chapters.{Path(str(notebook)).stem.replace('-', '_')}")


def as_typed(value: object) -> str:
    """``value`` as a reader types it after ``-p NAME``: YAML in flow style (``null``, ``true``, ``gb200``,
    ``[a, b]``, ``1400.0``), which :func:`read_yaml` reads back to the same value."""
    return yaml.safe_dump(value, default_flow_style=True, width=10**6).removesuffix("\n...\n").strip()


def declaration(notebook: str | Path) -> tuple[Parameter, ...]:
    """What notebook ``notebook`` (its name, file name or path) takes: its chapter module's ``PARAMETERS``."""
    return chapter_module(notebook).PARAMETERS


def declared(notebook: str | Path) -> dict[str, object]:
    """Names and default values of a notebook's parameters, in the order of its declaration (a copy: a
    list default can be changed without changing the declaration)."""
    return {p.name: copy.deepcopy(p.default) for p in declaration(notebook)}


def _literal(value: object) -> str:
    """``value`` as a Python literal, texts in double quotes (as a reader writes them)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(x) for x in value) + "]"
    return repr(value)


def cell_source(notebook: str | Path) -> str:
    """The source of the notebook's ``parameters`` cell, generated from its declaration: one line
    ``name = <default>  # <what it accepts>`` per parameter (``# float or None; ...`` for a ``None``
    default), no comment for a parameter whose type is its only check."""
    lines = []
    for p in declaration(notebook):
        comment = "; ".join(filter(None, (p.default is None and f"{p.kind.__name__} or None", p.accepts)))
        lines.append(f"{p.name} = {_literal(p.default)}" + (f"  # {comment}" if comment else ""))
    return "\n".join(lines)


def parameters_cell(notebook: dict | str | Path) -> dict | None:
    """The cell tagged ``parameters`` of a notebook (nbformat JSON, or its path); None when it has none."""
    cells = _notebook(notebook).get("cells", [])
    return next((c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])), None)


def write_cell(path: Path) -> bool:
    """Write :func:`cell_source` into the ``parameters`` cell of the notebook at ``path`` (a new cell
    after the first one, the title, when it has none), leaving every other cell and every output as it
    is; returns whether the file changed."""
    nb = nbformat.read(path, as_version=4)
    cell = parameters_cell(nb)
    if cell is None:
        cell = nbformat.v4.new_code_cell(metadata={"tags": ["parameters"]})
        nb.cells.insert(min(1, len(nb.cells)), cell)
    if cell.source == (source := cell_source(path)):
        return False
    cell.source = source
    nbformat.write(nb, path)
    return True


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
        ok, hint = isinstance(value, bool), "true or false (YAML: -p name true; papermill: -p name True)"
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
        hint = (f"a non-empty list such as [a, b] (jalapeno build -p {name} '[a, b]'; papermill's own -p passes "
                f"lists as strings: use its -y '{name}: [a, b]' or a parameters file, -f)")
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


def check(values: dict[str, object], parameters: Sequence[Parameter], what: str = "parameter") -> dict[str, object]:
    """The effective parameters (the declared defaults overridden by ``values``), checked by
    :func:`check_value` and against what each :class:`Parameter` of ``parameters`` declares, for a value
    or every element of a list (a list of names or choices names each once). An unknown name (a
    ``what``) or a value outside its declared choices or names raises UnknownNameError listing the valid
    ones; a number outside its interval ParameterError."""
    if (unknown := next((name for name in values if name not in {p.name for p in parameters}), None)) is not None:
        raise UnknownNameError(what, unknown, [p.name for p in parameters])
    for p in parameters:  # the choices before the type, so a wrong type is named with them
        value = values.get(p.name)
        if p.choices and p.name in values and not isinstance(value, (list, tuple)) and value not in p.choices:
            raise UnknownNameError(f"{p.name} value", value, list(p.choices))
    out = {}
    for p in parameters:
        try:
            out[p.name] = check_value(p.name, values[p.name] if p.name in values else copy.deepcopy(p.default),
                                      p.default, p.type)
        except ParameterError as exc:  # a value of the wrong type: the range it must also lie in, said at once
            if not p.bounded:
                raise
            raise ParameterError(f"{exc}; valid: {p.interval}") from None
    for p in (p for p in parameters if p.name in values):
        name = p.name
        if isinstance(out[name], (list, tuple)) and (p.names or p.choices):
            twice = next((x for i, x in enumerate(out[name]) if x in out[name][:i]), None)
            if twice is not None:
                raise ParameterError(f"parameter {name!r} names {shown(twice)} twice; give each once")
        given = values[name]  # a number shown as the reader gave it (1400, not the 1400.0 it is converted to)
        for x, typed in zip(_flat(out[name]), _flat(given) if isinstance(given, (list, tuple)) else [given]):
            number = isinstance(x, (int, float)) and not isinstance(x, bool)
            if number and not p.admits(x):
                raise ParameterError(f"parameter {name!r} must be in {p.interval}; got "
                                     f"{typed if isinstance(typed, str) else shown(typed)}")
            if isinstance(x, str) and p.choices and x not in p.choices:
                raise UnknownNameError(f"{name} value", x, list(p.choices))
            if isinstance(x, str) and p.names and x not in (valid := NAME_KINDS[p.names]()):
                if p.names == "HBM chip" and x in NAME_KINDS["chip"]():
                    raise ParameterError(f"parameter {name!r}: chip {x!r} has no HBM bandwidth and peak FLOP/s figures, "
                                         f"which this chapter times; valid HBM chips: {', '.join(valid)}")
                raise UnknownNameError(p.names, x, valid, where=f"parameter {name!r}")
    return out


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
