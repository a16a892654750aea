"""Kubernetes resource names and quantities as the API server sees them.

The facts: docs/domain.md#extended-resources and docs/domain.md#quantities.
"""

import math
import re
from collections.abc import Iterator
from decimal import Decimal
from functools import lru_cache
from typing import Any, NamedTuple

from gpulint.k8s.devices import Registry
from gpulint.k8s.dra import ClaimIndex, GpuClaim, gpu_claims, has_unresolved_claims
from gpulint.k8s.quantity.arith import is_integer
from gpulint.k8s.quantity.display import format_quantity
from gpulint.k8s.quantity.parse import QuantityError, parse_quantity
from gpulint.k8s.workloads import Container, PodSpec
from gpulint.model import Path

# k8s.io/apimachinery validation.IsQualifiedName, applied to "requests." + name.
_QUALIFIED_NAME = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)

#: A template placeholder rather than a value: ``$VAR``, ``${VAR}``, ``${VAR:-default}``
#: (envsubst / shell), ``$(VAR)`` (Kubernetes env expansion), ``${{VAR}}`` (OpenShift
#: templates), ``{{ .x }}`` (Helm / Jinja left unrendered; also a value that opens with a Jinja
#: statement, ``{% set g = ... %}{{ g // 2 }}``), ``<x>``, ``PLACEHOLDER_x``,
#: ``__x__``, ``###ZARF_VAR_X###`` (Zarf's variables, constants and package templates,
#: which ``zarf package deploy`` fills in), ``GPU_REQUEST`` (an upper-case name with an
#: underscore, which a script's ``sed`` replaces: no quantity is written so), ``($node_gpus)``
#: (a Kyverno Chainsaw test's binding, which Chainsaw's templating fills in before it applies
#: the file), a name after ``#``, ``%`` or ``@`` and maybe before one (``'#GPUS'``,
#: ``'#MEMRGi'``, ``'%GPUS%'``, ``'@GPUS@'``: a job script's ``sed`` fills them in; no quantity
#: starts with one of them), a name between runs of dashes (``'---CHANGE INT--'``, which a
#: test harness replaces; no quantity starts with two; single dashes only between them, so
#: a long run of dashes is read once).
#: A pattern, compiled on first use (docs/architecture.md): numbers, what most values are,
#: never need it.
_PLACEHOLDER = r"""^\s*(
        \$[A-Za-z_][A-Za-z0-9_]*
      | \$\{\{?\s*[A-Za-z_][A-Za-z0-9_.]*\s*(:?[-=?+][^{}]*)?\}\}?
      | \$\([A-Za-z_][A-Za-z0-9_]*\)
      | \(\$[A-Za-z_][A-Za-z0-9_.]*\)
      | \{\{.*\}\}
      | \{%.*%\}.*
      | <[^<>]+>
      | PLACEHOLDER\w*
      | __\w+__
      | [A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+
      | \#\#\#[A-Za-z_][A-Za-z0-9_]*\#\#\#
      | [#%@]+[A-Za-z_][A-Za-z0-9_]*[#%@]*
      | -{2,}[A-Za-z](?:[A-Za-z0-9\ _]|-(?!-))*-{2,}
    )\s*$"""


#: The standard compute resources a container requests and limits (``k8s.io/api/core/v1``
#: ResourceName constants; hugepages by prefix): overcommittable, a request at most its limit.
STANDARD_COMPUTE = ("cpu", "memory", "ephemeral-storage")


def is_standard_compute(name: Any) -> bool:
    """``cpu``, ``memory``, ``ephemeral-storage`` or ``hugepages-<size>``."""
    return isinstance(name, str) and (name in STANDARD_COMPUTE or name.startswith("hugepages-"))


def is_native_resource(name: str) -> bool:
    """helpers.IsNativeResource: no domain, or a kubernetes.io/ domain."""
    return "/" not in name or "kubernetes.io/" in name


