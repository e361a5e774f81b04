"""Systems as machines: the loaders, the LPX numbers, capacity arithmetic, the LPU decode model, TPU 8t
against 8i, Jalapeño's fabric, and the claims this chapter settles."""

import math

import numpy as np
import polars as pl
import pytest

import jalapeno as jp
from jalapeno import calibration, registry, network, serving, subject
from jalapeno import capacity_plans as cp
from jalapeno import systems as sy


# ---- loading -----------------------------------------------------------------------------------------

def test_systems_load_with_their_fabrics():
    lpx = sy.system("groq-3-lpx")
    assert lpx.n_chips == 256 and lpx.topology.label == "dragonfly 8x32"
    assert lpx.topology.hop_latency_s == pytest.approx(0.5e-6)
    assert lpx.topology.injection_bandwidth_bytes_per_s == pytest.approx(2.5e12 / 2)  # chip_specs, both directions
    assert lpx.peak_fp8_flops_per_s_per_chip == pytest.approx(315e15 / 256)
    i8 = sy.system("tpu-8i-pod")
    assert i8.topology.injection_bandwidth_bytes_per_s == pytest.approx(2.4e12 / 2)  # from system_specs.csv
    assert i8.provenance["scale_up_bandwidth"][0] == "derived"
    assert sy.system("GB200-NVL72").host_memory_bytes_per_chip == pytest.approx(1.87e12 / 4)
    assert sy.system("tpu-8t-1024").topology.shape == (8, 8, 16)


def test_unknown_system_lists_the_systems():
    with pytest.raises(jp.UnknownNameError, match="unknown system 'nvl576'; valid systems: gb200-nvl72"):
        sy.system("nvl576")


def test_system_spec_with_a_wrong_unit_is_refused(edit_data):
    edit_data("system_specs.csv", "groq-3-lpx,hop_latency,0.5,us,", "groq-3-lpx,hop_latency,0.5,GB,")
    with pytest.raises(jp.DataError, match=r"system_specs\.csv: line \d+, column 'unit'.*not a unit of hop_latency"):
        sy.system("groq-3-lpx")


def test_system_spec_for_an_unlisted_system_is_refused(data_copy):
    p = data_copy / "system_specs.csv"
    p.write_text(p.read_text() + "nvl576,hop_latency,1,us,estimate,,somewhere\n")
    with pytest.raises(jp.DataError, match="system not in systems.csv"):
        sy.system("gb200-nvl72")


# ---- Groq 3 LPX ------------------------------------------------------------------------------------------

def test_lpx_rack_totals_from_the_chip_data():
    t = sy.lpx_rack_totals()
    assert t["chips"] == 256
    assert t["sram_bytes"] == pytest.approx(256 * 500e6) == pytest.approx(128e9)
    assert t["sram_bandwidth_bytes_per_s"] == pytest.approx(256 * 156.25e12) == pytest.approx(40e15)
    assert t["scale_up_bandwidth_bytes_per_s"] == pytest.approx(640e12)


def test_deepseek_v3_in_sram():
    m = jp.model("deepseek-r1")
    row = sy.sram_capacity_table([m], weight_bits=8).row(0, named=True)
    assert m.total_params() / 500e6 == pytest.approx(1342.05, abs=0.05)
    assert row["chips"] == 1343 and row["whole_racks"] == 6
    assert row["chips_exact"] == pytest.approx(671.026e9 / 500e6)  # the seed's "about 1342", before the ceiling
    assert row["racks"] == pytest.approx(1343 / 256)
    # 64 sequences of 8,192 tokens of MLA cache at FP8: 61 layers x (512 + 64) values x 1 byte per token
    kv = 64 * 61 * 576 * 8192
    with_kv = sy.sram_capacity_table([m], weight_bits=8, concurrency=64, context_tokens=8192).row(0, named=True)
    assert with_kv["kv_bytes"] == kv
    assert with_kv["chips"] == math.ceil((m.total_params() + kv) / 500e6) == 1379


# ---- capacity --------------------------------------------------------------------------------------------

