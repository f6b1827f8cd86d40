"""Multi-label MATLAB ``.mat`` files, in the layouts of the MATLAB multi-label toolboxes.

Two variable layouts are recognised:

* ``train_data``, ``train_target``, ``test_data``, ``test_target``: a predefined split;
* ``data`` and ``target``;
* ``data`` alone: a file without labels, read only when asked for (``unlabeled=True``).

Data matrices are instances x features. Targets are either instances x labels or, as the
MATLAB toolboxes store them, labels x instances; the orientation is the one under which
every target of the file has as many instances as its data matrix (and, for a split, the
same number of labels). When both fit, i.e. all targets are square, the file holds no
evidence for the transposed form and instances x labels is assumed, like the data.
Targets encoded as {0, 1} or {-1, +1} become {0, 1}.
"""

import os
import struct
import zlib

import numpy as np
import scipy.sparse as sp
from scipy.io import loadmat
from scipy.io.matlab import MatReadError

from .._utils.io import check_declared_size, one_line
from ._base import dataset_bunch, default_names, split_stem

_LAYOUTS = (("train_data", "train_target", "test_data", "test_target"), ("data", "target"))


def load_mat(path, unlabeled=False):
    """Load a multi-label ``.mat`` file.

    Parameters
    ----------
    path : path-like
        File in one of the layouts described in the module docstring.
    unlabeled : bool, default=False
        Accept ``data`` without ``target``; ``Y`` then has no columns.

    Returns
    -------
    Bunch
        ``X`` (CSR if stored sparse, else a float64 ndarray), ``Y``, ``feature_names``
        (``x0``, ``x1``, ...), ``label_names`` (``y0``, ``y1``, ...), ``name`` and, for a
        split, ``train_idx`` and ``test_idx``.

    Raises
    ------
    ValueError
        If the file cannot be read, has no known layout, or its matrices do not fit
        together.
    """
    try:
        _check_declared_sizes(path)
        contents = loadmat(path)
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise
    except (MatReadError, ValueError, TypeError, NotImplementedError) as exc:
        raise ValueError(f"{path}: cannot read MATLAB file: {one_line(exc)}") from None
    except Exception as exc:  # a damaged file raises anything: zlib.error, IndexError, ...
        detail = one_line(exc)  # the class name alone when the message is empty
        if detail != type(exc).__name__:
            detail = f"{type(exc).__name__}: {detail}"
        raise ValueError(f"{path}: cannot read MATLAB file: it is cut short or damaged "
                         f"({detail})") from None
    layouts = _LAYOUTS + ((("data", None),) if unlabeled else ())
    layout = next((keys for keys in layouts if all(key in contents for key in keys if key)),
                  None)
    if layout is None:
        found = sorted(key for key in contents if not key.startswith("__"))
        raise ValueError(
            f"{path}: unknown variable layout {found}; expected 'data' and 'target', or "
            "'train_data', 'train_target', 'test_data' and 'test_target'"
        )
    datas = [_data(contents[key], path, key) for key in layout[0::2]]
    targets = [contents[key] if key else np.zeros((data.shape[0], 0))
               for key, data in zip(layout[1::2], datas)]
    for key, target in zip(layout[1::2], targets):
        _check_real(target, path, key)
    targets = [t.toarray() if sp.issparse(t) else np.atleast_2d(np.asarray(t)) for t in targets]
    targets = _orient(datas, targets, path)
    if len({data.shape[1] for data in datas}) > 1:
        raise ValueError(f"{path}: train_data and test_data have different numbers of columns")

    X = sp.vstack(datas, format="csr") if sp.issparse(datas[0]) else np.vstack(datas)
    Y = _binary(np.vstack(targets), path)
    return dataset_bunch(
        X,
        Y,
        default_names("x", X.shape[1]),
        default_names("y", Y.shape[1]),
        split_stem(path)[0],
        n_train=datas[0].shape[0] if len(datas) == 2 else None,
    )


def _check_declared_sizes(path):
    """Refuse, before reading them, matrices whose declared shapes take more than the memory
    budget as floats, or expand like a bomb from the file's bytes."""
    declared = _declared_bytes(path)
    if declared is not None:
        check_declared_size(declared, os.path.getsize(path), "its matrices")


