"""The correlation-term seam (`glocal.solver.correlations.CorrelationTerm`): a term written here,
in a test file, is fitted by the solver as the paper's terms are.

The toy term is a *centered* correlation: the scores' deviations from their means,
Fc = F - f_bar 1^T with F = U W^T X, regularized by one label Laplacian Z Z^T on unit-norm
rows, mu tr(Fc^T Z Z^T Fc). It has its own block (Z), reads the data through the scores and
the features' means, and its W side needs a product beyond the per-group weights. Its
derivatives are checked against autograd of the objective written from the formula, and a
fit with it never increases that objective.
"""

from types import SimpleNamespace

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

from glocal.solver import objective as obj
from glocal.solver.correlations.interface import Block, CorrelationTerm, FeatureSide
from glocal.manifolds import UnitRows, normalize_rows
from glocal.solver import SolverOptions, glocal_fit
from glocal.solver.steps import SampleSpace
from derivatives import check_u_side, close, hvp


class CenteredCorrelation(CorrelationTerm):
    """mu tr(Fc^T Z Z^T Fc), Fc the label scores centered over the samples; Z is l x k with
    unit-norm rows (stored as 1 x l x k)."""

    block_names = ("C",)

    def __init__(self, mu):
        self.mu = mu

    def start(self, n_groups, n_labels, n_latent, rng):
        return normalize_rows(rng.standard_normal((1, n_labels, n_latent)))

    def checked(self, state, n_groups, n_labels, n_latent):
        return normalize_rows(np.array(state, dtype=float))

    def label_side(self, W, space):
        data = space.data
        n = data.n_samples
        PtP, sums = data.samples.sum(lambda part, P: (P.T @ P, P.sum(axis=0)), data,
                                     space.scores(W), reads="")
        means = data.samples.sum(lambda part: np.asarray(part.X.sum(axis=0)).ravel(), data,
                                 reads="X") / n
        # Pc^T Pc = P^T P - n p_bar p_bar^T: the centered scores' Gram matrix.
        B = self.mu * (PtP - np.outer(sums, sums) / n)[None]
        return SimpleNamespace(B=B, means=means, n=n, n_groups=data.n_groups)

    def value(self, U, Z, side):
        T = np.swapaxes(Z, 1, 2) @ U
        return float(np.sum((T @ side.B) * T))

    def update(self, U, Z, side, solve):
        def cost_grad(Z):
            UBU_Z = U @ (side.B @ (U.T @ Z))
            return float(np.sum(UBU_Z * Z)), 2.0 * UBU_Z

        def hessp(Z, D):
            return 2.0 * U @ (side.B @ (U.T @ D))
        return solve("C", Block(UnitRows(*Z.shape), cost_grad, hessp), Z)

    def u_side(self, Z, side):
        def cost_grad(U):
            T = np.swapaxes(Z, 1, 2) @ U
            TB = T @ side.B
            return np.sum(TB * T), (Z @ TB).sum(axis=0)

        def hessp(U, D):
            return (Z @ ((np.swapaxes(Z, 1, 2) @ D) @ side.B)).sum(axis=0)
        return SimpleNamespace(cost_grad=cost_grad, hessp=hessp)

    def w_side(self, U, Z, side):
        # In W the term is mu tr(G W^T (X^T X - n x_bar x_bar^T) W), G = U^T Z Z^T U: the
        # weights mu G on every group's X_m^T X_m, and a rank-one product for the means.
        T = np.swapaxes(Z, 1, 2) @ U
        G = (np.swapaxes(T, 1, 2) @ T)[0]
        weights = np.broadcast_to(self.mu * G, (side.n_groups, *G.shape))

        def product(D):
            return -self.mu * side.n * np.outer(side.means, side.means @ D) @ G
        return FeatureSide(weights, product)


