"""What the correlation terms add to the recommended model: an ablation tuned by GLOCALCV.

The model is ``GLOCALCV()``'s (squared hinge, a bias per label, lam_v = 0,
n_latent = min(l, 100)). On each (dataset, rho, split), with the splits and hidden labels of
``benchmarks/bench_missing_quality.py`` (`glocal.protocol.random_splits` seeded 0, the
training labels hidden by `glocal.protocol.sample_observed` seeded by the split), every
variant is tuned by 3-fold cross-validation on the observed training entries (the same folds
for all), refitted on the training part and scored by the test Ap:

* ``none``: lam3 = lam4 = 0, lam2 and ``normalize_rows`` searched as ``GLOCALCV()`` searches
  them (``DEFAULT_PARAM_GRID``: 8 settings on two warm-started lam2 paths);
* then, at that lam2 and ``normalize_rows``, each variant's weight along one warm-started
  path over ``WEIGHTS`` (or ``--weights``; strong to weak, 0 last, so that CV can always
  choose "none"):

  - ``global``: the paper's term, lam3 on the path, lam4 = 0;
  - ``local``: the paper's term, lam4 on the path, lam3 = 0;
  - ``both``: the paper's term, lam4 on the path at the lam3 chosen for ``global``;
  - ``centered-global``, ``centered``: the same as ``global`` and ``both`` with
    ``correlation="centered"`` (Laplacians of the scores' deviations from their means);
  - ``asymmetric-global``, ``asymmetric``: the same with ``correlation="asymmetric"``
    (directed implications between labels).

A variant whose path chooses weight 0 is the model it started from (the same objective and
the same start), whose test Ap it takes without a second refit; ``both`` at lam3 = 0 is
``local``, whose row it takes. Each row records the chosen
weights, the mean CV score along the path, the test Ap and the CPU seconds of the variant's
own search and refit (``none``'s: the lam2 search and refit; every other variant also needs
``none``'s search, and ``both``, ``centered`` and ``asymmetric`` their ``-global`` path).
One process, one BLAS thread: CPU seconds measure the work. Rows are appended as they are
made, so an interrupted run keeps them and a rerun skips them.

``agreement`` measures what the learned correlations say: on split 0 with every label
observed, the recommended model (lam2 = 4, raw rows) is fitted with each correlation term at
lam3 = lam4 = ``--weights``, and its ``global_correlation_`` (and every group's
``local_correlations_``) is compared with the Pearson correlation of the training labels
(within the group's rows for the local ones), over the pairs of labels where that is defined:
Spearman's rank correlation, the fraction of pairs of the same sign, and the fraction of
learned values beyond 0.99 in absolute value. A directed weight A[i, j] counts as positive
when above the uniform 1 / (l - 1); it is also compared with P(j relevant | i relevant).

Usage::

    GLOCAL_DATA=/path/to/data python benchmarks/bench_correlations.py run \\
        --datasets emotions scene --splits 5 --rhos 0.3 1 --out correlations.csv
    python benchmarks/bench_correlations.py report correlations.csv
    python benchmarks/bench_correlations.py agreement --datasets emotions scene \\
        --out agreement.csv
"""

import argparse
import csv
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR  # noqa: E402

from glocal import GLOCAL, GLOCALCV  # noqa: E402
from glocal.datasets import load_dataset  # noqa: E402
from glocal.metrics import average_precision  # noqa: E402
from glocal.model_selection import (DEFAULT_ESTIMATOR_PARAMS, DEFAULT_PARAM_GRID,  # noqa: E402
                                    MAX_DEFAULT_LATENT)
from glocal.protocol import (drop_unlabeled_rows, paired_ttest, random_splits,  # noqa: E402
                             sample_observed)

DESIGN_DATASETS = ["birds", "cal500", "emotions", "genbase", "medical", "scene", "yeast"]
PAPER_DATASETS = ["arts", "business", "computers", "education", "entertainment", "health",
                  "enron", "image"]
