"""A scipy-sparse Y kept sparse (`glocal.labels.SparseSignedLabels`, stored NaN missing
through `glocal.labels.SparseMask`): the same fit as the dense Y, without dense l x n arrays.

The products of both classes and every objective piece that reads them are checked against
the dense formula (and the U block's gradient against autograd of the paper's objective);
whole fits against the fit on ``Y.toarray()``; the fallbacks (other losses, class weights,
the V problem) against the dense fit exactly.
"""

import tracemalloc
import warnings
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from autograd import grad

from estimators import capped_fits

from glocal import GLOCAL, LabelWarning
from glocal.solver import coupling
from glocal import solver
from glocal.solver.correlations import laplacians as lap
from glocal.solver import objective as obj
from glocal.solver import plan
from glocal.solver.label_fit import feature_label_product, u_statistics
from glocal._utils.validation import check_labels
from glocal.labels import SparseMask, SparseSignedLabels, column_outer
from derivatives import label_weights, u_cost_grad


def _close(actual, expected, rtol=1e-10):
    expected = np.asarray(expected, dtype=float)
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale)


def _indicator(seed=0, n=70, l=9, density=0.2, missing=0.0):
    """A sparse {0, 1, NaN} label matrix (n x l), its dense signed labels (l x n, 0 where
    missing) and their mask (None without missing entries)."""
    Y = sp.random(n, l, density=density, random_state=seed, format="csr")
    Y.data[:] = 1.0
    J = None
    if missing:
        nan = sp.random(n, l, density=missing, random_state=seed + 1, format="csr")
        nan.data[:] = np.nan
        Y = (Y - Y.multiply(nan != 0)) + nan  # NaN entries replace ones
        J = 1.0 - (Y.toarray().T != Y.toarray().T)  # NaN != NaN
    Y_signed = np.nan_to_num(2.0 * Y.toarray().T - 1.0)
    return Y, Y_signed if J is None else Y_signed * J, J


def _problem_pair(make_problem, missing=False, **params):
    """The same random problem with dense signed labels and with SparseSignedLabels."""
    dense, point, X = make_problem(missing=missing, **params)
    B = sp.csr_matrix(dense.Y > 0, dtype=float)
    M = None if dense.J is None else sp.csr_matrix(1.0 - dense.J)
    labels = SparseSignedLabels(B, M)
    return dense, replace(dense, Y=labels, J=labels.mask), point, X


# --- SparseSignedLabels against the dense formula ----------------------------------------

@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["full", "missing"])
@pytest.mark.parametrize("sparse_x", [False, True], ids=["dense-X", "csr-X"])
def test_products_match_dense_labels(sparse_x, missing):
    Y, Y_dense, J = _indicator(missing=missing)
    labels, mask = check_labels(Y, Y.shape[0], keep_sparse=True)
    assert isinstance(labels, SparseSignedLabels)
    assert (mask is None) == (J is None) and mask is labels.mask
    rng = np.random.default_rng(1)
    l, n = Y_dense.shape
    A, B = rng.standard_normal((n, 4)), rng.standard_normal((3, l))
    X = rng.standard_normal((n, 5)) * (rng.random((n, 5)) < 0.5)
    X_in = sp.csr_matrix(X) if sparse_x else X
    assert labels.shape == (l, n)
    _close(labels @ A, Y_dense @ A)
    _close(B @ labels, B @ Y_dense)
    _close(labels.feature_product(X_in), X.T @ Y_dense.T)
    assert labels.squared_norm() == np.sum(Y_dense ** 2)
    U, V = rng.standard_normal((l, 3)), rng.standard_normal((3, n))
    J_dense = np.ones_like(Y_dense) if J is None else J
    _close(labels.residual_norm(U, V), np.sum((J_dense * (Y_dense - U @ V)) ** 2))
    n_observed, n_positive = labels.label_counts()
    np.testing.assert_array_equal(n_observed, J_dense.sum(axis=1))
    np.testing.assert_array_equal(n_positive, (Y_dense > 0).sum(axis=1))
    np.testing.assert_array_equal(labels.toarray(), Y_dense)
    if mask is not None:
        D = rng.standard_normal((3, n))
        _close(mask.masked_squared_norm(U, D), np.sum((J * (U @ D)) ** 2))
        _close(mask.label_grams(V, chunk=17).reshape(l, 3, 3),
               np.einsum("ji,ai,bi->jab", J, V, V))
        _close(mask.sample_grams(U, column_outer(U), slice(5, 30)),
               np.einsum("ji,ja,jb->iab", J[:, 5:30], U, U))
        _close(mask.entries(U, V, chunk=7), (U @ V)[J == 0])


