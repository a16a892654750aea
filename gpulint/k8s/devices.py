"""The device registry: which GPU and accelerator resource names exist.

The facts: docs/domain.md#device-and-sharing-resource-names.

The registry is data -- ``gpulint/data/devices.json``, validated against
``schemas/devices.schema.json`` in the test suite -- so adding a vendor, a MIG profile or a
sharing scheme is a data change. Configuration may merge more entries over it.
"""

import json
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from functools import cache
from pathlib import Path as FsPath
from typing import Any, NamedTuple

from gpulint.data import data_path
from gpulint.k8s.quantity.arith import is_multiple
from gpulint.model import Related, Span
from gpulint.util.nearmiss import edits as _edits

#: Words in a resource name's local part that make it look like an accelerator.
_GPU_WORDS = re.compile(r"gpu|mig-|vcuda|tpu|neuron|gaudi", re.IGNORECASE)


class DeviceResource(NamedTuple):
    name: str
    family: str
    hardware: str
    unit: str
    schemes: frozenset[str]
    constraints: Mapping[str, Any] | None = None
    container_request: bool = True
    advice: str | None = None
    source: str = ""
    #: For MIG instances: the GPU models that offer this profile.
    mig_models: frozenset[str] = frozenset()
    #: "device", "mig" or "shared" (time-sliced / MPS replica names).
    kind: str = "device"
    #: One unit is one physical accelerator, so a node offers at most its device count.
    whole_devices: bool = False
    #: Learned from the run's own device-plugin settings (gpulint.cluster.deviceplugins):
    #: ``file:line`` of the setting ("" for a built-in or configured entry) and what it says.
    said: str = ""
    setting: str = ""
    #: The run's device plugin rejects a request above one of it (MPS, or time-slicing with
    #: failRequestsGreaterThanOne).
    single: bool = False
    #: Every sharing configuration of the run that replicates it accepts a request above one
    #: (time-slicing without failRequestsGreaterThanOne): the pod runs wherever it lands.
    accepted: bool = False
    #: One unit is a replica of a shared GPU although the name is a device's (time-slicing
    #: or MPS without renaming, in every sharing configuration of the run).
    replica: bool = False
    #: Some sharing configurations of the run (not every one) replicate it under its own
    #: name: on their nodes a unit is a replica, on the others a whole device. What the first
    #: such configuration says and where (``sharing.timeSlicing: nvidia.com/gpu, 8 replicas,
    #: values.yaml:40``); "" when none does.
    sometimes_replica: str = ""

    def evidence(self) -> tuple[Related, ...]:
        """Where the run's own files say what this entry learned from them, as a finding's
        ``related`` place of kind ``evidence`` (none for a built-in or configured entry)."""
        label, _, line = self.said.rpartition(":")
        if not line.isdigit():
            return ()
        at = Span(int(line), 1, int(line), 1)
        return (Related("evidence", label, at, self.setting or self.name),)


class DraClass(NamedTuple):
    """A DRA DeviceClass (or driver) name that hands out accelerators."""

    name: str
    hardware: str
    unit: str = "devices"
    source: str = ""


class LegacyResource(NamedTuple):
    name: str
    replacement: str
    note: str
    source: str = ""
    #: For a name a device plugin's later releases dropped: the plugin's image (its last
    #: path part) and the last image tag known to advertise it and the first known not to.
    plugin: str = ""
    last_advertising: tuple[int, ...] = ()
    first_without: tuple[int, ...] = ()
    #: The project's plugin image without the name, ``image at file:line`` ("" for none).
    deployed: str = ""

    @property
    def certain(self) -> bool:
        """Whether no node of the cluster advertises the name: Kubernetes removed it, or
        the project deploys a plugin release without it."""
        return not self.plugin or bool(self.deployed)


def describe_constraints(constraints: Mapping[str, Any]) -> str:
    parts = []
    if "any_of" in constraints:
        return " or ".join(describe_constraints(c) for c in constraints["any_of"])
    lo, hi, step = constraints.get("min"), constraints.get("max"), constraints.get("multiple_of")
    if lo is not None and hi is not None:
        parts.append(f"between {lo} and {hi}")
    elif hi is not None:
        parts.append(f"at most {hi}")
    elif lo is not None:
        parts.append(f"at least {lo}")
    if step is not None:
        parts.append(f"a multiple of {step}" if not parts else f"in steps of {step}")
    return " ".join(parts) or "valid"


