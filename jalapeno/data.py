"""Loading and validating the files in ``data/``.

Every file is read as text and checked against a declared schema (no type inference, see the golden
case on polars CSV inference): a numeric column may carry thousands separators ("4,800"), which are
stripped; any other text in a numeric column, an empty required cell, a value outside a closed set or a
duplicate key raises :class:`~jalapeno.errors.DataError` naming the file, the line, the column and the
bad value.

The data folder is found through the package (``<repo>/data``), or through the environment variable
``JALAPENO_DATA_DIR``; never through the working directory.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

import polars as pl

from . import cache
from .errors import DataError, UnknownNameError

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """The folder holding the data files (``JALAPENO_DATA_DIR`` if set, else ``<repo>/data``)."""
    return _folder(os.environ.get("JALAPENO_DATA_DIR"))


@lru_cache(maxsize=None)
def _folder(value: str | None) -> Path:  # the evaluator asks for a data file on every call
    return Path(value) if value else REPO_ROOT / "data"


def cached_frames(kind: str, items: list[tuple[str, object]]) -> list[pl.DataFrame]:
    """:func:`cached_frame` of each ``(key, compute)`` of ``items``, in their order, shared out among the
    processes that ask for them at once: a first pass computes each frame whose lock is free and passes
    over one that another process is computing, a second pass waits for those. Two notebooks of a cold
    build that need the same hold-out refits thus compute about half each, instead of one waiting while
    the other computes them all."""
    first = {key: cached_frame(kind, key, compute, wait=False) for key, compute in items}
    return [first[key] if first[key] is not None else cached_frame(kind, key, compute) for key, compute in items]


def is_cached(kind: str, key: str) -> bool:
    """Whether :func:`cached_frame` holds a frame of ``kind`` under ``key`` (whole or not: reading it
    checks its digest)."""
    return (cache.folder() / kind / f"{key}.parquet").is_file()


def cached_frame(kind: str, key: str, compute, *, wait: bool = True) -> pl.DataFrame | None:
    """The DataFrame ``compute()`` returns, kept as the cache entry ``<cache>/<kind>/<key>.parquet``
    (``key`` from :func:`jalapeno.cache.key`; :func:`jalapeno.cache.entry`: one process computes it, the
    others wait and read it; a damaged one is computed again). With ``wait=False``, None instead of
    waiting for another process computing it."""
    path = cache.entry(cache.folder() / kind / f"{key}.parquet", lambda tmp: compute().write_parquet(tmp), wait=wait)
    return None if path is None else pl.read_parquet(path)


@dataclass(frozen=True)
class Column:
    """One column of a data file: its type (``str``, ``float``, ``int``, ``bool``), whether a value is
    required, for a closed set the allowed values, and for a number its plausible range (``low``,
    ``high``, inclusive, in the file's ``unit``): a value outside it is a typo or a wrong unit."""

    kind: str = "str"
    required: bool = False
    choices: tuple[str, ...] | None = None
    plausible: tuple[float, float] | None = None
    unit: str = ""


def _c(kind: str = "str", required: bool = False, choices: str | None = None,
       plausible: tuple[float, float] | None = None, unit: str = "") -> Column:
    return Column(kind, required, tuple(choices.split()) if choices else None, plausible, unit)


#: How ``claims.csv`` treats a claim (its column ``treatment``): ``reproduce`` from the measured data,
#: ``arithmetic`` between independent sources, ``restate`` (both ends share one source), ``predict`` by a
#: model, ``fit_target`` (a value Jalapeño's constants are fitted to), ``conflict`` (seeds disagree; the
#: other claim in ``conflicts_with``), ``not_checkable`` (``reason`` says why). The statuses these lead to
#: are :data:`jalapeno.registry.STATUSES`.
TREATMENTS = ("reproduce", "arithmetic", "restate", "predict", "fit_target", "conflict", "not_checkable")


SPEC_QUANTITIES = {
    # quantity: (dimension, allowed source units)
    "peak_dense_flops_fp4": ("FLOP/s", "TFLOP/s PFLOP/s"),
    "peak_dense_flops_fp8": ("FLOP/s", "TFLOP/s PFLOP/s"),
    "peak_dense_flops_bf16": ("FLOP/s", "TFLOP/s PFLOP/s"),
    "hbm_capacity": ("B", "GB GiB TB"),
    "hbm_bandwidth": ("B/s", "GB/s TB/s"),
    "hbm_stacks": ("count", "count"),
    "sram_capacity": ("B", "MB GB"),
    "sram_bandwidth": ("B/s", "TB/s PB/s"),
    "scale_up_bandwidth": ("B/s", "GB/s TB/s"),
    "scale_up_domain": ("count", "count"),
    "tdp": ("W", "W kW"),
    "sustained_power": ("W", "W kW"),
    "allin_power": ("W", "W kW"),
}

#: The plausible range (SI, per chip) of each quantity of ``chip_specs.csv``: a value outside it is a
#: typo or a wrong unit (12,288 TB/s where 12.288 TB/s was meant, GB/s where TB/s was), refused on load.
PLAUSIBLE_SI = {
    "peak_dense_flops_fp4": (1e13, 1e18), "peak_dense_flops_fp8": (1e13, 1e18), "peak_dense_flops_bf16": (1e13, 1e18),
    "hbm_capacity": (1e9, 4e12), "hbm_bandwidth": (1e11, 1e14), "hbm_stacks": (1, 32),
    "sram_capacity": (1e6, 1e11), "sram_bandwidth": (1e12, 1e17),
    "scale_up_bandwidth": (1e9, 1e14), "scale_up_domain": (1, 1e6),
    "tdp": (10, 2e4), "sustained_power": (10, 2e4), "allin_power": (10, 2e4),
}

#: Multipliers from a source unit to SI (bytes, bytes/s, FLOP/s, W, count).
UNIT_TO_SI = {
    "count": 1.0, "W": 1.0, "kW": 1e3,
    "MB": 1e6, "GB": 1e9, "TB": 1e12, "GiB": 2.0**30,
    "GB/s": 1e9, "TB/s": 1e12, "PB/s": 1e15,
    "TFLOP/s": 1e12, "PFLOP/s": 1e15,
}

_MODEL_COLUMNS = (
    "num_hidden_layers:int! hidden_size:int! vocab_size:int! tie_word_embeddings:bool! num_attention_heads:int! "
    "num_key_value_heads:int head_dim:int q_lora_rank:int kv_lora_rank:int qk_nope_head_dim:int "
    "qk_rope_head_dim:int v_head_dim:int sliding_window:int num_sliding_window_layers:int "
    "num_global_key_value_heads:int global_head_dim:int attention_k_eq_v:bool intermediate_size:int "
    "num_dense_layers:int moe_intermediate_size:int n_routed_experts:int num_experts_per_tok:int "
    "n_shared_experts:int max_position_embeddings:int published_total_params:float published_active_params:float"
).split()

#: The plausible range of each number of ``measured/inferencemax.csv`` (the benchmark's units: seconds,
#: tokens/s per GPU, tok/s/user): a value outside it is a typo or a wrong unit (milliseconds for seconds,
#: tokens/s per rack for per GPU), refused on load. The file's values lie well inside (throughput 12 to
#: 115,501 tok/s per GPU, TPOT 1.9 to 106 ms); a standard deviation may be 0.
MEASURED_PLAUSIBLE = {
    "tput": ((1, 1e6), "tok/s per GPU"), "ttft": ((1e-4, 1e4), "s"), "tpot": ((1e-5, 10), "s"),
    "itl": ((1e-5, 100), "s"), "e2el": ((1e-3, 1e5), "s"), "intvty": ((1e-2, 1e5), "tok/s/user"),
}
#: The measured results every row gives (a reader's run too, :mod:`jalapeno.measurements`); every
#: shipped row gives all of them, a reader's may leave the others out.
MEASURED_REQUIRED = ("tput_per_gpu", "output_tput_per_gpu", "mean_tpot", "mean_intvty")
_MEASURED_FLOATS = {
    **{f"{p}tput_per_gpu": _c("float", f"{p}tput_per_gpu" in MEASURED_REQUIRED, None, *MEASURED_PLAUSIBLE["tput"])
       for p in ("", "output_", "input_")},
    **{f"{s}_{m}": _c("float", f"{s}_{m}" in MEASURED_REQUIRED, None,
                      ((0, 1e7) if m == "intvty" else (0, r[1])) if s == "std" else r, unit)
       for m, (r, unit) in MEASURED_PLAUSIBLE.items() if m != "tput" for s in ("mean", "median", "p99", "std")},
}
_TOKENS, _GPUS = {"plausible": (1, 1e7), "unit": "tokens"}, {"plausible": (1, 1e5), "unit": "GPUs"}

SCHEMAS: dict[str, dict[str, Column]] = {
    "claims.csv": {
        "claim_id": _c(required=True), "value": _c("float", True), "value_high": _c("float"),
        "unit": _c(required=True), "quantity": _c(required=True), "subject": _c(required=True),
        "comparator": _c(), "model": _c(), "seeds": _c(required=True), "quote": _c(required=True),
        "origin": _c(required=True, choices="reported derived"), "derived_from": _c(),
        "treatment": _c(required=True, choices=" ".join(TREATMENTS)),
        "chapter": _c(required=True), "reason": _c(), "conflicts_with": _c(),
    },
    "chips.csv": {
        "chip": _c(required=True), "display_name": _c(required=True), "vendor": _c(required=True),
        "kind": _c(required=True, choices="gpu asic lpu tpu"),
        "availability": _c(required=True, choices="shipping announced preliminary"), "source": _c(required=True),
        "generation": _c(required=True), "generation_source": _c(required=True),
    },
    "chip_specs.csv": {
        "chip": _c(required=True), "quantity": _c(required=True, choices=" ".join(SPEC_QUANTITIES)),
        "value": _c("float", True), "unit": _c(required=True, choices=" ".join(UNIT_TO_SI)),
        "status": _c(required=True, choices="published estimate preliminary derived"),
        "basis": _c(), "source": _c(required=True),
    },
    "models.csv": {
        "model": _c(required=True), "display_name": _c(required=True), "hf_repo": _c(required=True),
        "attention": _c(required=True, choices="gqa mla"),
        **{c.split(":")[0]: _c(c.split(":")[1].rstrip("!"), c.endswith("!")) for c in _MODEL_COLUMNS},
        "source": _c(required=True),
    },
    "measured/inferencemax.csv": {
        "run_id": _c(required=True), "source": _c(required=True), "infmax_model_prefix": _c(required=True),
        "model": _c(required=True), "hw": _c(required=True), "framework": _c(required=True),
        "precision": _c(required=True, choices="fp4 fp8 bf16"), "spec_decoding": _c(required=True, choices="none mtp"),
        "isl": _c("int", True, **_TOKENS), "osl": _c("int", True, **_TOKENS),
        "conc": _c("int", True, plausible=(1, 1e6), unit="requests"),
        "disagg": _c("bool", True), "is_multinode": _c("bool"),
        "tp": _c("int", **_GPUS), "ep": _c("int", **_GPUS), "dp_attention": _c("bool"),
        "num_prefill_gpu": _c("int", **_GPUS), "prefill_num_workers": _c("int", **_GPUS), "prefill_tp": _c("int", **_GPUS),
        "prefill_ep": _c("int", **_GPUS), "prefill_dp_attention": _c("bool"),
        "num_decode_gpu": _c("int", **_GPUS), "decode_num_workers": _c("int", **_GPUS), "decode_tp": _c("int", **_GPUS),
        "decode_ep": _c("int", **_GPUS), "decode_dp_attention": _c("bool"), "image": _c(),
        **_MEASURED_FLOATS,
    },
}

SCHEMAS["seeds.csv"] = {
    "seed": _c(required=True), "short": _c(required=True), "title": _c(required=True), "title_en": _c(required=True),
    "title_kind": _c(required=True, choices="headline opening"),
    "outlet": _c(required=True), "outlet_basis": _c(required=True),
    "date": _c(), "date_basis": _c(required=True),
}
SCHEMAS["seed_figures.csv"] = {
    "figure": _c(required=True), "seeds": _c(required=True), "describes": _c(required=True), "quote": _c(),
    "counterparts": _c(), "gap": _c(),
}
SCHEMAS["seed_public_data_questions.csv"] = {
    "question": _c(required=True), "seed_line": _c("int", True, plausible=(1, 1e4), unit="line"),
    "question_zh": _c(required=True), "question_en": _c(required=True),
    "answers_zh": _c(required=True), "answers_en": _c(required=True),
    "cannot_answer_zh": _c(required=True), "cannot_answer_en": _c(required=True), "seeds": _c(required=True),
}
#: What ``seeds.csv`` holds in ``outlet`` for an article that names no publication or author.
OUTLET_NOT_STATED = "not stated"

SCHEMAS["calibration.csv"] = {
    "parameter": _c(required=True), "value": _c("float", True), "unit": _c(required=True), "source": _c(required=True),
}
#: How an unknown of ``jalapeno_unknowns.csv`` is drawn between its low and high values (column
#: ``distribution``; :mod:`jalapeno.uncertainty` samples them): ``log-uniform`` (uniform in the logarithm),
#: ``log-uniform-powers-of-two`` (each power of two from low to high equally likely).
UNKNOWN_DISTRIBUTIONS = ("log-uniform", "log-uniform-powers-of-two")

SCHEMAS["jalapeno_unknowns.csv"] = {
    "parameter": _c(required=True), "low": _c("float", True), "central": _c("float", True), "high": _c("float", True),
    "unit": _c(required=True), "basis": _c(required=True),
    "distribution": _c(required=True, choices=" ".join(UNKNOWN_DISTRIBUTIONS)), "distribution_basis": _c(required=True),
    "source": _c(required=True),
}

#: Key columns that must be unique in each file.
KEYS = {
    "claims.csv": ("claim_id",),
    "chips.csv": ("chip",),
    "chip_specs.csv": ("chip", "quantity"),
    "models.csv": ("model",),
    "calibration.csv": ("parameter",),
    "jalapeno_unknowns.csv": ("parameter",),
}

_THOUSANDS = r"^-?\d{1,3}(,\d{3})+(\.\d+)?$"


def _fail(path: Path, index: int, column: str, value: object, why: str) -> DataError:
    # index is the 0-based data row; the header is line 1
    return DataError(f"{path}: line {index + 2}, column '{column}': {why} (got {value!r})")


def read_text_csv(path: Path, what: str = "data file") -> pl.DataFrame:
    """The CSV file ``path`` with every cell as text (no type inferred). DataError naming the file when it
    is missing (``<path>: <what> not found``) or is no valid CSV."""
    if not path.is_file():
        raise DataError(f"{path}: {what} not found")
    try:
        return pl.read_csv(path, infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        raise DataError(f"{path}: not a valid CSV file: {exc}") from exc


def read_table(path: Path | str, schema: dict[str, Column], key: tuple[str, ...] = ()) -> pl.DataFrame:
    """Read one CSV file and validate it against ``schema``.

    Returns a polars DataFrame with the declared columns in the declared order, typed (``Utf8``,
    ``Float64``, ``Int64``, ``Boolean``; empty cells null). Raises :class:`DataError` naming file, line,
    column and value for: a missing or unexpected column, text in a numeric column, an empty required
    cell, a value outside a closed set or its column's plausible range (:class:`Column`), a duplicate key.
    """
    path = Path(path)
    raw = read_text_csv(path)
    missing = [c for c in schema if c not in raw.columns]
    extra = [c for c in raw.columns if c not in schema]
    if missing or extra:
        raise DataError(f"{path}: header does not match the schema: missing {missing}, unexpected {extra}; "
                        f"expected columns: {', '.join(schema)}")
    raw = raw.with_columns(pl.col(c).str.strip_chars().replace("", None) for c in schema)
    numeric = [n for n, c in schema.items() if c.kind in ("float", "int")]

    def as_number(name: str) -> pl.Expr:
        t = pl.col(name)
        return pl.when(t.str.contains(_THOUSANDS)).then(t.str.replace_all(",", "")).otherwise(t) \
            .cast(pl.Float64, strict=False)
    def is_bad(name: str) -> pl.Expr:  # text that is not a number, not finite, or not whole in an int column
        t = pl.col(name)
        bad = (t.is_null() & raw[name].is_not_null()) | ~t.is_finite().fill_null(True)
        return (bad | (t.is_not_null() & (t != t.round(0)))) if schema[name].kind == "int" else bad
    # every numeric column typed, and which of its cells are bad, in one pass over the table
    typed_all = raw.select(*(as_number(n) for n in numeric))
    bad_all = typed_all.select(*(is_bad(n) for n in numeric))
    flags = bad_all.select(pl.all().any()).row(0, named=True) if numeric else {}
    out = []
    for name, col in schema.items():
        s = raw[name]
        if col.required and s.null_count():
            i = s.is_null().arg_true()[0]
            raise _fail(path, i, name, "", "a value is required")
        if col.kind in ("float", "int"):
            typed = typed_all[name]
            if flags[name]:
                i = bad_all[name].arg_true()[0]
                why = f"not {'an integer' if col.kind == 'int' else 'a finite number'}"
                if "," in s[i]:
                    why += " (a decimal comma? write 1.5, not 1,5; a comma may only separate thousands, as in 4,800)"
                raise _fail(path, i, name, s[i], why)
            if col.plausible:
                low, high = col.plausible
                outside = (typed < low) | (typed > high)
                if outside.any():
                    i = outside.arg_true()[0]
                    raise _fail(path, i, name, s[i], f"{typed[i]:g} is outside the plausible range {low:g} to {high:g}"
                                f"{' ' + col.unit if col.unit else ''}; check the unit and the decimal point")
            s = typed.cast(pl.Int64) if col.kind == "int" else typed
        elif col.kind == "bool":
            low = s.str.to_lowercase()
            bad = low.is_not_null() & ~low.is_in(["true", "false"])
            if bad.any():
                i = bad.arg_true()[0]
                raise _fail(path, i, name, s[i], "not a boolean; valid values: true, false")
            s = low == "true"
        elif col.choices:
            bad = s.is_not_null() & ~s.is_in(list(col.choices))
            if bad.any():
                i = bad.arg_true()[0]
                raise _fail(path, i, name, s[i], f"not a valid value; valid values: {', '.join(col.choices)}")
        out.append(s.alias(name))
    df = pl.DataFrame(out)
    for name in key:  # keys are lower-case names (chips, models, claims, parameters)
        if df.schema[name] == pl.Utf8:
            bad = df[name] != df[name].str.to_lowercase()
            if bad.any():
                i = bad.arg_true()[0]
                raise _fail(path, i, name, df[name][i], "keys are lower-case")
    if key:
        dup = df.select(~pl.struct(list(key)).is_first_distinct().alias("d"))["d"]
        if dup.any():
            i = dup.arg_true()[0]
            raise _fail(path, i, "/".join(key), tuple(df.row(i, named=True)[k] for k in key), "duplicate key")
    return df


@lru_cache(maxsize=None)
def _load(name: str, folder: str) -> pl.DataFrame:
    path = Path(folder) / name
    if not path.is_file():
        return read_table(path, SCHEMAS[name], KEYS.get(name, ()))  # its DataError
    # validated once per content of the file, then read back typed (a first frontier in a new process
    # reads five tables)
    key = cache.key("table", name, data=path)
    return cached_frame("tables", key, lambda: read_table(path, SCHEMAS[name], KEYS.get(name, ())))


def load(name: str) -> pl.DataFrame:
    """Load and validate one file of ``data/`` by its name (a key of :data:`SCHEMAS`), cached."""
    if name not in SCHEMAS:
        raise UnknownNameError("data file", name, sorted(SCHEMAS))
    return _load(name, str(data_dir()))


#: What :func:`kept_for` computed, by key, next to the loaded tables it was computed from.
_KEPT: dict[tuple, tuple[tuple[pl.DataFrame, ...], object]] = {}


def kept_for(key: tuple, tables: tuple[pl.DataFrame, ...], compute: Callable[[], T]) -> T:
    """``compute()``, kept under ``key`` while ``tables`` (what it reads, as :func:`load` returned them) are
    the same objects: computed again after a cache clear or in an edited copy of data/, where each is a new
    table. For the look-ups a chapter makes by the hundred (claims, constants, measured points, recipes),
    where a table's filter took half a millisecond each."""
    kept = _KEPT.get(key)
    if kept is None or list(map(id, kept[0])) != list(map(id, tables)):  # the kept tables are alive: ids unique
        kept = _KEPT[key] = (tables, compute())
    return kept[1]


def _row(name: str, column: str, value) -> dict[str, object] | None:
    """The first row of the table ``name`` (:func:`load`) whose ``column`` is ``value``, named, or None:
    a dictionary look-up after the first call (:func:`kept_for`)."""
    table = load(name)

    def by_value() -> dict[object, dict[str, object]]:
        rows: dict[object, dict[str, object]] = {}
        for row in table.iter_rows(named=True):
            rows.setdefault(row[column], row)
        return rows
    return kept_for(("rows", str(data_dir()), name, column), (table,), by_value).get(value)


def _long_specs_si(name: str, owner_file: str, owner: str, quantities: dict, units: dict,
                   plausible: dict[str, tuple[float, float]]) -> pl.DataFrame:
    """A long-format spec file (``owner, quantity, value, unit, ...``) with ``value_si`` added, after checking
    that each unit fits its quantity, each value is positive and within the ``plausible`` range (SI) of
    its quantity, and each owner is listed in ``owner_file``. Raises DataError naming file, line, column
    and value (and, for a value with a thousands comma outside the range, that the comma may have been
    meant as a decimal point)."""
    specs = load(name)
    known = set(load(owner_file)[owner])
    path = data_dir() / name
    for i, row in enumerate(specs.iter_rows(named=True)):
        allowed = quantities[row["quantity"]][1].split()
        if row["unit"] not in allowed:
            raise _fail(path, i, "unit", row["unit"],
                        f"not a unit of {row['quantity']}; valid units: {', '.join(allowed)}")
        if row[owner] not in known:
            raise _fail(path, i, owner, row[owner],
                        f"{owner} not in {owner_file}; valid {owner}s: {', '.join(sorted(known))}")
        if row["value"] <= 0:
            raise _fail(path, i, "value", row["value"], "a spec value must be positive")
        low, high = plausible[row["quantity"]]
        si = row["value"] * units[row["unit"]]
        if not low <= si <= high:
            unit = quantities[row["quantity"]][0]
            raise _fail(path, i, "value", row["value"],
                        f"{row['value']:g} {row['unit']} is outside the plausible range of {row['quantity']} "
                        f"({low:g} to {high:g} {unit}); check the unit and the decimal point (a comma separates "
                        "thousands: 12,288 reads as twelve thousand)")
    factor = pl.col("unit").replace_strict(units, return_dtype=pl.Float64)
    return specs.with_columns(value_si=pl.col("value") * factor)


def chip_specs_si() -> pl.DataFrame:
    """``chip_specs.csv`` with each value converted to SI (column ``value_si``), after checking that each
    unit fits its quantity (TB/s for a bandwidth, not GB) and that each chip is listed in ``chips.csv``."""
    return _long_specs_si("chip_specs.csv", "chips.csv", "chip", SPEC_QUANTITIES, UNIT_TO_SI, PLAUSIBLE_SI)


# ---- systems: racks, pods and slices as machines (the systems chapter) -----------------------------

#: Topologies a system's fabric can have (``systems.csv``), modelled in :mod:`jalapeno.network`.
TOPOLOGIES = "switched ring torus mesh dragonfly"

#: Quantities of ``system_specs.csv`` (one value of one system: a rack, pod or slice), as
#: ``quantity: (dimension, allowed source units)``. ``hop_latency``: one chip-to-chip hop of the
#: system's fabric; ``scale_up_bandwidth``: per chip, both directions summed, where ``chip_specs.csv``
#: has none; ``host_memory``: host (CPU) memory per chip; ``peak_dense_flops_fp8``: the whole system.
SYSTEM_QUANTITIES = {
    "hop_latency": ("s", "ns us"),
    "scale_up_bandwidth": ("B/s", "GB/s TB/s"),
    "host_memory": ("B", "GB TB"),
    "peak_dense_flops_fp8": ("FLOP/s", "TFLOP/s PFLOP/s"),
}

#: The plausible range (SI) of each quantity of ``system_specs.csv`` (see :data:`PLAUSIBLE_SI`).
SYSTEM_PLAUSIBLE_SI = {"hop_latency": (1e-9, 1e-3), "scale_up_bandwidth": (1e9, 1e14), "host_memory": (1e9, 1e14),
                       "peak_dense_flops_fp8": (1e13, 1e21)}

#: Multipliers to SI of the units ``system_specs.csv`` accepts.
SYSTEM_UNIT_TO_SI = {"ns": 1e-9, "us": 1e-6, "GB/s": 1e9, "TB/s": 1e12, "GB": 1e9, "TB": 1e12,
                     "TFLOP/s": 1e12, "PFLOP/s": 1e15}

SCHEMAS["systems.csv"] = {
    "system": _c(required=True), "display_name": _c(required=True), "chip": _c(required=True),
    "topology": _c(required=True, choices=TOPOLOGIES), "shape": _c(required=True), "basis": _c(required=True),
    "source": _c(required=True),
}
SCHEMAS["system_specs.csv"] = {
    "system": _c(required=True), "quantity": _c(required=True, choices=" ".join(SYSTEM_QUANTITIES)),
    "value": _c("float", True), "unit": _c(required=True, choices=" ".join(SYSTEM_UNIT_TO_SI)),
    "status": _c(required=True, choices="published estimate preliminary derived"),
    "basis": _c(), "source": _c(required=True),
}
KEYS["systems.csv"] = ("system",)
KEYS["seeds.csv"] = ("seed",)
KEYS["seed_figures.csv"] = ("figure",)
KEYS["seed_public_data_questions.csv"] = ("question",)
KEYS["system_specs.csv"] = ("system", "quantity")


def system_specs_si() -> pl.DataFrame:
    """``system_specs.csv`` with each value converted to SI (column ``value_si``), after checking that each
    unit fits its quantity (``us`` for a hop latency, not ``GB``), that each value is positive and that
    each system is listed in ``systems.csv``. Raises DataError naming file, line, column and value."""
    return _long_specs_si("system_specs.csv", "systems.csv", "system", SYSTEM_QUANTITIES, SYSTEM_UNIT_TO_SI,
                          SYSTEM_PLAUSIBLE_SI)


# ---- what-ifs and public facts (the agents and caveats chapters) -------------------------------------

#: Units of ``whatif_ranges.csv`` and ``public_facts.csv`` and their multipliers to SI (W, B/s, FLOP/s,
#: B; ``ratio``, ``year``, ``USD``, ``USD/h`` and ``USD/kWh`` are kept as they are, the unit named in the variable).
WHATIF_UNIT_TO_SI = {"W": 1.0, "kW": 1e3, "TB/s": 1e12, "PFLOP/s": 1e15, "ratio": 1.0, "USD/h": 1.0,
                     "year": 1.0, "USD": 1.0, "USD/kWh": 1.0, "Gb": 1e9 / 8, "GB": 1e9}

SCHEMAS["whatif_ranges.csv"] = {
    "parameter": _c(required=True), "low": _c("float", True), "central": _c("float", True), "high": _c("float", True),
    "unit": _c(required=True, choices=" ".join(WHATIF_UNIT_TO_SI)), "basis": _c(required=True),
    "source": _c(required=True),
}
SCHEMAS["public_facts.csv"] = {
    "fact": _c(required=True), "value": _c("float", True), "unit": _c(required=True, choices=" ".join(WHATIF_UNIT_TO_SI)),
    "basis": _c(required=True), "source": _c(required=True),
}
KEYS["whatif_ranges.csv"] = ("parameter",)
KEYS["public_facts.csv"] = ("fact",)


# ---- lookups: one value of a file by its key (every chapter module reads data/ through these) --------

#: Cases of a low / central / high range (``whatif_ranges.csv``, ``jalapeno_unknowns.csv``).
CASES = ("low", "central", "high")


def _unknown(what: str, value: object, valid) -> Exception:
    return UnknownNameError(what, value, list(valid))


def claim_value(claim_id: str, high: bool = False) -> float:
    """A published number from ``claims.csv`` by claim id (the high end of a range with ``high=True``,
    the value when the claim has no high end), in the claim's own unit. UnknownNameError listing the
    claim ids."""
    row = _row("claims.csv", "claim_id", claim_id)
    if row is None:
        raise _unknown("claim", claim_id, claims_table()["claim_id"])
    return row["value_high"] if high and row["value_high"] is not None else row["value"]


def whatif_ranges() -> pl.DataFrame:
    """``whatif_ranges.csv``: each what-if quantity with a low, central and high value, its unit, basis
    and source."""
    return load("whatif_ranges.csv")


def _range_value(name: str, what: str, parameter: str, case: str, units: dict[str, float]) -> float:
    """One ``case`` of the ``parameter`` row of the low / central / high table ``name``, in SI by ``units``."""
    if case not in CASES:
        raise _unknown("case", case, CASES)
    row = _row(name, "parameter", parameter)
    if row is None:
        raise _unknown(what, parameter, load(name)["parameter"])
    return row[case] * units[row["unit"]]


def whatif(parameter: str, case: str = "central") -> float:
    """One value of ``whatif_ranges.csv`` in SI (W, B/s, FLOP/s; ``ratio`` and ``USD/h`` as they are).
    UnknownNameError for an unknown parameter or a ``case`` other than low, central, high."""
    return _range_value("whatif_ranges.csv", "what-if parameter", parameter, case, WHATIF_UNIT_TO_SI)


def fact(name: str) -> float:
    """One value of ``public_facts.csv`` in SI (bytes for ``Gb``; years and USD as they are);
    UnknownNameError listing the facts."""
    row = _row("public_facts.csv", "fact", name)
    if row is None:
        raise _unknown("fact", name, load("public_facts.csv")["fact"])
    return row["value"] * WHATIF_UNIT_TO_SI[row["unit"]]


def jalapeno_unknowns() -> pl.DataFrame:
    """``jalapeno_unknowns.csv``: each unpublished Jalapeño quantity with a low, central and high value,
    its unit, basis, the distribution it is drawn from between low and high (:data:`UNKNOWN_DISTRIBUTIONS`)
    with that distribution's basis, and its source."""
    return load("jalapeno_unknowns.csv")


def jalapeno_unknown(parameter: str, case: str = "central") -> float:
    """One value of ``jalapeno_unknowns.csv`` in SI (B/s, count); UnknownNameError for an unknown
    parameter or case."""
    return _range_value("jalapeno_unknowns.csv", "Jalapeño unknown", parameter, case, UNIT_TO_SI)


def model_constant(name: str) -> float:
    """One value of ``model_constants.csv`` (a constant of the physics that is neither a spec nor fitted
    to measurements, with its basis), in the unit its name ends with; UnknownNameError listing them.
    A dictionary look-up after the first call (the serving evaluator asks for one on every call)."""
    row = _row("model_constants.csv", "constant", name)
    if row is None:
        raise _unknown("model constant", name, load("model_constants.csv")["constant"])
    return row["value"]


def calibration_table() -> pl.DataFrame:
    """``calibration.csv``: each fitted constant of the serving model with its unit and how it was fitted."""
    return load("calibration.csv")


def calibration_values() -> dict[str, float]:
    """``calibration.csv`` as ``{parameter: value}`` (SI)."""
    df = calibration_table()
    return dict(zip(df["parameter"], df["value"]))


def claims_table() -> pl.DataFrame:
    """``claims.csv``: every numeric claim of the seeds with its unit, quote, treatment and chapter."""
    return load("claims.csv")


def seeds_table() -> pl.DataFrame:
    """``seeds.csv``: each seed article (key: its file name, as ``claims.csv`` cites it) with its short
    citation (``short``, what the book's tables cite it by), a short title (its headline, else its opening
    words; Chinese and English), the outlet or author it names (:data:`OUTLET_NOT_STATED` when it names
    none; ``outlet_basis``: what that rests on), and the date it states, if any. DataError naming a
    short citation two seeds share, or one that is a file name."""
    df = load("seeds.csv")
    shared = sorted(s for s, n in Counter(df["short"]).items() if n > 1)
    if shared:
        raise DataError(f"seeds.csv: short citation(s) {', '.join(map(repr, shared))} name more than one seed")
    files = [s for s in df["short"] if s.endswith(".txt")]
    if files:
        raise DataError(f"seeds.csv: short citation(s) {', '.join(map(repr, files))} are file names; "
                        "a short citation is what a reader reads, e.g. 'Seed 000'")
    return df


def seed_citations() -> dict[str, str]:
    """Each seed's file name -> how the book's tables cite it: its short citation, with its outlet and
    date in parentheses when it states them (``Seed 003 (2026-08-25)``)."""
    out = {}
    for r in seeds_table().iter_rows(named=True):
        extra = [x for x in (None if r["outlet"] == OUTLET_NOT_STATED else r["outlet"], r["date"]) if x]
        out[r["seed"]] = r["short"] + (f" ({', '.join(extra)})" if extra else "")
    return out


def cite_seeds(cell: str) -> str:
    """A ``seeds`` cell of ``claims.csv`` (file names separated by ``;``) as the short citations of
    :func:`seed_citations`, separated by ``; ``. UnknownNameError naming a file ``seeds.csv`` lacks."""
    cites = seed_citations()
    names = [s.strip() for s in cell.split(";") if s.strip()]
    unknown = [s for s in names if s not in cites]
    if unknown:
        raise UnknownNameError("seed", unknown[0], list(cites), where=f"seeds cell {cell!r}")
    return "; ".join(cites[s] for s in names)


def seed_figures() -> pl.DataFrame:
    """``seed_figures.csv``: each figure or table a seed describes or implies (``figure``: ``f1``, ``f2``,
    ...), the seeds that describe it (file names separated by ``;``), what it shows, the seed's words
    (``quote``), the book's figures that answer it (``counterparts``: figure names, or ``chapter#section-anchor`` for a table, separated by ``;``) and
    what they do not show (``gap``). DataError naming the row of a seed ``seeds.csv`` lacks, or of a
    figure with no counterpart and no ``gap`` saying why."""
    df = _seeds_known(load("seed_figures.csv"), "seed_figures.csv")
    for i, r in enumerate(df.iter_rows(named=True)):
        if not r["counterparts"] and not r["gap"]:
            raise _fail(data_dir() / "seed_figures.csv", i, "gap", r["gap"], "a figure without counterparts says why")
    return df


def seed_public_data_questions() -> pl.DataFrame:
    """``seed_public_data_questions.csv``: the rows, in the seed's order, of seed 003's table of what the
    public information can and cannot answer yet: ``question`` (key), ``seed_line`` (the seed's line the row
    is printed on), each cell as printed (``question_zh``, ``answers_zh``, ``cannot_answer_zh``) and in
    English (``*_en``), ``seeds`` (the seed's file name: its source). DataError naming the row of a seed
    ``seeds.csv`` lacks."""
    return _seeds_known(load("seed_public_data_questions.csv"), "seed_public_data_questions.csv")


def _seeds_known(df: pl.DataFrame, name: str) -> pl.DataFrame:
    """``df`` (the table ``name`` of ``data/``) when every seed of its ``seeds`` column (file names
    separated by ``;``) is in ``seeds.csv``; DataError naming the first row that cites another."""
    known = set(seeds_table()["seed"])
    for i, r in enumerate(df.iter_rows(named=True)):
        unknown = [x for x in r["seeds"].split(";") if x not in known]
        if unknown:
            raise _fail(data_dir() / name, i, "seeds", r["seeds"],
                        f"seed {unknown[0]!r} is not in seeds.csv; valid seeds: {', '.join(sorted(known))}")
    return df


def systems_table() -> pl.DataFrame:
    """``systems.csv``: every system (rack, pod, slice) with its chip, topology, shape and source."""
    return load("systems.csv")


def write_calibration(rows: list[dict[str, object]], path: Path | None = None) -> Path:
    """Write ``rows`` (``parameter``, ``value``, ``unit``, ``source``) to ``calibration.csv`` (or ``path``),
    checking them against its schema first, and forget the cached copy. Returns the path written."""
    path = Path(path) if path else data_dir() / "calibration.csv"
    df = pl.DataFrame(rows, schema={c: pl.Utf8 for c in SCHEMAS["calibration.csv"]})
    missing = [c for c in SCHEMAS["calibration.csv"] if c not in df.columns]
    if missing:
        raise DataError(f"calibration rows lack columns {missing}")
    df.write_csv(path)
    _load.cache_clear()
    return path


SCHEMAS["model_constants.csv"] = {
    "constant": _c(required=True), "value": _c("float", True), "unit": _c(required=True),
    "basis": _c(required=True), "source": _c(required=True),
}
KEYS["model_constants.csv"] = ("constant",)


#: The serving model's efficiency constants that ``efficiency_bounds.csv`` bounds, each with the unit its
#: row must state (SI): the fitted scalars of :class:`jalapeno.serving.Efficiency` and ``tau_s``, the
#: bound of every stack's per-layer overhead.
EFFICIENCY_UNITS = {
    "eta_mem": "fraction", "eta_compute": "fraction", "eta_prefill": "fraction", "alpha_s": "s",
    "beta_s": "s per layer per sequence", "mla_layer_factor": "ratio", "tau_s": "s per layer per step",
}

SCHEMAS["efficiency_bounds.csv"] = {
    "parameter": _c(required=True, choices=" ".join(EFFICIENCY_UNITS)),
    "low": _c("float", True, plausible=(1e-12, 100.0)), "high": _c("float", True, plausible=(1e-12, 100.0)),
    "unit": Column("str", True, tuple(sorted(set(EFFICIENCY_UNITS.values())))),  # units hold spaces
    "basis": _c(required=True), "source": _c(required=True),
}
KEYS["efficiency_bounds.csv"] = ("parameter",)


def efficiency_bounds_table() -> pl.DataFrame:
    """``efficiency_bounds.csv``: each efficiency constant of the serving model with the low and high
    bounds its fit may reach (SI, in its ``unit``), the physical evidence or assumption behind them
    (``basis``) and its ``source``. Validated as :func:`efficiency_bounds` says."""
    name = "efficiency_bounds.csv"
    df, path = load(name), data_dir() / name
    for i, row in enumerate(df.iter_rows(named=True)):
        unit = EFFICIENCY_UNITS[row["parameter"]]
        if row["unit"] != unit:
            raise _fail(path, i, "unit", row["unit"], f"{row['parameter']} is bounded in {unit!r}")
        if not row["low"] < row["high"]:
            raise _fail(path, i, "high", row["high"], f"the high bound must exceed the low bound {row['low']:g}")
        if unit == "fraction" and row["high"] > 1.0:
            raise _fail(path, i, "high", row["high"], "an achieved fraction of a rated figure is at most 1")
    missing = [p for p in EFFICIENCY_UNITS if p not in set(df["parameter"])]
    if missing:
        raise DataError(f"{path}: no row for {', '.join(missing)}; every one of {', '.join(EFFICIENCY_UNITS)} "
                        "needs its bounds")
    return df


def efficiency_bounds() -> dict[str, tuple[float, float]]:
    """``{parameter: (low, high)}`` of ``efficiency_bounds.csv`` (SI: fractions, ratio, seconds), one entry
    for each of :data:`EFFICIENCY_UNITS` (``tau_s`` bounds every stack's per-layer overhead). Raises
    DataError naming file, line, column and value for a malformed row: a parameter or unit not of
    :data:`EFFICIENCY_UNITS`, a bound that is not a number or outside 1e-12 to 100, a low bound not below
    its high bound, a fraction above 1, a duplicate or missing parameter."""
    df = efficiency_bounds_table()
    return {p: (low, high) for p, low, high in zip(df["parameter"], df["low"], df["high"])}


def claim_unit(claim_id: str) -> str:
    """The unit of a claim of ``claims.csv`` as printed there (``ms``, ``tok/s/kW``, ``x``, ...);
    UnknownNameError listing the claim ids."""
    row = _row("claims.csv", "claim_id", claim_id)
    if row is None:
        raise _unknown("claim", claim_id, claims_table()["claim_id"])
    return row["unit"]


# ---- public GB300 and GB200 DeepSeek-R1 points (checks of the transferred GB300 baseline) -------------

SCHEMAS["gb300_points.csv"] = {
    "point": _c(required=True), "kind": _c(required=True, choices="point ratio"), "chip": _c(required=True),
    "model": _c(required=True), "framework": _c(), "precision": _c(required=True, choices="fp4 fp8 bf16"),
    "spec_decoding": _c(required=True, choices="none mtp unknown"), "disagg": _c("bool"),
    "isl": _c("int", True), "osl": _c("int", True), "concurrency": _c("int"),
    "throughput_tok_s_gpu": _c("float"), "median_ttft_ms": _c("float"), "median_tpot_ms": _c("float"),
    "ratio_x": _c("float"), "ratio_over": _c(), "at_interactivity_tok_s_user": _c("float"),
    "date_measured": _c(), "layout": _c(), "layout_confidence": _c(required=True, choices="high medium low unknown"),
    "confidence": _c(required=True, choices="high medium low"), "basis": _c(required=True), "source": _c(required=True),
}
KEYS["gb300_points.csv"] = ("point",)

#: The plausible range of each numeric column of ``gb300_points.csv`` (in the file's units): a value
#: outside it is a typo or a wrong unit (seconds where milliseconds are meant, tok/s per rack for per GPU).
GB300_PLAUSIBLE = {"isl": (1, 1e7), "osl": (1, 1e7), "concurrency": (1, 1e6), "throughput_tok_s_gpu": (1, 1e6),
                   "median_ttft_ms": (1, 1e7), "median_tpot_ms": (0.1, 1e4), "ratio_x": (1e-2, 1e4),
                   "at_interactivity_tok_s_user": (1, 1e4)}
for _name, _range in GB300_PLAUSIBLE.items():  # checked on load, as every column's plausible range
    SCHEMAS["gb300_points.csv"][_name] = replace(SCHEMAS["gb300_points.csv"][_name], plausible=_range)

#: The columns each kind of row of ``gb300_points.csv`` must fill: a measured operating point, or a
#: published ratio of one system's throughput per GPU over another's at one interactivity.
GB300_REQUIRED = {"point": ("throughput_tok_s_gpu",), "ratio": ("ratio_x", "ratio_over", "at_interactivity_tok_s_user")}

_DATE = r"^\d{4}-\d{2}-\d{2}$"


def gb300_points() -> pl.DataFrame:
    """``gb300_points.csv``: public DeepSeek-R1 operating points and ratios of GB300 and GB200 (one row
    each, with its source, date, layout and confidence), with the SI columns ``tpot_s``, ``ttft_s`` and
    ``interactivity_tok_s_user`` added (tok/s/user: 1 / median TPOT for a point, the stated interactivity
    for a ratio). Besides the schema, checks that each chip is
    in ``chips.csv`` and each model in ``models.csv``, that each number lies in its plausible range
    (:data:`GB300_PLAUSIBLE`, on load), that each row fills the columns of its kind (:data:`GB300_REQUIRED`) and
    that a date reads ``YYYY-MM-DD``. Raises DataError naming file, line, column and value."""
    name = "gb300_points.csv"
    df, path = load(name), data_dir() / name
    known = {"chip": set(load("chips.csv")["chip"]), "model": set(load("models.csv")["model"])}
    for i, row in enumerate(df.iter_rows(named=True)):
        for column, valid in known.items():
            if row[column] not in valid:
                raise _fail(path, i, column, row[column],
                            f"{column} not in {column}s.csv; valid {column}s: {', '.join(sorted(valid))}")
        for column in GB300_REQUIRED[row["kind"]]:
            if row[column] is None:
                raise _fail(path, i, column, "", f"a {row['kind']} row needs a value here")
    dates = df["date_measured"]
    bad = dates.is_not_null() & ~dates.str.contains(_DATE)
    if bad.any():
        i = bad.arg_true()[0]
        raise _fail(path, i, "date_measured", dates[i], "not a date YYYY-MM-DD")
    return df.with_columns((pl.col("median_tpot_ms") * 1e-3).alias("tpot_s"),
                           (pl.col("median_ttft_ms") * 1e-3).alias("ttft_s"),
                           pl.coalesce(1e3 / pl.col("median_tpot_ms"), pl.col("at_interactivity_tok_s_user"))
                           .alias("interactivity_tok_s_user"))


def gb300_point(point: str) -> dict[str, object]:
    """One row of :func:`gb300_points` by its ``point`` id, as a dict; UnknownNameError listing them."""
    table = gb300_points()
    rows = table.filter(pl.col("point") == point)
    if rows.is_empty():
        raise _unknown("GB300 public point", point, table["point"])
    return rows.row(0, named=True)


# ---- hourly cost of a chip per price tier (the costs of jalapeno.costs) ------------------------------

#: Price tiers of ``chip_costs.csv`` (column ``tier``): the InferenceX dashboard's all-in total cost of
#: ownership per GPU-hour, ``hyperscaler`` (its ``costh``), ``neocloud`` (``costn``) and ``rental``
#: (``costr``, a three-year rental).
COST_TIERS = ("hyperscaler", "neocloud", "rental")

#: Cases of ``chip_costs.csv`` (column ``case``): ``published`` (transcribed from the source) for a priced
#: chip; ``low``, ``central``, ``high`` for Jalapeño, whose price is an assumption (no price is public).
COST_CASES = ("published", *CASES)

SCHEMAS["chip_costs.csv"] = {
    "chip": _c(required=True), "tier": _c(choices=" ".join(COST_TIERS)), "case": _c(choices=" ".join(COST_CASES)),
    "usd_per_chip_hour": _c("float", plausible=(0.01, 1000), unit="USD/h"),
    "basis": _c(required=True), "source": _c(required=True), "not_priced_reason": _c(),
}
KEYS["chip_costs.csv"] = ("chip", "tier", "case")


def chip_costs() -> pl.DataFrame:
    """``chip_costs.csv``: one row per chip, price tier (:data:`COST_TIERS`) and case (:data:`COST_CASES`)
    with the all-in cost of one chip for one hour (``usd_per_chip_hour``, USD/h), its basis and source;
    a chip its source does not price has one row with no tier, case or cost and a ``not_priced_reason``.

    Checked on top of the schema: each chip is listed in ``chips.csv`` (a chip of ``chips.csv`` without a
    row, such as one a reader adds, is not priced: :func:`jalapeno.costs.usd_per_chip_hour` says so); a row has a cost (with a tier and a case) or a reason, never both nor neither; a chip is priced
    in every tier, by ``published`` rows or (Jalapeño) by ``low``, ``central`` and ``high``, with
    low <= central <= high. Raises DataError naming file, line, column and value."""
    table = load("chip_costs.csv")
    chips = list(load("chips.csv")["chip"])
    path = data_dir() / "chip_costs.csv"
    for i, row in enumerate(table.iter_rows(named=True)):
        if row["chip"] not in chips:
            raise _fail(path, i, "chip", row["chip"], f"chip not in chips.csv; valid chips: {', '.join(chips)}")
        priced, reason = row["usd_per_chip_hour"] is not None, row["not_priced_reason"] is not None
        if priced == reason:
            raise _fail(path, i, "usd_per_chip_hour", row["usd_per_chip_hour"] or "",
                        "a row gives either a cost or a not_priced_reason, not both nor neither")
        for column in ("tier", "case"):
            if (row[column] is not None) != priced:
                raise _fail(path, i, column, row[column] or "",
                            "a priced row names its tier and case; a not-priced row names neither")
    for chip in dict.fromkeys(table["chip"]):
        rows = table.filter(pl.col("chip") == chip)
        if rows["usd_per_chip_hour"].is_null().any():
            if rows.height > 1:
                raise DataError(f"{path}: chip {chip!r} is both priced and not priced")
            continue
        cases = set(rows["case"])
        if cases not in ({"published"}, set(CASES)):
            raise DataError(f"{path}: chip {chip!r} has cases {sorted(cases)}; a chip has 'published' rows only "
                            f"or low, central and high")
        for tier in COST_TIERS:
            got = {r["case"]: r["usd_per_chip_hour"] for r in rows.filter(pl.col("tier") == tier).iter_rows(named=True)}
            if set(got) != cases:
                raise DataError(f"{path}: chip {chip!r} has no cost for tier {tier!r} in every case "
                                f"({', '.join(sorted(cases))})")
            if cases == set(CASES) and not got["low"] <= got["central"] <= got["high"]:
                raise DataError(f"{path}: chip {chip!r}, tier {tier!r}: low {got['low']:g} <= central "
                                f"{got['central']:g} <= high {got['high']:g} does not hold")
    return table
