"""Derived model quantities against published values (golden cases 2 and 3) and name handling."""

import pytest

import jalapeno as jp


@pytest.mark.parametrize("name, total, active, with_embedding", [
    ("gpt-oss-120b", 116.8e9, 5.13e9, None),
    ("deepseek-r1", 671.0e9, 36.6e9, 37.6e9),
    ("kimi-k2.5", 1.026e12, None, 32.7e9),
    ("llama-3.1-70b", 70.55e9, None, None),
])
def test_parameter_counts_match_published_within_half_a_percent(name, total, active, with_embedding):
    m = jp.model(name)
    assert m.total_params() == pytest.approx(total, rel=0.005)
    if active:
        assert m.active_params() == pytest.approx(active, rel=0.005)
    if with_embedding:
        assert m.active_params(include_input_embedding=True) == pytest.approx(with_embedding, rel=0.005)


def test_expert_width_comes_from_moe_intermediate_size():
    m = jp.model("deepseek-r1")
    assert m.expert_params() == 44_040_192  # 3 x 7168 x 2048, not the dense 18,432
    assert m.weight_bytes("fp8") / 8 == pytest.approx(83.9e9, rel=0.005)  # per chip at EP=8


@pytest.mark.parametrize("name, kv_bytes", [
    ("deepseek-r1", 70_272), ("kimi-k2.5", 70_272), ("llama-3.1-70b", 327_680),
])
def test_kv_bytes_per_token_golden_table(name, kv_bytes):
    assert jp.model(name).kv_bytes_per_token("bf16") == kv_bytes


def test_mla_caches_576_values_per_token_per_layer():
    assert jp.model("deepseek-r1").kv_values_per_token_per_layer() == 576
    assert jp.model("deepseek-r1").kv_bytes_per_token("fp8") == 35_136


def test_gqa_uses_kv_heads_not_query_heads():
    m = jp.model("llama-3.1-70b")
    assert m.kv_values_per_token_per_layer() == 2 * 8 * 128  # 8 KV heads, not 64 query heads


def test_sliding_window_caps_kv_of_gpt_oss():
    m = jp.model("gpt-oss-120b")
    assert m.kv_bytes_per_sequence(8192) == 306_708_480  # naive: 603,979,776
    assert m.kv_bytes_per_sequence(1024) == 42_467_328


def test_gemma_global_layers_use_their_own_kv_shape():
    m = jp.model("gemma-4-31b")
    assert m.kv_values_per_token_per_layer("local") == 2 * 16 * 256
    assert m.kv_values_per_token_per_layer("global") == 1 * 4 * 512  # K equals V
    assert m.total_params() == pytest.approx(30.7e9, rel=0.005)


def test_decode_flops_per_token_hand_worked():
    m = jp.model("llama-3.1-70b")
    attention = 4 * 8192 * 64 * 128 * 80
    assert m.decode_flops_per_token(8192) == pytest.approx(2 * m.active_params() + attention)


def test_prefill_flops_hand_worked():
    # Llama 3.1 70B, 8192-token prompt: every weight but the output projection once per token, the output
    # projection once (logits of the last token only), causal attention over 8192 x 8193 / 2 pairs
    m = jp.model("llama-3.1-70b")
    unembedding = 128_256 * 8192
    attention = 4 * 64 * 128 * 80 * (8192 * 8193 / 2)
    want = 2 * (m.active_params() - unembedding) * 8192 + 2 * unembedding + attention
    assert m.prefill_flops(8192) == pytest.approx(want, rel=1e-12)
    assert m.prefill_flops(1) == pytest.approx(m.decode_flops_per_token(1), rel=1e-12)  # one token = one decode step


def test_names_are_case_insensitive_and_accept_benchmark_keys():
    assert jp.chip("GB200").chip == "gb200"
    assert jp.chip("b200-trt").chip == "b200"
    assert jp.model("GPTOSS").model == "gpt-oss-120b"
    assert jp.model("dsr1").model == "deepseek-r1"


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(jp.UnknownNameError, match="unknown chip 'gb400'; valid chips: jalapeno, gb200"):
        jp.chip("gb400")
    with pytest.raises(jp.UnknownNameError, match="valid models: gpt-oss-120b"):
        jp.model("llama-5")
    with pytest.raises(jp.UnknownNameError, match="valid precisions"):
        jp.model("gpt-oss-120b").weight_bytes("int3")


def test_precision_fallback_to_wider_tensor_cores():
    h100 = jp.chip("h100")
    assert h100.peak_flops_per_s("fp4") == h100.peak_dense_flops_per_s["fp8"]
    with pytest.raises(ValueError, match="no published peak FLOP/s at bf16"):
        jp.chip("jalapeno").peak_flops_per_s("bf16")


def test_unknown_values_stay_empty():
    assert jp.chip("jalapeno").scale_up_domain_chips is None
    assert jp.chip("jalapeno").provenance["hbm_bandwidth"][0] == "estimate"
