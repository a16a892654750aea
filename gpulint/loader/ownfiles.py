"""The reader for gpulint's own YAML files: configuration and declarative rules."""

from __future__ import annotations

import os

from gpulint.loader.decoding import decode
from gpulint.loader.document import Document
from gpulint.loader.stream import load_text


class SourceError(Exception):
    """A small YAML file (configuration, declarative rule) that cannot be used.

    ``problems`` are ``(line, message)`` pairs; line is None when the file was not read.
    """

    def __init__(self, problems: list[tuple[int | None, str]]) -> None:
        super().__init__(problems[0][1])
        self.problems = problems


def load_one_document(path: os.PathLike[str] | str) -> Document | None:
    """The single document of a YAML file gpulint itself reads, or None when it is empty.

    Unreadable bytes, YAML problems and a second document raise SourceError.
    """
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise SourceError([(None, f"cannot read: {exc.strerror or exc}")]) from None
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
