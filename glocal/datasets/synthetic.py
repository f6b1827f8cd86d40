"""A synthetic multi-label generator with planted global and local label correlations."""

import numpy as np
from sklearn.utils import Bunch, check_random_state


def make_glocal_data(n_samples=600, n_features=20, n_labels=12, n_groups=3, n_topics=4,
                     separation=3.0, noise=0.5, random_state=None):
    """Multi-label data whose label correlations differ from group to group.

    Samples come from ``n_groups`` Gaussian clusters in feature space. Every label's score is
    a linear function of ``n_topics`` latent topics of the features (global low-rank
    structure); within each group, labels are further tied in pairs, a different pairing in
    every group, so a label shares its partner's score there (local correlation). A label is
    positive when its score exceeds the label's own threshold, chosen so that every label has
    about 25% positives.

    Parameters
    ----------
    n_samples, n_features, n_labels, n_groups, n_topics : int
    separation : float
        Distance scale between the cluster centres (in units of the within-cluster spread).
    noise : float
        Standard deviation of the label-score noise, relative to the score spread.
    random_state : int, RandomState instance or None

    Returns
    -------
    Bunch
        ``X`` (n_samples, n_features), ``Y`` (n_samples, n_labels) in {0, 1}, ``groups``
        (n_samples,) the planted cluster of each sample, and ``pairs``
        (n_groups, n_labels) the partner of every label in every group.
    """
    for name, value in [("n_samples", n_samples), ("n_features", n_features),
                        ("n_labels", n_labels), ("n_groups", n_groups), ("n_topics", n_topics)]:
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if n_labels < 2:
        raise ValueError(f"n_labels must be at least 2 to pair labels, got {n_labels}")
    if n_groups > n_samples:
        raise ValueError(f"n_groups={n_groups} is larger than n_samples={n_samples}")
    if separation < 0 or noise < 0:
        raise ValueError("separation and noise must be non-negative")
    rng = check_random_state(random_state)

    groups = rng.permutation(np.arange(n_samples) % n_groups)
    centres = separation * rng.standard_normal((n_groups, n_features))
    X = centres[groups] + rng.standard_normal((n_samples, n_features))

    topics = X @ rng.standard_normal((n_features, n_topics)) / np.sqrt(n_features)
    loadings = rng.standard_normal((n_topics, n_labels))
    scores = topics @ loadings
    pairs = np.empty((n_groups, n_labels), dtype=int)
    for m in range(n_groups):
        pairs[m] = _random_pairing(n_labels, rng)
        rows = groups == m
        # Within group m a label and its partner share one score.
        scores[rows] = 0.5 * (scores[rows] + scores[rows][:, pairs[m]])
    scores += noise * scores.std() * rng.standard_normal(scores.shape)
    Y = (scores > np.quantile(scores, 0.75, axis=0)).astype(int)
    return Bunch(X=X, Y=Y, groups=groups, pairs=pairs)


def _random_pairing(n_labels, rng):
    """A random perfect matching of the labels (one label left alone if their number is odd)."""
    order = rng.permutation(n_labels)
    partner = np.arange(n_labels)
    for a, b in zip(order[0::2], order[1::2]):
        partner[a], partner[b] = b, a
    return partner
