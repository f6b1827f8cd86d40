"""Multi-label ARFF files in the Mulan (label XML) and MEKA (``-C N``) conventions.

Which attributes are labels:

* Mulan: the ``<label name="...">`` elements of an XML file, at any depth (hierarchies)
  and in any XML namespace; by default ``<name>.xml`` beside the ARFF file, where ``name``
  is the file stem without a trailing ``-train``/``-test``. Labels may be anywhere among
  the attributes.
* MEKA: ``-C N`` in the ``@relation`` name: the first N attributes, or the last -N if N < 0.

An XML file takes precedence over ``-C N``. Labels keep the ARFF attribute order (as Mulan
does), which need not be the XML order. Label values must be the numbers 0 and 1, or ``?``
(a missing label, read as NaN when missing labels are accepted).

How the remaining attributes become features:

* numeric attributes as they are, with ``?`` as NaN;
* nominal attributes whose two declared values form a boolean pair (``0/1``, ``no/yes``,
  ``false/true``, in any case and order) as 0/1, any other nominal attribute as the position
  of the value in its declaration (the number Weka uses internally);
* identifier attributes are dropped: string attributes, and nominal attributes taking a
  different value in every row (over more than two rows, counting all files of a split),
  such as genbase's ``protein``. A value that no two instances share names an instance
  rather than describing it.
"""

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import NamedTuple

import arff
import numpy as np
import scipy.sparse as sp

from .._utils.io import one_line
from ._base import dataset_bunch, split_stem

_MEKA_LABELS = re.compile(r"(?:^|\s)-C\s+(-?\d+)")
_BOOLEAN_PAIRS = ({"0", "1"}, {"no", "yes"}, {"false", "true"})
_TRUE = {"1", "yes", "true"}
_ESCAPE = re.compile(r"\\(.)")
_ESCAPED = {"t": "\t", "n": "\n", "r": "\r"}


class _Arff(NamedTuple):
    relation: str
    names: list
    types: list
    values: object  # float ndarray, or COO matrix for sparse rows; nominals as positions


def load_arff(paths, xml=None, unlabeled=False, missing_labels=False):
    """Load a multi-label ARFF file, or the training and test files of a split, stacked.

    Parameters
    ----------
    paths : path-like or sequence of path-like
        One ARFF file, or a training file and a test file with the same attributes.
    xml : path-like, default=None
        Mulan label XML. By default ``<name>.xml`` beside the first file if it exists,
        else the MEKA ``-C N`` option of ``@relation``.
    unlabeled : bool, default=False
        Accept a file without labels: none of the XML's labels among its attributes, MEKA
        ``-C 0``, or neither an XML file nor ``-C N`` (then every attribute is a feature).
        ``Y`` then has no columns.
    missing_labels : bool, default=False
        Read a missing label value (``?``) as NaN, an unobserved entry; ``Y`` is then float
        when the files have one. By default a missing label is an error.

    Returns
    -------
    Bunch
        ``X`` (CSR if the files have sparse rows, else a float64 ndarray), ``Y``,
        ``feature_names``, ``label_names``, ``name`` and, for two files, ``train_idx`` and
        ``test_idx``.

    Raises
    ------
    FileNotFoundError
        If the given XML file does not exist.
    ValueError
        If a file is malformed, the labels cannot be determined or are not 0/1 (or
        missing, with ``missing_labels``), or the files of a split have different attributes.
    """
    paths = [Path(paths)] if isinstance(paths, (str, os.PathLike)) else [Path(p) for p in paths]
    if not 1 <= len(paths) <= 2:
        raise ValueError(f"expected one ARFF file or a train/test pair, got {len(paths)} files")
    parts = [_read_arff(path) for path in paths]
    first = parts[0]
    for path, part in zip(paths[1:], parts[1:]):
        if part.names != first.names or part.types != first.types:
            raise ValueError(f"{path}: its attributes differ from those of {paths[0]}")
    labels = _label_columns(first, paths[0], xml, unlabeled)

    sizes = [part.values.shape[0] for part in parts]
    if any(sp.issparse(part.values) for part in parts):
        values = sp.vstack([sp.coo_matrix(part.values) for part in parts], format="coo")
    else:
        values = np.vstack([part.values for part in parts])

    is_label = np.zeros(len(first.names), dtype=bool)
    is_label[labels] = True
    dropped = {
        j
        for j, kind in enumerate(first.types)
        if not is_label[j] and (kind == "STRING" or _is_identifier(values, j, kind))
    }
    codes = {
        j: _label_codes(kind) if is_label[j] else _feature_codes(kind)
        for j, kind in enumerate(first.types)
        if isinstance(kind, list) and j not in dropped
    }
    values = _decode_nominals(values, codes)

    features = [j for j in range(len(first.names)) if not is_label[j] and j not in dropped]
    if sp.issparse(values):
        values = values.tocsr()
        X = values[:, features]
        X.eliminate_zeros()
        Y = values[:, labels].toarray()
    else:
        X = values[:, features]
        Y = values[:, labels]
    label_names = [first.names[j] for j in labels]
    _check_labels(Y, label_names, paths, sizes, missing_labels)
    return dataset_bunch(
        X,
        Y,
        [first.names[j] for j in features],
        label_names,
        split_stem(paths[0])[0],
        n_train=sizes[0] if len(paths) == 2 else None,
    )


