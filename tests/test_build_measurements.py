"""The book rebuilt on a reader's runs (issue 28, deliverables 3 and 4): `jalapeno build --measurements FILE
[--chips FILE] [--hold-out]`, the refit it runs (jalapeno.measurements.recalibrate) and what it says moved."""

import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from jalapeno import calibration, data, measured, measurements, specs
from jalapeno.publish import build, cli, pages, scenarios

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "my-runs.jsonl"
#: The decode-bound series the x0.8 file repeats: gpt-oss-120b on B200 served by TensorRT-LLM, FP4, 1k/1k
#: (77 rows, none queue-bound; its stack's overhead on Blackwell, tau_s:trt@blackwell, is shared only with
#: the same chip's 8k/1k series, 80 rows).
SERIES = {"hw": "b200-trt", "infmax_model_prefix": "gptoss", "isl": 1024, "osl": 1024}
CELL = "tau_s:trt@blackwell"


def series_rows(**where) -> pl.DataFrame:
    df = data.load(measurements.SHIPPED).filter(pl.col("spec_decoding") == "none")
    for k, v in where.items():
        df = df.filter(pl.col(k) == v)
    return df


def slower_file(path: Path) -> Path:
    """The shipped series of :data:`SERIES` with every throughput x0.8 and TPOT x1.25 (the same run ids and
    configurations: a re-measurement of those runs, 20 % slower)."""
    df = series_rows(**SERIES)
    lines = []
    for r in df.select([c for c in measurements.FIELDS if c in df.columns]).iter_rows(named=True):
        r = {k: v for k, v in r.items() if v is not None}
        for k in ("tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu", "mean_intvty", "median_intvty"):
            if k in r:
                r[k] *= 0.8
        r["mean_tpot"] *= 1.25
        lines.append(json.dumps(r))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def slower(tmp_path_factory):
    path = slower_file(tmp_path_factory.mktemp("slower") / "slower.jsonl")
    return path, measurements.recalibrate(measurements.read(path))


def test_a_series_20_percent_slower_raises_its_stacks_overhead_by_the_share_the_formula_gives(slower):
    """The evaluator's decode step (jalapeno/serving.py, module docstring) is the roofline parts at the
    achieved rates, plus the collectives, plus the per-layer overhead ``layers x f x (tau + beta x B / dp)``
    (plus ``alpha`` in each collective). TPOT x1.25 and throughput x0.8 at the same layouts and loads is a
    step 25 % longer; with every other constant held, only ``tau`` can add it: ``layers x f x d_tau =
    0.25 x step``, so ``d_tau = 0.25 x TPOT / (layers x f)`` at each point (the step is TPOT but for the
    prefill interference aggregated serving adds, which tau also scales). gpt-oss-120b has 36 layers and
    GQA attention (``f = 1``); the series' median measured TPOT is 4.04 ms, so the series alone asks
    ``d_tau = 0.25 x 4.04 ms / 36 = 28.0 µs`` (its points ask 15 to 89 µs).

    The refit replaces the 77 shipped rows by the reader's 77 (same run ids and configurations) and fits
    every constant again. tau_s:trt@blackwell is the overhead of two series, this one and B200 TensorRT-LLM
    8k/1k (80 rows, unchanged), so a least-squares overhead moves by about this series' share of the rows,
    77 / 157 = 0.49, of 28.0 µs: 13.7 µs. Tolerance 30 % of that (9.6 to 17.9 µs), because the other
    constants move too (the collective latency alpha_s absorbs part of the longer step: it falls by about
    a fifth, beta_s and the FLOP/s fraction rise a few per cent) and because a log-space fit weighs the
    fast points (small steps, small d_tau) more than the median does. Measured: 49.622 -> 62.155 µs, +12.5."""
    path, recal = slower
    df = series_rows(**SERIES)
    layers = specs.model("gpt-oss-120b").num_hidden_layers
    assert layers == 36 and specs.model("gpt-oss-120b").attention != "mla"
    tpot = df["mean_tpot"].to_numpy()
    d_tau = 0.25 * np.median(tpot) / layers
    assert d_tau == pytest.approx(28.0e-6, rel=0.01)
    cell = series_rows(hw="b200-trt", infmax_model_prefix="gptoss")
    share = df.height / cell.height
    assert (df.height, cell.height) == (77, 157) and recal.replaced == 77 and recal.added == 77
    row = recal.changes.filter(pl.col("parameter") == CELL).row(0, named=True)
    rise = row["refit"] - row["stored"]
    assert rise > 0 and row["moved"] and row["direct"]
    assert rise == pytest.approx(share * d_tau, rel=0.3)
    # the other stacks' overheads move only through the constants they share rows with, by far less
    others = recal.changes.filter(pl.col("parameter").str.starts_with("tau_s:") & ~pl.col("parameter").str.starts_with("tau_s:trt"))
    assert not others["direct"].any() and (others["relative_change"].abs() < 0.05).all()
    # eta_mem sits at its bound (0.9, efficiency_bounds.csv) with and without the rows: not informed
    eta = recal.changes.filter(pl.col("parameter") == "eta_mem").row(0, named=True)
    assert eta["stored"] == eta["refit"] == 0.9 and not eta["moved"]
    report = measurements.changes_report(recal.changes)
    assert re.search(r"tau_s:trt@blackwell: 49\.622 -> 6\d\.\d+ µs per layer per step \(\+2\d\.?\d* %; your rows", report)
    assert report.splitlines()[-1].startswith("constants your rows left unchanged (within 1 %, a refit's reproducibility") \
        and "eta_mem" in report.splitlines()[-1]


