"""The GLOCAL objective (Zhu, Kwok & Zhou, TKDE 2018, Eq. (4)) and its derivatives.

Pure numpy: no pymanopt, no scikit-learn, no I/O. Layout follows the paper for the
unknowns -- ``U`` (l x k), ``V`` (k x n), ``W`` (d x k), ``Z`` (g x l x k) -- and
scikit-learn for the data: ``X`` is (n x d), dense or scipy.sparse, so ``W^T X`` of the
paper is ``P.T`` with ``P = X @ W`` (n x k).

The objective is

    ||J o (Y - U V)||^2 + lam ||V - W^T X||^2 + lam2 (||U||^2 + ||V||^2 + ||W||^2)
      + sum_m [ lam3 (n_m / n) tr(F_0^T Z_m Z_m^T F_0) + lam4 tr(F_m^T Z_m Z_m^T F_m) ]

with ``F_0 = U W^T X`` and ``F_m = U W^T X_m``. Both manifold terms of group ``m`` are
quadratic forms in small k x k matrices once ``P`` is known:

    manifold term = sum_m tr(Z_m^T U B_m U^T Z_m),
    B_m = lam3 (n_m / n) P^T P + lam4 P_m^T P_m                         (k x k),

or, seen from W, sum_m tr(P_m H_m P_m^T) with k x k matrices H_m (`feature_side_weights`),
so no d x d or n x n matrix is ever needed. Every gradient is the exact gradient of this
objective (the paper's printed gradients drop a factor 2, and its gradient in U swaps the two
data terms; see the Model page of the documentation); each is checked against autograd in
the tests.

Opt-in extensions (``GlocalData.loss``, ``weights``, ``lam_v``) replace the label-fit term by
Eq. L of `glocal.losses` and lam2 ||V||^2 by lam_v ||V||^2; they change only the U and V
blocks (and the objective's value). The label-fit term of a fit is one `LabelFit`
(``GlocalData.label``): its value, gradient and curvature, and whether it is the paper's
quadratic term, which the U and V blocks and the solver ask instead of naming losses.

Y is a dense array or, for a sparse label matrix, a `glocal.labels.SparseSignedLabels`
(with J a `glocal.labels.SparseMask` when a few entries are missing): the paper's loss then
reaches them only through products (Y V^T, U^T Y, X^T Y^T, the k x k sums of J) and
||J o (Y - U V)||^2 from k x k statistics, never as dense l x n floats.
That covers the U block, the closed form of V and the objective; the V problem
(`v_cost_grad`) and the other losses need dense labels.

Every quantity that involves the n samples is a sum over samples of small statistics
(`sample_sum`) or a map of the columns of V and the rows of P (`sample_map`). In memory each
runs once on the whole data; a backend (``GlocalData.samples``, e.g.
`glocal.dask_backend.DaskSamples`) runs the same function on every chunk of samples and adds
up or concatenates the results, so the solver is the same for both.
"""

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse

from . import losses
from .labels import SparseMask, SparseSignedLabels
from .labels import column_outer as _column_outer


