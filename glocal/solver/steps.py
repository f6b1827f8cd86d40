"""What the solver's loops call, bound once per fit by `glocal.solver.plan.resolve_plan` into a
`Plan`: where V lives (`SampleSpace`, `MomentSpace`), the V algorithms, the U and W steps, the
rescaling step, the basic-model initialisation and its starts.

A new V (or U) algorithm is one function here with the signature of the others and one line
in `glocal.solver.plan.resolve_v_step` (`glocal.solver.plan.resolve_u_step`). Every step takes the
`Plan` first and returns the new point and the decrease of the objective.
"""

from dataclasses import dataclass, replace

import numpy as np

from . import coupling
from . import objective as obj
from . import newton, optimizers, problems
from ._cache import LastPoint
from .label_fit import feature_label_product
from .second_moments import implicit_v, implicit_v_closed_form, moment_group_grams


@dataclass
class Plan:
    """What `glocal.solver.glocal_fit` calls, bound by `glocal.solver.plan.resolve_plan`.

    Attributes
    ----------
    data : GlocalData
        With its second moments decided.
    space : SampleSpace or MomentSpace
        Where V lives.
    correlation : CorrelationTerm
        The correlation term (`glocal.solver.correlations.interface`).
    start : callable
        ``start(plan, n_latent, rng)``: the basic-model initialisation's (U, V, W).
    rounds : PlainRounds or MixedRounds
        The rounds of the basic-model initialisation.
    v_step, u_step, w_step : callable
        The block steps.
    rescale : callable
        ``rescale(U, V, W)``: the rescaling step, or `no_rescaling`.
    solvers : glocal.solver.optimizers.BlockSolvers
        Block name -> solver.
    w_preconditioner, v_preconditioner : object
        The W block's preconditioner; the V problem's (for `v_by_problem`).
    """

    data: object
    space: object
    correlation: object
    start: object
    rounds: object
    v_step: object
    u_step: object
    w_step: object
    rescale: object
    solvers: dict
    w_preconditioner: object
    v_preconditioner: object

    def objective(self, U, V, W, Z):
        """Eq. (4): the basic objective and the correlation term."""
        term = self.correlation
        return self.space.basic_objective(U, V, W) + term.value(U, Z,
                                                                 term.label_side(W, self.space))


# --- Where V lives -------------------------------------------------------------------------------

class SampleSpace:
    """V as a k x n array on the samples (or chunked beside X on a backend). P = X W and the
    groups' P_m^T P_m are kept for the last W seen: the V block, the correlation terms and
    the objective all read them. What reads only the labels and the arrays aligned with the
    samples gets ``labels``, the data without X."""

    def __init__(self, data):
        self.data = data
        self.labels = replace(data, X=None)
        self.scores = LastPoint(lambda W: coupling.feature_product(W, data))
        self.score_group_grams = LastPoint(
            lambda W: coupling.group_grams(self.scores(W), self.labels))

    def start(self, V):
        """V as this space holds it, from a k x n array."""
        return V

    def start_from_scores(self, W):
        """V = W^T X as this space holds it."""
        return self.scores(W).T

    def array(self, V):
        """V as a k x n array."""
        return V

    def label_features(self):
        """X^T Y^T, shape (d, l)."""
        return feature_label_product(self.data)

    def basic_objective(self, U, V, W):
        """Eq. (1)."""
        return obj.basic_objective(U, V, W, self.labels, P=self.scores(W))

    def u_term(self, V):
        """The label-fit term of the U block at V."""
        return self.labels.label.u_term(V, self.labels)

    def w_statistics(self, V):
        """X^T V^T and ||V||^2."""
        return coupling.w_statistics(V, self.data)

    def rebalance(self, U, V, W):
        """`glocal.solver.optimizers.rebalance` at (U, V, W): the rescaled point and the decrease;
        the new W's X W is kept."""
        U, V, W, P, decrease = optimizers.rebalance(U, V, W, self.labels, self.scores(W))
        self.scores.seed(W, P)
        return U, V, W, decrease


