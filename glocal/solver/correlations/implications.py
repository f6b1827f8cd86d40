"""Asymmetric label correlations: a directed weight per pair of labels, global and per group,
that says how strongly one label implies another ("mountain" implies "tree" far more than
"tree" implies "mountain", the paper's conclusion).

Label i implies label j where j is relevant whenever i is: j's score should then be at least
i's. The term penalizes the scores' violations of the implications it learns,

    sum_m [ lam3 (n_m/n) sum_{s=1}^{n} + lam4 sum_{s in group m} ]
          sum_i [ sum_{j != i} A_m[i, j] max(0, f_i(x_s) - f_j(x_s))^2 + a_m[i] v_0 ]
      + tau (lam3 + lam4) sum_m n_m sum_i [ sum_{j != i} A_m[i, j] log A_m[i, j]
                                             + a_m[i] log a_m[i] + log l ],

over the scores f(x) = U W^T x and the directed weights A_m of every group m: nonnegative,
zero on the diagonal, every row summing to at most one, a_m[i] = 1 - sum_j A_m[i, j] being
the weight of "label i implies no label" (the bracket of the entropy is the divergence of
row i from the uniform weights over its l options, so the term is never negative). Nothing
in the objective is symmetric in (i, j):
A_m[i, j] and A_m[j, i] are free to differ, and a violation of "i implies j" (f_i above f_j)
is not one of "j implies i".

Why this form:

* The squared hinge max(0, t)^2 penalizes only the direction that contradicts the
  implication, and is once differentiable, as the squared-hinge label fit is; U and W are
  solved with its generalized Hessian.
* Rows of A_m with "no label" on a simplex keep A_m from vanishing for free (as the unit
  diagonal of the paper's Z_m Z_m^T does): implying no label costs v_0 per sample, the
  cost of an implication violated by a mean square of v_0. Without that option every label
  would have to imply another, and a label that implies none (a frequent one) would be
  given one all the same.
* The term is linear in A_m, so without more it would put all of a row on the one option
  of fewest violations; the entropy (temperature ``tau``, in the units of a squared score
  difference) makes the exact minimizer a Gibbs distribution instead,

      A_m[i, j] proportional to exp(-(lam3 v[i, j] + lam4 v_m[i, j]) / (tau (lam3 + lam4))),
      a_m[i] proportional to exp(-v_0 / tau),

  v and v_m the mean squared violation of "i implies j" over all samples and over group m,
  so every pair gets a graded weight: how well the scores keep that implication, next to
  the others of label i and to none. This is the A block's update, in closed form.
* As in the paper's Lemma 1, the global weights are the groups' combined by size,
  sum_m (n_m / n) A_m, and a sample of group m is penalized with lam3 sum_m' (n_m'/n) A_m'
  + lam4 A_m.

Every evaluation compares every pair of labels on every sample: n l^2 work (in chunks of
samples), against the l k^2 of the paper's terms. `LabelImplications` is this term as a
`glocal.solver.correlations.CorrelationTerm`: ``GLOCAL(correlation="asymmetric")``.
"""

import numpy as np
from scipy.special import xlogy

from .._cache import LastPoint
from .interface import CorrelationTerm, FeatureSide
from ..coupling import feature_product

__all__ = ["LabelImplications", "TEMPERATURE", "THRESHOLD", "implication_weights",
           "violation_squares", "violation_cost_grad", "active_weights", "violation_hessp"]

# tau: weights of the pairs of one label whose mean squared violations differ by 0.1 (a
# tenth of a unit margin's square) differ by a factor e.
TEMPERATURE = 0.1
# v_0: implying a label costs as much as implying none where the label's score exceeds the
# other's by half a unit margin on average (in mean square).
THRESHOLD = 0.25

# Numbers of one chunk of the samples' pair arrays (rows x l x l): 8 MiB per array.
_CHUNK_ENTRIES = 2**20
# Up to this many pairs of labels on all samples (n l^2; 128 MiB), a fit in memory keeps the
# pairs active at a point for the Hessian products at that point (a trust-region iteration
# makes many); above it, or through a backend, they are found again for every product.
_KEPT_ENTRIES = 2**24


def violation_squares(S):
    """sum_s max(0, S[s, i] - S[s, j])^2 over the rows of the scores S (c x l), shape
    (l, l): the squared violations of "i implies j"."""
    positive = np.maximum(S[:, :, None] - S[:, None, :], 0.0)
    return np.einsum("sij,sij->ij", positive, positive)