class LabelFit:
    """The label-fit term of one fit, built once from the loss, whether the entries are
    weighted and how Y is stored (``GlocalData.label``).

    The term is the paper's ||J o (Y - U V)||^2 or, for another loss or weighted entries,
    Eq. L of `glocal.losses` (weights c_ji from `GlocalData.entry_weights`). ``quadratic``
    says which: the paper's term makes the U and V blocks quadratic, so that U is solved from
    the sufficient statistics `UStatistics` and V has the paper's closed form (see
    `glocal.solver.v_by_closed_form`). The methods read the labels from the `GlocalData`
    they are given (the whole data, or one chunk of samples through a backend).

    Parameters
    ----------
    loss : {"squared", "squared_hinge", "logistic"}, default="squared"
    weighted : bool, default=False
        Whether the entries carry weights other than J.
    sparse_labels : bool, default=False
        Whether Y is a `glocal.labels.SparseSignedLabels`, which only the paper's term reads.

    Attributes
    ----------
    loss : str
    quadratic : bool
        The term is the paper's unweighted squared error.
    sparse : bool
        Y is stored sparse (``sparse_labels``).
    """

    def __init__(self, loss="squared", weighted=False, sparse_labels=False):
        if loss not in losses.LOSSES:
            raise ValueError(f"unknown loss {loss!r}; expected one of {losses.LOSSES}")
        self.loss = loss
        self.quadratic = loss == "squared" and not weighted
        self.sparse = sparse_labels
        if sparse_labels and not self.quadratic:
            raise ValueError("sparse labels (SparseSignedLabels) support the paper's loss "
                             "only: loss='squared' without weights; pass dense labels")

    def value(self, U, V, data):
        """The term at F = U V."""
        if self.sparse:
            return data.Y.residual_norm(U, V)
        if self.quadratic:
            return _squared_norm(label_residual(U, V, data))
        return losses.loss_value_and_gradient(U @ V, data.Y, data.entry_weights, self.loss)[0]

    def terms(self, U, V, data, axis=None):
        """The term at F = U V, half its gradient in F and half its entry-wise curvature (the
        blocks' factor 2), from one product U V: what a U or V block reads at a point (cost,
        gradient and Hessian products). For the paper's term: ||R||^2, R = J o (U V - Y),
        and J (the scalar 1 when every entry is observed). ``axis=0`` gives the value of
        every column (sample) apart, shape (n,): the V block separates over the columns
        (`v_newton`)."""
        if self.quadratic:
            R = label_residual(U, V, data)
            value = np.sum(R ** 2, axis=axis)
            return (float(value) if axis is None else value), R, \
                1.0 if data.J is None else data.J
        value, first, second = losses.loss_terms(U @ V, data.Y, data.entry_weights, self.loss,
                                                 axis=axis)
        return value, 0.5 * first, 0.5 * second

    def curvature(self, U, V, data):
        """Half the entry-wise curvature of the term at F = U V, (l x n): J (ones without
        missing entries) for the paper's term, whatever U and V."""
        if self.quadratic:
            return np.ones_like(data.Y) if data.J is None else data.J
        return self.terms(U, V, data)[2]


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
    group_index : list of g integer arrays
        Sample indices of each group (a partition of ``range(n)``).
    lam, lam2, lam3, lam4 : float
        The paper's tradeoff parameters.
    gram : ndarray of shape (d, d) or None
        X^T X, when products with it are cheaper than with X (see `with_feature_grams`).
    group_grams : ndarray of shape (g, d, d) or None
        X_m^T X_m of every group, under the same condition.
    loss : {"squared", "squared_hinge", "logistic"}
        Loss of the label-fit term (`glocal.losses`); "squared" is the paper's.
    weights : ndarray of shape (l, n) or None
        Weights c_ji of the observed entries in the label-fit term (0 on missing ones);
        None means the paper's J.
    lam_v : float or None
        Weight of ||V||^2 when it should differ from lam2 (None: lam2, the paper's).
    samples : object or None
        How the samples are reached: None when X, Y and J are in memory; else a backend
        with the methods ``sum`` and ``map`` of `sample_sum` and `sample_map` and the
        attributes ``n_groups`` and ``group_sizes`` (``group_index`` is then None).
    label : LabelFit
        The label-fit term, made from ``loss``, ``weights`` and the type of ``Y`` (not a
        field: set when the data is made, and again by `dataclasses.replace`).
    """

    X: object
    Y: np.ndarray
    J: object
    group_index: list
    lam: float = 1.0
    lam2: float = 1.0
    lam3: float = 0.0
    lam4: float = 0.0
    gram: object = None
    group_grams: object = None
    loss: str = "squared"
    weights: object = None
    lam_v: object = None
    samples: object = None

    def __post_init__(self):
        # Built once per data (a frozen dataclass: set past __setattr__).
        object.__setattr__(self, "label", LabelFit(self.loss, self.weights is not None,
                                                   isinstance(self.Y, SparseSignedLabels)))

    @property
    def n_samples(self):
        return self.Y.shape[1]

    @property
    def n_groups(self):
        return self.samples.n_groups if self.group_index is None else len(self.group_index)

    @property
    def group_sizes(self):
        """n_m for every group."""
        if self.group_index is None:
            return self.samples.group_sizes
        return np.array([len(idx) for idx in self.group_index])

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

    @property
    def entry_weights(self):
        """c_ji of Eq. L in `glocal.losses`: ``weights``, else J; the scalar 1.0 when J is
        None (every entry observed), not an l x n array of ones made at every call."""
        if self.weights is not None:
            return self.weights
        return 1.0 if self.J is None else self.J


def sample_sum(function, data, *arrays, reads="XY"):
    """``function(data, *arrays)``: a sum over samples, chunk by chunk through a backend.

    ``arrays`` are aligned with the samples (V, k x n; P, n x k). Through a backend,
    ``function`` gets the `GlocalData` of one chunk of samples (its rows of X, columns of Y
    and J, and its ``group_index``) with the matching chunks of ``arrays``, and returns an
    array, a float or a tuple of them; the results of all chunks are added up. ``reads``
    names the parts of the data the function reads: "X" (features), "Y" (labels and
    mask); the backend leaves the others out (None).
    """
    if data.samples is None:
        return function(data, *arrays)
    return data.samples.sum(function, data, *arrays, reads=reads)


def sample_map(function, data, *arrays, sample_axis, width, reads="XY"):
    """``function(data, *arrays)``: an array aligned with the samples, chunk by chunk.

    The result has the samples along ``sample_axis`` (0: n x width; 1: width x n); through a
    backend it is the concatenation of ``function`` on every chunk (see `sample_sum`), kept
    chunked beside X.
    """
    if data.samples is None:
        return function(data, *arrays)
    return data.samples.map(function, data, *arrays, sample_axis=sample_axis, width=width,
                            reads=reads)


def feature_product(W, data):
    """P = X W, shape (n, k)."""
    return sample_map(lambda part: np.asarray(part.X @ W), data, sample_axis=0,
                      width=W.shape[1], reads="X")


def feature_squares(data):
    """The squared norm of every column of X, shape (d,): the diagonal of X^T X."""
    def squares(part):
        X = part.X
        return np.asarray((X.multiply(X) if scipy.sparse.issparse(X) else X * X).sum(axis=0)
                          ).ravel()
    return sample_sum(squares, data, reads="X")


def feature_label_product(data):
    """X^T Y^T, shape (d, l)."""
    def product(part):
        if isinstance(part.Y, SparseSignedLabels):
            return part.Y.feature_product(part.X)
        return np.asarray(part.X.T @ part.Y.T)
    return sample_sum(product, data)


def score_gram(W, data, max_entries=2**24):
    """F F^T with F = (X W)^T, shape (m, m) for W of m columns: the Gram matrix of X W.

    F is formed for at most ``max_entries`` / m rows of X at a time (m x n floats would be
    the largest array of a fit with many labels and samples).
    """
    def gram(part):
        rows = max(1, max_entries // W.shape[1])
        total = 0.0
        for start in range(0, part.X.shape[0], rows):
            F = np.asarray(part.X[start:start + rows] @ W).T
            total = total + F @ F.T
        return total
    return sample_sum(gram, data, reads="X")


def score_gram_product(W, A, data):
    """(F F^T) A with F = (X W)^T, from products with W and X^T X (no m x m or m x n array)."""
    return W.T @ moment_product(W @ A, None, data) / data.lam


def with_feature_grams(data, memory_limit=2**28, max_features=None):
    """Attach the second moments of X when multiplying by them is cheaper than by X.

    A product with X^T X costs d^2 per column against 2 nnz(X) through X; the g group
    moments cost g d^2. Each is kept only when cheaper and within ``memory_limit`` bytes.
    Through a backend (``data.samples``) every product with X is a pass over the data, so
    both are kept whenever they fit, all from one pass, and X has at most ``max_features``
    columns (None: any); with more, the products go through X chunk by chunk (X W and
    X^T M), and no d x d matrix is formed.

    When products go through X and a sparse X in memory has more features than samples, X
    is stored by columns (CSC): X W then reads the d x k W in order and X^T M reads the
    small n x k M, where row storage scatters over d x k arrays (2-3 times slower at
    d = 50,000).
    """
    X = data.X
    d = X.shape[1]
    nnz = X.nnz if hasattr(X, "nnz") else X.size
    g = data.n_groups
    in_memory = data.samples is None
    cheaper = d * d < 2 * nnz if in_memory else max_features is None or d <= max_features
    keep_gram = cheaper and 8 * d * d <= memory_limit
    keep_groups = (keep_gram and data.has_manifold_terms
                   and (not in_memory or g * d * d < 2 * nnz) and 8 * g * d * d <= memory_limit)
    if not keep_gram:
        if in_memory and scipy.sparse.issparse(X) and d > X.shape[0]:
            X = scipy.sparse.csc_matrix(X)
        return replace(data, X=X, gram=None, group_grams=None)

    def moments(part):
        if not keep_groups:
            return _dense(part.X.T @ part.X), None
        group_grams = np.stack([_dense(part.X[idx].T @ part.X[idx])
                                for idx in part.group_index])
        return group_grams.sum(axis=0), group_grams  # X^T X without a second pass over X
    gram, group_grams = sample_sum(moments, data, reads="X")
    return replace(data, gram=gram, group_grams=group_grams)


def _dense(A):
    return A.toarray() if hasattr(A, "toarray") else np.asarray(A)


def _transposed(stack):
    """Transpose every matrix of a stack (..., a, b) -> (..., b, a)."""
    return np.swapaxes(stack, -1, -2)


def masked(data, A):
    """J o A (the projection Pi_Omega of the paper)."""
    return A if data.J is None else data.J * A


def label_residual(U, V, data):
    """J o (U V - Y): the residual of the label factorization on the observed entries."""
    residual = U @ V
    residual -= data.Y  # in place: l x n arrays are the largest of a fit with many labels
    if data.J is not None:
        residual *= data.J
    return residual


def _squared_norm(A):
    """||A||^2 without a temporary of A's size."""
    A = np.ascontiguousarray(A).ravel()
    return float(A @ A)


def group_grams(P, data):
    """P_m^T P_m for every group, shape (g, k, k)."""
    return sample_sum(lambda part, P: np.stack([P[idx].T @ P[idx] for idx in part.group_index]),
                      data, P, reads="")


def label_side_weights(P, data, grams=None):
    """B_m = lam3 (n_m/n) P^T P + lam4 P_m^T P_m, shape (g, k, k).

    With these, the manifold terms of Eq. (4) are sum_m tr(Z_m^T U B_m U^T Z_m).
    ``grams`` are the P_m^T P_m (`group_grams`) when the caller has them (P is then not
    read).
    """
    if grams is None:
        grams = group_grams(P, data)
    total = grams.sum(axis=0)
    return (data.lam3 * data.group_fractions[:, None, None] * total[None]
            + data.lam4 * grams)


def laplacian_weights(U, Z):
    """G_m = U^T Z_m Z_m^T U, shape (g, k, k): the label Laplacians seen from the latent space."""
    T = _transposed(Z) @ U  # Z_m^T U
    return _transposed(T) @ T


def feature_side_weights(G, data):
    """H_m = lam3 sum_m' (n_m'/n) G_m' + lam4 G_m, shape (g, k, k).

    With these, the manifold terms equal sum_m tr(P_m H_m P_m^T): the form used by the
    W block, where the unknown enters through P = X W.
    """
    global_part = np.tensordot(data.group_fractions, G, axes=1)
    return data.lam3 * global_part[None] + data.lam4 * G


def per_group_product(P, H, data):
    """Stack of P_m H_m over the groups, in sample order, shape (n, k)."""
    out = np.empty_like(P)
    for idx, H_m in zip(data.group_index, H):
        out[idx] = P[idx] @ H_m
    return out


def manifold_term(U, Z, B):
    """sum_m tr(Z_m^T U B_m U^T Z_m): both label-manifold regularizers of Eq. (4)."""
    T = _transposed(Z) @ U
    return float(np.sum((T @ B) * T))


def objective(U, V, W, Z, data, P=None):
    """The full GLOCAL objective, Eq. (4) with R = ||U||^2 + ||V||^2 + ||W||^2.

    ``P = X @ W`` may be passed when the caller has it already.
    """
    if P is None:
        P = feature_product(W, data)
    value = basic_objective(U, V, W, data, P=P)
    if data.has_manifold_terms:
        value += manifold_term(U, Z, label_side_weights(P, data))
    return value


def basic_objective(U, V, W, data, P=None):
    """The basic model, Eq. (1): the objective without the manifold terms."""
    if P is None:
        P = feature_product(W, data)

    def sample_terms(part, V, P):
        return part.label.value(U, V, part), _squared_norm(V - P.T), _squared_norm(V)
    fit, coupling, V_sq_norm = sample_sum(sample_terms, data, V, P, reads="Y")
    return float(fit + data.lam * coupling + frobenius_terms(U, V_sq_norm, W, data))


def frobenius_terms(U, V_sq_norm, W, data):
    """lam2 (||U||^2 + ||V||^2 + ||W||^2), with ``lam_v`` on ||V||^2 when it is given."""
    return data.lam2 * (_squared_norm(U) + _squared_norm(W)) + data.v_weight * V_sq_norm


# --- The basic model on second moments (every label observed) -----------------------------
#
# With J = 1 the closed form of V is V = A^-1 (lam W^T X^T + U^T Y), A = U^T U + (lam + lam_v) I,
# that is V^T = X F + Y^T G with F = lam W A^-1 and G = U A^-1. What the U and W blocks and the
# basic objective need of V then follows from C = X^T X, X^T Y^T and Y Y^T:
#   X^T V^T = C F + X^T Y^T G,   Y V^T = (X^T Y^T)^T F + Y Y^T G,   V V^T = F^T X^T V^T + G^T Y V^T,
# so a basic-model initialisation round costs O(d^2 k + (d + l) l k) instead of passes over
# the n samples.

@dataclass(frozen=True)
class LabelMoments:
    """X^T Y^T (d x l), Y Y^T (l x l) and ||Y||^2 of fully observed labels (`label_moments`)."""

    features: np.ndarray
    labels: np.ndarray
    squared_norm: float


def label_moments(data):
    """`LabelMoments` of ``data`` (every label observed, dense Y): one pass over the samples."""
    def moments(part):
        return np.asarray(part.X.T @ part.Y.T), part.Y @ part.Y.T, float(np.sum(part.Y ** 2))
    return LabelMoments(*sample_sum(moments, data))


@dataclass(frozen=True)
class ImplicitV:
    """The closed form of V at full labels, V = F^T X^T + G^T Y, with what the blocks read of
    it: X^T V^T (d x k), Y V^T (l x k) and V V^T (k x k). `materialize_v` forms V itself."""

    F: np.ndarray
    G: np.ndarray
    XtV: np.ndarray
    YVt: np.ndarray
    VVt: np.ndarray


def implicit_v(F, G, data, moments):
    """The `ImplicitV` V = F^T X^T + G^T Y, from ``data.gram`` and `LabelMoments`."""
    XtV = data.gram @ F + moments.features @ G
    YVt = moments.features.T @ F + moments.labels @ G
    return ImplicitV(F, G, XtV, YVt, F.T @ XtV + G.T @ YVt)


def implicit_v_closed_form(U, W, data, moments):
    """`v_closed_form` without the samples: the `ImplicitV` at (U, W) (every label
    observed)."""
    k = U.shape[1]
    inverse = np.linalg.inv(U.T @ U + (data.lam + data.v_weight) * np.eye(k))
    return implicit_v(data.lam * (W @ inverse), U @ inverse, data, moments)


def implicit_v_decrease(V, V_new, U, data, moments):
    """`v_decrease` between two `ImplicitV`: the block's quadratic form at D = V - V_new."""
    D = implicit_v(V.F - V_new.F, V.G - V_new.G, data, moments)
    return float(np.sum((U.T @ U) * D.VVt) + (data.lam + data.v_weight) * np.trace(D.VVt))


def moment_group_grams(W, data):
    """P_m^T P_m = W^T X_m^T X_m W for every group (`group_grams` of P = X W), from the
    groups' second moments ``data.group_grams``; shape (g, k, k)."""
    return W.T @ data.group_grams @ W


def implicit_basic_objective(U, V, W, data, moments):
    """`basic_objective` at an `ImplicitV`: ||Y - U V||^2 and ||V - W^T X^T||^2 expanded in
    the moments."""
    V_sq_norm = float(np.trace(V.VVt))
    fit = moments.squared_norm - 2.0 * np.sum(U * V.YVt) + np.sum((U.T @ U) * V.VVt)
    coupling = V_sq_norm - 2.0 * np.sum(W * V.XtV) + np.sum(W * (data.gram @ W))
    return float(fit + data.lam * coupling + frobenius_terms(U, V_sq_norm, W, data))


def materialize_v(V, data):
    """The k x n array of an `ImplicitV`: one pass over the samples."""
    return sample_map(lambda part: (np.asarray(part.X @ V.F) + part.Y.T @ V.G).T, data,
                      sample_axis=1, width=V.F.shape[1])


# --- Block U (Eq. 7): V, W, Z fixed; B from `label_side_weights` -------------------
#
# With V fixed the label term is a quadratic in U through small sufficient statistics:
#   ||J o (Y - U V)||^2 = sum_j u_j^T G_j u_j - 2 u_j^T t_j + ||J o Y||^2,
# G_j = sum_i J_ji v_i v_i^T (one shared V V^T when every label is observed), t_j = (Y V^T)_j
# (Y is 0 on missing entries). One pass over the l x n labels builds them; every cost,
# gradient and Hessian product of the block then costs O(l k^2), not O(l n k).

@dataclass(frozen=True)
class UStatistics:
    """Sufficient statistics of the U block for a fixed V (see `u_statistics`).

    Attributes
    ----------
    gram : ndarray of shape (k, k) or (l, k, k)
        V V^T when every label is observed, else G_j = sum_i J_ji v_i v_i^T for every label.
    target : ndarray of shape (l, k)
        Y V^T.
    constant : float
        ||J o Y||^2.
    """

    gram: np.ndarray
    target: np.ndarray
    constant: float

    @property
    def shape(self):
        """The shape of U, (l, k)."""
        return self.target.shape

    def apply_gram(self, U):
        """Row j of the result is G_j u_j."""
        return apply_row_blocks(self.gram, U)

    # The paper's quadratic term as a `u_label_term` (U is not needed for its Hessian).
    def cost_grad(self, U):
        GU = self.apply_gram(U)
        return np.sum(U * GU) - 2.0 * np.sum(U * self.target) + self.constant, GU - self.target

    def hessp(self, U, D):
        return self.apply_gram(D)

    def row_grams(self, U):
        return self.gram


def apply_row_blocks(blocks, A):
    """Row j of the result is block j of ``blocks`` (l x k x k), or the one shared k x k
    block, applied to row j of A (symmetric blocks: U's per-row Hessians and their
    inverses)."""
    if blocks.ndim == 2:
        return A @ blocks
    return np.matmul(blocks, A[:, :, None])[:, :, 0]


def u_statistics(V, data, chunk=4096):
    """`UStatistics` of V: one pass over the labels, in column chunks of the l x n mask."""
    k = V.shape[0]

    def sums(part, V):
        if part.J is None:
            gram = V @ V.T
        elif isinstance(part.J, SparseMask):
            gram = part.J.label_grams(V)
        else:
            gram = np.zeros((part.Y.shape[0], k * k))
            for start in range(0, V.shape[1], chunk):  # bounds the chunk x k x k products
                cols = slice(start, start + chunk)
                outer = np.einsum("ai,bi->iab", V[:, cols], V[:, cols]).reshape(-1, k * k)
                gram += part.J[:, cols] @ outer
        if isinstance(part.Y, SparseSignedLabels):
            return gram, part.Y @ V.T, part.Y.squared_norm()
        return gram, part.Y @ V.T, float(np.sum(part.Y ** 2))
    gram, target, constant = sample_sum(sums, data, V, reads="Y")
    return UStatistics(gram if data.J is None else gram.reshape(-1, k, k), target, constant)


def u_label_term(V, data):
    """The label-fit term of the U block at a fixed V: `u_statistics` for the paper's
    quadratic term, else a `ULossTerm`. Both give the term's value and half its gradient
    (``cost_grad``), half its Hessian applied to a direction (``hessp``) and its halved
    per-row Hessian blocks (``row_grams``) at a point U."""
    return u_statistics(V, data) if data.label.quadratic else ULossTerm(V, data)


_NO_POINT = object()  # no U evaluated yet: a sentinel that no argument of `_at` can be


class ULossTerm:
    """The label-fit term of the U block at a fixed V under a loss other than the paper's
    (see `u_label_term`). Cost, gradient and Hessian products at one point share one U V
    and loss evaluation (`LabelFit.terms`), kept for the last point seen. Through a backend
    they are sums over the chunks of samples, and the curvature at the point stays beside V,
    chunked like it."""

    def __init__(self, V, data):
        self.V, self.data = V, data
        self.shape = (data.Y.shape[0], V.shape[0])
        self._point, self._terms = _NO_POINT, None

    def _at(self, U):
        """The term's value and half its gradient in U at U (in memory, its curvature
        too)."""
        if U is not self._point:
            if self.data.samples is None:  # one evaluation for the three
                value, R, curvature = self.data.label.terms(U, self.V, self.data)
                self._terms = value, R @ self.V.T, curvature
            else:
                def sums(part, V):
                    value, R, _ = part.label.terms(U, V, part)
                    return value, R @ V.T
                self._terms = (*sample_sum(sums, self.data, self.V, reads="Y"), None)
            self._point = U
        return self._terms

    def _curvature(self, U):
        """The term's curvature at U (l x n): through a backend made when a Hessian product
        first asks for it (the trial points of a trust-region step need only costs), and
        kept beside V, chunked like it."""
        value, grad, curvature = self._at(U)
        if curvature is None:
            curvature = sample_map(lambda part, V: part.label.terms(U, V, part)[2],
                                   self.data, self.V, sample_axis=1, width=self.shape[0],
                                   reads="Y")
            self._terms = value, grad, curvature
        return curvature

    def cost_grad(self, U):
        return self._at(U)[:2]

    def hessp(self, U, D):
        """For the squared hinge, the generalized Hessian (see `glocal.losses`)."""
        return sample_sum(lambda part, V, S: (S * (D @ V)) @ V.T, self.data, self.V,
                          self._curvature(U), reads="")

    def row_grams(self, U):
        """sum_i s_ji v_i v_i^T for every label j, s the curvature at U, shape (l, k, k).

        Summed over the entries of nonzero curvature only, label by label: under the
        squared hinge most entries are inactive (measured at 70% observed: 14% active on
        bibtex, 38% on Arts), and no n x k^2 matrix of outer products is formed.
        """
        def grams(part, V, curvature):
            k = V.shape[0]
            blocks = np.empty((curvature.shape[0], k, k))
            for j, s in enumerate(curvature):
                active = np.flatnonzero(s)
                Va = V[:, active]
                blocks[j] = (Va * s[active]) @ Va.T
            return blocks
        return sample_sum(grams, self.data, self.V, self._curvature(U), reads="")


def u_cost_grad(U, term, Z, B, data):
    """Terms of Eq. (7) and their gradient in U (corrected erratum, factor 2 kept).

    ``term`` is `u_label_term` of the fixed V (or `u_statistics` of it, the paper's loss).
    """
    cost, grad = term.cost_grad(U)
    cost = cost + data.lam2 * np.sum(U ** 2)
    grad = grad + data.lam2 * U
    return _with_u_manifold_terms(cost, grad, U, Z, B)


def _with_u_manifold_terms(cost, grad, U, Z, B):
    """Add the manifold terms sum_m tr(Z_m^T U B_m U^T Z_m) and half their gradient."""
    if B is not None:
        T = _transposed(Z) @ U  # Z_m^T U
        TB = T @ B
        cost += np.sum(TB * T)
        grad += (Z @ TB).sum(axis=0)
    return float(cost), 2.0 * grad


def u_hessp(D, term, Z, B, data, U=None):
    """Hessian of Eq. (7) at U applied to a direction D (U is not read for the paper's
    quadratic term)."""
    out = term.hessp(U, D) + data.lam2 * D
    if B is not None:
        out += (Z @ ((_transposed(Z) @ D) @ B)).sum(axis=0)
    return 2.0 * out


def u_row_hessians(term, data, U=None):
    """Per-row Hessian blocks (halved) of Eq. (7) at U without its manifold terms.

    Row j of U only meets the columns of V where label j is observed: G_j + lam2 I (with
    G_j = sum_i s_ji v_i v_i^T, s the label term's curvature), shape (k, k) when all rows
    share it (the paper's term with every label observed), else (l, k, k). Their inverse is
    an exact preconditioner for the basic model and a good one otherwise.
    """
    grams = term.row_grams(U)
    return grams + data.lam2 * np.eye(grams.shape[-1])


# --- Block V (Eq. 6): U, W fixed; the manifold terms do not involve V -------------

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
    has it) and lam_v = `GlocalData.v_weight`.
    The term separates by column, so their inverse is the exact inverse Hessian of a
    quadratic V block and a preconditioner otherwise.
    """
    k = U.shape[1]
    if curvature is None:
        curvature = data.label.curvature(U, V, data)
    blocks = (curvature.T @ _column_outer(U)).reshape(-1, k, k)
    return blocks + (data.lam + data.v_weight) * np.eye(k)


def v_mean_column_hessian(U, curvature, data):
    """The mean over columns of `v_column_hessians` (halved), one k x k matrix:
    U^T Diag(s) U + (lam + lam_v) I, with s the row means of ``curvature``."""
    mean_curvature = np.asarray(curvature.mean(axis=1)).ravel()
    return U.T @ (mean_curvature[:, None] * U) + (data.lam + data.v_weight) * np.eye(U.shape[1])


def v_decrease(V, V_new, U, data, P=None):
    """Eq. (6)'s cost at V minus its cost at its minimizer V_new (from `v_solution`).

    Under the paper's term the block is a quadratic with halved Hessian
    D -> U^T (J o (U D)) + (lam + lam_v) D, so the drop is that form at D = V - V_new: one
    product with U instead of two costs. Under another loss it is the difference of the two
    costs (``P`` = X W is then read).
    """
    if not data.label.quadratic:
        return sample_sum(lambda part, V, V_new, P: float(np.sum(
            _v_column_costs(U, V, P.T, part)[0] - _v_column_costs(U, V_new, P.T, part)[0])),
            data, V, V_new, P, reads="Y")

    def decrease(part, V, V_new):
        D = V - V_new
        if part.J is None:
            label_part = np.sum((U.T @ U @ D) * D)
        elif isinstance(part.J, SparseMask):
            label_part = part.J.masked_squared_norm(U, D)
        else:
            label_part = np.sum(masked(part, U @ D) ** 2)
        return float(label_part + (part.lam + part.v_weight) * np.sum(D ** 2))
    return sample_sum(decrease, data, V, V_new, reads="Y")


def v_closed_form(U, P, data, chunk=4096):
    """The paper's column-wise closed form for Eq. (6), batched over columns.

    v_i = (U^T Diag(j_i) U + (lam + lam2) I)^{-1} (lam W^T x_i + U^T Diag(j_i) y_i).
    With every label observed all columns share one k x k system. (lam2 here is
    `GlocalData.v_weight`.)
    """
    k = U.shape[1]
    ridge = (data.lam + data.v_weight) * np.eye(k)
    if data.J is None:  # one well-conditioned k x k system (eigenvalues >= lam + lam_v)
        inverse = np.linalg.inv(U.T @ U + ridge)
        lam_inverse, label_map = data.lam * inverse, inverse @ U.T
    else:
        outer = _column_outer(U)

    def columns(part, P):
        if part.J is None:
            # The k x k inverse applied to both parts of the right-hand side: two BLAS
            # products (P^T read in place), no k x n sum formed first; far faster than solve.
            V = lam_inverse @ P.T
            V += label_map @ part.Y  # Y is 0 on missing entries
            return V
        rhs = part.lam * P.T + U.T @ part.Y
        V = np.empty_like(rhs)
        for start in range(0, rhs.shape[1], chunk):  # bounds the n x k x k batch in memory
            cols = slice(start, start + chunk)
            if isinstance(part.J, SparseMask):
                systems = part.J.sample_grams(U, outer, cols) + ridge
            else:
                systems = (part.J[:, cols].T @ outer).reshape(-1, k, k) + ridge
            V[:, cols] = np.linalg.solve(systems, rhs[:, cols].T[..., None])[..., 0].T
        return V
    return sample_map(columns, data, P, sample_axis=1, width=k, reads="Y")


def v_solution(U, P, V, data):
    """The minimizer of Eq. (6), column by column: the paper's closed form for its quadratic
    term (`v_closed_form`), else Newton's method from V (`v_newton`)."""
    if data.label.quadratic:
        return v_closed_form(U, P, data)
    return v_newton(U, P, V, data)


