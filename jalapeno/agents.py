"""Agent tasks: N dependent steps, each a model call (prefill of a growing context, a decode of some
length) followed by a tool call, with timeouts and retries. Task latency, tokens, chip time, energy and
cost per task, and the seeds' effective task efficiency.

The task model (all times in s, SI units):

- Step ``i`` (``i = 0 .. N-1``) runs with a context of ``c_i = c_0 + i g`` tokens (``g``: tokens added per
  step, the previous step's output and tool result). With prefix caching (the KV cache of the context
  kept from the previous step, as Jalapeño's "KV cache stays local" design intends) the call prefills
  ``c_0`` at the first step and ``g - d`` after; without it, the whole context. ``g`` counts the previous
  step's ``d`` output tokens, whose KV a serving engine with a prefix cache already holds (written while
  they were decoded: SGLang's RadixAttention, vLLM's automatic prefix caching), so a step prefills only
  the rest (``cached_output``, the default since 0.10.0, the rule of :mod:`jalapeno.sessions`, which
  models sessions, sub-agents and a bounded cache; ``cached_output=False`` re-prefills the output, the
  count of the book's numbers up to 0.9.2).
- The call takes ``m_i = TTFT_i + TPOT_i (d - 1)`` for ``d`` output tokens (the benchmark's E2E
  convention, :mod:`jalapeno.metrics`). TTFT and TPOT come from a *server*: :class:`FixedLatency`
  (constants, e.g. the published numbers) or :class:`ServingPoint` (the serving model of
  :mod:`jalapeno.serving` at one frontier operating point, evaluated at each step's lengths).
- The call's latency is ``m_i`` (``latency_sigma = 0``) or lognormal with mean ``m_i`` and shape
  ``sigma``. A call longer than the timeout ``T`` is cut at ``T``; the attempt then fails. A call that
  returns is followed by the tool (``t`` s) and succeeds with probability ``q`` (the step's success
  rate). Per attempt: ``p_i = P(L <= T)``, ``s_i = q p_i``, expected time
  ``a_i = E[min(L, T)] + t p_i`` with ``E[min(L, T)] = m Phi((ln T - mu - sigma^2) / sigma) + T (1 - Phi((ln T - mu) / sigma))``,
  ``mu = ln m - sigma^2 / 2`` (the lognormal's partial expectation).
- A step makes up to ``K`` attempts: it succeeds with ``S_i = 1 - (1 - s_i)^K`` after
  ``A_i = sum_{k<K} (1 - s_i)^k`` attempts on average; a step that fails ``K`` times fails the task.
  Steps depend on each other, so step ``i`` runs only if all before it succeeded:
  ``R_i = prod_{j<i} S_j``. Attempts are independent, so expected values add exactly:
  task latency ``E[T] = sum_i R_i A_i a_i``; completion rate ``prod_i S_i``; first-pass rate
  ``prod_i s_i`` (every step right at its first attempt, no timeout).
- While a call runs, the sequence holds ``chips / concurrency`` chips of its worker (the worker serves
  ``concurrency`` sequences at once); chip time per task ``sum_i R_i A_i E[min(L_i, T)] chips/conc``;
  energy = chip time x power per chip (:class:`jalapeno.power.PowerStack`: accelerator, host and
  network, cooling); cost = chip hours x price per chip-hour. Tokens per task count each attempt's
  prefill and output tokens, a cut attempt in proportion ``E[min(L, T)] / m``.
- Effective task efficiency, as seed 003 defines it: first-pass rate x tasks completed / (accelerator
  + host + network + cooling energy), i.e. ``first_pass x completion / E[energy per task]`` (tasks per
  kWh).

Tool time does not load the chips (they serve other sequences meanwhile); the host's tool execution is
not counted.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from . import calibration, data, pareto, serving, specs, subject
from .comparison import e2e_decomposition
from .errors import UnknownNameError
from .metrics import LENGTH_LOW_FRACTION, mean_request_length
from .power import PowerStack
from .specs import ChipSpec, ModelSpec


@dataclass(frozen=True)
class AgentProfile:
    """One kind of agent task (tokens, seconds, probabilities).

    ``steps``: dependent model calls; ``initial_context_tokens``: context of the first call;
    ``context_growth_tokens``: tokens added to the context by each step; ``output_tokens``: tokens each
    call decodes (at least 2); ``tool_time_s``: tool execution after each call; ``step_success``:
    probability that a returned call's result is right (``q``); ``timeout_s``: a call longer than this
    is cut and fails (``inf``: no timeout); ``max_attempts``: attempts per step (1: no retry);
    ``prefix_cache``: prefill only the tokens each step adds that the cache does not hold;
    ``cached_output`` (default): with ``prefix_cache``, the previous step's output is held too, so a step
    prefills ``context_growth_tokens - output_tokens`` (False: ``context_growth_tokens``, the output
    prefilled again; the module docstring); ``latency_sigma``:
    lognormal shape of a call's latency around its modeled mean (0: deterministic). Raises ValueError
    naming a bad value."""

    name: str
    steps: int
    initial_context_tokens: float
    context_growth_tokens: float
    output_tokens: float
    tool_time_s: float = 0.0
    step_success: float = 1.0
    timeout_s: float = math.inf
    max_attempts: int = 1
    prefix_cache: bool = True
    latency_sigma: float = 0.0
    cached_output: bool = True

    def __post_init__(self):
        checks = [
            ("steps", self.steps, isinstance(self.steps, (int, np.integer)) and self.steps >= 1, "an integer >= 1"),
            ("initial_context_tokens", self.initial_context_tokens, self.initial_context_tokens >= 1, ">= 1"),
            ("context_growth_tokens", self.context_growth_tokens, self.context_growth_tokens >= 0, ">= 0"),
            ("output_tokens", self.output_tokens, self.output_tokens >= 2, ">= 2"),
            ("tool_time_s", self.tool_time_s, self.tool_time_s >= 0, ">= 0"),
            ("step_success", self.step_success, 0 < self.step_success <= 1, "in (0, 1]"),
            ("timeout_s", self.timeout_s, self.timeout_s > 0, "> 0 (math.inf for none)"),
            ("max_attempts", self.max_attempts,
             isinstance(self.max_attempts, (int, np.integer)) and self.max_attempts >= 1, "an integer >= 1"),
            ("latency_sigma", self.latency_sigma, self.latency_sigma >= 0, ">= 0"),
            ("context_growth_tokens", self.context_growth_tokens,
             not (self.cached_output and self.prefix_cache and self.steps > 1
                  and self.context_growth_tokens < self.output_tokens),
             f">= output_tokens ({self.output_tokens!r}) with a prefix cache (prefix_cache; the growth counts the "
             "previous output, which the cache holds)"),
        ]
        for name, value, ok, want in checks:
            if not ok:
                raise ValueError(f"agent profile {self.name!r}: {name} must be {want}, got {value!r}")

    def contexts(self) -> np.ndarray:
        """Context tokens of each step: ``c_0 + i g``, shape ``(steps,)``."""
        return self.initial_context_tokens + self.context_growth_tokens * np.arange(self.steps)

    def prefill_tokens(self) -> np.ndarray:
        """Tokens each step prefills, shape ``(steps,)``: with ``prefix_cache`` the ones it adds (``g``; ``g - d``
        with ``cached_output``), at least 1; else all."""
        if not self.prefix_cache:
            return self.contexts()
        growth = self.context_growth_tokens - (self.output_tokens if self.cached_output else 0)
        out = np.full(self.steps, float(growth))
        out[0] = self.initial_context_tokens
        return np.maximum(out, 1.0)


#: Illustrative profiles (hypothetical, like the seeds' 30- and 50-step examples; change any field with
#: :func:`profile`): a short tool loop (function calls returning small results), long-context research
#: (web pages pile up in the context), code editing (files in, diffs out, tests run as the tool).
PROFILES = {
    "short-tool-loop": AgentProfile("short-tool-loop", steps=30, initial_context_tokens=4096,
                                    context_growth_tokens=512, output_tokens=128, tool_time_s=0.3,
                                    step_success=0.98, timeout_s=10.0, max_attempts=3, latency_sigma=0.5),
    "long-context-research": AgentProfile("long-context-research", steps=50, initial_context_tokens=8192,
                                          context_growth_tokens=2048, output_tokens=512, tool_time_s=2.0,
                                          step_success=0.97, timeout_s=30.0, max_attempts=3, latency_sigma=0.5),
    "code-editing": AgentProfile("code-editing", steps=40, initial_context_tokens=16384,
                                 context_growth_tokens=1536, output_tokens=1024, tool_time_s=5.0,
                                 step_success=0.95, timeout_s=30.0, max_attempts=3, latency_sigma=0.5),
}


def profile(name: str | AgentProfile, **changes) -> AgentProfile:
    """A profile of :data:`PROFILES` (or a given one) with fields changed, e.g.
    ``profile("code-editing", steps=60)``; UnknownNameError listing the profiles, ValueError for a bad
    value or an unknown field."""
    base = name if isinstance(name, AgentProfile) else PROFILES.get(name)
    if base is None:
        raise UnknownNameError("agent profile", name, list(PROFILES))
    bad = [k for k in changes if k not in AgentProfile.__dataclass_fields__]
    if bad:
        raise UnknownNameError("profile field", bad[0], list(AgentProfile.__dataclass_fields__))
    return replace(base, **changes)


# ---- servers: where TTFT and TPOT come from -------------------------------------------------------------

@dataclass(frozen=True)
class CallTiming:
    """One call's timing (s): ``ttft_s``, ``tpot_s`` and ``call_s = ttft_s + tpot_s (output - 1)``."""

    ttft_s: float
    tpot_s: float
    call_s: float


