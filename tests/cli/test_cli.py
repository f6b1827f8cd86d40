"""The `glocal` command: demo, reproduce, fit, predict and evaluate."""

import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from datafiles import ARFF, _arff, _svmlight, thresholded_rows
from sklearn.datasets import dump_svmlight_file

from glocal.cli import main


@pytest.mark.slow  # the demo at three fractions: nine fits, three of them searches
def test_demo_compares_br_glocal_and_glocalcv_at_two_fractions(capsys):
    tic = time.perf_counter()
    assert main(["demo"]) == 0
    assert time.perf_counter() - tic < 60
    out = capsys.readouterr().out
    assert "30% of training labels observed" in out and "100% of training" in out
    rows = [line.split() for line in out.splitlines() if line.split()[:1] in
            (["BR"], ["GLOCAL()"], ["GLOCALCV()"])]
    assert [row[0] for row in rows] == ["BR", "GLOCAL()", "GLOCALCV()"] * 2
    assert all(len(row) == 6 for row in rows)  # four measures and the fit time
    assert main(["demo", "--observed", "0.5"]) == 0
    assert "50% of training labels observed" in capsys.readouterr().out


def test_reproduce_quick_on_synthetic_data(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["reproduce", "--quick", "--datasets", "synthetic", "--out", str(out)]) == 0
    assert (out / "results.csv").is_file() and (out / "report.md").is_file()
    assert "[4/4]" in capsys.readouterr().out


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


def test_reproduce_names_labels_in_warnings(tmp_path, capsys):
    """Two datasets whose third label is never positive: each warning names its label (the
    same index 2 in both), once; the cross-validation folds add no warning by index."""
    rng = np.random.default_rng(0)
    for name, labels in (("one", "abc"), ("two", "pqr")):
        X = rng.standard_normal((40, 4)) + 1
        Y = (X[:, :3] > 1).astype(int)
        Y[:, 2] = 0
        attributes = "".join(f"@attribute {label} {{0,1}}\n" for label in labels)
        rows = "\n".join(",".join([*map(str, Y[i]), *(f"{v:.4f}" for v in X[i])])
                         for i in range(40))
        (tmp_path / f"{name}.arff").write_text(
            ARFF.format(relation=f"{name}: -C 3", labels=attributes, rows=rows))
    assert main(["reproduce", "--data-dir", str(tmp_path), "--datasets", "one,two",
                 "--methods", "GLOCAL,BR", "--rho", "1", "--repeats", "1",
                 "--out", str(tmp_path / "out")]) == 0
    labels = [line for line in capsys.readouterr().err.splitlines() if "labels" in line]
    assert sorted(labels) == [
        "glocal reproduce: warning: BR: labels 'c' have one class only among their "
        "observed entries; they get a constant score",
        "glocal reproduce: warning: BR: labels 'r' have one class only among their "
        "observed entries; they get a constant score",
        "glocal reproduce: warning: labels 'c' are never positive among their observed "
        "entries: they will be ranked low",
        "glocal reproduce: warning: labels 'r' are never positive among their observed "
        "entries: they will be ranked low"], labels


def test_reproduce_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", "--help"])
    assert exit_info.value.code == 0
    assert "--paper-tables" in capsys.readouterr().out


# --- fit, predict, evaluate on small files ---------------------------------------------------


@pytest.fixture
def files(tmp_path):
    train, test = tmp_path / "train.svm", tmp_path / "test.svm"
    _svmlight(train, 0)
    _svmlight(test, 1)
    return tmp_path, train, test


def test_fit_predict_evaluate(files, capsys):
    tmp, train, test = files
    model, scores, labels = tmp / "m.skops", tmp / "s.csv", tmp / "l.csv"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2", "--paper"]) == 0
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


