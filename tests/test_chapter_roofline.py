"""The roofline chapter module: the bounds its prose quotes, worked by hand (2/b, ridge points, the
prefill FLOPs, the LPU chip count of the seeds), and every key and slot the notebook uses."""

import math

import chapter_sources
import polars as pl
import pytest

from jalapeno import bounds, specs, subject
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
    # one rule with the systems chapter: whole chips (a ceiling), racks their fraction, whole racks its ceiling
    assert ch.values["lpu_racks_bare"] == pytest.approx(ch.values["lpu_chips_bare"] / 256)
    assert ch.values["lpu_whole_racks_bare"] == math.ceil(ch.values["lpu_racks_bare"]) == 6
    assert ch.numbers["lpu_sram_mb"] == "500" and ch.numbers["lpu_rack"] == "256"
    # the KV cache of 64 sequences costs chips on top of the weights
    assert ch.values["lpu_chips_dsr1"] > ch.values["lpu_chips_bare"]


def test_an_lpu_without_sram_is_refused(defaults):
    with pytest.raises(ValueError, match="gb200"):
        chapter.compute(**{**defaults, "lpu": "gb200"})


# ---- the worked example: one decode step of gpt-oss-120b, step by step --------------------------------

def test_the_worked_steps_add_up_to_what_the_evaluator_returns(ch):
    # hand-worked arithmetic on the values behind the glued numbers, then against an independent evaluation
    configs = subject.worked_configurations("fastest")
    for k, config in (("j", configs["jalapeno"]), ("g", configs["gb200"])):
        v = ch.values
        bw, c = v[f"we_{k}_bw_tb"] * 1e12, v[f"we_{k}_pflops"] * 1e15
        # 1-3: bytes over the peak bandwidth, FLOPs over the peak FLOP/s
        assert v[f"we_{k}_weights_us"] == pytest.approx(v[f"we_{k}_weight_mb"] * 1e6 / bw * 1e6, rel=1e-9)
        assert v[f"we_{k}_kv_us"] == pytest.approx(v[f"we_{k}_kv_mb"] * 1e6 / bw * 1e6, rel=1e-9)
        assert v[f"we_{k}_compute_us"] == pytest.approx(v[f"we_{k}_gflop"] * 1e9 / c * 1e6, rel=1e-9)
        # 4: the roofline is KV + max(weights, FLOPs); its speed is one over it
        roof = v[f"we_{k}_kv_us"] + max(v[f"we_{k}_weights_us"], v[f"we_{k}_compute_us"])
        assert v[f"we_{k}_roofline_us"] == pytest.approx(roof, rel=1e-9)
        assert v[f"we_{k}_roofline_tok_s"] == pytest.approx(1e6 / roof, rel=1e-9)
        # 5: memory at eta_mem, FLOPs at eta_compute of peak
        eta_m, eta_c = v[f"we_{k}_eta_mem"], v[f"we_{k}_eta_compute"]
        assert v[f"we_{k}_fit_compute_us"] == pytest.approx(v[f"we_{k}_compute_us"] / eta_c, rel=1e-9)
        fit_roof = (v[f"we_{k}_kv_us"] + max(v[f"we_{k}_weights_us"], v[f"we_{k}_compute_us"] * eta_m / eta_c)) / eta_m
        assert v[f"we_{k}_fit_roofline_us"] == pytest.approx(fit_roof, rel=1e-9)
        # 8: 36 layers x (per-layer overhead + per-sequence overhead x 1 sequence), gpt-oss's GQA layers (factor 1)
        assert v["we_layers"] == 36
        assert v[f"we_{k}_overhead_us"] == pytest.approx(36 * (v[f"we_{k}_tau_us"] + v[f"we_{k}_beta_us"]), rel=1e-9)
        # 6: two all-reduces a layer on a worker of several chips, each at least the fixed latency of a
        # collective; none on one chip
        if v[f"we_{k}_chips"] > 1:
            assert v[f"we_{k}_allreduce_us"] >= 2 * 36 * v[f"we_{k}_alpha_us"] * (1 - 1e-9)
        else:
            assert v[f"we_{k}_allreduce_us"] == 0
        # 9: the step is the sum of its parts, and it is what the evaluator returns
        total_us = fit_roof + v[f"we_{k}_allreduce_us"] + v[f"we_{k}_all_to_all_us"] + v[f"we_{k}_overhead_us"]
        assert v[f"we_{k}_total_ms"] * 1e3 == pytest.approx(total_us, rel=1e-9)
        evaluated = chapter.worked_step(config)["fitted"]
        assert float(evaluated.decode_step_s) * 1e6 == pytest.approx(total_us, rel=1e-9)
        assert v[f"we_{k}_total_tok_s"] == pytest.approx(1 / float(evaluated.tpot_s), rel=1e-9)


