"""The solver's one cache: a function of a point, kept for the last point it was called at."""

_NO_POINT = object()  # nothing evaluated yet: no argument can be this object


class LastPoint:
    """``function(point)``, evaluated once for the last point it was called at.

    pymanopt calls the cost, the gradient and every Hessian-vector product of one
    trust-region iteration at the same point (the same array object), and the solver reads
    X W for the same W in several steps of a round. Points are compared by identity: a
    point is never changed in place once evaluated.
    """

    def __init__(self, function):
        self._function = function
        self._point = _NO_POINT
        self._value = None

    def __call__(self, point):
        if point is not self._point:
            self._value = self._function(point)
            self._point = point
        return self._value

    def seed(self, point, value):
        """Record ``value`` as the function at ``point``, computed elsewhere."""
        self._point, self._value = point, value