def test_rows_repeating_the_shipped_ones_inform_nothing_new():
    """The example file is 113 shipped rows as they are (examples/README.md): the refit replaces them by
    themselves, so no constant moves (measurements.UNCHANGED_RTOL, 1 %), and every one stays within the few
    1e-3 the module docstring of jalapeno.calibration claims for a refit's flattest direction (the new row
    order and the floating-point path move the collective latency and the overheads traded against it by
    1e-5 to 2e-4 on this project's three numeric paths; the stored values' fifth digit flips with them)."""
    recal = measurements.recalibrate(measurements.read(EXAMPLE))
    assert recal.replaced == recal.added == 113
    assert not recal.changes["moved"].any()
    assert (recal.changes["relative_change"].abs() < 5e-3).all()
    assert recal.changes.height == data.calibration_table().height


def test_a_new_stack_gets_an_overhead_of_its_own(tmp_path):
    """A reader's stack the book does not know (``dynamo-vllm``: Dynamo over vLLM workers) takes vLLM's
    overhead when scored and gets its own, per generation, when recalibrating (calibration.extra_stacks)."""
    rows = series_rows(hw="h200", infmax_model_prefix="gptoss", isl=1024, osl=1024)
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps({**{k: v for k, v in r.items() if v is not None}, "framework": "dynamo-vllm",
                                        "run_id": None} | {"run_id": "mine"}) + "\n"
                            for r in rows.select([c for c in measurements.FIELDS if c in rows.columns]).iter_rows(named=True)))
    runs = measurements.read(path)
    assert runs.new_stacks == {"dynamo-vllm": "vllm"}
    recal = measurements.recalibrate(runs)
    assert recal.replaced == 0 and recal.added == rows.height
    new = recal.changes.filter(pl.col("parameter").str.starts_with("tau_s:dynamo-vllm"))
    assert sorted(new["parameter"]) == ["tau_s:dynamo-vllm", "tau_s:dynamo-vllm@hopper"]
    assert new["stored"].is_null().all() and new["moved"].all()
    # the same runs as vLLM's own: its overhead lands near vLLM's on Hopper (within 10 %)
    vllm = recal.efficiency.tau_s["vllm@hopper"]
    assert recal.efficiency.tau_s["dynamo-vllm@hopper"] == pytest.approx(vllm, rel=0.1)
    assert "tau_s:dynamo-vllm@hopper" in recal.text


def test_a_scenario_names_measurements_relative_to_itself(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "mine.jsonl").write_text(EXAMPLE.read_text())
    scenario = tmp_path / "mine.yml"
    scenario.write_text("name: mine\ndescription: the book on my runs\nmeasurements: runs/mine.jsonl\n")
    s = scenarios.load_scenario(scenario)
    assert s.measurements == str((tmp_path / "runs" / "mine.jsonl").resolve()) and s.chips is None
    scenario.write_text("name: mine\ndescription: the book on my runs\nmeasurements: mine.jsonl\n")
    with pytest.raises(scenarios.ScenarioError, match="'measurements': no file 'mine.jsonl'"):
        scenarios.load_scenario(scenario)


