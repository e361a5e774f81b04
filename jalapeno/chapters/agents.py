"""The chapter *Agents: latency per task* (``notebooks/agents.ipynb``).

Runs the agent task model of :mod:`jalapeno.agents` on Jalapeño and a baseline, each at an operating point
of its modeled Pareto frontier: the seeds' worked examples, per-step timings, how a per-call advantage
carries to whole tasks, the steps and timeout sweeps, the published numbers as per-call constants, and
energy, cost and the effective task efficiency at a matched interactivity.
"""

from __future__ import annotations

import functools
import math

import altair as alt
import numpy as np
import polars as pl

from .. import agents, charts, costs, display, pareto, power, sessions, specs, subject
from ..data import claim_value
from ..display import number
from ..errors import UnknownNameError
from . import Chapter, Parameter

#: The numbers of steps of the steps sweep (dependent steps per task).
SWEEP_STEPS = (1, 5, 10, 20, 30, 50, 75, 100)

#: The timeout sweep: this many timeouts, log-spaced from half the shortest modeled call to four times
#: the longest (s).
TIMEOUT_POINTS, TIMEOUT_FROM_SHORTEST, TIMEOUT_TO_LONGEST = 25, 0.5, 4.0


#: The parameters that make the chapter's own task: the fields of :class:`jalapeno.agents.AgentProfile`.
_TASK_FIELDS = ("steps", "initial_context_tokens", "context_growth_tokens", "output_tokens", "tool_time_s",
                "step_success", "timeout_s", "max_attempts", "prefix_cache", "latency_sigma")


#: What the chapter takes (:class:`jalapeno.chapters.Parameter`); the notebook's parameters cell is generated from it.
PARAMETERS = (
    Parameter("model", "gpt-oss-120b", "the model served", names="model"),
    Parameter("baseline", "gb200", "the chip compared with Jalapeño", names="HBM chip"),
    Parameter("scenario", "central", "Jalapeño's unknowns, with the constants fit_jalapeno fits in it",
              choices=tuple(subject.SCENARIOS)),
    Parameter("e2e_reading", subject.DEFAULT_E2E_READING, "the reading of Jalapeño's published E2E: separate (no "
              "chip carries a latency outside the chip) or one-point (every chip does, by one rule)",
              choices=subject.E2E_READINGS),
    Parameter("max_chips", 8, "the most chips per worker of the baseline", low=1, high=1024, unit="chips"),
    Parameter("steps", 30, "the task's dependent calls", low=1, high=10000, unit="steps"),
    Parameter("initial_context_tokens", 8192, "the first call's context", low=1, high=1048576, unit="tokens"),
    Parameter("context_growth_tokens", 1024, "the context's growth per step (the previous output and the tool's "
              "result: at least output_tokens when steps > 1)", low=0, high=1048576, unit="tokens"),
    Parameter("output_tokens", 256, "tokens decoded per call", low=1, high=1048576, unit="tokens"),
    Parameter("tool_time_s", 1.0, "tool work per step", low=0, high=86400, unit="s"),
    Parameter("timeout_s", 5.0, "the time after which a call is cut", low=0, high=86400, low_open=True, unit="s"),
    Parameter("step_success", 0.98, "the probability that a returned result is right", low=0, high=1, low_open=True),
    Parameter("max_attempts", 3, "attempts per step", low=1, high=100),
    Parameter("latency_sigma", 0.5, "the lognormal shape of a call's latency", low=0, high=5),
    Parameter("prefix_cache", True, "whether a step's repeated context is served from the prefix cache"),
    Parameter("profiles", ["short-tool-loop", "long-context-research", "code-editing"],
              "the agent profiles compared next to this task", names="agent profile"),
    Parameter("interactivity_tok_s_user", 0.0, "the operating point for latency", low=0, high=100000,
              unit="tok/s/user", note="0: the fastest point"),
    Parameter("matched_interactivity_tok_s_user", 100.0, "the operating point for energy and cost", low=0,
              high=100000, low_open=True, unit="tok/s/user"),
    Parameter("power_basis", "facility", "the power basis of the energy per task",
              choices=tuple(power.POWER_BASES)),
    Parameter("jalapeno_price_ratio", 1.0, "Jalapeño's price per chip-hour as a multiple of its assumed one, "
              "GB200's (data/chip_costs.csv; its assumed range scales with it)", low=0, high=1000, low_open=True),
    Parameter("energy_usd_per_kwh", None, "the price of a task's electricity (None: the average price to US "
              "industrial customers in 2023)", type=float, low=0, high=10, low_open=True, unit="USD/kWh"),)


def _task(parameters: dict) -> agents.AgentProfile:
    """The chapter's own task from its parameters (those of :data:`_TASK_FIELDS`)."""
    return agents.AgentProfile("this chapter's task", **{k: parameters[k] for k in _TASK_FIELDS})


def check(**parameters) -> None:
    """Refuse, before anything runs, parameters the chapter's task model refuses although each is inside
    its declared range: a growth per step below the output it holds (``context_growth_tokens`` <
    ``output_tokens`` with more than one step; ValueError from :class:`jalapeno.agents.AgentProfile` naming
    both), a task whose longest call (``initial_context_tokens`` + ``steps`` x ``context_growth_tokens``,
    and ``output_tokens``) exceeds ``model``'s context window (ValueError from
    :func:`jalapeno.agents.task_shape` naming the task and the lengths)."""
    task = _task(parameters)
    if task.steps > 1 and task.context_growth_tokens < task.output_tokens:  # with or without the task's cache
        raise ValueError(f"context_growth_tokens ({task.context_growth_tokens!r}) must be >= output_tokens "
                         f"({task.output_tokens!r}): the chapter also serves its task as a session, whose context "
                         "grows by each call's output")
    agents.task_shape(task, parameters["model"])


