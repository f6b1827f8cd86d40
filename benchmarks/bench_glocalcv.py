"""GLOCALCV against GridSearchCV over the same grid and folds, with missing labels.

On one 60/40 split of a dataset (default Arts), a fraction rho of each label's training
entries is kept by the paper's sampler (`glocal.protocol.sample_observed`), the rest are
NaN. Both searches use the same grid (`glocal.model_selection.DEFAULT_PARAM_GRID`), the same
shuffled 5 folds, the same observed-entries scorer and GLOCAL(random_state=0), one BLAS
thread, and refit the best setting on the whole training part. Prints the wall-clock and
CPU time of each search (medians over ``--repeats``) and their ratios (CPU time only for
one job: with one BLAS thread it is the work done, far less noisy than the wall clock on
a shared machine), the settings they pick, where
GLOCALCV's pick ranks in GridSearchCV's own cross-validation scores (the gap to
GridSearchCV's best), and the test average precision of both refitted models.

    python benchmarks/bench_glocalcv.py [--dataset arts] [--rho 0.7] [--repeats 1]
        [--n-jobs 1,2] [--path-tol 1e-2]
"""

import argparse
import statistics
import time
import warnings

import numpy as np
from sklearn.model_selection import GridSearchCV, KFold
from threadpoolctl import threadpool_limits

from glocal import GLOCAL, GLOCALCV
from glocal.metrics import average_precision, observed_average_precision_scorer
from glocal.model_selection import DEFAULT_PARAM_GRID
from glocal.protocol import sample_observed
from _common import DATA_DIR, paper_split


def timed(search, X, Y):
    """Wall-clock and CPU seconds of ``search.fit``: with one BLAS thread and one job the CPU
    time is the work done, much less noisy than the wall clock on a shared machine."""
    wall, cpu = time.perf_counter(), time.process_time()
    search.fit(X, Y)
    return time.perf_counter() - wall, time.process_time() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--dataset", default="arts")
    parser.add_argument("--rho", type=float, default=0.7)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--n-jobs", default="1",
                        help="GLOCALCV's parallel folds; a comma-separated list times each")
    parser.add_argument("--path-tol", type=float, default=None,
                        help="GLOCALCV's path_tol (default: GLOCALCV's own)")
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)

    X_train, X_test, Y_train, Y_test = paper_split(args.dataset, args.data_dir, args.seed)
    Y_observed = sample_observed(np.asarray(Y_train), args.rho, random_state=args.seed)
    folds = list(KFold(5, shuffle=True, random_state=args.seed).split(X_train))
    print(f"{args.dataset}: {X_train.shape[0]} training rows, rho = {args.rho}, grid "
          f"{DEFAULT_PARAM_GRID}, 5 folds, one BLAS thread")

    n_jobs = [int(value) for value in args.n_jobs.split(",")]
    grid_times, cv_times = [], {jobs: [] for jobs in n_jobs}
    with threadpool_limits(limits=1):
        for _ in range(args.repeats):
            grid = GridSearchCV(GLOCAL(random_state=0), DEFAULT_PARAM_GRID, cv=folds,
                                scoring=observed_average_precision_scorer,
                                error_score="raise")
            grid_times.append(timed(grid, X_train, Y_observed))
            for jobs in n_jobs:
                glocalcv = GLOCALCV(GLOCAL(random_state=0), cv=folds, n_jobs=jobs)
                if args.path_tol is not None:
                    glocalcv.set_params(path_tol=args.path_tol)
                cv_times[jobs].append(timed(glocalcv, X_train, Y_observed))

    grid_wall, grid_cpu = (statistics.median(column) for column in zip(*grid_times))
    for jobs in n_jobs:
        wall, cpu = (statistics.median(column) for column in zip(*cv_times[jobs]))
        line = (f"GridSearchCV {grid_wall:.1f} s, GLOCALCV {wall:.1f} s (path_tol "
                f"{glocalcv.path_tol}, n_jobs {jobs}): {grid_wall / wall:.2f}x faster")
        if jobs == 1:  # worker processes' CPU time is not this process's
            line += (f"; CPU time {grid_cpu:.1f} s against {cpu:.1f} s: "
                     f"{grid_cpu / cpu:.2f}x")
        print(line)
    grid_scores = grid.cv_results_["mean_test_score"]
    picked = grid.cv_results_["params"].index(glocalcv.best_params_)
    print(f"GridSearchCV picks {grid.best_params_} (CV Ap {grid.best_score_:.4f})")
    print(f"GLOCALCV picks     {glocalcv.best_params_} (its CV Ap {glocalcv.best_score_:.4f}; "
          f"GridSearchCV's CV Ap of it {grid_scores[picked]:.4f}, "
          f"{grid.best_score_ - grid_scores[picked]:.4f} below the best)")
    for name, model in (("GridSearchCV", grid.best_estimator_),
                        ("GLOCALCV", glocalcv.best_estimator_)):
        print(f"test Ap, {name} refit: "
              f"{average_precision(Y_test, model.decision_function(X_test)):.4f}")
    gap = np.abs(glocalcv.cv_results_["mean_test_score"] - grid_scores)
    print(f"per setting |CV Ap GLOCALCV - GridSearchCV|: median {np.median(gap):.4f}, "
          f"max {gap.max():.4f} at {grid.cv_results_['params'][int(np.argmax(gap))]}")


if __name__ == "__main__":
    main()
