"""Regenerate the paper's result tables: datasets x repetitions x observed fraction x methods.

`run_reproduction` runs the paper's protocol (`glocal.protocol`) and writes, in its output
directory, ``results.csv`` (one row per finished run) and ``report.md`` (the tables).
Every run of a repetition uses the same random 60/40 split, whatever the method and the
observed fraction rho; for rho < 1 the training labels are masked by
`glocal.protocol.sample_observed`. Each run records:

* ``prediction_<measure>``: the measures of `glocal.metrics.evaluate` on the test split
  (test rows without a positive label dropped, as in the paper);
* ``recovery_<measure>`` (rho < 1): the same measures on the training label matrix
  restricted to its missing entries: each training row is ranked among its missing labels
  only, by the method's scores ``decision_function(X_train)``, and rows whose missing
  entries hold no positive (for Rkl and Auc: not both a positive and a negative) are
  skipped; the per-label AUC likewise uses each label's missing entries
  (`glocal.protocol.evaluate_masked`);
* ``small_<measure>`` (with ``small_clusters``): the test measures restricted to the test
  rows that fall in a small cluster, ``small_n_test`` of them (see "Small clusters" below);
* the chosen hyperparameters, and the fit time split into clustering, initialisation,
  label filling (the two-stage MBR and MMLLOC) and main loop where the estimator reports
  them (``fit_times_``; ``fill_time_`` and ``learn_time_``), plus the total fit and tuning
  times.

The methods (`METHODS`) are GLOCAL, its ablations GLObal and loCAL, and the paper's
competitors of `glocal.baselines`, each with the cross-validation grid documented in
`glocal.protocol`. For every method the prediction is its ``decision_function`` on the test
rows, and the recovery its scores on the training rows: ``completed_scores_`` for MAXIDE
(the completed label matrix; it equals MAXIDE's ``decision_function`` on the training rows,
as MAXIDE is a linear model of X), ``decision_function(X_train)`` for the others. BR and
MLLOC cannot learn with missing labels and run at rho = 1 only; MBR and MMLLOC fill in the
missing labels with MAXIDE first (with full labels they are BR and MLLOC).

**Small clusters** (the paper's table of GLObal, loCAL and GLOCAL on the clusters holding
under 5% of the samples). With ``small_clusters=True``, every repetition clusters all the
rows of the dataset, training and test together, once, by
``kmeans_groups(X, SMALL_CLUSTER_GROUPS, random_state=...)`` with
`SMALL_CLUSTER_GROUPS` = 16 groups: the paper's tuned number of groups g went up to 16 and
beyond, and with GLOCAL's default of 4 groups a cluster under 5% of the samples is rare.
The estimators whose ``fit`` takes ``groups`` (GLOCAL, GLObal, loCAL) get the training
rows' part of that clustering as their local groups (and ``n_groups=16``, which is what
their fits inside the cross-validation use, with k-means on each training fold), so that
their local correlations are those of these clusters, and they tune the weights of their
correlation terms instead of ``lam2`` and ``n_latent`` (`Method.ablation_grid`: GLObal
lam3, loCAL lam4, GLOCAL lam3 = lam4, each over the same three values). Every method then
records its test measures on the test rows whose cluster holds fewer than `SMALL_CLUSTER_FRACTION` (5%) of
all the rows (empty when there is none). This changes GLOCAL's fits (given groups instead
of k-means with 4 groups on the training rows), so it is part of the configuration of an
output directory: by default it is on exactly when GLObal or loCAL is among the methods.

Files are replaced atomically (written to a temporary file in the same directory, then
renamed) after every run, so an interrupted reproduction keeps every finished run, and
running it again with the same output directory skips the runs already recorded.
"""

import csv
import inspect
import io
import json
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from .baselines import BR, LEML, MAXIDE, MBR, MLLOC, MLLRC, MMLLOC
from .datasets import load_dataset, make_glocal_data
from .estimator import GLOCAL, GLObal, loCAL
from .groups import kmeans_groups
from ._io import atomic_output
from .metrics import GREATER_IS_BETTER, PAPER_NAMES, evaluate
from .protocol import (
    BR_GRID,
    GLOBAL_ABLATION_GRID,
    GLOCAL_ABLATION_GRID,
    GLOCAL_GRID,
    LOCAL_ABLATION_GRID,
    LEML_GRID,
    MAXIDE_GRID,
    MBR_GRID,
    MLLOC_GRID,
    MLLRC_GRID,
    MMLLOC_GRID,
    evaluate_masked,
    paired_ttest,
    random_splits,
    sample_observed,
    select_hyperparameters,
)

