"""The ``glocal`` command (also ``python -m glocal``): `main` runs one command.

One module per command (``_demo``, ``_fit``, ``_predict``, ``_evaluate``, ``_plot``,
``_inspect``, ``_reproduce``), each with its ``run(args)``; ``_parser`` holds the options of
all of them, ``_common`` what they share (reading data and saved models, refusing outputs
early, warnings on one line) and ``_process`` the stopping of their work on SIGINT and
SIGTERM. The commands call the library's public API only, as a user's script would.
"""

import os
import sys

from .._utils.io import OutputExists, one_line
from ._common import _one_line_warnings
from ._parser import build_parser

__all__ = ["main", "build_parser"]
from ._process import exit_status, stopping_workers

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
