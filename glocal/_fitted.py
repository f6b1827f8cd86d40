"""What a fitted estimator holds, declared once per estimator class, and the check of a model
(one rebuilt from a file, or about to be saved) against those declarations.

Every estimator class of glocal declares ``_fitted_attributes``: the name of every attribute
``fit`` sets and what it holds (`Array`, `Integer`, `Number`, `Boolean`, `Floats`,
`Mapping`, `Data`, `Model`). Array shapes are written with names: a name ending in ``_`` is
the estimator's integer attribute of that name (``n_features_in_``, ``n_groups_``), any other
name (``n_labels``, ``n_samples``, ``n_latent``) stands for one number that every shape using
it must agree on; ``"n_features_in_+1"`` adds. `check_model` holds a model to them: no other
attribute than its parameters and these (so nothing shadows a method), each of the kind
declared, arrays real and finite with consistent shapes, parameters valid under
``_parameter_constraints``, and nothing callable but estimators anywhere. Estimators of other
libraries (the steps of a Pipeline before a glocal estimator) get the checks that need no
declaration.
"""

import math
from numbers import Integral, Real

import numpy as np

_FEATURES, _LABELS = "n_features_in_", "n_labels"
# Array kinds: the numpy dtype kinds accepted for each, and how messages say them.
# The largest magnitude of a fitted value: the product of two larger ones overflows float64,
# and no fit comes near it.
_LARGEST = np.sqrt(np.finfo(np.float64).max)
_KINDS = {"f": ("f", "real floats"), "i": ("iu", "integers"), "b": ("b", "booleans"),
          "U": ("UO", "strings")}


class ModelError(ValueError):
    """A model that does not hold what its class declares; the message says what."""


class Array:
    """A numpy array of ``kind`` ("f" real floats, "i" integers, "b" booleans, "U" strings)
    and of ``shape``; None too when ``none``. Floats must be finite."""

    def __init__(self, kind, shape, *, none=False):
        self.kind, self.shape, self.none = kind, shape, none

    def check(self, value, where, names):
        if value is None and self.none:
            return
        if not isinstance(value, np.ndarray):
            hint = " (a Dask array: compute it first)" if hasattr(value, "compute") else ""
            raise ModelError(f"{where} is a {type(value).__name__}, not a numpy "
                             f"array{hint}")
        kinds, words = _KINDS[self.kind]
        if value.dtype.kind not in kinds:
            raise ModelError(f"{where} has dtype {value.dtype}, expected {words}")
        if self.kind == "U" and value.dtype.kind == "O" and not all(
                isinstance(item, str) for item in value.ravel()):
            raise ModelError(f"{where} holds values that are not strings")
        if self.kind == "f" and not (np.abs(value) <= _LARGEST).all():
            kinds = [kind for kind, bad in (("NaN", np.isnan(value).any()),
                                            ("infinite", np.isinf(value).any())) if bad]
            raise ModelError(f"{where} holds {' and '.join(kinds) or 'overflowing'} values "
                             f"(a fitted value is finite and at most {_LARGEST:.3g} in size)")
        if value.ndim != len(self.shape):
            raise ModelError(f"{where} is {value.ndim}-D, expected {len(self.shape)}-D")
        for axis, (size, name) in enumerate(zip(value.shape, self.shape)):
            names.unify(name, size, f"{where}'s axis {axis}")


class Integer:
    """A whole number of at least ``low``."""

    def __init__(self, low=0):
        self.low = low

    def check(self, value, where, names):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
            raise ModelError(f"{where} is a {type(value).__name__}, not a whole number")
        if value < self.low:
            raise ModelError(f"{where} is {value}, below {self.low}")


class Number:
    """A real number, finite unless ``finite=False`` (NaN stays possible then)."""

    def __init__(self, finite=True):
        self.finite = finite

    def check(self, value, where, names):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real):
            raise ModelError(f"{where} is a {type(value).__name__}, not a number")
        if self.finite and not math.isfinite(value):
            raise ModelError(f"{where} is {value}, not finite")


class Boolean:
    def check(self, value, where, names):
        if not isinstance(value, (bool, np.bool_)):
            raise ModelError(f"{where} is a {type(value).__name__}, not True or False")


class Floats:
    """A list of finite real numbers."""

    def check(self, value, where, names):
        if not isinstance(value, list):
            raise ModelError(f"{where} is a {type(value).__name__}, not a list of numbers")
        for i, item in enumerate(value):
            Number().check(item, f"{where}[{i}]", names)


