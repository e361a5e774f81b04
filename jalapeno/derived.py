"""Derived tables: what the book's noisy numerical stages produce, computed once, committed under
``data/derived/`` and read by the chapters, so that a number a numerical method produced (a refit that
ends where its stopping rule fires, a Monte Carlo draw) is data once produced, not bits re-derived on every
build and hoped equal on every CPU.

A stage (:data:`STAGES`) writes ``data/derived/<stage>.jsonl``: one JSON object a line (polars
``write_ndjson``: floats in their shortest round-trip form, list columns kept), each row carrying the
``frame`` it belongs to (a name, e.g. a hold-out fold ``chip=gb200``) and that frame's ``key``: the
SHA-256 of the frame's inputs (its data rows and constants, by :func:`key`), of the data files the stage
reads (:attr:`Stage.inputs`) and of the stage's :attr:`Stage.version`, a constant of the stage's own
code; never the package's source, so a refactor does not invalidate a table. Beside it, ``<stage>.json``
records the stage, its version, its inputs and their :func:`state`, the relative tolerance at which a
regeneration must match (:attr:`Stage.rtol`, checked by ``tests/test_derived.py``) and the command that
regenerates the table (``jalapeno derive <stage>``).

:func:`frames` reads a stage's frames:

- a frame committed under its key: the committed rows;
- else, when the repository's own data files are read (``data_dir()`` is ``<repo>/data``) and the
  committed table is missing or was derived from other input files or another stage version (the
  ``state`` its side file records, :func:`state`): :class:`StaleTableError`, naming the command, never a
  silent recompute;
- else (a parameter or a caller asks for a frame the book does not commit, e.g. another leave-out scheme
  or other training rows, or a copy of the data is read, as a test's edited copy or ``JALAPENO_DATA_DIR``):
  computed live and kept in the cache (:func:`jalapeno.data.cached_frames`).

``JALAPENO_DERIVED`` changes the first rule: ``by-name`` reads a committed frame by its name whatever its
key (for a test that perturbs the data's last bits and asks whether the committed outputs stay unchanged);
``live`` reads no committed frame and computes every one (for a comparison of floating-point paths,
``benchmarks/numeric_paths.py``). Another value is an error.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from . import cache, data
from .errors import BuildError, UnknownNameError

FOLDER = "derived"


class StaleTableError(BuildError):
    """A committed derived table was derived from other inputs or another version of its stage's code."""


@dataclass(frozen=True)
class Stage:
    """A noisy stage: its ``name`` (the table ``data/derived/<name>.jsonl``), ``version`` (raised by hand
    whenever the stage's numerics change what it returns: the key of every frame includes it), ``rtol``
    (the relative tolerance at which a regeneration must match the committed table), ``what`` (one line
    for the table's side file) and ``inputs`` (glob patterns, relative to the data folder, of the data files
    the stage reads: their names and contents are in every key)."""

    name: str
    version: int
    rtol: float
    what: str
    inputs: tuple[str, ...] = ()

    @property
    def command(self) -> str:
        """The one command that regenerates the table."""
        return f"jalapeno derive {self.name}"


#: The stages with committed tables, in the order ``jalapeno derive`` regenerates them.
#:
#: - ``calibration``: the fit on every measured point, whose table is ``data/calibration.csv`` (its side
#:   file ``data/derived/calibration.json``): constants stored to five significant digits, and a fit that
#:   ends a few 1e-3 from its exact minimum in its flattest direction (the collective latency): 1 %.
#: - ``jalapeno-fits``: Jalapeño's fit in each scenario as it stands (low, central, high,
#:   :func:`jalapeno.subject.fit_jalapeno`), three equations in three unknowns (four under the one-point reading of its E2E) solved to scipy's default
#:   tolerances: 1e-3 (not yet measured across machines).
#: - ``jalapeno-nodes``: the same fit at every node of its unknowns
#:   (:func:`jalapeno.uncertainty.node_constants` over the benchmark's concurrency range): 1e-3.
#: - ``schemes``: the validation schemes of :mod:`jalapeno.schemes`, scored on the default prediction
#:   path: leave-out refits of the calibration, each ending a few 1e-3 from its exact minimum in a
#:   direction only the weak prior informs (a frontier distance moves by about that much relative: 2 %), and for the end-point-anchored scheme a fit of
#:   three or four constants on top of each refit, solved to scipy's default tolerances: 2 %, a series'
#:   per-point distances on that series' scale (:func:`mismatches`; measured across an Intel and an AMD
#:   EPYC machine: the series' statistics agree to 1e-5).
STAGES = {s.name: s for s in (
    Stage("calibration", 2, 0.01, "the serving model's calibration on every measured point "
                                  "(jalapeno.calibration.fit; the table is data/calibration.csv)",
          ("measured/inferencemax.csv", "chips.csv", "chip_specs.csv", "models.csv", "model_constants.csv",
           "efficiency_bounds.csv")),
    Stage("jalapeno-fits", 1, 1e-3, "Jalapeño's fitted constants in each scenario of its unknowns, over the "
                                    "benchmark's concurrency range (jalapeno.subject.fit_jalapeno)", ("**/*.csv",)),
    Stage("jalapeno-nodes", 1, 1e-3, "Jalapeño's fitted constants at every node of its unknowns, over the "
                                     "benchmark's concurrency range (jalapeno.uncertainty.node_constants)",
          ("**/*.csv",)),
    Stage("schemes", 3, 0.02, "the validation schemes matching each use of the error bar (new generation, new "
                              "model-chip pair or shape, end-point anchored), scored on the default prediction "
                              "path (jalapeno.schemes)",
          ("measured/inferencemax.csv", "chips.csv", "chip_specs.csv", "models.csv", "model_constants.csv",
           "efficiency_bounds.csv")),
)}