class MomentSpace:
    """The same on second moments (every label observed, the paper's loss, the closed form
    of V): V is a `glocal.solver.second_moments.ImplicitV`, P_m^T P_m is W^T X_m^T X_m W, and no
    iteration reads the samples (``basic``, a `glocal.solver.second_moments.BasicMoments`). A V
    given as an array (a starting point) is a `GivenV`, read through the samples until the
    first V step."""

    def __init__(self, data, basic):
        self.data, self.basic = data, basic
        self.labels = replace(data, X=None)
        self.scores = LastPoint(lambda W: coupling.feature_product(W, data))
        # Read only for an active correlation term, which moments-mode fits keep them for.
        self.score_group_grams = LastPoint(
            lambda W: moment_group_grams(W, data.moments.group_grams))

    def start(self, V):
        return GivenV(V, self)

    def start_from_scores(self, W):
        return implicit_v(W, np.zeros((self.basic.labels.shape[0], W.shape[1])), self.basic)

    def array(self, V):
        return V.array(self.data)

    def label_features(self):
        return self.basic.features

    def basic_objective(self, U, V, W):
        return V.basic_objective(U, W, self.basic)

    def u_term(self, V):
        return V.u_term(self.basic)

    def w_statistics(self, V):
        return V.w_statistics()


class GivenV:
    """A V given as an array in a fit on second moments, with the methods of
    `glocal.solver.second_moments.ImplicitV`, through the samples."""

    def __init__(self, V, space):
        self.V, self.space = V, space

    def basic_objective(self, U, W, basic):
        return obj.basic_objective(U, self.V, W, self.space.labels, P=self.space.scores(W))

    def u_term(self, basic):
        return self.space.labels.label.u_term(self.V, self.space.labels)

    def w_statistics(self):
        return coupling.w_statistics(self.V, self.space.data)

    def decrease_to(self, new, U, basic):
        return obj.v_decrease(self.V, new.array(self.space.data), U, self.space.labels)

    def array(self, data):
        return self.V


def no_rescaling(U, V, W):
    """The rescaling step where it is not taken: the point, and no decrease."""
    return U, V, W, 0.0


# --- V (Eq. 6, line 6): ``v_step(plan, U, W, V, track)`` ---------------------------------------
# The decrease is skipped (0.0) with ``track=False``, where nobody reads it.

def v_closed_form(plan, U, W, V, track):
    """The paper's closed form, column by column (`glocal.solver.objective.v_closed_form`)."""
    labels = plan.space.labels
    new = obj.v_closed_form(U, plan.space.scores(W), labels)
    return new, (obj.v_decrease(V, new, U, labels) if track else 0.0)


def v_newton(plan, U, W, V, track, max_steps=None):
    """Newton's method on every column, for a label term that is not quadratic
    (`glocal.solver.newton.v_block`), at most ``max_steps`` steps per column (None: until
    every column is solved)."""
    labels, P = plan.space.labels, plan.space.scores(W)
    new = newton.v_block(U, P, V, labels, max_steps)
    return new, (obj.v_cost_difference(V, new, U, P, labels) if track else 0.0)


def v_by_problem(plan, U, W, V, track):
    """One pymanopt problem on the whole V (`glocal.solver.problems.v_problem`)."""
    problem = problems.v_problem(U, plan.space.scores(W), plan.space.labels, V,
                                 plan.v_preconditioner)
    return plan.solvers["V"](problem, V)


def v_implicit(plan, U, W, V, track):
    """The paper's closed form on second moments (`glocal.solver.second_moments.ImplicitV`)."""
    basic = plan.space.basic
    new = implicit_v_closed_form(U, W, basic)
    return new, (V.decrease_to(new, U, basic) if track else 0.0)


# --- U (Eq. 7, line 7) and W (Eq. 8, line 8) -------------------------------------------------

