"""GPUs through Dynamic Resource Allocation: which pods get accelerators from DRA claims.

A pod asks for DRA devices with ``spec.resourceClaims``: each entry names a ResourceClaim
(``resourceClaimName``) or a ResourceClaimTemplate (``resourceClaimTemplateName``; before
Kubernetes 1.31 both sat under ``source``). The claim's device requests name a DeviceClass
(``deviceClassName`` in ``resource.k8s.io/v1beta1``, ``exactly.deviceClassName`` or
``firstAvailable[].deviceClassName`` in ``v1``). The pod is a GPU pod when one of those
classes hands out accelerators: a class listed in the registry's ``dra.device_classes``
(``gpu.nvidia.com``, ``mig.nvidia.com``, ...), or a DeviceClass defined in the same file
whose CEL selectors name a driver listed in ``dra.drivers``.

DeviceClasses are cluster-scoped and usually installed apart from the workloads (a driver's
chart), and claims and templates often sit in a file of their own, so ``gpulint check`` reads
the DRA objects of every file of the file's project (:func:`project_dra`, a pre-pass of
:mod:`gpulint.commands.facts`, whether or not the run was given those files, and never
another project's) and hands them to each file's index (``ClaimIndex.run``). A claim whose
class is neither in the registry nor defined in the project (or defined with selectors that
name no driver) asks for devices of an unknown kind: the pod is neither a GPU pod nor surely
a CPU pod (:func:`has_unresolved_claims`), never called a CPU pod.

Claims and classes live in other documents than the pod, so the lookup needs the documents
of the same file (or stdin stream) first. The per-file view (:mod:`gpulint.k8s.manifest`)
builds one :class:`ClaimIndex` per file (``Manifest.claims``, shared by its
``DocumentView``s), and whoever asks about a pod passes it along: the engine as
``RuleContext.claims``, ``gpulint inspect`` from the view. Objects and pod specs carry no
per-file state. The index reads the file's documents only the first time a pod with
``resourceClaims`` asks. A claim is matched by kind and name, and by namespace when both the
claim and the pod write one (an object without a namespace is applied into the namespace of
the command, so it matches any): in the file first, then in the project's other files. When
several files of the project define it differently (two overlays' templates of one name),
which one the pod gets is unknown. Claims in neither are unknown, and the pod is not
counted as a GPU pod for them.

Some objects make a ResourceClaimTemplate of their own (:data:`TEMPLATE_CREATORS`): a
ComputeDomain of NVIDIA's DRA driver names the template its controller creates for the
domain's IMEX channel. The project defines that template as if it were written out.
"""

import re
from collections.abc import Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from gpulint.k8s.devices import Registry
from gpulint.k8s.drafields import ClaimRequest, claim_requests, device_classes
from gpulint.k8s.workloads import K8sObject, PodSpec, objects
from gpulint.loader.document import Document, Parse
from gpulint.loader.stream import DocumentStream
from gpulint.model import Path, Related, Span

CLAIM_KINDS = ("ResourceClaim", "ResourceClaimTemplate")
DRA_GROUP = "resource.k8s.io"
#: Objects whose operator creates a ResourceClaimTemplate, in the object's namespace:
#: ``(group, kind)`` -> the path of the template's name in the object, and the DeviceClass
#: its one request asks for.
#: - ComputeDomain (``resource.nvidia.com``): NVIDIA/k8s-dra-driver-gpu
#:   ``api/nvidia.com/resource/v1beta1/computedomain.go`` (``ComputeDomainSpec.Channel``,
#:   ``ComputeDomainResourceClaimTemplate.Name``: "the ResourceClaimTemplate to generate");
#:   ``cmd/compute-domain-controller/resourceclaimtemplate.go``
#:   (``WorkloadResourceClaimTemplateManager.Create``: that name, in the ComputeDomain's
#:   namespace, one request of ``compute-domain-default-channel.nvidia.com``).
TEMPLATE_CREATORS: Mapping[tuple[str, str], tuple[tuple[str, ...], str]] = MappingProxyType(
    {
        ("resource.nvidia.com", "ComputeDomain"): (
            ("spec", "channel", "resourceClaimTemplate", "name"),
            "compute-domain-default-channel.nvidia.com",
        ),
    }
)
_CREATOR_GROUPS = tuple(sorted({group for group, _ in TEMPLATE_CREATORS}))
#: Double-quoted YAML escapes that can spell any character, and an escaped line break
#: (which joins two lines with nothing between them).
_SPELLING_ESCAPES = ("\\x", "\\u", "\\U", "\\\n", "\\\r")


