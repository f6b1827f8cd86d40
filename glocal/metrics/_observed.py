"""The ranking measures among observed entries (labels with NaN missing), the search's
criterion and their scorers; exported by `glocal.metrics`."""

import numpy as np
import scipy.sparse as sp

from ._ranking import GREATER_IS_BETTER, _check_inputs, _mean, _row_stats, _row_values


def _masked_stats(y_true, y_score, mask):
    """`_row_stats` of every row restricted to its entries where ``mask`` is True.

    Rows with the same number of selected entries are stacked into one rectangular matrix
    and sorted together; a row with no selected entry gets all-zero statistics (it defines
    no measure).
    """
    n_rows = y_true.shape[0]
    stats = {key: np.zeros(n_rows)
             for key in ("n_pos", "n_neg", "n_wrong", "n_right", "max_rank", "ap_sum")}
    counts = mask.sum(axis=1)
    for count in np.unique(counts[counts > 0]):
        rows = np.flatnonzero(counts == count)
        # Boolean indexing reads row by row, so every row contributes `count` entries.
        selected = mask[rows]
        part = _row_stats(y_true[rows][selected].reshape(-1, count),
                          y_score[rows][selected].reshape(-1, count))
        for key, values in part.items():
            stats[key][rows] = values
    return stats


def _observed_inputs(y_true, y_score, mask=None):
    """Validate labels with NaN (missing) and scores; the mask defaults to the non-NaN entries.

    Returns bool labels (False outside the mask), float scores and the bool mask.
    """
    y_true = y_true.toarray() if sp.issparse(y_true) else np.asarray(y_true)
    if y_true.dtype.kind not in "biuf":
        raise ValueError(f"y_true must be numeric, got dtype {y_true.dtype}.")
    y_true = y_true.astype(float)
    observed = ~np.isnan(y_true)
    mask = observed if mask is None else np.asarray(mask, dtype=bool)
    if mask.shape != y_true.shape:
        raise ValueError(f"mask must have the shape of y_true {y_true.shape}, got {mask.shape}.")
    if (mask & ~observed).any():
        raise ValueError("y_true is NaN at entries the mask selects.")
    y_true, y_score = _check_inputs(np.where(mask, y_true, 0.0), y_score)
    return y_true, y_score, mask


def _observed_ap(y_true, y_score, mask, weights=None):
    """Ap of each row among its entries of ``mask`` (inputs as `_observed_inputs` gives
    them), averaged over the rows with a positive there, weighted by ``weights`` (one per
    row) if given; with every entry observed, the plain measure (equal weights)."""
    if mask.all():  # without regrouping the rows
        return _mean(_row_stats(y_true, y_score), "average_precision")
    return _mean(_masked_stats(y_true, y_score, mask), "average_precision", weights)


def evaluate_masked(y_true, y_score, mask):
    """The measures of `evaluate`, each row restricted to chosen entries.

    Every instance measure is computed on each row as if the row held only its entries
    where ``mask`` is True (ranks, pairs and coverage count only those entries) and
    averaged over the rows where it is defined; ``label_auc`` likewise restricts each
    label to its selected instances. With a mask of all True this is `evaluate`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        {0, 1} labels; entries outside ``mask`` are ignored (they may be NaN).
    y_score : array-like of shape (n_samples, n_labels)
        Real scores.
    mask : array-like of bool, shape (n_samples, n_labels)
        The entries to score.

    Returns
    -------
    scores : dict of str to float
        Keys as in `evaluate`; NaN for a measure defined on no row (label).
    """
    y_true = y_true.toarray() if sp.issparse(y_true) else np.asarray(y_true, dtype=float)
    mask = np.asarray(mask, dtype=bool)
    y_true, y_score, mask = _observed_inputs(np.where(mask, y_true, np.nan), y_score, mask)
    rows = _masked_stats(y_true, y_score, mask)
    cols = _masked_stats(np.ascontiguousarray(y_true.T), np.ascontiguousarray(y_score.T),
                         np.ascontiguousarray(mask.T))
    scores = {}
    for name in GREATER_IS_BETTER:
        values, keep = _row_values(cols if name == "label_auc" else rows, name)
        scores[name] = float(values[keep].mean()) if keep.any() else np.nan
    return scores


def observed_average_precision(y_true, y_score):
    """Average precision (Ap) of each row's ranking of its observed labels only.

    Missing labels (NaN in ``y_true``) are removed from each row before ranking: the
    row's ranks, positives and precisions count its observed entries alone, so a missing
    label neither rewards nor penalizes a score. Without NaN this is `average_precision`
    exactly.

    Rows are treated as follows, and the result is the plain mean over the rows kept
    (every kept row weighs the same, whatever its number of observed entries):

    * a row with at least one observed positive is kept, whatever else is missing;
    * a row whose observed entries are all positive scores 1;
    * a row with no observed positive (all its observed labels negative, or every label
      missing) is skipped: Ap is undefined there, as in `average_precision`.

    Parameters
    ----------
    y_true : {array-like, sparse matrix} of shape (n_samples, n_labels)
        1 positive, 0 negative, NaN missing.
    y_score : {array-like, sparse matrix} of shape (n_samples, n_labels)
        Real-valued scores; higher means more likely positive.

    Returns
    -------
    precision : float
        In (0, 1]; higher is better.

    Raises
    ------
    ValueError
        On invalid input, or if no row has an observed positive label.
    """
    return _observed_ap(*_observed_inputs(y_true, y_score))


