"""The agents chapter module: the seeds' arithmetic, the published per-call ratios and implied TTFTs
worked by hand, the power and price it uses, its refusals, and every key and slot the notebook uses."""

import chapter_sources
import polars as pl
import pytest

from jalapeno import charts, data
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
                                                     "agent-timeouts-gpt-oss-120b-gb200",
                                                     "agent-task-efficiency-gpt-oss-120b-gb200"}


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
    ratio = comp["task latency ratio, GB200 / Jalapeño"]
    assert ch.numbers["task_ratio_min"] == f"{ratio.min():.2f}"
    slow, fast = comp["GB200 task latency (s)"], comp["Jalapeño task latency (s)"]
    assert (comp["saving per task (s)"] - (slow - fast)).abs().max() < 1e-9
    assert (ratio - slow / fast).abs().max() < 1e-12
    pub = ch.tables["published"]
    assert ch.numbers["pub_ratio_max"] == f"{pub['task latency ratio, GB200 / Jalapeño'].max():.2f}"
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


def test_the_task_efficiency_figure_draws_first_pass_rate_times_tasks_completed(ch, defaults):
    # seed 003: effective task efficiency E = first-pass rate p x tasks completed per kWh N, N = completion
    # rate c / energy of a started task W. Hand-worked from the economics table's own columns for
    # short-tool-loop on Jalapeño (facility basis, 100 tok/s/user; since 0.10.0 a step prefills its growth
    # less the cached previous output): W = 724.71 + 931.77 + 331.30 J = 1,987.8 J = 5.5216e-4 kWh,
    # c = 0.99976, so N = 0.99976 / 5.5216e-4 = 1,810.6 tasks/kWh; p = 0.54548, so E = 0.54548 x 1,810.6
    # = 987.7 tasks/kWh
    econ = ch.tables["economics"]
    row = econ.filter((pl.col("profile") == "short-tool-loop") & (pl.col("chip") == "Jalapeño")).row(0, named=True)
    kwh = (row["accelerator energy (J)"] + row["host and network energy (J)"] + row["cooling energy (J)"]) / 3.6e6
    assert kwh == pytest.approx(5.5216e-4, rel=1e-4)
    assert row["tasks completed per kWh, N"] == pytest.approx(row["completion rate c"] / kwh, rel=1e-12)
    assert row["tasks completed per kWh, N"] == pytest.approx(1810.6, rel=1e-4)
    assert row["first-pass rate p"] == pytest.approx(0.54548, rel=1e-4)
    assert row["effective tasks per kWh, E = p x N"] == pytest.approx(987.7, rel=1e-4)
    spec = ch.figures["task-efficiency"].chart.to_dict()
    drawn = pl.DataFrame(next(iter(spec["datasets"].values())))
    fig = drawn.filter((pl.col("profile") == "short-tool-loop") & (pl.col("chip") == "Jalapeño")).row(0, named=True)
    assert fig["effective_tasks_per_kwh"] == pytest.approx(0.54548 * 1810.6, rel=2e-4)  # 987.7
    assert fig["effective_tasks_per_kwh"] == pytest.approx(row["effective tasks per kWh, E = p x N"], rel=1e-12)
    # every row of the figure: its E is its p x N, and equals the table's effective task efficiency
    assert (drawn["effective_tasks_per_kwh"] - drawn["first_pass_rate"] * drawn["completed_tasks_per_kwh"]).abs().max() < 1e-9
    assert drawn["effective_tasks_per_kwh"].to_list() == pytest.approx(econ["effective tasks per kWh, E = p x N"].to_list(),
                                                                       rel=1e-12)
    # one row per (chip, profile): this chapter's task and the three named profiles on both chips, by reader name
    profiles = ["this chapter's task", *defaults["profiles"]]
    assert drawn.height == 2 * len(profiles) == drawn.select("profile", "chip").unique().height
    assert sorted(drawn.select("profile", "chip").rows()) == sorted((p, c) for p in profiles for c in ("Jalapeño", "GB200"))
    # the data a reader downloads: one row per (chip, profile), columns titled in words
    table = charts.figure_data(spec)
    assert table.height == 8 and table.columns == ["profile", "chip", "first-pass rate p", "tasks completed per kWh, N",
                                                   "effective tasks per kWh, p x N"]
    # the faster chip completes more tasks per kWh on every profile; the first-pass rate cuts both alike
    wide = drawn.pivot(on="chip", index="profile", values=["completed_tasks_per_kwh", "first_pass_rate"])
    assert (wide["completed_tasks_per_kwh_Jalapeño"] > wide["completed_tasks_per_kwh_GB200"]).all()
    assert (wide["first_pass_rate_Jalapeño"] - wide["first_pass_rate_GB200"]).abs().max() < 0.01


