"""Which part of a template of several ``---`` documents a rendered document came from.

helm prints the documents of a template under the template's name, sorted by kind (its
install order: a Service before a Deployment), and those of one kind in the template's
order. So a finding in the second Deployment helm printed from ``templates/workers.yaml``
is in the part of that template that writes its second Deployment. The template is split
at its top-level ``---`` lines (those outside any ``if``/``range``/``with`` block) into
segments, and each segment writes, of the finding's kind:

* exactly one document, when its literal ``kind:`` is that kind alone and some of its
  content is outside every block;
* none or one, when all its content is inside a block (``{{- if .Values.x.enabled }}``),
  or its kind is templated (``kind: {{ .Values.kind }}``) or written twice;
* any number, when it holds a ``---`` inside a block (``{{- range }} --- ... {{- end }}``),
  or writes nothing literal but an action (``{{ include "lib.deployment" . }}``);
* none, when its literal kinds are others, or it has neither content nor actions.

Every in-order assignment of the kind's documents to segments within those counts is
considered; the finding's document is placed in a segment only when every assignment puts
it there. Inside that segment, a part between inner ``---`` lines is chosen when it is the
only one with content, or the only one whose literal ``kind:`` is the document's. Anything
else is not known, and the caller says so rather than guess (never confidently wrong).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from gpulint.render.helm.templatetext import OPENS, Template, actions, without_actions
from gpulint.render.mapping import read_text

if TYPE_CHECKING:
    from gpulint.loader.document import Document
    from gpulint.render import ChartOptions

_DOC_START = re.compile(r"^---\s*(?:#.*)?$")
#: What ``str.splitlines`` breaks a line at besides ``\n`` (and ``\r\n``).
_OTHER_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_KIND = re.compile(r"^kind:\s*['\"]?([A-Za-z0-9]+)['\"]?\s*(?:#.*)?$", re.MULTILINE)
_ANY_KIND = re.compile(r"^kind:\s*\{\{", re.MULTILINE)
_CONTROL = frozenset((*OPENS, "else", "end", "template", "break", "continue"))
_ASSIGN = re.compile(r"^\$[\w]*\s*:?=")
#: Segments x documents of one template weighed at most (more: not known which part).
MAX_CELLS = 500_000

#: Documents a segment writes: (at least, at most; -1 any number).
ONE, OPTIONAL, MANY, NONE = (1, 1), (0, 1), (0, -1), (0, 0)


class Part(NamedTuple):
    """The document a finding is in, among those helm printed from its template (the
    header's name, ``source``): its kind (None: not a mapping with a kind), how many of
    that kind helm printed from it (``of``), and its ordinal among them."""

    source: str
    kind: object
    ordinal: int
    of: int


class Resolved(NamedTuple):
    """A template a rendered document came from, and the charts it is in."""

    path: str  # the template, as under the chart folder (what findings name)
    real: str  # its real path (what is read); in a packaged subchart, the archive's member
    #: (chart folder, prefix of its keys in the outermost chart's values), outermost first
    chain: tuple[tuple[str, tuple[str, ...]], ...]
    #: The packaged subchart (``charts/<sub>.tgz``) the template is a member of, if it is,
    #: and the member's text.
    archive: str | None = None
    member_text: str | None = None
    #: Which of the template's documents (``sections.Parts``).
    part: Part | None = None


class Parts:
    """The :class:`Part` of each rendered line, from helm's ``# Source:`` headers
    (``sources``: line, template) and the parsed documents; indexed once, so each
    finding's part is found in log time."""

    def __init__(self, sources: list[tuple[int, str]], documents: list[Document]) -> None:
        self._starts = [line for line, _ in sources]
        self._sources = sources
        self._kinds: list[object] = [None] * len(sources)
        for doc in documents:
            at = bisect.bisect_right(self._starts, doc.start.line) - 1
            if at >= 0 and isinstance(doc.data, dict):
                self._kinds[at] = doc.data.get("kind")
        self._counts: dict[tuple[str, object], int] = {}
        self._ordinals: list[int] = []
        for i, (_, source) in enumerate(sources):
            key = (source, _hashable(self._kinds[i]))
            self._ordinals.append(self._counts.get(key, 0))
            self._counts[key] = self._ordinals[-1] + 1

    def of(self, line: int) -> Part | None:
        at = bisect.bisect_right(self._starts, line) - 1
        if at < 0:
            return None
        source, kind = self._sources[at][1], _hashable(self._kinds[at])
        return Part(source, kind, self._ordinals[at], self._counts[(source, kind)])


def _hashable(kind: object) -> object:
    return kind if isinstance(kind, str) else None


class Cut(NamedTuple):
    """A template cut to the document a finding is in (the other lines blanked, so line
    numbers stay the template's), and whether that is known: False when the template
    writes several documents and which of them it is is not known (the template whole)."""

    template: Template
    known: bool


#: (first line, end, documents it writes, its literal kinds, the ``if`` around it all)
_Segment = tuple[int, int, tuple[int, int], "frozenset[str] | None", "str | None"]


class Sections:
    """The template cut of every rendered document of a chart, each template read, split
    and weighed once, and the documents of each template placed once for all of them."""

    def __init__(
        self,
        sources: list[tuple[int, str]],
        documents: list[Document],
        folder: str = "",
        options: ChartOptions | None = None,
    ) -> None:
        from gpulint.render.helm.conditions import chart_truth

        self.parts = Parts(sources, documents)
        #: Whether an ``if`` held (:func:`.conditions.chart_truth`): condition, values prefix.
        self._truth = chart_truth(folder, options) if options is not None else None
        self._plans: dict[str, tuple[list[str], list[int], list[_Segment]] | None] = {}
        self._places: dict[tuple[str, str, object], list[int | None]] = {}
        self._cuts: dict[tuple[str, int, int], Template] = {}
        self._inner: dict[tuple[str, int, object], tuple[int, int] | None] = {}

    def cut(self, resolved: Resolved) -> Cut:
        """The cut of a resolved template (a file, or a packaged subchart's member) for the
        document it names (``resolved.part``)."""
        real, part = resolved.real, resolved.part

        def text() -> str:
            archived = resolved.archive is not None
            return (resolved.member_text if archived else read_text(real)) or ""

        if real not in self._plans:
            self._plans[real] = _plan(text(), self._decider(resolved.chain[0][1]))
        plan = self._plans[real]
        if plan is None or part is None:  # one document: the whole template
            return Cut(self._template(real, text, 0, -1), True)
        raw, cuts, segments = plan
        if not segments or len(segments) * part.of > MAX_CELLS:
            return Cut(self._template(real, text, 0, -1), False)
        key = (real, part.source, part.kind)
        if key not in self._places:
            truth, prefix = self._truth, resolved.chain[0][1]
            held = (lambda c: truth(c, prefix, None)) if truth else None
            counts = [_of_kind(seg, part.kind, held) for seg in segments]
            self._places[key] = _assign(counts, part.of)
        where = self._places[key][part.ordinal]
        if where is None:
            return Cut(self._template(real, text, 0, -1), False)
        inner = (real, where, part.kind)
        if inner not in self._inner:
            a, b = segments[where][:2]
            self._inner[inner] = _inner(raw, cuts, a, b, part.kind)
        pick = self._inner[inner]
        if pick is None:
            return Cut(self._template(real, text, 0, -1), False)
        return Cut(self._template(real, text, *pick), True)

    def _decider(
        self, prefix: tuple[str, ...]
    ) -> Callable[[str, dict[str, tuple[str, ...]]], bool | None] | None:
        """Whether an ``if`` held, given the template's variables that name values paths."""
        truth = self._truth
        if truth is None:
            return None

        def decide(condition: str, bindings: dict[str, tuple[str, ...]]) -> bool | None:
            return truth(condition, prefix, bindings)

        return decide

    def _template(self, real: str, text: Callable[[], str], lo: int, hi: int) -> Template:
        """The template cut to lines ``lo..hi-1`` (the others blanked; ``hi`` < 0: whole),
        each made once; a cut shares the whole template's lines and indexes
        (:meth:`Template.cut`), unless the template has line breaks other than ``\\n``."""
        key = (real, lo, hi)
        if key not in self._cuts:
            whole_key = (real, 0, -1)
            if whole_key not in self._cuts:
                whole = self._cuts[whole_key] = Template(text())
                plain = _OTHER_BREAKS.search(whole.text.replace("\r\n", "\n")) is None
                whole.shared["cuttable"] = plain  # line breaks split and splitlines agree on
            whole = self._cuts[whole_key]
            if hi < 0:
                pass
            elif whole.shared["cuttable"]:
                self._cuts[key] = Template.cut(whole, lo, hi)
            else:
                raw = whole.text.split("\n")
                kept = "\n".join(line if lo <= i < hi else "" for i, line in enumerate(raw))
                self._cuts[key] = Template(kept, whole.text)
        return self._cuts[key]


def _plan(
    text: str, decide: Callable[[str, dict[str, tuple[str, ...]]], bool | None] | None = None
) -> tuple[list[str], list[int], list[_Segment]] | None:
    """A template's lines, its ``---`` lines and its weighed top-level segments; None for
    a template of one document. A template whose content is all inside one ``if`` is split
    inside it (it rendered, so the ``if`` held), and with an ``else``, inside the branch
    ``decide`` says was taken (the other's lines blanked); undecided, as it is."""
    raw = text.split("\n")
    cuts = [i for i, line in enumerate(raw) if _DOC_START.match(line)]
    if not cuts:
        return None
    depth = _depths(text, len(raw))
    wrapper = _wrapped(text)
    if wrapper is not None:
        condition, at_if, at_else, at_end = wrapper
        held: bool | None = True
        if at_else is not None:
            from gpulint.render.helm.bindings import value_bindings

            held = decide(condition, value_bindings(text)) if decide is not None else None
        if held is not None:
            if at_else is not None:
                blank = range(at_else, at_end + 1) if held else range(at_if, at_else + 1)
                raw = [("" if i in blank else line) for i, line in enumerate(raw)]
                cuts = [i for i in cuts if i not in blank]
            depth = [max(d - 1, 0) for d in depth]
    top = [i for i in cuts if depth[i] == 0]
    bounds = list(zip([0] + [c + 1 for c in top], [*top, len(raw)], strict=True))
    segments = [(a, b, *_weigh(raw, depth, cuts, a, b), _guard(raw, a, b)) for a, b in bounds]
    return raw, cuts, [s for s in segments if s[2] != NONE]


def _wrapped(text: str) -> tuple[str, int, int | None, int] | None:
    """When all of a template's content is inside one ``if`` (at most variable assignments
    before it, ``{{- $module := index .Values "modules" "x" }}``), with at most one plain
    ``else``, each on a line of its own: its condition and the lines (0-based) of the
    ``if``, the ``else`` (None) and the ``end``."""
    depth, pos = 0, 0
    found: list[tuple[str, int]] = []  # ("if", line), ("else", line), ("end", line)
    condition = ""
    for m in actions(text):
        if depth == 0 and _content_in(text[pos : m.begin]):
            return None
        pos = m.stop
        word, body = m.word, m.body
        line = text.count("\n", 0, m.begin)
        if depth == 0:
            if found:
                return None  # a second block, or an action after the first one's end
            if word == "if":
                found.append(("if", line))
                condition, depth = body[2:].strip(), 1
                continue
            if not body or body.startswith("/*") or _ASSIGN.match(body):
                continue
            return None
        if word in OPENS:
            depth += 1
        elif word == "end":
            depth -= 1
            if depth == 0:
                found.append(("end", line))
        elif word == "else" and depth == 1:
            if body.strip("- ") != "else" or len(found) > 1:
                return None  # `else if`, or a second `else`
            found.append(("else", line))
    if depth != 0 or not found or _content_in(text[pos:]):
        return None
    lines = text.split("\n")
    if any(_content_in(lines[i]) for _, i in found):
        return None
    at = dict(found)
    return condition, at["if"], at.get("else"), at["end"]


def _depths(text: str, count: int) -> list[int]:
    """The block depth at the start of each line."""
    out = [0] * (count + 1)
    depth, line, pos = 0, 0, 0
    for m in actions(text):
        end_line = line + text.count("\n", pos, m.begin)
        for i in range(line + 1, end_line + 1):
            out[i] = depth
        line, pos = end_line, m.begin
        word = m.word
        if word in OPENS:
            depth += 1
        elif word == "end":
            depth = max(depth - 1, 0)
    for i in range(line + 1, count + 1):
        out[i] = depth
    return out[:count]


def _content(line: str) -> bool:
    text = line.strip()
    return bool(text) and not text.startswith("#") and not text.startswith("{{")


def _writes(line: str) -> bool:
    """Does a line of actions only print something (``{{ include "x" . }}``)?"""
    for m in actions(line):
        body = m.body
        word = m.word
        if body and not body.startswith("/*") and word not in _CONTROL and not _ASSIGN.match(body):
            return True
    return False


def _weigh(
    raw: list[str], depth: list[int], cuts: list[int], a: int, b: int
) -> tuple[tuple[int, int], frozenset[str] | None]:
    """How many documents the segment ``raw[a:b]`` writes (min, max), and its literal kinds
    (None: any kind)."""
    lines = range(a, b)
    content = [i for i in lines if _content(raw[i]) and not _DOC_START.match(raw[i])]
    block = "\n".join(raw[a:b])
    kinds = None if _ANY_KIND.search(block) else frozenset(_KIND.findall(block))
    kinds = kinds or None
    first, stop = bisect.bisect_left(cuts, a), bisect.bisect_left(cuts, b)
    if any(depth[c] > 0 for c in cuts[first:stop]):  # the `---` lines inside the segment
        return MANY, kinds
    if not content:
        return (MANY, None) if any(_writes(raw[i]) for i in lines) else (NONE, None)
    return (ONE if min(depth[i] for i in content) == 0 else OPTIONAL), kinds


def _guard(raw: list[str], a: int, b: int) -> str | None:
    """The condition of the ``if`` (without ``else``) around all the content of the lines
    ``a`` to ``b`` of a template (``raw``: its lines), if one is."""
    body = "\n".join(raw[a:b])
    found = list(actions(body))
    words = [(m, m.word) for m in found]
    if not words or words[0][1] != "if" or _content_in(body[: words[0][0].begin]):
        return None
    depth = 0
    for m, word in words:
        depth += 1 if word in OPENS else -1 if word == "end" else 0
        if depth == 1 and word == "else":
            return None
        if depth == 0:
            return None if _content_in(body[m.stop :]) else words[0][0].body[2:].strip()
    return None


def _content_in(text: str) -> bool:
    return any(_content(line) for line in without_actions(text).split("\n"))


def _of_kind(
    segment: _Segment, kind: object, held: Callable[[str], bool | None] | None = None
) -> tuple[int, int]:
    """How many documents of ``kind`` a segment writes (at least, at most; -1 any), the
    ``if`` around it decided by ``held`` when it can be."""
    weight, kinds, guard = segment[2], segment[3], segment[4]
    known = held(guard) if held is not None and guard is not None else None
    if known is False:
        return NONE
    if known and weight == OPTIONAL:
        weight = ONE
    if kinds is None or len(kinds) > 1:
        return (0, weight[1]) if kind in (kinds or {kind}) else NONE
    return weight if kind in kinds else NONE


def _assign(counts: list[tuple[int, int]], n: int) -> list[int | None]:
    """For each of ``n`` documents in order, the one segment every assignment puts it in
    (None: more than one may), segment ``j`` taking ``counts[j]`` documents (at least, at
    most; -1 any number). Linear in documents x segments."""
    s = len(counts)
    skip = [c[0] == 0 for c in counts]
    many = [c[1] == -1 for c in counts]
    takes = [c[1] != 0 for c in counts]
    forward = [[False] * s for _ in range(n)]
    for i in range(n):
        carry = i == 0  # the start, or a document before, and only skippable segments since
        for j in range(s):
            stay = i > 0 and many[j] and forward[i - 1][j]
            forward[i][j] = takes[j] and (stay or carry)
            carry = (i > 0 and forward[i - 1][j]) or (carry and skip[j])
    backward = [[False] * s for _ in range(n)]
    for i in range(n - 1, -1, -1):
        carry = i == n - 1
        for j in range(s - 1, -1, -1):
            stay = i < n - 1 and many[j] and backward[i + 1][j]
            backward[i][j] = takes[j] and (stay or carry)
            carry = (i < n - 1 and backward[i + 1][j]) or (carry and skip[j])
    out: list[int | None] = []
    for i in range(n):
        places = [j for j in range(s) if forward[i][j] and backward[i][j]]
        out.append(places[0] if len(places) == 1 else None)
    return out


def _inner(raw: list[str], cuts: list[int], a: int, b: int, kind: object) -> tuple[int, int] | None:
    """The lines of the part of segment ``raw[a:b]`` (split at its inner ``---``) the
    document of ``kind`` is in: the only one with content, or the only one of that kind."""
    inner = cuts[bisect.bisect_left(cuts, a) : bisect.bisect_left(cuts, b)]
    if not inner:
        return a, b
    parts = list(zip([a] + [c + 1 for c in inner], [*inner, b], strict=True))
    parts = [(lo, hi) for lo, hi in parts if any(_content(line) for line in raw[lo:hi])]
    if len(parts) == 1:
        return parts[0]
    kinds = [_KIND.findall("\n".join(raw[lo:hi])) for lo, hi in parts]
    hits = [p for p, found in zip(parts, kinds, strict=True) if found == [kind]]
    return hits[0] if len(hits) == 1 else None
