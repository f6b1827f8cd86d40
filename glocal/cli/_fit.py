"""``glocal fit``: fit a model on a data file and save it."""

import time
from contextlib import contextmanager
from pathlib import Path

from .._utils.io import one_line
from .._utils.progress import counted, settings_text
from ..persistence import save_model
from ._common import _load_data, _output, _row_digests


def run(args):
    import numpy as np

    from .._utils.validation import named_label_warnings
    from ..datasets import known_names
    from ..datasets.load import input_files

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
    if args.observed is not None:
        data.Y = _hide_labels(data, args)
    name = "GLOCAL()" if args.paper else "GLOCALCV()"
    print(f"fitting {name} to {counted(n, 'row')} x {counted(d, 'feature')}, "
          f"{counted(l, 'label')} of {data.described}{_observed_text(data.Y, args)}"
          f"{_search_plan(model)}", flush=True)
    with named_label_warnings(known_names(data.label_names)), _dask_client(args.scheduler):
        tic = time.perf_counter()
        model.fit(data.X, data.Y)
        seconds = time.perf_counter() - tic
        saved = {"label_names": list(data.label_names),
                 "feature_names": list(data.feature_names),
                 "index_base": data.get("index_base")}
        if args.observed is not None:  # so that `glocal plot --data` hides the same labels
            saved["hidden_labels"] = {"observed": args.observed, "seed": args.seed}
        # How this command showed the fit, not the model's (GLOCALCV's refitted one too).
        for fitted in (model, getattr(model, "best_estimator_", None)):
            if fitted is not None:
                fitted.set_params(verbose=0)
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
        what = (f"{settings_text(model.best_params_)} refitted on all rows, with each "
                "label's threshold tuned by the cross-validation")
    print(f"fitted {name} in {seconds:.1f} s ({what}); saved it to {args.model}")
    if not args.paper:
        _edge_hint(model)
    return 0


def _hide_labels(data, args):
    """The training labels with all but a fraction ``--observed`` of each label's positives
    and of its negatives hidden (NaN), as `glocal.protocol.sample_observed` hides them."""
    import numpy as np

    from ..protocol import sample_observed

    if Path(args.data).is_dir():
        raise ValueError("--observed applies to a data file, not to a chunk directory")
    missing = int(np.isnan(data.Y).sum())
    if missing:
        raise ValueError(f"--observed hides labels of complete data, but {data.described} "
                         f"already has {counted(missing, 'missing label')}")
    return sample_observed(data.Y, args.observed, random_state=args.seed)


def _observed_text(Y, args):
    """`` (3 of 10 label entries observed, ...)`` when labels are missing, else nothing."""
    import numpy as np

    if Path(args.data).is_dir() or not np.isnan(Y).any():
        return ""
    why = ("the others hidden by --observed" if args.observed is not None
           else "the missing ones are left out of the fit")
    return f" ({int(np.count_nonzero(~np.isnan(Y)))} of {Y.size} label entries observed; {why})"


def _edge_hint(search):
    """One line when the chosen lam2 is the smallest or the largest value searched: the best
    value may lie beyond the grid."""
    values = search.param_grid.get("lam2", [])
    best = search.best_params_.get("lam2")
    if len(values) < 2 or best not in (min(values), max(values)):
        return
    side, factor = ("smallest", 0.5) if best == min(values) else ("largest", 2.0)
    beyond = " ".join(f"{best * factor ** i:g}" for i in range(3))
    print(f"hint: lam2={best:g} is the {side} value searched, so a value beyond it may fit "
          f"better; search further with --lam2 {beyond}")


def _search_plan(model):
    """``: 8 settings (...) on 3 folds, 1 at a time`` for a GLOCALCV, else nothing."""
    import numpy as np

    from .. import GLOCALCV

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
    from .. import GLOCAL, GLOCALCV
    from ..model_selection import (
        DEFAULT_ESTIMATOR_PARAMS,
        DEFAULT_PARAM_GRID,
        MAX_DEFAULT_LATENT,
    )

    for name in ("cv_folds", "jobs"):
        if getattr(args, name) is not None and args.paper:
            raise ValueError(f"--{name.replace('_', '-')} applies to the recommended model's "
                             "cross-validation, not with --paper")
    if args.n_latent is not None and args.n_latent > n_labels:
        raise ValueError(f"--n-latent {args.n_latent} is more than the {n_labels} labels of "
                         f"{args.data}: the latent labels are at most as many as the labels")
    lam2 = None if args.lam2 is None else list(dict.fromkeys(args.lam2))  # in order, once
    if args.paper and lam2 is not None and len(lam2) > 1:
        raise ValueError("--lam2 takes one value with --paper (several are searched by the "
                         "recommended model's cross-validation)")
    given = {name: getattr(args, name) for name in
             ("loss", "n_latent", "fit_intercept", "normalize_rows", "max_iter", "tol")
             if getattr(args, name) is not None}
    if lam2 is not None and len(lam2) == 1:
        given["lam2"] = lam2[0]
    common = dict(n_groups=args.n_groups, lam3=args.lam3, lam4=args.lam4,
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
    if lam2 is not None and len(lam2) > 1:
        grid["lam2"] = lam2
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
