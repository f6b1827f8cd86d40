"""The terms of the objective (glocal.solver.objective, label_fit, coupling, second_moments,
laplacians) against autograd derivatives of the paper's objective (Eq. 4).

The reference (`paper_objective` in conftest) is written from the paper's formula in the
paper's layout and shares no code with glocal. Every case runs with missing and full labels,
dense and CSR features, and the three kinds of second moments (products through X, through
X^T X only, through all the group second moments).
"""

import itertools
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest
from autograd import grad, hessian
from derivatives import close, hvp, label_weights, u_cost_grad, u_hessp

from glocal.solver import coupling, optimizers, plan
from glocal.solver import objective as obj
from glocal.solver import second_moments as sm
from glocal.solver.correlations import laplacians as lap
from glocal.solver.correlations.interface import FeatureSide
from glocal.solver.label_fit import u_statistics

CASES = [dict(missing=m, sparse=s, grams=gm)
         for m, s, gm in itertools.product((True, False), (False, True), ("none", "gram", "all"))]


def _case_id(params):
    return "-".join(["missing" if params["missing"] else "full",
                     "csr" if params["sparse"] else "dense", "grams-" + params["grams"]])


@pytest.fixture(params=CASES, ids=[_case_id(c) for c in CASES])
def case(request, make_problem, paper_objective):
    seed = CASES.index(request.param)
    data, point, X_dense = make_problem(seed=seed, **request.param)
    rng = np.random.default_rng(100 + seed)
    U, V, W, Z = point
    Z2 = rng.standard_normal(Z.shape)
    other = (rng.standard_normal(U.shape), rng.standard_normal(V.shape),
             0.5 * rng.standard_normal(W.shape), Z2 / np.linalg.norm(Z2, axis=-1, keepdims=True))

    def full(U, V, W, Z):
        return paper_objective(U, V, W, Z, X_dense, data.Y, data.J, data.group_index,
                               data.lam, data.lam2, data.lam3, data.lam4)

    def basic(U, V, W, Z):
        return paper_objective(U, V, W, Z, X_dense, data.Y, data.J, data.group_index,
                               data.lam, data.lam2, 0.0, 0.0)

    return SimpleNamespace(data=data, point=point, other=other, X=X_dense, full=full,
                           basic=basic, rng=rng, k=U.shape[1])


def _w_side(U, Z, data):
    """The paper's terms in the W block (None: the basic model)."""
    return FeatureSide(lap.feature_side_weights(lap.laplacian_weights(U, Z),
                                                data.group_fractions, data.lam3, data.lam4))


def _w_product(side, data):
    return obj.w_products(data, side)[0]


def _u_stats(V, case, chunk=7):
    """U-block statistics, built in small column chunks to cover the chunked path."""
    return u_statistics(V, case.data, chunk=chunk)


def _w_cost_grad(W, V, side, data):
    XtV = np.asarray(data.X.T @ V.T)
    return obj.w_cost_grad(W, XtV, float(np.sum(V ** 2)), _w_product(side, data), data.lam,
                           data.lam2)


def _w_hessp(D, side, data):
    return obj.w_hessp(D, _w_product(side, data), data.lam2)


# --- values ------------------------------------------------------------------------------

def test_objective_matches_paper_formula(case):
    U, V, W, Z = case.point
    expected = case.full(U, V, W, Z)
    assert case.data.has_manifold_terms
    close(lap.objective(U, V, W, Z, case.data), expected, 1e-11)
    close(lap.objective(U, V, W, Z, case.data, P=case.X @ W), expected, 1e-11)
    # The manifold terms are not negligible here, so the comparison sees them.
    assert abs(expected - case.basic(U, V, W, Z)) > 1e-3 * abs(expected)


def test_basic_objective_matches_paper_formula(case):
    U, V, W, Z = case.point
    close(obj.basic_objective(U, V, W, case.data), case.basic(U, V, W, Z), 1e-11)
    no_manifold = replace(case.data, lam3=0.0, lam4=0.0)
    close(lap.objective(U, V, W, Z, no_manifold), case.basic(U, V, W, Z), 1e-11)


