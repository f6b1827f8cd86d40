"""ML-LRC (glocal.baselines.mllrc): derivatives, solver, low-rank correlations, missing labels.

The reference objective below is written from the formula in the module docstring with
autograd.numpy and shares no code with glocal.baselines.mllrc:

    1/2 ||X W - Y S||^2 + beta/2 ||J o (Y S - Y)||^2 + lam/2 ||W||^2 + gamma ||S||_*
"""

import itertools
import pickle

import autograd.numpy as anp
import numpy as np
import pytest
import scipy.sparse as sp
from autograd import grad
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score

from glocal.baselines import mllrc as mm
from glocal.baselines.mllrc import MLLRC
from glocal.metrics import average_precision
from glocal.protocol import sample_observed


def reference_smooth(W, S, X, Y, J, lam, beta):
    """The smooth part of the objective, read from the formula (X dense, Y zero at missing)."""
    YS = anp.dot(Y, S)
    observed = YS - Y if J is None else J * (YS - Y)
    return (0.5 * anp.sum((anp.dot(X, W) - YS) ** 2) + 0.5 * beta * anp.sum(observed ** 2)
            + 0.5 * lam * anp.sum(W ** 2))


def reference_objective(W, S, X, Y, J, lam, beta, gamma):
    return (reference_smooth(W, S, X, Y, J, lam, beta)
            + gamma * np.sum(np.linalg.svd(S, compute_uv=False)))


def random_problem(seed=0, n=40, d=7, l=5, missing=True, sparse=False):
    """Sparse-ish features, signed labels (0 where missing) and the mask (n x l or None)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.5)
    Y = np.where(X @ rng.standard_normal((d, l)) + rng.standard_normal((n, l)) > 0, 1.0, -1.0)
    J = None
    if missing:
        J = (rng.random((n, l)) < 0.6).astype(float)
        Y = Y * J
    return (sp.csr_matrix(X) if sparse else X), X, Y, J


def planted(seed=0, n=500, d=20, l=12, k=3, noise=0.3):
    """Labels driven by k latent factors of the features: strongly correlated, low rank."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    scores = X @ rng.standard_normal((d, k)) @ rng.standard_normal((k, l))
    scores += noise * scores.std() * rng.standard_normal((n, l))
    Y = (scores > np.quantile(scores, 0.7, axis=0)).astype(float)
    return X, Y


def numerical_rank(S, rel=1e-8):
    sigma = np.linalg.svd(S, compute_uv=False)
    return int(np.sum(sigma > rel * max(sigma[0], 1e-300)))


def close(actual, expected, rtol=1e-9):
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale)


CASES = [(m, s) for m in (True, False) for s in (False, True)]
IDS = [("missing" if m else "full") + "-" + ("csr" if s else "dense") for m, s in CASES]


# --- derivatives of the hand-written parts against autograd ---------------------------------

@pytest.mark.parametrize("missing, sparse", CASES, ids=IDS)
def test_gradients_match_autograd(missing, sparse):
    X, X_dense, Y, J = random_problem(seed=1, missing=missing, sparse=sparse)
    rng = np.random.default_rng(2)
    W, S = rng.standard_normal((7, 5)), rng.standard_normal((5, 5))
    lam, beta = 0.7, 1.3
    grad_W, grad_S = mm.mllrc_smooth_gradients(X, Y, J, W, S, lam, beta)
    close(grad_W, grad(reference_smooth, 0)(W, S, X_dense, Y, J, lam, beta))
    close(grad_S, grad(reference_smooth, 1)(W, S, X_dense, Y, J, lam, beta))
    close(mm.mllrc_objective(X, Y, J, W, S, lam, beta, 0.4),
          reference_objective(W, S, X_dense, Y, J, lam, beta, 0.4))


