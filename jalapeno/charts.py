"""Chart theme and renderer: interactive in the book with no network, deterministic in notebooks.

This module is what the chapters' figures share: the theme, the renderer and the export, the colours,
scales and legends of chips, series and sources, the width and title helpers, and the machinery of
explorable figures (:class:`Knob`, :func:`explorable`). A figure itself is drawn by its chapter's module
(``jalapeno/chapters/<name>.py``, under ``# ---- figures ----``); those two or more chapters draw are in
:mod:`jalapeno.chapters.figures`.

Each chart displays as one ``text/html`` output: an empty ``<div>`` and a small script that, when the
page has loaded the chart runtime (``vega-bundle.js``, written into the book's static files at build
time from ``vl_convert.javascript_bundle()``), draws the chart into it. The element id is a hash of the
spec, never random, so nbval compares the outputs exactly; no CDN is referenced. No static image is
stored in the output (its text layout would depend on the fonts found): the book build adds one, and
the chart's data links, at staging (:func:`jalapeno.publish.pages.chart_data`).

:func:`export` also writes the chart's files into ``$JALAPENO_FIGURES_DIR`` when that is set (the book
build sets it): ``<name>.csv`` (:func:`figure_csv`) and ``<name>.vl.json`` (the spec the page draws),
from which the build draws its SVG (:func:`to_svg`) and PNG in the process that ran the notebook: the
chart engine starts once in that process (about 0.9 s), not once in every notebook's kernel.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import altair as alt
import polars as pl
import vl_convert as vlc

from . import cache, display, measured, specs
from . import data as _data

THEME = "jalapeno"
RENDERER = "jalapeno"

#: Width (px) of the exported SVG and PNG and of the static SVG shown before the chart runtime loads; in
#: the book a chart takes its container's width (:func:`fit_width`).
EXPORT_WIDTH_PX = 600

#: The narrowest text column a chart must fit (a 390 px phone, less the page's margins).
MIN_COLUMN_PX = 358

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
#: The source of a frontier of a reader's own runs (``jalapeno build --measurements``), drawn beside the
#: book's three only in a book built on them.
READER_SOURCE = measured.READER_LABEL
SOURCE_DASHES = {"measured": [1, 0], "transferred": [7, 4], "modeled": [2, 3], READER_SOURCE: [10, 3, 2, 3]}
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


def chip_order(chips) -> list[str]:
    """The chips of ``chips`` in the order of ``data/chips.csv``, then any it does not list (sorted)."""
    known = specs.chip_names()
    present = set(chips)
    return [c for c in known if c in present] + sorted(present - set(known))


def _chip_scale(chips) -> alt.Scale:
    """The book's chip colours for the chips in ``chips`` (in the order of ``data/chips.csv``)."""
    domain = chip_order(chips)
    colours = chip_colours()
    return alt.Scale(domain=domain, range=[colours.get(c, OTHER_COLOUR) for c in domain])


def chip_color(chips, field: str = "chip", title: str | None = "chip", legend=alt.Undefined) -> alt.Color:
    """The colour channel of a chip field: every chip in its one colour of :data:`CHIP_COLOURS` (the
    same in every chapter), the legend listing only the chips in ``chips``."""
    return alt.Color(f"{field}:N", title=title, scale=_chip_scale(chips), legend=legend)


#: A legend label's width per character and an entry's symbol, padding and gap (px, at the theme's
#: 11 px labels, a sans-serif's widest average), to count the columns its longest label leaves room for.
_LEGEND_CHAR_PX, _LEGEND_ENTRY_PX, _LEGEND_LABEL_LIMIT_PX = 6.5, 40, 240


