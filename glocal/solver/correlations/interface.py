"""The seam for correlation terms: a term of the objective in the label scores F = U W^T X, with
variables (blocks) of its own.

GLOCAL's global and local label Laplacians (Eq. 4,
`glocal.solver.correlations.laplacians.LabelLaplacians`) are one `CorrelationTerm`; the Laplacians
of the scores' deviations from their means
(`glocal.solver.correlations.centered.CenteredLaplacians`) and the directed implications between
labels (`glocal.solver.correlations.implications.LabelImplications`) are two more. Each is one
module with a subclass, fitted by ``glocal.solver.glocal_fit(data, k, correlation=term)``, or by
name (``GLOCAL(correlation=...)``, `glocal.solver.correlations.CORRELATION_TERMS`).

Every outer iteration of Algorithm 1 (`glocal.solver.glocal_fit`) calls, in order::

    side = term.label_side(W, space)                 what the term reads of the scores X W
    state, drop = term.update(U, state, side, solve)   lines 3-5: the term's own blocks
    V = ...                                           line 6 (no correlation term involves V)
    U = ... term.u_side(state, side) ...              line 7: the term in U
    W = ... term.w_side(U, state, side) ...           line 8: the term in W
    objective = basic objective + term.value(U, state, side)

For a fixed state the term is either a homogeneous quadratic form in F (as tr(F^T L F) is):
the U and W blocks then stay quadratics whose Hessians the sides apply, and W's is solved as
a linear system where that pays; or any twice differentiable (or piecewise quadratic)
function of F, whose W part is then a `FeatureSide` ``nonquadratic`` part and whose U side
evaluates it at every point. Only `label_side`
reads the data (anything the other methods need of it, e.g. the features' means, goes into
the side it returns); ``space`` gives it: ``space.data`` (the
`glocal.solver.objective.GlocalData`), ``space.scores(W)`` (P = X W, n x k: in memory, or chunked
beside X on a backend), ``space.score_group_grams(W)`` (P_m^T P_m, g x k x k: from the second
moments when the fit keeps them) and, for any other sum over the samples,
``space.data.samples.sum(function, space.data, P, reads="")``.
"""

from dataclasses import dataclass

__all__ = ["CorrelationTerm", "Block", "FeatureSide"]


@dataclass(frozen=True)
class Block:
    """One block of a correlation term, as its `update` hands it to ``solve``.

    Attributes
    ----------
    manifold : pymanopt manifold
        Where the block's variable lives (e.g. `glocal.manifolds.UnitRows`).
    cost_grad : callable
        ``point -> (cost, Euclidean gradient)``.
    hessp : callable
        ``(point, direction) -> Euclidean Hessian applied to direction``.
    preconditioner : callable or None
        ``(point, tangent vector) -> tangent vector``, or None for none.
    """

    manifold: object
    cost_grad: object
    hessp: object
    preconditioner: object = None


@dataclass(frozen=True)
class FeatureSide:
    """A correlation term seen from W (line 8), a quadratic form in W.

    Attributes
    ----------
    weights : ndarray of shape (g, k, k) or None
        H_m of the part of the term that reads sum_m tr(P_m H_m P_m^T), P_m = X_m W: it
        joins the coupling term's products with the groups' second moments, one pass. None
        for a term without such a part.
    product : callable or None
        ``D -> M D`` for the rest of the term's (halved) Hessian in W, or None when the
        weights say it all.
    nonquadratic : object or None
        The part of the term that is not a quadratic form in W, with ``cost_grad(W)`` (its
        value and half its gradient) and ``hessp(W, D)`` (half its Hessian at W applied to
        D), and optionally ``curvature``, weights H_m (g x k x k) whose form
        sum_m tr(P_m H_m P_m^T) approximates that half Hessian at the block's start, for the
        W preconditioner only; None for a term quadratic in W. With it the W block is no
        linear system and is solved by its optimizer.
    """

    weights: object
    product: object = None
    nonquadratic: object = None


class CorrelationTerm:
    """A correlation term: its value, its sides in U and W, and its own blocks.

    A term made by name (``GLOCAL(correlation=...)``,
    `glocal.solver.correlations.CORRELATION_TERMS`) is constructed as ``term(lam3, lam4,
    group_fractions, preconditioned)``: its global and local weights, the groups' n_m / n, and
    whether to precondition its own blocks (asked when the weights are strong, lam3 + lam4 >= lam).

    Attributes
    ----------
    block_names : tuple of str
        Names of the term's blocks, the keys of the ``optimizer`` dict that choose their
        optimizers (`glocal.solver.SolverOptions`).
    active : bool
        Whether the term adds anything (its weights are not all zero).
    """

    block_names = ()
    active = True

    def start(self, n_groups, n_labels, n_latent, rng):
        """The term's starting state, drawn from the numpy Generator ``rng`` (drawn first,
        before the other blocks' starting points)."""
        raise NotImplementedError

    def checked(self, state, n_groups, n_labels, n_latent):
        """A copy of a given starting state, its shape and constraints checked (a
        ValueError that names what is wrong)."""
        raise NotImplementedError

    def label_side(self, W, space):
        """What the term reads of the data at W (of the scores P = X W): small statistics
        that the other methods take."""
        raise NotImplementedError

    def value(self, U, state, side):
        """The term's value."""
        raise NotImplementedError

    def update(self, U, state, side, solve):
        """Algorithm 1's lines 3-5: the term's own blocks at fixed U and W. ``solve(name,
        block, start)`` minimizes a `Block` from ``start`` with the optimizer chosen for
        ``name`` and returns the new point and the decrease of its cost. Returns the new
        state and the decrease of the objective."""
        raise NotImplementedError

    def u_side(self, state, side):
        """The term as a function of U: an object with ``cost_grad(U)`` (its value and half
        its gradient) and ``hessp(U, D)`` (half its Hessian at U applied to D; a quadratic
        term does not read U)."""
        raise NotImplementedError

    def w_side(self, U, state, side):
        """The term as a function of W at U: a `FeatureSide` (``side`` is from `label_side`
        at the previous W)."""
        raise NotImplementedError

    def state_shape(self, n_groups, n_labels, n_latent):
        """The shape of the term's state (an estimator's ``Z_``)."""
        raise NotImplementedError

    def correlations(self, state, group_fractions):
        """What an estimator shows of a fitted state: a dict from attribute name
        (``global_correlation_``, ``local_correlations_``) to array."""
        return {}
