"""ML-LRC: multi-label learning with a low-rank label correlation matrix and missing labels.

Xu, Wang, Shen, Wang & Chen, "Learning Low-Rank Label Correlations for Multi-label
Classification with Missing Labels", ICDM 2014 (ML-LRC in the GLOCAL paper).

**The formulation, and how it relates to the paper.** The ICDM paper's text was not available
while this was written (searches found neither it nor a restatement of its equations), so its
exact objective could not be copied. What is established, from the GLOCAL paper's account of
it, is: ML-LRC "adopts a low-rank structure to capture global label correlations, and addresses
the missing labels by introducing a supplementary label matrix" that "augments the original
label matrix via exploiting the global label correlations"; it learns a linear classifier and
keeps the full label matrix and model in every iteration. The model below is the closest sound
formulation of that description. In sklearn layout (X n x d; Y n x l, +1 / -1 observed, 0
missing, observed mask J) it minimizes over W (d x l) and S (l x l)

    F(W, S) = 1/2 ||X W - Y S||^2 + beta/2 ||J o (Y S - Y)||^2
              + lam/2 ||W||^2 + gamma ||S||_*        [ + rank(S) <= r when ``rank`` is set ]

* ``Y S`` is the supplementary label matrix: entry (i, j) combines the observed labels of
  sample i through the label correlation matrix S, so it is defined on the missing entries too
  (J o Y = Y: a missing entry contributes nothing but its correlated, observed labels);
* the classifier X W is fitted to the supplementary labels on *all* entries;
* ``beta`` ties the supplementary labels to the observed labels, on the observed entries only;
* the nuclear norm (and the optional hard rank cap) makes S low rank, so every label is
  reconstructed from a few label directions; this is what fills in the missing entries.

Y enters only as J o Y: the values at missing positions never reach the solver. The
problem is jointly convex in (W, S) (X W - Y S is linear in both) unless ``rank`` is set.
A label with no observed entry carries no correlation information: its row and column of S
are zero at the optimum and it gets zero scores.

Relation to the other reading, "fit the observed entries of Y by X W S": here the scores are
X W = (X Z) S (below), i.e. also per-label linear outputs corrected by S, but the observed
labels are fitted through the supplementary matrix Y S, which is how the GLOCAL paper says
ML-LRC treats missing labels, and the problem stays convex. On one 60/40 split of Arts with
the defaults this gives test Ap 0.602 (complete labels) and 0.562 (30% observed); the GLOCAL
paper reports 0.600 and 0.517 for the authors' ML-LRC.

**Algorithm.** For fixed S the W-block is a ridge regression with the closed form
W = Z S, Z = (X^T X + lam I)^{-1} X^T Y, computed once (Cholesky of the d x d or n x n Gram
matrix, or block conjugate gradients with products by sparse X when both are large). So the
scores are X W = (X Z) S: per-label ridge outputs corrected by the correlation matrix.
Substituting W = Z S leaves a problem in S alone,

    G(S) = 1/2 tr(S^T M S) + beta/2 ||J o (Y S - Y)||^2 + gamma ||S||_*,
    M = R^T R + lam Z^T Z,  R = Y - X Z          (l x l, positive semi-definite),

and G(S) = F(Z S, S) exactly. G is minimized by accelerated proximal gradient (FISTA) with
backtracking on the step size, a monotone safeguard and adaptive restart (a momentum step that
would raise G is replaced by a plain proximal-gradient step), and the proximal operator of the
nuclear norm (singular value soft-thresholding; with ``rank``, only the ``rank`` largest
thresholded values are kept, which is the exact proximal operator of
gamma ||S||_* + indicator(rank(S) <= r)). An iteration typically costs one l x l SVD and two
n x l x l products (no n x l product at all when no label is missing: the objective is then a
quadratic form in l x l Gram matrices); backtracking and restarts add a few. The step is
1 / L, L starting from a power-iteration estimate of the largest Hessian eigenvalue. The
solver stops when the fixed-point residual ||S_next - S_from|| of a proximal step falls below
``tol * max(1, ||S||)``. ``objective_history_`` is F at (Z S_k, S_k) and never increases.
"""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.linalg
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval

from .._base import MultiLabelMixin
from .._fitted import Array, Integer
from .._utils.linalg import cho_factor_psd

# Largest d x d (or n x n) Gram matrix formed for the ridge solve: 4000^2 doubles = 128 MiB.
_GRAM_LIMIT = 4000


