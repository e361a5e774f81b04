"""Execute the notebooks and render the book.

``build()`` is the one path from sources to HTML:

1. it checks every parameter (and the scenario file, if any) before anything runs (:mod:`.scenarios`),
   and that ``--out`` is a place it may write (:mod:`.output`), and takes that folder's lock;
2. it executes the chosen notebooks with papermill (kernel ``python3``, working directory
   ``notebooks/``), in parallel on the available cores, each in its own process and kernel; a notebook
   whose inputs (notebook file, parameters, kernel, package source, data files, package versions) are
   unchanged since an earlier build is taken from the cache (``build/.cache/``) instead (:mod:`.execute`);
3. it exports every figure as SVG and PNG (vl-convert) under its stable name;
4. it stages the prose of ``book/`` with the executed notebooks, writes the generated pages (figures,
   environment, how to cite, changelog of published numbers and this build's against them; a banner on
   every page of a scenario or rerun; :mod:`.pages`) and renders them through Jupyter Book 1.x (Sphinx; warnings are errors, so a
   broken reference fails);
5. it checks that no page loads anything from the network, and only then moves the finished site into
   place with its manifest, in one atomic exchange with the previous site (:func:`.output.replace`). A
   failure leaves the previous output untouched; a build removes only what a manifest proves it wrote.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import shutil
import time
from concurrent.futures import BrokenExecutor, Executor
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import polars as pl

from .. import cache, derived
from .. import measurements as _measurements
from .. import schemes as _schemes
from ..data import REPO_ROOT, data_dir
from ..errors import BuildError, JalapenoError
from . import execute, output, pages
from .execute import log
from .scenarios import BOOK_DIR, NOTEBOOKS_DIR, Scenario, ScenarioError, display_path, load_scenario, plan

DEFAULT_OUT = REPO_ROOT / "build" / "html"
#: Render folders kept in the cache (``render/<hash of out>``, Sphinx's environment for incremental
#: renders, 15 to 35 MB each): the most recently used; a build into an output folder whose render folder
#: was removed renders every page again. Without a bound each new ``--out`` (every test's temporary
#: folder) added one, 1.3 GB after a few ``make test`` runs.
RENDER_KEEP = 12


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


def output_dir(scenario: Scenario | None = None, measured: "Measured | None" = None) -> Path:
    """Where a build goes by default: ``build/scenarios/<name>`` for a scenario, else
    ``build/measurements/<file name without its suffix>`` for a build on a reader's runs (never the
    default book's folder), else ``build/html``."""
    if scenario:
        return REPO_ROOT / "build" / "scenarios" / scenario.name
    if measured is not None:
        return REPO_ROOT / "build" / "measurements" / measured.runs.path.stem
    return DEFAULT_OUT


#: The report of the last build() in this process (the benchmark reads it).
last_report: BuildReport | None = None


def _protected() -> dict[str, Path]:
    """Folders a build's output may not be (nor contain): the cache, the book's sources."""
    return {"the build cache": cache.folder(), "the notebooks": NOTEBOOKS_DIR, "the book's sources": BOOK_DIR}