def test_the_task_efficiency_prose_works_the_lowest_first_pass_task(ch):
    # code-editing has the lowest first-pass rate (0.95 per step over 40 steps, with timeouts): 0.129;
    # Jalapeño completes 121 tasks/kWh of it, 15.6 of them first time; GB200 42 and 5.4
    assert (ch.numbers["te_profile"], ch.numbers["te_p"], ch.numbers["te_n"], ch.numbers["te_e"]) \
        == ("code-editing", "0.129", "121", "15.6")
    assert (ch.numbers["te_b_name"], ch.numbers["te_b_n"], ch.numbers["te_b_e"]) == ("GB200", "42", "5.4")
    assert ch.values["te_e"] == pytest.approx(ch.values["te_p"] * ch.values["te_n"], rel=1e-12)
    assert ch.values["te_p"] < 0.95 ** 40 * 1.0001  # no better than every step right first time, no timeout


def test_the_tables_name_chips_as_readers_do(ch):
    # the economics table names each chip by its reader's name, never its key (gb200) or label (gb200 (max))
    assert ch.tables["economics"]["chip"].unique(maintain_order=True).to_list() == ["Jalapeño", "GB200"]
    assert "server" not in ch.tables["economics"].columns
    # the per-step table likewise: at the fastest points both chips reach, so no "(at its fastest point)"
    assert ch.tables["steps"]["chip"].unique(maintain_order=True).to_list() == ["Jalapeño", "GB200"]


def test_a_baseline_that_cannot_reach_the_matched_speed_is_named_so(defaults):
    # at 100,000 tok/s/user neither chip's frontier reaches the speed: each runs at its fastest point, and the
    # table says so in words
    out = chapter.compute(**{**defaults, "matched_interactivity_tok_s_user": 100000.0})
    chips = out.tables["economics"]["chip"].unique(maintain_order=True).to_list()
    assert chips == ["Jalapeño (at its fastest point)", "GB200 (at its fastest point)"]
    assert out.numbers["matched_note"].endswith("cannot reach it and run at their fastest point")


def test_every_figure_names_its_chips_as_readers_do(ch):
    # the legend and the data a reader downloads say Jalapeño and GB200, never the keys jalapeno and gb200,
    # and each chip keeps its colour of the book (Jalapeño red, GB200 green)
    for slot, fig in ch.figures.items():
        spec = charts.export(fig.chart, fig.name).spec
        table = charts.figure_data(spec)
        assert table["chip"].unique(maintain_order=True).to_list() == ["Jalapeño", "GB200"], slot
        scales = [layer["encoding"]["color"]["scale"] for layer in [spec, *spec.get("layer", [])]
                  if "color" in layer.get("encoding", {})]
        assert scales and all(sc == {"domain": ["Jalapeño", "GB200"], "range": [charts.CHIP_COLOURS["jalapeno"],
                                                                              charts.CHIP_COLOURS["gb200"]]}
                              for sc in scales), slot


