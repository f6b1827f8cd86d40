"""Write the API reference page: every public class and function of every public module.

Generated at build time rather than kept by hand, so that a new public name cannot be
left out. A module's public names are its ``__all__`` when it has one, else the classes
and functions it defines whose names do not start with an underscore.
"""

import importlib
import inspect

MODULES = {
    "glocal": "The estimators",
    "glocal.datasets": "Datasets",
    "glocal.baselines": "The paper's competitors",
    "glocal.metrics": "Measures",
    "glocal.protocol": "The paper's protocol",
    "glocal.groups": "Local groups",
    "glocal.solver": "The solver (Algorithm 1)",
    "glocal.dask_backend": "The samples on Dask",
    "glocal.objective": "The objective and its derivatives",
    "glocal.labels": "Sparse labels",
    "glocal.problems": "The blocks as pymanopt problems",
    "glocal.manifolds": "The manifold of the Z block",
    "glocal.plotting": "Figures",
    "glocal.reproduce": "Reproducing the paper's tables",
}


def public_names(module_name):
    """The documented names of one module: classes and functions, in a stable order."""
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name, value in vars(module).items()
                 if not name.startswith("_") and (inspect.isclass(value)
                                                  or inspect.isfunction(value))
                 and getattr(value, "__module__", "").startswith(module_name)]
    return [name for name in names
            if inspect.isclass(getattr(module, name)) or callable(getattr(module, name))]


def write_api_page(path):
    lines = ["API reference", "=============", "",
             "Every public class and function, by module. The estimators follow the "
             "scikit-learn API (``fit``, ``predict``, ``decision_function``, ``score``).", ""]
    for module_name, title in MODULES.items():
        lines += [title, "-" * len(title), "", f".. automodule:: {module_name}",
                  "   :no-members:", "   :no-index:", "", f".. currentmodule:: {module_name}",
                  "", ".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
        lines += [f"   {name}" for name in sorted(public_names(module_name), key=str.lower)]
        lines.append("")
    text = "\n".join(lines)
    if not path.exists() or path.read_text() != text:  # unchanged: no rebuild of the page
        path.write_text(text)
