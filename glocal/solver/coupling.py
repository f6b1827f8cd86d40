"""The coupling term lam ||V - W^T X||^2 and the Frobenius terms of Eq. (4).

The features reach the objective through the scores P = X W (n x k; ``P.T`` is the paper's
W^T X): the coupling term, the W block's statistics of V, the groups' Gram matrices of P that
the correlation terms read, and the Gram matrix of the scores whose top eigenvectors start
the basic model (`glocal.solver.steps.ridge_start`).
"""

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from .label_fit import squared_norm

__all__ = ["feature_product", "frobenius_terms"]


def feature_product(W, data):
    """P = X W, shape (n, k)."""
    return data.samples.map(lambda part: np.asarray(part.X @ W), data, sample_axis=0,
                            width=W.shape[1], reads="X")


def feature_squares(data):
    """The squared norm of every column of X, shape (d,): the diagonal of X^T X."""
    def squares(part):
        X = part.X
        return np.asarray((X.multiply(X) if scipy.sparse.issparse(X) else X * X).sum(axis=0)
                          ).ravel()
    return data.samples.sum(squares, data, reads="X")


def group_grams(P, data):
    """P_m^T P_m for every group, shape (g, k, k)."""
    return data.samples.sum(
        lambda part, P: np.stack([P[idx].T @ P[idx] for idx in part.group_index]), data, P,
        reads="")


def w_statistics(V, data):
    """X^T V^T (d x k) and ||V||^2: what the W block needs of V, from one pass."""
    return data.samples.sum(lambda part, V: (np.asarray(part.X.T @ V.T), float(np.sum(V ** 2))),
                            data, V, reads="X")


def coupling_terms(V, P):
    """||V - W^T X||^2 (unweighted) and ||V||^2 of a part of the samples, P = X W."""
    return squared_norm(V - P.T), squared_norm(V)


def frobenius_terms(U, V_sq_norm, W, lam2, v_weight):
    """lam2 (||U||^2 + ||V||^2 + ||W||^2), with ``v_weight`` (lam_v when given) on ||V||^2."""
    return lam2 * (squared_norm(U) + squared_norm(W)) + v_weight * V_sq_norm


def score_gram(W, data, max_entries=2**24):
    """F F^T with F = (X W)^T, shape (m, m) for W of m columns: the Gram matrix of X W.

    F is formed for at most ``max_entries`` / m rows of X at a time (m x n floats would be
    the largest array of a fit with many labels and samples).
    """
    def gram(part):
        rows = max(1, max_entries // W.shape[1])
        total = 0.0
        for start in range(0, part.X.shape[0], rows):
            F = np.asarray(part.X[start:start + rows] @ W).T
            total = total + F @ F.T
        return total
    return data.samples.sum(gram, data, reads="X")


def score_gram_product(W, A, data):
    """(F F^T) A with F = (X W)^T, from products with W and X^T X (no m x m or m x n array)."""
    return W.T @ data.moments.gram_product(W @ A, data)


def dense_score_directions(W_ridge, data, n_latent):
    """The top ``n_latent`` eigenvalues (descending) and eigenvectors of F F^T, with
    F = (X W_ridge)^T the l x n ridge scores, from the l x l matrix."""
    eigenvalues, vectors = np.linalg.eigh(score_gram(W_ridge, data))
    top = np.argsort(eigenvalues)[::-1][:n_latent]
    return eigenvalues[top], vectors[:, top]


def lanczos_score_directions(W_ridge, data, n_latent):
    """The same by Lanczos iterations on products with F F^T (no l x l matrix)."""
    l = W_ridge.shape[1]
    gram = scipy.sparse.linalg.LinearOperator(
        (l, l), matvec=lambda v: score_gram_product(W_ridge, np.ravel(v), data),
        dtype=float)
    eigenvalues, vectors = scipy.sparse.linalg.eigsh(gram, k=min(n_latent, l - 1),
                                                     v0=np.ones(l))  # deterministic start
    order = np.argsort(eigenvalues)[::-1]
    return eigenvalues[order], vectors[:, order]
