"""Sparse signed labels: the paper's Y without its l x n dense copy.

A fully observed {0, 1} label matrix B (l x n, few ones) has the signed labels
Y = 2 B - 1 1^T: every entry is observed, +1 where B is 1 and -1 elsewhere, so Y is dense
although B is sparse. The solver only needs a few products with Y, and each is cheap
through B:

    Y A   = 2 B A - 1 (1^T A)       (A: n x m, e.g. V^T)
    A Y   = 2 A B - (A 1) 1^T       (A: m x l, e.g. U^T)
    X^T Y^T = 2 X^T B^T - (X^T 1) 1^T
    ||Y - U V||^2 = l n - 2 tr(U^T Y V^T) + tr(U^T U V V^T)

`SparseSignedLabels` keeps B and supplies them. It supports the matrix products ``Y @ A``
and ``A @ Y`` with numpy arrays, so the code of `glocal.objective` that multiplies by Y
reads the same for both representations; the other products are methods.
"""

import numpy as np
import scipy.sparse as sp


class SparseSignedLabels:
    """The signed labels Y = 2 B - 1 1^T (l x n) of a sparse, fully observed {0, 1} matrix B.

    Parameters
    ----------
    positives : scipy sparse matrix or array of shape (n_labels, n_samples)
        B: 1 where a label is positive; every other entry is an observed negative.
    """

    # numpy defers ``ndarray @ labels`` to `__rmatmul__` instead of converting the labels.
    __array_ufunc__ = None

    def __init__(self, positives):
        self.positives = sp.csr_matrix(positives, dtype=np.float64)

    @property
    def shape(self):
        return self.positives.shape

    @property
    def ndim(self):
        return 2

    def __matmul__(self, A):
        """Y A for a dense A of shape (n, m)."""
        return 2.0 * np.asarray(self.positives @ A) - np.sum(A, axis=0)

    def __rmatmul__(self, A):
        """A Y for a dense A of shape (m, l)."""
        return 2.0 * np.asarray((self.positives.T @ A.T).T) - np.sum(A, axis=1)[:, None]

    def squared_norm(self):
        """||Y||^2 = l n: every entry is +1 or -1."""
        return float(np.prod(self.shape))

    def feature_product(self, X):
        """X^T Y^T, shape (d, l), for X (n x d) dense or sparse."""
        positive_part = self.positives @ X  # B X, l x d, sparse when X is
        positive_part = positive_part.toarray() if sp.issparse(positive_part) else positive_part
        column_sums = np.asarray(X.sum(axis=0)).ravel()
        return (2.0 * np.asarray(positive_part) - column_sums).T

    def residual_norm(self, U, V):
        """||Y - U V||^2 from l x k and k x k products, without the l x n residual."""
        return (self.squared_norm() - 2.0 * float(np.sum(U * (self @ V.T)))
                + float(np.sum((U.T @ U) * (V @ V.T))))

    def label_counts(self):
        """Number of positive samples of every label, shape (l,)."""
        return np.diff(self.positives.indptr)

    def toarray(self):
        """The dense signed labels (l x n); for tests and small data only."""
        return 2.0 * self.positives.toarray() - 1.0
