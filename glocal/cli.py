"""The ``glocal`` command (also ``python -m glocal``)."""

import argparse
import os
import sys
import time
from pathlib import Path

# The paper's tables beside the project (../shared/paper from the project root).
_PAPER_TABLES = Path(__file__).resolve().parents[2] / "shared" / "paper" / "paper_tables.json"


def _demo(args):
    from sklearn.model_selection import train_test_split

    from . import GLOCAL
    from .baselines import BR
    from .datasets import make_glocal_data
    from .metrics import evaluate
    from .protocol import sample_observed

    data = make_glocal_data(random_state=args.seed)
    X_train, X_test, Y_train, Y_test = train_test_split(
        data.X, data.Y, test_size=0.4, random_state=args.seed)
    Y_observed = (sample_observed(Y_train, args.observed, random_state=args.seed)
                  if args.observed < 1 else Y_train)
    keep = Y_test.sum(axis=1) > 0  # the paper scores only test rows with a positive label
    n, d = data.X.shape
    print(f"Synthetic data (glocal.datasets.make_glocal_data, seed {args.seed}): {n} samples, "
          f"{d} features, {data.Y.shape[1]} labels; 60/40 split, "
          f"{args.observed:.0%} of training labels observed.\n")

    rows = []
    models = [("GLOCAL", GLOCAL(random_state=args.seed), Y_observed)]
    if args.observed < 1:
        print("BR cannot learn with missing labels: it is trained on the complete training "
              "labels here (an upper bound for it).\n")
    models.append(("BR (LinearSVC)", BR(), Y_train))
    for name, model, labels in models:
        tic = time.perf_counter()
        model.fit(X_train, labels)
        seconds = time.perf_counter() - tic
        scores = evaluate(Y_test[keep], model.decision_function(X_test[keep]))
        rows.append((name, scores, seconds))

    header = f"{'method':<16}{'Rkl (lower)':>13}{'Auc':>9}{'Cvg (lower)':>13}{'Ap':>9}{'fit (s)':>10}"
    print(header)
    print("-" * len(header))
    for name, s, seconds in rows:
        print(f"{name:<16}{s['ranking_loss']:>13.4f}{s['instance_auc']:>9.4f}"
              f"{s['coverage']:>13.4f}{s['average_precision']:>9.4f}{seconds:>10.3f}")
    print("\nAuc is the per-instance AUC; Cvg is the paper's coverage (minus one).")
    return 0


