"""``glocal plot``: figures of a saved model or of reproduced results."""

from pathlib import Path

from ._common import _output, _read_model


def run(args):
    if not (args.model or args.results):
        raise ValueError("nothing to plot: give a model (--model) or reproduce results "
                         "(--results)")
    out = Path(args.out)
    names = (["correlations.png", "convergence.png"] if args.model else []) + (
        ["measure_vs_rho.png"] if args.results else [])
    for name in names:
        _output(out / name, args, [path for path in (args.model, args.results) if path])
    from ..plotting import plot_convergence, plot_correlations, plot_measure_vs_observed

    figures = []  # (file name, function drawing it to a path)
    if args.model:
        saved = _read_model(args.model)
        model = _glocal_of(saved["model"], args.model)
        figures += [("correlations.png", lambda path: plot_correlations(
                         model, saved["label_names"], path=path, overwrite=args.force)),
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
    return 0


def _glocal_of(model, path):
    """The GLOCAL-family estimator of a saved model (itself, GLOCALCV's refitted one, a
    Pipeline's last step), whose correlations and convergence are drawn."""
    from .. import GLOCAL

    model = getattr(model, "steps", [(None, model)])[-1][1]
    model = getattr(model, "best_estimator_", model)
    if not isinstance(model, GLOCAL):
        raise ValueError(f"'{path}' holds a {type(model).__name__}: correlations and "
                         "convergence are drawn for GLOCAL, GLObal and loCAL models")
    return model
