"""The serving-model chapter's hold-out quotes under two floating-point paths: fails if they differ.

Runs :func:`jalapeno.calibration.holdout` refitting every fold (``JALAPENO_DERIVED=live``: not the committed
table) (default: the schemes the serving-model chapter shows, by chip,
by (model, chip) and by shape) in two child processes, one on this CPU's default path and one with OpenBLAS forced to another core type
(``OPENBLAS_CORETYPE``, default ``Sandybridge``: no FMA, AVX kernels) and numpy's runtime-dispatched SIMD
features that this CPU has switched off (``NPY_DISABLE_CPU_FEATURES``, e.g. ``X86_V3 X86_V4`` on an
AVX-512 machine), and compares what the chapter shows: the glued text of
:func:`jalapeno.calibration.holdout_quotes` and the cells of the hold-out table as
:func:`jalapeno.display.cell` formats them. Exit status 0 when every shown value matches,
1 otherwise (the differences are printed). About 50 s for both paths at once on a 2-core machine for
the chapter's 14 folds (11 refits); ``--by series`` adds the 22 series folds.

    .venv/bin/python benchmarks/numeric_paths.py [--by chip model-chip shape] [--coretype Sandybridge]
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
from jalapeno import calibration
from jalapeno.display import cell as number
held = pl.concat([calibration.holdout(by=b) for b in sys.argv[1:]])
cols = ["tpot_err_median", "tput_err_median", "frontier_distance"]
cells = {f"{r['held_out']} | {r['series']} | {c}": number(r[c]) for r in held.iter_rows(named=True) for c in cols}
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
print(json.dumps({"quotes": calibration.holdout_quotes(held), "cells": cells,
                  "simd": [k for k in __cpu_dispatch__ if __cpu_features__.get(k)]}))
"""


def dispatched_features() -> list[str]:
    """numpy's runtime-dispatch targets this CPU supports (what ``NPY_DISABLE_CPU_FEATURES`` can switch off)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]


def run(by: list[str], env: dict[str, str]) -> subprocess.Popen:
    """One path in a child process, with a cache of its own (an empty folder): a fold kept from an earlier
    run, or from the other path, would make the comparison vacuous."""
    cache = {"JALAPENO_CACHE_DIR": tempfile.mkdtemp(prefix="numeric-path-"),
             "JALAPENO_DERIVED": "live"}  # refit every fold, not the committed data/derived/holdout.jsonl
    return subprocess.Popen([sys.executable, "-c", CHILD, *by], env={**os.environ, **env, **cache},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--by", nargs="+", default=["chip", "model-chip", "shape"],
                    choices=["chip", "model-chip", "shape", "series"])
    ap.add_argument("--coretype", default="Sandybridge", help="OPENBLAS_CORETYPE of the second path")
    args = ap.parse_args(argv)
    paths = {"default": {}, "second": {"OPENBLAS_CORETYPE": args.coretype,
                                       "NPY_DISABLE_CPU_FEATURES": " ".join(dispatched_features())}}
    t0 = time.perf_counter()
    procs = {name: run(args.by, env) for name, env in paths.items()}  # both at once: one core each
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
    diff = [(k, a[part].get(k), b[part].get(k)) for part in ("quotes", "cells")
            for k in sorted(set(a[part]) | set(b[part])) if a[part].get(k) != b[part].get(k)]
    for k in ("ho_chip_median", "ho_chip_p90", "ho_model_chip_median", "ho_shape_median", "ho_series_median"):
        if k in a["quotes"]:
            print(f"  {k}: {a['quotes'][k]} % | {b['quotes'][k]} %")
    print(f"{len(a['quotes']) + len(a['cells'])} shown values compared in {time.perf_counter() - t0:.0f} s")
    for k, x, y in diff:
        print(f"DIFFERS {k}: {x!r} (default) vs {y!r} (second path)")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
