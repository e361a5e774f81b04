"""Chart theme and renderer: interactive in the book with no network, deterministic in notebooks.

Each chart displays as one ``text/html`` output: a ``<div>`` holding the chart's static SVG (drawn by
vl-convert, byte-identical from run to run) and a small script that, when the page has loaded the
chart runtime (``vega-bundle.js``, written into the book's static files at build time from
``vl_convert.javascript_bundle()``), replaces the SVG by the interactive chart. Where no script runs
(JupyterLab, a feed reader) the SVG stays. The element id is a hash of the spec, never random, so
nbval compares the outputs exactly; no CDN is referenced.

:func:`figure` also writes ``<name>.svg`` into ``$JALAPENO_FIGURES_DIR`` when that is set (the book
build sets it).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import altair as alt
import polars as pl
import vl_convert as vlc

THEME = "jalapeno"
RENDERER = "jalapeno"

#: Colour of each chip in every chart of the book.
CHIP_COLOURS = {
    "jalapeno": "#d62728", "gb200": "#2ca02c", "gb300": "#17becf", "b200": "#1f77b4", "h100": "#7f7f7f",
    "h200": "#8c564b", "mi300x": "#e377c2", "mi325x": "#bcbd22", "mi355x": "#9467bd", "vera-rubin": "#ff7f0e",
    "groq-3-lpu": "#f7b6d2", "tpu7x": "#aec7e8", "tpu-8t": "#98df8a", "tpu-8i": "#ffbb78",
}


@alt.theme.register(THEME, enable=False)
def _theme() -> alt.theme.ThemeConfig:
    return {
        "config": {
            "font": "sans-serif",
            "view": {"continuousWidth": 520, "continuousHeight": 320, "stroke": None},
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "gridColor": "#e6e6e6"},
            "legend": {"labelFontSize": 11, "titleFontSize": 12},
            "title": {"fontSize": 14, "anchor": "start"},
        }
    }


def spec_id(spec: dict) -> str:
    """Stable element id of a chart: ``fig-`` and the first 12 hex digits of the SHA-1 of its spec."""
    return "fig-" + hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def to_svg(spec: dict) -> str:
    """Static SVG of a Vega-Lite spec (vl-convert, offline, deterministic)."""
    return vlc.vegalite_to_svg(spec)


def _render(spec: dict, **_: object) -> dict:
    element = spec_id(spec)
    payload = json.dumps(spec, sort_keys=True).replace("</", "<\\/")
    body = (
        f'<div id="{element}" class="jalapeno-chart">{to_svg(spec)}</div>\n'
        f"<script>(function(){{var el=document.getElementById({json.dumps(element)});"
        f"if(window.vegaEmbed&&el){{var spec={payload};el.innerHTML='';"
        f"window.vegaEmbed(el,spec,{{actions:false,renderer:'svg'}}).catch(function(e){{console.error(e);}});}}}})();"
        f"</script>"
    )
    return {"text/html": body}


alt.renderers.register(RENDERER, _render)


def setup() -> None:
    """Enable the book's theme and renderer (call once per notebook)."""
    alt.theme.enable(THEME)
    alt.renderers.enable(RENDERER)


def figure(chart: alt.TopLevelMixin, name: str) -> alt.TopLevelMixin:
    """Return ``chart`` for display and, when ``$JALAPENO_FIGURES_DIR`` is set, write ``<name>.svg`` there.

    ``name`` is the figure's stable file name (lower-case, digits and dashes)."""
    if not name or not all(c.isalnum() or c == "-" for c in name):
        raise ValueError(f"figure name must be lower-case letters, digits and dashes, got {name!r}")
    folder = os.environ.get("JALAPENO_FIGURES_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        Path(folder, f"{name}.svg").write_text(to_svg(chart.to_dict()))
    return chart


def runtime_bundle() -> str:
    """The chart runtime (vega, vega-lite, vega-embed) as one classic script, from the installed
    vl-convert package; sets ``window.vegaEmbed``."""
    return vlc.javascript_bundle()


# ---- the book's charts: each takes a small polars frame (never a raw sweep: MaxRowsError at 5,000) ------

def measured_points(points: pl.DataFrame, highlight_run: str) -> alt.Chart:
    """Throughput per GPU against interactivity of measured points; the points of ``highlight_run``
    in colour, the other runs of the same configuration in grey."""
    df = points.select(
        (1.0 / pl.col("mean_tpot")).alias("interactivity_tok_s_user"), "tput_per_gpu", "conc", "run_id",
        pl.when(pl.col("run_id") == highlight_run).then(pl.lit(f"run {highlight_run}"))
        .otherwise(pl.lit("other runs")).alias("series"),
    ).sort("run_id", "conc")
    return alt.Chart(df).mark_line(point=True).encode(
        x=alt.X("interactivity_tok_s_user:Q", title="interactivity (tok/s/user, 1 / mean TPOT)", scale=alt.Scale(type="log")),
        y=alt.Y("tput_per_gpu:Q", title="throughput per GPU (input + output tok/s)", scale=alt.Scale(type="log")),
        color=alt.Color("series:N", title=None, scale=alt.Scale(domain=[f"run {highlight_run}", "other runs"],
                                                                range=[CHIP_COLOURS["gb200"], "#c7c7c7"])),
        detail="run_id:N",
        tooltip=["run_id:N", "conc:Q", alt.Tooltip("tput_per_gpu:Q", format=",.0f"),
                 alt.Tooltip("interactivity_tok_s_user:Q", format=".1f")],
    ).properties(title="Measured points of one configuration: throughput against interactivity")


def power_bases(bases: pl.DataFrame) -> alt.Chart:
    """Tokens/s/kW of Jalapeño and the baseline under each power basis (from
    :func:`jalapeno.comparison.power_basis_table`)."""
    df = pl.concat([
        bases.select("basis", pl.lit("jalapeno").alias("chip"), pl.col("jalapeno_tok_s_kw").alias("tok_s_kw")),
        bases.select("basis", pl.lit("baseline").alias("chip"), pl.col("baseline_tok_s_kw").alias("tok_s_kw")),
    ])
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("basis:N", title="power basis", sort=["rated", "sustained", "all-in"]),
        xOffset="chip:N",
        y=alt.Y("tok_s_kw:Q", title="throughput per kW (tok/s/kW)"),
        color=alt.Color("chip:N", title=None, scale=alt.Scale(domain=["jalapeno", "baseline"],
                                                              range=[CHIP_COLOURS["jalapeno"], CHIP_COLOURS["gb200"]])),
        tooltip=["basis:N", "chip:N", alt.Tooltip("tok_s_kw:Q", format=",.0f")],
    ).properties(title="Per-kW throughput depends on whose watts are counted")


