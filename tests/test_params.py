"""Chapter parameters (golden cases 8 and 9): declared once by each chapter module's PARAMETERS, checked
by type, range, choices and kind of name, unknown names refused; the notebooks' cells generated from it."""

import ast
import inspect
import json
import re
import shutil

import pytest

import jalapeno as jp
from jalapeno.chapters import Parameter
from jalapeno.publish import params, scenarios

P = Parameter
DECLARED = (
    P("chips", ["gb200", "h200"]), P("mtp", True), P("conc", 64), P("label", "x"),
    P("scenario", "isl=8192,osl=1024"), P("power_w", 700.0))


@pytest.mark.parametrize("name, value, fragment", [
    ("chips", '["gb200"]', "must be a non-empty list such as [a, b] (jalapeno build -p chips '[a, b]'; papermill's own -p passes "
                               "lists as strings: use its -y 'chips: [a, b]'"),
    ("chips", [], "must be a non-empty list"),
    ("mtp", "false", "must be true or false"),
    ("conc", 64.0, "must be an integer (such as 64; 64.0, '64k' and True are refused)"),
    ("conc", True, "must be an integer (such as 64; 64.0, '64k' and True are refused)"),
    ("power_w", "high", "must be a number"),
])
def test_wrong_types_name_parameter_value_and_form(name, value, fragment):
    with pytest.raises(jp.ParameterError, match=re.escape(fragment)) as err:
        params.check({name: value}, DECLARED)
    assert repr(value) in str(err.value) and repr(name) in str(err.value)


def test_good_values_pass_and_ints_become_floats():
    out = params.check({"chips": ["gb200"], "conc": 128, "power_w": 1400, "label": "y",
                        "scenario": "isl=1024,osl=1024"}, DECLARED)
    assert out["conc"] == 128 and out["power_w"] == 1400.0 and isinstance(out["power_w"], float)
    assert out["mtp"] is True and out["scenario"] == "isl=1024,osl=1024"


def test_unknown_parameter_lists_valid_names():
    with pytest.raises(jp.UnknownNameError, match="unknown parameter 'concurency'; valid parameters: chips, mtp, conc"):
        params.check({"concurency": 128}, DECLARED)


def test_a_declaration_that_contradicts_itself_is_refused():
    with pytest.raises(ValueError, match="parameter 'power_w': a None default needs a declared type"):
        P("power_w", None)
    with pytest.raises(ValueError, match="parameter 'power_w': default 'high' is not a float"):
        P("power_w", "high", type=float)
    with pytest.raises(ValueError, match="give choices or a kind of name, not both"):
        P("chip", "gb200", choices=("gb200",), names="chip")
    with pytest.raises(jp.UnknownNameError, match="unknown name kind \\(in parameter 'chips'\\) 'chipz'; valid .*: chip, HBM chip"):
        P("chips", ["gb200"], names="chipz")


def test_none_defaults_take_their_declared_type():
    declared = (P("power_w", None, type=float, unit="W"), P("label", None, type=str))
    assert params.check({"power_w": 1400}, declared)["power_w"] == 1400.0
    assert params.check({"power_w": None, "label": 3}, declared) == {"power_w": None, "label": "3"}
    with pytest.raises(jp.ParameterError, match="parameter 'power_w' must be a number; got 'high'"):
        params.check({"power_w": "high"}, declared)


def test_string_parameters_take_their_declared_choices():
    declared = (P("basis", "rated", choices=("rated", "sustained", "all-in")), P("label", "x"))
    assert params.check({"basis": "all-in", "label": "y"}, declared)["basis"] == "all-in"
    for bad in ("peak", 5):  # a wrong type is named as a bad choice too, with the valid ones
        with pytest.raises(jp.UnknownNameError, match=f"unknown basis value {bad!r}; valid basis values: rated, sustained, all-in"):
            params.check({"basis": bad}, declared)


BOUNDED = (
    P("ctx", 8192, low=1, high=1048576, unit="tokens"), P("share", 0.5, low=0, high=1, low_open=True),
    P("power_w", None, type=float, low=0, high=5000, low_open=True, unit="W"), P("chips", ["gb200"], names="chip"),
    P("run_id", "auto"), P("basis", "rated", choices=("rated", "all-in")),
    P("shapes", [[1024, 1024]], low=1, high=1048576, unit="tokens"),
    P("pue", 0.0, low=0, high=3, note="0: the sourced central PUE"))


def check(**values):
    return params.check(values, BOUNDED)


