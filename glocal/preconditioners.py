"""Preconditioners of the blocks: approximate inverse Hessians, applied as pymanopt's
``preconditioner(point, vector)``.

Which one a fit uses where there is a choice (W: `DenseW`, `DualW` or `DiagonalW`; V:
`v_column_blocks`, `v_column_diagonal` or `v_mean_column`) is decided once by `glocal.plan`.
"""

import numpy as np
import scipy.linalg

from . import objective as obj
from ._linalg import cho_factor_psd
from .label_fit import apply_row_blocks
from .second_moments import dense

__all__ = ["DenseW", "DualW", "DiagonalW"]


# --- U (Eq. 7) -----------------------------------------------------------------------------------

def u_row_blocks(term, lam2, U):
    """The inverse of the U block's per-row Hessians without the correlation terms, at U
    (`glocal.objective.u_row_hessians`): for the paper's loss the exact inverse Hessian of
    the basic model (one k x k block per row, or one for all rows when every label is
    observed), for another one that of its quadratic model at U."""
    inverse = np.linalg.inv(obj.u_row_hessians(term, lam2, U)) / 2.0

    def preconditioner(point, vector):
        return apply_row_blocks(inverse, vector)
    return preconditioner


# --- V (Eq. 6), for the V block as one problem ------------------------------------------
#
# Each takes U, the start V, the label term's evaluations at a point (`LastPoint` of
# `LabelFit.terms`) and the data.

def v_column_blocks(U, V, terms, data):
    """The inverse of the per-column Hessian blocks (`glocal.objective.v_column_hessians`):
    exact, the paper's V block being quadratic (n k x k blocks)."""
    inverse_blocks = np.linalg.inv(obj.v_column_hessians(U, V, data)) / 2.0

    def preconditioner(point, vector):
        return np.einsum("iab,bi->ai", inverse_blocks, vector)
    return preconditioner


def v_column_diagonal(U, V, terms, data):
    """The diagonal of the per-column Hessian blocks: where n k x k blocks take too much
    memory."""
    diagonal = 2.0 * ((U ** 2).T @ data.label.curvature(U, V, data) + data.lam + data.v_weight)

    def preconditioner(point, vector):
        return vector / diagonal
    return preconditioner


def v_mean_column(U, V, terms, data):
    """The inverse of the mean of the per-column blocks at the start V
    (`glocal.objective.v_mean_column_hessian`), for a loss other than the paper's, whose
    blocks change with the active entries as V moves. One k x k inverse (well conditioned:
    lam + lam_v > 0), applied by one product."""
    inverse = np.linalg.inv(2.0 * obj.v_mean_column_hessian(U, terms(V)[2], data))

    def preconditioner(point, vector):
        return inverse @ vector
    return preconditioner


# --- W (Eq. 8) -----------------------------------------------------------------------------------
#
# The Hessian of Eq. (8) is 2 (sum_m C_m D Ht_m + lam2 D) with C_m = X_m^T X_m and
# Ht_m = lam I + H_m. Replacing every C_m D Ht_m by (n_m / n) C D Hbar, with
# Hbar = sum_m (n_m / n) Ht_m, is exact when the groups' H_m agree and leaves an operator
# C (x) Hbar + lam2 I that two eigendecompositions invert (`_kronecker`). Without the
# correlation terms (Hbar = lam I) it is lam C + lam2 I. Calling a W preconditioner applies the
# basic model's inverse; ``for_weights(Ht)`` gives the one for a block with correlation terms.

class DenseW:
    """lam C + lam2 I inverted by its Cholesky factor (d x d, up to the lever
    ``max_dense_features``); C's eigendecomposition, made when first needed, for the
    weights' own preconditioners."""

    def __init__(self, gram, lam, lam2, fractions):
        self._gram, self._lam, self._lam2, self._fractions = gram, lam, lam2, fractions
        d = gram.shape[0]
        self._factor = cho_factor_psd(lam * gram + lam2 * np.eye(d))
        self._eigen = None

    def __call__(self, point, vector):
        return scipy.linalg.cho_solve(self._factor, vector, check_finite=False) / 2.0

    def for_weights(self, Ht):
        """The preconditioner of a W block with weights Ht (`glocal.objective.w_products`)."""
        if Ht is None:
            return self
        Hbar = np.tensordot(self._fractions, Ht, axes=1)
        gamma, R = np.linalg.eigh(Hbar)
        # Correlation terms small next to lam: the basic model's factor is nearly exact.
        if np.max(np.abs(gamma - self._lam)) <= 0.1 * self._lam:
            return self
        if self._eigen is None:
            self._eigen = np.linalg.eigh(self._gram)
        return _kronecker(*self._eigen, gamma, R, self._lam2)


