"""The repository's own device-plugin settings: what the run's files configure the GPU
device plugins to advertise, learned into the run's device registry with where they say it.

Three plugins say something a pod's request is judged by:

- **The NVIDIA device plugin's sharing configuration** (``version: v1``, ``sharing:
  timeSlicing:`` or ``sharing: mps:``, NVIDIA/k8s-device-plugin ``api/config/v1``
  ``config.go``, ``sharing.go``, ``replicas.go``), found as a document of its own or as a
  string inside another (a ConfigMap's ``data`` the plugin or the GPU Operator's
  ``ClusterPolicy`` ``devicePlugin.config`` reads, the plugin chart's ``config.map``
  values). Each ``resources`` row replicates ``name``; the replicas are advertised as
  ``rename``, or ``<name>.shared`` with ``renameByDefault: true``, else under ``name``
  itself. With ``failRequestsGreaterThanOne: true`` -- always under MPS -- the plugin
  rejects a request above one (``internal/rm/rm.go`` ``ValidateRequest``).
- **HAMi's device configuration** (the ``hami-scheduler-device`` ConfigMap's
  ``device-config.yaml``: ``nvidia: {resourceCountName, resourceMemoryName,
  resourceMemoryPercentageName, resourceCoreName, resourcePriorityName}``, or the chart's
  values ``resourceName``, ``resourceMem``, ``resourceMemPercentage``, ``resourceCores``,
  ``resourcePriority``: Project-HAMi/HAMi ``charts/hami/templates/scheduler/
  device-configmap.yaml``, ``charts/hami/values.yaml``, ``pkg/device/nvidia/device.go``). A
  renamed resource keeps what its default name means (its unit, its range).
- **KubeVirt's permitted host devices**: each ``permittedHostDevices`` ``resourceName`` of a
  KubeVirt CR (``nvidia.com/GA102GL_A10``) is a name advertised for VMs, so it is known.
- **A device plugin DaemonSet's own arguments and environment**: a resource name written in a
  DaemonSet container's ``command``, ``args`` or ``env`` values (``--resource-name=...``,
  ``RESOURCE_NAME: vendor.com/npu``) is a name the project's plugin advertises, so a pod's
  request for it is known (GPU010 says nothing of it). Never its ``resources``: a DaemonSet
  that asks for a misspelt name does not advertise it.
- **A device plugin's configuration file**: the ``resourceName`` a configuration embedded in
  a ConfigMap sets, in a file that deploys a DaemonSet or configures a plugin (Iluvatar's
  ix-device-plugin reads
  ``resourceName: "iluvatar.com/gpu"`` from its ``ix-config``, Deep-Spark/ix-device-plugin
  ``ix-device-plugin.yaml``, ``pkg/config``) is a name that plugin advertises.
- **gpushare's** ``--memory-unit`` (read by ``gpulint.lint.prepass.gpushare_units``): the unit of
  ``aliyun.com/gpu-mem``.

What is learned becomes registry entries (:func:`learned`) whose ``said`` is the file and
line of the setting and ``setting`` what it says, so a rule that rests a finding on one
names it as evidence (``Violation.related``, kind ``evidence``). A replicated resource that
keeps its name (``nvidia.com/gpu`` time-sliced without renaming) is taken as shared only when
every sharing configuration of the run shares it: with several configurations (one per node
label), some nodes may offer it whole, and the entry says only that some share it
(``sometimes_replica``), so a count of it is not taken for that many GPUs for certain. A row
of ``replicas: 1`` that keeps its name is taken to share nothing (each device a whole GPU):
the plugin refuses it since v0.12.0 ("number of replicas must be >= 2", GPU035 reports it),
and a plugin that advertises nothing makes no count a count of replicas. Nor does a named
configuration that says only ``version: v1`` beside another (the chart's
``config.map.default``): it is counted as a configuration of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from typing import Any, NamedTuple

from gpulint.k8s.devices import DeviceResource, LegacyResource, Registry, version_of


def wanted(raw: bytes) -> bool:
    """Whether a file's bytes may hold a device plugin's configuration (only those files are
    parsed): ``mps:`` alone is in every CRD that documents ``timestamps:``, so it counts
    only beside a ``sharing:`` key."""
    if b"timeSlicing" in raw or b"resourceCountName" in raw or b"resourceCores" in raw:
        return True
    if b"DaemonSet" in raw or b"permittedHostDevices" in raw:
        return True
    return b"mps:" in raw and b"sharing:" in raw


#: HAMi's NVIDIA resource names: the device-config.yaml key, the chart value, the default.
HAMI_NAMES = (
    ("resourceCountName", "resourceName", "nvidia.com/gpu"),
    ("resourceMemoryName", "resourceMem", "nvidia.com/gpumem"),
    ("resourceMemoryPercentageName", "resourceMemPercentage", "nvidia.com/gpumem-percentage"),
    ("resourceCoreName", "resourceCores", "nvidia.com/gpucores"),
    ("resourcePriorityName", "resourcePriority", "nvidia.com/priority"),
)

#: How deep a document is walked for a configuration (a chart's values nest it a few levels).
_DEPTH = 8


class Replicated(NamedTuple):
    """One ``resources`` row of an NVIDIA sharing configuration."""

    #: The resource the pods ask for: ``rename``, ``<name>.shared`` or ``name``.
    name: str
    #: The resource replicated (``nvidia.com/gpu``, ``nvidia.com/mig-1g.10gb``).
    base: str
    replicas: int
    #: ``time-slicing`` or ``mps``.
    strategy: str
    #: The plugin rejects a request above one (failRequestsGreaterThanOne, or MPS).
    single: bool
    #: ``file:line`` of the row.
    said: str


class Renamed(NamedTuple):
    """A HAMi resource name configured other than its default."""

    name: str
    default: str
    key: str
    said: str


class Found(NamedTuple):
    #: One list per sharing configuration found.
    configs: list[list[Replicated]]
    hami: list[Renamed]
    #: Resource names a DaemonSet's container arguments or environment name, with where.
    advertised: list[tuple[str, str]]
    #: Each NVIDIA device plugin configuration's place, and whether it names its resources
    #: itself (a ``resources:`` block of patterns and names): then its names are not known.
    places: list[tuple[str, bool]]
    #: A DaemonSet container's image, with where (``neuron-device-plugin:2.16.18.0``).
    images: list[tuple[str, str]]


def scan(files: Iterable[tuple[str, bytes]]) -> Found:
    """The device-plugin configurations of ``(label, bytes)`` files. Files that hold none of
    a configuration's keys (:func:`wanted`) are not parsed; a file that cannot be decoded
    adds nothing (the lint reports it)."""
    from gpulint.loader.decoding import decode

    found = Found([], [], [], [], [])
    for label, raw in files:
        if not wanted(raw):
            continue
        text, problem = decode(raw)
        if text is None or problem is not None:
            continue
        _scan_text(found, label, text, 0, 0)
    return found


def _scan_text(found: Found, label: str, text: str, offset: int, nested: int) -> None:
    from gpulint.loader.stream import DocumentStream

    for doc in DocumentStream(text):
        _scan_doc(found, label, doc, offset, nested)


def scan_document(found: Found, label: str, doc: Any) -> None:
    """What one document of a file (already parsed) configures, added to ``found``."""
    _scan_doc(found, label, doc, 0, 0)


def _scan_doc(found: Found, label: str, doc: Any, offset: int, nested: int) -> None:
    if nested == 0 and isinstance(doc.data, dict) and doc.data.get("kind") == "DaemonSet":
        _advertised(found, label, doc)
    for path, value in _walk(doc.data, (), 0):
        line = offset + doc.value_span(path).line

        at = partial(_place, label, offset, doc, path)

        if isinstance(value, str):
            if nested < 2 and _embedded(value):
                # An embedded configuration (a ConfigMap's data, a chart's config.map):
                # a block scalar's text starts on the line after its key.
                _scan_text(found, label, value, line, nested + 1)
            continue
        if isinstance(value.get("permittedHostDevices"), dict):
            _permitted(found, value["permittedHostDevices"], at)
        _bare_configs(found, value, at)
        if nested and path == () and doc.data is value:
            _configured(found, value, at)
        if _is_config(value):
            # Every configuration counts, a plugin's that shares nothing as well: a
            # ConfigMap of named configurations (one per node label) may share a GPU on
            # some nodes and leave it whole on others.
            sharing = value.get("sharing")
            shared = isinstance(sharing, dict)
            found.configs.append(_sharing(sharing, partial(at, "sharing")) if shared else [])
            found.places.append((at(), "resources" in value))
        if path[-1:] == ("nvidia",) and (
            "resourceCountName" in value or "resourceCoreName" in value
        ):
            # device-config.yaml's (or the chart's devices.nvidia): the other vendors'
            # mappings (cambricon, hygon, ...) name their own resources.
            keys = [(k, d) for k, _, d in HAMI_NAMES]
        elif "resourceMem" in value and "resourceCores" in value:
            keys = [(k, d) for _, k, d in HAMI_NAMES]
        else:
            continue
        for key, default in keys:
            name = value.get(key)
            if isinstance(name, str) and "/" in name and name.strip() != default:
                found.hami.append(Renamed(name.strip(), default, key, at(key)))


#: A resource name as a device plugin's flag or variable writes it: a domain with a dot, a
#: slash, a name (compiled on first use by ``re``; only DaemonSets are searched).
_RESOURCE_NAME = (
    r"(?<![\w./-])((?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?\.)+[a-z]{2,}"
    r"/[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)"
)


def _advertised(found: Found, label: str, doc: Any) -> None:
    """The resource names a DaemonSet's containers name in ``command``, ``args`` and ``env``
    values: what its device plugin is told to advertise."""
    import re

    spec = doc.data.get("spec")
    template = spec.get("template") if isinstance(spec, dict) else None
    pod = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(pod, dict):
        return
    for section in ("containers", "initContainers"):
        containers = pod.get(section)
        if not isinstance(containers, list):
            continue
        for index, container in enumerate(containers):
            if not isinstance(container, dict):
                continue
            base = ("spec", "template", "spec", section, index)
            image = container.get("image")
            if isinstance(image, str) and image:
                found.images.append((image[:512], _place(label, 0, doc, (*base, "image"))))
            texts: list[tuple[tuple[Any, ...], Any]] = []
            for key in ("command", "args"):
                items = container.get(key)
                if isinstance(items, list):
                    texts.extend(((*base, key, i), item) for i, item in enumerate(items))
            env = container.get("env")
            if isinstance(env, list):
                texts.extend(
                    ((*base, "env", i, "value"), item.get("value"))
                    for i, item in enumerate(env)
                    if isinstance(item, dict)
                )
            for path, text in texts:
                if not isinstance(text, str) or "/" not in text:
                    continue
                for match in re.finditer(_RESOURCE_NAME, text[:4096]):
                    found.advertised.append((match.group(1), _place(label, 0, doc, path)))


def _configured(found: Found, config: Mapping[str, Any], at: Callable[..., str]) -> None:
    """The ``resourceName`` an embedded device plugin configuration sets (a ConfigMap's data
    in a file :func:`wanted` lets through): the name that plugin advertises."""
    import re

    name = config.get("resourceName")
    if isinstance(name, str) and re.fullmatch(_RESOURCE_NAME, name.strip()[:253]):
        found.advertised.append((name.strip(), at("resourceName")))


#: KubeVirt's ``permittedHostDevices`` lists: each item's ``resourceName`` is a name KubeVirt
#: or an external device plugin (NVIDIA's KubeVirt GPU plugin) advertises for passthrough
#: (kubevirt.io/api core/v1 ``PermittedHostDevices``).
HOST_DEVICE_LISTS = ("pciHostDevices", "mediatedDevices", "usb")


def _permitted(found: Found, permitted: Mapping[str, Any], at: Callable[..., str]) -> None:
    """The resource names a KubeVirt CR permits VMs to request: names advertised on the
    project's cluster."""
    for key in HOST_DEVICE_LISTS:
        rows = permitted.get(key)
        for index, row in enumerate(rows if isinstance(rows, list) else ()):
            name = row.get("resourceName") if isinstance(row, dict) else None
            if isinstance(name, str) and "/" in name:
                place = at("permittedHostDevices", key, index, "resourceName")
                found.advertised.append((name.strip()[:253], place))