def test_sessions_prefill_what_the_cache_does_not_hold(ch):
    """This chapter's task as a session (30 steps, 8,192 tokens first, 1,024 more a step, 256 decoded a
    call), by hand: without a cache every call prefills its whole context, 30 x 8,192 + 1,024 x (0 + 1 +
    ... + 29) = 245,760 + 445,440 = 691,200 tokens; with one, the first call prefills 8,192 and each later
    one only its growth less the previous output, 29 x (1,024 - 256) = 22,272: 30,464 tokens, 95.6 % saved."""
    t = ch.tables["sessions"].filter(pl.col("profile") == "this chapter's task")
    assert t["tokens prefilled, no cache"].to_list() == [691_200, 691_200]
    assert t["tokens prefilled, prefix cache"].to_list() == [30_464, 30_464]
    assert t["prefill saved (%)"].to_list() == pytest.approx([100 * (1 - 30_464 / 691_200)] * 2, rel=1e-12)
    assert (t["task latency, prefix cache (s)"] < t["task latency, no cache (s)"]).all()
    assert ch.numbers["ses_no_cache"] == "691,200" and ch.numbers["ses_cache"] == "30,464"
    assert ch.numbers["ses_saved_pct"] == "96"
    # the illustrative coding agent with a cache: the main agent's 12,000 + 19 x 1,500 = 40,500 new tokens and
    # its three sub-agents' 3 x (4,000 + 4 x 1,000) = 24,000: 64,500 tokens prefilled
    coding = ch.tables["sessions"].filter(pl.col("profile") == "coding agent (illustrative)")
    assert coding["tokens prefilled, prefix cache"].to_list() == [64_500, 64_500]


def test_a_task_costs_its_chip_time_at_each_tier(ch):
    """Cost per task = chip time per task (s) x USD per chip-hour / 3,600 (jalapeno.costs.cost_per_task), at
    the dashboard's tiers of data/chip_costs.csv: GB200 2.21 / 2.75 / 3.3 USD/h (InferenceX's costh / costn
    / costr) and Jalapeño at the centre of its assumed range, GB200's price. The prefix cache cuts a task's
    chip time, so its cost, on both chips; along the 8k/1k frontiers Jalapeño's output tokens cost less at
    every interactivity both reach, in every tier and at both ends of its price range."""
    t = ch.tables["task-costs"]
    assert t.height == 4 and set(t["chip"]) == {"Jalapeño", "GB200"}
    for row in t.iter_rows(named=True):
        for tier, usd_h in (("hyperscaler", 2.21), ("neocloud", 2.75), ("rental", 3.3)):
            assert row[f"{tier} (USD per task)"] == pytest.approx(row["chip time per task (s)"] * usd_h / 3600, rel=1e-12)
    for chip in ("Jalapeño", "GB200"):
        cached, plain = (t.filter((pl.col("chip") == chip) & (pl.col("prefix cache") == c)).row(0, named=True) for c in (True, False))
        assert cached["neocloud (USD per task)"] < plain["neocloud (USD per task)"]
    j = t.filter((pl.col("chip") == "Jalapeño") & pl.col("prefix cache")).row(0, named=True)
    assert ch.numbers["cost_j_neocloud"] == f"{1e3 * j['neocloud (USD per task)']:.2f}"
    c = ch.tables["cheaper-above"]
    assert c.height == 6 and c["GB200 (USD per chip-hour)"].to_list() == [2.21, 2.21, 2.75, 2.75, 3.3, 3.3]
    assert c["Jalapeño (USD per chip-hour)"].to_list() == pytest.approx(
        [2.21 * 700 / 1200, 2.21 * 216 / 186, 2.75 * 700 / 1200, 2.75 * 216 / 186, 3.3 * 700 / 1200, 3.3 * 216 / 186], abs=6e-5)
    assert ch.numbers["cheaper_text"].startswith("at every interactivity both reach")


def test_a_growth_below_the_output_is_refused_before_anything_runs(defaults):
    for cache in (True, False):  # with the cache the task's own rule refuses it first; both name the two values
        with pytest.raises(ValueError, match=r"context_growth_tokens.* must be >= output_tokens \(256\)") as err:
            chapter.check(**{**defaults, "context_growth_tokens": 100, "prefix_cache": cache})
        assert "100" in str(err.value)


