"""ML-LOC: multi-label learning by exploiting label correlations locally (Huang & Zhou, 2012)."""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_solve
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval

from .._utils import validation
from .._base import MultiLabelMixin
from .._fitted import Array, Integer
from .._utils.linalg import cho_factor_psd
from ..groups import kmeans_groups

# Inner solver settings (they change how exactly each block is solved, never the objective).
_NEWTON_MAX_ITER = 50      # Newton steps of one W block
_NEWTON_RTOL = 1e-3        # stop when ||grad_k|| <= rtol * ||grad_k at W = 0||, per label
_CG_MAX_ITER = 100         # conjugate-gradient steps of one Newton step
_CG_RTOL = 0.1             # inexact Newton: residual <= 0.1 ||grad||
_CODE_MAX_ITER = 50        # projected-gradient steps of one C block
_CODE_RTOL = 1e-5          # stop the C block when 5 steps lower its objective by less
_RIDGE_MAX_GRAM = 8000     # the code regressor solves with a Gram matrix of at most this size
_SPARSE_BELOW = 0.3        # a dense X with fewer non-zeros than this fraction is used as CSR


class MLLOC(MultiLabelMixin, BaseEstimator):
    r"""ML-LOC: linear classifiers on the features augmented with learned local codes.

    Huang & Zhou (2012), "Multi-Label Learning by Exploiting Label Correlations Locally",
    AAAI 2012, pp. 949-955. Label correlations are assumed to be shared within groups of
    instances rather than globally. The training label vectors are clustered into ``m`` groups
    with prototypes ``s_j``; every instance gets a LOC code ``c_i`` (one entry per group, a
    point of the probability simplex) that says how strongly the instance is under the
    influence of each group's label correlations; the classifiers see ``[x_i, c_i]``, and the
    codes and classifiers are learned jointly. Test instances get their codes from a regressor
    trained on the training codes.

    **Objective.** With labels ``y_ik`` in {-1, +1} (``y_i`` the label vector of instance i),
    ``o_ik`` = 1 where label k of instance i is observed and 0 where it is missing (NaN),
    classifiers ``f_k(x, c) = w_k^T x + v_k^T c + b_k`` and ``W = [w_k; v_k]``::

        min_{W, b, C, S}   sum_i sum_k o_ik max(0, 1 - y_ik f_k(x_i, c_i))^2
                         + lam1 * sum_k (||w_k||^2 + ||v_k||^2)
                         + lam2 * sum_i sum_j c_ij sum_k o_ik (y_ik - s_jk)^2
        subject to       c_i in the simplex: c_ij >= 0, sum_j c_ij = 1,

    the paper's "global discrimination fitting" (loss), classifier regularizer and "local
    correlation sensitivity" term Z(C) (the codes of an instance are pulled toward the groups
    whose label prototype its label vector is close to). The intercepts ``b_k`` are not
    penalized. With every label observed (o = 1) this is the model of the paper; with
    missing labels each classifier learns from the rows where its label is observed (as
    `BR` does) and an instance is compared with the prototypes on its observed labels only.

    **Algorithm** (alternating minimization, each block a descent step, so
    ``objective_history_`` never increases):

    1. k-means (`glocal.groups.kmeans_groups`) on the training label vectors (a missing
       label counts as 0, halfway between -1 and +1) gives ``groups_``; ``S`` = the group
       means of the observed labels, ``C`` = the one-hot group indicators (the minimizer of
       Z(C) given S for a k-means partition of complete labels).
    2. W block (C fixed): ``l`` independent squared-hinge linear SVMs on ``[X, C]``, solved
       together by a primal truncated Newton method (batched preconditioned conjugate
       gradients with the generalized Hessian, per-label Armijo line search), warm-started.
    3. Repeat ``max_iter`` times, or until the objective decreases by less than
       ``tol`` relative: C block (W, S fixed): accelerated projected gradient (FISTA) on the
       simplex rows with step ``1 / (2 ||V||_2^2)``, the inverse Lipschitz constant of the
       loss gradient, every row keeping its best iterate;
       S block (C fixed): the closed form ``s_jk = sum_i c_ij o_ik y_ik / sum_i c_ij o_ik``;
       W block.
    4. Code regressor: ridge regression (penalty ``alpha``, with intercept) from X to the
       training codes ``local_codes_``. At test time ``c_hat(x) = B x + b0`` and the scores
       are ``f_k(x, c_hat(x))``.

    **Where this departs from the paper**, plainly:

    - The paper writes the classifiers on ``[phi(x), c]`` (a feature map) with the SVM hinge
      loss; here they are linear in x and use the squared hinge (L2-loss SVM, liblinear's
      default and what BR's ``LinearSVC`` minimizes), which makes the code block smooth. With a
      linear code regressor the test-time model is linear in x: the codes act as a shared
      component learned from the label clusters and pooled over all labels, not as extra
      nonlinearity.
    - The paper trains one regression model per code dimension; here one multi-output ridge
      regression, which is the same as one ridge model per dimension.
    - The full text of the paper could not be consulted while writing this: the objective
      above (codes on the simplex, squared distance to the label prototypes as Z(C),
      alternating W / C / S updates, regression for the test codes) is our reading of its
      method, and its weights' scaling is ours (lam1 matches BR's default SVM).

    **Defaults and quality.** ``lam2 = 10``, ``alpha = 10``, ``n_groups = 8`` were chosen by one
    60/40 split of each of Arts, Enron, Yeast, Scene and Medical (grid n_groups 8/16, lam2
    1-30, alpha 1-100): they came closest to BR on average (average precision -0.006, -0.005,
    -0.003, -0.001 and +0.009 against BR). At this lam2 the codes of real data barely move from
    the k-means indicators and the alternation stops after a few rounds; smaller lam2 lets
    the codes fit the training labels more closely, which ranked test labels worse there
    (the test codes, predicted from x, cannot follow). Where label correlations are local and
    each label alone is a weak signal of its group, MLLOC ranks better than BR (see
    ``tests/test_mlloc.py``).

    MLLOC learns with missing labels through the mask ``o`` above (the paper's MMLLOC fills
    them in with MAXIDE first instead).

    Parameters
    ----------
    n_groups : int, default=8
        Number ``m`` of label groups (k-means clusters of the label vectors) and length of a
        LOC code, at most the number of samples (more is an error). Fewer groups are used
        when the label matrix has fewer distinct rows.
    lam1 : float, default=5.0
        Weight of the classifiers' squared norm. ``lam1 = 5`` is the same regularization as
        ``LinearSVC(C=0.1)`` (``C = 1 / (2 lam1)``), the default of `BR`.
    lam2 : float, default=10.0
        Weight of the local-correlation term Z(C).
    alpha : float, default=10.0
        Ridge penalty of the code regressor.
    max_iter : int, default=10
        Maximum number of alternations (C, S, W blocks) after the first W block; 0 trains the
        classifiers on the k-means codes only.
    tol : float, default=1e-4
        Stop when an alternation lowers the objective by less than ``tol`` times its value.
    random_state : int, RandomState instance or None, default=None
        Seed of k-means, so that fits are reproducible.

    Attributes
    ----------
    coef_ : ndarray of shape (n_labels, n_features + n_groups_)
        Coefficients on ``[x, c]``: the first ``n_features`` columns act on the features,
        the last ``n_groups_`` on the LOC code.
    intercept_ : ndarray of shape (n_labels,)
    code_regressor_ : ndarray of shape (n_groups_, n_features + 1)
        The code regressor ``[B, b0]``: ``c_hat(x) = B x + b0``, intercept in the last column.
    groups_ : ndarray of shape (n_samples,)
        The k-means group of every training label vector, ids in ``[0, n_groups_)``.
    prototypes_ : ndarray of shape (n_groups_, n_labels)
        Final group prototypes ``s_j`` in the {-1, +1} label encoding.
    local_codes_ : ndarray of shape (n_samples, n_groups_)
        Final LOC codes of the training instances (rows on the simplex).
    objective_history_ : ndarray
        The objective after the first W block and after every alternation; non-increasing.
    n_groups_ : int
    n_iter_ : int
        Number of alternations run.
    n_features_in_ : int
    """

    _parameter_constraints = {
        "n_groups": [Interval(Integral, 1, None, closed="left")],
        "lam1": [Interval(Real, 0, None, closed="neither")],
        "lam2": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "random_state": ["random_state"],
    }
    _fitted_attributes = {
        "code_regressor_": Array("f", ("n_groups_", "n_features_in_+1")),
        "coef_": Array("f", ("n_labels", "n_features_in_+n_groups_")),
        "intercept_": Array("f", ("n_labels",)),
        "groups_": Array("i", ("n_samples",)),
        "prototypes_": Array("f", ("n_groups_", "n_labels")),
        "local_codes_": Array("f", ("n_samples", "n_groups_")),
        "objective_history_": Array("f", ("n_steps",)),
        "n_groups_": Integer(1),
        "n_iter_": Integer(),
        "n_features_in_": Integer(1),
    }

    def __init__(self, n_groups=8, lam1=5.0, lam2=10.0, alpha=10.0, max_iter=10, tol=1e-4,
                 random_state=None):
        self.n_groups = n_groups
        self.lam1 = lam1
        self.lam2 = lam2
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, Y):
        """Learn codes and classifiers.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Y : {array-like, sparse matrix} of shape (n_samples, n_labels)
            Label indicator: 1 positive, 0 negative, NaN missing.

        Returns
        -------
        self
        """
        X, Y_signed, J = self._check_training_data(X, Y)
        Ys = Y_signed.T.copy()  # n x l: +1 / -1 observed, 0 missing
        M = np.ones_like(Ys) if J is None else J.T.copy()  # observed entries
        n, d = X.shape

        validation.check_n_groups(self.n_groups, n)
        groups = kmeans_groups(Ys, self.n_groups, random_state=self.random_state)
        m = int(groups.max()) + 1
        C = np.zeros((n, m))
        C[np.arange(n), groups] = 1.0
        S = _prototypes(C, Ys, M, np.zeros((m, Ys.shape[1])))

        # The blocks only multiply by X and X^T: a mostly-zero dense X is faster as CSR.
        Xb = X
        if not sp.issparse(X) and np.count_nonzero(X) < _SPARSE_BELOW * X.size:
            Xb = sp.csr_matrix(X)
        XT = Xb.T.tocsr() if sp.issparse(Xb) else Xb.T
        l = Ys.shape[1]
        Wx, Wc, b = np.zeros((l, d)), np.zeros((l, m)), np.zeros(l)
        grad0 = _grad_norm_at_zero(XT, C, Ys)
        Wx, Wc, b = _fit_classifiers(Xb, XT, C, Ys, M, Wx, Wc, b, self.lam1, grad0)
        history = [_objective(Xb, C, S, Ys, M, Wx, Wc, b, self.lam1, self.lam2)]
        n_iter = 0
        for n_iter in range(1, self.max_iter + 1):
            C = _update_codes(Xb, C, S, Ys, M, Wx, Wc, b, self.lam2)
            S = _prototypes(C, Ys, M, S)
            grad0 = _grad_norm_at_zero(XT, C, Ys)
            Wx, Wc, b = _fit_classifiers(Xb, XT, C, Ys, M, Wx, Wc, b, self.lam1, grad0)
            history.append(_objective(Xb, C, S, Ys, M, Wx, Wc, b, self.lam1, self.lam2))
            if history[-2] - history[-1] <= self.tol * abs(history[-2]):
                break

        self.code_regressor_ = _ridge(X, C, self.alpha)
        self.coef_ = np.hstack([Wx, Wc])
        self.intercept_ = b
        self.groups_ = groups
        self.prototypes_ = S
        self.local_codes_ = C
        self.objective_history_ = np.asarray(history)
        self.n_groups_ = m
        self.n_iter_ = n_iter
        self.n_features_in_ = d
        return self

    def predict_codes(self, X):
        """LOC codes predicted by the code regressor, shape (n_samples, n_groups_)."""
        X = self._check_fitted_features(X)
        return self._codes(X)

    def _codes(self, X):
        B = self.code_regressor_
        return np.asarray(X @ B[:, :-1].T) + B[:, -1]

    def decision_function(self, X):
        """Label scores ``f_k(x, c_hat(x))``, shape (n_samples, n_labels)."""
        X = self._check_fitted_features(X)
        d = self.n_features_in_
        return (np.asarray(X @ self.coef_[:, :d].T) + self._codes(X) @ self.coef_[:, d:].T
                + self.intercept_)

    def objective(self, X, Y):
        """The ML-LOC objective at the fitted arrays on training data (X, Y) and
        ``local_codes_``; equals ``objective_history_[-1]`` on the data given to ``fit``."""
        X = self._check_fitted_features(X)
        Y_signed, J = validation.check_labels(Y, X.shape[0])
        if X.shape[0] != self.local_codes_.shape[0]:
            raise ValueError("the objective needs the training data (one code per row)")
        d = self.n_features_in_
        M = np.ones_like(Y_signed.T) if J is None else J.T
        return _objective(X, self.local_codes_, self.prototypes_, Y_signed.T, M,
                          self.coef_[:, :d], self.coef_[:, d:], self.intercept_,
                          self.lam1, self.lam2)