def test_fit_cv_fits_the_recommended_model(files, capsys):
    from glocal.persistence import load_model

    tmp, train, test = files
    model = tmp / "m.skops"
    assert main(["fit", str(train), "--model", str(model), "--cv-folds", "2"]) == 0
    out = capsys.readouterr().out
    assert "fitting GLOCALCV() to 80 rows x 6 features, 3 labels of " in out
    assert "cross-validating 8 settings" in out and "on 2 folds" in out
    assert re.search(r"\[GLOCALCV\] scored 8 settings on 2 folds \((1[0-6]|[2-9]) fits\) in ",
                     out)
    assert "[GLOCALCV] refitted lam2=" in out and "on all 80 rows in " in out
    assert "fitted GLOCALCV() in " in out and "saved it to" in out
    search = load_model(model)  # the fitted GLOCALCV, with its refitted best setting
    assert search.n_splits_ == 2 and len(search.cv_results_["params"]) == 8
    saved = search.best_estimator_
    assert (saved.loss, saved.fit_intercept, saved.lam_v, saved.n_latent) == (
        "squared_hinge", True, 0.0, 3)
    assert main(["predict", str(model), str(test), "--out", str(tmp / "s.csv")]) == 0
    # An explicit option is fixed and leaves the grid.
    assert main(["fit", str(train), "--model", str(model), "--force", "--lam2", "1",
                 "--cv-folds", "2", "--n-latent", "2", "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "cross-validating 2 settings (normalize_rows=[False, True])" in out
    saved = load_model(model).best_estimator_
    assert (saved.lam2, saved.n_latent) == (1.0, 2)


def test_fit_model_options(files):
    from glocal.persistence import load_model

    tmp, train, _ = files
    model = tmp / "m.skops"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2", "--loss",
                 "squared_hinge", "--fit-intercept", "--normalize-rows"]) == 0
    saved = load_model(model).best_estimator_
    assert (saved.loss, saved.fit_intercept, saved.normalize_rows, saved.n_latent) == (
        "squared_hinge", True, True, 2)
    assert main(["fit", str(train), "--model", str(model), "--force", "--paper"]) == 0
    saved = load_model(model)  # the paper's model
    assert (saved.loss, saved.fit_intercept, saved.normalize_rows, saved.n_latent) == (
        "squared", False, False, 20)