# MATLAB 5 data types and classes (MAT-File Format, The MathWorks).
_MI_UINT32, _MI_INT32, _MI_MATRIX, _MI_COMPRESSED = 6, 5, 14, 15
_SPARSE_CLASS, _NUMERIC_CLASSES = 5, range(6, 16)


def _declared_bytes(path):
    """The bytes of the numeric matrices of a MATLAB 5 file as float64 (values and indices
    for sparse ones), from the headers of its variables: of a compressed variable only the
    first bytes are inflated. None for a file this cannot tell (another version, a damaged
    header): loadmat then says what is wrong."""
    with open(path, "rb") as file:
        header = file.read(128)
        if len(header) < 128 or header[126:128] not in (b"IM", b"MI"):
            return None
        order = "<" if header[126:128] == b"IM" else ">"
        total = 0
        while True:
            tag = file.read(8)
            if len(tag) < 8:
                return total
            kind, size = struct.unpack(order + "II", tag)
            start = file.tell()
            if kind == _MI_COMPRESSED:
                try:
                    head = zlib.decompressobj().decompress(file.read(min(size, 4096)), 256)
                except zlib.error:
                    return None
            elif kind == _MI_MATRIX:
                head = tag + file.read(min(size, 256))
            else:
                head = b""
            if len(head) >= 8 and struct.unpack(order + "I", head[:4])[0] == _MI_MATRIX:
                matrix = _matrix_bytes(head[8:], order)
                if matrix is None:
                    return None
                total += matrix
            file.seek(start + size)


def _matrix_bytes(head, order):
    """The float64 bytes of a miMATRIX element from its first bytes: its array flags (class,
    nzmax), then its dimensions."""
    if len(head) < 24:
        return None
    kind, size, flags, nzmax = struct.unpack(order + "IIII", head[:16])
    dims_kind, dims_size = struct.unpack(order + "II", head[16:24])
    if kind != _MI_UINT32 or dims_kind != _MI_INT32 or len(head) < 24 + dims_size:
        return None
    dims = struct.unpack(order + f"{dims_size // 4}i", head[24:24 + dims_size])
    kind = flags & 0xFF
    if kind == _SPARSE_CLASS:
        return 16 * nzmax  # a value and a row index per non-zero
    return 8 * int(np.prod(dims, dtype=object)) if kind in _NUMERIC_CLASSES else 0


def _data(matrix, path, key):
    _check_real(matrix, path, key)
    if sp.issparse(matrix):
        return sp.csr_matrix(matrix, dtype=np.float64)
    matrix = np.asarray(matrix)
    if matrix.ndim != 2 or not (np.issubdtype(matrix.dtype, np.number) or matrix.dtype == bool):
        raise ValueError(f"{path}: '{key}' is not a numeric matrix")
    return matrix.astype(np.float64)


def _check_real(matrix, path, key):
    """Refuse complex numbers, which casting to float would drop their imaginary parts of."""
    if np.iscomplexobj(matrix.data if sp.issparse(matrix) else matrix):
        raise ValueError(f"{path}: '{key}' holds complex numbers; features and labels must "
                         "be real")


def _orient(datas, targets, path):
    """Targets as instances x labels (see the module docstring for the rule)."""
    rows = [data.shape[0] for data in datas]
    as_is = all(t.shape[0] == n for t, n in zip(targets, rows))
    as_is = as_is and len({t.shape[1] for t in targets}) == 1
    transposed = all(t.shape[1] == n for t, n in zip(targets, rows))
    transposed = transposed and len({t.shape[0] for t in targets}) == 1
    if as_is:
        return targets
    if transposed:
        return [t.T for t in targets]
    shapes = ", ".join(f"target {t.shape} for data {d.shape}" for t, d in zip(targets, datas))
    raise ValueError(f"{path}: targets do not match the rows of the data ({shapes})")


def _binary(Y, path):
    values = np.unique(Y)
    if np.isin(values, (0, 1)).all():
        return Y
    if np.isin(values, (-1, 1)).all():
        return Y > 0
    raise ValueError(
        f"{path}: target values must be {{0, 1}} or {{-1, +1}}, found {values[:5].tolist()}"
    )
