"""Findings on rendered output moved to the file a user edits.

A finding is made on the rendered stream (``helm template``, ``kubectl kustomize``); its
document and YAML path say what it is about. :class:`Rendered` subclasses say which source
file and line that came from; every finding keeps the rendered place as a related location
(``--show-rendered``; JSON ``related``; SARIF ``relatedLocations``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, NamedTuple

from gpulint.loader.document import Document
from gpulint.model import Finding, Fix, Related, Span


class Place(NamedTuple):
    """Where a finding goes: a file, a span, what to add to its message, related places,
    and the message itself when the rendered one names a line of the output."""

    path: str
    span: Span
    note: str = ""
    related: tuple[Related, ...] = ()
    message: str | None = None


#: Each finding (at its source place) -> its fix in that file, or None (``Rendered.remap``).
Fixes = Callable[[list[tuple[Finding, "Place"]]], list[Fix | None]]


def read_text(path: str, limit: int = 4 << 20) -> str | None:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def load_documents(text: str) -> list[Document]:
    from gpulint.loader.stream import load_text

    try:
        return load_text(text).documents
    except Exception:  # a source that cannot be read maps nothing; never a traceback
        return []


def lookup(data: Any, path: tuple[Any, ...]) -> tuple[bool, Any]:
    """The value at ``path`` in plain data, and whether it is there."""
    for part in path:
        if isinstance(data, dict):
            present = isinstance(part, str) and part in data
        else:
            present = isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data)
        if not present:
            return False, None
        data = data[part]
    return True, data


def at_key(doc: Document | None, finding: Finding) -> bool:
    """Does the finding point at its key (rather than the key's value)? A scalar item of a
    list (an argument) has no key: it is a value."""
    if doc is None or not finding.doc_path:
        return True
    if isinstance(finding.doc_path[-1], int):
        present, value = lookup(doc.data, finding.doc_path)
        if present and not isinstance(value, (dict, list)):
            return False
    return doc.key_span(finding.doc_path) == finding.span


def label_of(path: str) -> str:
    """A file as findings name it: relative to the working directory when inside it."""
    rel = os.path.relpath(path)
    return path if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


class Rendered:
    """One folder's rendered output and how to map a finding on it back to its source."""

    #: The command shown in the rendered location ("helm template", "kubectl kustomize").
    command = ""

    def __init__(self, label: str, folder: str, text: str) -> None:
        self.label = label
        self.folder = folder
        self.text = text
        self._docs: list[Document] | None = None

    @property
    def documents(self) -> list[Document]:
        if self._docs is None:
            self._docs = load_documents(self.text)
        return self._docs

    def document(self, index: int) -> Document | None:
        docs = self.documents
        return (
            docs[index]
            if 0 <= index < len(docs) and docs[index].index == index
            else next((d for d in docs if d.index == index), None)
        )

    def place(self, finding: Finding) -> Place:  # pragma: no cover - overridden
        raise NotImplementedError

    def remap(self, findings: list[Finding], fixes: Fixes | None = None) -> list[Finding]:
        """``findings`` moved to their source files. Their fixes count in the rendered
        text and are dropped, unless ``fixes`` (``--fix`` / ``--diff``:
        :mod:`gpulint.render.fixvalues`) gives each its fix in the source file, or why it
        has none (``Fix.skipped``, also said at the end of the message)."""
        places = []
        for f in findings:
            try:
                where = self.place(f)
            except Exception:  # mapping is best effort: the finding is kept, at the chart
                why = " (shown at the file's first line: its place in the source was not found)"
                where = Place(self.fallback(), Span(1, 1, 1, 1), why)
            places.append(where)
        pairs = zip(findings, places, strict=True)
        moved = [(f._replace(path=w.path, span=w.span), w) for f, w in pairs]
        carried = fixes(moved) if fixes is not None else [None] * len(findings)
        out = []
        shown: set[tuple[object, ...]] = set()
        for f, where, fix in zip(findings, places, carried, strict=True):
            rendered = Related(
                "rendered",
                self.label,
                f.span,
                f"where it is in the output of `{self.command}`",
            )
            message = (f.message if where.message is None else where.message) + where.note
            if fix is not None and fix.skipped is not None:
                message += f" (no fix: {fix.skipped})"
            row = (f.rule, f.severity, where.path, where.span, message, f.object)
            if row in shown:  # one row for what several rendered copies report alike
                continue
            shown.add(row)
            out.append(
                f._replace(
                    path=where.path,
                    span=where.span,
                    message=message,
                    # The rule's own (a ConfigMap key in the same output) are kept.
                    related=(*where.related, *f.related, rendered),
                    fix=fix,
                )
            )
        out.sort(key=Finding.sort_key)
        return out

    def fallback(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError
