"""The serving-model chapter module: every number the prose quotes and every table and figure it shows,
and ceilings on the validation figures the chapter reports (a change that worsens the model fails)."""

import chapter_sources
import pytest

import jalapeno as jp
from jalapeno.chapters import serving_model as chapter

NAME = "serving-model"
defaults, ch = chapter_sources.fixtures(NAME, chapter)

#: What the chapter claims of the model, as ceilings (percent frontier distance of the measured frontier
#: points to the frontier the prediction procedure draws): a change that makes a scheme worse fails.
CEILINGS = {"in_frontier_median": 20, "ho_chip_median": 30, "ho_chip_p90": 60, "ho_model_chip_median": 30,
            "ho_model_chip_p90": 85, "ho_shape_median": 20, "ho_shape_p90": 60}
#: The aim of issue 12 for a chip the fit has not seen (leave one chip out): median 20 % (its p90 aim,
#: 60 %, is met and is a ceiling above).
AIM = {"ho_chip_median": 20}


def test_every_key_and_slot_the_notebook_uses_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []
    chapter_sources.check_slots(NAME, ch)


@pytest.mark.parametrize("key, ceiling", sorted(CEILINGS.items()))
def test_validation_figures_stay_under_their_ceilings(ch, key, ceiling):
    assert float(ch.numbers[key]) <= ceiling


@pytest.mark.xfail(strict=True, reason="the serving model does not yet transfer to an unseen chip this well "
                                       "(issue 12 item 2); strict: passing means the aim is met, make it a ceiling")
def test_unseen_chips_are_predicted_to_the_aim(ch):
    assert all(float(ch.numbers[k]) <= v for k, v in AIM.items())


def test_the_three_schemes_each_score_every_series(ch):
    # 22 series (data/measured/inferencemax.csv without speculative decoding): each scheme holds every
    # series out once; folds: 5 chips, 7 (model, chip) pairs, 2 shapes
    table = ch.values["schemes"]
    assert table["scheme"].to_list() == ["chip", "model-chip", "shape"]
    assert table["folds"].to_list() == [5, 7, 2]
    assert table["series"].to_list() == [22, 22, 22]


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
