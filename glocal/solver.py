"""The GLOCAL solver: warm start by the basic model (Eq. ``eqn:init``), then Algorithm 1.

`glocal_fit` is Algorithm 1 read line by line; it takes and returns plain arrays and knows
nothing of scikit-learn. Every block update is a pymanopt problem from `glocal.problems`
(V may use the paper's closed form instead) and never increases the objective: a block whose
optimizer ends above its starting cost keeps its starting point.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from . import objective as obj
from . import problems
from .manifolds import normalize_rows


@dataclass
class SolverOptions:
    """How the blocks are solved (none of this changes the objective).

    Attributes
    ----------
    optimizer : str or dict
        pymanopt optimizer ("trust_regions", "conjugate_gradient" or "steepest_descent") of
        every block, or a dict from block name ("U", "V", "W", "Z") to optimizer; missing
        blocks take the ``"auto"`` choice, the fastest measured: preconditioned trust regions
        for the quadratic U, V and W blocks, conjugate gradients for Z. ``"steepest_descent"``
        with ``v_closed_form=False`` mirrors the paper's Manopt.
    v_closed_form : bool
        Solve the V block by the paper's column-wise closed form (exact and fast).
    block_max_iter : int
        Iteration cap of each block optimizer per visit.
    init : {"ridge", "random"}
        Starting point of the warm start (see `_initial_point`).
    max_inner : int
        Cap on the inner (truncated CG) steps of one trust-region iteration.
    block_rtol : float
        A block optimizer stops when its gradient norm falls below this fraction of the
        gradient norm at its starting point.
    max_dense_features : int
        Up to this many features the W block is preconditioned by a Cholesky factor of
        lam X^T X + lam2 I (d x d); above it, by that matrix's diagonal.
    """

    optimizer: object = "auto"
    init: str = "ridge"
    v_closed_form: bool = True
    block_max_iter: int = 100
    max_inner: int = 50
    block_rtol: float = 1e-4
    max_dense_features: int = 4000


@dataclass
class GlocalResult:
    """What `glocal_fit` returns: the point, the objective history, counts and timings."""

    U: np.ndarray
    V: np.ndarray
    W: np.ndarray
    Z: np.ndarray
    objective_history: list
    n_iter: int
    n_init_iter: int
    init_history: list = field(default_factory=list)
    block_history: list = field(default_factory=list)
    times: dict = field(default_factory=dict)


AUTO_OPTIMIZERS = {"U": "trust_regions", "V": "trust_regions", "W": "trust_regions",
                   "Z": "conjugate_gradient"}


def block_optimizer(optimizer, block):
    """The optimizer name of one block under an ``optimizer`` option (see SolverOptions)."""
    if isinstance(optimizer, dict):
        return optimizer.get(block, AUTO_OPTIMIZERS[block])
    return AUTO_OPTIMIZERS[block] if optimizer == "auto" else optimizer


def _solve_block(block, problem, start, options):
    """Run the block's optimizer from ``start``; keep ``start`` if the cost went up.

    Returns the new point and the decrease of the objective (a block's cost differs from
    the objective by a constant).
    """
    start_cost, start_grad = problem.cost_and_gradient(start)
    start_norm = problem.manifold.norm(start, problem.manifold.projection(start, start_grad))
    # Stationary up to rounding (e.g. the Z cost is constant on the sphere with one label).
    if start_norm <= 1e-10 * np.linalg.norm(start_grad):
        return start, 0.0
    try:
        result = problems.run_optimizer(block_optimizer(options.optimizer, block), problem,
                                        start, options.block_max_iter,
                                        options.block_rtol * start_norm, options.max_inner)
    except ZeroDivisionError:  # pymanopt's CG on an exactly vanishing gradient
        return start, 0.0
    if result.cost > start_cost:
        return start, 0.0
    return result.point, start_cost - result.cost


def _update_v(U, V, P, data, options, track=True):
    """The V block (Eq. ``uv``): the new V and the decrease of the objective.

    The closed form's decrease costs two extra cost evaluations: skipped (0.0 returned)
    with ``track=False``, where nobody reads it.
    """
    if not (options.v_closed_form and data.is_paper_loss):  # no closed form for other losses
        return _solve_block("V", problems.v_problem(U, P, data, V), V, options)
    new = obj.v_closed_form(U, P, data)
    if not track:
        return new, 0.0
    return new, obj.v_cost_grad(V, U, P, data)[0] - obj.v_cost_grad(new, U, P, data)[0]


def _initial_point(data, n_latent, n_groups, rng, w_preconditioner, init):
    """Starting point of the warm start; Z_m always random with unit-norm rows.

    ``"random"``, as in the authors' code: U, V uniform in [0, 1), W zero.
    ``"ridge"``: the best rank-k factorization of a ridge regression of the observed labels,
    balanced between U and V; the warm start then needs only a few rounds.
    """
    l, n = data.Y.shape
    d = data.X.shape[1]
    Z = normalize_rows(rng.standard_normal((n_groups, l, n_latent)))
    if init == "random":
        U = rng.uniform(size=(l, n_latent))
        V = rng.uniform(size=(n_latent, n))
        return U, V, np.zeros((d, n_latent)), Z
    # The preconditioner approximates the inverse of 2 (lam X^T X + lam2 I).
    W_ridge = 2.0 * data.lam * w_preconditioner(None, np.asarray(data.X.T @ data.Y.T))
    F = np.asarray(data.X @ W_ridge).T  # l x n ridge scores
    eigenvalues, vectors = np.linalg.eigh(F @ F.T)
    top = np.argsort(eigenvalues)[::-1][:n_latent]
    scale = np.maximum(eigenvalues[top], np.finfo(float).eps) ** 0.25  # sqrt of singular values
    U = np.zeros((l, n_latent))
    U[:, :top.size] = vectors[:, top] * scale
    W = np.zeros((d, n_latent))
    W[:, :top.size] = W_ridge @ vectors[:, top] / scale
    if top.size < n_latent:  # k > l: spare latent dimensions start small, not at a saddle
        U[:, top.size:] = 1e-3 * rng.standard_normal((l, n_latent - top.size))
    V = np.asarray(data.X @ W).T
    return U, V, W, Z


def _converged(history, tol):
    previous, current = history[-2], history[-1]
    return previous - current <= tol * max(abs(previous), np.finfo(float).tiny)


def glocal_fit(data, n_latent, *, max_iter=30, init_max_iter=30, tol=1e-4,
               options=None, random_state=None, callback=None):
    """Fit GLOCAL: warm start by Eq. ``eqn:init``, then Algorithm 1 on Eq. ``eqn:opt``.

    Parameters
    ----------
    data : objective.GlocalData
        Features, signed labels with their mask, groups and weights.
    n_latent : int
        k, the dimension of the latent labels (and of the rows of Z_m).
    max_iter : int
        Maximum number of outer iterations of Algorithm 1.
    init_max_iter : int
        Maximum number of U -> V -> W rounds of the warm start.
    tol : float
        Both loops stop when one round lowers their objective by less than ``tol`` times
        its value.
    options : SolverOptions, optional
    random_state : numpy.random.Generator or int or None
    callback : callable, optional
        Called as ``callback(stage, iteration, value)`` after every round; ``stage`` is
        ``"init"`` or ``"main"``.

    Returns
    -------
    GlocalResult
        ``objective_history`` holds Eq. ``eqn:opt`` after the warm start (with the initial
        Z) and after every outer iteration; it never increases. ``init_history`` holds
        Eq. ``eqn:init`` at the initial point and after every warm-start round, and
        ``block_history`` Eq. ``eqn:opt`` after each block (Z, V, U, W) of every outer
        iteration, from the blocks' own cost decreases.
    """
    options = options or SolverOptions()
    rng = np.random.default_rng(random_state)
    times = {}

    tic = time.perf_counter()
    data = obj.with_feature_grams(data)
    w_preconditioner = problems.WPreconditioner(data, options.max_dense_features)
    U, V, W, Z = _initial_point(data, n_latent, len(data.group_index), rng, w_preconditioner,
                                options.init)
    basic = [obj.basic_objective(U, V, W, data)]
    n_init_iter = 0
    for n_init_iter in range(1, init_max_iter + 1):
        U = _solve_block("U", problems.u_problem(V, Z, None, data, U), U, options)[0]
        V = _update_v(U, V, data.X @ W, data, options, track=False)[0]
        W = _solve_block("W", problems.w_problem(V, None, data, w_preconditioner), W,
                         options)[0]
        basic.append(obj.basic_objective(U, V, W, data))
        if callback is not None:
            callback("init", n_init_iter, basic[-1])
        if _converged(basic, tol):
            break
    times["init"] = time.perf_counter() - tic

    tic = time.perf_counter()
    P = data.X @ W
    history = [obj.objective(U, V, W, Z, data, P=P)]
    block_history = []  # the objective after the Z, V, U and W updates of every iteration
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        decreases = []
        # Algorithm 1, lines 3-5: every Z_m (jointly: the problems are independent).
        B = obj.label_side_weights(P, data)
        Z, drop = _solve_block("Z", problems.z_problem(U, B, Z.shape), Z, options)
        decreases.append(drop)
        # Line 6: V (the manifold terms do not involve V).
        V, drop = _update_v(U, V, P, data, options)
        decreases.append(drop)
        # Line 7: U.
        U, drop = _solve_block("U", problems.u_problem(V, Z, B, data, U), U, options)
        decreases.append(drop)
        # Line 8: W.
        H = obj.feature_side_weights(obj.laplacian_weights(U, Z), data)
        W, drop = _solve_block("W", problems.w_problem(V, H, data, w_preconditioner), W,
                               options)
        decreases.append(drop)
        block_history.append(history[-1] - np.cumsum(decreases))
        P = data.X @ W
        history.append(obj.objective(U, V, W, Z, data, P=P))
        if callback is not None:
            callback("main", n_iter, history[-1])
        if _converged(history, tol):
            break
    times["main"] = time.perf_counter() - tic
    return GlocalResult(U, V, W, Z, history, n_iter, n_init_iter, basic, block_history, times)