WEIGHTS = [1e3, 10.0, 0.1, 1e-3, 0.0]
# variant -> (correlation, weight on the path, variant whose lam3 it keeps or None: the other
# weight is 0). In this order: a variant comes after the one whose lam3 it keeps.
VARIANTS = {
    "global": ("laplacian", "lam3", None),
    "local": ("laplacian", "lam4", None),
    "both": ("laplacian", "lam4", "global"),
    "centered-global": ("centered", "lam3", None),
    "centered": ("centered", "lam4", "centered-global"),
    "asymmetric-global": ("asymmetric", "lam3", None),
    "asymmetric": ("asymmetric", "lam4", "asymmetric-global"),
}
FIELDS = ["dataset", "rho", "split", "variant", "params", "cv_score", "path", "ap", "seconds",
          "capped"]
AGREEMENT_FIELDS = ["dataset", "correlation", "weight", "scope", "pairs", "spearman",
                    "same_sign", "saturated", "spearman_implication", "seconds"]
OTHER_DATASETS = ["bibtex", "delicious", "rcv1subset1"]
# The directed term's passes compare every pair of labels on every sample (n l^2): above this
# many (delicious: 9e9) its fits take hours, and ``agreement`` leaves them out.
MAX_PAIRS = 2e8
CV = 3


def _load(name):
    data = load_dataset(name, DATA_DIR)
    Y = data.Y.toarray() if sp.issparse(data.Y) else np.asarray(data.Y, dtype=float)
    return data.X, Y


def _model(n_labels, seed, **params):
    return GLOCAL(n_latent=min(n_labels, MAX_DEFAULT_LATENT), random_state=seed,
                  **DEFAULT_ESTIMATOR_PARAMS, **params)


def _search(estimator, grid, path_param, X, Y, seed):
    """A GLOCALCV search without its refit: the best setting, its mean CV score and the mean
    CV score of every setting."""
    search = GLOCALCV(estimator, grid, path_param=path_param, cv=CV, refit=False,
                      random_state=seed).fit(X, Y)
    scores = {json.dumps(params, sort_keys=True): round(float(score), 6) for params, score in
              zip(search.cv_results_["params"], search.cv_results_["mean_test_score"])}
    return search.best_params_, search.best_score_, scores


def _variant(name, done, base_params, n_labels, seed, X, Y, X_test, Y_test, weights):
    """One variant's search and refit: its row (without dataset, rho, split)."""
    if name == "none":
        estimator = _model(n_labels, seed, lam3=0.0, lam4=0.0)
        tic = time.process_time()
        best, cv_score, path = _search(estimator, DEFAULT_PARAM_GRID, "lam2", X, Y, seed)
        model = clone(estimator).set_params(**best).fit(X, Y)
        ap = average_precision(Y_test, model.decision_function(X_test))
        params = {**best, "lam3": 0.0, "lam4": 0.0}
        return dict(params=params, cv_score=cv_score, path=path, ap=ap,
                    seconds=time.process_time() - tic)
    correlation, weight, keeps = VARIANTS[name]
    source = done[keeps] if keeps else done["none"]
    lam3 = source["params"]["lam3"] if keeps else 0.0
    same = [other for other, spec in VARIANTS.items()
            if spec == (correlation, weight, None) and other in done]
    if lam3 == 0 and same:  # the same search as a variant already run: its result
        return dict(done[same[0]], seconds=0.0)
    fixed = dict(base_params, correlation=correlation, lam3=lam3, lam4=0.0)
    estimator = _model(n_labels, seed, **fixed)
    tic = time.process_time()
    best, cv_score, path = _search(estimator, {weight: weights}, weight, X, Y, seed)
    params = {**fixed, **best}
    if best[weight] == 0:  # the source model itself: same objective, same start
        ap = source["ap"]
    else:
        model = clone(estimator).set_params(**best).fit(X, Y)
        ap = average_precision(Y_test, model.decision_function(X_test))
    return dict(params=params, cv_score=cv_score, path=path, ap=ap,
                seconds=time.process_time() - tic)


def _done(path):
    """The rows of the CSV so far, by (dataset, rho, split, variant)."""
    if not Path(path).exists():
        return {}
    with open(path, newline="") as f:
        return {(r["dataset"], r["rho"], r["split"], r["variant"]): r for r in csv.DictReader(f)}


def _parsed(row):
    return dict(params=json.loads(row["params"]), ap=float(row["ap"]),
                cv_score=float(row["cv_score"]), path=json.loads(row["path"]))


