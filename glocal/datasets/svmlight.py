"""Multi-label svmlight / libsvm files (``l1,l2,... index:value ...`` per line).

Labels are non-negative integers and index the columns of ``Y`` directly, so a label that
no row carries still has its (all-zero) column, and the files of a split share columns.
"""

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_files

from .._utils.io import memory_budget
from ._base import dataset_bunch, default_names, split_stem


_BOM = b"\xef\xbb\xbf"


def load_svmlight(paths, n_labels=None, n_features=None, index_base=None):
    """Load a multi-label svmlight file, or the training and test files of a split, stacked.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        One file, or a training file and a test file.
    n_labels : int, default=None
        Number of labels; by default one more than the largest label present.
    n_features : int, default=None
        Number of features; by default inferred from the files (the largest index).
    index_base : {0, 1}, default=None
        The number of the first feature. By default 0 when some feature index of the
        files is 0, else 1. Data to score with a model must be read as the training data
        was: pass the ``index_base`` of the training data's Bunch. A file read with 0 that
        has no index 0 is refused (a 1-based file would be shifted by one): a 0-based file
        whose feature 0 is zero everywhere says so by an explicit ``0:0``.

    Returns
    -------
    Bunch
        ``X`` (CSR), ``Y``, ``feature_names`` (``x0``, ...), ``label_names`` (the label
        numbers as strings), ``index_base``, ``name`` and, for two files, ``train_idx``
        and ``test_idx``.

    Raises
    ------
    ValueError
        If a file is malformed (a cut last row included), a label is not an integer in
        ``[0, n_labels)``, an index is 0 with ``index_base=1`` or none is with
        ``index_base=0``, or the label numbers or feature indices ask for more than the
        memory budget (`glocal._utils.io.memory_budget`).
    """
    paths = [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]
    shown = " / ".join(str(path) for path in paths)
    if not 1 <= len(paths) <= 2:
        raise ValueError(f"expected one svmlight file or a train/test pair, got {len(paths)} files")
    if index_base not in (None, 0, 1):
        raise ValueError(f"index_base must be 0, 1 or None, got {index_base!r}")
    loaded = []
    for path in paths:
        _check_last_row(path)
        with open(path, "rb") as file:
            if file.read(3) != _BOM:  # a UTF-8 byte order mark is skipped
                file.seek(0)
            try:  # raw indices: the base is chosen below, over all files
                loaded += load_svmlight_files([file], dtype=np.float64, multilabel=True,
                                              zero_based=True)
            except (ValueError, OverflowError) as exc:  # OverflowError: an index past 2**31
                raise ValueError(f"{path}: malformed svmlight file: {exc}") from None
    Xs, label_sets = loaded[0::2], loaded[1::2]
    Y = _indicator([labels for part in label_sets for labels in part], n_labels, paths)

    width = max(part.shape[1] for part in Xs)
    if n_features is None:
        _check_feature_count(width, shown)
    for part in Xs:  # the files of a split share their columns
        part.resize(part.shape[0], width)
    X = sp.vstack(Xs, format="csr")
    if index_base is None:
        index_base = 0 if X.nnz and X.indices.min() == 0 else 1
    elif index_base == 0 and X.nnz and X.indices.min() > 0:
        # Read as the training data was, a 1-based file would be shifted by one feature:
        # which one it is cannot be told, so the file must say.
        raise ValueError(f"{shown}: no feature index 0, but features are numbered from 0 "
                         "here (as in the model's training data): a file numbering them "
                         "from 1 would be shifted by one feature; renumber it from 0, or, if "
                         "it is numbered from 0, give feature 0 in one row (e.g. '0:0')")
    if index_base == 1:
        if X.nnz and X.indices.min() == 0:
            raise ValueError(f"{shown}: feature index 0 in a file read with indices from 1 "
                             "(as the model's training data was)")
        X = X[:, 1:] if X.shape[1] else X
    if n_features is not None:
        if X.shape[1] > n_features:
            raise ValueError(f"{shown}: {X.shape[1]} features, more than the {n_features} "
                             "expected")
        X.resize(X.shape[0], n_features)  # the trailing features are zero in every row
    bunch = dataset_bunch(
        X,
        Y,
        default_names("x", X.shape[1]),
        [str(k) for k in range(Y.shape[1])],
        split_stem(paths[0])[0],
        n_train=Xs[0].shape[0] if len(Xs) == 2 else None,
    )
    bunch.index_base = index_base
    return bunch


def _check_last_row(path):
    """Refuse a file cut in its last row: a last line without its newline that does not end
    in a complete ``index:value`` pair (a row cut after a pair cannot be told apart)."""
    try:
        with open(path, "rb") as file:
            file.seek(0, os.SEEK_END)
            size = file.tell()
            file.seek(max(0, size - 4096))
            tail = file.read()
    except OSError:
        return  # the loader says what is wrong with the file
    if not tail or tail.endswith((b"\n", b"\r")):
        return
    tokens = tail.rsplit(b"\n", 1)[-1].split(b"#", 1)[0].split()
    # A row of labels only ("1,2") is complete; any other last token must be a whole pair.
    if not tokens or len(tokens) == 1 and b":" not in tokens[0]:
        return
    pair = tokens[-1].split(b":")
    if len(pair) != 2 or not all(_is_number(part) for part in pair):
        raise ValueError(f"{path}: the last row is cut short (it ends in "
                         f"'{tokens[-1].decode(errors='replace')}' without a newline)")


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


# A model of d features holds at least this many floats per feature (its weights, k-means
# centres, gradients): the least memory a feature index asks for.
_FLOATS_PER_FEATURE = 64


def _check_feature_count(n_columns, shown):
    """Refuse a largest feature index whose columns no model could hold in the budget."""
    need = n_columns * _FLOATS_PER_FEATURE * 8
    if need > memory_budget():
        raise ValueError(f"{shown}: feature index {n_columns - 1} asks for {n_columns} "
                         f"feature columns; a model of them needs at least {need / 2**30:.3g} "
                         f"GiB, more than the memory budget of {memory_budget() / 2**30:.3g} "
                         "GiB (GLOCAL_MEMORY_BUDGET)")


def _indicator(label_sets, n_labels, paths):
    """Indicator matrix of per-row label tuples, label k in column k."""
    rows = np.repeat(np.arange(len(label_sets)), [len(labels) for labels in label_sets])
    labels = np.fromiter((k for labels in label_sets for k in labels), dtype=float)
    shown = " / ".join(str(path) for path in paths)
    if labels.size and not (np.isfinite(labels).all() and (labels >= 0).all()
                            and (labels == np.round(labels)).all()):
        raise ValueError(f"{shown}: labels must be non-negative integers")
    if n_labels is None:
        n_labels = int(labels.max()) + 1 if labels.size else 0
        need = len(label_sets) * n_labels * np.dtype(int).itemsize
        if need > memory_budget():
            raise ValueError(f"{shown}: label {int(labels.max())} asks for {n_labels} label "
                             f"columns, a label matrix of {need / 2**30:.3g} GiB, more than "
                             f"the memory budget of {memory_budget() / 2**30:.3g} GiB "
                             "(GLOCAL_MEMORY_BUDGET; labels number the columns from 0)")
    elif labels.size and labels.max() >= n_labels:
        raise ValueError(f"{shown}: label {labels.max()} is out of range for n_labels={n_labels}")
    labels = labels.astype(np.intp)
    Y = np.zeros((len(label_sets), n_labels), dtype=int)
    Y[rows, labels] = 1
    return Y