__all__ = [
    "METHODS",
    "PAPER_DATASETS",
    "SMALL_CLUSTER_FRACTION",
    "SMALL_CLUSTER_GROUPS",
    "Method",
    "read_results",
    "render_report",
    "run_reproduction",
]


class Method(NamedTuple):
    """A method of the comparison.

    Attributes
    ----------
    estimator : estimator
        Unfitted prototype; cloned for every run (every ``random_state`` among its
        parameters, nested ones included, set per repetition).
    param_grid : dict
        Grid searched by 5-fold cross-validation on every training set.
    missing_labels : bool
        Whether it learns with missing labels (NaN in Y); methods that cannot are run at
        rho = 1 only.
    ablation_grid : dict or list of dict or None
        The grid searched instead in the small-cluster ablation (the weights of the
        correlation terms, for the GLOCAL family); None: `param_grid` there too.
    """

    estimator: object
    param_grid: dict
    missing_labels: bool
    ablation_grid: object = None

    def grid(self, small_clusters):
        """The grid searched in a run with or without the small-cluster ablation."""
        if small_clusters and self.ablation_grid is not None:
            return self.ablation_grid
        return self.param_grid


# Grids: see glocal.protocol. The two-stage methods are built with explicit parts so that
# the grid can reach the learner's parameters (``learner__C``).
METHODS = {
    "GLOCAL": Method(GLOCAL(), GLOCAL_GRID, True, GLOCAL_ABLATION_GRID),
    "BR": Method(BR(), BR_GRID, False),
    "GLObal": Method(GLObal(), GLOCAL_GRID, True, GLOBAL_ABLATION_GRID),
    "loCAL": Method(loCAL(), GLOCAL_GRID, True, LOCAL_ABLATION_GRID),
    "LEML": Method(LEML(), LEML_GRID, True),
    "ML-LRC": Method(MLLRC(), MLLRC_GRID, True),
    "MLLOC": Method(MLLOC(), MLLOC_GRID, False),
    "MAXIDE": Method(MAXIDE(), MAXIDE_GRID, True),
    "MBR": Method(MBR(completer=MAXIDE(), learner=BR()), MBR_GRID, True),
    "MMLLOC": Method(MMLLOC(completer=MAXIDE(), learner=MLLOC()), MMLLOC_GRID, True),
}

PAPER_DATASETS = ("arts", "business", "computers", "education", "entertainment", "health",
                  "enron", "image")

TEST_SIZE = 0.4
QUICK_MAX_SAMPLES = 500
# The clustering of the small-cluster table: its number of groups, and the share of all the
# rows below which a cluster is small.
SMALL_CLUSTER_GROUPS = 16
SMALL_CLUSTER_FRACTION = 0.05
MEASURES = ("ranking_loss", "instance_auc", "coverage", "average_precision", "label_auc")
# Parts of a fit time, in the order of the paper's timing table (C, I, F, R).
TIMES = ("clustering", "init", "fill", "main")
_CONFIG = ("seed", "quick", "tune", "drop_unlabeled", "small_clusters")
# The columns of the first results files. Later columns are appended after them; a file
# without them is read with those columns empty.
_LEGACY_FIELDS = (("dataset", "repetition", "rho", "method", "seed", "quick", "tune",
                   "drop_unlabeled", "n_train", "n_test", "params")
                  + tuple(f"{part}_{m}" for part in ("prediction", "recovery")
                          for m in MEASURES)
                  + ("time_clustering", "time_init", "time_main", "time_fit", "time_tuning"))
FIELDS = (_LEGACY_FIELDS + ("small_clusters", "time_fill", "small_n_test")
          + tuple(f"small_{m}" for m in MEASURES))
_BOOLEAN = ("quick", "tune", "drop_unlabeled", "small_clusters")
_NUMERIC = {f for f in FIELDS if f.startswith(("prediction_", "recovery_", "time_", "small_"))
            and f not in _BOOLEAN}
# Methods whose presence switches the small-cluster design on by default.
_SMALL_CLUSTER_METHODS = ("GLObal", "loCAL")