def _satisfies(value: Decimal, constraints: Mapping[str, Any]) -> bool:
    if "any_of" in constraints:
        return any(_satisfies(value, c) for c in constraints["any_of"])
    lo, hi, step = constraints.get("min"), constraints.get("max"), constraints.get("multiple_of")
    if lo is not None and value < lo:
        return False
    if hi is not None and value > hi:
        return False
    # Exact at any size (``value % step`` needs a context and fails past 28 digits).
    return step is None or is_multiple(value, int(step))


class Registry:
    __slots__ = (
        "_domains",
        "_looks",
        "_lower",
        "_suggestions",
        "definitive",
        "device_classes",
        "dra_drivers",
        "dra_prefix",
        "legacy",
        "other_device_classes",
        "resources",
        "schemes",
    )

    def __init__(
        self,
        resources: dict[str, DeviceResource],
        legacy: dict[str, LegacyResource] | None = None,
        schemes: dict[str, Mapping[str, Any]] | None = None,
        device_classes: dict[str, DraClass] | None = None,
        dra_drivers: dict[str, DraClass] | None = None,
        dra_prefix: str = "",
        other_device_classes: frozenset[str] = frozenset(),
        definitive: dict[str, str] | None = None,
    ) -> None:
        self.resources = resources
        #: Vendor domains whose names the project's own device plugin configuration says
        #: in full (the NVIDIA device plugin's, gpulint.cluster.deviceplugins), each with
        #: what says so (``file:line``): a name of the domain it does not advertise, no node
        #: of the project's cluster does.
        self.definitive: dict[str, str] = {} if definitive is None else definitive
        #: DRA DeviceClass names known to hand out no accelerator (NVIDIA's IMEX channels):
        #: a claim for one is a CPU pod's, not an unknown one (gpulint.k8s.dra.class_unknown).
        self.other_device_classes = other_device_classes
        #: KEP-5004: ``<dra_prefix><device class>`` is the implicit extended resource name
        #: of every DeviceClass ("" when the registry names none).
        self.dra_prefix = dra_prefix
        self.legacy: dict[str, LegacyResource] = {} if legacy is None else legacy
        self.schemes: dict[str, Mapping[str, Any]] = {} if schemes is None else schemes
        #: DRA DeviceClass names of accelerators (docs/domain.md#devices-through-dra).
        self.device_classes: dict[str, DraClass] = {} if device_classes is None else device_classes
        #: DRA driver names whose devices are accelerators (named in DeviceClass selectors).
        self.dra_drivers: dict[str, DraClass] = {} if dra_drivers is None else dra_drivers
        self._lower = {name.lower(): name for name in resources}
        #: Lower-cased names per lower-cased vendor domain (the part before the last "/").
        self._domains: dict[str, list[str]] = {}
        for lowered in self._lower:
            domain, _, _ = lowered.rpartition("/")
            self._domains.setdefault(domain, []).append(lowered)
        #: looks_like_accelerator answers, per name (difflib is slow and names repeat).
        self._looks: dict[str, bool] = {}
        #: suggest answers, per (name, cutoff): held by the registry, so they go with it.
        self._suggestions: dict[tuple[str, float], str | None] = {}

    def __repr__(self) -> str:
        return f"Registry({len(self.resources)} resources, {len(self.legacy)} legacy names)"

    # -- lookups ---------------------------------------------------------------------------
    def get(self, name: str) -> DeviceResource | None:
        return self.resources.get(name)

    def carved_from(self, name: str) -> str | None:
        """The whole-device resource a MIG instance or a shared replica is a part of, on the
        same nodes: ``nvidia.com/mig-1g.10gb`` and ``nvidia.com/gpu.shared`` are parts of
        ``nvidia.com/gpu`` (the GPU Operator's mixed MIG strategy and the device plugin's
        ``renameByDefault`` advertise them on the GPU nodes instead of whole GPUs). None for a
        device's own name, or a name whose device the registry does not list."""
        entry = self.resources.get(name)
        if entry is None or entry.kind not in ("mig", "shared"):
            return None
        if name.endswith(".shared") and name[: -len(".shared")] in self.resources:
            base = name[: -len(".shared")]
            return self.carved_from(base) or base
        whole = name.partition("/")[0] + "/gpu"
        device = self.resources.get(whole)
        if device is not None and device.kind == "device" and device.hardware == entry.hardware:
            return whole
        return None

    def is_accelerator(self, name: str) -> bool:
        """A known accelerator resource (registry or legacy name)."""
        return name in self.resources or name in self.legacy

    def is_dra_extended(self, name: str) -> bool:
        """An implicit DRA extended resource name (``deviceclass.resource.kubernetes.io/<class>``):
        served by a claim for that DeviceClass, whatever the class is called."""
        prefix = self.dra_prefix
        return bool(prefix) and name.startswith(prefix) and name != prefix

    def is_slip(self, name: str) -> bool:
        """Whether an unregistered ``name`` is a likely slip for a registered one.

        A slip is a name a person meant as a registered one and typed differently: the same
        name in another case (``nvidia.com/GPU``), a plural (``nvidia.com/gpus``), another
        separator (``koordinator.sh/gpu_core``), one edit in a short local part or two in a
        longer one (``nvidia.com/mig-3g.30gb``), a registered local part cut or run on by a
        few characters (``aliyun.com/gpu-memory`` for ``gpu-mem``), all within the name's
        own vendor domain; or a vendor domain itself misspelt (``nvidai.com/gpu``,
        ``intel.com/gpu``); or no domain at all (``gpu``: the API server takes no such name).
        A name of a registered vendor domain that differs more is no slip: it may be a
        resource the registry does not list yet.
        """
        if name in self.resources:
            return False
        if name.lower() in self._lower:
            return True
        domain, slash, local = name.lower().rpartition("/")
        if not slash:
            return True
        if domain not in self._domains:
            return bool(self.close_domains(domain))
        key = _squash(local)
        for lowered in self._domains[domain]:
            other = lowered.rpartition("/")[2]
            known = _squash(other)
            if known == key or _edits(local, other) <= _slip_edits(other):
                return True
            short, long_ = sorted((key, known), key=len)
            if len(short) >= 5 and long_.startswith(short) and len(long_) - len(short) <= 3:
                return True
        return False

    def may_be_accelerator(self, name: str) -> bool:
        """A known accelerator resource, or an unknown name that probably means one."""
        return self.is_accelerator(name) or self.looks_like_accelerator(name)

    def looks_like_accelerator(self, name: str) -> bool:
        """An unknown name that is probably a misspelt or invented accelerator resource."""
        known = self._looks.get(name)
        if known is None:
            known = self._looks[name] = self._looks_like_accelerator(name)
        return known

    def _looks_like_accelerator(self, name: str) -> bool:
        if "/" not in name:
            # cpu, memory, hugepages-*: native names, never close to a vendor's; but a bare
            # `gpu: 1` is a GPU meant and misspelt.
            return bool(_GPU_WORDS.search(name))
        if name in self.resources:
            return False
        if name in self.legacy or name.lower() in self._lower:
            return True
        _, _, local = name.rpartition("/")
        if _GPU_WORDS.search(local):
            return True
        return self.suggest(name, cutoff=0.85) is not None

    def suggest(self, name: str, cutoff: float = 0.6) -> str | None:
        """The closest real resource name, if any is close.

        A suggestion stays within the name's vendor domain: `intel.com/gpu` is not one edit
        away from `birentech.com/gpu` in any sense a user means. It crosses to another
        domain only when the domain itself looks misspelt (`nvidai.com/gpu`, `habana.com`
        for `habana.ai`, `intel.com` for `gpu.intel.com`); see `close_domains`.
        """
        if name in self.legacy:
            return self.legacy[name].replacement
        exact = self._lower.get(name.lower())
        if exact is not None:
            return exact
        # difflib costs ~1 ms a name; a corpus repeats its misspellings many times over.
        memo = self._suggestions
        key = (name, cutoff)
        if key not in memo:
            if len(memo) >= 4096:
                memo.clear()
            memo[key] = self._suggest(name.lower(), cutoff)
        return memo[key]

    def _suggest(self, lowered: str, cutoff: float) -> str | None:
        import difflib  # only when a name is unknown: keeps it off the start-up path

        domain, slash, local = lowered.rpartition("/")
        if not slash:
            # No domain to stay within (`gpu`, or a lost slash: `nvidia.comgpu`).
            matches = difflib.get_close_matches(lowered, list(self._lower), n=1, cutoff=cutoff)
            return self._lower[matches[0]] if matches else None
        if domain in self._domains:
            matches = difflib.get_close_matches(lowered, self._domains[domain], n=1, cutoff=cutoff)
            return self._lower[matches[0]] if matches else None
        # The domain is unknown: look in the domains it looks like a misspelling of, for the
        # same local part (compared alone: a shared domain would make any two names alike),
        # then for a near-identical whole name (a slash typed one place off: `amd.co/mgpu`).
        close = self.close_domains(domain)
        for other in close:
            locals_ = {name.rpartition("/")[2]: name for name in self._domains[other]}
            matches = difflib.get_close_matches(local, list(locals_), n=1, cutoff=cutoff)
            if matches:
                return self._lower[locals_[matches[0]]]
        near = [name for other in close for name in self._domains[other]]
        matches = difflib.get_close_matches(lowered, near, n=1, cutoff=max(cutoff, 0.85))
        return self._lower[matches[0]] if matches else None

    def has_domain(self, domain: str) -> bool:
        """Some registry name lives under ``domain`` (any case)."""
        return domain.lower() in self._domains

    def vendor_group(self, group: str) -> bool:
        """An API group of an accelerator vendor: its last two labels are those of a
        registry domain (``rebellions.ai``, ``deviceplugin.intel.com`` for ``gpu.intel.com``)."""
        tail = ".".join(group.lower().split(".")[-2:])
        return any(".".join(d.split(".")[-2:]) == tail for d in self._domains) if tail else False

    def close_domains(self, domain: str) -> list[str]:
        """The registry's vendor domains ``domain`` looks like a misspelling of, closest first.

        Close means one typing slip in the whole domain (`nvidai.com`, `aliyun.ocm`), or the
        same vendor label, or one slip in a label of five letters or more, under another
        suffix or subdomain (`habana.com` for `habana.ai`, `intel.com` for `gpu.intel.com`, a
        bare `nvidia`). A domain further from every registered one is another vendor's:
        VirtAI's `virtaitech.com` (Orion vGPU) is two letters from Vastai's `vastaitech.com`.
        """
        domain = domain.lower()
        vendor = _vendor(domain)
        scored = []
        for other in self._domains:
            if other == domain:
                continue
            whole = _edits(domain, other)
            theirs = _vendor(other)
            label = 0 if vendor == theirs else _edits(vendor, theirs)
            if whole <= 1 or label == 0 or (label == 1 and min(len(vendor), len(theirs)) >= 5):
                scored.append((min(whole, label), whole, other))
        return [other for *_, other in sorted(scored)]

    def domain_names(self, domain: str) -> list[str]:
        """The registry's device names under ``domain``: whole accelerators first, in registry
        order, then the other device names (no MIG instances or shared replicas)."""
        rows = [
            r
            for r in self.resources.values()
            if r.kind == "device" and r.name.rpartition("/")[0].lower() == domain.lower()
        ]
        return [r.name for r in sorted(rows, key=lambda r: not r.whole_devices)]

    def constraint_error(self, resource: DeviceResource, value: Decimal) -> str | None:
        """Why ``value`` is not a value this resource's scheme can satisfy, or None."""
        if resource.constraints is None or value == 0:
            return None
        if _satisfies(value, resource.constraints):
            return None
        return f"must be {describe_constraints(resource.constraints)} ({resource.unit})"

    # -- building --------------------------------------------------------------------------
    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Registry":
        resources: dict[str, DeviceResource] = {}
        for row in data.get("resources", ()):
            entry = _resource(row)
            resources[entry.name] = entry
        mig = data.get("mig")
        if mig:
            template = mig["resource_template"]
            # k8s-device-plugin rm.go: strings.ReplaceAll("mig-"+profile, "+", ".")
            plus = mig.get("plus_replacement", ".")
            models: dict[str, set[str]] = {}
            for model, profiles in mig["models"].items():
                for profile in profiles:
                    models.setdefault(profile, set()).add(model)
            for extra in mig.get("additional_profiles", ()):
                models.setdefault(extra["profile"], set()).update(extra.get("models", ()))
            for profile, owners in sorted(models.items()):
                name = template.format(profile=profile.replace("+", plus))
                resources[name] = DeviceResource(
                    name=name,
                    family="nvidia-mig",
                    hardware=mig.get("hardware", "nvidia"),
                    unit="MIG instances",
                    schemes=frozenset(mig.get("schemes", ("nvidia-mig-mixed",))),
                    source=mig.get("source", ""),
                    mig_models=frozenset(owners),
                    kind="mig",
                )
        shared = data.get("shared_suffix")
        if shared:
            suffix = shared["suffix"]
            applies = set(shared.get("applies_to", ()))
            for entry in list(resources.values()):
                if entry.name in applies or ("mig" in applies and entry.kind == "mig"):
                    name = entry.name + suffix
                    resources[name] = entry._replace(
                        name=name,
                        unit=f"time-sliced replicas of {entry.name}",
                        schemes=frozenset(shared.get("schemes", ())),
                        source=shared.get("source", entry.source),
                        kind="shared",
                        whole_devices=False,
                    )
        legacy = {row["name"]: _legacy(row) for row in data.get("legacy", ())}
        dra = data.get("dra") or {}
        prefix = dra.get("extended_resource_prefix") or {}
        return cls(
            resources,
            legacy,
            dict(data.get("schemes", {})),
            _dra(dra.get("device_classes", ())),
            _dra(dra.get("drivers", ())),
            str(prefix.get("prefix", "")),
            frozenset(row["name"] for row in dra.get("other_device_classes", ())),
        )

    def merged(self, rows: Iterable[Mapping[str, Any]]) -> "Registry":
        """A copy with configuration entries added over (or replacing) built-in ones."""
        return self.learned(_resource(row) for row in rows)

    def learned(
        self,
        entries: Iterable[DeviceResource],
        legacy: Iterable[LegacyResource] = (),
        definitive: Mapping[str, str] | None = None,
    ) -> "Registry":
        """A copy with ``entries`` added over (or replacing) the registry's own: the
        configuration's, or what the run's device plugins say
        (gpulint.cluster.deviceplugins), which may also settle a ``legacy`` name (the
        project deploys a release without it) and make a vendor domain ``definitive``."""
        resources = dict(self.resources)
        for entry in entries:
            resources[entry.name] = entry
        old = {n: r for n, r in self.legacy.items() if n not in resources}
        for row in legacy:
            if row.name in old:
                old[row.name] = row
        return Registry(
            resources,
            old,
            dict(self.schemes),
            dict(self.device_classes),
            dict(self.dra_drivers),
            self.dra_prefix,
            self.other_device_classes,
            dict(self.definitive if definitive is None else definitive),
        )


