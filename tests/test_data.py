"""Loaders on good and malformed files (golden case 12: thousands separators, empty fields)."""

import pytest

import jalapeno as jp
from jalapeno import data
from jalapeno.data import Column, read_table

SCHEMA = {"chip": Column("str", True), "hbm_bw_gb_s": Column("float", True), "tdp_w": Column("int")}


def write(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_every_data_file_loads_with_its_schema():
    sizes = {name: data.load(name).height for name in data.SCHEMAS}
    assert sizes["chips.csv"] >= 14
    assert sizes["models.csv"] >= 5
    assert sizes["measured/inferencemax.csv"] == 972
    assert sizes["claims.csv"] >= 70
    assert data.chip_specs_si().height == data.load("chip_specs.csv").height


def test_a_kept_table_reads_back_as_validated(tmp_path, monkeypatch):
    """data.load keeps each validated table by its file's contents: read back, it is the table
    read_table gives, value for value and type for type."""
    monkeypatch.setenv("JALAPENO_CACHE_DIR", str(tmp_path))
    for name in data.SCHEMAS:
        fresh = read_table(data.data_dir() / name, data.SCHEMAS[name], data.KEYS.get(name, ()))
        for _ in range(2):  # computed and kept, then read back from the cache
            data._load.cache_clear()
            kept = data.load(name)
            assert kept.schema == fresh.schema and kept.equals(fresh), name
    assert len(list((tmp_path / "tables").glob("*.parquet"))) == len(data.SCHEMAS)
    data._load.cache_clear()


def test_thousands_separators_are_numbers_in_numeric_columns(tmp_path):
    df = read_table(write(tmp_path, 'chip,hbm_bw_gb_s,tdp_w\nh200,"4,800",700\ngb200,"8,000","1,200"\n'), SCHEMA)
    assert df["hbm_bw_gb_s"].to_list() == [4800.0, 8000.0]
    assert df["tdp_w"].to_list() == [700, 1200]


def test_late_value_with_separator_is_read_not_a_parse_error(tmp_path):
    rows = "".join(f"c{i},500,1\n" for i in range(150)) + 'x,"1,342",1\n'
    df = read_table(write(tmp_path, "chip,hbm_bw_gb_s,tdp_w\n" + rows), SCHEMA)
    assert df["hbm_bw_gb_s"][-1] == 1342.0


@pytest.mark.parametrize("body, line, column, fragment", [
    ("h200,,700\n", 2, "hbm_bw_gb_s", "a value is required"),
    ("h200,4.8 TB/s,700\n", 2, "hbm_bw_gb_s", "not a finite number"),
    ("h200,4800,700\nh100,3350,70.5\n", 3, "tdp_w", "not an integer"),
    ("h200,4800,700\nh200,4800,700\n", 3, "chip", "duplicate key"),
    ('h200,"4,80,0",700\n', 2, "hbm_bw_gb_s", "not a finite number"),
])
def test_malformed_rows_name_file_line_column_and_value(tmp_path, body, line, column, fragment):
    path = write(tmp_path, "chip,hbm_bw_gb_s,tdp_w\n" + body)
    with pytest.raises(jp.DataError) as err:
        read_table(path, SCHEMA, key=("chip",))
    msg = str(err.value)
    assert str(path) in msg and f"line {line}" in msg and f"'{column}'" in msg and fragment in msg


def test_missing_column_is_named(tmp_path):
    with pytest.raises(jp.DataError, match=r"missing \['tdp_w'\]"):
        read_table(write(tmp_path, "chip,hbm_bw_gb_s\nh200,4800\n"), SCHEMA)


def test_bad_choice_lists_valid_values(edit_data):
    edit_data("chips.csv", ",gpu,shipping,", ",graphics,shipping,")
    with pytest.raises(jp.DataError, match=r"chips\.csv: line 3, column 'kind'.*valid values: gpu, asic, lpu, tpu"):
        jp.chip_names()


def test_unit_that_does_not_fit_quantity_is_refused(data_copy):
    p = data_copy / "chip_specs.csv"
    lines = p.read_text().splitlines()
    i = next(i for i, l in enumerate(lines) if l.startswith("h200,hbm_bandwidth,"))
    lines[i] = lines[i].replace(",TB/s,", ",GB,")
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(jp.DataError, match=rf"line {i + 1}, column 'unit'.*not a unit of hbm_bandwidth"):
        data.chip_specs_si()


def test_spec_row_for_unlisted_chip_is_refused(data_copy):
    p = data_copy / "chip_specs.csv"
    p.write_text(p.read_text() + "h300,tdp,700,W,published,,somewhere\n")
    with pytest.raises(jp.DataError, match="chip not in chips.csv"):
        data.chip_specs_si()


def test_si_conversion_of_source_units():
    h200 = jp.chip("h200")
    assert h200.hbm_bandwidth_bytes_per_s == pytest.approx(4.8e12)  # 4.8 TB/s
    assert h200.hbm_capacity_bytes == pytest.approx(141e9)
    assert jp.chip("gb200").allin_power_w == pytest.approx(2100.0)  # 2.10 kW
    assert jp.chip("tpu7x").hbm_capacity_bytes == pytest.approx(192 * 2**30)  # GiB stays GiB
    assert jp.chip("groq-3-lpu").sram_bytes == pytest.approx(500e6)


def test_measured_rows_carry_run_id_and_source():
    df = data.load("measured/inferencemax.csv")
    assert df["run_id"].null_count() == 0
    assert all(rid in src for rid, src in zip(df["run_id"], df["source"]))


@pytest.mark.parametrize("old, new, fragment", [
    # the 1000x typos: each refused on load, with the file, the line and the column
    ("jalapeno,hbm_bandwidth,12.288,TB/s", 'jalapeno,hbm_bandwidth,"12,288",TB/s',
     "12288 TB/s is outside the plausible range of hbm_bandwidth (1e+11 to 1e+14 B/s)"),
    ("h100,hbm_bandwidth,3.35,TB/s", "h100,hbm_bandwidth,3.35,GB/s",
     "3.35 GB/s is outside the plausible range of hbm_bandwidth"),
    ("h100,hbm_bandwidth,3.35,TB/s", "h100,hbm_bandwidth,inf,TB/s", "not a finite number"),
    ("h100,hbm_bandwidth,3.35,TB/s", 'h100,hbm_bandwidth,"3,35",TB/s', "a decimal comma? write 1.5, not 1,5"),
])
def test_implausible_spec_values_are_refused_with_file_line_and_column(edit_data, old, new, fragment):
    edit_data("chip_specs.csv", old, new)
    with pytest.raises(jp.DataError, match=r"chip_specs\.csv: line \d+, column '(value)'") as err:
        data.chip_specs_si()
    assert fragment in str(err.value)


def _at_once(tmp_path, child: str, names: list[str]) -> tuple[list[str], str]:
    """Run ``child`` (Python source) in one process per name at once, on one cache of their own; each gets
    a log file and its name as arguments. Returns each process's printed line and the log."""
    import os
    import subprocess
    import sys

    log = tmp_path / "computed.txt"
    env = {**os.environ, "JALAPENO_CACHE_DIR": str(tmp_path / "cache")}
    procs = [subprocess.Popen([sys.executable, "-c", child, str(log), name], env=env, stdout=subprocess.PIPE,
                              text=True) for name in names]
    outs = [p.communicate()[0].strip() for p in procs]
    assert [p.returncode for p in procs] == [0] * len(names)
    return outs, log.read_text()


def test_two_processes_asking_for_one_cached_frame_compute_it_once(tmp_path):
    """Two notebooks of one build that need the same hold-out refit: the second waits for the first's
    result (the lock of jalapeno.data.cached_frame) instead of computing it again."""
    child = ("import sys, time, polars as pl\n"
             "from jalapeno import data\n"
             "def compute():\n"
             "    open(sys.argv[1], 'a').write('computed\\n')\n"
             "    time.sleep(1.0)\n"
             "    return pl.DataFrame({'x': [1.0]})\n"
             "print(data.cached_frame('test-lock', 'k' * 64, compute)['x'][0])\n")
    outs, log = _at_once(tmp_path, child, ["a", "b"])
    assert outs == ["1.0", "1.0"]
    assert log == "computed\n"


def test_two_processes_asking_for_the_same_frames_share_them_out(tmp_path):
    """Two notebooks of a cold build that need the same four hold-out refits (jalapeno.data.cached_frames):
    each frame is computed once, both processes compute some (a frame another process is computing is
    passed over, then waited for), and both get every frame."""
    child = ("import sys, time, polars as pl\n"
             "from jalapeno import data\n"
             "def make(i):\n"
             "    def compute():\n"
             "        open(sys.argv[1], 'a').write(f'{sys.argv[2]} {i}\\n')\n"
             "        time.sleep(1.5)  # longer than a process takes to start, even on a busy machine\n"
             "        return pl.DataFrame({'x': [float(i)]})\n"
             "    return compute\n"
             "frames = data.cached_frames('test-share', [(str(i) * 64, make(i)) for i in range(4)])\n"
             "print(' '.join(str(f['x'][0]) for f in frames))\n")
    outs, log = _at_once(tmp_path, child, ["a", "b"])
    assert outs == ["0.0 1.0 2.0 3.0"] * 2
    lines = log.split()
    computed = sorted(int(i) for i in lines[1::2])
    assert computed == [0, 1, 2, 3]  # each once
    assert set(lines[0::2]) == {"a", "b"}  # by both processes


@pytest.mark.parametrize("old, new, line, column, fragment", [
    # the throughput x1000 (it published 44,960,390 tok/s/kW with exit 0): the file's largest, 54,079
    # tok/s per GPU, read as 54,079,172
    (",54079.1725076122,", ",54079172.5076122,", 753, "tput_per_gpu",
     "5.40792e+07 is outside the plausible range 1 to 1e+06 tok/s per GPU"),
    # a TPOT written in milliseconds in a file of seconds: 52.7 s per token
    (",0.05269737022987237,", ",52.69737022987237,", 155, "mean_tpot", "52.6974 is outside the plausible range 1e-05 to 10 s"),
    (",false,false,4,4,false,", ",false,false,0,4,false,", 2, "tp", "0 is outside the plausible range 1 to 100000 GPUs"),
])
def test_implausible_measured_values_are_refused_with_file_line_column_and_range(edit_data, old, new, line, column,
                                                                                  fragment):
    edit_data("measured/inferencemax.csv", old, new)
    with pytest.raises(jp.DataError, match=rf"inferencemax\.csv: line {line}, column '{column}'") as err:
        data.load("measured/inferencemax.csv")
    assert fragment in str(err.value)


def test_every_measured_value_lies_inside_its_range_with_room():
    df = data.load("measured/inferencemax.csv")
    for name, col in data.SCHEMAS["measured/inferencemax.csv"].items():
        if col.plausible and df[name].drop_nulls().len():
            low, high = col.plausible
            assert low <= df[name].min() and df[name].max() * 5 <= high, name


def test_efficiency_bounds_hold_the_published_evidence():
    """Each bound of efficiency_bounds.csv against the evidence its basis cites, worked by hand: FlashMLA's
    3,000 GB/s on H800 SXM5 (rated 3.35 TB/s, the H100 SXM's) is 0.896 of rated HBM bandwidth, rounded up to
    0.9; DeepGEMM's 1,550 TFLOPS FP8 on H800 (dense FP8 peak 1,979 TFLOPS) is 0.783, rounded up to 0.8; one
    NVLink Switch traversal is about 1 us (data/system_specs.csv, gb200-nvl72 hop_latency)."""
    bounds = data.efficiency_bounds()
    assert bounds["eta_mem"] == (0.2, 0.9) and 3000 / 3350 <= bounds["eta_mem"][1] <= 3000 / 3350 + 0.01
    h100 = data.chip_specs_si().filter(chip="h100")
    bandwidth = h100.filter(quantity="hbm_bandwidth")["value_si"][0]
    fp8 = h100.filter(quantity="peak_dense_flops_fp8")["value_si"][0]
    assert 3000e9 / bandwidth == pytest.approx(0.8955, abs=1e-4)
    assert 1550e12 / fp8 == pytest.approx(0.7832, abs=1e-4)
    for name, low in (("eta_compute", 0.05), ("eta_prefill", 0.02)):
        assert bounds[name] == (low, 0.8) and 1550 / 1979 <= bounds[name][1] <= 1550 / 1979 + 0.02
    hop = data.system_specs_si().filter(system="gb200-nvl72", quantity="hop_latency")["value_si"][0]
    assert bounds["alpha_s"] == (pytest.approx(1e-6, rel=1e-12), pytest.approx(1e-4, rel=1e-12))
    assert bounds["alpha_s"][0] == pytest.approx(hop, rel=1e-12)
    assert bounds["beta_s"] == (pytest.approx(1e-9), pytest.approx(1e-5))
    assert bounds["mla_layer_factor"] == (1.0, 3.0)
    assert bounds["tau_s"] == (pytest.approx(1e-7), pytest.approx(2e-4))


def test_efficiency_bounds_cover_every_fitted_constant():
    from jalapeno import calibration
    bounds = data.efficiency_bounds()
    assert set(calibration.BOUNDS) | {"tau_s"} == set(bounds) == set(data.EFFICIENCY_UNITS)
    table = data.efficiency_bounds_table()
    assert table["basis"].str.len_chars().min() > 40 and table["source"].null_count() == 0
    assert "github.com/deepseek-ai/FlashMLA" in table.filter(parameter="eta_mem")["source"][0]


@pytest.mark.parametrize("old, new, line, column, fragment", [
    ("eta_mem,0.2,0.9,fraction,", "eta_mem,0.2,0.9,ratio,", 2, "unit", "eta_mem is bounded in 'fraction'"),
    ("eta_compute,0.05,0.8,", "eta_compute,0.05,1.2,", 3, "high", "an achieved fraction of a rated figure is at most 1"),
    ("alpha_s,1e-6,1e-4,", "alpha_s,1e-3,1e-4,", 5, "high", "the high bound must exceed the low bound 0.001"),
    ("tau_s,1e-7,2e-4,", "tau_s,1e-7,0.2 ms,", 8, "high", "not a finite number"),
    ("beta_s,1e-9,", "beta,1e-9,", 6, "parameter", "not a valid value; valid values: eta_mem"),
    ("eta_prefill,0.02,", "eta_mem,0.02,", 4, "parameter", "duplicate key"),
    ("mla_layer_factor,1,3,", "mla_layer_factor,,3,", 7, "low", "a value is required"),
])
def test_malformed_efficiency_bounds_name_file_line_and_column(edit_data, old, new, line, column, fragment):
    edit_data("efficiency_bounds.csv", old, new)
    with pytest.raises(jp.DataError, match=rf"efficiency_bounds\.csv: line {line}, column '{column}'") as err:
        data.efficiency_bounds()
    assert fragment in str(err.value)


def test_efficiency_bounds_without_a_parameter_are_refused(edit_data):
    path = data.data_dir() / "efficiency_bounds.csv"
    line = next(x for x in path.read_text().splitlines() if x.startswith("mla_layer_factor,"))
    edit_data("efficiency_bounds.csv", line + "\n", "")
    with pytest.raises(jp.DataError, match=r"efficiency_bounds\.csv: no row for mla_layer_factor"):
        data.efficiency_bounds()


def test_keyed_look_ups_follow_an_edited_copy_of_the_data(edit_data):
    """claim_value, jalapeno_unknown and model_constant are dictionary look-ups kept next to the table they
    were read from (data.kept_for): an edited copy of data/ is read again, not answered from the old one."""
    assert data.jalapeno_unknown("hbm_bandwidth", "low") == pytest.approx(9.83e12)
    assert data.model_constant("queue_bound_occupancy") == 0.5
    edit_data("jalapeno_unknowns.csv", "hbm_bandwidth,9.83,", "hbm_bandwidth,9.5,")
    assert data.jalapeno_unknown("hbm_bandwidth", "low") == pytest.approx(9.5e12)
    edit_data("model_constants.csv", "queue_bound_occupancy,0.5,", "queue_bound_occupancy,0.1,")
    assert data.model_constant("queue_bound_occupancy") == 0.1
    with pytest.raises(jp.UnknownNameError, match="unknown Jalapeño unknown 'hbm_bw'"):
        data.jalapeno_unknown("hbm_bw")


def test_kept_for_computes_once_per_table_object():
    calls = []
    table = data.load("claims.csv")
    for _ in range(3):
        assert data.kept_for(("test",), (table,), lambda: calls.append(1) or len(calls)) == 1
    assert data.kept_for(("test",), (table.clone(),), lambda: calls.append(1) or len(calls)) == 2
