"""Per-label Platt scaling (glocal/model_selection/_calibration.py) and the probabilities of
`GLOCALCV`, calibrated on the search's out-of-fold scores."""

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad, hessian
from derivatives import close
from sklearn.linear_model import LogisticRegression

from glocal import GLOCAL, GLOCALCV
from glocal.datasets import make_glocal_data
from glocal.metrics import observed_average_precision
from glocal.model_selection._calibration import (
    PROBA_EPS,
    _platt_derivatives,
    _platt_loss,
    fit_platt,
    platt_proba,
    platt_targets,
)
from glocal.protocol import sample_observed


def _logistic_labels(n, slopes, intercepts, seed, missing=0.0):
    """Scores and labels drawn with P(y = 1 | s) = sigmoid(a s + b) per label, a fraction
    ``missing`` of the entries NaN."""
    rng = np.random.default_rng(seed)
    scores = 2.0 * rng.standard_normal((n, len(slopes)))
    p = 1 / (1 + np.exp(-(scores * slopes + intercepts)))
    Y = (rng.random(p.shape) < p).astype(float)
    Y[rng.random(p.shape) < missing] = np.nan
    return scores, Y


def test_platt_derivatives_agree_with_autograd():
    scores, Y = _logistic_labels(40, np.array([1.0, -0.5, 2.0]), np.zeros(3), 0, 0.3)
    targets, observed = platt_targets(Y)
    scores = np.where(observed, scores, 0.0)
    slopes, intercepts = np.array([0.7, -0.2, 1.3]), np.array([0.1, -0.4, 0.5])
    g_a, g_b, h_aa, h_ab, h_bb = _platt_derivatives(slopes, intercepts, scores, targets,
                                                    observed)
    for j in range(3):
        rows = observed[:, j]
        s, t = scores[rows, j], targets[rows, j]

        def loss(ab, s=s, t=t):
            z = ab[0] * s + ab[1]
            return anp.sum(anp.logaddexp(0.0, z) - t * z)

        point = np.array([slopes[j], intercepts[j]])
        # the loss the line search uses is this label's cross-entropy
        close(_platt_loss(slopes, intercepts, scores, targets, observed)[j], loss(point))
        close([g_a[j], g_b[j]], grad(loss)(point))
        close([[h_aa[j], h_ab[j]], [h_ab[j], h_bb[j]]], hessian(loss)(point))


def test_platt_targets_are_smoothed_per_label():
    Y = np.array([[1, 0], [0, np.nan], [0, 0], [np.nan, 0]], dtype=float)
    targets, observed = platt_targets(Y)
    np.testing.assert_array_equal(observed, ~np.isnan(Y))
    # label 0: one positive (2/3) and two negatives (1/4); label 1: three negatives (1/5)
    np.testing.assert_allclose(targets, [[2 / 3, 1 / 5], [1 / 4, 0], [1 / 4, 1 / 5],
                                         [0, 1 / 5]])


def test_fit_platt_minimizes_the_cross_entropy_of_platts_targets():
    scores, Y = _logistic_labels(3000, np.array([1.5, 0.5, 1.0, 3.0]),
                                 np.array([-1.0, 0.5, 0.0, -4.0]), 1, 0.4)
    slopes, intercepts = fit_platt(scores, Y)
    targets, observed = platt_targets(Y)
    for j in range(Y.shape[1]):
        rows = observed[:, j]
        s, t = scores[rows, j], targets[rows, j]
        # The same minimizer by another solver: a logistic regression of the targets (each
        # entry as a positive of weight t and a negative of weight 1 - t), unpenalized.
        reference = LogisticRegression(C=1e12, tol=1e-12, max_iter=10_000).fit(
            np.r_[s, s][:, None], np.r_[np.ones_like(s), np.zeros_like(s)],
            sample_weight=np.r_[t, 1 - t])
        np.testing.assert_allclose([slopes[j], intercepts[j]],
                                   [reference.coef_[0, 0], reference.intercept_[0]],
                                   rtol=1e-5, atol=1e-6)
    # Many draws recover the map that drew the labels.
    np.testing.assert_allclose(slopes, [1.5, 0.5, 1.0, 3.0], atol=0.25)
    np.testing.assert_allclose(intercepts, [-1.0, 0.5, 0.0, -4.0], atol=0.35)


