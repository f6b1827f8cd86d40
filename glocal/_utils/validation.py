"""Input checks and the one conversion point between label encodings.

Outside the solver, labels are {0, 1} with NaN for a missing entry (scikit-learn's layout,
n_samples x n_labels). Inside, they are the paper's Y in {-1, 0, +1} (l x n) with 0 for a
missing entry, plus the observation mask J.
"""

import numbers
import re
import sys
import warnings
from contextlib import contextmanager

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import KFold, check_cv
from sklearn.utils.validation import _num_samples, check_array

from ..labels import SparseSignedLabels
from .progress import counted


class LabelWarning(UserWarning):
    """Warned when a label cannot be learned: no observed entry, or one class only.

    The message names the labels as ``labels [i, j, ...]``, their column indices in Y
    (the ``glocal`` command names them by the data file's label names). Silence it with
    ``warnings.filterwarnings("ignore", category=glocal.LabelWarning)``.
    """


# The (category, text) of every warning `warn_once` has shown in this process.
_SHOWN = set()


def warn_once(text, category, stacklevel=1):
    """``warnings.warn(text, category)``, shown once per process for each distinct text.

    A search or ``cross_val_score`` fits many times, and Python's "default" action shows a
    warning once per place only until the warning filters change, which every k-means of a
    fit and every task of scikit-learn's parallel helpers does. So where the filters would
    show a glocal warning once ("default", "module", "once"), it is shown the first time
    only; a filter of "always", "error" or "ignore" acts as usual. ``stacklevel`` as for
    `warnings.warn`, counted from the caller of this function.
    """
    module = sys._getframe(stacklevel).f_globals.get("__name__", "")
    if _action(text, category, module) in ("default", "module", "once"):
        if (category, text) in _SHOWN:
            return
        _SHOWN.add((category, text))
    warnings.warn(text, category, stacklevel=stacklevel + 1)


def _action(text, category, module):
    """The action of the first warning filter that matches (Python's rule; filters for one
    line number are passed over)."""
    for action, message, kind, place, lineno in warnings.filters:
        if (issubclass(category, kind) and not lineno
                and (message is None or message.match(text))
                and (place is None or place.match(module))):
            return action
    return warnings.defaultaction


def label_names_of(Y):
    """The column names of a DataFrame of labels when they are all strings, else None."""
    columns = getattr(Y, "columns", None)
    if columns is None or not all(isinstance(name, str) for name in columns):
        return None
    return list(columns)


def labels_text(indices, label_names=None):
    """``labels [0, 3]``, or ``labels 'a', 'd'`` by name: how label warnings name labels
    (at most ten, then ``...``)."""
    indices = [int(i) for i in indices]
    more = " ..." if len(indices) > 10 else ""
    if label_names is None:
        return f"labels {indices[:10]}{more}"
    return "labels " + ", ".join(repr(label_names[i]) for i in indices[:10]) + more


def name_labels(message, label_names):
    """A `LabelWarning` text with its ``labels [i, j]`` replaced by the labels' names."""
    if label_names is None:
        return message
    return re.sub(r"labels \[(\d+(?:, \d+)*)\]",
                  lambda match: labels_text(match.group(1).split(", "), label_names), message)


@contextmanager
def named_label_warnings(label_names):
    """Name labels in the `LabelWarning` messages raised inside this block.

    The warnings are recorded and issued again when the block ends, with "labels [0, 3]"
    replaced by "labels 'a', 'd'", so that Python's once-per-text filtering sees the final
    text (two datasets' label 3 are different labels). Other warnings pass through
    unchanged, in their order. ``label_names`` None leaves every message as it is.
    """
    if label_names is None:
        yield
        return
    try:
        with recorded_warnings() as records:
            yield
    finally:  # the warnings before an error are issued too
        reissue(records, label_names, stacklevel=3)


@contextmanager
def recorded_warnings(ignore=()):
    """Record every warning raised in the block as ``(category, text)`` pairs, in order
    (those of the categories ``ignore`` dropped), instead of showing them; for `reissue`."""
    records = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for category in ignore:
            warnings.simplefilter("ignore", category)
        try:
            yield records
        finally:
            records.extend((w.category, str(w.message)) for w in caught)


