"""GLOCAL's default weights against BR across datasets: the evidence behind the defaults.

For each dataset, one random 60/40 split (test rows without a positive label dropped), BR
(one-vs-rest LinearSVC, C=0.1) and GLOCAL at its defaults with lam2 varied, with and without
`fit_intercept`; prints each test-split average precision minus BR's, and the mean difference
per setting.

    python benchmarks/defaults_across_datasets.py [--data-dir DIR] [--datasets a,b,...]
"""

import argparse
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from glocal import GLOCAL
from glocal.baselines import BR
from glocal.metrics import average_precision
from _common import DATA_DIR, paper_split

DATASETS = "enron,arts,business,yeast,scene,emotions,medical,image,cal500,genbase"
SETTINGS = [dict(lam2=1.0), dict(lam2=3.0), dict(), dict(lam2=10.0),
            dict(fit_intercept=True)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--datasets", default=DATASETS)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # constant labels and liblinear convergence notes

    names = [str(s) if s else "defaults" for s in SETTINGS]
    differences = {name: [] for name in names}
    print(f"{'dataset':<10}{'BR Ap':>7}  " + "  ".join(names))
    with threadpool_limits(limits=1):
        for dataset in args.datasets.split(","):
            X_train, X_test, Y_train, Y_test = paper_split(dataset, args.data_dir, args.seed)
            reference = average_precision(
                Y_test, BR(C=0.1).fit(X_train, Y_train).decision_function(X_test))
            row = []
            for name, setting in zip(names, SETTINGS):
                model = GLOCAL(random_state=args.seed, **setting).fit(X_train, Y_train)
                ap = average_precision(Y_test, model.decision_function(X_test))
                differences[name].append(ap - reference)
                row.append(f"{ap - reference:+.3f}")
            print(f"{dataset:<10}{reference:>7.4f}  " + "  ".join(row), flush=True)
    print("mean Ap difference to BR: " +
          ", ".join(f"{name} {np.mean(d):+.4f}" for name, d in differences.items()))


if __name__ == "__main__":
    main()
