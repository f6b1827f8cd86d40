"""Which cross-validation criterion picks GLOCALCV()'s setting best when most labels are missing.

``run`` measures, once per (dataset, split, rho), everything a criterion needs, so that any
criterion's pick and its test Ap are computed afterwards without a new fit:

* the default search's fits on every fold (`glocal.model_selection._fold._walk_fold`, the
  search's own walk), each setting's scores on its validation rows assembled out of fold;
* every setting of the default grid refitted on the whole training part (as the search's
  refit would fit it) and its scores on the test rows;
* BR (`glocal.baselines.BR`) at every C of ``--br-C`` on the same folds, out of fold, and
  refitted on the whole training part.

Splits, hidden labels and folds are those of ``benchmarks/bench_missing_quality.py``: random
60/40 splits (`glocal.protocol.random_splits`, seed 0), ``sample_observed(Y_train, rho,
random_state=split)``, test rows without a positive dropped, 3 shuffled folds seeded by the
split. Each cell is one ``.npz`` file in ``--store`` (a rerun skips the cells present).

``report`` picks a setting (and a C of BR) by every criterion in `CRITERIA` from the stored
out-of-fold scores and prints the test Ap of the picks against tuned BR's.

Usage::

    GLOCAL_DATA=/path/to/data python benchmarks/bench_criterion.py run \\
        --datasets arts education --splits 5 --rhos 0.1 0.05 --store cells/
    python benchmarks/bench_criterion.py report cells/ [--datasets ...] [--rhos ...]
"""

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import ParameterGrid
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, named_data  # noqa: E402

from glocal import GLOCALCV  # noqa: E402
from glocal._utils.validation import LabelWarning  # noqa: E402
from glocal.baselines import BR  # noqa: E402
from glocal.metrics import average_precision, evaluate_masked, label_auc  # noqa: E402
from glocal.metrics import observed_average_precision  # noqa: E402
from glocal.metrics._ranking import _masked_stats, _observed_inputs, _row_values  # noqa: E402
from glocal.model_selection import DEFAULT_PARAM_GRID  # noqa: E402
from glocal.model_selection._fold import _walk_fold  # noqa: E402
from glocal.model_selection._plan import _plan  # noqa: E402
from glocal.protocol import (BR_GRID, drop_unlabeled_rows, paired_ttest,  # noqa: E402
                             random_splits, sample_observed)

YAHOO = ["arts", "business", "computers", "education", "entertainment", "health"]
DESIGN = ["cal500", "medical", "genbase", "birds", "synthetic:5000,500,374"]
BR_CS = [0.01, 0.1, 1.0, 10.0]


def _cell_path(store, name, rho, split):
    return Path(store) / f"{name.replace(':', '_').replace(',', '-')}_rho{rho:g}_split{split}.npz"


def _cells(name, rhos, splits):
    """Every (rho, split, X_train, Y_train complete, Y_train observed, X_test, Y_test)."""
    X, Y = named_data(name, DATA_DIR)
    for rho in rhos:
        for split, (train, test) in enumerate(random_splits(X.shape[0], splits, random_state=0)):
            X_test, Y_test = drop_unlabeled_rows(X[test], Y[test])
            observed = Y[train] if rho == 1 else sample_observed(Y[train], rho,
                                                                 random_state=split)
            yield rho, split, X[train], Y[train], observed, X_test, Y_test


def _out_of_fold(folds, n_rows, n_labels, predict):
    """Scores of every row from the fold where it is a validation row: ``predict(train,
    test)`` gives them (None: NaN, a vanished fit)."""
    scores = np.full((n_rows, n_labels), np.nan)
    for train, test in folds:
        part = predict(train, test)
        if part is not None:
            scores[test] = part
    return scores


