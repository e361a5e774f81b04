"""Every committed notebook re-executed and compared (nbval) under the floating-point paths CI checks.

``make test`` compares the notebooks on this CPU's default path. This script first prints the CPU model
and numpy's runtime-dispatched SIMD features, then runs ``pytest notebooks`` (nbval) once per other path,
each with an empty cache of its own (a temporary folder, removed afterwards), so that a result kept from
the default path cannot make the comparison vacuous:

- ``no-avx512``: ``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" OPENBLAS_CORETYPE=Haswell``
  (the AVX2 path of an AVX-512 machine);
- ``no-simd``: every runtime-dispatched SIMD feature of numpy off, ``OPENBLAS_CORETYPE=Sandybridge``.

numpy refuses to disable a feature the CPU lacks, so only the features the CPU has are switched off; a
path whose switched-off features are none prints that its numpy path equals the default (then the
perturbation test of ``tests/test_perturbation.py`` is the proof that the outputs do not hang on last
bits). Exit status: 0 when every path passes, else the first failing path's pytest status.

    .venv/bin/python tests/numeric_paths.py [PATH ...]        # default: both
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Each path: the numpy features it switches off (those the CPU has) and OpenBLAS's core type.
PATHS = {"no-avx512": (("X86_V4", "AVX512_ICL", "AVX512_SPR"), "Haswell"),
         "no-simd": (None, "Sandybridge")}  # None: every dispatched feature


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``; the platform's processor name elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def enabled_features() -> list[str]:
    """numpy's runtime-dispatch targets this CPU has (what ``NPY_DISABLE_CPU_FEATURES`` can switch off)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

    return [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]


def main(argv: list[str]) -> int:
    names = argv or list(PATHS)
    unknown = [n for n in names if n not in PATHS]
    if unknown:
        print(f"numeric_paths: unknown path {unknown[0]!r}; valid paths: {', '.join(PATHS)}", file=sys.stderr)
        return 2
    have = enabled_features()
    print(f"CPU: {cpu_model()} ({platform.machine()}); numpy's enabled runtime SIMD features: "
          f"{' '.join(have) or 'none'}", flush=True)
    for name in names:
        wanted, coretype = PATHS[name]
        off = [f for f in (have if wanted is None else wanted) if f in have]
        note = (f"numpy features off: {' '.join(off)}" if off else
                "numpy's path equals the default (this CPU has none of "
                f"{' '.join(wanted or ['its dispatched features'])})")
        print(f"== numeric path {name}: OPENBLAS_CORETYPE={coretype}; {note}", flush=True)
        with tempfile.TemporaryDirectory(prefix="jalapeno-numeric-path-") as cache:
            env = {**os.environ, "OPENBLAS_CORETYPE": coretype, "NPY_DISABLE_CPU_FEATURES": " ".join(off),
                   "JALAPENO_CACHE_DIR": cache}
            status = subprocess.run([sys.executable, "-m", "pytest", "notebooks"], cwd=ROOT, env=env).returncode
        if status:
            print(f"== numeric path {name}: FAILED (pytest exit {status})", flush=True)
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
