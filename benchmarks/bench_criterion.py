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
out-of-fold scores and prints the test Ap of the picks against tuned BR's. ``rules`` makes
the pick from the folds' row-weighted Ap by every rule of `RULES` (the mean over folds as
`GLOCALCV` does, pooled, median, within one standard error), on these cells and on the
exhaustive searches of ``benchmarks/bench_search_levers.py collect``. ``open`` prints one
cell's settings: fold scores under both criteria, their noise, spread and test Ap.
``racing`` replays racing on the stored folds (after one fold, after two, none). ``search``
runs ``GLOCALCV()`` itself (racing, as users run it) on the same cells under its
criterion (`glocal.metrics.observed_two_way_average_precision`) and under the rows' term
alone, and writes each pick's test Ap and tuned BR's as CSV.

Usage::

    GLOCAL_DATA=/path/to/data python benchmarks/bench_criterion.py run \\
        --datasets arts education --splits 5 --rhos 0.1 0.05 --store cells/
    python benchmarks/bench_criterion.py report cells/ [--datasets ...] [--rhos ...]
    python benchmarks/bench_criterion.py rules cells/ [--levers DIR ...] [--csv FILE]
    python benchmarks/bench_criterion.py open cells/ entertainment 0.05 3
    GLOCAL_DATA=/path/to/data python benchmarks/bench_criterion.py search \\
        --datasets arts education --splits 5 --rhos 0.1 0.05 --store cells/ --out search.csv
"""

import argparse
import csv
import json
import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import ParameterGrid
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, named_data  # noqa: E402

from glocal import GLOCALCV  # noqa: E402
from glocal._utils.validation import LabelWarning  # noqa: E402
from glocal.baselines import BR  # noqa: E402
from glocal.metrics import average_precision, evaluate_masked, label_auc  # noqa: E402
from glocal.metrics import (observed_average_precision,  # noqa: E402
                            observed_two_way_average_precision,
                            observed_weighted_average_precision,
                            observed_weighted_average_precision_scorer)
from glocal.model_selection import DEFAULT_PARAM_GRID  # noqa: E402
from glocal.model_selection._fold import _walk_fold  # noqa: E402
from glocal.model_selection._plan import _needed, _plan  # noqa: E402
from glocal.model_selection._racing import N_PARTS, contenders, part_scores  # noqa: E402
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
        *_, vanished, _, _, held_out = _walk_fold(base, candidates, plan, X, Y, None, train,
                                                  test, None, search.path_tol, k, len(folds), 0)
        for i in np.flatnonzero(~vanished):
            glocal_val[i][test] = held_out[i]
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

def spread_ratio(S):
    """Mean over labels of the scores' spread across rows, over the spread of the labels'
    mean scores: small when the per-label biases decide every row's ranking alike."""
    return float(S.std(axis=0).mean() / max(S.mean(axis=0).std(), 1e-12))


def _parts(Y, S):
    """What every criterion is made of, on one fold's validation rows."""
    return {"instance Ap": observed_average_precision(Y, S),
            "label AUC": evaluate_masked(np.nan_to_num(Y), S, ~np.isnan(Y))["label_auc"],
            "label Ap": observed_average_precision(Y.T, S.T),
            "row-weighted Ap": observed_weighted_average_precision(Y, S),
            "share": float((Y == 1).any(axis=1).mean()), "spread": spread_ratio(S)}


def _mix(weight, second):
    return lambda p: (1 - weight) * p["instance Ap"] + weight * p[second]


def _adaptive(second):
    """Instance-wise Ap weighted by the share of rows with an observed positive (the rows
    it ranks), ``second`` by the share of the others."""
    return lambda p: p["share"] * p["instance Ap"] + (1 - p["share"]) * p[second]


def _guard(threshold):
    return lambda p: -np.inf if p["spread"] < threshold else p["instance Ap"]


