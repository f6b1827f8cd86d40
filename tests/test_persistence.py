"""Model files: skops' format, which runs no code on load, with the glocal version inside."""

import os
import pickle
import zipfile

import joblib
import numpy as np
import pytest
import skops.io as sio
from sklearn.linear_model import LinearRegression
from test_cli import _svmlight

import glocal
from glocal import GLOCAL
from glocal.cli import main
from glocal.persistence import load_model, save_model


class _RunsCode:
    """A pickle payload: unpickling it creates a file (what an attacker's would do)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A model fitted by `glocal fit`, its training file and a file to score."""
    tmp = tmp_path_factory.mktemp("model")
    _svmlight(tmp / "train.svm", 0, n=40, d=5)
    _svmlight(tmp / "test.svm", 1, n=20, d=5)
    assert main(["fit", str(tmp / "train.svm"), "--model", str(tmp / "m.skops"),
                 "--n-latent", "2", "--max-iter", "3", "--paper"]) == 0
    return tmp


def _predict_refuses(fitted, model_file, capsys, *fragments):
    capsys.readouterr()
    out = fitted / "scores.csv"
    assert main(["predict", str(model_file), str(fitted / "test.svm"), "--out", str(out),
                 "--force"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert str(model_file) in err
    for fragment in fragments:
        assert fragment in err, err
    assert not out.exists()


def test_round_trip_keeps_scores_and_version(tmp_path):
    rng = np.random.default_rng(1)
    X, Y = rng.standard_normal((30, 4)), (rng.random((30, 3)) > 0.5).astype(int)
    model = GLOCAL(n_latent=2, max_iter=3, random_state=0).fit(X, Y)
    save_model(tmp_path / "m.skops", model, label_names=["a", "b", "c"])
    loaded = load_model(tmp_path / "m.skops")
    assert loaded["glocal_version"] == glocal.__version__
    assert loaded["label_names"] == ["a", "b", "c"]
    np.testing.assert_array_equal(loaded["model"].decision_function(X),
                                  model.decision_function(X))
    with pytest.raises(FileExistsError):
        save_model(tmp_path / "m.skops", model)
    with pytest.raises(TypeError, match="LinearRegression"):
        save_model(tmp_path / "other.skops", LinearRegression())


@pytest.mark.parametrize("how", ["pickle", "joblib"])
def test_a_pickle_is_never_executed(fitted, tmp_path, capsys, how):
    marker, crafted = tmp_path / "ran", tmp_path / "crafted.pkl"
    if how == "pickle":
        crafted.write_bytes(pickle.dumps(_RunsCode(marker)))
    else:
        joblib.dump({"model": _RunsCode(marker)}, crafted)
    _predict_refuses(fitted, crafted, capsys, "pickle", "runs the code it holds")
    assert not marker.exists()
    with pytest.raises(ValueError, match="pickle"):
        load_model(crafted)
    assert not marker.exists()


def test_a_function_in_a_skops_file_is_not_loaded(fitted, tmp_path, capsys):
    crafted = tmp_path / "crafted.skops"
    sio.dump({"format": "glocal model", "glocal_version": glocal.__version__,
              "model": os.system}, crafted)
    _predict_refuses(fitted, crafted, capsys, "other types", "system")


@pytest.mark.parametrize("model", ["a string", None, LinearRegression()])
def test_a_model_that_is_not_an_estimator_is_one_line(fitted, tmp_path, capsys, model):
    saved = load_model(fitted / "m.skops")
    saved["model"] = model
    crafted = tmp_path / "edited.skops"
    sio.dump(saved, crafted)
    _predict_refuses(fitted, crafted, capsys, "is not a model saved by glocal",
                     "not a glocal estimator")


def test_edited_label_names_are_one_line(fitted, tmp_path, capsys):
    saved = load_model(fitted / "m.skops")
    saved["label_names"] = ["only one"]
    sio.dump(saved, tmp_path / "edited.skops")
    _predict_refuses(fitted, tmp_path / "edited.skops", capsys, "label names")


def test_another_glocal_version_is_refused_in_one_line(fitted, tmp_path, capsys):
    saved = load_model(fitted / "m.skops")
    saved["glocal_version"] = "0.0.1"
    sio.dump(saved, tmp_path / "old.skops")
    _predict_refuses(fitted, tmp_path / "old.skops", capsys, "saved by glocal 0.0.1",
                     f"this is glocal {glocal.__version__}")
    with pytest.warns(UserWarning, match="saved by glocal 0.0.1"):
        load_model(tmp_path / "old.skops", other_version="warn")


@pytest.mark.parametrize("damage", ["garbage", "empty", "other zip", "cut", "flipped"])
def test_a_damaged_model_file_is_one_line(fitted, tmp_path, capsys, damage):
    sound = (fitted / "m.skops").read_bytes()
    path = tmp_path / "damaged.skops"
    if damage == "other zip":
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("schema.json", "{}")
    else:
        path.write_bytes({"garbage": b"PK\x03\x04 no zip at all", "empty": b"",
                          "cut": sound[:len(sound) // 2],
                          "flipped": sound[:200] + bytes(b ^ 0x55 for b in sound[200:260])
                          + sound[260:]}[damage])
    _predict_refuses(fitted, path, capsys, "is not a model saved by glocal")


def test_predict_help_says_pickles_run_code(capsys):
    with pytest.raises(SystemExit):
        main(["predict", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "skops" in help_text and "loading a pickle runs the code it holds" in help_text


def _returns_soon(function, *args):
    """Whether ``function(*args)`` returns (or raises) within 10 s; a read blocked on a pipe
    without a writer is then released by opening the pipe for writing."""
    import threading

    thread = threading.Thread(target=lambda: _swallow(function, *args), daemon=True)
    thread.start()
    thread.join(10)
    if thread.is_alive():
        os.close(os.open(args[0], os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
        return False
    return True


def _swallow(function, *args):
    try:
        function(*args)
    except Exception:
        pass


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_a_pipe_as_model_file_is_refused_unread(fitted, tmp_path, capsys):
    pipe = tmp_path / "m.skops"
    os.mkfifo(pipe)
    assert _returns_soon(load_model, pipe)
    _predict_refuses(fitted, pipe, capsys, "not a regular file")
