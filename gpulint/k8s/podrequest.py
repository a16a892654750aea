"""A pod's effective resource requests, computed with the scheduler's arithmetic.

The facts: docs/domain.md#effective-pod-request.

``k8s.io/component-helpers/resource`` ``PodRequests`` / ``AggregateContainerRequests``:

* every regular container's requests are summed;
* a sidecar (an init container with ``restartPolicy: Always``) runs beside them, so it is added
  to that sum, and it keeps running while the init containers declared after it run;
* a regular init container runs alone, beside only the sidecars declared before it;
* the pod needs, per resource, the largest of: the regular sum (sidecars included), and each
  init container's request plus the sidecars declared before it;
* ``spec.overhead`` (set from the RuntimeClass) is added last.

Requests are taken after defaulting: ``SetDefaults_Pod`` copies each limit into a missing
request, which is why a GPU written only under ``limits`` is requested. Extended resources
(GPUs) come only from these container sums; pod-level ``spec.resources`` cannot hold them.
A null value reads as zero, as Kubernetes' quantity decoder reads ``null``; placeholders and
unparseable values are not evaluated and are reported as such.
"""

from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any, NamedTuple

from gpulint.k8s.quantity.arith import add
from gpulint.k8s.resources import amount
from gpulint.k8s.workloads import Container, PodSpec
from gpulint.model import Path

ResourceList = dict[str, Decimal]


class Unevaluated(NamedTuple):
    """A request value the arithmetic could not use."""

    container: str | None
    resource: str
    value: Any
    #: "placeholder" or the reason the value is not a quantity.
    reason: str
    path: Path


class ContainerRequests(NamedTuple):
    container: Container
    #: Effective requests (limits copied into missing requests), parsed.
    requests: ResourceList
    #: Where each effective request is written (the requests key, else the limits key).
    paths: dict[str, Path]
    unevaluated: tuple[Unevaluated, ...] = ()
    #: Resources whose value is null (read as zero).
    nulls: tuple[str, ...] = ()

    @property
    def role(self) -> str:
        """ "container", "init", "sidecar" or "ephemeral", as the arithmetic treats it."""
        if self.container.section == "initContainers":
            return "sidecar" if self.container.sidecar else "init"
        if self.container.section == "ephemeralContainers":
            return "ephemeral"
        return "container"


class PodRequests:
    """The pod's effective requests and how they were reached."""

    __slots__ = ("containers", "overhead", "requests", "unevaluated")

    def __init__(
        self,
        requests: ResourceList,
        containers: list[ContainerRequests] | None = None,
        overhead: ResourceList | None = None,
        unevaluated: list[Unevaluated] | None = None,
    ) -> None:
        self.requests = requests
        self.containers: list[ContainerRequests] = [] if containers is None else containers
        self.overhead: ResourceList = {} if overhead is None else overhead
        self.unevaluated: list[Unevaluated] = [] if unevaluated is None else unevaluated

    def __repr__(self) -> str:
        return f"PodRequests({self.requests!r}, unevaluated={self.unevaluated!r})"

    def get(self, name: str) -> Decimal:
        return self.requests.get(name, Decimal(0))


def _add(into: ResourceList, other: Mapping[str, Decimal]) -> None:
    for name, value in other.items():
        into[name] = add(into.get(name, Decimal(0)), value)  # exact at any size


def _max(into: ResourceList, other: Mapping[str, Decimal]) -> None:
    for name, value in other.items():
        if name not in into or value > into[name]:
            into[name] = value


def aggregate(
    containers: Iterable[Mapping[str, Decimal]],
    init_containers: Iterable[tuple[Mapping[str, Decimal], bool]],
    overhead: Mapping[str, Decimal] | None = None,
) -> ResourceList:
    """``PodRequests`` over already-defaulted request lists.

    ``init_containers`` are (requests, is_sidecar) in declaration order.
    """
    reqs: ResourceList = {}
    for requests in containers:
        _add(reqs, requests)
    sidecars: ResourceList = {}
    init_max: ResourceList = {}
    for requests, is_sidecar in init_containers:
        if is_sidecar:
            _add(reqs, requests)
            _add(sidecars, requests)
            candidate = dict(sidecars)
        else:
            candidate = {}
            _add(candidate, requests)
            _add(candidate, sidecars)
        _max(init_max, candidate)
    _max(reqs, init_max)
    if overhead:
        _add(reqs, overhead)
    return reqs


def _parse(
    values: Mapping[str, Any], where: Path, owner: str | None, into: ResourceList
) -> tuple[list[Unevaluated], list[str]]:
    unevaluated: list[Unevaluated] = []
    nulls: list[str] = []
    for name, value in values.items():
        _parse_one(name, value, (*where, name), owner, into, unevaluated, nulls)
    return unevaluated, nulls


def _parse_one(
    name: str,
    value: Any,
    path: Path,
    owner: str | None,
    into: ResourceList,
    unevaluated: list[Unevaluated],
    nulls: list[str],
) -> None:
    """One ``name: value`` of a resource list: its quantity into ``into``, or why not."""
    parsed = amount(value)
    if parsed.null:
        into[name] = Decimal(0)
        nulls.append(name)
    elif parsed.value is not None:
        into[name] = parsed.value
    else:
        reason = "placeholder" if parsed.placeholder else (parsed.error or "not a quantity")
        unevaluated.append(Unevaluated(owner, name, value, reason, path))


def container_requests(
    container: Container, wanted: Callable[[str], bool] | None = None
) -> ContainerRequests:
    """A container's requests after ``SetDefaults_Pod`` (limits fill missing requests);
    only of the resource names ``wanted`` accepts, when given."""
    res = container.resources or {}
    limits = res.get("limits")
    requests = res.get("requests")
    limits = limits if isinstance(limits, dict) else {}
    requests = requests if isinstance(requests, dict) else {}
    base = container.resources_path
    effective: dict[str, Any] = {}
    paths: dict[str, Path] = {}
    for name, value in limits.items():
        effective[name] = value
        paths[name] = (*base, "limits", name)
    for name, value in requests.items():
        effective[name] = value
        paths[name] = (*base, "requests", name)
    parsed: ResourceList = {}
    unevaluated: list[Unevaluated] = []
    nulls: list[str] = []
    for name, value in effective.items():
        if wanted is None or wanted(name):
            _parse_one(name, value, paths[name], container.name, parsed, unevaluated, nulls)
    return ContainerRequests(container, parsed, paths, tuple(unevaluated), tuple(nulls))


def pod_requests(pod: PodSpec, wanted: Callable[[str], bool] | None = None) -> PodRequests:
    """The pod's effective requests (every resource name, GPUs included; only the names
    ``wanted`` accepts, when given: each name adds up on its own)."""
    per_container = [container_requests(c, wanted) for c in pod.containers]
    regular = [c.requests for c in per_container if c.role == "container"]
    inits = [
        (c.requests, c.role == "sidecar") for c in per_container if c.role in ("init", "sidecar")
    ]
    overhead: ResourceList = {}
    unevaluated = [u for c in per_container if c.role != "ephemeral" for u in c.unevaluated]
    raw_overhead = pod.spec.get("overhead") if pod.location == "pod" else None
    if isinstance(raw_overhead, dict):
        if wanted is not None:
            raw_overhead = {k: v for k, v in raw_overhead.items() if wanted(k)}
        unevaluated.extend(_parse(raw_overhead, (*pod.path, "overhead"), None, overhead)[0])
    total = aggregate(regular, inits, overhead)
    return PodRequests(total, per_container, overhead, unevaluated)
