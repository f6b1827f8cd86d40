"""The recommended estimator's cost: ``GLOCALCV()`` against BR tuned by ``GridSearchCV``, and
one fit at the chosen setting against a one-vs-rest pass of LibMultiLabel.

On one 60/40 split of each dataset, a fraction rho of each label's training entries is
kept by the paper's sampler (`glocal.protocol.sample_observed`), the rest are NaN. Both
searches use the same shuffled 3 folds and the same observed-entries scorer, in one
process with one BLAS thread and one job each, and refit their best setting on the whole
training part:

* ``GLOCALCV(cv=folds, random_state=seed)``: the recommended model and search;
* ``GridSearchCV(BR(), {"C": [0.01, 0.1, 1, 10]}, cv=folds)``: one LinearSVC per label on
  the rows where it is observed.

Then one GLOCAL fit at the setting GLOCALCV chose, on all training rows from its own start,
against LibMultiLabel's ``train_1vsrest`` with BR's settings (``-c 0.1 -B 1 -e 0.0001``:
C = 0.1, a bias, tolerance 1e-4), each label on its observed rows (the ``bench`` extra
installs LibMultiLabel; without it that column is left out).

Prints, per (dataset, rho), CPU seconds of the process: both searches and their ratio, the
fit and the one-vs-rest pass and their ratio, the settings picked, the test Ap of both
searches' refitted models and how many ``ConvergenceWarning`` each search raised; then
the fold fits ``GLOCALCV()`` made (racing drops some) and its refit's rounds.

With ``--variants NAME ...``, also ``GLOCALCV`` with other search options (`VARIANTS`: the
exhaustive search of every setting on every fold, the refit from the last fold's model with
or without racing), each on the same folds: its CPU seconds and ratio to BR's search, its
fits, pick and test Ap. With ``--levers``, also what other designs of the search would save
(`_levers`); with ``--profile``, where the search's time goes: the CPU seconds of each step of the solver over
all its fits (cProfile, which adds its own overhead); with ``--fits``, every setting's
rounds (of the basic-model initialisation, then outer iterations) and wall seconds per fold,
the refit's, and the search's CPU seconds per round against BR's whole search; with
``--latent K ...``, the same search with ``n_latent`` at most K (default: 100), its CPU
seconds, pick and test Ap.

    GLOCAL_DATA=/path/to/data python benchmarks/bench_recommended.py \\
        --datasets arts enron --rhos 0.3 1 [--synthetic 20000,500,22] [--max-rows N] \\
        [--variants exhaustive fold-refit] [--levers] [--profile] [--fits] \\
        [--latent 30 50]
"""

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before liblinear's OpenMP runtime loads

import argparse  # noqa: E402
import cProfile  # noqa: E402
import pstats  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, train_test_split  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from glocal import GLOCAL, GLOCALCV  # noqa: E402
from glocal._utils.progress import settings_text
from glocal.baselines import BR  # noqa: E402
from glocal.metrics import average_precision, observed_average_precision_scorer  # noqa: E402
from glocal.model_selection import DEFAULT_ESTIMATOR_PARAMS, MAX_DEFAULT_LATENT  # noqa: E402
from glocal.protocol import drop_unlabeled_rows, sample_observed  # noqa: E402
from _common import (DATA_DIR, OneVsRest, libmultilabel_linear, named_data,  # noqa: E402
                     timed_fit)

BR_GRID = {"C": [0.01, 0.1, 1, 10]}
# GLOCALCV's search with other options than its default (racing at one standard error, a
# refit from GLOCAL's own start).
VARIANTS = {"exhaustive": {"racing": None},
            "fold-refit": {"refit_start": "fold"},
            "exhaustive-fold-refit": {"racing": None, "refit_start": "fold"}}
LML_OPTIONS = "-c 0.1 -B 1 -e 0.0001"


