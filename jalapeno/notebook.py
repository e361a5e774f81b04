"""What a chapter notebook calls: parameter checking, tables and the glue of computed values.

Prose quotes numbers through myst-nb's glue: ``glue("gb200_tpot_ms", 1.868, "{:.2f}")`` stores the
formatted text ``1.87`` under that name and the page writes ``{glue:md}`gb200_tpot_ms``` (never a number
typed by hand). Tables are rendered by great_tables with a content-derived id, so outputs are identical
from run to run (nbval compares them exactly).
"""

from __future__ import annotations

import hashlib
import numbers

import great_tables as gt
import polars as pl
from IPython.display import HTML, Markdown, display

from . import charts, params
from .build import notebook_path


def setup(namespace: dict, name: str) -> dict[str, object]:
    """Check the notebook's effective parameters, enable the chart theme and show the parameters.

    ``namespace`` is the notebook's ``globals()``; ``name`` its file stem. Returns the effective
    parameters. Raises ParameterError (wrong type, e.g. papermill's ``-p flag false`` string) or
    UnknownNameError."""
    defaults = params.declared(notebook_path(name))
    effective = params.check({k: namespace[k] for k in defaults if k in namespace}, defaults)
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


def table(df: pl.DataFrame, *, sigfig: int = 4) -> None:
    """Display every row of ``df`` as an HTML table: floats to ``sigfig`` significant figures (scientific
    notation from 1e7 up), integers with thousands separators, empty cells blank."""
    key = hashlib.sha1(df.write_json().encode()).hexdigest()[:12]
    g = gt.GT(df, id=f"tbl-{key}")
    for name, dtype in df.schema.items():
        if dtype.is_float():
            big = df[name].abs().max()
            g = g.fmt_scientific(name, n_sigfig=sigfig) if big is not None and big >= 1e7 \
                else g.fmt_number(name, n_sigfig=sigfig)
        elif dtype.is_integer() and name not in ("run_id",):
            g = g.fmt_integer(name)
    display(HTML(g.sub_missing(missing_text="").as_raw_html()))
