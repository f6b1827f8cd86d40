r"""
1. The U and W blocks: Euclidean problems
=========================================

With the other blocks fixed, GLOCAL's objective is a convex quadratic in U (and in W). An
optimizer needs three things from such a block: the cost, its gradient and the Hessian
applied to a direction. `glocal.solver.objective` adds them up by hand from the terms of the
objective (the label fit, the coupling, the correlation terms of
`glocal.solver.correlations.laplacians`); `glocal.solver.problems` wraps them as pymanopt problems
on a Euclidean manifold, where the Riemannian gradient and Hessian are the Euclidean ones.

This step builds the U block of a fitted model, checks the hand-written gradient and
Hessian against finite differences, and solves the block by trust regions. Without the
label-manifold terms the U block separates into one small ridge regression per label, so
the solver's answer can be checked against a direct solve.
"""

import os
import tempfile
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from glocal import GLOCAL
from glocal.solver import objective as obj
from glocal.datasets import make_glocal_data
from glocal.groups import group_index
from glocal.solver.correlations.laplacians import LabelLaplacians
from glocal.solver.optimizers import run_optimizer
from glocal.plotting import save_figure
from glocal.solver.problems import u_problem
from glocal.solver.steps import SampleSpace

# Figures go to a folder of their own, never into the current one (a checkout).
OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT")
           or Path(tempfile.gettempdir(), "glocal-examples"))
rng = np.random.default_rng(0)

# %%
# The data of one fit
# -------------------
# `GlocalData` holds what stays fixed during a fit, in the paper's layout: the labels as
# an :mathmpl:`l \times n` matrix of :mathmpl:`\pm 1` (0 where missing), with J marking
# the observed entries.
data_set = make_glocal_data(n_samples=300, random_state=0)
model = GLOCAL(n_latent=5, random_state=0).fit(data_set.X, data_set.Y)
data = obj.GlocalData(X=data_set.X, Y=2.0 * data_set.Y.T - 1, J=None,
                      group_index=group_index(model.groups_), lam=model.lam,
                      lam2=model.lam2, lam3=model.lam3, lam4=model.lam4)
U, V, W, Z = model.U_, model.V_, model.W_, model.Z_
# The label-manifold terms read the latent outputs W^T X through small k x k matrices B_m,
# and in U they are a quadratic form with those weights.
terms = LabelLaplacians(data.lam3, data.lam4, data.group_fractions)
B = terms.label_side(W, SampleSpace(data))   # g x k x k: the manifold terms seen from U
sides = (terms.u_side(Z, B),)
print(f"l={U.shape[0]} labels, k={U.shape[1]} latent labels, g={len(B)} groups")

# %%
# Checking derivatives
# --------------------
# A wrong gradient is the most common bug of hand-written optimization. The first-order
# Taylor expansion gives a check: the remainder
#
# .. mathmpl::
#
#    f(U + tD) - f(U) - t \langle \nabla f(U), D \rangle = O(t^2)
#
# shrinks like :mathmpl:`t^2`, and the gradient's change along D is the Hessian applied
# to D.
# With V fixed the label term is quadratic in U: it is evaluated from small sufficient
# statistics of V (`glocal.solver.label_fit.UStatistics`: :mathmpl:`VV^\top`,
# :mathmpl:`YV^\top`, :mathmpl:`\|Y\|_F^2`), built once per block.
stats = data.label.u_term(V, data)
cost = lambda U: obj.u_cost_grad(U, stats, data.lam2, sides)[0]  # noqa: E731
grad = lambda U: obj.u_cost_grad(U, stats, data.lam2, sides)[1]  # noqa: E731
D = rng.standard_normal(U.shape)
steps = np.logspace(-1, -6, 6)
errors = np.array([abs(cost(U + t * D) - cost(U) - t * np.sum(grad(U) * D))
                   for t in steps])
slope = np.polyfit(np.log(steps), np.log(errors), 1)[0]
print(f"Taylor remainder slope: {slope:.2f} (2 for a correct gradient)")
assert abs(slope - 2) < 0.1

t = 1e-6
hessian_fd = (grad(U + t * D) - grad(U - t * D)) / (2 * t)
hessian = obj.u_hessp(D, stats, data.lam2, U, sides)
print(f"Hessian-vector product vs finite differences: relative error "
      f"{np.linalg.norm(hessian - hessian_fd) / np.linalg.norm(hessian):.1e}")
assert np.allclose(hessian, hessian_fd, rtol=1e-5, atol=1e-6)

# %%
# Solving the block
# -----------------
# `u_problem` returns a pymanopt problem; `run_optimizer` runs trust regions on it. The
# minimizer of a convex quadratic is where the gradient vanishes.
start = rng.standard_normal(U.shape)
result = run_optimizer("trust_regions", u_problem(stats, data.lam2, start, sides), start,
                       max_iterations=50, min_gradient_norm=1e-10, max_inner=100)
print(f"trust regions: {result.iterations} iterations, cost {cost(start):.4g} -> "
      f"{result.cost:.6g}, gradient norm {result.gradient_norm:.1e}")
assert result.cost <= cost(start) and result.gradient_norm < 1e-6

# %%
# Without the manifold terms: one ridge regression per label
# ----------------------------------------------------------
# Then row j of U solves a ridge regression, a direct solve to compare with:
#
# .. mathmpl::
#
#    \left(VV^\top + \lambda_2 I\right) u_j = V y_j .
basic = u_problem(stats, data.lam2, start)
solved = run_optimizer("trust_regions", basic, start, max_iterations=50,
                       min_gradient_norm=1e-10, max_inner=100).point
direct = np.linalg.solve(V @ V.T + data.lam2 * np.eye(V.shape[0]), V @ data.Y.T).T
print(f"trust regions vs direct solve: largest difference "
      f"{np.abs(solved - direct).max():.1e}")
assert np.allclose(solved, direct, atol=1e-8)

# %%
# The Taylor check, drawn
# -----------------------
fig = Figure(figsize=(5.5, 4), layout="constrained")
ax = fig.add_subplot()
ax.loglog(steps, errors, marker="o", label="|f(U+tD) - f(U) - t<grad, D>|")
ax.loglog(steps, errors[0] * (steps / steps[0]) ** 2, "k--", label="slope 2")
ax.set(xlabel="t", ylabel="remainder", title="Gradient check of the U block")
ax.legend()
save_figure(fig, OUT / "tutorial_euclidean_blocks.png", overwrite=True)
