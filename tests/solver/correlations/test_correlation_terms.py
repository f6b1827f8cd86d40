"""The correlation terms other than the paper's, against autograd of their objectives written
from their formulas here (sharing no code with glocal):

* ``"centered"`` (`glocal.solver.correlations.centered.CenteredLaplacians`): the paper's Laplacians
  on the scores' deviations from their means, over all samples and within each group;
* ``"asymmetric"`` (`glocal.solver.correlations.implications.LabelImplications`): directed weights
  A_m, rows summing to at most one (the rest on "no label" at a threshold's cost), and the squared
  violations max(0, f_i - f_j)^2 of "i implies j", with an entropy on the rows.

Every case runs with missing and full labels, dense and CSR features, and the three kinds
of second moments. A fit with each term never increases its objective, and the asymmetric
term recovers a planted implication in its direction.
"""

import itertools
from types import SimpleNamespace

import autograd.numpy as anp
import numpy as np
import pytest
from autograd import grad

from estimators import capped_fits

from glocal import GLOCAL
from glocal.solver import objective as obj
from glocal.solver.correlations.centered import CenteredLaplacians
from glocal.solver.correlations.implications import THRESHOLD, TEMPERATURE, LabelImplications, \
    implication_weights
from glocal.solver.label_fit import u_statistics
from glocal.manifolds import UnitRows, normalize_rows
from glocal.solver.correlations import CORRELATION_TERMS
from glocal.solver import SolverOptions, glocal_fit
from glocal.solver.steps import SampleSpace
from derivatives import check_u_side, close, hvp

CASES = [dict(missing=m, sparse=s, grams=gm)
         for m, s, gm in itertools.product((True, False), (False, True), ("none", "gram", "all"))]
IDS = ["-".join(["missing" if c["missing"] else "full", "csr" if c["sparse"] else "dense",
                 "grams-" + c["grams"]]) for c in CASES]


def _centered_term(F, L, idx=None):
    """tr(Fc^T L Fc), Fc the columns of F (of ``idx``) minus their mean."""
    part = F if idx is None else F[:, idx]
    centered = part - anp.mean(part, axis=1, keepdims=True)
    return anp.trace(anp.dot(centered.T, anp.dot(L, centered)))


def _violations(F, A):
    """sum_s sum_ij A[i, j] max(0, F[i, s] - F[j, s])^2, F in the paper's l x n layout."""
    differences = F[:, None, :] - F[None, :, :]
    return anp.sum(A[:, :, None] * anp.maximum(differences, 0.0) ** 2)


def _xlogx(A):
    """sum A log A, 0 log 0 = 0 (differentiable off the zero entries)."""
    return anp.sum(A * anp.log(A + (A == 0)))


def _own_part(A):
    """The threshold's cost of the weight on no label, and the entropy of the rows."""
    none = 1.0 - anp.sum(A, axis=1)
    l = A.shape[0]
    return THRESHOLD * anp.sum(none) + TEMPERATURE * (_xlogx(A) + _xlogx(none) + l * np.log(l))


def _reference(kind, data, X, paper_objective):
    """The objective with the term ``kind``, from its formula."""
    Xp = X.T
    n = Xp.shape[1]
    groups, lam3, lam4 = data.group_index, data.lam3, data.lam4

    def full(U, V, W, state):
        value = paper_objective(U, V, W, state, X, data.Y, data.J, groups, data.lam,
                                data.lam2, 0.0, 0.0)
        F0 = anp.dot(U, anp.dot(W.T, Xp))
        for m, idx in enumerate(groups):
            n_m = len(idx)
            if kind == "centered":
                L = anp.dot(state[m], state[m].T)
                value = value + lam3 * (n_m / n) * _centered_term(F0, L)
                value = value + lam4 * _centered_term(F0, L, idx)
            else:
                A = state[m]
                value = value + lam3 * (n_m / n) * _violations(F0, A)
                value = value + lam4 * _violations(F0[:, idx], A)
                value = value + (lam3 + lam4) * n_m * _own_part(A)
        return value
    return full


