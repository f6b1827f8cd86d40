"""One pymanopt `Problem` per block of Algorithm 1, and the optimizers that solve them.

U, V and W live on Euclidean manifolds; the g label-Laplacian factors Z_m live together on
`UnitRows(g, l, k)` (their problems are independent given U, V, W, so one joint problem is the
same update as g separate ones, at a g-th of the overhead). Costs, gradients and Hessians come
from `glocal.objective`; this module wires them to pymanopt, adds preconditioners, and solves
a quadratic block as its linear system where that needs fewer Hessian products
(`solve_linear_system`).
"""

from dataclasses import dataclass

import numpy as np
import pymanopt
import scipy.linalg
from pymanopt.optimizers import ConjugateGradient, SteepestDescent, TrustRegions
from pymanopt.optimizers.line_search import BackTrackingLineSearcher

from . import objective as obj
from ._linalg import cho_factor_psd
from .manifolds import RealEuclidean, UnitRows

OPTIMIZERS = ("trust_regions", "conjugate_gradient", "steepest_descent")


def run_optimizer(name, problem, start, max_iterations, min_gradient_norm, max_inner):
    """Run a silent pymanopt optimizer, chosen by name, from ``start``.

    ``steepest_descent`` uses Armijo backtracking, as the paper's Manopt setting does;
    ``trust_regions`` caps its inner conjugate-gradient loop at ``max_inner`` steps.
    """
    common = dict(max_iterations=max_iterations, min_gradient_norm=min_gradient_norm,
                  verbosity=0, log_verbosity=0)
    if name == "trust_regions":
        # Once the gradient vanishes to rounding level, pymanopt's truncated CG can divide
        # 0 by 0; the resulting NaN step fails the trust-region test and is rejected.
        with np.errstate(invalid="ignore", divide="ignore"):
            # mininner=0: an exact preconditioner (the W block of the basic model) solves the
            # Newton system in one inner step; pymanopt's default 1 forces a second one.
            return TrustRegions(miniter=1, **common).run(problem, initial_point=start,
                                                         mininner=0, maxinner=max_inner)
    if name == "conjugate_gradient":
        optimizer = ConjugateGradient(**common)
    elif name == "steepest_descent":
        optimizer = SteepestDescent(line_searcher=BackTrackingLineSearcher(), **common)
    else:
        raise ValueError(f"unknown optimizer {name!r}; expected one of {OPTIMIZERS}")
    return optimizer.run(problem, initial_point=start)


class _LastPoint:
    """A function of the point, evaluated once for the last point it was called at.

    pymanopt calls the cost, the gradient and every Hessian-vector product of one
    trust-region iteration at the same point (the same array object).
    """

    def __init__(self, function):
        self._function = function
        self._point = None
        self._value = None

    def __call__(self, point):
        if point is not self._point:
            self._value = self._function(point)
            self._point = point
        return self._value


class _CostAndGradient(_LastPoint):
    """Cost and gradient from one evaluation, cached for the last point: both share the
    residual, so evaluating them together halves the work."""

    def cost(self, point):
        return self(point)[0]

    def gradient(self, point):
        return self(point)[1]


def _problem(manifold, cost_grad, hessp, preconditioner=None, euclidean=True,
             hessp_at_point=False):
    """``hessp(direction)``, or ``hessp(point, direction)`` with ``hessp_at_point`` (a block
    that is not quadratic, e.g. under a loss other than the paper's)."""
    evaluate = _CostAndGradient(cost_grad)
    decorate = pymanopt.function.numpy(manifold)
    hessian = decorate(hessp if hessp_at_point
                       else lambda point, direction: hessp(direction))
    # On a Euclidean manifold the Euclidean Hessian is the Riemannian one; passing it as such
    # spares pymanopt a gradient evaluation per Hessian-vector product.
    hessian_kind = "riemannian_hessian" if euclidean else "euclidean_hessian"
    kwargs = {hessian_kind: hessian}
    if preconditioner is not None:
        kwargs["preconditioner"] = preconditioner
    problem = pymanopt.Problem(manifold, decorate(evaluate.cost),
                               euclidean_gradient=decorate(evaluate.gradient), **kwargs)
    problem.cost_and_gradient = evaluate
    return problem