# --------------------------------------------------------------------------------------------
# The objective and its parts (sklearn layout: X n x d, Y n x l with 0 = missing, J n x l).
# --------------------------------------------------------------------------------------------

def mllrc_objective(X, Y, J, W, S, lam, beta, gamma):
    """F(W, S) = 1/2 ||XW - YS||^2 + beta/2 ||J o (YS - Y)||^2 + lam/2 ||W||^2 + gamma ||S||_*.

    ``Y`` is the signed label matrix (n x l, 0 where missing), ``J`` the 0/1 mask of observed
    entries (None: all observed). The rank constraint, when used, is not part of the value.
    """
    YS = Y @ S
    fit = np.asarray(X @ W) - YS
    observed = YS - Y if J is None else J * (YS - Y)
    return float(0.5 * np.sum(fit ** 2) + 0.5 * beta * np.sum(observed ** 2)
                 + 0.5 * lam * np.sum(W ** 2)
                 + gamma * np.sum(np.linalg.svd(S, compute_uv=False)))


def mllrc_smooth_gradients(X, Y, J, W, S, lam, beta):
    """Gradients in W and in S of the smooth part of F (everything but gamma ||S||_*)."""
    YS = Y @ S
    fit = np.asarray(X @ W) - YS
    observed = YS - Y if J is None else J * (YS - Y)
    grad_W = np.asarray(X.T @ fit) + lam * W
    grad_S = Y.T @ (beta * observed - fit)
    return grad_W, grad_S


def ridge_coefficients(X, Y, lam, tol=1e-10, max_iter=None):
    """Z = (X^T X + lam I)^{-1} X^T Y (d x l), the per-label ridge regressions.

    Through a Cholesky factor of X^T X + lam I when d <= n (or of X X^T + lam I when n < d)
    as long as that matrix has at most ``_GRAM_LIMIT`` rows; otherwise by conjugate gradients
    run on all l columns at once, with products by X and X^T only (sparse X stays sparse).
    """
    n, d = X.shape
    if d <= n and d <= _GRAM_LIMIT or n < d and n <= _GRAM_LIMIT:
        primal = d <= n
        gram = X.T @ X if primal else X @ X.T
        gram = gram.toarray() if sp.issparse(gram) else np.array(gram)
        gram[np.diag_indices_from(gram)] += lam
        factor = cho_factor_psd(gram, lower=True)
        if primal:
            return scipy.linalg.cho_solve(factor, np.asarray(X.T @ Y), check_finite=False)
        return np.asarray(X.T @ scipy.linalg.cho_solve(factor, Y, check_finite=False))
    return _block_cg(X, np.asarray(X.T @ Y), lam, tol, max_iter or 10 * d)


def _block_cg(X, B, lam, tol, max_iter):
    """Conjugate gradients for (X^T X + lam I) Z = B, every column of B at once."""
    Z = np.zeros_like(B)
    residual = B.copy()
    direction = residual.copy()
    rs = np.sum(residual ** 2, axis=0)
    target = (tol ** 2) * np.maximum(np.sum(B ** 2, axis=0), np.finfo(float).tiny)
    for _ in range(max_iter):
        if np.all(rs <= target):
            break
        product = np.asarray(X.T @ np.asarray(X @ direction)) + lam * direction
        curvature = np.sum(direction * product, axis=0)
        step = np.divide(rs, curvature, out=np.zeros_like(rs), where=curvature > 0)
        Z += step * direction
        residual -= step * product
        rs_new = np.sum(residual ** 2, axis=0)
        ratio = np.divide(rs_new, rs, out=np.zeros_like(rs), where=rs > 0)
        direction = residual + ratio * direction
        rs = rs_new
    return Z


def prox_nuclear(V, threshold, rank=None):
    """argmin_S 1/2 ||S - V||^2 + threshold ||S||_* (+ rank(S) <= rank): returns (S, ||S||_*).

    Soft-thresholds the singular values of V; with ``rank``, keeps only the ``rank`` largest
    of the thresholded values (exact, since both terms depend on the singular values only and
    keeping a larger value always gains more).
    """
    U, sigma, Vt = np.linalg.svd(V, full_matrices=False)
    shrunk = np.maximum(sigma - threshold, 0.0)
    if rank is not None:
        shrunk[rank:] = 0.0
    keep = shrunk > 0
    return (U[:, keep] * shrunk[keep]) @ Vt[keep], float(shrunk.sum())


