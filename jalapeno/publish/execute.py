"""Executing the chapters' notebooks: papermill in worker processes (one kernel each, in parallel),
the cache of executed notebooks keyed by their inputs, and ``refresh()``, which re-executes the
committed notebooks in place with their defaults (what nbval compares).

A worker and its kernel never outlive the build: Ctrl-C and SIGTERM end them, and on Linux so does the
build's death (``PR_SET_PDEATHSIG``), even by SIGKILL. Their temporary files (the kernels' connection
files, which hold the HMAC key of the kernel's messages, among them) go into the build's staging folder,
not the system's temporary folder, so an interrupted or killed build leaves none there.

Each cache entry carries a manifest of its files (size, SHA-256; :func:`.output.write_manifest`); an
entry that does not match it (truncated, edited, a file missing) is discarded with one line saying so and
the notebook executed again.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

import nbformat

from .. import cache, derived
from ..cache import folder as cache_dir
from ..data import data_dir
from ..errors import BuildError, JalapenoError
from . import output, scenarios

KERNEL = "python3"


#: Seconds a notebook's first execution takes (a cold build on 2 cores, ``benchmarks/build_speed.py``),
#: for the order of a build that has no timings of its own yet: longest first. Only the order matters.
EXPECTED_SECONDS = {"serving-model": 26, "reading-the-numbers": 17, "systems": 15, "pareto": 11, "caveats": 6,
                    "roofline": 5, "agents": 5, "verdict": 2, "claims": 2}


#: Cached executions kept per notebook (the oldest are removed).
CACHE_KEEP = 8


#: Notebook metadata that changes from run to run and is never committed.
_VOLATILE_NB_KEYS = ("papermill", "widgets")


_VOLATILE_CELL_KEYS = ("papermill", "execution", "collapsed", "scrolled")


#: Neither is a problem of the notebook: ipykernel 7 notes its loopback TCP transport at every start,
#: and logs the interrupt that shuts it down at the end of a run.
_KERNEL_NOISE = re.compile(r"Kernel is running over TCP without encryption|KeyboardInterrupt caught in kernel")


def strip_volatile(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove run timestamps, durations and papermill bookkeeping so reruns give no diff."""
    for key in _VOLATILE_NB_KEYS:
        nb.metadata.pop(key, None)
    for cell in nb.cells:
        for key in _VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
    return nb


#: The id of the cell papermill injects with the parameters (papermill gives it a random one).
INJECTED_CELL_ID = "injected-parameters"


def _execute(name: str, values: dict[str, object], target: Path, figures: Path,
             kernel: str | None = None, source: Path | None = None, tmp: Path | None = None) -> list[str]:
    """Execute notebook ``name`` (from ``source``, default ``notebooks/<name>.ipynb``) with ``values``
    into ``target``, its figures (SVG and PNG) into ``figures``; the temporary files of the execution and
    its kernel go into ``tmp`` (default: beside ``target``). Returns the warnings it printed (kernel
    stderr, stderr outputs of cells)."""
    import papermill
    import vl_convert as vlc

    kernel = kernel or KERNEL
    source = Path(source) if source else scenarios.notebook_path(name)
    tmp = Path(tmp) if tmp else target.parent / f".{target.name}.tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    saved_tmp = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = os.environ["TMPDIR"] = str(tmp)  # connection files here, and the kernel's files
    os.environ["JALAPENO_FIGURES_DIR"] = str(figures)
    log = tempfile.TemporaryFile(mode="w+b")
    saved_fd = os.dup(2)
    sys.stderr.flush()
    os.dup2(log.fileno(), 2)  # the kernel inherits fd 2: keep its messages for the summary
    try:
        papermill.execute_notebook(str(source), str(target), parameters=values,
                                   kernel_name=kernel, cwd=str(source.parent), progress_bar=False,
                                   report_mode=False, log_output=False)
    except papermill.PapermillExecutionError as exc:
        raise BuildError(f"notebook {name!r} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}") from None
    except Exception as exc:  # NoSuchKernel, timeouts: name the notebook and the kernel
        raise BuildError(f"notebook {name!r} (kernel {kernel!r}) could not run: {type(exc).__name__}: {exc}") from None
    finally:
        sys.stderr.flush()
        os.dup2(saved_fd, 2)
        os.close(saved_fd)
        os.environ.pop("JALAPENO_FIGURES_DIR", None)
        tempfile.tempdir = saved_tmp[0]
        if saved_tmp[1] is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_tmp[1]
        shutil.rmtree(tmp, ignore_errors=True)
        log.seek(0)
        kernel_lines = log.read().decode(errors="replace").splitlines()
        log.close()
    warnings = [f"{name}: kernel: {line.strip()}" for line in kernel_lines
                if line.strip() and not _KERNEL_NOISE.search(line)]
    nb = strip_volatile(nbformat.read(target, as_version=4))
    for cell in nb.cells:  # readers see the effective parameters once, as the chapter's own table
        tags = cell.metadata.get("tags", [])
        if "parameters" in tags or "injected-parameters" in tags:
            cell.metadata["tags"] = sorted(set(tags) | {"remove-cell"})
        if "injected-parameters" in tags:
            cell.id = INJECTED_CELL_ID  # equal inputs, equal files
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream" and out.get("name") == "stderr":
                warnings += [f"{name}: {line.strip()}" for line in out["text"].splitlines() if line.strip()]
    nbformat.write(nb, target)
    if figures.exists():
        for svg in sorted(figures.glob("*.svg")):
            svg.with_suffix(".png").write_bytes(vlc.svg_to_png(svg.read_text(), scale=2))
    return warnings