@pytest.mark.parametrize("values, fragment", [
    ({"ctx": -5}, "parameter 'ctx' must be in [1, 1048576] tokens; got -5"),
    ({"ctx": 0}, "parameter 'ctx' must be in [1, 1048576] tokens; got 0"),
    ({"ctx": 10**12}, "parameter 'ctx' must be in [1, 1048576] tokens; got 1000000000000"),
    ({"share": 0.0}, "parameter 'share' must be in (0, 1]; got 0.0"),
    ({"share": float("nan")}, "parameter 'share' must be a finite number; got nan"),
    ({"power_w": float("inf")}, "parameter 'power_w' must be a finite number; got inf"),
    ({"power_w": 6000}, "parameter 'power_w' must be in (0, 5000] W; got 6000"),  # as given, not as converted
    ({"power_w": "-1400"}, "parameter 'power_w' must be in (0, 5000] W; got -1400"),  # papermill's -p text
    ({"shapes": [[1024, 0]]}, "parameter 'shapes' must be in [1, 1048576] tokens; got 0"),
    ({"pue": 3.5}, "parameter 'pue' must be in [0, 3] (0: the sourced central PUE); got 3.5"),
    ({"chips": ["gb200", "gb400"]}, "unknown chip 'gb400'; valid chips: jalapeno, gb200"),
    ({"basis": "facility"}, "unknown basis value 'facility'; valid basis values: rated, all-in"),
])
def test_declared_ranges_names_and_choices_refuse_bad_values(values, fragment):
    with pytest.raises(jp.JalapenoError, match=re.escape(fragment)):
        check(**values)


def test_numbers_read_as_text_and_text_read_as_numbers_are_accepted():
    out = check(run_id=20786863188, power_w="1.4e3", ctx=1, share=1.0, shapes=[[1, 1048576]], pue=3)
    assert out["run_id"] == "20786863188" and out["power_w"] == 1400.0 and out["pue"] == 3.0


def test_a_declaration_says_what_it_accepts():
    accepts = {p.name: p.accepts for p in BOUNDED}
    assert accepts == {"ctx": "in [1, 1048576] tokens", "share": "in (0, 1]", "power_w": "in (0, 5000] W",
                       "chips": "names: chip", "run_id": "", "basis": "one of: rated, all-in",
                       "shapes": "in [1, 1048576] tokens", "pue": "in [0, 3] (0: the sourced central PUE)"}
    assert P("x", 1.0, low=0).interval == "[0, inf)" and P("x", 1.0, high=2, high_open=True).interval == "(-inf, 2)"
    assert P("x", 1.0, low=0).admits(1e300) and not P("x", 1.0, high=2, high_open=True).admits(2)


def test_params_lists_the_valid_names_of_a_kind_of_name():
    """``jalapeno params reading-the-numbers``: the baseline's valid keys are the measured data's six (B200
    twice, under vLLM and under TensorRT-LLM), not a list typed in the prose; ``--json`` gives them too."""
    text = scenarios.describe("reading-the-numbers")
    assert "\n    valid: b200, b200-trt, gb200, h100, h200, mi355x\n" in text
    rows = {r["parameter"]: r for r in json.loads(scenarios.describe("reading-the-numbers", as_json=True))}
    assert rows["baseline"]["names"] == ["b200", "b200-trt", "gb200", "h100", "h200", "mi355x"]
    assert rows["run_id"]["names"][0] == "auto" and "20786863188" in rows["run_id"]["names"]  # the published run
    assert rows["baseline_power_w"]["names"] is None


def test_every_shipped_default_passes_its_own_declaration():
    for name in scenarios.notebook_names():
        declared = params.declaration(name)
        assert params.check(params.declared(name), declared) == params.declared(name)
        assert params.check({}, declared) == params.declared(name)


def test_declared_gives_a_copy_of_each_default():
    chips = params.declared("roofline")["chips"]
    chips.append("no-such-chip")
    assert "no-such-chip" not in params.declared("roofline")["chips"]


NOTEBOOKS = scenarios.notebook_names()


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_each_notebooks_parameters_cell_is_generated_from_its_declaration(name):
    cell = params.parameters_cell(scenarios.notebook_path(name))
    assert cell is not None, f"{name}: no cell tagged 'parameters'"
    assert "".join(cell["source"]) == params.cell_source(name), f"{name}: run jalapeno params {name} --write-cell"


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_the_generated_cell_holds_the_declared_defaults_with_their_types(name):
    lines = [node for node in ast.parse(params.cell_source(name)).body]
    read = {node.targets[0].id: ast.literal_eval(node.value) for node in lines}
    assert list(read) == [p.name for p in params.declaration(name)]
    assert {k: repr(v) for k, v in read.items()} == {k: repr(v) for k, v in params.declared(name).items()}