@pytest.mark.parametrize("missing", [False, True], ids=["full", "missing"])
@pytest.mark.parametrize("grams", ["none", "gram", "all"])
@pytest.mark.parametrize("sparse_x", [False, True], ids=["dense-X", "csr-X"])
def test_objective_pieces_match_dense_labels(make_problem, grams, sparse_x, missing):
    dense, sparse, (U, V, W, Z), _ = _problem_pair(make_problem, missing=missing,
                                                   sparse=sparse_x, grams=grams)
    P = coupling.feature_product(W, dense)
    _close(sparse.label.value(U, V, sparse), dense.label.value(U, V, dense))
    _close(obj.basic_objective(U, V, W, sparse), obj.basic_objective(U, V, W, dense))
    _close(lap.objective(U, V, W, Z, sparse), lap.objective(U, V, W, Z, dense))
    _close(feature_label_product(sparse), feature_label_product(dense))
    s_stats, d_stats = u_statistics(V, sparse), u_statistics(V, dense)
    _close(s_stats.gram, d_stats.gram)
    _close(s_stats.target, d_stats.target)
    _close(s_stats.constant, d_stats.constant)
    V_new = obj.v_closed_form(U, P, sparse)
    _close(V_new, obj.v_closed_form(U, P, dense))
    _close(obj.v_decrease(V, V_new, U, sparse), obj.v_decrease(V, V_new, U, dense))
    B = label_weights(P, dense)
    for a, b in zip(u_cost_grad(U, s_stats, Z, B, sparse), u_cost_grad(U, d_stats, Z, B, dense)):
        _close(a, b)


@pytest.mark.parametrize("missing", [False, True], ids=["full", "missing"])
def test_u_gradient_from_sparse_labels_matches_autograd(make_problem, paper_objective,
                                                        missing):
    dense, data, (U, V, W, Z), X = _problem_pair(make_problem, missing=missing)
    Y = data.Y.toarray()
    B = label_weights(coupling.feature_product(W, data), data)
    cost, gradient = u_cost_grad(U, u_statistics(V, data), Z, B, data)

    def f(U_):
        return paper_objective(U_, V, W, Z, X, Y, dense.J, data.group_index, data.lam,
                               data.lam2, data.lam3, data.lam4)
    fixed = f(U) - cost  # the block's cost leaves out the terms without U
    _close(cost + fixed, f(U))
    _close(gradient, grad(f)(U))


def test_score_gram_product_matches_the_gram(make_problem):
    data, _, (U, V, W, Z), _ = _problem_pair(make_problem, grams="gram")
    A = np.random.default_rng(2).standard_normal((W.shape[1], 2))
    _close(coupling.score_gram_product(W, A, data), coupling.score_gram(W, data) @ A)
    _close(coupling.score_gram(W, data, max_entries=7), coupling.score_gram(W, data))  # chunks


def test_lanczos_initial_directions_match_the_dense_eigenvectors(make_problem, monkeypatch):
    data, _, (U, V, W, Z), _ = _problem_pair(make_problem, l=12, k=3)
    W_ridge = np.random.default_rng(3).standard_normal((data.X.shape[1], 12))
    dense_values, dense_vectors = coupling.dense_score_directions(W_ridge, data, 3)
    values, vectors = coupling.lanczos_score_directions(W_ridge, data, 3)
    # The ridge start takes the dense directions up to MAX_DENSE_LABELS labels.
    assert plan.resolve_start(data, plan.Levers()).keywords["directions"] is \
        coupling.dense_score_directions
    monkeypatch.setattr(plan, "MAX_DENSE_LABELS", 5)
    assert plan.resolve_start(data, plan.Levers()).keywords["directions"] is \
        coupling.lanczos_score_directions
    _close(values, dense_values)
    _close(np.abs(vectors.T @ dense_vectors), np.eye(3), rtol=1e-8)  # up to signs


