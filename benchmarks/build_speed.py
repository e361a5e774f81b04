"""Build speed: a cold full build and an incremental rebuild after editing one notebook.

    .venv/bin/python benchmarks/build_speed.py                 # edits roofline for the incremental build
    .venv/bin/python benchmarks/build_speed.py --notebook pareto --check
    .venv/bin/python benchmarks/build_speed.py --chapters reading-the-numbers roofline

It measures a frozen copy of the working tree (package, data, notebooks, book; not build/, .venv or
.git) in a scratch folder, with an empty cache of its own, so the repository and build/.cache are left
alone and edits made elsewhere meanwhile do not disturb the timing. The cold build executes every
notebook (in parallel, one per core) and renders the book; the incremental build follows a real edit
of one notebook (a sentence appended to its last markdown cell: the cache is keyed on file contents,
so a bare ``touch`` would re-execute nothing). Prints both times and each notebook's part. Targets on
a 2-core machine: cold under 60 s, incremental under 10 s; ``--check`` exits 1 when one is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLD_TARGET_S = 60.0
INCREMENTAL_TARGET_S = 10.0
SKIP = shutil.ignore_patterns(".git", ".venv", "build", "_build", "__pycache__", "*.egg-info", ".pytest_cache")


def _measure(notebook: str, chapters: list[str] | None) -> dict:
    """In the frozen copy (this process imports it through PYTHONPATH): both builds, timed."""
    from jalapeno.publish import build, scenarios

    edited = scenarios.notebook_path(notebook)  # UnknownNameError lists the notebooks
    out = Path(os.environ["JALAPENO_CACHE_DIR"]).parent / "site"
    result = {}
    for label in ("cold", "incremental"):
        if label == "incremental":
            nb = json.loads(edited.read_text())
            markdown = [c for c in nb["cells"] if c["cell_type"] == "markdown"]
            markdown[-1]["source"] = "".join(markdown[-1]["source"]) + "\n\n(Edited by the build benchmark.)"
            edited.write_text(json.dumps(nb, indent=1, ensure_ascii=False))
        started = time.monotonic()
        build.build(chapters, out=out, progress=False)
        result[label] = {"seconds": time.monotonic() - started, "status": build.last_report.status}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebook", default="roofline", help="the notebook edited before the incremental build")
    parser.add_argument("--check", action="store_true", help="exit 1 if a time misses its target")
    parser.add_argument("--chapters", nargs="+", help="build only these notebooks (default: the whole book)")
    parser.add_argument("--inner", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner:  # running inside the frozen copy
        Path(args.inner).write_text(json.dumps(_measure(args.notebook, args.chapters)))
        return 0
    with tempfile.TemporaryDirectory(prefix="jalapeno-bench-") as scratch:
        scratch = Path(scratch)
        copy = scratch / "repo"
        shutil.copytree(ROOT, copy, ignore=SKIP)
        env = dict(os.environ, PYTHONPATH=str(copy), JALAPENO_CACHE_DIR=str(scratch / "cache"))
        env.pop("JALAPENO_DATA_DIR", None)
        result_file = scratch / "result.json"
        proc = subprocess.run([sys.executable, str(copy / "benchmarks" / "build_speed.py"), "--inner",
                               str(result_file), "--notebook", args.notebook]
                              + (["--chapters", *args.chapters] if args.chapters else []), env=env, cwd=copy)
        if proc.returncode != 0:
            return proc.returncode
        result = json.loads(result_file.read_text())
    cold, incremental = result["cold"], result["incremental"]
    print(f"cold full build (cache cleared; {len(cold['status'])} notebooks executed + render; "
          f"{os.cpu_count()} cores): {cold['seconds']:.1f} s (target < {COLD_TARGET_S:.0f} s)")
    for name, status in cold["status"].items():
        print(f"    {name}: {status}")
    print(f"incremental rebuild after editing {args.notebook}: {incremental['seconds']:.1f} s "
          f"(target < {INCREMENTAL_TARGET_S:.0f} s)")
    for name, status in incremental["status"].items():
        print(f"    {name}: {status}")
    missed = cold["seconds"] >= COLD_TARGET_S or incremental["seconds"] >= INCREMENTAL_TARGET_S
    if missed:
        print("a target was missed", file=sys.stderr)
    return 1 if (missed and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
