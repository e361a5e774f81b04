"""The agent task model against hand-worked cases: the seeds' 6 s and one minute, retries, timeouts,
energy and the effective task efficiency; its serving-model calls against jalapeno.serving."""

import math

import numpy as np
import pytest
from scipy import integrate, stats

import jalapeno as jp
from jalapeno import agents, data, power, serving, specs, subject
from jalapeno.metrics import mean_request_length


def task(**kw):
    base = dict(steps=3, initial_context_tokens=1, context_growth_tokens=0, output_tokens=2, cached_output=False)
    return agents.AgentProfile("hand-worked", **{**base, **kw})


@pytest.fixture(scope="module")
def fit():
    return subject.fit_jalapeno("central")


@pytest.fixture(scope="module")
def eff(fit):
    return fit.efficiency


def test_seed_003_thirty_steps_of_200_ms_save_six_seconds():
    steps = int(data.claim_value("agent-30-steps"))
    per_step = agents.claim_seconds("agent-30-step-per-step-saving")
    assert (steps, per_step) == (30, pytest.approx(0.2))
    r = agents.seed_example(steps, per_step)
    assert r["saving_s"] == pytest.approx(6.0)
    assert r["saving_s"] == pytest.approx(agents.claim_seconds("agent-30-step-saving"))
    assert (r["slow_s"], r["fast_s"]) == (pytest.approx(36.0), pytest.approx(30.0))


def test_seed_000_fifty_steps_of_one_second_save_fifty_seconds_nearly_a_minute():
    r = agents.seed_example(int(data.claim_value("agent-50-steps")),
                            agents.claim_seconds("agent-50-step-per-step-saving"))
    assert r["saving_s"] == pytest.approx(50.0)
    assert r["saving_s"] < agents.claim_seconds("agent-50-step-saving") == 60.0


def test_seed_examples_table_holds_both_worked_examples():
    t = agents.seed_examples()
    assert t["example"].to_list() == ["seed 003", "seed 000"]
    assert t["steps"].to_list() == [30, 50]
    assert t["saving_per_step_s"].to_list() == [pytest.approx(0.2), pytest.approx(1.0)]
    assert t["task_model_saving_s"].to_list() == [pytest.approx(6.0), pytest.approx(50.0)]
    assert t["published_saving_s"].to_list() == [pytest.approx(6.0), pytest.approx(60.0)]


def test_published_call_ratios_from_seed_000():
    # gpt-oss-120b 8k/1k: E2E 1.80 s (GB200) vs 1.03 s (Jalapeño), TBT 1.87 ms vs 0.69 ms
    r = agents.published_call_ratios()
    assert r == {"e2e": pytest.approx(1.80 / 1.03), "tbt": pytest.approx(1.87 / 0.69)}


def test_saving_is_linear_in_steps_without_failures():
    slow, fast = agents.FixedLatency(0.5, 0.0), agents.FixedLatency(0.3, 0.0)
    for n in (1, 7, 30):
        assert agents.saving_s(task(steps=n, tool_time_s=2.0), slow, fast) == pytest.approx(0.2 * n)


def test_retry_case_hand_worked():
    # 3 steps; a call takes 1 s (TTFT 1 s, one output token after it at 0 s), then 1 s of tool; an attempt
    # is right with probability 0.8; 2 attempts per step.
    t = task(tool_time_s=1.0, step_success=0.8, max_attempts=2)
    r = agents.run_task(t, agents.FixedLatency(1.0, 0.0), power=power.PowerStack(1000.0))
    attempts = 1 + 0.2                         # second attempt with probability 0.2
    step_ok = 1 - 0.2 ** 2                     # 0.96
    reach = 1 + step_ok + step_ok ** 2         # steps 1, 2, 3 reached
    assert r.latency_s == pytest.approx(attempts * 2.0 * reach)          # 6.91584 s
    assert r.latency_s == pytest.approx(6.91584)
    assert r.completion_rate == pytest.approx(0.96 ** 3)                 # 0.884736
    assert r.first_pass_rate == pytest.approx(0.8 ** 3)                  # 0.512
    assert r.latency_first_pass_s == pytest.approx(6.0)
    assert r.chip_s == pytest.approx(attempts * 1.0 * reach)             # the tool does not hold the chip
    assert r.energy_total_j == pytest.approx(1000.0 * r.chip_s)
    kwh = 1000.0 * 3.45792 / 3.6e6
    assert r.effective_tasks_per_kwh == pytest.approx(0.512 * 0.884736 / kwh)
    assert r.decode_tokens == pytest.approx(2 * attempts * reach)


