"""A fitted model predicts from what fit stored: parameters changed after fit change no
prediction until the next fit (as in scikit-learn)."""

import warnings
from numbers import Integral, Real

import numpy as np
import pytest
from estimators import quick_estimators, quick_search
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from glocal.baselines import BR
from glocal.datasets import make_glocal_data


def _other_value(value, constraints):
    """A value other than ``value`` that one of ``constraints`` allows."""
    for constraint in constraints:
        if constraint == "boolean":
            return not value
        if constraint in ("random_state", "verbose"):
            return 1 if value in (None, 0) else 0
        if isinstance(constraint, StrOptions):
            others = sorted(set(constraint.options) - {value})
            if others:
                return others[0]
        if isinstance(constraint, Interval):
            start = value if isinstance(value, constraint.type) else (constraint.left or 1)
            other = start * 2 + 1
            return int(other) if constraint.type is Integral else float(other)
        if isinstance(constraint, HasMethods):
            return BR(C=1.0)
        if constraint is Real or constraint is Integral:
            return 2 if value is None else value + 1
    if None in constraints and value is not None:
        return None
    return None if value is not None else {}


@pytest.fixture(scope="module")
def data():
    bunch = make_glocal_data(n_samples=80, random_state=0)
    return bunch.X, bunch.Y.astype(float)


def _model(name):
    from glocal.thresholds import LabelThresholdsCV

    if name == "GLOCALCV":
        return quick_search()
    if name == "LabelThresholdsCV":
        return LabelThresholdsCV(BR(), cv=2, random_state=0)
    return quick_estimators()[name]


@pytest.mark.parametrize("name", [*quick_estimators(), "GLOCALCV", "LabelThresholdsCV"])
def test_set_params_after_fit_changes_no_prediction(data, name):
    X, Y = data
    model = _model(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, Y)
    scores, labels = model.decision_function(X), model.predict(X)
    changed = []
    for param, value in model.get_params(deep=False).items():
        other = _other_value(value, type(model)._parameter_constraints[param])
        model.set_params(**{param: other})
        if not (np.array_equal(model.decision_function(X), scores)
                and np.array_equal(model.predict(X), labels)):
            changed.append(f"{param}={other!r}")
        model.set_params(**{param: value})
    assert not changed, f"{name}: predictions changed after set_params({', '.join(changed)})"
