"""Label sets from scores: per-label thresholds tuned by cross-validation, and the top k.

A ranking model's scores say which labels come first; predicting a label set needs a cut.
The paper's is the sign of each score, which on multi-label data often predicts no label at
all for a row. Two other cuts:

* `f1_thresholds`: per label, the cut of its scores that maximizes its F1 on the observed
  entries; `LabelThresholdsCV` (for any multi-label estimator) and `glocal.GLOCALCV` (with
  ``thresholds="cv"``) average these cuts over the validation folds of a cross-validation
  and ``predict`` with them.
* `top_k_labels`: the k best-scored labels of every row (``predict_top_k`` of every
  estimator).
"""

from numbers import Integral

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ._utils import validation
from ._base import MultiLabelMixin
from ._fitted import Array, Integer, Model
from .metrics import top_k_labels

__all__ = ["f1_thresholds", "top_k_labels", "LabelThresholdsCV"]

# The least F1 a label's best cut must reach on a validation fold to set its threshold.
MIN_F1 = 0.3


def f1_thresholds(y_true, y_score, min_f1=MIN_F1):
    """The threshold of every label that maximizes its F1 on its observed entries.

    For label j, the entries are cut at every gap between distinct scores; the cut of
    highest F1 (the highest such cut on ties) gives the threshold halfway across that gap,
    so that ``y_score[:, j] > threshold`` predicts the label. A cut below every score is
    placed one below the lowest.

    Parameters
    ----------
    y_true : array-like of shape (n_samples, n_labels)
        1 positive, 0 negative, NaN missing (left out).
    y_score : array-like of shape (n_samples, n_labels)
        Real scores.
    min_f1 : float, default=0.3
        A label whose best F1 is below this gets no threshold (NaN). A rare label with one
        or two positives that the scores rank low would otherwise get a cut below most
        negatives, and predict the label for nearly every row (the SCut rule's known
        failure, which Fan & Lin's "fbr" guards against). `MIN_F1`: chosen on datasets
        other than those of the thresholds study, where it gave the best micro and macro
        F1 of 0, 0.1, 0.3 and 0.5 (``benchmarks/design_thresholds.py``).

    Returns
    -------
    thresholds : ndarray of shape (n_labels,)
        NaN for a label without an observed positive (no cut has an F1), or whose best F1
        is below ``min_f1``.
    """
    y_true = np.asarray(y_true, dtype=float)
    y_score = np.asarray(y_score, dtype=float)
    if y_true.shape != y_score.shape or y_true.ndim != 2:
        raise ValueError(f"y_true and y_score must be 2-D of the same shape, got "
                         f"{y_true.shape} and {y_score.shape}")
    thresholds = np.full(y_true.shape[1], np.nan)
    for j in range(y_true.shape[1]):
        observed = ~np.isnan(y_true[:, j])
        labels, scores = y_true[observed, j] == 1, y_score[observed, j]
        if labels.any():
            thresholds[j] = _best_f1_cut(labels, scores, min_f1)
    return thresholds


def _best_f1_cut(labels, scores, min_f1):
    """`f1_thresholds` of one label with at least one positive."""
    order = np.argsort(-scores, kind="stable")
    scores, labels = scores[order], labels[order]
    ends = np.flatnonzero(np.append(scores[1:] != scores[:-1], True))  # last of each value
    tp = np.cumsum(labels)[ends]
    predicted = ends + 1
    f1 = 2 * tp / (predicted + labels.sum())
    best = int(np.argmax(f1))  # the first maximum: the highest cut
    if f1[best] < min_f1:
        return np.nan
    below = scores[ends[best] + 1] if best + 1 < len(ends) else scores[-1] - 1.0
    return 0.5 * (scores[ends[best]] + below)


def mean_thresholds(per_fold):
    """The thresholds of a cross-validation: each label's mean over the folds where it has
    one; 0 (the sign) for a label with none (see `f1_thresholds`)."""
    per_fold = np.asarray(per_fold, dtype=float)
    tuned = ~np.isnan(per_fold).all(axis=0)
    thresholds = np.zeros(per_fold.shape[1])
    thresholds[tuned] = np.nanmean(per_fold[:, tuned], axis=0)
    return thresholds


def _fold_thresholds(estimator, X, Y, train, test):
    """`f1_thresholds` of ``estimator`` fitted on the rows ``train``, on the rows ``test``."""
    model = clone(estimator).fit(_safe_indexing(X, train), Y[train])
    return f1_thresholds(Y[test], model.decision_function(_safe_indexing(X, test)))


