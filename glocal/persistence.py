"""Model files that cannot run code when loaded: skops' format, with the glocal version inside.

A pickle (``pickle``, ``joblib``) stores instructions for rebuilding an object, and loading
one runs them: a pickle from an untrusted source can run any code on your machine. The files
written here use `skops.io <https://skops.readthedocs.io>`_, a zip of JSON and ``.npy``
arrays from which only types named in advance are rebuilt: numpy arrays, Python's plain
types and glocal's estimators of the GLOCAL family. Nothing in such a file is executed.
"""

import warnings
from pathlib import Path

from ._io import atomic_output, one_line

# The only classes rebuilt beyond skops' defaults (numpy arrays, builtins).
_TRUSTED = ("glocal.estimator.GLOCAL", "glocal.estimator.GLObal", "glocal.estimator.loCAL")
_FORMAT = "glocal model"
_NOT_A_MODEL = "is not a model saved by glocal"
_PICKLE_OPCODES = (b"\x80", b"(", b"}", b"]", b"c")  # protocol >= 2, or older pickles


def save_model(path, model, *, overwrite=False, **info):
    """Save a fitted estimator of the GLOCAL family in skops' secure format.

    The file holds the estimator, the glocal version that wrote it, and ``info``; it is
    written whole or not at all. Prefer this to ``pickle`` or ``joblib``: loading a pickle
    runs the code it holds, so a pickle from someone else can do anything on your machine,
    while `load_model` rebuilds numpy arrays, plain Python values and glocal's estimators
    only.

    Parameters
    ----------
    path : path-like
        The file to write (e.g. ``model.skops``).
    model : GLOCAL, GLObal or loCAL
        A fitted estimator.
    overwrite : bool, default=False
        Whether an existing file at ``path`` may be replaced.
    **info
        Plain values to keep beside the model (str, int, float, lists, dicts, numpy arrays),
        returned by `load_model`.

    Raises
    ------
    TypeError
        If ``model`` is not a GLOCAL, GLObal or loCAL estimator.
    FileExistsError
        If ``path`` exists and ``overwrite`` is False.
    """
    import skops.io as sio

    from . import __version__

    name = f"{type(model).__module__}.{type(model).__qualname__}"
    if name not in _TRUSTED:
        raise TypeError(f"save_model saves GLOCAL, GLObal or loCAL estimators, not {name}")
    contents = {"format": _FORMAT, "glocal_version": __version__, **info, "model": model}
    with atomic_output(path, overwrite=overwrite, binary=True) as file:
        sio.dump(contents, file)


def load_model(path, *, other_version="error"):
    """Load what `save_model` saved, without running any code the file may hold.

    Only numpy arrays, plain Python values and glocal's GLOCAL, GLObal and loCAL are
    rebuilt; a file holding any other type is refused before anything is rebuilt. Pickle
    and joblib files are refused unread: loading one runs the code it holds (a pickle from
    someone else can do anything on your machine), so load those only if you made them.

    Parameters
    ----------
    path : path-like
        A file written by `save_model` (or by ``glocal fit``).
    other_version : {"error", "warn"}, default="error"
        What to do with a file written by another version of glocal, whose estimator may
        hold other attributes: refuse it, or load it with a `UserWarning`.

    Returns
    -------
    contents : dict
        ``"model"``: the estimator; ``"glocal_version"``: the version that saved it; and
        the ``info`` given to `save_model`.

    Raises
    ------
    FileNotFoundError, IsADirectoryError, PermissionError
        If ``path`` cannot be read as a file.
    ValueError
        If ``path`` is not such a model file (a pickle, another zip, a damaged file, a file
        with other types, a model that is not fitted), or comes from another glocal
        version and ``other_version="error"``. The message is one line naming the file.
    """
    import skops.io as sio

    from . import __version__

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
        warnings.warn(text, UserWarning, stacklevel=2)
    _check_fitted(contents.get("model"), path)
    return contents


def _check_fitted(model, path):
    """Refuse a model whose arrays do not score a row (a file edited by hand)."""
    import scipy.sparse as sp

    name = f"{type(model).__module__}.{type(model).__qualname__}"
    if name not in _TRUSTED:
        raise ValueError(f"'{path}' {_NOT_A_MODEL}: it holds a {type(model).__name__}, "
                         "not a glocal estimator")
    try:
        d = int(model.n_features_in_)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = model.decision_function(sp.csr_matrix((1, d)))
        if scores.ndim != 2 or scores.shape[0] != 1:
            raise ValueError(f"scores of shape {scores.shape}")
    except Exception as exc:
        raise ValueError(f"'{path}' {_NOT_A_MODEL}: its estimator does not score a row "
                         f"({_first_line(exc)})") from None


def _first_line(exc):
    text = one_line(exc)
    return text if len(text) <= 200 else text[:197] + "..."
