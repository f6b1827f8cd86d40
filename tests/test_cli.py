"""The `glocal` command: demo, reproduce, fit, predict and evaluate."""

import csv

import numpy as np
import pytest
from sklearn.datasets import dump_svmlight_file

from glocal.cli import main


def test_demo_runs(capsys):
    assert main(["demo"]) == 0
    assert "Ap" in capsys.readouterr().out


def test_reproduce_quick_on_synthetic_data(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["reproduce", "--quick", "--datasets", "synthetic", "--out", str(out)]) == 0
    assert (out / "results.csv").is_file() and (out / "report.md").is_file()
    assert "[3/3]" in capsys.readouterr().out


@pytest.mark.parametrize("args, message", [
    (["--datasets", "nosuch"], "No dataset named 'nosuch'"),
    (["--datasets", "synthetic", "--methods", "GLOCAL,NOPE"], "unknown method 'NOPE'"),
    (["--datasets", "synthetic", "--rho", "1,x"], "--rho takes comma-separated numbers"),
])
def test_reproduce_bad_input_is_a_one_line_error(tmp_path, capsys, args, message):
    code = main(["reproduce", "--quick", "--data-dir", str(tmp_path), "--out",
                 str(tmp_path / "out"), *args])
    assert code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err
    assert err.startswith("glocal reproduce: error:")


def test_reproduce_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", "--help"])
    assert exit_info.value.code == 0
    assert "--paper-tables" in capsys.readouterr().out


# --- fit, predict, evaluate on small files ---------------------------------------------------

def _svmlight(path, seed, n=80, d=6, l=3):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 1.0
    Y = (X @ rng.standard_normal((d, l)) > 0).astype(int)
    dump_svmlight_file(X, Y, str(path), multilabel=True)
    return X, Y


@pytest.fixture
def files(tmp_path):
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    _svmlight(train, 0)
    _svmlight(test, 1)
    return tmp_path, train, test


def test_fit_predict_evaluate(files, capsys):
    tmp, train, test = files
    model, scores, labels = tmp / "m.joblib", tmp / "s.csv", tmp / "l.csv"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2"]) == 0
    assert main(["predict", str(model), str(test), "--out", str(scores)]) == 0
    assert main(["predict", str(model), str(test), "--out", str(labels), "--labels"]) == 0
    with open(scores) as file:
        rows = list(csv.reader(file))
    assert rows[0] == ["0", "1", "2"] and len(rows) == 81
    values = np.array(rows[1:], dtype=float)
    with open(labels) as file:
        predicted = np.array(list(csv.reader(file))[1:], dtype=int)
    np.testing.assert_array_equal(predicted, (values > 0).astype(int))
    assert main(["evaluate", str(model), str(test)]) == 0
    out = capsys.readouterr().out
    for name in ("Rkl", "Auc", "Cvg", "Ap", "label_auc"):
        assert name in out
    assert not list(tmp.glob("*.tmp")) and not list(tmp.glob(".*.tmp"))


def test_outputs_are_never_overwritten_without_force(files, capsys):
    tmp, train, test = files
    model, scores = tmp / "m.joblib", tmp / "s.csv"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2"]) == 0
    scores.write_text("mine")
    assert main(["predict", str(model), str(test), "--out", str(scores)]) == 2
    assert scores.read_text() == "mine"
    before = model.read_bytes()
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "3"]) == 2
    assert model.read_bytes() == before
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("exists" in line and "--force" in line for line in err)
    assert main(["predict", str(model), str(test), "--out", str(scores), "--force"]) == 0
    assert scores.read_text().startswith("0,1,2")


@pytest.mark.parametrize("case, message", [
    ("missing data", "No such dataset file"),
    ("unknown format", "unknown extension"),
    ("not a model", "is not a model saved by 'glocal fit'"),
    ("other features", "the model has 6 features but the data has 4"),
])
def test_errors_are_one_line(files, capsys, case, message):
    tmp, train, test = files
    model = tmp / "m.joblib"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2"]) == 0
    capsys.readouterr()
    if case == "missing data":
        args = ["evaluate", str(model), str(tmp / "nope.svm")]
    elif case == "unknown format":
        (tmp / "data.xyz").write_text("1 2 3")
        args = ["evaluate", str(model), str(tmp / "data.xyz")]
    elif case == "not a model":
        (tmp / "junk.joblib").write_text("not a pickle")
        args = ["evaluate", str(tmp / "junk.joblib"), str(test)]
    else:
        _svmlight(tmp / "narrow.svm", 2, d=4)
        args = ["evaluate", str(model), str(tmp / "narrow.svm")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_plot_writes_png_figures_and_keeps_existing_ones(files, capsys):
    from matplotlib.image import imread

    tmp, train, test = files
    model, out = tmp / "m.joblib", tmp / "figures"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2"]) == 0
    assert main(["plot", "--model", str(model), "--out", str(out)]) == 0
    for name in ("correlations.png", "convergence.png"):
        image = imread(out / name)
        assert image.shape[0] > 100 and image.shape[1] > 100 and image.std() > 0
    before = (out / "convergence.png").read_bytes()
    capsys.readouterr()
    assert main(["plot", "--model", str(model), "--out", str(out)]) == 2
    assert (out / "convergence.png").read_bytes() == before
    assert "exists" in capsys.readouterr().err
    assert main(["plot", "--model", str(model), "--out", str(out), "--force"]) == 0
    assert main(["plot", "--out", str(out)]) == 2


@pytest.mark.parametrize("command", ["demo", "reproduce", "fit", "predict", "evaluate", "plot"])
def test_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: glocal " + command in capsys.readouterr().out