def _timed(search, X, Y):
    """CPU seconds of ``search.fit`` and the ConvergenceWarnings it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore")
        warnings.simplefilter("always", ConvergenceWarning)
        tic = time.process_time()
        search.fit(X, Y)
        seconds = time.process_time() - tic
    return seconds, sum(issubclass(w.category, ConvergenceWarning) for w in caught)


def _path_stop_saving(search):
    """Fit seconds (summed over folds) that stopping every lam2 path at its first drop of
    the mean CV score would skip, their share of all path fits, and whether the pick
    survives."""
    results = search.cv_results_
    params, mean = results["params"], results["mean_test_score"]
    seconds = results["mean_fit_time"] * search.n_splits_
    skipped = []
    for rows in (False, True):
        path = sorted((i for i, p in enumerate(params) if p["normalize_rows"] == rows),
                      key=lambda i: -params[i]["lam2"])
        drops = [j for j in range(1, len(path)) if mean[path[j]] < mean[path[j - 1]]]
        if drops:
            skipped += path[drops[0] + 1:]
    return seconds[skipped].sum(), seconds[skipped].sum() / seconds.sum(), \
        search.best_index_ not in skipped


def _recommended_model(n_labels, cap=MAX_DEFAULT_LATENT):
    """GLOCALCV()'s model, with n_latent at most ``cap``."""
    return GLOCAL(n_latent=min(n_labels, cap), **DEFAULT_ESTIMATOR_PARAMS)


def _cpu_fit(model, X, Y, **fit_params):
    """CPU seconds of one fit of ``model`` (`_common.timed_fit`) and the fitted model."""
    seconds, fitted, _ = timed_fit(lambda: model, X, Y, 1, **fit_params)
    return seconds, fitted


def _levers(search, X, Y, folds):
    """One line per lever of the search's cost, measured at its chosen setting."""
    saved, share, same = _path_stop_saving(search)
    print(f"  stop each path at its first drop of the CV score: {saved:.2f} s of path fits "
          f"skipped ({100 * share:.0f} %), same pick: {same}")
    best = search.best_estimator_
    train = folds[0][0]
    fold_model = clone(best).fit(X[train], Y[train])
    scratch_s, scratch = _cpu_fit(clone(best), X, Y)
    warm_s, warm = _cpu_fit(clone(best), X, Y, init=fold_model)
    print(f"  refit from the first fold's solution: {warm_s:.2f} CPU s "
          f"({warm.n_init_iter_} + {warm.n_iter_} iterations, objective "
          f"{warm.objective_history_[-1]:.6g}) against {scratch_s:.2f} from its own start "
          f"({scratch.n_init_iter_} + {scratch.n_iter_}, {scratch.objective_history_[-1]:.6g})")
    folds_s, _ = _timed(clone(search).set_params(n_jobs=2), X, Y)
    print(f"  folds on two processes (n_jobs=2): {folds_s:.1f} CPU s of this process")
    # The grid screened on a third of the rows (its own 3 folds), then one refit on all rows.
    rows = np.sort(np.random.default_rng(0).choice(X.shape[0], X.shape[0] // 3,
                                                    replace=False))
    screen = clone(search).set_params(cv=KFold(3, shuffle=True, random_state=0), refit=False)
    screen_s, _ = _timed(screen, X[rows], Y[rows])
    refit_s, _ = _cpu_fit(clone(best).set_params(**screen.best_params_), X, Y)
    print(f"  grid screened on a third of the rows, then one refit on all: "
          f"{screen_s + refit_s:.1f} CPU s (screen {screen_s:.1f}, refit {refit_s:.1f}); "
          f"pick {screen.best_params_}, the same as the whole search's: "
          f"{screen.best_params_ == search.best_params_}")
    default = _recommended_model(Y.shape[1])
    refit = clone(default).set_params(**search.best_params_)
    for name, params in [("V by trust regions", {"v_closed_form": False}),
                         ("U by trust regions", {"optimizer": {"U": "trust_regions"}}),
                         ("V and U by trust regions", {"v_closed_form": False,
                                                       "optimizer": {"U": "trust_regions"}})]:
        other_s, _ = _timed(clone(search).set_params(
            estimator=clone(default).set_params(**params)), X, Y)
        fit_s, fit = _cpu_fit(clone(refit).set_params(**params), X, Y)
        print(f"  {name}: search {other_s:.1f} CPU s, refit {fit_s:.2f} s (objective "
              f"{fit.objective_history_[-1]:.8g})")


