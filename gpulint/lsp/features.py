"""Diagnostics, code actions, hover and completion, as Language Server Protocol values.

Everything here works on one text and the findings gpulint made of it; the server
(:mod:`gpulint.lsp.server`) decides when. Positions go through :class:`LineIndex`
(gpulint's code points to the protocol's UTF-16 code units).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from gpulint import codes
from gpulint.lsp.text import LineIndex
from gpulint.model import RULE_ERROR_CODE, Finding, Severity, Span
from gpulint.suppress.annotations import IGNORE_ANNOTATION

if TYPE_CHECKING:
    from gpulint.k8s.devices import DeviceResource, Registry
    from gpulint.rule import Rule

SOURCE = "gpulint"
#: Where each rule's documentation is: its page on the docs site, as SARIF's helpUri.
RULE_HELP_URI = "https://gpulint.github.io/gpulint/rules/{anchor}.html"
#: The stale-suppression rule: its findings are drawn faded, as unused code.
UNUSED_CODE = codes.UNUSED_SUPPRESSION

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.INFO: lsp.DiagnosticSeverity.Information,
}


def _range(index: LineIndex, f: Finding) -> lsp.Range:
    s = f.span
    (sl, sc), (el, ec) = index.span_range(s.line, s.column, s.end_line, s.end_column)
    return lsp.Range(lsp.Position(sl, sc), lsp.Position(el, ec))


def message(f: Finding) -> str:
    """The text format's message: the finding's, then the object it belongs to, then its
    help line."""
    text = f"{f.message} [{f.object.label()}]" if f.object is not None else f.message
    return f"{text}\nhelp: {f.help}" if f.help else text


def diagnostic(index: LineIndex, f: Finding) -> lsp.Diagnostic:
    return lsp.Diagnostic(
        range=_range(index, f),
        message=message(f),
        severity=_SEVERITY[f.severity],
        code=f.rule,
        code_description=lsp.CodeDescription(href=RULE_HELP_URI.format(anchor=f.rule.lower())),
        source=SOURCE,
        tags=[lsp.DiagnosticTag.Unnecessary] if f.rule == UNUSED_CODE else None,
        # The rule's name, the object and the document, for clients and scripts.
        data={
            "name": f.name,
            "object": f.object.as_json() if f.object is not None else None,
            "document": f.document,
            "fix": f.fix.applicability if f.fix is not None and f.fix.available else None,
        },
    )


def shown(findings: Iterable[Finding]) -> list[Finding]:
    """The findings an editor shows: suppressed ones are not (as in the text report)."""
    return [f for f in findings if f.suppression is None]


def diagnostics(index: LineIndex, findings: Iterable[Finding]) -> list[lsp.Diagnostic]:
    return [diagnostic(index, f) for f in findings]


def config_diagnostic(line: int, text: str) -> lsp.Diagnostic:
    """A configuration file that cannot be used, on the line its first error names."""
    start = lsp.Position(max(line - 1, 0), 0)
    return lsp.Diagnostic(
        range=lsp.Range(start, lsp.Position(start.line + 1, 0)),
        message=text,
        severity=lsp.DiagnosticSeverity.Error,
        source=SOURCE,
    )


# -- code actions -------------------------------------------------------------------------------
def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    def key(p: lsp.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def findings_at(index: LineIndex, findings: Sequence[Finding], where: lsp.Range) -> list[Finding]:
    return [f for f in findings if _overlaps(_range(index, f), where)]


def code_actions(
    uri: str, text: str, index: LineIndex, findings: Sequence[Finding], where: lsp.Range
) -> list[lsp.CodeAction]:
    """The fixes of the findings in ``where``, then "disable for this line" and "for this
    object" for each of their rules."""
    found = findings_at(index, findings, where)
    fixes: list[lsp.CodeAction] = []
    lines: list[lsp.CodeAction] = []
    objects: list[lsp.CodeAction] = []
    seen: set[tuple[str, int]] = set()
    for f in found:
        diag = diagnostic(index, f)
        if f.fix is not None and f.fix.available:  # a skipped fix has nothing to apply
            fixes.append(fix_action(uri, index, f, diag))
        if f.rule == RULE_ERROR_CODE or (f.rule, f.span.line) in seen:
            continue  # a rule that raised is never suppressed
        seen.add((f.rule, f.span.line))
        line = disable_line_action(uri, index, f, diag)
        if line is not None:
            lines.append(line)
        obj = disable_object_action(uri, text, index, f, diag)
        if obj is not None:
            objects.append(obj)
    return [*fixes, *lines, *objects]


