"""Where a ``#`` is text and not the start of a comment: the public comment-scan API.

A suppression comment (``# gpulint: ignore=...``) is found by its ``#``; one inside a quoted
or plain scalar, an anchor, an alias, a tag or a directive is text. The scanner's tokens say
which: ``covered_regions`` returns where the tokens that may hold a ``#`` start and end.
"""

from __future__ import annotations

from gpulint.loader.library import yaml_lib

#: The scanner's tokens whose text may hold a "#".
_TOKENS_WITH_TEXT = ("ScalarToken", "AnchorToken", "AliasToken", "TagToken", "DirectiveToken")


def covered_regions(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int]:
    """(starts, ends) of tokens that may contain ``#``, and the line scanning stopped at.

    Positions are 0-based ``(line, column)`` pairs, sorted; a syntax error stops the scan
    (the line it stopped at is returned, ``1 << 30`` when it reached the end).
    """
    starts: list[tuple[int, int]] = []
    ends: list[tuple[int, int]] = []
    parser = yaml_lib().event_parser(text)
    stopped = 1 << 30
    try:
        while parser.check_token():
            token = parser.get_token()
            if type(token).__name__ in _TOKENS_WITH_TEXT:
                sm, em = token.start_mark, token.end_mark
                starts.append((sm.line, sm.column))
                ends.append((em.line, em.column))
    except Exception as exc:  # a syntax error: trust the whitespace rule past it
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        stopped = mark.line if mark is not None else 0
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()
    return starts, ends, stopped