def _random_state(term, data, k, rng):
    g, l = data.n_groups, data.Y.shape[0]
    if isinstance(term, LabelImplications):
        A = rng.random((g, l, l)) + 0.05
        A[:, np.arange(l), np.arange(l)] = 0.0
        return A / (A.sum(axis=-1, keepdims=True) + rng.random((g, l, 1)) + 0.05)
    return normalize_rows(rng.standard_normal((g, l, k)))


KINDS = {kind: [pytest.param((kind, c), id=f"{kind}-{i}") for c, i in zip(CASES, IDS)]
         for kind in ("centered", "asymmetric")}


@pytest.fixture(params=KINDS["centered"] + KINDS["asymmetric"])
def case(request, make_problem, paper_objective):
    kind, params = request.param
    seed = CASES.index(params)
    data, (U, V, W, _), X = make_problem(seed=seed, **params)
    rng = np.random.default_rng(200 + seed)
    term = CORRELATION_TERMS[kind](data.lam3, data.lam4, data.group_fractions)
    state = _random_state(term, data, U.shape[1], rng)
    space = SampleSpace(data)
    return SimpleNamespace(kind=kind, data=data, X=X, term=term, point=(U, V, W, state),
                           space=space, side=term.label_side(W, space), rng=rng,
                           full=_reference(kind, data, X, paper_objective))


def test_names_make_the_terms():
    assert CORRELATION_TERMS["centered"] is CenteredLaplacians
    assert CORRELATION_TERMS["asymmetric"] is LabelImplications


def test_value_follows_the_formula(case):
    U, V, W, state = case.point
    basic = obj.basic_objective(U, V, W, case.data)
    close(basic + case.term.value(U, state, case.side), case.full(U, V, W, state), 1e-10)


def test_u_side_derivatives(case):
    check_u_side(case, case.term.u_side(case.point[3], case.side))


def _w_block(case, U, state):
    side = case.term.w_side(U, state, case.side)
    product, _ = obj.w_products(case.data, side)
    V = case.point[1]
    XtV, V_sq = case.X.T @ V.T, float(np.sum(V ** 2))

    def cost_grad(W):
        return obj.w_cost_grad(W, XtV, V_sq, product, case.data.lam, case.data.lam2,
                               side.nonquadratic)

    def hessp(W, D):
        return obj.w_hessp(D, product, case.data.lam2, W, side.nonquadratic)
    return cost_grad, hessp, side


def test_w_side_derivatives(case):
    U, V, W, state = case.point
    cost_grad, hessp, side = _w_block(case, U, state)
    cost, gradient = cost_grad(W)
    close(gradient, grad(case.full, 2)(*case.point))
    D = case.rng.standard_normal(W.shape)
    close(hessp(W, D), hvp(case.full, 2, case.point, D))
    W2 = case.rng.standard_normal(W.shape)
    close(cost - cost_grad(W2)[0], case.full(U, V, W, state) - case.full(U, V, W2, state),
          1e-9)
    # Only the asymmetric term is not a quadratic form in W.
    assert (side.nonquadratic is not None) == (case.kind == "asymmetric")


@pytest.mark.parametrize("case", KINDS["centered"], indirect=True)
def test_centered_block_derivatives(case):
    U, V, W, Z = case.point
    blocks = []
    case.term.update(U, Z, case.side, lambda name, block, start: blocks.append((name, block)))
    (name, block), = blocks
    assert name == "Z" and isinstance(block.manifold, UnitRows)
    cost, gradient = block.cost_grad(Z)
    close(gradient, grad(case.full, 3)(*case.point))
    D = case.rng.standard_normal(Z.shape)
    close(block.hessp(Z, D), hvp(case.full, 3, case.point, D))


