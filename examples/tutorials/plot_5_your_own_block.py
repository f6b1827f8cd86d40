r"""
5. Writing your own block as a pymanopt problem
===============================================

Every block of GLOCAL follows one recipe (`glocal.solver.problems`): a pure function giving the
cost and the Euclidean gradient, one giving the Hessian applied to a direction, a
manifold, and a `pymanopt.Problem` tying them together. This step writes a new block in
that style and checks it the way GLOCAL's blocks are checked.

The block: given a target label correlation matrix C (:mathmpl:`l \times l`, unit
diagonal), find the factor Z with unit-norm rows whose Gram matrix is closest,

.. mathmpl::

   \min_Z \; \|Z Z^\top - C\|_F^2 \quad \mathrm{subject\ to} \quad \|z_i\| = 1 \ \mathrm{for\ every\ row}\ i,

for instance to start :mathmpl:`Z_m` from known label correlations. With
:mathmpl:`E = Z Z^\top - C` (symmetric), the Euclidean gradient and the Hessian applied to
a direction D are

.. mathmpl::

   \nabla f(Z) = 4 E Z, \qquad \nabla^2 f(Z)[D] = 4 \left(E D + (D Z^\top + Z D^\top) Z\right).
"""

import os
import tempfile
from pathlib import Path

import autograd.numpy as anp
import numpy as np
import pymanopt
from matplotlib.figure import Figure

from glocal.manifolds import UnitRows, normalize_rows
from glocal.plotting import save_figure
from glocal.solver.optimizers import run_optimizer

# Figures go to a folder of their own, never into the current one (a checkout).
OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT")
           or Path(tempfile.gettempdir(), "glocal-examples"))
rng = np.random.default_rng(0)


# %%
# The block, as pure functions and a problem
# ------------------------------------------
def gram_cost_grad(Z, C):
    """||Z Z^T - C||^2 and its gradient in Z."""
    E = Z @ Z.T - C
    return float(np.sum(E ** 2)), 4.0 * E @ Z


def gram_hessp(D, Z, C):
    """The Hessian of ||Z Z^T - C||^2 at Z, applied to D."""
    E = Z @ Z.T - C
    return 4.0 * (E @ D + (D @ Z.T + Z @ D.T) @ Z)


def gram_problem(C, k):
    """The block as a pymanopt problem on unit-norm rows (l x k)."""
    manifold = UnitRows(C.shape[0], k)
    decorate = pymanopt.function.numpy(manifold)
    return pymanopt.Problem(
        manifold,
        decorate(lambda Z: gram_cost_grad(Z, C)[0]),
        euclidean_gradient=decorate(lambda Z: gram_cost_grad(Z, C)[1]),
        # pymanopt turns the Euclidean Hessian into the Riemannian one (tutorial 2).
        euclidean_hessian=decorate(lambda Z, D: gram_hessp(D, Z, C)))


# %%
# Checking the derivatives against automatic differentiation
# ----------------------------------------------------------
# The same cost written for autograd; pymanopt's autograd backend differentiates it.
# (pymanopt's own derivative checker does not run on numpy 2.4, so the check is direct.)
l, k = 6, 3
truth = normalize_rows(rng.standard_normal((l, k)))
C = truth @ truth.T  # a correlation matrix that unit rows can reach exactly
manifold = UnitRows(l, k)
auto = pymanopt.function.autograd(manifold)(lambda Z: anp.sum((Z @ Z.T - C) ** 2))
auto_problem = pymanopt.Problem(manifold, auto)
problem = gram_problem(C, k)

Z = normalize_rows(rng.standard_normal((l, k)))
D = rng.standard_normal((l, k))
assert np.allclose(gram_cost_grad(Z, C)[1], auto_problem.euclidean_gradient(Z))
assert np.allclose(gram_hessp(D, Z, C), auto_problem.euclidean_hessian(Z, D))
v = manifold.projection(Z, D)
assert np.allclose(problem.riemannian_gradient(Z), auto_problem.riemannian_gradient(Z))
assert np.allclose(problem.riemannian_hessian(Z, v), auto_problem.riemannian_hessian(Z, v))
print("gradient and Hessian agree with autograd")

# %%
# Solving it with GLOCAL's optimizer runner
# -----------------------------------------
# The target is reachable, so the minimum is 0 and the solution reproduces C (Z itself is
# determined only up to an orthogonal transform of its columns).
start = normalize_rows(rng.standard_normal((l, k)))
costs = {}
for name in ("steepest_descent", "conjugate_gradient", "trust_regions"):
    result = run_optimizer(name, gram_problem(C, k), start, max_iterations=2000,
                           min_gradient_norm=1e-9, max_inner=100)
    costs[name] = result.cost
    print(f"{name:<20} {result.iterations:5d} iterations, cost {result.cost:.2e}")
    assert np.allclose(np.linalg.norm(result.point, axis=-1), 1)
    assert result.cost < 1e-10 * gram_cost_grad(start, C)[0]
solution = result.point
assert np.allclose(solution @ solution.T, C, atol=1e-6)

# %%
# A target no unit rows reach: the closest correlation structure of rank k
# ------------------------------------------------------------------------
# The labels' own correlations have rank l; with k = 2 the block finds the nearest
# Gram matrix of unit rows of length 2, a positive minimum.
labels = rng.standard_normal((200, l)) @ rng.standard_normal((l, l))
target = np.corrcoef(labels.T)
fit = run_optimizer("trust_regions", gram_problem(target, 2), normalize_rows(
    rng.standard_normal((l, 2))), max_iterations=200, min_gradient_norm=1e-9, max_inner=100)
print(f"rank-2 fit of the labels' correlations: cost {fit.cost:.4f}, "
      f"gradient norm {fit.gradient_norm:.1e}")
assert fit.cost > 0 and fit.gradient_norm < 1e-6

fig = Figure(figsize=(9, 3.4), layout="constrained")
for i, (matrix, title) in enumerate([(target, "target correlations"),
                                     (fit.point @ fit.point.T, "$Z Z^T$, unit rows, k = 2"),
                                     (fit.point @ fit.point.T - target, "difference")]):
    ax = fig.add_subplot(1, 3, i + 1)
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set(title=title, xticks=[], yticks=[])
fig.colorbar(image, ax=fig.axes, shrink=0.8)
save_figure(fig, OUT / "tutorial_your_own_block.png", overwrite=True)
