"""How long the book's refits take, cold: every hold-out fold the serving-model chapter shows and the 36
fits of Jalapeño's constants at the nodes of its unknowns (the Pareto chapter's error bands).

Prints, per hold-out fold, the refit's time, its function and Jacobian evaluations (``nfev``, ``njev`` of
``scipy.optimize.least_squares``) and the time to score the held-out series; then the node fits' total;
then the sum, with the machine's load average (``os.getloadavg``) before and after: the figures are
only comparable on an idle machine. Folds that hold out the same rows under two schemes are refitted
once (as :func:`jalapeno.calibration.holdout` does through its cache). Nothing is read from or written
to the cache: every fit here is cold.

    .venv/bin/python benchmarks/fit_speed.py [--by chip model-chip shape] [--no-nodes]
"""

from __future__ import annotations

import argparse
import os
import sys
import time


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--by", nargs="+", default=["chip", "model-chip", "shape"],
                    choices=["chip", "model-chip", "shape", "series"])
    ap.add_argument("--no-nodes", action="store_true", help="skip the 36 node fits")
    args = ap.parse_args(argv)

    import polars as pl
    import scipy.optimize

    from jalapeno import calibration, subject, uncertainty

    print(load())
    runs = []
    least_squares = scipy.optimize.least_squares

    def counted(*a, **k):  # both fits import least_squares from scipy.optimize when called
        sol = least_squares(*a, **k)
        runs.append(sol)
        return sol

    scipy.optimize.least_squares = counted
    configs = calibration._with_groups(calibration.configurations())
    seen: dict[tuple, str] = {}
    total_folds = 0.0
    for by in args.by:
        column = calibration.HOLDOUT_SCHEMES[by]
        for (value,), held in configs.group_by([column], maintain_order=True):
            rows = tuple(held["series"].unique(maintain_order=True))
            if rows in seen:
                print(f"  {by}={value}: the fold {seen[rows]} (same rows), not refitted")
                continue
            seen[rows] = f"{by}={value}"
            rest = configs.filter(pl.col(column) != value).drop("shape", "model_chip")
            runs.clear()
            t0 = time.perf_counter()
            eff = calibration.fit(rest)
            t1 = time.perf_counter()
            calibration.series_errors(calibration.predict(held.drop("shape", "model_chip"), eff), eff)
            t2 = time.perf_counter()
            total_folds += t2 - t0
            nfev, njev = sum(s.nfev for s in runs), sum(s.njev or 0 for s in runs)
            print(f"  {by}={value}: fit {t1 - t0:.2f} s (nfev {nfev}, njev {njev}), score {t2 - t1:.2f} s")
    print(f"hold-out folds: {total_folds:.1f} s ({len(seen)} refits); {load()}")
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
