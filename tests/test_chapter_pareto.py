"""The Pareto chapter module: the published numbers it quotes, the measured concurrency range and GB200
frontier it rests on, the factor identity of each ratio, the sentences it chooses, its refusals, and every
key and slot the notebook uses."""

import json
import math
import re

import chapter_sources
import polars as pl
import pytest

from jalapeno import measured, pareto
from jalapeno.chapters import pareto as chapter
from jalapeno.data import claim_value
from jalapeno.errors import UnknownNameError

NAME = "pareto"
defaults, ch = chapter_sources.fixtures(NAME, chapter)


def test_every_key_the_prose_quotes_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []


def test_every_slot_the_notebook_shows_is_computed(ch, defaults):
    # the frontier figures are shown one per model (figure(ch, f"frontiers-{m}"))
    chapter_sources.check_slots(NAME, ch, also_shown=[f"frontiers-{m}" for m in defaults["models"]])
    assert {f.name for f in ch.figures.values()} == {"pareto-gpt-oss-120b", "pareto-deepseek-r1", "pareto-kimi-k2-5",
                                                     "pareto-ratio-curves", "pareto-ratio-vs-fastest"}


def test_the_published_ratios_and_points_are_quoted_as_published(ch):
    # seed 000: 53.7x (gpt-oss-120b vs GB200), seed 004: 104.3x (DeepSeek-R1 vs GB300), seed 001: about 56x
    assert (ch.numbers["gpt_pub"], ch.numbers["deepseek_pub"], ch.numbers["kimi_pub"]) == ("53.7", "104.3", "56")
    assert ch.numbers["dsr_pub"] == "104.3"
    # seed 000: TBT 0.69 ms, 85,448 tok/s/kW, E2E 1.03 s; DeepSeek-R1 single user about 700 tok/s
    assert (ch.numbers["tbt_ms"], ch.numbers["peak_kw"], ch.numbers["e2e_pub"], ch.numbers["dsr1_su"]) \
        == ("0.69", "85,448", "1.03", "700")
    assert (ch.numbers["watt_low"], ch.numbers["watt_high"]) == ("1.5", "1.9")
    assert ch.numbers["n_ratios"] == "3"


def test_the_benchmark_concurrency_range_is_the_measured_one(ch):
    # InferenceMAX at 8k/1k: single-node servers swept to 128 concurrent requests on both models (B200,
    # MI355X); the disaggregated GB200 runs to 128 requests per GPU on gpt-oss-120b, 77 on DeepSeek-R1 (2,150
    # on 28 GPUs: the 8,192 on 72 is queue-bound and left out);
    # GB200's peak (53,952 tok/s/GPU) at concurrency 512 on 4 GPUs, i.e. 128 per GPU
    assert (ch.numbers["cap_gpt"], ch.numbers["cap_dsr"], ch.numbers["cap_gpt_disagg"], ch.numbers["cap_dsr_disagg"],
            ch.numbers["gb200_peak_conc"]) == ("128", "128", "128", "77", "128")
    # Jalapeño's modeled frontier is taken over the same range, so its peak cannot lie beyond it
    assert ch.values["j_peak_conc"] <= ch.values["cap_gpt"] * (1 + 1e-9)


def test_the_peak_ratio_on_gpt_oss_is_the_published_one(ch):
    # Jalapeño's peak is fitted to 85,448 tok/s/kW and GB200's measured peak at rated power is 44,960
    # tok/s/kW (53,952 tok/s over 1.2 kW): the two peaks stand at 85,448 / 44,960 = 1.90x
    want = claim_value("gptoss-jalapeno-tok-per-kw") / claim_value("gptoss-gb200-tok-per-kw")
    assert ch.values["gpt_peak_ratio"] == pytest.approx(want, rel=0.01)
    assert ch.numbers["gpt_peak_ratio"] == "1.90"


def test_gb200_steepness_is_its_measured_peak_over_its_fastest_point(ch):
    # from the raw InferenceMAX points, not the frontier code: the highest-interactivity point (least mean
    # TPOT) is always on the envelope
    pts = measured.points("gpt-oss-120b", "gb200", isl=8192, osl=1024)
    fastest = pts.sort(["mean_tpot", "tput_per_gpu"], descending=[False, True]).row(0, named=True)
    assert ch.values["gpt_steep"] == pytest.approx(pts["tput_per_gpu"].max() / fastest["tput_per_gpu"], rel=1e-6)


