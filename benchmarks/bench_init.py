"""The basic-model initialisation: block descent with Anderson mixing against variable projection.

Under the recommended model a fit spends most of its time in the basic-model initialisation
(Eq. (1)), and on many labels that takes dozens of rounds: block descent of a bilinear
model converges linearly. Given U and W, V's block has an exact solution (column by
column, `glocal.solver.newton.v_block`), so Eq. (1) is also a function of (U, W) alone,
phi(U, W) = min_V f(U, V, W), whose gradient is f's gradient in U and W at that V
(variable projection). The library's rounds (`glocal.solver.steps.MixedRounds`) iterate the map
(U, W) -> (U's block solution, W's block solution) at V's solution, extrapolated by Anderson
mixing. The alternative measured here minimizes phi by L-BFGS (scipy), every evaluation a
V block solved exactly from the last V, from the same start: on (U, W) as they are, and on
(U, R W) with R the Cholesky factor of W's block Hessian (W preconditioned).

On the training part of one 60/40 split (seeded) of each dataset, with a fraction rho of
each label's entries kept (`glocal.protocol.sample_observed`), the recommended model
(`glocal.model_selection.DEFAULT_ESTIMATOR_PARAMS`, ``n_latent = min(l, 100)``) at one
``lam2``. Prints, for each method, the CPU seconds and the objective reached along the way,
and where L-BFGS stands at the CPU time the library's initialisation took. One BLAS thread.

    GLOCAL_DATA=/path/to/data python benchmarks/bench_init.py \\
        --datasets cal500 synthetic:5000,500,374 [--rho 0.3] [--lam2 16] [--max-iter 150]
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.linalg
import scipy.optimize
import scipy.sparse as sp
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR, named_data  # noqa: E402

from glocal import GLOCAL  # noqa: E402
from glocal.solver import objective as obj
from glocal._fit_data import glocal_data, solver_options  # noqa: E402
from glocal.model_selection import DEFAULT_ESTIMATOR_PARAMS, MAX_DEFAULT_LATENT  # noqa: E402
from glocal.solver.plan import resolve_plan
from glocal.protocol import sample_observed  # noqa: E402
from glocal.solver import glocal_fit  # noqa: E402


def fit_data(name, rho, lam2, seed):
    """The fit's data, its number of latent labels, options and levers."""
    X, Y = named_data(name, DATA_DIR, seed=seed)
    X, _, Y, _ = train_test_split(X, Y, test_size=0.4, random_state=seed)
    if rho < 1:
        Y = sample_observed(Y, rho, random_state=seed)
    k = min(Y.shape[1], MAX_DEFAULT_LATENT)
    model = GLOCAL(n_latent=k, lam2=lam2, **DEFAULT_ESTIMATOR_PARAMS)
    options, levers = solver_options(model.optimizer, model.v_closed_form,
                                     model.solver_options)
    data = glocal_data(X, Y, None, model, options, check_random_state(seed), None)[0]
    return data, k, options, levers


def rounds(data, k, options, levers, seed):
    """The library's initialisation to tol = 1e-4: [(CPU seconds, objective)] per round."""
    trace, tic = [], time.process_time()
    glocal_fit(data, k, max_iter=0, init_max_iter=300, tol=1e-4, options=options,
               levers=levers, random_state=seed,
               callback=lambda stage, i, value: trace.append((time.process_time() - tic,
                                                               value)))
    return trace


def variable_projection(data, k, options, levers, seed, max_iter, precondition):
    """L-BFGS on phi(U, W) from the same start: [(CPU seconds, objective)] per iteration.
    With ``precondition``, in the variables (U, R W), R the Cholesky factor of W's block
    Hessian lam X^T X + lam2 I (which holds most of phi's curvature in W)."""
    tic = time.process_time()
    plan = resolve_plan(data, k, options, levers)
    U, V, W = plan.start(plan, k, np.random.default_rng(seed))
    product = obj.w_products(plan.data)[0]
    R = None
    if precondition:
        gram = data.X.T @ data.X
        gram = gram.toarray() if sp.issparse(gram) else np.asarray(gram)
        R = scipy.linalg.cholesky(data.lam * gram + data.lam2 * np.eye(gram.shape[0]))
    state = {"V": V, "value": None}

    def phi(x):
        U_, W_ = x[:U.size].reshape(U.shape), x[U.size:].reshape(W.shape)
        if R is not None:
            W_ = scipy.linalg.solve_triangular(R, W_)
        V_ = plan.v_step(plan, U_, W_, state["V"], False)[0]
        state["V"] = V_
        state["value"] = plan.space.basic_objective(U_, V_, W_)
        grad_U = obj.u_cost_grad(U_, plan.space.u_term(V_), plan.data.lam2)[1]
        XtV, V_sq_norm = plan.space.w_statistics(V_)
        grad_W = obj.w_cost_grad(W_, XtV, V_sq_norm, product, plan.data.lam,
                                 plan.data.lam2)[1]
        if R is not None:
            grad_W = scipy.linalg.solve_triangular(R, grad_W, trans="T")
        return state["value"], np.concatenate([grad_U.ravel(), grad_W.ravel()])

    trace = []
    scipy.optimize.minimize(
        phi, np.concatenate([U.ravel(), (W if R is None else R @ W).ravel()]), jac=True,
        method="L-BFGS-B",
        callback=lambda x: trace.append((time.process_time() - tic, state["value"])),
        options=dict(maxiter=max_iter, maxcor=20, ftol=0.0, gtol=0.0))
    return trace


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["cal500", "synthetic:5000,500,374"])
    parser.add_argument("--rho", type=float, default=0.3)
    parser.add_argument("--lam2", type=float, default=16.0)
    parser.add_argument("--max-iter", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    print(f"CPU seconds, one BLAS thread; rho = {args.rho:g}, lam2 = {args.lam2:g}; "
          "objective relative to where the library's initialisation stopped")
    with threadpool_limits(1):
        for name in args.datasets:
            data, k, options, levers = fit_data(name, args.rho, args.lam2, args.seed)
            library = rounds(data, k, options, levers, args.seed)
            seconds, final = library[-1]
            print(f"{name}: n = {data.X.shape[0]}, l = {data.Y.shape[0]}, k = {k}; "
                  f"block descent with Anderson mixing: {len(library)} rounds, "
                  f"{seconds:.2f} s")
            print("  rounds: " + _marks(library, final))
            for label, precondition in (("L-BFGS", False), ("L-BFGS, W preconditioned", True)):
                projected = variable_projection(data, k, options, levers, args.seed,
                                                args.max_iter, precondition)
                at_same_time = [v for t, v in projected if t <= seconds] or [np.nan]
                reached = [t for t, v in projected if v <= final]
                print(f"  {label}: " + _marks(projected, final))
                print(f"    {len(projected)} iterations in {projected[-1][0]:.2f} s; at "
                      f"{seconds:.2f} s {(at_same_time[-1] - final) / final:+.1e}; "
                      + (f"reached the rounds' objective at {reached[0]:.2f} s" if reached
                         else "did not reach the rounds' objective"), flush=True)


def _marks(trace, final):
    """About seven (CPU seconds, objective relative to ``final``) along a trace."""
    marks = trace[::max(1, len(trace) // 6)] + trace[-1:]
    return "; ".join(f"{t:.2f} s {(v - final) / final:+.1e}" for t, v in marks)

if __name__ == "__main__":
    main()
