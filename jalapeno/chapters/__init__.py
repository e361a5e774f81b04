"""The chapters' computations: one module per chapter (``notebooks/<name>.ipynb`` is computed by
``jalapeno/chapters/<name with underscores>.py``), each with one function ``compute(**parameters)`` that
returns a :class:`Chapter`: the numbers its prose quotes (already formatted), its tables and its figures.

A notebook keeps its parameters cell, one call and the display::

    ch = chapter.compute(**P)        # P: the checked parameters (jalapeno.publish.notebook.setup)
    glue_all(ch)                     # every quoted number, for {glue:md}`key` in the prose
    table(ch.tables["ridges"])       # one line per table or figure, where the prose shows it
    figure(ch, "roofline")           # (jalapeno.publish.notebook.figure)

The order of the chapters is the book's table of contents (``book/_toc.yml``), which only the book
machinery reads (:func:`jalapeno.publish.scenarios.notebook_names`): the claims chapter, which lists the
claims chapter by chapter, is given it. This package sits above the physics and the claims registry and
below the book machinery (:mod:`jalapeno.publish`); importing it imports no chapter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .. import display


class Figure(NamedTuple):
    """A figure of a chapter: the name it is exported under (``figures/<name>.svg``) and the chart."""

    name: str
    chart: Any


@dataclass
class Chapter:
    """What a chapter computes.

    ``numbers``: key -> the text the prose quotes (``{glue:md}`key```); ``tables``: slot -> a polars
    DataFrame ready to show (worded headers with units); ``figures``: slot -> :class:`Figure`;
    ``values``: key -> the unformatted value behind a number, for tests and other chapters."""

    numbers: dict[str, str] = field(default_factory=dict)
    tables: dict[str, Any] = field(default_factory=dict)
    figures: dict[str, Figure] = field(default_factory=dict)
    values: dict[str, Any] = field(default_factory=dict)

    def quote(self, key: str, value: object, fmt: str = "{}") -> str:
        """Format ``value`` with ``fmt`` under the display rule (:func:`jalapeno.display.formatted`: a
        float to at most five significant digits, an integer exactly, never a signed "-0") and keep it
        under ``key`` for the prose; returns the text. ``values[key]`` keeps the unformatted value."""
        value = display.plain(value)
        self.values[key] = value
        self.numbers[key] = text = display.formatted(value, fmt)
        return text

    def add_figure(self, slot: str, chart: Any, name: str | None = None) -> None:
        """Keep ``chart`` in ``slot``, exported as ``name`` (default: the slot)."""
        self.figures[slot] = Figure(name or slot, chart)