def legend_columns(labels) -> dict:
    """A legend's ``columns`` (a Vega expression) for ``labels``: one under a container narrower than
    520 px (the theme's rule), else as many as the longest label leaves room for, up to 3, in the
    container's width or, with none (an exported file), :data:`EXPORT_WIDTH_PX`: no label is cut at the
    figure's edge."""
    longest = max((len(str(x)) for x in labels), default=0)
    entry = min(_LEGEND_CHAR_PX * longest, _LEGEND_LABEL_LIMIT_PX) + _LEGEND_ENTRY_PX
    width = f"(isFinite(containerSize()[0]) && containerSize()[0] > 0 ? containerSize()[0] : {EXPORT_WIDTH_PX})"
    return {"expr": f"{width} < 520 ? 1 : max(1, min(3, floor({width} / {entry:g})))"}


def _fitted_legend(legend, labels):
    """``legend`` (a Legend, or Undefined for the theme's) with :func:`legend_columns` for ``labels``."""
    props = {} if legend is alt.Undefined else legend.to_dict()
    return alt.Legend(**props, columns=legend_columns(labels)) if legend is not None else None


def series_color(values, field: str, title: str | None = None, legend=alt.Undefined) -> alt.Color:
    """The colour channel of a series that is not a chip: the dark tones of :data:`SERIES_COLOURS`, in
    the order of ``values`` (first seen first); its legend as wide as its labels (:func:`legend_columns`)."""
    domain = list(dict.fromkeys(values))
    return alt.Color(f"{field}:N", title=title, legend=_fitted_legend(legend, domain), scale=alt.Scale(
        domain=domain, range=[SERIES_COLOURS[i % len(SERIES_COLOURS)] for i in range(len(domain))]))


def series_dash(values, field: str, title: str | None = None, legend=alt.Undefined) -> alt.StrokeDash:
    """A stroke-dash channel telling apart the series of ``field`` (first seen first: solid, dashed,
    dotted, dash-dot ...)."""
    domain = list(dict.fromkeys(values))
    return alt.StrokeDash(f"{field}:N", title=title, legend=legend, scale=alt.Scale(
        domain=domain, range=[_DASH_CYCLE[i % len(_DASH_CYCLE)] for i in range(len(domain))]))


#: The legend of a line chart: each entry drawn as a stroke, long and thick enough to show its dashes, as
#: opaque as the line (not as a translucent band layered under it, whose opacity a merged legend takes).
LINE_LEGEND = alt.Legend(symbolType="stroke", symbolSize=400, symbolStrokeWidth=3, symbolOpacity=1)


def _system_chip(name: str) -> str | None:
    """The chip of a system named in ``data/systems.csv``, or of a label that starts with a chip's key or
    name (``Jalapeño``, ``vera-rubin, GPU only``); None when none matches."""
    systems = dict(_data.load("systems.csv").select("system", "chip").iter_rows())
    if name in systems:
        return systems[name]
    plain = name.lower().replace("é", "e").replace("ñ", "n")
    keys = sorted(specs.chip_names(), key=len, reverse=True)
    return next((k for k in keys if plain.startswith(k)), None)


def system_color(names, field: str = "system", title: str | None = "system", legend=LINE_LEGEND) -> alt.Color:
    """The colour channel of systems: each system in the colour of its chip (:func:`chip_colours`), a
    system of no chip (a what-if fabric) in :data:`OTHER_COLOUR`; its legend as wide as its labels."""
    domain = list(dict.fromkeys(names))
    colours = chip_colours()
    return alt.Color(f"{field}:N", title=title, legend=_fitted_legend(legend, domain), scale=alt.Scale(
        domain=domain, range=[colours.get(_system_chip(n) or "", OTHER_COLOUR) for n in domain]))


