"""Agent sessions (jalapeno.sessions) against hand-worked cases: a 3-turn session's cached and uncached
prefill tokens with and without a prefix cache, sub-agents joined at the slowest, eviction at a small
cache bound, the cache bound from the capacity plan, and the errors."""

import math

import numpy as np
import pytest

from jalapeno import agents, capacity_plans, sessions as S

# Hand-worked server: TTFT = 0.05 s + uncached tokens / 10,000 tok/s, TPOT 10 ms.
SERVER = S.PrefillRateServer(prefill_tokens_per_s=10_000.0, tpot_s=0.01, ttft_floor_s=0.05)


def three_turns() -> S.Session:
    """Turns of 2,000 / 500 / 300 new tokens and 200 / 150 / 100 output tokens, 1 s of tool after each."""
    return S.session("three turns", [(2000, 200), (500, 150), (300, 100)], tool_time_s=1.0)


def test_three_turn_session_cached_and_uncached_prefill_by_hand():
    """Contexts C_k = C_{k-1} + out_{k-1} + new_k: 2,000; 2,000 + 200 + 500 = 2,700; 2,700 + 150 + 300 = 3,150.

    With a prefix cache (unbounded) the previous context and output are cached (0; 2,200; 2,850) and only
    the new tokens are prefilled: 2,000, 500, 300 (2,800 in all; 5,050 cached). Without, every call
    prefills its whole context: 2,000, 2,700, 3,150 (7,850).

    Times, with the cache: TTFT 0.05 + 0.2 = 0.25, 0.05 + 0.05 = 0.10, 0.05 + 0.03 = 0.08 s; decode
    TPOT x (out - 1) = 1.99, 1.49, 0.99 s; calls 2.24, 1.59, 1.07 s; task 4.90 + 3 x 1 s of tool = 7.90 s.
    Without: TTFT 0.25, 0.32, 0.365 s; calls 2.24, 1.81, 1.355 s; task 8.405 s."""
    s = three_turns()
    cached = S.run_session(s, SERVER, S.PrefixCache())
    plain = S.run_session(s, SERVER)
    assert cached.calls["context_tokens"].to_list() == [2000, 2700, 3150]
    assert plain.calls["context_tokens"].to_list() == [2000, 2700, 3150]
    assert cached.calls["uncached_tokens"].to_list() == [2000, 500, 300]
    assert cached.calls["cached_tokens"].to_list() == [0, 2200, 2850]
    assert plain.calls["uncached_tokens"].to_list() == [2000, 2700, 3150]
    assert plain.calls["cached_tokens"].to_list() == [0, 0, 0]
    assert (cached.uncached_tokens, cached.cached_tokens, plain.uncached_tokens) == (2800, 5050, 7850)
    assert cached.cached_share == pytest.approx(5050 / 7850)
    assert cached.output_tokens == 450
    assert cached.calls["ttft_s"].to_list() == pytest.approx([0.25, 0.10, 0.08])
    assert cached.calls["decode_s"].to_list() == pytest.approx([1.99, 1.49, 0.99])
    assert cached.calls["call_s"].to_list() == pytest.approx([2.24, 1.59, 1.07])
    assert cached.calls["start_s"].to_list() == pytest.approx([0.0, 3.24, 5.83])
    assert cached.latency_s == pytest.approx(7.90)
    assert plain.calls["ttft_s"].to_list() == pytest.approx([0.25, 0.32, 0.365])
    assert plain.latency_s == pytest.approx(8.405)
    assert cached.p90_interactivity_tok_s_user == pytest.approx(100.0)   # 1 / 10 ms on every call


def test_think_time_is_on_the_critical_path():
    s = S.Session("think", (S.Turn(1000, 1, 0.0, 2.5), S.Turn(10, 1)))
    r = S.run_session(s, SERVER, S.PrefixCache())
    # 0.05 + 0.1 s, then 2.5 s of thinking, then 0.05 + 0.001 s (TTFT only: one output token)
    assert r.latency_s == pytest.approx(0.15 + 2.5 + 0.051)
    assert r.calls["uncached_tokens"].to_list() == [1000, 10]


