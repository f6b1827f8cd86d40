"""Adversarial cases against the command line and the library: what each gives.

Every case builds its input in a temporary directory, runs the ``glocal`` command (a new
process, as a user would) or the Python call, and prints one row: the case, the exit code
(or "ok" / the exception), the wall-clock seconds and the first words of the message. The
cases: concurrent writers of one output, ``--force`` against inputs, links and special
files, crafted model files (non-finite, complex or misshapen arrays, an entry shadowing a
method, an invalid parameter, compression bombs), data files declaring more than the memory
budget, damaged results files and chunk directories, large feature offsets, parameters
changed after ``fit``, SIGTERM during a parallel fit, and resuming against a large results
file.

    python benchmarks/bench_reliability.py [--trials 20]
"""

import argparse
import io
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
import zlib
from pathlib import Path

import numpy as np
from sklearn.datasets import dump_svmlight_file

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1",
       "OPENBLAS_NUM_THREADS": "1"}
ROWS = []


def row(case, outcome, seconds, message=""):
    message = " ".join(message.split())
    ROWS.append((case, outcome, f"{seconds:.2f}", message[:140]))
    print(f"{case:<58} {outcome:>5} {seconds:7.2f}  {message[:140]}", flush=True)


def glocal(case, *args):
    """Run ``glocal ARGS`` and record its exit code, time and message."""
    tic = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "glocal", *map(str, args)], env=ENV,
                          capture_output=True, text=True, timeout=600, check=False)
    message = done.stderr.strip().splitlines()
    message = message[-1].split("error: ", 1)[-1] if message else ""
    for arg in args:  # the files by their names, without the temporary folder
        if isinstance(arg, Path):
            message = message.replace(str(arg.parent) + os.sep, "")
    row(case, str(done.returncode), time.perf_counter() - tic, message)
    return done


def python(case, call):
    tic = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcome, message = "ok", str(call() or "")
    except Exception as exc:
        outcome, message = type(exc).__name__, str(exc)
    row(case, outcome, time.perf_counter() - tic, message)


def outputs(tmp, trials):
    from glocal.datasets import make_glocal_data

    data = make_glocal_data(n_samples=200, random_state=0)
    dump_svmlight_file(data.X, data.Y, str(tmp / "d.svm"), multilabel=True)
    glocal("fit (the model every case below reads)", "fit", tmp / "d.svm", "--model",
           tmp / "m.skops")
    wins, messages = 0, set()
    tic = time.perf_counter()
    for trial in range(trials):
        runs = [subprocess.Popen([sys.executable, "-m", "glocal", "fit", str(tmp / "d.svm"),
                                  "--model", str(tmp / f"race{trial}.skops"), "--paper",
                                  "--seed", str(seed)], env=ENV, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True) for seed in range(4)]
        codes = sorted(run.wait() for run in runs)
        messages |= {run.stderr.read().strip() for run in runs} - {""}
        wins += codes == [0, 2, 2, 2]
    shown = {re.sub(r"race\d+", "race<trial>", message.split("error: ")[-1]).replace(
        str(tmp) + os.sep, "") for message in messages}
    row("4 concurrent fits (--paper) into one new file: one wrote it", f"{wins}/{trials}",
        time.perf_counter() - tic, " / ".join(sorted(shown)))
    glocal("fit d.svm --model d.svm --force", "fit", tmp / "d.svm", "--model", tmp / "d.svm",
           "--force")
    glocal("predict m.skops d.svm --out m.skops --force", "predict", tmp / "m.skops",
           tmp / "d.svm", "--out", tmp / "m.skops", "--force")
    os.mkfifo(tmp / "pipe.csv")
    glocal("predict --out a named pipe --force", "predict", tmp / "m.skops", tmp / "d.svm",
           "--out", tmp / "pipe.csv", "--force")
    glocal("predict --out /dev/null --force", "predict", tmp / "m.skops", tmp / "d.svm",
           "--out", os.devnull, "--force")
    (tmp / "target.csv").write_text("kept\n")
    (tmp / "link.csv").symlink_to(tmp / "target.csv")
    glocal("predict --out a symbolic link --force", "predict", tmp / "m.skops", tmp / "d.svm",
           "--out", tmp / "link.csv", "--force")
    names = ["=cmd|' /C calc'!A0", "+1", "@SUM(A1)"]
    attributes = "".join(f"@attribute '{name}' {{0,1}}\n" for name in names)
    attributes += "".join(f"@attribute x{j} numeric\n" for j in range(3))
    X = np.random.default_rng(0).standard_normal((40, 3))
    lines = "\n".join(",".join([*map(str, (X[i] > 0).astype(int)), *map(str, X[i])])
                      for i in range(40))
    (tmp / "f.arff").write_text(f"@relation 'f: -C 3'\n{attributes}@data\n{lines}\n")
    subprocess.run([sys.executable, "-m", "glocal", "fit", str(tmp / "f.arff"), "--model",
                    str(tmp / "f.skops")], env=ENV, capture_output=True, check=True)
    glocal("predict, labels named =cmd..., +1, @SUM(A1)", "predict", tmp / "f.skops",
           tmp / "f.arff", "--out", tmp / "f.csv")
    ROWS[-1] = (*ROWS[-1][:3], "header: " + (tmp / "f.csv").read_text().splitlines()[0])
    print(f"{'':<58} {'':>5} {'':>7}  {ROWS[-1][3]}")


