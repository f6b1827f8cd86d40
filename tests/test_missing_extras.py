"""A command whose optional extra is missing says so in one line and exits with 2."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# Run `glocal` with an optional package made unimportable (None in sys.modules is how
# Python marks a module that must not be imported).
RUN_WITHOUT = """
import sys
sys.modules[{module!r}] = None
from glocal.cli import main
sys.exit(main({argv!r}))
"""


def _run_without(module, argv, tmp_path):
    code = RUN_WITHOUT.format(module=module, argv=argv)
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(REPO),
                                                       "PATH": "/usr/bin:/bin"})


@pytest.mark.slow
def test_plot_without_matplotlib_names_the_plot_extra(tmp_path):
    results = REPO / "docs" / "reproduction" / "results.csv"
    result = _run_without("matplotlib", ["plot", "--results", str(results), "--out",
                                         str(tmp_path / "figures")], tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        'glocal plot: error: matplotlib is not installed; pip install "glocal[plot]"']
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "figures" / "measure_vs_rho.png").exists()


@pytest.mark.slow
def test_chunk_fit_without_dask_names_the_dask_extra(tmp_path):
    import numpy as np

    parts = tmp_path / "parts"
    parts.mkdir()
    rng = np.random.default_rng(0)
    np.save(parts / "X_000.npy", rng.normal(size=(20, 3)))
    np.save(parts / "Y_000.npy", (rng.random((20, 2)) < 0.5).astype(float))
    result = _run_without("dask", ["fit", str(parts), "--model",
                                   str(tmp_path / "model.joblib")], tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        'glocal fit: error: dask is not installed; pip install "glocal[dask]"']


@pytest.mark.slow
def test_figures_without_matplotlib_say_how_to_install_it(tmp_path):
    code = """
import sys
sys.modules["matplotlib"] = None
from glocal.plotting import plot_convergence
try:
    plot_convergence({"objective": [3.0, 2.0, 1.0]})
except ModuleNotFoundError as exc:
    print(exc.name, exc)
"""
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env={"PYTHONPATH": str(REPO),
                                                         "PATH": "/usr/bin:/bin"})
    assert result.stdout.strip() == (
        'matplotlib.figure figures need matplotlib: pip install "glocal[plot]"'), result.stderr