def test_the_worked_example_meets_the_published_and_measured_steps(ch):
    # gpt-oss-120b: 36 layers, 128 experts, top-4, hidden size 2,880 (openai/gpt-oss-120b config.json)
    assert (ch.numbers["we_layers"], ch.numbers["we_experts"], ch.numbers["we_topk"], ch.numbers["we_hidden"]) == \
        ("36", "128", "4", "2,880")
    # GB200 per GPU: 8 TB/s of HBM3e, 10 PFLOP/s dense FP4 (NVIDIA datasheet)
    assert (ch.numbers["we_g_bw_tb"], ch.numbers["we_g_pflops"]) == ("8.0", "10.0")
    # Jalapeño's published minimum TBT, 0.69 ms (seed 000, claim gptoss-jalapeno-tbt): its fitted overhead
    # reproduces it by construction, to the printed two decimals
    assert ch.numbers["we_j_target_ms"] == "0.69" and ch.numbers["we_j_total_ms"] == "0.69"
    # GB200's best measured TPOT without MTP is 1.86-1.88 ms (the seed's 1.87 ms; InferenceX runs at
    # concurrency 1); the calibrated prediction is within 10 % of it
    assert 1.86 <= ch.values["we_g_target_ms"] <= 1.88
    assert ch.values["we_g_total_ms"] == pytest.approx(ch.values["we_g_target_ms"], rel=0.10)
    # the prose: what makes Jalapeño's step the faster is less the bytes than the smaller fixed cost per
    # layer: its achieved roofline part is the longer, its per-layer overhead the shorter
    v = ch.values
    assert v["we_j_total_ms"] < v["we_g_total_ms"] and v["we_j_overhead_us"] < v["we_g_overhead_us"]
    assert v["we_j_fit_roofline_us"] > v["we_g_fit_roofline_us"]
    for k in ("j", "g"):
        assert v[f"we_{k}_roofline_pct"] == pytest.approx(100 * v[f"we_{k}_fit_roofline_us"] / (1e3 * v[f"we_{k}_total_ms"]))


# ---- the chapter's figures ----------------------------------------------------------------------------

def test_roofline_draws_a_chip_with_the_same_line_as_another_on_top_of_it():
    curves = bounds.roofline_curves([specs.chip(c) for c in ("gb200", "mi355x", "jalapeno")], "fp4")
    points = bounds.phase_points(specs.model("gpt-oss-120b"), specs.chip("jalapeno"))
    spec = chapter.roofline(curves, points).to_dict()
    drawn = [{r["chip"] for r in spec["datasets"][layer["data"]["name"]]} for layer in spec["layer"][:2]]
    # GB200 and MI355X have the same peak and bandwidth: MI355X dashed over GB200, so both colours show
    assert drawn == [{"gb200", "jalapeno"}, {"mi355x"}]
    assert spec["layer"][1]["mark"]["strokeDash"]


def test_the_fraction_figure_marks_the_seeds_169_beside_the_measured_151(ch):
    """Seeds 001/004: about 700 against about 169 tok/s/user on DeepSeek-R1; GB200's best measured point
    without speculative decoding is 151 tok/s/user (InferenceMAX). The figure marks the seeds' 169 over the
    same bound as GB200's bar, on that bar's row, from the claims (not typed)."""
    spec = ch.figures["fraction"].chart.to_dict()
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["bar", "point"]  # the bars first, as before
    (rows,) = spec["datasets"].values()
    marked = [r for r in rows if r.get("seeds_tok_s_user") is not None]
    assert [(r["model"], r["chip"]) for r in marked] == [chapter.SEEDS_ROW]
    (r,) = marked
    assert r["seeds_tok_s_user"] == 169 and round(r["tok_s_user"]) == 151
    assert r["seeds_fraction"] == pytest.approx(169 / r["bound_tok_s_user"], rel=1e-12)
    # the seeds' speed sits above the measured one, over the same bound: 20 % against 18 %
    assert (ch.numbers["pub_dsr1_baseline_frac"], ch.numbers["g_dsr1_frac"]) == ("20", "18")
    assert spec["layer"][1]["encoding"]["shape"]["title"] == chapter.SEEDS_LEGEND
    assert spec["layer"][1]["encoding"]["shape"]["scale"]["domain"] == ["169 tok/s/user"]
    # without the row (GB200 not drawn) there is nothing to mark: the bars alone
    frac = ch.tables["fraction"]
    bars = chapter.fraction_of_bound(frac.filter(pl.col("chip") != "gb200"), seeds_speed=169).to_dict()
    assert bars["mark"]["type"] == "bar"


def test_the_roofline_axis_title_is_in_two_lines(ch):
    # in one line, 40 characters, it was cut at a phone's 390 px column
    x = ch.figures["roofline"].chart.to_dict()["layer"][0]["encoding"]["x"]
    assert x["title"] == ["arithmetic intensity", "(FLOP per HBM byte)"]
    assert all(len(line) <= 24 for line in x["title"])


def test_a_context_no_window_holds_is_refused_before_anything_runs():
    """gpt-oss-120b's window is 131,072 tokens (max_position_embeddings); its prefill bound decodes 2
    tokens after a prompt of context_tokens, so 131,070 is the most; DeepSeek-R1's is 163,840."""
    chapter.check(models=["gpt-oss-120b"], focus_model="gpt-oss-120b", context_tokens=131070)
    with pytest.raises(ValueError, match="context_tokens 131,071 is too long: the prefill bound's prompt and the 2 "
                                         "tokens it decodes must fit in gpt-oss-120b's context window of 131,072 "
                                         "tokens; at most 131,070 with these models"):
        chapter.check(models=["gpt-oss-120b"], focus_model="gpt-oss-120b", context_tokens=131071)
    with pytest.raises(ValueError, match="context_tokens 140,000 is too long: gpt-oss-120b's context window is "
                                         "131,072 tokens; at most 131,072 with these models"):
        chapter.check(models=["gpt-oss-120b", "deepseek-r1"], focus_model="deepseek-r1", context_tokens=140000)
