"""Measures of predicted label sets and of the top of each row's ranking, and the per-label
report; exported by `glocal.metrics`.

The F1 measures take {0, 1} predictions and labels where NaN marks a missing entry (left out
of every count). The top-k measures take scores and complete {0, 1} labels; ties are broken
pessimistically, as in the paper's measures: among tied scores, negatives come first.
"""

from numbers import Integral

import numpy as np
import scipy.sparse as sp

from ._observed import _masked_stats, _observed_inputs
from ._ranking import _check_inputs, _label_stats, _row_values


def _observed_sets(y_true, y_pred):
    """Labels (NaN: missing) and predictions as bool arrays with the observation mask."""
    arrays = []
    for name, a in (("y_true", y_true), ("y_pred", y_pred)):
        a = a.toarray() if sp.issparse(a) else np.asarray(a)
        if a.ndim != 2 or a.size == 0:
            raise ValueError(f"{name} must be a non-empty 2-D array of shape "
                             f"(n_samples, n_labels), got shape {a.shape}.")
        if a.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric, got dtype {a.dtype}.")
        arrays.append(a.astype(float))
    y_true, y_pred = arrays
    if y_true.shape != y_pred.shape:
        raise ValueError(f"y_true and y_pred must have the same shape, got {y_true.shape} "
                         f"and {y_pred.shape}.")
    observed = ~np.isnan(y_true)
    for name, a in (("y_true", np.where(observed, y_true, 0.0)), ("y_pred", y_pred)):
        bad = ~np.isin(a, (0.0, 1.0))
        if bad.any():
            raise ValueError(f"{name} must hold only 0 and 1 (NaN in y_true: missing), found "
                             f"{np.unique(a[bad])[:5].tolist()}.")
    return y_true == 1, y_pred == 1, observed


def _counts(y_true, y_pred, observed):
    """True positives, false positives and false negatives of every label (observed only)."""
    tp = (y_true & y_pred & observed).sum(axis=0)
    fp = (~y_true & y_pred & observed).sum(axis=0)
    fn = (y_true & ~y_pred & observed).sum(axis=0)
    return tp, fp, fn


def micro_f1(y_true, y_pred):
    """F1 of all observed label entries pooled: 2 TP / (2 TP + FP + FN).

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        1 positive, 0 negative, NaN missing (left out).
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Predicted {0, 1} labels, e.g. ``model.predict(X)``.

    Returns
    -------
    f1 : float
        In [0, 1]; higher is better. Equals scikit-learn's
        ``f1_score(y_true, y_pred, average="micro")`` when nothing is missing.

    Raises
    ------
    ValueError
        When no observed entry is positive or predicted positive (F1 is undefined).
    """
    tp, fp, fn = (count.sum() for count in _counts(*_observed_sets(y_true, y_pred)))
    if not tp + fp + fn:
        raise ValueError("micro_f1 is undefined: no observed entry is positive or predicted "
                         "positive.")
    return float(2 * tp / (2 * tp + fp + fn))


