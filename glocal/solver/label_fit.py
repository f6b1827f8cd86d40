"""The label-fit term of Eq. (4): the paper's ||J o (Y - U V)||^2, or Eq. L of
`glocal.solver.losses`.

One `LabelFit` object per kind of term, chosen once when the data of a fit is made
(`resolve_label_fit`, ``GlocalData.label``): the paper's squared error with every entry
observed (`Squares`), with a dense mask J (`MaskedSquares`), on sparse labels without or
with missing entries (`SparseSquares`, `SparseMaskedSquares`, see `glocal.labels`), or
another loss or weighted entries with weights 1, J or c_ji (`Loss`, `MaskedLoss`,
`WeightedLoss`). Each kind knows how its labels and mask are stored; the blocks call it
without asking which kind it is.

Every method reads the labels from the `glocal.solver.objective.GlocalData` it is given: the whole
data, or one chunk of samples through a backend (``part``). With V fixed, the paper's term is
a quadratic in U with small sufficient statistics (`UStatistics`):

    ||J o (Y - U V)||^2 = sum_j u_j^T G_j u_j - 2 u_j^T t_j + ||J o Y||^2,

G_j = sum_i J_ji v_i v_i^T (one shared V V^T when every label is observed), t_j = (Y V^T)_j
(Y is 0 on missing entries); another loss is evaluated at F = U V (`ULossTerm`).
"""

import abc

import numpy as np

from . import losses
from ._cache import LastPoint
from ..labels import SparseSignedLabels, column_outer

__all__ = ["resolve_label_fit", "LabelFit", "UStatistics", "ULossTerm"]


def resolve_label_fit(loss, weights, Y, J):
    """The `LabelFit` of a fit's label term: its loss, its weights (None: J's) and how Y and
    J are stored."""
    if loss not in losses.LOSSES:
        raise ValueError(f"unknown loss {loss!r}; expected one of {losses.LOSSES}")
    quadratic = loss == "squared" and weights is None
    if isinstance(Y, SparseSignedLabels):
        if not quadratic:
            raise ValueError("sparse labels (SparseSignedLabels) support the paper's loss "
                             "only: loss='squared' without weights; pass dense labels")
        return SPARSE_SQUARES if J is None else SPARSE_MASKED_SQUARES
    if quadratic:
        return SQUARES if J is None else MASKED_SQUARES
    if weights is not None:
        return WeightedLoss(loss)
    return Loss(loss) if J is None else MaskedLoss(loss)


def squared_norm(A):
    """||A||^2 without a temporary of A's size."""
    A = np.ascontiguousarray(A).ravel()
    return float(A @ A)


class LabelFit(abc.ABC):
    """The label-fit term of one kind (see the module docstring).

    Attributes
    ----------
    quadratic : bool
        The paper's unweighted squared error: the U block has sufficient statistics and V
        the paper's closed form.
    masked : bool
        Some entries are missing.
    sparse : bool
        Y is a `glocal.labels.SparseSignedLabels` (read through products only).
    """

    quadratic = masked = sparse = False

    @abc.abstractmethod
    def value(self, U, V, part):
        """The term at F = U V."""

    @abc.abstractmethod
    def terms(self, U, V, part, axis=None):
        """The term at F = U V, half its gradient in F and half its entry-wise curvature
        (the blocks' factor 2), from one product U V. ``axis=0`` gives the value of every
        column (sample) apart, shape (n,)."""

    @abc.abstractmethod
    def curvature(self, U, V, part):
        """Half the entry-wise curvature of the term at F = U V, shape (l, n)."""

    @abc.abstractmethod
    def u_term(self, V, data):
        """The term in the U block at a fixed V: its value and half its gradient
        (``cost_grad``), half its Hessian applied to a direction (``hessp``) and its
        halved per-row Hessian blocks (``row_grams``) and their mean (``mean_row_gram``) at a
        point U."""

    def feature_product(self, part):
        """X^T Y^T, shape (d, l)."""
        return np.asarray(part.X.T @ part.Y.T)


class Squares(LabelFit):
    """The paper's term, every entry observed, dense Y."""

    quadratic = True
    loss = "squared"

    def entry_weights(self, part):
        """c_ji of Eq. L of `glocal.solver.losses` (the paper's term is Eq. L with the squared
        loss): the scalar 1, every entry observed."""
        return 1.0

    def residual(self, U, V, part):
        """J o (U V - Y): the residual on the observed entries."""
        residual = U @ V
        residual -= part.Y  # in place: l x n arrays are the largest of a fit with many labels
        return residual

    def value(self, U, V, part):
        return squared_norm(self.residual(U, V, part))

    def terms(self, U, V, part, axis=None):
        R = self.residual(U, V, part)
        value = np.sum(R ** 2, axis=axis)
        return (float(value) if axis is None else value), R, self._unit_curvature(part)

    def _unit_curvature(self, part):
        return 1.0

    def curvature(self, U, V, part):
        return np.ones_like(part.Y)

    def u_term(self, V, data):
        return u_statistics(V, data)

    def label_grams(self, part, V, chunk):
        """G_j = sum_i J_ji v_i v_i^T: one shared k x k V V^T, or (l, k, k)."""
        return V @ V.T

    def squared_labels(self, part):
        """||J o Y||^2."""
        return float(np.sum(part.Y ** 2))

    def squared_form(self, part, U, D):
        """||J o (U D)||^2 for D (k x n)."""
        return np.sum((U.T @ U @ D) * D)

    def closed_form_columns(self, U, data, chunk):
        """The paper's closed form of Eq. (6) at U as a function of (part, P): every column
        shares one k x k system (eigenvalues >= lam + lam_v); its inverse is applied to both
        parts of the right-hand side, two BLAS products and no k x n sum formed first
        (``chunk`` is not needed)."""
        k = U.shape[1]
        inverse = np.linalg.inv(U.T @ U + (data.lam + data.v_weight) * np.eye(k))
        lam_inverse, label_map = data.lam * inverse, inverse @ U.T

        def columns(part, P):
            V = lam_inverse @ P.T
            V += label_map @ part.Y  # Y is 0 on missing entries
            return V
        return columns


