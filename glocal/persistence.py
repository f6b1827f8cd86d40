"""Model files that cannot run code when loaded: skops' format, with the glocal version inside.

A pickle (``pickle``, ``joblib``) stores instructions for rebuilding an object, and loading
one runs them: a pickle from an untrusted source can run any code on your machine. The files
written here use `skops.io <https://skops.readthedocs.io>`_, a zip of JSON and ``.npy``
arrays from which only types named in advance are rebuilt: numpy arrays, Python's plain
types, scikit-learn's estimators (a Pipeline and its steps) and glocal's estimators. Nothing
in such a file is executed, and what it holds is checked as data before it is used: its
declared sizes against a memory budget before anything is read, then every attribute of
every estimator against what its class's ``fit`` sets (names, real and finite values,
shapes that agree), and every parameter against the class's constraints.
"""

import warnings
from pathlib import Path

from ._utils.io import atomic_output, check_declared_size, one_line

__all__ = ["load_model", "load_model_info", "save_model"]

# The classes rebuilt beyond skops' defaults (numpy arrays, builtins, scikit-learn's
# estimators): glocal's estimators, and scikit-learn's cross-validation splitters (plain
# numbers and arrays) that GLOCALCV's ``cv`` may hold.
_ESTIMATORS = ("glocal.estimator.GLOCAL", "glocal.estimator.GLObal", "glocal.estimator.loCAL",
               "glocal.model_selection.GLOCALCV", "glocal.baselines.br.BR",
               "glocal.baselines.leml.LEML", "glocal.baselines.maxide.MAXIDE",
               "glocal.baselines.mlloc.MLLOC", "glocal.baselines.mllrc.MLLRC",
               "glocal.baselines.two_stage.TwoStage", "glocal.baselines.two_stage.MBR",
               "glocal.baselines.two_stage.MMLLOC", "glocal.thresholds.LabelThresholdsCV")
_TRUSTED = _ESTIMATORS + tuple(
    f"sklearn.model_selection._split.{name}" for name in (
        "KFold", "RepeatedKFold", "ShuffleSplit", "GroupKFold", "PredefinedSplit",
        "TimeSeriesSplit", "LeaveOneOut"))
_FORMAT = "glocal model"
_RESERVED = ("format", "glocal_version", "model")
_NOT_A_MODEL = "is not a model saved by glocal"
_PICKLE_OPCODES = (b"\x80", b"(", b"}", b"]", b"c")  # protocol >= 2, or older pickles


