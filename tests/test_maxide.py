"""MAXIDE (matrix completion with side information) and the two-stage methods MBR, MMLLOC."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from glocal.baselines import maxide
from glocal.baselines.br import BR
from glocal.baselines.maxide import (
    MAXIDE,
    maxide_objective,
    maxide_solve,
    orthonormal_basis,
    singular_value_threshold,
)
from glocal.baselines.two_stage import MBR, MMLLOC, TwoStage


def _planted(seed=0, n=300, d=20, l=15, rank=3, observed=0.3):
    """Labels that are the sign of a rank-3 linear function of X, 30% of them observed."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    scores = X @ rng.standard_normal((d, rank)) @ rng.standard_normal((rank, l))
    Y_true = (scores > 0).astype(float)
    seen = rng.random((n, l)) < observed
    return X, scores, Y_true, seen, np.where(seen, Y_true, np.nan)


@pytest.fixture(scope="module")
def planted():
    return _planted()


# --- the solver ------------------------------------------------------------------------------

def test_solver_recovers_planted_low_rank_matrix(planted):
    """A real rank-3 matrix in the span of X, 30% observed: near exact recovery."""
    X, scores, _, seen, _ = planted
    M = scores / np.abs(scores).max()
    A, P = orthonormal_basis(X)
    np.testing.assert_allclose(A.T @ A, np.eye(A.shape[1]), atol=1e-10)
    np.testing.assert_allclose(X @ P, A, atol=1e-10)
    Z, _, _ = maxide_solve(A, np.where(seen, M, 0.0), seen.astype(float), 1e-4,
                                 max_iter=2000, tol=1e-12)
    missing = ~seen
    error = np.linalg.norm((A @ Z - M)[missing]) / np.linalg.norm(M[missing])
    assert error < 1e-3
    assert np.linalg.matrix_rank(Z, tol=1e-2 * np.linalg.norm(Z, 2)) == 3
    # without side information (A = I) the same entries are recovered far worse
    Z0, _, _ = maxide_solve(None, np.where(seen, M, 0.0), seen.astype(float), 1e-4,
                            max_iter=2000, tol=1e-12)
    error0 = np.linalg.norm((Z0 - M)[missing]) / np.linalg.norm(M[missing])
    assert error0 > 10 * error


def test_objective_history_is_the_objective_and_never_increases(planted):
    X, _, _, _, Y = planted
    model = MAXIDE(lam=0.5, tol=0.0, max_iter=10).fit(X, Y)
    history = model.objective_history_
    assert history.shape == (model.n_iter_ + 1,) and model.n_iter_ == 10
    assert np.all(np.diff(history) <= 1e-10 * history[0])
    assert history[-1] < 0.5 * history[0]
    A, _ = orthonormal_basis(X, 100)
    seen = ~np.isnan(Y)
    Y_signed = np.where(seen, 2 * np.nan_to_num(Y) - 1, 0.0)
    assert history[-1] == pytest.approx(
        maxide_objective(model.Z_, A, Y_signed, seen.astype(float), 0.5), rel=1e-10)
    assert history[0] == pytest.approx(0.5 * seen.sum())  # Z = 0: every residual is +-1


def test_solution_is_optimal():
    """The proximal-gradient fixed point: Z = SVT(Z - grad, lam) at the returned Z."""
    X, _, _, seen, Y = _planted(seed=1, n=120, d=10, l=8)
    lam = 2.0
    model = MAXIDE(lam=lam, tol=1e-13, max_iter=5000).fit(X, Y)
    A, _ = orthonormal_basis(X)
    Y_signed = np.where(seen, 2 * np.nan_to_num(Y) - 1, 0.0)
    grad = A.T @ (seen * (A @ model.Z_ - Y_signed))
    fixed, _ = singular_value_threshold(model.Z_ - grad, lam)
    np.testing.assert_allclose(fixed, model.Z_, atol=1e-6)


def test_complete_labels_give_the_closed_form(planted):
    """With nothing missing, the minimizer is SVT(A^T Y, lam) (A orthonormal)."""
    X, _, Y_true, _, _ = planted
    model = MAXIDE(lam=3.0).fit(X, Y_true)
    A, _ = orthonormal_basis(X)
    expected, _ = singular_value_threshold(A.T @ (2 * Y_true - 1), 3.0)
    np.testing.assert_allclose(model.Z_, expected, atol=1e-10)
    np.testing.assert_array_equal(model.Y_completed_, Y_true)