def test_each_ratio_is_the_product_of_its_three_factors(ch):
    f = ch.tables["factors"]
    assert f.height == 9  # three models x three scenarios
    product = f["jalapeno_retention"] * f["peak_ratio"] * f["baseline_steepness"]
    assert (product / f["ratio"] - 1).abs().max() < 1e-9
    implied = f["implied_retention"] * f["peak_ratio"] * f["baseline_steepness"]
    assert (implied / f["published_ratio"] - 1).abs().max() < 1e-9


def test_the_summary_agrees_with_the_ratios_it_summarises(ch):
    s, r = ch.tables["ratio_summary"], ch.tables["ratios"]
    assert s["model"].to_list() == ["gpt-oss-120b", "deepseek-r1", "kimi-k2.5"]
    lo = r.group_by("model", maintain_order=True).agg(pl.col("ratio").min())["ratio"]
    assert s["ratio_min_over_scenarios"].to_list() == lo.to_list()
    assert ch.numbers["gpt_low"] == f"{lo[0]:.0f}"


def test_each_verdict_is_the_judge_of_the_published_ratio_against_its_band(ch):
    from jalapeno import uncertainty

    b = ch.tables["ratio_bands"]
    assert b["model"].to_list() == ["gpt-oss-120b", "deepseek-r1", "kimi-k2.5"]
    assert b["published_ratio"].to_list() == [53.7, 104.3, 56.0]  # seeds 000, 004, 001
    for row in b.iter_rows(named=True):
        assert row["ratio_low"] <= row["ratio_median"] <= row["ratio_high"]
        inside = row["ratio_low"] <= row["published_ratio"] <= row["ratio_high"]
        assert row["verdict"] == ("agrees" if inside else "disagrees")
        assert row["verdict"] == uncertainty.judge(row["published_ratio"], (row["ratio_low"], row["ratio_high"]))
    assert ch.values["n_agree"] == int((b["verdict"] == "agrees").sum())
    for k in ("k_watt_ok", "k_tbt_ok", "k_e2e_ok", "gpt_verdict", "deepseek_verdict", "kimi_verdict"):
        assert ch.numbers[k] in uncertainty.VERDICTS


def test_the_sensitivity_ranks_every_input_of_every_ratio(ch):
    from jalapeno import uncertainty

    d = ch.tables["drivers"]
    for m in ("gpt-oss-120b", "deepseek-r1", "kimi-k2.5"):
        rows = d.filter(pl.col("model") == m).sort("rank")
        assert sorted(rows["input"].to_list()) == sorted(chapter.INPUT_WORDS[i] for i in uncertainty.INPUTS)  # by name
        assert rows["rank"].to_list() == [1, 2, 3, 4]
        assert rows["total"].is_sorted(descending=True)
        assert ((rows["total"] >= -0.05) & (rows["total"] <= 1.05)).all()


def test_the_gb300_checks_quote_the_public_points(ch):
    # InferenceX: GB300 / GB200 FP4 peak 18,131.6 / 14,952.0 = 1.21; at 116 tok/s/user 100x / 98x = 1.02;
    # GB300 FP4 / FP8 peak 18,131.6 / 8,980.3 = 2.02; MTP / no MTP at 150 tok/s/user about 21x
    assert (ch.numbers["chk_peak_pub"], ch.numbers["chk_116_pub"], ch.numbers["chk_fp8_peak_pub"],
            ch.numbers["chk_mtp_pub"]) == ("1.21", "1.02", "2.02", "21")
    assert ch.tables["gb300_checks"].height == 5


def test_every_named_assumption_set_is_tabled_for_every_model(ch):
    from jalapeno import baselines

    t = ch.tables["assumption_ratios"]
    assert t.height == 3 * len(baselines.ASSUMPTION_SETS)
    dsr = t.filter(pl.col("model") == "deepseek-r1")
    assert set(dsr["assumption_set"]) == set(baselines.ASSUMPTION_SETS)
    # the seeds' 169 tok/s/user (seed 001) is where the "seeds" sets take the ratio
    assert ch.numbers["q_seeds_at"] == "169" and ch.numbers["q_pub"] == "104.3"


