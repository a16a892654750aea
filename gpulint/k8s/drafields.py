"""The fields of DRA objects as the API server reads them, every version's shape: a claim's
spec, its requests (defaulted), the DeviceClasses they name, selectors and opaque configs.
Plain reading, no judgement (:mod:`gpulint.k8s.dra` decides what a pod gets,
:mod:`gpulint.k8s.draspec` what the API server rejects)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from gpulint.model import Path


class ClaimRequest(NamedTuple):
    """One device request of a claim, after the API server's defaulting."""

    name: str
    #: The DeviceClass, or each ``firstAvailable`` alternative's.
    classes: tuple[str, ...]
    #: The devices it gets: its count (1 when left out), the same count of every
    #: alternative; None for ``allocationMode: All`` or alternatives of different counts.
    devices: int | None


def device_classes(spec: Any) -> Iterator[str]:
    """DeviceClass names asked for by a ResourceClaimSpec (v1beta1, v1beta2 and v1 shapes)."""
    devices = spec.get("devices") if isinstance(spec, Mapping) else None
    requests = devices.get("requests") if isinstance(devices, Mapping) else None
    if not isinstance(requests, list):
        return
    for request in requests:
        if not isinstance(request, Mapping):
            continue
        candidates: list[Any] = [request, request.get("exactly")]
        alternatives = request.get("firstAvailable")
        if isinstance(alternatives, list):
            candidates.extend(alternatives)
        for candidate in candidates:
            if isinstance(candidate, Mapping):
                name = candidate.get("deviceClassName")
                if isinstance(name, str) and name:
                    yield name


def claim_requests(spec: Any) -> Iterator[ClaimRequest]:
    """The device requests of a ResourceClaimSpec, defaulted as the API server does (a mode
    left out is ``ExactCount``, a count left out is 1), in every version's shape."""
    devices = spec.get("devices") if isinstance(spec, Mapping) else None
    requests = devices.get("requests") if isinstance(devices, Mapping) else None
    if not isinstance(requests, list):
        return
    for request in requests:
        if not isinstance(request, Mapping) or not isinstance(request.get("name"), str):
            continue
        alternatives = request.get("firstAvailable")
        if isinstance(alternatives, list) and alternatives:
            subs = [a for a in alternatives if isinstance(a, Mapping)]
            counts = {_count(a) for a in subs}
            classes = tuple(str(a.get("deviceClassName", "")) for a in subs)
            yield ClaimRequest(request["name"], classes, counts.pop() if len(counts) == 1 else None)
            continue
        exact = request.get("exactly")
        body = exact if isinstance(exact, Mapping) else request
        name = body.get("deviceClassName")
        if isinstance(name, str) and name:
            yield ClaimRequest(request["name"], (name,), _count(body))


def _count(request: Mapping[str, Any]) -> int | None:
    mode = request.get("allocationMode") or "ExactCount"
    count = request.get("count")
    if mode != "ExactCount":
        return None
    if count is None or count == 0:
        return 1
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else None


def claim_spec(obj_kind: str, data: Mapping[str, Any]) -> tuple[Any, Path]:
    """The ResourceClaimSpec of a claim or template and its path in the object."""
    spec = data.get("spec")
    if obj_kind == "ResourceClaimTemplate":
        inner = spec.get("spec") if isinstance(spec, Mapping) else None
        return inner, ("spec", "spec")
    return spec, ("spec",)


def dra_selectors(kind: str, data: Mapping[str, Any]) -> Iterator[tuple[Path, str]]:
    """Every CEL selector expression of a DRA object, with the path of its value (inside the
    object): requests, subrequests and a DeviceClass's own selectors."""
    if kind == "DeviceClass":
        spec = data.get("spec")
        yield from _selector_list(
            spec.get("selectors") if isinstance(spec, Mapping) else None, ("spec", "selectors")
        )
        return
    spec, at = claim_spec(kind, data)
    devices = spec.get("devices") if isinstance(spec, Mapping) else None
    requests = devices.get("requests") if isinstance(devices, Mapping) else None
    if not isinstance(requests, list):
        return
    for i, request in enumerate(requests):
        if not isinstance(request, Mapping):
            continue
        path = (*at, "devices", "requests", i)
        yield from _selector_list(request.get("selectors"), (*path, "selectors"))
        exactly = request.get("exactly")
        if isinstance(exactly, Mapping):
            yield from _selector_list(exactly.get("selectors"), (*path, "exactly", "selectors"))
        alternatives = request.get("firstAvailable")
        if isinstance(alternatives, list):
            for j, sub in enumerate(alternatives):
                if isinstance(sub, Mapping):
                    yield from _selector_list(
                        sub.get("selectors"), (*path, "firstAvailable", j, "selectors")
                    )


def _selector_list(value: Any, path: Path) -> Iterator[tuple[Path, str]]:
    if not isinstance(value, list):
        return
    for k, selector in enumerate(value):
        cel = selector.get("cel") if isinstance(selector, Mapping) else None
        expression = cel.get("expression") if isinstance(cel, Mapping) else None
        if isinstance(expression, str):
            yield (*path, k, "cel", "expression"), expression


def dra_opaque_configs(
    kind: str, data: Mapping[str, Any]
) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """Every ``config[].opaque`` of a DRA object, with its path (inside the object)."""
    if kind == "DeviceClass":
        spec = data.get("spec")
        entries = spec.get("config") if isinstance(spec, Mapping) else None
        base: Path = ("spec", "config")
    else:
        spec, at = claim_spec(kind, data)
        devices = spec.get("devices") if isinstance(spec, Mapping) else None
        entries = devices.get("config") if isinstance(devices, Mapping) else None
        base = (*at, "devices", "config")
    if not isinstance(entries, list):
        return
    for i, entry in enumerate(entries):
        opaque = entry.get("opaque") if isinstance(entry, Mapping) else None
        if isinstance(opaque, Mapping):
            yield (*base, i, "opaque"), opaque


def container_claim_names(resources: dict[str, Any] | None) -> list[str]:
    """The claims a container names in ``resources.claims`` (``name``, ``name/request``)."""
    claims = resources.get("claims") if resources else None
    if not isinstance(claims, list):
        return []
    out = []
    for c in claims:
        if isinstance(c, dict) and isinstance(c.get("name"), str):
            request = c.get("request")
            out.append(f"{c['name']}/{request}" if isinstance(request, str) else c["name"])
    return out
