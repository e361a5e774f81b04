"""jalapeno: chip, model and serving models for the Jalapeño inference book.

The public API (see the README)::

    import jalapeno as jp
    jp.chip("gb200"), jp.model("deepseek-r1")             # typed specs from data/ (SI units)
    jp.evaluate("gpt-oss-120b", "gb200", jp.Layout(n_chips=1), jp.Workload(concurrency=64))  # with its parts
    jp.capacity_plan("h200", "gpt-oss-120b", context_tokens=8192)  # each slice's largest batch and throughput
    jp.frontier("gb300", "deepseek-r1")                    # a Pareto frontier (polars DataFrame)
    jp.frontier("gb300", "deepseek-r1", band=0.8)          # with the model's 80 % band and its scheme
    jp.claims()                                            # the claims registry with a status each
    jp.cost_per_million_tokens(5000, jp.usd_per_chip_hour("gb200", "neocloud"))  # USD per 1M tokens at a tier
    jp.score("examples/my-runs.jsonl")                     # the model's error on a reader's own runs

The layers, bottom to top (``tests/test_layers.py`` enforces them): errors and metrics; data; specs;
network, power and measured data; the serving evaluator (``serving``); the roofline's speed-of-light
bounds (``bounds``: the evaluator with ideal constants); capacity plans (``capacity_plans``, the
evaluator on each tensor-parallel slice once its memory is full); calibration; Pareto frontiers (``pareto``); the
subject chip's builder and fit (``subject``) and the published comparison; the analyses of agents and
their sessions with a prefix cache (``sessions``), caveats and systems, and the validation schemes of the error bar (``schemes``); error bands
(``uncertainty``); charts and the diagrams of fabrics (``diagrams``);
the claims registry (``registry``); a reader's own runs (``measurements``); the chapters (``chapters``); the book machinery (``publish``).
"""

import os as _os

# One BLAS thread unless the caller chose otherwise (read by OpenBLAS when numpy and scipy load it, so set
# before they are imported): the package's linear algebra is small (a fit's Jacobian is about 2,000 x 13),
# where a second thread only waits for a core that the build's other notebook is using (measured: scipy's
# SVD of that Jacobian 0.7 ms on one thread, 140 ms on two with both cores busy), and one thread also fixes
# the order of BLAS's sums whatever the number of cores.
_os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from . import costs  # noqa: E402
from .capacity_plans import capacity_plan, fewest_chips  # noqa: E402
from .costs import NotPricedError, cost_per_million_tokens, tokens_per_dollar, usd_per_chip_hour  # noqa: E402
from .errors import CostError, DataError, JalapenoError, ParameterError, UnknownNameError  # noqa: E402
from .measurements import score  # noqa: E402
from .pareto import frontier  # noqa: E402
from .registry import claims  # noqa: E402
from .serving import Evaluation, Layout, Workload, capacity, evaluate  # noqa: E402
from .specs import ChipSpec, ModelSpec, chip, chip_names, model, model_names  # noqa: E402

__all__ = ["ChipSpec", "CostError", "DataError", "Evaluation", "JalapenoError", "Layout", "ModelSpec", "NotPricedError", "ParameterError",
           "UnknownNameError", "Workload", "capacity", "capacity_plan", "chip", "chip_names", "claims", "cost_per_million_tokens", "costs", "evaluate", "fewest_chips", "frontier", "model",
           "model_names", "score", "tokens_per_dollar", "usd_per_chip_hour"]
