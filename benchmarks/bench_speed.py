"""GLOCAL at its defaults against one-vs-rest LinearSVC(C=0.1), timed in one process.

For each dataset (default: Enron and Arts from the data directory), one random 60/40 split of
all rows; test rows without a positive label are dropped, as in the paper. Both methods are
fitted ``--repeats`` times with one BLAS thread; the median fit times (CPU seconds: each
method runs on one thread, so CPU time is its work, while wall time on a shared machine
mostly measures the load), their ratio, the peak memory traced during one fit (tracemalloc
sees numpy's allocations) and the test-split average precision and ranking loss are printed.

    python benchmarks/bench_speed.py [--data-dir DIR] [--datasets enron,arts] [--repeats 5]
"""

import argparse
import statistics
import time
import tracemalloc
import warnings

from threadpoolctl import threadpool_limits

from glocal import GLOCAL
from glocal.baselines import BR
from glocal.metrics import average_precision, ranking_loss
from _common import DATA_DIR, paper_split



def measure(make_model, X_train, Y_train, X_test, Y_test, repeats):
    times = []
    for _ in range(repeats):
        model = make_model()
        tic = time.process_time()
        model.fit(X_train, Y_train)
        times.append(time.process_time() - tic)
    tracemalloc.start()
    make_model().fit(X_train, Y_train)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    scores = model.decision_function(X_test)
    return (statistics.median(times), peak, average_precision(Y_test, scores),
            ranking_loss(Y_test, scores))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--datasets", default="enron,arts")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # Arts has a label with no positive example; GLOCAL warns at every fit.
    warnings.simplefilter("ignore", UserWarning)

    print(f"one BLAS thread; CPU seconds, median of {args.repeats} fits; seed {args.seed}")
    print(f"{'dataset':<10}{'method':<9}{'fit (s)':>9}{'peak MiB':>10}{'Ap':>8}{'Rkl':>8}")
    with threadpool_limits(limits=1):
        for name in args.datasets.split(","):
            X_train, X_test, Y_train, Y_test = paper_split(name, args.data_dir, args.seed)
            results = {}
            for method, make_model in [("GLOCAL", lambda: GLOCAL(random_state=args.seed)),
                                       ("BR", lambda: BR(C=0.1))]:
                results[method] = measure(make_model, X_train, Y_train, X_test, Y_test,
                                          args.repeats)
                seconds, peak, ap, rkl = results[method]
                print(f"{name:<10}{method:<9}{seconds:>9.3f}{peak:>10.1f}{ap:>8.4f}{rkl:>8.4f}")
            ratio = results["GLOCAL"][0] / results["BR"][0]
            print(f"{name:<10}time ratio GLOCAL / BR = {ratio:.2f}  "
                  f"(n_train={X_train.shape[0]}, d={X_train.shape[1]}, l={Y_train.shape[1]})")


if __name__ == "__main__":
    main()
