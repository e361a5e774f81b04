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
                        "quantity": ["speed of AI-generated kernels", "y"],
                        "chapter": ["caveats", "x"], "status": ["modeled", "open"]})
    shown = caveats.section_claims(reg, "kernels")
    assert shown["claim_id"].to_list() == ["ai-kernel-speedup"] and shown["claimed"].to_list() == ["1.5–1.8x"]
    assert shown["quantity"].to_list() == ["speed of AI-generated kernels"]   # what it measures, in words
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


# ---- what the seeds say the public data cannot answer --------------------------------------------------------

#: Lines 15 to 18 of seed 003 (003_243afe2b3792c736.txt), as printed: its table's four rows.
SEED_003_ROWS = (
    "| 比较口径 | 相同公开模型、指定输入输出长度、公开功率归一化 | 整机电力、冷却、主机与网络是否完全计入 |",
    "| 性能范围 | 覆盖高吞吐与低延迟操作点 | 所有上下文长度、并发形态和模型结构是否延续优势 |",
    "| 软件成熟度 | 三个非原始计划模型在两个月内完成高性能移植 | 大规模生产调度、故障恢复和长期稳定性 |",
    "| 可获得性 | 计划在 2026 年底前部署到 OpenAI 基础设施 | 外部客户何时、以何种产品和价格获得收益 |",
)


def test_seed_003_table_is_transcribed_as_printed():
    q = data.seed_public_data_questions()
    assert q["question"].to_list() == ["basis-of-comparison", "performance-range", "software-maturity", "availability"]
    assert q["seed_line"].to_list() == [15, 16, 17, 18]
    assert set(q["seeds"]) == {"003_243afe2b3792c736.txt"}
    for r, line in zip(q.iter_rows(named=True), SEED_003_ROWS):
        assert f"| {r['question_zh']} | {r['answers_zh']} | {r['cannot_answer_zh']} |" == line


def test_public_data_questions_treated_where_the_chapter_says():
    reg = registry.claims()
    pd = caveats.public_data_questions(reg)
    assert [f"| {r} |" for r in pd["row_zh"]] == list(SEED_003_ROWS)
    assert pd["question_en"].to_list() == ["basis of comparison", "range of performance", "software maturity",
                                           "availability"]
    assert set(caveats.PUBLIC_DATA_TREATMENT) == set(pd["question"])
    # the software and availability rows rest on claims nothing public checks, shown by value, not by id
    sw, av = pd.row(2, named=True), pd.row(3, named=True)
    assert sw["n_not_checkable"] == 4 and av["n_not_checkable"] == 4
    assert "open models ported outside the production plan: 3 (not checkable)" in sw["claims"]
    assert "2 months (not checkable)" in sw["claims"]
    assert "end of 2026, small volume first): 2026 (not checkable)" in av["claims"]
    assert not any("model-port" in c or "jalapeno-deployment" in c for c in pd["claims"])
    assert pd["section"][0] == "Rated, sustained, all-in: whose watts are counted"


def test_three_lines_of_seed_004():
    seed_004 = ("第一行：对比对象停在GB300。Vera Rubin已进入初期出货，Jalapeño的HBM容量和峰值算力都没压过GB300，更不用说Rubin。",
                "第二行：只干推理，不碰训练。CUDA在训练侧的护城河至今没有ASIC能撼动。而且就在公布跑分一周前的8月17日，"
                "OpenAI刚接受英伟达高达1050亿美元的数据中心融资担保。知乎OpenAI芯片负责人Richard Ho的原话是："
                "“英伟达是很好的合作伙伴，我们依然需要大量英伟达芯片。”",
                "第三行：真正的瓶颈是HBM4。Jalapeño每颗配6颗HBM4、共216GB，而三星、SK海力士、美光的HBM产能已预售至2027年，"
                "SK海力士CEO警告2027年供应最紧张。知乎讽刺的是，自研芯片的公司和英伟达抢的是同一批内存。")
    tl = caveats.three_lines(registry.claims())
    assert tl.height == 3
    for quote, line in zip(tl["quote"], seed_004):   # every phrase is the seed's, on its own line
        assert all(part in line for part in quote.split(" … ")), quote
    assert "HBM4 stacks per chip: 6 (consistent)" in tl["claims"][2]
    assert tl["n_not_checkable"].to_list() == [1, 4, 3]
    with pytest.raises(jp.UnknownNameError, match="'no-such-claim'"):
        caveats._readings(registry.claims(), ["no-such-claim"])


def test_claim_reading_drops_the_flag_convention():
    assert caveats.claim_reading({"quantity": "x is stated (1 = stated)", "unit": "flag", "claimed": "yes"}) == "x is stated"
    assert caveats.claim_reading({"quantity": "y (Richard Ho; 1 = stated)", "unit": "flag", "claimed": "yes"}) == "y (Richard Ho)"
    assert caveats.claim_reading({"quantity": "months", "unit": "months", "claimed": "2 months"}) == "months: 2 months"
