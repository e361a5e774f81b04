"""Execute the notebooks and render the book.

``build()`` is the one path from sources to HTML:

1. it checks every parameter (and the scenario file, if any) before anything runs;
2. it executes the chosen notebooks with papermill (kernel ``python3``, working directory
   ``notebooks/``), in parallel on the available cores, each in its own process and kernel; a notebook
   whose inputs (notebook file, parameters, kernel, package source, data files, package versions) are
   unchanged since an earlier build is taken from the cache (``build/.cache/``) instead;
3. it exports every figure as SVG and PNG (vl-convert) under its stable name;
4. it stages the prose of ``book/`` with the executed notebooks, writes the generated pages (figures,
   environment, how to cite, changelog of published numbers; a banner on every page of a scenario
   build) and renders them through Jupyter Book 1.x (Sphinx; warnings are errors, so a broken
   reference fails);
5. it checks that no page loads anything from the network, and only then moves the finished site into
   place. A failure leaves the previous output untouched.

A *scenario* is a YAML file naming a set of assumptions (see ``scenarios/``)::

    name: gb300-baseline
    description: What the chapters can say about a GB300 baseline.
    parameters: {}               # for every chosen notebook that declares them
    notebooks:                   # for one notebook each
      roofline: {focus_chip: gb300}

``refresh()`` re-executes the committed notebooks in place with their defaults (what nbval compares).
"""

from __future__ import annotations

import hashlib
import html as _html
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from . import charts, output, params
from .data import REPO_ROOT, data_dir
from .errors import JalapenoError, UnknownNameError

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
BOOK_DIR = REPO_ROOT / "book"
SCENARIOS_DIR = REPO_ROOT / "scenarios"
PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULT_OUT = REPO_ROOT / "build" / "html"
KERNEL = "python3"
#: Bump to invalidate every cached notebook (the layout of a cache entry changed).
CACHE_FORMAT = "2"
#: Cached executions kept per notebook (the oldest are removed).
CACHE_KEEP = 8

#: Notebook metadata that changes from run to run and is never committed.
_VOLATILE_NB_KEYS = ("papermill", "widgets")
_VOLATILE_CELL_KEYS = ("papermill", "execution", "collapsed", "scrolled")
#: Neither is a problem of the notebook: ipykernel 7 notes its loopback TCP transport at every start,
#: and logs the interrupt that shuts it down at the end of a run.
_KERNEL_NOISE = re.compile(r"Kernel is running over TCP without encryption|KeyboardInterrupt caught in kernel")
_GLUE_MIME = "application/papermill.record/text/markdown"


class BuildError(JalapenoError):
    """The book could not be built; the message says which step and notebook failed."""


class ScenarioError(JalapenoError):
    """A scenario file is malformed or asks for something no chosen notebook takes; the message names
    the file, the bad key or value and the valid choices."""


def notebook_names() -> list[str]:
    """The chapters' notebook names (file stems in ``notebooks/``), in the book's order."""
    return [p.stem for p in sorted(NOTEBOOKS_DIR.glob("*.ipynb"))]


def notebook_path(name: str | Path) -> Path:
    """Path of a notebook given its name (``roofline``), file name or path; UnknownNameError otherwise."""
    stem = Path(str(name)).stem
    path = NOTEBOOKS_DIR / f"{stem}.ipynb"
    if not path.exists():
        raise UnknownNameError("notebook", str(name), notebook_names())
    return path


# ---- scenarios -------------------------------------------------------------------------------------

_SCENARIO_KEYS = ("name", "description", "parameters", "notebooks")
_SCENARIO_NAME = re.compile(r"^[a-z0-9][a-z0-9-]*$")


@dataclass(frozen=True)
class Scenario:
    """A named set of parameter overrides: ``parameters`` for every chosen notebook that declares them,
    ``notebooks`` per notebook (these win). ``source`` is how commands refer to the file."""

    name: str
    description: str
    parameters: dict[str, object] = field(default_factory=dict)
    notebooks: dict[str, dict[str, object]] = field(default_factory=dict)
    source: str = ""


def scenario_names() -> list[str]:
    """Names of the scenario files shipped in ``scenarios/``."""
    return [p.stem for p in sorted(SCENARIOS_DIR.glob("*.yml"))]


def _display_path(path: Path) -> str:
    path = path.resolve()
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)