def _bare_configs(found: Found, named: Mapping[Any, Any], at: Callable[..., str]) -> None:
    """Beside a device plugin configuration in a mapping of named configurations (a
    ConfigMap's data, a chart's ``config.map``), one that says only ``version: v1`` is a
    configuration too, one that shares nothing: the nodes labelled with its name offer
    whole GPUs (a chart's ``default: "version: v1"`` beside an ``mps`` one)."""
    texts = [(k, v) for k, v in named.items() if isinstance(v, str)]
    if len(texts) < 2 or not any(_embedded(v) for _, v in texts):
        return
    for key, text in texts:
        if _bare_v1(text):
            found.configs.append([])
            found.places.append((at(key), False))


def _bare_v1(text: str) -> bool:
    """A configuration's text that holds nothing but its version."""
    lines = [line.split("#", 1)[0].strip() for line in text.splitlines()[:20]]
    kept = [line for line in lines if line and line != "---"]
    return kept in (["version: v1"], ['version: "v1"'], ["version: 'v1'"])


def _embedded(text: str) -> bool:
    """A string that may hold a device plugin's configuration (a ConfigMap's data, a chart's
    ``config.map`` entry): only those are parsed."""
    if "resourceCountName" in text or "resourceCores" in text or "resourceName:" in text:
        return True
    return "version:" in text and ("sharing:" in text or "flags:" in text)


