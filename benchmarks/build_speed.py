"""Build speed: a cold full build, an incremental rebuild, a rerun with a new value, a build on a reader's runs.

    .venv/bin/python benchmarks/build_speed.py                 # all four, about 2 to 3 minutes on 2 cores
    .venv/bin/python benchmarks/build_speed.py --check         # exit 1 when a time misses its target
    .venv/bin/python benchmarks/build_speed.py --measure cold incremental --notebook pareto
    .venv/bin/python benchmarks/build_speed.py --measure rerun  # an untimed full build primes the cache first
    .venv/bin/python benchmarks/build_speed.py --chapters reading-the-numbers roofline --measure cold incremental

It measures a frozen copy of the working tree (package, data, notebooks, book, examples; not build/,
.venv or .git), its package's bytecode compiled as ``make`` compiles it, in a scratch folder, with an
empty cache of its own (``JALAPENO_CACHE_DIR``), so the repository and its build/.cache are left alone
and edits made elsewhere meanwhile do not disturb the timing. The four measurements (``--measure``,
default all), in this order, each with its target on a 2-core machine:

- ``cold``: a full build with the empty cache: every notebook executed (in parallel, one per core) and the
  book rendered (``jalapeno.publish.build.build``, in-process). Target: within 25 s.
- ``incremental``: the same build after a real edit of one notebook (``--notebook``, default
  ``roofline``; ``--edit prose``, the default, appends a sentence to its last markdown cell, which is
  served from the cache with the new prose, since the key leaves the prose out; ``--edit code`` appends
  a comment to its last code cell, which executes the notebook again; the cache is keyed on file contents, so a
  bare ``touch`` would re-execute nothing): that notebook executed, the others from the cache, the book
  rendered. Target: within 3 s.
- ``rerun``: the command a reader types to rerun a chapter with another value,
  ``jalapeno build reading-the-numbers -p baseline_power_w V`` (a new process: interpreter start and
  imports included), with a value derived from the clock (``1000 + unix seconds mod 3000 + 0.5``, W;
  ``--value`` to choose), so it is in no cache; every other input is warm: the full build before it (timed
  or not) and the same command at the default value, untimed, just before (so the render's Sphinx
  environment of that output folder and table of contents is warm too). Target: within 3 s.
- ``measurements``: ``jalapeno build --measurements examples/my-runs.jsonl`` (a new process): the file
  checked, the serving model's constants refitted on the shipped rows and the file's, every notebook
  re-executed on them (their cache keys hold the file's digest, so nothing of the default book's cache
  serves them: a cold build on a reader's runs, after the default book's cache was primed by the full
  build before it). Target: within 60 s.

When ``cold`` is not asked for, the same full build runs first, untimed, to prime the cache. Each
measurement prints its time against its target, with the machine's load average (``os.getloadavg``) and
core count before and after it: a time taken on a busy machine is not a measurement. The two builds in
a new process also print the build's own summary line (its time without the interpreter's start).
``--check`` exits 1 when a time misses its target (2 when a build fails).
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
TARGETS_S = {"cold": 25.0, "incremental": 3.0, "rerun": 3.0, "measurements": 60.0}
MEASURES = tuple(TARGETS_S)
RUNS_FILE = "examples/my-runs.jsonl"
SKIP = shutil.ignore_patterns(".git", ".venv", "build", "_build", "__pycache__", "*.egg-info", ".pytest_cache")


def load() -> str:
    """The machine's load average (1, 5, 15 min) and its core count, as one phrase."""
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def fresh_value() -> str:
    """A ``baseline_power_w`` (W) that no cache holds: from the clock, never an integer rating."""
    return f"{1000 + int(time.time()) % 3000 + 0.5}"


