"""Losses other than the paper's squared error (glocal.solver.losses) and per-label class weights.

The references are written here with autograd.numpy from the formulas (Eq. L of
`glocal.solver.losses` plus the rest of Eq. (4) from conftest's `paper_objective` with an
empty mask), sharing no code with glocal.solver.objective or glocal.solver.losses.
"""

import pickle
from dataclasses import replace

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import elementwise_grad, grad

from glocal import GLOCAL
from glocal.solver.correlations import laplacians as lap
from glocal.solver import losses
from glocal.solver import objective as obj
from glocal.solver.label_fit import u_statistics
from glocal.solver.newton import v_block
from glocal.solver.plan import Levers
from glocal.solver import SolverOptions, glocal_fit
from derivatives import close, hvp, label_weights, u_cost_grad, u_hessp

REFERENCE_LOSSES = {
    "squared": lambda F, Y: (F - Y) ** 2,
    "squared_hinge": lambda F, Y: anp.maximum(0.0, 1.0 - Y * F) ** 2,
    "logistic": lambda F, Y: anp.logaddexp(0.0, -Y * F),
}
# (loss, weighted, lam_v): every extension of the label-fit term, and a separate ||V||^2 weight.
NON_PAPER = [("squared", True, None), ("squared", False, 0.0), ("squared_hinge", False, None),
             ("squared_hinge", True, 0.1), ("logistic", False, None), ("logistic", True, 2.0),
             ("squared_hinge", False, 0.0)]


@pytest.mark.parametrize("loss", losses.LOSSES)
def test_entrywise_derivatives_match_autograd(loss):
    rng = np.random.default_rng(0)
    F = 2.0 * rng.standard_normal((5, 40))
    Y = np.where(rng.random((5, 40)) < 0.5, 1.0, -1.0)
    F[np.abs(1.0 - Y * F) < 1e-3] += 0.01  # keep off the hinge, where ell'' jumps
    reference = REFERENCE_LOSSES[loss]
    value, first, second = getattr(losses, loss)(F, Y)
    close(value, reference(F, Y))
    close(first, elementwise_grad(reference)(F, Y))
    close(second, elementwise_grad(elementwise_grad(reference))(F, Y))


def test_unknown_loss_is_a_value_error():
    with pytest.raises(ValueError, match="unknown loss 'hinge'"):
        losses.loss_value_and_gradient(np.zeros((1, 1)), np.ones((1, 1)), np.ones((1, 1)),
                                       "hinge")


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
def test_all_observed_labels_use_a_scalar_weight_with_the_same_terms(make_problem, loss):
    """Without a mask the weights are the scalar 1 (no l x n array of ones): the loss, its
    gradient and curvature, and a fit equal those with an explicit mask of ones."""
    data, (U, V, W, Z), _ = make_problem(seed=2, missing=False)
    data = replace(data, loss=loss)
    ones = replace(data, J=np.ones_like(data.Y))
    assert data.label.entry_weights(data) == 1.0
    for a, b in zip(data.label.terms(U, V, data), ones.label.terms(U, V, ones)):
        close(a, b)
    fits = [glocal_fit(d, 3, max_iter=2, init_max_iter=2, random_state=0) for d in (data, ones)]
    close(fits[0].objective_history, fits[1].objective_history)


def test_balanced_weights_give_each_class_half_of_each_label():
    rng = np.random.default_rng(1)
    J = (rng.random((4, 30)) < 0.6).astype(float)
    Y = np.where(rng.random((4, 30)) < 0.2, 1.0, -1.0) * J
    C = losses.balanced_class_weights(Y, J)
    assert not np.any(Y[0] > 0)
    assert np.all(C[J == 0] == 0)
    for y in (1.0, -1.0):
        present = np.any(Y == y, axis=1)  # the test's first label has no positive
        close(np.sum(C * (Y == y), axis=1)[present], J.sum(axis=1)[present] / 2)
    Y_full = np.where(rng.random((4, 30)) < 0.2, 1.0, -1.0)
    close(losses.balanced_class_weights(Y_full, None),
          losses.balanced_class_weights(Y_full, np.ones_like(Y_full)))