@dataclass(frozen=True)
class FixedLatency:
    """A server with the same TTFT and TPOT (s) for every call, whatever its lengths (the published
    numbers, or a hand-worked case). ``chips_per_sequence``: chips one sequence holds while its call runs
    (energy and cost); ``label`` names it in tables."""

    ttft_s: float
    tpot_s: float
    label: str = "fixed"
    chips_per_sequence: float = 1.0

    def __post_init__(self):
        if self.ttft_s < 0 or self.tpot_s < 0:
            raise ValueError(f"ttft_s and tpot_s must be zero or positive, got {self.ttft_s!r}, {self.tpot_s!r}")

    def call(self, context_tokens: float, prefill_tokens: float, output_tokens: float) -> CallTiming:
        return CallTiming(self.ttft_s, self.tpot_s, self.ttft_s + self.tpot_s * (output_tokens - 1))


def nominal_length(mean_tokens: float) -> int:
    """The smallest nominal length whose benchmark mean (:func:`jalapeno.metrics.mean_request_length`,
    requests drawn from [0.8 L, L]) reaches ``mean_tokens``: the serving model takes nominal lengths."""
    n = max(1, int(math.ceil(mean_tokens / ((1 + LENGTH_LOW_FRACTION) / 2))) - 2)
    while mean_request_length(n) < mean_tokens:
        n += 1
    return n


