"""Learning with missing labels: GLOCAL's variants against BR on the observed labels.

Issue 13, item 4. On each dataset, over random 60/40 splits (`glocal.protocol.random_splits`)
and observed fractions rho (`glocal.protocol.sample_observed` on the training labels), every
method is tuned by k-fold cross-validation on the observed training entries
(`glocal.protocol.select_hyperparameters`), refitted on the whole training set, and scored by
the test Ap (test rows without a positive dropped, `glocal.protocol.drop_unlabeled_rows`).
All methods of one (dataset, split, rho) see the same split, the same hidden labels and the
same folds.

The methods and their grids are a FIXED design, the same on every dataset (`METHODS`):
n_latent is either a constant or the rule "n_latent = number of labels"; nothing is tuned
per dataset.

Results are appended row by row to a CSV, so an interrupted run keeps what it finished and
a rerun skips it. One BLAS thread (the machine is shared).

Usage::

    GLOCAL_DATA=/path/to/data python benchmarks/bench_missing_quality.py run \\
        --datasets arts enron --splits 3 --rhos 0.3 0.7 1 --out missing.csv
    python benchmarks/bench_missing_quality.py report missing.csv
"""

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR  # noqa: E402

from glocal import GLOCAL  # noqa: E402
from glocal.baselines import BR  # noqa: E402
from glocal.datasets import load_dataset  # noqa: E402
from glocal.metrics import average_precision  # noqa: E402
from glocal.protocol import (BR_GRID, GLOCAL_GRID, drop_unlabeled_rows,  # noqa: E402
                             paired_ttest, random_splits, sample_observed,
                             select_hyperparameters)

PAPER_DATASETS = ["arts", "business", "computers", "education", "entertainment", "health",
                  "enron", "image"]
EXTRA_DATASETS = ["bibtex", "delicious"]
ALL_LABELS = "n_labels"  # stands for n_latent = number of labels of the dataset


def _glocal(**fixed):
    def make(n_labels, seed):
        params = {k: (n_labels if v == ALL_LABELS else v) for k, v in fixed.items()}
        return GLOCAL(random_state=seed, **params)
    return make


# name -> (factory(n_labels, seed), grid or None). A None grid fits the fixed parameters.
METHODS = {
    "BR": (lambda n_labels, seed: BR(random_state=seed), BR_GRID),
    "GLOCAL-default": (_glocal(), None),
    "GLOCAL-paper": (_glocal(), GLOCAL_GRID),
    "GLOCAL-intercept-k=l": (_glocal(fit_intercept=True, n_latent=ALL_LABELS),
                             {"lam2": [0.5, 1, 2]}),
    "GLOCAL-sqhinge-k=l": (_glocal(fit_intercept=True, n_latent=ALL_LABELS,
                                   loss="squared_hinge"), {"lam2": [0.5, 1, 2]}),
    "GLOCAL-logistic-k=l": (_glocal(fit_intercept=True, n_latent=ALL_LABELS, loss="logistic"),
                            {"lam2": [0.1, 0.3, 1]}),
    "GLOCAL-balanced-k=l": (_glocal(fit_intercept=True, n_latent=ALL_LABELS,
                                    class_weight="balanced"), {"lam2": [0.5, 1, 2]}),
}
FIELDS = ["dataset", "rho", "split", "method", "params", "ap", "seconds"]


def _load(name, max_rows, seed=0):
    data = load_dataset(name, DATA_DIR)
    X = data.X
    Y = data.Y.toarray() if sp.issparse(data.Y) else np.asarray(data.Y, dtype=float)
    if max_rows is not None and X.shape[0] > max_rows:
        rows = np.sort(np.random.default_rng(seed).choice(X.shape[0], max_rows, replace=False))
        X, Y = X[rows], Y[rows]
    return X, Y


def _done(path):
    if not Path(path).exists():
        return set()
    with open(path, newline="") as f:
        return {(r["dataset"], r["rho"], r["split"], r["method"]) for r in csv.DictReader(f)}


