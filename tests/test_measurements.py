"""A reader's own runs (jalapeno/measurements.py; issue 28): `jalapeno measurements check` and `score`."""

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from jalapeno import calibration, data, measured, measurements, schemes
from jalapeno.publish import cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "my-runs.jsonl"


def shipped_rows(hw: str, prefix: str) -> list[dict]:
    """The shipped rows of ``hw`` and ``prefix`` as agg_bmk-style objects with the fields a reader's run has."""
    df = data.load(measurements.SHIPPED).filter((pl.col("hw") == hw) & (pl.col("infmax_model_prefix") == prefix))
    cols = [c for c in measurements.FIELDS if c in df.columns]
    return [{k: v for k, v in r.items() if v is not None} for r in df.select(cols).iter_rows(named=True)]


def write_lines(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    code = cli.main(args)
    out = capsys.readouterr()
    return code, out.out, out.err


def problems_of(path: Path, chips: Path | None = None) -> list[str]:
    with pytest.raises(measurements.MeasurementsError) as info:
        measurements.read(path, chips)
    return info.value.problems


# ---- check: a good file ------------------------------------------------------------------------------------

def test_the_example_is_the_shipped_b200_deepseek_rows_and_checks(capsys):
    """examples/my-runs.jsonl holds the 113 shipped DeepSeek-R1 B200 rows (examples/README.md), each field
    equal to the shipped one; the check counts its series and queue-bound rows as the shipped loader does."""
    rows = [json.loads(line) for line in EXAMPLE.read_text().splitlines()]
    assert rows == shipped_rows("b200", "dsr1") and len(rows) == 113
    runs = measurements.read(EXAMPLE)
    shipped = measured.points("deepseek-r1", "b200", spec_decoding=None)
    assert runs.points.height == shipped.height == 113
    # the same occupancy and queue-bound flag, row for row (same order)
    assert np.allclose(runs.points["occupancy"].to_numpy(), shipped["occupancy"].to_numpy(), rtol=1e-12)
    assert runs.points["queue_bound"].to_list() == shipped["queue_bound"].to_list()
    assert runs.points["source"][4].startswith("my-runs.jsonl sha256:") and runs.points["source"][4].endswith(" line 5")
    summary = runs.summary()
    assert summary == {"rows": 113, "series": 4, "chips": ["b200"], "stacks": ["sglang"], "models": ["deepseek-r1"],
                       "queue_bound": int(shipped["queue_bound"].sum())}
    code, out, err = run_cli(["measurements", "check", str(EXAMPLE)], capsys)
    assert code == 0 and err == ""
    assert "113 rows, 4 series" in out and "queue-bound rows: 0" in out and runs.digest in out


def test_a_json_array_is_read_with_its_element_index_as_line(tmp_path):
    rows = shipped_rows("h100", "gptoss")[:3]
    for r in rows:
        r.pop("run_id")  # optional
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(rows, indent=1))
    runs = measurements.read(path)
    assert runs.points["source"].str.extract(r"line (\d+)$").to_list() == ["1", "2", "3"]
    assert runs.points["run_id"].null_count() == 3 and runs.summary()["models"] == ["gpt-oss-120b"]
    rows[1]["mean_tpot"] = 8.5e3  # milliseconds where seconds are meant
    path.write_text(json.dumps(rows, indent=1))
    assert problems_of(path) == [f"{path}:2: mean_tpot: 8500 is outside the plausible range; check the unit and "
                                 "the decimal point (valid: 1e-05 to 10 s)"]


def test_a_file_of_one_pretty_printed_object_is_one_run(tmp_path):
    path = tmp_path / "agg_bmk.json"
    path.write_text(json.dumps(shipped_rows("h200", "gptoss")[0], indent=2))
    runs = measurements.read(path)
    assert runs.points.height == 1 and runs.points["source"][0].endswith(" line 1") and runs.summary()["chips"] == ["h200"]


