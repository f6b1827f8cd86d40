"""GLOCAL's opt-in ``normalize_rows``: the model of the rows scaled to unit norm."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import KFold
from sklearn.preprocessing import normalize

from glocal import GLOCAL, GLOCALCV, GLObal, loCAL
from glocal.metrics import observed_two_way_average_precision_scorer

PARAMS = dict(n_latent=4, n_groups=2, max_iter=3, init_max_iter=3, fit_intercept=True,
              lam_v=0.0, random_state=0)


def _data(seed=0, n=80, d=9, l=6):
    """Rows of very different norms (0.1 to 100), a zero row, and 30% missing labels."""
    rng = np.random.default_rng(seed)
    X = np.abs(rng.standard_normal((n, d))) * rng.choice([0.1, 1.0, 100.0], size=(n, 1))
    X[3] = 0.0
    Y = (X @ rng.standard_normal((d, l)) / np.linalg.norm(X + 1e-12, axis=1, keepdims=True)
         + 0.3 * rng.standard_normal((n, l)) > 0.2).astype(float)
    Y[rng.random(Y.shape) < 0.3] = np.nan
    return X, Y


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence caps of the tiny fits, label warnings
        yield


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("Estimator", [GLOCAL, GLObal, loCAL])
def test_fit_is_the_model_of_the_normalized_rows(Estimator, sparse):
    X, Y = _data()
    X_in = sp.csr_matrix(X) if sparse else X
    model = Estimator(normalize_rows=True, **PARAMS).fit(X_in, Y)
    reference = Estimator(**PARAMS).fit(normalize(X_in), Y)
    np.testing.assert_allclose(model.W_, reference.W_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.objective_history_, reference.objective_history_,
                               rtol=1e-12)
    np.testing.assert_array_equal(model.groups_, reference.groups_)
    X_new = _data(seed=1)[0]
    np.testing.assert_allclose(model.decision_function(X_new),
                               reference.decision_function(normalize(X_new)),
                               rtol=1e-9, atol=1e-12)


def test_scores_do_not_depend_on_the_norm_of_a_row():
    X, Y = _data()
    model = GLOCAL(normalize_rows=True, **PARAMS).fit(X, Y)
    # Powers of two scale exactly, so the normalized rows and the fits are identical.
    scales = 2.0 ** np.random.default_rng(1).integers(-8, 9, size=(X.shape[0], 1))
    rescaled = GLOCAL(normalize_rows=True, **PARAMS).fit(X * scales, Y)
    np.testing.assert_array_equal(model.decision_function(X), rescaled.decision_function(X))
    np.testing.assert_allclose(model.decision_function(X), model.decision_function(X * 7.0),
                               rtol=1e-12)
    assert np.all(np.isfinite(model.decision_function(np.zeros((2, X.shape[1])))))


def test_default_is_off_and_changes_the_model_when_on():
    X, Y = _data()
    assert GLOCAL().normalize_rows is False
    default = GLOCAL(**PARAMS).fit(X, Y)
    np.testing.assert_allclose(default.W_, GLOCAL(normalize_rows=False, **PARAMS).fit(X, Y).W_)
    assert not np.allclose(default.W_, GLOCAL(normalize_rows=True, **PARAMS).fit(X, Y).W_)


def test_bad_value_is_a_value_error_naming_it():
    X, Y = _data()
    with pytest.raises(ValueError, match="normalize_rows"):
        GLOCAL(normalize_rows="l2").fit(X, Y)


def test_glocalcv_searching_normalize_rows_keeps_its_shared_fold_caches_apart():
    """Settings with and without normalized rows share one fold cache (k-means groups,
    feature moments) in GLOCALCV: every cross-validated score must still be that of a
    plain fit of the setting on the fold."""
    X, Y = _data()
    folds = list(KFold(3, shuffle=True, random_state=0).split(X))
    grid = {"normalize_rows": [False, True], "lam2": [4.0, 1.0]}
    search = GLOCALCV(GLOCAL(**PARAMS), grid, path_param=None, path_tol=None, cv=folds,
                      racing=None, random_state=0).fit(X, Y)  # every setting on every fold
    for i, params in enumerate(search.cv_results_["params"]):
        for f, (train, test) in enumerate(folds):
            model = GLOCAL(**PARAMS).set_params(**params).fit(X[train], Y[train])
            expected = observed_two_way_average_precision_scorer(model, X[test], Y[test])
            assert search.cv_results_[f"split{f}_test_score"][i] == pytest.approx(expected,
                                                                                  abs=1e-10)
