"""Figures shared by chapters: a figure that two or more chapters draw is here, named after what it
shows; a figure only one chapter draws is in that chapter's module (under ``# ---- figures ----``), and
the theme, renderer and colour helpers they all use are in :mod:`jalapeno.charts`.

- :func:`ratio_curves`: the Pareto chapter (:mod:`jalapeno.chapters.pareto`, figure ``ratio-curves``)
  and the Caveats chapter (:mod:`jalapeno.chapters.caveats`, figure ``pareto-shape``).
"""

from __future__ import annotations

import altair as alt
import polars as pl

from .. import charts


def ratio_curves(df: pl.DataFrame, title: str = "The matched-interactivity ratio explodes at the baseline's "
                 "fastest point") -> alt.Chart:
    """Ratio of two frontiers against interactivity (from :func:`jalapeno.pareto.ratio_curve`), one line
    per ``label``; log scales show the blow-up near the baseline's maximum interactivity. ``title``: each
    chapter's own, so the Figures page tells the two apart."""
    return alt.Chart(df).mark_line().encode(
        x=alt.X("interactivity_tok_s_user:Q", title="interactivity (tok/s/user)", scale=alt.Scale(type="log")),
        y=alt.Y("ratio:Q", title="Jalapeño / baseline throughput per kW", scale=alt.Scale(type="log")),
        color=charts.series_color(df["label"].to_list(), "label", legend=charts.LINE_LEGEND),
        strokeDash=charts.series_dash(df["label"].to_list(), "label"),
        tooltip=["label:N", alt.Tooltip("interactivity_tok_s_user:Q", format=",.0f"), alt.Tooltip("ratio:Q", format=",.1f")],
    ).properties(title=charts.wrap_title(title))
