"""Every choice of a fit, made once: `resolve_plan` binds the steps, optimizers and
preconditioners of `glocal.solver.glocal_fit` into a `glocal.solver.steps.Plan`, as
scikit-learn's ridge resolves its solver before it runs. The loops then call what the plan
holds without asking again.

Where each choice is made (the Design page of the documentation has the whole table):

    label fit (loss x mask x storage)   label_fit.resolve_label_fit, when the data is made
    backend (in memory, Dask)           the estimator, as GlocalData.samples
    second moments of X                 resolve_feature_moments
    V on samples or on moments          uses_moments
    Newton steps of V and U per visit   resolve_newton_steps
    V and U by truncated Newton         resolve_truncated_newton
    V algorithm                         resolve_v_step
    U algorithm                         resolve_u_step
    V preconditioner                    resolve_v_preconditioner
    optimizer of every block, W solve   resolve_block_solvers
    W preconditioner                    resolve_w_preconditioner
    correlation term, Z preconditioner  resolve_correlation
    rescaling step                      resolve_plan (``Levers.rebalance``)
    initialisation rounds               resolve_plan (``Levers.init_acceleration``)
    starting point                      resolve_start
"""

from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import scipy.sparse

from . import steps
from .coupling import dense_score_directions, feature_squares, lanczos_score_directions
from .correlations import CORRELATION_TERMS
from .optimizers import BlockSolver, BlockSolvers, FallbackSolver, LinearSystemSolver, \
    TruncatedNewtonSolver
from .preconditioners import DenseW, DiagonalW, DualW, v_column_blocks, v_column_diagonal, \
    v_mean_column
from .second_moments import THROUGH_SAMPLES, Gram, GroupGrams, basic_moments, dense

# Up to this many features a backend keeps X^T X (d x d) in memory: through a backend every
# product with X is a pass over the data. Above it they go through X, chunk by chunk.
MAX_BACKEND_FEATURES = 4000

# Above this many labels the l x l Gram matrix of the ridge scores is not formed (its
# eigendecomposition costs l^3): its top eigenvectors come from Lanczos iterations instead.
MAX_DENSE_LABELS = 2000

# From this many labels the V and U blocks take one Newton step per visit under a loss other
# than the paper's (`resolve_newton_steps`).
MIN_INEXACT_LABELS = 100

# Truncated Newton on the V and U blocks (`resolve_truncated_newton`): trust-region iterations
# per visit and truncated conjugate-gradient steps per iteration.
TRUNCATED_ITERATIONS = 2
TRUNCATED_INNER = 5

AUTO_OPTIMIZERS = {"U": "trust_regions", "V": "trust_regions", "W": "trust_regions"}


@dataclass(frozen=True)
class Levers:
    """Switches of the solver that change how, not what, it minimizes, kept for the
    benchmarks that measure them: ``GLOCAL(solver_options={"_levers": {...}})`` or
    ``glocal_fit(..., levers=Levers(...))``.

    Attributes
    ----------
    init : {"ridge", "random"}
        The basic-model initialisation's start: a truncated ridge fit, or U and V uniform
        in [0, 1) and W zero as in the authors' code.
    init_acceleration : int
        Memory of the Anderson mixing of the basic-model initialisation; 0 runs plain
        U -> V -> W rounds.
    rebalance : bool or "auto"
        After every round of both loops, move (U, V, W) to its best rescaling
        (`glocal.solver.optimizers.rebalance`); "auto": when V is not shrunk (lam_v = 0), where
        block descent drifts along the rescalings. Never on second moments (V implicit).
    use_moments : bool
        Run both loops on second moments where they hold (`uses_moments`).
    z_preconditioner : bool or "auto"
        Precondition the Z block; "auto": when lam3 + lam4 >= lam.
    max_dense_features : int
        Up to this many features the W block is preconditioned by a Cholesky factor of
        lam X^T X + lam2 I (d x d); above it by the Woodbury form (at most as many samples,
        in memory) or the diagonal.
    newton_steps : int or None or "auto"
        Newton steps per visit of the V and U blocks where Newton's method solves them (a loss
        other than the paper's), each with its line search: block descent needs a decrease
        per block, not its minimizer. None solves each visit to convergence; "auto":
        `resolve_newton_steps`.
    truncated_newton : bool
        Solve the V and U blocks under a loss other than the paper's as whole-block problems
        by trust regions, ``truncated_steps`` = (iterations per visit, truncated
        conjugate-gradient steps per iteration), each Hessian product over all entries at
        once, preconditioned by one shared k x k block, where `resolve_truncated_newton`
        allows it. Off by default: see there.
    truncated_steps : tuple of int
        (iterations, inner steps) of the truncated Newton visits.
    """

    init: str = "ridge"
    init_acceleration: int = 5
    rebalance: object = "auto"
    use_moments: bool = True
    z_preconditioner: object = "auto"
    max_dense_features: int = 4000
    newton_steps: object = "auto"
    truncated_newton: bool = False
    truncated_steps: tuple = (TRUNCATED_ITERATIONS, TRUNCATED_INNER)


