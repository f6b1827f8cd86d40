"""The results file of a reproduction: its columns, reading it back, replacing it atomically.

``results.csv`` holds one row per finished run (columns `FIELDS`). It is rewritten whole
after every run, through a temporary file renamed over it, so that readers (and a resumed
reproduction) see the file before or after a run, never a part of one.
"""

import csv
import io
import json
import warnings

import numpy as np

from .._io import atomic_output

MEASURES = ("ranking_loss", "instance_auc", "coverage", "average_precision", "label_auc")
# Parts of a fit time, in the order of the paper's timing table (C, I, F, R).
TIMES = ("clustering", "init", "fill", "main")
# The settings of a reproduction, stored in every row: one output directory, one setting.
CONFIG = ("seed", "quick", "tune", "drop_unlabeled", "small_clusters")
# The columns of the first results files. Later columns are appended after them; a file
# without them is read with those columns empty.
_LEGACY_FIELDS = (("dataset", "repetition", "rho", "method", "seed", "quick", "tune",
                   "drop_unlabeled", "n_train", "n_test", "params")
                  + tuple(f"{part}_{m}" for part in ("prediction", "recovery")
                          for m in MEASURES)
                  + ("time_clustering", "time_init", "time_main", "time_fit", "time_tuning"))
FIELDS = (_LEGACY_FIELDS + ("small_clusters", "time_fill", "small_n_test")
          + tuple(f"small_{m}" for m in MEASURES))
BOOLEAN = ("quick", "tune", "drop_unlabeled", "small_clusters")
_INTEGER = ("repetition", "seed", "n_train", "n_test")
_NUMERIC = {f for f in FIELDS if f.startswith(("prediction_", "recovery_", "time_", "small_"))
            and f not in BOOLEAN}


def read_results(path):
    """The rows of a ``results.csv`` written by `run_reproduction`.

    Files of earlier versions, which lack some of the later columns of `FIELDS` (the
    small-cluster columns, ``time_fill``), are read with those columns empty. A damaged row
    (cut short, a field that does not parse, rows run together) or a run recorded twice is
    left out, with a warning naming the file and the line (see `scan_results`).

    Parameters
    ----------
    path : path-like

    Returns
    -------
    results : list of dict
        One dict per run with the keys of `FIELDS`: measures, times and ``small_n_test``
        as float (NaN where not applicable or not recorded), ``repetition``, ``seed``,
        ``n_train``, ``n_test`` as int, ``rho`` as float, ``quick``, ``tune``,
        ``drop_unlabeled`` and ``small_clusters`` as bool (False when not recorded), the
        rest as str (``params`` is JSON).

    Raises
    ------
    ValueError
        If the file is not a results file of this version of glocal: not UTF-8 text, no
        header, a header lacking a column of the first version of the format or holding a
        column this version does not know.
    """
    rows, problems = scan_results(path)
    for problem in problems:
        warnings.warn(f"{problem}; left out", UserWarning, stacklevel=2)
    return rows


def scan_results(path):
    """The sound rows of a ``results.csv``, and what is wrong with the others.

    A row is damaged when it does not have one field per column, when a field does not
    parse (an integer, a number, True / False, rho in (0, 1], ``params`` a JSON object),
    or when it is the last line of a file that does not end with a newline (a cut write).
    A run (dataset, repetition, rho, method) found on several rows is left out entirely:
    which copy is right cannot be told, and a run is deterministic, so it is run again.

    Returns
    -------
    results : list of dict
        The sound rows, in file order, as `read_results` returns them.
    problems : list of str
        One message per left-out row, ``"<path>:<line>: <what is wrong>"``.

    Raises
    ------
    ValueError
        If the file is not a results file of this version of glocal (see `read_results`).
    """
    try:
        with open(path, encoding="utf-8", newline="") as file:
            text = file.read()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a results file of glocal (not UTF-8 text)") from None
    reader = csv.reader(io.StringIO(text))
    columns = tuple(next(reader, ()))
    missing = [f for f in _LEGACY_FIELDS if f not in columns]
    unknown = [f for f in columns if f not in FIELDS]
    if missing or unknown:
        what = [f"{kind} {_few(names)}" for kind, names in (("missing", missing),
                                                             ("unknown", unknown)) if names]
        raise ValueError(f"{path}: not a results file of this version of glocal (columns: "
                         f"{'; '.join(what)})")
    records, start = [], reader.line_num + 1
    for fields in reader:
        # A quoted field can span lines: a record is on lines start to line_num.
        line = f"{start}" if reader.line_num == start else f"{start}-{reader.line_num}"
        start = reader.line_num + 1
        if fields:  # not a blank line
            records.append((line, fields))
    rows, lines, problems = [], [], []
    for i, (line, fields) in enumerate(records):
        try:
            if i == len(records) - 1 and not text.endswith("\n"):
                raise ValueError("cut short: the file ends inside it")
            rows.append(_parse_row(fields, columns))
            lines.append(line)
        except ValueError as exc:
            problems.append(f"{path}:{line}: damaged row ({exc})")
    seen = {}
    for row, line in zip(rows, lines):
        seen.setdefault(run_key(row), []).append(line)
    for key, where in seen.items():
        if len(where) > 1:
            problems += [f"{path}:{line}: run {key} recorded {len(where)} times (lines "
                         f"{', '.join(where)})" for line in where]
    return [row for row in rows if len(seen[run_key(row)]) == 1], problems


def run_key(row):
    """What identifies a run: (dataset, repetition, rho, method)."""
    return row["dataset"], row["repetition"], row["rho"], row["method"]


def _few(names, shown=3):
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more"
                                       if len(names) > shown else "")


def _parse_row(fields, columns):
    """One record as a row of `read_results`; ValueError saying which field is wrong."""
    if len(fields) != len(columns):
        raise ValueError(f"{len(fields)} fields for {len(columns)} columns")
    text = dict(zip(columns, fields))
    row = {key: text.get(key, "") for key in FIELDS}
    for key in ("dataset", "method"):
        if not row[key]:
            raise ValueError(f"{key} is empty")
    for key in _INTEGER:
        row[key] = _parse(int, key, row[key])
    for key in BOOLEAN:
        if key in text and row[key] not in ("True", "False"):
            raise ValueError(f"{key} is {row[key]!r}, not True or False")
        row[key] = row[key] == "True"
    row["rho"] = _parse(float, "rho", row["rho"])
    if not 0 < row["rho"] <= 1:
        raise ValueError(f"rho is {row['rho']}, not in (0, 1]")
    for key in _NUMERIC:
        row[key] = _parse(float, key, row[key]) if row[key] else np.nan
    try:
        params = json.loads(row["params"])
    except ValueError:
        params = None
    if not isinstance(params, dict):
        raise ValueError(f"params is {_short(row['params'])}, not a JSON object")
    return row


def _parse(kind, key, text):
    try:
        return kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise ValueError(f"{key} is {_short(text)}, not {what}") from None


def _short(text, length=30):
    return repr(text if len(text) <= length else text[:length] + "...")


def write_results(path, rows):
    """Replace ``path`` by the rows at once: readers see the old or the new file, never a part."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, FIELDS, restval="", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if isinstance(value, float) and np.isnan(value) else value
                         for key, value in row.items()})
    with atomic_output(path, overwrite=True) as file:
        file.write(buffer.getvalue())
