"""The package as a whole: its import graph follows the layers of the architecture.

Each module imports only from its own layer or the layers below (lazy imports inside
functions included), and no modules import each other in a cycle.
"""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "glocal"

# Lowest first; a module not listed belongs to the layer of its package.
LAYERS = [
    ("foundations", ["glocal", "glocal._validation", "glocal._base", "glocal._io",
                     "glocal._linalg", "glocal._fitted", "glocal._process",
                     "glocal._cache", "glocal.labels", "glocal.losses", "glocal.label_fit",
                     "glocal.coupling", "glocal.second_moments", "glocal.objective",
                     "glocal.backends", "glocal.dask_backend", "glocal.groups",
                     "glocal.metrics", "glocal._progress", "glocal.protocol",
                     "glocal.datasets"]),
    ("problems", ["glocal.manifolds", "glocal.preconditioners", "glocal.problems",
                  "glocal.optimizers", "glocal.newton", "glocal.correlation",
                  "glocal.laplacians", "glocal.centered", "glocal.implications"]),
    ("solver", ["glocal.plan", "glocal.steps", "glocal.solver"]),
    ("estimators", ["glocal._fit_data", "glocal.estimator", "glocal.thresholds",
                    "glocal.model_selection", "glocal.baselines"]),
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
    for rank, (_, members) in enumerate(LAYERS):
        if any(name == member or name.startswith(member + ".") for member in members
               if member != "glocal"):
            return rank
    return 0 if name == "glocal" else None


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
