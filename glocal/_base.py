"""What every multi-label estimator of glocal shares: input checks, predict, score, tags."""

from collections import Counter
from functools import update_wrapper
from types import MethodType

import numpy as np
from sklearn.base import MultiOutputMixin
from sklearn.utils.validation import check_is_fitted

from ._utils import validation
from ._utils.progress import counted, settings_text

try:
    from sklearn.utils.validation import _check_feature_names as _sklearn_feature_names
except ImportError:  # scikit-learn < 1.6, where it is a method of BaseEstimator
    def _sklearn_feature_names(estimator, X, *, reset):
        estimator._check_feature_names(X, reset=reset)


def _check_feature_names(estimator, X, *, reset):
    """scikit-learn's check of X's column names (stored at fit, compared later), after
    refusing in one line a frame that repeats a name."""
    columns = getattr(X, "columns", None)
    if columns is not None:
        repeated = [name for name, count in Counter(list(columns)).items() if count > 1]
        if repeated:
            raise ValueError(f"X has repeated column names ({', '.join(map(repr, repeated[:3]))}"
                             "); name every feature column once")
    _sklearn_feature_names(estimator, X, reset=reset)


class _IfLogisticLoss:
    """A method present only when the model ``model_of(self)`` has ``loss="logistic"``: as
    scikit-learn's ``available_if`` (``hasattr`` is False otherwise, so meta-estimators
    see it absent), but its AttributeError says what the method needs."""

    def __init__(self, method, model_of, example):
        self.method, self.model_of, self.example = method, model_of, example
        update_wrapper(self, method)

    def __get__(self, obj, owner=None):
        if obj is None:  # the class's attribute: the method, for its docstring
            return self.method
        loss = getattr(self.model_of(obj), "loss", None)
        if loss != "logistic":
            raise AttributeError(
                f"{type(obj).__name__}.{self.method.__name__} needs loss='logistic', whose "
                f"scores are log-odds (this model's loss={loss!r} fits margins, not "
                f"probabilities): fit {self.example}")
        return MethodType(self.method, obj)


def if_logistic_loss(model_of, example):
    """Decorate a method that only a model of the logistic loss has (see `_IfLogisticLoss`):
    ``model_of(self)`` is the model whose loss decides, ``example`` the estimator to fit
    instead, said in the error."""
    return lambda method: _IfLogisticLoss(method, model_of, example)


class MultiLabelMixin(MultiOutputMixin):
    """For estimators with ``decision_function(X)`` returning (n_samples, n_labels) scores."""

    def _check_training_data(self, X, Y, warn=True, keep_sparse=False):
        """Validate the parameters and the data given to ``fit``.

        Returns X (sparse stays sparse), the signed labels (n_labels, n_samples) and the
        observation mask (None when every entry is observed). An estimator that warns about
        degenerate labels itself passes ``warn=False``; one whose solver takes
        `glocal.labels.SparseSignedLabels` passes ``keep_sparse=True``
        (see `validation.check_labels`). Stores ``feature_names_in_`` as scikit-learn
        does: the column names of a DataFrame X whose names are all strings.
        """
        self._validate_params()
        _check_feature_names(self, X, reset=True)
        X = validation.check_features(X)
        Y_signed, J = validation.check_labels(Y, X.shape[0], warn=warn,
                                               keep_sparse=keep_sparse)
        return X, Y_signed, J

    def _check_fitted_features(self, X):
        """The features of a fitted estimator's input, checked against those seen in fit
        (their number, and their names as scikit-learn checks them)."""
        check_is_fitted(self)
        _check_feature_names(self, X, reset=False)
        return validation.check_features(X, self.n_features_in_, type(self).__name__)

    def predict(self, X):
        """Label indicator: 1 where the score is positive (the paper's sign), else 0."""
        return (self.decision_function(X) > 0).astype(int)

    def predict_top_k(self, X, k):
        """Label indicator of the ``k`` best-scored labels of every row.

        Every row gets exactly ``min(k, n_labels)`` labels, whatever the scores' scale
        (ties go to the first label). See `glocal.thresholds.top_k_labels`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        k : int
            Labels per row, at least 1.

        Returns
        -------
        y_pred : ndarray of int of shape (n_samples, n_labels)
        """
        from .metrics import top_k_labels

        return top_k_labels(self.decision_function(X), k)

    def score(self, X, Y):
        """Average precision of each row's ranking of its observed labels (the paper's Ap).

        Missing entries (NaN in Y) are left out of each row's ranking, so ``GridSearchCV``
        and ``cross_val_score`` tune on data with missing labels; rows without an observed
        positive are skipped. Without NaN this is `glocal.metrics.average_precision`. See
        `glocal.metrics.observed_average_precision`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            1 positive, 0 negative, NaN missing.

        Returns
        -------
        score : float
            Higher is better.
        """
        from .metrics import observed_average_precision_scorer

        return observed_average_precision_scorer(self, X, Y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = False
        tags.target_tags.two_d_labels = True
        tags.target_tags.one_d_labels = False
        return tags


# Scores below this, against labels of +-1, are no model: a weight wiped it out.
VANISHED_BOUND = 1e-6
# How the warning below starts; a search that scores such fits itself silences it.
VANISHED_WARNING = "the fitted model's scores are all zero"


def scores_vanish(U, V):
    """Whether a fitted factorization U V (labels x samples) is zero to rounding: each entry
    is at most the largest row norm of U times the largest column norm of V, and that bound
    is below `VANISHED_BOUND`. V may be a Dask array (one pass over its chunks); neither U
    nor V is empty."""
    bound = float(np.linalg.norm(U, axis=1).max()) * float(np.linalg.norm(V, axis=0).max())
    return bound < VANISHED_BOUND


def warn_if_scores_vanish(U, V, weight):
    """Warn when a fitted factorization U V is zero to rounding (`scores_vanish`): the model
    fits labels of +-1 by zeros and scores every label 0 everywhere, so ``weight`` (e.g.
    ``"lam2=100"``) is too large. Called by an estimator's ``fit``: the warning points at
    its caller."""
    if scores_vanish(U, V):
        validation.warn_once(f"{VANISHED_WARNING} (every entry of U V is below "
                             f"{VANISHED_BOUND:g}): {weight} is too large for this data; "
                             "lower it", UserWarning, stacklevel=3)


def warn_if_any_vanished(candidates, vanished):
    """One warning naming, once each, the settings whose scores vanished on some fold."""
    folds = np.sum(vanished, axis=0)
    named = [f"{settings_text(candidates[i])} ({folds[i]} of {len(vanished)} folds)"
             for i in np.flatnonzero(folds)]
    if named:
        validation.warn_once(
            f"the fitted scores vanished (every entry of U V below {VANISHED_BOUND:g}) for "
            f"{counted(len(named), 'setting')}, scored as the worst on those folds: "
            f"{'; '.join(named)}; lower lam2 or leave them out of param_grid",
            UserWarning, stacklevel=3)
