"""The reader for gpulint's own YAML files: configuration and declarative rules."""

from __future__ import annotations

import os
import stat

from gpulint.errors import GpulintError
from gpulint.loader.decoding import decode
from gpulint.loader.document import Document
from gpulint.loader.stream import load_text

#: gpulint's own files are small (the largest real configuration is a few KiB); a bigger one
#: is refused rather than composed, so a file in a pull request cannot make the run hold
#: gigabytes before it has even started linting.
MAX_OWN_FILE_BYTES = 1 << 20


class SourceError(GpulintError):
    """A small YAML file (configuration, declarative rule) that cannot be used.

    ``problems`` are ``(line, message)`` pairs; line is None when the file was not read.
    """

    def __init__(self, problems: list[tuple[int | None, str]]) -> None:
        super().__init__(problems[0][1])
        self.problems = problems


def read_regular(path: os.PathLike[str] | str, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of a regular file (more than ``limit``: too large).

    OSError when it cannot be read, also for a FIFO, device or folder under the name
    (``cannot read: {exc.strerror or exc}`` then reads "not a regular file").
    """
    # O_NONBLOCK: a FIFO planted under the name must not block the open; it is then
    # refused as not a regular file.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise OSError("not a regular file")
        return fh.read(limit + 1)


def load_one_document(path: os.PathLike[str] | str) -> Document | None:
    """The single document of a YAML file gpulint itself reads, or None when it is empty.

    Unreadable bytes, YAML problems and a second document raise SourceError.
    """
    try:
        raw = read_regular(path, MAX_OWN_FILE_BYTES)
    except OSError as exc:
        raise SourceError([(None, f"cannot read: {exc.strerror or exc}")]) from None
    if len(raw) > MAX_OWN_FILE_BYTES:
        raise SourceError(
            [(None, f"larger than {MAX_OWN_FILE_BYTES >> 20} MiB: not read (a mistake?)")]
        )
    text, problem = decode(raw)
    if text is None:
        assert problem is not None
        raise SourceError([(problem.span.line, problem.message)])
    result = load_text(text)
    problems = [*result.problems, *(p for d in result.documents for p in d.problems)]
    if problems:
        raise SourceError([(p.span.line, p.message) for p in problems])
    docs = [d for d in result.documents if d.data is not None]
    if len(docs) > 1:
        raise SourceError([(docs[1].start.line, "one YAML document expected, not several")])
    return docs[0] if docs else None
