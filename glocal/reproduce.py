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
* the chosen hyperparameters, and the fit time split into clustering, initialisation and
  main loop where the estimator reports them (``fit_times_``), plus the total fit and
  tuning times.

Files are replaced atomically (written to a temporary file in the same directory, then
renamed) after every run, so an interrupted reproduction keeps every finished run, and
running it again with the same output directory skips the runs already recorded.
"""

import csv
import io
import json
import time
from pathlib import Path
from typing import NamedTuple

import numpy as np
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from .baselines import BR
from .datasets import load_dataset, make_glocal_data
from .estimator import GLOCAL
from ._io import atomic_output
from .metrics import GREATER_IS_BETTER, PAPER_NAMES, evaluate
from .protocol import (
    BR_GRID,
    GLOCAL_GRID,
    drop_unlabeled_rows,
    evaluate_masked,
    paired_ttest,
    random_splits,
    sample_observed,
    select_hyperparameters,
)

__all__ = [
    "METHODS",
    "PAPER_DATASETS",
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
        Unfitted prototype; cloned for every run (its ``random_state``, if any, set per
        repetition).
    param_grid : dict
        Grid searched by 5-fold cross-validation on every training set.
    missing_labels : bool
        Whether it learns with missing labels (NaN in Y); methods that cannot are run at
        rho = 1 only.
    """

    estimator: object
    param_grid: dict
    missing_labels: bool


METHODS = {
    "GLOCAL": Method(GLOCAL(), GLOCAL_GRID, True),
    "BR": Method(BR(), BR_GRID, False),
}

PAPER_DATASETS = ("arts", "business", "computers", "education", "entertainment", "health",
                  "enron", "image")

TEST_SIZE = 0.4
QUICK_MAX_SAMPLES = 500
MEASURES = ("ranking_loss", "instance_auc", "coverage", "average_precision", "label_auc")
TIMES = ("clustering", "init", "main")
_CONFIG = ("seed", "quick", "tune", "drop_unlabeled")
FIELDS = (("dataset", "repetition", "rho", "method") + _CONFIG
          + ("n_train", "n_test", "params")
          + tuple(f"{part}_{m}" for part in ("prediction", "recovery") for m in MEASURES)
          + tuple(f"time_{t}" for t in TIMES) + ("time_fit", "time_tuning"))
_NUMERIC = {f for f in FIELDS if f.startswith(("prediction_", "recovery_", "time_"))}

# The paper's names of our measures; label_auc has no column in the paper.
_LABELS = {**{name: short for short, name in PAPER_NAMES.items()}, "label_auc": "Auc/label"}
# The paper's abbreviations are the first three letters but for Society (Social is "Soc").
_PAPER_ABBREVIATIONS = {"society": "Soci"}
_MARKS = {1: "•", -1: "∘", 0: ""}


