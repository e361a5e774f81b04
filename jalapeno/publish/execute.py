"""Executing the chapters' notebooks through any :class:`concurrent.futures.Executor` (a local pool of
spawned processes by default, a Dask cluster's with ``jalapeno build --dask``), their entries in the one
cache (:mod:`jalapeno.cache`), and ``refresh()``, which re-executes the committed notebooks in place with
their defaults (what nbval compares).

The task, :func:`execute_notebook`, runs papermill in a temporary folder of its own and returns the
files (:class:`Executed`), so it runs the same on any worker; the build writes them into the cache entry
of the notebook's inputs (:func:`input_hash`). One build executes a notebook, another build asking for
the same entry meanwhile waits for it and reads its result. An entry carries the manifest of its files
(:func:`.output.write_manifest`); one that does not match it is discarded with one line saying so and
the notebook executed again. The key holds the notebook without its prose (:func:`code_of`): an edit
of markdown text alone is served from the entry, the prose as it is now put in at staging
(:func:`with_prose`).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import signal
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import filelock
import nbformat

from .. import cache, charts, derived
from ..data import data_dir
from ..errors import BuildError, JalapenoError
from . import output, params, scenarios

KERNEL = "python3"
#: Seconds a notebook's first execution takes (a cold build on 2 cores, ``benchmarks/build_speed.py``),
#: for the order of a build that has no timings of its own yet: longest first. Only the order matters.
EXPECTED_SECONDS = {"serving-model": 26, "reading-the-numbers": 17, "systems": 15, "pareto": 11, "caveats": 6,
                    "roofline": 5, "agents": 5, "verdict": 2, "claims": 2}
#: Cached executions kept per notebook (the least recently used are removed).
CACHE_KEEP = 8
#: Notebook and cell metadata that change from run to run and are never committed.
_VOLATILE_NB_KEYS = ("papermill", "widgets")
_VOLATILE_CELL_KEYS = ("papermill", "execution", "collapsed", "scrolled")
#: Neither is a problem of the notebook: ipykernel 7 notes its loopback TCP transport at every start,
#: and logs the interrupt that shuts it down at the end of a run.
_KERNEL_NOISE = re.compile(r"Kernel is running over TCP without encryption|KeyboardInterrupt caught in kernel")
#: The id of the cell papermill injects with the parameters (papermill gives it a random one).
INJECTED_CELL_ID = "injected-parameters"


def log(message: str) -> None:
    """Print one line of the build's progress to stderr."""
    print(message, file=sys.stderr, flush=True)


