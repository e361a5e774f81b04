"""How long ``make test`` takes on a fresh clone, and where its time goes; then CI's other numeric paths.

    .venv/bin/python benchmarks/make_test_speed.py                     # about 10 to 15 minutes on 2 cores
    .venv/bin/python benchmarks/make_test_speed.py --check --no-numeric-paths
    .venv/bin/python benchmarks/make_test_speed.py -k test_display     # a quick trial of the script itself
    .venv/bin/python benchmarks/make_test_speed.py --no-numeric-paths -- tests/test_display.py -x

What a new user (and CI, ``.ci/run``) does, step by step, each in the clone:

1. ``git clone`` of this repository into a temporary folder, checked out at its current commit
   (``HEAD``: uncommitted changes are not in the clone; the script says when there are some);
2. ``make .venv/bin/jalapeno``: the virtual environment and the package with its ``book`` and ``test``
   extras, as ``make test`` creates it on first use. Timed and printed apart; not counted (pip's own cache
   makes it a minute or several, depending on the machine, not on the project);
3. ``make test``'s command, ``.venv/bin/python -m pytest``, with the project's options (``pyproject.toml``:
   ``-n auto --dist loadfile``, nbval on every notebook), the clone's cache ``build/.cache`` empty, as on a
   fresh clone. The script adds on its command line only ``--durations=0`` (every test's time, for the
   summary below), ``--basetemp`` in the temporary folder (other sessions' pytest runs share
   ``/tmp/pytest-of-$USER``) and ``-k`` or the arguments after ``--`` when given; not through
   ``PYTEST_ADDOPTS``, which the pytest run inside ``tests/test_perturbation.py`` would inherit. The figure
   is pytest's own time, read from its final summary line (``... passed ... in N s``, collection
   included); target: within 2 minutes;
4. unless ``--no-numeric-paths``: ``make test-numeric-paths`` (``tests/numeric_paths.py``: every notebook
   again under the two other floating-point paths CI checks, each with an empty cache), its wall time;
   target: within 2 more minutes.

pytest's whole output goes to a log file (``--log``, default ``/tmp/make_test_speed-<UTC time>.log``,
kept); the script prints pytest's final line, any failures, the ``--durations`` slowest tests (default 30,
in pytest's format: seconds, phase, test), the test files that take the longest, and the time grouped by
kind: nbval of the notebooks, the browser test, the tests that build the book, the refits, the chapters'
tests, the rest; a setup phase of 5 s or more is a shared fixture's (such as the whole book built once
for the tests that read a site) and is counted as its own kind. The durations are summed over pytest's
workers (``-n auto``: one per core), so their total is at most the number of workers times the wall time.
Each step prints the machine's load average (``os.getloadavg``) and core count before and after: a time
taken on a busy machine is not a measurement.
``--check`` exits 1 when a target is missed or a step fails.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTEST_TARGET_S, NUMERIC_PATHS_TARGET_S = 120.0, 120.0
SUMMARY = re.compile(r"^=+ (?P<counts>.+) in (?P<seconds>[\d.]+)s\b.*=+$")
DURATION = re.compile(r"^(?P<seconds>[\d.]+)s (?P<phase>setup|call|teardown)\s+(?P<test>\S.*)$")

#: The kinds of test, each by the files it holds (the first match wins; the rest are "unit tests and the rest").
KINDS = (
    ("nbval of the notebooks", lambda f: f.endswith(".ipynb")),
    ("the browser test", lambda f: f == "tests/test_browser.py"),
    ("tests that build the book (build, measurements build, output, faults, scenarios, dask, add chapter, "
     "cache, search, reflow)",
     lambda f: Path(f).stem in {"test_build", "test_build_measurements", "test_output", "test_faults",
                                "test_scenarios", "test_dask", "test_add_chapter", "test_cache", "test_search",
                                "test_pages_reflow"}),
    ("refits (validation schemes, derived stages, uncertainty, perturbation, reproducibility, a reader's runs)",
     lambda f: Path(f).stem in {"test_schemes", "test_derived", "test_uncertainty", "test_perturbation",
                                "test_reproducible", "test_measurements"}),
    ("the chapters' tests (tests/test_chapter_*.py)", lambda f: Path(f).stem.startswith("test_chapter_")),
)
REST = "unit tests and the rest"
#: A setup phase this long (s) is a shared fixture's: ``built_book`` (the whole book built once per session,
#: the other worker waiting for it), a module's own build or refit; counted as its own kind.
FIXTURE_S = 5.0
FIXTURES = "fixtures set up once (the shared built book, a module's build or refit; setup phases of 5 s or more)"


def load() -> str:
    """The machine's load average (1, 5, 15 min) and its core count, as one phrase."""
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" on {os.cpu_count()} cores"


