"""Binary relevance (BR): one linear SVM per label, through liblinear."""

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.svm import LinearSVC
from sklearn.utils._param_validation import Interval

from .._base import MultiLabelMixin


class BR(MultiLabelMixin, BaseEstimator):
    """Binary relevance: an independent `sklearn.svm.LinearSVC` for every label.

    Boutell, Luo, Shen & Brown (2004), "Learning multi-label scene classification", Pattern
    Recognition 37(9). Each label j gets ``LinearSVC(C=C)`` trained on all samples; a label
    that is constant in the training data gets the constant score +1 (always positive) or
    -1 (never positive), on the scale of an SVM margin.

    BR cannot learn with missing labels: ``fit`` rejects NaN in Y.

    Parameters
    ----------
    C : float, default=0.1
        Inverse regularization strength of every SVM.

    Attributes
    ----------
    coef_ : ndarray of shape (n_labels, n_features)
    intercept_ : ndarray of shape (n_labels,)
    n_features_in_ : int
    """

    _parameter_constraints = {"C": [Interval(Real, 0, None, closed="neither")]}

    def __init__(self, C=0.1):
        self.C = C

    def fit(self, X, Y):
        """Fit one SVM per label. Y: (n_samples, n_labels) in {0, 1}, no NaN."""
        X, Y_signed, J = self._check_training_data(X, Y, missing_labels=False)
        n_labels = Y_signed.shape[0]
        self.coef_ = np.zeros((n_labels, X.shape[1]))
        self.intercept_ = np.zeros(n_labels)
        for j, y in enumerate(Y_signed):
            if np.all(y == y[0]):
                self.intercept_[j] = y[0]
                continue
            svm = LinearSVC(C=self.C).fit(X, y)
            self.coef_[j], self.intercept_[j] = svm.coef_[0], svm.intercept_[0]
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """Label scores, shape (n_samples, n_labels)."""
        X = self._check_fitted_features(X)
        return np.asarray(X @ self.coef_.T) + self.intercept_

