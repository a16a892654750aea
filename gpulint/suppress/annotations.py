"""``gpulint.io/ignore`` annotations on an object or its pod template, read from a document's view.

Annotations survive ``kubectl apply``; comments do not. ``gpulint.io/ignore: "GPU020,GPU021"``
(or ``all``) with an optional ``gpulint.io/ignore-reason``; any other ``gpulint.io/`` key is
a typo, reported as GL100 at the key.
"""

from __future__ import annotations

from typing import Any

from gpulint.k8s.manifest import DocumentView
from gpulint.model import Finding, ObjectRef, Path, Span

IGNORE_ANNOTATION = "gpulint.io/ignore"
REASON_ANNOTATION = "gpulint.io/ignore-reason"


class AnnotationIgnore:
    """``gpulint.io/ignore`` on an object (or List item) or on a pod template."""

    __slots__ = (
        "codes",
        "document",
        "error",
        "object",
        "reason",
        "scope",
        "span",
        "template",
        "used",
        "value_path",
    )

    def __init__(
        self,
        document: int,
        scope: Path,
        codes: tuple[str, ...] | None,
        reason: str | None,
        value_path: Path,
        template: bool,
        span: Span,
        object: ObjectRef | None,
        error: str | None = None,
    ) -> None:
        self.document = document
        self.scope = scope
        self.codes = codes
        self.reason = reason
        self.value_path = value_path
        self.template = template
        self.span = span
        self.object = object
        self.error = error
        self.used: set[str] = set()

    def __repr__(self) -> str:
        return (
            f"AnnotationIgnore(document={self.document}, scope={self.scope!r}, "
            f"codes={self.codes!r}, error={self.error!r})"
        )

    def applies(self, finding: Finding) -> bool:
        return (
            self.error is None
            and finding.object is not None
            and finding.document == self.document
            and finding.doc_path[: len(self.scope)] == self.scope
        )


def _ignore_codes(value: Any) -> tuple[tuple[str, ...] | None, str | None]:
    if not isinstance(value, str):
        return None, (
            f"the {IGNORE_ANNOTATION} annotation must be a string of comma-separated rule "
            "codes (annotation values are strings)"
        )
    parts = [p.strip().upper() for p in value.split(",") if p.strip()]
    if not parts:
        return None, f"the {IGNORE_ANNOTATION} annotation is empty: name rule codes or 'all'"
    if parts in (["ALL"], ["*"]):
        return None, None
    bad = [p for p in parts if not p.isalnum()]
    if bad:
        return None, f"{bad[0]!r} in the {IGNORE_ANNOTATION} annotation is not a rule code"
    return tuple(parts), None


#: The annotations gpulint reads; any other ``gpulint.io/`` key is a typo (GL100).
KNOWN_ANNOTATIONS = (IGNORE_ANNOTATION, REASON_ANNOTATION)
ANNOTATION_DOMAIN = "gpulint.io/"


def _unknown_keys(annotations: dict[str, Any]) -> list[str]:
    """``gpulint.io/`` keys (in any case) that are not an annotation gpulint reads."""
    return [
        key
        for key in annotations
        if isinstance(key, str)
        and key.lower().startswith(ANNOTATION_DOMAIN)
        and key not in KNOWN_ANNOTATIONS
    ]


def _unknown_key_message(key: str) -> str:
    import difflib

    local = key[len(ANNOTATION_DOMAIN) :].lower()
    names = {k[len(ANNOTATION_DOMAIN) :]: k for k in KNOWN_ANNOTATIONS}
    close = difflib.get_close_matches(local, list(names), n=1, cutoff=0.6)
    hint = f" (did you mean {names[close[0]]}?)" if close else ""
    return (
        f"unknown gpulint annotation {key}: it does nothing{hint}; gpulint reads "
        f"{IGNORE_ANNOTATION} and {REASON_ANNOTATION}"
    )


def _annotations(meta: Any) -> dict[str, Any] | None:
    if not isinstance(meta, dict):
        return None
    annotations = meta.get("annotations")
    if isinstance(annotations, dict) and (
        IGNORE_ANNOTATION in annotations or _unknown_keys(annotations)
    ):
        return annotations
    return None


def annotation_ignores(view: DocumentView) -> list[AnnotationIgnore]:
    """The ``gpulint.io/`` annotations of one document's objects and pod templates."""
    out: list[AnnotationIgnore] = []
    doc = view.doc
    seen: set[Path] = set()
    for obj, pods in view.items():
        places: list[tuple[Path, dict[str, Any], bool]] = []
        found = _annotations(obj.data.get("metadata"))
        if found is not None:
            places.append((obj.path, found, False))
        for pod in pods:
            template = pod.template_path
            found = _annotations(pod.template_metadata())
            if template is not None and found is not None:
                places.append((template, found, True))
        for scope, notes, is_template in places:
            if scope in seen:
                continue
            seen.add(scope)
            # A misspelt key (`gpulint.io/ignore-reson`) is GL100 at the key.
            for key in _unknown_keys(notes):
                key_path = (*scope, "metadata", "annotations", key)
                out.append(
                    AnnotationIgnore(
                        doc.index,
                        scope,
                        None,
                        None,
                        key_path,
                        is_template,
                        doc.key_span(key_path),
                        obj.ref,
                        _unknown_key_message(key),
                    )
                )
            if IGNORE_ANNOTATION not in notes:
                continue
            codes, error = _ignore_codes(notes[IGNORE_ANNOTATION])
            reason = notes.get(REASON_ANNOTATION)
            value_path = (*scope, "metadata", "annotations", IGNORE_ANNOTATION)
            out.append(
                AnnotationIgnore(
                    doc.index,
                    scope,
                    codes,
                    reason if isinstance(reason, str) and reason.strip() else None,
                    value_path,
                    is_template,
                    doc.value_span(value_path),
                    obj.ref,
                    error,
                )
            )
    return out