# --- the estimator ---------------------------------------------------------------------------

def test_recovers_missing_labels_better_than_trivial_and_than_without_side_information(planted):
    X, _, Y_true, seen, Y = planted
    missing = ~seen
    model = MAXIDE().fit(X, Y)
    auc = roc_auc_score(Y_true[missing], model.completed_scores_[missing])
    accuracy = np.mean(model.Y_completed_[missing] == Y_true[missing])
    trivial = np.broadcast_to(np.nanmean(Y, axis=0), Y.shape)  # each label's observed rate
    auc_trivial = roc_auc_score(Y_true[missing], trivial[missing])
    plain = MAXIDE(side_information=False).fit(X, Y)
    auc_plain = roc_auc_score(Y_true[missing], plain.completed_scores_[missing])
    assert auc > 0.97 and accuracy > 0.9
    assert auc_trivial < 0.6
    assert auc > auc_plain + 0.05
    # the scores are a linear model of X: decision_function on the training rows is the fit
    np.testing.assert_allclose(model.decision_function(X), model.completed_scores_, atol=1e-10)
    assert model.coef_.shape == (Y.shape[1], X.shape[1])


def test_generalizes_to_new_samples():
    X, _, Y_true, _, Y = _planted(seed=2, n=400)
    model = MAXIDE().fit(X[:300], Y[:300])
    auc = roc_auc_score(Y_true[300:].ravel(), model.decision_function(X[300:]).ravel())
    assert auc > 0.95


def test_missing_entries_are_ignored(planted):
    """What is hidden behind a NaN cannot matter: the solver never reads it."""
    X, _, Y_true, seen, _ = planted
    rng = np.random.default_rng(5)
    Y_signed = np.where(seen, 2 * Y_true - 1, 0.0)
    garbage = np.where(seen, Y_signed, rng.standard_normal(Y_signed.shape) * 10)
    A, _ = orthonormal_basis(X, 10)
    Z1, h1, _ = maxide_solve(A, Y_signed, seen.astype(float), 1.0)
    Z2, h2, _ = maxide_solve(A, garbage, seen.astype(float), 1.0)
    np.testing.assert_array_equal(Z1, Z2)
    np.testing.assert_array_equal(h1, h2)
    # and the estimator: flipping every label at the missing positions changes nothing
    flipped = np.where(seen, Y_true, np.nan)
    other = np.where(seen, Y_true, 1 - Y_true)
    a = MAXIDE().fit(X, flipped)
    b = MAXIDE().fit(X, np.where(seen, other, np.nan))
    np.testing.assert_array_equal(a.Z_, b.Z_)


def test_fill_keeps_observed_entries(planted):
    X, _, Y_true, seen, Y = planted
    model = MAXIDE(lam=10.0).fit(X, Y)
    filled = model.fill(Y)
    assert not np.isnan(filled).any() and np.isin(filled, (0.0, 1.0)).all()
    np.testing.assert_array_equal(filled[seen], Y_true[seen])
    np.testing.assert_array_equal(filled[~seen], (model.completed_scores_[~seen] > 0))
    np.testing.assert_array_equal(filled, model.Y_completed_)
    # with X, the scores are decision_function(X): the same on the training rows
    np.testing.assert_array_equal(model.fill(Y, X), filled)
    # lam = 10 underfits: some observed labels disagree with their score, and are kept anyway
    assert np.any((model.completed_scores_[seen] > 0) != (Y_true[seen] > 0))
    with pytest.raises(ValueError, match="different numbers of rows"):
        model.fill(Y[:10])
    with pytest.raises(ValueError, match="labels"):
        model.fill(Y[:, :5])


