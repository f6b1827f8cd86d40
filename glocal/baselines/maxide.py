"""MAXIDE: matrix completion with side information, for multi-label learning with missing labels.

Xu, Jin & Zhou (2013), "Speedup Matrix Completion with Side Information: Application to
Multi-Label Learning", NIPS 26. Layout here is scikit-learn's: the label matrix is n x l
(samples x labels), +1 / -1 on the observed entries Omega, 0 elsewhere; the side information is
an n x r_a matrix A with orthonormal columns (a basis of the feature matrix X) and, optionally,
an l x r_b matrix B with orthonormal columns (a basis of given label features; identity
otherwise). The completed matrix is ``A Z B^T`` with the small r_a x r_b matrix Z.
"""

import math
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.linalg import eigh, solve_triangular
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval
from sklearn.utils.extmath import randomized_svd
from sklearn.utils.validation import check_is_fitted

from .._utils import validation
from .._base import MultiLabelMixin
from .._fitted import Array, Integer

# Directions of the side information whose singular value is below this fraction of the
# largest are dropped: they carry no usable signal, and a new sample's coordinates along them
# (divided by that singular value) would be dominated by rounding and noise.
_RANK_RTOL = 1e-6
# Above this size of the smaller side of X, the basis is a randomized truncated SVD (then
# `n_components` must be given); below it, an eigendecomposition of the Gram matrix.
_MAX_GRAM = 5000
# The Gram matrix of a sparse X denser than this is summed over dense blocks of its rows, of
# about _BLOCK_BYTES each (BLAS is faster than a sparse product there, and X stays sparse).
_DENSE_ABOVE = 0.02
_BLOCK_BYTES = 2 ** 23
# Backtracking of the step size: L grows by this factor until the quadratic upper bound holds.
_GAMMA = 2.0
# Power iterations estimating the Lipschitz constant of the gradient (the first trial L).
_POWER_ITER = 5


def maxide_objective(Z, A, Y, mask, lam, B=None):
    """The MAXIDE objective ``1/2 ||R_Omega(A Z B^T - Y)||_F^2 + lam ||Z||_*``.

    ``A`` (n x r_a) or None for the identity, ``B`` (l x r_b) or None for the identity,
    ``Y`` (n x l, 0 on missing entries), ``mask`` (n x l 0/1, None when all observed).
    """
    residual = _product(A, Z, B) - Y
    if mask is not None:
        residual *= mask
    nuclear = np.linalg.svd(Z, compute_uv=False).sum() if Z.size else 0.0
    return float(0.5 * np.vdot(residual, residual) + lam * nuclear)


def _product(A, Z, B):
    """``A Z B^T`` with None standing for an identity."""
    P = Z if B is None else Z @ B.T
    return P if A is None else A @ P


def _adjoint(A, R, B):
    """``A^T R B`` with None standing for an identity: the gradient from a residual R."""
    G = R if A is None else A.T @ R
    return G if B is None else G @ B


def singular_value_threshold(W, tau):
    """The proximal map of ``tau ||.||_*``: shrink the singular values of W by tau.

    Returns the thresholded matrix and its nuclear norm.
    """
    U, s, Vt = np.linalg.svd(W, full_matrices=False)
    s = s - tau
    k = int(np.count_nonzero(s > 0))
    if k == 0:
        return np.zeros_like(W), 0.0
    return (U[:, :k] * s[:k]) @ Vt[:k], float(s[:k].sum())


def _lipschitz_estimate(A, B, mask, shape, Y):
    """Largest eigenvalue of ``Z -> A^T R_Omega(A Z B^T) B`` by a few power iterations.

    With orthonormal A and B it is at most 1 (exactly 1 when nothing is missing). The power
    method gives a lower estimate; the backtracking of `maxide_solve` corrects it if needed.
    """
    if mask is None:
        return 1.0
    V = _adjoint(A, Y if mask is None else mask * Y, B)
    if not np.any(V):
        V = np.ones(shape)
    estimate = 1.0
    for _ in range(_POWER_ITER):
        V = V / np.linalg.norm(V)
        TV = _adjoint(A, mask * _product(A, V, B), B)
        estimate = float(np.vdot(V, TV))
        V = TV
        if not np.any(V):
            break
    return min(1.0, max(estimate, 1e-3))


