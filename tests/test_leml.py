"""glocal.baselines.LEML (Yu, Jain, Kar & Dhillon, ICML 2014): the objective it minimizes,
its monotone decrease, that missing entries are ignored, the W-step's gradient and Hessian
against autograd, recovery of a planted low-rank model from 30% of the labels, dense/sparse
agreement, input errors, persistence and scikit-learn's estimator checks."""

import pickle

import autograd
import autograd.numpy as anp
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.metrics import roc_auc_score

from glocal.baselines import leml as leml_module
from glocal.baselines.leml import LEML, leml_fit, w_gradient, w_hessp
from glocal.protocol import sample_observed


def paper_objective(W, H, X, Y, lam):
    """The LEML objective read from the paper, with squared loss, in autograd.numpy.

    ``sum over observed (i, j) of (Y_ij - x_i^T W h_j)^2 + (lam/2)(||W||^2 + ||H||^2)`` with
    Y given as {0, 1, NaN} (n x l) and mapped to +1 / -1 on the observed entries. X dense.
    """
    observed = ~np.isnan(Y)
    signed = np.where(observed, 2.0 * np.nan_to_num(Y) - 1.0, 0.0)
    residual = (signed - anp.dot(anp.dot(X, W), H.T)) * observed
    return anp.sum(residual ** 2) + 0.5 * lam * (anp.sum(W ** 2) + anp.sum(H ** 2))


