"""Designs of GLOCALCV's search evaluated offline from one exhaustive search per cell, then the
default search measured on the same cells.

``collect``: per (dataset, split, rho), on `_common.observed_split` (a 60/40 split, a fraction
rho of each label's training entries observed, 3 shuffled folds, all seeded by the split;
``synthetic:N,D,L`` names the library's generator), the exhaustive search
``GLOCALCV(cv=folds, racing=None, random_state=split)`` with every fit's validation scores,
CPU seconds and rounds kept, then every setting that some design below picks refitted on all
training rows from GLOCAL's own start (test Ap, CPU seconds), from its model of the last
fold at tol 1e-3 and 1e-2 (``refit_start="fold"``), and its fold models' scores averaged.
One pickle per cell in ``--out``.

``evaluate``: from those pickles (of one or more directories), the pick, CPU seconds and test
Ap of each design against the exhaustive search's, per (dataset, rho) over the splits. The
settings are compared by the search's criterion,
`glocal.metrics.observed_weighted_average_precision`, recomputed from the stored validation
scores. The designs: one held-out third (the first fold only), two of the three folds,
``lam2`` on raw rows only, ``normalize_rows`` searched at the chosen ``lam2`` only, racing at
1, 2 and 3 standard errors (`glocal.model_selection._racing.contenders` on the fold scores
the exhaustive search made, each fold fitting the kept settings and those their fits start
from), and the exhaustive search with its settings compared by the unweighted
`glocal.metrics.observed_average_precision` instead; each with every refit. CPU: the fits
made plus the refit, over the exhaustive search's.

``measure``: the default ``GLOCALCV()`` on the same cells, for real: CPU seconds, fits made,
pick and test Ap, with the exhaustive search's pick and Ap from the pickles.

    GLOCAL_DATA=/path/to/data python benchmarks/bench_search_levers.py collect \\
        --datasets birds genbase medical cal500 --splits 0 1 2 --rhos 0.3 0.7 1 --out DIR
    python benchmarks/bench_search_levers.py evaluate DIR [DIR ...]
    GLOCAL_DATA=/path/to/data python benchmarks/bench_search_levers.py measure \\
        --datasets birds genbase medical cal500 --splits 0 1 2 --rhos 0.3 0.7 1 --out DIR
"""

import argparse
import glob
import os
import pickle
import time
import warnings
from collections import defaultdict

import numpy as np
from sklearn.base import clone
from threadpoolctl import threadpool_limits

from glocal import GLOCALCV
from glocal.metrics import (average_precision, observed_average_precision,
                            observed_weighted_average_precision)
from glocal.model_selection._plan import _needed, _plan
from glocal.model_selection._racing import N_PARTS, contenders, part_scores
from _common import DATA_DIR, observed_split

REFITS = {"scratch": "cold", "fold 1e-3": "fold_0.001", "fold 1e-2": "fold_0.01",
          "fold average": "average"}


class _Recorder:
    """A scorer that keeps every fit's validation scores, labels, CPU seconds and rounds, and
    scores it by the search's default criterion."""

    def __init__(self):
        self.fits = []
        self.last = time.process_time()

    def __call__(self, model, X, Y):
        cpu = time.process_time() - self.last
        scores = model.decision_function(X)
        self.fits.append(dict(params=_key(model.get_params()), cpu=cpu, scores=scores, Y=Y,
                              model=model, rounds=(model.n_init_iter_, model.n_iter_)))
        self.last = time.process_time()
        return observed_weighted_average_precision(Y, scores)


def _key(params):
    return params["lam2"], params["normalize_rows"]


def _cell_path(out, name, split, rho):
    return os.path.join(out, f"{name.replace(':', '_')}_{split}_{rho}.pkl")


def collect(args):
    os.makedirs(args.out, exist_ok=True)
    with threadpool_limits(1):
        for name in args.datasets:
            for split in args.splits:
                for rho in args.rhos:
                    path = _cell_path(args.out, name, split, rho)
                    if not os.path.exists(path):
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            cell = _collect_cell(name, split, rho, args.data_dir)
                        with open(path, "wb") as f:
                            pickle.dump(cell, f)


def _collect_cell(name, split, rho, data_dir):
    """One cell's exhaustive search, every fit recorded, and the refits of the settings some
    design picks (None for the others: no design reads them)."""
    X, X_test, Y, Y_test, folds = observed_split(name, data_dir, split, rho)
    folds = list(folds.split(X))
    recorder = _Recorder()
    search = GLOCALCV(cv=folds, random_state=split, scoring=recorder, refit=False,
                      racing=None)
    recorder.last = time.process_time()
    search.fit(X, Y)
    candidates = search.cv_results_["params"]
    n = len(candidates)
    if len(recorder.fits) != n * len(folds):  # a vanished fit is not scored
        raise RuntimeError(f"{name} split {split} rho {rho}: {len(recorder.fits)} fits "
                           f"scored of {n * len(folds)}")
    cell = _scored(dict(name=name, split=split, rho=rho, params=candidates,
                        fits=[recorder.fits[f * n:(f + 1) * n] for f in range(len(folds))]))
    picks = {pick for pick, _, _ in _designs(cell).values()}
    base = search._base_estimator(Y.shape[1])
    cell["refits"] = [_refits(base, params, cell["fits"], X, Y, X_test, Y_test)
                      if j in picks else None for j, params in enumerate(candidates)]
    for fold in cell["fits"]:
        for fit in fold:
            del fit["model"]
    best = cell["refits"][search.best_index_]
    print(name, split, rho, _key(search.best_params_), f"{len(picks)} settings refitted",
          " ".join(f"{refit} {best[key + '_cpu']:.2f} s Ap {best[key + '_ap']:.4f}"
                   for refit, key in REFITS.items() if key != "average"), flush=True)
    return cell


