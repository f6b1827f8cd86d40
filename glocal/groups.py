"""The local groups of GLOCAL: k-means on the features, or a partition the user gives."""

import warnings

import numpy as np
from sklearn.cluster import KMeans

__all__ = ["kmeans_groups", "group_index"]


# Rows of the largest sets in the paper (delicious: 16,105) are far below this.
KMEANS_MAX_ROWS = 20_000


def kmeans_groups(X, n_groups, random_state=None, max_rows=KMEANS_MAX_ROWS):
    """Partition the rows of X into ``n_groups`` groups by k-means (k-means++, one run).

    With more than ``max_rows`` rows, the centers are fitted on ``max_rows`` rows drawn
    uniformly without replacement (seeded by ``random_state``) and every row joins its
    nearest center: the clustering's cost stays bounded, and scikit-learn's centered copy
    of X is made of the sample only. Returns group ids in ``[0, n_groups_found)``; k-means
    can leave a cluster empty only when X has fewer distinct rows than ``n_groups``, and
    those empty ids are dropped.
    """
    if n_groups == 1:
        return np.zeros(X.shape[0], dtype=np.intp)
    kmeans = KMeans(n_clusters=n_groups, n_init=1, random_state=random_state)
    with warnings.catch_warnings():
        # Too few distinct rows: said below, in terms of groups.
        warnings.filterwarnings("ignore", message="Number of distinct clusters")
        if X.shape[0] <= max_rows:
            labels = kmeans.fit_predict(X)
        else:
            rng = np.random.default_rng(random_state)
            sample = np.sort(rng.choice(X.shape[0], size=max_rows, replace=False))
            labels = kmeans.fit(X[sample]).predict(X)
    groups = compact_group_ids(labels)
    if groups.max() + 1 < n_groups:
        warnings.warn(f"k-means found only {groups.max() + 1} non-empty groups of the "
                      f"{n_groups} asked for (X has too few distinct rows)", UserWarning)
    return groups


def compact_group_ids(groups):
    """Map arbitrary group labels to ids 0, 1, ..., g - 1 (in sorted label order)."""
    return np.unique(groups, return_inverse=True)[1].astype(np.intp).ravel()


def group_index(groups, n_groups=0):
    """The sample indices of every group, for ids in ``[0, g)`` with g at least ``n_groups``
    (a group without samples gets an empty array)."""
    order = np.argsort(groups, kind="stable")
    bounds = np.cumsum(np.bincount(groups, minlength=n_groups))[:-1]
    return np.split(order, bounds)
