"""The public GB300 points as transcribed, the checks' arithmetic, and the matched ratio under named
baseline assumptions, on hand-worked cases (never the model's current output)."""

import math

import numpy as np
import polars as pl
import pytest

import jalapeno as jp
from jalapeno import baselines, data, measured, pareto, subject
from jalapeno.baselines import BaselineAssumptions

# ---- the transcription ----------------------------------------------------------------------------------

# The numbers as printed by the sources (best-gpu-for-dsr1-inference.mdx, table "GPU Comparison" and
# section "FP4 vs FP8"; inferencex-v2-nvidia-blackwell-vs-amd-vs-hopper.mdx), with the unit of their last
# printed digit: the file must hold each within half of it.
PRINTED = [
    ("gb300-fp4-peak", "throughput_tok_s_gpu", 18131.6, 0.1), ("gb300-fp4-peak", "median_ttft_ms", 3358.3, 0.1),
    ("gb300-fp4-peak", "median_tpot_ms", 33.6, 0.1), ("gb300-fp4-peak", "concurrency", 2253, 1),
    ("gb200-fp4-peak", "throughput_tok_s_gpu", 14952.0, 0.1), ("gb200-fp4-peak", "median_ttft_ms", 2298.3, 0.1),
    ("gb200-fp4-peak", "median_tpot_ms", 36.9, 0.1), ("gb200-fp4-peak", "concurrency", 4301, 1),
    ("gb300-fp8-peak", "throughput_tok_s_gpu", 8980.3, 0.1), ("gb300-fp8-peak", "median_tpot_ms", 52.9, 0.1),
    ("gb200-fp4-vs-h100-at-116", "ratio_x", 98, 1), ("gb300-fp4-vs-h100-at-116", "ratio_x", 100, 1),
    ("gb200-fp4-vs-h100-at-116", "at_interactivity_tok_s_user", 116, 1),
    ("gb300-fp8-vs-h100", "ratio_x", 65, 1), ("gb300-fp4-mtp-vs-none-at-150", "ratio_x", 21, 1),
    ("gb300-fp4-mtp-vs-none-at-150", "at_interactivity_tok_s_user", 150, 1),
]


@pytest.mark.parametrize("point, column, printed, unit", PRINTED)
def test_each_transcribed_value_is_the_printed_one_within_its_last_digit(point, column, printed, unit):
    assert abs(data.gb300_point(point)[column] - printed) <= unit / 2


def p(point, column):
    return data.gb300_point(point)[column]


@pytest.mark.parametrize("got, stated, decimals", [
    # GB300 / GB200 at the FP4 peak, "about 1.21" (18,131.6 / 14,952.0)
    (lambda: p("gb300-fp4-peak", "throughput_tok_s_gpu") / p("gb200-fp4-peak", "throughput_tok_s_gpu"), 1.21, 2),
    # GB300 FP4 over FP8 at the peak, 2.02 (18,131.6 / 8,980.3; the blog: "roughly doubles")
    (lambda: p("gb300-fp4-peak", "throughput_tok_s_gpu") / p("gb300-fp8-peak", "throughput_tok_s_gpu"), 2.02, 2),
    # GB300 / GB200 at 116 tok/s/user, about 1.02 (100x / 98x over one H100 baseline)
    (lambda: p("gb300-fp4-vs-h100-at-116", "ratio_x") / p("gb200-fp4-vs-h100-at-116", "ratio_x"), 1.02, 2),
    # GB300 FP4 over FP8 at 116 tok/s/user, about 1.5 (100x / 65x)
    (lambda: p("gb300-fp4-vs-h100-at-116", "ratio_x") / p("gb300-fp8-vs-h100", "ratio_x"), 1.5, 1),
    # interactivity of the GB300 peak, 1000 / 33.6 ms = 29.8 tok/s/user
    (lambda: p("gb300-fp4-peak", "interactivity_tok_s_user"), 29.8, 1),
])
def test_the_ratios_the_sources_state_follow_from_the_transcribed_numbers(got, stated, decimals):
    assert round(got(), decimals) == pytest.approx(stated)


def test_the_mtp_price_ratio_is_the_articles_own_arithmetic():
    # "$2.35 ... to approximately $0.11. This is a ~21x price decrease"
    assert round(2.35 / 0.11) == p("gb300-fp4-mtp-vs-none-at-150", "ratio_x")


