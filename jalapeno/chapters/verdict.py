"""The verdict: the book's answer in one screen. Each headline claim of the seeds with what the book
computes for it (a value, or a band for a prediction), its status in the claims registry and the chapter
that derives it; the count of claims per status; the downloads."""

from __future__ import annotations

import polars as pl

from .. import registry
from ..data import seeds_table
from . import Chapter, Parameter, quotes

#: The headline claims the verdict page opens with, in the order a reader meets them.
HEADLINES = ("headline-per-watt-ratio", "headline-e2e-ratio", "single-user-speed-ratio-gptoss",
             "single-user-speed-ratio-dsr1", "headline-interactive-ratio", "gptoss-matched-tbt-ratio",
             "kimi-matched-tbt-ratio", "dsr1-matched-tbt-ratio", "kimi-per-watt-ratio", "kimi-tbt-ratio")


#: What the chapter takes (:class:`jalapeno.chapters.Parameter`); the notebook's parameters cell is generated from it.
PARAMETERS = (
    Parameter("claims", list(HEADLINES), "the claim ids of data/claims.csv the page opens with, in order"),)


def compute(*, claims: list[str]) -> Chapter:
    """The verdict page for the claims ``claims`` (:data:`PARAMETERS`: ids of ``data/claims.csv``,
    default :data:`HEADLINES`).

    Returns the table ``headlines`` (claim, what the seeds say, what the book computes, status, the chapter
    that derives it), the table ``statuses`` (claims per status, whether it counts as
    agreement) and quoted numbers: ``n_claims``, ``n_seeds``, ``n_agreeing``, ``n_disagreeing`` (the
    predictions that disagree with a published number, and not reproduced or inconsistent checks) and, per
    headline claim, ``<claim id>`` (its status), and the model's error the predictions' bands carry
    (scheme (c) end-point anchored, :func:`jalapeno.chapters.quotes.model_error`: ``err_scheme``,
    ``err_median``, ``err_p90``, ``err_n``, ``err_factor``, ``err_cov`` ...). Raises UnknownNameError for an unknown claim id."""
    table = registry.claims()
    rows = [registry.claim(c) for c in claims]  # UnknownNameError lists the valid ids
    ch = Chapter()
    ch.tables["headlines"] = pl.DataFrame({
        "claim": [r["subject"] + (f" vs {r['comparator']}" if r.get("comparator") else "") + f": {r['quantity']}"
                  + (f" ({r['model']})" if r.get("model") else "") for r in rows],
        "the seeds say": [r["claimed"] for r in rows],
        "the book computes": [r["computed"] or "—" for r in rows],
        "status": [r["status"] for r in rows],
        "derived in (chapter)": [r["chapter"] for r in rows]})
    for r in rows:
        ch.quote(r["claim_id"], r["status"])
    counts = registry.status_counts(table)
    ch.tables["statuses"] = pl.DataFrame({
        "status": list(counts), "claims": list(counts.values()),
        "counts as agreement": ["yes" if s in registry.AGREEING else "no" for s in counts]})
    ch.quote("n_claims", table.height, "{:,}")
    ch.quote("n_seeds", seeds_table().height)
    ch.quote("n_agreeing", sum(n for s, n in counts.items() if s in registry.AGREEING))
    n_disagreeing = sum(counts.get(s, 0) for s in ("predicted, disagrees", "not reproduced", "inconsistent"))
    ch.quote("n_disagreeing", n_disagreeing)
    ch.quote("disagree_verb", "disagrees" if n_disagreeing == 1 else "disagree")
    quotes.model_error(ch)  # the error every predicted verdict's band carries: scheme (c)
    return ch
