r"""
Riemannian optimization on unit-norm rows: GLOCAL's Z step
==========================================================

GLOCAL learns, for every group m of samples, a label Laplacian :mathmpl:`Z_m Z_m^\top`
whose diagonal is fixed to 1: every row :mathmpl:`z_i` of :mathmpl:`Z_m` (one per label)
has unit norm. With U and W fixed, the Z step minimizes

.. mathmpl::

   \sum_m \operatorname{tr}\left(Z_m^\top A_m Z_m\right) = \sum_m \sum_{i,j} (A_m)_{ij} \langle z_i, z_j \rangle,

.. mathmpl::

   A_m = U \left(\frac{\lambda_3 n_m}{n} P^\top P + \lambda_4 P_m^\top P_m\right) U^\top, \qquad P = X W,

where :mathmpl:`A_m` is the Gram matrix of the model's label outputs: labels whose outputs
agree get rows pointing apart (a positive learned correlation
:mathmpl:`-\langle z_i, z_j \rangle`).

Why the constraint: without it Z = 0 would minimize this cost and the regularizer would
vanish. With it, each row lives on a sphere, and the set of all rows is a product of
spheres (an oblique manifold; `glocal.manifolds.UnitRows`). Riemannian optimization moves
along that set: it projects the gradient onto the tangent space of every sphere and maps
each step back by normalizing the rows (a retraction), so every iterate satisfies the
constraint exactly. Here the same Z step is written as a pymanopt problem and solved by
steepest descent, conjugate gradients and trust regions from the same start. With
``n_latent=3`` the rows are points of the ordinary sphere, so their paths can be drawn.

Writes ``oblique_manifold.png`` to ``$GLOCAL_EXAMPLES_OUT`` (default: ``glocal-examples`` in
the system's temporary folder).
"""

import os
import tempfile
import time
from pathlib import Path

import numpy as np
import pymanopt
from matplotlib.figure import Figure
from pymanopt.optimizers import ConjugateGradient, SteepestDescent, TrustRegions

from glocal import GLOCAL
from glocal.datasets import make_glocal_data
from glocal.manifolds import UnitRows, normalize_rows
from glocal.plotting import save_figure

# Figures go to a folder of their own, never into the current one (a checkout).
OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT")
           or Path(tempfile.gettempdir(), "glocal-examples"))

# %%
# A fitted model gives U and W; from them, the l x l weights A_m of every group.
data = make_glocal_data(random_state=0)
model = GLOCAL(n_latent=3, random_state=0).fit(data.X, data.Y)
P = data.X @ model.W_
A = np.stack([model.U_ @ (model.lam3 * np.mean(in_m) * P.T @ P
                          + model.lam4 * P[in_m].T @ P[in_m]) @ model.U_.T
              for in_m in (model.groups_ == m for m in range(model.n_groups_))])
manifold = UnitRows(*model.Z_.shape)  # g x l x k, unit-norm rows


# %%
# The problem: cost, Euclidean gradient and Hessian; pymanopt makes them Riemannian.
# pymanopt 2.2 logs the iterates of steepest descent and conjugate gradients but not of
# trust regions, so every problem records the points where its gradient is asked for:
# once per iterate (trust regions' Hessian products ask again at the same point).
def z_step_problem(path):
    @pymanopt.function.numpy(manifold)
    def cost(Z):
        return np.einsum("mij,mik,mjk->", A, Z, Z)

    @pymanopt.function.numpy(manifold)
    def euclidean_gradient(Z):
        if not path or not np.array_equal(Z, path[-1]):
            path.append(Z.copy())
        return 2 * A @ Z

    @pymanopt.function.numpy(manifold)
    def euclidean_hessian(Z, D):
        return 2 * A @ D

    return pymanopt.Problem(manifold, cost, euclidean_gradient=euclidean_gradient,
                            euclidean_hessian=euclidean_hessian), cost


start = normalize_rows(np.random.default_rng(0).standard_normal(model.Z_.shape))
optimizers = {"steepest descent": SteepestDescent(max_iterations=500, verbosity=0),
              "conjugate gradients": ConjugateGradient(max_iterations=500, verbosity=0),
              "trust regions": TrustRegions(max_iterations=100, verbosity=0)}
paths, costs = {}, {}
for name, optimizer in optimizers.items():
    paths[name] = []
    problem, cost = z_step_problem(paths[name])
    tic = time.perf_counter()
    result = optimizer.run(problem, initial_point=start)
    costs[name] = np.array([cost(Z) for Z in paths[name]])
    print(f"{name:<20} {result.iterations:4d} iterations, {time.perf_counter() - tic:.2f} s,"
          f" cost {result.cost:.3e}")

# %%
# What the constraint means. A plain Euclidean gradient step leaves the spheres;
# every Riemannian iterate is on them, so Z_m Z_m^T keeps its unit diagonal.
gradient = 2 * A @ start
row_norms = np.linalg.norm(start - gradient / np.abs(gradient).max(), axis=-1)
print(f"row norms after a Euclidean gradient step: {row_norms.min():.3f} .. "
      f"{row_norms.max():.3f}")
deviation = max(np.abs(np.linalg.norm(Z, axis=-1) - 1).max()
                for path in paths.values() for Z in path)
print(f"largest | ||z_i|| - 1 | over all Riemannian iterates: {deviation:.1e}")
solution = paths["trust regions"][-1]
gram = solution[0] @ solution[0].T
print(f"diag(Z_1 Z_1^T) of the solution: {np.round(np.diag(gram), 12)}")

# %%
# Figure: cost curves, the rows of group 1 moving on the sphere, and Z_1 Z_1^T.
fig = Figure(figsize=(14, 4.4), layout="constrained")
ax_cost = fig.add_subplot(1, 3, 1)
for name, values in costs.items():
    # Floored at rounding level: the cost can reach 0 (rows orthogonal to all outputs).
    ax_cost.semilogy(np.maximum(values / values[0], 1e-16), marker=".", label=name)
ax_cost.set(xlabel="iteration", ylabel="cost / cost at the start",
            title="Same problem, same start")
ax_cost.legend()

ax_sphere = fig.add_subplot(1, 3, 2, projection="3d")
u, v = np.mgrid[0:2 * np.pi:24j, 0:np.pi:12j]
ax_sphere.plot_wireframe(np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v),
                         color="0.85", linewidth=0.5)
rows = np.array(paths["trust regions"])[:, 0]  # iterations x labels x 3, group 1
for label in range(rows.shape[1]):
    ax_sphere.plot(*rows[:, label].T, color=f"C{label % 10}")
    ax_sphere.scatter(*rows[-1, label], color=f"C{label % 10}", s=15)
ax_sphere.set_box_aspect((1, 1, 1))
ax_sphere.set_title("Rows of $Z_1$ under trust regions\n(one per label, dots: solution)")

ax_gram = fig.add_subplot(1, 3, 3)
image = ax_gram.imshow(gram, cmap="RdBu_r", vmin=-1, vmax=1)
ax_gram.set(title="$Z_1 Z_1^T$ of the solution: unit diagonal", xlabel="label",
            ylabel="label")
fig.colorbar(image, ax=ax_gram)
save_figure(fig, OUT / "oblique_manifold.png", overwrite=True)