def load_scenario(path: str | Path) -> Scenario:
    """Read and check a scenario file (a path, or the name of a file in ``scenarios/``).

    Raises UnknownNameError for an unknown scenario name or notebook, ScenarioError for a malformed
    file or an unknown key. Parameter names and types are checked by :func:`plan`."""
    p = Path(path)
    if not p.exists():
        shipped = SCENARIOS_DIR / f"{p.stem}.yml"
        if p.suffix in ("", ".yml") and len(p.parts) == 1 and shipped.exists():
            p = shipped
        elif p.suffix in ("", ".yml", ".yaml") and len(p.parts) == 1:
            raise UnknownNameError("scenario", str(path), scenario_names())
        else:
            raise ScenarioError(f"scenario file {str(path)!r} does not exist; shipped scenarios: "
                                f"{', '.join(scenario_names())}")
    where = _display_path(p)
    try:
        data = yaml.safe_load(p.read_text())
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{where}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: a scenario must be a mapping with keys {', '.join(_SCENARIO_KEYS)}")
    for key in data:
        if key not in _SCENARIO_KEYS:
            raise ScenarioError(f"{where}: unknown key {key!r}; valid keys: {', '.join(_SCENARIO_KEYS)}")
    name = data.get("name")
    if not isinstance(name, str) or not _SCENARIO_NAME.match(name):
        raise ScenarioError(f"{where}: 'name' must be lower-case letters, digits and dashes, got {name!r}")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ScenarioError(f"{where}: 'description' must be a non-empty text saying what the scenario assumes")
    parameters = data.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise ScenarioError(f"{where}: 'parameters' must be a mapping of name: value, got {parameters!r}")
    per_notebook = data.get("notebooks") or {}
    if not isinstance(per_notebook, dict):
        raise ScenarioError(f"{where}: 'notebooks' must map notebook names to parameters, got {per_notebook!r}")
    checked: dict[str, dict[str, object]] = {}
    for nb, values in per_notebook.items():
        stem = notebook_path(nb).stem
        if not isinstance(values, dict):
            raise ScenarioError(f"{where}: notebooks.{nb} must be a mapping of name: value, got {values!r}")
        checked[stem] = dict(values)
    if not parameters and not checked:
        raise ScenarioError(f"{where}: the scenario sets no parameter (give 'parameters' or 'notebooks')")
    return Scenario(name, " ".join(description.split()), dict(parameters), checked, where)


# ---- parameters ------------------------------------------------------------------------------------

def plan(notebooks: list[str] | None, parameters: dict[str, object],
         per_notebook: dict[str, dict[str, object]] | None = None,
         overrides: dict[str, object] | None = None) -> dict[str, dict[str, object]]:
    """For each chosen notebook, the parameters it takes, checked against its declared defaults.

    ``parameters`` and ``overrides`` go to every chosen notebook that declares them (``overrides`` win);
    ``per_notebook`` to one notebook each (checked even for a notebook that is not chosen, so a scenario
    is checked whole). A parameter that no chosen notebook declares raises UnknownNameError listing the
    names they do declare; a wrong type raises ParameterError."""
    per_notebook = per_notebook or {}
    overrides = overrides or {}
    chosen = [notebook_path(n).stem for n in (notebooks or notebook_names())]
    declared = {n: params.declared(notebook_path(n)) for n in chosen}
    valid = sorted({p for d in declared.values() for p in d})
    for layer in (parameters, overrides):
        for name in layer:
            if name not in valid:
                raise UnknownNameError("parameter", name, valid)
    for nb, values in per_notebook.items():
        stem = notebook_path(nb).stem
        own = declared.get(stem) or params.declared(notebook_path(stem))
        for name in values:
            if name not in own:
                raise UnknownNameError(f"{stem} parameter", name, list(own))
        params.check_notebook(dict(values), notebook_path(stem))
    out = {}
    for n, defaults in declared.items():
        mine = {k: v for k, v in parameters.items() if k in defaults}
        mine.update(per_notebook.get(n, {}))
        mine.update({k: v for k, v in overrides.items() if k in defaults})
        params.check_notebook(mine, notebook_path(n))
        out[n] = mine
    return out