@dataclass(frozen=True)
class ServingPoint:
    """A server from the serving model: ``chip`` serving ``model`` on a worker of ``n_chips`` chips,
    ``dp``-way attention, ``concurrency`` sequences, with constants ``eff`` and software ``stack``.

    Each call is evaluated at its own lengths with :func:`jalapeno.serving.evaluate`'s aggregated-serving
    formulas: ``TPOT = T_decode(context) + (concurrency / dp - 1) / OSL x T_prefill(new tokens)`` (the decode
    step reads the whole context's KV cache; the other sequences' prefills are interleaved) and
    ``TTFT = T_prefill(new tokens) + T_decode(context) + request latency`` (outside the chip:
    :func:`jalapeno.subject.outside_chip_latency_s`). Without prefix caching the new tokens are the
    whole context and both equal ``evaluate``'s. With it, attention from the new tokens to the cached
    prefix is not counted (a lower bound). Raises ValueError when the worker's weights and KV cache at
    that context do not fit."""

    chip: ChipSpec
    model: ModelSpec
    eff: serving.Efficiency
    stack: str
    n_chips: float
    dp: float
    concurrency: float
    precision: str = "fp4"
    label: str = ""

    @property
    def chips_per_sequence(self) -> float:
        return self.n_chips / self.concurrency

    @functools.cached_property
    def _at_lengths(self):
        """:func:`jalapeno.serving.evaluate` of this server at nominal lengths ``(isl, osl)`` (tokens), as a
        dict of floats, memoised per server (its specs hold dicts, so the server itself is no cache key)."""
        @functools.cache
        def at(isl: int, osl: int) -> dict:
            r = serving.evaluate(self.model, self.chip, serving.Layout(n_chips=self.n_chips, dp=self.dp),
                                 serving.Workload(concurrency=self.concurrency, isl=isl, osl=osl, precision=self.precision),
                                 stack=self.stack, eff=self.eff)
            return {k: float(v) for k, v in r.as_dict().items()}
        return at

    def _eval(self, isl_tokens: float, osl_tokens: float) -> dict:
        return self._at_lengths(nominal_length(isl_tokens), nominal_length(osl_tokens))

    def call(self, context_tokens: float, prefill_tokens: float, output_tokens: float) -> CallTiming:
        ctx = self._eval(context_tokens, output_tokens)
        if not ctx["fits"]:
            raise ValueError(f"{self.model.model} on {self.label or self.chip.chip} ({self.n_chips:g} chips, "
                             f"concurrency {self.concurrency:g}) does not hold the KV cache of a "
                             f"{context_tokens:,.0f}-token context: choose a lower concurrency or more chips")
        prefill_s = self._eval(prefill_tokens, output_tokens)["prefill_s"]
        # evaluate()'s parts at the whole context, its interleaved prefills scaled to the new tokens only
        tpot = ctx["decode_step_s"] + ctx["prefill_interference_s"] * prefill_s / ctx["prefill_s"]
        ttft = prefill_s + ctx["decode_step_s"] + self.eff.request_latency_s
        return CallTiming(ttft, tpot, ttft + tpot * (output_tokens - 1))


