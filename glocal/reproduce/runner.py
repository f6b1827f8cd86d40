"""Running a reproduction: the loop over datasets, repetitions, rho and methods, one fit and
its scores per run, resuming from the runs already in ``results.csv``."""

import inspect
import json
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from ..datasets import load_dataset, make_glocal_data
from ..datasets import known_names
from ..groups import kmeans_groups
from .._utils.io import atomic_output
from ..model_selection import select_hyperparameters
from .._utils.validation import LabelWarning, named_label_warnings
from ..metrics import evaluate
from ..protocol import evaluate_masked, random_splits, sample_observed
from .methods import (
    METHODS,
    PAPER_DATASETS,
    QUICK_MAX_SAMPLES,
    SMALL_CLUSTER_FRACTION,
    SMALL_CLUSTER_GROUPS,
    SMALL_CLUSTER_METHODS,
    TEST_SIZE,
)
from .report import render_report
from .results import (
    CONFIG,
    MEASURES,
    TIMES,
    ResultsFile,
    results_lock,
    write_results,
)


def run_reproduction(datasets=None, methods=("GLOCAL", "BR"), observed_fractions=None,
                     n_repeats=None, data_dir=None, out_dir="reproduce-out",
                     paper_tables=None, quick=False, tune=True, drop_unlabeled=True,
                     small_clusters=None, n_jobs=None, random_state=0, progress=print):
    """Run the paper's protocol and write ``results.csv`` and ``report.md`` in ``out_dir``.

    Loops over datasets, repetitions, observed fractions rho and methods. Runs already in
    ``out_dir/results.csv`` are skipped, so an interrupted call resumes where it stopped;
    its damaged rows and runs recorded twice are reported through ``progress`` (file and
    line) and run again (`glocal.reproduce.results.scan_results`).

    Parameters
    ----------
    datasets : sequence of str, default=None
        Dataset names for `glocal.datasets.load_dataset`, or ``"synthetic"`` for
        `glocal.datasets.make_glocal_data` (seeded by ``random_state``). By default the
        `PAPER_DATASETS` found in the data directory.
    methods : str or sequence of str, default=("GLOCAL", "BR")
        Keys of `METHODS` (case, "-" and "_" ignored, so "mllrc" is "ML-LRC"), or ``"all"``
        (alone or among the names) for every method of `METHODS`.
    observed_fractions : sequence of float in (0, 1], default=None
        The values of rho; by default (1.0, 0.7, 0.3), or (1.0, 0.3) in quick mode.
    n_repeats : int, default=None
        Number of random 60/40 splits; by default 10, or 1 in quick mode.
    data_dir : path-like, default=None
        Data directory; by default the environment variable ``GLOCAL_DATA``.
    out_dir : path-like, default="reproduce-out"
        Where ``results.csv`` and ``report.md`` go (created if needed).
    paper_tables : path-like, default=None
        The paper's ``paper_tables.json``, shown beside our numbers; omitted when None.
    quick : bool, default=False
        Smoke-test mode: at most `QUICK_MAX_SAMPLES` random rows per dataset and no tuning
        (and the smaller defaults above).
    tune : bool, default=True
        Select each method's hyperparameters in its `Method.param_grid` by 5-fold
        cross-validation on every training set
        (`glocal.model_selection.select_hyperparameters`);
        when False the estimators keep their defaults.
    drop_unlabeled : bool, default=True
        Drop the test rows without a positive label before scoring, as the paper does.
    small_clusters : bool or None, default=None
        The design of the paper's small-cluster table (module docstring): cluster all the
        rows of each repetition into `SMALL_CLUSTER_GROUPS` groups, give the training part
        to GLOCAL, GLObal and loCAL as their local groups, and record every method's test
        measures on the rows of clusters under `SMALL_CLUSTER_FRACTION` of the samples
        (``small_<measure>``). It changes GLOCAL's fits, so an output directory holds runs
        of one setting only. None: True when GLObal or loCAL is among ``methods``, else
        False (the GLOCAL and BR reproduction).
    n_jobs : int, default=None
        Parallel fits during the cross-validation.
    random_state : int, default=0
        Seeds the splits, the label masks (per repetition and rho), the estimators and the
        cross-validation folds (per repetition).
    progress : callable, default=print
        Called with a line of text after every run.

    Returns
    -------
    results : list of dict
        Every row of ``results.csv`` (see `read_results`).

    Raises
    ------
    ValueError
        For an unknown method, a bad rho, a stored result of another configuration or an
        ``out_dir/results.csv`` that is not a results file.
    FileNotFoundError
        If a dataset (or the data directory) cannot be found.
    """
    methods = _resolve_methods(methods)
    if small_clusters is None:
        small_clusters = any(name in methods for name in SMALL_CLUSTER_METHODS)
    if observed_fractions is None:
        observed_fractions = (1.0, 0.3) if quick else (1.0, 0.7, 0.3)
    bad = [rho for rho in observed_fractions if not 0.0 < rho <= 1.0]
    if bad:
        raise ValueError(f"observed fractions must be in (0, 1], got {bad[0]}")
    if n_repeats is None:
        n_repeats = 1 if quick else 10
    if n_repeats < 1:
        raise ValueError(f"n_repeats must be at least 1, got {n_repeats}")
    tune = tune and not quick
    config = {"seed": random_state, "quick": quick, "tune": tune,
              "drop_unlabeled": drop_unlabeled, "small_clusters": bool(small_clusters)}
    if paper_tables is not None and not Path(paper_tables).is_file():
        raise FileNotFoundError(f"paper tables '{paper_tables}' not found")
    out_dir = Path(out_dir)
    csv_path, report_path = out_dir / "results.csv", out_dir / "report.md"

    data = _load_datasets(datasets, data_dir, quick, random_state, progress)
    # Creates out_dir; removes the temporary files of a crashed reproduction.
    recorded = ResultsFile(csv_path)  # read whole once, then as far as it grows
    with results_lock(csv_path, others=[report_path.name]):
        recorded.refresh()
        for problem in recorded.problems:
            progress(f"{problem}: not counted as done")
        _check_config(recorded.rows, config, csv_path)
        if recorded.problems:  # the file keeps its sound rows only, even with nothing to run
            write_results(csv_path, recorded.rows)

    plan = [(name, rep, rho, method) for name in data for rep in range(n_repeats)
            for rho in observed_fractions for method in methods]
    todo = [run for run in plan if run not in recorded]
    progress(f"{len(plan)} runs, {len(plan) - len(todo)} already in {csv_path}")

    tic = time.perf_counter()
    clusterings = {}  # (dataset, repetition) -> cluster of every row, with small_clusters
    # One BLAS thread: on this problem size OpenBLAS's threads slow every fit down.
    with threadpool_limits(limits=1):
        for count, (name, rep, rho, method) in enumerate(todo, start=1):
            # Another reproduction into the same directory may have run it meanwhile.
            with results_lock(csv_path):
                _check_config(recorded.refresh(), config, csv_path)
            if (name, rep, rho, method) in recorded:
                progress(f"[{len(plan) - len(todo) + count}/{len(plan)}] {name} rep {rep} "
                         f"rho {rho:g} {method}: recorded by another reproduction")
                continue
            clusters = None
            if config["small_clusters"]:
                if (name, rep) not in clusterings:
                    clusterings[name, rep] = kmeans_groups(
                        data[name][0], SMALL_CLUSTER_GROUPS,
                        random_state=_seed(random_state, rep, SMALL_CLUSTER_GROUPS))
                clusters = clusterings[name, rep]
            row = _run(data[name], name, rep, rho, method, config, n_repeats, n_jobs,
                       clusters)
            with results_lock(csv_path):
                if not recorded.append(row):
                    progress(f"{name} rep {rep} rho {rho:g} {method}: recorded meanwhile by "
                             "another reproduction; its row is kept")
            elapsed = time.perf_counter() - tic
            eta = elapsed / count * (len(todo) - count)
            progress(f"[{len(plan) - len(todo) + count}/{len(plan)}] {name} rep {rep} "
                     f"rho {rho:g} {method}: Ap {row['prediction_average_precision']:.4f}, "
                     f"fit {row['time_fit']:.1f} s, tuning {row['time_tuning']:.1f} s; "
                     f"elapsed {_clock(elapsed)}, ETA {_clock(eta)}")
    with results_lock(csv_path):  # the report of every run recorded, others' too
        recorded.refresh()
        results = recorded.rows
        with atomic_output(report_path, overwrite=True, follow_links=True) as file:
            file.write(render_report(results, paper_tables))
    progress(f"wrote {csv_path} and {report_path}")
    return results