# --- whole fits ---------------------------------------------------------------------------

def _fit_data(seed=4, n=150, d=10, l=8):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = (X @ rng.standard_normal((d, l)) + rng.standard_normal((n, l)) > 1.2).astype(float)
    return X, Y


def _model(**params):
    return GLOCAL(**{**dict(n_latent=3, n_groups=2, max_iter=6, init_max_iter=6,
                            random_state=0), **params})


def _same_fit(a, b, X, rtol=1e-8):
    _close(b.objective_history_, a.objective_history_, rtol)
    _close(b.init_objective_history_, a.init_objective_history_, rtol)
    for name in ("U_", "V_", "W_", "Z_", "intercept_"):
        _close(getattr(b, name), getattr(a, name), rtol)
    _close(b.decision_function(X), a.decision_function(X), rtol)


@pytest.mark.parametrize("missing", [0.0, 0.3], ids=["full", "missing"])
@pytest.mark.parametrize("params", [{}, {"fit_intercept": True},
                                    {"lam_v": 0.5, "normalize_rows": True}],
                         ids=["defaults", "fit_intercept", "lam_v-normalize_rows"])
@pytest.mark.parametrize("kind", ["csr_matrix", "csc_matrix", "coo_matrix", "csr_array"])
def test_sparse_fit_matches_dense_fit(params, kind, missing):
    X, Y = _fit_data()
    Y[np.random.default_rng(6).random(Y.shape) < missing] = np.nan  # stored NaN: missing
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dense = _model(**params).fit(X, Y)
        sparse = _model(**params).fit(X, getattr(sp, kind)(Y))
    assert len(sparse.objective_history_) == len(dense.objective_history_) > 2
    _same_fit(dense, sparse, X)
    assert np.all(np.diff(sparse.objective_history_) <= 0)


