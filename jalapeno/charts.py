"""Chart theme and renderer: interactive in the book with no network, deterministic in notebooks.

Each chart displays as one ``text/html`` output: a ``<div>`` holding the chart's static SVG (drawn by
vl-convert, byte-identical from run to run) and a small script that, when the page has loaded the
chart runtime (``vega-bundle.js``, written into the book's static files at build time from
``vl_convert.javascript_bundle()``), replaces the SVG by the interactive chart. Where no script runs
(JupyterLab, a feed reader) the SVG stays. The element id is a hash of the spec, never random, so
nbval compares the outputs exactly; no CDN is referenced.

:func:`export` also writes ``<name>.svg`` into ``$JALAPENO_FIGURES_DIR`` when that is set (the book
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

from . import cache, display, power, specs
from . import data as _data

THEME = "jalapeno"
RENDERER = "jalapeno"

#: Width (px) of the exported SVG and PNG and of the static SVG shown before the chart runtime loads; in
#: the book a chart takes its container's width (:func:`fit_width`).
EXPORT_WIDTH_PX = 600

#: Colour of each chip in every chart of the book (one hue per chip; Jalapeño red everywhere).
CHIP_COLOURS = {
    "jalapeno": "#d62728", "gb200": "#2ca02c", "gb300": "#17becf", "b200": "#1f77b4", "h100": "#7f7f7f",
    "h200": "#8c564b", "mi300x": "#e377c2", "mi325x": "#bcbd22", "mi355x": "#9467bd", "vera-rubin": "#ff7f0e",
    "groq-3-lpu": "#f7b6d2", "tpu7x": "#aec7e8", "tpu-8t": "#98df8a", "tpu-8i": "#ffbb78",
}
#: Colours of series that are not chips (metrics, topologies, models, parts of a bar): dark tones that no
#: chip uses, so a hue always means the same chip.
SERIES_COLOURS = ["#393b79", "#637939", "#8c6d31", "#7b4173", "#5a5a5a", "#3f7f8c"]
#: Colour of a chip the palette does not know (a chip added to data/chips.csv without a colour here).
OTHER_COLOUR = "#333333"

#: The line style of each source of a frontier: measured solid, transferred dashed, modeled dotted.
SOURCES = ("measured", "transferred", "modeled")
SOURCE_DASHES = {"measured": [1, 0], "transferred": [7, 4], "modeled": [2, 3]}
_DASH_CYCLE = [[1, 0], [7, 4], [2, 3], [10, 3, 2, 3], [4, 2]]

#: Category axis labels longer than this many characters break at spaces and hyphens.
_WRAP = ("length(datum.label) > 12 ? split(replace(datum.label, regexp('([ -])', 'g'), '$1\\n'), '\\n')"
         " : datum.label")


@alt.theme.register(THEME, enable=False)
def _theme() -> alt.theme.ThemeConfig:
    return {
        "config": {
            "font": "sans-serif",
            "view": {"continuousWidth": EXPORT_WIDTH_PX - 120, "continuousHeight": 300, "stroke": None},
            "axis": {"labelFontSize": 11, "titleFontSize": 12, "gridColor": "#e6e6e6", "labelOverlap": True,
                     "labelSeparation": 6, "labelLimit": 160, "labelFlush": True},
            "axisX": {"tickCount": 5},
            "axisY": {"tickCount": 6},
            "axisBand": {"labelExpr": _WRAP, "labelAngle": 0, "labelOverlap": False},
            "axisYBand": {"labelExpr": "datum.label", "labelLimit": 150},
            "legend": {"labelFontSize": 11, "titleFontSize": 12, "orient": "bottom", "labelLimit": 240,
                       "columns": {"expr": "isFinite(containerSize()[0]) && containerSize()[0] > 0"
                                           " && containerSize()[0] < 520 ? 1 : 3"},
                       "symbolStrokeWidth": 2,
                       # several legends under a chart stack one above the other instead of side by side
                       "layout": {"bottom": {"anchor": "start", "direction": "vertical"}}},
            "title": {"fontSize": 14, "anchor": "start"},
            "range": {"category": SERIES_COLOURS},
        }
    }


def chip_colours() -> dict[str, str]:
    """The colour of every chip of ``data/chips.csv`` (:func:`jalapeno.specs.chip_names`), from
    :data:`CHIP_COLOURS`; a chip it does not list gets :data:`OTHER_COLOUR`."""
    return {c: CHIP_COLOURS.get(c, OTHER_COLOUR) for c in specs.chip_names()}


def _chip_order(chips) -> list[str]:
    known = specs.chip_names()
    present = set(chips)
    return [c for c in known if c in present] + sorted(present - set(known))


def _chip_scale(chips) -> alt.Scale:
    """The book's chip colours for the chips in ``chips`` (in the order of ``data/chips.csv``)."""
    domain = _chip_order(chips)
    colours = chip_colours()
    return alt.Scale(domain=domain, range=[colours.get(c, OTHER_COLOUR) for c in domain])


def chip_color(chips, field: str = "chip", title: str | None = "chip", legend=alt.Undefined) -> alt.Color:
    """The colour channel of a chip field: every chip in its one colour of :data:`CHIP_COLOURS` (the
    same in every chapter), the legend listing only the chips in ``chips``."""
    return alt.Color(f"{field}:N", title=title, scale=_chip_scale(chips), legend=legend)


def series_color(values, field: str, title: str | None = None, legend=alt.Undefined) -> alt.Color:
    """The colour channel of a series that is not a chip: the dark tones of :data:`SERIES_COLOURS`, in
    the order of ``values`` (first seen first)."""
    domain = list(dict.fromkeys(values))
    return alt.Color(f"{field}:N", title=title, legend=legend, scale=alt.Scale(
        domain=domain, range=[SERIES_COLOURS[i % len(SERIES_COLOURS)] for i in range(len(domain))]))


def series_dash(values, field: str, title: str | None = None, legend=alt.Undefined) -> alt.StrokeDash:
    """A stroke-dash channel telling apart the series of ``field`` (first seen first: solid, dashed,
    dotted, dash-dot ...)."""
    domain = list(dict.fromkeys(values))
    return alt.StrokeDash(f"{field}:N", title=title, legend=legend, scale=alt.Scale(
        domain=domain, range=[_DASH_CYCLE[i % len(_DASH_CYCLE)] for i in range(len(domain))]))


_LINE_LEGEND = alt.Legend(symbolType="stroke", symbolSize=400, symbolStrokeWidth=3)


def _system_chip(name: str) -> str | None:
    """The chip of a system named in ``data/systems.csv``, or of a label that starts with a chip's key or
    name (``Jalapeño``, ``vera-rubin, GPU only``); None when none matches."""
    systems = dict(_data.load("systems.csv").select("system", "chip").iter_rows())
    if name in systems:
        return systems[name]
    plain = name.lower().replace("é", "e").replace("ñ", "n")
    keys = sorted(specs.chip_names(), key=len, reverse=True)
    return next((k for k in keys if plain.startswith(k)), None)


def system_color(names, field: str = "system", title: str | None = "system", legend=_LINE_LEGEND) -> alt.Color:
    """The colour channel of systems: each system in the colour of its chip (:func:`chip_colours`), a
    system of no chip (a what-if fabric) in :data:`OTHER_COLOUR`."""
    domain = list(dict.fromkeys(names))
    colours = chip_colours()
    return alt.Color(f"{field}:N", title=title, legend=legend, scale=alt.Scale(
        domain=domain, range=[colours.get(_system_chip(n) or "", OTHER_COLOUR) for n in domain]))


