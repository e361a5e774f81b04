"""Roofline formulas against hand-worked cases (golden cases 1, 5) and their properties."""

import math

import numpy as np
import pytest

import jalapeno as jp
from jalapeno import bounds
from jalapeno import capacity_plans as cp
from jalapeno.specs import ChipSpec, ModelSpec


def custom_chip(bw, flops, name="custom"):
    return ChipSpec(name, name, hbm_bandwidth_bytes_per_s=bw, peak_dense_flops_per_s={"bf16": flops, "fp8": flops})


def test_llama_70b_gqa_on_8_h200_golden_case_1():
    # the golden case reads all 141 GB of BF16 weights; the serving model reads the active ones (139 GB: the
    # input embedding is a look-up), hence the 2 % tolerance
    m, h200 = jp.model("llama-3.1-70b"), custom_chip(4.8e12, 989e12)
    kv_read = 64 * m.kv_bytes_per_sequence(8192)
    assert kv_read == pytest.approx(171.8e9, rel=0.01)
    r = bounds.decode_step(m, h200, 64, 8192, n_chips=8)  # 8 KV heads split 8 ways
    assert float(r.decode_step_s) == pytest.approx(8.15e-3, rel=0.02)
    assert 1 / float(r.decode_step_s) == pytest.approx(122.7, rel=0.02)
    assert float(r.decode_tok_s_chip) == pytest.approx(982, rel=0.02)
    assert float(r.compute_s) == pytest.approx(1.3e-3, rel=0.05)
    assert bool(r.memory_bound)


def _dense(layers, hidden, heads, kv_heads, head_dim, intermediate, vocab=32000):
    return ModelSpec("stand-in", "stand-in", "", "gqa", layers, hidden, vocab, False, heads, kv_heads, head_dim,
                     intermediate_size=intermediate)


@pytest.mark.parametrize("batch, expected_ms", [(4, 2.57), (256, 21.05)])
def test_scaling_book_30b_int8_on_16_chips(batch, expected_ms):
    # a stand-in with the book's numbers: 30e9 weights read (int8), 0.819e9 bytes of int8 KV per 8k sequence
    # (48 layers x 16 KV heads x 65 x 2 tensors x 8192 = 0.818e9), 16 KV heads so the KV splits 16 ways
    model = _dense(48, 6144, 16, 16, 65, 32297)
    assert model.active_params() == pytest.approx(30e9, rel=1e-3)
    assert model.kv_bytes_per_sequence(8192, "fp8") == pytest.approx(0.819e9, rel=2e-3)
    chip = custom_chip(8.1e11, 1.97e14)
    r = bounds.decode_step(model, chip, batch, 8192, n_chips=16, weight_precision="fp8", kv_precision="fp8")
    assert float(r.decode_step_s) * 1e3 == pytest.approx(expected_ms, rel=0.01)


def test_scaling_book_llama2_13b_table_si_bytes_and_slice_throughput():
    kv = 8192 * 40 * 128 * 40 * 2 * 2
    assert kv == pytest.approx(6.71e9, rel=0.001)
    model = _dense(40, 5120, 40, 40, 128, 13824)  # LLaMA-2 13B; the book rounds its weights to 13e9 (12.85e9 read)
    assert model.kv_bytes_per_sequence(8192) == kv
    chip = custom_chip(8.2e11, 1.97e14)
    batches = np.array([1, 8, 16, 32, 64, 240])
    r = bounds.decode_step(model, chip, batches, 8192, n_chips=8)
    np.testing.assert_allclose(r.decode_step_s * 1e3, [4.98, 12.13, 20.30, 36.65, 69.33, 249.09], rtol=0.01)
    slice_tok_s = r.decode_tok_s_chip * 8  # the book's throughput is for the 8-chip slice
    np.testing.assert_allclose(slice_tok_s, [200.6, 659.3, 788.0, 873.2, 923.1, 963.5], rtol=0.01)


def test_expected_distinct_experts_limits():
    assert bounds.expected_distinct_experts(256, 8, 1) == pytest.approx(8)
    assert bounds.expected_distinct_experts(256, 8, 10_000) == pytest.approx(256)
    two = bounds.expected_distinct_experts(128, 4, 2)
    assert two == pytest.approx(128 * (1 - (1 - 4 / 128) ** 2))


