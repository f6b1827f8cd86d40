"""The search's levers: racing over folds, the refit from a fold's model, and the exhaustive
search they leave unchanged when off."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import KFold, ParameterGrid
from test_model_selection import _data, _quiet  # noqa: F401 (_quiet: an autouse fixture)

from glocal import GLOCAL, GLOCALCV
from glocal._utils.progress import RoundsClock
from glocal.metrics import observed_two_way_average_precision
from glocal.model_selection import _search
from glocal.model_selection._fold import _walk_fold
from glocal.model_selection._plan import _needed, _plan
from glocal.model_selection._racing import (N_PARTS, RACE_AFTER_ONE_FOLD_FROM, contenders,
                                            first_racing_fold, part_scores)

FOLDS = KFold(3, shuffle=True, random_state=0)


@pytest.fixture(scope="module")
def data():
    return _data(n=120)


class _Counting(GLOCAL):
    """GLOCAL that records every fit: its lam2, its start and itself."""

    calls = []

    def fit(self, X, Y, groups=None, *, init=None, cache=None, callback=None):
        super().fit(X, Y, groups, init=init, cache=cache, callback=callback)
        self.calls.append(dict(lam2=self.lam2, tol=self.tol, start=init, model=self))
        return self


def test_racing_drops_a_setting_clearly_behind_and_keeps_close_ones():
    """Per-row scores of three settings: the second differs from the first by row noise
    around zero, the third is behind by far more than that noise. The paired parts drop the
    third only; a criterion that cannot be computed on a part leaves NaN."""
    rng = np.random.default_rng(0)
    first = rng.uniform(0.5, 1.0, 300)
    rows = [first, first + rng.normal(0.0, 0.05, 300), first - 0.2]
    scores = np.array([[row.mean() for row in rows]])
    parts = np.array([[part_scores(lambda idx, row=row: row[idx].mean(), 300, 7)
                       for row in rows]])
    assert parts.shape == (1, 3, N_PARTS)
    alive = np.ones(3, dtype=bool)
    np.testing.assert_array_equal(contenders(scores, parts, alive, 2.0), [True, True, False])
    # For a mean over rows the parts give its standard error: the second setting's gap is
    # within 2 of them, the third's beyond.
    gap = scores[0, 0] - scores[0, 1:]
    error = np.std(parts[0, 0] - parts[0, 1:], axis=1, ddof=1) / np.sqrt(N_PARTS)
    assert abs(gap[0]) < 2 * error[0] and gap[1] > 2 * error[1]
    # Paired: the same parts for every setting of a fold, so a constant shift of every row
    # is no noise at all.
    assert np.ptp(parts[0, 0] - parts[0, 2]) < 1e-12
    # A second fold agreeing: still the same contenders.
    twice = contenders(np.vstack([scores, scores]), np.vstack([parts, parts]), alive, 2.0)
    np.testing.assert_array_equal(twice, [True, True, False])
    # Settings already dropped stay dropped; a vanished one (-inf) goes.
    scores[0, 1] = -np.inf
    np.testing.assert_array_equal(
        contenders(scores, parts, np.array([True, True, False]), 2.0), [True, False, False])

    def undefined(idx):
        raise ValueError("no row with an observed positive")

    assert np.isnan(part_scores(undefined, 30, 0)).all()


def test_racing_in_a_search_fits_the_contenders_only_and_counts_its_fits(monkeypatch):
    """A rank-1 model ranks labels of rank 4 far worse than rank-4 models, which are close
    to each other at lam2 = 2 and 1: after the first fold both rank-1 settings are dropped
    and the later folds fit the rank-4 path only. The fits made, those the search reports and
    those its progress counted agree."""
    X, Y = _data(n=150, hidden=0.5)
    clocks = []

    class Recorded(_search.SearchProgress):
        def __exit__(self, *exc):
            clocks.append(self.clock)
            return super().__exit__(*exc)

    monkeypatch.setattr(_search, "SearchProgress", Recorded)
    _Counting.calls.clear()
    grid = {"lam2": [2.0, 1.0], "n_latent": [1, 4]}
    search = GLOCALCV(_Counting(random_state=0), grid, cv=FOLDS, random_state=0,
                      racing=2.0).fit(X, Y)
    results = search.cv_results_
    rank_one = [params["n_latent"] == 1 for params in results["params"]]
    scores = np.array([results[f"split{i}_test_score"] for i in range(3)])
    assert np.isfinite(scores[0]).all()
    np.testing.assert_array_equal(np.isnan(scores[1:]), [rank_one] * 2)
    fold_calls = _Counting.calls[:-1]
    assert [call["model"].n_latent for call in fold_calls] == [1, 1, 4, 4, 4, 4, 4, 4]
    n_fits = int(np.sum(~np.isnan(scores)))
    assert n_fits == len(fold_calls) == clocks[0].done == clocks[0].total == 8
    # The dropped settings rank last although their one fold scored; the best was fitted
    # on every fold.
    assert results["rank_test_score"][rank_one].min() > results["rank_test_score"][
        np.logical_not(rank_one)].max()
    assert not rank_one[search.best_index_]
    np.testing.assert_array_equal(results["mean_test_score"][rank_one], scores[0, rank_one])


def test_racing_waits_for_two_folds_when_most_labels_are_missing():
    """Below a fifth of the entries observed every setting is fitted on two folds before any
    drop; from it on, on one. The same search that drops the rank-1 settings after the first
    fold with 60 % observed keeps them for the second with 15 % observed."""
    Y = np.full((10, 10), np.nan)
    Y.flat[:20] = 1.0  # 20 % observed
    assert RACE_AFTER_ONE_FOLD_FROM == 0.2 and first_racing_fold(Y, 3) == 1
    Y.flat[19] = np.nan
    assert first_racing_fold(Y, 3) == 2 and first_racing_fold(Y, 2) == 2
    assert first_racing_fold(np.zeros((4, 3)), 5) == 1
    grid = {"lam2": [2.0, 1.0], "n_latent": [1, 4]}
    for hidden, fitted_on_fold_1 in [(0.4, 2), (0.85, 4)]:
        X, Y = _data(n=300, hidden=hidden)
        assert (np.isnan(Y).mean() > 1 - RACE_AFTER_ONE_FOLD_FROM) == (hidden > 0.5)
        results = GLOCALCV(GLOCAL(random_state=0), grid, cv=FOLDS, random_state=0,
                           racing=2.0).fit(X, Y).cv_results_
        assert np.isfinite(results["split0_test_score"]).all()
        assert np.isfinite(results["split1_test_score"]).sum() == fitted_on_fold_1


def test_without_racing_the_search_is_the_exhaustive_one(data):
    """``racing=None``: every setting on every fold along the plan, the very fold walks and
    the very refit from GLOCAL's own start of the search without racing."""
    X, Y = data
    grid = {"lam2": [4.0, 1.0], "normalize_rows": [False, True]}
    base = GLOCAL(n_latent=3, random_state=0)
    search = GLOCALCV(base, grid, cv=FOLDS, racing=None).fit(X, Y)
    candidates = list(ParameterGrid(grid))
    plan = _plan(candidates, "lam2")
    for i, (train, test) in enumerate(FOLDS.split(X)):
        walk = _walk_fold(base, candidates, plan, X, Y, None, train, test, None, 1e-2, i, 3, 0)
        np.testing.assert_array_equal(search.cv_results_[f"split{i}_test_score"], walk[0])
        assert np.isnan(walk[6]).all() and walk[7] == {}  # no parts scored, no models kept
    refit = clone(base).set_params(**search.best_params_).fit(X, Y)
    np.testing.assert_array_equal(search.decision_function(X), refit.decision_function(X))
    assert search.best_estimator_.tol == base.tol