@pytest.mark.parametrize("missing, sparse", CASES, ids=IDS)
def test_reduced_problem_is_the_objective_at_the_best_W(missing, sparse):
    """G(S) = F(Z S, S) minus the nuclear norm, its gradient and Hessian, against autograd."""
    X, X_dense, Y, J = random_problem(seed=3, missing=missing, sparse=sparse)
    lam, beta = 0.9, 2.0
    Z = mm.ridge_coefficients(X, Y, lam)
    R = Y - X_dense @ Z
    problem = mm._ReducedProblem(R.T @ R + lam * Z.T @ Z, Y, J, beta)
    rng = np.random.default_rng(4)
    S, D = rng.standard_normal((5, 5)), rng.standard_normal((5, 5))

    def reduced(S):  # the smooth objective with W eliminated by its closed form
        return reference_smooth(anp.dot(Z, S), S, X_dense, Y, J, lam, beta)

    P = problem.product(S)
    close(problem.value(S, P), reduced(S))
    close(problem.gradient(S, P), grad(reduced)(S))
    hvp = grad(lambda S: anp.sum(grad(reduced)(S) * D))(S)
    close(problem.apply_hessian(D), hvp)
    # Z S is the best W for this S: the W-gradient of the objective vanishes there.
    grad_W = grad(reference_smooth, 0)(Z @ S, S, X_dense, Y, J, lam, beta)
    assert np.max(np.abs(grad_W)) <= 1e-10 * np.max(np.abs(X_dense.T @ Y @ S))