def maxide_solve(A, Y, mask, lam, B=None, max_iter=500, tol=1e-6):
    """Minimize `maxide_objective` over Z by an accelerated proximal gradient method.

    Plain arrays in and out. ``A`` (n x r_a) and ``B`` (l x r_b) should have orthonormal
    columns (None for an identity); ``Y`` is n x l with 0 on missing entries, ``mask`` the
    0/1 observation mask or None. The smooth part ``g(Z) = 1/2 ||R_Omega(A Z B^T - Y)||^2`` has
    gradient ``A^T R_Omega(A Z B^T - Y) B``; every step is a singular value thresholding of
    the small r_a x r_b matrix ``W - grad g(W) / L`` at ``lam / L`` (Nesterov / FISTA
    extrapolation W, backtracking on L). When an extrapolated step would raise the
    objective, the momentum is reset and the step is redone from the current iterate, so the
    objective never increases. Stops when a step lowers the objective by at most ``tol``
    times its value, or after ``max_iter`` steps.

    Returns Z, the objective history (at Z = 0 and after every step) and the number of steps.
    """
    shape = (Y.shape[0] if A is None else A.shape[1], Y.shape[1] if B is None else B.shape[1])
    L = _lipschitz_estimate(A, B, mask, shape, Y)

    def residual_of(P):
        R = P - Y
        if mask is not None:
            R *= mask
        return R

    x = np.zeros(shape)
    P_x = np.zeros(Y.shape)
    R_x = residual_of(P_x)
    F_x = 0.5 * float(np.vdot(R_x, R_x))
    x_prev, P_prev = x, P_x
    t_prev, t = 1.0, 1.0
    history = [F_x]
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        beta = (t_prev - 1.0) / t
        if beta > 0:
            y = x + beta * (x - x_prev)
            P_y = P_x + beta * (P_x - P_prev)  # A y B^T, by linearity
            R_y = residual_of(P_y)
        else:
            y, P_y, R_y = x, P_x, R_x
        g_y = 0.5 * float(np.vdot(R_y, R_y))
        G = _adjoint(A, R_y, B)
        while True:
            z, nuclear = singular_value_threshold(y - G / L, lam / L)
            P_z = _product(A, z, B)
            R_z = residual_of(P_z)
            g_z = 0.5 * float(np.vdot(R_z, R_z))
            D = z - y
            bound = g_y + float(np.vdot(G, D)) + 0.5 * L * float(np.vdot(D, D))
            if g_z <= bound + 1e-12 * max(abs(g_y), 1.0):
                break
            L *= _GAMMA
        F_z = g_z + lam * nuclear
        if F_z > F_x:
            history.append(F_x)
            if beta <= 0:  # a plain proximal step cannot go up: only rounding is left
                break
            t_prev = t = 1.0  # restart the momentum from x
            x_prev, P_prev = x, P_x
            continue
        decrease = F_x - F_z
        x_prev, P_prev, x, P_x, R_x, F_x = x, P_x, z, P_z, R_z, F_z
        history.append(F_x)
        t_prev, t = t, 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        if decrease <= tol * abs(F_x):
            break
    return x, np.asarray(history), n_iter


def _fill(Y_signed, mask, scores):
    """{0, 1} labels (n x l): observed entries of the signed Y kept, missing ones 1 where the
    score is positive."""
    if mask is None:
        return (Y_signed > 0).astype(float)
    return np.where(mask > 0, Y_signed > 0, scores > 0).astype(float)


