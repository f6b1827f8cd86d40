"""The GLOCAL objective (Zhu, Kwok & Zhou, TKDE 2018, Eq. (4)) and its blocks, Eqs. (5)-(8).

Pure numpy: no pymanopt, no scikit-learn, no I/O. Layout follows the paper for the
unknowns -- ``U`` (l x k), ``V`` (k x n), ``W`` (d x k), ``Z`` (g x l x k) -- and
scikit-learn for the data: ``X`` is (n x d), dense or scipy.sparse, so ``W^T X`` of the
paper is ``P.T`` with ``P = X @ W`` (n x k). The objective is

    ||J o (Y - U V)||^2 + lam ||V - W^T X||^2 + lam2 (||U||^2 + ||V||^2 + ||W||^2)
      + sum_m [ lam3 (n_m / n) tr(F_0^T Z_m Z_m^T F_0) + lam4 tr(F_m^T Z_m Z_m^T F_m) ]

with ``F_0 = U W^T X`` and ``F_m = U W^T X_m``. Each term has its own module, with its
value, gradients and Hessian products; this one holds the fit's data and adds the terms up,
block by block. Without the correlation terms (the second line) it is the basic model, Eq.
(1); with the paper's, Eq. (4) is `glocal.solver.correlations.laplacians.objective`. Every gradient
is the exact gradient of the objective (the paper's printed gradients drop a factor 2, and its
gradient in U swaps the two data terms; see the Model page of the documentation); each is checked
against autograd in the tests.

Block map (Algorithm 1; equation -> terms -> here):

    Eq. (4)  laplacians.objective         label fit + coupling + Frobenius + correlation terms
    Eq. (1)  basic_objective              the same without the correlation terms
    Eq. (5)  Z, lines 3-5                 correlations.laplacians (z_cost_grad, z_hessp): the
                                          correlation term's own block, on unit-norm rows
    Eq. (6)  V, line 6                    v_cost_grad, v_hessp, v_column_hessians;
                                          v_closed_form (the paper's), v_decrease
    Eq. (7)  U, line 7                    u_cost_grad, u_hessp, u_row_hessians,
                                          u_mean_row_hessian
    Eq. (8)  W, line 8                    w_cost_grad, w_hessp, w_products

The terms: `glocal.solver.label_fit` (||J o (Y - U V)||^2 or Eq. L of `glocal.solver.losses`),
`glocal.solver.coupling` (lam ||V - W^T X||^2 and the Frobenius terms),
`glocal.solver.correlations.laplacians` (the correlation terms, one implementation of
`glocal.solver.correlations.CorrelationTerm`) and `glocal.solver.second_moments` (products
with X^T X and X_m^T X_m, and the basic model on them).

Every quantity that involves the n samples is a sum over samples of small statistics or a
map of the columns of V and the rows of P, run by the fit's backend (``GlocalData.samples``,
see `glocal.solver.backends`): once on the whole data in memory, chunk by chunk on Dask.
"""

from dataclasses import dataclass, field

import numpy as np

from . import coupling
from .backends import IN_MEMORY
from .label_fit import resolve_label_fit
from ..labels import column_outer

__all__ = ["GlocalData", "basic_objective"]


