"""glocal.GLOCAL: fitted attributes, agreement with the paper's objective, persistence,
sparse input, missing labels, user groups, and scikit-learn's estimator checks."""

import warnings

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from estimators import capped_fits

from glocal import GLOCAL, GLObal, loCAL
from glocal.groups import group_index
from glocal.protocol import sample_observed

N, D, L, K, G = 60, 8, 5, 3, 3


def _small(**params):
    defaults = dict(n_latent=K, n_groups=G, random_state=0, max_iter=10, init_max_iter=10)
    return GLOCAL(**{**defaults, **params})


def _signed_and_mask(Y):
    """The paper's Y (l x n, +1/-1, 0 where missing) and J from a {0, 1, NaN} matrix."""
    observed = ~np.isnan(Y)
    Y_signed = np.where(observed, np.where(Y > 0.5, 1.0, -1.0), 0.0).T
    return Y_signed, (None if observed.all() else observed.T.astype(float))


def _paper_value(est, X, Y, paper_objective):
    """Eq. (4) at the fitted arrays, with the estimator's weights taken as given."""
    Y_signed, J = _signed_and_mask(Y)
    X_dense = X.toarray() if sp.issparse(X) else X
    p = est.get_params()
    return paper_objective(est.U_, est.V_, est.W_, est.Z_, X_dense, Y_signed, J,
                           group_index(est.groups_), p["lam"], p["lam2"], p["lam3"], p["lam4"])


@pytest.fixture(scope="module")
def train(multilabel_data):
    X, Y = multilabel_data(1, n=N, d=D, l=L)
    return X, sample_observed(Y, 0.7, random_state=1)


@pytest.fixture(scope="module")
def fitted(train):
    X, Y = train
    return _small().fit(X, Y)


def test_fitted_shapes(fitted):
    est = fitted
    assert est.U_.shape == (L, K)
    assert est.V_.shape == (K, N)
    assert est.W_.shape == (D, K)
    assert est.Z_.shape == (G, L, K)
    assert est.groups_.shape == (N,)
    assert np.issubdtype(est.groups_.dtype, np.integer)
    assert est.n_groups_ == G and set(np.unique(est.groups_)) == set(range(G))
    assert est.n_features_in_ == D
    assert len(est.objective_history_) == est.n_iter_ + 1
    assert 0 < est.n_iter_ <= 10 and 0 < est.n_init_iter_ <= 10
    assert set(est.fit_times_) == {"clustering", "init", "main"}
    np.testing.assert_allclose(np.linalg.norm(est.Z_, axis=-1), 1.0, atol=1e-12)


def test_correlations(fitted):
    est = fitted
    local = est.local_correlations_
    assert local.shape == (G, L, L)
    assert np.all(local >= -1 - 1e-12) and np.all(local <= 1 + 1e-12)
    np.testing.assert_array_equal(np.diagonal(local, axis1=1, axis2=2), 1.0)
    np.testing.assert_allclose(local, np.transpose(local, (0, 2, 1)), atol=1e-15)
    off = ~np.eye(L, dtype=bool)
    for m in range(G):
        np.testing.assert_allclose(local[m][off], -(est.Z_[m] @ est.Z_[m].T)[off], atol=1e-15)
    fractions = np.bincount(est.groups_, minlength=G) / N
    np.testing.assert_allclose(est.global_correlation_,
                               sum(f * c for f, c in zip(fractions, local)), atol=1e-14)
    assert est.global_correlation_.shape == (L, L)


