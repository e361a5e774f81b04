"""Agent sessions: a task as a graph of model calls (turns with a growing context, tool and think time,
parallel sub-agents that join), served with or without a prefix cache.

Agent traffic is sessions, not independent requests: InferenceX's AgentX workload, as issue 29 of this
book describes its published methodology, replays multi-turn coding-agent traces with growing contexts,
shared prefixes, tool and think time and sub-agents that fan out and join, and reports p90 interactivity,
TTFT, throughput per chip and cost. This module is the book's model of such a session, queue-free (each
call is served at the operating point the server stands for): one session (:func:`run_session`), closed-loop
concurrency in active sessions (:func:`closed_loop`), and competing sessions sharing one cache
(:func:`shared_cache`).

The session (tokens are counts, times in s):

- A :class:`Session` is a sequence of steps, each a :class:`Turn` or a :class:`FanOut`. Turn ``k``
  appends ``new_k`` tokens (the user's text, the tool's result, the sub-agents' reports) to the context
  and calls the model, which decodes ``out_k`` tokens; then the tool runs (``tool_time_s``) and the agent
  or user thinks (``think_time_s``) before the next step. The context of call ``k`` is
  ``C_k = C_{k-1} + out_{k-1} + new_k`` (``C_0 = new_0``): the previous output stays in the context.
- A :class:`FanOut` starts ``k`` sub-sessions at once, each with its own turns (and its own fan-outs);
  the parent's next step starts when the slowest has finished (the join). A sub-session starts from an
  empty context, or, with ``fork=True``, from the parent's context so far (``C + out`` of the parent's last
  call, cached as far as the parent's cache holds it). What the sub-agents report back is the
  ``new_tokens`` of the parent's next turn (the caller states it).

The prefix cache (SGLang's RadixAttention; vLLM's automatic prefix caching): a serving engine prefills
only the tokens of a prompt its cache does not hold; the KV of the cached prefix is reused. The model's own
output from the previous call is already there, its KV written while it was decoded. So at turn ``k``:

- without a cache, ``uncached_k = C_k`` and ``cached_k = 0``;
- with a cache that holds ``H_{k-1}`` tokens of the session after call ``k-1``,
  ``cached_k = H_{k-1}`` and ``uncached_k = C_k - H_{k-1}``; after call ``k`` the session's KV is
  ``C_k + out_k`` tokens and the cache keeps ``H_k = min(M, C_k + out_k)`` of them.
- ``M`` (:attr:`PrefixCache.capacity_tokens`) is the bound: the tokens of KV a session may keep between its
  calls, from the KV memory the capacity plan leaves per chip after the weights, shared by the active
  sessions (:func:`cache_tokens_per_session`). Unbounded (``M = inf``), ``uncached_k = new_k`` after the
  first call: the issue's rule.
- Eviction beyond the bound is least-recently-used, and for one session it removes the newest tokens
  first: a prefix is reusable only from its first token (vLLM hashes each block with all the tokens before
  it; RadixAttention matches from the root of its tree), SGLang's radix cache evicts leaves only (in LRU
  order), and vLLM's design breaks an LRU tie by freeing the block with the longer prefix first; a call's
  blocks are all used at the same time. So the first ``M`` tokens stay and everything past them must be
  prefilled again at the next call (``uncached_k = C_k - M`` once ``C_{k-1} + out_{k-1} >= M``).
- Granularity: tokens (RadixAttention's default of one token per page); vLLM caches whole blocks (16 tokens
  by default), up to a block less, which is not modelled. The last sampled token of a call is counted as
  cached (engines write its KV only when it is fed back, one token per call: not modelled either).
- Each sub-session has a cache of its own bound ``M``; the parent's cache is not evicted while its
  sub-agents run (each session's bound is its own share).

Per call (a row of :attr:`SessionResult.calls`), from a *server* with a method
``call(context_tokens, prefill_tokens, output_tokens)`` returning ``ttft_s`` and ``tpot_s``
(:class:`jalapeno.agents.ServingPoint`: the serving model at a frontier operating point, whose TTFT is the
prefill of the uncached tokens plus one decode step and the request latency outside the chip, its floor;
:class:`jalapeno.agents.FixedLatency`; or :class:`PrefillRateServer` for hand-worked cases):

- ``ttft_s`` (queue-free), ``decode_s = TPOT (out - 1)`` and ``call_s = TTFT + decode_s`` (the benchmark's
  E2E convention, :mod:`jalapeno.metrics`: the first token comes with the TTFT);
- interactivity ``1 / TPOT`` (tok/s/user).

Per session (:class:`SessionResult`): task latency, the sum of the calls, tools and thinks along the critical
path (sub-agents in parallel, each fan-out as long as its slowest sub-session); total cached, uncached
(prefilled) and output tokens over every call, sub-agents included; and the p90 interactivity of its calls,
``1 / P90(TPOT)`` (the interactivity 90 % of its calls reach or beat; the percentile by linear
interpolation, numpy's default and that of vLLM's ``benchmark_serving`` percentiles).

Deterministic: the one random draw is :func:`shared_cache`'s start times, from a stated seed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from . import capacity_plans, serving, specs
from .specs import ChipSpec, ModelSpec


def _check(owner: str, name: str, value, ok: bool, want: str) -> None:
    if not ok:
        raise ValueError(f"{owner}: {name} must be {want}, got {value!r}")


def _finite_nonneg(x) -> bool:
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and math.isfinite(x) and x >= 0


@dataclass(frozen=True)
class Turn:
    """One turn of a session: ``new_tokens`` appended to the context before the call (user text, tool
    result, sub-agents' reports; >= 0), ``output_tokens`` the call decodes (>= 1), then ``tool_time_s``
    of tool execution and ``think_time_s`` before the next step (s, >= 0). ValueError naming a bad value."""

    new_tokens: float
    output_tokens: float
    tool_time_s: float = 0.0
    think_time_s: float = 0.0

    def __post_init__(self):
        _check("turn", "new_tokens", self.new_tokens, _finite_nonneg(self.new_tokens), "a finite count >= 0")
        _check("turn", "output_tokens", self.output_tokens,
               _finite_nonneg(self.output_tokens) and self.output_tokens >= 1, "a finite count >= 1")
        for name in ("tool_time_s", "think_time_s"):
            v = getattr(self, name)
            _check("turn", name, v, _finite_nonneg(v), "a finite time >= 0 (s)")


@dataclass(frozen=True)
class FanOut:
    """Sub-agents: ``sessions`` (at least one :class:`Session`) start together and are joined before the
    parent's next step (the join waits for the slowest). ``fork``: each starts from the parent's context
    (and cache) instead of an empty one."""

    sessions: tuple
    fork: bool = False

    def __post_init__(self):
        object.__setattr__(self, "sessions", tuple(self.sessions))
        _check("fan-out", "sessions", self.sessions,
               len(self.sessions) >= 1 and all(isinstance(s, Session) for s in self.sessions),
               "one or more Session")


@dataclass(frozen=True)
class Session:
    """An agent session: ``name`` and ``steps``, a sequence of :class:`Turn` and :class:`FanOut`. Its first
    call must see a context of at least one token: the first turn (when no forked fan-out comes before it)
    brings ``new_tokens >= 1``. ValueError naming a bad value."""

    name: str
    steps: tuple = field(default_factory=tuple)

    def __post_init__(self):
        object.__setattr__(self, "steps", tuple(self.steps))
        _check(f"session {self.name!r}", "steps", self.steps,
               len(self.steps) >= 1 and all(isinstance(s, (Turn, FanOut)) for s in self.steps),
               "one or more Turn or FanOut")

    def turns(self) -> list[Turn]:
        """This session's own turns (not its sub-agents'), in order."""
        return [s for s in self.steps if isinstance(s, Turn)]


def session(name: str, turns, *, tool_time_s: float = 0.0, think_time_s: float = 0.0) -> Session:
    """A session of plain turns from ``(new_tokens, output_tokens)`` pairs (or 4-tuples with the tool and
    think times, s), the same ``tool_time_s`` and ``think_time_s`` for the pairs."""
    steps = [Turn(*t) if len(t) == 4 else Turn(t[0], t[1], tool_time_s, think_time_s) for t in turns]
    return Session(name, tuple(steps))


def from_profile(profile) -> Session:
    """The session of an agent task of :class:`jalapeno.agents.AgentProfile` (read by its fields: this module
    sits beside :mod:`jalapeno.agents`, not above it), on the first attempt of every step: ``steps`` turns,
    the first bringing ``initial_context_tokens``, each later one the step's growth less the previous
    output, ``context_growth_tokens - output_tokens`` (the profile's growth ``g`` counts the previous
    step's output and the tool's result; the output is already in the context, so only the rest is new),
    each decoding ``output_tokens`` and followed by ``tool_time_s``. Its contexts are the profile's
    ``c_0 + i g``. ValueError when ``g`` is below the output (the growth could not hold it)."""
    g, d = profile.context_growth_tokens, profile.output_tokens
    if profile.steps > 1 and g < d:
        raise ValueError(f"agent profile {profile.name!r}: context_growth_tokens ({g!r}) is below output_tokens "
                         f"({d!r}); the growth counts the previous output, so it cannot be smaller")
    turns = [Turn(profile.initial_context_tokens if i == 0 else g - d, d, profile.tool_time_s)
             for i in range(profile.steps)]
    return Session(profile.name, tuple(turns))



def coding_agent_session(*, sub_agents: int = 3, tool_time_s: float = 2.0, fork: bool = False) -> Session:
    """An illustrative coding-agent session (hypothetical: the book sets this shape itself, like
    :data:`jalapeno.agents.PROFILES`; not a trace of InferenceX's AgentX): 20 turns of the main agent, the
    first bringing 12,000 tokens (system prompt, tool definitions, the task, files), each later one 1,500
    (tool results; after the fan-out, the sub-agents' reports), every call decoding 300 tokens and followed
    by ``tool_time_s``; after turn 10, ``sub_agents`` sub-agents of 5 turns each (4,000 tokens first, then
    1,000; 200 out; the same tool time), joined before turn 11."""
    main = [Turn(12_000 if k == 0 else 1_500, 300, tool_time_s) for k in range(20)]
    subs = tuple(Session(f"sub-agent {i + 1}", tuple(Turn(4_000 if j == 0 else 1_000, 200, tool_time_s)
                                                     for j in range(5))) for i in range(sub_agents))
    steps = main[:10] + ([FanOut(subs, fork=fork)] if sub_agents else []) + main[10:]
    return Session("coding agent (illustrative)", tuple(steps))

@dataclass(frozen=True)
class PrefixCache:
    """A prefix cache keeping up to ``capacity_tokens`` tokens of KV per session between its calls (``inf``:
    unbounded; > 0). The module docstring states the accounting and the eviction rule."""

    capacity_tokens: float = math.inf

    def __post_init__(self):
        _check("prefix cache", "capacity_tokens", self.capacity_tokens,
               isinstance(self.capacity_tokens, (int, float, np.integer, np.floating))
               and not isinstance(self.capacity_tokens, bool) and self.capacity_tokens > 0,
               "a count > 0 (math.inf for unbounded)")


@dataclass(frozen=True)
class CallTiming:
    """A call's TTFT and TPOT (s)."""

    ttft_s: float
    tpot_s: float


@dataclass(frozen=True)
class PrefillRateServer:
    """A server for hand-worked cases: ``TTFT = ttft_floor_s + uncached tokens / prefill_tokens_per_s`` and
    a constant ``tpot_s`` (s; tokens/s). The floor stands for what a TTFT holds besides the prefill (a
    decode step, the request's latency outside the chip)."""

    prefill_tokens_per_s: float
    tpot_s: float
    ttft_floor_s: float = 0.0
    label: str = "prefill-rate server"

    def __post_init__(self):
        _check("server", "prefill_tokens_per_s", self.prefill_tokens_per_s,
               self.prefill_tokens_per_s > 0, "> 0 (tokens/s)")
        _check("server", "tpot_s", self.tpot_s, self.tpot_s > 0, "> 0 (s)")
        _check("server", "ttft_floor_s", self.ttft_floor_s, self.ttft_floor_s >= 0, ">= 0 (s)")

    def call(self, context_tokens: float, prefill_tokens: float, output_tokens: float) -> CallTiming:
        return CallTiming(self.ttft_floor_s + prefill_tokens / self.prefill_tokens_per_s, self.tpot_s)


@dataclass(frozen=True)
class SessionResult:
    """A session served: ``calls`` (one row per call, sub-agents' included: ``session`` the path of names,
    ``turn`` its index in that session from 1, ``start_s`` on the session's clock, ``context_tokens``,
    ``cached_tokens``, ``uncached_tokens``, ``output_tokens``, ``ttft_s``, ``tpot_s``, ``decode_s``,
    ``call_s``, ``interactivity_tok_s_user``, ``tool_time_s``, ``think_time_s``), ``latency_s`` (the
    critical path, s) and the token totals."""

    name: str
    calls: pl.DataFrame
    latency_s: float

    @property
    def uncached_tokens(self) -> float:
        """Tokens prefilled over every call (the prefill work)."""
        return float(self.calls["uncached_tokens"].sum())

    @property
    def cached_tokens(self) -> float:
        """Prompt tokens served from the cache over every call."""
        return float(self.calls["cached_tokens"].sum())

    @property
    def output_tokens(self) -> float:
        return float(self.calls["output_tokens"].sum())

    @property
    def cached_share(self) -> float:
        """Cached over all prompt tokens of the session's calls (0 to 1)."""
        total = self.cached_tokens + self.uncached_tokens
        return self.cached_tokens / total

    @property
    def p90_interactivity_tok_s_user(self) -> float:
        """``1 / P90(TPOT)`` over the calls (tok/s/user; linear interpolation)."""
        return 1.0 / float(np.percentile(self.calls["tpot_s"].to_numpy(), 90))

    def summary(self) -> dict[str, object]:
        """One row: ``session``, ``calls``, ``latency_s``, ``uncached_tokens``, ``cached_tokens``,
        ``output_tokens``, ``cached_share``, ``p90_interactivity_tok_s_user``, ``mean_ttft_s``."""
        return {"session": self.name, "calls": self.calls.height, "latency_s": self.latency_s,
                "uncached_tokens": self.uncached_tokens, "cached_tokens": self.cached_tokens,
                "output_tokens": self.output_tokens, "cached_share": self.cached_share,
                "p90_interactivity_tok_s_user": self.p90_interactivity_tok_s_user,
                "mean_ttft_s": float(self.calls["ttft_s"].mean())}


def _run(s: Session, server, cache: PrefixCache | None, path: str, t0: float, context: float, held: float,
         rows: list) -> float:
    """Serve ``s`` from time ``t0`` with ``context`` tokens (its KV, including the last output) and ``held``
    of them cached; append its calls to ``rows``; return its end time."""
    t, k = t0, 0
    for step in s.steps:
        if isinstance(step, FanOut):
            ends = []
            for i, sub in enumerate(step.sessions):
                start_ctx, start_held = (context, held) if step.fork else (0.0, 0.0)
                ends.append(_run(sub, server, cache, f"{path}/{sub.name or i + 1}", t, start_ctx, start_held, rows))
            t = max(ends)
            continue
        k += 1
        ctx = context + step.new_tokens
        if not ctx >= 1:
            raise ValueError(f"session {path!r}, turn {k}: the call has no context (new_tokens 0 and nothing before)")
        cached = min(held, ctx) if cache is not None else 0.0
        uncached = ctx - cached
        c = server.call(float(ctx), float(uncached), float(step.output_tokens))
        decode = c.tpot_s * (step.output_tokens - 1)
        call = c.ttft_s + decode
        rows.append({"session": path, "turn": k, "start_s": t, "context_tokens": float(ctx),
                     "cached_tokens": float(cached), "uncached_tokens": float(uncached),
                     "output_tokens": float(step.output_tokens), "ttft_s": float(c.ttft_s), "tpot_s": float(c.tpot_s),
                     "decode_s": float(decode), "call_s": float(call),
                     "interactivity_tok_s_user": 1.0 / c.tpot_s if c.tpot_s > 0 else math.inf,
                     "tool_time_s": float(step.tool_time_s), "think_time_s": float(step.think_time_s)})
        t += call + step.tool_time_s + step.think_time_s
        context = ctx + step.output_tokens
        held = min(cache.capacity_tokens, context) if cache is not None else 0.0
    return t


def run_session(s: Session, server, cache: PrefixCache | None = None) -> SessionResult:
    """Serve session ``s`` on ``server`` (an object with ``call(context_tokens, prefill_tokens,
    output_tokens)`` returning ``ttft_s`` and ``tpot_s``: :class:`jalapeno.agents.ServingPoint`,
    :class:`jalapeno.agents.FixedLatency`, :class:`PrefillRateServer`), with the prefix cache ``cache``
    (None: no cache, every call prefills its whole context). The accounting and the formulas: the module
    docstring. Returns a :class:`SessionResult`; ValueError when a call does not fit the server."""
    if not isinstance(s, Session):
        raise ValueError(f"run_session needs a Session, got {s!r}")
    rows: list = []
    end = _run(s, server, cache, s.name, 0.0, 0.0, 0.0, rows)
    return SessionResult(s.name, pl.DataFrame(rows), end)


def compare_caches(s: Session, server, capacities_tokens=(math.inf,)) -> pl.DataFrame:
    """:meth:`SessionResult.summary` of ``s`` on ``server`` without a cache and with a cache of each bound
    in ``capacities_tokens`` (tokens per session), one row each, with ``cache_tokens`` (null: no cache)."""
    rows = [{"cache_tokens": None, **run_session(s, server).summary()}]
    for m in capacities_tokens:
        rows.append({"cache_tokens": float(m), **run_session(s, server, PrefixCache(m)).summary()})
    return pl.DataFrame(rows, schema_overrides={"cache_tokens": pl.Float64})


def cache_tokens_per_session(chip: ChipSpec | str, model: ModelSpec | str, *, chips: int, sessions: int,
                             precision: str = "fp8", kv_precision: str | None = None) -> int:
    """The bound ``M`` of a session's prefix cache (tokens): the KV memory a ``chips``-chip slice leaves per
    chip once the weights are in (:mod:`jalapeno.capacity_plans`: ``floor(HBM x u) - weights per chip``),
    shared equally by ``sessions`` active sessions, as the most tokens whose KV per chip
    (:func:`jalapeno.capacity_plans.kv_bytes_per_sequence_per_chip`, the serving model's KV sharding) fits
    in one share; at most the model's context window. 0 when the weights leave no room for a token.
    ValueError for a slice or session count that is not a positive integer."""
    chip = chip if isinstance(chip, ChipSpec) else specs.chip(chip)
    model = model if isinstance(model, ModelSpec) else specs.model(model)
    for name, v in (("chips", chips), ("sessions", sessions)):
        _check("cache bound", name, v, isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1,
               "an integer >= 1")
    prec = serving.recipe(model, precision)
    if kv_precision is not None:
        specs.bytes_per_value(kv_precision)
        prec = (prec[0], prec[1], kv_precision)
    free = capacity_plans.usable_bytes_per_chip(chip) - capacity_plans.weight_bytes_per_chip(model, prec, int(chips))
    share = free // int(sessions)

    def fits(n: int) -> bool:
        return capacity_plans.kv_bytes_per_sequence_per_chip(model, chip, prec, n, int(chips)) <= share

    top = int(model.max_position_embeddings or 1 << 24)
    if share <= 0 or not fits(1):
        return 0
    if fits(top):
        return top
    lo, hi = 1, top  # fits(lo), not fits(hi): KV bytes grow with the tokens
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def closed_loop(result: SessionResult, *, active_sessions: float, chips: float) -> dict[str, float]:
    """Closed-loop serving of ``active_sessions`` copies of a session (AgentX counts concurrency as active
    sessions; each starts its next task when one ends) on ``chips`` chips, queue-free (the server's TTFT and
    TPOT are those of its operating point, whatever the load). By Little's law, with ``L`` the task latency
    (s): tasks per second ``A / L``; tokens per second per chip ``A (prompt + output tokens) / L / chips``,
    prompt tokens counted cached or not and output tokens (the benchmark's throughput per GPU counts input
    and output), and output tokens alone; the sequences decoding or prefilling on average,
    ``A sum(call_s) / L`` (compare with the operating point's concurrency: :func:`sessions_for_concurrency`).
    ValueError for a non-positive count."""
    for name, v in (("active_sessions", active_sessions), ("chips", chips)):
        _check("closed loop", name, v, _finite_nonneg(v) and v > 0, "a finite number > 0")
    a, lat = float(active_sessions), result.latency_s
    prompt = result.cached_tokens + result.uncached_tokens
    return {"tasks_per_s": a / lat,
            "throughput_tok_s_chip": a * (prompt + result.output_tokens) / lat / chips,
            "output_tok_s_chip": a * result.output_tokens / lat / chips,
            "running_sequences": a * float(result.calls["call_s"].sum()) / lat}


def sessions_for_concurrency(result: SessionResult, concurrency: float) -> float:
    """The active sessions that keep ``concurrency`` sequences in calls on average (closed loop, Little's
    law): ``B L / sum(call_s)``; tool and think time leave a session's slot to others, so more sessions
    than sequences are active."""
    _check("closed loop", "concurrency", concurrency, _finite_nonneg(concurrency) and concurrency > 0,
           "a finite number > 0")
    return float(concurrency) * result.latency_s / float(result.calls["call_s"].sum())


def shared_cache(sessions_: list[Session] | tuple, server, capacity_tokens: float, *, start_s=None,
                 stagger_s: float = 0.0, seed: int = 0) -> list[SessionResult]:
    """Competing sessions sharing one prefix cache of ``capacity_tokens`` tokens (> 0), simulated event by
    event, deterministic: sessions of plain turns (no :class:`FanOut`), served queue-free on ``server``.

    Start times: ``start_s`` (one per session, s), or drawn uniformly from ``[0, stagger_s)`` with numpy's
    ``default_rng(seed)`` (``stagger_s = 0``: all at 0). The cache: a call's KV is held while it runs (it is
    in the running batch the capacity plan sizes); the bound is on the KV of the sessions between their
    calls (the idle pool). A call starts with the tokens its session has in the pool cached
    (``cached = min(H, C_k)``) and takes them out of the pool; when it ends its session's KV, ``C_k + out_k``
    tokens, joins the pool and the pool is trimmed to the bound, least recently used session first (the
    earliest end of a last call, when its KV was last written; ties to the lower index), newest tokens first within it (the rule of the
    module docstring). Events at the same time: call ends before call starts, then by session index.
    One session with ``capacity_tokens = M`` gives :func:`run_session` with ``PrefixCache(M)``.

    Returns one :class:`SessionResult` per session, in order: its calls' ``start_s`` on the shared clock,
    its ``latency_s`` from its start to the end of its last turn. ValueError for a fan-out, a bad bound or
    start times that do not match the sessions."""
    import heapq

    sessions_ = list(sessions_)
    _check("shared cache", "sessions", sessions_, len(sessions_) >= 1 and all(
        isinstance(s, Session) and all(isinstance(t, Turn) for t in s.steps) for s in sessions_),
        "one or more Session of plain turns (no FanOut)")
    PrefixCache(capacity_tokens)  # the bound's check
    n = len(sessions_)
    if start_s is None:
        _check("shared cache", "stagger_s", stagger_s, _finite_nonneg(stagger_s), "a finite time >= 0 (s)")
        starts = np.random.default_rng(seed).uniform(0.0, stagger_s, n) if stagger_s > 0 else np.zeros(n)
    else:
        starts = np.asarray(start_s, dtype=float)
        _check("shared cache", "start_s", start_s, starts.shape == (n,) and bool(np.all(np.isfinite(starts))),
               f"{n} finite times (s), one per session")
    context, pool, last_use, ends = [0.0] * n, {}, [0.0] * n, [0.0] * n
    rows: list[list] = [[] for _ in range(n)]
    events = [(float(starts[i]), 1, i, 0) for i in range(n)]  # (time, 0 end / 1 start, session, turn)
    heapq.heapify(events)
    while events:
        t, kind, i, k = heapq.heappop(events)
        turn = sessions_[i].steps[k]
        if kind == 1:
            ctx = context[i] + turn.new_tokens
            if not ctx >= 1:
                raise ValueError(f"session {sessions_[i].name!r}, turn {k + 1}: the call has no context")
            cached = min(pool.pop(i, 0.0), ctx)
            c = server.call(float(ctx), float(ctx - cached), float(turn.output_tokens))
            decode = c.tpot_s * (turn.output_tokens - 1)
            call = c.ttft_s + decode
            rows[i].append({"session": sessions_[i].name, "turn": k + 1, "start_s": t, "context_tokens": float(ctx),
                            "cached_tokens": float(cached), "uncached_tokens": float(ctx - cached),
                            "output_tokens": float(turn.output_tokens), "ttft_s": float(c.ttft_s),
                            "tpot_s": float(c.tpot_s), "decode_s": float(decode), "call_s": float(call),
                            "interactivity_tok_s_user": 1.0 / c.tpot_s if c.tpot_s > 0 else math.inf,
                            "tool_time_s": float(turn.tool_time_s), "think_time_s": float(turn.think_time_s)})
            context[i] = ctx + turn.output_tokens
            heapq.heappush(events, (t + call, 0, i, k))
            continue
        pool[i], last_use[i] = context[i], t
        excess = sum(pool.values()) - capacity_tokens
        for j in sorted(pool, key=lambda j: (last_use[j], j)):
            if excess <= 0:
                break
            cut = min(pool[j], excess)
            pool[j] -= cut
            excess -= cut
        nxt = t + turn.tool_time_s + turn.think_time_s
        if k + 1 < len(sessions_[i].steps):
            heapq.heappush(events, (nxt, 1, i, k + 1))
        else:
            ends[i] = nxt
    return [SessionResult(s.name, pl.DataFrame(rows[i]), ends[i] - float(starts[i])) for i, s in enumerate(sessions_)]


def compare_profiles(profiles, servers: dict, capacities_tokens=(math.inf,)) -> pl.DataFrame:
    """The agent task shapes of :class:`jalapeno.agents.AgentProfile` as sessions (:func:`from_profile`, the
    first attempt of every step) on each server of ``servers`` (key -> server, or a function of the
    profile returning such a dict, as :func:`jalapeno.agents.task_servers`), without a cache and with a
    cache of each bound of ``capacities_tokens``: one row each, ``profile``, ``server_key``,
    ``cache_tokens`` (null: no cache) and :meth:`SessionResult.summary`'s columns."""
    rows = []
    for p in profiles:
        srv = servers(p) if callable(servers) else servers
        s = from_profile(p)
        for key, server in srv.items():
            for r in compare_caches(s, server, capacities_tokens).iter_rows(named=True):
                rows.append({"profile": p.name, "server_key": key, **r})
    return pl.DataFrame(rows, schema_overrides={"cache_tokens": pl.Float64})
