"""The V block under the squared hinge: Newton's method against dual coordinate descent.

Under the squared hinge the V block (Eq. (6)) separates over the samples: column i of V
minimizes ``sum_j c_ji max(0, 1 - y_ji u_j . v)^2 + a ||v - q_i||^2``. The library solves
every column exactly by batched semi-smooth Newton (`glocal.solver.newton.v_newton`). The
alternative measured here is dual coordinate descent, as LIBLINEAR solves the L2-loss SVM:
one dual variable per observed entry, ``v = q + sum_j alpha_j y_j u_j / (2a)``, updated label
by label over all samples at once (a sweep over the labels is an epoch), warm-started from
the multipliers of the start V.

The block is a real one: on one 60/40 split (seeded 0) with the training labels hidden as in
the missing-labels study, the recommended model's loss (squared hinge, ``lam_v = 0``, no
bias, ``lam2 = 4``, ``n_latent = min(l, 100)``) is fitted for 3 outer iterations; the block is
V at that fit's U and W, started from the V of the same fit stopped after 2 (``warm``, as in
the alternating loop) or from q = W^T x (``cold``). Prints Newton's CPU seconds (median of 3)
and, per epoch count, dual coordinate descent's CPU seconds and how far its cost is above
Newton's. One BLAS thread.

    GLOCAL_DATA=/path/to/data python benchmarks/bench_v_block.py \\
        [--datasets rcv1subset1 arts bibtex] [--rho 0.3]
"""

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import DATA_DIR  # noqa: E402

from glocal import GLOCAL
from glocal.solver import losses, newton
from glocal.datasets import load_dataset  # noqa: E402
from glocal.protocol import random_splits, sample_observed  # noqa: E402

EPOCHS = (1, 2, 5, 10, 20, 50)


def block(name, rho):
    """U, q^T (k x n), the labels (+1 / -1 / 0 missing, l x n) and the two starts."""
    data = load_dataset(name, DATA_DIR)
    Y = data.Y.toarray() if sp.issparse(data.Y) else np.asarray(data.Y, dtype=float)
    train = random_splits(data.X.shape[0], 1, random_state=0)[0][0]
    X, Y = data.X[train], Y[train]
    if rho < 1:
        Y = sample_observed(Y, rho, random_state=0)
    l = Y.shape[1]
    params = dict(n_latent=min(l, 100), loss="squared_hinge", fit_intercept=False,
                  lam_v=0.0, lam2=4.0, init_max_iter=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fits are capped on purpose
        before = GLOCAL(max_iter=2, **params).fit(X, Y)
        model = GLOCAL(max_iter=3, **params).fit(X, Y)
    Q = np.asarray(X @ model.W_).T
    labels = np.where(np.isnan(Y), 0.0, 2.0 * Y - 1.0).T
    return model.U_, Q, labels, {"warm": np.asarray(before.V_), "cold": Q.copy()}


def cost(U, V, Q, labels, mask):
    return losses.loss_terms(U @ V, labels, mask, "squared_hinge")[0] + np.sum((V - Q) ** 2)


def dual_cd(U, Q, labels, mask, V0, epochs):
    """Dual coordinate descent (a = 1): yields (epoch, V) after each epoch in ``epochs``."""
    alpha = 2.0 * mask * np.maximum(0.0, 1.0 - labels * (U @ V0))  # the start's multipliers
    V = Q + U.T @ (alpha * labels) / 2.0
    rows = [np.flatnonzero(m) for m in mask]
    curvature = (U * U).sum(axis=1) / 2.0
    for epoch in range(1, max(epochs) + 1):
        for j, i in enumerate(rows):
            if not i.size:
                continue
            y, c = labels[j, i], mask[j, i]
            grad = y * (U[j] @ V[:, i]) - 1.0 + alpha[j, i] / (2.0 * c)
            new = np.maximum(0.0, alpha[j, i] - grad / (curvature[j] + 1.0 / (2.0 * c)))
            V[:, i] += np.outer(U[j], (new - alpha[j, i]) * y / 2.0)
            alpha[j, i] = new
        if epoch in epochs:
            yield epoch, V


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=["rcv1subset1", "arts", "bibtex"])
    parser.add_argument("--rho", type=float, default=0.3)
    args = parser.parse_args()
    with threadpool_limits(1):
        for name in args.datasets:
            U, Q, labels, starts = block(name, args.rho)
            mask = (labels != 0).astype(float)
            print(f"{name}, rho = {args.rho:g}: n = {Q.shape[1]}, k = {U.shape[1]}, "
                  f"l = {U.shape[0]}")
            for start, V0 in starts.items():
                times = []
                for _ in range(3):
                    tic = time.process_time()
                    V = newton.v_newton(U, Q, labels, mask, "squared_hinge", 1.0, 0.0, V0=V0)
                    times.append(time.process_time() - tic)
                best = cost(U, V, Q, labels, mask)
                line = [f"  {start}: Newton {statistics.median(times):.3f} s;",
                        "dual CD (epochs: s, cost above Newton's)"]
                elapsed, tic = 0.0, time.process_time()
                for epoch, V in dual_cd(U, Q, labels, mask, V0, EPOCHS):
                    elapsed += time.process_time() - tic
                    gap = (cost(U, V, Q, labels, mask) - best) / best
                    line.append(f"{epoch}: {elapsed:.3f} s, {gap:.1e};")
                    tic = time.process_time()  # the cost's evaluation not counted
                print(" ".join(line), flush=True)


if __name__ == "__main__":
    main()