class _ReducedProblem:
    """G(S) = 1/2 tr(S^T M S) + beta/2 ||J o (Y S - Y)||^2 (the smooth part), with Y S cached.

    Products are passed around as P = Y S so that a point that is a combination of two others
    gets its product by the same combination, without a new n x l x l product.
    """

    def __init__(self, M, Y, J, beta):
        self.M, self.Y, self.J, self.beta = M, Y, J, beta
        if J is None:
            # ||Y S - Y||^2 = tr((S - I)^T C (S - I)) with C = Y^T Y: everything is l x l.
            self.C = Y.T @ Y

    def product(self, S):
        return None if self.J is None else self.Y @ S

    def value(self, S, P):
        quad = 0.5 * np.sum(S * (self.M @ S))
        if self.J is None:
            D = S - np.eye(S.shape[0])
            return quad + 0.5 * self.beta * np.sum(D * (self.C @ D))
        return quad + 0.5 * self.beta * np.sum((self.J * (P - self.Y)) ** 2)

    def gradient(self, S, P):
        if self.J is None:
            return self.M @ S + self.beta * (self.C @ (S - np.eye(S.shape[0])))
        return self.M @ S + self.beta * (self.Y.T @ (self.J * (P - self.Y)))

    def apply_hessian(self, D):
        """The Hessian (block diagonal over the columns of S) applied to D."""
        if self.J is None:
            return self.M @ D + self.beta * (self.C @ D)
        return self.M @ D + self.beta * (self.Y.T @ (self.J * (self.Y @ D)))


def _lipschitz_estimate(problem, l, rng, n_power=15):
    """Largest eigenvalue of the Hessian of G by power iteration from a random start."""
    D = rng.standard_normal((l, l))
    estimate = 0.0
    for _ in range(n_power):
        norm = np.linalg.norm(D)
        if norm == 0:
            break
        D /= norm
        HD = problem.apply_hessian(D)
        estimate = float(np.sum(D * HD))
        D = HD
    return max(estimate, np.finfo(float).tiny)


def mllrc_fit(X, Y, J, lam=1.0, beta=1.0, gamma=1.0, rank=None, max_iter=500, tol=1e-5,
              random_state=None):
    """Minimize F(W, S) (see the module docstring); plain arrays in and out.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n, d)
    Y : ndarray of shape (n, l)
        Signed labels, +1 / -1 observed, anything at missing entries (they are zeroed here).
    J : ndarray of shape (n, l) or None
        1 on observed entries, 0 on missing ones; None when every entry is observed.

    Returns
    -------
    dict with W (d x l), S (l x l), Z (d x l, so W = Z S), objective_history (F after the
    start and after every iteration), n_iter, converged, lipschitz (final 1 / step size).
    """
    rng = check_random_state(random_state)
    Y = np.asarray(Y, dtype=float)
    if J is not None:
        J = np.asarray(J, dtype=float)
        Y = J * Y
    l = Y.shape[1]
    Z = ridge_coefficients(X, Y, lam)
    R = Y - np.asarray(X @ Z)
    M = R.T @ R + lam * (Z.T @ Z)
    M = 0.5 * (M + M.T)
    problem = _ReducedProblem(M, Y, J, beta)

    def total(S, P, nuclear):
        return problem.value(S, P) + gamma * nuclear

    if rank is None:
        S = np.eye(l)
        nuclear = float(l)
    else:
        # The projection on the dominant rank-r subspace of the observed labels.
        Vt = np.linalg.svd(Y, full_matrices=False)[2][:rank]
        S = Vt.T @ Vt
        nuclear = float(min(rank, l))
    P = problem.product(S)
    F = total(S, P, nuclear)
    history = [F]
    L = _lipschitz_estimate(problem, l, rng)

    def prox_step(Sy, Py, L):
        """One backtracked proximal-gradient step from Sy; returns (S, P, nuclear, F, L)."""
        gradient = problem.gradient(Sy, Py)
        g_y = problem.value(Sy, Py)
        while True:
            S_new, nuc_new = prox_nuclear(Sy - gradient / L, gamma / L, rank)
            P_new = problem.product(S_new)
            g_new = problem.value(S_new, P_new)
            step = S_new - Sy
            bound = g_y + np.sum(gradient * step) + 0.5 * L * np.sum(step ** 2)
            if g_new <= bound + 1e-12 * max(abs(g_y), 1.0):
                return S_new, P_new, nuc_new, g_new + gamma * nuc_new, L
            L *= 2.0

    Sy, Py, t = S, P, 1.0
    converged = False
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        S_new, P_new, nuc_new, F_new, L = prox_step(Sy, Py, L)
        start = Sy
        if F_new > F:  # the momentum step went uphill: restart from S with a plain step
            t = 1.0
            start = S
            S_new, P_new, nuc_new, F_new, L = prox_step(S, P, L)
            if F_new > F:  # only rounding is left: a plain step cannot go uphill
                history.append(F)
                converged = True
                break
        residual = np.linalg.norm(S_new - start)
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        momentum = (t - 1.0) / t_new
        Sy = S_new + momentum * (S_new - S)
        Py = None if P_new is None else P_new + momentum * (P_new - P)
        S, P, nuclear, t = S_new, P_new, nuc_new, t_new
        F = F_new
        history.append(F)
        if residual <= tol * max(1.0, np.linalg.norm(S)):
            converged = True
            break
    return {"W": Z @ S, "S": S, "Z": Z, "objective_history": np.array(history),
            "n_iter": n_iter, "converged": converged, "lipschitz": L}