@lru_cache(maxsize=4096)
def is_extended_resource(name: str) -> bool:
    """helpers.IsExtendedResourceName: integer-only, never overcommittable."""
    if is_native_resource(name) or name.startswith("requests."):
        return False
    quota_name = "requests." + name
    prefix, _, local = quota_name.rpartition("/")
    if len(local) > 63 or len(prefix) > 253:
        return False
    return bool(_QUALIFIED_NAME.match(quota_name))


def is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and bool(re.match(_PLACEHOLDER, value, re.VERBOSE))


def quantity_text(value: Any) -> str | None:
    """The text Kubernetes parses for a YAML value, or None for a value with none.

    sigs.k8s.io/yaml turns YAML into JSON and Quantity.UnmarshalJSON reads the JSON token:
    numbers by their decimal text (encoding/json's shortest form), strings by content.
    Booleans, lists and maps cannot be quantities.
    """
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        return format(Decimal(repr(value)), "f")
    if isinstance(value, str):
        return value
    return None


class Amount(NamedTuple):
    """A parsed resource value: exactly one of ``value`` / ``error`` / flags is meaningful."""

    value: Decimal | None
    error: str | None = None
    null: bool = False
    placeholder: bool = False

    @property
    def positive_or_unknown(self) -> bool:
        """Does this amount (probably) ask for at least some of the resource?"""
        if self.value is not None:
            # Only zero asks for nothing; a negative value is invalid (GPU005) and, like an
            # unparseable one, still shows that the author wanted the resource.
            return self.value != 0
        # Null, unparseable or a placeholder: the author meant to ask for the resource.
        return True


def amount(value: Any) -> Amount:
    """The parsed amount of a YAML value (memoised: a corpus repeats a few values a lot)."""
    try:
        return _amount_memo(value)
    except TypeError:  # unhashable: a list or a map where a quantity belongs
        return _amount(value)


def _amount(value: Any) -> Amount:
    if value is None:
        return Amount(None, null=True)
    if is_placeholder(value):
        return Amount(None, placeholder=True)
    text = quantity_text(value)
    if text is None:
        shown = "true/false" if isinstance(value, bool) else type(value).__name__
        return Amount(None, error=f"a {shown} is not a quantity")
    try:
        return Amount(parse_quantity(text))
    except QuantityError as exc:
        return Amount(None, error=str(exc) or "not a quantity")


_amount_memo = lru_cache(maxsize=4096, typed=True)(_amount)


class ResourceEntry(NamedTuple):
    """One ``name: value`` under a container's ``requests`` or ``limits``."""

    container: Container
    section: str  # "limits" or "requests"
    name: str
    value: Any
    path: Path

    @property
    def amount(self) -> Amount:
        return amount(self.value)

    @property
    def devices_asked(self) -> bool:
        """Does the entry ask a node for some of the resource? Not a zero, and not a null:
        a null asks for nothing a node gives (GPU006's finding), and in a Kustomize
        strategic-merge patch it deletes the key. (:func:`gpu_demand` counts a null as
        intent: the author meant a GPU pod.)"""
        return self.value is not None and self.amount.positive_or_unknown


def resource_lists(container: Container) -> Iterator[tuple[str, dict[Any, Any]]]:
    """``("limits", {...})`` then ``("requests", {...})``: the container's resource lists that
    are mappings. The plain mappings, for the hot paths that need no ``ResourceEntry``."""
    res = container.resources
    if res is None:
        return
    for section in ("limits", "requests"):
        mapping = res.get(section)
        if isinstance(mapping, dict):
            yield section, mapping


def resource_entries(container: Container) -> Iterator[ResourceEntry]:
    for section, mapping in resource_lists(container):
        for name, value in mapping.items():
            yield ResourceEntry(
                container, section, name, value, (*container.resources_path, section, name)
            )


def format_amount(value: Decimal) -> str:
    """``Decimal('2.000')`` -> ``'2'``, ``Decimal('0.5')`` -> ``'0.5'``, and short at any
    size: ``Decimal('1E+999990')`` -> ``'1e999990'`` (quantity.format_quantity)."""
    return format_quantity(value)


