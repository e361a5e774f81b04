"""How long the book's refits take, cold: every fold of the validation schemes the serving-model chapter
shows (:mod:`jalapeno.schemes`) and the fits of Jalapeño's constants at the nodes of its unknowns (the
Pareto chapter's error bands).

Prints, per fold, the time to refit and score it (:func:`jalapeno.schemes.folds`' own computation) with
the function and Jacobian evaluations of its ``scipy.optimize.least_squares`` calls (``nfev``, ``njev``);
then the node fits' total; then the sum, with the machine's load average (``os.getloadavg``) before and
after: the figures are only comparable on an idle machine. Folds that hold out the same rows under two
schemes share one refit, as the stage does. Nothing is read from or written to the cache: every fit here
is cold.

    .venv/bin/python benchmarks/fit_speed.py [--schemes generation model-chip shape anchored] [--no-nodes]
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    from jalapeno.schemes import SCHEMES

    ap.add_argument("--schemes", nargs="+", default=list(SCHEMES), choices=list(SCHEMES))
    ap.add_argument("--no-nodes", action="store_true", help="skip the node fits")
    args = ap.parse_args(argv)

    import scipy.optimize

    from jalapeno import calibration, schemes, subject, uncertainty

    print(load())
    runs = []
    least_squares = scipy.optimize.least_squares

    def counted(*a, **k):  # every fit imports least_squares from scipy.optimize when called
        sol = least_squares(*a, **k)
        runs.append(sol)
        return sol

    scipy.optimize.least_squares = counted
    total_folds, n_folds = 0.0, 0
    for scheme in args.schemes:
        for name, _, compute in schemes.folds(scheme):
            runs.clear()
            t0 = time.perf_counter()
            compute()
            elapsed = time.perf_counter() - t0
            total_folds += elapsed
            n_folds += 1
            nfev, njev = sum(s.nfev for s in runs), sum(s.njev or 0 for s in runs)
            print(f"  {name}: {elapsed:.2f} s ({len(runs)} least_squares runs, nfev {nfev}, njev {njev})")
    print(f"validation folds: {total_folds:.1f} s ({n_folds} folds); {load()}")
    total_nodes = 0.0
    if not args.no_nodes:
        base = calibration.load()
        grid = uncertainty.nodes()
        runs.clear()
        t0 = time.perf_counter()
        for node in grid.iter_rows(named=True):
            subject.fit_jalapeno("central", base=base, overrides=uncertainty._overrides(node))
        total_nodes = time.perf_counter() - t0
        print(f"node fits: {total_nodes:.1f} s for {grid.height} nodes ({len(runs)} least_squares runs, "
              f"nfev {sum(s.nfev for s in runs)}); {load()}")
    print(f"total: {total_folds + total_nodes:.1f} s; {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