def resolve_plan(data, n_latent, options, levers, correlation="laplacian"):
    """The `glocal.solver.steps.Plan` of a fit of ``data`` with ``n_latent`` latent labels under
    `glocal.solver.SolverOptions` ``options`` and `Levers` ``levers``; ``correlation`` is a
    `glocal.solver.correlations.CorrelationTerm` or the name of one (`resolve_correlation`)."""
    if isinstance(data.moments, str):  # "auto": not decided by the caller
        data = resolve_feature_moments(
            data, max_features=min(MAX_BACKEND_FEATURES, levers.max_dense_features))
    if isinstance(correlation, str):
        correlation = resolve_correlation(data, levers, correlation)
    on_moments = uses_moments(data, options, levers, correlation)
    rebalance = (data.v_weight == 0 if levers.rebalance == "auto" else bool(levers.rebalance))
    start = resolve_start(data, levers)
    newton_steps = resolve_newton_steps(data, levers.newton_steps)
    truncated = resolve_truncated_newton(data, options, levers.truncated_newton)
    v_step = resolve_v_step(data, options, on_moments, newton_steps, truncated)
    u_step = resolve_u_step(data, options, newton_steps, truncated)
    solvers = resolve_block_solvers(options, correlation.block_names,
                                    levers.truncated_steps if truncated else None)
    w_preconditioner = resolve_w_preconditioner(data, levers.max_dense_features)
    v_preconditioner = resolve_v_preconditioner(data, n_latent)
    space = (steps.MomentSpace(data, basic_moments(data)) if on_moments
             else steps.SampleSpace(data))
    return steps.Plan(
        data, space, correlation, start,
        steps.MixedRounds(levers.init_acceleration) if levers.init_acceleration
        else steps.PlainRounds(),
        v_step, u_step, steps.w_by_problem,
        space.rebalance if rebalance and not on_moments else steps.no_rescaling,
        solvers, w_preconditioner, v_preconditioner)