# ---------------------------------------------------------------------------------------------
# The blocks. Layout: X n x d (dense or CSR), C n x m, Ys n x l (+-1, 0 where missing), M n x l
# (1 observed, 0 missing), Wx l x d, Wc l x m, b l.


def _scores(X, C, Wx, Wc, b):
    return np.asarray(X @ Wx.T) + C @ Wc.T + b


def _slack(Ys, M, F):
    """Hinge slacks on the observed entries, 0 on the missing ones."""
    return M * np.maximum(0.0, 1.0 - Ys * F)


def _sq_distances(Ys, M, S):
    """sum_k o_ik (y_ik - s_jk)^2, shape n x m (Ys is 0 where o is: y_ik^2 = o_ik)."""
    return (np.sum(Ys ** 2, axis=1)[:, None] - 2.0 * Ys @ S.T + M @ (S ** 2).T).clip(min=0.0)


def _objective(X, C, S, Ys, M, Wx, Wc, b, lam1, lam2):
    slack = _slack(Ys, M, _scores(X, C, Wx, Wc, b))
    return float(np.sum(slack ** 2) + lam1 * (np.sum(Wx ** 2) + np.sum(Wc ** 2))
                 + lam2 * np.sum(C * _sq_distances(Ys, M, S)))


def _prototypes(C, Ys, M, S_old):
    """S block: s_jk = sum_i c_ij o_ik y_ik / sum_i c_ij o_ik (the weighted mean of the
    observed labels; an entry without weight keeps its old value)."""
    weight = C.T @ M
    S = S_old.copy()
    used = weight > 0
    S[used] = (C.T @ Ys)[used] / weight[used]
    return S


