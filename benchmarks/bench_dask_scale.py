"""GLOCAL on a Dask LocalCluster, on synthetic data larger than any worker's memory.

The data (n rows, d features, l labels) are made chunk by chunk on the workers: chunk i of
X comes from a generator seeded with i (a mixture of ``--n-groups`` Gaussian clusters, whose
component ids are the groups), its labels are signs of a fixed linear map of it plus noise.
No process ever holds X, which is recomputed by every pass that needs it (nothing of it is
persisted). The labels (0/1 bytes, no missing entries: l/(8d) of X's size) are persisted on
the workers, as are V and P = X W (k x n each, by the fit). The workers are separate
processes with ``--memory-limit`` each and one thread (one BLAS thread).

Prints the data size, the time of the input checks, group counts and basic-model
initialisation, the median time of an outer iteration of Algorithm 1, and the peak resident
memory of each worker (sampled every ``--sample-every`` seconds), and, as an anchor measured in the
same process, the in-memory fit of the first ``--anchor-rows`` rows per outer iteration (CPU
seconds of this process, on one thread).

    python benchmarks/bench_dask_scale.py [--n 1e7] [--d 100] [--l 20] [--n-latent 10]
        [--chunk-rows 250000] [--workers 2] [--memory-limit 3GiB] [--max-iter 2]
        [--init-max-iter 2] [--anchor-rows 100000] [--scheduler tcp://host:8786]
        [--loss squared_hinge --fit-intercept --lam-v 0] [--against-paper]
        [--agreement-rows 200000]

``--against-paper`` then fits the paper's loss on the same cluster, on the samples (with
every label observed it could run on second moments, without a pass per iteration), and
prints the ratio of the times per outer iteration; its anchor in memory too, and the same
ratio there, where no cluster is involved. ``--agreement-rows N`` fits the first N
rows in memory and on the cluster and prints how far apart the two fits are, next to how far
apart two fits in memory are when the rows come in another order (the same problem, its
sums rounded otherwise), with the model's correlation terms and without them.

``--loss squared_hinge --fit-intercept --lam-v 0`` fits the recommended estimator: V is
then solved by Newton's method chunk by chunk (one pass), and every Newton step of the U block
is two passes over the labels and V (its statistics, then its step sizes), where the paper's
loss with every label observed runs on second moments.

With ``--scheduler`` the same fit runs on an existing cluster instead of a LocalCluster.
"""

import argparse
import os
import statistics
import threading
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")  # inherited by the worker processes
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402
import psutil  # noqa: E402
from distributed import Client, LocalCluster  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from glocal import GLOCAL  # noqa: E402


def _chunk(block_id, rows, d, l, n_groups, part):
    """Rows of chunk ``block_id[0]``: X, labels or group ids (``part``)."""
    rng = np.random.default_rng([1, block_id[0]])
    centers = np.random.default_rng([0, 0]).standard_normal((n_groups, d))
    groups = rng.integers(0, n_groups, rows)
    if part == "groups":
        return groups
    X = centers[groups] + rng.standard_normal((rows, d))
    if part == "X":
        return X
    W = np.random.default_rng([0, 1]).standard_normal((d, l)) / np.sqrt(d)
    return (X @ W + rng.standard_normal((rows, l)) > 0.5).astype(np.uint8)


