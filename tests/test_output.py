"""Nothing lost, ever: what ``--out`` refuses, the lock per output folder, and builds that end (killed,
interrupted) with no process, no staging folder and nothing in the temporary folder left behind. The
manifest, the swap under signals and the other faults: tests/test_faults.py."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from jalapeno.publish import build, output

ROOT = Path(__file__).resolve().parent.parent
JALAPENO = [sys.executable, "-m", "jalapeno.publish.cli"]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below ``folder`` with its content (what a refused build must leave as it was)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run(argv, cwd, env=None, **kw):
    return subprocess.run(JALAPENO + argv, cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, **kw)


@pytest.fixture
def home(tmp_path):
    """A home folder with a file in it, and a working folder inside it holding a user's files."""
    home = tmp_path / "home"
    work = home / "work"
    (work / "notes").mkdir(parents=True)
    (home / ".profile").write_text("export X=1\n")
    (work / "draft.md").write_text("uncommitted work\n")
    (work / "notes" / "a.txt").write_text("a\n")
    (tmp_path / "results.csv").write_text("a,b\n1,2\n")
    return home


@pytest.mark.parametrize("out, reason", [
    ("notes", "is a folder with files that jalapeno did not build"),
    ("draft.md", "is an existing file"),
    (".", "is the working folder"),
    ("..", "is the home folder"),
    ("../..", "is a parent of the working folder"),
    ("/", "is a parent of the working folder"),
    (str(ROOT), "is the repository"),
    (str(ROOT / "notebooks"), "is the notebooks"),
    (str(ROOT / "build"), "is a parent of the build cache"),
    # anywhere inside the sources, not only at them (issue 20)
    (str(ROOT / "book" / "sub"), f"is inside the book's sources ({ROOT / 'book'})"),
    (str(ROOT / "data" / "site"), f"is inside the repository ({ROOT}) and not below its build/ folder"),
    (str(ROOT / "notebooks" / "site"), f"is inside the notebooks ({ROOT / 'notebooks'})"),
    (str(ROOT / "jalapeno" / "site"), "is inside the repository"),
])
def test_out_refuses_what_the_tool_did_not_create_and_deletes_nothing(home, out, reason):
    work, top = home / "work", home.parent
    before = snapshot(top)
    proc = run(["build", "claims", "--out", out], cwd=work, env={"HOME": str(home)})
    assert proc.returncode == 2, proc.stderr
    assert f"--out {out}: {reason}" in proc.stderr
    assert "executing" not in proc.stderr  # refused before anything runs
    assert snapshot(top) == before
    assert sorted(p.name for p in top.iterdir()) == ["home", "results.csv"]
    target = Path(out)
    if target.is_relative_to(ROOT) and target != ROOT:  # no lock file, no folder in the sources either
        assert not list(target.parent.glob(f".{target.name}*"))
        assert target.name not in ("sub", "site") or not target.exists()


def test_nothing_inside_the_build_cache(tmp_path):
    with pytest.raises(output.OutputError, match=re.escape(f"--out {tmp_path}/cache/site: is inside the build cache")):
        output.check_output(tmp_path / "cache" / "site", {"the build cache": tmp_path / "cache"})


def test_a_symbolic_link_is_refused(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(output.OutputError, match="is a symbolic link"):
        output.check_output(tmp_path / "link")


def test_only_a_folder_its_manifest_proves_is_accepted(tmp_path):
    site = tmp_path / "site"
    (site / "chapters").mkdir(parents=True)
    (site / "index.html").write_text("<html></html>")
    with pytest.raises(output.OutputError, match=r"site/chapters \(not in a jalapeno manifest\)"):
        output.check_output(site)
    output.write_manifest(site)
    assert output.check_output(site) == site.resolve() and output.intact(site)
    (site / "index.html").unlink()  # a file of the tool's that is gone costs nothing
    assert output.check_output(site) == site.resolve()
    assert output.check_output(tmp_path / "new") == (tmp_path / "new").resolve()
    (tmp_path / "empty").mkdir()
    assert output.check_output(tmp_path / "empty") == (tmp_path / "empty").resolve()


def test_a_second_build_into_the_same_folder_stops_at_once(tmp_path):
    out = tmp_path / "site"
    with output.locked(out.resolve()):
        started = time.monotonic()
        proc = run(["build", "claims", "--out", str(out)], cwd=tmp_path)
        assert time.monotonic() - started < 30  # it did not wait for the lock, nor execute anything
    assert proc.returncode == 2
    assert f"another jalapeno build (process {os.getpid()}) is writing {out.resolve()}" in proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site.jalapeno-lock"]


def test_a_build_replaces_only_its_own_site_and_keeps_a_users_sibling(tmp_path):
    out = tmp_path / "site"  # the repository's build cache: what is replaced here is the site, not a result
    sibling = tmp_path / ".site-old"  # the name earlier versions used for their own old folder
    sibling.mkdir()
    (sibling / "mine.txt").write_text("not the tool's")
    build.build(["claims"], out=out, progress=False)
    assert output.intact(out) and (out / "index.html").is_file()
    (out / "stale.html").write_text("from a previous build")
    output.write_manifest(out)  # as a build that wrote it would have recorded it
    build.build(["claims"], out=out, progress=False)  # a folder it built: replaced whole
    assert not (out / "stale.html").exists() and (out / "index.html").is_file() and output.intact(out)
    assert (sibling / "mine.txt").read_text() == "not the tool's"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".site-old", ".site.jalapeno-lock", "site"]