def test_a_queue_bound_row_is_flagged_by_the_shipped_rule(tmp_path):
    """A row whose occupancy (output tok/s x GPUs / (conc x mean interactivity)) is below 0.5 is queue-bound:
    hand-worked, 100 tok/s/GPU x 8 GPUs / (64 users x 50 tok/s/user) = 0.25."""
    row = shipped_rows("h100", "gptoss")[0] | {"tp": 8, "conc": 64, "output_tput_per_gpu": 100.0, "mean_intvty": 50.0}
    runs = measurements.read(write_lines(tmp_path / "q.jsonl", [row]))
    assert runs.points["occupancy"][0] == pytest.approx(0.25)
    assert runs.points["queue_bound"].to_list() == [True] and runs.summary()["queue_bound"] == 1


# ---- check: every kind of bad row -----------------------------------------------------------------------

@pytest.fixture
def good() -> dict:
    return shipped_rows("b200", "dsr1")[0]


def test_each_kind_of_bad_row_names_its_line_and_field(tmp_path, good, capsys):
    missing = {k: v for k, v in good.items() if k != "mean_tpot"}
    rows = [good, missing, good | {"conc": "4"}, good | {"mean_ttft": 1.9e5}, good | {"disagg": "yes"},
            '{"hw": "b200", "framework": ', good | {"precision": "int3"}, good | {"framework": "foo"},
            good | {"infmax_model_prefix": "llama9"}, good | {"isl": 1024.5}, [1, 2]]
    path = write_lines(tmp_path / "bad.jsonl", rows)
    got = problems_of(path)
    assert got == [
        f"{path}:2: mean_tpot: missing, required (valid: a number, 1e-05 to 10 s)",
        f"{path}:3: conc: not a number: '4' (valid: a JSON number in requests)",
        f"{path}:4: mean_ttft: 190000 is outside the plausible range; check the unit and the decimal point "
        "(valid: 0.0001 to 10000 s)",
        f"{path}:5: disagg: not a boolean: 'yes' (valid: true, false)",
        f"{path}:6: (line): not a JSON object: Expecting value at column 29 (valid: one JSON object a line)",
        f"{path}:7: precision: not a valid value: 'int3' (valid: fp4, fp8, bf16)",
        f"{path}:8: framework: unknown stack 'foo' (valid: vllm, sglang, trt, dynamo-trt, dynamo-sglang, atom, "
        "or <name>-<one of them>)",
        f"{path}:9: infmax_model_prefix: unknown model 'llama9' (valid: gpt-oss-120b, deepseek-r1, kimi-k2.5, "
        "gemma-4-31b, llama-3.1-70b)",
        f"{path}:10: isl: not an integer: 1024.5 (valid: a whole number)",
        f"{path}:11: (row): not a JSON object: [1, 2] (valid: an object of fields)",
    ]
    code, out, err = run_cli(["measurements", "check", str(path)], capsys)
    assert code == 2 and out == ""
    assert err.startswith(f"jalapeno: error: {path}:2: mean_tpot: missing") and err.count("\n") == len(got)


def test_a_disaggregated_row_needs_its_worker_counts(tmp_path, good):
    row = good | {"disagg": True}
    row.pop("tp")
    d = write_lines(tmp_path / "d.jsonl", [row])
    assert problems_of(d) == [
        f"{d}:1: {f}: missing, required when disagg is true (valid: a whole number, 1 to 100000 GPUs)"
        for f in ("num_prefill_gpu", "prefill_num_workers", "num_decode_gpu", "decode_num_workers")]
    agg = {k: v for k, v in good.items() if k != "tp"}
    a = write_lines(tmp_path / "a.jsonl", [agg])
    assert problems_of(a) == [
        f"{a}:1: tp: missing, required when disagg is false (valid: a whole number, 1 to 100000 GPUs)"]


def test_a_malformed_json_array_is_reported_at_its_line(tmp_path, capsys):
    path = tmp_path / "runs.json"
    path.write_text('[\n {"hw": "b200"},\n {"hw": }\n]\n')
    assert problems_of(path)[0].startswith(f"{path}:3: (file): not a valid JSON array: Expecting value")
    assert run_cli(["measurements", "check", str(path)], capsys)[0] == 2


