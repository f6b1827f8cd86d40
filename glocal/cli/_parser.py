"""The command line's parser: its commands, options and argument types."""

import argparse
import math
import os
from pathlib import Path

from . import _demo, _evaluate, _fit, _inspect, _plot, _predict, _reproduce

# The paper's published numbers are not part of the package: $GLOCAL_PAPER_TABLES names
# them, else a paper_tables.json in the current directory.
_PAPER_TABLES = Path(os.environ.get("GLOCAL_PAPER_TABLES", "paper_tables.json"))


class _Parser(argparse.ArgumentParser):
    """argparse's parser with errors on one line: the problem and where to read more (the
    usage, several lines long, is in --help)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser():
    from .. import __version__

    parser = _Parser(
        prog="glocal", description="Multi-label learning with global and local label "
                                   "correlations (GLOCAL).")
    parser.add_argument("--version", action="version", version=f"glocal {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    demo = commands.add_parser(
        "demo", help="compare GLOCAL, GLOCALCV and a one-vs-rest baseline on built-in "
                     "synthetic data",
        description="Fit a one-vs-rest LinearSVC (BR, each label on the rows where it is "
                    "observed), the paper's GLOCAL and the recommended GLOCALCV on the "
                    "built-in synthetic data (30 labels that are noisy copies of 6 latent "
                    "ones) with 30 % and with all of the training labels observed; print "
                    "the paper's four measures, the fit times and a sentence saying which "
                    "model wins where.")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--observed", type=_fraction,
                      help="fraction rho of training labels observed, in (0, 1] (default: "
                           "0.3, then 1)")
    demo.set_defaults(run=_demo.run)

    reproduce = commands.add_parser(
        "reproduce", help="regenerate the paper's result tables (hours by default)",
        description="Run the paper's protocol (random 60/40 splits, observed fractions rho, "
                    "5-fold cross-validation of the hyperparameters) for every dataset, "
                    "repetition, rho and method; write one row per finished run to "
                    "OUT/results.csv and the tables to OUT/report.md. Running the same "
                    "command again resumes: runs already in results.csv are skipped. With "
                    "the defaults this runs for hours (GLOCAL and BR on the paper's 8 "
                    "datasets: about an hour with --jobs 2 on 2 cores); --quick is a smoke "
                    "test of about a minute.")
    reproduce.add_argument("--datasets", help="comma-separated dataset names, or 'synthetic' "
                           "(default: the paper's datasets found in the data directory: "
                           "arts, business, computers, education, entertainment, health, "
                           "enron, image)")
    reproduce.add_argument("--methods", default="GLOCAL,BR",
                           help="comma-separated methods (default GLOCAL,BR): GLOCALCV (the "
                                "recommended model, tuned by its own 3-fold CV), GLOCAL, "
                                "GLObal, loCAL, BR, LEML, ML-LRC, MLLOC, MAXIDE, MBR, MMLLOC")
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
                           help="the paper's numbers (paper_tables.json), shown beside ours "
                                "(default $GLOCAL_PAPER_TABLES, else paper_tables.json in "
                                "the current directory, if present; without it the report "
                                "shows our numbers only)")
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
    reproduce.add_argument("--jobs", type=_n_jobs, default=1, metavar="N",
                           help="parallel fits during cross-validation (default 1; -1: one "
                                "per CPU core)")
    reproduce.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    reproduce.set_defaults(run=_reproduce.run)

    split_help = ("rows to use: train, test or all (default: the rows of the file named, "
                  "e.g. those of scene-train.arff only, not those of scene-test.arff beside "
                  "it; for a dataset directory holding a train/test pair, its {} split)")
    xml_help = ("Mulan XML file naming the label attributes of an ARFF file (default: "
                "<name>.xml beside it)")
    fit = commands.add_parser(
        "fit", help="fit the recommended model (or the paper's) on a data file and save it",
        description="Fit a model on a data file (Mulan/MEKA ARFF, MATLAB .mat, svmlight) and "
                    "save it in skops' format, which loads without running code (unlike a "
                    "pickle). By default the model is the recommended one, glocal.GLOCALCV(): "
                    "GLOCAL with the squared hinge, a bias per label, lam_v = 0 and k = "
                    "min(labels, 100), with lam2 in {16, 4, 2, 1} and --normalize-rows "
                    "chosen by cross-validation on the observed labels, and per-label "
                    "thresholds for --labels tuned by the same cross-validation; an option "
                    "below given explicitly replaces its part of that model or grid. With "
                    "--paper it is the paper's model, GLOCAL() (Eq. (4)), at its defaults. "
                    "On a terminal, progress bars say how far the fit is and the time left. "
                    "See 'help(glocal.GLOCALCV)' and 'help(glocal.GLOCAL)'.")
    fit.add_argument("data", help="data file, or a directory of .npy chunks (X*.npy with "
                                  "their labels Y*.npy, paired in name order) fitted "
                                  "through Dask with --paper")
    fit.add_argument("--model", required=True,
                     help="where to save the model (a skops file, e.g. model.skops)")
    fit.add_argument("--paper", action="store_true",
                     help="fit the paper's model, glocal.GLOCAL(), at the paper's settings "
                          "(no cross-validation), instead of the recommended one")
    fit.add_argument("--scheduler", metavar="ADDRESS",
                     help="with a chunk directory: a dask.distributed scheduler to fit on "
                          "(e.g. tcp://host:8786; its workers must see the files); default: "
                          "Dask's threads in this process")
    fit.add_argument("--xml", help=xml_help)
    fit.add_argument("--split", choices=("train", "test", "all"), help=split_help.format("train"))
    fit.add_argument("--observed", type=_fraction, metavar="RHO",
                     help="for experiments: keep observed a fraction RHO in (0, 1] of each "
                          "label's positive and of its negative entries, chosen at random by "
                          "--seed, and hide the others before fitting, as "
                          "glocal.protocol.sample_observed does (0.3 hides 70%% of the "
                          "labels); the file's labels must be complete. Without it, labels "
                          "missing in the file ('?' in ARFF) are left out of the fit")
    fit.add_argument("--cv-folds", type=int, metavar="N",
                     help="number of cross-validation folds (default 3; not with --paper)")
    fit.add_argument("--jobs", type=_n_jobs, metavar="N",
                     help="folds fitted in parallel (default 1; -1: one per CPU core; not "
                          "with --paper)")
    fit.add_argument("--loss", choices=("squared", "squared_hinge", "logistic"),
                     help="loss on each observed label entry: squared (the paper's; the "
                          "default with --paper), squared_hinge (LinearSVC's; the default) "
                          "or logistic")
    fit.add_argument("--n-latent", type=_positive, metavar="K",
                     help="k, the number of latent labels: the rank of the label "
                          "factorization Y ~ UV, at most the number of labels (default: the "
                          "number of labels up to 100; 20 with --paper)")
    fit.add_argument("--n-groups", type=_positive, default=4, metavar="G",
                     help="g, the number of local groups of rows, found by k-means on the "
                          "features (default 4)")
    fit.add_argument("--lam2", type=_above_zero, nargs="+", metavar="LAM2",
                     help="lambda2, weight of the ridge penalty on U, V and W; larger values "
                          "shrink the scores and can wipe out rare labels. Several values "
                          "are searched by the cross-validation, e.g. --lam2 1 0.5 0.25 "
                          "(default: chosen in {16, 4, 2, 1}; 4 with --paper, which takes "
                          "one value)")
    fit.add_argument("--lam3", type=_at_least_zero, default=1e-3,
                     help="lambda3, weight of the global label-correlation term (default "
                          "1e-3)")
    fit.add_argument("--lam4", type=_at_least_zero, default=1e-3,
                     help="lambda4, weight of the local (per-group) label-correlation terms "
                          "(default 1e-3)")
    fit.add_argument("--fit-intercept", action=argparse.BooleanOptionalAction,
                     help="add a constant feature, a bias per label (not in the paper's "
                          "model; default on, off with --paper)")
    fit.add_argument("--normalize-rows", action=argparse.BooleanOptionalAction,
                     help="scale every row of features to unit norm (not in the paper's "
                          "model; default: chosen by cross-validation; off with --paper)")
    fit.add_argument("--max-iter", type=_at_least_zero_whole, metavar="N",
                     help="most outer iterations of the alternating minimization (default "
                          "200; 30 with --paper)")
    fit.add_argument("--tol", type=_at_least_zero,
                     help="stop when an outer iteration lowers the objective by less than "
                          "this fraction (default 1e-3; 1e-4 with --paper)")
    fit.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    fit.add_argument("--force", action="store_true", help="replace an existing model file")
    fit.add_argument("--verbose", "-v", action="store_true",
                     help="also print a line per fitted setting and fold (with --paper: the "
                          "objective after every round of the fit)")
    fit.set_defaults(run=_fit.run)

    predict = commands.add_parser(
        "predict", help="write a model's scores, labels or probabilities for a data file to CSV",
        description="Score the rows of a data file with a saved model and write one CSV row "
                    "per sample, one column per label (header: the label names). The file "
                    "needs no labels: an ARFF file without the label attributes (or with "
                    "MEKA '-C 0'), a .mat file with 'data' only, or an svmlight file whose "
                    "lines start with a space; labels it has are ignored. Model files are "
                    "read in skops' format, which rebuilds numpy arrays and glocal's "
                    "estimators only and runs no code; pickle and joblib files are refused, "
                    "since loading a pickle runs the code it holds.")
    predict.add_argument("model", help="model saved by 'glocal fit' (skops format; a file "
                                       "saved by another glocal version is refused)")
    predict.add_argument("data", help="data file")
    predict.add_argument("--out", required=True, help="CSV file to write")
    # What is written instead of the scores: one at a time.
    chosen_by = predict.add_mutually_exclusive_group()
    chosen_by.add_argument("--labels", action="store_true",
                           help="write {0,1} labels instead of scores: 1 where a label's "
                                "score is above its threshold, tuned by cross-validation in "
                                "'glocal fit' (the sign of the scores for a model fitted with "
                                "--paper)")
    chosen_by.add_argument("--top-k", type=_positive, metavar="K",
                           help="write {0,1} labels instead of scores: 1 for the K "
                                "best-scored labels of every row (not with --labels)")
    chosen_by.add_argument("--proba", action="store_true",
                           help="write each label's probability instead of its score: "
                                "Platt scaling of the scores, tuned on the out-of-fold "
                                "scores of 'glocal fit''s cross-validation (the model's own "
                                "log-odds for one fitted with --paper --loss logistic)")
    predict.add_argument("--xml", help=xml_help)
    predict.add_argument("--split", choices=("train", "test", "all"),
                         help=split_help.format("test"))
    predict.add_argument("--force", action="store_true", help="replace an existing CSV")
    predict.set_defaults(run=_predict.run)

    evaluate = commands.add_parser(
        "evaluate", help="print a model's ranking measures on a data file",
        description="Print a saved model's measures on a data file: the paper's ranking "
                    "measures (Rkl, Auc, Cvg, Ap), the mean per-label AUC, precision and "
                    "nDCG of the top k labels, and micro and macro F1 of the predicted label "
                    "sets ('glocal predict --labels') with the share of rows given no label; "
                    "with --per-label, each label's support, AUC, precision, recall and F1. "
                    "Rows without a positive label are dropped, as in the paper. Warns when "
                    "the rows are those the model was fitted on, and counts the rows that "
                    "have a training row's features.")
    evaluate.add_argument("model", help="model saved by 'glocal fit'")
    evaluate.add_argument("data", help="data file")
    evaluate.add_argument("--xml", help=xml_help)
    evaluate.add_argument("--split", choices=("train", "test", "all"),
                          help=split_help.format("test"))
    evaluate.add_argument("--keep-unlabeled", action="store_true",
                          help="keep rows without a positive label")
    evaluate.add_argument("--per-label", action="store_true",
                          help="also print one line per label (by name)")
    evaluate.set_defaults(run=_evaluate.run)

    plot = commands.add_parser(
        "plot", help="draw a model's score correlations and convergence, or reproduce results",
        description="Write PNG figures to a directory: from a model saved by 'glocal fit', "
                    "the correlations of its label scores, global and per group "
                    "(correlations.png; with --data, above the training labels' own "
                    "correlations and their agreement: Spearman's over the label pairs and "
                    "the share of pairs of the same sign), and its objective per iteration "
                    "and per block (convergence.png); from a 'glocal reproduce' "
                    "results.csv, test average precision against the observed fraction rho "
                    "(measure_vs_rho.png).")
    plot.add_argument("--model", help="model saved by 'glocal fit'")
    plot.add_argument("--data", help="the data file the model was fitted on, whose labels' "
                                     "own correlations are drawn beside the model's")
    plot.add_argument("--xml", help=xml_help)
    plot.add_argument("--split", choices=("train", "test", "all"),
                      help=split_help.format("train"))
    plot.add_argument("--results", help="results.csv written by 'glocal reproduce'")
    plot.add_argument("--out", required=True,
                      help="directory for the figures (created if missing)")
    plot.add_argument("--force", action="store_true", help="replace existing figures")
    plot.set_defaults(run=_plot.run)

    inspect = commands.add_parser(
        "inspect", help="print what a saved model is, how it was chosen and its top features",
        description="Print a saved model's class and settings; when a search chose it "
                    "(glocal fit's GLOCALCV), the mean and spread (standard deviation over "
                    "the folds) of every setting's cross-validation score, the pick marked, "
                    "and the settings of the model refitted on all rows; the rounds and "
                    "seconds of its fit; and for every label the features of largest weight "
                    "in its score (coef_), by the feature names saved with the model (else "
                    "by their index).")
    inspect.add_argument("model", help="model saved by 'glocal fit'")
    inspect.add_argument("--top", type=_positive, default=5, metavar="N",
                         help="features shown per label (default 5)")
    inspect.set_defaults(run=_inspect.run)
    return parser


def _whole_number(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def _n_jobs(text):
    """A joblib job count: a positive number, or -1 (-2, ...) for all CPU cores (but 1, ...)."""
    value = _whole_number(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must not be 0 (use 1 or more, or -1 for one per "
                                         "CPU core)")
    return value


def _number(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def _at_least(parse, low, above=False):
    """An argparse type: the value ``parse`` reads, refused below ``low`` (and at ``low``
    when ``above``), so that a bad value is named as its option before any work."""
    def check(text):
        value = parse(text)
        if value < low or above and value == low:
            raise argparse.ArgumentTypeError(
                f"must be {'above' if above else 'at least'} {low:.12g}, got {value:.12g}")
        return value
    return check


_positive = _at_least(_whole_number, 1)
_at_least_zero_whole = _at_least(_whole_number, 0)
_above_zero = _at_least(_number, 0, above=True)
_at_least_zero = _at_least(_number, 0)


def _fraction(text):
    value = _number(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {value}")
    return value
