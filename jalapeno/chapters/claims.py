"""The claims chapter (``notebooks/claims.ipynb``): every claim of the claims registry
(:func:`jalapeno.registry.claims`) with its status, counted by chapter and listed in full.

:func:`compute` returns each claim's status (``<claim id>-status``, :func:`status_key`, so that the changelog
lists each status that moves), the count of each status (``n_<status>``, spaces and hyphens as ``_``,
commas dropped: ``n_predicted_agrees``), ``n_claims``, ``n_agreeing``, ``shown``, and four tables: ``statuses`` (each status, what it means, whether it counts as
agreement, how many claims hold it), ``by-chapter`` (claims per chapter and status), ``claims`` (every
claim, or those of one status; its ``seeds`` column cites the articles by their short citations,
:func:`jalapeno.data.cite_seeds`) and ``seeds`` (the five articles: short citation, file name, a short
title, the outlet and the date each states). Every status of :data:`jalapeno.registry.STATUSES` is shown, under any data.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from .. import data, registry
from ..errors import DataError, UnknownNameError
from . import Chapter, Parameter

#: The statuses the page shows, in the order of its columns and its prose: every status of the registry.
STATUSES = registry.STATUSES

#: What each status means, as the page's table of statuses says it.
MEANINGS = {
    "reproduced": "recomputed from the measured benchmark data, equal within the printed rounding",
    "not reproduced": "recomputed from the measured benchmark data, and different",
    "consistent": "an arithmetic check between independent sources agrees",
    "inconsistent": "an arithmetic (or transcription) check disagrees",
    "predicted, agrees": "a model's prediction meets the published value within the model's error",
    "predicted, disagrees": "a model's prediction misses the published value by more than the model's error",
    "fit-determined": "a check that agrees but reads a value the model was fitted to: agreement by construction, no evidence",
    "fit target": "a value the model was fitted to: reproduced by construction, no evidence",
    "restated": "both ends of the comparison share one source: only the transcription is checked",
    "conflicting": "two seeds disagree",
    "not checkable": "no public data or computation can check it (the reason is given)",
}


#: What the chapter takes (:class:`jalapeno.chapters.Parameter`); the notebook's parameters cell is generated from it.
PARAMETERS = (
    Parameter("show_status", "all", "all (every claim in the full table) or the one status whose claims it lists",
              names="claim status"),)


def status_key(claim_id: str) -> str:
    """The quoted key of one claim's status: ``<claim id>-status`` (``kimi-tbt-ratio-status``)."""
    return f"{claim_id}-status"


def key(status: str) -> str:
    """The quoted key of a status count: ``predicted, agrees`` -> ``n_predicted_agrees``,
    ``fit-determined`` -> ``n_fit_determined``."""
    return "n_" + status.replace(",", "").replace(" ", "_").replace("-", "_")


def compute(*, show_status: str, chapter_order: Sequence[str]) -> Chapter:
    """The claims chapter.

    ``show_status`` (:data:`PARAMETERS`): ``all`` (every claim in the full table) or one of
    :data:`STATUSES` (only the claims with that status). The counts are over all claims whatever
    ``show_status``. ``chapter_order``, not a parameter (the notebook passes it): the book's chapters in
    their order (:func:`jalapeno.publish.scenarios.notebook_names`, from the table of contents), the order
    of the tables' rows.

    Returns a :class:`jalapeno.chapters.Chapter` (keys and slots in the module's docstring). Raises
    UnknownNameError for another ``show_status``, DataError for a claim of a chapter not in
    ``chapter_order``, and what :func:`jalapeno.registry.claims` raises."""
    if show_status != "all" and show_status not in STATUSES:
        raise UnknownNameError("status", show_status, ["all", *STATUSES])
    reg = registry.claims()
    order = {c: i for i, c in enumerate(chapter_order)}
    strays = reg.filter(~pl.col("chapter").is_in(list(order)))
    if strays.height:
        raise DataError(f"claims.csv: claim {strays['claim_id'][0]!r} belongs to chapter {strays['chapter'][0]!r}, "
                        f"which the book does not have; its chapters: {', '.join(order)}")
    counts = registry.status_counts(reg)
    ch = Chapter()
    for status, n in counts.items():
        ch.quote(key(status), n)
    ch.quote("n_claims", reg.height)
    ch.quote("n_agreeing", sum(counts[s] for s in registry.AGREEING))
    for r in reg.iter_rows(named=True):  # each claim's status, so that the changelog lists each one that moves
        ch.quote(status_key(r["claim_id"]), r["status"])
    ch.add_table("statuses", pl.DataFrame({
        "status": list(STATUSES), "meaning": [MEANINGS[s] for s in STATUSES],
        "agreement": ["yes" if s in registry.AGREEING else "no" for s in STATUSES],
        "claims": [counts[s] for s in STATUSES]}, schema_overrides={"claims": pl.UInt32}),
        "Each status: what it means, whether it counts as agreement, and how many claims hold it")
    ch.add_table("seeds", data.seeds_table().select("short", "seed", "title", "title_en", "title_kind", "outlet",
                                                    "date", "date_basis"),
                 "The seed articles: short citation, file name, short title and its translation, outlet, and the date "
                 "each states")
    ch.add_table("by-chapter", _by_chapter(reg, order),
                 "Claims per chapter, in the book's order, by status, with each chapter's total")
    rows = reg if show_status == "all" else reg.filter(pl.col("status") == show_status)
    rows = (rows.with_columns(pl.col("chapter").replace_strict(order).alias("_order"))
            .with_row_index("_row").sort("_order", "_row")
            .select("chapter", "claim_id", "claimed", "quantity",
                    pl.col("seeds").map_elements(data.cite_seeds, return_dtype=pl.String),
                    pl.col("treatment").replace_strict(TREATMENT_WORDS), "status",
                    "computed", "published_vs_computed", "check"))
    ch.quote("shown", "all claims" if show_status == "all" else f"the {rows.height} with status {show_status!r}")
    which = "Every claim" if show_status == "all" else f"The claims with status {show_status!r}"
    ch.add_table("claims", rows, f"{which}, by the chapter that treats it: claimed and computed values, seeds, "
                 "treatment, status and check")
    return ch


#: Each treatment of :data:`jalapeno.data.TREATMENTS` as the table of claims names it.
TREATMENT_WORDS = {"reproduce": "reproduced from measured data", "arithmetic": "checked by arithmetic",
                   "restate": "a restatement", "predict": "predicted by the model", "fit_target": "a fit target",
                   "conflict": "seeds in conflict", "not_checkable": "not checkable"}


def _by_chapter(reg: pl.DataFrame, order: dict[str, int]) -> pl.DataFrame:
    """Claims per chapter (rows, in the book's order) and status (columns, :data:`STATUSES`), and ``total``."""
    by_chapter = (reg.with_columns(pl.col("chapter").replace_strict(order).alias("_order"))
                  .group_by("_order", "chapter", "status").len()
                  .pivot(on="status", index=["_order", "chapter"], values="len")
                  .sort("_order").drop("_order").fill_null(0))
    missing = [pl.lit(0, dtype=pl.UInt32).alias(s) for s in STATUSES if s not in by_chapter.columns]
    return (by_chapter.with_columns(*missing).select("chapter", *STATUSES)
            .with_columns(pl.sum_horizontal(*STATUSES).alias("total")))
