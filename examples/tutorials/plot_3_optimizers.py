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

The cost, gradient and Hessian are GLOCAL's own
(`glocal.solver.correlations.laplacians.z_cost_grad` and `z_hessp`); the problem below records the
cost at every iterate.
"""

import os
from pathlib import Path

import numpy as np
import pymanopt
from matplotlib.figure import Figure
from pymanopt.optimizers import ConjugateGradient, SteepestDescent, TrustRegions
from pymanopt.optimizers.line_search import BackTrackingLineSearcher

from glocal import GLOCAL
from glocal.solver.correlations import laplacians as lap
from glocal.solver import objective as obj
from glocal.datasets import make_glocal_data
from glocal.groups import group_index
from glocal.manifolds import UnitRows, normalize_rows
from glocal.plotting import save_figure
from glocal.solver.problems import block_problem
from glocal.solver.steps import SampleSpace

OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT", "."))

# %%
# The Z block of a fitted model
# -----------------------------
# U and W of a model fitted with the default weights, seen by a Z block with weights
# :mathmpl:`\lambda_3 = \lambda_4 = 1`. Its minimum is 0: the outputs of the fitted model
# span fewer directions than there are latent labels, so the rows of every :mathmpl:`Z_m`
# can all be made orthogonal to them. (This is why GLOCAL's manifold terms often vanish at a solution.)
data_set = make_glocal_data(n_samples=300, n_labels=6, random_state=0)
model = GLOCAL(n_latent=8, random_state=0).fit(data_set.X, data_set.Y)
data = obj.GlocalData(X=data_set.X, Y=2.0 * data_set.Y.T - 1, J=None,
                      group_index=group_index(model.groups_), lam=model.lam,
                      lam2=model.lam2, lam3=1.0, lam4=1.0)
terms = lap.LabelLaplacians(data.lam3, data.lam4, data.group_fractions)
U, B = model.U_, terms.label_side(model.W_, SampleSpace(data))
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
        return lap.z_cost_grad(Z, U, B)[0]

    @decorate
    def euclidean_gradient(Z):
        value, gradient = lap.z_cost_grad(Z, U, B)
        if last[0] is None or not np.array_equal(Z, last[0]):
            last[0] = Z.copy()
            costs.append(value)
        return gradient

    @decorate
    def euclidean_hessian(Z, D):
        return lap.z_hessp(D, U, B)

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
print(f"cost at the start: {lap.z_cost_grad(start, U, B)[0]:.6g}")
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
# The fit hands the same cost, gradient and Hessian to its Z block's solver: the
# correlation terms' ``update`` builds the block (`glocal.solver.correlations.Block`) and the
# solver makes it a pymanopt problem (`glocal.solver.problems.block_problem`).
handed = []
terms.update(U, model.Z_, B, lambda name, block, start: handed.append(block) or (start, 0.0))
assert np.isclose(block_problem(handed[0]).cost(results["trust regions"].point),
                  results["trust regions"].cost)

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