def strip_volatile(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove run timestamps, durations and papermill bookkeeping so reruns give no diff."""
    for key in _VOLATILE_NB_KEYS:
        nb.metadata.pop(key, None)
    for cell in nb.cells:
        for key in _VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
    return nb


# ---- execution (runs in a worker process, one kernel each) -----------------------------------------

def _execute(name: str, values: dict[str, object], target: Path, figures: Path,
             kernel: str | None = None, source: Path | None = None) -> list[str]:
    """Execute notebook ``name`` (from ``source``, default ``notebooks/<name>.ipynb``) with ``values``
    into ``target``, its figures (SVG and PNG) into ``figures``. Returns the warnings it printed
    (kernel stderr, stderr outputs of cells)."""
    import papermill
    import vl_convert as vlc

    kernel = kernel or KERNEL
    source = Path(source) if source else notebook_path(name)
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
    warnings = _execute(name, values, folder / "notebook.ipynb", folder / "figures", kernel, Path(source))
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
        return subprocess.Popen([sys.executable, "-c", "import sys; from jalapeno.build import _worker_main; "
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


def _end_with_parent(parent_pid: int) -> None:
    """In a worker: end (with its kernel) when the build that started it ends. SIGTERM ends the
    worker's processes and then the worker; SIGINT (a Ctrl-C in the terminal, which reaches the whole
    process group) is left to the build, which then sends SIGTERM; on Linux the kernel sends SIGTERM
    when the build dies (``PR_SET_PDEATHSIG``), also after a SIGKILL."""
    import signal

    def stop(signum, frame):
        _end_descendants(timeout_s=2.0)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
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


def _files_digest(h: "hashlib._Hash", root: Path, pattern: str) -> None:
    for path in sorted(root.rglob(pattern)):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")


def _pinned_packages() -> list[str]:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"]) + [r for extra in project["optional-dependencies"].values() for r in extra]
    return [re.split(r"[=<>!~ \[]", r, maxsplit=1)[0] for r in reqs]


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
    h.update(notebook_path(name).read_bytes())
    h.update(json.dumps(values, sort_keys=True, default=repr).encode())
    _files_digest(h, PACKAGE_DIR, "*.py")
    _files_digest(h, data_dir(), "*")
    h.update(json.dumps({d: _installed(d) for d in _pinned_packages()}, sort_keys=True).encode())
    return h.hexdigest()


def _protected() -> dict[str, Path]:
    """Folders a build's output may not be (nor contain): the cache, the book's sources."""
    return {"the build cache": cache_dir(), "the notebooks": NOTEBOOKS_DIR, "the book's sources": BOOK_DIR}


def cache_dir() -> Path:
    """Where executed notebooks are cached: ``$JALAPENO_CACHE_DIR`` or ``build/.cache``."""
    return Path(os.environ.get("JALAPENO_CACHE_DIR", REPO_ROOT / "build" / ".cache"))


def _prune_cache(root: Path, name: str) -> None:
    entries = sorted(root.glob(f"{name}--*"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[CACHE_KEEP:]:
        shutil.rmtree(old, ignore_errors=True)


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


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
        if use_cache and (hit / "notebook.ipynb").exists():
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

    # longest first (by the last recorded execution time), so that a slow notebook does not start last
    timings_file = root / "timings.json"
    try:
        timings = json.loads(timings_file.read_text())
    except (OSError, ValueError):
        timings = {}
    todo = dict(sorted(todo.items(), key=lambda item: -float(timings.get(item[0], 0.0))))

    def done(name: str, seconds: float, warns: list[str]) -> None:
        key, folder = todo[name]
        entries[name] = folder
        if use_cache:
            final = root / f"{name}--{key[:20]}"
            root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
            shutil.copytree(folder, tmp, dirs_exist_ok=True)
            shutil.rmtree(final, ignore_errors=True)
            tmp.rename(final)
            _prune_cache(root, name)
            timings[name] = round(seconds, 1)
            timings_file.write_text(json.dumps(timings, indent=1, sort_keys=True))
        status[name] = f"executed in {seconds:.1f} s"
        warnings.extend(warns)
        bar.update(1)
        bar.write(f"  {name}: {status[name]}", file=sys.stderr)

    workers = max(1, min(len(todo), jobs or os.cpu_count() or 1))
    before = _descendants()
    try:
        if workers == 1:
            for name, (_, folder) in todo.items():
                done(*_worker(name, runs[name], kernel, str(folder), str(notebook_path(name))))
        else:
            waiting = list(todo)
            running: dict[str, subprocess.Popen] = {}
            while waiting or running:
                while waiting and len(running) < workers:
                    name = waiting.pop(0)
                    running[name] = _start_worker(name, runs[name], kernel, todo[name][1], notebook_path(name))
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


# ---- the staged book ---------------------------------------------------------------------------------

def _toc(src: Path, chosen: list[str]) -> None:
    toc_path = src / "_toc.yml"
    toc = yaml.safe_load(toc_path.read_text())
    keep = {f"chapters/{n}" for n in chosen}
    for part in toc.get("parts", [toc]):
        part["chapters"] = [c for c in part.get("chapters", [])
                            if not c["file"].startswith("chapters/") or c["file"] in keep]
    toc["parts"] = [p for p in toc.get("parts", []) if p["chapters"]] if "parts" in toc else None
    if toc["parts"] is None:
        del toc["parts"]
    toc_path.write_text(yaml.safe_dump(toc, sort_keys=False))


_EXTERNAL = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=["'](?:https?:)?//""", re.I)


