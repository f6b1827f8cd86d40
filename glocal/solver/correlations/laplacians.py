"""GLOCAL's correlation terms (Eq. 4): global and local label Laplacians Z_m Z_m^T, unit-norm rows.

    sum_m [ lam3 (n_m / n) tr(F_0^T Z_m Z_m^T F_0) + lam4 tr(F_m^T Z_m Z_m^T F_m) ],

F_0 = U W^T X, F_m = U W^T X_m. Both terms of group m are quadratic forms in small k x k
matrices once P = X W is known:

    sum_m tr(Z_m^T U B_m U^T Z_m),   B_m = lam3 (n_m / n) P^T P + lam4 P_m^T P_m     (k x k),

or, seen from W, sum_m tr(P_m H_m P_m^T) with H_m = lam3 sum_m' (n_m'/n) G_m' + lam4 G_m,
G_m = U^T Z_m Z_m^T U (`feature_side_weights`), so no d x d or n x n matrix is needed. The
Z_m are the term's own block, Eq. (5): g independent problems on unit-norm rows, solved
jointly on `glocal.manifolds.UnitRows`. `LabelLaplacians` is this term as a
`glocal.solver.correlations.CorrelationTerm`.
"""

import numpy as np

from ..coupling import feature_product, group_grams
from .interface import Block, CorrelationTerm, FeatureSide
from ...manifolds import UnitRows, normalize_rows
from ..objective import basic_objective
from ..preconditioners import u_laplacian_blocks, unit_rows_preconditioner

__all__ = ["LabelLaplacians", "objective", "local_correlations", "global_correlation"]


def objective(U, V, W, Z, data, P=None):
    """The full GLOCAL objective, Eq. (4) with R = ||U||^2 + ||V||^2 + ||W||^2: the basic
    model (`glocal.solver.objective.basic_objective`) and these terms, with ``data.lam3`` and
    ``data.lam4``. ``P = X @ W`` may be passed when the caller has it already."""
    if P is None:
        P = feature_product(W, data)
    value = basic_objective(U, V, W, data, P=P)
    if data.has_manifold_terms:
        B = label_side_weights(group_grams(P, data), data.group_fractions, data.lam3,
                               data.lam4)
        value += manifold_term(U, Z, B)
    return value


def _transposed(stack):
    """Transpose every matrix of a stack (..., a, b) -> (..., b, a)."""
    return np.swapaxes(stack, -1, -2)


def label_side_weights(grams, fractions, lam3, lam4, total=None):
    """B_m = lam3 (n_m/n) P^T P + lam4 P_m^T P_m from the groups' P_m^T P_m (``grams``), shape
    (g, k, k); ``total`` is P^T P when it is not their sum (centered scores). With these, the
    terms are sum_m tr(Z_m^T U B_m U^T Z_m)."""
    if total is None:
        total = grams.sum(axis=0)
    return lam3 * fractions[:, None, None] * total[None] + lam4 * grams


def laplacian_weights(U, Z):
    """G_m = U^T Z_m Z_m^T U, shape (g, k, k): the label Laplacians seen from the latent space."""
    T = _transposed(Z) @ U  # Z_m^T U
    return _transposed(T) @ T


def feature_side_weights(G, fractions, lam3, lam4):
    """H_m = lam3 sum_m' (n_m'/n) G_m' + lam4 G_m, shape (g, k, k): the terms equal
    sum_m tr(P_m H_m P_m^T), the form of the W block, where W enters through P = X W."""
    global_part = np.tensordot(fractions, G, axes=1)
    return lam3 * global_part[None] + lam4 * G


def manifold_term(U, Z, B):
    """sum_m tr(Z_m^T U B_m U^T Z_m): both label-manifold terms of Eq. (4)."""
    T = _transposed(Z) @ U
    return float(np.sum((T @ B) * T))


def z_cost_grad(Z, U, B):
    """Eq. (5) for all groups, sum_m tr(Z_m^T U B_m U^T Z_m), and its Euclidean gradient in
    Z (g x l x k)."""
    UBU_Z = _apply_label_laplacian_weights(Z, U, B)
    return float(np.sum(UBU_Z * Z)), 2.0 * UBU_Z


def z_hessp(D, U, B):
    """Euclidean Hessian of the Z block applied to a direction D."""
    return 2.0 * _apply_label_laplacian_weights(D, U, B)