def orthonormal_basis(X, n_components=None, rtol=_RANK_RTOL):
    """An orthonormal basis A of the column space of X (n x d), and the map from X to it.

    Returns ``A`` (n x r, orthonormal columns: the top left singular vectors of X) and
    ``P`` (d x r) with ``A = X P`` (``P = V S^{-1}``), so that new rows map to the same
    coordinates by ``X_new P``. Directions with a singular value at most ``rtol`` times the
    largest are dropped; ``n_components`` keeps at most that many leading ones.
    """
    n, d = X.shape
    if min(n, d) > _MAX_GRAM:
        if n_components is None:
            raise ValueError(f"X has more than {_MAX_GRAM} rows and features: set "
                             "n_components to use a truncated basis of it")
        U, s, Vt = randomized_svd(X, n_components, random_state=0)
        if s[0] <= 0:
            raise ValueError("X is zero: MAXIDE needs non-zero features as side information")
        keep = s > rtol * s[0]
        return U[:, keep], Vt[keep].T / s[keep]
    # Eigendecomposition of the smaller Gram matrix, then one re-orthonormalization of A (the
    # Gram matrix squares the condition number, so A is orthonormal only to about 1e-4).
    gram = _gram(X)
    m = gram.shape[0]
    if n_components is not None and n_components < m:
        evals, evecs = eigh(gram, subset_by_index=[m - n_components, m - 1])
    else:
        evals, evecs = eigh(gram)
    evals, evecs = evals[::-1], evecs[:, ::-1]
    if evals[0] <= 0:
        # X X^T (or X^T X) can underflow to zero for a non-zero X.
        kind = ("X is zero" if not abs(X).max() else
                "X is too small for float64 arithmetic (its Gram matrix underflows to 0); "
                "rescale it")
        raise ValueError(f"{kind}: MAXIDE needs non-zero features as side information")
    keep = evals > (rtol ** 2) * evals[0]
    s = np.sqrt(evals[keep])
    if d <= n:
        P = evecs[:, keep] / s                      # V S^{-1}
    else:
        P = np.asarray(X.T @ evecs[:, keep]) / s ** 2  # X^T U S^{-2} = V S^{-1}
    A = np.asarray(X @ P)
    # Cholesky QR: A^T A = R^T R, then A R^{-1} (A is already nearly orthonormal, so this is
    # accurate, and it is several times faster than a Householder QR).
    R = np.linalg.cholesky(A.T @ A).T
    A = solve_triangular(R, A.T, trans="T", lower=False).T
    P = solve_triangular(R, P.T, trans="T", lower=False).T  # P R^{-1}, so that A = X P
    return A, P


