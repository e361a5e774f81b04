"""Costs per token and per task (jalapeno.costs) against hand-worked cases, and chip_costs.csv against its
source and the rest of data/."""

import math
from fractions import Fraction

import polars as pl
import pytest

import jalapeno as jp
from jalapeno import costs, data


def test_cost_per_million_tokens_by_hand():
    """2.75 USD per chip-hour (GB200's neocloud tier) at 5,000 tok/s per chip: 5,000 x 3,600 = 18,000,000
    tokens an hour, so 18,000,000 / 2.75 = 6,545,454.5454... tokens per dollar (72,000,000 / 11 exactly)
    and 1,000,000 / that = 2.75 / 18 = 11 / 72 = 0.152777... USD per million tokens."""
    per_dollar = Fraction(5000 * 3600) / Fraction("2.75")
    assert per_dollar == Fraction(72_000_000, 11)
    assert Fraction(10**6) / per_dollar == Fraction(11, 72)
    assert jp.tokens_per_dollar(5000, 2.75) == pytest.approx(6_545_454.545454, rel=1e-12)
    assert jp.cost_per_million_tokens(5000, 2.75) == pytest.approx(11 / 72, rel=1e-12)
    assert jp.cost_per_million_tokens(5000, jp.usd_per_chip_hour("gb200", "neocloud")) == pytest.approx(0.152778, abs=5e-7)


def test_input_and_output_costs_by_hand():
    """8,192 input and 1,024 output tokens a request: of 5,000 tok/s per chip, 5,000 x 8/9 = 4,444.4... are
    input and 5,000 / 9 = 555.5... output; at 2.75 USD/h an output million costs 2.75 x 10^6 / (3,600 x
    5,000 / 9) = 1.375 USD, an input million 2.75 x 10^6 x 9 / (3,600 x 40,000) = 0.171875 USD."""
    c = costs.token_costs(5000, 8192, 1024, 2.75)
    assert c["usd_per_million_output_tokens"] == pytest.approx(1.375, rel=1e-12)
    assert c["usd_per_million_input_tokens"] == pytest.approx(0.171875, rel=1e-12)
    assert c["usd_per_million_tokens"] == pytest.approx(11 / 72, rel=1e-12)
    assert c["output_tokens_per_dollar"] == pytest.approx(8_000_000 / 11, rel=1e-12)
    # the three rates add up: total tokens per dollar = input + output
    assert c["input_tokens_per_dollar"] + c["output_tokens_per_dollar"] == pytest.approx(c["tokens_per_dollar"], rel=1e-12)


def test_cost_per_task_by_hand():
    """A task that keeps 8 chips busy for 90 s = 720 chip-seconds at 3.3 USD/h: 720 x 3.3 / 3,600 = 0.66 USD;
    the same from its tokens: 720 chip-seconds at 5,000 tok/s per chip move 3,600,000 tokens."""
    assert costs.cost_per_task(8 * 90, 3.3) == pytest.approx(0.66, rel=1e-12)
    assert costs.cost_per_task_from_tokens(3_600_000, 5000, 3.3) == pytest.approx(0.66, rel=1e-12)


def test_energy_cost_by_hand_and_not_part_of_the_tiers():
    """1,000 W at 0.10 USD/kWh and PUE 1.2 is 0.12 USD an hour; at 5,000 tok/s that is 0.12 x 10^6 /
    18,000,000 = 0.00666... USD per million tokens."""
    assert costs.energy_cost_per_million_tokens(5000, 1000, 0.10, pue=1.2) == pytest.approx(0.12 / 18, rel=1e-12)
    # the book's price: EIA's 2023 average to US industrial customers, 8.06 US cents per kWh (public_facts.csv)
    assert costs.energy_usd_per_kwh() == pytest.approx(0.0806, abs=5e-5)
    assert costs.energy_cost_per_million_tokens(5000, 1000) == pytest.approx(0.0806 / 18, rel=1e-12)
    with pytest.raises(ValueError, match="pue must be at least 1"):
        costs.energy_cost_per_million_tokens(5000, 1000, 0.10, pue=0.9)


def test_frontier_costs_add_the_six_columns():
    front = pl.DataFrame({"interactivity_tok_s_user": [20.0, 100.0], "throughput_tok_s_chip": [5000.0, 1000.0]})
    out = costs.frontier_costs(front, 2.75, isl=8192, osl=1024)
    assert out["usd_per_million_tokens"].to_list() == pytest.approx([11 / 72, 5 * 11 / 72], rel=1e-12)
    assert out["usd_per_million_output_tokens"][0] == pytest.approx(1.375, rel=1e-12)
    with pytest.raises(jp.UnknownNameError, match="throughput_tok_s_chip"):
        costs.frontier_costs(front.rename({"throughput_tok_s_chip": "x"}), 2.75)


