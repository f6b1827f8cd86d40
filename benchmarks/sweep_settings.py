"""How well can the paper's objective rank, at any setting? A grid search on one split.

Fits GLOCAL (paper's objective: no intercept, lam = 1) over a grid of n_latent, lam2,
lam3 = lam4 and n_groups on one random 60/40 split, and prints every setting's test-split
average precision and ranking loss next to one-vs-rest LinearSVC(C=0.1) fitted on the same
split. This is evidence for the documented choice of defaults, not a tuning protocol
(it looks at the test split).

    python benchmarks/sweep_settings.py --dataset arts [--data-dir DIR]
"""

import argparse
import itertools
import warnings

from threadpoolctl import threadpool_limits

from glocal import GLOCAL
from glocal.baselines import BR
from glocal.metrics import average_precision, ranking_loss
from _common import DATA_DIR, paper_split

GRID = {
    "n_latent": [10, 20, 30],
    "lam2": [1.0, 2.0, 3.0, 4.0, 5.0, 7.0, 10.0],
    "lam3": [1e-3, 0.1, 1.0],
    "n_groups": [4, 16],
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--dataset", default="arts")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)

    X_train, X_test, Y_train, Y_test = paper_split(args.dataset, args.data_dir, args.seed)
    with threadpool_limits(limits=1):
        scores = BR(C=0.1).fit(X_train, Y_train).decision_function(X_test)
        print(f"{args.dataset}: BR  Ap {average_precision(Y_test, scores):.4f}  "
              f"Rkl {ranking_loss(Y_test, scores):.4f}")
        best = None
        for values in itertools.product(*GRID.values()):
            params = dict(zip(GRID, values))
            params["lam4"] = params["lam3"]
            model = GLOCAL(random_state=args.seed, **params).fit(X_train, Y_train)
            scores = model.decision_function(X_test)
            ap, rkl = average_precision(Y_test, scores), ranking_loss(Y_test, scores)
            print(f"  {params}  Ap {ap:.4f}  Rkl {rkl:.4f}", flush=True)
            if best is None or ap > best[0]:
                best = (ap, rkl, params)
    print(f"best GLOCAL: Ap {best[0]:.4f}  Rkl {best[1]:.4f}  at {best[2]}")


if __name__ == "__main__":
    main()
