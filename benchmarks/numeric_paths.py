"""The serving-model chapter's validation values under two floating-point paths: fails if they differ.

Refits every fold of the chosen validation schemes (:mod:`jalapeno.schemes`; ``JALAPENO_DERIVED=live``:
not the committed table; default every scheme) in two child processes, one on this CPU's default path
and one with OpenBLAS forced to another core type (``OPENBLAS_CORETYPE``, default ``Sandybridge``: no
FMA, AVX kernels) and numpy's runtime-dispatched SIMD features that this CPU has switched off
(``NPY_DISABLE_CPU_FEATURES``, e.g. ``X86_V3 X86_V4`` on an AVX-512 machine), and compares what the
chapter shows: each held-out series' frontier distance and each scheme's median, p90, band and coverage,
as :func:`jalapeno.display.cell` formats them. Exit status 0 when every shown value matches, 1 otherwise
(the differences are printed). About 1 to 2 minutes for both paths at once on a 2-core machine.

    .venv/bin/python benchmarks/numeric_paths.py [--schemes generation model-chip shape anchored] [--coretype Sandybridge]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, sys
import polars as pl
from jalapeno import calibration, schemes
from jalapeno.display import cell
errors = pl.concat([schemes.scheme_errors(s) for s in sys.argv[1:]])
cells = {f"{r['fold']} | {r['series']} | frontier_distance": cell(r["frontier_distance"]) for r in errors.iter_rows(named=True)}
for s in sys.argv[1:]:
    e = errors.filter(pl.col("scheme") == s)
    stat, cov = calibration.frontier_error(e), calibration.coverage(e)
    cells |= {f"{s} | median": cell(stat.median), f"{s} | p90": cell(stat.p90),
              f"{s} | band": cell(calibration.band_half_width(e)), f"{s} | coverage": cell(cov.share)}
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
print(json.dumps({"cells": cells, "simd": [k for k in __cpu_dispatch__ if __cpu_features__.get(k)]}))
"""


def dispatched_features() -> list[str]:
    """numpy's runtime-dispatch targets this CPU supports (what ``NPY_DISABLE_CPU_FEATURES`` can switch off)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]


def run(names: list[str], env: dict[str, str]) -> subprocess.Popen:
    """One path in a child process, with a cache of its own (an empty folder): a fold kept from an earlier
    run, or from the other path, would make the comparison vacuous."""
    cache = {"JALAPENO_CACHE_DIR": tempfile.mkdtemp(prefix="numeric-path-"),
             "JALAPENO_DERIVED": "live"}  # refit every fold, not the committed data/derived/schemes.jsonl
    return subprocess.Popen([sys.executable, "-c", CHILD, *names], env={**os.environ, **env, **cache},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    from jalapeno.schemes import SCHEMES

    ap.add_argument("--schemes", nargs="+", default=list(SCHEMES), choices=list(SCHEMES))
    ap.add_argument("--coretype", default="Sandybridge", help="OPENBLAS_CORETYPE of the second path")
    args = ap.parse_args(argv)
    paths = {"default": {}, "second": {"OPENBLAS_CORETYPE": args.coretype,
                                       "NPY_DISABLE_CPU_FEATURES": " ".join(dispatched_features())}}
    t0 = time.perf_counter()
    procs = {name: run(args.schemes, env) for name, env in paths.items()}  # both at once: one core each
    out = {}
    for name, p in procs.items():
        stdout, stderr = p.communicate()
        if p.returncode:
            print(f"{name} path failed:\n{stderr}", file=sys.stderr)
            return 2
        out[name] = json.loads(stdout.strip().splitlines()[-1])
    for name, env in paths.items():
        print(f"{name:>7} path: {env or 'this CPU as found'}; numpy dispatch targets in use: {', '.join(out[name]['simd']) or 'baseline only'}")
    a, b = out["default"], out["second"]
    diff = [(k, a["cells"].get(k), b["cells"].get(k)) for k in sorted(set(a["cells"]) | set(b["cells"]))
            if a["cells"].get(k) != b["cells"].get(k)]
    for s in args.schemes:
        print(f"  {s}: median {a['cells'][f'{s} | median']} | {b['cells'][f'{s} | median']}")
    print(f"{len(a['cells'])} shown values compared in {time.perf_counter() - t0:.0f} s")
    for k, x, y in diff:
        print(f"DIFFERS {k}: {x!r} (default) vs {y!r} (second path)")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
