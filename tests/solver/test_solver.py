"""glocal.solver.glocal_fit: monotone descent, constraints, determinism, optimizer choices."""

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from glocal.solver import backends, optimizers, plan, problems, steps
from glocal.solver.correlations import laplacians as lap
from glocal.solver import objective as obj
from glocal.solver import preconditioners as pre
from glocal._utils.validation import check_labels
from glocal.solver.correlations.interface import FeatureSide
from glocal.groups import group_index
from glocal.solver.plan import Levers, resolve_feature_moments
from glocal.protocol import sample_observed
from glocal.solver import SolverOptions, glocal_fit

N_LATENT = 3


def _data(multilabel_data, missing=True, seed=0, lam3=0.1, lam4=0.1):
    X, Y = multilabel_data(seed, n=60, d=8, l=5)
    if missing:
        Y = sample_observed(Y, 0.6, random_state=seed)
    Y_signed, J = check_labels(Y, X.shape[0])
    groups = np.random.default_rng(seed).permutation(np.arange(60) % 3)
    return obj.GlocalData(X, Y_signed, J, group_index(groups), lam=1.0, lam2=1.0,
                          lam3=lam3, lam4=lam4)


@pytest.fixture(scope="module")
def data(multilabel_data):
    return _data(multilabel_data)


@pytest.fixture(scope="module")
def fitted(data):
    """A default fit, with the callback calls recorded."""
    calls = []
    result = glocal_fit(data, N_LATENT, max_iter=20, init_max_iter=20, tol=1e-8,
                        random_state=0, callback=lambda *args: calls.append(args))
    return result, calls


def test_result_shapes(fitted, data):
    result, _ = fitted
    l, n = data.Y.shape
    g, d = len(data.group_index), data.X.shape[1]
    assert result.U.shape == (l, N_LATENT)
    assert result.V.shape == (N_LATENT, n)
    assert result.W.shape == (d, N_LATENT)
    assert result.Z.shape == (g, l, N_LATENT)
    assert len(result.objective_history) == result.n_iter + 1
    assert 1 <= result.n_init_iter <= 20 and 1 <= result.n_iter <= 20
    assert set(result.times) == {"init", "main"}


def test_history_never_increases(fitted):
    result, calls = fitted
    history = np.array(result.objective_history)
    assert np.all(np.isfinite(history))
    assert np.all(np.diff(history) <= 1e-10 * np.abs(history[:-1]))
    assert history[-1] < history[0]  # the main loop did lower the objective
    init_values = np.array([value for stage, _, value in calls if stage == "init"])
    assert np.all(np.diff(init_values) <= 1e-10 * np.abs(init_values[:-1]))


def test_callback_reports_every_round(fitted):
    result, calls = fitted
    init_calls = [c for c in calls if c[0] == "init"]
    main_calls = [c for c in calls if c[0] == "main"]
    assert [c[1] for c in init_calls] == list(range(1, result.n_init_iter + 1))
    assert [c[1] for c in main_calls] == list(range(1, result.n_iter + 1))
    np.testing.assert_array_equal([c[2] for c in main_calls], result.objective_history[1:])


def test_last_history_value_is_the_objective_at_the_returned_point(fitted, data,
                                                                 paper_objective):
    result, _ = fitted
    value = lap.objective(result.U, result.V, result.W, result.Z, data)
    assert result.objective_history[-1] == pytest.approx(value, rel=1e-12)
    independent = paper_objective(result.U, result.V, result.W, result.Z, data.X, data.Y, data.J,
                                  data.group_index, data.lam, data.lam2, data.lam3, data.lam4)
    assert result.objective_history[-1] == pytest.approx(independent, rel=1e-10)


def test_z_rows_unit_norm(fitted):
    result, _ = fitted
    np.testing.assert_allclose(np.linalg.norm(result.Z, axis=-1), 1.0, atol=1e-12)


def test_deterministic_for_a_given_random_state(data):
    a = glocal_fit(data, N_LATENT, max_iter=5, init_max_iter=5, random_state=3,
                   levers=Levers(init="random"))
    b = glocal_fit(data, N_LATENT, max_iter=5, init_max_iter=5, random_state=3,
                   levers=Levers(init="random"))
    for x, y in [(a.U, b.U), (a.V, b.V), (a.W, b.W), (a.Z, b.Z)]:
        np.testing.assert_array_equal(x, y)
    assert a.objective_history == b.objective_history
    c = glocal_fit(data, N_LATENT, max_iter=5, init_max_iter=5, random_state=4,
                   levers=Levers(init="random"))
    assert not np.array_equal(a.U, c.U)  # the seed does matter


def test_max_iter_zero_returns_the_basic_model_initialisation(data):
    result = glocal_fit(data, N_LATENT, max_iter=0, init_max_iter=4, random_state=0)
    assert result.n_iter == 0 and len(result.objective_history) == 1
    assert result.objective_history[0] == pytest.approx(
        lap.objective(result.U, result.V, result.W, result.Z, data), rel=1e-12)


def _block_names(monkeypatch):
    """Name every block solver after its block in the plan's solvers (for a recording)."""
    resolve = plan.resolve_block_solvers

    def named(*args):
        solvers = resolve(*args)
        for name, solver in solvers.items():
            solver.block = name
        return solvers
    monkeypatch.setattr(plan, "resolve_block_solvers", named)