def _measure_cell(X, Y_full, Y, X_test, Y_test, split, br_cs):
    """The stored arrays of one cell (see the module's description)."""
    search = GLOCALCV(random_state=split)
    base = search._base_estimator(Y.shape[1])
    candidates = list(ParameterGrid(DEFAULT_PARAM_GRID))
    plan = _plan(candidates, search.path_param)
    folds = search._folds(X)
    fold_of = np.empty(X.shape[0], dtype=int)
    for k, (_, test) in enumerate(folds):
        fold_of[test] = k
    glocal_val = np.full((len(candidates), *Y.shape), np.nan)
    tic = time.process_time()
    for k, (train, test) in enumerate(folds):
        kept = {}

        def recorder(model, X_val, Y_val, kept=kept):
            kept[len(kept)] = model.decision_function(X_val)
            return 0.0

        order = [i for i, _ in plan]
        _, _, _, _, _, vanished = _walk_fold(base, candidates, plan, X, Y, None, train, test,
                                             recorder, search.path_tol, k, len(folds), 0)
        scored = [i for i in order if not vanished[i]]
        for position, i in enumerate(scored):
            glocal_val[i][test] = kept[position]
    search_seconds = time.process_time() - tic
    glocal_test = np.empty((len(candidates), *Y_test.shape))
    tic = time.process_time()
    for i, params in enumerate(candidates):
        glocal_test[i] = clone(base).set_params(**params).fit(X, Y).decision_function(X_test)
    refit_seconds = time.process_time() - tic
    br_val = np.empty((len(br_cs), *Y.shape))
    br_test = np.empty((len(br_cs), *Y_test.shape))
    tic = time.process_time()
    for c, C in enumerate(br_cs):
        def predict(train, test, C=C):
            return BR(C=C, random_state=split).fit(X[train], Y[train]).decision_function(X[test])
        br_val[c] = _out_of_fold(folds, *Y.shape, predict)
        br_test[c] = BR(C=C, random_state=split).fit(X, Y).decision_function(X_test)
    br_seconds = time.process_time() - tic
    return dict(Y_full=Y_full, Y=Y, Y_test=Y_test, fold_of=fold_of,
                glocal_val=glocal_val.astype(np.float32), glocal_test=glocal_test.astype(
                    np.float32), br_val=br_val.astype(np.float32),
                br_test=br_test.astype(np.float32), br_cs=np.array(br_cs),
                settings=json.dumps(candidates), seconds=np.array(
                    [search_seconds, refit_seconds, br_seconds]))


def run(args):
    Path(args.store).mkdir(parents=True, exist_ok=True)
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", LabelWarning)  # a fold's labels, said by fit
        for name in args.datasets:
            for rho, split, *arrays in _cells(name, args.rhos, args.splits):
                path = _cell_path(args.store, name, rho, split)
                if path.exists():
                    continue
                cell = _measure_cell(*arrays, split, args.br_C)
                np.savez_compressed(path, **cell)
                print(f"{name} rho={rho:g} split={split} CPU s (search, refits, BR): "
                      + ", ".join(f"{s:.1f}" for s in cell["seconds"]), flush=True)


# --- the criteria ------------------------------------------------------------------------------

def _row_ap(Y, S):
    """Each row's Ap among its observed labels and whether it is defined."""
    y, s, mask = _observed_inputs(Y, S)
    return _row_values(_masked_stats(y, s, mask), "average_precision")


def instance_ap(Y, S):
    """Today's criterion: instance-wise Ap among the observed labels."""
    return observed_average_precision(Y, S)


def observed_label_auc(Y, S):
    return evaluate_masked(np.nan_to_num(Y), S, ~np.isnan(Y))["label_auc"]


def observed_label_ap(Y, S):
    """Label-wise Ap: each label ranks its observed rows."""
    return observed_average_precision(Y.T, S.T)


def mix(weight, second):
    def criterion(Y, S):
        return (1 - weight) * instance_ap(Y, S) + weight * second(Y, S)
    return criterion


def adaptive(second):
    """Instance-wise Ap weighted by the share of rows with an observed positive (the rows
    it ranks), ``second`` by the share of the others."""
    def criterion(Y, S):
        share = float((Y == 1).any(axis=1).mean())
        return share * instance_ap(Y, S) + (1 - share) * second(Y, S)
    return criterion


