"""The serving-model chapter module: every number the prose quotes and every table and figure it shows,
and the in-sample ceiling the chapter reports (the held-out schemes' ceilings are tests/test_schemes.py's); the
worked example at peak throughput adds up to what the evaluator returns, and its batch-1 weights by hand."""

import chapter_sources
import pytest

import jalapeno as jp
from jalapeno import serving, subject
from jalapeno.chapters import serving_model as chapter

NAME = "serving-model"
defaults, ch = chapter_sources.fixtures(NAME, chapter)

#: The in-sample ceiling the chapter claims (percent frontier distance of the measured frontier points to
#: the frontier the prediction procedure draws, every series in the fit). The held-out schemes' ceilings
#: are jalapeno.schemes.CEILINGS, tested in tests/test_schemes.py on the default prediction path.
IN_SAMPLE_CEILINGS = {"in_frontier_median": 20}


def test_every_key_and_slot_the_notebook_uses_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []
    chapter_sources.check_slots(NAME, ch)


@pytest.mark.parametrize("key, ceiling", sorted(IN_SAMPLE_CEILINGS.items()))
def test_validation_figures_stay_under_their_ceilings(ch, key, ceiling):
    assert float(ch.numbers[key]) <= ceiling


def test_the_measurements_are_the_benchmarks(ch):
    # data/measured/inferencemax.csv: 972 rows; the calibration uses the aggregated and disaggregated
    # points of the series it models
    assert 0 < ch.values["n_points"] <= 972
    assert ch.numbers["target_pct"] == "10"


def test_unknown_schemes_and_series_are_refused(defaults):
    with pytest.raises(jp.UnknownNameError, match="unknown hold-out scheme 'model'"):
        chapter.compute(**(defaults | {"holdout_by": ["model"]}))
    with pytest.raises(jp.UnknownNameError, match="unknown series 'gpt-5 h100'"):
        chapter.compute(**(defaults | {"shown_series": ["gpt-5 h100"]}))


# ---- the worked example: the full step at each chip's highest-throughput point ---------------------------

@pytest.fixture(scope="module")
def worked():
    return subject.worked_configurations(chapter.WORKED_POINT)


def test_the_worked_steps_add_up_to_what_the_evaluator_returns(ch, worked):
    v = ch.values
    # the benchmark draws each length uniformly from 0.9x to 1x of nominal: 8,192 -> 7,372.5; 1,024 -> 921.5
    isl_m, osl_m = v["wb_isl_mean"], v["wb_osl_mean"]
    assert (isl_m, osl_m) == (7372.5, 921.5)
    for k, config in (("j", worked["jalapeno"]), ("g", worked["gb200"])):
        def w(name):
            return v[f"wb_{k}_{name}"]
        bw = w("bw_tb") * 1e12 * w("eta_mem")  # the achieved bandwidth (bytes/s)
        # 1: the distinct-experts formula by hand, 128 (1 - (1 - 4/128)^B); gpt-oss-120b's experts are
        # 3 x 2,880 x 2,880 weights (gate, up, down) in MXFP4 (4 bits + an 8-bit scale per 32: 4.25 bits),
        # spread over the worker's chips in each of 36 layers
        assert w("touched") == pytest.approx(128 * (1 - (1 - 4 / 128) ** w("conc")), rel=1e-9)
        assert w("expert_gb") * 1e9 == pytest.approx(36 * w("touched") * 3 * 2880 ** 2 * 4.25 / 8 / w("chips"), rel=1e-9)
        assert w("weight_gb") == pytest.approx(w("nonexpert_gb") + w("expert_gb"), rel=1e-9)
        # 1-3: bytes over the achieved bandwidth, FLOPs over the achieved FLOP/s
        assert w("weights_ms") * 1e-3 == pytest.approx(w("weight_gb") * 1e9 / bw, rel=1e-9)
        assert w("kv_ms") * 1e-3 == pytest.approx(w("kv_gb") * 1e9 / bw, rel=1e-9)
        assert w("compute_ms") * 1e-3 == pytest.approx(w("tflop") * 1e12 / (w("pflops") * 1e15 * w("eta_compute")), rel=1e-9)
        # 4: KV + max(weights, FLOPs)
        assert w("max_ms") == max(w("weights_ms"), w("compute_ms"))
        assert w("bound") == ("the FLOPs" if w("compute_ms") > w("weights_ms") else "the weight read")
        assert w("roofline_ms") == pytest.approx(w("kv_ms") + w("max_ms"), rel=1e-9)
        # 6: 36 GQA layers (factor 1) x (per-layer overhead + per-sequence overhead x sequences per replica)
        assert w("seqs") == w("conc") / w("dp")
        assert w("overhead_ms") * 1e3 == pytest.approx(36 * (w("tau_us") + w("beta_us") * w("seqs")), rel=1e-9)
        # 7: the decode step is its parts
        step = w("roofline_ms") + w("allreduce_ms") + w("all_to_all_ms") + w("overhead_ms")
        assert w("step_ms") == pytest.approx(step, rel=1e-9)
        # 8: each step carries (B/dp - 1) / OSL prefills of one mean prompt; TPOT = step + that
        assert w("others") == w("seqs") - 1
        assert w("interference_ms") == pytest.approx(w("others") / osl_m * w("prefill_ms"), rel=1e-9)
        tpot = step + w("interference_ms")
        assert w("tpot_ms") == pytest.approx(tpot, rel=1e-9)
        assert w("tok_s_user") == pytest.approx(1e3 / tpot, rel=1e-9)
        # 9: the closed loop: first token after prefill + a step + the latency outside the chips, then OSL - 1
        # TPOTs; B requests in flight; throughput per chip counts input + output tokens over every chip
        first = (w("prefill_ms") + step) * 1e-3 + w("latency_s")
        assert w("first_s") == pytest.approx(first, rel=1e-9)
        e2e = first + tpot * 1e-3 * (osl_m - 1)
        assert w("e2e_s") == pytest.approx(e2e, rel=1e-9)
        rate = w("conc") / e2e
        assert w("rate") == pytest.approx(rate, rel=1e-9)
        assert w("tok_s_chip") == pytest.approx(rate * (isl_m + osl_m) / w("chips"), rel=1e-9)
        # and that is what the evaluator returns for the configuration, evaluated again
        layout, workload, options = serving.split_keywords(config["kw"])
        ev = serving.evaluate(config["model"], config["chip"], layout, workload, eff=config["eff"], **options)
        assert float(ev.decode_step_s) * 1e3 == pytest.approx(step, rel=1e-9)
        assert float(ev.tpot_s) * 1e3 == pytest.approx(tpot, rel=1e-9)
        assert float(ev.throughput_tok_s_chip) == pytest.approx(rate * (isl_m + osl_m) / w("chips"), rel=1e-9)


