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
