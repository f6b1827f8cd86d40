"""`glocal inspect`: a saved model's class and settings, its search's table, its fit, and the
top features of every label."""

import numpy as np
import pytest
from datafiles import _arff, thresholded_rows
from estimators import capped_fits

from glocal import GLOCAL
from glocal._utils.progress import settings_text
from glocal.cli import main
from glocal.persistence import load_model, save_model


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The recommended model and the paper's, fitted by `glocal fit` on an ARFF file whose
    features are named f1 to f4."""
    tmp = tmp_path_factory.mktemp("inspect")
    X, Y = thresholded_rows(90)
    _arff(tmp / "train.arff", X, Y)
    assert main(["fit", str(tmp / "train.arff"), "--model", str(tmp / "cv.skops"),
                 "--cv-folds", "2"]) == 0
    assert main(["fit", str(tmp / "train.arff"), "--model", str(tmp / "paper.skops"),
                 "--paper", "--n-latent", "2"]) == 0
    return tmp


def _inspected(capsys, *args):
    capsys.readouterr()
    assert main(["inspect", *map(str, args)]) == 0
    return capsys.readouterr().out.splitlines()


def _top_features(lines, labels):
    """{label: [(feature, weight), ...]} from the lines after the top-features header."""
    start = next(i for i, line in enumerate(lines) if line.startswith("top ")) + 1
    shown = {}
    for line in lines[start:start + len(labels)]:
        label, _, rest = line.strip().partition("  ")
        shown[label] = [(item.rsplit(" ", 1)[0], float(item.rsplit(" ", 1)[1]))
                        for item in rest.strip().split(", ")]
    assert list(shown) == labels
    return shown


def _check_top(shown, coef, names, top):
    for (label, items), weights in zip(shown.items(), coef):
        order = np.argsort(-np.abs(weights), kind="stable")[:top]
        assert [name for name, _ in items] == [names[i] for i in order], label
        np.testing.assert_allclose([value for _, value in items], weights[order], rtol=1e-3)


def test_a_search_shows_its_table_its_pick_and_its_fit(models, capsys):
    search = load_model(models / "cv.skops")
    lines = _inspected(capsys, models / "cv.skops", "--top", "2")
    assert lines[0] == "GLOCALCV, saved by glocal 0.1.0: 4 features, 3 labels, fitted on 90 rows"
    assert lines[1].startswith("settings: cv=2,") and "thresholds=cv" in lines[1]
    assert lines[2].startswith("refitted model: GLOCAL(") and "loss=squared_hinge" in lines[2]
    results = search.cv_results_
    rows = [line for line in lines if line[2:].startswith("lam2=")]
    assert len(rows) == len(results["params"]) == 8
    for line, params, mean, std in zip(rows, results["params"], results["mean_test_score"],
                                       results["std_test_score"]):
        picked = params == search.best_params_
        assert line.startswith("* " if picked else "  ")
        assert line[2:].startswith(settings_text(params) + " ")
        assert line.split()[-3:-1] == [f"{mean:.4f}", f"{std:.4f}"]
    assert sum(line.startswith("* ") for line in rows) == 1
    best = search.best_estimator_
    fit = next(line for line in lines if line.startswith("fit: "))
    assert fit.startswith(f"fit: {best.n_init_iter_} initialisation round")
    assert f"{best.n_iter_} outer iteration" in fit
    assert any(line.startswith("search: its 16 fits took ") for line in lines)
    shown = _top_features(lines, ["a", "b", "c"])
    _check_top(shown, search.coef_, ["f1", "f2", "f3", "f4"], 2)


def test_the_papers_model_has_no_search_table(models, capsys):
    model = load_model(models / "paper.skops")
    lines = _inspected(capsys, models / "paper.skops")
    assert lines[0].startswith("GLOCAL, saved by glocal")
    assert not any(line.startswith(("search:", "refitted model:", "* ")) for line in lines)
    assert "n_latent=2" in lines[1]
    _check_top(_top_features(lines, ["a", "b", "c"]), model.coef_,
               ["f1", "f2", "f3", "f4"], 4)  # --top 5 of 4 features: all 4


@capped_fits
def test_features_without_saved_names_are_numbered(tmp_path, capsys):
    X, Y = thresholded_rows(40)
    model = GLOCAL(n_latent=2, max_iter=3, random_state=0, normalize_rows=True).fit(X, Y)
    save_model(tmp_path / "m.skops", model)
    lines = _inspected(capsys, tmp_path / "m.skops", "--top", "1")
    assert "fitted on" not in lines[0]
    assert any("of the rows scaled to unit norm" in line for line in lines)
    _check_top(_top_features(lines, ["0", "1", "2"]), model.coef_,
               [f"feature {i}" for i in range(4)], 1)


def test_a_bad_top_is_one_line(models, capsys):
    with pytest.raises(SystemExit) as raised:
        main(["inspect", str(models / "cv.skops"), "--top", "0"])
    assert raised.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--top" in err and "at least 1" in err


@pytest.mark.slow
@capped_fits
def test_every_model_kind_is_inspected(tmp_path, capsys):
    import warnings

    from estimators import quick_estimators, quick_search
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler

    from glocal._fitted import fitted_estimator
    from glocal.baselines import BR
    from glocal.datasets import make_glocal_data
    from glocal.thresholds import LabelThresholdsCV

    data = make_glocal_data(n_samples=60, n_labels=4, random_state=0)
    models = {**quick_estimators(), "GLOCALCV": quick_search(),
              "Pipeline": make_pipeline(MaxAbsScaler(), quick_search()),
              "LabelThresholdsCV": LabelThresholdsCV(BR(), cv=2, random_state=0)}
    for name, model in models.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model.fit(data.X, data.Y)
        save_model(tmp_path / f"{name}.skops", model)
        lines = _inspected(capsys, tmp_path / f"{name}.skops", "--top", "2")
        assert lines[0].startswith(f"{name}, saved by glocal"), lines
        weights = getattr(fitted_estimator(model), "coef_", None)
        if weights is None:
            assert lines[-1] == f"top features: a {name} has no linear weights (coef_)"
        else:
            _check_top(_top_features(lines, ["0", "1", "2", "3"]), weights[:, :24],
                       [f"feature {i}" for i in range(data.X.shape[1])], 2)
