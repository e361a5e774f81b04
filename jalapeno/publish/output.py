"""Output folders: a build removes only what it can prove it wrote, and never loses the previous site.

Where ``--out`` may point (:func:`check_output`, before anything runs):

- a new folder, an empty folder, or a site an earlier build wrote, proved by its manifest
  (:data:`MANIFEST`: the relative path, size and SHA-256 of every file and the path of every folder the
  build wrote, :func:`write_manifest`). Every entry of an existing folder must match it (:func:`audit`):
  a file the manifest does not list, a file whose size or digest differ (one a user added or edited), a
  symbolic link, or a folder without a valid manifest (a marker, a planted or copied manifest that does
  not match the files) makes the build refuse, naming the file. A default folder (``build/html``,
  ``build/scenarios/<name>``) is proved the same way; its location proves nothing.
- not an existing file or a symbolic link; not the working folder, the repository, the home folder or
  a parent of any of them (``/`` included); not the build cache, the notebooks or the book's sources,
  nor anything inside them; and nowhere inside the repository except under its ``build/`` folder (the
  sources, ``data/`` included, are never written: a lock file in ``data/`` would change every cache key).

Refusals raise :class:`OutputError` (status 2 on the command line). A build holds a lock per output
folder (:func:`locked`: ``filelock``'s lock on ``.<name>.jalapeno-lock`` beside it), so a second build into
the same folder stops at once. It stages its work in a folder it creates beside the output
(:func:`make_stage`, marked with :data:`STAGE_MARKER` naming the output) and moves the finished site into
place (:func:`replace`) with one atomic ``renameat2(RENAME_EXCHANGE)`` (Linux), which swaps the new site
and the previous one: under any signal, SIGKILL included, the output folder holds one whole version or
the other. Where the exchange is not available it falls back to two renames under a journal
(:data:`JOURNAL`); a build killed between them leaves the previous site in the stage, and the next build
into the folder puts it back (:func:`remove_stale_stages`) before anything else. SIGINT and SIGTERM
arriving during the swap are held until it is over; :data:`REPLACED` says whether it happened (what the
interrupt message reports). A stage is removed only when it holds nothing else than what a build puts
there and the site moved into it still matches its manifest (:func:`remove_stage`).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import filelock

from ..data import REPO_ROOT
from ..errors import JalapenoError

#: The manifest of every site a build writes: what proves a folder's files are the tool's own.
MANIFEST = ".jalapeno-manifest.json"
_MANIFEST_FORMAT = 1
#: The marker earlier versions left in a site (proof of nothing: it is refused like any other file).
LEGACY_MARKER = ".jalapeno-site"
#: Written into every staging folder, with the output folder it stages for.
STAGE_MARKER = ".jalapeno-stage"
#: Written into a staging folder while the fallback swap's two renames run.
JOURNAL = ".jalapeno-journal"
_STAGE_INFIX = "-building-"
#: What a build creates at the top of its staging folder (anything else makes the stage not the tool's).
STAGE_ENTRIES = frozenset({STAGE_MARKER, JOURNAL, "run", "src", "figures", "html", "previous"})
_SHOWN = 3  # the files a refusal names

#: Every output folder a :func:`replace` of this process has swapped in (read by the interrupt message).
REPLACED: list[Path] = []
#: Fault injection for tests: called with the name of each step of :func:`replace` (``before-swap``,
#: ``between-renames`` of the fallback, ``after-swap``), for example to send the process a signal there.
fault: Callable[[str], None] | None = None


class OutputError(JalapenoError):
    """``--out`` names a place a build may not write (the message says why and what to do), or another
    build is writing there."""


def _at(step: str) -> None:
    if fault is not None:
        fault(step)


# ---- the manifest -----------------------------------------------------------------------------------

def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _entries(folder: Path) -> Iterator[tuple[str, os.stat_result]]:
    """``(relative path, lstat)`` of every entry below ``folder`` (symbolic links not followed), sorted."""
    def fail(exc: OSError) -> None:
        raise exc  # an unreadable folder is not silently taken as empty

    for root, dirs, files in os.walk(folder, onerror=fail):
        dirs.sort()
        for name in sorted(dirs + files):
            path = Path(root) / name
            yield path.relative_to(folder).as_posix(), path.lstat()


def write_manifest(folder: Path) -> None:
    """Write :data:`MANIFEST` into ``folder``: every file below it (relative path, size in bytes,
    SHA-256) and every folder. Raises OutputError for a symbolic link (a build writes none)."""
    files, folders = {}, []
    for rel, st in _entries(folder):
        if stat.S_ISDIR(st.st_mode):
            folders.append(rel)
        elif stat.S_ISREG(st.st_mode) and rel != MANIFEST:
            files[rel] = {"size": st.st_size, "sha256": _sha256(folder / rel)}
        elif rel != MANIFEST:
            raise OutputError(f"{folder / rel}: a build writes no symbolic links or special files")
    text = json.dumps({"format": _MANIFEST_FORMAT, "files": files, "folders": folders}, indent=0, sort_keys=True)
    (folder / MANIFEST).write_text(text + "\n")


def _manifest(folder: Path) -> dict | None:
    """The manifest of ``folder`` if it is a regular file of the right form, else None."""
    path = folder / MANIFEST
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return None
        data = json.loads(path.read_text())
        files, folders = data["files"], data["folders"]
        if data.get("format") != _MANIFEST_FORMAT or not isinstance(folders, list) or not all(
                isinstance(k, str) and isinstance(v["size"], int) and isinstance(v["sha256"], str)
                for k, v in files.items()):
            return None
        return {"files": files, "folders": set(folders)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def audit(folder: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """Compare ``folder`` with its manifest. Returns ``(foreign, missing)``: the entries the manifest does
    not prove the tool wrote, each ``(relative path, why)`` (every entry when there is no valid manifest),
    and the files it lists that are gone."""
    manifest = _manifest(folder)
    foreign: list[tuple[str, str]] = []
    listed = manifest["files"] if manifest else {}
    for rel, st in _entries(folder):
        if manifest is None:
            foreign.append((rel, "not in a jalapeno manifest"))
        elif rel == MANIFEST:
            continue
        elif stat.S_ISLNK(st.st_mode):
            foreign.append((rel, "a symbolic link jalapeno did not write"))
        elif stat.S_ISDIR(st.st_mode):
            if rel not in manifest["folders"]:
                foreign.append((rel, "a folder jalapeno did not write"))
        elif rel not in listed or not stat.S_ISREG(st.st_mode):
            foreign.append((rel, "a file jalapeno did not write"))
        elif st.st_size != listed[rel]["size"] or _sha256(folder / rel) != listed[rel]["sha256"]:
            foreign.append((rel, "changed since jalapeno wrote it"))
    missing = [rel for rel in listed if not (folder / rel).is_file()]
    return foreign, missing


def intact(folder: Path) -> bool:
    """True when ``folder`` has a valid manifest and holds exactly the files it lists, unchanged."""
    return _manifest(folder) is not None and audit(folder) == ([], [])


def _named(shown: str, foreign: list[tuple[str, str]]) -> str:
    names = "; ".join(f"{shown}/{rel} ({why})" for rel, why in foreign[:_SHOWN])
    return names + (f"; and {len(foreign) - _SHOWN} more" if len(foreign) > _SHOWN else "")


# ---- where a build may write -------------------------------------------------------------------------

def _protected() -> dict[str, Path]:
    return {"the working folder": Path.cwd().resolve(), "the repository": REPO_ROOT.resolve(),
            "the home folder": Path.home().resolve()}


def check_output(out: Path | str, protected: dict[str, Path] | None = None) -> Path:
    """The absolute output folder for ``out``, after checking that a build may write there (the rules of
    the module's docstring).

    ``protected`` labels folders a build may neither be, contain nor be inside (the build cache, the
    notebooks, the book's sources). Raises OutputError naming ``out``, the reason (the first files that
    are not the tool's, when that is it) and what to do."""
    given = str(out)
    path = Path(os.path.abspath(Path(out).expanduser()))
    if path.is_symlink():
        raise OutputError(f"--out {given}: is a symbolic link; name a real folder (a new one, or one an "
                          "earlier build wrote)")
    path = path.resolve()
    outer = {label: Path(os.path.abspath(p)).resolve() for label, p in _protected().items()}
    inner = {label: Path(os.path.abspath(p)).resolve() for label, p in (protected or {}).items()}
    places = {**outer, **inner}
    exact = [f"is {label}" for label, p in places.items() if path == p]
    parent = [f"is a parent of {label} ({p})" for label, p in places.items() if path in p.parents]
    inside = [f"is inside {label} ({p})" for label, p in inner.items() if p in path.parents]
    repo, build = REPO_ROOT.resolve(), REPO_ROOT.resolve() / "build"
    if repo in path.parents and build not in path.parents:  # the sources, data/ and build/ itself
        inside.append(f"is inside the repository ({repo}) and not below its build/ folder")
    if exact or parent:
        raise OutputError(f"--out {given}: {(exact + parent)[0]}; a build replaces its output folder whole, so "
                          "it must be a folder of its own, for example build/mine")
    if inside:
        raise OutputError(f"--out {given}: {inside[0]}; a build never writes into the sources or the build "
                          "cache: name a folder below build/ (for example build/mine) or outside the repository")
    if path.exists():
        if not path.is_dir():
            raise OutputError(f"--out {given}: is an existing file; name a folder (a new one, or one an "
                              "earlier build wrote)")
        foreign, _ = audit(path)
        if foreign:
            legacy = (" (its .jalapeno-site marker, left by earlier versions, proves nothing)"
                      if (path / LEGACY_MARKER).exists() and _manifest(path) is None else "")
            raise OutputError(f"--out {given}: is a folder with files that jalapeno did not build{legacy}: "
                              f"{_named(given.rstrip('/') or '/', foreign)}. A build removes only what its "
                              f"manifest ({MANIFEST}) proves it wrote; move those away, or name a new or empty "
                              "folder")
    return path


# ---- the lock --------------------------------------------------------------------------------------

def _lock_path(out: Path) -> Path:
    return out.parent / f".{out.name}.jalapeno-lock"


@contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold the build lock of output folder ``out`` for the ``with`` block.

    Raises OutputError at once if another build holds it (naming that build's process id), or if the
    lock's path holds something that is not a lock file (which is left as it is)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    path = _lock_path(out)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise OutputError(f"{path}: cannot be a build's lock file ({exc.strerror}); move it away") from None
    try:
        held = os.pread(fd, 65, 0)
        if not stat.S_ISREG(os.fstat(fd).st_mode) or not re.fullmatch(rb"\d*\n?", held):
            raise OutputError(f"{path}: is not a build's lock file (it holds other data); move it away")
        if not filelock.lock_descriptor(fd, blocking=False):
            holder = held.decode().strip() or "unknown"
            raise OutputError(f"another jalapeno build (process {holder}) is writing {out}; wait for it to "
                              "finish, or build into another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


# ---- staging and the swap -----------------------------------------------------------------------------

def make_stage(out: Path) -> Path:
    """A new staging folder beside ``out``, marked as the tool's own (:data:`STAGE_MARKER`)."""
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}{_STAGE_INFIX}", dir=out.parent))
    (stage / STAGE_MARKER).write_text(f"{out}\n")
    return stage


def _is_stage_of(folder: Path, out: Path) -> bool:
    marker = folder / STAGE_MARKER
    try:
        return (folder.is_dir() and not folder.is_symlink() and stat.S_ISREG(marker.lstat().st_mode)
                and marker.read_text().strip() == str(out))
    except (OSError, UnicodeDecodeError):
        return False


def remove_stage(stage: Path) -> None:
    """Remove staging folder ``stage``, after checking that it holds only what a build puts there and that
    a site moved into it (the previous output) still matches its manifest. Raises OutputError, removing
    nothing, naming what is not the tool's."""
    foreign = [(p.name, "not written by a build") for p in sorted(stage.iterdir()) if p.name not in STAGE_ENTRIES]
    for site in ("html", "previous"):
        if (stage / site / MANIFEST).exists():
            foreign += [(f"{site}/{rel}", why) for rel, why in audit(stage / site)[0]]
    if foreign:
        raise OutputError(f"kept the staging folder {stage}: it holds files that jalapeno did not write: "
                          f"{_named(str(stage), foreign)}; move them away, then remove the folder")
    shutil.rmtree(stage)


def remove_stale_stages(out: Path) -> list[str]:
    """Finish what killed builds into ``out`` left behind; returns a line for each thing done.

    Call it holding :func:`locked` (no other build into ``out`` runs). A stage whose journal shows a
    swap cut between its renames (``out`` gone, the previous site in the stage) has that site put back
    first; then every staging folder whose :data:`STAGE_MARKER` names ``out`` is removed with
    :func:`remove_stage` (which refuses one holding anything else). Folders without the marker are not
    touched."""
    done = []
    for folder in sorted(out.parent.glob(f".{out.name}{_STAGE_INFIX}*")):
        if not _is_stage_of(folder, out):
            continue
        previous = folder / "previous"
        if (folder / JOURNAL).is_file() and not os.path.lexists(out) and previous.is_dir():
            previous.rename(out)
            done.append(f"restored {out} from {folder.name}, where an interrupted build had left it")
        remove_stage(folder)
        done.append(f"removed {folder.name}, left behind by an interrupted build")
    return done


def _exchange(a: Path, b: Path) -> None:
    """Swap ``a`` and ``b`` atomically (``renameat2(..., RENAME_EXCHANGE)``, the ``renameat2`` package);
    OSError where the system or the file system cannot (``ENOSYS``, ``EINVAL``)."""
    try:
        import renameat2
    except (ImportError, RuntimeError) as exc:  # not Linux, a kernel before 3.15, a libc without it
        raise OSError(errno.ENOSYS, f"renameat2 is not available: {exc}") from None
    try:
        renameat2.exchange(a, b)
    except OSError as exc:  # its message names no file
        raise OSError(exc.errno, os.strerror(exc.errno), str(a), None, str(b)) from None


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold SIGINT and SIGTERM for the ``with`` block, then deliver the first that came (main thread
    only; elsewhere Python runs no signal handler anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    saved = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)  # None: not set from Python
        if caught:
            signal.raise_signal(caught[0])


def replace(out: Path, site: Path, stage: Path, protected: dict[str, Path] | None = None) -> None:
    """Move the finished ``site`` (inside ``stage``) to ``out``, after checking ``out`` once more and
    writing the site's manifest; the previous site, if any, ends up in ``stage`` (which the caller removes
    with :func:`remove_stage`). Under SIGINT or SIGTERM the swap completes first; ``out`` is appended to
    :data:`REPLACED` once it holds the new site. Raises OutputError if ``out`` is no longer a place a
    build may write."""
    check_output(out, protected)
    write_manifest(site)
    _at("before-swap")
    with _signals_held():
        if not os.path.lexists(out):
            site.rename(out)
        else:
            try:
                _exchange(site, out)
            except OSError as exc:
                if exc.errno not in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
                    raise
                (stage / JOURNAL).write_text(json.dumps({"out": str(out), "previous": "previous", "new": site.name}) + "\n")
                out.rename(stage / "previous")
                _at("between-renames")
                site.rename(out)
                (stage / JOURNAL).unlink()
        REPLACED.append(out)
        _at("after-swap")