def test_every_public_point_carries_a_source_with_a_commit_and_a_confidence():
    df = data.gb300_points()
    assert df.height >= 7
    assert df["source"].str.contains(r"@[0-9a-f]{40}").all()
    assert df["confidence"].is_in(["high", "medium", "low"]).all()
    assert (df["tpot_s"].drop_nulls() < 0.1).all()  # SI: seconds


@pytest.mark.parametrize("old, new, column, fragment", [
    (",33.6,,,,2026-02-03", ",0.0336,,,,2026-02-03", "median_tpot_ms", "outside the plausible range"),
    ("gb300-fp4-peak,point,gb300,", "gb300-fp4-peak,point,gb301,", "chip", "chip not in chips.csv"),
    (",,98,H100", ",,,H100", "ratio_x", "a ratio row needs a value here"),
    (",2026-02-03,", ",03/02/2026,", "date_measured", "not a date YYYY-MM-DD"),
])
def test_a_bad_public_point_is_refused_with_file_line_and_column(edit_data, old, new, column, fragment):
    edit_data("gb300_points.csv", old, new)
    with pytest.raises(jp.DataError, match=rf"gb300_points\.csv: line \d+, column '{column}'") as err:
        data.gb300_points()
    assert fragment in str(err.value)


def test_an_unknown_public_point_lists_the_valid_ones():
    with pytest.raises(jp.UnknownNameError, match="gb300-fp4-peak"):
        data.gb300_point("gb300-peak")


# ---- the checks' arithmetic on hand-worked frontiers -------------------------------------------------------

def line(*xy):
    xs, ys = zip(*xy)
    return pl.DataFrame({"interactivity_tok_s_user": [float(x) for x in xs],
                         "throughput_tok_s_chip": [float(y) for y in ys]})


def test_each_check_divides_what_it_says_on_a_hand_worked_case():
    lines = {("gb300", "fp4", "none"): line((10, 2000), (100, 400), (200, 100)),
             ("gb200", "fp4", "none"): line((10, 1600), (100, 400), (200, 80)),
             ("gb300", "fp8", "none"): line((10, 1000), (80, 300)),
             ("gb300", "fp4", "mtp"): line((10, 2100), (300, 500))}
    t = {r["check"]: r for r in baselines.check_table(lines, data.gb300_points()).iter_rows(named=True)}
    peak, at116, fp8peak, fp8at116, mtp = (t[c[0]] for c in baselines.CHECKS)
    # public values: the transcribed numbers divided
    assert peak["public_value"] == pytest.approx(18131.6 / 14952.0)
    assert at116["public_value"] == pytest.approx(100 / 98)
    assert fp8peak["public_value"] == pytest.approx(18131.6 / 8980.3)
    assert fp8at116["public_value"] == pytest.approx(100 / 65)
    assert mtp["public_value"] == pytest.approx(21)
    # modeled: peaks 2000 / 1600 and 2000 / 1000
    assert peak["modeled_value"] == pytest.approx(1.25) and peak["at_interactivity_tok_s_user"] is None
    assert fp8peak["modeled_value"] == pytest.approx(2.0)
    # at 116 tok/s/user, log-log between 100 and 200: GB300 400 x 1.16^-2, GB200 400 x 1.16^(ln 0.2 / ln 2)
    assert at116["modeled_value"] == pytest.approx(1.16 ** -2 / 1.16 ** (math.log(0.2) / math.log(2)))
    assert at116["ratio_modeled_over_public"] == pytest.approx(at116["modeled_value"] / (100 / 98))
    # FP8 ends at 80 tok/s/user, before 116: no modeled value, and the note says why
    assert math.isnan(fp8at116["modeled_value"]) and "ends at 80 tok/s/user" in fp8at116["note"]
    # MTP at 150: 2100 x 15^(ln(500/2100) / ln 30) over 400 x 1.5^-2
    want = 2100 * 15 ** (math.log(500 / 2100) / math.log(30)) / (400 * 1.5 ** -2)
    assert mtp["modeled_value"] == pytest.approx(want)


def test_a_missing_line_gives_no_modeled_value_and_says_which():
    t = baselines.check_table({}, data.gb300_points())
    assert t["modeled_value"].is_nan().all()
    assert t["note"].str.starts_with("no frontier for GB300 FP4 ").all()  # each line as a reader names it
    assert t["note"][-1] == "no frontier for GB300 FP4 with MTP, GB300 FP4 without MTP"