def _apply_label_laplacian_weights(Z, U, B):
    """U B_m U^T Z_m for every group, without forming the l x l matrices."""
    return U @ (B @ (U.T @ Z))  # batched products: BLAS, not einsum


class _USide:
    """The terms at fixed Z and B as a function of U (Eq. 7)."""

    def __init__(self, Z, B):
        self.Z, self.B = Z, B

    def cost_grad(self, U):
        T = _transposed(self.Z) @ U  # Z_m^T U
        TB = T @ self.B
        return np.sum(TB * T), (self.Z @ TB).sum(axis=0)

    def hessp(self, U, D):
        return (self.Z @ ((_transposed(self.Z) @ D) @ self.B)).sum(axis=0)

    def preconditioner(self, blocks, U):
        """The U block's preconditioner with these terms, given the label term's row
        blocks (`glocal.solver.preconditioners.u_laplacian_blocks`; quadratic in U: the start U is
        not read)."""
        return u_laplacian_blocks(blocks, self.Z, self.B)


class LabelLaplacians(CorrelationTerm):
    """The paper's global and local label-manifold terms, a
    `glocal.solver.correlations.CorrelationTerm`.

    Parameters
    ----------
    lam3, lam4 : float
        Weights of the global and the local terms.
    group_fractions : ndarray of shape (g,)
        n_m / n of every group.
    preconditioned : bool, default=False
        Precondition the Z block by its shifted Euclidean Hessians
        (`glocal.solver.preconditioners.unit_rows_preconditioner`): for strong terms, whose
        Hessian is steep along U and flat across it.
    """

    block_names = ("Z",)

    def __init__(self, lam3, lam4, group_fractions, preconditioned=False):
        self.lam3, self.lam4 = lam3, lam4
        self.group_fractions = group_fractions
        self.preconditioned = preconditioned
        self._preconditioner = (unit_rows_preconditioner if preconditioned
                                else _no_preconditioner)
        self.active = lam3 > 0 or lam4 > 0
        if not self.active:  # nothing to read of the scores: every B_m is zero
            self.label_side = self._no_weights

    def state_shape(self, n_groups, n_labels, n_latent):
        return (n_groups, n_labels, n_latent)

    def start(self, n_groups, n_labels, n_latent, rng):
        return normalize_rows(rng.standard_normal((n_groups, n_labels, n_latent)))

    def checked(self, state, n_groups, n_labels, n_latent):
        Z = np.array(state, dtype=float)
        expected = self.state_shape(n_groups, n_labels, n_latent)
        if Z.shape != expected:
            raise ValueError(f"initial_point: Z has shape {Z.shape}, expected {expected}")
        return normalize_rows(Z)  # the constraint holds from the start

    def label_side(self, W, space):
        """B, from the groups' P_m^T P_m."""
        return label_side_weights(space.score_group_grams(W), self.group_fractions, self.lam3,
                                  self.lam4)

    def _no_weights(self, W, space):
        k = W.shape[1]
        return np.zeros((len(self.group_fractions), k, k))

    def value(self, U, state, side):
        return manifold_term(U, state, side)

    def update(self, U, state, side, solve):
        manifold = UnitRows(*state.shape)
        block = Block(manifold, lambda Z: z_cost_grad(Z, U, side),
                      lambda Z, D: z_hessp(D, U, side), self._preconditioner(manifold, U, side))
        return solve("Z", block, state)

    def u_side(self, state, side):
        return _USide(state, side)

    def w_side(self, U, state, side):
        return FeatureSide(feature_side_weights(laplacian_weights(U, state),
                                                self.group_fractions, self.lam3, self.lam4))

    def correlations(self, state, group_fractions):
        local = local_correlations(state)
        return {"local_correlations_": local,
                "global_correlation_": global_correlation(local, group_fractions)}


def _no_preconditioner(manifold, U, B):
    return None


def local_correlations(Z):
    """Label correlations in [-1, 1] from Laplacian factors: 1 on the diagonal, -Z Z^T off
    it, shape (g, l, l)."""
    gram = np.einsum("mik,mjk->mij", Z, Z)
    l = Z.shape[1]
    return np.where(np.eye(l, dtype=bool)[None], 1.0, -gram)


def global_correlation(local, group_fractions):
    """sum_m (n_m / n) local[m] (the paper's Lemma 1), shape (l, l)."""
    return np.tensordot(group_fractions, local, axes=1)
