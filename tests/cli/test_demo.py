"""`glocal demo`: its data follow GLOCAL's premise and its last sentence reads its table."""

import numpy as np
import pytest

from glocal.cli import main
from glocal.cli._demo import DEMO_DATA, MEASURES, demo_data, read_table
from glocal.datasets import make_glocal_data


def test_demo_labels_are_noisy_copies_of_a_low_rank_matrix():
    data = demo_data(0)
    clean = make_glocal_data(**{**DEMO_DATA, "label_noise": 0.0}, random_state=0)
    np.testing.assert_array_equal(data.X, clean.X)  # the noise touches the labels only
    assert data.Y.shape[1] == 30
    assert np.linalg.matrix_rank(clean.Y) == 6  # six latent labels behind thirty
    assert abs(np.mean(data.Y != clean.Y) - 0.05) < 0.01


def _scores(rkl, auc, cvg, ap):
    return dict(zip([key for key, *_ in MEASURES], [rkl, auc, cvg, ap]))


def test_read_table_names_the_winner_its_lead_and_glocalcv_against_br():
    table = {0.3: {"BR": _scores(0.24, 0.76, 21.6, 0.66371),
                   "GLOCAL()": _scores(0.20, 0.80, 19.5, 0.70914),
                   "GLOCALCV()": _scores(0.21, 0.79, 22.0, 0.69440)},
             1.0: {"BR": _scores(0.18, 0.82, 19.4, 0.73352),
                   "GLOCAL()": _scores(0.19, 0.81, 19.2, 0.73211),
                   "GLOCALCV()": _scores(0.18, 0.81, 19.4, 0.73090)}}
    assert read_table(table) == (
        "Reading the table: with 30% of the labels observed, GLOCAL() has the best Ap "
        "(0.7091, 0.0147 above GLOCALCV()), and GLOCALCV()'s Ap is 0.0307 above BR's "
        "(better on 3 of the 4 measures); with 100% of the labels observed, BR has the best "
        "Ap (0.7335, 0.0014 above GLOCAL()), and GLOCALCV()'s Ap is 0.0026 below BR's "
        "(better on 0 of the 4 measures).")


def test_read_table_compares_values_as_printed():
    # 0.70001 and 0.69996 both print as 0.7000: a tie, not a win.
    table = {0.5: {"BR": _scores(0.1, 0.9, 3.0, 0.69996),
                   "GLOCALCV()": _scores(0.1, 0.9, 3.0, 0.70001)}}
    assert read_table(table) == (
        "Reading the table: with 50% of the labels observed, BR and GLOCALCV() tie on Ap "
        "(0.7000), and GLOCALCV()'s Ap is equal to BR's (better on 0 of the 4 measures).")


def test_the_demo_sentence_reads_the_printed_table(capsys):
    assert main(["demo", "--observed", "0.3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split()[0]: [float(v) for v in line.split()[1:5]] for line in lines
            if line.split()[:1] in (["BR"], ["GLOCAL()"], ["GLOCALCV()"])}
    assert list(rows) == ["BR", "GLOCAL()", "GLOCALCV()"]
    assert lines[-1] == read_table({0.3: {name: _scores(*row) for name, row in rows.items()}})
    assert "30 labels that are noisy copies of 6 latent labels" in lines[0]


@pytest.mark.parametrize("field", ["n_labels", "cluster_size", "n_shared_clusters",
                                   "label_noise"])
def test_demo_data_docstring_states_its_parameters(field):
    assert f"{field}={DEMO_DATA[field]}" in demo_data.__doc__
