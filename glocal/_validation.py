"""Input checks and the one conversion point between label encodings.

Outside the solver, labels are {0, 1} with NaN for a missing entry (scikit-learn's layout,
n_samples x n_labels). Inside, they are the paper's Y in {-1, 0, +1} (l x n) with 0 for a
missing entry, plus the observation mask J.
"""

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_array


def from_signed_labels(Y):
    """Convert the paper's {-1, 0, +1} label encoding to {0, 1} with NaN for missing.

    Parameters
    ----------
    Y : array-like of shape (n_samples, n_labels)
        +1 for a positive label, -1 for a negative label, 0 for a missing one.

    Returns
    -------
    ndarray of shape (n_samples, n_labels), float
        1.0 for positive, 0.0 for negative, NaN for missing: the input ``GLOCAL.fit`` takes.
    """
    Y = np.asarray(Y.toarray() if sp.issparse(Y) else Y, dtype=float)
    if not np.isin(Y, (-1.0, 0.0, 1.0)).all():
        raise ValueError("signed labels must be -1 (negative), 0 (missing) or +1 (positive)")
    out = (Y > 0).astype(float)
    out[Y == 0] = np.nan
    return out


def check_features(X, n_features=None, estimator="the model"):
    """Validate X (dense or sparse, finite) and return it as float64, CSR when sparse."""
    X = check_array(X, accept_sparse="csr", dtype=np.float64, input_name="X")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but {estimator} is expecting "
                         f"{n_features} features as input")
    return X


def check_labels(Y, n_samples, warn=True):
    """Validate a {0, 1, NaN} label matrix and return the paper's (Y, J).

    ``warn=False`` leaves the warnings about labels without observed entries or positives
    to the caller.

    Returns
    -------
    Y_signed : ndarray of shape (n_labels, n_samples)
        +1 / -1 on observed entries, 0 on missing ones.
    J : ndarray of shape (n_labels, n_samples) or None
        1.0 on observed entries; None when all entries are observed.
    """
    if Y is None:
        raise ValueError("the estimator requires y to be passed, but the target y is None")
    if sp.issparse(Y):
        Y = Y.toarray()  # an n x l label matrix is small next to V (k x n) and U V
    Y = np.asarray(Y)
    if Y.dtype == object or not np.issubdtype(Y.dtype, np.number) and Y.dtype != bool:
        raise ValueError(f"Y must be numeric ({{0, 1}} with NaN for missing), got dtype {Y.dtype}")
    Y = Y.astype(float)
    if Y.ndim != 2:
        raise ValueError(f"Y must be a 2-D (n_samples, n_labels) indicator matrix, got "
                         f"{Y.ndim}-D input of shape {Y.shape}")
    if Y.shape[0] != n_samples:
        raise ValueError(f"X and Y have different numbers of rows: {n_samples} and {Y.shape[0]}")
    if Y.shape[1] == 0:
        raise ValueError("Y has no label column")
    observed = ~np.isnan(Y)
    if not np.isin(Y[observed], (0.0, 1.0)).all():
        bad = np.unique(Y[observed & ~np.isin(Y, (0.0, 1.0))])[:5]
        hint = (" (for the {-1, 0, +1} encoding use glocal.from_signed_labels)"
                if np.isin(bad, (-1.0,)).any() else "")
        raise ValueError(f"Y must contain only 0, 1 or NaN (missing); found {bad.tolist()}{hint}")
    if not observed.any():
        raise ValueError("every entry of Y is missing (NaN): nothing to learn from")
    if warn:
        _warn_about_labels(Y, observed)
    Y_signed = np.where(observed, 2.0 * np.nan_to_num(Y) - 1.0, 0.0).T.copy()
    J = None if observed.all() else observed.T.astype(float)
    return Y_signed, J


def _warn_about_labels(Y, observed):
    unobserved = np.flatnonzero(~observed.any(axis=0))
    never_positive = np.flatnonzero(observed.any(axis=0) & ~(np.nan_to_num(Y) > 0).any(axis=0))
    if unobserved.size:
        warnings.warn(f"labels {unobserved[:10].tolist()} have no observed entry: their scores "
                      "come from the other labels only", UserWarning)
    if never_positive.size:
        warnings.warn(f"labels {never_positive[:10].tolist()} are never positive among their "
                      "observed entries: they will be ranked low", UserWarning)


def check_groups(groups, n_samples):
    """Validate a user partition: one group id per row."""
    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.shape[0] != n_samples:
        raise ValueError(f"groups must give one group id per row of X ({n_samples}), got shape "
                         f"{groups.shape}")
    if groups.dtype.kind == "f":
        missing = not np.isfinite(groups).all()
    else:
        missing = groups.dtype.kind == "O" and any(
            g is None or (isinstance(g, float) and not np.isfinite(g)) for g in groups)
    if missing:
        raise ValueError("groups contains missing values (None, NaN or inf)")
    try:
        np.unique(groups)
    except TypeError:
        raise ValueError("groups must be labels of one comparable type (e.g. all ints or "
                         "all strings)") from None
    return groups


def check_optimizer_map(optimizer, names):
    """A dict ``optimizer`` must map block names U, V, W, Z to known optimizer names."""
    if not isinstance(optimizer, dict):
        return
    unknown_blocks = set(optimizer) - {"U", "V", "W", "Z"}
    if unknown_blocks:
        raise ValueError(f"optimizer has unknown blocks {sorted(unknown_blocks)}; "
                         "use U, V, W or Z")
    bad = {block: name for block, name in optimizer.items() if name not in names}
    if bad:
        raise ValueError(f"unknown optimizer names {bad}; expected one of {list(names)}")