def compute(*, model: str, baseline: str, scenario: str, e2e_reading: str, max_chips: int, steps: int, initial_context_tokens: int,
            context_growth_tokens: int, output_tokens: int, tool_time_s: float, timeout_s: float,
            step_success: float, max_attempts: int, latency_sigma: float, prefix_cache: bool, profiles: list[str],
            interactivity_tok_s_user: float, matched_interactivity_tok_s_user: float, power_basis: str,
            jalapeno_price_ratio: float, energy_usd_per_kwh: float | None) -> Chapter:
    """The agents chapter's numbers, tables and figures.

    Parameters: those of :data:`PARAMETERS` (type, default, range and unit of each there). The task
    parameters, ``steps`` to ``prefix_cache``, make this chapter's own
    :class:`jalapeno.agents.AgentProfile`; ``profiles`` name those of :data:`jalapeno.agents.PROFILES`
    compared next to it; ``power_basis`` is a basis of :data:`jalapeno.power.POWER_BASES`; ``e2e_reading``
    one of :data:`jalapeno.subject.E2E_READINGS`, which sets Jalapeño's fit and the request latency outside
    the chip both chips' calls carry (:func:`jalapeno.subject.outside_chip_latency_s`).

    Returns a :class:`~jalapeno.chapters.Chapter`. Tables: ``seeds``, ``steps``, ``compounding``,
    ``published``, ``economics``, ``sessions``. Figures: ``task-latency``, ``steps-sweep``, ``timeouts``, ``task-efficiency``
    (exported as ``agent-task-latency-<model>-<baseline>``, ``agent-steps-...``, ``agent-timeouts-...``,
    ``agent-task-efficiency-...``). Raises
    UnknownNameError for an unknown model, chip, scenario, reading, power basis or profile, ValueError for a bad
    task value or a context that does not fit a chosen operating point.
    """
    if power_basis not in power.POWER_BASES:
        raise UnknownNameError("power basis", power_basis, power.POWER_BASES)
    if scenario not in subject.SCENARIOS:
        raise UnknownNameError("scenario", scenario, subject.SCENARIOS)
    subject.check_e2e_reading(e2e_reading)
    specs.model(model)
    baseline = specs.chip(baseline).chip  # the chip's key (names are case-insensitive)
    fit = subject.fit_jalapeno(scenario, e2e_reading=e2e_reading)  # Jalapeño's constants, fitted once
    task = _task(locals())
    tasks = [task] + [agents.profile(name) for name in profiles]
    latency_at = interactivity_tok_s_user or None

    @functools.cache
    def servers(interactivity: float | None, t: agents.AgentProfile) -> dict:
        return agents.task_servers(t, model, baseline, interactivity_tok_s_user=interactivity, scenario=scenario,
                                   jalapeno_fit=fit, max_chips=max_chips, e2e_reading=e2e_reading)

    at_latency = functools.partial(servers, latency_at)
    ch = Chapter()
    _seeds(ch)
    srv = at_latency(task)
    runs = {k: agents.run_task(task, s) for k, s in srv.items()}
    _step_timings(ch, task, srv, runs, baseline=baseline, latency_at=latency_at)
    ratios = agents.published_call_ratios()
    _compounding(ch, tasks, at_latency, ratios, srv=srv, model=model, baseline=baseline, e2e_reading=e2e_reading)
    _sweeps(ch, task, srv, runs, model=model, baseline=baseline)
    _published(ch, tasks, ratios, baseline=baseline)
    _economics(ch, tasks, functools.partial(servers, matched_interactivity_tok_s_user), model=model, baseline=baseline,
               power_basis=power_basis, matched_at=matched_interactivity_tok_s_user,
               price_ratio=jalapeno_price_ratio, usd_per_kwh=energy_usd_per_kwh)
    coding = sessions.coding_agent_session()  # an AgentX-like shape the book sets itself (illustrative)
    longest = sessions.run_session(coding, agents.FixedLatency(1.0, 0.01)).calls["context_tokens"].max()
    shape = agents.AgentProfile(coding.name, steps=1, initial_context_tokens=longest, context_growth_tokens=0,
                                output_tokens=300)  # the operating points that hold its longest call
    _sessions(ch, tasks, at_latency, extra=(coding, at_latency(shape)), baseline=baseline)
    _costs(ch, task, servers(matched_interactivity_tok_s_user, task), model=model, baseline=baseline,
           scenario=scenario, fit=fit, max_chips=max_chips, price_ratio=jalapeno_price_ratio,
           matched_at=matched_interactivity_tok_s_user)
    return ch


def _jalapeno_usd_per_chip_hour(tier: str, case: str | None, price_ratio: float) -> float:
    """Jalapeño's price per chip-hour in ``tier`` (:func:`jalapeno.costs.usd_per_chip_hour`, ``case`` of its
    assumed range, None: its centre) times the chapter's ``jalapeno_price_ratio``."""
    return price_ratio * costs.usd_per_chip_hour("jalapeno", tier, case)


