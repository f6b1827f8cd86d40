"""Model selection with missing labels: GridSearchCV on NaN labels, and GLOCALCV."""

import pickle
import re
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, KFold, ParameterGrid
from sklearn.utils.estimator_checks import parametrize_with_checks
from test_sklearn_compatibility import run_check

from glocal import GLOCAL, GLOCALCV, GLObal
from glocal._utils.progress import settings_text
from glocal.baselines import BR
from glocal.metrics import (observed_average_precision_scorer,
                            observed_two_way_average_precision_scorer)
from glocal.model_selection import (DEFAULT_PARAM_GRID, MAX_DEFAULT_LATENT,
                                    PATH_SOLVER_OPTIONS, select_hyperparameters)
from glocal.model_selection._plan import _path_model, _plan
from glocal.protocol import CORRELATION_WEIGHTS, GLOCAL_ABLATION_GRID, sample_observed


def _data(seed=0, n=90, d=10, l=8, rank=4, hidden=0.4):
    """Labels of rank ``rank`` driven by the features; ``hidden`` of the entries are NaN."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    scores = X @ rng.standard_normal((d, rank)) @ rng.standard_normal((rank, l))
    Y = (scores + 0.5 * rng.standard_normal((n, l)) > 1.0).astype(float)
    Y_observed = Y.copy()
    Y_observed[rng.random(Y.shape) < hidden] = np.nan
    return X, Y_observed


@pytest.fixture(scope="module")
def data():
    return _data()


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # label warnings of small folds
        yield


FOLDS = KFold(3, shuffle=True, random_state=0)


def test_gridsearchcv_tunes_glocal_with_missing_labels(data):
    """With NaN in Y, GridSearchCV(GLOCAL()) scores every fold (no NaN) and picks the
    setting that ranks better, not just the first one: a rank-1 model cannot rank labels
    driven by four latent factors as well as a rank-4 one."""
    X, Y = data
    assert np.isnan(Y).mean() > 0.3
    search = GridSearchCV(GLOCAL(random_state=0), {"n_latent": [1, 4]}, cv=FOLDS).fit(X, Y)
    splits = np.array([search.cv_results_[f"split{i}_test_score"] for i in range(3)])
    assert np.isfinite(splits).all()
    assert search.best_params_ == {"n_latent": 4}
    assert np.all(splits[:, 1] > splits[:, 0] + 0.01)


def test_observed_scorer_in_gridsearchcv_is_score(data):
    X, Y = data
    grid = {"C": [0.01, 1.0]}
    by_score = GridSearchCV(BR(random_state=0), grid, cv=FOLDS).fit(X, Y)
    by_scorer = GridSearchCV(BR(random_state=0), grid, cv=FOLDS,
                             scoring=observed_average_precision_scorer).fit(X, Y)
    np.testing.assert_array_equal(by_score.cv_results_["mean_test_score"],
                                  by_scorer.cv_results_["mean_test_score"])


def test_without_warm_starts_glocalcv_is_gridsearchcv(data):
    """Same grid, folds, scorer and tol, every fit from scratch: the very same scores (the
    shared k-means groups are those each fit would find); GLOCALCV's default criterion is
    `observed_two_way_average_precision`."""
    X, Y = data
    grid = {"lam2": [4.0, 1.0], "fit_intercept": [False, True]}
    base = GLOCAL(n_latent=3, random_state=0)
    search = GridSearchCV(base, grid, cv=FOLDS,
                          scoring=observed_two_way_average_precision_scorer)
    search.fit(X, Y)
    ours = GLOCALCV(base, grid, path_param=None, path_tol=None, cv=FOLDS,
                    racing=None).fit(X, Y)
    assert ours.cv_results_["params"] == search.cv_results_["params"]
    for key in ["split0_test_score", "split1_test_score", "split2_test_score",
                "mean_test_score", "std_test_score", "rank_test_score"]:
        np.testing.assert_array_equal(ours.cv_results_[key], search.cv_results_[key])
    assert ours.best_params_ == search.best_params_
    assert ours.best_score_ == search.best_score_
    np.testing.assert_array_equal(ours.decision_function(X),
                                  search.best_estimator_.decision_function(X))


class _Recording(GLOCAL):
    """GLOCAL that records, for every fit, its setting, how it is stopped and where it starts."""

    calls = []

    def fit(self, X, Y, groups=None, *, init=None, cache=None):
        super().fit(X, Y, groups, init=init, cache=cache)
        self.calls.append(dict(fit_intercept=self.fit_intercept, lam2=self.lam2, tol=self.tol,
                               init_max_iter=self.init_max_iter,
                               solver_options=self.solver_options, start=init, model=self,
                               cache=cache))
        return self


def test_paths_walk_lam2_downward_and_siblings_start_from_each_other(data):
    """Per fold: lam2 decreasing; at each lam2 the model without bias starts from its
    previous solution (cold at the first), the one with bias from it (one more W row)."""
    X, Y = data
    _Recording.calls.clear()
    grid = {"lam2": [1.0, 10.0, 3.0], "fit_intercept": [False, True]}
    model = GLOCALCV(_Recording(n_latent=3, random_state=0), grid, cv=FOLDS, racing=None,
                     refit_start="scratch").fit(X, Y)
    calls = _Recording.calls
    assert len(calls) == 3 * 6 + 1  # every setting on every fold, then the refit
    for fold in range(3):
        fits = calls[6 * fold:6 * fold + 6]
        assert [(c["lam2"], c["fit_intercept"]) for c in fits] == [
            (10.0, False), (10.0, True), (3.0, False), (3.0, True), (1.0, False), (1.0, True)]
        assert fits[0]["start"] is None
        for step in (0, 2, 4):
            no_bias, bias = fits[step], fits[step + 1]
            assert bias["start"] is no_bias["model"]
            if step:
                assert no_bias["start"] is fits[step - 2]["model"]
        assert all(c["cache"] is fits[0]["cache"] for c in fits)  # one FitCache per fold
        # Warm starts (every fit but the first): one initialisation round.
        assert [c["init_max_iter"] for c in fits] == [30, 1, 1, 1, 1, 1]
    for call in calls[:-1]:  # path_tol and capped block optimizers along the paths
        assert call["tol"] == 1e-2
        assert call["solver_options"] == PATH_SOLVER_OPTIONS
    refit = calls[-1]  # cold, at the model's own tol and options
    assert refit["tol"] == 1e-4 and refit["start"] is None and refit["cache"] is None
    assert refit["init_max_iter"] == 30 and refit["solver_options"] is None
    assert model.cv_results_["params"] == list(ParameterGrid(grid))


def test_plan_of_paths():
    grid = list(ParameterGrid({"lam2": [1.0, 4.0], "n_latent": [2, 3]}))
    # [(1, 2), (1, 3), (4, 2), (4, 3)] as (lam2, n_latent): one path per n_latent
    assert _plan(grid, "lam2") == [(2, None), (0, 2), (3, None), (1, 3)]
    assert _plan(grid, None) == [(i, None) for i in range(4)]
    biased = [{"fit_intercept": True, "lam2": 1.0}, {"fit_intercept": False, "lam2": 1.0}]
    assert _plan(biased, "lam2") == [(0, None), (1, 0)]  # grid order at a value


def test_path_options_keep_a_tighter_user_cap():
    base = GLOCAL(solver_options={"block_max_iter": 5, "block_rtol": 1e-3, "max_inner": 7})
    model = _path_model(base, {"lam2": 1.0}, 1e-2, warm=False)
    assert model.solver_options == {"block_max_iter": 5, "block_rtol": 1e-2, "max_inner": 7}
    assert base.solver_options["block_rtol"] == 1e-3  # not mutated
    loose = _path_model(GLOCAL(solver_options={"block_rtol": 0.1}), {}, 1e-2, warm=False)
    assert loose.solver_options == {"block_max_iter": 20, "block_rtol": 0.1}
    assert _path_model(base, {"lam2": 1.0}, None, warm=True).get_params() == \
        clone(base).set_params(lam2=1.0).get_params()


def test_fitted_attributes_refit_and_pickle(data, capsys):
    X, Y = data
    grid = {"lam2": [4.0, 1.0], "n_latent": [1, 3]}
    model = GLOCALCV(GLObal(random_state=0), grid, cv=3, random_state=0, verbose=2,
                     racing=None, refit_start="scratch").fit(X, Y)
    out = capsys.readouterr().out
    assert out.count("[GLOCALCV] fold") == 3 * 4
    assert "[GLOCALCV] scored 4 settings on 3 folds (12 fits) in " in out
    refitted = f"[GLOCALCV] refitted {settings_text(model.best_params_)} on all {X.shape[0]} rows"
    assert refitted in out
    results = model.cv_results_
    mean = np.mean([results[f"split{i}_test_score"] for i in range(3)], axis=0)
    np.testing.assert_allclose(results["mean_test_score"], mean)
    assert model.best_index_ == int(np.argmax(mean))
    assert model.best_params_ == results["params"][model.best_index_]
    assert model.best_score_ == results["mean_test_score"].max()
    assert results["rank_test_score"][model.best_index_] == 1
    assert list(results["param_lam2"]) == [4.0, 4.0, 1.0, 1.0]
    # lam2 = 1 starts warm from lam2 = 4's solution: one round of the initialisation.
    np.testing.assert_array_equal(results["mean_n_init_iter"][2:], 1.0)
    printed = [int(count) for count in
               re.findall(r"s, (\d+) initialisation rounds?, \d+ outer iterations?\)", out)]
    assert len(printed) == 3 * 4  # the fold lines; means of 3 folds are sums / 3 in floats
    assert sum(printed) == pytest.approx(3 * results["mean_n_init_iter"].sum(), abs=1e-9)
    assert model.n_splits_ == 3 and model.n_features_in_ == X.shape[1]
    assert type(model.best_estimator_) is GLObal
    refit = clone(GLObal(random_state=0)).set_params(**model.best_params_).fit(X, Y)
    np.testing.assert_array_equal(model.decision_function(X), refit.decision_function(X))
    assert model.score(X, Y) == refit.score(X, Y)
    np.testing.assert_array_equal(model.predict(X),
                                  refit.decision_function(X) > model.thresholds_)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.decision_function(X), model.decision_function(X))
    # An int random_state makes the whole search reproducible.
    twice = GLOCALCV(GLObal(random_state=0), grid, cv=3, random_state=0, racing=None,
                     refit_start="scratch").fit(X, Y)
    np.testing.assert_array_equal(twice.cv_results_["mean_test_score"],
                                  results["mean_test_score"])


def test_without_refit_there_is_no_model(data):
    from sklearn.exceptions import NotFittedError

    X, Y = data
    model = GLOCALCV(GLOCAL(n_latent=2, random_state=0), {"lam2": [1.0]}, cv=2,
                     refit=False).fit(X, Y)
    assert model.best_params_ == {"lam2": 1.0}
    with pytest.raises(NotFittedError):
        model.decision_function(X)


def test_default_grid():
    assert GLOCALCV().param_grid is None
    assert set(DEFAULT_PARAM_GRID) == {"lam2", "normalize_rows"}
    assert DEFAULT_PARAM_GRID["lam2"] == sorted(DEFAULT_PARAM_GRID["lam2"], reverse=True)


def test_defaults_are_the_recommended_model_and_glocal_stays_the_papers(data):
    """GLOCALCV() tunes the squared hinge with a bias, lam_v = 0 and n_latent from the
    number of labels (capped); GLOCAL() keeps the paper's model."""
    X, Y = data
    search = GLOCALCV(cv=2, random_state=0).fit(X, Y)
    best = search.best_estimator_
    assert (best.loss, best.fit_intercept, best.lam_v) == ("squared_hinge", True, 0.0)
    assert (best.max_iter, best.init_max_iter) == (200, 300)
    assert best.n_latent == min(Y.shape[1], MAX_DEFAULT_LATENT) == Y.shape[1]
    assert set(search.best_params_) == set(DEFAULT_PARAM_GRID)
    assert len(search.cv_results_["params"]) == len(ParameterGrid(DEFAULT_PARAM_GRID))
    paper = GLOCAL()
    assert (paper.loss, paper.fit_intercept, paper.lam_v) == ("squared", False, None)
    # The cap on n_latent applies to many labels; a given estimator keeps its own.
    assert GLOCALCV()._base_estimator(5 * MAX_DEFAULT_LATENT).n_latent == MAX_DEFAULT_LATENT
    assert GLOCALCV(GLOCAL(n_latent=3))._base_estimator(50).n_latent == 3