@pytest.mark.parametrize("case", KINDS["asymmetric"], indirect=True)
def test_directed_weights_are_the_exact_minimizer(case):
    """The A block's closed form (its update) is its exact minimizer."""
    U, V, W, A = case.point
    new, drop = case.term.update(U, A, case.side, None)
    l = A.shape[1]
    off = ~np.eye(l, dtype=bool)
    # Feasible: nonnegative, zero diagonal, rows summing to less than one.
    assert np.all(new >= 0) and np.all(new[:, ~off] == 0)
    assert np.all(new.sum(axis=-1) < 1.0)
    # Stationary: the objective's gradient in A vanishes off the diagonal (the weight on no
    # label, one minus a row's sum, is in the formula).
    gradient = grad(case.full, 3)(U, V, W, new)
    scale = max(abs(case.full(U, V, W, new)), 1.0)
    assert np.max(np.abs(gradient[:, off])) <= 1e-8 * scale
    # The decrease is the objective's, and no other feasible point is lower (convex in A).
    close(drop, case.full(U, V, W, A) - case.full(U, V, W, new), 1e-9)
    for _ in range(5):
        other = _random_state(case.term, case.data, 0, case.rng)
        mixed = 0.9 * new + 0.1 * other
        assert case.full(U, V, W, mixed) > case.full(U, V, W, new)


def test_implication_weights_are_gibbs_over_the_other_labels_and_none():
    v = np.array([[[0.0, 0.1, 0.3], [0.2, 0.0, 0.2], [0.0, 0.5, 0.0]]])
    A = implication_weights(np.concatenate([v, v]), 1.0, 0.0, 0.1, 0.2)[0]
    np.testing.assert_allclose(np.diag(A), 0.0)
    np.testing.assert_allclose(A[0, 1] / A[0, 2], np.exp(2.0))
    np.testing.assert_allclose(A[0, 1] / (1 - A[0].sum()), np.exp(1.0))  # none costs 0.2
    np.testing.assert_allclose(A[1], [1 / 3, 0, 1 / 3])


@pytest.mark.parametrize("kind", ["centered", "asymmetric"])
@pytest.mark.parametrize("params", [CASES[0], CASES[9], CASES[11]],
                         ids=[IDS[0], IDS[9], IDS[11]])
@pytest.mark.parametrize("v_closed_form", [True, False])
def test_fit_never_increases_the_objective(make_problem, paper_objective, kind, params,
                                           v_closed_form):
    data, _, X = make_problem(seed=7, **params)
    full = _reference(kind, data, X, paper_objective)
    result = glocal_fit(data, 3, correlation=kind, max_iter=12, init_max_iter=5, tol=0.0,
                        random_state=0, options=SolverOptions(v_closed_form=v_closed_form))
    history = np.array(result.objective_history)
    assert np.all(np.diff(history) <= 1e-10 * np.abs(history[:-1]))
    blocks = np.concatenate([[history[0]], np.ravel(result.block_history)])
    assert np.all(np.diff(blocks) <= 1e-10 * np.abs(blocks[:-1]))
    close(history[-1], full(result.U, result.V, result.W, result.Z), 1e-9)
    assert history[-1] < history[0]


@capped_fits
def test_squared_hinge_fit_with_the_directed_term_is_monotone(multilabel_data):
    X, Y = multilabel_data(seed=3, n=80, d=6, l=4)
    model = GLOCAL(n_latent=3, n_groups=2, lam3=0.5, lam4=0.5, correlation="asymmetric",
                   loss="squared_hinge", fit_intercept=True, lam_v=0.0, tol=0.0, max_iter=15,
                   random_state=0).fit(X, Y)
    history = np.array(model.objective_history_)
    assert np.all(np.diff(history) <= 1e-10 * np.abs(history[:-1]))
    A = model.Z_
    assert A.shape == (2, 4, 4) and np.all(A.sum(axis=-1) <= 1.0)
    np.testing.assert_allclose(model.global_correlation_,
                               np.tensordot(np.bincount(model.groups_) / 80, A, axes=1))


