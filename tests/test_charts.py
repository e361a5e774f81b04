"""Charts: deterministic offline output, small specs (golden case 11)."""

import json
import re
from pathlib import Path

import altair as alt
import numpy as np
import polars as pl
import pytest

from jalapeno import cache, charts, comparison, specs
from jalapeno.chapters import reading_the_numbers


def test_renderer_is_deterministic_and_offline():
    charts.setup()
    chart = reading_the_numbers.power_bases(comparison.power_basis_table(comparison.baseline_summary()))
    a, b = chart._repr_mimebundle_(), chart._repr_mimebundle_()
    html = a[0]["text/html"] if isinstance(a, tuple) else a["text/html"]
    assert a == b
    assert html.startswith('<div id="fig-') and "window.vegaEmbed(el,spec" in html
    assert "<svg" not in html  # no font-dependent static layout in a notebook's output
    assert "cdn" not in html.lower() and "altair-viz-" not in html


def test_default_transformer_still_refuses_huge_frames():
    big = pl.DataFrame({"x": range(5001)})
    alt.Chart(pl.DataFrame({"x": range(5000)})).mark_point().encode(x="x").to_dict()
    with pytest.raises(alt.MaxRowsError, match="5001"):
        alt.Chart(big).mark_point().encode(x="x").to_dict()


def test_figure_writes_its_spec_and_data_when_asked(tmp_path, monkeypatch):
    """The spec and the CSV, which the build draws as SVG and PNG (``execute_notebook``, tested in
    test_build); the SVG drawn from the written spec has the chart's two points."""
    charts.setup()  # the book's renderer, as a notebook's setup enables it (not left to another test)
    chart = alt.Chart(pl.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q")
    monkeypatch.setenv("JALAPENO_FIGURES_DIR", str(tmp_path))
    shown = charts.export(chart, "two-points")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["two-points.csv", "two-points.vl.json"]
    assert (tmp_path / "two-points.csv").read_text().splitlines()[1:] == ["1", "2"]
    svg = charts.to_svg(json.loads((tmp_path / "two-points.vl.json").read_text()))
    assert svg.startswith("<svg") and svg.count('role="graphics-symbol"') >= 2
    # the page shows the spec the files were made from, validated once, and reads as the chart
    assert shown._repr_mimebundle_() == charts.fit_width(chart)._repr_mimebundle_()
    assert repr(shown) == "alt.Chart(...)"
    with pytest.raises(ValueError, match="figure name"):
        charts.export(chart, "Bad Name")


def test_the_chart_runtime_is_kept_under_vl_converts_version(tmp_path, monkeypatch):
    monkeypatch.setenv("JALAPENO_CACHE_DIR", str(tmp_path))
    kept = tmp_path / "chart-runtime" / f"vl-convert-{charts.vlc.__version__}.js"
    cache.store(kept, lambda tmp: tmp.write_text("(function(){ kept })();"))
    assert charts.runtime_bundle() == "(function(){ kept })();"


def test_charts_draw_and_never_run_a_model():
    import jalapeno.charts as module

    assert not {"comparison", "serving", "pareto", "systems", "caveats", "agents"} & set(vars(module))


def test_a_shared_figure_is_drawn_by_two_chapters_or_more():
    """A figure one chapter draws is in that chapter's module; jalapeno/chapters/figures.py keeps only the
    figures that two or more chapter modules draw."""
    import ast

    folder = Path(charts.__file__).parent / "chapters"
    shared = {n.name for n in ast.parse((folder / "figures.py").read_text()).body
              if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}
    drawn_by: dict[str, set[str]] = {name: set() for name in shared}
    for path in folder.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "figures"
                    and node.attr in shared):
                drawn_by[node.attr].add(path.stem)
    assert shared and {name: len(chapters) for name, chapters in drawn_by.items() if len(chapters) < 2} == {}


def test_figure_data_is_every_dataset_the_chart_draws_under_a_readers_headers():
    import altair as alt
    import polars as pl

    points = pl.DataFrame({"chip": ["gb200", "jalapeno"], "tok_s_kw": [44960.0, 85448.0], "is_peak": [False, True]})
    band = pl.DataFrame({"chip": ["gb200"], "tok_s_kw_low": [40000.0], "high_tok_s_kw": [50000.0]})
    chart = alt.layer(
        alt.Chart(band).mark_area().encode(x="chip", y=alt.Y("tok_s_kw_low", title="throughput per kW"), y2="high_tok_s_kw",
                                           tooltip=[alt.Tooltip("tok_s_kw_low", title="tok_s_kw band low")]),
        alt.layer(alt.Chart(points).mark_point(), alt.Chart(points).mark_line()).encode(
            x=alt.X("chip", title=["the chip", "measured"]), y=alt.Y("tok_s_kw", title="throughput per kW")))
    data = charts.figure_data(chart.to_dict())
    # the axis's title (lines joined), a field's next title when a column before it took its first, a
    # column name in words with its unit; which marks draw a row, a layer drawing its parent's data
    assert data.columns == ["drawn as", "the chip measured", "tok/s/kW band low", "high (tok/s/kW)", "throughput per kW",
                            "is peak"]
    assert data["drawn as"].to_list() == ["area", "line, point", "line, point"]
    assert data.filter(pl.col("the chip measured") == "jalapeno")["throughput per kW"].to_list() == [85448.0]
    single = charts.figure_data(alt.Chart(points).mark_point().encode(x="chip").to_dict())
    assert single.columns == ["chip", "tok/s/kW", "is peak"]


