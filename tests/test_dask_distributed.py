"""GLOCAL through a `dask.distributed` Client on a LocalCluster of two memory-limited workers."""

import numpy as np
import pytest

from glocal import GLOCAL

from test_dask import KW, _problem, _same_fit, require

da = require("dask.array")
distributed = require("distributed")

# The fits cap their rounds (every pass costs a scheduler round trip); the caps are the point.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

# Every pass over the chunks is a round trip to the scheduler (about 0.1 s here): few rounds.
KW = dict(KW, max_iter=2, init_max_iter=3)


@pytest.fixture(scope="module")
def client():
    # Worker threads in this process: starts in a second, and the fitted functions need no
    # pickling; the scheduler, the workers and their memory limits are the real ones.
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  memory_limit="1GiB", dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def test_fit_through_a_client_matches_the_in_memory_fit(client):
    X, Y, groups = _problem(seed=3)
    in_memory = GLOCAL(**KW).fit(X, Y, groups=groups)
    X_dask = da.from_array(X, chunks=60).persist()  # on the workers, 4 chunks
    Y_dask = da.from_array(Y, chunks=60).persist()
    on_dask = GLOCAL(**KW).fit(X_dask, Y_dask, groups=groups)
    _same_fit(in_memory, on_dask, X)
    # V stays on the workers, chunked like the rows of X.
    assert on_dask.V_.chunks[1] == X_dask.chunks[0]
    assert set(client.who_has(on_dask.V_)) and len(client.scheduler_info()["workers"]) == 2


def test_data_generated_on_the_workers(client):
    """Chunks made by the workers themselves (a seed per chunk): no process holds all."""
    n_chunks, rows, d, l = 4, 50, 6, 4

    def make(block_id, part):
        rng = np.random.default_rng(block_id[0])
        X = rng.standard_normal((rows, d))
        Y = (X @ np.arange(1.0, d * l + 1).reshape(d, l) % 3 - 1
             + rng.standard_normal((rows, l)) > 0)
        return np.hstack([X, Y])[:, part]

    chunks = ((rows,) * n_chunks,)
    X = da.map_blocks(make, part=slice(0, d), chunks=chunks + ((d,),), dtype=float)
    Y = da.map_blocks(make, part=slice(d, None), chunks=chunks + ((l,),), dtype=float)
    groups = da.map_blocks(lambda: np.arange(rows) % 2, chunks=chunks, dtype=int)
    model = GLOCAL(**KW).fit(X, Y, groups=groups)
    history = np.array(model.objective_history_)
    assert np.all(np.diff(history) <= 1e-10 * np.abs(history[1:]))
    scores = model.decision_function(X)
    assert isinstance(scores, da.Array) and scores.shape == (n_chunks * rows, l)
    assert np.isfinite(scores.compute()).all()