def _read_arff(path):
    """Parse one file; nominal values come back as positions in their declaration."""
    lines = _read_text(path).splitlines()
    quoted, rows = _scan(lines)
    sparse = bool(rows) and rows[0].startswith("{")
    try:
        parsed = arff.load(lines, encode_nominal=True, return_type=arff.COO if sparse else arff.DENSE)
        types = [kind for _, kind in parsed["attributes"]]
        values = _to_matrix(parsed["data"], types, len(rows), sparse)
    except (arff.ArffException, ValueError) as exc:
        raise ValueError(f"{path}: malformed ARFF file: {one_line(exc)}") from None
    # liac-arff strips the quotes of a name but leaves its backslash escapes.
    names = [
        _ESCAPE.sub(lambda m: _ESCAPED.get(m.group(1), m.group(1)), name) if q else name
        for (name, _), q in zip(parsed["attributes"], quoted)
    ]
    return _Arff(parsed["relation"], names, types, values)


def _read_text(path):
    with open(path, "rb") as file:
        if file.read(2) in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16's byte order marks
            try:
                return path.read_text(encoding="utf-16")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}: malformed UTF-16 text: {exc.reason}") from None
    try:
        return path.read_text(encoding="utf-8-sig")  # a byte order mark is no attribute
    except UnicodeDecodeError:
        # Older Weka and Mulan files are Latin-1.
        return path.read_text(encoding="latin-1")


def _scan(lines):
    """Whether each attribute name is quoted, and the data rows (as liac-arff sees them)."""
    quoted = []
    for i, line in enumerate(lines):
        row = line.strip()
        keyword = row[:10].upper()
        if keyword == "@ATTRIBUTE":
            quoted.append(row[10:].lstrip()[:1] in ("'", '"'))
        elif keyword.startswith("@DATA"):
            data = (text.strip() for text in lines[i + 1 :])
            return quoted, [text for text in data if text and not text.startswith("%")]
    return quoted, []


def _to_matrix(data, types, n_rows, sparse):
    """Float matrix of liac-arff's values; string attributes (always dropped) become NaN."""
    is_string = np.array([kind == "STRING" for kind in types], dtype=bool)
    dtype = object if is_string.any() else float
    if sparse:
        entries, rows, cols = data
        entries = np.array(entries, dtype=dtype)
        cols = np.asarray(cols, dtype=np.intp)
        if is_string.any():
            entries[is_string[cols]] = None
        return sp.coo_matrix(
            (entries.astype(float), (np.asarray(rows, dtype=np.intp), cols)),
            shape=(n_rows, len(types)),
        )
    values = np.array(data, dtype=dtype).reshape(len(data), len(types))
    if is_string.any():
        values[:, is_string] = None
    return values.astype(float)


