"""The paper's protocol: sampler, splits, t-tests."""

import numpy as np
import pytest
import scipy.sparse as sp

from glocal.protocol import (
    drop_unlabeled_rows,
    paired_ttest,
    random_splits,
    sample_observed,
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
