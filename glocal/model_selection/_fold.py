"""One fold of the search: every setting fitted along the plan and scored on the held-out
rows."""

import time
import warnings

import numpy as np

from .._base import VANISHED_WARNING, scores_vanish
from .._utils.progress import iterations_text
from ..estimator import FitCache
from ..metrics import observed_two_way_average_precision
from ..thresholds import f1_thresholds
from ._plan import _path_model
from ._racing import N_PARTS, part_scores


def _criterion(scorer, model, X_test, Y_test, validation_scores, rows=None):
    """The score of a fitted setting on the validation rows ``rows`` (None: all):
    ``scorer`` None is `glocal.metrics.observed_two_way_average_precision`, on the scores
    already computed."""
    if rows is not None:
        X_test, Y_test, validation_scores = X_test[rows], Y_test[rows], validation_scores[rows]
    if scorer is None:
        return observed_two_way_average_precision(Y_test, validation_scores)
    return scorer(model, X_test, Y_test)


def _walk_fold(base, candidates, plan, X, Y, groups, train, test, scorer, path_tol,
               fold, n_folds, verbose, each_fit=None, alive=None, parts_seed=None,
               keep_models=False):
    """Fit the candidates of ``alive`` (None: all; see `_needed`) on one fold in the order of
    ``plan``; returns scores, times, initialisation rounds, iterations, every candidate's
    F1 thresholds of the labels (`f1_thresholds`) on the validation rows, whether its
    scores vanished, its scores on the parts of the validation rows that `part_scores`
    draws from ``parts_seed`` (None: not computed) and, with ``keep_models``, the fitted
    models by candidate, and its scores of the validation rows (float32, n_candidates x
    n_test x n_labels: they calibrate the probabilities). A candidate not fitted has NaN
    everywhere. ``scorer`` None is
    `glocal.metrics.observed_two_way_average_precision` of the validation scores;
    ``each_fit(step)`` is called after every fit, with its position in ``plan``.

    A fit whose scores vanish (`glocal._base.scores_vanish`) scores -inf, the worst: the
    ranking of scores zero to rounding is noise, and such noise won whole searches. It
    starts no other fit either (U V = 0 is a stationary point: a fit started there stays
    there); those start from GLOCAL's own initial point."""
    n = len(candidates)
    scores, times, n_init_iter, n_iter = (np.full(n, np.nan) for _ in range(4))
    vanished = np.zeros(n, dtype=bool)
    thresholds = np.full((n, Y.shape[1]), np.nan)
    parts = np.full((n, N_PARTS), np.nan)
    models = {}
    held_out = np.full((n, len(test), Y.shape[1]), np.nan, dtype=np.float32)
    X_train, Y_train, X_test, Y_test = X[train], Y[train], X[test], Y[test]
    cache = FitCache()  # k-means groups and feature moments of this fold, for every setting
    solutions = {}  # candidate -> its fitted model, for the fits that start from it
    sources = {source for _, source in plan}
    for step, (i, source) in enumerate(plan):
        if alive is not None and not alive[i]:
            continue
        tic = time.perf_counter()
        start = solutions.get(source)
        model = _path_model(base, candidates[i], path_tol, start is not None)
        with warnings.catch_warnings():  # said once for the search, by `fit`
            warnings.filterwarnings("ignore", VANISHED_WARNING)
            model.fit(X_train, Y_train, None if groups is None else groups[train],
                      init=start, cache=cache)
        vanished[i] = scores_vanish(model.U_, model.V_)
        if i in sources and not vanished[i]:
            solutions[i] = model
        times[i] = time.perf_counter() - tic
        validation_scores = model.decision_function(X_test)
        if vanished[i]:
            scores[i] = parts[i] = -np.inf
        else:
            scores[i] = _criterion(scorer, model, X_test, Y_test, validation_scores)
            if parts_seed is not None:
                parts[i] = part_scores(
                    lambda rows: _criterion(scorer, model, X_test, Y_test,
                                            validation_scores, rows),
                    len(test), parts_seed)
        if keep_models:
            models[i] = model
        thresholds[i] = f1_thresholds(Y_test, validation_scores)
        held_out[i] = validation_scores
        n_init_iter[i], n_iter[i] = model.n_init_iter_, model.n_iter_
        if each_fit is not None:
            each_fit(step)
        if verbose >= 2:
            print(f"[GLOCALCV] fold {fold + 1}/{n_folds} {candidates[i]}: score "
                  f"{scores[i]:.4f} ({times[i]:.2f} s, {iterations_text(model)})",
                  flush=True)
    return scores, times, n_init_iter, n_iter, thresholds, vanished, parts, models, held_out