def _is_config(value: Mapping[str, Any]) -> bool:
    """An NVIDIA device plugin configuration (api/config/v1 ``Config``): ``version: v1``
    with its ``flags`` or ``sharing``, or a bare ``sharing`` block with time-slicing or MPS
    (a chart's values written without the version)."""
    if value.get("version") == "v1" and ("flags" in value or "sharing" in value):
        return True
    sharing = value.get("sharing")
    return isinstance(sharing, dict) and ("timeSlicing" in sharing or "mps" in sharing)


def _walk(data: Any, path: tuple[Any, ...], depth: int) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """Every mapping and string of ``data`` with its path, to :data:`_DEPTH` levels."""
    if isinstance(data, str):
        yield path, data
        return
    if depth > _DEPTH:
        return
    if isinstance(data, dict):
        yield path, data
        items: Iterable[tuple[Any, Any]] = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    else:
        return
    for key, value in items:
        if isinstance(value, (dict, list, str)):
            yield from _walk(value, (*path, key), depth + 1)


def _place(label: str, offset: int, doc: Any, path: tuple[Any, ...], *more: Any) -> str:
    """``file:line`` of the value at ``path`` + ``more`` of ``doc`` (a text starting on line
    ``offset`` + 1 of its file)."""
    return f"{label}:{offset + doc.value_span((*path, *more)).line}"