def u_by_problem(plan, V, U, sides=(), shared_blocks=False):
    """U by its pymanopt problem (`glocal.solver.problems.u_problem`), from U; ``sides`` are the
    correlation terms' U sides (none in the basic model); ``shared_blocks``: preconditioned by
    the mean of the rows' Hessian blocks."""
    problem = problems.u_problem(plan.space.u_term(V), plan.data.lam2, U, sides, shared_blocks)
    return plan.solvers["U"](problem, U)


def u_by_newton(plan, V, U, sides=(), trial_batch=1, max_steps=None):
    """U by Newton's method (`glocal.solver.newton.u_newton`), for a label term that is not
    quadratic, from U, stopped as the U block's solver is (iterations, gradient norm) or
    after ``max_steps`` steps (None: no further cap); ``trial_batch`` step sizes of its line
    search per pass over the samples."""
    solver = plan.solvers["U"]
    cap = (solver.max_iterations if max_steps is None
           else min(max_steps, solver.max_iterations))
    return newton.u_newton(U, newton.LabelSums(V, plan.space.labels, trial_batch),
                           plan.data.lam2, sides, cap, solver.rtol)


def w_by_problem(plan, V, W, side=None):
    """W by its pymanopt problem or its linear system (`glocal.solver.problems.w_problem`), from W;
    ``side`` is the correlation terms' W side (None in the basic model)."""
    XtV, V_sq_norm = plan.space.w_statistics(V)
    problem = problems.w_problem(XtV, V_sq_norm, plan.data, plan.w_preconditioner, side)
    return plan.solvers["W"](problem, W)


# --- The basic-model initialisation (Eq. 1) -----------------------------------------------------

def initialise(plan, U, V, W, max_iter, tol, callback):
    """Minimize the basic model, Eq. (1), from (U, V, W) by block descent, in the plan's
    rounds, each followed by its rescaling step.

    Returns U, V (as the plan's space holds it), W, the objective history (initial point
    first), the number of rounds and whether ``tol`` was met before ``max_iter`` rounds.
    """
    rounds = plan.rounds
    history = [plan.space.basic_objective(U, V, W)]
    done = max_iter == 0
    n_rounds = 0
    V, value = rounds.begin(plan, U, V, W, history[0])
    for n_rounds in range(1, max_iter + 1):
        U, V, W, value = rounds.round(plan, U, V, W, value)
        U, V, W, drop = plan.rescale(U, V, W)
        value -= drop
        history.append(value)
        if callback is not None:
            callback("init", n_rounds, history[-1])
        if rounds.converged(history, tol):
            done = True
            break
    return U, V, W, history, n_rounds, done


def converged(history, tol):
    """Whether the last round lowered the objective by at most ``tol`` times its value."""
    previous, current = history[-2], history[-1]
    return previous - current <= tol * max(abs(previous), np.finfo(float).tiny)


def tail_converged(history, tol, span=1):
    """Whether the decreases still to come are at most ``tol`` times the objective, read
    from the last ones: while the decrease over ``span`` rounds shrinks geometrically, by a
    ratio r from one span to the next, what is left is that decrease / (1 - r). Block
    descent converges linearly, and with r near 1 its last decrease says little of what is
    left. True until there are two spans to compare."""
    if len(history) < 2 * span + 1:
        return True
    last = history[-1 - span] - history[-1]
    before = history[-1 - 2 * span] - history[-1 - span]
    remaining = last * before / (before - last) if before > last > 0 else last
    return remaining <= tol * max(abs(history[-1 - span]), np.finfo(float).tiny)


# The rounds: ``begin(plan, U, V, W, value)`` -> V and its basic objective before the first
# round; ``round(plan, U, V, W, value)`` -> the next (U, V, W) and its basic objective;
# ``converged(history, tol)``.

class PlainRounds:
    """U, V and W in turn."""

    def begin(self, plan, U, V, W, value):
        return V, value

    def round(self, plan, U, V, W, value):
        U = plan.u_step(plan, V, U)[0]
        V = plan.v_step(plan, U, W, V, False)[0]
        W = plan.w_step(plan, V, W)[0]
        return U, V, W, plan.space.basic_objective(U, V, W)

    def converged(self, history, tol):
        return converged(history, tol) and tail_converged(history, tol)


