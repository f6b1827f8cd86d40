"""`glocal fit` on a directory of .npy chunks, fitted through Dask."""

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from glocal.cli import main
from glocal.persistence import load_model
from test_dask import _problem, require

require("dask.array")
distributed = require("distributed")

pytestmark = [pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
              pytest.mark.filterwarnings("ignore:Port .* is already in use")]

# One group: no k-means (tested in test_dask.py), whose rounds are scheduler round trips.
FIT = ["--paper", "--n-latent", "3", "--n-groups", "1", "--max-iter", "3", "--tol", "1e-2"]


def _chunks(directory, X, Y, rows=70):
    directory.mkdir()
    for i, start in enumerate(range(0, X.shape[0], rows)):
        np.save(directory / f"X_{i:03d}.npy", X[start:start + rows])
        np.save(directory / f"Y_{i:03d}.npy", Y[start:start + rows])
    return directory


def test_fit_a_chunk_directory_on_a_scheduler_then_evaluate_a_file(tmp_path, capsys):
    X, Y, _ = _problem(seed=4, missing=0.8)
    X = np.round(X, 3)  # what an svmlight file of these rows holds exactly
    chunks = _chunks(tmp_path / "parts", X, Y)
    model_file = tmp_path / "m.skops"
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        assert main(["fit", str(chunks), "--model", str(model_file),
                     "--scheduler", cluster.scheduler_address, *FIT]) == 0
    assert "fitting GLOCAL() to 240 rows" in capsys.readouterr().out
    model = load_model(model_file)
    assert isinstance(model.V_, np.ndarray) and model.V_.shape == (3, 240)
    assert model.groups_.shape == (240,) and model.n_features_in_ == X.shape[1]
    history = np.array(model.objective_history_)
    assert np.all(np.diff(history) <= 1e-10 * np.abs(history[1:]))
    # The saved model scores ordinary data files, and knows its training rows.
    test_file = tmp_path / "test.svm"
    dump_svmlight_file(X[:50], np.nan_to_num(Y[:50]).astype(int), str(test_file),
                       multilabel=True)
    assert main(["evaluate", str(model_file), str(test_file)]) == 0
    (warning,) = capsys.readouterr().err.strip().splitlines()
    assert "rows scored are rows the model was fitted on" in warning


@pytest.mark.parametrize("files, message", [
    ({}, "holds X*.npy files and as many"),
    ({"X_0.npy": (5, 3), "X_1.npy": (5, 3), "Y_0.npy": (5, 2)}, "found 2 and 1"),
    ({"X_0.npy": (5, 3), "X_1.npy": (5, 4), "Y_0.npy": (5, 2), "Y_1.npy": (5, 2)},
     "must be 2-D with 3 columns"),
    ({"X_0.npy": (5, 3), "Y_0.npy": (4, 2)}, "has 4 rows, its features 5"),
])
def test_bad_chunk_directories_are_one_line_errors(tmp_path, capsys, files, message):
    directory = tmp_path / "parts"
    directory.mkdir()
    for name, shape in files.items():
        np.save(directory / name, np.zeros(shape))
    assert main(["fit", str(directory), "--model", str(tmp_path / "m.skops")]) == 2
    assert message in capsys.readouterr().err


def test_scheduler_needs_a_chunk_directory(tmp_path, capsys):
    data = tmp_path / "train.svm"
    dump_svmlight_file(np.eye(4), np.eye(4, 2, dtype=int), str(data), multilabel=True)
    assert main(["fit", str(data), "--model", str(tmp_path / "m.skops"),
                 "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "--scheduler applies to a chunk directory" in capsys.readouterr().err