def save_model(path, model, *, overwrite=False, **info):
    """Save a fitted glocal estimator, or a Pipeline ending in one, in skops' secure format.

    The file holds the model, the glocal version that wrote it, and ``info``; it is written
    whole or not at all, and only if `load_model` would load it: the same checks run
    first. Prefer this to ``pickle`` or ``joblib``: loading a pickle runs the code it holds,
    so a pickle from someone else can do anything on your machine, while `load_model`
    rebuilds numpy arrays, plain Python values, scikit-learn's and glocal's estimators only.

    Parameters
    ----------
    path : path-like
        The file to write (e.g. ``model.skops``).
    model : estimator
        A fitted estimator of glocal (`glocal.GLOCAL`, `glocal.GLOCALCV`, the baselines of
        `glocal.baselines`), or a fitted `sklearn.pipeline.Pipeline` whose last step is
        one (its other steps scikit-learn transformers holding no functions). A model
        fitted on Dask arrays is saved once its ``V_`` and ``groups_`` are computed.
    overwrite : bool, default=False
        Whether an existing file at ``path`` may be replaced (never a directory, a link, a
        pipe or a device).
    **info
        Plain values to keep beside the model (None, bool, int, float, str, numpy arrays
        of numbers or strings, and lists, tuples and dicts of them), returned by
        `load_model_info`. ``label_names=[...]`` names the labels for the ``glocal``
        command.

    Raises
    ------
    TypeError
        If ``model`` is not a glocal estimator or such a Pipeline, or ``info`` holds
        something other than plain values or uses a name of the file's own (``format``,
        ``glocal_version``, ``model``).
    ValueError
        If the model is not fitted, or holds what `load_model` refuses (non-finite or
        inconsistent arrays, invalid parameters, functions, types it does not rebuild).
    FileExistsError
        If ``path`` exists and ``overwrite`` is False, or is a link.
    """
    import skops.io as sio

    from . import __version__
    from ._fitted import ModelError, check_plain

    _check_kind(model)
    for key, value in info.items():
        if key in _RESERVED:
            raise TypeError(f"save_model: '{key}' is a name of the file's own; keep the "
                            "value under another name")
        try:
            check_plain(value, key)
        except ModelError as exc:
            raise TypeError(f"save_model keeps plain values beside the model: {exc}") from None
    try:
        _check_contents(model)
    except ModelError as exc:
        raise ValueError(f"save_model: {exc}") from None
    contents = {"format": _FORMAT, "glocal_version": __version__, **info, "model": model}
    try:
        data = sio.dumps(contents)
    except Exception as exc:  # skops' own refusals of a type, deep in its encoder
        raise ValueError(f"save_model: the model cannot be written: {_first_line(exc)}") from None
    untrusted = sorted(set(sio.get_untrusted_types(data=data)) - set(_TRUSTED))
    if untrusted:
        raise ValueError(f"save_model: the model holds types that load_model does not "
                         f"rebuild: {', '.join(untrusted[:3])}")
    with atomic_output(path, overwrite=overwrite, binary=True) as file:
        file.write(data)


def load_model(path, *, other_version="error"):
    """Load the estimator that `save_model` saved, without running any code the file may hold.

    Only numpy arrays, plain Python values, scikit-learn's estimators and glocal's are
    rebuilt; a file holding any other type is refused before anything is rebuilt, and so is
    a file whose declared sizes (its zip members, ``schema.json``, the ``.npy`` headers)
    exceed the memory budget (a quarter of the machine's memory, or the environment variable
    ``GLOCAL_MEMORY_BUDGET`` in GiB) or expand like a zip bomb. The
    model rebuilt is then checked as data: every attribute against what its class's ``fit``
    sets (real, finite, shapes consistent with its features and labels; nothing shadowing
    a method, no function), every parameter against the class's constraints, and it must
    score a row. Pickle and joblib files are refused unread: loading one runs the code it
    holds (a pickle from someone else can do anything on your machine), so load those only
    if you made them.

    Parameters
    ----------
    path : path-like
        A file written by `save_model` (or by ``glocal fit``).
    other_version : {"error", "warn"}, default="error"
        What to do with a file written by another version of glocal, whose estimator may
        hold other attributes: refuse it, or load it with a `UserWarning`.

    Returns
    -------
    model : estimator
        The fitted estimator (or Pipeline) given to `save_model`, ready to ``predict``.
        What was kept beside it is read by `load_model_info`. A file of an earlier
        ``glocal fit``, which kept GLOCALCV's refitted model with its tuned thresholds
        beside it (info ``thresholds``), gives a `glocal.thresholds.LabelThresholdsCV`
        holding that model and predicting with those thresholds, with a `UserWarning`.

    Raises
    ------
    FileNotFoundError, IsADirectoryError, PermissionError
        If ``path`` cannot be read as a file.
    ValueError
        If ``path`` is not such a model file (a pickle, another zip, a damaged file, a file
        with other types, a model that is not fitted or holds what its class does not
        set), or comes from another glocal version and ``other_version="error"``, or
        ``other_version`` is neither. The message is one line naming the file.
    """
    return _load(path, other_version)["model"]


