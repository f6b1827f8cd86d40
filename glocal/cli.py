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
    reproduce.add_argument("--jobs", type=int, help="parallel fits during cross-validation")
    reproduce.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    reproduce.set_defaults(run=_reproduce)
    return parser


def _reproduce(args):
    from .reproduce import run_reproduction

    try:
        run_reproduction(
            datasets=_names(args.datasets), methods=_names(args.methods),
            observed_fractions=_fractions(args.rho), n_repeats=args.repeats,
            data_dir=args.data_dir, out_dir=args.out, paper_tables=args.paper_tables,
            quick=args.quick, tune=not args.no_tune, n_jobs=args.jobs, random_state=args.seed,
            progress=lambda line: print(line, flush=True))
    except (FileNotFoundError, ValueError) as exc:
        # Bad names, paths and values: one line, no traceback.
        message = " ".join(str(exc).split())
        print(f"glocal reproduce: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("glocal reproduce: interrupted; run the same command again to resume",
              file=sys.stderr)
        return 130
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


def main(argv=None):
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