def test_every_block_step_keeps_constraints_and_never_raises_its_cost(data, monkeypatch):
    """Wrap the block solvers: each Z result has unit rows, no block ends above its
    start."""
    records = []
    original = optimizers.BlockSolver.solve

    def recording(self, problem, start):
        point, decrease = original(self, problem, start)
        start_cost, end_cost = (problem.cost_and_gradient(x)[0] for x in (start, point))
        assert decrease == pytest.approx(start_cost - end_cost, rel=1e-12, abs=1e-12)
        records.append((self.block, start_cost, end_cost, point))
        return point, decrease

    _block_names(monkeypatch)
    monkeypatch.setattr(optimizers.BlockSolver, "solve", recording)
    result = glocal_fit(data, N_LATENT, max_iter=6, init_max_iter=4, tol=0.0,
                        random_state=1, options=SolverOptions(v_closed_form=False))
    z_steps = [r for r in records if r[0] == "Z"]
    assert len(z_steps) == result.n_iter == 6
    for _, _, _, Z in z_steps:
        np.testing.assert_allclose(np.linalg.norm(Z, axis=-1), 1.0, atol=1e-12)
    assert {r[0] for r in records} == {"U", "V", "W", "Z"}
    for block, start_cost, end_cost, _ in records:
        assert end_cost <= start_cost, block
    # The Z steps do move Z (the constraint is not kept by standing still).
    assert any(end < start - 1e-12 * abs(start) for block, start, end, _ in z_steps)


def _solvers(options=None):
    return plan.resolve_block_solvers(options or SolverOptions(), ("Z",))


def _z_problem(U, B, shape, preconditioned=False):
    """The Z block's problem as the paper's terms hand it to their solver."""
    blocks = []
    terms = lap.LabelLaplacians(1.0, 1.0, np.full(shape[0], 1.0 / shape[0]), preconditioned)
    terms.update(U, np.ones(shape), B, lambda name, block, start: blocks.append(block))
    return problems.block_problem(blocks[0])


def _v_problem(U, W, data, V):
    return problems.v_problem(U, data.X @ W, data, V,
                              plan.resolve_v_preconditioner(data, U.shape[1]))


def test_solve_block_keeps_start_when_optimizer_goes_up(data, monkeypatch):
    U, V, W = np.ones((5, 3)), np.ones((3, 60)), np.zeros((8, 3))
    problem = _v_problem(U, W, data, V)

    class Worse:
        point = V + 10.0
        cost = problem.cost_and_gradient(V + 10.0)[0]

    assert Worse.cost > problem.cost_and_gradient(V)[0]
    monkeypatch.setattr(optimizers, "run_optimizer", lambda *args, **kwargs: Worse)
    assert _solvers()["V"](problem, V) == (V, 0.0)


def test_solve_block_skips_stationary_start(data, monkeypatch):
    """At an exact stationary point the optimizer is not even called."""
    def fail(*args, **kwargs):
        raise AssertionError("optimizer called at a stationary point")

    monkeypatch.setattr(optimizers, "run_optimizer", fail)
    U = np.ones((5, 3))
    B = np.zeros((3, 3, 3))  # no manifold terms: the Z cost is identically 0
    Z = np.full((3, 5, 3), 1 / np.sqrt(3))
    point, decrease = _solvers()["Z"](_z_problem(U, B, Z.shape), Z)
    assert point is Z and decrease == 0.0


def test_z_block_falls_back_on_trust_regions_where_cg_stalls():
    """Near the minimizer the gradient is small next to the curvature: pymanopt's CG tries a
    unit step, halves it 10 times, finds no decrease and stops. The automatic choice must
    still take the block most of the way down, and keep unit rows."""
    rng = np.random.default_rng(0)
    U = rng.standard_normal((8, 3))
    B = np.stack([A @ A.T for A in rng.standard_normal((2, 3, 3))])
    Z = rng.standard_normal((2, 8, 3))
    Z /= np.linalg.norm(Z, axis=-1, keepdims=True)
    problem = _z_problem(U, B, Z.shape)
    best = optimizers.run_optimizer("trust_regions", problem, Z, 1000, 1e-12, 50).point
    start = best + 1e-4 * rng.standard_normal(best.shape)
    start /= np.linalg.norm(start, axis=-1, keepdims=True)
    gap = problem.cost_and_gradient(start)[0] - problem.cost_and_gradient(best)[0]
    assert gap > 0
    cg_only = SolverOptions(optimizer={"Z": "conjugate_gradient"})
    _, cg_drop = _solvers(cg_only)["Z"].solve(problem, start)
    point, drop = _solvers()["Z"].solve(problem, start)
    assert drop >= cg_drop and drop > 0.9 * gap
    np.testing.assert_allclose(np.linalg.norm(point, axis=-1), 1.0, rtol=1e-12)


def test_z_preconditioner_is_positive_definite_on_the_tangent_space_and_keeps_the_minimum():
    rng = np.random.default_rng(7)
    U = rng.standard_normal((8, 3))
    B = 1e3 * np.stack([A @ A.T for A in rng.standard_normal((2, 3, 3))])
    Z = rng.standard_normal((2, 8, 3))
    Z /= np.linalg.norm(Z, axis=-1, keepdims=True)
    plain = _z_problem(U, B, Z.shape)
    problem = _z_problem(U, B, Z.shape, preconditioned=True)
    tangent = [problem.manifold.projection(Z, rng.standard_normal(Z.shape)) for _ in range(2)]
    images = [problem.preconditioner(Z, t) for t in tangent]
    np.testing.assert_allclose(problem.manifold.projection(Z, images[0]), images[0],
                               atol=1e-12)
    assert np.vdot(tangent[0], images[1]) == pytest.approx(np.vdot(tangent[1], images[0]))
    assert np.vdot(tangent[0], images[0]) > 0
    best = optimizers.run_optimizer("trust_regions", plain, Z, 1000, 1e-10, 50).cost
    for name in ("conjugate_gradient", "trust_regions"):
        result = optimizers.run_optimizer(name, problem, Z, 1000, 1e-10, 50)
        assert result.cost == pytest.approx(best, rel=1e-6, abs=1e-9)
        np.testing.assert_allclose(np.linalg.norm(result.point, axis=-1), 1.0, rtol=1e-12)