def u_problem(V, Z, B, data, U=None, term=None):
    """Eq. (7): U with V, W, Z fixed (B from `objective.label_side_weights`, or None).

    ``term`` is `objective.u_label_term` of V when the caller has it (V is then not read):
    for the paper's loss the block's sufficient statistics (`objective.u_statistics`),
    for another one the loss at F = U V. Preconditioned by the inverse of the block's
    per-row Hessians without the manifold terms at ``U``, the start (`u_row_hessians`):
    for the paper's loss the exact inverse Hessian of the basic model (one k x k block per
    row, or one for all rows when every label is observed), for another one that of its
    quadratic model at the start.
    """
    if term is None:
        term = obj.u_label_term(V, data)
    inverse = np.linalg.inv(obj.u_row_hessians(term, data, U)) / 2.0

    def preconditioner(point, vector):
        return obj.apply_row_blocks(inverse, vector)

    return _problem(RealEuclidean(*term.shape),
                    lambda point: obj.u_cost_grad(point, term, Z, B, data),
                    lambda point, D: obj.u_hessp(D, term, Z, B, data, point), preconditioner,
                    hessp_at_point=True)


def v_problem(U, P, data, V=None, max_block_entries=2**24):
    """Eq. (6): V with U, W fixed, as one pymanopt problem (``v_closed_form=False``; the
    alternative to the column-by-column solve of `objective.v_solution`).

    Preconditioned, under the paper's loss, by the inverse of the per-column Hessian blocks
    (`objective.v_column_hessians`; exact, the block being quadratic) or, when the n blocks
    of k x k would exceed ``max_block_entries`` numbers, of their diagonal. Under another
    loss the blocks change with the active entries as V moves; the inverse of their mean
    (`objective.v_mean_column_hessian`) at ``V``, the start, is applied instead. Measured on
    the squared hinge (the Performance study in the documentation): far fewer trust-region
    iterations in a fit's early visits, where the time goes (delicious: 12 instead of 100,
    capped); late in a fit the diagonal can need fewer Hessian products (bibtex).
    """
    k, n = U.shape[1], data.n_samples
    if V is None:
        V = np.zeros((k, n))
    # Cost, gradient and Hessian products at a point share one U V and loss evaluation; the
    # preconditioner reads the start's.
    terms = _LastPoint(lambda point: data.label.terms(U, point, data))
    if not data.label.quadratic:
        # One k x k inverse: a product with it is 4x faster than two triangular solves
        # (k = 100, n = 9663) and the matrix is well conditioned (lam + lam_v > 0).
        inverse = np.linalg.inv(2.0 * obj.v_mean_column_hessian(U, terms(V)[2], data))

        def preconditioner(point, vector):
            return inverse @ vector
    elif n * k * k <= max_block_entries:
        inverse_blocks = np.linalg.inv(obj.v_column_hessians(U, V, data)) / 2.0

        def preconditioner(point, vector):
            return np.einsum("iab,bi->ai", inverse_blocks, vector)
    else:
        diagonal = 2.0 * ((U ** 2).T @ data.label.curvature(U, V, data) + data.lam
                          + data.v_weight)

        def preconditioner(point, vector):
            return vector / diagonal

    return _problem(RealEuclidean(k, n),
                    lambda point: obj.v_cost_grad(point, U, P, data, terms(point)),
                    lambda point, D: obj.v_hessp(D, U, data, point, terms(point)[2]),
                    preconditioner, hessp_at_point=True)


