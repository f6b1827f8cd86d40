"""The ``glocal`` command (also ``python -m glocal``)."""

import argparse
import sys
import time



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
    return parser


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