def _sharing(sharing: Mapping[str, Any], at: Callable[..., str]) -> list[Replicated]:
    """The replicated resources of one ``sharing:`` block: MPS when it replicates (the plugin
    prefers it, ``Sharing.SharingStrategy``), else time-slicing."""
    for strategy, key in (("mps", "mps"), ("time-slicing", "timeSlicing")):
        block = sharing.get(key)
        if not isinstance(block, dict) or not isinstance(block.get("resources"), list):
            continue
        rename = block.get("renameByDefault") is True
        single = strategy == "mps" or block.get("failRequestsGreaterThanOne") is True
        rows = []
        for index, row in enumerate(block["resources"]):
            if not isinstance(row, dict) or not isinstance(row.get("name"), str):
                continue
            replicas = row.get("replicas")
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 1:
                continue
            base = row["name"].strip()
            new = row.get("rename")
            name = new.strip() if isinstance(new, str) and new.strip() else None
            if name is None and replicas == 1 and not rename:
                continue  # one replica a device, under its own name: each is a whole GPU
            if name is None:
                name = f"{base}.shared" if rename else base
            field = "rename" if isinstance(new, str) else "name"
            said = at(key, "resources", index, field)
            rows.append(Replicated(name, base, replicas, strategy, single, said))
        if rows:
            return rows
    return []