def test_missing_entries_are_skipped():
    scores, Y = _logistic_labels(300, np.array([1.0, 2.0]), np.array([0.0, -1.0]), 2, 0.5)
    slopes, intercepts = fit_platt(scores, Y)
    for j in range(2):
        rows = ~np.isnan(Y[:, j])
        alone = fit_platt(scores[rows, j:j + 1], Y[rows, j:j + 1])
        np.testing.assert_allclose([slopes[j], intercepts[j]], np.ravel(alone), rtol=1e-9)
    # What a missing entry's score is does not matter.
    noisy = np.where(np.isnan(Y), 1e6, scores)
    np.testing.assert_array_equal(np.ravel(fit_platt(noisy, Y)),
                                  np.ravel((slopes, intercepts)))


def test_one_class_labels_get_the_smoothed_frequency():
    rng = np.random.default_rng(3)
    scores = rng.standard_normal((20, 4))
    Y = np.zeros((20, 4))
    Y[:, 1] = 1.0
    Y[10:, 1] = np.nan  # 10 observed, all positive
    Y[:, 2] = np.nan  # never observed
    Y[:, 3] = rng.random(20) < 0.5
    Y[:5, 3] = np.nan  # both classes: an ordinary label
    slopes, intercepts = fit_platt(scores, Y)
    P = platt_proba(rng.standard_normal((7, 4)) * 100, slopes, intercepts)
    assert np.isfinite(slopes).all() and np.isfinite(intercepts).all()
    np.testing.assert_allclose(P[:, 0], 1 / 22)  # never positive of 20: (0 + 1) / (20 + 2)
    np.testing.assert_allclose(P[:, 1], 11 / 12)  # never negative of 10: (10 + 1) / (10 + 2)
    np.testing.assert_allclose(P[:, 2], 0.5)
    np.testing.assert_array_equal(slopes[:3], 0)  # whatever the score
    assert slopes[3] != 0


def test_separable_scores_and_equal_scores_give_finite_maps():
    scores = np.tile(np.arange(10.0)[:, None], (1, 2))
    Y = np.column_stack([scores[:, 0] >= 5, scores[:, 0] % 2]).astype(float)
    scores[:, 1] = 0.25  # every score the same: the slope is not identified
    slopes, intercepts = fit_platt(scores, Y)
    assert np.isfinite(slopes).all() and np.isfinite(intercepts).all()
    P = platt_proba(scores, slopes, intercepts)
    # Separated, yet kept away from 0 and 1, with the mean of Platt's targets (5/7 and 1/7).
    assert 0.01 < P[0, 0] < 0.5 < P[-1, 0] < 0.99
    np.testing.assert_allclose(P[:, 0].mean(), (5 * 6 / 7 + 5 / 7) / 10)
    np.testing.assert_allclose(P[:, 1], 0.5, atol=1e-6)


def test_probabilities_increase_with_the_score_and_stay_inside_zero_and_one():
    scores, Y = _logistic_labels(500, np.array([2.0, 0.3]), np.array([0.0, 1.0]), 4)
    slopes, intercepts = fit_platt(scores, Y)
    grid = np.tile(np.linspace(-1e3, 1e3, 2001)[:, None], (1, 2))
    P = platt_proba(grid, slopes, intercepts)
    assert np.all(np.diff(P, axis=0) >= 0)
    assert np.all(P[-1] > P[1000]) and np.all(P[1000] > P[0])
    assert P.min() == PROBA_EPS and P.max() == 1 - PROBA_EPS


