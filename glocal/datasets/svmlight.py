"""Multi-label svmlight / libsvm files (``l1,l2,... index:value ...`` per line).

Labels are non-negative integers and index the columns of ``Y`` directly, so a label that
no row carries still has its (all-zero) column, and the files of a split share columns.
"""

import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_svmlight_files

from ._base import dataset_bunch, default_names, split_stem


def load_svmlight(paths, n_labels=None, n_features=None):
    """Load a multi-label svmlight file, or the training and test files of a split, stacked.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        One file, or a training file and a test file.
    n_labels : int, default=None
        Number of labels; by default one more than the largest label present.
    n_features : int, default=None
        Number of features; by default inferred from the files (the largest index).

    Returns
    -------
    Bunch
        ``X`` (CSR), ``Y``, ``feature_names`` (``x0``, ...), ``label_names`` (the label
        numbers as strings), ``name`` and, for two files, ``train_idx`` and ``test_idx``.

    Raises
    ------
    ValueError
        If a file is malformed or a label is not an integer in ``[0, n_labels)``.
    """
    paths = [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]
    shown = " / ".join(str(path) for path in paths)
    if not 1 <= len(paths) <= 2:
        raise ValueError(f"expected one svmlight file or a train/test pair, got {len(paths)} files")
    try:
        loaded = load_svmlight_files(
            [str(path) for path in paths], dtype=np.float64, multilabel=True
        )
    except ValueError as exc:
        raise ValueError(f"{shown}: malformed svmlight file: {exc}") from exc
    Xs, label_sets = loaded[0::2], loaded[1::2]
    Y = _indicator([labels for part in label_sets for labels in part], n_labels, paths)

    X = sp.vstack(Xs, format="csr")
    if n_features is not None:
        if X.shape[1] > n_features:
            raise ValueError(f"{shown}: {X.shape[1]} features, more than the {n_features} "
                             "expected")
        X.resize(X.shape[0], n_features)  # the trailing features are zero in every row
    return dataset_bunch(
        X,
        Y,
        default_names("x", X.shape[1]),
        [str(k) for k in range(Y.shape[1])],
        split_stem(paths[0])[0],
        n_train=Xs[0].shape[0] if len(Xs) == 2 else None,
    )


def _indicator(label_sets, n_labels, paths):
    """Indicator matrix of per-row label tuples, label k in column k."""
    rows = np.repeat(np.arange(len(label_sets)), [len(labels) for labels in label_sets])
    labels = np.fromiter((k for labels in label_sets for k in labels), dtype=float)
    shown = " / ".join(str(path) for path in paths)
    if labels.size and (np.any(labels < 0) or np.any(labels != np.round(labels))):
        raise ValueError(f"{shown}: labels must be non-negative integers")
    labels = labels.astype(np.intp)
    if n_labels is None:
        n_labels = int(labels.max()) + 1 if labels.size else 0
    elif labels.size and labels.max() >= n_labels:
        raise ValueError(f"{shown}: label {labels.max()} is out of range for n_labels={n_labels}")
    Y = np.zeros((len(label_sets), n_labels), dtype=int)
    Y[rows, labels] = 1
    return Y