# The solver's steps and the search's other work, by (module, function) of glocal.
PROFILED = {
    ("solver/steps.py", "initialise"): "basic-model initialisation (its U, V, W steps included)",
    ("solver/steps.py", "v_newton"): "V block (Newton's method), all visits",
    ("solver/steps.py", "u_by_newton"): "U block (Newton's method), all visits",
    ("solver/steps.py", "u_by_problem"): "U block (trust regions), all visits",
    ("solver/steps.py", "v_by_problem"): "V block (trust regions), all visits",
    ("solver/steps.py", "w_by_problem"): "W block, all visits",
    ("solver/correlations/laplacians.py", "update"):
        "Z block (the correlation terms' own), all visits",
    ("solver/steps.py", "rebalance"): "rescaling step",
    ("_fit_data.py", "glocal_data"): "data of each fit (groups, moments, checks)",
    ("model_selection/_search.py", "_refit"): "the refit",
}


def _profile(search, X, Y):
    """Print the CPU seconds of the search's main parts (cProfile over one search)."""
    profile = cProfile.Profile(time.process_time)
    profile.runcall(search.fit, X, Y)
    stats = pstats.Stats(profile).stats
    total = sum(row[2] for row in stats.values())  # the sum of every function's own time
    print(f"  profile: {total:.1f} CPU s in all (profiled)")
    rows = [(row[3], row[1], PROFILED[path.rsplit("glocal/", 1)[-1], function])
            for (path, _, function), row in stats.items()
            if "glocal" in path and (path.rsplit("glocal/", 1)[-1], function) in PROFILED]
    for seconds, calls, name in sorted(rows, reverse=True):
        print(f"    {seconds:7.2f} s {100 * seconds / total:5.1f} %  {name} ({calls} calls)")


def _folds_fitted(search):
    """Every setting's number of folds fitted (racing leaves NaN scores where it made none)."""
    results = search.cv_results_
    return sum((~np.isnan(results[f"split{i}_test_score"])).astype(int)
               for i in range(search.n_splits_))


def _n_fits(search):
    """The fits a search made on its folds."""
    return int(_folds_fitted(search).sum())


def _rounds(search):
    """``8 + 2``: the refit's initialisation rounds and outer iterations."""
    return f"{search.best_estimator_.n_init_iter_} + {search.best_estimator_.n_iter_}"


