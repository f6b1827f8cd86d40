"""GLOCALCV()'s refit: how precisely it must converge, and whether it can start from a fold's
solution, judged by test average precision.

For each dataset, random 60/40 split and observed fraction rho, ``GLOCALCV()`` searches as it
does by default; then the chosen setting is fitted on all training rows in several ways, and
each is timed (CPU seconds of this process, one BLAS thread) and scored by the test Ap (test
rows without a positive dropped):

* ``cold tol=T`` (``--cold-tols``): from the estimator's own start, stopped at ``tol=T`` (``T = 1e-4`` is the
  refit ``GLOCALCV()`` makes);
* ``warm tol=T`` (``--warm-tols``): from the solution of the chosen setting on the first fold's training rows
  (fitted as the search's path fits are, at ``tol=1e-2``; its time is not counted, since the
  search has made that fit already), through ``GLOCAL.fit(..., init=)``;
* ``warm1 tol=T`` (``--warm1-tols``): the same start with one basic-model round only
  (``init_max_iter=1``, as the search's warm-started path fits), then Algorithm 1 to ``tol``.

Prints one line per refit: dataset, rho, split, the chosen setting, the way, its basic-model
and main-loop rounds, CPU seconds and test Ap; with ``--out``, the rows go to a CSV too.

    GLOCAL_DATA=/path/to/data python benchmarks/bench_refit.py \\
        --datasets cal500 medical genbase birds --splits 2 --rhos 0.3 1 [--out refit.csv]
"""

import argparse
import csv
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import KFold
from threadpoolctl import threadpool_limits

from _common import DATA_DIR, named_data
from glocal import GLOCALCV
from glocal.metrics import average_precision
from glocal.protocol import drop_unlabeled_rows, random_splits, sample_observed

COLD_TOLS = (1e-4, 1e-3, 3e-3, 1e-2)
WARM_TOLS = (1e-4, 1e-3)
WARM1_TOLS = ()
FIELDS = ["dataset", "rho", "split", "setting", "refit", "init_rounds", "rounds", "seconds",
          "test_ap"]


def _ap(model, X, Y):
    return average_precision(Y, model.decision_function(X))


def _timed_fit(model, X, Y, **fit_params):
    tic = time.process_time()
    model.fit(X, Y, **fit_params)
    return model, time.process_time() - tic


def refits(search, X_train, Y_train, cold_tols=COLD_TOLS, warm_tols=WARM_TOLS,
           warm1_tols=WARM1_TOLS):
    """(way, model, CPU seconds) of every refit of the search's chosen setting."""
    best = clone(search.best_estimator_)  # the chosen setting, unfitted
    for tol in cold_tols:
        model, seconds = _timed_fit(clone(best).set_params(tol=tol), X_train, Y_train)
        yield f"cold tol={tol:g}", model, seconds
    if not warm_tols and not warm1_tols:
        return
    train = next(KFold(3, shuffle=True, random_state=0).split(X_train))[0]
    fold = clone(best).set_params(tol=1e-2).fit(X_train[train], Y_train[train])
    for way, tols, params in [("warm", warm_tols, {}),
                              ("warm1", warm1_tols, {"init_max_iter": 1})]:
        for tol in tols:
            model, seconds = _timed_fit(clone(best).set_params(tol=tol, **params), X_train,
                                        Y_train, init=fold)
            yield f"{way} tol={tol:g}", model, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["cal500", "medical", "genbase",
                                                           "birds"])
    parser.add_argument("--splits", type=int, default=2)
    parser.add_argument("--rhos", type=float, nargs="+", default=[0.3, 1.0])
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--cold-tols", type=float, nargs="*", default=list(COLD_TOLS))
    parser.add_argument("--warm-tols", type=float, nargs="*", default=list(WARM_TOLS))
    parser.add_argument("--warm1-tols", type=float, nargs="*", default=list(WARM1_TOLS))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    rows = []
    print(" ".join(FIELDS), flush=True)
    with threadpool_limits(1):
        for name in args.datasets:
            X, Y = named_data(name, args.data_dir)
            for split, (train, test) in enumerate(random_splits(X.shape[0], args.splits,
                                                                random_state=0)):
                X_test, Y_test = drop_unlabeled_rows(X[test], Y[test])
                for rho in args.rhos:
                    Y_train = (sample_observed(Y[train], rho, random_state=split) if rho < 1
                               else Y[train])
                    tic = time.process_time()
                    search = GLOCALCV(random_state=0).fit(X[train], Y_train)
                    print(f"# {name} {rho} {split}: search {time.process_time() - tic:.1f} s "
                          f"(its refit {search.refit_time_:.1f} s wall)", flush=True)
                    setting = ",".join(f"{k}={v}" for k, v in search.best_params_.items())
                    for way, model, seconds in refits(search, X[train], Y_train,
                                                      args.cold_tols, args.warm_tols,
                                                      args.warm1_tols):
                        row = dict(dataset=name, rho=rho, split=split, setting=setting,
                                   refit=way.replace(" ", "_"),
                                   init_rounds=model.n_init_iter_, rounds=model.n_iter_,
                                   seconds=f"{seconds:.2f}",
                                   test_ap=f"{_ap(model, X_test, Y_test):.6f}")
                        rows.append(row)
                        print(" ".join(str(row[f]) for f in FIELDS), flush=True)
    if args.out:
        with open(args.out, "w", newline="") as file:
            writer = csv.DictWriter(file, FIELDS)
            writer.writeheader()
            writer.writerows(rows)


if __name__ == "__main__":
    main()