def fan_out(tool_a_s: float) -> S.Session:
    """Parent: 1,000 new / 100 out; then sub-agents A (500 / 51, tool ``tool_a_s``) and B (800 / 101, tool
    0.5 s; then 200 / 51); then the parent's turn with their reports, 300 new / 100 out."""
    a = S.Session("A", (S.Turn(500, 51, tool_a_s),))
    b = S.Session("B", (S.Turn(800, 101, 0.5), S.Turn(200, 51)))
    return S.Session("parent", (S.Turn(1000, 100), S.FanOut((a, b)), S.Turn(300, 100)))


@pytest.mark.parametrize("tool_a_s, join_s", [(2.0, 2.55), (1.0, 2.10)])
def test_fan_out_joins_at_the_slower_sub_agent(tool_a_s, join_s):
    """Server: TTFT = uncached / 10,000 tok/s (no floor), TPOT 10 ms; with a prefix cache.

    Parent turn 1: TTFT 0.1 + 99 x 0.01 = 1.09 s. Sub-agent A: 0.05 + 0.50 + tool = 2.55 s (tool 2 s) or
    1.55 s (tool 1 s). Sub-agent B: turn 1 0.08 + 1.00 + 0.5 = 1.58 s; turn 2, context 800 + 101 + 200 =
    1,101, 901 cached, 200 prefilled: 0.02 + 0.50 = 0.52 s; 2.10 s. The join waits for the slower: 2.55 s
    (A) or 2.10 s (B). Parent turn 2: context 1,000 + 100 + 300 = 1,400, 1,100 cached, 300 prefilled:
    0.03 + 0.99 = 1.02 s. Task: 1.09 + join + 1.02 s = 4.66 s or 4.21 s, not the 6.76 s or 5.76 s of every call
    and tool in a row (calls 1.09 + 0.55 + 1.08 + 0.52 + 1.02 = 4.26 s, tools 2.5 s or 1.5 s)."""
    srv = S.PrefillRateServer(10_000.0, 0.01)
    r = S.run_session(fan_out(tool_a_s), srv, S.PrefixCache())
    assert r.latency_s == pytest.approx(1.09 + join_s + 1.02)
    calls = {(row["session"], row["turn"]): row for row in r.calls.iter_rows(named=True)}
    assert calls[("parent/A", 1)]["start_s"] == calls[("parent/B", 1)]["start_s"] == pytest.approx(1.09)
    assert calls[("parent/B", 2)]["start_s"] == pytest.approx(1.09 + 1.58)
    assert calls[("parent/B", 2)]["cached_tokens"] == 901 and calls[("parent/B", 2)]["uncached_tokens"] == 200
    assert calls[("parent", 2)]["start_s"] == pytest.approx(1.09 + join_s)
    assert (calls[("parent", 2)]["context_tokens"], calls[("parent", 2)]["uncached_tokens"]) == (1400, 300)
    assert r.uncached_tokens == 1000 + 500 + 800 + 200 + 300
    serial = float(r.calls["call_s"].sum()) + tool_a_s + 0.5
    assert serial == pytest.approx(6.76 if tool_a_s == 2.0 else 5.76)
    assert r.latency_s < serial


def test_forked_sub_agent_starts_from_the_parents_cached_context():
    # parent 1,000 / 100; a forked sub-agent adds 200 tokens to the parent's 1,100: context 1,300,
    # 1,100 cached, 200 prefilled; without fork it starts empty (context 200, all prefilled)
    sub = S.Session("sub", (S.Turn(200, 10),))
    for fork, ctx, cached in ((True, 1300, 1100), (False, 200, 0)):
        s = S.Session("p", (S.Turn(1000, 100), S.FanOut((sub,), fork=fork)))
        row = S.run_session(s, SERVER, S.PrefixCache()).calls.row(1, named=True)
        assert (row["context_tokens"], row["cached_tokens"], row["uncached_tokens"]) == (ctx, cached, 200)
    s = S.Session("p", (S.Turn(1000, 100), S.FanOut((sub,), fork=True)))
    assert S.run_session(s, SERVER).calls["uncached_tokens"].to_list() == [1000, 1300]   # no cache


