"""Losses on the observed label entries, for GLOCAL's label-fit term (pure numpy).

The paper's label-fit term is the squared error ||J o (Y - U V)||^2. The opt-in
generalization (GLOCAL's ``loss`` and ``class_weight``) is

    L(F) = sum_{j, i} c_ji ell(y_ji, f_ji),        F = U V,                       (Eq. L)

with y_ji in {-1, +1} on observed entries and c_ji >= 0 a weight that is 0 on missing
entries (1 on observed ones unless class weights are asked for). Every loss below returns,
entry by entry, its value, its first derivative d ell / d f and its (generalized) second
derivative, so that the gradient of Eq. L in F is ``C o ell'(F)`` and its Hessian acts on a
direction D_F as ``C o ell''(F) o D_F``.
"""

import numpy as np
from scipy.special import expit

LOSSES = ("squared", "squared_hinge", "logistic")


def squared(F, Y):
    """ell(y, f) = (f - y)^2, the paper's loss (Eq. 4): 2 (f - y) and 2."""
    residual = F - Y
    return residual ** 2, 2.0 * residual, np.full_like(F, 2.0)


def squared_hinge(F, Y):
    """ell(y, f) = max(0, 1 - y f)^2, what `sklearn.svm.LinearSVC` minimizes.

    Its derivative is -2 y max(0, 1 - y f); the second derivative, undefined at the hinge,
    is taken as 2 [y f < 1] (the generalized Hessian, Mangasarian 2002), using y^2 = 1.
    """
    # In place where it can be: with many labels the l x n arrays are passes over memory.
    margin = Y * F
    np.subtract(1.0, margin, out=margin)
    np.maximum(margin, 0.0, out=margin)
    first = Y * margin
    first *= -2.0
    second = np.greater(margin, 0.0).astype(float)
    second *= 2.0
    margin *= margin
    return margin, first, second


def logistic(F, Y):
    """ell(y, f) = log(1 + exp(-y f)): -y sigma(-y f) and sigma(y f) sigma(-y f) (y^2 = 1)."""
    z = Y * F
    return np.logaddexp(0.0, -z), -Y * expit(-z), expit(z) * expit(-z)


_LOSS_FUNCTIONS = {"squared": squared, "squared_hinge": squared_hinge, "logistic": logistic}


def _terms(loss, F, Y):
    try:
        return _LOSS_FUNCTIONS[loss](F, Y)
    except KeyError:
        raise ValueError(f"unknown loss {loss!r}; expected one of {LOSSES}") from None


def loss_value_and_gradient(F, Y, C, loss):
    """Eq. L and its gradient in F, ``C o ell'(F)`` (l x n)."""
    return loss_terms(F, Y, C, loss)[:2]


def loss_terms(F, Y, C, loss, axis=None):
    """Eq. L, its gradient ``C o ell'(F)`` and its curvature ``C o ell''(F)`` (l x n; the
    Hessian in F is this weight entry by entry), from one evaluation of the loss. C may be
    the scalar 1 (every entry observed, unweighted): no product is formed then. With
    ``axis=0`` the value is Eq. L's sum over each column (sample) apart, shape (n,)."""
    value, first, second = _terms(loss, F, Y)  # new arrays: weighted in place
    if not (np.isscalar(C) and C == 1):
        value *= C
        first *= C
        second *= C
    value = np.sum(value, axis=axis)
    return (float(value) if axis is None else value), first, second


def balanced_class_weights(Y, J):
    """Per-label weights c_ji = n_j / (2 n_j(y_ji)) on observed entries, 0 on missing ones.

    n_j counts the observed entries of label j and n_j(+1), n_j(-1) its observed positives
    and negatives, as ``class_weight="balanced"`` of scikit-learn does per binary problem:
    each class of each label then weighs n_j / 2 in total.

    Parameters
    ----------
    Y : ndarray of shape (l, n)
        +1 / -1 on observed entries, 0 on missing ones.
    J : ndarray of shape (l, n) or None
        0/1 mask of the observed entries (None: all observed).

    Returns
    -------
    ndarray of shape (l, n)
    """
    observed = np.ones_like(Y) if J is None else J
    positive = observed * (Y > 0)
    negative = observed * (Y < 0)
    n_observed = observed.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        w_pos = np.where(positive.sum(1, keepdims=True) > 0,
                         n_observed / (2.0 * positive.sum(1, keepdims=True)), 0.0)
        w_neg = np.where(negative.sum(1, keepdims=True) > 0,
                         n_observed / (2.0 * negative.sum(1, keepdims=True)), 0.0)
    return positive * w_pos + negative * w_neg
