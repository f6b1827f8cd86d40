"""Model files: skops' format, which runs no code on load, with the glocal version inside."""

import os
import pickle
import zipfile
from pathlib import Path

import joblib
import numpy as np
import pytest
import skops.io as sio
from sklearn.linear_model import LinearRegression
from datafiles import _svmlight
from estimators import capped_fits

import glocal
from glocal import GLOCAL
from glocal.cli import main
from glocal.persistence import load_model, load_model_info, save_model

pytestmark = capped_fits  # the models saved are fitted for a few iterations: files are tested


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


def _contents(path):
    """What a model file holds, as skops stores it: to write edited copies."""
    return {"format": "glocal model", **load_model_info(path), "model": load_model(path)}


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
    assert type(loaded) is GLOCAL
    np.testing.assert_array_equal(loaded.decision_function(X), model.decision_function(X))
    assert load_model_info(tmp_path / "m.skops") == {"glocal_version": glocal.__version__,
                                                      "label_names": ["a", "b", "c"]}
    with pytest.raises(FileExistsError):
        save_model(tmp_path / "m.skops", model)
    with pytest.raises(TypeError, match="LinearRegression"):
        save_model(tmp_path / "other.skops", LinearRegression())


def test_a_model_saved_before_the_package_layout_changed_still_loads():
    """tests/data holds a GLOCAL model saved by glocal 0.1.0 when its solver modules sat
    directly under glocal/, with its scores on the saved rows: the file loads and scores
    the same."""
    data = Path(__file__).resolve().parent / "data"
    saved = np.load(data / "glocal-0.1.0-data.npz")
    loaded = load_model(data / "glocal-0.1.0.skops")
    assert type(loaded) is GLOCAL
    np.testing.assert_array_equal(loaded.decision_function(saved["X"]), saved["scores"])
    assert load_model_info(data / "glocal-0.1.0.skops")["glocal_version"] == "0.1.0"


@pytest.mark.parametrize("how", ["pickle", "joblib"])
def test_a_pickle_is_never_executed(fitted, tmp_path, capsys, how):
    marker, crafted = tmp_path / "ran", tmp_path / "crafted.pkl"
    if how == "pickle":
        crafted.write_bytes(pickle.dumps(_RunsCode(marker)))
    else:
        joblib.dump({"model": _RunsCode(marker)}, crafted)
    _predict_refuses(fitted, crafted, capsys, "pickle", "runs the code it holds")
    assert not marker.exists()
    for load in (load_model, load_model_info):
        with pytest.raises(ValueError, match="pickle"):
            load(crafted)
    assert not marker.exists()


def test_a_function_in_a_skops_file_is_not_loaded(fitted, tmp_path, capsys):
    crafted = tmp_path / "crafted.skops"
    sio.dump({"format": "glocal model", "glocal_version": glocal.__version__,
              "model": os.system}, crafted)
    _predict_refuses(fitted, crafted, capsys, "other types", "system")


@pytest.mark.parametrize("model", ["a string", None, LinearRegression()])
def test_a_model_that_is_not_an_estimator_is_one_line(fitted, tmp_path, capsys, model):
    saved = _contents(fitted / "m.skops")
    saved["model"] = model
    crafted = tmp_path / "edited.skops"
    sio.dump(saved, crafted)
    _predict_refuses(fitted, crafted, capsys, "is not a model saved by glocal",
                     "not a glocal estimator")


def test_edited_label_names_are_one_line(fitted, tmp_path, capsys):
    saved = _contents(fitted / "m.skops")
    saved["label_names"] = ["only one"]
    sio.dump(saved, tmp_path / "edited.skops")
    _predict_refuses(fitted, tmp_path / "edited.skops", capsys, "label names")


def test_another_glocal_version_is_refused_in_one_line(fitted, tmp_path, capsys):
    saved = _contents(fitted / "m.skops")
    saved["glocal_version"] = "0.0.1"
    sio.dump(saved, tmp_path / "old.skops")
    _predict_refuses(fitted, tmp_path / "old.skops", capsys, "saved by glocal 0.0.1",
                     f"this is glocal {glocal.__version__}")
    for load in (load_model, load_model_info):
        with pytest.raises(ValueError, match="saved by glocal 0.0.1"):
            load(tmp_path / "old.skops")
        with pytest.warns(UserWarning, match="saved by glocal 0.0.1") as warned:
            loaded = load(tmp_path / "old.skops", other_version="warn")
        assert warned[0].filename == __file__  # the caller's line, not the library's
    assert loaded["glocal_version"] == "0.0.1"


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


# --- every model kind, checked as data ------------------------------------------------------

