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