# The paper's names of our measures; label_auc has no column in the paper.
_LABELS = {**{name: short for short, name in PAPER_NAMES.items()}, "label_auc": "Auc/label"}
# The paper's abbreviations are the first three letters but for Society (Social is "Soc").
_PAPER_ABBREVIATIONS = {"society": "Soci"}
_MARKS = {1: "•", -1: "∘", 0: ""}


def run_reproduction(datasets=None, methods=("GLOCAL", "BR"), observed_fractions=None,
                     n_repeats=None, data_dir=None, out_dir="reproduce-out",
                     paper_tables=None, quick=False, tune=True, drop_unlabeled=True,
                     small_clusters=None, n_jobs=None, random_state=0, progress=print):
    """Run the paper's protocol and write ``results.csv`` and ``report.md`` in ``out_dir``.

    Loops over datasets, repetitions, observed fractions rho and methods. Runs already in
    ``out_dir/results.csv`` are skipped, so an interrupted call resumes where it stopped.
    Methods that cannot learn with missing labels (BR, MLLOC) are run at rho = 1 only.

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
        cross-validation on every training set (`glocal.protocol.select_hyperparameters`);
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
        For an unknown method, a bad rho or a stored result of another configuration.
    FileNotFoundError
        If a dataset (or the data directory) cannot be found.
    """
    methods = _resolve_methods(methods)
    if small_clusters is None:
        small_clusters = any(name in methods for name in _SMALL_CLUSTER_METHODS)
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
    results = read_results(csv_path) if csv_path.exists() else []
    for row in results:
        stored = {key: row[key] for key in _CONFIG}
        if stored != config:
            raise ValueError(f"{csv_path} holds results of another configuration ({stored}, "
                             f"now {config}); choose another output directory")
    done = {(row["dataset"], row["repetition"], row["rho"], row["method"]) for row in results}

    skipped = [name for name in methods if not METHODS[name].missing_labels]
    if skipped and any(rho < 1 for rho in observed_fractions):
        progress(f"{', '.join(skipped)} cannot learn with missing labels: run at rho = 1 only")
    plan = [(name, rep, rho, method) for name in data for rep in range(n_repeats)
            for rho in observed_fractions for method in methods
            if rho == 1 or METHODS[method].missing_labels]
    todo = [run for run in plan if run not in done]
    progress(f"{len(plan)} runs, {len(plan) - len(todo)} already in {csv_path}")

    out_dir.mkdir(parents=True, exist_ok=True)
    tic = time.perf_counter()
    clusterings = {}  # (dataset, repetition) -> cluster of every row, with small_clusters
    # One BLAS thread: on this problem size OpenBLAS's threads slow every fit down by an
    # order of magnitude (measured on Enron: 0.4 s single-threaded, 4.7 s with 2 threads).
    with threadpool_limits(limits=1):
        for count, (name, rep, rho, method) in enumerate(todo, start=1):
            clusters = None
            if config["small_clusters"]:
                if (name, rep) not in clusterings:
                    clusterings[name, rep] = kmeans_groups(
                        data[name][0], SMALL_CLUSTER_GROUPS,
                        random_state=_seed(random_state, rep, SMALL_CLUSTER_GROUPS))
                clusters = clusterings[name, rep]
            row = _run(data[name], name, rep, rho, method, config, n_repeats, n_jobs,
                       clusters)
            results.append(row)
            _write_atomic(csv_path, _to_csv(results))
            elapsed = time.perf_counter() - tic
            eta = elapsed / count * (len(todo) - count)
            progress(f"[{len(plan) - len(todo) + count}/{len(plan)}] {name} rep {rep} "
                     f"rho {rho:g} {method}: Ap {row['prediction_average_precision']:.4f}, "
                     f"fit {row['time_fit']:.1f} s, tuning {row['time_tuning']:.1f} s; "
                     f"elapsed {_clock(elapsed)}, ETA {_clock(eta)}")
    _write_atomic(report_path, render_report(results, paper_tables))
    progress(f"wrote {csv_path} and {report_path}")
    return results


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
    """Features and complete labels of every dataset, by lower-case name."""
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
        for name, (X, Y) in data.items():
            if X.shape[0] > QUICK_MAX_SAMPLES:
                # Seeded by the name too, so that a dataset's rows do not depend on the others.
                rng = np.random.RandomState(_seed(random_state, *name.encode()))
                rows = np.sort(rng.permutation(X.shape[0])[:QUICK_MAX_SAMPLES])
                data[name] = X[rows], Y[rows]
    return data