def test_sparse_x_intercept_and_label_side_information(planted):
    X, _, Y_true, seen, Y = planted
    dense = MAXIDE(fit_intercept=True).fit(X, Y)
    sparse = MAXIDE(fit_intercept=True).fit(sp.csr_matrix(X), Y)
    np.testing.assert_allclose(sparse.Z_, dense.Z_, atol=1e-8)
    np.testing.assert_allclose(dense.decision_function(X), dense.completed_scores_, atol=1e-10)
    assert np.any(dense.intercept_ != 0)
    # a label-side basis: B spans the true label space (rank 3), so Z is 20 x 3
    rng = np.random.default_rng(0)
    H = np.linalg.lstsq(X, np.where(seen, 2 * Y_true - 1, 0.0), rcond=None)[0]
    label_features = np.linalg.svd(H, full_matrices=False)[2][:6].T  # l x 6
    model = MAXIDE().fit(X, Y, label_features=label_features)
    assert model.Z_.shape == (20, 6) and model.label_basis_.shape == (15, 6)
    assert roc_auc_score(Y_true[~seen], model.completed_scores_[~seen]) > 0.95
    with pytest.raises(ValueError, match="one row per label"):
        MAXIDE().fit(X, Y, label_features=rng.standard_normal((4, 2)))


@pytest.mark.parametrize("shape", [(120, 15), (15, 120)], ids=["tall", "wide"])
@pytest.mark.parametrize("density", [0.01, 0.3])
def test_sparse_x_gives_the_results_of_dense_x(monkeypatch, shape, density):
    # Above 2% density the Gram matrix is summed over dense blocks of rows: a few rows per
    # block here, so that the loop runs many times.
    monkeypatch.setattr(maxide, "_BLOCK_BYTES", 8 * min(shape) * 7)
    rng = np.random.default_rng(1)
    one_per_row = (np.ones(shape[0]), (np.arange(shape[0]), rng.integers(0, shape[1], shape[0])))
    X = (sp.random(*shape, density=density, format="csr", random_state=rng)
         + sp.csr_matrix(one_per_row, shape=shape))  # no empty row
    Y = np.where(rng.random((shape[0], 6)) < 0.5, (rng.random((shape[0], 6)) < 0.3), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a label never positive, by chance
        dense, sparse = (MAXIDE(n_components=None).fit(features, Y)
                         for features in (X.toarray(), X))
    assert sparse.Z_.shape == dense.Z_.shape
    np.testing.assert_allclose(sparse.completed_scores_, dense.completed_scores_, atol=1e-9)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, atol=1e-9)
    np.testing.assert_allclose(sparse.objective_history_, dense.objective_history_, rtol=1e-9)


def test_sparse_x_is_never_made_dense():
    # A tall X at 5% density (above the 2% where it used to be made dense for its Gram
    # matrix): the basis of it traces less memory than half of X dense.
    import tracemalloc

    X = sp.random(40000, 100, density=0.05, format="csr", random_state=0)
    tracemalloc.start()
    A, P = orthonormal_basis(X, n_components=5)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 0.5 * 8 * X.shape[0] * X.shape[1]
    np.testing.assert_allclose(A.T @ A, np.eye(5), atol=1e-10)
    np.testing.assert_allclose(X @ P, A, atol=1e-10)


def test_without_side_information_is_transductive(planted):
    X, _, _, _, Y = planted
    model = MAXIDE(side_information=False).fit(X, Y)
    assert model.Z_.shape == Y.shape
    with pytest.raises(ValueError, match="cannot score new samples"):
        model.decision_function(X)
    assert model.fill(Y).shape == Y.shape


@pytest.mark.parametrize("params, match", [
    ({"lam": -1.0}, "lam"),
    ({"n_components": 0}, "n_components"),
    ({"max_iter": 0}, "max_iter"),
    ({"tol": -1.0}, "tol"),
    ({"side_information": "yes"}, "side_information"),
])
def test_bad_parameters(planted, params, match):
    X, _, _, _, Y = planted
    with pytest.raises(ValueError, match=match):
        MAXIDE(**params).fit(X, Y)


