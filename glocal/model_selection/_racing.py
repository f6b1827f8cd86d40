"""Racing over folds: after a fold, the settings whose mean validation score is behind the
best by more than the folds' own noise stop being fitted.

The noise is measured on the validation rows themselves, whatever the criterion: each fold
cuts its validation rows at random into `N_PARTS` parts, the same for every setting, and
scores every setting it fitted on each part (`part_scores`). The difference of two settings'
scores on a part is then a paired draw of their difference, and the variance of their
difference on the whole fold is the variance over the parts divided by `N_PARTS` (exact for
a mean over rows such as the average precision; batch means, as a bootstrap of the rows
would estimate it, at the cost of one call of the criterion on all the rows instead of one
per resample). Over the folds done, the standard error of a setting's mean difference to
the best is the square root of the sum of the folds' variances, over the number of folds.
"""

import warnings

import numpy as np

# Parts of a fold's validation rows: a standard error from 10 parts is within about a
# quarter of its limit, enough to tell the settings far behind from the close ones.
N_PARTS = 10

# The parts measure the noise of the validation rows, not how the fitted models vary from
# one fold's training rows to another's. With most label entries missing that variation
# dominates: racing after the first fold dropped settings that won the later folds (at 5 and
# 10 % observed, 15 of 80 design and Yahoo searches picked another setting than every
# setting on every fold would, 0.03 to 0.06 test Ap lower in three; after the second fold,
# 4 picks and at most 0.009). Below this observed fraction racing waits for two folds.
RACE_AFTER_ONE_FOLD_FROM = 0.2


def first_racing_fold(Y, n_folds):
    """How many folds every setting is fitted on before racing drops any: one, or two
    when fewer than `RACE_AFTER_ONE_FOLD_FROM` of the entries of ``Y`` are observed (not
    NaN); at most ``n_folds``."""
    observed = np.mean(~np.isnan(Y))
    return min(n_folds, 1 if observed >= RACE_AFTER_ONE_FOLD_FROM else 2)


def part_scores(score_rows, n_rows, random_state):
    """``score_rows(rows)`` on each of `N_PARTS` parts of ``n_rows`` validation rows shuffled
    by the seed ``random_state``: the same parts for every setting of a fold when given the
    same seed. NaN where the criterion is undefined on a part (it raises ValueError, e.g.
    no row with an observed positive)."""
    parts = np.array_split(np.random.default_rng(random_state).permutation(n_rows), N_PARTS)
    values = np.full(N_PARTS, np.nan)
    for p, rows in enumerate(parts):
        try:
            values[p] = score_rows(rows)
        except ValueError:
            pass
    return values


def contenders(scores, parts, alive, level):
    """The settings still worth fitting after the folds done.

    Parameters
    ----------
    scores : ndarray of shape (n_folds_done, n_candidates)
        Validation scores; NaN where a setting was not fitted, -inf where its scores
        vanished.
    parts : ndarray of shape (n_folds_done, n_candidates, N_PARTS)
        Every fitted setting's `part_scores` on each fold (NaN where not fitted).
    alive : ndarray of bool of shape (n_candidates,)
        The settings fitted on every fold done.
    level : float
        How many standard errors of the difference behind the best drop a setting.

    Returns
    -------
    ndarray of bool of shape (n_candidates,)
        ``alive`` without the settings behind the best by more than ``level`` standard
        errors, and without the vanished ones while another setting did not vanish.
    """
    keep = alive.copy()
    finite = alive & np.isfinite(scores).all(axis=0)
    if not finite.any():  # every setting vanished somewhere: nothing to compare
        return keep
    keep &= finite
    mean = scores.mean(axis=0)
    best = int(np.flatnonzero(finite)[np.argmax(mean[finite])])
    differences = parts[:, [best], :] - parts  # folds x candidates x parts
    with warnings.catch_warnings():  # a setting whose criterion failed on every part has
        warnings.simplefilter("ignore", RuntimeWarning)  # no error: it stays
        variance = np.nanvar(differences, axis=2, ddof=1) / N_PARTS
        error = np.sqrt(variance.sum(axis=0)) / len(scores)
        keep &= ~(mean[best] - mean > level * error)
    return keep
