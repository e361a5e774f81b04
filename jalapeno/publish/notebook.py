"""What a chapter notebook calls: parameter checking, tables and the glue of computed values.

Prose quotes numbers through myst-nb's glue: ``glue("gb200_tpot_ms", 1.868, "{:.2f}")`` stores the
formatted text ``1.87`` under that name and the page writes ``{glue:md}`gb200_tpot_ms``` (never a number
typed by hand). Tables are rendered by great_tables with a content-derived id, so outputs are identical
from run to run (nbval compares them exactly).
"""

from __future__ import annotations

import hashlib

import great_tables as gt
import polars as pl
from IPython.display import HTML, Markdown, display

from .. import charts
from ..display import cell, formatted
from ..errors import UnknownNameError
from . import params
from .scenarios import check_chapter, notebook_path


def setup(namespace: dict, name: str) -> dict[str, object]:
    """Check the notebook's effective parameters, enable the chart theme and show the parameters.

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
    table(pl.DataFrame({"parameter": list(effective), "value": [repr(v) for v in effective.values()],
                        "": ["default" if v == defaults[k] else "changed" for k, v in effective.items()]}))
    return effective


def glue(key: str, value: object, fmt: str = "{}") -> None:
    """Format ``value`` with ``fmt`` under the display rule (:func:`jalapeno.display.formatted`) and glue
    the text under ``key`` for the prose (``{glue:md}`key```)."""
    from myst_nb import glue as _glue

    shown = Markdown("")
    shown.data = formatted(value, fmt)  # not Markdown(text): IPython reads a text that names an existing path as a file
    _glue(key, shown, display=False)


#: Words for the parts of a column name, the field's standard terms (a part not listed stays as it is).
TERMS = {"tpot": "TPOT", "ttft": "TTFT", "tbt": "TBT", "isl": "ISL", "osl": "OSL", "kv": "KV", "hbm": "HBM",
         "sram": "SRAM", "tp": "TP", "dp": "DP", "ep": "EP", "pp": "PP", "mla": "MLA", "gqa": "GQA", "moe": "MoE",
         "mfu": "MFU", "mbu": "MBU", "gpu": "GPU", "gpus": "GPUs", "lpu": "LPU", "lpus": "LPUs", "e2e": "E2E",
         "id": "ID", "mtp": "MTP", "pue": "PUE", "conc": "concurrency", "tput": "throughput", "jalapeno": "Jalapeño",
         "gb200": "GB200", "gb300": "GB300", "b200": "B200", "h100": "H100", "h200": "H200", "fp4": "FP4",
         "fp8": "FP8", "bf16": "BF16", "nvl72": "NVL72", "allin": "all-in", "pct": "%", "n": "number of"}

#: Units a column name may end with (its last parts), as shown in a header: the longest match wins.
UNITS = {("tok", "s", "per", "kw"): "tok/s/kW", ("tok", "s", "kw"): "tok/s/kW", ("tok", "s", "user"): "tok/s/user", ("tok", "s", "chip"): "tok/s per chip",
         ("tok", "s", "gpu"): "tok/s per GPU", ("tok", "s", "mw"): "tok/s/MW", ("tok", "s"): "tok/s",
         ("bytes", "per", "s"): "B/s", ("flops", "per", "s"): "FLOP/s", ("flop", "per", "byte"): "FLOP/byte",
         ("tb", "s"): "TB/s", ("gb", "s"): "GB/s", ("pflop", "s"): "PFLOP/s", ("bytes",): "B", ("gb",): "GB",
         ("tb",): "TB", ("mb",): "MB", ("ms",): "ms", ("us",): "µs", ("s",): "s", ("w",): "W", ("kw",): "kW",
         ("mw",): "MW", ("pct",): "%", ("usd",): "USD", ("tokens",): "tokens"}


def header(name: str) -> str:
    """A table header in words with its unit, from a column name in the package's style:
    ``jalapeno_tok_s_kw`` -> ``Jalapeño (tok/s/kW)``, ``batch1_step_ms`` -> ``batch1 step (ms)``,
    ``tpot_s`` -> ``TPOT (s)``. A name that is already words (a space, a capital, a symbol) is kept."""
    if not name.replace("_", "").isalnum() or "_" not in name and name.lower() not in TERMS:
        return name
    parts = name.split("_")
    unit = ""
    for n in range(min(4, len(parts)), 0, -1):
        if tuple(p.lower() for p in parts[-n:]) in UNITS:
            unit, parts = UNITS[tuple(p.lower() for p in parts[-n:])], parts[:-n]
            break
    words = " ".join(TERMS.get(p.lower(), p) for p in parts)
    return f"{words} ({unit})" if unit and words else unit or words


def table(df: pl.DataFrame, *, sigfig: int = 4) -> None:
    """Display every row of ``df`` as an HTML table: headers in words with units (:func:`header`),
    numbers formatted cell by cell with :func:`jalapeno.display.cell`, an empty cell shown as a dash. The table's id is a hash of what it shows (its headers and formatted cells), so
    the output is deterministic and a last-bit change of a value that the table does not show cannot
    change it."""
    numeric = [n for n, t in df.schema.items() if t.is_numeric() and n != "run_id"]
    labels = {n: header(n) for n in df.columns}
    shown = [list(labels.values())] + [[cell(v, sigfig) if n in numeric and v is not None else str(v)
                                        for n, v in zip(df.columns, row)] for row in df.iter_rows()]
    key = hashlib.sha1(repr(shown).encode()).hexdigest()[:12]
    g = gt.GT(df, id=f"tbl-{key}").cols_label(**labels)
    if numeric:
        g = g.fmt(lambda x: cell(x, sigfig), columns=numeric)
    # in a frame that scrolls sideways, with shadows at an edge that has more (book/_static/jalapeno.css)
    display(HTML(f'<div class="jalapeno-table">{g.sub_missing(missing_text="—").as_raw_html()}</div>'))


def glue_all(chapter) -> None:
    """Glue every number a :class:`jalapeno.chapters.Chapter` quotes, under its key, for the prose."""
    for key, text in chapter.numbers.items():
        glue(key, text)


def figure(chapter, slot: str):
    """Show (and export under its stable name) the figure of ``chapter`` in ``slot``."""
    fig = chapter.figures[slot]
    return charts.export(fig.chart, fig.name)

