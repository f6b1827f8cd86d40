"""glocal.groups: k-means groups of the samples."""

import warnings

import numpy as np

from glocal.groups import kmeans_groups


def test_kmeans_on_a_row_sample_above_max_rows():
    """Above ``max_rows`` the centers come from a sample; every row joins its nearest center,
    so well-separated clusters are found exactly, and the result is seeded."""
    rng = np.random.default_rng(0)
    centers = 20.0 * np.eye(3)
    truth = rng.integers(3, size=3000)
    X = centers[truth] + rng.standard_normal((3000, 3))
    sampled = kmeans_groups(X, 3, random_state=0, max_rows=200)
    full = kmeans_groups(X, 3, random_state=0)
    # the same partition as the full k-means (up to the ids) and as the planted one
    assert len(set(zip(sampled, full))) == 3 and len(set(zip(sampled, truth))) == 3
    np.testing.assert_array_equal(sampled, kmeans_groups(X, 3, random_state=0, max_rows=200))


def test_too_few_distinct_rows_is_said_once_in_glocals_words():
    """scikit-learn's own ConvergenceWarning about duplicate points is not repeated."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        groups = kmeans_groups(np.ones((30, 3)), 4, random_state=0)
    assert np.all(groups == 0)
    assert [str(w.message) for w in caught] == [
        "k-means found only 1 non-empty groups of the 4 asked for (X has too few distinct "
        "rows)"]