def _load(name, data_dir, random_state):
    # The protocol draws its own splits, so a file's predefined split is not used.
    bunch = (make_glocal_data(random_state=random_state) if name == "synthetic"
             else load_dataset(name, data_dir))
    return bunch.X, np.asarray(bunch.Y)


def _seed(*key):
    """A seed determined by a tuple of non-negative ints."""
    return int(np.random.SeedSequence(key).generate_state(1)[0])


def _run(dataset, name, rep, rho, method_name, config, n_repeats, n_jobs, clusters=None):
    """One fit and its scores: a row of results.csv.

    ``clusters``: the cluster of every row of the dataset (small-cluster design), or None.
    """
    X, Y = dataset
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
    if config["tune"]:
        estimator.set_params(**select_hyperparameters(
            estimator, grid, X_train, Y_observed, n_jobs=n_jobs,
            random_state=_seed(seed, rep)))
    tuning = time.perf_counter() - tic
    tic = time.perf_counter()
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


def read_results(path):
    """The rows of a ``results.csv`` written by `run_reproduction`.

    Files of earlier versions, which lack some of the later columns of `FIELDS` (the
    small-cluster columns, ``time_fill``), are read with those columns empty.

    Parameters
    ----------
    path : path-like

    Returns
    -------
    results : list of dict
        One dict per run with the keys of `FIELDS`: measures, times and ``small_n_test``
        as float (NaN where not applicable or not recorded), ``repetition``, ``seed``,
        ``n_train``, ``n_test`` as int, ``rho`` as float, ``quick``, ``tune``,
        ``drop_unlabeled`` and ``small_clusters`` as bool (False when not recorded), the
        rest as str (``params`` is JSON).

    Raises
    ------
    ValueError
        If the file lacks a column of the first version of the format or has a column
        this version does not know.
    """
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        columns = tuple(reader.fieldnames or ())
        missing = [f for f in _LEGACY_FIELDS if f not in columns]
        unknown = [f for f in columns if f not in FIELDS]
        if missing or unknown:
            raise ValueError(f"{path}: not a results file of this version of glocal "
                             f"(columns {list(columns)}; "
                             + (f"missing {missing}" if missing else f"unknown {unknown}")
                             + ")")
        rows = [{key: row.get(key) or "" for key in FIELDS} for row in reader]
    for row in rows:
        for key in ("repetition", "seed", "n_train", "n_test"):
            row[key] = int(row[key])
        for key in _BOOLEAN:
            row[key] = row[key] == "True"
        row["rho"] = float(row["rho"])
        for key in _NUMERIC:
            row[key] = float(row[key]) if row[key] else np.nan
    return rows


def _to_csv(rows):
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, FIELDS, restval="", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if isinstance(value, float) and np.isnan(value) else value
                         for key, value in row.items()})
    return buffer.getvalue()


def _write_atomic(path, text):
    """Replace ``path`` by ``text`` at once: readers see the old or the new file, never a part."""
    with atomic_output(path, overwrite=True) as file:
        file.write(text)