def _gram(X):
    """The Gram matrix of the smaller side of X, dense: ``X^T X`` when d <= n, else ``X X^T``.

    A sparse X is never made dense as a whole: below `_DENSE_ABOVE` density the product is
    sparse; above, it is summed over dense blocks of rows of X (or of X^T).
    """
    n, d = X.shape
    M = X if d <= n else X.T  # the Gram matrix is M^T M
    if not sp.issparse(X):
        return M.T @ M
    if X.nnz <= _DENSE_ABOVE * n * d:
        return (M.T @ M).toarray()
    M = M.tocsr()
    m = M.shape[1]
    gram = np.zeros((m, m))
    rows = max(1, _BLOCK_BYTES // (8 * m))
    for start in range(0, M.shape[0], rows):
        block = M[start:start + rows].toarray(order="F")  # C order: matmul copies it
        gram += block.T @ block
        del block  # freed before the next one is made
    return gram


class MAXIDE(MultiLabelMixin, BaseEstimator):
    """MAXIDE: low-rank completion of the label matrix with the features as side information.

    Xu, Jin & Zhou (2013), "Speedup Matrix Completion with Side Information: Application to
    Multi-Label Learning", NIPS 26. The n x l label matrix, mapped to +1 / -1 on its observed
    entries Omega, is modelled as ``A Z B^T`` where A (n x r_a) is an orthonormal basis of the
    feature matrix X (its top left singular vectors), B (l x r_b) an orthonormal basis of
    given label features (``fit(..., label_features=...)``) or the identity as in the paper's
    multi-label experiments, and Z the small r_a x r_b matrix learned. ``fit`` minimizes the
    paper's relaxed problem

        1/2 ||R_Omega(A Z B^T - Y)||_F^2 + lam ||Z||_*,

    where R_Omega keeps the observed entries and zeroes the rest (missing entries do not enter
    the objective), and ||.||_* is the nuclear (trace) norm. As in the paper it is solved by
    an accelerated proximal gradient method: each step takes a gradient step
    ``W - A^T R_Omega(A W B^T - Y) B / L`` from an extrapolated point W and shrinks its
    singular values by ``lam / L`` (singular value thresholding of an r_a x r_b matrix, never
    of n x l), with Nesterov's extrapolation and backtracking on the step size 1/L (L starts
    from a power-iteration estimate of the Lipschitz constant, which is at most 1 since A and
    B are orthonormal). Momentum is reset whenever an extrapolated step would raise the
    objective, so ``objective_history_`` never increases. Z starts at 0.

    The model is transductive in the paper. Because ``A = X P`` with ``P = V S^{-1}`` (from the
    SVD ``X = U S V^T``), the completed scores are a linear function of the features,
    ``X P Z B^T``, and `decision_function` applies it to new samples too. With
    ``side_information=False``, A is the identity (plain nuclear-norm matrix completion of
    the training labels, for comparison): only the training labels can be completed.

    With the default arguments no intercept and no rescaling are used;
    ``fit_intercept=True`` appends a constant feature to X before taking its basis.

    Parameters
    ----------
    lam : float, default=1.0
        Weight of the nuclear norm of Z (the objective sums over the observed entries, so a
        fixed lam regularizes relatively less as the data grows).
    n_components : int or None, default=100
        Rank r_a of the side information: the number of leading singular vectors of X kept
        (fewer if X has lower rank). None keeps all directions whose singular value exceeds
        1e-6 times the largest; it must be an int when X has more than 5000 rows and more
        than 5000 features. Keeping every direction makes Z fit the noise directions of X
        as readily as the informative ones: at 30% observed labels, the ranking of the missing
        labels was clearly worse with None than with 100 on Arts, Enron, Medical and Scene
        (e.g. average precision 0.52 vs 0.60 on Arts, 0.51 vs 0.86 on Medical).
    side_information : bool, default=True
        Use X as side information. False completes the label matrix without it (A = I).
    fit_intercept : bool, default=False
        Append a constant feature to X (outside the paper's model).
    max_iter : int, default=500
        Maximum number of proximal gradient steps.
    tol : float, default=1e-6
        Stop when a step lowers the objective by at most ``tol`` times its value.

    Attributes
    ----------
    Z_ : ndarray of shape (r_a, r_b)
        The learned small matrix (r_a = n_samples without side information).
    coef_ : ndarray of shape (n_labels, n_features) or None
        Scores are ``X coef_^T + intercept_`` (``coef_^T = P Z B^T``). None without side
        information.
    intercept_ : ndarray of shape (n_labels,) or None
        Zero unless ``fit_intercept``. None without side information.
    label_basis_ : ndarray of shape (n_labels, r_b) or None
        B, when label features were given.
    completed_scores_ : ndarray of shape (n_samples, n_labels)
        ``A Z B^T`` on the training samples: the completed label matrix before thresholding.
    Y_completed_ : ndarray of shape (n_samples, n_labels)
        The training labels in {0, 1}: observed entries as given, missing entries 1 where
        their completed score is positive.
    objective_history_ : ndarray of shape (n_iter_ + 1,)
        The objective at Z = 0 and after every step; non-increasing.
    n_iter_ : int
        Number of proximal gradient steps run.
    n_features_in_ : int
    """

    _parameter_constraints = {
        "lam": [Interval(Real, 0, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "side_information": ["boolean"],
        "fit_intercept": ["boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }
    _fitted_attributes = {
        "Z_": Array("f", ("n_basis", "n_label_basis")),
        "label_basis_": Array("f", ("n_labels", "n_label_basis"), none=True),
        "coef_": Array("f", ("n_labels", "n_features_in_"), none=True),
        "intercept_": Array("f", ("n_labels",), none=True),
        "completed_scores_": Array("f", ("n_samples", "n_labels")),
        "Y_completed_": Array("f", ("n_samples", "n_labels")),
        "objective_history_": Array("f", ("n_steps",)),
        "n_iter_": Integer(),
        "n_features_in_": Integer(1),
    }

    def __init__(self, lam=1.0, n_components=100, side_information=True, fit_intercept=False,
                 max_iter=500, tol=1e-6):
        self.lam = lam
        self.n_components = n_components
        self.side_information = side_information
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol

    def fit(self, X, Y, label_features=None):
        """Complete the training labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Features, the side information.
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Label indicator: 1 positive, 0 negative, NaN missing.
        label_features : array-like of shape (n_labels, n_label_features), default=None
            Side information on the labels; its orthonormal basis is B. None: B = I.

        Returns
        -------
        self
        """
        X, Y_signed, J = self._check_training_data(X, Y)
        Y_obs = np.ascontiguousarray(Y_signed.T)
        mask = None if J is None else np.ascontiguousarray(J.T)
        n, l = Y_obs.shape
        B = None
        if label_features is not None:
            F = validation.check_features(label_features)
            if F.shape[0] != l:
                raise ValueError(f"label_features must have one row per label ({l}), got "
                                 f"{F.shape[0]} rows")
            B, _ = orthonormal_basis(F)
        A = P = None
        if self.side_information:
            Xa = X
            if self.fit_intercept:
                ones = np.ones((n, 1))
                Xa = sp.hstack([X, ones], format="csr") if sp.issparse(X) else np.hstack([X, ones])
            A, P = orthonormal_basis(Xa, self.n_components)
        Z, history, n_iter = maxide_solve(A, Y_obs, mask, self.lam, B, self.max_iter, self.tol)
        self.Z_ = Z
        self.label_basis_ = B
        self.coef_ = self.intercept_ = None  # a model of the training labels only
        if self.side_information:
            W = P @ (Z if B is None else Z @ B.T)  # (d [+1]) x l
            if self.fit_intercept:
                self.coef_, self.intercept_ = W[:-1].T.copy(), W[-1].copy()
            else:
                self.coef_, self.intercept_ = W.T.copy(), np.zeros(l)
        self.completed_scores_ = _product(A, Z, B)
        self.Y_completed_ = _fill(Y_obs, mask, self.completed_scores_)
        self.objective_history_ = history
        self.n_iter_ = n_iter
        self.n_features_in_ = X.shape[1]
        return self

    def decision_function(self, X):
        """Label scores ``X P Z B^T`` (+ intercept), shape (n_samples, n_labels).

        On the training samples these are `completed_scores_`. Not available with
        ``side_information=False``, where the model has no map from features to labels.
        """
        X = self._check_fitted_features(X)
        if self.coef_ is None:  # fitted without side information
            raise ValueError("MAXIDE(side_information=False) only completes its training "
                             "labels (see completed_scores_ and Y_completed_); it cannot "
                             "score new samples")
        return np.asarray(X @ self.coef_.T) + self.intercept_

    def fill(self, Y, X=None):
        """Fill in the missing (NaN) entries of a {0, 1, NaN} label matrix.

        Observed entries are kept; a missing entry becomes 1 where its score is positive,
        else 0. The scores are those of the training samples (`completed_scores_`) when X is
        None, then Y must have the training shape; otherwise ``decision_function(X)``.

        Returns
        -------
        ndarray of shape (n_samples, n_labels), float, without NaN.
        """
        check_is_fitted(self)
        if X is None:
            scores = self.completed_scores_
        else:
            scores = self.decision_function(X)
        Y_signed, J = validation.check_labels(Y, scores.shape[0])
        if Y_signed.shape[0] != scores.shape[1]:
            raise ValueError(f"Y has {Y_signed.shape[0]} labels, but MAXIDE was fitted with "
                             f"{scores.shape[1]}")
        return _fill(Y_signed.T, None if J is None else J.T, scores)