def check_offline(html_dir: Path) -> None:
    """Raise BuildError if a page loads a script, stylesheet, image or frame from the network."""
    for page in sorted(html_dir.rglob("*.html")):
        for line_no, line in enumerate(page.read_text(errors="replace").splitlines(), 1):
            m = _EXTERNAL.search(line)
            if m and "rel=\"canonical\"" not in line:
                raise BuildError(f"{page.relative_to(html_dir)}:{line_no} loads from the network: {line.strip()[:200]}")


def runtime_script() -> str:
    """The chart runtime as the book serves it: the vl-convert bundle inside a function, so that its
    top-level names (one is ``_``) cannot clash with Sphinx's scripts; it still sets
    ``window.vegaEmbed``, ``window.vega`` and ``window.vegaLite``."""
    bundle = charts.runtime_bundle()
    return bundle if bundle.startswith("(function(){") else "(function(){\n" + bundle + "\n})();\n"


def _chapter_title(nb: nbformat.NotebookNode, default: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return default


def _md_value(value: object) -> str:
    return "`" + repr(value).replace("|", "\\|").replace("`", "'") + "`"


def _banner(title: str, description: str, rows: list[tuple[str, object, object]], command: str) -> str:
    """A MyST admonition naming the scenario and listing the parameters a page was computed with."""
    lines = [":::{admonition} " + title, ":class: warning jalapeno-scenario", "", description, ""]
    if rows:
        lines += ["| parameter | this build | default |", "| --- | --- | --- |"]
        lines += [f"| `{k}` | {_md_value(v)} | {_md_value(d)} |" for k, v, d in rows]
    else:
        lines.append("This page takes none of these parameters: it is computed with its defaults.")
    lines += ["", f"Rebuild it: `{command}`", ":::", ""]
    return "\n".join(lines)


def _insert_after_title(text: str, block: str) -> str:
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("# "):
            return "\n".join(lines[:i + 1] + ["", block] + lines[i + 1:]) + "\n"
    return block + "\n" + text


def _glued(nb: nbformat.NotebookNode) -> dict[str, str]:
    """The values a notebook glued for its prose: key -> the text the page shows."""
    out = {}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name and _GLUE_MIME in o.get("data", {}):
                out[name] = str(o["data"][_GLUE_MIME])
    return dict(sorted(out.items()))


_SVG_TITLE = re.compile(r'role-title-text"[^>]*>\s*<text[^>]*>(.*?)</text>', re.S)


def figure_caption(svg: str, default: str) -> str:
    """A figure's caption: the title drawn in its SVG (vl-convert), else ``default``."""
    m = _SVG_TITLE.search(svg)
    return _html.unescape(re.sub(r"<[^>]+>", "", m.group(1))).strip() if m else default


def _version() -> str:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]


def _build_command(names: list[str], scenario: Scenario | None, overrides: dict[str, object],
                   out: Path | None = None) -> str:
    """The command line that rebuilds ``names`` (all chapters if empty) the way this build did, into the
    same folder (so running it never replaces another build, such as the full book in build/html)."""
    cmd = ["jalapeno", "build", *names]
    if scenario:
        cmd += ["--scenario", scenario.source]
    if overrides:
        cmd += ["-y", json.dumps(overrides, sort_keys=True)]
    if out is not None and out != output_dir(scenario).resolve():
        cmd += ["--out", _display_path(out) if out.is_relative_to(REPO_ROOT) else out.name]
    return " ".join(shlex.quote(c) for c in cmd)


def _figures_page(figures: list[dict[str, str]], titles: dict[str, str], scenario: Scenario | None) -> str:
    out = ["# Figures", "",
           "Every figure of this build, exported under its stable name as SVG (vector, for print) and PNG "
           "(twice the screen size, for slides) into the folder `figures/` of the built site. Each entry "
           "says which chapter draws it and the command that regenerates it.", ""]
    if scenario:
        out += [f"These figures were drawn under the scenario `{scenario.name}`.", ""]
    if not figures:
        out += ["This build has no figures.", ""]
    for f in figures:
        caption = _html.escape(f["caption"])
        out += [f"## {f['caption']}", "",
                f'<figure class="jalapeno-figure"><img src="figures/{f["name"]}.svg" alt="{caption}" '
                f'width="100%"><figcaption>{caption}</figcaption></figure>', "",
                f"- name: `{f['name']}`; chapter: [{titles[f['notebook']]}](chapters/{f['notebook']}.ipynb)",
                f'- files: <a href="figures/{f["name"]}.svg">{f["name"]}.svg</a>, '
                f'<a href="figures/{f["name"]}.png">{f["name"]}.png</a>',
                f"- regenerate: `{f['command']}`", ""]
    return "\n".join(out)