def test_hw_keys_map_to_chips_as_the_shipped_ones_and_new_stacks_take_their_engine(tmp_path, good):
    chips = ["b200", "h100", "vera-rubin"]
    assert calibration.chip_of("b200-trt", chips) == "b200"
    assert calibration.chip_of("H100-vLLM", chips) == "h100"
    assert calibration.chip_of("vera-rubin", chips) == "vera-rubin"
    with pytest.raises(measurements.UnknownNameError, match="valid chips: b200, h100, vera-rubin"):
        calibration.chip_of("h100-foo", chips)
    assert measurements.engine_of("dynamo-vllm") == "vllm" and measurements.engine_of("dynamo-trt") == "dynamo-trt"
    runs = measurements.read(write_lines(tmp_path / "s.jsonl", [good | {"framework": "dynamo-vllm", "hw": "b200-trt"}]))
    assert runs.new_stacks == {"dynamo-vllm": "vllm"} and runs.points["chip"].to_list() == ["b200"]


def test_a_model_is_named_by_its_prefix_key_alias_repository_or_path():
    assert [measurements.model_of(r) for r in (
        {"infmax_model_prefix": "gptoss", "model": "whatever"}, {"model": "openai/gpt-oss-120b"},
        {"model": "deepseek-ai/DeepSeek-R1"}, {"model": "/mnt/lustre01/models/gpt-oss-120b"},
        {"model": "Kimi"})] == ["gpt-oss-120b", "gpt-oss-120b", "deepseek-r1", "gpt-oss-120b", "kimi-k2.5"]
    with pytest.raises(measurements.UnknownNameError, match="unknown model 'nvidia/DeepSeek-R1-0528-FP4-V2'; valid"):
        measurements.model_of({"model": "nvidia/DeepSeek-R1-0528-FP4-V2"})


# ---- a new chip: --chips -------------------------------------------------------------------------------

def chips_file(path: Path, chip: str = "x1000", **changes) -> Path:
    """A chips file for ``chip``: B200's rows of chip_specs.csv and chips.csv under a new name."""
    spec = pl.read_csv(data.data_dir() / "chip_specs.csv", infer_schema=False).filter(pl.col("chip") == "b200")
    row = pl.read_csv(data.data_dir() / "chips.csv", infer_schema=False).filter(pl.col("chip") == "b200")
    df = spec.with_columns(chip=pl.lit(chip)).join(row.drop("chip", "source"), how="cross")
    df = df.with_columns(**{"display_name": pl.lit("Example X1000"), "vendor": pl.lit("Example"), **changes})
    df.select(measurements.CHIP_COLUMNS).write_csv(path)
    return path


def test_an_unknown_chip_is_named_with_the_known_ones_and_accepted_with_its_chips_file(tmp_path, good, capsys):
    runs = write_lines(tmp_path / "new.jsonl", [good, good | {"hw": "x1000"}])
    known = ", ".join(measurements.specs.hbm_chip_names())
    assert problems_of(runs) == [f"{runs}:2: hw: unknown chip 'x1000' (valid: {known})"]
    code, out, err = run_cli(["measurements", "check", str(runs)], capsys)
    assert code == 2 and "new.jsonl:2: hw: unknown chip 'x1000'" in err and "b200, h100" in err
    chips = chips_file(tmp_path / "chips.csv")
    got = measurements.read(runs, chips)
    assert got.points["chip"].to_list() == ["b200", "x1000"]
    spec = got.chips["x1000"]
    assert spec.hbm_bandwidth_bytes_per_s == 8e12 and spec.peak_dense_flops_per_s["fp4"] == 9e15
    assert spec.generation == "Blackwell"
    code, out, err = run_cli(["measurements", "check", str(runs), "--chips", str(chips)], capsys)
    assert code == 0 and "chips: b200, x1000 (new: x1000)" in out


