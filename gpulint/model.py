"""The values that flow between the stages: spans, object references and findings.

Data flows one way: files -> documents (data + position index) -> workloads (pod specs with
their paths) -> rules -> findings -> suppression/severity -> reporters.  Everything here is
plain, immutable data so that findings can cross process boundaries and be sorted.

Records on the check path are ``typing.NamedTuple`` (immutable values) or plain classes
with ``__slots__`` (mutable ones), not dataclasses: every run creates these classes again,
and a frozen dataclass takes ~1.4 ms to create (it compiles its methods with ``exec``), a
NamedTuple ~0.2 ms and a plain class ~0.02 ms -- most of a one-file run's start-up once
added up (bench/README.md, "Start-up").

No ``from __future__ import annotations`` here: with it every field annotation is a string,
which ``typing.NamedTuple`` compiles one by one (``ForwardRef``), half of this module's
import time. Annotations that name a class before it exists are quoted instead.
"""

import enum
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from gpulint import codes

if TYPE_CHECKING:
    from gpulint.util.globs import PathMatcher

#: Whether a fix is applied by ``--fix`` (``safe``) or only with ``--unsafe-fixes``.
Applicability = Literal["safe", "unsafe"]

#: A path inside one YAML document: mapping keys (str) and sequence indexes (int).
Path = tuple[Any, ...]


class Span(NamedTuple):
    """A region of a file. Lines and columns are 1-based; the end is exclusive.

    Columns count Unicode code points (SARIF ``columnKind: unicodeCodePoints``).
    """

    line: int
    column: int
    end_line: int
    end_column: int