def _check_config(results, config, csv_path):
    for row in results:
        stored = {key: row[key] for key in CONFIG}
        if stored != config:
            raise ValueError(f"{csv_path} holds results of another configuration ({stored}, "
                             f"now {config}); choose another output directory")


def _normalize(name):
    return name.lower().replace("-", "").replace("_", "")


def _resolve_methods(methods):
    """The `METHODS` keys named by ``methods`` (see `run_reproduction`), without repeats."""
    if isinstance(methods, str):
        methods = [methods]
    known = {_normalize(key): key for key in METHODS}
    resolved = []
    for name in methods:
        if _normalize(name) == "all":
            resolved += list(METHODS)
        elif _normalize(name) in known:
            resolved.append(known[_normalize(name)])
        else:
            raise ValueError(f"unknown method {name!r}; known methods: {', '.join(METHODS)}, "
                             f"or 'all'")
    return list(dict.fromkeys(resolved))


def _load_datasets(names, data_dir, quick, random_state, progress):
    """Features, complete labels and label names (None if unnamed) of every dataset, by
    lower-case name."""
    if names is None:
        data = {}
        for name in PAPER_DATASETS:
            try:
                data[name] = _load(name, data_dir, random_state)
            except FileNotFoundError as exc:
                missing = exc
                progress(f"{name}: not found in the data directory, skipped")
        if not data:
            raise FileNotFoundError(f"none of the paper's datasets is available: {missing}")
    else:
        data = {name.lower(): _load(name.lower(), data_dir, random_state) for name in names}
    if quick:
        for name, (X, Y, label_names) in data.items():
            if X.shape[0] > QUICK_MAX_SAMPLES:
                # Seeded by the name too, so that a dataset's rows do not depend on the others.
                rng = np.random.RandomState(_seed(random_state, *name.encode()))
                rows = np.sort(rng.permutation(X.shape[0])[:QUICK_MAX_SAMPLES])
                data[name] = X[rows], Y[rows], label_names
    return data