def test_manifold_term_has_both_forms(case):
    """sum_m tr(Z_m^T U B_m U^T Z_m) == sum_m tr(P_m H_m P_m^T) (label side vs feature side)."""
    U, V, W, Z = case.point
    P = case.X @ W
    label_side = lap.manifold_term(U, Z, label_weights(P, case.data))
    H = _w_side(U, Z, case.data).weights
    feature_side = sum(np.trace(P[idx] @ H_m @ P[idx].T)
                       for idx, H_m in zip(case.data.group_index, H))
    close(label_side, feature_side, 1e-11)
    close(label_side, case.full(U, V, W, Z) - case.basic(U, V, W, Z), 1e-9)


# --- gradients ----------------------------------------------------------------------------

def test_u_gradient(case):
    U, V, W, Z = case.point
    B = label_weights(case.X @ W, case.data)
    cost, gradient = u_cost_grad(U, _u_stats(V, case), Z, B, case.data)
    close(gradient, grad(case.full, 0)(U, V, W, Z))
    _, gradient_basic = u_cost_grad(U, _u_stats(V, case), Z, None, case.data)
    close(gradient_basic, grad(case.basic, 0)(U, V, W, Z))


def test_u_cost_is_the_label_terms_exactly(case):
    """The statistics' cost equals ||J o (Y - U V)||^2 + lam2 ||U||^2 (+ manifold), not
    just up to a constant."""
    U, V, W, Z = case.point
    data = case.data
    residual = data.label.residual(U, V, data)
    B = label_weights(case.X @ W, data)
    expected = float(np.sum(residual ** 2) + data.lam2 * np.sum(U ** 2))
    close(u_cost_grad(U, _u_stats(V, case), Z, None, data)[0], expected, 1e-11)
    close(u_cost_grad(U, _u_stats(V, case, chunk=4096), Z, B, data)[0],
          expected + lap.manifold_term(U, Z, B), 1e-11)


def test_v_gradient(case):
    U, V, W, Z = case.point
    _, gradient = obj.v_cost_grad(V, U, case.X @ W, case.data)
    close(gradient, grad(case.full, 1)(U, V, W, Z))


def test_w_gradient(case):
    U, V, W, Z = case.point
    _, gradient = _w_cost_grad(W, V, _w_side(U, Z, case.data), case.data)
    close(gradient, grad(case.full, 2)(U, V, W, Z))
    _, gradient_basic = _w_cost_grad(W, V, None, case.data)
    close(gradient_basic, grad(case.basic, 2)(U, V, W, Z))


def test_z_gradient(case):
    U, V, W, Z = case.point
    B = label_weights(case.X @ W, case.data)
    _, gradient = lap.z_cost_grad(Z, U, B)
    close(gradient, grad(case.full, 3)(U, V, W, Z))


# --- Hessian-vector products --------------------------------------------------------------

def testu_hessp(case):
    U, V, W, Z = case.point
    D = case.rng.standard_normal(U.shape)
    B = label_weights(case.X @ W, case.data)
    stats = _u_stats(V, case)
    close(u_hessp(D, stats, Z, B, case.data), hvp(case.full, 0, (U, V, W, Z), D))
    close(u_hessp(D, stats, Z, None, case.data), hvp(case.basic, 0, (U, V, W, Z), D))


def test_v_hessp(case):
    U, V, W, Z = case.point
    D = case.rng.standard_normal(V.shape)
    close(obj.v_hessp(D, U, case.data), hvp(case.full, 1, (U, V, W, Z), D))


def test_w_hessp(case):
    U, V, W, Z = case.point
    D = case.rng.standard_normal(W.shape)
    close(_w_hessp(D, _w_side(U, Z, case.data), case.data),
          hvp(case.full, 2, (U, V, W, Z), D))
    close(_w_hessp(D, None, case.data), hvp(case.basic, 2, (U, V, W, Z), D))


def test_z_hessp(case):
    U, V, W, Z = case.point
    D = case.rng.standard_normal(Z.shape)
    B = label_weights(case.X @ W, case.data)
    close(lap.z_hessp(D, U, B), hvp(case.full, 3, (U, V, W, Z), D))


