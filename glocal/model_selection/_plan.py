"""The search's plan: which fits a fold makes, in which order, from which start, and how
tightly each is solved."""

import numpy as np
from sklearn.base import clone

from ._defaults import PATH_SOLVER_OPTIONS


def _plan(candidates, path_param):
    """The order of one fold's fits and where each starts: (candidate, source).

    ``source`` is the index of an earlier candidate whose solution starts the fit, or None
    for GLOCAL's own initial point. Candidates equal but for ``path_param`` and
    ``fit_intercept`` form a path walked in decreasing ``path_param``: at each value the
    first candidate (in grid order) starts from the first one at the previous value, the
    others from it, the same model with or without a bias.
    """
    if path_param is None:
        return [(i, None) for i in range(len(candidates))]
    paths = {}
    for i, params in enumerate(candidates):
        rest = tuple(sorted((name, repr(value)) for name, value in params.items()
                            if name not in (path_param, "fit_intercept")))
        paths.setdefault(rest, []).append(i)
    plan = []
    for path in paths.values():
        steps = {}  # path value -> its candidates, in grid order
        for i in path:
            steps.setdefault(candidates[i].get(path_param, np.inf), []).append(i)
        previous = None
        for value in sorted(steps, reverse=True):
            first, *siblings = steps[value]
            plan.append((first, previous))
            plan.extend((i, first) for i in siblings)
            previous = first
    return plan


def _needed(plan, kept):
    """The settings a fold fits when only those of ``kept`` (bool per candidate) are still
    raced: those, and every setting a fit of theirs starts from, along ``plan``. Racing
    thereby changes which settings are fitted, never where a kept one starts."""
    needed = np.array(kept, dtype=bool)
    for i, source in reversed(plan):
        if needed[i] and source is not None:
            needed[source] = True
    return needed


def _path_model(base, params, path_tol, warm):
    """The estimator of one fit along a path: ``params`` set, stopped at ``path_tol`` with
    block solves at most as tight as `PATH_SOLVER_OPTIONS`, and one round of the basic-model
    initialisation when it starts warm, at a solution of Algorithm 1 for a nearby model (the
    previous value of the path, or the same model without its bias): it takes the largest
    part of the change of lam2 in a round cheaper than Algorithm 1's."""
    model = clone(base).set_params(**params)
    if path_tol is None:
        return model
    # GLOCAL's own block solves are tighter than these; a user's looser ones are kept.
    options = dict(model.solver_options or {})
    cap, rtol = PATH_SOLVER_OPTIONS["block_max_iter"], PATH_SOLVER_OPTIONS["block_rtol"]
    options["block_max_iter"] = min(options.get("block_max_iter", cap), cap)
    options["block_rtol"] = max(options.get("block_rtol", rtol), rtol)
    model.set_params(tol=path_tol, solver_options=options)
    if warm:
        model.set_params(init_max_iter=1)
    return model