@pytest.mark.parametrize("args, message", [
    (["--paper", "--jobs", "2"], "--jobs applies to the recommended model's"),
    (["--paper", "--cv-folds", "5"], "--cv-folds applies to the recommended model's"),
    (["--cv-folds", "1"], "--cv-folds must be at least 2"),
    (["--n-latent", "4"], "--n-latent 4 is more than the 3 labels of"),
])
def test_cv_options_errors_are_one_line(files, capsys, args, message):
    tmp, train, _ = files
    assert main(["fit", str(train), "--model", str(tmp / "m.skops"), *args]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err, err


@pytest.mark.parametrize("command", ["fit", "reproduce"])
@pytest.mark.parametrize("jobs, message", [("0", "must not be 0"),
                                           ("two", "not a whole number")])
def test_jobs_must_be_a_nonzero_whole_number(files, capsys, command, jobs, message):
    tmp, train, _ = files
    args = (["fit", str(train), "--model", str(tmp / "m.skops")]
            if command == "fit" else ["reproduce", "--quick", "--out", str(tmp / "out")])
    with pytest.raises(SystemExit) as stop:
        main([*args, "--jobs", jobs])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and "--jobs" in err[-1], err
    assert not (tmp / "m.skops").exists() and not (tmp / "out").exists()


def test_outputs_are_never_overwritten_without_force(files, capsys):
    tmp, train, test = files
    model, scores = tmp / "m.skops", tmp / "s.csv"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2", "--paper"]) == 0
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
    ("not a model", "is not a model saved by glocal"),
    ("other features", "8 features, more than the 6 expected"),
])
def test_errors_are_one_line(files, capsys, case, message):
    tmp, train, test = files
    model = tmp / "m.skops"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2", "--paper"]) == 0
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
        _svmlight(tmp / "wide.svm", 2, d=8)
        args = ["evaluate", str(model), str(tmp / "wide.svm")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_plot_writes_png_figures_and_keeps_existing_ones(files, capsys):
    from matplotlib.image import imread

    tmp, train, test = files
    model, out = tmp / "m.skops", tmp / "figures"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2", "--paper"]) == 0
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
    assert "--data with its training data draws the labels' own" in capsys.readouterr().out
    assert main(["plot", "--out", str(out)]) == 2


def test_plot_draws_the_training_labels_beside_the_model(files, capsys):
    from matplotlib.image import imread

    tmp, train, test = files
    model, out = tmp / "m.skops", tmp / "figures"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2", "--paper"]) == 0
    assert main(["plot", "--model", str(model), "--out", str(tmp / "alone")]) == 0
    capsys.readouterr()
    assert main(["plot", "--model", str(model), "--data", str(train), "--out", str(out)]) == 0
    assert "draws the labels' own" not in capsys.readouterr().out
    # The labels' panels and their agreement make the figure taller than the model's alone.
    assert imread(out / "correlations.png").shape[0] > imread(
        tmp / "alone" / "correlations.png").shape[0] * 1.5
    for argv, message in [
            (["--model", str(model), "--data", str(test)], "--data: the rows of "),
            (["--data", str(train)], "--data gives the training labels of a model"),
    ]:
        assert main(["plot", *argv, "--out", str(tmp / "refused")]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and message in err, err
        assert not (tmp / "refused").exists()


@pytest.mark.parametrize("command", ["demo", "reproduce", "fit", "predict", "evaluate", "plot",
                                     "inspect"])
def test_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "usage: glocal " + command in capsys.readouterr().out


# --- as a user runs it: a separate process, one line on stderr, exit code 2 ------------------

REPO = Path(__file__).resolve().parents[2]


def _glocal(*args, **kwargs):
    """Run `python -m glocal ARGS` in a new process (this checkout's package)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "glocal", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=300, check=False, **kwargs)


def _main(capsys, *args):
    """`main(ARGS)` in this process, its outcome as `_glocal` gives it (for the errors whose
    wording, not the process around them, is under test)."""
    capsys.readouterr()
    code = main(list(map(str, args)))
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out, err)


def _one_line_error(result, *fragments):
    err = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(err) == 1 and "Traceback" not in result.stderr, result.stderr
    assert err[0].startswith("glocal ") and ": error: " in err[0]
    for fragment in fragments:
        assert fragment in err[0], err[0]
    return err[0]


@pytest.fixture(scope="module")
def arff_model(tmp_path_factory):
    """A model fitted on a MEKA ARFF file with labels a, b, c, and new data without them."""
    tmp = tmp_path_factory.mktemp("arff")
    X, Y = thresholded_rows(60)
    _arff(tmp / "train.arff", X, Y)
    assert main(["fit", str(tmp / "train.arff"), "--model", str(tmp / "m.skops"),
                 "--n-latent", "2", "--paper"]) == 0
    return tmp


def test_predict_on_arff_without_labels(arff_model, capsys):
    tmp = arff_model
    X = np.random.default_rng(1).standard_normal((7, 4))
    _arff(tmp / "new.arff", X, relation="new: -C 0")
    result = _glocal("predict", tmp / "m.skops", tmp / "new.arff", "--out", tmp / "new.csv")
    assert result.returncode == 0 and not result.stderr, result.stderr
    rows = list(csv.reader((tmp / "new.csv").open()))
    assert rows[0] == ["a", "b", "c"] and len(rows) == 8
    # Without -C and without an XML file, every attribute is a feature: the same scores.
    _arff(tmp / "plain.arff", X, relation="new")
    assert main(["predict", str(tmp / "m.skops"), str(tmp / "plain.arff"), "--out",
                 str(tmp / "plain.csv")]) == 0
    assert (tmp / "plain.csv").read_text() == (tmp / "new.csv").read_text()
    # Scoring needs labels: a one-line error, not a crash.
    capsys.readouterr()
    assert main(["evaluate", str(tmp / "m.skops"), str(tmp / "new.arff")]) == 2
    assert capsys.readouterr().err.strip().endswith("has no labels to evaluate against; "
                                                    "'glocal predict' scores it")


def test_predict_on_svmlight_without_labels(files):
    tmp, train, test = files
    assert main(["fit", str(train), "--model", str(tmp / "m.skops"), "--n-latent", "2", "--paper"]) == 0
    X = np.random.default_rng(3).standard_normal((5, 6))
    X[:, 5] = 0  # the highest feature absent: the file alone does not tell there are 6
    (tmp / "new.svm").write_text("".join(
        " " + " ".join(f"{j}:{v:.3f}" for j, v in enumerate(row) if v) + "\n" for row in X))
    assert main(["predict", str(tmp / "m.skops"), str(tmp / "new.svm"), "--out",
                 str(tmp / "s.csv")]) == 0
    rows = list(csv.reader((tmp / "s.csv").open()))
    assert rows[0] == ["0", "1", "2"] and len(rows) == 6


@contextmanager
def _unwritable(folder):
    """A folder nobody can create files in, root included (root ignores permission bits)."""
    folder.mkdir(exist_ok=True)
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(
                ["chattr", "+i", str(folder)], capture_output=True).returncode:
            pytest.skip("cannot make a folder unwritable for root here")
        try:
            yield folder
        finally:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
    else:
        folder.chmod(0o555)
        try:
            yield folder
        finally:
            folder.chmod(0o755)


def test_unwritable_outputs_are_one_line_errors(files, capsys):
    tmp, train, test = files
    model = tmp / "m.skops"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2", "--paper"]) == 0
    with _unwritable(tmp / "locked") as locked:
        for args in (["fit", train, "--model", locked / "m.skops"],
                     ["predict", model, test, "--out", locked / "s.csv"],
                     ["plot", "--model", model, "--out", locked],
                     ["reproduce", "--quick", "--datasets", "synthetic", "--out", locked]):
            line = _one_line_error(_main(capsys, *args), "cannot write", str(locked))
            assert ".tmp" not in line
        assert not list(locked.iterdir())


def test_outputs_that_are_directories_or_below_files(files, capsys):
    tmp, train, test = files
    model = tmp / "m.skops"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2", "--paper"]) == 0
    (tmp / "folder").mkdir()
    (tmp / "afile").write_text("")
    _one_line_error(_main(capsys, "predict", model, test, "--out", tmp / "folder", "--force"),
                    "is a directory")
    _one_line_error(_main(capsys, "fit", train, "--model", tmp / "folder", "--force"),
                    "is a directory")
    for args in (["fit", train, "--model", tmp / "afile" / "sub" / "m.skops"],
                 ["predict", model, test, "--out", tmp / "afile" / "s.csv"]):
        _one_line_error(_main(capsys, *args), "is a file, not a directory")
    # The plot command as a user runs it: a separate process.
    _one_line_error(_glocal("plot", "--model", model, "--out", tmp / "afile"),
                    "is a file, not a directory")
    _one_line_error(_main(capsys, "evaluate", tmp / "folder", test), "is a directory")


def test_missing_output_folders_are_created_by_every_command(files):
    tmp, train, test = files
    model = tmp / "new" / "models" / "m.skops"
    assert main(["fit", str(train), "--model", str(model), "--n-latent", "2", "--paper"]) == 0
    assert main(["predict", str(model), str(test), "--out",
                 str(tmp / "new" / "scores" / "s.csv")]) == 0
    assert main(["plot", "--model", str(model), "--out", str(tmp / "new" / "figures")]) == 0
    assert (tmp / "new" / "scores" / "s.csv").is_file()
    assert (tmp / "new" / "figures" / "convergence.png").is_file()


def test_existing_output_is_refused_before_any_work(files, capsys):
    tmp, train, test = files
    (tmp / "m.skops").write_text("mine")
    # The data file does not exist: the refusal comes first, so nothing was loaded or fitted.
    _one_line_error(_main(capsys, "fit", tmp / "nope.svm", "--model", tmp / "m.skops"),
                    "exists", "use --force")
    assert (tmp / "m.skops").read_text() == "mine"


def test_not_a_model_and_missing_xml_speak_command_line(files, capsys):
    tmp, train, test = files
    (tmp / "junk.joblib").write_bytes(b"\x80\x04\x95 not really a pickle")
    line = _one_line_error(_glocal("evaluate", tmp / "junk.joblib", test),
                           "is not a model saved by glocal")
    assert "Memo" not in line
    _arff(tmp / "plain.arff", np.ones((3, 4)), relation="plain")
    _one_line_error(_main(capsys, "fit", tmp / "plain.arff", "--model", tmp / "x.skops"),
                    "--xml")


def test_ctrl_c_during_fit_is_one_line(tmp_path):
    rng = np.random.default_rng(0)
    # About 5 s of fitting (the fit ends by itself once the objective stops falling, even
    # at tol 0), so the signal arrives during it on a loaded machine too.
    X = rng.standard_normal((10000, 100))
    Y = (X @ rng.standard_normal((100, 30)) > 1).astype(int)
    dump_svmlight_file(X, Y, str(tmp_path / "big.svm"), multilabel=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    # Started as a shell starts a command in the foreground, Ctrl-C at its default action
    # (a test run started in the background ignores SIGINT, and so would its children).
    process = subprocess.Popen(
        [sys.executable, "-m", "glocal", "fit", str(tmp_path / "big.svm"), "--model",
         str(tmp_path / "m.skops"), "--paper", "--verbose", "--tol", "0", "--max-iter",
         "100000"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        for line in process.stdout:  # wait until the fit is under way
            if "initialisation round 1:" in line:
                break
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert err.strip().splitlines() == ["glocal fit: interrupted"]
    assert list(tmp_path.iterdir()) == [tmp_path / "big.svm"]


def test_a_closed_pipe_ends_quietly(files):
    tmp, train, test = files
    assert main(["fit", str(train), "--model", str(tmp / "m.skops"), "--n-latent", "2", "--paper"]) == 0
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # `glocal evaluate ... | true`: the reader is gone before anything is written.
    process = subprocess.Popen([sys.executable, "-m", "glocal", "evaluate",
                                str(tmp / "m.skops"), str(test)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.close()
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141
    assert err == ""


def test_evaluate_says_what_it_scored(files, capsys):
    from glocal.datasets import load

    tmp, train, test = files
    assert main(["fit", str(train), "--model", str(tmp / "m.skops"), "--n-latent", "2", "--paper"]) == 0
    n_unlabeled = int((load(test).Y.sum(axis=1) == 0).sum())
    assert n_unlabeled > 0
    capsys.readouterr()
    assert main(["evaluate", str(tmp / "m.skops"), str(test)]) == 0
    out, err = capsys.readouterr()
    assert err == "" and f"dropped {n_unlabeled} rows" in out.splitlines()[0]
    # On the training file: the scores are said to be training scores.
    assert main(["evaluate", str(tmp / "m.skops"), str(train)]) == 0
    (warning,) = capsys.readouterr().err.strip().splitlines()
    assert warning.startswith("glocal evaluate: warning: ") and "fitted on" in warning


def test_fit_progress_grammar_and_label_warnings(tmp_path, capsys):
    X, Y = thresholded_rows(40)
    Y[:, 2] = 0  # label c is never positive
    _arff(tmp_path / "train.arff", X, Y)
    assert main(["fit", str(tmp_path / "train.arff"), "--model", str(tmp_path / "m.skops"),
                 "--n-latent", "2", "--max-iter", "1", "--verbose", "--paper"]) == 0
    out, err = capsys.readouterr()
    assert "fitting GLOCAL() to 40 rows x 4 features, 3 labels" in out
    assert "[GLOCAL] main iteration 1:" in out and "after 1 outer iteration)" in out
    # Each warning once, on one line, without its source line: the label one names the label
    # (one outer iteration also leaves the main loop short of tol: a ConvergenceWarning).
    warnings = err.strip().splitlines()
    assert all(line.startswith("glocal fit: warning: ") for line in warnings)
    labels = [line for line in warnings if "never positive" in line]
    assert len(labels) == 1
    assert labels[0].startswith("glocal fit: warning: labels 'c' are never positive")


def test_version_and_help_without_scikit_learn():
    result = _glocal("--version")
    assert result.returncode == 0 and result.stdout.startswith("glocal ")
    probe = ("import sys\nfrom glocal.cli import main\n"
             "for command in (['--help'], ['fit', '--help'], ['reproduce', '--help']):\n"
             "    try:\n        main(command)\n    except SystemExit:\n        pass\n"
             "print('sklearn' in sys.modules, 'numpy' in sys.modules, file=sys.stderr)")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, check=True)
    assert result.stderr.split() == ["False", "False"]
    assert "default 1" in result.stdout and "number of latent labels" in result.stdout


def test_worker_processes_print_warnings_on_one_line():
    """``reproduce --jobs N`` cross-validates in joblib's worker processes: their warnings
    print as the main process's do, one line each, without Python's source line."""
    code = """if True:
        import warnings
        from sklearn.utils.parallel import Parallel, delayed
        from glocal.cli._common import _one_line_warnings, _worker_warnings
        with _one_line_warnings("reproduce"), _worker_warnings("reproduce"):
            Parallel(n_jobs=2)(delayed(warnings.warn)(f"fold {i % 2} warns") for i in range(6))
    """
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, check=True)
    lines = result.stderr.strip().splitlines()
    assert 2 <= len(lines) <= 4, lines  # each text once per worker process
    assert all(line in ("glocal reproduce: warning: fold 0 warns",
                        "glocal reproduce: warning: fold 1 warns") for line in lines), lines


def _damaged_files(tmp):
    """Damaged data files of each format, with what the error must say."""
    from scipy.io import savemat

    X = np.random.default_rng(0).random((20, 5))
    savemat(tmp / "sound.mat", {"data": X, "target": np.eye(20, 3)}, do_compression=True)
    sound = (tmp / "sound.mat").read_bytes()
    files = {
        "corrupt.mat": (sound[:300] + bytes(b ^ 0xFF for b in sound[300:340]) + sound[340:],
                        "damaged"),
        "header.mat": (sound[:100], "damaged"),
        "cut.mat": (sound[:len(sound) // 2], "damaged"),
        "overflow.svm": (b"0 3000000000:0.5\n", "malformed svmlight file"),
        "huge.svm": (b"2000000000 1:0.5\n" * 8, "label matrix"),
        "cut.svm": (b"0 1:0.5\n1 2:", "cut short"),
    }
    savemat(tmp / "complex.mat", {"data": np.ones((4, 2)) + 1j, "target": np.eye(4, 2)})
    for name, (data, _) in files.items():
        (tmp / name).write_bytes(data)
    return {tmp / name: message for name, (_, message) in files.items()} | {
        tmp / "complex.mat": "complex numbers"}


def test_damaged_data_files_are_one_line_naming_the_file(tmp_path, capsys):
    for path, message in _damaged_files(tmp_path).items():
        assert main(["fit", str(path), "--model", str(tmp_path / "m.skops")]) == 2, path
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and str(path) in err[0] and message in err[0], err


def test_svmlight_index_base_of_the_training_file_is_kept(tmp_path, capsys):
    # Trained with a 0 index; a new file without one could be 1-based (shifted scores):
    # refused in one line, and read once it gives its feature 0.
    (tmp_path / "train.svm").write_text("".join(
        f"{i % 2} 0:{1 + i % 3} 1:{i % 2 + 0.5} 2:{i % 5}\n" for i in range(30)))
    (tmp_path / "new.svm").write_text(" 1:1.5 2:3\n")
    (tmp_path / "same.svm").write_text(" 0:0 1:1.5 2:3\n")
    assert main(["fit", str(tmp_path / "train.svm"), "--model", str(tmp_path / "m.skops"),
                 "--n-latent", "1", "--n-groups", "1", "--paper"]) == 0
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "m.skops"), str(tmp_path / "new.svm"),
                 "--out", str(tmp_path / "new.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "new.svm: no feature index 0" in err
    assert not (tmp_path / "new.csv").exists()
    assert main(["predict", str(tmp_path / "m.skops"), str(tmp_path / "same.svm"),
                 "--out", str(tmp_path / "same.csv")]) == 0
    # Trained 1-based: a file with index 0 is refused, not shifted.
    (tmp_path / "one.svm").write_text("".join(
        f"{i % 2} 1:{1 + i % 3} 2:{i % 2 + 0.5} 3:{i % 5}\n" for i in range(30)))
    assert main(["fit", str(tmp_path / "one.svm"), "--model", str(tmp_path / "one.skops"),
                 "--n-latent", "1", "--n-groups", "1", "--paper"]) == 0
    capsys.readouterr()
    assert main(["predict", str(tmp_path / "one.skops"), str(tmp_path / "same.svm"),
                 "--out", str(tmp_path / "x.csv")]) == 2
    assert "feature index 0" in capsys.readouterr().err


def test_a_damaged_chunk_is_named(tmp_path, capsys):
    pytest.importorskip("dask.array")
    parts = tmp_path / "parts"
    parts.mkdir()
    np.save(parts / "X_0.npy", np.ones((20, 3)))
    np.save(parts / "Y_0.npy", np.eye(20, 2))
    (parts / "X_0.npy").write_bytes((parts / "X_0.npy").read_bytes()[:200])
    assert main(["fit", str(parts), "--model", str(tmp_path / "m.skops")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(parts / "X_0.npy") in err, err


@pytest.mark.parametrize("case", ["pipe", "no rows"])
def test_chunks_that_are_pipes_or_without_rows_are_named(tmp_path, capsys, case):
    import threading

    pytest.importorskip("dask.array")
    parts = tmp_path / "parts"
    parts.mkdir()
    np.save(parts / "Y_000.npy", np.eye(20, 2) if case == "pipe" else np.zeros((0, 2)))
    if case == "pipe":
        os.mkfifo(parts / "X_000.npy")
    else:
        np.save(parts / "X_000.npy", np.zeros((0, 3)))
    done = []
    thread = threading.Thread(target=lambda: done.append(
        main(["fit", str(parts), "--model", str(tmp_path / "m.skops")])), daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():  # release the read blocked on the pipe
        os.close(os.open(parts / "X_000.npy", os.O_WRONLY | os.O_NONBLOCK))
    assert done == [2]
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(parts) in err, err
    assert ("not a regular file" if case == "pipe" else "without rows") in err
    assert "missing" not in err


def test_out_of_memory_is_one_line(files, capsys, monkeypatch):
    import glocal.cli._fit

    tmp, train, _ = files

    def too_big(args):
        raise MemoryError()

    monkeypatch.setattr(glocal.cli._fit, "run", too_big)
    assert main(["fit", str(train), "--model", str(tmp / "m.skops")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == ("glocal fit: error: out of memory: the data or the model needs more "
                    "than is available")


def test_fit_help_names_the_objective_by_the_papers_number():
    """The objective is the paper's Eq. (4); Eq. (6) is its V block."""
    from glocal.cli import build_parser

    commands = build_parser()._subparsers._group_actions[0].choices
    text = " ".join(commands["fit"].format_help().split())
    assert "Eq. (4)" in text and "Eq. (6)" not in text


def _rowless_files(tmp):
    """Data files that hold no row: an empty svmlight file, an ARFF header, a 0-row .mat."""
    from scipy.io import savemat

    (tmp / "empty.svm").write_text("")
    (tmp / "header.arff").write_text("@relation 'header: -C 1'\n@attribute y {0,1}\n"
                                     "@attribute x numeric\n@data\n")
    savemat(tmp / "rowless.mat", {"data": np.zeros((0, 3)), "target": np.zeros((2, 0))})
    return [tmp / "empty.svm", tmp / "header.arff", tmp / "rowless.mat"]


@pytest.mark.parametrize("index", range(3))
def test_a_data_file_without_rows_is_one_line_naming_it(tmp_path, capsys, index):
    path = _rowless_files(tmp_path)[index]
    assert main(["fit", str(path), "--model", str(tmp_path / "m.skops")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(path) in line and "no rows" in line, line


@pytest.mark.parametrize("name, text", [
    ("nan.svm", "0 1:nan 2:0.5\n1 1:0.3 2:inf\n"),
    ("missing.arff", "@relation 'missing: -C 1'\n@attribute y {0,1}\n@attribute x numeric\n"
                     "@data\n1,?\n0,0.5\n1,0.25\n"),
])
def test_non_finite_features_of_a_data_file_are_one_line_naming_it(tmp_path, capsys, name,
                                                                    text):
    path = tmp_path / name
    path.write_text(text)
    assert main(["fit", str(path), "--model", str(tmp_path / "m.skops"),
                 "--n-groups", "1"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(path) in line and "NaN or infinite" in line, line


def test_a_data_file_without_feature_columns_is_one_line_naming_it(tmp_path, capsys):
    """Its only non-label attribute is a string (an identifier, dropped)."""
    path = tmp_path / "ids.arff"
    path.write_text("@relation 'ids: -C 1'\n@attribute y {0,1}\n@attribute id string\n"
                    "@data\n1,'a'\n0,'b'\n")
    assert main(["fit", str(path), "--model", str(tmp_path / "m.skops")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(path) in line and "no feature columns" in line, line