#: Values written longer than this are shown shortened in messages.
SHOWN_VALUE = 40


def show_value(value: Any) -> str:
    """A resource value as written, for a message: short at any size.

    A value that parses is shown as written while that is short (``1``, ``"500m"``,
    ``1e999990``) and as its compact number otherwise; anything else that is long is cut
    with its length noted, so no value floods the output.
    """
    text = value if isinstance(value, str) else str(value)
    if len(text) <= SHOWN_VALUE:
        return text
    parsed = amount(value).value
    if parsed is not None:
        return format_quantity(parsed)
    return f"{text[:SHOWN_VALUE]}... ({len(text):,} characters)"


def container_entries(pod: PodSpec, *, ephemeral: bool = False) -> Iterator[ResourceEntry]:
    """Resource entries of every container the API server validates resources for.

    Ephemeral containers may not set resources at all, so they are skipped unless asked.
    """
    # Every pod rule asks for the same entries of a pod: they are kept on the pod spec
    # (built once per document by the per-file view), so they go when the document does.
    # (Not on the container: an entry points back to its container, and the cycle would
    # keep each document alive until the garbage collector ran.)
    memo = pod.memo
    key = ("container_entries", ephemeral)
    entries = memo.get(key)
    if entries is None:
        every = memo.get(("container_entries", True))
        if every is None:
            every = memo[("container_entries", True)] = tuple(
                e for container in pod.containers for e in resource_entries(container)
            )
        entries = memo[key] = (
            every
            if ephemeral
            else tuple(e for e in every if e.container.section != "ephemeralContainers")
        )
    return iter(entries)


def extended_requests(pod: PodSpec) -> Iterator[tuple[ResourceEntry, Amount | None]]:
    """Each extended-resource request of the pod's containers, with its limit's amount
    (``None`` when the container writes no limit for it): what GPU001-GPU003 weigh.

    A pod whose amounts an operator writes (``operator_amounts``, an llmaz flavor: into
    requests and limits both) has none.
    """
    if pod.operator_amounts:
        return
    for entry in container_entries(pod):
        if entry.section != "requests" or not is_extended_resource(entry.name):
            continue
        limits = (entry.container.resources or {}).get("limits")
        if isinstance(limits, dict) and entry.name in limits:
            yield entry, amount(limits[entry.name])
        else:
            yield entry, None


def accelerator_entries(pod: PodSpec, registry: Registry) -> list[ResourceEntry]:
    """Entries that ask for an accelerator: known names, and names that look like one."""
    # Half the pod rules ask this of every pod: kept on the pod spec, as container_entries.
    key = ("accelerator_entries", registry)
    entries = pod.memo.get(key)
    if entries is None:
        entries = pod.memo[key] = tuple(
            e for e in container_entries(pod) if registry.may_be_accelerator(e.name)
        )
    return list(entries)