@pytest.mark.parametrize("lam3, lam4, expected", [(1e-3, 1e-3, False), (1.0, 0.0, True),
                                                  (0.5, 0.5, True)])
def test_z_preconditioner_auto_follows_the_weights(data, monkeypatch, lam3, lam4, expected):
    seen = []
    preconditioner = lap.unit_rows_preconditioner
    monkeypatch.setattr(lap, "unit_rows_preconditioner",
                        lambda *args: seen.append(1) or preconditioner(*args))
    glocal_fit(replace(data, lam3=lam3, lam4=lam4), N_LATENT, max_iter=1, init_max_iter=1,
               random_state=0)
    assert seen == ([1] if expected else [])
    assert plan.resolve_correlation(replace(data, lam3=lam3, lam4=lam4),
                                    Levers()).preconditioned == expected


def test_block_solver_choice():
    def kind(optimizer, block):
        solver = plan.resolve_block_solvers(SolverOptions(optimizer=optimizer), ("Z",))[block]
        return type(solver), solver.name

    assert kind("auto", "Z") == (optimizers.FallbackSolver, "conjugate_gradient")
    assert kind("auto", "U") == (optimizers.BlockSolver, "trust_regions")
    assert kind("auto", "W") == (optimizers.LinearSystemSolver, "trust_regions")
    assert kind("steepest_descent", "W") == (optimizers.BlockSolver, "steepest_descent")
    assert kind({"U": "steepest_descent"}, "U") == (optimizers.BlockSolver, "steepest_descent")
    assert kind({"U": "steepest_descent"}, "Z") == (optimizers.FallbackSolver,
                                                    "conjugate_gradient")


# --- the solution does not depend on how the blocks are solved ---------------------------
#
# Measured on this problem (n=60, d=8, l=5, k=3, g=3, 40% missing, lam3 = lam4 = 0.1) with
# max_iter = init_max_iter = 300, tol = 1e-12, block_rtol = 1e-8: every option below ends
# within 3e-7 (relative) of the "auto" value, with either init (CG stops first, at ~2.7e-7).
# The bound 1e-5 leaves a margin of ~30x for BLAS and platform differences while still being
# far below the objective's drop over the main loop.

OPTIONS = [
    ("auto", True, "ridge"),
    ("trust_regions", True, "ridge"),
    ("conjugate_gradient", True, "ridge"),
    ("steepest_descent", True, "ridge"),
    ({"U": "conjugate_gradient", "Z": "steepest_descent", "W": "steepest_descent"}, True,
     "ridge"),
    ("auto", False, "ridge"),
    ("steepest_descent", False, "ridge"),
    ("auto", True, "random"),
    ("trust_regions", False, "random"),
]


@pytest.fixture(scope="module")
def reference_value(data):
    result = glocal_fit(data, N_LATENT, max_iter=300, init_max_iter=300, tol=1e-12,
                        random_state=0, options=SolverOptions(block_rtol=1e-8))
    return result.objective_history


@pytest.mark.parametrize("optimizer, v_closed_form, init", OPTIONS,
                         ids=[f"{o if isinstance(o, str) else 'dict'}-v{int(v)}-{i}"
                              for o, v, i in OPTIONS])
def test_optimizers_reach_the_same_objective(data, reference_value, optimizer, v_closed_form,
                                             init):
    options = SolverOptions(optimizer=optimizer, v_closed_form=v_closed_form, block_rtol=1e-8)
    result = glocal_fit(data, N_LATENT, max_iter=300, init_max_iter=300, tol=1e-12,
                        random_state=0, options=options, levers=Levers(init=init))
    value = result.objective_history[-1]
    assert value == pytest.approx(reference_value[-1], rel=1e-5)
    # The tolerance is meaningful: the main loop moved the objective by far more.
    assert reference_value[0] - reference_value[-1] > 1e-3 * reference_value[-1]
    np.testing.assert_allclose(np.linalg.norm(result.Z, axis=-1), 1.0, atol=1e-12)


def test_optimizer_name_is_checked(data):
    with pytest.raises(ValueError, match="unknown optimizer"):
        glocal_fit(data, N_LATENT, max_iter=1, init_max_iter=1,
                   options=SolverOptions(optimizer="newton"))


# --- the two starting points ---------------------------------------------------------------

def _start(data, n_latent, init):
    """The basic-model initialisation's start and the correlation term's, as a fit draws
    them."""
    fit = plan.resolve_plan(data, n_latent, SolverOptions(), Levers(init=init))
    rng = np.random.default_rng(0)
    Z = fit.correlation.start(len(data.group_index), data.Y.shape[0], n_latent, rng)
    U, V, W = fit.start(fit, n_latent, rng)
    return U, fit.space.array(V), W, Z