# --- each block cost is the objective up to a constant in its block ----------------------

def _assert_same_differences(cost_1, cost_2, objective_1, objective_2):
    scale = max(abs(objective_1), abs(objective_2))
    assert abs((cost_1 - cost_2) - (objective_1 - objective_2)) <= 1e-10 * scale


def test_u_cost_is_objective_up_to_constant(case):
    U, V, W, Z = case.point
    U2 = case.other[0]
    B = label_weights(case.X @ W, case.data)
    _assert_same_differences(u_cost_grad(U, _u_stats(V, case), Z, B, case.data)[0],
                             u_cost_grad(U2, _u_stats(V, case), Z, B, case.data)[0],
                             case.full(U, V, W, Z), case.full(U2, V, W, Z))
    _assert_same_differences(u_cost_grad(U, _u_stats(V, case), Z, None, case.data)[0],
                             u_cost_grad(U2, _u_stats(V, case), Z, None, case.data)[0],
                             case.basic(U, V, W, Z), case.basic(U2, V, W, Z))


def test_v_cost_is_objective_up_to_constant(case):
    U, V, W, Z = case.point
    V2 = case.other[1]
    P = case.X @ W
    _assert_same_differences(obj.v_cost_grad(V, U, P, case.data)[0],
                             obj.v_cost_grad(V2, U, P, case.data)[0],
                             case.full(U, V, W, Z), case.full(U, V2, W, Z))


def test_w_cost_is_objective_up_to_constant(case):
    U, V, W, Z = case.point
    W2 = case.other[2]
    side = _w_side(U, Z, case.data)
    _assert_same_differences(_w_cost_grad(W, V, side, case.data)[0],
                             _w_cost_grad(W2, V, side, case.data)[0],
                             case.full(U, V, W, Z), case.full(U, V, W2, Z))
    _assert_same_differences(_w_cost_grad(W, V, None, case.data)[0],
                             _w_cost_grad(W2, V, None, case.data)[0],
                             case.basic(U, V, W, Z), case.basic(U, V, W2, Z))


def test_z_cost_is_objective_up_to_constant(case):
    U, V, W, Z = case.point
    Z2 = case.other[3]
    B = label_weights(case.X @ W, case.data)
    _assert_same_differences(lap.z_cost_grad(Z, U, B)[0], lap.z_cost_grad(Z2, U, B)[0],
                             case.full(U, V, W, Z), case.full(U, V, W, Z2))


def test_cost_and_gradient_are_consistent(case):
    """The value returned with each gradient is the cost the gradient belongs to."""
    U, V, W, Z = case.point
    B = label_weights(case.X @ W, case.data)
    side = _w_side(U, Z, case.data)
    blocks = [
        (U, lambda x: u_cost_grad(x, _u_stats(V, case), Z, B, case.data)),
        (V, lambda x: obj.v_cost_grad(x, U, case.X @ W, case.data)),
        (W, lambda x: _w_cost_grad(x, V, side, case.data)),
        (Z, lambda x: lap.z_cost_grad(x, U, B)),
    ]
    for x, cost_grad in blocks:
        D = case.rng.standard_normal(x.shape)
        h = 1e-5
        difference = (cost_grad(x + h * D)[0] - cost_grad(x - h * D)[0]) / (2 * h)
        directional = float(np.sum(cost_grad(x)[1] * D))
        assert difference == pytest.approx(directional, rel=1e-6)


# --- V closed form and U preconditioner ---------------------------------------------------

@pytest.mark.parametrize("chunk", [4096, 7])
def test_v_closed_form_is_the_minimizer(case, chunk):
    U, V, W, Z = case.point
    P = case.X @ W
    V_star = obj.v_closed_form(U, P, case.data, chunk=chunk)
    # Stationary point of the V block (a strictly convex quadratic).
    _, gradient = obj.v_cost_grad(V_star, U, P, case.data)
    _, gradient_start = obj.v_cost_grad(V, U, P, case.data)
    assert np.linalg.norm(gradient) <= 1e-10 * np.linalg.norm(gradient_start)
    # The normal equations of the whole block, H vec(V) = -grad(0), solved directly.
    k, n = V.shape
    zero = np.zeros_like(V)
    H = hessian(case.full, 1)(U, zero, W, Z).reshape(k * n, k * n)
    b = grad(case.full, 1)(U, zero, W, Z).reshape(-1)
    close(V_star, np.linalg.solve(H, -b).reshape(k, n), 1e-9)
    assert case.full(U, V_star, W, Z) < case.full(U, V, W, Z)