def _crafted(tmp, name, edit):
    import skops.io as sio

    from glocal.persistence import load_model, load_model_info

    saved = {"format": "glocal model", **load_model_info(tmp / "m.skops"),
             "model": load_model(tmp / "m.skops")}
    model = getattr(saved["model"], "best_estimator_", saved["model"])
    edit(model)
    sio.dump(saved, tmp / name)
    return tmp / name


def _set_entry(value):
    def edit(model):
        model.W_ = model.W_.astype(type(value))
        model.W_[0, 0] = value
    return edit


def model_files(tmp):
    cases = [("W_ holding NaN", "nan.skops", _set_entry(np.nan)),
             ("W_ holding 1e308", "big.skops", _set_entry(1e308)),
             ("W_ complex", "complex.skops", _set_entry(1j)),
             ("W_ of another shape", "shape.skops",
              lambda model: setattr(model, "W_", model.W_[:3])),
             ("decision_function = numpy.negative", "shadow.skops",
              lambda model: setattr(model, "decision_function", np.negative)),
             ('normalize_rows = "yes"', "param.skops",
              lambda model: setattr(model, "normalize_rows", "yes"))]
    for case, name, edit in cases:
        glocal(f"predict with a model file: {case}", "predict", _crafted(tmp, name, edit),
               tmp / "d.svm", "--out", tmp / "out.csv")
    with zipfile.ZipFile(tmp / "m.skops") as archive:
        schema = archive.read("schema.json")
        npy = next(n for n in archive.namelist() if n.endswith(".npy"))
    with zipfile.ZipFile(tmp / "m.skops") as old, zipfile.ZipFile(
            tmp / "schema-bomb.skops", "w", compression=zipfile.ZIP_DEFLATED) as new:
        for member in old.namelist():
            if member != "schema.json":
                new.writestr(member, old.read(member))
        with new.open("schema.json", "w", force_zip64=True) as file:
            file.write(schema[:-1])
            block = b" " * 2**24
            for _ in range(128):  # 2 GiB of spaces: still JSON
                file.write(block)
            file.write(schema[-1:])
    size = (tmp / "schema-bomb.skops").stat().st_size / 2**20
    glocal(f"predict: schema.json padded to 2 GiB ({size:.1f} MiB file)", "predict",
           tmp / "schema-bomb.skops", tmp / "d.svm", "--out", tmp / "out.csv")
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (2**29, 1)})
    with zipfile.ZipFile(tmp / "m.skops") as old, zipfile.ZipFile(
            tmp / "npy-bomb.skops", "w") as new:
        for member in old.namelist():
            new.writestr(member, header.getvalue() + b"\0" * 64 if member == npy
                         else old.read(member))
    glocal("predict: an .npy member whose header declares 4 GiB", "predict",
           tmp / "npy-bomb.skops", tmp / "d.svm", "--out", tmp / "out.csv")