@dataclass(frozen=True)
class GlocalData:
    """The fixed data of one fit.

    Attributes
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    Y : ndarray of shape (l, n) or SparseSignedLabels
        The paper's observed label matrix: +1 / -1 on observed entries, 0 on missing ones;
        a `glocal.labels.SparseSignedLabels` for the paper's loss with the closed form of V.
    J : ndarray of shape (l, n) or SparseMask or None
        Indicator (float 0/1) of the observed entries; None when every entry is observed;
        the labels' ``mask`` for `glocal.labels.SparseSignedLabels`.
    group_index : list of g integer arrays or None
        Sample indices of each group (a partition of ``range(n)``); None when the samples
        are reached through a backend that keeps the groups itself.
    lam, lam2, lam3, lam4 : float
        The paper's tradeoff parameters.
    loss : {"squared", "squared_hinge", "logistic"}
        Loss of the label-fit term (`glocal.solver.losses`); "squared" is the paper's.
    weights : ndarray of shape (l, n) or None
        Weights c_ji of the observed entries in the label-fit term (0 on missing ones);
        None means the paper's J.
    lam_v : float or None
        Weight of ||V||^2 when it should differ from lam2 (None: lam2, the paper's).
    samples : backend
        How the samples are reached (`glocal.solver.backends`): in memory (the default) or e.g.
        `glocal.solver.dask_backend.DaskSamples`.
    moments : {"auto"} or second moments
        How products with X^T X and the groups' X_m^T X_m are made
        (`glocal.solver.second_moments`); "auto": decided when the fit starts
        (`glocal.solver.plan.resolve_feature_moments`).
    label : LabelFit
        The label-fit term (`glocal.solver.label_fit`), made from ``loss``, ``weights``, Y and J
        (not a parameter: set when the data is made, and again by `dataclasses.replace`).
    """

    X: object
    Y: np.ndarray
    J: object
    group_index: list
    lam: float = 1.0
    lam2: float = 1.0
    lam3: float = 0.0
    lam4: float = 0.0
    loss: str = "squared"
    weights: object = None
    lam_v: object = None
    samples: object = IN_MEMORY
    moments: object = "auto"
    label: object = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        # A frozen dataclass: set past __setattr__.
        object.__setattr__(self, "label", resolve_label_fit(self.loss, self.weights, self.Y,
                                                            self.J))

    @property
    def n_samples(self):
        return self.Y.shape[1]

    @property
    def n_groups(self):
        return len(self.group_sizes)

    @property
    def group_sizes(self):
        """n_m for every group."""
        return self.samples.group_sizes(self.group_index)

    @property
    def group_fractions(self):
        """n_m / n for every group."""
        return self.group_sizes / self.n_samples

    @property
    def has_manifold_terms(self):
        return self.lam3 > 0 or self.lam4 > 0

    @property
    def v_weight(self):
        """The weight of ||V||^2: lam2 in the paper, ``lam_v`` when given."""
        return self.lam2 if self.lam_v is None else self.lam_v


def basic_objective(U, V, W, data, P=None):
    """The basic model, Eq. (1): the objective without the correlation terms."""
    if P is None:
        P = coupling.feature_product(W, data)

    def sample_terms(part, V, P):
        return (part.label.value(U, V, part), *coupling.coupling_terms(V, P))
    fit, coupled, V_sq_norm = data.samples.sum(sample_terms, data, V, P, reads="Y")
    return float(fit + data.lam * coupled
                 + coupling.frobenius_terms(U, V_sq_norm, W, data.lam2, data.v_weight))


# --- Block U (Eq. 7): V, W, Z fixed ----------------------------------------------------------

def u_cost_grad(U, term, lam2, sides=()):
    """Terms of Eq. (7) and their gradient in U (corrected erratum, factor 2 kept).

    ``term`` is the label-fit term at the fixed V (`glocal.solver.label_fit.LabelFit.u_term`);
    ``sides`` are the correlation terms' U sides (none in the basic model), each with
    ``cost_grad`` (value, half gradient) and ``hessp`` (half Hessian product at a point).
    The block reads nothing else of the data: U meets the samples only through the label
    term and the correlation terms' sides.
    """
    cost, grad = term.cost_grad(U)
    cost = cost + lam2 * np.sum(U ** 2)
    grad = grad + lam2 * U
    for side in sides:
        side_cost, side_grad = side.cost_grad(U)
        cost += side_cost
        grad += side_grad
    return float(cost), 2.0 * grad


def u_hessp(D, term, lam2, U=None, sides=()):
    """Hessian of Eq. (7) at U applied to a direction D (U is not read for the paper's
    quadratic terms)."""
    out = term.hessp(U, D) + lam2 * D
    for side in sides:
        out += side.hessp(U, D)
    return 2.0 * out