def test_racing_still_fits_the_starts_of_the_kept_settings():
    """Racing changes which settings a fold fits, never where a kept one starts: a dropped
    setting that a kept one starts from (along its path) is still fitted, those after the
    last kept one of a path are not."""
    X, Y = _data(n=60)
    candidates = list(ParameterGrid({"lam2": [4.0, 1.0, 0.25]}))  # walked in this order
    plan = _plan(candidates, "lam2")
    assert list(_needed(plan, [False, True, False])) == [True, True, False]
    assert list(_needed(plan, [False, False, True])) == [True, True, True]
    assert list(_needed(plan, [True, False, False])) == [True, False, False]
    train, test = np.arange(40), np.arange(40, 60)
    _Counting.calls.clear()
    alive = _needed(plan, [False, True, False])
    walk = _walk_fold(_Counting(n_latent=2, random_state=0), candidates, plan, X, Y, None,
                      train, test, None, 1e-2, 0, 1, 0, alive=alive, parts_seed=3,
                      keep_models=True)
    calls = _Counting.calls
    assert [call["lam2"] for call in calls] == [4.0, 1.0]
    assert calls[0]["start"] is None and calls[1]["start"] is calls[0]["model"]
    assert np.isnan(walk[0][2]) and np.isfinite(walk[0][:2]).all()
    assert np.isnan(walk[6][2]).all() and np.isfinite(walk[6][:2]).all()
    assert set(walk[7]) == {0, 1}
    # The parts are the default criterion on parts of the validation rows, seeded per fold.
    scores = walk[7][1].decision_function(X[test])
    again = part_scores(
        lambda rows: observed_two_way_average_precision(Y[test][rows], scores[rows]),
        len(test), 3)
    np.testing.assert_array_equal(walk[6][1], again)


def test_the_refit_starts_from_the_last_folds_model_at_the_paths_tolerance(data):
    X, Y = data
    _Counting.calls.clear()
    search = GLOCALCV(_Counting(n_latent=3, random_state=0), {"lam2": [4.0, 1.0]}, cv=FOLDS,
                      racing=None, refit_start="fold").fit(X, Y)
    refit, fold_calls = _Counting.calls[-1], _Counting.calls[:-1]
    last_fold = [call for call in fold_calls[-2:] if call["lam2"] == search.best_params_["lam2"]]
    assert refit["start"] is last_fold[0]["model"]
    assert refit["tol"] == search.path_tol == search.best_estimator_.tol
    scratch = GLOCALCV(GLOCAL(n_latent=3, random_state=0), {"lam2": [4.0, 1.0]}, cv=FOLDS,
                       racing=None).fit(X, Y)  # the default: from GLOCAL's own start
    assert scratch.best_estimator_.tol == 1e-4


def test_rounds_clock_counts_only_the_steps_left_after_a_drop():
    class Clock:
        now = 0.0

        def __call__(self):
            return self.now

    clock = Clock()
    rounds = RoundsClock(3, 4, clock)
    for cost in (10, 1, 1, 2):
        clock.now += cost
        rounds.step_done()
    rounds.drop([0, 1], 2)  # steps 0 and 1 are dropped from both later rounds
    assert rounds.total == 8 and rounds.time_left() == 2 * (1 + 2)
    for step in (2, 3):
        clock.now += 2 * (1, 2)[step - 2]  # twice as slow as the first round
        rounds.step_done(step)
    assert rounds.time_left() == pytest.approx(2 * 3)