def build_parser():
    parser = argparse.ArgumentParser(
        prog="glocal", description="Multi-label learning with global and local label "
                                   "correlations (GLOCAL).")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    demo = commands.add_parser(
        "demo", help="fit GLOCAL and a one-vs-rest baseline on built-in synthetic data",
        description="Fit GLOCAL and a one-vs-rest LinearSVC (BR) on the built-in synthetic "
                    "data and print the paper's four measures and the fit times.")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--observed", type=_fraction, default=1.0,
                      help="fraction rho of training labels observed, in (0, 1] (default 1)")
    demo.set_defaults(run=_demo)

    reproduce = commands.add_parser(
        "reproduce", help="regenerate the paper's result tables",
        description="Run the paper's protocol (random 60/40 splits, observed fractions rho, "
                    "5-fold cross-validation of the hyperparameters) for every dataset, "
                    "repetition, rho and method; write one row per finished run to "
                    "OUT/results.csv and the tables to OUT/report.md. Running the same "
                    "command again resumes: runs already in results.csv are skipped.")
    reproduce.add_argument("--datasets", help="comma-separated dataset names, or 'synthetic' "
                           "(default: the paper's datasets found in the data directory: "
                           "arts, business, computers, education, entertainment, health, "
                           "enron, image)")
    reproduce.add_argument("--methods", default="GLOCAL,BR",
                           help="comma-separated methods (default GLOCAL,BR)")
    reproduce.add_argument("--rho", help="comma-separated observed fractions in (0, 1] "
                           "(default 1.0,0.7,0.3; 1.0,0.3 with --quick)")
    reproduce.add_argument("--repeats", type=int,
                           help="number of random splits (default 10; 1 with --quick)")
    reproduce.add_argument("--data-dir", default=os.environ.get("GLOCAL_DATA"),
                           help="data directory (default $GLOCAL_DATA)")
    reproduce.add_argument("--out", default="reproduce-out",
                           help="output directory (default reproduce-out)")
    reproduce.add_argument("--paper-tables", type=Path,
                           default=_PAPER_TABLES if _PAPER_TABLES.is_file() else None,
                           help="the paper's paper_tables.json, shown beside our numbers "
                                "(default ../shared/paper/paper_tables.json beside the "
                                "project, if present)")
    reproduce.add_argument("--quick", action="store_true",
                           help="smoke test: at most 500 rows per dataset, no tuning, one "
                                "repetition, rho 1.0 and 0.3 unless given")
    reproduce.add_argument("--no-tune", action="store_true",
                           help="keep the estimators' default hyperparameters")
    reproduce.add_argument("--small-clusters", action=argparse.BooleanOptionalAction,
                           help="also score test rows of clusters under 5%% of the samples "
                                "(16 k-means clusters, given to the GLOCAL family as groups; "
                                "the family then tunes its correlation weights lam3, lam4); "
                                "default: on when GLObal or loCAL is among the methods")
    reproduce.add_argument("--jobs", type=int, help="parallel fits during cross-validation")
    reproduce.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    reproduce.set_defaults(run=_reproduce)

    split_help = ("rows to use: train, test or all (default: {} when the file has a "
                  "predefined split, else all)")
    fit = commands.add_parser(
        "fit", help="fit GLOCAL on a data file and save the model",
        description="Fit GLOCAL on a data file (Mulan/MEKA ARFF, MATLAB .mat, svmlight) and "
                    "save the fitted model with joblib.")
    fit.add_argument("data", help="data file")
    fit.add_argument("--model", required=True, help="where to save the model (joblib)")
    fit.add_argument("--xml", help="Mulan XML naming the labels (default: beside the ARFF)")
    fit.add_argument("--split", choices=("train", "test", "all"), help=split_help.format("train"))
    fit.add_argument("--n-latent", type=int, default=20, help="k (default 20)")
    fit.add_argument("--n-groups", type=int, default=4, help="g (default 4)")
    fit.add_argument("--lam2", type=float, default=4.0, help="default 4")
    fit.add_argument("--lam3", type=float, default=1e-3, help="default 1e-3")
    fit.add_argument("--lam4", type=float, default=1e-3, help="default 1e-3")
    fit.add_argument("--fit-intercept", action="store_true",
                     help="add a constant feature (not in the paper's model)")
    fit.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    fit.add_argument("--force", action="store_true", help="replace an existing model file")
    fit.set_defaults(run=_fit)

    predict = commands.add_parser(
        "predict", help="write a model's scores or labels for a data file to CSV",
        description="Score the rows of a data file with a saved model and write one CSV row "
                    "per sample, one column per label (header: the label names).")
    predict.add_argument("model", help="model saved by 'glocal fit'")
    predict.add_argument("data", help="data file")
    predict.add_argument("--out", required=True, help="CSV file to write")
    predict.add_argument("--labels", action="store_true",
                         help="write {0,1} labels (the sign of the scores) instead of scores")
    predict.add_argument("--xml", help="Mulan XML naming the labels (default: beside the ARFF)")
    predict.add_argument("--split", choices=("train", "test", "all"),
                         help=split_help.format("test"))
    predict.add_argument("--force", action="store_true", help="replace an existing CSV")
    predict.set_defaults(run=_predict)

    evaluate = commands.add_parser(
        "evaluate", help="print a model's ranking measures on a data file",
        description="Print the paper's measures (Rkl, Auc, Cvg, Ap) and the per-label AUC of "
                    "a saved model on a data file; rows without a positive label are "
                    "dropped, as in the paper.")
    evaluate.add_argument("model", help="model saved by 'glocal fit'")
    evaluate.add_argument("data", help="data file")
    evaluate.add_argument("--xml", help="Mulan XML naming the labels (default: beside the ARFF)")
    evaluate.add_argument("--split", choices=("train", "test", "all"),
                          help=split_help.format("test"))
    evaluate.add_argument("--keep-unlabeled", action="store_true",
                          help="keep rows without a positive label")
    evaluate.set_defaults(run=_evaluate)

    plot = commands.add_parser(
        "plot", help="draw a model's learned correlations and convergence, or reproduce results",
        description="Write PNG figures to a directory: from a model saved by 'glocal fit', "
                    "its learned global and local label correlations (correlations.png) and "
                    "its objective per iteration and per block (convergence.png); from a "
                    "'glocal reproduce' results.csv, test average precision against the "
                    "observed fraction rho (measure_vs_rho.png).")
    plot.add_argument("--model", help="model saved by 'glocal fit'")
    plot.add_argument("--results", help="results.csv written by 'glocal reproduce'")
    plot.add_argument("--out", required=True, help="directory for the figures")
    plot.add_argument("--force", action="store_true", help="replace existing figures")
    plot.set_defaults(run=_plot)
    return parser


def _reproduce(args):
    from .reproduce import run_reproduction

    try:
        run_reproduction(
            datasets=_names(args.datasets), methods=_names(args.methods),
            observed_fractions=_fractions(args.rho), n_repeats=args.repeats,
            data_dir=args.data_dir, out_dir=args.out, paper_tables=args.paper_tables,
            quick=args.quick, tune=not args.no_tune, small_clusters=args.small_clusters,
            n_jobs=args.jobs, random_state=args.seed,
            progress=lambda line: print(line, flush=True))
    except KeyboardInterrupt:
        print("glocal reproduce: interrupted; run the same command again to resume",
              file=sys.stderr)
        return 130
    return 0


