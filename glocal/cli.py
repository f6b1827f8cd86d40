"""The ``glocal`` command (also ``python -m glocal``)."""

import argparse
import os
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

from ._io import OutputExists, atomic_output, check_output, csv_text, one_line
from ._process import exit_status, stopping_workers
from ._progress import counted, settings_text
from .persistence import load_model, save_model

# The paper's published numbers are not part of the package: $GLOCAL_PAPER_TABLES names
# them, else a paper_tables.json in the current directory.
_PAPER_TABLES = Path(os.environ.get("GLOCAL_PAPER_TABLES", "paper_tables.json"))


def _demo(args):
    from sklearn.model_selection import train_test_split

    from . import GLOCAL, GLOCALCV
    from .baselines import BR
    from .datasets import make_glocal_data
    from .metrics import evaluate
    from .protocol import sample_observed

    data = make_glocal_data(random_state=args.seed)
    X_train, X_test, Y_train, Y_test = train_test_split(
        data.X, data.Y, test_size=0.4, random_state=args.seed)
    keep = Y_test.sum(axis=1) > 0  # the paper scores only test rows with a positive label
    n, d = data.X.shape
    print(f"Synthetic data (glocal.datasets.make_glocal_data, seed {args.seed}): {n} samples, "
          f"{d} features, {data.Y.shape[1]} labels; 60/40 split.\n"
          "BR: one LinearSVC per label, trained on the rows where that label is observed.\n"
          "GLOCAL(): the paper's model. GLOCALCV(): the recommended model (squared hinge, "
          "tuned by 3-fold CV).")
    header = (f"{'method':<12}{'Rkl (lower)':>13}{'Auc':>9}{'Cvg (lower)':>13}{'Ap':>9}"
              f"{'fit (s)':>10}")
    for rho in ([args.observed] if args.observed is not None else [0.3, 1.0]):
        Y_observed = (sample_observed(Y_train, rho, random_state=args.seed) if rho < 1
                      else Y_train)
        print(f"\n{rho:.0%} of training labels observed:\n{header}\n{'-' * len(header)}")
        models = [("BR", BR(random_state=args.seed)),
                  ("GLOCAL()", GLOCAL(random_state=args.seed)),
                  ("GLOCALCV()", GLOCALCV(random_state=args.seed))]
        for name, model in models:
            tic = time.perf_counter()
            model.fit(X_train, Y_observed)
            seconds = time.perf_counter() - tic
            s = evaluate(Y_test[keep], model.decision_function(X_test[keep]))
            print(f"{name:<12}{s['ranking_loss']:>13.4f}{s['instance_auc']:>9.4f}"
                  f"{s['coverage']:>13.4f}{s['average_precision']:>9.4f}{seconds:>10.3f}",
                  flush=True)
    print("\nAuc is the per-instance AUC; Cvg is the paper's coverage (minus one).")
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse's parser with errors on one line: the problem and where to read more (the
    usage, several lines long, is in --help)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser():
    from . import __version__

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
                    "built-in synthetic data with 30 % and with all of the training labels "
                    "observed, and print the paper's four measures and the fit times.")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    demo.add_argument("--observed", type=_fraction,
                      help="fraction rho of training labels observed, in (0, 1] (default: "
                           "0.3, then 1)")
    demo.set_defaults(run=_demo)

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
    reproduce.set_defaults(run=_reproduce)

    split_help = ("rows to use: train, test or all (default: {} when the file has a "
                  "predefined split, else all)")
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
    fit.add_argument("--cv-folds", type=int, metavar="N",
                     help="number of cross-validation folds (default 3; not with --paper)")
    fit.add_argument("--jobs", type=_n_jobs, metavar="N",
                     help="folds fitted in parallel (default 1; -1: one per CPU core; not "
                          "with --paper)")
    fit.add_argument("--loss", choices=("squared", "squared_hinge", "logistic"),
                     help="loss on each observed label entry: squared (the paper's; the "
                          "default with --paper), squared_hinge (LinearSVC's; the default) "
                          "or logistic")
    fit.add_argument("--n-latent", type=int, metavar="K",
                     help="k, the number of latent labels: the rank of the label "
                          "factorization Y ~ UV, at most the number of labels (default: the "
                          "number of labels up to 100; 20 with --paper)")
    fit.add_argument("--n-groups", type=int, default=4, metavar="G",
                     help="g, the number of local groups of rows, found by k-means on the "
                          "features (default 4)")
    fit.add_argument("--lam2", type=float,
                     help="lambda2, weight of the ridge penalty on U, V and W; larger values "
                          "shrink the scores and can wipe out rare labels (default: chosen "
                          "in {16, 4, 2, 1}; 4 with --paper)")
    fit.add_argument("--lam3", type=float, default=1e-3,
                     help="lambda3, weight of the global label-correlation term (default "
                          "1e-3)")
    fit.add_argument("--lam4", type=float, default=1e-3,
                     help="lambda4, weight of the local (per-group) label-correlation terms "
                          "(default 1e-3)")
    fit.add_argument("--fit-intercept", action=argparse.BooleanOptionalAction,
                     help="add a constant feature, a bias per label (not in the paper's "
                          "model; default on, off with --paper)")
    fit.add_argument("--normalize-rows", action=argparse.BooleanOptionalAction,
                     help="scale every row of features to unit norm (not in the paper's "
                          "model; default: chosen by cross-validation; off with --paper)")
    fit.add_argument("--max-iter", type=int, metavar="N",
                     help="most outer iterations of the alternating minimization (default "
                          "200; 30 with --paper)")
    fit.add_argument("--tol", type=float, default=1e-4,
                     help="stop when an outer iteration lowers the objective by less than "
                          "this fraction (default 1e-4)")
    fit.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    fit.add_argument("--force", action="store_true", help="replace an existing model file")
    fit.add_argument("--verbose", "-v", action="store_true",
                     help="also print a line per fitted setting and fold (with --paper: the "
                          "objective after every round of the fit)")
    fit.set_defaults(run=_fit)

    predict = commands.add_parser(
        "predict", help="write a model's scores or labels for a data file to CSV",
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
    predict.add_argument("--labels", action="store_true",
                         help="write {0,1} labels instead of scores: 1 where a label's score "
                              "is above its threshold, tuned by cross-validation in 'glocal "
                              "fit' (the sign of the scores for a model fitted with --paper)")
    predict.add_argument("--top-k", type=_positive, metavar="K",
                         help="write {0,1} labels: 1 for the K best-scored labels of every "
                              "row")
    predict.add_argument("--xml", help=xml_help)
    predict.add_argument("--split", choices=("train", "test", "all"),
                         help=split_help.format("test"))
    predict.add_argument("--force", action="store_true", help="replace an existing CSV")
    predict.set_defaults(run=_predict)

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
    plot.add_argument("--out", required=True,
                      help="directory for the figures (created if missing)")
    plot.add_argument("--force", action="store_true", help="replace existing figures")
    plot.set_defaults(run=_plot)
    return parser


def _reproduce(args):
    from .reproduce import run_reproduction

    # results.csv is written after the first run, which can take minutes: refuse now.
    check_output(Path(args.out) / "results.csv", overwrite=True, follow_links=True)
    check_output(Path(args.out) / "report.md", overwrite=True, follow_links=True,
                 inputs=[args.paper_tables] if args.paper_tables else [])
    from .datasets.load import _HINT

    try:
        with _worker_warnings("reproduce"), _hint_replaced(_HINT, "give --data-dir or set "
                                                           "the GLOCAL_DATA environment "
                                                           "variable to the data directory"):
            run_reproduction(
                datasets=_names(args.datasets), methods=_names(args.methods),
                observed_fractions=_fractions(args.rho), n_repeats=args.repeats,
                data_dir=args.data_dir, out_dir=args.out, paper_tables=args.paper_tables,
                quick=args.quick, tune=not args.no_tune, small_clusters=args.small_clusters,
                n_jobs=args.jobs, random_state=args.seed,
                progress=lambda line: print(line, flush=True))
    except KeyboardInterrupt as exc:
        word, code = exit_status(exc)
        print(f"glocal reproduce: {word}; run the same command again to resume",
              file=sys.stderr)
        return code
    return 0


@contextmanager
def _hint_replaced(python_hint, hint):
    """Errors raised in the block with the Python API's advice (``data_dir=...``) said as
    the command's options."""
    try:
        yield
    except (OSError, ValueError) as exc:
        text = str(exc)
        if python_hint not in text:
            raise
        raise type(exc)(text.replace(python_hint, hint)) from None


def _load_data(path, args, default, model=None):
    """A data file's rows of one split: "train", "test" or "all" (default: ``default`` when
    the file has a predefined split, else all rows). With a saved ``model``, files without
    labels are accepted and svmlight files take the model's numbers of features and labels."""
    import numpy as np
    import scipy.sparse as sp

    from .datasets import load

    shape = {}
    if model is not None:
        shape = dict(unlabeled=True, n_features=model["model"].n_features_in_,
                     n_labels=len(model["label_names"]), index_base=model["index_base"])
    data = load(path, xml=args.xml, **shape)
    split = args.split or (default if "train_idx" in data else "all")
    data.described = str(path)
    if split != "all":
        if f"{split}_idx" not in data:
            raise ValueError(f"{path} has no predefined {split} split; use --split all")
        rows = data[f"{split}_idx"]
        data.X, data.Y = data.X[rows], data.Y[rows]
        data.described = _split_file(path, split)
    # Said here, with the file's name: the estimators' messages cannot name it.
    if not data.X.shape[0]:
        where = "" if split == "all" else f" in its {split} split"
        raise ValueError(f"{path}: no rows{where}")
    if not data.X.shape[1]:
        dropped = (" (identifier attributes, such as strings, are dropped)"
                   if Path(path).suffix.lower() == ".arff" else "")
        raise ValueError(f"{path}: no feature columns{dropped}")
    values = data.X.data if sp.issparse(data.X) else np.asarray(data.X)
    bad = values.size - np.count_nonzero(np.isfinite(values))
    if bad:
        raise ValueError(f"{path}: {counted(bad, 'feature value')} "
                         f"{'is' if bad == 1 else 'are'} NaN or infinite (missing values?); "
                         "fill them in before fitting or scoring")
    return data


def _split_file(path, split):
    """The file holding the rows of a predefined split: of a train/test pair of files
    (scene-train.arff and scene-test.arff), the split's own; else 'the SPLIT split of PATH'."""
    from .datasets.load import _dataset_in_directory, _with_test_part

    path = Path(path)
    files = _with_test_part(_dataset_in_directory(path) if path.is_dir() else path)
    if len(files) == 2:
        return str(files[0] if split == "train" else files[1])
    return f"the {split} split of {path}"


def _output(path, args, inputs=()):
    """Refuse now an output that could not be written later (see `glocal._io.check_output`):
    one that exists, without --force; an input of the command, a link or a special file."""
    check_output(path, overwrite=args.force, inputs=inputs)


def _fit(args):
    from ._validation import named_label_warnings
    from .datasets._base import known_names
    from .datasets.load import input_files

    import numpy as np

    _output(args.model, args, input_files(args.data, args.xml))
    chunked = Path(args.data).is_dir()
    if args.scheduler and not chunked:
        raise ValueError("--scheduler applies to a chunk directory, not to a data file")
    data = _chunk_directory(args) if chunked else _load_data(args.data, args, "train")
    if chunked and not args.paper:
        raise ValueError("a chunk directory is fitted through Dask, which fits the paper's "
                         "model only: add --paper (the recommended model fits a data file)")
    (n, d), l = data.X.shape, data.Y.shape[1]
    model = _fit_model(args, l)
    name = "GLOCAL()" if args.paper else "GLOCALCV()"
    print(f"fitting {name} to {counted(n, 'row')} x {counted(d, 'feature')}, "
          f"{counted(l, 'label')} of {data.described}{_search_plan(model)}", flush=True)
    with named_label_warnings(known_names(data.label_names)), _dask_client(args.scheduler):
        tic = time.perf_counter()
        model.fit(data.X, data.Y)
        seconds = time.perf_counter() - tic
        saved = {"label_names": list(data.label_names),
                 "feature_names": list(data.feature_names),
                 "index_base": data.get("index_base")}
        search = model
        if not args.paper:  # the refitted best setting is the model saved, with thresholds
            saved["thresholds"] = search.thresholds_
            model = search.best_estimator_
        model.set_params(verbose=0)  # how this command showed the fit, not the model's
        if chunked:  # a saved model holds numpy arrays only
            model.V_, model.groups_ = model.V_.compute(), model.groups_.compute()
            saved["training_rows"] = data.X.map_blocks(_row_digests, drop_axis=1,
                                                       dtype=np.uint64).compute()
        else:
            saved["training_rows"] = _row_digests(data.X)
    save_model(args.model, model, overwrite=args.force, **saved)
    if args.paper:
        what = (f"objective {model.objective_history_[-1]:.6g} after "
                f"{counted(model.n_iter_, 'outer iteration')}")
    else:
        what = (f"{settings_text(search.best_params_)} refitted on all rows, with each "
                "label's threshold tuned by the cross-validation")
    print(f"fitted {name} in {seconds:.1f} s ({what}); saved it to {args.model}")
    return 0


def _search_plan(model):
    """``: 8 settings (...) on 3 folds, 1 at a time`` for a GLOCALCV, else nothing."""
    import numpy as np

    from . import GLOCALCV

    if not isinstance(model, GLOCALCV):
        return ""
    grid = model.param_grid
    n_settings = int(np.prod([len(values) for values in grid.values()]))
    return (f": cross-validating {counted(n_settings, 'setting')} "
            f"({settings_text(grid) or 'none'}) on {model.cv} folds, {model.n_jobs} at a "
            "time")


def _fit_model(args, n_labels):
    """The estimator of 'glocal fit': the recommended GLOCALCV() with the options given
    explicitly fixed in it, or with --paper GLOCAL with the paper's defaults."""
    from . import GLOCAL, GLOCALCV
    from .model_selection import (DEFAULT_ESTIMATOR_PARAMS, DEFAULT_PARAM_GRID,
                                  MAX_DEFAULT_LATENT)

    for name in ("cv_folds", "jobs"):
        if getattr(args, name) is not None and args.paper:
            raise ValueError(f"--{name.replace('_', '-')} applies to the recommended model's "
                             "cross-validation, not with --paper")
    if args.n_latent is not None and args.n_latent > n_labels:
        raise ValueError(f"--n-latent {args.n_latent} is more than the {n_labels} labels of "
                         f"{args.data}: the latent labels are at most as many as the labels")
    given = {name: getattr(args, name) for name in
             ("loss", "n_latent", "lam2", "fit_intercept", "normalize_rows", "max_iter")
             if getattr(args, name) is not None}
    common = dict(n_groups=args.n_groups, lam3=args.lam3, lam4=args.lam4, tol=args.tol,
                  random_state=args.seed)
    verbose = 2 if args.verbose else 1  # 1: progress bars on a terminal
    if args.paper:
        return GLOCAL(**{"n_latent": 20, "lam2": 4.0, **given}, **common, verbose=verbose)
    folds = 3 if args.cv_folds is None else args.cv_folds
    jobs = 1 if args.jobs is None else args.jobs
    if folds < 2:
        raise ValueError(f"--cv-folds must be at least 2, got {folds}")
    base = GLOCAL(**{**DEFAULT_ESTIMATOR_PARAMS,
                     "n_latent": min(n_labels, MAX_DEFAULT_LATENT), **given}, **common)
    grid = {name: values for name, values in DEFAULT_PARAM_GRID.items() if name not in given}
    return GLOCALCV(base, grid, cv=folds, n_jobs=jobs, random_state=args.seed,
                    verbose=verbose)


def _chunk_directory(args):
    """The features and labels of a directory of .npy chunks as Dask arrays (each file is
    read by the worker that needs it; only the headers are read here)."""
    import dask
    import dask.array as da
    import numpy as np
    from sklearn.utils import Bunch

    if args.xml or args.split:
        raise ValueError("--xml and --split apply to data files, not to a chunk directory")
    parts = {kind: sorted(Path(args.data).glob(f"{kind}*.npy")) for kind in "XY"}
    if not parts["X"] or len(parts["X"]) != len(parts["Y"]):
        raise ValueError(f"{args.data}: a chunk directory holds X*.npy files and as many "
                         f"Y*.npy files with their labels; found {len(parts['X'])} and "
                         f"{len(parts['Y'])}")
    arrays = {}
    for kind, files in parts.items():
        headers = [_npy_header(file) for file in files]
        for file, header in zip(files, headers):
            if header.ndim != 2 or header.shape[1] != headers[0].shape[1]:
                raise ValueError(f"{file}: shape {header.shape}; every {kind} chunk must be "
                                 f"2-D with {headers[0].shape[1]} columns")
        arrays[kind] = da.concatenate([
            da.from_delayed(dask.delayed(np.load)(str(file)), header.shape, dtype=header.dtype)
            for file, header in zip(files, headers)])
        del headers  # close the memory maps
    for x, y, file in zip(arrays["X"].chunks[0], arrays["Y"].chunks[0], parts["Y"]):
        if x != y:
            raise ValueError(f"{file} has {y} rows, its features {x}")
    d, l = arrays["X"].shape[1], arrays["Y"].shape[1]
    # Named as in svmlight files, so that the model scores them.
    return Bunch(X=arrays["X"], Y=arrays["Y"], feature_names=[f"x{i}" for i in range(d)],
                 label_names=[str(j) for j in range(l)], described=args.data)


def _npy_header(file):
    """A chunk as a memory map (its header read, its rows not), or a one-line error naming
    the chunk."""
    import numpy as np

    if not file.is_file():  # reading a pipe would wait for a writer
        raise ValueError(f"{file}: not a regular file (a pipe or a device?)")
    try:
        chunk = np.load(file, mmap_mode="r", allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:  # cut, damaged or not a .npy file
        raise ValueError(f"{file}: not a readable .npy chunk: {one_line(exc)}") from None
    if not isinstance(chunk, np.ndarray) or chunk.dtype.kind not in "biuf":
        raise ValueError(f"{file}: a chunk must hold a numeric array, not "
                         f"{getattr(chunk, 'dtype', type(chunk).__name__)}")
    if chunk.ndim == 2 and not chunk.shape[0]:
        raise ValueError(f"{file}: a chunk without rows")
    return chunk


@contextmanager
def _dask_client(address):
    """A dask.distributed Client of the scheduler at ``address`` while in the block."""
    if address is None:
        yield
        return
    from distributed import Client

    with Client(address):
        yield


def _read_model(path):
    """A saved model with what the commands need beside it: its label names (``0``, ``1``,
    ... when the file has none), feature names, index base and training-row digests
    (see `glocal.persistence.load_model`: nothing in the file is executed, and the model has
    been checked to score a row of its features)."""
    import numpy as np

    from ._fitted import model_shape

    saved = load_model(path)
    model = saved["model"]
    n_labels = model_shape(model)[1]
    saved.setdefault("label_names", [str(j) for j in range(n_labels)])
    saved.setdefault("feature_names", [])
    saved.setdefault("index_base", None)
    # --labels cuts at the saved thresholds: those of glocal fit, or the model's own (a
    # GLOCALCV, or a Pipeline ending in one, saved from Python), else the paper's sign.
    last = getattr(model, "steps", [(None, model)])[-1][1]
    thresholds = saved.setdefault("thresholds",
                                  getattr(last, "thresholds_", np.zeros(n_labels)))
    labels, features = saved["label_names"], saved["feature_names"]
    rows = saved.get("training_rows")
    if not (_strings(labels) and len(labels) == n_labels and _strings(features)
            and len(features) in (0, model.n_features_in_)
            and saved["index_base"] in (None, 0, 1)
            and (rows is None or isinstance(rows, np.ndarray) and rows.dtype == np.uint64)
            and isinstance(thresholds, np.ndarray) and thresholds.shape == (n_labels,)
            and thresholds.dtype.kind == "f" and np.isfinite(thresholds).all()):
        raise ValueError(f"'{path}' is not a model saved by glocal: its label names, "
                         "feature names, index base, row digests or thresholds are wrong")
    return saved


def _strings(values):
    return isinstance(values, list) and all(isinstance(value, str) for value in values)


def _check_data(saved, data, path):
    """Refuse data the saved model was not fitted for."""
    from .datasets._base import known_names

    model, labels = saved["model"], saved["label_names"]
    if data.X.shape[1] != model.n_features_in_:
        hint = "" if data.Y.shape[1] else " (if the file has labels, name them with --xml)"
        raise ValueError(f"the model has {model.n_features_in_} features but {path} has "
                         f"{data.X.shape[1]}: it was fitted on other data{hint}")
    features = saved.get("feature_names")
    if features and known_names(features) and known_names(data.feature_names):
        differ = [name for name, own in zip(data.feature_names, features) if name != own]
        if differ:
            raise ValueError(f"{path}: features differ from the model's, e.g. "
                             f"'{differ[0]}' (a label not named by --xml?)")
    # Label names are compared where both files name their labels (svmlight files number
    # them, and unlabeled ones have none).
    theirs, ours = known_names(data.label_names), known_names(labels)
    if data.Y.shape[1] and (data.Y.shape[1] != len(labels)
                            or (theirs and ours and theirs != ours)):
        raise ValueError(f"{path}: its labels differ from the model's: it was fitted on "
                         "other data")


def _predict(args):
    import csv

    import numpy as np

    from .datasets.load import input_files
    from .thresholds import top_k_labels

    _output(args.out, args, [args.model, *input_files(args.data, args.xml)])
    saved = _read_model(args.model)
    data = _load_data(args.data, args, "test", model=saved)
    _check_data(saved, data, args.data)
    scores = saved["model"].decision_function(data.X)
    if args.top_k is not None:
        values, kind = top_k_labels(scores, args.top_k), f"the top {args.top_k} labels"
    elif args.labels:
        values, kind = (scores > saved["thresholds"]).astype(int), "labels"
    else:
        values, kind = scores, "scores"
    with atomic_output(args.out, overwrite=args.force) as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow([csv_text(name) for name in saved["label_names"]])
        writer.writerows(np.asarray(values).tolist())
    print(f"wrote {kind} of {counted(values.shape[0], 'row')} x "
          f"{counted(values.shape[1], 'label')} to {args.out}")
    return 0


def _evaluate(args):
    import numpy as np

    saved = _read_model(args.model)
    data = _load_data(args.data, args, "test", model=saved)
    _check_data(saved, data, args.data)
    X, Y = data.X, data.Y
    if not Y.shape[1]:
        raise ValueError(f"{args.data} has no labels to evaluate against; 'glocal predict' "
                         "scores it")
    n_rows, dropped = X.shape[0], ""
    if not args.keep_unlabeled:  # as the paper does
        keep = np.asarray(Y.sum(axis=1)).ravel() > 0
        X, Y = X[keep], Y[keep]
        dropped = (f"; dropped {counted(n_rows - X.shape[0], 'row')} without a positive "
                   "label (--keep-unlabeled keeps them)")
        if not X.shape[0]:
            raise ValueError(f"no row of {args.data} has a positive label")
    notes = []
    if saved.get("training_rows") is not None:
        seen = int(np.isin(_row_digests(X), saved["training_rows"]).sum())
        if seen == X.shape[0]:
            warnings.warn(f"the {X.shape[0]} rows scored are rows the model was fitted on: "
                          "these are training scores, higher than on new data")
        elif seen:  # public data sets hold duplicate rows across their splits
            notes.append(f"{seen} of them have the features of a training row")
    scores = saved["model"].decision_function(X)
    predicted = scores > saved["thresholds"]
    print(f"{counted(X.shape[0], 'row')} of {data.described}{dropped}"
          + "".join(f"; {note}" for note in notes))
    for short, name, value in _measures(Y, scores, predicted):
        print(f"{short:<8}{name:<24}{value:.4f}")
    if args.per_label:
        _print_label_report(Y, scores, predicted, saved["label_names"])
    return 0


def _measures(Y, scores, predicted):
    """(short name, name, value) of every measure 'glocal evaluate' prints."""
    import numpy as np

    from .metrics import (PAPER_NAMES, evaluate, macro_f1, micro_f1, ndcg_at_k,
                          precision_at_k)

    ranking = evaluate(Y, scores)
    rows = [(short, name, ranking[name]) for short, name in PAPER_NAMES.items()]
    rows.append(("", "label_auc (mean)", ranking["label_auc"]))
    for k in (1, 3, 5):
        rows.append((f"P@{k}", "precision_at_k", precision_at_k(Y, scores, k)))
    for k in (3, 5):
        rows.append((f"nDCG@{k}", "ndcg_at_k", ndcg_at_k(Y, scores, k)))
    rows += [("", "micro_f1", micro_f1(Y, predicted)),
             ("", "macro_f1", macro_f1(Y, predicted)),
             ("", "rows with no label", float(np.mean(predicted.sum(axis=1) == 0)))]
    return rows


def _print_label_report(Y, scores, predicted, label_names):
    """One line per label: support, AUC, precision, recall and F1 of the predicted sets."""
    from .metrics import label_report

    report = label_report(Y, scores, predicted, label_names)
    width = max(8, *(len(name) for name in report["label"]))
    print(f"\n{'label':<{width}} {'support':>8} {'auc':>7} {'precision':>9} {'recall':>7} "
          f"{'f1':>7}")
    for j, name in enumerate(report["label"]):
        print(f"{name:<{width}} {report['support'][j]:>8} {report['auc'][j]:>7.4f} "
              f"{report['precision'][j]:>9.4f} {report['recall'][j]:>7.4f} "
              f"{report['f1'][j]:>7.4f}")


def _row_digests(X):
    """A 64-bit digest of every row's nonzero entries (dense and sparse rows alike), to tell
    later whether scored rows were training rows."""
    import hashlib

    import numpy as np
    import scipy.sparse as sp

    X = sp.csr_matrix(X, dtype=np.float64)
    X.sum_duplicates()
    X.eliminate_zeros()
    digests = np.empty(X.shape[0], dtype=np.uint64)
    for i in range(X.shape[0]):
        row = slice(X.indptr[i], X.indptr[i + 1])
        key = X.indices[row].astype(np.int64).tobytes() + X.data[row].tobytes()
        digests[i] = int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little")
    return digests


def _names(text):
    return None if text is None else [name.strip() for name in text.split(",") if name.strip()]


def _fractions(text):
    if text is None:
        return None
    try:
        return [float(value) for value in _names(text)]
    except ValueError:
        raise ValueError(f"--rho takes comma-separated numbers, got {text!r}") from None


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


def _positive(text):
    """A whole number of at least 1."""
    value = _whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {value}")
    return value


def _plot(args):
    if not (args.model or args.results):
        raise ValueError("nothing to plot: give a model (--model) or reproduce results "
                         "(--results)")
    out = Path(args.out)
    names = (["correlations.png", "convergence.png"] if args.model else []) + (
        ["measure_vs_rho.png"] if args.results else [])
    for name in names:
        _output(out / name, args, [path for path in (args.model, args.results) if path])
    from .plotting import plot_convergence, plot_correlations, plot_measure_vs_observed

    figures = []  # (file name, function drawing it to a path)
    if args.model:
        saved = _read_model(args.model)
        model = _glocal_of(saved["model"], args.model)
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


def _glocal_of(model, path):
    """The GLOCAL-family estimator of a saved model (itself, GLOCALCV's refitted one, a
    Pipeline's last step), whose correlations and convergence are drawn."""
    from . import GLOCAL

    model = getattr(model, "steps", [(None, model)])[-1][1]
    model = getattr(model, "best_estimator_", model)
    if not isinstance(model, GLOCAL):
        raise ValueError(f"'{path}' holds a {type(model).__name__}: correlations and "
                         "convergence are drawn for GLOCAL, GLObal and loCAL models")
    return model


@contextmanager
def _one_line_warnings(command):
    """Print each distinct warning once, as one line without Python's source line (a
    reproduction repeats the same warning for every fit and fold)."""
    with warnings.catch_warnings():
        warnings.showwarning = _one_line_printer(command)
        yield


def _one_line_printer(command):
    """A ``warnings.showwarning`` that prints each distinct text once, on one line."""
    shown = set()

    def show(message, category, filename, lineno, file=None, line=None):
        text = " ".join(str(message).split())
        if text not in shown:
            shown.add(text)
            # One write per line: worker processes share the stream, and print's two
            # writes (text, newline) let their lines join.
            sys.stderr.write(f"glocal {command}: warning: {text}\n")
            sys.stderr.flush()
    return show


def _install_one_line_warnings(command):
    """Initializer of joblib's worker processes: their warnings print as ours do (each
    worker prints a distinct text once). The workers run cross-validation folds, whose
    label warnings the main process leaves out too (see glocal.reproduce.runner)."""
    from ._validation import LabelWarning

    warnings.showwarning = _one_line_printer(command)
    warnings.simplefilter("ignore", LabelWarning)


def _worker_warnings(command):
    """Run joblib's process pools (the cross-validation of ``--jobs`` > 1) with workers
    whose warnings are one line each, like the main process's."""
    from joblib import parallel_config

    return parallel_config(backend="loky", initializer=_install_one_line_warnings,
                           initargs=(command,))


# Optional dependencies and the extra of setup.cfg that installs each.
_EXTRAS = {"matplotlib": "plot", "dask": "dask", "distributed": "dask", "dask_ml": "dask"}


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        with stopping_workers(), _one_line_warnings(args.command):
            code = args.run(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except (OSError, ValueError) as exc:
        if isinstance(exc, BrokenPipeError):
            # The reader stopped (`glocal evaluate ... | head -1`): stop quietly, like a
            # tool killed by SIGPIPE, and keep Python from flushing into the pipe at exit.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
        # Missing or unwritable files, outputs that exist, unknown formats, mismatched
        # models: one line, no traceback.
        message = (f"'{exc.path}' exists; use --force to replace it"
                   if isinstance(exc, OutputExists) else one_line(exc))
        print(f"glocal {args.command}: error: {message}", file=sys.stderr)
        return 2
    except MemoryError as exc:  # e.g. a data file asking for more than the machine has
        reason = (one_line(exc) if str(exc).strip()
                  else "the data or the model needs more than is available")
        print(f"glocal {args.command}: error: out of memory: {reason}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        package = (exc.name or "").partition(".")[0]
        if package not in _EXTRAS:
            raise
        # An optional dependency the command needs: name the extra that installs it.
        extra = _EXTRAS[package]
        print(f"glocal {args.command}: error: {package} is not installed; "
              f'pip install "glocal[{extra}]"', file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        word, code = exit_status(exc)
        print(f"glocal {args.command}: {word}", file=sys.stderr)
        return code


if __name__ == "__main__":
    sys.exit(main())