def strip_volatile(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove run timestamps, durations and papermill bookkeeping so reruns give no diff."""
    for key in _VOLATILE_NB_KEYS:
        nb.metadata.pop(key, None)
    for cell in nb.cells:
        for key in _VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
    return nb


# ---- one execution, on any worker -------------------------------------------------------------------

@dataclass(frozen=True)
class Executed:
    """One execution: the notebook (``.ipynb`` bytes), its figure files by name (``.svg``, ``.png``,
    ``.csv``), its warnings and its duration in seconds."""

    notebook: bytes
    figures: dict[str, bytes]
    warnings: list[str]
    seconds: float

    def write(self, folder: Path) -> None:
        """Write the execution into ``folder`` (``notebook.ipynb``, ``figures/``, ``warnings.json``)."""
        (folder / "figures").mkdir(parents=True, exist_ok=True)
        (folder / "notebook.ipynb").write_bytes(self.notebook)
        for file, content in self.figures.items():
            (folder / "figures" / file).write_bytes(content)
        (folder / "warnings.json").write_text(json.dumps(self.warnings, indent=1))


#: The kernel managers of this process: a local worker ends their kernels before it ends.
_KERNELS: weakref.WeakSet = weakref.WeakSet()


def _kernel_manager(tmp: str, stderr: IO[bytes], env: dict[str, str] | None = None) -> type:
    """A jupyter_client kernel manager whose kernel has its ``TMPDIR`` in ``tmp``, writes figures to
    ``tmp/figures`` (``JALAPENO_FIGURES_DIR``) and its stderr to ``stderr``, with ``env`` (variables,
    e.g. ``JALAPENO_DATA_DIR``) added to its environment."""
    from jupyter_client.manager import AsyncKernelManager

    class Kernel(AsyncKernelManager):
        async def start_kernel(self, **kw):
            kw["env"] = {**kw.get("env", os.environ), **(env or {}), "TMPDIR": tmp,
                         "JALAPENO_FIGURES_DIR": os.path.join(tmp, "figures")}
            _KERNELS.add(self)
            await super().start_kernel(stderr=stderr, **kw)
    return Kernel


def execute_notebook(name: str, values: dict[str, object], notebook: bytes, kernel: str = KERNEL,
                     env: dict[str, str] | None = None) -> Executed:
    """Execute ``notebook`` (the ``.ipynb`` bytes of chapter ``name``) with parameters ``values`` in kernel
    ``kernel`` (working directory ``notebooks/``; ``env``: variables added to the kernel's environment,
    ``JALAPENO_DATA_DIR`` for a build on a reader's measurements) and return its files, each figure's
    Vega-Lite spec also drawn as SVG and PNG here (the chart engine starts once in this process, not in
    every kernel: about 0.9 s a notebook). Papermill writes the executed notebook once, when it ends or fails (not after every
    cell: a chapter of 1 MB of outputs rewritten some 30 times took 2 of its 14 s).
    Its temporary files and its kernel's (the connection file among them) go into the process's
    temporary folder and are removed at the end. The warnings are the kernel's stderr and the stderr
    outputs of cells. A plain function of picklable values: any executor's worker can run it, in any
    thread. Raises BuildError naming the notebook (and the cell, or the kernel) when it fails."""
    import papermill
    import vl_convert as vlc

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"{name}-") as tmp, tempfile.TemporaryFile() as stderr:
        source, target, figures = Path(tmp, "input.ipynb"), Path(tmp, "output.ipynb"), Path(tmp, "figures")
        source.write_bytes(notebook)
        try:
            papermill.execute_notebook(str(source), str(target), parameters=values, kernel_name=kernel,
                                       cwd=str(scenarios.NOTEBOOKS_DIR), progress_bar=False, report_mode=False,
                                       log_output=False, request_save_on_cell_execute=False,
                                       kernel_manager_class=_kernel_manager(tmp, stderr, env))
        except papermill.PapermillExecutionError as exc:
            raise BuildError(f"notebook {name!r} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}") from None
        except Exception as exc:  # NoSuchKernel, timeouts: name the notebook and the kernel
            raise BuildError(f"notebook {name!r} (kernel {kernel!r}) could not run: {type(exc).__name__}: {exc}") from None
        stderr.seek(0)
        warnings = [f"{name}: kernel: {line.strip()}" for line in stderr.read().decode(errors="replace").splitlines()
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
        files = {p.name: p.read_bytes() for p in sorted(figures.glob("*"))} if figures.is_dir() else {}
        for spec in [f for f in files if f.endswith(".vl.json")]:  # drawn here: one chart engine per worker
            svg = charts.to_svg(json.loads(files[spec]))
            files[spec[:-8] + ".svg"], files[spec[:-8] + ".png"] = svg.encode(), vlc.svg_to_png(svg, scale=2)
        return Executed(nbformat.writes(nb).encode() + b"\n", files, warnings, time.monotonic() - started)


# ---- the local pool ---------------------------------------------------------------------------------

def _end(*_) -> None:
    for manager in list(_KERNELS):  # SIGKILL, not waiting: this may interrupt the thread that waits on it
        process = getattr(manager.provisioner, "process", None)
        if process is not None and process.returncode is None:  # not reaped: its pid is still its own
            os.kill(process.pid, signal.SIGKILL)
    os._exit(1)


def _end_with_parent() -> None:
    multiprocessing.parent_process().join()  # returns when the build has ended, however it ended
    _end()


def worker_init(tmp: str | None = None) -> None:
    """Initializer of a local pool's worker, its temporary files in ``tmp``: SIGINT (a Ctrl-C reaches the
    process group) is left to the build, which ends its workers; SIGTERM ends the worker and its kernels
    at once, and so does the build's end, even by SIGKILL, seen by a thread blocked on the parent's
    sentinel. (A kernel whose worker died all the same ends itself: ipykernel watches ``JPY_PARENT_PID``.)"""
    if tmp:
        tempfile.tempdir = os.environ["TMPDIR"] = tmp
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end)
    threading.Thread(target=_end_with_parent, name="end-with-parent", daemon=True).start()


@contextmanager
def local_pool(workers: int, tmp: Path | None = None) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` spawned processes (:func:`worker_init`, their temporary files in ``tmp``) for
    the ``with`` block. When it ends by an exception (a failure, Ctrl-C, SIGTERM), the workers it started
    and their kernels are ended and the pending tasks cancelled before the exception goes on."""
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=worker_init, initargs=(tmp and str(tmp),))
    try:
        yield pool
    except BaseException:
        for child in set(multiprocessing.active_children()) - before:
            child.terminate()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown()


