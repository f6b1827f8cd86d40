"""Label probabilities from scores: per-label Platt scaling, fitted on held-out scores.

Each label j gets a map p = 1 / (1 + exp(-(a_j s + b_j))) of its score s. `fit_platt` fits
(a_j, b_j) on the observed entries of held-out rows, every label at once; `platt_proba`
applies the maps.
"""

import numpy as np

# Newton's method on each label's two parameters stops when every label's gradient is below
# this, relative to its observed entries, or after MAX_NEWTON_STEPS.
GRADIENT_TOL = 1e-8
MAX_NEWTON_STEPS = 100
# Added to the diagonal of each 2 x 2 Hessian (as Lin, Lin & Weng's note on Platt's method
# does): a label whose held-out scores are all equal has a singular one.
HESSIAN_RIDGE = 1e-12
# Armijo's sufficient decrease, and the most halvings of a Newton step.
ARMIJO = 1e-4
MAX_HALVINGS = 40
# The least probability given, and 1 minus the largest: float64's machine epsilon.
PROBA_EPS = float(np.finfo(np.float64).eps)


def platt_targets(Y):
    """Platt's targets of the observed entries: (N+ + 1) / (N+ + 2) for a positive and
    1 / (N- + 2) for a negative, with N+ and N- the label's observed positives and
    negatives; 0 at a missing entry (NaN in ``Y``).

    Parameters
    ----------
    Y : ndarray of shape (n_samples, n_labels)
        1 positive, 0 negative, NaN missing.

    Returns
    -------
    targets : ndarray of shape (n_samples, n_labels)
    observed : ndarray of bool of shape (n_samples, n_labels)
    """
    observed = ~np.isnan(Y)
    positive = observed & (Y == 1)
    n_pos = positive.sum(axis=0)
    n_neg = observed.sum(axis=0) - n_pos
    targets = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    return np.where(observed, targets, 0.0), observed


def _sigmoid(z):
    """1 / (1 + exp(-z)), without overflow."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def _platt_loss(slopes, intercepts, scores, targets, observed):
    """Each label's cross-entropy of its targets under p = sigmoid(a s + b)."""
    z = scores * slopes + intercepts
    return np.sum(np.where(observed, np.logaddexp(0.0, z) - targets * z, 0.0), axis=0)


def _platt_derivatives(slopes, intercepts, scores, targets, observed):
    """The gradient (g_a, g_b) and Hessian (h_aa, h_ab, h_bb) of every label's
    `_platt_loss` in its slope a and intercept b: with r = p - t and w = p (1 - p) on the
    observed entries, g = (sum r s, sum r) and H = [[sum w s^2, sum w s], [sum w s, sum w]]."""
    p = _sigmoid(scores * slopes + intercepts)
    residual = np.where(observed, p - targets, 0.0)
    weight = np.where(observed, p * (1.0 - p), 0.0)
    return (np.sum(residual * scores, axis=0), residual.sum(axis=0),
            np.sum(weight * scores ** 2, axis=0), np.sum(weight * scores, axis=0),
            weight.sum(axis=0))