def test_random_init(data):
    U, V, W, Z = _start(data, N_LATENT, "random")
    assert np.all((U >= 0) & (U < 1)) and np.all((V >= 0) & (V < 1))
    assert U.shape == (5, N_LATENT) and V.shape == (N_LATENT, 60)
    assert np.all(W == 0.0) and W.shape == (8, N_LATENT)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=-1), 1.0, atol=1e-12)


@pytest.mark.parametrize("n_latent", [2, 7])
def test_ridge_init_is_the_balanced_truncated_ridge_fit(data, n_latent):
    """U V is the best rank-k approximation of the ridge scores, V = (X W)^T, U^T U = V V^T."""
    U, V, W, Z = _start(data, n_latent, "ridge")
    X, lam, lam2 = data.X, data.lam, data.lam2
    W_ridge = np.linalg.solve(lam * X.T @ X + lam2 * np.eye(X.shape[1]), lam * X.T @ data.Y.T)
    F = (X @ W_ridge).T
    left, singular, right = np.linalg.svd(F, full_matrices=False)
    rank = min(n_latent, F.shape[0])
    best = (left[:, :rank] * singular[:rank]) @ right[:rank]
    np.testing.assert_allclose(V, (X @ W).T, atol=1e-12)
    if n_latent <= F.shape[0]:
        np.testing.assert_allclose(U @ V, best, atol=1e-9 * np.abs(best).max())
        np.testing.assert_allclose(U.T @ U, V @ V.T, atol=1e-9 * np.abs(U.T @ U).max())
    else:  # spare latent dimensions start small, so U V is still close to the ridge fit
        np.testing.assert_allclose(U @ V, best, atol=1e-2 * np.abs(best).max())
        assert np.all(np.isfinite(U)) and np.abs(U[:, rank:]).max() < 1e-2
    np.testing.assert_allclose(np.linalg.norm(Z, axis=-1), 1.0, atol=1e-12)


@pytest.mark.parametrize("init", ["ridge", "random"])
def test_both_inits_fit(data, init):
    result = glocal_fit(data, N_LATENT, max_iter=5, init_max_iter=5, random_state=0,
                        levers=Levers(init=init))
    history = np.array(result.objective_history)
    assert np.all(np.isfinite(history))
    assert np.all(np.diff(history) <= 1e-10 * np.abs(history[:-1]))


def test_block_history_follows_the_objective(data):
    result = glocal_fit(data, N_LATENT, max_iter=5, init_max_iter=3, tol=0.0, random_state=2)
    blocks = np.array(result.block_history)
    assert blocks.shape == (result.n_iter, 4)
    # after W, the block values reach the recomputed objective of the iteration
    np.testing.assert_allclose(blocks[:, -1], result.objective_history[1:], rtol=1e-9)
    # Z, V, U, W one after the other, iteration after iteration: never up
    sequence = np.concatenate([[result.objective_history[0]], blocks.ravel()])
    assert np.all(np.diff(sequence) <= 1e-10 * np.abs(sequence[:-1]))
    basic = np.array(result.init_history)
    assert len(basic) == result.n_init_iter + 1
    assert np.all(np.diff(basic) <= 1e-10 * np.abs(basic[:-1]))


# --- the W preconditioner -----------------------------------------------------------------

def _decided(data):
    """The data with its second moments decided, as a fit starts."""
    return resolve_feature_moments(data) if isinstance(data.moments, str) else data


def _w_preconditioner(data, max_dense_features=4000):
    return plan.resolve_w_preconditioner(_decided(data), max_dense_features)


def _w_hessp(D, data, side=None):
    return obj.w_hessp(D, obj.w_products(_decided(data), side)[0], data.lam2)


@pytest.mark.parametrize("max_dense_features", [4000, 1], ids=["eigen", "diagonal"])
def test_w_preconditioner_inverts_the_hessian_when_groups_agree(data, max_dense_features):
    """With one H for every group, C (x) Hbar + lam2 I is the exact W Hessian (halved)."""
    rng = np.random.default_rng(4)
    k = N_LATENT
    A = rng.standard_normal((k, k))
    H = np.broadcast_to(5.0 * A @ A.T, (len(data.group_index), k, k))  # strong manifold terms
    side = FeatureSide(H)
    w_preconditioner = _w_preconditioner(data, max_dense_features)
    assert isinstance(w_preconditioner, pre.DenseW if max_dense_features > 1 else pre.DiagonalW)
    preconditioner = w_preconditioner.for_weights(obj.w_products(_decided(data), side)[1])
    D = rng.standard_normal((data.X.shape[1], k))
    if max_dense_features > 1:
        np.testing.assert_allclose(preconditioner(None, _w_hessp(D, data, side)), D,
                                   rtol=1e-8, atol=1e-10)
    else:  # the diagonal of C stands in for C: exact on a diagonal Gram matrix only
        result = preconditioner(None, _w_hessp(D, data, side))
        assert np.all(np.isfinite(result)) and result.shape == D.shape


def _strong_w_block(data, lam3, lam4, seed):
    """The data with weights lam3, lam4, a random V and the W block's side at a random U, Z."""
    strong = replace(data, lam3=lam3, lam4=lam4)
    rng = np.random.default_rng(seed)
    U, V = rng.standard_normal((5, N_LATENT)), rng.standard_normal((N_LATENT, 60))
    Z = rng.standard_normal((len(data.group_index), 5, N_LATENT))
    Z /= np.linalg.norm(Z, axis=-1, keepdims=True)
    terms = lap.LabelLaplacians(lam3, lam4, strong.group_fractions)
    return strong, V, terms.w_side(U, Z, None)