def test_bad_input(planted):
    X, _, _, _, Y = planted
    with pytest.raises(ValueError, match="only 0, 1 or NaN"):
        MAXIDE().fit(X, 2 * np.nan_to_num(Y))
    with pytest.raises(ValueError, match="different numbers of rows"):
        MAXIDE().fit(X[:-1], Y)
    with pytest.raises(ValueError, match="every entry of Y is missing"):
        MAXIDE().fit(X, np.full(Y.shape, np.nan))
    with pytest.raises(ValueError, match="NaN|infinity"):
        MAXIDE().fit(np.where(np.isnan(Y[:, :1]), np.nan, X), Y)
    with pytest.raises(ValueError, match="X is zero"):
        MAXIDE().fit(np.zeros_like(X), Y)
    model = MAXIDE().fit(X, Y)
    with pytest.raises(ValueError, match="features"):
        model.decision_function(X[:, :5])


def test_pickle_and_clone(planted):
    X, _, _, _, Y = planted
    model = MAXIDE(lam=2.0, n_components=10).fit(X, Y)
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.decision_function(X), model.decision_function(X))
    fresh = clone(model)
    assert fresh.get_params() == model.get_params() and not hasattr(fresh, "Z_")
    np.testing.assert_array_equal(fresh.fit(X, Y).Z_, model.Z_)  # deterministic


# --- two-stage methods -----------------------------------------------------------------------



def test_mbr_end_to_end_with_missing_labels():
    X, _, Y_true, seen, Y = _planted(seed=3, n=500)
    train, test = slice(0, 350), slice(350, None)
    model = MBR().fit(X[train], Y[train])
    assert isinstance(model.completer_, MAXIDE) and isinstance(model.learner_, BR)
    np.testing.assert_array_equal(model.Y_completed_, model.completer_.Y_completed_)
    np.testing.assert_array_equal(model.Y_completed_[seen[train]], Y_true[train][seen[train]])
    scores = model.decision_function(X[test])
    assert scores.shape == Y_true[test].shape
    assert roc_auc_score(Y_true[test].ravel(), scores.ravel()) > 0.9
    assert model.score(X[test], Y_true[test]) > 0.8
    assert model.fill_time_ > 0 and model.learn_time_ > 0
    restored = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(restored.predict(X[test]), model.predict(X[test]))


def test_two_stage_without_missing_labels_is_the_learner(planted):
    X, _, Y_true, _, _ = planted
    model = MBR(learner=BR(C=1.0)).fit(X, Y_true)
    assert model.completer_ is None and model.fill_time_ < 0.1
    np.testing.assert_array_equal(model.decision_function(X),
                                  BR(C=1.0).fit(X, Y_true).decision_function(X))


def test_two_stage_params_clone_and_generic_completer(planted):
    X, _, _, _, Y = planted
    model = TwoStage(completer=MAXIDE(lam=3.0), learner=BR(C=0.5))
    assert model.get_params()["completer__lam"] == 3.0
    model.set_params(learner__C=2.0)
    fitted = model.fit(X, Y)
    assert fitted.learner_.C == 2.0 and model.learner.C == 2.0
    assert fitted.learner_ is not model.learner and fitted.completer_ is not model.completer
    assert clone(model).get_params()["completer__lam"] == 3.0

    class PredictOnly(MAXIDE):  # a completer without fill: its predict is used instead
        fill = property(lambda self: (_ for _ in ()).throw(AttributeError("fill")))

    generic = TwoStage(completer=PredictOnly()).fit(X, Y)
    np.testing.assert_array_equal(generic.Y_completed_, MBR().fit(X, Y).Y_completed_)
    with pytest.raises(ValueError, match="learner"):
        TwoStage(learner="BR").fit(X, Y)


def test_mmlloc_uses_mlloc():
    pytest.importorskip("glocal.baselines.mlloc")
    from glocal.baselines.mlloc import MLLOC

    X, _, Y_true, _, Y = _planted(seed=4, n=400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MMLLOC().fit(X[:300], Y[:300])
    assert isinstance(model.learner_, MLLOC) and isinstance(model.completer_, MAXIDE)
    scores = model.decision_function(X[300:])
    assert roc_auc_score(Y_true[300:].ravel(), scores.ravel()) > 0.8


def test_features_too_small_to_square_are_not_called_zero():
    """X of norm 1e-300: its Gram matrix underflows to 0, though X is not zero."""
    rng = np.random.RandomState(0)
    X, Y = rng.rand(30, 4), (rng.rand(30, 3) > 0.5).astype(float)
    with pytest.raises(ValueError, match="too small"):
        MAXIDE().fit(X * 1e-300, Y)