def test_capacity_arithmetic_hand_worked():
    m = jp.model("gpt-oss-120b")
    cap = sy.capacity_table([m], ["gb200-nvl72", "groq-3-lpx", "tpu-8i-pod"], contexts=(131072,), concurrency=64,
                            weight_precision="fp8", kv_precision="fp8", jalapeno=True)
    # gpt-oss KV at FP8: 18 full layers hold every token, 18 sliding layers at most 128; 2 x 8 x 64 values each
    kv_seq = 18 * 1024 * 131072 + 18 * 1024 * 128
    need = m.total_params() + 64 * kv_seq  # the FP8 recipe: every weight one byte
    get = lambda s, tier: cap.filter((pl.col("system") == s) & (pl.col("tier") == tier)).row(0, named=True)
    # usable shares: HBM and host memory 92 % (data/model_constants.csv), SRAM all of it
    assert get("gb200-nvl72", "hbm")["bytes_needed"] == need
    assert get("gb200-nvl72", "hbm")["usable_bytes_per_chip"] == 171_120_000_000  # 186 GB x 0.92
    assert get("gb200-nvl72", "hbm")["chips"] == math.ceil(need / 171.12e9) == 2
    assert get("gb200-nvl72", "hbm+host")["usable_bytes_per_chip"] == 171_120_000_000 + 430_100_000_000  # + 467.5 GB x 0.92
    assert get("gb200-nvl72", "hbm+host")["chips"] == 1
    assert get("groq-3-lpx", "sram")["chips"] == math.ceil(need / 500e6) == 544
    assert get("groq-3-lpx", "sram")["systems_needed"] == pytest.approx(544 / 256)
    assert get("tpu-8i-pod", "hbm")["usable_bytes_per_chip"] == 264_960_000_000  # 288 GB x 0.92, SRAM not a weight store
    assert get("jalapeno", "hbm")["systems_needed"] is None
    tiers = set(zip(cap["system"], cap["tier"]))
    assert ("gb200-nvl72", "sram") not in tiers and ("groq-3-lpx", "hbm") not in tiers  # tiers a system lacks
    assert {t for s, t in tiers if s == "jalapeno"} == {"hbm"}


def test_bad_capacity_inputs():
    with pytest.raises(ValueError, match="concurrency must be a non-negative integer, got -1"):
        sy.capacity_table([jp.model("gpt-oss-120b")], ["gb200-nvl72"], concurrency=-1)
    with pytest.raises(jp.UnknownNameError, match="unknown memory tier 'dram'"):
        cp.tier_usable_bytes(jp.chip("gb200"), "dram")


# ---- the LPU decode model ------------------------------------------------------------------------------

def test_lpu_decode_hand_worked_gemma():
    g = jp.model("gemma-4-31b")
    bw, lat, inj = 156.25e12, 0.5e-6, 1.25e12
    r = sy.lpu_decode(g, stages=9, tp=8, batch=1, context_tokens=8192, weight_bits=8, kv_precision="fp8")
    weights = g.active_params() * 1.0 / (8 * bw)                          # every weight once, 8 chips a stage
    kv = g.kv_bytes_per_sequence(8192, "fp8") / (8 * bw)                  # 16 KV heads split 8 ways
    allreduce = 2 * g.num_hidden_layers * (2 * 1 * lat + 2 * 7 / 8 * g.hidden_size * 2 / inj)  # a tray: one hop
    ports = sy.system("groq-3-lpx").topology.ports_per_chip()
    handoff = 9 * (lat + g.hidden_size * 2 / (inj / ports))
    assert float(r["sram_s"]) == pytest.approx(weights + kv)
    assert float(r["allreduce_s"]) == pytest.approx(allreduce)
    assert float(r["handoff_s"]) == pytest.approx(handoff)
    assert float(r["tpot_s"]) == pytest.approx(weights + kv + allreduce + handoff)
    # a token's FLOPs are done stage after stage, each on the 8 chips of its stage
    assert float(r["compute_s"]) == pytest.approx(g.decode_flops_per_token(8192) / (8 * 315e15 / 256))
    assert float(r["output_tok_s_chip"]) == pytest.approx(1 / (float(r["tpot_s"]) / 9) / 72)
    assert bool(r["fits"])


def test_more_lpus_lower_throughput_per_chip():
    t = sy.lpu_scaling(jp.model("gemma-4-31b"))
    for tp, grp in t.group_by("tp"):
        g = grp.sort("chips")
        assert np.all(np.diff(g["output_tok_s_chip"].to_numpy()) < 0), f"tp={tp}"


def test_gemma_record_budget():
    g = jp.model("gemma-4-31b")
    best = sy.best_lpu_speed(g)
    assert best["interactivity_tok_s_user"] >= 3400
    b = sy.lpu_budget(g, 3400)
    for layout, grp in b.group_by("layout"):
        assert grp["time_s"].sum() == pytest.approx(1 / 3400)  # the components fill the budget exactly
        assert grp["budget_s"][0] == pytest.approx(1 / 3400)