def may_hold_dra(text: str) -> bool:
    """Whether ``text`` can hold a DRA object (``apiVersion: resource.k8s.io/...``): the
    group written out, or an escape that could spell it. A text that cannot needs no
    claim index, and the engine lints it in one pass."""
    if DRA_GROUP in text or any(group in text for group in _CREATOR_GROUPS):
        return True
    # Every escape starts with a backslash, which most manifests never write: one scan.
    return "\\" in text and any(escape in text for escape in _SPELLING_ESCAPES)


# device.driver == 'gpu.nvidia.com' (either quote style, either operand order)
# (compiled on first use: only DeviceClass objects need it)
_DRIVER = r"""device\.driver\s*==\s*['"]([^'"]+)['"]|['"]([^'"]+)['"]\s*==\s*device\.driver"""


class ClaimObject(NamedTuple):
    """A ResourceClaim or ResourceClaimTemplate of the file."""

    kind: str
    name: str
    namespace: str | None
    #: DeviceClass names its device requests ask for, in order.
    device_classes: tuple[str, ...]
    document: int
    path: Path
    #: The ``resource.k8s.io`` version it is written in.
    version: str = ""
    #: Its device requests: name, classes (one, or a ``firstAvailable`` list) and count.
    requests: tuple[ClaimRequest, ...] = ()
    #: The file it is in (as the run names it) and the line of its ``kind``: where a finding
    #: that counts its devices names it as a related place.
    label: str = ""
    line: int = 0

    def place(self) -> str:
        """``claims.yaml:3``: where it is, for a message."""
        return f"{self.label}:{self.line}" if self.label else f"line {self.line}"

    def related(self, why: str) -> Related:
        """The claim as a related place of a finding (``why``: what the finding read there)."""
        return Related("evidence", self.label, Span(self.line, 1, self.line, 1), why)


class GpuClaim(NamedTuple):
    """A pod's ``resourceClaims`` entry that hands out accelerators."""

    #: The entry's ``name`` (what containers reference in ``resources.claims``).
    name: str
    #: Path of the entry in the pod's document.
    path: Path
    claim: ClaimObject
    device_class: str
    hardware: str

    def describe(self) -> str:
        """``DRA claim 'gpu'``: the entry by name, for a message (its claim or template and
        device class are the finding's related places)."""
        return f"DRA claim {self.name!r}"

    def shown(self, line: int) -> dict[str, Any]:
        """As ``gpulint inspect`` shows it (``line``: the line of the pod's entry)."""
        return {
            "name": self.name,
            "kind": self.claim.kind,
            "claim": self.claim.name,
            "device_class": self.device_class,
            "hardware": self.hardware,
            "line": line,
            "defined_at": self.claim.place(),
            "requests": [
                {"name": r.name, "device_classes": list(r.classes), "devices": r.devices}
                for r in self.claim.requests
            ],
        }


class DraFacts(NamedTuple):
    """The DRA objects of every file of a project: each DeviceClass's name -> the drivers
    its CEL selectors name, their ``spec.extendedResourceName``s, and the claims and
    templates by kind and name (each definition, in the order of the project's files)."""

    drivers: Mapping[str, tuple[str, ...]]
    extended: frozenset[str]
    claims: Mapping[tuple[str, str], tuple[ClaimObject, ...]] = MappingProxyType({})

    def __bool__(self) -> bool:
        return bool(self.drivers or self.extended or self.claims)


