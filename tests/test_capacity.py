"""Capacity plans (:func:`jalapeno.capacity_plan`): one worked by hand, the KV sharding rules, the errors."""

import math

import polars as pl
import pytest

import jalapeno as jp
from jalapeno import capacity_plans as cp, serving


def rel(a, b):
    return abs(a - b) / abs(b)


def test_deepseek_r1_on_h200_by_hand():
    """DeepSeek-R1 at FP8 (DeepSeek's own checkpoint: every weight and the KV cache at 1 byte) on H200,
    8,192 context tokens + 1,024 decode tokens = 9,216 tokens held per sequence.

    Chip (data/chips.csv, chip_specs.csv): 141 GB HBM3e, 4.8 TB/s, scale-up domain 8 (HGX H200).
    Usable share u = 0.92 (data/model_constants.csv): usable = floor(141e9 x 0.92) = 129,720,000,000 bytes.

    Weights: 671,026,404,352 parameters (config.json's shapes, ModelSpec.param_groups) x 1 byte. One chip:
    671.0 GB > 129.7 GB; 2: 335.5 GB; 4: 167.8 GB; 8: 83,878,300,544 bytes (exact: P / 8): the smallest
    power-of-two slice that holds them is 8 = the domain, so the plan has one row.

    KV (MLA, replicated on every TP rank): 61 layers x (kv_lora_rank 512 + rope 64) = 35,136 bytes a token;
    x 9,216 tokens = 323,813,376 bytes a sequence on each chip.

    Largest batch: floor((129,720,000,000 - 83,878,300,544) / 323,813,376) = floor(45,841,699,456 /
    323,813,376) = floor(141.57) = 141.

    Step at B = 141 (peak bandwidth, speed of light): non-expert weights read 16,190,954,496 parameters
    (attention 11,414,421,504 + dense MLP 1,189,085,184 + router 106,430,464 + shared experts 2,554,331,136
    + final norm 7,168 + output head 926,679,040; the input embedding is held, not read) / 8 chips; routed
    experts touched per MoE layer D = 256 (1 - (1 - 8/256)^141) = 253.089, of 3 x 7168 x 2048 =
    44,040,192 parameters each, 58 MoE layers, / 8 chips; KV 141 x 323,813,376 = 45,657,686,016 bytes.
    Bytes = 2,023,869,312 + 80,809,032,851 + 45,657,686,016 = 128,490,588,178.7 -> T = / 4.8e12 = 26.769 ms.
    FLOPs 141 x 229,832,964,096 / 8 / 1.979e15 = 2.05 ms < the weight read: memory-bound.
    Throughput per chip = 141 / T / 8 = 658.41 tok/s; requests/s per chip = / 1,024 = 0.643."""
    df = jp.capacity_plan("h200", "deepseek-r1", precision="fp8", context_tokens=8192, decode_tokens=1024)
    assert df.height == 1
    r = df.row(0, named=True)
    usable = 141_000_000_000 * 92 // 100
    weights = 671_026_404_352 // 8
    kv_seq = 61 * (512 + 64) * 9216
    batch = (usable - weights) // kv_seq
    assert (r["chips"], r["usable_bytes_per_chip"], r["weight_bytes_per_chip"]) == (8, 129_720_000_000, 83_878_300_544)
    assert (r["kv_bytes_per_sequence_per_chip"], r["largest_batch"]) == (323_813_376, 141) == (kv_seq, batch)
    assert r["kv_bytes_per_chip"] == 141 * 323_813_376
    non_expert = 11_414_421_504 + 1_189_085_184 + 106_430_464 + 2_554_331_136 + 7_168 + 926_679_040
    touched = 256 * (1 - (1 - 8 / 256) ** 141)
    read = non_expert / 8 + 58 * touched * (3 * 7168 * 2048) / 8 + 141 * kv_seq
    step = read / 4.8e12
    assert rel(r["memory_step_s"], step) < 1e-9 and rel(r["step_s"], step) < 1e-9
    assert rel(step, 0.026768872537) < 1e-9
    assert r["memory_bound"] and 141 * 229_832_964_096 / 8 / 1.979e15 < step
    assert rel(r["throughput_tok_s_chip"], 141 / step / 8) < 1e-9
    assert rel(r["throughput_tok_s_chip"], 658.41398346) < 1e-9
    assert rel(r["requests_per_s_chip"], 141 / step / 8 / 1024) < 1e-9
    assert r["most_efficient"]
    for col in ("chips", "weight_bytes_per_chip", "kv_bytes_per_sequence_per_chip", "usable_bytes_per_chip",
                "largest_batch", "kv_bytes_per_chip"):
        assert df.schema[col] == pl.Int64