def planted(seed=0, n=200, d=12, l=9, rank=3, density=1.0):
    """Features and labels from a rank-`rank` linear model: Y = [X W* H*^T > 0]."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < density)
    W, H = rng.standard_normal((d, rank)), rng.standard_normal((l, rank))
    return X, (X @ W @ H.T > 0).astype(float)


def _signed(Y):
    observed = ~np.isnan(Y)
    M = observed.astype(float)
    return np.where(observed, 2.0 * np.nan_to_num(Y) - 1.0, 0.0), M


# --- the objective and its monotone decrease ----------------------------------------------

@pytest.mark.parametrize("observed", [1.0, 0.3])
@pytest.mark.parametrize("case", ["dense", "sparse", "wide", "jacobi"])
def test_objective_history_is_monotone_and_is_the_paper_objective(case, observed, monkeypatch):
    n, d = (40, 60) if case == "wide" else (150, 10)  # "wide": n < d, the thin eigenbasis
    X, Y = planted(seed=1, n=n, d=d, density=0.5)
    Y = sample_observed(Y, observed, random_state=1) if observed < 1 else Y
    if case == "jacobi":
        monkeypatch.setattr(leml_module, "_MAX_RANK", 0)  # diagonal preconditioner
    Xfit = sp.csr_matrix(X) if case == "sparse" else X
    est = LEML(n_components=3, lam=2.0, max_iter=40, tol=0, cg_max_iter=5,
               random_state=0).fit(Xfit, Y)
    history = est.objective_history_
    assert est.n_iter_ == 40 and history.shape == (41,)
    assert np.all(np.diff(history) <= 1e-10 * history[:-1])
    assert history[-1] < 0.5 * history[0]
    assert history[-1] == pytest.approx(paper_objective(est.W_, est.H_, X, Y, 2.0), rel=1e-10)


def test_stops_at_tol():
    X, Y = planted(seed=2)
    est = LEML(n_components=3, lam=1.0, tol=1e-3, max_iter=500, random_state=0).fit(X, Y)
    h = est.objective_history_
    assert est.n_iter_ < 500 and len(h) == est.n_iter_ + 1
    assert h[-2] - h[-1] <= 1e-3 * h[-2]
    assert np.all(h[:-2] - h[1:-1] > 1e-3 * h[:-2])


def test_fit_is_a_stationary_point_when_converged():
    X, Y = planted(seed=3)
    Y = sample_observed(Y, 0.5, random_state=3)
    est = LEML(n_components=3, lam=1.0, tol=1e-12, max_iter=3000, cg_max_iter=50,
               random_state=0).fit(X, Y)
    grad_W, grad_H = autograd.grad(paper_objective, (0, 1))(est.W_, est.H_, X, Y, 1.0)
    scale = np.linalg.norm(autograd.grad(paper_objective, 0)(0 * est.W_, est.H_, X, Y, 1.0))
    assert np.linalg.norm(grad_W) < 1e-4 * scale
    assert np.linalg.norm(grad_H) < 1e-4 * scale


# --- missing entries ------------------------------------------------------------------------

def test_changing_labels_at_missing_entries_does_not_change_the_fit():
    X, Y = planted(seed=4)
    Y = sample_observed(Y, 0.3, random_state=4)
    Ys, M = _signed(Y)
    rng = np.random.default_rng(0)
    garbage = Ys + (1 - M) * rng.choice([-1.0, 1.0, 5.0], size=Ys.shape)
    fits = [leml_fit(X, labels, M, 3, 1.0, 10, 0.0, 20, np.random.RandomState(0))
            for labels in (Ys, garbage)]
    for a, b in zip(fits[0], fits[1]):
        np.testing.assert_array_equal(a, b)


def test_hidden_entries_of_two_label_matrices_give_the_same_fit():
    X, Y = planted(seed=5)
    mask = np.random.default_rng(5).random(Y.shape) < 0.3
    Y_flipped = np.where(mask, Y, 1 - Y)  # differs from Y exactly on the hidden entries
    fits = [LEML(n_components=3, random_state=0).fit(X, np.where(mask, labels, np.nan))
            for labels in (Y, Y_flipped)]
    np.testing.assert_array_equal(fits[0].W_, fits[1].W_)
    np.testing.assert_array_equal(fits[0].H_, fits[1].H_)
    # ...while treating the hidden entries as negatives is a different problem
    negatives = LEML(n_components=3, random_state=0).fit(X, np.where(mask, Y, 0.0))
    assert not np.allclose(negatives.W_, fits[0].W_)


def test_label_without_observed_entries_scores_zero():
    X, Y = planted(seed=6)
    Y = sample_observed(Y, 0.5, random_state=6)
    Y[:, 2] = np.nan
    with pytest.warns(UserWarning, match="no observed entry"):
        est = LEML(n_components=3, random_state=0).fit(X, Y)
    np.testing.assert_array_equal(est.H_[2], 0.0)
    assert np.all(np.isfinite(est.decision_function(X)))


# --- the W-step: gradient, Hessian, CG ------------------------------------------------------

@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("observed", [1.0, 0.4])
def test_w_gradient_and_hessian_match_autograd(sparse, observed):
    rng = np.random.default_rng(7)
    X, Y = planted(seed=7, n=30, d=8, l=6, density=0.6)
    Y = sample_observed(Y, observed, random_state=7) if observed < 1 else Y
    Ys, M = _signed(Y)
    M = None if observed == 1 else M
    W, H, S = rng.standard_normal((8, 3)), rng.standard_normal((6, 3)), rng.standard_normal((8, 3))
    lam = 0.7
    Xfit = sp.csr_matrix(X) if sparse else X
    expected = autograd.grad(paper_objective, 0)(W, H, X, Y, lam)
    np.testing.assert_allclose(w_gradient(W, H, Xfit, Ys, M, lam), expected, rtol=1e-10,
                               atol=1e-10)

    def directional(Wv):
        return anp.sum(autograd.grad(paper_objective, 0)(Wv, H, X, Y, lam) * S)

    np.testing.assert_allclose(w_hessp(S, H, Xfit, M, lam), autograd.grad(directional)(W),
                               rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("observed", [1.0, 0.3])
@pytest.mark.parametrize("case", ["tall", "wide", "jacobi"])
def test_w_step_reduces_the_gradient(case, observed, monkeypatch):
    """The CG W-step stops when the W-gradient has fallen 100-fold; with complete labels and
    the eigenbasis preconditioner it is exact after one CG step."""
    if case == "jacobi":
        monkeypatch.setattr(leml_module, "_MAX_RANK", 0)
    n, d = (30, 50) if case == "wide" else (120, 10)
    X, Y = planted(seed=8, n=n, d=d, l=7, density=0.7)
    Y = sample_observed(Y, observed, random_state=8) if observed < 1 else Y
    Ys, M = _signed(Y)
    M = None if observed == 1 else M
    rng = np.random.default_rng(8)
    W, H = rng.standard_normal((d, 3)), rng.standard_normal((7, 3))
    XT = np.ascontiguousarray(X.T)
    pre = leml_module._Preconditioner(X, XT, M, 1.5)
    before = np.linalg.norm(w_gradient(W, H, X, Ys, M, 1.5))
    W_new = leml_module._w_step(W, H, X, XT, Ys, M, 1.5, 1, pre)  # one CG step
    if observed == 1 and case != "jacobi":
        assert np.linalg.norm(w_gradient(W_new, H, X, Ys, M, 1.5)) < 1e-9 * before
    W_new = leml_module._w_step(W, H, X, XT, Ys, M, 1.5, 1000, pre)
    assert np.linalg.norm(w_gradient(W_new, H, X, Ys, M, 1.5)) <= 1.000001e-2 * before
    assert (paper_objective(W_new, H, X, Y, 1.5) < paper_objective(W, H, X, Y, 1.5))


def test_h_step_is_exact():
    X, Y = planted(seed=9)
    Y = sample_observed(Y, 0.3, random_state=9)
    Ys, M = _signed(Y)
    W = np.random.default_rng(9).standard_normal((X.shape[1], 4))
    H = leml_module._h_step(W, X, Ys, M, 0.8)
    grad_H = autograd.grad(paper_objective, 1)(W, H, X, Y, 0.8)
    assert np.linalg.norm(grad_H) < 1e-9 * np.linalg.norm(Ys)


# --- a planted low-rank model ---------------------------------------------------------------

def test_recovers_a_planted_low_rank_model_from_30_percent_of_the_labels():
    X, Y = planted(seed=10, n=1000, d=40, l=30, rank=3)
    X_train, Y_train, X_test, Y_test = X[:600], Y[:600], X[600:], Y[600:]
    Y_observed = sample_observed(Y_train, 0.3, random_state=10)
    auc = {}
    for name, labels in [("full", Y_train), ("30%", Y_observed)]:
        est = LEML(n_components=3, random_state=0).fit(X_train, labels)
        auc[name] = roc_auc_score(Y_test.ravel(), est.decision_function(X_test).ravel())
    assert auc["30%"] > 0.97
    assert auc["30%"] > auc["full"] - 0.02


# --- dense and sparse X -------------------------------------------------------------------

@pytest.mark.parametrize("observed", [1.0, 0.4])
@pytest.mark.parametrize("density", [0.5, 0.1])  # 0.1: dense X multiplied as CSR internally
def test_sparse_matches_dense(density, observed):
    X, Y = planted(seed=11, n=120, d=15, density=density)
    Y = sample_observed(Y, observed, random_state=11) if observed < 1 else Y
    dense = LEML(n_components=3, lam=1.0, max_iter=30, random_state=0).fit(X, Y)
    sparse = LEML(n_components=3, lam=1.0, max_iter=30, random_state=0).fit(
        sp.csr_matrix(X), Y)
    np.testing.assert_allclose(sparse.W_, dense.W_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(sparse.H_, dense.H_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(sparse.objective_history_, dense.objective_history_, rtol=1e-9)
    np.testing.assert_allclose(sparse.decision_function(sp.csc_matrix(X)),
                               dense.decision_function(X), rtol=1e-7, atol=1e-9)


# --- estimator API ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def fitted():
    X, Y = planted(seed=12)
    return LEML(n_components=3, random_state=0).fit(X, sample_observed(Y, 0.5, random_state=0))


def test_fitted_attributes_and_scores(fitted):
    X, _ = planted(seed=12)
    assert fitted.W_.shape == (12, 3) and fitted.H_.shape == (9, 3)
    assert fitted.n_features_in_ == 12
    np.testing.assert_allclose(fitted.decision_function(X), X @ fitted.W_ @ fitted.H_.T)
    assert set(np.unique(fitted.predict(X))) <= {0, 1}
    np.testing.assert_array_equal(fitted.predict(X), fitted.decision_function(X) > 0)


def test_defaults():
    assert LEML().get_params() == {"n_components": 10, "lam": 30.0, "max_iter": 100,
                                   "tol": 1e-4, "random_state": None, "cg_max_iter": 20}


def test_same_random_state_same_fit():
    X, Y = planted(seed=13)
    a, b = (LEML(n_components=3, random_state=3).fit(X, Y) for _ in range(2))
    np.testing.assert_array_equal(a.W_, b.W_)
    np.testing.assert_array_equal(a.H_, b.H_)


def test_pickle_and_clone(fitted):
    X, _ = planted(seed=12)
    loaded = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(loaded.decision_function(X), fitted.decision_function(X))
    np.testing.assert_array_equal(loaded.objective_history_, fitted.objective_history_)
    fresh = clone(fitted)
    assert fresh.get_params() == fitted.get_params()
    assert not hasattr(fresh, "W_")
    with pytest.raises(NotFittedError):
        fresh.decision_function(X)


@pytest.mark.parametrize("params", [
    {"n_components": 0}, {"n_components": 1.5}, {"lam": 0.0}, {"lam": -1.0},
    {"max_iter": 0}, {"tol": -1e-3}, {"cg_max_iter": 0}, {"random_state": "seed"},
])
def test_bad_parameters(params):
    X, Y = planted(seed=14, n=30)
    with pytest.raises(ValueError):
        LEML(**params).fit(X, Y)


def test_bad_input():
    X, Y = planted(seed=15, n=30)
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError):
        LEML().fit(X_nan, Y)
    with pytest.raises(ValueError, match="only 0, 1 or NaN"):
        LEML().fit(X, 2 * Y)
    with pytest.raises(ValueError, match="different numbers of rows"):
        LEML().fit(X, Y[:-1])
    with pytest.raises(ValueError, match="every entry of Y is missing"):
        LEML().fit(X, np.full_like(Y, np.nan))
    with pytest.raises(ValueError, match="2-D"):
        LEML().fit(X, Y[:, 0])
    est = LEML(n_components=2, random_state=0).fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        est.decision_function(X[:, :-1])