def _extended(data, loss, weighted, lam_v):
    weights = losses.balanced_class_weights(data.Y, data.J) if weighted else None
    return replace(data, loss=loss, weights=weights, lam_v=lam_v)


@pytest.fixture(params=NON_PAPER, ids=[f"{l}-{'weighted' if w else 'plain'}-lam_v={v}"
                                       for l, w, v in NON_PAPER])
def case(request, make_problem, paper_objective):
    loss, weighted, lam_v = request.param
    data, (U, V, W, Z), X = make_problem(seed=len(loss) + weighted)
    data = _extended(data, loss, weighted, lam_v)
    C = data.weights if weighted else data.J
    reference_loss = REFERENCE_LOSSES[loss]
    empty = np.zeros_like(data.Y)
    v_extra = 0.0 if lam_v is None else lam_v - data.lam2  # lam_v replaces lam2 on ||V||^2

    def extension(U, V):
        return (anp.sum(C * reference_loss(anp.dot(U, V), data.Y))
                + v_extra * anp.sum(V ** 2))

    def full(U, V, W, Z):
        return extension(U, V) + paper_objective(U, V, W, Z, X, data.Y, empty,
                                                 data.group_index, data.lam, data.lam2,
                                                 data.lam3, data.lam4)

    def basic(U, V, W, Z):
        return extension(U, V) + paper_objective(U, V, W, Z, X, data.Y, empty,
                                                 data.group_index, data.lam, data.lam2,
                                                 0.0, 0.0)

    return data, (U, V, W, Z), full, basic, np.random.default_rng(7)


def test_objective_matches_reference(case):
    data, point, full, basic, _ = case
    close(lap.objective(*point, data), full(*point))
    close(obj.basic_objective(*point[:3], data), basic(*point))


def test_u_block_gradient_and_hessp(case):
    data, (U, V, W, Z), full, _, rng = case
    B = label_weights(data.X @ W, data)
    term = data.label.u_term(V, data)
    cost, gradient = u_cost_grad(U, term, Z, B, data)
    close(gradient, grad(full, 0)(U, V, W, Z))
    D = rng.standard_normal(U.shape)
    close(u_hessp(D, term, Z, B, data, U), hvp(full, 0, (U, V, W, Z), D))
    # The block cost is the objective up to terms without U.
    U2 = rng.standard_normal(U.shape)
    close(cost - u_cost_grad(U2, term, Z, B, data)[0],
          full(U, V, W, Z) - full(U2, V, W, Z))


def test_v_block_gradient_and_hessp(case):
    data, (U, V, W, Z), full, _, rng = case
    P = data.X @ W
    cost, gradient = obj.v_cost_grad(V, U, P, data)
    close(gradient, grad(full, 1)(U, V, W, Z))
    D = rng.standard_normal(V.shape)
    close(obj.v_hessp(D, U, data, V=V), hvp(full, 1, (U, V, W, Z), D))
    V2 = rng.standard_normal(V.shape)
    close(cost - obj.v_cost_grad(V2, U, P, data)[0], full(U, V, W, Z) - full(U, V2, W, Z))


def test_block_hessians_are_the_hessp_blocks(case):
    """The preconditioners' k x k blocks are the exact Hessian blocks (without manifold terms)."""
    data, (U, V, W, Z), _, _, rng = case
    D = rng.standard_normal(V.shape)
    blocks = obj.v_column_hessians(U, V, data)
    close(2.0 * np.einsum("iab,bi->ai", blocks, D), obj.v_hessp(D, U, data, V=V))
    close(obj.v_mean_column_hessian(U, data.label.curvature(U, V, data), data),
          blocks.mean(axis=0))
    E = rng.standard_normal(U.shape)
    term = data.label.u_term(V, data)
    row_blocks = obj.u_row_hessians(term, data.lam2, U)
    close(2.0 * np.einsum("lab,lb->la", row_blocks, E), u_hessp(E, term, Z, None, data, U))
    close(obj.u_mean_row_hessian(term, data.lam2, U), row_blocks.mean(axis=0))


