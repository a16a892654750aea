"""``# gpulint:`` comments: where they are, what they say and which line they silence.

``disable`` applies to its own line, ``disable-next-line`` to the next line that holds YAML
content (blank and comment-only lines are skipped, so several can be stacked), and
``disable-file`` to the whole file wherever it is written. Without ``=CODES`` they apply to
every rule. The reason after `` -- `` runs to the end of the line, or to a following
``# tool:`` comment (``# expect:``, ``# noqa:``).

Finding comments: a ``#`` starts a comment only outside scalars, so ``"a # b"`` or a
``#`` line inside a block scalar is not one. Rather than re-parse with ruamel's slow
round-trip loader (which keeps comments), the text is scanned with the C scanner only when it
contains ``gpulint:`` at all, and a ``#`` counts as a comment when it is at a line start or
after whitespace and inside no scalar, anchor, alias, tag or directive token. Past a syntax
error (no more tokens) the whitespace rule alone decides.
"""

from __future__ import annotations

import bisect
import re

from gpulint.model import Finding, Span

ACTIONS = ("disable", "disable-next-line", "disable-file")

# Patterns are compiled on first use (``re`` caches them): a file without directives, the
# common case, never needs them, and compiling them all costs start-up time on every run.
#: YAML line breaks (the C scanner counts NEL, LS and PS too).
_LINE_BREAK = "\r\n|\r|\n|\x85|\u2028|\u2029"
_DIRECTIVE = r"#\s*gpulint:"
_ACTION = r"\s*([A-Za-z][A-Za-z-]*)"
_CODES = r"=\s*([A-Za-z0-9]+(?:\s*,\s*[A-Za-z0-9]+)*)"
#: Another tool's comment after ours ends the reason: ``  # expect: GL100``.
_NEXT_COMMENT = r"\s#\s*[\w.-]+:"


class Directive:
    """A ``# gpulint: ...`` comment."""

    __slots__ = (
        "action",
        "codes",
        "error",
        "line",
        "own_line",
        "reason",
        "span",
        "target",
        "used",
    )

    def __init__(
        self,
        action: str,
        codes: tuple[str, ...] | None,  # None: every rule
        reason: str | None,
        line: int,  # 1-based line of the comment
        span: Span,
        target: int | None = None,
        own_line: bool = False,
        error: str | None = None,
    ) -> None:
        self.action = action
        self.codes = codes
        self.reason = reason
        self.line = line
        self.span = span
        #: The line it silences (None: the whole file, or nothing for a dangling next-line).
        self.target = target
        self.own_line = own_line
        self.error = error
        #: The codes it silenced (GL100 reports a directive that silenced nothing).
        self.used: set[str] = set()

    def __repr__(self) -> str:
        return (
            f"Directive({self.action!r}, {self.codes!r}, {self.reason!r}, line={self.line}, "
            f"target={self.target}, error={self.error!r})"
        )

    def applies(self, finding: Finding) -> bool:
        if self.error is not None:
            return False
        if self.action == "disable-file":
            return True
        return self.target is not None and finding.span.line == self.target


def split_lines(text: str) -> list[str]:
    return re.split(_LINE_BREAK, text)


class _Comments:
    """Where comments start on each line."""

    def __init__(self, text: str, lines: list[str]) -> None:
        self.lines = lines
        from gpulint.loader.comments import covered_regions  # the scanner: on first use

        self.starts, self.ends, self.stopped = covered_regions(text)

    def _covered(self, line: int, col: int) -> bool:
        if line > self.stopped:
            return False
        i = bisect.bisect_right(self.starts, (line, col)) - 1
        return i >= 0 and (line, col) < self.ends[i]

    def start(self, index: int) -> int | None:
        """The column (0-based) where the comment on line ``index`` (0-based) starts."""
        text = self.lines[index]
        col = text.find("#")
        while col >= 0:
            if (col == 0 or text[col - 1] in " \t") and not self._covered(index, col):
                return col
            col = text.find("#", col + 1)
        return None

    def content(self, index: int) -> bool:
        """Does line ``index`` hold YAML content (not blank, not only a comment)?"""
        text = self.lines[index]
        stripped = len(text) - len(text.lstrip(" \t"))
        if stripped == len(text):
            return False
        return self.start(index) != stripped


def _parse(body: str) -> tuple[str, tuple[str, ...] | None, str | None, str | None]:
    """``disable=GPU001 -- reason`` -> (action, codes, reason, error)."""
    m = re.match(_ACTION, body)
    if m is None:
        return "", None, None, "expected disable, disable-next-line or disable-file"
    action = m.group(1).lower()
    if action not in ACTIONS:
        return (
            action,
            None,
            None,
            (
                f"unknown gpulint directive {m.group(1)!r} (use disable, disable-next-line or "
                "disable-file)"
            ),
        )
    rest = body[m.end() :]
    cut = re.search(_NEXT_COMMENT, rest)
    if cut is not None:
        rest = rest[: cut.start()]
    rest = rest.strip()
    codes: tuple[str, ...] | None = None
    if rest.startswith("="):
        cm = re.match(_CODES, rest)
        if cm is None:
            return action, None, None, f"expected rule codes after '{action}='"
        codes = tuple(c.strip().upper() for c in cm.group(1).split(","))
        rest = rest[cm.end() :].strip()
    reason = None
    if rest.startswith("--"):
        reason = rest[2:].strip() or None
    elif rest:
        return (
            action,
            codes,
            None,
            (
                f"unexpected {rest!r} in a gpulint directive: separate codes with commas and "
                "write the reason after ' -- '"
            ),
        )
    return action, codes, reason, None


def comment_directives(text: str) -> list[Directive]:
    """Every ``# gpulint:`` directive in ``text``, with the line each one silences."""
    if "gpulint:" not in text:
        return []
    lines = split_lines(text)
    comments = _Comments(text, lines)
    out: list[Directive] = []
    # The last disable-next-line search: (the line it started after, the content line it
    # found or None). Every line strictly between the two holds no content, so a later
    # directive in that stretch has the same target: stacked comments cost one scan, not
    # one scan each (8,000 stacked lines took 72 s).
    searched_from, found_at = len(lines), None  # no search yet
    for index, line in enumerate(lines):
        if "gpulint:" not in line:
            continue
        start = comments.start(index)
        if start is None:
            continue
        own_line = not line[:start].strip()
        directive_re = re.compile(_DIRECTIVE)
        for m in directive_re.finditer(line, start):
            body_start = m.end()
            nxt = directive_re.search(line, body_start)
            body = line[body_start : nxt.start() if nxt else None]
            action, codes, reason, error = _parse(body)
            end = body_start + len(body.rstrip())
            cut = re.search(_NEXT_COMMENT, body)
            if cut is not None:
                end = body_start + len(body[: cut.start()].rstrip())
            span = Span(index + 1, m.start() + 1, index + 1, end + 1)
            directive = Directive(action, codes, reason, index + 1, span, None, own_line, error)
            if action == "disable":
                directive.target = index + 1
            elif action == "disable-next-line":
                if not (searched_from <= index and (found_at is None or index < found_at)):
                    searched_from, found_at = index, None
                    for later in range(index + 1, len(lines)):
                        if comments.content(later):
                            found_at = later
                            break
                if found_at is not None:
                    directive.target = found_at + 1
            out.append(directive)
    return out