def source_dash(field: str = "source", title: str | None = "source") -> alt.StrokeDash:
    """The book's line style of a frontier's source: measured solid, transferred dashed, modeled dotted
    (:data:`SOURCE_DASHES`); the legend draws the three line styles."""
    return alt.StrokeDash(f"{field}:N", title=title, scale=alt.Scale(
        domain=list(SOURCES), range=[SOURCE_DASHES[s] for s in SOURCES]),
        legend=alt.Legend(symbolType="stroke", symbolSize=500, symbolStrokeColor="#333333", symbolStrokeWidth=2))


def _item(obj: object, key: str) -> object:
    """Property ``key`` of an Altair object (``obj[key]``), or ``alt.Undefined`` when ``obj`` is not one or
    does not hold it."""
    if not isinstance(obj, alt.SchemaBase):
        return alt.Undefined
    try:
        return obj[key]
    except KeyError:
        return alt.Undefined


def fit_width(chart: alt.TopLevelMixin) -> alt.TopLevelMixin:
    """``chart`` sized to its container's width (Vega-Lite ``width: "container"``, autosize ``fit-x``
    including the axes and legends), for a single or layered chart; a concatenated chart, which Vega-Lite
    cannot fit, is returned as it is (keep its views narrow enough for a 358 px column). The exported
    SVG and PNG take :data:`EXPORT_WIDTH_PX` instead (:func:`to_svg`)."""
    chart = chart.copy(deep=True)
    for view in _views(chart):
        for channel in ("x", "y"):
            enc = _item(view.encoding, channel)
            title = _item(enc, "title")
            if isinstance(title, str) and len(title) > _AXIS_TITLE_CHARS:  # an axis title in lines
                enc["title"] = wrap_title(title, _AXIS_TITLE_CHARS)
    if isinstance(chart, (alt.Chart, alt.LayerChart)):
        chart = chart.properties(width="container",
                                 autosize=alt.AutoSizeParams(type="fit-x", contains="padding", resize=True))
    if isinstance(chart.title, str) and len(chart.title) > _TITLE_CHARS:
        chart = chart.properties(title=wrap_title(chart.title))
    return chart


_TITLE_CHARS = 46
_AXIS_TITLE_CHARS = 40


def _views(chart) -> list:
    """The single views of a chart (a layer's, a concatenation's, nested)."""
    if isinstance(chart, alt.Chart):
        return [chart]
    parts = [getattr(chart, k, alt.Undefined) for k in ("layer", "hconcat", "vconcat", "concat")]
    return [v for part in parts if part is not alt.Undefined for sub in part for v in _views(sub)]


def wrap_title(text: str, chars: int = _TITLE_CHARS) -> list[str] | str:
    """A chart title broken at spaces into lines of at most ``chars`` characters (a list of lines, which
    Vega-Lite draws one under the other), so a title fits a phone's column instead of being cut."""
    lines: list[str] = []
    for word in text.split():
        if lines and len(lines[-1]) + 1 + len(word) <= chars:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines if len(lines) > 1 else text


def _fixed_width(spec: dict, width: int) -> dict:
    """``spec`` with a container width replaced by ``width`` (px), for a renderer with no container."""
    if spec.get("width") != "container":
        return spec
    return {**spec, "width": width}


def spec_id(spec: dict) -> str:
    """Stable element id of a chart: ``fig-`` and the first 12 hex digits of the SHA-1 of its spec."""
    return "fig-" + hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def to_svg(spec: dict, width: int = EXPORT_WIDTH_PX) -> str:
    """Static SVG of a Vega-Lite spec (vl-convert, offline, deterministic); a chart sized to its
    container (:func:`fit_width`) is drawn ``width`` px wide, axes and legends included."""
    return vlc.vegalite_to_svg(_fixed_width(spec, width))


def _stable_spec(spec: dict) -> dict:
    """``spec`` under the display rule (:func:`jalapeno.display.rounded`: every float to at most five
    significant digits), its inline datasets renamed after what they now hold (Altair names each after a
    hash of its full-precision rows)."""
    spec = display.rounded(spec)
    names = {old: "data-" + hashlib.sha1(json.dumps(rows, sort_keys=True).encode()).hexdigest()[:32]
             for old, rows in spec.get("datasets", {}).items()}

    def rename(value):
        if isinstance(value, dict):
            return {k: (names.get(v, v) if k == "name" and isinstance(v, str) else rename(v))
                    for k, v in value.items() if k != "datasets"}
        if isinstance(value, list):
            return [rename(v) for v in value]
        return value
    out = rename(spec)
    if "datasets" in spec:
        out["datasets"] = {names[k]: v for k, v in spec["datasets"].items()}
    return out


def _render(spec: dict, **_: object) -> dict:
    """A chart's output in a notebook: an empty ``<div>`` and the script that draws the spec into it with
    the book's own chart runtime, its numbers under the display rule (:mod:`jalapeno.display`; the id hashes
    that same spec). No static SVG inside: its text layout depends on the fonts the
    rendering process finds, which nbval would see as a changed output (the SVG is exported beside the
    chapter instead, by :func:`export`)."""
    spec = _stable_spec(spec)
    element = spec_id(spec)
    payload = json.dumps(spec, sort_keys=True).replace("</", "<\\/")
    body = (
        f'<div id="{element}" class="jalapeno-chart"></div>\n'
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


class Shown:
    """A chart as a notebook shows it: ``chart`` (sized by :func:`fit_width`) and its Vega-Lite ``spec``,
    validated once, which the display (:func:`_render`) and the exported files share. Its text form is
    the chart's own (``alt.Chart(...)``)."""

    def __init__(self, chart: alt.TopLevelMixin, spec: dict):
        self.chart, self.spec = chart, spec

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return _render(self.spec)

    def __repr__(self) -> str:
        return repr(self.chart)


def export(chart: alt.TopLevelMixin, name: str) -> Shown:
    """``chart`` sized to its container (:func:`fit_width`), ready for display (:class:`Shown`) and, when
    ``$JALAPENO_FIGURES_DIR`` is set, written there as ``<name>.svg`` (:data:`EXPORT_WIDTH_PX` wide) and
    ``<name>.csv`` (:func:`figure_data`).

    ``name`` is the figure's stable file name (lower-case, digits and dashes)."""
    if not name or not all(c.isalnum() or c == "-" for c in name):
        raise ValueError(f"figure name must be lower-case letters, digits and dashes, got {name!r}")
    chart = fit_width(chart)
    spec = chart.to_dict()
    folder = os.environ.get("JALAPENO_FIGURES_DIR")
    if folder:  # the exported files show the page's numbers (the display rule), not the full floats
        shown = _stable_spec(spec)
        Path(folder).mkdir(parents=True, exist_ok=True)
        Path(folder, f"{name}.svg").write_text(to_svg(shown))
        Path(folder, f"{name}.csv").write_text(figure_data(shown).write_csv())
    return Shown(chart, spec)


def figure_data(spec: dict) -> pl.DataFrame:
    """The data behind a chart (its Vega-Lite ``spec``), as one table: the rows of every inline dataset,
    with a column ``dataset`` numbering them when the chart draws more than one (a layer of points and
    a line, say); columns a dataset lacks are empty."""
    sets = [rows for rows in spec.get("datasets", {}).values() if rows]
    if not sets:
        return pl.DataFrame()
    frames = [pl.DataFrame(rows, infer_schema_length=None) for rows in sets]
    if len(frames) == 1:
        return frames[0]
    return pl.concat([f.with_columns(dataset=pl.lit(i + 1)) for i, f in enumerate(frames)], how="diagonal_relaxed")


def runtime_bundle() -> str:
    """The chart runtime (vega, vega-lite, vega-embed) as one classic script, from the installed
    vl-convert package; sets ``window.vegaEmbed``. Wrapped in a function scope: the bundle declares
    top-level names (``_``) that collide with Sphinx's own scripts, which stops it with a SyntaxError.
    Kept in the cache (:func:`jalapeno.cache.entry`) under vl-convert's version: bundling takes about
    1.5 s, a large part of an incremental build."""
    kept = cache.entry(cache.folder() / "chart-runtime" / f"vl-convert-{vlc.__version__}.js", lambda tmp: tmp.write_text(
        "(function(){\n" + vlc.javascript_bundle() + "\n})();\n"))
    return kept.read_text()


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
        x=alt.X("basis:N", title="power basis", sort=["rated", "sustained", "all-in-proportional"]),
        xOffset="chip:N",
        y=alt.Y("tok_s_kw:Q", title="throughput per kW (tok/s/kW)"),
        color=alt.Color("chip:N", title=None, scale=alt.Scale(domain=["jalapeno", "baseline"],
                                                              range=[CHIP_COLOURS["jalapeno"], CHIP_COLOURS["gb200"]])),
        tooltip=["basis:N", "chip:N", alt.Tooltip("tok_s_kw:Q", format=",.0f")],
    ).properties(title="Per-kW throughput depends on whose watts are counted")