def test_scenario_sentences_hand_worked():
    assert chapter.scenarios_text([], 0.15) == "no scenario within ±15 %"
    assert chapter.scenarios_text(["low"], 0.15) == "within ±15 % in the low scenario"
    assert chapter.scenarios_text(["low", "central", "high"], 0.1) == "within ±10 % in the low, central and high scenarios"


def test_the_sentences_follow_the_concurrency_range(ch):
    assert ch.numbers["range_intro"].startswith("Every modeled frontier in this chapter")
    assert ch.numbers["alt_intro"].startswith("The benchmark's concurrency range is one of those assumptions")


@pytest.mark.parametrize("change, error, needle", [
    ({"power_basis": "peak"}, UnknownNameError, "all-in-per-chip"),
    ({"concurrency_cap": "bogus"}, UnknownNameError, "benchmark"),
    ({"models": ["gpt-oss-120b", "deepseek-r1", "llama-3-70b"]}, UnknownNameError, "kimi-k2.5"),
    ({"models": ["gpt-oss-120b", "kimi-k2.5"]}, ValueError, "deepseek-r1"),
    ({"baseline_chips": ["gb400"]}, UnknownNameError, "gb200"),
])
def test_bad_parameters_are_refused_naming_the_choices(defaults, change, error, needle):
    with pytest.raises(error, match=needle):
        chapter.compute(**{**defaults, **change})


def test_fixed_interactivity_reads_every_frontier_at_the_same_speed(ch):
    t = ch.tables["fixed_interactivity"]
    gb200 = t.filter((t["model"] == "gpt-oss-120b") & (t["frontier"] == "gb200, measured")).row(0, named=True)
    # GB200's fastest measured gpt-oss-120b point is 535 tok/s/user (InferenceMAX, reading-the-numbers):
    # 300 is reached, 1,000 is not, and says so in words
    assert gb200["at 300 tok/s/user (tok/s/kW)"] != "not reached"
    assert gb200["at 1,000 tok/s/user (tok/s/kW)"] == "not reached"
    assert all(v for row in t.iter_rows() for v in row)  # no empty cell


# ---- the chapter's figures ----------------------------------------------------------------------------

def test_frontier_sources_have_the_books_line_styles():
    df = pl.DataFrame({"chip": ["gb200", "gb300", "jalapeno"] * 2, "interactivity_tok_s_user": [10.0, 10, 10, 50, 50, 50],
                       "tok_s_per_kw": [1.0, 2, 3, 0.5, 1, 2],
                       "line": ["gb200, measured", "gb300, transferred", "jalapeno, modeled"] * 2})
    dash = chapter.frontiers(df).to_dict()["encoding"]["strokeDash"]
    styles = dict(zip(dash["scale"]["domain"], dash["scale"]["range"]))
    assert styles["measured"] == [1, 0] and styles["transferred"][0] > styles["modeled"][0] > 0  # solid, long, short dashes
    assert dash["legend"]["symbolType"] == "stroke"  # the legend draws the line styles, not three dots
    with pytest.raises(ValueError, match="'guessed' is not one of"):
        chapter.frontiers(df.with_columns(pl.lit("gb200, guessed").alias("line")))


def test_a_readers_runs_are_their_own_line_with_their_envelope_points():
    """In a book built on a reader's runs (jalapeno build --measurements) a frontier `<chip>, your runs` has a
    line style of its own (dash-dot, in the legend only then) and its envelope points drawn as squares, visible
    where the reader's points are the measured envelope too; the default book has no such line."""
    df = pl.DataFrame({"chip": ["gb200"] * 4, "interactivity_tok_s_user": [10.0, 50, 12, 60],
                       "tok_s_per_kw": [1.0, 0.5, 1.2, 0.6], "line": ["gb200, measured"] * 2 + ["gb200, your runs"] * 2})
    spec = chapter.frontiers(df).to_dict()
    dash = spec["layer"][0]["encoding"]["strokeDash"]
    assert dict(zip(dash["scale"]["domain"], dash["scale"]["range"])) == {
        "measured": [1, 0], "transferred": [7, 4], "modeled": [2, 3], "your runs": [10, 3, 2, 3]}
    dots = spec["layer"][1]
    assert dots["mark"]["shape"] == "square" and "your runs" in json.dumps(dots["transform"])
    assert "squares: the envelope points of your runs" in json.dumps(spec["title"])
    default = chapter.frontiers(df.head(2)).to_dict()["encoding"]["strokeDash"]["scale"]["domain"]
    assert default == ["measured", "transferred", "modeled"]
    assert pareto.reader_frontier("gpt-oss-120b", "gb200") is None  # no reader's row in the shipped data


