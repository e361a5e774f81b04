"""Benchmark: how fast the serving model sweeps a grid of configurations, and how long a frontier takes.

What it counts, like with like:

- the grid: every chip with a known HBM bandwidth, compute, capacity and scale-up bandwidth (Jalapeño in
  its central scenario) x every model x chips per
  worker (1-64) x attention layout (TP, or DP-attention where it differs: no duplicate (1 chip, dp 1)
  pair) x concurrencies 1..N, one :class:`jalapeno.serving.Layout` of the grid checked once a pass and
  shared by every (chip, model); as ``pareto.sweep`` does, capacity comes first
  (:func:`jalapeno.serving.capacity`: weights and KV cache against usable HBM, no step timed) and only the
  configurations that fit are evaluated (a frontier keeps only those);
- the figure, the useful rate: configurations that FIT (those evaluated) per second of the wall time of the
  whole grid (the skipped ones' capacity check included), aggregated (one evaluation) and disaggregated
  (prefill chips matched to the decode workers' request rate: two evaluations, as ``pareto.sweep``
  does), each evaluated in chunks of bounded memory (:func:`jalapeno.serving.evaluate_grid`), one thread
  (``OMP_NUM_THREADS=1``; the package sets ``OPENBLAS_NUM_THREADS=1``); the wall time is the median of
  ``--passes`` passes over the grid (the median pass's parts are printed: capacity checks, the evaluation,
  the disaggregated second evaluation). Targets (the issue "Speed, last"): at least 5 million per second
  aggregated and 2 million disaggregated. Also printed: the rate over *all* configurations of the grid
  (the grid's size over the same wall time) and, with ``--unchunked``, the aggregated grid in one call
  per (chip, model) for comparison (no target);
- the frontier: ``jalapeno.frontier("gb200", "deepseek-r1")`` cold (the first call in this process,
  data files loaded) and warm (the median of ``--repeat`` later calls); no target here: a new process's
  import and first frontier are ``benchmarks/first_frontier.py``'s.

It prints the machine's load average and core count before and after each sweep (a time taken on a busy
machine is not a measurement: run it on an idle one), the peak resident memory and the process's minor
page faults. ``--check`` exits 1 when a useful rate misses its target. About 30 to 60 s with the default
grid.

    .venv/bin/python benchmarks/serving_sweep.py                 # 16,384 concurrencies
    .venv/bin/python benchmarks/serving_sweep.py --check
    .venv/bin/python benchmarks/serving_sweep.py --concurrencies 2048 --unchunked
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from dataclasses import replace

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core

import numpy as np  # noqa: E402

import jalapeno as jp  # noqa: E402
from jalapeno import calibration, serving, subject  # noqa: E402

SIZES = (1, 2, 4, 8, 16, 32, 64)
#: Fitting configurations per second of the whole grid's wall time, one thread (the issue "Speed, last").
TARGETS_PER_S = {"aggregated": 5e6, "disaggregated": 2e6}


def load() -> str:
    """The machine's load average (1, 5, 15 min) and its core count, as one phrase."""
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def grid(concurrencies: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n_chips, dp, concurrency) of every layout x concurrency, without duplicate layouts."""
    layouts = sorted({(s, d) for s in SIZES for d in (1, s)})
    conc = np.arange(1, concurrencies + 1, dtype=float)
    n = np.concatenate([np.full(conc.size, s, float) for s, _ in layouts])
    dp = np.concatenate([np.full(conc.size, d, float) for _, d in layouts])
    return n, dp, np.tile(conc, len(layouts))


def sweep(chips, models, n, dp, c, eff, *, disagg: bool, chunk: int | None) -> tuple[int, int, float, list[float]]:
    """Check capacity, then evaluate the fitting configurations of the grid for every (chip, model):
    (configurations, configurations that fit and were evaluated, seconds of the whole pass, and its parts:
    seconds in the capacity checks, in the first evaluation, in the disaggregated second one)."""
    total = fit = 0
    parts = [0.0, 0.0, 0.0]
    started = time.perf_counter()
    grid_layout = serving.Layout(n_chips=n, dp=dp)  # one grid of layouts for every pair, checked once a pass
    parts[0] += time.perf_counter() - started
    for chip in chips:
        for model in models:
            t0 = time.perf_counter()
            layout = grid_layout
            workload = serving.Workload(concurrency=c, precision="fp4" if chip.peak_dense_flops_per_s.get("fp4") else "fp8")
            total += n.size
            fits = np.flatnonzero(serving.capacity(model, chip, layout, workload).fits)
            if not fits.size:
                parts[0] += time.perf_counter() - t0
                continue
            layout, workload = serving.select(layout, workload, fits)
            t1 = time.perf_counter()
            parts[0] += t1 - t0
            if chunk is None:
                r = serving.evaluate(model, chip, layout, workload, eff=eff)
            else:
                r = serving.evaluate_grid(model, chip, layout, workload, chunk=chunk, eff=eff)
            t2 = time.perf_counter()
            parts[1] += t2 - t1
            if disagg:
                prefill = np.maximum(1.0, np.ceil(workload.concurrency / r.e2e_s * r.prefill_s))
                r = serving.evaluate_grid(model, chip, replace(layout, disagg=True, prefill_chips=prefill), workload,
                                          chunk=chunk or fits.size, eff=eff)
                parts[2] += time.perf_counter() - t2
            fit += fits.size  # the configurations evaluated (every field of r has this size)
    return total, fit, time.perf_counter() - started, parts


def timed(passes: int, *a, **k) -> tuple[int, int, float, list[float], str, str]:
    """:func:`sweep` ``passes`` times: (configurations, fitting ones, the median wall time, the parts of
    the median pass, the load before, the load after)."""
    before = load()
    runs = sorted((sweep(*a, **k) for _ in range(passes)), key=lambda r: r[2])
    median = runs[len(runs) // 2]
    return median[0], median[1], median[2], median[3], before, load()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--concurrencies", type=int, default=16_384, help="concurrencies 1..N per layout")
    p.add_argument("--chunk", type=int, default=serving.GRID_CHUNK, help="configurations per chunk")
    p.add_argument("--passes", type=int, default=3, help="passes over the grid (the median wall time is used)")
    p.add_argument("--repeat", type=int, default=20, help="warm frontier calls to take the median of")
    p.add_argument("--unchunked", action="store_true", help="also time the aggregated grid in one call")
    p.add_argument("--check", action="store_true", help="exit 1 if a useful rate misses its target")
    args = p.parse_args(argv)
    print(f"before: {load()} (a busy machine makes every time below meaningless); one thread "
          f"(OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')})")

    t0 = time.perf_counter()
    jp.frontier("gb200", "deepseek-r1")
    cold = time.perf_counter() - t0
    warm = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        jp.frontier("gb200", "deepseek-r1")
        warm.append(time.perf_counter() - t0)

    eff = calibration.load()
    chips = [subject.jalapeno_chip("central") if name == "jalapeno" else jp.chip(name) for name in jp.chip_names()]
    chips = [c for c in chips if c.hbm_bandwidth_bytes_per_s and c.peak_dense_flops_per_s and c.hbm_capacity_bytes
             and c.scale_up_bandwidth_bytes_per_s]
    models = [jp.model(m) for m in jp.model_names()]
    n, dp, c = grid(args.concurrencies)
    print(f"grid: {len(chips)} chips x {len(models)} models x {n.size // args.concurrencies} layouts x "
          f"{args.concurrencies:,} concurrencies = {len(chips) * len(models) * n.size:,} configurations; "
          f"median wall time of {args.passes} passes")
    rows = [("aggregated", timed(args.passes, chips, models, n, dp, c, eff, disagg=False, chunk=args.chunk)),
            ("disaggregated", timed(args.passes, chips, models, n, dp, c, eff, disagg=True, chunk=args.chunk))]
    if args.unchunked:
        rows.append(("aggregated, one call per pair",
                     timed(args.passes, chips, models, n, dp, c, eff, disagg=False, chunk=None)))
    missed = []
    for label, (total, fit, seconds, parts, before, after) in rows:
        target = TARGETS_PER_S.get(label)
        verdict = ""
        if target:
            met = fit / seconds >= target
            missed += [] if met else [label]
            verdict = f" (target >= {target / 1e6:.0f} M/s: {'met' if met else 'MISSED'})"
        print(f"{label}: {fit / seconds / 1e6:.2f} M fitting configurations/s of the whole grid's wall time{verdict}")
        print(f"    {fit:,} of {total:,} configurations ({100 * fit / total:.1f} %) fit in HBM and were evaluated; "
              f"the grid took {seconds:.2f} s: {total / seconds / 1e6:.2f} M configurations/s of all")
        print(f"    where it went: capacity checks (and selecting the fitting rows) {parts[0]:.2f} s, "
              f"evaluation {parts[1]:.2f} s" + (f", the disaggregated second evaluation (prefill chips matched) "
                                                f"{parts[2]:.2f} s" if parts[2] else "")
              + f", the rest {seconds - sum(parts):.2f} s")
        print(f"    before: {before}; after: {after}")
    print(f"frontier gb200 / deepseek-r1 in this process: cold {cold * 1e3:.0f} ms (first call, data loaded), "
          f"warm {statistics.median(warm) * 1e3:.1f} ms (median of {args.repeat}); a new process's first frontier: "
          f"benchmarks/first_frontier.py")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(f"peak resident memory: {usage.ru_maxrss / 1024:.0f} MiB; minor page faults of the whole process: "
          f"{usage.ru_minflt:,} (pages the allocator returned and took back)")
    print(f"after: {load()}")
    if missed:
        print(f"target missed: {', '.join(missed)}", file=sys.stderr)
    return 1 if (missed and args.check) else 0


if __name__ == "__main__":
    raise SystemExit(main())