def learned(registry: Registry, found: Found, gpushare: tuple[str, str] | None) -> Registry:
    """``registry`` with what the run's device plugins say (the same registry when they say
    nothing)."""
    rows: dict[str, DeviceResource] = {}
    every = len(found.configs)
    kept: dict[str, list[Replicated]] = {}
    # Whether each configuration that replicates a renamed name accepts more than one.
    lenient: dict[str, list[bool]] = {}
    for config in found.configs:
        seen: set[str] = set()  # a name kept twice in one configuration counts once
        for row in config:
            base = registry.get(row.base)
            if base is None:
                continue
            if row.name == row.base:
                if row.name not in seen:
                    seen.add(row.name)
                    kept.setdefault(row.name, []).append(row)
                continue
            lenient.setdefault(row.name, []).append(not row.single)
            before = rows.get(row.name)
            if before is not None and before.single and not row.single:
                row = row._replace(single=False)  # another configuration accepts more
            elif before is not None and not before.single:
                continue
            setting = _setting(row)
            rows[row.name] = base._replace(
                name=row.name,
                unit=f"{row.strategy} replicas of {row.base} ({row.replicas} per device)",
                schemes=frozenset({f"nvidia-{row.strategy}"}),
                source=f"the project's device plugin configuration ({row.said})",
                kind="shared",
                whole_devices=False,
                said=row.said,
                setting=setting,
                single=row.single,
            )
    for name, same in kept.items():
        # Shared under its own name only where every configuration of the run shares it.
        if len(same) != every:
            # Elsewhere the nodes of some configurations offer replicas, the others whole
            # devices: a request may count either.
            first = same[0]
            rows[name] = registry.resources[name]._replace(
                sometimes_replica=f"{_setting(first)}, {first.said}"
            )
            continue
        first = same[0]
        rows[name] = registry.resources[name]._replace(
            replica=True,
            whole_devices=False,
            said=first.said,
            setting=_setting(first),
            single=all(r.single for r in same),
            accepted=not any(r.single for r in same),
        )
    for name, accepts in lenient.items():
        if name in rows and all(accepts):
            rows[name] = rows[name]._replace(accepted=True)
    for renamed in found.hami:
        default = registry.get(renamed.default)
        if default is None or renamed.name in rows:
            continue
        rows[renamed.name] = default._replace(
            name=renamed.name,
            source=f"the project's HAMi configuration ({renamed.said})",
            said=renamed.said,
            setting=f"{renamed.key}: {renamed.name}",
        )
    for name, said in found.advertised:
        if name in rows or registry.get(name) is not None:
            continue
        domain = name.rpartition("/")[0] + "/"
        owner = next((r for n, r in registry.resources.items() if n.startswith(domain)), None)
        rows[name] = DeviceResource(
            name=name,
            family=owner.family if owner is not None else "custom",
            hardware=owner.hardware if owner is not None else "custom",
            unit="devices the project's device plugin advertises",
            schemes=frozenset(),
            source=f"the run's device plugin settings ({said})",
            said=said,
            setting=f"advertises {name}",
        )
    if gpushare is not None:
        unit, place = gpushare
        entry = registry.get("aliyun.com/gpu-mem")
        if entry is not None:
            rows[entry.name] = entry._replace(
                unit=f"{unit} of GPU memory", said=place, setting=f"--memory-unit={unit}"
            )
    legacy = list(_retired(registry, found, rows))
    definitive = _definitive(found)
    if not rows and not legacy and not definitive:
        return registry
    return registry.learned(rows.values(), legacy, definitive)