@contextmanager
def warnings_once(label_names=None):
    """Record the warnings raised in the block and, when it ends (by an error too), warn
    each distinct one once (`reissue`), as raised by the caller of the function holding the
    block. Yields the list of records, to which warnings recorded elsewhere (a joblib
    worker's, `call_recording_warnings`) may be added."""
    records = []
    try:
        with recorded_warnings() as caught:
            yield records
    finally:
        reissue(caught + records, label_names, stacklevel=4)


def call_recording_warnings(function, *args, ignore=()):
    """``function(*args)`` and the warnings it raised (see `recorded_warnings`): how a
    joblib worker hands its warnings to the process that shows them."""
    with recorded_warnings(ignore) as records:
        result = function(*args)
    return result, records


def reissue(records, label_names=None, stacklevel=2):
    """Warn each distinct ``(category, text)`` of ``records`` once, in order, labels named
    by ``label_names`` (see `name_labels`); ``stacklevel`` as for `warnings.warn`, counted
    from the caller of this function."""
    seen = set()
    for category, text in records:
        if issubclass(category, LabelWarning):
            text = name_labels(text, label_names)
        if (category, text) not in seen:
            seen.add((category, text))
            warn_once(text, category, stacklevel=stacklevel + 1)


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


# The largest Frobenius norm of X accepted, max ** (1/6). The solvers form X^T X and multiply
# it by arrays of its own scale and by their weights: LinearSVC's trust region (BR, MBR)
# forms C^3 ||X||^4 and, once that overflows, loops without end (measured: from ||X|| = 1e77
# at C = 1); the others fail in a factorization or return an all-zero model. Under this
# bound ||X||^4 stays below max / 5e102, room for any weight.
MAX_FEATURE_NORM = np.finfo(np.float64).max ** (1 / 6)  # 2.4e51


def check_features(X, n_features=None, estimator="the model"):
    """Validate X (dense or sparse, finite, of a norm the solvers can square twice) and
    return it as float64, CSR when sparse. A DataFrame column that is not numbers (dates,
    strings) is named in the error; integer columns beyond 2^53, which float64 rounds, are
    named in a warning."""
    if getattr(getattr(X, "dtype", None), "kind", None) == "c":
        # scikit-learn's words (its estimator checks look for them), naming X
        raise ValueError(f"Complex data not supported: X must be real, got dtype {X.dtype}")
    _warn_if_integers_round(X)
    if hasattr(X, "columns") and hasattr(X, "dtypes") and any(
            getattr(dtype, "kind", "O") in "Mm" for dtype in X.dtypes):
        _raise_if_a_column_is_not_numbers(X)  # dates alone would become nanoseconds
    try:
        X = check_array(X, accept_sparse="csr", dtype=np.float64, input_name="X")
    except (TypeError, ValueError):  # numpy's words name no column: say which one
        _raise_if_a_column_is_not_numbers(X)
        raise
    if sp.issparse(X) and X.indices.dtype != np.int32 and X.nnz < 2**31 and max(X.shape) < 2**31:
        # 64-bit indices (scipy's choice for some inputs) that fit in 32 bits: scikit-learn's
        # k-means and SVMs take 32-bit indices only.
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)),
                          shape=X.shape)
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"X has {X.shape[1]} features, but {estimator} is expecting "
                         f"{n_features} features as input")
    values = X.data if sp.issparse(X) else X
    largest = max(values.max(), -values.min()) if values.size else 0.0
    # The norm is at most largest * sqrt(size): only beyond the bound is it computed, on a
    # scaled copy whose squares do not overflow.
    if largest > MAX_FEATURE_NORM / np.sqrt(values.size or 1):
        relative = np.linalg.norm(values / largest)  # the norm over the largest value
        if relative > MAX_FEATURE_NORM / largest:
            with np.errstate(over="ignore"):
                norm = largest * relative
            size = f"is {norm:.3g}" if np.isfinite(norm) else "overflows float64"
            raise ValueError(f"X is too large for float64 arithmetic: its norm {size}, and "
                             f"the solvers' products with X^T X overflow beyond a norm of "
                             f"{MAX_FEATURE_NORM:.3g}; rescale X (e.g. "
                             f"sklearn.preprocessing.MaxAbsScaler)")
    return X