def _costs(ch: Chapter, task, srv: dict, *, model: str, baseline: str, scenario: str, fit, max_chips: int,
           price_ratio: float, matched_at: float) -> None:
    """What one task costs under the dashboard's price tiers (:mod:`jalapeno.costs`, ``data/chip_costs.csv``):
    this chapter's task on both chips at the matched interactivity, with and without a prefix cache, per
    tier (Jalapeño at the centre of its assumed price range, times ``price_ratio``); and, along both chips'
    frontiers at the benchmark's 8k/1k, the interactivity above which Jalapeño's output tokens cost less
    than the baseline's, per tier, at both ends of Jalapeño's price range (times ``price_ratio``). A
    baseline the source does not price is named, and only Jalapeño is priced."""
    prices, note = {}, (f"The source prices {specs.short_name(baseline)}; Jalapeño's price is the assumed range "
                        "above: the cost per task takes its centre, the cost per output token both its ends")
    ch.quote("price_scaled", "" if price_ratio == 1 else
             f", here times {number(price_ratio):g} (this build's `jalapeno_price_ratio`)")
    for key in srv:
        try:
            prices[key] = {t: _jalapeno_usd_per_chip_hour(t, None, price_ratio) if key == "jalapeno"
                           else costs.usd_per_chip_hour(key, t) for t in costs.tiers()}
        except costs.NotPricedError as exc:
            note = f"{specs.short_name(key)} is not priced, so only Jalapeño is: {exc}"
    ch.quote("cost_note", note)
    rows = []
    for key, server in srv.items():
        for cached in (True, False):
            r = agents.run_task(agents.profile(task, prefix_cache=cached), server)
            rows.append({"chip": agents.server_name(key, server.label), "prefix cache": cached,
                         "task latency (s)": r.latency_s, "chip time per task (s)": r.chip_s,
                         **{f"{t} (USD per task)": costs.cost_per_task(r.chip_s, prices[key][t]) if key in prices else None
                            for t in costs.tiers()}})
    table = pl.DataFrame(rows)
    b_short, speed = specs.short_name(baseline), display.formatted(matched_at, "{:,.0f}")
    ch.add_table("task-costs", table, f"This chapter's task at {speed} tok/s/user on Jalapeño and {b_short}: cost per "
                 "price tier, with and without a prefix cache")
    name = {k: agents.server_name(k, srv[k].label) for k in srv}
    ch.quote("cost_b_name", name[baseline])
    for who, key in (("j", "jalapeno"), ("b", baseline)):
        row = table.filter(pl.col("prefix cache") & (pl.col("chip") == name[key])).row(0, named=True)
        for tier in costs.tiers():
            cost = row[f"{tier} (USD per task)"]
            ch.quote(f"cost_{who}_{tier}", "not priced" if cost is None else 1e3 * cost, "{:.2f}")  # USD per 1,000 tasks
    if baseline not in prices:
        ch.add_table("cheaper-above", pl.DataFrame({"note": [note]}),
                     f"Why no cost per output token is compared: the source does not price {b_short}")
        ch.quote("cheaper_text", f"nowhere that can be said: {specs.short_name(baseline)} has no price")
        return
    fronts = {"jalapeno": subject.jalapeno_frontier(model, scenario, fit=fit),
              baseline: pareto.frontier(baseline, model, max_chips=max_chips)}
    where, at, case = "Jalapeño cheaper per output token", "from (tok/s/user)", "Jalapeño's price"
    below = []
    for tier in costs.tiers():
        for end in ("low", "high"):
            price = _jalapeno_usd_per_chip_hour(tier, end, price_ratio)
            r = costs.cheaper_above(fronts["jalapeno"], price, fronts[baseline], prices[baseline][tier])
            below.append({"tier": tier, case: end, "Jalapeño (USD per chip-hour)": price,
                          f"{specs.short_name(baseline)} (USD per chip-hour)": prices[baseline][tier],
                          where: {"everywhere": "at every interactivity both reach", "above": "above",
                                  "nowhere": "nowhere"}[r["where"]],
                          at: None if r["where"] == "nowhere" else r["cheaper_above"],
                          "range both reach (tok/s/user)": f"{number(r['low']):,.0f}–{number(r['high']):,.0f}"})
    ch.add_table("cheaper-above", pl.DataFrame(below),
                 f"Where Jalapeño's output tokens cost less than {b_short}'s along both 8k/1k frontiers, per tier and "
                 "price-range end")
    span = below[0]["range both reach (tok/s/user)"]
    if all(r[where] == "at every interactivity both reach" for r in below):
        text = f"at every interactivity both reach ({span} tok/s/user), in every tier and at both ends of its price range"
    else:  # the least favourable tier and price
        worst = max(below, key=lambda r: (r[where] == "nowhere", r[at] or 0.0))
        text = (f"{worst[where]}" + (f" {number(worst[at]):,.0f} tok/s/user" if worst[where] == "above" else "")
                + f" at worst ({worst['tier']} tier, its price at the {worst[case]} end of its range; both reach {span} tok/s/user)")
    ch.quote("cheaper_text", text)


def _sessions(ch: Chapter, tasks, servers, extra: tuple, *, baseline: str) -> None:
    """Each task as a session (:func:`jalapeno.sessions.from_profile`: its first attempts), and the session
    ``extra`` (a :class:`jalapeno.sessions.Session` and its servers: the illustrative coding agent with its
    sub-agents), served without a prefix cache and with an unbounded one
    (:func:`jalapeno.sessions.compare_profiles`, :func:`~jalapeno.sessions.compare_caches`), at the latency
    operating points: the tokens each prefills and its latency. A task whose growth is below its output
    (no session holds it) is left out and named."""
    fit = [t for t in tasks if t.steps == 1 or t.context_growth_tokens >= t.output_tokens]
    left = [t.name for t in tasks if t not in fit]
    session, at = extra
    more = [sessions.compare_caches(session, server, (math.inf,)).select(
        pl.lit(session.name).alias("profile"), pl.lit(key).alias("server_key"), pl.all()) for key, server in at.items()]
    df = pl.concat([sessions.compare_profiles(fit, servers, (math.inf,)), *more], how="diagonal_relaxed").with_columns(
        pl.col("cache_tokens").is_not_null().alias("cached"))
    wide = df.pivot(on="cached", index=["profile", "server_key"], values=["uncached_tokens", "latency_s"])
    wide = wide.with_columns(pl.col("server_key").map_elements(agents.server_name, return_dtype=pl.String).alias("chip"))
    ch.add_table("sessions", wide.select(
        "profile", "chip", pl.col("uncached_tokens_false").cast(pl.Int64).alias("tokens prefilled, no cache"),
        pl.col("uncached_tokens_true").cast(pl.Int64).alias("tokens prefilled, prefix cache"),
        (100 * (1 - pl.col("uncached_tokens_true") / pl.col("uncached_tokens_false"))).alias("prefill saved (%)"),
        pl.col("latency_s_false").alias("task latency, no cache (s)"),
        pl.col("latency_s_true").alias("task latency, prefix cache (s)")),
        f"Each task as one session on Jalapeño and {specs.short_name(baseline)}: tokens prefilled and latency, "
        "without and with a prefix cache")
    own = wide.filter(pl.col("profile") == tasks[0].name)
    j = own.filter(pl.col("server_key") == "jalapeno").row(0, named=True)
    b = own.filter(pl.col("server_key") != "jalapeno").row(0, named=True)
    ch.quote("ses_no_cache", j["uncached_tokens_false"], "{:,.0f}")
    ch.quote("ses_cache", j["uncached_tokens_true"], "{:,.0f}")
    ch.quote("ses_saved_pct", 100 * (1 - j["uncached_tokens_true"] / j["uncached_tokens_false"]), "{:.0f}")
    ch.quote("ses_j_saving_ms", 1e3 * (j["latency_s_false"] - j["latency_s_true"]), "{:.1f}")
    ch.quote("ses_b_saving_ms", 1e3 * (b["latency_s_false"] - b["latency_s_true"]), "{:.1f}")
    ch.quote("ses_b_name", b["chip"])
    ch.quote("ses_left_out", ", ".join(left) if left else "none")
    ch.quote("ses_task_model", "The task model of the sections above counts its prefill the same way"
             if tasks[0].prefix_cache else "The task model of the sections above runs without a prefix cache in this "
             "build (prefix_cache false): it prefills each call's whole context, as the first columns here do")
    turns = [s for s in session.steps if isinstance(s, sessions.Turn)]
    fan = next((i for i, s in enumerate(session.steps) if isinstance(s, sessions.FanOut)), None)
    shape = (f"{len(turns)} turns of a main agent, the first bringing {number(turns[0].new_tokens):,.0f} tokens and "
             f"each later one {number(turns[1].new_tokens):,.0f}")
    if fan is not None:
        subs = session.steps[fan].sessions
        shape += (f", and after turn {fan}, {len(subs)} sub-agents of {len(subs[0].steps)} turns each, run in parallel "
                  f"and joined before turn {fan + 1}")
    ch.quote("coding_shape", shape)