def synthetic(n, d, l, n_groups, chunk_rows):
    """X (n x d), Y (n x l) and the groups as lazy Dask arrays made chunk by chunk."""
    sizes = [chunk_rows] * (n // chunk_rows) + ([n % chunk_rows] if n % chunk_rows else [])
    arrays = []
    for part, shape in [("X", (d,)), ("Y", (l,)), ("groups", ())]:
        chunks = (tuple(sizes),) + tuple((s,) for s in shape)
        arrays.append(da.map_blocks(
            lambda block_id=None, part=part: _chunk(block_id, sizes[block_id[0]], d, l,
                                                    n_groups, part),
            chunks=chunks, dtype={"X": float, "Y": np.uint8, "groups": int}[part],
            name=f"synthetic-{part}-{n}-{d}-{l}-{chunk_rows}"))
    return arrays


class PeakMemory:
    """Peak resident memory of every worker, sampled in a background thread."""

    def __init__(self, client, every):
        self.client, self.every, self.peak = client, every, {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            for worker, rss in self.client.run(lambda: psutil.Process().memory_info().rss
                                               ).items():
                self.peak[worker] = max(self.peak.get(worker, 0), rss)
            self._stop.wait(self.every)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def _per_round(start, stamps):
    """Median time of the rounds ending at ``stamps``, the first starting at ``start``."""
    return statistics.median(np.diff([start] + stamps))


def fit_timed(model, X, Y, groups, quiet=False, clock=time.perf_counter):
    """Fit, recording the clock after every round of the basic-model initialisation and
    outer iteration."""
    stamps = {"init": [], "main": []}

    tic = clock()

    def report(stage, iteration, value):
        stamps[stage].append(clock())
        if not quiet:
            print(f"  {stage} {iteration}: objective {value:.8g} at "
                  f"{stamps[stage][-1] - tic:.1f} s", flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # the caps are deliberate
        model.fit(X, Y, groups=groups, callback=report)
    return clock() - tic, stamps


def _apart(first, second, sample):
    """The largest relative difference of two fits' objective histories and of their scores
    on ``sample``."""
    histories = [np.array(model.init_objective_history_ + model.objective_history_)
                 for model in (first, second)]
    scores = [np.asarray(model.decision_function(sample)) for model in (first, second)]
    return (np.max(np.abs(histories[1] - histories[0]) / np.abs(histories[0])),
            np.max(np.abs(scores[1] - scores[0])) / np.max(np.abs(scores[0])))


def agreement(params, X, Y, groups, rows):
    """The same fit on the first ``rows`` rows in memory and on the cluster, and, as the
    reference, in memory on the same rows in another order (the same problem, summed in
    another order): how far apart each pair is, with the model's correlation terms and
    without them (lam3 = lam4 = 0)."""
    X, Y, groups = X[:rows], Y[:rows], groups[:rows]
    X_mem, Y_mem, groups_mem = X.compute(), Y.compute(), groups.compute()
    order = np.random.default_rng(0).permutation(rows)
    sample = X_mem[:10_000]
    apart = {}
    for terms, extra in [("with", {}), ("without", dict(lam3=0.0, lam4=0.0))]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # the caps are deliberate
            with threadpool_limits(1):
                in_memory = GLOCAL(**params, **extra).fit(X_mem, Y_mem, groups=groups_mem)
                reordered = GLOCAL(**params, **extra).fit(X_mem[order], Y_mem[order],
                                                          groups=groups_mem[order])
            on_dask = GLOCAL(**params, **extra).fit(X, Y, groups=groups)
        apart[terms] = (_apart(in_memory, on_dask, sample),
                        _apart(in_memory, reordered, sample))
    return apart


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=float, default=1e7)
    parser.add_argument("--d", type=int, default=100)
    parser.add_argument("--l", type=int, default=20)
    parser.add_argument("--n-latent", type=int, default=10)
    parser.add_argument("--n-groups", type=int, default=4)
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="3GiB")
    parser.add_argument("--max-iter", type=int, default=2)
    parser.add_argument("--init-max-iter", type=int, default=2)
    parser.add_argument("--anchor-rows", type=int, default=100_000)
    parser.add_argument("--sample-every", type=float, default=0.5)
    parser.add_argument("--scheduler", default=None)
    parser.add_argument("--loss", default="squared",
                        choices=["squared", "squared_hinge", "logistic"])
    parser.add_argument("--fit-intercept", action="store_true")
    parser.add_argument("--lam-v", type=float, default=None)
    parser.add_argument("--against-paper", action="store_true",
                        help="also fit the paper's loss on the same cluster, and print the "
                             "ratio of the times per outer iteration")
    parser.add_argument("--agreement-rows", type=int, default=0,
                        help="also fit the first N rows in memory and on the cluster, and "
                             "print how far apart the two fits are")
    args = parser.parse_args()
    n = int(args.n)
    params = dict(n_latent=args.n_latent, max_iter=args.max_iter,
                  init_max_iter=args.init_max_iter, loss=args.loss,
                  fit_intercept=args.fit_intercept, lam_v=args.lam_v, random_state=0)
    X, Y, groups = synthetic(n, args.d, args.l, args.n_groups, args.chunk_rows)
    print(f"model: loss={args.loss}, fit_intercept={args.fit_intercept}, "
          f"lam_v={args.lam_v}")
    print(f"data: n={n:.3g}, d={args.d}, l={args.l}; X is {X.nbytes / 2**30:.2f} GiB in "
          f"{X.numblocks[0]} chunks of {args.chunk_rows} rows "
          f"({args.chunk_rows * args.d * 8 / 2**20:.0f} MiB), made on the workers")

    # On samples: with every label observed the paper's loss could run on second moments,
    # without a pass per iteration, but the time of a pass is the comparison here.
    paper = dict(params, loss="squared", fit_intercept=False, lam_v=None,
                 solver_options={"_levers": {"use_moments": False}})
    # The anchor: the same model on the first rows, in memory, in this process.
    rows = min(args.anchor_rows, n)
    first = X[:rows].compute(), Y[:rows].compute(), groups[:rows].compute()
    anchored = {"model": params, "paper": paper} if args.against_paper else {"model": params}
    anchors = {}
    with threadpool_limits(1):
        for name, model_params in anchored.items():
            anchor = fit_timed(GLOCAL(**model_params), *first, quiet=name == "paper",
                               clock=time.process_time)[1]
            anchors[name] = _per_round(anchor["init"][-1], anchor["main"])
    anchor_iteration = anchors["model"]

    if args.scheduler:
        cluster, client = None, Client(args.scheduler)
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                               memory_limit=args.memory_limit, dashboard_address=None)
        client = Client(cluster)
    try:
        print(f"cluster: {len(client.scheduler_info()['workers'])} workers, one thread each, "
              f"memory limit {args.memory_limit} per worker")
        Y = Y.persist()  # made from X once; passes over the labels alone then skip X
        model = GLOCAL(**params)
        with PeakMemory(client, args.sample_every) as memory:
            total, stamps = fit_timed(model, X, Y, groups)
        if args.against_paper:
            paper_stamps = fit_timed(GLOCAL(**paper), X, Y, groups, quiet=True)[1]
        if args.agreement_rows:
            apart = agreement(params, X, Y, groups, args.agreement_rows)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    iteration = _per_round(stamps["init"][-1], stamps["main"])
    times = model.fit_times_
    print(f"fit: {total:.1f} s in total: input checks and the d x d moments "
          f"{total - sum(times.values()):.1f} s, group counts {times['clustering']:.1f} s, "
          f"basic-model initialisation {times['init']:.1f} s for {model.n_init_iter_} "
          f"rounds (its initial point included), main loop {times['main']:.1f} s for "
          f"{model.n_iter_} iterations")
    print(f"time per outer iteration: {iteration:.1f} s at n={n:.3g} on {args.workers} "
          f"workers; in memory at n={rows:.3g}: {anchor_iteration:.2f} CPU s "
          f"(ratio {iteration / anchor_iteration:.1f} for {n / rows:.0f}x the rows)")
    if args.against_paper:
        paper_iteration = _per_round(paper_stamps["init"][-1], paper_stamps["main"])
        print(f"the paper's loss on the same data, on the samples: {paper_iteration:.1f} s "
              f"per outer iteration (ratio {iteration / paper_iteration:.2f}); in memory at "
              f"n={rows:.3g}: {anchors['paper']:.3f} CPU s (ratio "
              f"{anchor_iteration / anchors['paper']:.2f})")
    if args.agreement_rows:
        for terms, (dask_apart, reordered) in apart.items():
            print(f"the first {args.agreement_rows:.3g} rows, {terms} the correlation terms: "
                  f"in memory and on the cluster, objective histories within "
                  f"{dask_apart[0]:.1e} (relative), scores within {dask_apart[1]:.1e} "
                  f"(relative to the largest); in memory with the rows in another order, "
                  f"{reordered[0]:.1e} and {reordered[1]:.1e}")
    peaks = ", ".join(f"{peak / 2**30:.2f}" for peak in sorted(memory.peak.values()))
    print(f"peak worker memory (GiB, resident): {peaks}; limit {args.memory_limit}; "
          f"X alone {X.nbytes / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
