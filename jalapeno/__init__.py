"""jalapeno: chip, model and serving models for the Jalapeño inference book.

Public API: :func:`chip`, :func:`model` (typed specs from ``data/``), :func:`chip_names`,
:func:`model_names`, and the modules :mod:`~jalapeno.claims` (the claims registry with a check status
each), :mod:`~jalapeno.measured` (the InferenceMAX points), :mod:`~jalapeno.comparison` (the published
comparison recomputed), :mod:`~jalapeno.roofline`, :mod:`~jalapeno.metrics` and :mod:`~jalapeno.charts`.
"""

from . import claims, comparison, measured, metrics, roofline
from .errors import DataError, JalapenoError, ParameterError, UnknownNameError
from .specs import ChipSpec, ModelSpec, chip, chip_names, model, model_names

__all__ = ["ChipSpec", "ModelSpec", "DataError", "JalapenoError", "ParameterError", "UnknownNameError",
           "chip", "chip_names", "claims", "comparison", "measured", "metrics", "model", "model_names", "roofline"]
