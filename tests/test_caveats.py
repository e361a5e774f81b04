"""The caveats what-ifs: power bases against the published 44,960 and 85,448 tok/s/kW, Amdahl against its
closed form, HBM per stack and per gigawatt, Vera Rubin, the workload sweep, the business arithmetic and
the claims checks of the caveats chapter."""

import numpy as np
import polars as pl
import pytest

import jalapeno as jp
from jalapeno import calibration, caveats, comparison, data, pareto, power, registry, subject


@pytest.fixture(scope="module")
def fit():
    return subject.fit_jalapeno("central")



# ---- power bases --------------------------------------------------------------------------------------------

def test_rated_basis_reproduces_the_published_per_kw_figures():
    t = {r["basis"]: r for r in comparison.power_basis_table(bases=comparison.POWER_BASIS_ROWS).iter_rows(named=True)}
    assert round(t["rated"]["jalapeno_tok_s_kw"]) == 85_448
    assert round(t["rated"]["baseline_tok_s_kw"]) == 44_960
    assert t["rated"]["ratio"] == pytest.approx(85_448 / 44_960, abs=1e-4)
    assert (t["rated"]["jalapeno_w"], t["rated"]["baseline_w"]) == (700.0, 1200.0)


def test_other_bases_hand_worked():
    t = {r["basis"]: r for r in comparison.power_basis_table(bases=comparison.POWER_BASIS_ROWS, pue=1.5).iter_rows(named=True)}
    j_tput, b_tput = 85_448 * 0.7, 53_952.0          # tok/s per chip: published x 0.7 kW; GB200 conc 512
    assert t["sustained"]["jalapeno_tok_s_kw"] == pytest.approx(j_tput / 0.55)
    assert t["sustained, both"]["ratio"] == pytest.approx(t["rated"]["ratio"])
    assert t["all-in-proportional"]["jalapeno_w"] == pytest.approx(700 * 2.1 / 1.2)   # 1,225 W
    assert t["all-in-proportional"]["ratio"] == pytest.approx(t["rated"]["ratio"])
    assert t["all-in-per-chip"]["jalapeno_w"] == pytest.approx(700 + 900)             # GB200's 2.1 kW - 1.2 kW
    assert t["all-in-per-chip"]["jalapeno_tok_s_kw"] == pytest.approx(j_tput / 1.6)
    assert t["all-in-per-chip"]["baseline_tok_s_kw"] == pytest.approx(b_tput / 2.1, rel=1e-4)
    assert t["all-in-per-chip"]["ratio"] == pytest.approx((j_tput / 1.6) / (b_tput / 2.1), rel=1e-4)
    assert t["all-in-per-chip, sustained"]["jalapeno_w"] == pytest.approx(550 + 900)
    assert t["facility"]["jalapeno_w"] == pytest.approx(1600 * 1.5)
    assert t["facility"]["ratio"] == pytest.approx(t["all-in-per-chip"]["ratio"])   # a common PUE cancels


def test_power_basis_table_uses_the_power_modules_watts():
    t = {r["basis"]: r for r in comparison.power_basis_table(bases=comparison.POWER_BASIS_ROWS).iter_rows(named=True)}
    for key in ("all-in-proportional", "all-in-per-chip"):   # the same name gives the same watts everywhere
        assert t[key]["jalapeno_w"] == power.power_w("jalapeno", key)


# ---- Amdahl ---------------------------------------------------------------------------------------------------

def test_amdahl_closed_form():
    assert caveats.amdahl(0.5, 2.0) == pytest.approx(4 / 3)
    assert caveats.amdahl(0.0, 1.8) == 1.0
    assert caveats.amdahl(1.0, 1.8) == pytest.approx(1.8)
    f = np.array([0.2, 0.6])
    assert np.allclose(caveats.amdahl(f, 1.5), 1 / ((1 - f) + f / 1.5))
    c = caveats.amdahl_curve((1.5, 1.8), points=11)
    assert c.height == 22 and c.filter(pl.col("share") == 1.0)["speedup"].to_list() == pytest.approx([1.5, 1.8])
    with pytest.raises(ValueError, match="share must lie in"):
        caveats.amdahl(1.2, 1.5)
    with pytest.raises(ValueError, match="speedup must be positive"):
        caveats.amdahl(0.5, 0.0)


@pytest.mark.parametrize("model, concurrency, n_chips, dp", [
    ("gpt-oss-120b", 1, 1, 1), ("gpt-oss-120b", 512, 1, 1), ("deepseek-r1", 64, 8, 8), ("deepseek-r1", 4096, 8, 8)])
def test_decode_breakdown_is_a_view_of_the_evaluation(model, concurrency, n_chips, dp):
    eff = calibration.load()
    d = caveats.decode_breakdown(model, "gb200", n_chips=n_chips, concurrency=concurrency, dp=dp, eff=eff,
                                 stack="trt")
    assert d["sum_s"] == pytest.approx(d["decode_step_s"], rel=1e-12)   # the parts are the step's own
    assert all(d[k] >= 0 for k in caveats.KERNEL_PARTS)