def test_the_gb300_checks_compare_the_books_baselines_with_the_transcription():
    t = baselines.gb300_checks()
    assert t.height == len(baselines.CHECKS)
    assert t["public_value"][0] == pytest.approx(18131.6 / 14952.0)
    assert "(transferred)" in t["modeled_from"][0] and "(measured)" in t["modeled_from"][0]
    ok = t.filter(pl.col("modeled_value").is_not_nan())
    assert (ok["ratio_modeled_over_public"] == ok["modeled_value"] / ok["public_value"]).all()
    with pytest.raises(jp.UnknownNameError, match="none, mtp"):
        baselines.gb300_checks(spec_decoding="eagle")


# ---- the ratio on a hand-worked frontier pair ---------------------------------------------------------------

OLD = pl.DataFrame({"interactivity_tok_s_user": [10.0, 50.0, 100.0], "tok_s_per_kw": [1000.0, 400.0, 100.0]})
NEW = pl.DataFrame({"interactivity_tok_s_user": [10.0, 1000.0], "tok_s_per_kw": [5000.0, 5000.0]})


def test_the_final_slope_is_the_last_segments_elasticity():
    assert baselines.final_slope(OLD) == pytest.approx(math.log(100 / 400) / math.log(100 / 50))  # -2
    with pytest.raises(ValueError, match="at least two"):
        baselines.final_slope(OLD.head(1))


def test_the_ratio_at_the_end_inside_and_beyond_a_frontier():
    end = baselines.ratio_at(NEW, OLD, 100.0)
    assert end["ratio"] == pytest.approx(5000 / 100) and end["extrapolated"] == 0.0
    assert end["ratio"] == pytest.approx(pareto.matched_ratio(NEW, OLD)["ratio"])  # the published construction
    inside = baselines.ratio_at(NEW, OLD, 75.0)  # 400 x 1.5^-2 = 177.8 tok/s/kW
    assert inside["ratio"] == pytest.approx(5000 / (400 * 1.5 ** -2))
    beyond = baselines.ratio_at(NEW, OLD, 200.0)  # 100 x 2^-2 = 25 tok/s/kW, slope continued
    assert beyond["old"] == pytest.approx(25.0) and beyond["ratio"] == pytest.approx(200.0)
    assert beyond["extrapolated"] == 1.0


def test_the_ratio_curve_and_the_endpoint_a_ratio_implies():
    curve = baselines.ratio_curve(NEW, OLD, [50.0, 100.0, 200.0])
    assert curve["ratio"].to_list() == pytest.approx([12.5, 50.0, 200.0])
    assert curve["extrapolated"].to_list() == [False, False, True]
    assert baselines.implied_fastest(NEW, OLD, 200.0) == pytest.approx(200.0, rel=1e-6)
    assert baselines.implied_fastest(NEW, OLD, 50.0) == pytest.approx(100.0, rel=1e-6)
    assert math.isnan(baselines.implied_fastest(NEW, OLD, 1e9))


# ---- named assumptions --------------------------------------------------------------------------------------

def test_assumptions_refuse_bad_values_naming_the_valid_ones():
    with pytest.raises(jp.UnknownNameError, match="fp4, fp8"):
        BaselineAssumptions(precision="int4")
    with pytest.raises(jp.UnknownNameError, match="none, mtp"):
        BaselineAssumptions(spec_decoding="eagle")
    with pytest.raises(jp.UnknownNameError, match="end, seeds"):
        BaselineAssumptions(fastest_point="fastest")
    for bad in (0, -5.0, float("nan"), True):
        with pytest.raises(ValueError, match="positive number"):
            BaselineAssumptions(fastest_point=bad)
    with pytest.raises(jp.UnknownNameError, match="benchmark FP4 endpoint"):
        baselines.ratios_by_assumption(["deepseek-r1"], ["FP2 only"])


def test_the_named_sets_cover_precision_mtp_and_fastest_point_each_with_a_basis():
    t = baselines.assumption_sets()
    assert {"benchmark FP4 endpoint", "FP8 only", "MTP", "seeds' single-user speed, final slope extended"} <= set(
        t["assumption_set"])
    assert (t["basis"].str.len_chars() > 40).all()
    assert set(t["precision"]) == {"fp4", "fp8"} and set(t["spec_decoding"]) == {"none", "mtp"}
    assert set(t["fastest_point"]) == {"end", "seeds"}


