"""`glocal.plotting`: every figure renders to a PNG of the expected size; saving is atomic."""

import subprocess
import sys

import matplotlib.image
import numpy as np
import pytest

from glocal import GLOCAL, GLOCALCV
from glocal.datasets import make_glocal_data
from glocal.metrics import evaluate
from glocal.plotting import (
    plot_convergence,
    label_correlations,
    plot_correlations,
    plot_measure_vs_observed,
    plot_sensitivity,
    save_figure,
    sensitivity,
)


@pytest.fixture(scope="module")
def data():
    return make_glocal_data(n_samples=150, n_features=12, n_labels=6, group_dim=4,
                            random_state=0)


@pytest.fixture(scope="module")
def model(data):
    return GLOCAL(n_latent=4, n_groups=3, random_state=0).fit(data.X, data.Y)


@pytest.fixture(scope="module")
def sensitivity_results(data):
    X, Y = data.X, data.Y
    return sensitivity(X[:100], Y[:100], X[100:], Y[100:], "g", [1, 2, 3], n_latent=4,
                       random_state=0)


def _measures(seed):
    rng = np.random.default_rng(seed)
    Y = (rng.random((30, 5)) < 0.4).astype(int)
    Y[:, 0] = 1  # every row has a positive label
    return evaluate(Y, rng.standard_normal(Y.shape))


def _rho_records():
    return [{"dataset": dataset, "method": method, "rho": rho, "repetition": rep,
             "prediction_average_precision": 0.5 + 0.3 * rho + 0.01 * rep,
             "recovery_ranking_loss": np.nan if rho == 1 else 0.3 - 0.1 * rho}
            for dataset in ("enron", "image") for method in ("GLOCAL", "BR")
            for rho in (0.3, 0.7, 1.0) for rep in range(3)]


FIGURES = {
    "correlations": lambda m, s: plot_correlations(m),
    "correlations_named": lambda m, s: plot_correlations(m, [f"label {i}" for i in range(6)]),
    "correlations_arrays": lambda m, s: plot_correlations(
        (np.eye(30), np.stack([np.eye(30)] * 7))),
    "correlations_beside_labels": lambda m, s: plot_correlations(m, labels=_training_labels()),
    "convergence": lambda m, s: plot_convergence(m),
    "convergence_many": lambda m, s: plot_convergence(
        {"fit": m, "values": [5.0, 3.0, 2.5]}, logy=True),
    "sensitivity": lambda m, s: plot_sensitivity(s, "g"),
    "sensitivity_mapping": lambda m, s: plot_sensitivity(
        {1e-3: [_measures(0), _measures(1)], 1e-1: _measures(2), 10.0: _measures(3)}, "lam3"),
    "measure_vs_observed": lambda m, s: plot_measure_vs_observed(
        [{"rho": rho, "average_precision": rho / 2} for rho in (0.1, 0.5, 1.0)]),
    "measures_vs_observed": lambda m, s: plot_measure_vs_observed(
        _rho_records(), ["prediction_average_precision", "recovery_ranking_loss"]),
}


@pytest.mark.parametrize("name", FIGURES)
def test_figure_renders_to_png_of_expected_size(name, model, sensitivity_results, tmp_path):
    fig = FIGURES[name](model, sensitivity_results)
    path = save_figure(fig, tmp_path / f"{name}.png")
    image = matplotlib.image.imread(path)
    width, height = fig.get_size_inches() * fig.dpi
    assert image.shape[:2] == (round(height), round(width))
    assert image[..., :3].std() > 0.05  # drawn, not blank


def test_sensitivity_records(sensitivity_results):
    assert [record["g"] for record in sensitivity_results] == [1, 2, 3]
    for record in sensitivity_results:
        assert set(record) == {"g", "ranking_loss", "coverage", "average_precision",
                               "label_auc", "instance_auc"}


def test_correlations_use_label_names_and_group_sizes(model):
    fig = plot_correlations(model, list("abcdef"))
    first = fig.axes[0]
    assert [t.get_text() for t in first.get_yticklabels()] == list("abcdef")
    sizes = np.bincount(model.groups_)
    assert [ax.get_title() for ax in fig.axes[1:4]] == [
        f"group {m + 1} ($n_m$={size})" for m, size in enumerate(sizes)]
    image = first.get_images()[0]
    assert image.get_clim() == (-1.0, 1.0)
    with pytest.raises(ValueError, match="5 label names for 6 labels"):
        plot_correlations(model, list("abcde"))


def _training_labels():
    return make_glocal_data(n_samples=150, n_features=12, n_labels=6, group_dim=4,
                            random_state=0).Y


def test_correlations_beside_the_labels_own(model, data):
    Y = data.Y.astype(float)
    Y[::7, 2] = np.nan  # a missing entry is left out of its pairs
    fig = plot_correlations(model, labels=Y)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles[0] == "model: global" and titles[4].startswith("labels: global\n")
    assert fig.get_suptitle() == ("Correlations of the model's label scores, above those of "
                                  "its training labels: global and per group")
    shown = fig.axes[4].get_images()[0].get_array()
    empirical, local = label_correlations(Y, model.groups_)
    np.testing.assert_allclose(shown.filled(np.nan), empirical)
    kept = ~np.isnan(Y[:, 2])
    np.testing.assert_allclose(empirical[2, 0], np.corrcoef(Y[kept, 2], Y[kept, 0])[0, 1])
    assert local.shape == (model.n_groups_, 6, 6)
    with pytest.raises(ValueError, match=r"labels has shape \(10, 6\); expected the model's"):
        plot_correlations(model, labels=Y[:10])