def run(args):
    """Every (rho, dataset, split, variant) not yet in the CSV, rho outermost."""
    rows = _done(args.out)
    new_file = not Path(args.out).exists()
    variants = ["none"] + [v for v in VARIANTS if v in args.variants]
    with open(args.out, "a", newline="") as f, threadpool_limits(1):
        writer = csv.DictWriter(f, FIELDS)
        if new_file:
            writer.writeheader()
        for rho in args.rhos:
            for name in args.datasets:
                X, Y = _load(name)
                for split, (train, test) in enumerate(
                        random_splits(X.shape[0], args.splits, random_state=0)):
                    if split < args.first_split:
                        continue
                    X_test, Y_test = drop_unlabeled_rows(X[test], Y[test])
                    Y_train = (Y[train] if rho == 1 else
                               sample_observed(Y[train], rho, random_state=split))
                    key = (name, str(rho), str(split))
                    done = {v: _parsed(rows[key + (v,)]) for v in variants
                            if key + (v,) in rows}
                    for variant in variants:
                        if variant in done:
                            continue
                        base = {k: done["none"]["params"][k] for k in DEFAULT_PARAM_GRID
                                } if "none" in done else None
                        with warnings.catch_warnings(record=True) as caught:
                            warnings.simplefilter("ignore")
                            warnings.simplefilter("always", ConvergenceWarning)
                            result = _variant(variant, done, base, Y.shape[1], split,
                                              X[train], Y_train, X_test, Y_test,
                                              args.weights)
                        done[variant] = result
                        row = dict(dataset=name, rho=rho, split=split, variant=variant,
                                   params=json.dumps(result["params"], sort_keys=True),
                                   cv_score=f"{result['cv_score']:.6f}",
                                   path=json.dumps(result["path"], sort_keys=True),
                                   ap=f"{result['ap']:.6f}",
                                   seconds=f"{result['seconds']:.2f}",
                                   capped=sum(issubclass(w.category, ConvergenceWarning)
                                              for w in caught))
                        writer.writerow(row)
                        f.flush()
                        print(" ".join(str(row[k]) for k in ("dataset", "rho", "split",
                                                              "variant", "ap", "seconds")),
                              json.dumps({k: v for k, v in result["params"].items()
                                          if k in ("lam2", "normalize_rows", "lam3",
                                                   "lam4")}), flush=True)


def read(paths):
    """{(dataset, rho): {variant: {split: row}}} from CSVs of `run`."""
    cells = {}
    for path in paths:
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                cells.setdefault((row["dataset"], float(row["rho"])), {}).setdefault(
                    row["variant"], {})[int(row["split"])] = row
    return cells


def report(args):
    cells = read(args.csv)
    variants = ["none"] + list(VARIANTS)
    print("Test Ap, mean over splits (a variant not run on all of none's splits: over "
          "its own); mark: paired t-test against none at 95% (+ better, - worse)\n")
    print("| dataset | rho | splits | " + " | ".join(variants) + " |")
    print("|---|---|---|" + "---|" * len(variants))
    for (name, rho), by_variant in sorted(cells.items()):
        none = by_variant.get("none", {})
        cells_out = []
        for variant in variants:
            runs = by_variant.get(variant, {})
            common = sorted(set(runs) & set(none))
            if not common:
                cells_out.append("")
                continue
            a = [float(runs[s]["ap"]) for s in common]
            b = [float(none[s]["ap"]) for s in common]
            mark = {1: "+", -1: "-", 0: ""}[paired_ttest(a, b)] if variant != "none" else ""
            fewer = f" ({len(common)} splits)" if len(common) < len(none) else ""
            cells_out.append(f"{np.mean(a):.4f}{mark}{fewer}")
        print(f"| {name} | {rho:g} | {len(none)} | " + " | ".join(cells_out) + " |")


def _pairs(learned, pearson, directed):
    """Spearman, same sign and saturation of learned against empirical correlations over
    the pairs where the Pearson correlation is defined (i < j, or i != j when directed)."""
    from scipy.stats import spearmanr

    l = pearson.shape[0]
    mask = ~np.eye(l, dtype=bool) if directed else np.triu(np.ones((l, l), dtype=bool), 1)
    mask &= np.isfinite(pearson)
    a, b = learned[mask], pearson[mask]
    if a.size < 3:
        return a.size, np.nan, np.nan, np.nan
    positive = a > 1.0 / (l - 1) if directed else a > 0
    same = np.mean(positive == (b > 0))
    saturated = np.nan if directed else np.mean(np.abs(a) > 0.99)
    return a.size, spearmanr(a, b)[0], same, saturated