def _project_rows_to_simplex(V):
    """Euclidean projection of every row of V onto the probability simplex (sort-based)."""
    m = V.shape[1]
    U = -np.sort(-V, axis=1)
    cumulative = np.cumsum(U, axis=1) - 1.0
    ranks = np.arange(1, m + 1)
    support = U - cumulative / ranks > 0
    rho = m - 1 - np.argmax(support[:, ::-1], axis=1)  # last index where support holds
    theta = cumulative[np.arange(V.shape[0]), rho] / (rho + 1)
    return np.maximum(V - theta[:, None], 0.0)


def _update_codes(X, C, S, Ys, M, Wx, Wc, b, lam2):
    """C block: accelerated projected gradient (FISTA) on the simplex rows, step 1 / Lipschitz.

    The rows are independent problems; every row keeps its best iterate, so the block never
    increases the objective.
    """
    D = lam2 * _sq_distances(Ys, M, S)
    lipschitz = 2.0 * np.linalg.norm(Wc, 2) ** 2 if Wc.size else 0.0
    if lipschitz <= 0.0:
        # The loss does not see the codes: minimize the linear term, a vertex of the simplex
        # (keep C where it is already optimal, so that ties do not move the codes).
        best = np.zeros_like(C)
        best[np.arange(C.shape[0]), np.argmin(D, axis=1)] = 1.0
        improved = np.sum(best * D, axis=1) < np.sum(C * D, axis=1)
        return np.where(improved[:, None], best, C)
    base = np.asarray(X @ Wx.T) + b

    def row_values(C):
        slack = _slack(Ys, M, base + C @ Wc.T)
        return np.sum(slack ** 2, axis=1) + np.sum(C * D, axis=1), slack

    step = 1.0 / lipschitz
    best, (best_value, _) = C, row_values(C)
    previous, point, momentum = C, C, 1.0
    totals = [best_value.sum()]
    for _ in range(_CODE_MAX_ITER):
        slack = _slack(Ys, M, base + point @ Wc.T)
        current = _project_rows_to_simplex(point - step * ((-2.0 * Ys * slack) @ Wc + D))
        value, _ = row_values(current)
        better = value < best_value
        best = np.where(better[:, None], current, best)
        best_value = np.where(better, value, best_value)
        next_momentum = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * momentum ** 2))
        point = current + ((momentum - 1.0) / next_momentum) * (current - previous)
        previous, momentum = current, next_momentum
        totals.append(best_value.sum())
        if len(totals) > 5 and totals[-6] - totals[-1] <= _CODE_RTOL * totals[-1]:
            break
    return best


