"""The reproduction workflow: results, report, resuming, on synthetic data (and Enron)."""

import json
import math

import numpy as np
import pytest
from realdata import DATA_DIR, real
from sklearn.datasets import dump_svmlight_file

from glocal import reproduce
from glocal.datasets import make_glocal_data
from glocal.reproduce import FIELDS, MEASURES, read_results, render_report, run_reproduction


def _quick(out_dir, **kwargs):
    lines = []
    rows = run_reproduction(["synthetic"], out_dir=out_dir, quick=True, progress=lines.append,
                            **kwargs)
    return rows, lines


def _run_keys(rows):
    return [(r["dataset"], r["repetition"], r["rho"], r["method"]) for r in rows]


def test_quick_mode_writes_one_row_per_run_and_the_report(tmp_path):
    rows, lines = _quick(tmp_path)

    stored = read_results(tmp_path / "results.csv")
    assert _run_keys(stored) == [("synthetic", 0, 1.0, "GLOCAL"), ("synthetic", 0, 1.0, "BR"),
                                 ("synthetic", 0, 0.3, "GLOCAL")]  # BR: no missing labels
    assert _run_keys(rows) == _run_keys(stored)
    for row in stored:
        assert row["n_train"] == 300 and 0 < row["n_test"] <= 200  # 500 rows, 60/40
        assert all(math.isfinite(row[f"prediction_{m}"]) for m in MEASURES)
        recovered = [math.isfinite(row[f"recovery_{m}"]) for m in MEASURES]
        assert all(recovered) if row["rho"] < 1 else not any(recovered)
        assert set(json.loads(row["params"])) == set(reproduce.METHODS[row["method"]].param_grid)
        assert row["time_fit"] > 0 and not row["tune"] and row["quick"]
    glocal, br = stored[0], stored[1]
    assert all(glocal[f"time_{t}"] >= 0 for t in ("clustering", "init", "main"))
    assert math.isnan(br["time_main"])
    assert any(line.startswith("[3/3]") and "ETA" in line for line in lines)

    report = (tmp_path / "report.md").read_text()
    for title in ("## Full labels, test (rho = 1)",
                  "## Missing labels: recovery of the missing training labels",
                  "## Missing labels: prediction on test", "## Fit time"):
        assert title in report
    assert "| synthetic | Ap ↑ | 1 |" in report and "| synthetic | Rkl ↓ | 0.3 |" in report
    assert not list(tmp_path.glob("*.tmp"))


def test_runs_are_deterministic(tmp_path):
    first, _ = _quick(tmp_path / "a")
    second, _ = _quick(tmp_path / "b")
    for a, b in zip(first, second):
        assert [a[f"prediction_{m}"] for m in MEASURES] == [b[f"prediction_{m}"]
                                                              for m in MEASURES]