def _extra_keywords(name: str) -> list[str]:
    """The keywords the notebook passes to ``chapter.compute`` besides ``**P``."""
    nb = json.loads(scenarios.notebook_path(name).read_text())
    calls = [node for c in nb["cells"] if c["cell_type"] == "code" and "chapter.compute(" in "".join(c["source"])
             for node in ast.walk(ast.parse("".join(c["source"])))
             if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "compute"]
    assert len(calls) == 1, f"{name}: {len(calls)} calls of chapter.compute"
    return [k.arg for k in calls[0].keywords if k.arg is not None]


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_compute_takes_exactly_the_declared_names_keyword_only_without_defaults(name):
    signature = inspect.signature(params.chapter_module(name).compute).parameters.values()
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in signature), f"{name}: compute(*, ...) only"
    assert [p.name for p in signature if p.default is not inspect.Parameter.empty] == [], \
        f"{name}: a default in compute's signature (the declaration holds it)"
    assert [p.name for p in signature] == [p.name for p in params.declaration(name)] + _extra_keywords(name)


def test_write_cell_changes_only_the_parameters_cell(tmp_path):
    path = tmp_path / "roofline.ipynb"
    original = scenarios.notebook_path("roofline").read_text()
    path.write_text(original.replace('context_tokens = 8192', 'context_tokens = 4096', 1))
    assert params.write_cell(path) is True
    assert path.read_text() == original
    assert params.write_cell(path) is False
    nb = json.loads(original)
    nb["cells"] = [c for c in nb["cells"] if "parameters" not in c.get("metadata", {}).get("tags", [])]
    path.write_text(json.dumps(nb, indent=1))
    assert params.write_cell(path) is True
    cells = json.loads(path.read_text())["cells"]
    assert "parameters" in cells[1]["metadata"]["tags"] and "".join(cells[1]["source"]) == params.cell_source("roofline")


def test_params_write_cell_command_writes_the_cells_that_differ(tmp_path, monkeypatch, capsys):
    from jalapeno.publish import cli

    folder = tmp_path / "notebooks"
    shutil.copytree(scenarios.NOTEBOOKS_DIR, folder)
    monkeypatch.setattr(scenarios, "NOTEBOOKS_DIR", folder)
    stale = folder / "claims.ipynb"
    stale.write_text(stale.read_text().replace('show_status = \\"all\\"', 'show_status = \\"agrees\\"', 1))
    assert '\\"agrees\\"' in stale.read_text()
    assert cli.main(["params", "--write-cell"]) == 0
    assert capsys.readouterr().out.strip() == str(stale)
    assert stale.read_text() == (scenarios.REPO_ROOT / "notebooks" / "claims.ipynb").read_text()


def test_unknown_injected_names_are_what_the_notebook_does_not_define():
    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": ["ctx = 8192\n"]},
                    {"cell_type": "code", "metadata": {}, "source": [
                        "import numpy as np\n", "from jalapeno import charts as ch\n", "x = [y for y in range(3)]\n",
                        "%time z = 1\n"]}]}
    namespace = {"ctx": 1, "np": None, "ch": None, "x": [], "y": 0, "In": [], "_i1": "", "ctxx": 8192}
    assert params.unknown_injected(namespace, nb) == ["ctxx"]


def test_params_without_a_notebook_names_the_notebooks(capsys):
    from jalapeno.publish import cli

    assert cli.main(["params"]) == 2
    assert f"params needs a notebook name; notebooks: {', '.join(NOTEBOOKS)}" in capsys.readouterr().err


def test_every_unset_default_says_what_it_stands_for():
    """A parameter whose default is None says in its doc what None means (``(None: ...)``), so that a
    banner or parameter table shows ``unset: its rated TDP``, never a bare ``none``."""
    unset = {(n, p.name): p.shown(None) for n in scenarios.notebook_names()
             for p in params.declaration(scenarios.notebook_path(n)) if p.default is None}
    assert unset == {("reading-the-numbers", "baseline_power_w"): "unset: its rated TDP",
                     ("reading-the-numbers", "jalapeno_allin_w"): "unset: its TDP times the baseline's all-in / TDP",
                     ("systems", "jalapeno_scale_up_tb_s"): "unset: the scenario's",
                     ("agents", "energy_usd_per_kwh"): "unset: the average price to US industrial customers in 2023"}


def test_a_value_of_the_wrong_type_is_told_the_range_too():
    """A reader who typed text for a number learns both what it must be and where it must lie, at once."""
    with pytest.raises(jp.ParameterError) as err:
        params.check({"power_w": "abc"}, BOUNDED)
    assert str(err.value) == "parameter 'power_w' must be a number; got 'abc' (str); valid: (0, 5000] W"