def _grad_norm_at_zero(XT, C, Ys):
    """Per-label gradient norm of the W block at W = 0, b = 0 (the Newton stopping scale;
    the slacks there are the mask, and -2 y_ik o_ik = -2 Ys)."""
    R = -2.0 * Ys
    gx = np.asarray(XT @ R)
    return np.sqrt(np.sum(gx ** 2, axis=0) + np.sum((C.T @ R) ** 2, axis=0)
                   + R.sum(axis=0) ** 2)


def _fit_classifiers(X, XT, C, Ys, M, Wx, Wc, b, lam1, grad0):
    """W block: l squared-hinge SVMs on [X, C, 1] by truncated Newton, warm-started.

    Minimizes, for every label k independently, ``lam1 (||w_k||^2 + ||v_k||^2)
    + sum_i o_ik max(0, 1 - y_ik (w_k^T x_i + v_k^T c_i + b_k))^2``.
    Each step: batched preconditioned CG on the generalized Hessian, then a per-label Armijo
    backtracking line search, so no label's objective ever increases.
    """
    Wx, Wc, b = Wx.copy(), Wc.copy(), b.copy()
    F = _scores(X, C, Wx, Wc, b)
    XT_sq = XT.multiply(XT).tocsr() if sp.issparse(XT) else XT * XT
    C_sq = C * C
    todo = np.arange(Ys.shape[1])
    for _ in range(_NEWTON_MAX_ITER):
        Yt, Mt, Ft = Ys[:, todo], M[:, todo], F[:, todo]
        slack = _slack(Yt, Mt, Ft)
        R = -2.0 * Yt * slack  # d loss / d F
        gx = 2.0 * lam1 * Wx[todo] + np.asarray(XT @ R).T
        gc = 2.0 * lam1 * Wc[todo] + (C.T @ R).T
        gb = R.sum(axis=0)
        gnorm = np.sqrt(np.sum(gx ** 2, axis=1) + np.sum(gc ** 2, axis=1) + gb ** 2)
        keep = gnorm > _NEWTON_RTOL * grad0[todo]
        if not keep.any():
            break
        todo, Yt, Mt, Ft = todo[keep], Yt[:, keep], Mt[:, keep], Ft[:, keep]
        slack = slack[:, keep]
        gx, gc, gb = gx[keep], gc[keep], gb[keep]
        active = (slack > 0).astype(float)
        # Diagonal of the generalized Hessian, the preconditioner.
        hx = 2.0 * lam1 + 2.0 * np.asarray(XT_sq @ active).T
        hc = 2.0 * lam1 + 2.0 * (C_sq.T @ active).T
        hb = np.maximum(2.0 * active.sum(axis=0), 1e-12)

        def hess(px, pc, pb, active=active):
            Q = active * (np.asarray(X @ px.T) + C @ pc.T + pb)
            return (2.0 * lam1 * px + 2.0 * np.asarray(XT @ Q).T,
                    2.0 * lam1 * pc + 2.0 * (C.T @ Q).T, 2.0 * Q.sum(axis=0))

        px, pc, pb = _batched_pcg(hess, (-gx, -gc, -gb), (hx, hc, hb))
        Q = np.asarray(X @ px.T) + C @ pc.T + pb  # change of the scores per unit step
        wx, wc = Wx[todo], Wc[todo]
        f0 = lam1 * (np.sum(wx ** 2, axis=1) + np.sum(wc ** 2, axis=1)) + np.sum(slack ** 2, 0)
        slope = np.sum(gx * px, axis=1) + np.sum(gc * pc, axis=1) + gb * pb
        t = np.ones(todo.size)
        accepted = np.zeros(todo.size, dtype=bool)
        for _ in range(30):
            wx_t, wc_t = wx + t[:, None] * px, wc + t[:, None] * pc
            s_t = _slack(Yt, Mt, Ft + t * Q)
            f_t = (lam1 * (np.sum(wx_t ** 2, axis=1) + np.sum(wc_t ** 2, axis=1))
                   + np.sum(s_t ** 2, axis=0))
            accepted |= f_t <= f0 + 1e-4 * t * slope
            if accepted.all():
                break
            t = np.where(accepted, t, 0.5 * t)
        t = np.where(accepted & (slope < 0), t, 0.0)
        Wx[todo] += t[:, None] * px
        Wc[todo] += t[:, None] * pc
        b[todo] += t * pb
        F[:, todo] = Ft + t * Q
        if not (t > 0).any():
            break
    return Wx, Wc, b


