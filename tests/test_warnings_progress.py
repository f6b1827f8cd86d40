"""Each warning once, labels named, from searches, scikit-learn's tools, joblib workers and
the command; progress bars with the time left, shown on a terminal only."""

import fcntl
import functools
import io
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import threading
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from glocal import GLOCAL, GLOCALCV
from glocal.baselines import BR

REPO = Path(__file__).resolve().parents[1]
NEVER_POSITIVE = ("labels 'c' are never positive among their observed entries: they will "
                  "be ranked low")


def _frame(n=90, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4)) + 1
    Y = (X[:, :3] > 1).astype(float)
    Y[:, 2] = 0  # label c is never positive
    return X, pd.DataFrame(Y, columns=list("abc"))


def _recorded(function):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # Python's own: once per place
        function()
    return [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.parametrize("tool", [
    lambda X, Y: cross_val_score(make_pipeline(StandardScaler(), GLOCALCV()), X, Y, cv=3),
    lambda X, Y: cross_val_score(GLOCAL(n_latent=2, max_iter=3), X, Y, cv=3),
    lambda X, Y: GridSearchCV(GLOCAL(n_latent=2), {"lam2": [1.0, 4.0]}, cv=3).fit(X, Y),
    lambda X, Y: GridSearchCV(make_pipeline(StandardScaler(), BR()), {"br__C": [0.1, 1]},
                              cv=3).fit(X, Y),
], ids=["cross_val_score-pipeline-GLOCALCV", "cross_val_score-GLOCAL", "GridSearchCV-GLOCAL",
        "GridSearchCV-pipeline-BR"])
def test_scikit_learns_tools_raise_each_warning_once_by_label_name(tool):
    X, Y = _frame()
    caught = _recorded(lambda: tool(X, Y))
    assert len(caught) == len(set(caught)), caught
    labels = [text for kind, text in caught if kind == "LabelWarning"]
    assert labels and all("'c'" in text for text in labels), labels


def _run(code):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env=env, check=False)


