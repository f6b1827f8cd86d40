"""The GLOCAL solver: basic-model initialisation (Eq. (1)), then Algorithm 1 on Eq. (4).

`glocal_fit` is Algorithm 1 read line by line; it takes and returns plain arrays and knows
nothing of scikit-learn. Every block update is a pymanopt problem from `glocal.problems`
(V may instead be solved exactly column by column: the paper's closed form, or Newton's
method under another loss) and never increases the objective: a block whose
optimizer ends above its starting cost keeps its starting point. Equation numbers are the
paper's (Zhu, Kwok & Zhou, TKDE 2018).

Block map (block -> `glocal.objective` functions -> `glocal.problems` problem -> driver):

    Z  Eq. (5)  z_cost_grad, z_hessp; B from label_side_weights
                -> z_problem (unit-norm rows, `glocal.manifolds`)   -> Algorithm 1, lines 3-5
    V  Eq. (6)  v_solution: column by column, v_closed_form (the paper's loss) or v_newton
                (another loss); or v_cost_grad, v_hessp, v_column_hessians
                -> v_problem                 -> line 6 (`v_block`; options.v_closed_form)
    U  Eq. (7)  u_cost_grad, u_hessp, u_row_hessians of a u_label_term
                -> u_problem                                         -> line 7
    W  Eq. (8)  w_cost_grad, w_hessp; H from feature_side_weights
                -> w_problem, preconditioned by WPreconditioner      -> line 8

The basic-model initialisation (`_initialise_by_basic_model`) runs the U, V and W blocks
without the manifold terms (Eq. (1)), from `_initial_point`; `objective` and
`basic_objective` give Eq. (4) and Eq. (1) for the histories.
"""

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg
import scipy.sparse.linalg

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
        for the quadratic U, V and W blocks, conjugate gradients for Z (with trust regions
        for a visit where they leave a non-stationary Z unchanged, see `_solve_block`). A W
        block with manifold terms large next to lam, preconditioned by the weights' own
        Kronecker factor (exact only where the groups' weights agree), is solved instead as
        the linear system it is, by preconditioned conjugate gradients for at most
        ``block_max_iter * max_inner`` Hessian products (`problems.solve_linear_system`).
        ``"steepest_descent"`` with ``v_closed_form=False`` mirrors the paper's Manopt.
    v_closed_form : bool
        Solve the V block exactly, column by column: by the paper's closed form, or under
        another loss by Newton's method on every column (`objective.v_newton`); else by a
        pymanopt problem on the whole V.
    block_max_iter : int
        Iteration cap of each block optimizer per visit.
    init : {"ridge", "random"}
        Starting point of the basic-model initialisation (see `_initial_point`).
    max_inner : int
        Cap on the inner (truncated CG) steps of one trust-region iteration.
    block_rtol : float
        A block optimizer stops when its gradient norm falls below this fraction of the
        gradient norm at its starting point.
    max_dense_features : int
        Up to this many features the W block is preconditioned by a Cholesky factor of
        lam X^T X + lam2 I (d x d); above it, by that matrix's diagonal.
    init_acceleration : int
        Memory of the Anderson mixing that accelerates the basic-model initialisation
        (see `_initialise_by_basic_model`);
        0 runs the plain U -> V -> W rounds.
    rebalance : bool or "auto"
        After every round of both loops, move (U, V, W) to the best of its rescalings
        (U A, A^-1 V, W A^-T) by `objective.rebalance`: the same U V and U W^T X at a lower
        objective. ``"auto"``: when V is not shrunk (lam_v = 0), where block descent drifts
        along these rescalings. Not on second moments (`_MomentBlocks`), where V is
        implicit and re-solved in closed form every round. Measured with the squared
        hinge, lam_v = 0 and lam2 = 4 on 60/40 splits at rho = 0.3 and 1, the basic-model
        initialisation took 10 and 7 rounds instead of 38 and 43 on Arts, 37 and 30
        instead of 64 and 66 on Enron, 23 and 20 instead of 49 and 47 on scene, 8-29
        instead of 19-50 on yeast, emotions, cal500, medical and genbase at rho = 0.3, for
        objectives within 0.2 %; on birds the main loop then ran longer. Forced on the
        paper's model (lam_v = lam2) it changed the rounds on Arts, Enron and rcv1subset1
        by at most 3.
    use_moments : bool
        With every label observed (the paper's loss, closed-form V, the feature second
        moments kept), run both loops on X^T X, the groups' X_m^T X_m, X^T Y^T and Y Y^T
        when the samples outnumber twice the features plus labels (`_MomentBlocks`): the
        same iterations up to rounding, none of them a pass over the samples.
    z_preconditioner : bool or "auto"
        Precondition the Z block by its shifted Euclidean Hessians (see
        `problems.z_problem`). ``"auto"``: when the manifold terms are strong,
        lam3 + lam4 >= lam (measured at lam3, lam4 = 1e3 on Enron and lam4 = 1e4 on scene:
        fewer outer iterations or lower objectives); weaker weights, the defaults among
        them, keep plain conjugate gradients.
    """

    optimizer: object = "auto"
    init: str = "ridge"
    v_closed_form: bool = True
    block_max_iter: int = 100
    max_inner: int = 50
    block_rtol: float = 1e-4
    max_dense_features: int = 4000
    init_acceleration: int = 5
    rebalance: object = "auto"
    use_moments: bool = True
    z_preconditioner: object = "auto"


@dataclass
class GlocalResult:
    """What `glocal_fit` returns: the point, the objective history, counts and timings.

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
    name = block_optimizer(options.optimizer, block)
    if _is_automatic(options.optimizer, block) and getattr(problem, "linear_system", None):
        # A quadratic block that carries its linear system (problems.w_problem).
        result = problems.solve_linear_system(problem, start,
                                              options.block_max_iter * options.max_inner,
                                              options.block_rtol * start_norm)
    else:
        result = _run(name, problem, start, start_norm, options)
    # pymanopt's conjugate gradients give up when 10 halvings of the first trial step (of
    # unit length) do not decrease the cost: near a Z whose gradient is small next to its
    # curvature (large lam3, lam4) they leave it unchanged, visit after visit. Trust
    # regions scale their steps by the Hessian; the automatic choice falls back on them.
    if ((result is None or result.cost >= start_cost) and name != "trust_regions"
            and _is_automatic(options.optimizer, block)):
        result = _run("trust_regions", problem, start, start_norm, options)
    if result is None or result.cost > start_cost:
        return start, 0.0
    return result.point, start_cost - result.cost


def _run(name, problem, start, start_norm, options):
    """One optimizer run on a block; None when pymanopt's CG divides by a vanishing
    gradient."""
    try:
        return problems.run_optimizer(name, problem, start, options.block_max_iter,
                                      options.block_rtol * start_norm, options.max_inner)
    except ZeroDivisionError:
        return None


def _is_automatic(optimizer, block):
    """Whether the block's optimizer is the ``"auto"`` choice, not one the user named."""
    return optimizer == "auto" or (isinstance(optimizer, dict) and block not in optimizer)


def _solve_and_free(block, problem, start, options):
    """`_solve_block` on a problem used only here, freed when it returns.

    A pymanopt Problem refers to itself (its Riemannian gradient is a closure over the
    problem), so a finished one, with the block statistics its functions hold (l x k x k with
    missing labels), would wait for the cyclic garbage collector: measured, 190 MiB more peak
    memory in a fit with 5000 labels.
    """
    try:
        return _solve_block(block, problem, start, options)
    finally:
        vars(problem).clear()


def v_by_closed_form(label, options):
    """Whether the V block is solved by the paper's closed form (Eq. (6) column by column):
    asked for (``options.v_closed_form``) and possible, the label fit ``label`` (an
    `objective.LabelFit`) being the paper's quadratic term. Else V is solved by Newton's
    method column by column (``options.v_closed_form``) or is a pymanopt problem."""
    return options.v_closed_form and label.quadratic


def _initial_point(data, n_latent, n_groups, rng, w_preconditioner, init, XtY=None):
    """Starting point of the basic-model initialisation; Z_m always random with unit-norm rows.

    ``"random"``, as in the authors' code: U, V uniform in [0, 1), W zero.
    ``"ridge"``: the best rank-k factorization of a ridge regression of the observed labels,
    balanced between U and V; the initialisation then needs only a few rounds. ``XtY`` is
    X^T Y^T when the caller has it.
    """
    l, n = data.Y.shape
    d = data.X.shape[1]
    Z = normalize_rows(rng.standard_normal((n_groups, l, n_latent)))
    if init == "random":
        U = rng.uniform(size=(l, n_latent))
        V = rng.uniform(size=(n_latent, n))
        return U, V, np.zeros((d, n_latent)), Z
    # The preconditioner approximates the inverse of 2 (lam X^T X + lam2 I).
    if XtY is None:
        XtY = obj.feature_label_product(data)
    W_ridge = 2.0 * data.lam * w_preconditioner(None, XtY)
    eigenvalues, vectors = _top_score_directions(W_ridge, data, n_latent)
    top = eigenvalues.size
    scale = np.maximum(eigenvalues, np.finfo(float).eps) ** 0.25  # sqrt of singular values
    U = np.zeros((l, n_latent))
    U[:, :top] = vectors * scale
    W = np.zeros((d, n_latent))
    W[:, :top] = W_ridge @ vectors / scale
    if top < n_latent:  # k > l: spare latent dimensions start small, not at a saddle
        U[:, top:] = 1e-3 * rng.standard_normal((l, n_latent - top))
    V = obj.feature_product(W, data).T
    return U, V, W, Z


# Above this many labels the l x l Gram matrix of the ridge scores is not formed (its
# eigendecomposition costs l^3): its top eigenvectors come from Lanczos iterations instead.
MAX_DENSE_LABELS = 2000


def _top_score_directions(W_ridge, data, n_latent):
    """The top ``n_latent`` eigenvalues (descending) and eigenvectors of F F^T, with
    F = (X W_ridge)^T the l x n ridge scores."""
    l = W_ridge.shape[1]
    if l <= MAX_DENSE_LABELS:
        eigenvalues, vectors = np.linalg.eigh(obj.score_gram(W_ridge, data))
        top = np.argsort(eigenvalues)[::-1][:n_latent]
        return eigenvalues[top], vectors[:, top]
    gram = scipy.sparse.linalg.LinearOperator(
        (l, l), matvec=lambda v: obj.score_gram_product(W_ridge, np.ravel(v), data),
        dtype=float)
    eigenvalues, vectors = scipy.sparse.linalg.eigsh(gram, k=min(n_latent, l - 1),
                                                     v0=np.ones(l))  # deterministic start
    order = np.argsort(eigenvalues)[::-1]
    return eigenvalues[order], vectors[:, order]


def _check_initial_point(point, data, n_latent):
    """Copies of a given (U, V, W, Z) with their shapes checked; V None means W^T X."""
    (l, n), d, g = data.Y.shape, data.X.shape[1], data.n_groups
    U, V, W, Z = point
    if V is None:
        V = obj.feature_product(W, data).T
    shapes = {"U": (l, n_latent), "V": (n_latent, n), "W": (d, n_latent), "Z": (g, l, n_latent)}
    point = [np.array(a, dtype=float) for a in (U, V, W, Z)]
    for (name, shape), array in zip(shapes.items(), point):
        if array.shape != shape:
            raise ValueError(f"initial_point: {name} has shape {array.shape}, expected {shape}")
    point[3] = normalize_rows(point[3])  # the constraint holds from the start
    return point


def _converged(history, tol):
    previous, current = history[-2], history[-1]
    return previous - current <= tol * max(abs(previous), np.finfo(float).tiny)


class _SampleBlocks:
    """The work of both loops that reads V, on the samples: V is a k x n array, and P = X W
    is kept for the last W seen (the V block, the label-side weights and the objective all
    read it)."""

    def __init__(self, data, options, w_preconditioner):
        self.data, self.options, self.w_preconditioner = data, options, w_preconditioner
        self._W = self._P = None

    def _product(self, W):
        if W is not self._W:
            self._W, self._P = W, obj.feature_product(W, self.data)
        return self._P

    def v_block(self, U, W, V, track=False):
        """The V block (Eq. (6)) at (U, W), from V: the new V and the decrease of the
        objective. The decrease (one product with U for the closed form, two costs of the
        block under another loss) is skipped (0.0) with ``track=False``, where nobody reads
        it."""
        P = self._product(W)
        if not self.options.v_closed_form:
            problem = problems.v_problem(U, P, self.data, V)
            return _solve_and_free("V", problem, V, self.options)
        new = obj.v_solution(U, P, V, self.data)
        return new, (obj.v_decrease(V, new, U, self.data, P) if track else 0.0)

    def label_side_weights(self, W):
        return obj.label_side_weights(self._product(W), self.data)

    def rebalance(self, U, V, W):
        """`objective.rebalance` at (U, V, W): the rescaled point and the decrease; the new
        W's product X W is kept."""
        U, V, W, self._P, decrease = obj.rebalance(U, V, W, self.data, P=self._product(W))
        self._W = W
        return U, V, W, decrease

    def objective(self, U, V, W, Z=None):
        """Eq. (4), or the basic model's Eq. (1) without Z."""
        if Z is None:
            return obj.basic_objective(U, V, W, self.data, P=self._product(W))
        return obj.objective(U, V, W, Z, self.data, P=self._product(W))

    def u_problem(self, V, U, Z=None, B=None):
        return problems.u_problem(V, Z, B, self.data, U)

    def w_problem(self, V, H=None):
        return problems.w_problem(V, H, self.data, self.w_preconditioner)

    def array(self, V):
        return V


class _MomentBlocks(_SampleBlocks):
    """The same work on second moments (every label observed, the paper's loss, closed-form
    V): V is an `objective.ImplicitV` from X^T X and `objective.LabelMoments`, P_m^T P_m is
    W^T X_m^T X_m W, and no iteration reads the samples. A V given as an array (an initial
    point) goes through the samples once."""

    def __init__(self, data, options, w_preconditioner, moments):
        super().__init__(data, options, w_preconditioner)
        self.moments = moments
        self._weights_W = self._weights = None

    def rebalance(self, U, V, W):
        """Nothing: here V, solved in closed form, is implicit (and re-solved every round)."""
        return U, V, W, 0.0

    def v_block(self, U, W, V, track=False):
        new = obj.implicit_v_closed_form(U, W, self.data, self.moments)
        if not track:
            return new, 0.0
        if not isinstance(V, obj.ImplicitV):
            return new, obj.v_decrease(V, self.array(new), U, self.data)
        return new, obj.implicit_v_decrease(V, new, U, self.data, self.moments)

    def label_side_weights(self, W):
        """B for W, kept for the last W seen: the objective of the new W and the next
        iteration's Z and U blocks all read it."""
        if W is not self._weights_W:
            if self.data.group_grams is None:  # no manifold terms (see `_blocks`)
                k = W.shape[1]
                weights = np.zeros((self.data.n_groups, k, k))
            else:
                weights = obj.label_side_weights(None, self.data,
                                                 grams=obj.moment_group_grams(W, self.data))
            self._weights_W, self._weights = W, weights
        return self._weights

    def objective(self, U, V, W, Z=None):
        if not isinstance(V, obj.ImplicitV):
            return super().objective(U, V, W, Z)
        value = obj.implicit_basic_objective(U, V, W, self.data, self.moments)
        if Z is not None and self.data.has_manifold_terms:
            value += obj.manifold_term(U, Z, self.label_side_weights(W))
        return value

    def u_problem(self, V, U, Z=None, B=None):
        if not isinstance(V, obj.ImplicitV):
            return super().u_problem(V, U, Z, B)
        stats = obj.UStatistics(V.VVt, V.YVt, self.moments.squared_norm)
        return problems.u_problem(None, Z, B, self.data, U, term=stats)

    def w_problem(self, V, H=None):
        if not isinstance(V, obj.ImplicitV):
            return super().w_problem(V, H)
        return problems.w_problem(None, H, self.data, self.w_preconditioner,
                                  statistics=(V.XtV, float(np.trace(V.VVt))))

    def array(self, V):
        return obj.materialize_v(V, self.data) if isinstance(V, obj.ImplicitV) else V


def _blocks(data, options, w_preconditioner):
    """`_MomentBlocks` where they hold and save work (n >= 2 (d + l)), else `_SampleBlocks`."""
    (l, n), d = data.Y.shape, data.X.shape[1]
    if (options.use_moments and data.J is None and v_by_closed_form(data.label, options)
            and data.gram is not None
            and (data.group_grams is not None or not data.has_manifold_terms)
            and not data.label.sparse and n >= 2 * (d + l)):
        return _MomentBlocks(data, options, w_preconditioner, obj.label_moments(data))
    return _SampleBlocks(data, options, w_preconditioner)


def _initialise_by_basic_model(U, V, W, blocks, options, max_iter, tol, callback,
                               rebalance=False):
    """Minimize the basic model, Eq. (1), from (U, V, W) by block descent.

    Plain rounds (``options.init_acceleration == 0``) update U, V and W in turn. Otherwise
    the basic model is read as two blocks, V and (U, W) (given V, U and W are independent),
    and the round is the map G(U, W) = (u(V), w(V)) with V the V block's solution at (U, W).
    That map converges linearly and slowly (about 0.8 per round); Anderson mixing of its
    last ``init_acceleration`` iterates extrapolates it, and a mixed point is kept only when
    its objective (with V re-solved) is below the current one, so every round is monotone.
    The mixed rounds' decreases are uneven: they stop after two rounds in a row below tol.
    ``blocks`` (`_SampleBlocks` or `_MomentBlocks`) does the work that reads V. With
    ``rebalance`` every round ends with `objective.rebalance`, after the mixing.

    Returns U, V (as ``blocks`` holds it), W, the objective history (initial point first),
    the number of rounds and whether ``tol`` was met before ``max_iter`` rounds.
    """
    history = [blocks.objective(U, V, W)]
    converged = False
    n_rounds = 0
    mixing = _Anderson(options.init_acceleration) if options.init_acceleration else None
    if mixing is not None:
        V = blocks.v_block(U, W, V)[0]
        value = blocks.objective(U, V, W)
    for n_rounds in range(1, max_iter + 1):
        U_next = _solve_and_free("U", blocks.u_problem(V, U), U, options)[0]
        if mixing is None:
            U = U_next
            V = blocks.v_block(U, W, V)[0]
        W_next = _solve_and_free("W", blocks.w_problem(V), W, options)[0]
        if mixing is None:
            W = W_next
            value = blocks.objective(U, V, W)
        else:
            U, V, W, value = _mixed_step(mixing, (U, W), (U_next, W_next), V, value, blocks)
        if rebalance:
            U, V, W, drop = blocks.rebalance(U, V, W)
            value -= drop
        history.append(value)
        if callback is not None:
            callback("init", n_rounds, history[-1])
        # A mixed round can gain little right after a large extrapolated one, so the mixed
        # initialisation stops only after two rounds in a row below tol (the first round is
        # never extrapolated: from a converged start, one small round suffices).
        if _converged(history, tol) and (mixing is None or len(history) < 3
                                         or _converged(history[:-1], tol)):
            converged = True
            break
    return U, V, W, history, n_rounds, converged


def _mixed_step(mixing, point, image, V, value, blocks):
    """One accelerated initialisation round from ``point`` = (U, W) and ``image`` = G(point).

    Returns the next (U, V, W) and its basic objective: Anderson's point if it is below
    ``value``, else ``image`` (plain block descent, never above ``value``).
    """
    shapes = [part.shape for part in point]
    mixed = mixing.step(np.concatenate([p.ravel() for p in point]),
                        np.concatenate([g.ravel() for g in image]))
    if mixed is not None:
        U, W = _split(mixed, shapes)
        V_mixed = blocks.v_block(U, W, V)[0]
        mixed_value = blocks.objective(U, V_mixed, W)
        if mixed_value < value:
            return U, V_mixed, W, mixed_value
        mixing.restart()
    U, W = image
    V = blocks.v_block(U, W, V)[0]
    return U, V, W, blocks.objective(U, V, W)


def _split(vector, shapes):
    parts, offset = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        parts.append(vector[offset:offset + size].reshape(shape))
        offset += size
    return parts


class _Anderson:
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


def glocal_fit(data, n_latent, *, max_iter=30, init_max_iter=30, tol=1e-4,
               options=None, random_state=None, callback=None, initial_point=None):
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
        Both loops stop when one round lowers their objective by less than ``tol`` times
        its value.
    options : SolverOptions, optional
    random_state : numpy.random.Generator or int or None
    callback : callable, optional
        Called as ``callback(stage, iteration, value)`` after every round; ``stage`` is
        ``"init"`` or ``"main"``.
    initial_point : tuple (U, V, W, Z) of ndarray, optional
        Start from this point instead of `_initial_point` (e.g. a solution at nearby
        weights: a regularization path). V may be None: it is then W^T X; the rows of Z are
        normalized. The basic-model initialisation still runs ``init_max_iter`` rounds from
        it (pass 0 to go straight to Algorithm 1).

    Returns
    -------
    GlocalResult
        ``objective_history`` holds Eq. (4) after the basic-model initialisation (with the
        initial Z) and after every outer iteration; it never increases. ``init_history`` holds
        Eq. (1) at the initial point and after every initialisation round, and
        ``block_history`` Eq. (4) after each block (Z, V, U, W) of every outer
        iteration, from the blocks' own cost decreases.
    """
    options = options or SolverOptions()
    if data.label.sparse and not v_by_closed_form(data.label, options):
        raise ValueError("sparse labels (SparseSignedLabels) need the closed form of V: "
                         "use v_closed_form=True or pass dense labels")
    rng = np.random.default_rng(random_state)
    times = {}

    tic = time.perf_counter()
    if data.gram is None and data.group_grams is None:  # else given by the caller
        data = obj.with_feature_grams(data)
    w_preconditioner = problems.WPreconditioner(data, options.max_dense_features)
    blocks = _blocks(data, options, w_preconditioner)
    if initial_point is None:
        XtY = blocks.moments.features if isinstance(blocks, _MomentBlocks) else None
        U, V, W, Z = _initial_point(data, n_latent, data.n_groups, rng,
                                    w_preconditioner, options.init, XtY)
    else:
        U, V, W, Z = _check_initial_point(initial_point, data, n_latent)
    rebalance = (data.v_weight == 0 if options.rebalance == "auto"
                 else bool(options.rebalance))
    precondition_z = (data.lam3 + data.lam4 >= data.lam if options.z_preconditioner == "auto"
                      else bool(options.z_preconditioner))
    U, V, W, basic, n_init_iter, init_converged = _initialise_by_basic_model(
        U, V, W, blocks, options, init_max_iter, tol, callback, rebalance)
    times["init"] = time.perf_counter() - tic

    tic = time.perf_counter()
    history = [blocks.objective(U, V, W, Z)]
    block_history = []  # the objective after the Z, V, U and W updates of every iteration
    n_iter = 0
    converged = max_iter == 0
    for n_iter in range(1, max_iter + 1):
        decreases = []
        # Algorithm 1, lines 3-5: every Z_m (jointly: the problems are independent).
        B = blocks.label_side_weights(W)
        Z, drop = _solve_and_free("Z", problems.z_problem(U, B, Z.shape, precondition_z), Z,
                                  options)
        decreases.append(drop)
        # Line 6: V (the manifold terms do not involve V).
        V, drop = blocks.v_block(U, W, V, track=True)
        decreases.append(drop)
        # Line 7: U.
        U, drop = _solve_and_free("U", blocks.u_problem(V, U, Z, B), U, options)
        decreases.append(drop)
        # Line 8: W.
        H = obj.feature_side_weights(obj.laplacian_weights(U, Z), data)
        W, drop = _solve_and_free("W", blocks.w_problem(V, H), W, options)
        if rebalance:  # counted with the W block in block_history
            U, V, W, rescaling_drop = blocks.rebalance(U, V, W)
            drop += rescaling_drop
        decreases.append(drop)
        block_history.append(history[-1] - np.cumsum(decreases))
        history.append(blocks.objective(U, V, W, Z))
        if callback is not None:
            callback("main", n_iter, history[-1])
        if _converged(history, tol):
            converged = True
            break
    V = blocks.array(V)
    times["main"] = time.perf_counter() - tic
    return GlocalResult(U, V, W, Z, history, n_iter, n_init_iter, basic, block_history, times,
                        init_converged, converged)