def run_reproduction(datasets=None, methods=("GLOCAL", "BR"), observed_fractions=None,
                     n_repeats=None, data_dir=None, out_dir="reproduce-out",
                     paper_tables=None, quick=False, tune=True, drop_unlabeled=True,
                     n_jobs=None, random_state=0, progress=print):
    """Run the paper's protocol and write ``results.csv`` and ``report.md`` in ``out_dir``.

    Loops over datasets, repetitions, observed fractions rho and methods. Runs already in
    ``out_dir/results.csv`` are skipped, so an interrupted call resumes where it stopped.
    Methods that cannot learn with missing labels (BR) are run at rho = 1 only.

    Parameters
    ----------
    datasets : sequence of str, default=None
        Dataset names for `glocal.datasets.load_dataset`, or ``"synthetic"`` for
        `glocal.datasets.make_glocal_data` (seeded by ``random_state``). By default the
        `PAPER_DATASETS` found in the data directory.
    methods : sequence of str, default=("GLOCAL", "BR")
        Keys of `METHODS`.
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
    unknown = [name for name in methods if name not in METHODS]
    if unknown:
        raise ValueError(f"unknown method {unknown[0]!r}; known methods: {', '.join(METHODS)}")
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
              "drop_unlabeled": drop_unlabeled}
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
    # One BLAS thread: on this problem size OpenBLAS's threads slow every fit down by an
    # order of magnitude (measured on Enron: 0.4 s single-threaded, 4.7 s with 2 threads).
    with threadpool_limits(limits=1):
        for count, (name, rep, rho, method) in enumerate(todo, start=1):
            row = _run(data[name], name, rep, rho, method, config, n_repeats, n_jobs)
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


def _run(dataset, name, rep, rho, method_name, config, n_repeats, n_jobs):
    """One fit and its scores: a row of results.csv."""
    X, Y = dataset
    seed = config["seed"]
    train, test = random_splits(X.shape[0], n_repeats, TEST_SIZE, random_state=seed)[rep]
    X_train, Y_train = X[train], Y[train]
    X_test, Y_test = X[test], Y[test]
    if config["drop_unlabeled"]:
        X_test, Y_test = drop_unlabeled_rows(X_test, Y_test)
    Y_observed = (sample_observed(Y_train, rho, random_state=_seed(seed, rep, round(rho * 1000)))
                  if rho < 1 else Y_train)

    method = METHODS[method_name]
    estimator = clone(method.estimator)
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=_seed(seed, rep))
    tic = time.perf_counter()
    if config["tune"]:
        estimator.set_params(**select_hyperparameters(
            estimator, method.param_grid, X_train, Y_observed, n_jobs=n_jobs,
            random_state=_seed(seed, rep)))
    tuning = time.perf_counter() - tic
    tic = time.perf_counter()
    estimator.fit(X_train, Y_observed)
    fit = time.perf_counter() - tic

    params = estimator.get_params()
    row = {"dataset": name, "repetition": rep, "rho": rho, "method": method_name, **config,
           "n_train": X_train.shape[0], "n_test": X_test.shape[0],
           "params": json.dumps({key: params[key] for key in method.param_grid}),
           "time_fit": fit, "time_tuning": tuning}
    times = getattr(estimator, "fit_times_", {})
    row.update({f"time_{t}": times.get(t, np.nan) for t in TIMES})
    scores = {"prediction": evaluate(Y_test, estimator.decision_function(X_test))}
    if rho < 1:
        scores["recovery"] = evaluate_masked(Y_train, estimator.decision_function(X_train),
                                             np.isnan(Y_observed))
    for part in ("prediction", "recovery"):
        row.update({f"{part}_{m}": scores.get(part, {}).get(m, np.nan) for m in MEASURES})
    return row


def _clock(seconds):
    minutes, seconds = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"


def read_results(path):
    """The rows of a ``results.csv`` written by `run_reproduction`.

    Parameters
    ----------
    path : path-like

    Returns
    -------
    results : list of dict
        One dict per run with the keys of `FIELDS`: measures and times as float (NaN where
        not applicable), ``repetition``, ``seed``, ``n_train``, ``n_test`` as int, ``rho``
        as float, ``quick``, ``tune`` and ``drop_unlabeled`` as bool, the rest as str
        (``params`` is JSON).
    """
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        if tuple(reader.fieldnames or ()) != FIELDS:
            raise ValueError(f"{path}: not a results file of this version of glocal "
                             f"(columns {reader.fieldnames})")
        rows = list(reader)
    for row in rows:
        for key in ("repetition", "seed", "n_train", "n_test"):
            row[key] = int(row[key])
        for key in ("quick", "tune", "drop_unlabeled"):
            row[key] = row[key] == "True"
        row["rho"] = float(row["rho"])
        for key in _NUMERIC:
            row[key] = float(row[key]) if row[key] else np.nan
    return rows


def _to_csv(rows):
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, FIELDS, lineterminator="\n")
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
        Rows as returned by `read_results` or `run_reproduction`.
    paper_tables : path-like, default=None
        The paper's ``paper_tables.json``; its numbers are shown beside ours when given.

    Returns
    -------
    report : str
        Tables for full labels on test (rho = 1), missing labels (recovery on the training
        matrix and prediction on test, rho < 1) and fit times, with mean ± std over the
        repetitions and the marks of paired t-tests of GLOCAL against every other method.
    """
    paper = json.loads(Path(paper_tables).read_text()) if paper_tables is not None else None
    cells = {}
    for row in results:
        cells.setdefault((row["dataset"], row["rho"], row["method"]), []).append(row)
    datasets = list(dict.fromkeys(row["dataset"] for row in results))
    methods = list(dict.fromkeys(row["method"] for row in results))
    rhos = sorted({row["rho"] for row in results if row["rho"] < 1})
    repeats = sorted({len(rows) for rows in cells.values()})
    config = {key: results[0][key] for key in _CONFIG} if results else {}

    summary = (f"{len(results)} runs; repetitions per cell: "
               f"{', '.join(map(str, repeats)) or '-'}; "
               f"settings: {', '.join(f'{k}={v}' for k, v in config.items())}.")
    lines = ["# GLOCAL: reproduction of the paper's tables", "", summary, "", _EXPLANATION, ""]
    if 1.0 in {row["rho"] for row in results}:
        lines += ["## Full labels, test (rho = 1)", ""]
        lines += _measure_table(cells, datasets, methods, [1.0], "prediction", paper,
                                "full_labels_test")
    if rhos:
        lines += ["## Missing labels: recovery of the missing training labels", ""]
        lines += _measure_table(cells, datasets, methods, rhos, "recovery", paper,
                                "missing_labels_recovery_train")
        lines += ["## Missing labels: prediction on test", ""]
        lines += _measure_table(cells, datasets, methods, rhos, "prediction", paper,
                                "missing_labels_prediction_test")
    if results:
        lines += ["## Fit time (seconds, mean over repetitions)", ""]
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
BR cannot learn with missing labels and is run at rho = 1 only."""


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
    return {row["repetition"]: row[key] for row in rows}


def _measure_table(cells, datasets, methods, rhos, part, paper, table):
    shown = [m for m in methods if any((d, r, m) in cells for d in datasets for r in rhos)]
    paper_methods = [m for m in shown if paper is not None]
    header = (["dataset", "measure", "ρ"] + shown + [f"paper {m}" for m in paper_methods])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for dataset in datasets:
        for measure in MEASURES:
            key = f"{part}_{measure}"
            arrow = "↑" if GREATER_IS_BETTER[measure] else "↓"
            for rho in rhos:
                if not any((dataset, rho, m) in cells for m in shown):
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
                        reps = sorted(set(values) & set(glocal))
                        mark = _MARKS[paired_ttest([glocal[r] for r in reps],
                                                   [values[r] for r in reps],
                                                   GREATER_IS_BETTER[measure])]
                    row.append(_mean_std(list(values.values())) + mark)
                paper_measure = _LABELS[measure] if measure in PAPER_NAMES.values() else None
                row += [_paper_value(paper, table, dataset, paper_measure, rho, m)
                        for m in paper_methods]
                lines.append("| " + " | ".join(row) + " |")
    return lines + [""]


def _mean_std(values):
    values = np.asarray(values, dtype=float)
    if values.size == 1:
        return f"{values[0]:.3f}"
    return f"{values.mean():.3f}±{values.std(ddof=1):.3f}"


def _time_table(cells, datasets, methods, paper):
    header = ["dataset", "method", "ρ", "clustering", "init", "main", "fit total", "tuning",
              "paper (ρ = 0.7) C / I / R / A"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    columns = [f"time_{t}" for t in TIMES] + ["time_fit", "time_tuning"]
    rhos = sorted({rho for (_, rho, _) in cells}, reverse=True)
    for dataset in datasets:
        for method in methods:
            for rho in rhos:
                rows = cells.get((dataset, rho, method))
                if not rows:
                    continue
                means = [np.mean([row[c] for row in rows]) for c in columns]
                row = [dataset, method, f"{rho:g}"]
                row += ["–" if np.isnan(m) else f"{m:.2f}" for m in means]
                theirs = (paper or {}).get("cpu_seconds_missing_rho70", {}).get(
                    _paper_key(dataset, "cpu_seconds_missing_rho70"), {}).get(method)
                row.append(" / ".join(f"{theirs[k]:g}" if k in theirs else "–"
                                      for k in "CIRA") if theirs and rho == 0.7 else "–")
                lines.append("| " + " | ".join(row) + " |")
    return lines + [""]