def _squash(local: str) -> str:
    """A local part without separators and a plural ``s``: ``gpu_cores`` -> ``gpucore``."""
    squashed = re.sub(r"[-_.]", "", local.lower())
    return squashed[:-1] if squashed.endswith("s") and len(squashed) > 2 else squashed


def _slip_edits(local: str) -> int:
    """How many edits still read as a slip of ``local``: one for short names, two beyond."""
    return 1 if len(local) <= 4 else 2


def _vendor(domain: str) -> str:
    """The label that names the vendor: `nvidia` in `nvidia.com`, `intel` in `gpu.intel.com`."""
    labels = domain.split(".")
    return labels[-2] if len(labels) > 1 else labels[0]


def _resource(row: Mapping[str, Any]) -> DeviceResource:
    return DeviceResource(
        name=row["name"],
        family=row.get("family", "custom"),
        hardware=row.get("hardware", row.get("family", "custom")),
        unit=row.get("unit", "devices"),
        schemes=frozenset(row.get("schemes", ())),
        constraints=row.get("constraints"),
        container_request=row.get("container_request", True),
        advice=row.get("advice"),
        source=row.get("source", ""),
        whole_devices=bool(row.get("whole_devices", False)),
    )


def version_of(text: str) -> tuple[int, ...]:
    """``2.16.18.0`` (or ``v2.16.18.0``, a tag's digits) as numbers; ``()`` when it is no
    release number (``latest``, a digest)."""
    parts = text.strip().removeprefix("v").split(".")
    if not parts or not all(p.isdigit() and len(p) <= 9 for p in parts):
        return ()
    return tuple(int(p) for p in parts)


def _legacy(row: Mapping[str, Any]) -> LegacyResource:
    plugin = row.get("plugin") or {}
    return LegacyResource(
        row["name"],
        row["replacement"],
        row.get("note", ""),
        row.get("source", ""),
        str(plugin.get("image", "")),
        version_of(str(plugin.get("last_advertising", ""))),
        version_of(str(plugin.get("first_without", ""))),
    )


def _dra(rows: Iterable[Mapping[str, Any]]) -> dict[str, DraClass]:
    return {
        row["name"]: DraClass(
            row["name"], row["hardware"], row.get("unit", "devices"), row.get("source", "")
        )
        for row in rows
    }


def devices_path() -> FsPath:
    return data_path("gpulint.data", "devices.json")


@cache
def builtin_registry() -> Registry:
    with open(devices_path(), encoding="utf-8") as fh:
        return Registry.from_json(json.load(fh))
