"""The reading-the-numbers chapter module: the published GB200 figures rebuilt from the raw data, the
ratios and power bases worked by hand, the sentences it chooses, and every key and slot the notebook uses."""

import re

import altair as alt
import chapter_sources
import polars as pl
import pytest

import jalapeno as jp
from jalapeno import charts, comparison, measured
from jalapeno.chapters import claims as claims_chapter
from jalapeno.chapters import reading_the_numbers as chapter
from jalapeno.errors import UnknownNameError
from jalapeno.metrics import rounds_to

NAME = "reading-the-numbers"
defaults, ch = chapter_sources.fixtures(NAME, chapter)


def test_every_key_and_slot_the_notebook_uses_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []
    chapter_sources.check_slots(NAME, ch)


def test_figures_keep_their_export_names(ch):
    assert {f.name for f in ch.figures.values()} == {"measured-gpt-oss-120b-gb200-8192-1024",
                                                     "power-bases-gpt-oss-120b-gb200", "headline-ratios",
                                                     "e2e-split-gpt-oss-120b-8192-1024"}


def test_the_seeds_figures_f3_and_f5_worked_by_hand(ch):
    """F3: each printed range and the ratio the published numbers give (85,448 / 44,960 = 1.901 per watt;
    1.80 / 1.03 = 1.748 E2E); F5: each E2E split into decode, (mean OSL - 1) x TBT = 920.5 x 0.69 ms =
    0.6351 s for Jalapeño and 920.5 x 1.87 ms = 1.721 s for GB200, and the rest (1.03 - 0.6351 = 0.3949 s)."""
    ratios = charts.figure_data(charts._stable_spec(ch.figures["headline_ratios"].chart.to_dict()))
    points = ratios.filter(pl.col("drawn as") == "point")
    per_watt = points.filter(pl.col("ratio") == "per-watt throughput, gpt-oss").row(0, named=True)
    assert per_watt["recomputed (x)"] == pytest.approx(85448 / 44960, abs=5e-4)
    assert (per_watt["printed low (x)"], per_watt["printed high (x)"]) == (1.5, 1.9)
    e2e = points.filter(pl.col("ratio") == "E2E latency, gpt-oss").row(0, named=True)
    assert e2e["recomputed (x)"] == pytest.approx(1.80 / 1.03, abs=5e-4) and e2e["printed high (x)"] == 3.6
    assert ratios.height == 2 * 5  # five ratios, each a printed range and a point; the % row restates E2E
    split = charts.figure_data(charts._stable_spec(ch.figures["e2e_split"].chart.to_dict()))
    seconds = {(r["chip"], r["part"].split(":")[0]): r["seconds"] for r in split.iter_rows(named=True)}
    # as the page shows them: the display rule keeps four or five significant digits
    assert seconds[("Jalapeño", "decode")] == pytest.approx(920.5 * 0.69e-3, rel=5e-4)
    assert seconds[("GB200", "decode")] == pytest.approx(920.5 * 1.87e-3, rel=5e-4)
    assert seconds[("Jalapeño", "the rest")] == pytest.approx(1.03 - 920.5 * 0.69e-3, rel=5e-4)


def test_the_published_gb200_figures_are_rebuilt_from_the_raw_points(ch):
    # seed 000: 53,952 tok/s/GPU at concurrency 512 over 1.2 kW = 44,960 tok/s/kW; TBT 1.87 ms, E2E 1.80 s
    assert ch.numbers["run"] == "20786863188" and ch.numbers["peak_conc"] == "512"
    assert ch.numbers["peak_tput"] == "53,952" and ch.numbers["baseline_power_kw"] == "1.2"
    assert rounds_to(ch.values["tok_per_kw"], 44_960, 0)
    assert rounds_to(ch.values["tpot_ms"], 1.87, 2)
    assert rounds_to(ch.values["e2e_s"], 1.80, 2)
    assert rounds_to(ch.values["interactivity"], 535, 0)
    assert ch.numbers["agreement"] == "all four published GB200 numbers are reproduced to their printed rounding"


def test_headline_ratios_worked_by_hand(ch):
    assert ch.values["per_watt_ratio"] == pytest.approx(85_448 / 44_960, abs=5e-4)   # 1.90
    assert ch.values["e2e_ratio"] == pytest.approx(1.80 / 1.03, abs=5e-4)           # 1.75
    assert ch.numbers["tbt_ratio"] == "2.7"                                          # 1.87 / 0.69
    assert ch.numbers["r_watt"] == "1.5–1.9x" and ch.numbers["r_e2e"] == "1.7–3.6x"
    assert ch.numbers["j_tbt_low"] == "0.685"                                        # 0.69 ms printed to 2 decimals