def test_lam_v_equal_to_lam2_is_the_paper_model(make_problem):
    data, (U, V, W, Z), _ = make_problem(seed=5, missing=True)
    explicit = replace(data, lam_v=data.lam2)
    close(lap.objective(U, V, W, Z, explicit), lap.objective(U, V, W, Z, data))
    close(obj.v_closed_form(U, data.X @ W, explicit), obj.v_closed_form(U, data.X @ W, data))


def test_unit_weights_reproduce_the_paper_objective(make_problem):
    """loss="squared" with weights J is the paper's model through the general code path."""
    data, (U, V, W, Z), _ = make_problem(seed=3)
    general = replace(data, weights=data.J)
    assert not general.label.quadratic and data.label.quadratic
    B = label_weights(data.X @ W, data)
    close(lap.objective(U, V, W, Z, general), lap.objective(U, V, W, Z, data))
    for a, b in zip(u_cost_grad(U, general.label.u_term(V, general), Z, B, general),
                    u_cost_grad(U, u_statistics(V, data), Z, B, data)):
        close(a, b)
    for a, b in zip(obj.v_cost_grad(V, U, data.X @ W, general),
                    obj.v_cost_grad(V, U, data.X @ W, data)):
        close(a, b)
    # Whole fits: the V problem of the general path reaches the closed form's optimum.
    paper = glocal_fit(data, 3, random_state=0, tol=1e-8)
    other = glocal_fit(general, 3, random_state=0, tol=1e-8)
    assert other.objective_history[-1] == pytest.approx(paper.objective_history[-1], rel=1e-4)


@pytest.mark.parametrize("newton_steps", [None, 1], ids=["exact", "one_step"])
@pytest.mark.parametrize("loss, weighted, lam_v", NON_PAPER)
def test_objective_never_increases(make_problem, loss, weighted, lam_v, newton_steps):
    """Also with the Newton blocks (V and U under a loss other than the paper's) cut to one
    step per visit: each step's line search keeps every block a descent step."""
    data, _, _ = make_problem(seed=11, n=80, l=7, k=4)
    data = _extended(data, loss, weighted, lam_v)
    result = glocal_fit(data, 4, random_state=0, max_iter=8, tol=0.0,
                        options=SolverOptions(block_max_iter=20),
                        levers=Levers(newton_steps=newton_steps))
    for history in (result.init_history, result.objective_history):
        steps = np.diff(history)
        assert np.all(steps <= 1e-10 * np.abs(history[:-1])), steps
    blocks = np.concatenate([[result.objective_history[0]],
                             np.ravel(result.block_history)])
    assert np.all(np.diff(blocks) <= 1e-10 * np.abs(blocks[:-1]))
    # The last block value matches the recomputed objective.
    close(np.array(result.block_history)[:, -1], result.objective_history[1:], rtol=1e-8)
    # And the fit moved: the objective decreased.
    assert result.objective_history[-1] < result.init_history[0]


@pytest.mark.parametrize("loss", ["squared_hinge", "logistic"])
def test_estimator_with_other_losses_learns(multilabel_data, loss):
    X, Y = multilabel_data(seed=2, n=120, d=8, l=5)
    Y_missing = Y.copy()
    Y_missing[np.random.default_rng(0).random(Y.shape) < 0.3] = np.nan
    est = GLOCAL(n_latent=5, lam2=0.1, loss=loss, class_weight="balanced", fit_intercept=True,
                 random_state=0).fit(X[:80], Y_missing[:80])
    assert np.all(np.diff(est.objective_history_) <= 1e-10 * np.abs(est.objective_history_[1:]))
    assert est.score(X[80:], Y[80:]) > 0.8
    again = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(again.decision_function(X), est.decision_function(X))