def test_a_file_a_user_adds_inside_a_built_site_is_never_removed(tmp_path):
    """Case 3 of issue 20: the next build into the site refuses, naming the file, before anything runs."""
    out = tmp_path / "site"
    build.build(["claims"], out=out, progress=False)
    (out / "chapters" / "my-notes.md").write_text("mine")
    (out / "index.html").write_text("edited by hand")
    before = snapshot(tmp_path)
    proc = run(["build", "claims", "--out", str(out)], cwd=tmp_path)
    assert proc.returncode == 2
    assert f"{out}/chapters/my-notes.md (a file jalapeno did not write)" in proc.stderr
    assert f"{out}/index.html (changed since jalapeno wrote it)" in proc.stderr
    assert "executing" not in proc.stderr and "Traceback" not in proc.stderr
    assert snapshot(tmp_path) == before


def _start(tmp_path: Path, out: Path) -> subprocess.Popen:
    """A real build of two notebooks (two workers, two kernels) in a new session, waiting until both
    kernels run; its temporary folder is ``tmp_path / "tmp"``."""
    (tmp_path / "tmp").mkdir()
    proc = subprocess.Popen(JALAPENO + ["build", "claims", "roofline", "--no-cache", "--jobs", "2", "--out", str(out)],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            env={**os.environ, "JALAPENO_CACHE_DIR": str(tmp_path / "cache"),
                                 "TMPDIR": str(tmp_path / "tmp")})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        kids = psutil.Process(proc.pid).children(recursive=True)
        if sum("ipykernel" in " ".join(k.cmdline()) for k in kids if k.is_running()) >= 2:
            return proc
        time.sleep(0.2)
    proc.kill()
    pytest.fail("the build never started two kernels")


def _running(p: psutil.Process) -> bool:
    """Whether ``p`` still runs: a zombie (ended, waiting for its new parent, PID 1, to reap it) does not."""
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _gone(pids: list[psutil.Process], within_s: float) -> list[psutil.Process]:
    """The processes of ``pids`` still running after ``within_s`` seconds."""
    _, alive = psutil.wait_procs(pids, timeout=within_s)
    return [p for p in alive if _running(p)]


@pytest.mark.parametrize("how", ["SIGINT to the process group (Ctrl-C)", "SIGTERM"])
def test_an_interrupted_build_ends_its_workers_prints_one_line_and_leaves_nothing(tmp_path, how):
    out = tmp_path / "site"
    proc = _start(tmp_path, out)
    kids = psutil.Process(proc.pid).children(recursive=True)
    if how.startswith("SIGINT"):
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == (130 if how.startswith("SIGINT") else 143)  # 128 + the signal, as a shell reports it
    assert err.strip().splitlines()[-1].startswith("jalapeno: interrupted: build stopped")
    assert "Traceback" not in err
    assert _gone(kids, 10) == []
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == [".site.jalapeno-lock", "tmp"]
    assert list((tmp_path / "tmp").iterdir()) == []  # no kernel connection file (with its key) left there


def test_a_killed_build_leaves_no_process_and_the_next_build_removes_its_staging_folder(tmp_path):
    out = tmp_path / "site"
    proc = _start(tmp_path, out)
    kids = psutil.Process(proc.pid).children(recursive=True)
    proc.kill()
    proc.communicate()
    assert _gone(kids, 10) == []  # each worker sees its parent gone (its sentinel) and ends its kernel
    assert list((tmp_path / "tmp").iterdir()) == []  # the kernels' connection files are in the stage
    stale = [p.name for p in tmp_path.glob(".site-building-*")]
    assert len(stale) == 1
    again = run(["build", "claims", "--out", str(out)], cwd=tmp_path)  # the repository's cache: no cold refit
    assert again.returncode == 0, again.stderr
    assert f"removed {stale[0]}, left behind by an interrupted build" in again.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == [".site.jalapeno-lock", "site", "tmp"]