def test_a_figures_csv_writes_its_values_as_the_page_does():
    """A float under the display rule without separators, an integer exactly, a flag in words, nothing for
    a missing value; never a 16-digit float, True or None."""
    import altair as alt
    import polars as pl

    rows = pl.DataFrame({"chip": ["gb200", "jalapeno"], "tok_s_kw": [85447.9999999539, 0.000123456],
                         "message_bytes": [47185920, 1], "memory_bound": [True, None]})
    spec = charts._stable_spec(alt.Chart(rows).mark_point().encode(x="chip").to_dict())
    assert charts.figure_csv(spec).splitlines() == ["chip,tok/s/kW,message (B),memory bound",
                                                   "gb200,85448,47185920,yes", "jalapeno,0.00012346,1,"]


def test_every_chip_has_its_own_colour_in_every_chart():
    colours = charts.chip_colours()
    assert set(colours) == set(specs.chip_names())
    assert len(set(colours.values())) == len(colours)  # no two chips share a colour
    assert not set(colours.values()) & set(charts.SERIES_COLOURS)  # a series that is no chip never looks like one
    # Jalapeño in its one colour whichever chips a chart shows beside it
    for chips in (["gb200", "jalapeno"], ["jalapeno", "vera-rubin", "tpu7x"]):
        scale = charts.chip_color(chips).to_dict()["scale"]
        assert dict(zip(scale["domain"], scale["range"]))["jalapeno"] == charts.CHIP_COLOURS["jalapeno"]
    assert charts._system_chip("gb200-nvl72") == "gb200" and charts._system_chip("Jalapeño") == "jalapeno"
    assert charts._system_chip("what-if torus 8x8x16") is None


def test_charts_fit_their_container_and_export_at_a_fixed_width():
    chart = charts.fit_width(alt.Chart(pl.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q"))
    spec = chart.to_dict()
    assert spec["width"] == "container" and spec["autosize"]["type"] == "fit-x"
    assert f'width="{charts.EXPORT_WIDTH_PX}"' in charts.to_svg(spec)[:400]
    assert charts.wrap_title("a " * 40)[0] == ("a " * 23).strip()  # 46 characters a line


def test_a_charts_numbers_in_the_page_keep_five_significant_digits_whatever_their_magnitude():
    spec = {"datasets": {"d": [{"x": 151.39588810206874, "y": 3174603.1746031744, "z": 4522350648007934.0,
                                "n": 12, "s": "151.39588810206874"}]}, "mark": "point"}
    html = charts._render(spec)["text/html"]
    assert '"x": 151.4' in html and '"y": 3174600.0' in html and '"z": 4522400000000000.0' in html
    assert '"n": 12' in html and '"s": "151.39588810206874"' in html


def test_a_chart_renders_the_same_page_under_a_last_bit_perturbation_of_its_data():
    rng = np.random.default_rng(12)
    values = rng.lognormal(3, 2, 500)
    frame = lambda v: pl.DataFrame({"x": np.arange(v.size, dtype=float), "y": v})  # noqa: E731
    html = [charts._render(alt.Chart(frame(v)).mark_line().encode(x="x:Q", y="y:Q").to_dict())["text/html"]
            for v in (values, values * (1 + 1e-12 * rng.choice([-1.0, 1.0], values.size)))]
    assert html[0] == html[1]


def _legend(svg: str) -> tuple[float, float, int]:
    """An exported chart's legend from vl-convert's SVG: its right edge (the plot's origin x plus the
    legend's x and its background's width), the figure's width and the entries in its first row."""
    width = float(re.search(r'<svg [^>]*width="([0-9.]+)"', svg).group(1))
    x0 = float(re.search(r'<g fill="none" stroke-miterlimit="10" transform="translate\(([0-9.]+),', svg).group(1))
    legend = svg[svg.index('role-legend"'):]
    m = re.match(r'[^<]*<g transform="translate\(([0-9.]+),[0-9.]+\)"><path class="background" '
                 r'aria-hidden="true" d="M0,0h([0-9.]+)', legend)
    first_row = re.findall(r'<g transform="translate\([0-9.]+,0\)"><path class="background" aria-hidden="true" '
                           r'd="M0,0h[1-9]', legend)
    return x0 + float(m.group(1)) + float(m.group(2)), width, len(first_row)


@pytest.mark.parametrize("labels, columns", [
    # the serving-model chapter's four series (a walkthrough found the third cut at the right edge)
    (["deepseek-r1 b200 sglang fp8 8192/1024", "gpt-oss-120b b200-trt trt fp4 8192/1024",
      "gpt-oss-120b gb200 dynamo-trt fp4 8192/1024", "gpt-oss-120b h200 vllm fp4 8192/1024"], 2),
    (["low", "central", "high"], 3),  # short labels keep the theme's three columns
])
def test_an_exported_legend_fits_the_figure(labels, columns):
    """charts.legend_columns: as many columns as the longest label leaves room for in the exported
    600 px (40 characters: 240 + 40 px an entry, 2 columns; 7: 85 px, the theme's 3)."""
    alt.theme.enable(charts.THEME)
    df = pl.DataFrame({"series": labels, "x": range(len(labels)), "y": range(len(labels))})
    chart = charts.fit_width(alt.Chart(df).mark_point().encode(x="x:Q", y="y:Q",
                                                                color=charts.series_color(labels, "series")))
    right, width, first_row = _legend(charts.to_svg(chart.to_dict()))
    assert right <= width and first_row == columns
