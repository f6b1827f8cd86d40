"""The walk of X through a fit: how often a reader following the features changes module.

Runs one ``GLOCAL(**params).fit(X, Y)`` on in-memory data under a profiler and keeps the
calls of the package's functions that receive the features: an argument that is X (a 2-D
array, sparse matrix or Dask array of n rows and d or d + 1 columns, the constant feature of
``fit_intercept`` included), the record that holds it as ``.X`` (the fit's
`glocal.solver.objective.GlocalData`, or a chunk of it), or an object that holds that record as
``.data`` (the solver's plan, its steps). Each function counts once, at its first such call
(property getters not at all: reading one is an attribute read): the list is the order in
which a reader meets the code that touches X. A *move* is a step of that list into another
module; it goes *back up* when that module sits in a higher layer (the layers of the
package's import test, ``tests/test_glocal.py``). Prints the walk, the number of moves and
the number back up.

    python benchmarks/walk_of_x.py [--dataset emotions] [--data-dir DIR] [--params '{}']
"""

import argparse
import json
import sys
import threading
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import glocal
from glocal import GLOCAL
from glocal.datasets import load_dataset

# The package's layers, lowest first, as its import test states them.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_glocal import _layer  # noqa: E402

PACKAGE = Path(glocal.__file__).resolve().parent


def module_of(filename):
    """The package module of a source file, dotted below the package ("solver.plan",
    "datasets" for the datasets subpackage, whose modules count as one), None outside it."""
    path = Path(filename).resolve()
    if PACKAGE not in path.parents:
        return None
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[0] == "datasets":
        return "datasets"
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_features(value, shape):
    if not (isinstance(value, np.ndarray) or sp.issparse(value)
            or type(value).__module__.startswith("dask.")):
        return False
    n, d = shape
    value_shape = getattr(value, "shape", ())
    return len(value_shape) == 2 and value_shape[0] == n and value_shape[1] in (d, d + 1)


def _holds_features(value, shape, depth=2):
    """X itself, the record that holds it as its attribute ``X`` (the fit's GlocalData, a
    chunk of it), or an object that holds that record as its attribute ``data``."""
    if _is_features(value, shape):
        return True
    if depth == 0 or isinstance(value, np.ndarray) or sp.issparse(value):
        return False
    try:
        attributes = vars(value)
    except TypeError:  # no __dict__: not a record
        return False
    inner = attributes.get("X")
    if inner is not None and _is_features(inner, shape):
        return True
    inner = attributes.get("data")
    return inner is not None and _holds_features(inner, shape, depth - 1)


def _property_getters():
    """The code of every property getter of the package's classes: reading a property is an
    attribute read, not a call the data travels through."""
    import inspect

    codes = set()
    for name, module in list(sys.modules.items()):  # the modules a fit imports
        if name != "glocal" and not name.startswith("glocal."):
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            for value in vars(cls).values():
                if isinstance(value, property) and value.fget is not None:
                    codes.add(value.fget.__code__)
    return codes


def walk(X, Y, params):
    """The first call of every package function that receives X, in order: (module,
    qualified name)."""
    seen, order = _property_getters(), []

    def profile(frame, event, arg):
        if event != "call" or frame.f_code in seen:
            return
        module = module_of(frame.f_code.co_filename)
        if module is None:
            return
        code = frame.f_code
        arguments = [frame.f_locals.get(name)
                     for name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]]
        if any(_holds_features(value, X.shape) for value in arguments):
            seen.add(code)
            order.append((module, code.co_qualname if hasattr(code, "co_qualname")
                          else code.co_name))

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        GLOCAL(**params).fit(X, Y)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return order


def moves(order):
    """The module-to-module steps of a walk and how many of them go up a layer."""
    steps = [(a[0], b[0]) for a, b in zip(order, order[1:]) if a[0] != b[0]]
    return steps, sum(_rank(b) > _rank(a) for a, b in steps)


def _rank(module):
    """The layer of a package module (0: the lowest)."""
    return _layer(f"glocal.{module}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="emotions")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--params", default='{"random_state": 0}',
                        help="GLOCAL's parameters as JSON")
    args = parser.parse_args()
    data = load_dataset(args.dataset, args.data_dir)
    order = walk(data.X, data.Y, json.loads(args.params))
    steps, up = moves(order)
    previous = None
    for module, name in order:
        mark = "" if module == previous else ("  ^" if previous is not None
                                              and _rank(module) > _rank(previous) else "  >")
        print(f"{mark:4}{module:16} {name}")
        previous = module
    print(f"{args.dataset}, GLOCAL({args.params}): {len(order)} functions, {len(steps)} moves "
          f"between modules, {up} back up a layer")


if __name__ == "__main__":
    main()