def resolve_feature_moments(data, memory_limit=2**28, max_features=None):
    """``data`` with its second moments decided (``GlocalData.moments``): X^T X and the
    groups' X_m^T X_m are kept when multiplying by them is cheaper than by X.

    A product with X^T X costs d^2 per column against 2 nnz(X) through X; the g group
    moments cost g d^2. Each is kept only when cheaper and within ``memory_limit`` bytes.
    Through a backend every product with X is a pass over the data, so both are kept whenever
    they fit, all from one pass, and X has at most ``max_features`` columns (None: any); with
    more, the products go through X chunk by chunk (X W and X^T M), and no d x d matrix is
    formed.

    When products go through X and a sparse X in memory has more features than samples, X
    is stored by columns (CSC): X W then reads the d x k W in order and X^T M reads the
    small n x k M, where row storage scatters over d x k arrays.
    """
    X = data.X
    d = X.shape[1]
    nnz = X.nnz if hasattr(X, "nnz") else X.size
    g = data.n_groups
    in_memory = data.samples.in_memory
    cheaper = d * d < 2 * nnz if in_memory else max_features is None or d <= max_features
    keep_gram = cheaper and 8 * d * d <= memory_limit
    keep_groups = (keep_gram and data.has_manifold_terms
                   and (not in_memory or g * d * d < 2 * nnz) and 8 * g * d * d <= memory_limit)
    if not keep_gram:
        if in_memory and scipy.sparse.issparse(X) and d > X.shape[0]:
            X = scipy.sparse.csc_matrix(X)
        return replace(data, X=X, moments=THROUGH_SAMPLES)

    def moments(part):
        if not keep_groups:
            return dense(part.X.T @ part.X), None
        group_grams = np.stack([dense(part.X[idx].T @ part.X[idx])
                                for idx in part.group_index])
        return group_grams.sum(axis=0), group_grams  # X^T X without a second pass over X
    gram, group_grams = data.samples.sum(moments, data, reads="X")
    return replace(data, moments=GroupGrams(gram, group_grams) if keep_groups else Gram(gram))


def resolve_correlation(data, levers, name="laplacian"):
    """The correlation term named ``name`` (`CORRELATION_TERMS`; the paper's,
    `glocal.solver.correlations.laplacians.LabelLaplacians`, by default) with lam3, lam4, its
    blocks preconditioned when the weights are strong, lam3 + lam4 >= lam (``"auto"``): there
    conjugate gradients stall on the Z block; weaker weights, the defaults among them, keep plain
    conjugate gradients. The preconditioner magnifies the steps along the block's flat directions,
    and with them rounding: fits that differ only in rounding (in memory and on Dask, dense and
    sparse labels) then end apart by more than 1e-8."""
    if name not in CORRELATION_TERMS:
        raise ValueError(f"unknown correlation {name!r}; expected one of "
                         f"{sorted(CORRELATION_TERMS)}")
    preconditioned = (data.lam3 + data.lam4 >= data.lam if levers.z_preconditioner == "auto"
                      else bool(levers.z_preconditioner))
    return CORRELATION_TERMS[name](data.lam3, data.lam4, data.group_fractions, preconditioned)


def uses_moments(data, options, levers, correlation):
    """Whether both loops run on second moments (`glocal.solver.steps.MomentSpace`), where they
    hold and save work: every label observed, the paper's loss in closed form, dense labels, X^T X
    kept (and the groups' moments, for an active correlation term) and n >= 2 (d + l); else on the
    samples (`glocal.solver.steps.SampleSpace`)."""
    (l, n), d = data.Y.shape, data.X.shape[1]
    label, moments = data.label, data.moments
    return (levers.use_moments and label.quadratic and not label.masked and not label.sparse
            and options.v_closed_form and moments.has_gram
            and (moments.has_group_grams or not correlation.active) and n >= 2 * (d + l))


def resolve_newton_steps(data, newton_steps="auto"):
    """Newton steps per visit of the V and U blocks under a loss other than the paper's
    (`Levers.newton_steps`), None for each visit solved to convergence. ``"auto"``: one step
    from `MIN_INEXACT_LABELS` labels on, else None. With many labels a Newton step dominates a
    round and one step per visit makes fits 2.5-4 times cheaper at the same test average
    precision; with fewer labels the rounds' stopping rule, fed smaller decreases, stopped
    up to 1 % above the exact blocks' objective and lowered test average precision."""
    if newton_steps != "auto":
        return newton_steps
    return 1 if data.Y.shape[0] >= MIN_INEXACT_LABELS else None


