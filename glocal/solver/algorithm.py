"""The GLOCAL solver: basic-model initialisation (Eq. (1)), then Algorithm 1 on Eq. (4).

`glocal_fit` is Algorithm 1 read line by line; it takes and returns plain arrays and knows
nothing of scikit-learn. Every choice of a fit (the V algorithm, V on samples or on second
moments, the optimizers and preconditioners) is made once, before the loops, by
`glocal.solver.plan.resolve_plan`; the loops call what the plan holds. Every block update never
increases the objective: a block whose optimizer ends above its starting cost keeps its
starting point. Equation numbers are the paper's (Zhu, Kwok & Zhou, TKDE 2018); the block
map is in `glocal.solver.objective`.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from .plan import Levers, resolve_plan
from .steps import converged as _converged
from .steps import initialise

__all__ = ["SolverOptions", "GlocalResult", "glocal_fit"]


@dataclass
class SolverOptions:
    """How the blocks are solved (none of this changes the objective).

    Attributes
    ----------
    optimizer : str or dict
        pymanopt optimizer ("trust_regions", "conjugate_gradient" or "steepest_descent") of
        every block, or a dict from block name ("U", "V", "W", "Z") to optimizer; a block not
        named takes the ``"auto"`` choice, the fastest measured
        (`glocal.solver.plan.resolve_block_solvers`). ``"steepest_descent"`` with
        ``v_closed_form=False`` mirrors the paper's Manopt.
    v_closed_form : bool
        Solve the V block exactly, column by column: by the paper's closed form, or under
        another loss by Newton's method on every column; else by one pymanopt problem on the
        whole V, stopped like the other blocks.
    block_max_iter : int
        Iteration cap of each block optimizer per visit: bounds the work of one visit.
    max_inner : int
        Cap on the inner (truncated conjugate-gradient) steps of one trust-region
        iteration.
    block_rtol : float
        A block optimizer stops when its gradient norm falls below this fraction of the
        gradient norm at its starting point: loose block solves are enough early on, when
        the other blocks still move.
    """

    optimizer: object = "auto"
    v_closed_form: bool = True
    block_max_iter: int = 100
    max_inner: int = 50
    block_rtol: float = 1e-4


@dataclass
class GlocalResult:
    """What `glocal_fit` returns: the point, the objective history, counts and timings.

    ``Z`` is the correlation term's state (the Z_m of the paper's term, the directed
    weights A_m of the asymmetric one).
    ``init_converged`` and ``converged`` say whether the basic-model initialisation and the
    main loop met ``tol`` before their iteration caps.
    """

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
    init_converged: bool = True
    converged: bool = True


def glocal_fit(data, n_latent, *, max_iter=30, init_max_iter=30, tol=1e-4, options=None,
               levers=None, correlation="laplacian", random_state=None, callback=None,
               initial_point=None):
    """Fit GLOCAL: basic-model initialisation by Eq. (1), then Algorithm 1 on Eq. (4).

    Parameters
    ----------
    data : objective.GlocalData
        Features, signed labels with their mask, groups and weights.
    n_latent : int
        k, the dimension of the latent labels (and of the rows of Z_m).
    max_iter : int
        Maximum number of outer iterations of Algorithm 1.
    init_max_iter : int
        Maximum number of rounds of the basic-model initialisation.
    tol : float
        Algorithm 1 stops when an outer iteration lowers Eq. (4) by at most ``tol`` times
        its value; the basic-model initialisation when its last rounds' decreases, and what
        their geometric decay leaves to come (`glocal.solver.steps.tail_converged`), are that
        small.
    options : SolverOptions, optional
    levers : glocal.solver.plan.Levers, optional
        Switches that only benchmarks flip.
    correlation : glocal.solver.correlations.CorrelationTerm or str, default="laplacian"
        The correlation term, or the name of one weighted by ``data.lam3`` and
        ``data.lam4`` (`glocal.solver.correlations.CORRELATION_TERMS`): ``"laplacian"``, the
        paper's global and local Laplacians; ``"centered"``, the same on the scores' deviations
        from their means (`glocal.solver.correlations.centered`); ``"asymmetric"``, directed
        implications between labels (`glocal.solver.correlations.implications`).
    random_state : numpy.random.Generator or int or None
    callback : callable, optional
        Called as ``callback(stage, iteration, value)`` after every round; ``stage`` is
        ``"init"`` or ``"main"``.
    initial_point : tuple (U, V, W, Z) of ndarray, optional
        Start from this point instead of the basic model's own start (e.g. a solution at
        nearby weights: a regularization path). V may be None: it is then W^T X; Z is
        checked by the correlation term (the paper's: its rows are normalized), or None
        for the term's own start. The
        basic-model initialisation still runs ``init_max_iter`` rounds from it (pass 0 to
        go straight to Algorithm 1).

    Returns
    -------
    GlocalResult
        ``objective_history`` holds Eq. (4) after the basic-model initialisation (with the
        initial Z) and after every outer iteration; it never increases. ``init_history`` holds
        Eq. (1) at the initial point and after every initialisation round, and
        ``block_history`` Eq. (4) after each block (Z, V, U, W) of every outer
        iteration, from the blocks' own cost decreases.
    """
    rng = np.random.default_rng(random_state)
    times = {}

    tic = time.perf_counter()
    plan = resolve_plan(data, n_latent, options or SolverOptions(), levers or Levers(),
                        correlation)
    data, term, space = plan.data, plan.correlation, plan.space
    if initial_point is None:
        Z = term.start(data.n_groups, data.Y.shape[0], n_latent, rng)
        U, V, W = plan.start(plan, n_latent, rng)
    else:
        U, V, W, Z = _check_initial_point(initial_point, data, term, n_latent, rng)
        V = space.start_from_scores(W) if V is None else space.start(V)
    U, V, W, basic, n_init_iter, init_converged = initialise(plan, U, V, W, init_max_iter,
                                                             tol, callback)
    times["init"] = time.perf_counter() - tic

    tic = time.perf_counter()
    history = [plan.objective(U, V, W, Z)]
    block_history = []  # the objective after the Z, V, U and W updates of every iteration
    n_iter = 0
    converged = max_iter == 0
    for n_iter in range(1, max_iter + 1):
        decreases = []
        # Algorithm 1, lines 3-5: the correlation term's blocks, every Z_m.
        side = term.label_side(W, space)
        Z, drop = term.update(U, Z, side, plan.solvers.solve)
        decreases.append(drop)
        # Line 6: V (the correlation terms do not involve V).
        V, drop = plan.v_step(plan, U, W, V, True)
        decreases.append(drop)
        # Line 7: U.
        U, drop = plan.u_step(plan, V, U, (term.u_side(Z, side),))
        decreases.append(drop)
        # Line 8: W, then the rescaling step (counted with the W block in block_history).
        W, drop = plan.w_step(plan, V, W, term.w_side(U, Z, side))
        U, V, W, rescaling_drop = plan.rescale(U, V, W)
        decreases.append(drop + rescaling_drop)
        block_history.append(history[-1] - np.cumsum(decreases))
        history.append(plan.objective(U, V, W, Z))
        if callback is not None:
            callback("main", n_iter, history[-1])
        if _converged(history, tol):
            converged = True
            break
    V = space.array(V)
    times["main"] = time.perf_counter() - tic
    return GlocalResult(U, V, W, Z, history, n_iter, n_init_iter, basic, block_history, times,
                        init_converged, converged)


def _check_initial_point(point, data, term, n_latent, rng):
    """Copies of a given (U, V, W) with their shapes checked (V may be None: W^T X), and the
    correlation term's check of Z (None: the term's own start)."""
    (l, n), d = data.Y.shape, data.X.shape[1]
    U, V, W, Z = point
    shapes = {"U": (l, n_latent), "V": (n_latent, n), "W": (d, n_latent)}
    arrays = [None if a is None else np.array(a, dtype=float) for a in (U, V, W)]
    for (name, shape), array in zip(shapes.items(), arrays):
        if array is not None and array.shape != shape:
            raise ValueError(f"initial_point: {name} has shape {array.shape}, expected {shape}")
    Z = (term.start(data.n_groups, l, n_latent, rng) if Z is None
         else term.checked(Z, data.n_groups, l, n_latent))
    return (*arrays, Z)
