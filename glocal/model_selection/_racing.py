"""Racing over folds: after a fold, the settings whose mean validation score is behind the
best by more than the folds' own noise stop being fitted.

The noise is measured on the validation rows themselves, whatever the criterion: each fold
scores every setting it fitted on the same `N_RESAMPLES` bootstrap resamples of its
validation rows (`resampled_scores`), so that the difference of two settings' scores on a
resample is a paired draw of their difference on that fold. Over the folds done, the
standard error of a setting's mean difference to the best is the square root of the sum of
the folds' bootstrap variances of the difference, over the number of folds.
"""

import warnings

import numpy as np

# Resamples of a fold's validation rows: the criterion is called this many times per setting
# and fold (a standard error from 30 draws is within about 13 % of its limit).
N_RESAMPLES = 30


def resampled_scores(score_rows, n_rows, random_state):
    """``score_rows(rows)`` on `N_RESAMPLES` bootstrap resamples of ``n_rows`` validation
    rows, drawn from the seed ``random_state``: the same resamples for every setting of a
    fold when given the same seed. NaN where the criterion is undefined on a resample (it
    raises ValueError, e.g. no row with an observed positive)."""
    rng = np.random.default_rng(random_state)
    values = np.empty(N_RESAMPLES)
    for b in range(N_RESAMPLES):
        try:
            values[b] = score_rows(rng.integers(0, n_rows, n_rows))
        except ValueError:
            values[b] = np.nan
    return values


def contenders(scores, resampled, alive, level):
    """The settings still worth fitting after the folds done.

    Parameters
    ----------
    scores : ndarray of shape (n_folds_done, n_candidates)
        Validation scores; NaN where a setting was not fitted, -inf where its scores
        vanished.
    resampled : ndarray of shape (n_folds_done, n_candidates, N_RESAMPLES)
        Every fitted setting's `resampled_scores` on each fold (NaN where not fitted).
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
    differences = resampled[:, [best], :] - resampled  # folds x candidates x resamples
    with warnings.catch_warnings():  # a setting whose criterion failed on every resample
        warnings.simplefilter("ignore", RuntimeWarning)  # has no error: it stays
        error = np.sqrt(np.nanvar(differences, axis=2, ddof=1).sum(axis=0)) / len(scores)
        keep &= ~(mean[best] - mean > level * error)
    return keep
