r"""
3. Steepest descent, conjugate gradients, trust regions
=======================================================

The Z block of GLOCAL is solved here three ways, from the same start, with pymanopt:

* **steepest descent with Armijo backtracking** (the paper's Manopt setting): step along
  minus the Riemannian gradient, halve the step until the cost drops enough, retract;
* **conjugate gradients**: mix the new gradient with the previous direction (moved to the
  new tangent space by a vector transport), which removes the zig-zag of steepest descent;
* **trust regions**: minimize a quadratic model built from the Riemannian Hessian inside
  a ball, by truncated conjugate gradients, and accept the step only if the cost drops as
  the model predicted. It uses second-order information and converges quadratically near
  a solution.

The cost, gradient and Hessian are GLOCAL's own: the block that the paper's correlation
term, `glocal.solver.correlations.LabelLaplacians`, hands to the fit's solver (a
`glocal.solver.correlations.Block`); the problem below records the cost at every iterate.
"""

import os
import tempfile
from pathlib import Path

import numpy as np
import pymanopt
from matplotlib.figure import Figure
from pymanopt.optimizers import ConjugateGradient, SteepestDescent, TrustRegions
from pymanopt.optimizers.line_search import BackTrackingLineSearcher

from glocal import GLOCAL
from glocal.datasets import make_glocal_data
from glocal.manifolds import UnitRows, normalize_rows
from glocal.plotting import save_figure
from glocal.solver.correlations import LabelLaplacians

# Figures go to a folder of their own, never into the current one (a checkout).
OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT")
           or Path(tempfile.gettempdir(), "glocal-examples"))

# %%
# The Z block of a fitted model
# -----------------------------
# U and W of a model fitted with the default weights, seen by a Z block with weights
# :mathmpl:`\lambda_3 = \lambda_4 = 1`. Its minimum is 0: the outputs of the fitted model
# span fewer directions than there are latent labels, so the rows of every :mathmpl:`Z_m`
# can all be made orthogonal to them. (This is why GLOCAL's manifold terms often vanish at
# a solution.)
#
# The block reads the data only through the scores :mathmpl:`P = X W` of every group
# :mathmpl:`m`: its cost is :mathmpl:`\sum_m \mathrm{tr}(Z_m^T U B_m U^T Z_m)` with
# :mathmpl:`B_m = \lambda_3 \frac{n_m}{n} P^T P + \lambda_4 P_m^T P_m`, made here from the
# fitted model's attributes. The term's ``update`` hands the block to a ``solve`` function,
# as the fit does; keeping it instead of solving gives its cost, gradient and Hessian.
data = make_glocal_data(n_samples=300, n_labels=6, random_state=0)
model = GLOCAL(n_latent=8, random_state=0).fit(data.X, data.Y)
P, groups = data.X @ model.W_, model.groups_
fractions = np.bincount(groups) / len(groups)  # n_m / n
grams = np.stack([P[groups == m].T @ P[groups == m] for m in range(model.n_groups_)])
lam3 = lam4 = 1.0
U, B = model.U_, lam3 * fractions[:, None, None] * grams.sum(axis=0) + lam4 * grams
handed = []
LabelLaplacians(lam3, lam4, fractions).update(
    U, model.Z_, B, lambda name, block, start: handed.append(block) or (start, 0.0))
block = handed[0]
manifold = UnitRows(*model.Z_.shape)
start = normalize_rows(np.random.default_rng(0).standard_normal(model.Z_.shape))


def recorded_z_problem(costs):
    """GLOCAL's Z block as a pymanopt problem that records the cost at every iterate.

    Optimizers ask for the gradient at every iterate; trust regions asks again at the same
    point for every Hessian product (the curvature term needs it), so a point is recorded
    only when it differs from the last one.
    """
    decorate = pymanopt.function.numpy(manifold)
    last = [None]

    @decorate
    def cost(Z):
        return block.cost_grad(Z)[0]

    @decorate
    def euclidean_gradient(Z):
        value, gradient = block.cost_grad(Z)
        if last[0] is None or not np.array_equal(Z, last[0]):
            last[0] = Z.copy()
            costs.append(value)
        return gradient

    @decorate
    def euclidean_hessian(Z, D):
        return block.hessp(Z, D)

    return pymanopt.Problem(manifold, cost, euclidean_gradient=euclidean_gradient,
                            euclidean_hessian=euclidean_hessian)


# %%
# Three optimizers, one problem
# -----------------------------
quiet = dict(verbosity=0, log_verbosity=0, min_gradient_norm=1e-8)
optimizers = {
    "steepest descent (Armijo)": SteepestDescent(
        max_iterations=3000, line_searcher=BackTrackingLineSearcher(), **quiet),
    "conjugate gradients": ConjugateGradient(max_iterations=3000, **quiet),
    "trust regions": TrustRegions(max_iterations=200, **quiet),
}
print(f"cost at the start: {block.cost_grad(start)[0]:.6g}")
traces, results = {}, {}
for name, optimizer in optimizers.items():
    traces[name] = []
    results[name] = optimizer.run(recorded_z_problem(traces[name]), initial_point=start)
    result = results[name]
    print(f"{name:<27} {result.iterations:5d} iterations, cost {result.cost:.10g}, "
          f"gradient norm {result.gradient_norm:.1e}")

# %%
# What the runs show
# ------------------
# All three reach the minimum; the second-order method needs far fewer iterations (each is
# dearer: several Hessian products), and conjugate gradients fewer than steepest descent.
# Armijo backtracking and the trust-region acceptance test make the cost decrease at every
# iteration.
final = np.array([result.cost for result in results.values()])
assert np.all(final <= 1e-12 * traces["trust regions"][0])
iterations = {name: result.iterations for name, result in results.items()}
assert iterations["trust regions"] < iterations["conjugate gradients"]
assert iterations["conjugate gradients"] < iterations["steepest descent (Armijo)"]
for name in ("steepest descent (Armijo)", "trust regions"):
    assert np.all(np.diff(traces[name]) <= 1e-12 * abs(traces[name][0]))
for result in results.values():
    assert np.allclose(np.linalg.norm(result.point, axis=-1), 1)  # on the manifold

# %%
# The block's cost is the two label-manifold terms of Eq. (4) at the model's U: with
# :mathmpl:`T_m = Z_m^T U`, :mathmpl:`\sum_m \mathrm{tr}(T_m B_m T_m^T)`.
T = np.transpose(results["trust regions"].point, (0, 2, 1)) @ U
assert np.isclose(np.sum((T @ B) * T), results["trust regions"].cost)

# %%
# Convergence
# -----------
fig = Figure(figsize=(6, 4), layout="constrained")
ax = fig.add_subplot()
for name, costs in traces.items():
    ax.semilogy(np.maximum(costs, 1e-16), marker=".", label=name)
ax.set(xlabel="iteration", ylabel="cost (minimum: 0)",
       title="GLOCAL's Z block, same start")
ax.legend()
save_figure(fig, OUT / "tutorial_optimizers.png", overwrite=True)