def test_power_bases_worked_by_hand(ch):
    # Jalapeño: 85,448 tok/s/kW x 0.7 kW per chip; GB200: 53,952 tok/s per GPU (printed to the unit: rel 1e-5)
    j_tput, b_tput = 85_448 * 0.7, 53_952
    assert ch.values["ratio_rated"] == pytest.approx((j_tput / 0.7) / (b_tput / 1.2), rel=1e-5)
    assert ch.values["ratio_sustained"] == pytest.approx((j_tput / 0.55) / (b_tput / 1.2), rel=1e-5)   # 2.42
    # all-in, proportional: Jalapeño's TDP scaled by GB200's all-in / TDP (2,100 / 1,200 W) = 1,225 W
    assert ch.values["jw_allin"] == pytest.approx(700 * 2100 / 1200) and ch.values["bw_allin"] == 2100
    assert ch.values["ratio_allin"] == pytest.approx(ch.values["ratio_rated"])


def test_benchmark_lengths_worked_by_hand(ch):
    # lengths drawn uniformly from [floor(0.8 L), L]: (819 + 1,024) / 2 = 921.5 and (6,553 + 8,192) / 2 = 7,372.5
    assert ch.numbers["mean_osl"] == "921.5"
    assert ch.values["prompt_share"] == pytest.approx(100 * 7372.5 / (7372.5 + 921.5))
    # GB200's published E2E and TBT are one operating point: 1.80 s - 1.87 ms x 920.5 = 0.079 s
    assert ch.values["g_ttft"] == pytest.approx(1.80 - 1.87e-3 * 920.5)


def test_claims_counts_add_up(ch):
    counted = sum(ch.values[claims_chapter.key(s)] for s in chapter.STATUSES)
    assert claims_chapter.key("fit-determined") == "n_fit_determined"
    assert ch.values["n_claims"] == len(jp.claims())  # the counts are of every claim of the seeds
    assert counted == ch.values["n_claims"]  # every status is counted, none left out
    # the table shows this chapter's claims only: every claim is listed once, on the claims page
    assert set(ch.tables["claims"]["claim_id"]) == set(jp.claims().filter(pl.col("chapter") == "reading-the-numbers")["claim_id"])


def test_a_changed_baseline_power_is_said_in_words(ch, defaults):
    """At 1,000 W the rated basis divides GB200's 53,952 tok/s by 1 kW: 85,448 / 53,952 = 1.58x; the
    seeds' 1.90x and the all-in basis (InferenceX's all-in power, whatever the first basis) say so."""
    new = chapter.compute(**{**defaults, "baseline_power_w": 1000.0})
    assert new.numbers["tok_per_kw"] == "53,952"                    # 53,952 tok/s over 1.0 kW
    assert new.numbers["agreement"].startswith("3 of the four published GB200 numbers")
    assert new.numbers["ratio_rated"] == "1.58"
    assert new.numbers["per_watt_basis"].endswith("with GB200 at the 1,000 W this build divides it by, 1.58x, next section")
    assert new.numbers["allin_reading"].startswith("against 1.58x on the first basis, which divides the baseline by "
                                                   "the 1,000 W this build gives it")
    assert ch.numbers["per_watt_basis"] == ""
    assert ch.numbers["allin_reading"] == "per-watt ratios survive a change of basis only if both sides change together"


def test_an_unknown_run_is_refused(defaults):
    with pytest.raises(UnknownNameError, match="123"):
        chapter.compute(**{**defaults, "run_id": "123"})
    # before anything runs (jalapeno.publish.scenarios.check_chapter calls the chapter's check): a run of
    # another chip is named with GB200's own runs at 8k/1k
    with pytest.raises(UnknownNameError, match="'20218553330'; valid run ids: 20737128080, 20742072203, "
                                               "20764588467, 20786863188"):
        chapter.check(**{**defaults, "run_id": "20218553330"})


# ---- the chapter's figures ----------------------------------------------------------------------------

def test_chart_embeds_only_its_points():
    pts = measured.points("gpt-oss-120b", "gb200", isl=8192, osl=1024)
    spec = chapter.measured_points(pts, "20786863188").to_dict()
    (values,) = spec["datasets"].values()
    assert len(values) == pts.height
    assert len(charts.to_svg(spec)) < 200_000


def test_power_bases_explorable_draws_a_precomputed_grid():
    grid = comparison.power_basis_grid(comparison.baseline_summary())
    spec = chapter.power_bases_explorable(grid, jalapeno_sustained_w=550.0, jalapeno_allin_w=1225.0).to_dict()
    bind = {p["name"]: p["bind"] for p in spec["params"]}
    assert (bind["knob_jalapeno_sustained_w"]["min"], bind["knob_jalapeno_sustained_w"]["max"],
            bind["knob_jalapeno_sustained_w"]["step"]) == (300.0, 700.0, 25.0)
    # Jalapeño at 1,225 W all-in: 85,448 tok/s/kW x 0.7 kW / 1.225 kW
    at = grid.filter(pl.col("jalapeno_allin_w") == 1225.0)["tok_s_kw"].item()
    assert at == pytest.approx(85_448 * 0.7 / 1.225)
    with pytest.raises(ValueError, match="not on its grid"):
        chapter.power_bases_explorable(grid, jalapeno_sustained_w=551.0, jalapeno_allin_w=1225.0)