def test_eviction_at_a_small_bound_re_prefills_past_the_bound():
    """Bound M = 2,500 tokens per session on the 3-turn session: after call 1 the session's KV is 2,200
    tokens (kept); call 2 prefills 500. After call 2 it is 2,850: the newest 350 are evicted and the first
    2,500 kept. Call 3 (context 3,150) prefills 3,150 - 2,500 = 650 (the 350 evicted + 300 new):
    TTFT 0.05 + 0.065 = 0.115 s, call 1.105 s, task 7.935 s.
    M = 1,000: calls 2 and 3 find 1,000 cached and prefill 1,700 and 2,150."""
    r = S.run_session(three_turns(), SERVER, S.PrefixCache(2500))
    assert r.calls["cached_tokens"].to_list() == [0, 2200, 2500]
    assert r.calls["uncached_tokens"].to_list() == [2000, 500, 650]
    assert r.calls["ttft_s"].to_list()[2] == pytest.approx(0.115)
    assert r.latency_s == pytest.approx(7.935)
    small = S.run_session(three_turns(), SERVER, S.PrefixCache(1000))
    assert small.calls["uncached_tokens"].to_list() == [2000, 1700, 2150]
    assert small.calls["cached_tokens"].to_list() == [0, 1000, 1000]
    t = S.compare_caches(three_turns(), SERVER, (math.inf, 2500, 1000))
    assert t["cache_tokens"].to_list() == [None, math.inf, 2500, 1000]
    assert t["uncached_tokens"].to_list() == [7850, 2800, 3150, 5850]


class ContextTpot:
    """TPOT grows with the context: 1e-5 s per token of context; TTFT 0."""

    def call(self, context_tokens, prefill_tokens, output_tokens):
        return S.CallTiming(0.0, 1e-5 * context_tokens)


def test_p90_interactivity_by_hand():
    # TPOT 20, 27, 31.5 ms (contexts 2,000, 2,700, 3,150); P90 by linear interpolation at rank
    # 0.9 x 2 = 1.8: 27 + 0.8 x 4.5 = 30.6 ms, so 1 / 30.6 ms = 32.68 tok/s/user
    r = S.run_session(three_turns(), ContextTpot(), S.PrefixCache())
    assert r.calls["tpot_s"].to_list() == pytest.approx([0.02, 0.027, 0.0315])
    assert r.p90_interactivity_tok_s_user == pytest.approx(1 / 0.0306)
    assert r.summary()["p90_interactivity_tok_s_user"] == pytest.approx(32.679739, rel=1e-6)


def test_agent_servers_serve_sessions():
    # agents.FixedLatency: the same TTFT and TPOT whatever the lengths
    r = S.run_session(three_turns(), agents.FixedLatency(0.5, 0.002), S.PrefixCache())
    assert r.latency_s == pytest.approx(3 * 0.5 + 0.002 * (199 + 149 + 99) + 3.0)


def test_from_profile_counts_the_previous_output_as_cached():
    """code-editing: c_0 = 16,384, growth g = 1,536 per step of which the previous output is 1,024: the
    session's contexts are the profile's c_0 + i g, and with the cache each later call prefills
    g - d = 512 tokens, as AgentProfile.prefill_tokens counts (its default, cached_output; without it,
    g = 1,536: the output prefilled again)."""
    p = agents.profile("code-editing")
    r = S.run_session(S.from_profile(p), agents.FixedLatency(1.0, 0.01), S.PrefixCache())
    assert np.allclose(r.calls["context_tokens"].to_numpy(), p.contexts())
    assert r.calls["uncached_tokens"].to_list()[:3] == [16384, 512, 512]
    assert list(p.prefill_tokens()[:3]) == [16384, 512, 512]
    assert list(agents.profile(p, cached_output=False).prefill_tokens()[:3]) == [16384, 1536, 1536]
    plain = S.run_session(S.from_profile(p), agents.FixedLatency(1.0, 0.01))
    assert np.allclose(plain.calls["uncached_tokens"].to_numpy(),
                       agents.profile(p, prefix_cache=False).prefill_tokens())
    with pytest.raises(ValueError, match="context_growth_tokens .512. is below output_tokens .1024"):
        S.from_profile(agents.profile(p, context_growth_tokens=512, cached_output=False))
    with pytest.raises(ValueError, match="context_growth_tokens must be >= output_tokens .1024. with a prefix cache .prefix_cache"):
        agents.profile(p, context_growth_tokens=512)


