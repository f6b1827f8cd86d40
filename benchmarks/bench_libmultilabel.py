"""GLOCAL and BR against LibMultiLabel's linear one-vs-rest, fitted in the same process.

LibMultiLabel (``pip install libmultilabel``, or glocal's ``bench`` extra) is the standard
linear one-vs-rest tool for multi-label text: ``libmultilabel.linear.train_1vsrest``, one
liblinear L2-loss SVM per label on CSR features, here with ``--options`` (default
``-c 0.1``: liblinear's dual solver, its stopping tolerance 0.1, no bias). glocal's ``BR``
is one ``LinearSVC(C=0.1)`` per label (with an intercept, tolerance 1e-4); GLOCAL runs at its
defaults.

For each dataset (training and test part of one 60/40 split; ``sparse50k`` is a synthetic
sparse text-like set, 6000 rows split the same way: 3600 training rows, d = 50,000,
l = 101) and each fraction rho of observed training labels (`glocal.protocol.sample_observed`
hides the others), every method is fitted ``--repeats`` times. At rho < 1, BR and
LibMultiLabel learn each label on the rows where it is observed (LibMultiLabel takes one row
set for all its labels, so it is called once per label), GLOCAL on the observed entries.
Printed: median fit times in CPU seconds of the process (one BLAS and OpenMP thread;
LibMultiLabel's worker threads are counted too; CPU time is the work done, while wall time
on a shared machine mostly measures the load), their ratios to LibMultiLabel's, and the
test average precision (Ap, `glocal.metrics.average_precision`) of each method.

    python benchmarks/bench_libmultilabel.py
        [--datasets arts,enron,bibtex,rcv1subset1,delicious,sparse50k] [--rhos 1,0.3]
        [--repeats 3] [--options "-c 0.1"] [--seed 0] [--data-dir DIR]
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before liblinear's OpenMP runtime loads

import argparse  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from glocal import GLOCAL  # noqa: E402
from glocal.baselines import BR  # noqa: E402
from glocal.metrics import average_precision  # noqa: E402
from glocal.protocol import drop_unlabeled_rows, sample_observed  # noqa: E402
from _common import (DATA_DIR, OneVsRest, libmultilabel_linear, paper_split,  # noqa: E402
                     sparse_text_data, timed_fit)

def split(name, data_dir, seed):
    """Training and test rows, labels as dense floats (test rows without a positive dropped)."""
    if name == "sparse50k":
        X, Y = sparse_text_data(n=6000, seed=seed)
        X_train, X_test, Y_train, Y_test = train_test_split(X, Y, test_size=0.4,
                                                            random_state=seed)
        X_test, Y_test = drop_unlabeled_rows(X_test, Y_test)
    else:
        X_train, X_test, Y_train, Y_test = paper_split(name, data_dir, seed)
    dense = [np.asarray(Y.toarray() if sp.issparse(Y) else Y, dtype=float)
             for Y in (Y_train, Y_test)]
    return X_train, X_test, *dense


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="arts,enron,bibtex,rcv1subset1,delicious,sparse50k")
    parser.add_argument("--rhos", default="1,0.3")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--options", default="-c 0.1", help="LibMultiLabel's liblinear options")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=DATA_DIR)
    args = parser.parse_args()
    if libmultilabel_linear is None:
        parser.error("LibMultiLabel is not installed: pip install libmultilabel "
                     "(or glocal's bench extra: pip install glocal[bench])")
    warnings.simplefilter("ignore", UserWarning)  # labels never positive in some datasets
    warnings.simplefilter("default", ConvergenceWarning)
    print(f"one BLAS and OpenMP thread; CPU seconds, median of {args.repeats} fit(s); "
          f"seed {args.seed}; LML: LibMultiLabel's train_1vsrest, options '{args.options}'")
    print(f"{'data':<12}{'rho':>5}{'n':>7}{'d':>7}{'l':>5}{'LML s':>8}{'BR s':>8}"
          f"{'GLOCAL s':>10}{'BR/LML':>8}{'GLOCAL/LML':>12}{'Ap LML':>8}{'Ap BR':>8}"
          f"{'Ap GLOCAL':>11}")
    methods = {"LML": lambda: OneVsRest(args.options), "BR": lambda: BR(C=0.1),
               "GLOCAL": lambda: GLOCAL(random_state=args.seed)}
    with threadpool_limits(limits=1):
        X, Y = sparse_text_data(n=200, d=300, l=5, density=0.05, seed=args.seed)
        for make_model in methods.values():  # first calls load libraries and start threads
            timed_fit(make_model, X, Y, 1)
        for name in args.datasets.split(","):
            X_train, X_test, Y_train, Y_test = split(name, args.data_dir, args.seed)
            for rho in (float(r) for r in args.rhos.split(",")):
                observed = (Y_train if rho == 1
                            else sample_observed(Y_train, rho, random_state=args.seed))
                seconds, ap = {}, {}
                for method, make_model in methods.items():
                    seconds[method], model, _ = timed_fit(make_model, X_train, observed,
                                                          args.repeats)
                    ap[method] = average_precision(Y_test, model.decision_function(X_test))
                print(f"{name:<12}{rho:>5g}{X_train.shape[0]:>7}{X_train.shape[1]:>7}"
                      f"{Y_train.shape[1]:>5}{seconds['LML']:>8.2f}{seconds['BR']:>8.2f}"
                      f"{seconds['GLOCAL']:>10.2f}{seconds['BR'] / seconds['LML']:>8.2f}"
                      f"{seconds['GLOCAL'] / seconds['LML']:>12.2f}{ap['LML']:>8.4f}"
                      f"{ap['BR']:>8.4f}{ap['GLOCAL']:>11.4f}", flush=True)


if __name__ == "__main__":
    main()