@pytest.mark.parametrize("argv, fragment", [
    (["--measurements", "BAD"], r"bad\.jsonl:2: mean_tpot: not a number"),
    (["--hold-out"], r"--hold-out needs --measurements FILE"),
    (["--measurements", "BAD", "--hold-out"], r"bad\.jsonl:2: mean_tpot"),
])
def test_bad_measurements_exit_2_and_write_nothing(tmp_path, capsys, argv, fragment):
    rows = [json.loads(line) for line in EXAMPLE.read_text().splitlines()[:3]]
    rows[1]["mean_tpot"] = "fast"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "site"
    code = cli.main(["build", "serving-model", "--out", str(out), *[str(bad) if a == "BAD" else a for a in argv]])
    err = capsys.readouterr().err
    assert code == 2 and re.search(fragment, err), err
    assert not out.exists() and not list(tmp_path.glob(".site-building-*"))


def test_a_book_built_on_measurements_names_them_and_caches_by_their_contents(slower, tmp_path, monkeypatch,
                                                                           own_notebook_cache, capfd):
    """One chapter (the serving model's) built on the x0.8 file: its page's banner names the file and its
    digest and shows what moved; its numbers are the refit's (the collective latency it quotes falls);
    the site's data/calibration.csv is the refit's; an identical build comes from the cache, a changed file
    (one more blank line: another digest, the same rows) executes again."""
    monkeypatch.setenv("JALAPENO_CACHE_DIR", str(own_notebook_cache))
    path, recal = slower
    out = tmp_path / "site"
    build.build(["serving-model", "verdict"], out=out, measurements=path, progress=False)
    assert build.last_report.status["serving-model"].startswith("executed")
    err = capfd.readouterr().err
    assert "constants your rows moved" in err and "tau_s:trt@blackwell: 49.622 -> " in err
    page = (out / "chapters" / "serving-model.html").read_text()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    assert re.search(rf"Built on the measurements file \S*slower\.jsonl \(sha256 {recal.runs.digest[:12]} \)", text), text
    assert "Rebuilt on your measurements" in text and "What its rows moved" in text
    assert "--measurements" in text
    intro = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", (out / "intro.html").read_text()))
    assert recal.runs.digest[:12] in intro
    assert "at its default parameters" not in intro  # the verdict's quotes are this build's, on refit constants
    numbers = json.loads((out / "numbers.json").read_text())["serving-model"]
    committed = pages.committed_numbers()["serving-model"]
    assert float(numbers["alpha_us"]) < float(committed["alpha_us"])
    assert (out / "data" / "calibration.csv").read_text() == recal.text
    info = json.loads((out / "build-info.json").read_text())
    assert info["measurements"]["sha256"] == recal.runs.digest and info["measurements"]["hold_out"] is False

    # the validation schemes re-run with the rows in: the series' held-out predictions are the same (fitted
    # without it either way), its measured points 20 % slower, so each scheme's distance for it moves
    site, repo = (pl.read_ndjson(root / "data" / "derived" / "schemes.jsonl") for root in (out, ROOT))
    name = "gpt-oss-120b b200-trt trt fp4 1024/1024"
    dist = [t.filter((pl.col("kind") == "series") & (pl.col("series") == name)).sort("scheme")["frontier_distance"]
            for t in (site, repo)]
    assert dist[0].len() == dist[1].len() >= 3 and (dist[0] - dist[1]).abs().min() > 0.01
    table = pl.read_csv(out / "data" / "measured" / "inferencemax.csv", infer_schema_length=None)
    assert table["source"].str.contains(recal.runs.digest).sum() == 77 and table.height == data.load(measurements.SHIPPED).height

    build.build(["serving-model", "verdict"], out=out, measurements=path, progress=False)
    assert build.last_report.status["serving-model"].startswith("cached")
    path.write_text(path.read_text() + "\n")
    build.build(["serving-model", "verdict"], out=out, measurements=path, progress=False)
    assert build.last_report.status["serving-model"].startswith("executed")