def _batched_pcg(hess, rhs, diag):
    """Solve H_k p_k = r_k for every label k (rows of the blocks) by preconditioned CG.

    ``hess(px, pc, pb)`` applies every label's Hessian to its own direction; vectors are
    triples (l x d, l x m, l) and all products are batched over labels.
    """
    def dot(u, v):
        return np.sum(u[0] * v[0], axis=1) + np.sum(u[1] * v[1], axis=1) + u[2] * v[2]

    def axpy(a, u, v):  # v + a u, a per label
        return (v[0] + a[:, None] * u[0], v[1] + a[:, None] * u[1], v[2] + a * u[2])

    x = tuple(np.zeros_like(r) for r in rhs)
    r = rhs
    z = tuple(ri / di for ri, di in zip(r, diag))
    p = z
    rz = dot(r, z)
    stop = _CG_RTOL * np.sqrt(dot(rhs, rhs))
    running = np.sqrt(dot(r, r)) > stop
    for _ in range(_CG_MAX_ITER):
        if not running.any():
            break
        Hp = hess(*p)
        pHp = dot(p, Hp)
        step = np.where(running & (pHp > 0), rz / np.where(pHp > 0, pHp, 1.0), 0.0)
        x = axpy(step, p, x)
        r = axpy(-step, Hp, r)
        running &= (np.sqrt(dot(r, r)) > stop) & (pHp > 0)
        z = tuple(ri / di for ri, di in zip(r, diag))
        rz_new = dot(r, z)
        beta = np.where(running, rz_new / np.where(rz > 0, rz, 1.0), 0.0)
        p = axpy(beta, p, z)
        rz = rz_new
    return x