def _worker(name: str, values: dict[str, object], kernel: str, entry: str,
            source: str) -> tuple[str, float, list[str]]:
    """Execute one notebook into the cache entry folder ``entry`` (``notebook.ipynb``, ``figures/``,
    ``warnings.json``). Runs in a child process."""
    started = time.monotonic()
    folder = Path(entry)
    folder.mkdir(parents=True, exist_ok=True)
    warnings = _execute(name, values, folder / "notebook.ipynb", folder / "figures", kernel, Path(source),
                        folder.parent / f"{name}.tmp")
    (folder / "warnings.json").write_text(json.dumps(warnings, indent=1))
    return name, time.monotonic() - started, warnings


def _start_worker(name: str, values: dict[str, object], kernel: str, folder: Path,
                  source: Path) -> subprocess.Popen:
    """Start :func:`_worker` in a new Python process (its own kernel), so that notebooks execute in
    parallel; the arguments and the result travel as JSON files beside ``folder``, its stderr goes to
    ``<name>.stderr``. The worker ends when the build does (see :func:`_worker_main`)."""
    folder.mkdir(parents=True, exist_ok=True)
    job = folder.parent / f"{name}.job.json"
    job.write_text(json.dumps({"name": name, "values": values, "kernel": kernel, "entry": str(folder),
                               "source": str(source), "result": str(job.with_suffix(".result")),
                               "parent": os.getpid()}))
    with open(folder.parent / f"{name}.stderr", "wb") as err:
        return subprocess.Popen([sys.executable, "-c", "import sys; from jalapeno.publish.execute import _worker_main; "
                                 "sys.exit(_worker_main(sys.argv[1]))", str(job)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)


def _worker_result(name: str, proc: subprocess.Popen, folder: Path) -> tuple[str, float, list[str]]:
    """The result of a finished worker process; BuildError if it failed or died."""
    result_path = folder.parent / f"{name}.job.result"
    if not result_path.exists():
        err = (folder.parent / f"{name}.stderr").read_text(errors="replace")
        raise BuildError(f"notebook {name!r}: the worker process died (exit {proc.returncode}): {err[-2000:]}")
    result = json.loads(result_path.read_text())
    if "error" in result:
        raise BuildError(result["error"])
    return name, result["seconds"], result["warnings"]


def _descendants() -> set[int]:
    import psutil

    return {p.pid for p in psutil.Process().children(recursive=True)}


def _end_descendants(timeout_s: float = 5.0, keep: set[int] = frozenset()) -> None:
    """End the processes this one started (workers, kernels and theirs), except those in ``keep``
    (processes that were running before, such as a test's server): SIGTERM, then SIGKILL after
    ``timeout_s`` seconds for any still running."""
    import psutil

    children = [p for p in psutil.Process().children(recursive=True) if p.pid not in keep]
    for child in children:
        try:
            child.terminate()
        except psutil.NoSuchProcess:
            pass
    _, alive = psutil.wait_procs(children, timeout=timeout_s)
    for child in alive:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(alive, timeout=timeout_s)


def _die_with_parent() -> Callable[[int], None]:
    """``arm(signum)``: have the system send ``signum`` to the calling process when its parent dies
    (Linux ``PR_SET_PDEATHSIG``; elsewhere nothing). libc is looked up here, before any fork."""
    if not sys.platform.startswith("linux"):
        return lambda signum: None
    import ctypes

    prctl = ctypes.CDLL(None, use_errno=True).prctl
    PR_SET_PDEATHSIG = 1
    return lambda signum: prctl(PR_SET_PDEATHSIG, signum)


def end_with_this_process() -> Callable[[], None]:
    """A ``preexec_fn`` for ``subprocess``: the child is killed (SIGKILL) when this process dies, however
    it dies (the renderer of a killed build ends with it)."""
    arm, parent = _die_with_parent(), os.getpid()

    def preexec() -> None:
        arm(signal.SIGKILL)
        if os.getppid() != parent:  # this process died before the signal was armed
            os._exit(1)
    return preexec


def _end_with_parent(parent_pid: int) -> None:
    """In a worker: end (with its kernel) when the build that started it ends. SIGTERM ends the
    worker's processes and then the worker; SIGINT (a Ctrl-C in the terminal, which reaches the whole
    process group) is left to the build, which then sends SIGTERM; on Linux the kernel sends SIGTERM
    when the build dies (``PR_SET_PDEATHSIG``), also after a SIGKILL."""
    def stop(signum, frame):
        _end_descendants(timeout_s=2.0)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent()(signal.SIGTERM)
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        stop(signal.SIGTERM, None)


def _worker_main(job_file: str) -> int:
    """Entry point of a worker process: read the job, execute, write the result (or the error)."""
    job = json.loads(Path(job_file).read_text())
    _end_with_parent(job["parent"])
    result_path = Path(job["result"])
    try:
        _, seconds, warnings = _worker(job["name"], job["values"], job["kernel"], job["entry"], job["source"])
        result = {"seconds": seconds, "warnings": warnings}
    except JalapenoError as exc:
        result = {"error": str(exc)}
    except Exception as exc:  # an unexpected failure still names the notebook
        result = {"error": f"notebook {job['name']!r}: {type(exc).__name__}: {exc}"}
    result_path.write_text(json.dumps(result))
    return 0


def input_hash(name: str, values: dict[str, object], kernel: str = KERNEL) -> str:
    """The cache key (:func:`jalapeno.cache.key`) of an execution of notebook ``name``: the notebook file,
    the parameters, the kernel name, the package's source, the data files and the installed versions.
    Equal hashes give equal executed notebooks."""
    return cache.key("notebook", name, kernel, scenarios.notebook_path(name).read_bytes(), values, data=data_dir())


def _prune_cache(root: Path, name: str) -> None:
    cache.prune(root, f"{name}--*", CACHE_KEEP)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _damage(entry: Path) -> str | None:
    """What is wrong with cache entry ``entry`` (a file changed, added or missing against its manifest, or
    no manifest), or None."""
    foreign, missing = output.audit(entry)
    if not foreign and not missing and (entry / output.MANIFEST).is_file():
        return None
    return f"{foreign[0][0]}: {foreign[0][1]}" if foreign else f"{missing[0]}: missing" if missing else "no manifest"


def _intact_entry(entry: Path) -> bool:
    """Whether cache entry ``entry`` holds exactly the files its manifest lists, unchanged; a damaged one
    is discarded with one line saying so (the notebook is then executed again)."""
    return cache.intact(entry, _damage, shown=entry.name, again="executing the notebook again")


def _execute_all(runs: dict[str, dict[str, object]], stage: Path, use_cache: bool, jobs: int | None,
                 progress: bool) -> tuple[dict[str, Path], dict[str, str], list[str], dict[str, str]]:
    """Execute (or take from the cache) every planned notebook. Returns each notebook's entry folder,
    what happened to it (``executed in 2.1 s`` / ``cached``), the warnings and the input hashes."""
    from tqdm import tqdm

    kernel = KERNEL  # read at call time (tests point it at a missing kernel)
    root = cache_dir()
    entries: dict[str, Path] = {}
    status: dict[str, str] = {}
    warnings: list[str] = []
    todo: dict[str, tuple[str, Path]] = {}
    keys: dict[str, str] = {}
    for name, values in runs.items():
        key = keys[name] = input_hash(name, values, kernel)
        hit = root / f"{name}--{key[:20]}"
        if use_cache and _intact_entry(hit):
            os.utime(hit)
            entries[name], status[name] = hit, "cached (inputs unchanged)"
            warnings += json.loads((hit / "warnings.json").read_text())
        else:
            todo[name] = (key, stage / "run" / name)
    total = len(runs)
    bar = tqdm(total=total, desc="notebooks", unit="nb", file=sys.stderr, leave=False,
               disable=not (progress and sys.stderr.isatty()))
    bar.update(total - len(todo))
    for name in runs:
        if name in status:
            bar.write(f"  {name}: {status[name]}", file=sys.stderr)
    for name in todo:
        shown = ", ".join(f"{k}={v!r}" for k, v in runs[name].items()) or "defaults"
        bar.write(f"  {name}: executing ({shown})", file=sys.stderr)

    # longest first (by the last recorded execution time, else the expected one), so that a slow
    # notebook does not start last
    timings_file = root / "timings.json"
    try:
        timings = json.loads(timings_file.read_text())
    except (OSError, ValueError):
        timings = {}
    todo = dict(sorted(todo.items(), key=lambda item: -float(timings.get(item[0], EXPECTED_SECONDS.get(item[0], 0.0)))))

    def done(name: str, seconds: float, warns: list[str]) -> None:
        key, folder = todo[name]
        entries[name] = folder
        if use_cache:
            cache.store(root / f"{name}--{key[:20]}", lambda tmp: shutil.copytree(folder, tmp, dirs_exist_ok=True),
                        seal=output.write_manifest)
            _prune_cache(root, name)
            timings[name] = round(seconds, 1)
            cache.write_atomic(timings_file, json.dumps(timings, indent=1, sort_keys=True))
        status[name] = f"executed in {seconds:.1f} s"
        warnings.extend(warns)
        bar.update(1)
        bar.write(f"  {name}: {status[name]}", file=sys.stderr)

    workers = max(1, min(len(todo), jobs or os.cpu_count() or 1))
    before = _descendants()
    try:
        if workers == 1:
            for name, (_, folder) in todo.items():
                done(*_worker(name, runs[name], kernel, str(folder), str(scenarios.notebook_path(name))))
        else:
            waiting = list(todo)
            running: dict[str, subprocess.Popen] = {}
            while waiting or running:
                while waiting and len(running) < workers:
                    name = waiting.pop(0)
                    running[name] = _start_worker(name, runs[name], kernel, todo[name][1], scenarios.notebook_path(name))
                finished = [n for n, proc in running.items() if proc.poll() is not None]
                for name in finished:
                    done(*_worker_result(name, running.pop(name), todo[name][1]))
                if not finished:
                    time.sleep(0.05)
    except BaseException:  # a failed notebook, Ctrl-C, SIGTERM: no worker or kernel outlives the build
        _end_descendants(keep=before)
        raise
    finally:
        bar.close()
    return entries, status, warnings, keys


def refresh(notebooks: list[str] | None = None) -> list[Path]:
    """Re-execute committed notebooks in place with their defaults, as nbval will (kernel ``python3``,
    working directory ``notebooks/``), and strip volatile metadata. Returns the paths written. Raises
    :class:`jalapeno.derived.StaleTableError` first when a committed derived table is stale."""
    from nbclient import NotebookClient

    derived.check()  # the committed notebooks read the committed derived tables: stale ones first
    written = []
    for name in notebooks or scenarios.notebook_names():
        path = scenarios.notebook_path(name)
        nb = nbformat.read(path, as_version=4)
        _log(f"refreshing {path.name}")
        NotebookClient(nb, kernel_name=KERNEL, record_timing=False, timeout=600,
                       resources={"metadata": {"path": str(scenarios.NOTEBOOKS_DIR)}}).execute()
        nb = strip_volatile(nb)
        nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
        cache.write_atomic(path, lambda tmp, nb=nb: nbformat.write(nb, tmp), mode=0o644)
        written.append(path)
    return written