def test_v_decrease_is_the_cost_difference(case):
    U, V, W, Z = case.point
    P = case.X @ W
    V_star = obj.v_closed_form(U, P, case.data)
    expected = obj.v_cost_grad(V, U, P, case.data)[0] - obj.v_cost_grad(V_star, U, P,
                                                                       case.data)[0]
    close(obj.v_decrease(V, V_star, U, case.data), expected, 1e-9)
    close(obj.v_decrease(V, V_star, U, case.data),
          case.full(U, V, W, Z) - case.full(U, V_star, W, Z), 1e-9)


def test_u_row_hessians_are_the_basic_hessian_blocks(case):
    U, V, W, Z = case.point
    l, k = U.shape
    blocks = obj.u_row_hessians(_u_stats(V, case), case.data.lam2)
    H = hessian(case.basic, 0)(U, V, W, Z)  # shape (l, k, l, k)
    blocks = np.broadcast_to(blocks, (l, k, k))  # one shared block when all are observed
    for i in range(l):
        close(blocks[i], H[i, :, i, :] / 2.0, 1e-10)
        for j in range(l):
            if j != i:
                assert np.all(H[i, :, j, :] == 0.0)  # rows of U decouple in the basic model


# --- moment products and second moments ----------------------------------------------------

def test_moment_product_paths_agree(make_problem):
    data, (U, V, W, Z), X = make_problem(seed=7, grams="all")
    D = np.random.default_rng(7).standard_normal(W.shape)
    side = _w_side(U, Z, data)
    Ht = side.weights + data.lam * np.eye(U.shape[1])
    through_x = replace(data, moments=sm.THROUGH_SAMPLES)
    gram_only = replace(data, moments=sm.Gram(data.moments.gram))
    expected = sum(X[idx].T @ X[idx] @ D @ Ht_m for idx, Ht_m in zip(data.group_index, Ht))
    for variant in (data, through_x, gram_only):
        close(_w_product(side, variant)(D), expected, 1e-12)
        close(_w_product(None, variant)(D), data.lam * X.T @ X @ D, 1e-12)


def test_resolve_feature_moments(make_problem):
    data, _, X = make_problem(seed=3, n=50, d=8, g=3, grams="none")  # d^2 < 2 nnz, g d^2 < 2 nnz
    attached = plan.resolve_feature_moments(replace(data, moments="auto"))
    close(attached.moments.gram, X.T @ X, 1e-13)
    close(attached.moments.group_grams,
          np.stack([X[idx].T @ X[idx] for idx in data.group_index]), 1e-13)
    no_terms = plan.resolve_feature_moments(replace(data, lam3=0.0, lam4=0.0))
    assert no_terms.moments.has_gram and not no_terms.moments.has_group_grams
    too_small = plan.resolve_feature_moments(data, memory_limit=8)
    assert too_small.moments is sm.THROUGH_SAMPLES
    # Many features, few non-zeros: products through X are cheaper, nothing is attached.
    wide, _, _ = make_problem(seed=3, n=20, d=60, sparse=True)
    wide_attached = plan.resolve_feature_moments(wide)
    assert wide_attached.moments is sm.THROUGH_SAMPLES
    # ... and X is stored by columns, the same matrix.
    assert wide_attached.X.format == "csc"
    assert (wide_attached.X != wide.X).nnz == 0
    # More samples than features: products through X (no room for X^T X) keep its rows.
    tall, _, _ = make_problem(seed=3, n=200, d=60, sparse=True)
    tall_attached = plan.resolve_feature_moments(tall, memory_limit=8)
    assert tall_attached.moments is sm.THROUGH_SAMPLES
    assert tall_attached.X.format == tall.X.format == "csr"


