"""The one cache (jalapeno.cache): its key, the "one process computes, the others wait" rule, damaged
entries, pruning and the one atomic write."""

import os
import subprocess
import sys
import time

import filelock
import pytest

from jalapeno import cache
from jalapeno.publish import execute


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("JALAPENO_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_two_processes_asking_for_one_missing_entry_compute_it_once(tmp_path, folder):
    child = ("import sys, time\n"
             "from pathlib import Path\n"
             "from jalapeno import cache\n"
             "def make(tmp):\n"
             "    open(sys.argv[1], 'a').write('computed\\n')\n"
             "    time.sleep(1.5)  # longer than a process takes to start, even on a busy machine\n"
             "    tmp.write_text('result')\n"
             "print(cache.entry(cache.folder() / 'test' / 'entry.txt', make).read_text())\n")
    log = tmp_path / "computed.txt"
    procs = [subprocess.Popen([sys.executable, "-c", child, str(log)], stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    assert [p.communicate()[0] for p in procs] == ["result\n"] * 2
    assert [p.returncode for p in procs] == [0, 0]
    assert log.read_text() == "computed\n"


def test_an_entry_another_process_computes_is_passed_over_without_waiting(folder):
    path = folder / "test" / "entry.txt"
    with cache.lock(path):  # another process computing it (a lock of another file descriptor: contended)
        started = time.monotonic()
        assert cache.entry(path, lambda tmp: tmp.write_text("x"), wait=False) is None
        assert time.monotonic() - started < 1
    assert cache.entry(path, lambda tmp: tmp.write_text("x"), wait=False).read_text() == "x"


@pytest.mark.parametrize("damage", ["truncated", "edited", "digest missing"])
def test_a_damaged_file_entry_is_discarded_with_one_line_and_computed_again(folder, capfd, damage):
    path = folder / "test" / "entry.txt"
    calls = []

    def make(tmp):
        calls.append(1)
        tmp.write_text("the whole result\n")

    cache.entry(path, make)
    if damage == "truncated":
        path.write_text("the whole")
    elif damage == "edited":
        path.write_text("the whole resulT\n")
    else:
        path.with_name("entry.txt.sha256").unlink()
    capfd.readouterr()
    assert cache.entry(path, make).read_text() == "the whole result\n"
    assert capfd.readouterr().err == (f"discarded the damaged cache entry {path} (it does not match its SHA-256); "
                                      "computing it again\n")
    assert cache.entry(path, make) == path and len(calls) == 2


def test_a_folder_entry_is_sealed_and_checked_by_the_callers_functions(folder, capfd):
    path = folder / "nb--1"

    def make(tmp):
        (tmp / "notebook.ipynb").write_text("{}")

    def seal(tmp):
        (tmp / "sealed").write_text((tmp / "notebook.ipynb").read_text())

    def damage(entry):
        return None if (entry / "sealed").read_text() == (entry / "notebook.ipynb").read_text() else "edited"

    cache.store(path, make, seal=seal)
    assert cache.intact(path, damage)
    (path / "notebook.ipynb").write_text("{ }")
    assert not cache.intact(path, damage, shown=path.name, again="executing the notebook again")
    assert capfd.readouterr().err == "discarded the damaged cache entry nb--1 (edited); executing the notebook again\n"
    assert not path.exists()
    assert cache.entry(path, make, seal=seal, damage=damage) == path and cache.intact(path, damage)
    assert sorted(p.name for p in folder.iterdir()) == [".nb--1.lock", "nb--1"]  # no temporary folder left


def test_the_key_changes_with_what_is_computed_its_parameters_and_data(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "chips.csv").write_text("chip,tdp_w\na,1000\n")
    first = cache.key("notebook", "roofline", {"context_tokens": 8192}, data=data)
    assert cache.key("notebook", "roofline", {"context_tokens": 8192}, data=data) == first
    assert cache.key("notebook", "pareto", {"context_tokens": 8192}, data=data) != first
    assert cache.key("notebook", "roofline", {"context_tokens": 8193}, data=data) != first
    (data / "chips.csv").write_text("chip,tdp_w\na,1001\n")
    assert cache.key("notebook", "roofline", {"context_tokens": 8192}, data=data) != first


def test_the_key_covers_the_whole_packages_source(tmp_path, monkeypatch):
    """A change to a chart or a physics module, not only to the book machinery, changes every key."""
    assert {"charts.py", "serving.py", "publish/execute.py"} <= {
        p.relative_to(cache.PACKAGE_DIR).as_posix() for p in cache.PACKAGE_DIR.rglob("*.py")}
    package = tmp_path / "jalapeno"
    (package / "publish").mkdir(parents=True)
    (package / "serving.py").write_text("X = 1\n")
    monkeypatch.setattr(cache, "PACKAGE_DIR", package)
    first = cache.key("claims")
    (package / "serving.py").write_text("X = 2\n")
    second = cache.key("claims")
    (package / "publish" / "execute.py").write_text("")
    assert len({first, second, cache.key("claims")}) == 3


def test_one_call_digests_the_source_once_and_the_next_call_sees_an_edit(tmp_path, monkeypatch):
    """Within :func:`cache.digests_held` (one call of the public API) the package's source is read once, as
    it was when the call started; the next call sees an edit made meanwhile."""
    package = tmp_path / "jalapeno"
    package.mkdir()
    (package / "serving.py").write_text("X = 1\n")
    monkeypatch.setattr(cache, "PACKAGE_DIR", package)
    with cache.digests_held():
        first = cache.key("claims")
        (package / "serving.py").write_text("X = 2\n")
        assert cache.key("claims") == first
        with cache.digests_held():
            assert cache.key("claims") == first
    assert cache.key("claims") != first


def test_a_first_frontier_reads_each_input_once(tmp_path):
    """A new process's first ``jalapeno.frontier`` asks for eight keys; each file or folder they digest is
    read once (without :func:`cache.digests_held` the package's source was read eight times)."""
    code = ("import collections, jalapeno; from jalapeno import cache; n = collections.Counter(); "
            "inner = cache._files_digest\n"
            "def counted(root, pattern):\n    n[root, pattern] += 1\n    return inner(root, pattern)\n"
            "cache._files_digest = counted; jalapeno.frontier('gb200', 'deepseek-r1'); "
            "print(n[cache.PACKAGE_DIR, '*.py'], max(n.values()), len(n))")
    env = dict(os.environ, JALAPENO_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                         cwd=cache.REPO_ROOT).stdout.split()
    source, most, inputs = map(int, out)
    assert (source, most) == (1, 1) and inputs >= 5


def test_the_key_changes_with_an_installed_version(monkeypatch):
    first = cache.key("claims")
    assert "filelock" in cache.installed_versions()  # every package pyproject.toml pins
    with monkeypatch.context() as m:
        m.setattr(cache, "installed_version", lambda dist: "0.0" if dist == "numpy" else "1.0")
        cache.installed_versions.cache_clear()
        changed = cache.key("claims")
    cache.installed_versions.cache_clear()  # the real versions again
    assert changed != first and cache.key("claims") == first


def test_a_notebooks_key_changes_with_its_parameters():
    assert execute.input_hash("claims", {}) != execute.input_hash("claims", {"show_status": "reproduced"})
    assert execute.input_hash("claims", {}) == execute.input_hash("claims", {})


def test_pruning_keeps_the_most_recently_used(folder):
    for i in range(4):
        cache.store(folder / f"nb--{i}", lambda tmp: None)
        os.utime(folder / f"nb--{i}", (i, i))
    os.utime(folder / "nb--0")  # read
    cache.prune(folder, "nb--*", 2)
    assert sorted(p.name for p in folder.glob("nb--*")) == ["nb--0", "nb--0.sha256", "nb--3", "nb--3.sha256"]
    assert sorted(p.name for p in folder.glob(".*.lock")) == [".nb--0.lock", ".nb--3.lock"]


def test_pruning_leaves_an_entry_another_process_holds(folder):
    """A render folder being rendered (its lock held by another process) stays, however old; the old
    ones not in use go, their locks too (build.RENDER_KEEP bounds the cache's render folders so)."""
    for i in range(4):
        (folder / f"r{i}" / "src").mkdir(parents=True)
        os.utime(folder / f"r{i}", (i, i))
    holder = subprocess.Popen([sys.executable, "-c", "import sys, filelock; lock = filelock.FileLock(sys.argv[1]); "
                               "lock.acquire(); print('held', flush=True); sys.stdin.read()", str(folder / ".r0.lock")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        cache.prune(folder, "*", 1)
    finally:
        holder.communicate("")
    assert sorted(p.name for p in folder.iterdir()) == [".r0.lock", "r0", "r3"]


def test_an_atomic_write_leaves_the_old_file_when_it_fails(tmp_path):
    path = tmp_path / "table.json"
    cache.write_atomic(path, "old\n", mode=0o644)
    assert path.read_text() == "old\n" and path.stat().st_mode & 0o777 == 0o644

    def fail(tmp):
        tmp.write_text("half")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        cache.write_atomic(path, fail)
    assert path.read_text() == "old\n" and sorted(p.name for p in tmp_path.iterdir()) == ["table.json"]
    assert cache.write_atomic(path, b"new\n").read_bytes() == b"new\n"


def test_every_lock_is_filelocks(folder):
    assert isinstance(cache.lock(folder / "x"), filelock.BaseFileLock)


def test_two_builds_of_one_notebook_at_once_execute_it_once(tmp_path, own_notebook_cache):
    """The rule for executed notebooks: two builds started together with the same inputs, into two
    folders, execute the notebook once; the other build waits for the entry and reads it."""
    env = {**os.environ, "JALAPENO_CACHE_DIR": str(own_notebook_cache)}
    procs = [subprocess.Popen([sys.executable, "-m", "jalapeno.publish.cli", "build", "claims", "--out", str(tmp_path / f"site{i}")],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for i in (1, 2)]
    logs = [p.communicate(timeout=600)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], logs
    assert sum("claims: executed in" in log for log in logs) == 1, logs
    assert (tmp_path / "site1" / "index.html").read_bytes() == (tmp_path / "site2" / "index.html").read_bytes()
