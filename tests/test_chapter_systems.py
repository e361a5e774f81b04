"""The systems chapter's module: its defaults reproduce the published numbers the chapter checks, and it
provides every number, table and figure the notebook shows."""

import re

import chapter_sources
import numpy as np
import polars as pl
import pytest
import vl_convert as vlc

import jalapeno as jp
from jalapeno import charts, diagrams, network
from jalapeno import systems as sy
from jalapeno.chapters import systems as chapter

NAME = "systems"
defaults, ch = chapter_sources.fixtures(NAME, chapter)


def test_fabric_diameters_are_the_seeds(ch):
    # "3D Torus 路径可达 16 hops" and "BoardFly（路径上限 7 hops）" (data/claims.csv: tpu8t-torus-hops,
    # tpu8i-boardfly-hops): 1,024 chips as an 8 x 8 x 16 torus, 4 + 4 + 8 hops; the 8i pod's Boardfly.
    assert ch.numbers["sys_torus_shape"] == "8 x 8 x 16"
    assert ch.values["sys_torus_hops"] == 16
    assert ch.values["sys_pod_hops"] == 7


def test_lpx_rack_is_the_published_rack(ch):
    # 256 LPUs x 500 MB = 128 GB of SRAM, 40 PB/s (claims groq-lpx-rack-sram, groq-lpx-rack-sram-bandwidth).
    assert ch.values["sys_lpx_sram_gb"] == pytest.approx(128)
    assert ch.values["sys_lpx_bw_pb"] == pytest.approx(40)
    # "完整跑 DeepSeek V3 需要约 1342 颗芯片": 671 B parameters at 8 bits over 500 MB is about 1,342 LPUs' worth.
    assert ch.values["sys_ds_sram_exact"] == pytest.approx(1342, abs=0.5)
    assert ch.values["sys_ds_lpus"] == pytest.approx(1342, abs=1)
    # whole chips (a ceiling of the SRAM), racks their fraction (not rounded up), whole racks its ceiling
    assert ch.values["sys_ds_lpus"] >= ch.values["sys_ds_sram_exact"]
    assert ch.values["sys_ds_racks"] == pytest.approx(ch.values["sys_ds_lpus"] / 256)
    assert ch.values["sys_ds_whole_racks"] == 6


def test_deepseek_ep_bound_is_the_papers(ch):
    # DeepSeek-V3 technical report (arXiv:2412.19437), the EP decode example: 120.96 µs per layer,
    # a TPOT of 14.76 ms, about 67 tok/s over 50 GB/s InfiniBand and about 1,200 tok/s at NVL72's 900 GB/s.
    assert ch.numbers["sys_ds_layer_us"] == "120.96"
    assert ch.numbers["sys_ds_tpot_ms"] == "14.76"
    assert 67 <= ch.values["sys_ds_tok_s"] < 68
    assert ch.values["sys_ds_nvl_tok_s"] == pytest.approx(1200, rel=0.02)


def test_gemma_record_budget_is_the_record(ch):
    # Groq's 3,400 tok/s on Gemma 4 31B (claim groq-gemma4-tok-s) is 1 / 3,400 s = 294 µs per token.
    assert ch.numbers["sys_record"] == "3,400"
    assert ch.numbers["sys_budget_us"] == "294"


def test_every_quoted_key_and_every_displayed_slot_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []
    chapter_sources.check_slots(NAME, ch)
    assert {f.name for f in ch.figures.values()} >= {"systems-topology-hops", "systems-collectives",
                                                      "systems-jalapeno-fabric", "systems-capacity",
                                                      "systems-diagram-tpu-8t", "systems-diagram-tpu-8i",
                                                      "systems-diagram-groq-3-lpx", "systems-diagram-nvl72",
                                                      "systems-diagram-jalapeno"}


def test_the_diagrams_are_drawn_from_the_topologies_that_give_the_quoted_hops(ch, defaults):
    # the diagram's title carries the hop count the prose quotes (16 on the torus, 7 on Boardfly: the seeds')
    # (the title is drawn in lines, so a phone's column holds it: read it as one text)
    title = lambda slot, c=ch: " ".join(c.figures[slot].chart.to_dict()["title"]["text"])  # noqa: E731
    assert f"diameter {ch.numbers['sys_torus_hops']} hops" in title("diagram_tpu_8t") and "8 x 8 x 16" in title("diagram_tpu_8t")
    assert f"diameter {ch.numbers['sys_boardfly_hops']} hops" in title("diagram_tpu_8i")
    assert f"diameter {ch.numbers['sys_lpx_hops']} hops" in title("diagram_lpx")
    assert "72 chips on one switch, diameter 1 hop" in title("diagram_nvl72")
    # a change of size redraws the TPUs: 512 chips is an 8 x 8 x 8 torus, diameter 12
    small = chapter.compute(**(defaults | {"size": 512}))
    assert "512 chips as an 8 x 8 x 8 3D torus, diameter 12 hops" in title("diagram_tpu_8t", small)


def test_an_unknown_topology_names_the_parameter_and_the_choices(defaults):
    p = defaults | {"topology": "hypercube"}
    with pytest.raises(jp.UnknownNameError, match="topology 'hypercube'.*switched, ring, torus2d, torus3d, dragonfly"):
        chapter.compute(**p)


# ---- the chapter's figures ----------------------------------------------------------------------------

def test_capacity_chart_draws_every_bar_at_its_starting_knobs():
    m = [jp.model("gpt-oss-120b"), jp.model("deepseek-r1")]
    cap = sy.capacity_table(m, ["gb200-nvl72", "groq-3-lpx"], contexts=(8192, 32768), jalapeno=True)
    svg = vlc.vegalite_to_svg(chapter.capacity_chips(cap, 8192, "hbm", 64).to_dict())
    shown = cap.filter((pl.col("context_tokens") == 8192) & (pl.col("tier") == "hbm"))
    assert svg.count('aria-roledescription="bar"') == shown.height == 4  # one-chip bars too (log scale from 0.5)