def test_a_held_out_build_scores_the_rows_and_keeps_the_default_numbers(tmp_path, monkeypatch, own_notebook_cache,
                                                                         capsys):
    """--hold-out: no refit; the score is printed and shown on the serving-model page; the chapter's numbers
    are the committed notebook's (the stored calibration)."""
    monkeypatch.setenv("JALAPENO_CACHE_DIR", str(own_notebook_cache))
    out = tmp_path / "site"
    code = cli.main(["build", "serving-model", "--measurements", str(EXAMPLE), "--hold-out", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "overall, 4 series: median" in captured.err and "refit without 113 repeated rows" in captured.err
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", (out / "chapters" / "serving-model.html").read_text()))
    assert "its rows were held out" in text and "frontier distance (%)" in text and "--hold-out" in text
    numbers = json.loads((out / "numbers.json").read_text())["serving-model"]
    assert numbers == pages.committed_numbers()["serving-model"]
    assert (out / "data" / "calibration.csv").read_text() == (ROOT / "data" / "calibration.csv").read_text()


def test_a_new_chip_is_fitted_with_its_chips_file_and_its_data_folder_holds_it(tmp_path):
    """B200's DeepSeek-R1 rows (no run ids: they repeat nothing) under a new chip X1000 with B200's specs
    (tests/test_measurements.py's chips file): the refit reads the chip from the chips file; X1000 is a
    Blackwell chip served by SGLang, so its rows inform sglang@blackwell (no new overhead) and, as a second
    copy of rows already fitted, leave it within 1 % of the stored one; the data folder a build reads holds
    the chip in chips.csv and chip_specs.csv and the refit's calibration.csv."""
    from tests.test_measurements import chips_file, shipped_rows

    rows = [{k: v for k, v in r.items() if k != "run_id"} | {"hw": "x1000"} for r in shipped_rows("b200", "dsr1")]
    path = tmp_path / "x1000.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    chips = chips_file(tmp_path / "chips.csv", vendor=pl.lit("NVIDIA"))
    with pytest.raises(measurements.MeasurementsError, match="x1000.jsonl:1: hw: unknown chip 'x1000'"):
        measurements.read(path)
    recal = measurements.recalibrate(measurements.read(path, chips))
    assert recal.replaced == 0 and recal.added == 113
    assert set(recal.changes["parameter"]) == set(data.calibration_table()["parameter"])
    row = recal.changes.filter(pl.col("parameter") == "tau_s:sglang@blackwell").row(0, named=True)
    assert row["direct"] and abs(row["relative_change"]) < 0.01
    folder = measurements.data_folder(recal, tmp_path / "data")
    assert "x1000" in (folder / "chips.csv").read_text() and "x1000" in (folder / "chip_specs.csv").read_text()
    assert (folder / "calibration.csv").read_text() == recal.text
    shipped = data.load(measurements.SHIPPED)
    table = pl.read_csv(folder / "measured" / "inferencemax.csv", infer_schema_length=None)
    assert table.height == shipped.height + 113 and table["hw"].to_list()[-113:] == ["x1000"] * 113
    # no run id: the file's rows are one run, named after it
    assert table["run_id"][-113:].to_list() == ["x1000.jsonl"] * 113


def test_a_book_on_measurements_reads_the_refits_training_rows(slower, tmp_path, monkeypatch):
    """The measured table of a book built on the x0.8 file (jalapeno.measurements.measured_table) holds the
    shipped rows but the 77 the file repeats, then the file's 77: its configurations, the rows every
    chapter, chart and validation scheme of that book reads, are the refit's training rows; the reader's
    rows are told apart (reader_run) by their source, which names the file and its digest."""
    _, recal = slower
    table = measurements.measured_table(recal)
    shipped = data.load(measurements.SHIPPED)
    assert table.height == shipped.height and table.columns == shipped.columns
    mine = table.tail(77)
    assert mine["source"].str.starts_with(f"slower.jsonl sha256:{recal.runs.digest} line ").all()
    assert sorted(mine["run_id"].unique()) == sorted(series_rows(**SERIES)["run_id"].unique())
    folder = measurements.data_folder(recal, tmp_path / "data")
    monkeypatch.setenv("JALAPENO_DATA_DIR", str(folder))
    monkeypatch.setenv("JALAPENO_CACHE_DIR", str(tmp_path / "cache"))
    points, configs = measured.points(), calibration.configurations()
    assert points["reader_run"].sum() == 77 and set(points.filter("reader_run")["hw"]) == {"b200-trt"}
    cols = [c for c in configs.columns if c != "run_id"]
    assert configs.select(cols).sort(cols).equals(recal.training.select(cols).sort(cols))


def test_a_readers_run_counts_as_later_than_every_github_run():
    """comparison.run_order: InferenceMAX's GitHub run ids by number (not as text: 9 before 20786863188), then
    a reader's runs named after their file, so `run_id: auto` without a published run reads the newest."""
    from jalapeno import comparison

    assert sorted(["my-runs.jsonl", "20786863188", "9"], key=comparison.run_order) == ["9", "20786863188", "my-runs.jsonl"]
