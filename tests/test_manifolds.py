"""glocal.manifolds: unit-norm rows (the geometry of the Z block, a g x l x k array) and the
Euclidean blocks."""

import numpy as np
import pytest

from glocal.solver.correlations import laplacians as lap
from glocal.groups import group_index
from glocal.manifolds import RealEuclidean, UnitRows, normalize_rows

SHAPE = (3, 6, 4)  # g, l, k


@pytest.fixture
def manifold():
    return UnitRows(*SHAPE)


@pytest.fixture
def rng():
    return np.random.default_rng(11)


def _point(rng, shape=SHAPE):
    return normalize_rows(rng.standard_normal(shape))


def _row_norms(x):
    return np.linalg.norm(x, axis=-1)


def test_dimension_and_shape(manifold):
    g, l, k = SHAPE
    assert manifold.dim == g * l * (k - 1)
    assert manifold.zero_vector(None).shape == SHAPE
    with pytest.raises(ValueError):
        UnitRows(3, 0, 4)


@pytest.mark.parametrize("scale", [1e-6, 0.3, 5.0])
def test_retraction_keeps_unit_rows(manifold, rng, scale):
    x = _point(rng)
    v = manifold.projection(x, scale * rng.standard_normal(SHAPE))
    y = manifold.retraction(x, v)
    np.testing.assert_allclose(_row_norms(y), 1.0, rtol=0, atol=1e-12)
    assert y.shape == SHAPE


def test_retraction_of_zero_is_identity_and_first_order(manifold, rng):
    x = _point(rng)
    np.testing.assert_allclose(manifold.retraction(x, manifold.zero_vector(x)), x, atol=1e-15)
    v = manifold.projection(x, rng.standard_normal(SHAPE))
    t = 1e-6
    velocity = (manifold.retraction(x, t * v) - manifold.retraction(x, -t * v)) / (2 * t)
    np.testing.assert_allclose(velocity, v, atol=1e-8)


def test_projection_is_idempotent_and_tangent(manifold, rng):
    x = _point(rng)
    u = rng.standard_normal(SHAPE)
    p = manifold.projection(x, u)
    np.testing.assert_allclose(manifold.projection(x, p), p, atol=1e-14)
    np.testing.assert_allclose(np.sum(p * x, axis=-1), 0.0, atol=1e-14)
    # Orthogonal projection: the removed part is normal (parallel to each row of x).
    residual = u - p
    assert abs(manifold.inner_product(x, residual, p)) < 1e-12
    np.testing.assert_allclose(residual, x * np.sum(u * x, axis=-1, keepdims=True), atol=1e-14)


def test_random_point_and_tangent_vector(manifold):
    np.random.seed(0)  # pymanopt's convention: the global numpy generator
    x = manifold.random_point()
    np.testing.assert_allclose(_row_norms(x), 1.0, atol=1e-12)
    v = manifold.random_tangent_vector(x)
    np.testing.assert_allclose(np.sum(v * x, axis=-1), 0.0, atol=1e-12)
    assert manifold.norm(x, v) == pytest.approx(1.0)


def test_exp_log_and_dist(manifold, rng):
    x = _point(rng)
    v = manifold.projection(x, 0.4 * rng.standard_normal(SHAPE))
    y = manifold.exp(x, v)
    np.testing.assert_allclose(_row_norms(y), 1.0, atol=1e-12)
    # Each row moves along a great circle by the length of its tangent row.
    np.testing.assert_allclose(manifold.log(x, y), v, atol=1e-9)
    assert manifold.dist(x, y) == pytest.approx(np.linalg.norm(v), rel=1e-9)
    assert manifold.dist(x, x) == pytest.approx(0.0, abs=1e-6)
    moved = manifold.transport(x, y, v)
    np.testing.assert_allclose(np.sum(moved * y, axis=-1), 0.0, atol=1e-12)


def _z_problem(rng):
    """The Z block of a random GLOCAL problem: cost, Euclidean gradient and Hessian."""
    g, l, k = SHAPE
    U = rng.standard_normal((l, k))
    P = rng.standard_normal((30, k))
    index = group_index(np.arange(30) % g)
    grams = np.stack([P[idx].T @ P[idx] for idx in index])
    B = lap.label_side_weights(grams, np.array([len(idx) for idx in index]) / 30, 0.5, 0.8)
    return (lambda Z: lap.z_cost_grad(Z, U, B)[0], lambda Z: lap.z_cost_grad(Z, U, B)[1],
            lambda D: lap.z_hessp(D, U, B))


def _taylor_slope(manifold, rng, riemannian_hessian):
    """Slope of log |f(R(tv)) - f - t <g, v> - t^2/2 <H v, v>| against log t."""
    cost, egrad, ehessp = _z_problem(rng)
    x = _point(rng)
    v = manifold.projection(x, rng.standard_normal(SHAPE))
    v /= manifold.norm(x, v)
    rgrad = manifold.projection(x, egrad(x))
    hess_v = riemannian_hessian(x, egrad(x), ehessp(v), v)
    f0, slope, curvature = cost(x), manifold.inner_product(x, rgrad, v), \
        manifold.inner_product(x, hess_v, v)
    ts = np.logspace(-3, -1, 9)
    errors = np.array([abs(cost(manifold.retraction(x, t * v)) - f0 - t * slope
                           - 0.5 * t * t * curvature) for t in ts])
    assert np.all(errors > 1e-13)  # well above rounding, so the fit measures the model error
    return np.polyfit(np.log(ts), np.log(errors), 1)[0]


def test_riemannian_hessian_matches_second_order_expansion(manifold, rng):
    # The normalization retraction is second order on spheres, so with the exact Riemannian
    # gradient and Hessian the model error decays like t^3.
    slope = _taylor_slope(manifold, rng, manifold.euclidean_to_riemannian_hessian)
    assert 2.8 < slope < 3.2


def test_hessian_without_curvature_term_fails_the_expansion(manifold, rng):
    """Control: dropping the Weingarten term leaves an O(t^2) error, seen by the same fit."""
    def projected_only(x, egrad, ehess, v):
        return manifold.projection(x, ehess)

    slope = _taylor_slope(manifold, rng, projected_only)
    assert 1.8 < slope < 2.2


def test_riemannian_hessian_matches_derivative_of_riemannian_gradient(manifold, rng):
    """Hess f(x)[v] = P_x(d/dt grad f(c(t)) at t = 0) along a curve with c(0) = x, c'(0) = v."""
    _, egrad, ehessp = _z_problem(rng)
    x = _point(rng)
    v = manifold.projection(x, rng.standard_normal(SHAPE))

    def rgrad(t):
        y = manifold.retraction(x, t * v)
        return manifold.projection(y, egrad(y))

    h = 1e-5
    derivative = manifold.projection(x, (rgrad(h) - rgrad(-h)) / (2 * h))
    expected = manifold.euclidean_to_riemannian_hessian(x, egrad(x), ehessp(v), v)
    np.testing.assert_allclose(expected, derivative, rtol=1e-6, atol=1e-6 * np.abs(expected).max())
    np.testing.assert_allclose(np.sum(expected * x, axis=-1), 0.0, atol=1e-12)


def test_inner_products_match_pymanopts():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4, 5))
    assert np.isclose(RealEuclidean(3, 4, 5).inner_product(None, a, b), np.sum(a * b))
    assert np.isclose(UnitRows(3, 4, 5).inner_product(None, a, b), np.sum(a * b))
