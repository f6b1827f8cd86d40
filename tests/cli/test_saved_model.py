"""One model, one behaviour: what `glocal fit` saves, `load_model` returns, and the commands
and Python give the same outputs from it; files of earlier versions still load."""

import csv
import warnings

import numpy as np
import pytest
import skops.io as sio
from datafiles import _arff, thresholded_rows

from glocal import GLOCAL, GLOCALCV
from glocal.cli import main
from glocal.metrics import micro_f1
from glocal.persistence import load_model, load_model_info
from glocal.thresholds import LabelThresholdsCV


def _as_written(X):
    """The values of X as `_arff` writes them (4 decimals), as the commands read them."""
    return np.vectorize(lambda value: float(f"{value:.4f}"))(X)


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """`glocal fit` (the recommended model) on an ARFF file with missing labels, and a
    labelled file to score."""
    tmp = tmp_path_factory.mktemp("saved")
    X, Y = thresholded_rows(90, seed=0)
    Y = Y.astype(float)
    Y[::7, 1] = np.nan
    _arff(tmp / "train.arff", X, Y)
    X_new, Y_new = thresholded_rows(40, seed=1)
    _arff(tmp / "new.arff", X_new, Y_new)
    assert main(["fit", str(tmp / "train.arff"), "--model", str(tmp / "m.skops"),
                 "--cv-folds", "2"]) == 0
    return tmp, _as_written(X_new), Y_new


def _written(tmp, model, *options):
    out = tmp / "out.csv"
    assert main(["predict", str(model), str(tmp / "new.arff"), "--out", str(out), "--force",
                 *options]) == 0
    with open(out) as file:
        return np.array(list(csv.reader(file))[1:], dtype=float)


def test_load_model_gives_exactly_what_glocal_predict_writes(fitted):
    tmp, X, _ = fitted
    model = load_model(tmp / "m.skops")
    assert isinstance(model, GLOCALCV)
    assert model.best_params_ == model.cv_results_["params"][model.best_index_]
    assert model.cv_results_["mean_test_score"].shape == (8,)
    assert (model.thresholds_ != 0).any()  # so that --labels differs from the sign
    assert "thresholds" not in load_model_info(tmp / "m.skops")
    np.testing.assert_array_equal(_written(tmp, tmp / "m.skops"), model.decision_function(X))
    np.testing.assert_array_equal(_written(tmp, tmp / "m.skops", "--labels"),
                                  model.predict(X))
    np.testing.assert_array_equal(_written(tmp, tmp / "m.skops", "--top-k", "2"),
                                  model.predict_top_k(X, 2))
    np.testing.assert_array_equal(_written(tmp, tmp / "m.skops", "--proba"),
                                  model.predict_proba(X))
    assert not np.array_equal(model.predict(X), model.best_estimator_.predict(X))


def test_evaluate_scores_the_label_sets_of_load_model(fitted, capsys):
    tmp, X, Y = fitted
    model = load_model(tmp / "m.skops")
    capsys.readouterr()
    assert main(["evaluate", str(tmp / "m.skops"), str(tmp / "new.arff"),
                 "--keep-unlabeled"]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines()
                if line.split()[0] == "micro_f1")
    assert line.split()[-1] == f"{micro_f1(Y, model.predict(X)):.4f}"


def _earlier_file(tmp, search, path):
    """A file as `glocal fit` wrote it before it saved the search: the refitted GLOCAL,
    with the thresholds beside it."""
    contents = {"format": "glocal model", **load_model_info(tmp / "m.skops"),
                "thresholds": search.thresholds_, "model": search.best_estimator_}
    sio.dump(contents, path)
    return path


def test_a_file_with_the_thresholds_beside_the_model_predicts_with_them(fitted, capsys):
    tmp, X, _ = fitted
    search = load_model(tmp / "m.skops")
    earlier = _earlier_file(tmp, search, tmp / "earlier.skops")
    with pytest.warns(UserWarning, match="without its tuned thresholds") as warned:
        model = load_model(earlier)
    assert len(warned) == 1 and "\n" not in str(warned[0].message)
    assert warned[0].filename == __file__  # the caller's line
    assert isinstance(model, LabelThresholdsCV) and isinstance(model.estimator_, GLOCAL)
    np.testing.assert_array_equal(model.thresholds_, search.thresholds_)
    for method in ("decision_function", "predict"):
        np.testing.assert_array_equal(getattr(model, method)(X), getattr(search, method)(X))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # what was kept beside it is read without a word
        assert "thresholds" in load_model_info(earlier)
    capsys.readouterr()
    np.testing.assert_array_equal(_written(tmp, earlier, "--labels"), search.predict(X))
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "without its tuned thresholds" in err[0], err


def test_thresholds_beside_the_model_are_checked(fitted, capsys):
    tmp, _, _ = fitted
    search = load_model(tmp / "m.skops")
    search.thresholds_ = np.array([0.0, np.nan, 1.0])
    earlier = _earlier_file(tmp, search, tmp / "bad.skops")
    with pytest.raises(ValueError, match="its thresholds holds NaN"):
        load_model(earlier)
    assert main(["predict", str(earlier), str(tmp / "new.arff"), "--out",
                 str(tmp / "x.csv")]) == 2
    assert "is not a model saved by glocal" in capsys.readouterr().err


def test_plot_draws_the_refitted_model_of_the_search_and_of_an_earlier_file(fitted, capsys):
    pytest.importorskip("matplotlib")
    tmp, _, _ = fitted
    earlier = _earlier_file(tmp, load_model(tmp / "m.skops"), tmp / "earlier-plot.skops")
    for model in (tmp / "m.skops", earlier):
        out = tmp / f"figures-{model.stem}"
        assert main(["plot", "--model", str(model), "--data", str(tmp / "train.arff"),
                     "--out", str(out)]) == 0, capsys.readouterr().err
        assert (out / "correlations.png").is_file() and (out / "convergence.png").is_file()
