"""Every script in examples/ (and the tutorials in examples/tutorials/) runs without
arguments, passes its own checks and writes its figures.

Each script runs as ``__main__`` in this process (a new interpreter would spend more time
importing than most scripts spend running); one runs in its own process, as a user starts
it, and so do the real-data scripts' checks of their exit codes.
"""

import os
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import matplotlib
import matplotlib.image
import pytest
from realdata import DATA_DIR, real

pytestmark = pytest.mark.slow  # every example runs, a fit or more each
EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
# The figures of every example, and the real dataset it needs (None: synthetic data only).
EXAMPLES = {
    "plot_quick_start.py": (["quick_start_convergence.png", "quick_start_scores.png"], None),
    "plot_missing_labels.py": (["missing_labels.png"], None),
    "plot_correlations_image.py": (
        ["image_correlations_learned.png", "image_correlations_labels.png"], "image"),
    "plot_oblique_manifold.py": (["oblique_manifold.png"], None),
    "plot_asymmetric_correlations.py": (
        ["asymmetric_correlations.png", "symmetric_correlations.png"], None),
    "plot_domain_groups.py": (["domain_groups.png"], None),
    "plot_pipeline_gridsearch.py": (["pipeline_gridsearch.png"], None),
    "plot_saved_model.py": (["saved_model_weights.png"], None),
    "plot_sensitivity_enron.py": (
        [f"enron_sensitivity_{p}.png" for p in ("g", "lam3", "lam4", "k", "lam2")], "enron"),
}

# The tutorial series: each step asserts what it teaches and writes one figure.
TUTORIALS = {
    "plot_1_euclidean_blocks.py": "tutorial_euclidean_blocks.png",
    "plot_2_unit_rows.py": "tutorial_unit_rows.png",
    "plot_3_optimizers.py": "tutorial_optimizers.png",
    "plot_4_preconditioning.py": "tutorial_preconditioning.png",
    "plot_5_your_own_block.py": "tutorial_your_own_block.png",
}


def _run(script, tmp_path, **env):
    environment = {**os.environ, "MPLBACKEND": "Agg", "GLOCAL_EXAMPLES_OUT": str(tmp_path),
                   "GLOCAL_DATA": str(DATA_DIR), **env}
    environment = {key: value for key, value in environment.items() if value is not None}
    return subprocess.run([sys.executable, str(EXAMPLES_DIR / script)], cwd=tmp_path,
                          env=environment, capture_output=True, text=True, timeout=300,
                          check=False)


def _run_here(script, tmp_path, monkeypatch):
    """Run ``script`` as `_run` does, in this process: as ``__main__``, without arguments,
    from ``tmp_path``, its figures to ``tmp_path``. Its warnings (capped fits) are not
    what is tested and stay out of the suite's summary; matplotlib's settings are restored
    after it."""
    path = EXAMPLES_DIR / script
    for name, value in (("MPLBACKEND", "Agg"), ("GLOCAL_EXAMPLES_OUT", str(tmp_path)),
                        ("GLOCAL_DATA", str(DATA_DIR))):
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", [str(path)])
    with warnings.catch_warnings(), matplotlib.rc_context():
        warnings.simplefilter("ignore")
        runpy.run_path(str(path), run_name="__main__")


def test_every_example_is_listed():
    assert sorted(p.name for p in EXAMPLES_DIR.glob("*.py")) == sorted(EXAMPLES)
    assert sorted(p.name for p in (EXAMPLES_DIR / "tutorials").glob("*.py")) == sorted(TUTORIALS)


@pytest.mark.parametrize("script", sorted(TUTORIALS))
def test_tutorial_runs_its_checks(script, tmp_path, monkeypatch):
    _run_here(f"tutorials/{script}", tmp_path, monkeypatch)
    assert [p.name for p in tmp_path.iterdir()] == [TUTORIALS[script]]


def test_the_optimizers_tutorial_imports_only_what_its_rooms_export():
    """Tutorial 3 builds the Z block from a fitted model's attributes and the names the
    solver's rooms export (their ``__all__``), not from the fit's private data objects."""
    import ast
    import importlib

    tree = ast.parse((EXAMPLES_DIR / "tutorials" / "plot_3_optimizers.py").read_text())
    imported = [(node.module, alias.name) for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module.startswith("glocal")
                for alias in node.names]
    assert ("glocal.solver.correlations", "LabelLaplacians") in imported
    for module, name in imported:
        assert name in importlib.import_module(module).__all__, (module, name)


@pytest.mark.parametrize("script", sorted(EXAMPLES))
def test_example_runs_and_writes_its_figures(script, tmp_path, monkeypatch):
    figures, dataset = EXAMPLES[script]
    if dataset is not None:
        real(dataset)  # skips when the data is absent (fails under CI=true)
    _run_here(script, tmp_path, monkeypatch)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(figures)
    for name in figures:
        assert matplotlib.image.imread(tmp_path / name).shape[0] > 100


def test_without_an_output_folder_figures_go_to_a_temporary_one(tmp_path):
    """Run from a checkout, a script leaves it clean: its figures go to the temporary
    folder's glocal-examples."""
    work, temporary = tmp_path / "checkout", tmp_path / "temporary"
    work.mkdir()
    temporary.mkdir()
    result = subprocess.run(
        [sys.executable, str(EXAMPLES_DIR / "tutorials" / "plot_1_euclidean_blocks.py")],
        cwd=work, env={**os.environ, "MPLBACKEND": "Agg", "TMPDIR": str(temporary),
                       "GLOCAL_EXAMPLES_OUT": ""},
        capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert list(work.iterdir()) == []
    assert [p.name for p in (temporary / "glocal-examples").iterdir()] == [
        TUTORIALS["plot_1_euclidean_blocks.py"]]


@pytest.mark.parametrize("script", ["plot_correlations_image.py", "plot_sensitivity_enron.py"])
@pytest.mark.parametrize("ci, code", [(None, 0), ("true", 1)])
def test_real_data_example_says_what_to_set(script, ci, code, tmp_path):
    result = _run(script, tmp_path, GLOCAL_DATA=str(tmp_path / "none"), CI=ci)
    assert result.returncode == code
    assert "Set GLOCAL_DATA" in result.stderr
    assert list(tmp_path.iterdir()) == []
