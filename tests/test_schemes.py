"""The validation schemes of issue 24 (jalapeno.schemes): each scores every series it should on the default
prediction path, with nothing read from the held-out rows; the one statistic and the coverage of a band on
hand-worked cases; scheme (b) against the ceilings the chapter claims today."""

import math

import numpy as np
import polars as pl
import pytest
from scipy.stats import beta, norm

from jalapeno import calibration, derived, schemes, specs, subject, uncertainty


@pytest.fixture(scope="module")
def configs():
    return calibration.configurations()


@pytest.fixture(scope="module")
def errors():
    return schemes.scheme_errors()


# ---- the statistic and the coverage, on hand-worked cases ------------------------------------------------

def test_frontier_error_on_a_hand_worked_case():
    """Four series at 10 %, 20 %, 50 % and 100 %: the median of ln(1 + d) is the mean of ln 1.2 and ln 1.5,
    i.e. sqrt(1.2 x 1.5) - 1 = 34.2 %; the 90th percentile lies 0.7 of the way from ln 1.5 to ln 2 (numpy's
    linear rule: position 0.9 x 3 = 2.7), i.e. 1.5**0.3 x 2**0.7 - 1 = 83.5 %. The order of the series and
    the number of points each has do not matter: a table's rows are series."""
    e = calibration.frontier_error([0.5, 0.1, 1.0, 0.2])
    assert e.median == pytest.approx(math.sqrt(1.2 * 1.5) - 1, rel=1e-12)
    assert e.p90 == pytest.approx(1.5 ** 0.3 * 2 ** 0.7 - 1, rel=1e-12)
    assert e.n_series == 4
    table = pl.DataFrame({"frontier_distance": [0.1, 0.2, 0.5, 1.0], "points": [1, 50, 3, 7]})
    assert calibration.frontier_error(table) == e
    for bad in ([], [0.1, -0.2], [float("nan")]):
        with pytest.raises(ValueError, match="frontier distances"):
            calibration.frontier_error(bad)


def test_the_band_half_width_reads_the_statistic_as_half_normal():
    """A median log distance of Phi^-1(0.75) with a p90 below Phi^-1(0.95) is sigma = 1: the 80 % band is
    Phi^-1(0.9) = 1.2816 wide each way; a p90 of 2 Phi^-1(0.95) makes sigma = 2 (the tail wins)."""
    centre = calibration.FrontierError(math.expm1(norm.ppf(0.75)), math.expm1(norm.ppf(0.95)), 3)
    assert calibration.band_half_width(centre) == pytest.approx(1.2815515655446004, rel=1e-12)
    tail = calibration.FrontierError(math.expm1(norm.ppf(0.75)), math.expm1(2 * norm.ppf(0.95)), 3)
    assert calibration.band_half_width(tail) == pytest.approx(2 * 1.2815515655446004, rel=1e-12)
    with pytest.raises(ValueError, match="level"):
        calibration.band_half_width(centre, level=1.0)


def test_coverage_on_a_hand_worked_case():
    """Three folds of one series each. Fold A's series is far off (log distance 3), B's and C's at
    Phi^-1(0.75) = 0.6745 (so their sigma alone is 1).

    - A is tested with the width of B and C: sigma = 1, half-width Phi^-1(0.9) = 1.2816: of A's points at
      1.0 and 2.0, one is inside.
    - B (and likewise C) with the width of A and C: the log distances 0.6745 and 3 have median 1.8373
      (sigma 1.8373 / 0.6745 = 2.724) and p90 0.6745 + 0.9 x 2.3255 = 2.7675 (sigma 1.683): half-width
      1.2816 x 2.724 = 3.491, so B's point at 3.0 and C's at 3.0 are inside.

    3 of 4 points; the 90 % Clopper-Pearson interval is Beta(0.05; 3, 2) to Beta(0.95; 4, 1). A width
    chosen with every fold (sigma 1.541 from the p90, half-width 1.975) would hold 1 of the 4."""
    q = norm.ppf(0.75)
    table = pl.DataFrame({"fold": ["A", "B", "C"], "frontier_distance": [math.expm1(3.0), math.expm1(q), math.expm1(q)],
                          "point_distances": [[1.0, 2.0], [3.0], [3.0]]})
    c = calibration.coverage(table)
    assert (c.inside, c.points, c.series, c.folds) == (3, 4, 3, 3)
    assert c.share == 0.75
    assert c.low == pytest.approx(beta.ppf(0.05, 3, 2), rel=1e-9)
    assert c.high == pytest.approx(beta.ppf(0.95, 4, 1), rel=1e-9)
    with pytest.raises(ValueError, match="two folds"):
        calibration.coverage(table.filter(pl.col("fold") == "A"))


# ---- the default path, with nothing from the held-out rows ------------------------------------------------

