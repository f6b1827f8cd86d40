"""The one path of `glocal.GLOCAL.fit` into the solver: the solver's data from the
estimator's hyperparameters and (X, Y), in memory or on Dask, the work fits on the same X
share (`FitCache`), and the warnings about the solver's result."""

import hashlib
import sys
import time
from dataclasses import replace
from functools import cache

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import normalize
from threadpoolctl import ThreadpoolController

from ._utils import validation
from .groups import compact_group_ids, group_index, kmeans_groups
from .solver import SolverOptions
from .solver.losses import balanced_class_weights
from .solver.objective import GlocalData
from .solver.plan import Levers, resolve_feature_moments, resolve_sparse_labels

__all__ = ["FitCache"]


class FitCache:
    """Work shared by GLOCAL fits on the same X, passed to ``fit(..., cache=)``.

    The first fit that needs them computes, and the next ones reuse, what depends on X and
    the groups only: X scaled to unit rows (``normalize_rows``), the k-means groups (per
    ``n_groups``, ``normalize_rows`` and seed) and the feature second moments X^T X and
    X_m^T X_m (per groups, ``fit_intercept``, ``intercept_scaling`` and ``normalize_rows``).
    A fit with a cache gives the same result as without it. `glocal.GLOCALCV` keeps one per
    fold, shared by all the settings of its grid. A cache belongs to one X: a fit on other
    features is a ValueError.

    Examples
    --------
    >>> from glocal import GLOCAL, FitCache
    >>> from glocal.datasets import make_glocal_data
    >>> data = make_glocal_data(random_state=0)
    >>> cache = FitCache()
    >>> strong = GLOCAL(lam2=10.0, random_state=0).fit(data.X, data.Y, cache=cache)
    >>> weak = GLOCAL(lam2=1.0, random_state=0).fit(data.X, data.Y, init=strong, cache=cache)
    """

    def __init__(self):
        self._entries = {}
        self._fingerprint = None
        self._checked = None  # the X last checked: the same object is not hashed again

    def _check_features(self, X):
        """Record X's fingerprint at the first fit; a later X must match it (the very X
        object of the last check is taken as matching)."""
        if X is self._checked:
            return
        parts = (X.data, X.indices, X.indptr) if sp.issparse(X) else (np.ascontiguousarray(X),)
        digest = hashlib.blake2b(digest_size=16)
        for part in parts:
            digest.update(np.ascontiguousarray(part).view(np.uint8))
        fingerprint = (X.shape, sp.issparse(X), digest.hexdigest())
        if self._fingerprint is None:
            self._fingerprint = fingerprint
        elif fingerprint != self._fingerprint:
            raise ValueError("this FitCache holds the work of fits on other features X; use "
                             "one FitCache per X")
        self._checked = X

    def _get(self, key, compute):
        if key not in self._entries:
            self._entries[key] = compute()
        return self._entries[key]


def is_dask_array(X):
    """Whether X is a Dask array (without importing dask: none exists before it is)."""
    dask_array = sys.modules.get("dask.array")
    return dask_array is not None and isinstance(X, dask_array.Array)


def glocal_data(X, Y, groups, model, options, rng, cache=None):
    """The solver's `GlocalData` of a fit of ``model`` (its hyperparameters only) on (X, Y).

    The one data path of `GLOCAL.fit`: it checks the data, scales the rows
    (``normalize_rows``), finds or checks the groups, appends the constant feature
    (``fit_intercept``), weighs the entries (``class_weight``) and forms the feature second
    moments, in memory or, for a Dask X, over its chunks (`glocal.solver.dask_backend`). ``cache``
    (a `FitCache`) shares the groups and moments between fits on the same X. Returns the
    data, the group id of every sample and the seconds spent finding the groups.
    """
    if is_dask_array(X):
        return _dask_data(X, Y, groups, model, options, rng)
    return _in_memory_data(X, Y, groups, model, options, rng, cache)


def _in_memory_data(X, Y, groups, model, options, rng, cache):
    """`glocal_data` of arrays and scipy-sparse matrices."""
    # A sparse Y stays sparse where the solver supports it (see GLOCAL.fit).
    keep_sparse = resolve_sparse_labels(model.loss, model.class_weight, options)
    X = validation.check_features(X)
    Y_signed, J = validation.check_labels(Y, X.shape[0], keep_sparse=keep_sparse)
    if cache is None:
        cache = FitCache()
    else:  # a fresh cache has nothing to guard: hash X only for a cache that is reused
        cache._check_features(X)
    if model.normalize_rows:
        X = cache._get(("unit rows",), lambda: normalize(X))
    n_samples = X.shape[0]

    tic = time.perf_counter()
    if groups is None:
        validation.check_n_groups(model.n_groups, n_samples)
        key = ("kmeans", model.normalize_rows, model.n_groups, rng.randint(2**31 - 1))
        groups = cache._get(key, lambda: kmeans_groups(X, *key[2:]))
    else:
        groups = compact_group_ids(validation.check_groups(groups, n_samples))
    clustering_time = time.perf_counter() - tic

    if model.fit_intercept:
        X = _append_constant(X, model.intercept_scaling)
    weights = (balanced_class_weights(Y_signed, J) if model.class_weight == "balanced"
               else None)
    data = GlocalData(X, Y_signed, J, group_index(groups), model.lam, model.lam2, model.lam3,
                      model.lam4, loss=model.loss, weights=weights, lam_v=model.lam_v)
    key = ("grams", model.normalize_rows, model.fit_intercept, model.intercept_scaling,
           data.has_manifold_terms, groups.tobytes())
    decided = cache._get(key, lambda: resolve_feature_moments(data))
    data = replace(data, X=decided.X, moments=decided.moments)
    return data, groups, clustering_time


