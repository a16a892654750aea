"""Files gpulint writes: reports (``--output``, ``--write-baseline``) and fixed files
(``--fix``), atomically and never through a symbolic link a linted tree could plant."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable

from gpulint.errors import GpulintError


class UnsafeOutput(GpulintError, OSError):
    """``--output`` names a path gpulint refuses to write through (a symbolic link, ...)."""


def _symlink_on_the_way(path: str) -> str | None:
    """The first symbolic link among the parts of ``path`` a pull request could plant.

    That is the file itself and, for a relative path (or an absolute one inside the working
    directory), every folder between the working directory and it: ``--output
    reports/gpulint.sarif`` must not write through a ``reports`` link committed in the tree.
    The folders above the working directory (``/tmp`` is a link on macOS) are the user's.
    """
    if os.path.islink(path):
        return path
    if os.path.isabs(path):
        cwd = os.getcwd().rstrip(os.sep)
        if not path.startswith(cwd + os.sep):
            return None
        base, rest = cwd, path[len(cwd) + 1 :]
    else:
        base, rest = "", path
    parts = [p for p in rest.split(os.sep) if p]
    for i in range(1, len(parts)):
        folder = os.path.join(base, *parts[:i])
        if os.path.islink(folder):
            return folder
    return None


def _link_refusal(path: str, link: str) -> str:
    what = "it" if link == path else link
    hint = "; `--output -` is standard output" if path.startswith("/dev/") else ""
    return f"{what} is a symbolic link (a report is never written through one{hint})"


def unwritable(path: str) -> str | None:
    """Why ``path`` cannot take a report, asked before any file is linted (as ruff does):
    a run never lints for minutes to fail on its ``--output``. Missing parent folders are
    created, as the write would; a file is made and removed in the folder to know the
    folder takes one. None: it can (the write itself may still fail, and says so)."""
    import tempfile

    link = _symlink_on_the_way(path)
    if link is not None:
        return f"refusing to write {path}: {_link_refusal(path, link)}"
    if os.path.isdir(path):
        return f"cannot write {path}: it is a directory"
    if os.path.exists(path):
        return None if os.access(path, os.W_OK) else f"cannot write {path}: permission denied"
    parent = os.path.dirname(path) or os.curdir
    try:
        os.makedirs(parent, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".gpulint-", suffix=".tmp", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or type(exc).__name__}"
    return None


def written(path: str, content: Callable[[], str]) -> str | None:
    """Write ``content()`` to ``path`` (:func:`write_file`); None, or why it was not."""
    try:
        write_file(path, content())
    except UnsafeOutput as exc:
        return f"refusing to write {path}: {exc}"
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or type(exc).__name__}"
    return None


def write_file(path: str, content: str | bytes) -> None:
    """Write the report atomically, creating missing parent folders (as ruff's --output-file).

    The report goes to a new temporary file in the same folder (``mkstemp``: created with
    ``O_EXCL``, so nothing planted at its name is followed), which then replaces ``path`` in
    one ``os.replace``: a run that fails half-way leaves the previous report as it was,
    never a truncated one, and a reader never sees half a report. The rename would replace
    a link named ``path`` rather than follow it, but a symbolic link is refused before that
    (:class:`UnsafeOutput`): a ``gpulint.sarif`` link committed in a pull request must
    neither redirect the report outside the tree nor be silently replaced. A FIFO or a
    character device (``/dev/null``, a named pipe) is written in place.
    """
    import errno
    import stat
    import tempfile

    link = _symlink_on_the_way(path)
    if link is not None:
        raise UnsafeOutput(_link_refusal(path, link))
    data = content.encode("utf-8") if isinstance(content, str) else content
    try:
        mode: int | None = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
            raise UnsafeOutput("it is not a regular file, a FIFO or a character device")
        with open(os.open(path, os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)), "wb") as stream:
            stream.write(data)
        return
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".gpulint-", suffix=".tmp", dir=parent or os.curdir)
    try:
        with open(fd, "wb") as stream:
            stream.write(data)
        # mkstemp makes the file 0600: give it the permissions of the report it replaces,
        # or those open() gives a new file.
        os.chmod(temp, stat.S_IMODE(mode) if mode is not None else _new_file_mode())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def write_fixed(path: str, data: bytes) -> str | None:
    """Write a fixed file in place, atomically (:func:`write_file`); the problem, if any.

    The linted tree may be a stranger's pull request: a file is never written through a
    symbolic link (the file itself, or a folder between the working directory, or the
    repository the file is in, and it), so a fix cannot reach outside the tree, and a file
    that is no longer a regular file is left.
    """
    import stat

    link = _symlink_on_the_way(path) or _linked_folder_in_repository(path)
    if link is not None:
        what = "it" if link == path else link
        return f"refusing to write the fixes of {path}: {what} is a symbolic link"
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return f"not fixed: {path} is not a regular file"
        write_file(path, data)
    except UnsafeOutput as exc:
        return f"refusing to write the fixes of {path}: {exc}"
    except OSError as exc:
        return f"cannot write the fixes of {path}: {exc.strerror or type(exc).__name__}"
    return None


def _linked_folder_in_repository(path: str) -> str | None:
    """A symbolic link among the folders between ``path`` and the repository it is in (the
    nearest folder above it holding ``.git``), for a path outside the working directory,
    which :func:`_symlink_on_the_way` leaves to the user."""
    folder = os.path.dirname(os.path.abspath(path))
    chain = []
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            break
        chain.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None  # not in a repository: the folders are the user's
        folder = parent
    return next((f for f in reversed(chain) if os.path.islink(f)), None)


def _new_file_mode() -> int:
    """0o666 less the umask: the mode ``open(path, "w")`` creates a file with."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask
