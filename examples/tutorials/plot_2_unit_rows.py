r"""
2. The manifold of Z: unit-norm rows
====================================

Each :mathmpl:`Z_m` has one row per label, and the constraint
:mathmpl:`\operatorname{diag}(Z_m Z_m^\top) = \mathbf{1}` puts every row on a unit sphere. The Z block therefore lives on a product of spheres,
`glocal.manifolds.UnitRows`. Optimization on it needs four pieces of geometry, each
checked below:

* the **tangent space** at Z: directions whose rows are orthogonal to the rows of Z;
* the **projection** of any array onto it, row by row,
  :mathmpl:`v \mapsto v - \langle z, v \rangle z`;
* a **retraction**, mapping a step from Z along a tangent vector back onto the manifold
  (here: normalize each row);
* the **Riemannian gradient and Hessian**, obtained from the Euclidean ones: the gradient
  is the projected Euclidean gradient; the Hessian is the projected Euclidean Hessian plus
  a curvature term, :mathmpl:`-\langle z, \nabla f \rangle\, v` for every row.
"""

import os
import tempfile
from pathlib import Path

import numpy as np
import pymanopt
from matplotlib.figure import Figure

from glocal.manifolds import UnitRows, normalize_rows
from glocal.plotting import save_figure

# Figures go to a folder of their own, never into the current one (a checkout).
OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT")
           or Path(tempfile.gettempdir(), "glocal-examples"))
rng = np.random.default_rng(0)

# %%
# A quadratic cost on unit rows
# -----------------------------
# The Z step minimizes
#
# .. mathmpl::
#
#    \sum_m \operatorname{tr}\left(Z_m^\top A_m Z_m\right), \qquad A_m = U B_m U^\top \succeq 0
#
# (see the model page). Here g = 2 groups, l = 4 labels, k = 3 latent labels, A random.
g, l, k = 2, 4, 3
M = rng.standard_normal((g, l, l))
A = M @ np.swapaxes(M, 1, 2)
manifold = UnitRows(g, l, k)


def cost(Z):
    return float(np.sum(Z * (A @ Z)))


def euclidean_gradient(Z):
    return 2 * A @ Z


def euclidean_hessian(Z, D):
    return 2 * A @ D


Z = normalize_rows(rng.standard_normal((g, l, k)))  # a random point
assert np.allclose(np.linalg.norm(Z, axis=-1), 1)

# %%
# Tangent space and projection
# ----------------------------
# A curve Z(t) on the manifold keeps :mathmpl:`\|z_i(t)\| = 1`, so its velocity has rows
# orthogonal to those of Z. Projecting removes from every row its component along z_i; projecting twice
# changes nothing.
v = manifold.projection(Z, rng.standard_normal(Z.shape))
print(f"largest <z_i, v_i> of a projected vector: {np.abs(np.sum(Z * v, -1)).max():.1e}")
assert np.allclose(np.sum(Z * v, axis=-1), 0)
assert np.allclose(manifold.projection(Z, v), v)

# %%
# Retraction
# ----------
# A step :mathmpl:`Z + tv` leaves the spheres (by :mathmpl:`t^2 \|v_i\|^2` in squared norm);
# normalizing the rows brings it back, and agrees with the step to first order:
#
# .. mathmpl::
#
#    R(Z, tv) = Z + tv + O(t^2).
for t in (1e-1, 1e-2, 1e-3):
    moved = manifold.retraction(Z, t * v)
    assert np.allclose(np.linalg.norm(moved, axis=-1), 1)
    print(f"t={t:g}: ||R(Z, tv) - (Z + tv)|| = {np.linalg.norm(moved - Z - t * v):.1e}")
assert np.linalg.norm(manifold.retraction(Z, 1e-3 * v) - Z - 1e-3 * v) < 1e-5

