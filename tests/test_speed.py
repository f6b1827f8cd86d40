"""Properties behind the speed work: the cheaper paths compute the same numbers."""

import numpy as np

from glocal.manifolds import RealEuclidean, UnitRows
from glocal.solver import _Anderson


def test_inner_products_match_pymanopts():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4, 5))
    assert np.isclose(RealEuclidean(3, 4, 5).inner_product(None, a, b), np.sum(a * b))
    assert np.isclose(UnitRows(3, 4, 5).inner_product(None, a, b), np.sum(a * b))


def test_anderson_at_a_fixed_point_does_not_extrapolate():
    """Once the residual stops changing, there is nothing to mix (no singular solve)."""
    mixing = _Anderson(3)
    x = np.ones(4)
    for _ in range(4):
        assert mixing.step(x, x) is None


def test_kmeans_on_a_row_sample_above_max_rows():
    """Above ``max_rows`` the centers come from a sample; every row joins its nearest center,
    so well-separated clusters are found exactly, and the result is seeded."""
    from glocal.groups import kmeans_groups

    rng = np.random.default_rng(0)
    centers = 20.0 * np.eye(3)
    truth = rng.integers(3, size=3000)
    X = centers[truth] + rng.standard_normal((3000, 3))
    sampled = kmeans_groups(X, 3, random_state=0, max_rows=200)
    full = kmeans_groups(X, 3, random_state=0)
    # the same partition as the full k-means (up to the ids) and as the planted one
    assert len(set(zip(sampled, full))) == 3 and len(set(zip(sampled, truth))) == 3
    np.testing.assert_array_equal(sampled, kmeans_groups(X, 3, random_state=0, max_rows=200))
