"""The GLOCAL solver: the basic-model initialisation (Eq. (1)) and Algorithm 1 on Eq. (4),
on plain arrays, knowing nothing of scikit-learn.

`glocal_fit` (in `glocal.solver.algorithm`) is Algorithm 1 in one function. What it calls,
from the top down:

* `plan`: every choice of a fit, made once (``resolve_*``), bound into a `steps.Plan`;
* `steps`: what the loops call (the initialisation rounds, the V, U and W updates);
* `problems` (one pymanopt problem per block), `optimizers` (pymanopt's, conjugate
  gradients on a linear system, Anderson mixing), `newton` (Newton's method on the V and U
  blocks), `preconditioners`;
* `correlations`: the correlation terms (the interface and each term);
* the terms of the objective: `objective` (Eq. (1) and (4) block by block), `label_fit`,
  `losses`, `coupling`, `second_moments`;
* how the samples are reached: `backends` (in memory), `dask_backend` (chunks of a Dask
  array).

The manifold of the Z blocks is `glocal.manifolds.UnitRows`.
"""

from .algorithm import GlocalResult, SolverOptions, glocal_fit

__all__ = ["glocal_fit", "SolverOptions", "GlocalResult"]
