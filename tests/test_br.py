"""BR: one linear SVM per label, each on the rows where its label is observed."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from glocal.baselines import BR
from glocal.protocol import sample_observed


def _data(seed=0, n=120, d=15, l=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    Y = (X @ rng.standard_normal((d, l)) + 0.3 * rng.standard_normal((n, l)) > 0).astype(float)
    return X, Y


def test_each_label_is_learned_on_its_observed_rows_only():
    X, Y = _data()
    Y_obs = sample_observed(Y, 0.5, random_state=0)
    model = BR(C=0.3, random_state=0).fit(X, Y_obs)
    for j in range(Y.shape[1]):
        rows = ~np.isnan(Y_obs[:, j])
        svm = LinearSVC(C=0.3, random_state=0, tol=1e-8, max_iter=100000)
        svm.fit(X[rows], Y_obs[rows, j])
        # liblinear's solution on those rows, whatever its seed, up to its tolerance
        np.testing.assert_allclose(model.coef_[j], svm.coef_[0], atol=5e-3)


def test_missing_entries_do_not_matter():
    X, Y = _data(seed=1)
    Y_obs = sample_observed(Y, 0.4, random_state=1)
    a = BR(random_state=3).fit(X, Y_obs).decision_function(X)
    changed = Y.copy()
    changed[np.isnan(Y_obs)] = 1 - changed[np.isnan(Y_obs)]
    masked = np.where(np.isnan(Y_obs), np.nan, changed)
    b = BR(random_state=3).fit(X, masked).decision_function(X)
    np.testing.assert_array_equal(a, b)


def test_one_class_label_gets_constant_score_and_one_warning_naming_it():
    pd = pytest.importorskip("pandas")
    X, Y = _data(seed=2)
    Y = Y.copy()
    Y[:, 1] = np.nan
    Y[:60, 1] = 1.0  # observed positive only
    Y[:, 3] = np.nan  # never observed
    frame = pd.DataFrame(Y, columns=["a", "b", "c", "d"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = BR(random_state=0).fit(X, frame)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "'b'" in messages[0] and "'d'" in messages[0], messages
    scores = model.decision_function(X)
    np.testing.assert_array_equal(scores[:, 1], 1.0)
    np.testing.assert_array_equal(scores[:, 3], 0.0)


def test_reproducible_when_features_outnumber_samples():
    """n < d: liblinear's dual solver shuffles; the seed makes two fits bitwise equal."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 300))
    Y = (rng.random((40, 3)) < 0.4).astype(float)
    a = BR(C=1.0, random_state=7).fit(X, Y).coef_
    np.random.seed(1)
    b = BR(C=1.0, random_state=7).fit(X, Y).coef_
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("sparse", [False, True])
def test_each_label_is_exactly_linearsvc_on_its_rows(sparse):
    """The per-label fits are LinearSVC's, bit for bit: the same liblinear problem, solver
    and seed, from dense or CSR X alike."""
    X, Y = _data(seed=5, n=90, d=120)  # fewer rows than features: the dual solver
    X[np.abs(X) < 1.0] = 0.0
    Y_obs = sample_observed(Y, 0.7, random_state=5)
    model = BR(C=0.2, random_state=11).fit(sp.csr_matrix(X) if sparse else X, Y_obs)
    rng = np.random.RandomState(11)
    for j in range(Y.shape[1]):
        rows = ~np.isnan(Y_obs[:, j])
        svm = LinearSVC(C=0.2, random_state=rng.randint(np.iinfo(np.int32).max))
        svm.fit(X[rows], 2 * Y_obs[rows, j] - 1)
        np.testing.assert_array_equal(model.coef_[j], svm.coef_[0])
        np.testing.assert_array_equal(model.intercept_[j], svm.intercept_[0])
    # more rows than features: the primal solver, on all rows when every label is observed
    X, Y = _data(seed=6, n=150, d=10)
    model = BR(random_state=2).fit(sp.csr_matrix(X) if sparse else X, Y)
    rng = np.random.RandomState(2)
    for j in range(Y.shape[1]):
        svm = LinearSVC(C=0.1, random_state=rng.randint(np.iinfo(np.int32).max))
        np.testing.assert_array_equal(model.coef_[j], svm.fit(X, 2 * Y[:, j] - 1).coef_[0])


def test_rows_of_small_norm_take_the_dual_solver_whatever_their_number():
    """Rows with 2 C (|x|^2 + 1) <= 1: the dual solver (LinearSVC(dual=True)), bit for bit,
    also with more rows than features; a larger C, the primal as before."""
    X, Y = _data(seed=7, n=200, d=8)
    X /= np.linalg.norm(X, axis=1, keepdims=True)  # |x| = 1: 2 C (1 + 1) <= 1 for C <= 0.25
    for C, dual in [(0.2, True), (0.3, False)]:
        model = BR(C=C, random_state=4).fit(X, Y)
        rng = np.random.RandomState(4)
        for j in range(Y.shape[1]):
            svm = LinearSVC(C=C, dual=dual, random_state=rng.randint(np.iinfo(np.int32).max))
            svm.fit(X, 2 * Y[:, j] - 1)
            np.testing.assert_array_equal(model.coef_[j], svm.coef_[0])


def test_a_solver_stopped_at_its_cap_warns_as_linearsvc_does():
    from sklearn.exceptions import ConvergenceWarning

    from glocal.baselines.br import _fit_svm

    X, Y = _data(seed=8, n=60, d=100)
    with pytest.warns(ConvergenceWarning, match="failed to converge"):
        _fit_svm(sp.csr_matrix(X), 2 * Y[:, 0] - 1, C=10.0, dual=True, seed=0, max_iter=1)