def weighted_instance_ap(Y, S):
    """Instance-wise Ap with each row weighted by its number of observed labels."""
    values, keep = _row_ap(Y, S)
    weights = (~np.isnan(Y)).sum(axis=1)[keep]
    return float(np.average(values[keep], weights=weights))


def spread_ratio(S):
    """Mean over labels of the scores' spread across rows, over the spread of the labels'
    mean scores: small when the per-label biases decide every row's ranking alike."""
    return float(S.std(axis=0).mean() / max(S.mean(axis=0).std(), 1e-12))


def guard(threshold):
    def criterion(Y, S):
        return -np.inf if spread_ratio(S) < threshold else instance_ap(Y, S)
    return criterion


CRITERIA = {"instance Ap": instance_ap,
            "label AUC": observed_label_auc,
            "label Ap": observed_label_ap,
            "mix AUC 0.5": mix(0.5, observed_label_auc),
            "mix AUC 0.25": mix(0.25, observed_label_auc),
            "mix Ap 0.5": mix(0.5, observed_label_ap),
            "adaptive AUC": adaptive(observed_label_auc),
            "adaptive Ap": adaptive(observed_label_ap),
            "row-weighted Ap": weighted_instance_ap,
            "guard 0.5": guard(0.5),
            "guard 0.35": guard(0.35)}


def _cv_score(criterion, Y, val, fold_of):
    """Mean over folds of ``criterion`` on each fold's validation rows (-inf: vanished)."""
    scores = []
    for k in np.unique(fold_of):
        rows = fold_of == k
        if np.isnan(val[rows]).any():
            return -np.inf
        scores.append(criterion(Y[rows], val[rows].astype(float)))
    return float(np.mean(scores))


def _pick(criterion, Y, vals, fold_of):
    scores = [_cv_score(criterion, Y, val, fold_of) for val in vals]
    return int(np.argmax(scores))  # the first on ties, as the search


def _load_cells(store, datasets, rhos):
    cells = {}
    for path in sorted(Path(store).glob("*.npz")):
        stem = path.stem
        name, rest = stem.rsplit("_rho", 1)
        rho, split = rest.split("_split")
        name = name.replace("synthetic_", "synthetic:").replace("-", ",")
        if (datasets and name not in datasets) or (rhos and float(rho) not in rhos):
            continue
        cells[(name, float(rho), int(split))] = path
    return cells


def _evaluate_cell(path, br_cs):
    data = np.load(path)
    Y, Y_full, Y_test, fold_of = data["Y"], data["Y_full"], data["Y_test"], data["fold_of"]
    settings = json.loads(str(data["settings"]))
    test_ap = [average_precision(Y_test, s) for s in data["glocal_test"]]
    keep_c = [i for i, C in enumerate(data["br_cs"]) if C in br_cs]
    br_val, br_test = data["br_val"][keep_c], data["br_test"][keep_c]
    br_ap = [average_precision(Y_test, s) for s in br_test]
    row = {"settings": settings, "test_ap": test_ap,
           "rows_with_positive": float((np.nan_to_num(Y) == 1).any(axis=1).mean()),
           "spread": [spread_ratio(s.astype(float)) for s in data["glocal_test"]],
           "label_auc": [label_auc(Y_test, s) for s in data["glocal_test"]]}
    for name, criterion in {**CRITERIA, "complete labels": instance_ap}.items():
        labels = Y_full if name == "complete labels" else Y
        pick = _pick(criterion, labels, data["glocal_val"], fold_of)
        br_pick = _pick(criterion, labels, br_val, fold_of)
        row[name] = (pick, test_ap[pick], br_ap[br_pick])
    row["BR"] = br_ap[_pick(instance_ap, Y, br_val, fold_of)]
    return row


