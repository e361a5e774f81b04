"""Proof, not hope: every committed output survives a last-bit change of every float of ``data/``.

Every float field of every CSV file of ``data/`` (a cell written with a decimal point or an exponent;
integers, run ids and dates untouched) is multiplied by ``1 + 1e-13`` or ``1 - 1e-13``, alternately; then
every committed notebook is re-executed and compared with nbval (every stored output: prose quotes,
tables, chart data), with an empty cache, so nothing computed from the unperturbed data is reused. A
relative 1e-13 is about 450 ulps, far above what another CPU's floating-point path changes in a
well-conditioned result and far below the five significant digits a stored float keeps
(:mod:`jalapeno.display`), so an output that this changes hangs on last bits and would differ on another
machine. It is the proof for the numeric paths a CPU cannot take (``tests/numeric_paths.py`` says when).
"""

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
RELATIVE = 1e-13
_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][-+]?\d+)")


def perturbed_copy(source: Path, target: Path) -> int:
    """Copy the folder ``source`` to ``target`` with every float cell of its CSV files perturbed by a
    relative ±:data:`RELATIVE` (alternating signs, in file order); other files copied as they are. Returns
    how many cells were perturbed."""
    n = 0
    for path in sorted(source.rglob("*")):
        dest = target / path.relative_to(source)
        if path.is_dir() or "__pycache__" in path.parts:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix != ".csv":
            dest.write_bytes(path.read_bytes())
            continue
        with path.open(newline="") as f:
            rows = list(csv.reader(f))
        for row in rows[1:]:
            for i, cell in enumerate(row):
                if _FLOAT.fullmatch(cell.strip()) and float(cell) != 0.0:
                    row[i] = repr(float(cell) * (1 + RELATIVE * (1 if n % 2 == 0 else -1)))
                    n += 1
        with dest.open("w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(rows)
    return n


def test_perturbed_copy_changes_floats_only(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "t.csv").write_text("run_id,x,date,note\n20286929996,0.5,20260825,\"v0.5.6, 1.5\"\n7,2.5e3,1,x\n")
    (src / "README.md").write_text("0.5\n")
    assert perturbed_copy(src, tmp_path / "dst") == 2
    rows = list(csv.reader((tmp_path / "dst" / "t.csv").open()))
    assert rows[1][0] == "20286929996" and rows[1][2] == "20260825" and rows[1][3] == "v0.5.6, 1.5"
    assert float(rows[1][1]) == 0.5 * (1 + RELATIVE) and float(rows[2][1]) == 2500 * (1 - RELATIVE)
    assert (tmp_path / "dst" / "README.md").read_text() == "0.5\n"


@pytest.mark.skipif(os.environ.get("JALAPENO_PERTURBED") == "1", reason="already inside the perturbed run")
def test_every_committed_output_survives_a_last_bit_perturbation_of_the_data(tmp_path):
    data = tmp_path / "data"
    assert perturbed_copy(DATA, data) > 10_000  # the measured points, the specs, the claims
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {**os.environ, "JALAPENO_DATA_DIR": str(data), "JALAPENO_CACHE_DIR": str(cache), "JALAPENO_PERTURBED": "1"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "notebooks", "-q"], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert re.search(r"\b\d{2,} passed\b", proc.stdout), proc.stdout[-2000:]