def timed_phases() -> dict[str, float]:
    """Wrap the build's stages (:mod:`jalapeno.publish.build`) so each call adds its seconds to the dict
    returned: the reader's runs read and refitted (``refit``), the validation schemes re-run with the
    runs in (``schemes``), the notebooks executed or taken from the cache (``execute``), the pages staged
    (``stage``), the Jupyter Book render (``render``)."""
    from jalapeno import schemes
    from jalapeno.publish import build, execute, pages

    spent = dict.fromkeys(("refit", "schemes", "execute", "stage", "render"), 0.0)

    def timing(owner, name: str, phase: str) -> None:
        inner = getattr(owner, name)

        def wrapper(*a, **k):
            started = time.monotonic()
            try:
                return inner(*a, **k)
            finally:
                spent[phase] += time.monotonic() - started

        setattr(owner, name, wrapper)

    for owner, name, phase in ((build, "_measured", "refit"), (schemes, "derive_for", "schemes"),
                               (execute, "run_notebooks", "execute"),
                               (pages, "stage", "stage"), (build, "_render", "render")):
        timing(owner, name, phase)
    return spent


def _cli(phase_file: str, args: list[str]) -> int:
    """``jalapeno ARGS`` in this process, its stages timed into ``phase_file`` (JSON)."""
    spent = timed_phases()
    from jalapeno.publish import cli

    try:
        return cli.main(args)
    finally:
        Path(phase_file).write_text(json.dumps(spent))


