"""GLOCAL on Dask arrays: the same fit as in memory, lazy predictions, clear errors."""

import importlib
import os

import numpy as np
import pytest
import scipy.sparse as sp

from glocal import GLOCAL
from glocal.protocol import sample_observed


def require(module):
    """Import an optional dependency: skip without it, except in CI, which installs it."""
    if os.environ.get("CI") == "true":
        return importlib.import_module(module)
    return pytest.importorskip(module)


da = require("dask.array")

# The fits cap their rounds (every pass costs a scheduler round trip); the caps are the point.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

KW = dict(n_latent=4, lam3=0.1, lam4=0.1, max_iter=4, init_max_iter=4, tol=1e-7,
          random_state=0)


def _problem(seed=0, n=240, d=9, l=6, missing=0.7):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = (X @ rng.standard_normal((d, l)) + 0.5 * rng.standard_normal((n, l)) > 0).astype(float)
    if missing < 1:
        Y = sample_observed(Y, missing, random_state=seed)
    return X, Y, rng.integers(0, 3, n)


def _same_fit(in_memory, on_dask, X_test):
    """Histories, parameters and scores of two fits agree to 1e-8 relative."""
    for name in ("objective_history_", "init_objective_history_"):
        a, b = getattr(in_memory, name), getattr(on_dask, name)
        assert len(a) == len(b)
        np.testing.assert_allclose(b, a, rtol=1e-8)
    for name in ("U_", "W_", "Z_", "intercept_"):
        a, b = getattr(in_memory, name), getattr(on_dask, name)
        np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-8 * np.abs(a).max())
    np.testing.assert_allclose(np.asarray(on_dask.V_), in_memory.V_, rtol=1e-8,
                               atol=1e-8 * np.abs(in_memory.V_).max())
    scores = on_dask.decision_function(da.from_array(X_test, chunks=50))
    assert isinstance(scores, da.Array)  # lazy
    expected = in_memory.decision_function(X_test)
    np.testing.assert_allclose(scores.compute(), expected, rtol=1e-8,
                               atol=1e-8 * np.abs(expected).max())


@pytest.mark.parametrize("missing, fit_intercept, normalize_rows",
                         [(0.7, False, False), (1.0, True, False), (0.7, True, True)])
def test_dask_fit_reproduces_the_in_memory_fit(missing, fit_intercept, normalize_rows):
    """Several chunks of unequal sizes (Y chunked differently from X), the same groups:
    the same objective histories, point and scores as the in-memory fit."""
    X, Y, groups = _problem(missing=missing)
    kw = dict(KW, fit_intercept=fit_intercept, normalize_rows=normalize_rows)
    in_memory = GLOCAL(**kw).fit(X, Y, groups=groups)
    on_dask = GLOCAL(**kw).fit(da.from_array(X, chunks=(70, 4)), da.from_array(Y, chunks=50),
                               groups=da.from_array(groups, chunks=100))
    assert in_memory.n_iter_ >= 2 and in_memory.n_init_iter_ >= 2
    _same_fit(in_memory, on_dask, X)
    np.testing.assert_array_equal(np.asarray(on_dask.groups_), in_memory.groups_)
    predicted = on_dask.predict(da.from_array(X, chunks=60))
    assert isinstance(predicted, da.Array)
    np.testing.assert_array_equal(predicted.compute(), in_memory.predict(X))


def test_sparse_chunks_fit_like_dense_ones():
    X, Y, groups = _problem(seed=1)
    X[np.abs(X) < 1.0] = 0.0
    blocks = [da.from_array(sp.csr_matrix(X[start:start + 80]), chunks=-1, asarray=False)
              for start in range(0, X.shape[0], 80)]
    X_sparse = da.concatenate(blocks, axis=0)
    dense = GLOCAL(**KW).fit(da.from_array(X, chunks=80), Y, groups=groups)
    sparse = GLOCAL(**KW).fit(X_sparse, Y, groups=groups)
    np.testing.assert_allclose(sparse.objective_history_, dense.objective_history_, rtol=1e-8)
    np.testing.assert_allclose(sparse.decision_function(X_sparse).compute(),
                               dense.decision_function(X), rtol=1e-8, atol=1e-10)


