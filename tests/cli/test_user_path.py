"""What a new user meets on the way: the command line's messages and refusals, and the
docstrings that advise them. Uses the command and public names only (no fixture)."""

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from glocal.cli import main

REPO = Path(__file__).resolve().parents[2]
ARFF_HEADER = ("@relation 'd: -C 3'\n@attribute a {0,1}\n@attribute b {0,1}\n"
               "@attribute c {0,1}\n" + "".join(f"@attribute f{i} numeric\n" for i in range(4))
               + "@data\n")


def _arff(path, X, Y):
    rows = "\n".join(",".join([*map(str, Y[i]), *(f"{v:.4f}" for v in X[i])])
                     for i in range(len(X)))
    path.write_text(ARFF_HEADER + rows + "\n")


def _data(seed, n=60):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4)) + 1
    return X, (X[:, :3] > 1).astype(int)


@pytest.fixture
def arff_pair(tmp_path):
    """A train/test pair of ARFF files (labels a, b, c) and a paper model fitted on it."""
    X, Y = _data(0)
    _arff(tmp_path / "d-train.arff", X, Y)
    X_test, Y_test = _data(1, n=30)
    X_test[:2] = X[:2]  # two test rows repeat training rows, as public data sets do
    Y_test[:2] = Y[:2]
    _arff(tmp_path / "d-test.arff", X_test, Y_test)
    assert main(["fit", str(tmp_path / "d-train.arff"), "--model", str(tmp_path / "m.skops"),
                 "--paper", "--n-latent", "2"]) == 0
    return tmp_path


def test_predict_on_an_unlabeled_svmlight_file_under_a_model_with_named_labels(arff_pair,
                                                                               capsys):
    X, _ = _data(2, n=5)
    (arff_pair / "new.svm").write_text("".join(
        " " + " ".join(f"{j + 1}:{v:.3f}" for j, v in enumerate(row)) + "\n" for row in X))
    assert main(["predict", str(arff_pair / "m.skops"), str(arff_pair / "new.svm"),
                 "--out", str(arff_pair / "s.csv")]) == 0, capsys.readouterr().err
    assert (arff_pair / "s.csv").read_text().splitlines()[0] == "a,b,c"


def test_evaluate_names_the_file_it_scored_and_tells_duplicates_from_training_rows(
        arff_pair, capsys):
    capsys.readouterr()
    # The training file of a pair with --split test: its test split, the test file.
    assert main(["evaluate", str(arff_pair / "m.skops"), str(arff_pair / "d-train.arff"),
                 "--split", "test"]) == 0
    out, err = capsys.readouterr()
    first = out.splitlines()[0]
    assert str(arff_pair / "d-test.arff") in first and "d-train.arff" not in first, first
    # Two of its rows repeat training rows: said, but not as training scores.
    assert err == "" and "2 of them have the features of a training row" in first
    # The training file named is scored: training scores.
    assert main(["evaluate", str(arff_pair / "m.skops"), str(arff_pair / "d-train.arff")]) == 0
    out, err = capsys.readouterr()
    assert str(arff_pair / "d-train.arff") in out.splitlines()[0]
    assert "training scores" in err


@pytest.mark.parametrize("args", [["fit", "data.arff", "--model", "m.skops", "--jobs", "0"],
                                  ["demo", "--observed", "0"],
                                  ["predict", "m.skops", "d.arff", "--out", "s.csv",
                                   "--top-k", "0"]])
def test_a_bad_option_value_is_one_line(args):
    result = subprocess.run([sys.executable, "-m", "glocal", *args], capture_output=True,
                            text=True, timeout=120, check=False,
                            env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"glocal {args[0]}: error: argument "), lines
    assert f"see 'glocal {args[0]} --help'" in lines[0]


def test_reproduce_without_the_dataset_speaks_of_its_options(tmp_path, capsys):
    assert main(["reproduce", "--datasets", "nope", "--data-dir", str(tmp_path),
                 "--out", str(tmp_path / "out")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "No dataset named 'nope'" in line and "--data-dir" in line
    assert "data_dir=" not in line


def test_more_latent_labels_than_labels_is_refused(arff_pair, capsys):
    assert main(["fit", str(arff_pair / "d-train.arff"), "--model",
                 str(arff_pair / "big.skops"), "--paper", "--n-latent", "1000"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "--n-latent 1000 is more than the 3 labels" in line
    assert not (arff_pair / "big.skops").exists()


def test_reproduce_runs_the_recommended_model(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["reproduce", "--quick", "--datasets", "synthetic", "--methods",
                 "GLOCALCV,BR", "--rho", "0.3", "--out", str(out)]) == 0
    results = (out / "results.csv").read_text()
    assert ",GLOCALCV," in results and ",BR," in results
    assert "GLOCALCV" in (out / "report.md").read_text()


def test_lam_v_advice_is_the_default_search():
    from glocal import GLOCAL
    from glocal.model_selection import DEFAULT_PARAM_GRID

    advice = " ".join(GLOCAL.__doc__.split("lam_v : ")[1].split("normalize_rows :")[0].split())
    grid = re.search(r"lam2 tuned in \{([^}]*)\}", advice)
    assert grid, advice
    assert [float(v) for v in grid.group(1).split(",")] == DEFAULT_PARAM_GRID["lam2"]


def test_glocalcv_claims_what_the_study_measured():
    from glocal import GLOCALCV

    text = " ".join(GLOCALCV.__doc__.split())
    assert "with or without missing labels" not in text
    assert "best design measured in this library with missing labels" in text


def test_the_readme_test_command_runs_the_documentation_tests(monkeypatch):
    readme = (REPO / "README.md").read_text()
    extras = re.findall(r'pip install -e "\.\[([a-z,]+)\]" && (?:GLOCAL_DATA=\S+ )?'
                        r'python -m pytest -q', readme)
    assert extras and all("docs" in found.split(",") for found in extras), extras
    assert "apt-get install chromium" in readme
    # Without them, the documentation tests say what to install.
    import test_docs

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(test_docs, "IN_CI", False)
    with pytest.raises(pytest.skip.Exception, match=r"pip install -e '\.\[docs\]'"):
        test_docs._require("a_module_that_is_not_installed")
    monkeypatch.setenv("PATH", "")
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium"):
        test_docs._browser()