def test_the_defaults_read_only_the_training_rows(configs):
    """Without H100's rows H100 takes the stacks of the other NVIDIA chips in them; without the 1k/1k
    shape, a disaggregated gpt-oss-120b 1k/1k frontier takes the 8k/1k cap (GB200's 512 requests on 4
    GPUs = 128 per chip) instead of 1k/1k's 853; without any AMD chip MI355X has no stack of its vendor and
    takes the fallback at the median overhead of the training stacks."""
    no_h100 = configs.filter(pl.col("chip") != "h100")
    assert calibration.chip_stacks("h100") == ("vllm",)
    assert calibration.chip_stacks("h100", no_h100) == ("dynamo-sglang", "dynamo-trt", "sglang", "trt", "vllm")
    assert calibration.benchmark_concurrency_cap("gpt-oss-120b", isl=1024, osl=1024, disagg=True) == pytest.approx(2560 / 3)
    long_only = configs.filter(pl.col("isl") == 8192)
    assert calibration.benchmark_concurrency_cap("gpt-oss-120b", isl=1024, osl=1024, disagg=True,
                                                 training=long_only) == 128
    eff = calibration.load()
    no_amd = configs.filter(pl.col("chip") != "mi355x")
    stack, with_fallback = calibration.default_stack("mi355x", eff, no_amd)
    assert stack == calibration.FALLBACK_STACK
    trained = ["dynamo-sglang", "dynamo-trt", "sglang", "trt", "vllm"]
    assert with_fallback.tau(stack) == pytest.approx(float(np.median([eff.tau(s) for s in trained])))
    assert calibration.default_stack("h100", eff, no_h100) == (calibration.stack_for("h100", eff, no_h100), eff)


def test_a_fold_fits_and_predicts_without_its_rows(monkeypatch, configs):
    """The leave-one-generation-out fold of CDNA 4 (MI355X): the refit sees no MI355X row, every frontier it
    scores is swept with training rows that hold none and with the stack the default path chooses from
    them (the fallback: no other AMD chip is measured), not MI355X's own ATOM."""
    fits, sweeps = [], []
    real_fit, real_sweep = calibration.fit, calibration.sweep

    def fit(rows, *args, **kwargs):
        fits.append(rows)
        return real_fit(rows, *args, **kwargs)

    def sweep(*args, **kwargs):
        sweeps.append(kwargs)
        return real_sweep(*args, **kwargs)
    monkeypatch.setattr(calibration, "fit", fit)
    monkeypatch.setattr(calibration, "sweep", sweep)
    monkeypatch.setattr(schemes, "_FITS", {})
    (name, _, compute), = [f for f in schemes.folds("generation") if f[0] == "generation=CDNA 4"]
    frame = compute()
    assert len(fits) == 1 and fits[0].height == configs.height - 17
    assert "mi355x" not in fits[0]["chip"].to_list()
    assert len(sweeps) == 2
    for kw in sweeps:
        assert "mi355x" not in kw["training"]["chip"].to_list()
        assert kw["stack"] == calibration.FALLBACK_STACK
    assert frame["stack"].to_list() == [calibration.FALLBACK_STACK] * 2
    assert frame["series"].to_list() == ["gpt-oss-120b mi355x atom fp4 1024/1024", "gpt-oss-120b mi355x atom fp4 8192/1024"]


# ---- each scheme scores every series it should -------------------------------------------------------------

#: Per scheme, the folds and the series each holds out, counted from data/measured/inferencemax.csv (22
#: series without speculative decoding: B200 8, GB200 8, H100 2, H200 2, MI355X 2; 11 at each shape).
EXPECTED_FOLDS = {
    "generation": {"generation=Blackwell": 16, "generation=Hopper": 4, "generation=CDNA 4": 2},
    "model-chip": {"model-chip=deepseek-r1 b200": 4, "model-chip=deepseek-r1 gb200": 6,
                   "model-chip=gpt-oss-120b b200": 4, "model-chip=gpt-oss-120b gb200": 2,
                   "model-chip=gpt-oss-120b h100": 2, "model-chip=gpt-oss-120b h200": 2,
                   "model-chip=gpt-oss-120b mi355x": 2},
    "shape": {"shape=1024/1024": 11, "shape=8192/1024": 11},
    "anchored": {"anchored=b200": 8, "anchored=gb200": 8, "anchored=h100": 2, "anchored=h200": 2, "anchored=mi355x": 2},
}