def test_break_even_price_by_hand():
    """A chip with 1.5 x GB200's throughput costs the same per token at 1.5 x GB200's price: 1.5 x 2.21."""
    assert costs.break_even_price(7500, 5000, 2.21) == pytest.approx(3.315, rel=1e-12)
    assert jp.cost_per_million_tokens(7500, 3.315) == pytest.approx(jp.cost_per_million_tokens(5000, 2.21), rel=1e-12)


def test_transcribed_tiers_of_the_source():
    """GPU_SPECS of SemiAnalysisAI/InferenceX-app packages/app/src/lib/constants.ts @0c8d279 (costh, costn,
    costr), transcribed; GB300's is the source's 1.2 x GB200."""
    expected = {"h100": (1.3, 1.69, 1.3), "h200": (1.41, 1.74, 1.6), "b200": (1.95, 2.34, 2.9),
                "gb200": (2.21, 2.75, 3.3), "gb300": (2.652, 3.3, 3.96), "mi300x": (1.12, 1.4, 1.55),
                "mi325x": (1.28, 1.59, 1.8), "mi355x": (1.48, 1.9, 2.1)}
    for chip, values in expected.items():
        assert tuple(jp.usd_per_chip_hour(chip, t) for t in costs.tiers()) == values, chip
    for t in costs.tiers():
        assert jp.usd_per_chip_hour("gb300", t) == pytest.approx(1.2 * jp.usd_per_chip_hour("gb200", t), rel=1e-12)
    table = data.chip_costs()
    assert table.filter(pl.col("case") == "published")["source"].str.contains(
        "SemiAnalysisAI/InferenceX-app packages/app/src/lib/constants.ts @0c8d27926279eb875d6260c2b6ec5e2fa26ba7de").all()


def test_jalapeno_range_is_gb200_scaled_by_its_stated_ratios():
    """low = GB200 x Jalapeño TDP / GB200 TDP (700 / 1200), central = GB200, high = GB200 x HBM capacity
    ratio (216 / 186), each read from chip_specs.csv, within the file's 4-decimal rounding."""
    tdp = {c: jp.chip(c).tdp_w for c in ("jalapeno", "gb200")}
    hbm = {c: jp.chip(c).hbm_capacity_bytes for c in ("jalapeno", "gb200")}
    assert (tdp["jalapeno"], tdp["gb200"]) == (700, 1200)
    for t in costs.tiers():
        gb = jp.usd_per_chip_hour("gb200", t)
        assert jp.usd_per_chip_hour("jalapeno", t, "low") == pytest.approx(gb * tdp["jalapeno"] / tdp["gb200"], abs=5e-5)
        assert jp.usd_per_chip_hour("jalapeno", t) == gb  # central is the default case
        assert jp.usd_per_chip_hour("jalapeno", t, "high") == pytest.approx(gb * hbm["jalapeno"] / hbm["gb200"], abs=5e-5)
    assert jp.usd_per_chip_hour("jalapeno", "hyperscaler", "low") == pytest.approx(1.2892)


def test_every_chip_has_a_cost_or_a_reason():
    table = data.chip_costs()
    chips = set(data.load("chips.csv")["chip"])
    assert set(table["chip"]) == chips
    priced = table["usd_per_chip_hour"].is_not_null()
    reason = table["not_priced_reason"].is_not_null()
    assert (priced ^ reason).all()
    unpriced = set(table.filter(~priced)["chip"])
    assert unpriced == {"vera-rubin", "groq-3-lpu", "tpu7x", "tpu-8t", "tpu-8i"}
    wide = costs.price_table()
    assert set(wide["chip"]) == chips
    assert wide.filter(pl.col("chip") == "jalapeno").height == 3


def test_unknown_chip_tier_or_case_names_the_valid_ones():
    with pytest.raises(jp.UnknownNameError, match="unknown chip 'a100'; valid chips: jalapeno, gb200"):
        jp.usd_per_chip_hour("a100")
    with pytest.raises(jp.UnknownNameError, match="valid price tiers: hyperscaler, neocloud, rental"):
        jp.usd_per_chip_hour("gb200", "spot")
    with pytest.raises(jp.UnknownNameError, match="valid price cases: low, central, high"):
        jp.usd_per_chip_hour("jalapeno", "neocloud", "published")


def test_a_chip_not_priced_names_the_reason():
    with pytest.raises(jp.NotPricedError, match="'tpu7x' is not priced: the source's GPU table .* no TPU"):
        jp.usd_per_chip_hour("tpu7x", "neocloud")