def _load(name, data_dir, random_state):
    # The protocol draws its own splits, so a file's predefined split is not used.
    if name == "synthetic":
        bunch = make_glocal_data(random_state=random_state)
        return bunch.X, np.asarray(bunch.Y), None
    bunch = load_dataset(name, data_dir)
    return bunch.X, np.asarray(bunch.Y), known_names(bunch.label_names)


def _seed(*key):
    """A seed determined by a tuple of non-negative ints."""
    return int(np.random.SeedSequence(key).generate_state(1)[0])


def _run(dataset, name, rep, rho, method_name, config, n_repeats, n_jobs, clusters=None):
    """One fit and its scores: a row of results.csv.

    ``clusters``: the cluster of every row of the dataset (small-cluster design), or None.
    """
    X, Y, label_names = dataset
    seed = config["seed"]
    train, test = random_splits(X.shape[0], n_repeats, TEST_SIZE, random_state=seed)[rep]
    X_train, Y_train = X[train], Y[train]
    # The test rows scored: those with a positive label when drop_unlabeled (as the paper).
    test = test[Y[test].sum(axis=1) > 0] if config["drop_unlabeled"] else test
    X_test, Y_test = X[test], Y[test]
    Y_observed = (sample_observed(Y_train, rho, random_state=_seed(seed, rep, round(rho * 1000)))
                  if rho < 1 else Y_train)

    method = METHODS[method_name]
    estimator = clone(method.estimator)
    params = estimator.get_params()
    # Every random_state, nested ones too (the learner of MMLLOC), is seeded per repetition.
    estimator.set_params(**{key: _seed(seed, rep) for key in params
                            if key == "random_state" or key.endswith("__random_state")})
    fit_params = {}
    if clusters is not None and _takes_groups(estimator):
        fit_params["groups"] = clusters[train]
        if "n_groups" in params:  # for the k-means of the fits inside cross-validation
            estimator.set_params(n_groups=SMALL_CLUSTER_GROUPS)
    grid = method.grid(config["small_clusters"])
    tic = time.perf_counter()
    if config["tune"] and grid:  # an empty grid: the estimator tunes itself
        with warnings.catch_warnings():
            # A fold's label warnings repeat, by index, what the fit below says by name.
            warnings.simplefilter("ignore", LabelWarning)
            # 5-fold CV on the observed labels, the same shuffled folds and scorer for
            # every method (GLOCALCV's paths for the GLOCAL family).
            estimator.set_params(**select_hyperparameters(
                estimator, grid, X_train, Y_observed, n_jobs=n_jobs,
                random_state=_seed(seed, rep)))
    tuning = time.perf_counter() - tic
    tic = time.perf_counter()
    with named_label_warnings(label_names):
        estimator.fit(X_train, Y_observed, **fit_params)
    fit = time.perf_counter() - tic

    params = estimator.get_params()
    row = {"dataset": name, "repetition": rep, "rho": rho, "method": method_name, **config,
           "n_train": X_train.shape[0], "n_test": X_test.shape[0],
           "params": json.dumps({key: params[key] for key in _grid_keys(grid)}),
           "time_fit": fit, "time_tuning": tuning}
    times = _fit_times(estimator)
    row.update({f"time_{t}": times.get(t, np.nan) for t in TIMES})
    test_scores = estimator.decision_function(X_test)
    scores = {"prediction": evaluate(Y_test, test_scores)}
    if rho < 1:
        train_scores = getattr(estimator, "completed_scores_", None)
        if train_scores is None:
            train_scores = estimator.decision_function(X_train)
        scores["recovery"] = evaluate_masked(Y_train, train_scores, np.isnan(Y_observed))
    row["small_n_test"] = np.nan
    if clusters is not None:
        sizes = np.bincount(clusters)
        small = (sizes < SMALL_CLUSTER_FRACTION * X.shape[0])[clusters[test]]
        row["small_n_test"] = int(small.sum())
        if small.any():
            # evaluate_masked, unlike evaluate, gives NaN for a measure undefined on so few
            # rows (e.g. the per-label AUC when no label has both classes among them).
            scores["small"] = evaluate_masked(Y_test[small], test_scores[small],
                                              np.ones(Y_test[small].shape, dtype=bool))
    for part in ("prediction", "recovery", "small"):
        row.update({f"{part}_{m}": scores.get(part, {}).get(m, np.nan) for m in MEASURES})
    return row


def _grid_keys(grid):
    """The parameter names of a grid, a dict or a list of dicts as for ``GridSearchCV``."""
    grids = [grid] if isinstance(grid, dict) else grid
    return sorted({key for part in grids for key in part})


def _takes_groups(estimator):
    """Whether ``estimator.fit`` accepts the local groups (``groups=``), as GLOCAL does."""
    return "groups" in inspect.signature(estimator.fit).parameters


def _fit_times(estimator):
    """The parts of a fit's time the estimator reports, by `TIMES` name."""
    times = dict(getattr(estimator, "fit_times_", None) or {})
    if hasattr(estimator, "fill_time_"):  # two-stage: filling the labels, then the learner
        times.setdefault("fill", estimator.fill_time_)
        times.setdefault("main", estimator.learn_time_)
    return times


def _clock(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"