def _command(args: list[str], cwd: Path) -> dict:
    """Run ``jalapeno ARGS`` in a new process in ``cwd`` (the frozen copy): wall time, the build's
    summary line and its stages' seconds."""
    before = load()
    phase_file = cwd.parent / "phases.json"
    started = time.monotonic()
    proc = subprocess.run([sys.executable, str(cwd / "benchmarks" / "build_speed.py"), "--cli", str(phase_file),
                           *args], cwd=cwd, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if proc.returncode:
        raise SystemExit(f"jalapeno {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    summary = [line for line in proc.stderr.splitlines() if line.startswith("built ")]
    return {"seconds": seconds, "summary": summary[-1] if summary else "", "load_before": before,
            "load_after": load(), "phases": json.loads(phase_file.read_text())}


def _measure(measures: list[str], notebook: str, chapters: list[str] | None, value: str, edit: str) -> dict:
    """In the frozen copy (this process imports it through PYTHONPATH): the chosen measurements, timed."""
    import jalapeno
    from jalapeno.publish import build, scenarios

    copy = Path(os.environ["JALAPENO_BENCH_COPY"])
    assert Path(jalapeno.__file__).resolve().is_relative_to(copy.resolve()), f"imported {jalapeno.__file__}, not the copy"
    edited = scenarios.notebook_path(notebook)  # UnknownNameError lists the notebooks
    out = Path(os.environ["JALAPENO_CACHE_DIR"]).parent / "site"
    spent = timed_phases()
    result = {}
    for label in ("cold", "incremental"):
        if label == "incremental":
            if label not in measures:
                continue
            nb = json.loads(edited.read_text())
            cells = [c for c in nb["cells"] if c["cell_type"] == ("code" if edit == "code" else "markdown")]
            cells[-1]["source"] = "".join(cells[-1]["source"]) + (
                "\n# edited by the build benchmark" if edit == "code" else "\n\n(Edited by the build benchmark.)")
            edited.write_text(json.dumps(nb, indent=1, ensure_ascii=False))
        before = load()
        spent.update(dict.fromkeys(spent, 0.0))
        started = time.monotonic()
        build.build(chapters, out=out, progress=False)  # untimed when "cold" is not asked for: it primes the cache
        result[label] = {"seconds": time.monotonic() - started, "status": build.last_report.status,
                         "load_before": before, "load_after": load(), "phases": dict(spent)}
    if "rerun" in measures:  # first the same command at the default value, untimed: only the value is new
        result["rerun-primer"] = _command(["build", "reading-the-numbers"], copy)
        result["rerun"] = _command(["build", "reading-the-numbers", "-p", "baseline_power_w", value], copy)
    if "measurements" in measures:
        result["measurements"] = _command(["build", "--measurements", RUNS_FILE], copy)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", nargs="+", choices=MEASURES, default=list(MEASURES),
                        help="what to time (default: all, in this order)")
    parser.add_argument("--notebook", default="roofline", help="the notebook edited before the incremental build")
    parser.add_argument("--edit", choices=("prose", "code"), default="prose",
                        help="what the incremental build's edit changes: a markdown cell (default) or a code cell")
    parser.add_argument("--value", help="baseline_power_w of the rerun, W (default: a new one from the clock)")
    parser.add_argument("--check", action="store_true", help="exit 1 if a time misses its target")
    parser.add_argument("--chapters", nargs="+",
                        help="the cold and incremental builds of only these notebooks (default: the whole book)")
    parser.add_argument("--inner", help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--cli"]:  # one jalapeno command, its stages timed (see _command)
        return _cli(argv[1], argv[2:])
    args = parser.parse_args(argv)
    value = args.value or fresh_value()
    if args.inner:  # running inside the frozen copy
        Path(args.inner).write_text(json.dumps(_measure(args.measure, args.notebook, args.chapters, value, args.edit)))
        return 0
    print(f"before: {load()}")
    with tempfile.TemporaryDirectory(prefix="jalapeno-bench-") as scratch:
        scratch = Path(scratch)
        copy = scratch / "repo"
        shutil.copytree(ROOT, copy, ignore=SKIP)
        # its bytecode compiled, as make does after installing (where PYTHONDONTWRITEBYTECODE is set, every
        # process would compile the package again)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(copy / "jalapeno")], check=True)
        env = dict(os.environ, PYTHONPATH=str(copy), JALAPENO_CACHE_DIR=str(scratch / "cache"),
                   JALAPENO_BENCH_COPY=str(copy))
        env.pop("JALAPENO_DATA_DIR", None)
        result_file = scratch / "result.json"
        proc = subprocess.run([sys.executable, str(copy / "benchmarks" / "build_speed.py"), "--inner",
                               str(result_file), "--notebook", args.notebook, "--value", value, "--edit", args.edit,
                               "--measure", *args.measure]
                              + (["--chapters", *args.chapters] if args.chapters else []), env=env, cwd=copy,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(proc.stdout + proc.stderr, file=sys.stderr)
            return 2
        result = json.loads(result_file.read_text())
    missed = []
    book = f"{len(result['cold']['status'])} notebooks" if not args.chapters else ", ".join(args.chapters)
    what = {"cold": f"cold full build (empty cache; {book} executed + render, in-process)",
            "incremental": f"incremental rebuild after editing {args.notebook}'s {args.edit} (in-process)",
            "rerun": f"rerun with a new value: jalapeno build reading-the-numbers -p baseline_power_w {value} "
                     "(new process; cache warm otherwise)",
            "measurements": f"build on a reader's runs: jalapeno build --measurements {RUNS_FILE} (new process; "
                            "cold for it, the default book's cache primed)"}
    if "cold" not in args.measure:
        print(f"(cache primed by an untimed full build: {result['cold']['seconds']:.1f} s)")
    for label in args.measure:
        r, target = result[label], TARGETS_S[label]
        if label == "rerun":
            print(f"(the rerun primed by jalapeno build reading-the-numbers at its defaults, untimed: "
                  f"{result['rerun-primer']['seconds']:.1f} s)")
        met = r["seconds"] < target
        missed += [] if met else [label]
        print(f"{what[label]}: {r['seconds']:.1f} s (target < {target:.0f} s: {'met' if met else 'MISSED'})")
        print(f"    before: {r['load_before']}; after: {r['load_after']}")
        if r.get("summary"):
            print(f"    the build's own line: {r['summary']}")
        p = r["phases"]
        other = r["seconds"] - sum(p.values())
        print(f"    where it went: " + (f"reading and refitting the runs {p['refit']:.1f} s, " if p["refit"] > 0.05 else "")
              + (f"the validation schemes re-run with the runs in {p['schemes']:.1f} s, " if p["schemes"] > 0.05 else "")
              + f"notebooks {p['execute']:.1f} s, pages staged {p['stage']:.1f} s, render (Jupyter Book) "
              f"{p['render']:.1f} s, the rest {other:.1f} s"
              + (" (interpreter start, imports, parameter checks, figures and data copied, site moved)"
                 if "summary" in r else " (parameter checks, figures and data copied, site moved)"))
        for name, status in r.get("status", {}).items():
            print(f"    {name}: {status}")
    print(f"after: {load()}")
    if missed:
        print(f"target missed: {', '.join(missed)}", file=sys.stderr)
    return 1 if (missed and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