# ---- the cache entries and the build's executions ------------------------------------------------------

def code_of(notebook: bytes) -> bytes:
    """What an execution of ``notebook`` (``.ipynb`` bytes) reads of it: the notebook with the text of its
    markdown cells left out (their number, place, ids and metadata kept). A markdown cell is never
    executed, and its ``{glue:md}`` references are filled in from the code cells' outputs when the book
    is rendered, so two notebooks with equal code give equal outputs."""
    nb = json.loads(notebook)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "markdown":
            cell["source"] = ""
    return json.dumps(nb, sort_keys=True, ensure_ascii=False).encode()


def with_prose(executed: nbformat.NotebookNode, source: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """``executed`` (an execution of chapter ``name``, from the cache) with the markdown text of
    ``source`` (the notebook as it is now, whose :func:`code_of` equals the executed one's): cell by
    cell, the cell papermill injects with the parameters aside. BuildError, naming the chapter, when the
    cells do not pair up (which equal keys rule out)."""
    cells = [c for c in executed.cells if c.get("id") != INJECTED_CELL_ID]
    if [c.cell_type for c in cells] != [c.cell_type for c in source.cells]:
        raise BuildError(f"notebook {name!r}: its cached execution does not have the cells of notebooks/{name}.ipynb; "
                         "build again with --no-cache")
    for ran, now in zip(cells, source.cells):
        if ran.cell_type == "markdown":
            ran.source = now.source
    return executed


def input_hash(name: str, values: dict[str, object], kernel: str = KERNEL, *extra: object) -> str:
    """The cache key (:func:`jalapeno.cache.key`) of an execution of notebook ``name``: the notebook's code
    (:func:`code_of`: its prose left out), the parameters, the kernel name, ``extra`` (what else the
    execution reads: a reader's measurements file's SHA-256), the package's source, the data files (of
    :func:`jalapeno.data.data_dir`) and the installed versions. Equal hashes give equal outputs of the
    code cells (the prose is the notebook's own, :func:`with_prose`)."""
    return cache.key("notebook", name, kernel, code_of(scenarios.notebook_path(name).read_bytes()), values, *extra,
                     data=data_dir())


def _damage(entry: Path) -> str | None:
    """What is wrong with cache entry ``entry`` (a file changed, added or missing against its manifest, or
    no manifest), or None."""
    foreign, missing = output.audit(entry)
    if not foreign and not missing and (entry / output.MANIFEST).is_file():
        return None
    return f"{foreign[0][0]}: {foreign[0][1]}" if foreign else f"{missing[0]}: missing" if missing else "no manifest"


def _intact(entry: Path) -> bool:
    return cache.intact(entry, _damage, shown=entry.name, again="executing the notebook again")


def _result(name: str, future: Future) -> Executed:
    try:
        return future.result()
    except JalapenoError:
        raise
    except Exception as exc:  # a worker that died, a cluster's error: still names the notebook
        raise BuildError(f"notebook {name!r}: {type(exc).__name__}: {exc}") from None


def run_notebooks(runs: dict[str, dict[str, object]], stage: Path, use_cache: bool = True,
                  jobs: int | None = None, progress: bool = True, executor: Executor | None = None,
                  env: dict[str, str] | None = None, extra: tuple[object, ...] = (),
                  ) -> tuple[dict[str, Path], dict[str, str], list[str], dict[str, str]]:
    """Execute (or take from the cache) every notebook of ``runs`` (name: parameters), each in its own
    kernel: through ``executor`` if given (a Dask cluster's, say), else in a :func:`local_pool` of
    ``jobs`` processes (default: one per core) whose temporary files go into ``stage/run``. ``env``:
    variables added to each kernel's environment (:func:`execute_notebook`); ``extra``: what else the
    executions read, in their keys (:func:`input_hash`).

    With ``use_cache``, each execution becomes the cache entry of its inputs, under the entry's lock: a
    notebook another build is executing is waited for and read, not executed twice. Without it, the
    executions go into ``stage/run/<name>``. Returns each notebook's entry folder, what happened to it
    (``executed in 2.1 s`` / ``cached``), the warnings and the input hashes. Raises BuildError naming
    the first notebook that failed; the other executions are then cancelled."""
    from tqdm import tqdm

    kernel = KERNEL  # read at call time (tests point it at a missing kernel)
    root, tmp = cache.folder(), stage / "run"  # the local kernels' temporary files: never the system's folder
    tmp.mkdir(parents=True, exist_ok=True)
    keys = {name: input_hash(name, values, kernel, *extra) for name, values in runs.items()}
    entries = {name: root / f"{name}--{keys[name][:20]}" if use_cache else tmp / name for name in runs}
    status: dict[str, str] = {}
    locks: dict[str, filelock.BaseFileLock] = {}
    elsewhere: list[str] = []  # entries another build is computing
    for name in runs:
        if use_cache and _intact(entries[name]):
            os.utime(entries[name])
            status[name] = "cached (inputs unchanged)"
        elif use_cache:
            try:
                (held := cache.lock(entries[name], wait=False)).acquire()
                locks[name] = held
            except filelock.Timeout:
                elsewhere.append(name)
    timings_file = root / "timings.json"
    try:
        timings = json.loads(timings_file.read_text())
    except (OSError, ValueError):
        timings = {}
    # longest first (by the last recorded execution time, else the expected one), so that a slow
    # notebook does not start last
    todo = sorted((n for n in runs if n not in status and n not in elsewhere),
                  key=lambda n: -float(timings.get(n, EXPECTED_SECONDS.get(n, 0.0))))
    bar = tqdm(total=len(runs), initial=len(status), desc="notebooks", unit="nb", file=sys.stderr, leave=False,
               disable=not (progress and sys.stderr.isatty()))
    for name in runs:
        shown = ", ".join(f"{k}={params.as_typed(v)}" for k, v in runs[name].items()) or "defaults"  # as -p takes it
        what = status.get(name) or ("waiting for another build that executes it" if name in elsewhere
                                    else f"executing ({shown})")
        bar.write(f"  {name}: {what}", file=sys.stderr)

    def done(name: str, result: Executed) -> None:
        if use_cache:
            cache.put(entries[name], result.write, seal=output.write_manifest)
            locks.pop(name).release()
            cache.prune(root, f"{name}--*", CACHE_KEEP)
            timings[name] = round(result.seconds, 1)
            cache.write_atomic(timings_file, json.dumps(timings, indent=1, sort_keys=True))
        else:
            result.write(entries[name])
        status[name] = f"executed in {result.seconds:.1f} s"
        bar.update(1)
        bar.write(f"  {name}: {status[name]}", file=sys.stderr)

    def submit(pool: Executor, name: str) -> Future:
        return pool.submit(execute_notebook, name, runs[name], scenarios.notebook_path(name).read_bytes(), kernel,
                           *((env,) if env else ()))

    workers = max(1, min(len(todo) + len(elsewhere), jobs or os.cpu_count() or 1))
    futures: dict[Future, str] = {}
    try:
        with bar, (local_pool(workers, tmp) if executor is None else nullcontext(executor)) as pool:
            futures = {submit(pool, name): name for name in todo}
            for future in as_completed(futures):
                done(futures[future], _result(futures[future], future))
            for name in elsewhere:  # the other build's result, once it has stored it; else executed here
                (held := cache.lock(entries[name])).acquire()
                locks[name] = held
                if _intact(entries[name]):
                    locks.pop(name).release()
                    status[name] = "cached (executed by another build meanwhile)"
                    bar.update(1)
                    bar.write(f"  {name}: {status[name]}", file=sys.stderr)
                else:
                    done(name, _result(name, submit(pool, name)))
    except BaseException:  # a failed notebook, Ctrl-C, SIGTERM: nothing more runs for this build
        for future in futures:
            future.cancel()
        raise
    finally:
        for held in locks.values():
            held.release()
    warnings = [w for name in runs for w in json.loads((entries[name] / "warnings.json").read_text())]
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
        log(f"refreshing {path.name}")
        with tempfile.TemporaryDirectory(prefix=f"{name}-") as tmp, tempfile.TemporaryFile() as stderr:
            NotebookClient(nb, kernel_name=KERNEL, record_timing=False, timeout=600,
                           kernel_manager_class=_kernel_manager(tmp, stderr),
                           resources={"metadata": {"path": str(scenarios.NOTEBOOKS_DIR)}}).execute()
            stderr.seek(0)
            for line in stderr.read().decode(errors="replace").splitlines():  # as a build reports it
                if line.strip() and not _KERNEL_NOISE.search(line):
                    log(f"{path.stem}: kernel: {line.strip()}")
        nb = strip_volatile(nb)
        nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
        cache.write_atomic(path, lambda tmp, nb=nb: nbformat.write(nb, tmp), mode=0o644)
        written.append(path)
    return written