def fix_action(uri: str, index: LineIndex, f: Finding, diag: lsp.Diagnostic) -> lsp.CodeAction:
    """The rule's own fix. A safe one is the preferred action (what "auto fix" applies); an
    unsafe one (it changes what the manifest does) says so in its title and is never
    preferred, as ``--fix`` applies only safe fixes without ``--unsafe-fixes``."""
    assert f.fix is not None
    edits = [
        lsp.TextEdit(lsp.Range(_pos(index, e.start), _pos(index, e.end)), e.content)
        for e in f.fix.edits
    ]
    safe = f.fix.applicability == "safe"
    title = f"{f.rule}: {f.fix.message}" + ("" if safe else " (unsafe fix)")
    return lsp.CodeAction(
        title=title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diag],
        is_preferred=safe,
        edit=lsp.WorkspaceEdit(changes={uri: edits}),
    )


def _pos(index: LineIndex, offset: int) -> lsp.Position:
    line, character = index.position(offset)
    return lsp.Position(line, character)


_DIRECTIVE_CODES = re.compile(
    r"#\s*gpulint:\s*disable\s*=\s*([A-Za-z0-9]+(?:\s*,\s*[A-Za-z0-9]+)*)", re.I
)


def disable_line_action(
    uri: str, index: LineIndex, f: Finding, diag: lsp.Diagnostic
) -> lsp.CodeAction | None:
    """``# gpulint: disable=CODE`` at the end of the finding's line; added to the codes of a
    ``disable`` comment already there; or, when the line holds another comment (or a ``#``
    in a value) or the finding's value runs over several lines, a ``disable-next-line``
    comment on a line of its own above it, indented as it is."""
    offset = index.offset(f.span.line, 1)
    line, _ = index.position(offset)
    text = index.lsp_line_text(line)
    title = f"Disable {f.rule} for this line"
    existing = _DIRECTIVE_CODES.search(text)
    if existing is not None:
        at = _pos_in_line(index, line, text, existing.end(1))
        edit = lsp.TextEdit(lsp.Range(at, at), f",{f.rule}")
    elif "#" not in text and f.span.end_line == f.span.line:
        at = _pos_in_line(index, line, text, len(text.rstrip()))
        end = _pos_in_line(index, line, text, len(text))
        edit = lsp.TextEdit(lsp.Range(at, end), f"  # gpulint: disable={f.rule}")
    else:
        indent = text[: len(text) - len(text.lstrip(" \t"))]
        at = lsp.Position(line, 0)
        newline = _newline(index.text)
        edit = lsp.TextEdit(
            lsp.Range(at, at), f"{indent}# gpulint: disable-next-line={f.rule}{newline}"
        )
    return lsp.CodeAction(
        title=title,
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diag],
        edit=lsp.WorkspaceEdit(changes={uri: [edit]}),
    )


def _pos_in_line(index: LineIndex, line: int, text: str, column: int) -> lsp.Position:
    """The protocol position of code-point ``column`` (0-based) of line ``line``."""
    return _pos(index, index.line_start(line) + column)


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text[:4096] else "\n"


def disable_object_action(
    uri: str, text: str, index: LineIndex, f: Finding, diag: lsp.Diagnostic
) -> lsp.CodeAction | None:
    """``gpulint.io/ignore: "CODE"`` in the object's ``metadata.annotations`` (the codes
    already there kept), for findings that belong to an object. None when the object has
    no ``metadata`` mapping to write in, or for findings annotations cannot silence (YAML
    problems, stale suppressions)."""
    if f.object is None or f.rule == UNUSED_CODE or f.rule.startswith("YML"):
        return None
    edit = _annotation_edit(text, index, f)
    if edit is None:
        return None
    return lsp.CodeAction(
        title=f"Disable {f.rule} for {f.object.label()} (annotation)",
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diag],
        edit=lsp.WorkspaceEdit(changes={uri: [edit]}),
    )