def implication_data(n=600, d=10, seed=0):
    """Label a implies label b: b is relevant on every sample where a is and on as many
    more; a third label is independent of both."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    a = X[:, 0] > 1.0
    b = a | (X[:, 1] > 0.0)
    c = X[:, 2] > 0.3
    return X, np.column_stack([a, b, c]).astype(float)


def test_the_direction_of_an_implication_is_recovered():
    X, Y = implication_data()
    assert np.all(Y[Y[:, 0] == 1, 1] == 1) and np.mean(Y[Y[:, 1] == 1, 0]) < 0.6
    model = GLOCAL(n_latent=3, n_groups=1, lam3=0.01, lam4=0.0, correlation="asymmetric",
                   loss="squared_hinge", fit_intercept=True, lam_v=0.0,
                   random_state=0).fit(X, Y)
    A = model.global_correlation_
    assert A[0, 1] > 0.7 and A[1, 0] < 0.05  # a implies b, b does not imply a
    assert A[1].sum() < 0.1  # b implies no label


def test_init_from_another_term_starts_its_own_state(multilabel_data):
    X, Y = multilabel_data(seed=2, n=60, d=5, l=4)
    symmetric = GLOCAL(n_latent=4, n_groups=2, random_state=0).fit(X, Y)
    directed = GLOCAL(n_latent=4, n_groups=2, correlation="asymmetric", lam3=0.1,
                      random_state=0).fit(X, Y, init=symmetric)
    assert directed.Z_.shape == (2, 4, 4) and np.all(directed.Z_ >= 0)
    with pytest.raises(ValueError, match="directed weights must be finite and nonnegative"):
        GLOCAL(n_latent=4, n_groups=2, correlation="asymmetric", random_state=0).fit(
            X, Y, init=(symmetric.U_, None, symmetric.W_, -np.ones((2, 4, 4))))


@pytest.mark.parametrize("case", KINDS["asymmetric"][:4], indirect=True)
def test_directed_products_without_kept_pairs_in_small_chunks(case, monkeypatch):
    """The Hessian products found again for every product, chunk by chunk, are those from
    the pairs kept at the point."""
    from glocal.solver.correlations import implications

    U, V, W, A = case.point
    D_U, D_W = case.rng.standard_normal(U.shape), case.rng.standard_normal(W.shape)
    kept = (case.term.u_side(A, case.side).hessp(U, D_U),
            case.term.w_side(U, A, case.side).nonquadratic.hessp(W, D_W))
    monkeypatch.setattr(implications, "_KEPT_ENTRIES", 0)
    monkeypatch.setattr(implications, "_CHUNK_ENTRIES", 7 * U.shape[0] ** 2)
    u_side, w_side = case.term.u_side(A, case.side), case.term.w_side(U, A, case.side)
    assert u_side._kept is None and w_side.nonquadratic._kept is None
    close(u_side.hessp(U, D_U), kept[0], 1e-12)
    close(w_side.nonquadratic.hessp(W, D_W), kept[1], 1e-12)
    close(u_side.cost_grad(U)[1], grad(case.full, 0)(*case.point) / 2
          - obj.u_cost_grad(U, u_statistics(V, case.data), case.data.lam2)[1] / 2)


def test_the_correlations_read_what_fit_stored(multilabel_data):
    X, Y = multilabel_data(seed=4, n=60, d=5, l=4)
    model = GLOCAL(n_latent=3, n_groups=2, lam3=0.1, correlation="asymmetric",
                   random_state=0).fit(X, Y)
    directed = model.global_correlation_
    model.set_params(correlation="laplacian", lam3=5.0)
    np.testing.assert_array_equal(model.global_correlation_, directed)
    assert np.all(directed >= 0)  # directed weights, not -Z Z^T


def _u_hessian(U, V, W, Z, data, term):
    """The halved Hessian of the U block with the paper's terms, as a function of D."""
    stats = u_statistics(V, data)
    sides = (term.u_side(Z, term.label_side(W, SampleSpace(data))),)
    return (lambda D: obj.u_hessp(D, stats, data.lam2, U, sides) / 2.0,
            obj.u_row_hessians(stats, data.lam2, U), sides[0])


