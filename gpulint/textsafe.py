"""Text from a linted tree made safe to print: one visible line, no terminal or CI commands.

Object names, keys, label and annotation values, messages built from them and file paths all
come from the files being linted, which may be a stranger's pull request. Printed raw, a
``metadata.name`` holding ``"\\n::error file=...::"`` forges a GitHub workflow command or a
``file:line:col:`` finding on a line of its own, and ``ESC [`` / ``ESC ]`` sequences reach the
terminal. Every human-facing output (the ``text``, ``github`` and ``junit`` formats,
``inspect``, ``config``, messages on stderr) passes such text through :func:`escape`; JSON
and SARIF keep the exact values (their encoders escape control characters) and use
:func:`json_text`, which also makes undecodable file names valid. Call :func:`escape` for
any new message that quotes a path, key or value.

The visible form is Python's (README, "Output formats"):

- ``\\t``, ``\\n``, ``\\r``; any other C0 control, DEL and C1 control as ``\\xNN``
  (``ESC`` -> ``\\x1b``, ``NEL`` -> ``\\x85``);
- the Unicode line and paragraph separators and the bidirectional formatting characters
  ("Trojan Source", CVE-2021-42574) as ``\\uNNNN`` (``\\u2028``, ``\\u202e``);
- a byte of a file name that is not UTF-8 (Python hands it over as a lone surrogate,
  ``os.fsdecode``'s ``surrogateescape``) as ``\\xNN``, the byte itself; any other lone
  surrogate as ``\\udNNN``.

A backslash is left alone (a Windows path keeps its separators), so the escaped form is for
reading, not for decoding: JSON and SARIF carry the exact value.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

#: Characters never printed raw: C0 controls, DEL, C1 controls, the bidirectional formatting
#: characters, U+2028/U+2029 and lone surrogates. ``str.splitlines`` splits on no other.
_UNSAFE = (
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the undecodable byte 0x80..0xff
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


@cache
def _pattern(chars: str) -> re.Pattern[str]:
    # Compiled on first use (~2 ms): most runs print only ASCII and never need it.
    return re.compile(chars)


def escape(text: str) -> str:
    """``text`` as one printable line: unsafe characters in their visible form (see above)."""
    if text.isascii() and text.isprintable():  # the common case, at C speed: nothing to do
        return text
    pattern = _pattern(_UNSAFE)
    if pattern.search(text) is None:
        return text
    return pattern.sub(_visible, text)


def escape_lines(text: str) -> list[str]:
    """A message of several lines (split on ``\\n`` only), each line escaped."""
    return [escape(line) for line in text.split("\n")]


#: In ``json.dumps(..., ensure_ascii=False)`` output, the characters it leaves raw that
#: must not be: DEL, C1 controls, separators, bidi controls (written as ``\\uNNNN``, the same
#: string for a JSON reader) and lone surrogates (invalid UTF-8; written in the visible form).
_JSON_RAW = "[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"


def _json_char(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if 0xD800 <= code <= 0xDFFF:
        # The visible form as a JSON string's content: its backslash escaped.
        return "\\" + _visible(match)
    return f"\\u{code:04x}"


def json_text(doc: Any, indent: int | None = 2) -> str:
    """``doc`` as JSON that is valid UTF-8 whatever file names and values it holds.

    Strings keep their exact value (non-ASCII text stays readable), except a lone surrogate
    -- an undecodable byte of a file name or argument -- which becomes its visible form
    (``\\xff``): JSON has no way to carry a byte that is not text. Characters outside a string
    are ASCII, so one pass over the encoded text reaches only string contents.
    """
    import json  # not on the text format's start-up path

    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    if text.isascii() and "\x7f" not in text:  # DEL is ASCII but never printed raw
        return text
    pattern = _pattern(_JSON_RAW)
    if pattern.search(text) is None:
        return text
    return pattern.sub(_json_char, text)