def load_model_info(path, *, other_version="error"):
    """What `save_model` kept beside the model: the glocal version and its ``info``.

    The file is read and checked as `load_model` reads it (and refused in the same cases),
    so that what is returned describes a model that loads.

    Parameters
    ----------
    path : path-like
        A file written by `save_model` (or by ``glocal fit``).
    other_version : {"error", "warn"}, default="error"
        As in `load_model`.

    Returns
    -------
    info : dict
        ``"glocal_version"``: the version of glocal that saved the file; then every
        keyword given to `save_model` as ``info`` (``glocal fit`` keeps ``label_names``,
        ``feature_names``, ``index_base``, ``training_rows``, the row digests of the
        training data; the fitted model, a `glocal.GLOCALCV` unless ``--paper``, holds
        its own thresholds).

    Raises
    ------
    FileNotFoundError, IsADirectoryError, PermissionError, ValueError
        As `load_model`.
    """
    return {key: value for key, value in _load(path, other_version, model=False).items()
            if key not in ("format", "model")}


def _load(path, other_version, model=True):
    """The checked contents of a model file: ``"format"``, ``"glocal_version"``,
    ``"model"`` and the ``info`` of `save_model` (see `load_model`); with ``model``, a model
    whose thresholds were kept beside it predicts with them (`_with_saved_thresholds`)."""
    import skops.io as sio

    from . import __version__
    from ._fitted import ModelError, check_plain

    if other_version not in ("error", "warn"):
        raise ValueError(f"other_version must be 'error' or 'warn', got {other_version!r}")
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"'{path}' is a directory, not a model file")
    if path.exists() and not path.is_file():  # a pipe or a device: reading would wait
        raise ValueError(f"'{path}' {_NOT_A_MODEL}: not a regular file (a pipe or a device?)")
    with open(path, "rb") as file:  # missing or unreadable: the OSError as it is
        head = file.read(4)
    if not head.startswith(b"PK"):
        kind = ("a pickle or joblib file, which glocal does not load because loading one "
                "runs the code it holds; fit the model again" if head[:1] in _PICKLE_OPCODES
                else "not a skops zip file")
        raise ValueError(f"'{path}' {_NOT_A_MODEL}: {kind}")
    try:
        _check_declared_sizes(path)
        untrusted = set(sio.get_untrusted_types(file=path)) - set(_TRUSTED)
        if untrusted:
            shown = ", ".join(sorted(untrusted)[:3])
            raise ValueError(f"'{path}' {_NOT_A_MODEL}: it holds other types ({shown}), "
                             "which are not loaded")
        contents = sio.load(path, trusted=list(_TRUSTED))
    except ValueError as exc:
        if str(exc).startswith(f"'{path}'"):
            raise
        raise ValueError(f"'{path}' {_NOT_A_MODEL}: {_first_line(exc)}") from None
    except Exception as exc:  # a damaged or crafted zip raises anything, MemoryError too
        raise ValueError(f"'{path}' {_NOT_A_MODEL}: {_first_line(exc)}") from None
    if not isinstance(contents, dict) or contents.get("format") != _FORMAT:
        raise ValueError(f"'{path}' {_NOT_A_MODEL}: a skops file of something else")
    version = contents.get("glocal_version")
    if version != __version__:
        text = (f"'{path}' was saved by glocal {version}, this is glocal {__version__}: "
                "fit the model again with this version")
        if other_version == "error":
            raise ValueError(text)
        warnings.warn(text, UserWarning, stacklevel=3)
    try:
        for key, value in contents.items():
            if key != "model":
                check_plain(value, key)
        _check_kind(contents.get("model"))
        _check_contents(contents["model"])
        if model and "thresholds" in contents and not hasattr(contents["model"],
                                                                "thresholds_"):
            contents["model"] = _with_saved_thresholds(contents, path)
    except (TypeError, ModelError) as exc:
        raise ValueError(f"'{path}' {_NOT_A_MODEL}: {_first_line(exc)}") from None
    return contents