def project_dra(texts: Iterable[tuple[str, str]], parse: Parse | None = None) -> DraFacts:
    """The DeviceClasses, ResourceClaims and ResourceClaimTemplates defined in ``texts``
    (``(label, text)`` pairs; only texts that can hold a DRA object are parsed:
    :func:`may_hold_dra`; ``parse``: their documents, when the caller parsed them already)."""
    drivers: dict[str, tuple[str, ...]] = {}
    extended: set[str] = set()
    claims: dict[tuple[str, str], list[ClaimObject]] = {}
    for label, text in texts:
        if not may_hold_dra(text):
            continue
        docs = DocumentStream(text) if parse is None else parse(label, text)
        index = ClaimIndex(docs, label)
        for key, found in index._index().items():
            claims.setdefault(key, []).extend(found)
        drivers.update(index._class_drivers)
        extended |= index._extended
    return DraFacts(
        drivers, frozenset(extended), MappingProxyType({k: tuple(v) for k, v in claims.items()})
    )


class ClaimIndex:
    """The DRA objects of one file or stream, read lazily on the first lookup."""

    def __init__(
        self, documents: Iterable[Document], label: str = "", run: DraFacts | None = None
    ) -> None:
        self._documents = documents
        #: The file's name as the run shows it (the claims' related places).
        self.label = label
        self._resolved: dict[tuple[str, str, str | None], tuple[bool, ClaimObject | None]] = {}
        self.run = run
        self._claims: dict[tuple[str, str], list[ClaimObject]] | None = None
        self._class_drivers: dict[str, tuple[str, ...]] = {}
        #: ``spec.extendedResourceName`` of the file's DeviceClasses (KEP-5004): names a
        #: container may request and a claim for that class serves.
        self._extended: set[str] = set()

    def fill(self, found: Iterable[K8sObject]) -> None:
        """Index objects already found (by a document's view: no second walk), now.

        Read at once and not kept: the index lives as long as its file, and holding the
        objects here would keep every document of the file alive with it.
        """
        if self is NO_CLAIMS:
            raise ValueError("the shared empty claim index cannot be filled")
        claims: dict[tuple[str, str], list[ClaimObject]] = {}
        for obj in found:
            if obj.group == DRA_GROUP or obj.group in _CREATOR_GROUPS:
                self._add(claims, obj)
        self._claims = claims

    def _build(self) -> dict[tuple[str, str], list[ClaimObject]]:
        claims: dict[tuple[str, str], list[ClaimObject]] = {}
        for doc in self._documents:
            for obj in objects(doc):
                if obj.group == DRA_GROUP or obj.group in _CREATOR_GROUPS:
                    self._add(claims, obj)
        return claims

    def _add(self, claims: dict[tuple[str, str], list[ClaimObject]], obj: K8sObject) -> None:
        name = obj.ref.name
        if obj.group != DRA_GROUP:
            self._created(claims, obj)
        elif obj.kind in CLAIM_KINDS and name:
            spec = obj.data.get("spec")
            if obj.kind == "ResourceClaimTemplate":
                spec = spec.get("spec") if isinstance(spec, dict) else None
            entry = ClaimObject(
                obj.kind,
                name,
                obj.ref.namespace,
                tuple(device_classes(spec)),
                obj.doc.index,
                obj.path,
                obj.version,
                tuple(claim_requests(spec)),
                self.label,
                obj.doc.key_span((*obj.path, "kind")).line,
            )
            claims.setdefault((obj.kind, name), []).append(entry)
        elif obj.kind == "DeviceClass" and name:
            spec = obj.data.get("spec")
            self._class_drivers[name] = tuple(selector_drivers(spec))
            extended = spec.get("extendedResourceName") if isinstance(spec, dict) else None
            if isinstance(extended, str) and extended:
                self._extended.add(extended)

    def _created(self, claims: dict[tuple[str, str], list[ClaimObject]], obj: K8sObject) -> None:
        """The ResourceClaimTemplate an object of :data:`TEMPLATE_CREATORS` makes."""
        row = TEMPLATE_CREATORS.get((obj.group, obj.kind))
        if row is None:
            return
        path, device_class = row
        value: Any = obj.data
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if not isinstance(value, str) or not value:
            return
        entry = ClaimObject(
            "ResourceClaimTemplate",
            value,
            obj.ref.namespace,
            (device_class,),
            obj.doc.index,
            obj.path,
            "",
            (ClaimRequest("channel", (device_class,), 1),),
            self.label,
            obj.doc.key_span((*obj.path, "kind")).line,
        )
        claims.setdefault(("ResourceClaimTemplate", value), []).append(entry)

    def _index(self) -> dict[tuple[str, str], list[ClaimObject]]:
        if self._claims is None:
            self._claims = self._build()
        return self._claims

    def claim(self, kind: str, name: str, namespace: str | None) -> ClaimObject | None:
        """The claim (or template) a pod in ``namespace`` gets: the file's, else the
        project's when its files agree on what it asks for; None when neither defines it or
        the project's definitions differ (:meth:`defines` tells these apart)."""
        for entry in self._index().get((kind, name), ()):
            if _matches(entry, namespace):
                return entry
        return self._project(kind, name, namespace)[1]

    def defines(self, kind: str, name: str, namespace: str | None) -> bool:
        """The file or its project defines a claim (or template) a pod in ``namespace``
        may get under that name."""
        own = self._index().get((kind, name), ())
        return any(_matches(e, namespace) for e in own) or self._project(kind, name, namespace)[0]

    def _project(
        self, kind: str, name: str, namespace: str | None
    ) -> tuple[bool, ClaimObject | None]:
        """Whether the project defines it, and the definition when they all agree; once
        per name (a project may define one many times, and many pods may name it)."""
        key = (kind, name, namespace)
        known = self._resolved.get(key)
        if known is None:
            run = self.run.claims.get((kind, name), ()) if self.run is not None else ()
            found = [e for e in run if _matches(e, namespace)]
            first = found[0] if found else None
            same = first is not None and all(
                (e.device_classes, e.requests) == (first.device_classes, first.requests)
                for e in found[1:]
            )
            known = self._resolved[key] = (bool(found), first if same else None)
        return known

    @property
    def run(self) -> DraFacts | None:
        """The DRA objects of the file's project (set by the engine; None: the file's)."""
        return self._run

    @run.setter
    def run(self, value: DraFacts | None) -> None:
        if value is not self.__dict__.get("_run"):
            self._resolved = {}
        self._run = value

    def extended_resource(self, name: str) -> bool:
        """A DeviceClass of this file names ``name`` as its ``spec.extendedResourceName``."""
        self._index()
        return name in self._extended or (self.run is not None and name in self.run.extended)

    def versions(self) -> set[str]:
        """The ``resource.k8s.io`` versions the file's claims and templates are written in."""
        return {c.version for found in self._index().values() for c in found if c.version}

    def claim_names(self, kind: str) -> list[str]:
        """The names of the claims (or templates) of ``kind`` the file and its project
        define."""
        names = {name for k, name in self._index() if k == kind}
        if self.run is not None:
            names.update(name for k, name in self.run.claims if k == kind)
        return sorted(names)

    def class_names(self) -> set[str]:
        """The DeviceClasses this file (and, when the engine set them, the run) defines."""
        self._index()
        names = set(self._class_drivers)
        if self.run is not None:
            names.update(self.run.drivers)
        return names

    def class_drivers(self, name: str) -> tuple[str, ...]:
        """DRA drivers a DeviceClass defined in this file (else in the run) selects (its CEL
        selectors)."""
        self._index()
        found = self._class_drivers.get(name)
        if found is None and self.run is not None:
            found = self.run.drivers.get(name)
        return found or ()


