"""The serving-model chapter module: every number the prose quotes and every table and figure it shows,
and the in-sample ceiling the chapter reports (the held-out schemes' ceilings are tests/test_schemes.py's);
the schemes table against jalapeno.schemes and calibration, and the prose's words against the table; the
worked example at peak throughput adds up to what the evaluator returns, and its batch-1 weights by hand."""

import math

import chapter_sources
import polars as pl
import pytest

import jalapeno as jp
from jalapeno import calibration, schemes, serving, subject
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


def test_unknown_series_are_refused(defaults):
    with pytest.raises(jp.UnknownNameError, match="unknown series 'gpt-5 h100'"):
        chapter.compute(**(defaults | {"shown_series": ["gpt-5 h100"]}))


# ---- the validation schemes: the table, its quotes and the prose's words -----------------------------------

@pytest.fixture(scope="module")
def errors():
    return schemes.scheme_errors()


def test_the_schemes_table_shows_every_scheme_and_the_band_it_serves(ch):
    t = ch.tables["schemes"]
    labels = [s.label for s in schemes.SCHEMES.values()]
    assert t["scheme"].to_list() == labels + ["(c) end-point anchored, matched ratio"]
    rows = {r["scheme"]: r for r in t.iter_rows(named=True)}
    for name, s in schemes.SCHEMES.items():
        assert rows[s.label]["stands for"] == s.stands_for and rows[s.label]["its band is used for"] == s.band_for
    assert rows["(c) end-point anchored"]["its band is used for"] == "Jalapeño"
    assert rows["(b) a new shape"]["its band is used for"] == "a measured chip at an unmeasured shape"
    assert "a model it was not measured with" in rows["(b) a new model-chip pair"]["its band is used for"]
    assert "no benchmark ran" in rows["(a) a new generation"]["its band is used for"]
    assert set(t.columns) >= {"series", "median (%)", "p90 (%)", "ceiling median / p90 (%)", "median and p90 against the ceiling",
                              "coverage against 70-90 %",
                              "80 % band (factor either way)", "coverage (%)", "90 % interval (%)", "beyond reach"}


@pytest.mark.parametrize("scheme", list(schemes.SCHEMES))
def test_each_schemes_row_is_its_statistic_and_coverage_on_the_default_path(ch, errors, scheme):
    """Recomputed from the held-out series of the committed stage (every one scored on the default path):
    the one statistic, the band's width and its coverage, and the ceiling's verdict by hand."""
    e = errors.filter(pl.col("scheme") == scheme)
    stat, cov = calibration.frontier_error(e), calibration.coverage(e)
    row = ch.tables["schemes"].filter(pl.col("scheme") == schemes.SCHEMES[scheme].label).row(0, named=True)
    assert row["series"] == stat.n_series == e.height == e["series"].n_unique()
    assert row["median (%)"] == pytest.approx(100 * stat.median, rel=1e-12)
    assert row["p90 (%)"] == pytest.approx(100 * stat.p90, rel=1e-12)
    assert row["coverage (%)"] == pytest.approx(100 * cov.inside / cov.points, rel=1e-12)
    assert row["points inside / scored"] == f"{cov.inside} / {cov.points}"
    assert row["beyond reach"] == cov.unreached
    assert row["80 % band (factor either way)"] == pytest.approx(math.exp(calibration.band_half_width(e)), rel=1e-12)
    low, high = (float(x) for x in row["90 % interval (%)"].split("-"))
    assert low <= row["coverage (%)"] <= high
    median, p90 = schemes.CEILINGS[scheme]
    assert row["ceiling median / p90 (%)"] == f"{100 * median:.0f} / {100 * p90:.0f}"
    missed = [n for n, got, c in (("median", stat.median, median), ("p90", stat.p90, p90)) if got > c]
    expected = "met" if not missed else "both missed" if len(missed) == 2 else f"{missed[0]} missed"
    assert row["median and p90 against the ceiling"] == expected
    k = chapter.STEMS[scheme]
    assert ch.numbers[f"sc_{k}_median"] == f"{100 * stat.median:.0f}"
    assert ch.numbers[f"sc_{k}_p90"] == f"{100 * stat.p90:.0f}"
    assert ch.numbers[f"sc_{k}_coverage"] == f"{100 * cov.share:.1f}"
    inside = "below" if cov.share < 0.70 else "above" if cov.share > 0.90 else "within"
    assert ch.numbers[f"sc_{k}_coverage_vs"] == inside


