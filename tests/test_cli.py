"""The `glocal` command: demo and reproduce."""

import pytest

from glocal.cli import main


def test_demo_runs(capsys):
    assert main(["demo"]) == 0
    assert "Ap" in capsys.readouterr().out


def test_reproduce_quick_on_synthetic_data(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["reproduce", "--quick", "--datasets", "synthetic", "--out", str(out)]) == 0
    assert (out / "results.csv").is_file() and (out / "report.md").is_file()
    assert "[3/3]" in capsys.readouterr().out


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


def test_reproduce_help(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["reproduce", "--help"])
    assert exit_info.value.code == 0
    assert "--paper-tables" in capsys.readouterr().out