def test_every_frontier_that_is_not_measured_draws_its_band(ch):
    """The frontier figures shade each modeled or transferred frontier's 80 % band (the columns of
    pareto.with_band, scheme (c) for Jalapeño), none under a measured one, and name the scheme."""
    from jalapeno import calibration, pareto, schemes, subject
    fits = {"central": subject.fit_jalapeno("central")}
    lines = chapter.frontier_lines(["gpt-oss-120b"], ["gb200", "gb300"], fits, isl=8192, osl=1024,
                                   baseline_max_chips=8, concurrency_cap="benchmark")
    by = {line: g for (line,), g in lines.group_by("line")}
    assert by["gb200, measured"]["tok_s_per_kw_low"].null_count() == by["gb200, measured"].height
    j = by["jalapeno, modeled"].filter(pl.col("power_basis") == "rated")
    assert j["band_scheme"].unique().to_list() == [schemes.SCHEMES["anchored"].label]
    w = calibration.scheme_half_width("anchored")
    assert (j["tok_s_per_kw_high"] / j["tok_s_per_kw"]).to_numpy() == pytest.approx(math.exp(w))
    assert (j["tok_s_per_kw"] / j["tok_s_per_kw_low"]).to_numpy() == pytest.approx(math.exp(w))
    front = pareto.with_band(subject.jalapeno_frontier("gpt-oss-120b", "central", fit=fits["central"]), "anchored")
    assert j["tok_s_per_kw_high"].max() == pytest.approx(front["tok_s_per_kw_high"].max())
    assert by["gb300, transferred"]["band_scheme"].unique().to_list() == [schemes.SCHEMES["generation"].label]
    spec = chapter.frontiers(lines.filter(pl.col("power_basis") == "rated")).to_dict()
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]]
    assert marks == ["area", "line"]  # the band under the line
    subtitle = spec["title"]["subtitle"]  # wrapped to the column: a list of lines
    assert schemes.SCHEMES["anchored"].label in " ".join([subtitle] if isinstance(subtitle, str) else subtitle)
    for m in ("gpt-oss-120b", "deepseek-r1", "kimi-k2.5"):
        assert [layer["mark"]["type"] for layer in ch.figures[f"frontiers-{m}"].chart.to_dict()["layer"]][0] == "area"


def test_the_prose_counts_jalapenos_points_beyond_every_recipe(ch):
    """Jalapeño has no recipe: its frontier takes the grid rule, and the prose counts the points of its central
    gpt-oss-120b 8k/1k frontier that no measured chip's gpt-oss-120b recipe ran (issue 25): at most all of
    them, and the one at a single request is among them (the benchmark's sweeps start at 4)."""
    from jalapeno import subject
    f = subject.jalapeno_frontier("gpt-oss-120b", "central")
    assert ch.values["j_points"] == f.height
    assert ch.values["j_beyond"] == int((~f["within_recipes"]).sum()) <= f.height
    assert not f.filter(f["concurrency"] == 1)["within_recipes"].any()


def test_the_tolerance_criterion_is_counted_beside_the_bands(ch):
    """The prose says how many ratios meet each criterion: within ±tolerance in the central scenario (a
    description) and inside their bands (the verdicts)."""
    central = ch.tables["ratios"].filter(pl.col("scenario") == "central")
    assert ch.values["n_close_central"] == int((central["deviation"].abs() <= 0.15).sum())
    assert ch.values["n_agree"] == int((ch.tables["ratio_bands"]["verdict"] == "agrees").sum())
    assert ch.numbers["tolerance_pct"] == "15"


def _markdown_cells() -> list[tuple[int, str, list[dict]]]:
    from jalapeno.publish import scenarios
    cells = json.loads(scenarios.notebook_path(NAME).read_text())["cells"]
    return [(i, "".join(c["source"]), cells) for i, c in enumerate(cells) if c["cell_type"] == "markdown"]