def _annotation_edit(text: str, index: LineIndex, f: Finding) -> lsp.TextEdit | None:
    from gpulint.k8s.manifest import DocumentView
    from gpulint.k8s.workloads import builtin_table
    from gpulint.lsp.incremental import document_text

    piece = document_text(text, index.offset(f.span.line, f.span.column))
    from gpulint.loader.stream import load_text

    loaded = load_text(piece.text)
    docs = [d for d in loaded.documents if d.index == f.document - piece.documents]
    if not docs:
        return None
    doc = docs[0]
    view = DocumentView(doc, builtin_table())
    owners = [o for o in view.objects if o.ref == f.object and f.doc_path[: len(o.path)] == o.path]
    if not owners:
        return None
    obj = max(owners, key=lambda o: len(o.path))
    metadata = obj.data.get("metadata")
    if not isinstance(metadata, dict):
        return None
    meta_path = (*obj.path, "metadata")
    newline = _newline(text)

    def at(line: int, column: int) -> lsp.Position:
        return _pos(index, index.offset(line, column))

    def first_key(mapping: dict[str, Any], path: tuple[Any, ...]) -> tuple[int, int] | None:
        spans = [doc.key_span((*path, k)) for k in mapping]
        if not spans:
            return None
        first = min(spans, key=lambda s: (s.line, s.column))
        return first.line, first.column

    value = json.dumps(f.rule)
    annotations = metadata.get("annotations")
    if isinstance(annotations, dict):
        ann_path = (*meta_path, "annotations")
        if IGNORE_ANNOTATION in annotations:
            current = annotations[IGNORE_ANNOTATION]
            if not isinstance(current, str):
                return None
            codes = [c.strip() for c in current.split(",") if c.strip()]
            span = doc.value_span((*ann_path, IGNORE_ANNOTATION))
            new = json.dumps(",".join([*codes, f.rule]))
            return lsp.TextEdit(
                lsp.Range(at(span.line, span.column), at(span.end_line, span.end_column)), new
            )
        entry = f"{IGNORE_ANNOTATION}: {value}"
        first = first_key(annotations, ann_path)
        return _insert_entry(index, doc.value_span(ann_path), first, entry, [entry], at, newline)
    if "annotations" in metadata:
        return None  # annotations: null, or not a mapping: not ours to rewrite
    flow = f"annotations: {{{IGNORE_ANNOTATION}: {value}}}"
    block = ["annotations:", f"  {IGNORE_ANNOTATION}: {value}"]
    first = first_key(metadata, meta_path)
    return _insert_entry(index, doc.value_span(meta_path), first, flow, block, at, newline)


def _insert_entry(
    index: LineIndex,
    mapping: Span,
    first: tuple[int, int] | None,
    flow: str,
    block: list[str],
    at: Callable[[int, int], lsp.Position],
    newline: str,
) -> lsp.TextEdit | None:
    """Insert an entry as the first of a mapping: ``flow`` after the ``{`` of a flow
    mapping, or the ``block`` lines above the first key of a block one, at its indentation."""
    text = index.text
    start = index.offset(mapping.line, mapping.column)
    if text[start : start + 1] == "{":
        rest = text[start + 1 :].lstrip()
        sep = "" if rest.startswith("}") else ", "
        pos = at(mapping.line, mapping.column + 1)
        return lsp.TextEdit(lsp.Range(pos, pos), flow + sep)
    if first is None:
        return None
    line, column = first
    # Block style: the new key goes above the first one, at its indentation.
    pos = at(line, 1)
    key_start = index.offset(line, 1)
    prefix = text[key_start : index.offset(line, column)]
    if prefix.strip():  # the first key shares its line with something else ("- name: x")
        return None
    return lsp.TextEdit(lsp.Range(pos, pos), "".join(f"{prefix}{b}{newline}" for b in block))


# -- hover ----------------------------------------------------------------------------------------
#: A resource name, or a DRA device class, under the cursor.
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?(?:/[A-Za-z0-9._-]+)?")


def word_at(line_text: str, column: int) -> tuple[str, int, int] | None:
    """The resource-name-like word around code-point ``column`` of a line, with its start
    and end columns."""
    for m in _NAME.finditer(line_text):
        if m.start() <= column <= m.end():
            return m.group(), m.start(), m.end()
    return None


def describe_resource(entry: DeviceResource, registry: Registry) -> str:
    """A registry entry as markdown: vendor, unit, sharing scheme, constraints."""
    from gpulint.k8s.devices import describe_constraints

    lines = [f"**{entry.name}** — gpulint device registry", ""]
    lines.append(f"- vendor / hardware: {entry.hardware} ({entry.family})")
    kind = {"mig": "a MIG instance", "shared": "shared replicas"}.get(entry.kind, "a device")
    lines.append(f"- unit: {entry.unit} ({kind})")
    for scheme in sorted(entry.schemes):
        about = registry.schemes.get(scheme, {}).get("description", "")
        lines.append(f"- sharing scheme `{scheme}`" + (f": {about}" if about else ""))
    if entry.constraints:
        lines.append(f"- values: {describe_constraints(entry.constraints)}")
    if entry.mig_models:
        lines.append(f"- offered by: {', '.join(sorted(entry.mig_models))}")
    if not entry.container_request:
        lines.append("- not requested by containers (a node-level resource)")
    if entry.advice:
        lines.extend(["", entry.advice])
    if entry.source:
        lines.extend(["", f"Source: {entry.source}"])
    return "\n".join(lines)


