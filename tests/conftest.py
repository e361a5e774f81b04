"""Shared fixtures: a copy of data/ to break on purpose, with the loader's cache cleared around it."""

import shutil
from pathlib import Path

import filelock
import pytest

from jalapeno import cache, data
from jalapeno.publish import build

DATA = Path(__file__).resolve().parent.parent / "data"
#: The kinds of computed results kept by jalapeno.data.cached_frame (keyed by their inputs, so any cache
#: may share them); executed notebooks and rendered sites are kept apart from these.
RESULT_KINDS = ("schemes", "jalapeno-nodes", "claims")


@pytest.fixture(scope="session")
def built_book(tmp_path_factory) -> Path:
    """The whole book built once with its defaults (the README's first command) for every test that reads
    a built site, under ``pytest -n`` too: the first worker builds it under a lock in the session's
    shared temporary folder, the others wait and read it. Returns the site folder (``index.html`` in it)."""
    root = tmp_path_factory.getbasetemp()
    root = root.parent if root.name.startswith("popen-gw") else root  # xdist: the workers' common folder
    out = root / "shared-book" / "html"
    with filelock.FileLock(root / "shared-book.lock"):
        if not (out / "index.html").exists():
            build.build(out=out, progress=False)
    return out


@pytest.fixture
def own_notebook_cache(tmp_path) -> Path:
    """A build cache in ``tmp_path / "cache"`` whose executed notebooks and renders are its own (a test of the cache
    starts from nothing) but whose refits are the repository cache's (a refit keyed by its inputs gives
    the same frame wherever it is kept, so a cold test need not refit what another test fitted)."""
    folder = tmp_path / "cache"
    folder.mkdir(parents=True, exist_ok=True)
    for kind in RESULT_KINDS:
        shared = cache.folder() / kind
        shared.mkdir(parents=True, exist_ok=True)
        (folder / kind).symlink_to(shared, target_is_directory=True)
    return folder


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A writable copy of data/ that the package reads instead of the real one."""
    target = tmp_path / "data"
    shutil.copytree(DATA, target)
    monkeypatch.setenv("JALAPENO_DATA_DIR", str(target))
    data._load.cache_clear()
    yield target
    data._load.cache_clear()


@pytest.fixture
def edit_data(data_copy):
    """``edit(name, old, new)``: replace the first ``old`` with ``new`` in file ``name`` of the data copy
    (failing when ``old`` is not there, so a test cannot pass by editing nothing) and clear the loader's
    cache so that the next read sees the change."""
    def edit(name: str, old: str, new: str) -> None:
        path = data_copy / name
        text = path.read_text()
        assert old in text, f"{name} has no {old!r} to replace"
        path.write_text(text.replace(old, new, 1))
        data._load.cache_clear()
    return edit