def test_lpu_layout_errors():
    g = jp.model("gemma-4-31b")
    with pytest.raises(ValueError, match="stages must be in 1..60"):
        sy.lpu_decode(g, stages=61)
    with pytest.raises(jp.UnknownNameError, match="^unknown LPU weight width 5; valid LPU weight widths: 4, 8, 16$"):
        sy.lpu_decode(g, stages=10, weight_bits=5)
    with pytest.raises(ValueError, match="no SRAM capacity"):
        sy.lpu_decode(g, "gb200-nvl72", stages=10)
    with pytest.raises(ValueError, match="does not fit in the SRAM of 8 chips"):
        sy.lpu_layouts(g, max_chips=8)


def test_lpx_racks_join_as_one_more_dragonfly_level():
    m = jp.model("deepseek-r1")
    s = sy.lpx_for(m)
    assert s.topology.shape == (8, 32, 6) and s.n_chips == 1536
    assert s.topology.diameter_bound_hops() == 7
    assert sy.lpx_for(jp.model("gemma-4-31b")).n_chips == 256


# ---- frontiers -------------------------------------------------------------------------------------------

def test_disaggregated_frontier_counts_both_kinds_of_chip():
    m = jp.model("gpt-oss-120b")
    eff = calibration.load()
    f = sy.disaggregated_frontier(m, jp.chip("vera-rubin"), eff=eff, stack=sy.best_stack(eff))
    assert f.height >= 2
    assert np.all(np.diff(f["interactivity_tok_s_user"].to_numpy()) > 0)
    assert np.all(np.diff(f["throughput_tok_s_chip"].to_numpy()) < 0)
    assert (f["gpu_chips"] > 0).all() and (f["lpu_chips"] >= 234).all()  # at least the chips holding the weights


# ---- TPU 8t against 8i --------------------------------------------------------------------------------------

def test_tpu_fabrics_at_1024_chips():
    t = sy.tpu_topologies(1024)
    assert t["tpu-8t-1024"].topology.diameter_hops() == 16
    assert t["tpu-8i-pod"].topology.shape == (4, 8, 32)
    assert t["tpu-8i-pod"].topology.diameter_hops() == 7
    with pytest.raises(ValueError, match="multiple"):
        sy.tpu_topologies(1000)


def test_tpu_all_to_all_hand_worked_deepseek():
    m = jp.model("deepseek-r1")
    df = sy.tpu_all_to_all([m, jp.model("gemma-4-31b")], size=1024, tokens_per_chip=1)
    assert set(df["model"]) == {"deepseek-r1"}  # a dense model has no all-to-all
    row = {r["system"]: r for r in df.iter_rows(named=True)}
    out = 1 * 8 * 7168 * (1 + 2) * 1023 / 1024            # dispatch FP8 + combine BF16, to the other chips
    torus_h = (2 + 2 + 4) * 1024 / 1023
    torus = 2 * 16 * 1e-6 + out * torus_h / 1.2e12           # two collectives, 16 hops of 1 us each
    assert row["tpu-8t-1024"]["per_layer_s"] == pytest.approx(torus)
    assert row["tpu-8t-1024"]["per_token_s"] == pytest.approx(58 * torus)
    bf = network.dragonfly((4, 8, 32))
    assert row["tpu-8i-pod"]["per_layer_s"] == pytest.approx(2 * 7 * 1e-6 + out * bf.average_hops() / 1.2e12)
    assert row["tpu-8t-1024"]["per_token_s"] > 2 * row["tpu-8i-pod"]["per_token_s"]


# ---- Jalapeño's fabric ---------------------------------------------------------------------------------------

def test_jalapeno_targets():
    assert subject.target_tpot_s("gptoss-jalapeno-tbt", "tbt_ms") == pytest.approx(0.695e-3)   # 0.69 ms as printed
    assert subject.target_tpot_s("dsr1-jalapeno-single-user", "tok_s") == pytest.approx(1 / 700)


def test_fabric_scan_uses_the_pareto_chapters_jalapeno():
    # same chip and constants as the Pareto fit: on its fastest layout (64 chips, central scenario) and the
    # calibrated collective latency, the scan reproduces DeepSeek-R1's published 700 tok/s/user
    fit = subject.fit_jalapeno("central")
    layout = subject.fastest_layout("deepseek-r1", fit=fit)
    assert layout["n_chips"] == 64 and layout["interactivity_tok_s_user"] == pytest.approx(700, rel=0.005)
    r = serving.evaluate(jp.model("deepseek-r1"), subject.jalapeno_chip(), serving.Layout(n_chips=64), serving.Workload(concurrency=1), eff=fit.efficiency, stack="jalapeno")
    assert 1 / float(r.tpot_s) == pytest.approx(700, rel=0.005)