def build(notebooks: list[str] | None = None, parameters: dict[str, object] | None = None,
          out: Path | str | None = None, *, scenario: Scenario | str | Path | None = None,
          use_cache: bool = True, jobs: int | None = None, progress: bool = True,
          executor: Executor | None = None, measurements: Path | str | None = None,
          chips: Path | str | None = None, hold_out: bool = False) -> Path:
    """Execute ``notebooks`` (default: all) with ``parameters`` and render the book into ``out``.

    ``scenario`` (a :class:`Scenario`, a scenario file or the name of one in ``scenarios/``) adds its
    parameters under ``parameters`` (which win) and puts its name and parameters on every page; ``out``
    then defaults to ``build/scenarios/<name>`` (else ``build/html``). ``jobs`` notebooks execute at
    once (default: one per core), or ``executor`` runs them (any :class:`concurrent.futures.Executor`,
    such as a Dask cluster's: :func:`.execute.run_notebooks`); ``use_cache=False`` re-executes every
    notebook.

    ``measurements`` (default: the scenario's, if it names one), with ``chips`` (its new chips): a reader's
    runs (``out`` then defaults to ``build/measurements/<file name>`` without a scenario) (:func:`jalapeno.measurements.read`, checked before anything is written). The serving model's
    constants are refitted on the shipped rows and the reader's (:func:`jalapeno.measurements.recalibrate`)
    and every chosen notebook executes on them, reading a copy of the data folder with the refit's
    ``calibration.csv`` (``JALAPENO_DATA_DIR``, in the stage; its digest and the file's SHA-256 are in
    every notebook's cache key); the build prints which constants moved and which the rows could not
    inform, and the serving-model page's banner shows it. With ``hold_out`` the constants are not refitted:
    the rows are scored (:func:`jalapeno.measurements.scored`; printed, and shown on the serving-model
    page's banner) and the notebooks execute at the stored calibration. Every page's banner names the
    file and its digest.

    Returns the path of ``index.html``. Raises UnknownNameError, ParameterError, ScenarioError or
    :class:`jalapeno.derived.StaleTableError` (naming ``jalapeno derive``) before anything runs, BuildError if a notebook or the render fails (``out`` is then left as it was)."""
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
    derived.check()  # a stale committed table of a noisy stage: the command that regenerates it
    measured = _measured(measurements, chips, hold_out, scenario, list(runs))
    out = output.check_output(out if out is not None else output_dir(scenario, measured), _protected())
    with output.locked(out):
        for line in output.remove_stale_stages(out):
            log(line)
        stage = output.make_stage(out)
        try:
            figures, warnings, status = _build_into(stage, out, runs, scenario, overrides, use_cache, jobs,
                                                    progress, executor, measured)
        except BaseException:
            try:
                output.remove_stage(stage)
            except output.OutputError as exc:  # the failure itself is what the build reports
                log(f"warning: {exc}")
            raise
        output.remove_stage(stage)
    n_pages = len([p for p in out.rglob("*.html") if "_static" not in p.parts])
    report = BuildReport(out / "index.html", n_pages, len(figures), warnings, time.monotonic() - started, status)
    last_report = report
    for w in warnings:
        log(f"warning: {w}")
    log(report.summary())
    return report.index


@dataclass
class Measured:
    """A build on a reader's runs (:func:`_measured`): the ``runs``, the refit (``recal``, None with
    ``--hold-out``), the score (``scored``, with ``--hold-out``), what the rebuild command adds
    (``args``) and each page's banner (``banners``: page, a notebook or ``intro``, -> what
    ``templates/banner.md`` shows of the file: ``file``, ``digest`` (12 hex digits of its SHA-256),
    ``how``, ``note``, and for :func:`.pages.stage` ``description``, ``args`` and ``refit``, ``"yes"``
    when the page was computed on refitted constants)."""

    runs: _measurements.Runs
    recal: _measurements.Recalibrated | None
    scored: _measurements.Scored | None
    args: str
    banners: dict[str, dict[str, str]]


#: The chapter whose page's banner shows what a reader's runs moved (or their score, with ``--hold-out``).
MEASUREMENTS_PAGE = "serving-model"


def _measured(path: Path | str | None, chips: Path | str | None, hold_out: bool, scenario: Scenario | None,
              pages_built: list[str]) -> Measured | None:
    """Read, check and fit (or score) a reader's runs for a build (see :func:`build`), printing what the
    refit moved or the score; None without a measurements file. The file named on the command line wins
    over the scenario's (then so do its chips). MeasurementsError (every bad row), DataError,
    JalapenoError before anything is written."""
    import shlex

    own = path is not None
    if not own and scenario is not None and scenario.measurements:
        path, chips = scenario.measurements, chips or scenario.chips
    if path is None:
        if chips is not None or hold_out:
            raise JalapenoError(f"{'--chips' if chips is not None else '--hold-out'} needs --measurements FILE "
                                "(a reader's runs)")
        return None
    runs = _measurements.read(path, chips)
    args = ""
    if own:
        args = f" --measurements {shlex.quote(display_path(Path(path)))}"
        args += f" --chips {shlex.quote(display_path(Path(chips)))}" if chips is not None else ""
    args += " --hold-out" if hold_out else ""
    name, short = display_path(runs.path), runs.digest[:12]
    if hold_out:
        recal, scored = None, _measurements.scored(path, chips)
        log(_measurements.score_report(scored.table))
        how = ("its rows were held out: scored on the default path, never fitted on; the constants are the stored "
               "calibration's.")
        note = _measurements.score_markdown(scored.table)
        description = "This page was rebuilt with a reader's measurements held out: its numbers are the default book's."
    else:
        recal, scored = _measurements.recalibrate(runs), None
        log(f"{runs.path.name} (sha256 {runs.digest}): the constants refitted on {recal.added:,} of its rows and the "
            f"shipped ones" + (f" ({recal.replaced:,} shipped rows it repeats replaced)" if recal.replaced else ""))
        log(_measurements.changes_report(recal.changes))
        how = (f"the serving model's constants were refitted on the shipped rows and its {recal.added:,} rows"
               + (f" (which replace the {recal.replaced:,} shipped rows they repeat)" if recal.replaced else "") + ".")
        moved = recal.changes.filter(pl.col("moved"))["parameter"].to_list()
        note = ("What its rows moved (the stored calibration, `data/calibration.csv`, against this build's; "
                f"unchanged: {_measurements.UNCHANGED_WORDS}):\n\n" + _measurements.changes_markdown(recal.changes))
        description = (f"This page was rebuilt with the serving model's constants refitted on a reader's measurements "
                       f"({len(moved)} of {recal.changes.height} constants moved).")
    banners = {page: {"file": name, "digest": short, "sha256": runs.digest, "how": how, "args": args,
                      "description": description, "note": note if page == MEASUREMENTS_PAGE else "",
                      "refit": "" if hold_out else "yes"}
               for page in [*pages_built, "intro"]}
    return Measured(runs, recal, scored, args, banners)