def _w_problem(V, side, data, w_preconditioner):
    XtV = np.asarray(data.X.T @ V.T)
    return problems.w_problem(XtV, float(np.sum(V ** 2)), _decided(data), w_preconditioner,
                              side)


def test_w_preconditioner_speeds_up_strong_manifold_terms(data, monkeypatch):
    """Trust regions on a W block with large lam3, lam4 need few inner steps with it."""
    strong, V, side = _strong_w_block(data, 5.0, 5.0, seed=5)
    calls = []
    hessp = obj.w_hessp
    monkeypatch.setattr(obj, "w_hessp", lambda *args: calls.append(1) or hessp(*args))
    counts = {}
    for name in ("with", "basic"):
        preconditioner = _w_preconditioner(strong)
        if name == "basic":
            preconditioner.for_weights = lambda Ht, basic=preconditioner: basic
        problem = _w_problem(V, side, strong, preconditioner)
        start = np.zeros((data.X.shape[1], N_LATENT))
        calls.clear()
        result = optimizers.run_optimizer("trust_regions", problem, start, 100, 1e-8, 50)
        counts[name] = (len(calls), result.cost)
    assert counts["with"][1] == pytest.approx(counts["basic"][1], rel=1e-8)
    assert counts["with"][0] < counts["basic"][0]


def test_strong_w_block_is_solved_as_a_linear_system(data, monkeypatch):
    """Where the W preconditioner is the weights' own (large manifold terms), the automatic
    choice runs conjugate gradients on the block's linear system: the trust regions'
    minimizer, reached with every step lowering the cost."""
    strong, V, side = _strong_w_block(data, 5.0, 50.0, seed=6)
    problem = _w_problem(V, side, strong, _w_preconditioner(strong))
    assert problem.linear_system is not None
    start = np.zeros((data.X.shape[1], N_LATENT))
    best = optimizers.run_optimizer("trust_regions", problem, start, 1000, 1e-10, 50)
    costs = [optimizers.solve_linear_system(problem, start, n, 0.0).cost for n in range(8)]
    assert np.all(np.diff(costs) <= 1e-12 * abs(costs[0]))
    calls = []
    linear_solve = optimizers.solve_linear_system
    monkeypatch.setattr(optimizers, "solve_linear_system",
                        lambda *args: calls.append(1) or linear_solve(*args))
    point, drop = _solvers(SolverOptions(block_rtol=1e-10))["W"].solve(problem, start)
    assert calls == [1]
    np.testing.assert_allclose(point, best.point, rtol=1e-6, atol=1e-8)
    assert drop == pytest.approx(costs[0] - best.cost, rel=1e-8)
    # Without manifold terms the preconditioner is exact: trust regions, one Newton step.
    basic = _w_problem(V, None, data, _w_preconditioner(data))
    assert basic.linear_system is None


# --- convergence flags and the warning --------------------------------------------------

def test_convergence_flags(data):
    capped = glocal_fit(data, N_LATENT, max_iter=1, init_max_iter=1, tol=0.0, random_state=0)
    assert not capped.init_converged and not capped.converged
    done = glocal_fit(data, N_LATENT, max_iter=200, init_max_iter=200, tol=1e-4,
                      random_state=0)
    assert done.init_converged and done.converged
    assert done.n_init_iter < 200 and done.n_iter < 200


def test_estimator_warns_when_a_loop_hits_its_cap(multilabel_data):
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from glocal import GLOCAL

    X, Y = multilabel_data(0, n=60, d=8, l=5)
    with pytest.warns(ConvergenceWarning,
                      match="basic-model initialisation stopped at init_max_iter=1"):
        GLOCAL(n_latent=3, n_groups=2, init_max_iter=1, tol=0.0, random_state=0).fit(X, Y)
    with pytest.warns(ConvergenceWarning, match="main loop stopped at max_iter=1"):
        GLOCAL(n_latent=3, n_groups=2, max_iter=1, tol=0.0, random_state=0).fit(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        GLOCAL(n_latent=3, n_groups=2, max_iter=200, init_max_iter=200,
               random_state=0).fit(X, Y)


# --- the accelerated basic-model initialisation ------------------------------------------

def test_anderson_solves_a_linear_fixed_point_in_few_steps():
    """On an affine contraction in R^m, Anderson with memory m is exact after m + 1 steps."""
    rng = np.random.default_rng(0)
    m = 4
    A = rng.standard_normal((m, m))
    A *= 0.9 / np.max(np.abs(np.linalg.eigvals(A)))
    b = rng.standard_normal(m)
    fixed = np.linalg.solve(np.eye(m) - A, b)
    mixing = optimizers.Anderson(m)
    x = np.zeros(m)
    for _ in range(m + 2):
        mixed = mixing.step(x, A @ x + b)
        x = A @ x + b if mixed is None else mixed
    np.testing.assert_allclose(x, fixed, rtol=1e-8)


def test_anderson_at_a_fixed_point_does_not_extrapolate():
    """Once the residual stops changing, there is nothing to mix (no singular solve)."""
    mixing = optimizers.Anderson(3)
    x = np.ones(4)
    for _ in range(4):
        assert mixing.step(x, x) is None


@pytest.mark.parametrize("missing", [True, False], ids=["missing", "full"])
def test_accelerated_initialisation_reaches_the_plain_one(multilabel_data, missing):
    """Both initialisations converge to the same basic-model value; the mixed one in fewer
    rounds, and each of its rounds lowers the basic objective."""
    data = _data(multilabel_data, missing=missing, seed=2)
    runs = {}
    for memory in (0, 5):
        runs[memory] = glocal_fit(data, N_LATENT, max_iter=0, init_max_iter=2000, tol=1e-13,
                                  random_state=0, options=SolverOptions(block_rtol=1e-10),
                                  levers=Levers(init_acceleration=memory))
    plain, mixed = runs[0].init_history, runs[5].init_history
    assert mixed[-1] == pytest.approx(plain[-1], rel=1e-7)
    assert mixed[-1] < plain[0] - 1e-3 * abs(plain[0])  # the initialisation did move
    assert np.all(np.diff(mixed) <= 0.0)
    assert runs[5].n_init_iter < runs[0].n_init_iter


def test_accelerated_fit_is_no_worse_than_the_plain_one(data):
    """At the default tol, the whole fit ends within tol of the unaccelerated solver (or
    lower)."""
    values = {}
    for memory in (0, 5):
        result = glocal_fit(data, N_LATENT, random_state=0,
                            levers=Levers(init_acceleration=memory))
        values[memory] = result.objective_history[-1]
    assert values[5] <= values[0] * (1 + 1e-4)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "csr"])
