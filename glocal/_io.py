"""Writing outputs safely: all or nothing, and never over a file the user did not hand over."""

import os
import uuid
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_output(path, *, overwrite=False, binary=False):
    """Open a temporary file beside ``path``; when the block ends without error, move it there.

    Readers see the old file or the new one, never a part (`os.replace` is atomic within a
    file system). A file already at ``path`` is replaced only with ``overwrite=True``.

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``overwrite`` is False.
    """
    path = Path(path)
    if path.exists() and not overwrite:
        raise FileExistsError(f"'{path}' exists; pass overwrite=True (--force) to replace it")
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "xb" if binary else "x", **({} if binary else {"encoding": "utf-8",
                                                                       "newline": ""})) as file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