def _sync(src: Path, dest: Path) -> None:
    """Make ``dest`` hold exactly the files of ``src`` (apart from ``dest/_build``), writing only the
    files whose content changed, so that Sphinx sees unchanged pages as unchanged."""
    wanted = {p.relative_to(src) for p in src.rglob("*") if p.is_file()}
    for rel in sorted(wanted):
        target = dest / rel
        if not target.is_file() or target.read_bytes() != (src / rel).read_bytes():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / rel, target)
    for path in sorted(dest.rglob("*"), reverse=True):
        rel = path.relative_to(dest)
        if rel.parts[0] == "_build":
            continue
        if path.is_file() and rel not in wanted:
            path.unlink()
        elif path.is_dir() and not any(path.iterdir()):
            path.rmdir()


def _render(renderer: Executor, src: Path, out: Path, site: Path) -> tuple[Path, str]:
    """Render the staged book ``src`` with Jupyter Book into ``site`` through ``renderer`` (the build's
    renderer process, :func:`warm_renderer`); returns the site and the render's log.

    Sphinx keeps its environment between builds into the same output folder (in the cache,
    ``render/<hash of out>``, the :data:`RENDER_KEEP` most recently used), so an incremental build
    re-reads only the pages whose sources changed and writes only those (every page when a title
    changed), with a search index equal to a full render's (:mod:`.search`); a change of the
    table of contents or the configuration starts it afresh, and so does a failed or killed render. The
    render runs in a worker process of its own (:func:`.execute.local_pool`), which ends with the build,
    even after a SIGKILL; one render at a time uses a render folder. The site's links carry no
    checksum query string that an earlier render decides (:func:`.pages.strip_cache_busting`; the
    theme's fixed ``?digest=`` stays), so equal inputs give equal files.
    Raises BuildError with the end of Jupyter Book's log if the render fails (warnings are errors)."""
    render = cache.folder() / "render" / hashlib.sha256(str(out).encode()).hexdigest()[:16]
    try:
        text = renderer.submit(render_book, str(src), str(render), str(site)).result()
    except BrokenExecutor as exc:
        raise BuildError(f"the renderer's process died: {exc}") from None
    pages.strip_cache_busting(site)
    return site, text


def warm_renderer() -> None:
    """Import Jupyter Book, Sphinx and the book's Sphinx extensions (``book/_config.yml``) in the
    renderer's process. The build starts that process and this task before the notebooks execute, so
    these imports (about 2 s) overlap the execution, on the core a rerun of one chapter leaves idle.
    An import that fails here fails again in the render, which reports it."""
    import importlib

    import yaml

    extensions = yaml.safe_load((BOOK_DIR / "_config.yml").read_text())["sphinx"]["config"]["extensions"]
    for module in ["jupyter_book.cli.main", "sphinx.builders.html", *extensions]:
        importlib.import_module(module)


def render_book(src: str, render: str, site: str) -> str:
    """Render the staged book ``src`` through Jupyter Book, in this process, in the render folder
    ``render``, and copy the HTML to ``site``; returns Jupyter Book's log (see :func:`_render`)."""
    from jupyter_book.cli.main import main as jupyter_book

    src, render = Path(src), Path(render)
    render.parent.mkdir(parents=True, exist_ok=True)
    with cache.lock(render):  # one render per render folder, released when its process ends
        book = render / "src"
        settings = b"".join((src / f).read_bytes() for f in ("_toc.yml", "_config.yml"))
        stamp = render / "settings"  # written once a render completed: a killed one starts afresh
        if not stamp.is_file() or stamp.read_bytes() != settings:
            shutil.rmtree(render, ignore_errors=True)
        book.mkdir(parents=True, exist_ok=True)
        stamp.unlink(missing_ok=True)
        _sync(src, book)
        text = io.StringIO()
        with contextlib.redirect_stdout(text), contextlib.redirect_stderr(text):
            try:
                failed = jupyter_book.main(["build", str(book), "--builder", "html", "--warningiserror", "--nitpick",
                                            "--keep-going", "--quiet"], standalone_mode=False)
            except SystemExit as exc:
                failed = exc.code
            except Exception as exc:  # a Sphinx error: into the log, which the BuildError ends with
                failed = True
                print(f"{type(exc).__name__}: {exc}")
        if failed:
            shutil.rmtree(render, ignore_errors=True)
            raise BuildError("jupyter-book failed:\n" + text.getvalue()[-4000:])
        stamp.write_bytes(settings)
        shutil.copytree(book / "_build" / "html", site)
    cache.prune(render.parent, "*", RENDER_KEEP)  # this one is the newest; one being rendered is kept
    return text.getvalue()