def test_decode_breakdown_honours_the_bandwidth_override():
    eff = calibration.load()
    kw = dict(n_chips=1, concurrency=1, eff=eff, stack="trt")
    base = caveats.decode_breakdown("gpt-oss-120b", "gb200", **kw)
    double = caveats.decode_breakdown("gpt-oss-120b", "gb200", hbm_bandwidth_bytes_per_s=16e12, **kw)
    assert double["kv_attention_s"] == pytest.approx(base["kv_attention_s"] / 2)  # memory-bound: half the time
    assert double["expert_weights_s"] == pytest.approx(base["expert_weights_s"] / 2)
    assert double["overhead_s"] == base["overhead_s"]


def test_kernel_table_is_amdahl_of_its_share(fit):
    front = subject.jalapeno_frontier("gpt-oss-120b", "central", fit=fit)
    t = caveats.kernel_speedup_table("gpt-oss-120b", subject.jalapeno_chip("central"), front, eff=fit.efficiency,
                                     stack="jalapeno", speedups=(1.5, 1.8))
    for r in t.iter_rows(named=True):
        assert 0 < r["kernel_share"] < 1
        assert r["step_speedup_1.5"] == pytest.approx(1 / ((1 - r["kernel_share"]) + r["kernel_share"] / 1.5))
        assert 1 < r["step_speedup_1.5"] < r["step_speedup_1.8"] < 1.8
        shares = [r[f"share_{k}"] for k in ("kv_attention", "attention_weights", "expert_weights", "other_weights",
                                             "comm", "overhead")]
        assert sum(shares) == pytest.approx(1.0)


# ---- HBM ------------------------------------------------------------------------------------------------------

def test_hbm_per_stack_and_per_gigawatt():
    assert caveats.hbm_per_stack_bytes("jalapeno") == pytest.approx(36e9)   # 216 GB / 6 stacks
    supply = data.fact("hbm_shipments_2026")
    assert supply == pytest.approx(30e9 * 1e9 / 8)                            # 30 billion Gb in bytes
    t = caveats.hbm_table(["jalapeno"], supply_share=0.01).row(0, named=True)   # rated: 700 W
    chips = 1e9 / 700
    assert t["chips_per_gw"] == pytest.approx(chips)
    assert t["stacks_per_gw"] == pytest.approx(6 * chips)
    assert t["hbm_pb_per_gw"] == pytest.approx(chips * 216e9 / 1e15)
    assert t["supply_share_per_gw"] == pytest.approx(chips * 216e9 / 3.75e18)
    assert t["chips_per_year"] == pytest.approx(0.01 * 3.75e18 / 216e9)
    with pytest.raises(ValueError, match="supply_share must lie in"):
        caveats.hbm_table(["jalapeno"], supply_share=0)
    allin = caveats.hbm_table(["jalapeno"], power_basis="all-in-per-chip").row(0, named=True)
    assert allin["watts_per_chip"] == pytest.approx(1600.0)                  # 700 W + GB200's 900 W


# ---- ranges, facts, Vera Rubin --------------------------------------------------------------------------------

def test_whatif_ranges_and_facts():
    assert data.whatif("vera_rubin_tdp", "low") == 1800.0
    assert data.whatif("vera_rubin_hbm_bandwidth", "high") == pytest.approx(22e12)
    assert data.whatif("pue") == pytest.approx(1.2)
    assert data.fact("cuda_introduced_year") == 2006
    with pytest.raises(jp.UnknownNameError, match="valid what-if parameters: vera_rubin_tdp"):
        data.whatif("rubin_power")
    with pytest.raises(jp.UnknownNameError, match="valid cases: low, central, high"):
        data.whatif("pue", "median")
    for name in ("whatif_ranges.csv", "public_facts.csv"):
        assert data.load(name)["source"].str.contains("http|@|arXiv|ISCA").all(), name


def test_vera_rubin_cases():
    pes, opt = caveats.vera_rubin_chip("pessimistic"), caveats.vera_rubin_chip("optimistic")
    assert (pes.tdp_w, pes.hbm_bandwidth_bytes_per_s, pes.peak_dense_flops_per_s["fp4"]) == (2300.0, 13e12, 25e15)
    assert (opt.tdp_w, opt.hbm_bandwidth_bytes_per_s, opt.peak_dense_flops_per_s["fp4"]) == (1800.0, 22e12, 50e15)
    assert pes.hbm_capacity_bytes == jp.chip("vera-rubin").hbm_capacity_bytes
    with pytest.raises(jp.UnknownNameError, match="valid Vera Rubin cases: pessimistic, central, optimistic"):
        caveats.vera_rubin_chip("best")


def test_vera_rubin_table(fit):
    t = caveats.vera_rubin_table(["gpt-oss-120b"], fit=fit, cases=("pessimistic", "optimistic"))
    assert t.height == 8
    assert np.allclose(t["remaining"], t["vs_vera_rubin"] / t["vs_baseline"])
    pk = {r["case"]: r for r in t.filter(pl.col("metric") == "per_kw_at_peak").iter_rows(named=True)}
    assert pk["pessimistic"]["vs_baseline"] == pytest.approx(85_448 / 45_066, rel=1e-3)   # measured GB200, best run
    assert pk["optimistic"]["vs_vera_rubin"] < pk["pessimistic"]["vs_vera_rubin"]          # a better Rubin leaves less
    assert pk["pessimistic"]["published"] == pytest.approx(85_448 / 44_960)


