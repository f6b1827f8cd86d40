"""Real datasets for the tests: loaded once, skipped when absent, a failure under CI=true."""

import functools
import os
from pathlib import Path

import pytest

from glocal.datasets import load, load_dataset

DATA_DIR = Path(
    os.environ.get("GLOCAL_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data")
)


def real(source):
    """The real dataset, loaded once; skipped when absent, except that CI must have it."""
    path = DATA_DIR / source
    if not path.exists():
        reason = f"real data '{path}' not found; set GLOCAL_DATA to the data directory"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return _load_real(source)


@functools.lru_cache(maxsize=None)
def _load_real(source):
    if "/" in source:
        return load(DATA_DIR / source)
    return load_dataset(source, DATA_DIR)
