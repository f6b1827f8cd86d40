"""SIGTERM and SIGINT stop a parallel fit with its worker processes within seconds."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sklearn.datasets import dump_svmlight_file

from glocal.datasets import make_glocal_data

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
@pytest.mark.parametrize("name, code, word", [("SIGTERM", 143, "terminated"),
                                              ("SIGINT", 130, "interrupted")])
def test_a_signal_stops_a_parallel_fit_and_its_workers(tmp_path, name, code, word):
    psutil = pytest.importorskip("psutil")
    data = make_glocal_data(n_samples=6000, n_features=200, random_state=0)
    dump_svmlight_file(data.X, data.Y, str(tmp_path / "big.svm"), multilabel=True)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # Started as a shell starts a command in the foreground, Ctrl-C at its default action
    # (a test run started in the background ignores SIGINT, and so would its children).
    process = subprocess.Popen(
        [sys.executable, "-m", "glocal", "fit", str(tmp_path / "big.svm"), "--model",
         str(tmp_path / "m.skops"), "--jobs", "2"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        main, workers = psutil.Process(process.pid), []
        deadline = time.monotonic() + 60
        while len(workers) < 2 and time.monotonic() < deadline:  # folds under way
            time.sleep(0.2)
            workers = main.children(recursive=True)
        assert len(workers) >= 2, "the workers did not start"
        time.sleep(1)
        process.send_signal(getattr(signal, name))
        _, err = process.communicate(timeout=10)
        gone, alive = psutil.wait_procs(workers, timeout=5)
    finally:
        process.kill()
        for worker in workers:
            if worker.is_running():
                worker.kill()
    assert process.returncode == code, err
    assert err.strip().splitlines() == [f"glocal fit: {word}"]
    assert not alive, f"{len(alive)} worker processes left running"
    assert not (tmp_path / "m.skops").exists()