def test_systems_frontiers_are_the_pareto_chapters():
    m = jp.model("gpt-oss-120b")
    fit = subject.fit_jalapeno("central")
    f = sy.system_frontiers(m, jp.chip("gb200"), fit=fit)
    jal = f.filter(pl.col("system") == "Jalapeño")
    want = subject.jalapeno_frontier("gpt-oss-120b", "central", fit=fit)
    assert jal["interactivity_tok_s_user"].max() == pytest.approx(1 / 0.69e-3, rel=0.005)   # the published TBT
    assert jal["throughput_tok_s_chip"].max() == pytest.approx(85_448 * 0.7, rel=0.005)    # the published peak
    np.testing.assert_allclose(jal["throughput_tok_s_chip"], want["throughput_tok_s_chip"])


def test_fabric_scan_is_monotone_in_hop_latency():
    scan = sy.jalapeno_fabric_scan(domain_sizes=(4, 16), fabrics=("switched", "torus3d"),
                                   hop_latencies_s=np.geomspace(0.1e-6, 10e-6, 9))
    for _, grp in scan.group_by("model", "fabric", "chips"):
        g = grp.sort("hop_latency_s")
        assert np.all(np.diff(g["tpot_s"].to_numpy()) > 0)
        ok = g["consistent"].to_list()
        assert ok == sorted(ok, reverse=True)  # consistent up to a hop latency, then not
    best = sy.max_consistent_hop_latency(scan)
    ds = best.filter((pl.col("model") == "deepseek-r1") & (pl.col("chips") == 16)).sort("fabric")
    sw, t3 = ds.row(0, named=True), ds.row(1, named=True)
    assert sw["fabric"] == "switched" and t3["fabric"] == "torus3d"
    # more hops, less time per hop (None: not even the shortest scanned hop latency is consistent)
    assert sw["max_hop_latency_s"] > (t3["max_hop_latency_s"] or 0.0)


def test_jalapeno_requirements():
    req = sy.jalapeno_requirements([jp.model("gpt-oss-120b"), jp.model("deepseek-r1")], concurrency=64)
    rows = {r["model"]: r for r in req.iter_rows(named=True)}
    assert rows["gpt-oss-120b"]["chips"] == 1 and rows["gpt-oss-120b"]["required_injection_bytes_per_s"] is None
    assert rows["deepseek-r1"]["chips"] >= 2 and rows["deepseek-r1"]["required_injection_bytes_per_s"] > 0
    with pytest.raises(ValueError, match="comm_share must be in"):
        sy.jalapeno_requirements([jp.model("deepseek-r1")], comm_share=0)


# ---- the claims this chapter settles ----------------------------------------------------------------------------

def test_systems_claims_are_checked():
    t = registry.claims().filter(pl.col("chapter") == "systems")
    status = dict(zip(t["claim_id"], t["status"]))
    for cid in ("groq-lpu-sram", "groq-lpx-chips-per-rack", "groq-lpx-rack-sram", "groq-lpx-chips-deepseek-v3",
                "groq-lpx-racks-deepseek-v3", "tpu8i-hbm-stacks", "tpu8i-boardfly-hops", "tpu8t-torus-hops",
                "groq-gemma4-tok-s"):
        assert status[cid] == "consistent", cid
    # both ends share one source (a chip row derived from the same sentence): not agreement
    for cid in ("groq-lpx-rack-sram-bandwidth", "tpu8i-extra-hbm-stacks"):
        assert status[cid] == "restated", cid
    assert registry.claim("tpu8t-torus-hops")["computed"] == "16 hops"
    assert registry.claim("tpu8i-boardfly-hops")["computed"] == "7 hops"


def test_a_hop_count_check_can_fail(edit_data):
    edit_data("systems.csv", ",torus,8x8x16,", ",torus,4x16x16,")
    row = registry.claim("tpu8t-torus-hops")
    assert row["status"] == "inconsistent" and row["computed"] == "18 hops"


def test_the_rack_bandwidth_check_can_fail(edit_data):
    edit_data("claims.csv", "groq-lpx-rack-sram-bandwidth,40,", "groq-lpx-rack-sram-bandwidth,50,")
    row = registry.claim("groq-lpx-rack-sram-bandwidth")
    assert row["status"] == "inconsistent" and row["computed"] == "40.0 PB/s"
