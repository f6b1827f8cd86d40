"""LEML: low-rank empirical risk minimization for multi-label learning with missing labels.

Yu, Jain, Kar & Dhillon (2014), "Large-scale Multi-label Learning with Missing Labels", ICML,
with the squared loss and the factored trace-norm regularizer, solved by alternating
minimization. Layout here is scikit-learn's: X is n x d, the signed labels Y are n x l (+1/-1
observed, 0 missing) and M is the n x l 0/1 mask of observed entries (None when complete).
"""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from .._base import MultiLabelMixin
from .._fitted import Array, Integer

# CG on the W-step stops once the residual norm falls below this fraction of its value at the
# warm start (an inexact step, as a truncated Newton method takes; every CG iterate lowers the
# W-step objective, so the outer objective still never increases).
_CG_RTOL = 1e-2
# Rows per block when forming the per-label k x k Gram matrices of the H-step (bounds memory).
_BLOCK_FLOATS = 2 ** 22
# The CG preconditioner keeps a d x min(n, d) eigenbasis of the features' second moment when
# min(n, d) and the basis are at most this large (256 MiB), else uses the Hessian's diagonal.
_MAX_RANK = 2000
_MAX_BASIS_FLOATS = 2 ** 25
# A dense X with at most this fraction of nonzeros is multiplied as a CSR matrix.
_SPARSE_DENSITY = 0.2


def leml_objective(W, H, X, Y, M, lam):
    """The LEML objective with squared loss.

    ``sum over observed (i, j) of (Y_ij - x_i^T W h_j)^2 + (lam / 2) (||W||_F^2 + ||H||_F^2)``.
    """
    residual = Y - np.asarray(X @ W) @ H.T
    if M is not None:
        residual *= M
    return float(np.sum(residual ** 2) + 0.5 * lam * (np.sum(W ** 2) + np.sum(H ** 2)))


def w_gradient(W, H, X, Y, M, lam, XT=None):
    """Gradient in W of `leml_objective`: ``-2 X^T (M o (Y - X W H^T)) H + lam W``."""
    XT = X.T if XT is None else XT
    residual = Y - np.asarray(X @ W) @ H.T
    if M is not None:
        residual *= M
    return -2.0 * np.asarray(XT @ (residual @ H)) + lam * W


def w_hessp(S, H, X, M, lam, XT=None, HtH=None):
    """Hessian of the W-step applied to a direction S (d x k), without forming it.

    ``2 X^T (M o (X S H^T)) H + lam S``; with complete labels ``2 X^T (X S) (H^T H) + lam S``,
    which never forms an n x l array. Cost O(nnz(X) k + n l k) (O(nnz(X) k + n k^2) complete).
    """
    XT = X.T if XT is None else XT
    XS = np.asarray(X @ S)
    if M is None:
        HtH = H.T @ H if HtH is None else HtH
        inner = XS @ HtH
    else:
        inner = ((XS @ H.T) * M) @ H
    return 2.0 * np.asarray(XT @ inner) + lam * S


