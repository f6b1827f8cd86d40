"""GLOCAL's data on Dask: samples in chunks of rows, the solver's sums and maps run per chunk.

`DaskSamples` is a backend of the solver (`glocal.solver.backends`): X (n x d), the signed labels Y
and their mask J (l x n) and the group ids (n,) share their chunks along the samples; a sum
runs the solver's own function on every chunk (as a `GlocalData` of that chunk) and adds the
small results up in a tree, a map concatenates the per-chunk columns of V or rows of P = X W
and persists them beside X. Everything else of the solver (the block solvers of U, W and Z,
on k x k, l x k and d x k arrays) runs on the client unchanged. The rest of the module
prepares a fit: checks of the Dask inputs in one pass and the groups (the user's, or k-means
from dask-ml).

This module imports dask; `glocal` imports it only when given a Dask array.
"""

import time
import uuid
import warnings
from dataclasses import replace
from functools import cache, partial

import dask
import dask.array as da
import numpy as np
import scipy.sparse as sp
from dask.core import flatten
from dask.delayed import Delayed
from dask.highlevelgraph import HighLevelGraph

from .._utils import validation
from .backends import IN_MEMORY
from ..groups import group_index
from .second_moments import THROUGH_SAMPLES

__all__ = ["DaskSamples"]


class DaskSamples:
    """The samples of a fit as Dask arrays chunked by rows (see the module docstring).

    Parameters
    ----------
    groups : dask array of shape (n_samples,)
        Group id in ``[0, n_groups)`` of every sample, chunked like the rows of X.
    group_sizes : ndarray of shape (n_groups,)
        Number of samples of every group.
    """

    in_memory = False

    def __init__(self, groups, group_sizes):
        self.groups = groups
        self._group_sizes = np.asarray(group_sizes)
        self.n_groups = len(self._group_sizes)
        self.chunks = groups.chunks[0]

    def group_sizes(self, group_index):
        """n_m for every group (kept here: ``group_index`` is None)."""
        return self._group_sizes

    def sum(self, function, data, *arrays, reads="XY"):
        """The sum over chunks of ``function(chunk, *chunks_of_arrays)`` (arrays, floats or
        tuples of them), added up in a tree on the workers."""
        name, graph, inputs = self._per_chunk(function, data, arrays, reads)
        keys = [(name, i) for i in range(len(self.chunks))]
        level = 0
        while len(keys) > 1:  # pairwise, in chunk order: the same sum on every run
            level += 1
            pairs = [keys[i:i + 2] for i in range(0, len(keys), 2)]
            keys = [(f"{name}-sum{level}", j) for j in range(len(pairs))]
            graph.update({key: (_add, *pair) if len(pair) == 2 else pair[0]
                          for key, pair in zip(keys, pairs)})
        layers = HighLevelGraph.from_collections(name, graph, dependencies=inputs)
        return dask.compute(Delayed(keys[0], layers, layer=name))[0]

    def map(self, function, data, *arrays, sample_axis, width, reads="XY"):
        """The concatenation of ``function`` on every chunk, persisted: n x width
        (``sample_axis=0``) or width x n (1)."""
        name, graph, inputs = self._per_chunk(function, data, arrays, reads)
        block = (lambda i: (name, i, 0)) if sample_axis == 0 else (lambda i: (name, 0, i))
        graph = {block(i): graph[name, i] for i in range(len(self.chunks))}
        chunks = (self.chunks, (width,)) if sample_axis == 0 else ((width,), self.chunks)
        layers = HighLevelGraph.from_collections(name, graph, dependencies=inputs)
        # Unoptimized, like the sums: a key of X or Y must mean the same task in both.
        return da.Array(layers, name, chunks, dtype=float).persist(optimize_graph=False)

    def sum_and_map(self, function, data, *arrays, sample_axis, width, reads="XY"):
        """``function`` returns a sum and an aligned array: the sum of the first over the
        chunks now, and a function that maps the second, on its first call (then kept)."""
        total = self.sum(lambda part, *a: function(part, *a)[0], data, *arrays, reads=reads)

        @cache
        def deferred():
            return self.map(lambda part, *a: function(part, *a)[1], data, *arrays,
                            sample_axis=sample_axis, width=width, reads=reads)
        return total, deferred

    def _per_chunk(self, function, data, arrays, reads):
        """A graph {(name, i): task} of ``function`` on every chunk i, and the arrays it
        depends on: the group ids, ``arrays`` and, as ``reads`` says, X ("X") and the
        labels with their mask ("Y"). A part not read is None in the chunk's `GlocalData`,
        and its chunks are neither made nor moved."""
        # The chunk's GlocalData is built on the worker from the parameters of the fit
        # (without the d x d moments, which no per-chunk function needs), in memory.
        template = replace(data, X=None, Y=None, J=None, group_index=None,
                           moments=THROUGH_SAMPLES, samples=IN_MEMORY)
        parts = [data.X if "X" in reads else None, data.Y if "Y" in reads else None,
                 data.J if "Y" in reads else None, self.groups]
        parts += [self._aligned(a, data) for a in arrays]
        keys = [[None] * len(self.chunks) if a is None else _block_keys(a) for a in parts]
        name = f"glocal-{uuid.uuid4().hex}"
        graph = {(name, i): (_on_chunk, function, template, self.n_groups, *blocks)
                 for i, blocks in enumerate(zip(*keys))}
        return name, graph, [a for a in parts if a is not None]

    def _aligned(self, array, data):
        """A sample-aligned argument chunked like X (a numpy array, e.g. a random initial V,
        is split; k x n arrays have the samples on axis 1, n x k ones on axis 0)."""
        axis = 1 if array.ndim == 2 and array.shape[1] == data.n_samples else 0
        chunks = tuple(self.chunks if i == axis else (size,)
                       for i, size in enumerate(array.shape))
        if isinstance(array, da.Array):
            return array if array.chunks == chunks else array.rechunk(chunks)
        return da.from_array(array, chunks=chunks)