@pytest.mark.slow  # a new interpreter and its two workers
def test_warnings_of_joblib_workers_reach_the_user_once():
    result = _run("""if True:
        import numpy as np, pandas as pd
        from glocal import GLOCALCV
        rng = np.random.default_rng(0)
        X = rng.standard_normal((90, 4)) + 1
        Y = (X[:, :3] > 1).astype(float); Y[:, 2] = 0
        GLOCALCV(n_jobs=2, random_state=0).fit(X, pd.DataFrame(Y, columns=list("abc")))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("never positive") == 1, result.stderr
    assert NEVER_POSITIVE in result.stderr


def test_glocal_fit_with_two_jobs_prints_each_warning_once_by_name(tmp_path):
    X, Y = _frame()
    rows = "\n".join(",".join([*map(str, Y.values[i].astype(int)), *(f"{v:.4f}" for v in X[i])])
                     for i in range(len(X)))
    (tmp_path / "train.arff").write_text(
        "@relation 'd: -C 3'\n" + "".join(f"@attribute {c} {{0,1}}\n" for c in "abc")
        + "".join(f"@attribute f{i} numeric\n" for i in range(4)) + "@data\n" + rows + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "glocal", "fit", str(tmp_path / "train.arff"), "--model",
         str(tmp_path / "m.skops"), "--jobs", "2", "--cv-folds", "2"],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines == [f"glocal fit: warning: {NEVER_POSITIVE}"], lines


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_glocalcv_shows_progress_through_search_and_refit_on_a_terminal(monkeypatch, capsys):
    X, Y = _frame()
    import tqdm

    # Every step drawn, for these short fits.
    monkeypatch.setattr(tqdm, "tqdm", functools.partial(tqdm.tqdm, mininterval=0, miniters=1))
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    model = GLOCALCV(random_state=0, verbose=1).fit(X, Y)
    shown = terminal.getvalue()
    assert "GLOCALCV search" in shown and "GLOCALCV refit" in shown
    # The fits counted; the time left once the first fold of 8 fits is done, not before.
    assert re.search(r"GLOCALCV search: .* 7/24 fits \[\d\d:\d\d\]", shown)
    assert re.search(r"GLOCALCV search: .* 8/24 fits \[\d\d:\d\d, \d\d:\d\d left\]", shown)
    # The refit: elapsed time and rounds, no time left.
    assert re.search(r"GLOCALCV refit \[\d\d:\d\d, initialisation round 1 of at most 300\]",
                     shown)
    assert re.search(r"GLOCALCV refit \[\d\d:\d\d, Algorithm 1 round 1 of at most 200\]", shown)
    assert "refit:" not in shown and "GLOCALCV refit [" in shown
    out = capsys.readouterr().out
    # The refit's time is the refit's.
    refit = re.search(r"refitted .* on all 90 rows in (\d+\.\d) s \((\d+) initialisation "
                      r"rounds?, (\d+) outer iterations?\)", out)
    assert refit and float(refit.group(1)) == round(model.refit_time_, 1)
    assert (int(refit.group(2)), int(refit.group(3))) == (model.best_estimator_.n_init_iter_,
                                                          model.best_estimator_.n_iter_)
    # Not on a terminal, or not verbose: nothing.
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    GLOCALCV(random_state=0, verbose=1).fit(X, Y)
    terminal.truncate(0)
    monkeypatch.setattr(sys, "stderr", terminal)
    GLOCALCV(random_state=0).fit(X, Y)
    assert pipe.getvalue() == "" and terminal.getvalue() == ""
    assert capsys.readouterr().out.count("[GLOCALCV]") == 2  # the verbose fit's two lines


def test_glocal_fit_shows_progress_on_a_terminal_only(tmp_path, monkeypatch, capsys):
    X, Y = _frame(n=300)
    from sklearn.datasets import dump_svmlight_file

    dump_svmlight_file(X, Y.values.astype(int), str(tmp_path / "train.svm"), multilabel=True)
    command = [sys.executable, "-m", "glocal", "fit", str(tmp_path / "train.svm"), "--model"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "TQDM_MININTERVAL": "0",
           "TQDM_MINITERS": "1"}
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 120, 0, 0))
    chunks = []

    def read():  # all the time, so that the terminal's buffer never fills
        while True:
            try:
                chunk = os.read(controller, 1 << 16)
            except OSError:  # the terminal's other end is closed
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        result = subprocess.run([*command, str(tmp_path / "a.skops")], stderr=terminal,
                                stdout=subprocess.PIPE, text=True, timeout=300, env=env,
                                check=False)
    finally:
        os.close(terminal)
        reader.join(30)
        os.close(controller)
    shown = b"".join(chunks)
    assert result.returncode == 0
    assert b"GLOCALCV search" in shown and b"GLOCALCV refit" in shown, shown[-500:]
    # Into a pipe (here the captured stderr of this process), with every step drawn: nothing.
    import tqdm

    from glocal.cli import main

    monkeypatch.setattr(tqdm, "tqdm", functools.partial(tqdm.tqdm, mininterval=0, miniters=1))
    assert main(["fit", str(tmp_path / "train.svm"), "--model", str(tmp_path / "b.skops")]) == 0
    piped = capsys.readouterr().err
    assert "GLOCALCV search" not in piped and "GLOCALCV refit" not in piped


class _Clock:
    """A clock that moves only when told."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_rounds_clock_guesses_nothing_before_a_round_then_its_steps_times():
    from glocal._utils.progress import RoundsClock

    clock = _Clock()
    rounds = RoundsClock(3, 4, clock)
    for cost in (10, 1, 1, 2):  # a cold fit, then warm ones
        assert rounds.time_left() is None
        clock.now += cost
        rounds.step_done()
    assert rounds.time_left() == 28  # two more rounds of 14 s
    clock.now += 20  # the second round's cold fit takes twice as long
    rounds.step_done()
    assert rounds.time_left() == pytest.approx(2 * (4 + 14))
    for cost in (2, 2, 4, *2 * np.array([10, 1, 1, 2])):
        clock.now += cost
        rounds.step_done()
    assert rounds.time_left() == 0


@pytest.mark.parametrize("seed", range(20))
def test_search_time_left_stays_within_twice_the_truth_after_a_tenth(seed):
    """Simulated searches: 3 to 5 folds of 8 fits, each path's cold fit up to 20 times the
    cost of its warm ones, folds up to 30 % apart, every fit 20 % noisy. From 10 % of the
    bar on, every time left shown is within 2x of the time that was left."""
    from glocal._utils.progress import RoundsClock

    rng = np.random.default_rng(seed)
    n_folds = int(rng.integers(3, 6))
    costs = rng.uniform(1, 3, 8) * np.where(np.arange(8) % 4 == 0, rng.uniform(1, 20), 1)
    times = [costs * rng.uniform(0.7, 1.3) * rng.uniform(0.8, 1.2, 8) for _ in range(n_folds)]
    end = float(np.sum(times))
    clock = _Clock()
    rounds = RoundsClock(n_folds, 8, clock)
    shown = []
    for fold in times:
        for cost in fold:
            clock.now += cost
            rounds.step_done()
            shown.append((rounds.done / rounds.total, rounds.time_left(), end - clock.now))
    checked = [(left, truth) for done, left, truth in shown[:-1]  # the last: 0 left
               if done >= 0.1 and left is not None]
    assert checked and all(0.5 <= left / truth <= 2 for left, truth in checked)


def test_search_progress_shows_the_time_left_from_the_first_fold_on():
    from glocal._utils.progress import SearchProgress

    clock, terminal = _Clock(), _Terminal()
    with SearchProgress(2, 3, verbose=1, clock=clock, file=terminal) as progress:
        progress.bar.mininterval = progress.bar.miniters = 0  # draw every step
        for cost in (60, 30, 30, 60, 30):
            clock.now += cost
            progress.fit_done()
            drawn = terminal.getvalue().rsplit("\r", 1)[-1]
            assert ("left]" in drawn) == (progress.clock.done >= 3), drawn
        assert drawn.endswith("5/6 fits [00:00, 00:30 left]"), drawn  # tqdm's own clock


def test_search_progress_rounds_the_time_left_up_to_whole_seconds():
    from glocal._utils.progress import SearchProgress

    clock, terminal = _Clock(), _Terminal()
    with SearchProgress(2, 2, verbose=1, clock=clock, file=terminal) as progress:
        progress.bar.mininterval = progress.bar.miniters = 0
        for cost in (1.0, 0.2, 1.0):
            clock.now += cost
            progress.fit_done()
        drawn = terminal.getvalue().rsplit("\r", 1)[-1]
        assert drawn.endswith("3/4 fits [00:00, 00:01 left]"), drawn  # 0.2 s, not 00:00


def test_fit_progress_counts_the_rounds_of_each_loop_without_a_time_left():
    from glocal._utils.progress import FitProgress

    class Bar:
        n = 0
        text = ""

        def update(self, steps):
            self.n += steps

        def set_postfix_str(self, text, refresh):
            self.text = text

        def close(self):
            self.closed = True

    bar = Bar()
    progress = FitProgress(bar, init_max_iter=30, max_iter=200)
    progress("init", 7, 1.0)
    assert bar.text == "initialisation round 7 of at most 30"
    progress("main", 2, 0.5)
    assert bar.text == "Algorithm 1 round 2 of at most 200" and bar.n == 2
    progress.finish()
    assert bar.closed