def render_report(results, paper_tables=None):
    """The Markdown report of a reproduction: the paper's tables, ours and theirs.

    Parameters
    ----------
    results : list of dict
        Rows as returned by `read_results` or `run_reproduction` (keys missing from a row,
        such as the columns of later versions, count as empty).
    paper_tables : path-like, default=None
        The paper's ``paper_tables.json``; its numbers are shown beside ours when given.

    Returns
    -------
    report : str
        The paper's tables, each with the methods found in ``results`` (the paper's
        methods first, in its order, GLOCAL last) and the paper's numbers beside ours for
        the methods it reports: full labels on test (rho = 1; its Table 2: BR, MLLOC, LEML,
        ML-LRC, GLOCAL), missing labels (rho < 1: recovery of the missing training labels,
        MAXIDE, LEML, ML-LRC, GLOCAL; prediction on test, MMLLOC, LEML, ML-LRC, GLOCAL;
        also MBR and the others run), test rows of small clusters (rho = 1: GLObal, loCAL,
        GLOCAL; present when runs recorded them) and fit times (the paper's C / I / F / R /
        A at rho = 0.7). Cells are mean ± std over the repetitions, with the marks of
        paired t-tests of GLOCAL against every other method; a summary first counts these
        marks for each method and table.
    """
    paper = json.loads(Path(paper_tables).read_text()) if paper_tables is not None else None
    cells = {}
    for row in results:
        cells.setdefault((row["dataset"], row["rho"], row["method"]), []).append(row)
    datasets = list(dict.fromkeys(row["dataset"] for row in results))
    methods = list(dict.fromkeys(row["method"] for row in results))
    rhos = sorted({row["rho"] for row in results if row["rho"] < 1})
    repeats = sorted({len(rows) for rows in cells.values()})
    config = {key: results[0].get(key, False if key in _BOOLEAN else None)
              for key in _CONFIG} if results else {}

    summary = (f"{len(results)} runs; repetitions per cell: "
               f"{', '.join(map(str, repeats)) or '-'}; "
               f"settings: {', '.join(f'{k}={v}' for k, v in config.items())}.")
    lines = ["# GLOCAL: reproduction of the paper's tables", "", summary, "", _EXPLANATION, ""]
    parts = [("full labels, test", "prediction", [1.0], "full_labels_test"),
             ("missing labels, recovery", "recovery", rhos, "missing_labels_recovery_train"),
             ("missing labels, test", "prediction", rhos, "missing_labels_prediction_test"),
             ("small clusters, test", "small", [1.0], "small_clusters_full_labels_test")]
    wins = _wins_table(cells, datasets, methods, parts) if "GLOCAL" in methods else []
    if wins:
        lines += ["## Summary: GLOCAL against each method", "",
                  "Cells of the tables below (datasets × Rkl, Auc, Cvg, Ap × ρ) where GLOCAL "
                  "is significantly better, not significantly different, or significantly "
                  "worse (paired t-tests at 95%). The paper claims GLOCAL at least ties "
                  "every method in every cell.", ""]
        lines += wins
    if 1.0 in {row["rho"] for row in results}:
        lines += ["## Full labels, test (rho = 1)", "",
                  "The paper's Table 2 (BR, MLLOC, LEML, ML-LRC, GLOCAL), with the other "
                  "methods run.", ""]
        lines += _measure_table(cells, datasets, methods, [1.0], "prediction", paper,
                                "full_labels_test")
    if rhos:
        lines += ["## Missing labels: recovery of the missing training labels", "",
                  "The paper compares MAXIDE, LEML, ML-LRC and GLOCAL; MBR and MMLLOC here "
                  "rank the training rows by their learner's scores (their filled labels are "
                  "MAXIDE's).", ""]
        lines += _measure_table(cells, datasets, methods, rhos, "recovery", paper,
                                "missing_labels_recovery_train")
        lines += ["## Missing labels: prediction on test", "",
                  "The paper compares MMLLOC, LEML, ML-LRC and GLOCAL.", ""]
        lines += _measure_table(cells, datasets, methods, rhos, "prediction", paper,
                                "missing_labels_prediction_test")
    small = _measure_table(cells, datasets, methods, [1.0], "small", paper,
                           "small_clusters_full_labels_test")
    if len(small) > 3:  # more than the header and the closing blank line
        counts = [row["small_n_test"] for row in results
                  if row["rho"] == 1.0 and np.isfinite(row.get("small_n_test", np.nan))]
        lines += [f"## Small clusters: test rows in clusters of under "
                  f"{SMALL_CLUSTER_FRACTION:.0%} of the samples (rho = 1)", "",
                  f"The paper's table of GLObal, loCAL and GLOCAL. All rows of a repetition "
                  f"are clustered by k-means into {SMALL_CLUSTER_GROUPS} groups, which are "
                  f"GLOCAL's, GLObal's and loCAL's local groups on the training rows; the "
                  f"measures are on the test rows of the clusters holding under "
                  f"{SMALL_CLUSTER_FRACTION:.0%} of all rows "
                  f"({_count_range(counts)} test rows per run).", ""]
        lines += small
    if results:
        lines += ["## Fit time (seconds, mean over repetitions)", "",
                  "C clustering, I initialisation, F filling in the missing labels (MBR, "
                  "MMLLOC), R the main learning, A the whole fit; \"–\" where the method "
                  "does not report the part. The paper's times (MATLAB, the authors' "
                  "machine) are at rho = 0.7.", ""]
        lines += _time_table(cells, datasets, methods, paper)
    return "\n".join(lines)