def test_kmeans_groups_from_dask_ml():
    require("dask_ml")
    X, Y, _ = _problem(seed=2)
    model = GLOCAL(**dict(KW, n_groups=3, max_iter=2)).fit(da.from_array(X, chunks=80), Y)
    groups = np.asarray(model.groups_)
    assert model.n_groups_ == 3 and set(np.unique(groups)) == {0, 1, 2}
    np.testing.assert_allclose(model.global_correlation_,
                               np.tensordot(np.bincount(groups) / len(groups),
                                            model.local_correlations_, axes=1))
    assert np.all(np.diff(model.objective_history_) <= 1e-10 * np.abs(model.objective_history_[1:]))


@pytest.mark.parametrize("change, message", [
    (dict(params=dict(class_weight="balanced")), "class_weight=None"),
    (dict(params=dict(v_closed_form=False)), "column by column"),
    (dict(X=lambda X: np.where(X > 2, np.nan, X)), "NaN or infinity"),
    (dict(Y=lambda Y: np.where(Y == 1, 2.0, Y)), "only 0, 1 or NaN"),
    (dict(Y=lambda Y: Y[:-1]), "different numbers of rows"),
    (dict(Y=lambda Y: np.full_like(Y, np.nan)), "every entry of Y is missing"),
    (dict(groups=lambda g: g[:-1]), "one group id per row"),
])
def test_bad_dask_input_is_a_clear_value_error(change, message):
    X, Y, groups = _problem(n=60)
    X = change.get("X", lambda X: X)(X)
    Y = change.get("Y", lambda Y: Y)(Y)
    groups = change.get("groups", lambda g: g)(groups)
    with pytest.raises(ValueError, match=message):
        GLOCAL(**change.get("params", {})).fit(da.from_array(X, chunks=25), da.from_array(Y),
                                               groups=groups)


@pytest.mark.parametrize("damage, message", [
    (lambda X, Y: X.__setitem__((55, 3), np.inf), "NaN or infinity"),
    (lambda X, Y: Y.__setitem__((57, 1), 2.0), "only 0, 1 or NaN"),
])
def test_bad_values_name_their_chunk(damage, message):
    X, Y, _ = _problem(n=80)
    damage(X, Y)  # row 55 or 57: the third chunk of 25 rows, rows 50 to 74
    with pytest.raises(ValueError, match=f"{message}.*chunk 2 of the rows, rows 50 to 74"):
        GLOCAL().fit(da.from_array(X, chunks=25), da.from_array(Y, chunks=25))


def test_squared_hinge_fits_like_in_memory():
    """The recommended estimator (squared hinge, intercept, lam_v=0): V solved chunk by
    chunk, the U block's loss terms summed over chunks, the in-memory answer."""
    X, Y, groups = _problem(seed=4)
    kw = dict(KW, loss="squared_hinge", fit_intercept=True, lam_v=0.0)
    in_memory = GLOCAL(**kw).fit(X, Y, groups=groups)
    on_dask = GLOCAL(**kw).fit(da.from_array(X, chunks=70), da.from_array(Y, chunks=50),
                               groups=groups)
    assert in_memory.n_iter_ >= 2
    _same_fit(in_memory, on_dask, X)


def test_decision_function_checks_the_dask_features():
    X, Y, groups = _problem(n=60)
    model = GLOCAL(**KW).fit(X, Y, groups=groups)
    with pytest.raises(ValueError, match="9 features"):
        model.decision_function(da.zeros((5, 4), chunks=2))


def test_wide_features_form_no_feature_by_feature_matrix():
    """Above the limit of features for which a backend keeps X^T X, every product with X goes
    through its chunks: no d x d array is made anywhere in the fit (traced by tracemalloc,
    which sees numpy's allocations)."""
    import tracemalloc

    from glocal.solver.plan import MAX_BACKEND_FEATURES

    n, d = 40, MAX_BACKEND_FEATURES + 1
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.01)
    Y = (X[:, :3] + 0.1 * rng.standard_normal((n, 3)) > 0).astype(float)
    model = GLOCAL(n_latent=2, lam3=0.1, lam4=0.1, max_iter=2, init_max_iter=2)
    tracemalloc.start()
    try:
        model.fit(da.from_array(X, chunks=(15, -1)), da.from_array(Y, chunks=(15, -1)),
                  groups=np.arange(n) % 2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 * d * d / 4, f"{peak / 2**20:.0f} MiB traced"
    assert model.W_.shape == (d, 2) and np.all(np.isfinite(model.W_))
