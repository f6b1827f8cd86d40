"""The results file of a reproduction: its columns, reading it back, adding rows under a lock.

``results.csv`` holds one row per finished run (columns `FIELDS`). Reproductions writing
into one output directory at once take turns through a lock file beside it
(`results_lock`): each finished run is appended as one line (`ResultsFile.append`), and a
run another reproduction has recorded meanwhile is not appended twice. A line cut by a
crash is found by `scan_results`; the file is then rewritten with its sound rows only,
through a temporary file renamed over it.
"""

import csv
import io
import json
import os
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from .._utils.io import atomic_output, csv_text

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
_TEXT = ("dataset", "method", "params")  # the columns of free text
_INTEGER = ("repetition", "seed", "n_train", "n_test")
_NUMERIC = {f for f in FIELDS if f.startswith(("prediction_", "recovery_", "time_", "small_"))
            and f not in BOOLEAN}
# Every finished run scores its test rows by all the measures (`glocal.metrics.evaluate`
# raises rather than give NaN): a row without one of them is not a finished run.
_RECORDED = tuple(f"prediction_{m}" for m in MEASURES)


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
    when a measure of its test rows (``prediction_*``, which every finished run records)
    is empty, NaN or infinite, or when it is the last line of a file that does not end
    with a newline (a cut write).
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
    with open(path, "rb") as file:
        data = file.read()
    _, rows, problems, lines = _scan(data, path)
    return _without_repeated_runs(rows, lines, problems, path)


def _scan(data, path, columns=None, first_line=1):
    """The columns, sound rows, problems and line numbers of the rows of a results file's
    bytes ``data``: the whole file (its header first) or, with the ``columns`` of its
    header, lines from line ``first_line`` on."""
    try:  # a byte order mark (spreadsheets write one) is not part of the header
        text = data.decode("utf-8-sig" if columns is None else "utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a results file of glocal (not UTF-8 text)") from None
    reader = csv.reader(io.StringIO(text))
    try:
        if columns is None:
            columns = _columns(next(reader, ()), path)
        records = _records(reader, first_line - 1)
    except csv.Error as exc:  # e.g. a field longer than the csv module's limit
        raise ValueError(f"{path}:{first_line - 1 + reader.line_num}: not a results file "
                         f"of glocal: {exc}") from None
    rows, lines, problems = [], [], []
    for i, (line, fields) in enumerate(records):
        try:
            if i == len(records) - 1 and not text.endswith("\n"):
                raise ValueError("cut short: the file ends inside it")
            rows.append(_parse_row(fields, columns))
            lines.append(line)
        except ValueError as exc:
            problems.append(f"{path}:{line}: damaged row ({exc})")
    return columns, rows, problems, lines


def _columns(header, path):
    """The columns of a header, if it is one of a results file of this version."""
    columns = tuple(header)
    missing = [f for f in _LEGACY_FIELDS if f not in columns]
    unknown = [f for f in columns if f not in FIELDS]
    if missing or unknown:
        what = [f"{kind} {_few(names)}" for kind, names in (("missing", missing),
                                                             ("unknown", unknown)) if names]
        raise ValueError(f"{path}: not a results file of this version of glocal (columns: "
                         f"{'; '.join(what)})")
    return columns


def _records(reader, offset):
    """The non-blank records left in ``reader`` with their line numbers (``offset`` lines
    before the reader's text)."""
    records, start = [], offset + reader.line_num + 1
    for fields in reader:
        # A quoted field can span lines: a record is on lines start to the reader's line.
        end = offset + reader.line_num
        line = f"{start}" if end == start else f"{start}-{end}"
        start = end + 1
        if fields:  # not a blank line
            records.append((line, fields))
    return records


def _without_repeated_runs(rows, lines, problems, path):
    """Leave out every run found on several rows: which copy is right cannot be told, and a
    run is deterministic, so it is run again."""
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
    row = {key: _unescaped(text.get(key, "")) if key in _TEXT else text.get(key, "")
           for key in FIELDS}
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
    for key in _RECORDED:
        if not np.isfinite(row[key]):
            raise ValueError(f"{key} is {row[key]}, not the measure of a finished run")
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
    """Replace ``path`` by the rows at once: readers see the old or the new file, never a part.

    Call it holding `results_lock`, as every writer of the file does."""
    with atomic_output(path, overwrite=True, follow_links=True) as file:
        file.write(_csv_lines(rows, header=True))