def test_decision_function_and_predict(fitted, train, multilabel_data):
    est = fitted
    X_test, _ = multilabel_data(5, n=20, d=D, l=L)
    scores = est.decision_function(X_test)
    np.testing.assert_allclose(scores, X_test @ est.W_ @ est.U_.T, rtol=1e-12, atol=1e-12)
    prediction = est.predict(X_test)
    np.testing.assert_array_equal(prediction, (scores > 0).astype(int))
    assert prediction.shape == (20, L) and set(np.unique(prediction)) <= {0, 1}
    np.testing.assert_allclose(est.decision_function(sp.csr_matrix(X_test)), scores,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(est.intercept_, np.zeros(L))  # the paper's model has none


@pytest.mark.parametrize("scaling", [1.0, 3.0])
def test_intercept_is_a_constant_feature(train, paper_objective, scaling):
    """fit_intercept appends a constant column to X; the objective is the paper's on it."""
    X, Y = train
    est = _small(fit_intercept=True, intercept_scaling=scaling).fit(X, Y)
    scores = est.decision_function(X)
    np.testing.assert_allclose(scores, X @ est.W_ @ est.U_.T + est.intercept_, atol=1e-12)
    assert est.W_.shape == (D, K) and est.intercept_.shape == (L,)
    assert np.abs(est.intercept_).max() > 1e-6
    # intercept_ = scaling * w_const U^T: recover the constant feature's row of W.
    w_const = np.linalg.lstsq(est.U_, est.intercept_ / scaling, rcond=None)[0]
    np.testing.assert_allclose(est.U_ @ w_const * scaling, est.intercept_, atol=1e-10)
    X_aug = np.hstack([X, np.full((N, 1), scaling)])
    Y_signed, J = _signed_and_mask(Y)
    p = est.get_params()
    value = paper_objective(est.U_, est.V_, np.vstack([est.W_, w_const]), est.Z_, X_aug,
                            Y_signed, J, group_index(est.groups_), p["lam"], p["lam2"],
                            p["lam3"], p["lam4"])
    assert est.objective_history_[-1] == pytest.approx(value, rel=1e-9)


@pytest.mark.parametrize("params", [{}, dict(lam=0.5, lam2=2.0, lam3=0.3, lam4=0.2)],
                         ids=["default-weights", "other-weights"])
def test_history_is_the_paper_objective(train, paper_objective, params):
    """No hidden rescaling: the reported objective is Eq. (4) on the data as given."""
    X, Y = train
    est = _small(**params).fit(X, Y)
    expected = _paper_value(est, X, Y, paper_objective)
    assert est.objective_history_[-1] == pytest.approx(expected, rel=1e-10)
    history = np.array(est.objective_history_)
    assert np.all(np.diff(history) <= 1e-10 * np.abs(history[:-1]))


def test_default_weights_are_the_documented_ones():
    p = GLOCAL().get_params()
    for name in ("n_latent", "n_groups", "lam", "lam2", "lam3", "lam4", "max_iter", "tol"):
        assert f"{name} : " in GLOCAL.__doc__
        documented = GLOCAL.__doc__.split(f"{name} : ")[1].split("default=")[1].split("\n")[0]
        assert float(documented) == p[name], name


def test_same_random_state_same_arrays(train, fitted):
    X, Y = train
    again = _small().fit(X, Y)
    for name in ("U_", "V_", "W_", "Z_", "groups_", "local_correlations_"):
        np.testing.assert_array_equal(getattr(again, name), getattr(fitted, name))
    assert again.objective_history_ == fitted.objective_history_


def test_refit_does_not_depend_on_previous_fit(train, fitted, multilabel_data):
    X, Y = train
    other_X, other_Y = multilabel_data(9, n=40, d=D, l=L)
    est = _small().fit(other_X, other_Y).fit(X, Y)
    np.testing.assert_array_equal(est.U_, fitted.U_)


def test_joblib_round_trip(fitted, tmp_path, multilabel_data):
    path = tmp_path / "glocal.joblib"
    joblib.dump(fitted, path)
    loaded = joblib.load(path)
    X_test, _ = multilabel_data(6, n=25, d=D, l=L)
    np.testing.assert_array_equal(loaded.predict(X_test), fitted.predict(X_test))
    np.testing.assert_array_equal(loaded.decision_function(X_test),
                                  fitted.decision_function(X_test))
    assert loaded.get_params() == fitted.get_params()


@pytest.mark.parametrize("observed", [1.0, 0.3])
def test_sparse_matches_dense(multilabel_data, observed):
    X, Y = multilabel_data(0, n=N, d=10, l=L)
    X = X * (np.random.default_rng(0).random(X.shape) < 0.5)
    if observed < 1:
        Y = sample_observed(Y, observed, random_state=0)
    # Solved tightly, so that where each run stops does not depend on rounding. The plain
    # basic-model initialisation keeps both runs on one path: from the accelerated one's
    # more exact point, the main loop's blocks start at rounding-level gradients, and sparse
    # and dense rounding then grows to ~1e-7 in U V over the outer iterations.
    tight = dict(max_iter=300, init_max_iter=300, tol=1e-13,
                 solver_options={"_levers": {"init_acceleration": 0}})
    dense = _small(**tight).fit(X, Y)
    sparse = _small(**tight).fit(sp.csr_matrix(X), Y)
    np.testing.assert_array_equal(sparse.groups_, dense.groups_)
    assert sparse.objective_history_[-1] == pytest.approx(dense.objective_history_[-1],
                                                          rel=1e-9)
    # U_, V_, W_ are only defined up to a rotation R of the latent space (U R, R^T V, W R
    # leave Eq. (4) unchanged), so compare the invariant products.
    for name, a, b in [("U_ V_", sparse.U_ @ sparse.V_, dense.U_ @ dense.V_),
                       ("scores", sparse.decision_function(X), dense.decision_function(X))]:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6 * np.abs(b).max(), err_msg=name)
    np.testing.assert_allclose(np.linalg.norm(sparse.Z_, axis=-1), 1.0, atol=1e-12)