def test_the_ratio_row_counts_every_pair(ch):
    ratios = schemes.ratio_errors()
    row = ch.tables["schemes"].row(-1, named=True)
    assert row["series"] == ratios["reached"].sum() and row["beyond reach"] == (~ratios["reached"]).sum()
    assert row["ceiling median / p90 (%)"] is None and row["median and p90 against the ceiling"] == "none claimed"


def test_the_prose_says_in_words_what_the_table_shows(ch):
    """The prose's plain statements of a missed ceiling or coverage hold of the table: (b) model-chip above its
    ceilings, (c)'s band below the coverage range (the verdicts' band too narrow)."""
    prose = " ".join(chapter_sources._cells(NAME, "markdown").split())
    t = {r["scheme"]: r for r in schemes.table().iter_rows(named=True)}
    if "predicted worse than the book claimed" in prose:
        mc = t["model-chip"]
        assert mc["median"] > schemes.CEILINGS["model-chip"][0] or mc["p90"] > schemes.CEILINGS["model-chip"][1]
    if "slightly too narrow" in prose:
        assert t["anchored"]["coverage"] < schemes.COVERAGE_RANGE[0]
    assert "default path" in prose and "only from the fold's training rows" in prose


def test_the_schemes_figure_draws_each_claimed_scheme_against_its_ceiling(ch):
    chart = ch.figures["schemes"].chart
    data = pl.DataFrame(chart.data)  # alt.layer holds the layers' common data
    assert sorted(set(data["scheme"])) == sorted(s.label for s in schemes.SCHEMES.values())
    for r in data.iter_rows(named=True):
        name = next(n for n, s in schemes.SCHEMES.items() if s.label == r["scheme"])
        i = ("median", "p90").index(r["statistic"])
        assert r["ceiling_pct"] == pytest.approx(100 * schemes.CEILINGS[name][i])


def test_the_held_out_series_table_is_every_series_of_every_scheme(ch, errors):
    t = ch.tables["holdout"]
    assert t.height == errors.height
    assert t["frontier distance (%)"].to_list() == pytest.approx((100 * errors["frontier_distance"]).to_list())
    # the folds that hold the MLA factor at its prior are those without a DeepSeek-R1 row on GB200 (the one
    # chip whose stack, Dynamo-TRT, served both models)
    folds = ch.numbers["prior_folds"].split(", ")
    assert "anchored=gb200" in folds and "generation=Blackwell" in folds
    assert not any(f.startswith("shape=") for f in folds)


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


def test_constants_table_in_reader_words_and_microseconds():
    stored = pl.DataFrame({"parameter": ["eta_mem", "alpha_s", "tau_s:dynamo-trt@blackwell", "tau_s:atom"],
                           "value": [0.9, 3.324e-06, 4.1648e-05, 8.1539e-05],
                           "unit": ["fraction", "s", "s per layer per step", "s per layer per step"]})
    t = chapter.constants_table(stored)
    assert t["constant"].to_list() == [
        "η_mem: share of peak HBM bandwidth reached", "α: fixed time of a decode step",
        "τ: per-layer overhead, Dynamo + TensorRT-LLM on Blackwell", "τ: per-layer overhead, ATOM on another generation"]
    assert t["unit"].to_list() == ["fraction", "µs", "µs per layer per step", "µs per layer per step"]
    assert t["value"].to_list() == pytest.approx([0.9, 3.324, 41.648, 81.539], rel=1e-12)


def test_the_held_out_table_names_folds_and_constants_in_words():
    assert chapter.fold_words("model-chip=deepseek-r1 gb200") == "deepseek-r1 on gb200"
    assert chapter.fold_words("generation=CDNA 4") == "CDNA 4"
    assert chapter.fold_words("shape=1024/1024") == "1,024/1,024"
    assert chapter.constant_symbol("tau_s:dynamo-trt@blackwell") == "τ (Dynamo + TensorRT-LLM on Blackwell)"
    assert chapter.constant_symbol("tau_s:trt") == "τ (TensorRT-LLM)"
    assert chapter.constant_symbol("mla_layer_factor") == "MLA layer factor"
