"""Outputs are never lost or replaced by accident: exclusive creation without --force, and
--force never writes over an input, a link, a pipe, a device or a directory."""

import multiprocessing
import os
import sys

import numpy as np
import pytest
from datafiles import _svmlight

from glocal._utils.io import atomic_output
from glocal.cli import main
from glocal.persistence import load_model

_WRITERS, _ROUNDS = 4, 20


@pytest.fixture
def files(tmp_path):
    _svmlight(tmp_path / "train.svm", 0, n=40, d=5)
    _svmlight(tmp_path / "test.svm", 1, n=20, d=5)
    assert main(["fit", str(tmp_path / "train.svm"), "--model", str(tmp_path / "m.skops"),
                 "--n-latent", "2", "--max-iter", "2", "--paper"]) == 0
    return tmp_path


def _main_at_once(barrier, argv, results):
    """A process running the command ``argv`` once the others are ready."""
    import contextlib
    import io

    err = io.StringIO()
    barrier.wait()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    results.put((code, err.getvalue(), argv))


@pytest.mark.skipif(sys.platform == "win32", reason="forkserver")
@pytest.mark.parametrize("command", ["fit", "predict"])
def test_concurrent_commands_into_one_file_one_wins_the_others_name_force(files, command):
    # Children come from a fresh server, not a fork of this process: a fork of a process
    # that has run OpenMP code (scikit-learn's) hangs at its own first OpenMP region. The
    # server holds what the commands import lazily too (skops, tqdm): past the barrier the
    # children go straight to their output, together, instead of importing for seconds.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["test_outputs", "glocal.estimator", "glocal.datasets",
                                    "glocal.model_selection", "skops.io", "tqdm"])
    for trial in range(_ROUNDS):
        out = files / f"out{trial}"
        if command == "fit":
            runs = [["fit", files / "train.svm", "--model", out, "--seed", seed,
                     "--n-latent", "2", "--max-iter", "2", "--paper"]
                    for seed in range(_WRITERS)]
        else:
            runs = [["predict", files / "m.skops", files / "test.svm", "--out", out,
                     *(["--labels"] if seed % 2 else [])] for seed in range(_WRITERS)]
        barrier, results = context.Barrier(_WRITERS), context.Queue()
        processes = [context.Process(target=_main_at_once, daemon=True,
                                     args=(barrier, list(map(str, argv)), results))
                     for argv in runs]
        for process in processes:
            process.start()
        try:
            outcomes = [results.get(timeout=120) for _ in processes]
        finally:
            for process in processes:
                process.join(5)
                if process.is_alive():
                    process.kill()
        assert sorted(code for code, _, _ in outcomes) == [0] + [2] * (_WRITERS - 1), outcomes
        for code, err, argv in outcomes:
            if code:
                assert "exists; use --force" in err and "overwrite=True" not in err, err
            elif command == "fit":  # the file holds the winner's model
                assert load_model(out).random_state == int(argv[argv.index("--seed") + 1])


def _refused(capsys, argv, *fragments):
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    for fragment in fragments:
        assert fragment in err, err
    return err


def test_force_never_writes_over_an_input(files, capsys):
    data, model = files / "train.svm", files / "m.skops"
    before = data.read_bytes(), model.read_bytes()
    _refused(capsys, ["fit", str(data), "--model", str(data), "--force"], "is an input")
    _refused(capsys, ["predict", str(model), str(files / "test.svm"), "--out", str(model),
                      "--force"], "is an input")
    os.link(data, files / "hard.svm")  # the same file under another name
    _refused(capsys, ["fit", str(data), "--model", str(files / "hard.svm"), "--force"],
             "is an input", "train.svm")
    assert (data.read_bytes(), model.read_bytes()) == before


def test_force_never_writes_over_the_test_part_or_the_label_xml(tmp_path, capsys):
    from datafiles import _arff

    rng = np.random.default_rng(0)
    for part in ("train", "test"):
        _arff(tmp_path / f"d-{part}.arff", rng.standard_normal((30, 3)),
              (rng.random((30, 3)) < 0.5).astype(int))
    (tmp_path / "d.xml").write_text("<labels>" + "".join(f'<label name="{name}"/>'
                                                         for name in "abc") + "</labels>")
    for victim in ("d-test.arff", "d.xml"):
        before = (tmp_path / victim).read_bytes()
        _refused(capsys, ["fit", str(tmp_path / "d-train.arff"), "--model",
                          str(tmp_path / victim), "--force"], "is an input")
        assert (tmp_path / victim).read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes")
def test_pipes_devices_and_directories_are_never_outputs(files, capsys):
    pipe = files / "pipe.csv"
    os.mkfifo(pipe)
    for force in ([], ["--force"]):
        _refused(capsys, ["predict", str(files / "m.skops"), str(files / "test.svm"), "--out",
                          str(pipe), *force], "named pipe")
        _refused(capsys, ["predict", str(files / "m.skops"), str(files / "test.svm"), "--out",
                          os.devnull, *force], "device")
        _refused(capsys, ["fit", str(files / "train.svm"), "--model", str(files), *force],
                 "is a directory")
    assert not pipe.is_file() and os.path.exists(os.devnull) and not os.path.isfile(os.devnull)


def test_a_symbolic_link_is_not_replaced_by_force(files, capsys):
    target, link = files / "scores.csv", files / "link.csv"
    target.write_text("keep\n")
    link.symlink_to(target)
    _refused(capsys, ["predict", str(files / "m.skops"), str(files / "test.svm"), "--out",
                      str(link), "--force"], "symbolic link", str(target))
    assert link.is_symlink() and target.read_text() == "keep\n"
    # Named explicitly, the target is replaced.
    assert main(["predict", str(files / "m.skops"), str(files / "test.svm"), "--out",
                 str(target), "--force"]) == 0
    assert target.read_text() != "keep\n" and link.is_symlink()


def test_errors_while_writing_name_the_output_not_the_temporary_file(tmp_path):
    path = tmp_path / "out.csv"
    with pytest.raises(OSError) as raised:
        with atomic_output(path, overwrite=True) as file:
            file.write("x")
            path.mkdir()  # the name is taken by a directory meanwhile
    assert str(path) in str(raised.value) and ".tmp" not in str(raised.value)
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_label_names_that_look_like_formulas_are_neutralised_in_csv(tmp_path):
    rng = np.random.default_rng(0)
    names = ["=cmd|' /C calc'!A0", "+1+1", "@SUM(A1)"]
    X = rng.standard_normal((30, 3))
    Y = (X > 0).astype(int)
    attributes = "".join(f"@attribute '{name}' {{0,1}}\n" for name in names) + "".join(
        f"@attribute x{j} numeric\n" for j in range(3))
    rows = "\n".join(",".join([*map(str, Y[i]), *map(str, X[i])]) for i in range(30))
    (tmp_path / "d.arff").write_text(f"@relation 'd: -C 3'\n{attributes}@data\n{rows}\n")
    assert main(["fit", str(tmp_path / "d.arff"), "--model", str(tmp_path / "m.skops"),
                 "--n-latent", "2", "--max-iter", "2", "--paper"]) == 0
    assert main(["predict", str(tmp_path / "m.skops"), str(tmp_path / "d.arff"), "--out",
                 str(tmp_path / "s.csv")]) == 0
    import csv

    with open(tmp_path / "s.csv", newline="") as file:
        header = next(csv.reader(file))
    assert header == ["'" + name for name in names]
