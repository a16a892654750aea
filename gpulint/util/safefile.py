"""A file of the linted tree read without the reads a hostile tree could turn against the run.

A pull request can commit ``deploy.yaml -> /home/runner/.kube/config`` (read, its names and
values would be printed in findings), ``kustomization.yaml -> /dev/stdin`` or a FIFO (opening
blocks, reading never ends), or a file of gigabytes. :func:`read_regular` refuses each one and
says which; it is how manifests (:mod:`gpulint.loader.target`) and kustomization files
(:mod:`gpulint.render.trees`) are read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

#: Why a file was not read (the second item of what :func:`read_regular` returns).
OUTSIDE = "a symbolic link to a file outside the repository"
DIRECTORY = "a directory"
FIFO = "a FIFO"
SPECIAL = "not a regular file"
LARGE = "too large"


def outside_link(path: str) -> bool:
    """Whether ``path`` is a symbolic link that resolves outside its repository.

    The repository is the nearest folder at or above the link holding ``.git``; without one,
    the working directory when the link is inside it, else the link's own folder. A link
    inside the repository (``overlays/prod/pod.yaml -> ../../base/pod.yaml``) is read as
    usual.
    """
    if not os.path.islink(path):
        return False
    root = repository_root(os.path.realpath(os.path.dirname(os.path.abspath(path))))
    return not _inside(os.path.realpath(path), root)


def repository_root(folder: str) -> str:
    """The repository holding ``folder`` (a real path): the nearest folder at or above it
    with ``.git``; without one, the working directory when ``folder`` is inside it, else
    ``folder`` itself."""
    root = next((p for p in ancestors(folder) if os.path.exists(os.path.join(p, ".git"))), None)
    if root is None:
        cwd = os.path.realpath(os.getcwd())
        root = cwd if _inside(folder, cwd) else folder
    return root


def ancestors(folder: str) -> Iterator[str]:
    """``folder`` and every folder above it, up to the file system's root."""
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def read_regular(path: str, limit: int) -> tuple[bytes | None, str | None]:
    """The bytes of the regular file ``path`` (at most ``limit``), or why it was not read:
    :data:`OUTSIDE`, :data:`DIRECTORY`, :data:`FIFO`, :data:`SPECIAL` (a device, a socket,
    ``/dev/stdin``) or :data:`LARGE`. Nothing but a regular file inside the repository is
    ever opened. An ``OSError`` (a missing file, no permission) is raised."""
    if outside_link(path):
        return None, OUTSIDE
    info = os.stat(path)  # never open a FIFO or device: opening blocks or reads forever
    if stat.S_ISDIR(info.st_mode):
        return None, DIRECTORY
    if not stat.S_ISREG(info.st_mode):
        return None, FIFO if stat.S_ISFIFO(info.st_mode) else SPECIAL
    if info.st_size > limit:
        return None, LARGE
    # A link swapped for a FIFO since the stat: O_NONBLOCK keeps the open from waiting.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, SPECIAL
        raw = fh.read(limit + 1)  # the size may have changed since stat
    return (None, LARGE) if len(raw) > limit else (raw, None)
