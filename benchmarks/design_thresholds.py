"""How the per-label F1 thresholds were designed: the least F1 a fold's cut must reach.

On datasets other than those of the thresholds study (by default emotions, scene, yeast,
medical and genbase), one random 60/40 split each, a fraction rho of each label's training
entries observed: a model at fixed settings (BR with C = 0.1, or GLOCAL at the recommended
design with lam2 = 4) is fitted on 3 shuffled folds of the training part, and
`glocal.thresholds.f1_thresholds` with each ``min_f1`` is taken on each fold's validation
rows and averaged (`glocal.thresholds.mean_thresholds`); the model fitted on the whole
training part then predicts the test rows with the sign of its scores and with each set of
thresholds. Prints, per (dataset, rho) and rule, the share of test rows with no predicted
label, micro F1 and macro F1.

    GLOCAL_DATA=/path/to/data python benchmarks/design_thresholds.py --model glocal
"""

import argparse
import warnings

import numpy as np
from sklearn.model_selection import KFold
from threadpoolctl import threadpool_limits

from glocal import GLOCAL
from glocal.baselines import BR
from glocal.metrics import macro_f1, micro_f1
from glocal.model_selection import DEFAULT_ESTIMATOR_PARAMS, MAX_DEFAULT_LATENT
from glocal.protocol import sample_observed
from glocal.thresholds import f1_thresholds, mean_thresholds
from _common import DATA_DIR, paper_split

MIN_F1 = [0.0, 0.1, 0.3, 0.5]


def _model(kind, n_labels):
    if kind == "br":
        return BR(C=0.1)
    return GLOCAL(lam2=4.0, **{**DEFAULT_ESTIMATOR_PARAMS,
                               "n_latent": min(n_labels, MAX_DEFAULT_LATENT)})


def _measures(Y_test, Y_pred):
    return (f"{np.mean(Y_pred.sum(axis=1) == 0):.3f} {micro_f1(Y_test, Y_pred):.3f} "
            f"{macro_f1(Y_test, Y_pred):.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=("br", "glocal"), required=True)
    parser.add_argument("--datasets", nargs="+",
                        default=["emotions", "scene", "yeast", "medical", "genbase"])
    parser.add_argument("--rhos", nargs="+", type=float, default=[0.3, 1.0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=DATA_DIR)
    args = parser.parse_args(argv)
    print("dataset rho | rule: empty micro_F1 macro_F1 | ...")
    warnings.simplefilter("ignore")  # labels missing from folds, capped fits: not measured
    with threadpool_limits(1, "blas"):
        for name in args.datasets:
            for rho in args.rhos:
                X_train, X_test, Y_train, Y_test = paper_split(name, args.data_dir, args.seed)
                Y = (sample_observed(Y_train, rho, random_state=args.seed) if rho < 1
                     else Y_train.astype(float))
                folds = KFold(3, shuffle=True, random_state=args.seed).split(X_train)
                validation = []
                for train, test in folds:
                    model = _model(args.model, Y.shape[1]).fit(X_train[train], Y[train])
                    validation.append((Y[test], model.decision_function(X_train[test])))
                scores = _model(args.model, Y.shape[1]).fit(X_train, Y).decision_function(
                    X_test)
                cells = [f"sign: {_measures(Y_test, scores > 0)}"]
                for min_f1 in MIN_F1:
                    thresholds = mean_thresholds([f1_thresholds(Y_fold, S, min_f1)
                                                  for Y_fold, S in validation])
                    cells.append(f"min_f1={min_f1:g}: "
                                 f"{_measures(Y_test, scores > thresholds)}")
                print(f"{name} {rho:g} | " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