def test_cache_bound_from_the_capacity_plan():
    # gpt-oss-120b at fp4 on one GB200: the plan's largest batch B at 8,192 + 1,024 tokens means B
    # sequences of 9,216 tokens fit beside the weights, so B sessions may each keep >= 9,216 tokens, and
    # the bound is the largest count whose KV fits one share of (usable - weights) // B bytes
    plan = capacity_plans.capacity_plan("gb200", "gpt-oss-120b", precision="fp4", context_tokens=8192,
                                        decode_tokens=1024, chips=[1]).row(0, named=True)
    b = plan["largest_batch"]
    m = S.cache_tokens_per_session("gb200", "gpt-oss-120b", chips=1, sessions=b, precision="fp4")
    assert m >= 9216
    share = (plan["usable_bytes_per_chip"] - plan["weight_bytes_per_chip"]) // b
    from jalapeno import serving, specs
    model, chip = specs.model("gpt-oss-120b"), specs.chip("gb200")
    prec = serving.recipe(model, "fp4")
    assert capacity_plans.kv_bytes_per_sequence_per_chip(model, chip, prec, m, 1) <= share
    assert capacity_plans.kv_bytes_per_sequence_per_chip(model, chip, prec, m + 1, 1) > share
    assert S.cache_tokens_per_session("gb200", "gpt-oss-120b", chips=1, sessions=b + 1, precision="fp4") < 9216 + 64
    assert S.cache_tokens_per_session("gb200", "gpt-oss-120b", chips=1, sessions=1, precision="fp4") == \
        model.max_position_embeddings   # one session: the whole window fits
    with pytest.raises(ValueError, match="sessions must be an integer >= 1, got 0"):
        S.cache_tokens_per_session("gb200", "gpt-oss-120b", chips=1, sessions=0)


