"""Bytes to text, or the YML005 problem that says why a file is not linted."""

from __future__ import annotations

from gpulint import codes
from gpulint.loader.document import Problem
from gpulint.model import Span

#: The byte-order marks a YAML file may start with, and the codec that writes the text
#: after each; UTF-32 LE's mark begins with UTF-16 LE's, so it comes first.
BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


#: The header of a file git-crypt encrypted in the repository (``git-crypt``'s
#: ``encrypted_file_header``).
GIT_CRYPT = b"\x00GITCRYPT\x00"


def byte_order_mark(raw: bytes) -> tuple[bytes, str] | None:
    """The mark ``raw`` starts with and its codec (:data:`BOMS`), or ``None``."""
    return next((row for row in BOMS if raw.startswith(row[0])), None)


def decode(raw: bytes) -> tuple[str | None, Problem | None]:
    """Bytes to text: UTF-8 (with or without BOM), or UTF-16/32 with a BOM."""
    mark = byte_order_mark(raw)
    if mark is not None and mark[1] == "utf-8":
        encoding, raw = "utf-8", raw[len(mark[0]) :]
    elif mark is not None:
        encoding = mark[1][: -len("-le")]  # utf-16, utf-32: that codec reads the mark itself
    else:
        encoding = "utf-8"
        if raw.startswith(GIT_CRYPT):
            return "", None  # a secret, decrypted where it is applied: nothing to lint
        if b"\x00" in raw:
            offset = raw.index(b"\x00")
            line = raw.count(b"\n", 0, offset) + 1
            return None, Problem(
                codes.UNREADABLE_FILE,
                Span(line, 1, line, 1),
                "binary content (a NUL byte) in a YAML file: not linted",
            )
    try:
        return raw.decode(encoding), None
    except UnicodeDecodeError as exc:
        start = exc.start if encoding == "utf-8" else 0
        line = raw.count(b"\n", 0, start) + 1
        line_start = raw.rfind(b"\n", 0, start) + 1
        # Columns count code points: the bytes before the bad one on its line are valid.
        col = len(raw[line_start:start].decode(encoding, "replace")) + 1
        return None, Problem(
            codes.UNREADABLE_FILE,
            Span(line, col, line, col + 1),
            f"the file is not valid {encoding.upper()} (byte {start}), so it was not linted; "
            "write it in UTF-8, or UTF-16/32 with a byte-order mark",
        )
