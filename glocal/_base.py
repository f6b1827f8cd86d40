"""What every multi-label estimator of glocal shares: input checks, predict, score, tags."""

from sklearn.base import MultiOutputMixin
from sklearn.utils.validation import check_is_fitted

from . import _validation


class MultiLabelMixin(MultiOutputMixin):
    """For estimators with ``decision_function(X)`` returning (n_samples, n_labels) scores."""

    def _check_training_data(self, X, Y, warn=True, keep_sparse=False):
        """Validate the parameters and the data given to ``fit``.

        Returns X (sparse stays sparse), the signed labels (n_labels, n_samples) and the
        observation mask (None when every entry is observed). An estimator that warns about
        degenerate labels itself passes ``warn=False``; one whose solver takes
        `glocal.labels.SparseSignedLabels` passes ``keep_sparse=True``
        (see `_validation.check_labels`).
        """
        self._validate_params()
        X = _validation.check_features(X)
        Y_signed, J = _validation.check_labels(Y, X.shape[0], warn=warn,
                                               keep_sparse=keep_sparse)
        return X, Y_signed, J

    def _check_fitted_features(self, X):
        """The features of a fitted estimator's input, checked against those seen in fit."""
        check_is_fitted(self)
        return _validation.check_features(X, self.n_features_in_, type(self).__name__)

    def predict(self, X):
        """Label indicator: 1 where the score is positive (the paper's sign), else 0."""
        return (self.decision_function(X) > 0).astype(int)

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