def operating_point(front: pl.DataFrame, interactivity_tok_s_user: float | None = None) -> dict:
    """A frontier's operating point: its highest-throughput point at or above ``interactivity_tok_s_user``
    (tok/s/user), or its highest-interactivity point when None (the best TBT, where the published
    single-user figures sit) or when the frontier cannot reach it (``reached`` False)."""
    top = front.sort("interactivity_tok_s_user").row(-1, named=True)
    if interactivity_tok_s_user is None:
        return {**top, "reached": True}
    ok = front.filter(pl.col("interactivity_tok_s_user") >= interactivity_tok_s_user)
    if ok.is_empty():
        return {**top, "reached": False}
    return {**ok.sort("throughput_tok_s_chip").row(-1, named=True), "reached": True}


def serving_point(chip: ChipSpec | str, model: ModelSpec | str, point: dict, *, eff: serving.Efficiency,
                  stack: str, precision: str | None = None, label: str = "") -> ServingPoint:
    """A :class:`ServingPoint` at a frontier row ``point`` (``n_chips``, ``dp``, ``concurrency``)."""
    c, m = specs.chip(chip), specs.model(model)
    return ServingPoint(c, m, eff, stack, float(point["n_chips"]), float(point["dp"]), float(point["concurrency"]),
                        precision or pareto.DEFAULT_PRECISION.get(m.model, "fp8"), label or c.chip)


def frontier_servers(model: str = "gpt-oss-120b", baseline: str = "gb200", *,
                     interactivity_tok_s_user: float | None = None, scenario: str = "central",
                     jalapeno_fit: subject.JalapenoFit | None = None, max_chips: int = 8,
                     isl: int = 8192, osl: int = 1024,
                     e2e_reading: str = subject.DEFAULT_E2E_READING) -> dict[str, ServingPoint]:
    """Jalapeño (``scenario`` of its unknowns, fitted constants ``jalapeno_fit``, default
    :func:`jalapeno.subject.fit_jalapeno` under ``e2e_reading``) and ``baseline`` (the calibrated serving
    model, its best measured stack, at most ``max_chips`` chips per worker) as :class:`ServingPoint` s at
    :func:`operating_point` of their frontiers at nominal ``isl``/``osl``. Both carry the request latency
    outside the chip of one rule, :func:`jalapeno.subject.outside_chip_latency_s` under ``e2e_reading``
    (:data:`jalapeno.subject.E2E_READINGS`: 0 for both under ``separate``; under ``one-point`` Jalapeño's
    fitted to its published E2E, the baseline's from its measured TTFT), on top of their frontiers'
    other constants. Keys: ``jalapeno`` and the baseline's name; a label ends in ``(max)`` when the chip
    could not reach the interactivity asked for and runs at its fastest point instead. ValueError when
    ``jalapeno_fit`` was made under another reading; UnknownNameError for an unknown reading."""
    subject.check_e2e_reading(e2e_reading)
    baseline = specs.chip(baseline).chip
    fit_j = jalapeno_fit or subject.fit_jalapeno(scenario, e2e_reading=e2e_reading)
    if fit_j.e2e_reading != e2e_reading:
        raise ValueError(f"the Jalapeño fit was made under the {fit_j.e2e_reading!r} reading of its E2E, the servers "
                         f"are asked for under {e2e_reading!r}")

    def outside(chip: str) -> float:
        return subject.outside_chip_latency_s(chip, e2e_reading, scenario=scenario)
    eff_j = replace(fit_j.efficiency, request_latency_s=outside("jalapeno"))
    calibrated = calibration.load()
    stack_b = pareto.best_stack(calibrated)
    eff_b = replace(calibrated, request_latency_s=outside(baseline))
    j_front = subject.jalapeno_frontier(model, scenario, fit=replace(fit_j, efficiency=eff_j), isl=isl, osl=osl)
    b_front = pareto.frontier(baseline, model, isl=isl, osl=osl, max_chips=max_chips, eff=eff_b, stack=stack_b)
    out = {}
    for name, chip, front, eff, stack in (("jalapeno", fit_j.chip(), j_front, eff_j, "jalapeno"),
                                          (baseline, specs.chip(baseline), b_front, eff_b, stack_b)):
        p = operating_point(front, interactivity_tok_s_user)
        out[name] = serving_point(chip, model, p, eff=eff, stack=stack,
                                  label=name if p["reached"] else f"{name} (max)")
    return out