def test_the_takeaways_come_first_and_answer_the_three_ratios(ch):
    first = _markdown_cells()[0][1]
    assert ":::{admonition} Takeaways\n:class: tip\n" in first and first.index("Takeaways") < first.index("This chapter")
    box = first[first.index(":::{admonition}"):first.index(":::\n", first.index(":class:"))]
    bullets = [line for line in box.splitlines() if line.startswith("- ")]
    assert 3 <= len(bullets) <= 4
    keys = set(re.findall(r"\{glue:md\}`([^`]+)`", box))
    # what 53.7x, 104.3x and 56x measure, each against its band, the MTP condition, the steepness
    assert {"gpt_pub", "deepseek_pub", "kimi_pub", "gpt_band", "deepseek_band", "kimi_band", "q_mtp_seeds",
            "q_mtp_seeds_verdict", "gpt_steep", "ratio_end"} <= keys
    names = r"\{glue:md\}`[^`]+`|gpt-oss-120b|DeepSeek-R1|Kimi K2\.5|GB\d00|FP4"
    assert not re.search(r"\d", re.sub(names, "", box))  # no number typed by hand
    # the central scenario's values the bullets quote (0.9.0): 53.7x in 114x (37x-363x), MTP at 169 tok/s/user
    # disagrees with 104.3x
    assert (ch.numbers["gpt_band"], ch.numbers["q_mtp_seeds_verdict"]) == ("114x (37x–363x)", "disagrees")


def test_a_sentence_ending_in_a_colon_is_followed_by_what_it_introduces():
    for i, text, cells in _markdown_cells():
        if text.rstrip().endswith(":"):
            assert cells[i + 1]["cell_type"] == "code" and ("table(" in "".join(cells[i + 1]["source"])
                                                           or "figure(" in "".join(cells[i + 1]["source"])), text[-80:]


def test_the_prose_names_no_package_internals(ch):
    prose = "\n".join(text for _, text, _ in _markdown_cells())
    quoted = {k: ch.numbers[k] for k in re.findall(r"\{glue:md\}`([^`]+)`", prose)}
    for where, text in [("prose", prose), *quoted.items()]:
        assert not re.search(r"`jalapeno\.|jalapeno\.[a-z_]+\.[A-Za-z_]", text), where
    # the E2E sentence in reader words, next to the one published under fit_e2e (kept as it was)
    assert ch.numbers["e2e_check"].startswith("The published E2E (1.03 s) is not fitted")
    assert "jalapeno.subject" in ch.numbers["fit_e2e"] and "jalapeno." not in ch.numbers["e2e_check"]


# ---- the published operating points on the frontier figures (seeds' figure f1) ------------------------

def test_the_published_points_are_the_seeds_numbers_each_with_one_coordinate():
    from jalapeno import pareto
    # seed 000: Jalapeño 85,448 vs GB200 44,960 tok/s/kW at rated TDP; single user 1,459 vs 535 tok/s
    # (1 / 0.69 ms and 1 / 1.87 ms, as seed 000 prints them); seeds 001/004: DeepSeek-R1 about 700 tok/s
    # against the comparison system's about 169; Kimi K2.5: ratios only
    want = {"gpt-oss-120b": {("jalapeno", None, 85448.0), ("jalapeno", 1459.0, None), ("gb200", None, 44960.0),
                             ("gb200", 535.0, None)},
            "deepseek-r1": {("jalapeno", 700.0, None), ("gb300", 169.0, None)}, "kimi-k2.5": set()}
    for m, points in want.items():
        p = pareto.published_points(m)
        assert set(p.select("chip", "interactivity_tok_s_user", "tok_s_per_kw").iter_rows()) == points, m
        # a per-kW point is at the basis it was published on; a speed has none
        assert (p["power_basis"].is_null() == p["tok_s_per_kw"].is_null()).all()
        assert set(p["power_basis"].drop_nulls()) <= {"rated"}
    assert pareto.published_points("deepseek-r1").filter(pl.col("chip") == "gb300")["seeds"].item() == "seed 001"
    with pytest.raises(UnknownNameError, match="gpt-oss-120b"):
        pareto.published_points("llama-3-70b")


def _published_rows(ch, model: str) -> list[dict]:
    spec = ch.figures[f"frontiers-{model}"].chart.to_dict()
    (rows,) = spec["datasets"].values()  # one dataset: the figure's CSV keeps its columns (test_build)
    return [r for r in rows if r.get("published") == chapter.PUBLISHED_LABEL]