def test_chapter_charts_embed_small_frames():
    g = jp.model("gemma-4-31b")
    specs_ = [chapter.topology_hops(network.size_sweep()).to_dict(),
              chapter.budget_split(sy.lpu_budget(g, 3400), "t").to_dict(),
              chapter.lpu_scaling(sy.lpu_scaling(g)).to_dict(),
              chapter.tpu_all_to_all(sy.tpu_all_to_all([jp.model("deepseek-r1")], tokens_per_chip=[1, 8]), 1.0).to_dict()]
    for spec in specs_:
        rows = sum(len(v) for v in spec.get("datasets", {}).values())
        assert 0 < rows < 5000


def test_the_diagram_is_deterministic_vector_output():
    d = diagrams.drawing(network.dragonfly((8, 32)))
    a = charts.to_svg(chapter.topology_diagram(d, title="LPX").to_dict())
    b = charts.to_svg(chapter.topology_diagram(diagrams.drawing(network.dragonfly((8, 32))), title="LPX").to_dict())
    assert a == b and a.lstrip().startswith("<svg")
    assert np.isfinite(d["nodes"]["x"].to_numpy()).all()
    # a link's transparency is its stroke's: an element's own opacity makes a rasteriser (the build's PNG,
    # vl_convert.svg_to_png) composite it in a layer of its own, 2 s for this diagram's 500 links
    links = re.findall(r'<line [^>]*aria-roledescription="rule mark"[^>]*>', a)
    assert len(links) > 400 and all('stroke-opacity="0.' in x and " opacity=" not in x for x in links)


def test_the_system_frontiers_draw_the_calibrated_frontiers_bands(ch):
    """GPU alone and Jalapeño carry their scheme's 80 % band (pareto.with_band; Jalapeño scheme (c)); the
    LPU's upper bound, which no scheme measured, none."""
    from jalapeno import calibration, schemes
    m, gpu = jp.model("gpt-oss-120b"), jp.chip("gb200")
    b = chapter.banded_systems(sy.system_frontiers(m, gpu), m, gpu)
    by = {s: g for (s,), g in b.group_by("system")}
    j = by["Jalapeño"]
    assert j["band_scheme"].unique().to_list() == [schemes.SCHEMES["anchored"].label]
    assert (j["throughput_tok_s_chip_high"] / j["throughput_tok_s_chip"]).to_numpy() == pytest.approx(
        np.exp(calibration.scheme_half_width("anchored")))
    assert by["gb200, GPU only"]["band_scheme"].null_count() == 0
    assert by["gb200 prefill + LPU decode"]["throughput_tok_s_chip_low"].null_count() == by["gb200 prefill + LPU decode"].height
    spec = ch.figures["system_frontiers"].chart.to_dict()
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["area", "line"]


def test_capacity_plans_table_is_the_plan_of_each_chip(ch, defaults):
    """The chapter's capacity plans are :func:`jalapeno.capacity_plan` of the focus model on each system's
    chip with HBM (and Jalapeño), one row per slice up to 64 chips; the quoted best slice is the row of the
    highest throughput per chip. Hand check of one row: gpt-oss-120b's KV cache at FP8 on GB200 over one
    chip, 2 x 8 x 64 x 18 x (8,192 + 1,024 + 128) bytes = 172,228,608 a sequence."""

    t = ch.tables["capacity_plans"]
    gb200 = t.filter(pl.col("chip") == "GB200")
    assert gb200["chips_per_replica"].to_list() == [1, 2, 4, 8, 16, 32, 64]
    assert gb200["kv_per_sequence_per_chip_bytes"][0] == 2 * 8 * 64 * 18 * (8192 + 1024 + 128)
    plan = jp.capacity_plan("gb200", defaults["model"], precision=defaults["plan_precision"],
                            kv_precision=defaults["kv_precision"], context_tokens=defaults["context_tokens"],
                            decode_tokens=defaults["decode_tokens"], chips=[1, 2, 4, 8, 16, 32, 64])
    assert gb200["largest_batch"].to_list() == plan["largest_batch"].to_list()
    assert gb200["throughput_tok_s_chip"].to_list() == plan["throughput_tok_s_chip"].to_list()
    best = plan.filter(pl.col("most_efficient")).row(0, named=True)
    assert f"GB200, {best['chips']} chips ({best['largest_batch']:,} sequences" in ch.numbers["sys_plan_best"]
    assert set(t["chip"]) == {"GB200", "GB300", "TPU 8t", "TPU 8i", "Jalapeño"}
    assert ch.numbers["sys_plan_left_out"] == "Groq 3 LPU"  # SRAM only: no HBM plan


def test_captions_say_the_weights_precisions_in_words():
    """The benchmark's recipes (jalapeno.serving.RECIPES): gpt-oss-120b at FP4 is MXFP4 experts and BF16
    elsewhere, DeepSeek-R1 and Kimi K2.5 NVFP4 experts and FP8 elsewhere; at FP8 every weight is FP8."""
    models = [jp.model("gpt-oss-120b"), jp.model("deepseek-r1"), jp.model("kimi-k2.5")]
    assert chapter.recipe_words(models, "fp4") == ("experts at MXFP4, the other weights at BF16 (gpt-oss-120b); "
                                                   "experts at NVFP4, the other weights at FP8 (DeepSeek-R1-0528, "
                                                   "Kimi K2.5)")
    assert chapter.recipe_words(models, "fp8") == "every weight at FP8"
