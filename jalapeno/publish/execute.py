"""Executing the chapters' notebooks through any :class:`concurrent.futures.Executor` (a local process
pool by default, a Dask cluster's with ``jalapeno build --dask``), the cache of executed notebooks keyed
by their inputs, and ``refresh()``, which re-executes the committed notebooks in place with their
defaults (what nbval compares).

The task, :func:`execute_notebook`, runs papermill in a temporary folder of its own and returns the
files (:class:`Executed`); the build writes them into its stage and the cache. A cache entry carries a
manifest of its files (:func:`.output.write_manifest`); one that does not match it is discarded with one
line saying so and the notebook executed again.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import multiprocessing
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import tomllib
import weakref
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import nbformat

from .. import derived
from ..data import REPO_ROOT, data_dir, folder_digest
from ..data import cache_dir as data_cache_dir
from ..errors import BuildError, JalapenoError
from . import output, scenarios

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the whole package (jalapeno/), not only publish/
KERNEL = "python3"
#: Bump to invalidate every cached notebook (the layout of a cache entry changed).
CACHE_FORMAT = "3"
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


@dataclass(frozen=True)
class Executed:
    """One execution: the notebook (``.ipynb`` bytes), its figure files by name (``.svg``, ``.png``,
    ``.csv``), its warnings and its duration in seconds."""

    notebook: bytes
    figures: dict[str, bytes]
    warnings: list[str]
    seconds: float


#: The kernel managers of this process: a local worker ends their kernels before it ends.
_KERNELS: weakref.WeakSet = weakref.WeakSet()


def _kernel_manager(tmp: str, stderr: IO[bytes]) -> type:
    """A jupyter_client kernel manager whose kernel has its ``TMPDIR`` in ``tmp``, writes figures to
    ``tmp/figures`` (``JALAPENO_FIGURES_DIR``) and its stderr to ``stderr``."""
    from jupyter_client.manager import AsyncKernelManager

    class Kernel(AsyncKernelManager):
        async def _async_launch_kernel(self, kernel_cmd, **kw):
            kw["env"] = {**kw.get("env", os.environ), "TMPDIR": tmp,
                         "JALAPENO_FIGURES_DIR": os.path.join(tmp, "figures")}
            _KERNELS.add(self)
            await super()._async_launch_kernel(kernel_cmd, stderr=stderr, **kw)
    return Kernel


def execute_notebook(name: str, values: dict[str, object], notebook: bytes, kernel: str = KERNEL) -> Executed:
    """Execute ``notebook`` (the ``.ipynb`` bytes of chapter ``name``) with parameters ``values`` in kernel
    ``kernel`` (working directory ``notebooks/``) and return its files, its figures' SVGs also as PNGs.
    Its temporary files and its kernel's (the connection file among them) go into the process's
    temporary folder and are removed at the end. The warnings are the kernel's stderr and the stderr
    outputs of cells. A plain function of picklable values: any executor's worker can run it, in any
    thread. Raises BuildError naming the notebook (and the cell, or the kernel) when it fails."""
    import papermill
    import vl_convert as vlc

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"{name}-") as tmp, tempfile.TemporaryFile() as log:
        source, target, figures = Path(tmp, "input.ipynb"), Path(tmp, "output.ipynb"), Path(tmp, "figures")
        source.write_bytes(notebook)
        try:
            papermill.execute_notebook(str(source), str(target), parameters=values, kernel_name=kernel,
                                       cwd=str(scenarios.NOTEBOOKS_DIR), progress_bar=False, report_mode=False,
                                       log_output=False, kernel_manager_class=_kernel_manager(tmp, log))
        except papermill.PapermillExecutionError as exc:
            raise BuildError(f"notebook {name!r} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}") from None
        except Exception as exc:  # NoSuchKernel, timeouts: name the notebook and the kernel
            raise BuildError(f"notebook {name!r} (kernel {kernel!r}) could not run: {type(exc).__name__}: {exc}") from None
        log.seek(0)
        warnings = [f"{name}: kernel: {line.strip()}" for line in log.read().decode(errors="replace").splitlines()
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
        for svg in [f for f in files if f.endswith(".svg")]:
            files[svg[:-4] + ".png"] = vlc.svg_to_png(files[svg].decode(), scale=2)
        return Executed(nbformat.writes(nb).encode() + b"\n", files, warnings, time.monotonic() - started)


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


def _pinned_packages() -> list[str]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"]) + [r for extra in project["optional-dependencies"].values() for r in extra]
    return [re.split(r"[=<>!~ \[;]", r, maxsplit=1)[0] for r in reqs]


def _installed(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def input_hash(name: str, values: dict[str, object], kernel: str = KERNEL) -> str:
    """SHA-256 of everything an execution of notebook ``name`` depends on: the notebook file, the
    parameters, the kernel name, the package's source, the data files and the installed versions of
    the pinned packages. Equal hashes give equal executed notebooks."""
    h = hashlib.sha256(f"format {CACHE_FORMAT}\0{name}\0{kernel}\0{sys.version}\0".encode())
    h.update(scenarios.notebook_path(name).read_bytes())
    h.update(json.dumps(values, sort_keys=True, default=repr).encode())
    h.update(folder_digest(PACKAGE_DIR, "*.py").encode())
    h.update(folder_digest(data_dir()).encode())
    h.update(_installed_versions().encode())
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def _installed_versions() -> str:
    return json.dumps({d: _installed(d) for d in _pinned_packages()}, sort_keys=True)


def cache_dir() -> Path:
    """Where executed notebooks are cached: :func:`jalapeno.data.cache_dir` (``$JALAPENO_CACHE_DIR`` or
    ``build/.cache``)."""
    return data_cache_dir()


def _prune_cache(root: Path, name: str) -> None:
    entries = sorted(root.glob(f"{name}--*"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[CACHE_KEEP:]:
        shutil.rmtree(old, ignore_errors=True)


def log(message: str) -> None:
    """Print one line of the build's progress to stderr."""
    print(message, file=sys.stderr, flush=True)


