"""``jalapeno build --dask``: the notebooks of a build executed on a Dask cluster give the site of the
local build, byte for byte; an address where no scheduler answers is one line and status 2."""

import subprocess
import sys
from pathlib import Path

import distributed

from jalapeno.publish import build, cli

JALAPENO = [sys.executable, "-m", "jalapeno.publish.cli"]
SMALL = ["claims", "roofline"]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file and folder below ``folder``, with each file's content."""
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() and not p.is_symlink() else b"<dir or link>"
            for p in sorted(folder.rglob("*"))}


def test_a_build_on_a_dask_cluster_gives_the_local_builds_site_byte_for_byte(tmp_path, own_notebook_cache,
                                                                              monkeypatch):
    monkeypatch.setenv("JALAPENO_CACHE_DIR", str(own_notebook_cache))  # the workers inherit it too
    out = tmp_path / "site"
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        assert cli.main(["build", *SMALL, "--no-cache", "--out", str(out), "--dask", cluster.scheduler_address]) == 0
        assert cluster.scheduler.task_prefixes["execute_notebook"].state_counts["memory"] == len(SMALL)  # ran there
    assert all(s.startswith("executed") for s in build.last_report.status.values())
    on_dask = snapshot(out)
    out.rename(tmp_path / "on-dask")
    build.build(SMALL, out=out, use_cache=False, progress=False)  # the local pool, into the same folder
    local = snapshot(out)
    assert sorted(on_dask) == sorted(local)
    assert [name for name in local if on_dask[name] != local[name]] == []
    assert not any((own_notebook_cache).glob("claims--*"))  # --no-cache: nothing stored


def test_an_address_without_a_scheduler_is_one_line_and_status_2(tmp_path):
    proc = subprocess.run(JALAPENO + ["build", "claims", "--dask", "tcp://127.0.0.1:9", "--out", "site"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [proc.stderr.strip()]
    assert proc.stderr.startswith("jalapeno: error: --dask tcp://127.0.0.1:9: no Dask scheduler")
    assert list(tmp_path.iterdir()) == []
