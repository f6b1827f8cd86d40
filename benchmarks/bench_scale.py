"""GLOCAL's fit time at scale, as ratios against anchors fitted in the same process.

One BLAS thread throughout; times are medians of ``--repeats`` fits, in CPU seconds of the
process (every method runs on one thread, so CPU time is its work; on a machine shared with
other jobs, wall-clock seconds mostly measure the load). Sections (``--sections``, default
all):

ratio    Real data (``--datasets``, training part of one 60/40 split) and a synthetic
         sparse text-like set (n = 3600, d = 50,000, l = 101, 0.15% non-zeros). GLOCAL at
         its defaults on the observed entries at rho = 1 and rho = 0.3, against BR(C=0.1)
         on all labels of the same rows. The objective GLOCAL reaches is compared with the
         old solver's setting (unaccelerated basic-model initialisation, the lever
         ``init_acceleration=0``).
scaling  Dense Gaussian data, n in ``--sizes``, d = 100, l = 20: GLOCAL against
         scikit-learn's multi-output ``Ridge``; the log-log slope of fit time against n,
         for the whole fit and for the solver alone (the same fit given the groups it found);
         and the same fit with every iteration on the samples (the lever
         ``use_moments=False``), with the relative difference of the objectives reached.
memory   Peak memory traced (tracemalloc) during one GLOCAL fit, against the size of X.
strong   Enron with lam3 = 1e3 or lam4 = 1e3, and scene with lam4 = 1e4, against the
         default weights: each fit directly and by a path of warm-started fits from the
         default weights (weights x10 per fit); on Enron, lam3 = 1e3 without the Z block's
         preconditioner, and the first three outer iterations at lam4 = 1e3 with the W
         block by trust regions, against the default choices.
losses   One fit of the missing-label design of the documentation's missing-labels guide (the squared
         hinge, ``fit_intercept=True, lam_v=0, n_latent = min(l, 100), lam2=4``) on the
         observed entries at rho = 0.7, against BR(C=0.1) on the same observed entries, and
         against the same GLOCAL with the paper's squared loss.

    python benchmarks/bench_scale.py [--sections ratio,scaling,memory,strong,losses]
        [--datasets arts,enron,bibtex,delicious,rcv1subset1,sparse50k] [--rhos 1,0.3]
        [--sizes 1e4,1e5,1e6] [--loss-datasets arts,enron,bibtex] [--repeats 1] [--data-dir DIR]
"""

import argparse
import tracemalloc
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Ridge
from threadpoolctl import threadpool_limits

from glocal import GLOCAL
from glocal.baselines import BR
from glocal.protocol import sample_observed
from _common import DATA_DIR, paper_split, sparse_text_data, timed_fit