def _matches(entry: ClaimObject, namespace: str | None) -> bool:
    return namespace is None or entry.namespace is None or entry.namespace == namespace


#: The index of every text that cannot hold a DRA object (``may_hold_dra``): one shared,
#: always empty index, so the engine makes its rules' contexts once per run and not once
#: per file. Nothing may ``fill`` it.
NO_CLAIMS = ClaimIndex(())


def selector_drivers(spec: Any) -> Iterator[str]:
    """Driver names a DeviceClass's CEL selectors compare ``device.driver`` with."""
    selectors = spec.get("selectors") if isinstance(spec, Mapping) else None
    if not isinstance(selectors, list):
        return
    for selector in selectors:
        cel = selector.get("cel") if isinstance(selector, Mapping) else None
        expression = cel.get("expression") if isinstance(cel, Mapping) else None
        if isinstance(expression, str):
            for match in re.finditer(_DRIVER, expression):
                yield match.group(1) or match.group(2)


def claim_reference(entry: Mapping[str, Any]) -> tuple[str, str] | None:
    """(kind, name) a PodResourceClaim points at (the 1.31+ fields or the older ``source``)."""
    for holder in (entry, entry.get("source")):
        if not isinstance(holder, Mapping):
            continue
        name = holder.get("resourceClaimName")
        if isinstance(name, str) and name:
            return "ResourceClaim", name
        name = holder.get("resourceClaimTemplateName")
        if isinstance(name, str) and name:
            return "ResourceClaimTemplate", name
    return None