def u_row_hessians(term, lam2, U=None):
    """Per-row Hessian blocks (halved) of Eq. (7) at U without its correlation terms.

    Row j of U only meets the columns of V where label j is observed: G_j + lam2 I (with
    G_j = sum_i s_ji v_i v_i^T, s the label term's curvature), shape (k, k) when all rows
    share it (the paper's term with every label observed), else (l, k, k). Their inverse is
    an exact preconditioner for the basic model and a good one otherwise.
    """
    grams = term.row_grams(U)
    return grams + lam2 * np.eye(grams.shape[-1])


def u_mean_row_hessian(term, lam2, U=None):
    """The mean over rows of `u_row_hessians` (halved), one k x k matrix:
    V Diag(s) V^T + lam2 I, with s the column means of the label term's curvature at U."""
    gram = term.mean_row_gram(U)
    return gram + lam2 * np.eye(gram.shape[-1])


# --- Block V (Eq. 6): U, W fixed; the correlation terms do not involve V --------------------

def v_cost_grad(V, U, P, data, terms=None):
    """Terms of Eq. (6) and their gradient in V (``terms`` is `LabelFit.terms` at (U, V)
    when the caller has it)."""
    cost, R, _ = data.label.terms(U, V, data) if terms is None else terms
    E = V - P.T
    cost += data.lam * np.sum(E ** 2) + data.v_weight * np.sum(V ** 2)
    grad = U.T @ R + data.lam * E + data.v_weight * V
    return float(cost), 2.0 * grad


def v_hessp(D, U, data, V=None, curvature=None):
    """Hessian of Eq. (6) applied to a direction D, at V (not read for the paper's
    quadratic term); ``curvature`` is `LabelFit.curvature` at (U, V) when the caller has
    it."""
    if curvature is None:
        curvature = data.label.curvature(U, V, data)
    return 2.0 * (U.T @ (curvature * (U @ D)) + (data.lam + data.v_weight) * D)


def v_column_hessians(U, V, data, curvature=None):
    """Per-column Hessian blocks (halved) of Eq. (6) at V, shape (n, k, k).

    Column i of V only meets the rows of U of its observed labels:
    U^T Diag(s_i) U + (lam + lam_v) I, with s_i the curvature of the label-fit term
    (`LabelFit.curvature`: J's column for the paper's loss; ``curvature`` when the caller
    has it) and lam_v = `GlocalData.v_weight`. The term separates by column, so their
    inverse is the exact inverse Hessian of a quadratic V block and a preconditioner
    otherwise.
    """
    k = U.shape[1]
    if curvature is None:
        curvature = data.label.curvature(U, V, data)
    blocks = (curvature.T @ column_outer(U)).reshape(-1, k, k)
    return blocks + (data.lam + data.v_weight) * np.eye(k)


def v_mean_column_hessian(U, curvature, data):
    """The mean over columns of `v_column_hessians` (halved), one k x k matrix:
    U^T Diag(s) U + (lam + lam_v) I, with s the row means of ``curvature``."""
    mean_curvature = np.asarray(curvature.mean(axis=1)).ravel()
    return U.T @ (mean_curvature[:, None] * U) + (data.lam + data.v_weight) * np.eye(U.shape[1])


def v_column_costs(U, V, Pt, data):
    """Eq. (6)'s cost of every column of V (P^T given), with the label term's half
    gradient and half curvature in U V."""
    value, R, curvature = data.label.terms(U, V, data, axis=0)
    value = value + data.lam * np.sum((V - Pt) ** 2, axis=0) + data.v_weight * np.sum(V ** 2,
                                                                                      axis=0)
    return value, R, curvature


def v_closed_form(U, P, data, chunk=4096):
    """The paper's column-wise closed form for Eq. (6), batched over columns:

    v_i = (U^T Diag(j_i) U + (lam + lam2) I)^{-1} (lam W^T x_i + U^T Diag(j_i) y_i),

    one k x k system for all columns when every label is observed, else systems for
    ``chunk`` columns at a time (lam2 here is `GlocalData.v_weight`; the label-fit term makes
    the systems, `LabelFit.closed_form_columns`).
    """
    return data.samples.map(data.label.closed_form_columns(U, data, chunk), data, P,
                            sample_axis=1, width=U.shape[1], reads="Y")


