"""glocal: multi-label learning with global and local label correlations, on pymanopt.

The GLOCAL method of Zhu, Kwok & Zhou (IEEE TKDE 2018), with missing labels, as a
scikit-learn estimator whose alternating blocks are pymanopt problems.
"""

import importlib

__version__ = "0.1.0"

__all__ = ["GLOCAL", "GLOCALCV", "GLObal", "loCAL", "FitCache", "LabelWarning",
           "from_signed_labels", "__version__"]

# Imported on first use (PEP 562), so that `glocal --help` does not wait for scikit-learn.
_LAZY = {"GLOCAL": ".estimator", "GLObal": ".estimator", "loCAL": ".estimator",
         "FitCache": ".estimator",
         "GLOCALCV": ".model_selection", "LabelWarning": "._utils.validation",
         "from_signed_labels": "._utils.validation"}


def __getattr__(name):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