def _pair_words(slow: str):
    """The headers, in words, of a :func:`jalapeno.agents.compounding_table` of the chip named ``slow``
    against Jalapeño (the faster of the pair)."""
    words = {"slow_latency_s": f"{slow} task latency (s)", "fast_latency_s": "Jalapeño task latency (s)",
             "saving_s": "saving per task (s)", "task_ratio": f"task latency ratio, {slow} / Jalapeño",
             "first_pass_ratio": "first-pass latency ratio", "call_ratio_first_step": "call ratio, first step",
             "call_ratio_last_step": "call ratio, last step",
             "slow_call_share": f"model calls' share of {slow}'s task time",
             "slow_completion": f"{slow} completion rate", "fast_completion": "Jalapeño completion rate"}
    return lambda column: words.get(column, column)


def _seeds(ch: Chapter) -> None:
    """The seeds' claims and their worked examples through the task model."""
    ch.quote("s50_steps", claim_value("agent-50-steps"), "{:.0f}")
    ch.quote("s50_step", claim_value("agent-50-step-per-step-saving"), "{:g}")
    ch.quote("s30_steps", claim_value("agent-30-steps"), "{:.0f}")
    ch.quote("s30_step", claim_value("agent-30-step-per-step-saving"), "{:g}")
    ch.quote("s30_total", claim_value("agent-30-step-saving"), "{:g}")
    ch.quote("headline_e2e_hi", claim_value("headline-e2e-ratio", high=True), "{:g}")
    seeds = agents.seed_examples()
    ch.quote("seed30_saving", seeds["task_model_saving_s"][0], "{:.1f}")
    ch.quote("seed50_saving", seeds["task_model_saving_s"][1], "{:.0f}")
    ch.quote("seed50_published", seeds["published_saving_s"][1], "{:.0f}")
    ch.add_table("seeds", seeds, "The seeds' worked agent examples through the task model: steps, saving per step, "
                 "modeled and published saving")


def layout_text(server: agents.ServingPoint) -> str:
    """A worker's layout in words: ``8 chips, 1 sequence``."""
    return (f"{number(server.n_chips):g} chip{'s' if server.n_chips > 1 else ''}, "
            f"{number(server.concurrency):g} sequence{'s' if server.concurrency > 1 else ''}")