# --- the basic model on second moments (every label observed) ------------------------------

@pytest.mark.parametrize("sparse", [False, True])
def test_implicit_v_is_the_closed_form_with_its_statistics(make_problem, sparse):
    data, (U, V, W, Z), X = make_problem(seed=11, missing=False, sparse=sparse, grams="gram")
    data = replace(data, lam_v=0.3)  # a V weight apart from lam2 goes into A as well
    basic = sm.basic_moments(data)
    close(basic.features, X.T @ data.Y.T, 1e-13)
    close(basic.labels, data.Y @ data.Y.T, 1e-13)
    implicit = sm.implicit_v_closed_form(U, W, basic)
    V_star = obj.v_closed_form(U, X @ W, data)
    close(implicit.array(data), V_star, 1e-11)
    close(implicit.XtV, X.T @ V_star.T, 1e-11)
    close(implicit.YVt, data.Y @ V_star.T, 1e-11)
    close(implicit.VVt, V_star @ V_star.T, 1e-11)
    close(implicit.basic_objective(U, W, basic), obj.basic_objective(U, V_star, W, data),
          1e-11)
    # A start V = W^T X is F = W, G = 0.
    start = sm.implicit_v(W, np.zeros((data.Y.shape[0], W.shape[1])), basic)
    close(start.array(data), (X @ W).T, 1e-11)
    close(start.basic_objective(U, W, basic), obj.basic_objective(U, (X @ W).T, W, data),
          1e-11)


def test_implicit_v_decrease_and_group_grams(make_problem):
    data, (U, V, W, Z), X = make_problem(seed=12, missing=False, grams="all")
    basic = sm.basic_moments(data)
    start = sm.implicit_v_closed_form(U + 0.5, 2.0 * W, basic)  # some other V
    new = sm.implicit_v_closed_form(U, W, basic)
    close(start.decrease_to(new, U, basic),
          obj.v_decrease(start.array(data), new.array(data), U, data), 1e-10)
    close(sm.moment_group_grams(W, data.moments.group_grams),
          coupling.group_grams(X @ W, data), 1e-11)


# --- rescaling ----------------------------------------------------------------------------

@pytest.mark.parametrize("lam_v", [0.0, None], ids=["lam_v=0", "paper-lam_v"])
def test_rebalance_is_the_best_rescaling(case, lam_v):
    """(U A, A^-1 V, W A^-T): U V and U W^T X unchanged, the objective lower by exactly the
    returned decrease, and no invertible A' near I improves on the new point."""
    data = replace(case.data, lam_v=lam_v)
    U, V, W, Z = case.point

    def full(U, V, W):
        return case.full(U, V, W, Z) + (0.0 if lam_v is None else
                                        (lam_v - data.lam2) * float(np.sum(V ** 2)))

    U2, V2, W2, P2, decrease = optimizers.rebalance(U, V, W, data, case.X @ W)
    close(P2, case.X @ W2, 1e-10)
    close(U2 @ V2, U @ V, 1e-10)
    close(U2 @ (case.X @ W2).T, U @ (case.X @ W).T, 1e-10)
    assert decrease > 1e-3 * full(U, V, W)  # a random point is far from balanced
    close(full(U2, V2, W2), full(U, V, W) - decrease, 1e-10)
    for _ in range(5):
        A = np.eye(case.k) + 1e-3 * case.rng.standard_normal((case.k, case.k))
        A_inv = np.linalg.inv(A)
        assert full(U2 @ A, A_inv @ V2, W2 @ A_inv.T) >= full(U2, V2, W2)
    # At the best rescaling a second one has nothing left to gain.
    assert optimizers.rebalance(U2, V2, W2, data, P2)[4] <= 1e-10 * full(U2, V2, W2)


def test_rebalance_leaves_a_singular_point(case):
    U, V, W, Z = case.point
    U = U.copy()
    U[:, 0] = 0.0  # U^T U singular: no rescaling is defined
    U2, V2, W2, _, decrease = optimizers.rebalance(U, V, W, case.data, case.X @ W)
    assert decrease == 0.0 and U2 is U and V2 is V and W2 is W
