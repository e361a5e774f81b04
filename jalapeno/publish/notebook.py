"""What a chapter notebook calls: parameter checking, tables and the glue of computed values.

Prose quotes numbers through myst-nb's glue: ``glue("gb200_tpot_ms", 1.868, "{:.2f}")`` stores the
formatted text ``1.87`` under that name and the page writes ``{glue:md}`gb200_tpot_ms``` (never a number
typed by hand). Tables are rendered by great_tables with a content-derived id, so outputs are identical
from run to run (nbval compares them exactly).
"""

from __future__ import annotations

import hashlib
import math
import numbers

import great_tables as gt
import polars as pl
from IPython.display import HTML, Markdown, display

from .. import charts
from ..errors import UnknownNameError
from . import params
from .scenarios import notebook_path


def setup(namespace: dict, name: str) -> dict[str, object]:
    """Check the notebook's effective parameters, enable the chart theme and show the parameters.

    ``namespace`` is the notebook's ``globals()``; ``name`` its file stem. Returns the effective
    parameters. Raises ParameterError (wrong type, e.g. papermill's ``-p flag false`` string) or
    UnknownNameError."""
    path = notebook_path(name)
    defaults = params.declared(path)
    unknown = params.unknown_injected(namespace, path)
    if unknown:  # papermill only warns about a parameter the notebook does not declare
        raise UnknownNameError("parameter", unknown[0], list(defaults))
    effective = params.check_notebook({k: namespace[k] for k in defaults if k in namespace}, path)
    charts.setup()
    table(pl.DataFrame({"parameter": list(effective), "value": [repr(v) for v in effective.values()],
                        "": ["default" if v == defaults[k] else "changed" for k, v in effective.items()]}))
    return effective


def glue(key: str, value: object, fmt: str = "{}") -> None:
    """Format ``value`` with ``fmt`` and glue the text under ``key`` for the prose (``{glue:md}`key```).

    numpy scalars are converted first so the text never shows ``np.float64(...)``."""
    from myst_nb import glue as _glue

    if isinstance(value, numbers.Number) and hasattr(value, "item"):
        value = value.item()
    _glue(key, Markdown(fmt.format(value)), display=False)


def number(x: float, sigfig: int = 4) -> str:
    """A number for a table cell: whole numbers below 1e7 with thousands separators, other numbers to
    ``sigfig`` significant figures, scientific notation from 1e7 (or below 1e-3) on."""
    if x is None:
        return ""
    ax = abs(x)
    if ax and (ax >= 1e7 or ax < 1e-3):
        return f"{x:.{sigfig - 1}e}"
    if float(x).is_integer():
        return f"{x:,.0f}"
    digits = max(sigfig - 1 - int(math.floor(math.log10(ax))), 0) if ax else 0
    return f"{x:,.{digits}f}"


def table(df: pl.DataFrame, *, sigfig: int = 4) -> None:
    """Display every row of ``df`` as an HTML table: numbers formatted cell by cell with :func:`number`,
    empty cells blank. The table's id is a hash of what it shows (its headers and formatted cells), so
    the output is deterministic and a last-bit change of a value that the table does not show cannot
    change it."""
    numeric = [n for n, t in df.schema.items() if t.is_numeric() and n != "run_id"]
    shown = [list(df.columns)] + [[number(v, sigfig) if n in numeric and v is not None else str(v)
                                   for n, v in zip(df.columns, row)] for row in df.iter_rows()]
    key = hashlib.sha1(repr(shown).encode()).hexdigest()[:12]
    g = gt.GT(df, id=f"tbl-{key}")
    if numeric:
        g = g.fmt(lambda x: number(x, sigfig), columns=numeric)
    display(HTML(g.sub_missing(missing_text="").as_raw_html()))


def glue_all(chapter) -> None:
    """Glue every number a :class:`jalapeno.chapters.Chapter` quotes, under its key, for the prose."""
    for key, text in chapter.numbers.items():
        glue(key, text)


def figure(chapter, slot: str):
    """Show (and export under its stable name) the figure of ``chapter`` in ``slot``."""
    fig = chapter.figures[slot]
    return charts.figure(fig.chart, fig.name)