def test_one_sequence_reads_the_model_cards_active_weights(ch):
    # openai/gpt-oss-120b config.json: 36 layers, hidden 2,880, 64 query and 8 KV heads of 64, 128 experts of
    # width 2,880, top-4, vocabulary 201,088, untied output head. One token on one chip reads, in BF16 (2 bytes),
    # the attention projections (q and o: 2,880 x 4,096; k and v: 2,880 x 512) and two RMSNorms a layer, the
    # router (2,880 x 128 a layer), the output head and the final norm; and 4 experts a layer in MXFP4 (4.25 bits)
    h, layers = 2880, 36
    dense = layers * (2 * h * 64 * 64 + 2 * h * 8 * 64 + 2 * h) + layers * h * 128 + 201088 * h + h
    experts = layers * 4 * 3 * h * 2880
    # the model card's 5.1 B active parameters (input embedding excluded: a look-up, not a read of the table)
    assert 5.05e9 <= dense + experts < 5.15e9
    assert ch.values["wb_batch1_weight_gb"] * 1e9 == pytest.approx(dense * 2 + experts * 4.25 / 8, rel=1e-6)


def test_the_worked_example_meets_the_published_and_measured_peaks(ch):
    # Jalapeño's prefill efficiency is fitted to its published peak throughput per kW (seed 000), so its peak
    # point reproduces it; GB200's highest measured point is at least the 53,952 tok/s/GPU of the run the seed
    # cites (44,960 tok/s/kW x 1.2 kW, run 20786863188), one of the runs measured
    assert ch.values["wb_j_tok_s_chip"] == pytest.approx(ch.values["wb_j_target_tok_s_chip"], rel=0.01)
    assert ch.numbers["wb_j_vs_target_pct"] == "+0"  # the fit meets it: never a noise-signed "-0"
    assert 53952 <= ch.values["wb_g_target_tok_s_chip"] < 56000
    # a batched point: both chips serve many sequences per attention replica, so prefill interferes
    assert ch.values["wb_j_seqs"] > 1 and ch.values["wb_g_seqs"] > 1
    assert ch.values["wb_j_interference_ms"] > 0 and ch.values["wb_g_interference_ms"] > 0


def test_an_unknown_worked_point_is_refused():
    with pytest.raises(jp.UnknownNameError, match="'median'"):
        subject.worked_configurations("median")