def w_problem(V, H, data, w_preconditioner, statistics=None):
    """Eq. (8): W with U, V, Z fixed (H from `objective.feature_side_weights`, or None).

    ``w_preconditioner`` is the fit's `WPreconditioner`; ``statistics`` is
    `objective.w_statistics` of V when the caller has them (V is then not read).

    The block's cost is the quadratic (1/2) <W, A W> - <b, W> + const, A the Hessian and
    b = 2 lam X^T V^T. When the manifold terms are large next to lam, the preconditioner is
    the weights' own (`WPreconditioner.for_weights`: one Kronecker factor for all groups,
    exact only where the groups' weights agree), and the problem carries that linear system
    as ``linear_system`` (A's product, b, the preconditioner) for `solve_linear_system`;
    else it is None.
    """
    XtV, V_sq_norm = obj.w_statistics(V, data) if statistics is None else statistics
    d, k = XtV.shape
    Ht = obj.moment_weights(H, data, k)
    preconditioner = w_preconditioner.for_weights(Ht)

    def hessp(D):
        return obj.w_hessp(D, Ht, data)
    problem = _problem(RealEuclidean(d, k),
                       lambda W: obj.w_cost_grad(W, XtV, V_sq_norm, Ht, data), hessp,
                       preconditioner)
    problem.linear_system = (None if preconditioner is w_preconditioner else
                             (hessp, 2.0 * data.lam * XtV, preconditioner))
    return problem


def z_problem(U, B, shape, preconditioned=False):
    """Eq. (5) for all groups at once, on unit-norm rows.

    With ``preconditioned``, the optimizers' steps are preconditioned by the inverse of each
    group's Euclidean Hessian 2 U B_m U^T shifted by 1e-3 of its largest eigenvalue (the
    Hessian has rank at most k, below l when there are more labels than latent
    dimensions), projected on the tangent space: symmetric positive definite there. With
    strong manifold terms that Hessian is steep along U and flat across it, and conjugate
    gradients stall; measured on Enron with lam3 = 1e3: 2.0 s and 12 outer iterations
    instead of 7.9 s and 26, at a lower objective.
    """
    manifold = UnitRows(*shape)
    preconditioner = _z_preconditioner(manifold, U, B) if preconditioned else None
    return _problem(manifold, lambda Z: obj.z_cost_grad(Z, U, B),
                    lambda D: obj.z_hessp(D, U, B), preconditioner, euclidean=False)


def _z_preconditioner(manifold, U, B):
    """The inverse shifted Euclidean Hessians of `z_problem`, projected on the tangent space.

    The Hessian of group m is 2 K_m K_m^T with K_m = U B_m^1/2 (l x k), so its shifted
    inverse comes from k x k matrices (Woodbury): (K K^T + s I)^-1 = (I - K (s I +
    K^T K)^-1 K^T) / s, and K K^T's largest eigenvalue is K^T K's; no l x l matrix is
    formed.
    """
    values, vectors = np.linalg.eigh(B)  # g x k x k, positive semidefinite
    K = U @ (vectors * np.sqrt(np.maximum(values, 0.0))[:, None, :])  # g x l x k
    gram = np.swapaxes(K, 1, 2) @ K
    top = np.linalg.eigvalsh(gram)[:, -1]
    shift = np.where(top > 0, 1e-3 * top, 1.0)[:, None, None]
    inner = np.linalg.inv(gram + shift * np.eye(gram.shape[-1]))

    def preconditioner(point, vector):
        solved = (vector - K @ (inner @ (np.swapaxes(K, 1, 2) @ vector))) / (2.0 * shift)
        return manifold.projection(point, solved)
    return preconditioner


@dataclass
class LinearSolveResult:
    """What `solve_linear_system` returns: the fields of a pymanopt result that the solver
    reads."""

    point: np.ndarray
    cost: float
    iterations: int


def solve_linear_system(problem, start, max_iterations, min_gradient_norm):
    """Preconditioned conjugate gradients on a quadratic block's ``linear_system``, from
    ``start``, until the gradient A W - b is below ``min_gradient_norm`` in norm.

    Every step lowers the block's cost (A is positive definite). Trust regions solve the same
    system by truncated CG restarted at every outer iteration (``max_inner`` steps, bounded
    by the trust radius); one unbroken CG run needs fewer products with A. Measured on Enron
    with lam4 = 1e3: 3.6 times less time over the first three outer iterations.
    """
    hessp, rhs, preconditioner = problem.linear_system
    point = start.copy()
    residual = rhs - hessp(point)  # minus the gradient (of the cost without its factor)
    direction = preconditioner(point, residual)
    product = np.vdot(residual, direction)
    iterations = 0
    # product <= 0 only once the residual is zero to rounding.
    while (np.linalg.norm(residual) > min_gradient_norm and iterations < max_iterations
           and product > 0):
        image = hessp(direction)
        step = product / np.vdot(direction, image)
        point += step * direction
        residual -= step * image
        preconditioned = preconditioner(point, residual)
        product, previous = np.vdot(residual, preconditioned), product
        direction = preconditioned + (product / previous) * direction
        iterations += 1
    return LinearSolveResult(point, problem.cost_and_gradient(point)[0], iterations)