def task_servers(task: AgentProfile, model: str = "gpt-oss-120b", baseline: str = "gb200", **options
                 ) -> dict[str, ServingPoint]:
    """:func:`frontier_servers` with the operating points chosen on the frontiers of the task's own shape:
    its longest context as input, its output length as output (so every step fits, and the interactivity
    asked for holds at the longest step and is exceeded before it). Options pass through."""
    isl, osl = task_shape(task, model)
    return frontier_servers(model, baseline, isl=isl, osl=osl, **options)


def task_shape(task: AgentProfile, model: str = "gpt-oss-120b") -> tuple[int, int]:
    """The nominal (ISL, OSL) in tokens a task is served at (:func:`task_servers`): its longest context in,
    its output length out. ValueError, naming the task and both lengths, when they exceed ``model``'s
    context window (checked before anything is computed: a chapter's parameters can ask for it)."""
    isl = nominal_length(float(task.contexts()[-1]))
    osl = nominal_length(task.output_tokens)
    specs.model(model).check_context(isl + osl, f"the longest call of task {task.name!r} (ISL + OSL)")
    return isl, osl


def published_servers(osl_nominal: int = 1024) -> dict[str, FixedLatency]:
    """Jalapeño and GB200 on gpt-oss-120b from the published numbers: TBT as TPOT, and the TTFT the
    published E2E implies for the benchmark's mean output length
    (:func:`jalapeno.comparison.e2e_decomposition`). Same for every call, whatever its lengths."""
    rows = {r["chip"]: r for r in e2e_decomposition(osl_nominal).iter_rows(named=True)}
    return {c: FixedLatency(rows[c]["implied_ttft_s"], rows[c]["tbt_ms"] / 1e3, label=f"{c} (published)")
            for c in ("jalapeno", "gb200")}


# ---- the task model -------------------------------------------------------------------------------------------

def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def timeout_terms(mean_s: float, timeout_s: float, sigma: float) -> tuple[float, float]:
    """``(P(L <= T), E[min(L, T)])`` for a call latency ``L`` with mean ``mean_s`` (s), lognormal with
    shape ``sigma`` (deterministic at 0), and a timeout ``T`` (s). ValueError for a non-positive mean."""
    if not mean_s > 0:
        raise ValueError(f"call latency must be positive, got {mean_s!r}")
    if math.isinf(timeout_s):
        return 1.0, mean_s
    if sigma == 0:
        return (1.0, mean_s) if mean_s <= timeout_s else (0.0, timeout_s)
    mu = math.log(mean_s) - sigma ** 2 / 2
    z = (math.log(timeout_s) - mu) / sigma
    p = _phi(z)
    return p, mean_s * _phi(z - sigma) + timeout_s * (1 - p)


