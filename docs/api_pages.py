"""Write the API reference page: the public names of every public module.

A module's public names are the classes and functions of its ``__all__``; constants are
described in the pages of the functions that use them. ``__all__`` is read from the module's source,
not by importing it, so that writing the page needs no optional extra
(``glocal.solver.dask_backend`` imports dask; autodoc imports it with dask mocked, see
``conf.py``).

Generated at build time rather than kept by hand, so that a new public name cannot be
left out.
"""

import ast
import importlib.util
from pathlib import Path

# The rooms of the package, as the Design page draws them, each with its public modules.
ROOMS = [
    ("What users call", "The estimators and what a user's script calls around them.", {
        "glocal": "The estimators",
        "glocal.model_selection": "Model selection",
        "glocal.thresholds": "Label sets from scores",
        "glocal.persistence": "Saving models",
        "glocal.plotting": "Figures",
        "glocal.protocol": "The paper's protocol",
        "glocal.metrics": "Measures",
        "glocal.datasets": "Datasets",
        "glocal.baselines": "The paper's competitors",
        "glocal.reproduce": "Reproducing the paper's tables",
        "glocal.groups": "Local groups",
        "glocal.labels": "Sparse labels",
        "glocal.manifolds": "The manifold of the Z block",
    }),
    ("The solver", "Algorithm 1 on plain arrays, and the correlation terms it fits.", {
        "glocal.solver": "Algorithm 1",
        "glocal.solver.correlations": "The correlation terms",
        "glocal.solver.dask_backend": "The samples on Dask",
    }),
]
MODULES = {name: title for _, _, modules in ROOMS for name, title in modules.items()}


def _source(module_name):
    """The module's file, found without running the module (only its package)."""
    return Path(importlib.util.find_spec(module_name).origin)


def _defined():
    """The names of the package's classes and functions (``class`` and ``def`` statements)."""
    names = set()
    for path in _source("glocal").parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                names.add(node.name)
    return names


def public_names(module_name):
    """The documented names of one module: the classes and functions of its ``__all__``."""
    tree = ast.parse(_source(module_name).read_text())
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and getattr(node.targets[0], "id", None) == "__all__"):
            defined = _defined()
            return [name for name in ast.literal_eval(node.value)
                    if not name.startswith("_") and name in defined]
    raise ValueError(f"{module_name} has no __all__: say which of its names are public")


def write_api_page(path):
    lines = ["API reference", "=============", "",
             "The public classes and functions, by room of the package (the Design page draws "
             "them) and module. The estimators follow the scikit-learn API (``fit``, "
             "``predict``, ``decision_function``, ``score``).", ""]
    for room, intro, modules in ROOMS:
        lines += [room, "-" * len(room), "", intro, ""]
        for module_name, title in modules.items():
            lines += [title, "~" * len(title), "", f".. automodule:: {module_name}",
                      "   :no-members:", "   :no-index:", "", f".. currentmodule:: {module_name}",
                      "", ".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
            lines += [f"   {name}" for name in sorted(public_names(module_name), key=str.lower)]
            lines.append("")
    text = "\n".join(lines)
    if not path.exists() or path.read_text() != text:  # unchanged: no rebuild of the page
        path.write_text(text)