def test_a_bad_chips_file_is_checked_by_the_shipped_loaders(tmp_path, good, capsys):
    runs = write_lines(tmp_path / "new.jsonl", [good | {"hw": "x1000"}])
    # line 6 of the file is the hbm_bandwidth row (B200's order): 8 GB/s, a wrong unit
    unit = pl.when(pl.col("quantity") == "hbm_bandwidth").then(pl.lit("GB/s")).otherwise(pl.col("unit"))
    bad = chips_file(tmp_path / "bad.csv", unit=unit)
    assert pl.read_csv(bad)["quantity"][4] == "hbm_bandwidth"
    got = problems_of(runs, bad)
    assert len(got) == 1 and got[0].startswith(f"{bad}:6: value: 8 GB/s is outside the plausible range of "
                                               "hbm_bandwidth (1e+11 to 1e+14 B/s)")
    kind = chips_file(tmp_path / "kind.csv", kind=pl.lit("fpga"))
    assert problems_of(runs, kind)[0].startswith(
        f"{kind}:2: kind: not a valid value; valid values: gpu, asic, lpu, tpu (got 'fpga')")
    dup = chips_file(tmp_path / "dup.csv", chip="b200")
    assert problems_of(runs, dup)[0].startswith(f"{dup}:2: chip: duplicate key")
    code, out, err = run_cli(["measurements", "check", str(runs), "--chips", str(bad)], capsys)
    assert code == 2 and err.startswith(f"jalapeno: error: {bad}:6: value:")


# ---- score ---------------------------------------------------------------------------------------------

#: How close a score of repeated shipped rows comes to the committed scheme fold it reproduces (absolute,
#: in the fraction of a frontier distance, and in log units for a vertical error): the refit is the same
#: fit from the same start on the same rows, but a fit's result is a number once produced, not bits
#: (jalapeno.calibration's docstring: a few 1e-3 in the log constants in a direction only the prior informs).
TOLERANCE = 2e-3


def test_score_of_repeated_shipped_series_equals_their_held_out_scheme_fold(capsys):
    """The example repeats every shipped DeepSeek-R1 B200 row, so its score leaves them out of the calibration:
    the training rows are then those of the committed fold `model-chip=deepseek-r1 b200` of scheme (b), and each
    series' frontier distance and stack are what that fold reports."""
    import jalapeno

    table = jalapeno.score(EXAMPLE)
    fold = schemes.scheme_errors("model-chip").filter(pl.col("fold") == "model-chip=deepseek-r1 b200")
    assert table.height == fold.height == 4
    both = table.join(fold, on="series", suffix="_fold")
    assert both.height == 4
    assert np.allclose(both["frontier_distance"], both["frontier_distance_fold"], rtol=0, atol=TOLERANCE)
    assert both["stack"].to_list() == both["stack_fold"].to_list() == ["trt"] * 4
    assert (both["envelope_points"] == both["point_distances"].list.len()).all()
    # as the chapter's fold reports them: 9.2 %, 4.2 %, 10.2 %, 22.1 %
    assert sorted(round(d, 3) for d in table["frontier_distance"]) == [0.042, 0.092, 0.102, 0.221]
    assert set(table["calibration"]) == {"refit without 113 repeated rows"} and table["left_out"].sum() == 113
    # the band of the fold's own scheme: with the rows left out, B200 is a measured chip that the calibration
    # saw serve another model only (scheme (b) model-chip, x/÷ 2.3 in the chapter), not the shape band of a
    # measured pair; and its coverage recounted from the fold's own vertical errors
    width = calibration.scheme_half_width("model-chip")
    assert set(table["band_scheme"]) == {"model-chip"} and np.allclose(table["band_half_width"], width)
    assert np.exp(width) == pytest.approx(2.3, abs=0.05)
    for r in both.iter_rows(named=True):
        v, x = np.array(r["vertical_errors"]), np.array(r["point_interactivity"])
        reached = x <= r["predicted_top"] * (1 + 1e-9)
        assert (r["reached"], r["unreached"]) == (int(reached.sum()), int((~reached).sum()))
        assert r["inside"] == int(np.count_nonzero(np.abs(v[reached]) <= width))
    o = measurements.overall(table)
    stat = calibration.frontier_error(fold)
    assert o["median"] == pytest.approx(stat.median, abs=TOLERANCE) and o["p90"] == pytest.approx(stat.p90, abs=TOLERANCE)
    assert o["coverage"] == o["inside"] / o["reached"] and o["series"] == 4
    code, out, err = run_cli(["measurements", "score", str(EXAMPLE)], capsys)
    assert code == 0 and err == ""
    assert "deepseek-r1 b200 sglang fp4 8192/1024: frontier distance 22.1 %" in out
    assert "overall, 4 series: median " in out and "calibration: refit without 113 repeated rows" in out


