"""Costs per token and per task under stated hourly prices per chip (``data/chip_costs.csv``).

The prices are the InferenceX dashboard's three total-cost-of-ownership tiers per GPU-hour
(:data:`jalapeno.data.COST_TIERS`: ``hyperscaler``, ``neocloud``, ``rental``), transcribed from the
InferenceX app's GPU table (``SemiAnalysisAI/InferenceX-app``, ``packages/app/src/lib/constants.ts``,
``GPU_SPECS``; the commit is in each row's ``source``). They are **all-in**: one chip-hour's share of the
capital, power, cooling, hosting and network. Energy is therefore never added on top of a tier;
:func:`energy_cost_per_million_tokens` prices the electricity alone, as a separate reading. Jalapeño has
no public price: its rows are a low / central / high range (an assumption, stated in each row's
``basis``). A chip the source does not price has a ``not_priced_reason`` and raises :class:`NotPricedError`.

Formulas (throughput per chip in tok/s, price per chip in USD/h):

* tokens per dollar = throughput x 3,600 / price;
* cost per million tokens (USD) = 10^6 / tokens per dollar = price x 10^6 / (3,600 x throughput);
* total, input and output variants use the total (input + output), input or output tokens per second
  per chip; at a steady state where every request reads ``isl`` and writes ``osl`` tokens the input and
  output rates are the total's ``isl / (isl + osl)`` and ``osl / (isl + osl)`` (:func:`split_throughput`);
* cost of a task (USD) = its chip-seconds x price / 3,600 (:func:`cost_per_task`), or its tokens /
  tokens per dollar (:func:`cost_per_task_from_tokens`).

Disaggregated serving: the total throughput per chip of a frontier point (``throughput_tok_s_chip`` of
:func:`jalapeno.frontier`) and of the benchmark (``tput_per_gpu``, :mod:`jalapeno.measured`) already
divides the tokens by every chip of the deployment, prefill and decode chips together, so pricing each
chip at the tier's hourly cost counts the prefill chips and the decode chips, as the InferenceX dashboard
does. The input and output rates here are shares of that total (:func:`split_throughput`), per chip of
the whole deployment. The benchmark's own ``output_tput_per_gpu`` of a disaggregated row is over its
decode GPUs only (and ``input_tput_per_gpu`` over its prefill GPUs): priced directly, it would leave the
other pool's chips out, so it is not what these functions take.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from . import data
from .errors import JalapenoError, UnknownNameError, shown

#: Seconds per hour.
SECONDS_PER_HOUR = 3600.0

#: Tokens per "million tokens".
MILLION = 1e6

def energy_usd_per_kwh() -> float:
    """The book's energy price, USD/kWh: fact ``energy_usd_per_kwh`` of ``data/public_facts.csv`` (the
    average retail price of electricity to US industrial customers in 2023, 8.06 US cents per kWh, US
    Energy Information Administration; the source in that file). A parameter of the agents chapter. It is
    NOT part of the tier costs (those are all-in) and is never added to them."""
    return data.fact("energy_usd_per_kwh")


class NotPricedError(JalapenoError, LookupError):
    """A chip that ``chip_costs.csv`` marks as not priced; the message gives the reason from the file."""


def _positive(name: str, value):
    """``value`` (a number or an array of numbers) if every element is finite and > 0, else ValueError
    naming ``name`` and the value."""
    arr = np.asarray(value, dtype=float)
    if arr.size == 0 or not np.all(np.isfinite(arr)) or not np.all(arr > 0):
        raise JalapenoError(f"{name} must be a finite positive number, got {shown(value)}")
    return float(arr) if arr.ndim == 0 else arr


def tiers() -> tuple[str, ...]:
    """The price tiers, in the order the dashboard lists them: ``hyperscaler``, ``neocloud``, ``rental``."""
    return data.COST_TIERS


def usd_per_chip_hour(chip: str, tier: str = "neocloud", case: str | None = None) -> float:
    """All-in cost of one ``chip`` for one hour in ``tier`` (USD/h), from ``data/chip_costs.csv``.

    ``case``: ``published`` for a chip the source prices (the default for it), or ``low``, ``central``
    (the default) or ``high`` of Jalapeño's assumed range. Chip names are case-insensitive.
    UnknownNameError for a chip not in ``chips.csv``, a tier or a case the chip has not (the valid ones
    listed); :class:`NotPricedError` with the file's reason for a chip the source does not price (or
    saying the chip has no row, for a chip added to ``chips.csv`` without one)."""
    table = data.chip_costs()
    key = chip.lower() if isinstance(chip, str) else chip
    chips = list(data.load("chips.csv")["chip"])
    if key not in chips:
        raise UnknownNameError("chip", chip, chips)
    if tier not in data.COST_TIERS:
        raise UnknownNameError("price tier", tier, data.COST_TIERS)
    rows = table.filter(pl.col("chip") == key)
    if rows.is_empty():
        raise NotPricedError(f"chip {key!r} is not priced: it has no row in data/chip_costs.csv")
    if rows["usd_per_chip_hour"].is_null().all():
        raise NotPricedError(f"chip {key!r} is not priced: {rows['not_priced_reason'][0]}")
    cases = list(dict.fromkeys(rows["case"]))
    if case is None:
        case = "published" if "published" in cases else "central"
    if case not in cases:
        raise UnknownNameError("price case", case, cases, where=f"chip {key!r}")
    return float(rows.filter((pl.col("tier") == tier) & (pl.col("case") == case))["usd_per_chip_hour"][0])


def price_table() -> pl.DataFrame:
    """Every chip's hourly cost per tier, one row per chip and case: ``chip``, ``case``, one column per
    tier (USD/h; null for a chip not priced) and ``not_priced_reason``, in ``chip_costs.csv``'s order."""
    table = data.chip_costs()
    priced = table.filter(pl.col("usd_per_chip_hour").is_not_null())
    wide = priced.pivot(on="tier", index=["chip", "case"], values="usd_per_chip_hour", maintain_order=True)
    unpriced = table.filter(pl.col("usd_per_chip_hour").is_null()).select("chip", "case", "not_priced_reason")
    out = pl.concat([wide.with_columns(pl.lit(None, pl.Utf8).alias("not_priced_reason")),
                     unpriced.with_columns(*(pl.lit(None, pl.Float64).alias(t) for t in data.COST_TIERS))],
                    how="diagonal")
    return out.select("chip", "case", *data.COST_TIERS, "not_priced_reason")


