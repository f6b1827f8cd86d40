"""glocal.solver.newton: the V and U blocks by Newton's method under the opt-in losses.

The references are the blocks' costs written here in autograd.numpy from Eq. (6), Eq. (7)
and Eq. L of `glocal.solver.losses` (no glocal code): the solutions must make their gradients
vanish, the statistics the U block reads must be their gradients and Hessians, and every step must
lower the cost.
"""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad, hessian

from glocal.solver.correlations import implications, laplacians
from glocal.solver import newton
from glocal._utils.linalg import conjugate_gradients
from glocal.solver.objective import GlocalData

LOSSES = ("squared_hinge", "logistic")


def _ell(loss, y, f):
    if loss == "squared_hinge":
        return anp.maximum(0.0, 1.0 - y * f) ** 2
    return anp.logaddexp(0.0, -y * f)


def _label_term(loss, U, V, Y, C):
    F = anp.dot(U, V)
    return anp.sum(C * anp.where(Y != 0, _ell(loss, Y, F), 0.0))


def _problem(seed, l=7, k=4, n=60, missing=0.4, weighted=False):
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((l, k))
    V = rng.standard_normal((k, n))
    Pt = rng.standard_normal((k, n))
    Y = np.where(rng.random((l, n)) < 0.3, 1.0, -1.0)
    observed = rng.random((l, n)) >= missing
    Y = Y * observed
    C = observed * (rng.uniform(0.5, 2.0, (l, n)) if weighted else 1.0)
    return U, V, Pt, Y, C


def _sums(V, Y, C, loss):
    """`newton.LabelSums` of labels Y with entry weights C (0 on missing entries)."""
    J = (Y != 0).astype(float)
    data = GlocalData(None, Y, J, [np.arange(Y.shape[1])], loss=loss,
                      weights=None if np.array_equal(C, J) else C)
    return newton.LabelSums(V, data)


def _v_cost(loss, U, Pt, Y, C, lam, lam_v):
    def cost(V):
        return (_label_term(loss, U, V, Y, C) + lam * anp.sum((V - Pt) ** 2)
                + lam_v * anp.sum(V ** 2))
    return cost


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("lam_v", [0.0, 0.5])
def test_v_newton_makes_the_gradient_vanish(loss, weighted, lam_v):
    U, V0, Pt, Y, C = _problem(0, weighted=weighted)
    cost = _v_cost(loss, U, Pt, Y, C, 1.3, lam_v)
    V = newton.v_newton(U, Pt, Y, C, loss, 1.3, lam_v, V0=V0)
    assert np.max(np.abs(grad(cost)(V))) < 1e-9 * max(1.0, np.max(np.abs(grad(cost)(V0))))
    assert cost(V) < cost(V0)


