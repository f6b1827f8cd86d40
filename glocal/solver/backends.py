"""How the solver reaches the samples: sums over them and maps of them.

Every quantity of a fit that involves the n samples is a sum over samples of small
statistics (``sum``) or an array aligned with the samples (``map``: the columns of V, the
rows of P = X W). A backend runs such a function on the fit's `glocal.solver.objective.GlocalData`
(``GlocalData.samples``): `InMemory` once on the whole data,
`glocal.solver.dask_backend.DaskSamples` on every chunk of rows of a Dask X, adding up or
concatenating the results. The solver is the same for both.

A backend has the methods below and the attribute ``in_memory`` (whether a pass over the
samples is cheap: read by `glocal.solver.plan` only, where the auto choices are made).
"""

from dataclasses import replace

import numpy as np

__all__ = ["InMemory"]


class InMemory:
    """The samples of a fit in memory: every sum and map runs once on the whole data."""

    in_memory = True

    def sum(self, function, data, *arrays, reads="XY"):
        """``function(data, *arrays)``: an array, a float or a tuple of them summed over the
        samples. ``arrays`` are aligned with the samples (V, k x n; P, n x k). ``reads``
        names the parts of the data the function reads, "X" (features) and "Y" (labels,
        mask and weights); the function gets the data without the others (None), as on a
        backend that splits the data."""
        return function(_part(data, reads), *arrays)

    def map(self, function, data, *arrays, sample_axis, width, reads="XY"):
        """``function(data, *arrays)``: an array with the samples along ``sample_axis``
        (0: n x width; 1: width x n)."""
        return function(_part(data, reads), *arrays)

    def sum_and_map(self, function, data, *arrays, sample_axis, width, reads="XY"):
        """``function`` returns a sum and an aligned array (see `sum` and `map`): the sum
        now, and a function that gives the array when first asked (a backend that splits
        the data makes it then; here it is at hand)."""
        total, mapped = function(_part(data, reads), *arrays)
        return total, lambda: mapped

    def group_sizes(self, group_index):
        """n_m for every group."""
        return np.array([len(idx) for idx in group_index])


def _part(data, reads):
    """The data without the parts a function does not read."""
    if reads == "XY":
        return data
    unread = {} if "X" in reads else {"X": None}
    if "Y" not in reads:
        unread.update(Y=None, J=None, weights=None)
    return replace(data, **unread)


IN_MEMORY = InMemory()
