"""The roofline chapter module: the bounds its prose quotes, worked by hand (2/b, ridge points, the
prefill FLOPs, the LPU chip count of the seeds), and every key and slot the notebook uses."""

import math

import chapter_sources
import pytest

from jalapeno.chapters import roofline as chapter

NAME = "roofline"
defaults, ch = chapter_sources.fixtures(NAME, chapter)


def test_every_key_and_slot_the_notebook_uses_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []
    chapter_sources.check_slots(NAME, ch)


def test_figures_keep_their_export_names(ch):
    assert {f.name for f in ch.figures.values()} == {"roofline", "batch-sweep-gpt-oss-120b", "fraction-of-roofline"}


def test_decode_intensity_is_two_flops_per_weight_byte(ch):
    # one multiply-add (2 FLOPs) per weight read: 2 / 0.5 byte, 2 / 1 byte, 2 / 2 bytes
    assert (ch.numbers["ai_fp4"], ch.numbers["ai_fp8"], ch.numbers["ai_bf16"]) == ("4", "2", "1")
    # at batch 1 the KV cache and attention add a little to 2/b (4 FLOP/byte at fp4), not a multiple
    assert 4 < ch.values["decode1_intensity"] < 6


def test_gb200_ridge_points_from_nvidias_datasheet(ch):
    # GB200 (per GPU): 10 PFLOP/s dense FP4, 5 FP8, 2.5 BF16; 8 TB/s HBM3e
    gb200 = ch.tables["ridges"].filter(chip="gb200")
    ridge = dict(zip(gb200["precision"], gb200["ridge_flop_per_byte"]))
    assert ridge == pytest.approx({"fp4": 1e16 / 8e12, "fp8": 5e15 / 8e12, "bf16": 2.5e15 / 8e12})
    assert ch.values["ridge_min"] < 1e16 / 8e12 * 0.5 and ch.values["ridge_max"] > 1e16 / 8e12  # a range, not one chip


def test_the_published_speeds_quoted(ch):
    assert ch.numbers["j_gptoss_speed"] == "1,459"       # seed 000: Jalapeño single-user, gpt-oss-120b
    assert ch.numbers["j_dsr1_speed"] == "700"           # seed 000: Jalapeño single-user, DeepSeek-R1
    assert ch.numbers["pub_dsr1_baseline"] == "169"      # the DeepSeek-R1 baseline of the same comparison
    assert ch.numbers["ctx"] == "8,192"


def test_deepseek_r1_needs_two_jalapenos_to_hold_its_fp4_weights(ch):
    # 671 B parameters x 0.5 byte = 335.5 GB over 216 GB of HBM per chip: 2 chips
    assert ch.numbers["j_hbm_gb"] == "216"
    assert ch.values["j_dsr1_chips"] == math.ceil(671e9 * 0.5 / 216e9) == 2


def test_prefill_bound_is_at_least_the_weight_flops_of_the_prompt(ch):
    # 2 FLOPs x 5.13 B active parameters x 8,192 tokens at 13.4 PFLOP/s (FP4) = 6.27 ms; attention adds a little
    weights_ms = 2 * 5.1e9 * 8192 / 13.4e15 * 1e3
    assert weights_ms <= ch.values["prefill_ms"] < 1.1 * weights_ms


def test_lpu_chip_count_matches_the_seeds_arithmetic(ch):
    # seed 000: 671 B parameters x 1 byte (FP8) / 500 MB per LPU = 1,342 chips, "more than five racks" of 256;
    # 671 B is rounded to 3 figures (670.5 B to 671.5 B: 1,341 to 1,343 chips)
    assert ch.numbers["lpu_claim"] == "1,342"
    assert 1341 <= ch.values["lpu_chips_bare"] <= 1343
    assert 5 < ch.values["lpu_racks_bare"] < 6
    assert ch.numbers["lpu_sram_mb"] == "500" and ch.numbers["lpu_rack"] == "256"
    # the KV cache of 64 sequences costs chips on top of the weights
    assert ch.values["lpu_chips_dsr1"] > ch.values["lpu_chips_bare"]


def test_an_lpu_without_sram_is_refused(defaults):
    with pytest.raises(ValueError, match="gb200"):
        chapter.compute(**{**defaults, "lpu": "gb200"})
