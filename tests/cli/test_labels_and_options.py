"""The command line with missing labels, the rows it scores, and its option values: `fit`
reads missing labels and hides some with --observed, `evaluate` scores the observed entries
and the file it is given, options are checked before any work."""

from types import SimpleNamespace

import numpy as np
import pytest
from datafiles import _arff, thresholded_rows

from glocal.cli import main
from glocal.cli._fit import _edge_hint
from glocal.protocol import sample_observed


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """A MEKA ARFF file with complete labels and the same file with half of them '?'."""
    tmp = tmp_path_factory.mktemp("missing")
    X, Y = thresholded_rows(120)
    hidden = sample_observed(Y, 0.5, random_state=0)
    _arff(tmp / "full.arff", X, Y)
    _arff(tmp / "missing.arff", X, hidden)
    return SimpleNamespace(tmp=tmp, X=X, Y=Y, hidden=hidden)


def _scores(model, X):
    from glocal.persistence import load_model

    return load_model(model).decision_function(X)


def test_fit_reads_question_marks_as_unobserved_labels(labelled, capsys):
    from glocal import GLOCAL

    model = labelled.tmp / "paper.skops"
    assert main(["fit", str(labelled.tmp / "missing.arff"), "--model", str(model), "--paper",
                 "--n-latent", "2", "--force"]) == 0
    out = capsys.readouterr().out
    n_observed = int(np.count_nonzero(~np.isnan(labelled.hidden)))
    assert (f"({n_observed} of 360 label entries observed; the missing ones are left out of "
            "the fit)") in out
    # The same fit as the Python API's on the labels with NaN where the file has '?' (on
    # the features as the file rounds them).
    X = np.round(labelled.X, 4)
    python = GLOCAL(n_latent=2, lam2=4.0, random_state=0).fit(X, labelled.hidden)
    np.testing.assert_allclose(_scores(model, X), python.decision_function(X), atol=1e-10)


def test_observed_hides_labels_as_the_python_protocol(labelled, capsys):
    tmp = labelled.tmp
    assert main(["fit", str(tmp / "full.arff"), "--model", str(tmp / "hidden.skops"),
                 "--observed", "0.5", "--seed", "0", "--paper", "--n-latent", "2",
                 "--force"]) == 0
    assert "the others hidden by --observed)" in capsys.readouterr().out
    # --observed 0.5 --seed 0 hides the entries sample_observed(Y, 0.5, random_state=0)
    # hides: the model is that of the file with those entries '?'.
    assert main(["fit", str(tmp / "missing.arff"), "--model", str(tmp / "file.skops"),
                 "--paper", "--n-latent", "2", "--force"]) == 0
    np.testing.assert_allclose(_scores(tmp / "hidden.skops", labelled.X),
                               _scores(tmp / "file.skops", labelled.X), atol=1e-12)
    # Another seed hides other entries.
    assert main(["fit", str(tmp / "full.arff"), "--model", str(tmp / "seed1.skops"),
                 "--observed", "0.5", "--seed", "1", "--paper", "--n-latent", "2",
                 "--force"]) == 0
    assert not np.allclose(_scores(tmp / "seed1.skops", labelled.X),
                           _scores(tmp / "file.skops", labelled.X), atol=1e-6)


def test_plot_draws_the_labels_the_observed_fit_saw(labelled, monkeypatch, capsys):
    import glocal.plotting

    tmp = labelled.tmp
    assert main(["fit", str(tmp / "full.arff"), "--model", str(tmp / "seed1.skops"),
                 "--observed", "0.5", "--seed", "1", "--paper", "--n-latent", "2",
                 "--force"]) == 0
    drawn = []
    monkeypatch.setattr(glocal.plotting, "plot_correlations",
                        lambda model, names, labels=None, **kw: drawn.append(labels))
    capsys.readouterr()
    assert main(["plot", "--model", str(tmp / "seed1.skops"), "--data", str(tmp / "full.arff"),
                 "--out", str(tmp / "figures"), "--force"]) == 0
    assert "its labels as the fit saw them" in capsys.readouterr().out
    # The entries --observed 0.5 --seed 1 hid are hidden again, not the file's full labels.
    np.testing.assert_array_equal(drawn[0], sample_observed(labelled.Y, 0.5, random_state=1))