# name -> criterion of one fold's `_parts`
CRITERIA = {"instance Ap": lambda p: p["instance Ap"],
            "label AUC": lambda p: p["label AUC"],
            "label Ap": lambda p: p["label Ap"],
            "mix AUC 0.5": _mix(0.5, "label AUC"),
            "mix AUC 0.25": _mix(0.25, "label AUC"),
            "mix Ap 0.5": _mix(0.5, "label Ap"),
            "adaptive AUC": _adaptive("label AUC"),
            "adaptive Ap": _adaptive("label Ap"),
            "row-weighted Ap": lambda p: p["row-weighted Ap"],
            **{f"two-way {w:g}": (lambda p, w=w: (1 - w) * p["row-weighted Ap"]
                                  + w * p["label Ap"]) for w in (0.1, 0.25, 0.35, 0.5)},
            "guard 0.5": _guard(0.5),
            "guard 0.35": _guard(0.35)}


def _fold_parts(Y, val, fold_of):
    """`_parts` of every fold (None: a vanished fit)."""
    parts = []
    for k in np.unique(fold_of):
        rows = fold_of == k
        parts.append(None if np.isnan(val[rows]).any()
                     else _parts(Y[rows], val[rows].astype(float)))
    return parts


def _pick(criterion, fold_parts):
    """The first setting of highest mean criterion over folds, as the search picks."""
    scores = [np.mean([-np.inf if p is None else criterion(p) for p in parts])
              for parts in fold_parts]
    return int(np.argmax(scores))


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


def _evaluate_cell(path):
    """The parts of every setting's and C's folds, the test measures; cached beside the
    cell."""
    cache = path.with_suffix(".json")
    if cache.exists():
        return json.loads(cache.read_text())
    data = np.load(path)
    Y, Y_full, Y_test, fold_of = data["Y"], data["Y_full"], data["Y_test"], data["fold_of"]
    tests = data["glocal_test"].astype(float)
    row = {"settings": json.loads(str(data["settings"])),
           "test_ap": [average_precision(Y_test, s) for s in tests],
           "br_cs": data["br_cs"].tolist(),
           "br_ap": [average_precision(Y_test, s) for s in data["br_test"].astype(float)],
           "rows_with_positive": float((np.nan_to_num(Y) == 1).any(axis=1).mean()),
           "spread": [spread_ratio(s) for s in tests],
           "label_auc": [label_auc(Y_test, s) for s in tests],
           "parts": [_fold_parts(Y, val, fold_of) for val in data["glocal_val"]],
           "complete": [_fold_parts(Y_full, val, fold_of) for val in data["glocal_val"]],
           "br_parts": [_fold_parts(Y, val, fold_of) for val in data["br_val"]]}
    cache.write_text(json.dumps(row))
    return row


def _picks(row, br_cs):
    """{criterion: (pick, its test Ap, BR's test Ap under it)}, BR over ``br_cs``."""
    keep = [i for i, C in enumerate(row["br_cs"]) if C in br_cs]
    picks = {}
    for name, criterion in CRITERIA.items():
        pick = _pick(criterion, row["parts"])
        br = keep[_pick(criterion, [row["br_parts"][i] for i in keep])]
        picks[name] = (pick, row["test_ap"][pick], row["br_ap"][br])
    pick = _pick(CRITERIA["instance Ap"], row["complete"])
    picks["complete labels"] = (pick, row["test_ap"][pick], picks["instance Ap"][2])
    return picks


def report(args):
    br_cs = args.br_C
    cells = _load_cells(args.store, args.datasets, args.rhos)
    rows = {}
    for key, path in cells.items():
        rows[key] = _evaluate_cell(path)
        rows[key].update(_picks(rows[key], br_cs))
        rows[key]["BR"] = rows[key]["instance Ap"][2]
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
    print("\nWhat explains a pick below the best setting, per (dataset, rho): rows with an "
          "observed positive; searches whose pick is lam2 = 16 (the grid's top end); the "
          "picks' mean regret (the best setting's test Ap minus the pick's) under the "
          "observed labels and under the complete training labels (same folds, same fits); "
          "the picks' spread ratio (mean per-label spread of the test scores over the spread "
          "of the label means) and the best settings'\n")
    print("| dataset | rho | rows with a positive | picks at lam2 = 16 | regret | regret with "
          "complete labels | spread of picks | spread of best |")
    print("|---|---|---|---|---|---|---|---|")
    for (name, rho), group in groups.items():
        best = [int(np.argmax(r["test_ap"])) for r in group]
        picks = [r["instance Ap"][0] for r in group]
        regret = [np.mean([r["test_ap"][b] - r[criterion][1] for r, b in zip(group, best)])
                  for criterion in ("instance Ap", "complete labels")]
        print(f"| {name} | {rho:g} | {np.mean([r['rows_with_positive'] for r in group]):.2f} | "
              f"{sum(r['settings'][i]['lam2'] == 16 for r, i in zip(group, picks))} | "
              f"{regret[0]:.4f} | {regret[1]:.4f} | "
              f"{np.mean([r['spread'][i] for r, i in zip(group, picks)]):.2f} | "
              f"{np.mean([r['spread'][i] for r, i in zip(group, best)]):.2f} |")
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