def _environment_page() -> str:
    import platform

    import vl_convert as vlc

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    groups = {"core": project["dependencies"], **project["optional-dependencies"]}
    rows = []
    for group, reqs in groups.items():
        for req in reqs:
            dist, _, pinned = req.partition("==")
            have = _installed(dist)
            rows.append(f"| `{dist}` | {group} | {pinned} | {have} | {'yes' if have == pinned else '**no**'} |")
    mismatches = sum(r.endswith("**no** |") for r in rows)
    return "\n".join([
        "# Environment", "",
        f"This book (version {_version()}) was built with Python {platform.python_version()} and the packages "
        "below. `pyproject.toml` pins each one (`environment.yml` mirrors it for conda); the table shows the "
        "pinned version next to the one installed when the book was built.",
        "" if not mismatches else f"\n**{mismatches} installed versions differ from the pins**: outputs may "
        "differ from the committed notebooks.\n", "",
        "| package | extra | pinned | installed | matches |", "| --- | --- | --- | --- | --- |", *rows, "",
        "The interactive charts run in the reader's browser on the chart runtime that the installed "
        f"vl-convert-python ships: Vega {vlc.get_vega_version()}, Vega-Lite "
        f"{', '.join(vlc.get_vegalite_versions()[-1:])}, vega-embed {vlc.get_vega_embed_version()}. The book "
        "serves it from its own files; no page loads anything from the network.", "",
        "Recreate the environment: `make test` (creates `.venv` and installs the pins), or "
        "`conda env create -f environment.yml` then `pip install -e .`.", ""])


def _cite_page() -> str:
    cff = yaml.safe_load((REPO_ROOT / "CITATION.cff").read_text())
    authors = [a.get("name") or " ".join(x for x in (a.get("given-names"), a.get("family-names")) if x)
               for a in cff.get("authors", [])]
    key = "jalapeno_book_" + str(cff["version"]).replace(".", "_")
    bib = ["@misc{" + key + ",", "  title = {" + cff["title"] + "},",
           "  author = {" + " and ".join("{" + a + "}" for a in authors) + "},",
           "  version = {" + str(cff["version"]) + "},"]
    if cff.get("date-released"):
        bib.append("  year = {" + str(cff["date-released"])[:4] + "},")
    if cff.get("repository-code") or cff.get("url"):
        bib.append("  url = {" + str(cff.get("repository-code") or cff.get("url")) + "},")
    bib.append("  note = {Reproducible analysis book; cite the version you used}")
    bib.append("}")
    return "\n".join([
        "# How to cite", "", cff.get("message", "").strip(), "",
        f"- title: {cff['title']}", f"- version: {cff['version']}", f"- authors: {', '.join(authors)}",
        f"- licence: {cff.get('license', 'not stated')}", "",
        "The citation metadata lives in `CITATION.cff` at the root of the repository (Citation File "
        "Format); this page is generated from it at every build. As BibTeX:", "",
        "```bibtex", *bib, "```", "",
        "Cite the data the book uses as well: see [Data and sources](data.md). When you quote a number "
        "from a rebuilt scenario, name the scenario and its parameters (the banner on each page lists them).",
        ""])


def _version_key(v: str) -> tuple:
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"[.\-]", v))


def published_numbers() -> dict[str, dict[str, dict[str, str]]]:
    """The recorded numbers of each published version (``book/published-numbers/<version>.json``),
    oldest first: version -> chapter -> key -> text."""
    folder = BOOK_DIR / "published-numbers"
    files = sorted(folder.glob("*.json"), key=lambda p: _version_key(p.stem))
    return {p.stem: json.loads(p.read_text()) for p in files}