@pytest.mark.parametrize("args, message", [
    (["missing.arff", "--observed", "0.5"], "--observed hides labels of complete data, but "),
    (["full.arff", "--observed", "0"], "argument --observed: must be in (0, 1], got 0.0"),
    (["full.arff", "--observed", "1.5"], "argument --observed: must be in (0, 1]"),
    (["full.arff", "--lam2", "0"], "argument --lam2: must be above 0, got 0"),
    (["full.arff", "--lam2", "4", "-1"], "argument --lam2: must be above 0, got -1"),
    (["full.arff", "--lam2", "nan"], "argument --lam2: must be a finite number"),
    (["full.arff", "--lam2", "4", "2", "--paper"], "--lam2 takes one value with --paper"),
    (["full.arff", "--lam3", "-0.1"], "argument --lam3: must be at least 0"),
    (["full.arff", "--lam4", "x"], "argument --lam4: not a number: 'x'"),
    (["full.arff", "--tol", "-1"], "argument --tol: must be at least 0"),
    (["full.arff", "--n-groups", "0"], "argument --n-groups: must be at least 1"),
    (["full.arff", "--n-latent", "0"], "argument --n-latent: must be at least 1"),
    (["full.arff", "--max-iter", "-1"], "argument --max-iter: must be at least 0"),
])
def test_bad_fit_options_are_one_line_before_fitting(labelled, capsys, args, message):
    """Named as the option, before "fitting ..." is printed and before any model is saved."""
    model = labelled.tmp / "never.skops"
    try:
        code = main(["fit", str(labelled.tmp / args[0]), "--model", str(model), *args[1:]])
    except SystemExit as stop:  # argparse's errors
        code = stop.code
    assert code == 2
    out, err = capsys.readouterr()
    assert out == "" and not model.exists()
    assert len(err.strip().splitlines()) == 1 and message in err, err


def test_evaluate_scores_the_observed_entries_and_says_so(labelled, capsys):
    from glocal.metrics import evaluate_masked

    tmp = labelled.tmp
    model = tmp / "eval.skops"
    assert main(["fit", str(tmp / "full.arff"), "--model", str(model), "--paper",
                 "--n-latent", "2", "--force"]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(model), str(tmp / "missing.arff"), "--per-label"]) == 0
    lines = capsys.readouterr().out.splitlines()
    Y = labelled.hidden
    keep = (Y == 1).any(axis=1)  # rows with an observed positive
    assert f"{keep.sum()} rows of " in lines[0]
    assert f"dropped {(~keep).sum()} rows without an observed positive label" in lines[0]
    assert lines[1] == (f"missing labels: {np.isnan(Y[keep]).sum()} of {Y[keep].size} label "
                        "entries; every measure below is of the observed entries only (P@k "
                        "and nDCG, which need every label, are left out)")
    printed = {line.split()[-2]: float(line.split()[-1]) for line in lines[2:7]}
    expected = evaluate_masked(Y[keep], _scores(model, labelled.X[keep]), ~np.isnan(Y[keep]))
    for name in ("ranking_loss", "instance_auc", "coverage", "average_precision"):
        assert printed[name] == pytest.approx(expected[name], abs=5e-5)
    assert not any(line.startswith(("P@", "nDCG")) for line in lines)
    # Supports count observed positives only.
    support = {line.split()[0]: int(line.split()[1]) for line in lines[-3:]}
    assert support == {name: int((Y[keep][:, j] == 1).sum()) for j, name in enumerate("abc")}
    # With every label observed: no such line, and the top-k measures are there.
    assert main(["evaluate", str(model), str(tmp / "full.arff")]) == 0
    out = capsys.readouterr().out
    assert "missing labels" not in out and "P@1" in out and "nDCG@3" in out


def test_evaluate_and_predict_score_the_file_named(labelled, capsys):
    """Of a train/test pair, the training file named is scored, not its test file."""
    tmp = labelled.tmp / "pair"
    tmp.mkdir()
    X, Y = labelled.X, labelled.Y
    _arff(tmp / "d-train.arff", X[:70], Y[:70])
    _arff(tmp / "d-test.arff", X[70:], Y[70:])
    model = tmp / "m.skops"
    assert main(["fit", str(tmp / "d-train.arff"), "--model", str(model), "--paper",
                 "--n-latent", "2"]) == 0
    capsys.readouterr()
    for data, split, rows in (("d-train.arff", [], 70), ("d-test.arff", [], 50),
                              ("d-train.arff", ["--split", "test"], 50), (".", [], 50)):
        assert main(["evaluate", str(model), str(tmp / data), "--keep-unlabeled",
                     *split]) == 0
        first = capsys.readouterr().out.splitlines()[0]
        named = "d-train.arff" if rows == 70 else "d-test.arff"
        assert first.startswith(f"{rows} rows of ") and first.endswith(named), first
        out = tmp / f"{data}-{rows}.csv"
        assert main(["predict", str(model), str(tmp / data), "--out", str(out), *split]) == 0
        assert len(out.read_text().splitlines()) == rows + 1
        capsys.readouterr()