def _refits(base, params, fits, X, Y, X_test, Y_test):
    """One setting's refits on all training rows: from scratch, from its last fold's model at
    tol 1e-3 and 1e-2, and its fold models' scores averaged."""
    models = [fit["model"] for fold in fits for fit in fold if fit["params"] == _key(params)]
    row = {"average_ap": average_precision(Y_test, np.mean(
        [model.decision_function(X_test) for model in models], axis=0)), "average_cpu": 0.0}
    for key, tol, start in (("cold", None, None), ("fold_0.001", 1e-3, models[-1]),
                            ("fold_0.01", 1e-2, models[-1])):
        model = clone(base).set_params(**params)
        if tol is not None:
            model.set_params(tol=tol)
        tic = time.process_time()
        model.fit(X, Y, init=start)
        row[f"{key}_cpu"] = time.process_time() - tic
        row[f"{key}_ap"] = average_precision(Y_test, model.decision_function(X_test))
        row[f"{key}_rounds"] = (model.n_init_iter_, model.n_iter_)
    return row


def _load(path):
    with open(path, "rb") as f:
        return _scored(pickle.load(f))


def _scored(cell):
    """``cell`` with every fit's validation scores scored by the search's criterion
    (``score``) and by the unweighted observed Ap (``unweighted``)."""
    for fold in cell["fits"]:
        for fit in fold:
            fit["score"] = observed_weighted_average_precision(fit["Y"], fit["scores"])
            fit["unweighted"] = observed_average_precision(fit["Y"], fit["scores"])
    return cell


def _table(cell, criterion="score"):
    """Candidates (lam2, normalize_rows), fold scores by ``criterion`` and fold CPU,
    candidates in grid order."""
    candidates = [_key(params) for params in cell["params"]]
    scores, cpu = (np.zeros((len(cell["fits"]), len(candidates))) for _ in range(2))
    for f, fold in enumerate(cell["fits"]):
        for fit in fold:
            j = candidates.index(fit["params"])
            scores[f, j], cpu[f, j] = fit[criterion], fit["cpu"]
    return candidates, scores, cpu


def _fold_parts(cell, f, alive):
    candidates = [_key(params) for params in cell["params"]]
    parts = np.full((len(candidates), N_PARTS), np.nan)
    for fit in cell["fits"][f]:
        j = candidates.index(fit["params"])
        if alive[j]:
            parts[j] = part_scores(lambda rows, fit=fit: observed_weighted_average_precision(
                fit["Y"][rows], fit["scores"][rows]), len(fit["Y"]), f)
    return parts


def _race(cell, level):
    """Racing as `GLOCALCV` does it, on the fold scores of the exhaustive search (a fold fits
    the kept settings and the settings their fits start from, `_needed`, as that search
    fitted them)."""
    candidates, scores, cpu = _table(cell)
    plan = _plan([dict(lam2=lam2, normalize_rows=rows) for lam2, rows in candidates], "lam2")
    kept = fitted = np.ones(len(candidates), dtype=bool)
    done, parts, cost, made = [], [], 0.0, []
    for f in range(len(scores)):
        cost += cpu[f, fitted].sum()
        made.append(fitted)
        done.append(np.where(fitted, scores[f], np.nan))
        if f < len(scores) - 1:
            parts.append(_fold_parts(cell, f, kept))
            kept = contenders(np.array(done), np.array(parts), kept, level)
            fitted = _needed(plan, kept)
    mean = np.where(np.all(made, axis=0), np.mean(done, axis=0), -np.inf)
    return int(np.argmax(mean)), cost, int(np.sum(made))