def test_the_frontier_figures_mark_the_published_points_after_their_frontiers(ch):
    for m, want in (("gpt-oss-120b", {("jalapeno", None, 85448), ("jalapeno", 1459, None), ("gb200", None, 44960),
                                      ("gb200", 535, None)}),
                    ("deepseek-r1", {("jalapeno", 700, None), ("gb300", 169, None)}), ("kimi-k2.5", set())):
        got = {(r["chip"], r["interactivity_tok_s_user"], r["tok_s_per_kw"]) for r in _published_rows(ch, m)}
        assert {(c, x and round(x), y and round(y)) for c, x, y in got} == want, m
        spec = ch.figures[f"frontiers-{m}"].chart.to_dict()
        marks = [layer["mark"]["type"] for layer in spec["layer"]]
        # the band and the line first, as before; then a line and a diamond per coordinate
        assert marks == (["area", "line", "rule", "point", "rule", "point"] if want else ["area", "line"]), m
        assert [p["name"] for p in spec["params"]] == ["knob_power_basis", "knob_scenario"]
        if want:  # the frontier line leaves the published rows out; the diamonds carry the legend entry
            assert "!isValid(datum.published)" in json.dumps(spec["layer"][1]["transform"])
            assert spec["layer"][3]["encoding"]["shape"]["scale"]["domain"] == [chapter.PUBLISHED_LABEL]
    # a published throughput per kW is drawn at rated power only; a speed under every basis
    rows = _published_rows(ch, "gpt-oss-120b")
    assert {r["power_basis"] for r in rows if r["tok_s_per_kw"]} == {"rated"}
    assert all(r["power_basis"] is None for r in rows if r["interactivity_tok_s_user"])
    from jalapeno import charts
    header = charts.figure_csv(ch.figures["frontiers-gpt-oss-120b"].chart.to_dict()).splitlines()[0]
    assert header.startswith("chip,model,interactivity (tok/s/user),throughput per kW") and "tok_s" not in header
    assert ch.numbers["pub_marked"].startswith("The figures of gpt-oss-120b and DeepSeek-R1 mark")
    # GB200's measured gpt-oss-120b frontier ends within 1 % of its published marks (53,952 tok/s/GPU on 1.2 kW)
    assert ch.values["meas_gb200_kw"] == pytest.approx(44960, rel=0.01)
    assert ch.values["meas_gb200_su"] == pytest.approx(535, rel=0.01)


def test_another_workload_marks_no_published_point():
    from jalapeno.chapters import Chapter
    assert chapter.published_marks(["gpt-oss-120b", "deepseek-r1"], ["gb200", "gb300"], isl=8192, osl=1024).height == 6
    assert chapter.published_marks(["gpt-oss-120b"], ["gb300"], isl=8192, osl=1024)["chip"].to_list() == ["jalapeno"] * 2
    none = chapter.published_marks(["gpt-oss-120b", "deepseek-r1"], ["gb200", "gb300"], isl=4096, osl=1024)
    assert none.is_empty()
    c = Chapter()
    chapter._published_quotes(c, none, ["gpt-oss-120b", "deepseek-r1"], isl=4096, osl=1024)
    assert c.numbers["pub_marked"] == ("This build draws its frontiers at 4,096/1,024 tokens, so no figure marks the "
                                       "operating points OpenAI published, all at 8,192/1,024 tokens")
    df = pl.DataFrame({"chip": ["gb200", "gb200"], "interactivity_tok_s_user": [10.0, 50], "tok_s_per_kw": [2.0, 1],
                       "line": ["gb200, measured"] * 2})
    assert chapter.frontiers(df, published=none).to_dict()["mark"]["type"] == "line"  # nothing to mark: one view


def test_the_gb300_checks_quote_the_interactivity_each_is_taken_at(ch):
    # InferenceX (data/gb300_points.csv): GB300 and GB200 FP4 against H100 at 116 tok/s/user; GB300 FP4 with
    # MTP against without at 150 tok/s/user, 21x
    assert (ch.numbers["chk_116_at"], ch.numbers["chk_mtp_at"], ch.numbers["chk_mtp_pub"]) == ("116", "150", "21")