def _fits(search, seconds, br_seconds):
    """Print each setting's mean rounds and wall seconds per fold fitted, the refit's, and the
    search's CPU seconds per round (``seconds`` over every round of its fits)."""
    results, best = search.cv_results_, search.best_estimator_
    for i, params in enumerate(results["params"]):
        print(f"    {settings_text(params)}: {results['mean_n_init_iter'][i]:.1f} + "
              f"{results['mean_n_iter'][i]:.1f} rounds, {results['mean_fit_time'][i]:.2f} "
              "wall s per fold")
    print(f"    refit: {best.n_init_iter_} + {best.n_iter_} rounds, "
          f"{search.refit_time_:.2f} wall s")
    rounds = (_folds_fitted(search) @ (results["mean_n_init_iter"] + results["mean_n_iter"])
              + best.n_init_iter_ + best.n_iter_)
    print(f"    {rounds:.0f} rounds in {seconds:.1f} CPU s: {seconds / rounds:.3f} s per "
          f"round; BR's whole search costs {br_seconds / (seconds / rounds):.1f} rounds")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--datasets", nargs="*", default=["arts"])
    parser.add_argument("--synthetic", action="append", default=[], metavar="N,D,L",
                        help="also a sparse synthetic set of N rows, D features, L labels")
    parser.add_argument("--rhos", nargs="+", type=float, default=[0.3, 1.0])
    parser.add_argument("--max-rows", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--levers", action="store_true",
                        help="also measure what other designs of the search would save")
    parser.add_argument("--profile", action="store_true",
                        help="also print where the search's time goes")
    parser.add_argument("--fits", action="store_true",
                        help="also print the rounds and time of every setting's fits")
    parser.add_argument("--variants", nargs="*", default=[], choices=sorted(VARIANTS),
                        help="also GLOCALCV with these search options")
    parser.add_argument("--latent", nargs="*", type=int, default=[], metavar="K",
                        help="also the search with n_latent at most K")
    args = parser.parse_args()

    names = args.datasets + [f"synthetic:{spec}" for spec in args.synthetic]
    print("CPU seconds of one process, one BLAS thread; search: GLOCALCV() against "
          "GridSearchCV(BR) on the same 3 folds, refits included; fit: GLOCAL at the chosen "
          f"setting against LibMultiLabel's train_1vsrest '{LML_OPTIONS}' on the same rows")
    print("dataset rho n_train search_s BR_search_s ratio fit_s LML_s fit/LML GLOCALCV_pick "
          "BR_C Ap_GLOCALCV Ap_BR convergence_warnings(GLOCALCV,BR)", flush=True)
    with threadpool_limits(1):
        for name in names:
            X, Y = named_data(name, args.data_dir, args.max_rows, args.seed)
            X_train, X_test, Y_train, Y_test = train_test_split(
                X, Y, test_size=0.4, random_state=args.seed)
            X_test, Y_test = drop_unlabeled_rows(X_test, Y_test)
            folds = list(KFold(3, shuffle=True, random_state=args.seed).split(X_train))
            for rho in args.rhos:
                Y_observed = (Y_train if rho == 1 else
                              sample_observed(Y_train, rho, random_state=args.seed))
                glocal = GLOCALCV(cv=folds, random_state=args.seed)
                br = GridSearchCV(BR(random_state=args.seed), BR_GRID, cv=folds,
                                  scoring=observed_average_precision_scorer)
                glocal_s, glocal_warnings = _timed(glocal, X_train, Y_observed)
                br_s, br_warnings = _timed(br, X_train, Y_observed)
                fit_s, _ = _cpu_fit(clone(glocal.best_estimator_), X_train, Y_observed)
                if libmultilabel_linear is None:
                    lml = "- - -"
                else:
                    lml_s, _ = _cpu_fit(OneVsRest(LML_OPTIONS), X_train, Y_observed)
                    lml = f"{lml_s:.2f} {fit_s / lml_s:.2f}"
                pick = ",".join(f"{k}={v}" for k, v in sorted(glocal.best_params_.items()))
                aps = [average_precision(Y_test, model.decision_function(X_test))
                       for model in (glocal, br)]
                print(f"{name} {rho} {X_train.shape[0]} {glocal_s:.1f} {br_s:.1f} "
                      f"{glocal_s / br_s:.2f} {fit_s:.2f} {lml} {pick} {br.best_params_['C']} "
                      f"{aps[0]:.4f} {aps[1]:.4f} {glocal_warnings},{br_warnings}", flush=True)
                print(f"  default: {_n_fits(glocal)} fits, refit {_rounds(glocal)} rounds",
                      flush=True)
                if args.fits:
                    _fits(glocal, glocal_s, br_s)
                for variant in args.variants:
                    other = GLOCALCV(cv=folds, random_state=args.seed, **VARIANTS[variant])
                    other_s, other_warnings = _timed(other, X_train, Y_observed)
                    ap = average_precision(Y_test, other.decision_function(X_test))
                    print(f"  {variant}: search {other_s:.1f} CPU s, {other_s / br_s:.2f} x BR, "
                          f"{_n_fits(other)} fits, refit {_rounds(other)} rounds, pick "
                          f"{settings_text(other.best_params_)}, test Ap {ap:.4f}, "
                          f"{other_warnings} convergence warnings", flush=True)
                for cap in args.latent:
                    capped = GLOCALCV(_recommended_model(Y.shape[1], cap), cv=folds,
                                      random_state=args.seed)
                    capped_s, _ = _timed(capped, X_train, Y_observed)
                    ap = average_precision(Y_test, capped.decision_function(X_test))
                    print(f"  n_latent at most {cap}: search {capped_s:.1f} CPU s, pick "
                          f"{settings_text(capped.best_params_)}, test Ap {ap:.4f}")
                if args.levers:
                    _levers(glocal, X_train, Y_observed, folds)
                if args.profile:
                    _profile(clone(glocal), X_train, Y_observed)


if __name__ == "__main__":
    main()