def violation_cost_grad(S, weights):
    """sum_s sum_ij Omega[i, j] max(0, S[s, i] - S[s, j])^2 for ``weights`` Omega (l x l),
    and its gradient in S (c x l)."""
    positive = np.maximum(S[:, :, None] - S[:, None, :], 0.0)
    weighted = positive * weights
    return float(np.vdot(weighted, positive)), 2.0 * (weighted.sum(axis=2)
                                                      - weighted.sum(axis=1))


def active_weights(S, weights):
    """The pairs active at S: M_s = Omega o [S_s,i > S_s,j] plus its transpose, shape
    (c, l, l) (``weights`` with a zero diagonal). The generalized Hessian of
    `violation_cost_grad` in the row S_s is 2 (Diag(M_s 1) - M_s), a graph Laplacian of the
    active pairs."""
    # Where S_i > S_j the pair (i, j) is active, else (j, i) (a tie, of measure zero, takes
    # the latter: any weight in between is a generalized Hessian there).
    return np.where(S[:, :, None] > S[:, None, :], weights, weights.T)


def violation_hessp(M, sums, dS):
    """The generalized Hessian at the active pairs M (`active_weights`, with row sums
    ``sums``) applied to a direction dS of the scores (c x l)."""
    return 2.0 * (dS * sums - np.einsum("sij,sj->si", M, dS))