def gpu_class_hardware(name: str, registry: Registry, index: ClaimIndex | None) -> str | None:
    """The accelerator a DeviceClass hands out, or None when it is not an accelerator class."""
    known = registry.device_classes.get(name)
    if known is not None:
        return known.hardware
    if index is not None:
        for driver in index.class_drivers(name):
            entry = registry.dra_drivers.get(driver)
            if entry is not None:
                return entry.hardware
    return None


def gpu_claims(pod: PodSpec, registry: Registry, index: ClaimIndex | None) -> list[GpuClaim]:
    """The pod's ``resourceClaims`` entries that resolve to accelerator device classes, looked
    up in ``index``, the claims of the pod's file (None: none known)."""
    if index is None or not pod.spec.get("resourceClaims"):
        return []
    out: list[GpuClaim] = []
    for entry in pod_claims(pod, index):
        if entry.claim is None:
            continue
        for device_class in entry.claim.device_classes:
            hardware = gpu_class_hardware(device_class, registry, index)
            if hardware is not None:
                out.append(GpuClaim(entry.name, entry.path, entry.claim, device_class, hardware))
                break
    return out


#: Words in a DRA driver's name that say it may serve accelerators.
_ACCELERATOR_WORD = re.compile(r"gpu|tpu|npu|xpu|accel|neuron|gaudi|habana|ascend", re.I)


def class_devices(name: str, registry: Registry, index: ClaimIndex | None) -> dict[str, Any]:
    """What a DeviceClass hands out, as ``gpulint inspect`` shows it: ``devices`` is
    ``accelerator`` (the registry's accelerator classes, or a class of the project whose
    selectors name an accelerator driver), ``other`` (the registry's other classes, such as
    NVIDIA's IMEX channels, or a project class whose selectors name another driver: a NIC,
    a CPU set) or ``unknown`` (nothing the run holds says, or the class's driver is none
    gpulint knows and its name says GPU, TPU, NPU or accelerator)."""
    drivers = list(index.class_drivers(name)) if index is not None else []
    hardware = gpu_class_hardware(name, registry, index)
    if hardware is not None:
        devices = "accelerator"
        known = "registry" if name in registry.device_classes else "project"
    elif name in registry.other_device_classes:
        devices, known = "other", "registry"
    elif drivers and not any(_ACCELERATOR_WORD.search(d) for d in drivers):
        devices, known = "other", "project"
    else:
        # A driver gpulint does not know whose name says it serves accelerators
        # (`gpu.resource.example.com`): what it hands out is not known, not "no accelerator".
        devices, known = "unknown", None
    return {
        "device_class": name,
        "devices": devices,
        "hardware": hardware,
        "drivers": drivers,
        "known_from": known,
    }


