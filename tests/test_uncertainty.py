"""Error bands (jalapeno.uncertainty): the sampler against known distributions, the response surface on
hand-worked nodes, the Sobol ranking on a function whose ranking is known, the judge on hand-worked bands,
and the model's error read from held-out distances."""

import math

import numpy as np
import pytest

from jalapeno import data, uncertainty as u


def test_each_unknown_is_drawn_from_its_stated_distribution():
    draws = u.sample(40_000, seed=1)
    table = data.jalapeno_unknowns()
    for row in table.iter_rows(named=True):
        x = draws[row["parameter"]] / (data.jalapeno_unknown(row["parameter"], "low") / row["low"])
        if row["distribution"] == "log-uniform":
            # uniform in the logarithm: the q-quantile is low (high / low) ** q; Monte Carlo error of a
            # quantile of 40,000 draws: sqrt(q (1 - q) / n) <= 0.0025 in probability, < 1 % here
            for q in (0.1, 0.5, 0.9):
                want = row["low"] * (row["high"] / row["low"]) ** q
                assert np.quantile(x, q) == pytest.approx(want, rel=0.01)
            assert x.min() >= row["low"] and x.max() <= row["high"]
        else:
            # each power of two from low to high equally likely: 8, 16, 32, 64 a quarter each
            powers = 2.0 ** np.arange(math.ceil(math.log2(row["low"])), math.floor(math.log2(row["high"])) + 1)
            assert set(np.unique(x)) == set(powers)
            shares = np.array([(x == p).mean() for p in powers])
            assert np.abs(shares - 1 / powers.size).max() < 0.01
    z = draws[u.MODEL_ERROR_INPUT]  # standard normal: quantiles -1.2816, 0, 1.2816
    assert np.quantile(z, [0.1, 0.5, 0.9]) == pytest.approx([-1.2816, 0.0, 1.2816], abs=0.03)


def test_the_draws_are_fixed_by_the_seed():
    a, b = u.sample(100), u.sample(100)
    assert all(np.array_equal(a[k], b[k]) for k in u.INPUTS)
    assert not np.array_equal(u.sample(100, seed=2)["hbm_bandwidth"], a["hbm_bandwidth"])


def test_a_log_normal_band_has_its_known_quantiles():
    # exp(0.3 z): median 1, 10 % and 90 % quantiles exp(-+0.3 x 1.2816) = 0.6807, 1.4690
    z = np.random.default_rng(3).standard_normal(200_000)
    b = u.band(np.exp(0.3 * z))
    assert (b.low, b.median, b.high) == pytest.approx((0.6807, 1.0, 1.4690), rel=0.01)
    assert b.coverage == pytest.approx(0.8)


def test_the_surface_is_exact_at_the_nodes_and_log_linear_between_them():
    shape = tuple(u.levels(p).size for p in u.UNKNOWNS)
    # a quantity proportional to hbm ** 0.5 x bandwidth ** -1 x domain: log-linear, so read exactly
    h, s, d = np.meshgrid(*(u.levels(p) for p in u.UNKNOWNS), indexing="ij")
    values = h ** 0.5 / s * d
    assert values.shape == shape
    pts = u.sample(500, seed=4)
    got = u.surface(values, pts)
    want = pts["hbm_bandwidth"] ** 0.5 / pts["scale_up_bandwidth"] * pts["scale_up_domain"]
    assert np.allclose(got, want, rtol=1e-9)
    with pytest.raises(ValueError, match="scale_up_domain takes only"):
        u.surface(values, {**pts, "scale_up_domain": pts["scale_up_domain"] * 1.5})


def test_sobol_ranks_a_function_whose_ranking_is_known():
    # Y = 4 a + 2 b + c + 0 d with a, b, c, d uniform: variances 16/12, 4/12, 1/12, 0; total indices
    # 16/21, 4/21, 1/21, 0 (additive, so first order = total)
    out = u.sobol_indices(lambda x: 4 * x["a"] + 2 * x["b"] + x["c"] + 0 * x["d"], names=("a", "b", "c", "d"),
                          base=2048, seed=5)
    assert out.sort("rank")["input"].to_list() == ["a", "b", "c", "d"]
    assert out["total"].to_list() == pytest.approx([16 / 21, 4 / 21, 1 / 21, 0.0], abs=0.03)
    assert out["first_order"].to_list() == pytest.approx([16 / 21, 4 / 21, 1 / 21, 0.0], abs=0.03)


def test_the_judge_on_hand_worked_bands():
    assert u.judge(53.7, (40.0, 60.0)) == "agrees"
    assert u.judge(104.3, (43.0, 104.3)) == "agrees"  # the ends belong to the band
    assert u.judge(104.3, (43.0, 104.2)) == "disagrees"
    assert u.judge(5.0, u.Band(8.0, 6.0, 11.0)) == "disagrees"
    with pytest.raises(ValueError, match="low <= high"):
        u.judge(1.0, (2.0, 1.0))
    with pytest.raises(ValueError):
        u.judge(float("nan"), (1.0, 2.0))


def test_a_band_is_quoted_stably():
    assert u.Band(84.29, 53.8, 130.7).text("{:.0f}", "x") == "84x (54x–131x)"
    # a value 1e-13 from a rounding boundary is not quoted to the digit the noise decides
    assert u.Band(22.5 + 1e-13, 10.0, 30.0).text() == u.Band(22.5 - 1e-13, 10.0, 30.0).text()


