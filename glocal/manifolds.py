"""The manifold of the Z block: arrays whose rows have unit Euclidean norm.

pymanopt's `Oblique(m, n)` normalises *columns* of one matrix. GLOCAL constrains the *rows* of
each Z_m (diag(Z_m Z_m^T) = 1), and solves all g groups at once, so the natural point is a
(g, l, k) array with unit-norm rows along the last axis: a product of g * l spheres S^{k-1}.
The geometry is the Riemannian submanifold one, as in pymanopt's `Oblique`, along axis -1.
"""

import numpy as np
from pymanopt.manifolds import Euclidean
from pymanopt.manifolds.manifold import RiemannianSubmanifold

__all__ = ["UnitRows", "RealEuclidean", "normalize_rows"]


def normalize_rows(array):
    """Scale every row (last axis) of ``array`` to unit norm."""
    return array / np.linalg.norm(array, axis=-1, keepdims=True)


def _row_dot(a, b):
    return np.sum(a * b, axis=-1, keepdims=True)


class RealEuclidean(Euclidean):
    """pymanopt's `Euclidean` for real arrays: its inner product conjugates (copies) the
    first vector and contracts with tensordot; a flat dot product is the same number at a
    fraction of the cost (it runs once per inner step of every optimizer)."""

    def inner_product(self, point, tangent_vector_a, tangent_vector_b):
        return float(np.vdot(tangent_vector_a, tangent_vector_b))


class UnitRows(RiemannianSubmanifold):
    """Arrays of a given shape whose rows (last axis) have unit norm.

    Parameters
    ----------
    *shape : int
        The shape of a point, e.g. ``(g, l, k)`` for the g label-Laplacian factors Z_m.
        Each row of length ``shape[-1]`` lies on the unit sphere.
    """

    def __init__(self, *shape):
        if len(shape) < 1 or min(shape) < 1:
            raise ValueError(f"UnitRows needs a non-empty shape, got {shape}")
        self._shape = tuple(int(s) for s in shape)
        n_rows = int(np.prod(self._shape[:-1]))
        super().__init__(f"Unit-norm rows {self._shape}", n_rows * (self._shape[-1] - 1))

    @property
    def typical_dist(self):
        return np.pi * np.sqrt(np.prod(self._shape[:-1]))

    def inner_product(self, point, tangent_vector_a, tangent_vector_b):
        return float(np.vdot(tangent_vector_a, tangent_vector_b))  # a flat dot, no tensordot

    def norm(self, point, tangent_vector):
        return float(np.linalg.norm(tangent_vector))

    def dist(self, point_a, point_b):
        cosines = np.clip(np.sum(point_a * point_b, axis=-1), -1.0, 1.0)
        return float(np.linalg.norm(np.arccos(cosines)))

    def projection(self, point, vector):
        return vector - point * _row_dot(point, vector)

    to_tangent_space = projection

    def euclidean_to_riemannian_hessian(self, point, euclidean_gradient, euclidean_hessian,
                                        tangent_vector):
        # Weingarten term of each sphere: the curvature seen along the direction.
        return (self.projection(point, euclidean_hessian)
                - tangent_vector * _row_dot(point, euclidean_gradient))

    def retraction(self, point, tangent_vector):
        return normalize_rows(point + tangent_vector)

    def exp(self, point, tangent_vector):
        norms = np.linalg.norm(tangent_vector, axis=-1, keepdims=True)
        return point * np.cos(norms) + tangent_vector * np.sinc(norms / np.pi)

    def log(self, point_a, point_b):
        vector = self.projection(point_a, point_b - point_a)
        angles = np.arccos(np.clip(np.sum(point_a * point_b, axis=-1, keepdims=True), -1, 1))
        norms = np.linalg.norm(vector, axis=-1, keepdims=True)
        eps = np.finfo(float).eps
        return vector * (angles + eps) / (norms + eps)

    def random_point(self):
        return normalize_rows(np.random.normal(size=self._shape))

    def random_tangent_vector(self, point):
        vector = self.projection(point, np.random.normal(size=self._shape))
        return vector / np.linalg.norm(vector)

    def transport(self, point_a, point_b, tangent_vector_a):
        return self.projection(point_b, tangent_vector_a)

    def pair_mean(self, point_a, point_b):
        return normalize_rows(point_a + point_b)

    def zero_vector(self, point):
        return np.zeros(self._shape)