def test_deterministic_timeout_fails_every_attempt_and_stops_the_task():
    t = task(steps=5, timeout_s=2.5, max_attempts=3)
    r = agents.run_task(t, agents.FixedLatency(3.0, 0.0))
    assert r.completion_rate == 0.0 and r.first_pass_rate == 0.0
    assert r.latency_s == pytest.approx(3 * 2.5)        # three cut attempts of the first step, nothing after
    ok = agents.run_task(t, agents.FixedLatency(2.0, 0.0))
    assert ok.completion_rate == 1.0 and ok.latency_s == pytest.approx(10.0)


def test_lognormal_timeout_terms_against_numerical_integration():
    m, sigma, T = 2.0, 0.5, 2.5
    dist = stats.lognorm(s=sigma, scale=math.exp(math.log(m) - sigma ** 2 / 2))
    assert dist.mean() == pytest.approx(m)
    p, e_min = agents.timeout_terms(m, T, sigma)
    assert p == pytest.approx(dist.cdf(T))
    assert e_min == pytest.approx(integrate.quad(dist.sf, 0, T)[0], rel=1e-7)   # E[min(L, T)] = int_0^T P(L > x) dx
    assert agents.timeout_terms(m, math.inf, sigma) == (1.0, m)
    assert agents.timeout_terms(m, 1.0, 0.0) == (0.0, 1.0)


def test_faster_server_completes_more_tasks_under_a_tight_timeout():
    t = task(steps=30, timeout_s=1.0, max_attempts=3, latency_sigma=0.5)
    slow, fast = agents.run_task(t, agents.FixedLatency(1.0, 0.0)), agents.run_task(t, agents.FixedLatency(0.5, 0.0))
    assert fast.completion_rate > 0.99 > 0.5 > slow.completion_rate


def test_serving_point_without_prefix_cache_reproduces_evaluate(eff):
    chip = subject.jalapeno_chip("central")
    point = agents.ServingPoint(chip, jp.model("gpt-oss-120b"), eff, "jalapeno", 1, 1, 8)
    ctx, out = mean_request_length(8192), mean_request_length(1024)
    c = point.call(ctx, ctx, out)
    r = serving.evaluate(jp.model("gpt-oss-120b"), chip, serving.Layout(n_chips=1), serving.Workload(concurrency=8, isl=8192, osl=1024), eff=eff, stack="jalapeno")
    assert c.ttft_s == pytest.approx(float(r.ttft_s))
    assert c.tpot_s == pytest.approx(float(r.tpot_s))
    assert c.call_s == pytest.approx(float(r.e2e_s))      # E2E = TTFT + TPOT (OSL - 1)
    cached = point.call(ctx, 1024, out)                       # prefix cache: only the new tokens prefilled
    assert cached.ttft_s < c.ttft_s and cached.tpot_s < c.tpot_s


def test_serving_point_refuses_a_context_that_does_not_fit(eff):
    point = agents.ServingPoint(subject.jalapeno_chip("central"), jp.model("deepseek-r1"), eff, "jalapeno", 1, 1, 1)
    with pytest.raises(ValueError, match="does not hold the KV cache"):
        point.call(8192, 8192, 256)


def test_nominal_length_inverts_the_benchmark_mean():
    for tokens in (1.5, 100, 921.5, 7372.5, 40000):
        n = agents.nominal_length(tokens)
        assert mean_request_length(n) >= tokens > (mean_request_length(n - 1) if n > 1 else 0)
    assert agents.nominal_length(7372.5) == 8192


def test_operating_point_picks_the_highest_throughput_at_the_interactivity(fit):
    front = subject.jalapeno_frontier("gpt-oss-120b", "central", fit=fit)
    top = agents.operating_point(front)
    assert top["interactivity_tok_s_user"] == pytest.approx(float(front["interactivity_tok_s_user"].max()))
    p = agents.operating_point(front, 300.0)
    assert p["reached"] and p["interactivity_tok_s_user"] >= 300.0
    assert p["throughput_tok_s_chip"] == pytest.approx(
        float(front.filter(front["interactivity_tok_s_user"] >= 300.0)["throughput_tok_s_chip"].max()))
    assert not agents.operating_point(front, 1e6)["reached"]