def test_w_preconditioner_woodbury_inverts_the_basic_hessian(sparse):
    """More features than the limit, fewer samples: the n x n (Woodbury) form is exact for
    the basic model and builds no d x d matrix."""
    import scipy.sparse as sp

    rng = np.random.default_rng(6)
    n, d, k = 20, 40, N_LATENT
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < 0.3)
    X = sp.csr_matrix(X) if sparse else X
    Y = np.where(rng.random((4, n)) < 0.5, 1.0, -1.0)
    data = obj.GlocalData(X, Y, None, [np.arange(n)], lam=0.7, lam2=0.3)
    preconditioner = _w_preconditioner(data, max_dense_features=30)
    assert isinstance(preconditioner, pre.DualW)
    assert preconditioner._dual[0].shape == (n, n)
    D = rng.standard_normal((d, k))
    np.testing.assert_allclose(preconditioner(None, _w_hessp(D, data)), D,
                               rtol=1e-8, atol=1e-10)
    Ht = obj.w_products(_decided(data), FeatureSide(np.zeros((1, k, k))))[1]
    assert preconditioner.for_weights(Ht) is preconditioner


def test_estimator_passes_solver_options(multilabel_data):
    from glocal import GLOCAL

    X, Y = multilabel_data(0, n=60, d=8, l=5)
    plain = GLOCAL(n_latent=3, n_groups=2, random_state=0, tol=1e-8, max_iter=100,
                   init_max_iter=500,
                   solver_options={"_levers": {"init_acceleration": 0}}).fit(X, Y)
    mixed = GLOCAL(n_latent=3, n_groups=2, random_state=0, tol=1e-8, max_iter=100,
                   init_max_iter=500).fit(X, Y)
    assert mixed.n_init_iter_ < plain.n_init_iter_
    with pytest.raises(ValueError, match=r"unknown solver_options \['speed'\]"):
        GLOCAL(solver_options={"speed": 2}).fit(X, Y)
    # The benchmarks' switches are not options: only under "_levers".
    with pytest.raises(ValueError, match=r"unknown solver_options \['use_moments'\]"):
        GLOCAL(solver_options={"use_moments": False}).fit(X, Y)
    with pytest.raises(ValueError, match=r"unknown solver_options\['_levers'\] \['speed'\]"):
        GLOCAL(solver_options={"_levers": {"speed": 2}}).fit(X, Y)


@pytest.mark.parametrize("acceleration", [0, 5])
def test_moment_blocks_take_the_sample_iterations(multilabel_data, acceleration):
    """Full labels: both loops on second moments take the same iterations as on the samples."""
    data = _data(multilabel_data, missing=False, seed=3)
    fits = [glocal_fit(data, N_LATENT, max_iter=3, init_max_iter=15, tol=1e-10, random_state=0,
                       levers=Levers(init_acceleration=acceleration, use_moments=moments))
            for moments in (False, True)]
    sample, moment = fits
    assert moment.n_init_iter == sample.n_init_iter > 3
    np.testing.assert_allclose(moment.init_history, sample.init_history, rtol=1e-10)
    np.testing.assert_allclose(moment.objective_history, sample.objective_history, rtol=1e-9)
    np.testing.assert_allclose(np.ravel(moment.block_history), np.ravel(sample.block_history),
                               rtol=1e-9)
    for a, b in zip((moment.U, moment.V, moment.W), (sample.U, sample.V, sample.W)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8 * np.abs(b).max())
    # The expanded objective of the moments is the objective at the returned point.
    assert moment.objective_history[-1] == pytest.approx(
        lap.objective(moment.U, moment.V, moment.W, moment.Z, data), rel=1e-10)


def test_moment_blocks_from_a_given_point_without_initialisation(multilabel_data):
    """A path step (initial point given, no initialisation round): V enters as an array."""
    data = _data(multilabel_data, missing=False, seed=4)
    start = glocal_fit(data, N_LATENT, max_iter=2, random_state=0)
    point = (start.U, start.V + 0.1, start.W, start.Z)
    sample, moment = [glocal_fit(data, N_LATENT, max_iter=4, init_max_iter=0, tol=1e-12,
                                 initial_point=point, levers=Levers(use_moments=moments))
                      for moments in (False, True)]
    np.testing.assert_allclose(moment.objective_history, sample.objective_history, rtol=1e-9)
    np.testing.assert_allclose(np.ravel(moment.block_history), np.ravel(sample.block_history),
                               rtol=1e-9)
    np.testing.assert_allclose(moment.V, sample.V, rtol=1e-6, atol=1e-8 * np.abs(sample.V).max())


