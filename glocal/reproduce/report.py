"""The Markdown report of a reproduction: the paper's tables, ours beside theirs, with the
marks of paired t-tests of GLOCAL against every other method."""

import json
from pathlib import Path

import numpy as np

from ..metrics import GREATER_IS_BETTER, PAPER_NAMES
from ..protocol import paired_ttest
from .methods import METHODS, SMALL_CLUSTER_FRACTION, SMALL_CLUSTER_GROUPS
from .results import BOOLEAN, CONFIG, MEASURES, TIMES

# The paper's names of our measures; label_auc has no column in the paper.
_LABELS = {**{name: short for short, name in PAPER_NAMES.items()}, "label_auc": "Auc/label"}
# The paper's abbreviations are the first three letters but for Society (Social is "Soc").
_PAPER_ABBREVIATIONS = {"society": "Soci"}
_MARKS = {1: "•", -1: "∘", 0: ""}


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
    config = {key: results[0].get(key, False if key in BOOLEAN else None)
              for key in CONFIG} if results else {}

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
significantly better, ∘ significantly worse. "(3 of 4)": the measure is defined on 3 of \
the cell's 4 runs only (e.g. too few small-cluster test rows), the others left out. ↓: lower \
is better, ↑: higher is better. "paper" columns: the paper's numbers (no std for missing labels).

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
BR and MLLOC learn each label on the training rows where it is observed; MBR and MMLLOC \
fill in the missing labels with MAXIDE first, then learn with BR and MLLOC."""

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
                    runs = cells.get((dataset, rho, method), [])
                    values = _values(runs, key)
                    if not values:
                        row.append("–")
                        continue
                    mark = ""
                    if method != "GLOCAL" and glocal:
                        mark = _MARKS[_compare(glocal, values, measure)]
                    fewer = f" ({len(values)} of {len(runs)})" if len(values) < len(runs) else ""
                    row.append(_mean_std(list(values.values())) + mark + fewer)
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
