"""Derivative checks shared by the tests of the solver and of the correlation terms: agreement
to a relative tolerance, Hessian products by autograd, and the U block with the paper's terms
built the way the solver builds it."""

import autograd.numpy as anp
import numpy as np
from autograd import grad

from glocal.solver import coupling
from glocal.solver import objective as obj
from glocal.solver.correlations import laplacians as lap
from glocal.solver.label_fit import u_statistics


def close(actual, expected, rtol=1e-9):
    """Agreement to ``rtol`` relative to the largest entry of ``expected``."""
    expected = np.asarray(expected, dtype=float)
    scale = max(float(np.max(np.abs(expected))), 1e-300)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * scale)


def hvp(f, argnum, args, direction):
    """Hessian of f in argument ``argnum`` at ``args``, applied to ``direction`` (autograd)."""
    gradient = grad(f, argnum)

    def directional(*a):
        return anp.sum(gradient(*a) * direction)

    return grad(directional, argnum)(*args)


def check_u_side(case, side):
    """A correlation term's U side (``side``, at the state of ``case.point`` = (U, V, W,
    state)) against autograd of ``case.full``: the U block's gradient and Hessian products,
    and its cost equal to the objective up to terms without U."""
    U, V, W, state = case.point
    stats = u_statistics(V, case.data)
    sides = (side,)
    cost, gradient = obj.u_cost_grad(U, stats, case.data.lam2, sides)
    close(gradient, grad(case.full, 0)(*case.point))
    D = case.rng.standard_normal(U.shape)
    close(obj.u_hessp(D, stats, case.data.lam2, U, sides), hvp(case.full, 0, case.point, D))
    U2 = case.rng.standard_normal(U.shape)
    cost2 = obj.u_cost_grad(U2, stats, case.data.lam2, sides)[0]
    close(cost - cost2, case.full(U, V, W, state) - case.full(U2, V, W, state), 1e-9)


def label_weights(P, data):
    """The label-side weights B_m of the paper's terms at P = X W."""
    return lap.label_side_weights(coupling.group_grams(P, data), data.group_fractions,
                                  data.lam3, data.lam4)


def _terms(data, preconditioned=False):
    return lap.LabelLaplacians(data.lam3, data.lam4, data.group_fractions, preconditioned)


def _u_sides(Z, B, data):
    """The paper's terms in the U block, or none (B None: the basic model)."""
    return () if B is None else (_terms(data).u_side(Z, B),)


def u_cost_grad(U, term, Z, B, data):
    """The U block's cost and gradient with the paper's terms (B None: the basic model)."""
    return obj.u_cost_grad(U, term, data.lam2, _u_sides(Z, B, data))


def u_hessp(D, term, Z, B, data, U=None):
    """The U block's Hessian product with the paper's terms (B None: the basic model)."""
    return obj.u_hessp(D, term, data.lam2, U, _u_sides(Z, B, data))