def test_the_figure_says_what_it_shows(model):
    """A model's matrices are its scores' correlations; given arrays, the figure does not
    guess what they are."""
    assert plot_correlations(model).get_suptitle() == (
        "Correlations of the model's label scores: global and per group")
    planted = (np.eye(4), np.stack([np.eye(4)] * 2))
    assert plot_correlations(planted).get_suptitle() == "Label correlations: global and per group"


def test_the_labels_panels_print_their_agreement_with_the_model(model, data):
    from scipy.stats import spearmanr

    Y = data.Y.astype(float)
    fig = plot_correlations(model, labels=Y)
    empirical, local = label_correlations(Y, model.groups_)
    learned = [model.global_correlation_, *model.local_correlations_]
    pairs = np.triu_indices(6, 1)
    for panel, ours, theirs in zip(fig.axes[4:8], learned, [empirical, *local]):
        a, b = ours[pairs], theirs[pairs]
        kept = np.isfinite(b)
        rho = spearmanr(a[kept], b[kept]).statistic
        same = np.mean(np.sign(a[kept]) == np.sign(b[kept]))
        lines = panel.get_title().splitlines()
        assert lines[1] == f"Spearman {rho:+.2f} over {kept.sum()} pairs", lines
        assert lines[2] == f"same sign on {same:.0%} of them", lines


def test_agreement_of_opposite_and_equal_matrices():
    from glocal.plotting import _agreement

    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (5, 5))
    a = (a + a.T) / 2
    np.fill_diagonal(a, 1.0)
    assert _agreement(a, a, False) == pytest.approx((1.0, 1.0, 10))
    assert _agreement(a, -a, False) == pytest.approx((-1.0, 0.0, 10))
    b = a.copy()
    b[0, :] = b[:, 0] = np.nan  # a constant label: its 4 pairs are undefined
    assert _agreement(a, b, False)[2] == 6
    assert _agreement(a, b, True)[2] == 12  # directed: both orders of a pair
    rho, same, n = _agreement(np.eye(2), np.eye(2), False)  # one pair: no ranking
    assert np.isnan(rho) and (same, n) == (1.0, 1)


def test_the_convergence_axis_names_the_objective_of_the_loss(model, data):
    hinge = GLOCAL(n_latent=4, loss="squared_hinge", max_iter=3, random_state=0).fit(
        data.X, data.Y)
    for source, label in [(model, "objective (Eq. (4))"),
                          (hinge, "objective (Eq. (4) with the squared hinge loss)"),
                          ({"a": model, "b": hinge}, "objective"),
                          ([3.0, 2.0], "objective")]:
        assert plot_convergence(source).axes[0].get_ylabel() == label


def test_correlations_of_a_search_are_its_refitted_model(data):
    search = GLOCALCV(GLOCAL(n_latent=3, n_groups=2), {"lam2": [4.0, 1.0]},
                      random_state=0).fit(data.X, data.Y)
    fig = plot_correlations(search)
    np.testing.assert_allclose(fig.axes[0].get_images()[0].get_array(),
                               search.best_estimator_.global_correlation_)
    with pytest.raises(ValueError, match="GLOCALCV with refit=True"):
        plot_correlations(GLOCALCV(refit=False))


def test_directed_correlations_are_drawn_on_zero_one(data):
    model = GLOCAL(n_latent=3, n_groups=2, lam3=0.1, correlation="asymmetric",
                   random_state=0).fit(data.X, data.Y)
    fig = plot_correlations(model, labels=data.Y)
    image = fig.axes[0].get_images()[0]
    assert image.get_clim() == (0.0, 1.0)
    np.testing.assert_allclose(image.get_array(), model.global_correlation_)
    directed, _ = label_correlations(data.Y, directed=True)  # P(j relevant | i relevant)
    Y = data.Y
    np.testing.assert_allclose(directed[0, 1], Y[Y[:, 0] == 1, 1].mean())
    np.testing.assert_allclose(fig.axes[3].get_images()[0].get_array(), directed)


def test_measure_vs_observed_names_missing_measures():
    with pytest.raises(ValueError, match=r"lack \['average_precision'\] \(their keys: "
                                         r"\['dataset', 'method', 'prediction_average"):
        plot_measure_vs_observed(_rho_records())


def test_plot_functions_save_when_given_a_path(model, tmp_path):
    path = tmp_path / "convergence.png"
    plot_convergence(model, path=path)
    assert path.stat().st_size > 0
    with pytest.raises(FileExistsError, match="overwrite=True"):
        plot_convergence(model, path=path)
    plot_convergence(model, path=path, overwrite=True)


def test_save_refuses_to_overwrite_and_leaves_no_temporary_files(model, tmp_path):
    path = tmp_path / "figure.png"
    path.write_bytes(b"keep me")
    with pytest.raises(FileExistsError):
        save_figure(plot_convergence(model), path)
    assert path.read_bytes() == b"keep me"
    save_figure(plot_convergence(model), path, overwrite=True)
    assert path.read_bytes().startswith(b"\x89PNG")
    assert [p.name for p in tmp_path.iterdir()] == ["figure.png"]


def test_failed_save_leaves_nothing_behind(model, tmp_path):
    with pytest.raises(ValueError, match="Format 'nosuchformat' is not supported"):
        save_figure(plot_convergence(model), tmp_path / "figure.nosuchformat")
    assert list(tmp_path.iterdir()) == []


def test_save_formats(model, tmp_path):
    fig = plot_convergence(model)
    assert save_figure(fig, tmp_path / "plain").read_bytes().startswith(b"\x89PNG")
    assert save_figure(fig, tmp_path / "figure.pdf").read_bytes().startswith(b"%PDF")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure.pdf", "plain"]


def test_import_glocal_does_not_import_matplotlib():
    code = "import glocal, glocal.plotting, sys; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "False"
