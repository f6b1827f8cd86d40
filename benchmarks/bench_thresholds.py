"""Label sets: how often each rule predicts no label at all, and its micro and macro F1.

On one random 60/40 split of each dataset (test rows without a positive dropped, as in the
paper), a fraction rho of each label's training entries is kept by the paper's sampler
(`glocal.protocol.sample_observed`), the rest are NaN. Three models, each with the rules
that cut its scores into label sets:

* ``GLOCALCV()``: the sign of the scores (``thresholds="sign"``, the paper's rule) and
  per-label F1 thresholds tuned by its own 3-fold cross-validation (``thresholds="cv"``);
  one fit gives both;
* BR (one LinearSVC per label on its observed rows, C tuned in {0.01, 0.1, 1, 10} by
  ``GridSearchCV`` on the same folds): the sign, and the same F1 thresholds tuned by
  `glocal.thresholds.LabelThresholdsCV` on the same folds;
* with every label observed (LibMultiLabel takes no missing labels), LibMultiLabel's
  ``train_thresholding`` (one-vs-rest liblinear L2-loss SVMs with BR's C and a bias,
  thresholds by its own cross-validation maximizing micro plus macro F1), when LibMultiLabel
  is installed (glocal's ``bench`` extra).

Writes one CSV row per (dataset, rho, model, rule): the share of test rows with an empty
predicted label set, micro and macro F1 (`glocal.metrics`), and the CPU seconds of the
model's fit (its search included).

    GLOCAL_DATA=/path/to/data python benchmarks/bench_thresholds.py \\
        --datasets scene yeast --rhos 0.3 1 --out thresholds.csv
"""

import sys

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import GridSearchCV

from glocal import GLOCALCV
from glocal.baselines import BR
from glocal.metrics import macro_f1, micro_f1, observed_average_precision_scorer
from glocal.thresholds import LabelThresholdsCV
from _common import append_cells, cells_parser, cpu_timed, observed_split

try:
    from libmultilabel import linear as libmultilabel_linear
except ImportError:  # the bench extra (Python >= 3.10)
    libmultilabel_linear = None

BR_GRID = {"C": [0.01, 0.1, 1, 10]}
FIELDS = ["dataset", "rho", "model", "rule", "empty", "micro_f1", "macro_f1", "fit_cpu_s"]


def _row(dataset, rho, model, rule, Y_test, Y_pred, seconds):
    return {"dataset": dataset, "rho": rho, "model": model, "rule": rule,
            "empty": f"{np.mean(Y_pred.sum(axis=1) == 0):.4f}",
            "micro_f1": f"{micro_f1(Y_test, Y_pred):.4f}",
            "macro_f1": f"{macro_f1(Y_test, Y_pred):.4f}", "fit_cpu_s": f"{seconds:.1f}"}


def cell(dataset, rho, seed, data_dir):
    """The rows of one (dataset, rho)."""
    X_train, X_test, Y_observed, Y_test, folds = observed_split(dataset, data_dir, seed, rho)
    rows = []

    search, seconds = cpu_timed(lambda: GLOCALCV(cv=folds, random_state=seed).fit(
        X_train, Y_observed))
    scores = search.decision_function(X_test)
    rows.append(_row(dataset, rho, "GLOCALCV()", "sign", Y_test, scores > 0, seconds))
    rows.append(_row(dataset, rho, "GLOCALCV()", "F1 thresholds by CV", Y_test,
                     scores > search.thresholds_, seconds))

    def br():
        grid = GridSearchCV(BR(random_state=seed), BR_GRID, cv=folds, error_score="raise",
                            scoring=observed_average_precision_scorer, refit=False)
        C = grid.fit(X_train, Y_observed).best_params_["C"]
        return LabelThresholdsCV(BR(C=C, random_state=seed), cv=folds).fit(
            X_train, Y_observed), C

    (tuned, C), seconds = cpu_timed(br)
    scores = tuned.decision_function(X_test)
    rows.append(_row(dataset, rho, f"BR (C={C:g})", "sign", Y_test, scores > 0, seconds))
    rows.append(_row(dataset, rho, f"BR (C={C:g})", "F1 thresholds by CV", Y_test,
                     scores > tuned.thresholds_, seconds))

    if rho == 1 and libmultilabel_linear is not None:
        model, seconds = cpu_timed(lambda: _train_thresholding(
            sp.csr_matrix(Y_observed), sp.csr_matrix(X_train), f"-s 2 -B 1 -c {C:g}"))
        values = libmultilabel_linear.predict_values(model, sp.csr_matrix(X_test))
        rows.append(_row(dataset, rho, f"LibMultiLabel (C={C:g})", "its thresholding",
                         Y_test, values > 0, seconds))
    return rows


def _train_thresholding(y, x, options):
    """LibMultiLabel's ``train_thresholding``: its per-label routine in its label order.

    Its own loop (LibMultiLabel 0.10) counts positives with ``np.sum(y, 2)``, which recent
    scipy refuses on a sparse matrix; this is the same loop with the count per column.
    """
    from libmultilabel.linear import linear

    x, options, bias = linear._prepare_options(x, options)
    y = y.tocsc()
    weights = np.zeros((x.shape[1], y.shape[1]), order="F")
    thresholds = np.zeros(y.shape[1])
    stats = {"tp": 0, "fp": 0, "fn": 0, "labels": 0}
    for j in np.flip(np.argsort(np.asarray(y.sum(axis=0)).ravel(), kind="stable")):
        labels = y[:, j].toarray().ravel()
        w, thresholds[j], stats = linear._micromacro_one_label(2 * labels - 1, x, options,
                                                               stats)
        weights[:, j] = w.ravel()
    return linear.FlatModel(name="thresholding", weights=np.asmatrix(weights), bias=bias,
                            thresholds=thresholds, multiclass=False)


def main(argv=None):
    args = cells_parser(__doc__.split("\n\n")[0]).parse_args(argv)
    if libmultilabel_linear is None:
        print("LibMultiLabel is not installed (pip install libmultilabel): its rows are "
              "left out", file=sys.stderr)
    append_cells(args.out, FIELDS, (cell(dataset, rho, args.seed, args.data_dir)
                                    for dataset in args.datasets for rho in args.rhos))


if __name__ == "__main__":
    main()