def tokens_per_dollar(tput_tok_s, usd_per_chip_hour: float):
    """Tokens one dollar buys: ``tput_tok_s`` (tokens per second per chip: total, input or output) x 3,600
    / ``usd_per_chip_hour`` (USD per chip-hour). A number, or an array for an array of throughputs.
    ValueError naming a non-positive or non-finite throughput or price."""
    return _positive("throughput (tok/s per chip)", tput_tok_s) * SECONDS_PER_HOUR / \
        _positive("price (USD per chip-hour)", usd_per_chip_hour)


def cost_per_million_tokens(tput_tok_s, usd_per_chip_hour: float):
    """Cost of one million tokens (USD) = 10^6 / :func:`tokens_per_dollar` = ``usd_per_chip_hour`` x 10^6 /
    (3,600 x ``tput_tok_s``). Same arguments and errors as :func:`tokens_per_dollar`."""
    return MILLION / tokens_per_dollar(tput_tok_s, usd_per_chip_hour)


def split_throughput(total_tok_s, isl: int, osl: int) -> tuple:
    """Input and output tokens per second per chip of a total (input + output) throughput when every
    request reads ``isl`` and writes ``osl`` tokens: ``(total x isl / (isl + osl), total x osl / (isl +
    osl))`` (the benchmark's ``input_tput_per_gpu`` and ``output_tput_per_gpu`` are these shares of its
    ``tput_per_gpu``). ValueError for a non-positive throughput or token count."""
    total = _positive("throughput (tok/s per chip)", total_tok_s)
    isl, osl = _positive("input tokens (isl)", isl), _positive("output tokens (osl)", osl)
    return total * isl / (isl + osl), total * osl / (isl + osl)