def test_moment_blocks_pass_over_the_samples_a_fixed_number_of_times(multilabel_data,
                                                                    monkeypatch):
    """On second moments the passes over the samples (the backend's sums and maps: what a
    Dask backend runs on the workers) do not grow with the iterations; on the samples they
    do."""
    data = _data(multilabel_data, missing=False, seed=5)
    calls = []
    for name in ("sum", "map", "sum_and_map"):
        original = getattr(backends.InMemory, name)
        monkeypatch.setattr(backends.InMemory, name,
                            lambda *a, _f=original, **k: calls.append(1) or _f(*a, **k))

    def passes(iterations, moments):
        calls.clear()
        result = glocal_fit(data, N_LATENT, max_iter=iterations, init_max_iter=iterations,
                            tol=0.0, random_state=0, levers=Levers(use_moments=moments))
        assert result.n_iter == result.n_init_iter == iterations
        return len(calls)

    assert passes(2, True) == passes(6, True)
    assert passes(6, False) > passes(2, False)


def test_moment_blocks_only_where_they_hold(multilabel_data):
    from glocal.solver.second_moments import THROUGH_SAMPLES

    full = resolve_feature_moments(_data(multilabel_data, missing=False))  # n 60 >= 2 (8 + 5)
    missing = resolve_feature_moments(_data(multilabel_data))

    def kind(data, use_moments=True, **options):
        fit = plan.resolve_plan(data, N_LATENT, SolverOptions(**options),
                                Levers(use_moments=use_moments))
        return type(fit.space)

    assert kind(full) is steps.MomentSpace
    assert kind(missing) is steps.SampleSpace
    assert kind(full, use_moments=False) is steps.SampleSpace
    assert kind(full, v_closed_form=False) is steps.SampleSpace
    assert kind(replace(full, loss="squared_hinge")) is steps.SampleSpace
    assert kind(replace(full, moments=THROUGH_SAMPLES)) is steps.SampleSpace
    few = replace(full, X=full.X[:20], Y=full.Y[:, :20])  # n 20 < 2 (d + l)
    assert kind(few) is steps.SampleSpace