def _models():
    """Every kind of model save_model takes, fitted on small data, with the data."""
    import warnings

    from estimators import quick_estimators, quick_search
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler

    from glocal.datasets import make_glocal_data

    data = make_glocal_data(n_samples=60, random_state=0)
    X, Y = data.X, data.Y.astype(float)
    Y[:5, 0] = np.nan
    from glocal.baselines import BR
    from glocal.thresholds import LabelThresholdsCV

    models = {**quick_estimators(), "GLOCALCV": quick_search(),
              "Pipeline": make_pipeline(MaxAbsScaler(), quick_search()),
              "LabelThresholdsCV": LabelThresholdsCV(BR(), cv=2, random_state=0)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for model in models.values():
            model.fit(X, Y)
    return models, X


@pytest.fixture(scope="module")
def models():
    return _models()


@pytest.mark.parametrize("name", ["GLOCAL", "GLObal", "loCAL", "BR", "LEML", "MLLRC", "MLLOC",
                                  "MAXIDE", "MBR", "MMLLOC", "GLOCALCV", "Pipeline",
                                  "LabelThresholdsCV"])
def test_every_model_kind_round_trips(models, tmp_path, name):
    fitted, X = models
    save_model(tmp_path / "m.skops", fitted[name], label_names=[f"l{j}" for j in range(12)])
    loaded = load_model(tmp_path / "m.skops")
    assert type(loaded) is type(fitted[name])
    np.testing.assert_array_equal(loaded.decision_function(X),
                                  fitted[name].decision_function(X))
    np.testing.assert_array_equal(loaded.predict(X), fitted[name].predict(X))


@pytest.mark.parametrize("name", ["GLOCALCV", "Pipeline"])
def test_a_saved_search_gives_the_same_probabilities(models, tmp_path, name):
    fitted, X = models
    save_model(tmp_path / "m.skops", fitted[name])
    P = fitted[name].predict_proba(X)
    assert P.shape == (X.shape[0], 12) and P.min() > 0 and P.max() < 1
    np.testing.assert_array_equal(load_model(tmp_path / "m.skops").predict_proba(X), P)


def test_a_search_without_calibrated_probabilities_still_loads(models, tmp_path):
    """A GLOCALCV saved by a version that did not calibrate probabilities."""
    import copy

    fitted, X = models
    search = copy.deepcopy(fitted["GLOCALCV"])
    del search.calibration_slopes_, search.calibration_intercepts_
    save_model(tmp_path / "m.skops", search)
    loaded = load_model(tmp_path / "m.skops")
    np.testing.assert_array_equal(loaded.predict(X), fitted["GLOCALCV"].predict(X))
    with pytest.raises(AttributeError, match="without calibrated probabilities; fit it again"):
        loaded.predict_proba(X)


@pytest.mark.parametrize("name", ["GLOCALCV", "Pipeline", "MBR"])
def test_a_model_saved_in_python_works_with_every_command(models, tmp_path, capsys, name):
    from sklearn.datasets import dump_svmlight_file

    fitted, X = models
    model = fitted[name]
    labels = [f"label {j}" for j in range(12)]
    save_model(tmp_path / "m.skops", model, label_names=labels)
    Y = (model.decision_function(X) > 0).astype(int)
    dump_svmlight_file(X, Y, str(tmp_path / "d.svm"), multilabel=True)
    assert main(["predict", str(tmp_path / "m.skops"), str(tmp_path / "d.svm"), "--out",
                 str(tmp_path / "s.csv")]) == 0
    assert (tmp_path / "s.csv").read_text().splitlines()[0] == ",".join(labels)
    assert main(["evaluate", str(tmp_path / "m.skops"), str(tmp_path / "d.svm")]) == 0
    assert "Ap" in capsys.readouterr().out
    plotted = main(["plot", "--model", str(tmp_path / "m.skops"), "--out",
                    str(tmp_path / "figures")])
    if name == "MBR":  # no label correlations to draw: said in one line
        assert plotted == 2 and "GLOCAL" in capsys.readouterr().err
    else:
        assert plotted == 0 and (tmp_path / "figures" / "correlations.png").is_file()
    # Without label names too: the labels are numbered.
    save_model(tmp_path / "plain.skops", model)
    assert main(["predict", str(tmp_path / "plain.skops"), str(tmp_path / "d.svm"), "--out",
                 str(tmp_path / "p.csv")]) == 0
    assert (tmp_path / "p.csv").read_text().splitlines()[0] == ",".join(map(str, range(12)))


def _edited(fitted, tmp_path, edit):
    """The model file of glocal fit with ``edit`` applied to its model, written by skops
    directly (as a crafted file would be)."""
    saved = _contents(fitted / "m.skops")
    edit(saved["model"])
    sio.dump(saved, tmp_path / "edited.skops")
    return tmp_path / "edited.skops"


def _set(name, value):
    def edit(model):
        setattr(model, name, value)
    return edit


def _set_entry(name, index, value):
    def edit(model):
        array = getattr(model, name).astype(type(value))
        array[index] = value
        setattr(model, name, array)
    return edit


@pytest.mark.parametrize("edit, fragments", [
    (_set_entry("W_", (0, 0), np.nan), ["W_", "NaN"]),
    (_set_entry("W_", (0, 0), np.inf), ["W_", "infinite"]),
    (_set_entry("W_", (0, 0), 1e308), ["W_", "overflowing"]),
    (_set_entry("W_", (0, 0), 1j), ["W_", "complex"]),
    (_set("W_", np.zeros((3, 2))), ["W_", "n_features_in_"]),
    (_set("intercept_", np.zeros(7)), ["intercept_", "n_labels"]),
    (_set("U_", [[1.0, 0.0]] * 3), ["U_", "list", "not a numpy array"]),
    (_set("decision_function", np.negative), ["decision_function", "shadows"]),
    (_set("predict", np.negative), ["predict", "shadows"]),
    (_set("extra_", 1), ["extra_", "does not have"]),
    (_set("normalize_rows", "yes"), ["normalize_rows", "yes"]),
    (_set("n_latent", -1), ["n_latent"]),
    (_set("normalize_rows_", "yes"), ["normalize_rows_", "True or False"]),
    (lambda model: delattr(model, "W_"), ["not fitted", "W_"]),
])
def test_model_contents_are_checked_as_data(fitted, tmp_path, capsys, edit, fragments):
    path = _edited(fitted, tmp_path, edit)
    with pytest.raises(ValueError) as raised:
        load_model(path)
    assert "\n" not in str(raised.value) and str(path) in str(raised.value)
    _predict_refuses(fitted, path, capsys, "is not a model saved by glocal", *fragments)


def test_a_search_with_a_splitter_object_round_trips(models, tmp_path):
    from sklearn.model_selection import KFold

    from glocal import GLOCALCV

    fitted, X = models
    search = GLOCALCV(GLOCAL(n_latent=2, max_iter=2, init_max_iter=2), {"lam2": [1.0]},
                      cv=KFold(2, shuffle=True, random_state=0)).fit(X, np.eye(len(X), 3))
    save_model(tmp_path / "m.skops", search)
    loaded = load_model(tmp_path / "m.skops")
    assert loaded.cv.n_splits == 2
    np.testing.assert_array_equal(loaded.decision_function(X), search.decision_function(X))


def test_a_function_as_a_parameter_is_refused(models, tmp_path):
    search = models[0]["GLOCALCV"]
    saved = {"format": "glocal model", "glocal_version": glocal.__version__, "model": search}
    search.scoring = np.negative  # a trusted numpy function, callable at fit time
    try:
        sio.dump(saved, tmp_path / "m.skops")
        with pytest.raises(ValueError, match="scoring is a function"):
            load_model(tmp_path / "m.skops")
        with pytest.raises(ValueError, match="scoring is a function"):
            save_model(tmp_path / "other.skops", search)
    finally:
        search.scoring = None


@pytest.mark.parametrize("info, message", [
    ({"f": lambda x: x}, "f is a function"),
    ({"other": GLOCAL()}, "other is a GLOCAL"),
    ({"format": "x"}, "'format' is a name of the file's own"),
    ({"glocal_version": "1"}, "'glocal_version' is a name of the file's own"),
    ({"names": {1: "a"}}, "not a string"),
])
def test_save_model_refuses_info_load_model_would_refuse(models, tmp_path, info, message):
    with pytest.raises(TypeError, match=message):
        save_model(tmp_path / "m.skops", models[0]["BR"], **info)
    assert not (tmp_path / "m.skops").exists()


def test_save_model_refuses_models_load_model_would_refuse(models, tmp_path):
    from glocal.baselines import MAXIDE

    with pytest.raises(ValueError, match="not fitted"):
        save_model(tmp_path / "m.skops", GLOCAL())
    fitted, X = models
    with pytest.raises(ValueError, match="does not score a row"):
        save_model(tmp_path / "m.skops", MAXIDE(side_information=False, max_iter=2).fit(
            X, np.eye(len(X), 3)))
    broken = GLOCAL(n_latent=2, max_iter=1, init_max_iter=1).fit(X, np.eye(len(X), 3))
    broken.U_ = broken.U_ * np.nan
    with pytest.raises(ValueError, match="U_ holds NaN"):
        save_model(tmp_path / "m.skops", broken)
    assert not (tmp_path / "m.skops").exists()


def test_save_model_of_a_dask_fit_is_one_line(tmp_path):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((40, 3)), (rng.random((40, 2)) < 0.5).astype(float)
    Y[0] = 1
    model = GLOCAL(n_latent=1, n_groups=2, max_iter=1, init_max_iter=1, random_state=0).fit(
        da.from_array(X, chunks=20), da.from_array(Y, chunks=20))
    with pytest.raises(ValueError) as raised:
        save_model(tmp_path / "m.skops", model)
    assert "\n" not in str(raised.value) and "compute it first" in str(raised.value)
    model.V_, model.groups_ = model.V_.compute(), model.groups_.compute()
    save_model(tmp_path / "m.skops", model)  # as the message says
    np.testing.assert_allclose(load_model(tmp_path / "m.skops").decision_function(X),
                               model.decision_function(X))


def test_other_version_takes_error_or_warn_only(fitted):
    with pytest.raises(ValueError, match="other_version"):
        load_model(fitted / "m.skops", other_version="ignore")


# --- bombs fail fast, before anything is read -----------------------------------------------

def _rezip(source, path, replace):
    """A copy of the zip ``source`` with members replaced (name -> bytes), deflated."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(
            path, "w", compression=zipfile.ZIP_DEFLATED) as new:
        for member in old.infolist():
            new.writestr(member.filename, replace.get(member.filename,
                                                      old.read(member.filename)))


def _refused_fast(fitted, path, capsys, *fragments):
    import time

    tic = time.perf_counter()
    with pytest.raises(ValueError):
        load_model(path)
    assert time.perf_counter() - tic < 1.0
    _predict_refuses(fitted, path, capsys, *fragments)


def test_a_padded_schema_is_refused_unread(fitted, tmp_path, capsys):
    with zipfile.ZipFile(fitted / "m.skops") as archive:
        schema = archive.read("schema.json")
    padded = schema[:-1] + b" " * (96 * 2**20) + schema[-1:]  # still valid JSON
    _rezip(fitted / "m.skops", tmp_path / "bomb.skops", {"schema.json": padded})
    assert (tmp_path / "bomb.skops").stat().st_size < 2**20
    _refused_fast(fitted, tmp_path / "bomb.skops", capsys, "schema.json", "bomb")


def test_an_npy_member_declaring_more_than_it_holds_is_refused_unread(fitted, tmp_path,
                                                                      capsys):
    import io

    with zipfile.ZipFile(fitted / "m.skops") as archive:
        name = next(n for n in archive.namelist() if n.endswith(".npy"))
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (2**29, 1)})  # 4 GiB
    _rezip(fitted / "m.skops", tmp_path / "bomb.skops", {name: header.getvalue() + b"\0" * 64})
    _refused_fast(fitted, tmp_path / "bomb.skops", capsys, name, "declares an array")


def test_a_model_file_over_the_memory_budget_is_refused_unread(fitted, capsys, monkeypatch):
    monkeypatch.setenv("GLOCAL_MEMORY_BUDGET", "1e-6")  # about a kilobyte
    _refused_fast(fitted, fitted / "m.skops", capsys, "memory budget")


def test_a_search_keeps_its_results_masked_columns_too_and_they_are_checked(models, tmp_path):
    from glocal import GLOCALCV

    _, X = models
    search = GLOCALCV(GLOCAL(n_latent=2, max_iter=2, init_max_iter=2),
                      [{"lam2": [1.0, 2.0]}, {"lam": [0.5]}], cv=2,
                      random_state=0).fit(X, np.eye(len(X), 3))
    save_model(tmp_path / "m.skops", search)
    loaded = load_model(tmp_path / "m.skops")
    assert sorted(loaded.cv_results_) == sorted(search.cv_results_)
    for name in ("param_lam", "param_lam2"):  # settings without the parameter: masked
        column = loaded.cv_results_[name]
        assert isinstance(column, np.ma.MaskedArray)
        np.testing.assert_array_equal(column.mask, search.cv_results_[name].mask)
        assert column.compressed().tolist() == search.cv_results_[name].compressed().tolist()
    assert (loaded.best_params_, loaded.best_index_) == (search.best_params_,
                                                         search.best_index_)
    np.testing.assert_array_equal(loaded.thresholds_, search.thresholds_)
    # A function inside is refused, naming where.
    search.cv_results_["split0_test_score"] = np.array([np.negative], dtype=object)
    with pytest.raises(ValueError, match=r"cv_results_\['split0_test_score'\]\[0\] is a "
                                         "function"):
        save_model(tmp_path / "other.skops", search)