class Mapping:
    """A dict from strings to ``values`` (a declaration)."""

    def __init__(self, values):
        self.values = values

    def check(self, value, where, names):
        if not isinstance(value, dict):
            raise ModelError(f"{where} is a {type(value).__name__}, not a dict")
        for key, item in value.items():
            if not isinstance(key, str):
                raise ModelError(f"{where} has a key {key!r} that is not a string")
            self.values.check(item, f"{where}[{key!r}]", names)


class Data:
    """Plain data of any nesting: None, bool, int, float, str, numpy scalars and arrays (no
    objects but these), lists, tuples and dicts with string keys."""

    def check(self, value, where, names):
        check_plain(value, where)


class Model:
    """A fitted estimator, checked against its own class's declaration; it scores the
    same features and labels as the estimator holding it. None too when ``none``."""

    def __init__(self, none=False):
        self.none = none

    def check(self, value, where, names):
        if value is None and self.none:
            return
        inner = check_model(value, where)
        for name in (_FEATURES, _LABELS):
            if name in inner:
                names.unify(name, inner[name], f"{where}'s {name}")


def check_plain(value, where):
    """Refuse anything in ``value`` but plain data (see `Data`)."""
    if value is None or isinstance(value, (bool, int, float, str, np.generic)):
        if isinstance(value, np.generic) and value.dtype.kind not in "biufUS":
            raise ModelError(f"{where} is a {type(value).__name__}, not plain data")
        return
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "O":
            for i, item in enumerate(value.ravel()):
                check_plain(item, f"{where}[{i}]")
        elif value.dtype.kind not in "biufUS":
            raise ModelError(f"{where} has dtype {value.dtype}, not plain data")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            check_plain(item, f"{where}[{i}]")
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise ModelError(f"{where} has a key {key!r} that is not a string")
            check_plain(item, f"{where}[{key!r}]")
        return
    kind = "a function" if callable(value) else f"a {type(value).__name__}"
    raise ModelError(f"{where} is {kind}, not plain data")


class _Names:
    """The numbers the names of shapes stand for, bound at first use."""

    def __init__(self, bound):
        self.values = dict(bound)

    def unify(self, name, size, where):
        if isinstance(name, int):
            expected = name
        elif "+" in name:
            expected = sum(int(part) if part.isdigit() else self.values[part]
                           for part in name.split("+"))
        else:
            expected = self.values.setdefault(name, size)
        if size != expected:
            raise ModelError(f"{where} has size {size}, but {name} is {expected} elsewhere "
                             "in the model")


def check_model(model, where="the model", *, fitted=True):
    """Check ``model`` against its class's declaration (see the module docstring).

    Parameters
    ----------
    model : estimator
        A glocal estimator, a scikit-learn Pipeline or estimator holding glocal estimators,
        or an estimator of another library (given the checks without declaration).
    where : str
        How messages name the model.
    fitted : bool, default=True
        Whether ``model`` must be fitted (a parameter such as GLOCALCV's ``estimator`` is
        not).

    Returns
    -------
    names : dict
        What the names of its shapes stand for, ``n_features_in_`` and ``n_labels`` among
        them when known.

    Raises
    ------
    ModelError (a ValueError)
        Naming the first attribute or parameter that is wrong.
    """
    from sklearn.base import BaseEstimator
    from sklearn.pipeline import Pipeline

    if not isinstance(model, BaseEstimator):
        raise ModelError(f"{where} is a {type(model).__name__}, not an estimator")
    name = f"{where} ({type(model).__name__})"
    state = vars(model)
    try:
        params = model.get_params(deep=False)
    except AttributeError as exc:
        raise ModelError(f"{name} lacks a parameter: {exc}") from None
    for key, value in state.items():
        if _shadows(model, key):
            raise ModelError(f"{name}: its entry '{key}' shadows the method or property "
                             f"'{key}' of {type(model).__name__}")
    declared = getattr(type(model), "_fitted_attributes", None)
    if declared is not None:
        declared = {**_COMMON, **declared}
        fixed = getattr(type(model), "_fixed_parameters", {})
        unknown = sorted(set(state) - set(params) - set(declared) - set(fixed))
        if unknown:
            raise ModelError(f"{name} holds an attribute its class does not have: "
                             f"'{unknown[0]}'")
        for key, value in fixed.items():
            if state.get(key) != value:
                raise ModelError(f"{name}.{key} is {state.get(key)!r}; "
                                 f"{type(model).__name__} fixes it at {value!r}")
    _check_parameters(model, name, params)

    if isinstance(model, Pipeline):
        return _check_pipeline(model, where)
    if declared is None:  # another library's estimator: no callable values, at any depth
        for key, value in state.items():
            if key not in params:
                _check_no_functions(value, f"{name}.{key}")
        return {}
    present = {key: state[key] for key in declared if key in state}
    if not fitted:
        if present:
            raise ModelError(f"{name} is fitted where an unfitted estimator is expected")
        return {}
    missing = [key for key, spec in declared.items() if key not in state
               and not isinstance(spec, _Optional)]
    if missing:
        raise ModelError(f"{name} is not fitted: it has no '{missing[0]}'")
    names = _Names({})
    for key, value in present.items():  # whole numbers first: shapes refer to them
        spec = _unwrap(declared[key])
        if isinstance(spec, Integer):
            spec.check(value, f"{name}.{key}", names)
            names.values[key] = int(value)
    for key, value in present.items():
        spec = _unwrap(declared[key])
        if not isinstance(spec, Integer):
            spec.check(value, f"{name}.{key}", names)
    return names.values


