"""Issue 20, "nothing lost, nothing crashes": ownership proved by a manifest (a marker, a copied or planted
manifest or a folder's location proves nothing), the final swap under SIGINT, SIGTERM and SIGKILL, the
renderer ending with a killed build, damaged cache entries, and byte-identical builds."""

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import psutil
import pytest
import renameat2

from jalapeno import data
from jalapeno.publish import build, output, pages

ROOT = Path(__file__).resolve().parent.parent
JALAPENO = [sys.executable, "-m", "jalapeno.publish.cli"]

#: ``python -c`` a build through the command line with a fault at one step of the final swap:
#: argv = step, signal name, "exchange" or "journal" (the fallback without renameat2), then the build's.
FAULTY_BUILD = """
import errno, os, signal, sys
import renameat2
from jalapeno.publish import cli, output
step, sig, how = sys.argv[1], getattr(signal, sys.argv[2]), sys.argv[3]
if how == "journal":
    def no_exchange(a, b):
        raise OSError(errno.EINVAL, "no exchange on this file system")
    renameat2.exchange = no_exchange
output.fault = lambda at: os.kill(os.getpid(), sig) if at == step else None
sys.exit(cli.main(sys.argv[4:]))
"""


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file and folder below ``folder``, with each file's content."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() and not p.is_symlink() else b"<dir or link>"
            for p in sorted(folder.rglob("*"))}