@pytest.mark.parametrize("options", [["--top-k", "2", "--labels"], ["--labels", "--top-k", "2"]])
def test_predict_refuses_top_k_with_labels(labelled, capsys, options):
    tmp = labelled.tmp
    assert main(["fit", str(tmp / "full.arff"), "--model", str(tmp / "p.skops"), "--paper",
                 "--n-latent", "2", "--force"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["predict", str(tmp / "p.skops"), str(tmp / "full.arff"), "--out",
              str(tmp / "p.csv"), *options])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ": not allowed with argument --" in err[0], err
    assert "--top-k" in err[0] and "--labels" in err[0]
    assert not (tmp / "p.csv").exists()


def test_fit_searches_several_lam2_values_and_says_what_it_ran(labelled, capsys):
    tmp = labelled.tmp
    assert main(["fit", str(tmp / "full.arff"), "--model", str(tmp / "grid.skops"),
                 "--lam2", "2", "1", "2", "--no-normalize-rows", "--cv-folds", "2",
                 "--verbose", "--force"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "cross-validating 2 settings (lam2=[2.0, 1.0]) on 2 folds" in lines[0]
    # Both values are the grid's edges: the pick is one of them, and the hint names it.
    from glocal.persistence import load_model

    best = load_model(tmp / "grid.skops").best_params_["lam2"]
    side = "smallest" if best == 1 else "largest"
    assert lines[-1].startswith(f"hint: lam2={best:g} is the {side} value searched")
    assert lines[-1].endswith(f"--lam2 {best:g} {best / 2:g} {best / 4:g}" if best == 1
                              else f"--lam2 {best:g} {2 * best:g} {4 * best:g}")
    # Every fit line says what its two counts are.
    fits = [line for line in lines if line.startswith(("[GLOCALCV] fold",
                                                       "[GLOCALCV] refitted"))]
    assert len(fits) == 5  # 2 settings on 2 folds, and the refit
    for line in fits:
        assert " initialisation round" in line and " outer iteration" in line, line
        assert " + " not in line


@pytest.mark.parametrize("grid, best, hint", [
    ([16.0, 4.0, 2.0, 1.0], 1.0, "lam2=1 is the smallest value searched, so a value beyond "
                                 "it may fit better; search further with --lam2 1 0.5 0.25"),
    ([16.0, 4.0, 2.0, 1.0], 16.0, "lam2=16 is the largest value searched, so a value beyond "
                                  "it may fit better; search further with --lam2 16 32 64"),
    ([16.0, 4.0, 2.0, 1.0], 4.0, None),
    ([4.0], 4.0, None),
])
def test_edge_hint_only_at_the_edge_of_the_grid(capsys, grid, best, hint):
    _edge_hint(SimpleNamespace(param_grid={"lam2": grid, "normalize_rows": [False]},
                               best_params_={"lam2": best, "normalize_rows": False}))
    out = capsys.readouterr().out
    assert out == ("" if hint is None else f"hint: {hint}\n")


def test_predict_writes_probabilities(labelled, capsys):
    """--proba writes ``predict_proba`` of the saved model: GLOCALCV's calibrated
    probabilities, or the logistic loss's own; a model without probabilities is one line."""
    from glocal import GLOCAL, GLOCALCV
    from glocal.persistence import load_model, save_model

    tmp = labelled.tmp
    X = np.round(labelled.X, 4)  # as the file holds them
    search = GLOCALCV(GLOCAL(n_latent=2, max_iter=5), {"lam2": [4.0, 1.0]}, cv=2,
                      random_state=0).fit(X, labelled.hidden)
    save_model(tmp / "search.skops", search, label_names=["a", "b", "c"])
    assert main(["fit", str(tmp / "full.arff"), "--model", str(tmp / "logistic.skops"),
                 "--paper", "--loss", "logistic", "--n-latent", "2", "--force"]) == 0
    for name in ("search", "logistic"):
        out = tmp / f"{name}.csv"
        capsys.readouterr()
        assert main(["predict", str(tmp / f"{name}.skops"), str(tmp / "full.arff"), "--out",
                     str(out), "--proba", "--force"]) == 0
        assert capsys.readouterr().out == (f"wrote probabilities of 120 rows x 3 labels to "
                                           f"{out}\n")
        lines = out.read_text().splitlines()
        assert lines[0] == "a,b,c"
        written = np.array([[float(cell) for cell in line.split(",")] for line in lines[1:]])
        np.testing.assert_array_equal(written, load_model(tmp / f"{name}.skops")
                                      .predict_proba(X))
        assert 0 < written.min() and written.max() < 1
    # The paper's model (the squared loss) gives scores only.
    assert main(["fit", str(tmp / "full.arff"), "--model", str(tmp / "paper.skops"), "--paper",
                 "--n-latent", "2", "--force"]) == 0
    capsys.readouterr()
    assert main(["predict", str(tmp / "paper.skops"), str(tmp / "full.arff"), "--out",
                 str(tmp / "never.csv"), "--proba"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--proba: this model gives no probabilities" in err[0], err
    assert "needs loss='logistic'" in err[0] and not (tmp / "never.csv").exists()


def test_predict_refuses_proba_with_labels(labelled, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["predict", str(labelled.tmp / "p.skops"), str(labelled.tmp / "full.arff"),
              "--out", str(labelled.tmp / "p.csv"), "--proba", "--labels"])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--proba" in err[0] and "not allowed with argument" in err[0]
