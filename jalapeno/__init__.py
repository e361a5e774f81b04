"""jalapeno: chip, model and serving models for the Jalapeño inference book.

The public API (see the README)::

    import jalapeno as jp
    jp.chip("gb200"), jp.model("deepseek-r1")             # typed specs from data/ (SI units)
    jp.evaluate("gpt-oss-120b", "gb200", n_chips=1, concurrency=64)   # one serving evaluation, with its parts
    jp.frontier("gb300", "deepseek-r1")                    # a Pareto frontier (polars DataFrame)
    jp.claims()                                            # the claims registry with a status each

The layers, bottom to top (``tests/test_layers.py`` enforces them): errors and metrics; data; specs;
network, power and measured data; the serving evaluator (``serving``; the roofline is it with ideal
constants); calibration; Pareto frontiers (``pareto``); the subject chip's builder and fit
(``subject``) and the published comparison; the analyses of agents, caveats and systems; charts; the
claims registry (``registry``); the chapters (``chapters``); the book machinery (``publish``).
"""

from .errors import DataError, JalapenoError, ParameterError, UnknownNameError
from .pareto import frontier
from .registry import claims
from .serving import Evaluation, evaluate
from .specs import ChipSpec, ModelSpec, chip, chip_names, model, model_names

__all__ = ["ChipSpec", "DataError", "Evaluation", "JalapenoError", "ModelSpec", "ParameterError", "UnknownNameError",
           "chip", "chip_names", "claims", "evaluate", "frontier", "model", "model_names"]
