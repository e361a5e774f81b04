"""Output folders: a build writes only where nothing of the user's can be lost.

The rules (``check_output``):

- ``--out`` may name a new folder, an empty folder, a folder an earlier build wrote (it holds the
  marker file :data:`SITE_MARKER`) or one of the default folders under ``build/`` (``build/html``,
  ``build/scenarios/<name>``), which are the tool's own;
- it may not name an existing file, a symbolic link, a non-empty folder the tool did not build, nor the
  working folder, the repository, the home folder or any parent of them (``/`` included).

A build holds a lock per output folder (:func:`locked`: ``fcntl.flock`` on ``.<name>.jalapeno-lock``
beside it), so a second build into the same folder stops at once. It stages its work in a folder it
creates beside the output (:func:`make_stage`, marked with :data:`STAGE_MARKER` naming the output) and
moves the finished site into place with renames (:func:`replace`); the previous site goes into the
stage, which is then removed. A stage left behind by a killed build is removed by the next build into
the same folder (:func:`remove_stale_stages`); nothing without the tool's marker is ever removed.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..data import REPO_ROOT
from ..errors import JalapenoError

#: Written into every site a build produces: what makes a folder the tool's own.
SITE_MARKER = ".jalapeno-site"
#: Written into every staging folder, with the output folder it stages for.
STAGE_MARKER = ".jalapeno-stage"
_STAGE_INFIX = "-building-"


class OutputError(JalapenoError):
    """``--out`` names a place a build may not write (the message says why and what to do), or another
    build is writing there."""


def is_default(folder: Path) -> bool:
    """True for the tool's own default output folders: ``build/html`` and ``build/scenarios/<name>``."""
    folder, build = Path(folder).resolve(), (REPO_ROOT / "build").resolve()
    return folder == build / "html" or folder.parent == build / "scenarios"


def _protected() -> dict[str, Path]:
    return {"the working folder": Path.cwd().resolve(), "the repository": REPO_ROOT.resolve(),
            "the home folder": Path.home().resolve()}


def is_own(folder: Path) -> bool:
    """True when ``folder`` is a site an earlier build wrote (it holds :data:`SITE_MARKER`) or a default
    output folder (:func:`is_default`)."""
    return (Path(folder) / SITE_MARKER).is_file() or is_default(folder)


def check_output(out: Path | str, protected: dict[str, Path] | None = None) -> Path:
    """The absolute output folder for ``out``, after checking that a build may write there.

    Raises OutputError (naming ``out``, the reason and what to do) for an existing file, a symbolic
    link, a non-empty folder the tool did not build, or the working folder, the repository, the home
    folder, any folder of ``protected`` (a label for each, such as the build cache) or any of their
    parents."""
    given = str(out)
    path = Path(os.path.abspath(Path(out).expanduser()))
    if path.is_symlink():
        raise OutputError(f"--out {given}: is a symbolic link; name a real folder (a new one, or one an "
                          "earlier build wrote)")
    path = path.resolve()
    places = {label: Path(os.path.abspath(p)).resolve() for label, p in {**_protected(), **(protected or {})}.items()}
    exact = [label for label, p in places.items() if path == p]
    parent = [f"a parent of {label} ({p})" for label, p in places.items() if path in p.parents]
    if exact or parent:
        raise OutputError(f"--out {given}: is {(exact + parent)[0]}; a build replaces its output folder "
                          "whole, so it must be a folder of its own, for example build/mine")
    if path.exists() or path.is_symlink():
        if not path.is_dir():
            raise OutputError(f"--out {given}: is an existing file; name a folder (a new one, or one an "
                              "earlier build wrote)")
        if not is_own(path) and any(path.iterdir()):
            raise OutputError(f"--out {given}: is a folder with files that jalapeno did not build (it has "
                              f"no {SITE_MARKER} marker); name a new or empty folder, or one an earlier "
                              "build wrote")
    return path


def _lock_path(out: Path) -> Path:
    return out.parent / f".{out.name}.jalapeno-lock"


@contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold the build lock of output folder ``out`` for the ``with`` block.

    Raises OutputError at once if another build holds it (naming that build's process id)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(_lock_path(out), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
            raise OutputError(f"another jalapeno build (process {holder}) is writing {out}; wait for it to "
                              "finish, or build into another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def make_stage(out: Path) -> Path:
    """A new staging folder beside ``out``, marked as the tool's own (:data:`STAGE_MARKER`)."""
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}{_STAGE_INFIX}", dir=out.parent))
    (stage / STAGE_MARKER).write_text(f"{out}\n")
    return stage


def remove_stale_stages(out: Path) -> list[Path]:
    """Remove the staging folders that earlier builds into ``out`` left behind (killed builds). Call it
    while holding :func:`locked` (no other build into ``out`` is then running). Only folders whose
    :data:`STAGE_MARKER` names ``out`` are removed; returns them."""
    removed = []
    for folder in sorted(out.parent.glob(f".{out.name}{_STAGE_INFIX}*")):
        marker = folder / STAGE_MARKER
        if folder.is_dir() and not folder.is_symlink() and marker.is_file() \
                and marker.read_text().strip() == str(out):
            shutil.rmtree(folder)
            removed.append(folder)
    return removed


def replace(out: Path, site: Path, stage: Path, protected: dict[str, Path] | None = None) -> None:
    """Move the finished ``site`` (inside ``stage``) to ``out``, after checking ``out`` once more.

    The previous site, if any, is moved into ``stage`` (which the caller removes); an empty folder the
    tool did not create is removed with ``rmdir`` (which refuses a non-empty one)."""
    check_output(out, protected)
    (site / SITE_MARKER).write_text("A site built by `jalapeno build`; the next build into this folder "
                                    "replaces it whole.\n")
    if out.exists():
        if is_own(out):
            out.rename(stage / "previous")
        else:
            out.rmdir()
    site.rename(out)