@pytest.mark.parametrize("call, fragment", [
    (lambda: jp.cost_per_million_tokens(0, 2.75), "throughput .* got 0"),
    (lambda: jp.cost_per_million_tokens(5000, -1.0), r"price \(USD per chip-hour\) .* got -1.0"),
    (lambda: jp.tokens_per_dollar(float("nan"), 2.75), "throughput .* got nan"),
    (lambda: costs.cost_per_task(0, 2.75), "chip-seconds .* got 0"),
    (lambda: costs.energy_cost_per_million_tokens(5000, 700, 0), r"energy price \(USD/kWh\) .* got 0"),
])
def test_non_positive_values_are_refused_by_name(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call()


@pytest.mark.parametrize("old, new, fragment", [
    ("gb200,rental,published,3.3,", "gb200,rental,published,,", "either a cost or a not_priced_reason"),
    ("tpu-8i,,,,", "tpu-9,,,,", "chip not in chips.csv"),
    ("tpu-8i,,,,", "tpu-8i,neocloud,published,,", "a not-priced row names neither"),
    ("jalapeno,rental,low,1.925,", "jalapeno,rental,low,9.925,", "low 9.925 <= central 3.3"),
    ("mi355x,rental,published,2.1,", "mi355x,spot,published,2.1,", "valid values: hyperscaler, neocloud, rental"),
])
def test_malformed_cost_rows_are_refused(edit_data, old, new, fragment):
    edit_data("chip_costs.csv", old, new)
    with pytest.raises(jp.DataError, match=fragment):
        data.chip_costs()


def test_a_chip_without_a_row_is_not_priced(data_copy):
    """A chip added to chips.csv without a cost row (a reader's own) is not priced, saying so; the rest of
    the table still reads."""
    path = data_copy / "chip_costs.csv"
    path.write_text("".join(line for line in path.read_text().splitlines(keepends=True) if not line.startswith("tpu-8i,")))
    data._load.cache_clear()
    assert "tpu-8i" not in set(data.chip_costs()["chip"])
    with pytest.raises(jp.NotPricedError, match="'tpu-8i' is not priced: it has no row in data/chip_costs.csv"):
        jp.usd_per_chip_hour("tpu-8i")


def test_output_share_of_all_chips_matches_the_benchmarks_disaggregated_rows():
    """In each of the benchmark's disaggregated rows, the output tokens over every chip (its
    ``output_tput_per_gpu`` over the decode GPUs x decode / (prefill + decode) GPUs) is the osl share of its
    ``tput_per_gpu`` (split_throughput) within 2 % (the runs' output lengths vary around osl; measured:
    0.982 to 1.018, median 1.000), so an output cost from split_throughput counts prefill and decode chips."""
    rows = data.load("measured/inferencemax.csv").filter(pl.col("disagg"))
    assert rows.height > 300
    over_all = rows["output_tput_per_gpu"] * rows["num_decode_gpu"] / (rows["num_prefill_gpu"] + rows["num_decode_gpu"])
    _, share = costs.split_throughput(rows["tput_per_gpu"].to_numpy(), rows["isl"].to_numpy(), rows["osl"].to_numpy())
    ratio = over_all.to_numpy() / share
    assert ratio.min() > 0.98 and ratio.max() < 1.02
    assert abs(float(pl.Series(ratio).median()) - 1) < 1e-3


def test_cheaper_above_finds_where_one_frontier_costs_less_per_output_token():
    """Two hand-made frontiers at 1k/1k (half the tokens output): the fast chip's throughput per chip falls
    from 20,000 to 1,000 tok/s between 10 and 1,000 tok/s/user (log-linear), the slow chip's from 40,000 to
    500 over the same range, both at 2 USD/h. Cost per million output tokens = 2 / (tput / 2 x 3,600) x 1e6:
    the fast chip is cheaper where its throughput is higher. In logs, fast: ln 20,000 - (ln 20) t, slow:
    ln 40,000 - (ln 80) t with t = log10(x / 10) / 2 in [0, 1]; equal where ln 2 = (ln 80 - ln 20) t = (ln 4) t,
    t = 1/2: x = 100 tok/s/user."""
    x = [10.0, 100.0, 1000.0]
    fast = pl.DataFrame({"interactivity_tok_s_user": x, "throughput_tok_s_chip": [20000.0, 20000.0 / 20 ** 0.5, 1000.0]})
    slow = pl.DataFrame({"interactivity_tok_s_user": x, "throughput_tok_s_chip": [40000.0, 40000.0 / 80 ** 0.5, 500.0]})
    r = costs.cheaper_above(fast, 2.0, slow, 2.0, isl=1024, osl=1024)
    assert r["where"] == "above" and (r["low"], r["high"]) == (pytest.approx(10.0), pytest.approx(1000.0))
    assert r["cheaper_above"] == pytest.approx(100.0, rel=1e-9)
    # priced at 0.9 USD/h the fast chip is cheaper everywhere (at half, the two tie at 10 tok/s/user); at 8x,
    # nowhere (its 2x edge at 1,000 is gone)
    assert costs.cheaper_above(fast, 0.9, slow, 2.0, isl=1024, osl=1024)["where"] == "everywhere"
    nowhere = costs.cheaper_above(fast, 8.0, slow, 2.0, isl=1024, osl=1024)
    assert nowhere["where"] == "nowhere" and math.isnan(nowhere["cheaper_above"])
    with pytest.raises(ValueError, match="share no interactivity"):
        costs.cheaper_above(fast.with_columns(pl.col("interactivity_tok_s_user") * 1000), 2.0, slow, 2.0)