def resolve_truncated_newton(data, options, truncated=False):
    """Whether the V and U blocks are solved by truncated Newton (`Levers.truncated_newton`):
    only where asked, and never under the paper's loss (closed forms and exact
    preconditioners), on a backend that splits the samples (there a pass over them is dear,
    and the fit on Dask must be the fit in memory) or with an optimizer named for U or V.

    It is not the default. Two trust-region iterations per visit, each of at most 5
    truncated conjugate-gradient steps, made one fit 1.2-3.1 times cheaper on design data of
    101-374 labels at ``lam2 = 4`` on raw rows, within 3.5e-3 of the objective of the
    Newton visits. But the rounds' stopping rule reads the decrease of a visit, and a visit
    capped at two iterations can decrease little far from the minimizer: from pymanopt's
    first trust radius, on rcv1subset1 at ``lam2 = 2`` on unit rows, the fit stopped 10 %
    above the Newton visits' objective (test average precision -0.034); with the radius
    scaled to the block (`glocal.solver.optimizers.TruncatedNewtonSolver`), that fit came
    within 1 %, but the generator's 101-label set at ``lam2 = 4`` stopped 3.6 % above
    (-0.0073)."""
    if not isinstance(truncated, (bool, np.bool_)):  # "auto" would read as True
        raise ValueError(f"solver_options['_levers']['truncated_newton'] must be True or False, "
                         f"got {truncated!r}")
    if data.label.quadratic or not data.samples.in_memory or _named(options, "U") or \
            _named(options, "V"):
        return False
    return bool(truncated)


def _named(options, block):
    """Whether ``options.optimizer`` names an optimizer for ``block``."""
    return options.optimizer != "auto" and (not isinstance(options.optimizer, dict)
                                            or block in options.optimizer)


def resolve_v_step(data, options, on_moments, newton_steps=None, truncated=False):
    """The V algorithm: the closed form on second moments; else, with ``v_closed_form``,
    the paper's closed form (its loss) or Newton's method on every column (another loss),
    at most ``newton_steps`` steps per column and visit (None: to convergence); else, or
    ``truncated``, one pymanopt problem (not for sparse labels, which only the closed form
    reads)."""
    label = data.label
    if on_moments:
        return steps.v_implicit
    if truncated:
        return steps.v_by_problem
    if not options.v_closed_form:
        if label.sparse:
            raise ValueError("sparse labels (SparseSignedLabels) need the closed form of V: "
                             "use v_closed_form=True or pass dense labels")
        return steps.v_by_problem
    if label.quadratic:
        return steps.v_closed_form
    return steps.v_newton if newton_steps is None else partial(steps.v_newton,
                                                               max_steps=newton_steps)


def resolve_u_step(data, options, newton_steps=None, truncated=False):
    """The U algorithm: under the paper's loss, or an optimizer named for U, its pymanopt
    problem (`glocal.solver.steps.u_by_problem`; the paper's term makes it a quadratic that
    preconditioned trust regions solve in a step or two); under another loss, Newton's
    method on the rows (`glocal.solver.steps.u_by_newton`), whose Hessian blocks come from the
    entries of nonzero curvature only, at most ``newton_steps`` steps per visit (None: as
    the U block's solver stops). Its line search tries one step size per pass in memory,
    where a pass is cheap, and 12 per pass on a backend that splits the samples. With
    ``truncated``, the pymanopt problem preconditioned by one shared k x k block."""
    if truncated:
        return partial(steps.u_by_problem, shared_blocks=True)
    if data.label.quadratic or _named(options, "U"):
        return steps.u_by_problem
    return partial(steps.u_by_newton, trial_batch=1 if data.samples.in_memory else 12,
                   max_steps=newton_steps)


def resolve_v_preconditioner(data, n_latent, max_block_entries=2**24):
    """The V problem's preconditioner (`glocal.solver.preconditioners`): under the paper's loss the
    inverse of the per-column Hessian blocks (exact), or of their diagonal when the n blocks
    of k x k would exceed ``max_block_entries`` numbers; under another loss the inverse of
    their mean at the start (its blocks change with the active entries as V moves)."""
    if not data.label.quadratic:
        return v_mean_column
    if data.n_samples * n_latent * n_latent <= max_block_entries:
        return v_column_blocks
    return v_column_diagonal


