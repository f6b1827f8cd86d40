"""Files in and out: outputs written all or nothing, never over a file the user did not hand
over; and errors of reading told in one line."""

import errno
import os
import stat
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path


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


# What a spreadsheet takes for the start of a formula in a cell of a CSV file it opens.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_text(text):
    """A text cell for a CSV file, with a leading apostrophe when it starts like a formula
    (``=``, ``+``, ``-``, ``@``, a tab or a carriage return), so that opening the file in a
    spreadsheet shows the text instead of running it (CSV injection)."""
    text = str(text)
    return "'" + text if text.startswith(_FORMULA_START) else text


def memory_budget():
    """Bytes that reading one file may take: ``$GLOCAL_MEMORY_BUDGET`` GiB when set, else a
    quarter of the machine's physical memory. Files whose declared sizes exceed it (a model
    file's members, a ``.mat`` file's matrices, an svmlight file's feature count) are refused
    before anything is read."""
    given = os.environ.get("GLOCAL_MEMORY_BUDGET")
    if given:
        try:
            value = float(given)
        except ValueError:
            value = -1.0
        if not value > 0:
            raise ValueError(f"GLOCAL_MEMORY_BUDGET must be a positive number of GiB, got "
                             f"{given!r}")
        return value * 2**30
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 4
    except (AttributeError, ValueError, OSError):
        return float("inf")


# Data that expands more than this many times from its stored (compressed) bytes, beyond
# the size below, is a bomb: compression gains far less on real data and on model files.
_MAX_EXPANSION = 200
_EXPANSION_FLOOR = 64 * 2**20


def check_declared_size(declared, stored, what):
    """Refuse, before reading it, ``what`` whose declared size in bytes exceeds the memory
    budget (`memory_budget`), or expands like a bomb from its ``stored`` bytes.

    Raises
    ------
    ValueError
        Saying what and by how much, in one line (the caller names the file).
    """
    budget = memory_budget()
    if declared > budget:
        raise ValueError(f"{what} would take {declared / 2**30:.3g} GiB, more than the "
                         f"memory budget of {budget / 2**30:.3g} GiB (GLOCAL_MEMORY_BUDGET)")
    if declared > _EXPANSION_FLOOR and declared > _MAX_EXPANSION * max(stored, 1):
        raise ValueError(f"{what} would expand from {stored} stored bytes to {declared} (a "
                         "compression bomb?)")


class OutputExists(FileExistsError):
    """An output file exists and was not to be replaced; ``path`` names it."""

    def __init__(self, path):
        super().__init__(f"'{path}' exists; pass overwrite=True to replace it")
        self.path = path


