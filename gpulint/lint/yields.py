"""One cause, one finding (``Rule.yields_to``): a pod's findings without the consequences of
causes already reported at the same place, so a second cause elsewhere stays visible."""

from __future__ import annotations

from gpulint.model import Finding, Path


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