def test_tail_of_geometric_decreases():
    """A loop whose decreases shrink by a ratio r is told apart by what they add up to,
    decrease / (1 - r), not by the last one alone; over pairs for alternating decreases."""
    from glocal.solver.steps import converged, tail_converged

    history = [100.0 + 1e-3 * 0.95 ** t for t in range(60)]  # decreases shrinking by 0.95
    tol = 1e-7  # the last decrease (2.6e-8 of the value) is below tol, their sum (5e-7) not
    assert converged(history, tol) and not tail_converged(history, tol)
    assert tail_converged([100.0 + 1e-3 * 0.1 ** t for t in range(8)], tol)
    alternating = [100.0]
    for t in range(40):  # large and small decreases in turn, pairs shrinking by 0.9
        alternating.append(alternating[-1] - 5e-5 * 0.9 ** (t // 2) * (1.0 if t % 2 else 0.1))
    assert alternating[-3] - alternating[-1] < tol * alternating[-3]  # the last pair is small
    assert not tail_converged(alternating, tol, span=2)
    assert tail_converged(alternating[:3], tol, span=2)  # too short to read a ratio


def test_newton_steps_bind_the_newton_blocks_only(multilabel_data, monkeypatch):
    """``Levers.newton_steps`` caps the Newton steps of V and U per visit under a loss other
    than the paper's (below the U solver's own cap), and leaves the paper's blocks alone."""
    from glocal.solver import newton

    data = replace(_data(multilabel_data), loss="squared_hinge")

    def bound(data, newton_steps, **options):
        fit = plan.resolve_plan(data, N_LATENT, SolverOptions(**options),
                                Levers(newton_steps=newton_steps))
        return fit.v_step, fit.u_step

    v_step, u_step = bound(data, None)
    assert v_step is steps.v_newton and u_step.keywords["max_steps"] is None
    v_step, u_step = bound(data, 2)
    assert v_step.func is steps.v_newton and v_step.keywords["max_steps"] == 2
    assert u_step.func is steps.u_by_newton and u_step.keywords["max_steps"] == 2
    paper = _data(multilabel_data)
    assert bound(paper, 1) == bound(paper, None)
    # One step per visit: the U block stops after it although its solver allows more.
    calls = []
    original = newton.u_newton
    monkeypatch.setattr(newton, "u_newton",
                        lambda *args: calls.append(args[4]) or original(*args))
    fit = plan.resolve_plan(data, N_LATENT, SolverOptions(block_rtol=0.0),
                            Levers(newton_steps=1))
    rng = np.random.default_rng(0)
    U, V = rng.standard_normal((5, N_LATENT)), rng.standard_normal((N_LATENT, 60))
    fit.u_step(fit, V, U)
    assert calls == [1]


def test_newton_steps_auto_by_the_number_of_labels(multilabel_data):
    """One Newton step per visit from `plan.MIN_INEXACT_LABELS` labels on, exact blocks below;
    a number or None given is kept."""
    few = replace(_data(multilabel_data), loss="squared_hinge")
    l, n = plan.MIN_INEXACT_LABELS, few.Y.shape[1]
    many = replace(few, Y=np.ones((l, n)), J=np.ones((l, n)))
    assert plan.resolve_newton_steps(few, "auto") is None
    assert plan.resolve_newton_steps(many, "auto") == 1
    assert plan.resolve_newton_steps(many, None) is None
    assert plan.resolve_newton_steps(few, 2) == 2
    assert plan.resolve_plan(many, N_LATENT, SolverOptions(),
                             Levers(truncated_newton=False)).v_step.keywords == {"max_steps": 1}


def test_truncated_newton_only_where_asked(multilabel_data):
    """Truncated Newton on V and U only where the lever asks for it, in memory, under a loss
    other than the paper's: by default, with many labels too, the Newton visits."""
    few = replace(_data(multilabel_data), loss="squared_hinge")
    l, n = plan.MIN_INEXACT_LABELS, few.Y.shape[1]
    many = replace(few, Y=np.ones((l, n)), J=np.ones((l, n)))
    options = SolverOptions()
    assert not plan.resolve_truncated_newton(many, options)
    assert plan.resolve_truncated_newton(many, options, True)
    assert plan.resolve_truncated_newton(few, options, True)
    assert not plan.resolve_truncated_newton(replace(many, loss="squared"), options, True)
    on_chunks = replace(many, samples=SimpleNamespace(in_memory=False))  # e.g. Dask's
    assert not plan.resolve_truncated_newton(on_chunks, options, True)
    assert plan.resolve_plan(many, N_LATENT, options, Levers()).v_step.func is steps.v_newton
    assert plan.resolve_plan(many, N_LATENT, options,
                             Levers(truncated_newton=True)).v_step is steps.v_by_problem
    with pytest.raises(ValueError, match="must be True or False, got 'auto'"):
        plan.resolve_truncated_newton(many, options, "auto")


def test_truncated_newton_binds_whole_block_problems(multilabel_data):
    """``Levers.truncated_newton`` solves V and U under a loss other than the paper's as
    whole-block problems by trust regions capped at ``truncated_steps``, U preconditioned by
    one shared block; the paper's loss, and an optimizer named for U, keep their steps."""
    data = replace(_data(multilabel_data), loss="squared_hinge")
    levers = Levers(truncated_newton=True, truncated_steps=(2, 4))
    fit = plan.resolve_plan(data, N_LATENT, SolverOptions(), levers)
    assert fit.v_step is steps.v_by_problem
    assert fit.u_step.func is steps.u_by_problem and fit.u_step.keywords == {
        "shared_blocks": True}
    for block in ("U", "V"):
        solver = fit.solvers[block]
        assert isinstance(solver, optimizers.TruncatedNewtonSolver)
        assert (solver.name, solver.max_iterations, solver.max_inner) == ("trust_regions", 2, 4)
    assert fit.solvers["W"].max_iterations == SolverOptions().block_max_iter
    paper = _data(multilabel_data)
    assert not plan.resolve_truncated_newton(paper, SolverOptions(), True)
    named = SolverOptions(optimizer={"U": "conjugate_gradient"})
    assert not plan.resolve_truncated_newton(data, named, True)
    assert not plan.resolve_truncated_newton(data, SolverOptions(), False)


def test_truncated_newton_visit_reaches_a_far_minimizer():
    """A truncated-Newton visit starts its trust radius at the start point's length: where a
    block must move far (its minimizer 1000 times further than pymanopt's first radius), two
    iterations reach it, where from pymanopt's radius they cover a few radii at most and the
    rounds' stopping rule would take the crawl for convergence. The block is U's or V's
    kind: a Euclidean quadratic, here 0.5 ||x - c||^2 with ||c|| = 2000."""
    from pymanopt.manifolds import Euclidean

    rng = np.random.default_rng(0)
    target = rng.standard_normal((10, 10))
    target *= 2000 / np.linalg.norm(target)

    def problem():
        return problems.make_problem(
            Euclidean(10, 10), lambda x: (0.5 * np.sum((x - target) ** 2), x - target),
            lambda x, direction: direction)

    start = 0.5 * target
    gap = 0.5 * np.sum((start - target) ** 2)
    _, drop = optimizers.TruncatedNewtonSolver("trust_regions", 2, 1e-4, 5)(problem(), start)
    _, default_drop = optimizers.BlockSolver("trust_regions", 2, 1e-4, 5)(problem(), start)
    assert drop == pytest.approx(gap, rel=1e-8)
    assert default_drop < 0.01 * gap


@pytest.mark.parametrize("truncated_steps", [(1, 5), (2, 5)])
def test_truncated_newton_fit_never_increases_the_objective(multilabel_data, truncated_steps):
    """Every block visit of the truncated-Newton fit lowers its block's cost or keeps the
    point: the objective never increases, in the initialisation nor across outer
    iterations."""
    data = replace(_data(multilabel_data), loss="squared_hinge", lam_v=0.0)
    result = glocal_fit(data, N_LATENT, max_iter=30, init_max_iter=30, tol=1e-6,
                        levers=Levers(truncated_newton=True, truncated_steps=truncated_steps),
                        random_state=0)
    for history in (result.init_history, result.objective_history):
        assert np.all(np.diff(history) <= 1e-12 * np.abs(history[:-1]))
    blocks = np.concatenate([[result.objective_history[0]],
                             np.ravel(result.block_history)])
    assert np.all(np.diff(blocks) <= 1e-12 * np.abs(blocks[:-1]))
    assert result.n_iter > 1
