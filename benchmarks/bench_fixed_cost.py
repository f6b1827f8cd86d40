"""The fixed cost of fits on small data: limiting the BLAS threads of every fit through one
`threadpoolctl.ThreadpoolController` made once per process (what ``GLOCAL.fit`` does) against
a new one per fit (what ``threadpoolctl.threadpool_limits`` makes), in one process.

Prints the CPU milliseconds of entering and leaving the limit each way (the mean of
``--entries``), then the CPU seconds of a ``GLOCALCV()`` search on the library's synthetic
data (``--n`` rows, 60 % of them for training, ``--d`` features, ``--l`` labels, rho of the
labels observed), each way ``--repeats`` times in turn (medians), with whether the two ways
gave the same scores. One BLAS thread.

    python benchmarks/bench_fixed_cost.py --n 600 --d 24 --l 30 --rho 0.3
"""

import argparse
import statistics
import time

import numpy as np
from threadpoolctl import ThreadpoolController, threadpool_limits

import glocal.estimator
from glocal import GLOCALCV
from glocal.datasets import make_glocal_data
from glocal.protocol import sample_observed


def entry_ms(enter, entries):
    tic = time.process_time()
    for _ in range(entries):
        with enter():
            pass
    return 1e3 * (time.process_time() - tic) / entries


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=600)
    parser.add_argument("--d", type=int, default=24)
    parser.add_argument("--l", type=int, default=30)
    parser.add_argument("--rho", type=float, default=0.3)
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    reused = glocal.estimator.blas_controller
    new = entry_ms(lambda: threadpool_limits(1, "blas"), args.entries)
    once = entry_ms(lambda: reused().limit(limits=1, user_api="blas"), args.entries)
    print(f"one limit, entered and left: {new:.2f} CPU ms with a new controller, "
          f"{once:.3f} with the one made once")
    data = make_glocal_data(n_samples=args.n, n_features=args.d, n_labels=args.l,
                            random_state=0)
    n_train = int(0.6 * args.n)
    X, Y = data.X[:n_train], sample_observed(data.Y[:n_train], args.rho, random_state=0)
    ways = {"new controller per fit": ThreadpoolController, "one controller": reused}
    seconds, scores = {way: [] for way in ways}, {}
    with threadpool_limits(1, "blas"):
        GLOCALCV(random_state=0).fit(X, Y)  # imports and first calls out of the timing
        for _ in range(args.repeats):
            for way, controller in ways.items():
                glocal.estimator.blas_controller = controller
                tic = time.process_time()
                model = GLOCALCV(random_state=0).fit(X, Y)
                seconds[way].append(time.process_time() - tic)
                scores[way] = model.decision_function(X)
    glocal.estimator.blas_controller = reused
    print(f"GLOCALCV() search, {n_train} x {args.d} x {args.l}, rho = {args.rho:g} "
          f"(median CPU s of {args.repeats}):")
    for way, values in seconds.items():
        print(f"  {way}: {statistics.median(values):.3f}  "
              f"({' '.join(f'{v:.3f}' for v in values)})")
    first, second = scores.values()
    print(f"  same scores: {np.array_equal(first, second)}")


if __name__ == "__main__":
    main()
