"""A synthetic multi-label generator with planted global and local label correlations."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch, check_random_state


def make_glocal_data(n_samples=600, n_features=24, n_labels=12, n_groups=3, group_dim=8,
                     cluster_size=2, n_shared_clusters=2, positive_rate=0.3, separation=3.0,
                     noise=0.3, label_noise=0.0, random_state=None):
    """Multi-label data whose label correlations differ from group to group.

    The samples fall into ``n_groups`` groups (as balanced as possible). Group ``m`` has
    its own centre and its own ``group_dim``-dimensional subspace of the feature space;
    a sample of group ``m`` is its centre plus a standard normal point of that subspace,
    plus isotropic feature noise. When ``n_groups * group_dim <= n_features`` the group
    subspaces are mutually orthogonal, so a single linear map of the features (the model
    of GLOCAL) can act differently on every group.

    Labels are planted in clusters, separately in every group: in group ``m`` the labels
    are partitioned into clusters of ``cluster_size`` (or ``cluster_size + 1``) labels,
    and all labels of a cluster are copies of one binary "cluster label", positive when a
    linear score of the sample's subspace coordinates exceeds its within-group
    ``1 - positive_rate`` quantile. The scores of different clusters of a group are
    uncorrelated whenever ``group_dim`` is at least their number. The first
    ``n_shared_clusters`` clusters hold the same labels in every group (global
    correlations); the other labels are partitioned anew, at random, in every group
    (local correlations, which largely average out over the whole data). Within a group
    the label matrix thus has rank about ``n_labels / cluster_size`` while the complete
    label matrix has higher rank. Finally every label entry is flipped with probability
    ``label_noise``, so copies become near copies.

    Parameters
    ----------
    n_samples : int, default=600
        Number of samples.
    n_features : int, default=24
        Number of features.
    n_labels : int, default=12
        Number of labels.
    n_groups : int, default=3
        Number of groups of samples with their own label correlations.
    group_dim : int, default=8
        Dimension of each group's feature subspace; at most ``n_features``.
    cluster_size : int, default=2
        Number of labels per cluster (labels that are copies of each other within a group);
        ``n_labels // cluster_size`` clusters are formed in every group, so some clusters
        get one label more when ``cluster_size`` does not divide ``n_labels``.
    n_shared_clusters : int, default=2
        Number of clusters made of the same labels in every group; at most
        ``n_labels // cluster_size``.
    positive_rate : float in (0, 1), default=0.3
        Fraction of positive entries of every label within every group (before label noise).
    separation : float, default=3.0
        Norm of every group centre (centres point in random directions, so two of them are
        about ``separation * sqrt(2)`` apart; the within-group standard deviation along
        any direction is about 1).
    noise : float, default=0.3
        Standard deviation of the isotropic Gaussian noise added to every feature.
    label_noise : float in [0, 0.5), default=0.0
        Probability that a label entry is flipped.
    random_state : int, RandomState instance or None, default=None
        Seed of all random draws.

    Returns
    -------
    data : Bunch
        Dictionary-like object with

        X : ndarray of shape (n_samples, n_features)
            Features.
        Y : ndarray of shape (n_samples, n_labels)
            Complete label matrix in {0, 1}.
        groups : ndarray of shape (n_samples,)
            Planted group of every sample, in ``[0, n_groups)``.
        label_clusters : ndarray of shape (n_groups, n_labels)
            Cluster of every label in every group; clusters ``0 ..
            n_shared_clusters - 1`` hold the same labels in every group.
        local_correlations : ndarray of shape (n_groups, n_labels, n_labels)
            Correlation, within each group, of the planted scores behind the labels: 1 for
            two labels of the same cluster, 0 (when ``group_dim`` is at least the number of
            clusters) for labels of different clusters.
        global_correlation : ndarray of shape (n_labels, n_labels)
            ``sum_m (n_m / n) local_correlations[m]``, the global label correlation as
            related to the local ones by Lemma 1 of the GLOCAL paper.
        group_bases : ndarray of shape (n_groups, n_features, group_dim)
            Orthonormal basis of every group's feature subspace.

    Notes
    -----
    GLOCAL's linear model can represent the planted structure exactly when the group
    subspaces are mutually orthogonal and ``noise`` and ``label_noise`` are 0. Its local
    manifold regularizer then helps to recover missing labels when the labels come in
    pairs (``cluster_size=2``, no shared clusters), few labels are observed and the group
    subspaces are large relative to the group sizes, e.g. ``n_samples=300,
    n_features=96, n_labels=8, group_dim=32, n_shared_clusters=0, noise=0`` with 30% of
    the labels observed (see ``tests/test_synthetic.py``). Feature noise couples the
    groups through the shared linear map and removes most of that benefit; without
    planted clusters (``cluster_size=1``) the regularizer hurts.

    Examples
    --------
    >>> from glocal.datasets import make_glocal_data
    >>> data = make_glocal_data(n_samples=300, random_state=0)
    >>> data.X.shape, data.Y.shape
    ((300, 24), (300, 12))
    """
    _check_int("n_samples", n_samples, 1)
    _check_int("n_features", n_features, 1)
    _check_int("n_labels", n_labels, 2)
    _check_int("n_groups", n_groups, 1)
    _check_int("group_dim", group_dim, 1)
    _check_int("cluster_size", cluster_size, 1)
    _check_int("n_shared_clusters", n_shared_clusters, 0)
    if group_dim > n_features:
        raise ValueError(f"group_dim={group_dim} is larger than n_features={n_features}")
    if cluster_size > n_labels:
        raise ValueError(f"cluster_size={cluster_size} is larger than n_labels={n_labels}")
    n_clusters = n_labels // cluster_size
    if n_shared_clusters > n_clusters:
        raise ValueError(f"n_shared_clusters={n_shared_clusters} is larger than the number "
                         f"of clusters, n_labels // cluster_size = {n_clusters}")
    _check_real("positive_rate", positive_rate, 0.0, 1.0, closed=False)
    _check_real("separation", separation, 0.0, np.inf)
    _check_real("noise", noise, 0.0, np.inf)
    _check_real("label_noise", label_noise, 0.0, 0.5, closed="left")
    # Every group needs at least one positive and one negative of every cluster label.
    min_group_size = n_samples // n_groups
    if min(np.ceil(positive_rate * min_group_size),
           min_group_size - np.ceil(positive_rate * min_group_size)) < 1:
        raise ValueError(f"n_samples={n_samples} is too small for n_groups={n_groups} and "
                         f"positive_rate={positive_rate}: some group would have a label "
                         "without positive or without negative samples")
    rng = check_random_state(random_state)

    groups = rng.permutation(np.arange(n_samples) % n_groups)
    bases = _group_bases(n_features, n_groups, group_dim, rng)
    centres = rng.standard_normal((n_groups, n_features))
    centres *= separation / np.linalg.norm(centres, axis=1, keepdims=True)

    X = np.empty((n_samples, n_features))
    Y = np.empty((n_samples, n_labels), dtype=int)
    label_clusters = np.empty((n_groups, n_labels), dtype=int)
    local_correlations = np.empty((n_groups, n_labels, n_labels))
    # Labels of the shared clusters (all labels when every cluster is shared) and the others.
    order = rng.permutation(n_labels)
    n_shared_labels = (n_labels if n_shared_clusters == n_clusters
                       else n_shared_clusters * cluster_size)
    shared, local = order[:n_shared_labels], order[n_shared_labels:]
    shared_clusters = _partition(n_shared_labels, n_shared_clusters, rng)
    for m in range(n_groups):
        rows = np.flatnonzero(groups == m)
        coords = rng.standard_normal((rows.size, group_dim))
        X[rows] = centres[m] + coords @ bases[m].T

        # Cluster scores: linear in the subspace coordinates, uncorrelated when possible.
        loadings = rng.standard_normal((group_dim, n_clusters))
        if group_dim >= n_clusters:
            loadings = np.linalg.qr(loadings)[0]
        loadings /= np.linalg.norm(loadings, axis=0)
        scores = coords @ loadings
        # Exactly ceil(positive_rate * n_m) positives per cluster label in this group.
        n_pos = int(np.ceil(positive_rate * rows.size))
        ranks = np.argsort(np.argsort(-scores, axis=0), axis=0)
        cluster_labels = (ranks < n_pos).astype(int)

        clusters = np.empty(n_labels, dtype=int)
        clusters[shared] = shared_clusters
        clusters[local] = n_shared_clusters + _partition(
            local.size, n_clusters - n_shared_clusters, rng)
        label_clusters[m] = clusters
        Y[rows] = cluster_labels[:, clusters]
        corr = loadings.T @ loadings
        local_correlations[m] = corr[np.ix_(clusters, clusters)]

    X += noise * rng.standard_normal(X.shape)
    flips = rng.random_sample(Y.shape) < label_noise
    Y[flips] = 1 - Y[flips]
    fractions = np.bincount(groups, minlength=n_groups) / n_samples
    return Bunch(X=X, Y=Y, groups=groups, label_clusters=label_clusters,
                 local_correlations=local_correlations,
                 global_correlation=np.tensordot(fractions, local_correlations, axes=1),
                 group_bases=bases)


def _group_bases(n_features, n_groups, group_dim, rng):
    """Orthonormal bases of the group subspaces, mutually orthogonal when they fit."""
    if n_groups * group_dim <= n_features:
        Q = np.linalg.qr(rng.standard_normal((n_features, n_features)))[0]
        return np.stack([Q[:, m * group_dim:(m + 1) * group_dim] for m in range(n_groups)])
    return np.stack([np.linalg.qr(rng.standard_normal((n_features, group_dim)))[0]
                     for _ in range(n_groups)])


def _partition(n_items, n_clusters, rng):
    """Cluster id in ``[0, n_clusters)`` of each of ``n_items`` items: a random partition
    into near-equal clusters (sizes differ by at most one)."""
    if n_items == 0:
        return np.empty(0, dtype=int)
    return rng.permutation(np.arange(n_items) % n_clusters)


def _check_int(name, value, low):
    if isinstance(value, bool) or not isinstance(value, Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def _check_real(name, value, low, high, closed="both"):
    """Check low <= value <= high (the ends included as ``closed`` says)."""
    if isinstance(value, bool) or not isinstance(value, Real) or np.isnan(value):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    low_ok = value >= low if closed in ("both", "left") else value > low
    high_ok = value <= high if closed in ("both", "right") else value < high
    if not (low_ok and high_ok):
        left = "[" if closed in ("both", "left") else "("
        right = "]" if closed in ("both", "right") else ")"
        raise ValueError(f"{name} must be in {left}{low}, {high}{right}, got {value!r}")