def test_the_seeds_fastest_point_is_the_published_single_user_speed():
    front = OLD
    assert baselines.fastest_interactivity("deepseek-r1", front, "seeds' single-user speed, final slope extended") == 169
    assert baselines.fastest_interactivity("gpt-oss-120b", front, BaselineAssumptions(fastest_point="seeds")) == \
        data.claim_value("gptoss-gb200-single-user")
    assert math.isnan(baselines.fastest_interactivity("kimi-k2.5", front, BaselineAssumptions(fastest_point="seeds")))
    assert baselines.fastest_interactivity("deepseek-r1", front, "benchmark FP4 endpoint") == 100.0
    assert baselines.fastest_interactivity("deepseek-r1", front, BaselineAssumptions(fastest_point=140)) == 140.0


def test_a_baseline_keeps_only_the_points_of_its_precision_and_speculative_decoding():
    for precision, spec in (("fp8", "none"), ("fp4", "mtp")):
        got = baselines.baseline_under("deepseek-r1", BaselineAssumptions(precision, spec), chip="gb200")
        pts = measured.points("deepseek-r1", "gb200", isl=8192, osl=1024, spec_decoding=spec).filter(
            pl.col("precision") == precision)
        assert got["source"][0] == "measured"
        assert got["interactivity_tok_s_user"].max() == pytest.approx((1 / pts["mean_tpot"]).max())
        assert got["throughput_tok_s_chip"].max() == pytest.approx(pts["tput_per_gpu"].max())
    assert baselines.baseline_under("gpt-oss-120b", "FP8 only") is None  # GB200 ran gpt-oss-120b in FP4 only
    with pytest.raises(jp.UnknownNameError):
        baselines.baseline_under("deepseek-r1", "MTP", chip="gb999")


def test_transferring_the_mtp_frontier_onto_its_own_chip_changes_nothing():
    got = pareto.transferred_frontier("deepseek-r1", "gb200", source_model="deepseek-r1", source_chip="gb200",
                                      precision="fp4", spec_decoding="mtp")
    want = pareto.measured_frontier("deepseek-r1", "gb200", precision="fp4", spec_decoding="mtp")
    assert np.allclose(np.sort(got["interactivity_tok_s_user"].to_numpy()), np.sort(want["interactivity_tok_s_user"].to_numpy()))
    assert np.allclose(np.sort(got["throughput_tok_s_chip"].to_numpy()), np.sort(want["throughput_tok_s_chip"].to_numpy()))


def test_the_benchmark_endpoint_ratio_is_the_pareto_chapters_matched_ratio():
    # the book's DeepSeek-R1 baseline (every precision, no MTP) ends at an FP4 point, so the named FP4
    # endpoint must give the ratio the Pareto chapter computes, through its own construction
    book = subject.ratio_table(["deepseek-r1"]).filter(pl.col("scenario") == "central")["ratio"][0]
    t = baselines.ratios_by_assumption(["deepseek-r1"], ["benchmark FP4 endpoint"])
    assert t["ratio"][0] == pytest.approx(book, rel=1e-9)
    assert t["published_ratio"][0] == data.claim_value("dsr1-matched-tbt-ratio")
    assert t["reproduces"][0] == (abs(t["ratio"][0] / t["published_ratio"][0] - 1) <= baselines.DEFAULT_TOLERANCE)


def test_a_set_that_does_not_apply_gives_no_ratio():
    t = baselines.ratios_by_assumption(["kimi-k2.5"], ["seeds' single-user speed, final slope extended"])
    assert math.isnan(t["ratio"][0]) and not t["reproduces"][0]


def test_the_ratio_against_the_fastest_point_rises_past_the_baselines_end():
    c = baselines.ratio_against_fastest("deepseek-r1", [120.0, 200.0], lines=[("fp4", "none")])
    assert c["extrapolated"].to_list() == [False, True]
    assert c["ratio"][1] > c["ratio"][0]
    assert (c["ratio"] == c["jalapeno_tok_s_kw"] / c["baseline_tok_s_kw"]).all()
