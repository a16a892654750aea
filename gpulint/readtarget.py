"""A target's bytes, read safely: what may not be read is a YML005 problem, never an error.

Shared by the runner (:mod:`gpulint.runner`), the per-target work it calls
(:mod:`gpulint.rendertarget`, :mod:`gpulint.fixtarget`), the cluster pre-pass and
``inspect``; with the garbage collector's pause while one file is linted.
"""

from __future__ import annotations

import gc
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from gpulint.discover import Target
from gpulint.loader.document import Problem
from gpulint.model import Span

#: Larger inputs are not read (YML005): parsing one would take minutes and gigabytes, and no
#: manifest is this big (the API server takes objects of at most 3 MiB).
MAX_FILE_BYTES = 256 << 20


def _too_large() -> Problem:
    return Problem(
        "YML005",
        Span(1, 1, 1, 1),
        f"larger than {MAX_FILE_BYTES >> 20} MiB: not linted (no manifest is this big)",
    )


def _outside_link(path: str) -> bool:
    """Whether ``path`` is a symbolic link that resolves outside its repository.

    The repository is the nearest folder at or above the link holding ``.git``; without one,
    the working directory when the link is inside it, else the link's own folder. A pull
    request can commit ``deploy.yaml -> /home/runner/.kube/config``: read, its names and
    values would be printed in findings and ``inspect``. A link inside the repository
    (``overlays/prod/pod.yaml -> ../../base/pod.yaml``) is read as usual.
    """
    if not os.path.islink(path):
        return False
    folder = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    root = next((p for p in _ancestors(folder) if os.path.exists(os.path.join(p, ".git"))), None)
    if root is None:
        cwd = os.path.realpath(os.getcwd())
        root = cwd if _inside(folder, cwd) else folder
    return not _inside(os.path.realpath(path), root)


def _ancestors(folder: str) -> Iterator[str]:
    while True:
        yield folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


#: A file read: its bytes, or the YML005 problem that kept it from being read.
Read = tuple[bytes | None, Problem | None]


def read_target(target: Target) -> Read:
    """The file's bytes, or a YML005 problem saying why it could not be read."""
    try:
        if target.path is None:
            raw = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
            return (None, _too_large()) if len(raw) > MAX_FILE_BYTES else (raw, None)
        if _outside_link(target.path):
            return None, Problem(
                "YML005",
                Span(1, 1, 1, 1),
                "a symbolic link to a file outside the repository: not linted",
            )
        # Never open a FIFO or device: opening blocks or reads forever.
        info = os.stat(target.path)
        if stat.S_ISDIR(info.st_mode):
            # A folder the walk could not list (discover._walk): say why.
            os.scandir(target.path).close()
            return None, Problem("YML005", Span(1, 1, 1, 1), "a directory: not linted")
        if not stat.S_ISREG(info.st_mode):
            what = "a FIFO" if stat.S_ISFIFO(info.st_mode) else "not a regular file"
            return None, Problem("YML005", Span(1, 1, 1, 1), f"{what}: not linted")
        if info.st_size > MAX_FILE_BYTES:
            return None, _too_large()
        with open(target.path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)  # the size may have changed since stat
        return (None, _too_large()) if len(raw) > MAX_FILE_BYTES else (raw, None)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        what = "directory" if target.path is not None and os.path.isdir(target.path) else "file"
        return None, Problem("YML005", Span(1, 1, 1, 1), f"cannot read the {what}: {reason}")


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while one file is linted.

    A file's documents are acyclic and freed by reference counting, but while a big file is
    linted they hold millions of objects that every full collection walks again: two thirds
    of the time on a 50 MB manifest. Anything cyclic left behind is collected after.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