class PodClaim(NamedTuple):
    """One entry of a pod's ``spec.resourceClaims``, whatever devices it asks for."""

    #: The entry's ``name`` ("?" when it writes none).
    name: str
    #: Path of the entry in the pod's document.
    path: Path
    #: What it references: ``(kind, name)``, None when it names neither field.
    reference: tuple[str, str] | None
    #: The claim or template the project defines for it (None: not in the project, or
    #: defined differently in two of its files).
    claim: ClaimObject | None
    #: Whether the project defines it at all (two files may disagree on what it asks for).
    defined: bool

    def shown(self, line: int, registry: Registry, index: ClaimIndex | None) -> dict[str, Any]:
        """As ``gpulint inspect`` shows it (``line``: the line of the pod's entry): each
        request with what each of its classes hands out (:func:`class_devices`)."""
        claim = self.claim
        classes = claim.device_classes if claim is not None else ()
        shown_classes = {c: class_devices(c, registry, index) for c in classes}
        gpu = next((c for c in classes if shown_classes[c]["devices"] == "accelerator"), None)
        return {
            "name": self.name,
            "kind": self.reference[0] if self.reference else None,
            "claim": self.reference[1] if self.reference else None,
            "device_class": gpu,
            "hardware": shown_classes[gpu]["hardware"] if gpu is not None else None,
            "line": line,
            "defined_at": claim.place() if claim is not None else None,
            "resolved": (
                "project" if claim is not None else "ambiguous" if self.defined else "not found"
            ),
            "requests": [
                {
                    "name": r.name,
                    "device_classes": list(r.classes),
                    "devices": r.devices,
                    "resolves_to": [
                        shown_classes.get(c) or class_devices(c, registry, index) for c in r.classes
                    ],
                }
                for r in (claim.requests if claim is not None else ())
            ],
        }


def pod_claims(pod: PodSpec, index: ClaimIndex | None) -> list[PodClaim]:
    """Every entry of the pod's ``resourceClaims``, resolved in ``index`` (the claims of
    the pod's file and project; None: none known), in the order the pod writes them."""
    if pod.location != "pod":
        return []
    entries = pod.spec.get("resourceClaims")
    if not isinstance(entries, list):
        return []
    namespace = pod.obj.namespace
    out: list[PodClaim] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            continue
        name = entry.get("name")
        reference = claim_reference(entry)
        claim = None
        defined = False
        if reference is not None and index is not None:
            claim = index.claim(reference[0], reference[1], namespace)
            defined = claim is not None or index.defines(reference[0], reference[1], namespace)
        out.append(
            PodClaim(
                name if isinstance(name, str) else "?",
                (*pod.path, "resourceClaims", i),
                reference,
                claim,
                defined,
            )
        )
    return out


def class_unknown(name: str, registry: Registry, index: ClaimIndex) -> bool:
    """Nothing says what a DeviceClass hands out: the registry names it neither among the
    accelerator classes nor among the others, and no file of the run defines it with
    selectors that name a driver."""
    if name in registry.device_classes or name in registry.other_device_classes:
        return False
    return not index.class_drivers(name)


def has_unresolved_claims(
    pod: PodSpec, index: ClaimIndex | None, registry: Registry | None = None
) -> bool:
    """Does the pod use a claim whose object is not in ``index``, the claims of its file, or
    (with ``registry``) a claim that hands out no known accelerator but names a DeviceClass
    nothing defines (so what it gets is unknown)?"""
    entries = pod.spec.get("resourceClaims")
    if pod.location != "pod" or not isinstance(entries, list):
        return False
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        reference = claim_reference(entry)
        if reference is None or index is None:
            return True
        claim = index.claim(reference[0], reference[1], pod.obj.namespace)
        if claim is None:
            return True
        if registry is None:
            continue
        classes = claim.device_classes
        if not classes:
            return True  # no class read (v1alpha2's resourceClassName): what it gets is unknown
        if any(gpu_class_hardware(c, registry, index) is not None for c in classes):
            continue  # a GPU claim (gpu_claims)
        if any(class_unknown(c, registry, index) for c in classes):
            return True
    return False