def hover(
    index: LineIndex,
    findings: Sequence[Finding],
    rules: Sequence[Rule],
    registry: Registry,
    position: lsp.Position,
) -> lsp.Hover | None:
    """The registry entry of the GPU resource name under the cursor, and the documentation
    of the rules whose findings are there."""
    parts: list[str] = []
    line_text = index.lsp_line_text(position.line)
    offset = index.to_offset(position.line, position.character)
    column = offset - index.line_start(position.line)
    word = word_at(line_text, column)
    if word is not None:
        name = word[0]
        entry = registry.get(name)
        if entry is not None:
            parts.append(describe_resource(entry, registry))
        elif name in registry.legacy:
            old = registry.legacy[name]
            parts.append(
                f"**{name}** — a legacy resource name: use `{old.replacement}`. {old.note}"
            )
        elif name in registry.device_classes:
            dc = registry.device_classes[name]
            parts.append(f"**{name}** — a DRA device class: {dc.hardware} ({dc.unit})")
    here = lsp.Range(position, position)
    by_code = {r.code: r for r in rules}
    done: set[str] = set()
    for f in findings_at(index, findings, here):
        rule = by_code.get(f.rule)
        if rule is None or f.rule in done:
            continue
        done.add(f.rule)
        parts.append(f"**{rule.code}** `{rule.name}` ({f.severity.label})\n\n{rule.doc}")
    if not parts:
        return None
    return lsp.Hover(
        contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n\n---\n\n".join(parts))
    )


# -- completion -----------------------------------------------------------------------------------
_PARENT = re.compile(r"^(\s*)(?:-\s+)?(limits|requests)\s*:\s*(?:#.*)?$")
_GRANDPARENT = re.compile(r"^(\s*)(?:-\s+)?resources\s*:\s*(?:#.*)?$")
_TYPING_KEY = re.compile(r"^(\s*)([A-Za-z0-9._/-]*)$")


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _parent_line(index: LineIndex, line: int, indent: int) -> tuple[int, str] | None:
    """The nearest line above ``line`` holding content less indented than ``indent``."""
    for above in range(line - 1, -1, -1):
        text = index.lsp_line_text(above)
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if _indent(text) < indent:
            return above, text
    return None


def in_resources(index: LineIndex, position: lsp.Position) -> tuple[int, str] | None:
    """When the cursor is typing a key of ``resources.limits`` or ``resources.requests``:
    the column the key starts at and what is typed of it."""
    line_text = index.lsp_line_text(position.line)
    column = index.to_offset(position.line, position.character) - index.line_start(position.line)
    typed = _TYPING_KEY.match(line_text[:column])
    if typed is None:
        return None
    indent = len(typed.group(1))
    parent = _parent_line(index, position.line, indent)
    if parent is None or _PARENT.match(parent[1]) is None:
        return None
    grand = _parent_line(index, parent[0], _indent(parent[1]))
    if grand is None or _GRANDPARENT.match(grand[1]) is None:
        return None
    return indent, typed.group(2)


def completions(
    index: LineIndex, registry: Registry, position: lsp.Position
) -> lsp.CompletionList | None:
    """The registry's resource names (devices, MIG profiles, shared replicas) as keys of
    ``resources.limits`` / ``resources.requests``."""
    where = in_resources(index, position)
    if where is None:
        return None
    column, _ = where
    start = _pos(index, index.line_start(position.line) + column)
    replace = lsp.Range(start, position)
    order = {"device": "0", "mig": "1", "shared": "2"}
    items = []
    for entry in registry.resources.values():
        if not entry.container_request:
            continue
        items.append(
            lsp.CompletionItem(
                label=entry.name,
                kind=lsp.CompletionItemKind.Property,
                detail=f"{entry.hardware}: {entry.unit}",
                documentation=lsp.MarkupContent(
                    kind=lsp.MarkupKind.Markdown, value=describe_resource(entry, registry)
                ),
                sort_text=order.get(entry.kind, "3") + entry.name,
                filter_text=entry.name,
                text_edit=lsp.TextEdit(replace, f"{entry.name}: "),
            )
        )
    return lsp.CompletionList(is_incomplete=False, items=items)
