"""The optimizers of the blocks: pymanopt's by name, conjugate gradients on a linear system,
Anderson mixing, the rescaling step; and `BlockSolver`, how one block is solved, bound once per
fit by `glocal.solver.plan.resolve_block_solvers`. Newton's method on the V and U blocks under the
opt-in losses is `glocal.solver.newton`.
"""

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from pymanopt.optimizers import ConjugateGradient, SteepestDescent, TrustRegions
from pymanopt.optimizers.line_search import BackTrackingLineSearcher

from .._utils.linalg import conjugate_gradients
from .problems import block_problem

OPTIMIZERS = ("trust_regions", "conjugate_gradient", "steepest_descent")


def run_optimizer(name, problem, start, max_iterations, min_gradient_norm, max_inner,
                  radius=None):
    """Run a silent pymanopt optimizer, chosen by name, from ``start``.

    ``steepest_descent`` uses Armijo backtracking, as the paper's Manopt setting does;
    ``trust_regions`` caps its inner conjugate-gradient loop at ``max_inner`` steps and starts
    from the trust radius ``radius`` (None: pymanopt's, an eighth of the manifold's typical
    distance), which may grow to 8 times it.
    """
    common = dict(max_iterations=max_iterations, min_gradient_norm=min_gradient_norm,
                  verbosity=0, log_verbosity=0)
    if name == "trust_regions":
        # Once the gradient vanishes to rounding level, pymanopt's truncated CG can divide
        # 0 by 0; the resulting NaN step fails the trust-region test and is rejected.
        with np.errstate(invalid="ignore", divide="ignore"):
            # mininner=0: an exact preconditioner (the W block of the basic model) solves the
            # Newton system in one inner step; pymanopt's default 1 forces a second one.
            radii = {} if radius is None else {"Delta0": radius, "Delta_bar": 8 * radius}
            return TrustRegions(miniter=1, **common).run(problem, initial_point=start,
                                                         mininner=0, maxinner=max_inner, **radii)
    if name == "conjugate_gradient":
        optimizer = ConjugateGradient(**common)
    elif name == "steepest_descent":
        optimizer = SteepestDescent(line_searcher=BackTrackingLineSearcher(), **common)
    else:
        raise ValueError(f"unknown optimizer {name!r}; expected one of {OPTIMIZERS}")
    return optimizer.run(problem, initial_point=start)


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
    by the trust radius); one unbroken CG run needs fewer products with A.
    """
    hessp, rhs, preconditioner = problem.linear_system
    # The W block's preconditioners do not depend on the point (a fixed Kronecker factor).
    point, iterations = conjugate_gradients(
        hessp, lambda residual: preconditioner(start, residual), rhs, start, min_gradient_norm,
        max_iterations)
    return LinearSolveResult(point, problem.cost_and_gradient(point)[0], iterations)


class BlockSolver:
    """How one block is solved: ``solver(problem, start)`` returns the new point and the
    decrease of the block's cost, which is the objective's (a block's cost differs from the
    objective by a constant). A start stationary to rounding is kept without a run, and so
    is the start when the optimizer ends above it. The problem is freed on return: a
    pymanopt Problem refers to itself (its Riemannian gradient is a closure over the
    problem), so a finished one, with the block statistics its functions hold, would wait
    for the cyclic garbage collector.

    Parameters
    ----------
    name : str
        The pymanopt optimizer (`OPTIMIZERS`).
    max_iterations, rtol, max_inner : int, float, int
        Iteration cap; stop when the gradient norm is below ``rtol`` times the start's;
        cap of the inner steps of one trust-region iteration.
    """

    def __init__(self, name, max_iterations, rtol, max_inner):
        if name not in OPTIMIZERS:
            raise ValueError(f"unknown optimizer {name!r}; expected one of {OPTIMIZERS}")
        self.name = name
        self.max_iterations, self.rtol, self.max_inner = max_iterations, rtol, max_inner

    def __call__(self, problem, start):
        try:
            return self.solve(problem, start)
        finally:
            vars(problem).clear()

    def solve(self, problem, start):
        """The new point and the decrease of the block's cost, the problem kept."""
        start_cost, start_grad = problem.cost_and_gradient(start)
        start_norm = problem.manifold.norm(start, problem.manifold.projection(start, start_grad))
        # Stationary up to rounding (e.g. the Z cost is constant on the sphere with one label).
        if start_norm <= 1e-10 * np.linalg.norm(start_grad):
            return start, 0.0
        result = self._solve(problem, start, start_cost, start_norm)
        if result is None or result.cost > start_cost:
            return start, 0.0
        return result.point, start_cost - result.cost

    def _solve(self, problem, start, start_cost, start_norm):
        return self._run(self.name, problem, start, start_norm)

    def _run(self, name, problem, start, start_norm):
        """One optimizer run; None when pymanopt's CG divides by a vanishing gradient."""
        try:
            return run_optimizer(name, problem, start, self.max_iterations,
                                 self.rtol * start_norm, self.max_inner,
                                 self._radius(problem, start))
        except ZeroDivisionError:
            return None

    def _radius(self, problem, start):
        """The first trust radius (None: pymanopt's)."""
        return None


class TruncatedNewtonSolver(BlockSolver):
    """Truncated Newton on a Euclidean block: a few trust-region iterations of a few inner
    steps per visit, the first trust radius as long as the start point (at least pymanopt's).
    pymanopt's radius, an eighth of the square root of the dimension, ignores the block's
    scale: where the block must move far (U on unit-norm rows of X, whose V is small), two
    iterations from it crawled, and the rounds' stopping rule took the crawl for convergence
    (10 % above the objective of exact Newton visits on rcv1subset1)."""

    def _radius(self, problem, start):
        return max(np.sqrt(problem.manifold.dim) / 8, np.linalg.norm(start))