@dataclass(frozen=True)
class TaskResult:
    """A task evaluated on one server: ``steps`` (one row per step) and the per-task summary
    (:meth:`summary`). Times in s, energy in J, tokens per task started."""

    profile: AgentProfile
    server: str
    steps: pl.DataFrame
    latency_s: float
    latency_first_pass_s: float
    completion_rate: float
    first_pass_rate: float
    prefill_tokens: float
    decode_tokens: float
    chip_s: float
    energy_j: dict[str, float]
    usd_per_chip_hour: float | None

    @property
    def energy_total_j(self) -> float:
        return float(sum(self.energy_j.values()))

    @property
    def cost_usd(self) -> float:
        """Chip hours per task x price per chip-hour (NaN without a price)."""
        return self.chip_s / 3600 * self.usd_per_chip_hour if self.usd_per_chip_hour else float("nan")

    @property
    def effective_tasks_per_kwh(self) -> float:
        """Seed 003's effective task efficiency: first-pass rate x completed tasks per kWh of accelerator,
        host, network and cooling energy (per started task: ``first_pass x completion / kWh``)."""
        kwh = self.energy_total_j / 3.6e6
        return self.first_pass_rate * self.completion_rate / kwh if kwh else float("nan")

    def summary(self) -> dict[str, object]:
        """One row: profile, server, latencies, rates, tokens, chip seconds, energy by part, cost,
        completed tasks per kWh and the effective task efficiency."""
        kwh = self.energy_total_j / 3.6e6
        return {"profile": self.profile.name, "server": self.server, "latency_s": self.latency_s,
                "latency_first_pass_s": self.latency_first_pass_s, "completion_rate": self.completion_rate,
                "first_pass_rate": self.first_pass_rate, "prefill_tokens": self.prefill_tokens,
                "decode_tokens": self.decode_tokens, "tokens": self.prefill_tokens + self.decode_tokens,
                "chip_s": self.chip_s, **{f"energy_{k.removesuffix('_w')}_j": v for k, v in self.energy_j.items()},
                "energy_j": self.energy_total_j, "cost_usd": self.cost_usd,
                "tasks_per_kwh": self.completion_rate / kwh if kwh else float("nan"),
                "effective_tasks_per_kwh": self.effective_tasks_per_kwh}


def run_task(task: AgentProfile, server, *, power: PowerStack | None = None,
             usd_per_chip_hour: float | None = None) -> TaskResult:
    """Evaluate ``task`` on ``server`` (:class:`FixedLatency` or :class:`ServingPoint`) with the task
    model of this module. ``power``: per-chip power for energy (None: energy 0); ``usd_per_chip_hour``
    for cost. Returns a :class:`TaskResult`; raises ValueError when a call does not fit the server."""
    ctx, pre = task.contexts(), task.prefill_tokens()
    d, q, K, T, t_tool = task.output_tokens, task.step_success, task.max_attempts, task.timeout_s, task.tool_time_s
    rows, reach = [], 1.0
    latency = first_pass_latency = chip_s = pre_tok = dec_tok = 0.0
    first_pass = 1.0
    cps = float(server.chips_per_sequence)
    for i in range(task.steps):
        c = server.call(float(ctx[i]), float(pre[i]), d)
        p_ok, e_min = timeout_terms(c.call_s, T, task.latency_sigma)
        s = q * p_ok
        a = e_min + t_tool * p_ok
        attempts = float(K) if s == 0 else (1 - (1 - s) ** K) / s
        step_ok = 1 - (1 - s) ** K
        frac = e_min / c.call_s
        rows.append({"step": i + 1, "context_tokens": float(ctx[i]), "prefill_tokens": float(pre[i]),
                     "ttft_s": c.ttft_s, "tpot_s": c.tpot_s, "call_s": c.call_s, "p_in_time": p_ok,
                     "attempt_success": s, "expected_attempts": attempts, "step_success": step_ok,
                     "p_reached": reach, "expected_step_s": attempts * a})
        latency += reach * attempts * a
        chip_s += reach * attempts * e_min * cps
        pre_tok += reach * attempts * frac * pre[i]
        dec_tok += reach * attempts * frac * d
        first_pass_latency += c.call_s + t_tool
        first_pass *= s
        reach *= step_ok
    parts = power.parts() if power is not None else {"accelerator_w": 0.0, "host_network_w": 0.0, "cooling_w": 0.0}
    energy = {k: v * chip_s for k, v in parts.items()}
    return TaskResult(task, getattr(server, "label", "") or "server", pl.DataFrame(rows), latency, first_pass_latency,
                      reach, first_pass, float(pre_tok), float(dec_tok), chip_s, energy, usd_per_chip_hour)


# ---- comparisons -------------------------------------------------------------------------------------------------

def saving_s(task: AgentProfile, slow, fast) -> float:
    """Expected task latency on ``slow`` minus on ``fast`` (s): the wait an agent task saves."""
    return run_task(task, slow).latency_s - run_task(task, fast).latency_s


def seed_example(steps: int, per_step_saving_s: float, *, base_call_s: float = 1.0) -> dict[str, float]:
    """The seeds' worked example through the task model: ``steps`` dependent calls, each
    ``per_step_saving_s`` faster on the fast server (fixed latencies, no tool time, no failures).
    Returns ``slow_s``, ``fast_s`` and ``saving_s`` (seed 003: 30 x 200 ms = 6 s; seed 000: 50 x 1 s)."""
    if not per_step_saving_s >= 0:
        raise ValueError(f"per_step_saving_s must be zero or positive, got {per_step_saving_s!r}")
    if not base_call_s > 0:
        raise ValueError(f"base_call_s must be positive, got {base_call_s!r}")
    task = AgentProfile("seed example", steps=steps, initial_context_tokens=1, context_growth_tokens=0,
                        output_tokens=2, cached_output=False)  # fixed latencies: no context, nothing prefilled
    slow = FixedLatency(base_call_s + per_step_saving_s, 0.0, "slow")
    fast = FixedLatency(base_call_s, 0.0, "fast")
    a, b = run_task(task, slow).latency_s, run_task(task, fast).latency_s
    return {"slow_s": a, "fast_s": b, "saving_s": a - b}