class _PerColumnClosedForm:
    """The closed form of V when the columns' systems differ (missing entries)."""

    masked = True

    def closed_form_columns(self, U, data, chunk):
        """v_i = (U^T Diag(j_i) U + (lam + lam_v) I)^-1 (lam p_i + U^T Diag(j_i) y_i), batched
        ``chunk`` columns at a time (bounds the n x k x k systems in memory)."""
        k = U.shape[1]
        ridge = (data.lam + data.v_weight) * np.eye(k)
        outer = column_outer(U)

        def columns(part, P):
            rhs = part.lam * P.T + U.T @ part.Y
            V = np.empty_like(rhs)
            for start in range(0, rhs.shape[1], chunk):
                cols = slice(start, start + chunk)
                systems = self.column_grams(part, U, outer, cols) + ridge
                V[:, cols] = np.linalg.solve(systems, rhs[:, cols].T[..., None])[..., 0].T
            return V
        return columns


class MaskedSquares(_PerColumnClosedForm, Squares):
    """The paper's term with missing entries, dense Y and J."""

    def entry_weights(self, part):
        return part.J

    def residual(self, U, V, part):
        residual = super().residual(U, V, part)
        residual *= part.J
        return residual

    def _unit_curvature(self, part):
        return part.J

    def curvature(self, U, V, part):
        return part.J

    def label_grams(self, part, V, chunk):
        k = V.shape[0]
        gram = np.zeros((part.Y.shape[0], k * k))
        for start in range(0, V.shape[1], chunk):  # bounds the chunk x k x k products
            cols = slice(start, start + chunk)
            outer = np.einsum("ai,bi->iab", V[:, cols], V[:, cols]).reshape(-1, k * k)
            gram += part.J[:, cols] @ outer
        return gram.reshape(-1, k, k)

    def squared_form(self, part, U, D):
        return np.sum((part.J * (U @ D)) ** 2)

    def column_grams(self, part, U, outer, cols):
        """U^T Diag(J[:, i]) U for the samples i in ``cols``, shape (c, k, k); ``outer`` is
        `glocal.labels.column_outer` of U."""
        return (part.J[:, cols].T @ outer).reshape(-1, U.shape[1], U.shape[1])


class SparseSquares(Squares):
    """The paper's term on sparse labels (`glocal.labels.SparseSignedLabels`), every entry
    observed: Y is read through products only."""

    sparse = True

    def value(self, U, V, part):
        return part.Y.residual_norm(U, V)

    def squared_labels(self, part):
        return part.Y.squared_norm()

    def feature_product(self, part):
        return part.Y.feature_product(part.X)


class SparseMaskedSquares(_PerColumnClosedForm, SparseSquares):
    """The paper's term on sparse labels with missing entries (J a `glocal.labels.SparseMask`)."""

    def label_grams(self, part, V, chunk):
        k = V.shape[0]
        return part.J.label_grams(V, chunk).reshape(-1, k, k)

    def squared_form(self, part, U, D):
        return part.J.masked_squared_norm(U, D)

    def column_grams(self, part, U, outer, cols):
        return part.J.sample_grams(U, outer, cols)


class Loss(LabelFit):
    """Eq. L of `glocal.solver.losses` for a loss other than the paper's, every entry observed and
    unweighted (c_ji = 1)."""

    def __init__(self, loss):
        self.loss = loss

    def entry_weights(self, part):
        """c_ji of Eq. L (the scalar 1: no l x n array of ones)."""
        return 1.0

    def value(self, U, V, part):
        return losses.loss_value_and_gradient(U @ V, part.Y, self.entry_weights(part),
                                              self.loss)[0]

    def terms(self, U, V, part, axis=None):
        value, first, second = losses.loss_terms(U @ V, part.Y, self.entry_weights(part),
                                                 self.loss, axis=axis)
        return value, 0.5 * first, 0.5 * second

    def curvature(self, U, V, part):
        return self.terms(U, V, part)[2]

    def u_term(self, V, data):
        return ULossTerm(V, data)


