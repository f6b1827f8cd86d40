"""The paper's ranking measures and the per-row statistics they share with the measures on
observed entries (`glocal.metrics._observed`); exported by `glocal.metrics`."""

import numpy as np
import scipy.sparse as sp


PAPER_NAMES = {
    "Rkl": "ranking_loss",
    "Auc": "instance_auc",
    "Cvg": "coverage",
    "Ap": "average_precision",
}

GREATER_IS_BETTER = {
    "ranking_loss": False,
    "coverage": False,
    "average_precision": True,
    "label_auc": True,
    "instance_auc": True,
}

# Rows are processed in chunks of about this many entries to bound the temporaries.
_CHUNK_ENTRIES = 1 << 20


def _check_inputs(y_true, y_score):
    """Validate and densify ``(y_true, y_score)``.

    Returns
    -------
    y_true : ndarray of bool, shape (n_samples, n_labels)
    y_score : ndarray of float, shape (n_samples, n_labels)
    """
    arrays = []
    for name, a in (("y_true", y_true), ("y_score", y_score)):
        a = a.toarray() if sp.issparse(a) else np.asarray(a)
        if a.ndim != 2:
            raise ValueError(
                f"{name} must be a 2-D array of shape (n_samples, n_labels), "
                f"got an array with ndim={a.ndim}."
            )
        if a.size == 0:
            raise ValueError(f"{name} is empty (shape {a.shape}); at least one entry is needed.")
        if a.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric, got dtype {a.dtype}.")
        arrays.append(a)
    y_true, y_score = arrays

    if y_true.shape != y_score.shape:
        raise ValueError(
            f"y_true and y_score must have the same shape, got {y_true.shape} and {y_score.shape}."
        )

    if y_true.dtype.kind != "b":
        bad = ~((y_true == 0) | (y_true == 1))
        if bad.any():
            found = np.unique(y_true[bad])[:5]
            raise ValueError(
                "y_true must be a {0, 1} indicator matrix, found other values "
                f"{found.tolist()}; convert a {{-1, +1}} encoding with (y_true > 0).astype(int)."
            )
        y_true = y_true == 1

    if y_score.dtype.kind != "f":
        y_score = y_score.astype(np.float64)
    if not np.isfinite(y_score).all():
        raise ValueError("y_score contains NaN or infinity; all scores must be finite.")
    return y_true, y_score


