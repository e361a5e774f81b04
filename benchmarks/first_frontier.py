"""A new user's session: ``import jalapeno``, then the first ``jalapeno.frontier(chip, model)``, each timed.

    .venv/bin/python benchmarks/first_frontier.py                        # gb200 / deepseek-r1, median of 7
    .venv/bin/python benchmarks/first_frontier.py --check                # exit 1 when a target is missed
    .venv/bin/python benchmarks/first_frontier.py --pair gb200 gpt-oss-120b --pair b200 deepseek-r1 -n 9

Each process is a new Python interpreter (``-c``) that times ``import jalapeno`` and then, apart, the
first ``jalapeno.frontier(chip, model)`` of that process (the README's call: default workload ISL 8192,
OSL 1024, rated power, no band), with ``time.perf_counter``; the figures are the medians over ``-n``
processes per pair (default 7). The first frontier reads the validated data tables and the measured runs'
concurrency ranges through the package's cache; this script gives the processes a cache of their own
(``JALAPENO_CACHE_DIR``, an empty temporary folder, so the repository's ``build/.cache`` is left alone)
and fills it with one process per pair first: that first process's times are printed too (the very
first frontier on a machine, for the first pair), not counted in the median. Targets on a 2-core machine: the first
frontier within 50 ms after the import (the issue "Speed, last"), the import within 1 s. It prints the
machine's load average (``os.getloadavg``) and core count before and after: a time taken on a busy
machine is not a measurement. ``--check`` exits 1 when a median misses its target.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

IMPORT_TARGET_S, FIRST_FRONTIER_TARGET_S = 1.0, 0.050
CODE = ("import sys, time; t0 = time.perf_counter(); import jalapeno; t1 = time.perf_counter(); "
        "jalapeno.frontier(sys.argv[1], sys.argv[2]); print(t1 - t0, time.perf_counter() - t1)")


def load() -> str:
    """The machine's load average (1, 5, 15 min) and its core count, as one phrase."""
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def session(chip: str, model: str, cache: str) -> tuple[float, float]:
    """``import jalapeno`` and the first ``frontier(chip, model)`` in a new Python process (s, s)."""
    env = dict(os.environ, JALAPENO_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", CODE, chip, model], capture_output=True, text=True, check=True,
                         env=env).stdout.split()
    return float(out[-2]), float(out[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pair", nargs=2, action="append", metavar=("CHIP", "MODEL"),
                   help="a chip and a model to take the frontier of (repeatable; default gb200 deepseek-r1)")
    p.add_argument("-n", "--processes", type=int, default=7, help="timed processes per pair (the median is shown)")
    p.add_argument("--check", action="store_true", help="exit 1 if a median misses its target")
    args = p.parse_args(argv)
    pairs = args.pair or [("gb200", "deepseek-r1")]
    print(f"before: {load()}")
    missed = []
    with tempfile.TemporaryDirectory(prefix="jalapeno-first-frontier-") as cache:
        for chip, model in pairs:
            first_import, first_frontier = session(chip, model, cache)  # fills the cache
            times = [session(chip, model, cache) for _ in range(args.processes)]
            imports, frontiers = (statistics.median(t) for t in zip(*times))
            ok_import, ok_frontier = imports < IMPORT_TARGET_S, frontiers < FIRST_FRONTIER_TARGET_S
            missed += [] if ok_frontier else [f"first frontier {chip} / {model}"]
            missed += [] if ok_import else [f"import before {chip} / {model}"]
            print(f"{chip} / {model}, median of {args.processes} new processes: first frontier "
                  f"{frontiers * 1e3:.1f} ms after the import (target < {FIRST_FRONTIER_TARGET_S * 1e3:.0f} ms: "
                  f"{'met' if ok_frontier else 'MISSED'}); import jalapeno {imports:.2f} s "
                  f"(target < {IMPORT_TARGET_S:.0f} s: {'met' if ok_import else 'MISSED'})")
            print(f"    each process (ms, import + first frontier): "
                  + ", ".join(f"{a * 1e3:.0f} + {b * 1e3:.0f}" for a, b in times))
            print(f"    the pair's first process, filling the cache (not counted): import {first_import:.2f} s, "
                  f"first frontier {first_frontier * 1e3:.0f} ms")
    print(f"after: {load()}")
    if missed:
        print(f"target missed: {'; '.join(missed)}", file=sys.stderr)
    return 1 if (missed and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
