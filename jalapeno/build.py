"""Execute the notebooks and render the book.

``build()`` is the one path from sources to HTML: it checks every parameter before anything runs,
executes the chosen notebooks with papermill (kernel ``python3``, working directory ``notebooks/``)
into a staging folder beside the output, renders them with the prose of ``book/`` through Jupyter Book
1.x (Sphinx; warnings are errors, so a broken reference fails), checks that no page loads anything
from the network, and only then moves the finished site into place. A failure leaves the previous
output untouched.

``refresh()`` re-executes the committed notebooks in place with their defaults (what nbval compares).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import yaml

from . import charts, params
from .data import REPO_ROOT
from .errors import JalapenoError, UnknownNameError

NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
BOOK_DIR = REPO_ROOT / "book"
KERNEL = "python3"

#: Notebook metadata that changes from run to run and is never committed.
_VOLATILE_NB_KEYS = ("papermill", "widgets")
_VOLATILE_CELL_KEYS = ("papermill", "execution", "collapsed", "scrolled")


class BuildError(JalapenoError):
    """The book could not be built; the message says which step and notebook failed."""


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


def plan(notebooks: list[str] | None, parameters: dict[str, object]) -> dict[str, dict[str, object]]:
    """For each chosen notebook, the parameters it takes from ``parameters`` (checked against its
    declared defaults). A parameter that none of the chosen notebooks declares raises UnknownNameError
    listing the names they do declare."""
    chosen = [notebook_path(n).stem for n in (notebooks or notebook_names())]
    declared = {n: params.declared(notebook_path(n)) for n in chosen}
    valid = sorted({p for d in declared.values() for p in d})
    for name in parameters:
        if name not in valid:
            raise UnknownNameError("parameter", name, valid)
    out = {}
    for n, defaults in declared.items():
        mine = {k: v for k, v in parameters.items() if k in defaults}
        params.check(mine, defaults)
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


def _execute(name: str, values: dict[str, object], target: Path, figures: Path) -> None:
    import papermill

    os.environ["JALAPENO_FIGURES_DIR"] = str(figures)
    try:
        papermill.execute_notebook(str(notebook_path(name)), str(target), parameters=values,
                                   kernel_name=KERNEL, cwd=str(NOTEBOOKS_DIR), progress_bar=False,
                                   report_mode=False, log_output=False)
    except papermill.PapermillExecutionError as exc:
        raise BuildError(f"notebook {name!r} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue}") from None
    except Exception as exc:  # NoSuchKernel, timeouts: name the notebook and the kernel
        raise BuildError(f"notebook {name!r} (kernel {KERNEL!r}) could not run: {type(exc).__name__}: {exc}") from None
    finally:
        os.environ.pop("JALAPENO_FIGURES_DIR", None)
    nb = strip_volatile(nbformat.read(target, as_version=4))
    for cell in nb.cells:  # readers see the effective parameters once, as the chapter's own table
        tags = cell.metadata.get("tags", [])
        if "parameters" in tags or "injected-parameters" in tags:
            cell.metadata["tags"] = sorted(set(tags) | {"remove-cell"})
    nbformat.write(nb, target)


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


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def build(notebooks: list[str] | None = None, parameters: dict[str, object] | None = None,
          out: Path | str = REPO_ROOT / "build" / "html") -> Path:
    """Execute ``notebooks`` (default: all) with ``parameters`` and render the book into ``out``.

    Returns the path of ``index.html``. Raises UnknownNameError or ParameterError before anything runs,
    BuildError if a notebook or the render fails (``out`` is then left as it was)."""
    parameters = dict(parameters or {})
    runs = plan(notebooks, parameters)
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}-building-", dir=out.parent))
    started = time.monotonic()
    try:
        src = stage / "src"
        shutil.copytree(BOOK_DIR, src, ignore=shutil.ignore_patterns("_build", "chapters"))
        (src / "chapters").mkdir()
        figures = stage / "figures"
        for i, (name, values) in enumerate(runs.items(), 1):
            shown = ", ".join(f"{k}={v!r}" for k, v in values.items()) or "defaults"
            _log(f"[{i}/{len(runs)}] executing {name} ({shown})")
            _execute(name, values, src / "chapters" / f"{name}.ipynb", figures)
        _toc(src, list(runs))
        (src / "_static").mkdir(exist_ok=True)
        (src / "_static" / "vega-bundle.js").write_text(charts.runtime_bundle())
        _log("rendering the book")
        jb = Path(sys.executable).with_name("jupyter-book")
        cmd = [str(jb), "build", str(src), "--builder", "html", "--warningiserror", "--nitpick", "--keep-going",
               "--quiet"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError("jupyter-book failed:\n" + (proc.stdout + proc.stderr)[-4000:])
        html = src / "_build" / "html"
        check_offline(html)
        if figures.exists():
            shutil.copytree(figures, html / "figures")
        final = stage / "html"
        html.rename(final)
        old = out.with_name(f".{out.name}-old")
        if out.exists():
            out.rename(old)
        final.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    pages = len(list(out.rglob("*.html")))
    n_fig = len(list((out / "figures").glob("*.svg"))) if (out / "figures").exists() else 0
    _log(f"built {pages} pages, {n_fig} figures in {time.monotonic() - started:.0f} s: {out / 'index.html'}")
    return out / "index.html"


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