def token_costs(total_tok_s, isl: int, osl: int, usd_per_chip_hour: float) -> dict:
    """The dashboard's six cost readings of one operating point: ``tokens_per_dollar``,
    ``input_tokens_per_dollar``, ``output_tokens_per_dollar`` (tokens per USD) and
    ``usd_per_million_tokens``, ``usd_per_million_input_tokens``, ``usd_per_million_output_tokens`` (USD),
    from its total throughput per chip (tok/s; prefill and decode chips both counted, see the module),
    the request shape (``isl``, ``osl`` tokens, :func:`split_throughput`) and the price (USD/h)."""
    inp, out = split_throughput(total_tok_s, isl, osl)
    result = {}
    for prefix, tput in (("", total_tok_s), ("input_", inp), ("output_", out)):
        result[f"{prefix}tokens_per_dollar"] = tokens_per_dollar(tput, usd_per_chip_hour)
        result[f"usd_per_million_{prefix}tokens"] = cost_per_million_tokens(tput, usd_per_chip_hour)
    return result


def frontier_costs(front: pl.DataFrame, usd_per_chip_hour: float, *, isl: int = 8192, osl: int = 1024,
                   column: str = "throughput_tok_s_chip") -> pl.DataFrame:
    """``front`` (a frontier of :func:`jalapeno.frontier`, or any frame with a total throughput per chip
    in ``column``, tok/s) with the six columns of :func:`token_costs` added at ``usd_per_chip_hour``
    (USD/h). ``isl`` and ``osl`` are the frontier's request shape (the defaults are
    :func:`jalapeno.frontier`'s). UnknownNameError for a missing column; ValueError as
    :func:`token_costs`."""
    if column not in front.columns:
        raise UnknownNameError("column", column, front.columns)
    costs = token_costs(front[column].to_numpy(), isl, osl, usd_per_chip_hour)
    return front.with_columns(pl.Series(name, np.atleast_1d(values)) for name, values in costs.items())


def cost_per_task(chip_seconds, usd_per_chip_hour: float):
    """Cost of a task (USD) = its ``chip_seconds`` (the seconds each chip it occupies is busy with it,
    summed over the chips: prefill and decode chips both) x ``usd_per_chip_hour`` / 3,600. ValueError
    naming a non-positive chip-seconds or price."""
    return _positive("chip-seconds", chip_seconds) * _positive("price (USD per chip-hour)", usd_per_chip_hour) \
        / SECONDS_PER_HOUR


def cost_per_task_from_tokens(tokens, tput_tok_s, usd_per_chip_hour: float):
    """Cost of a task (USD) that moves ``tokens`` through chips delivering ``tput_tok_s`` tokens per second
    per chip: ``tokens / tokens_per_dollar(tput_tok_s, usd_per_chip_hour)`` (equal to
    :func:`cost_per_task` of ``tokens / tput_tok_s`` chip-seconds). ValueError for a non-positive value."""
    return _positive("tokens", tokens) / tokens_per_dollar(tput_tok_s, usd_per_chip_hour)


def energy_cost_per_million_tokens(tput_tok_s, power_w, usd_per_kwh: float | None = None, pue: float = 1.0):
    """Electricity alone per million tokens (USD) = ``power_w`` / 1,000 x ``pue`` x ``usd_per_kwh`` x 10^6
    / (3,600 x ``tput_tok_s``), for a chip drawing ``power_w`` watts (per chip, the basis the caller
    states) at ``tput_tok_s`` tokens per second per chip, in a facility of power usage effectiveness
    ``pue`` (1 = the chip's own draw), ``usd_per_kwh`` default :func:`energy_usd_per_kwh`. A separate reading: the tier costs of :func:`usd_per_chip_hour`
    already include power, so this is never added to them. ValueError naming a non-positive value, or a
    ``pue`` below 1."""
    usd_per_kwh = energy_usd_per_kwh() if usd_per_kwh is None else usd_per_kwh
    pue = _positive("pue", pue)
    if pue < 1:
        raise JalapenoError(f"pue must be at least 1 (facility power / IT power), got {shown(pue)}")
    usd_per_hour = _positive("power (W per chip)", power_w) / 1e3 * pue * _positive("energy price (USD/kWh)", usd_per_kwh)
    return cost_per_million_tokens(tput_tok_s, usd_per_hour)