def data_files(tmp):
    from scipy.io import savemat

    # A .mat file of a 4.3 GB matrix of zeros, compressed: written by streaming zlib.
    savemat(tmp / "small.mat", {"data": np.zeros((1, 1)), "target": np.zeros((1, 1))},
            do_compression=False)
    n = 23170  # 23170^2 doubles = 4.3 GB
    body = io.BytesIO()
    fields = [(6, np.array([6, 0], "<u4").tobytes()), (5, np.array([n, n], "<i4").tobytes()),
              (1, b"data")]
    for kind, data in fields:
        body.write(np.array([kind, len(data)], "<u4").tobytes() + data
                   + b"\0" * (-len(data) % 8))
    head = body.getvalue() + np.array([9, 8 * n * n % 2**32], "<u4").tobytes()
    compressor = zlib.compressobj()
    stream = [compressor.compress(np.array([14, len(head) + 8 * n * n], "<u4").tobytes()
                                  + head)]
    zeros = b"\0" * 2**24
    for _ in range(8 * n * n // len(zeros)):
        stream.append(compressor.compress(zeros))
    stream.append(compressor.compress(b"\0" * (8 * n * n % len(zeros))) + compressor.flush())
    payload = b"".join(stream)
    with open(tmp / "bomb.mat", "wb") as file:
        file.write((tmp / "small.mat").read_bytes()[:128])
        file.write(np.array([15, len(payload)], "<u4").tobytes() + payload)
    size = (tmp / "bomb.mat").stat().st_size / 2**20
    glocal(f"fit a .mat declaring a 4.3 GB matrix ({size:.1f} MiB file)", "fit",
           tmp / "bomb.mat", "--model", tmp / "x.skops")
    (tmp / "index.svm").write_text("1 2147483646:1\n0 3:1\n")
    glocal("fit an svmlight file with feature index 2^31 - 2", "fit", tmp / "index.svm",
           "--model", tmp / "x.skops")
    (tmp / "one.svm").write_text(" 1:1.5 2:3\n")
    glocal("predict a file without index 0 under a 0-based model", "predict", tmp / "m.skops",
           tmp / "one.svm", "--out", tmp / "out.csv")
    chunks = tmp / "chunks"
    chunks.mkdir()
    np.save(chunks / "Y_000.npy", np.eye(20, 3))
    os.mkfifo(chunks / "X_000.npy")
    glocal("fit a chunk directory whose X_000.npy is a named pipe", "fit", chunks, "--model",
           tmp / "x.skops", "--paper")
    empty = tmp / "empty"
    empty.mkdir()
    np.save(empty / "X_000.npy", np.zeros((0, 3)))
    np.save(empty / "Y_000.npy", np.zeros((0, 3)))
    glocal("fit a chunk directory of chunks without rows", "fit", empty, "--model",
           tmp / "x.skops", "--paper")


def results_files(tmp):
    out = tmp / "rep"
    subprocess.run([sys.executable, "-m", "glocal", "reproduce", "--quick", "--datasets",
                    "synthetic", "--out", str(out)], env=ENV, capture_output=True, check=True)
    text = (out / "results.csv").read_text()
    header, first, *rest = text.splitlines(keepends=True)
    long = tmp / "long"
    long.mkdir()
    (long / "results.csv").write_text(header + first.replace("{", "{" + " " * 140_000, 1)
                                      + "".join(rest))
    glocal("reproduce with a results.csv field of 140,000 characters", "reproduce", "--quick",
           "--datasets", "synthetic", "--out", long)
    glocal("plot --results of the same file", "plot", "--results", long / "results.csv",
           "--out", tmp / "figures")
    bom = tmp / "bom"
    bom.mkdir()
    (bom / "results.csv").write_bytes(b"\xef\xbb\xbf" + text.encode())
    glocal("reproduce with a byte order mark in results.csv (resumes)", "reproduce",
           "--quick", "--datasets", "synthetic", "--out", bom)
    linked = tmp / "linked"
    linked.mkdir()
    (tmp / "kept.csv").write_text(text + "synthetic,0,cut")
    (linked / "results.csv").symlink_to(tmp / "kept.csv")
    glocal("reproduce with a linked, damaged results.csv (rewritten)", "reproduce", "--quick",
           "--datasets", "synthetic", "--out", linked)
    ROWS[-1] = (*ROWS[-1][:3], f"still a link: {(linked / 'results.csv').is_symlink()}")
    big = tmp / "big"
    big.mkdir()
    others = [line.replace("synthetic", f"other{i}", 1) for i in range(25_000)
              for line in [first, *rest]]
    (big / "results.csv").write_text(header + "".join(others))
    glocal(f"reproduce --quick resuming against {len(others):,} rows of other runs",
           "reproduce", "--quick", "--datasets", "synthetic", "--out", big)


def python_api(tmp):
    import pandas as pd
    from estimators import quick_estimators  # the tests' small configurations

    from glocal import GLOCAL, GLOCALCV
    from glocal.datasets import make_glocal_data

    data = make_glocal_data(n_samples=150, random_state=0)
    X, Y = data.X, data.Y.astype(float)
    python("GLOCALCV(cv=[(train, [65])]) on 60 rows",
           lambda: GLOCALCV(GLOCAL(n_latent=2), {"lam2": [1.0]},
                            cv=[(np.arange(50), [65])]).fit(X[:60], Y[:60]))
    frame = pd.DataFrame(X[:, :3], columns=["a", "a", "b"])
    python("GLOCAL().fit on a DataFrame repeating a column name",
           lambda: GLOCAL().fit(frame, Y))
    uint = np.uint64(2**63 - 2**20) + (np.abs(X) * 1000).astype(np.uint64)
    for offset, features in (("+1e8", X + 1e8), ("+1e12", X + 1e12), ("uint64 ~2^63", uint)):
        for name, model in quick_estimators().items():
            if name in ("GLOCAL", "MLLRC", "MLLOC", "MMLLOC"):
                python(f"{name}.fit(X {offset}): finite scores",
                       lambda: bool(np.isfinite(model.fit(features, Y).decision_function(
                           features)).all()))
    moved = []
    for name, model in quick_estimators().items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = model.fit(X, Y).decision_function(X)
        params = model.get_params(deep=False)
        if "normalize_rows" in params:
            model.set_params(normalize_rows=not params["normalize_rows"])
        if "side_information" in params:
            model.set_params(side_information=False)
        moved.append(float(np.abs(model.decision_function(X) - scores).max()))
    row("set_params(normalize_rows / side_information) after fit", "ok", 0.0,
        f"largest change of a score over the 10 estimators: {max(moved):g}")


def sigterm(tmp):
    import psutil
    from glocal.datasets import make_glocal_data

    data = make_glocal_data(n_samples=6000, n_features=200, random_state=0)
    dump_svmlight_file(data.X, data.Y, str(tmp / "big.svm"), multilabel=True)
    process = subprocess.Popen([sys.executable, "-m", "glocal", "fit", str(tmp / "big.svm"),
                                "--model", str(tmp / "terminated.skops"), "--jobs", "2"],
                               env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    main, workers = psutil.Process(process.pid), []
    deadline = time.monotonic() + 120
    while len(workers) < 2 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
        workers = main.children(recursive=True)
    if len(workers) < 2:
        process.kill()
        row("SIGTERM to fit --jobs 2", "-", 0.0,
            f"the workers did not start: {process.communicate()[1].strip()[-80:]}")
        return
    time.sleep(1)
    tic = time.perf_counter()
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    seconds = time.perf_counter() - tic
    _, alive = psutil.wait_procs(workers, timeout=5)
    row(f"SIGTERM to fit --jobs 2 ({len(workers)} child processes)",
        str(process.returncode), seconds,
        f"{err.strip()}; {len(alive)} processes alive 5 s later")
    for worker in alive:
        worker.kill()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20,
                        help="trials of the concurrent writers (default 20)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    print(f"{'case':<58} {'exit':>5} {'s':>7}  message")
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        outputs(tmp, args.trials)
        model_files(tmp)
        data_files(tmp)
        results_files(tmp)
        python_api(tmp)
        sigterm(tmp)


if __name__ == "__main__":
    main()