@capped_fits
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
@pytest.mark.parametrize("observed", [0.3, 0.7])
def test_missing_labels(multilabel_data, paper_objective, sparse, observed):
    X, Y_full = multilabel_data(2, n=N, d=D, l=L)
    Y = sample_observed(Y_full, observed, random_state=2)
    assert 0 < np.isnan(Y).mean() < 1
    X_in = sp.csr_matrix(X) if sparse else X
    est = _small().fit(X_in, Y)
    for name in ("U_", "V_", "W_", "Z_", "local_correlations_", "global_correlation_"):
        assert np.all(np.isfinite(getattr(est, name))), name
    assert np.all(np.isfinite(est.decision_function(X_in)))
    # The missing entries are left out of the loss: the objective uses the mask.
    assert est.objective_history_[-1] == pytest.approx(
        _paper_value(est, X, Y, paper_objective), rel=1e-10)
    assert est.objective_history_[-1] < _paper_value(est, X, Y_full, paper_objective)


def test_unobserved_label_warns(train):
    X, Y = train
    Y = Y.copy()
    Y[:, 2] = np.nan
    with pytest.warns(UserWarning, match=r"labels \[2\] have no observed entry"):
        est = _small().fit(X, Y)
    assert np.all(np.isfinite(est.decision_function(X)))
    assert np.all(np.isfinite(est.U_)) and np.all(np.isfinite(est.Z_))


def test_never_positive_label_warns(train):
    X, Y = train
    Y = Y.copy()
    Y[:, 3] = np.where(np.isnan(Y[:, 3]), np.nan, 0.0)
    with pytest.warns(UserWarning, match=r"labels \[3\] are never positive"):
        est = _small().fit(X, Y)
    assert np.all(np.isfinite(est.decision_function(X)))
    assert np.all(np.isfinite(est.U_)) and np.all(np.isfinite(est.Z_))


def test_complete_labels_do_not_warn(multilabel_data):
    X, Y = multilabel_data(1, n=N, d=D, l=L)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)  # a UserWarning; caps are tiny here
        _small(max_iter=2, init_max_iter=2).fit(X, Y)


@pytest.mark.parametrize("labels", [["b", "a"], [10, 20], [2.5, -1.0]],
                         ids=["strings", "ints", "floats"])
def test_user_groups(train, labels):
    X, Y = train
    side = (X[:, 0] > 0).astype(int)  # not what k-means would find on all features
    groups = np.array(labels, dtype=object)[side].astype(type(labels[0]))
    est = _small(n_groups=5).fit(X, Y, groups=groups)  # n_groups is ignored
    expected = side if labels[0] < labels[1] else 1 - side  # ids in sorted label order
    np.testing.assert_array_equal(est.groups_, expected)
    assert est.n_groups_ == 2 and est.Z_.shape == (2, L, K)
    reference = _small().fit(X, Y, groups=expected)
    np.testing.assert_array_equal(est.U_, reference.U_)
    np.testing.assert_array_equal(est.Z_, reference.Z_)


@capped_fits
def test_groups_change_the_fit(train):
    """The given partition reaches the objective (not only the groups_ attribute)."""
    X, Y = train
    # With k < l, Z can nearly cancel the manifold terms (sum_j u_j z_j^T = 0 has unit-row
    # solutions), so their pull on W is tiny; with k = l it cannot, and the partition matters.
    params = dict(n_latent=L, lam2=0.5, lam3=1.0, lam4=1.0)
    a = _small(**params).fit(X, Y, groups=(X[:, 0] > 0).astype(int))
    b = _small(**params).fit(X, Y, groups=(X[:, 1] > 0).astype(int))
    assert np.abs(a.W_ - b.W_).max() > 1e-2 * np.abs(a.W_).max()