def stage(name: str) -> Stage:
    """The stage called ``name``; UnknownNameError otherwise."""
    if name not in STAGES:
        raise UnknownNameError("derived stage", name, list(STAGES))
    return STAGES[name]


def state(stage_name: str) -> str:
    """SHA-256 (hex) of the stage's name, version and input files (:attr:`Stage.inputs`, their contents in
    the data folder): what its committed table was derived from, recorded in its side file."""
    import hashlib

    s = stage(stage_name)
    h = hashlib.sha256(f"{s.name}\0{s.version}\0".encode())
    root = data.data_dir()
    for pattern in s.inputs:
        for path in sorted(root.glob(pattern)):
            for part in (str(path.relative_to(root)).encode(), b"\0", path.read_bytes(), b"\0"):
                h.update(part)
    return h.hexdigest()


def key(stage_name: str, *parts: object) -> str:
    """SHA-256 (hex) of :func:`state` and of ``parts`` (their ``repr``; a polars DataFrame by its
    full-precision JSON): a frame's key, independent of the package's source."""
    import hashlib

    h = hashlib.sha256(state(stage_name).encode() + b"\0")
    for part in parts:
        h.update((part.write_json() if isinstance(part, pl.DataFrame) else repr(part)).encode() + b"\0")
    return h.hexdigest()


def table_path(stage_name: str, root: Path | None = None) -> Path:
    """``<data>/derived/<stage>.jsonl`` (``root``: the data folder, default :func:`jalapeno.data.data_dir`)."""
    return (root or data.data_dir()) / FOLDER / f"{stage_name}.jsonl"


def committed(stage_name: str, root: Path | None = None) -> pl.DataFrame | None:
    """The committed table of a stage (columns ``frame``, ``key`` and the stage's), None if there is none."""
    path = table_path(stage_name, root)
    return pl.read_ndjson(path) if path.is_file() else None


def _reads_repository_data() -> bool:
    return data.data_dir().resolve() == (data.REPO_ROOT / "data").resolve()


def side(stage_name: str, root: Path | None = None) -> dict | None:
    """The committed side file of a stage (``<stage>.json``), None if there is none."""
    path = table_path(stage_name, root).with_suffix(".json")
    return json.loads(path.read_text()) if path.is_file() else None


def _recorded_path(stage_name: str) -> Path:
    """The file a stage's committed state is read from: its table, or for ``calibration`` (whose table is
    ``data/calibration.csv``) its side file."""
    path = table_path(stage_name)
    return path.with_suffix(".json") if stage_name == "calibration" else path


def stale(stages: list[str] | None = None) -> list[str]:
    """The stages (in :data:`STAGES`' order; of ``stages`` only, default every one) whose committed table is
    missing or was derived from other input files or another version of the stage (:func:`state`); none
    when a copy of the data is read."""
    if not _reads_repository_data():
        return []
    out = []
    for name in (n for n in STAGES if stages is None or n in stages):
        recorded = side(name)
        missing = name != "calibration" and not table_path(name).is_file()
        if recorded is None or recorded.get("state") != state(name) or missing:
            out.append(name)
    return out


def command_for(stages: list[str]) -> str:
    """The one command that regenerates ``stages``: ``jalapeno derive`` (every stage, in order) when the
    calibration is among them (regenerating it rewrites ``data/calibration.csv``, an input of the others),
    else ``jalapeno derive`` and the stages."""
    return "jalapeno derive" if "calibration" in stages else " ".join(["jalapeno derive", *stages])


def check(stage_name: str | None = None) -> None:
    """Raise :class:`StaleTableError`, naming the one command that regenerates them (:func:`command_for`),
    when the repository's data are read and a committed table (of ``stage_name``, default any stage) is
    missing or was derived from other input files or another version of its stage (:func:`stale`). A build
    and ``jalapeno refresh`` call it before any notebook runs."""
    if stage_name is not None:
        stage(stage_name)  # UnknownNameError for an unknown stage
    bad = stale(None if stage_name is None else [stage_name])  # one stage's inputs only: a first frontier
    if bad:
        what = "; ".join(f"{_recorded_path(n).relative_to(data.data_dir().parent)} "
                         + ("is missing" if side(n) is None else
                            f"was derived from other inputs or another version of its stage (version "
                            f"{stage(n).version} now)") for n in bad)
        raise StaleTableError(f"{what}: regenerate with `{command_for(stale())}`")