def test_runs_that_repeat_no_shipped_run_are_scored_against_the_frontier_a_default_call_draws(tmp_path):
    """Without a run id no row repeats a shipped one: the stored calibration scores them, on the frontier the
    public call `jalapeno.frontier(chip, model, isl=, osl=, precision=, band=0.8)` draws; each series' distance
    is recomputed here from that call (to 1e-9: the same path) and differs from the held-out one."""
    import jalapeno

    rows = [{k: v for k, v in r.items() if k != "run_id"} for r in shipped_rows("b200", "dsr1")]
    table = measurements.score(write_lines(tmp_path / "mine.jsonl", rows))
    assert set(table["calibration"]) == {"stored"} and table["left_out"].sum() == 0
    shipped = calibration.configurations().filter((pl.col("hw") == "b200") & (pl.col("model_key") == "deepseek-r1"))
    for r in table.iter_rows(named=True):
        isl, osl = map(int, r["shape"].split("/"))
        g = shipped.filter((pl.col("precision") == r["precision"]) & (pl.col("isl") == isl))
        front = jalapeno.frontier("b200", "deepseek-r1", isl=isl, osl=osl, precision=r["precision"], band=0.8)
        x, y = 1 / g["mean_tpot"].to_numpy(), g["tput_per_gpu"].to_numpy()
        mi = measurements.pareto_envelope(x, y)
        d = calibration.point_distances(x[mi], y[mi], front["interactivity_tok_s_user"], front["throughput_tok_s_chip"])
        assert r["frontier_distance"] == pytest.approx(np.expm1(np.median(d)), abs=1e-9)
        assert r["band_scheme"] == front["band_scheme"][0]
        assert np.allclose(front["throughput_tok_s_chip_high"] / front["throughput_tok_s_chip"], np.exp(r["band_half_width"]))
    held = measurements.score(EXAMPLE)
    assert (table.sort("series")["frontier_distance"] - held.sort("series")["frontier_distance"]).abs().min() > 0.01


def test_score_refuses_a_file_with_nothing_to_score(tmp_path, capsys):
    row = shipped_rows("h100", "gptoss")[0] | {"spec_decoding": "mtp"}
    path = write_lines(tmp_path / "mtp.jsonl", [row])
    with pytest.raises(measurements.JalapenoError, match="no run to score: all 1 are queue-bound or use speculative"):
        measurements.score(path)
    assert run_cli(["measurements", "score", str(path)], capsys)[0] == 2


