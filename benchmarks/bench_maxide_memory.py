"""MAXIDE on a sparse X against the same X dense: peak traced memory, fit time, same scores.

On Bibtex (7395 x 1836, 3.7% non-zero; by default), all rows, rho = 0.3 of the labels
observed (`glocal.protocol.sample_observed`), MAXIDE at its defaults. For the sparse and the
dense input: the peak memory traced during one fit (tracemalloc sees numpy's and scipy's
allocations), the median fit time over ``--repeats`` fits with one BLAS thread, and the
average precision of the completed missing labels; then the largest difference between the
two inputs' completed scores.

    python benchmarks/bench_maxide_memory.py [--data-dir DIR] [--dataset bibtex] [--repeats 3]
"""

import argparse
import statistics
import time
import tracemalloc
import warnings

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from glocal.baselines import MAXIDE
from glocal.datasets import load_dataset
from glocal.protocol import evaluate_masked, sample_observed
from _common import DATA_DIR


def measure(X, Y_observed, repeats):
    tracemalloc.start()
    model = MAXIDE().fit(X, Y_observed)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    times = []
    for _ in range(repeats):
        tic = time.perf_counter()
        MAXIDE().fit(X, Y_observed)
        times.append(time.perf_counter() - tic)
    return model, peak, statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--dataset", default="bibtex")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    data = load_dataset(args.dataset, args.data_dir)
    X = sp.csr_matrix(data.X)
    Y = np.asarray(data.Y, dtype=float)
    Y_observed = sample_observed(Y, 0.3, random_state=0)
    missing = np.isnan(Y_observed)
    print(f"{args.dataset}: {X.shape[0]} x {X.shape[1]}, {X.nnz / np.prod(X.shape):.1%} "
          f"non-zero, {Y.shape[1]} labels; rho = 0.3; one BLAS thread; median of "
          f"{args.repeats} fits")
    print(f"{'input':8}{'peak MiB':>10}{'fit (s)':>10}{'Ap (missing)':>14}")
    scores = {}
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # labels never positive among the observed
        for name, features in (("sparse", X), ("dense", X.toarray())):
            model, peak, fit_time = measure(features, Y_observed, args.repeats)
            scores[name] = model.completed_scores_
            ap = evaluate_masked(Y, model.completed_scores_, missing)["average_precision"]
            print(f"{name:8}{peak:10.1f}{fit_time:10.2f}{ap:14.4f}")
    difference = np.abs(scores["sparse"] - scores["dense"]).max()
    print(f"largest |sparse - dense| completed score: {difference:.2e} "
          f"(scores up to {np.abs(scores['dense']).max():.2f})")


if __name__ == "__main__":
    main()