class DualW:
    """More features than the dense limit but at most that many samples, in memory: the basic
    model's inverse through the Woodbury identity
    (lam C + lam2 I)^-1 = (I - lam X^T (lam X X^T + lam2 I)^-1 X) / lam2, from a Cholesky factor
    of the n x n matrix (no d x d matrix). It also stands in for the blocks with correlation
    terms."""

    def __init__(self, X, lam, lam2):
        self._X, self._lam, self._lam2 = X, lam, lam2
        self._dual = cho_factor_psd(lam * dense(X @ X.T) + lam2 * np.eye(X.shape[0]))

    def __call__(self, point, vector):
        inner = scipy.linalg.cho_solve(self._dual, np.asarray(self._X @ vector),
                                       check_finite=False)
        out = np.asarray(self._X.T @ inner)  # a new d x k array: updated in place
        out *= -self._lam / (2.0 * self._lam2)
        out += vector / (2.0 * self._lam2)
        return out

    def for_weights(self, Ht):
        return self


class DiagonalW:
    """C replaced by its diagonal (the squared norms of the features): many features and
    samples, or a backend that keeps no X^T X."""

    def __init__(self, squares, lam, lam2, fractions):
        self._squares, self._lam, self._lam2, self._fractions = squares, lam, lam2, fractions

    def __call__(self, point, vector):
        return vector / (2.0 * (self._lam * self._squares[:, None] + self._lam2))

    def for_weights(self, Ht):
        if Ht is None:
            return self
        gamma, R = np.linalg.eigh(np.tensordot(self._fractions, Ht, axes=1))
        return _kronecker(self._squares, None, gamma, R, self._lam2)


def _kronecker(spectrum, Q, gamma, R, lam2):
    """The inverse of 2 (C (x) Hbar + lam2 I) from C = Q diag(spectrum) Q^T (Q None: C
    diagonal) and Hbar = R diag(gamma) R^T."""
    scale = 2.0 * (np.maximum(spectrum, 0.0)[:, None] * gamma[None, :] + lam2)

    def preconditioner(point, vector):
        rotated = vector @ R if Q is None else Q.T @ vector @ R
        solved = (rotated / scale) @ R.T
        return solved if Q is None else Q @ solved
    return preconditioner


# --- Z (Eq. 5), on unit-norm rows ---------------------------------------------------------------

def unit_rows_preconditioner(manifold, U, B):
    """The inverse of each group's Euclidean Hessian 2 U B_m U^T of the Z block, shifted by
    1e-3 of its largest eigenvalue (the Hessian has rank at most k, below l when there are
    more labels than latent dimensions), projected on the tangent space: symmetric positive
    definite there. With strong correlation terms that Hessian is steep along U and flat
    across it, where conjugate gradients stall.

    The Hessian of group m is 2 K_m K_m^T with K_m = U B_m^1/2 (l x k), so its shifted
    inverse comes from k x k matrices (Woodbury): (K K^T + s I)^-1 = (I - K (s I +
    K^T K)^-1 K^T) / s, and K K^T's largest eigenvalue is K^T K's; no l x l matrix is
    formed.
    """
    values, vectors = np.linalg.eigh(B)  # g x k x k, positive semidefinite
    K = U @ (vectors * np.sqrt(np.maximum(values, 0.0))[:, None, :])  # g x l x k
    gram = np.swapaxes(K, 1, 2) @ K
    top = np.linalg.eigvalsh(gram)[:, -1]
    shift = np.where(top > 0, 1e-3 * top, 1.0)[:, None, None]
    inner = np.linalg.inv(gram + shift * np.eye(gram.shape[-1]))

    def preconditioner(point, vector):
        solved = (vector - K @ (inner @ (np.swapaxes(K, 1, 2) @ vector))) / (2.0 * shift)
        return manifold.projection(point, solved)
    return preconditioner