def _pearson(Y):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.corrcoef(Y.T)


def _implication(Y):
    """P(j relevant | i relevant), NaN for a label i without positives."""
    counts = Y.T @ Y
    with np.errstate(invalid="ignore", divide="ignore"):
        return counts / np.diag(counts)[:, None]


def agreement(args):
    """The learned correlations against the training labels' (see the module)."""
    from scipy.stats import spearmanr

    new_file = not Path(args.out).exists()
    done = set()
    if not new_file:
        with open(args.out, newline="") as f:
            done = {(r["dataset"], r["correlation"], r["weight"]) for r in csv.DictReader(f)}
    with open(args.out, "a", newline="") as f, threadpool_limits(1):
        writer = csv.DictWriter(f, AGREEMENT_FIELDS)
        if new_file:
            writer.writeheader()
        for name in args.datasets:
            X, Y = _load(name)
            train = random_splits(X.shape[0], 1, random_state=0)[0][0]
            X, Y = X[train], Y[train]
            for correlation in args.correlations:
                for weight in args.weights:
                    if (name, correlation, str(weight)) in done:
                        continue
                    pairs = X.shape[0] * Y.shape[1] ** 2
                    if correlation == "asymmetric" and pairs > MAX_PAIRS:
                        print(f"{name} {correlation}: not run, {pairs:.2g} pairs of labels "
                              f"on the samples per pass (more than {MAX_PAIRS:.0e})",
                              flush=True)
                        continue
                    model = _model(Y.shape[1], 0, lam2=4.0, lam3=weight, lam4=weight,
                                   correlation=correlation)
                    tic = time.process_time()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        model.fit(X, Y)
                    seconds = time.process_time() - tic
                    directed = correlation == "asymmetric"
                    scopes = [("global", model.global_correlation_, Y)]
                    scopes += [(f"group {m + 1}", local, Y[model.groups_ == m])
                               for m, local in enumerate(model.local_correlations_)]
                    for scope, learned, labels in scopes:
                        # A correlation left undefined (a group of one row, a constant
                        # label) is NaN, and left out without a warning.
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            pairs, rank, same, saturated = _pairs(learned, _pearson(labels),
                                                                  directed)
                            implied = np.nan
                            if directed:
                                target = _implication(labels)
                                valid = ~np.eye(len(target), dtype=bool) & np.isfinite(target)
                                implied = spearmanr(learned[valid], target[valid])[0]
                        row = dict(dataset=name, correlation=correlation, weight=weight,
                                   scope=scope, pairs=pairs, spearman=f"{rank:.4f}",
                                   same_sign=f"{same:.4f}", saturated=f"{saturated:.4f}",
                                   spearman_implication=f"{implied:.4f}",
                                   seconds=f"{seconds:.2f}")
                        writer.writerow(row)
                        f.flush()
                        if scope == "global":
                            print(" ".join(str(row[k]) for k in AGREEMENT_FIELDS), flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run")
    r.add_argument("--datasets", nargs="+", default=DESIGN_DATASETS)
    r.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    r.add_argument("--splits", type=int, default=10)
    r.add_argument("--first-split", type=int, default=0)
    r.add_argument("--rhos", nargs="+", type=float, default=[0.3, 0.7, 1.0])
    r.add_argument("--weights", nargs="+", type=float, default=WEIGHTS,
                   help="the weights of every variant's path (0 is added)")
    r.add_argument("--out", default="correlations.csv")
    p = sub.add_parser("report")
    p.add_argument("csv", nargs="+")
    a = sub.add_parser("agreement")
    a.add_argument("--datasets", nargs="+",
                   default=DESIGN_DATASETS + PAPER_DATASETS + OTHER_DATASETS)
    a.add_argument("--correlations", nargs="+", default=["laplacian", "centered", "asymmetric"])
    a.add_argument("--weights", nargs="+", type=float, default=[1e-3, 1.0])
    a.add_argument("--out", default="agreement.csv")
    args = parser.parse_args(argv)
    if args.command == "run":
        args.weights = sorted(set(args.weights) | {0.0}, reverse=True)
    {"run": run, "report": report, "agreement": agreement}[args.command](args)


if __name__ == "__main__":
    main()
