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

GitHub workflow commands. The Actions runner reads a step's output line by line (a line ends
at LF, CR or CR LF) and takes a line for a command in two forms (``ActionCommand.TryParseV2``
and ``TryParse`` in actions/runner): ``::name ...::data`` when the line, *after its leading
white space is trimmed* (.NET ``TrimStart``: spaces, tabs, U+00A0, U+3000, ...), starts with
``::``; and the legacy ``##[name ...]data`` *anywhere* in the line. Text from the tree must
open neither, in any output that may reach a CI log:

- :func:`escape` writes ``##[`` as ``##\\[`` wherever it occurs (the runner's own way of
  defusing its ``##[start-action`` markers: a backslash the command name cannot hold), so no
  fragment brings one; :func:`json_text` writes the ``[`` as ``\\u005b``, the same string
  for a JSON reader;
- :func:`plain` is the last step of every human-facing output (every ``--format`` but
  ``github``'s own commands, ``--diff``, ``inspect``, ``rules``, ``config``, stderr): it does
  the above on whole lines, whichever fragments they were built from, and puts a backslash
  before ``::`` that opens a line after optional white space (`` ::error::x``, a ``--diff``
  context line, becomes `` \\::error::x``); :func:`escape_line` is :func:`escape` then
  :func:`plain` for a line built in one piece;
- a path that opens a line (a finding's ``path:line:col:``) goes through :func:`lead` first:
  one that starts with ``:`` (after white space) is written ``./:...``, the same file, so a
  folder named ``::error file=README.md::Approved`` neither forges an annotation nor loses
  its name to the backslash.
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


#: The legacy workflow command's opening, and how it is written (see above).
_LEGACY, _LEGACY_SHOWN = "##[", "##\\["
#: ``::`` at the start of a line, after white space (Python's ``\\s`` is every character .NET's
#: ``TrimStart`` trims, and also U+001C..U+001F, which :func:`escape` writes visibly anyway).
_OPENING = r"(?:^|(?<=[\n\r]))([^\S\n\r]*)::"


def escape(text: str) -> str:
    """``text`` as one printable line: unsafe characters in their visible form and no
    ``##[`` (see above). Safe anywhere in a line but at its start: see :func:`escape_line`."""
    if _LEGACY in text:
        text = text.replace(_LEGACY, _LEGACY_SHOWN)
    if text.isascii() and text.isprintable():  # the common case, at C speed: nothing to do
        return text
    pattern = _pattern(_UNSAFE)
    if pattern.search(text) is None:
        return text
    return pattern.sub(_visible, text)


def plain(text: str) -> str:
    """``text`` (any number of lines, already escaped) with no line a workflow command: no
    ``##[`` anywhere, and a backslash before ``::`` that opens a line after white space.

    Human-facing output passes through it as it is written, so a line cannot be a command
    whatever the pieces it was built from; ordinary output is returned unchanged.
    """
    if _LEGACY in text:
        text = text.replace(_LEGACY, _LEGACY_SHOWN)
    if "::" not in text:
        return text
    return _pattern(_OPENING).sub(r"\1\\::", text)


def escape_line(text: str) -> str:
    """``text`` as a whole line of output: :func:`escape`, then :func:`plain`."""
    return plain(escape(text))


def escape_lines(text: str) -> list[str]:
    """A message of several lines (split on ``\\n`` only), each an escaped whole line."""
    return [escape_line(line) for line in text.split("\n")]


def lead(path: str) -> str:
    """``path`` to open a line with: ``./`` before a relative path that starts with ``:``
    (after white space), so the line cannot open a workflow command and still names the
    file. Escape the result as any path (:func:`escape`)."""
    return "./" + path if path.lstrip().startswith(":") else path


_C_QUOTED = {"\t": "\\t", "\n": "\\n", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def diff_path(path: str) -> str:
    """``path`` for a ``---``/``+++`` line of a unified diff: as it is when it holds no
    character :func:`escape` would change, else quoted as git quotes a file name
    (``"a\\rb.yaml"``: in double quotes, ``\\t`` ``\\n`` ``\\r`` ``\\"`` ``\\\\``, and every
    other unsafe character, an undecodable byte of the name too, as the octal escapes of
    its bytes), which ``git apply`` and GNU ``patch`` read back as the same name. No control
    character reaches the line."""
    unsafe = _pattern(_UNSAFE)
    if unsafe.search(path) is None and not path.startswith('"'):
        return path
    out = []
    for char in path:
        named = _C_QUOTED.get(char)
        if named is not None:
            out.append(named)
        elif unsafe.fullmatch(char) is None:
            out.append(char)
        else:
            raw = char.encode(
                "utf-8", "surrogateescape" if 0xDC80 <= ord(char) <= 0xDCFF else "surrogatepass"
            )
            out.extend(f"\\{byte:03o}" for byte in raw)
    return '"' + "".join(out) + '"'


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
    are ASCII, so one pass over the encoded text reaches only string contents. ``##[`` in a
    string is written ``##\\u005b`` (the same value): printed to a CI log, the line is no
    legacy workflow command. No line of it starts with ``::``.
    """
    import json  # not on the text format's start-up path

    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    if _LEGACY in text:
        # Only inside a string (JSON's own syntax has no "#"): the same value, no command.
        text = text.replace(_LEGACY, "##\\u005b")
    if text.isascii() and "\x7f" not in text:  # DEL is ASCII but never printed raw
        return text
    pattern = _pattern(_JSON_RAW)
    if pattern.search(text) is None:
        return text
    return pattern.sub(_json_char, text)
