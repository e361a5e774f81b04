"""A reader's own benchmark runs: reading and checking them (:func:`check`), scoring the model on them
(:func:`score`).

A reader's file holds InferenceX ``agg_bmk.json``-style rows, as a JSON array of objects or as JSON
lines (one object a line; blank lines skipped), with the fields of :data:`FIELDS`. Each field is checked
against the column of the same name in ``data/measured/inferencemax.csv``
(``jalapeno.data.SCHEMAS["measured/inferencemax.csv"]``: its type, its closed set of values, its
plausible range and unit), so a reader's row is held to the shipped rows' rules; queue-bound rows are
flagged by :func:`jalapeno.measured.occupancy` and ``model_constant("queue_bound_occupancy")``, the
rule of :func:`jalapeno.measured.points`. A row's ``hw`` key names a chip as the shipped keys do
(``b200-trt`` is B200 served by TensorRT-LLM: a ``-<stack>`` suffix names a stack, not a chip), its
``framework`` the serving stack, its ``infmax_model_prefix`` (``gptoss``, ``dsr1``) or ``model`` (a book
key, an alias or the model's Hugging Face repository) the model. Each row's ``source`` is the file's
name, its SHA-256 digest and the row's line (JSON lines) or 1-based element index (a JSON array).

A new chip comes with a chips file (:func:`read_chips`): one CSV holding, for each new chip, what
``data/chips.csv`` and ``data/chip_specs.csv`` hold (:data:`CHIP_COLUMNS`), checked by the loaders of
those files (:func:`jalapeno.data.read_table`, :func:`jalapeno.data.chip_specs_si`,
:func:`jalapeno.specs.chip`) on the shipped tables with the reader's rows appended.

Every problem is reported, each as ``FILE:LINE: field: what is wrong (valid: ...)``
(:class:`MeasurementsError`); nothing is written.

:func:`score` (``jalapeno.score``, ``jalapeno measurements score``) predicts each of the reader's series
on the default path the validation schemes score (:func:`jalapeno.calibration.default_frontier`), under
a calibration never fitted on the reader's rows: the stored one, or, when some rows repeat shipped ones
(:data:`REPEAT_KEYS`), :func:`jalapeno.calibration.fit` of the shipped rows without them. It reports
the book's statistic per series and overall (:func:`jalapeno.calibration.frontier_error`) and the
coverage of the 80 % band the default path draws (:func:`jalapeno.calibration.band_scheme`);
:func:`page_html` draws it.

:func:`recalibrate` (``jalapeno build --measurements``) refits the serving model's constants on the
shipped rows and the reader's (a reader's run that repeats a shipped one replaces it: a run measured
again), with the stored calibration's procedure (:func:`jalapeno.calibration.fit`); :func:`changes` says
which constants the rows moved and by how much, and which they could not inform; :func:`data_folder`
writes the data folder a book built on them reads.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import io
import json
import math
import os
import re
import shutil
import tempfile
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

import numpy as np
import polars as pl

from . import cache, calibration, data, display, measured, schemes, specs
from .errors import DataError, JalapenoError, UnknownNameError, shown
from .display import number
from .metrics import pareto_envelope

#: The shipped table whose column rules a reader's row is checked by.
SHIPPED = "measured/inferencemax.csv"

#: Whether each field a reader's row may carry is required: ``yes`` in every row, ``aggregated`` when
#: ``disagg`` is false, ``disaggregated`` when it is true, ``no`` (optional; ``ep`` and the
#: ``*_dp_attention`` flags default to 1 and false as for the shipped rows,
#: :func:`jalapeno.calibration.configurations`). ``model`` stands in for ``infmax_model_prefix`` (one of
#: the two is required). Type, closed set, plausible range and unit: the shipped column's
#: (``data.SCHEMAS["measured/inferencemax.csv"]``). Results are in the benchmark's units (seconds,
#: tokens/s per GPU, tok/s/user; see :mod:`jalapeno.measured`).
FIELDS = {
    "run_id": "no", "hw": "yes", "framework": "yes", "infmax_model_prefix": "yes", "model": "no",
    "precision": "yes", "spec_decoding": "yes", "isl": "yes", "osl": "yes", "conc": "yes", "disagg": "yes",
    "tp": "aggregated", "ep": "no", "dp_attention": "no",
    "num_prefill_gpu": "disaggregated", "prefill_num_workers": "disaggregated", "prefill_tp": "no",
    "prefill_ep": "no", "prefill_dp_attention": "no", "num_decode_gpu": "disaggregated",
    "decode_num_workers": "disaggregated", "decode_tp": "no", "decode_ep": "no", "decode_dp_attention": "no",
    "tput_per_gpu": "yes", "output_tput_per_gpu": "yes", "input_tput_per_gpu": "no", "mean_ttft": "no",
    "mean_tpot": "yes", "mean_e2el": "no", "mean_intvty": "yes", "median_intvty": "no",
}

#: What each value of :data:`FIELDS` means, as :func:`fields_table` prints it.
REQUIRED_WORDS = {"yes": "required", "aggregated": "required when disagg is false",
                  "disaggregated": "required when disagg is true", "no": "optional"}

#: The columns of a chips file (:func:`read_chips`): those of ``data/chip_specs.csv`` (one row a
#: quantity of a chip, with its value, unit, status, basis and source) and, repeated on every row of a
#: chip and equal on all of them, those of ``data/chips.csv`` but its ``source``, which is the chip's
#: rows' sources joined by ``; ``.
CHIP_COLUMNS = (*data.SCHEMAS["chip_specs.csv"],
                *(c for c in data.SCHEMAS["chips.csv"] if c not in data.SCHEMAS["chip_specs.csv"]))


class MeasurementsError(JalapenoError):
    """A reader's measurements or chips file has bad rows: ``problems`` holds every one, each
    ``FILE:LINE: field: what is wrong (valid: ...)``; the message is them, one a line."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class Runs:
    """A reader's checked runs (:func:`read`): ``points``, one row a run in the columns of
    :func:`jalapeno.measured.points` (``model_key``, ``n_gpus``, ``occupancy``, ``queue_bound`` added;
    ``source`` = ``"<file> sha256:<digest> line <n>"``; a missing ``run_id`` is null), ``path``, its
    ``digest`` (SHA-256, hex), the ``chips`` a chips file added (keys, with their
    :class:`jalapeno.specs.ChipSpec`), ``new_stacks`` (stack -> the engine whose overhead it takes) and
    ``tables`` (with new chips, the texts of ``chips.csv`` and ``chip_specs.csv`` with them appended, which
    :func:`score` predicts under)."""

    points: pl.DataFrame
    path: Path
    digest: str
    chips: dict
    new_stacks: dict
    tables: dict = dataclasses.field(default_factory=dict)

    def summary(self) -> dict[str, object]:
        """Rows, series (as :func:`jalapeno.calibration.configurations` names them), chips, stacks,
        models (sorted lists) and queue-bound rows of the runs."""
        p = self.points
        series = p.select(pl.concat_str([pl.col("model_key"), pl.col("hw"), pl.col("framework"), pl.col("precision"),
                                         pl.format("{}/{}", pl.col("isl"), pl.col("osl"))], separator=" "))
        return {"rows": p.height, "series": series.to_series().n_unique(),
                "chips": sorted(set(p["chip"])), "stacks": sorted(set(p["framework"])),
                "models": sorted(set(p["model_key"])), "queue_bound": int(p["queue_bound"].sum())}