class GpuDemand(NamedTuple):
    """Why a pod spec is a GPU pod, a CPU pod, or cannot be told: :func:`gpu_demand`."""

    #: Container entries (``containers``, ``initContainers``, sidecars) that ask for one.
    entries: tuple[ResourceEntry, ...]
    #: Accelerator names asked for in the pod-level ``spec.resources``.
    pod_level: tuple[str, ...]
    #: ``resourceClaims`` entries whose claim, in the same file, asks for a GPU device class.
    claims: tuple[GpuClaim, ...]
    #: A ``resourceClaims`` entry whose claim is not in the file: its device class is unknown.
    unresolved: bool
    #: Accelerators the pod's operator writes into it from its own fields
    #: (``PodSpec.operator_gpus``: Dynamo's ``resources.limits.gpu``), with their paths.
    operator: tuple[tuple[str, Path], ...] = ()
    #: The resources of its container come from another object, which may hold a GPU: a
    #: KServe predictor's ``model`` takes what it leaves unset from its serving runtime.
    supplied: bool = False
    #: A container asks for a name of an accelerator vendor's domain that the registry does
    #: not list and that does not look like an accelerator's (``nvidia.com/a100``, a
    #: cluster's own name for its A100s), or for a name a template fills in
    #: (``${MIG_RESOURCE}``): it may be a GPU, so the pod is not surely a CPU pod.
    unlisted: bool = False
    #: The operator's accelerators (``operator``) are in every container of the pod
    #: (``PodSpec.operator_every_container``: Kaiwo), not only where their amount is written.
    operator_everywhere: bool = False
    #: The pod is of a kind gpulint has no row for (found by shape), and its object writes a
    #: GPU count in a field of its own (``gpus: 2``, ``gpusPerReplica: 1``, ``numGpus: 4``):
    #: its operator may well turn it into a request the pod does not show.
    hinted: bool = False

    @property
    def gpu(self) -> bool:
        """The pod means to get an accelerator."""
        return bool(self.entries or self.pod_level or self.claims or self.operator)

    @property
    def cpu(self) -> bool:
        """The pod surely gets no accelerator (not a GPU pod, no unknown DRA claim, no
        resources from a serving runtime, no GPU count of an unknown operator's)."""
        return (
            not self.gpu
            and not self.unresolved
            and not self.supplied
            and not self.unlisted
            and not self.hinted
        )


def gpu_demand(pod: PodSpec, registry: Registry, claims: ClaimIndex | None = None) -> GpuDemand:
    """Is this a GPU pod? The one answer GPU020, GPU021, declarative ``when: gpu`` and
    ``gpulint inspect`` share (docs/domain.md#gpu-pods).

    A pod spec is a GPU pod when it asks for an accelerator resource (a device registry name,
    or a name that looks like one, such as a misspelling) with an amount other than an
    explicit zero:

    - in a container, an init container or a sidecar (an init container with
      ``restartPolicy: Always``), under ``limits`` or ``requests``; ephemeral containers may
      not set resources and never count;
    - in the pod-level ``spec.resources`` (rejected there, GPU030, but clearly wanted);
    - or through a DRA ``resourceClaims`` entry whose ResourceClaim or ResourceClaimTemplate
      in the same file asks for a GPU device class (:func:`gpulint.k8s.dra.gpu_claims`);
    - or through a field of its operator's own that the operator turns into a request
      (the workload table's ``operator_gpus``: Dynamo's ``resources.limits.gpu``).

    An explicit ``0`` asks for nothing: with only zeros the pod is a CPU pod. A null value,
    a template placeholder (``$GPUS``, ``{{ .Values.gpus }}``) or an unparseable value still
    shows the intent, and counts. A claim defined in another file, or one that names a
    DeviceClass neither the registry nor any file of the run defines, makes the answer
    unknown: the pod is neither a GPU pod (``gpu``) nor surely a CPU pod (``cpu``).

    ``claims`` are the DRA claims of the pod's file: a rule passes ``ctx.claims`` (the engine
    sets it per file); without them every claim is one defined elsewhere.
    """
    # GPU020, GPU021, GPU023 and the cluster rules each ask this of every pod: kept on the
    # pod spec, as container_entries (a rule that passes no claims gets its own answer).
    key = ("gpu_demand", registry, claims)
    demand: GpuDemand | None = pod.memo.get(key)
    if demand is None:
        demand = pod.memo[key] = _gpu_demand(pod, registry, claims)
    return demand


def _gpu_demand(pod: PodSpec, registry: Registry, claims: ClaimIndex | None) -> GpuDemand:
    entries = tuple(e for e in accelerator_entries(pod, registry) if e.amount.positive_or_unknown)
    pod_level: list[str] = []
    resources = pod.spec.get("resources") if pod.location == "pod" else None
    if isinstance(resources, dict):
        for section in ("limits", "requests"):
            mapping = resources.get(section)
            if not isinstance(mapping, dict):
                continue
            for name, value in mapping.items():
                if not isinstance(name, str) or name in pod_level:
                    continue
                is_gpu = registry.may_be_accelerator(name)
                if is_gpu and amount(value).positive_or_unknown:
                    pod_level.append(name)
    return GpuDemand(
        entries,
        tuple(pod_level),
        tuple(gpu_claims(pod, registry, claims)),
        has_unresolved_claims(pod, claims, registry),
        pod.operator_gpus,
        not entries and _runtime_supplied(pod),
        not entries and _unlisted_vendor_name(pod, registry),
        bool(pod.operator_gpus) and pod.operator_every_container,
        not entries and not pod.operator_gpus and pod.found_by == "shape" and _counts_gpus(pod),
    )