def _load_data(path, xml, split, default):
    """A data file's rows of one split: "train", "test" or "all" (default: ``default`` when
    the file has a predefined split, else all rows)."""
    from .datasets import load

    data = load(path, xml=xml)
    split = split or (default if "train_idx" in data else "all")
    if split != "all":
        if f"{split}_idx" not in data:
            raise ValueError(f"{path} has no predefined {split} split; use --split all")
        rows = data[f"{split}_idx"]
        data.X, data.Y = data.X[rows], data.Y[rows]
    return data


def _fit(args):
    import joblib

    from . import GLOCAL
    from ._io import atomic_output

    data = _load_data(args.data, args.xml, args.split, "train")
    model = GLOCAL(n_latent=args.n_latent, n_groups=args.n_groups, lam2=args.lam2,
                   lam3=args.lam3, lam4=args.lam4, fit_intercept=args.fit_intercept,
                   random_state=args.seed).fit(data.X, data.Y)
    saved = {"model": model, "label_names": list(data.label_names),
             "feature_names": list(data.feature_names)}
    with atomic_output(args.model, overwrite=args.force, binary=True) as file:
        joblib.dump(saved, file)
    print(f"fitted GLOCAL on {data.X.shape[0]} rows of {args.data} (objective "
          f"{model.objective_history_[-1]:.6g} after {model.n_iter_} outer iterations) and "
          f"saved it to {args.model}")
    return 0


def _read_model(path):
    """What 'glocal fit' saved: the model with its label and feature names."""
    import joblib

    try:
        saved = joblib.load(path)
        saved["model"], saved["label_names"]
    except FileNotFoundError:
        raise
    except Exception as exc:  # joblib raises many kinds for a file that is not a model
        raise ValueError(f"{path} is not a model saved by 'glocal fit' ({exc})") from None
    return saved


def _load_model(path, data):
    """The saved model, checked against the data it is about to score."""
    saved = _read_model(path)
    model, label_names = saved["model"], saved["label_names"]
    if data.X.shape[1] != model.n_features_in_:
        raise ValueError(f"the model has {model.n_features_in_} features but the data has "
                         f"{data.X.shape[1]}: it was fitted on other data")
    if list(data.label_names) != label_names:
        raise ValueError("the model's labels differ from the data's: it was fitted on "
                         "other data")
    return model


def _predict(args):
    import csv

    import numpy as np

    from ._io import atomic_output

    data = _load_data(args.data, args.xml, args.split, "test")
    model = _load_model(args.model, data)
    values = model.predict(data.X) if args.labels else model.decision_function(data.X)
    with atomic_output(args.out, overwrite=args.force) as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(data.label_names)
        writer.writerows(np.asarray(values).tolist())
    kind = "labels" if args.labels else "scores"
    print(f"wrote {kind} of {values.shape[0]} rows x {values.shape[1]} labels to {args.out}")
    return 0


def _evaluate(args):
    import numpy as np

    from .metrics import PAPER_NAMES, evaluate

    data = _load_data(args.data, args.xml, args.split, "test")
    model = _load_model(args.model, data)
    Y, X = data.Y, data.X
    if not args.keep_unlabeled:  # as the paper does
        keep = np.asarray(Y.sum(axis=1)).ravel() > 0
        X, Y = X[keep], Y[keep]
    scores = evaluate(Y, model.decision_function(X))
    print(f"{X.shape[0]} rows of {args.data}")
    for short, name in PAPER_NAMES.items():
        print(f"{short:<4}{name:<20}{scores[name]:.4f}")
    print(f"    {'label_auc':<20}{scores['label_auc']:.4f}")
    return 0


def _names(text):
    return None if text is None else [name.strip() for name in text.split(",") if name.strip()]


def _fractions(text):
    if text is None:
        return None
    try:
        return [float(value) for value in _names(text)]
    except ValueError:
        raise ValueError(f"--rho takes comma-separated numbers, got {text!r}") from None


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {value}")
    return value


def _plot(args):
    from .plotting import plot_convergence, plot_correlations, plot_measure_vs_observed

    if not (args.model or args.results):
        raise ValueError("nothing to plot: give a model (--model) or reproduce results "
                         "(--results)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    figures = []  # (file name, function drawing it to a path)
    if args.model:
        saved = _read_model(args.model)
        model = saved["model"]
        figures += [("correlations.png", lambda path: plot_correlations(
                         model, saved["label_names"], path=path, overwrite=args.force)),
                    ("convergence.png", lambda path: plot_convergence(
                         model, path=path, overwrite=args.force))]
    if args.results:
        from .reproduce import read_results

        rows = read_results(args.results)
        figures.append(("measure_vs_rho.png", lambda path: plot_measure_vs_observed(
            rows, measure="prediction_average_precision", path=path, overwrite=args.force)))
    for name, draw in figures:
        draw(out / name)
        print(f"wrote {out / name}")
    return 0


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (FileNotFoundError, FileExistsError, ValueError) as exc:
        # Missing files, outputs that exist, unknown formats, mismatched models: one line,
        # no traceback.
        message = " ".join(str(exc).split())
        print(f"glocal {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
