"""GLOCAL's correlation terms on the scores' deviations from their means: global and local
label Laplacians Z_m Z_m^T (unit-norm rows) fitted to centered scores.

    sum_m [ lam3 (n_m / n) tr(Fc_0^T Z_m Z_m^T Fc_0) + lam4 tr(Fc_m^T Z_m Z_m^T Fc_m) ],

Fc_0 = F_0 - f_0 1^T, F_0 = U W^T X minus its mean over all samples f_0, and
Fc_m = F_m - f_m 1^T, the scores of group m minus their mean over the group.

Why: the paper's terms (`glocal.solver.correlations.laplacians`) read the raw scores. A rare
label's scores are negative on nearly every sample, so the rows of F_0 of two rare labels point the
same way whether or not the labels occur together, and the Z_m that minimizes tr(F^T Z_m Z_m^T F)
then calls them correlated. Centered, tr(Fc^T L Fc) = n sum_ij L_ij cov(f_i, f_j): the term reads
the covariance of the scores, which is what a Pearson correlation of the labels measures, and a
label bias (``fit_intercept``) no longer enters it.

For fixed Z_m the term is a quadratic form in the scores, with the same Z block as the
paper's (Eq. 5) and B_m built from centered Gram matrices:

    B_m = lam3 (n_m / n) Pc^T Pc + lam4 Pc_m^T Pc_m,
    Pc^T Pc = P^T P - s s^T / n,   Pc_m^T Pc_m = P_m^T P_m - s_m s_m^T / n_m,

P = X W, s_m = P_m^T 1 = W^T X_m^T 1 the group's score sums and s their total. Seen from W,
the means give a rank-g correction to the paper's group weights:

    - lam3 / n tr(G_0 W^T x x^T W) - lam4 sum_m tr(G_m W^T x_m x_m^T W) / n_m,

x_m = X_m^T 1 the group's feature sums, x = sum_m x_m, G_m = U^T Z_m Z_m^T U and
G_0 = sum_m (n_m / n) G_m. `CenteredLaplacians` is this term as a
`glocal.solver.correlations.CorrelationTerm`.
"""

import numpy as np

from .interface import FeatureSide
from .laplacians import LabelLaplacians, feature_side_weights, label_side_weights, \
    laplacian_weights

__all__ = ["CenteredLaplacians", "centered_group_grams"]


def group_feature_sums(data):
    """x_m = X_m^T 1 for every group, shape (g, d): one pass over X."""
    def sums(part):
        return np.stack([np.asarray(part.X[idx].sum(axis=0)).ravel()
                         for idx in part.group_index])
    return data.samples.sum(sums, data, reads="X")


def centered_group_grams(grams, sums, sizes):
    """Pc_m^T Pc_m for every group and Pc^T Pc of all samples, from the groups' P_m^T P_m
    (g x k x k), score sums s_m (g x k) and sizes n_m."""
    local = grams - sums[:, :, None] * sums[:, None, :] / sizes[:, None, None]
    total = sums.sum(axis=0)
    return local, grams.sum(axis=0) - np.outer(total, total) / sizes.sum()


class _Side:
    """What the centered term reads at W: its B_m, and the groups' feature sums and sizes
    for its W side."""

    def __init__(self, B, feature_sums, sizes):
        self.B, self.feature_sums, self.sizes = B, feature_sums, sizes


class CenteredLaplacians(LabelLaplacians):
    """The global and local label Laplacians of the centered scores (see the module), a
    `glocal.solver.correlations.CorrelationTerm`: ``GLOCAL(correlation="centered")``.

    It takes the parameters of `glocal.solver.correlations.laplacians.LabelLaplacians` (its Z block
    is that term's, preconditioned alike).
    """

    def __init__(self, lam3, lam4, group_fractions, preconditioned=False):
        super().__init__(lam3, lam4, group_fractions, preconditioned)
        self._sums = (None, None)  # (data, its group feature sums): one pass per fit

    def label_side(self, W, space):
        data = space.data
        if self._sums[0] is not data:
            self._sums = (data, group_feature_sums(data))
        feature_sums = self._sums[1]
        sizes = self.group_fractions * data.n_samples
        local, total = centered_group_grams(space.score_group_grams(W), feature_sums @ W,
                                            sizes)
        B = label_side_weights(local, self.group_fractions, self.lam3, self.lam4, total)
        return _Side(B, feature_sums, sizes)

    def _no_weights(self, W, space):
        return _Side(super()._no_weights(W, space), None, None)

    def value(self, U, state, side):
        return super().value(U, state, side.B)

    def update(self, U, state, side, solve):
        return super().update(U, state, side.B, solve)

    def u_side(self, state, side):
        return super().u_side(state, side.B)

    def w_side(self, U, state, side):
        G = laplacian_weights(U, state)
        weights = feature_side_weights(G, self.group_fractions, self.lam3, self.lam4)
        if not self.active:
            return FeatureSide(weights)
        sums, sizes = side.feature_sums, side.sizes
        total = sums.sum(axis=0)
        G0 = np.tensordot(self.group_fractions, G, axes=1)

        def product(D):
            out = -(self.lam3 / sizes.sum()) * np.outer(total, (total @ D) @ G0)
            local = ((sums @ D) / sizes[:, None])[:, None, :] @ G  # x_m^T D G_m / n_m
            out -= self.lam4 * (sums.T @ local[:, 0, :])
            return out
        return FeatureSide(weights, product)