@pytest.mark.slow
@pytest.mark.parametrize("name, rho, long_fit", [
    ("yeast", 0.3, False), ("birds", 0.3, True), ("birds", 1.0, True)])
def test_defaults_converge_on_real_data(name, rho, long_fit):
    """The recommended search raises no ConvergenceWarning: its basic-model initialisation
    meets tol within its cap, and Algorithm 1 then within its own (a 60/40 split)."""
    from sklearn.exceptions import ConvergenceWarning

    from glocal.protocol import random_splits, sample_observed
    from realdata import real

    data = real(name)
    X, Y = data.X, np.asarray(data.Y.toarray() if hasattr(data.Y, "toarray") else data.Y)
    train, _ = random_splits(X.shape[0], 1, random_state=0)[0]
    Y_train = Y[train] if rho == 1 else sample_observed(Y[train], rho, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        search = GLOCALCV(random_state=0).fit(X[train], Y_train)
    # birds' refit needs more rounds or outer iterations than GLOCAL()'s caps of 30 (it
    # warned with them)
    best = search.best_estimator_
    assert (max(best.n_init_iter_, best.n_iter_) > 30) == long_fit


def test_random_state_makes_folds_groups_and_result_reproducible(data):
    X, Y = data
    fits = [GLOCALCV(cv=2, random_state=seed).fit(X, Y) for seed in (7, 7, 8)]
    first, again, other = fits
    for name in ("split0_test_score", "split1_test_score", "mean_test_score"):
        np.testing.assert_array_equal(first.cv_results_[name], again.cv_results_[name])
    assert first.best_params_ == again.best_params_
    np.testing.assert_array_equal(first.best_estimator_.groups_, again.best_estimator_.groups_)
    np.testing.assert_array_equal(first.decision_function(X), again.decision_function(X))
    assert first._folds(X)[0][1].tolist() == again._folds(X)[0][1].tolist()
    assert first._folds(X)[0][1].tolist() != other._folds(X)[0][1].tolist()


@pytest.mark.parametrize("params, message", [
    (dict(estimator=BR()), "GLOCAL, GLObal or loCAL"),
    (dict(path_param="n_latent"), "changes the shape"),
    (dict(param_grid={"no_such": [1]}), "no_such"),
    (dict(path_tol=-1.0), "path_tol"),
    (dict(cv="five"), "cv"),
])
def test_bad_parameters(data, params, message):
    X, Y = data
    with pytest.raises(ValueError, match=message):
        GLOCALCV(**params).fit(X, Y)


def test_bad_labels(data):
    X, Y = data
    with pytest.raises(ValueError, match="0, 1 or NaN"):
        GLOCALCV().fit(X, 2 * np.nan_to_num(Y))


def test_given_groups_are_split_with_the_rows(data):
    X, Y = data
    groups = np.where(X[:, 0] > 0, "a", "b")
    model = GLOCALCV(GLOCAL(n_latent=2, n_groups=5, random_state=0), {"lam2": [4.0, 1.0]},
                     cv=2, random_state=0).fit(X, Y, groups)
    assert model.best_estimator_.n_groups_ == 2  # the given groups, not k-means' five
    with pytest.raises(ValueError, match="groups must give one group id per row"):
        GLOCALCV(param_grid={"lam2": [1.0]}, cv=2).fit(X, Y, groups[:-1])


@parametrize_with_checks(
    [GLOCALCV(GLOCAL(n_latent=2, n_groups=2, max_iter=3, init_max_iter=3), {"lam2": [1.0, 0.5]},
              cv=2)])
def test_sklearn_compatible(estimator, check):
    run_check(estimator, check)  # the same unavoidable failures as every estimator


def test_a_nan_score_ranks_last(data):
    X, Y = data

    def scoring(estimator, X, Y):
        return np.nan if estimator.lam2 == 4.0 else observed_average_precision_scorer(
            estimator, X, Y)

    # On these folds racing drops lam2 = 0.5 after the first, while lam2 = 4.0, the start of
    # the path, is still fitted on both: its NaN ranks after the dropped setting too.
    model = GLOCALCV(GLOCAL(n_latent=2, random_state=0), {"lam2": [4.0, 1.0, 0.5]},
                     scoring=scoring, cv=2, refit=False, random_state=1).fit(X, Y)
    assert np.isnan(model.cv_results_["split1_test_score"][2])  # dropped
    assert model.best_params_ != {"lam2": 4.0}
    assert model.cv_results_["rank_test_score"][0] == 3


def test_a_setting_whose_scores_vanish_is_never_chosen(data):
    """lam2 = 1e4 wipes the model out: its scores are zero to rounding. A scorer that prefers
    flat scores would pick it; the search scores it -inf on every fold instead, names it
    once in one warning, and starts the next fit of its path from GLOCAL's own initial point
    (a fit started at U V = 0 stays there)."""
    X, Y = data

    def flattest(estimator, X, Y):
        return -np.abs(estimator.decision_function(X)).max()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = GLOCALCV(GLOCAL(n_latent=2, random_state=0), {"lam2": [1e4, 1.0]},
                         scoring=flattest, cv=FOLDS, racing=None).fit(X, Y)
    assert model.best_params_ == {"lam2": 1.0}
    results = model.cv_results_
    assert all(results[f"split{i}_test_score"][0] == -np.inf for i in range(3))
    assert np.isfinite(results["mean_test_score"][1])
    assert results["mean_n_init_iter"][1] > 1  # not the one round of a warm start
    assert np.abs(model.decision_function(X)).max() > 1e-3
    texts = [str(w.message) for w in caught if "vanish" in str(w.message)
             or "all zero" in str(w.message)]
    assert len(texts) == 1
    assert texts[0].count(settings_text({"lam2": 1e4})) == 1
    assert "1 setting," in texts[0] and "3 of 3 folds" in texts[0]


def test_when_every_setting_vanishes_the_search_says_so_and_scores_minus_infinity(data):
    X, Y = data
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = GLOCALCV(GLOCAL(n_latent=2, random_state=0), {"lam2": [1e5, 1e4]}, cv=FOLDS,
                         refit=False).fit(X, Y)
    assert model.best_score_ == -np.inf and model.best_index_ == 0
    assert np.all(model.cv_results_["rank_test_score"] == 1)
    assert [str(w.message).count("vanished") for w in caught
            if "2 settings" in str(w.message)] == [1]


def test_solver_starts_from_a_given_point(make_problem):
    """The starting-point hook of `glocal_fit`: from its own solution Algorithm 1 starts where
    the fit ended and stops at once; V None means W^T X; a wrong shape is a clear error."""
    from glocal.solver.plan import Levers
    from glocal.solver import glocal_fit

    data, _, _ = make_problem(seed=3)
    first = glocal_fit(data, 3, random_state=0)
    point = (first.U, first.V, first.W, first.Z)
    # Plain basic-model initialisation: the accelerated one re-solves V before its first round.
    again = glocal_fit(data, 3, init_max_iter=0, random_state=1, initial_point=point,
                       levers=Levers(init_acceleration=0))
    assert again.objective_history[0] == pytest.approx(first.objective_history[-1], rel=1e-10)
    assert again.n_iter <= 2
    assert np.all(np.diff(again.objective_history) <= 0)
    from_w = glocal_fit(data, 3, init_max_iter=0, initial_point=(first.U, None, first.W,
                                                                  first.Z))
    assert from_w.objective_history[-1] <= from_w.objective_history[0]
    with pytest.raises(ValueError, match=r"initial_point: U has shape \(6, 2\)"):
        glocal_fit(data, 3, initial_point=(first.U[:, :2], first.V, first.W, first.Z))


# --- select_hyperparameters: the one tuning function of the experiments ----------------

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


def test_select_hyperparameters_without_paths_is_gridsearchcv(multilabel_data):
    X, Y = multilabel_data(n=80)
    Y = sample_observed(Y, 0.5, random_state=0)
    grid = {"lam2": [0.3, 30.0], "n_latent": [2, 3]}
    model = GLOCAL(n_groups=2, max_iter=3, init_max_iter=3, random_state=0)
    search = GridSearchCV(model, grid, scoring=observed_average_precision_scorer,
                          cv=KFold(3, shuffle=True, random_state=0)).fit(X, Y)
    assert select_hyperparameters(model, grid, X, Y, cv=3, random_state=0,
                                  paths=False) == search.best_params_


def test_a_validation_fold_without_an_observed_positive_is_a_clear_error():
    """The default scorer is undefined on such a fold: say which fold and what to do."""
    rng = np.random.RandomState(0)
    X, Y = rng.rand(40, 4), np.zeros((40, 3))
    Y[0, 0] = 1  # one row with a positive: four of five folds have none
    with pytest.raises(ValueError, match=r"validation fold \d of 5 has no row with an "
                                         r"observed positive label.*fewer folds"):
        GLOCALCV(cv=5).fit(X, Y)


def test_labels_without_an_observed_positive_are_a_clear_error():
    rng = np.random.RandomState(0)
    Y = np.where(rng.rand(40, 3) < 0.3, np.nan, 0.0)
    with pytest.raises(ValueError, match="Y has no observed positive label"):
        GLOCALCV(cv=5).fit(rng.rand(40, 4), Y)


def test_more_groups_than_rows_of_a_training_fold_is_said_before_any_fit():
    rng = np.random.RandomState(0)
    X, Y = rng.rand(60, 4), (rng.rand(60, 3) > 0.5).astype(float)
    with pytest.raises(ValueError, match=r"n_groups=50 is larger than the 40 rows of a "
                                         r"training fold \(of 60 samples, 3 folds\)"):
        GLOCALCV(GLOCAL(n_groups=50), cv=3).fit(X, Y)


def test_the_refitted_model_keeps_the_feature_names_of_a_frame():
    """As GridSearchCV's best_estimator_: scoring a frame warns of nothing."""
    pd = pytest.importorskip("pandas")
    rng = np.random.RandomState(0)
    X = pd.DataFrame(rng.rand(40, 4), columns=list("abcd"))
    Y = (rng.rand(40, 3) > 0.5).astype(float)
    search = GLOCALCV(GLOCAL(n_latent=2, max_iter=3), param_grid={"lam2": [1.0]}, cv=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        search.fit(X, Y)
    assert list(search.best_estimator_.feature_names_in_) == list("abcd")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        search.decision_function(X)


def test_warm_path_fits_take_one_initialisation_round_without_warnings(data):
    """A fit started from a nearby solution runs one round of the basic model, then
    Algorithm 1; the round's cap is not a ConvergenceWarning (the main loop's would be)."""
    from sklearn.exceptions import ConvergenceWarning

    X, Y = data
    cold = GLOCAL(n_latent=3, random_state=0, tol=1e-2).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        warm = GLOCAL(n_latent=3, lam2=1.0, random_state=0, tol=1e-2,
                      init_max_iter=1).fit(X, Y, init=cold)
    assert warm.n_init_iter_ == 1
    with pytest.warns(ConvergenceWarning, match="basic-model initialisation"):
        GLOCAL(n_latent=3, random_state=0, tol=0.0, init_max_iter=1, max_iter=1).fit(X, Y)


@pytest.mark.parametrize("normalize_rows", [False, True])
def test_coef_and_intercept_are_those_of_the_refitted_model(normalize_rows):
    import scipy.sparse as sp
    from sklearn.preprocessing import normalize

    from glocal.datasets import make_glocal_data

    data = make_glocal_data(n_samples=90, random_state=0)
    X = data.X + np.arange(data.X.shape[1])  # rows of different norms
    search = GLOCALCV(GLOCAL(n_latent=3, max_iter=3, init_max_iter=3, fit_intercept=True),
                      {"lam2": [1.0], "normalize_rows": [normalize_rows]}, cv=2,
                      random_state=0).fit(X, data.Y)
    best = search.best_estimator_
    np.testing.assert_array_equal(search.coef_, best.coef_)
    np.testing.assert_array_equal(search.intercept_, best.intercept_)
    assert search.coef_.shape == (data.Y.shape[1], X.shape[1])
    for given in (X, sp.csr_matrix(X)):
        rows = normalize(given) if normalize_rows else given
        np.testing.assert_allclose(np.asarray(rows @ search.coef_.T) + search.intercept_,
                                   search.decision_function(given), rtol=1e-12, atol=1e-12)
    assert not hasattr(GLOCALCV(), "coef_") and not hasattr(GLOCALCV(), "intercept_")