def _block_keys(array):
    """The keys of the blocks of an array with one chunk across its non-sample axes, in
    sample order."""
    return list(flatten(array.__dask_keys__()))


def _blocks(array):
    """The blocks of an array with one chunk across its non-sample axes, in sample order."""
    return list(array.to_delayed().ravel())


def _on_chunk(function, template, n_groups, X, Y, J, groups, *arrays):
    part = replace(template, X=X, Y=Y, J=J, group_index=group_index(groups, n_groups))
    return function(part, *arrays)


def _add(a, b):
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b))
    return None if a is None else a + b


# --- Preparing a fit ------------------------------------------------------------------

def check_features(X, n_features=None, estimator="the model"):
    """A 2-D Dask array of real features as float64 with one chunk across columns (lazy:
    its values are checked by `check_training_data`)."""
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D Dask array, got {X.ndim}-D of shape {X.shape}")
    if any(np.isnan(size) for size in X.shape):
        raise ValueError("X has unknown chunk sizes: call X.compute_chunk_sizes() first")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"X must be real numbers, got dtype {X.dtype}")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but {estimator} is expecting "
                         f"{n_features} features as input")
    return X.astype(np.float64).rechunk({1: -1})


def check_training_data(X, Y):
    """Validate Dask features and labels in one pass over their chunks.

    Returns X (float64, one chunk across columns), the signed labels (l x n) and their mask
    (None when every entry is observed), lazy Dask arrays chunked like the rows of X.
    """
    X = check_features(X)
    n = X.shape[0]
    if not isinstance(Y, da.Array):
        Y = np.asarray(Y.toarray() if sp.issparse(Y) else Y)
    validation.check_label_type_and_shape(Y, n)
    Y = da.asarray(Y).astype(np.float64).rechunk((X.chunks[0], -1))
    checks = dask.compute([dask.delayed(_chunk_checks)(x, y)
                           for x, y in zip(_blocks(X), _blocks(Y))])[0]
    finite, largest, bad, n_observed, n_positive = zip(*checks)
    if not all(finite):
        raise ValueError(f"Input X contains NaN or infinity (in {_chunk_name(X, finite)})")
    if max(largest) * np.sqrt(X.size) > validation.MAX_FEATURE_NORM:
        raise ValueError(f"X is too large for float64 arithmetic: its norm may exceed "
                         f"{validation.MAX_FEATURE_NORM:.3g}; rescale X")
    n_observed = sum(n_observed)
    try:
        validation.check_label_counts(np.unique(np.concatenate(bad))[:5], n_observed,
                                       sum(n_positive))
    except ValueError as exc:
        clean = [not len(values) for values in bad]
        where = f" (in {_chunk_name(X, clean)})" if not all(clean) else ""
        raise ValueError(f"{exc}{where}") from None
    observed = ~da.isnan(Y)
    J = None if (n_observed == n).all() else observed.T.astype(np.float64)
    return X, validation.signed_labels(Y, observed), J


def _chunk_name(X, good):
    """The first chunk of rows whose flag in ``good`` is False, named for an error message."""
    index = list(good).index(False)
    start = int(np.sum(X.chunks[0][:index]))
    return f"chunk {index} of the rows, rows {start} to {start + X.chunks[0][index] - 1}"


def _chunk_checks(X, Y):
    values = X.data if sp.issparse(X) else X
    finite = bool(np.isfinite(values).all())
    largest = float(np.abs(values).max()) if values.size and finite else 0.0
    observed = ~np.isnan(Y)
    bad = np.unique(Y[observed & ~np.isin(Y, (0.0, 1.0))])[:5]
    return finite, largest, bad, observed.sum(axis=0), (observed & (Y > 0)).sum(axis=0)


def fit_groups(X, groups, n_groups, random_state):
    """Group ids (persisted, chunked like X's rows), their sizes and the seconds spent.

    ``groups`` None: k-means with ``n_groups`` clusters by `dask_ml.cluster.KMeans`
    (k-means||); else the user's ids (any comparable labels, numpy or Dask).
    """
    tic = time.perf_counter()
    n = X.shape[0]
    clustered = groups is None
    if clustered:
        validation.check_n_groups(n_groups, n)
        if n_groups == 1:
            groups = da.zeros(n, chunks=X.chunks[0], dtype=np.intp)
        else:
            from dask_ml.cluster import KMeans

            groups = KMeans(n_clusters=n_groups, random_state=random_state).fit(X).labels_
    elif not isinstance(groups, da.Array):
        groups = da.from_array(validation.check_groups(groups, n), chunks=X.chunks[0])
    elif groups.ndim != 1 or groups.shape[0] != n:
        raise ValueError(f"groups must give one group id per row of X ({n}), got shape "
                         f"{groups.shape}")
    groups = groups.rechunk((X.chunks[0],))
    labels = groups.map_blocks(np.unique, chunks=(np.nan,), dtype=groups.dtype)
    labels = np.unique(labels.compute())  # compact ids 0, ..., g - 1 in sorted label order
    if labels.dtype.kind == "f" and not np.isfinite(labels).all():
        raise ValueError("groups contains missing values (None, NaN or inf)")
    ids = groups.map_blocks(partial(np.searchsorted, labels), dtype=np.intp).persist()
    if clustered and len(labels) < n_groups:
        warnings.warn(f"k-means found only {len(labels)} non-empty groups of the {n_groups} "
                      f"asked for", UserWarning)
    sizes = da.bincount(ids, minlength=len(labels)).compute()
    return ids, sizes, time.perf_counter() - tic
