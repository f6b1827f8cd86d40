"""Newton's method on the separable label-fit blocks (V and U) under a loss other than the
paper's, batched over samples and labels (pure numpy).

Under Eq. L of `glocal.solver.losses` with F = U V, the V block (Eq. (6)) separates over the
samples and, without the correlation terms, the U block (Eq. (7)) over the labels: n (or l) small
strongly convex problems in k unknowns. Each is solved by Newton's method with backtracking; for
the squared hinge the Hessian is the generalized one, and the method is the semi-smooth Newton
method, which stops once the active entries (margins below 1) settle.

The V block. Column i of V minimizes
    sum_j c_ji ell(y_ji, u_j . v) + lam ||v - p_i||^2 + lam_v ||v||^2
whose halved Hessian is a I + U_S^T diag(s) U_S, a = lam + lam_v, with s > 0 the halved
curvature on the labels S of the column (for the squared hinge its active labels, a few of its
observed ones). The Newton system is solved through the |S| x |S| matrix a diag(1/s) + G_SS,
G = U U^T (Woodbury), where that is cheaper than the k x k system; columns go in buckets of
similar |S|, so that one batched LAPACK call serves a bucket with little padding. Where most
entries curve (most labels observed and inside the margin), the Hessians are one shared
matrix plus the few entries whose curvature differs from their label's common one, and
Woodbury on those entries leaves smaller systems still. Scores F = U V are carried along the
steps (one product with U per step).

The U block. Row j of U minimizes sum_i c_ji ell(y_ji, u . v_i) + lam2 ||u||^2, plus the
correlation terms (e.g. sum_m tr(Z_m^T U B_m U^T Z_m), or the implications' piecewise
quadratic) that couple the rows. The Newton direction solves the row Hessians plus the
correlation terms' by conjugate gradients preconditioned by a term's own preconditioner or by
the inverse row Hessians (exact, one step, without correlation terms). The samples are
read only through `LabelSums`, so the same iterations run in memory or over chunks of
samples through a backend, one pass per statistic.
"""

import numpy as np
import scipy.sparse

from . import losses
from .._utils.linalg import conjugate_gradients

# Newton's decrement below this fraction of a column's cost is rounding: the column is solved.
_SOLVED = 1e-24
# Below this fraction the full step is taken unchecked (a cost cannot resolve the decrease).
_FULL_STEP = 1e-12
_ARMIJO = 1e-4
_MAX_HALVINGS = 40
# Largest bucket of Newton systems solved in one call, in matrix entries.
_BUCKET_ENTRIES = 2 ** 22


def v_block(U, P, V, data, max_iter=None):
    """The V block (Eq. (6)) at (U, P = X W) from V, column by column (`v_newton`), on every
    chunk of samples of the data's backend; at most ``max_iter`` Newton steps per column
    (None: `v_newton`'s own cap)."""
    label = data.label
    cap = {} if max_iter is None else {"max_iter": max_iter}

    def columns(part, V, P):
        return v_newton(U, P.T, part.Y, label.entry_weights(part), label.loss, part.lam,
                        part.v_weight, V0=V, **cap)
    return data.samples.map(columns, data, V, P, sample_axis=1, width=U.shape[1], reads="Y")