def _reference(data, X, mu):
    """The objective with the toy term, from the formula (autograd.numpy)."""
    n = X.shape[0]

    def full(U, V, W, Z):
        residual = data.J * (data.Y - anp.dot(U, V))
        F = anp.dot(U, anp.dot(W.T, X.T))
        centered = F - anp.sum(F, axis=1, keepdims=True) / n
        L = anp.dot(Z[0], Z[0].T)
        return (anp.sum(residual ** 2) + data.lam * anp.sum((V - anp.dot(W.T, X.T)) ** 2)
                + data.lam2 * (anp.sum(U ** 2) + anp.sum(V ** 2) + anp.sum(W ** 2))
                + mu * anp.trace(anp.dot(centered.T, anp.dot(L, centered))))
    return full


@pytest.fixture
def case(make_problem):
    data, (U, V, W, _), X = make_problem(seed=4, lam3=0.0, lam4=0.0)
    rng = np.random.default_rng(5)
    term = CenteredCorrelation(mu=0.7)
    Z = term.start(data.n_groups, data.Y.shape[0], U.shape[1], rng)
    side = term.label_side(W, SampleSpace(data))
    return SimpleNamespace(data=data, X=X, term=term, point=(U, V, W, Z), side=side, rng=rng,
                           full=_reference(data, X, term.mu))


def test_value_and_label_side_follow_the_formula(case):
    U, V, W, Z = case.point
    basic = obj.basic_objective(U, V, W, case.data)
    close(basic + case.term.value(U, Z, case.side), case.full(U, V, W, Z), 1e-11)


def test_u_side_derivatives(case):
    check_u_side(case, case.term.u_side(case.point[3], case.side))


def test_w_side_derivatives(case):
    U, V, W, Z = case.point
    product, _ = obj.w_products(case.data, case.term.w_side(U, Z, case.side))
    XtV = case.X.T @ V.T
    cost, gradient = obj.w_cost_grad(W, XtV, float(np.sum(V ** 2)), product, case.data.lam,
                                     case.data.lam2)
    close(gradient, grad(case.full, 2)(U, V, W, Z))
    D = case.rng.standard_normal(W.shape)
    close(obj.w_hessp(D, product, case.data.lam2), hvp(case.full, 2, case.point, D))
    # The block's cost is the objective up to terms without W.
    W2 = case.rng.standard_normal(W.shape)
    cost2 = obj.w_cost_grad(W2, XtV, float(np.sum(V ** 2)), product, case.data.lam,
                            case.data.lam2)[0]
    close(cost - cost2, case.full(U, V, W, Z) - case.full(U, V, W2, Z), 1e-9)


def test_own_block_derivatives(case):
    U, V, W, Z = case.point
    blocks = []
    case.term.update(U, Z, case.side, lambda name, block, start: blocks.append((name, block)))
    (name, block), = blocks
    assert name == "C" and isinstance(block.manifold, UnitRows)
    cost, gradient = block.cost_grad(Z)
    close(gradient, grad(case.full, 3)(U, V, W, Z))
    D = case.rng.standard_normal(Z.shape)
    close(block.hessp(Z, D), hvp(case.full, 3, case.point, D))
    Z2 = normalize_rows(case.rng.standard_normal(Z.shape))
    close(cost - block.cost_grad(Z2)[0], case.full(U, V, W, Z) - case.full(U, V, W, Z2), 1e-9)


@pytest.mark.parametrize("v_closed_form", [True, False])
def test_fit_with_the_term_never_increases_its_objective(case, v_closed_form):
    result = glocal_fit(case.data, 3, correlation=case.term, max_iter=15, init_max_iter=5,
                        tol=0.0, random_state=0,
                        options=SolverOptions(v_closed_form=v_closed_form))
    history = np.array(result.objective_history)
    assert np.all(np.diff(history) <= 1e-10 * np.abs(history[:-1]))
    blocks = np.concatenate([[history[0]], np.ravel(result.block_history)])
    assert np.all(np.diff(blocks) <= 1e-10 * np.abs(blocks[:-1]))
    # The history is the objective with this term, at the returned point.
    close(history[-1], case.full(result.U, result.V, result.W, result.Z), 1e-10)
    np.testing.assert_allclose(np.linalg.norm(result.Z, axis=-1), 1.0, atol=1e-12)
    # The term's own block moved, and the term was not idle: it is above zero at the start.
    assert history[-1] < history[0]
    first_C_drop = result.block_history[0][0] - history[0]
    assert first_C_drop < 0
