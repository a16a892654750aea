"""A target's bytes, read safely: what may not be read is a YML005 problem, never an error.

Shared by the runner (:mod:`gpulint.lint.runner`), the per-target work it calls
(:mod:`gpulint.render.target`, :func:`gpulint.fix.loop.fix_target`), the cluster pre-pass and
``inspect``; with the garbage collector's pause while one file is linted.
"""

from __future__ import annotations

import errno
import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from gpulint import codes
from gpulint.loader.document import Problem
from gpulint.model import Span
from gpulint.util import safefile
from gpulint.util.discover import Target

#: Larger inputs are not read (YML005): parsing one would take minutes and gigabytes, and no
#: manifest is this big (the API server takes objects of at most 3 MiB).
MAX_FILE_BYTES = 256 << 20


def _too_large() -> Problem:
    return Problem(
        codes.UNREADABLE_FILE,
        Span(1, 1, 1, 1),
        f"larger than {MAX_FILE_BYTES >> 20} MiB: not linted (no manifest is this big)",
    )


#: A file read: its bytes, or the YML005 problem that kept it from being read.
Read = tuple[bytes | None, Problem | None]


def read_target(target: Target) -> Read:
    """The file's bytes, or a YML005 problem saying why it could not be read."""
    try:
        if target.path is None:
            raw = sys.stdin.buffer.read(MAX_FILE_BYTES + 1)
            return (None, _too_large()) if len(raw) > MAX_FILE_BYTES else (raw, None)
        # A link out of the repository (its names and values would be printed), a FIFO or
        # a device (opening blocks or reads forever): never opened (gpulint.util.safefile).
        raw, why = safefile.read_regular(target.path, MAX_FILE_BYTES)
        if why == safefile.DIRECTORY:
            # A folder the walk could not list (discover._walk): say why.
            os.scandir(target.path).close()
        if why == safefile.LARGE:
            return None, _too_large()
        if why is not None:
            return None, Problem(codes.UNREADABLE_FILE, Span(1, 1, 1, 1), f"{why}: not linted")
        return raw, None
    except OSError as exc:
        missing = exc.errno in (errno.ENOENT, errno.ENOTDIR)
        if missing and target.path is not None and os.path.islink(target.path):
            # A link to a file the repository does not hold (a docs folder's link to a moved
            # file): nothing in it is known to be wrong, so it is no reason to fail a run.
            message = "a symbolic link to a file that does not exist: not linted"
            return None, Problem(codes.UNREADABLE_FILE, Span(1, 1, 1, 1), message, severity="info")
        reason = exc.strerror or type(exc).__name__
        what = "directory" if target.path is not None and os.path.isdir(target.path) else "file"
        return None, Problem(
            codes.UNREADABLE_FILE, Span(1, 1, 1, 1), f"cannot read the {what}: {reason}"
        )


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
