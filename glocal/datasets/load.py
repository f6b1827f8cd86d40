"""One entry point for multi-label data files, and the lookup of datasets by name."""

import os
from collections import defaultdict
from pathlib import Path

from ._base import split_stem
from .arff import _default_xml, load_arff
from .matlab import load_mat
from .svmlight import load_svmlight

_SVMLIGHT = (".svm", ".svmlight", ".libsvm", ".txt")
# When a dataset comes in several formats, the earlier one wins: ARFF carries the names.
_EXTENSIONS = (".arff", ".mat") + _SVMLIGHT
# A training file stands for its split (it brings the test file along).
_PART_ORDER = {"train": 0, None: 1, "test": 2}
_HINT = "pass data_dir=... or set the GLOCAL_DATA environment variable to the data directory"


def load(path, xml=None, *, unlabeled=False, missing_labels=False, n_features=None,
         n_labels=None, index_base=None):
    """Load a multi-label dataset from a file or a dataset directory.

    Parameters
    ----------
    path : path-like
        An ``.arff`` file (Mulan or MEKA), a ``.mat`` file, or a multi-label svmlight file
        (``.svm``, ``.svmlight``, ``.libsvm``, ``.txt``). For ``<name>-train.<ext>`` with a
        ``<name>-test.<ext>`` beside it, both are loaded and stacked. A directory stands for
        the dataset in it named like the directory, or else for its only dataset.
    xml : path-like, default=None
        Mulan label XML of an ARFF file; by default ``<name>.xml`` beside it, where
        ``name`` is the file stem without ``-train``/``-test``.
    unlabeled : bool, default=False
        Accept a file without labels (new data to predict on); ``Y`` then has no columns.
        Such a file is: an ARFF file without any of the labels its XML names, with MEKA
        ``-C 0``, or with neither an XML file nor ``-C`` (all attributes are features);
        a ``.mat`` file with ``data`` and no ``target``; an svmlight file whose rows carry
        no label (each line starts with a space, then ``index:value`` pairs). Off by
        default, so that a forgotten XML file is an error rather than labels taken for
        features.
    missing_labels : bool, default=False
        Read a missing label value of an ARFF file (``?``) as NaN, an unobserved entry that
        the estimators leave out of their fit. By default it is an error.
    n_features, n_labels : int, default=None
        For svmlight files, which do not record them: the number of feature columns and
        label columns (e.g. those of a fitted model), instead of the largest index present.
    index_base : {0, 1}, default=None
        For svmlight files: the number of their first feature, by default 0 when some
        feature index is 0, else 1. New data must be read as the training data was: pass
        the ``index_base`` of the training data's Bunch (a file with index 0 is then
        refused for a base of 1).

    Returns
    -------
    data : Bunch
        With the attributes:

        - ``X``: ndarray or CSR matrix of shape (n_samples, n_features), float64; CSR when
          the file stores sparse rows.
        - ``Y``: ndarray of shape (n_samples, n_labels), int, 1 where the label is relevant,
          else 0 (float with NaN where a label is missing, with ``missing_labels``); no
          columns for an unlabeled file.
        - ``feature_names``, ``label_names``: lists of str, generated (``x0``, ``y0``, ...)
          for formats without names.
        - ``name``: str.
        - ``index_base``: 0 or 1, only for svmlight files (see above).
        - ``train_idx``, ``test_idx``: ndarrays of int, only for a predefined split: its
          rows in X and Y (training rows first).

    Raises
    ------
    FileNotFoundError
        If ``path`` or the given XML does not exist, or a directory holds no data file.
    ValueError
        If the extension is unknown or a file is malformed (see the format modules).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"No such dataset file or directory: '{path}'")
    if path.is_dir():
        path = _dataset_in_directory(path)
    if not path.is_file():  # reading a pipe or a device would wait, or never end
        raise ValueError(f"{path}: not a regular file (a pipe or a device?)")
    suffix = path.suffix.lower()
    if xml is not None and suffix != ".arff":
        raise ValueError(f"{path}: a label XML file applies to ARFF files only")
    if suffix == ".arff":
        return load_arff(_with_test_part(path), xml=xml, unlabeled=unlabeled,
                         missing_labels=missing_labels)
    if suffix == ".mat":
        return load_mat(path, unlabeled=unlabeled)
    if suffix in _SVMLIGHT:
        return load_svmlight(_with_test_part(path), n_labels=n_labels, n_features=n_features,
                             index_base=index_base)
    raise ValueError(
        f"{path}: unknown extension '{path.suffix}'; expected one of {', '.join(_EXTENSIONS)}"
    )


def input_files(path, xml=None):
    """The files `load` reads for ``path`` and ``xml``: the data file, the test file of a
    split, and the label XML of an ARFF file; every file of a directory that is no dataset.
    Files that do not exist are left out."""
    path = Path(path)
    if path.is_dir():
        try:
            path = _dataset_in_directory(path)
        except (FileNotFoundError, ValueError):
            return sorted(child for child in path.iterdir() if child.is_file())
    files = _with_test_part(path) if path.is_file() else []
    if path.suffix.lower() == ".arff":
        files.append(Path(xml) if xml is not None else _default_xml(path))
    return [file for file in files if file.is_file()]


def load_dataset(name, data_dir=None):
    """Find a dataset by name in a data directory and load it with :func:`load`.

    Parameters
    ----------
    name : str
        Dataset name, case-insensitive. It is looked up as a folder ``<name>/`` of the data
        directory, then as files ``<name>.<ext>`` or ``<name>-train.<ext>`` in the data
        directory or one of its folders. ARFF is preferred over ``.mat`` over svmlight.
    data_dir : path-like, default=None
        The data directory; by default the environment variable ``GLOCAL_DATA``.

    Returns
    -------
    Bunch
        As returned by :func:`load`.

    Raises
    ------
    FileNotFoundError
        If there is no data directory or no dataset of that name in it.
    """
    data_dir = data_dir if data_dir is not None else os.environ.get("GLOCAL_DATA")
    if data_dir is None:
        raise FileNotFoundError(f"No data directory to look for dataset '{name}' in: {_HINT}")
    root = Path(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"Data directory '{root}' does not exist: {_HINT}")
    folders = sorted(child for child in root.iterdir() if child.is_dir())
    for folder in folders:
        if folder.name.lower() == name.lower():
            return load(folder)
    for directory in [root, *folders]:
        files = _datasets(directory).get(name.lower())
        if files:
            return load(_preferred(files))
    raise FileNotFoundError(
        f"No dataset named '{name}' in '{root}' (looked for a folder '{name}' and for files "
        f"'{name}.*' or '{name}-train.*' there and in its folders); {_HINT}"
    )


def _datasets(directory):
    """Data files of a directory, grouped by lower-case dataset name."""
    found = defaultdict(list)
    for child in sorted(directory.iterdir()):
        if child.is_file() and child.suffix.lower() in _EXTENSIONS:
            found[split_stem(child)[0].lower()].append(child)
    return found


def _dataset_in_directory(directory):
    datasets = _datasets(directory)
    if not datasets:
        raise FileNotFoundError(
            f"No data file ({', '.join(_EXTENSIONS)}) in directory '{directory}'"
        )
    files = datasets.get(directory.name.lower())
    if files is None:
        if len(datasets) > 1:
            raise ValueError(
                f"{directory}: holds several datasets ({', '.join(sorted(datasets))}); "
                "load one of its files"
            )
        (files,) = datasets.values()
    return _preferred(files)


def _preferred(files):
    return min(
        files,
        key=lambda path: (_EXTENSIONS.index(path.suffix.lower()), _PART_ORDER[split_stem(path)[1]]),
    )


def _with_test_part(path):
    """The file, plus its test file when it is the training file of a split."""
    name, part = split_stem(path)
    test = path.with_name(f"{name}-test{path.suffix}")
    return [path, test] if part == "train" and test.is_file() else [path]
