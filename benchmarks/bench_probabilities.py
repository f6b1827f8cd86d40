"""Label probabilities: ``GLOCALCV().predict_proba`` and the logistic loss's log-odds against
per-label logistic regression, by the test log-loss, Brier score and calibration error.

On one random 60/40 split of each dataset (`_common.paper_split`: test rows without a
positive dropped, as in the paper), a fraction rho of each label's training entries is kept
by the paper's sampler (`glocal.protocol.sample_observed`), the rest are NaN. These models
give every test entry a probability:

* ``GLOCALCV()``, the recommended model (squared hinge), on 3 shuffled folds: its
  ``predict_proba``, each label's scores mapped by Platt scaling fitted on the search's
  out-of-fold scores;
* ``GLOCALCV(GLOCAL(loss="logistic"))``: the paper's model under the logistic loss, lam2 and
  ``normalize_rows`` chosen by its default grid on the same folds, and the same with a bias
  per label (``fit_intercept=True``): the refitted model's own probabilities
  (``best_estimator_.predict_proba``, the sigmoid of its scores) and, from the same search,
  ``predict_proba`` (its scores calibrated as ``GLOCALCV()``'s);
* per-label `sklearn.linear_model.LogisticRegression` (one model per label on its observed
  rows, with an intercept; C in {0.01, 0.1, 1, 10}, shared by the labels) tuned by
  ``GridSearchCV`` on the same folds with the same scorer
  (`glocal.metrics.observed_average_precision_scorer`);
* the prior: each label's observed training frequency, (positives + 1) / (entries + 2).

A label whose observed training entries hold one class only gets its prior in the
per-label model too (a logistic regression needs both classes).

Every test entry is observed (only training labels are hidden). Writes one CSV row per
(dataset, rho, model): the mean log-loss, Brier score and expected calibration error over the
test entries (`probability_measures`), the test Ap (`glocal.metrics.average_precision`), the
chosen parameters and the CPU seconds of the fit (its search included; the two rows of one
search share it). A (dataset, rho) already in the CSV is skipped, so an
interrupted run goes on where it stopped. One BLAS thread.

    GLOCAL_DATA=/path/to/data python benchmarks/bench_probabilities.py \\
        --datasets image enron --rhos 0.3 1 --out probabilities.csv
"""

import csv
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV

from glocal import GLOCAL, GLOCALCV
from glocal._base import MultiLabelMixin
from glocal.metrics import average_precision, observed_average_precision_scorer
from _common import append_cells, cells_parser, cpu_timed, observed_split

PAPER_DATASETS = ["arts", "business", "computers", "education", "entertainment", "health",
                  "enron", "image"]
LR_GRID = {"C": [0.01, 0.1, 1, 10]}
# The recommended model (None: GLOCALCV's default), the logistic loss's documented route, and
# the same with a bias per label (the paper's model has none, so a label's score is 0, a
# probability of 0.5, wherever the model knows nothing).
GLOCAL_MODELS = {"GLOCALCV()": None,
                 'GLOCALCV(GLOCAL(loss="logistic"))': GLOCAL(loss="logistic"),
                 'GLOCALCV(GLOCAL(loss="logistic", fit_intercept=True))':
                     GLOCAL(loss="logistic", fit_intercept=True)}
FIELDS = ["dataset", "rho", "model", "params", "log_loss", "brier", "ece", "ap", "fit_cpu_s"]
# Probabilities are clipped to [EPS, 1 - EPS] in the log-loss, as sklearn's log_loss does.
EPS = 1e-15
# The expected calibration error's bins: [0, 0.1), [0.1, 0.2), ..., [0.9, 1].
ECE_BINS = 10


def _prior(Y):
    """Each label's observed frequency, smoothed: (positives + 1) / (entries + 2)."""
    observed = ~np.isnan(Y)
    return (np.nansum(Y, axis=0) + 1) / (observed.sum(axis=0) + 2)


class LogisticBR(MultiLabelMixin, BaseEstimator):
    """One `LogisticRegression` per label on its observed rows (NaN in Y marks the others);
    a label observed in one class only keeps its prior (`_prior`)."""

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, Y):
        X = sp.csr_matrix(X, dtype=float) if sp.issparse(X) else np.asarray(X, dtype=float)
        Y = np.asarray(Y, dtype=float)
        prior = _prior(Y)
        self.coef_ = np.zeros((Y.shape[1], X.shape[1]))
        self.intercept_ = np.log(prior / (1 - prior))
        for j in range(Y.shape[1]):
            rows = np.flatnonzero(~np.isnan(Y[:, j]))
            if np.unique(Y[rows, j]).size == 2:
                model = LogisticRegression(C=self.C, max_iter=1000).fit(X[rows], Y[rows, j])
                self.coef_[j], self.intercept_[j] = model.coef_[0], model.intercept_[0]
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        return np.asarray(X @ self.coef_.T) + self.intercept_

    def predict_proba(self, X):
        return 1 / (1 + np.exp(-self.decision_function(X)))