def _diff_numbers(old: dict[str, dict[str, str]], new: dict[str, dict[str, str]]) -> list[tuple[str, str, str, str]]:
    rows = []
    for chapter in sorted(set(old) | set(new)):
        a, b = old.get(chapter, {}), new.get(chapter, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                rows.append((chapter, key, a.get(key, "(new)"), b.get(key, "(removed)")))
    return rows


def _cell(text: str) -> str:
    text = " ".join(str(text).split())
    return (text[:117] + "...") if len(text) > 120 else text.replace("|", "\\|")


def _changelog_page(current: dict[str, dict[str, str]], scenario: Scenario | None, changed: bool) -> str:
    versions = published_numbers()
    out = ["# Changelog of published numbers", "",
           "Every number the prose of a chapter quotes is computed and glued into the page. At each "
           "release the numbers of the default build are recorded (`jalapeno numbers --record`, into "
           "`book/published-numbers/`); this page compares the releases with each other and with this "
           "build, so a reader can see which published result moved, from what, to what.", ""]
    if not versions:
        out += ["No version has been recorded yet.", ""]
    names = list(versions)
    for i, v in reversed(list(enumerate(names))):
        nums = versions[v]
        total = sum(len(c) for c in nums.values())
        out += [f"## Version {v}", "", f"{total} numbers in {len(nums)} chapters recorded."]
        if i == 0:
            out += ["This is the first recorded version.", ""]
            continue
        rows = _diff_numbers(versions[names[i - 1]], nums)
        moved = [r for r in rows if r[2] != "(new)" and r[3] != "(removed)"]
        added = [r for r in rows if r[2] == "(new)"]
        removed = [r for r in rows if r[3] == "(removed)"]
        out += [f"Changes from version {names[i - 1]}: {len(moved)} changed, {len(added)} new, "
                f"{len(removed)} removed.", ""]
        if moved:
            out += ["| chapter | number | before | after |", "| --- | --- | --- | --- |"]
            out += [f"| {c} | `{k}` | {_cell(a)} | {_cell(b)} |" for c, k, a, b in moved] + [""]
        for label, group in (("New", added), ("Removed", removed)):
            by_chapter: dict[str, list[str]] = {}
            for r in group:
                by_chapter.setdefault(r[0], []).append(f"`{r[1]}`")
            if by_chapter:
                out += [f"{label} numbers, by chapter:", ""]
                out += [f"- {c} ({len(keys)}): {', '.join(keys)}" for c, keys in by_chapter.items()] + [""]
    if names:
        latest = versions[names[-1]]
        rows = _diff_numbers({c: latest.get(c, {}) for c in current}, current)
        why = (f"under the scenario `{scenario.name}`" if scenario else
               "with changed parameters" if changed else "with the default parameters")
        out += ["## This build", "",
                f"This build was computed {why}. Numbers of its chapters that differ from version "
                f"{names[-1]}: {len(rows) or 'none'}.", ""]
        if rows:
            out += [f"| chapter | number | version {names[-1]} | this build |", "| --- | --- | --- | --- |"]
            out += [f"| {c} | `{k}` | {_cell(a)} | {_cell(b)} |" for c, k, a, b in rows] + [""]
    return "\n".join(out)


def _data_files_table() -> str:
    root = data_dir()
    rows = ["| file | rows | SHA-256 (first 16 hex digits) |", "| --- | --- | --- |"]
    for path in sorted(root.rglob("*.csv")):
        n = max(0, len(path.read_text().splitlines()) - 1)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        rows.append(f"| `{path.relative_to(root)}` | {n:,} | `{digest}` |")
    return "\n".join(["The data files of this build, with their digests (compare them with your copy):", "",
                      *rows, ""])


_MARKER = "<!-- jalapeno:data-files -->"


@dataclass
class BuildReport:
    """What a build did: the numbers the summary line prints."""

    index: Path
    pages: int
    figures: int
    warnings: list[str]
    seconds: float
    status: dict[str, str]

    def summary(self) -> str:
        executed = sum(s.startswith("executed") for s in self.status.values())
        return (f"built {self.pages} pages, {self.figures} figures, {len(self.warnings)} warnings in "
                f"{self.seconds:.1f} s ({executed} notebook{'s' if executed != 1 else ''} executed, {len(self.status) - executed} from "
                f"the cache): {self.index}")


def output_dir(scenario: Scenario | None = None) -> Path:
    """Where a build goes by default: ``build/scenarios/<name>`` for a scenario, else ``build/html``."""
    return REPO_ROOT / "build" / "scenarios" / scenario.name if scenario else DEFAULT_OUT


#: The report of the last build() in this process (the benchmark reads it).
last_report: BuildReport | None = None


def build(notebooks: list[str] | None = None, parameters: dict[str, object] | None = None,
          out: Path | str | None = None, *, scenario: Scenario | str | Path | None = None,
          use_cache: bool = True, jobs: int | None = None, progress: bool = True) -> Path:
    """Execute ``notebooks`` (default: all) with ``parameters`` and render the book into ``out``.

    ``scenario`` (a :class:`Scenario`, a scenario file or the name of one in ``scenarios/``) adds its
    parameters under ``parameters`` (which win) and puts its name and parameters on every page; ``out``
    then defaults to ``build/scenarios/<name>`` (else ``build/html``). ``jobs`` notebooks execute at
    once (default: one per core); ``use_cache=False`` re-executes every notebook.

    Returns the path of ``index.html``. Raises UnknownNameError, ParameterError or ScenarioError before
    anything runs, BuildError if a notebook or the render fails (``out`` is then left as it was)."""
    global last_report
    started = time.monotonic()
    overrides = dict(parameters or {})
    if scenario is not None and not isinstance(scenario, Scenario):
        scenario = load_scenario(scenario)
    if scenario:
        try:
            plan(notebooks, scenario.parameters, scenario.notebooks)
        except JalapenoError as exc:
            raise ScenarioError(f"scenario {scenario.source}: {exc}") from None
        runs = plan(notebooks, scenario.parameters, scenario.notebooks, overrides)
    else:
        runs = plan(notebooks, overrides)
    out = output.check_output(out if out is not None else output_dir(scenario), _protected())
    with output.locked(out):
        for stale in output.remove_stale_stages(out):
            _log(f"removed {stale.name}, left behind by an interrupted build")
        stage = output.make_stage(out)
        try:
            figures, warnings, status = _build_into(stage, out, runs, scenario, overrides, use_cache, jobs,
                                                    progress)
        finally:
            shutil.rmtree(stage, ignore_errors=True)
    pages = len([p for p in out.rglob("*.html") if "_static" not in p.parts])
    report = BuildReport(out / "index.html", pages, len(figures), warnings, time.monotonic() - started, status)
    last_report = report
    for w in warnings:
        _log(f"warning: {w}")
    _log(report.summary())
    return report.index


def _build_into(stage: Path, out: Path, runs: dict[str, dict[str, object]], scenario: Scenario | None,
                overrides: dict[str, object], use_cache: bool, jobs: int | None,
                progress: bool) -> tuple[list[dict[str, str]], list[str], dict[str, str]]:
    """Execute, stage and render the book in ``stage``, then move it to ``out`` (see :func:`build`).
    Returns the figures, the warnings and each notebook's status."""
    _log(f"executing {len(runs)} notebook{'s' if len(runs) != 1 else ''}" + (f" under scenario {scenario.name!r}" if scenario else ""))
    entries, status, warnings, keys = _execute_all(runs, stage, use_cache, jobs, progress)
    src = stage / "src"
    shutil.copytree(BOOK_DIR, src, ignore=shutil.ignore_patterns("_build", "chapters", "published-numbers"))
    (src / "chapters").mkdir()
    figures_dir = stage / "figures"
    figures_dir.mkdir()
    figures: list[dict[str, str]] = []
    numbers: dict[str, dict[str, str]] = {}
    titles: dict[str, str] = {}
    changed = scenario is not None or any(runs.values())
    for name, values in runs.items():
        nb = nbformat.read(entries[name] / "notebook.ipynb", as_version=4)
        titles[name] = _chapter_title(nb, name)
        numbers[name] = _glued(nb)
        defaults = params.declared(notebook_path(name))
        if scenario or values:  # every page of a scenario; the pages a plain rerun changed
            rows = [(k, values[k], defaults[k]) for k in defaults if k in values]
            title = f"Scenario: {scenario.name}" if scenario else "Rebuilt with changed parameters"
            text = scenario.description if scenario else "This page was rebuilt with parameters other than the defaults."
            first = next(c for c in nb.cells if c.cell_type == "markdown")
            first.source = _insert_after_title(first.source, _banner(
                title, text, rows, _build_command([name], scenario, {k: v for k, v in overrides.items() if k in defaults}, out)))
        nbformat.write(nb, src / "chapters" / f"{name}.ipynb")
        for svg in sorted((entries[name] / "figures").glob("*.svg")):
            fig = svg.stem
            clash = next((f["notebook"] for f in figures if f["name"] == fig), None)
            if clash:
                raise BuildError(f"figure name {fig!r} is written by both {clash!r} and {name!r}")
            shutil.copy2(svg, figures_dir / svg.name)
            shutil.copy2(svg.with_suffix(".png"), figures_dir / f"{fig}.png")
            figures.append({"name": fig, "notebook": name,
                            "caption": figure_caption(svg.read_text(), fig),
                            "command": _build_command([name], scenario, {k: v for k, v in overrides.items()
                                                                       if k in defaults})})
    if changed:
        intro = src / "intro.md"
        title = f"Scenario: {scenario.name}" if scenario else "Rebuilt with changed parameters"
        text = scenario.description if scenario else "These chapters were rebuilt with parameters other than the defaults."
        rows = sorted((f"{n}: {k}", v, params.declared(notebook_path(n))[k])
                      for n, vals in runs.items() for k, v in vals.items())
        intro.write_text(_insert_after_title(intro.read_text(), _banner(
            title, text, rows, _build_command([] if len(runs) == len(notebook_names()) else list(runs),
                                              scenario, overrides, out))))
    (src / "figures.md").write_text(_figures_page(figures, titles, scenario))
    (src / "environment.md").write_text(_environment_page())
    (src / "cite.md").write_text(_cite_page())
    (src / "changelog.md").write_text(_changelog_page(numbers, scenario, changed))
    data_md = src / "data.md"
    data_md.write_text(data_md.read_text().replace(_MARKER, _data_files_table()))
    _toc(src, list(runs))
    (src / "_static").mkdir(exist_ok=True)
    (src / "_static" / "vega-bundle.js").write_text(runtime_script())
    _log("rendering the book")
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb), "build", str(src), "--builder", "html", "--warningiserror", "--nitpick", "--keep-going",
           "--quiet"]
    proc = subprocess.run(cmd, capture_output=True, text=True, start_new_session=True)  # Ctrl-C reaches only us
    if proc.returncode != 0:
        raise BuildError("jupyter-book failed:\n" + (proc.stdout + proc.stderr)[-4000:])
    warnings += [f"render: {line.strip()}" for line in (proc.stdout + proc.stderr).splitlines()
                 if "WARNING" in line]
    html = src / "_build" / "html"
    check_offline(html)
    shutil.copytree(figures_dir, html / "figures")
    info = {"version": _version(), "scenario": None if not scenario else {
                "name": scenario.name, "description": scenario.description, "source": scenario.source},
            "parameters": runs,
            "inputs": keys,
            "figures": [f["name"] for f in figures]}
    (html / "build-info.json").write_text(json.dumps(info, indent=1, sort_keys=True, default=repr) + "\n")
    (html / "numbers.json").write_text(json.dumps(numbers, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    output.replace(out, html, stage, _protected())
    return figures, warnings, status


def committed_numbers() -> dict[str, dict[str, str]]:
    """The numbers the committed notebooks (executed with their defaults, as nbval keeps them) glue
    into their prose: chapter -> key -> text."""
    return {name: _glued(nbformat.read(notebook_path(name), as_version=4)) for name in notebook_names()}


def record_numbers(version: str | None = None, force: bool = False) -> Path:
    """Record the numbers of the committed notebooks as those of ``version`` (default: the version in
    ``pyproject.toml``) in ``book/published-numbers/<version>.json``, which the changelog page reads.
    A recorded version is not overwritten with other numbers unless ``force``."""
    version = version or _version()
    target = BOOK_DIR / "published-numbers" / f"{version}.json"
    text = json.dumps(committed_numbers(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if target.exists() and target.read_text() != text and not force:
        raise JalapenoError(f"{_display_path(target)} already records other numbers for version {version}; "
                            "bump the version in pyproject.toml and CITATION.cff, or pass --force")
    target.parent.mkdir(exist_ok=True)
    target.write_text(text)
    return target


def refresh(notebooks: list[str] | None = None) -> list[Path]:
    """Re-execute committed notebooks in place with their defaults, as nbval will (kernel ``python3``,
    working directory ``notebooks/``), and strip volatile metadata. Returns the paths written."""
    from nbclient import NotebookClient

    written = []
    for name in notebooks or notebook_names():
        path = notebook_path(name)
        nb = nbformat.read(path, as_version=4)
        _log(f"refreshing {path.name}")
        NotebookClient(nb, kernel_name=KERNEL, record_timing=False, timeout=600,
                       resources={"metadata": {"path": str(NOTEBOOKS_DIR)}}).execute()
        nb = strip_volatile(nb)
        nb.metadata["kernelspec"] = {"name": KERNEL, "display_name": "Python 3", "language": "python"}
        tmp = path.with_suffix(".ipynb.tmp")
        nbformat.write(nb, tmp)
        tmp.replace(path)
        written.append(path)
    return written


def load_parameter_file(path: Path | str) -> dict[str, object]:
    """Parameters from a YAML (or JSON) file holding one mapping; JalapenoError otherwise."""
    data = yaml.safe_load(Path(path).read_text())
    if not isinstance(data, dict):
        raise JalapenoError(f"{path}: a parameters file must hold one mapping of name: value, got {type(data).__name__}")
    return data


def _json_default(o: object) -> str:
    return str(o)


def describe(name: str) -> str:
    """The parameters a notebook declares, with their defaults, as JSON text."""
    return json.dumps(params.declared(notebook_path(name)), indent=2, default=_json_default)