class _Optional:
    """An attribute ``fit`` may leave unset (e.g. ``feature_names_in_``)."""

    def __init__(self, spec):
        self.spec = spec


def _unwrap(spec):
    return spec.spec if isinstance(spec, _Optional) else spec


# Set by scikit-learn's own checks when X has string column names.
_COMMON = {"feature_names_in_": _Optional(Array("U", (_FEATURES,)))}


def _shadows(model, key):
    """Whether an instance entry ``key`` hides a method, property or other class attribute
    that is not plain data."""
    found = getattr(type(model), key, None)
    return found is not None and (callable(found) or hasattr(found, "__get__"))


def _check_parameters(model, name, params):
    from sklearn.base import BaseEstimator

    validate = getattr(model, "_validate_params", None)
    if validate is not None:
        try:
            validate()
        except (ValueError, TypeError) as exc:
            text = " ".join(str(exc).split())
            raise ModelError(f"{name}: {text}") from None
    for key, value in params.items():
        if isinstance(value, BaseEstimator):
            check_model(value, f"{name}.{key}", fitted=False)
        elif key != "steps":
            _check_no_functions(value, f"{name}.{key}")


def _check_no_functions(value, where):
    """Refuse a function (or any callable that is not an estimator) inside ``value``."""
    from sklearn.base import BaseEstimator

    if isinstance(value, BaseEstimator):  # e.g. inside a ColumnTransformer's list
        declared = getattr(type(value), "_fitted_attributes", {})
        check_model(value, where, fitted=any(key in vars(value) for key in declared))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_no_functions(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_no_functions(item, f"{where}[{key!r}]")
    elif callable(value) and not isinstance(value, type):
        raise ModelError(f"{where} is a function ({getattr(value, '__name__', value)!r}); "
                         "a model file holds data only")


def _check_pipeline(pipeline, where):
    """A Pipeline: transformers of any library, then a glocal estimator."""
    steps = pipeline.steps
    if not isinstance(steps, list) or not steps or not all(
            isinstance(step, tuple) and len(step) == 2 and isinstance(step[0], str)
            for step in steps):
        raise ModelError(f"{where}: a Pipeline's steps must be (name, estimator) pairs")
    *transformers, (last_name, last) = steps
    if getattr(type(last), "_fitted_attributes", None) is None:
        raise ModelError(f"{where}: the last step of a Pipeline must be a glocal estimator, "
                         f"not {type(last).__name__}")
    for step_name, step in transformers:
        if step is None or step == "passthrough":
            continue
        check_model(step, f"{where}.{step_name}")
    return check_model(last, f"{where}.{last_name}")


def model_shape(model):
    """The numbers of features and labels a fitted model scores, from its declaration."""
    names = check_model(model)
    return names.get(_FEATURES), names.get(_LABELS)


def fitted_estimator(model):
    """The estimator whose scores ``model`` gives: a Pipeline's last step, a search's refitted
    best model (``best_estimator_``), a wrapper's fitted one (``estimator_``), else itself."""
    model = getattr(model, "steps", [(None, model)])[-1][1]
    for name in ("best_estimator_", "estimator_"):
        model = getattr(model, name, model)
    return model