class MixedRounds:
    """The basic model read as two blocks, V and (U, W) (given V, U and W are independent):
    the round is the map G(U, W) = (u(V), w(V)) with V the V block's solution at (U, W). That
    map converges linearly and slowly; Anderson mixing of its last ``memory`` iterates
    (`glocal.solver.optimizers.Anderson`) extrapolates it, and a mixed point is kept only when its
    objective (with V re-solved) is below the current one, so every round is monotone. The
    mixed rounds' decreases are uneven: they stop after two rounds in a row below tol (the
    first round is never extrapolated: from a converged start, one small round suffices)."""

    def __init__(self, memory):
        self.mixing = optimizers.Anderson(memory)

    def begin(self, plan, U, V, W, value):
        V = plan.v_step(plan, U, W, V, False)[0]
        return V, plan.space.basic_objective(U, V, W)

    def round(self, plan, U, V, W, value):
        U_next = plan.u_step(plan, V, U)[0]
        W_next = plan.w_step(plan, V, W)[0]
        point, image = (U, W), (U_next, W_next)
        mixed = self.mixing.step(np.concatenate([p.ravel() for p in point]),
                                 np.concatenate([g.ravel() for g in image]))
        if mixed is not None:
            U, W = _split(mixed, [part.shape for part in point])
            V_mixed = plan.v_step(plan, U, W, V, False)[0]
            mixed_value = plan.space.basic_objective(U, V_mixed, W)
            if mixed_value < value:
                return U, V_mixed, W, mixed_value
            self.mixing.restart()
        U, W = image  # plain block descent, never above ``value``
        V = plan.v_step(plan, U, W, V, False)[0]
        return U, V, W, plan.space.basic_objective(U, V, W)

    def converged(self, history, tol):
        # Mixed rounds decrease unevenly, alternating: two in a row below tol, and their
        # tail read over pairs.
        return (converged(history, tol) and (len(history) < 3 or converged(history[:-1], tol))
                and tail_converged(history, tol, span=2))


def _split(vector, shapes):
    parts, offset = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        parts.append(vector[offset:offset + size].reshape(shape))
        offset += size
    return parts


# --- Its starts: ``start(plan, n_latent, rng) -> (U, V, W)``, V as the space holds it --------

def random_start(plan, n_latent, rng):
    """As in the authors' code: U, V uniform in [0, 1), W zero."""
    (l, n), d = plan.data.Y.shape, plan.data.X.shape[1]
    U = rng.uniform(size=(l, n_latent))
    V = rng.uniform(size=(n_latent, n))
    return U, plan.space.start(V), np.zeros((d, n_latent))


def ridge_start(plan, n_latent, rng, directions):
    """The best rank-k factorization of a ridge regression of the observed labels, balanced
    between U and V: the initialisation then needs only a few rounds. ``directions`` gives
    the top eigenpairs of the ridge scores' Gram matrix
    (`glocal.solver.coupling.dense_score_directions` or `lanczos_score_directions`)."""
    data = plan.data
    l, d = data.Y.shape[0], data.X.shape[1]
    # The preconditioner approximates the inverse of 2 (lam X^T X + lam2 I).
    W_ridge = 2.0 * data.lam * plan.w_preconditioner(None, plan.space.label_features())
    eigenvalues, vectors = directions(W_ridge, data, n_latent)
    top = eigenvalues.size
    scale = np.maximum(eigenvalues, np.finfo(float).eps) ** 0.25  # sqrt of singular values
    U = np.zeros((l, n_latent))
    U[:, :top] = vectors * scale
    W = np.zeros((d, n_latent))
    W[:, :top] = W_ridge @ vectors / scale
    if top < n_latent:  # k > l: spare latent dimensions start small, not at a saddle
        U[:, top:] = 1e-3 * rng.standard_normal((l, n_latent - top))
    return U, plan.space.start_from_scores(W), W