def report(args):
    br_cs = args.br_C
    cells = _load_cells(args.store, args.datasets, args.rhos)
    rows = {key: _evaluate_cell(path, br_cs) for key, path in cells.items()}
    names = list(CRITERIA) + ["complete labels"]
    print(f"Test Ap of GLOCALCV()'s pick under each criterion minus tuned BR's (BR tuned by "
          f"instance-wise Ap over C in {br_cs}); per (dataset, rho): mean over splits "
          "[worst split]\n")
    print("| dataset | rho | splits | BR | " + " | ".join(names) + " |")
    print("|---|---|---|---|" + "---|" * len(names))
    groups = {}
    for (name, rho, split), row in sorted(rows.items()):
        groups.setdefault((name, rho), []).append(row)
    for (name, rho), group in groups.items():
        br = np.array([r["BR"] for r in group])
        cells_ = []
        for c in names:
            diff = np.array([r[c][1] for r in group]) - br
            cells_.append(f"{diff.mean():+.4f} [{diff.min():+.4f}]")
        print(f"| {name} | {rho:g} | {len(group)} | {br.mean():.4f} | " + " | ".join(cells_)
              + " |")
    print("\nEvery split: today's pick, its test Ap - BR, the best setting's; the picks' "
          "spread ratio and label AUC on the test rows\n")
    print("| dataset | rho | split | rows with an observed positive | pick (lam2, unit rows) "
          "| Ap - BR | best - BR | best setting | spread of pick / of best | label AUC of "
          "pick / of best |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (name, rho, split), r in sorted(rows.items()):
        pick = r["instance Ap"][0]
        best = int(np.argmax(r["test_ap"]))
        text = [f"{r['settings'][i]['lam2']:g}{'u' if r['settings'][i]['normalize_rows'] else ''}"
                for i in (pick, best)]
        print(f"| {name} | {rho:g} | {split} | {r['rows_with_positive']:.2f} | {text[0]} | "
              f"{r['test_ap'][pick] - r['BR']:+.4f} | {r['test_ap'][best] - r['BR']:+.4f} | "
              f"{text[1]} | {r['spread'][pick]:.2f} / {r['spread'][best]:.2f} | "
              f"{r['label_auc'][pick]:.3f} / {r['label_auc'][best]:.3f} |")
    if args.br_criteria:
        print("\nTuned BR under each criterion minus BR tuned by instance-wise Ap, mean over "
              "splits [worst]\n")
        print("| dataset | rho | " + " | ".join(names) + " |")
        print("|---|---|" + "---|" * len(names))
        for (name, rho), group in groups.items():
            br = np.array([r["BR"] for r in group])
            print(f"| {name} | {rho:g} | " + " | ".join(
                f"{(np.array([r[c][2] for r in group]) - br).mean():+.4f} "
                f"[{(np.array([r[c][2] for r in group]) - br).min():+.4f}]" for c in names)
                + " |")
    if args.ttest:
        print("\nPaired t-test of each criterion's GLOCALCV() against tuned BR: + / - / 0")
        for (name, rho), group in groups.items():
            br = [r["BR"] for r in group]
            print(f"{name} {rho:g}: " + ", ".join(
                f"{c} {paired_ttest([r[c][1] for r in group], br):+d}" for c in names))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--datasets", nargs="+", default=YAHOO)
    r.add_argument("--splits", type=int, default=5)
    r.add_argument("--rhos", nargs="+", type=float, default=[0.1, 0.05])
    r.add_argument("--br-C", nargs="+", type=float, default=BR_CS)
    r.add_argument("--store", required=True, help="directory of the cells' .npz files")
    p = sub.add_parser("report")
    p.add_argument("store")
    p.add_argument("--datasets", nargs="+")
    p.add_argument("--rhos", nargs="+", type=float)
    p.add_argument("--br-C", nargs="+", type=float, default=BR_CS,
                   help=f"BR's grid (the library's BR_GRID is {BR_GRID['C']})")
    p.add_argument("--br-criteria", action="store_true",
                   help="also tune BR by every criterion")
    p.add_argument("--ttest", action="store_true")
    args = parser.parse_args(argv)
    run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    main()
