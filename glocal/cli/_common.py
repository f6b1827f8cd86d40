"""What the commands share: reading data and saved models, refusing outputs early, lists of
names and fractions, and warnings printed on one line."""

import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

from .._utils.io import check_output
from .._utils.progress import counted
from ..persistence import _load


@contextmanager
def _hint_replaced(python_hint, hint):
    """Errors raised in the block with the Python API's advice (``data_dir=...``) said as
    the command's options."""
    try:
        yield
    except (OSError, ValueError) as exc:
        text = str(exc)
        if python_hint not in text:
            raise
        raise type(exc)(text.replace(python_hint, hint)) from None


def _load_data(path, args, default, model=None):
    """A data file's rows of one split: "train", "test" or "all" (by default the rows of the
    file named: of scene-train.arff its own rows, not its test file's; of a dataset directory
    holding a predefined split, the ``default`` split). Missing labels (``?``) are NaN. With a
    saved ``model``, files without labels are accepted and svmlight files take the model's
    numbers of features and labels."""
    import numpy as np
    import scipy.sparse as sp

    from ..datasets import load

    shape = {}
    if model is not None:
        shape = dict(unlabeled=True, n_features=model["model"].n_features_in_,
                     n_labels=len(model["label_names"]), index_base=model["index_base"])
    data = load(path, xml=args.xml, missing_labels=True, **shape)
    split = args.split
    if split is None:  # a file stands for its own rows, a directory for its default split
        split = "all" if "train_idx" not in data else default if Path(path).is_dir() else "train"
    data.described = str(path)
    if split != "all":
        if f"{split}_idx" not in data:
            raise ValueError(f"{path} has no predefined {split} split; use --split all")
        rows = data[f"{split}_idx"]
        data.X, data.Y = data.X[rows], data.Y[rows]
        data.described = _split_file(path, split)
    # Said here, with the file's name: the estimators' messages cannot name it.
    if not data.X.shape[0]:
        where = "" if split == "all" else f" in its {split} split"
        raise ValueError(f"{path}: no rows{where}")
    if not data.X.shape[1]:
        dropped = (" (identifier attributes, such as strings, are dropped)"
                   if Path(path).suffix.lower() == ".arff" else "")
        raise ValueError(f"{path}: no feature columns{dropped}")
    values = data.X.data if sp.issparse(data.X) else np.asarray(data.X)
    bad = values.size - np.count_nonzero(np.isfinite(values))
    if bad:
        raise ValueError(f"{path}: {counted(bad, 'feature value')} "
                         f"{'is' if bad == 1 else 'are'} NaN or infinite (missing values?); "
                         "fill them in before fitting or scoring")
    return data


def _split_file(path, split):
    """The file holding the rows of a predefined split: of a train/test pair of files
    (scene-train.arff and scene-test.arff), the split's own; else 'the SPLIT split of PATH'."""
    from ..datasets.load import _dataset_in_directory, _with_test_part

    path = Path(path)
    files = _with_test_part(_dataset_in_directory(path) if path.is_dir() else path)
    if len(files) == 2:
        return str(files[0] if split == "train" else files[1])
    return f"the {split} split of {path}"


def _output(path, args, inputs=()):
    """Refuse now an output that could not be written later (see `glocal._utils.io.check_output`):
    one that exists, without --force; an input of the command, a link or a special file."""
    check_output(path, overwrite=args.force, inputs=inputs)


def _read_model(path):
    """A saved model (``"model"``) with what the commands need beside it: its label names
    (``0``, ``1``, ... when the file has none), feature names, index base and training-row
    digests (see `glocal.persistence.load_model`: nothing in the file is executed, the
    model has been checked to score a row of its features, and it is the estimator that
    `glocal.persistence.load_model` returns, so the commands predict as it does)."""
    import numpy as np

    from .._fitted import model_shape

    # One read of the file for the model and what was kept beside it (load_model and
    # load_model_info would each read and check it).
    saved = _load(path, "error")
    saved.pop("format")
    model = saved["model"]
    n_labels = model_shape(model)[1]
    saved.setdefault("label_names", [str(j) for j in range(n_labels)])
    saved.setdefault("feature_names", [])
    saved.setdefault("index_base", None)
    labels, features = saved["label_names"], saved["feature_names"]
    rows = saved.get("training_rows")
    if not (_strings(labels) and len(labels) == n_labels and _strings(features)
            and len(features) in (0, model.n_features_in_)
            and saved["index_base"] in (None, 0, 1)
            and (rows is None or isinstance(rows, np.ndarray) and rows.dtype == np.uint64)):
        raise ValueError(f"'{path}' is not a model saved by glocal: its label names, "
                         "feature names, index base or row digests are wrong")
    return saved


