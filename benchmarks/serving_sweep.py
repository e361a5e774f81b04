"""Benchmark: configurations of the serving model evaluated per second, and the time of one frontier.

Sweeps every chip with a known HBM bandwidth and compute x every model x chips per worker (1-64) x
TP/DP attention x 16,384 concurrencies, one array evaluation per (chip, model) pair, on one core.
Run: .venv/bin/python benchmarks/serving_sweep.py   (the last line is configurations per second)
"""

from __future__ import annotations

import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")  # one core

import numpy as np  # noqa: E402

import jalapeno as jp  # noqa: E402
from jalapeno import calibration, pareto, serving  # noqa: E402


def main() -> None:
    eff = calibration.load()
    chips = [jp.chip(c) for c in jp.chip_names()]
    chips = [c for c in chips if c.hbm_bandwidth_bytes_per_s and c.peak_dense_flops_per_s and c.hbm_capacity_bytes]
    models = [jp.model(m) for m in jp.model_names()]
    conc = np.arange(1, 16385, dtype=float)
    sizes = [1, 2, 4, 8, 16, 32, 64]
    n = np.concatenate([np.full(conc.size, s, float) for s in sizes for _ in (0, 1)])
    dp = np.concatenate([np.full(conc.size, d, float) for s in sizes for d in (1, s)])
    c = np.tile(conc, 2 * len(sizes))
    total, started = 0, time.perf_counter()
    for chip in chips:
        for model in models:
            precision = "fp4" if chip.peak_dense_flops_per_s.get("fp4") else "fp8"
            r = serving.evaluate(model, chip, n_chips=n, concurrency=c, dp=dp, precision=precision, eff=eff)
            total += r.tpot_s.size
    elapsed = time.perf_counter() - started
    t0 = time.perf_counter()
    pareto.frontier("gb200", "deepseek-r1", eff=eff)
    one = time.perf_counter() - t0
    print(f"{len(chips)} chips x {len(models)} models x {2 * len(sizes)} layouts x {conc.size} concurrencies "
          f"= {total:,} configurations in {elapsed:.2f} s")
    print(f"one full frontier (gb200, deepseek-r1, {2 * len(sizes) * len(pareto.CONCURRENCY)} configurations): {one * 1e3:.0f} ms")
    print(f"{total / elapsed:,.0f} configurations/s")


if __name__ == "__main__":
    main()
