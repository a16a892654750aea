"""A large text linted document by document, each document's findings kept while its text
is unchanged.

A keystroke in a 5 MB manifest changes one of its thousands of documents; linting the whole
text again takes seconds. :class:`IncrementalLinter` cuts the text at its document markers
(``---`` at the start of a line: YAML allows no such line inside content, so the cut is
exact), lints each piece on its own and keeps the findings of every piece by its text; the
next lint re-lints only the pieces that changed and moves the others' findings to where
they now are.

A piece linted alone gives the findings the whole text gives as long as nothing crosses
documents. What can, and is then linted whole:

- ``disable-file`` and ``disable-next-line`` comments (a comment at the end of one
  document can silence the first line of the next);
- DRA objects (a pod's claim is looked up in the other documents of the file);
- a ConfigMap beside a container that reads one (its variables are looked up in the other
  documents of the file);
- YAML directives (``%YAML``, ``%TAG``), document end markers (``...``), and the line
  breaks gpulint and the protocol count differently (a lone ``\\r``, NEL, LS, PS), which
  would move the cut.

One thing differs by design: the layout of the new lines a rule's fix writes follows the
text the rule saw (how far sequences are indented, ...), here the document's own.

A message that names a line (``duplicate key 'x' (first at line 91)``) is right only where
the piece is: such a piece is linted again wherever it moves, below as many empty lines as
precede it, which gives the whole text's lines.

A piece with a syntax error (YML001) ends the YAML stream as it does for ``gpulint check``:
from that piece on the rest of the text is linted as one, so the findings (and where the
error is reported) are the command line's.
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING, NamedTuple

from gpulint import codes
from gpulint.lint.foreign import kubernetes_text
from gpulint.loader.strict import YAML12
from gpulint.model import Edit, Finding, Fix, Span

if TYPE_CHECKING:
    from gpulint.lint.engine import Linter

#: Texts shorter than this are linted whole: it takes milliseconds.
MIN_CHUNKED_CHARS = 256 << 10

_MARKER = re.compile(r"^---(?=[ \t\r\n]|$)", re.M)
#: Document end markers (``...``), which would move the cut.
_DOCUMENT_END = re.compile(r"^\.\.\.(?:[ \t\r\n]|$)", re.M)
SYNTAX_ERROR = codes.SYNTAX_ERROR
#: The findings after which the stream ends: a syntax error (not the YAML 1.2 notes YML001
#: also gives, which say the parser read on) and a template that does not parse.
STOPPED = frozenset({SYNTAX_ERROR, codes.TEMPLATE_NOT_RENDERED})
#: A message that names a line of the file.
_NAMES_A_LINE = re.compile(r"\bline \d")
#: A line that is YAML content (not blank, not only a comment).
_CONTENT = re.compile(r"^[ \t]*[^ \t\r\n#]", re.M)


def cuttable(text: str) -> bool:
    """Whether each document of ``text`` can be linted alone (see the module's docstring).
    Substring tests first: a regular expression over 5 MB took half a second."""
    from gpulint.k8s.dra import may_hold_dra
    from gpulint.k8s.envvalues import may_read_configmaps

    if "gpulint:" in text:  # a directive (its action may be written in any case)
        lowered = text.lower()
        if "disable-file" in lowered or "disable-next-line" in lowered:
            return False
    if text.startswith("%") or "\n%" in text or "\r%" in text:
        return False
    if ("\n..." in text or text.startswith("...")) and _DOCUMENT_END.search(text):
        return False
    if "\r" in text and text.count("\r") != text.count("\r\n"):
        return False
    if not text.isascii() and any(c in text for c in "\x85\u2028\u2029"):
        return False
    return not may_hold_dra(text) and not may_read_configmaps(text)


def _shift(findings: list[Finding], lines: int, chars: int, documents: int) -> list[Finding]:
    """Findings of a piece moved down ``lines`` lines (its edits ``chars`` characters),
    after ``documents`` documents."""
    if not lines and not chars and not documents:
        return findings
    out = []
    for f in findings:
        s = f.span
        moved = f._replace(
            span=Span(s.line + lines, s.column, s.end_line + lines, s.end_column),
            # A problem of the stream (a syntax error, an alias bomb) is reported in document
            # 0 by the command line, wherever it is: so here.
            document=f.document + (documents if f.object is not None or f.doc_path else 0),
        )
        if f.fix is not None:
            moved = moved._replace(fix=_shift_fix(f.fix, lines, chars))
        out.append(moved)
    return out


def _shift_fix(fix: Fix, lines: int, chars: int) -> Fix:
    edits = tuple(
        Edit(
            Span(e.span.line + lines, e.span.column, e.span.end_line + lines, e.span.end_column),
            e.start + chars,
            e.end + chars,
            e.content,
        )
        for e in fix.edits
    )
    return fix._replace(edits=edits)


class IncrementalLinter:
    """Lints the successive texts of one open document, re-linting only what changed."""

    __slots__ = ("_kubernetes", "_pieces", "label", "linter", "min_chars")

    def __init__(self, linter: Linter, label: str, min_chars: int = MIN_CHUNKED_CHARS) -> None:
        self.linter = linter
        self.label = label
        self.min_chars = min_chars
        #: The findings of each piece of the last text, by the piece's text.
        self._pieces: dict[str, list[Finding]] = {}
        #: Whether the last text wrote an apiVersion and a kind: a piece is linted as a
        #: part of its file, whose YAML problems count only if it is Kubernetes.
        self._kubernetes = True

    def lint(self, text: str) -> list[Finding]:
        if len(text) < self.min_chars or not cuttable(text):
            self._pieces = {}
            return self.linter.lint_text(self.label, text)
        starts = [0, *(m.start() for m in _MARKER.finditer(text) if m.start() > 0)]
        kube = kubernetes_text(text)
        previous, self._pieces = (self._pieces if kube == self._kubernetes else {}), {}
        self._kubernetes = kube
        findings: list[Finding] = []
        line = 0  # lines before the current piece
        documents = 0  # documents before it
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else len(text)
            piece = text[start:end]
            found = self._pieces.get(piece)
            if found is None:
                found = previous.get(piece)
            if found is None:
                found = self.linter.lint_shaped(self.label, piece, kubernetes=kube)[0]
            if any(f.rule in STOPPED and not f.message.startswith(YAML12) for f in found):
                # The stream ends at a syntax error: lint the rest as the command line does.
                rest = self.linter.lint_shaped(
                    self.label, "\n" * line + text[start:], kubernetes=kube
                )[0]
                findings.extend(_shift(rest, 0, start - line, documents))
                break
            self._pieces[piece] = found
            if any(_NAMES_A_LINE.search(f.message) for f in found):
                padded = self.linter.lint_shaped(self.label, "\n" * line + piece, kubernetes=kube)[
                    0
                ]
                findings.extend(_shift(padded, 0, start - line, documents))
            else:
                findings.extend(_shift(found, line, start, documents))
            line += piece.count("\n")
            # Every piece but the first starts with "---", a document of its own; text
            # before the first marker is a document when it holds content.
            documents += 1 if start > 0 or _CONTENT.search(piece) else 0
        findings.sort(key=Finding.sort_key)
        return findings


class Piece(NamedTuple):
    """The document around an offset, as text to load: the empty lines before it kept, so
    the positions the loader gives are the whole text's. ``documents``: how many documents
    come before it (``Finding.document`` less that is its index in ``text``)."""

    text: str
    documents: int


def document_text(text: str, offset: int) -> Piece:
    """The document of ``text`` that ``offset`` is in (the whole text when it cannot be
    cut, see the module's docstring)."""
    if len(text) < MIN_CHUNKED_CHARS or not cuttable(text):
        return Piece(text, 0)
    starts = [0, *(m.start() for m in _MARKER.finditer(text) if m.start() > 0)]
    i = bisect.bisect_right(starts, offset) - 1
    start = starts[i]
    end = starts[i + 1] if i + 1 < len(starts) else len(text)
    head = text[:start]
    documents = max(0, i - 1) + (1 if i > 0 and _CONTENT.search(text, 0, starts[1]) else 0)
    return Piece("\n" * head.count("\n") + text[start:end], documents)