#: The seeds' two worked examples, as (label, claim ids of the number of steps, of the saving per step
#: and of the published total saving): seed 003's 30 x 200 ms = 6 s and seed 000's 50 x 1 s ("nearly a
#: minute").
SEED_EXAMPLES = (("seed 003", "agent-30-steps", "agent-30-step-per-step-saving", "agent-30-step-saving"),
                 ("seed 000", "agent-50-steps", "agent-50-step-per-step-saving", "agent-50-step-saving"))


def seed_examples() -> pl.DataFrame:
    """The seeds' worked examples (:data:`SEED_EXAMPLES`) through the task model (:func:`seed_example`),
    one row each: ``example``, ``steps``, ``saving_per_step_s``, ``task_model_saving_s`` (s) and
    ``published_saving_s`` (the seed's own total, s)."""
    rows = []
    for label, n_id, d_id, total_id in SEED_EXAMPLES:
        n, d = int(data.claim_value(n_id)), claim_seconds(d_id)
        rows.append({"example": label, "steps": n, "saving_per_step_s": d,
                     "task_model_saving_s": seed_example(n, d)["saving_s"],
                     "published_saving_s": claim_seconds(total_id)})
    return pl.DataFrame(rows)


def published_call_ratios() -> dict[str, float]:
    """The published per-call advantages on gpt-oss-120b 8k/1k, GB200 over Jalapeño (dimensionless):
    ``e2e`` (claims ``gptoss-gb200-e2e`` / ``gptoss-jalapeno-e2e``) and ``tbt`` (``gptoss-gb200-tbt`` /
    ``gptoss-jalapeno-tbt``)."""
    v = data.claim_value
    return {"e2e": v("gptoss-gb200-e2e") / v("gptoss-jalapeno-e2e"), "tbt": v("gptoss-gb200-tbt") / v("gptoss-jalapeno-tbt")}


def _servers_for(servers, task) -> dict:
    return servers(task) if callable(servers) else servers


def compare(tasks, servers, *, powers: dict[str, PowerStack] | None = None,
            prices: dict[str, float] | None = None) -> pl.DataFrame:
    """:meth:`TaskResult.summary` of every task on every server (``servers``: name -> server, or a
    function of the task returning one such dict; ``powers`` and ``prices``: name -> PowerStack, USD per
    chip-hour), one row each, with ``server_key``."""
    rows = []
    for task in tasks:
        for key, srv in _servers_for(servers, task).items():
            r = run_task(task, srv, power=(powers or {}).get(key), usd_per_chip_hour=(prices or {}).get(key))
            rows.append({"server_key": key, **r.summary()})
    return pl.DataFrame(rows)


def compounding_table(tasks, servers, *, fast: str = "jalapeno", slow: str = "gb200",
                      per_call_e2e_ratio: float | None = None, per_call_tbt_ratio: float | None = None) -> pl.DataFrame:
    """How a per-call advantage carries to whole tasks: per task, the expected latency on the ``slow`` and
    ``fast`` servers (``servers``: a dict or a function of the task, as in :func:`compare`), the saving
    (s and per step), the task latency ratio, the first-pass latency ratio (no retries, no timeouts), the
    per-call ratio at the task's first and last step, the share of the slow task spent in model calls
    and the completion rates; with the published per-call E2E and TBT ratios to compare with."""
    rows = []
    for task in tasks:
        srv = _servers_for(servers, task)
        a, b = run_task(task, srv[slow]), run_task(task, srv[fast])
        ca, cb = a.steps["call_s"], b.steps["call_s"]
        rows.append({"profile": task.name, "steps": task.steps, "slow": srv[slow].label, "fast": srv[fast].label,
                     "slow_latency_s": a.latency_s, "fast_latency_s": b.latency_s,
                     "saving_s": a.latency_s - b.latency_s, "saving_per_step_s": (a.latency_s - b.latency_s) / task.steps,
                     "task_ratio": a.latency_s / b.latency_s,
                     "first_pass_ratio": a.latency_first_pass_s / b.latency_first_pass_s,
                     "call_ratio_first_step": float(ca[0] / cb[0]), "call_ratio_last_step": float(ca[-1] / cb[-1]),
                     "slow_call_share": float(ca.sum()) / a.latency_first_pass_s,
                     "slow_completion": a.completion_rate, "fast_completion": b.completion_rate,
                     "per_call_e2e_ratio": per_call_e2e_ratio, "per_call_tbt_ratio": per_call_tbt_ratio})
    return pl.DataFrame(rows)


