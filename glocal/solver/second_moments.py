"""Second moments of the samples: products with X^T X and the groups' X_m^T X_m, and the
basic model on second moments when every label is observed.

How a fit multiplies by the second moments is decided once
(`glocal.solver.plan.resolve_feature_moments`) and kept as ``GlocalData.moments``: `ThroughSamples`
(no d x d matrix: each product is a pass over X), `Gram` (X^T X kept) or `GroupGrams` (X^T X
and every X_m^T X_m kept). The W block's quadratic part is sum_m C_m D Ht_m,
C_m = X_m^T X_m, Ht_m = lam I + H_m (`glocal.solver.objective`).

With J = 1 the closed form of V is V = A^-1 (lam W^T X^T + U^T Y),
A = U^T U + (lam + lam_v) I, that is V^T = X F + Y^T G with F = lam W A^-1 and G = U A^-1.
What the U and W blocks and the basic objective need of V then follows from C = X^T X,
X^T Y^T and Y Y^T:

    X^T V^T = C F + X^T Y^T G,   Y V^T = (X^T Y^T)^T F + Y Y^T G,
    V V^T = F^T X^T V^T + G^T Y V^T,

so a round of either loop costs O(d^2 k + (d + l) l k) instead of passes over the n samples
(`ImplicitV`, from `BasicMoments`). A start V = W^T X^T is F = W, G = 0.
"""

from dataclasses import dataclass

import numpy as np

from .coupling import frobenius_terms
from .label_fit import UStatistics

__all__ = ["ThroughSamples", "Gram", "GroupGrams", "BasicMoments", "ImplicitV"]


class ThroughSamples:
    """Products with the second moments through X: no d x d matrix is formed."""

    has_gram = has_group_grams = False

    def gram_product(self, D, data):
        """X^T X D."""
        return data.samples.sum(lambda part: np.asarray(part.X.T @ (part.X @ D)), data,
                                reads="X")

    def group_product(self, D, Ht, data):
        """sum_m X_m^T X_m D Ht_m."""
        return data.samples.sum(
            lambda part: np.asarray(part.X.T @ per_group_product(part.X @ D, Ht, part)), data,
            reads="X")


class Gram(ThroughSamples):
    """X^T X kept (d x d); the groups' products still go through X."""

    has_gram = True

    def __init__(self, gram):
        self.gram = gram

    def gram_product(self, D, data):
        return self.gram @ D


class GroupGrams(Gram):
    """X^T X and every group's X_m^T X_m kept (g x d x d)."""

    has_group_grams = True

    def __init__(self, gram, group_grams):
        super().__init__(gram)
        self.group_grams = group_grams

    def group_product(self, D, Ht, data):
        return np.matmul(self.group_grams, D @ Ht).sum(axis=0)  # batched BLAS, not einsum


THROUGH_SAMPLES = ThroughSamples()


def per_group_product(P, H, data):
    """Stack of P_m H_m over the groups, in sample order, shape (n, k)."""
    out = np.empty_like(P)
    for idx, H_m in zip(data.group_index, H):
        out[idx] = P[idx] @ H_m
    return out


def moment_group_grams(W, group_grams):
    """P_m^T P_m = W^T X_m^T X_m W for every group (P = X W) from the groups' second moments
    X_m^T X_m; shape (g, k, k)."""
    return W.T @ group_grams @ W


def dense(A):
    """A dense array of a product that may be sparse."""
    return A.toarray() if hasattr(A, "toarray") else np.asarray(A)


# --- The basic model on second moments (every label observed) ---------------------------------

@dataclass(frozen=True)
class BasicMoments:
    """What the basic model reads of the data when every label is observed: X^T X (d x d),
    X^T Y^T (d x l), Y Y^T (l x l), ||Y||^2 and the weights lam, lam2 and lam_v
    (`basic_moments`). Nothing here is of the samples' size."""

    gram: np.ndarray
    features: np.ndarray
    labels: np.ndarray
    squared_norm: float
    lam: float
    lam2: float
    v_weight: float


def basic_moments(data):
    """`BasicMoments` of ``data`` (every label observed, dense Y, X^T X kept): one pass over
    the samples."""
    def moments(part):
        return np.asarray(part.X.T @ part.Y.T), part.Y @ part.Y.T, float(np.sum(part.Y ** 2))
    return BasicMoments(data.moments.gram, *data.samples.sum(moments, data), data.lam,
                        data.lam2, data.v_weight)


@dataclass(frozen=True)
class ImplicitV:
    """V = F^T X^T + G^T Y with what the blocks read of it: X^T V^T (d x k), Y V^T (l x k) and
    V V^T (k x k), from `BasicMoments` (`implicit_v`). The methods are those of the V of a
    fit on second moments (`glocal.solver.steps.MomentSpace`)."""

    F: np.ndarray
    G: np.ndarray
    XtV: np.ndarray
    YVt: np.ndarray
    VVt: np.ndarray

    def basic_objective(self, U, W, basic):
        """Eq. (1) at (U, V, W): ||Y - U V||^2 and ||V - W^T X^T||^2 expanded in the
        moments."""
        V_sq_norm = float(np.trace(self.VVt))
        fit = basic.squared_norm - 2.0 * np.sum(U * self.YVt) + np.sum((U.T @ U) * self.VVt)
        coupling = V_sq_norm - 2.0 * np.sum(W * self.XtV) + np.sum(W * (basic.gram @ W))
        return float(fit + basic.lam * coupling
                     + frobenius_terms(U, V_sq_norm, W, basic.lam2, basic.v_weight))

    def u_term(self, basic):
        """The label-fit term of the U block at V."""
        return UStatistics(self.VVt, self.YVt, basic.squared_norm)

    def w_statistics(self):
        """X^T V^T and ||V||^2."""
        return self.XtV, float(np.trace(self.VVt))

    def decrease_to(self, new, U, basic):
        """Eq. (6)'s drop from V to ``new``: the block's quadratic form at D = V - new."""
        D = implicit_v(self.F - new.F, self.G - new.G, basic)
        return float(np.sum((U.T @ U) * D.VVt) + (basic.lam + basic.v_weight) * np.trace(D.VVt))

    def array(self, data):
        """The k x n array: one pass over the samples."""
        return data.samples.map(
            lambda part: (np.asarray(part.X @ self.F) + part.Y.T @ self.G).T, data,
            sample_axis=1, width=self.F.shape[1])


def implicit_v(F, G, basic):
    """The `ImplicitV` V = F^T X^T + G^T Y."""
    XtV = basic.gram @ F + basic.features @ G
    YVt = basic.features.T @ F + basic.labels @ G
    return ImplicitV(F, G, XtV, YVt, F.T @ XtV + G.T @ YVt)


def implicit_v_closed_form(U, W, basic):
    """The closed form of V (Eq. 6) without the samples: the `ImplicitV` at (U, W)."""
    k = U.shape[1]
    inverse = np.linalg.inv(U.T @ U + (basic.lam + basic.v_weight) * np.eye(k))
    return implicit_v(basic.lam * (W @ inverse), U @ inverse, basic)
