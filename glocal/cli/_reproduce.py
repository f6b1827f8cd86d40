"""``glocal reproduce``: the paper's result tables."""

import sys
from pathlib import Path

from .._utils.io import check_output
from ._common import _fractions, _hint_replaced, _names, _worker_warnings
from ._process import exit_status


def run(args):
    from ..reproduce import run_reproduction

    # results.csv is written after the first run, which can take minutes: refuse now.
    check_output(Path(args.out) / "results.csv", overwrite=True, follow_links=True)
    check_output(Path(args.out) / "report.md", overwrite=True, follow_links=True,
                 inputs=[args.paper_tables] if args.paper_tables else [])
    from ..datasets.load import _HINT

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