def _chunks(part, n_labels):
    """(group, rows) of every chunk of the samples of every group of a part."""
    step = max(1, _CHUNK_ENTRIES // max(1, n_labels * n_labels))
    for m, idx in enumerate(part.group_index):
        for start in range(0, len(idx), step):
            yield m, idx[start:start + step]


def _active_chunks(part, P, U, weights):
    """(rows, M, M 1) of every chunk of a part, at the scores P U^T (P = X W)."""
    for m, rows in _chunks(part, U.shape[0]):
        M = active_weights(P[rows] @ U.T, weights[m])
        yield rows, M, M.sum(axis=2)


def implication_weights(violations, lam3, lam4, temperature, threshold):
    """The A block's minimizer: every group's rows, a Gibbs distribution over the other
    labels of lam3 v + lam4 v_m and over "none" of ``threshold`` (``violations`` holds the
    groups' mean squared violations v_m, g x l x l, and their mean over all samples v as its
    last entry). Returns the weights of the labels, shape (g, l, l); a row's remainder to
    one is its weight of implying no label."""
    local, overall = violations[:-1], violations[-1]
    cost = (lam3 * overall[None] + lam4 * local) / (lam3 + lam4)
    l = cost.shape[-1]
    cost = np.where(np.eye(l, dtype=bool), np.inf, cost)
    cost = np.concatenate([cost, np.full(cost.shape[:-1] + (1,), float(threshold))], axis=-1)
    cost = (cost - cost.min(axis=-1, keepdims=True)) / temperature
    weights = np.exp(-cost)
    return (weights / weights.sum(axis=-1, keepdims=True))[..., :l]


class _Side:
    """What the term reads at W: the scores P = X W, the data, the groups' sizes."""

    def __init__(self, P, data, sizes):
        self.P, self.data, self.sizes = P, data, sizes


class LabelImplications(CorrelationTerm):
    """Directed label correlations (see the module), a
    `glocal.solver.correlations.CorrelationTerm`: ``GLOCAL(correlation="asymmetric")``.

    Its state, an estimator's ``Z_``, is the stack of directed weights A_m, shape (g, l, l):
    nonnegative, zero diagonal, rows summing to at most one (the remainder is the weight of
    implying no label). The A block is solved exactly (its minimizer is in closed form), so
    the term has no block for an optimizer.

    Parameters
    ----------
    lam3, lam4, group_fractions
        As for `glocal.solver.correlations.laplacians.LabelLaplacians`.
    preconditioned : bool, default=False
        Ignored: the term has no iterative block of its own.
    temperature : float, default=`TEMPERATURE`
        tau, the entropy's weight relative to the mean squared violations.
    threshold : float, default=`THRESHOLD`
        v_0, the mean squared violation at which implying a label costs as much as
        implying none.
    """

    block_names = ()

    def __init__(self, lam3, lam4, group_fractions, preconditioned=False,
                 temperature=TEMPERATURE, threshold=THRESHOLD):
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        if not threshold >= 0:
            raise ValueError(f"threshold must be nonnegative, got {threshold}")
        self.lam3, self.lam4 = lam3, lam4
        self.group_fractions = np.asarray(group_fractions, dtype=float)
        self.temperature, self.threshold = temperature, threshold
        self.active = lam3 > 0 or lam4 > 0

    # --- the state ---------------------------------------------------------------------------

    def state_shape(self, n_groups, n_labels, n_latent):
        return (n_groups, n_labels, n_labels)

    def start(self, n_groups, n_labels, n_latent, rng):
        """Every label implying every other, and none, alike."""
        A = np.full((n_groups, n_labels, n_labels), 1.0 / n_labels)
        A[:, np.arange(n_labels), np.arange(n_labels)] = 0.0
        return A

    def checked(self, state, n_groups, n_labels, n_latent):
        A = np.array(state, dtype=float)
        expected = self.state_shape(n_groups, n_labels, n_latent)
        if A.shape != expected:
            raise ValueError(f"initial_point: the directed weights have shape {A.shape}, "
                             f"expected {expected}")
        if not np.all(np.isfinite(A)) or np.any(A < 0):
            raise ValueError("initial_point: the directed weights must be finite and "
                             "nonnegative")
        if np.any(np.diagonal(A, axis1=1, axis2=2) != 0):
            raise ValueError("initial_point: the directed weights must be zero on the "
                             "diagonal (a label does not imply itself)")
        if np.any(A.sum(axis=-1) > 1.0 + 1e-9):
            raise ValueError("initial_point: every row of the directed weights must sum to "
                             "at most one")
        return A

    # --- the data -----------------------------------------------------------------------------

    def label_side(self, W, space):
        data = space.data
        return _Side(space.scores(W), data, self.group_fractions * data.n_samples)

    def _sample_weights(self, A):
        """Omega_m = lam3 sum_m' (n_m'/n) A_m' + lam4 A_m, the weights of a sample of group
        m, shape (g, l, l)."""
        return self.lam3 * np.tensordot(self.group_fractions, A, axes=1)[None] + self.lam4 * A

    def _violations(self, U, side):
        """The groups' squared violations sum_{s in m} max(0, f_i - f_j)^2, g x l x l."""
        g, l = len(side.sizes), U.shape[0]

        def squares(part, P):
            out = np.zeros((g, l, l))
            for m, rows in _chunks(part, l):
                out[m] += violation_squares(P[rows] @ U.T)
            return out
        return side.data.samples.sum(squares, side.data, side.P, reads="")

    def _own_part(self, A, sizes):
        """The part of the term that does not read the scores: the threshold's cost of the
        weight on no label, and the entropy."""
        none = np.clip(1.0 - A.sum(axis=-1), 0.0, None)  # g x l
        # The entropy as the divergence from uniform weights over the l options of a row:
        # zero at the start, never negative.
        l = A.shape[-1]
        per_group = (self.threshold * none.sum(axis=-1)
                     + self.temperature * (xlogy(A, A).sum(axis=(1, 2))
                                           + xlogy(none, none).sum(axis=-1) + l * np.log(l)))
        return (self.lam3 + self.lam4) * float(np.dot(sizes, per_group))

    def value(self, U, state, side):
        if not self.active:
            return 0.0
        return float(np.sum(self._sample_weights(state) * self._violations(U, side))
                     + self._own_part(state, side.sizes))

    # --- the blocks ---------------------------------------------------------------------------

    def update(self, U, state, side, solve):
        """The A block: its exact minimizer (`implication_weights`) and the decrease."""
        if not self.active:
            return state, 0.0
        squares = self._violations(U, side)
        sizes = side.sizes
        means = np.concatenate([squares / sizes[:, None, None],
                                squares.sum(axis=0)[None] / sizes.sum()])
        new = implication_weights(means, self.lam3, self.lam4, self.temperature,
                                  self.threshold)

        def cost(A):
            return float(np.sum(self._sample_weights(A) * squares)) + self._own_part(A, sizes)
        return new, max(cost(state) - cost(new), 0.0)

    def u_side(self, state, side):
        if not self.active:
            return _Idle()
        return _USide(self._sample_weights(state), side)

    def w_side(self, U, state, side):
        if not self.active:
            return FeatureSide(None)
        return FeatureSide(None, nonquadratic=_WSide(self._sample_weights(state), U,
                                                     side.data, side.P))

    def correlations(self, state, group_fractions):
        return {"local_correlations_": state,
                "global_correlation_": np.tensordot(group_fractions, state, axes=1)}


def _kept_pairs(data, n_labels):
    """Whether a side keeps the active pairs of its last point (`_KEPT_ENTRIES`)."""
    return data.samples.in_memory and data.n_samples * n_labels ** 2 <= _KEPT_ENTRIES


class _USide:
    """The term at fixed A and W as a function of U (the scores S = P U^T)."""

    def __init__(self, weights, side):
        self.weights, self.side = weights, side
        data, P = side.data, side.P
        self._kept = (LastPoint(lambda U: list(_active_chunks(data, P, U, weights)))
                      if _kept_pairs(data, weights.shape[-1]) else None)

    def cost_grad(self, U):
        """The value and half the gradient in U."""
        weights = self.weights

        def terms(part, P):
            value, grad = 0.0, np.zeros_like(U)
            for m, rows in _chunks(part, U.shape[0]):
                chunk_value, G = violation_cost_grad(P[rows] @ U.T, weights[m])
                value += chunk_value
                grad += G.T @ P[rows]
            return value, grad
        value, grad = self.side.data.samples.sum(terms, self.side.data, self.side.P, reads="")
        return value, 0.5 * grad

    def hessp(self, U, D):
        """Half the generalized Hessian at U applied to D."""
        def product(P, active):
            out = np.zeros_like(U)
            for rows, M, sums in active:
                out += violation_hessp(M, sums, P[rows] @ D.T).T @ P[rows]
            return out
        data, P = self.side.data, self.side.P
        if self._kept is not None:
            return 0.5 * product(P, self._kept(U))
        return 0.5 * data.samples.sum(
            lambda part, P: product(P, _active_chunks(part, P, U, self.weights)), data, P,
            reads="")


class _WSide:
    """The term at fixed A and U as a function of W (the scores S = X W U^T): the
    `glocal.solver.correlations.FeatureSide` part that is not quadratic in W. Its ``curvature``,
    for the preconditioner, is U^T Lbar_m U per group, Lbar_m the mean over the group's samples of
    the Laplacians of the pairs active at the start (`active_weights`)."""

    def __init__(self, weights, U, data, P):
        self.weights, self.U, self.data = weights, U, data
        self.scores = LastPoint(lambda W: feature_product(W, data))
        self._kept = (LastPoint(lambda W: list(_active_chunks(data, self.scores(W), U,
                                                              weights)))
                      if _kept_pairs(data, U.shape[0]) else None)
        g, l = weights.shape[0], U.shape[0]

        def laplacians(part, P):
            out = np.zeros((g, l, l))
            for m, rows in _chunks(part, l):
                M = active_weights(P[rows] @ U.T, weights[m])
                out[m] += np.diag(M.sum(axis=(0, 2))) - M.sum(axis=0)
            return out
        mean = (data.samples.sum(laplacians, data, P, reads="")
                / data.group_sizes[:, None, None])
        self.curvature = U.T @ mean @ U

    def cost_grad(self, W):
        """The value and half the gradient in W."""
        U, weights = self.U, self.weights

        def terms(part, P):
            value, grad = 0.0, np.zeros((part.X.shape[1], U.shape[1]))
            for m, rows in _chunks(part, U.shape[0]):
                chunk_value, G = violation_cost_grad(P[rows] @ U.T, weights[m])
                value += chunk_value
                grad += np.asarray(part.X[rows].T @ (G @ U))
            return value, grad
        value, grad = self.data.samples.sum(terms, self.data, self.scores(W), reads="X")
        return value, 0.5 * grad

    def hessp(self, W, D):
        """Half the generalized Hessian at W applied to D."""
        U = self.U

        def product(part, dP, active):
            out = np.zeros((part.X.shape[1], U.shape[1]))
            for rows, M, sums in active:
                out += np.asarray(part.X[rows].T @ (violation_hessp(M, sums, dP[rows] @ U.T)
                                                    @ U))
            return out
        dP = feature_product(D, self.data)
        if self._kept is not None:
            return 0.5 * self.data.samples.sum(
                lambda part, dP: product(part, dP, self._kept(W)), self.data, dP, reads="X")
        return 0.5 * self.data.samples.sum(
            lambda part, P, dP: product(part, dP, _active_chunks(part, P, U, self.weights)),
            self.data, self.scores(W), dP, reads="X")


class _Idle:
    """The U side of a term with zero weights."""

    def cost_grad(self, U):
        return 0.0, np.zeros_like(U)

    def hessp(self, U, D):
        return np.zeros_like(D)