def test_the_power_bases_figure_names_its_chips_and_bases_as_a_reader_does():
    """The exported figure's legend says Jalapeño and GB200, not the grid's keys, and the all-in basis
    breaks at its space, not at each hyphen (a walkthrough read "jalapeno" and "all- / in- / proportional")."""
    grid = comparison.power_basis_grid(comparison.baseline_summary())
    alt.theme.enable(charts.THEME)
    chart = chapter.power_bases_explorable(grid, jalapeno_sustained_w=550.0, jalapeno_allin_w=1225.0,
                                           baseline_label="GB200")
    texts = re.findall(r"<t(?:ext|span)[^>]*>([^<]+)</t(?:ext|span)>", charts.to_svg(chart.to_dict()))  # a line each
    assert {"Jalapeño", "GB200", "all-in", "proportional"} <= set(texts)
    assert not {"jalapeno", "baseline", "all-", "in-"} & set(texts)


def test_tables_name_claims_and_chips_in_a_readers_words(ch):
    """Each side of a ratio as the seeds print it (85,448 / 44,960 tok/s/kW, seed 000), each chip by its short
    name, the values Jalapeño is fitted to by value: no claim id or chip key in a cell."""
    r = ch.tables["ratios"]
    assert r["numerator"][0] == "Jalapeño: 85,448 tok/s/kW" and r["denominator"][0] == "GB200: 44,960 tok/s/kW"
    assert r["numerator"][2] == "GB200: 1.87 ms" and r["denominator"][2] == "Jalapeño: 0.69 ms"
    assert r["denominator"][5] is None                     # the % row restates one printed range
    assert ch.tables["e2e"]["chip"].to_list() == ["Jalapeño", "GB200"]
    fitted = ch.tables["e2e_readings"]["jalapeno_fitted_to"].to_list()
    assert fitted[0] == "three: 0.69 ms (gpt-oss-120b), 85,448 tok/s/kW (gpt-oss-120b), 700 tok/s/user (DeepSeek-R1-0528)"
    assert "1.03 s (gpt-oss-120b)" in fitted[1]
    ids = set(jp.claims()["claim_id"])
    cells = r["numerator"].to_list() + r["denominator"].to_list() + fitted
    assert not [c for c in cells if c and any(i in c for i in ids)]


def test_the_first_basis_says_what_the_baseline_is_divided_by(ch, defaults):
    assert ch.numbers["rated_basis"] == "at rated power"  # the default: rated on both sides
    other = chapter.compute(**{**defaults, "baseline_power_w": 1400.0})
    assert other.numbers["rated_basis"] == "at Jalapeño's rated power against the 1,400 W this build divides the baseline by"


def test_the_headline_ratios_legend_shows_each_mark_as_drawn():
    """A merged legend takes one opacity for all its entries: the printed range is a light grey bar at full
    opacity (#333333 at 35 % over white, #b8b8b8), so its swatch and the recomputed point's (#d62728) show
    the marks' own colours, at full opacity (a walkthrough saw the point's swatch pale pink)."""
    alt.theme.enable(charts.THEME)
    svg = charts.to_svg(charts.fit_width(chapter.headline_ratios(comparison.headline_ratio_arithmetic())).to_dict())
    legend = svg[svg.index('role-legend"'):]
    symbols = re.findall(r'role-legend-symbol"[^>]*><path [^>]*fill="([^"]+)"[^>]*opacity="([^"]+)"', legend)
    assert symbols == [("#b8b8b8", "1"), ("#d62728", "1")]


def test_a_baseline_under_another_stack_is_named_apart_from_its_chip(ch, defaults):
    """``b200-trt`` is B200 under TensorRT-LLM, ``b200`` B200 under vLLM: the prose and the tables name them
    apart (B200 (TRT)), and no header shows the key as it is typed (``b200-trt_outside_ms``)."""
    from jalapeno.display import header

    assert [measured.hardware_label(h) for h in ("gb200", "b200", "b200-trt", "mi355x")] == [
        "GB200", "B200", "B200 (TRT)", "MI355X"]
    assert ch.numbers["b_label"] == "GB200"  # the default book's label
    trt = chapter.compute(**{**defaults, "baseline": "b200-trt"})
    assert trt.numbers["b_label"] == "B200 (TRT)"
    other = chapter.compute(**{**defaults, "baseline": "b200-trt", "baseline_power_w": 1000.0})
    assert "with B200 (TRT) at the 1,000 W" in other.numbers["per_watt_basis"]  # every sentence, one label
    assert [header(c) for c in trt.tables["e2e_readings"].columns if c.endswith("_outside_ms")] == [
        "Jalapeño outside (ms)", "B200 TRT outside (ms)"]
    assert [header(c) for c in ch.tables["e2e_readings"].columns if c.endswith("_outside_ms")] == [
        "Jalapeño outside (ms)", "GB200 outside (ms)"]
