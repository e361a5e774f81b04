"""The caveats chapter module: the published numbers its prose quotes, worked by hand (per-watt figures,
HBM per stack, Amdahl, the business arithmetic), and every key and slot the notebook uses."""

import chapter_sources
import pytest

from jalapeno.chapters import caveats as chapter
from jalapeno.errors import UnknownNameError

NAME = "caveats"


defaults, ch = chapter_sources.fixtures(NAME, chapter)


def test_every_key_the_prose_quotes_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []


def test_every_slot_the_notebook_shows_is_computed(ch):
    tables, figures = chapter_sources.shown_slots(NAME)
    assert tables and tables <= set(ch.tables)
    chapter_sources.assert_captioned(ch, tables)
    assert figures and figures == set(ch.figures)
    assert {f.name for f in ch.figures.values()} == {
        "caveats-vera-rubin-remaining", "caveats-power-bases", "caveats-shape-sweep-gpt-oss-120b-gb200",
        "caveats-amdahl-gpt-oss-120b", "caveats-hbm-per-gw", "caveats-pareto-shape"}   # the exported names


def test_the_published_figures_quoted(ch):
    assert ch.numbers["j_tdp"] == "700" and ch.numbers["b_tdp"] == "1,200"    # rated TDPs, W
    assert ch.numbers["j_kw"] == "85,448"                                      # seed 000
    assert ch.numbers["pub_shape"] == "8,192/1,024"                            # 8K/1K
    assert ch.numbers["k_claim"] == "1.5–1.8"
    assert ch.numbers["ps_pub"] == "53.7"                                      # gpt-oss-120b matched ratio
    assert ch.numbers["ps_f90"] == "90" and ch.numbers["ps_f50"] == "50"


def test_rated_basis_reproduces_the_published_per_watt_figures(ch):
    assert ch.numbers["pb_j_rated"] == "85,448"
    assert ch.numbers["pb_b_rated"] == "44,960"
    assert ch.values["pb_rated"] == pytest.approx(85_448 / 44_960, abs=1e-4)
    # host and network in proportion to TDP on both sides leave the ratio unchanged
    assert ch.values["pb_prop"] == pytest.approx(ch.values["pb_rated"])


def test_hbm_per_stack_and_per_gigawatt(ch):
    assert ch.numbers["hbm_per_stack"] == "36"                                 # 216 GB / 6 stacks
    assert ch.values["hbm_chips_gw"] == pytest.approx(1e9 / ch.values["hbm_w"])
    assert ch.values["hbm_stacks_gw"] == pytest.approx(6 * ch.values["hbm_chips_gw"] / 1e6)


def test_amdahl_on_the_kernel_share(ch):
    f = ch.values["k_share_bt"] / 100
    assert ch.values["k_bt_lo"] == pytest.approx(1 / ((1 - f) + f / 1.5))
    assert ch.values["k_bt_hi"] == pytest.approx(1 / ((1 - f) + f / 1.8))


def test_business_arithmetic(ch):
    assert ch.numbers["bz_margin_factor"] == "2.7"       # (1 - 0.38) / (1 - 0.77) = 2.696
    assert ch.numbers["bz_margin_asic"] == "69"          # 1 - 0.62 x 0.5
    assert ch.numbers["bz_life_lo"] == "40" and ch.numbers["bz_life_hi"] == "45"   # 80-90 % x 50 %
    assert ch.numbers["bz_margin_watt_hi"] == "67"       # 1 - 0.62 / 1.9


def test_bad_parameters_are_named(defaults):
    with pytest.raises(UnknownNameError, match="'best'"):
        chapter.compute(**{**defaults, "vera_rubin_cases": ["best"]})
    with pytest.raises(UnknownNameError, match="'wall'"):
        chapter.compute(**{**defaults, "hbm_power_basis": "wall"})