def test_kmeans_groups_without_user_groups(train):
    X, Y = train
    est = _small(n_groups=4).fit(X, Y)
    assert est.n_groups_ == 4 and np.array_equal(np.unique(est.groups_), np.arange(4))


@capped_fits
def test_sparse_labels(multilabel_data):
    X, Y = multilabel_data(3, n=N, d=D, l=L)
    a = _small(max_iter=3, init_max_iter=3).fit(X, Y)
    b = _small(max_iter=3, init_max_iter=3).fit(X, sp.csr_matrix(Y))
    # kept sparse (glocal.labels): the same products, summed in another order
    np.testing.assert_allclose(a.U_, b.U_, rtol=1e-10, atol=1e-12)
    # missing entries are NaN stored in the sparse matrix, as in a dense one
    # (fitted to convergence: from the unconverged start of init_max_iter=3, the Z block's
    # conjugate gradients amplify rounding differences about 1000-fold per iteration)
    observed = sample_observed(Y, 0.5, random_state=3)
    c = _small().fit(X, observed)
    d = _small().fit(X, sp.csr_matrix(observed))
    np.testing.assert_allclose(c.U_, d.U_, rtol=1e-10, atol=1e-12)
    assert not np.array_equal(a.U_, c.U_)


def test_clone_keeps_parameters():
    est = GLOCAL(n_latent=4, optimizer={"Z": "steepest_descent"}, lam3=0.2)
    assert clone(est).get_params() == est.get_params()


# --- one label column: the Z cost is constant on the sphere, the block must be skipped ---

@capped_fits
def test_single_label_fit():
    for seed in range(6):
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((30, 3)) + 1.0
        Y = (X @ rng.standard_normal((3, 1)) > 0).astype(float)
        est = GLOCAL(n_latent=2, n_groups=2, max_iter=3, init_max_iter=3,
                     random_state=seed).fit(X, Y)
        assert np.all(np.isfinite(est.decision_function(X)))


# --- the paper's ablations ------------------------------------------------------------------

@pytest.mark.parametrize("ablation, off", [(GLObal, "lam4"), (loCAL, "lam3")])
def test_ablation_is_glocal_with_one_term_off(train, ablation, off):
    X, Y = train
    kept = "lam3" if off == "lam4" else "lam4"
    params = dict(n_latent=3, n_groups=2, lam2=0.5, random_state=0, **{kept: 0.7})
    model = ablation(**params).fit(X, Y)
    reference = GLOCAL(**params, **{off: 0.0}).fit(X, Y)
    assert off not in model.get_params()
    for name in ("U_", "V_", "W_", "Z_", "objective_history_"):
        np.testing.assert_array_equal(getattr(model, name), getattr(reference, name))
    # and the kept term is really on: it changes the fit
    without = GLOCAL(**{**params, kept: 0.0}, **{off: 0.0}).fit(X, Y)
    assert not np.allclose(model.U_, without.U_)


# --- starting points and shared work -------------------------------------------------------

def test_init_from_a_fitted_model_continues_its_solution(train, fitted):
    """From its own solution, a fit starts where that one ended: Algorithm 1 stops at once."""
    X, Y = train
    again = _small(init_max_iter=1).fit(X, Y, init=fitted)
    assert again.objective_history_[0] <= fitted.objective_history_[-1] * (1 + 1e-9)
    assert again.n_iter_ <= 2


@pytest.mark.parametrize("source_bias, target_bias", [(False, True), (True, False),
                                                      (True, True)])
def test_init_adapts_the_bias_row(train, source_bias, target_bias):
    """The estimator owns W's layout: the bias starts at zero, is carried over or dropped."""
    X, Y = train
    source = _small(fit_intercept=source_bias).fit(X, Y)
    target = _small(fit_intercept=target_bias)
    U, V, W, Z = target._initial_point(source, D, L, N, G)
    assert U is source.U_ and Z is source.Z_ and V is source.V_
    np.testing.assert_array_equal(W[:D], source.W_)
    if not target_bias:
        assert W.shape == (D, K)
    elif source_bias:
        np.testing.assert_array_equal(W[D] @ source.U_.T, source.intercept_)
    else:
        np.testing.assert_array_equal(W[D], np.zeros(K))


