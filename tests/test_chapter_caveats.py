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