def _retired(
    registry: Registry, found: Found, rows: dict[str, DeviceResource]
) -> Iterator[LegacyResource]:
    """A name a plugin's later releases dropped, settled by the release the project deploys:
    a release that still advertises it makes it a known name (added to ``rows``), one known
    not to makes it certainly wrong (the legacy row, with the release and its place). A
    project without the plugin, or with a tag gpulint cannot place, settles nothing."""
    for old in registry.legacy.values():
        if not old.plugin:
            continue
        releases = [
            (version_of(tag), image, said)
            for image, said in found.images
            for tag in [_tag(image, old.plugin)]
            if tag is not None
        ]
        older = [(image, said) for v, image, said in releases if v and v <= old.last_advertising]
        if older:
            image, said = older[0]
            base = registry.get(old.replacement)
            if base is not None and old.name not in rows:
                rows[old.name] = base._replace(
                    name=old.name,
                    source=f"the project's device plugin ({said})",
                    said=said,
                    setting=f"{image} advertises {old.name}",
                )
            continue
        if releases and all(v and v >= old.first_without for v, _, _ in releases):
            _, image, said = releases[0]
            yield old._replace(deployed=f"{image.rpartition('/')[2]} at {said}")


def _tag(image: str, name: str) -> str | None:
    """The tag of ``image`` when its last path part is ``name`` (``public.ecr.aws/neuron/
    neuron-device-plugin:2.16.18.0`` -> ``2.16.18.0``); "" without a tag, None for another
    image."""
    path = image.partition("@")[0]
    last = path.rpartition("/")[2]
    repo, _, tag = last.partition(":")
    return tag if repo == name else None


#: Device plugins that advertise names of their own under nvidia.com without saying them in
#: an argument: KubeVirt's passthrough plugin (PCI device names, NVIDIA/kubevirt-gpu-device-plugin
#: pkg/device_plugin/device_plugin.go), HAMi's and vgpu-manager's device plugins.
SHARERS = (
    "nvidia-kubevirt-gpu-dp",
    "kubevirt-gpu-device-plugin",
    "hami",
    "vgpu-device-plugin",
    "vgpu-manager",
)

#: The NVIDIA device plugin's vendor domain: with its configuration in the project and no
#: other plugin naming resources there, the domain's names are those it advertises.
NVIDIA_DOMAIN = "nvidia.com"


def _definitive(found: Found) -> dict[str, str]:
    """The vendor domains whose names the project's device plugins say in full: nvidia.com
    when an NVIDIA device plugin configuration is in the project, none of its configurations
    names its own resources, and no other plugin of the project (HAMi, a DaemonSet's
    ``--resource-name``) names one under the domain."""
    if not found.places or any(custom for _, custom in found.places) or found.hami:
        return {}
    prefix = NVIDIA_DOMAIN + "/"
    if any(name.startswith(prefix) for name, _ in found.advertised):
        return {}
    if any(_tag(image, plugin) is not None for image, _ in found.images for plugin in SHARERS):
        return {}
    return {NVIDIA_DOMAIN: found.places[0][0]}


def _setting(row: Replicated) -> str:
    """What a sharing row says, as the finding quotes it."""
    shown = "sharing.mps" if row.strategy == "mps" else "sharing.timeSlicing"
    if row.strategy == "time-slicing" and row.single:
        shown += " with failRequestsGreaterThanOne: true"
    renamed = "" if row.name == row.base else f" as {row.name}"
    return f"{shown}: {row.base}{renamed}, {row.replicas} replicas"
