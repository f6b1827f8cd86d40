"""GLOCAL through a `dask.distributed` Client on a LocalCluster of two memory-limited workers."""

import numpy as np
import pytest
import scipy.sparse as sp

from glocal import GLOCAL
from glocal.protocol import sample_observed

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


def _wide_sparse(n=4200, d=4500, l=5, seed=5):
    """More features than the d x d moments are kept for (and more samples than the
    in-memory W preconditioner's n x n factor is made for): W's products go through X."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.002, format="csr", random_state=seed)
    X = X + sp.csr_matrix((np.ones(n), (np.arange(n), rng.integers(0, 50, n))), shape=(n, d))
    scores = X[:, :50] @ rng.standard_normal((50, l)) + 0.3 * rng.standard_normal((n, l))
    Y = sample_observed((scores > 0).astype(float), 0.7, random_state=seed)
    return X.tocsr(), Y, rng.integers(0, 3, n)


@pytest.mark.slow  # each fits twice, every pass a round trip to the scheduler
@pytest.mark.parametrize("wide_sparse", [False, True], ids=["dense", "wide-sparse"])
def test_squared_hinge_through_a_client_matches_the_in_memory_fit(client, wide_sparse):
    """The recommended estimator (squared hinge, intercept, lam_v=0) on the workers: V
    solved chunk by chunk, the U block's loss terms and, for a sparse X of 4500 features,
    the W block's products with X summed over the chunks; the in-memory objective history
    and point to 1e-8."""
    kw = dict(KW, loss="squared_hinge", fit_intercept=True, lam_v=0.0)
    if wide_sparse:
        X, Y, groups = _wide_sparse()
        rows = 1400
        X_dask = da.concatenate([da.from_array(X[start:start + rows], chunks=-1, asarray=False)
                                 for start in range(0, X.shape[0], rows)]).persist()
    else:
        X, Y, groups = _problem(seed=5)
        rows = 60
        X_dask = da.from_array(X, chunks=rows).persist()
    in_memory = GLOCAL(**kw).fit(X, Y, groups=groups)
    on_dask = GLOCAL(**kw).fit(X_dask, da.from_array(Y, chunks=rows).persist(), groups=groups)
    np.testing.assert_allclose(on_dask.objective_history_, in_memory.objective_history_,
                               rtol=1e-8)
    np.testing.assert_allclose(on_dask.init_objective_history_,
                               in_memory.init_objective_history_, rtol=1e-8)
    for name in ("U_", "W_", "intercept_"):
        a, b = getattr(in_memory, name), getattr(on_dask, name)
        np.testing.assert_allclose(b, a, rtol=1e-8, atol=1e-8 * np.abs(a).max())
    assert on_dask.V_.chunks[1] == X_dask.chunks[0]