def v_decrease(V, V_new, U, data):
    """Eq. (6)'s cost at V minus its cost at its minimizer V_new under the paper's term.

    The block is a quadratic with halved Hessian D -> U^T (J o (U D)) + (lam + lam_v) D, so
    the drop is that form at D = V - V_new: one product with U instead of two costs.
    """
    label = data.label

    def decrease(part, V, V_new):
        D = V - V_new
        return float(label.squared_form(part, U, D) + (part.lam + part.v_weight) * np.sum(D ** 2))
    return data.samples.sum(decrease, data, V, V_new, reads="Y")


def v_cost_difference(V, V_new, U, P, data):
    """Eq. (6)'s cost at V minus its cost at V_new, from the two costs (any label term)."""
    return data.samples.sum(lambda part, V, V_new, P: float(np.sum(
        v_column_costs(U, V, P.T, part)[0] - v_column_costs(U, V_new, P.T, part)[0])),
        data, V, V_new, P, reads="Y")


# --- Block W (Eq. 8): U, V, Z fixed ------------------------------------------------------------
#
# In W the whole block is a quadratic form in the group second moments C_m = X_m^T X_m:
#   lam ||V - W^T X||^2 + sum_m tr(W^T C_m W H_m) (+ M W, a correlation term's own part)
#     = sum_m tr(W^T C_m W Ht_m) - 2 lam tr(W^T X^T V^T) + lam ||V||^2,  Ht_m = lam I + H_m,
# with H the correlation terms' W side. `w_products` applies it through the fit's second
# moments (`glocal.solver.second_moments`).

def w_products(data, side=None):
    """The W block's halved Hessian without lam2, as a function D -> sum_m C_m D Ht_m, and
    the weights Ht (g x k x k) it applies, for the preconditioner.

    ``side`` is the correlation terms' W side (`glocal.solver.correlations.FeatureSide`: per-group
    weights H and maybe a product of its own); None in the basic model, where the product
    is lam X^T X D and Ht is None (lam I for every group), as for a side without weights.
    """
    if side is None or side.weights is None:
        Ht = None

        def quadratic(D):
            return data.lam * data.moments.gram_product(D, data)
    else:
        Ht = side.weights + data.lam * np.eye(side.weights.shape[-1])

        def quadratic(D):
            return data.moments.group_product(D, Ht, data)
    if side is None or side.product is None:
        return quadratic, Ht

    def product(D):
        out = quadratic(D)
        out += side.product(D)
        return out
    return product, Ht


def w_cost_grad(W, XtV, V_sq_norm, product, lam, lam2, nonquadratic=None):
    """Terms of Eq. (8) and their gradient in W.

    ``XtV`` is X^T V^T and ``V_sq_norm`` is ||V||^2, both fixed within the block; ``product``
    is the block's quadratic part, which reads the samples (`w_products`); ``nonquadratic``
    a correlation term's part that is not quadratic in W
    (`glocal.solver.correlations.FeatureSide`), or None.
    """
    # In place on the product (a new array): with many features every d x k temporary is
    # a fresh allocation and a pass over memory.
    grad = product(W)
    grad -= lam * XtV
    grad += lam2 * W
    cost = np.vdot(W, grad) - lam * np.vdot(W, XtV) + lam * V_sq_norm
    if nonquadratic is not None:
        extra_cost, extra_grad = nonquadratic.cost_grad(W)
        cost += extra_cost
        grad += extra_grad
    grad *= 2.0
    return float(cost), grad


def w_hessp(D, product, lam2, W=None, nonquadratic=None):
    """Hessian of Eq. (8) at W applied to a direction D (W is read by a ``nonquadratic``
    part only)."""
    out = product(D)
    out += lam2 * D
    if nonquadratic is not None:
        out += nonquadratic.hessp(W, D)
    out *= 2.0
    return out
