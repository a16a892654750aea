"""DRA objects as the API server validates them: ResourceClaim, ResourceClaimTemplate and
DeviceClass of ``resource.k8s.io`` ``v1``, ``v1beta2`` and ``v1beta1``.

Each rule quotes Kubernetes' own validation, applied after its defaulting, as the API server
applies them:

- ``pkg/apis/resource/validation/validation.go``: ``validateDeviceClaim`` (at most 32
  requests, constraints and configs, request names unique DNS labels),
  ``validateDeviceRequest`` ("exactly one of `exactly` or `firstAvailable` is required"),
  ``validateExactDeviceRequest`` / ``validateDeviceSubRequest`` (a DeviceClass name, at most
  32 selectors, each with ``cel``), ``validateDeviceAllocationMode`` (``ExactCount`` or
  ``All``; a count "must be greater than zero", and "must not be specified when
  allocationMode is 'All'"), ``validateRequestNameRef`` (a constraint's or config's request
  "must be the name of a request in the claim or the name of a request and a subrequest
  separated by '/'"), ``validateDeviceConstraint``, ``validateDeviceConfiguration``
  (``opaque`` required, with a driver), ``validateDeviceClassSpec``;
- ``pkg/apis/resource/v1/defaults.go`` (and v1beta1's, v1beta2's): an allocation mode left
  out is ``ExactCount``, and an ``ExactCount`` request's count left out (or 0) is 1;
- ``staging/src/k8s.io/api/resource/*/types.go``: which fields each version has. A ``v1``
  or ``v1beta2`` request has its class, selectors, mode and count under ``exactly:``; a
  ``v1beta1`` request has them on the request itself. A field a version does not have is
  refused by kubectl's (and the API server's) strict field validation ("unknown field").

Every problem is plain data (:class:`Problem`), found by :func:`dra_object_problems`; the rules
GPU060 (``invalid-dra-object``) and GPU065 (``dra-driver-config-refused``) report them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from gpulint.k8s.drafields import claim_spec
from gpulint.model import Path

if TYPE_CHECKING:
    from gpulint.k8s.objects import K8sObject

DRA_GROUP = "resource.k8s.io"
DRA_KINDS = ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass")


def is_dra_object(obj: K8sObject) -> bool:
    """Whether ``obj`` is a DRA object gpulint checks: a ResourceClaim, ResourceClaimTemplate
    or DeviceClass of ``resource.k8s.io`` (any version)."""
    return obj.group == DRA_GROUP and obj.kind in DRA_KINDS


#: ``resource.DeviceRequestsMaxSize``, ``DeviceConstraintsMaxSize``, ``DeviceConfigMaxSize``,
#: ``DeviceSelectorsMaxSize``, ``FirstAvailableDeviceRequestMaxSize``.
MAX_REQUESTS = 32
MAX_CONSTRAINTS = 32
MAX_CONFIGS = 32
MAX_SELECTORS = 32
MAX_SUBREQUESTS = 8

#: Fields a request of each shape has (``types.go`` of the version). ``exactly`` holds the
#: "v1 exact" fields in v1 and v1beta2.
_EXACT_FIELDS = frozenset(
    {
        "deviceClassName",
        "selectors",
        "allocationMode",
        "count",
        "adminAccess",
        "tolerations",
        "capacity",
    }
)
_V1_REQUEST_FIELDS = frozenset({"name", "exactly", "firstAvailable"})
_V1BETA1_REQUEST_FIELDS = frozenset({"name", "firstAvailable"}) | _EXACT_FIELDS
_SUBREQUEST_FIELDS = frozenset(
    {"name", "deviceClassName", "selectors", "allocationMode", "count", "tolerations", "capacity"}
)
_MODES = ("ExactCount", "All")

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

#: When each version of resource.k8s.io stops being served (``zz_generated.prerelease-
#: lifecycle.go`` of the version: deprecated, removed).
DRA_LIFECYCLE = {
    "v1beta1": ("1.35", "1.38"),
    "v1beta2": ("1.36", "1.39"),
}


class Problem(NamedTuple):
    """One thing the API server (or the driver) refuses: ``path`` inside the document,
    ``at`` the key or the value there; ``help``, what to do (None: the message's text after
    its first ``; ``)."""

    path: Path
    message: str
    at: str = "key"
    help: str | None = None


#: A message about one field at most (the API server's words past it are the help).
_SHORT = 160


def _api_error(message: str) -> tuple[str, str | None]:
    """``the API server rejects this: FIELD: Invalid value: "x": why; what to do`` as a short
    message (up to the value) and its help (why, then what to do), when it is long."""
    from gpulint.model import split_help

    text, help = split_help(f"the API server rejects this: {message}")
    if len(text) <= _SHORT:
        return text, help
    cut = -1
    for mark in (": Invalid value: ", ": Required value", ": Unsupported value: ", " is required"):
        at = text.find(mark)
        if at >= 0:
            after = at + len(mark)
            if mark.endswith(": ") and text[after : after + 1] == '"':
                after = text.find('"', after + 1) + 1
            cut = after
            break
    if cut <= 0 or not text.startswith(": ", cut):
        return text, help
    why = text[cut + 2 :]
    return text[:cut], why + (f"; {help}" if help else "")


def holds_placeholder(value: str) -> bool:
    """A value a tool fills in before the object reaches the API server: a Helm or Go
    template (``{{ }}``), a Flux ``postBuild.substitute`` or envsubst variable (``${APP}``),
    a shell one (``$(...)``). It is never judged as written."""
    return "{{" in value or "${" in value or "$(" in value


def dns_label(name: str) -> str | None:
    """Why ``name`` is not a DNS-1123 label (``ValidateDNS1123Label``), or None."""
    if len(name) > 63:
        return "must be no more than 63 characters"
    if not _DNS_LABEL.match(name):
        return (
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
            "or '-', and must start and end with an alphanumeric character"
        )
    return None


def dns_subdomain(name: str) -> str | None:
    """Why ``name`` is not a DNS-1123 subdomain (``ValidateDNS1123Subdomain``), or None."""
    if len(name) > 253:
        return "must be no more than 253 characters"
    if not _DNS_SUBDOMAIN.match(name):
        return (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
            "characters, '-' or '.', and must start and end with an alphanumeric character"
        )
    return None


class _Checker:
    def __init__(self, version: str, base: Path) -> None:
        self.version = version
        self.base = base
        self.out: list[Problem] = []

    @property
    def nested(self) -> bool:
        """Requests keep their class, selectors, mode and count under ``exactly:``."""
        return self.version in ("v1", "v1beta2")

    def add(self, path: Path, message: str, at: str = "key") -> None:
        text, help = _api_error(message)
        self.out.append(Problem((*self.base, *path), text, at, help))

    def named_list(self, value: Any, path: Path, limit: int, what: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.add(path, f"{'.'.join(map(str, path))} must be a list", "value")
            return []
        if len(value) > limit:
            self.add(
                path,
                f"{'.'.join(map(str, path))}: Too many: {len(value)}: must have at most "
                f"{limit} {what}",
            )
        return value

    # -- claims -----------------------------------------------------------------------

    def claim(self, spec: Any, at: Path) -> None:
        if not isinstance(spec, Mapping):
            return
        devices = spec.get("devices")
        if not isinstance(devices, Mapping):
            return
        base = (*at, "devices")
        requests = self.named_list(
            devices.get("requests"), (*base, "requests"), MAX_REQUESTS, "requests"
        )
        names: dict[str, set[str] | None] = {}
        seen: set[str] = set()
        for i, request in enumerate(requests):
            if not isinstance(request, Mapping):
                continue
            path = (*base, "requests", i)
            name = self.request_name(request, path, seen)
            subnames = self.request(request, path)
            if name is not None:
                names[name] = subnames
        for section, limit in (("constraints", MAX_CONSTRAINTS), ("config", MAX_CONFIGS)):
            entries = self.named_list(devices.get(section), (*base, section), limit, section)
            for i, entry in enumerate(entries):
                if not isinstance(entry, Mapping):
                    continue
                path = (*base, section, i)
                self.request_refs(entry.get("requests"), (*path, "requests"), names)
                if section == "constraints":
                    self.constraint(entry, path)
                else:
                    self.config(entry, path)

    def request_name(self, request: Mapping[str, Any], path: Path, seen: set[str]) -> str | None:
        name = request.get("name")
        if name is not None and not isinstance(name, str):
            self.add(
                (*path, "name"),
                f"name must be a string, and YAML reads this one as {type(name).__name__} "
                f"{name}; quote it",
                "value",
            )
            return None
        if not name:
            self.add(path, f"{_dotted(path)}.name: Required value")
            return None
        if holds_placeholder(name):
            return name
        why = dns_label(name)
        if why:
            self.add((*path, "name"), f'name: Invalid value: "{name}": {why}', "value")
            return None
        if name in seen:
            self.add((*path, "name"), f'name: Duplicate value: "{name}"', "value")
        seen.add(name)
        return name

    def request(self, request: Mapping[str, Any], path: Path) -> set[str] | None:
        """Check one request; the names of its subrequests (None: it has none)."""
        allowed = _V1_REQUEST_FIELDS if self.nested else _V1BETA1_REQUEST_FIELDS
        alternatives = request.get("firstAvailable")
        has_first = isinstance(alternatives, list) and bool(alternatives)
        flat = [k for k in request if k in _EXACT_FIELDS]
        # A v1beta1 request under v1: one finding, at its first field, says the shape.
        old_shape = self.nested and request.get("exactly") is None and not has_first and flat
        # And a v1 request under v1beta1: one finding, at its exactly:.
        new_shape = not self.nested and "exactly" in request and not has_first and not flat
        for key in request:
            if (
                key not in allowed
                and not (old_shape and key in _EXACT_FIELDS)
                and not (new_shape and key == "exactly")
            ):
                self.unknown_field(request, path, key)
        subnames: set[str] | None = None
        if self.nested:
            exactly = request.get("exactly")
            if old_shape:
                self.add(
                    (*path, flat[0]),
                    "exactly one of `exactly` or `firstAvailable` is required: this request "
                    f"writes {', '.join(flat)} in the v1beta1 shape, which {self.version} "
                    "does not have (kubectl: unknown field); move them under exactly:",
                )
            elif exactly is None and not has_first:
                self.add(path, "exactly one of `exactly` or `firstAvailable` is required")
            elif exactly is not None and has_first:
                self.add(
                    (*path, "firstAvailable"),
                    "exactly one of `exactly` or `firstAvailable` is required, but multiple "
                    "fields are set",
                )
            elif isinstance(exactly, Mapping):
                self.exact(exactly, (*path, "exactly"), _EXACT_FIELDS)
        else:
            if new_shape:
                self.add(
                    (*path, "exactly"),
                    f"{_dotted(path)}.deviceClassName: Required value: this request is "
                    "written in the v1 shape, and v1beta1 has no exactly: (kubectl: unknown "
                    "field); move its fields up onto the request, or write apiVersion: "
                    "resource.k8s.io/v1",
                )
            elif has_first:
                if request.get("deviceClassName"):
                    self.add(
                        (*path, "deviceClassName"),
                        "deviceClassName must not be set when firstAvailable is set",
                    )
            else:
                self.exact(request, path, _V1BETA1_REQUEST_FIELDS, own_fields=False)
        if isinstance(alternatives, list) and alternatives:
            subnames = set()
            first = self.named_list(
                alternatives, (*path, "firstAvailable"), MAX_SUBREQUESTS, "subrequests"
            )
            for j, sub in enumerate(first):
                if not isinstance(sub, Mapping):
                    continue
                sub_path = (*path, "firstAvailable", j)
                for key in sub:
                    if key not in _SUBREQUEST_FIELDS:
                        self.unknown_field(sub, sub_path, key)
                name = self.request_name(sub, sub_path, subnames)
                if name is not None:
                    subnames.add(name)
                self.exact(sub, sub_path, _SUBREQUEST_FIELDS, own_fields=False)
        return subnames

    def unknown_field(self, holder: Mapping[str, Any], path: Path, key: Any) -> None:
        where = f"{_dotted(path)}.{key}"
        hint = ""
        if self.nested and key in _EXACT_FIELDS and "exactly" not in holder:
            hint = f" ({key} is a v1beta1 field: under {self.version} write it under exactly:)"
        elif not self.nested and key == "exactly":
            hint = (
                " (exactly: is the v1/v1beta2 shape: under v1beta1 the class, selectors, "
                "mode and count sit on the request)"
            )
        self.out.append(
            Problem(
                (*self.base, *path, key),
                f"kubectl rejects this (strict field validation): unknown field "
                f'"{where}"{hint}; a client that does not validate fields drops it',
            )
        )

    def exact(
        self,
        request: Mapping[str, Any],
        path: Path,
        fields: frozenset[str],
        own_fields: bool = True,
    ) -> None:
        """The fields of an exact request (or a subrequest) after defaulting."""
        if own_fields:
            for key in request:
                if key not in fields:
                    self.unknown_field(request, path, key)
        device_class = request.get("deviceClassName")
        if not isinstance(device_class, str) or not device_class:
            self.add(path, f"{_dotted(path)}.deviceClassName: Required value")
        elif not holds_placeholder(device_class):
            why = dns_subdomain(device_class)
            if why:
                self.add(
                    (*path, "deviceClassName"),
                    f'deviceClassName: Invalid value: "{device_class}": {why}',
                    "value",
                )
        selectors = self.named_list(
            request.get("selectors"), (*path, "selectors"), MAX_SELECTORS, "selectors"
        )
        for k, selector in enumerate(selectors):
            self.selector(selector, (*path, "selectors", k))
        mode = request.get("allocationMode")
        count = request.get("count")
        if mode is None or mode == "":
            mode = "ExactCount"  # defaults.go
        elif mode not in _MODES:
            fix = next(
                (m for m in _MODES if isinstance(mode, str) and m.lower() == mode.lower()), None
            )
            hint = f"; write {fix} (modes are case-sensitive)" if fix else ""
            self.add(
                (*path, "allocationMode"),
                f'allocationMode: Unsupported value: "{mode}": supported values: "All", '
                f'"ExactCount"{hint}',
                "value",
            )
            return
        if count is None:
            return
        if isinstance(count, bool) or not isinstance(count, int):
            self.add((*path, "count"), f"count must be an integer, not {_kind(count)}", "value")
            return
        if mode == "All" and count != 0:
            self.add(
                (*path, "count"),
                f"count: Invalid value: {count}: must not be specified when allocationMode is "
                "'All'",
                "value",
            )
        elif mode == "ExactCount" and count < 0:
            self.add(
                (*path, "count"),
                f"count: Invalid value: {count}: must be greater than zero",
                "value",
            )

    def selector(self, selector: Any, path: Path) -> None:
        if not isinstance(selector, Mapping):
            return
        cel = selector.get("cel")
        if not isinstance(cel, Mapping):
            self.add(path, f"{_dotted(path)}.cel: Required value")
            return
        if not isinstance(cel.get("expression"), str):
            self.add((*path, "cel"), f"{_dotted(path)}.cel.expression: Required value")

    def request_refs(self, refs: Any, path: Path, names: Mapping[str, set[str] | None]) -> None:
        if not isinstance(refs, list):
            return
        for i, ref in enumerate(refs):
            if not isinstance(ref, str):
                continue
            parts = ref.split("/")
            ok = len(parts) <= 2 and parts[0] in names
            if ok and len(parts) == 2:
                subs = names[parts[0]]
                ok = subs is not None and parts[1] in subs
            if not ok:
                known = sorted(names)
                listed = f" (the claim's requests: {', '.join(known)})" if known else ""
                self.add(
                    (*path, i),
                    f'requests[{i}]: Invalid value: "{ref}": must be the name of a request in '
                    "the claim or the name of a request and a subrequest separated by "
                    f"'/'{listed}",
                    "value",
                )

    def constraint(self, entry: Mapping[str, Any], path: Path) -> None:
        attribute = entry.get("matchAttribute", entry.get("distinctAttribute"))
        if attribute is None:
            self.add(path, f"{_dotted(path)}.matchAttribute: Required value")
            return
        if not isinstance(attribute, str) or "/" not in attribute:
            key = "matchAttribute" if "matchAttribute" in entry else "distinctAttribute"
            self.add(
                (*path, key),
                f'{key}: Invalid value: "{attribute}": a fully qualified name must be a '
                "domain and a name separated by a slash",
                "value",
            )

    def config(self, entry: Mapping[str, Any], path: Path) -> None:
        opaque = entry.get("opaque")
        if not isinstance(opaque, Mapping):
            self.add(path, f"{_dotted(path)}.opaque: Required value")
            return
        if not isinstance(opaque.get("driver"), str) or not opaque.get("driver"):
            self.add((*path, "opaque"), f"{_dotted(path)}.opaque.driver: Required value")
        if opaque.get("parameters") is None:
            self.add((*path, "opaque"), f"{_dotted(path)}.opaque.parameters: Required value")

    # -- DeviceClass ------------------------------------------------------------------

    def device_class(self, spec: Any) -> None:
        if not isinstance(spec, Mapping):
            return
        selectors = self.named_list(
            spec.get("selectors"), ("spec", "selectors"), MAX_SELECTORS, "selectors"
        )
        for k, selector in enumerate(selectors):
            self.selector(selector, ("spec", "selectors", k))
        configs = self.named_list(spec.get("config"), ("spec", "config"), MAX_CONFIGS, "configs")
        for k, entry in enumerate(configs):
            if isinstance(entry, Mapping):
                self.config(entry, ("spec", "config", k))


def dra_object_problems(
    kind: str, version: str, data: Mapping[str, Any], base: Path
) -> list[Problem]:
    """What the API server refuses in a DRA object of ``resource.k8s.io/VERSION``.
    ``base`` is the object's path in its document."""
    if version not in ("v1", "v1beta2", "v1beta1"):
        return []
    checker = _Checker(version, base)
    meta = data.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    if isinstance(name, str) and name and not holds_placeholder(name):
        why = dns_subdomain(name)
        if why:
            checker.add(
                ("metadata", "name"), f'metadata.name: Invalid value: "{name}": {why}', "value"
            )
    if kind == "DeviceClass":
        checker.device_class(data.get("spec"))
    elif kind in ("ResourceClaim", "ResourceClaimTemplate"):
        spec, at = claim_spec(kind, data)
        checker.claim(spec, at)
    return checker.out


def _dotted(path: Path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _kind(value: Any) -> str:
    if isinstance(value, str):
        return f'the string "{value}"'
    if isinstance(value, float):
        return f"the number {value}"
    return type(value).__name__
