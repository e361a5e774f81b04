"""Output folders: a build removes only what it can prove it wrote, and never loses the previous site.

A folder is the tool's when its manifest (:data:`MANIFEST`: the path, size and SHA-256 of every file and
the path of every folder a build wrote) matches every entry in it (:func:`audit`); a marker, a planted or
copied manifest or a default folder's location prove nothing. :func:`check_output` refuses, before
anything runs, any other existing folder and every place a build must not replace, with
:class:`OutputError` (status 2) saying why. A build holds a lock per output folder (:func:`locked`),
stages its work beside it (:func:`make_stage`) and swaps the finished site in (:func:`replace`) with one
atomic ``renameat2(RENAME_EXCHANGE)``: under any signal, SIGKILL included, the folder holds one whole
version or the other; SIGINT and SIGTERM wait for the swap. Without the exchange it falls back to two
renames under a :data:`JOURNAL`; a build killed between them leaves the previous site in its stage, and
the next build puts it back before anything else (:func:`remove_stale_stages`). A stage is removed only
when it holds nothing but what a build puts there, its sites matching their manifests (:func:`remove_stage`).
"""

import errno
import json
import os
import re
import shutil
import signal
import stat
import tempfile
import threading
from pathlib import Path
from typing import Callable, Iterator

import filelock

from .. import cache
from ..data import REPO_ROOT
from ..errors import JalapenoError

#: The manifest of every site a build writes: what proves a folder's files are the tool's own.
MANIFEST = ".jalapeno-manifest.json"
STAGE_MARKER = ".jalapeno-stage"  # in every staging folder, naming the output folder it stages for
JOURNAL = ".jalapeno-journal"  # in a staging folder while the fallback swap's two renames run
#: What a build creates at the top of its staging folder (anything else makes the stage not the tool's).
STAGE_ENTRIES = frozenset({STAGE_MARKER, JOURNAL, "run", "src", "figures", "html", "previous"})
#: Every output folder a :func:`replace` of this process has swapped in (what the interrupt message says).
REPLACED: list[Path] = []
#: Fault injection for tests: called at each step of :func:`replace` (before-swap, between-renames, after-swap).
fault: Callable[[str], None] | None = None


class OutputError(JalapenoError):
    """``--out`` names a place a build may not write, or another build is writing there."""


# ---- the manifest -----------------------------------------------------------------------------------

def _entries(folder: Path) -> Iterator[tuple[str, os.stat_result]]:
    """``(relative path, lstat)`` of every entry below ``folder`` (symbolic links not followed), sorted."""
    def fail(exc: OSError) -> None:
        raise exc  # an unreadable folder is not silently taken as empty
    for root, dirs, files in os.walk(folder, onerror=fail):
        dirs.sort()
        for name in sorted(dirs + files):
            yield (Path(root) / name).relative_to(folder).as_posix(), (Path(root) / name).lstat()


def write_manifest(folder: Path) -> None:
    """Write :data:`MANIFEST` into ``folder``. Raises OutputError for a symbolic link (a build writes none)."""
    files, folders = {}, []
    for rel, st in _entries(folder):
        if stat.S_ISDIR(st.st_mode):
            folders.append(rel)
        elif stat.S_ISREG(st.st_mode) and rel != MANIFEST:
            files[rel] = {"size": st.st_size, "sha256": cache.sha256(folder / rel)}
        elif rel != MANIFEST:
            raise OutputError(f"{folder / rel}: a build writes no symbolic links or special files")
    text = json.dumps({"format": 1, "files": files, "folders": folders}, indent=0, sort_keys=True)
    (folder / MANIFEST).write_text(text + "\n")