def roofline(curves: pl.DataFrame, points: pl.DataFrame) -> alt.LayerChart:
    """Roofline lines (:func:`jalapeno.bounds.roofline_curves`) with the phases of one model on one
    chip (:func:`jalapeno.bounds.phase_points`) as labelled points."""
    color = chip_color(curves["chip"].to_list() + points["chip"].to_list(), legend=_LINE_LEGEND)
    x = alt.X("intensity_flop_per_byte:Q", title="arithmetic intensity (FLOP per HBM byte)", scale=alt.Scale(type="log"))
    y = alt.Y("attainable_flops_per_s:Q", title="attainable FLOP/s", scale=alt.Scale(type="log"), axis=alt.Axis(format="~s"))
    # A chip whose roofline is the same line as an earlier chip's (GB200 and MI355X) is drawn dashed on top
    # of it, so both colours show instead of the later one hiding the earlier.
    order = _chip_order(curves["chip"].to_list())
    shape = {c: tuple(curves.filter(pl.col("chip") == c)["attainable_flops_per_s"].to_list()) for c in order}
    hidden = [c for i, c in enumerate(order) if shape[c] in [shape[o] for o in order[:i]]]
    under = curves.filter(~pl.col("chip").is_in(hidden))
    over = curves.filter(pl.col("chip").is_in(hidden))
    lines = [alt.Chart(under).mark_line().encode(x=x, y=y, color=color, tooltip=["chip:N"])]
    if hidden:
        lines.append(alt.Chart(over).mark_line(strokeDash=[6, 6], strokeWidth=2.5).encode(
            x=x, y=y, color=color, tooltip=["chip:N"]))
    dots = alt.Chart(points).mark_point(filled=True, size=70, color="black").encode(
        x=x, y=y, shape=alt.Shape("phase:N", title=f"{points['model'][0]} on {points['chip'][0]}"),
        tooltip=["phase:N", alt.Tooltip("intensity_flop_per_byte:Q", format=",.1f"),
                 alt.Tooltip("attainable_flops_per_s:Q", format=".3s")])
    return alt.layer(*lines, dots).properties(title="Roofline: decode sits far left of every ridge point, prefill to the right")


def batch_sweep(sweep: pl.DataFrame, model: str) -> alt.Chart:
    """Speed-of-light output throughput per chip against interactivity over the decode batch
    (:func:`jalapeno.bounds.batch_sweep`), one line per chip."""
    return alt.Chart(sweep).mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        x=alt.X("interactivity_tok_s_user:Q", title="interactivity bound (tok/s/user)", scale=alt.Scale(type="log")),
        y=alt.Y("output_tok_s_chip:Q", title="output throughput bound per chip (tok/s)", scale=alt.Scale(type="log")),
        color=chip_color(sweep["chip"].to_list(), legend=_LINE_LEGEND),
        order="batch:Q",
        tooltip=["chip:N", "batch:Q", alt.Tooltip("step_s:Q", format=".3s"), "memory_bound:N"],
    ).properties(title=f"{model}: speed-of-light decode as the batch grows (one chip each)")


def fraction_of_bound(df: pl.DataFrame) -> alt.Chart:
    """Best single-user speed as a fraction of the batch-1 roofline bound
    (:func:`jalapeno.comparison.published_vs_roofline`)."""
    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("label:N", title=None, sort=None),
        x=alt.X("fraction_of_bound:Q", title="single-user speed / speed-of-light bound", axis=alt.Axis(format="%")),
        color=chip_color(df["chip"].to_list()),
        tooltip=["model:N", "chip:N", "source:N", alt.Tooltip("tok_s_user:Q", format=",.0f"),
                 alt.Tooltip("bound_tok_s_user:Q", format=",.0f"), alt.Tooltip("fraction_of_bound:Q", format=".0%")],
    ).transform_calculate(label="datum.model + ' on ' + datum.chip").properties(
        title="How close each best single-user speed comes to its roofline")


# ---- explorable figures: inputs bound to Altair parameters over a precomputed grid ----------------------

from dataclasses import dataclass  # noqa: E402  (kept with the helpers that use it)


@dataclass(frozen=True)
class Knob:
    """One input of an explorable figure.

    ``field`` is the grid column the input selects rows by; ``values`` the grid's values of it (the
    chart's data holds one set of rows per value); ``value`` the starting position, which must be one
    of ``values`` or a number within a relative 1e-9 of one (the static SVG shows it); ``label`` the text beside the input. ``kind`` is
    ``"slider"`` (numbers on an even step; falls back to a drop-down when the values are not evenly
    spaced, e.g. when a notebook parameter put an off-grid default in) or ``"select"``.

    Rows whose ``field`` is empty do not depend on this knob and are always drawn."""

    field: str
    values: tuple
    value: object
    label: str
    kind: str = "slider"