def test_electricity_per_task_is_its_energy_at_the_stated_price(ch, defaults):
    """Electricity per 1,000 tasks = 1,000 x (accelerator + host and network + cooling energy, J) / 3.6e6 J per kWh x the
    price: by default EIA's 2023 average to US industrial customers, 0.0806 USD/kWh (public_facts.csv), and
    a reader's price through the parameter; the tier costs per chip-hour, which include power, are apart."""
    t = ch.tables["economics"]
    energy = t["accelerator energy (J)"] + t["host and network energy (J)"] + t["cooling energy (J)"]
    assert (t["electricity per 1,000 tasks (USD)"] / (1e3 * energy / 3.6e6 * 0.0806) - 1).abs().max() < 1e-9
    assert ch.numbers["energy_price"] == "0.0806" and "US industrial customers in 2023" in ch.numbers["energy_price_basis"]
    dearer = chapter.compute(**{**defaults, "energy_usd_per_kwh": 0.2})
    ratio = dearer.tables["economics"]["electricity per 1,000 tasks (USD)"] / t["electricity per 1,000 tasks (USD)"]
    assert (ratio / (0.2 / 0.0806) - 1).abs().max() < 1e-9
    assert dearer.numbers["energy_price_basis"] == "this build's parameter `energy_usd_per_kwh`"
    assert dearer.tables["economics"]["cost per task (USD)"].equals(t["cost per task (USD)"])


def test_the_price_ratio_scales_jalapenos_price_in_every_section(ch, defaults):
    """jalapeno_price_ratio multiplies Jalapeño's price per chip-hour wherever the chapter prices it: the
    economics table (GB200's neocloud 2.75 USD/h times 2.5 = 6.875 USD/h), the tiers' task costs and both
    ends of its range on the frontiers (each times 2.5); the baseline's costs stay. At 2.5 times, a task
    that cost 2.02x to 2.2x less costs more, and the sentence says so with the price."""
    dear = chapter.compute(**{**defaults, "jalapeno_price_ratio": 2.5})
    for table, cost in (("economics", "cost per task (USD)"), ("task-costs", "neocloud (USD per task)")):
        old, new = ch.tables[table], dear.tables[table]
        j = pl.col("chip") == "Jalapeño"
        assert (new.filter(j)[cost] / old.filter(j)[cost] - 2.5).abs().max() < 1e-9, table
        assert new.filter(~j)[cost].equals(old.filter(~j)[cost]), table
    c, c0 = dear.tables["cheaper-above"], ch.tables["cheaper-above"]
    assert (c["Jalapeño (USD per chip-hour)"] / c0["Jalapeño (USD per chip-hour)"] - 2.5).abs().max() < 1e-12
    assert ch.numbers["cost_text"].endswith("less on Jalapeño at equal prices per chip-hour")
    # 6.875 sits on a rounding boundary at 2 decimals: the display rule quotes it to the digit it cannot cross
    assert dear.numbers["cost_text"].endswith("more on Jalapeño with Jalapeño's chip-hour at 6.9 USD (2.5 times its "
                                              "assumed price, GB200's; `jalapeno_price_ratio`)")
    assert dear.numbers["price_scaled"] == ", here times 2.5 (this build's `jalapeno_price_ratio`)"
    assert ch.numbers["price_scaled"] == "" and ch.numbers["price_jalapeno"].startswith("Jalapeño at the same price")


@pytest.mark.parametrize("low, high, text", [
    (2.02, 2.2, "2.02x to 2.20x less on Jalapeño at equal prices per chip-hour"),
    (0.8, 0.88, "1.14x to 1.25x more on Jalapeño at equal prices per chip-hour"),   # 1 / 0.88, 1 / 0.8
    (0.8, 1.5, "from 1.25x more to 1.50x less, by task, on Jalapeño at equal prices per chip-hour"),
])
def test_the_cost_sentence_holds_on_either_side_of_one(low, high, text):
    assert chapter._cost_text(low, high, True, 2.75, 1.0) == text