@pytest.mark.parametrize("loss", LOSSES)
def test_v_newton_does_not_depend_on_which_columns_go_together(loss):
    """Columns are independent problems: solved in two halves (two chunks of a backend) they
    give the same V as solved together."""
    U, V0, Pt, Y, C = _problem(1)
    whole = newton.v_newton(U, Pt, Y, C, loss, 1.0, 0.0, V0=V0)
    halves = np.hstack([newton.v_newton(U, Pt[:, part], Y[:, part], C[:, part], loss, 1.0,
                                        0.0, V0=V0[:, part])
                        for part in (slice(0, 25), slice(25, None))])
    np.testing.assert_allclose(halves, whole, rtol=0, atol=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_v_newton_steps_never_raise_any_column_cost(loss):
    """Capped at one Newton step per call (an inexact V block), every column's cost falls or
    stays, and the capped calls repeated reach the block's minimizer."""
    U, V0, Pt, Y, C = _problem(4, weighted=True)
    cost = _v_cost(loss, U, Pt, Y, C, 1.1, 0.0)

    def column_costs(V):
        return np.array([_v_cost(loss, U, Pt[:, [i]], Y[:, [i]], C[:, [i]], 1.1, 0.0)(
            V[:, [i]]) for i in range(V.shape[1])])
    V, previous = V0, column_costs(V0)
    for _ in range(30):
        V = newton.v_newton(U, Pt, Y, C, loss, 1.1, 0.0, V0=V, max_iter=1)
        current = column_costs(V)
        assert np.all(current <= previous + 1e-12 * np.abs(previous))
        previous = current
    assert np.max(np.abs(grad(cost)(V))) < 1e-8 * np.max(np.abs(grad(cost)(V0)))


def test_v_newton_every_entry_observed_and_the_k_by_k_systems():
    """C = 1.0 (every entry observed, unweighted), and more labels in a support than the
    latent dimension: the Newton systems are then solved as k x k (`newton._woodbury`)."""
    U, V0, Pt, Y, _ = _problem(2, l=12, k=2, missing=0.0)
    cost = _v_cost("logistic", U, Pt, Y, np.ones_like(Y), 1.0, 0.0)
    V = newton.v_newton(U, Pt, Y, 1.0, "logistic", 1.0, 0.0, V0=V0)
    assert np.max(np.abs(grad(cost)(V))) < 1e-9 * max(1.0, np.max(np.abs(grad(cost)(V0))))


def test_v_newton_from_no_start_and_columns_without_observed_labels():
    U, _, Pt, Y, C = _problem(3)
    Y[:, :5] = 0.0
    C[:, :5] = 0.0
    V = newton.v_newton(U, Pt, Y, C, "squared_hinge", 2.0, 1.0)
    np.testing.assert_allclose(V[:, :5], Pt[:, :5] * 2.0 / 3.0, rtol=1e-14)
    cost = _v_cost("squared_hinge", U, Pt, Y, C, 2.0, 1.0)
    assert np.max(np.abs(grad(cost)(V))) < 1e-9 * np.max(np.abs(grad(cost)(Pt)))


@pytest.mark.parametrize("loss", LOSSES)
def test_label_sums_are_the_gradient_and_hessian_blocks(loss):
    U, V, _, Y, C = _problem(4, weighted=True)
    sums = _sums(V, Y, C, loss)
    value, half_grad, blocks = sums.terms(U)
    term = lambda U: _label_term(loss, U, V, Y, C)  # noqa: E731
    rows = [lambda u, j=j: _label_term(loss, anp.concatenate([U[:j], u[None], U[j + 1:]]), V,
                                       Y, C) for j in range(U.shape[0])]
    np.testing.assert_allclose(value.sum(), term(U), rtol=1e-12)
    np.testing.assert_allclose(2.0 * half_grad, grad(term)(U), rtol=1e-10, atol=1e-12)
    for j, row in enumerate(rows):
        np.testing.assert_allclose(2.0 * blocks[j], hessian(row)(U[j]), rtol=1e-9, atol=1e-12)
    step = np.random.default_rng(5).standard_normal(U.shape)
    along = sums.values(U, step, [0.0, 0.5])
    np.testing.assert_allclose(along[0], value, rtol=1e-12)
    np.testing.assert_allclose(along[1].sum(), term(U + 0.5 * step), rtol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_newton_systems_about_the_labels_common_curvature(weighted):
    """With most entries active, the Newton systems are solved about each label's common
    curvature (`newton._by_deviation`): the same z_i as each column's own dense system."""
    rng = np.random.default_rng(8)
    l, k, n, a = 9, 4, 80, 0.7
    U = rng.standard_normal((l, k))
    G = rng.standard_normal((k, n))
    support = rng.random((l, n)) < 0.85
    s = np.where(rng.random((l, n)) < 0.9, 1.5, rng.uniform(0.2, 3.0, (l, n))) if weighted \
        else np.ones((l, n))
    solved = newton._by_deviation(U, support, s, G, a, np.zeros((l, n)))
    assert solved.mean() > 0.5  # the path under test solves most columns
    Z = newton._woodbury(U @ U.T, U, support, s, U @ G, a, G)
    for i in range(n):
        H = a * np.eye(k) + U.T @ ((support[:, i] * s[:, i])[:, None] * U)
        np.testing.assert_allclose((G[:, i] - U.T @ Z[:, i]) / a,
                                   np.linalg.solve(H, G[:, i]), rtol=1e-10, atol=1e-12)
        assert not np.any(Z[~support[:, i], i])


def test_label_sums_hessian_blocks_when_most_entries_curve():
    """Rows where most entries are active sum their Hessian blocks about a common curvature
    (sigma V V^T plus the entries that differ): the same blocks as autograd's."""
    U, V, _, Y, C = _problem(9, missing=0.1, weighted=False)
    C[0, :5] = 3.0  # a few entries weighted otherwise
    U = 0.05 * U  # scores within the margins: nearly every observed entry active
    _, _, blocks = _sums(V, Y, C, "squared_hinge").terms(U)
    for j in range(U.shape[0]):
        row = lambda u, j=j: _label_term("squared_hinge", anp.concatenate(  # noqa: E731
            [U[:j], u[None], U[j + 1:]]), V, Y, C)
        np.testing.assert_allclose(2.0 * blocks[j], hessian(row)(U[j]), rtol=1e-9, atol=1e-12)


def _u_cost(loss, V, Y, C, lam2, Z=None, B=None):
    def cost(U):
        value = _label_term(loss, U, V, Y, C) + lam2 * anp.sum(U ** 2)
        if B is not None:
            for Z_m, B_m in zip(Z, B):
                T = anp.dot(Z_m.T, U)
                value = value + anp.sum(anp.dot(T, B_m) * T)
        return value
    return cost


def _sides(Z, B):
    """The Laplacian terms' U side, as the solver hands it
    (`glocal.solver.correlations.laplacians`)."""
    return () if B is None else (laplacians._USide(Z, B),)


def _manifold(seed, l, k, g=3):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((g, l, k))
    Z /= np.linalg.norm(Z, axis=-1, keepdims=True)
    A = rng.standard_normal((g, k, k))
    return Z, 0.3 * A @ np.swapaxes(A, 1, 2)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("coupled", [False, True])
def test_u_newton_solves_the_block(loss, coupled):
    U0, V, _, Y, C = _problem(6, weighted=True)
    Z, B = _manifold(7, *U0.shape) if coupled else (None, None)
    cost = _u_cost(loss, V, Y, C, 0.7, Z, B)
    U, decrease = newton.u_newton(U0, _sums(V, Y, C, loss), 0.7, _sides(Z, B),
                                  max_iter=100, rtol=1e-10)
    assert np.linalg.norm(grad(cost)(U)) <= 1e-9 * np.linalg.norm(grad(cost)(U0))
    np.testing.assert_allclose(decrease, cost(U0) - cost(U), rtol=1e-9)


@pytest.mark.parametrize("coupled", [False, True])
def test_u_newton_steps_never_raise_the_cost(coupled):
    U0, V, _, Y, C = _problem(8)
    Z, B = _manifold(9, *U0.shape) if coupled else (None, None)
    cost = _u_cost("squared_hinge", V, Y, C, 0.2, Z, B)
    previous = cost(U0)
    U = U0
    for _ in range(4):
        U, decrease = newton.u_newton(U, _sums(V, Y, C, "squared_hinge"), 0.2, _sides(Z, B),
                                      max_iter=1)
        assert decrease >= 0.0
        assert cost(U) <= previous + 1e-12 * abs(previous)
        previous = cost(U)


@pytest.mark.parametrize("loss", LOSSES)
def test_u_newton_solves_the_block_with_the_directed_term(loss):
    """A correlation term not quadratic in U (the implications' piecewise quadratic, read at
    every point): the gradient of the whole block vanishes, and the decrease is the cost's."""
    U0, V, _, Y, C = _problem(10, weighted=True)
    l, n = Y.shape
    rng = np.random.default_rng(11)
    P = rng.standard_normal((n, U0.shape[1]))
    weights = 2.0 * rng.random((1, l, l)) * (1.0 - np.eye(l))
    sums = _sums(V, Y, C, loss)
    side = implications._USide(weights, implications._Side(P, sums.data, np.array([n])))

    def cost(U):
        S = anp.dot(P, U.T)
        positive = anp.maximum(S[:, :, None] - S[:, None, :], 0.0)
        return (_label_term(loss, U, V, Y, C) + 0.7 * anp.sum(U ** 2)
                + anp.sum(weights[0] * positive ** 2))
    U, decrease = newton.u_newton(U0, sums, 0.7, (side,), max_iter=100, rtol=1e-10)
    assert np.linalg.norm(grad(cost)(U)) <= 1e-9 * np.linalg.norm(grad(cost)(U0))
    np.testing.assert_allclose(decrease, cost(U0) - cost(U), rtol=1e-9)


@pytest.mark.parametrize("preconditioned", [False, True])
def test_conjugate_gradients_solve_and_lower_the_quadratic_at_every_step(preconditioned):
    # The CG shared by U's Newton steps with correlation terms and the W block's linear system.
    rng = np.random.default_rng(0)
    G = rng.standard_normal((12, 12))
    A = G @ G.T + 0.1 * np.eye(12)
    b = rng.standard_normal((3, 4))
    apply = lambda X: (A @ X.ravel()).reshape(X.shape)  # noqa: E731
    inverse_diagonal = 1.0 / np.diag(A).reshape(3, 4)
    precondition = (lambda R: R * inverse_diagonal) if preconditioned else (lambda R: R)
    values = []
    for cap in range(13):
        x, iterations = conjugate_gradients(apply, precondition, b, np.zeros((3, 4)), 0.0, cap)
        assert iterations == cap
        values.append(0.5 * np.vdot(x, apply(x)) - np.vdot(b, x))
    assert np.all(np.diff(values) < 0)
    x, iterations = conjugate_gradients(apply, precondition, b, np.zeros((3, 4)), 1e-10, 100)
    assert np.linalg.norm(apply(x) - b) <= 1e-10
    start = np.ones((3, 4))
    conjugate_gradients(apply, precondition, b, start, 1e-10, 100)
    assert np.all(start == 1.0)  # the start is not changed in place