@pytest.mark.parametrize("scheme", list(schemes.SCHEMES))
def test_each_scheme_scores_every_series_it_should(scheme, errors, configs):
    e = errors.filter(pl.col("scheme") == scheme)
    assert dict(e.group_by("fold").len().iter_rows()) == EXPECTED_FOLDS[scheme]
    assert sorted(e["series"]) == sorted(configs["series"].unique())
    assert (e["frontier_distance"] >= 0).all() and all(len(d) for d in e["point_distances"])
    if scheme == "generation":  # every series is held out with its whole generation
        for r in e.iter_rows(named=True):
            assert r["fold"] == f"generation={specs.chip(r['chip']).generation}"


def test_the_anchored_scheme_leaves_out_its_anchors(errors, configs):
    """Each anchored chip's series are scored on the envelope points that were not fitted: H100's 8k/1k
    series has its fastest point (min TBT and E2E) and its peak throughput point fitted, so it is scored on
    its envelope's other points, two fewer than leave-one-generation-out scores of the same series."""
    series = "gpt-oss-120b h100 vllm fp4 8192/1024"
    anchored = errors.filter((pl.col("scheme") == "anchored") & (pl.col("series") == series))
    whole = errors.filter((pl.col("scheme") == "generation") & (pl.col("series") == series))
    assert len(anchored["point_distances"][0]) == len(whole["point_distances"][0]) - 2


def test_the_anchored_fits_reproduce_their_end_points(configs):
    """B200 and GB200 (measured on DeepSeek-R1) get four constants, the others three with the MLA factor
    at its prior; each reproduces its own measured end points (min TBT as 1 / TPOT, the highest throughput
    per GPU, the E2E at the fastest point, DeepSeek-R1's fastest), read here from the measured rows."""
    fits = schemes.anchored_fits()
    assert sorted(fits["chip"]) == ["b200", "gb200", "h100", "h200", "mi355x"]
    for r in fits.iter_rows(named=True):
        rows = configs.filter((pl.col("chip") == r["chip"]) & (pl.col("model_key") == "gpt-oss-120b")
                              & (pl.col("isl") == 8192) & (pl.col("osl") == 1024))
        fastest = rows.sort("mean_tpot").row(0, named=True)
        expected = [1 / fastest["mean_tpot"], rows["tput_per_gpu"].max(), fastest["mean_e2el"]]
        dsr1 = configs.filter((pl.col("chip") == r["chip"]) & (pl.col("model_key") == "deepseek-r1")
                              & (pl.col("isl") == 8192) & (pl.col("precision") == "fp4"))
        if r["chip"] in ("b200", "gb200"):
            expected.append(1 / dsr1["mean_tpot"].min())
        else:
            assert dsr1.is_empty()
            assert r["mla_layer_factor"] == calibration.PRIORS["mla_layer_factor"]
        np.testing.assert_allclose(r["targets"], expected, rtol=1e-12)
        assert np.max(np.abs(r["fit_log_errors"])) < 1e-3, r


def test_the_anchored_ratios_count_the_points_they_cannot_reach(configs):
    """Every anchored chip against every other measured chip with the same model at 8k/1k: gpt-oss-120b 5 x 4
    pairs, DeepSeek-R1 B200-GB200 both ways. A pair is unreached exactly when the other chip's fastest
    measured point (every precision) is faster than the anchored chip's own fastest at fp4; GB200's
    gpt-oss-120b 537 tok/s/user is beyond every other chip's, so no anchored chip reaches it."""
    ratios = schemes.ratio_errors()
    assert ratios.height == 5 * 4 + 2
    at = configs.filter((pl.col("isl") == 8192) & (pl.col("osl") == 1024))
    def top(rows):  # "<model> <chip>" -> its largest 1 / TPOT
        return dict(rows.group_by("model_key", "chip").agg((1 / pl.col("mean_tpot")).max().alias("top")).select(
            pl.concat_str("model_key", "chip", separator=" "), "top").iter_rows())
    top_any, top_fp4 = top(at), top(at.filter(pl.col("precision") == "fp4"))
    for r in ratios.iter_rows(named=True):
        expected = top_any[f"{r['model_key']} {r['against']}"] <= top_fp4[f"{r['model_key']} {r['chip']}"]
        assert r["reached"] == expected, r
        assert (r["ratio_log_error"] is not None) == r["reached"]
    unreached = ratios.filter(~pl.col("reached"))
    assert {f"gpt-oss-120b {c} vs gb200" for c in ("b200", "h100", "h200", "mi355x")} <= set(unreached["series"])


# ---- scheme (b) against today's ceilings --------------------------------------------------------------------

#: The ceilings the serving-model chapter claims for scheme (b): median and p90 of the one statistic.
CEILINGS_B = {"model-chip": (0.30, 0.85), "shape": (0.20, 0.70)}


