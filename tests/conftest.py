"""Small shared fixtures for the GLOCAL tests: random problems and the paper's objective.

`paper_objective` is written from the paper's formula (Eq. 4) in the paper's layout
(X is d x n, Y is l x n), with autograd.numpy so that the tests can differentiate it. It does
not use any function of ``glocal.solver.objective``.
"""

import autograd.numpy as anp
import numpy as np
import pytest
import scipy.sparse as sp

from glocal._utils import validation
from glocal.groups import group_index
from glocal.solver.objective import GlocalData
from glocal.solver.second_moments import THROUGH_SAMPLES, Gram, GroupGrams


@pytest.fixture(autouse=True)
def _fresh_warnings():
    """Every test sees glocal's warnings as a new process does: none shown yet."""
    validation._SHOWN.clear()


def _paper_objective(U, V, W, Z, X, Y, J, groups, lam, lam2, lam3, lam4):
    """Eq. (4) read from the paper.

    ||J o (Y - U V)||^2 + lam ||V - W^T X_p||^2 + lam2 (||U||^2 + ||V||^2 + ||W||^2)
      + sum_m [ lam3 (n_m/n) tr(F_0^T Z_m Z_m^T F_0) + lam4 tr(F_m^T Z_m Z_m^T F_m) ]

    with X_p = X^T (d x n, the paper's layout), F_0 = U W^T X_p, F_m = U W^T X_p[:, group m].

    ``X`` is the dense n x d feature matrix, ``Y`` the signed l x n labels (0 where missing),
    ``J`` the l x n 0/1 mask or None, ``groups`` a list of sample-index arrays.
    """
    Xp = X.T
    n = Xp.shape[1]
    residual = Y - anp.dot(U, V)
    if J is not None:
        residual = J * residual
    value = (anp.sum(residual ** 2) + lam * anp.sum((V - anp.dot(W.T, Xp)) ** 2)
             + lam2 * (anp.sum(U ** 2) + anp.sum(V ** 2) + anp.sum(W ** 2)))
    F0 = anp.dot(U, anp.dot(W.T, Xp))
    for m, idx in enumerate(groups):
        L = anp.dot(Z[m], Z[m].T)  # l x l "Laplacian" Z_m Z_m^T
        Fm = anp.dot(U, anp.dot(W.T, Xp[:, idx]))
        value = value + lam3 * (len(idx) / n) * anp.trace(anp.dot(F0.T, anp.dot(L, F0)))
        value = value + lam4 * anp.trace(anp.dot(Fm.T, anp.dot(L, Fm)))
    return value


@pytest.fixture(scope="session")
def paper_objective():
    return _paper_objective


def _make_problem(seed=0, n=50, d=8, l=6, k=3, g=3, missing=True, sparse=False,
                  grams="none", lam=0.7, lam2=0.3, lam3=0.5, lam4=0.8):
    """A random `GlocalData` and a random point (U, V, W, Z), plus the dense X.

    ``grams``: "none" (products through X), "gram" (X^T X only) or "all" (X^T X and the
    per-group second moments), forcing each kind of `glocal.solver.second_moments`.
    """
    rng = np.random.default_rng(seed)
    X_dense = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.4)
    X = sp.csr_matrix(X_dense) if sparse else X_dense
    scores = X_dense @ rng.standard_normal((d, l)) + 0.3 * rng.standard_normal((n, l))
    Y = np.where(scores > 0, 1.0, -1.0).T
    J = None
    if missing:
        J = (rng.random((l, n)) > 0.4).astype(float)
        Y = Y * J
    groups = rng.permutation(np.arange(n) % g)
    index = group_index(groups)
    moments = THROUGH_SAMPLES
    if grams == "gram":
        moments = Gram(X_dense.T @ X_dense)
    if grams == "all":
        moments = GroupGrams(X_dense.T @ X_dense,
                             np.stack([X_dense[idx].T @ X_dense[idx] for idx in index]))
    data = GlocalData(X, Y, J, index, lam, lam2, lam3, lam4, moments=moments)
    U = rng.standard_normal((l, k))
    V = rng.standard_normal((k, n))
    W = 0.5 * rng.standard_normal((d, k))
    Z = rng.standard_normal((g, l, k))
    Z /= np.linalg.norm(Z, axis=-1, keepdims=True)
    return data, (U, V, W, Z), X_dense


@pytest.fixture(scope="session")
def make_problem():
    """Factory of small random problems: ``make_problem(seed=..., missing=..., ...)``."""
    return _make_problem


def _multilabel_data(seed=0, n=60, d=8, l=5):
    """Dense features and a complete {0, 1} label matrix (n x l), linearly related."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    scores = X @ rng.standard_normal((d, l)) + 0.5 * rng.standard_normal((n, l))
    Y = (scores > 0.3).astype(float)
    return X, Y


@pytest.fixture(scope="session")
def multilabel_data():
    """Factory of small dense multi-label data sets: ``multilabel_data(seed, n, d, l)``."""
    return _multilabel_data


# --- the slow tests ------------------------------------------------------------------------
# Deselected by `pytest -m "not slow"`. The examples and the documentation mark themselves;
# here every test whose code starts a new Python process (the command line as a user runs
# it, a second interpreter) is marked by what it does, so that a new one is slow without
# being told.
NEW_PROCESS = ("subprocess", "_glocal(", "multiprocessing", "Popen")


def pytest_collection_modifyitems(config, items):
    import inspect

    for item in items:
        function = getattr(item, "function", None)
        if function is None:
            continue
        try:
            source = inspect.getsource(function)
        except (OSError, TypeError):
            continue
        if any(word in source for word in NEW_PROCESS):
            item.add_marker(pytest.mark.slow)
