"""What a chapter notebook calls: parameter checking, tables and the glue of computed values.

Prose quotes numbers through myst-nb's glue: ``glue("gb200_tpot_ms", 1.868, "{:.2f}")`` stores the
formatted text ``1.87`` under that name and the page writes ``{glue:md}`gb200_tpot_ms``` (never a number
typed by hand). Tables are rendered by great_tables with a content-derived id, so outputs are identical
from run to run (nbval compares them exactly).
"""

from __future__ import annotations

import hashlib
import json

import great_tables as gt
import polars as pl
from IPython.display import HTML, Markdown, Pretty, display

from .. import charts
from ..chapters.quantities import RECORD
from ..display import SCALED_UNITS, cell, column_unit, formatted, header, text
from ..errors import UnknownNameError
from . import params
from .scenarios import check_chapter, notebook_path


def setup(namespace: dict, name: str) -> dict[str, object]:
    """Check the notebook's effective parameters against its chapter module's ``PARAMETERS``, enable the
    chart theme and show the parameters (name, value, default or changed).

    ``namespace`` is the notebook's ``globals()``; ``name`` its file stem. Returns the effective
    parameters. Raises ParameterError (wrong type, e.g. papermill's ``-p flag false`` string),
    UnknownNameError, or CostError for parameters that size a computation beyond its stated limit
    (:func:`jalapeno.publish.scenarios.check_chapter`, as a build checks before the notebook runs)."""
    path = notebook_path(name)
    defaults = params.declared(path)
    unknown = params.unknown_injected(namespace, path)
    if unknown:  # papermill only warns about a parameter the notebook does not declare
        raise UnknownNameError("parameter", unknown[0], list(defaults))
    effective = check_chapter(path.stem, {k: namespace[k] for k in defaults if k in namespace})
    charts.setup()
    shown = {p.name: p.shown for p in params.declaration(path)}
    table(pl.DataFrame({"parameter": list(effective), "value": [shown[k](v) for k, v in effective.items()],
                        "": ["default" if v == defaults[k] else "changed" for k, v in effective.items()]}),
          caption="The parameters this chapter was computed with, each its default or changed")
    return effective


def glue(key: str, value: object, fmt: str = "{}") -> None:
    """Format ``value`` with ``fmt`` under the display rule (:func:`jalapeno.display.formatted`) and glue
    the text under ``key`` for the prose (``{glue:md}`key```)."""
    from myst_nb import glue as _glue

    shown = Markdown("")
    shown.data = formatted(value, fmt)  # not Markdown(text): IPython reads a text that names an existing path as a file
    _glue(key, shown, display=False)


def table(source, slot: str | None = None, *, caption: str | None = None, sigfig: int = 4) -> None:
    """Display a table: ``table(ch, "slot")``, the table a :class:`jalapeno.chapters.Chapter` keeps in
    ``slot`` under its caption (:meth:`jalapeno.chapters.Chapter.add_table`; UnknownNameError for a slot it
    does not have), or ``table(df, caption=...)``, a polars DataFrame (the caption optional).

    Every row is shown, as an HTML table under its caption: headers in words with units (:func:`jalapeno.display.header`),
    numbers formatted cell by cell with :func:`jalapeno.display.cell`, a column of seconds or bytes in the
    unit it reads best in (:func:`jalapeno.display.column_unit`), flags and lists with
    :func:`jalapeno.display.text`, an empty cell shown as a dash. The table's id is a hash of what it shows (its headers and formatted cells), so
    the output is deterministic and a last-bit change of a value that the table does not show cannot
    change it."""
    if isinstance(source, pl.DataFrame):
        df = source
    else:
        if slot not in source.tables:
            raise UnknownNameError("table slot", slot, sorted(source.tables))
        df, caption = source.tables[slot], source.captions.get(slot, caption)
    # flags and lists as a reader writes them (yes / no; items joined), never True, False or [...]
    df = df.with_columns(*(pl.Series(n, [None if v is None else text(v) for v in df[n].to_list()], dtype=pl.Utf8)
                           for n, t in df.schema.items() if t == pl.Boolean or isinstance(t, (pl.List, pl.Array))))
    numeric = [n for n, t in df.schema.items() if t.is_numeric() and n != "run_id"]
    labels = {n: header(n) for n in df.columns}
    # a column of seconds or bytes in the unit it reads best in (1.39 µs, not 1.388e-06 s; 47.19 MB, not
    # 4.719e+07 B): converted for display only
    for n in numeric:
        si = next((u for u in SCALED_UNITS if labels[n].endswith(f"({u})") or labels[n] == u), None)
        if si:
            factor, unit = column_unit(df[n].to_list(), SCALED_UNITS[si])
            if factor != 1.0:
                df = df.with_columns(pl.col(n) * factor)
                labels[n] = labels[n][:-len(si) - 2] + f"({unit})" if labels[n].endswith(f"({si})") else unit
    shown = [list(labels.values())] + [[cell(v, sigfig) if n in numeric and v is not None else str(v)
                                        for n, v in zip(df.columns, row)] for row in df.iter_rows()]
    key = hashlib.sha1(repr((caption, shown)).encode()).hexdigest()[:12]
    g = gt.GT(df, id=f"tbl-{key}").cols_label(**labels)
    if caption:
        g = g.tab_header(title=caption).opt_align_table_header(align="left")
    if numeric:
        g = g.fmt(lambda x: cell(x, sigfig), columns=numeric)
    # in a frame that scrolls sideways, with shadows at an edge that has more (book/_static/jalapeno.css)
    display(HTML(f'<div class="jalapeno-table">{g.sub_missing(missing_text="—").as_raw_html()}</div>'))


def glue_all(chapter) -> None:
    """Glue every number a :class:`jalapeno.chapters.Chapter` quotes, under its key, for the prose, and the
    quantities those that name one show (``chapter.quantities``) as one record of plain text
    (:data:`jalapeno.chapters.quantities.RECORD`: JSON, key -> [quantity, variant or null], sorted; shown nowhere, and not
    one of the numbers of ``numbers.json``)."""
    from myst_nb import glue as _glue

    for key, text in chapter.numbers.items():
        glue(key, text)
    if chapter.quantities:
        record = json.dumps({k: list(v) for k, v in sorted(chapter.quantities.items())}, ensure_ascii=False)
        _glue(RECORD, Pretty(record), display=False)


def figure(chapter, slot: str):
    """Show (and export under its stable name) the figure of ``chapter`` in ``slot``."""
    fig = chapter.figures[slot]
    return charts.export(fig.chart, fig.name)