_EXPLANATION = """\
Cells: mean ± standard deviation (ddof = 1) over the repetitions, each a random 60/40 \
split (the value alone for a single repetition). A mark on a method other than GLOCAL \
compares GLOCAL with it by a paired t-test at 95% over the repetitions: • GLOCAL \
significantly better, ∘ significantly worse. ↓: lower is better, ↑: higher is better. \
"paper" columns: the paper's numbers (no std for missing labels).

Measures (`glocal.metrics`): Rkl ranking loss, Cvg coverage minus one, Ap average precision, \
Auc the per-instance AUC (`instance_auc`), Auc/label the per-label AUC (`label_auc`). The \
paper's text defines a per-label AUC, but its reported Auc column is reproduced by the \
per-instance AUC: for BR it equals 1 − Rkl within 0.001 on 12 of the paper's 14 datasets \
(e.g. Enron 0.806 = 1 − 0.194, Arts 0.799 = 1 − 0.201), an identity of the per-instance AUC \
without tied scores, whereas the per-label AUC is far lower on these data (compare the \
Auc and Auc/label rows).

Protocol: test rows without a positive label are dropped. With missing labels, rho of each \
label's positives and of its negatives are observed in the training labels \
(`glocal.protocol.sample_observed`); "recovery" ranks, in every training row, only its \
missing labels by the method's scores (rows whose missing labels hold no positive are \
skipped); "prediction" scores the test split. Hyperparameters (when tuned) are chosen by \
5-fold cross-validation on the training set, maximizing Ap over the observed labels only. \
BR and MLLOC cannot learn with missing labels and are run at rho = 1 only; MBR and MMLLOC \
fill in the missing labels with MAXIDE, then learn with BR and MLLOC."""

# The methods of each of the paper's tables, in its order (GLOCAL last).
_PAPER_METHODS = {
    "full_labels_test": ("BR", "MLLOC", "LEML", "ML-LRC", "GLOCAL"),
    "missing_labels_recovery_train": ("MAXIDE", "LEML", "ML-LRC", "GLOCAL"),
    "missing_labels_prediction_test": ("MMLLOC", "LEML", "ML-LRC", "GLOCAL"),
    "small_clusters_full_labels_test": ("GLObal", "loCAL", "GLOCAL"),
    "cpu_seconds_missing_rho70": ("MBR", "MMLLOC", "LEML", "ML-LRC", "GLOCAL"),
}


def _ordered(methods, table):
    """``methods`` in a table's order: the paper's, then the rest, GLOCAL last."""
    ours = [m for m in _PAPER_METHODS[table] if m in methods and m != "GLOCAL"]
    ours += [m for m in METHODS if m in methods and m not in ours and m != "GLOCAL"]
    ours += [m for m in methods if m not in ours and m != "GLOCAL"]
    return ours + (["GLOCAL"] if "GLOCAL" in methods else [])


def _count_range(counts):
    if not counts:
        return "no"
    low, high = int(min(counts)), int(max(counts))
    return f"{low}" if low == high else f"{low}-{high}"


def _paper_key(dataset, table):
    """The paper's name of a dataset: full names in two tables, abbreviations in the rest."""
    full = dataset.capitalize()
    if table in ("full_labels_test", "cpu_seconds_missing_rho70"):
        return full
    return _PAPER_ABBREVIATIONS.get(dataset.lower(), full[:3])


def _paper_value(paper, table, dataset, measure, rho, method):
    """The paper's number as text, or "–"."""
    entry = (paper or {}).get(table, {}).get(_paper_key(dataset, table), {}).get(measure, {})
    if rho < 1:
        entry = entry.get(str(round(rho * 100)), {})
    value = entry.get(method)
    if value is None:
        return "–"
    if isinstance(value, dict):
        return f"{value['mean']:.3f}±{value['std']:.3f}"
    return f"{value:.3f}"


def _values(rows, key):
    """The finite values of ``key`` by repetition (absent and NaN values left out)."""
    values = {row["repetition"]: row.get(key, np.nan) for row in rows}
    return {rep: value for rep, value in values.items() if np.isfinite(value)}