def v_newton(U, P, V, data, chunk=4096, max_iter=50):
    """Eq. (6) under a label term that is not quadratic, solved column by column by Newton's
    method with backtracking, from V.

    The block separates over the columns: v_i minimizes
    sum_j c_ji ell(y_ji, u_j^T v_i) + lam ||v_i - p_i||^2 + lam_v ||v_i||^2, strongly convex
    (lam > 0), whose Hessian is the k x k block of `v_column_hessians` (for the squared
    hinge the generalized Hessian: the steps end once the active entries settle). Every
    column iterates on its own until its Newton decrement vanishes to rounding, so the
    solution does not depend on how the columns are chunked: a fit through a backend
    reproduces the in-memory one. Columns go ``chunk`` at a time (n x k x k blocks).
    """
    def columns(part, V, P):
        V = np.array(V, dtype=float)
        for start in range(0, V.shape[1], chunk):
            cols = slice(start, start + chunk)
            columns = part if chunk >= V.shape[1] else _column_part(part, cols)
            V[:, cols] = _newton_columns(U, V[:, cols], P[cols].T, columns, max_iter)
        return V
    return sample_map(columns, data, V, P, sample_axis=1, width=U.shape[1], reads="Y")


def _column_part(data, cols):
    """The data of the samples ``cols`` (their labels, mask and weights; not X)."""
    def take(A):
        return None if A is None else A[:, cols]
    return replace(data, X=None, Y=take(data.Y), J=take(data.J), weights=take(data.weights),
                   group_index=None, samples=None)


