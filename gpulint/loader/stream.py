"""Texts to documents, one document at a time: compose, build, report the text's problems.

Never recurses without a bound: the C composer runs on this thread only when the text cannot
nest deeper than INLINE_LEVELS, in a thread with a large stack up to THREAD_LEVELS, and the
iterative event composer takes anything deeper.
"""

from __future__ import annotations

import _thread
import re
from collections.abc import Iterator
from typing import Any

from gpulint import codes
from gpulint.loader.build import COMPACT_TEXT, AliasLimit, Builder
from gpulint.loader.compose import (
    INLINE_LEVELS,
    MAX_DEPTH,
    THREAD_LEVELS,
    THREAD_STACK,
    TooDeep,
    compose_c,
    compose_events,
    nesting_bound,
)
from gpulint.loader.conflicts import Conflict, find_conflict
from gpulint.loader.document import Document, LoadResult, Problem
from gpulint.loader.library import YamlLib, yaml_lib
from gpulint.loader.positions import Positions, clamp, mark_span, node_span, text_end
from gpulint.loader.strict import needs_token_pass, token_problems
from gpulint.loader.templates import parsed_placeholder, placeholder_problem, template_check
from gpulint.model import Span

#: How the message of a text nested deeper than Kubernetes reads starts.
TOO_DEEP = "YAML syntax error: more than"
#: The problems after which the stream ends: the rest of the text was not read.
STOPPED = frozenset({codes.SYNTAX_ERROR, codes.TEMPLATE_NOT_RENDERED})


def load_text(text: str) -> LoadResult:
    """Compose every document of ``text`` and build data plus positions for each.

    Never recurses without a bound: the C composer runs on this thread only when the text
    cannot nest deeper than INLINE_LEVELS, in a thread with a large stack up to
    THREAD_LEVELS, and the iterative event composer takes anything deeper.
    """
    stream = DocumentStream(text, packed=True)
    documents = list(stream)
    return LoadResult(documents, stream.problems)


def text_documents(text: str, limit: int = 64 * 1024) -> list[Any]:
    """The data of each document of a YAML text written inside a manifest (a patch in a
    HelmRelease's post-renderer), or ``[]`` when it is longer than ``limit`` characters or
    does not parse: a rule reads it as data, its problems are the tool's that applies it."""
    if len(text) > limit:
        return []
    stream = DocumentStream(text)
    try:
        documents = [doc.data for doc in stream]
    except Exception:  # a text that is not YAML: nothing to read
        return []
    return [] if stream.problems else documents


def load_library() -> None:
    """Import the YAML library now rather than when the first document is composed (a
    process that freezes its start-up does it first, see ``gpulint.util.startup``)."""
    yaml_lib()


class DocumentStream:
    """The documents of a text, composed and built one at a time as they are iterated.

    What ``load_text`` returns, without holding every document at once: a caller that
    lints each document and drops it keeps one document's nodes, data and positions in
    memory, not the whole file's (a 50 MB file took 33 times its size). ``problems`` (the
    text's own: syntax errors, YML004 documents, YAML 1.2 token rules) is complete once the
    iteration ends. Iterate once.

    ``packed`` is for a caller that keeps every document (``load_text``): the side tables
    of a text over COMPACT_TEXT then hold packed spans instead of the nodes, so a big
    file's nodes are freed as it is read. A caller that drops each document before the
    next holds one document's nodes either way, and packing every node was a quarter of
    the load time of a 50 MB file.

    Texts whose depth bound needs the large-stack thread (lines of 1,000 to 25,000
    characters) are composed there and handed over one document at a time.
    """

    def __init__(self, text: str, *, packed: bool = False, compact: bool = False) -> None:
        self.text = text
        self.packed = packed
        #: Packed spans whatever the text's size: documents that are kept as plain data
        #: (``gpulint.lint.gather``'s loads, handed from the facts stage to the lint).
        self.compact = compact
        self.problems: list[Problem] = []

    def __iter__(self) -> Iterator[Document]:
        text, lib = self.text, yaml_lib()
        packed: bool | None = None if self.compact else self.packed
        bound = nesting_bound(text)
        if lib.c_parser is None or bound > THREAD_LEVELS:
            yield from _iter_load(text, lib, self.problems, iterative=True, packed=packed)
        elif bound <= INLINE_LEVELS:
            yield from _iter_load(text, lib, self.problems, iterative=False, packed=packed)
        else:
            yield from _iter_in_large_stack(text, lib, self.problems, packed)
        if needs_token_pass(text) and not any(p.code in STOPPED for p in self.problems):
            self.problems.extend(token_problems(text, lib))


