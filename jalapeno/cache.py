"""The one on-disk cache of results that are expensive to compute (executed notebooks, hold-out refits,
validated tables, the claims registry, the chart runtime), its one key, its one lock rule and the
package's one atomic write.

- Where: :func:`folder`, ``$JALAPENO_CACHE_DIR`` or ``<repo>/build/.cache``.
- The key (:func:`key`): SHA-256 of what is computed and its parameters, the package's source (every
  ``*.py`` of ``jalapeno/``), the data files it reads, and the installed versions of Python and of every
  package ``pyproject.toml`` pins. Equal keys give equal results.
- An entry (:func:`entry`) is a file or a folder named by its key. It is computed into a temporary
  file or folder beside it, sealed with its digest (a file: its SHA-256 in ``<entry>.sha256``; a folder:
  what the caller's ``seal`` writes) and moved into place in one rename, under the entry's
  ``filelock.FileLock`` (``.<entry>.lock`` beside it): one process computes an entry, the others asking
  for it wait and then read its result (or, with ``wait=False``, pass over it). A damaged entry
  (truncated, edited, a file missing) is discarded with one line on stderr saying so and computed again.
- :func:`digests_held`: within one call of the public API, each file or folder is digested once.
- :func:`write_atomic`: a file is written to a temporary file beside it and moved onto it
  (``os.replace``), so a reader in another process finds the old file or the whole new one.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import importlib.metadata
import json
import os
import shutil
import sys
import tempfile
import tomllib
from collections.abc import Callable
from pathlib import Path

import filelock

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIR = Path(__file__).resolve().parent

#: Bump to invalidate every entry (the layout of an entry changed).
FORMAT = "4"


def folder() -> Path:
    """The cache folder: ``$JALAPENO_CACHE_DIR`` or ``<repo>/build/.cache`` (not created here)."""
    return Path(os.environ.get("JALAPENO_CACHE_DIR", REPO_ROOT / "build" / ".cache"))


_HELD: contextvars.ContextVar[dict | None] = contextvars.ContextVar("jalapeno_digests_held", default=None)


@contextlib.contextmanager
def digests_held():
    """Within the block (or the function it decorates), :func:`files_digest` reads each file or folder
    once: one call of the public API (:func:`jalapeno.frontier`) asks for eight keys, each digesting the
    package's source, and takes its inputs as they are when it starts; an edit made meanwhile is seen by
    the next call. A nested block shares the outer one's digests."""
    if _HELD.get() is not None:
        yield
        return
    token = _HELD.set({})
    try:
        yield
    finally:
        _HELD.reset(token)


def files_digest(root: Path, pattern: str = "*") -> str:
    """SHA-256 (hex) of the file ``root``, or of every file under the folder ``root`` whose name matches
    ``pattern``: relative paths and contents in sorted order (``__pycache__`` skipped). A missing
    ``root`` digests as empty. Read once within :func:`digests_held`."""
    held = _HELD.get()
    if held is None:
        return _files_digest(root, pattern)
    if (root, pattern) not in held:
        held[root, pattern] = _files_digest(root, pattern)
    return held[root, pattern]


