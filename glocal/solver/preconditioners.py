"""Preconditioners of the blocks: approximate inverse Hessians, applied as pymanopt's
``preconditioner(point, vector)``.

Which one a fit uses where there is a choice (W: `DenseW`, `DualW` or `DiagonalW`; V:
`v_column_blocks`, `v_column_diagonal` or `v_mean_column`) is decided once by `glocal.solver.plan`.
"""

import numpy as np
import scipy.linalg

from . import objective as obj
from .._utils.linalg import cho_factor_psd
from .label_fit import apply_row_blocks
from .second_moments import dense

__all__ = ["DenseW", "DualW", "DiagonalW"]


# --- U (Eq. 7) -----------------------------------------------------------------------------------

def u_row_blocks(blocks):
    """The inverse of the U block's per-row Hessians ``blocks`` (halved, l x k x k or one
    k x k for every row; `glocal.solver.objective.u_row_hessians`): for the paper's loss without
    correlation terms the exact inverse Hessian of the basic model, for another one that of
    its quadratic model at U."""
    inverse = np.linalg.inv(blocks) / 2.0

    def preconditioner(point, vector):
        return apply_row_blocks(inverse, vector)
    return preconditioner


# The Laplacian terms add sum_m L_m D B_m to the U block's halved Hessian, L_m = Z_m Z_m^T:
# weak, their diagonal blocks (sum_m B_m on every row) join the row blocks; strong, they
# couple the rows, and the inverse takes that coupling in. Up to this many numbers in the
# span of the top eigenvectors of the L_m (rank times k) the coupling is inverted exactly
# there (Woodbury); above, through one Kronecker product.
MAX_WOODBURY = 600
# Eigenvalues of L_m below this fraction of its largest are left out of the Woodbury span.
WOODBURY_RELATIVE = 1e-2


def u_laplacian_blocks(blocks, Z, B):
    """The U block's preconditioner with the Laplacian terms sum_m L_m D B_m, given the
    label term's per-row Hessian blocks ``blocks`` (halved, lam2 included).

    The terms are weak when, next to the mean row block A, they add at most A's own
    curvature (largest eigenvalue of A^-1 sum_m B_m at most 1): then the inverse of the row
    blocks with sum_m B_m added (the terms' diagonal blocks, rows of Z of unit norm).
    Strong, `_u_woodbury` (exact in the top eigenvectors of every L_m) while that span has
    at most `MAX_WOODBURY` numbers, else `_u_kronecker`.
    """
    total = B.sum(axis=0)
    mean_block = blocks if blocks.ndim == 2 else blocks.mean(axis=0)
    if np.max(np.abs(np.linalg.eigvals(np.linalg.solve(mean_block, total)))) <= 1.0:
        return u_row_blocks(blocks + total)
    return _u_woodbury(blocks, Z, B) or _u_kronecker(mean_block, Z, B)


def _u_woodbury(blocks, Z, B):
    """(A + P M P^T)^-1 = A^-1 - A^-1 P M (I + P^T A^-1 P M)^-1 P^T A^-1, with A the row
    blocks, P the top eigenvectors E_m of every L_m (as D -> E_m^T D and back) and M their
    eigenvalues times B_m: exact for L_m of that rank. None when the span is too large."""
    k = Z.shape[2]
    spans, weights = [], []
    for Z_m, B_m in zip(Z, B):
        E, s, _ = np.linalg.svd(Z_m, full_matrices=False)
        keep = s ** 2 >= WOODBURY_RELATIVE * s[0] ** 2
        spans.append(E[:, keep])
        weights.append((s[keep] ** 2)[:, None, None] * B_m)  # eigenvalue times B_m
    E = np.concatenate(spans, axis=1)  # l x r
    r = E.shape[1]
    if r * k > MAX_WOODBURY:
        return None
    inverse = np.linalg.inv(blocks)
    # P^T A^-1 P: entry ((a, p), (b, q)) is sum_j E[j, a] E[j, b] (A_j^-1)[p, q].
    rows = "pq" if inverse.ndim == 2 else "jpq"
    core = np.einsum(f"ja,jb,{rows}->apbq", E, E, inverse).reshape(r * k, r * k)
    M = scipy.linalg.block_diag(*np.concatenate(weights))
    middle = M @ np.linalg.inv(np.eye(r * k) + core @ M)

    def preconditioner(point, vector):
        x = apply_row_blocks(inverse, vector / 2.0)
        correction = E @ (middle @ (E.T @ x).ravel()).reshape(r, k)
        return x - apply_row_blocks(inverse, correction)
    return preconditioner


def _u_kronecker(A, Z, B):
    """The inverse of D -> D A + L D B' (halved), with A the mean row block and L (x) B'
    the nearest Kronecker product to sum_m L_m (x) B_m (a few alternating least-squares
    steps; exact when the B_m are proportional, the global term alone): two
    eigendecompositions, l x l and k x k."""
    laplacians = Z @ np.swapaxes(Z, 1, 2)
    L = laplacians.sum(axis=0)
    for _ in range(3):
        B_near = np.tensordot(np.einsum("mij,ij->m", laplacians, L), B, axes=1) / np.vdot(L, L)
        L = (np.tensordot(np.einsum("mij,ij->m", B, B_near), laplacians, axes=1)
             / np.vdot(B_near, B_near))
    ell, E = np.linalg.eigh(L)
    # With A = C C^T and C^-1 B' C^-T = Q diag(gamma) Q^T, S = C^-T Q makes S^T A S = I and
    # S^T B' S = diag(gamma): D = E Y S^T with Y = (E^T R S) / (1 + ell gamma^T).
    C_inverse = np.linalg.inv(np.linalg.cholesky(A))
    gamma, Q = np.linalg.eigh(C_inverse @ B_near @ C_inverse.T)
    S = C_inverse.T @ Q
    scale = 2.0 * (1.0 + np.maximum(ell, 0.0)[:, None] * np.maximum(gamma, 0.0)[None, :])

    def preconditioner(point, vector):
        return E @ ((E.T @ vector @ S) / scale) @ S.T
    return preconditioner


# --- V (Eq. 6), for the V block as one problem ------------------------------------------
#
# Each takes U, the start V, the label term's evaluations at a point (`LastPoint` of
# `LabelFit.terms`) and the data.

def v_column_blocks(U, V, terms, data):
    """The inverse of the per-column Hessian blocks (`glocal.solver.objective.v_column_hessians`):
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
    (`glocal.solver.objective.v_mean_column_hessian`), for a loss other than the paper's, whose
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
        """The preconditioner of a W block with weights Ht
        (`glocal.solver.objective.w_products`)."""
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