def _estimator_has(name):
    def check(self):
        return hasattr(getattr(self, "estimator_", self.estimator), name)
    return check


class LabelThresholdsCV(MultiLabelMixin, MetaEstimatorMixin, BaseEstimator):
    """A multi-label estimator whose ``predict`` cuts each label at a threshold tuned by CV.

    ``fit`` cross-validates ``estimator``: on every fold it is fitted on the training rows
    and each label's F1-maximizing threshold is found on the validation rows' observed
    entries (`f1_thresholds`); each label's threshold is the mean over the folds where it
    got one (0, the sign, for a label that got none: no observed positive in any validation
    fold, or an F1 below `MIN_F1` in every one). The estimator
    is then refitted on all the rows. ``predict`` gives the labels whose score is above
    their threshold; ``decision_function`` and ``score`` are the refitted estimator's.

    Parameters
    ----------
    estimator : estimator with ``fit`` and ``decision_function``
        E.g. `glocal.baselines.BR` or `glocal.GLOCAL`; cloned.
    cv : int, cross-validation generator or iterable, default=3
        An int means shuffled `sklearn.model_selection.KFold` seeded by ``random_state``.
    n_jobs : int or None, default=None
        Folds fitted in parallel by joblib.
    random_state : int, RandomState instance or None, default=None
        Seeds the folds when ``cv`` is an int.

    Attributes
    ----------
    estimator_ : estimator
        ``estimator`` fitted on all the rows.
    thresholds_ : ndarray of shape (n_labels,)
        The threshold of every label.
    n_features_in_ : int

    See Also
    --------
    glocal.GLOCALCV : tunes thresholds the same way with ``thresholds="cv"``, from the folds
        of its own search (no further fit).

    Examples
    --------
    >>> from glocal.baselines import BR
    >>> from glocal.datasets import make_glocal_data
    >>> from glocal.thresholds import LabelThresholdsCV
    >>> data = make_glocal_data(random_state=0)
    >>> model = LabelThresholdsCV(BR(), random_state=0).fit(data.X, data.Y)
    >>> model.thresholds_.shape
    (12,)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "decision_function"])],
        "cv": ["cv_object"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
    }
    _fitted_attributes = {"estimator_": Model(), "thresholds_": Array("f", ("n_labels",)),
                          "n_features_in_": Integer(1)}

    def __init__(self, estimator, *, cv=3, n_jobs=None, random_state=None):
        self.estimator = estimator
        self.cv = cv
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X, Y):
        """Tune the thresholds by cross-validation, then fit ``estimator`` on all the rows.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Y : array-like of shape (n_samples, n_labels)
            1 positive, 0 negative, NaN missing.

        Returns
        -------
        self
        """
        self._validate_params()
        names = validation.label_names_of(Y)
        Y_dense = validation.dense_labels(Y).astype(float)
        folds = validation.cv_folds(self.cv, X, self.random_state)
        # A fold's label warnings speak of its rows only: the fit on all rows says what
        # holds for the data.
        with validation.warnings_once(names) as records:
            runs = Parallel(n_jobs=self.n_jobs)(
                delayed(validation.call_recording_warnings)(
                    _fold_thresholds, self.estimator, X, Y_dense, train, test,
                    ignore=(validation.LabelWarning,))
                for train, test in folds)
            records.extend(record for _, fold_records in runs for record in fold_records)
            self.estimator_ = clone(self.estimator).fit(X, Y)
        self.thresholds_ = mean_thresholds([thresholds for thresholds, _ in runs])
        self.n_features_in_ = self.estimator_.n_features_in_
        if hasattr(self.estimator_, "feature_names_in_"):
            self.feature_names_in_ = self.estimator_.feature_names_in_
        return self

    def decision_function(self, X):
        """The refitted estimator's scores, shape (n_samples, n_labels)."""
        check_is_fitted(self)
        return self.estimator_.decision_function(X)

    def predict(self, X):
        """1 where a label's score is above its threshold (``thresholds_``), else 0."""
        return (self.decision_function(X) > self.thresholds_).astype(int)

    @available_if(_estimator_has("predict_proba"))
    def predict_proba(self, X):
        """The refitted estimator's probabilities."""
        check_is_fitted(self)
        return self.estimator_.predict_proba(X)
