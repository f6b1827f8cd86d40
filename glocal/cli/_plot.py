"""``glocal plot``: figures of a saved model or of reproduced results."""

from pathlib import Path

from ._common import _check_data, _load_data, _output, _read_model, _row_digests


def run(args):
    if args.data and not args.model:
        raise ValueError("--data gives the training labels of a model: add --model")
    if not (args.model or args.results):
        raise ValueError("nothing to plot: give a model (--model) or reproduce results "
                         "(--results)")
    out = Path(args.out)
    names = (["correlations.png", "convergence.png"] if args.model else []) + (
        ["measure_vs_rho.png"] if args.results else [])
    for name in names:
        _output(out / name, args, [path for path in (args.model, args.results, args.data)
                                   if path])
    from ..plotting import plot_convergence, plot_correlations, plot_measure_vs_observed

    figures = []  # (file name, function drawing it to a path)
    if args.model:
        saved = _read_model(args.model)
        model = _glocal_of(saved["model"], args.model)
        labels = None if args.data is None else _training_labels(saved, model, args)
        figures += [("correlations.png", lambda path: plot_correlations(
                         model, saved["label_names"], labels=labels, path=path,
                         overwrite=args.force)),
                    ("convergence.png", lambda path: plot_convergence(
                         model, path=path, overwrite=args.force))]
    if args.results:
        from ..reproduce import read_results

        rows = read_results(args.results)
        figures.append(("measure_vs_rho.png", lambda path: plot_measure_vs_observed(
            rows, measure="prediction_average_precision", path=path, overwrite=args.force)))
    for name, draw in figures:
        draw(out / name)
        print(f"wrote {out / name}")
    if args.model and args.data is None:
        print("correlations.png shows the model's score correlations only; --data with its "
              "training data draws the labels' own beside them")
    return 0


def _training_labels(saved, model, args):
    """The labels of --data as the model was fitted on them (those ``glocal fit --observed``
    hid are hidden again, the same ones), refused in one line unless they are the rows the
    model was fitted on (in order: the model's groups are drawn per row)."""
    data = _load_data(args.data, args, "train", model=saved)
    _check_data(saved, data, args.data)
    if not data.Y.shape[1]:
        raise ValueError(f"--data: {args.data} has no labels (if it has, name them with --xml)")
    digests = saved.get("training_rows")
    n_rows = len(model.groups_)
    if data.X.shape[0] != n_rows or (
            digests is not None and not (_row_digests(data.X) == digests).all()):
        raise ValueError(f"--data: the rows of {data.described} are not the {n_rows} rows "
                         "the model was fitted on (its training split? --split)")
    hidden = saved.get("hidden_labels")
    if hidden is None:
        return data.Y
    from ..protocol import sample_observed

    print(f"--data: its labels as the fit saw them, all but a fraction {hidden['observed']:g} "
          "hidden as by glocal fit --observed")
    return sample_observed(data.Y, hidden["observed"], random_state=hidden["seed"])


def _glocal_of(model, path):
    """The GLOCAL-family estimator of a saved model (itself, GLOCALCV's refitted one, a
    Pipeline's last step), whose correlations and convergence are drawn."""
    from .. import GLOCAL
    from .._fitted import fitted_estimator

    model = fitted_estimator(model)
    if not isinstance(model, GLOCAL):
        raise ValueError(f"'{path}' holds a {type(model).__name__}: correlations and "
                         "convergence are drawn for GLOCAL, GLObal and loCAL models")
    return model