def run(argv, cwd, **kw):
    return subprocess.run(JALAPENO + argv, cwd=cwd, capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def claims_site(tmp_path_factory) -> Path:
    """A site of the claims chapter (default parameters) built once, in a folder named ``site``."""
    out = tmp_path_factory.mktemp("claims") / "site"
    build.build(["claims"], out=out, progress=False)
    return out


@pytest.fixture
def previous(tmp_path, claims_site) -> Path:
    """``tmp_path / "site"``: an earlier build's site (it has a page the next build does not write)."""
    out = tmp_path / "site"
    shutil.copytree(claims_site, out, symlinks=True)
    (out / "old-version.html").write_text("the previous build's")
    output.write_manifest(out)
    return out


# ---- 1. ownership ------------------------------------------------------------------------------------

def _marker(mine: Path, claims_site: Path) -> None:
    (mine / ".jalapeno-site").touch()


def _linked_marker(mine: Path, claims_site: Path) -> None:
    (mine / ".jalapeno-site").symlink_to(claims_site / "index.html")


def _copied_site(mine: Path, claims_site: Path) -> None:  # a whole site, its manifest and a marker copied in
    shutil.copytree(claims_site, mine, dirs_exist_ok=True)
    (mine / ".jalapeno-site").touch()


def _planted_manifest(mine: Path, claims_site: Path) -> None:  # a manifest that describes other files
    shutil.copy(claims_site / output.MANIFEST, mine)


def _linked_manifest(mine: Path, claims_site: Path) -> None:
    (mine / output.MANIFEST).symlink_to(claims_site / output.MANIFEST)


@pytest.mark.parametrize("fake", [_marker, _linked_marker, _copied_site, _planted_manifest, _linked_manifest],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_marker_or_a_manifest_that_does_not_match_proves_nothing(tmp_path, claims_site, fake):
    """Case 1: ``mkdir -p mine/sub; echo x > mine/thesis.txt; touch mine/.jalapeno-site`` and variants."""
    mine = tmp_path / "mine"
    (mine / "sub").mkdir(parents=True)
    (mine / "thesis.txt").write_text("x\n")
    fake(mine, claims_site)
    before = snapshot(tmp_path)
    proc = run(["build", "claims", "--out", "mine"], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "--out mine: is a folder with files that jalapeno did not build" in proc.stderr
    assert "mine/thesis.txt (" in proc.stderr or "mine/sub (" in proc.stderr
    assert "executing" not in proc.stderr and "Traceback" not in proc.stderr
    assert snapshot(tmp_path) == before


def test_a_folder_under_build_scenarios_is_not_the_tools_by_its_location():
    """Case 2: ``build/scenarios/my-notes`` with a file of the user's in it."""
    notes = ROOT / "build" / "scenarios" / f"my-notes-{os.getpid()}"
    made = [p for p in (notes.parent, notes.parent.parent) if not p.exists()]  # the test's own, removed after
    notes.mkdir(parents=True)
    try:
        (notes / "t.txt").write_text("x\n")
        proc = run(["build", "claims", "--out", str(notes.relative_to(ROOT))], cwd=ROOT)
        assert proc.returncode == 2, proc.stderr
        assert f"{notes.name}/t.txt (not in a jalapeno manifest)" in proc.stderr
        assert sorted(p.name for p in notes.iterdir()) == ["t.txt"] and (notes / "t.txt").read_text() == "x\n"
        assert not list(notes.parent.glob(f".{notes.name}*"))
    finally:
        shutil.rmtree(notes)
        for folder in made:  # deepest first; one a parallel test has written into meanwhile stays
            with contextlib.suppress(OSError):
                folder.rmdir()


def test_a_stale_stage_holding_a_file_of_the_users_is_kept(tmp_path):
    out = (tmp_path / "site").resolve()
    stage = output.make_stage(out)
    (stage / "mine.txt").write_text("not the tool's")
    with pytest.raises(output.OutputError, match=r"kept the staging folder .*mine.txt \(not written by a build\)"):
        output.remove_stale_stages(out)
    assert (stage / "mine.txt").read_text() == "not the tool's"


def test_a_lock_path_holding_a_users_file_is_not_overwritten(tmp_path):
    out = (tmp_path / "site").resolve()
    (tmp_path / ".site.jalapeno-lock").write_text("my notes\n")
    with pytest.raises(output.OutputError, match="is not a build's lock file"):
        with output.locked(out):
            pass
    assert (tmp_path / ".site.jalapeno-lock").read_text() == "my notes\n"


# ---- 1. the swap under signals -------------------------------------------------------------------------

def _faulty(tmp_path: Path, step: str, sig: str, how: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", FAULTY_BUILD, step, sig, how, "build", "claims", "--out", "site"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)


def _beside(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir())


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_before_the_swap_leaves_the_previous_site_and_says_so(tmp_path, previous, sig):
    before = snapshot(previous)
    proc = _faulty(tmp_path, "before-swap", sig, "exchange")
    assert proc.returncode == {"SIGINT": 130, "SIGTERM": 143}[sig], proc.stderr
    assert proc.stderr.strip().splitlines()[-1].endswith("; the output folder was left as it was")
    assert snapshot(previous) == before
    assert _beside(tmp_path) == [".site.jalapeno-lock", "site"]


@pytest.mark.parametrize("step, sig, how", [
    ("after-swap", "SIGINT", "exchange"),
    ("after-swap", "SIGTERM", "exchange"),
    ("between-renames", "SIGINT", "journal"),   # held until both renames are done
    ("between-renames", "SIGTERM", "journal"),
])
def test_a_signal_during_or_after_the_swap_leaves_the_new_site_and_says_so(tmp_path, previous, step, sig, how):
    proc = _faulty(tmp_path, step, sig, how)
    assert proc.returncode == {"SIGINT": 130, "SIGTERM": 143}[sig], proc.stderr
    out = previous.resolve()
    assert proc.stderr.strip().splitlines()[-1].endswith(f"; the new site was already in place in {out}")
    assert "left as it was" not in proc.stderr
    assert output.intact(out) and (out / "index.html").is_file() and not (out / "old-version.html").exists()
    assert _beside(tmp_path) == [".site.jalapeno-lock", "site"]


def test_sigkill_between_the_fallbacks_renames_keeps_the_previous_site_for_the_next_build(tmp_path, previous):
    """Case 5: the killed build leaves no ``site``; its stage holds the only copy of the previous one,
    which the next build puts back (it never deletes it)."""
    before = snapshot(previous)
    proc = _faulty(tmp_path, "between-renames", "SIGKILL", "journal")
    assert proc.returncode == -signal.SIGKILL
    assert not previous.exists()
    stage, = tmp_path.glob(".site-building-*")
    assert snapshot(stage / "previous") == before
    done = output.remove_stale_stages(previous.resolve())
    assert done == [f"restored {previous.resolve()} from {stage.name}, where an interrupted build had left it",
                    f"removed {stage.name}, left behind by an interrupted build"]
    assert snapshot(previous) == before
    assert _beside(tmp_path) == [".site.jalapeno-lock", "site"]


def test_sigkill_after_the_exchange_leaves_the_new_site_and_the_next_build_completes(tmp_path, previous):
    proc = _faulty(tmp_path, "after-swap", "SIGKILL", "exchange")
    assert proc.returncode == -signal.SIGKILL
    assert output.intact(previous) and not (previous / "old-version.html").exists()
    stage, = tmp_path.glob(".site-building-*")
    assert (stage / "html" / "old-version.html").is_file()  # the previous site, swapped into the stage
    again = run(["build", "claims", "--out", "site"], cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert f"removed {stage.name}, left behind by an interrupted build" in again.stderr
    assert _beside(tmp_path) == [".site.jalapeno-lock", "site"]


def _staged(tmp_path: Path) -> tuple[Path, Path, Path]:
    """An earlier site in ``tmp_path / "site"`` and a finished new one in a stage beside it."""
    out = tmp_path / "site"
    out.mkdir()
    (out / "old.html").write_text("the previous build's")
    output.write_manifest(out)
    stage = output.make_stage(out)
    (stage / "html").mkdir()
    (stage / "html" / "index.html").write_text("the new build's")
    return out, stage, stage / "html"


def test_the_swap_is_one_exchange_where_renameat2_can(tmp_path, monkeypatch):
    steps: list[str] = []
    monkeypatch.setattr(output, "fault", steps.append)
    out, stage, site = _staged(tmp_path)
    output.replace(out, site, stage)
    assert steps == ["before-swap", "after-swap"]
    assert (out / "index.html").read_text() == "the new build's" and output.intact(out)
    assert (stage / "html" / "old.html").is_file() and not (stage / "previous").exists()


def _einval(a, b):
    raise OSError(errno.EINVAL, "renameat2: EINVAL")


@pytest.mark.parametrize("why", ["renameat2 not installed", "the file system cannot exchange"])
def test_without_renameat2_the_swap_falls_back_to_two_renames_under_a_journal(tmp_path, monkeypatch, why):
    if why == "renameat2 not installed":
        monkeypatch.setitem(sys.modules, "renameat2", None)  # import renameat2 raises ImportError
    else:
        monkeypatch.setattr(renameat2, "exchange", _einval)
    steps: list[str] = []
    monkeypatch.setattr(output, "fault", lambda step: steps.append((step, (stage / output.JOURNAL).is_file())))
    out, stage, site = _staged(tmp_path)
    output.replace(out, site, stage)
    assert steps == [("before-swap", False), ("between-renames", True), ("after-swap", False)]
    assert (out / "index.html").read_text() == "the new build's" and output.intact(out)
    assert (stage / "previous" / "old.html").is_file()


# ---- 3. faults survived ------------------------------------------------------------------------------

def _renders(p: psutil.Process) -> bool:
    """Whether process ``p`` holds a render folder's lock (the renderer does while it renders), False for
    one that ended (or is a zombie) while the children were read."""
    try:
        return any(f.path.endswith(".lock") and "/render/" in f.path for f in p.open_files())
    except psutil.Error:
        return False


def _running(p: psutil.Process) -> bool:
    """Whether ``p`` still runs: a zombie (ended, waiting for its new parent, PID 1, to reap it) does not."""
    try:
        return p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def test_the_renderer_ends_with_a_killed_build_and_the_next_build_is_clean(tmp_path, claims_site):
    """A build killed while Jupyter Book renders takes the renderer (its worker process) with it; the
    next build into the same folder gives the same files as a clean build."""
    proc = subprocess.Popen(JALAPENO + ["build", "claims", "--out", "site"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline, renderer = time.monotonic() + 120, None
    while renderer is None and time.monotonic() < deadline and proc.poll() is None:
        renderer = next((p for p in psutil.Process(proc.pid).children(recursive=True) if _renders(p)), None)
        time.sleep(0.05)
    assert renderer is not None, "the build never started the renderer"
    proc.kill()
    proc.wait()
    _, alive = psutil.wait_procs([renderer], timeout=2)  # at once: a render of a new folder takes longer
    assert [p for p in alive if _running(p)] == []
    again = run(["build", "claims", "--out", "site"], cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert snapshot(tmp_path / "site") == snapshot(claims_site)


def test_a_render_that_fails_names_the_broken_reference_and_keeps_the_previous_site(tmp_path, previous,
                                                                                    monkeypatch):
    book = tmp_path / "book"
    shutil.copytree(build.BOOK_DIR, book, ignore=shutil.ignore_patterns("_build"))
    (book / "intro.md").write_text((book / "intro.md").read_text() + "\nSee {ref}`no-such-label`.\n")
    monkeypatch.setattr(pages, "BOOK_DIR", book)
    before = snapshot(previous)
    with pytest.raises(build.BuildError, match="(?s)jupyter-book failed:.*undefined label: 'no-such-label'"):
        build.build(["claims"], out=previous, progress=False)
    assert snapshot(previous) == before
    assert _beside(tmp_path) == [".site.jalapeno-lock", "book", "site"]


def test_a_damaged_cache_entry_is_discarded_and_executed_again(tmp_path, own_notebook_cache, monkeypatch, capfd):
    monkeypatch.setenv("JALAPENO_CACHE_DIR", str(own_notebook_cache))
    out = tmp_path / "site"
    build.build(["claims"], out=out, progress=False)
    entry, = own_notebook_cache.glob("claims--*")
    notebook = entry / "notebook.ipynb"
    notebook.write_bytes(notebook.read_bytes()[:1000])  # truncated
    capfd.readouterr()
    build.build(["claims"], out=out, progress=False)
    err = capfd.readouterr().err
    assert (f"discarded the damaged cache entry {entry.name} (notebook.ipynb: changed since jalapeno wrote it); "
            "executing the notebook again") in err
    assert "Traceback" not in err and build.last_report.status["claims"].startswith("executed")
    assert output.intact(entry)


@pytest.mark.parametrize("damage", ["truncated", "a byte changed", "no digest"])
def test_a_damaged_cached_frame_is_discarded_and_computed_again(tmp_path, monkeypatch, capfd, damage):
    monkeypatch.setenv("JALAPENO_CACHE_DIR", str(tmp_path))
    frame = pl.DataFrame({"x": [1.5, 2.5, 3.5] * 100})
    calls = []

    def compute():
        calls.append(1)
        return frame

    assert data.cached_frame("test", "key", compute).equals(frame)
    path = tmp_path / "test" / "key.parquet"
    body = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(body[:len(body) // 2])
    elif damage == "a byte changed":
        path.write_bytes(body[:100] + bytes([body[100] ^ 1]) + body[101:])
    else:
        path.with_name("key.parquet.sha256").unlink()
    capfd.readouterr()
    assert data.cached_frame("test", "key", compute).equals(frame)
    err = capfd.readouterr().err
    assert err == f"discarded the damaged cache entry {path} (it does not match its SHA-256); computing it again\n"
    assert len(calls) == 2
    assert data.cached_frame("test", "key", compute).equals(frame) and len(calls) == 2  # whole again


def test_the_same_inputs_give_the_same_files_byte_for_byte(tmp_path, own_notebook_cache, monkeypatch):
    """A non-default build, then another parameter into the same folder, then the first again (from the
    cache, rendered incrementally), equals the first build; and so does one executed afresh into a new
    folder at the same path (the banner's rebuild command names the output folder, an input of the page)."""
    monkeypatch.setenv("JALAPENO_CACHE_DIR", str(own_notebook_cache))
    a = tmp_path / "a" / "site"
    build.build(["claims"], {"show_status": "not checkable"}, a, progress=False)
    first = snapshot(a)
    build.build(["claims"], {"show_status": "reproduced"}, a, progress=False)  # other words on the page
    assert snapshot(a) != first
    build.build(["claims"], {"show_status": "not checkable"}, a, progress=False)
    assert build.last_report.status["claims"].startswith("cached")
    again = snapshot(a)
    a.rename(tmp_path / "a" / "kept")  # the path free again: a new folder there
    build.build(["claims"], {"show_status": "not checkable"}, a, use_cache=False, progress=False)
    assert build.last_report.status["claims"].startswith("executed")
    for shown in (again, snapshot(a)):
        differ = sorted(k for k in set(first) | set(shown) if first.get(k) != shown.get(k))
        assert differ == []