class _Preconditioner:
    """Inverse of a separable approximation of the W-step Hessian, for CG.

    The mask is approximated by the rank-one ``M ~ a b^T`` (a: observed labels per sample,
    b: each label's share of the observed entries; exact when labels are complete), which
    turns the Hessian into ``S -> 2 X^T diag(a) X S H^T diag(b) H + lam S``. With the thin
    eigendecompositions ``X^T diag(a) X = Q diag(s) Q^T`` (Q: d x r orthonormal columns,
    r = min(n, d); once per fit) and ``H^T diag(b) H = V diag(t) V^T`` (once per W-step) its
    inverse is ``R -> Q [(Q^T R V) / (2 s t^T + lam)] V^T + (R - Q Q^T R) / lam``, O(d r k)
    per application, and exact with complete labels (CG then ends after one step). When Q
    would be too large (r > ``_MAX_RANK`` or d r > ``_MAX_BASIS_FLOATS``) the Hessian's
    diagonal is used instead (Jacobi).
    """

    def __init__(self, X, XT, M, lam):
        n, d = X.shape
        r = min(n, d)
        self.lam = lam
        a = np.ones(n) if M is None else M.sum(axis=1)
        self.b = None if M is None else M.sum(axis=0) / max(M.sum(), 1.0)
        self.M = M
        self.exact_basis = r <= _MAX_RANK and d * r <= _MAX_BASIS_FLOATS
        if self.exact_basis:
            root = np.sqrt(a)
            Xa = X.multiply(root[:, None]).tocsr() if sp.issparse(X) else X * root[:, None]
            if d <= n:  # eigenvectors of the d x d second moment
                G = Xa.T @ Xa
                G = G.toarray() if sp.issparse(G) else np.asarray(G)
                s, Q = np.linalg.eigh(0.5 * (G + G.T))
            else:  # through the n x n Gram matrix: Q = Xa^T U / sqrt(s)
                G = Xa @ Xa.T
                G = G.toarray() if sp.issparse(G) else np.asarray(G)
                s, U = np.linalg.eigh(0.5 * (G + G.T))
                keep = s > 1e-12 * max(s.max(), 1e-300)
                s, U = s[keep], U[:, keep]
                Q = np.asarray(Xa.T @ U) / np.sqrt(s)
            self.s, self.Q = np.maximum(s, 0.0), Q
            self.complete_basis = Q.shape[1] == d
        else:
            X2T = XT.multiply(XT).tocsr() if sp.issparse(XT) else XT ** 2
            self.X2T = X2T
            self.col = np.asarray(X2T.sum(axis=1)).ravel()

    def for_h(self, H):
        """The preconditioner's inverse at this H, as a function of the residual (d x k)."""
        lam = self.lam
        if self.exact_basis:
            K = H.T @ H if self.b is None else (H.T * self.b) @ H
            t, V = np.linalg.eigh(0.5 * (K + K.T))
            denominator = 2.0 * np.outer(self.s, np.maximum(t, 0.0)) + lam
            Q = self.Q

            def apply_inverse(R):
                QtR = Q.T @ R
                out = Q @ (((QtR @ V) / denominator) @ V.T)
                if not self.complete_basis:
                    out += (R - Q @ QtR) / lam
                return out

            return apply_inverse
        if self.M is None:
            diag = 2.0 * np.outer(self.col, np.sum(H ** 2, axis=0)) + lam
        else:
            diag = 2.0 * np.asarray(self.X2T @ (self.M @ (H ** 2))) + lam
        return lambda R: R / diag