def kind(test_file: str) -> str:
    return next((name for name, match in KINDS if match(test_file)), REST)


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a new user's shell: none of this session's virtual environment, Python path,
    pytest options or jalapeno settings (apart from ``JALAPENO_REQUIRE_BROWSER``, which CI sets)."""
    drop = {"VIRTUAL_ENV", "PYTHONPATH", "PYTEST_ADDOPTS", "PYTHONHOME"}
    env = {k: v for k, v in os.environ.items()
           if k not in drop and not (k.startswith("JALAPENO_") and k != "JALAPENO_REQUIRE_BROWSER")}
    if os.environ.get("VIRTUAL_ENV"):  # its bin/ off PATH, so `python3` is the system's, as for a new user
        venv_bin = str(Path(os.environ["VIRTUAL_ENV"]) / "bin")
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    return env | extra


def step(label: str, command: list[str], cwd: Path, log, env: dict[str, str]) -> tuple[int, float, str]:
    """Run ``command`` in ``cwd``, its output appended to ``log``: (exit status, wall seconds, its output)."""
    before = load()
    print(f"{label}: {shlex.join(command)} ... ({before})", flush=True)
    log.write(f"\n===== {label}: {shlex.join(command)} (in {cwd}) =====\n")
    log.flush()
    started = time.monotonic()
    proc = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.monotonic() - started
    log.write(proc.stdout)
    log.flush()
    print(f"    {seconds:.1f} s wall, exit status {proc.returncode}; after: {load()}", flush=True)
    return proc.returncode, seconds, proc.stdout


def pytest_seconds(output: str) -> list[tuple[str, float]]:
    """Every pytest final summary line of ``output``: (its counts, its seconds)."""
    return [(m["counts"], float(m["seconds"])) for line in output.splitlines()
            if (m := SUMMARY.match(line.strip()))]


def durations(output: str) -> list[tuple[float, str, str]]:
    """pytest's ``--durations`` lines of ``output``: (seconds, phase, test id), slowest first."""
    rows = [(float(m["seconds"]), m["phase"], m["test"].strip()) for line in output.splitlines()
            if (m := DURATION.match(line.strip()))]
    return sorted(rows, reverse=True)