def _label_f1(tp, fp, fn):
    """F1 of every label, NaN where it has no positive and predicts none."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tp + fp + fn > 0, 2 * tp / (2 * tp + fp + fn), np.nan)


def macro_f1(y_true, y_pred):
    """Mean over labels of each label's F1 on its observed entries.

    A label without a positive among its observed entries and without a predicted positive
    has no F1 and is left out of the mean (scikit-learn counts it as 0 with a warning).

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        1 positive, 0 negative, NaN missing (left out).
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Predicted {0, 1} labels.

    Returns
    -------
    f1 : float
        In [0, 1]; higher is better. Equals scikit-learn's ``f1_score(y_true, y_pred,
        average="macro", labels=...)`` over the labels where F1 is defined.

    Raises
    ------
    ValueError
        When no label has an F1.
    """
    f1 = _label_f1(*_counts(*_observed_sets(y_true, y_pred)))
    if np.isnan(f1).all():
        raise ValueError("macro_f1 is undefined: no label has an observed positive or a "
                         "predicted positive.")
    return float(np.nanmean(f1))


def _top_k_hits(y_true, y_score, k):
    """Whether each of the k best-ranked labels of every row is positive (n_rows x k),
    ties broken pessimistically (negatives first among equal scores)."""
    y_true, y_score = _check_inputs(y_true, y_score)
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}.")
    k = min(k, y_score.shape[1])
    order = np.lexsort((y_true, -y_score), axis=1)[:, :k]  # last key first: score, then label
    return np.take_along_axis(y_true, order, axis=1), y_true


def precision_at_k(y_true, y_score, k=1):
    """P@k: the share of positives among each row's k highest-scored labels, averaged.

    Every row counts (a row without a positive scores 0). Among tied scores, negatives are
    ranked first (pessimistic ties, as in the paper's measures). With ``k`` above the
    number of labels, every label is taken.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        {0, 1} labels.
    y_score : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Real scores; higher means more likely positive.
    k : int, default=1

    Returns
    -------
    precision : float
        In [0, 1]; higher is better.
    """
    hits, _ = _top_k_hits(y_true, y_score, k)
    return float(hits.mean())


def ndcg_at_k(y_true, y_score, k=1):
    """nDCG@k: discounted cumulative gain of the k highest-scored labels over its ideal.

    For a row, ``sum_{r <= k, label at rank r positive} 1 / log2(r + 1)`` divided by its
    value for a perfect ranking; averaged over the rows with at least one positive (the
    others have no ideal ranking and are skipped). Ties are pessimistic (negatives first).

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        {0, 1} labels.
    y_score : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Real scores.
    k : int, default=1

    Returns
    -------
    ndcg : float
        In [0, 1]; higher is better. Without tied scores it equals scikit-learn's
        ``ndcg_score(y_true, y_score, k=k)`` on the rows with a positive.

    Raises
    ------
    ValueError
        When no row has a positive label.
    """
    hits, y_true = _top_k_hits(y_true, y_score, k)
    discounts = 1.0 / np.log2(np.arange(2, hits.shape[1] + 2))
    n_pos = np.minimum(y_true.sum(axis=1), hits.shape[1])
    keep = n_pos > 0
    if not keep.any():
        raise ValueError("ndcg_at_k is undefined: no instance has a positive label.")
    ideal = np.concatenate(([0.0], np.cumsum(discounts)))[n_pos]
    return float(((hits @ discounts)[keep] / ideal[keep]).mean())


def label_report(y_true, y_score, y_pred=None, label_names=None):
    """Per-label measures: support, AUC and, given predictions, precision, recall and F1.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        {0, 1} labels, NaN where missing (left out of every measure).
    y_score : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Real scores.
    y_pred : {array-like, sparse matrix} of shape (n_samples, n_labels), optional
        Predicted {0, 1} labels (e.g. ``model.predict(X)``).
    label_names : list of str, optional
        One name per label; default their column indices.

    Returns
    -------
    report : dict
        ``"label"`` (the names), ``"support"`` (observed positives of each label),
        ``"auc"`` (as
        `label_auc`, per label; NaN for a label with one class only) and, with ``y_pred``,
        ``"precision"``, ``"recall"`` and ``"f1"`` (NaN where undefined), each a list or
        array with one entry per label.
    """
    y_bool, y_score, observed = _observed_inputs(y_true, y_score)
    n_labels = y_bool.shape[1]
    names = [str(j) for j in range(n_labels)] if label_names is None else list(label_names)
    if len(names) != n_labels:
        raise ValueError(f"label_names has {len(names)} names for {n_labels} labels.")
    columns = (_label_stats(y_bool, y_score) if observed.all() else
               _masked_stats(*(np.ascontiguousarray(a.T) for a in (y_bool, y_score, observed))))
    auc, defined = _row_values(columns, "label_auc")
    report = {"label": names, "support": y_bool.sum(axis=0),
              "auc": np.where(defined, auc, np.nan)}
    if y_pred is not None:
        tp, fp, fn = _counts(*_observed_sets(np.where(observed, y_bool, np.nan), y_pred))
        with np.errstate(invalid="ignore", divide="ignore"):
            report["precision"] = np.where(tp + fp > 0, tp / (tp + fp), np.nan)
            report["recall"] = np.where(tp + fn > 0, tp / (tp + fn), np.nan)
        report["f1"] = _label_f1(tp, fp, fn)
    return report


def top_k_labels(y_score, k):
    """The indicator of the ``k`` best-scored labels of every row.

    Parameters
    ----------
    y_score : array-like of shape (n_samples, n_labels)
    k : int
        At least 1; every label when above their number. Ties are broken by the label's
        column (the first one wins).

    Returns
    -------
    y_pred : ndarray of int of shape (n_samples, n_labels)
        1 for the k labels of highest score in each row, else 0.
    """
    y_score = np.asarray(y_score, dtype=float)
    if not isinstance(k, Integral) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    k = min(int(k), y_score.shape[1])
    top = np.argsort(-y_score, axis=1, kind="stable")[:, :k]
    y_pred = np.zeros(y_score.shape, dtype=int)
    np.put_along_axis(y_pred, top, 1, axis=1)
    return y_pred