def test_sparse_fit_with_lanczos_start_matches_dense(monkeypatch):
    """Above MAX_DENSE_LABELS the initial point comes from Lanczos: the same for both."""
    monkeypatch.setattr(plan, "MAX_DENSE_LABELS", 4)
    X, Y = _fit_data(seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dense = _model().fit(X, Y)
        sparse = _model().fit(X, sp.csr_matrix(Y))
    _same_fit(dense, sparse, X)
    assert np.all(np.diff(sparse.objective_history_) <= 0)


@capped_fits
def test_labels_stay_sparse_in_the_solver(monkeypatch):
    seen = []
    fit = solver.glocal_fit

    def recording_fit(data, *args, **kwargs):
        seen.append(type(data.Y))
        return fit(data, *args, **kwargs)
    monkeypatch.setattr("glocal.estimator.glocal_fit", recording_fit)
    X, Y = _fit_data()
    _model(max_iter=1, init_max_iter=1).fit(X, sp.csr_matrix(Y))
    _model(max_iter=1, init_max_iter=1, class_weight="balanced").fit(X, sp.csr_matrix(Y))
    assert seen == [SparseSignedLabels, np.ndarray]


@pytest.mark.parametrize("params", [{"loss": "logistic"}, {"class_weight": "balanced"},
                                    {"v_closed_form": False}])
def test_unsupported_settings_densify_as_before(params):
    X, Y = _fit_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dense = _model(max_iter=2, init_max_iter=2, **params).fit(X, Y)
        sparse = _model(max_iter=2, init_max_iter=2, **params).fit(X, sp.csr_matrix(Y))
    np.testing.assert_array_equal(sparse.U_, dense.U_)
    assert sparse.objective_history_ == dense.objective_history_


def test_solver_and_data_refuse_what_sparse_labels_do_not_support(make_problem):
    _, data, _, _ = _problem_pair(make_problem)
    with pytest.raises(ValueError, match="closed form of V"):
        solver.glocal_fit(data, 2, options=solver.SolverOptions(v_closed_form=False))
    with pytest.raises(ValueError, match="paper's loss only"):
        replace(data, loss="logistic")


# --- validation of sparse labels ----------------------------------------------------------

@pytest.mark.parametrize("missing", [0.0, 0.2], ids=["full", "missing"])
def test_check_labels_keeps_sparse_labels_sparse(missing):
    Y = _indicator(n=30, l=4, missing=missing)[0].tocoo()
    Y.data[np.flatnonzero(Y.data == 1.0)[0]] = 0.0  # a stored zero is an observed negative
    labels, J = check_labels(Y, 30, keep_sparse=True)
    assert isinstance(labels, SparseSignedLabels)
    assert J is labels.mask and (J is None) == (missing == 0.0)
    dense_labels, dense_J = check_labels(Y, 30)
    np.testing.assert_array_equal(labels.toarray(), dense_labels)
    if J is not None:
        assert isinstance(J, SparseMask)
        np.testing.assert_array_equal(1.0 - J.missing.toarray(), dense_J)


@pytest.mark.parametrize("value, message", [(2.0, r"found \[2.0\]"),
                                            (-1.0, "from_signed_labels"),
                                            (np.inf, r"found \[inf\]")])
def test_bad_sparse_label_values(value, message):
    X, Y = _fit_data()
    Y_bad = sp.csr_matrix(Y)
    Y_bad.data[3] = value
    with pytest.raises(ValueError, match=message):
        _model().fit(X, Y_bad)


def test_duplicate_coo_entries_sum_as_in_toarray():
    X, Y = _fit_data(n=20)
    coo = sp.coo_matrix(Y)
    doubled = sp.coo_matrix((np.r_[coo.data, 1.0], (np.r_[coo.row, coo.row[0]],
                                                     np.r_[coo.col, coo.col[0]])), Y.shape)
    with pytest.raises(ValueError, match=r"found \[2.0\]"):
        _model().fit(X, doubled)


@pytest.mark.parametrize("Y, message", [
    (sp.csr_matrix(np.ones((7, 3))), "different numbers of rows: 150 and 7"),
    (sp.csr_matrix((150, 0)), "no label column"),
    (sp.csr_matrix(np.ones((150, 3)), dtype=complex), "Complex data not supported"),
])
def test_bad_sparse_label_shapes_and_types(Y, message):
    X, _ = _fit_data()
    with pytest.raises(ValueError, match=message):
        _model().fit(X, Y)


def test_one_dimensional_sparse_labels():
    if not hasattr(sp, "coo_array"):
        pytest.skip("scipy without sparse arrays")
    X, _ = _fit_data()
    try:
        Y = sp.coo_array(np.ones(150))
    except ValueError:
        pytest.skip("this scipy has no 1-D sparse arrays")
    if Y.ndim != 1:
        pytest.skip("this scipy has no 1-D sparse arrays")
    with pytest.raises(ValueError, match="2-D"):
        _model().fit(X, Y)


@capped_fits
def test_label_warnings_from_sparse_counts():
    X, Y = _fit_data()
    Y[:, 2] = 0.0
    Y[:, 5] = np.nan
    with pytest.warns(LabelWarning) as caught:
        _model(max_iter=1, init_max_iter=1).fit(X, sp.csr_matrix(Y))
    messages = [str(w.message) for w in caught]
    assert any("labels [5] have no observed entry" in m for m in messages)
    assert any("labels [2] are never positive" in m for m in messages)


def test_all_missing_sparse_labels():
    X, Y = _fit_data()
    with pytest.raises(ValueError, match="every entry of Y is missing"):
        _model().fit(X, sp.csr_matrix(np.full(Y.shape, np.nan)))


# --- memory -------------------------------------------------------------------------------

def test_sparse_fit_peak_memory_is_below_one_dense_label_array():
    """tracemalloc's peak (numpy and scipy allocations) during a fit on 2100 sparse labels
    stays below the size of one dense l x n array; the dense fit needs about three."""
    rng = np.random.default_rng(7)
    n, d, l = 3000, 20, 2100
    X = rng.standard_normal((n, d))
    Y = sp.random(n, l, density=0.004, random_state=7, format="csr")
    Y.data[:] = 1.0
    model = _model(n_latent=5, max_iter=2, init_max_iter=2)
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(X, Y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * n * l