#: A key an operator's own type writes a GPU count under (Kaiwo's ``gpus`` and
#: ``gpusPerReplica``, ``numGpus``, ``gpu_count``, ``gpusPerWorker``, ``nGPUs``), matched
#: whole and in any case.
_GPU_COUNT_KEY = (
    r"(?:num_?|n_?)?gpus?"
    r"(?:_?(?:count|num|number|per_?(?:replica|worker|node|pod|instance|host)))?"
)
#: Nodes of an object :func:`_counts_gpus` reads at most (an operator's resource holds a few
#: hundred; a hostile one is read this far and no further).
_COUNT_BUDGET = 5000


def _counts_gpus(pod: PodSpec) -> bool:
    """Does the pod's object write a positive GPU count under a key of its own
    (:data:`_GPU_COUNT_KEY`)? Read once an object, without recursion, within a budget."""
    memo = pod.obj.memo
    if "counts_gpus" in memo:
        return bool(memo["counts_gpus"])
    key_re = re.compile(_GPU_COUNT_KEY, re.IGNORECASE)
    found = False
    queue: list[Any] = [pod.obj.data]
    read = 0
    while queue and read < _COUNT_BUDGET and not found:
        node = queue.pop()
        read += 1
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, str) and key_re.fullmatch(key) and _positive_count(value):
                    found = True
                    break
                if isinstance(value, (dict, list)):
                    queue.append(value)
        elif isinstance(node, list):
            queue.extend(v for v in node if isinstance(v, (dict, list)))
    memo["counts_gpus"] = found
    return found