def test_task_ratio_never_exceeds_the_call_ratio_without_timeouts(fit):
    tasks = [agents.profile(n, timeout_s=math.inf) for n in agents.PROFILES]
    t = agents.compounding_table(tasks, lambda k: agents.task_servers(k, jalapeno_fit=fit))
    first, last = t["call_ratio_first_step"].to_numpy(), t["call_ratio_last_step"].to_numpy()
    # a task is its calls plus the same tool time on both servers: its ratio lies between the worst call
    # ratio and the best one, pulled toward 1 by the tool time
    assert np.all(t["task_ratio"].to_numpy() <= np.maximum(np.maximum(first, last), 1.0) + 1e-9)
    assert np.all(t["task_ratio"].to_numpy() >= np.minimum(np.minimum(first, last), 1.0) - 1e-9)
    assert np.allclose(t["saving_s"], t["slow_latency_s"] - t["fast_latency_s"])


def test_published_servers_use_the_implied_ttft():
    pub = agents.published_servers()
    assert pub["jalapeno"].tpot_s == pytest.approx(0.69e-3)
    assert pub["jalapeno"].ttft_s == pytest.approx(1.03 - 0.69e-3 * 920.5)
    assert pub["gb200"].ttft_s == pytest.approx(1.80 - 1.87e-3 * 920.5)
    one = agents.AgentProfile("one call", steps=1, initial_context_tokens=8192, context_growth_tokens=0,
                              output_tokens=921.5)
    assert agents.run_task(one, pub["jalapeno"]).latency_s == pytest.approx(1.03)   # back to the published E2E


def test_energy_parts_follow_the_power_stack():
    stack = power.PowerStack(700.0, 900.0, 1.2)
    r = agents.run_task(task(), agents.FixedLatency(1.0, 0.0, chips_per_sequence=0.5), power=stack, usd_per_chip_hour=3.6)
    assert r.chip_s == pytest.approx(1.5)
    assert r.energy_j == pytest.approx({"accelerator_w": 1050.0, "host_network_w": 1350.0, "cooling_w": 480.0})
    assert r.energy_total_j == pytest.approx(1.5 * 1920.0)
    assert r.cost_usd == pytest.approx(1.5 / 3600 * 3.6)


def test_bad_profiles_and_names_are_refused():
    with pytest.raises(ValueError, match="steps must be an integer >= 1, got 0"):
        task(steps=0)
    with pytest.raises(ValueError, match="step_success must be in"):
        task(step_success=1.5)
    with pytest.raises(ValueError, match="output_tokens must be >= 2"):
        task(output_tokens=1)
    with pytest.raises(jp.UnknownNameError, match="valid agent profiles: short-tool-loop"):
        agents.profile("chat")
    with pytest.raises(jp.UnknownNameError, match="unknown profile field 'stepz'"):
        agents.profile("code-editing", stepz=3)
    with pytest.raises(ValueError, match="not a time unit"):
        agents.claim_seconds("gptoss-params")
    assert agents.profile("code-editing", steps=60).steps == 60


def test_profiles_contexts_and_prefill():
    t = agents.profile("long-context-research")
    ctx = t.contexts()
    assert ctx[0] == 8192 and ctx[-1] == 8192 + 2048 * 49
    assert list(t.prefill_tokens()[:2]) == [8192, 2048 - 512]  # the growth less the previous output, cached
    assert list(agents.profile(t, prefix_cache=False).prefill_tokens()) == list(ctx)


def test_reader_names_of_chips_and_servers():
    # data/chips.csv: "NVIDIA GB200 (Blackwell GPU in GB200 NVL72)", vendor NVIDIA; "OpenAI Jalapeño"
    assert specs.short_name("gb200") == "GB200"
    assert specs.short_name("jalapeno") == "Jalapeño"
    assert specs.short_name("mi355x") == "Instinct MI355X"
    assert specs.short_name("H100") == "H100 SXM"  # names are case-insensitive
    assert agents.server_name("gb200", "gb200") == "GB200"
    assert agents.server_name("gb200", "gb200 (max)") == "GB200 (at its fastest point)"
    with pytest.raises(jp.errors.UnknownNameError):
        specs.short_name("gb400")