def _ridge(X, T, alpha):
    """Ridge regression of the targets T (n x m) on X with an unpenalized intercept.

    Minimizes ``||X B^T + 1 b0^T - T||^2 + alpha ||B||^2`` exactly, through the smaller of the
    centred Gram matrices (d x d primal or n x n dual); returns ``[B, b0]`` (m x (d + 1)).
    """
    n, d = X.shape
    mu = np.asarray(X.mean(axis=0)).ravel()
    t_mean = T.mean(axis=0)
    Tc = T - t_mean
    if min(n, d) > _RIDGE_MAX_GRAM:  # too large for a dense factorization: iterative solver
        from sklearn.linear_model import Ridge

        model = Ridge(alpha=alpha, solver="sparse_cg" if sp.issparse(X) else "auto").fit(X, T)
        return np.hstack([np.asarray(model.coef_).reshape(T.shape[1], d),
                          np.asarray(model.intercept_).reshape(-1, 1)])
    # A dense X is centred before any product (the intercept is free, so the problem is
    # the same): features with a large common offset keep their digits. A sparse X stays
    # sparse, and is centred inside the Gram matrices.
    Xc, mu_c = (X, mu) if sp.issparse(X) else (X - mu, np.zeros(d))
    if d <= n:
        gram = Xc.T @ Xc
        gram = gram.toarray() if sp.issparse(gram) else np.asarray(gram)
        gram = gram - n * np.outer(mu_c, mu_c) + alpha * np.eye(d)
        B = cho_solve(cho_factor_psd(gram), np.asarray(Xc.T @ Tc)).T  # X_c^T T_c = X^T T_c
    else:
        Xmu = np.asarray(Xc @ mu_c).ravel()
        gram = Xc @ Xc.T
        gram = gram.toarray() if sp.issparse(gram) else np.asarray(gram)
        gram = gram - Xmu[:, None] - Xmu[None, :] + mu_c @ mu_c + alpha * np.eye(n)
        A = cho_solve(cho_factor_psd(gram), Tc)
        B = (np.asarray(Xc.T @ A) - np.outer(mu_c, A.sum(axis=0))).T
    return np.hstack([B, (t_mean - B @ mu)[:, None]])
