"""Proof, not hope: every committed output survives a last-bit change of every float of ``data/``.

Every float field of every CSV file of ``data/`` (a cell written with a decimal point or an exponent
and not a whole number; integers, whole numbers such as a domain of 8.0 chips, run ids and dates untouched) and of every derived table (``data/derived/*.jsonl``: the fits'
and refits' results) is multiplied by ``1 + 1e-13`` or ``1 - 1e-13``, alternately; then every committed
notebook is re-executed and compared with nbval (every stored output: prose quotes, tables, chart data),
with an empty cache, so nothing computed from the unperturbed data is reused, and with the derived
tables read by name (``JALAPENO_DERIVED=by-name``: their keys, digests of the unperturbed data, are not
checked). A
relative 1e-13 is about 450 ulps, far above what another CPU's floating-point path changes in a
well-conditioned result and far below the five significant digits a stored float keeps
(:mod:`jalapeno.display`), so an output that this changes hangs on last bits and would differ on another
machine. It is the proof for the numeric paths a CPU cannot take (``tests/numeric_paths.py`` says when).
"""

import csv
import json
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
    """Copy the folder ``source`` to ``target`` with every float cell of its CSV files and every float of
    its JSON-lines files that is not a whole number perturbed by a relative ±:data:`RELATIVE` (alternating signs, in file order);
    other files copied as they are. Returns how many values were perturbed."""
    n = 0

    def moved(x: float) -> float:
        nonlocal n
        n += 1
        return x * (1 + RELATIVE * (1 if n % 2 else -1))

    def walk(value):
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return moved(value) if isinstance(value, float) and not value.is_integer() else value

    for path in sorted(source.rglob("*")):
        dest = target / path.relative_to(source)
        if path.is_dir() or "__pycache__" in path.parts:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".jsonl":
            lines = [json.dumps(walk(json.loads(line))) for line in path.read_text().splitlines() if line.strip()]
            dest.write_text("".join(line + "\n" for line in lines))
            continue
        if path.suffix != ".csv":
            dest.write_bytes(path.read_bytes())
            continue
        with path.open(newline="") as f:
            rows = list(csv.reader(f))
        for row in rows[1:]:
            for i, cell in enumerate(row):
                if _FLOAT.fullmatch(cell.strip()) and not float(cell).is_integer():
                    row[i] = repr(moved(float(cell)))
        with dest.open("w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(rows)
    return n


def test_perturbed_copy_changes_floats_only(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "t.csv").write_text("run_id,x,date,note\n20286929996,0.5,20260825,\"v0.5.6, 1.5\"\n7,2.5e-3,1,8.0\n")
    (src / "README.md").write_text("0.5\n")
    (src / "d.jsonl").write_text('{"frame": "chip=gb200", "x": 0.25, "n": 3, "xs": [1.5, 0.0, 8.0]}\n')
    assert perturbed_copy(src, tmp_path / "dst") == 4
    rows = list(csv.reader((tmp_path / "dst" / "t.csv").open()))
    assert rows[1][0] == "20286929996" and rows[1][2] == "20260825" and rows[1][3] == "v0.5.6, 1.5"
    assert float(rows[1][1]) == 0.5 * (1 + RELATIVE) and float(rows[2][1]) == 2.5e-3 * (1 - RELATIVE)
    assert rows[2][3] == "8.0"
    assert (tmp_path / "dst" / "README.md").read_text() == "0.5\n"
    row = json.loads((tmp_path / "dst" / "d.jsonl").read_text())
    assert row == {"frame": "chip=gb200", "x": 0.25 * (1 + RELATIVE), "n": 3, "xs": [1.5 * (1 - RELATIVE), 0.0, 8.0]}


@pytest.mark.skipif(os.environ.get("JALAPENO_PERTURBED") == "1", reason="already inside the perturbed run")
def test_every_committed_output_survives_a_last_bit_perturbation_of_the_data(tmp_path):
    data = tmp_path / "data"
    assert perturbed_copy(DATA, data) > 10_000  # the measured points, the specs, the claims
    cache = tmp_path / "cache"
    cache.mkdir()
    env = {**os.environ, "JALAPENO_DATA_DIR": str(data), "JALAPENO_CACHE_DIR": str(cache), "JALAPENO_PERTURBED": "1",
           "JALAPENO_DERIVED": "by-name"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "notebooks", "-q"], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    assert re.search(r"\b\d{2,} passed\b", proc.stdout), proc.stdout[-2000:]