def fit_platt(scores, Y):
    """Per-label Platt scaling: the slope and intercept of each label's logistic map.

    For every label j, (a_j, b_j) minimize the cross-entropy

        sum_{i: Y_ij observed} -[t_ij log p_ij + (1 - t_ij) log(1 - p_ij)],
        p_ij = 1 / (1 + exp(-(a_j s_ij + b_j))),

    of Platt's smoothed targets t_ij (`platt_targets`) over the label's observed entries,
    subject to a_j >= 0: a higher score never gives a lower probability. Missing entries
    (NaN) are skipped. The targets keep the minimizer finite even when the scores separate
    the classes. Newton's method on all labels at once, with a backtracking line search,
    from a_j = 0 and b_j = logit((N+ + 1) / (N + 2)), where N+ of the N observed entries
    are positive. A label whose unconstrained minimizer has a_j < 0 (its held-out scores
    rank its entries backwards) gets the constrained one, on the boundary (the problem is
    convex): a_j = 0 and the probability of every row the mean of its targets.

    A label never positive (or never negative) among its observed entries has targets all
    equal, and stays at that starting point: the probability (N+ + 1) / (N + 2) for every
    row (1 / (N + 2) for a label never positive; 1/2 for a label with no observed entry).

    Parameters
    ----------
    scores : array-like of shape (n_samples, n_labels)
        Scores of rows the model did not see in its fit (e.g. a cross-validation's
        validation rows).
    Y : array-like of shape (n_samples, n_labels)
        Their labels: 1 positive, 0 negative, NaN missing.

    Returns
    -------
    slopes : ndarray of shape (n_labels,)
    intercepts : ndarray of shape (n_labels,)
    """
    scores = np.asarray(scores, dtype=float)
    Y = np.asarray(Y, dtype=float)
    if scores.shape != Y.shape or scores.ndim != 2:
        raise ValueError(f"scores and Y must be 2-D of the same shape, got {scores.shape} "
                         f"and {Y.shape}")
    targets, observed = platt_targets(Y)
    n_observed = observed.sum(axis=0)
    scores = np.where(observed, scores, 0.0)  # a missing entry's score is never read
    prior = (np.sum(observed & (Y == 1), axis=0) + 1.0) / (n_observed + 2.0)
    slopes = np.zeros(Y.shape[1])
    intercepts = np.log(prior / (1.0 - prior))
    loss = _platt_loss(slopes, intercepts, scores, targets, observed)
    # The labels still moving, each its own 2-parameter problem: every pass reads only
    # their columns (with many labels, most converge in a few steps).
    moving = np.arange(Y.shape[1])
    for _ in range(MAX_NEWTON_STEPS):
        S, T, M = scores[:, moving], targets[:, moving], observed[:, moving]
        a, b = slopes[moving], intercepts[moving]
        g_a, g_b, h_aa, h_ab, h_bb = _platt_derivatives(a, b, S, T, M)
        h_aa, h_bb = h_aa + HESSIAN_RIDGE, h_bb + HESSIAN_RIDGE
        det = h_aa * h_bb - h_ab ** 2
        d_a = -(h_bb * g_a - h_ab * g_b) / det  # the Newton step, 2 x 2 per label
        d_b = -(h_aa * g_b - h_ab * g_a) / det
        slope_of_step = g_a * d_a + g_b * d_b  # negative: the Hessian is positive definite
        # A label stops at a small gradient, or when its step cannot lower its loss.
        active = ((np.hypot(g_a, g_b) > GRADIENT_TOL * np.maximum(n_observed[moving], 1))
                  & (slope_of_step < 0))
        moving, a, b, d_a, d_b, slope_of_step = (
            values[active] for values in (moving, a, b, d_a, d_b, slope_of_step))
        S, T, M = S[:, active], T[:, active], M[:, active]
        step = np.ones(len(moving))
        pending = np.ones(len(moving), dtype=bool)
        for _ in range(MAX_HALVINGS):
            if not pending.any():
                break
            rows = np.flatnonzero(pending)
            trial = _platt_loss(a[rows] + step[rows] * d_a[rows],
                                b[rows] + step[rows] * d_b[rows],
                                S[:, rows], T[:, rows], M[:, rows])
            accepted = trial <= (loss[moving[rows]]
                                 + ARMIJO * step[rows] * slope_of_step[rows])
            done = rows[accepted]
            slopes[moving[done]] = a[done] + step[done] * d_a[done]
            intercepts[moving[done]] = b[done] + step[done] * d_b[done]
            loss[moving[done]] = trial[accepted]
            pending[done] = False
            step[rows[~accepted]] /= 2.0
        moving = moving[~pending]  # a label whose line search failed stays where it is
        if not len(moving):
            break
    backwards = slopes < 0  # labels with observed entries of both classes only
    mean_target = targets[:, backwards].sum(axis=0) / n_observed[backwards]
    slopes[backwards] = 0.0
    intercepts[backwards] = np.log(mean_target / (1.0 - mean_target))
    return slopes, intercepts


def platt_proba(scores, slopes, intercepts):
    """Each label's probabilities from its scores, 1 / (1 + exp(-(a_j s + b_j))).

    Parameters
    ----------
    scores : array-like of shape (n_samples, n_labels)
    slopes, intercepts : array-like of shape (n_labels,)
        From `fit_platt`.

    Returns
    -------
    proba : ndarray of shape (n_samples, n_labels)
        In (0, 1): clipped to [`PROBA_EPS`, 1 - `PROBA_EPS`], where a log-odds beyond about
        36 would round to 0 or 1.
    """
    z = np.asarray(scores, dtype=float) * slopes + intercepts
    return np.clip(_sigmoid(z), PROBA_EPS, 1.0 - PROBA_EPS)