def _label_columns(parsed, path, xml, unlabeled):
    """Indices of the label attributes, in attribute order (none for unlabeled data)."""
    default = _default_xml(path)
    if xml is None and default.is_file():
        xml = default
    if xml is not None:
        xml = Path(xml)
        if not xml.is_file():
            raise FileNotFoundError(f"Mulan label XML file '{xml}' not found")
        position = {name: j for j, name in enumerate(parsed.names)}
        labels = _mulan_labels(xml)
        missing = [name for name in labels if name not in position]
        if unlabeled and len(missing) == len(labels):
            return []
        if missing:
            shown = ", ".join(repr(name) for name in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            raise ValueError(
                f"{path}: labels named in {xml} are not attributes of the ARFF file: {shown}{more}"
            )
        return sorted(position[name] for name in labels)

    meka = _MEKA_LABELS.search(parsed.relation)
    if meka is None:
        if unlabeled:
            return []
        raise ValueError(
            f"{path}: cannot tell which attributes are labels: the Mulan label XML "
            f"'{default}' was not found and @relation has no MEKA '-C N' option; "
            "name the XML file (xml= in Python, --xml on the command line)"
        )
    n_labels, n_attributes = int(meka.group(1)), len(parsed.names)
    if unlabeled and n_labels == 0:
        return []
    if not 0 < abs(n_labels) < n_attributes:
        raise ValueError(
            f"{path}: MEKA option '-C {n_labels}' does not fit {n_attributes} attributes"
        )
    if n_labels > 0:
        return list(range(n_labels))
    return list(range(n_attributes + n_labels, n_attributes))


def _default_xml(path):
    return path.with_name(split_stem(path)[0] + ".xml")


def _mulan_labels(xml):
    """Label names of a Mulan XML file, in document order."""
    try:
        root = ET.parse(xml).getroot()
    except ET.ParseError as exc:
        raise ValueError(f"{xml}: malformed label XML: {exc}") from exc
    names = [
        element.get("name")
        for element in root.iter()
        if element.tag.rsplit("}", 1)[-1] == "label" and element.get("name") is not None
    ]
    if not names:
        raise ValueError(f"{xml}: no <label name=...> element found")
    return list(dict.fromkeys(names))


def _is_identifier(values, j, kind):
    """Whether nominal attribute ``j`` takes a different value in every row."""
    n_rows = values.shape[0]
    # Distinct values in every row need at least as many declared values as rows.
    if not isinstance(kind, list) or n_rows <= 2 or len(kind) < n_rows:
        return False
    column = values.tocsc()[:, [j]].toarray().ravel() if sp.issparse(values) else values[:, j]
    return np.unique(column).size == n_rows


def _feature_codes(declared):
    lowered = [value.lower() for value in declared]
    if len(lowered) == 2 and set(lowered) in _BOOLEAN_PAIRS:
        return np.array([float(value in _TRUE) for value in lowered])
    return np.arange(len(declared), dtype=float)


def _label_codes(declared):
    """Numeric value of each declared label value; infinity flags a non-number (NaN is
    left to a missing value, ``?``)."""
    codes = []
    for value in declared:
        try:
            codes.append(float(value))
        except ValueError:
            codes.append(np.inf)
    return np.array(codes)


def _decode_nominals(values, codes):
    """Replace the declared positions of the nominal columns by their numeric codes."""
    if not codes:
        return values
    columns = np.fromiter(codes, dtype=np.intp)
    table = np.concatenate([codes[j] for j in columns])
    start = np.zeros(values.shape[1], dtype=np.intp)
    start[columns] = np.cumsum([0] + [len(codes[j]) for j in columns[:-1]])

    if not sp.issparse(values):
        block = values[:, columns]
        missing = np.isnan(block)
        positions = np.where(missing, 0, block).astype(np.intp) + start[columns]
        values[:, columns] = np.where(missing, np.nan, table[positions])
        return values

    is_nominal = np.zeros(values.shape[1], dtype=bool)
    is_nominal[columns] = True
    hit = is_nominal[values.col] & ~np.isnan(values.data)
    data = values.data.copy()
    data[hit] = table[start[values.col[hit]] + values.data[hit].astype(np.intp)]
    rows, cols, entries = [values.row], [values.col], [data]
    # An entry omitted from a sparse row is the first declared value, whose code may not be 0.
    for j in columns:
        if codes[j][0] != 0:
            absent = np.ones(values.shape[0], dtype=bool)
            absent[values.row[values.col == j]] = False
            absent = np.flatnonzero(absent)
            rows.append(absent)
            cols.append(np.full(absent.size, j))
            entries.append(np.full(absent.size, codes[j][0]))
    return sp.coo_matrix(
        (np.concatenate(entries), (np.concatenate(rows), np.concatenate(cols))),
        shape=values.shape,
    )


def _check_labels(Y, label_names, paths, sizes, missing_labels):
    bad = np.argwhere(~(np.isin(Y, (0.0, 1.0)) | (missing_labels & np.isnan(Y))))
    if bad.size:
        row, col = bad[0]
        ends = np.cumsum(sizes)
        part = int(np.searchsorted(ends, row, side="right"))
        value = Y[row, col]
        if np.isnan(value):
            shown = "a missing value ('?'; missing_labels=True reads it as unobserved)"
        else:
            shown = "a non-numeric value" if np.isinf(value) else f"the value {value:g}"
        raise ValueError(
            f"{paths[part]}: label attribute {label_names[col]!r} must be 0 or 1, but data row "
            f"{row - (ends[part] - sizes[part]) + 1} has {shown}"
        )
