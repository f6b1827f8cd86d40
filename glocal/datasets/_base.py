"""What every dataset reader shares: file-name conventions and the returned Bunch."""

from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

_PARTS = ("train", "test")


def split_stem(path):
    """Split a file name into its dataset name and split part.

    Parameters
    ----------
    path : str or path-like
        A data file such as ``scene-train.arff``.

    Returns
    -------
    name : str
        The file stem without a trailing ``-train`` or ``-test`` (``scene``).
    part : {"train", "test"} or None
        Which part of a predefined split the file holds, if any.
    """
    stem = Path(path).stem
    for part in _PARTS:
        if stem.lower().endswith("-" + part):
            return stem[: -len(part) - 1], part
    return stem, None


def dataset_bunch(X, Y, feature_names, label_names, name, n_train=None):
    """Assemble the Bunch that all loaders return.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
    Y : ndarray of shape (n_samples, n_labels)
        Label indicator matrix; stored as int {0, 1}, or as float when it has NaN (missing
        labels).
    feature_names, label_names : sequence of str
    name : str
    n_train : int, default=None
        For a predefined split, the number of leading rows that form the training part;
        the remaining rows are the test part.

    Returns
    -------
    Bunch
        ``X``, ``Y``, ``feature_names``, ``label_names``, ``name`` and, when ``n_train`` is
        given, the index arrays ``train_idx`` and ``test_idx``.
    """
    bunch = Bunch(
        X=X,
        Y=np.asarray(Y, dtype=float if np.isnan(Y).any() else int),
        feature_names=[str(f) for f in feature_names],
        label_names=[str(lab) for lab in label_names],
        name=name,
    )
    if n_train is not None:
        bunch.train_idx = np.arange(n_train)
        bunch.test_idx = np.arange(n_train, X.shape[0])
    return bunch


def default_names(prefix, n):
    """Names ``prefix0 .. prefix{n-1}`` for formats that store no names."""
    return [f"{prefix}{i}" for i in range(n)]


def known_names(names):
    """``names`` as a list, or None when they are made up: `default_names` (``x0``, ``y0``,
    ...) or the positions ``0, 1, ...`` of formats that store no names."""
    names = list(names)
    made_up = all(name in (f"x{i}", f"y{i}", str(i)) for i, name in enumerate(names))
    return None if made_up else names