class FallbackSolver(BlockSolver):
    """The automatic choice on a manifold block: ``name`` (conjugate gradients), then trust
    regions where it did not lower the cost. pymanopt's conjugate gradients give up when 10
    halvings of the first trial step (of unit length) do not decrease the cost: near a Z
    whose gradient is small next to its curvature (large lam3, lam4) they leave it
    unchanged, visit after visit; trust regions scale their steps by the Hessian."""

    def _solve(self, problem, start, start_cost, start_norm):
        result = self._run(self.name, problem, start, start_norm)
        if result is None or result.cost >= start_cost:
            result = self._run("trust_regions", problem, start, start_norm)
        return result


class LinearSystemSolver(BlockSolver):
    """The automatic choice on the W block: a block that carries its linear system (the
    preconditioner is the correlation weights' own, `glocal.solver.problems.w_problem`) is solved
    by preconditioned conjugate gradients for at most ``max_iterations * max_inner`` Hessian
    products (`solve_linear_system`); else by trust regions."""

    def _solve(self, problem, start, start_cost, start_norm):
        if problem.linear_system is None:
            return self._run(self.name, problem, start, start_norm)
        return solve_linear_system(problem, start, self.max_iterations * self.max_inner,
                                   self.rtol * start_norm)


class BlockSolvers(dict):
    """Block name -> `BlockSolver`; ``solve`` is the ``solve`` a correlation term's
    ``update`` gets (`glocal.solver.correlations.CorrelationTerm`)."""

    def solve(self, name, block, start):
        """Minimize a `glocal.solver.correlations.Block` from ``start`` with ``name``'s solver."""
        return self[name](block_problem(block), start)


# --- Anderson mixing ----------------------------------------------------------------------

class Anderson:
    """Anderson mixing (type II) of a fixed-point map x -> G(x), with ``memory`` past steps.

    `step(x, g)` takes the current iterate and its image and returns the mixed point
    g - dG gamma, gamma minimizing ||f - dF gamma|| over the recorded differences of the
    residuals f = g - x (None until one difference is recorded). The least-squares problem
    is solved through its memory x memory normal equations: x may be long (d k entries).
    """

    def __init__(self, memory):
        self.memory = memory
        self.restart()

    def restart(self):
        self._last = None
        self._residual_steps, self._image_steps = [], []

    def step(self, x, g):
        f = g - x
        if self._last is not None:
            self._residual_steps.append(f - self._last[0])
            self._image_steps.append(g - self._last[1])
            del self._residual_steps[:-self.memory], self._image_steps[:-self.memory]
        self._last = (f, g)
        if not self._residual_steps:
            return None
        gram = np.array([[a @ b for b in self._residual_steps] for a in self._residual_steps])
        rhs = np.array([a @ f for a in self._residual_steps])
        trace = np.trace(gram)
        if not trace > 0:  # the residual stopped changing (a fixed point): nothing to mix
            return None
        # A tiny ridge keeps nearly parallel steps from blowing gamma up.
        gram += 1e-10 * trace * np.eye(len(rhs))
        try:
            gamma = scipy.linalg.solve(gram, rhs, assume_a="pos")
        except np.linalg.LinAlgError:  # steps parallel to rounding: extrapolation is noise
            return None
        mixed = g.copy()
        for coefficient, image_step in zip(gamma, self._image_steps):
            mixed -= coefficient * image_step
        return mixed


# --- The rescaling step: U, V and W along the directions that leave U V and U W^T X fixed --

def rebalance(U, V, W, data, P):
    """The point (U A, A^-1 V, W A^-T) of lowest objective over invertible k x k A, its
    P = X W A^-T, and the decrease of the objective from (U, V, W) to it.

    U V and U W^T X, hence the label fit and the correlation terms, do not depend on A; the
    rest is tr(A^T S A) + tr(A^-1 M A^-T), S = lam2 U^T U,
    M = lam2 W^T W + lam R R^T + lam_v V V^T with R = V - W^T X. With Q = A A^T that is
    tr(S Q) + tr(M Q^-1), convex in Q, least where Q S Q = M: the geometric mean
    Q = S^-1/2 (S^1/2 M S^1/2)^1/2 S^-1/2, and A = Q^1/2. Block descent on U, V and W moves
    along these rescalings only slowly (with lam_v = 0 nothing but the coupling to W^T X
    holds the scale of V); one k x k step takes the whole way. The point is returned
    unchanged (decrease 0.0) where S or Q is singular to working precision or rounding
    would make the step an increase. ``P`` is X W; the new one is P A^-T (no pass over X).
    """
    def moments(part, V, P):
        R = V - P.T
        return R @ R.T, V @ V.T
    RRt, VVt = data.samples.sum(moments, data, V, P, reads="")
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
    V = data.samples.map(lambda part, V: A_inv @ V, data, V, sample_axis=1, width=k, reads="")
    P = data.samples.map(lambda part, P: P @ A_inv, data, P, sample_axis=0, width=k, reads="")
    return U @ A, V, W @ A_inv, P, float(decrease)


def _symmetric_roots(S):
    """S^1/2 and S^-1/2 of a symmetric positive semidefinite S; (None, None) when S is
    singular to working precision."""
    values, vectors = np.linalg.eigh(S)
    if not values[0] > 1e-12 * values[-1]:
        return None, None
    root = np.sqrt(values)
    return (vectors * root) @ vectors.T, (vectors / root) @ vectors.T