def fields_table() -> str:
    """:data:`FIELDS` as a Markdown table (field, required, type, unit, plausible range), the README's."""
    schema = data.SCHEMAS[SHIPPED]
    lines = ["| field | required | type | unit | plausible range |", "| --- | --- | --- | --- | --- |"]
    for name, req in FIELDS.items():
        col = schema[name]
        kind = f"one of {', '.join(col.choices)}" if col.choices else {"str": "text", "int": "integer",
                                                                        "float": "number", "bool": "true/false"}[col.kind]
        words = REQUIRED_WORDS[req] + (" (or `model`)" if name == "infmax_model_prefix" else "")
        rng = f"{display.quantity(col.plausible[0])} to {display.quantity(col.plausible[1])}" if col.plausible else ""
        lines.append(f"| `{name}` | {words} | {kind} | {col.unit} | {rng} |")
    return "\n".join(lines)


# ---- reading ---------------------------------------------------------------------------------------------

def _objects(path: Path, text: str) -> tuple[list[tuple[int, object]], list[str]]:
    """``(line, object)`` of each row of a JSON array (element index, 1-based), of JSON-lines text (its
    line) or of a file holding one JSON object (line 1), and the problems of rows that are not JSON."""
    name = str(path)  # as the reader gave it: two files of one name in two folders are told apart
    if text.lstrip().startswith("{"):  # one object, perhaps over several lines (one run's agg_bmk.json)
        try:
            whole = json.loads(text)
        except json.JSONDecodeError:
            whole = None
        if isinstance(whole, dict):
            return [(1, whole)], []
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            return [], [f"{name}:{exc.lineno}: (file): not a valid JSON array: {exc.msg} (valid: a JSON array of "
                        "objects, or one JSON object a line)"]
        return list(enumerate(items, start=1)), []
    rows, problems = [], []
    for i, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append((i, json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append(f"{name}:{i}: (line): not a JSON object: {exc.msg} at column {exc.colno} "
                            "(valid: one JSON object a line)")
    return rows, problems


def _value(name: str, value: object) -> tuple[object, str | None]:
    """A JSON value of field ``name`` typed as the shipped column is, or the problem with it (what is
    wrong, then ``(valid: ...)``)."""
    col = data.SCHEMAS[SHIPPED][name]
    if col.kind == "bool":
        if isinstance(value, bool):
            return value, None
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):  # the loader's reading of text
            return value.strip().lower() == "true", None
        return None, f"not a boolean: {shown(value)} (valid: true, false)"
    if col.kind in ("int", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, f"not a number: {shown(value)} (valid: a JSON number{' in ' + col.unit if col.unit else ''})"
        if not math.isfinite(value):
            return None, f"not a finite number: {shown(value)} (valid: a finite JSON number)"
        if col.kind == "int" and value != round(value):
            return None, f"not an integer: {shown(value)} (valid: a whole number)"
        if col.plausible and not col.plausible[0] <= value <= col.plausible[1]:
            low, high = col.plausible
            return None, (f"{value:g} is outside the plausible range; check the unit and the decimal point "
                          f"(valid: {low:g} to {high:g}{' ' + col.unit if col.unit else ''})")
        return (int(value) if col.kind == "int" else float(value)), None
    if not isinstance(value, str) or not value.strip():
        return None, f"not a text: {shown(value)} (valid: a non-empty JSON string)"
    value = value.strip()
    if col.choices and value not in col.choices:
        return None, f"not a valid value: {shown(value)} (valid: {', '.join(col.choices)})"
    return value, None


def _unknown(exc: UnknownNameError) -> str:
    return f"unknown {exc.kind} {shown(exc.name)} (valid: {', '.join(exc.valid)})"


def engine_of(stack: str) -> str | None:
    """The known stack (:data:`jalapeno.calibration.STACKS`) whose per-layer overhead a serving stack
    takes when it has none of its own: itself when known, else its engine by
    :data:`jalapeno.calibration.ENGINE` or its last ``-``-separated part (``dynamo-vllm`` runs vLLM
    workers); None when neither is known."""
    if stack in calibration.STACKS:
        return stack
    engine = calibration.ENGINE.get(stack, stack.rsplit("-", 1)[-1])
    return engine if engine in calibration.STACKS else None


def model_of(row: dict) -> str:
    """The book's model key of a row: its ``infmax_model_prefix`` when given, else its ``model``, each a
    book key, an alias (:data:`jalapeno.specs.MODEL_ALIASES`), the Hugging Face repository of
    ``data/models.csv`` (column ``hf_repo``) or a path or repository whose last part is a key or an alias
    (``/models/gpt-oss-120b``, ``deepseek-ai/DeepSeek-R1``). UnknownNameError (kind ``model``) listing
    the models."""
    valid = specs.model_names()
    name = row.get("infmax_model_prefix") or row.get("model")
    repos = {str(r).lower(): m for r, m in zip(data.load("models.csv")["hf_repo"], data.load("models.csv")["model"])}
    key = str(name).strip().lower()
    if key in repos:
        return repos[key]
    base = key.rstrip("/").rsplit("/", 1)[-1]  # a local path or another repository: its last part
    if key not in valid and specs.MODEL_ALIASES.get(base, base) in valid:
        return specs.MODEL_ALIASES.get(base, base)
    return specs.resolve_name("model", name, valid, specs.MODEL_ALIASES)


def read(path: Path | str, chips: Path | str | None = None) -> Runs:
    """Read and check a reader's runs (see the module docstring): a JSON array or JSON-lines file of
    rows with the fields of :data:`FIELDS`, and ``chips``, a chips file of new chips (:func:`read_chips`).
    Returns :class:`Runs`. Raises :class:`MeasurementsError` listing every problem (a row that is not a
    JSON object, a missing required field, an unexpected one, a wrong type, a value outside its closed
    set or plausible range, an unknown chip, stack or model, each named with the valid ones), or
    DataError for a file that cannot be read."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{path}: measurements file not found")
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    new_chips, tables = chip_tables(chips) if chips is not None else ({}, {})
    objects, problems = _objects(path, text)
    chip_keys = [*specs.hbm_chip_names(), *new_chips]
    name, rows, new_stacks = str(path), [], {}
    if not objects and not problems:
        problems.append(f"{name}:1: (file): no rows (valid: a JSON array of objects, or one JSON object a line)")
    for line, obj in objects:
        where = f"{name}:{line}"
        if not isinstance(obj, dict):
            problems.append(f"{where}: (row): not a JSON object: {shown(obj)} (valid: an object of fields)")
            continue
        row, bad = {}, []  # fields not of FIELDS (an export's others: image, p99_tpot, ...) are not read
        for field in FIELDS:
            if obj.get(field) is None:
                continue
            value, why = _value(field, obj[field])
            if why:
                bad.append(f"{where}: {field}: {why}")
            else:
                row[field] = value
        disagg = row.get("disagg")
        for field, req in FIELDS.items():
            needed = req == "yes" or (req == "aggregated" and disagg is False) or (req == "disaggregated" and disagg)
            if field == "infmax_model_prefix" and obj.get("model") is not None:
                needed = False
            if needed and obj.get(field) is None:
                words = REQUIRED_WORDS[req] + (" (or model)" if field == "infmax_model_prefix" else "")
                bad.append(f"{where}: {field}: missing, {words} (valid: {_kind_words(field)})")
        if "hw" in row:
            try:
                row["chip"] = calibration.chip_of(row["hw"], chip_keys)
            except UnknownNameError as exc:
                bad.append(f"{where}: hw: {_unknown(exc)}")
        if "framework" in row:
            engine = engine_of(row["framework"])
            if engine is None:
                bad.append(f"{where}: framework: unknown stack {shown(row['framework'])} "
                           f"(valid: {', '.join(calibration.STACKS)}, or <name>-<one of them>)")
            elif engine != row["framework"]:
                new_stacks[row["framework"]] = engine
        if "infmax_model_prefix" in row or "model" in row:
            try:
                row["model_key"] = model_of(row)
            except UnknownNameError as exc:
                bad.append(f"{where}: {'infmax_model_prefix' if 'infmax_model_prefix' in row else 'model'}: "
                           f"{_unknown(exc)}")
        problems += bad
        if not bad:
            row["source"] = f"{path.name} sha256:{digest} line {line}"  # the file by its digest, in no folder
            rows.append(row)
    if problems:  # in the file's order (a stable sort: a row's problems keep the order of FIELDS)
        raise MeasurementsError(sorted(problems, key=lambda p: int(p[len(name) + 1:].split(":", 1)[0])))
    return Runs(_frame(rows), path, digest, new_chips, new_stacks, tables)


def _kind_words(field: str) -> str:
    col = data.SCHEMAS[SHIPPED][field]
    if col.choices:
        return ", ".join(col.choices)
    words = {"str": "a JSON string", "int": "a whole number", "float": "a number", "bool": "true or false"}[col.kind]
    return words + (f", {col.plausible[0]:g} to {col.plausible[1]:g} {col.unit}".rstrip() if col.plausible else "")


def _frame(rows: list[dict]) -> pl.DataFrame:
    """The checked rows in the columns of :func:`jalapeno.measured.points`, typed as the shipped table."""
    kinds = {"str": pl.Utf8, "int": pl.Int64, "float": pl.Float64, "bool": pl.Boolean}
    schema = {n: kinds[c.kind] for n, c in data.SCHEMAS[SHIPPED].items()}
    schema.update(model_key=pl.Utf8, chip=pl.Utf8)
    df = pl.DataFrame([{c: r.get(c) for c in schema} for r in rows], schema=schema)
    df = df.with_columns(
        pl.col("run_id").cast(pl.Utf8),
        pl.coalesce("model", "model_key").alias("model"),
        pl.coalesce("infmax_model_prefix", "model_key").alias("infmax_model_prefix"),
        n_gpus=pl.when(pl.col("disagg")).then(pl.col("num_prefill_gpu") + pl.col("num_decode_gpu")).otherwise(pl.col("tp")),
        occupancy=measured.occupancy(),
    )
    # the rule of jalapeno.measured.points
    return df.with_columns(queue_bound=pl.col("occupancy") < data.model_constant("queue_bound_occupancy"))


# ---- a chips file ----------------------------------------------------------------------------------------

@contextlib.contextmanager
def _data_folder(tables: dict[str, str]):
    """A data folder that is the package's with ``tables`` (file name -> text) in place of its own, read
    through ``JALAPENO_DATA_DIR`` while the block runs, with a cache folder of its own
    (``JALAPENO_CACHE_DIR``: the loaders' cache entries of those tables are not kept); removed afterwards.
    Without ``tables`` (a reader's runs with no new chip), the package's folder as it is (yields None)."""
    if not tables:
        yield None
        return
    root = data.data_dir()
    tmp = Path(tempfile.mkdtemp(prefix="jalapeno-chips-"))
    try:
        for entry in root.iterdir():
            if entry.name not in tables and entry.name != ".cache":
                (tmp / entry.name).symlink_to(entry)
        for name, text in tables.items():
            (tmp / name).write_text(text)
        with mock.patch.dict(os.environ, {"JALAPENO_DATA_DIR": str(tmp), "JALAPENO_CACHE_DIR": str(tmp / ".cache")}):
            yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


_LINE = re.compile(r"^(?P<path>.*?): line (?P<line>\d+), column '(?P<column>[^']*)': (?P<why>.*)$", re.S)


def read_chips(path: Path | str) -> dict[str, specs.ChipSpec]:
    """The new chips of a chips file (columns :data:`CHIP_COLUMNS`), as ``{chip: ChipSpec}``: the first
    of :func:`chip_tables`."""
    return chip_tables(path)[0]


def chip_tables(path: Path | str) -> tuple[dict[str, specs.ChipSpec], dict[str, str]]:
    """The new chips of a chips file (columns :data:`CHIP_COLUMNS`), as ``{chip: ChipSpec}``, and the
    texts of ``chips.csv`` and ``chip_specs.csv`` with them appended (``{file name: text}``). Checked as
    the shipped ``chips.csv`` and ``chip_specs.csv`` are, by their loaders, on the shipped tables with the
    reader's rows appended (so a chip the book already has is a duplicate key): a missing or unexpected
    column, an empty required cell, a value outside its closed set, a unit that does not fit its quantity,
    a value outside its quantity's plausible range. A chip must also be one the serving model can time (an
    HBM bandwidth and a dense peak FLOP/s). Raises :class:`MeasurementsError` (``FILE:LINE: column: what
    is wrong``)."""
    path = Path(path)
    name = str(path)  # as the reader gave it: two files of one name in two folders are told apart
    raw = data.read_text_csv(path, "chips file")
    missing = [c for c in CHIP_COLUMNS if c not in raw.columns]
    extra = [c for c in raw.columns if c not in CHIP_COLUMNS]
    if missing or extra or raw.is_empty():
        raise MeasurementsError([f"{name}:1: (header): missing {missing or 'none'}, unexpected {extra or 'none'}"
                                 f"{', no rows' if raw.is_empty() else ''} (valid: {', '.join(CHIP_COLUMNS)})"])
    chip_cols = [c for c in CHIP_COLUMNS if c not in data.SCHEMAS["chip_specs.csv"]]
    problems, first = [], {}
    for i, r in enumerate(raw.iter_rows(named=True)):
        key = r["chip"]
        if key not in first:
            first[key] = (i, r)
            continue
        for c in chip_cols:
            if r[c] != first[key][1][c]:
                problems.append(f"{name}:{i + 2}: {c}: {shown(r[c])} differs from line {first[key][0] + 2}'s "
                                f"{shown(first[key][1][c])} (valid: one value per chip)")
    if problems:
        raise MeasurementsError(problems)
    shipped = {n: (data.data_dir() / n).read_text() for n in ("chips.csv", "chip_specs.csv")}
    n_chips, n_specs = (pl.read_csv(data.data_dir() / n, infer_schema=False).height for n in shipped)
    chips_rows = pl.DataFrame([{**{c: r[c] for c in chip_cols}, "chip": k,
                                "source": "; ".join(dict.fromkeys(s for s in raw.filter(pl.col("chip") == k)["source"]
                                                                  if s))}
                               for k, (_, r) in first.items()], schema={c: pl.Utf8 for c in [*chip_cols, "chip", "source"]})
    chips_text = _append(shipped["chips.csv"], chips_rows.select(list(data.SCHEMAS["chips.csv"])))
    specs_text = _append(shipped["chip_specs.csv"], raw.select(list(data.SCHEMAS["chip_specs.csv"])))
    lines = {"chips.csv": [first[k][0] + 2 for k in first], "chip_specs.csv": list(range(2, raw.height + 2))}
    offsets = {"chips.csv": n_chips, "chip_specs.csv": n_specs}
    out = {}
    with _data_folder({"chips.csv": chips_text, "chip_specs.csv": specs_text}) as folder:
        try:
            for table in ("chips.csv", "chip_specs.csv"):
                data.read_table(folder / table, data.SCHEMAS[table], data.KEYS[table])
            data.chip_specs_si()
            for key in first:
                spec = specs.chip(key)
                if not (spec.hbm_bandwidth_bytes_per_s and spec.peak_dense_flops_per_s):
                    problems.append(f"{name}:{first[key][0] + 2}: quantity: chip {key!r} has no hbm_bandwidth or no "
                                    "peak_dense_flops_* row (valid: both, so that the serving model can time it)")
                out[key] = spec
        except DataError as exc:
            problems.append(_remap(str(exc), folder, name, lines, offsets))
    if problems:
        raise MeasurementsError(problems)
    return out, {"chips.csv": chips_text, "chip_specs.csv": specs_text}


def _append(text: str, rows: pl.DataFrame) -> str:
    return text.rstrip("\n") + "\n" + rows.write_csv(include_header=False)


def _remap(message: str, folder: Path, name: str, lines: dict, offsets: dict) -> str:
    """A loader's DataError on the merged tables of :func:`read_chips` as ``FILE:LINE: column: why`` of the
    reader's chips file."""
    m = _LINE.match(message)
    if m:
        table = Path(m["path"]).name
        index = int(m["line"]) - 2 - offsets.get(table, 0)
        if table in lines and 0 <= index < len(lines[table]):
            return f"{name}:{lines[table][index]}: {m['column']}: {m['why']}"
        if table in lines and index < 0:  # a shipped row clashes with the reader's (a duplicate key)
            return f"{name}: {m['column']}: {m['why']} (in the shipped data/{table})"
    return f"{name}: {message.replace(str(folder) + '/', '')}"


def check(path: Path | str, chips: Path | str | None = None) -> dict[str, object]:
    """:meth:`Runs.summary` of :func:`read` ``(path, chips)``: rows, series, chips, stacks, models and
    queue-bound rows of a reader's runs; :class:`MeasurementsError` listing every bad row."""
    return read(path, chips).summary()


def check_report(runs: Runs) -> str:
    """What ``jalapeno measurements check`` prints: the file, its digest and :meth:`Runs.summary`."""
    s = runs.summary()
    lines = [f"{runs.path.name} (sha256 {runs.digest}): {s['rows']:,} row{'s' * (s['rows'] != 1)}, "
             f"{s['series']:,} series",
             f"chips: {', '.join(s['chips'])}" + (f" (new: {', '.join(runs.chips)})" if runs.chips else ""),
             f"stacks: {', '.join(s['stacks'])}"
             + (f" (new: {', '.join(f'{k}, scored with the overhead of {v}' for k, v in runs.new_stacks.items())})"
                if runs.new_stacks else ""),
             f"models: {', '.join(s['models'])}",
             f"queue-bound rows: {s['queue_bound']:,} (fewer than "
             f"{number(data.model_constant('queue_bound_occupancy')):.0%} of the admitted users decoding: "
             "neither calibrated on nor scored)"]
    return "\n".join(lines)


# ---- scoring -------------------------------------------------------------------------------------------

#: The columns by which a reader's run repeats a shipped one (:func:`score`): its run id and its
#: configuration as :func:`jalapeno.calibration.configurations` describes it (model, hardware key, stack,
#: precision, shape, concurrency, serving mode and worker layout). A run without a run id repeats none.
REPEAT_KEYS = ("run_id", "model_key", "hw", "stack", "precision", "isl", "osl", "conc", "disagg", "n_chips", "dp", "ep",
               "worker_conc", "prefill_chips", "prefill_tp")

#: The columns of :func:`score`, in order.
SCORE_COLUMNS = ("series", "chip", "model_key", "shape", "precision", "disagg", "stack", "points", "envelope_points",
                 "frontier_distance", "band_scheme", "band_half_width", "reached", "inside", "unreached", "coverage",
                 "left_out", "calibration")


def scored_rows(runs: Runs) -> pl.DataFrame:
    """The runs the model is scored on: rows of :func:`jalapeno.calibration.configurations` of the
    reader's points (no speculative decoding, not queue-bound: the rows the calibration and the
    validation schemes use; a reader's ``h100-vllm`` is chip ``h100``, :func:`jalapeno.calibration.chip_of`)."""
    with _data_folder(runs.tables):  # a new chip's key
        return calibration.configurations(runs.points)


@dataclass(frozen=True)
class Scored:
    """A reader's runs scored (:func:`scored`): ``table`` (:func:`score`'s), ``runs`` (:class:`Runs`),
    ``fronts`` (each series' predicted frontier, its Pareto envelope: ``series``,
    ``interactivity_tok_s_user``, ``throughput_tok_s_chip`` and the band's ``throughput_low`` and
    ``throughput_high``, tok/s per GPU) and ``points`` (each scored row: ``series``,
    ``interactivity_tok_s_user`` = 1 / mean TPOT, ``throughput_tok_s_chip`` = ``tput_per_gpu``,
    ``envelope``: on the measured Pareto envelope)."""

    table: pl.DataFrame
    runs: Runs
    fronts: pl.DataFrame
    points: pl.DataFrame


def score(path: Path | str, chips: Path | str | None = None) -> pl.DataFrame:
    """The serving model's error on a reader's runs (:func:`read`), one row a series (as
    :func:`jalapeno.calibration.configurations` names them: model, hardware key, stack, precision,
    ISL/OSL), each predicted on the default path (:func:`jalapeno.calibration.default_frontier`: the
    chip's default stack and the benchmark's concurrency cap read from the training rows, nothing of the
    reader's rows but their workload: a reader's own stack, known or new, is not what the default path
    predicts with) and never fitted on them. The calibration is the stored one (``data/calibration.csv``,
    training rows every shipped run) unless some of the reader's runs repeat shipped ones
    (:data:`REPEAT_KEYS`): then it is :func:`jalapeno.calibration.fit` of the shipped rows without those
    (the validation schemes' refit, from the same neutral start), and those rows are the training rows.

    Columns (:data:`SCORE_COLUMNS`): ``series``, ``chip``, ``model_key``, ``shape`` (``"<ISL>/<OSL>"``),
    ``precision``, ``disagg``, ``stack`` (the stack predicted with), ``points`` (scored rows),
    ``envelope_points`` (those on the measured Pareto envelope, the points the statistic reads),
    ``frontier_distance`` (the book's statistic per series, as :func:`jalapeno.schemes.scheme_errors`
    reports it: the median over the envelope points of :func:`jalapeno.calibration.point_distances`, as
    the fraction ``exp(d) - 1``), ``band_scheme`` and ``band_half_width`` (the validation scheme whose
    80 % band the default path draws for this chip, model and shape, :func:`jalapeno.calibration.band_scheme`,
    and its half-width in natural-log units, :func:`jalapeno.calibration.scheme_half_width`),
    ``reached`` (envelope points within the predicted frontier's interactivity), ``inside`` (of those,
    the ones whose throughput lies within the band: ``|vertical_errors| <= band_half_width``,
    :func:`jalapeno.calibration.vertical_errors`), ``unreached`` (envelope points beyond the frontier's
    fastest point: no drawn band meets them), ``coverage`` (``inside / reached``, a fraction; null when
    none is reached), ``left_out`` (the shipped rows the series repeats, left out of the calibration)
    and ``calibration`` (``stored`` or ``refit without <n> repeated rows``). The overall statistic is
    :func:`overall` of the table. ``chips``: a chips file of new chips (:func:`chip_tables`); a new chip
    is predicted with the data folder's chips and specs plus its own, its band that of scheme (a), a chip
    no benchmark ran. MeasurementsError as :func:`read`; JalapenoError when no row can be scored (every
    one queue-bound or with speculative decoding)."""
    return scored(path, chips).table


def scored(path: Path | str, chips: Path | str | None = None) -> Scored:
    """:func:`score` with what a page draws: :class:`Scored`."""
    runs = read(path, chips)
    mine = scored_rows(runs)
    if mine.is_empty():
        raise JalapenoError(f"{runs.path}: no run to score: all {runs.points.height} are queue-bound or use "
                            "speculative decoding, which the serving model neither calibrates on nor scores")
    shipped = calibration.configurations()
    keys = list(REPEAT_KEYS)
    repeated = shipped.join(mine.select(keys).unique(), on=keys, how="semi")
    if repeated.is_empty():
        eff, training, how = calibration.load(), None, "stored"
    else:
        training = shipped.join(mine.select(keys).unique(), on=keys, how="anti")
        eff, how = _refit(training), f"refit without {repeated.height} repeated rows"
    widths = {s: calibration.scheme_half_width(s) for s in schemes.SCHEMES}  # read before a new chip's folder
    if runs.tables:  # the new chips' specs are read from a data folder holding them; the rest as read here
        training = shipped if training is None else training
    groups = list(mine.group_by(["series"], maintain_order=True))
    with _data_folder(runs.tables):
        fronts = [calibration.default_frontier(g, eff, training) for _, g in groups]
    rows, drawn, dots = [], [], []
    for ((series,), g), front in zip(groups, fronts):
        r = g.row(0, named=True)
        mi = pareto_envelope(1 / g["mean_tpot"].to_numpy(), g["tput_per_gpu"].to_numpy())
        x, y = (1 / g["mean_tpot"].to_numpy())[mi], g["tput_per_gpu"].to_numpy()[mi]
        fx, fy = front["interactivity_tok_s_user"].to_numpy(), front["throughput_tok_s_chip"].to_numpy()
        d = calibration.point_distances(x, y, fx, fy)
        v = calibration.vertical_errors(x, y, fx, fy)
        reached = x <= fx.max() * (1 + 1e-9)  # calibration.band_scores' reach
        scheme = calibration.band_scheme(runs.chips.get(r["chip"], r["chip"]), r["model_key"], isl=int(r["isl"]),
                                         osl=int(r["osl"]), training=shipped if training is None else training)
        width = widths[scheme]
        inside = int(np.count_nonzero(np.abs(v[reached]) <= width))
        rows.append({"series": series, "chip": r["chip"], "model_key": r["model_key"], "shape": f"{r['isl']}/{r['osl']}",
                     "precision": r["precision"], "disagg": r["disagg"], "stack": front["stack"][0], "points": g.height,
                     "envelope_points": int(mi.size), "frontier_distance": float(np.expm1(np.median(d))),
                     "band_scheme": scheme, "band_half_width": width, "reached": int(reached.sum()), "inside": inside,
                     "unreached": int((~reached).sum()),
                     "coverage": inside / int(reached.sum()) if reached.any() else None,
                     "left_out": repeated.join(g.select(keys), on=keys, how="semi").height, "calibration": how})
        env = pareto_envelope(fx, fy)
        drawn.append(pl.DataFrame({"series": series, "interactivity_tok_s_user": fx[env], "throughput_tok_s_chip": fy[env],
                                   "throughput_low": fy[env] * math.exp(-width),
                                   "throughput_high": fy[env] * math.exp(width)}))
        on = np.zeros(g.height, dtype=bool)
        on[mi] = True
        dots.append(pl.DataFrame({"series": series, "interactivity_tok_s_user": 1 / g["mean_tpot"].to_numpy(),
                                  "throughput_tok_s_chip": g["tput_per_gpu"].to_numpy(), "envelope": on}))
    table = pl.DataFrame(rows, schema_overrides={"coverage": pl.Float64}).select(SCORE_COLUMNS)
    return Scored(table, runs, pl.concat(drawn).sort("series", "interactivity_tok_s_user", maintain_order=True),
                  pl.concat(dots))


_REFITS: dict[str, calibration.Efficiency] = {}


def _refit(training: pl.DataFrame) -> calibration.Efficiency:
    """:func:`jalapeno.calibration.fit` of ``training`` (about 3 s), once per process and training set."""
    key = hashlib.sha256(training.write_csv().encode()).hexdigest()
    if key not in _REFITS:
        _REFITS[key] = calibration.fit(training)
    return _REFITS[key]


def overall(table: pl.DataFrame) -> dict[str, float]:
    """The overall score of :func:`score`'s ``table``: ``median`` and ``p90`` over its series of their
    frontier distances (fractions, :func:`jalapeno.calibration.frontier_error`: every series weighs the
    same), ``series``, and the band's ``coverage`` (fraction) of every reached envelope point, with
    ``inside``, ``reached`` and ``unreached`` (counts)."""
    stat = calibration.frontier_error(table)
    inside, reached = int(table["inside"].sum()), int(table["reached"].sum())
    return {"median": stat.median, "p90": stat.p90, "series": stat.n_series, "inside": inside, "reached": reached,
            "unreached": int(table["unreached"].sum()), "coverage": inside / reached if reached else math.nan}


def score_report(table: pl.DataFrame) -> str:
    """What ``jalapeno measurements score`` prints: one line a series of :func:`score`'s ``table``, then
    :func:`overall`."""
    lines = []
    for r in table.iter_rows(named=True):
        cov = "no point within the frontier's reach" if r["coverage"] is None else (
            f"{r['inside']} of the {r['reached']} within its reach inside its 80 % band ({r['band_scheme']}, "
            f"x/÷ {number(math.exp(r['band_half_width'])):.2f})")
        lines.append(f"{r['series']}: frontier distance {number(100 * r['frontier_distance']):.1f} % over "
                     f"{r['envelope_points']} envelope points (predicted with {r['stack']}); {cov}"
                     + (f"; {r['unreached']} beyond the frontier's fastest point" if r["unreached"] else ""))
    o = overall(table)
    lines.append(f"overall, {o['series']} series: median {number(100 * o['median']):.1f} %, p90 "
                 f"{number(100 * o['p90']):.1f} %; 80 % band coverage {o['inside']} of {o['reached']} points"
                 + (f" ({number(100 * o['coverage']):.0f} %)" if o["reached"] else "")
                 + f"; calibration: {table['calibration'][0]}")
    return "\n".join(lines)


# ---- the page of a score ----------------------------------------------------------------------------------

#: Width (px) of a chart of the score's page (:func:`series_chart`): the book's exported width
#: (``jalapeno.charts.EXPORT_WIDTH_PX``).
CHART_WIDTH_PX = 600


def series_chart(result: Scored, series: str):
    """One series of ``result`` as an Altair chart: the predicted frontier (line) with its 80 % band (area)
    and the reader's measured points (filled on the measured envelope, the points the score reads),
    throughput per GPU (tok/s, input + output) against interactivity (tok/s/user), both axes logarithmic.
    Altair is imported here, not by :mod:`jalapeno.charts` (whose import would load it, and vl-convert,
    with ``import jalapeno``, which exports :func:`score`): only the page draws."""
    import altair as alt  # deferred: see the docstring

    front = result.fronts.filter(pl.col("series") == series)
    pts = result.points.filter(pl.col("series") == series)
    x = alt.X("interactivity_tok_s_user:Q", scale=alt.Scale(type="log"), title="interactivity (tok/s/user)")
    y = alt.Y("throughput_tok_s_chip:Q", scale=alt.Scale(type="log"), title="throughput per GPU (tok/s)")
    band = alt.Chart(front).mark_area(opacity=0.2, color="#1f77b4").encode(
        x=x, y=alt.Y("throughput_low:Q", scale=alt.Scale(type="log"), title="throughput per GPU (tok/s)"),
        y2="throughput_high:Q")
    line = alt.Chart(front).mark_line(color="#1f77b4").encode(x=x, y=y)
    dots = alt.Chart(pts).mark_point(size=40, color="#d62728").encode(
        x=x, y=y, fill=alt.condition("datum.envelope", alt.value("#d62728"), alt.value("white")))
    return alt.layer(band, line, dots).properties(title=series, width=CHART_WIDTH_PX, height=300)


#: The headers of the page's table (:func:`page_html`), in the reader's words, by column of :func:`score`.
PAGE_COLUMNS = {"series": "series", "stack": "stack predicted with", "envelope_points": "envelope points",
                "frontier_distance": "frontier distance (%)", "band_scheme": "band of scheme",
                "inside": "inside the 80 % band", "reached": "within the frontier's reach",
                "unreached": "beyond the frontier's fastest point"}


def page_html(result: Scored) -> str:
    """A standalone HTML page of ``result``: a banner naming the file, its SHA-256 digest and the
    calibration, the overall score (:func:`overall`), the per-series table and one chart a series
    (:func:`series_chart`, as static SVG by vl-convert, as :func:`jalapeno.charts.to_svg` draws one).
    Measured points are the reader's scored rows (red; filled on their measured envelope), the line the
    predicted frontier, the shaded area its 80 % band."""
    import vl_convert  # deferred, as altair in series_chart
    t, runs = result.table, result.runs
    o = overall(t)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in PAGE_COLUMNS.values())
    body = []
    for r in t.iter_rows(named=True):
        cells = [r["series"], display.name(r["stack"]), r["envelope_points"], 100 * r["frontier_distance"],
                 r["band_scheme"], r["inside"], r["reached"], r["unreached"]]
        body.append("<tr>" + "".join(f"<td>{html.escape(display.cell(c, 3))}</td>" for c in cells) + "</tr>")
    figures = "".join(f"<figure>{vl_convert.vegalite_to_svg(series_chart(result, s).to_dict())}</figure>"
                      for s in t["series"])
    coverage = (f"{o['inside']:,} of {o['reached']:,} envelope points inside their 80 % band "
                f"({number(o['coverage']):.0%})" if o["reached"] else "no envelope point within its frontier's reach")
    name = html.escape(runs.path.name)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>The serving model on {name}</title><style>body{{font-family:sans-serif;max-width:60rem;"
            "margin:auto}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .4rem}</style>"
            f"</head><body>\n<p class=\"banner\">Scored on {name} (sha256 {runs.digest}); calibration: "
            f"{html.escape(t['calibration'][0])}; predicted on the default path, never fitted on these runs.</p>\n"
            f"<h1>The serving model on {name}</h1>\n"
            f"<p>{o['series']:,} series: median frontier distance {number(o['median']):.1%}, p90 "
            f"{number(o['p90']):.1%}; {coverage}. Red: the measured points (filled: on their measured envelope, "
            "the points the score reads); line: the predicted frontier; shaded: its 80 % band.</p>\n"
            f"<table><tr>{head}</tr>{''.join(body)}</table>\n{figures}\n</body></html>\n")


# ---- recalibrating on them (jalapeno build --measurements) ----------------------------------------------

#: The relative change of a constant below which a reader's rows count as not having moved it
#: (:func:`changes`): a refit's reproducibility, not its last stored digit. A refit on rows that inform
#: nothing new still moves the constants along the fit's flattest direction, which ends a few 1e-3 from
#: its minimum wherever the floating-point path takes it (the module docstring of
#: :mod:`jalapeno.calibration`), and the five significant digits ``data/calibration.csv`` stores differ
#: by up to 1e-4 on a value that straddles a rounding step.
UNCHANGED_RTOL = 1e-2
#: :data:`UNCHANGED_RTOL` in words.
UNCHANGED_WORDS = "within 1 %, a refit's reproducibility"

#: The columns of :func:`changes`, in order.
CHANGE_COLUMNS = ("parameter", "unit", "stored", "refit", "relative_change", "moved", "direct")


@dataclass(frozen=True)
class Recalibrated:
    """The calibration refitted on the shipped rows and a reader's runs (:func:`recalibrate`): ``runs``
    (:class:`Runs`), ``training`` (the rows fitted on, rows of :func:`jalapeno.calibration.configurations`:
    the shipped ones but those a reader's run repeats, :data:`REPEAT_KEYS`, then the reader's scored rows,
    :func:`scored_rows`), ``replaced`` (shipped rows a reader's run repeats, which it replaces: a run
    measured again), ``added`` (the reader's rows fitted on), ``text`` (the refit's ``calibration.csv``,
    as :func:`jalapeno.calibration.save` writes it, each row's source naming the file and its digest) and
    ``changes`` (:func:`changes` of the stored calibration against it)."""

    runs: Runs
    training: pl.DataFrame
    replaced: int
    added: int
    text: str
    changes: pl.DataFrame

    @property
    def efficiency(self) -> calibration.Efficiency:
        """The refit's constants as stored (``text``): what a book built on them reads."""
        t = pl.read_csv(io.BytesIO(self.text.encode()))
        values = dict(zip(t["parameter"], t["value"]))
        return calibration.Efficiency(**{p: values[p] for p in calibration.BOUNDS},
                                      tau_s={p[6:]: v for p, v in values.items() if p.startswith("tau_s:")})


def training_rows(runs: Runs) -> tuple[pl.DataFrame, int]:
    """The rows a recalibration on ``runs`` fits (see :class:`Recalibrated`) and the number of shipped
    rows they replace. JalapenoError when none of the reader's rows can be fitted (all queue-bound or with
    speculative decoding, which the calibration never fits)."""
    mine = scored_rows(runs)
    if mine.is_empty():
        raise JalapenoError(f"{runs.path}: no run to calibrate on: all {runs.points.height} are queue-bound or "
                            "use speculative decoding, which the serving model neither calibrates on nor scores")
    keys = list(REPEAT_KEYS)
    with _data_folder(runs.tables):
        shipped = calibration.configurations()
    repeated = shipped.join(mine.select(keys).unique(), on=keys, how="semi").height
    kept = shipped.join(mine.select(keys).unique(), on=keys, how="anti")
    return pl.concat([kept, mine.select(kept.columns)], how="vertical_relaxed"), repeated


def _direct(training: pl.DataFrame, added: int) -> set[str]:
    """The constants of a fit on ``training`` whose change moves a residual of its last ``added`` rows
    (the reader's: :func:`jalapeno.calibration.jac_sparsity`), with each stack's prior
    (``tau_s:<stack>``) when one of its overheads is among them."""
    names = calibration.parameters(training)
    free = np.array([p not in set(calibration.unidentified(training)) for p in names])
    rows = calibration.jac_sparsity(training, free)[training.height - added:training.height]
    out = {p for p, hit in zip(np.asarray(names)[free], rows.any(axis=0)) if hit}
    return out | {p.split("@", 1)[0] for p in out if "@" in p}


def recalibrate(runs: Runs) -> Recalibrated:
    """:func:`jalapeno.calibration.fit` (the procedure of the stored calibration: the same neutral start,
    priors, bounds and tolerances) on the shipped rows and the reader's (:func:`training_rows`): a new
    stack gets overheads of its own (:func:`jalapeno.calibration.extra_stacks`), a new chip its specs (the
    chips file's, :attr:`Runs.tables`). The constants are kept in the cache under the training rows, the
    new chips' tables and the data folder (:func:`jalapeno.data.cached_frame`): a second build on the same
    file does not refit (one fit: about 2 s on 2 cores)."""
    training, replaced = training_rows(runs)
    added = training.height - (calibration.configurations().height - replaced)
    key = cache.key("measurements-refit", training, runs.tables, data=data.data_dir())

    def fitted() -> pl.DataFrame:
        with _data_folder(runs.tables):
            eff = calibration.fit(training)
        return pl.DataFrame({"parameter": [*calibration.BOUNDS, *(f"tau_s:{k}" for k in eff.tau_s)],
                             "value": [*(float(getattr(eff, p)) for p in calibration.BOUNDS),
                                       *(float(v) for v in eff.tau_s.values())]})

    values = dict(data.cached_frame("measurements-refit", key, fitted).iter_rows())
    eff = calibration.Efficiency(**{p: values[p] for p in calibration.BOUNDS},
                                 tau_s={p[6:]: v for p, v in values.items() if p.startswith("tau_s:")})
    shipped = training.height - added
    how = (f"fitted by jalapeno.calibration.fit() (the stored calibration's procedure) to {shipped} measured "
           f"InferenceMAX points of measured/inferencemax.csv and {added} rows of {runs.path.name} "
           f"(sha256:{runs.digest})" + (f", which replace the {replaced} shipped rows they repeat" if replaced else "")
           + "; jalapeno build --measurements")
    with tempfile.TemporaryDirectory(prefix="jalapeno-refit-") as tmp:
        text = calibration.save(eff, how, Path(tmp) / calibration.CALIBRATION_FILE).read_text()
    stored = data.calibration_table()
    new = pl.read_csv(io.BytesIO(text.encode()))
    with _data_folder(runs.tables):  # a new chip's generation
        direct = _direct(training, added)
    return Recalibrated(runs, training, replaced, added, text, changes(stored, new, direct))


def changes(stored: pl.DataFrame, refit: pl.DataFrame, direct: set[str] | frozenset = frozenset()) -> pl.DataFrame:
    """What a refit moved: one row a constant of ``stored`` or ``refit`` (tables of ``calibration.csv``:
    ``parameter``, ``value``, ``unit``), in ``stored``'s order then the refit's new ones: ``stored`` and
    ``refit`` values (SI; null where a table lacks the constant), ``relative_change`` (``refit / stored -
    1``; null for a new constant), ``moved`` (a new constant, or ``|relative_change|`` above
    :data:`UNCHANGED_RTOL`) and ``direct`` (whether the reader's rows enter the residuals the constant
    moves, ``direct``: a constant that moved without it moved through the constants it shares rows with,
    the fractions of HBM bandwidth and FLOP/s, the collective latency; one that did not move was not
    informed by them)."""
    old = dict(zip(stored["parameter"], stored["value"]))
    new = dict(zip(refit["parameter"], refit["value"]))
    units = dict(zip(refit["parameter"], refit["unit"])) | dict(zip(stored["parameter"], stored["unit"]))
    rows = []
    for p in [*old, *(p for p in new if p not in old)]:
        a, b = old.get(p), new.get(p)
        rel = None if a is None or b is None or a == 0 else b / a - 1
        rows.append({"parameter": p, "unit": units[p], "stored": a, "refit": b, "relative_change": rel,
                     "moved": a is None or b is None or (abs(rel) > UNCHANGED_RTOL if rel is not None else a != b),
                     "direct": p in direct or p.removeprefix("tau_s:") in {d.removeprefix("tau_s:") for d in direct}})
    return pl.DataFrame(rows, schema={"parameter": pl.Utf8, "unit": pl.Utf8, "stored": pl.Float64, "refit": pl.Float64,
                                      "relative_change": pl.Float64, "moved": pl.Boolean, "direct": pl.Boolean})


def _shown(value: float | None, unit: str) -> tuple[str, str]:
    """A constant as a reader reads it: a time in µs (``4.9537e-05 s`` is ``49.537 µs``), else as stored;
    the value through :func:`jalapeno.display.cell` and its unit."""
    if value is None:
        return "", unit
    if unit == "s" or unit.startswith("s "):
        return display.cell(value * 1e6, 5), "µs" + unit[1:]
    return display.cell(value, 5), unit


def changes_report(table: pl.DataFrame) -> str:
    """What ``jalapeno build --measurements`` prints of :func:`changes`: the constants the reader's rows
    moved (stored -> refit, with the relative change, and whether through their own residuals or through
    the constants they share), then those left unchanged (within :data:`UNCHANGED_RTOL`: not informed by
    the rows, or informed as by the shipped rows they replace)."""
    moved = table.filter(pl.col("moved"))
    lines = [f"constants your rows moved ({moved.height} of {table.height}; stored -> refit):"]
    for r in moved.iter_rows(named=True):
        (a, unit), (b, _) = _shown(r["stored"], r["unit"]), _shown(r["refit"], r["unit"])
        change = "new" if r["relative_change"] is None else f"{number(100 * r['relative_change']):+.3g} %"
        how = "your rows enter its residuals" if r["direct"] else "through the constants it shares rows with"
        lines.append(f"  {r['parameter']}: {a or 'none'} -> {b or 'none'} {unit} ({change}; {how})")
    still = table.filter(~pl.col("moved"))["parameter"].to_list()
    lines.append(f"constants your rows left unchanged ({UNCHANGED_WORDS}: not informed by them, or informed as by "
                 "the shipped rows they replace): " + (", ".join(still) if still else "none"))
    return "\n".join(lines)


def changes_markdown(table: pl.DataFrame) -> str:
    """:func:`changes` as a Markdown table (constant, unit, stored, this build's, change in %, moved by),
    for the banner of the serving-model page."""
    lines = ["| constant | unit | stored | this build | change (%) | moved by |", "| --- | --- | --- | --- | --- | --- |"]
    for r in table.iter_rows(named=True):
        (a, unit), (b, _) = _shown(r["stored"], r["unit"]), _shown(r["refit"], r["unit"])
        change = "new" if r["relative_change"] is None else display.cell(100 * r["relative_change"], 3)
        how = ("your rows" if r["direct"] else "the constants it shares rows with") if r["moved"] else "unchanged"
        lines.append(f"| {calibration.constant_words(r['parameter'])} | {unit} | {a} | {b} | {change} | {how} |")
    return "\n".join(lines)


def score_markdown(table: pl.DataFrame) -> str:
    """:func:`score`'s ``table`` as a Markdown table (the headers of :data:`PAGE_COLUMNS`), then the
    overall score (:func:`overall`), for the banner of the serving-model page of a ``--hold-out`` build."""
    lines = ["| " + " | ".join(PAGE_COLUMNS.values()) + " |", "|" + " --- |" * len(PAGE_COLUMNS)]
    for r in table.iter_rows(named=True):
        cells = [r["series"], display.name(r["stack"]), r["envelope_points"], 100 * r["frontier_distance"],
                 r["band_scheme"], r["inside"], r["reached"], r["unreached"]]
        lines.append("| " + " | ".join(display.cell(c, 3).replace("|", "\\|") for c in cells) + " |")
    o = overall(table)
    lines.append("")
    lines.append(f"Overall, {o['series']:,} series: median frontier distance {number(o['median']):.1%}, p90 "
                 f"{number(o['p90']):.1%}; {o['inside']:,} of {o['reached']:,} envelope points inside their 80 % band; "
                 f"calibration: {table['calibration'][0]}.")
    return "\n".join(lines)


def measured_table(recal: Recalibrated) -> pl.DataFrame:
    """The measured table (the columns of ``data/measured/inferencemax.csv``) a book built on a reader's
    runs reads: the shipped rows but those a reader's run repeats (:data:`REPEAT_KEYS`, as
    :func:`training_rows` leaves them out), then every row of the reader's (queue-bound ones and those
    with speculative decoding too: the charts show them; the calibration and the schemes skip them as they
    skip the shipped ones), a missing ``run_id`` written as the file's name (its rows one run, as an
    InferenceMAX run holds many configurations). Its
    :func:`jalapeno.calibration.configurations` are the refit's training rows (:attr:`Recalibrated.training`),
    so that the validation schemes, the serving-model chapter's tables and every chart of measured points
    read the reader's rows with the shipped ones (:func:`jalapeno.measured.points`' ``reader_run`` tells
    them apart)."""
    columns = list(data.SCHEMAS[SHIPPED])
    shipped = measured.points(spec_decoding=None).with_row_index("row")
    plain = shipped.filter(pl.col("spec_decoding") == "none")  # configurations' own filter (queue-bound kept)
    keys = calibration.configurations(plain, keep_queue_bound=True).select(REPEAT_KEYS).with_row_index("at")
    repeated = keys.join(scored_rows(recal.runs).select(REPEAT_KEYS).unique(), on=list(REPEAT_KEYS), how="semi")
    drop = set(plain["row"].gather(repeated["at"]).to_list())
    name = recal.runs.path.name
    mine = recal.runs.points.with_columns(pl.coalesce("run_id", pl.lit(name)).alias("run_id"))
    return pl.concat([shipped.filter(~pl.col("row").is_in(drop)).select(columns), mine.select(columns)],
                     how="vertical_relaxed")


def data_folder(recal: Recalibrated, folder: Path) -> Path:
    """Write into ``folder`` (new) a copy of the data folder with the refit's ``calibration.csv``
    (:attr:`Recalibrated.text`), the measured table with the reader's rows (:func:`measured_table`) and,
    with new chips, the ``chips.csv`` and ``chip_specs.csv`` holding them: the folder a book built on the
    reader's runs reads (``JALAPENO_DATA_DIR``; the build then re-runs the validation schemes on its rows,
    :func:`jalapeno.schemes.derive_for`). Files, not links, so that its digest
    (:func:`jalapeno.cache.files_digest`, in every notebook's cache key) is of its contents. Returns
    ``folder``."""
    table = measured_table(recal)
    shutil.copytree(data.data_dir(), folder, ignore=shutil.ignore_patterns(".cache", "__pycache__"))
    for name, text in recal.runs.tables.items():
        (folder / name).write_text(text)
    (folder / calibration.CALIBRATION_FILE).write_text(recal.text)
    table.write_csv(folder / SHIPPED)
    return folder