def _manifest(folder: Path) -> tuple[dict[str, tuple], set[str]] | None:
    """The files (``(size, sha256)`` by path) and the folders ``folder``'s valid manifest lists, or None."""
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text()) if stat.S_ISREG(path.lstat().st_mode) else {}
        if data.get("format") == 1 and isinstance(data["folders"], list):
            return {k: (v["size"], v["sha256"]) for k, v in data["files"].items()}, set(data["folders"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


def audit(folder: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """``(foreign, missing)``: the entries of ``folder`` its manifest does not prove the tool wrote, each
    ``(relative path, why)`` (every entry without a valid manifest), and the listed files that are gone."""
    manifest = _manifest(folder)
    files, folders = manifest or ({}, set())
    foreign: list[tuple[str, str]] = []
    for rel, st in _entries(folder):
        if manifest is None:
            why = "not in a jalapeno manifest"
        elif rel == MANIFEST or (stat.S_ISDIR(st.st_mode) and rel in folders):
            continue
        elif stat.S_ISLNK(st.st_mode) or stat.S_ISDIR(st.st_mode):
            why = f"a {'folder' if stat.S_ISDIR(st.st_mode) else 'symbolic link'} jalapeno did not write"
        elif rel not in files or not stat.S_ISREG(st.st_mode):
            why = "a file jalapeno did not write"
        elif st.st_size == files[rel][0] and cache.sha256(folder / rel) == files[rel][1]:
            continue
        else:
            why = "changed since jalapeno wrote it"
        foreign.append((rel, why))
    return foreign, [rel for rel in files if not (folder / rel).is_file()]


def intact(folder: Path) -> bool:
    """True when ``folder`` has a valid manifest and holds exactly the files it lists, unchanged."""
    return _manifest(folder) is not None and audit(folder) == ([], [])


def _named(shown: str, foreign: list[tuple[str, str]]) -> str:
    names = "; ".join(f"{shown}/{rel} ({why})" for rel, why in foreign[:3])
    return names + (f"; and {len(foreign) - 3} more" if len(foreign) > 3 else "")


# ---- where a build may write -------------------------------------------------------------------------

def check_output(out: Path | str, protected: dict[str, Path] | None = None) -> Path:
    """The absolute output folder for ``out``, else OutputError: not an existing file or a symbolic link;
    a new or empty folder, or one its manifest proves; not the working folder, the repository, the home
    folder or a parent of any of them (``/`` included); not ``protected`` (labelled folders: the build
    cache, the notebooks, the book's sources), a parent of one or inside one; nothing in the repository
    outside its ``build/`` (the sources are never written: a lock in ``data/`` would change every cache key)."""
    own = "a build replaces its output folder whole, so it must be a folder of its own, for example build/mine"
    not_sources = ("a build never writes into the sources or the build cache: name a folder below build/ "
                   "(for example build/mine) or outside the repository")
    given, path = str(out), Path(os.path.abspath(Path(out).expanduser()))
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        what = "a symbolic link; name a real folder" if path.is_symlink() else "an existing file; name a folder"
        raise OutputError(f"--out {given}: is {what} (a new one, or one an earlier build wrote)")
    path, inner = path.resolve(), protected or {}
    places = {"the working folder": Path.cwd(), "the repository": REPO_ROOT, "the home folder": Path.home(),
              **inner}
    places = {label: Path(os.path.abspath(p)).resolve() for label, p in places.items()}
    repo = places["the repository"]
    reasons = ([(f"is {label}", own) for label, p in places.items() if path == p]
               + [(f"is a parent of {label} ({p})", own) for label, p in places.items() if path in p.parents]
               + [(f"is inside {label} ({places[label]})", not_sources) for label in inner
                  if places[label] in path.parents])
    if repo in path.parents and repo / "build" not in path.parents:  # the sources, data/ and build/ itself
        reasons.append((f"is inside the repository ({repo}) and not below its build/ folder", not_sources))
    if reasons:
        raise OutputError(f"--out {given}: {reasons[0][0]}; {reasons[0][1]}")
    if path.exists() and (foreign := audit(path)[0]):
        legacy = (" (its .jalapeno-site marker, left by earlier versions, proves nothing)"
                  if (path / ".jalapeno-site").exists() and _manifest(path) is None else "")
        raise OutputError(f"--out {given}: is a folder with files that jalapeno did not build{legacy}: "
                          f"{_named(given.rstrip('/') or '/', foreign)}. A build removes only what its "
                          f"manifest ({MANIFEST}) proves it wrote; move those away, or name a new or empty folder")
    return path


# ---- the lock, the stage and the swap ----------------------------------------------------------------

def locked(out: Path) -> filelock.AcquireReturnProxy:
    """The build lock of ``out``, held until the ``with`` block it opens ends: ``filelock``'s lock on
    ``.<name>.jalapeno-lock`` beside it, a file that stays, naming its holder's process id. OutputError at
    once if another build holds it (naming its process id) or the path holds something else (left as it is)."""
    path = out.parent / f".{out.name}.jalapeno-lock"

    def claim(fd: int) -> None:  # holding the lock, before anything is written into the file
        if not stat.S_ISREG(os.fstat(fd).st_mode) or not re.fullmatch(rb"\d*\n?", os.pread(fd, 65, 0)):
            raise OutputError(f"{path}: is not a build's lock file (it holds other data); move it away")
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        return filelock.FileLock(path, timeout=0, preserve_lock_file=True, on_acquired=claim).acquire()
    except filelock.Timeout:
        holder = path.read_text(errors="replace").strip() or "unknown"
        raise OutputError(f"another jalapeno build (process {holder}) is writing {out}; wait for it to "
                          "finish, or build into another --out") from None
    except OSError as exc:  # a folder, a symbolic link, a file it may not write
        raise OutputError(f"{path}: cannot be a build's lock file ({exc.strerror}); move it away") from None


def make_stage(out: Path) -> Path:
    """A new staging folder beside ``out``, marked as the tool's own (:data:`STAGE_MARKER`)."""
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}-building-", dir=out.parent))
    (stage / STAGE_MARKER).write_text(f"{out}\n")
    return stage


def remove_stage(stage: Path) -> None:
    """Remove ``stage``; raises OutputError, removing nothing, naming what in it is not the tool's."""
    foreign = [(p.name, "not written by a build") for p in sorted(stage.iterdir()) if p.name not in STAGE_ENTRIES]
    for site in ("html", "previous"):
        if (stage / site / MANIFEST).exists():
            foreign += [(f"{site}/{rel}", why) for rel, why in audit(stage / site)[0]]
    if foreign:
        raise OutputError(f"kept the staging folder {stage}: it holds files that jalapeno did not write: "
                          f"{_named(str(stage), foreign)}; move them away, then remove the folder")
    shutil.rmtree(stage)


def remove_stale_stages(out: Path) -> list[str]:
    """Put back a previous site a killed swap left in its stage, then remove (:func:`remove_stage`) every
    stage whose marker names ``out``; call it holding :func:`locked`. Returns a line for each thing done."""
    done = []
    for folder in sorted(out.parent.glob(f".{out.name}-building-*")):
        try:  # the tool's: a real folder, its marker a regular file naming ``out``
            if (folder.is_symlink() or not stat.S_ISREG((folder / STAGE_MARKER).lstat().st_mode)
                    or (folder / STAGE_MARKER).read_text().strip() != str(out)):
                continue
        except (OSError, UnicodeDecodeError):
            continue
        if (folder / JOURNAL).is_file() and not os.path.lexists(out) and (folder / "previous").is_dir():
            (folder / "previous").rename(out)
            done.append(f"restored {out} from {folder.name}, where an interrupted build had left it")
        remove_stage(folder)
        done.append(f"removed {folder.name}, left behind by an interrupted build")
    return done


def replace(out: Path, site: Path, stage: Path, protected: dict[str, Path] | None = None) -> None:
    """Move the finished ``site`` (in ``stage``) to ``out``, after checking ``out`` once more
    (OutputError) and writing the site's manifest; the previous site ends up in ``stage``. SIGINT and
    SIGTERM wait for the swap; ``out`` is appended to :data:`REPLACED` once it holds the new site."""
    check_output(out, protected)
    write_manifest(site)
    at = fault or (lambda step: None)
    at("before-swap")
    caught: list[int] = []  # the signals held, in the main thread (elsewhere Python runs no handler)
    held = (signal.SIGINT, signal.SIGTERM) if threading.current_thread() is threading.main_thread() else ()
    saved = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in held}
    try:
        if not os.path.lexists(out):
            site.rename(out)
        else:
            try:
                import renameat2  # ImportError, RuntimeError: not Linux, a kernel before 3.15, a libc without it
                renameat2.exchange(site, out)
            except (ImportError, RuntimeError, OSError) as exc:
                fallback = (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP)
                if isinstance(exc, OSError) and exc.errno not in fallback:  # its message names no file
                    raise OSError(exc.errno, os.strerror(exc.errno), str(site), None, str(out)) from None
                (stage / JOURNAL).write_text(json.dumps({"out": str(out), "previous": "previous", "new": site.name}) + "\n")
                out.rename(stage / "previous")
                at("between-renames")
                site.rename(out)
                (stage / JOURNAL).unlink()
        REPLACED.append(out)
        at("after-swap")
    finally:
        for s, handler in saved.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)  # None: not set from Python
        if caught:
            signal.raise_signal(caught[0])