def _dask_data(X, Y, groups, model, options, rng):
    """`glocal_data` of a Dask X: the samples reached through
    `glocal.solver.dask_backend.DaskSamples` (no entry weights, V solved column by column); its
    second moments are decided when the fit starts (`glocal.solver.plan.resolve_plan`)."""
    from .solver import dask_backend

    if model.class_weight is not None:
        raise ValueError("GLOCAL on Dask arrays weighs every observed entry alike: use "
                         "class_weight=None")
    if not options.v_closed_form:
        raise ValueError("GLOCAL on Dask arrays solves V column by column: use "
                         "v_closed_form=True")
    n_columns = X.shape[1] + model.fit_intercept
    X, Y_signed, J = dask_backend.check_training_data(X, Y)
    if model.normalize_rows:  # row by row, so chunk by chunk
        X = X.map_blocks(normalize, dtype=float)
    seed = rng.randint(2**31 - 1) if groups is None else None
    groups, sizes, clustering_time = dask_backend.fit_groups(X, groups, model.n_groups, seed)
    if model.fit_intercept:
        X = X.map_blocks(_append_constant, model.intercept_scaling, dtype=float,
                         chunks=(X.chunks[0], (n_columns,)))
    samples = dask_backend.DaskSamples(groups, sizes)
    data = GlocalData(X, Y_signed, J, None, model.lam, model.lam2, model.lam3, model.lam4,
                      loss=model.loss, lam_v=model.lam_v, samples=samples)
    return data, groups, clustering_time


def solver_options(optimizer, v_closed_form, extra):
    """The `SolverOptions` and `glocal.solver.plan.Levers` of a fit; unknown names in ``extra`` are
    a ValueError."""
    extra = dict(extra or {})
    levers = dict(extra.pop("_levers", None) or {})
    allowed = set(SolverOptions.__dataclass_fields__) - {"optimizer", "v_closed_form"}
    unknown = sorted(set(extra) - allowed)
    if unknown:
        raise ValueError(f"unknown solver_options {unknown}; expected some of {sorted(allowed)}")
    unknown = sorted(set(levers) - set(Levers.__dataclass_fields__))
    if unknown:
        raise ValueError(f"unknown solver_options['_levers'] {unknown}; expected some of "
                         f"{sorted(Levers.__dataclass_fields__)}")
    return (SolverOptions(optimizer=optimizer, v_closed_form=v_closed_form, **extra),
            Levers(**levers))


def _append_constant(X, value):
    column = np.full((X.shape[0], 1), value)
    return sp.hstack([X, column], format="csr") if sp.issparse(X) else np.hstack([X, column])


@cache
def blas_controller():
    """The process's `threadpoolctl.ThreadpoolController`, made once: making one scans every
    loaded library (``threadpool_limits`` does on every entry); numpy's BLAS is loaded. A
    fit limits BLAS to one thread: the solver's products are on thin matrices (k columns),
    where OpenBLAS threads cost more than they give (scikit-learn's KMeans does the same)."""
    return ThreadpoolController()


def all_callbacks(callbacks):
    """One callback calling each of ``callbacks`` (None for none)."""
    if not callbacks:
        return None

    def call(*args):
        for function in callbacks:
            function(*args)
    return call


def warn_unless_converged(result, init_max_iter, max_iter, tol, warm=False):
    """A ConvergenceWarning for each loop that stopped at its cap before reaching ``tol``; for
    the basic-model initialisation only from the model's own start (from a given solution,
    ``warm``, a round or two re-balance the basic model before Algorithm 1 goes on)."""
    loops = [(result.converged, "main loop", max_iter, "max_iter")]
    if not warm:
        loops.insert(0, (result.init_converged, "basic-model initialisation", init_max_iter,
                         "init_max_iter"))
    for converged, loop, cap, name in loops:
        if not converged:
            validation.warn_once(f"GLOCAL's {loop} stopped at {name}={cap} before its "
                                  f"relative decrease fell below tol={tol}; increase {name} "
                                  "or tol", ConvergenceWarning)