def _raise_if_a_column_is_not_numbers(X):
    """Name the first column of a DataFrame X that does not convert to float64."""
    for name in getattr(X, "columns", ()):
        try:  # numpy turns dates and durations into nanoseconds: not features
            if getattr(X[name].dtype, "kind", "O") in "Mm":
                raise TypeError
            np.asarray(X[name], dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"X's column {name!r} holds {X[name].dtype} values, not "
                             "numbers; convert it to numbers (e.g. a date to days since a "
                             "start) or drop it") from None


# float64 holds every integer up to this size, and not all beyond it.
_EXACT_INTEGERS = 2**53


def _warn_if_integers_round(X):
    """Warn once, naming them, about integer columns of X (a DataFrame, a numpy array or
    a scipy-sparse matrix) with values beyond 2^53, which float64 rounds (near 2^63, to
    multiples of 2048: distinct values become equal, a column may become constant)."""
    if hasattr(X, "columns") and hasattr(X, "dtypes"):
        names = [name for name, dtype in zip(X.columns, X.dtypes)
                 if getattr(dtype, "kind", "O") in "iu" and _beyond_exact(X[name].max(),
                                                                          X[name].min())]
    elif getattr(getattr(X, "dtype", None), "kind", None) in ("i", "u") and np.size(X):
        coo = X.tocoo() if sp.issparse(X) else None
        values = coo.data if coo is not None else np.asarray(X).reshape(len(X), -1)
        big = (values > _EXACT_INTEGERS) | (values < -_EXACT_INTEGERS)
        names = (np.unique(coo.col[big]) if coo is not None
                 else np.flatnonzero(big.any(axis=0))).tolist()
    else:
        return
    if names:
        warn_once(f"X's {'column' if len(names) == 1 else 'columns'} "
                  f"{', '.join(map(repr, names[:5]))}"
                  f"{f' and {len(names) - 5} more' if len(names) > 5 else ''} "
                  f"{'holds' if len(names) == 1 else 'hold'} integers beyond 2^53, which "
                  "float64 rounds (near 2^63 to multiples of 2048: distinct values may become "
                  "equal); subtract an offset or rescale them before fitting", UserWarning,
                  stacklevel=3)


def _beyond_exact(largest, smallest):
    """Whether a column of these extremes (NA for an empty column) has an integer beyond
    2^53."""
    import pandas as pd

    return not pd.isna(largest) and (int(largest) > _EXACT_INTEGERS
                                     or int(smallest) < -_EXACT_INTEGERS)


def check_labels(Y, n_samples, warn=True, keep_sparse=False):
    """Validate a {0, 1, NaN} label matrix and return the paper's (Y, J).

    ``warn=False`` leaves the warnings about labels without observed entries or positives
    to the caller. ``keep_sparse=True`` returns a scipy-sparse Y (stored ones positive,
    stored NaN missing, every other entry an observed negative) as a
    `glocal.labels.SparseSignedLabels` with its `glocal.labels.SparseMask` (or None),
    never as dense l x n floats, for a solver that supports them (the paper's squared
    loss without class weights).

    Returns
    -------
    Y_signed : ndarray of shape (n_labels, n_samples) or SparseSignedLabels
        +1 / -1 on observed entries, 0 on missing ones.
    J : ndarray of shape (n_labels, n_samples) or SparseMask or None
        1.0 on observed entries; None when all entries are observed.
    """
    if Y is None:
        raise ValueError("the estimator requires y to be passed, but the target y is None")
    if sp.issparse(Y) and keep_sparse:
        labels = _sparse_signed_labels(Y, n_samples, warn)
        return labels, labels.mask
    names = label_names_of(Y)
    Y = dense_labels(Y)
    check_label_type_and_shape(Y, n_samples)
    Y = Y.astype(float)
    observed = ~np.isnan(Y)
    check_label_counts(np.unique(Y[observed & ~np.isin(Y, (0.0, 1.0))])[:5],
                       observed.sum(axis=0), (np.nan_to_num(Y) > 0).sum(axis=0), warn, names)
    Y_signed = signed_labels(Y, observed).copy()
    J = None if observed.all() else observed.T.astype(float)
    return Y_signed, J


