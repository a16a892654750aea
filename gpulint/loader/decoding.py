"""Bytes to text, or the YML005 problem that says why a file is not linted."""

from __future__ import annotations

from gpulint import codes
from gpulint.loader.document import Problem
from gpulint.model import Span


def decode(raw: bytes) -> tuple[str | None, Problem | None]:
    """Bytes to text: UTF-8 (with or without BOM), or UTF-16/32 with a BOM."""
    if raw.startswith(b"\xef\xbb\xbf"):
        encoding, raw = "utf-8", raw[3:]
    elif raw.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        encoding = "utf-32"
    elif raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        encoding = "utf-16"
    else:
        encoding = "utf-8"
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
            f"the file is not valid {encoding.upper()} (byte {start}): YAML must be UTF-8, or "
            "UTF-16/32 with a byte-order mark; not linted",
        )