#: The values of ``JALAPENO_DERIVED`` (see the module docstring); ``committed`` when unset.
MODES = ("committed", "by-name", "live")


def frames(stage_name: str, items: list[tuple[str, str, object]]) -> list[pl.DataFrame]:
    """The frames of ``items`` (``(frame name, key, compute)``, ``key`` from :func:`key`, ``compute()``
    returning a DataFrame), in their order, by the rules of the module docstring: a frame committed under
    its key is read; otherwise :func:`check` (a stale table is an error), then the frame is computed live
    and kept in the cache (:func:`jalapeno.data.cached_frames`)."""
    mode = os.environ.get("JALAPENO_DERIVED", "committed")
    if mode not in MODES:
        raise UnknownNameError("JALAPENO_DERIVED mode", mode, MODES)
    table = None if mode == "live" else committed(stage_name)
    by_name = mode == "by-name"
    out: dict[int, pl.DataFrame] = {}
    live = []
    for i, (name, k, compute) in enumerate(items):
        column, value = ("frame", name) if by_name else ("key", k)
        rows = None if table is None else table.filter(pl.col(column) == value)
        if rows is not None and rows.height:
            out[i] = rows.filter(pl.col("frame") == rows["frame"][0]).drop("frame", "key")
        else:
            live.append((i, k, compute))
    if live:
        if mode != "live":
            check(stage_name)
        computed = data.cached_frames(stage_name, [(cache.key(stage_name, k), compute) for _, k, compute in live])
        out |= {i: frame for (i, _, _), frame in zip(live, computed)}
    return [out[i] for i in range(len(items))]


def write(stage_name: str, items: list[tuple[str, str, pl.DataFrame]], root: Path | None = None) -> Path:
    """Write a stage's table from ``items`` (``(frame name, key, frame)``) and its side file
    ``<stage>.json``, each whole (:func:`jalapeno.cache.write_atomic`). Returns the table's path."""
    stage(stage_name)  # UnknownNameError for an unknown stage
    path = table_path(stage_name, root)
    table = pl.concat([f.select(pl.lit(name).alias("frame"), pl.lit(k).alias("key"), pl.all())
                       for name, k, f in items], how="vertical_relaxed")
    cache.write_atomic(path, table.write_ndjson, mode=0o644)  # a data file like the others
    write_side(stage_name, root, frames=len(items), rows=table.height)
    return path


def write_side(stage_name: str, root: Path | None = None, **counts: int) -> Path:
    """Write the side file ``<data>/derived/<stage>.json``: the stage, its version, what it is, its input
    patterns, their :func:`state`, ``counts`` (frames, rows), the tolerance and the command. Returns its path."""
    s = stage(stage_name)
    path = table_path(stage_name, root).with_suffix(".json")
    record = {"stage": s.name, "version": s.version, "what": s.what, "inputs": list(s.inputs),
              "state": state(stage_name), **counts, "rtol": s.rtol, "regenerate": s.command}
    return cache.write_atomic(path, json.dumps(record, indent=1) + "\n", mode=0o644)


def mismatches(new: pl.DataFrame, old: pl.DataFrame, rtol: float) -> list[str]:
    """Where a regenerated table ``new`` differs from the committed ``old`` beyond the stage's relative
    tolerance ``rtol`` (:attr:`Stage.rtol`), one line each (empty when it matches): the columns and the
    frames' keys must be equal, a float within ``rtol`` of the committed one, and an element of a list of
    floats (a series' per-point distances or errors) within ``rtol`` of the list's largest committed
    magnitude: a point's error is read on its series' scale, where it is one of the points behind the
    series' statistic. (Across machines the statistics agree to 1e-5 while one point of a series can move
    by several per cent of itself: a layout's feasibility flips at that point's interactivity. Measured:
    GB200's gpt-oss-120b 8k/1k series in the model-chip scheme, its point at 180 tok/s/user 0.343 on an AMD
    EPYC against 0.352 committed, 0.009 in a series reaching 0.64; the series' distance agrees to 4e-7.)
    Other columns must be equal."""
    if new.columns != old.columns:
        return [f"columns {new.columns} against {old.columns}"]
    if new.select("frame", "key").rows() != old.select("frame", "key").rows():
        return ["the frames or their keys differ"]
    out = []
    for c in new.columns:
        a, b = new[c], old[c]
        for i, (x, y) in enumerate(zip(a.to_list(), b.to_list())):
            if a.dtype == pl.List(pl.Float64) and x is not None and y is not None:
                scale = max((abs(v) for v in y), default=0.0)
                bad = len(x) != len(y) or any(abs(u - v) > rtol * scale for u, v in zip(x, y))
            elif a.dtype.is_float() and x is not None and y is not None:
                bad = abs(x - y) > rtol * abs(y)
            else:
                bad = x != y
            if bad:
                out.append(f"{c}, row {i} ({new['frame'][i]}): {x!r} against {y!r}")
    return out