#: Serializes the stack-size change around thread creation. (``_thread`` is what
#: ``threading.Lock`` is; threading itself is imported only when a deep document needs it.)
_THREAD_LOCK = _thread.allocate_lock()


def _iter_in_large_stack(
    text: str, lib: YamlLib, problems: list[Problem], packed: bool | None = False
) -> Iterator[Document]:
    """``_iter_load`` with the C composer in a thread with THREAD_STACK bytes of stack,
    handing each document over to the calling thread as it is built (at most one waits)."""
    import queue
    import threading  # only for a deep document: keeps it off the start-up path

    handoff: queue.Queue[Any] = queue.Queue(maxsize=1)
    stop = threading.Event()
    done = object()

    def hand(item: Any) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def target() -> None:
        try:
            for doc in _iter_load(text, lib, problems, iterative=False, packed=packed):
                if not hand(doc):
                    return
                del doc
            hand(done)
        except BaseException as exc:  # re-raised on the calling thread
            hand(exc)

    try:
        with _THREAD_LOCK:
            previous = threading.stack_size(THREAD_STACK)
            try:
                thread = threading.Thread(target=target, name="gpulint-yaml", daemon=True)
                thread.start()
            finally:
                threading.stack_size(previous)
    except (RuntimeError, ValueError, MemoryError):
        # No thread to be had (memory or thread limits): compose without recursion instead.
        yield from _iter_load(text, lib, problems, iterative=True, packed=packed)
        return
    try:
        while True:
            item = handoff.get()
            if item is done:
                break
            if isinstance(item, BaseException):
                raise item
            yield item
            del item
    finally:
        stop.set()  # a hand-over waiting on a full queue gives up within 0.1 s
        thread.join()