def _chip_scale(chips) -> alt.Scale:
    domain = sorted(set(chips))
    return alt.Scale(domain=domain, range=[CHIP_COLOURS.get(c, "#333333") for c in domain])


def roofline(curves: pl.DataFrame, points: pl.DataFrame) -> alt.LayerChart:
    """Roofline lines (:func:`jalapeno.roofline.roofline_curves`) with the phases of one model on one
    chip (:func:`jalapeno.roofline.phase_points`) as labelled points."""
    scale = _chip_scale(curves["chip"].to_list() + points["chip"].to_list())
    x = alt.X("intensity_flop_per_byte:Q", title="arithmetic intensity (FLOP per HBM byte)", scale=alt.Scale(type="log"))
    y = alt.Y("attainable_flops_per_s:Q", title="attainable FLOP/s", scale=alt.Scale(type="log"))
    lines = alt.Chart(curves).mark_line().encode(x=x, y=y, color=alt.Color("chip:N", scale=scale, title="chip"))
    dots = alt.Chart(points).mark_point(filled=True, size=70, color="black").encode(
        x=x, y=y, shape=alt.Shape("phase:N", title=f"{points['model'][0]} on {points['chip'][0]}"),
        tooltip=["phase:N", alt.Tooltip("intensity_flop_per_byte:Q", format=",.1f"),
                 alt.Tooltip("attainable_flops_per_s:Q", format=".3s")])
    return alt.layer(lines, dots).properties(title="Roofline: decode sits far left of every ridge point, prefill to the right")


def batch_sweep(sweep: pl.DataFrame, model: str) -> alt.Chart:
    """Speed-of-light output throughput per chip against interactivity over the decode batch
    (:func:`jalapeno.roofline.batch_sweep`), one line per chip."""
    return alt.Chart(sweep).mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        x=alt.X("interactivity_tok_s_user:Q", title="interactivity bound (tok/s/user)", scale=alt.Scale(type="log")),
        y=alt.Y("output_tok_s_chip:Q", title="output throughput bound per chip (tok/s)", scale=alt.Scale(type="log")),
        color=alt.Color("chip:N", scale=_chip_scale(sweep["chip"].to_list()), title="chip"),
        order="batch:Q",
        tooltip=["chip:N", "batch:Q", alt.Tooltip("step_s:Q", format=".3s"), "memory_bound:N"],
    ).properties(title=f"{model}: speed-of-light decode as the batch grows (one chip each)")


def fraction_of_bound(df: pl.DataFrame) -> alt.Chart:
    """Best single-user speed as a fraction of the batch-1 roofline bound
    (:func:`jalapeno.comparison.published_vs_roofline`)."""
    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("label:N", title=None, sort=None),
        x=alt.X("fraction_of_bound:Q", title="single-user speed / speed-of-light bound", axis=alt.Axis(format="%")),
        color=alt.Color("chip:N", scale=_chip_scale(df["chip"].to_list()), title="chip"),
        tooltip=["model:N", "chip:N", "source:N", alt.Tooltip("tok_s_user:Q", format=",.0f"),
                 alt.Tooltip("bound_tok_s_user:Q", format=",.0f"), alt.Tooltip("fraction_of_bound:Q", format=".0%")],
    ).transform_calculate(label="datum.model + ' on ' + datum.chip").properties(
        title="How close each best single-user speed comes to its roofline")