def _v_column_costs(U, V, Pt, data):
    """Eq. (6)'s cost of every column of V (P^T given), with the label term's half
    gradient and half curvature in U V."""
    value, R, curvature = data.label.terms(U, V, data, axis=0)
    value = value + data.lam * np.sum((V - Pt) ** 2, axis=0) + data.v_weight * np.sum(V ** 2,
                                                                                      axis=0)
    return value, R, curvature


def _newton_columns(U, V, Pt, data, max_iter, max_halvings=40):
    """`v_newton` on a few columns (k x m), each column stopping on its own."""
    V = V.copy()
    todo = np.arange(V.shape[1])
    for _ in range(max_iter):
        if not todo.size:
            break
        # Every column at the first iteration: no copy of the labels then.
        part = data if todo.size == V.shape[1] else _column_part(data, todo)
        Vs, Ps = V[:, todo], Pt[:, todo]
        value, R, curvature = _v_column_costs(U, Vs, Ps, part)
        grad = U.T @ R + data.lam * (Vs - Ps) + data.v_weight * Vs  # half the gradient
        hessians = v_column_hessians(U, Vs, part, curvature=curvature)
        step = -np.linalg.solve(hessians, grad.T[..., None])[..., 0].T
        slope = 2.0 * np.sum(grad * step, axis=0)  # the cost's derivative along the step
        # Converged: the decrease Newton's model promises is rounding. Close to it a cost
        # cannot tell a decrease from rounding, and Newton's full step is taken unchecked.
        scale = np.maximum(value, 1.0)
        moving = -slope > 1e-24 * scale
        full = moving & (-slope <= 1e-12 * scale)
        Vs[:, full] += step[:, full]
        rate = np.ones(todo.size)
        pending = np.flatnonzero(moving & ~full)
        for _ in range(max_halvings):  # Armijo backtracking, column by column
            if not pending.size:
                break
            trial = Vs[:, pending] + rate[pending] * step[:, pending]
            trial_value = _v_column_costs(U, trial, Ps[:, pending],
                                          _column_part(part, pending))[0]
            accepted = trial_value <= value[pending] + 1e-4 * rate[pending] * slope[pending]
            Vs[:, pending[accepted]] = trial[:, accepted]
            pending = pending[~accepted]
            rate[pending] /= 2.0
        moving[pending] = False  # no decrease left above rounding
        V[:, todo] = Vs
        todo = todo[moving]
    return V


