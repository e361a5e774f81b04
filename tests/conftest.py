"""Shared fixtures: a copy of data/ to break on purpose, with the loader's cache cleared around it."""

import shutil
from pathlib import Path

import pytest

from jalapeno import data

DATA = Path(__file__).resolve().parent.parent / "data"


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
