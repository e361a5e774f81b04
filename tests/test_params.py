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
    ("conc", 64.0, "must be an integer (such as 8192; 8192.0 and '8k' are refused)"),
    ("power_w", "700", "must be a number"),
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
    types = params.declared_types(nb)
    assert types == {"power_w": float}
    assert params.check({"power_w": 1400}, params.declared(nb), types)["power_w"] == 1400.0
    assert params.check({"power_w": None, "label": 3}, params.declared(nb), types)["label"] == 3
    with pytest.raises(jp.ParameterError, match="parameter 'power_w' must be a number; got 'high'"):
        params.check({"power_w": "high"}, params.declared(nb), types)


def test_string_parameters_take_their_declared_choices():
    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": [
        'basis = "rated"  # one of: rated, sustained, all-in\n', 'label = "x"  # any text\n']}]}
    choices = params.declared_choices(nb)
    assert choices == {"basis": ("rated", "sustained", "all-in")}
    assert params.check({"basis": "all-in", "label": "y"}, params.declared(nb), choices=choices)["basis"] == "all-in"
    for bad in ("peak", 5):  # a wrong type is named as a bad choice too, with the valid ones
        with pytest.raises(jp.UnknownNameError, match=f"unknown basis value {bad!r}; valid basis values: rated, sustained, all-in"):
            params.check({"basis": bad}, params.declared(nb), choices=choices)
