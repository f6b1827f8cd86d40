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
test Ap and how many ConvergenceWarnings the fit raised. With ``--hessian-products``, also the
share of label entries of nonzero curvature at the fitted point and the CPU milliseconds of
one Hessian-vector product of the V block (U^T (S o (U D))) by dense products over all
entries against a product sampled on those entries only.

    GLOCAL_DATA=/path/to/data python benchmarks/bench_block_levers.py \\
        --datasets synthetic:5000,500,374 cal500 enron synthetic:20000,500,22 \\
        --rhos 0.3 1 --ways 'newton={}' 'v_tr={"v_closed_form": false}'
"""

import argparse
import json
import time
import warnings

import numpy as np
import scipy.sparse as sp

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


def _cpu_ms(function, repeats=5):
    tic = time.process_time()
    for _ in range(repeats):
        function()
    return 1e3 * (time.process_time() - tic) / repeats


def _hessian_products(model, Y_obs):
    """The V block's Hessian product at the fitted point, dense against sampled."""
    U, V = model.U_, model.V_
    observed = ~np.isnan(Y_obs.T)
    signs = np.where(observed, 2.0 * np.nan_to_num(Y_obs.T) - 1.0, 0.0)
    S = (observed & (signs * (U @ V) < 1.0)).astype(float)  # the squared hinge's curvature
    D = np.random.default_rng(0).standard_normal(V.shape)
    rows, cols = np.nonzero(S)

    def sampled():
        values = np.einsum("ij,ij->i", U[rows], D[:, cols].T)
        return np.asarray(sp.csr_matrix((values, (rows, cols)), shape=S.shape).T @ U).T

    np.testing.assert_allclose(sampled(), U.T @ (S * (U @ D)), atol=1e-8)
    print(f"    entries of nonzero curvature {S.mean():.3f} (observed {observed.mean():.3f});"
          f" V Hessian product: dense {_cpu_ms(lambda: U.T @ (S * (U @ D))):.1f} CPU ms, "
          f"sampled {_cpu_ms(sampled):.1f}", flush=True)


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
    parser.add_argument("--hessian-products", action="store_true")
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
                if args.hessian_products:
                    with threadpool_limits(1, "blas"):
                        _hessian_products(model, Y_obs)


if __name__ == "__main__":
    main()