class _Anchors:
    """Whether each document's text holds a ``&``, for documents asked about in order.

    ``before(end)`` says whether a ``&`` lies at or after the previous document's end and
    at or before this one's (the anchors a document's aliases can name are written there).
    One ``find`` looks ahead to the next ``&`` and is reused until a document passes it, so
    the whole text is scanned once for all its documents, not once per document.
    """

    __slots__ = ("_next", "_start", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._start = 0
        #: The first ``&`` at or after ``_start``, or -1 when there is none.
        self._next = text.find("&")

    def before(self, end: int) -> bool:
        if 0 <= self._next < self._start:
            self._next = self._text.find("&", self._start)
        self._start = max(self._start, end)
        return 0 <= self._next <= end


def _load(text: str, lib: YamlLib, *, iterative: bool) -> LoadResult:
    problems: list[Problem] = []
    documents = list(_iter_load(text, lib, problems, iterative=iterative, packed=True))
    return LoadResult(documents, problems)


#: The C composer's words for an anchor name written twice in one document.
_REUSED_ANCHOR = "found duplicate anchor"

#: libyaml's scanner refuses a ``:`` inside a plain scalar of a flow collection
#: (``sources: [https://github.com/org/repo]``), which YAML 1.2 and go-yaml (kubectl, helm)
#: accept; ruamel.yaml's own scanner accepts it too, so such a text is read again with it.
_FLOW_COLON = "found unexpected ':'"


def _alias_message(exc: AliasLimit) -> str:
    """What a document that expands too much, or merges itself, is told."""
    if exc.anchor is not None:
        shown = f"anchor &{exc.anchor}" if exc.anchor else "a mapping"
        return (
            f"{shown} merges itself (a '<<' merge key reaches the mapping it is in), so "
            "the document was not expanded or linted; drop the merge key, as kubectl's "
            'decoder refuses it too ("anchor value contains itself")'
        )
    return (
        "document contains excessive aliasing (an alias bomb?), so it was not expanded or "
        "linted; write the repeated content out: it expands to far more nodes than it writes, "
        "counting merge keys (<<), which kubectl's decoder refuses too"
    )


#: The parser's errors whose context mark, not the mark where it gave up, is the text to
#: edit: a key with no ':' (the scanner reads on to the next line before it gives up) and a
#: quote never closed (it gives up at the end of the text). Other contexts mark where a
#: collection began, which may be far from the mistake: those stay at the problem's mark.
_AT_CONTEXT = {
    ("while scanning a simple key", "could not find expected ':'"),
    ("while scanning a quoted scalar", "found unexpected end of stream"),
}


def _syntax_problem(text: str, lib: YamlLib, exc: Any, end: Any) -> Problem:
    """The problem of a text the parser refused at a mark: one template notice when the file
    is a template (said once, not a syntax error), else the syntax error in words, at the
    key or quote that is wrong when the parser gave up on a later line, saying so."""
    mark = exc.problem_mark or exc.context_mark
    at = getattr(mark, "index", None)
    conflict = find_conflict(text)
    if conflict is not None:  # Git's markers: the cause to name, wherever the parser stopped
        return _conflict_problem(conflict, mark, end)
    template, remaining = template_check(text, lib, at if isinstance(at, int) else 0)
    if template is not None:
        return template
    filled = ""
    later = getattr(remaining, "problem_mark", None) or getattr(remaining, "context_mark", None)
    if mark is not None and later is not None and later.line > mark.line:
        # The parser gave up at a placeholder (``name: {usecase}-inference``), but the text
        # with its placeholders filled in breaks further down: that is the mistake to edit.
        exc, mark, filled = (
            remaining,
            later,
            ", once its placeholders are filled in",
        )
    what = plain_words(str(exc.problem or "invalid YAML"))
    if exc.context:
        what = f"{what} {plain_words(str(exc.context))}"
    what += filled
    started = exc.context_mark
    if (
        (str(exc.context), str(exc.problem)) in _AT_CONTEXT
        and started is not None
        and mark is not None
        and started.line < mark.line
    ):
        rest = text[mark.index :]
        stopped = (
            "the end of the text"
            if all(not ln.strip() or ln.lstrip().startswith("#") for ln in rest.splitlines())
            else f"line {mark.line + 1}"
        )
        if not filled:  # said short: the message stays one line
            what += f" (the one that starts here; the parser stopped at {stopped})"
        mark = started
    span = mark_span(text, mark) if mark is not None else Span(1, 1, 1, 1)
    what += _named_character(text, mark)
    return Problem(codes.SYNTAX_ERROR, clamp(span, end), f"YAML syntax error: {what}")


def _conflict_problem(conflict: Conflict, mark: Any, end: Any) -> Problem:
    """The problem of a text holding an unresolved merge conflict, at its first marker's line;
    where the parser stopped before reaching it, that line is named too."""
    index = getattr(mark, "index", None)
    earlier = isinstance(index, int) and index < conflict.start
    message = conflict.message(mark.line + 1 if earlier else None)
    return Problem(codes.SYNTAX_ERROR, clamp(conflict.span(), end), message)


def _iter_load(
    text: str,
    lib: YamlLib,
    problems: list[Problem],
    *,
    iterative: bool,
    packed: bool | None = False,
    pure: bool = False,
    skip: int = 0,
) -> Iterator[Document]:
    """The documents of ``text`` one at a time; problems of the text as a whole (syntax
    errors, YML004) are added to ``problems`` as they are met. Nothing of a document is
    kept here once the next one is composed. ``packed``: see ``DocumentStream`` (None:
    packed spans whatever the text's size, ``DocumentStream.compact``).
    ``pure``: with ruamel.yaml's Python scanner (after libyaml refused a flow ``:``),
    leaving out the first ``skip`` documents, which were read already."""
    if pure:
        from ruamel.yaml.loader import BaseLoader

        parser: Any = BaseLoader(text)
    else:
        parser = lib.event_parser(text) if iterative else lib.c_parser(text)
    roots = compose_events(parser, lib) if iterative or pure else compose_c(parser)
    end = text_end(text)
    anchors = _Anchors(text)
    compact = packed is None or (packed and len(text) > COMPACT_TEXT)
    index = 0
    # A placeholder that parses (``value: {job_id}``): the file is a template from the
    # document that holds it on, as one that does not parse is (GL205).
    placeholder = parsed_placeholder(text)
    try:
        for node in roots:
            if index < skip:
                index += 1
                continue
            if placeholder is not None and placeholder[0] < node.end_mark.index:
                problems.append(placeholder_problem(text, *placeholder))
                break
            builder = Builder(lib, text, anchors.before(node.end_mark.index), compact)
            start = node_span(node)
            try:
                data = builder.build(node)
            except AliasLimit as exc:
                message = _alias_message(exc)
                problems.append(Problem(codes.EXCESSIVE_ALIASING, clamp(start, end), message))
                index += 1
                continue
            positions = Positions(builder.positions, end)
            doc = Document(
                index, data, positions, clamp(start, end), builder.problems, builder.folded
            )
            for problem in doc.problems:
                problem.span = clamp(problem.span, end)
            del node, builder, data, positions
            index += 1
            yield doc
            del doc
    except TooDeep as exc:
        line, col = exc.mark.line + 1, exc.mark.column + 1
        problems.append(
            Problem(
                codes.SYNTAX_ERROR,
                clamp(Span(line, col, line, col + 1), end),
                f"{TOO_DEEP} {MAX_DEPTH:,} nested block collections or "
                f"{MAX_DEPTH:,} nested flow collections; "
                f"Kubernetes' YAML decoder stops here too (exceeded max depth of {MAX_DEPTH})",
            )
        )
    except lib.MarkedYAMLError as exc:
        if not pure and _FLOW_COLON in str(exc.problem):
            again = _iter_load(
                text, lib, problems, iterative=True, packed=packed, pure=True, skip=index
            )
            yield from again
            return
        if not iterative and _REUSED_ANCHOR in str(exc.context):
            # The C composer refuses an anchor name written twice, which go-yaml (kubectl,
            # Flux, the API server) and YAML 1.2 take: the event composer reads the text on
            # from the document the C composer stopped at.
            again = _iter_load(text, lib, problems, iterative=True, packed=packed, skip=index)
            yield from again
            return
        problems.append(_syntax_problem(text, lib, exc, end))
    except lib.YAMLError as exc:
        what = plain_words(" ".join(str(exc).split()))
        problems.append(Problem(codes.SYNTAX_ERROR, Span(1, 1, 1, 1), f"YAML syntax error: {what}"))
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


#: The parser's names for its tokens, as its messages print them (``'<block end>'``, and
#: from one message of ruamel.yaml's Python parser a one-item tuple,
#: ``('<block mapping start>',)``), in words.
_TOKEN_WORDS = {
    "stream start": "the start of the file",
    "stream end": "the end of the file",
    "directive": "a directive (%YAML, %TAG)",
    "document start": "a document start ('---')",
    "document end": "a document end ('...')",
    "block sequence start": "a block sequence",
    "block mapping start": "a block mapping",
    "block end": "the end of the block collection",
    "flow sequence start": "'['",
    "flow mapping start": "'{'",
    "flow sequence end": "']'",
    "flow mapping end": "'}'",
    "block entry": "'-'",
    "flow entry": "','",
    "key": "a mapping key",
    "value": "':'",
    "alias": "an alias (*name)",
    "anchor": "an anchor (&name)",
    "tag": "a tag",
    "scalar": "a value",
}
#: A token name as the parser prints it: bare, quoted, or quoted in a one-item tuple.
#: (A pattern: compiled on first use, see docs/architecture.md; only syntax errors need it.)
_TOKEN = r"""\(\s*'<([a-z ]+)>'\s*,?\s*\)|'<([a-z ]+)>'|<([a-z ]+)>"""


def plain_words(message: str) -> str:
    """A parser message with its token names (``<block end>``, ``('<block mapping start>',)``)
    in plain words: a finding never shows a Python value's repr."""

    def words(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2) or match.group(3)
        return _TOKEN_WORDS.get(name, name)

    return re.sub(_TOKEN, words, message)


#: Characters a YAML error most often stops at, named (the parser says only "a character").
_NAMED = {
    "\t": "a tab: YAML indents with spaces only",
    "\u00a0": "a no-break space (U+00A0), which looks like a space",
    "\ufeff": "a byte-order mark (U+FEFF) inside the text",
    "@": "'@', which cannot start a plain value: quote it",
    "`": "'`', which cannot start a plain value: quote it",
    "%": "'%', which starts a directive: quote the value",
}


def _named_character(text: str, mark: Any) -> str:
    """`` (the character there is a tab: ...)`` when the error stopped at a character that
    needs naming, else ``""``."""
    index = getattr(mark, "index", None)
    if not isinstance(index, int) or not 0 <= index < len(text):
        return ""
    named = _NAMED.get(text[index])
    return f" (the character there is {named})" if named else ""