@pytest.mark.parametrize("make, match", [
    (lambda: S.Turn(-1, 10), "new_tokens must be a finite count >= 0, got -1"),
    (lambda: S.Turn(10, 0), "output_tokens must be a finite count >= 1, got 0"),
    (lambda: S.Turn(10, 10, tool_time_s=-0.5), "tool_time_s must be a finite time >= 0 .s., got -0.5"),
    (lambda: S.Turn(10, 10, think_time_s=math.nan), "think_time_s must be a finite time >= 0 .s., got nan"),
    (lambda: S.PrefixCache(0), "capacity_tokens must be a count > 0 .math.inf for unbounded., got 0"),
    (lambda: S.Session("empty", ()), "steps must be one or more Turn or FanOut, got \\(\\)"),
    (lambda: S.FanOut(()), "sessions must be one or more Session"),
    (lambda: S.PrefillRateServer(0, 0.01), "prefill_tokens_per_s must be > 0 .tokens/s., got 0"),
    (lambda: S.run_session(S.Session("nothing", (S.Turn(0, 5),)), SERVER), "turn 1: the call has no context"),
])
def test_bad_values_are_refused_by_name(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_closed_loop_by_hand():
    """The 3-turn session with the cache: L = 7.90 s, calls 4.90 s, prompt tokens 2,000 + 2,700 + 3,150 =
    7,850, output 450. 10 active sessions on 2 chips: 10 / 7.9 = 1.2658 tasks/s; (7,850 + 450) x 10 / 7.9 / 2
    = 5,253.2 tok/s per chip, 450 x 10 / 7.9 / 2 = 284.81 output tok/s per chip; 10 x 4.90 / 7.90 = 6.2025
    sequences in calls on average. Concurrency 8 takes 8 x 7.90 / 4.90 = 12.898 active sessions."""
    r = S.run_session(three_turns(), SERVER, S.PrefixCache())
    c = S.closed_loop(r, active_sessions=10, chips=2)
    assert c["tasks_per_s"] == pytest.approx(10 / 7.9)
    assert c["throughput_tok_s_chip"] == pytest.approx(8300 * 10 / 7.9 / 2)
    assert c["throughput_tok_s_chip"] == pytest.approx(5253.16, rel=1e-5)
    assert c["output_tok_s_chip"] == pytest.approx(284.81, rel=1e-4)
    assert c["running_sequences"] == pytest.approx(6.2025, rel=1e-4)
    assert S.sessions_for_concurrency(r, 8) == pytest.approx(12.898, rel=1e-4)
    with pytest.raises(ValueError, match="active_sessions must be a finite number > 0, got 0"):
        S.closed_loop(r, active_sessions=0, chips=2)


def test_session_on_the_serving_model_agrees_with_the_task_model():
    """On a serving-model point (Jalapeño, gpt-oss-120b, 1 chip, concurrency 8): without a cache a session
    of a profile's shape takes exactly the task model's latency (every call prefills its whole context in
    both); with the cache its later calls prefill g - d = 768 tokens, as the task model's do (its default,
    cached_output): the same TTFT call by call, and shorter than the task model's without cached_output
    (g = 1,024 prefilled)."""
    import jalapeno as jp
    from jalapeno import subject
    eff = subject.fit_jalapeno("central").efficiency
    point = agents.ServingPoint(subject.jalapeno_chip("central"), jp.model("gpt-oss-120b"), eff, "jalapeno", 1, 1, 8)
    p = agents.AgentProfile("serving", steps=4, initial_context_tokens=4096, context_growth_tokens=1024,
                            output_tokens=256, tool_time_s=0.5, prefix_cache=False)
    plain = S.run_session(S.from_profile(p), point)
    assert plain.latency_s == pytest.approx(agents.run_task(p, point).latency_s, rel=1e-12)
    task = agents.run_task(agents.profile(p, prefix_cache=True), point)
    cached = S.run_session(S.from_profile(p), point, S.PrefixCache())
    assert cached.calls["uncached_tokens"].to_list() == [4096, 768, 768, 768]
    ttft_task, ttft_session = task.steps["ttft_s"].to_numpy(), cached.calls["ttft_s"].to_numpy()
    assert ttft_session == pytest.approx(ttft_task, rel=1e-12)
    again = agents.run_task(agents.profile(p, prefix_cache=True, cached_output=False), point)
    assert np.all(ttft_session[1:] < again.steps["ttft_s"].to_numpy()[1:])
    assert cached.latency_s == pytest.approx(task.latency_s, rel=1e-12)
    assert task.latency_s < again.latency_s < plain.latency_s


def two_competing() -> list:
    """Two sessions of two turns: 2,000 new / 100 out, 10 s of tool; then 100 new / 100 out."""
    return [S.Session(name, (S.Turn(2000, 100, 10.0), S.Turn(100, 100))) for name in ("first", "second")]


def test_shared_cache_evicts_the_least_recently_used_session_by_hand():
    """Server: TTFT = uncached / 10,000 tok/s, TPOT 10 ms. The cache holds 3,000 tokens of idle sessions;
    "first" starts at 0 s, "second" at 0.5 s.

    Both first calls prefill 2,000 tokens: TTFT 0.2 + 99 x 0.01 = 1.19 s, ending at 1.19 and 1.69 s. At
    1.19 s "first"'s 2,100 tokens join the idle pool (fits); at 1.69 s "second"'s 2,100 join, 4,200 > 3,000:
    the least recently used, "first" (its call ended at 1.19 s), loses its newest 1,200 and keeps 900.
    At 11.19 s "first" (context 2,200) finds 900 cached and prefills 1,300: TTFT 0.13 s, call 1.12 s; at
    11.69 s "second" finds its 2,100 and prefills 100: call 0.01 + 0.99 = 1.00 s. Latencies: 1.19 + 10 +
    1.12 = 12.31 s and 1.19 + 10 + 1.00 = 12.19 s."""
    srv = S.PrefillRateServer(10_000.0, 0.01)
    first, second = S.shared_cache(two_competing(), srv, 3000, start_s=[0.0, 0.5])
    assert first.calls["uncached_tokens"].to_list() == [2000, 1300]
    assert first.calls["cached_tokens"].to_list() == [0, 900]
    assert second.calls["uncached_tokens"].to_list() == [2000, 100]
    assert first.calls["start_s"].to_list() == pytest.approx([0.0, 11.19])
    assert second.calls["start_s"].to_list() == pytest.approx([0.5, 11.69])
    assert (first.latency_s, second.latency_s) == (pytest.approx(12.31), pytest.approx(12.19))
    # a cache that holds both: only the new 100 tokens prefilled by either
    roomy = S.shared_cache(two_competing(), srv, 4200, start_s=[0.0, 0.5])
    assert [r.calls["uncached_tokens"].to_list() for r in roomy] == [[2000, 100], [2000, 100]]


def test_shared_cache_of_one_session_is_run_session_and_seeded_starts_repeat():
    srv = S.PrefillRateServer(10_000.0, 0.01, 0.05)
    for m in (1000, 2500, math.inf):
        alone = S.shared_cache([three_turns()], srv, m)[0]
        ref = S.run_session(three_turns(), srv, S.PrefixCache(m))
        assert alone.calls["uncached_tokens"].to_list() == ref.calls["uncached_tokens"].to_list()
        assert alone.latency_s == pytest.approx(ref.latency_s)
    a = S.shared_cache(two_competing(), srv, 3000, stagger_s=5.0, seed=7)
    b = S.shared_cache(two_competing(), srv, 3000, stagger_s=5.0, seed=7)
    starts = np.random.default_rng(7).uniform(0.0, 5.0, 2)
    assert [r.calls["start_s"][0] for r in a] == pytest.approx(list(starts))
    assert [r.calls.to_dicts() for r in a] == [r.calls.to_dicts() for r in b]
    with pytest.raises(ValueError, match="no FanOut"):
        S.shared_cache([fan_out(1.0)], srv, 3000)
    with pytest.raises(ValueError, match="start_s must be 2 finite times"):
        S.shared_cache(two_competing(), srv, 3000, start_s=[0.0])


def test_compare_profiles_by_hand():
    """A 3-step profile, c_0 = 1,000, g = 300 of which the output d = 100: contexts 1,000, 1,300, 1,600;
    with the cache 1,000 + 200 + 200 = 1,400 prefilled, without 3,900; a bound of 1,200 keeps 1,100 after
    call 1 (fits) and 1,200 after call 2 (of 1,400): 1,000 + 200 + 400 = 1,600."""
    p = agents.AgentProfile("small", steps=3, initial_context_tokens=1000, context_growth_tokens=300,
                            output_tokens=100)
    t = S.compare_profiles([p], {"hand": SERVER}, (math.inf, 1200))
    assert t["profile"].to_list() == ["small"] * 3 and t["server_key"].to_list() == ["hand"] * 3
    assert t["cache_tokens"].to_list() == [None, math.inf, 1200]
    assert t["uncached_tokens"].to_list() == [3900, 1400, 1600]
    # latency without a cache: TTFTs 0.05 + 0.10, 0.13, 0.16 s = 0.54 s, decode 3 x 0.99 s
    assert t["latency_s"].to_list()[0] == pytest.approx(0.54 + 2.97)


def test_illustrative_coding_agent_session_by_hand():
    """Main agent: C_1 = 12,000, C_k = 12,000 + 1,800 (k - 1) (300 out + 1,500 new), k = 1..20; without a
    cache it prefills 20 x 12,000 + 1,800 x 190 = 582,000 tokens, with one 12,000 + 19 x 1,500 = 40,500.
    Each of 3 sub-agents: C_j = 4,000 + 1,200 (j - 1), j = 1..5: 32,000 without, 8,000 with. In all
    678,000 and 64,500; cached share 613,500 / 678,000 = 0.90487."""
    s = S.coding_agent_session()
    plain, cached = S.run_session(s, SERVER), S.run_session(s, SERVER, S.PrefixCache())
    assert (plain.calls.height, cached.calls.height) == (35, 35)
    assert plain.uncached_tokens == 678_000 and cached.uncached_tokens == 64_500
    assert cached.cached_share == pytest.approx(613_500 / 678_000)
    main = cached.calls.filter(cached.calls["session"] == s.name)
    assert main["context_tokens"].to_list()[-1] == 12_000 + 1_800 * 19
    # the join: turn 11 of the main agent starts when the sub-agents (all alike) end
    sub = cached.calls.filter(cached.calls["session"].str.ends_with("sub-agent 1"))
    assert main["start_s"][10] == pytest.approx(sub["start_s"][4] + sub["call_s"][4] + 2.0)