# --- Block W (Eq. 8): U, V, Z fixed ----------------------------------------------
#
# In W the whole block is a quadratic form in the group second moments C_m = X_m^T X_m:
#   lam ||V - W^T X||^2 + sum_m tr(W^T C_m W H_m)
#     = sum_m tr(W^T C_m W Ht_m) - 2 lam tr(W^T X^T V^T) + lam ||V||^2,  Ht_m = lam I + H_m,
# with H from `feature_side_weights`. `moment_product` applies sum_m C_m D Ht_m either through
# X (two products) or through precomputed d x d moments, whichever is cheaper.

def moment_weights(H, data, k):
    """Ht_m = lam I + H_m, shape (g, k, k); None (meaning lam I for every group) without H."""
    return None if H is None else H + data.lam * np.eye(k)


def moment_product(D, Ht, data):
    """sum_m X_m^T X_m D Ht_m (with Ht None: lam X^T X D)."""
    if Ht is None:
        if data.gram is not None:
            return data.lam * (data.gram @ D)
        return data.lam * sample_sum(lambda part: np.asarray(part.X.T @ (part.X @ D)), data,
                                     reads="X")
    if data.group_grams is not None:
        return np.matmul(data.group_grams, D @ Ht).sum(axis=0)  # batched BLAS, not einsum
    return sample_sum(
        lambda part: np.asarray(part.X.T @ per_group_product(part.X @ D, Ht, part)), data,
        reads="X")