def test_batch_agrees_with_the_serving_models_fits():
    """The largest batch fits by :func:`jalapeno.serving.capacity` and one more does not, on every slice."""
    for chip, model, precision in (("h200", "deepseek-r1", "fp8"), ("gb200", "gpt-oss-120b", "fp4"),
                                   ("b200", "kimi-k2.5", "fp4"), ("mi355x", "llama-3.1-70b", "fp8")):
        df = jp.capacity_plan(chip, model, precision=precision, context_tokens=8192)
        for r in df.iter_rows(named=True):
            b = r["largest_batch"]
            cap = serving.capacity(model, chip, serving.Layout(n_chips=r["chips"]),
                                   serving.Workload(concurrency=[b, b + 1], context_tokens=9216, precision=precision))
            assert cap.fits.tolist() == [True, False], (chip, model, r["chips"], b)
            assert rel(r["weight_bytes_per_chip"], float(cap.weight_bytes[0])) < 1e-9


def test_gqa_heads_replicated_beyond_the_kv_head_count():
    """gpt-oss-120b: 8 KV heads of 64 dims, K and V, 18 full-attention layers holding 9,216 tokens and 18
    sliding layers holding 128, BF16: 2 x 8 x 64 x 18 x (9,216 + 128) x 2 bytes = 344,457,216 a sequence,
    split min(t, 8) ways: from 8 chips on, each chip keeps a whole copy of its head's share."""
    df = jp.capacity_plan("gb200", "gpt-oss-120b", precision="fp4", context_tokens=8192, decode_tokens=1024,
                          chips=[1, 2, 4, 8, 16, 32])
    whole = 2 * 8 * 64 * 18 * (9216 + 128) * 2
    assert whole == 344_457_216
    assert df["kv_bytes_per_sequence_per_chip"].to_list() == [whole, whole // 2, whole // 4, whole // 8,
                                                                whole // 8, whole // 8]


def test_mla_latent_replicated_under_tp():
    """DeepSeek-R1's latent (576 values a token a layer) is whole on every rank: the bytes per sequence per
    chip do not fall with the slice, so only the weights' memory freed raises the batch."""
    df = jp.capacity_plan("gb200", "deepseek-r1", precision="fp8", context_tokens=8192, decode_tokens=1024)
    assert df["chips"].to_list() == [4, 8, 16, 32, 64]  # 671 GB over 171.12 GB usable: 4 chips first; domain 72
    assert set(df["kv_bytes_per_sequence_per_chip"].to_list()) == {61 * 576 * 9216}
    batches = df["largest_batch"].to_list()
    assert batches == sorted(batches) and batches[0] < batches[-1]
    best = df.filter(pl.col("most_efficient"))
    assert best.height == 1 and best["throughput_tok_s_chip"][0] == df["throughput_tok_s_chip"].max()
    assert best["chips"][0] != df["chips"].min()  # the smallest slice is not the most efficient here


def test_errors():
    with pytest.raises(jp.UnknownNameError, match="gb200"):
        jp.capacity_plan("no-such-chip", "deepseek-r1", context_tokens=8192)
    with pytest.raises(jp.UnknownNameError, match="deepseek-r1"):
        jp.capacity_plan("h200", "no-such-model", context_tokens=8192)
    for bad in (0, -5):
        with pytest.raises(ValueError, match=f"context_tokens.*{bad}"):
            jp.capacity_plan("h200", "deepseek-r1", context_tokens=bad)
    with pytest.raises(ValueError, match="decode_tokens.*0"):
        jp.capacity_plan("h200", "deepseek-r1", context_tokens=8192, decode_tokens=0)
    # DeepSeek-R1 at FP8 on H100 (80 GB, domain 8): 8 chips need P / 8 + one sequence's KV per chip
    need = 671_026_404_352 // 8 + 61 * 576 * 9216
    short = need - 80_000_000_000 * 92 // 100
    with pytest.raises(ValueError, match=rf"8 chips.*{short:,}"):
        jp.capacity_plan("h100", "deepseek-r1", precision="fp8", context_tokens=8192)
    with pytest.raises(ValueError, match="largest, 2 chips"):
        jp.capacity_plan("h200", "deepseek-r1", precision="fp8", context_tokens=8192, chips=[1, 2])
    assert math.isfinite(jp.capacity_plan("h200", "deepseek-r1", context_tokens=8192)["step_s"][0])


def test_listed_slices_are_checked():
    with pytest.raises(ValueError, match="chips must be positive integers"):
        jp.capacity_plan("h200", "deepseek-r1", context_tokens=8192, chips=[])
    with pytest.raises(ValueError, match="chips must be positive integers"):
        jp.capacity_plan("h200", "deepseek-r1", context_tokens=8192, chips=[8, 2.5])
    # a listed slice that cannot hold one sequence: batch 0, no step, throughput 0, never the best
    df = jp.capacity_plan("h200", "deepseek-r1", precision="fp8", context_tokens=8192, chips=[4, 8])
    assert df["largest_batch"].to_list() == [0, 141]
    assert df["step_s"][0] is None and df["throughput_tok_s_chip"][0] == 0.0
    assert df["most_efficient"].to_list() == [False, True]


def test_fewest_chips_by_hand():
    """DeepSeek-R1 at FP8 with 64 sequences of 131,072 tokens: weights 671,026,404,352 bytes, KV 64 x 61 x 576
    x 131,072 = 294,742,130,688 bytes; 965,768,535,040 in all. On H200's usable 129,720,000,000 bytes a chip
    that is 7.445 chips: 8 (ceil(W / 8) + ceil(KV / 8) = 120,721,066,880 <= usable; 7: 137,966,933,720 > it).
    On the LPU's 500 MB of SRAM (all usable): 1,932 chips (965,768,535,040 / 5e8 = 1,931.54)."""
    weights, kv = 671_026_404_352, 64 * 61 * 576 * 131072
    r = cp.fewest_chips("h200", "deepseek-r1", precision="fp8", concurrency=64, context_tokens=131072)
    assert r == {"weight_bytes": weights, "kv_bytes": kv, "usable_bytes_per_chip": 129_720_000_000, "chips": 8}
    assert -(-weights // 7) + -(-kv // 7) > 129_720_000_000 >= -(-weights // 8) + -(-kv // 8)
    lpu = cp.fewest_chips("groq-3-lpu", "deepseek-r1", precision="fp8", concurrency=64, context_tokens=131072,
                          tier="sram")
    assert (lpu["usable_bytes_per_chip"], lpu["chips"]) == (500_000_000, 1932)
    # the even spread the count assumes equals the pool's ceiling here; with no users the weights alone
    assert cp.fewest_chips("h200", "deepseek-r1", precision="fp8", concurrency=0, context_tokens=8192)["chips"] == 6
    with pytest.raises(ValueError, match="concurrency must be a non-negative integer number of sequences, got -1"):
        cp.fewest_chips("h200", "deepseek-r1", concurrency=-1, context_tokens=8192)
    with pytest.raises(ValueError, match=r"tier 'hbm\+host' needs host_memory_bytes_per_chip"):
        cp.fewest_chips("h200", "deepseek-r1", concurrency=1, context_tokens=8192, tier="hbm+host")
    with pytest.raises(ValueError, match="chip 'groq-3-lpu' has no memory in tier 'hbm'; its tiers: sram$"):
        cp.fewest_chips("groq-3-lpu", "deepseek-r1", concurrency=1, context_tokens=8192)
    with pytest.raises(ValueError, match="chip 'h200' has no memory in tier 'sram'; its tiers: hbm, hbm\\+host$"):
        cp.fewest_chips("h200", "deepseek-r1", concurrency=1, context_tokens=8192, tier="sram")
    with pytest.raises(ValueError, match="host_memory_bytes_per_chip must be a positive number of bytes, got -5"):
        cp.fewest_chips("h200", "deepseek-r1", concurrency=1, context_tokens=8192, tier="hbm+host",
                        host_memory_bytes_per_chip=-5)
    with pytest.raises(ValueError, match="host_memory_bytes_per_chip is read by tier 'hbm\\+host' only"):
        cp.fewest_chips("h200", "deepseek-r1", concurrency=1, context_tokens=8192, host_memory_bytes_per_chip=5e11)
    with pytest.raises(ValueError, match=r"precision must be a benchmark name or an \(experts, other weights, KV "
                                         r"cache\) triple, got \('fp4', 'bf16'\)"):
        cp.fewest_chips("h200", "deepseek-r1", precision=("fp4", "bf16"), concurrency=1, context_tokens=8192)
    # GB200 NVL72's Grace memory per GPU, 467.5 GB, at the 92 % share: 171.12 + 430.1 GB usable, 2 chips
    # for the 965,768,535,040 bytes (ceil(W / 2) + ceil(KV / 2) = 482,884,267,520 <= 601,220,000,000)
    both = cp.fewest_chips("gb200", "deepseek-r1", concurrency=64, context_tokens=131072, tier="hbm+host",
                           host_memory_bytes_per_chip=467.5e9)
    assert (both["usable_bytes_per_chip"], both["chips"]) == (601_220_000_000, 2)
    with pytest.raises(jp.UnknownNameError, match="unknown memory tier 'dram'"):
        cp.fewest_chips("h200", "deepseek-r1", concurrency=1, context_tokens=8192, tier="dram")