def _step_timings(ch: Chapter, task, srv: dict, runs: dict, *, baseline: str, latency_at: float | None) -> None:
    """Per-step TTFT, TPOT and call time on each chip at the first, middle and last step."""
    pick = sorted({0, task.steps // 2, task.steps - 1})
    point = "their fastest points" if latency_at is None else f"{display.formatted(latency_at, '{:,.0f}')} tok/s/user"
    ch.add_table("steps", pl.concat([
        r.steps[pick].select(pl.lit(agents.server_name(k, srv[k].label)).alias("chip"), "step", "context_tokens",
                             "prefill_tokens", (pl.col("ttft_s") * 1e3).alias("ttft_ms"), (pl.col("tpot_s") * 1e3).alias("tpot_ms"),
                             pl.col("call_s").alias("call time (s)"), pl.col("p_in_time").alias("share of calls in time"))
        for k, r in runs.items()]),
        f"TTFT, TPOT and call time at the first, middle and last step, Jalapeño and {specs.short_name(baseline)} at "
        f"{point}")
    ch.quote("latency_point", "fastest points" if latency_at is None else
             f"operating points at {number(latency_at):,.0f} tok/s/user")
    ch.quote("j_config", layout_text(srv["jalapeno"]))
    ch.quote("b_config", layout_text(srv[baseline]))
    ch.quote("b_name", specs.chip(baseline).display_name)
    j1, b1 = runs["jalapeno"].steps.row(0, named=True), runs[baseline].steps.row(0, named=True)
    jn, bn = runs["jalapeno"].steps.row(-1, named=True), runs[baseline].steps.row(-1, named=True)
    ch.quote("step_saving_first_ms", 1e3 * (b1["call_s"] - j1["call_s"]), "{:,.0f}")
    ch.quote("step_saving_last_ms", 1e3 * (bn["call_s"] - jn["call_s"]), "{:,.0f}")
    loses = min(b1["call_s"] - j1["call_s"], bn["call_s"] - jn["call_s"]) < 0
    ch.quote("step_saving_sign", " (negative: Jalapeño loses time)" if loses else "")
    ch.quote("call_ratio_first", b1["call_s"] / j1["call_s"], "{:.2f}")
    ch.quote("call_ratio_last", bn["call_s"] / jn["call_s"], "{:.2f}")


def _compounding(ch: Chapter, tasks, servers, ratios: dict[str, float], *, srv: dict, model: str,
                 baseline: str, e2e_reading: str) -> None:
    """Each task's latency on both chips against the published per-call ratios."""
    comp = agents.compounding_table(tasks, servers, fast="jalapeno", slow=baseline,
                                    per_call_e2e_ratio=ratios["e2e"], per_call_tbt_ratio=ratios["tbt"])
    ch.quote("pub_e2e_ratio", ratios["e2e"], "{:.2f}", quantity="gptoss-e2e-ratio-published")
    ch.quote("pub_tbt_ratio", ratios["tbt"], "{:.2f}", quantity="gptoss-tbt-ratio-published")
    ch.quote("task_ratio_min", comp["task_ratio"].min(), "{:.2f}")
    ch.quote("task_ratio_max", comp["task_ratio"].max(), "{:.2f}")
    ch.quote("saving_min_s", comp["saving_s"].min(), "{:,.0f}")
    ch.quote("step_save_min", comp["saving_per_step_s"].min(), "{:.2f}")
    ch.quote("step_save_max", comp["saving_per_step_s"].max(), "{:.2f}")
    ch.quote("saving_max_s", comp["saving_s"].max(), "{:,.0f}")
    ch.quote("call_share_min", 100 * comp["slow_call_share"].min(), "{:.0f}")
    ch.quote("call_share_max", 100 * comp["slow_call_share"].max(), "{:.0f}")
    model_slower = comp.filter(pl.col("task_ratio") < 1)["profile"].to_list()
    ch.quote("model_slower", ", ".join(model_slower) if model_slower else "none")
    ch.quote("slower_note", f"negative where Jalapeño is slower, here for: {', '.join(model_slower)}" if model_slower
             else "Jalapeño is the faster on every task")
    j_ms, b_ms = (1e3 * srv[k].eff.request_latency_s for k in ("jalapeno", baseline))
    ch.quote("j_request_ms", j_ms, "{:.0f}")
    ch.quote("b_request_ms", b_ms, "{:.0f}")
    ch.quote("e2e_reading", e2e_reading)
    b_name = specs.chip(baseline).display_name
    ch.quote("latency_reading", (
        "Neither chip's modeled calls carry a latency outside the chip: this build reads Jalapeño's published "
        "E2E as taken at another configuration than its minimum TBT (the `separate` reading, "
        "`jalapeno.subject.E2E_READINGS`; Reading the numbers says why), so each call is what the serving model "
        "places on the chips") if e2e_reading == "separate" else (
        f"Both chips' modeled calls carry a request latency outside the chip, by one rule "
        f"(`jalapeno.subject.outside_chip_latency_s`, the `one-point` reading of Jalapeño's E2E): "
        f"{display.formatted(j_ms, '{:.0f}')} ms for Jalapeño, fitted to its published E2E, and "
        f"{display.formatted(b_ms, '{:.0f}')} ms for {b_name}, its measured TTFT at its lowest measured "
        f"concurrency minus its modeled one there; where calls are short and prefixes cached that latency "
        f"can outweigh a faster decode"))
    ch.quote("latency_in_calls", "with no latency outside the chip" if e2e_reading == "separate" else
             "with the request latency outside the chip each carries")
    ch.add_table("compounding", comp.drop("per_call_e2e_ratio", "per_call_tbt_ratio", "slow", "fast").rename(
        _pair_words(specs.short_name(baseline))),
        f"Each task's modeled latency on {specs.short_name(baseline)} and Jalapeño: saving per task and per step, "
        "task and per-call ratios")
    ch.add_figure("task-latency", agent_task_latency(agents.compare(tasks, servers)),
                  f"agent-task-latency-{model}-{baseline}")


def _sweeps(ch: Chapter, task, srv: dict, runs: dict, *, model: str, baseline: str) -> None:
    """This task's latency as its steps grow, and its completion rate as its timeout tightens."""
    sweep = agents.steps_sweep(task, srv, steps=SWEEP_STEPS)
    n_max = int(sweep["steps"].max())
    ch.quote("sweep_n", n_max)
    lat = {r["server"]: r["latency_s"] for r in sweep.filter(pl.col("steps") == n_max).iter_rows(named=True)}
    ch.quote("sweep_saving_100", lat[baseline] - lat["jalapeno"], "{:,.1f}")
    ch.quote("sweep_ratio_100", lat[baseline] / lat["jalapeno"], "{:.2f}")
    ch.add_figure("steps-sweep", agent_sweep(sweep, "steps", "latency_s", "Task latency grows with the number of steps",
                                             "dependent steps", "expected task latency (s)"),
                  f"agent-steps-{model}-{baseline}")
    calls = pl.concat([r.steps.select("call_s") for r in runs.values()])["call_s"]
    grid = np.geomspace(float(calls.min()) * TIMEOUT_FROM_SHORTEST, float(calls.max()) * TIMEOUT_TO_LONGEST,
                        TIMEOUT_POINTS)
    tsweep = agents.timeout_sweep(task, srv, grid)
    wide = tsweep.pivot(on="server", index="timeout_s", values="completion_rate")
    gap = wide.with_columns((pl.col("jalapeno") - pl.col(baseline)).abs().alias("gap")).sort("gap").row(-1, named=True)
    ch.quote("to_gap_timeout", gap["timeout_s"], "{:.2f}")
    ch.quote("to_gap_j", 100 * gap["jalapeno"], "{:.0f}")
    ch.quote("to_gap_b", 100 * gap[baseline], "{:.0f}")
    leader, other = ("Jalapeño", baseline.upper()) if gap["jalapeno"] > gap[baseline] else (baseline.upper(), "Jalapeño")
    ch.quote("to_gap_leader", leader)
    ch.quote("to_gap_verdict", f"{leader}'s calls are the shorter ones at this task's contexts, so they stay under the "
             f"timeout more often and its tasks complete where {other}'s die")
    ch.quote("task_steps", task.steps)
    ch.quote("task_attempts", task.max_attempts)
    ch.add_figure("timeouts", agent_sweep(tsweep, "timeout_s", "completion_rate",
                                          "Tasks completed as the timeout tightens", "timeout per call (s)",
                                          "share of tasks completed", log_x=True),
                  f"agent-timeouts-{model}-{baseline}")


def _published(ch: Chapter, tasks, ratios: dict[str, float], *, baseline: str) -> None:
    """The task model driven by the published gpt-oss-120b numbers as constant per-call timings."""
    pub = agents.published_servers()
    comp_pub = agents.compounding_table(tasks, {"jalapeno": pub["jalapeno"], baseline: pub["gb200"]},
                                        fast="jalapeno", slow=baseline, per_call_e2e_ratio=ratios["e2e"],
                                        per_call_tbt_ratio=ratios["tbt"])
    ch.quote("pub_ttft_j", pub["jalapeno"].ttft_s, "{:.3f}", quantity="gptoss-implied-ttft-s")
    ch.quote("pub_ttft_b", pub["gb200"].ttft_s, "{:.3f}", quantity="gb200-gptoss-implied-ttft-s")
    slower = comp_pub.filter(pl.col("task_ratio") < 1)
    ch.quote("pub_slower", ", ".join(slower["profile"]) if slower.height else "none of the tasks")
    ch.quote("pub_ratio_max", comp_pub["task_ratio"].max(), "{:.2f}")
    # the slower server is GB200's published numbers, whatever the baseline
    ch.add_table("published", comp_pub.select("profile", "steps", "slow_latency_s", "fast_latency_s", "saving_s",
                                              "task_ratio").rename(_pair_words(specs.short_name("gb200"))),
                 "Task latency with GB200's and Jalapeño's published gpt-oss-120b TBT and implied TTFT as "
                 "per-call constants")


def _economics(ch: Chapter, tasks, servers, *, model: str, baseline: str, power_basis: str, matched_at: float,
               price_ratio: float, usd_per_kwh: float | None) -> None:
    """Energy, cost and the effective task efficiency where both chips serve each user at one speed; each
    task's energy priced at ``usd_per_kwh`` (None: :func:`jalapeno.costs.energy_usd_per_kwh`, with its
    basis), a reading apart from the cost per chip-hour, which includes power."""
    powers = {"jalapeno": power.power_stack("jalapeno", power_basis), baseline: power.power_stack(baseline, power_basis)}
    # the neocloud tier of data/chip_costs.csv, InferenceX's middle one: the baseline's own price where the
    # source gives one (else GB200's, said), Jalapeño's assumed one (GB200's) times the parameter
    price = costs.usd_per_chip_hour("gb200", ECONOMICS_TIER)
    try:
        baseline_price, priced = costs.usd_per_chip_hour(baseline, ECONOMICS_TIER), True
    except costs.NotPricedError:
        baseline_price, priced = price, False
    prices = {"jalapeno": _jalapeno_usd_per_chip_hour(ECONOMICS_TIER, None, price_ratio), baseline: baseline_price}
    econ = agents.compare(tasks, servers, powers=powers, prices=prices)
    ch.quote("matched_at", matched_at, "{:,.0f}")
    kwh_price = costs.energy_usd_per_kwh() if usd_per_kwh is None else usd_per_kwh
    ch.quote("energy_price", kwh_price, "{:.4g}")
    ch.quote("energy_price_basis", "the average retail price to US industrial customers in 2023 (US Energy "
             "Information Administration)" if usd_per_kwh is None else "this build's parameter `energy_usd_per_kwh`")
    ch.quote("basis", power.BASIS_LABELS[power_basis])
    ch.quote("basis_j_w", powers["jalapeno"].total_w, "{:,.0f}")
    ch.quote("price_ratio", price_ratio, "{:g}")
    ch.quote("price_jalapeno", "Jalapeño at the same price, since none is public for it (`jalapeno_price_ratio` "
             "sets another)" if price_ratio == 1 else f"Jalapeño at {number(price_ratio):g} times that, this build's "
             "`jalapeno_price_ratio`; no price of Jalapeño is public")
    ch.quote("price_gb200", price, "{:.2f}")
    name = specs.chip(baseline).display_name
    ch.quote("price_text", f"GB200: {number(price):.2f} USD per GPU-hour" if baseline == "gb200" else
             f"{name}: {number(baseline_price):.2f} USD per GPU-hour" if priced else
             f"{name} priced at GB200's {number(price):.2f} USD per GPU-hour: the source does not price it")
    w = econ.pivot(on="server_key", index="profile", values=["effective_tasks_per_kwh", "cost_usd", "latency_s"])
    eff_ratio = w["effective_tasks_per_kwh_jalapeno"] / w[f"effective_tasks_per_kwh_{baseline}"]
    cost_ratio = w[f"cost_usd_{baseline}"] / w["cost_usd_jalapeno"]
    ch.quote("eff_ratio_min", eff_ratio.min(), "{:.2f}")
    ch.quote("eff_ratio_max", eff_ratio.max(), "{:.2f}")
    ch.quote("cost_ratio_min", cost_ratio.min(), "{:.2f}")
    ch.quote("cost_ratio_max", cost_ratio.max(), "{:.2f}")
    # equal prices: equal to what the data's digits can tell apart (two rows of the same price, read apart)
    equal = math.isclose(prices["jalapeno"], prices[baseline], rel_tol=SAME_PRICE)
    ch.quote("cost_text", _cost_text(cost_ratio.min(), cost_ratio.max(), equal, prices["jalapeno"], price_ratio))
    fp = econ.filter(pl.col("server_key") == "jalapeno")
    ch.quote("first_pass_min", 100 * fp["first_pass_rate"].min(), "{:.0f}")
    ch.quote("first_pass_max", 100 * fp["first_pass_rate"].max(), "{:.0f}")
    labels = [s for s in econ["server"].unique() if s.endswith("(max)")]
    names = sorted(specs.chip(_server_chip(label)).display_name for label in labels)
    ch.quote("matched_note", "both chips reach it" if not labels else
             f"{' and '.join(names)} cannot reach it and run{'s' if len(labels) == 1 else ''} at {'its' if len(labels) == 1 else 'their'} fastest point")
    eff = agents.task_efficiency(econ)  # each chip by its reader's name (GB200, not gb200), as the figure names it
    ch.add_table("economics", econ.select(
        "profile", eff["chip"], pl.col("latency_s").alias("task latency (s)"),
        pl.col("completion_rate").alias("completion rate c"), pl.col("first_pass_rate").alias("first-pass rate p"),
        pl.col("tokens").alias("tokens per task"), pl.col("chip_s").alias("chip time per task (s)"),
        pl.col("energy_accelerator_j").alias("accelerator energy (J)"),
        pl.col("energy_host_network_j").alias("host and network energy (J)"),
        pl.col("energy_cooling_j").alias("cooling energy (J)"),
        (pl.col("energy_j") / 3.6e6 * kwh_price * 1e3).alias("electricity per 1,000 tasks (USD)"),
        pl.col("cost_usd").alias("cost per task (USD)"),
        pl.col("tasks_per_kwh").alias("tasks completed per kWh, N"),
        pl.col("effective_tasks_per_kwh").alias("effective tasks per kWh, E = p x N")),
        f"Each task at {display.formatted(matched_at, '{:,.0f}')} tok/s/user on Jalapeño and "
        f"{specs.short_name(baseline)} ({cache_words(tasks)}, {ECONOMICS_TIER} chip-hours): latency, rates c and p, "
        "energy, cost, tasks per kWh N and E")
    _task_efficiency(ch, eff, model=model, baseline=baseline)


def cache_words(tasks) -> str:
    """Whether ``tasks`` (:class:`jalapeno.agents.AgentProfile`) are served with a prefix cache, in words."""
    kinds = {t.prefix_cache for t in tasks}
    return "with a prefix cache" if kinds == {True} else "without a prefix cache" if kinds == {False} else \
        "some with a prefix cache"


#: The price tier of the economics table (data/chip_costs.csv): InferenceX's middle one.
ECONOMICS_TIER = "neocloud"
#: Two prices per chip-hour this close (relative) are the same price: the data give them to 4 decimals.
SAME_PRICE = 1e-6


def _cost_text(low: float, high: float, equal: bool, jalapeno_price: float, price_ratio: float) -> str:
    """How a task's cost on Jalapeño compares with the baseline's, from the lowest and highest of the
    baseline's cost over Jalapeño's (``low``, ``high``), in words that hold on either side of 1, and at
    which prices: ``equal`` when both chips' chip-hours cost the same."""
    if low >= 1:
        how = f"{number(low):.2f}x to {number(high):.2f}x less"
    elif high <= 1:
        how = f"{number(1 / high):.2f}x to {number(1 / low):.2f}x more"
    else:
        how = f"from {number(1 / low):.2f}x more to {number(high):.2f}x less, by task,"
    where = ("at equal prices per chip-hour" if equal else
             f"with Jalapeño's chip-hour at {number(jalapeno_price):.2f} USD" + (
                 f" ({number(price_ratio):g} times its assumed price, GB200's; `jalapeno_price_ratio`)"
                 if price_ratio != 1 else ""))
    return f"{how} on Jalapeño {where}"


def _task_efficiency(ch: Chapter, eff: pl.DataFrame, *, model: str, baseline: str) -> None:
    """Seed 003's formula at work (:func:`jalapeno.agents.task_efficiency`): the task of the lowest
    first-pass rate on Jalapeño worked through, and the figure of every task on both chips."""
    low = eff.filter(pl.col("server_key") == "jalapeno").sort("first_pass_rate").row(0, named=True)
    other = eff.filter((pl.col("profile") == low["profile"]) & (pl.col("server_key") == baseline)).row(0, named=True)
    ch.quote("te_profile", low["profile"])
    ch.quote("te_p", low["first_pass_rate"], "{:.3f}")
    ch.quote("te_n", low["completed_tasks_per_kwh"], "{:,.0f}")
    ch.quote("te_e", low["effective_tasks_per_kwh"], "{:,.1f}")
    ch.quote("te_b_name", other["chip"])
    ch.quote("te_b_n", other["completed_tasks_per_kwh"], "{:,.0f}")
    ch.quote("te_b_e", other["effective_tasks_per_kwh"], "{:,.1f}")
    ch.add_figure("task-efficiency", agent_task_efficiency(eff), f"agent-task-efficiency-{model}-{baseline}")


# ---- figures ----

def _server_chip(name: str) -> str:
    return name.split(" ")[0]


def agent_task_latency(df: pl.DataFrame) -> alt.Chart:
    """Expected task latency per agent profile on each server (:func:`jalapeno.agents.compare`:
    ``profile``, ``server``, ``latency_s``, ``completion_rate``), bars side by side, coloured by chip and
    each chip named as a reader names it (:func:`jalapeno.agents.server_name`)."""
    data = _reader_servers(df.select("profile", "server", "latency_s", "completion_rate"))
    return alt.Chart(data).mark_bar().encode(
        x=alt.X("profile:N", title=None, axis=alt.Axis(labelAngle=0)),
        xOffset=alt.XOffset("chip:N", sort=_named_chips(data["chip"].to_list())),
        y=alt.Y("latency_s:Q", title="expected task latency (s)"),
        color=_named_chip_color(data["chip"].to_list()),
        tooltip=["profile:N", "chip:N", alt.Tooltip("latency_s:Q", format=",.1f"),
                 alt.Tooltip("completion_rate:Q", format=".3f")],
    ).properties(title="Agent tasks: expected latency per task")


def _named_chips(names) -> list[str]:
    """Chips named as readers name them (:func:`jalapeno.agents.server_name`: ``Jalapeño``, ``GB200 (at its
    fastest point)``), each once, in the book's chip order (:func:`jalapeno.charts.chip_order`)."""
    order = charts.chip_order(charts.chip_colours())
    return sorted(dict.fromkeys(names), key=lambda n: (order.index(_named_key(n)) if _named_key(n) else len(order), n))


def _named_key(name: str) -> str:
    """The key of the chip a reader's name (:func:`jalapeno.agents.server_name`) names, "" for none."""
    return next((k for k in charts.chip_order(charts.chip_colours()) if name.startswith(specs.short_name(k))), "")


def _named_chip_color(names, field: str = "chip", legend=alt.Undefined) -> alt.Color:
    """The colour channel of chips named as readers name them (:func:`_named_chips`): each in its chip's
    colour of :data:`jalapeno.charts.CHIP_COLOURS`, a name of no chip in :data:`jalapeno.charts.OTHER_COLOUR`."""
    names, colours = _named_chips(names), charts.chip_colours()
    return alt.Color(f"{field}:N", title="chip", legend=legend, scale=alt.Scale(
        domain=names, range=[colours.get(_named_key(n), charts.OTHER_COLOUR) for n in names]))


def _reader_servers(df: pl.DataFrame, label: str = "server") -> pl.DataFrame:
    """``df`` with its column ``label`` of servers' labels (``gb200``, ``gb200 (max)``, starting with the chip's
    key) replaced by the column ``chip`` of their reader's names (:func:`jalapeno.agents.server_name`)."""
    names = [agents.server_name(_server_chip(s), s) for s in df[label]]
    return df.with_columns(pl.Series(label, names, dtype=pl.Utf8)).rename({label: "chip"})


#: The two counts of :func:`agent_task_efficiency`, as its legend names them.
_EFFICIENCY_MEASURES = {"completed_tasks_per_kwh": "completed, N", "effective_tasks_per_kwh": "first pass, p x N"}


def agent_task_efficiency(df: pl.DataFrame) -> alt.LayerChart:
    """Seed 003's effective task efficiency per agent profile and chip (:func:`jalapeno.agents.task_efficiency`:
    ``profile``, ``chip``, ``first_pass_rate``, ``completed_tasks_per_kwh``, ``effective_tasks_per_kwh``,
    one row each): for each chip side by side, a dot at the tasks it completes per kWh (``N``) joined by a
    line to a triangle at the effective efficiency ``p x N``, on a log axis, where the drop from one to the
    other is the first-pass rate ``p`` and the gap between the chips their energy per task."""
    data = df.select("profile", "chip", "first_pass_rate", "completed_tasks_per_kwh", "effective_tasks_per_kwh")
    colour, chips = _named_chip_color(data["chip"].to_list()), _named_chips(data["chip"].to_list())
    profiles = list(dict.fromkeys(data["profile"].to_list()))
    x = alt.X("profile:N", title=None, sort=profiles)
    y_scale = alt.Scale(type="log")
    tooltip = ["profile:N", "chip:N", alt.Tooltip("first_pass_rate:Q", title="first-pass rate p", format=".3f"),
               alt.Tooltip("completed_tasks_per_kwh:Q", title="tasks completed per kWh, N", format=",.1f"),
               alt.Tooltip("effective_tasks_per_kwh:Q", title="effective tasks per kWh, p x N", format=",.1f")]
    base = alt.Chart(data).encode(x=x, xOffset=alt.XOffset("chip:N", sort=chips), color=colour, tooltip=tooltip)
    drop = base.mark_rule(strokeWidth=2).encode(
        y=alt.Y("completed_tasks_per_kwh:Q", scale=y_scale, axis=alt.Axis(title="tasks per kWh (log scale)")),
        y2="effective_tasks_per_kwh:Q")
    ends = base.transform_fold(list(_EFFICIENCY_MEASURES), as_=["count", "tasks"]).transform_calculate(
        counted=" : ".join(f"datum.count == '{k}' ? '{v}'" for k, v in _EFFICIENCY_MEASURES.items()) + " : ''",
    ).mark_point(filled=True, size=70, opacity=1).encode(
        y=alt.Y("tasks:Q", scale=y_scale, axis=alt.Axis(title="tasks per kWh (log scale)")),
        shape=alt.Shape("counted:N", title=None, scale=alt.Scale(
            domain=list(_EFFICIENCY_MEASURES.values()), range=["circle", "triangle-down"])))
    return alt.layer(drop, ends).properties(title=charts.wrap_title(
        "Tasks per kWh: completed (N) and right at the first pass (p x N)"))


def agent_sweep(df: pl.DataFrame, x: str, y: str, title: str, x_title: str, y_title: str,
                log_x: bool = False) -> alt.Chart:
    """One line per server of an agent sweep (:func:`jalapeno.agents.steps_sweep` or
    :func:`jalapeno.agents.timeout_sweep`): ``x`` against ``y``, coloured by chip and each chip named as
    a reader names it (:func:`jalapeno.agents.server_name`)."""
    data = _reader_servers(df.select("server", x, y))
    return alt.Chart(data).mark_line(point=alt.OverlayMarkDef(size=20)).encode(
        x=alt.X(f"{x}:Q", title=x_title, scale=alt.Scale(type="log") if log_x else alt.Undefined),
        y=alt.Y(f"{y}:Q", title=y_title),
        color=_named_chip_color(data["chip"].to_list(), legend=charts.LINE_LEGEND),
        order=f"{x}:Q",
        tooltip=["chip:N", alt.Tooltip(f"{x}:Q", format=",.3g"), alt.Tooltip(f"{y}:Q", format=",.3f")],
    ).properties(title=title)