def source_dash(field: str = "source", title: str | None = "source", reader: bool = False) -> alt.StrokeDash:
    """The book's line style of a frontier's source: measured solid, transferred dashed, modeled dotted
    (:data:`SOURCE_DASHES`), and with ``reader`` a reader's runs dash-dotted (:data:`READER_SOURCE`); the
    legend draws the line styles."""
    domain = [*SOURCES, READER_SOURCE] if reader else list(SOURCES)
    return alt.StrokeDash(f"{field}:N", title=title, scale=alt.Scale(
        domain=domain, range=[SOURCE_DASHES[s] for s in domain]),
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
    if isinstance(chart.title, str) and len(chart.title) > TITLE_CHARS:
        chart = chart.properties(title=wrap_title(chart.title))
    return chart


#: A chart title breaks into lines of at most this many characters (:func:`wrap_title`), an axis title
#: into lines of at most ``_AXIS_TITLE_CHARS`` (:func:`fit_width`).
TITLE_CHARS = 46
_AXIS_TITLE_CHARS = 40


def _views(chart) -> list:
    """The single views of a chart (a layer's, a concatenation's, nested)."""
    if isinstance(chart, alt.Chart):
        return [chart]
    parts = [getattr(chart, k, alt.Undefined) for k in ("layer", "hconcat", "vconcat", "concat")]
    return [v for part in parts if part is not alt.Undefined for sub in part for v in _views(sub)]


def wrap_title(text: str, chars: int = TITLE_CHARS) -> list[str] | str:
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
    ``$JALAPENO_FIGURES_DIR`` is set, written there as ``<name>.csv`` (:func:`figure_csv`) and
    ``<name>.vl.json`` (the Vega-Lite spec the page draws: its :func:`spec_id` is the id of the chart's
    element on the page; the build draws ``<name>.svg`` from it, :func:`to_svg`).

    ``name`` is the figure's stable file name (lower-case, digits and dashes)."""
    if not name or not all(c.isalnum() or c == "-" for c in name):
        raise ValueError(f"figure name must be lower-case letters, digits and dashes, got {name!r}")
    chart = fit_width(chart)
    spec = chart.to_dict()
    folder = os.environ.get("JALAPENO_FIGURES_DIR")
    if folder:  # the exported files show the page's numbers (the display rule), not the full floats
        shown = _stable_spec(spec)
        Path(folder).mkdir(parents=True, exist_ok=True)
        Path(folder, f"{name}.csv").write_text(figure_csv(shown))
        Path(folder, f"{name}.vl.json").write_text(json.dumps(shown, indent=1, ensure_ascii=False) + "\n")
    return Shown(chart, spec)


def _spec_views(spec: dict, data: str | None = None, encoding: dict | None = None):
    """``(dataset name, encoding, view)`` of every single view of a Vega-Lite ``spec`` (a layer's, a
    concatenation's, a facet's), a view drawing its parent's data and encoding where it has none of its own."""
    data = (spec.get("data") or {}).get("name", data)
    encoding = {**(encoding or {}), **spec.get("encoding", {})}
    if "mark" in spec:
        yield data, encoding, spec
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for sub in spec.get(key, []):
            yield from _spec_views(sub, data, encoding if key == "layer" else None)
    if isinstance(spec.get("spec"), dict):
        yield from _spec_views(spec["spec"], data, encoding)


#: The channels whose title names a field in a chart's data table, first the one a reader sees first.
_TITLED = ("x", "y", "x2", "y2", "theta", "color", "fill", "stroke", "shape", "strokeDash", "size", "text",
           "tooltip", "detail", "order")

#: The column of :func:`figure_data` that says which marks draw a row, when a chart draws several datasets.
DRAWN_AS = "drawn as"


def _titles(spec: dict) -> dict[str, list[str]]:
    """The titles a chart gives each field it encodes, an axis's first, a legend's next, a tooltip's last
    (:data:`_TITLED`); a title in lines joined into one, a word in the package's style read as
    :func:`jalapeno.display.header` reads a column name (``tok_s_per_kw band low`` -> ``tok/s/kW band low``)."""
    ranked: dict[str, list[tuple[int, str]]] = {}
    for _, encoding, _ in _spec_views(spec):
        for channel, encodings in encoding.items():
            rank = _TITLED.index(channel) if channel in _TITLED else len(_TITLED)
            for enc in encodings if isinstance(encodings, list) else [encodings]:
                if not isinstance(enc, dict) or not isinstance(enc.get("field"), str) or not enc.get("title"):
                    continue
                title = " ".join(enc["title"]) if isinstance(enc["title"], list) else str(enc["title"])
                title = " ".join(display.header(w) if "_" in w else w for w in title.split())
                ranked.setdefault(enc["field"], []).append((rank, title))
    return {field: list(dict.fromkeys(t for _, t in sorted(titles))) for field, titles in ranked.items()}


def figure_data(spec: dict) -> pl.DataFrame:
    """The data behind a chart (its Vega-Lite ``spec``), as one table a reader reads: the rows of every
    inline dataset, each column headed by the best title the chart gives its field that no other column
    took first (:func:`_titles`; a column with fewer titles chooses first), else by its name in words
    (:func:`jalapeno.display.header`), and, when the chart draws more than one dataset, a first column
    :data:`DRAWN_AS` naming the marks that draw each row (``line``, ``area, line``); columns a dataset
    lacks are empty. Values as the spec holds them."""
    sets = {name: rows for name, rows in spec.get("datasets", {}).items() if rows}
    if not sets:
        return pl.DataFrame()
    marks: dict[str, list[str]] = {}
    for data, _, view in _spec_views(spec):
        mark = view["mark"] if isinstance(view["mark"], str) else view["mark"].get("type", "")
        if mark not in marks.setdefault(data, []):
            marks[data].append(mark)
    frames = [pl.DataFrame(rows, infer_schema_length=None) for rows in sets.values()]
    if len(frames) > 1:
        frames = [f.with_columns(pl.lit(", ".join(sorted(marks.get(name, [])))).alias(DRAWN_AS))
                  for name, f in zip(sets, frames)]
    table = pl.concat(frames, how="diagonal_relaxed")
    if DRAWN_AS in table.columns:
        table = table.select(DRAWN_AS, pl.exclude(DRAWN_AS))
    titles = _titles(spec)
    names: dict[str, str] = {}
    # a column with fewer titles chooses first (a band's edge shares its line's axis title but has its own
    # tooltip's), a column without one last: each its best title not yet taken, else its name in words
    for column in sorted(table.columns, key=lambda c: (len(titles.get(c, [])) or len(table.columns),)):
        choices = [*titles.get(column, []), display.header(column), f"{display.header(column)} ({column})"]
        names[column] = next(c for c in choices if c not in names.values())
    return table.rename(names)


def figure_csv(spec: dict) -> str:
    """:func:`figure_data` as CSV text, each value as the page writes it: a number under the display rule
    without thousands separators (an integer exactly; a float by :func:`jalapeno.display.formatted` with
    ``{:g}``: ``85448``, ``1.2e+11``),
    a flag as ``yes`` / ``no``, nothing for a missing value, a text as it is."""
    def written(value: object) -> str | None:
        if value is None:
            return None
        if isinstance(value, float):
            return display.formatted(value, "{:g}")
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return display.text(value)
    table = figure_data(spec)
    return table.select(pl.col(c).map_elements(written, return_dtype=pl.String) for c in table.columns).write_csv()


def runtime_bundle() -> str:
    """The chart runtime (vega, vega-lite, vega-embed) as one classic script, from the installed
    vl-convert package; sets ``window.vegaEmbed``. Wrapped in a function scope: the bundle declares
    top-level names (``_``) that collide with Sphinx's own scripts, which stops it with a SyntaxError.
    Kept in the cache (:func:`jalapeno.cache.entry`) under vl-convert's version: bundling takes about
    1.5 s, a large part of an incremental build."""
    kept = cache.entry(cache.folder() / "chart-runtime" / f"vl-convert-{vlc.__version__}.js", lambda tmp: tmp.write_text(
        "(function(){\n" + vlc.javascript_bundle() + "\n})();\n"))
    return kept.read_text()


# ---- explorable figures: inputs bound to Altair parameters over a precomputed grid ----------------------


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
