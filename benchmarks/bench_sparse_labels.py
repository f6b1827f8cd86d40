"""Memory of a GLOCAL fit with many sparse labels: Y stays sparse (`glocal.labels`).

A planted model: X (n x d) standard normal; every label j has a direction a_j in an
r-dimensional latent space z = X M (M: d x r), and row i is positive for its m_i labels of
highest score z_i^T a_j + noise, m_i uniform in 5..20. Y is built in chunks of rows as a
CSR matrix (never n x l dense). With ``--missing q``, q entries of every row (labels drawn at
random among the others) are stored as NaN: missing, kept sparse too (`glocal.labels.SparseMask`).

One GLOCAL fit (the paper's model, default weights) with one BLAS thread reports the peak
memory traced by tracemalloc during the fit (numpy and scipy arrays, not the data made
before), against the size of X, of nnz(Y) (as CSR) and of one dense l x n float array,
and the fit's CPU seconds. With ``--compare-dense`` the same fit on ``Y.toarray()`` (the
dense path) is run too, when its l x n arrays fit in memory (small n only).

    python benchmarks/bench_sparse_labels.py --n 100000 --labels 10000 --features 200 \\
        --max-iter 10 --init-max-iter 10
"""

import argparse
import resource
import time
import tracemalloc
import warnings

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from glocal import GLOCAL

MiB = 2**20


def planted_sparse_labels(n, d, l, rank=20, seed=0, chunk=2000, missing=0):
    """X (n x d, dense) and Y (n x l CSR, 5 to 20 positives and ``missing`` NaN per row)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    M = rng.standard_normal((d, rank)) / np.sqrt(d)
    A = rng.standard_normal((rank, l))
    counts = rng.integers(5, 21, size=n)
    rows, cols = [], []
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        scores = X[start:stop] @ M @ A + rng.standard_normal((stop - start, l))
        best = np.argpartition(-scores, 20, axis=1)[:, :20]  # the 20 highest, unordered
        best = np.take_along_axis(best, np.argsort(-np.take_along_axis(scores, best, 1)), 1)
        keep = np.arange(20) < counts[start:stop, None]  # the m_i highest of each row
        rows.append(np.nonzero(keep)[0] + start)
        cols.append(best[keep])
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    Y = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, l))
    if missing:
        nan = sp.csr_matrix((np.ones(n * missing), (np.repeat(np.arange(n), missing),
                                                    rng.integers(0, l, n * missing))),
                            shape=(n, l))
        nan = nan - nan.multiply(Y)  # not on positives (duplicates summed, then set to NaN)
        nan.eliminate_zeros()
        nan.data[:] = np.nan
        Y = Y + nan
    return X, Y


def traced_fit(model, X, Y):
    """Peak traced MiB and CPU seconds of one fit, with one BLAS thread."""
    tracemalloc.start()
    cpu = time.process_time()
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ConvergenceWarning at a moderate max_iter
        model.fit(X, Y)
    cpu = time.process_time() - cpu
    peak = tracemalloc.get_traced_memory()[1] / MiB
    tracemalloc.stop()
    return peak, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--labels", type=int, default=10_000)
    parser.add_argument("--features", type=int, default=200)
    parser.add_argument("--max-iter", type=int, default=10)
    parser.add_argument("--init-max-iter", type=int, default=10)
    parser.add_argument("--missing", type=int, default=0,
                        help="missing (NaN) entries per row, kept sparse")
    parser.add_argument("--compare-dense", action="store_true",
                        help="also fit on the dense Y (needs several l x n arrays)")
    args = parser.parse_args()

    X, Y = planted_sparse_labels(args.n, args.features, args.labels, missing=args.missing)
    n, l = Y.shape
    y_bytes = Y.data.nbytes + Y.indices.nbytes + Y.indptr.nbytes
    dense_bytes = 8 * n * l
    n_missing = int(np.isnan(Y.data).sum())
    print(f"# n = {n}, d = {X.shape[1]}, l = {l}, nnz(Y) = {Y.nnz} "
          f"({(Y.nnz - n_missing) / n:.1f} positives and {n_missing / n:.1f} missing per row), "
          f"max_iter = {args.max_iter}, "
          f"init_max_iter = {args.init_max_iter}")
    print(f"X: {X.nbytes / MiB:.1f} MiB, Y (CSR): {y_bytes / MiB:.1f} MiB, "
          f"one dense l x n float array: {dense_bytes / MiB:.1f} MiB")

    def model():
        return GLOCAL(max_iter=args.max_iter, init_max_iter=args.init_max_iter,
                      random_state=0)

    fits = [("sparse Y", Y)]
    if args.compare_dense:
        fits.append(("dense Y", Y.toarray()))
    for name, labels in fits:
        fitted = model()
        peak, cpu = traced_fit(fitted, X, labels)
        print(f"{name}: peak traced {peak:.1f} MiB = {peak * MiB / X.nbytes:.2f} x X "
              f"= {peak * MiB / dense_bytes:.3f} x one dense l x n array; "
              f"fit {cpu:.1f} CPU s ({fitted.n_init_iter_} initialisation rounds, "
              f"{fitted.n_iter_} outer iterations), final objective "
              f"{fitted.objective_history_[-1]:.6g}")
    resident = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / MiB
    print(f"resident peak of the whole process (data generation included): {resident:.0f} MiB")


if __name__ == "__main__":
    main()