def w_statistics(V, data):
    """X^T V^T (d x k) and ||V||^2: what the W block needs of V, from one pass."""
    return sample_sum(lambda part, V: (np.asarray(part.X.T @ V.T), float(np.sum(V ** 2))),
                      data, V, reads="X")


def w_cost_grad(W, XtV, V_sq_norm, Ht, data):
    """Terms of Eq. (8) and their gradient in W.

    ``XtV`` is X^T V^T and ``V_sq_norm`` is ||V||^2, both fixed within the block.
    """
    # In place on the product (a new array): with many features every d x k temporary is
    # a fresh allocation and a pass over memory.
    grad = moment_product(W, Ht, data)
    grad -= data.lam * XtV
    grad += data.lam2 * W
    cost = np.vdot(W, grad) - data.lam * np.vdot(W, XtV) + data.lam * V_sq_norm
    grad *= 2.0
    return float(cost), grad


def w_hessp(D, Ht, data):
    """Hessian of Eq. (8) applied to a direction D."""
    out = moment_product(D, Ht, data)
    out += data.lam2 * D
    out *= 2.0
    return out


# --- Block Z (Eq. 5): one independent problem per group, solved jointly --------------

def z_cost_grad(Z, U, B):
    """sum_m tr(Z_m^T U B_m U^T Z_m) and its Euclidean gradient in Z (g x l x k)."""
    UBU_Z = _apply_label_laplacian_weights(Z, U, B)
    return float(np.sum(UBU_Z * Z)), 2.0 * UBU_Z