def _intact_entry(entry: Path) -> bool:
    """Whether cache entry ``entry`` holds exactly the files its manifest lists, unchanged; if not, one
    line says what is wrong (the caller discards it and executes the notebook again)."""
    foreign, missing = output.audit(entry)
    if not foreign and not missing and (entry / output.MANIFEST).is_file():
        return True
    what = (f"{foreign[0][0]}: {foreign[0][1]}" if foreign else f"{missing[0]}: missing" if missing
            else "no manifest")
    log(f"  discarded the damaged cache entry {entry.name} ({what}); executing the notebook again")
    return False


def run_notebooks(runs: dict[str, dict[str, object]], stage: Path, use_cache: bool = True,
                  jobs: int | None = None, progress: bool = True, executor: Executor | None = None,
                  ) -> tuple[dict[str, Path], dict[str, str], list[str], dict[str, str]]:
    """Execute (or take from the cache) every notebook of ``runs`` (name: parameters), each in its own
    kernel: through ``executor`` if given (a Dask cluster's, say), else in a :func:`local_pool` of
    ``jobs`` processes (default: one per core) whose temporary files go into ``stage``. Each result is
    written into ``stage/run/<name>`` and the cache. Returns each notebook's entry folder, what happened
    to it (``executed in 2.1 s`` / ``cached``), the warnings and the input hashes. Raises BuildError
    naming the first notebook that failed; the other executions are then cancelled."""
    from tqdm import tqdm

    kernel = KERNEL  # read at call time (tests point it at a missing kernel)
    root = cache_dir()
    entries: dict[str, Path] = {}
    status: dict[str, str] = {}
    warnings: list[str] = []
    todo: dict[str, str] = {}
    keys: dict[str, str] = {}
    for name, values in runs.items():
        key = keys[name] = input_hash(name, values, kernel)
        hit = root / f"{name}--{key[:20]}"
        if use_cache and hit.is_dir() and not _intact_entry(hit):
            shutil.rmtree(hit)
        if use_cache and hit.is_dir():
            os.utime(hit)
            entries[name], status[name] = hit, "cached (inputs unchanged)"
            warnings += json.loads((hit / "warnings.json").read_text())
        else:
            todo[name] = key
    bar = tqdm(total=len(runs), initial=len(runs) - len(todo), desc="notebooks", unit="nb", file=sys.stderr,
               leave=False, disable=not (progress and sys.stderr.isatty()))
    for name in runs:
        shown = ", ".join(f"{k}={v!r}" for k, v in runs[name].items()) or "defaults"
        bar.write(f"  {name}: {status[name] if name in status else f'executing ({shown})'}", file=sys.stderr)

    # longest first (by the last recorded execution time, else the expected one), so that a slow
    # notebook does not start last
    timings_file = root / "timings.json"
    try:
        timings = json.loads(timings_file.read_text())
    except (OSError, ValueError):
        timings = {}
    todo = dict(sorted(todo.items(), key=lambda item: -float(timings.get(item[0], EXPECTED_SECONDS.get(item[0], 0.0)))))

    def done(name: str, result: Executed) -> None:
        key, folder = todo[name], stage / "run" / name  # the entry: notebook.ipynb, figures/, warnings.json
        (folder / "figures").mkdir(parents=True)
        (folder / "notebook.ipynb").write_bytes(result.notebook)
        for file, content in result.figures.items():
            (folder / "figures" / file).write_bytes(content)
        (folder / "warnings.json").write_text(json.dumps(result.warnings, indent=1))
        entries[name] = folder
        if use_cache:
            final = root / f"{name}--{key[:20]}"
            root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
            shutil.copytree(folder, tmp, dirs_exist_ok=True)
            output.write_manifest(tmp)
            shutil.rmtree(final, ignore_errors=True)
            tmp.rename(final)
            _prune_cache(root, name)
            timings[name] = round(result.seconds, 1)
            timings_file.write_text(json.dumps(timings, indent=1, sort_keys=True))
        status[name] = f"executed in {result.seconds:.1f} s"
        warnings.extend(result.warnings)
        bar.update(1)
        bar.write(f"  {name}: {status[name]}", file=sys.stderr)

    tmp = stage / "run"  # the local kernels' temporary files: never in the system's folder
    tmp.mkdir(parents=True, exist_ok=True)
    workers = max(1, min(len(todo), jobs or os.cpu_count() or 1))
    with bar, (local_pool(workers, tmp) if executor is None else nullcontext(executor)) as pool:
        futures = {pool.submit(execute_notebook, name, runs[name], scenarios.notebook_path(name).read_bytes(),
                               kernel): name for name in todo}
        try:
            for future in as_completed(futures):
                name = futures[future]
                try:
                    result = future.result()
                except JalapenoError:
                    raise
                except Exception as exc:  # a worker that died, a cluster's error: still names the notebook
                    raise BuildError(f"notebook {name!r}: {type(exc).__name__}: {exc}") from None
                done(name, result)
        except BaseException:  # a failed notebook, Ctrl-C, SIGTERM: nothing more runs for this build
            for future in futures:
                future.cancel()
            raise
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
        NotebookClient(nb, kernel_name=KERNEL, record_timing=False, timeout=600,
                       resources={"metadata": {"path": str(scenarios.NOTEBOOKS_DIR)}}).execute()
        nb = strip_volatile(nb)
        nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
        tmp = path.with_suffix(".ipynb.tmp")
        nbformat.write(nb, tmp)
        tmp.replace(path)
        written.append(path)
    return written
