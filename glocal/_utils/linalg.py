"""Linear algebra the blocks share: factorizations that survive the rounding of badly scaled
data, and preconditioned conjugate gradients."""

import numpy as np
import scipy.linalg

# Jitters tried, as multiples of eps times the largest diagonal entry: from the rounding
# error of forming a Gram matrix (about eps times its entries) to a million times that.
_JITTERS = 10.0 ** np.arange(0, 7)


def cho_factor_psd(A, lower=False):
    """`scipy.linalg.cho_factor` of a symmetric matrix positive definite in exact arithmetic.

    A Gram matrix X^T X + lam I of features with a large common offset (timestamps, raw
    identifiers) is positive definite, but its entries are so large that the rounding of
    forming it (about eps times them) exceeds lam and its smallest eigenvalues: the computed
    matrix is then indefinite and plain Cholesky fails. Here the diagonal is raised by the
    smallest jitter ``eps * max(diag(A)) * 10^j`` (j = 0, ..., 6) that makes it succeed,
    a change of the order of that rounding. A matrix that factors as it is, as on ordinary
    data, is factored unchanged. ``A`` is not modified.

    Returns
    -------
    (c, lower)
        As `scipy.linalg.cho_factor`, for `scipy.linalg.cho_solve`.

    Raises
    ------
    ValueError
        If even the largest jitter leaves the matrix indefinite (or it is not finite): the
        features are too badly scaled for float64; the message says to centre or rescale
        them.
    """
    try:
        return scipy.linalg.cho_factor(A, lower=lower)
    except (np.linalg.LinAlgError, ValueError):
        pass
    diagonal = np.diag(A)
    if np.all(np.isfinite(A)):
        scale = np.finfo(float).eps * max(float(np.max(np.abs(diagonal))), np.finfo(float).tiny)
        eye = np.eye(A.shape[0])
        for jitter in _JITTERS:
            try:
                return scipy.linalg.cho_factor(A + (jitter * scale) * eye, lower=lower)
            except np.linalg.LinAlgError:
                continue
    raise ValueError("the features are too badly scaled for float64 arithmetic (their "
                     "second moments cannot be factored; a large common offset, such as "
                     "timestamps or raw identifiers, does this): centre or rescale X, e.g. "
                     "with sklearn.preprocessing.StandardScaler")


def conjugate_gradients(apply, precondition, rhs, start, tolerance, max_iter):
    """Preconditioned conjugate gradients on ``apply(x) = rhs`` from ``start``.

    ``apply`` is a symmetric positive definite linear map on arrays of ``rhs``'s shape and
    ``precondition`` an approximation of its inverse. Stops when the residual
    ``rhs - apply(x)`` is at most ``tolerance`` in norm or after ``max_iter`` steps. For the
    quadratic block ``x^T A x / 2 - rhs^T x``, every step lowers its value.

    Returns
    -------
    x : ndarray
    iterations : int
    """
    x = np.array(start, dtype=float)
    residual = rhs - apply(x)
    preconditioned = precondition(residual)
    direction = preconditioned
    product = np.vdot(residual, preconditioned)
    iterations = 0
    # product <= 0 only once the residual is zero to rounding.
    while np.linalg.norm(residual) > tolerance and iterations < max_iter and product > 0:
        image = apply(direction)
        step = product / np.vdot(direction, image)
        x = x + step * direction  # not in place: precondition may return its argument
        residual = residual - step * image
        preconditioned = precondition(residual)
        product, previous = np.vdot(residual, preconditioned), product
        direction = preconditioned + (product / previous) * direction
        iterations += 1
    return x, iterations