# --------------------------------------------------------------------------------------------
# The estimator.
# --------------------------------------------------------------------------------------------

class MLLRC(MultiLabelMixin, BaseEstimator):
    """ML-LRC: a linear classifier with a low-rank label correlation matrix, missing labels.

    Xu, Wang, Shen, Wang & Chen, "Learning Low-Rank Label Correlations for Multi-label
    Classification with Missing Labels", ICDM 2014. The ICDM paper's equations were not
    available; this is the closest sound formulation of the method as the GLOCAL paper
    describes it (a low-rank global label correlation matrix and a supplementary label matrix
    that handles the missing labels). In sklearn layout -- X (n x d), Y (n x l) mapped to
    +1 / -1 on the observed entries and 0 on the missing ones, J the observed mask -- it
    minimizes over W (d x l) and S (l x l)::

        1/2 ||X W - Y S||^2 + beta/2 ||J o (Y S - Y)||^2 + lam/2 ||W||^2 + gamma ||S||_*

    (subject to rank(S) <= ``rank`` when ``rank`` is set). Y S is the supplementary label
    matrix: the observed labels of each sample combined through the correlations S, defined
    on missing entries too. The classifier fits it everywhere; ``beta`` keeps it equal to the
    observed labels where they are observed; the nuclear norm makes S low rank. Values of Y at
    missing entries never enter. The objective is the literal one: no rescaling of the
    weights, no intercept (unless ``fit_intercept``), no preprocessing.

    Solver: the W-block has the closed form W = Z S with Z = (X^T X + lam I)^{-1} X^T Y
    (computed once; sparse X stays sparse), which leaves a convex problem in S alone, solved
    by accelerated proximal gradient (FISTA with backtracking, adaptive restart and a monotone
    safeguard) with singular value thresholding as the proximal step. See
    ``glocal.baselines.mllrc`` for the details. Scores are X W = (X Z) S: per-label ridge
    outputs corrected by the label correlations.

    Parameters
    ----------
    lam : float, default=30.0
        Weight of 1/2 ||W||^2 (ridge penalty of the classifier).
    beta : float, default=100.0
        Weight of 1/2 ||J o (Y S - Y)||^2, the fit of the supplementary labels to the
        observed ones.
    gamma : float, default=300.0
        Weight of the nuclear norm ||S||_*. Larger values give a lower-rank S (S = 0, all
        scores zero, once gamma exceeds the largest singular value of the gradient at S = 0);
        a low rank hurts rare labels, whose label directions are the first to go. The
        objective is not normalized by the number of samples, so good values of all three
        weights grow with it. The defaults gave the best mean test Ap among the settings
        tried on seven benchmark datasets (Arts, Business, Emotions, Enron, Medical, Scene,
        Yeast; complete labels and 30% observed), none of which is best everywhere: choose
        them by cross-validation, as the GLOCAL paper does for every method.
    rank : int or None, default=None
        Optional hard cap on the rank of S (the problem is then no longer convex; the
        solver starts from the projection on the dominant rank-``rank`` subspace of the
        observed labels).
    max_iter : int, default=500
        Maximum number of proximal-gradient iterations.
    tol : float, default=1e-5
        The solver stops when a proximal-gradient step moves S by less than
        ``tol * max(1, ||S||_F)`` (the fixed-point residual of the proximal step).
    fit_intercept : bool, default=False
        Not part of the model. When True, a constant feature of value ``intercept_scaling``
        is appended to X (and regularized with W), so that every label gets a bias.
    intercept_scaling : float, default=1.0
        Value of that constant feature.
    random_state : int, RandomState instance or None, default=None
        Seeds the power iteration that estimates the initial step size. The problem is
        convex without ``rank``, so the fitted model does not depend on it beyond ``tol``.

    Attributes
    ----------
    W_ : ndarray of shape (n_features, n_labels)
        The classifier; scores are X W_ + intercept_. Equals ``ridge_coef_ @ S_``.
    S_ : ndarray of shape (n_labels, n_labels)
        The learned low-rank label correlation matrix.
    ridge_coef_ : ndarray of shape (n_features, n_labels)
        Z, the per-label ridge regressions of the observed labels.
    intercept_ : ndarray of shape (n_labels,)
        Label biases (zero unless ``fit_intercept``).
    rank_ : int
        Numerical rank of S_ (singular values above 1e-10 times the largest).
    objective_history_ : ndarray
        The objective at the start and after every iteration; never increases.
    n_iter_ : int
        Number of proximal-gradient iterations run.
    n_features_in_ : int
    """

    _parameter_constraints = {
        "lam": [Interval(Real, 0, None, closed="neither")],
        "beta": [Interval(Real, 0, None, closed="neither")],
        "gamma": [Interval(Real, 0, None, closed="left")],
        "rank": [Interval(Integral, 1, None, closed="left"), None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }
    _fitted_attributes = {
        "W_": Array("f", ("n_features_in_", "n_labels")),
        "intercept_": Array("f", ("n_labels",)),
        "S_": Array("f", ("n_labels", "n_labels")),
        "ridge_coef_": Array("f", ("n_features_in_", "n_labels")),
        "rank_": Integer(),
        "objective_history_": Array("f", ("n_steps",)),
        "n_iter_": Integer(),
        "n_features_in_": Integer(1),
    }

    def __init__(self, lam=30.0, beta=100.0, gamma=300.0, rank=None, max_iter=500, tol=1e-5,
                 fit_intercept=False, intercept_scaling=1.0, random_state=None):
        self.lam = lam
        self.beta = beta
        self.gamma = gamma
        self.rank = rank
        self.max_iter = max_iter
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.random_state = random_state

    def fit(self, X, Y):
        """Fit W and S. Y: (n_samples, n_labels) in {0, 1}, NaN for a missing label."""
        X, Y_signed, J = self._check_training_data(X, Y)
        n_features = X.shape[1]
        if self.fit_intercept:
            column = np.full((X.shape[0], 1), self.intercept_scaling)
            X = (sp.hstack([X, column], format="csr") if sp.issparse(X)
                 else np.hstack([X, column]))
        result = mllrc_fit(X, Y_signed.T, None if J is None else J.T, lam=self.lam,
                           beta=self.beta, gamma=self.gamma, rank=self.rank,
                           max_iter=self.max_iter, tol=self.tol,
                           random_state=self.random_state)
        if not result["converged"]:
            warnings.warn(f"MLLRC did not converge in max_iter={self.max_iter} iterations; "
                          "increase max_iter or tol", ConvergenceWarning)
        W = result["W"]
        self.W_ = W[:n_features]
        self.intercept_ = (self.intercept_scaling * W[n_features] if self.fit_intercept
                           else np.zeros(W.shape[1]))
        self.S_ = result["S"]
        self.ridge_coef_ = result["Z"][:n_features]
        sigma = np.linalg.svd(self.S_, compute_uv=False)
        self.rank_ = int(np.sum(sigma > 1e-10 * sigma[0])) if sigma[0] > 0 else 0
        self.objective_history_ = result["objective_history"]
        self.n_iter_ = result["n_iter"]
        self.n_features_in_ = n_features
        return self

    def decision_function(self, X):
        """Label scores X W_ (+ intercept_), shape (n_samples, n_labels)."""
        X = self._check_fitted_features(X)
        return np.asarray(X @ self.W_) + self.intercept_
