"""Label sets: the F1, P@k and nDCG@k measures and the per-label report against
scikit-learn and brute force; F1 thresholds, top-k, LabelThresholdsCV, GLOCALCV's tuned
thresholds and the logistic loss's probabilities."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import f1_score, ndcg_score, precision_recall_fscore_support, roc_auc_score

from glocal import GLOCAL, GLOCALCV
from glocal.baselines import BR
from glocal.datasets import make_glocal_data
from glocal.metrics import label_report, macro_f1, micro_f1, ndcg_at_k, precision_at_k
from glocal.protocol import sample_observed
from glocal.thresholds import LabelThresholdsCV, f1_thresholds, mean_thresholds, top_k_labels


def _random(seed, n=40, l=7):
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, l)) < 0.3).astype(int)
    S = rng.standard_normal((n, l))  # no ties
    return Y, S, (S > 0.4).astype(int)


@pytest.mark.parametrize("seed", range(5))
def test_f1_measures_are_scikit_learns(seed):
    Y, _, P = _random(seed)
    assert micro_f1(Y, P) == pytest.approx(f1_score(Y, P, average="micro"))
    defined = np.flatnonzero((Y + P).sum(axis=0) > 0)
    assert macro_f1(Y, P) == pytest.approx(f1_score(Y, P, average="macro", labels=defined))


def test_f1_leaves_missing_entries_out():
    Y, _, P = _random(0)
    Y_nan = Y.astype(float)
    Y_nan[::3, 1] = np.nan
    kept = ~np.isnan(Y_nan)
    # Missing entries count for nothing: as true negatives would.
    negative = np.where(kept, Y, 0), np.where(kept, P, 0)
    assert micro_f1(Y_nan, P) == pytest.approx(micro_f1(*negative))
    assert macro_f1(Y_nan, P) == pytest.approx(macro_f1(*negative))
    with pytest.raises(ValueError, match="y_pred must hold only 0 and 1"):
        micro_f1(Y, P * 2)
    with pytest.raises(ValueError, match="undefined"):
        micro_f1(np.zeros((3, 2)), np.zeros((3, 2)))


def _brute_top_k(Y, S, k):
    """P@k and nDCG@k row by row, ties pessimistic (negatives first)."""
    precisions, gains = [], []
    for y, s in zip(Y, S):
        order = sorted(range(len(s)), key=lambda j: (-s[j], y[j]))[:k]
        precisions.append(sum(y[j] for j in order) / k)
        if y.sum():
            dcg = sum(y[j] / np.log2(r + 2) for r, j in enumerate(order))
            ideal = sum(1 / np.log2(r + 2) for r in range(min(k, int(y.sum()))))
            gains.append(dcg / ideal)
    return np.mean(precisions), np.mean(gains)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("k", [1, 3, 5])
def test_top_k_measures(seed, k):
    Y, S, _ = _random(seed)
    S_tied = np.round(S, 0)  # many ties
    for scores in (S, S_tied):
        p, g = _brute_top_k(Y, scores, k)
        assert precision_at_k(Y, scores, k) == pytest.approx(p)
        assert ndcg_at_k(Y, scores, k) == pytest.approx(g)
    rows = Y.sum(axis=1) > 0
    assert ndcg_at_k(Y, S, k) == pytest.approx(ndcg_score(Y[rows], S[rows], k=k))
    with pytest.raises(ValueError, match="k must be a positive integer"):
        precision_at_k(Y, S, 0)


def test_label_report_is_scikit_learns_per_label():
    Y, S, P = _random(1, n=60)
    report = label_report(Y, S, P, label_names=list("abcdefg"))
    assert report["label"] == list("abcdefg")
    np.testing.assert_array_equal(report["support"], Y.sum(axis=0))
    np.testing.assert_allclose(report["auc"], roc_auc_score(Y, S, average=None))
    precision, recall, f1, _ = precision_recall_fscore_support(Y, P, zero_division=np.nan)
    np.testing.assert_allclose(report["precision"], precision)
    np.testing.assert_allclose(report["recall"], recall)
    np.testing.assert_allclose(report["f1"], f1)
    Y[:, 2] = 0
    assert np.isnan(label_report(Y, S)["auc"][2])


def test_f1_thresholds_maximize_each_labels_f1():
    Y, S, _ = _random(2, n=50)
    thresholds = f1_thresholds(Y, S, min_f1=0)
    for j in range(Y.shape[1]):
        cuts = np.unique(S[:, j])
        best = max(f1_score(Y[:, j], S[:, j] >= c) for c in cuts)
        assert f1_score(Y[:, j], S[:, j] > thresholds[j]) == pytest.approx(best)
    # A label without a positive, or whose best F1 is below min_f1, gets none.
    Y[:, 0] = 0
    thresholds = f1_thresholds(Y, S, min_f1=0.99)
    assert np.isnan(thresholds).all()
    np.testing.assert_array_equal(mean_thresholds([[np.nan, 1.0], [np.nan, 3.0]]), [0.0, 2.0])


def test_top_k_labels():
    S = np.array([[0.1, 0.5, 0.5, -1.0], [3.0, 2.0, 1.0, 0.0]])
    np.testing.assert_array_equal(top_k_labels(S, 2), [[0, 1, 1, 0], [1, 1, 0, 0]])
    np.testing.assert_array_equal(top_k_labels(S, 9), np.ones((2, 4)))
    with pytest.raises(ValueError, match="positive integer"):
        top_k_labels(S, 0)


@pytest.fixture(scope="module")
def data():
    bunch = make_glocal_data(random_state=0)
    return bunch.X, sample_observed(bunch.Y, 0.5, random_state=0), bunch.Y


def test_label_thresholds_cv_wraps_br(data):
    X, Y, _ = data
    model = LabelThresholdsCV(BR(), cv=3, random_state=0).fit(X, Y)
    scores = BR().fit(X, Y).decision_function(X)
    np.testing.assert_array_equal(model.decision_function(X), scores)
    assert model.thresholds_.shape == (Y.shape[1],) and np.isfinite(model.thresholds_).all()
    np.testing.assert_array_equal(model.predict(X), scores > model.thresholds_)
    # Fitted behaviour is frozen: new parameters change nothing until the next fit.
    before = model.predict(X)
    model.set_params(cv=5, estimator=BR(C=100))
    np.testing.assert_array_equal(model.predict(X), before)


def test_glocalcv_predicts_with_thresholds_tuned_on_its_folds(data):
    X, Y, Y_full = data
    tuned = GLOCALCV(random_state=0).fit(X, Y)
    sign = GLOCALCV(random_state=0, thresholds="sign").fit(X, Y)
    np.testing.assert_array_equal(tuned.decision_function(X), sign.decision_function(X))
    np.testing.assert_array_equal(sign.thresholds_, np.zeros(Y.shape[1]))
    assert np.any(tuned.thresholds_ != 0)
    np.testing.assert_array_equal(tuned.predict(X), tuned.decision_function(X) >
                                  tuned.thresholds_)
    tuned.set_params(thresholds="sign")  # read at fit only
    np.testing.assert_array_equal(tuned.predict(X), tuned.decision_function(X) >
                                  tuned.thresholds_)
    # Fewer rows without any label, and better F1 here, than the sign.
    empty = [np.mean(m.predict(X).sum(axis=1) == 0) for m in (tuned, sign)]
    assert empty[0] < empty[1]
    assert macro_f1(Y_full, tuned.predict(X)) > macro_f1(Y_full, sign.predict(X))
    np.testing.assert_array_equal(tuned.predict_top_k(X, 2).sum(axis=1), 2)


def test_glocal_probabilities_for_the_logistic_loss_only(data):
    X, Y, _ = data
    model = GLOCAL(loss="logistic", n_latent=4, random_state=0).fit(X, Y)
    np.testing.assert_allclose(model.predict_proba(X),
                               1 / (1 + np.exp(-model.decision_function(X))))
    assert not hasattr(GLOCAL(), "predict_proba")
    # The error says what the method needs and how to get it.
    with pytest.raises(AttributeError) as raised:
        GLOCAL(loss="squared_hinge").predict_proba(X)
    message = str(raised.value)
    assert "\n" not in message and "needs loss='logistic'" in message
    assert "loss='squared_hinge'" in message and message.endswith("fit GLOCAL(loss='logistic')")
    # GLOCALCV's probabilities, calibrated for every loss, are tested in test_calibration.py.


def test_glocalcv_names_labels_of_a_frame_once(data):
    import warnings

    X, Y, _ = data
    Y = Y.copy()
    Y[:, 3] = np.where(np.isnan(Y[:, 3]), np.nan, 0.0)  # never positive
    frame = pd.DataFrame(Y, columns=[f"L{j}" for j in range(Y.shape[1])])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        GLOCALCV(random_state=0).fit(X, frame)
    texts = [str(w.message) for w in caught]
    assert texts == ["labels 'L3' are never positive among their observed entries: they "
                     "will be ranked low"], texts
    assert caught[0].filename == __file__  # raised where the user called fit


def test_label_report_leaves_missing_labels_out():
    """With NaN in y_true, each label's measures are those of its observed rows alone."""
    rng = np.random.default_rng(3)
    Y = (rng.random((60, 4)) < 0.4).astype(float)
    scores = Y + rng.normal(scale=0.8, size=Y.shape)
    predicted = (scores > 0.5).astype(int)
    hidden = sample_observed(Y, 0.5, random_state=0)
    report = label_report(hidden, scores, predicted)
    for j in range(4):
        rows = ~np.isnan(hidden[:, j])
        y, s, p = Y[rows, j], scores[rows, j], predicted[rows, j]
        assert report["support"][j] == y.sum()
        assert report["auc"][j] == pytest.approx(roc_auc_score(y, s))
        precision, recall, f1, _ = precision_recall_fscore_support(y, p, average="binary")
        assert (report["precision"][j], report["recall"][j], report["f1"][j]) == \
            pytest.approx((precision, recall, f1))