def break_even_price(tput_tok_s, reference_tput_tok_s, reference_usd_per_chip_hour: float):
    """The hourly price per chip (USD/h) at which a chip delivering ``tput_tok_s`` costs as much per token
    as a reference chip delivering ``reference_tput_tok_s`` at ``reference_usd_per_chip_hour``:
    reference price x ``tput_tok_s`` / ``reference_tput_tok_s`` (cost per token is price / throughput).
    Below it the chip is cheaper per token. ValueError for a non-positive value."""
    return _positive("reference price (USD per chip-hour)", reference_usd_per_chip_hour) * \
        _positive("throughput (tok/s per chip)", tput_tok_s) / _positive("reference throughput (tok/s per chip)",
                                                                          reference_tput_tok_s)


__all__ = ["NotPricedError", "break_even_price", "cost_per_million_tokens", "cost_per_task",
           "cost_per_task_from_tokens", "energy_cost_per_million_tokens", "energy_usd_per_kwh", "frontier_costs", "price_table",
           "split_throughput", "token_costs", "tokens_per_dollar", "tiers", "usd_per_chip_hour"]


def cheaper_above(fast: pl.DataFrame, fast_usd_per_chip_hour: float, slow: pl.DataFrame, slow_usd_per_chip_hour: float,
                  *, isl: int = 8192, osl: int = 1024, points: int = 400) -> dict[str, object]:
    """Where one chip's output tokens cost less than another's along their Pareto frontiers: each frontier
    (``interactivity_tok_s_user``, ``throughput_tok_s_chip``, as :func:`jalapeno.frontier` gives it, at the
    request shape ``isl``/``osl``) priced at its chip's USD per chip-hour (:func:`token_costs`' USD per
    million output tokens), both interpolated log-log on ``points`` interactivities spanning the range both
    reach. Returns ``low`` and ``high`` (that common range, tok/s/user), ``where`` (``everywhere``: ``fast``
    costs less over the whole range; ``above``: from ``cheaper_above`` up to ``high``, the crossing found by
    interpolating the log of the cost ratio between grid points; ``nowhere``: not at ``high``) and
    ``cheaper_above`` (tok/s/user; ``low`` everywhere, NaN nowhere). ValueError when the frontiers share no
    interactivity, or as :func:`token_costs`."""
    def curve(front: pl.DataFrame, price: float) -> tuple[np.ndarray, np.ndarray]:
        f = front.sort("interactivity_tok_s_user")
        cost = token_costs(f["throughput_tok_s_chip"].to_numpy(), isl, osl, price)["usd_per_million_output_tokens"]
        return np.log(f["interactivity_tok_s_user"].to_numpy()), np.log(np.atleast_1d(cost))

    (xf, yf), (xs, ys) = curve(fast, fast_usd_per_chip_hour), curve(slow, slow_usd_per_chip_hour)
    lo, hi = max(xf.min(), xs.min()), min(xf.max(), xs.max())
    if not lo < hi:
        raise ValueError(f"the frontiers share no interactivity: {np.exp(xf.min()):.4g}-{np.exp(xf.max()):.4g} and "
                         f"{np.exp(xs.min()):.4g}-{np.exp(xs.max()):.4g} tok/s/user")
    grid = np.linspace(lo, hi, points)
    gap = np.interp(grid, xf, yf) - np.interp(grid, xs, ys)  # log(fast's cost / slow's)
    out = {"low": float(np.exp(lo)), "high": float(np.exp(hi))}
    if np.all(gap < 0):
        return {**out, "where": "everywhere", "cheaper_above": out["low"]}
    if gap[-1] >= 0:
        return {**out, "where": "nowhere", "cheaper_above": float("nan")}
    i = int(np.nonzero(gap >= 0)[0][-1])  # the last point where fast is not cheaper; cheaper from there on
    at = grid[i] + (grid[i + 1] - grid[i]) * gap[i] / (gap[i] - gap[i + 1])
    return {**out, "where": "above", "cheaper_above": float(np.exp(at))}
