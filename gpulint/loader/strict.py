"""Checks the parser does not make: YAML 1.2 rules that libyaml -- like go-yaml, so kubectl
too -- lets through (YML001, info), and tags Kubernetes ignores (YML003).

``StrictChecks`` is the builder's half that reads the text around a node; ``token_problems``
reads the scanner's tokens once the documents are built.
"""

from __future__ import annotations

import re
from typing import Any

from gpulint import codes
from gpulint.loader.document import Problem
from gpulint.loader.library import YamlLib
from gpulint.loader.positions import node_span
from gpulint.loader.scalars import STD_TAGS, TAG_PREFIX
from gpulint.model import Path, Span

#: YML001 messages for what the YAML 1.2 grammar rejects and libyaml -- like go-yaml, so
#: kubectl too -- reads anyway. The document is still linted as Kubernetes would read it.
#: How every such message starts (what tells it from a syntax error).
YAML12 = "not valid YAML 1.2"
_STRICT = (
    f"{YAML12}, but Kubernetes' parser (go-yaml, kubectl) reads it, so the cluster "
    "takes the file; only stricter YAML 1.2 tools (some editors and formatters) refuse it: "
)
#: What strict YAML 1.2 rejects and Kubernetes reads is info: an error or a warning is for
#: what the API server rejects or misreads, and a CI must not fail on a file the cluster takes.
_STRICT_SEVERITY = "info"
#: The tag go-yaml decodes from base64 (the one non-Kubernetes tag it does not ignore).
BINARY_TAG = TAG_PREFIX + "binary"
#: A line that only closes flow collections: "}", "]," or "} # comment".
_CLOSER = re.compile(r"[\]}][\]},\s]*(#.*)?$")
PLAIN_DASH = "a plain value cannot be a lone '-': quote it (\"-\")"


class StrictChecks:
    """The checks of one document's builder (``gpulint.loader.build.Builder``)."""

    __slots__ = ()

    #: The builder's: the text being loaded, its problems, and the nodes already reported.
    text: str
    problems: list[Problem]
    duplicates: set[int]

    # -- YAML 1.2 rules that libyaml (and so Kubernetes' go-yaml) does not enforce ----------
    # They read the text around a node through its marks (character offsets): a 50 MB text
    # is never split into lines.

    def _syntax(
        self, mark: Any, message: str, line: int | None = None, col: int = 0, width: int = 1
    ) -> None:
        """A YML001 problem the YAML 1.2 grammar gives but the parser let through."""
        if line is None:
            line, col = mark.line, mark.column
        span = Span(line + 1, col + 1, line + 1, col + 1 + width)
        problem = Problem(
            codes.SYNTAX_ERROR, span, f"{_STRICT}{message}", severity=_STRICT_SEVERITY
        )
        self.problems.append(problem)

    def _before(self, mark: Any) -> str:
        """The text of the mark's line before the mark."""
        index: int = mark.index
        return self.text[index - mark.column : index]

    def _layout(self, node: Any, children: list[Any]) -> None:
        """Check the multi-line flow values and block scalars of one block collection."""
        children = [c for c in children if c.id == "scalar" or c.flow_style]
        if not children:
            return  # nested block collections: checked on their own
        if node.id == "mapping":
            first = node.value[0][0].start_mark
            indent: int = first.column
            before = self._before(first).rstrip(" ")
            if before.endswith("?"):  # an explicit key: "? key"
                indent = len(before) - 1
        else:  # the column of the "-" before the first item
            first = node.value[0].start_mark
            indent = max(self._before(first).rfind("-"), 0)
        for child in children:
            if child.id == "scalar":
                if child.style in ("|", ">"):
                    self._block_scalar(child, indent)
                else:
                    self._continuation(child, indent)
            elif child.flow_style:
                self._continuation(child, indent)

    def _continuation(self, node: Any, indent: int) -> None:
        """A flow value (quoted or plain scalar, flow collection) written over several lines
        inside a block collection: every continuation line is indented more than the
        collection (YAML 1.2 s-flow-line-prefix; tabs are not indentation).

        One deviation: a line holding only closing brackets may sit at the collection's own
        indentation -- JSON-style ``key: {`` ... ``}`` is common in real manifests and every
        YAML parser in use reads it. A comment line between a flow collection's entries, or
        after a plain scalar's last line, may start anywhere (YAML 1.2 s-l-comments: a
        commented-out entry at column 1); inside a quoted scalar ``#`` is text.
        """
        start, end = node.start_mark, node.end_mark
        comments = node.id != "scalar" or not node.style
        lines = self.text[start.index : end.index].split("\n")
        for offset, line in enumerate(lines[1:], start=1):
            body = line.lstrip(" ")
            if not body.strip():
                continue  # empty lines may be indented less
            if comments and body.lstrip("\t").startswith("#"):
                continue
            spaces = len(line) - len(body)
            if spaces < indent or (spaces == indent and not _CLOSER.match(body)):
                self._syntax(
                    None,
                    f"this line continues a value written over several lines and must be "
                    f"indented more than its parent collection (more than {indent} spaces; "
                    "tabs do not count)",
                    start.line + offset,
                    spaces,
                )
                return

    def _block_scalar(self, node: Any, indent: int) -> None:
        """A ``|`` or ``>`` scalar without an indentation indicator: no leading empty line
        may have more spaces than the first content line (YAML 1.2 l-empty, auto-detection)."""
        text = self.text
        start = node.start_mark
        eol = text.find("\n", start.index)
        if eol < 0:
            return
        header = text[start.index : eol]
        marker = min((i for i in (header.find("|"), header.find(">")) if i >= 0), default=-1)
        if marker < 0 or any(c.isdigit() for c in header[marker + 1 : marker + 3]):
            return
        widest, widest_line, number = 0, 0, start.line
        while eol >= 0:
            begin, number = eol + 1, number + 1
            eol = text.find("\n", begin)
            line = text[begin : eol if eol >= 0 else len(text)]
            if not line.strip():
                spaces = len(line) - len(line.lstrip(" "))
                if spaces > widest:
                    widest, widest_line = spaces, number
                continue
            content = len(line) - len(line.lstrip(" "))
            if indent < content < widest:  # the first line of text, and less indented
                self._syntax(
                    None,
                    f"this leading empty line of a block scalar has {widest} spaces, more than "
                    f"the scalar's first line of text (line {number + 1}, {content} spaces)",
                    widest_line,
                    0,
                    width=widest,
                )
            return

    def _check_tag(self, node: Any, path: Path) -> str:
        """The node's tag text; a YML003 problem if it is not one of Kubernetes' tags."""
        tag = str(node.tag)
        if tag not in STD_TAGS and id(node) not in self.duplicates:
            # Reported once, where it is written, however often an alias repeats it.
            self.duplicates.add(id(node))
            index = node.start_mark.index
            written = self.text[index : index + 1024].split(None, 1)
            if written and written[0].startswith("!") and not written[0].startswith("!<"):
                bad = next((c for c in written[0] if c in ",[]{}"), None)
                if bad is not None:
                    self._syntax(node.start_mark, f"a tag cannot contain '{bad}'")
            shown = "!!" + tag[len(TAG_PREFIX) :] if tag.startswith(TAG_PREFIX) else tag
            if tag == BINARY_TAG:
                message = (
                    "tag !!binary: Kubernetes' decoder (go-yaml, kubectl) decodes the value "
                    "from base64 into its bytes, while gpulint read the encoded text and "
                    "checked that: write the decoded value, or base64 in a Secret's data"
                )
            else:
                message = (
                    f"tag {shown} is not a Kubernetes YAML tag: Kubernetes' decoder ignores it, "
                    "so what it was meant to do does not happen; remove the tag (go-yaml and "
                    "kubectl read the value untagged, as gpulint did: it constructed nothing)"
                )
            self.problems.append(Problem(codes.UNSUPPORTED_TAG, node_span(node), message, path))
        return tag