def _measure_table(cells, datasets, methods, rhos, part, paper, table):
    keys = [f"{part}_{measure}" for measure in MEASURES]
    shown = _ordered([m for m in methods
                      if any(_values(cells.get((d, r, m), []), key)
                             for d in datasets for r in rhos for key in keys)], table)
    if not shown:
        return []
    paper_methods = [m for m in shown if paper is not None and m in _PAPER_METHODS[table]]
    header = (["dataset", "measure", "ρ"] + shown + [f"paper {m}" for m in paper_methods])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for dataset in datasets:
        for measure in MEASURES:
            key = f"{part}_{measure}"
            arrow = "↑" if GREATER_IS_BETTER[measure] else "↓"
            for rho in rhos:
                if not any(_values(cells.get((dataset, rho, m), []), k)
                           for m in shown for k in keys):
                    continue
                glocal = _values(cells.get((dataset, rho, "GLOCAL"), []), key)
                row = [dataset, f"{_LABELS[measure]} {arrow}", f"{rho:g}"]
                for method in shown:
                    values = _values(cells.get((dataset, rho, method), []), key)
                    if not values:
                        row.append("–")
                        continue
                    mark = ""
                    if method != "GLOCAL" and glocal:
                        mark = _MARKS[_compare(glocal, values, measure)]
                    row.append(_mean_std(list(values.values())) + mark)
                paper_measure = _LABELS[measure] if measure in PAPER_NAMES.values() else None
                row += [_paper_value(paper, table, dataset, paper_measure, rho, m)
                        for m in paper_methods]
                lines.append("| " + " | ".join(row) + " |")
    return lines + [""]


def _compare(glocal, values, measure):
    """GLOCAL against another method by a paired t-test over their common repetitions:
    1 significantly better, -1 significantly worse, 0 neither."""
    reps = sorted(set(values) & set(glocal))
    return paired_ttest([glocal[r] for r in reps], [values[r] for r in reps],
                        GREATER_IS_BETTER[measure])


def _wins_table(cells, datasets, methods, parts):
    """GLOCAL's significant wins, ties and losses against every other method, counted over
    the datasets, the paper's four measures and the observed fractions of each table."""
    header = ["table", "method", "GLOCAL better •", "no significant difference",
              "GLOCAL worse ∘"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for title, part, rhos, table in parts:
        for method in _ordered(methods, table):
            if method == "GLOCAL":
                continue
            counts = {1: 0, 0: 0, -1: 0}
            for dataset in datasets:
                for rho in rhos:
                    for measure in PAPER_NAMES.values():
                        key = f"{part}_{measure}"
                        glocal = _values(cells.get((dataset, rho, "GLOCAL"), []), key)
                        values = _values(cells.get((dataset, rho, method), []), key)
                        if glocal and values:
                            counts[_compare(glocal, values, measure)] += 1
            if sum(counts.values()):
                lines.append(f"| {title} | {method} | {counts[1]} | {counts[0]} | "
                             f"{counts[-1]} |")
    return lines + [""] if len(lines) > 2 else []


def _mean_std(values):
    values = np.asarray(values, dtype=float)
    if values.size == 1:
        return f"{values[0]:.3f}"
    return f"{values.mean():.3f}±{values.std(ddof=1):.3f}"


def _time_table(cells, datasets, methods, paper):
    header = ["dataset", "method", "ρ", "C clustering", "I init", "F fill", "R main",
              "A fit total", "tuning", "paper (ρ = 0.7) C / I / F / R / A"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    columns = [f"time_{t}" for t in TIMES] + ["time_fit", "time_tuning"]
    rhos = sorted({rho for (_, rho, _) in cells}, reverse=True)
    for dataset in datasets:
        for method in _ordered(methods, "cpu_seconds_missing_rho70"):
            for rho in rhos:
                rows = cells.get((dataset, rho, method))
                if not rows:
                    continue
                row = [dataset, method, f"{rho:g}"]
                for column in columns:
                    values = list(_values(rows, column).values())
                    row.append(f"{np.mean(values):.2f}" if values else "–")
                theirs = (paper or {}).get("cpu_seconds_missing_rho70", {}).get(
                    _paper_key(dataset, "cpu_seconds_missing_rho70"), {}).get(method)
                row.append(" / ".join(f"{theirs[k]:g}" if k in theirs else "–"
                                      for k in "CIFRA") if theirs and rho == 0.7 else "–")
                lines.append("| " + " | ".join(row) + " |")
    return lines + [""]
