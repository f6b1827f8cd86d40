"""The one tuning function of the experiments, for GLOCAL and any other estimator."""

from sklearn.model_selection import GridSearchCV, KFold

from ..estimator import GLOCAL
from ..metrics import observed_average_precision_scorer
from ._search import GLOCALCV


def select_hyperparameters(estimator, param_grid, X, Y, cv=5, n_jobs=None, random_state=None,
                           paths=True):
    """The best parameters of ``param_grid`` by k-fold cross-validation, not refitted.

    Shuffled `KFold` folds seeded by ``random_state``, every fold scored by
    `glocal.metrics.observed_average_precision_scorer` (the paper's Ap on observed labels
    only, so missing labels neither reward nor penalize a ranking; `GLOCALCV`'s own default,
    which also ranks each label's rows, is not used here: BR's searches did not collapse
    as GLOCAL's did with most labels missing, and tuning BR's C by it moved BR's test Ap
    both ways, as the missing-labels study of the documentation measures). GLOCAL,
    GLObal and loCAL are searched by `GLOCALCV` without racing (every setting on every fold),
    other estimators by `sklearn.model_selection.GridSearchCV`.

    Parameters
    ----------
    estimator : multi-label estimator
        Unfitted; its other parameters stay as they are.
    param_grid : dict or list of dict
        As for ``GridSearchCV``, e.g. `glocal.protocol.GLOCAL_GRID` or
        `glocal.protocol.BR_GRID`.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Y : array-like of shape (n_samples, n_labels)
        {0, 1} labels, NaN for the missing ones.
    cv : int, default=5
        Number of folds.
    n_jobs : int or None, default=None
        Parallel fits (folds for `GLOCALCV`).
    random_state : int, RandomState instance or None, default=None
        Shuffles the rows into folds.
    paths : bool, default=True
        For the GLOCAL family: walk `GLOCALCV`'s warm-started lam2 paths at its
        ``path_tol``; False fits every setting from scratch at the estimator's own ``tol``,
        which gives ``GridSearchCV``'s scores.

    Returns
    -------
    best_params : dict
        The grid point of highest mean validation score (the first one on ties).
    """
    folds = KFold(n_splits=cv, shuffle=True, random_state=random_state)
    if isinstance(estimator, GLOCAL):
        search = GLOCALCV(estimator, param_grid, cv=folds, refit=False, n_jobs=n_jobs,
                          scoring=observed_average_precision_scorer, racing=None)
        if not paths:
            search.set_params(path_param=None, path_tol=None)
    else:
        search = GridSearchCV(estimator, param_grid, scoring=observed_average_precision_scorer,
                              cv=folds, n_jobs=n_jobs, refit=False, error_score="raise")
    return search.fit(X, Y).best_params_
