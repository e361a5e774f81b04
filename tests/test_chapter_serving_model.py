"""The serving-model chapter module: every number the prose quotes and every table and figure it shows,
and ceilings on the validation figures the chapter reports (a change that worsens the model fails)."""

import chapter_sources
import pytest

import jalapeno as jp
from jalapeno.chapters import serving_model as chapter

NAME = "serving-model"
defaults, ch = chapter_sources.fixtures(NAME, chapter)

#: What the chapter claims of the model, as ceilings (percent frontier distance).
CEILINGS = {"in_frontier_median": 12, "ho_series_median": 15, "ho_chip_median": 30, "ho_chip_worst": 70}


def test_every_key_and_slot_the_notebook_uses_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []
    chapter_sources.check_slots(NAME, ch)


@pytest.mark.parametrize("key, ceiling", sorted(CEILINGS.items()))
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
