"""The paper's experimental protocol: which labels are observed."""

import numpy as np
from sklearn.utils import check_random_state


def sample_observed(Y, observed_fraction, random_state=None):
    """Hide labels as the authors' code does, returning Y with NaN for the missing entries.

    For every label, ceil(rho * #positives) of its positive entries and ceil(rho * #negatives)
    of its negative entries stay observed, chosen at random; the others become NaN.

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        Complete {0, 1} label matrix.
    observed_fraction : float in (0, 1]
        rho, the fraction of each label's positives (and of its negatives) kept.
    random_state : int, RandomState instance or None

    Returns
    -------
    ndarray of shape (n_samples, n_labels), float
    """
    Y = np.asarray(Y, dtype=float)
    if Y.ndim != 2 or not np.isin(Y, (0.0, 1.0)).all():
        raise ValueError("Y must be a complete 2-D {0, 1} label matrix")
    if not 0.0 < observed_fraction <= 1.0:
        raise ValueError(f"observed_fraction must be in (0, 1], got {observed_fraction}")
    rng = check_random_state(random_state)
    # A random priority per entry: within a label and class, the entries with the smallest
    # priorities are the ones kept.
    priority = rng.random_sample(Y.shape)
    out = np.full(Y.shape, np.nan)
    for value in (0.0, 1.0):
        is_value = Y == value
        keep = np.ceil(observed_fraction * is_value.sum(axis=0)).astype(int)
        rank = np.argsort(np.argsort(np.where(is_value, priority, np.inf), axis=0), axis=0)
        chosen = is_value & (rank < keep[None, :])
        out[chosen] = value
    return out