def v_newton(U, Pt, Y, C, loss, lam, lam_v, V0=None, max_iter=50):
    """The minimizer of Eq. (6) under ``loss``, column by column, by Newton's method from V0.

    Parameters
    ----------
    U : ndarray of shape (l, k)
    Pt : ndarray of shape (k, n)
        P^T = W^T X^T, the columns the coupling term pulls V towards.
    Y : ndarray of shape (l, n)
        +1 / -1 on observed entries, 0 on missing ones.
    C : ndarray of shape (l, n) or float
        Entry weights c_ji (0 on missing entries), or 1.0 when every entry is observed and
        unweighted.
    loss : str
        A loss of `glocal.solver.losses` other than ``"squared"`` (any of them works).
    lam, lam_v : float
        Weights of ||V - P^T||^2 and ||V||^2; lam + lam_v > 0.
    V0 : ndarray of shape (k, n), optional
        Start (the previous V of the alternating loop); P^T lam / (lam + lam_v) when None.
    max_iter : int
        Newton steps at most per column.

    Returns
    -------
    ndarray of shape (k, n)
        Every column iterates on its own until its Newton decrement vanishes to rounding,
        so the result does not depend on which columns are solved together.
    """
    a = lam + lam_v
    Q = Pt * (lam / a)  # the block is sum ell + a ||V - Q||^2 + const
    V = Q.copy() if V0 is None else np.array(V0, dtype=float)
    F = U @ V
    QF = U @ Q
    C = np.broadcast_to(C, Y.shape) if np.isscalar(C) else C
    gram = U @ U.T
    todo = np.arange(V.shape[1])
    for _ in range(max_iter):
        if not todo.size:
            break
        every = todo.size == V.shape[1]
        Ys, Cs, Qs, QFs = (Y, C, Q, QF) if every else (Y[:, todo], C[:, todo], Q[:, todo],
                                                     QF[:, todo])
        Vs, Fs = (V, F) if every else (V[:, todo], F[:, todo])
        value, first, second = losses.loss_terms(Fs, Ys, Cs, loss, axis=0)
        E = Vs - Qs
        cost = value + a * np.einsum("ki,ki->i", E, E)
        # In the label space: the half gradient is a E + U^T h, h = first / 2 (zero off the
        # entries of nonzero curvature), and the step -E - U^T (h - z) / a.
        h = 0.5 * first
        grad = a * E + _product(U.T, h)
        support = second > 0
        h_minus_z = h
        if support.any():
            rhs = a * (Fs - QFs) + _product(gram, h)  # U grad
            h_minus_z = h - _woodbury(gram, U, support, 0.5 * second, rhs, a, grad)
        step = -E - _product(U.T, h_minus_z) / a
        D = -(Fs - QFs) - _product(gram, h_minus_z) / a  # U step
        slope = 2.0 * np.einsum("ki,ki->i", grad, step)  # the cost's derivative along the step
        scale = np.maximum(cost, 1.0)
        moving = -slope > _SOLVED * scale
        rate = moving.astype(float)
        pending = np.flatnonzero(moving & (-slope > _FULL_STEP * scale))
        for _ in range(_MAX_HALVINGS):  # Armijo backtracking, column by column
            if not pending.size:
                break
            t = rate[pending]
            trial = losses.loss_terms(Fs[:, pending] + t * D[:, pending], Ys[:, pending],
                                      Cs[:, pending], loss, axis=0)[0]
            Et = E[:, pending] + t * step[:, pending]
            trial = trial + a * np.einsum("ki,ki->i", Et, Et)
            pending = pending[trial > cost[pending] + _ARMIJO * t * slope[pending]]
            rate[pending] /= 2.0
        rate[pending] = 0.0  # no decrease left above rounding: solved
        moving[pending] = False
        Vs = Vs + rate * step
        Fs = Fs + rate * D
        if every:
            V, F = Vs, Fs
        else:
            V[:, todo], F[:, todo] = Vs, Fs
        todo = todo[moving]
    return V


def _product(A, S, max_density=0.02):
    """A @ S, through a sparse S when few of its entries are nonzero."""
    if np.count_nonzero(S) > max_density * S.size:
        return A @ S
    return np.asarray((scipy.sparse.csc_matrix(S).T @ A.T).T)


def _woodbury(gram, U, support, s, UG, a, G):
    """Z (l x n), nonzero on ``support`` only, with H_i^-1 g_i = (g_i - U^T z_i) / a for the
    halved Hessians H_i = a I + U_S^T diag(s_i) U_S of the columns (S: the column's support)
    and their gradients g_i (the columns of G, k x n; UG = U G).

    z_i = K_i^-1 (U g_i)_S with K_i = a diag(1 / s_i) + G_SS; where |S| is large next to k the
    same z_i comes from the k x k system instead: z_i = diag(s) (r - U_S H_i^-1 U_S^T diag(s)
    r) / a with r = (U g_i)_S. Where a column's curvature differs from the labels' common one
    on fewer labels than its support, `_by_deviation` solves it.
    """
    l, n = support.shape
    k = U.shape[1]
    Z = np.zeros((l, n))
    support = support & ~_by_deviation(U, support, s, G, a, Z)
    for part, index, valid in _padded_sets(support, lambda m: m * max(m, k)):
        columns = part[:, None]
        weight = np.where(valid, s[index, columns], 0.0)
        rhs = np.where(valid, UG[index, columns], 0.0)
        if index.shape[1] ** 3 <= 3 * index.shape[1] * k * k + k ** 3:  # |S| x |S| is cheaper
            z = _padded_solve(gram, index, valid, a / np.where(valid, weight, 1.0), rhs)
        else:
            UA = U[index] * valid[..., None]
            H = np.swapaxes(UA * weight[..., None], 1, 2) @ UA
            H[:, np.arange(k), np.arange(k)] += a
            Sr = weight * rhs
            w = np.linalg.solve(H, np.swapaxes(UA, 1, 2) @ Sr[..., None])
            z = (Sr - weight * (UA @ w)[..., 0]) / a
        Z[index[valid], np.broadcast_to(columns, index.shape)[valid]] = z[valid]
    return Z