def test_interrupted_run_resumes_without_losing_or_repeating_runs(tmp_path, monkeypatch):
    calls = []
    original = reproduce._run

    def interrupted(*args):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(args[1:5])
        return original(*args)

    monkeypatch.setattr(reproduce, "_run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _quick(tmp_path, n_repeats=2)
    finished = read_results(tmp_path / "results.csv")
    assert len(finished) == 3
    # A crash while replacing a file leaves at most a stale temporary file behind.
    (tmp_path / "results.csv.tmp").write_text("half a row,")

    monkeypatch.setattr(reproduce, "_run", original)
    rows, lines = _quick(tmp_path, n_repeats=2)
    assert any(line.startswith("6 runs, 3 already in") for line in lines)
    stored = read_results(tmp_path / "results.csv")
    assert len(set(_run_keys(stored))) == len(stored) == 6
    assert stored[:3] == finished  # kept as they were, not recomputed
    assert _run_keys(stored) == _run_keys(rows)
    assert (tmp_path / "report.md").is_file()


def test_other_configuration_in_out_dir_is_refused(tmp_path):
    _quick(tmp_path)
    with pytest.raises(ValueError, match="another configuration"):
        _quick(tmp_path, random_state=1)


@pytest.mark.parametrize("kwargs, message", [
    ({"methods": ("GLOCAL", "NOPE")}, "unknown method 'NOPE'"),
    ({"observed_fractions": (1.0, 1.5)}, r"\(0, 1\]"),
    ({"paper_tables": "no/such/file.json"}, "not found"),
])
def test_bad_arguments_fail_before_any_run(tmp_path, kwargs, message):
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        _quick(tmp_path, **kwargs)
    assert not (tmp_path / "results.csv").exists()


def _row(dataset, rep, rho, method, value):
    row = dict.fromkeys(FIELDS, np.nan)
    row.update(dataset=dataset, repetition=rep, rho=rho, method=method, seed=0, quick=False,
               tune=True, drop_unlabeled=True, n_train=6, n_test=4, params="{}")
    for part in ("prediction", "recovery"):
        row.update({f"{part}_{m}": value for m in MEASURES})
    row.update(time_fit=1.0, time_tuning=2.0)
    return row


def test_report_has_the_papers_numbers_and_the_significance_marks(tmp_path):
    rng = np.random.default_rng(0)
    rows = []
    for rep in range(5):
        base, gain = 0.5 + 0.01 * rng.standard_normal(2)
        rows += [_row("society", rep, 1.0, "GLOCAL", base + gain),
                 _row("society", rep, 1.0, "BR", base),
                 _row("social", rep, 1.0, "GLOCAL", base),
                 _row("social", rep, 1.0, "BR", base + gain),
                 _row("society", rep, 0.7, "GLOCAL", base)]
    paper = {
        "full_labels_test": {"Society": {"Ap": {"GLOCAL": {"mean": 0.123, "std": 0.004}}}},
        "missing_labels_recovery_train": {"Soci": {"Ap": {"70": {"GLOCAL": 0.456}}},
                                          "Soc": {"Ap": {"70": {"GLOCAL": 0.999}}}},
        "missing_labels_prediction_test": {},
        "cpu_seconds_missing_rho70": {"Society": {"GLOCAL": {"A": 44.0, "C": 1.0, "I": 20.0,
                                                             "R": 23.0}}},
    }
    path = tmp_path / "paper.json"
    path.write_text(json.dumps(paper))
    report = render_report(rows, path)

    lines = report.splitlines()
    ap_society = next(line for line in lines if line.startswith("| society | Ap ↑ | 1 |"))
    # Ap: higher is better, GLOCAL ahead on society and behind on social.
    assert ap_society.split(" | ")[4].endswith("•") and "0.123±0.004" in ap_society
    ap_social = next(line for line in lines if line.startswith("| social | Ap ↑ | 1 |"))
    assert ap_social.split(" | ")[4].endswith("∘")
    # Rkl: lower is better, so the same numbers give the opposite marks.
    rkl_society = next(line for line in lines if line.startswith("| society | Rkl ↓ | 1 |"))
    assert rkl_society.split(" | ")[4].endswith("∘")
    recovery = report.split("## Missing labels: recovery")[1].split("##")[0]
    assert "0.456" in recovery and "0.999" not in recovery
    assert "1 / 20 / 23 / 44" in report
    assert "Soci" not in render_report(rows)  # no paper columns without the tables


def test_quick_reproduction_on_enron(tmp_path):
    real("enron")
    run_reproduction(["enron"], methods=("GLOCAL", "BR"), observed_fractions=(1.0,),
                     n_repeats=1, data_dir=DATA_DIR, out_dir=tmp_path, quick=True, tune=False,
                     progress=lambda line: None)
    rows = read_results(tmp_path / "results.csv")
    assert sorted(row["method"] for row in rows) == ["BR", "GLOCAL"]
    for row in rows:
        assert all(math.isfinite(row[f"prediction_{m}"]) for m in MEASURES)
        assert 0 < row["prediction_ranking_loss"] < 0.5 < row["prediction_average_precision"]


def test_default_datasets_are_the_papers_found_in_the_data_directory(tmp_path):
    data = make_glocal_data(n_samples=90, random_state=0)
    dump_svmlight_file(data.X, data.Y, str(tmp_path / "health.svm"), multilabel=True)
    rows = run_reproduction(methods=("BR",), data_dir=tmp_path, out_dir=tmp_path / "out",
                            quick=True, progress=lambda line: None)
    assert [row["dataset"] for row in rows] == ["health"]
    with pytest.raises(FileNotFoundError, match="none of the paper's datasets"):
        run_reproduction(data_dir=tmp_path / "out", out_dir=tmp_path / "out2", quick=True,
                         progress=lambda line: None)