#: Characters before a "#" that libyaml takes for the start of a comment but YAML 1.2 does
#: not (a comment needs white space before it): flow indicators, quotes, block scalar
#: headers ("|-", ">2") and directive arguments.
_BEFORE_HASH = frozenset("[]{},\"'|>+-0123456789")


def needs_token_pass(text: str) -> bool:
    """Whether ``text`` may break a YAML 1.2 rule only the scanner's tokens show."""
    if text.startswith("%") or "\n%" in text:
        return True
    i = text.find("#")
    while i > 0:
        if text[i - 1] in _BEFORE_HASH:
            return True
        i = text.find("#", i + 1)
    return False


def token_problems(text: str, lib: YamlLib) -> list[Problem]:
    """YAML 1.2 rules on tokens that libyaml does not enforce: a comment needs white space
    before it, and a directive may only follow the start of the stream or a ``...``."""
    tk = lib.tokens
    directive, scalar = tk.DirectiveToken, tk.ScalarToken
    may_precede_directive = (tk.StreamStartToken, tk.DocumentEndToken, directive)
    no_comment_after = (
        directive,
        tk.FlowEntryToken,
        tk.FlowSequenceStartToken,
        tk.FlowSequenceEndToken,
        tk.FlowMappingStartToken,
        tk.FlowMappingEndToken,
    )
    problems: list[Problem] = []

    def problem(mark_line: int, col: int, message: str) -> None:
        span = Span(mark_line + 1, col + 1, mark_line + 1, col + 2)
        problems.append(
            Problem(codes.SYNTAX_ERROR, span, _STRICT + message, severity=_STRICT_SEVERITY)
        )

    parser = lib.event_parser(text)
    previous: Any = None
    try:
        while True:
            token = parser.get_token()
            if token is None or isinstance(token, tk.StreamEndToken):
                break
            kind = type(token)
            end = token.end_mark
            if kind is directive and previous not in may_precede_directive:
                sm = token.start_mark
                problem(
                    sm.line,
                    sm.column,
                    "a directive must follow '...', the end of the document before it",
                )
            if kind in no_comment_after or (kind is scalar and token.style in ('"', "'")):
                if text.startswith("#", end.index):
                    problem(end.line, end.column, "a comment needs white space before '#'")
            elif kind is scalar and token.style in ("|", ">"):
                start = token.start_mark
                at = start.index + 1
                while at < len(text) and text[at] in "+-0123456789":
                    at += 1
                if text.startswith("#", at):
                    problem(
                        start.line,
                        start.column + at - start.index,
                        "a comment needs white space before '#'",
                    )
            if kind is not tk.BlockEndToken:
                previous = kind
    except lib.YAMLError:
        pass  # the composer reported it
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()
    return problems