def _build_into(stage: Path, out: Path, runs: dict[str, dict[str, object]], scenario: Scenario | None,
                overrides: dict[str, object], use_cache: bool, jobs: int | None,
                progress: bool, executor: Executor | None = None, measured: Measured | None = None,
                ) -> tuple[list[dict[str, str]], list[str], dict[str, str]]:
    """Execute, stage and render the book in ``stage``, then move it to ``out`` (see :func:`build`).
    Returns the figures, the warnings and each notebook's status. With ``measured`` refitted, the data
    folder read is ``stage/run/data`` (:func:`jalapeno.measurements.data_folder`)."""
    env: dict[str, str] = {}
    if measured is not None and measured.recal is not None:
        env = {"JALAPENO_DATA_DIR": str(_measurements.data_folder(measured.recal, stage / "run" / "data"))}
    with mock.patch.dict(os.environ, env):  # the build's own reads of the data folder, and its local workers
        if env:
            log("re-running the validation schemes with your rows in (about a minute on 2 cores when they are new)")
            _schemes.derive_for(Path(env["JALAPENO_DATA_DIR"]), jobs or os.cpu_count() or 1)
        return _build_stage(stage, out, runs, scenario, overrides, use_cache, jobs, progress, executor, measured, env)


def _build_stage(stage: Path, out: Path, runs: dict[str, dict[str, object]], scenario: Scenario | None,
                 overrides: dict[str, object], use_cache: bool, jobs: int | None, progress: bool,
                 executor: Executor | None, measured: Measured | None, env: dict[str, str],
                 ) -> tuple[list[dict[str, str]], list[str], dict[str, str]]:
    """:func:`_build_into` in its environment ``env``."""
    log(f"{len(runs)} notebook{'s' if len(runs) != 1 else ''}" + (f" under scenario {scenario.name!r}" if scenario else "")
        + ": executing those whose inputs changed, the others from the cache")
    extra = (f"measurements sha256:{measured.runs.digest}",) if env else ()
    (stage / "run").mkdir(exist_ok=True)
    # the renderer's process (its temporary files in the stage too) starts now, and its imports overlap the
    # notebooks' execution; it ends with the build, even after a SIGKILL (:func:`.execute.local_pool`)
    with execute.local_pool(1, stage / "run") as renderer:
        renderer.submit(warm_renderer)
        entries, status, warnings, keys = execute.run_notebooks(runs, stage, use_cache, jobs, progress, executor,
                                                                env=env, extra=extra)
        figures_dir = stage / "figures"
        figures_dir.mkdir()
        staged = pages.stage(stage / "src", figures_dir, runs, entries, scenario, overrides, out,
                             output_dir(scenario, measured).resolve(), measured.banners if measured else None)
        src, figures, numbers = stage / "src", staged.figures, staged.numbers
        log("rendering the book")
        html, render_log = _render(renderer, src, out, stage / "html")
    warnings += [f"render: {line.strip()}" for line in render_log.splitlines() if "WARNING" in line]
    pages.check_offline(html)
    shutil.copytree(figures_dir, html / "figures")
    shutil.copytree(data_dir(), html / "data", ignore=shutil.ignore_patterns("__pycache__"))  # data/ to download
    info = {"version": pages.version(), "scenario": None if not scenario else {
                "name": scenario.name, "description": scenario.description, "source": scenario.source},
            "parameters": runs,
            "inputs": keys,
            "figures": [f["name"] for f in figures]}
    if measured is not None:  # a default build's build-info.json is as before
        info["measurements"] = {"file": display_path(measured.runs.path), "sha256": measured.runs.digest,
                                "chips": sorted(measured.runs.chips), "hold_out": measured.recal is None}
    (html / "build-info.json").write_text(json.dumps(info, indent=1, sort_keys=True, default=repr) + "\n")
    (html / "numbers.json").write_text(json.dumps(numbers, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    output.replace(out, html, stage, _protected())
    return figures, warnings, status