def _with_saved_thresholds(contents, path):
    """The model of a file whose tuned thresholds sit beside it, not in it (as an earlier
    ``glocal fit`` saved GLOCALCV's refitted model): a `glocal.thresholds.LabelThresholdsCV`
    holding the model and predicting with those thresholds, said in one warning."""
    from sklearn.base import clone

    from ._fitted import Array, ModelError, _Names, model_shape
    from .thresholds import LabelThresholdsCV

    model = contents["model"]
    n_features, n_labels = model_shape(model)
    Array("f", (n_labels,)).check(contents["thresholds"], "its thresholds",
                                  _Names({"n_labels": n_labels}))
    if getattr(model, "steps", None) is not None:
        raise ModelError("its thresholds belong to an estimator, not to a Pipeline")
    warnings.warn(f"'{path}' holds a {type(model).__name__} without its tuned thresholds, "
                  "which were saved beside it: loaded as LabelThresholdsCV predicting with "
                  "them (fit it again with this version to keep the search's results)",
                  UserWarning, stacklevel=4)
    wrapped = LabelThresholdsCV(clone(model))
    wrapped.estimator_, wrapped.thresholds_ = model, contents["thresholds"]
    wrapped.n_features_in_ = n_features
    if hasattr(model, "feature_names_in_"):
        wrapped.feature_names_in_ = model.feature_names_in_
    return wrapped


def _check_kind(model):
    """A glocal estimator, or a scikit-learn Pipeline (its steps are checked later)."""
    from sklearn.pipeline import Pipeline

    name = f"{type(model).__module__}.{type(model).__qualname__}"
    if name not in _ESTIMATORS and not isinstance(model, Pipeline):
        raise TypeError(f"the model is a {name}, not a glocal estimator (nor a "
                        "scikit-learn Pipeline ending in one)")


def _check_contents(model):
    """The checks of `load_model` on the rebuilt model (see there); ModelError if not."""
    import numpy as np

    from ._fitted import ModelError, check_model

    n_labels = check_model(model).get("n_labels")
    d = model.n_features_in_
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. a row without the feature names of fit
            scores = np.asarray(model.decision_function(np.zeros((1, d))))
    except Exception as exc:
        raise ModelError(f"it does not score a row ({_first_line(exc)})") from None
    if scores.shape != (1, n_labels) or scores.dtype.kind != "f" or not np.isfinite(
            scores).all():
        raise ModelError(f"its scores of a row are not {n_labels} finite real numbers")


def _check_declared_sizes(path):
    """Refuse, before reading it, a zip whose members would not fit the memory budget:
    by their declared sizes, their expansion from the stored bytes, and for ``.npy``
    members the array their header declares."""
    import zipfile

    check_declared_size(path.stat().st_size, path.stat().st_size, "the file")
    with zipfile.ZipFile(path) as archive:
        members = archive.infolist()
        for member in members:
            # Parsed, JSON takes several times its size in Python objects.
            scale = 16 if member.filename == "schema.json" else 1
            check_declared_size(scale * member.file_size, scale * member.compress_size,
                                f"its member '{member.filename}'")
        check_declared_size(sum(member.file_size for member in members),
                            sum(member.compress_size for member in members),
                            "its members together")
        for member in members:
            if member.filename.endswith(".npy"):
                _check_npy_header(archive, member)


def _check_npy_header(archive, member):
    """A ``.npy`` member whose header declares exactly the bytes it holds."""
    import numpy as np

    with archive.open(member) as file:
        try:
            version = np.lib.format.read_magic(file)
            read = {(1, 0): np.lib.format.read_array_header_1_0,
                    (2, 0): np.lib.format.read_array_header_2_0}[version]
            shape, _, dtype = read(file)
        except (KeyError, ValueError, EOFError) as exc:
            raise ValueError(f"its member '{member.filename}' is not a readable .npy array "
                             f"({_first_line(exc)})") from None
        data = member.file_size - file.tell()
    if dtype.hasobject:
        raise ValueError(f"its member '{member.filename}' holds Python objects")
    declared = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if declared != data:
        raise ValueError(f"its member '{member.filename}' declares an array of {declared} "
                         f"bytes but holds {data}")


def _first_line(exc):
    text = one_line(exc)
    return text if len(text) <= 200 else text[:197] + "..."