class WPreconditioner:
    """Approximate inverse Hessians of the W block, built once per fit.

    The Hessian of Eq. (8) is 2 (sum_m C_m D Ht_m + lam2 D) with C_m = X_m^T X_m and
    Ht_m = lam I + H_m. Replacing every C_m D Ht_m by (n_m / n) C D Hbar, with
    Hbar = sum_m (n_m / n) Ht_m, is exact when the groups' H_m agree and leaves an operator
    C (x) Hbar + lam2 I that two eigendecompositions invert. Without the manifold terms
    (Hbar = lam I) a Cholesky factor of lam C + lam2 I inverts it exactly and cheaply.

    With more than ``max_dense_features`` features but at most that many samples, in
    memory, the basic model's inverse is applied through the Woodbury identity
    (lam C + lam2 I)^-1 = (I - lam X^T (lam X X^T + lam2 I)^-1 X) / lam2, from a Cholesky
    factor of the n x n matrix (no d x d matrix); it then also stands in for the blocks with
    manifold terms. With both above the limit, or through a backend that keeps no X^T X,
    C is replaced by its diagonal.

    Calling the object applies the basic model's inverse; `for_weights` gives the one for a
    block with manifold terms.
    """

    def __init__(self, data, max_dense_features=4000):
        X = data.X
        n, d = X.shape
        self._X = X
        self._lam, self._lam2 = data.lam, data.lam2
        self._fractions = data.group_fractions
        in_memory = data.samples is None
        # Through a backend, X^T X is at hand when the data kept it (`with_feature_grams`).
        self._dense = d <= max_dense_features and (in_memory or data.gram is not None)
        self._dual = None
        if self._dense:
            self._gram = data.gram if data.gram is not None else obj._dense(X.T @ X)
            self._factor = cho_factor_psd(self._lam * self._gram + self._lam2 * np.eye(d))
            self._eigen = None  # eigendecomposition of C, made when first needed
        elif n <= max_dense_features and in_memory:
            self._dual = cho_factor_psd(self._lam * obj._dense(X @ X.T)
                                        + self._lam2 * np.eye(n))
        else:
            self._eigen = (obj.feature_squares(data), None)

    def __call__(self, point, vector):
        if self._dense:
            return scipy.linalg.cho_solve(self._factor, vector, check_finite=False) / 2.0
        if self._dual is not None:
            inner = scipy.linalg.cho_solve(self._dual, np.asarray(self._X @ vector),
                                           check_finite=False)
            out = np.asarray(self._X.T @ inner)  # a new d x k array: updated in place
            out *= -self._lam / (2.0 * self._lam2)
            out += vector / (2.0 * self._lam2)
            return out
        return vector / (2.0 * (self._lam * self._eigen[0][:, None] + self._lam2))

    def for_weights(self, Ht):
        """The preconditioner of a W block with weights Ht (from `objective.moment_weights`)."""
        if Ht is None or self._dual is not None:
            return self
        Hbar = np.tensordot(self._fractions, Ht, axes=1)
        gamma, R = np.linalg.eigh(Hbar)
        # Manifold terms small next to lam: the basic model's factor is nearly exact.
        if self._dense and np.max(np.abs(gamma - self._lam)) <= 0.1 * self._lam:
            return self
        if self._eigen is None:
            self._eigen = np.linalg.eigh(self._gram)
        spectrum, Q = self._eigen
        scale = 2.0 * (np.maximum(spectrum, 0.0)[:, None] * gamma[None, :] + self._lam2)

        def preconditioner(point, vector):
            rotated = vector @ R if Q is None else Q.T @ vector @ R
            solved = (rotated / scale) @ R.T
            return solved if Q is None else Q @ solved
        return preconditioner
