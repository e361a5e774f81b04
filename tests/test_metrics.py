"""Benchmark conventions and metric identities (golden cases 6 and 7) on the measured data."""

import numpy as np
import polars as pl
import pytest

from jalapeno import measured, metrics


def test_mean_request_lengths():
    assert metrics.mean_request_length(8192) == 7372.5
    assert metrics.mean_request_length(1024) == 921.5
    with pytest.raises(ValueError):
        metrics.mean_request_length(0)


def test_total_over_output_throughput_is_nine_at_8k_1k():
    ratio = (7372.5 + 921.5) / 921.5
    assert ratio == pytest.approx(9.0, abs=0.01)
    pts = measured.points(isl=8192, osl=1024).filter(~pl.col("disagg"))
    observed = (pts["tput_per_gpu"] / pts["output_tput_per_gpu"]).median()
    assert observed == pytest.approx(8.99, abs=0.02)


def test_h200_row_identities():
    row = measured.points("gpt-oss-120b", "h200", isl=8192, osl=1024, run_id="20218553330").filter(
        (pl.col("conc") == 64) & (pl.col("tp") == 1)).row(0, named=True)
    assert row["mean_e2el"] == pytest.approx(41.400, abs=5e-4)
    assert metrics.implied_osl_tokens(row["mean_e2el"], row["mean_ttft"], row["mean_tpot"]) == pytest.approx(923.5, abs=0.1)
    little = metrics.littles_law_throughput_per_chip(64, 7372.5, 921.5, row["mean_e2el"], 1)
    assert little == pytest.approx(12822, rel=0.001)
    assert little / row["tput_per_gpu"] - 1 == pytest.approx(0.010, abs=0.001)


def test_latency_identities_aiconfigurator_case():
    assert metrics.interactivity_tok_s_user(0.02902) == pytest.approx(34.46, rel=0.001)
    assert metrics.e2e_s(1.11275, 0.02902, 1000) == pytest.approx(30.104, rel=0.001)
    assert metrics.implied_ttft_s(30.104, 0.02902, 1000) == pytest.approx(1.11275, abs=1e-3)


def test_all_in_per_megawatt_basis():
    assert metrics.throughput_per_kw(10865.992, 2100) * 1000 == pytest.approx(5_174_282, rel=1e-6)


def test_unknown_measured_hardware_lists_valid():
    with pytest.raises(Exception, match="valid measured hardware: b200, b200-trt, gb200"):
        measured.points(hw="tpu7x")


def test_pareto_envelope_hand_worked():
    x = [1, 2, 3, 2, 0.5]
    y = [5, 4, 1, 2, 6]
    assert metrics.pareto_envelope(x, y).tolist() == [4, 0, 1, 2]   # (2, 2) is beaten by (2, 4)
    assert metrics.pareto_envelope([1.0, 1.0], [3.0, 3.0]).tolist() == [0]   # of tied points the first
    assert metrics.pareto_envelope(np.array([]), np.array([])).tolist() == []