def _files_digest(root: Path, pattern: str) -> str:
    h = hashlib.sha256()
    paths = [root] if root.is_file() else sorted(root.rglob(pattern))
    for path in paths:
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(str(path.relative_to(root.parent if path == root else root)).encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


def pins() -> dict[str, list[tuple[str, str]]]:
    """The packages ``pyproject.toml`` pins, by group (``core`` for its dependencies, then each extra):
    ``(name, pinned version)`` of each, an environment marker (``; sys_platform == 'linux'``) left out."""
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    groups = {"core": project["dependencies"], **project["optional-dependencies"]}
    return {group: [tuple(req.split(";")[0].strip().partition("==")[::2]) for req in reqs]
            for group, reqs in groups.items()}


@functools.lru_cache(maxsize=1)
def installed_versions() -> str:
    """Python's version and the installed version of every package of :func:`pins` (``not installed``
    for one that is missing), as JSON; once per process."""
    versions = {name: installed_version(name) for group in pins().values() for name, _ in group}
    return json.dumps({"python": sys.version, **versions}, sort_keys=True)


def installed_version(dist: str) -> str:
    """The installed version of the distribution ``dist``, or ``not installed``."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def key(*parts: object, data: Path | None = None) -> str:
    """The key (SHA-256, hex) of a result: ``parts`` (what is computed and its parameters: each by its
    ``repr``, bytes as they are, a polars DataFrame by its full-precision JSON, a dict by its sorted
    JSON), the package's source, the installed versions (:func:`installed_versions`) and, when ``data``
    is given, the data file or folder it reads (:func:`files_digest`)."""
    h = hashlib.sha256(f"format {FORMAT}\0".encode())
    for part in parts:
        text = (part if isinstance(part, bytes) else part.write_json() if hasattr(part, "write_json") else
                json.dumps(part, sort_keys=True, default=repr) if isinstance(part, dict) else repr(part))
        h.update((text if isinstance(text, bytes) else text.encode()) + b"\0")
    h.update(files_digest(PACKAGE_DIR, "*.py").encode() + installed_versions().encode())
    if data is not None:
        h.update(files_digest(data).encode())
    return h.hexdigest()


def lock(path: Path, *, wait: bool = True) -> filelock.FileLock:
    """The lock of ``path`` (an entry or any file): ``filelock.FileLock`` on ``.<name>.lock`` beside it,
    waiting for another holder (``wait=False``: ``filelock.Timeout`` at once)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return filelock.FileLock(path.with_name(f".{path.name}.lock"), timeout=-1 if wait else 0)


def write_atomic(path: Path, content: str | bytes | Callable[[Path], object], *, mode: int | None = None) -> Path:
    """Write ``content`` onto ``path`` whole: text (UTF-8), bytes, or ``content(tmp)`` writing the file
    ``tmp``, first into a temporary file beside ``path``, then moved onto it (``os.replace``); ``mode``
    (e.g. ``0o644``) its permissions, else the temporary file's (``0o600``). Returns ``path``. On an
    error the temporary file is removed and ``path`` left as it was."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as f:
            if not callable(content):
                f.write(content.encode() if isinstance(content, str) else content)
        if callable(content):
            content(tmp)
        if mode is not None:
            tmp.chmod(mode)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path


def sha256(path: Path) -> str:
    """The SHA-256 (hex) of the file ``path``."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _file_damage(path: Path) -> str | None:
    """Why the file entry ``path`` does not match the SHA-256 kept in ``<path>.sha256`` (written before
    the entry, so an entry without one was never whole), or None."""
    try:
        if path.with_name(path.name + ".sha256").read_text().strip() == sha256(path):
            return None
    except (OSError, UnicodeDecodeError):
        pass
    return "it does not match its SHA-256"


def intact(path: Path, damage: Callable[[Path], str | None] | None = None, *, shown: str | None = None,
           again: str = "computing it again") -> bool:
    """Whether the entry ``path`` exists and is whole: ``damage(path)`` (default: a file's SHA-256 check)
    says what is wrong with it, or None. A damaged entry is removed with one line on stderr, naming it
    (``shown``, default its path) and what is wrong, then ``again``."""
    if not path.exists():
        return False
    what = (damage or _file_damage)(path)
    if what is None:
        return True
    print(f"discarded the damaged cache entry {shown or path} ({what}); {again}", file=sys.stderr, flush=True)
    discard(path)
    return False


def discard(path: Path) -> None:
    """Remove the entry ``path`` (a file and its ``.sha256``, or a folder), if there."""
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
        path.with_name(path.name + ".sha256").unlink(missing_ok=True)


def store(path: Path, make: Callable[[Path], object], seal: Callable[[Path], object] | None = None) -> Path:
    """Compute the entry ``path`` under its lock (:func:`lock`): ``make(tmp)`` writes a temporary file
    beside it (or, with ``seal``, fills an empty temporary folder beside it, then ``seal(tmp)`` records its
    files' digests); it then replaces ``path`` in one rename. Returns ``path``."""
    with lock(path):
        return put(path, make, seal)


def put(path: Path, make: Callable[[Path], object], seal: Callable[[Path], object] | None = None) -> Path:
    """:func:`store` for a caller that already holds the entry's :func:`lock`."""
    if seal is None:  # a file: its digest first, so that an entry without one was never whole
        def write(tmp: Path) -> None:
            make(tmp)
            write_atomic(path.with_name(path.name + ".sha256"), sha256(tmp) + "\n")
        return write_atomic(path, write)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}-", dir=path.parent))
    try:
        make(tmp)
        seal(tmp)
        discard(path)
        tmp.rename(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


def entry(path: Path, make: Callable[[Path], object], *, wait: bool = True,
          seal: Callable[[Path], object] | None = None, damage: Callable[[Path], str | None] | None = None,
          shown: str | None = None, again: str = "computing it again") -> Path | None:
    """The path of the intact entry ``path``, computed first if it is missing or damaged (:func:`intact`,
    :func:`store`): one process computes it, the others asking meanwhile wait for its lock and then read
    its result; with ``wait=False`` one that another process is computing returns None at once. A folder
    entry needs ``seal`` and ``damage``; ``shown`` and ``again`` word the damaged-entry line."""
    if path.exists() and (damage or _file_damage)(path) is None:
        return path
    try:
        with lock(path, wait=wait):
            if intact(path, damage, shown=shown, again=again):  # computed by the process that held the lock
                return path
            return put(path, make, seal)
    except filelock.Timeout:
        return None


def prune(root: Path, pattern: str, keep: int) -> None:
    """Keep the ``keep`` most recently used entries of ``root`` matching ``pattern`` (by modification time,
    which a reader refreshes with ``os.utime``); remove the others with their locks. An entry whose lock
    another process holds (in use: being computed, or a render folder being rendered) is left alone."""
    entries = sorted((p for p in root.glob(pattern) if p.suffix != ".sha256" and not p.name.startswith(".")),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[keep:]:
        try:
            with lock(old, wait=False):
                discard(old)
        except filelock.Timeout:
            continue
        old.with_name(f".{old.name}.lock").unlink(missing_ok=True)