def test_a_new_chip_is_scored_with_its_chips_file_on_the_frontier_a_default_call_draws_for_it(tmp_path, monkeypatch):
    """B200's DeepSeek-R1 rows under a new chip X1000 (B200's specs, an NVIDIA chip): scored on the frontier
    `jalapeno.frontier("x1000", ...)` draws in a data folder that holds the chip (to 1e-9), with scheme (a)'s
    band (a chip no benchmark ran) and the stack its vendor's measured chips give it; the data folder is the
    package's again afterwards. Of another vendor, it takes the fallback stack."""
    import os

    import jalapeno

    monkeypatch.delenv("JALAPENO_DATA_DIR", raising=False)
    rows = [{k: v for k, v in r.items() if k != "run_id"} | {"hw": "x1000"} for r in shipped_rows("b200", "dsr1")]
    runs_path = write_lines(tmp_path / "x1000.jsonl", rows)
    chips = chips_file(tmp_path / "chips.csv", vendor=pl.lit("NVIDIA"))
    with pytest.raises(measurements.MeasurementsError, match="x1000.jsonl:1: hw: unknown chip 'x1000'"):
        measurements.score(runs_path)
    table = measurements.score(runs_path, chips)
    assert "JALAPENO_DATA_DIR" not in os.environ and data.data_dir() == ROOT / "data"
    assert set(table["band_scheme"]) == {"generation"} and set(table["stack"]) == {"dynamo-trt"}
    other = measurements.score(runs_path, chips_file(tmp_path / "other.csv"))  # vendor Example
    assert set(other["stack"]) == {calibration.FALLBACK_STACK}
    assert np.allclose(table["band_half_width"], calibration.scheme_half_width("generation"))
    runs = measurements.read(runs_path, chips)
    shipped = calibration.configurations().filter((pl.col("hw") == "b200") & (pl.col("model_key") == "deepseek-r1"))
    with measurements._data_folder(runs.tables):
        for r in table.iter_rows(named=True):
            isl, osl = map(int, r["shape"].split("/"))
            g = shipped.filter((pl.col("precision") == r["precision"]) & (pl.col("isl") == isl))
            front = jalapeno.frontier("x1000", "deepseek-r1", isl=isl, osl=osl, precision=r["precision"])
            x, y = 1 / g["mean_tpot"].to_numpy(), g["tput_per_gpu"].to_numpy()
            mi = measurements.pareto_envelope(x, y)
            d = calibration.point_distances(x[mi], y[mi], front["interactivity_tok_s_user"],
                                            front["throughput_tok_s_chip"])
            assert r["frontier_distance"] == pytest.approx(np.expm1(np.median(d)), abs=1e-9)


def test_score_out_writes_a_page_under_the_builds_folder_rules_and_nothing_for_bad_input(tmp_path, capsys):
    out = tmp_path / "page"
    code, text, err = run_cli(["measurements", "score", str(EXAMPLE), "--out", str(out)], capsys)
    assert code == 0 and text.rstrip().endswith(str(out / "index.html"))
    page = (out / "index.html").read_text()
    digest = measurements.read(EXAMPLE).digest
    assert f"Scored on my-runs.jsonl (sha256 {digest}); calibration: refit without 113 repeated rows" in page
    assert page.count("<svg") == 4 and page.count("<tr>") == 5  # a chart and a row a series, and the header
    assert "<td>22.1</td>" in page  # the FP4 8192/1024 series' frontier distance, in %
    assert sorted(p.name for p in out.iterdir()) == [".jalapeno-manifest.json", "index.html"]
    assert run_cli(["measurements", "score", str(EXAMPLE), "--out", str(out)], capsys)[0] == 0  # its own folder again
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    code, _, err = run_cli(["measurements", "score", str(EXAMPLE), "--out", str(foreign)], capsys)
    assert code == 2 and "files that jalapeno did not build" in err and (foreign / "notes.txt").read_text() == "mine"
    bad = write_lines(tmp_path / "bad.jsonl", [shipped_rows("h100", "gptoss")[0] | {"conc": -1}])
    code, _, err = run_cli(["measurements", "score", str(bad), "--out", str(tmp_path / "never")], capsys)
    assert code == 2 and err.startswith(f"jalapeno: error: {bad}:1: conc: -1 is outside the plausible range")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".page.jalapeno-lock", "bad.jsonl", "foreign", "page"]  # the build lock stays


def test_the_readme_lists_the_fields_as_the_module_checks_them():
    readme = (ROOT / "README.md").read_text()
    assert measurements.fields_table() in readme
    assert "| `mean_tpot` | required | number | s |" in measurements.fields_table()