def _strings(values):
    return isinstance(values, list) and all(isinstance(value, str) for value in values)


def _check_data(saved, data, path):
    """Refuse data the saved model was not fitted for."""
    from ..datasets import known_names

    model, labels = saved["model"], saved["label_names"]
    if data.X.shape[1] != model.n_features_in_:
        hint = "" if data.Y.shape[1] else " (if the file has labels, name them with --xml)"
        raise ValueError(f"the model has {model.n_features_in_} features but {path} has "
                         f"{data.X.shape[1]}: it was fitted on other data{hint}")
    features = saved.get("feature_names")
    if features and known_names(features) and known_names(data.feature_names):
        differ = [name for name, own in zip(data.feature_names, features) if name != own]
        if differ:
            raise ValueError(f"{path}: features differ from the model's, e.g. "
                             f"'{differ[0]}' (a label not named by --xml?)")
    # Label names are compared where both files name their labels (svmlight files number
    # them, and unlabeled ones have none).
    theirs, ours = known_names(data.label_names), known_names(labels)
    if data.Y.shape[1] and (data.Y.shape[1] != len(labels)
                            or (theirs and ours and theirs != ours)):
        raise ValueError(f"{path}: its labels differ from the model's: it was fitted on "
                         "other data")


def _row_digests(X):
    """A 64-bit digest of every row's nonzero entries (dense and sparse rows alike), to tell
    later whether scored rows were training rows."""
    import hashlib

    import numpy as np
    import scipy.sparse as sp

    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.eliminate_zeros()
    digests = np.empty(X.shape[0], dtype=np.uint64)
    for i in range(X.shape[0]):
        row = slice(X.indptr[i], X.indptr[i + 1])
        key = X.indices[row].astype(np.int64).tobytes() + X.data[row].tobytes()
        digests[i] = int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little")
    return digests


def _names(text):
    return None if text is None else [name.strip() for name in text.split(",") if name.strip()]


def _fractions(text):
    if text is None:
        return None
    try:
        return [float(value) for value in _names(text)]
    except ValueError:
        raise ValueError(f"--rho takes comma-separated numbers, got {text!r}") from None


@contextmanager
def _one_line_warnings(command):
    """Print each distinct warning once, as one line without Python's source line (a
    reproduction repeats the same warning for every fit and fold)."""
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_printer(command)
        yield


def _one_line_printer(command):
    """A ``warnings.showwarning`` that prints each distinct text once, on one line."""
    shown = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        if text not in shown:
            shown.add(text)
            # One write per line: worker processes share the stream, and print's two
            # writes (text, newline) let their lines join.
            sys.stderr.write(f"glocal {command}: warning: {text}\n")
            sys.stderr.flush()
    return show


def _install_one_line_warnings(command):
    """Initializer of joblib's worker processes: their warnings print as ours do (each
    worker prints a distinct text once). The workers run cross-validation folds, whose
    label warnings the main process leaves out too (see glocal.reproduce.runner)."""
    from .._utils.validation import LabelWarning

    warnings.showwarning = _one_line_printer(command)
    warnings.simplefilter("ignore", LabelWarning)


def _worker_warnings(command):
    """Run joblib's process pools (the cross-validation of ``--jobs`` > 1) with workers
    whose warnings are one line each, like the main process's."""
    from joblib import parallel_config

    return parallel_config(backend="loky", initializer=_install_one_line_warnings,
                           initargs=(command,))