def probability_measures(Y_test, P):
    """The mean log-loss, Brier score and expected calibration error of the probabilities
    ``P`` over the observed entries of ``Y_test`` (all labels pooled). The expected
    calibration error: the entries binned by their probability in `ECE_BINS` equal bins,
    the mean over the entries of |a bin's mean probability - its share of positives|."""
    observed = ~np.isnan(Y_test)
    y, p = Y_test[observed], np.clip(P[observed], EPS, 1 - EPS)
    log_loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    bins = np.minimum((p * ECE_BINS).astype(int), ECE_BINS - 1)
    count = np.bincount(bins, minlength=ECE_BINS)
    gap = np.abs(np.bincount(bins, p - y, minlength=ECE_BINS))  # count x |mean p - mean y|
    return {"log_loss": f"{log_loss:.4f}", "brier": f"{np.mean((p - y) ** 2):.4f}",
            "ece": f"{gap.sum() / count.sum():.4f}"}


def logistic_br(X, Y, folds):
    """`LogisticBR` with C of `LR_GRID` chosen by ``GridSearchCV`` on ``folds`` (scored by
    `glocal.metrics.observed_average_precision_scorer`), refitted on all rows; and C."""
    grid = GridSearchCV(LogisticBR(), LR_GRID, cv=folds, error_score="raise",
                        scoring=observed_average_precision_scorer, refit=False)
    C = grid.fit(X, Y).best_params_["C"]
    return LogisticBR(C=C).fit(X, Y), C


def _row(dataset, rho, model, params, Y_test, P, seconds):
    return {"dataset": dataset, "rho": rho, "model": model, "params": params,
            **probability_measures(Y_test, P),
            "ap": f"{average_precision(Y_test, P):.4f}", "fit_cpu_s": f"{seconds:.1f}"}


def cell(dataset, rho, seed, data_dir):
    """The rows of one (dataset, rho)."""
    X_train, X_test, Y_observed, Y_test, folds = observed_split(dataset, data_dir, seed, rho)
    Y_observed, Y_test = (np.asarray(Y.toarray() if sp.issparse(Y) else Y, dtype=float)
                          for Y in (Y_observed, Y_test))

    rows = []
    for name, model in GLOCAL_MODELS.items():
        search, seconds = cpu_timed(lambda: GLOCALCV(model, cv=folds, random_state=seed).fit(
            X_train, Y_observed))
        params = _params(search.best_params_)
        if model is not None:  # the logistic loss: its own probabilities, then calibrated
            rows.append(_row(dataset, rho, name, params, Y_test,
                             search.best_estimator_.predict_proba(X_test), seconds))
            name = f"{name}, calibrated"
        rows.append(_row(dataset, rho, name, params, Y_test, search.predict_proba(X_test),
                         seconds))

    (model, C), seconds = cpu_timed(lambda: logistic_br(X_train, Y_observed, folds))
    rows.append(_row(dataset, rho, "LogisticRegression per label", f"C={C:g}", Y_test,
                     model.predict_proba(X_test), seconds))
    prior = np.broadcast_to(_prior(Y_observed), Y_test.shape)
    rows.append(_row(dataset, rho, "prior", "", Y_test, prior, 0.0))
    return rows


def _params(params):
    return " ".join(f"{name}={value:g}" if isinstance(value, float) else f"{name}={value}"
                    for name, value in sorted(params.items()))


def _done(path):
    if not Path(path).exists() or Path(path).stat().st_size == 0:
        return set()
    with open(path, newline="") as file:
        return {(row["dataset"], float(row["rho"])) for row in csv.DictReader(file)}


def main(argv=None):
    args = cells_parser(__doc__.split("\n\n")[0], PAPER_DATASETS).parse_args(argv)
    done = _done(args.out)
    # rho outermost: a partial run covers every dataset at the first rho
    append_cells(args.out, FIELDS, (cell(dataset, rho, args.seed, args.data_dir)
                                    for rho in args.rhos for dataset in args.datasets
                                    if (dataset, rho) not in done))


if __name__ == "__main__":
    main()