_SPECIAL = ((stat.S_ISFIFO, "a named pipe"), (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _existing_target(path, overwrite, follow_links):
    """The file to write for output ``path``: ``path`` itself or, with ``follow_links``, the
    file a symbolic link there points to. Refuses directories, pipes, devices and sockets
    always, an existing file unless ``overwrite``, and a link unless ``follow_links``."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return path
    except NotADirectoryError:
        return path  # a folder of path is a file: said by the caller
    if stat.S_ISLNK(info.st_mode):
        target = Path(os.path.realpath(path))
        if not follow_links:
            raise FileExistsError(f"'{path}' is a symbolic link to '{target}'; glocal does "
                                  "not write through links: to replace that file, name it "
                                  "as the output")
        return _existing_target(target, overwrite, False)
    if stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(f"'{path}' is a directory; name a file to write")
    for is_kind, kind in _SPECIAL:
        if is_kind(info.st_mode):
            raise ValueError(f"cannot write '{path}': it is {kind}, not a regular file")
    if not overwrite:
        raise OutputExists(path)
    return path


def check_output(path, *, overwrite=False, inputs=(), follow_links=False):
    """Raise now the error that writing ``path`` later would raise.

    Lets a caller refuse an output before spending minutes on what it would hold. A folder
    of ``path`` that does not exist yet is fine: `atomic_output` creates it.

    Parameters
    ----------
    path : path-like
        The file to be written.
    overwrite : bool, default=False
        Whether an existing regular file at ``path`` may be replaced.
    inputs : iterable of path-like, default=()
        The files the same work reads: ``path`` may not be one of them (the same file by
        device and inode, whatever the names and links), even with ``overwrite``.
    follow_links : bool, default=False
        Whether a symbolic link at ``path`` stands for the file it points to (which is then
        the one replaced); otherwise a link is refused.

    Raises
    ------
    OutputExists (a FileExistsError)
        If ``path`` exists and ``overwrite`` is False.
    FileExistsError
        If ``path`` is a symbolic link and ``follow_links`` is False.
    ValueError
        If ``path`` is one of ``inputs``, or a named pipe, a device or a socket.
    IsADirectoryError
        If ``path`` is a directory.
    NotADirectoryError
        If a folder of ``path`` is a file.
    PermissionError or OSError
        If the deepest existing folder of ``path`` cannot be written in.
    """
    path = Path(path)
    _check_not_an_input(path, inputs)
    path = _existing_target(path, overwrite, follow_links)
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


def _check_not_an_input(path, inputs):
    try:
        own = os.stat(path)
    except OSError:
        return  # nothing there yet (or unreadable): no input can be it
    for given in inputs:
        try:
            other = os.stat(given)
        except (OSError, TypeError, ValueError):
            continue
        if (own.st_dev, own.st_ino) == (other.st_dev, other.st_ino):
            same = "" if os.path.abspath(given) == os.path.abspath(path) else f" ('{given}')"
            raise ValueError(f"'{path}' is an input of this command{same}; name another "
                             "file to write")


@contextmanager
def atomic_output(path, *, overwrite=False, binary=False, follow_links=False):
    """Open a temporary file beside ``path``; when the block ends without error, move it there.

    Readers see the old file or the new one, never a part. Without ``overwrite`` the file
    is created exclusively: it is linked to ``path`` by a call that fails if ``path``
    appeared meanwhile, so of several writers at once exactly one succeeds and the others
    raise `OutputExists`. With ``overwrite`` an existing regular file is replaced by
    `os.replace` (atomic within a file system); directories, pipes, devices and sockets
    never are, nor symbolic links unless ``follow_links`` (then the file a link points to
    is replaced). Missing folders of ``path`` are created.

    Raises
    ------
    OutputExists (a FileExistsError)
        If ``path`` exists, or appears while writing, and ``overwrite`` is False.
    OSError, ValueError
        If ``path`` cannot be written (see `check_output`); every message names ``path``,
        never the temporary file.
    """
    path = _existing_target(Path(path), overwrite, follow_links)
    check_output(path, overwrite=overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        try:
            file = open(tmp, "xb" if binary else "x",
                        **({} if binary else {"encoding": "utf-8", "newline": ""}))
            with file:
                yield file
                file.flush()
                os.fsync(file.fileno())
            if overwrite:
                _existing_target(path, overwrite, follow_links=False)  # still a plain file
                os.replace(tmp, path)
            else:
                _link_exclusively(tmp, path)
        except OutputExists:
            raise
        except OSError as exc:  # said of the output, not of the temporary file
            raise type(exc)(exc.errno, f"cannot write '{path}': "
                                       f"{exc.strerror or one_line(exc)}") from None
    finally:
        tmp.unlink(missing_ok=True)


def _link_exclusively(tmp, path):
    """Give the written file ``tmp`` the name ``path`` unless that name exists."""
    try:
        os.link(tmp, path)
        return
    except FileExistsError:
        raise OutputExists(path) from None
    except OSError as exc:  # no hard links on this file system: reserve the name first
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK,
                             errno.EACCES):
            raise
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
    except FileExistsError:
        raise OutputExists(path) from None
    os.replace(tmp, path)