def test_task_efficiency_is_first_pass_rate_times_tasks_completed_per_kwh():
    # one 2-step task on a fixed server, every attempt right with q = 0.9 and no timeout, 1 attempt:
    # p = c = 0.9^2 = 0.81. Each call: TTFT 1 s + TPOT 1 s x (2 - 1) = 2 s on 1 chip; step 2 runs with
    # probability 0.9, so chip time = 2 + 0.9 x 2 = 3.8 s; at 1,000 W accelerator only: W = 3,800 J
    # = 1.0556e-3 kWh; N = 0.81 / 1.0556e-3 = 767.37 tasks/kWh, E = 0.81 x 767.37 = 621.57 tasks/kWh
    t = task(steps=2, step_success=0.9)
    srv = {"jalapeno": agents.FixedLatency(1.0, 1.0, label="jalapeno"),
           "gb200": agents.FixedLatency(1.0, 1.0, label="gb200 (max)")}
    stack = power.PowerStack(accelerator_w=1000.0)
    df = agents.compare([t], srv, powers={"jalapeno": stack, "gb200": stack})
    eff = agents.task_efficiency(df)
    assert eff.columns == ["profile", "server_key", "chip", "first_pass_rate", "completed_tasks_per_kwh",
                           "effective_tasks_per_kwh"]
    assert eff["chip"].to_list() == ["Jalapeño", "GB200 (at its fastest point)"]
    row = eff.row(0, named=True)
    assert row["first_pass_rate"] == pytest.approx(0.81)
    assert row["completed_tasks_per_kwh"] == pytest.approx(0.81 / (3800 / 3.6e6))
    assert row["completed_tasks_per_kwh"] == pytest.approx(767.37, rel=1e-5)
    assert row["effective_tasks_per_kwh"] == pytest.approx(621.57, rel=1e-5)
    assert eff["effective_tasks_per_kwh"].to_list() == pytest.approx(df["effective_tasks_per_kwh"].to_list())


def test_cached_output_prefills_the_growth_less_the_previous_output(eff):
    # code-editing: g = 1,536 per step of which 1,024 are the previous output. The default, cached_output,
    # prefills g - d = 512, the rule of jalapeno.sessions (the output's KV was written while it was decoded),
    # and then the task model and a session agree call by call; cached_output=False (the count of the
    # numbers up to 0.9.2) prefills g
    from jalapeno import sessions
    c = agents.profile("code-editing")
    assert list(c.prefill_tokens()[:3]) == [16384, 512, 512]
    t = agents.profile(c, cached_output=False)
    assert list(t.prefill_tokens()[:3]) == [16384, 1536, 1536]
    assert list(agents.profile(c, prefix_cache=False).prefill_tokens()) == list(t.contexts())
    with pytest.raises(ValueError, match="context_growth_tokens must be >= output_tokens"):
        agents.profile(c, context_growth_tokens=512)
    point = agents.ServingPoint(subject.jalapeno_chip("central"), jp.model("gpt-oss-120b"), eff, "jalapeno", 1, 1, 8)
    short = agents.AgentProfile("short", steps=4, initial_context_tokens=4096, context_growth_tokens=1024,
                                output_tokens=256, tool_time_s=0.5, cached_output=True)
    task = agents.run_task(short, point)
    s = sessions.run_session(sessions.from_profile(short), point, sessions.PrefixCache())
    assert s.calls["uncached_tokens"].to_list() == list(task.steps["prefill_tokens"]) == [4096, 768, 768, 768]
    assert s.calls["ttft_s"].to_list() == pytest.approx(task.steps["ttft_s"].to_list(), rel=1e-12)
    assert s.latency_s == pytest.approx(task.latency_s, rel=1e-12)
    assert task.latency_s < agents.run_task(agents.profile(short, cached_output=False), point).latency_s


def test_a_growth_below_the_output_is_refused_only_where_a_cache_holds_the_output():
    # the growth counts the previous output, which a prefix cache holds: below it, the cached prefill is
    # undefined; without a cache every call prefills its whole context, and the growth may be anything
    with pytest.raises(ValueError, match=r"context_growth_tokens must be >= output_tokens \(256\) with a prefix cache"):
        agents.AgentProfile("t", steps=3, initial_context_tokens=8192, context_growth_tokens=100, output_tokens=256)
    plain = agents.AgentProfile("t", steps=3, initial_context_tokens=8192, context_growth_tokens=100, output_tokens=256,
                                prefix_cache=False)
    assert list(plain.prefill_tokens()) == [8192, 8292, 8392]
