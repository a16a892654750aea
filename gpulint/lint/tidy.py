"""A file's findings tidied before the engine returns them.

* One cause, one finding (``Rule.yields_to``): a pod's findings without the consequences of
  causes already reported at the same place, so a second cause elsewhere stays visible.
* Findings in content shared through a YAML alias: each says which use it is for, so two
  findings at one anchor never look like a duplicate.
"""

from __future__ import annotations

from typing import Any

from gpulint.loader.document import Document
from gpulint.model import Finding, ObjectRef, Path, Span


def without_consequences(
    found: list[Finding],
    places: list[tuple[Path, ...] | None],
    yielding: dict[str, frozenset[str]],
    pod: Path,
) -> list[Finding]:
    """One pod's findings without the consequences of causes reported (``Rule.yields_to``):
    a finding is dropped when a rule it yields to reports at its path, or, for a finding
    that names its causes' places (``Violation.places``), at or inside each of them (a
    place that is the whole pod, or outside it: at it only). Judged on every finding of the
    pod, so a cause that itself yields to a deeper one still counts."""
    kept: list[Finding] = []
    for finding, own in zip(found, places, strict=True):
        causes = yielding.get(finding.rule)
        if causes and (
            all(_reported(p, True, finding, causes, found, places, pod) for p in own)
            if own is not None
            else _reported(finding.doc_path, False, finding, causes, found, places, pod)
        ):
            continue
        kept.append(finding)
    return kept


def _reported(
    place: Path,
    inside: bool,
    of: Finding,
    causes: frozenset[str],
    found: list[Finding],
    places: list[tuple[Path, ...] | None],
    pod: Path,
) -> bool:
    """Does a finding of ``causes`` report at ``place`` (or, with ``inside``, below it), as
    severe as ``of`` at least (an error is never traded for a warning)?"""
    inside = inside and len(place) > len(pod) and place[: len(pod)] == pod
    n = len(place)
    return any(
        at == place or (inside and at[:n] == place)
        for finding, theirs in zip(found, places, strict=True)
        if finding.rule in causes and finding.severity >= of.severity
        for at in (theirs if theirs is not None else (finding.doc_path,))
    )


_CONTAINER_LISTS = frozenset(("containers", "initContainers", "ephemeralContainers"))


def tell_aliases_apart(doc: Document, findings: list[Finding]) -> None:
    """Say which use each finding is for when aliased content is reported more than once.

    Content shared through a YAML anchor is reported once per use, at the anchor, where the
    fix goes: two findings at one position with one message would look like a duplicate.
    Each gets the container (or the path) it is for, e.g. "(for container evaluator, shared
    through a YAML alias)". Findings at one position for different objects already differ
    in the object they name, and are left as they are.
    """
    groups: dict[tuple[str, Span, str, ObjectRef | None], list[int]] = {}
    for i, f in enumerate(findings):
        groups.setdefault((f.rule, f.span, f.message, f.object), []).append(i)
    for indexes in groups.values():
        if len(indexes) < 2 or len({findings[i].doc_path for i in indexes}) < 2:
            continue
        for i in indexes:
            f = findings[i]
            findings[i] = f._replace(message=f.message + _use_of(doc.data, f.doc_path))


def _use_of(data: Any, path: Path) -> str:
    """The suffix naming the container (or the path) a finding in shared content is for:
    its name alone when it has one (the message is one short line)."""
    shared = "shared through a YAML alias"
    for k in range(len(path) - 2, -1, -1):
        if path[k] in _CONTAINER_LISTS and isinstance(path[k + 1], int):
            where = _dotted(path[: k + 2])
            node: Any = data
            for step in path[: k + 2]:
                if isinstance(node, dict):
                    node = node.get(step)
                elif isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
                    node = node[step]
                else:
                    node = None
            name = node.get("name") if isinstance(node, dict) else None
            if isinstance(name, str) and name:
                return f" (for container {name}, {shared})"
            return f" (for the container at {where}, {shared})"
    return f" (for {_dotted(path)}, {shared})"


def _dotted(path: Path) -> str:
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else str(step))
    return out