def dense_labels(Y):
    """Labels as a dense array, missing entries NaN: scipy-sparse Y densified (an n x l label
    matrix is small next to V, k x n, and U V), None and pandas.NA of object arrays and
    pandas nullable frames (``Float64``, ``Int64``, ``boolean``) made NaN. Not yet checked
    (see `check_labels`)."""
    Y = np.asarray(Y.toarray() if sp.issparse(Y) else Y)
    return _object_labels(Y) if Y.dtype == object else Y


def check_n_groups(n_groups, n_samples):
    """Refuse more groups than rows."""
    if n_groups > n_samples:
        raise ValueError(f"n_groups={n_groups} is larger than the number of samples "
                         f"(n_samples={n_samples})")


def check_label_type_and_shape(Y, n_samples):
    """The dtype and shape checks of `check_labels`, for a dense or scipy-sparse Y."""
    if Y.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: Y must be real ({{0, 1}} with NaN for "
                         f"missing), got dtype {Y.dtype}")
    if not np.issubdtype(Y.dtype, np.number) and Y.dtype != bool:
        raise ValueError(f"Y must be numeric ({{0, 1}} with NaN for missing), got dtype {Y.dtype}")
    if Y.ndim != 2:
        raise ValueError(f"Y must be a 2-D (n_samples, n_labels) indicator matrix, got "
                         f"{Y.ndim}-D input of shape {Y.shape}")
    if Y.shape[0] != n_samples:
        raise ValueError(f"X and Y have different numbers of rows: {n_samples} and {Y.shape[0]}")
    if Y.shape[1] == 0:
        raise ValueError("Y has no label column")


def check_label_counts(bad, n_observed, n_positive, warn=True, label_names=None):
    """The value checks of `check_labels` from what they need: up to five values other than
    0, 1 and NaN (``bad``) and each label's observed entries and positives (also summed
    over the chunks of a Dask Y, `glocal.solver.dask_backend.check_training_data`)."""
    if len(bad):
        raise_bad_labels(bad)
    if not np.any(n_observed):
        raise ValueError("every entry of Y is missing (NaN): nothing to learn from")
    if warn:
        warn_about_labels(n_observed, n_positive, label_names)


def _sparse_signed_labels(Y, n_samples, warn):
    """`check_labels` of a scipy-sparse Y, kept sparse (see there)."""
    check_label_type_and_shape(Y, n_samples)
    # Labels x samples, duplicates of COO input summed (as toarray would), zeros dropped.
    stored = sp.csr_matrix(Y.T, dtype=np.float64)
    stored.sum_duplicates()
    stored.eliminate_zeros()
    missing = np.isnan(stored.data)
    bad = ~missing & (stored.data != 1.0)
    if bad.any():
        raise_bad_labels(np.unique(stored.data[bad])[:5])
    if missing.sum() == np.prod(stored.shape):
        raise ValueError("every entry of Y is missing (NaN): nothing to learn from")
    positives, missing_entries = stored.copy(), None
    if missing.any():
        positives.data = (~missing).astype(float)  # NaN -> 0, dropped below
        missing_entries = stored.copy()
        missing_entries.data = missing.astype(float)
        missing_entries.eliminate_zeros()
    positives.eliminate_zeros()
    labels = SparseSignedLabels(positives, missing_entries)
    if warn:
        warn_about_labels(*labels.label_counts())
    return labels


def signed_labels(Y, observed):
    """The paper's Y (l x n): +1 / -1 on observed entries, 0 on missing ones, from {0, 1, NaN}
    labels (n x l) and their observed mask; numpy or Dask arrays."""
    return np.where(observed, 2.0 * np.nan_to_num(Y) - 1.0, 0.0).T