def _even_step(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    steps = [b - a for a, b in zip(values, values[1:])]
    step = steps[0]
    if step > 0 and all(abs(s - step) <= 1e-9 * max(1.0, abs(step)) for s in steps):
        return step
    return None


def _numeric(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def knob_param(knob: Knob) -> tuple[alt.Parameter, str]:
    """The Altair parameter bound to an input for ``knob``, and the Vega expression that keeps the
    rows of the knob's current value (and the rows that do not depend on it)."""
    values = list(knob.values)
    value = knob.value
    if value not in values:  # a number on the grid but for its last bits starts at that grid point
        value = next((v for v in values if _numeric(v) and _numeric(value)
                      and abs(v - value) <= 1e-9 * max(1.0, abs(value))), None)
    if value is None:
        raise ValueError(f"knob {knob.field!r}: its value {knob.value!r} is not on its grid {values!r}")
    if knob.kind not in ("slider", "select"):
        raise ValueError(f"knob {knob.field!r}: kind must be 'slider' or 'select', got {knob.kind!r}")
    name = "knob_" + "".join(c if c.isalnum() else "_" for c in knob.field)
    field = json.dumps(knob.field)
    numeric = all(_numeric(v) for v in values)
    step = _even_step(sorted(values)) if numeric else None
    if knob.kind == "slider" and step:
        bind = alt.binding_range(min=min(values), max=max(values), step=step, name=knob.label + " ")
        test = f"abs(datum[{field}] - {name}) < {step / 2!r}"
    else:
        bind = alt.binding_select(options=values, name=knob.label + " ")
        test = (f"abs(datum[{field}] - {name}) < {1e-9 * max(1.0, max(abs(v) for v in values))!r}" if numeric
                else f"datum[{field}] == {name}")
    return alt.param(name=name, value=value, bind=bind), f"!isValid(datum[{field}]) || ({test})"


def explorable(chart: alt.Chart | alt.LayerChart, *knobs: Knob) -> alt.Chart | alt.LayerChart:
    """Make ``chart`` explorable: one input (slider or drop-down) per knob, each bound to an Altair
    parameter that keeps only the grid rows of its current value. The grid is precomputed (keep it
    small: the spec embeds every row, and Altair refuses more than 5,000), so the static book answers
    "what if" with no kernel and no network; vl-convert draws the starting position as the static SVG.

    The filters run before the chart's own transforms, in every layer of a layered chart."""
    if not knobs:
        raise ValueError("explorable() needs at least one Knob")
    pairs = [knob_param(k) for k in knobs]
    keep = [alt.FilterTransform(filter=expr) for _, expr in pairs]

    def filtered(c: alt.Chart) -> alt.Chart:
        c = c.copy(deep=False)
        own = [] if c.transform is alt.Undefined else list(c.transform)
        c.transform = keep + own
        return c

    if isinstance(chart, alt.LayerChart):
        out = chart.copy(deep=False)
        out.layer = [filtered(layer) for layer in chart.layer]
    elif isinstance(chart, alt.Chart):
        out = filtered(chart)
    else:
        raise TypeError(f"explorable() takes an alt.Chart or alt.LayerChart, got {type(chart).__name__}")
    return out.add_params(*(p for p, _ in pairs))


def power_bases_explorable(grid: pl.DataFrame, *, jalapeno_sustained_w: float,
                           jalapeno_allin_w: float) -> alt.Chart:
    """:func:`power_bases` with two sliders: Jalapeño's sustained power and its all-in power per chip.

    Draws a precomputed grid (:func:`jalapeno.comparison.power_basis_grid`: columns ``basis``, ``chip``,
    ``watts``, ``tok_s_kw``, ``ratio``, ``jalapeno_sustained_w``, ``jalapeno_allin_w``; a knob column is
    empty on the rows that do not depend on it). The sliders take the grid's values of the two knob
    columns and start at ``jalapeno_sustained_w`` and ``jalapeno_allin_w`` (W), which must be among them;
    the static SVG shows that position. Raises ValueError for a starting value off the grid."""
    sustained = tuple(grid["jalapeno_sustained_w"].drop_nulls().unique().sort().to_list())
    allin = tuple(grid["jalapeno_allin_w"].drop_nulls().unique().sort().to_list())
    top = float(grid["tok_s_kw"].max()) * 1.05
    chart = alt.Chart(grid).mark_bar().encode(
        x=alt.X("basis:N", title="power basis", sort=["rated", "sustained", "all-in-proportional"], axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("chip:N", sort=["jalapeno", "baseline"]),
        y=alt.Y("tok_s_kw:Q", title="throughput per kW (tok/s/kW)", scale=alt.Scale(domain=[0, top])),
        color=alt.Color("chip:N", title=None, scale=alt.Scale(domain=["jalapeno", "baseline"],
                                                              range=[CHIP_COLOURS["jalapeno"], CHIP_COLOURS["gb200"]])),
        tooltip=["basis:N", "chip:N", alt.Tooltip("watts:Q", title="power (W)", format=",.1f"),
                 alt.Tooltip("tok_s_kw:Q", format=",.0f"), alt.Tooltip("ratio:Q", title="Jalapeño / baseline", format=".2f")],
    ).properties(title="Per-kW throughput depends on whose watts are counted (move the sliders)")
    return explorable(chart,
                      Knob("jalapeno_sustained_w", sustained, jalapeno_sustained_w, "Jalapeño sustained power (W)"),
                      Knob("jalapeno_allin_w", allin, jalapeno_allin_w, "Jalapeño all-in power per chip (W)"))


def frontiers(df: pl.DataFrame, y: str = "tok_s_per_kw", title: str = "Pareto frontiers") -> alt.Chart:
    """Frontier lines (log-log) from a long frame with ``chip``, ``line`` (one line per frontier, e.g.
    ``gb200, measured``: the chip, then its source), ``interactivity_tok_s_user`` and ``y``. Colour by chip
    (:data:`CHIP_COLOURS`), line style by source (:data:`SOURCE_DASHES`: measured solid, transferred
    dashed, modeled dotted), each line its own ``line``. Raises ValueError for a source that is not one
    of :data:`SOURCES`."""
    sources = {line: line.rsplit(", ", 1)[-1] for line in df["line"].unique().to_list()}
    unknown = sorted(s for s in sources.values() if s not in SOURCES)
    if unknown:
        raise ValueError(f"frontier source {unknown[0]!r} is not one of {list(SOURCES)}")
    df = df.with_columns(pl.col("line").replace_strict(sources, return_dtype=pl.Utf8).alias("source"))
    # no point overlay: with one, Vega-Lite draws the line-style legend as dots that all look alike
    return alt.Chart(df).mark_line(strokeWidth=2).encode(
        x=alt.X("interactivity_tok_s_user:Q", title="interactivity (tok/s/user)", scale=alt.Scale(type="log")),
        y=alt.Y(f"{y}:Q", title="throughput per kW (input + output tok/s/kW)" if y == "tok_s_per_kw" else y,
                scale=alt.Scale(type="log")),
        color=chip_color(df["chip"].to_list(), legend=_LINE_LEGEND),
        strokeDash=source_dash(),
        detail="line:N", order="interactivity_tok_s_user:Q",
        tooltip=["line:N", alt.Tooltip("interactivity_tok_s_user:Q", format=",.0f"), alt.Tooltip(f"{y}:Q", format=",.0f")],
    ).properties(title=title)


def ratio_curves(df: pl.DataFrame) -> alt.Chart:
    """Ratio of two frontiers against interactivity (from :func:`jalapeno.pareto.ratio_curve`), one line
    per ``label``; log scales show the blow-up near the baseline's maximum interactivity."""
    return alt.Chart(df).mark_line().encode(
        x=alt.X("interactivity_tok_s_user:Q", title="interactivity (tok/s/user)", scale=alt.Scale(type="log")),
        y=alt.Y("ratio:Q", title="Jalapeño / baseline throughput per kW", scale=alt.Scale(type="log")),
        color=series_color(df["label"].to_list(), "label", legend=_LINE_LEGEND),
        strokeDash=series_dash(df["label"].to_list(), "label"),
        tooltip=["label:N", alt.Tooltip("interactivity_tok_s_user:Q", format=",.0f"), alt.Tooltip("ratio:Q", format=",.1f")],
    ).properties(title="The matched-interactivity ratio explodes at the baseline's fastest point")


def predicted_vs_measured(df: pl.DataFrame) -> alt.LayerChart:
    """Measured points and the model's predictions for a few series: ``series``, ``interactivity``,
    ``throughput``, ``kind`` (``measured`` or ``predicted``)."""
    base = alt.Chart(df).encode(
        x=alt.X("interactivity:Q", title="interactivity (tok/s/user)", scale=alt.Scale(type="log")),
        y=alt.Y("throughput:Q", title="throughput per GPU (tok/s)", scale=alt.Scale(type="log")),
        color=series_color(df["series"].to_list(), "series"),
    )
    measured = base.transform_filter(alt.datum.kind == "measured").mark_point(filled=True, size=30, opacity=0.7)
    predicted = base.transform_filter(alt.datum.kind == "predicted").mark_point(shape="cross", size=40)
    return alt.layer(measured, predicted).properties(title="Measured (dots) and predicted (crosses), same configurations")


# ---- the systems chapter: fabrics, LPU decode, capacity -------------------------------------------------

def topology_hops(sweep: pl.DataFrame, systems: pl.DataFrame | None = None) -> alt.LayerChart:
    """Hop counts against size for each topology family (:func:`jalapeno.network.size_sweep`), with the
    book's systems as labelled points (``systems``: ``system``, ``chips``, ``diameter_hops``,
    ``average_hops``). A drop-down switches between the diameter and the average hop count."""
    def long(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
        return pl.concat([df.select(*keys, pl.lit(name).alias("metric"), pl.col(col).cast(pl.Float64).alias("hops"))
                          for name, col in (("diameter", "diameter_hops"), ("average", "average_hops"))])

    lines = long(sweep, ["family", "chips", "shape"])
    x = alt.X("chips:Q", title="chips", scale=alt.Scale(type="log", base=2))
    y = alt.Y("hops:Q", title="hops (diameter or average)", scale=alt.Scale(type="log"))
    chart = alt.Chart(lines).mark_line(point=alt.OverlayMarkDef(size=20)).encode(
        x=x, y=y, color=series_color(lines["family"].to_list(), "family", "topology", legend=_LINE_LEGEND),
        strokeDash=series_dash(lines["family"].to_list(), "family", "topology"),
        tooltip=["family:N", "shape:N", "chips:Q", alt.Tooltip("hops:Q", format=".2f")])
    layers = [chart]
    if systems is not None:
        pts = long(systems, ["system", "chips"])
        base = alt.Chart(pts).encode(x=x, y=y, tooltip=["system:N", "chips:Q", alt.Tooltip("hops:Q", format=".2f")])
        layers += [base.mark_point(shape="diamond", size=90, filled=True, color="black"),
                   base.mark_text(align="left", dx=7, dy=-7, fontSize=10).encode(text="system:N")]
    return explorable(alt.layer(*layers).properties(title="Worst and average path length grow differently with size"),
                      Knob("metric", ("diameter", "average"), "diameter", "hop count", kind="select"))


def collective_times(df: pl.DataFrame, marks: pl.DataFrame | None = None) -> alt.LayerChart:
    """Time of a collective against message size on several fabrics (:func:`jalapeno.network.message_sweep`:
    ``system``, ``collective``, ``message_bytes``, ``time_s``), log-log, a drop-down choosing the collective;
    ``marks`` (``label``, ``message_bytes``) draws vertical rules at the decode- and prefill-sized messages."""
    data = df.with_columns((pl.col("time_s") * 1e6).alias("time_us"))
    x = alt.X("message_bytes:Q", title="message per chip (bytes)", scale=alt.Scale(type="log"))
    lines = alt.Chart(data).mark_line().encode(
        x=x, y=alt.Y("time_us:Q", title="time (µs)", scale=alt.Scale(type="log")),
        color=system_color(data["system"].to_list(), "system", "fabric"),
        strokeDash=series_dash(data["system"].to_list(), "system", "fabric"),
        tooltip=["system:N", "collective:N", alt.Tooltip("message_bytes:Q", format=".3s"), alt.Tooltip("time_us:Q", format=",.2f")])
    layers = [lines]
    if marks is not None:
        base = alt.Chart(marks).encode(x=x)
        layers += [base.mark_rule(strokeDash=[4, 3], color="#555555"),
                   base.mark_text(align="left", dx=4, y=8, fontSize=10, color="#555555").encode(text="label:N")]
    collectives = tuple(dict.fromkeys(df["collective"].to_list()))
    return explorable(alt.layer(*layers).properties(title="Small messages pay hops, large ones pay bandwidth"),
                      Knob("collective", collectives, collectives[0], "collective", kind="select"))


def budget_split(df: pl.DataFrame, title: str) -> alt.LayerChart:
    """Stacked horizontal bars of a per-token time budget by component and layout
    (:func:`jalapeno.systems.lpu_budget`: ``layout``, ``component``, ``time_s``, ``budget_s``), with the
    budget as a vertical rule. A negative remainder (a layout slower than the budget) is not drawn: its bar
    simply runs past the rule."""
    data = df.filter(pl.col("time_s") > 0).with_columns((pl.col("time_s") * 1e6).alias("time_us"))
    order = list(dict.fromkeys(df["component"].to_list()))
    bars = alt.Chart(data).mark_bar().encode(
        y=alt.Y("layout:N", title="layout (pipeline stages x chips per stage)", sort=list(dict.fromkeys(df["layout"].to_list()))),
        x=alt.X("time_us:Q", title="time per token (µs)", stack="zero"),
        color=series_color(order, "component"),
        order=alt.Order("component_rank:Q"),
        tooltip=["layout:N", "component:N", alt.Tooltip("time_us:Q", format=",.1f"), alt.Tooltip("share:Q", format=".0%")],
    ).transform_calculate(component_rank=f"indexof({json.dumps(order)}, datum.component)")
    budget = float(df["budget_s"][0]) * 1e6
    rule = alt.Chart(pl.DataFrame({"budget_us": [budget]})).mark_rule(color="black", strokeDash=[5, 3]).encode(
        x="budget_us:Q", tooltip=[alt.Tooltip("budget_us:Q", title="budget (µs)", format=",.1f")])
    return alt.layer(bars, rule).properties(title=title)


def lpu_scaling(df: pl.DataFrame) -> alt.VConcatChart:
    """Adding LPUs (:func:`jalapeno.systems.lpu_scaling`): output throughput per chip and single-user speed
    against the chip count, one line per tensor-parallel width ``tp``."""
    base = alt.Chart(df).encode(x=alt.X("chips:Q", title="LPUs", scale=alt.Scale(type="log", base=2)),
                                color=alt.Color("tp:O", title="chips per stage", scale=alt.Scale(range=SERIES_COLOURS)),
                                order="chips:Q",
                                tooltip=["tp:O", "stages:Q", "chips:Q", alt.Tooltip("output_tok_s_chip:Q", format=",.0f"),
                                         alt.Tooltip("interactivity_tok_s_user:Q", format=",.0f")])
    left = base.mark_line(point=alt.OverlayMarkDef(size=12)).encode(
        y=alt.Y("output_tok_s_chip:Q", title="output tok/s per LPU (full pipeline)", scale=alt.Scale(zero=False))
    ).properties(width=250, height=200, title="Throughput per chip falls")
    right = base.mark_line(point=alt.OverlayMarkDef(size=12)).encode(
        y=alt.Y("interactivity_tok_s_user:Q", title="tok/s per user", scale=alt.Scale(zero=False))
    ).properties(width=250, height=200, title="Speed per user")
    # one above the other: Vega-Lite cannot fit a concatenation to its container, and two 250 px views
    # side by side would not fit a phone's column
    return alt.vconcat(left, right).properties(title=wrap_title("Adding LPUs to one model: every hop is paid per token", 36))


def system_frontiers(df: pl.DataFrame, title: str) -> alt.Chart:
    """Throughput per chip against interactivity, one frontier per ``system`` (log-log): rows of
    :func:`jalapeno.systems.system_frontiers`."""
    return alt.Chart(df).mark_line(point=alt.OverlayMarkDef(size=22)).encode(
        x=alt.X("interactivity_tok_s_user:Q", title="interactivity (tok/s/user, 1 / TPOT)", scale=alt.Scale(type="log")),
        y=alt.Y("throughput_tok_s_chip:Q", title="throughput per chip (input + output tok/s)", scale=alt.Scale(type="log")),
        color=system_color(df["system"].to_list(), "system", None),
        strokeDash=series_dash(df["system"].to_list(), "system", None), order="interactivity_tok_s_user:Q",
        tooltip=["system:N", "n_chips:Q", "concurrency:Q", alt.Tooltip("interactivity_tok_s_user:Q", format=",.0f"),
                 alt.Tooltip("throughput_tok_s_chip:Q", format=",.0f")],
    ).properties(title=title)


def tpu_all_to_all(df: pl.DataFrame, tokens_per_chip: float) -> alt.Chart:
    """Decode all-to-all time per token of each MoE model on TPU 8t and 8i (:func:`jalapeno.systems.tpu_all_to_all`
    over several ``tokens_per_chip``), split into hop latency and bandwidth; a drop-down picks the decode
    tokens per chip (``tokens_per_chip`` first)."""
    data = pl.concat([
        df.select("model", "system", "tokens_per_chip", pl.lit("hop latency").alias("part"),
                  (pl.col("latency_per_layer_s") * pl.col("moe_layers") * 1e3).alias("ms")),
        df.select("model", "system", "tokens_per_chip", pl.lit("bandwidth").alias("part"),
                  ((pl.col("per_token_s") - pl.col("latency_per_layer_s") * pl.col("moe_layers")) * 1e3).alias("ms")),
    ])
    data = data.with_columns(pl.concat_str([pl.col("model"), pl.col("system")], separator=" on ").alias("case"))
    chart = alt.Chart(data).mark_bar().encode(
        x=alt.X("case:N", title=None, sort=sorted(set(data["case"].to_list()))),
        y=alt.Y("ms:Q", title="all-to-all time per output token (ms)", stack="zero"),
        color=series_color(["hop latency", "bandwidth"], "part"),
        order=alt.Order("part_rank:Q"),
        tooltip=["model:N", "system:N", "part:N", alt.Tooltip("ms:Q", format=",.3f")],
    ).transform_calculate(part_rank="datum.part == 'hop latency' ? 0 : 1").properties(
        title="Decode all-to-all: the 3D torus pays its diameter")
    values = tuple(float(v) for v in dict.fromkeys(df["tokens_per_chip"].to_list()))
    return explorable(chart, Knob("tokens_per_chip", values, float(tokens_per_chip), "decode tokens per chip", kind="select"))


def fabric_hop_budget(df: pl.DataFrame) -> alt.Chart:
    """The largest per-hop latency consistent with a published single-user speed against the scale-up domain
    size (:func:`jalapeno.systems.max_consistent_hop_latency`), one line per fabric, dashes per model."""
    data = df.filter(pl.col("max_hop_latency_s").is_not_null() & (pl.col("chips") > 1)).with_columns(
        (pl.col("max_hop_latency_s") * 1e6).alias("max_hop_latency_us"))
    return alt.Chart(data).mark_line(strokeWidth=2).encode(
        x=alt.X("chips:Q", title="chips in the scale-up domain", scale=alt.Scale(type="log", base=2)),
        y=alt.Y("max_hop_latency_us:Q", title="largest per-hop latency consistent (µs)", scale=alt.Scale(type="log")),
        color=series_color(data["fabric"].to_list(), "fabric", "fabric"),
        strokeDash=series_dash(data["model"].to_list(), "model", "published speed", legend=_LINE_LEGEND),
        detail="model:N", order="chips:Q",
        tooltip=["model:N", "fabric:N", "chips:Q", "diameter_hops:Q", alt.Tooltip("max_hop_latency_us:Q", format=".2f"),
                 alt.Tooltip("best_tpot_s:Q", format=".2e")],
    ).properties(title="Per-hop latency a Jalapeño fabric can afford at the published speeds")


def capacity_chips(df: pl.DataFrame, context_tokens: int, tier: str) -> alt.Chart:
    """Chips needed to hold weights plus KV cache (:func:`jalapeno.systems.capacity_table`) per system and
    model, log scale, with drop-downs for the context and the memory tier (starting at ``context_tokens``,
    ``tier``)."""
    chart = alt.Chart(df).mark_bar().encode(
        y=alt.Y("system:N", title=None), yOffset=alt.YOffset("model:N"),
        x=alt.X("chips:Q", title="chips to hold weights + KV cache", scale=alt.Scale(type="log", domainMin=0.5), stack=None),
        color=series_color(df["model"].to_list(), "model", "model"),
        tooltip=["system:N", "model:N", "tier:N", "context_tokens:Q", "chips:Q", alt.Tooltip("systems_needed:Q", format=",.2f"),
                 alt.Tooltip("bytes_needed:Q", format=".3s")],
    ).properties(title="Capacity: chips that hold the weights and the KV cache of the users")
    contexts = tuple(int(c) for c in sorted(set(df["context_tokens"].to_list())))
    tiers = tuple(t for t in ("sram", "hbm", "hbm+host") if t in set(df["tier"].to_list()))
    return explorable(chart, Knob("context_tokens", contexts, int(context_tokens), "context (tokens)", kind="select"),
                      Knob("tier", tiers, tier, "memory tier", kind="select"))


# ---- agents and caveats chapters ------------------------------------------------------------------------------

def _server_chip(name: str) -> str:
    return name.split(" ")[0]


def agent_task_latency(df: pl.DataFrame) -> alt.Chart:
    """Expected task latency per agent profile on each server (:func:`jalapeno.agents.compare`:
    ``profile``, ``server_key``, ``latency_s``), bars side by side, coloured by chip."""
    data = df.select("profile", "server_key", "latency_s", "completion_rate")
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("profile:N", title=None, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("server_key:N"),
        y=alt.Y("latency_s:Q", title="expected task latency (s)"),
        color=chip_color(data["server_key"].to_list(), "server_key"),
        tooltip=["profile:N", "server_key:N", alt.Tooltip("latency_s:Q", format=",.1f"),
                 alt.Tooltip("completion_rate:Q", format=".3f")],
    ).properties(title="Agent tasks: expected latency per task")


def agent_sweep(df: pl.DataFrame, x: str, y: str, title: str, x_title: str, y_title: str,
                log_x: bool = False) -> alt.Chart:
    """One line per server of an agent sweep (:func:`jalapeno.agents.steps_sweep` or
    :func:`jalapeno.agents.timeout_sweep`): ``x`` against ``y``, coloured by chip."""
    data = df.select("server", x, y)
    servers = sorted(set(data["server"].to_list()), key=lambda s: (_chip_order([_server_chip(s)]), s))
    return alt.Chart(data).mark_line(point=alt.OverlayMarkDef(size=20)).encode(
        x=alt.X(f"{x}:Q", title=x_title, scale=alt.Scale(type="log") if log_x else alt.Undefined),
        y=alt.Y(f"{y}:Q", title=y_title),
        color=alt.Color("server:N", title="chip", legend=_LINE_LEGEND, scale=alt.Scale(
            domain=servers, range=[chip_colours().get(_server_chip(s), OTHER_COLOUR) for s in servers])),
        order=f"{x}:Q",
        tooltip=["server:N", alt.Tooltip(f"{x}:Q", format=",.3g"), alt.Tooltip(f"{y}:Q", format=",.3f")],
    ).properties(title=title)


def amdahl_curves(curve: pl.DataFrame, points: pl.DataFrame) -> alt.LayerChart:
    """Whole-step speedup against the accelerated share (:func:`jalapeno.caveats.amdahl_curve`: ``share``,
    ``block_speedup``, ``speedup``), with operating points of the serving model marked (``points``:
    ``label``, ``share``, ``speedup``)."""
    curve = curve.with_columns(pl.col("block_speedup").map_elements(
        lambda s: display.formatted(s, "{}x on the blocks"), return_dtype=pl.String).alias("blocks"))
    lines = alt.Chart(curve).mark_line().encode(
        x=alt.X("share:Q", title="share of decode-step time in the accelerated blocks", axis=alt.Axis(format="%")),
        y=alt.Y("speedup:Q", title="whole-step speedup"),
        color=series_color(curve["blocks"].to_list(), "blocks", legend=_LINE_LEGEND),
        strokeDash=series_dash(curve["blocks"].to_list(), "blocks"),
    )
    dots = alt.Chart(points).mark_point(filled=True, size=70, color="black").encode(
        x="share:Q", y="speedup:Q", shape=alt.Shape("label:N", title="serving model"),
        tooltip=["label:N", alt.Tooltip("share:Q", format=".1%"), alt.Tooltip("speedup:Q", format=".3f")],
    )
    return alt.layer(lines, dots).properties(title="Amdahl's law: faster blocks, smaller whole-model gain")


def ratio_bars(df: pl.DataFrame, x: str, title: str, x_title: str | None = None) -> alt.Chart:
    """Ratios (``ratio``, bars from zero, a dashed rule at 1 = parity) by the category ``x`` (titled
    ``x_title``), grouped by ``metric``: for the workload-shape sweep and the power bases of the caveats
    chapter. The bars lie horizontal, one category a row, so long category names stay legible on a phone."""
    data = df.select(x, "metric", "ratio")
    rule = alt.Chart(pl.DataFrame({"x": [1.0]})).mark_rule(color="#888888", strokeDash=[4, 3]).encode(x="x:Q")
    bars = alt.Chart(data).mark_bar().encode(
        y=alt.Y(f"{x}:N", title=x_title, sort=None),
        yOffset=alt.YOffset("metric:N", sort=None),
        x=alt.X("ratio:Q", title="Jalapeño / other"),
        color=series_color(data["metric"].to_list(), "metric"),
        tooltip=[f"{x}:N", "metric:N", alt.Tooltip("ratio:Q", format=",.2f")],
    )
    return alt.layer(bars, rule).properties(title=title)  # rule drawn over the bars


def remaining_share(df: pl.DataFrame) -> alt.Chart:
    """Share of each published advantage left against Vera Rubin (:func:`jalapeno.caveats.vera_rubin_table`:
    ``model``, ``metric``, ``case``, ``remaining``), one point per case."""
    data = df.select("model", "metric", "case", "remaining").with_columns(
        pl.format("{} · {}", pl.col("model"), pl.col("metric")).alias("comparison"))
    return alt.Chart(data).mark_point(filled=True, size=70).encode(
        y=alt.Y("comparison:N", title=None, sort=None),
        x=alt.X("remaining:Q", title="advantage left against Vera Rubin / against the published baseline",
                scale=alt.Scale(type="log")),
        color=series_color(["pessimistic", "central", "optimistic"], "case", "Vera Rubin"),
        shape=alt.Shape("case:N", title="Vera Rubin", scale=alt.Scale(domain=["pessimistic", "central", "optimistic"])),
        tooltip=["model:N", "metric:N", "case:N", alt.Tooltip("remaining:Q", format=".2f")],
    ).properties(title="How much of each published ratio remains against Vera Rubin")


def hbm_per_gw(df: pl.DataFrame) -> alt.Chart:
    """HBM stacks per gigawatt of deployed chips (:func:`jalapeno.caveats.hbm_table`), one bar per chip."""
    data = df.select("chip", "stacks_per_gw", "hbm_pb_per_gw", "watts_per_chip")
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("chip:N", title=None, sort=None, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("stacks_per_gw:Q", title="HBM stacks per GW of chips"),
        color=chip_color(data["chip"].to_list(), legend=None),
        tooltip=["chip:N", alt.Tooltip("stacks_per_gw:Q", format=",.0f"), alt.Tooltip("hbm_pb_per_gw:Q", format=",.0f"),
                 alt.Tooltip("watts_per_chip:Q", format=",.0f")],
    ).properties(title="HBM a gigawatt of chips needs")


def frontiers_explorable(grid: pl.DataFrame, *, power_basis: str, scenario: str, title: str) -> alt.Chart:
    """:func:`frontiers` over a precomputed grid with two inputs: the power basis (``power_basis`` column,
    every row) and the scenario of Jalapeño's unknowns (``scenario`` column, empty on baseline rows, so
    the baselines stay drawn). Starts at ``power_basis`` and ``scenario``."""
    bases = tuple(sorted(grid["power_basis"].unique().to_list(), key=power.POWER_BASES.index))
    scenarios = tuple(s for s in ("low", "central", "high") if s in grid["scenario"].drop_nulls().to_list())
    return explorable(frontiers(grid, title=title),
                      Knob("power_basis", bases, power_basis, "power basis", kind="select"),
                      Knob("scenario", scenarios, scenario, "Jalapeño unknowns", kind="select"))


def validation_schemes(df: pl.DataFrame, target: float) -> alt.LayerChart:
    """Median and p90 frontier distance (percent) of each leave-out scheme: ``scheme``, ``statistic``
    (``median`` or ``p90``), ``distance_pct``; a rule at ``target`` (percent), the book's aim."""
    bars = alt.Chart(df).mark_bar().encode(
        y=alt.Y("scheme:N", title=None, sort=None),
        yOffset=alt.YOffset("statistic:N"),
        x=alt.X("distance_pct:Q", title="frontier distance, held out (%)"),
        color=alt.Color("statistic:N", title=None),
        tooltip=["scheme", "statistic", alt.Tooltip("distance_pct:Q", format=".0f")],
    )
    rule = alt.Chart(pl.DataFrame({"target": [target]})).mark_rule(strokeDash=[4, 3]).encode(x="target:Q")
    return alt.layer(bars, rule).properties(title="Predicting what the fit has not seen: three leave-out schemes")


def ratio_against_fastest(df: pl.DataFrame, *, published: float, seeds_speed: float) -> alt.LayerChart:
    """The matched ratio as a function of the baseline's fastest interactivity
    (:func:`jalapeno.baselines.ratio_against_fastest` with a band: ``line``, ``fastest_tok_s_user``,
    ``ratio``, ``ratio_low``, ``ratio_high``, ``extrapolated``, ``baseline_end_tok_s_user``): one line per
    baseline (precision, speculative decoding; dashed where the baseline is extended past its last point by
    its final slope), its band shaded, a horizontal rule at the ``published`` ratio and a vertical one at
    the seeds' single-user speed of the baseline (``seeds_speed``, tok/s/user). Log-log."""
    data = df.select("line", "fastest_tok_s_user", "ratio", "ratio_low", "ratio_high", "extrapolated",
                     "baseline_end_tok_s_user").drop_nulls("ratio").filter(pl.col("ratio").is_finite())
    data = data.with_columns(part=pl.when(pl.col("extrapolated")).then(pl.lit("past the baseline's end (final slope)"))
                             .otherwise(pl.lit("on the baseline's frontier")))
    x = alt.X("fastest_tok_s_user:Q", title="baseline's fastest interactivity (tok/s/user)", scale=alt.Scale(type="log"))
    y_scale = alt.Scale(type="log")
    band = alt.Chart(data).mark_area(opacity=0.15).encode(
        x=x, y=alt.Y("ratio_low:Q", scale=y_scale, title="Jalapeño / baseline throughput per kW"), y2="ratio_high:Q",
        color=alt.Color("line:N", title="baseline"))
    lines = alt.Chart(data).mark_line().encode(
        x=x, y=alt.Y("ratio:Q", scale=y_scale), color=alt.Color("line:N", title="baseline"),
        strokeDash=alt.StrokeDash("part:N", title=None, sort=["on the baseline's frontier"]),
        detail="part:N",
        tooltip=["line:N", alt.Tooltip("fastest_tok_s_user:Q", format=",.0f"), alt.Tooltip("ratio:Q", format=",.1f"),
                 alt.Tooltip("ratio_low:Q", format=",.1f"), alt.Tooltip("ratio_high:Q", format=",.1f")])
    rules = pl.DataFrame({"value": [published], "label": [f"published {published:g}x"]})
    hrule = alt.Chart(rules).mark_rule(color="#888888", strokeDash=[4, 3]).encode(y="value:Q", tooltip=["label:N"])
    vrule = alt.Chart(pl.DataFrame({"value": [seeds_speed], "label": [f"seeds' single-user speed {seeds_speed:g}"]})) \
        .mark_rule(color="#888888", strokeDash=[2, 2]).encode(x="value:Q", tooltip=["label:N"])
    return alt.layer(band, lines, hrule, vrule).properties(
        title="DeepSeek-R1: the matched ratio against the baseline's fastest point")


# ---- diagrams of fabrics, drawn from the topology (jalapeno.diagrams.drawing) ---------------------------

#: Stroke of each kind of link in a fabric diagram (a Dragonfly's levels from dark to light).
_LINK_STROKES = {"link": "#7f7f7f", "switch link": "#7f7f7f", "wraparound": "#7f7f7f",
                 "level 1": "#404040", "level 2": "#8c8c8c", "level 3": "#bdbdbd", "level 4": "#d9d9d9"}


def topology_diagram(drawing: dict[str, object], *, title: str, subtitle: list[str] | None = None,
                     panel_titles: dict[str, str] | None = None, size: int = 260,
                     columns: int | None = None) -> alt.HConcatChart | alt.VConcatChart:
    """A node-link diagram of a fabric from :func:`jalapeno.diagrams.drawing` (``nodes``, ``links``,
    ``panels``, ``notes``): one square panel of ``size`` px per panel of the drawing, side by side; chips
    (and units) filled by their hop count from the ringed reference chip on one scale for every panel,
    a switch as a black square, wraparound links as dashed stubs, a Dragonfly's levels from dark (level 1)
    to light. ``title`` and ``subtitle`` (lines; the drawing's notes are added) head the figure;
    ``panel_titles`` (panel -> text) replace the drawing's own panel descriptions; ``columns`` panels a row
    (default all in one row)."""
    nodes, links = drawing["nodes"], drawing["links"]
    panels = dict(drawing["panels"]) | (panel_titles or {})
    top = max(1, int(nodes["hops"].max() or 1))
    kinds = [k for k in _LINK_STROKES if k in set(links["kind"].to_list())]
    # an ordinal scale: a symbol legend (vl-convert numbers gradient ids across calls, so a gradient
    # legend's SVG would depend on what was drawn before it)
    fill = alt.Fill("hops:O", title="hops from the ringed chip",
                    scale=alt.Scale(scheme="viridis", domain=list(range(top + 1)), reverse=True),
                    legend=alt.Legend(orient="bottom", direction="horizontal", columns=min(top + 1, 8)))
    charts = []
    for panel, text in panels.items():
        pn, pl_ = nodes.filter(pl.col("panel") == panel), links.filter(pl.col("panel") == panel)
        xs = pn["x"].to_list() + pl_["x"].to_list() + pl_["x2"].to_list()
        ys = pn["y"].to_list() + pl_["y"].to_list() + pl_["y2"].to_list()
        pad = 0.08 * max(max(xs) - min(xs), max(ys) - min(ys), 1.0)
        (x0, x1), (y0, y1) = (min(xs) - pad, max(xs) + pad), (min(ys) - pad, max(ys) + pad)
        unit = min(size, MIN_COLUMN_PX - 40) / max(x1 - x0, y1 - y0)  # px per unit, equal on both axes
        width, height = round((x1 - x0) * unit), round((y1 - y0) * unit)
        x = alt.X("x:Q", axis=None, scale=alt.Scale(domain=[x0, x1], nice=False, zero=False))
        y = alt.Y("y:Q", axis=None, scale=alt.Scale(domain=[y0, y1], nice=False, zero=False))
        count = max(pn.height, 1)
        radius = max(12, min(160, int(9000 / count)))
        layers = [alt.Chart(pl_).mark_rule(strokeWidth=1, opacity=0.8 if pl_.height < 300 else 0.5).encode(
            x=x, y=y, x2="x2:Q", y2="y2:Q",
            stroke=alt.Stroke("kind:N", title="link", scale=alt.Scale(domain=kinds, range=[_LINK_STROKES[k] for k in kinds])),
            strokeDash=alt.StrokeDash("kind:N", scale=alt.Scale(domain=kinds, range=[[4, 3] if k == "wraparound" else [1, 0] for k in kinds]),
                                      legend=None))]
        chips = pn.filter(pl.col("role") != "switch")
        tooltip = [alt.Tooltip("role:N"), alt.Tooltip("node:Q", title="index"), alt.Tooltip("chips:Q"), alt.Tooltip("hops:Q")]
        layers.append(alt.Chart(chips).mark_circle(size=radius, opacity=1, stroke="black").encode(
            x=x, y=y, fill=fill, strokeWidth=alt.condition(alt.datum.role == "reference chip", alt.value(2.5), alt.value(0.3)),
            tooltip=tooltip))
        switch = pn.filter(pl.col("role") == "switch")
        if switch.height:
            layers.append(alt.Chart(switch).mark_square(size=400, color="black").encode(
                x=x, y=y, tooltip=[alt.Tooltip("role:N")]))
        charts.append(alt.layer(*layers).properties(width=width, height=height, title=alt.TitleParams(text, fontSize=12)))
    lines = [part for line in list(subtitle or []) + list(drawing["notes"]) for part in _lines(line, _TITLE_CHARS + 6)]
    heading = _lines(title, _TITLE_CHARS)
    head = alt.TitleParams(heading, subtitle=lines, anchor="start") if lines else alt.TitleParams(heading, anchor="start")
    # as many panels a row as fit a phone's column (358 px), at most ``columns``
    per_row = max(1, min(columns or len(charts), MIN_COLUMN_PX // (max(c.width for c in charts) + 20)))
    rows = [alt.hconcat(*charts[i:i + per_row], spacing=20) for i in range(0, len(charts), per_row)]
    whole = rows[0] if len(rows) == 1 else alt.vconcat(*rows, spacing=16)
    return whole.resolve_scale(fill="shared", stroke="shared").properties(title=head)


#: The narrowest text column a chart must fit (a 390 px phone, less the page's margins).
MIN_COLUMN_PX = 358


def _lines(text: str, chars: int) -> list[str]:
    """``text`` broken at spaces into lines of at most ``chars`` characters (:func:`wrap_title`)."""
    wrapped = wrap_title(text, chars)
    return wrapped if isinstance(wrapped, list) else [wrapped]