def test_init_as_arrays_and_its_errors(train, fitted):
    X, Y = train
    arrays = (fitted.U_, None, fitted.W_, fitted.Z_)
    model = _small().fit(X, Y, init=arrays)
    assert model.objective_history_[-1] <= fitted.objective_history_[-1] * (1 + 1e-6)
    with pytest.raises(ValueError, match="init must be a fitted GLOCAL"):
        _small().fit(X, Y, init="ridge")
    with pytest.raises(ValueError, match=r"init: W has shape \(7, 3\)"):
        _small().fit(X, Y, init=(fitted.U_, None, fitted.W_[:-1], fitted.Z_))
    with pytest.raises(ValueError, match=r"U has shape \(5, 2\)"):
        _small().fit(X, Y, init=(fitted.U_[:, :2], None, fitted.W_, fitted.Z_))
    with pytest.raises(ValueError, match=r"init: Z has shape \(2, 5, 3\), expected \(3, 5"):
        _small().fit(X, Y, init=(fitted.U_, None, fitted.W_, fitted.Z_[:2]))


def test_fit_cache_changes_no_result_and_belongs_to_one_x(train, fitted):
    from glocal import FitCache

    X, Y = train
    cache = FitCache()
    first = _small().fit(X, Y, cache=cache)
    second = _small(lam2=2.0).fit(X, Y, cache=cache)
    np.testing.assert_array_equal(first.W_, fitted.W_)
    np.testing.assert_array_equal(second.groups_, fitted.groups_)
    np.testing.assert_array_equal(second.W_, _small(lam2=2.0).fit(X, Y).W_)
    with pytest.raises(ValueError, match="one FitCache per X"):
        _small().fit(X[:-1], Y[:-1], cache=cache)
    with pytest.raises(ValueError, match="cache must be a glocal.FitCache"):
        _small().fit(X, Y, cache={})


# --- pinned values -------------------------------------------------------------------------

# Final objective values of seeded fits on real data, recorded before a refactor of the
# estimator, the solver and the label fit, which kept every one of them bit for bit: a change
# that moves them changes what GLOCAL computes, not only how. The paper's loss at the
# defaults converges in a few rounds (rounding stays near 1e-12 relative); the squared hinge
# runs more trust-region steps, whose rounding can move the last digits further.
PINNED = [
    ("emotions", {}, 1075.1808340459486, 1e-9),
    ("yeast", {}, 4644.357628218823, 1e-9),
    ("emotions", dict(loss="squared_hinge", fit_intercept=True, lam_v=0.0), 378.6783147119464,
     1e-6),
]


@pytest.mark.parametrize("name, params, value, rel", PINNED)
def test_pinned_objective_values(name, params, value, rel):
    from realdata import real

    data = real(name)
    model = GLOCAL(random_state=0, **params).fit(data.X, data.Y)
    assert model.objective_history_[-1] == pytest.approx(value, rel=rel)


@capped_fits
def test_verbose_names_both_phases(train, capsys):
    X, Y = train
    _small(verbose=2, max_iter=1).fit(X, Y)
    out = capsys.readouterr().out
    assert "[GLOCAL] basic-model initialisation round 1: objective" in out
    assert "[GLOCAL] main iteration 1: objective" in out


# --- the linear map of the scores -----------------------------------------------------------

@capped_fits
@pytest.mark.parametrize("Estimator", [GLOCAL, GLObal, loCAL])
@pytest.mark.parametrize("normalize_rows", [False, True])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_coef_and_intercept_give_the_scores(train, Estimator, normalize_rows, fit_intercept):
    from sklearn.preprocessing import normalize

    X, Y = train
    X = np.abs(X) + 0.5 * np.arange(D)  # rows of different norms: normalize matters
    model = Estimator(n_latent=K, n_groups=G, max_iter=5, init_max_iter=5, random_state=0,
                      normalize_rows=normalize_rows, fit_intercept=fit_intercept).fit(X, Y)
    assert model.coef_.shape == (L, D) and model.intercept_.shape == (L,)
    assert (model.intercept_ != 0).any() == fit_intercept
    for given in (X, sp.csr_matrix(X)):
        rows = normalize(given) if normalize_rows else given
        np.testing.assert_allclose(np.asarray(rows @ model.coef_.T) + model.intercept_,
                                   model.decision_function(given), rtol=1e-12, atol=1e-12)
    if normalize_rows:  # the unscaled rows give other scores
        assert not np.allclose(X @ model.coef_.T + model.intercept_,
                               model.decision_function(X))
    assert not hasattr(Estimator(), "coef_")