# --- selection rules: how the folds' row-weighted Ap make the pick -----------------------------

def _rule_inputs(folds):
    """What every rule reads, from ``folds``: per fold, its validation labels and every
    setting's scores of them (None: a vanished fit). The row-weighted Ap per fold and setting
    (-inf: vanished), its values on `glocal.model_selection._racing.part_scores`' parts of
    each fold (seeded by the fold's index, as racing's are per fold), on all the
    out-of-fold rows pooled, and every setting's `spread_ratio` of its validation scores
    (mean over folds; NaN: a vanished fit)."""
    n = len(folds[0][1])
    scores = np.full((len(folds), n), -np.inf)
    parts = np.full((len(folds), n, N_PARTS), -np.inf)
    for f, (Y, vals) in enumerate(folds):
        for i, S in enumerate(vals):
            if S is not None:
                scores[f, i] = observed_weighted_average_precision(Y, S)
                parts[f, i] = part_scores(lambda rows, S=S: observed_weighted_average_precision(
                    Y[rows], S[rows]), len(Y), f)
    Y_all = np.vstack([Y for Y, _ in folds])
    pooled = np.array([-np.inf if any(vals[i] is None for _, vals in folds) else
                       observed_weighted_average_precision(
                           Y_all, np.vstack([vals[i] for _, vals in folds]))
                       for i in range(n)])
    spreads = np.array([np.mean([np.nan if vals[i] is None else spread_ratio(vals[i])
                                 for _, vals in folds]) for i in range(n)])
    return scores, parts, pooled, spreads


def _relative_guard(fraction):
    """The best mean among the settings whose validation scores' spread ratio is at least
    ``fraction`` of the largest of the search's: a guard against bias-dominated models whose
    threshold follows the data (an absolute one reads CAL500's dense labels, spread ratios
    about 0.05, as bias-dominated everywhere)."""
    def rule(scores, parts, pooled, spreads, lam2):
        kept = spreads >= fraction * np.nanmax(spreads)
        return int(np.argmax(np.where(kept, scores.mean(axis=0), -np.inf)))
    return rule


def _one_se(prefer, level=1.0):
    """Among the settings within ``level`` paired standard errors of the best mean (the
    settings racing at that level would keep after the last fold, `contenders`), the one of
    smallest (``prefer`` = 1) or largest (-1) lam2, or (``prefer`` = 0) of lam2 nearest the
    middle of the grid's lam2 (in log scale); the best mean among those."""
    def rule(scores, parts, pooled, spreads, lam2):
        mean = scores.mean(axis=0)
        near = contenders(scores, parts, np.ones(len(lam2), dtype=bool), level)
        middle = np.median(np.log(np.unique(lam2)))
        key = [(prefer * lam2[i] if prefer else abs(np.log(lam2[i]) - middle), -mean[i], i)
               for i in np.flatnonzero(near)]
        return min(key)[2]
    return rule


# name -> pick from (fold scores, their parts, the pooled scores, the spread ratios, every
# setting's lam2)
RULES = {"mean over folds": lambda scores, *_: int(np.argmax(scores.mean(axis=0))),
         "pooled over folds": lambda scores, parts, pooled, *_: int(np.argmax(pooled)),
         "median over folds": lambda scores, *_: int(np.argmax(np.median(scores, axis=0))),
         "one SE, smaller lam2": _one_se(1),
         "half SE, smaller lam2": _one_se(1, 0.5),
         "one SE, larger lam2": _one_se(-1),
         "one SE, middle lam2": _one_se(0),
         "half SE, middle lam2": _one_se(0, 0.5),
         "spread at least 0.3 of the largest": _relative_guard(0.3),
         "spread at least 0.5 of the largest": _relative_guard(0.5)}


