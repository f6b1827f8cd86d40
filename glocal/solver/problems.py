"""One pymanopt `Problem` per block of Algorithm 1.

U, V and W live on Euclidean manifolds; a correlation term's blocks on their own manifolds
(the Z_m of `glocal.solver.correlations.laplacians` together on `glocal.manifolds.UnitRows`),
handed over as a `glocal.solver.correlations.Block`. Costs, gradients and Hessians come from
`glocal.solver.objective`, preconditioners from `glocal.solver.preconditioners`; this module wires
them to pymanopt.
"""

import numpy as np
import pymanopt
from pymanopt.manifolds import Euclidean

from . import objective as obj
from . import preconditioners
from ._cache import LastPoint
from ..manifolds import RealEuclidean


def make_problem(manifold, cost_grad, hessp, preconditioner=None):
    """A pymanopt Problem from ``cost_grad(point) -> (cost, Euclidean gradient)`` and
    ``hessp(point, direction)``, the Euclidean Hessian applied to a direction; the cost and
    the gradient come from one evaluation, kept for the last point
    (`glocal.solver._cache.LastPoint`): both share the residual. The problem's
    ``cost_and_gradient`` is that evaluation."""
    evaluate = LastPoint(cost_grad)
    decorate = pymanopt.function.numpy(manifold)
    # On a Euclidean manifold the Euclidean Hessian is the Riemannian one; passing it as such
    # spares pymanopt a gradient evaluation per Hessian-vector product.
    euclidean = isinstance(manifold, Euclidean)
    kwargs = {("riemannian_hessian" if euclidean else "euclidean_hessian"): decorate(hessp)}
    if preconditioner is not None:
        kwargs["preconditioner"] = preconditioner
    problem = pymanopt.Problem(manifold, decorate(lambda point: evaluate(point)[0]),
                               euclidean_gradient=decorate(lambda point: evaluate(point)[1]),
                               **kwargs)
    problem.cost_and_gradient = evaluate
    return problem


def block_problem(block):
    """The problem of a correlation term's `glocal.solver.correlations.Block`."""
    return make_problem(block.manifold, block.cost_grad, block.hessp, block.preconditioner)


def u_problem(term, lam2, U, sides=(), shared_blocks=False):
    """Eq. (7): U with V, W and the correlation terms fixed.

    ``term`` is the label-fit term at the fixed V (`glocal.solver.label_fit.LabelFit.u_term`: for
    the paper's loss the block's sufficient statistics, for another one the loss at
    F = U V); ``sides`` the correlation terms' U sides (none in the basic model).
    Preconditioned at ``U``, the start, by a correlation term's own preconditioner of the
    block given its per-row Hessians without the term (``side.preconditioner(blocks, U)``), or
    else by the inverse of those blocks (`glocal.solver.preconditioners.u_row_blocks`); with
    ``shared_blocks``, by their mean, one k x k block for every row
    (`glocal.solver.objective.u_mean_row_hessian`), where a block per label costs more than
    the steps it saves.
    """
    blocks = (obj.u_mean_row_hessian if shared_blocks else obj.u_row_hessians)(term, lam2, U)
    own = [side.preconditioner(blocks, U) for side in sides
           if hasattr(side, "preconditioner")]
    return make_problem(RealEuclidean(*term.shape),
                        lambda point: obj.u_cost_grad(point, term, lam2, sides),
                        lambda point, D: obj.u_hessp(D, term, lam2, point, sides),
                        own[0] if own else preconditioners.u_row_blocks(blocks))


def v_problem(U, P, data, V, preconditioner):
    """Eq. (6): V with U and W fixed, as one pymanopt problem from V (the alternative to the
    column-by-column solves). ``preconditioner`` is one of the V preconditioners of
    `glocal.solver.preconditioners`, chosen by `glocal.solver.plan`."""
    k, n = U.shape[1], data.n_samples
    # Cost, gradient and Hessian products at a point share one U V and loss evaluation; the
    # preconditioner reads the start's.
    terms = LastPoint(lambda point: data.label.terms(U, point, data))
    return make_problem(RealEuclidean(k, n),
                        lambda point: obj.v_cost_grad(point, U, P, data, terms(point)),
                        lambda point, D: obj.v_hessp(D, U, data, point, terms(point)[2]),
                        preconditioner(U, V, terms, data))


def w_problem(XtV, V_sq_norm, data, w_preconditioner, side=None):
    """Eq. (8): W with U, V and the correlation terms fixed.

    ``XtV`` and ``V_sq_norm`` are X^T V^T and ||V||^2; ``w_preconditioner`` is the fit's
    W preconditioner (`glocal.solver.preconditioners`); ``side`` the correlation terms' W side
    (None in the basic model). The block's cost is the quadratic (1/2) <W, A W> - <b, W> +
    const, A the Hessian and b = 2 lam X^T V^T. When the preconditioner is the weights' own
    Kronecker factor (``for_weights``: the Cholesky form's for correlation terms large next
    to lam, the diagonal form's for any correlation terms, never the Woodbury form's), the
    problem carries that linear system as ``linear_system`` (A's product, b, the
    preconditioner) for `glocal.solver.optimizers.solve_linear_system`; else, and always for a
    side with a part that is not quadratic in W (``side.nonquadratic``), it is None; such a
    part's ``curvature`` joins the weights the preconditioner is made for.
    """
    product, Ht = obj.w_products(data, side)
    nonquadratic = None if side is None else side.nonquadratic
    curvature = getattr(nonquadratic, "curvature", None)
    if curvature is not None:  # the preconditioner's weights approximate that part too
        preconditioner = w_preconditioner.for_weights(
            (data.lam * np.eye(curvature.shape[-1]) if Ht is None else Ht) + curvature)
    else:
        preconditioner = w_preconditioner.for_weights(Ht)

    def hessp(point, D):
        return obj.w_hessp(D, product, data.lam2, point, nonquadratic)
    problem = make_problem(RealEuclidean(*XtV.shape),
                           lambda W: obj.w_cost_grad(W, XtV, V_sq_norm, product, data.lam,
                                                     data.lam2, nonquadratic),
                           hessp, preconditioner)
    quadratic = preconditioner is not w_preconditioner and nonquadratic is None
    problem.linear_system = ((lambda D: hessp(None, D), 2.0 * data.lam * XtV, preconditioner)
                             if quadratic else None)
    return problem