def report_durations(rows: list[tuple[float, str, str]], top: int, wall: float, workers: int) -> None:
    """The slowest tests, the slowest files and the time by kind of test (seconds summed over workers)."""
    total = sum(r[0] for r in rows)
    print(f"\nthe {min(top, len(rows))} slowest test phases (pytest --durations; summed over the workers, "
          f"{total:.0f} s in all; at most {workers} x the {wall:.0f} s of wall time):")
    for seconds, phase, test in rows[:top]:
        print(f"    {seconds:7.2f}s {phase:<8s} {test}")
    by_file: dict[str, float] = defaultdict(float)
    tests: dict[str, set[str]] = defaultdict(set)
    for seconds, phase, test in rows:
        by_file[test.split("::")[0]] += seconds
        tests[test.split("::")[0]].add(test)
    print("\nthe slowest test files (setup, call and teardown summed; pytest lists phases of 5 ms or more):")
    for f, seconds in sorted(by_file.items(), key=lambda kv: -kv[1])[:15]:
        print(f"    {seconds:7.1f} s  {100 * seconds / total:4.1f} %  {f} ({len(tests[f])} tests listed)")
    by_kind: dict[str, float] = defaultdict(float)
    files: dict[str, set[str]] = defaultdict(set)
    for seconds, phase, test in rows:
        f = test.split("::")[0]
        k = FIXTURES if phase == "setup" and seconds >= FIXTURE_S else kind(f)
        by_kind[k] += seconds
        files[k].add(f)
    print("\nby kind of test (a setup phase of 5 s or more counted apart, as a fixture's):")
    for k, seconds in sorted(by_kind.items(), key=lambda kv: -kv[1]):
        print(f"    {seconds:7.1f} s  {100 * seconds / total:4.1f} %  {k} ({len(files[k])} files)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--no-numeric-paths", action="store_true", help="skip make test-numeric-paths")
    p.add_argument("--durations", type=int, default=30, metavar="N", help="the N slowest tests printed")
    p.add_argument("-k", metavar="EXPRESSION", help="pytest's -k (a quick trial: not the figure)")
    p.add_argument("--log", type=Path, help="pytest's whole output (default /tmp/make_test_speed-<UTC time>.log)")
    p.add_argument("--keep", action="store_true", help="keep the clone (its path is printed)")
    p.add_argument("--check", action="store_true", help="exit 1 if a target is missed or a step fails")
    p.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments (a quick trial)")
    args = p.parse_args(argv)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.strip()
    log_path = args.log or Path(f"/tmp/make_test_speed-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.log")
    print(f"before: {load()}")
    print(f"commit {commit[:12]}" + (" (the working tree has uncommitted changes: not in the clone)" if dirty else ""))
    print(f"pytest's output: {log_path}")
    scratch = Path(tempfile.mkdtemp(prefix="jalapeno-make-test-"))
    repo = scratch / "repo"
    failed, missed = [], []
    with log_path.open("w") as log:
        status, _, out = step("clone", ["git", "clone", "--quiet", str(ROOT), str(repo)], scratch, log, clean_env())
        if status == 0:
            status, _, out = step("checkout", ["git", "checkout", "--quiet", "--detach", commit], repo, log, clean_env())
        if status:
            print(out, file=sys.stderr)
            return 2
        status, venv_s, out = step("venv (make .venv/bin/jalapeno; not counted)", ["make", ".venv/bin/jalapeno"], repo,
                                   log, clean_env())
        if status:
            print(out[-3000:], file=sys.stderr)
            return 2
        addopts = ["--durations=0", f"--basetemp={scratch / 'pytest'}"]
        addopts += ["-k", args.k] if args.k else []
        addopts += args.pytest_args
        # make test's own command, with these arguments on its command line: PYTEST_ADDOPTS would reach the
        # pytest runs inside the tests too (tests/test_perturbation.py runs one), and --basetemp there would
        # wipe this run's folder
        status, wall, out = step("make test", [".venv/bin/python", "-m", "pytest", *addopts], repo, log, clean_env())
        summaries = pytest_seconds(out)
        failures = [line for line in out.splitlines() if line.startswith(("FAILED ", "ERROR "))]
        if status:
            failed.append(f"make test (exit status {status})")
        trial = " (a trial: -k or extra arguments given, not the figure)" if args.k or args.pytest_args else ""
        if summaries:
            counts, seconds = summaries[-1]
            met = seconds < PYTEST_TARGET_S
            missed += [] if met else ["make test"]
            print(f"\nmake test on a fresh clone: pytest's own time {seconds:.1f} s = {seconds / 60:.1f} min "
                  f"(target < {PYTEST_TARGET_S / 60:.0f} min: {'met' if met else 'MISSED'}){trial}; {counts}; "
                  f"make test's wall time {wall:.1f} s; the venv before it {venv_s:.0f} s (not counted)")
        else:
            failed.append("make test (no pytest summary line)")
            print(out[-3000:], file=sys.stderr)
        for line in failures:
            print(f"    {line}")
        workers = re.search(r"created: (\d+)/\d+ workers", out)
        report_durations(durations(out), args.durations, wall, int(workers[1]) if workers else 1)
        if not args.no_numeric_paths:
            print()
            status, np_wall, out = step("make test-numeric-paths", ["make", "test-numeric-paths"], repo, log, clean_env())
            if status:
                failed.append(f"make test-numeric-paths (exit status {status})")
            met = np_wall < NUMERIC_PATHS_TARGET_S
            missed += [] if met else ["make test-numeric-paths"]
            names = re.findall(r"^== numeric path (\S+): OPENBLAS", out, flags=re.M)
            parts = "; ".join(f"{name}: pytest {s:.1f} s ({c})" for name, (c, s) in zip(names, pytest_seconds(out)))
            print(f"make test-numeric-paths (the two other floating-point paths): {np_wall:.1f} s wall "
                  f"(target < {NUMERIC_PATHS_TARGET_S / 60:.0f} more min: {'met' if met else 'MISSED'}); {parts}")
    if args.keep:
        print(f"the clone: {repo}")
    else:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"after: {load()}")
    if failed or missed:
        print(f"failed: {', '.join(failed) or 'none'}; target missed: {', '.join(missed) or 'none'}", file=sys.stderr)
    return 1 if ((failed or missed) and args.check) else 0


if __name__ == "__main__":
    sys.exit(main())