def _cell_folds(path):
    """One stored cell: per fold its validation labels and every setting's scores of them
    (None: a vanished fit), the settings, their test Ap and BR's (tuned as the study's BR
    is), from a ``run`` cell (``.npz``) or an exhaustive search of
    ``benchmarks/bench_search_levers.py collect`` (``.pkl``, refitted from GLOCAL's own start,
    NaN where not refitted; no BR: None)."""
    if path.suffix == ".npz":
        data = np.load(path)
        Y, fold_of, val = data["Y"], data["fold_of"], data["glocal_val"].astype(float)
        folds = [(Y[fold_of == k], [None if np.isnan(v[fold_of == k]).any() else v[fold_of == k]
                                    for v in val]) for k in np.unique(fold_of)]
        row = _evaluate_cell(path)
        return folds, row["settings"], row["test_ap"], _picks(row, BR_GRID["C"])[
            "instance Ap"][2]
    with open(path, "rb") as file:
        cell = pickle.load(file)
    keys = [(p["lam2"], p["normalize_rows"]) for p in cell["params"]]
    folds = []
    for fold in cell["fits"]:
        vals = [None] * len(keys)
        for fit in fold:
            vals[keys.index(tuple(fit["params"]))] = fit["scores"].astype(float)
        folds.append((fold[0]["Y"], vals))
    # A setting no design of bench_search_levers picked was not refitted: NaN test Ap.
    return folds, cell["params"], [np.nan if refit is None else refit["cold_ap"]
                                   for refit in cell["refits"]], None


def _cell_rules(path):
    """{rule: (pick, its test Ap)} of one stored cell (`_cell_folds`), BR's test Ap and the
    settings."""
    folds, settings, test_ap, br = _cell_folds(path)
    inputs = _rule_inputs(folds)
    lam2 = np.array([p["lam2"] for p in settings])
    return {name: (rule(*inputs, lam2), test_ap[rule(*inputs, lam2)])
            for name, rule in RULES.items()}, br, settings


def open_cell(args):
    """One cell opened: per setting, both criteria on every fold, the paired difference to
    GLOCALCV's pick (the best mean row-weighted Ap) on every fold with its standard error
    (racing's, from the parts), the spread ratio of the validation scores and the test
    Ap."""
    path = _cell_path(args.store, args.dataset, args.rho, args.split)
    folds, settings, test_ap, br = _cell_folds(path)
    scores, parts, *_ = _rule_inputs(folds)
    pick = int(np.argmax(scores.mean(axis=0)))
    print(f"{args.dataset} rho={args.rho:g} split {args.split}: tuned BR's test Ap {br:.4f}")
    for k, (Y, _) in enumerate(folds):
        kept = (np.nan_to_num(Y) == 1).any(axis=1)
        print(f"fold {k}: {kept.sum()} of {len(Y)} validation rows with an observed positive "
              f"({kept.mean():.3f}), {(~np.isnan(Y[kept])).sum(axis=1).mean():.2f} observed "
              "labels on each")
    print("\n| setting | row-weighted Ap per fold (mean) | unweighted per fold (mean) | pick "
          "minus setting per fold (standard error) | spread ratio on validation | test Ap |")
    print("|---|---|---|---|---|---|")
    for i, params in enumerate(settings):
        unweighted = [observed_average_precision(Y, vals[i]) for Y, vals in folds]
        error = np.sqrt(np.var(parts[:, pick] - parts[:, i], axis=1, ddof=1) / N_PARTS)
        difference = [f"{scores[f, pick] - scores[f, i]:+.4f} ({error[f]:.4f})"
                      for f in range(len(folds))]
        spread = np.mean([spread_ratio(vals[i]) for _, vals in folds])
        print(f"| {params['lam2']:g}{'u' if params['normalize_rows'] else ''} | "
              + " ".join(f"{v:.4f}" for v in scores[:, i]) + f" ({scores[:, i].mean():.4f}) | "
              + " ".join(f"{v:.4f}" for v in unweighted) + f" ({np.mean(unweighted):.4f}) | "
              + " ".join(difference) + f" | {spread:.2f} | {test_ap[i]:.4f} |")