def _positive_count(value: Any) -> bool:
    """A whole number above 0, written as a number or as digits."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value > 0
    return isinstance(value, str) and value.strip().isdigit() and int(value.strip()) > 0


def _unlisted_vendor_name(pod: PodSpec, registry: Registry) -> bool:
    """A container asks for an unlisted name of a domain the registry has accelerators in, or
    for a name a template fills in (``${MIG_RESOURCE}: 1``, ``{{ .Values.gpuResource }}``):
    it may be a GPU."""
    return any(_unlisted(entry, registry) for entry in container_entries(pod))


def _unlisted(entry: ResourceEntry, registry: Registry) -> bool:
    """``entry`` asks for a name that may be a GPU gpulint cannot tell: a placeholder, or an
    unlisted name of a vendor's domain (NRP's ``nvidia.com/a100``)."""
    if not entry.amount.positive_or_unknown:
        return False
    name = entry.name
    if is_placeholder(name) or "${" in name or "{{" in name:
        return True
    domain, slash, _ = name.rpartition("/")
    return bool(
        slash
        and registry.has_domain(domain)
        and not registry.is_accelerator(name)
        and not registry.is_dra_extended(name)
    )


#: API groups of KServe's InferenceService (KFServing's, before the rename).
_KSERVE_GROUPS = ("serving.kserve.io", "serving.kubeflow.org")
#: KServe's serving runtimes, whose container an InferenceService's predictor completes
#: (kserve/kserve pkg/apis/serving/v1alpha1/servingruntime_types.go).
_RUNTIME_KINDS = frozenset({"ServingRuntime", "ClusterServingRuntime"})


def _runtime_supplied(pod: PodSpec) -> bool:
    """Is this a KServe predictor whose ``model`` takes its container from a serving runtime
    (named by ``runtime``, or chosen by ``modelFormat``)? KServe merges the runtime's
    container into the model's, which overrides only what it sets (kserve/kserve
    pkg/controller/v1beta1/inferenceservice/utils/utils.go ``MergeRuntimeContainers``): the
    resources the model leaves unset, GPUs among them, are the runtime's, which the pod does
    not show. The same merge makes a ``ServingRuntime`` (or ``ClusterServingRuntime``) that
    writes no GPU a template whose pods may hold the GPUs of the InferenceService that uses
    it: neither is surely a CPU pod."""
    obj = pod.obj
    if pod.location == "pod" and obj.group in _KSERVE_GROUPS and obj.kind in _RUNTIME_KINDS:
        return True
    return completed_by_runtime(pod)


def completed_by_runtime(pod: PodSpec) -> bool:
    """Is this a KServe predictor whose ``model`` takes its container from a serving runtime
    (``runtime`` or ``modelFormat``), whatever it asks for itself? KServe builds its pod from
    the runtime's pod spec (its tolerations, node selector and affinity among them) merged
    with the predictor's: what the predictor does not write may be the runtime's."""
    obj = pod.obj
    if pod.location != "pod" or obj.group not in _KSERVE_GROUPS:
        return False
    if obj.kind != "InferenceService" or pod.path[-1:] != ("predictor",):
        return False
    model = pod.spec.get("model")
    return isinstance(model, dict) and ("runtime" in model or "modelFormat" in model)


def wants_accelerator(pod: PodSpec, registry: Registry, claims: ClaimIndex | None = None) -> bool:
    """Is this a GPU pod (:func:`gpu_demand`)? For rules that need only the yes or no."""
    return gpu_demand(pod, registry, claims).gpu


def container_gpu(container: Container, demand: GpuDemand, registry: Registry) -> bool | None:
    """Is this container of a pod with ``demand`` a GPU container? None: it cannot be told.

    A container gets an accelerator from its own ``limits`` / ``requests`` (as in
    :func:`gpu_demand`) or from a DRA claim of its pod that it names in
    ``resources.claims``; only the containers that name a claim get its devices. A container
    that names a claim defined in another file, or asks for a name that may be a GPU gpulint
    cannot tell (:attr:`GpuDemand.unlisted`), cannot be told. Ephemeral containers are never
    GPU containers.
    """
    if container.section == "ephemeralContainers":
        return False
    if container.section in ("resources", "containers") and (
        demand.operator_everywhere
        or any(at[: len(container.path)] == container.path for _, at in demand.operator)
    ):
        # a chart's values' gpu: block, under the values that hold it; a production stack
        # model's requestGPU, under the model that is its container
        return True
    if any(
        registry.may_be_accelerator(e.name) and e.amount.positive_or_unknown
        for e in resource_entries(container)
    ):
        return True
    if demand.unlisted and any(_unlisted(e, registry) for e in resource_entries(container)):
        return None  # a name that may be a GPU (NRP's nvidia.com/a100): not told
    # An unknown operator's GPU count (``hinted``) may give the container a GPU: not told.
    claims = (container.resources or {}).get("claims")
    if not isinstance(claims, list) or not claims:
        return None if demand.hinted else False
    gpu = {c.name for c in demand.claims}
    named = {c.get("name") for c in claims if isinstance(c, dict)}
    if named & gpu:
        return True
    return None if demand.unresolved or demand.hinted else False


#: The largest device count :func:`whole_gpu_count` reads (the API server's int64).
MAX_COUNT = 2**63 - 1


#: The registry family of HAMi's resources (its vGPU counts and the amounts per vGPU).
HAMI = "hami"


def whole_gpu_count(container: Container, registry: Registry) -> int | None:
    """The whole accelerators a container requests, when that is a plain count.

    The container must ask for one accelerator name only, one whose unit is a whole device
    (``whole_devices`` in the registry: ``nvidia.com/gpu``, ``amd.com/gpu``), as a positive
    integer (its limit, else its request; HAMi's amounts per vGPU beside it, ``gpumem``,
    ``gpucores``, ``priority``, do not change the count of vGPUs, each on a GPU of its own),
    or the whole devices a chart writes into it (``Container.made``: a production stack
    model's ``requestGPU``). A share of a GPU, several kinds, a placeholder or no accelerator
    at all give None: the number of devices is not known.
    """
    # GPU041 and GPU042 ask this of every container: made once per container and registry.
    key = ("whole_gpu_count", registry)
    memo = container.memo
    if key not in memo:
        memo[key] = _whole_gpu_count(container, registry)
    count: int | None = memo[key]
    return count


def _whole_gpu_count(container: Container, registry: Registry) -> int | None:
    names: set[str] = set()
    total: int | None = None
    # The mappings themselves, not resource_entries: GPU041 and GPU042 ask this of every
    # container, and most have no accelerator at all.
    for section, mapping in resource_lists(container):
        for name, written in mapping.items():
            if not registry.is_accelerator(name):
                continue
            resource = registry.get(name)
            if resource is not None and resource.family == HAMI and not resource.whole_devices:
                continue  # an amount per vGPU (gpumem, gpucores, priority): the count is beside
            names.add(name)
            if resource is None or not resource.whole_devices or len(names) > 1:
                return None
            value = amount(written).value
            # is_integer, not int(value): a hostile 1e2147483647 must not be expanded.
            if value is None or value <= 0 or not is_integer(value) or value > MAX_COUNT:
                return None
            if section == "limits" or total is None:
                total = int(value)
    made = container.made
    if not names and made is not None and made.gpus is not None:
        # What a chart requests for the container (a production stack model's requestGPU).
        count, name, _ = made.gpus
        resource = registry.get(name)
        return count if resource is not None and resource.whole_devices else None
    return total


#: Pod annotations through which KAI Scheduler (and Run:ai) give a pod a share of a GPU
#: (NVIDIA/KAI-Scheduler docs/gpu-sharing): the pod writes no GPU resource.
SHARING_ANNOTATIONS = ("gpu-fraction", "gpu-memory")


def shares_by_annotation(pod: PodSpec) -> bool:
    """The pod asks KAI Scheduler (or Run:ai) for a share of a GPU by a pod annotation
    (:data:`SHARING_ANNOTATIONS`): it holds a GPU its resources do not show."""
    meta, _ = pod.pod_metadata()
    annotations = meta.get("annotations") if meta is not None else None
    return isinstance(annotations, dict) and any(a in annotations for a in SHARING_ANNOTATIONS)


#: The Spark operator's kinds, whose driver and executor pods Spark creates.
_SPARK_KINDS = frozenset({"SparkApplication", "ScheduledSparkApplication"})


def spark_asks_for_gpus(pod: PodSpec) -> bool:
    """GPU021, GPU043: the pod is a Spark driver or executor of a SparkApplication that asks
    for GPUs for it (``spec.<role>.gpu.quantity``, or ``spark.<role>.resource.gpu.amount`` in
    ``sparkConf``): Spark adds the GPU limit to the pod it creates."""
    obj = pod.obj
    if obj.kind not in _SPARK_KINDS or not obj.group.startswith("sparkoperator.k8s.io"):
        return False
    role = next((r for r in ("executor", "driver") if r in pod.path), None)
    if role is None:
        return False
    spec = obj.data.get("spec") if isinstance(obj.data, dict) else None
    if obj.kind == "ScheduledSparkApplication" and isinstance(spec, dict):
        spec = spec.get("template")
    if not isinstance(spec, dict):
        return False
    side = spec.get(role)
    gpu = side.get("gpu") if isinstance(side, dict) else None
    if isinstance(gpu, dict) and _positive_number(gpu.get("quantity")):
        return True
    conf = spec.get("sparkConf")
    return isinstance(conf, dict) and _positive_number(
        conf.get(f"spark.{role}.resource.gpu.amount")
    )


def _positive_number(value: Any) -> bool:
    try:
        return float(str(value)) > 0
    except ValueError:
        return False