class MaskedLoss(Loss):
    """Eq. L with missing entries: c_ji = J_ji."""

    masked = True

    def entry_weights(self, part):
        return part.J


class WeightedLoss(Loss):
    """Eq. L with weighted entries: c_ji from ``GlocalData.weights`` (0 on missing ones)."""

    masked = True

    def entry_weights(self, part):
        return part.weights


SQUARES, MASKED_SQUARES = Squares(), MaskedSquares()
SPARSE_SQUARES, SPARSE_MASKED_SQUARES = SparseSquares(), SparseMaskedSquares()


def feature_label_product(data):
    """X^T Y^T, shape (d, l): the labels seen from the features (a ridge fit's right-hand
    side)."""
    label = data.label
    return data.samples.sum(lambda part: label.feature_product(part), data)


# --- The term in the U block (Eq. 7) at a fixed V --------------------------------------------

class UStatistics:
    """Sufficient statistics of the paper's term in the U block for a fixed V (see
    `u_statistics`): every cost, gradient and Hessian product then costs O(l k^2).

    Attributes
    ----------
    gram : ndarray of shape (k, k) or (l, k, k)
        V V^T when every label is observed, else G_j = sum_i J_ji v_i v_i^T for every label.
    target : ndarray of shape (l, k)
        Y V^T.
    constant : float
        ||J o Y||^2.
    """

    def __init__(self, gram, target, constant):
        self.gram, self.target, self.constant = gram, target, constant

    @property
    def shape(self):
        """The shape of U, (l, k)."""
        return self.target.shape

    def apply_gram(self, U):
        """Row j of the result is G_j u_j."""
        return apply_row_blocks(self.gram, U)

    def cost_grad(self, U):
        GU = self.apply_gram(U)
        return np.sum(U * GU) - 2.0 * np.sum(U * self.target) + self.constant, GU - self.target

    def hessp(self, U, D):
        return self.apply_gram(D)  # U is not needed: the term is quadratic

    def row_grams(self, U):
        return self.gram

    def mean_row_gram(self, U):
        """The mean of the rows' G_j."""
        return self.gram if self.gram.ndim == 2 else self.gram.mean(axis=0)


def apply_row_blocks(blocks, A):
    """Row j of the result is block j of ``blocks`` (l x k x k), or the one shared k x k
    block, applied to row j of A (symmetric blocks: U's per-row Hessians and their
    inverses)."""
    if blocks.ndim == 2:
        return A @ blocks
    return np.matmul(blocks, A[:, :, None])[:, :, 0]


def u_statistics(V, data, chunk=4096):
    """`UStatistics` of V: one pass over the labels, in column chunks of the l x n mask."""
    label = data.label

    def sums(part, V):
        return label.label_grams(part, V, chunk), part.Y @ V.T, label.squared_labels(part)
    return UStatistics(*data.samples.sum(sums, data, V, reads="Y"))


class ULossTerm:
    """Another loss's term in the U block at a fixed V (see `LabelFit.u_term`). Cost,
    gradient and Hessian products at one point share one U V and loss evaluation, kept for
    the last point seen. Through a backend they are sums over the chunks of samples, and
    the curvature at the point is made when a Hessian product first asks for it (the trial
    points of a trust-region step need only costs), kept beside V, chunked like it."""

    def __init__(self, V, data):
        self.V, self.data = V, data
        self.shape = (data.Y.shape[0], V.shape[0])
        self._at = LastPoint(self._evaluate)

    def _evaluate(self, U):
        def per_part(part, V):
            value, R, curvature = part.label.terms(U, V, part)
            return (value, R @ V.T), curvature
        return self.data.samples.sum_and_map(per_part, self.data, self.V, sample_axis=1,
                                             width=self.shape[0], reads="Y")

    def cost_grad(self, U):
        return self._at(U)[0]

    def hessp(self, U, D):
        """For the squared hinge, the generalized Hessian (see `glocal.solver.losses`)."""
        return self.data.samples.sum(lambda part, V, S: (S * (D @ V)) @ V.T, self.data,
                                     self.V, self._at(U)[1](), reads="")

    def row_grams(self, U):
        """sum_i s_ji v_i v_i^T for every label j, s the curvature at U, shape (l, k, k).

        Summed over the entries of nonzero curvature only, label by label: under the
        squared hinge most entries are inactive, and no n x k^2 matrix of outer products
        is formed.
        """
        def grams(part, V, curvature):
            k = V.shape[0]
            blocks = np.empty((curvature.shape[0], k, k))
            for j, s in enumerate(curvature):
                active = np.flatnonzero(s)
                Va = V[:, active]
                blocks[j] = (Va * s[active]) @ Va.T
            return blocks
        return self.data.samples.sum(grams, self.data, self.V, self._at(U)[1](), reads="")

    def mean_row_gram(self, U):
        """The mean over labels of `row_grams`, V Diag(s) V^T with s_i the mean curvature of
        sample i at U over the labels: one product with V, no block per label."""
        l = self.shape[0]
        return self.data.samples.sum(
            lambda part, V, curvature: (V * (curvature.sum(axis=0) / l)) @ V.T,
            self.data, self.V, self._at(U)[1](), reads="")
