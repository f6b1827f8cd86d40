"""Files in and out: outputs written all or nothing, never over a file the user did not hand
over; and errors of reading told in one line."""

import os
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path

_REPLACE_HINT = "pass overwrite=True to replace it"


def one_line(exc):
    """An exception's message on one line, for an error the user can fix.

    An OSError gives its reason and file name (no errno); another exception its text with
    runs of whitespace made single spaces; its class name when the text is empty or cannot
    be formed (liac-arff's own formatting fails on a stray ``%``).
    """
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror + (f": '{exc.filename}'" if exc.filename else "")
    else:
        try:
            text = str(exc)
        except (TypeError, ValueError):
            text = ""
    return " ".join(text.split()) or type(exc).__name__


def check_output(path, *, overwrite=False, hint=_REPLACE_HINT):
    """Raise now the error that writing ``path`` later would raise.

    Lets a caller refuse an output before spending minutes on what it would hold. A folder
    of ``path`` that does not exist yet is fine: `atomic_output` creates it.

    Parameters
    ----------
    path : path-like
        The file to be written.
    overwrite : bool, default=False
        Whether an existing file at ``path`` may be replaced.
    hint : str, default="pass overwrite=True to replace it"
        How to replace an existing file, for the FileExistsError message.

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``overwrite`` is False.
    IsADirectoryError
        If ``path`` is a directory.
    NotADirectoryError
        If a folder of ``path`` is a file.
    PermissionError or OSError
        If the deepest existing folder of ``path`` cannot be written in.
    """
    path = Path(path)
    if path.is_dir():
        raise IsADirectoryError(f"'{path}' is a directory; name a file to write")
    if path.exists() and not overwrite:
        raise FileExistsError(f"'{path}' exists; {hint}")
    folder = path.parent
    while not folder.exists():  # also False below a file (ENOTDIR)
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(f"cannot write '{path}': '{folder}' is a file, not a directory")
    try:  # a real attempt: permission bits say nothing for root or read-only mounts
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        raise type(exc)(f"cannot write '{path}': directory '{folder}': "
                        f"{exc.strerror or exc}") from None


@contextmanager
def atomic_output(path, *, overwrite=False, binary=False):
    """Open a temporary file beside ``path``; when the block ends without error, move it there.

    Readers see the old file or the new one, never a part (`os.replace` is atomic within a
    file system). A file already at ``path`` is replaced only with ``overwrite=True``.
    Missing folders of ``path`` are created.

    Raises
    ------
    FileExistsError
        If ``path`` exists and ``overwrite`` is False.
    OSError
        If ``path`` cannot be written (see `check_output`); the message names ``path``,
        not the temporary file.
    """
    path = Path(path)
    check_output(path, overwrite=overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        try:
            file = open(tmp, "xb" if binary else "x",
                        **({} if binary else {"encoding": "utf-8", "newline": ""}))
        except OSError as exc:
            raise type(exc)(f"cannot write '{path}': {exc.strerror or exc}") from None
        with file:
            yield file
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
