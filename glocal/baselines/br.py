"""Binary relevance (BR): one linear SVM per label, through liblinear."""

import warnings
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import _liblinear
from sklearn.utils import check_random_state
from sklearn.utils.extmath import row_norms
from sklearn.utils._param_validation import Interval

from .._utils import validation
from .._base import MultiLabelMixin
from .._fitted import Array, Integer
from .._utils.validation import LabelWarning


def _fit_svm(X, y, C, dual, seed, max_iter=1000):
    """The weights and intercept of ``LinearSVC(C=C, dual=dual, random_state=seed)`` fitted
    to CSR X and labels y of +-1, bit for bit, without its per-call checks of the inputs
    (about 2 ms a label, as much as a whole solve on small data)."""
    _liblinear.set_verbosity_wrap(0)
    raw, n_iter = _liblinear.train_wrap(
        X, (y > 0).astype(np.float64), True, 1 if dual else 2, 1e-4, 1.0, C, np.ones(2),
        max_iter, np.random.RandomState(seed).randint(np.iinfo("i").max), 0.1,
        np.ones(X.shape[0]))
    if n_iter.max() >= max_iter:
        warnings.warn("Liblinear failed to converge, increase the number of iterations.",
                      ConvergenceWarning, stacklevel=3)
    return raw[0, :-1], raw[0, -1]


class BR(MultiLabelMixin, BaseEstimator):
    """Binary relevance: an independent `sklearn.svm.LinearSVC` for every label.

    Boutell, Luo, Shen & Brown (2004), "Learning multi-label scene classification", Pattern
    Recognition 37(9). Each label j gets ``LinearSVC(C=C)`` trained on the samples where
    label j is observed (all samples when Y has no NaN): with missing labels this is the
    plain baseline of learning each label from its own observed rows.

    Every SVM solves LinearSVC's problem (squared hinge, intercept, tolerance 1e-4) with
    liblinear's dual coordinate descent when the label has fewer rows than features, as
    ``dual="auto"`` chooses, and also when every row has ``2 C (|x|^2 + 1) <= 1`` (e.g.
    unit-norm rows at C <= 0.25), where its dual is well conditioned, it converges in few
    passes over the rows and is faster than the primal Newton solver used otherwise. Each
    fit equals that LinearSVC's bit for bit; X is copied to CSR once for all labels.

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
    _fitted_attributes = {"coef_": Array("f", ("n_labels", "n_features_in_")),
                          "intercept_": Array("f", ("n_labels",)),
                          "n_features_in_": Integer(1)}

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
        label_names = validation.label_names_of(Y)
        X, Y_signed, J = self._check_training_data(X, Y, warn=False)
        # liblinear copies X into its own sparse rows for every label: from CSR that copy
        # reads the non-zeros only (from dense X it scans every entry, and drops the zeros,
        # so the problem liblinear solves is the same).
        X_csr = X if sp.issparse(X) else sp.csr_matrix(X)
        # Rows whose loss curvature 2 C (|x|^2 + 1) (the 1 of the intercept) stays below the
        # regularization's: the dual is then well conditioned and liblinear's dual coordinate
        # descent needs few passes over the rows, fewer than the primal Newton solver's work.
        squared_norms = row_norms(X_csr, squared=True)
        small_rows = 2 * self.C * (squared_norms.max(initial=0.0) + 1) <= 1
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
            dual = small_rows or X_j.shape[0] < X_j.shape[1]
            self.coef_[j], self.intercept_[j] = _fit_svm(X_j, y, self.C, dual, seed)
        if constant:
            validation.warn_once(f"BR: {validation.labels_text(constant, label_names)} "
                                  "have one class only among their observed entries; they "
                                  "get a constant score", LabelWarning)
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """Label scores, shape (n_samples, n_labels)."""
        X = self._check_fitted_features(X)
        return np.asarray(X @ self.coef_.T) + self.intercept_