def dense_data(n, d=100, l=20, seed=0):
    """Gaussian features, labels from a noisy linear model (20% positives per label)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    scores = X @ rng.standard_normal((d, l)) / np.sqrt(d) + 0.5 * rng.standard_normal((n, l))
    return X, (scores > np.quantile(scores, 0.8, axis=0)).astype(float)


def nbytes(X):
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes if sp.issparse(X) else X.nbytes


def training_data(name, data_dir, seed):
    if name == "sparse50k":
        return sparse_text_data(seed=seed)
    X, _, Y, _ = paper_split(name, data_dir, seed)
    return X, np.asarray(Y.toarray() if sp.issparse(Y) else Y, dtype=float)


def ratio_section(args):
    print("\n## GLOCAL / BR (GLOCAL on the observed entries, BR on all labels of the rows)")
    print(f"{'data':<12}{'rho':>5}{'n':>7}{'d':>7}{'l':>5}{'GLOCAL s':>10}{'BR s':>8}"
          f"{'ratio':>7}{'init':>6}{'outer':>6}{'capped':>7}{'objective':>14}"
          f"{'vs old':>10}")
    for name in args.datasets.split(","):
        X, Y = training_data(name, args.data_dir, args.seed)
        br_time = timed_fit(lambda: BR(C=0.1), X, Y, args.repeats)[0]
        for rho in (float(r) for r in args.rhos.split(",")):
            observed = Y if rho == 1 else sample_observed(Y, rho, random_state=args.seed)
            seconds, model, capped = timed_fit(lambda: GLOCAL(random_state=args.seed),
                                               X, observed, args.repeats)
            old = GLOCAL(random_state=args.seed,
                         solver_options={"_levers": {"init_acceleration": 0}})
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                old.fit(X, observed)
            value, old_value = model.objective_history_[-1], old.objective_history_[-1]
            print(f"{name:<12}{rho:>5g}{X.shape[0]:>7}{X.shape[1]:>7}{Y.shape[1]:>5}"
                  f"{seconds:>10.2f}{br_time:>8.2f}{seconds / br_time:>7.2f}"
                  f"{model.n_init_iter_:>6}{model.n_iter_:>6}{'yes' if capped else 'no':>7}"
                  f"{value:>14.6g}{(value - old_value) / old_value:>10.1e}", flush=True)


def scaling_section(args):
    print("\n## Scaling in n: dense Gaussian X (d = 100, l = 20) against multi-output Ridge")
    print(f"{'n':>9}{'GLOCAL s':>10}{'solver s':>10}{'Ridge s':>9}{'ratio':>7}"
          f"{'solver/Ridge':>13}{'init':>6}{'outer':>6}{'capped':>7}{'on samples s':>13}"
          f"{'vs samples':>11}")
    sizes, totals, solver_times = [], [], []
    for n in (int(float(s)) for s in args.sizes.split(",")):
        X, Y = dense_data(n, seed=args.seed)
        ridge_time = timed_fit(lambda: Ridge(alpha=1.0), X, Y, args.repeats)[0]
        seconds, model, capped = timed_fit(lambda: GLOCAL(random_state=args.seed), X, Y,
                                           args.repeats)
        # The solver alone: the same fit given the groups it found (fit_times_ is wall-clock).
        solver = timed_fit(lambda: GLOCAL(random_state=args.seed), X, Y, args.repeats,
                           groups=model.groups_)[0]
        # The same fit with every iteration on the samples (no second moments), for scale.
        on_samples, samples_model, _ = timed_fit(
            lambda: GLOCAL(random_state=args.seed,
                           solver_options={"_levers": {"use_moments": False}}),
            X, Y, args.repeats)
        value, samples_value = model.objective_history_[-1], samples_model.objective_history_[-1]
        sizes.append(n), totals.append(seconds), solver_times.append(solver)
        print(f"{n:>9}{seconds:>10.2f}{solver:>10.2f}{ridge_time:>9.2f}"
              f"{seconds / ridge_time:>7.1f}{solver / ridge_time:>13.1f}"
              f"{model.n_init_iter_:>6}{model.n_iter_:>6}{'yes' if capped else 'no':>7}"
              f"{on_samples:>13.2f}{(value - samples_value) / samples_value:>11.1e}",
              flush=True)
        del X, Y, model
    if len(sizes) > 1:
        logs = np.log(sizes)
        print(f"log-log slope of fit time vs n: whole fit "
              f"{np.polyfit(logs, np.log(totals), 1)[0]:.2f}, solver alone "
              f"{np.polyfit(logs, np.log(solver_times), 1)[0]:.2f}")


def memory_section(args):
    print("\n## Peak memory traced during one GLOCAL fit (tracemalloc)")
    print(f"{'case':<28}{'X MiB':>9}{'peak MiB':>10}{'peak / X':>9}")
    cases = [("dense n=1e5 d=100 l=20", lambda: dense_data(100_000, seed=args.seed), 1.0),
             ("delicious rho=0.3", lambda: training_data("delicious", args.data_dir,
                                                         args.seed), 0.3),
             ("sparse50k", lambda: sparse_text_data(seed=args.seed), 1.0)]
    for label, make, rho in cases:
        X, Y = make()
        observed = Y if rho == 1 else sample_observed(Y, rho, random_state=args.seed)
        tracemalloc.start()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            GLOCAL(random_state=args.seed).fit(X, observed)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        size = nbytes(X) / 2**20
        print(f"{label:<28}{size:>9.1f}{peak:>10.1f}{peak / size:>9.2f}", flush=True)


def continuation_fit(X, Y, seed, target, factor=10.0):
    """GLOCAL at the ``target`` weights (lam3, lam4) by a path of warm-started fits from the
    default weights (1e-3), every weight multiplied by ``factor`` per step up to its target.

    Returns the total CPU seconds (the default fit's included), outer iterations, number of
    fits, whether any fit was capped, and the last model.
    """
    target = {key: target.get(key, 1e-3) for key in ("lam3", "lam4")}
    n_steps = max(int(np.ceil(np.log(value / 1e-3) / np.log(factor) - 1e-9))
                  for value in target.values())
    seconds, n_iter, capped, model = 0.0, 0, False, None
    for step in range(n_steps + 1):
        weights = {key: min(1e-3 * factor ** step, value) for key, value in target.items()}
        step_seconds, model, step_capped = timed_fit(
            lambda: GLOCAL(random_state=seed, **weights), X, Y, 1, init=model)
        seconds, n_iter = seconds + step_seconds, n_iter + model.n_iter_
        capped = capped or step_capped
    return seconds, n_iter, n_steps + 1, capped, model


def strong_section(args):
    print("\n## Strong correlation weights (ratio to the default weights' fit on the same data)")
    print(f"{'data':<7}{'weights':<44}{'fit s':>9}{'ratio':>9}{'outer':>6}{'capped':>7}"
          f"{'objective':>12}")
    cases = {"enron": [("lam3=1e3", dict(lam3=1e3)), ("lam4=1e3", dict(lam4=1e3)),
                       ("lam3=lam4=1e3", dict(lam3=1e3, lam4=1e3))],
             "scene": [("lam4=1e4", dict(lam4=1e4))]}
    for name, weights_list in cases.items():
        X, Y = training_data(name, args.data_dir, args.seed)
        default, model, _ = timed_fit(lambda: GLOCAL(random_state=args.seed), X, Y,
                                      args.repeats)

        def row(label, seconds, n_iter, capped, value):
            print(f"{name:<7}{label:<44}{seconds:>9.2f}{seconds / default:>9.1f}{n_iter:>6}"
                  f"{'yes' if capped else 'no':>7}{value:>12.2f}", flush=True)

        row("default (1e-3, 1e-3)", default, model.n_iter_, False, model.objective_history_[-1])
        for label, weights in weights_list:
            seconds, model, capped = timed_fit(
                lambda: GLOCAL(random_state=args.seed, **weights), X, Y, args.repeats)
            row(label, seconds, model.n_iter_, capped, model.objective_history_[-1])
            seconds, n_iter, n_fits, capped, model = continuation_fit(X, Y, args.seed, weights)
            row(f"{label}, path of {n_fits} warm-started fits", seconds, n_iter, capped,
                model.objective_history_[-1])
        if name != "enron":
            continue
        # The blocks solved as before: Z without its preconditioner; W by trust regions
        # (first 3 iterations only, as the whole fit took 20 minutes).
        before = [("lam3=1e3, Z not preconditioned",
                   dict(lam3=1e3, solver_options={"_levers": {"z_preconditioner": False}})),
                  ("lam4=1e3, max_iter=3", dict(lam4=1e3, max_iter=3)),
                  ("lam4=1e3, max_iter=3, W by trust regions",
                   dict(lam4=1e3, max_iter=3, optimizer={"W": "trust_regions"}))]
        for label, settings in before:
            seconds, model, capped = timed_fit(
                lambda: GLOCAL(random_state=args.seed, **settings), X, Y, args.repeats)
            row(label, seconds, model.n_iter_, capped, model.objective_history_[-1])


def losses_section(args):
    print("\n## The squared-hinge design at rho = 0.7 against BR on the same observed entries")
    print(f"{'data':<12}{'l':>5}{'k':>5}{'sq. hinge s':>12}{'squared s':>10}{'BR s':>8}"
          f"{'ratio':>7}{'init':>6}{'outer':>6}{'capped':>7}{'objective':>12}")
    for name in args.loss_datasets.split(","):
        X, Y = training_data(name, args.data_dir, args.seed)
        observed = sample_observed(Y, 0.7, random_state=args.seed)
        br_time = timed_fit(lambda: BR(C=0.1), X, observed, args.repeats)[0]
        design = dict(fit_intercept=True, lam_v=0.0, n_latent=min(Y.shape[1], 100), lam2=4.0,
                      random_state=args.seed)
        squared_time = timed_fit(lambda: GLOCAL(**design), X, observed, args.repeats)[0]
        seconds, model, capped = timed_fit(lambda: GLOCAL(loss="squared_hinge", **design),
                                           X, observed, args.repeats)
        print(f"{name:<12}{Y.shape[1]:>5}{design['n_latent']:>5}{seconds:>12.2f}"
              f"{squared_time:>10.2f}{br_time:>8.2f}{seconds / br_time:>7.2f}"
              f"{model.n_init_iter_:>6}{model.n_iter_:>6}{'yes' if capped else 'no':>7}"
              f"{model.objective_history_[-1]:>12.2f}", flush=True)


SECTIONS = {"ratio": ratio_section, "scaling": scaling_section, "memory": memory_section,
            "strong": strong_section, "losses": losses_section}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sections", default=",".join(SECTIONS))
    parser.add_argument("--datasets",
                        default="arts,enron,bibtex,delicious,rcv1subset1,sparse50k")
    parser.add_argument("--rhos", default="1,0.3")
    parser.add_argument("--loss-datasets", default="arts,enron,bibtex")
    parser.add_argument("--sizes", default="1e4,1e5,1e6")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=DATA_DIR)
    args = parser.parse_args()
    warnings.simplefilter("ignore", UserWarning)  # labels never positive in some datasets
    warnings.simplefilter("default", ConvergenceWarning)
    print(f"one BLAS thread; CPU seconds, median of {args.repeats} fit(s); seed {args.seed}")
    with threadpool_limits(limits=1):
        for section in args.sections.split(","):
            SECTIONS[section](args)


if __name__ == "__main__":
    main()
