"""Stopping a command's work, its worker processes included, on SIGINT and SIGTERM."""

import signal
import sys
import threading
from contextlib import contextmanager


class Terminated(KeyboardInterrupt):
    """Raised in the main thread on SIGTERM, so that the work stops as on Ctrl-C: joblib
    aborts its parallel calls and the command exits with 143 instead of dying at once and
    leaving its workers computing."""


def exit_status(interrupt):
    """What the command says and returns when stopped by ``interrupt``."""
    return ("terminated", 143) if isinstance(interrupt, Terminated) else ("interrupted", 130)


def _terminate(signum, frame):
    raise Terminated


@contextmanager
def stopping_workers():
    """While in the block SIGTERM raises `Terminated` (in the main thread); when the block
    ends, however it ends, joblib's reusable worker processes are stopped: left alone, they
    would finish their task, then idle for minutes."""
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        _stop_workers()


def _stop_workers():
    """Kill the workers of joblib's reusable loky executor, if one was started."""
    module = sys.modules.get("joblib.externals.loky.reusable_executor")
    executor = getattr(module, "_executor", None)
    if executor is not None:
        executor.shutdown(wait=False, kill_workers=True)