def test_scores_that_rank_a_label_backwards_are_not_used():
    """A label whose scores rank its entries backwards gets the constrained minimizer: slope
    0, every row the mean of its targets."""
    scores, Y = _logistic_labels(400, np.array([-1.5, 1.5]), np.array([0.5, 0.5]), 5, 0.2)
    slopes, intercepts = fit_platt(scores, Y)
    assert slopes[0] == 0 and slopes[1] > 1
    targets, observed = platt_targets(Y)
    P = platt_proba(scores, slopes, intercepts)
    np.testing.assert_allclose(P[:, 0], targets[observed[:, 0], 0].mean())
    # It is the least cross-entropy with a nonnegative slope: any small one is worse.
    loss = _platt_loss(slopes, intercepts, scores, targets, observed)[0]
    for slope in (1e-3, 1e-2, 0.1):
        for shift in (-0.1, 0.0, 0.1):
            other = _platt_loss(np.array([slope, 0.0]), np.array([intercepts[0] + shift, 0]),
                                scores, targets, observed)[0]
            assert other > loss


def test_fit_platt_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match=r"same shape, got \(3, 2\) and \(3, 1\)"):
        fit_platt(np.zeros((3, 2)), np.zeros((3, 1)))


@pytest.fixture(scope="module")
def search():
    """A GLOCALCV fitted with a scorer that also keeps every fit's validation scores."""
    data = make_glocal_data(n_samples=450, random_state=0)
    X, Y = data.X[:300], sample_observed(data.Y[:300], 0.5, random_state=0)
    kept = []

    def scorer(model, X_val, Y_val):
        scores = model.decision_function(X_val)
        kept.append(((model.lam2, model.normalize_rows), Y_val, scores))
        return observed_average_precision(Y_val, scores)

    # Without racing, whose noise estimate would also call the scorer on parts of the rows.
    model = GLOCALCV(random_state=0, scoring=scorer, racing=None).fit(X, Y)
    return model, kept, (X, Y), (data.X[300:], data.Y[300:])


def test_glocalcv_calibrates_on_the_chosen_settings_out_of_fold_scores(search):
    model, kept, (X, Y), _ = search
    best = (model.best_params_["lam2"], model.best_params_["normalize_rows"])
    folds = [(Y, S) for setting, Y, S in kept if setting == best]
    assert len(folds) == model.n_splits_
    # The held-out scores are kept in float32.
    slopes, intercepts = fit_platt(np.vstack([S.astype(np.float32) for _, S in folds]),
                                   np.vstack([Y for Y, _ in folds]))
    np.testing.assert_allclose(model.calibration_slopes_, slopes, rtol=1e-12)
    np.testing.assert_allclose(model.calibration_intercepts_, intercepts, rtol=1e-12)
    P = model.predict_proba(X)
    assert P.shape == Y.shape and P.min() > 0 and P.max() < 1
    np.testing.assert_array_equal(
        P, platt_proba(model.decision_function(X), slopes, intercepts))
    # A higher score, a higher probability, label by label.
    assert np.all(model.calibration_slopes_ > 0)


def test_glocalcv_probabilities_beat_the_prior_and_the_raw_scores(search):
    model, _, (_, Y), (X_test, Y_test) = search
    P = model.predict_proba(X_test)

    def log_loss(P):
        return -np.mean(Y_test * np.log(P) + (1 - Y_test) * np.log(1 - P))

    prior = np.broadcast_to(np.nanmean(Y, axis=0), Y_test.shape)
    raw = 1 / (1 + np.exp(-model.decision_function(X_test)))  # the scores as log-odds
    assert log_loss(P) < log_loss(prior)
    assert log_loss(P) < log_loss(raw)


def test_logistic_glocalcv_is_calibrated_too(search):
    _, _, (X, Y), _ = search
    model = GLOCALCV(GLOCAL(loss="logistic", n_latent=4), {"lam2": [4.0]},
                     random_state=0).fit(X, Y)
    P = model.predict_proba(X)
    np.testing.assert_array_equal(P, platt_proba(model.decision_function(X),
                                                 model.calibration_slopes_,
                                                 model.calibration_intercepts_))
    assert not np.allclose(P, model.best_estimator_.predict_proba(X))


def test_a_model_fitted_without_calibration_says_so(search):
    import copy

    model = copy.deepcopy(search[0])
    del model.calibration_slopes_, model.calibration_intercepts_
    with pytest.raises(AttributeError) as raised:
        model.predict_proba(search[2][0])
    message = str(raised.value)
    assert "\n" not in message and "fit it again" in message
