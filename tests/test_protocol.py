"""The paper's protocol: sampler, splits, model selection, t-tests."""

import numpy as np
import pytest
import scipy.sparse as sp

from glocal import GLOCAL
from glocal.baselines import BR
from glocal.protocol import (
    CORRELATION_WEIGHTS,
    GLOCAL_ABLATION_GRID,
    drop_unlabeled_rows,
    paired_ttest,
    random_splits,
    sample_observed,
    select_hyperparameters,
)


def test_sampler_keeps_ceil_rho_of_each_class_of_each_label(multilabel_data):
    _, Y = multilabel_data(n=50)
    observed = sample_observed(Y, 0.3, random_state=0)
    seen = ~np.isnan(observed)
    np.testing.assert_array_equal(observed[seen], Y[seen])
    for value in (0, 1):
        expected = np.ceil(0.3 * (Y == value).sum(axis=0))
        np.testing.assert_array_equal((seen & (Y == value)).sum(axis=0), expected)


def test_random_splits_are_disjoint_sixty_forty_and_deterministic():
    splits = random_splits(100, 3, random_state=0)
    assert len(splits) == 3
    for train, test in splits:
        assert (train.size, test.size) == (60, 40)
        assert np.intersect1d(train, test).size == 0
        np.testing.assert_array_equal(np.union1d(train, test), np.arange(100))
    assert not np.array_equal(splits[0][1], splits[1][1])
    for (a, b), (c, d) in zip(splits, random_splits(100, 3, random_state=0)):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)
    # More repetitions keep the earlier splits (what resuming a reproduction relies on).
    np.testing.assert_array_equal(random_splits(100, 5, random_state=0)[2][1], splits[2][1])
    assert not np.array_equal(random_splits(100, 1, random_state=1)[0][1], splits[0][1])


@pytest.mark.parametrize("sparse", [False, True])
def test_drop_unlabeled_rows(sparse):
    X = np.arange(8.0).reshape(4, 2)
    Y = np.array([[0, 1], [0, 0], [1, 1], [0, 0]])
    X_kept, Y_kept = drop_unlabeled_rows(sp.csr_matrix(X) if sparse else X, Y)
    X_kept = X_kept.toarray() if sparse else X_kept
    np.testing.assert_array_equal(X_kept, X[[0, 2]])
    np.testing.assert_array_equal(Y_kept, Y[[0, 2]])


def test_select_hyperparameters_prefers_the_informative_setting(multilabel_data):
    X, Y = multilabel_data(n=100)
    # C = 1e-6 shrinks every SVM to (almost) a constant score: a useless ranking.
    best = select_hyperparameters(BR(), {"C": [1e-6, 1.0]}, X, Y, random_state=0)
    assert best == {"C": 1.0}


def test_select_hyperparameters_with_missing_labels_returns_a_grid_point(multilabel_data):
    X, Y = multilabel_data(n=80)
    Y = sample_observed(Y, 0.5, random_state=0)
    grid = {"lam2": [1.0, 10.0], "n_latent": [2, 3]}
    model = GLOCAL(n_groups=2, max_iter=3, init_max_iter=3, random_state=0)
    best = select_hyperparameters(model, grid, X, Y, cv=3, random_state=0)
    assert set(best) == set(grid)
    assert all(best[key] in grid[key] for key in grid)
    assert best == select_hyperparameters(model, grid, X, Y, cv=3, random_state=0)


def test_glocal_ablation_grid_ties_the_correlation_weights(multilabel_data):
    # GridSearchCV takes the list of one-point dicts: the chosen lam3 and lam4 are equal.
    X, Y = multilabel_data(n=80)
    model = GLOCAL(n_groups=2, max_iter=3, init_max_iter=3, random_state=0)
    best = select_hyperparameters(model, GLOCAL_ABLATION_GRID, X, Y, cv=3, random_state=0)
    assert set(best) == {"lam3", "lam4"}
    assert best["lam3"] == best["lam4"] and best["lam3"] in CORRELATION_WEIGHTS


def test_paired_ttest_marks():
    rng = np.random.default_rng(0)
    b = rng.random(10)
    a = b + 0.1 + 0.01 * rng.standard_normal(10)
    assert paired_ttest(a, b) == 1
    assert paired_ttest(b, a) == -1
    assert paired_ttest(a, b, greater_is_better=False) == -1
    assert paired_ttest(b, a, greater_is_better=False) == 1
    assert paired_ttest(b + 0.01 * rng.standard_normal(10), b) == 0
    assert paired_ttest(b, b) == 0
    assert paired_ttest([1.0], [0.0]) == 0
    with pytest.raises(ValueError, match="same length"):
        paired_ttest([1.0, 2.0], [1.0])
