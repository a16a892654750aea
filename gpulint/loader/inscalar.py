"""A place inside a scalar: the file line and column of a character of a string value.

A finding about part of a value (a column of a CEL expression) is shown there only when the
file's text proves it: the scalar's source is read again at its span, and the characters at
the computed place must be the value's own. Plain, single-quoted and double-quoted scalars on
one line map when their source spells the value with no escape; a literal block (``|``) maps
line by line, each value line being its source line with the block's indentation removed; a
folded block (``>``) of lines at one indentation and no blank line maps through its lines
joined by single spaces. Other folded blocks, escapes and scalars over several lines are not
mapped: the caller keeps the whole value's span and says where in the value it is.
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache
from typing import Any

from gpulint.model import Path, Span


def line_starts(text: str) -> list[int]:
    """The offset of each line of ``text`` (line breaks: ``\\n``, as a scalar's value has)."""
    starts = [0]
    index = text.find("\n")
    while index >= 0:
        starts.append(index + 1)
        index = text.find("\n", index + 1)
    return starts


def inside(
    text: str, span: Span, value: str, offset: int, length: int, starts: list[int] | None = None
) -> Span | None:
    """The span of ``value[offset:offset + length]`` in ``text``, where ``span`` is the span
    of the scalar whose value is ``value``; None when the source does not prove it."""
    if offset < 0 or offset > len(value):
        return None
    starts = starts if starts is not None else line_starts(text)
    if span.line < 1 or span.line > len(starts):
        return None
    begin = starts[span.line - 1] + span.column - 1
    if begin >= len(text):
        return None
    first = text[begin]
    length = max(1, min(length, len(value) - offset)) if value else 1
    if first in "|>":
        if first == ">":
            return _folded_block(text, starts, span, value, offset, length)
        return _literal_block(text, starts, span, value, offset, length)
    if "\n" in value:
        return None
    if first in "'\"":
        start = begin + 1
        if first == '"' and "\\" in text[start : start + len(value) + 1]:
            return None
        if first == "'" and "'" in value:
            return None
    else:
        start = begin
    if text[start : start + len(value)] != value:
        return None
    column = span.column + (start - begin) + offset
    end = column + length
    if "\n" in value[offset : offset + length]:
        return None
    return Span(span.line, column, span.line, end)


@lru_cache(maxsize=16)
def _value_starts(value: str) -> list[int]:
    """The offset of each line of a block scalar's value (a few kept: the values a file's
    findings are being placed in)."""
    return line_starts(value)


def _literal_block(
    text: str, starts: list[int], span: Span, value: str, offset: int, length: int
) -> Span | None:
    # The value's line offsets are made once a value (many findings may sit in one block):
    # splitting it again for each finding made them quadratic in the block's lines.
    value_starts = _value_starts(value)
    index = bisect_right(value_starts, offset) - 1
    column_in_line = offset - value_starts[index]
    # The block's indentation: that of its first line with text (YAML 1.2 §8.1.1.1).
    header = span.line
    indent = None
    for number in range(header + 1, len(starts) + 1):
        line = _line(text, starts, number)
        if line.strip():
            indent = len(line) - len(line.lstrip(" "))
            break
    if indent is None:
        return None
    number = header + 1 + index
    if number > len(starts):
        return None
    source = _line(text, starts, number)
    begin = value_starts[index]
    stop = value.find("\n", begin)
    expected = value[begin : stop if stop >= 0 else len(value)]
    if source[indent:].rstrip("\r") != expected.rstrip("\r"):
        return None
    column = indent + column_in_line + 1
    end = column + min(length, max(1, len(expected) - column_in_line))
    return Span(number, column, number, end)


def _folded_block(
    text: str, starts: list[int], span: Span, value: str, offset: int, length: int
) -> Span | None:
    """A folded block (``>``) whose lines all sit at the block's indentation, with no blank
    line: its value is those lines joined by one space each (YAML 1.2 §8.1.3), which the
    text must spell again exactly; any other folded block is not mapped."""
    content: list[tuple[int, str]] = []
    indent = None
    for number in range(span.line + 1, len(starts) + 1):
        line = _line(text, starts, number).rstrip("\r")
        if not line.strip():
            break
        here = len(line) - len(line.lstrip(" "))
        if indent is None:
            indent = here
        if here < indent:
            break
        if here > indent:
            return None  # a more-indented line keeps its line break
        content.append((number, line[indent:]))
    # The value spelt again from the lines proves the mapping (a blank line, then more of
    # the block, keeps a line break: the value differs, and nothing is mapped).
    if indent is None or " ".join(part for _, part in content) != value.rstrip("\n"):
        return None
    at = 0
    for number, part in content:
        if offset <= at + len(part):
            column = indent + (offset - at) + 1
            end = column + min(length, max(1, len(part) - (offset - at)))
            return Span(number, column, number, end)
        at += len(part) + 1
    return None


def _line(text: str, starts: list[int], number: int) -> str:
    begin = starts[number - 1]
    end = starts[number] - 1 if number < len(starts) else len(text)
    return text[begin:end]


def place_within(
    text: str,
    data: Any,
    path: Path,
    span: Span,
    within: tuple[int, int],
    message: str,
    starts: list[int] | None = None,
) -> tuple[Span, str]:
    """Where a finding about ``within`` (offset, length) of the string value at ``path``
    goes: there, when the file's text proves it; else the value's ``span``, with the place
    in the value said in the message. ``starts``: the offset of each of the text's lines, which a
    caller placing many findings in one text makes once."""
    value = data
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return span, message
    if not isinstance(value, str):
        return span, message
    offset, length = within
    found = inside(text, span, value, offset, length, starts)
    if found is not None:
        return found, message
    line = value.count("\n", 0, offset) + 1
    column = offset - (value.rfind("\n", 0, offset) + 1) + 1
    return span, (
        f"{message} (at {line}:{column} of the value: the file's text for this style of "
        "scalar does not show the place itself)"
    )