class Severity(enum.IntEnum):
    """Ordered so that ``severity >= fail_on`` decides the exit code."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            allowed = ", ".join(s.label for s in cls)
            raise ValueError(f"unknown severity {text!r} (allowed: {allowed})") from None


class ObjectRef(NamedTuple):
    """The Kubernetes object a finding belongs to."""

    api_version: str | None
    kind: str | None
    namespace: str | None
    name: str | None

    def label(self) -> str:
        """``Kind/name`` as the text output shows it (the namespace is in JSON)."""
        return f"{self.kind or '?'}/{self.name or '?'}"

    def as_json(self) -> dict[str, str | None]:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }


class Suppression(NamedTuple):
    """Why a finding does not count: where it was silenced and the reason given."""

    kind: str  # "inSource" (a YAML comment or annotation) or "external" (configuration)
    source: str  # e.g. "comment", "annotation", "config"
    justification: str | None = None


class Edit(NamedTuple):
    """Replace the text of ``span`` in the file's original text with ``content`` (an empty
    span inserts, an empty ``content`` deletes). ``start``/``end`` are the same region as
    code-point offsets into the decoded text."""

    span: Span
    start: int
    end: int
    content: str


class Fix(NamedTuple):
    """How to repair a finding: text edits applied together. ``applicability`` is ``"safe"``
    (applied by ``--fix``) or ``"unsafe"`` (changes behaviour; only with ``--unsafe-fixes``).

    ``skipped`` says why a fix the rule offered cannot be applied (it would edit aliased
    content or a Go template, or its place cannot be found in the text); such a fix has no
    edits and is never applied nor offered to editors.
    """

    message: str
    edits: tuple[Edit, ...]
    applicability: Applicability = "safe"
    skipped: str | None = None

    @property
    def available(self) -> bool:
        return self.skipped is None and bool(self.edits)


# -- fixes as rules declare them: changes in document-path terms --------------------------------
# A rule attaches a ``Repair`` to a ``Violation``; the engine turns its changes into exact text
# edits (``Edit``) with the document's side table of positions (``gpulint.fix.edits``).


class RenameKey(NamedTuple):
    """Rename the mapping key at ``path`` to ``to`` (its value, comments and place kept)."""

    path: Path
    to: str


class DeleteKey(NamedTuple):
    """Delete the mapping entry at ``path``. Up to ``prune`` enclosing mappings that the
    deletion leaves empty are deleted with it (``requests:`` holding nothing else)."""

    path: Path
    prune: int = 1


class MoveKey(NamedTuple):
    """Move the entry at ``path`` into the mapping at ``to`` (created when absent), under
    ``key`` when given (else its own key); its value is copied as written. Up to ``prune``
    mappings the move leaves empty are deleted, as with ``DeleteKey``."""

    path: Path
    to: Path
    key: str | None = None
    prune: int = 1


class AddEntry(NamedTuple):
    """Add ``key: value`` to the mapping at ``mapping`` (created when absent); ``value`` is
    plain data (str, int, float, bool, dict, list) written in the style around it."""

    mapping: Path
    key: str
    value: Any


class AppendItem(NamedTuple):
    """Add ``value`` (plain data) to the sequence at ``sequence`` (created when absent)."""

    sequence: Path
    value: Any


Change = RenameKey | DeleteKey | MoveKey | AddEntry | AppendItem


class Repair(NamedTuple):
    """A fix as a rule declares it (``Violation.fix``): changes the engine applies together.

    ``applicability``: ``"safe"`` when the result means what the author meant and changes
    nothing else that works (the API server rejected the object before), ``"unsafe"`` when it
    changes behaviour or guesses the intent (only with ``--unsafe-fixes``).
    """

    message: str
    changes: tuple[Change, ...]
    applicability: Applicability = "safe"


class Related(NamedTuple):
    """Another place a finding is about. ``kind`` is ``"rendered"`` (where it is in the
    output of ``helm template`` / ``kubectl kustomize``: ``path`` is the chart or overlay
    folder, the span counts in that output), ``"template"`` (the template that uses a
    value the finding points at in ``values.yaml``: ``path`` is a file), ``"evidence"``
    (what a fact about the cluster rests on) or ``"value"`` (where a variable the finding
    reads is set: a ConfigMap key, an ``env`` value; in a rendered output, ``path`` is the
    chart or overlay folder and the span counts in that output)."""

    kind: str
    path: str
    span: Span
    message: str


class Finding(NamedTuple):
    """One finding. Equality and hashing leave out ``suppression``: the same finding,
    silenced or not, is the same finding."""

    rule: str
    name: str
    severity: Severity
    path: str
    span: Span
    message: str
    object: ObjectRef | None = None
    #: The path inside the YAML document, for fingerprints and tooling.
    doc_path: Path = ()
    #: Index of the YAML document within the file (0-based).
    document: int = 0
    #: The repair, when the rule offers one (``gpulint check --fix``).
    fix: Fix | None = None
    #: Other places the finding is about (a rendered chart's output, the template that
    #: uses a value); empty for a plain file.
    related: tuple[Related, ...] = ()
    #: What to do about it, shown on a line of its own (``help:``); ``message`` says what is
    #: wrong and where, in one short sentence (:func:`split_help`).
    help: str | None = None
    suppression: Suppression | None = None

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return (self.path, self.span.line, self.span.column, self.rule, self.message)

    # (``other: Any``: inside this class, ``object`` names the field.)
    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, Finding):
            return NotImplemented
        return bool(self[:-1] == other[:-1])

    def __ne__(self, other: Any) -> bool:
        if not isinstance(other, Finding):
            return NotImplemented
        return bool(self[:-1] != other[:-1])

    def __hash__(self) -> int:
        return hash(self[:-1])


#: The finding for a rule that raised (rules/gl900_rule_error.py): always reported, never
#: suppressed, and the run's exit code is 2. The engine makes it; the report counts it and
#: the reporters that tell tool errors apart (SARIF, JUnit) read it.
RULE_ERROR_CODE = codes.RULE_ERROR
#: Findings that are tool errors (exit code 2): a rule that raised, and a chart or overlay
#: whose renderer is not installed (rules/gl202_renderer_missing.py).
TOOL_ERROR_CODES = frozenset({RULE_ERROR_CODE, codes.RENDERER_MISSING})
#: Findings that say something was not checked (a chart or patch left unrendered, GPU content
#: gpulint cannot place, a template): notices, counted apart from problems in the summaries,
#: as ruff and kube-linter keep notes apart from diagnostics.
NOTICE_CODES = frozenset(
    {
        codes.CHART_NOT_RENDERED,
        codes.PATCH_NOT_RENDERED,
        codes.GPU_CONTENT_NOT_CHECKED,
        codes.TEMPLATE_NOT_RENDERED,
    }
)


class LintedObject(NamedTuple):
    """A Kubernetes object the rules ran on, with the codes of the rules that ran.

    Collected only for reporters that list passing checks as well as findings (JUnit).
    """

    path: str
    document: int
    #: None for a chart's values file read as written (gpulint.k8s.chartvalues): no object.
    object: ObjectRef | None
    rules: tuple[str, ...]


def selects(code: str, selectors: Iterable[str]) -> bool:
    """Does any of the rule selectors choose the rule ``code``? The one matcher behind
    ``select`` / ``extend-select`` / ``ignore`` (file and command line), ``per-file-ignores``
    and ``per-object-ignores``: as in ruff, a selector is a code or a prefix of codes
    (``GPU`` every GPU rule, ``GPU0`` GPU001..GPU099) and ``ALL`` is every rule. Selectors
    are upper case here (``gpulint.config.validate.selector`` normalises what users write).
    """
    return any(code.startswith(sel) for sel in selectors) or "ALL" in selectors


# -- configuration ignores: the values of the settings, matched by gpulint.suppress ----------


class PathIgnore(NamedTuple):
    """One ``per-file-ignores`` entry: files matching a glob, and rule codes or prefixes."""

    pattern: str
    matcher: "PathMatcher"
    rules: tuple[str, ...]
    origin: str = "configuration"


class ObjectIgnore(NamedTuple):
    """One ``per-object-ignores`` entry: objects by kind/namespace/name glob, with a reason."""

    reason: str
    kind: str = "*"
    namespace: str = "*"
    name: str = "*"
    rules: tuple[str, ...] = ()  # empty: every rule
    paths: "PathMatcher | None" = None
    origin: str = "configuration"

    def matches(self, ref: ObjectRef, label: str) -> bool:
        import fnmatch

        if self.paths is not None and not self.paths.matches(label):
            return False
        return (
            fnmatch.fnmatchcase(ref.kind or "", self.kind)
            and fnmatch.fnmatchcase(ref.namespace or "", self.namespace)
            and fnmatch.fnmatchcase(ref.name or "", self.name)
        )


# -- a finding's identity across runs: the SARIF fingerprint, which baselines key too --------

#: The SARIF base id of a path inside the working directory.
SRCROOT = "%SRCROOT%"
#: The label of standard input when the run names it no other way (``--stdin-filename``).
STDIN_LABEL = "<stdin>"


def file_location(path: str, cwd: str, stdin_label: str | None = None) -> dict[str, Any]:
    """Where ``path`` is, as a SARIF ``artifactLocation``: relative to ``%SRCROOT%`` (``cwd``)
    when the file is inside it, else an absolute ``file:`` URI."""
    import os
    from pathlib import PurePath
    from urllib.parse import quote

    if stdin_label is not None and path == stdin_label == STDIN_LABEL:
        return {"uri": quote(os.fsencode(path)), "description": {"text": "Standard input."}}
    cwd = os.path.abspath(cwd)
    absolute = os.path.normpath(path if os.path.isabs(path) else os.path.join(cwd, path))
    try:
        relative = os.path.relpath(absolute, cwd)
    except ValueError:  # another drive (Windows)
        relative = os.pardir
    if relative == os.curdir or relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return {"uri": PurePath(absolute).as_uri()}
    # The bytes, not the text: a name that is not UTF-8 (surrogate-escaped) is %XX per byte.
    return {"uri": quote(os.fsencode(PurePath(relative).as_posix())), "uriBaseId": SRCROOT}


def split_help(message: str) -> tuple[str, str | None]:
    """A rule's message as what is wrong and what to do: cut at its first ``; `` outside
    parentheses, brackets and backquotes (a quoted value or a note keeps its own ``;``), as
    rules write it (``nvidia.com/gpu is requested without a limit; move it under
    resources.limits``). A message with no such ``; `` has no help."""
    depth, quoted = 0, False
    for i, ch in enumerate(message):
        if ch == "`":
            quoted = not quoted
        elif quoted:
            continue
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(depth - 1, 0)
        elif ch == ";" and depth == 0 and message[i + 1 : i + 2] == " ":
            return message[:i], message[i + 2 :].strip() or None
    return message, None


def fingerprint(f: Finding, uri: str) -> str:
    """What stays the same of a finding when lines move: its rule, file (``uri``), object
    (or document) and path in the document, hashed (SARIF ``partialFingerprints``, GitLab's
    ``fingerprint`` and the baseline's key)."""
    import hashlib
    import json

    ref = f.object
    parts: list[Any] = [f.rule, uri]
    if ref is not None:
        parts += [ref.kind, ref.namespace, ref.name]
    else:
        parts += [f.document]
    parts.append(list(f.doc_path))
    blob = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
    # "surrogatepass": the same bytes as before for any text, and no error for the lone
    # surrogate of an undecodable file-name byte (the URI is already ASCII).
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:32]