def test_dense_critical_batch_is_ridge_times_b_over_2():
    m, chip = jp.model("llama-3.1-70b"), jp.chip("h200")
    expected = chip.ridge_point_flop_per_byte("bf16") * 2 / 2
    assert bounds.critical_batch(m, chip, weight_precision="bf16") == pytest.approx(expected, rel=0.02)


def test_moe_critical_batch_far_exceeds_dense_formula():
    m, chip = jp.model("gpt-oss-120b"), jp.chip("gb200")
    dense_formula = chip.ridge_point_flop_per_byte("fp4") * 0.5 / 2
    assert bounds.critical_batch(m, chip, weight_precision="fp4") > 10 * dense_formula


def test_more_bandwidth_or_flops_never_slower():
    m = jp.model("deepseek-r1")
    base, more_bw, more_flops = custom_chip(8e12, 5e15), custom_chip(9e12, 5e15), custom_chip(8e12, 6e15)
    b = np.array([1, 16, 256, 4096])
    t0 = bounds.decode_step(m, base, b, 8192, weight_precision="fp8").decode_step_s
    assert np.all(bounds.decode_step(m, more_bw, b, 8192, weight_precision="fp8").decode_step_s <= t0)
    assert np.all(bounds.decode_step(m, more_flops, b, 8192, weight_precision="fp8").decode_step_s <= t0)


def test_bad_batch_is_refused():
    with pytest.raises(ValueError, match="batch and n_chips must be positive"):
        bounds.decode_step(jp.model("gpt-oss-120b"), jp.chip("gb200"), -1, 8192, weight_precision="fp4")


def test_groq_sram_arithmetic():
    """DeepSeek-R1's 671,026,404,352 weights at 8 bits over the LPU's 500 MB: 1,342.05 chips, so 1,343 (the
    seeds round 671 GB / 500 MB to 1,342); with 10 GB of KV cache, 681,026,404,352 bytes: 1,363 chips
    (ceil(W / 1,363) + ceil(KV / 1,363) = 499,652,536 <= 5e8; 1,362: 500,019,387 > 5e8)."""
    m, lpu = jp.model("deepseek-r1"), jp.chip("groq-3-lpu")
    assert m.total_params() == 671_026_404_352
    assert bounds.sram_chips(m, lpu, weight_bits=8) == 1343
    assert bounds.sram_chips(m, lpu, weight_bits=8, kv_bytes=10e9) == 1363
    assert bounds.sram_chips(m, lpu, weight_bits=4) == 672  # 335,513,202,176 bytes: 671.03 chips
    with pytest.raises(ValueError, match="chip 'gb200' has no published SRAM capacity"):
        bounds.sram_chips(m, jp.chip("gb200"))


def test_chips_to_hold():
    """The even spread's two ceilings, by hand: 216e9 bytes on chips of 216e9 is 1 chip; one byte more, 2;
    7 bytes of weights and 7 of KV over chips of 5 bytes: 3 chips give 3 + 3 = 6 > 5, 4 give 2 + 2 = 4."""
    assert cp.chips_to_hold(216_000_000_000, 0, 216_000_000_000) == 1
    assert cp.chips_to_hold(216_000_000_001, 0, 216_000_000_000) == 2
    assert cp.chips_to_hold(7, 7, 5) == 4
    assert cp.chips_to_hold(0, 0, 5) == 1
    with pytest.raises(ValueError, match="usable_bytes_per_chip must be a positive whole number of bytes, got 0"):
        cp.chips_to_hold(1, 0, 0)
    with pytest.raises(ValueError, match="kv_bytes must be a non-negative whole number of bytes, got 1.5"):
        cp.chips_to_hold(1, 1.5, 5)


def test_prefill_is_compute_bound_and_decode_memory_bound():
    pts = bounds.phase_points(jp.model("gpt-oss-120b"), jp.chip("gb200"))
    bound = dict(zip(pts["phase"], pts["memory_bound"]))
    assert bound["decode, batch 1"] and not bound["prefill, 8192 tokens"]
