"""``glocal inspect``: what a saved model is, how it was chosen and fitted, and the features
that weigh most in each label's score."""

from .._utils.progress import counted, iterations_text, settings_text
from ._common import _read_model


def run(args):
    from .._fitted import fitted_estimator

    saved = _read_model(args.model)
    model = saved["model"]
    last = getattr(model, "steps", [(None, model)])[-1][1]
    scorer = fitted_estimator(model)
    print(f"{type(model).__name__}, saved by glocal {saved['glocal_version']}: "
          f"{counted(model.n_features_in_, 'feature')}, "
          f"{counted(len(saved['label_names']), 'label')}"
          + ("" if saved.get("training_rows") is None
             else f", fitted on {counted(len(saved['training_rows']), 'row')}"))
    if last is not model:
        print("steps: " + ", ".join(f"{name} ({type(step).__name__})"
                                    for name, step in model.steps))
    print(f"settings: {_settings(last)}")
    if scorer is not last:
        print(f"refitted model: {type(scorer).__name__}({_settings(scorer)})")
    if hasattr(last, "cv_results_"):
        _print_search(last)
    if hasattr(scorer, "n_iter_"):
        _print_fit(scorer, last)
    _print_top_features(scorer, saved, args.top, pipeline=last is not model)
    return 0


def _settings(estimator):
    """The parameters of ``estimator`` but the estimators it holds (shown on their own)."""
    from sklearn.base import BaseEstimator

    params = estimator.get_params(deep=False)
    return settings_text({name: value for name, value in params.items()
                          if not isinstance(value, BaseEstimator)}) or "none"


def _print_search(search):
    """The search's table: every setting's mean and spread of its CV score, the pick
    marked."""
    results = search.cv_results_
    what = "observed average precision" if search.scoring is None else "the given scoring"
    print(f"search: {counted(len(results['params']), 'setting')} on "
          f"{counted(search.n_splits_, 'fold')}, scored by {what} (higher is better)")
    names = [settings_text(params) or "(the estimator as given)" for params in results["params"]]
    width = max(7, *(len(name) for name in names))
    print(f"  {'setting':<{width}}  {'mean CV score':>13}  {'std':>7}  {'rank':>4}")
    for i, name in enumerate(names):
        mark = "*" if i == search.best_index_ else " "
        print(f"{mark} {name:<{width}}  {results['mean_test_score'][i]:>13.4f}  "
              f"{results['std_test_score'][i]:>7.4f}  {results['rank_test_score'][i]:>4}")
    print("  (* the setting chosen and refitted on all rows)")


def _print_fit(model, search):
    """The rounds (and the seconds, of a GLOCAL-family fit) of the fit, and of the search
    that chose it."""
    times = getattr(model, "fit_times_", None)
    if times is None:  # a baseline records its iterations only
        print(f"fit: {counted(model.n_iter_, 'iteration')}")
    else:
        parts = ", ".join(f"{stage} {seconds:.2f} s" for stage, seconds in times.items())
        print(f"fit: {iterations_text(model)}; {sum(times.values()):.2f} s ({parts})")
    if hasattr(search, "cv_results_"):
        results = search.cv_results_
        total = float((results["mean_fit_time"] * search.n_splits_).sum())
        print(f"search: its {counted(len(results['params']) * search.n_splits_, 'fit')} took "
              f"{total:.2f} s in all; the refit on all rows {search.refit_time_:.2f} s")


def _print_top_features(model, saved, top, pipeline):
    """Each label's ``top`` features of largest weight in its score (``coef_``), by name."""
    import numpy as np

    coef = getattr(model, "coef_", None)
    if coef is None:
        print(f"top features: a {type(model).__name__} has no linear weights (coef_)")
        return
    coef = coef[:, :model.n_features_in_]  # MLLOC's further columns weigh its codes
    names = saved["feature_names"]
    if pipeline or len(names) != coef.shape[1]:  # a Pipeline's last step sees its own
        names = [f"feature {i}" for i in range(coef.shape[1])]
    top = min(top, coef.shape[1])
    scaled = (" of the rows scaled to unit norm" if getattr(model, "normalize_rows_", False)
              else "")
    after = " after the Pipeline's earlier steps" if pipeline else ""
    print(f"top {counted(top, 'feature')} per label, by the size of their weight (coef_) "
          f"in its score{scaled}{after}:")
    width = max(len(name) for name in saved["label_names"])
    for label, weights in zip(saved["label_names"], coef):
        order = np.argsort(-np.abs(weights), kind="stable")[:top]
        shown = ", ".join(f"{names[i]} {weights[i]:+.4g}" for i in order)
        print(f"  {label:<{width}}  {shown}")