@pytest.mark.parametrize("rank, lam3, lam4, missing", [
    (2, 0.0, 50.0, True),    # strong, rank-2 Laplacians: Woodbury, exact
    (6, 80.0, 0.0, False),   # strong, full rank, global only, shared row blocks: Kronecker
    (6, 1e-4, 1e-4, True),   # weak: the row blocks and the terms' diagonal blocks
])
def test_u_preconditioner_of_the_laplacians(make_problem, monkeypatch, rank, lam3, lam4,
                                            missing):
    from glocal.solver import preconditioners

    data, (U, V, W, _), X = make_problem(seed=5, l=6, k=3, lam3=lam3, lam4=lam4,
                                         missing=missing)
    rng = np.random.default_rng(0)
    Z = normalize_rows(rng.standard_normal((data.n_groups, 6, rank)) @
                       rng.standard_normal((rank, 3)))  # Z_m Z_m^T of rank at most `rank`
    term = CORRELATION_TERMS["laplacian"](lam3, lam4, data.group_fractions)
    hessian, blocks, side = _u_hessian(U, V, W, Z, data, term)
    monkeypatch.setattr(preconditioners, "MAX_WOODBURY", 0 if rank == 6 else 600)
    inverse = side.preconditioner(blocks, U)
    D = rng.standard_normal(U.shape)
    if lam3 + lam4 > 1:  # exact: Woodbury in the Laplacians' span, Kronecker of one term
        close(inverse(None, 2.0 * hessian(D)), D, 1e-8)
    else:  # the block-diagonal part of the Hessian, row by row
        k = U.shape[1]
        for row in range(U.shape[0]):
            diagonal = np.zeros((k, k))
            for a in range(k):
                E = np.zeros_like(U)
                E[row, a] = 1.0
                diagonal[:, a] = hessian(E)[row]
            close(inverse(None, np.eye(U.shape[0])[:, [row]] * diagonal[0])[row],
                  np.eye(k)[0] / 2.0)


def test_an_optimizer_for_a_block_the_term_does_not_have_is_refused(multilabel_data):
    X, Y = multilabel_data(seed=1, n=40, d=4, l=3)
    with pytest.raises(ValueError, match=r"optimizer names the blocks \['Z'\], which this "
                                         r"fit does not have \(its correlation term's "
                                         r"blocks: none\)"):
        GLOCAL(n_latent=2, correlation="asymmetric", optimizer={"Z": "trust_regions"}).fit(X, Y)


@pytest.mark.parametrize("case", KINDS["asymmetric"][:2], indirect=True)
def test_the_directed_term_is_never_negative(case):
    """Its entropy is the divergence from uniform weights, zero at the start (where only
    the threshold's cost of the weight 1/l on no label remains), and the term stays at or
    above zero (the solver's relative stopping rule reads the objective's size)."""
    U, V, W, A = case.point
    data = case.data
    start = case.term.start(data.n_groups, A.shape[1], U.shape[1], None)
    close(case.term._own_part(start, case.side.sizes),
          (data.lam3 + data.lam4) * data.n_samples * THRESHOLD)
    for _ in range(5):
        other = _random_state(case.term, case.data, 0, case.rng)
        assert case.term.value(U, other, case.side) >= 0.0
        assert case.term._own_part(other, case.side.sizes) >= 0.0


@pytest.mark.parametrize("case", KINDS["asymmetric"][:2], indirect=True)
def test_directed_w_curvature_is_the_mean_active_laplacian(case):
    """The W preconditioner's weights of the directed term: U^T Lbar_m U, Lbar_m the mean
    over group m's samples of the Laplacian of the pairs active there (weights Omega)."""
    U, V, W, A = case.point
    nonquadratic = case.term.w_side(U, A, case.side).nonquadratic
    scores = case.X @ W @ U.T
    weights = case.term._sample_weights(A)
    for m, idx in enumerate(case.data.group_index):
        mean = np.zeros((U.shape[0],) * 2)
        for s in idx:
            active = np.where(scores[s][:, None] > scores[s][None, :], weights[m],
                              weights[m].T)
            mean += np.diag(active.sum(axis=1)) - active
        close(nonquadratic.curvature[m], U.T @ (mean / len(idx)) @ U)
        assert np.all(np.linalg.eigvalsh(nonquadratic.curvature[m]) >= -1e-10)
