"""Sparse signed labels: the paper's Y and J without their l x n dense copies.

A {0, 1} label matrix B (l x n, few ones) with a few missing entries M (l x n, 1 where
missing, disjoint from B) has the signed labels Y = 2 B - 1 1^T + M: +1 where B is 1, 0
where M is, -1 elsewhere, so Y is dense although B and M are sparse; so is the mask
J = 1 1^T - M. The solver only needs a few products with them, and each is cheap through
B and M::

    Y A   = 2 B A - 1 (1^T A) + M A       (A: n x m, e.g. V^T)
    A Y   = 2 A B - (A 1) 1^T + A M       (A: m x l, e.g. U^T)
    X^T Y^T = 2 X^T B^T - (X^T 1) 1^T + X^T M^T
    ||J o (Y - U V)||^2 = ||Y||^2 - 2 tr(U^T Y V^T) + tr(U^T U V V^T)
                          - sum over M of (U V)_ji^2            (Y is 0 on M)

and the sums over observed entries that the U and V blocks need are those over all
entries minus those over M (`SparseMask`).

`SparseSignedLabels` keeps B and M and supplies them. It supports the matrix products
``Y @ A`` and ``A @ Y`` with numpy arrays, so the code of `glocal.solver.objective` that multiplies
by Y reads the same for both representations; the other products are methods.
"""

import numpy as np
import scipy.sparse as sp

__all__ = ["SparseSignedLabels", "SparseMask"]


class SparseSignedLabels:
    """The signed labels Y = 2 B - 1 1^T + M (l x n) of sparse {0, 1} matrices B and M.

    Parameters
    ----------
    positives : scipy sparse matrix or array of shape (n_labels, n_samples)
        B: 1 where a label is positive; every entry neither positive nor missing is an
        observed negative.
    missing : scipy sparse matrix or array of shape (n_labels, n_samples), optional
        M: 1 where an entry is missing (disjoint from B); None when every entry is observed.

    Attributes
    ----------
    mask : SparseMask or None
        J = 1 1^T - M, None when every entry is observed: the ``J`` of `GlocalData`.
    """

    # numpy defers ``ndarray @ labels`` to `__rmatmul__` instead of converting the labels.
    __array_ufunc__ = None

    def __init__(self, positives, missing=None):
        self.positives = sp.csr_matrix(positives, dtype=np.float64)
        self.mask = None if missing is None else SparseMask(missing)

    @property
    def shape(self):
        return self.positives.shape

    @property
    def ndim(self):
        return 2

    def __matmul__(self, A):
        """Y A for a dense A of shape (n, m)."""
        out = 2.0 * np.asarray(self.positives @ A) - np.sum(A, axis=0)
        if self.mask is not None:
            out += self.mask.missing @ A
        return out

    def __rmatmul__(self, A):
        """A Y for a dense A of shape (m, l)."""
        out = 2.0 * np.asarray((self.positives.T @ A.T).T) - np.sum(A, axis=1)[:, None]
        if self.mask is not None:
            out += (self.mask.missing.T @ A.T).T
        return out

    def squared_norm(self):
        """||Y||^2: l n less the missing entries (every other entry is +1 or -1)."""
        n_missing = 0 if self.mask is None else self.mask.missing.nnz
        return float(np.prod(self.shape)) - n_missing

    def feature_product(self, X):
        """X^T Y^T, shape (d, l), for X (n x d) dense or sparse."""
        positive_part = self.positives @ X  # B X, l x d, sparse when X is
        positive_part = positive_part.toarray() if sp.issparse(positive_part) else positive_part
        column_sums = np.asarray(X.sum(axis=0)).ravel()
        out = 2.0 * np.asarray(positive_part) - column_sums
        if self.mask is not None:
            missing_part = self.mask.missing @ X
            out += missing_part.toarray() if sp.issparse(missing_part) else missing_part
        return out.T

    def residual_norm(self, U, V):
        """||J o (Y - U V)||^2 from l x k and k x k products, without the l x n residual."""
        value = (self.squared_norm() - 2.0 * float(np.sum(U * (self @ V.T)))
                 + float(np.sum((U.T @ U) * (V @ V.T))))
        if self.mask is not None:  # Y is 0 on the missing entries: their residual is U V
            value -= self.mask.missing_squared_sum(U, V)
        return value

    def label_counts(self):
        """Numbers of observed and of positive samples of every label, shapes (l,)."""
        n_missing = 0 if self.mask is None else np.diff(self.mask.missing.indptr)
        return self.shape[1] - n_missing, np.diff(self.positives.indptr)

    def toarray(self):
        """The dense signed labels (l x n); for tests and small data only."""
        dense = 2.0 * self.positives.toarray() - 1.0
        return dense if self.mask is None else dense + self.mask.missing.toarray()


class SparseMask:
    """The observation mask J = 1 1^T - M (l x n) of a few missing entries M.

    Gives what the U and V blocks need of J, as sums over all entries minus those over M.

    Parameters
    ----------
    missing : scipy sparse matrix or array of shape (n_labels, n_samples)
        M: 1 where an entry is missing.
    """

    def __init__(self, missing):
        self.missing = sp.csr_matrix(missing, dtype=np.float64)
        self._by_sample = self.missing.tocsc()  # column slices for the chunked sums
        self._labels = np.repeat(np.arange(self.shape[0]), np.diff(self.missing.indptr))

    @property
    def shape(self):
        return self.missing.shape

    def entries(self, A, B, chunk=2**16):
        """(A B)_ji on the missing entries (j, i), in CSR order, for A (l x k), B (k x n)."""
        out = np.empty(self.missing.nnz)
        for start in range(0, out.size, chunk):  # bounds the chunk x k gathers
            rows = self._labels[start:start + chunk]
            cols = self.missing.indices[start:start + chunk]
            out[start:start + chunk] = np.einsum("ek,ke->e", A[rows], B[:, cols])
        return out

    def missing_squared_sum(self, A, B):
        """sum over the missing entries of (A B)_ji^2."""
        values = self.entries(A, B)
        return float(values @ values)

    def masked_squared_norm(self, A, B):
        """||J o (A B)||^2 for A (l x k), B (k x n), without A B."""
        return float(np.sum((A.T @ A) * (B @ B.T))) - self.missing_squared_sum(A, B)

    def label_grams(self, V, chunk=4096):
        """G_j = sum_i J_ji v_i v_i^T for every label, shape (l, k * k)."""
        k = V.shape[0]
        gram = np.tile((V @ V.T).ravel(), (self.shape[0], 1))
        for start in range(0, V.shape[1], chunk):  # bounds the chunk x k x k products
            cols = slice(start, start + chunk)
            gram -= self._by_sample[:, cols] @ column_outer(V[:, cols].T)
        return gram.reshape(-1, k * k)

    def sample_grams(self, U, outer, cols):
        """U^T Diag(J[:, i]) U for the samples i in the slice ``cols``, shape (c, k, k);
        ``outer`` is `column_outer` of U."""
        k = U.shape[1]
        removed = np.asarray(self._by_sample[:, cols].T @ outer)
        return (U.T @ U)[None] - removed.reshape(-1, k, k)


def column_outer(A):
    """Row-wise outer products of A (m x k) as an m x k^2 matrix."""
    return np.einsum("ma,mb->mab", A, A).reshape(A.shape[0], -1)