def test_default_is_the_paper_model(multilabel_data):
    X, Y = multilabel_data(seed=4)
    paper = GLOCAL(n_latent=3, random_state=0).fit(X, Y)
    explicit = GLOCAL(n_latent=3, random_state=0, loss="squared", class_weight=None).fit(X, Y)
    assert explicit.objective_history_ == paper.objective_history_


@pytest.mark.parametrize("params, message", [(dict(loss="hinge"), "loss"),
                                             (dict(class_weight="auto"), "class_weight")])
def test_bad_parameters_are_value_errors(multilabel_data, params, message):
    X, Y = multilabel_data()
    with pytest.raises(ValueError, match=message):
        GLOCAL(**params).fit(X, Y)


@pytest.mark.parametrize("missing", [True, False])
def test_v_closed_form_with_lam_v_is_the_minimizer(make_problem, missing):
    data, (U, V, W, Z), _ = make_problem(seed=6, missing=missing)
    data = replace(data, lam_v=0.0)
    P = data.X @ W
    V_star = obj.v_closed_form(U, P, data)
    gradient = obj.v_cost_grad(V_star, U, P, data)[1]
    assert np.max(np.abs(gradient)) < 1e-10 * np.max(np.abs(obj.v_cost_grad(V, U, P, data)[1]))


def test_v_newton_is_the_minimizer_whatever_the_chunks(case):
    """Newton's method column by column ends at a zero gradient of the V block, and every
    column's iterations are its own: solving the columns 7 at a time changes nothing."""
    data, (U, V, W, Z), *_ = case
    P = data.X @ W
    V_star = v_block(U, P, V, data)
    gradient = obj.v_cost_grad(V_star, U, P, data)[1]
    assert np.max(np.abs(gradient)) < 1e-9 * np.max(np.abs(obj.v_cost_grad(V, U, P, data)[1]))
    n = V.shape[1]
    def columns(cols):
        return replace(data, X=None, Y=data.Y[:, cols], J=data.J[:, cols], group_index=None,
                       weights=None if data.weights is None else data.weights[:, cols])
    sevens = np.hstack([v_block(U, P[cols], V[:, cols], columns(cols))
                        for cols in (slice(i, min(n, i + 7)) for i in range(0, n, 7))])
    np.testing.assert_allclose(sevens, V_star, rtol=1e-12, atol=1e-12 * np.abs(V_star).max())
    # The block's decrease is the difference of its costs.
    close(obj.v_cost_difference(V, V_star, U, P, data),
          obj.v_cost_grad(V, U, P, data)[0] - obj.v_cost_grad(V_star, U, P, data)[0],
          rtol=1e-10)


@pytest.mark.parametrize("acceleration", [0, 5], ids=["plain", "mixed"])
def test_rescaling_step_is_counted_in_the_initialisation_history(make_problem, acceleration):
    """With the rescaling step (on by "auto" when lam_v = 0), the basic-model
    initialisation's last recorded value is Eq. (1) at the point it returns, and the step
    lowers the rounds' values below the same fit without it."""
    data, _, _ = make_problem(seed=12, n=80, l=7, k=4)
    data = _extended(data, "squared_hinge", False, 0.0)
    runs = {}
    for rebalance in ("auto", False):
        levers = Levers(rebalance=rebalance, init_acceleration=acceleration)
        runs[rebalance] = result = glocal_fit(data, 4, random_state=0, max_iter=0,
                                              init_max_iter=3, tol=0.0, levers=levers)
        close(result.init_history[-1], obj.basic_objective(result.U, result.V, result.W, data),
              rtol=1e-10)
    assert runs["auto"].init_history[1] < runs[False].init_history[1]