@contextmanager
def results_lock(path, others=()):
    """Hold the lock of the results file ``path`` (waiting for it) while in the block.

    The lock is ``.<name>.lock`` beside the file, taken with `filelock` (the system's file
    locks, released when a process ends, even by kill -9). On entry, the temporary files a
    crashed writer left of ``path`` and of the files named in ``others`` (the other files
    written under this lock) are removed (``.<name>.*.tmp``): no writer is at work.
    """
    from filelock import FileLock

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(path.with_name(f".{path.name}.lock")):
        for name in (path.name, *others):
            for stale in path.parent.glob(f".{name}.*.tmp"):
                stale.unlink(missing_ok=True)
        yield


class ResultsFile:
    """The runs of a results file, read whole once, then as far as it has grown.

    A reproduction resuming against a large file reads it once, not once per run: time
    linear in its size. `refresh` reads the lines other reproductions appended since the
    last read (call it holding `results_lock`); a file replaced or shortened meanwhile (a
    rewrite after a crash), or whose new lines are damaged or repeat a run, is read again
    whole, as `scan_results` reads it. ``rows`` are its sound rows, ``problems`` what is
    wrong with the others.
    """

    def __init__(self, path):
        self.path = Path(path)
        self.rows, self.problems = [], []
        self._keys = set()
        self._read = None  # (device, inode, bytes read, columns, lines read)

    def refresh(self):
        """Read what is new; returns the rows added (all rows after a whole read)."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            self.rows, self.problems, self._keys, self._read = [], [], set(), None
            return []
        if self._read and (info.st_dev, info.st_ino) == self._read[:2]:
            if info.st_size == self._read[2]:
                return []
            if info.st_size > self._read[2]:
                added = self._read_tail(info)
                if added is not None:
                    return added
        with open(self.path, "rb") as file:
            data = file.read()
        columns, rows, problems, lines = _scan(data, self.path)
        self.rows, self.problems = _without_repeated_runs(rows, lines, problems, self.path)
        self._keys = {run_key(row) for row in self.rows}
        self._read = (info.st_dev, info.st_ino, len(data), columns, data.count(b"\n"))
        return list(self.rows)

    def _read_tail(self, info):
        """The rows appended since the last read, or None if they need a whole read."""
        device, inode, size, columns, n_lines = self._read
        with open(self.path, "rb") as file:
            file.seek(size)
            data = file.read()
        _, rows, problems, _ = _scan(data, self.path, columns, n_lines + 1)
        keys = [run_key(row) for row in rows]
        if problems or not data.endswith(b"\n") or len(set(keys)) < len(keys) or (
                self._keys.intersection(keys)):
            return None
        self.rows += rows
        self._keys.update(keys)
        self._read = (device, inode, size + len(data), columns, n_lines + data.count(b"\n"))
        return rows

    def __contains__(self, key):
        """Whether the run ``key`` (see `run_key`) is recorded."""
        return key in self._keys

    def append(self, row):
        """Append one run's row, holding `results_lock`, unless the run is recorded.

        What is new in the file is read first: a run recorded meanwhile (by another
        reproduction into the same directory) is not appended again, and a file whose last
        line was cut by a crash (or written under the header of an earlier version) is
        first rewritten with its sound rows, so that the new line does not join the cut
        one.

        Returns
        -------
        appended : bool
            False when the run was already recorded.
        """
        self.refresh()
        if run_key(row) in self._keys:
            return False
        if self.problems or (self._read and self._read[3] != FIELDS):
            write_results(self.path, self.rows)  # the sound rows, under this header
            self.refresh()
        with open(self.path, "a", encoding="utf-8", newline="") as file:
            file.write(_csv_lines([row], header=self._read is None))
            file.flush()
            os.fsync(file.fileno())
        self.refresh()
        return True


def _csv_lines(rows, header):
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, FIELDS, restval="", lineterminator="\n")
    if header:
        writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if isinstance(value, float) and np.isnan(value)
                         else _escaped(value) if key in _TEXT else value
                         for key, value in row.items()})
    return buffer.getvalue()


def _escaped(text):
    """A text cell as stored: a leading apostrophe before one that a spreadsheet would take
    for a formula (see `glocal._utils.io.csv_text`) or that starts with an apostrophe itself, so
    that reading it back (`_unescaped`) gives the text as it was."""
    return "'" + text if text.startswith("'") else csv_text(text)


def _unescaped(text):
    return text[1:] if text.startswith("'") else text
