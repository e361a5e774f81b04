"""The measured InferenceMAX points of ``data/measured/inferencemax.csv``.

One row is one serving configuration at one concurrency. Conventions (InferenceX
``utils/process_result.py``): times in seconds; ``tput_per_gpu`` is input + output tokens/s over every
GPU of the configuration; ``median_intvty`` = 1 / ``median_tpot``.
"""

from __future__ import annotations

import polars as pl

from . import data
from .errors import UnknownNameError
from .specs import MODEL_ALIASES, resolve_name

#: Model keys of the book for the benchmark's ``infmax_model_prefix``.
MODEL_PREFIX = {"gptoss": "gpt-oss-120b", "dsr1": "deepseek-r1"}


def hardware_names() -> list[str]:
    """The benchmark's hardware keys in ``measured/inferencemax.csv`` (``b200``, ``gb200``, ...), sorted."""
    return sorted(data.load("measured/inferencemax.csv")["hw"].unique())


def run_ids() -> list[str]:
    """The run ids of ``measured/inferencemax.csv``, as text, sorted."""
    return sorted({str(r) for r in data.load("measured/inferencemax.csv")["run_id"].unique()})


def points(model: str | None = None, hw: str | None = None, *, isl: int | None = None, osl: int | None = None,
           spec_decoding: str | None = "none", run_id: str | None = None) -> pl.DataFrame:
    """Measured points, filtered. ``model`` accepts the book's keys or the benchmark's prefixes;
    ``hw`` the benchmark's hardware keys (``gb200``, ``b200``, ``b200-trt``, ``h100``, ``h200``,
    ``mi355x``). Adds ``model_key`` and ``n_gpus`` (all GPUs of the configuration). Unknown names raise
    UnknownNameError listing the valid ones."""
    df = data.load("measured/inferencemax.csv").with_columns(
        model_key=pl.col("infmax_model_prefix").replace_strict(MODEL_PREFIX),
        n_gpus=pl.when(pl.col("disagg")).then(pl.col("num_prefill_gpu") + pl.col("num_decode_gpu"))
        .otherwise(pl.col("tp")),
    )
    if model is not None:
        key = resolve_name("model", model, sorted(df["model_key"].unique()), MODEL_ALIASES)
        df = df.filter(pl.col("model_key") == key)
    if hw is not None:
        valid = hardware_names()
        if str(hw).lower() not in valid:
            raise UnknownNameError("measured hardware", hw, valid)
        df = df.filter(pl.col("hw") == str(hw).lower())
    for col, value in (("isl", isl), ("osl", osl), ("spec_decoding", spec_decoding), ("run_id", run_id)):
        if value is not None:
            df = df.filter(pl.col(col) == value)
    return df


def require(df: pl.DataFrame, what: str) -> pl.DataFrame:
    """Return ``df`` or raise ValueError saying no measured point matches ``what``."""
    if df.is_empty():
        raise ValueError(f"no measured point matches {what}")
    return df