def _designs(cell):
    """Design name -> (pick, CPU of its fold fits, fits made)."""
    candidates, scores, cpu = _table(cell)
    n = len(candidates)
    raw = [j for j, c in enumerate(candidates) if not c[1]]
    lam2 = candidates[raw[int(np.argmax(scores.mean(0)[raw]))]][0]
    pair = [candidates.index((lam2, False)), candidates.index((lam2, True))]
    unit_head = candidates.index((max(c[0] for c in candidates), True))
    designs = {
        "exhaustive": (int(np.argmax(scores.mean(0))), cpu.sum(), 3 * n),
        "one held-out third": (int(np.argmax(scores[0])), cpu[0].sum(), n),
        "two of 3 folds": (int(np.argmax(scores[:2].mean(0))), cpu[:2].sum(), 2 * n),
        "lam2 on raw rows only": (raw[int(np.argmax(scores.mean(0)[raw]))],
                                  cpu[:, raw].sum(), 3 * len(raw)),
        # The unit-norm setting at the chosen lam2 is charged as a cold fit (its path's head).
        "normalize_rows at the chosen lam2": (pair[int(np.argmax(scores.mean(0)[pair]))],
                                              cpu[:, raw].sum() + cpu[:, unit_head].sum(),
                                              3 * (len(raw) + 1))}
    for level in (1.0, 2.0, 3.0):
        designs[f"racing {level:g}"] = _race(cell, level)
    # The same exhaustive search, its settings compared by the unweighted observed Ap.
    designs["unweighted criterion"] = (int(np.argmax(_table(cell, "unweighted")[1].mean(0))),
                                       cpu.sum(), 3 * n)
    return designs


def evaluate(args):
    cells = [_load(path) for directory in args.directories
             for path in sorted(glob.glob(os.path.join(directory, "*.pkl")))]
    rows = defaultdict(list)
    for cell in cells:
        designs = _designs(cell)
        pick, cost, _ = designs["exhaustive"]
        reference = cell["refits"][pick]
        total = cost + reference["cold_cpu"]
        for design, (pick, cost, n_fits) in designs.items():
            refit = cell["refits"][pick]
            for name, key in REFITS.items():
                rows[design, name, cell["name"], cell["rho"]].append(
                    (refit[f"{key}_ap"] - reference["cold_ap"],
                     (cost + refit[f"{key}_cpu"]) / total, pick == designs["exhaustive"][0],
                     n_fits))
    print("design refit dataset rho splits mean_dAp min_dAp max_dAp cpu_ratio same_pick fits")
    for (design, refit, name, rho), values in sorted(rows.items()):
        v = np.array(values, dtype=float)
        print(f"{design.replace(' ', '_')} {refit.replace(' ', '_')} {name} {rho} {len(v)} "
              f"{v[:, 0].mean():+.4f} {v[:, 0].min():+.4f} {v[:, 0].max():+.4f} "
              f"{v[:, 1].mean():.2f} {v[:, 2].mean():.2f} {v[:, 3].mean():.1f}")
    print("design refit cells_within_0.002 cells worst_mean_dAp mean_cpu_ratio min max")
    summary = defaultdict(list)
    for (design, refit, _, _), values in rows.items():
        v = np.array(values, dtype=float)
        summary[design, refit].append((v[:, 0].mean(), v[:, 1].mean()))
    for (design, refit), values in sorted(summary.items()):
        v = np.array(values)
        print(f"{design.replace(' ', '_')} {refit.replace(' ', '_')} "
              f"{np.sum(np.abs(v[:, 0]) <= 0.002)} {len(v)} "
              f"{v[np.argmax(np.abs(v[:, 0])), 0]:+.4f} {v[:, 1].mean():.2f} "
              f"{v[:, 1].min():.2f} {v[:, 1].max():.2f}")


def measure(args):
    print("dataset split rho cpu_s fits pick Ap exhaustive_pick exhaustive_Ap dAp")
    with threadpool_limits(1):
        for name in args.datasets:
            for split in args.splits:
                for rho in args.rhos:
                    X, X_test, Y, Y_test, folds = observed_split(name, args.data_dir, split, rho)
                    search = GLOCALCV(cv=list(folds.split(X)), random_state=split)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        tic = time.process_time()
                        search.fit(X, Y)
                        cpu = time.process_time() - tic
                    results = search.cv_results_
                    fits = sum(int(np.sum(~np.isnan(results[f"split{i}_test_score"])))
                               for i in range(search.n_splits_))
                    ap = average_precision(Y_test, search.decision_function(X_test))
                    line = (f"{name} {split} {rho} {cpu:.1f} {fits} "
                            f"{_key(search.best_params_)} {ap:.4f}")
                    path = _cell_path(args.out, name, split, rho)
                    if os.path.exists(path):
                        cell = _load(path)
                        pick = _designs(cell)["exhaustive"][0]
                        reference = cell["refits"][pick]["cold_ap"]
                        line += (f" {_key(cell['params'][pick])} {reference:.4f} "
                                 f"{ap - reference:+.4f}")
                    print(line.replace(", ", ","), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name in ("collect", "measure"):
        command = commands.add_parser(name)
        command.add_argument("--datasets", nargs="+", required=True)
        command.add_argument("--splits", nargs="+", type=int, default=[0, 1, 2])
        command.add_argument("--rhos", nargs="+", type=float, default=[0.3, 0.7, 1.0])
        command.add_argument("--out", required=True)
        command.add_argument("--data-dir", default=DATA_DIR)
    commands.add_parser("evaluate").add_argument("directories", nargs="+")
    args = parser.parse_args()
    {"collect": collect, "evaluate": evaluate, "measure": measure}[args.command](args)


if __name__ == "__main__":
    main()