def _w_step(W, H, X, XT, Y, M, lam, cg_max_iter, preconditioner):
    """Minimize the objective over W, H fixed, by preconditioned conjugate gradients.

    The W-step is the least-squares problem ``A vec(W) = b`` with ``A`` the Hessian
    (`w_hessp`) and ``b = 2 vec(X^T Y H)`` (Y is 0 on missing entries). CG starts from the
    current W, applies A only through `w_hessp` and is preconditioned by `_Preconditioner`.
    Every CG iterate lowers the W-step objective.
    """
    HtH = H.T @ H if M is None else None

    def hessp(S):
        return w_hessp(S, H, X, M, lam, XT, HtH)

    apply_inverse = preconditioner.for_h(H)
    r = 2.0 * np.asarray(XT @ (Y @ H)) - hessp(W)
    z = apply_inverse(r)
    p = z
    rz = np.vdot(r, z)
    stop = _CG_RTOL * np.linalg.norm(r)
    for _ in range(cg_max_iter):
        if rz <= 0.0 or np.linalg.norm(r) <= stop:
            break
        Ap = hessp(p)
        pAp = np.vdot(p, Ap)
        if pAp <= 0.0:
            break
        alpha = rz / pAp
        W = W + alpha * p
        r = r - alpha * Ap
        z = apply_inverse(r)
        rz_new = np.vdot(r, z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return W


def _h_step(W, X, Y, M, lam):
    """Minimize the objective over H, W fixed: one ridge regression per label.

    With ``Z = X W`` (n x k), label j solves
    ``(Z_j^T Z_j + (lam / 2) I) h_j = Z_j^T y_j`` over the samples where label j is observed
    (Z_j, y_j those rows). With complete labels all labels share one k x k system; otherwise
    the l systems ``Z^T diag(M[:, j]) Z`` are formed as one product ``M^T (Z * Z)`` (rows of
    outer products, in blocks) and solved in a batch.
    """
    Z = np.asarray(X @ W)
    n, k = Z.shape
    B = Y.T @ Z  # l x k; Y is 0 on missing entries
    ridge = 0.5 * lam * np.eye(k)
    if M is None:
        return np.linalg.solve(Z.T @ Z + ridge, B.T).T
    A = np.zeros((M.shape[1], k * k))
    block = max(1, _BLOCK_FLOATS // (k * k))
    for start in range(0, n, block):
        Zb = Z[start:start + block]
        A += M[start:start + block].T @ (Zb[:, :, None] * Zb[:, None, :]).reshape(-1, k * k)
    A = A.reshape(-1, k, k) + ridge
    return np.linalg.solve(A, B[:, :, None])[:, :, 0]


def leml_fit(X, Y, M, n_components, lam, max_iter, tol, cg_max_iter, rng):
    """Alternating minimization of `leml_objective`; plain arrays in and out.

    X: (n, d) dense or CSR; Y: (n, l) signed labels (values at missing entries are ignored);
    M: (n, l) 0/1 mask of observed entries or None. H starts random (standard normal /
    sqrt(k)) and W at zero; each iteration is a W-step
    (CG) followed by an H-step (exact). Stops when the objective's relative decrease falls to
    ``tol`` or after ``max_iter`` iterations. Returns W, H, the objective history (at the
    start and after every iteration) and the number of iterations.
    """
    d, l = X.shape[1], Y.shape[1]
    if M is not None:
        Y = Y * M  # the steps below read Y only through M o Y
    if not sp.issparse(X) and np.count_nonzero(X) <= _SPARSE_DENSITY * X.size:
        X = sp.csr_matrix(X)  # same products, fewer operations
    XT = X.T.tocsr() if sp.issparse(X) else np.ascontiguousarray(X.T)
    preconditioner = _Preconditioner(X, XT, M, lam)
    H = rng.standard_normal((l, n_components)) / np.sqrt(n_components)
    W = np.zeros((d, n_components))
    history = [leml_objective(W, H, X, Y, M, lam)]
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        W = _w_step(W, H, X, XT, Y, M, lam, cg_max_iter, preconditioner)
        H = _h_step(W, X, Y, M, lam)
        history.append(leml_objective(W, H, X, Y, M, lam))
        if history[-2] - history[-1] <= tol * abs(history[-2]):
            break
    return W, H, np.asarray(history), n_iter


class LEML(MultiLabelMixin, BaseEstimator):
    """LEML: low-rank linear multi-label model fitted on the observed labels only.

    Yu, Jain, Kar & Dhillon (2014), "Large-scale Multi-label Learning with Missing Labels",
    ICML. The label scores are ``X W H^T`` with W (d x k) and H (l x k), i.e. a rank-k
    linear model Z = W H^T. With the labels mapped to +1 / -1 and Omega the set of observed
    (sample, label) entries, ``fit`` minimizes the paper's empirical risk with squared loss
    and the factored form of the trace-norm regularizer,

        sum over (i, j) in Omega of (Y_ij - x_i^T W h_j)^2 + (lam / 2) (||W||_F^2 + ||H||_F^2),

    so missing entries do not enter the objective at all (at a minimum, the regularizer equals
    ``lam ||W H^T||_*``, the trace norm of the rank-k model). As in the paper it alternates
    between the two blocks, each a convex least-squares problem:

    - **H-step** (W fixed): with ``Z = X W``, every label j is an independent k-dimensional
      ridge regression over the samples where it is observed,
      ``(Z_j^T Z_j + (lam/2) I) h_j = Z_j^T y_j``, solved exactly (batched k x k solves).
    - **W-step** (H fixed): a least-squares problem in vec(W), solved by conjugate gradients
      started at the current W, whose Hessian-vector product
      ``2 X^T (M o (X S H^T)) H + lam S`` (``2 X^T (X S)(H^T H) + lam S`` with complete
      labels; M the mask of observed entries) uses only products with the (possibly sparse)
      X and never forms the dk x dk Hessian. CG stops when its residual (the gradient) falls
      by a factor 100 or after ``cg_max_iter`` steps.

    Two implementation choices, neither of which changes the objective: CG is preconditioned
    by the exact inverse of the W-step Hessian with the mask replaced by its rank-one
    approximation (row counts times column shares; see ``_Preconditioner``), through a thin
    eigendecomposition of ``X^T diag(row counts) X`` computed once per fit, so that with
    complete labels a W-step is exact after one CG step and with missing labels takes a few
    (above 2000 = min(n, d), the Hessian's diagonal is used instead); and a dense X with at
    most 20% nonzeros is multiplied as a CSR matrix.

    Every step lowers the objective, so ``objective_history_`` never increases. H starts
    from a seeded standard normal draw (scaled by 1/sqrt(k)) and W at zero, so the first step
    is a W-step. There is no intercept (the paper's model has none; append a constant feature
    to X for one). With complete labels this is reduced-rank ridge regression of the ±1
    labels.

    Parameters
    ----------
    n_components : int, default=10
        Rank k of the model (the dimension of the label embedding).
    lam : float, default=30.0
        Regularization weight ``lam`` of ``(lam / 2)(||W||_F^2 + ||H||_F^2)``. The loss is a
        sum (not a mean) over the observed entries, so the right value grows with the data;
        on one 60/40 split (test Ap; 1, 3, 10, 30, 100 tried on Arts, 1, 10, 30, 100 on
        Medical and Enron) 30 was best on Arts with full labels and with 30% observed and on
        Medical with full labels; Medical with 30% observed preferred 10, Enron 100. Small
        values also make the alternation converge slowly.
    max_iter : int, default=100
        Maximum number of alternations (one W-step and one H-step each).
    tol : float, default=1e-4
        Stop when an alternation lowers the objective by at most ``tol`` times its value.
    random_state : int, RandomState instance or None, default=None
        Seeds the initial H.
    cg_max_iter : int, default=20
        Maximum number of conjugate-gradient steps (Hessian-vector products) per W-step.

    Attributes
    ----------
    W_ : ndarray of shape (n_features, n_components)
    H_ : ndarray of shape (n_labels, n_components)
    objective_history_ : ndarray of shape (n_iter_ + 1,)
        The objective at the start and after every alternation; non-increasing.
    n_iter_ : int
        Number of alternations run.
    n_features_in_ : int
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
        "cg_max_iter": [Interval(Integral, 1, None, closed="left")],
    }
    _fitted_attributes = {
        "W_": Array("f", ("n_features_in_", "n_components")),
        "H_": Array("f", ("n_labels", "n_components")),
        "objective_history_": Array("f", ("n_steps",)),
        "n_iter_": Integer(),
        "n_features_in_": Integer(1),
    }

    def __init__(self, n_components=10, lam=30.0, max_iter=100, tol=1e-4, random_state=None,
                 cg_max_iter=20):
        self.n_components = n_components
        self.lam = lam
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.cg_max_iter = cg_max_iter

    def fit(self, X, Y):
        """Fit on the observed labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Features; sparse input stays sparse.
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Label indicator: 1 positive, 0 negative, NaN missing.

        Returns
        -------
        self
        """
        X, Y_signed, J = self._check_training_data(X, Y)
        rng = check_random_state(self.random_state)
        M = None if J is None else np.ascontiguousarray(J.T)
        W, H, history, n_iter = leml_fit(
            X, np.ascontiguousarray(Y_signed.T), M, self.n_components, self.lam,
            self.max_iter, self.tol, self.cg_max_iter, rng)
        self.W_, self.H_ = W, H
        self.objective_history_ = history
        self.n_iter_ = n_iter
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """Label scores ``X W H^T``, shape (n_samples, n_labels)."""
        X = self._check_fitted_features(X)
        return np.asarray(X @ self.W_) @ self.H_.T
