"""Tests for glocal.metrics: brute-force references, scikit-learn, hand examples, validation."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import (
    coverage_error,
    label_ranking_average_precision_score,
    label_ranking_loss,
    roc_auc_score,
)

from glocal import metrics
from glocal.baselines import BR
from glocal.metrics import (
    GREATER_IS_BETTER,
    PAPER_NAMES,
    average_precision,
    coverage,
    evaluate,
    evaluate_masked,
    instance_auc,
    label_auc,
    observed_average_precision,
    observed_average_precision_scorer,
    observed_two_way_average_precision,
    observed_two_way_average_precision_scorer,
    observed_weighted_average_precision,
    observed_weighted_average_precision_scorer,
    ranking_loss,
)

MEASURES = {
    "ranking_loss": ranking_loss,
    "coverage": coverage,
    "average_precision": average_precision,
    "label_auc": label_auc,
    "instance_auc": instance_auc,
}


# --------------------------------------------------------------------------------------
# Brute-force references, written from the definitions with explicit loops over pairs.
# Each returns the list of per-row (per-label) values of the rows that are not skipped.
# --------------------------------------------------------------------------------------


def _pessimistic_rank(scores, j):
    return sum(1 for k in range(len(scores)) if scores[k] >= scores[j])


def _bf_ranking_loss(Y, S):
    values = []
    for y, s in zip(Y, S):
        P = [j for j in range(len(y)) if y[j] == 1]
        N = [j for j in range(len(y)) if y[j] == 0]
        if P and N:
            wrong = sum(1 for a in P for b in N if s[a] <= s[b])
            values.append(wrong / (len(P) * len(N)))
    return values


def _bf_instance_auc(Y, S):
    values = []
    for y, s in zip(Y, S):
        P = [j for j in range(len(y)) if y[j] == 1]
        N = [j for j in range(len(y)) if y[j] == 0]
        if P and N:
            right = sum(1 for a in P for b in N if s[a] >= s[b])
            values.append(right / (len(P) * len(N)))
    return values


def _bf_label_auc(Y, S):
    return _bf_instance_auc(Y.T, S.T)


def _bf_coverage(Y, S):
    values = []
    for y, s in zip(Y, S):
        P = [j for j in range(len(y)) if y[j] == 1]
        if P:
            values.append(max(_pessimistic_rank(s, j) for j in P) - 1)
    return values


def _bf_average_precision(Y, S):
    values = []
    for y, s in zip(Y, S):
        P = [j for j in range(len(y)) if y[j] == 1]
        if P:
            total = 0.0
            for c in P:
                rank_c = _pessimistic_rank(s, c)
                above = sum(1 for j in P if _pessimistic_rank(s, j) <= rank_c)
                total += above / rank_c
            values.append(total / len(P))
    return values


BRUTE_FORCE = {
    "ranking_loss": _bf_ranking_loss,
    "coverage": _bf_coverage,
    "average_precision": _bf_average_precision,
    "label_auc": _bf_label_auc,
    "instance_auc": _bf_instance_auc,
}


def _random_case(seed, n=13, l=7, n_levels=4):
    """Integer scores (many ties) and labels with the degenerate rows/labels mixed in."""
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, l)) < 0.4).astype(int)
    Y[:, 3] = 1  # a label whose only negative is row 0
    # An all-positive row gives every label a positive, so alternate between the two.
    if seed % 2:
        Y[1] = 1  # a row with no negative label
    else:
        Y[:, 2] = 0  # a label with no positive instance
    Y[0] = 0  # a row with no positive label
    S = rng.integers(0, n_levels, size=(n, l)).astype(float)
    perm = rng.permutation(n)
    return Y[perm], S[perm]


# --------------------------------------------------------------------------------------
# Agreement with the definitions
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(MEASURES))
@pytest.mark.parametrize("seed", range(8))
def test_matches_brute_force_with_ties(name, seed):
    Y, S = _random_case(seed, n_levels=2 + seed % 4)
    expected = np.mean(BRUTE_FORCE[name](Y, S))
    assert MEASURES[name](Y, S) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_evaluate_matches_individual_measures(seed):
    Y, S = _random_case(seed, n=20, l=9)
    result = evaluate(Y, S)
    assert set(result) == set(MEASURES)
    for name, f in MEASURES.items():
        assert isinstance(result[name], float)
        assert result[name] == pytest.approx(f(Y, S), rel=1e-12, abs=1e-12)


def test_tied_pairs_are_errors_for_rkl_and_correct_for_auc():
    Y, S = _random_case(0, n=30, l=8, n_levels=3)
    tied = []
    for y, s in zip(Y, S):
        P, N = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
        if len(P) and len(N):
            tied.append(sum(s[a] == s[b] for a in P for b in N) / (len(P) * len(N)))
    assert ranking_loss(Y, S) + instance_auc(Y, S) == pytest.approx(1 + np.mean(tied))


def test_without_ties_instance_auc_is_one_minus_ranking_loss():
    rng = np.random.default_rng(1)
    Y = (rng.random((50, 12)) < 0.3).astype(int)
    S = rng.standard_normal((50, 12))
    assert instance_auc(Y, S) == pytest.approx(1 - ranking_loss(Y, S))


def test_chunked_equals_unchunked(monkeypatch):
    Y, S = _random_case(3, n=40, l=9)
    expected = evaluate(Y, S)
    monkeypatch.setattr(metrics._ranking, "_CHUNK_ENTRIES", 20)  # chunks of 2 rows / 4 columns
    chunked = evaluate(Y, S)
    for name in expected:
        assert chunked[name] == pytest.approx(expected[name], rel=1e-12)


def test_invariant_to_increasing_transform():
    Y, S = _random_case(5, n=25, l=8)
    T = np.exp(S / 3) - 10
    for name, f in MEASURES.items():
        assert f(Y, T) == pytest.approx(f(Y, S), rel=1e-12), name


# --------------------------------------------------------------------------------------
# Agreement with scikit-learn where the definitions coincide
# --------------------------------------------------------------------------------------


def _both_classes(Y):
    n_pos = Y.sum(axis=1)
    return (n_pos > 0) & (n_pos < Y.shape[1])


@pytest.mark.parametrize("seed", range(3))
def test_coverage_is_sklearn_coverage_error_minus_one(seed):
    Y, S = _random_case(seed, n=40, l=10)
    rows = Y.sum(axis=1) > 0
    assert coverage(Y, S) == pytest.approx(coverage_error(Y[rows], S[rows]) - 1)


@pytest.mark.parametrize("seed", range(3))
def test_average_precision_matches_sklearn_lrap(seed):
    Y, S = _random_case(seed, n=40, l=10)
    rows = _both_classes(Y)
    expected = label_ranking_average_precision_score(Y[rows], S[rows])
    assert average_precision(Y[rows], S[rows]) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(3))
def test_ranking_loss_matches_sklearn(seed):
    Y, S = _random_case(seed, n=40, l=10)
    rows = _both_classes(Y)
    assert ranking_loss(Y, S) == pytest.approx(label_ranking_loss(Y[rows], S[rows]))


@pytest.mark.parametrize("seed", range(3))
def test_label_auc_matches_sklearn_roc_auc_without_ties(seed):
    rng = np.random.default_rng(seed)
    Y = (rng.random((60, 8)) < 0.3).astype(int)
    Y[:, 0] = 0  # skipped label
    S = rng.standard_normal((60, 8))
    labels = [j for j in range(8) if 0 < Y[:, j].sum() < 60]
    expected = np.mean([roc_auc_score(Y[:, j], S[:, j]) for j in labels])
    assert label_auc(Y, S) == pytest.approx(expected)


# --------------------------------------------------------------------------------------
# Hand-computed examples and extreme scores
# --------------------------------------------------------------------------------------

Y_HAND = np.array([[1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 0, 0]])
S_HAND = np.array([[0.9, 0.8, 0.3, 0.3], [0.1, 0.2, 0.2, 0.4], [0.9, 0.5, 0.5, 0.5]])


def test_hand_computed_example():
    # Row 0: pairs (0,1) ok, (0,3) ok, (2,1) wrong, (2,3) tied -> Rkl 2/4, Auc 3/4;
    #        ranks 1, 2, 4, 4 -> coverage 4 - 1, Ap (1/1 + 2/4) / 2.
    # Row 1: pairs (1,0) ok, (1,2) tied, (1,3) wrong -> Rkl 2/3, Auc 2/3; rank 3 -> Cvg 2,
    #        Ap 1/3.  Row 2 has no positive and is skipped.
    # Labels: 0 -> 1 (0.9 vs 0.1 and a tie at 0.9), 1 -> 0, 2 -> 1/2, 3 skipped.
    assert ranking_loss(Y_HAND, S_HAND) == pytest.approx(7 / 12)
    assert instance_auc(Y_HAND, S_HAND) == pytest.approx(17 / 24)
    assert coverage(Y_HAND, S_HAND) == pytest.approx(2.5)
    assert average_precision(Y_HAND, S_HAND) == pytest.approx(13 / 24)
    assert label_auc(Y_HAND, S_HAND) == pytest.approx(1 / 2)


def test_perfect_scores():
    Y, _ = _random_case(2, n=30, l=8)
    S = Y + 0.01 * np.random.default_rng(0).random(Y.shape)
    n_pos = Y.sum(axis=1)
    assert ranking_loss(Y, S) == 0.0
    assert average_precision(Y, S) == pytest.approx(1.0)
    assert instance_auc(Y, S) == pytest.approx(1.0)
    assert label_auc(Y, S) == pytest.approx(1.0)
    assert coverage(Y, S) == pytest.approx(np.mean(n_pos[n_pos > 0] - 1))
    # Ties among positives only do not hurt either.
    assert ranking_loss(Y, Y) == 0.0
    assert coverage(Y, Y) == pytest.approx(np.mean(n_pos[n_pos > 0] - 1))


def test_reversed_scores():
    Y, _ = _random_case(4, n=30, l=8)
    S = -Y + 0.01 * np.random.default_rng(0).random(Y.shape)
    assert ranking_loss(Y, S) == pytest.approx(1.0)
    assert instance_auc(Y, S) == 0.0
    assert label_auc(Y, S) == 0.0


def test_constant_scores():
    Y, S = _random_case(6)
    S = np.zeros_like(S)
    assert ranking_loss(Y, S) == 1.0
    assert instance_auc(Y, S) == 1.0
    assert label_auc(Y, S) == 1.0
    assert coverage(Y, S) == Y.shape[1] - 1


# --------------------------------------------------------------------------------------
# Skip conventions
# --------------------------------------------------------------------------------------


def test_skipped_rows_do_not_change_the_means():
    Y, S = _random_case(7)
    rng = np.random.default_rng(0)
    extra_s = rng.standard_normal((2, Y.shape[1]))
    Y_none = np.vstack([Y, np.zeros((2, Y.shape[1]), dtype=int)])
    Y_all = np.vstack([Y, np.ones((2, Y.shape[1]), dtype=int)])
    S2 = np.vstack([S, extra_s])
    for name in ("ranking_loss", "instance_auc", "coverage", "average_precision"):
        assert MEASURES[name](Y_none, S2) == pytest.approx(MEASURES[name](Y, S)), name
    for name in ("ranking_loss", "instance_auc"):
        assert MEASURES[name](Y_all, S2) == pytest.approx(MEASURES[name](Y, S)), name
    # An all-positive row is kept by coverage (l - 1) and average precision (1).
    n = Y.sum(axis=1).astype(bool).sum()
    l = Y.shape[1]
    assert coverage(Y_all, S2) == pytest.approx((coverage(Y, S) * n + 2 * (l - 1)) / (n + 2))
    assert average_precision(Y_all, S2) == pytest.approx(
        (average_precision(Y, S) * n + 2) / (n + 2)
    )


def test_skipped_labels_do_not_change_label_auc():
    Y, S = _random_case(8)
    rng = np.random.default_rng(0)
    extra_s = rng.standard_normal((Y.shape[0], 2))
    Y2 = np.hstack([Y, np.zeros((Y.shape[0], 1), int), np.ones((Y.shape[0], 1), int)])
    assert label_auc(Y2, np.hstack([S, extra_s])) == pytest.approx(label_auc(Y, S))


def test_nothing_left_raises():
    S = np.arange(12.0).reshape(3, 4)
    zeros = np.zeros((3, 4), dtype=int)
    ones = np.ones((3, 4), dtype=int)
    for name in MEASURES:
        with pytest.raises(ValueError, match=name):
            MEASURES[name](zeros, S)
    for name in ("ranking_loss", "instance_auc", "label_auc"):
        with pytest.raises(ValueError, match=name):
            MEASURES[name](ones, S)
    assert coverage(ones, S) == 3.0
    assert average_precision(ones, S) == 1.0
    with pytest.raises(ValueError, match="undefined"):
        evaluate(zeros, S)


# --------------------------------------------------------------------------------------
# Input handling and validation
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_sparse_equals_dense(fmt):
    Y, S = _random_case(9, n=20, l=8)
    dense = evaluate(Y, S)
    for y, s in [
        (sp.csr_matrix(Y).asformat(fmt), S),
        (Y, sp.csr_matrix(S).asformat(fmt)),
        (sp.csr_array(Y).asformat(fmt), sp.csr_array(S).asformat(fmt)),
    ]:
        result = evaluate(y, s)
        for name in dense:
            assert result[name] == pytest.approx(dense[name], rel=1e-12)


def test_accepts_lists_bool_labels_and_integer_scores():
    Y, S = _random_case(10, n=12, l=6)
    expected = evaluate(Y, S)
    for y, s in [(Y.tolist(), S.tolist()), (Y.astype(bool), S.astype(int)), (Y.astype(float), S)]:
        result = evaluate(y, s)
        for name in expected:
            assert result[name] == pytest.approx(expected[name], rel=1e-12)


@pytest.mark.parametrize("f", list(MEASURES.values()) + [evaluate])
@pytest.mark.parametrize(
    "y_true, y_score, match",
    [
        (np.ones((3, 4)), np.ones((3, 5)), "same shape"),
        (np.ones((3, 4)), np.ones((4, 3)), "same shape"),
        (np.ones(4), np.ones(4), "2-D"),
        (np.ones((2, 3)), np.ones((2, 3, 1)), "2-D"),
        (np.zeros((0, 3)), np.zeros((0, 3)), "empty"),
        (np.zeros((3, 0)), np.zeros((3, 0)), "empty"),
        (np.array([[1, -1], [-1, 1]]), np.ones((2, 2)), r"\(y_true > 0\)"),
        (np.array([[1, 2], [0, 1]]), np.ones((2, 2)), "0, 1"),
        (np.array([[1, 0], [0, np.nan]]), np.ones((2, 2)), "0, 1"),
        (np.array([[1, 0], [0, 1]]), np.array([[1.0, np.nan], [0, 1]]), "NaN or infinity"),
        (np.array([[1, 0], [0, 1]]), np.array([[1.0, np.inf], [0, 1]]), "NaN or infinity"),
        (np.array([["a", "b"], ["c", "d"]]), np.ones((2, 2)), "numeric"),
    ],
)
def test_invalid_input_raises(f, y_true, y_score, match):
    with pytest.raises(ValueError, match=match):
        f(y_true, y_score)


def test_name_tables():
    assert set(PAPER_NAMES) == {"Rkl", "Auc", "Cvg", "Ap"}
    assert set(PAPER_NAMES.values()) <= set(MEASURES)
    assert PAPER_NAMES["Auc"] == "instance_auc"
    assert GREATER_IS_BETTER == {
        "ranking_loss": False,
        "coverage": False,
        "average_precision": True,
        "label_auc": True,
        "instance_auc": True,
    }


# --------------------------------------------------------------------------------------
# Measures restricted to chosen (observed) entries.
# --------------------------------------------------------------------------------------


def _hide(Y, fraction, seed):
    """Y with about ``fraction`` of its entries set to NaN (missing)."""
    Y = np.asarray(Y, dtype=float).copy()
    Y[np.random.default_rng(seed).random(Y.shape) < fraction] = np.nan
    return Y


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


def test_observed_scorer_ignores_missing_entries(multilabel_data):
    X, Y = multilabel_data(n=80)
    model = BR().fit(X, Y)
    assert observed_average_precision_scorer(model, X, Y) == pytest.approx(model.score(X, Y))

    Y_observed = _hide(Y, 0.5, seed=0)
    missing = np.isnan(Y_observed)
    value = observed_average_precision_scorer(model, X, Y_observed)

    class Shifted:
        """The same scores on the observed entries, anything on the missing ones."""

        def decision_function(self, X):
            return np.where(missing, 100.0, model.decision_function(X))

    assert observed_average_precision_scorer(Shifted(), X, Y_observed) == pytest.approx(value)
    expected = evaluate_masked(Y, model.decision_function(X), ~missing)["average_precision"]
    assert value == pytest.approx(expected)




@pytest.mark.parametrize("measure", [observed_average_precision,
                                     observed_weighted_average_precision])
def test_observed_average_precision_without_nan_is_average_precision(measure):
    rng = np.random.default_rng(2)
    Y = (rng.random((50, 8)) < 0.3).astype(float)
    S = rng.integers(0, 4, size=Y.shape).astype(float)  # ties
    assert measure(Y, S) == average_precision(Y, S)  # bitwise


def test_observed_average_precision_ranks_each_row_among_its_observed_entries():
    rng = np.random.default_rng(3)
    Y = _hide((rng.random((60, 7)) < 0.4).astype(float), 0.4, seed=4)
    S = rng.integers(0, 5, size=Y.shape).astype(float)
    per_row = []
    for y, s in zip(Y, S):
        seen = ~np.isnan(y)
        if (y[seen] == 1).any():  # rows without an observed positive are skipped
            per_row.extend(_bf_average_precision(y[seen][None], s[seen][None]))
    assert observed_average_precision(Y, S) == pytest.approx(np.mean(per_row), rel=1e-12)


def test_observed_average_precision_documented_row_cases():
    nan = np.nan
    Y = np.array([[1, 0, nan],      # ranked among two entries: positive first -> 1
                  [0, 1, nan],      # positive second of two -> 1/2
                  [1, nan, nan],    # every observed entry positive -> 1
                  [0, 0, nan],      # no observed positive: skipped
                  [nan, nan, nan]])  # nothing observed: skipped
    S = np.array([[2.0, 1.0, 9.0]] * 5)
    assert observed_average_precision(Y, S) == pytest.approx((1 + 0.5 + 1) / 3)
    with pytest.raises(ValueError, match="average_precision is undefined"):
        observed_average_precision(Y[3:], S[3:])
    with pytest.raises(ValueError, match="y_true must be a"):
        observed_average_precision(np.array([[2.0, 0.0]]), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="same shape"):
        observed_average_precision(Y, S[:, :2])


def test_observed_weighted_average_precision_weights_rows_by_their_observed_labels():
    rng = np.random.default_rng(3)
    Y = _hide((rng.random((60, 7)) < 0.4).astype(float), 0.6, seed=4)
    S = rng.integers(0, 5, size=Y.shape).astype(float)
    per_row, weights = [], []
    for y, s in zip(Y, S):
        seen = ~np.isnan(y)
        if (y[seen] == 1).any():  # rows without an observed positive are skipped
            per_row.extend(_bf_average_precision(y[seen][None], s[seen][None]))
            weights.append(seen.sum())
    assert len(set(weights)) > 1
    assert observed_weighted_average_precision(Y, S) == pytest.approx(
        np.average(per_row, weights=weights), rel=1e-12)
    with pytest.raises(ValueError, match="average_precision is undefined"):
        observed_weighted_average_precision(np.where(Y == 1, np.nan, Y), S)


def test_weighted_criterion_ranks_a_bias_only_model_below_a_real_one():
    """Most labels missing: 40 rows observe the frequent label 0 (positive) and one rare
    label (negative); 5 rows observe all 8 labels, their positive a rare one. A ranking by
    label frequency alone (the same for every row) orders the 40 rows perfectly and the 5
    worst; a real model gets 30 of the 40 right and the 5 right. Unweighted, the rows of
    two labels outvote the informative ones and the bias-only ranking wins."""
    nan, l = np.nan, 8
    sparse = np.full((40, l), nan)
    sparse[:, 0], sparse[np.arange(40), 1 + np.arange(40) % (l - 1)] = 1.0, 0.0
    rich = np.zeros((5, l))
    rich[:, l - 1] = 1.0
    Y = np.vstack([sparse, rich])
    bias_only = np.tile(-np.arange(l, dtype=float), (45, 1))  # label 0 the most frequent
    real = np.where(np.nan_to_num(Y) == 1, 1.0, 0.0)
    real[:10, 0] = -1.0  # 10 of the 40 sparse rows ranked wrong
    assert (observed_average_precision(Y, bias_only)
            > observed_average_precision(Y, real))
    assert (observed_weighted_average_precision(Y, real)
            > observed_weighted_average_precision(Y, bias_only))


@pytest.mark.parametrize("scorer, measure", [
    (observed_weighted_average_precision_scorer, observed_weighted_average_precision),
    (observed_two_way_average_precision_scorer, observed_two_way_average_precision)])
def test_observed_scorers_are_their_measures_of_the_decision_function(multilabel_data, scorer,
                                                                       measure):
    X, Y = multilabel_data(n=80)
    Y_observed = _hide(Y, 0.5, seed=0)
    model = BR().fit(X, Y_observed)
    assert scorer(model, X, Y_observed) == measure(Y_observed, model.decision_function(X))


def test_two_way_criterion_is_rows_and_labels_ranked_among_observed_entries():
    rng = np.random.default_rng(5)
    Y = _hide((rng.random((60, 7)) < 0.4).astype(float), 0.6, seed=6)
    S = rng.integers(0, 5, size=Y.shape).astype(float)
    per_label = []
    for y, s in zip(Y.T, S.T):  # each label ranks its observed rows
        seen = ~np.isnan(y)
        if (y[seen] == 1).any():
            per_label.extend(_bf_average_precision(y[seen][None], s[seen][None]))
    for weight in (0.25, 0.6, 1.0):
        assert observed_two_way_average_precision(Y, S, label_weight=weight) == pytest.approx(
            (1 - weight) * observed_weighted_average_precision(Y, S)
            + weight * np.mean(per_label), rel=1e-12)
    assert observed_two_way_average_precision(Y, S, label_weight=0) == \
        observed_weighted_average_precision(Y, S)
    complete = (rng.random((40, 6)) < 0.4).astype(float)
    assert observed_two_way_average_precision(complete, S[:40, :6]) == pytest.approx(
        0.75 * average_precision(complete, S[:40, :6])
        + 0.25 * average_precision(complete.T, S[:40, :6].T), rel=1e-12)
    assert observed_two_way_average_precision(sp.csr_matrix(complete), S[:40, :6]) == \
        observed_two_way_average_precision(complete, S[:40, :6])
    with pytest.raises(ValueError, match=r"^label_weight must be in \[0, 1\], got 1.5.$"):
        observed_two_way_average_precision(Y, S, label_weight=1.5)
    with pytest.raises(ValueError, match="average_precision is undefined"):
        observed_two_way_average_precision(np.where(Y == 1, np.nan, Y), S)


def test_two_way_criterion_ranks_a_bias_only_model_below_a_real_one():
    """Most labels missing, every row with one observed positive and one observed negative:
    per-label biases alone (every row ranked alike) order most of these pairs right, so the
    rows' Ap barely tells them from a real model; within each label they tie every row,
    and the labels' term sees it."""
    rng = np.random.default_rng(7)
    n, l = 200, 6
    truth = (rng.random((n, l)) < 0.5).astype(float)
    Y = np.full((n, l), np.nan)
    for i in range(n):  # one observed positive and one observed negative per row
        pos, neg = np.flatnonzero(truth[i] == 1), np.flatnonzero(truth[i] == 0)
        if len(pos) and len(neg):
            Y[i, rng.choice(pos)], Y[i, rng.choice(neg)] = 1.0, 0.0
    real = truth + 0.1 * rng.normal(size=truth.shape)
    bias_only = np.tile(rng.normal(size=l), (n, 1))
    rows = observed_weighted_average_precision
    assert rows(Y, bias_only) > 0.6 and rows(Y, real) == 1.0
    assert (observed_two_way_average_precision(Y, real)
            - observed_two_way_average_precision(Y, bias_only)
            > rows(Y, real) - rows(Y, bias_only))
    assert observed_average_precision(Y.T, bias_only.T) < 0.6  # a tie within every label


def test_score_skips_missing_entries(multilabel_data):
    X, Y = multilabel_data(n=80)
    Y_observed = _hide(Y, 0.5, seed=1)
    model = BR().fit(X, Y_observed)
    assert model.score(X, Y_observed) == observed_average_precision_scorer(model, X, Y_observed)
    assert model.score(X, Y) == average_precision(Y, model.decision_function(X))