@pytest.mark.parametrize("band, text", [
    (u.Band(4.6312, 1.5049, 14.3249), "4.6x (1.5x–14.3x)"),       # low end to two significant digits: 1 decimal
    (u.Band(1.0212, 0.33121, 3.1812), "1.02x (0.33x–3.18x)"),     # below 1: 2 decimals
    (u.Band(114.21, 36.61, 363.44), "114x (37x–363x)"),           # from 10 up: none
    (u.Band(1520.4, 1012.3, 2291.6), "1,520x (1,012x–2,292x)"),   # thousands separated
])
def test_every_band_is_shown_with_one_precision(band, text):
    """One rule for every band the book shows (the claims table's bands and the chapters' quotes alike):
    the median and both ends with the decimals that give the low end two significant digits."""
    assert band.text(unit="x") == text
    assert band.ends_text() == text.split("(")[1].rstrip(")").replace("x", "")


def test_the_model_error_from_hand_worked_distances():
    # ten series at ln(1.2) each, read as one point a series: split-conformal at 80 % over 10 series takes
    # the score whose cumulative weight (1/11 a series, 1/11 at infinity) first reaches 0.8: ln 1.2;
    # sigma = ln 1.2 / Phi^-1(0.9) = 0.18232 / 1.28155 = 0.14227
    e = u.error_from_distances([0.2] * 10)
    assert e.band_half_width == pytest.approx(math.log(1.2), rel=1e-12)
    assert e.sigma_log == pytest.approx(0.142266, rel=1e-5)
    assert (e.median_distance, e.p90_distance, e.n_series) == (pytest.approx(0.2), pytest.approx(0.2), 10)
    # a heavy tail: eight at 1 % reach 8/11 = 0.727 < 0.8, the ninth (300 %) 9/11: the band is ln 4
    e = u.error_from_distances([0.01] * 8 + [3.0, 3.0])
    assert e.band_half_width == pytest.approx(math.log(4.0), rel=1e-12)
    assert e.sigma_log == pytest.approx(math.log(4.0) / 1.2815516, rel=1e-6)
    with pytest.raises(ValueError):
        u.error_from_distances([])
    # three series: 3/4 < 0.8 of the weight, no finite band
    with pytest.raises(ValueError, match="finite"):
        u.error_from_distances([0.1, 0.2, 0.3])


def test_the_surface_between_nodes_is_close_to_a_refit():
    # the response surface against a fit made at a point between the nodes (HBM and scale-up bandwidth
    # at their geometric midpoints between central and high, a 32-chip domain): the matched ratio within 5 %
    from jalapeno import calibration, pareto, subject

    ens = u.ensemble()
    node_vals = u.matched_ratio_nodes(ens, "gpt-oss-120b")
    hbm = math.sqrt(u.levels("hbm_bandwidth")[1] * u.levels("hbm_bandwidth")[2])
    sub = math.sqrt(u.levels("scale_up_bandwidth")[1] * u.levels("scale_up_bandwidth")[2])
    point = {"hbm_bandwidth": np.array([hbm]), "scale_up_bandwidth": np.array([sub]), "scale_up_domain": np.array([32.0])}
    read = float(u.surface(node_vals, point)[0])
    over = {subject.UNKNOWN_FIELDS[k]: float(v[0]) for k, v in point.items()}
    fit = subject.fit_jalapeno("central", base=calibration.load(), overrides=over)
    old = pareto.baseline_frontier("gpt-oss-120b", "gb200")
    true = pareto.matched_ratio(subject.jalapeno_frontier("gpt-oss-120b", "central", fit=fit), old)["ratio"]
    assert read == pytest.approx(true, rel=0.05)


def test_a_node_frontier_is_computed_once_and_is_the_fits_frontier():
    from dataclasses import replace

    from jalapeno import subject

    ens = replace(u.ensemble())  # the book's nodes, none of their frontiers computed yet in this copy
    fit = ens.fits.flat[1]
    first = ens.frontier(fit, "gpt-oss-120b", power_basis="sustained")
    assert first.equals(subject.jalapeno_frontier("gpt-oss-120b", "central", fit=fit, power_basis="sustained",
                                                  concurrency_cap=ens.concurrency_cap))
    first.drop_in_place("scenario")  # a copy: what a caller does to it leaves the ensemble's alone
    again = ens.frontier(fit, "gpt-oss-120b", power_basis="sustained")
    kept, = [v for k, v in ens._frontiers.items() if k[0] == id(fit) and ("power_basis", "sustained") in k]
    assert "scenario" in again.columns and "scenario" in kept.columns and kept is not again
    # a default spelled out or left out is one frontier: computed once, the same frame
    rated = ens.frontier(fit, "gpt-oss-120b")
    assert len(ens._frontiers) == 2
    assert ens.frontier(fit, "gpt-oss-120b", power_basis="rated", isl=8192).equals(rated)
    assert len(ens._frontiers) == 2
    with pytest.raises(ValueError, match="not one of the ensemble's nodes"):
        ens.frontier(replace(fit), "gpt-oss-120b")