def test_front_ratios_of_a_frontier_with_itself_are_one(fit):
    f = subject.jalapeno_frontier("gpt-oss-120b", "central", fit=fit)
    r = caveats.front_ratios(f, f)
    assert all(r[m] == pytest.approx(1.0) for m in caveats.METRICS)


def test_shape_sweep(fit):
    t = caveats.shape_sweep(shapes=((8192, 1024), (1024, 1024)), fit=fit)
    assert t["shape"].to_list() == ["8k/1k", "1k/1k"]
    assert t["jalapeno_peak_tok_s_kw"][0] == pytest.approx(85_448, rel=1e-3)   # fitted there
    assert (t.select(caveats.METRICS[:3]).to_numpy() > 1).all()
    with pytest.raises(ValueError, match="osl above 1"):
        caveats.shape_sweep(shapes=((1024, 1),), fit=fit)


def test_pareto_shape_table_ends_at_the_matched_ratio(fit):
    old = pareto.baseline_frontier("gpt-oss-120b", "gb200")
    new = subject.jalapeno_frontier("gpt-oss-120b", "central", fit=fit)
    t = caveats.pareto_shape_table(new, old)
    assert t["ratio"][-1] == pytest.approx(pareto.matched_ratio(new, old)["ratio"])
    assert np.all(np.diff(t["ratio"].to_numpy()) > 0)            # the nearer the end, the larger the ratio
    with pytest.raises(ValueError, match="fractions must lie in"):
        caveats.pareto_shape_table(new, old, fractions=(0.5, 1.2))


# ---- baselines, business, claims --------------------------------------------------------------------------------

def test_measured_chip_comparison():
    t = {r["chip"]: r for r in caveats.measured_chip_comparison().iter_rows(named=True)}
    assert set(t) == {"b200", "gb200", "h100", "h200", "mi355x"}
    assert t["gb200"]["peak_tok_s_kw"] == pytest.approx(45_066, abs=1)    # best over runs (the cited run: 44,960)
    assert t["b200"]["peak_tok_s_kw"] > t["gb200"]["peak_tok_s_kw"]       # B200 at 1 kW is the best per kW
    assert all(r["per_kw_ratio"] > 1 and r["single_user_ratio"] > 1 for r in t.values())
    with pytest.raises(ValueError, match="gpt-oss-120b only"):
        caveats.measured_chip_comparison("deepseek-r1")


def test_business_arithmetic():
    b = {r["implication"]: r["implied"] for r in caveats.business_table().iter_rows(named=True)}
    vals = list(b.values())
    assert vals[0] == pytest.approx(100 * (92 / 46.7 - 1))        # 97.0 %
    assert vals[1] == pytest.approx(100 * (85.4 / 41.1 - 1))
    assert vals[4] == pytest.approx(105 / 85.4)
    assert vals[5:7] == pytest.approx([40.0, 45.0])
    assert vals[7] == pytest.approx(0.62 / 0.23)
    assert vals[8] == pytest.approx(69.0)
    assert vals[9] == pytest.approx(100 * (1 - 0.62 / 1.9))


def test_section_claims_exist():
    ids = set(data.load("claims.csv")["claim_id"])
    for section, cs in caveats.SECTION_CLAIMS.items():
        assert set(cs) <= ids, section
    reg = pl.DataFrame({"claim_id": ["ai-kernel-speedup", "x"], "claimed": ["1.5–1.8x", "1x"],
                        "chapter": ["caveats", "x"], "status": ["modeled", "open"]})
    shown = caveats.section_claims(reg, "kernels")
    assert shown["claim_id"].to_list() == ["ai-kernel-speedup"] and shown["claimed"].to_list() == ["1.5–1.8x"]
    with pytest.raises(jp.UnknownNameError, match="valid sections: vera-rubin"):
        caveats.section_claims(reg, "rubin")


def test_caveats_claims_checks():
    want = {"tpu-maturity-years": "10–11 years", "cuda-ecosystem-years": "20 years",
            "financing-weeks-before-benchmark": "1.14 weeks", "nvidia-revenue-yoy-growth": "95.7–98.3 %",
            "semianalysis-beat-every-chip": "100 %"}
    for cid, computed in want.items():
        r = registry.CHECKS[cid]()
        assert r.agrees and r.computed == computed, cid


def test_a_public_fact_can_make_a_check_fail(edit_data):
    edit_data("public_facts.csv", "cuda_introduced_year,2006,", "cuda_introduced_year,2000,")
    r = registry.CHECKS["cuda-ecosystem-years"]()
    assert not r.agrees and r.computed == "26 years"
    edit_data("public_facts.csv", "nvidia_q2_fy2026_revenue,46700000000,", "nvidia_q2_fy2026_revenue,40000000000,")
    assert not registry.CHECKS["nvidia-revenue-yoy-growth"]().agrees