def steps_sweep(task: AgentProfile, servers: dict, steps=(1, 5, 10, 20, 30, 50, 75, 100)) -> pl.DataFrame:
    """Expected latency and completion rate of ``task`` as its number of steps grows, on each server:
    columns ``server``, ``steps``, ``latency_s``, ``completion_rate``, ``first_pass_rate``."""
    rows = []
    for n in steps:
        t = replace(task, steps=int(n))
        for key, srv in servers.items():
            r = run_task(t, srv)
            rows.append({"server": key, "steps": int(n), "latency_s": r.latency_s, "completion_rate": r.completion_rate,
                         "first_pass_rate": r.first_pass_rate})
    return pl.DataFrame(rows)


def timeout_sweep(task: AgentProfile, servers: dict, timeouts_s) -> pl.DataFrame:
    """Expected latency and completion rate of ``task`` as its timeout varies, on each server: columns
    ``server``, ``timeout_s``, ``latency_s``, ``completion_rate``, ``first_pass_rate``."""
    rows = []
    for to in timeouts_s:
        t = replace(task, timeout_s=float(to))
        for key, srv in servers.items():
            r = run_task(t, srv)
            rows.append({"server": key, "timeout_s": float(to), "latency_s": r.latency_s,
                         "completion_rate": r.completion_rate, "first_pass_rate": r.first_pass_rate})
    return pl.DataFrame(rows)


#: Time units of ``claims.csv`` and their value in seconds.
_TIME_UNITS = {"ms": 1e-3, "s": 1.0, "min": 60.0}


def claim_seconds(claim_id: str) -> float:
    """A time claim of ``data/claims.csv`` in seconds (its ``unit`` ``ms``, ``s`` or ``min``); ValueError
    for a claim in another unit, UnknownNameError for an unknown claim."""
    value, unit = data.claim_value(claim_id), data.claim_unit(claim_id)
    if unit not in _TIME_UNITS:
        raise ValueError(f"claim {claim_id!r} is in {unit!r}, not a time unit ({', '.join(_TIME_UNITS)})")
    return value * _TIME_UNITS[unit]


# ---- reader names ------------------------------------------------------------------------------------------------

#: What a server's label (:func:`frontier_servers`) says after its chip's key when the chip could not
#: reach the interactivity asked for, and how a reader's name of it says so.
_MAX_SUFFIX, _MAX_WORDS = " (max)", " (at its fastest point)"


def server_name(key: str, label: str | None = None) -> str:
    """The reader's name of the server ``key`` of :func:`frontier_servers` (a chip's key) with its
    ``label``: :func:`jalapeno.specs.short_name`, and ``(at its fastest point)`` when the label ends in ``(max)``
    (``server_name("gb200", "gb200 (max)")`` -> ``GB200 (at its fastest point)``)."""
    return specs.short_name(key) + (_MAX_WORDS if (label or "").endswith(_MAX_SUFFIX) else "")


def task_efficiency(df: pl.DataFrame) -> pl.DataFrame:
    """Seed 003's effective task efficiency taken apart, one row per task and server of a :func:`compare`
    with energy (``profile``, ``server_key``, ``server``, ``first_pass_rate``, ``tasks_per_kwh``): the
    profile, the server's key (``server_key``) and reader name (``chip``, :func:`server_name`), the first-pass rate ``p``, the tasks
    completed per kWh ``N`` (completion rate over the expected energy of a started task) and the effective
    task efficiency ``E = p x N`` (tasks per kWh), in the order of ``df``."""
    return df.select(
        "profile", "server_key",
        pl.Series("chip", [server_name(k, s) for k, s in zip(df["server_key"], df["server"])], dtype=pl.Utf8),
        "first_pass_rate",
        pl.col("tasks_per_kwh").alias("completed_tasks_per_kwh"),
        (pl.col("first_pass_rate") * pl.col("tasks_per_kwh")).alias("effective_tasks_per_kwh"))
