"""The package as a whole: its import graph follows the rooms of the architecture.

Each module imports only from its own layer or the layers below (lazy imports inside
functions included), no modules import each other in a cycle, and a private module (a name
starting with ``_``) is imported only from inside the package that holds it.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "glocal"

# The rooms, lowest first; a module belongs to the layer of the longest name listed that
# is it or holds it. The solver's room has layers of its own: the terms of the objective,
# the problems and optimizers that minimize its blocks, the correlation terms built from
# both, then Algorithm 1 and the plan that binds them.
LAYERS = [
    ("foundations", ["glocal", "glocal._utils", "glocal.labels", "glocal.groups",
                     "glocal.manifolds", "glocal.metrics", "glocal.protocol",
                     "glocal.datasets"]),
    ("solver: terms", ["glocal.solver._cache", "glocal.solver.losses",
                       "glocal.solver.label_fit", "glocal.solver.coupling",
                       "glocal.solver.second_moments", "glocal.solver.objective",
                       "glocal.solver.backends", "glocal.solver.dask_backend"]),
    ("solver: problems", ["glocal.solver.preconditioners", "glocal.solver.problems",
                          "glocal.solver.optimizers", "glocal.solver.newton"]),
    ("solver: correlations", ["glocal.solver.correlations"]),
    ("solver: algorithm", ["glocal.solver", "glocal.solver.plan", "glocal.solver.steps",
                           "glocal.solver.algorithm"]),
    ("estimators", ["glocal._base", "glocal._fitted", "glocal._fit_data", "glocal.estimator",
                    "glocal.thresholds", "glocal.model_selection", "glocal.baselines"]),
    ("workflows", ["glocal.reproduce", "glocal.plotting", "glocal.persistence"]),
    ("faces", ["glocal.cli", "glocal.__main__"]),
]


def _modules():
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def _imports(name, path, modules):
    """The package's modules that ``name`` imports, anywhere in its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            submodules = {f"{target}.{alias.name}" for alias in node.names} & set(modules)
            found |= submodules or ({target} & set(modules))
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names} & set(modules)
    return found - {name}


def _layer(name):
    """The rank of ``name``'s layer: that of the longest listed name that is it or holds it."""
    matches = [(len(member), rank) for rank, (_, members) in enumerate(LAYERS)
               for member in members if name == member or name.startswith(member + ".")]
    return max(matches)[1] if matches else None


def _graph():
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def test_every_module_has_a_layer():
    assert [name for name in _graph() if _layer(name) is None] == []


def test_imports_go_only_downward():
    upward = [f"{a} ({LAYERS[_layer(a)][0]}) imports {b} ({LAYERS[_layer(b)][0]})"
              for a, targets in _graph().items() for b in targets if _layer(b) > _layer(a)]
    assert upward == []


def test_no_import_cycles():
    graph = _graph()
    state, cycles = {}, []

    def visit(node, stack):
        state[node] = "open"
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                cycles.append(" -> ".join(stack[stack.index(target):] + [target]))
            elif target not in state:
                visit(target, stack + [target])
        state[node] = "done"

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_private_modules_are_imported_only_inside_their_package():
    """``glocal.solver._cache`` only from ``glocal.solver``, ``glocal.cli._process`` only from
    ``glocal.cli``: other rooms import what a room's public modules (or its ``__init__``)
    name."""
    crossing = []
    for importer, targets in _graph().items():
        for target in targets:
            parts = target.split(".")
            for i, part in enumerate(parts):
                holder = ".".join(parts[:i])
                if (part.startswith("_") and not part.startswith("__") and importer != holder
                        and not importer.startswith(holder + ".")):
                    crossing.append(f"{importer} imports {target}")
    assert crossing == []


def test_at_most_twelve_modules_at_the_top():
    """What users call sits at the top; the solver, the correlation terms, the command line
    and the shared helpers each have a room (a subpackage) of their own."""
    top = sorted(path.stem for path in PACKAGE.glob("*.py")
                 if path.name not in ("__init__.py", "__main__.py"))
    assert len(top) <= 12, top


def test_no_module_over_600_lines():
    long = {str(path.relative_to(PACKAGE)): n for path in PACKAGE.rglob("*.py")
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}