def raise_bad_labels(bad):
    """The ValueError for label values ``bad`` other than 0, 1 and NaN."""
    hint = (" (for the {-1, 0, +1} encoding use glocal.from_signed_labels)"
            if np.isin(bad, (-1.0,)).any() else "")
    raise ValueError(f"Y must contain only 0, 1 or NaN (missing); found {bad.tolist()}{hint}")


def _object_labels(Y):
    """Labels of dtype object as floats: None and pandas.NA are missing (NaN), real numbers
    and booleans are kept, anything else is an error."""
    pandas = sys.modules.get("pandas")  # pd.NA can only come from an imported pandas
    missing_values = (None,) if pandas is None else (None, pandas.NA)

    def kind(value):
        if any(value is missing for missing in missing_values):
            return 0
        return 1 if isinstance(value, (numbers.Real, np.bool_)) else 2

    kinds = np.vectorize(kind, otypes=[np.int8])(Y)
    if (kinds == 2).any():
        other = Y[kinds == 2][0]
        raise ValueError(f"Y must be numeric ({{0, 1}} with NaN or None for missing), found "
                         f"{other!r} of type {type(other).__name__}")
    return np.where(kinds == 0, np.nan, Y).astype(float)


def warn_about_labels(n_observed, n_positive, label_names=None):
    """Warn about labels without observed entries or positives, from their counts (labels
    named by ``label_names`` when given, else by index)."""
    unobserved = np.flatnonzero(n_observed == 0)
    never_positive = np.flatnonzero((n_observed > 0) & (n_positive == 0))
    if unobserved.size:
        warn_once(f"{labels_text(unobserved, label_names)} have no observed entry: their "
                  "scores come from the other labels only", LabelWarning)
    if never_positive.size:
        warn_once(f"{labels_text(never_positive, label_names)} are never positive among "
                  "their observed entries: they will be ranked low", LabelWarning)


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


def cv_folds(cv, X, random_state=None):
    """The (training, validation) rows of every fold of ``cv`` on X, checked by
    `check_folds`; an int ``cv`` means shuffled `sklearn.model_selection.KFold` seeded by
    ``random_state``."""
    if isinstance(cv, numbers.Integral):
        cv = KFold(n_splits=cv, shuffle=True, random_state=random_state)
    return check_folds(list(check_cv(cv).split(X)), _num_samples(X))


def check_folds(folds, n_samples):
    """Refuse cross-validation folds whose rows are not row numbers (or a boolean mask) of
    the ``n_samples`` rows of X; returns them."""
    for i, fold in enumerate(folds):
        for name, rows in zip(("training", "validation"), fold):
            rows = np.asarray(rows)
            inside = (rows.dtype == bool and rows.shape == (n_samples,) or rows.ndim == 1
                      and rows.dtype.kind in "iu"
                      and np.all((rows >= -n_samples) & (rows < n_samples)))
            if not inside:
                shown = ", ".join(map(str, rows.ravel()[:5])) + (" ..." if rows.size > 5
                                                                  else "")
                raise ValueError(f"cv: the {name} rows of fold {i + 1} are not row numbers "
                                 f"of X's {n_samples} rows (or a mask of them): {shown}")
    return folds


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


def check_folds_can_be_scored(Y, folds):
    """The default scorer ranks the rows with an observed positive: every validation fold
    needs one (else a fold's score is undefined)."""
    has_positive = (Y == 1).any(axis=1)
    if not has_positive.any():
        raise ValueError("Y has no observed positive label: GLOCALCV's folds cannot be "
                         "scored by average precision")
    for i, (_, test) in enumerate(folds):
        if not has_positive[test].any():
            n = int(has_positive.sum())
            raise ValueError(f"validation fold {i + 1} of {len(folds)} has no row with an "
                             "observed positive label, so its average precision is "
                             f"undefined (Y has {counted(n, 'such row')}); use "
                             "fewer folds (cv)")
