"""The measured InferenceMAX points of ``data/measured/inferencemax.csv``.

One row is one serving configuration at one concurrency. Conventions (InferenceX
``utils/process_result.py``): times in seconds; ``tput_per_gpu`` is input + output tokens/s over every
GPU of the configuration; ``output_tput_per_gpu`` is output tokens/s over the GPUs that decode (the
server's ``tp`` GPUs when aggregated, the ``num_decode_gpu`` decode GPUs when disaggregated, whose
``input_tput_per_gpu`` is over the ``num_prefill_gpu`` prefill GPUs: so weighted, the two sum to
``tput_per_gpu`` over all GPUs in every row of the file); ``median_intvty`` = 1 / ``median_tpot``, and
``mean_intvty`` the mean over requests of 1 / TPOT (tok/s/user).
"""

from __future__ import annotations

import polars as pl

from . import data
from .errors import UnknownNameError
from .specs import MODEL_ALIASES, chip, model_names, resolve_name

#: Model keys of the book for the benchmark's ``infmax_model_prefix`` (a row may also give a key of
#: ``data/models.csv`` itself: a reader's run of another model, :mod:`jalapeno.measurements`).
MODEL_PREFIX = {"gptoss": "gpt-oss-120b", "dsr1": "deepseek-r1"}
#: How the ``source`` of every shipped row begins; a row whose source does not is a reader's run
#: (``jalapeno build --measurements``: its source names the reader's file, its SHA-256 and the line).
SHIPPED_SOURCE = "InferenceMAX run "
#: What the charts and tables of a book built on a reader's runs call them, and the shipped ones.
READER_LABEL = "your runs"
SHIPPED_LABEL = "InferenceMAX"


def hardware_names() -> list[str]:
    """The benchmark's hardware keys in ``measured/inferencemax.csv`` (``b200``, ``gb200``, ...), sorted."""
    return sorted(data.load("measured/inferencemax.csv")["hw"].unique())


def hardware_label(hw: str) -> str:
    """The benchmark's hardware key ``hw`` as a reader names it: its chip's key upper-cased, then the
    serving stack the key names after the chip, if any (``gb200`` -> ``GB200``, ``b200-trt`` ->
    ``B200 (TRT)``, the same chip as ``b200`` under another stack). UnknownNameError for an unknown chip."""
    key = chip(hw).chip
    stack = hw.lower().removeprefix(key).strip("-_")
    return key.upper() + (f" ({stack.upper()})" if stack else "")


def run_ids() -> list[str]:
    """The run ids of ``measured/inferencemax.csv``, as text, sorted."""
    return sorted({str(r) for r in data.load("measured/inferencemax.csv")["run_id"].unique()})


def decode_gpus() -> pl.Expr:
    """The GPUs a row's ``output_tput_per_gpu`` is counted over (count): ``num_decode_gpu`` when
    ``disagg``, else the server's ``tp`` (see the module docstring)."""
    return pl.when(pl.col("disagg")).then(pl.col("num_decode_gpu")).otherwise(pl.col("tp"))


def occupancy() -> pl.Expr:
    """Occupancy of a measured row (ratio, Float64): the users decoding at a moment over the users the
    benchmark admits, ``output_tput_per_gpu x G / (conc x mean_intvty)`` with ``G`` = :func:`decode_gpus`.
    The server's output tokens/s over one user's decode rate (tok/s/user) is the number of users decoding
    at once (Little's law); ``conc`` users are admitted. 1 in steady decode; far below 1 when most admitted
    users wait for prefill or admission (a queue-bound run, see ``queue_bound`` in :func:`points`).
    Averaging 1 / TPOT over requests (``mean_intvty``) rather than inverting the mean TPOT makes it a
    little below 1 even in steady decode."""
    return (pl.col("output_tput_per_gpu") * decode_gpus()) / (pl.col("conc") * pl.col("mean_intvty"))


def points(model: str | None = None, hw: str | None = None, *, isl: int | None = None, osl: int | None = None,
           spec_decoding: str | None = "none", run_id: str | None = None) -> pl.DataFrame:
    """Measured points, filtered. ``model`` accepts the book's keys or the benchmark's prefixes;
    ``hw`` the benchmark's hardware keys (``gb200``, ``b200``, ``b200-trt``, ``h100``, ``h200``,
    ``mi355x``). Adds ``model_key``, ``n_gpus`` (all GPUs of the configuration), ``reader_run``
    (Boolean: a reader's run, not InferenceMAX's, :data:`SHIPPED_SOURCE`; the charts draw those as their
    own series), ``occupancy`` (Float64, ratio: :func:`occupancy`) and ``queue_bound`` (Boolean: occupancy below
    ``data.model_constant("queue_bound_occupancy")``, 0.5 in ``data/model_constants.csv`` with its
    reason: such a run measures its queue, not steady decode, so the serving model is neither calibrated
    nor scored on it). Queue-bound rows are kept: the measured charts and reproductions show them.
    Unknown names raise UnknownNameError listing the valid ones."""
    df = _all_points()
    where = []
    if model is not None:
        key = resolve_name("model", model, sorted(df["model_key"].unique()), MODEL_ALIASES)
        where.append(pl.col("model_key") == key)
    if hw is not None:
        valid = hardware_names()
        if str(hw).lower() not in valid:
            raise UnknownNameError("measured hardware", hw, valid)
        where.append(pl.col("hw") == str(hw).lower())
    for col, value in (("isl", isl), ("osl", osl), ("spec_decoding", spec_decoding), ("run_id", run_id)):
        if value is not None:
            where.append(pl.col(col) == value)
    return df.filter(*where) if where else df.clone()  # a copy: what a caller does to it leaves the kept one alone


def _all_points() -> pl.DataFrame:
    """Every row of ``measured/inferencemax.csv`` with the columns :func:`points` adds, computed once per
    loaded copy of the tables it reads (the measured runs, ``models.csv``, ``model_constants.csv``:
    :func:`jalapeno.data.kept_for`): a chapter asks for measured points by the hundred."""
    tables = tuple(data.load(name) for name in ("measured/inferencemax.csv", "models.csv", "model_constants.csv"))
    return data.kept_for(("measured points", str(data.data_dir())), tables, lambda: tables[0].with_columns(
        model_key=pl.col("infmax_model_prefix").replace_strict({**{m: m for m in model_names()}, **MODEL_PREFIX}),
        reader_run=~pl.col("source").str.starts_with(SHIPPED_SOURCE),
        n_gpus=pl.when(pl.col("disagg")).then(pl.col("num_prefill_gpu") + pl.col("num_decode_gpu"))
        .otherwise(pl.col("tp")),
        occupancy=occupancy(),
    ).with_columns(queue_bound=pl.col("occupancy") < data.model_constant("queue_bound_occupancy")))


def require(df: pl.DataFrame, what: str) -> pl.DataFrame:
    """Return ``df`` or raise ValueError saying no measured point matches ``what``."""
    if df.is_empty():
        raise ValueError(f"no measured point matches {what}")
    return df
