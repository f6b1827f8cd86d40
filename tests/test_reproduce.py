"""The reproduction workflow: results, report, resuming, on synthetic data (and Enron)."""

import json
import math
import warnings

import numpy as np
import pytest
from realdata import DATA_DIR, real
from sklearn.datasets import dump_svmlight_file

from glocal import GLOCAL
from glocal.baselines import MAXIDE
from glocal.cli import main
from glocal.datasets import make_glocal_data
from glocal.reproduce.results import scan_results
from glocal.reproduce import (
    FIELDS,
    MEASURES,
    METHODS,
    read_results,
    render_report,
    run_reproduction,
    runner,
)


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
                                 ("synthetic", 0, 0.3, "GLOCAL"), ("synthetic", 0, 0.3, "BR")]
    assert _run_keys(rows) == _run_keys(stored)
    for row in stored:
        assert row["n_train"] == 300 and 0 < row["n_test"] <= 200  # 500 rows, 60/40
        assert all(math.isfinite(row[f"prediction_{m}"]) for m in MEASURES)
        recovered = [math.isfinite(row[f"recovery_{m}"]) for m in MEASURES]
        assert all(recovered) if row["rho"] < 1 else not any(recovered)
        assert set(json.loads(row["params"])) == set(METHODS[row["method"]].param_grid)
        assert row["time_fit"] > 0 and not row["tune"] and row["quick"]
    glocal, br = stored[0], stored[1]
    assert all(glocal[f"time_{t}"] >= 0 for t in ("clustering", "init", "main"))
    assert math.isnan(br["time_main"])
    # GLOCAL and BR alone: no small-cluster design unless asked for.
    assert not any(row["small_clusters"] for row in stored)
    assert all(math.isnan(row[f"small_{m}"]) for row in stored for m in MEASURES)
    assert any(line.startswith("[4/4]") and "ETA" in line for line in lines)

    report = (tmp_path / "report.md").read_text()
    for title in ("## Full labels, test (rho = 1)",
                  "## Missing labels: recovery of the missing training labels",
                  "## Missing labels: prediction on test", "## Fit time"):
        assert title in report
    assert "## Small clusters" not in report
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
    original = runner._run

    def interrupted(*args):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(args[1:5])
        return original(*args)

    monkeypatch.setattr(runner, "_run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _quick(tmp_path, n_repeats=2)
    finished = read_results(tmp_path / "results.csv")
    assert len(finished) == 3
    # A crash while replacing a file leaves at most a stale temporary file behind.
    (tmp_path / "results.csv.tmp").write_text("half a row,")

    monkeypatch.setattr(runner, "_run", original)
    rows, lines = _quick(tmp_path, n_repeats=2)
    assert any(line.startswith("8 runs, 3 already in") for line in lines)
    stored = read_results(tmp_path / "results.csv")
    assert len(set(_run_keys(stored))) == len(stored) == 8
    assert stored[:3] == finished  # kept as they were, not recomputed
    assert _run_keys(stored) == _run_keys(rows)
    assert (tmp_path / "report.md").is_file()


def test_other_configuration_in_out_dir_is_refused(tmp_path):
    _quick(tmp_path)
    with pytest.raises(ValueError, match="another configuration"):
        _quick(tmp_path, random_state=1)
    # The small-cluster design changes GLOCAL's fits: it cannot join the runs without it.
    with pytest.raises(ValueError, match="another configuration"):
        _quick(tmp_path, small_clusters=True)
    with pytest.raises(ValueError, match="another configuration"):
        _quick(tmp_path, methods=("GLOCAL", "GLObal"))  # GLObal switches it on by default


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
    # The paper's order: BR before GLOCAL; a paper column for the methods of its table.
    header = _cells(next(line for line in lines if line.startswith("| dataset | measure")))
    assert header[3:] == ["BR", "GLOCAL", "paper BR", "paper GLOCAL"]
    br = header.index("BR")
    ap_society = next(line for line in lines if line.startswith("| society | Ap ↑ | 1 |"))
    # Ap: higher is better, GLOCAL ahead on society and behind on social.
    assert _cells(ap_society)[br].endswith("•") and "0.123±0.004" in ap_society
    ap_social = next(line for line in lines if line.startswith("| social | Ap ↑ | 1 |"))
    assert _cells(ap_social)[br].endswith("∘")
    assert not _cells(ap_social)[header.index("GLOCAL")].endswith(("•", "∘"))
    # Rkl: lower is better, so the same numbers give the opposite marks.
    rkl_society = next(line for line in lines if line.startswith("| society | Rkl ↓ | 1 |"))
    assert _cells(rkl_society)[br].endswith("∘")
    recovery = report.split("## Missing labels: recovery")[1].split("##")[0]
    assert "0.456" in recovery and "0.999" not in recovery
    assert "1 / 20 / – / 23 / 44" in report  # C / I / F / R / A, no F for GLOCAL
    assert "## Small clusters" not in report  # no run recorded them
    assert "Soci" not in render_report(rows)  # no paper columns without the tables


def _cells(line):
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_report_skips_missing_values_and_marks_small_clusters(tmp_path):
    rows = []
    for rep in range(4):
        for method, value in (("GLOCAL", 0.6), ("GLObal", 0.5), ("loCAL", 0.55)):
            bonus = 0.001 * rep ** 2 * (method == "GLOCAL")  # no constant differences
            row = _row("arts", rep, 1.0, method, value + 0.01 * rep + bonus)
            small = value + 0.02 * rep + bonus
            row.update({f"small_{m}": small for m in MEASURES},
                       small_clusters=True, small_n_test=7)
            rows.append(row)
    rows[-1]["small_average_precision"] = np.nan  # loCAL, repetition 3: not defined
    paper = {"small_clusters_full_labels_test": {
        "Art": {"Ap": {"GLOCAL": {"mean": 0.631, "std": 0.011}}}}}
    path = tmp_path / "paper.json"
    path.write_text(json.dumps(paper))
    report = render_report(rows, path)
    small = report.split("## Small clusters")[1].split("##")[0]
    header = _cells(next(line for line in small.splitlines() if line.startswith("| dataset")))
    assert header[3:] == ["GLObal", "loCAL", "GLOCAL", "paper GLObal", "paper loCAL",
                          "paper GLOCAL"]
    ap = _cells(next(line for line in small.splitlines() if "| Ap ↑ |" in line))
    assert ap[3] == "0.530±0.026•"  # GLObal: always at least 0.1 behind GLOCAL
    assert ap[4] == "0.570±0.020• (3 of 4)"  # loCAL: the NaN repetition left out, said
    assert ap[-1] == "0.631±0.011" and "7 test rows per run" in small
    # The summary counts the marks: every measure has GLOCAL ahead by the same margin, which
    # is better for Auc and Ap, worse for Rkl and Cvg (lower is better there).
    summary = report.split("## Summary")[1].split("##")[0]
    counts = {tuple(_cells(line)[:2]): _cells(line)[2:] for line in summary.splitlines()
              if line.startswith("| small") or line.startswith("| full")}
    assert counts == {(table, method): ["2", "0", "2"]
                      for table in ("full labels, test", "small clusters, test")
                      for method in ("GLObal", "loCAL")}


# A results.csv written before the small-cluster and fill-time columns existed, by
# ``run_reproduction(["synthetic"], quick=True, observed_fractions=(1.0, 0.7))``.
_OLD_RESULTS = """\
dataset,repetition,rho,method,seed,quick,tune,drop_unlabeled,n_train,n_test,params,\
prediction_ranking_loss,prediction_instance_auc,prediction_coverage,\
prediction_average_precision,prediction_label_auc,recovery_ranking_loss,\
recovery_instance_auc,recovery_coverage,recovery_average_precision,recovery_label_auc,\
time_clustering,time_init,time_main,time_fit,time_tuning
synthetic,0,1.0,GLOCAL,0,True,False,True,300,177,"{""lam2"": 4.0, ""n_latent"": 20}",\
0.10533584431889517,0.8946641556811048,4.604519774011299,0.8545866079411277,\
0.8776598817629188,,,,,,0.008121435000248312,0.009917989999848942,0.03233529799945245,\
0.05791506599962304,4.90999809699133e-07
synthetic,0,1.0,BR,0,True,False,True,300,177,"{""C"": 0.1}",0.09857580037664782,\
0.9014241996233522,4.536723163841808,0.871182542739746,0.8971919902757947,,,,,,,,,\
0.01906824100024096,6.209993443917483e-07
synthetic,0,0.7,GLOCAL,0,True,False,True,300,177,"{""lam2"": 4.0, ""n_latent"": 20}",\
0.1267066854990584,0.8732933145009417,4.937853107344632,0.8254317454882426,\
0.8562461835758689,0.09589575530586765,0.9041042446941323,0.9842931937172775,\
0.9162245491564862,0.8691233321179999,0.0015646110005036462,0.032095742999445065,\
0.05850301800001034,0.0958660329997656,4.3100044422317296e-07
"""


def test_results_of_the_old_format_are_read_rendered_and_resumed(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text(_OLD_RESULTS)
    old = read_results(path)
    assert _run_keys(old) == [("synthetic", 0, 1.0, "GLOCAL"), ("synthetic", 0, 1.0, "BR"),
                              ("synthetic", 0, 0.7, "GLOCAL")]
    assert set(old[0]) == set(FIELDS)
    assert not any(row["small_clusters"] for row in old)
    assert all(math.isnan(row["time_fill"]) and math.isnan(row["small_n_test"]) for row in old)
    assert old[2]["recovery_average_precision"] == 0.9162245491564862
    report = render_report(old, reproduce_paper_tables())
    for title in ("## Full labels", "## Missing labels: recovery", "## Missing labels: "
                  "prediction", "## Fit time"):
        assert title in report
    assert "| synthetic | Ap ↑ | 0.7 | 0.825 |" in report

    # The same configuration resumes the old file: nothing recomputed, new runs appended in
    # the new format (the old rows keep their values, their new columns empty).
    rows, lines = _quick(tmp_path, methods=("GLOCAL", "BR", "LEML"),
                         observed_fractions=(1.0, 0.7))
    assert any(line.startswith("6 runs, 3 already in") for line in lines)
    stored = read_results(path)
    assert all(_same(a, b) for a, b in zip(stored[:3], old))
    assert path.read_text().splitlines()[0] == ",".join(FIELDS)
    assert [row["method"] for row in stored[3:]] == ["LEML", "BR", "LEML"]

    # Other columns than this version knows: refused.
    path.write_text(_OLD_RESULTS.replace("time_tuning", "time_other"))
    with pytest.raises(ValueError, match="not a results file"):
        read_results(path)


def _same(a, b):
    """Rows equal, NaN equal to NaN."""
    return a.keys() == b.keys() and all(
        a[k] == b[k] or (isinstance(a[k], float) and math.isnan(a[k]) and math.isnan(b[k]))
        for k in a)


def reproduce_paper_tables():
    """The paper's tables beside the project, when present (the report works without)."""
    from glocal.cli._parser import _PAPER_TABLES

    return _PAPER_TABLES if _PAPER_TABLES.is_file() else None


def test_every_method_through_the_command_line(tmp_path, monkeypatch):
    # Spy on the groups the GLOCAL family gets and on MAXIDE filling the labels of the
    # two-stage methods.
    given_groups, fills = [], []
    glocal_fit, maxide_fill = GLOCAL.fit, MAXIDE.fill

    def spy_fit(self, X, Y, groups=None, **within_search):
        if "cache" not in within_search:  # not a fold of GLOCALCV's search
            given_groups.append((type(self).__name__, X.shape[0], groups))
        return glocal_fit(self, X, Y, groups=groups, **within_search)

    def spy_fill(self, Y, X=None):
        fills.append(np.isnan(Y).mean())
        return maxide_fill(self, Y, X)

    monkeypatch.setattr(GLOCAL, "fit", spy_fit)
    monkeypatch.setattr(MAXIDE, "fill", spy_fill)
    out = tmp_path / "out"
    assert main(["reproduce", "--quick", "--datasets", "synthetic", "--methods", "all",
                 "--out", str(out)]) == 0
    stored = read_results(out / "results.csv")

    full = {row["method"] for row in stored if row["rho"] == 1.0}
    missing = {row["method"] for row in stored if row["rho"] == 0.3}
    assert full == missing == set(METHODS) and len(stored) == len(METHODS) * 2
    # MBR and MMLLOC fill in the missing labels with MAXIDE at rho < 1 only, and time it.
    assert len(fills) == 2 and all(0.5 < share < 0.9 for share in fills)
    two_stage = [row for row in stored if row["method"] in ("MBR", "MMLLOC")]
    assert all(row["time_fill"] >= 0 and row["time_main"] > 0 for row in two_stage)
    by_key = {(row["method"], row["rho"]): row for row in stored}
    assert _same({k: v for k, v in by_key["MBR", 1.0].items() if k.startswith("prediction")},
                 {k: v for k, v in by_key["BR", 1.0].items() if k.startswith("prediction")})

    # Small clusters: on by default with GLObal and loCAL; the GLOCAL family was fitted on
    # the training part of one clustering of all rows, the same for every method.
    assert all(row["small_clusters"] for row in stored)
    assert sorted({name for name, _, _ in given_groups}) == ["GLOCAL", "GLObal", "loCAL"]
    assert all(groups is not None and len(groups) == n for _, n, groups in given_groups)
    first = given_groups[0][2]
    assert all(np.array_equal(groups, first) for _, _, groups in given_groups)
    assert len(np.unique(first)) > 4
    # The GLOCAL family records the correlation weights it tunes there; the others their grid.
    weights = {row["method"]: set(json.loads(row["params"])) for row in stored}
    assert weights["GLObal"] == {"lam3"} and weights["loCAL"] == {"lam4"}
    assert weights["GLOCAL"] == {"lam3", "lam4"} and weights["BR"] == {"C"}
    counts = {row["small_n_test"] for row in stored}
    assert len(counts) == 1 and 0 < counts.pop() < stored[0]["n_test"]
    assert all(math.isfinite(row["small_average_precision"]) for row in stored)

    report = (out / "report.md").read_text()
    for title in ("## Full labels, test (rho = 1)",
                  "## Missing labels: recovery of the missing training labels",
                  "## Missing labels: prediction on test", "## Small clusters",
                  "## Fit time"):
        assert title in report
    tables = {title.split("\n")[0]: title for title in report.split("## ")[1:]}
    small = next(text for title, text in tables.items() if title.startswith("Small"))
    header = _cells(next(line for line in small.splitlines() if line.startswith("| dataset")))
    ours = [name for name in header[3:] if not name.startswith("paper")]
    assert ours[:3] == ["GLObal", "loCAL", "BR"] and ours[-1] == "GLOCAL"
    recovery = next(text for title, text in tables.items() if "recovery" in title)
    assert "| BR |" in recovery and "MAXIDE" in recovery  # every method at rho < 1
    timing = next(text for title, text in tables.items() if title.startswith("Fit time"))
    assert all(f"| synthetic | {method} |" in timing for method in METHODS)


def test_method_names_resolve(tmp_path):
    assert runner._resolve_methods(["all"]) == list(METHODS)
    assert runner._resolve_methods("ALL") == list(METHODS)
    assert runner._resolve_methods(["mllrc", "ML-LRC", "global", "LOCAL", "glocal"]) == [
        "ML-LRC", "GLObal", "loCAL", "GLOCAL"]
    with pytest.raises(ValueError, match="unknown method 'NOPE'.*'all'"):
        runner._resolve_methods(["GLOCAL", "NOPE"])


def test_small_clusters_on_request_with_glocal_and_br(tmp_path):
    rows, _ = _quick(tmp_path, small_clusters=True, observed_fractions=(1.0,))
    assert [row["method"] for row in rows] == ["GLOCAL", "BR"]
    assert all(row["small_clusters"] and row["small_n_test"] > 0 for row in rows)
    assert all(math.isfinite(row[f"small_{m}"]) for row in rows
               for m in ("ranking_loss", "average_precision"))
    assert "## Small clusters" in (tmp_path / "report.md").read_text()


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
                            observed_fractions=(1.0,), quick=True, progress=lambda line: None)
    assert [row["dataset"] for row in rows] == ["health"]
    with pytest.raises(FileNotFoundError, match="none of the paper's datasets"):
        run_reproduction(data_dir=tmp_path / "out", out_dir=tmp_path / "out2", quick=True,
                         progress=lambda line: None)


@pytest.fixture(scope="module")
def sound_results(tmp_path_factory):
    """The text of a sound results.csv of four GLOCAL runs, and its rows."""
    out = tmp_path_factory.mktemp("sound")
    rows = run_reproduction(["synthetic"], methods=("GLOCAL",), n_repeats=2, out_dir=out,
                            quick=True, progress=lambda line: None)
    return (out / "results.csv").read_text(), rows


def _cut_in_params(line):
    return line[:line.index('""n_latent') + 5]


def _with_field(line, column, value):
    """A row of results.csv with the field ``column`` set to the text ``value``."""
    import csv
    import io

    fields = next(csv.reader([line]))
    fields[FIELDS.index(column)] = value
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerow(fields)
    return text.getvalue()


# Damage done to the lines of the file (line 1 is the header; lines 2-5 the four runs): the
# lines the reproduction must report, what it says, and the runs left intact.
_DAMAGE = {
    "last row cut mid-line": (lambda lines: lines[:4] + [lines[4][:100]], ["5"],
                              "cut short", 3),
    "last row cut inside its quoted params": (
        lambda lines: lines[:4] + [_cut_in_params(lines[4])], ["5"], "cut short", 3),
    "row cut mid-line": (lambda lines: lines[:2] + [lines[2][:100] + "\n"] + lines[3:], ["3"],
                         f"fields for {len(FIELDS)} columns", 3),
    # The open quote takes in the next line: two runs lost.
    "row cut inside its quoted params": (
        lambda lines: lines[:2] + [_cut_in_params(lines[2]) + "\n"] + lines[3:], ["3-4"],
        "damaged row", 2),
    "row of one field": (lambda lines: lines[:3] + ["synthetic\n"] + lines[3:], ["4"],
                         f"1 fields for {len(FIELDS)} columns", 4),
    "garbage line": (lambda lines: lines[:3] + ["%%& not ; a row\n"] + lines[3:], ["4"],
                     "1 fields", 4),
    "field that does not parse": (
        lambda lines: lines[:3] + [lines[3].replace(",1,1.0,", ",one,1.0,")] + lines[4:],
        ["4"], "repetition is 'one', not an integer", 3),
    "duplicated row": (lambda lines: lines + [lines[2]], ["3", "6"], "recorded 2 times", 3),
    # A run without one of its test measures did not finish: its cell would show the other
    # repetition alone.
    "measure that is NaN": (
        lambda lines: lines[:2] + [_with_field(lines[2], "prediction_average_precision",
                                               "nan")] + lines[3:],
        ["3"], "prediction_average_precision is nan, not the measure of a finished run", 3),
    "measure left empty": (
        lambda lines: lines[:4] + [_with_field(lines[4], "prediction_ranking_loss", "")],
        ["5"], "prediction_ranking_loss is nan", 3),
}


@pytest.mark.parametrize("damage", list(_DAMAGE))
def test_damaged_or_duplicated_rows_are_reported_and_run_again(tmp_path, sound_results,
                                                                damage):
    text, sound = sound_results
    edit, where, message, intact = _DAMAGE[damage]
    path = tmp_path / "results.csv"
    path.write_text("".join(edit(text.splitlines(keepends=True))))

    with pytest.warns(UserWarning) as warned:
        kept = read_results(path)
    assert [_line(str(w.message), path) for w in warned] == where
    assert message in str(warned[0].message)
    assert len(set(_run_keys(kept))) == len(kept) == intact

    lines = []
    rows = run_reproduction(["synthetic"], methods=("GLOCAL",), n_repeats=2,
                            out_dir=tmp_path, quick=True, progress=lines.append)
    reported = [line for line in lines if line.endswith("not counted as done")]
    assert [_line(line, path) for line in reported] == where and message in reported[0]
    assert any(line.startswith(f"4 runs, {intact} already in") for line in lines)
    # Every run is in the file once, with the values of the sound runs (GLOCAL is
    # deterministic), and the file reads without a warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stored = read_results(path)
    assert sorted(_run_keys(stored)) == sorted(_run_keys(sound)) == sorted(_run_keys(rows))
    by_key = {key: row for key, row in zip(_run_keys(sound), sound)}
    for key, row in zip(_run_keys(stored), stored):
        assert [row[f"prediction_{m}"] for m in MEASURES] == [
            by_key[key][f"prediction_{m}"] for m in MEASURES]


def _line(message, path):
    """The line of ``path`` that a message starting "<path>:<line>: " names."""
    assert message.startswith(f"{path}:")
    return message[len(str(path)) + 1:].split(":")[0]


@pytest.mark.parametrize("content, reason", [
    (b"", "missing dataset"),
    (b"hello, world\n1, 2\n", "missing dataset"),
    (b"\xff\xfe\x00\x81 binary", "not UTF-8"),
    (_OLD_RESULTS.replace("time_tuning", "time_other").encode(), "unknown time_other"),
], ids=["empty", "other csv", "binary", "other column"])
def test_a_file_that_is_not_a_results_file_is_a_one_line_error(tmp_path, capsys, content,
                                                                 reason):
    path = tmp_path / "results.csv"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="not a results file") as error:
        read_results(path)
    assert str(path) in str(error.value) and reason in str(error.value)
    assert "\n" not in str(error.value) and len(str(error.value)) < 200 + len(str(path))
    assert main(["reproduce", "--quick", "--datasets", "synthetic", "--out",
                 str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: not a results file" in err
    assert path.read_bytes() == content  # left as it was


def _start(*args):
    """`python -m glocal ARGS` started in a new process (this checkout's package)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": repo, "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.slow  # two reproductions, each in its own process
def test_two_reproductions_into_one_directory_lose_and_repeat_no_row(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    stale = out / ".results.csv.0123abcd.tmp"  # what a crash while replacing leaves
    stale.write_text("half a row,")
    common = ["-m", "glocal", "reproduce", "--quick", "--datasets", "synthetic",
              "--rho", "1,0.5,0.3", "--out", str(out)]
    # Different methods, and one in common (BR), which is recorded once.
    runs = [_start(*common, "--methods", "GLOCAL,BR"), _start(*common, "--methods", "BR,LEML")]
    for run in runs:
        stdout, stderr = run.communicate(timeout=600)
        assert run.returncode == 0, stderr
    stored = read_results(out / "results.csv")
    expected = {("synthetic", 0, rho, method) for rho in (1.0, 0.5, 0.3)
                for method in ("GLOCAL", "BR", "LEML")}
    assert len(stored) == len(set(_run_keys(stored))) == 9
    assert set(_run_keys(stored)) == expected
    assert not stale.exists()
    # The report of the reproduction that finished last holds every run.
    assert "| synthetic | Ap ↑ | 1 |" in (out / "report.md").read_text()


@pytest.mark.slow  # three new interpreters
def test_appends_from_many_processes_at_once_keep_every_row(tmp_path):
    """Three processes append 25 rows each (5 of them the same runs) as fast as they can."""
    path = tmp_path / "results.csv"
    script = (
        "import sys\n"
        "from glocal.reproduce.results import FIELDS, ResultsFile, results_lock\n"
        "me = int(sys.argv[1])\n"
        "for i in range(25):\n"
        "    row = dict.fromkeys(FIELDS, 0.5)\n"
        "    row.update(dataset='d', repetition=me * 100 + i if i >= 5 else i, rho=1.0,\n"
        "               method='BR', seed=0, quick=True, tune=False, drop_unlabeled=True,\n"
        "               small_clusters=False, n_train=6, n_test=4, params='{}')\n"
        "    with results_lock(sys.argv[2]):\n"
        "        ResultsFile(sys.argv[2]).append(row)\n")
    runs = [_start("-c", script, str(me), str(path)) for me in range(3)]
    for run in runs:
        assert run.wait(timeout=300) == 0, run.stderr.read()
    rows, problems = scan_results(path)
    assert not problems and len(rows) == 5 + 3 * 20


def test_a_field_over_the_csv_limit_is_one_line_naming_the_file(tmp_path, capsys,
                                                                sound_results):
    text, _ = sound_results
    header, first, *rest = text.splitlines(keepends=True)
    path = tmp_path / "results.csv"
    path.write_text(header + first.replace("{", "{" + " " * 140_000, 1) + "".join(rest))
    for argv in (["reproduce", "--quick", "--datasets", "synthetic", "--out", str(tmp_path)],
                 ["plot", "--results", str(path), "--out", str(tmp_path / "figures")]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{path}:2: not a results file" in err, err


def test_a_byte_order_mark_is_read_as_spreadsheets_write_it(tmp_path, sound_results):
    text, rows = sound_results
    path = tmp_path / "results.csv"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert _run_keys(read_results(path)) == _run_keys(rows)


def test_a_linked_results_file_stays_a_link_when_rewritten(tmp_path, sound_results):
    text, rows = sound_results
    target, out = tmp_path / "kept" / "results.csv", tmp_path / "out"
    target.parent.mkdir(), out.mkdir()
    target.write_text(text + "synthetic,0,cut")  # a cut last line: the file is rewritten
    (out / "results.csv").symlink_to(target)
    run_reproduction(["synthetic"], methods=("GLOCAL",), n_repeats=2, out_dir=out,
                     quick=True, progress=lambda line: None)
    assert (out / "results.csv").is_symlink()
    assert _run_keys(read_results(target)) == _run_keys(rows)


def test_text_cells_that_look_like_formulas_are_neutralised_and_read_back(tmp_path):
    from glocal.reproduce.results import write_results

    names = ["=HYPERLINK(\"http://x\")", "+1", "-cmd|' /C calc'!A0", "@SUM(A1)", "'quoted"]
    path = tmp_path / "results.csv"
    write_results(path, [{**_row(name, 0, 1.0, "GLOCAL", 0.5), "small_clusters": False}
                         for name in names])
    cells = [line.split(",")[0] for line in path.read_text().splitlines()[1:]]
    assert all(cell.lstrip('"').startswith("'") for cell in cells), cells
    assert [row["dataset"] for row in read_results(path)] == names


def test_resuming_reads_the_results_file_once(tmp_path, monkeypatch, sound_results):
    """Against a file of many other runs, resuming parses each of its rows about once (not
    once per run): time linear in the file's size."""
    from glocal.reproduce import results

    text, rows = sound_results
    header, *lines = text.splitlines(keepends=True)
    others = [line.replace("synthetic", f"other{i}", 1) for i in range(250) for line in lines]
    (tmp_path / "results.csv").write_text(header + "".join(others))
    parsed = []
    parse = results._parse_row
    monkeypatch.setattr(results, "_parse_row", lambda *a: parsed.append(1) or parse(*a))
    run_reproduction(["synthetic"], methods=("GLOCAL",), n_repeats=2, out_dir=tmp_path,
                     quick=True, progress=lambda line: None)
    assert len(others) <= len(parsed) <= len(others) + 20, len(parsed)
