"""Charts: deterministic offline output, small specs (golden case 11)."""

import altair as alt
import numpy as np
import polars as pl
import pytest

from jalapeno import bounds, cache, charts, comparison, measured, specs


def test_renderer_is_deterministic_and_offline():
    charts.setup()
    chart = charts.power_bases(comparison.power_basis_table(comparison.baseline_summary()))
    a, b = chart._repr_mimebundle_(), chart._repr_mimebundle_()
    html = a[0]["text/html"] if isinstance(a, tuple) else a["text/html"]
    assert a == b
    assert html.startswith('<div id="fig-') and "window.vegaEmbed(el,spec" in html
    assert "<svg" not in html  # no font-dependent static layout in a notebook's output
    assert "cdn" not in html.lower() and "altair-viz-" not in html


def test_chart_embeds_only_its_points():
    pts = measured.points("gpt-oss-120b", "gb200", isl=8192, osl=1024)
    spec = charts.measured_points(pts, "20786863188").to_dict()
    (values,) = spec["datasets"].values()
    assert len(values) == pts.height
    assert len(charts.to_svg(spec)) < 200_000


def test_default_transformer_still_refuses_huge_frames():
    big = pl.DataFrame({"x": range(5001)})
    alt.Chart(pl.DataFrame({"x": range(5000)})).mark_point().encode(x="x").to_dict()
    with pytest.raises(alt.MaxRowsError, match="5001"):
        alt.Chart(big).mark_point().encode(x="x").to_dict()


def test_figure_writes_svg_when_asked(tmp_path, monkeypatch):
    chart = alt.Chart(pl.DataFrame({"x": [1, 2]})).mark_point().encode(x="x:Q")
    monkeypatch.setenv("JALAPENO_FIGURES_DIR", str(tmp_path))
    shown = charts.export(chart, "two-points")
    assert (tmp_path / "two-points.svg").read_text().startswith("<svg")
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


def test_power_bases_explorable_draws_a_precomputed_grid():
    grid = comparison.power_basis_grid(comparison.baseline_summary())
    spec = charts.power_bases_explorable(grid, jalapeno_sustained_w=550.0, jalapeno_allin_w=1225.0).to_dict()
    bind = {p["name"]: p["bind"] for p in spec["params"]}
    assert (bind["knob_jalapeno_sustained_w"]["min"], bind["knob_jalapeno_sustained_w"]["max"],
            bind["knob_jalapeno_sustained_w"]["step"]) == (300.0, 700.0, 25.0)
    # Jalapeño at 1,225 W all-in: 85,448 tok/s/kW x 0.7 kW / 1.225 kW
    at = grid.filter(pl.col("jalapeno_allin_w") == 1225.0)["tok_s_kw"].item()
    assert at == pytest.approx(85_448 * 0.7 / 1.225)
    with pytest.raises(ValueError, match="not on its grid"):
        charts.power_bases_explorable(grid, jalapeno_sustained_w=551.0, jalapeno_allin_w=1225.0)


def test_charts_draw_and_never_run_a_model():
    import jalapeno.charts as module

    assert not {"comparison", "serving", "pareto", "systems", "caveats", "agents"} & set(vars(module))


def test_figure_data_is_every_dataset_the_chart_draws():
    import altair as alt
    import polars as pl

    points = pl.DataFrame({"chip": ["gb200", "jalapeno"], "tok_s_kw": [44960.0, 85448.0]})
    line = pl.DataFrame({"chip": ["gb200"], "limit": [1.0]})
    chart = alt.Chart(points).mark_point().encode(x="chip", y="tok_s_kw") + alt.Chart(line).mark_rule().encode(y="limit")
    data = charts.figure_data(chart.to_dict())
    assert data.height == 3 and set(data["dataset"]) == {1, 2}
    assert data.filter(pl.col("chip") == "jalapeno")["tok_s_kw"].to_list() == [85448.0]
    single = charts.figure_data(alt.Chart(points).mark_point().encode(x="chip").to_dict())
    assert single.columns == ["chip", "tok_s_kw"]


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


def test_frontier_sources_have_the_books_line_styles():
    df = pl.DataFrame({"chip": ["gb200", "gb300", "jalapeno"] * 2, "interactivity_tok_s_user": [10.0, 10, 10, 50, 50, 50],
                       "tok_s_per_kw": [1.0, 2, 3, 0.5, 1, 2],
                       "line": ["gb200, measured", "gb300, transferred", "jalapeno, modeled"] * 2})
    dash = charts.frontiers(df).to_dict()["encoding"]["strokeDash"]
    styles = dict(zip(dash["scale"]["domain"], dash["scale"]["range"]))
    assert styles["measured"] == [1, 0] and styles["transferred"][0] > styles["modeled"][0] > 0  # solid, long, short dashes
    assert dash["legend"]["symbolType"] == "stroke"  # the legend draws the line styles, not three dots
    with pytest.raises(ValueError, match="'guessed' is not one of"):
        charts.frontiers(df.with_columns(pl.lit("gb200, guessed").alias("line")))


def test_roofline_draws_a_chip_with_the_same_line_as_another_on_top_of_it():
    curves = bounds.roofline_curves([specs.chip(c) for c in ("gb200", "mi355x", "jalapeno")], "fp4")
    points = bounds.phase_points(specs.model("gpt-oss-120b"), specs.chip("jalapeno"))
    spec = charts.roofline(curves, points).to_dict()
    drawn = [{r["chip"] for r in spec["datasets"][layer["data"]["name"]]} for layer in spec["layer"][:2]]
    # GB200 and MI355X have the same peak and bandwidth: MI355X dashed over GB200, so both colours show
    assert drawn == [{"gb200", "jalapeno"}, {"mi355x"}]
    assert spec["layer"][1]["mark"]["strokeDash"]


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