def run(args):
    done = _done(args.out)
    new_file = not Path(args.out).exists()
    with open(args.out, "a", newline="") as f, threadpool_limits(1):
        writer = csv.DictWriter(f, FIELDS)
        if new_file:
            writer.writeheader()
        for name in args.datasets:
            X, Y = _load(name, args.max_rows)
            for split, (train, test) in enumerate(random_splits(X.shape[0], args.splits,
                                                                random_state=0)):
                X_test, Y_test = drop_unlabeled_rows(X[test], Y[test])
                for rho in args.rhos:
                    Y_train = (Y[train] if rho == 1 else
                               sample_observed(Y[train], rho, random_state=split))
                    for method in args.methods:
                        key = (name, str(rho), str(split), method)
                        if key in done:
                            continue
                        make, grid = METHODS[method]
                        tic = time.perf_counter()
                        estimator = make(Y.shape[1], split)
                        params = {}
                        if grid is not None:
                            params = select_hyperparameters(estimator, grid, X[train], Y_train,
                                                            cv=args.cv, random_state=split)
                            estimator.set_params(**params)
                        estimator.fit(X[train], Y_train)
                        ap = average_precision(Y_test, estimator.decision_function(X_test))
                        row = dict(dataset=name, rho=rho, split=split, method=method,
                                   params=json.dumps(params), ap=f"{ap:.6f}",
                                   seconds=f"{time.perf_counter() - tic:.1f}")
                        writer.writerow(row)
                        f.flush()
                        print(" ".join(f"{v}" for v in row.values()), flush=True)


def report(args):
    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    results = {}
    for r in rows:
        results.setdefault((r["dataset"], float(r["rho"])), {}).setdefault(
            r["method"], {})[int(r["split"])] = float(r["ap"])
    methods = [m for m in METHODS if any(m in v for v in results.values())]
    others = [m for m in methods if m != "BR"]
    print("Test Ap, mean over splits (n = splits); mark: paired t-test against BR at 95% "
          "(+ better, - worse)\n")
    print("| dataset | rho | n | " + " | ".join(methods) + " |")
    print("|---|---|---|" + "---|" * len(methods))
    tally = {}
    for (name, rho), by_method in sorted(results.items()):
        br = by_method.get("BR", {})
        cells = []
        n = len(br)
        for method in methods:
            scores = by_method.get(method, {})
            if not scores:
                cells.append("")
                continue
            mark = ""
            if method != "BR":
                common = sorted(set(scores) & set(br))
                a = [scores[s] for s in common]
                b = [br[s] for s in common]
                verdict = paired_ttest(a, b) if common else 0
                mark = {1: "+", -1: "-", 0: ""}[verdict]
                if common:
                    t = tally.setdefault((method, rho), [0, 0, 0, 0])
                    t[0] += np.mean(a) >= np.mean(b)
                    t[1] += verdict == 1
                    t[2] += verdict == -1
                    t[3] += 1
            cells.append(f"{np.mean(list(scores.values())):.4f}{mark}")
        print(f"| {name} | {rho:g} | {n} | " + " | ".join(cells) + " |")
    print("\nAgainst BR (datasets): mean >= BR / significantly better / significantly worse "
          "/ compared\n")
    print("| method | rho | >= BR | better | worse | of |")
    print("|---|---|---|---|---|---|")
    for (method, rho), (ge, better, worse, count) in sorted(tally.items()):
        print(f"| {method} | {rho:g} | {ge} | {better} | {worse} | {count} |")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--datasets", nargs="+", default=PAPER_DATASETS)
    r.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    r.add_argument("--splits", type=int, default=3)
    r.add_argument("--rhos", nargs="+", type=float, default=[0.3, 0.7, 1.0])
    r.add_argument("--cv", type=int, default=3)
    r.add_argument("--max-rows", type=int, default=None,
                   help="random row subset of each dataset (e.g. for delicious)")
    r.add_argument("--out", default="missing_quality.csv")
    p = sub.add_parser("report")
    p.add_argument("csv")
    args = parser.parse_args(argv)
    run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    main()