def resolve_block_solvers(options, correlation_blocks, truncated_steps=None):
    """A `glocal.solver.optimizers.BlockSolver` per block under ``options.optimizer``: a name for
    every block, or a dict from block name to name; a block not named takes the ``"auto"``
    choice, the fastest measured: preconditioned trust regions for U and V, for W trust
    regions or conjugate gradients on its linear system when its preconditioner is the
    correlation weights' own (`glocal.solver.optimizers.LinearSystemSolver`), and conjugate
    gradients with trust regions as fallback on a correlation term's blocks
    (`glocal.solver.optimizers.FallbackSolver`). ``truncated_steps`` (iterations, inner steps):
    trust regions capped at those for U and V (truncated Newton, `resolve_truncated_newton`)."""
    common = (options.block_max_iter, options.block_rtol, options.max_inner)
    if isinstance(options.optimizer, dict):
        absent = sorted(set(options.optimizer) - {"U", "V", "W", *correlation_blocks})
        if absent:
            raise ValueError(f"optimizer names the blocks {absent}, which this fit does not "
                             f"have (its correlation term's blocks: "
                             f"{list(correlation_blocks) or 'none'})")
    named = (options.optimizer if isinstance(options.optimizer, dict) else
             {} if options.optimizer == "auto" else
             {name: options.optimizer for name in ("U", "V", "W", *correlation_blocks)})
    solvers = BlockSolvers()
    for name in ("U", "V", "W", *correlation_blocks):
        if name in named:
            solvers[name] = BlockSolver(named[name], *common)
        elif name in ("U", "V") and truncated_steps is not None:
            iterations, inner = truncated_steps
            solvers[name] = TruncatedNewtonSolver("trust_regions", iterations,
                                                  options.block_rtol, inner)
        elif name == "W":
            solvers[name] = LinearSystemSolver(AUTO_OPTIMIZERS[name], *common)
        elif name in AUTO_OPTIMIZERS:
            solvers[name] = BlockSolver(AUTO_OPTIMIZERS[name], *common)
        else:
            solvers[name] = FallbackSolver("conjugate_gradient", *common)
    return solvers


def resolve_w_preconditioner(data, max_dense_features):
    """The W block's preconditioner (`glocal.solver.preconditioners`): a Cholesky factor of
    lam X^T X + lam2 I up to ``max_dense_features`` features (X^T X from the second moments,
    or formed in memory); above it, in memory with at most that many samples, the Woodbury
    form from an n x n factor; else the diagonal of X^T X."""
    X = data.X
    n, d = X.shape
    in_memory = data.samples.in_memory
    if d <= max_dense_features and (in_memory or data.moments.has_gram):
        gram = data.moments.gram if data.moments.has_gram else dense(X.T @ X)
        return DenseW(gram, data.lam, data.lam2, data.group_fractions)
    if n <= max_dense_features and in_memory:
        return DualW(X, data.lam, data.lam2)
    return DiagonalW(feature_squares(data), data.lam, data.lam2, data.group_fractions)


def resolve_start(data, levers):
    """The basic-model initialisation's start (``Levers.init``): the ridge start, its score
    directions by a dense eigendecomposition up to `MAX_DENSE_LABELS` labels and by
    Lanczos iterations above; or the random one."""
    if levers.init == "random":
        return steps.random_start
    if levers.init != "ridge":
        raise ValueError(f"unknown init {levers.init!r}; expected 'ridge' or 'random'")
    return partial(steps.ridge_start,
                   directions=(dense_score_directions if data.Y.shape[0] <= MAX_DENSE_LABELS
                               else lanczos_score_directions))


def resolve_sparse_labels(loss, class_weight, options):
    """Whether a fit keeps scipy-sparse labels sparse (`glocal.labels`): the paper's loss,
    unweighted, V in closed form, the only setting that reads them through products."""
    return options.v_closed_form and loss == "squared" and class_weight is None
