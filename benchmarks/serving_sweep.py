"""Benchmark: how fast the serving model evaluates configurations, and how long a frontier takes.

What it counts, like with like:

- the grid: every chip with a known HBM bandwidth, compute, capacity and scale-up bandwidth (Jalapeño in
  its central scenario) x every model x chips per
  worker (1-64) x attention layout (TP, or DP-attention where it differs: no duplicate (1 chip, dp 1)
  pair) x concurrencies 1..N; as ``pareto.sweep`` does, capacity comes first
  (:func:`jalapeno.serving.capacity`: weights and KV cache against usable HBM, no step timed) and only the
  configurations that fit are evaluated (a frontier keeps only those);
- the rates, two for each row: configurations per second over *all* configurations of the grid (the
  skipped ones included: the grid's size over the wall time of the whole pass, capacity check included)
  and *fitting* configurations per second (those evaluated, over the same wall time); aggregated (one
  evaluation) and disaggregated (prefill chips matched to the decode workers' request rate: two
  evaluations, as ``pareto.sweep`` does), each evaluated in cache-sized chunks
  (:func:`jalapeno.serving.evaluate_grid`), and, with ``--unchunked``, the aggregated grid in one call
  for comparison;
- the frontier: ``jalapeno.frontier("gb200", "deepseek-r1")`` cold (the first call in this process,
  data files loaded) and warm (the median of ``--repeat`` later calls);
- a new user's session: ``import jalapeno`` and the first ``frontier("gb200", "gpt-oss-120b")`` after
  it, each timed in a new Python process (the median of five; targets 1 s and 50 ms). The first
  frontier reads the validated data tables and the measured runs' concurrency ranges from the cache
  (``build/.cache``); the very first one on a machine fills it.

It prints the machine's load average before and after (a time taken on a busy machine is not a
measurement: run it on an idle one) and the peak resident memory. One thread (``OMP_NUM_THREADS=1``).

    .venv/bin/python benchmarks/serving_sweep.py                 # 16,384 concurrencies
    .venv/bin/python benchmarks/serving_sweep.py --concurrencies 2048 --unchunked
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import replace

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core

import numpy as np  # noqa: E402

import jalapeno as jp  # noqa: E402
from jalapeno import calibration, serving, subject  # noqa: E402

SIZES = (1, 2, 4, 8, 16, 32, 64)
IMPORT_TARGET_S, FIRST_FRONTIER_TARGET_S = 1.0, 0.050


def new_session() -> tuple[float, float]:
    """``import jalapeno`` and its first frontier, each timed in a new Python process (s)."""
    code = ("import time; t0 = time.perf_counter(); import jalapeno as jp; t1 = time.perf_counter(); "
            "jp.frontier('gb200', 'gpt-oss-120b'); print(t1 - t0, time.perf_counter() - t1)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


def grid(concurrencies: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n_chips, dp, concurrency) of every layout x concurrency, without duplicate layouts."""
    layouts = sorted({(s, d) for s in SIZES for d in (1, s)})
    conc = np.arange(1, concurrencies + 1, dtype=float)
    n = np.concatenate([np.full(conc.size, s, float) for s, _ in layouts])
    dp = np.concatenate([np.full(conc.size, d, float) for _, d in layouts])
    return n, dp, np.tile(conc, len(layouts))


def sweep(chips, models, n, dp, c, eff, *, disagg: bool, chunk: int | None) -> tuple[int, int, float]:
    """Check capacity, then evaluate the fitting configurations of the grid for every (chip, model):
    (configurations, configurations that fit and were evaluated, seconds of the whole pass)."""
    total = fit = 0
    started = time.perf_counter()
    for chip in chips:
        for model in models:
            layout = serving.Layout(n_chips=n, dp=dp)
            workload = serving.Workload(concurrency=c, precision="fp4" if chip.peak_dense_flops_per_s.get("fp4") else "fp8")
            total += n.size
            fits = np.flatnonzero(serving.capacity(model, chip, layout, workload).fits)
            if not fits.size:
                continue
            layout, workload = serving.select(layout, workload, fits)
            if chunk is None:
                r = serving.evaluate(model, chip, layout, workload, eff=eff)
            else:
                r = serving.evaluate_grid(model, chip, layout, workload, chunk=chunk, eff=eff)
            if disagg:
                prefill = np.maximum(1.0, np.ceil(workload.concurrency / r.e2e_s * r.prefill_s))
                r = serving.evaluate_grid(model, chip, replace(layout, disagg=True, prefill_chips=prefill), workload,
                                          chunk=chunk or fits.size, eff=eff)
            fit += r.tpot_s.size
    return total, fit, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--concurrencies", type=int, default=16_384, help="concurrencies 1..N per layout")
    p.add_argument("--chunk", type=int, default=serving.GRID_CHUNK, help="configurations per chunk")
    p.add_argument("--repeat", type=int, default=20, help="warm frontier calls to take the median of")
    p.add_argument("--unchunked", action="store_true", help="also time the aggregated grid in one call")
    args = p.parse_args(argv)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} cores; a busy machine makes every time below meaningless)")

    sessions = [new_session() for _ in range(5)]
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
          f"{args.concurrencies:,} concurrencies = {len(chips) * len(models) * n.size:,} configurations")
    rows = [("aggregated, chunked", sweep(chips, models, n, dp, c, eff, disagg=False, chunk=args.chunk)),
            ("disaggregated, chunked", sweep(chips, models, n, dp, c, eff, disagg=True, chunk=args.chunk))]
    if args.unchunked:
        rows.append(("aggregated, one call per pair", sweep(chips, models, n, dp, c, eff, disagg=False, chunk=None)))
    for label, (total, fit, seconds) in rows:
        print(f"{label:32s} {total / seconds:12,.0f} configurations/s of all, {fit / seconds:12,.0f} fitting "
              f"configurations/s  ({total:,} in {seconds:.2f} s; {fit:,}, {100 * fit / total:.1f} %, fit in HBM "
              f"and were evaluated)")
    print(f"frontier gb200 / deepseek-r1: cold {cold * 1e3:.0f} ms (first call, data loaded), "
          f"warm {statistics.median(warm) * 1e3:.1f} ms (median of {args.repeat})")
    imports, firsts = zip(*sessions)
    print(f"new process: import jalapeno {statistics.median(imports):.2f} s (target < {IMPORT_TARGET_S:.0f} s), "
          f"then its first frontier gb200 / gpt-oss-120b {statistics.median(firsts) * 1e3:.0f} ms "
          f"(target < {FIRST_FRONTIER_TARGET_S * 1e3:.0f} ms; median of 5)")
    print(f"peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