@pytest.mark.parametrize("shape", [(60, 8), (8, 30)], ids=["n>d", "n<d"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("path", ["cholesky", "conjugate-gradients"])
def test_ridge_coefficients_every_path(shape, sparse, path, monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.standard_normal(shape) * (rng.random(shape) < 0.6)
    B = rng.standard_normal((shape[0], 4))
    expected = np.linalg.solve(X.T @ X + 0.5 * np.eye(shape[1]), X.T @ B)
    if path == "conjugate-gradients":
        monkeypatch.setattr(mm, "_GRAM_LIMIT", 0)
    Z = mm.ridge_coefficients(sp.csr_matrix(X) if sparse else X, B, 0.5)
    close(Z, expected, rtol=1e-8)


@pytest.mark.parametrize("rank", [None, 2])
def test_prox_nuclear_is_the_proximal_operator(rank):
    rng = np.random.default_rng(6)
    V = rng.standard_normal((6, 6))
    S, nuclear = mm.prox_nuclear(V, 0.8, rank)
    sigma_V = np.linalg.svd(V, compute_uv=False)
    expected = np.maximum(sigma_V - 0.8, 0)
    if rank is not None:
        expected[rank:] = 0
    close(np.linalg.svd(S, compute_uv=False), expected, rtol=1e-10)
    assert nuclear == pytest.approx(expected.sum())

    def value(T):
        return 0.5 * np.sum((T - V) ** 2) + 0.8 * np.sum(np.linalg.svd(T, compute_uv=False))

    # no feasible point nearby does better
    for _ in range(50):
        T, _ = mm.prox_nuclear(S + 0.05 * rng.standard_normal(S.shape), 0.0, rank)
        assert value(T) >= value(S) - 1e-12


# --- the solver ------------------------------------------------------------------------------

@pytest.mark.parametrize("missing", [True, False], ids=["missing", "full"])
@pytest.mark.parametrize("rank", [None, 2])
def test_objective_decreases_and_history_is_the_objective(missing, rank):
    X, X_dense, Y, J = random_problem(seed=7, n=80, missing=missing)
    result = mm.mllrc_fit(X, Y, J, lam=0.5, beta=2.0, gamma=3.0, rank=rank, max_iter=300,
                          tol=1e-9, random_state=0)
    history = result["objective_history"]
    assert len(history) == result["n_iter"] + 1 >= 3
    assert np.all(np.diff(history) <= 1e-10 * history[0])
    assert history[-1] < history[0]
    close(history[-1], reference_objective(result["W"], result["S"], X_dense, Y, J, 0.5, 2.0,
                                           3.0))
    close(result["W"], result["Z"] @ result["S"])


@pytest.mark.parametrize("missing", [True, False], ids=["missing", "full"])
def test_solution_is_optimal(missing):
    """Without the nuclear norm the optimum has a closed form; with it, S is a fixed point
    of the proximal-gradient map and W is the best classifier for S."""
    X, X_dense, Y, J = random_problem(seed=8, n=80, missing=missing)
    lam, beta = 0.5, 2.0
    Jm = np.ones_like(Y) if J is None else J
    result = mm.mllrc_fit(X, Y, J, lam=lam, beta=beta, gamma=0.0, max_iter=5000, tol=1e-12)
    assert result["converged"]
    # gamma = 0: column j of S solves (M + beta Y^T diag(J_j) Y) s = beta Y^T diag(J_j) y_j
    Z = np.linalg.solve(X_dense.T @ X_dense + lam * np.eye(7), X_dense.T @ Y)
    M = (Y - X_dense @ Z).T @ (Y - X_dense @ Z) + lam * Z.T @ Z
    expected = np.column_stack([
        np.linalg.solve(M + beta * Y.T @ (Jm[:, [j]] * Y), beta * Y.T @ (Jm[:, j] * Y[:, j]))
        for j in range(Y.shape[1])])
    close(result["S"], expected, rtol=1e-7)

    gamma = 4.0
    result = mm.mllrc_fit(X, Y, J, lam=lam, beta=beta, gamma=gamma, max_iter=5000, tol=1e-12)
    W, S = result["W"], result["S"]
    grad_W, grad_S = mm.mllrc_smooth_gradients(X, Y, J, W, S, lam, beta)
    assert np.max(np.abs(grad_W)) <= 1e-10 * np.max(np.abs(X_dense.T @ Y @ S))
    step = 1.0 / result["lipschitz"]
    fixed_point, _ = mm.prox_nuclear(S - step * grad_S, step * gamma)
    close(fixed_point, S, rtol=1e-7)
    # and no random nearby point has a lower objective
    best = reference_objective(W, S, X_dense, Y, J, lam, beta, gamma)
    rng = np.random.default_rng(9)
    for _ in range(20):
        S2 = S + 1e-3 * rng.standard_normal(S.shape)
        assert reference_objective(Z @ S2, S2, X_dense, Y, J, lam, beta, gamma) >= best - 1e-9


# --- the learned correlation is low rank ------------------------------------------------------

@pytest.mark.parametrize("rank", [1, 2, 4])
def test_rank_cap(rank):
    X, Y = planted(seed=10, n=200)
    Y_obs = sample_observed(Y, 0.3, random_state=0)
    model = MLLRC(rank=rank, gamma=1.0).fit(X, Y_obs)
    assert numerical_rank(model.S_) <= rank
    assert model.rank_ == numerical_rank(model.S_, rel=1e-10) <= rank
    assert np.linalg.matrix_rank(model.W_) <= rank


def test_rank_decreases_with_the_nuclear_weight():
    X, Y = planted(seed=11, n=200)
    Y_obs = sample_observed(Y, 0.3, random_state=0)
    gammas = (0.0, 300.0, 1500.0, 2500.0, 4000.0, 8000.0, 1e6)
    ranks = [numerical_rank(MLLRC(gamma=g, tol=1e-7).fit(X, Y_obs).S_) for g in gammas]
    assert ranks[0] == Y.shape[1]
    assert all(a >= b for a, b in itertools.pairwise(ranks)), ranks
    assert ranks[-2] <= Y.shape[1] // 3, ranks
    assert ranks[-1] == 0  # beyond the largest singular value of the gradient at 0: S = 0


# --- missing labels ----------------------------------------------------------------------------

def test_values_at_missing_entries_are_ignored():
    X, _, Y, J = random_problem(seed=12, n=70, missing=True)
    rng = np.random.default_rng(13)
    garbage = np.where(J > 0, Y, rng.standard_normal(Y.shape) * 5)
    a = mm.mllrc_fit(X, Y, J, gamma=2.0, random_state=0)
    b = mm.mllrc_fit(X, garbage, J, gamma=2.0, random_state=0)
    np.testing.assert_array_equal(a["S"], b["S"])
    np.testing.assert_array_equal(a["W"], b["W"])
    np.testing.assert_array_equal(a["objective_history"], b["objective_history"])


def test_estimator_uses_only_observed_entries():
    """NaN labels reach the solver as the mask J; flipping the hidden truth changes nothing."""
    X, Y = planted(seed=14, n=150)
    Y_obs = sample_observed(Y, 0.3, random_state=1)
    hidden = np.isnan(Y_obs)
    flipped = np.where(hidden, 1 - Y, Y)
    flipped_obs = np.where(hidden, np.nan, flipped)
    a = MLLRC(random_state=0).fit(X, Y_obs)
    b = MLLRC(random_state=0).fit(X, flipped_obs)
    np.testing.assert_array_equal(a.S_, b.S_)
    result = mm.mllrc_fit(X, 2 * np.nan_to_num(Y_obs) - 1, (~hidden).astype(float),
                          lam=a.lam, beta=a.beta, gamma=a.gamma, random_state=0)
    np.testing.assert_allclose(a.W_, result["W"], rtol=1e-12, atol=1e-14)


def test_planted_correlated_labels_with_30_percent_observed():
    X, Y = planted(seed=15, n=800)
    X_train, X_test, Y_train, Y_test = X[:500], X[500:], Y[:500], Y[500:]
    Y_obs = sample_observed(Y_train, 0.3, random_state=0)
    hidden = np.isnan(Y_obs)
    model = MLLRC(lam=1.0, beta=10.0, gamma=1000.0, random_state=0).fit(X_train, Y_obs)
    # the hidden training labels, ranked by the fitted scores
    auc_hidden = roc_auc_score(Y_train[hidden], model.decision_function(X_train)[hidden])
    # the labels of unseen samples
    scores = model.decision_function(X_test)
    auc_test = roc_auc_score(Y_test.ravel(), scores.ravel())
    ap = average_precision(Y_test, scores)
    rng = np.random.default_rng(0)
    chance_ap = np.mean([average_precision(Y_test, rng.random(Y_test.shape))
                         for _ in range(5)])
    assert auc_hidden > 0.85 and auc_test > 0.85, (auc_hidden, auc_test)
    assert ap > chance_ap + 0.3, (ap, chance_ap)
    # the label correlations are learned low rank (3 latent factors drive the 12 labels)
    assert model.rank_ <= Y.shape[1] // 2, model.rank_


def test_unobserved_label_is_left_out():
    """A label without any observed entry carries no correlation information: its row and
    column of S_ are zero (zero scores) and the other labels are fitted as without it."""
    X, Y = planted(seed=16, n=200)
    Y_obs = sample_observed(Y, 0.5, random_state=0)
    Y_obs[:, 0] = np.nan
    with pytest.warns(UserWarning, match="no observed entry"):
        model = MLLRC(gamma=1000.0, tol=1e-10, random_state=0).fit(X, Y_obs)
    without = MLLRC(gamma=1000.0, tol=1e-10, random_state=0).fit(X, Y_obs[:, 1:])
    tiny = 1e-12 * np.max(np.abs(model.S_))
    assert np.max(np.abs(model.S_[0])) <= tiny and np.max(np.abs(model.S_[:, 0])) <= tiny
    assert np.max(np.abs(model.decision_function(X)[:, 0])) <= 1e-9
    close(model.S_[1:, 1:], without.S_, rtol=1e-6)
    close(model.objective_history_[-1], without.objective_history_[-1], rtol=1e-8)


# --- estimator plumbing ----------------------------------------------------------------------

@pytest.mark.parametrize("missing", [True, False], ids=["missing", "full"])
def test_sparse_matches_dense(missing):
    X, Y = planted(seed=17, n=150)
    X = X * (np.random.default_rng(0).random(X.shape) < 0.4)
    Y = sample_observed(Y, 0.3, random_state=0) if missing else Y
    dense = MLLRC(gamma=20.0, tol=1e-9, random_state=0).fit(X, Y)
    sparse = MLLRC(gamma=20.0, tol=1e-9, random_state=0).fit(sp.csr_matrix(X), Y)
    close(sparse.S_, dense.S_, rtol=1e-7)
    close(sparse.W_, dense.W_, rtol=1e-7)
    close(sparse.decision_function(sp.csr_matrix(X)), dense.decision_function(X), rtol=1e-7)


def test_fitted_attributes_and_predict():
    X, Y = planted(seed=18, n=120)
    model = MLLRC().fit(X, Y)
    l = Y.shape[1]
    assert model.W_.shape == (X.shape[1], l) and model.S_.shape == (l, l)
    assert model.ridge_coef_.shape == (X.shape[1], l)
    close(model.W_, model.ridge_coef_ @ model.S_)
    assert model.n_iter_ == len(model.objective_history_) - 1
    np.testing.assert_array_equal(model.intercept_, 0)
    close(model.decision_function(X), X @ model.W_)
    np.testing.assert_array_equal(model.predict(X), (X @ model.W_ > 0).astype(int))
    assert 0 <= model.score(X, Y) <= 1


def test_intercept_is_a_constant_feature():
    X, Y = planted(seed=19, n=120)
    with_bias = MLLRC(fit_intercept=True, intercept_scaling=2.0, random_state=0).fit(X, Y)
    augmented = MLLRC(random_state=0).fit(np.hstack([X, np.full((len(X), 1), 2.0)]), Y)
    close(with_bias.W_, augmented.W_[:-1])
    close(with_bias.intercept_, 2.0 * augmented.W_[-1])
    close(with_bias.decision_function(X),
          augmented.decision_function(np.hstack([X, np.full((len(X), 1), 2.0)])))


def test_max_iter_reached_warns():
    X, Y = planted(seed=20, n=100)
    with pytest.warns(ConvergenceWarning):
        MLLRC(max_iter=1, tol=0.0).fit(X, Y)


@pytest.mark.parametrize("params, X_change, Y_change, match", [
    (dict(gamma=-1.0), None, None, "gamma"),
    (dict(lam=0.0), None, None, "lam"),
    (dict(beta=0.0), None, None, "beta"),
    (dict(rank=0), None, None, "rank"),
    (dict(max_iter=0), None, None, "max_iter"),
    ({}, "nan", None, "NaN"),
    ({}, None, "two", "only 0, 1 or NaN"),
    ({}, None, "rows", "different numbers of rows"),
    ({}, None, "all-missing", "every entry of Y is missing"),
    ({}, None, "1d", "2-D"),
])
def test_bad_input_raises(params, X_change, Y_change, match):
    X, Y = planted(seed=21, n=40)
    if X_change == "nan":
        X = X.copy()
        X[0, 0] = np.nan
    if Y_change == "two":
        Y = Y.copy()
        Y[0, 0] = 2
    elif Y_change == "rows":
        Y = Y[:-1]
    elif Y_change == "all-missing":
        Y = np.full(Y.shape, np.nan)
    elif Y_change == "1d":
        Y = Y[:, 0]
    with pytest.raises(ValueError, match=match):
        MLLRC(**params).fit(X, Y)


def test_predict_checks_features():
    X, Y = planted(seed=22, n=60)
    model = MLLRC().fit(X, Y)
    with pytest.raises(ValueError, match="expecting 20 features"):
        model.decision_function(X[:, :5])


def test_pickle_and_clone():
    X, Y = planted(seed=23, n=100)
    model = MLLRC(gamma=50.0, rank=3, random_state=4).fit(X, sample_observed(Y, 0.3, 0))
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(restored.S_, model.S_)
    fresh = clone(model)
    assert fresh.get_params() == model.get_params()
    assert not hasattr(fresh, "S_")
    refit = fresh.fit(X, sample_observed(Y, 0.3, 0))
    np.testing.assert_allclose(refit.S_, model.S_, rtol=1e-12, atol=1e-14)