def _row_stats(y_true, y_score):
    """Per-row pair counts and rank statistics from one sort of each row.

    Each row is sorted ascending and cut into tie groups. For a positive ``c`` the counts of
    positives / negatives strictly below its group and up to the end of its group give
    every pairwise count, so no pair is enumerated and ties are exact.

    Parameters
    ----------
    y_true : ndarray of bool, shape (n_rows, n_cols)
    y_score : ndarray of float, shape (n_rows, n_cols)

    Returns
    -------
    stats : dict of ndarray of shape (n_rows,)
        ``n_pos``, ``n_neg``; ``n_wrong`` (pairs with ``f_pos <= f_neg``); ``n_right``
        (pairs with ``f_pos >= f_neg``); ``max_rank`` (largest pessimistic descending rank of
        a positive, 0 if none); ``ap_sum`` (sum over positives of precision at their rank).
    """
    n_rows, n_cols = y_score.shape
    stats = {
        key: np.zeros(n_rows) for key in ("n_pos", "n_wrong", "n_right", "max_rank", "ap_sum")
    }
    step = max(1, _CHUNK_ENTRIES // n_cols)
    for start in range(0, n_rows, step):
        rows = slice(start, start + step)
        s, y = y_score[rows], y_true[rows]
        m = s.shape[0]

        # Order within a tie group is irrelevant: everything below is per group.
        order = np.argsort(s, axis=1)
        s = np.take_along_axis(s, order, axis=1).ravel()
        pos = np.take_along_axis(y, order, axis=1).ravel()

        # Work on the flattened chunk (fast 1-D cumulative ops); forcing a group start at
        # every row start keeps groups inside rows.
        starts = np.empty(s.size, dtype=bool)
        starts[0] = True
        np.not_equal(s[1:], s[:-1], out=starts[1:])
        starts[::n_cols] = True
        group_start = np.append(np.flatnonzero(starts), s.size)
        group_id = np.cumsum(starts, dtype=np.intp) - 1

        cpos = np.concatenate(([0], np.cumsum(pos, dtype=np.intp)))  # positives before k
        row_base = cpos[:-1:n_cols]

        p = np.flatnonzero(pos)
        row = p // n_cols
        first = group_start[group_id[p]]  # flat index where the group of p starts
        end = group_start[group_id[p] + 1]  # ... and one past where it ends
        pos_below = cpos[first] - row_base[row]
        pos_upto = cpos[end] - row_base[row]
        first_col = first - row * n_cols
        neg_below = first_col - pos_below
        neg_upto = end - row * n_cols - pos_upto

        n_pos = np.bincount(row, minlength=m)
        n_neg = n_cols - n_pos
        stats["n_pos"][rows] = n_pos
        # Wrong pairs (f_pos <= f_neg) are all pairs minus the strictly correct ones.
        stats["n_wrong"][rows] = n_pos * n_neg - np.bincount(row, neg_below, minlength=m)
        stats["n_right"][rows] = np.bincount(row, neg_upto, minlength=m)
        # The pessimistic descending rank is n_cols - first_col; it is largest at the first
        # positive of each row in ascending order.
        lowest = np.flatnonzero(np.diff(row, prepend=-1))
        stats["max_rank"][start + row[lowest]] = n_cols - first_col[lowest]
        precision = (n_pos[row] - pos_below) / (n_cols - first_col)
        stats["ap_sum"][rows] = np.bincount(row, precision, minlength=m)
    stats["n_neg"] = n_cols - stats["n_pos"]
    return stats


def _row_values(stats, measure):
    """Per-row values of one measure from `_row_stats`, and which rows define it."""
    n_pos, n_neg = stats["n_pos"], stats["n_neg"]
    if measure == "coverage":
        return stats["max_rank"] - 1.0, n_pos > 0
    if measure == "average_precision":
        return stats["ap_sum"] / np.maximum(n_pos, 1), n_pos > 0
    # Pairwise measures: rows lacking positives or negatives have no pairs.
    n_pairs = n_pos * n_neg
    key = "n_wrong" if measure == "ranking_loss" else "n_right"
    return stats[key] / np.maximum(n_pairs, 1), n_pairs > 0


_UNDEFINED = {
    "ranking_loss": "no instance has both a positive and a negative",
    "instance_auc": "no instance has both a positive and a negative",
    "label_auc": "no label has both a positive and a negative",
    "coverage": "no instance has a positive label",
    "average_precision": "no instance has a positive label",
}


def _mean(stats, measure, weights=None):
    """Mean of a measure over the rows that define it, weighted by ``weights`` (one per row)
    if given; ValueError when no row defines it."""
    values, keep = _row_values(stats, measure)
    if not keep.any():
        raise ValueError(f"{measure} is undefined: {_UNDEFINED[measure]}.")
    if weights is None:
        return float(values[keep].mean())
    return float(np.average(values[keep], weights=weights[keep]))


def _instance_stats(y_true, y_score):
    return _row_stats(*_check_inputs(y_true, y_score))


def _label_stats(y_true, y_score):
    y_true, y_score = _check_inputs(y_true, y_score)
    # Sort along contiguous rows: labels become rows.
    return _row_stats(np.ascontiguousarray(y_true.T), np.ascontiguousarray(y_score.T))


def ranking_loss(y_true, y_score):
    """Ranking loss (the paper's Rkl): fraction of mis-ordered positive/negative label pairs.

    For instance ``i``, the fraction of pairs ``(a, b) in C_i+ x C_i-`` with
    ``f_a(x_i) <= f_b(x_i)``; ties count as errors. Averaged over instances.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Label indicator matrix with values in {0, 1}.
    y_score : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Real-valued scores; higher means more likely positive.

    Returns
    -------
    loss : float
        In [0, 1]; lower is better.

    Raises
    ------
    ValueError
        On invalid input, or if no instance has both a positive and a negative label.

    Notes
    -----
    Instances with no positive or no negative label have no pair and are skipped; the mean
    is over the remaining instances. On those instances this equals scikit-learn's
    ``label_ranking_loss``.
    """
    return _mean(_instance_stats(y_true, y_score), "ranking_loss")


def coverage(y_true, y_score):
    """Coverage (the paper's Cvg): how far down the ranking all positives are reached.

    For instance ``i``, ``max{rank(i, j) : j in C_i+} - 1`` where ``rank(i, j)`` is the
    pessimistic rank, the number of labels with score ``>= f_j(x_i)``. Averaged over
    instances.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Label indicator matrix with values in {0, 1}.
    y_score : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Real-valued scores; higher means more likely positive.

    Returns
    -------
    coverage : float
        In [0, n_labels - 1]; lower is better.

    Raises
    ------
    ValueError
        On invalid input, or if no instance has a positive label.

    Notes
    -----
    Instances with no positive label are skipped; the mean is over the remaining
    instances. On those instances this is scikit-learn's ``coverage_error`` minus 1.
    """
    return _mean(_instance_stats(y_true, y_score), "coverage")


def average_precision(y_true, y_score):
    """Average precision (the paper's Ap) of the label ranking of each instance.

    For instance ``i``, the mean over ``c in C_i+`` of
    ``|{j in C_i+ : f_j(x_i) >= f_c(x_i)}| / rank(i, c)`` with the pessimistic rank
    ``rank(i, c)`` = number of labels with score ``>= f_c(x_i)``. Averaged over instances.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Label indicator matrix with values in {0, 1}.
    y_score : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Real-valued scores; higher means more likely positive.

    Returns
    -------
    precision : float
        In (0, 1]; higher is better.

    Raises
    ------
    ValueError
        On invalid input, or if no instance has a positive label.

    Notes
    -----
    Instances with no positive label are skipped; the mean is over the remaining
    instances. An instance whose labels are all positive scores 1. On instances with at
    least one positive and one negative label this equals scikit-learn's
    ``label_ranking_average_precision_score``.
    """
    return _mean(_instance_stats(y_true, y_score), "average_precision")


def label_auc(y_true, y_score):
    """Macro-averaged per-label AUC.

    For label ``j``, the fraction of pairs ``(a, b) in Z_j+ x Z_j-`` with
    ``f_j(x_a) >= f_j(x_b)``; ties count as correct. Averaged over labels.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Label indicator matrix with values in {0, 1}.
    y_score : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Real-valued scores; higher means more likely positive.

    Returns
    -------
    auc : float
        In [0, 1]; higher is better.

    Raises
    ------
    ValueError
        On invalid input, or if no label has both a positive and a negative instance.

    Notes
    -----
    Labels with no positive or no negative instance are skipped; the mean is over the
    remaining labels. This is the Mann-Whitney count with ties counted in full, so it
    exceeds scikit-learn's ``roc_auc_score`` (which counts ties as one half) by half the
    fraction of tied pairs, and equals it without ties.
    """
    return _mean(_label_stats(y_true, y_score), "label_auc")


def instance_auc(y_true, y_score):
    """Per-instance AUC of the label ranking (the paper's reported Auc).

    For instance ``i``, the fraction of pairs ``(a, b) in C_i+ x C_i-`` with
    ``f_a(x_i) >= f_b(x_i)``; ties count as correct. Averaged over instances.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Label indicator matrix with values in {0, 1}.
    y_score : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Real-valued scores; higher means more likely positive.

    Returns
    -------
    auc : float
        In [0, 1]; higher is better.

    Raises
    ------
    ValueError
        On invalid input, or if no instance has both a positive and a negative label.

    Notes
    -----
    Instances with no positive or no negative label have no pair and are skipped; the mean
    is over the remaining instances. Without tied scores this is ``1 - ranking_loss``.
    This is the measure that reproduces the paper's reported Auc column: there, BR's Auc
    equals ``1 - Rkl`` within 0.001 on 12 of 14 datasets, which only the per-instance AUC
    does (on one 60/40 split, BR with C=0.1: Enron instance AUC 0.870 = 1 - Rkl, label AUC
    0.678; Arts 0.880 and 0.754). :func:`label_auc` is the per-label AUC of the paper's text.
    """
    return _mean(_instance_stats(y_true, y_score), "instance_auc")


def evaluate(y_true, y_score):
    """All five measures in one call, sharing the per-row sort.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Label indicator matrix with values in {0, 1}.
    y_score : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Real-valued scores; higher means more likely positive.

    Returns
    -------
    scores : dict of str to float
        Keys ``"ranking_loss"``, ``"coverage"``, ``"average_precision"``, ``"label_auc"``
        and ``"instance_auc"``; see :data:`GREATER_IS_BETTER` for their direction and
        :data:`PAPER_NAMES` for the paper's abbreviations.

    Raises
    ------
    ValueError
        On invalid input, or if any measure is undefined (see the individual functions).
    """
    y_true, y_score = _check_inputs(y_true, y_score)
    rows = _row_stats(y_true, y_score)
    cols = _row_stats(np.ascontiguousarray(y_true.T), np.ascontiguousarray(y_score.T))
    return {
        "ranking_loss": _mean(rows, "ranking_loss"),
        "coverage": _mean(rows, "coverage"),
        "average_precision": _mean(rows, "average_precision"),
        "label_auc": _mean(cols, "label_auc"),
        "instance_auc": _mean(rows, "instance_auc"),
    }

