"""The chapters' computations: one module per chapter (``notebooks/<name>.ipynb`` is computed by
``jalapeno/chapters/<name with underscores>.py``), each with

- one tuple ``PARAMETERS`` of :class:`Parameter`, the one declaration of what the chapter takes (each
  parameter's name, default, type, range or choices or kind of name, unit and meaning): the notebook's
  parameters cell is generated from it (``jalapeno params <name> --write-cell``) and the book machinery
  checks every value against it before a notebook runs and in its ``setup``;
- one function ``compute(*, <those names>)``, keyword-only and without defaults (the declaration holds
  them), that returns a :class:`Chapter`: the numbers its prose quotes (already formatted), its tables
  and its figures.

A notebook keeps its parameters cell, one call and the display::

    ch = chapter.compute(**P)        # P: the checked parameters (jalapeno.publish.notebook.setup)
    glue_all(ch)                     # every quoted number, for {glue:md}`key` in the prose
    table(ch, "ridges")              # one line per table or figure, where the prose shows it
    figure(ch, "roofline")           # (jalapeno.publish.notebook.figure)

The order of the chapters is the book's table of contents (``book/_toc.yml``), which only the book
machinery reads (:func:`jalapeno.publish.scenarios.notebook_names`): the claims chapter, which lists the
claims chapter by chapter, is given it. This package sits above the physics and the claims registry and
below the book machinery (:mod:`jalapeno.publish`); importing it imports no chapter.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .. import display
from ..errors import UnknownNameError
from . import quantities
from .names import NAME_KINDS


@dataclass(frozen=True)
class Parameter:
    """One parameter of a chapter: what its ``compute`` takes under ``name``, and what a value must be.

    ``default`` is the value the committed notebook runs with (a list's elements all of its first's type);
    ``type`` the type of a value, needed only for a ``None`` default (``None`` or a value of ``type``).
    A number, or every number of a list, must lie between ``low`` and ``high`` (``None``: no bound),
    each bound included unless ``low_open`` / ``high_open``; a text, or every text of a list, must be one
    of ``choices`` or a name of kind ``names`` (:data:`jalapeno.chapters.names.NAME_KINDS`). ``unit`` is
    the unit of its numbers, ``note`` what a special value means (shown after the range), ``doc`` one
    line saying what it is. Raises ValueError for a declaration that contradicts itself,
    UnknownNameError for an unknown kind of name."""

    name: str
    default: Any
    doc: str = ""
    type: type | None = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple[str, ...] = ()
    names: str | None = None
    unit: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if self.names is not None and self.names not in NAME_KINDS:
            raise UnknownNameError(f"name kind (in parameter {self.name!r})", self.names, list(NAME_KINDS))
        if self.default is None and self.type is None:
            raise ValueError(f"parameter {self.name!r}: a None default needs a declared type")
        if self.default is not None and self.type is not None and not isinstance(self.default, self.type):
            raise ValueError(f"parameter {self.name!r}: default {self.default!r} is not a {self.type.__name__}")
        if self.choices and self.names:
            raise ValueError(f"parameter {self.name!r}: give choices or a kind of name, not both")

    @property
    def kind(self) -> type:
        """The type of a value (a list's type for a list parameter)."""
        return self.type or type(self.default)

    @property
    def bounded(self) -> bool:
        """Whether a number must lie in an interval."""
        return self.low is not None or self.high is not None

    def admits(self, x: float) -> bool:
        """Whether the number ``x`` lies in the declared interval."""
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        return (low < x if self.low_open else low <= x) and (x < high if self.high_open else x <= high)

    @property
    def unset(self) -> str:
        """What a ``None`` value stands for, as the declaration's ``doc`` says it (``(None: its rated TDP)``
        -> ``its rated TDP``); empty when it does not say."""
        said = re.search(r"\(None: ([^)]*)\)", self.doc)
        return said.group(1) if said else ""

    def shown(self, value: object) -> str:
        """A value of this parameter as a reader writes it (:func:`jalapeno.display.text`); a flag as it is
        typed (``true``, ``false``: ``-p prefix_cache false``); ``None`` as what it stands for (``unset: its
        rated TDP``, :attr:`unset`)."""
        if value is None and self.unset:
            return f"unset: {self.unset}"
        if isinstance(value, bool):
            return "true" if value else "false"
        return display.text(value)

    @property
    def interval(self) -> str:
        """The interval as a reader writes it, with its unit and note (``[1, 1048576] tokens``, ``(0, 1]``);
        empty for none."""
        if not self.bounded:
            return ""
        opening = "(" if self.low_open or self.low is None else "["
        closing = ")" if self.high_open or self.high is None else "]"
        low, high = ("-inf" if self.low is None else self.low), ("inf" if self.high is None else self.high)
        text = f"{opening}{low}, {high}{closing}"
        return " ".join(filter(None, (text, self.unit, self.note and f"({self.note})")))

    @property
    def accepts(self) -> str:
        """What a value may be, in words (``in (0, 5000] W``, ``one of: low, central, high``,
        ``names: chip``); empty when only the type is checked."""
        return "; ".join(filter(None, (f"in {self.interval}" if self.bounded else self.unit,
                                       self.choices and "one of: " + ", ".join(self.choices),
                                       self.names and f"names: {self.names}")))


class Figure(NamedTuple):
    """A figure of a chapter: the name it is exported under (``figures/<name>.svg``) and the chart."""

    name: str
    chart: Any


@dataclass
class Chapter:
    """What a chapter computes.

    ``numbers``: key -> the text the prose quotes (``{glue:md}`key```); ``tables``: slot -> a polars
    DataFrame ready to show (worded headers with units), with its caption in ``captions`` (slot -> one
    line saying what the table shows: :meth:`add_table`); ``figures``: slot -> :class:`Figure`;
    ``values``: key -> the unformatted value behind a number, for tests and other chapters;
    ``quantities``: key -> (the quantity a number shows, its variant or None), for the numbers that name
    one (:mod:`jalapeno.chapters.quantities`)."""

    numbers: dict[str, str] = field(default_factory=dict)
    tables: dict[str, Any] = field(default_factory=dict)
    figures: dict[str, Figure] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)
    quantities: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    captions: dict[str, str] = field(default_factory=dict)

    def quote(self, key: str, value: object, fmt: str = "{}", *, quantity: str | None = None,
              variant: str | None = None) -> str:
        """Format ``value`` with ``fmt`` under the display rule (:func:`jalapeno.display.formatted`: a
        float to at most five significant digits, an integer exactly, never a signed "-0") and keep it
        under ``key`` for the prose; returns the text. ``values[key]`` keeps the unformatted value.
        ``quantity``: the registered quantity it shows (:data:`jalapeno.chapters.quantities.QUANTITIES`),
        ``variant`` one of its named variants; UnknownNameError for either unknown."""
        if quantity is not None:
            quantities.quantity(quantity, variant)
            self.quantities[key] = (quantity, variant)
        elif variant is not None:
            raise ValueError(f"quote {key!r}: a variant ({variant!r}) needs its quantity")
        value = display.plain(value)
        self.values[key] = value
        self.numbers[key] = text = display.formatted(value, fmt)
        return text

    def add_table(self, slot: str, table: Any, caption: str) -> None:
        """Keep ``table`` (a polars DataFrame ready to show) in ``slot`` with its ``caption``: one line, in
        words, of what the table shows (the notebook shows it above the table,
        :func:`jalapeno.publish.notebook.table`). ValueError for an empty caption."""
        if not isinstance(caption, str) or not caption.strip():
            raise ValueError(f"table {slot!r}: a caption is one line saying what the table shows, got {caption!r}")
        self.tables[slot] = table
        self.captions[slot] = caption.strip()

    def add_figure(self, slot: str, chart: Any, name: str | None = None) -> None:
        """Keep ``chart`` in ``slot``, exported as ``name`` (default: the slot)."""
        self.figures[slot] = Figure(name or slot, chart)

