"""The agents chapter module: the seeds' arithmetic, the published per-call ratios and implied TTFTs
worked by hand, the power and price it uses, its refusals, and every key and slot the notebook uses."""

import chapter_sources
import pytest

from jalapeno import data
from jalapeno.chapters import agents as chapter
from jalapeno.errors import UnknownNameError
from jalapeno.metrics import mean_request_length

NAME = "agents"
defaults, ch = chapter_sources.fixtures(NAME, chapter)


def test_every_key_the_prose_quotes_is_computed(ch):
    assert chapter_sources.missing_keys(NAME, ch) == []


def test_every_slot_the_notebook_shows_is_computed(ch):
    chapter_sources.check_slots(NAME, ch)
    assert {f.name for f in ch.figures.values()} == {"agent-task-latency-gpt-oss-120b-gb200",
                                                     "agent-steps-gpt-oss-120b-gb200",
                                                     "agent-timeouts-gpt-oss-120b-gb200"}


def test_the_seeds_arithmetic(ch):
    # seed 003: 30 steps x 200 ms = 6 s; seed 000: 50 steps x 1 s = 50 s, "nearly a minute" (60 s)
    assert (ch.numbers["s30_steps"], ch.numbers["s30_step"], ch.numbers["s30_total"]) == ("30", "200", "6")
    assert (ch.numbers["s50_steps"], ch.numbers["s50_step"]) == ("50", "1")
    assert (ch.numbers["seed30_saving"], ch.numbers["seed50_saving"], ch.numbers["seed50_published"]) \
        == ("6.0", "50", "60")
    seeds = ch.tables["seeds"]
    assert seeds["task_model_saving_s"].to_list() == [pytest.approx(6.0), pytest.approx(50.0)]


def test_the_published_per_call_ratios_and_implied_ttfts(ch):
    # seed 000, gpt-oss-120b 8k/1k: E2E 1.80 s vs 1.03 s, TBT 1.87 ms vs 0.69 ms
    assert ch.values["pub_e2e_ratio"] == pytest.approx(1.80 / 1.03)
    assert ch.values["pub_tbt_ratio"] == pytest.approx(1.87 / 0.69)
    assert (ch.numbers["pub_e2e_ratio"], ch.numbers["pub_tbt_ratio"]) == ("1.75", "2.71")
    # the TTFT an E2E implies: E2E - TBT x (mean output length - 1), requests drawn from [0.8 L, L]
    osl = mean_request_length(1024)
    assert ch.values["pub_ttft_j"] == pytest.approx(1.03 - 0.69e-3 * (osl - 1))
    assert ch.values["pub_ttft_b"] == pytest.approx(1.80 - 1.87e-3 * (osl - 1))
    assert ch.values["headline_e2e_hi"] == 3.6


def test_power_and_price_of_the_economics(ch):
    # facility basis: (Jalapeño's 700 W TDP + GB200's 900 W of host and network) x PUE (central 1.2)
    assert ch.values["basis_j_w"] == pytest.approx((700 + 900) * data.whatif("pue"))
    assert ch.numbers["basis_j_w"] == "1,920"
    assert ch.numbers["price_gb200"] == "2.75"  # InferenceX's GB200 cost per GPU-hour
    assert ch.numbers["basis"].startswith("facility")


def test_the_tables_agree_with_the_quoted_numbers(ch, defaults):
    comp = ch.tables["compounding"]
    assert comp["profile"].to_list() == ["this chapter's task", *defaults["profiles"]]
    assert ch.numbers["task_ratio_min"] == f"{comp['task_ratio'].min():.2f}"
    assert (comp["saving_s"] - (comp["slow_latency_s"] - comp["fast_latency_s"])).abs().max() < 1e-9
    steps = ch.tables["steps"]
    assert steps["step"].unique().sort().to_list() == [1, 16, 30]  # first, middle and last of 30 steps
    assert ch.numbers["task_steps"] == "30" and ch.numbers["task_attempts"] == "3"


def test_layout_text_hand_worked():
    class Worker:
        n_chips, concurrency = 8.0, 1.0
    assert chapter.layout_text(Worker) == "8 chips, 1 sequence"
    Worker.n_chips, Worker.concurrency = 1.0, 16.0
    assert chapter.layout_text(Worker) == "1 chip, 16 sequences"


@pytest.mark.parametrize("change, needle", [
    ({"power_basis": "peak"}, "all-in-per-chip"),
    ({"scenario": "median"}, "central"),
    ({"baseline": "gb400"}, "gb200"),
    ({"model": "gpt-5"}, "gpt-oss-120b"),
    ({"profiles": ["short-tool-loop", "chat"]}, "code-editing"),
])
def test_bad_names_are_refused_naming_the_choices(defaults, change, needle):
    with pytest.raises(UnknownNameError, match=needle):
        chapter.compute(**{**defaults, **change})


def test_the_timeout_prose_names_the_chip_its_figure_shows_ahead(ch):
    # the sentence is chosen from the same sweep the figure draws: at the quoted timeout, the named chip
    # completes the larger share of tasks
    j, b = ch.values["to_gap_j"], ch.values["to_gap_b"]
    assert j != b
    assert ch.numbers["to_gap_leader"] == ("Jalapeño" if j > b else "GB200")
    assert ch.numbers["to_gap_verdict"].startswith(ch.numbers["to_gap_leader"])
