"""Every bad input an error before anything runs (issue 20, deliverable 2): each case of the issue, run
through ``jalapeno.publish.cli.main`` in this process (status 2, one line naming the value, no traceback,
nothing written), and the limits behind them."""

import math
import os
import re
import signal

import numpy as np
import pytest

import jalapeno as jp
from jalapeno import network, serving
from jalapeno.publish import cli, params, scenarios


def run(argv, tmp_path, capsys):
    """``jalapeno ARGV --out tmp_path/site`` in this process: (status, stderr). The signal handlers
    main() installs are put back."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        out = ["--out", str(tmp_path / "site")] if argv[0] == "build" and "--out" not in argv else []
        status = cli.main(argv + out)
    finally:
        for s, h in saved.items():
            signal.signal(s, h)
    err = capsys.readouterr().err
    assert not (tmp_path / "site").exists()
    assert "Traceback" not in err
    return status, err


LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8))


@pytest.mark.parametrize("argv, fragment", [
    # 1 and 400 zeros: an OverflowError traceback before; the range, with the value cut short
    (["build", "reading-the-numbers", "-p", "jalapeno_sustained_w", "1" + "0" * 400],
     "parameter 'jalapeno_sustained_w' must be a finite number; got 10000000000"),
    (["build", "roofline", "-p", "context_tokens", "1" + "0" * 5000], "an integer of 5,001 digits is too long"),
    # recursive and exponential YAML: refused at the first alias, the expansion never made
    (["build", "roofline", "-y", "chips: &a [gb200, *a]"], "-y: not valid YAML: aliases (*name) are not accepted"),
    (["build", "roofline", "-y", LAUGHS], "aliases (*name) are not accepted"),
    (["build", "roofline", "-y", "chips: " + "[" * 50 + "]" * 50], "nested deeper than 20 levels"),
    (["build", "roofline", "-y", "chips: [" + "a, " * 30000 + "]"], "-y: 90,009 characters is more than the 65,536"),
    # YAML 1.2 numbers: 02000000 is 2000000 (YAML 1.1: octal 524288, inside the range, run silently)
    (["build", "roofline", "-p", "context_tokens", "02000000"], "[1, 1048576] tokens; got 2000000"),
    # list elements checked like scalars, naming the parameter
    (["build", "systems", "-y", "contexts: [8192.5]"], "parameter 'contexts[0]' must be an integer"),
    (["build", "systems", "-y", "contexts: [8192, true]"], "parameter 'contexts[1]' must be an integer"),
    (["build", "roofline", "-y", "chips: [gb200, 7]"], "parameter 'chips[1]' must be a text; got 7 (int)"),
    (["build", "roofline", "-y", "chips: [gb200, gb400]"], "parameter 'chips': unknown HBM chip 'gb400'"),
    # a negative number is a value, then refused by the range
    (["build", "reading-the-numbers", "-p", "jalapeno_sustained_w", "-1e3"],
     "parameter 'jalapeno_sustained_w' must be in (0, 5000] W; got -1000.0"),
    (["build", "reading-the-numbers", "-p", "baseline_power_w", "-1400"],
     "parameter 'baseline_power_w' must be in (0, 5000] W; got -1400"),
    # so is a negative infinity, in YAML's spelling or Python's: the finiteness check, not argparse's
    (["build", "reading-the-numbers", "-p", "baseline_power_w", "-.inf"],
     "parameter 'baseline_power_w' must be a finite number; got -inf; valid: (0, 5000] W"),
    (["build", "reading-the-numbers", "-p", "baseline_power_w", "-inf"],
     "parameter 'baseline_power_w' must be a finite number; got -inf; valid: (0, 5000] W"),
    # one parameter given twice on the command line: which one was meant is not guessed
    (["build", "reading-the-numbers", "-p", "baseline_power_w", "1400", "-p", "baseline_power_w", "1500"],
     "parameter 'baseline_power_w' given twice with -p ('1400' and '1500'); give it once"),
    # every value inside its declared range, but the fabric graphs above the limit: refused at the check
    (["build", "systems", "-p", "size", "20000", "-p", "topology", "dragonfly", "-p", "concurrency", "100000"],
     "systems: parameters size=20000, topology='dragonfly': torus 25x25x32: 20,000 chips is above the limit of "
     "4,096 chips"),
    (["build", "systems", "-p", "size", "100"], "systems: a Boardfly is built of groups of 32 chips"),
    # each inside its range, but a task longer than the model's context: refused before, not in a cell
    (["build", "agents", "-p", "steps", "10000"], "agents: the longest call of task \"this chapter's task\" (ISL + "
     "OSL) of 11,386,028 tokens exceeds gpt-oss-120b's context window of 131,072 tokens"),
    # names a chapter checked only in a cell before: refused at the check, naming the parameter
    (["build", "reading-the-numbers", "-p", "baseline", "gb300"],
     "parameter 'baseline': unknown measured hardware 'gb300'; valid measured hardware: b200, b200-trt, gb200"),
    (["build", "reading-the-numbers", "-p", "run_id", "12345"], "parameter 'run_id': unknown run id '12345'"),
    (["build", "agents", "-y", "profiles: [nope]"], "parameter 'profiles': unknown agent profile 'nope'"),
    (["build", "caveats", "-p", "agent_profile", "nope"], "parameter 'agent_profile': unknown agent profile 'nope'"),
    (["build", "claims", "-p", "show_status", "nope"], "parameter 'show_status': unknown claim status 'nope'"),
    # a YAML error is one line, naming where it is
    (["build", "roofline", "-y", "chips: [gb200"], "-y: not valid YAML: while parsing a flow sequence: expected ',' "
     "or ']', but got '<stream end>' at line 1, column 14"),
])
def test_bad_command_line_input_is_one_line_and_status_2(argv, fragment, tmp_path, capsys):
    status, err = run(argv, tmp_path, capsys)
    assert status == 2
    assert fragment in err, err
    assert len(err) < 2000  # a cut value, never an expansion
    assert err.count("\n") == 1, err  # one line


def test_negative_values_reach_the_range_check_as_numbers():
    args = cli._parser().parse_args(["build", "-p", "x", "-1e3", "-p", "y", "-.5", "-p", "z", "-7",
                                     "-p", "w", "-.Inf"])
    assert cli._parameters(args) == {"x": -1000.0, "y": -0.5, "z": -7, "w": -math.inf}


@pytest.mark.parametrize("content, fragment", [
    (b"\x89PNG\r\n\x1a\n\x00\x00\xff", "not UTF-8 text (byte 0x89 at offset 0)"),
    ("context_tokens: 1024\n".encode("utf-16"), "not UTF-8 text (byte 0xff at offset 0)"),
    (b"context_tokens: 1024\n\x00", "not valid YAML"),  # UTF-8, but a control character
    (b"x" * 70_000, "more than the 65,536 bytes read as YAML"),
])
@pytest.mark.parametrize("option", ["-f", "--scenario"])
def test_undecodable_or_huge_files_name_the_file(content, fragment, option, tmp_path, capsys):
    path = tmp_path / "in.yml"
    path.write_bytes(content)
    status, err = run(["build", "roofline", option, str(path)], tmp_path, capsys)
    assert status == 2
    assert fragment in err and "in.yml" in err, err


def test_a_scenario_name_is_matched_in_full(tmp_path, capsys):
    path = tmp_path / "s.yml"
    path.write_text('name: "evil\\n"\ndescription: d\nparameters: {context_tokens: 1024}\n')
    status, err = run(["build", "roofline", "--scenario", str(path)], tmp_path, capsys)
    assert status == 2
    assert "'name' must be lower-case letters, digits and dashes, got 'evil\\n'" in err


@pytest.mark.parametrize("text, value", [
    ("020000", 20000), ("0x10", 16), ("0o20", 16), ("1.4e3", 1400.0), ("-1e3", -1000.0), ("+5", 5),
    ("yes", "yes"), ("on", "on"), ("True", True), ("FALSE", False), ("~", None), ("null", None),
    ("2026-01-02", "2026-01-02"), ("1_000", "1_000"), ("8192", 8192), (".5", 0.5)])
def test_yaml_values_follow_yaml_1_2_core_schema(text, value):
    got = params.read_yaml(text, "-p x")
    assert got == value and type(got) is type(value)


def test_yaml_infinities_and_nan_are_read_then_refused():
    assert params.read_yaml("-.inf", "x") == -np.inf and np.isnan(params.read_yaml(".nan", "x"))


@pytest.mark.parametrize("text", ["1e400", "-1E999", "[1.0, 2e309]"])
def test_a_number_beyond_any_float_is_refused_as_typed_not_read_as_an_infinity(text):
    typed = text.strip("[]").split(", ")[-1]
    with pytest.raises(jp.ParameterError, match=rf"^-p 'w': {re.escape(typed)} is beyond the largest number a float "
                                                 r"holds \(1\.8e\+308\)$"):
        params.read_yaml(text, "-p 'w'")
    assert params.read_yaml("1e308", "-p 'w'") == 1e308  # the largest power of ten a float holds is read


def test_an_integer_beyond_any_float_is_refused_not_overflowed():
    with pytest.raises(jp.ParameterError, match=r"must be a finite number; got 1000.*\(401 characters\)"):
        params.check_value("w", 10**400, 1.0)


def test_shipped_scenarios_and_parameter_file_read_the_same_under_yaml_1_2():
    import yaml

    for name in scenarios.scenario_names():
        path = scenarios.SCENARIOS_DIR / f"{name}.yml"
        assert params.read_yaml_file(path) == yaml.safe_load(path.read_text())


# ---- the stated cost limits ------------------------------------------------------------------------

def test_evaluate_refuses_too_many_configurations_before_making_them():
    with pytest.raises(jp.CostError, match="100,000,000 configurations in one evaluation is above the limit of 1,000,000"):
        jp.evaluate("gpt-oss-120b", "gb200", jp.Layout(n_chips=1), jp.Workload(concurrency=np.broadcast_to(64.0, (10**8,))))
    ok = jp.evaluate("gpt-oss-120b", "gb200", jp.Layout(n_chips=1), jp.Workload(concurrency=np.full(1000, 64.0)))  # well inside
    assert ok.tpot_s.shape == (1000,)


def test_evaluate_refuses_too_many_layouts_times_configurations():
    n = np.arange(1, 20_001, dtype=float)  # 20,000 configurations, each its own layout: 4e8 passes
    with pytest.raises(jp.CostError, match="20,000 configurations x 20,000 distinct worker layouts"):
        jp.evaluate("gpt-oss-120b", "gb200", jp.Layout(n_chips=n), jp.Workload(concurrency=64))


def test_frontier_validates_its_keywords():
    with pytest.raises(ValueError, match="max_chips must be a positive whole number .* got 0"):
        jp.frontier("gb300", "gpt-oss-120b", max_chips=0)
    with pytest.raises(jp.UnknownNameError, match="unknown serving stack 'nosuch'; valid serving stacks: atom, "):
        jp.frontier("gb300", "gpt-oss-120b", stack="nosuch")
    with pytest.raises(jp.UnknownNameError, match="unknown frontier option 'max_chip'; valid frontier options: eff, stack, max_chips"):
        jp.frontier("gb300", "gpt-oss-120b", max_chip=4)
    with pytest.raises(jp.CostError, match="above the limit of 1,000,000"):
        jp.frontier("gb300", "gpt-oss-120b", concurrency=np.arange(1, 10**6))


@pytest.mark.parametrize("topo, links", [
    (network.dragonfly((4, 8, 36)), 8 * 36 * 6 + 36 * 28 + 630),  # TPU 8i: boards, groups, the pod
    (network.torus((16, 16, 16)), 3 * 4096), (network.ring(7), 7), (network.torus((2, 3)), 3 + 6),
    (network.mesh((3, 4, 5)), 40 + 45 + 48), (network.switched(72), 72 * 71 // 2)])
def test_link_count_is_the_graphs_without_building_it(topo, links):
    assert network.link_count(topo.kind, topo.shape) == links == len(topo.edges())


def test_a_graph_above_the_limits_is_refused_at_once():
    import time

    start = time.monotonic()
    with pytest.raises(jp.CostError, match="dragonfly 8x2500: 20,000 chips is above the limit of 4,096 chips"):
        network.dragonfly((8, 2500)).diameter_hops()  # ran past 60 s before
    with pytest.raises(jp.CostError, match="switched 1000: 499,500 links is above the limit of 200,000 links"):
        network.switched(1000).edges()  # a complete graph
    assert time.monotonic() - start < 1.0


def test_every_shipped_default_and_scenario_is_well_inside_the_limits():
    for name in scenarios.notebook_names():
        scenarios.check_chapter(name, params.declared(scenarios.notebook_path(name)))
    for name in scenarios.scenario_names():
        s = scenarios.load_scenario(name)
        scenarios.plan(None, s.parameters, s.notebooks)
    # the book's largest graph and evaluation against the limits
    assert network.link_count("dragonfly", (4, 8, 36)) * 50 < network.MAX_GRAPH_LINKS
    assert 1152 * 3 < network.MAX_GRAPH_CHIPS
    assert 620 * 1000 < serving.MAX_CONFIGURATIONS


@pytest.mark.parametrize("argv, fragment", [
    (["build", "roofline", "-y", "chips: [gb200, h200, gb200]"], "parameter 'chips' names 'gb200' twice; give each once"),
    (["build", "systems", "-y", "contexts: [" + ", ".join(["8192"] * 257) + "]"],
     "parameter 'contexts' holds 257 elements, more than the 256 a list parameter takes"),
    (["build", "roofline", "-y", "chips: !!int x"], "'x' is not an integer"),
    (["build", "roofline", "-y", "chips: !!python/object:os.system x"], "could not determine a constructor"),
    (["build", "roofline", "-y", "{[1]: 2}"], "-y: not valid YAML"),
    (["build", "roofline", "--out", "site\0b"], "embedded null byte"),
    (["params", "no-such"], "unknown notebook 'no-such'"),
    # inside the declared range, refused by the chapter's check() before a kernel starts (they failed in cell 3)
    (["build", "systems", "-p", "weight_bits", "5"],
     "parameter 'weight_bits': unknown LPU weight width 5; valid LPU weight widths: 4, 8, 16"),
    (["build", "caveats", "-p", "pue", "0.5"], "parameter 'pue' must be 0 (the sourced central PUE) or in [1, 3], got 0.5"),
])
def test_lists_tags_and_odd_arguments_are_one_line_too(argv, fragment, tmp_path, capsys):
    status, err = run(argv, tmp_path, capsys)
    assert status == 2
    assert fragment in err, err


def test_a_notebook_run_directly_stops_at_setup_on_a_cost_limit():
    from jalapeno.publish import notebook

    namespace = dict(params.declared(scenarios.notebook_path("systems")), size=20000, topology="dragonfly")
    with pytest.raises(jp.CostError, match="systems: parameters size=20000, topology='dragonfly': torus 25x25x32: "
                                           "20,000 chips is above the limit of 4,096 chips"):
        notebook.setup(namespace, "systems")


def test_a_scenario_is_cost_checked_whole_even_for_a_chapter_not_chosen(tmp_path):
    path = tmp_path / "s.yml"
    path.write_text("name: big\ndescription: d\nnotebooks: {systems: {size: 8192}}\n")
    s = scenarios.load_scenario(path)
    with pytest.raises(jp.CostError, match="size=8192.*8,192 chips is above the limit of 4,096"):
        scenarios.plan(["roofline"], s.parameters, s.notebooks)


@pytest.mark.parametrize("keywords, fragment", [
    ({"mtp_tokens_per_step": 0}, "mtp_tokens_per_step must be a finite number of tokens a step emits, at least 1"),
    ({"mtp_tokens_per_step": -1}, "got -1"),  # gave a negative TPOT before
    ({"hbm_bandwidth_bytes_per_s": -1e12}, "hbm_bandwidth_bytes_per_s must be positive and finite, got -1000000000000.0"),
    ({"mtp_draft_cost": -0.5}, "mtp_draft_cost must be a finite fraction of a decode step, at least 0, got -0.5"),
    ({"disagg": True}, "a disaggregated evaluation (disagg=True) needs prefill_chips"),
    ({"disagg": True, "prefill_chips": 0}, "prefill_chips must be positive and finite, got 0.0"),
    ({"disagg": True, "prefill_chips": 1, "prefill_tp": 0}, "prefill_tp must be positive and finite, got 0.0"),
    ({"ep": "yes"}, "ep must be True or False, got 'yes'"),
])
def test_evaluate_validates_its_keywords(keywords, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        layout, workload, _ = serving.split_keywords(dict(n_chips=1, concurrency=64, **keywords))  # they check
        jp.evaluate("gpt-oss-120b", "gb200", layout, workload)


def test_a_reader_that_leaves_the_pipe_gets_no_error_line():
    """``jalapeno params agents | head -1``: the reader closes the pipe before the table is written."""
    import subprocess
    import sys

    read, write = os.pipe()
    os.close(read)  # the reader has left before anything is written
    proc = subprocess.run([sys.executable, "-m", "jalapeno.publish.cli", "params", "agents"], stdout=write,
                          stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(write)
    assert proc.returncode == 1 and proc.stderr == ""
