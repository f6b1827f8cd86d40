"""The paper's protocol: sampler, splits, masked measures, model selection, t-tests."""

import numpy as np
import pytest
import scipy.sparse as sp

from glocal import GLOCAL, metrics
from glocal.baselines import BR
from glocal.metrics import evaluate
from glocal.protocol import (
    CORRELATION_WEIGHTS,
    GLOCAL_ABLATION_GRID,
    drop_unlabeled_rows,
    evaluate_masked,
    observed_average_precision,
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


_ROW_MEASURES = ("ranking_loss", "coverage", "average_precision", "instance_auc")


def _row_means(y_true, y_score, mask):
    """Every instance measure row by row on the selected entries, undefined rows skipped."""
    values = {name: [] for name in _ROW_MEASURES}
    for y, s, m in zip(y_true, y_score, mask):
        for name in _ROW_MEASURES:
            try:
                values[name].append(getattr(metrics, name)(y[m][None], s[m][None]))
            except ValueError:  # undefined on this row, or no entry selected
                pass
    return {name: np.mean(v) for name, v in values.items()}


def test_evaluate_masked_with_all_entries_is_evaluate():
    rng = np.random.default_rng(0)
    Y = (rng.random((30, 6)) < 0.4).astype(int)
    S = rng.integers(0, 4, size=Y.shape).astype(float)  # ties
    ours = evaluate_masked(Y, S, np.ones(Y.shape, dtype=bool))
    assert ours == pytest.approx(evaluate(Y, S), rel=1e-12)


def test_evaluate_masked_matches_row_by_row_brute_force():
    rng = np.random.default_rng(1)
    Y = (rng.random((40, 7)) < 0.4).astype(float)
    S = rng.integers(0, 5, size=Y.shape).astype(float)
    mask = rng.random(Y.shape) < 0.5
    Y[~mask & (rng.random(Y.shape) < 0.5)] = np.nan  # unselected entries may be NaN
    expected = _row_means(np.nan_to_num(Y), S, mask)
    expected["label_auc"] = _row_means(np.nan_to_num(Y).T, S.T, mask.T)["instance_auc"]
    assert evaluate_masked(Y, S, mask) == pytest.approx(expected, rel=1e-12)


def test_evaluate_masked_undefined_measure_is_nan():
    Y = np.array([[1, 0], [1, 0]])
    scores = evaluate_masked(Y, np.zeros((2, 2)), np.array([[True, False], [True, False]]))
    assert np.isnan(scores["ranking_loss"]) and np.isnan(scores["label_auc"])
    assert scores["average_precision"] == 1.0


def test_observed_average_precision_ignores_missing_entries(multilabel_data):
    X, Y = multilabel_data(n=80)
    model = BR().fit(X, Y)
    assert observed_average_precision(model, X, Y) == pytest.approx(model.score(X, Y))

    Y_observed = sample_observed(Y, 0.5, random_state=0)
    missing = np.isnan(Y_observed)
    value = observed_average_precision(model, X, Y_observed)

    class Shifted:
        """The same scores on the observed entries, anything on the missing ones."""

        def decision_function(self, X):
            return np.where(missing, 100.0, model.decision_function(X))

    assert observed_average_precision(Shifted(), X, Y_observed) == pytest.approx(value)
    expected = evaluate_masked(Y, model.decision_function(X), ~missing)["average_precision"]
    assert value == pytest.approx(expected)


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