def observed_weighted_average_precision(y_true, y_score):
    """Ap of each row's ranking of its observed labels, rows weighted by how many they have.

    The first term of `glocal.GLOCALCV`'s cross-validation criterion
    (`observed_two_way_average_precision`). Each row with an observed
    positive scores its `observed_average_precision` (ranked among its observed entries
    only; rows without an observed positive skipped), and the result is the mean of these
    row values weighted by each row's number of observed entries::

        sum_i n_i Ap_i / sum_i n_i      over the rows i with an observed positive,

    with ``n_i`` the number of non-NaN entries of row ``i``. When most labels are missing,
    most kept rows hold a single observed positive and a few negatives, which a ranking by
    label frequency alone (every row ranked alike, by the per-label biases) orders as well
    as a real model; the rows with more observed labels, which tell the two apart, weigh
    more. Without NaN every row has the same weight and this is `average_precision`
    exactly.

    Parameters
    ----------
    y_true, y_score : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The labels (NaN missing) and scores, as for `observed_average_precision`.

    Returns
    -------
    precision : float
        In (0, 1]; higher is better. A ValueError, as from `observed_average_precision`,
        on invalid input or when no row has an observed positive label.
    """
    y_true, y_score, mask = _observed_inputs(y_true, y_score)
    return _observed_ap(y_true, y_score, mask, mask.sum(axis=1))


def observed_two_way_average_precision(y_true, y_score, label_weight=0.25):
    """Ap of each row's ranking of its labels and of each label's ranking of its rows, among
    observed entries.

    The cross-validation criterion of `glocal.GLOCALCV`::

        (1 - label_weight) * observed_weighted_average_precision(y_true, y_score)
            + label_weight * observed_average_precision(y_true.T, y_score.T)

    The first term is the test measure: Ap of each row's labels, rows weighted by their
    number of observed labels. The second ranks, for each label with an observed positive,
    its observed rows, every such label weighing the same. When most labels are missing,
    few rows hold an observed positive, and those hold a few observed labels: the first
    term rests on them, and a model that ranks every row alike by its per-label biases
    orders them almost as well as a real model. Each label's observed rows are many more,
    and they tell the two apart. Without NaN the first term is `average_precision`.

    Parameters
    ----------
    y_true, y_score : {array-like, sparse matrix} of shape (n_samples, n_labels)
        The labels (NaN missing) and scores, as for `observed_average_precision`.
    label_weight : float in [0, 1], default=0.25
        The weight of the labels' rankings; 0 gives
        `observed_weighted_average_precision`.

    Returns
    -------
    precision : float
        In (0, 1]; higher is better. A ValueError, as from `observed_average_precision`,
        on invalid input or when no row has an observed positive label.
    """
    if not 0 <= label_weight <= 1:
        raise ValueError(f"label_weight must be in [0, 1], got {label_weight!r}.")
    y_true, y_score, mask = _observed_inputs(y_true, y_score)
    rows = _observed_ap(y_true, y_score, mask, mask.sum(axis=1))
    if label_weight == 0:
        return rows
    # Labels as rows, contiguous for the row sorts.
    labels = _observed_ap(*(np.ascontiguousarray(a.T) for a in (y_true, y_score, mask)))
    return (1 - label_weight) * rows + label_weight * labels


def observed_two_way_average_precision_scorer(estimator, X, Y):
    """Scorer: `observed_two_way_average_precision` of ``estimator.decision_function(X)``.

    The default ``scoring`` of `glocal.GLOCALCV`, as a callable for ``GridSearchCV``,
    ``cross_val_score`` and ``cross_validate``.

    Parameters
    ----------
    estimator, X, Y
        As for `observed_average_precision_scorer` (Y with NaN for missing labels).

    Returns
    -------
    score : float
        Higher is better.
    """
    return observed_two_way_average_precision(Y, estimator.decision_function(X))


def observed_weighted_average_precision_scorer(estimator, X, Y):
    """Scorer: `observed_weighted_average_precision` of a fitted estimator.

    The rows' term of ``GLOCALCV``'s criterion, with the ``scorer(estimator, X, y)``
    signature that ``GridSearchCV``, ``cross_val_score`` and ``cross_validate`` take as
    ``scoring``; uses ``estimator.decision_function(X)``.

    Parameters
    ----------
    estimator, X, Y
        A fitted estimator with ``decision_function``, its features and the labels (NaN
        missing), as for `observed_average_precision_scorer`.

    Returns
    -------
    score : float
        Higher is better.
    """
    return observed_weighted_average_precision(Y, estimator.decision_function(X))


def observed_average_precision_scorer(estimator, X, Y):
    """Scorer for model selection: `observed_average_precision` of a fitted estimator.

    Has the ``scorer(estimator, X, y)`` signature that ``GridSearchCV``, ``cross_val_score``
    and ``cross_validate`` take as ``scoring``; uses ``estimator.decision_function(X)``,
    so it also works for a ``Pipeline`` ending in a glocal estimator. Rows without an
    observed positive are skipped (see `observed_average_precision`).

    Parameters
    ----------
    estimator : fitted estimator with ``decision_function``
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
        1 positive, 0 negative, NaN missing.

    Returns
    -------
    score : float
        Higher is better.
    """
    return observed_average_precision(Y, estimator.decision_function(X))