# %%
# The Riemannian gradient
# -----------------------
# It is the tangent vector whose inner product with any tangent v is the derivative of the
# cost along a curve leaving Z with velocity v, here t -> R(Z, tv).
riemannian_gradient = manifold.projection(Z, euclidean_gradient(Z))
t = 1e-6
derivative = (cost(manifold.retraction(Z, t * v))
              - cost(manifold.retraction(Z, -t * v))) / (2 * t)
print(f"d/dt f(R(Z, tv)) = {derivative:.8f}, <grad f, v> = "
      f"{np.sum(riemannian_gradient * v):.8f}")
assert np.isclose(derivative, np.sum(riemannian_gradient * v), rtol=1e-6)

# %%
# The Riemannian Hessian
# ----------------------
# On a submanifold it is the derivative of the Riemannian gradient (as a field) along v,
# projected back to the tangent space. For the sphere this gives the formula of
# `UnitRows.euclidean_to_riemannian_hessian`: project the Euclidean Hessian and subtract
# <z_i, egrad_i> v_i, the sphere's curvature acting on the step.
hessian = manifold.euclidean_to_riemannian_hessian(Z, euclidean_gradient(Z),
                                                   euclidean_hessian(Z, v), v)
field = lambda Z: manifold.projection(Z, euclidean_gradient(Z))  # noqa: E731
change = (field(manifold.retraction(Z, t * v)) - field(manifold.retraction(Z, -t * v))) / (2 * t)
hessian_fd = manifold.projection(Z, change)
print(f"Riemannian Hessian vs finite differences: relative error "
      f"{np.linalg.norm(hessian - hessian_fd) / np.linalg.norm(hessian):.1e}")
assert np.allclose(hessian, hessian_fd, rtol=1e-5, atol=1e-7)

# %%
# pymanopt does the same conversion
# ---------------------------------
# Given the Euclidean gradient and Hessian, a `pymanopt.Problem` on `UnitRows` converts them
# with the manifold's projection and Hessian formula: the user never writes the Riemannian
# versions by hand.
decorate = pymanopt.function.numpy(manifold)
problem = pymanopt.Problem(manifold, decorate(cost),
                           euclidean_gradient=decorate(euclidean_gradient),
                           euclidean_hessian=decorate(euclidean_hessian))
assert np.allclose(problem.riemannian_gradient(Z), riemannian_gradient)
assert np.allclose(problem.riemannian_hessian(Z, v), hessian)

# %%
# Drawn on one sphere
# -------------------
# One row z (k = 3), the Euclidean gradient at z, its projection on the tangent plane, and
# the retraction of steps along minus the Riemannian gradient.
z = Z[0, 0]
e = euclidean_gradient(Z)[0, 0]
r = riemannian_gradient[0, 0]
path = np.array([normalize_rows(z - s * r) for s in np.linspace(0, 0.5, 20)])
fig = Figure(figsize=(6, 5.5), layout="constrained")
ax = fig.add_subplot(projection="3d")
u, w = np.mgrid[0:2 * np.pi:30j, 0:np.pi:15j]
ax.plot_wireframe(np.cos(u) * np.sin(w), np.sin(u) * np.sin(w), np.cos(w), color="0.85",
                  linewidth=0.5)
scale = 0.7 / np.linalg.norm(e)
ax.quiver(*z, *(scale * e), color="C3", linewidth=2, label="Euclidean gradient")
ax.quiver(*z, *(scale * r), color="C0", linewidth=2,
          label="Riemannian gradient (its projection)")
ax.plot(*path.T, color="C2", linewidth=3, label="retraction of steps along -grad")
ax.scatter(*z, color="k", s=30)
ax.view_init(elev=np.degrees(np.arcsin(z[2])) + 20, azim=np.degrees(np.arctan2(z[1], z[0])))
ax.set_box_aspect((1, 1, 1), zoom=1.5)
ax.set_axis_off()
ax.set_title("One row of Z on its sphere")
fig.legend(loc="outside lower center", fontsize=9)
save_figure(fig, OUT / "tutorial_unit_rows.png", overwrite=True)