def test_public_data_table_in_the_seeds_order(ch):
    t = ch.tables["public-data"]
    assert t.columns == ["question", "what the public data answers", "what it cannot answer yet",
                         "the seed's row, as printed", "where this chapter treats it", "what the chapter finds",
                         "claims registered (status)"]
    assert t["question"].to_list() == ["basis of comparison", "range of performance", "software maturity", "availability"]
    assert t["the seed's row, as printed"][0] == "比较口径 | 相同公开模型、指定输入输出长度、公开功率归一化 | 整机电力、冷却、主机与网络是否完全计入"
    assert t["the seed's row, as printed"][3] == "可获得性 | 计划在 2026 年底前部署到 OpenAI 基础设施 | 外部客户何时、以何种产品和价格获得收益"
    # the first two rows quote the chapter's own numbers: the rated ratio is the published 85,448 / 44,960
    assert f"{85_448 / 44_960:.2f}x on rated TDP" in t["what the chapter finds"][0]
    assert f"{ch.numbers['pb_per']}x with a GB200's host and network per chip" in t["what the chapter finds"][0]
    assert f"{ch.numbers['sh_worst_r']}x ({ch.numbers['sh_worst']})" in t["what the chapter finds"][1]
    assert t["what the chapter finds"][2] == "nothing public checks it: 4 of its 4 claims are not checkable"


def test_three_lines_table_quotes_the_chapters_numbers(ch):
    t = ch.tables["three-lines"]
    got = t["what the chapter computes"].to_list()
    vr = ch.tables["vera-rubin"].filter(ch.tables["vera-rubin"]["metric"] == "per kW at peak")
    lo, hi = 100 * vr["remaining"].min(), 100 * vr["remaining"].max()
    assert f"{lo:.0f}–{hi:.0f} % of the per-watt advantage at peak is left" in got[0]
    assert f"ahead in {ch.numbers['vr_behind']} of {ch.numbers['vr_pairs']}" in got[0]
    assert "1.2 quarters" in got[1]                     # 105 / 85.4 billion USD = 1.23
    assert got[2].startswith("36 GB per stack")         # 216 GB / 6 stacks, seed 004
    assert ch.values["hbm_stacks_gw"] == pytest.approx(6 * ch.values["hbm_chips_gw"] / 1e6)   # six stacks a chip
    assert f"{ch.numbers['hbm_stacks_gw']} million stacks" in got[2]
    assert f"{ch.numbers['hbm_share_gw']} % of the 2026 HBM forecast" in got[2]


def test_shown_tables_name_chips_models_and_ratios_in_words(ch):
    """No chip or model key, kind-of-ratio key or claim id in a cell or header of the tables this adds words to."""
    vr = ch.tables["vera-rubin"]
    assert set(vr["metric"]) == {"per kW at peak", "single user", "E2E", "matched"}
    assert set(vr["model"]) == {"gpt-oss-120b", "DeepSeek-R1-0528", "Kimi K2.5"}
    assert "NVIDIA GB200 (Blackwell GPU in GB200 NVL72)" in set(vr["baseline"])
    pws = ch.tables["per-watt-specs"]["chip"].to_list()
    assert pws[0] == "OpenAI Jalapeño" and pws[1] == "NVIDIA Rubin GPU (Vera Rubin NVL72, formerly NVL144), pessimistic case"
    assert ch.tables["hbm"]["chip"][0] == "OpenAI Jalapeño"
    k = ch.tables["kernels"]
    assert "whole-step speedup, blocks 1.5x faster" in k.columns and "whole-step speedup, blocks 1.8x faster" in k.columns
    f = ch.values["k_share_bt"] / 100                    # Amdahl at the best TBT, as the prose quotes it
    assert k["whole-step speedup, blocks 1.5x faster"][0] == pytest.approx(1 / ((1 - f) + f / 1.5), rel=1e-3)
    biz = ch.tables["business"]
    assert biz["claims (as printed)"][0] == "92 billion USD; 96 %"     # seed 004's consensus and growth
    assert "quantity" in ch.tables["claims-kernels"].columns
