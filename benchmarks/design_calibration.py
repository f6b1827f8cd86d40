"""How ``GLOCALCV().predict_proba`` was designed: which calibration of the out-of-fold scores.

On the design datasets (by default cal500, medical, genbase and birds), one random 60/40 split
each, a fraction rho of each label's training entries observed (`_common.observed_split`),
``GLOCALCV()`` is fitted on 3 shuffled folds of the training part; a scorer that computes the
search's own criterion (`glocal.metrics.observed_average_precision`) also keeps every fold
model's validation scores and its scores of the test rows. The chosen setting's validation
scores then calibrate each label's scores, fitted on the observed validation entries:

* Platt scaling (`glocal.model_selection._calibration.fit_platt`) on the folds' validation
  scores pooled, or on each fold's, the maps' slopes and intercepts averaged over the folds;
* isotonic regression (`sklearn.isotonic.IsotonicRegression`, probabilities kept within
  [1 / (N + 2), (N + 1) / (N + 2)] for a label of N observed entries), pooled, or on each
  fold with the fold maps' probabilities averaged;

each applied to the refitted model's test scores, and Platt per fold applied to each fold
model's own test scores, averaged (no refit: whether the refit's scale differs from the fold
models' matters). Against per-label logistic regression and the prior of
``bench_probabilities.py``. Writes one CSV row per (dataset, rho, method): log-loss, Brier
score and expected calibration error over the test entries.

    GLOCAL_DATA=/path/to/data python benchmarks/design_calibration.py --out calibration.csv
"""

from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.isotonic import IsotonicRegression

from glocal import GLOCALCV
from glocal.metrics import observed_average_precision
from glocal.model_selection._calibration import fit_platt, platt_proba
from _common import append_cells, cells_parser, observed_split
from bench_probabilities import _prior, logistic_br, probability_measures

DESIGN_DATASETS = ["cal500", "medical", "genbase", "birds"]
FIELDS = ["dataset", "rho", "method", "log_loss", "brier", "ece"]


def _isotonic(scores, Y):
    """Per label, an isotonic map of the observed entries' scores (the prior for a label
    observed in one class), as a function of new scores."""
    maps = []
    for j in range(Y.shape[1]):
        observed = ~np.isnan(Y[:, j])
        y, n = Y[observed, j], observed.sum()
        if np.unique(y).size < 2:
            maps.append((y.sum() + 1.0) / (n + 2.0))
            continue
        maps.append(IsotonicRegression(y_min=1 / (n + 2), y_max=(n + 1) / (n + 2),
                                       out_of_bounds="clip").fit(scores[observed, j], y))

    def apply(new):
        return np.column_stack([
            np.full(new.shape[0], m) if isinstance(m, float) else m.predict(new[:, j])
            for j, m in enumerate(maps)])
    return apply


def _fits(dataset, rho, seed, data_dir):
    """The fits of one cell: the chosen setting's validation labels and scores and its test
    scores, fold by fold, the refitted model's test scores, the test labels and the
    per-label logistic regression's test probabilities."""
    X_train, X_test, Y_observed, Y_test, folds = observed_split(dataset, data_dir, seed, rho)
    Y_observed, Y_test = (np.asarray(Y.toarray() if sp.issparse(Y) else Y, dtype=float)
                          for Y in (Y_observed, Y_test))
    kept = []  # (setting, validation labels, validation scores, test scores) of every fit

    def scorer(model, X_val, Y_val):
        scores = model.decision_function(X_val)
        setting = (model.lam2, model.normalize_rows)
        kept.append((setting, Y_val, scores, model.decision_function(X_test)))
        return observed_average_precision(Y_val, scores)

    search = GLOCALCV(cv=folds, random_state=seed, scoring=scorer).fit(X_train, Y_observed)
    best = (search.best_params_["lam2"], search.best_params_["normalize_rows"])
    runs = [run[1:] for run in kept if run[0] == best]  # the chosen setting, fold by fold
    fits = {"Y_test": Y_test, "refit_test": search.decision_function(X_test),
            "prior": _prior(Y_observed),
            "logistic": logistic_br(X_train, Y_observed, folds)[0].predict_proba(X_test)}
    for i, (Y_val, S_val, T) in enumerate(runs):
        fits.update({f"Y_val{i}": Y_val, f"S_val{i}": S_val, f"T{i}": T})
    return fits


def cell(dataset, rho, seed, data_dir, cache):
    """The rows of one (dataset, rho); its fits are kept in ``cache`` (a directory) when
    given, and read from there when already kept."""
    path = None if cache is None else Path(cache) / f"{dataset}-{rho:g}-{seed}.npz"
    if path is not None and path.exists():
        fits = dict(np.load(path))
    else:
        fits = _fits(dataset, rho, seed, data_dir)
        if path is not None:
            np.savez_compressed(path, **fits)
    Y_test, test_scores = fits["Y_test"], fits["refit_test"]
    runs = [(fits[f"Y_val{i}"], fits[f"S_val{i}"], fits[f"T{i}"])
            for i in range(sum(name.startswith("Y_val") for name in fits))]
    pooled_Y, pooled_S = (np.vstack([run[i] for run in runs]) for i in (0, 1))
    per_fold = [fit_platt(S, Y) for Y, S, _ in runs]
    slopes, intercepts = (np.mean([maps[i] for maps in per_fold], axis=0) for i in (0, 1))
    probabilities = {
        "Platt, pooled": platt_proba(test_scores, *fit_platt(pooled_S, pooled_Y)),
        "Platt, per fold (mean map)": platt_proba(test_scores, slopes, intercepts),
        "Platt, per fold on the fold models (mean probability)": np.mean(
            [platt_proba(T, *maps) for (_, _, T), maps in zip(runs, per_fold)], axis=0),
        "isotonic, pooled": _isotonic(pooled_S, pooled_Y)(test_scores),
        "isotonic, per fold (mean probability)": np.mean(
            [_isotonic(S, Y)(test_scores) for Y, S, _ in runs], axis=0),
        "LogisticRegression per label": fits["logistic"],
        "prior": np.broadcast_to(fits["prior"], Y_test.shape),
    }
    return [{"dataset": dataset, "rho": rho, "method": method,
             **probability_measures(Y_test, P)} for method, P in probabilities.items()]


def main(argv=None):
    parser = cells_parser(__doc__.split("\n\n")[0], DESIGN_DATASETS)
    parser.add_argument("--cache", help="directory keeping each cell's fits (reused)")
    args = parser.parse_args(argv)
    append_cells(args.out, FIELDS, (cell(dataset, rho, args.seed, args.data_dir, args.cache)
                                    for rho in args.rhos for dataset in args.datasets))


if __name__ == "__main__":
    main()