@pytest.mark.parametrize("scheme", [
    pytest.param("model-chip", marks=pytest.mark.xfail(strict=True, reason=(
        "measured on the default path (data/derived/schemes.jsonl, stage version 1): median 32.9 %, p90 97.2 % "
        "over 22 series, against 30 % / 85 %; with each series' own stack (holdout) 17.8 % / 52.1 %. The "
        "default stack is chosen per chip, not per model (DeepSeek-R1 on GB200 takes Dynamo-TRT's overhead, "
        "fitted on gpt-oss-120b): issue 25"))),
    "shape"])
def test_scheme_b_on_the_default_path_is_within_the_ceilings(scheme, errors):
    e = calibration.frontier_error(errors.filter(pl.col("scheme") == scheme))
    median, p90 = CEILINGS_B[scheme]
    assert e.median <= median and e.p90 <= p90, e


#: What a nominal 80 % band must hold of its scheme's held-out points (issue 24, item 4): a band far too
#: wide or too narrow for its scheme fails.
COVERAGE_RANGE = (0.70, 0.90)


@pytest.mark.parametrize("scheme", [
    pytest.param("generation", marks=pytest.mark.xfail(strict=True, reason=(
        "measured: 97.1 % (266 of 274 points, 90 % interval 94.8-98.5 %): each generation's band is chosen "
        "on the other two, and Hopper's and CDNA 4's few series are farther off than Blackwell's 16"))),
    pytest.param("model-chip", marks=pytest.mark.xfail(strict=True, reason=(
        "measured: 65.0 % (178 of 274 points, 90 % interval 59.9-69.7 %): the band is read from the series' "
        "median distances, and a series' points spread around its median"))),
    "shape",
    pytest.param("anchored", marks=pytest.mark.xfail(strict=True, reason=(
        "measured: 55.3 % (145 of 262 points, 90 % interval 50.1-60.5 %): GB200's anchored frontiers are "
        "far off (disaggregated with no disaggregated training row), B200's and the others' close"))),
])
def test_each_band_holds_its_share_of_the_held_out_points(scheme, errors):
    c = calibration.coverage(errors.filter(pl.col("scheme") == scheme))
    assert COVERAGE_RANGE[0] <= c.share <= COVERAGE_RANGE[1], c


# ---- the chapter's table and the committed stage -------------------------------------------------------------

def test_the_table_names_each_scheme_and_the_band_it_serves():
    t = schemes.table()
    assert t["scheme"].to_list() == list(schemes.SCHEMES) + ["anchored-ratio"]
    uses = dict(zip(t["scheme"], t["band_for"]))
    assert uses["shape"] == "a measured chip at an unmeasured shape" and uses["anchored"] == "Jalapeño"
    assert "Vera Rubin" in uses["generation"] and "TPUs" in uses["generation"]
    for r in t.iter_rows(named=True):
        assert 0 <= r["coverage_low"] <= r["coverage"] <= r["coverage_high"] <= 1, r
        assert r["inside"] <= r["points"] and r["median"] <= r["p90"], r
    ratio = t.filter(pl.col("scheme") == "anchored-ratio").row(0, named=True)
    assert ratio["series"] + ratio["unreached"] == schemes.ratio_errors().height


def test_the_schemes_table_regenerates_within_its_tolerance(tmp_path):
    """Every fold refitted and rescored matches the committed table to the stage's relative tolerance (2 %)."""
    stage = derived.stage("schemes")
    new, old = pl.read_ndjson(schemes.derive_schemes(root=tmp_path)), derived.committed("schemes")
    assert old is not None, f"no committed table: run `{stage.command}`"
    assert new["frame"].n_unique() == sum(len(f) for f in EXPECTED_FOLDS.values())
    assert new.columns == old.columns and new.select("frame", "key").rows() == old.select("frame", "key").rows()
    for c in new.columns:
        for x, y in zip(new[c].to_list(), old[c].to_list()):
            if isinstance(x, float) or (isinstance(x, list) and x and isinstance(x[0], float)):
                np.testing.assert_allclose(x, y, rtol=stage.rtol, atol=0, err_msg=c)
            else:
                assert x == y, c


def test_the_bands_of_today_read_the_same_statistic():
    """The error bands of jalapeno.uncertainty (leave-one-chip-out, each series' own stack) are read from the
    same statistic and the same half-normal reading: one definition, whichever scheme feeds it."""
    today = uncertainty.model_error()
    e = calibration.frontier_error(calibration.holdout(by="chip"))
    assert (e.median, e.p90, e.n_series) == (today.median_distance, today.p90_distance, today.n_series)
    assert calibration.band_half_width(e) == pytest.approx(norm.ppf(0.9) * today.sigma_log, rel=1e-12)


def test_an_end_point_fit_needs_its_mla_factor_without_deepseek():
    with pytest.raises(ValueError, match="mla_layer_factor"):
        subject.fit_end_points(specs.chip("h100"), [260.0, 1e4, 3.6], calibration.load())