def z_hessp(D, U, B):
    """Euclidean Hessian of the Z block applied to a direction D."""
    return 2.0 * _apply_label_laplacian_weights(D, U, B)


def _apply_label_laplacian_weights(Z, U, B):
    """U B_m U^T Z_m for every group, without forming the l x l matrices."""
    return U @ (B @ (U.T @ Z))  # batched products: BLAS, not einsum


# --- Rescaling: U, V and W jointly, along the directions that leave U V and U W^T X fixed ------

def rebalance(U, V, W, data, P=None):
    """The point (U A, A^-1 V, W A^-T) of lowest objective over invertible k x k A, its
    P = X W A^-T, and the decrease of the objective from (U, V, W) to it.

    U V and U W^T X, hence the label fit and both manifold terms of Eq. (4), do not depend
    on A; the rest is tr(A^T S A) + tr(A^-1 M A^-T), S = lam2 U^T U,
    M = lam2 W^T W + lam R R^T + lam_v V V^T with R = V - W^T X. With Q = A A^T that is
    tr(S Q) + tr(M Q^-1), convex in Q, least where Q S Q = M: the geometric mean
    Q = S^-1/2 (S^1/2 M S^1/2)^1/2 S^-1/2, and A = Q^1/2. Block descent on U, V and W moves
    along these rescalings only slowly (with lam_v = 0 nothing but the coupling to W^T X
    holds the scale of V); one k x k step takes the whole way. The point is returned
    unchanged (decrease 0.0) where S or Q is singular to working precision or rounding
    would make the step an increase. ``P`` is X W when the caller has it; the new one is
    P A^-T (no pass over X).
    """
    if P is None:
        P = feature_product(W, data)

    def moments(part, V, P):
        R = V - P.T
        return R @ R.T, V @ V.T
    RRt, VVt = sample_sum(moments, data, V, P, reads="")
    S = data.lam2 * (U.T @ U)
    M = data.lam2 * (W.T @ W) + data.lam * RRt + data.v_weight * VVt
    root_S, inverse_root_S = _symmetric_roots(S)
    if root_S is None:
        return U, V, W, P, 0.0
    values, vectors = np.linalg.eigh(root_S @ M @ root_S)
    middle = (vectors * np.sqrt(np.maximum(values, 0.0))) @ vectors.T
    mean = inverse_root_S @ middle @ inverse_root_S
    A, A_inv = _symmetric_roots((mean + mean.T) / 2)
    if A is None:
        return U, V, W, P, 0.0
    decrease = np.trace(S) + np.trace(M) - np.sum((S @ A) * A) - np.sum((A_inv @ M) * A_inv)
    if not decrease > 0:
        return U, V, W, P, 0.0
    k = U.shape[1]
    V = sample_map(lambda part, V: A_inv @ V, data, V, sample_axis=1, width=k, reads="")
    P = sample_map(lambda part, P: P @ A_inv, data, P, sample_axis=0, width=k, reads="")
    return U @ A, V, W @ A_inv, P, float(decrease)


def _symmetric_roots(S):
    """S^1/2 and S^-1/2 of a symmetric positive semidefinite S; (None, None) when S is
    singular to working precision."""
    values, vectors = np.linalg.eigh(S)
    if not values[0] > 1e-12 * values[-1]:
        return None, None
    root = np.sqrt(values)
    return (vectors * root) @ vectors.T, (vectors / root) @ vectors.T
