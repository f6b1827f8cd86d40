r"""
4. Preconditioning the W block
==============================

Conjugate-gradient-type methods, including the inner solver of trust regions, need more
iterations the more elongated the level sets of the cost are: the condition number of
the Hessian. A **preconditioner** is an approximation of the inverse Hessian; pymanopt's
trust regions apply it to the residual of every inner step, which amounts to measuring
steps in the metric of the approximate Hessian. With the exact inverse Hessian of a
quadratic, one step solves it.

GLOCAL's W block is a quadratic whose Hessian,

.. mathmpl::

   2 \left(\lambda\, X X^\top \otimes I + \lambda_2 I\right) + \mathrm{manifold\ terms},

inherits the conditioning of the features. `glocal.solver.preconditioners.DenseW` inverts the
basic model's part exactly (a Cholesky factor of :mathmpl:`\lambda X X^\top + \lambda_2 I`)
and approximates the manifold terms. Here features are put on very different scales, and the
block is solved by trust regions with and without the preconditioner, counting Hessian
products.
"""

import os
import tempfile
from pathlib import Path

import numpy as np
import pymanopt
from matplotlib.figure import Figure
from pymanopt.manifolds import Euclidean

from glocal import GLOCAL
from glocal.solver import objective as obj
from glocal.datasets import make_glocal_data
from glocal.groups import group_index
from glocal.solver.correlations.laplacians import LabelLaplacians
from glocal.solver.optimizers import run_optimizer
from glocal.solver.plan import resolve_feature_moments
from glocal.plotting import save_figure
from glocal.solver.preconditioners import DenseW

# Figures go to a folder of their own, never into the current one (a checkout).
OUT = Path(os.environ.get("GLOCAL_EXAMPLES_OUT")
           or Path(tempfile.gettempdir(), "glocal-examples"))

# %%
# A W block with badly scaled features
# ------------------------------------
data_set = make_glocal_data(n_samples=400, random_state=0)
X = data_set.X * np.logspace(0, 2, data_set.X.shape[1])  # scales from 1 to 100
model = GLOCAL(n_latent=6, random_state=0).fit(X, data_set.Y)
data = obj.GlocalData(X=X, Y=2.0 * data_set.Y.T - 1, J=None,
                      group_index=group_index(model.groups_), lam=model.lam,
                      lam2=model.lam2, lam3=model.lam3, lam4=model.lam4)
data = resolve_feature_moments(data)  # keep X^T X when products with it are cheaper
U, V, Z = model.U_, model.V_, model.Z_
d, k = model.W_.shape
XtV = X.T @ V.T
V_sq_norm = float(np.sum(V ** 2))
terms = LabelLaplacians(data.lam3, data.lam4, data.group_fractions)
side = terms.w_side(U, Z, None)  # the manifold terms seen from W
gram = X.T @ X
print(f"condition number of X^T X: {np.linalg.cond(gram):.2e}")


def w_block(product, preconditioner, counter):
    """GLOCAL's W block as a pymanopt problem that counts its Hessian products; ``product``
    is its quadratic part (`glocal.solver.objective.w_products`)."""
    decorate = pymanopt.function.numpy(Euclidean(d, k))

    @decorate
    def cost(W):
        return obj.w_cost_grad(W, XtV, V_sq_norm, product, data.lam, data.lam2)[0]

    @decorate
    def euclidean_gradient(W):
        return obj.w_cost_grad(W, XtV, V_sq_norm, product, data.lam, data.lam2)[1]

    @decorate
    def riemannian_hessian(W, D):  # on a Euclidean manifold: the Euclidean Hessian
        counter.append(1)
        return obj.w_hessp(D, product, data.lam2)

    kwargs = {} if preconditioner is None else {"preconditioner": preconditioner}
    return pymanopt.Problem(Euclidean(d, k), cost, euclidean_gradient=euclidean_gradient,
                            riemannian_hessian=riemannian_hessian, **kwargs)


# %%
# Is it an inverse Hessian?
# -------------------------
# For the basic model (no manifold terms, :mathmpl:`H_t = \lambda I`) the preconditioner
# inverts the Hessian exactly: applying both gives back the direction.
preconditioner = DenseW(gram, data.lam, data.lam2, data.group_fractions)
basic_product = obj.w_products(data)[0]
D = np.random.default_rng(0).standard_normal((d, k))
assert np.allclose(preconditioner(None, obj.w_hessp(D, basic_product, data.lam2)), D)

# %%
# Trust regions with and without it
# ---------------------------------
start = np.zeros((d, k))
runs = {}
for name, (product, Ht) in (("basic model", obj.w_products(data)),
                            ("with the manifold terms", obj.w_products(data, side))):
    for label, precondition in (("none", None), ("DenseW", preconditioner.for_weights(Ht))):
        counter = []
        result = run_optimizer("trust_regions", w_block(product, precondition, counter), start,
                               max_iterations=100, min_gradient_norm=1e-8, max_inner=1000)
        runs[name, label] = (result, len(counter))
        print(f"{name:<24} preconditioner {label:<16} {result.iterations:3d} iterations, "
              f"{len(counter):4d} Hessian products, cost {result.cost:.10g}")

# %%
# Same solution, a fraction of the work. For the basic model each inner solve takes a
# single preconditioned step (the outer iterations are those the trust-region radius,
# which starts small, needs to grow to the solution's distance).
for name in ("basic model", "with the manifold terms"):
    (plain, plain_products), (fast, fast_products) = runs[name, "none"], runs[name, "DenseW"]
    assert np.isclose(plain.cost, fast.cost, rtol=1e-8)
    assert fast_products < plain_products / 5
fast, fast_products = runs["basic model", "DenseW"]
assert fast_products <= fast.iterations + 1

# %%
# The work, drawn
# ---------------
fig = Figure(figsize=(7.5, 3.6), layout="constrained")
ax = fig.add_subplot()
names = [f"{name}\n{label}" for name, label in runs]
ax.barh(names, [products for _, products in runs.values()],
        color=["C3", "C0", "C3", "C0"])
ax.set(xlabel="Hessian-vector products", xscale="log",
       title="Trust regions on the W block, features scaled 1 to 100")
ax.invert_yaxis()
save_figure(fig, OUT / "tutorial_preconditioning.png", overwrite=True)
