"""One fit of the recommended model under ways of solving its blocks: CPU time, rounds,
objective and test average precision per way, in every regime (few and many labels, few and
many rows).

On one 60/40 split of each dataset (``synthetic:N,D,L`` for the library's generator), a
fraction rho of each label's training entries is kept by the paper's sampler, and GLOCAL is
fitted with ``GLOCALCV()``'s estimator settings (squared hinge, a bias per label, no shrinkage
of V, n_latent = min(l, 100), its refit's tolerance) at one setting (``--lam2``,
``--normalize-rows``), once per way. A way is a name and the estimator parameters it sets,
as JSON (``--ways 'newton={}' 'tr={"optimizer": {"U": "trust_regions"}}'``; levers through
``{"solver_options": {"_levers": {...}}}``); the first way is the reference. Prints, per
(dataset, rho, way): basic-model rounds, outer iterations, CPU seconds of this process (one
BLAS thread), the final objective (Eq. 4), its relative difference to the reference's, the
test Ap and how many ConvergenceWarnings the fit raised.

    GLOCAL_DATA=/path/to/data python benchmarks/bench_block_levers.py \\
        --datasets synthetic:5000,500,374 cal500 enron synthetic:20000,500,22 \\
        --rhos 0.3 1 --ways 'newton={}' 'v_tr={"v_closed_form": false}'
"""

import argparse
import json
import time
import warnings

from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from _common import DATA_DIR, named_data
from glocal import GLOCAL
from glocal.metrics import average_precision
from glocal.model_selection import DEFAULT_ESTIMATOR_PARAMS, MAX_DEFAULT_LATENT
from glocal.protocol import drop_unlabeled_rows, sample_observed
from sklearn.model_selection import train_test_split


def _way(text):
    name, _, params = text.partition("=")
    return name, json.loads(params or "{}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["synthetic:5000,500,374", "cal500",
                                                           "enron", "synthetic:20000,500,22"])
    parser.add_argument("--rhos", type=float, nargs="+", default=[0.3, 1.0])
    parser.add_argument("--lam2", type=float, default=4.0)
    parser.add_argument("--normalize-rows", action="store_true")
    parser.add_argument("--ways", type=_way, nargs="+", default=[("default", {})])
    parser.add_argument("--max-rows", type=int, default=None,
                        help="keep this many rows of each dataset, drawn at random")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=DATA_DIR)
    args = parser.parse_args()
    print("dataset rho way init_rounds rounds cpu_s objective rel_to_first test_ap "
          "convergence_warnings", flush=True)
    for name in args.datasets:
        X, Y = named_data(name, args.data_dir, max_rows=args.max_rows, seed=args.seed)
        X_train, X_test, Y_train, Y_test = train_test_split(X, Y, test_size=0.4,
                                                            random_state=args.seed)
        X_test, Y_test = drop_unlabeled_rows(X_test, Y_test)
        for rho in args.rhos:
            Y_obs = (sample_observed(Y_train, rho, random_state=args.seed) if rho < 1
                     else Y_train)
            reference = None
            for way, params in args.ways:
                model = GLOCAL(**DEFAULT_ESTIMATOR_PARAMS, lam2=args.lam2,
                               normalize_rows=args.normalize_rows,
                               n_latent=min(Y.shape[1], MAX_DEFAULT_LATENT),
                               random_state=args.seed).set_params(**params)
                with threadpool_limits(1, "blas"), warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always", ConvergenceWarning)
                    tic = time.process_time()
                    model.fit(X_train, Y_obs)
                    seconds = time.process_time() - tic
                objective = model.objective_history_[-1]
                reference = objective if reference is None else reference
                capped = sum(issubclass(x.category, ConvergenceWarning) for x in w)
                ap = average_precision(Y_test, model.decision_function(X_test))
                print(f"{name} {rho:g} {way} {model.n_init_iter_} {model.n_iter_} "
                      f"{seconds:.2f} {objective:.8g} {(objective - reference) / reference:+.2e}"
                      f" {ap:.4f} {capped}", flush=True)


if __name__ == "__main__":
    main()