def rules(args):
    """Every rule of `RULES` on the cells of ``--store`` (against tuned BR and against
    GLOCALCV's rule, the mean over folds) and of ``--levers`` (against GLOCALCV's only); with
    ``--csv``, every cell's picks too (dataset, rho, split, store, rule, lam2,
    normalize_rows, ap, br_ap; br_ap empty for the exhaustive searches)."""
    paths = dict(_load_cells(args.store, args.datasets, args.rhos))
    for path in sorted(p for d in args.levers or [] for p in Path(d).glob("*.pkl")):
        name, split, rho = path.stem.rsplit("_", 2)
        if (not args.datasets or name in args.datasets) and (
                not args.rhos or float(rho) in args.rhos):
            paths[(name + " (levers)", float(rho), int(split))] = path
    groups, rows = {}, []
    for (name, rho, split), path in sorted(paths.items()):
        picks, br, settings = _cell_rules(path)
        groups.setdefault((name, rho), []).append((picks, br))
        rows += [dict(dataset=name.replace(" (levers)", ""), rho=rho, split=split,
                      store="levers" if path.suffix == ".pkl" else "cells", rule=rule,
                      lam2=settings[pick]["lam2"],
                      normalize_rows=settings[pick]["normalize_rows"], ap=f"{ap:.6f}",
                      br_ap="" if br is None else f"{br:.6f}")
                 for rule, (pick, ap) in picks.items()]
    if args.csv:
        with open(args.csv, "w", newline="") as file:
            writer = csv.DictWriter(file, list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    names = list(RULES)
    print("Test Ap of GLOCALCV()'s pick by each rule minus tuned BR's (BR tuned by "
          f"instance-wise Ap over C in {BR_GRID['C']}), the row-weighted Ap the criterion; "
          "per (dataset, rho): mean over splits [worst split]; (levers): exhaustive searches "
          "of bench_search_levers.py, no BR\n")
    print("| dataset | rho | splits | " + " | ".join(names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    for (name, rho), group in groups.items():
        if group[0][1] is None:
            continue
        br = np.array([b for _, b in group])
        print(f"| {name} | {rho:g} | {len(group)} | " + " | ".join(
            f"{(np.array([r[c][1] for r, _ in group]) - br).mean():+.4f} "
            f"[{(np.array([r[c][1] for r, _ in group]) - br).min():+.4f}]" for c in names)
            + " |")
    print("\nEach rule against GLOCALCV's (the mean over folds): picks changed / splits, test "
          "Ap minus that pick's, mean over splits [worst split]\n")
    print("| dataset | rho | " + " | ".join(names[1:]) + " |")
    print("|---|---|" + "---|" * (len(names) - 1))
    for (name, rho), group in groups.items():
        mean_rule = np.array([r[names[0]][1] for r, _ in group])
        cells_ = []
        for c in names[1:]:
            diff = np.array([r[c][1] for r, _ in group]) - mean_rule
            changed = sum(r[c][0] != r[names[0]][0] for r, _ in group)
            cells_.append(f"{changed}/{len(group)} {diff.mean():+.4f} [{diff.min():+.4f}]")
        print(f"| {name} | {rho:g} | " + " | ".join(cells_) + " |")


SCORINGS = {"two-way": None,  # GLOCALCV's default, observed_two_way_average_precision
            "row-weighted": observed_weighted_average_precision_scorer}


def search(args):
    """``GLOCALCV()`` itself (racing, as a user runs it) on every (dataset, rho, split) of
    ``run``'s protocol, under each criterion of ``--scorings``: the pick, its test Ap (from
    the stored cell's refit when ``--store`` holds the cell, else refitted here) and tuned
    BR's (the stored cell's; empty without it), appended to ``--out`` (a rerun skips the
    rows present)."""
    out = Path(args.out)
    done = set()
    if out.exists():
        done = {(r["dataset"], float(r["rho"]), int(r["split"]), r["scoring"])
                for r in csv.DictReader(out.open())}
    fields = ["dataset", "rho", "split", "scoring", "lam2", "normalize_rows", "ap", "br_ap",
              "search_cpu"]
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", LabelWarning)
        for name in args.datasets:
            for rho, split, X, _, Y, X_test, Y_test in _cells(name, args.rhos, args.splits):
                path = _cell_path(args.store, name, rho, split) if args.store else None
                row = _evaluate_cell(path) if path is not None and path.exists() else None
                for scoring in args.scorings:
                    if (name, rho, split, scoring) in done:
                        continue
                    tic = time.process_time()
                    cv = GLOCALCV(random_state=split, scoring=SCORINGS[scoring],
                                  refit=False).fit(X, Y)
                    seconds = time.process_time() - tic
                    params = cv.best_params_
                    if row is not None:
                        ap = row["test_ap"][row["settings"].index(params)]
                        br = _picks(row, BR_GRID["C"])["instance Ap"][2]
                    else:
                        model = clone(cv._base_estimator(Y.shape[1])).set_params(**params)
                        ap = average_precision(Y_test, model.fit(X, Y).decision_function(
                            X_test))
                        br = None
                    new = not out.exists()
                    with out.open("a", newline="") as file:
                        writer = csv.DictWriter(file, fields)
                        if new:
                            writer.writeheader()
                        writer.writerow(dict(
                            dataset=name, rho=rho, split=split, scoring=scoring,
                            lam2=params["lam2"], normalize_rows=params["normalize_rows"],
                            ap=f"{ap:.6f}", br_ap="" if br is None else f"{br:.6f}",
                            search_cpu=f"{seconds:.1f}"))
                    print(f"{name} rho={rho:g} split={split} {scoring}: {params} "
                          f"{ap:.4f} (BR {'-' if br is None else f'{br:.4f}'}) {seconds:.1f} s",
                          flush=True)


def _racing_inputs(path):
    """Every setting's `glocal.metrics.observed_two_way_average_precision` on each fold of a
    stored cell and on racing's parts of the fold, drawn as ``GLOCALCV(random_state=split)``
    draws them (-inf: a vanished fit); cached beside the cell."""
    cache = path.with_suffix(".racing.npz")
    if cache.exists():
        data = np.load(cache)
        return data["scores"], data["parts"]
    data = np.load(path)
    Y, fold_of, val = data["Y"], data["fold_of"], data["glocal_val"].astype(float)
    folds = np.unique(fold_of)
    split = int(path.stem.rsplit("split", 1)[1])
    seeds = check_random_state(split).randint(np.iinfo(np.int32).max, size=len(folds))
    scores = np.full((len(folds), len(val)), -np.inf)
    parts = np.full((len(folds), len(val), N_PARTS), -np.inf)
    for k in folds:
        Y_k = Y[fold_of == k]
        for i, S in enumerate(v[fold_of == k] for v in val):
            if not np.isnan(S).any():
                scores[k, i] = observed_two_way_average_precision(Y_k, S)
                parts[k, i] = part_scores(lambda rows, S=S: observed_two_way_average_precision(
                    Y_k[rows], S[rows]), len(Y_k), seeds[k])
    np.savez(cache, scores=scores, parts=parts)
    return scores, parts


def _race(scores, parts, plan, first, level=1.0):
    """The pick and the fold fits of a search that races the settings (`contenders` at
    ``level``) after fold ``first`` and every later one but the last; ``first`` = number of
    folds: every setting on every fold."""
    n_folds, n = scores.shape
    kept = alive = np.ones(n, dtype=bool)
    fitted = np.zeros((n_folds, n), dtype=bool)
    for k in range(n_folds):
        fitted[k] = alive
        if first <= k + 1 < n_folds:
            kept = contenders(np.where(fitted[:k + 1], scores[:k + 1], np.nan),
                              np.where(fitted[:k + 1, :, None], parts[:k + 1], np.nan),
                              kept, level)
            alive = _needed(plan, kept)
    mean = np.where(fitted.all(axis=0), scores.mean(axis=0), -np.inf)
    return int(np.argmax(mean)), int(fitted.sum())


def racing(args):
    """Racing replayed on the stored cells of every ``store`` under GLOCALCV's criterion,
    from the folds' own scores and parts (the same picks as the search): after the first
    fold, after the second, and every setting on every fold; test Ap against tuned BR's and
    against every setting on every fold, and the fold fits made."""
    designs = {"after one fold": 1, "after two folds": 2, "every setting on every fold": 3}
    groups = {}
    for store in args.stores:
        for (name, rho, split), path in sorted(_load_cells(store, args.datasets,
                                                          args.rhos).items()):
            row = _evaluate_cell(path)
            scores, parts = _racing_inputs(path)
            plan = _plan(row["settings"], "lam2")
            br = _picks(row, BR_GRID["C"])["instance Ap"][2]
            for design, first in designs.items():
                pick, fits = _race(scores, parts, plan, first)
                groups.setdefault((rho <= 0.1, name, rho, design), []).append(
                    (row["test_ap"][pick] - br, fits))
    print("Racing under GLOCALCV's criterion, replayed on the stored folds: test Ap minus "
          "tuned BR's, mean [worst split]; minus every setting on every fold, mean [worst]; "
          "fold fits (of 24)\n")
    print("| dataset | rho | splits | " + " | ".join(designs) + " |")
    print("|---|---|---|" + "---|" * len(designs))
    keys = sorted({key[:3] for key in groups})
    totals = {}
    for low, name, rho in keys:
        every = np.array([d for d, _ in groups[(low, name, rho, "every setting on every fold")]])
        cells = []
        for design in designs:
            diff = np.array([d for d, _ in groups[(low, name, rho, design)]])
            fits = np.mean([f for _, f in groups[(low, name, rho, design)]])
            cells.append(f"{diff.mean():+.4f} [{diff.min():+.4f}]; {(diff - every).mean():+.4f} "
                         f"[{(diff - every).min():+.4f}]; {fits:.1f}")
            total = totals.setdefault((low, design), [[], [], []])
            total[0] += list(diff - every)
            total[1] += [f for _, f in groups[(low, name, rho, design)]]
            total[2] += list(diff)
        print(f"| {name} | {rho:g} | {len(every)} | " + " | ".join(cells) + " |")
    print("\nAll searches at rho <= 0.1 and at rho >= 0.3: searches; picks other than every "
          "setting on every fold's; their test Ap change, sum [worst]; searches more than 0.02 "
          "below BR; mean fold fits\n")
    for (low, design), (change, fits, diff) in sorted(totals.items()):
        change = np.array(change)
        print(f"rho {'<= 0.1' if low else '>= 0.3'} {design}: {len(change)} searches, "
              f"{np.sum(change != 0)} other picks, {change.sum():+.4f} "
              f"[{change.min():+.4f}], {np.sum(np.array(diff) < -0.02)} below BR by 0.02, "
              f"{np.mean(fits):.1f} fits")


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
    p.add_argument("--br-C", nargs="+", type=float, default=BR_GRID["C"],
                   help="BR's grid, among the values run (default: the library's BR_GRID)")
    p.add_argument("--br-criteria", action="store_true",
                   help="also tune BR by every criterion")
    p.add_argument("--ttest", action="store_true")
    q = sub.add_parser("rules", help="every selection rule of RULES against tuned BR and "
                                     "against the mean over folds")
    q.add_argument("store")
    q.add_argument("--levers", nargs="+", help="directories of bench_search_levers.py "
                                               "collect's pickles")
    q.add_argument("--datasets", nargs="+")
    q.add_argument("--rhos", nargs="+", type=float)
    q.add_argument("--csv", help="write every cell's picks to this CSV file")
    s = sub.add_parser("search", help="GLOCALCV() itself on each cell, under each criterion")
    s.add_argument("--datasets", nargs="+", default=YAHOO)
    s.add_argument("--splits", type=int, default=5)
    s.add_argument("--rhos", nargs="+", type=float, default=[0.1, 0.05])
    s.add_argument("--scorings", nargs="+", choices=list(SCORINGS), default=list(SCORINGS))
    s.add_argument("--store", help="run's cells, for their refits and BR (optional)")
    s.add_argument("--out", required=True, help="CSV file the rows are appended to")
    c = sub.add_parser("racing", help="racing replayed on the stored cells' folds")
    c.add_argument("stores", nargs="+")
    c.add_argument("--datasets", nargs="+")
    c.add_argument("--rhos", nargs="+", type=float)
    o = sub.add_parser("open", help="one cell's settings: fold scores, noise, spread, test Ap")
    o.add_argument("store")
    o.add_argument("dataset")
    o.add_argument("rho", type=float)
    o.add_argument("split", type=int)
    args = parser.parse_args(argv)
    {"run": run, "report": report, "rules": rules,
     "open": open_cell, "search": search, "racing": racing}[args.command](args)


if __name__ == "__main__":
    main()
