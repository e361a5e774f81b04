"""The claims chapter (``notebooks/claims.ipynb``): every claim of the claims registry
(:func:`jalapeno.registry.claims`) with its status, counted by chapter and listed in full.

:func:`compute` returns the count of each status (``n_<status>``, spaces as ``_``), ``n_claims`` and
``shown``, and two tables: ``by-chapter`` (claims per chapter and status) and ``claims`` (every claim, or
those of one status).
"""

from __future__ import annotations

import polars as pl

from .. import data, registry
from ..errors import UnknownNameError
from . import Chapter

#: The statuses the page shows, in the order of its columns and its prose. A status of the registry not
#: in this list is an error (the page would silently leave it out).
STATUSES = ("reproduced", "consistent", "inconsistent", "modeled", "model disagrees", "open", "not reproducible")


def compute(*, show_status: str) -> Chapter:
    """The claims chapter.

    ``show_status``: ``all`` (every claim in the full table) or one of :data:`STATUSES` (only the claims
    with that status). The counts are over all claims whatever ``show_status``.

    Returns a :class:`jalapeno.chapters.Chapter` (keys and slots in the module's docstring). Raises
    UnknownNameError for another ``show_status``, ValueError if the registry gives a status not in
    :data:`STATUSES`, and what :func:`jalapeno.registry.claims` raises."""
    if show_status != "all" and show_status not in STATUSES:
        raise UnknownNameError("status", show_status, ["all", *STATUSES])
    reg = registry.claims()
    order = {c: i for i, c in enumerate(data.chapters())}  # the book's order of the chapters
    counts = dict(reg.group_by("status").len().iter_rows())
    unknown = sorted(set(counts) - set(STATUSES))
    if unknown:
        raise ValueError(f"statuses not shown on the claims page: {unknown}; shown: {', '.join(STATUSES)}")
    ch = Chapter()
    for status in STATUSES:
        ch.quote(f"n_{status.replace(' ', '_')}", counts.get(status, 0))
    ch.quote("n_claims", reg.height)
    ch.tables["by-chapter"] = _by_chapter(reg, order)
    rows = reg if show_status == "all" else reg.filter(pl.col("status") == show_status)
    rows = (rows.with_columns(pl.col("chapter").replace_strict(order).alias("_order"))
            .with_row_index("_row").sort("_order", "_row")
            .select("chapter", "claim_id", "value", "value_high", "unit", "quantity", "seeds", "treatment", "status",
                    "computed", "check"))
    ch.quote("shown", "all claims" if show_status == "all" else f"the {rows.height} with status {show_status!r}")
    ch.tables["claims"] = rows
    return ch


def _by_chapter(reg: pl.DataFrame, order: dict[str, int]) -> pl.DataFrame:
    """Claims per chapter (rows, in the book's order) and status (columns, :data:`STATUSES`), and ``total``."""
    by_chapter = (reg.with_columns(pl.col("chapter").replace_strict(order).alias("_order"))
                  .group_by("_order", "chapter", "status").len()
                  .pivot(on="status", index=["_order", "chapter"], values="len")
                  .sort("_order").drop("_order").fill_null(0))
    missing = [pl.lit(0, dtype=pl.UInt32).alias(s) for s in STATUSES if s not in by_chapter.columns]
    return (by_chapter.with_columns(*missing).select("chapter", *STATUSES)
            .with_columns(pl.sum_horizontal(*STATUSES).alias("total")))
