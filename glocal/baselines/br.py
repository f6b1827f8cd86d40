"""Binary relevance (BR): one linear SVM per label, through liblinear."""

import warnings
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.svm._base import _fit_liblinear
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from .._base import MultiLabelMixin
from .._validation import LabelWarning


class BR(MultiLabelMixin, BaseEstimator):
    """Binary relevance: an independent `sklearn.svm.LinearSVC` for every label.

    Boutell, Luo, Shen & Brown (2004), "Learning multi-label scene classification", Pattern
    Recognition 37(9). Each label j gets ``LinearSVC(C=C)`` trained on the samples where
    label j is observed (all samples when Y has no NaN): with missing labels this is the
    plain baseline of learning each label from its own observed rows.

    A label whose observed entries hold one class only gets the constant score +1 (always
    positive) or -1 (never positive), on the scale of an SVM margin, and a label with no
    observed entry the score 0; one warning names all such labels.

    Parameters
    ----------
    C : float, default=0.1
        Inverse regularization strength of every SVM.
    random_state : int, RandomState instance or None, default=None
        Seeds liblinear's dual coordinate descent (it shuffles the samples), so that fits
        are reproducible.

    Attributes
    ----------
    coef_ : ndarray of shape (n_labels, n_features)
    intercept_ : ndarray of shape (n_labels,)
    n_features_in_ : int
    """

    _parameter_constraints = {"C": [Interval(Real, 0, None, closed="neither")],
                              "random_state": ["random_state"]}

    def __init__(self, C=0.1, random_state=None):
        self.C = C
        self.random_state = random_state

    def fit(self, X, Y):
        """Fit one SVM per label on its observed rows.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Label indicator: 1 positive, 0 negative, NaN missing.

        Returns
        -------
        self
        """
        label_names = getattr(Y, "columns", None)
        X, Y_signed, J = self._check_training_data(X, Y, warn=False)
        # liblinear copies X into its own sparse rows for every label: from CSR that copy
        # reads the non-zeros only (from dense X it scans every entry, and drops the zeros,
        # so the problem liblinear solves is the same).
        X_csr = X if sp.issparse(X) else sp.csr_matrix(X)
        rng = check_random_state(self.random_state)
        n_labels = Y_signed.shape[0]
        self.coef_ = np.zeros((n_labels, X.shape[1]))
        self.intercept_ = np.zeros(n_labels)
        constant = []
        for j, y in enumerate(Y_signed):
            rows = slice(None) if J is None else np.flatnonzero(J[j])
            y = y[rows]
            seed = rng.randint(np.iinfo(np.int32).max)  # drawn for every label: same streams
            if y.size == 0 or np.all(y == y[0]):
                self.intercept_[j] = y[0] if y.size else 0.0
                constant.append(j)
                continue
            X_j = X_csr if J is None else X_csr[rows]
            # LinearSVC(C=C, dual="auto")'s fit without its checks of the inputs, done once
            # above: the dual when the label has fewer rows than features, else the primal.
            coef, intercept, _ = _fit_liblinear(
                X_j, y, self.C, fit_intercept=True, intercept_scaling=1.0, class_weight=None,
                penalty="l2", dual=bool(X_j.shape[0] < X_j.shape[1]), verbose=0,
                max_iter=1000, tol=1e-4, random_state=seed, loss="squared_hinge")
            self.coef_[j], self.intercept_[j] = coef[0], intercept[0]
        if constant:
            names = [label_names[j] if label_names is not None else j for j in constant]
            warnings.warn(f"BR: labels {names[:10]}{' ...' if len(names) > 10 else ''} have "
                          "one class only among their observed entries; they get a constant "
                          "score", LabelWarning)
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """Label scores, shape (n_samples, n_labels)."""
        X = self._check_fitted_features(X)
        return np.asarray(X @ self.coef_.T) + self.intercept_
