"""The results file of a reproduction: its columns, reading it back, replacing it atomically.

``results.csv`` holds one row per finished run (columns `FIELDS`). It is rewritten whole
after every run, through a temporary file renamed over it, so that readers (and a resumed
reproduction) see the file before or after a run, never a part of one.
"""

import csv
import io

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
_NUMERIC = {f for f in FIELDS if f.startswith(("prediction_", "recovery_", "time_", "small_"))
            and f not in BOOLEAN}


def read_results(path):
    """The rows of a ``results.csv`` written by `run_reproduction`.

    Files of earlier versions, which lack some of the later columns of `FIELDS` (the
    small-cluster columns, ``time_fill``), are read with those columns empty.

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
        If the file lacks a column of the first version of the format or has a column
        this version does not know.
    """
    with open(path, newline="", encoding="utf-8") as file:
        reader = csv.DictReader(file)
        columns = tuple(reader.fieldnames or ())
        missing = [f for f in _LEGACY_FIELDS if f not in columns]
        unknown = [f for f in columns if f not in FIELDS]
        if missing or unknown:
            raise ValueError(f"{path}: not a results file of this version of glocal "
                             f"(columns {list(columns)}; "
                             + (f"missing {missing}" if missing else f"unknown {unknown}")
                             + ")")
        rows = [{key: row.get(key) or "" for key in FIELDS} for row in reader]
    for row in rows:
        for key in ("repetition", "seed", "n_train", "n_test"):
            row[key] = int(row[key])
        for key in BOOLEAN:
            row[key] = row[key] == "True"
        row["rho"] = float(row["rho"])
        for key in _NUMERIC:
            row[key] = float(row[key]) if row[key] else np.nan
    return rows


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
