"""Notebook parameters (golden cases 8 and 9): read with ast, checked by type, unknown names refused."""

import re

import pytest

import jalapeno as jp
from jalapeno.publish import params

NB = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": [
    'chips = ["gb200", "h200"]\n', "mtp = True\n", "conc = 64\n", "label = None\n",
    'scenario = "isl=8192,osl=1024"\n', "power_w = 700.0\n"]}]}


def test_declared_reads_string_defaults_with_equals_signs():
    d = params.declared(NB)
    assert list(d) == ["chips", "mtp", "conc", "label", "scenario", "power_w"]
    assert d["scenario"] == "isl=8192,osl=1024"


@pytest.mark.parametrize("name, value, fragment", [
    ("chips", '["gb200"]', "must be a non-empty list such as [a, b] (papermill's -p passes lists as strings: use -y"),
    ("chips", [], "must be a non-empty list"),
    ("mtp", "false", "must be True or False"),
    ("conc", 64.0, "must be an integer (such as 64; 64.0, '64k' and True are refused)"),
    ("conc", True, "must be an integer (such as 64; 64.0, '64k' and True are refused)"),
    ("power_w", "high", "must be a number"),
])
def test_wrong_types_name_parameter_value_and_form(name, value, fragment):
    with pytest.raises(jp.ParameterError, match=re.escape(fragment)) as err:
        params.check({name: value}, params.declared(NB))
    assert repr(value) in str(err.value) and repr(name) in str(err.value)


def test_good_values_pass_and_ints_become_floats():
    out = params.check({"chips": ["gb200"], "conc": 128, "power_w": 1400, "label": "x",
                        "scenario": "isl=1024,osl=1024"}, params.declared(NB))
    assert out["conc"] == 128 and out["power_w"] == 1400.0 and isinstance(out["power_w"], float)
    assert out["mtp"] is True


def test_unknown_parameter_lists_valid_names():
    with pytest.raises(jp.UnknownNameError, match="unknown parameter 'concurency'; valid parameters: chips, mtp, conc"):
        params.check({"concurency": 128}, params.declared(NB))


def test_parameters_cell_must_be_literals():
    bad = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": ["x = f(1)\n"]}]}
    with pytest.raises(jp.ParameterError, match="not a literal"):
        params.declared(bad)
    with pytest.raises(jp.ParameterError, match="no cell tagged 'parameters'"):
        params.declared({"cells": []})


def test_none_defaults_take_their_declared_type():
    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": [
        "power_w = None  # float or None (W)\n", "label = None\n"]}]}
    types = params.declarations(nb)
    assert {k: d.type for k, d in types.items() if d.type} == {"power_w": float}
    assert params.check({"power_w": 1400}, params.declared(nb), types)["power_w"] == 1400.0
    assert params.check({"power_w": None, "label": 3}, params.declared(nb), types)["label"] == 3
    with pytest.raises(jp.ParameterError, match="parameter 'power_w' must be a number; got 'high'"):
        params.check({"power_w": "high"}, params.declared(nb), types)


def test_string_parameters_take_their_declared_choices():
    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": [
        'basis = "rated"  # one of: rated, sustained, all-in\n', 'label = "x"  # any text\n']}]}
    choices = params.declarations(nb)
    assert {k: d.choices for k, d in choices.items() if d.choices} == {"basis": ("rated", "sustained", "all-in")}
    assert params.check({"basis": "all-in", "label": "y"}, params.declared(nb), choices)["basis"] == "all-in"
    for bad in ("peak", 5):  # a wrong type is named as a bad choice too, with the valid ones
        with pytest.raises(jp.UnknownNameError, match=f"unknown basis value {bad!r}; valid basis values: rated, sustained, all-in"):
            params.check({"basis": bad}, params.declared(nb), choices)


DECLARED = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": [
    "ctx = 8192  # in [1, 1048576] tokens\n", "share = 0.5  # in (0, 1]\n", "power_w = None  # float or None; in (0, 5000] W\n",
    'chips = ["gb200"]  # names: chip\n', 'run_id = "auto"\n', 'basis = "rated"  # one of: rated, all-in\n',
    "shapes = [[1024, 1024]]  # in [1, 1048576] tokens\n"]}]}


def check(**values):
    nb = DECLARED
    return params.check(values, params.declared(nb), params.declarations(nb))


@pytest.mark.parametrize("values, fragment", [
    ({"ctx": -5}, "parameter 'ctx' must be in [1, 1048576] tokens; got -5"),
    ({"ctx": 0}, "parameter 'ctx' must be in [1, 1048576] tokens; got 0"),
    ({"ctx": 10**12}, "parameter 'ctx' must be in [1, 1048576] tokens; got 1000000000000"),
    ({"share": 0.0}, "parameter 'share' must be in (0, 1]; got 0.0"),
    ({"share": float("nan")}, "parameter 'share' must be a finite number; got nan"),
    ({"power_w": float("inf")}, "parameter 'power_w' must be a finite number; got inf"),
    ({"power_w": 6000}, "parameter 'power_w' must be in (0, 5000] W; got 6000.0"),
    ({"shapes": [[1024, 0]]}, "parameter 'shapes' must be in [1, 1048576] tokens; got 0"),
    ({"chips": ["gb200", "gb400"]}, "unknown chip 'gb400'; valid chips: jalapeno, gb200"),
    ({"basis": "facility"}, "unknown basis value 'facility'; valid basis values: rated, all-in"),
])
def test_declared_ranges_names_and_choices_refuse_bad_values(values, fragment):
    with pytest.raises(jp.JalapenoError, match=re.escape(fragment)):
        check(**values)


def test_numbers_read_as_text_and_text_read_as_numbers_are_accepted():
    out = check(run_id=20786863188, power_w="1.4e3", ctx=1, share=1.0, shapes=[[1, 1048576]])
    assert out["run_id"] == "20786863188" and out["power_w"] == 1400.0


def test_every_shipped_default_passes_its_own_declaration():
    from jalapeno.publish import scenarios

    for name in scenarios.notebook_names():
        path = scenarios.notebook_path(name)
        assert params.check_notebook(params.declared(path), path) == params.declared(path)


def test_unknown_injected_names_are_what_the_notebook_does_not_define():
    nb = {"cells": [DECLARED["cells"][0], {"cell_type": "code", "metadata": {}, "source": [
        "import numpy as np\n", "from jalapeno import charts as ch\n", "x = [y for y in range(3)]\n", "%time z = 1\n"]}]}
    namespace = {"ctx": 1, "np": None, "ch": None, "x": [], "y": 0, "In": [], "_i1": "", "ctxx": 8192}
    assert params.unknown_injected(namespace, nb) == ["ctxx"]