def _by_deviation(U, support, s, G, a, Z):
    """Solve, into Z, the columns whose curvature s_i differs from a common one, sigma, on
    fewer labels D_i than their support S_i; return the mask of the columns solved.

    With most entries active (most labels observed, scores within the margins), the halved
    Hessians are H_i = P + U_D^T diag(delta_i) U_D about one shared P = a I + U^T diag(sigma) U,
    delta_i = s_i - sigma on D_i, and Woodbury leaves |D_i| x |D_i| systems:
    x_i = H_i^-1 g_i = P^-1 g_i - P^-1 U_D^T w_i, (diag(1 / delta_i) + B_DD) w_i = (U P^-1 g_i)_D,
    B = U P^-1 U^T; then z_i = s_i * (U x_i). sigma is each label's median curvature over
    (up to 1024 of) the columns where it is nonzero.
    """
    l, n = support.shape
    solved = np.zeros(n, dtype=bool)
    if 2 * np.count_nonzero(support) <= support.size:  # supports are the smaller sets
        return solved
    weights = np.where(support, s, 0.0)
    sigma = np.zeros(l)  # a label off every support has no curvature to share
    sample = slice(None, None, max(1, n // 1024))  # a median of 1024 columns does
    some = support[:, sample].any(axis=1)
    sigma[some] = np.nanmedian(np.where(support[some, sample], s[some, sample], np.nan),
                               axis=1)
    deviating = weights != sigma[:, None]
    counts = deviating.sum(axis=0)
    columns = np.flatnonzero(counts < support.sum(axis=0))
    if not columns.size:
        return solved
    deviating, counts = deviating[:, columns], counts[columns]
    P = U.T @ (sigma[:, None] * U)
    P[np.diag_indices_from(P)] += a
    solutions = np.linalg.solve(P, np.hstack([U.T, G[:, columns]]))
    B, C = U @ solutions[:, :l], U @ solutions[:, l:]
    W = np.zeros((l, columns.size))
    for part, index, valid in _padded_sets(deviating, lambda m: m * m):
        at = np.broadcast_to(part[:, None], index.shape)
        delta = weights[index, columns[at]] - sigma[index]
        w = _padded_solve(B, index, valid, 1.0 / np.where(valid, delta, 1.0), C[index, at])
        W[index[valid], at[valid]] = w[valid]
    Z[:, columns] = weights[:, columns] * (C - B @ W)
    solved[columns] = True
    return solved


def _padded_sets(mask, entries):
    """The columns of ``mask`` with a nonempty set of labels (its True entries), in buckets
    of similar set size, each yielded as (its columns, their labels padded to the bucket's
    largest set, which of those are real); a bucket holds at most `_BUCKET_ENTRIES` system
    entries, ``entries(m)`` per column of set size m."""
    counts = mask.sum(axis=0)
    labels = np.nonzero(mask.T)[1]  # the sets, column after column
    starts = np.concatenate([[0], np.cumsum(counts)])
    for group in _buckets(counts):
        m = int(counts[group].max())
        for part in np.array_split(group, -(-group.size * entries(m) // _BUCKET_ENTRIES)):
            position = np.arange(m)[None, :]
            valid = position < counts[part][:, None]
            index = labels[np.minimum(starts[part][:, None] + position, labels.size - 1)]
            yield part, np.where(valid, index, 0), valid


def _padded_solve(M, index, valid, diagonal, rhs):
    """Per column, the solution of (M_SS + diag(diagonal)) z = rhs on its set S (``index``
    where ``valid``); padded rows and columns are the identity's, their z 0."""
    K = M[index[:, :, None], index[:, None, :]]
    K *= valid[:, :, None] & valid[:, None, :]
    position = np.arange(index.shape[1])
    K[:, position, position] += np.where(valid, diagonal, 1.0)
    return np.linalg.solve(K, np.where(valid, rhs, 0.0)[..., None])[..., 0]


def _buckets(counts, growth=1.25):
    """The columns with a nonempty support, grouped by its size (each group's sizes within a
    factor ``growth``, or 2 apart)."""
    order = np.argsort(counts, kind="stable")
    sizes = counts[order]
    start = int(np.searchsorted(sizes, 1))
    groups = []
    while start < order.size:
        stop = int(np.searchsorted(sizes, max(sizes[start] * growth, sizes[start] + 2),
                                   side="right"))
        groups.append(order[start:stop])
        start = stop
    return groups


class LabelSums:
    """What `u_newton` reads of the samples at a point U: the label-fit term of every label
    (row) with its halved gradient and Hessian blocks, and its values along a step, each one
    sum over the samples through the data's backend (one pass through a backend that splits
    the samples, where several step sizes go in one pass).

    Parameters
    ----------
    V : ndarray of shape (k, n), or chunked like the samples on a backend
    data : glocal.solver.objective.GlocalData
        Its labels, mask and weights (``data.label``: a loss other than the paper's).
    batch : int, default=1
        Trial step sizes of the line search evaluated in one pass over the samples.
    """

    def __init__(self, V, data, batch=1):
        self.V, self.data, self.batch = V, data, batch

    def terms(self, U):
        """Per label: the term's value (l,), half its gradient in U (l, k) and half its
        Hessian blocks (l, k, k), the sums over the entries of nonzero curvature only."""
        def per_part(part, V):
            label = part.label
            value, first, second = losses.loss_terms(U @ V, part.Y, label.entry_weights(part),
                                                     label.loss, axis=1)
            k = V.shape[0]
            blocks = np.empty((U.shape[0], k, k))
            gram = None
            for j, curvature in enumerate(0.5 * second):
                support = np.flatnonzero(curvature)
                if 2 * support.size > curvature.size:
                    # Most entries curve: sigma V V^T plus the entries that differ from sigma.
                    sigma = np.median(curvature[support])
                    off = np.flatnonzero(curvature != sigma)
                    if off.size < support.size:
                        gram = V @ V.T if gram is None else gram
                        Vd = V[:, off]
                        blocks[j] = sigma * gram + (Vd * (curvature[off] - sigma)) @ Vd.T
                        continue
                Vs = V[:, support]
                blocks[j] = (Vs * curvature[support]) @ Vs.T
            return value, (0.5 * first) @ V.T, blocks
        return self.data.samples.sum(per_part, self.data, self.V, reads="Y")

    def values(self, U, step, rates):
        """The term of every label at U + t step for each t of ``rates``, shape
        (len(rates), l)."""
        def per_part(part, V):
            label = part.label
            F, D = U @ V, step @ V
            return np.stack([losses.loss_terms(F + t * D, part.Y, label.entry_weights(part),
                                               label.loss, axis=1)[0] for t in rates])
        return self.data.samples.sum(per_part, self.data, self.V, reads="Y")


def u_newton(U0, sums, lam2, sides=(), max_iter=100, rtol=1e-4, max_cg=50):
    """The U block (Eq. (7)) under a loss other than the paper's, by Newton's method from U0.

    Minimizes L(U) + lam2 ||U||^2 + the correlation terms, L the label-fit term of the fixed
    V read through ``sums`` (a `LabelSums`). ``sides`` are the correlation terms' U sides
    (`glocal.solver.correlations.CorrelationTerm.u_side`): ``cost_grad(U)`` (value, half gradient),
    ``hessp(U, D)`` (half the Hessian at U, generalized for a piecewise quadratic term) and
    optionally ``preconditioner(blocks, U)``. Each Newton direction solves the halved
    Hessian (row blocks of L plus lam2 I, and the sides') by conjugate gradients, to 1e-2
    of the gradient, preconditioned by a side's own preconditioner given the row blocks, or
    else by their inverse; without correlation terms that is the exact direction of every
    row. The step is backtracked per row without them (the rows are then independent
    problems), else on the whole block.

    Stops when the gradient norm falls below ``rtol`` times its norm at U0 or after
    ``max_iter`` steps; every step lowers the cost. Returns the new U and the decrease.
    """
    U = np.array(U0, dtype=float)
    k = U.shape[1]
    value, half_grad, blocks = sums.terms(U)
    side_value, side_grad = _side_terms(sides, U)
    start_cost = cost = _u_cost(value, U, side_value, lam2)
    first_norm = None
    for iteration in range(max_iter):
        if iteration:  # the statistics at the new point (the line search gave its values)
            value, half_grad, blocks = sums.terms(U)
            side_value, side_grad = _side_terms(sides, U)
        grad = half_grad + lam2 * U + side_grad
        norm = np.linalg.norm(grad)
        if first_norm is None:
            first_norm = norm
        if not norm > rtol * first_norm:
            break
        rows = blocks + lam2 * np.eye(k)
        inverse = np.linalg.inv(rows)
        step = -np.matmul(inverse, grad[..., None])[..., 0]
        if sides:
            step, _ = conjugate_gradients(
                lambda D, U=U: (np.matmul(rows, D[..., None])[..., 0]
                                + sum(side.hessp(U, D) for side in sides)),
                _side_preconditioner(sides, rows, inverse, U), -grad, step, 1e-2 * norm,
                max_cg)
            rates, value = _backtrack_block(sums, sides, U, step, grad, value, cost, lam2)
        else:
            rates, value = _backtrack_rows(sums, U, step, grad, value, lam2)
        if not rates.any():
            break
        U = U + rates[:, None] * step
        cost = _u_cost(value, U, _side_terms(sides, U)[0], lam2)
    return U, start_cost - cost


def _side_terms(sides, U):
    """The correlation terms' value and half gradient at U."""
    terms = [side.cost_grad(U) for side in sides]
    return sum(value for value, _ in terms), sum(grad for _, grad in terms)


def _side_preconditioner(sides, rows, inverse, U):
    """R -> an approximate inverse of the halved Hessian applied to R: a side's own
    preconditioner given the row blocks (pymanopt's, of the whole Hessian: twice it), else
    the inverse row blocks."""
    own = [side.preconditioner(rows, U) for side in sides if hasattr(side, "preconditioner")]
    if own:
        return lambda R: 2.0 * own[0](U, R)
    return lambda R: np.matmul(inverse, R[..., None])[..., 0]


def _u_cost(value, U, side_value, lam2):
    return float(np.sum(value) + lam2 * np.sum(U * U) + side_value)


def _trial_rates(sums):
    """Step sizes 1, 1/2, 1/4, ... in batches of ``sums.batch`` (one pass each)."""
    for first in range(0, _MAX_HALVINGS, sums.batch):
        yield [0.5 ** i for i in range(first, min(first + sums.batch, _MAX_HALVINGS))]


def _backtrack_rows(sums, U, step, grad, value, lam2):
    """Armijo step sizes of every row, each the largest of 1, 1/2, ... that lowers the row's
    cost enough (0 where none does): without correlation terms the rows are independent.
    Returns the step sizes and the label term of every row at its step."""
    slopes = 2.0 * np.sum(grad * step, axis=1)
    row_cost = value + lam2 * np.sum(U * U, axis=1)
    rates, value = np.zeros(U.shape[0]), value.copy()
    pending = np.flatnonzero(slopes < 0)
    for batch in _trial_rates(sums):
        if not pending.size:
            break
        trials = sums.values(U, step, batch)
        for t, trial in zip(batch, trials):
            moved = U[pending] + t * step[pending]
            total = trial[pending] + lam2 * np.sum(moved * moved, axis=1)
            accepted = total <= row_cost[pending] + _ARMIJO * t * slopes[pending]
            rates[pending[accepted]] = t
            value[pending[accepted]] = trial[pending[accepted]]
            pending = pending[~accepted]
    return rates, value


def _backtrack_block(sums, sides, U, step, grad, value, cost, lam2):
    """The Armijo step size on the whole block, the same for every row (0 if none): the
    correlation terms couple the rows. A decrease the cost cannot resolve (below
    `_FULL_STEP` of it) takes the full step unchecked. Returns the step sizes and the label
    term of every row at the step."""
    slope = 2.0 * np.sum(grad * step)
    if 0 < -slope <= _FULL_STEP * max(cost, 1.0):
        return np.ones(U.shape[0]), sums.values(U, step, [1.0])[0]
    if slope < 0:
        for batch in _trial_rates(sums):
            trials = sums.values(U, step, batch)
            for t, trial in zip(batch, trials):
                moved = U + t * step
                total = _u_cost(trial, moved, _side_terms(sides, moved)[0], lam2)
                if total <= cost + _ARMIJO * t * slope:
                    return np.full(U.shape[0], t), trial
    return np.zeros(U.shape[0]), value
