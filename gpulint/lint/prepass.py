"""What a ``gpulint check`` reads of its files before it lints them, so that every worker
process and every file, whatever its order, sees the same facts: the node-pool objects of a
described cluster, the cluster picture when none is described (gpulint.cluster.evidence),
the DRA claims and DeviceClasses every file's pods and claims may name, the ConfigMaps
every file's containers may read variables from, and what the repository's own device
plugins are configured to advertise (gpulint.cluster.deviceplugins). Each pass reads only
what its markers say it needs; standard input is never pre-read (it streams).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence

    from gpulint.cluster.evidence import Gatherer, Picture
    from gpulint.cluster.model import Cluster
    from gpulint.k8s.devices import Registry
    from gpulint.k8s.dra import DraFacts
    from gpulint.k8s.envvalues import ConfigMaps
    from gpulint.settings import Settings
    from gpulint.util.discover import Target
    from gpulint.util.factcache import FactCache

    #: A project's files, each with its bytes (:func:`read_files`).
    Read = Sequence[tuple[Target, bytes]]


def read_files(found: Iterable[Target]) -> list[tuple[Target, bytes]]:
    """Each file with its bytes, read once for every pass: standard input is not pre-read,
    and an unreadable file is left out (the lint reports it)."""
    from gpulint.loader.target import read_target

    out = []
    for target in found:
        if target.path is None:
            continue
        raw, _ = read_target(target)
        if raw is not None:
            out.append((target, raw))
    return out


#: A project file the cache says is unchanged, not read: its digest, and whether its bytes
#: hold ``tolerations`` and a GPU hint (:func:`read_project`).
Unread = tuple["Target", str, bool, bool]


def needs_bytes(raw: bytes) -> bool:
    """Whether a pass other than the taint consensus reads this file's bytes: a node-pool
    object, a device plugin's configuration or gpushare's flag, a DeviceClass, a ResourceClaim or
    its template, a ConfigMap
    or a reference to one. Only files that need none may go unread when unchanged."""
    from gpulint.cluster.deviceplugins import wanted
    from gpulint.cluster.poolkinds import markers

    return (
        wanted(raw)
        or b"--memory-unit" in raw
        or b"DeviceClass" in raw
        or b"ResourceClaim" in raw
        or b"onfigMap" in raw
        or any(m in raw for m in markers())
    )


def read_project(
    found: Iterable[Target], cache: FactCache | None
) -> tuple[list[tuple[Target, bytes]], list[Unread]]:
    """The project's files with their bytes, as :func:`read_files`; with a ``cache``, the
    files it says are unchanged (the same size and modification time, a regular file and
    not a link) and that no pass but the consensus reads are not read again: their digests
    stand for them (:meth:`gpulint.cluster.evidence.Gatherer.add_known`)."""
    if cache is None:
        return read_files(found), []
    import os
    import stat

    from gpulint.cluster.evidence import may_hold_gpu_pods
    from gpulint.loader.target import read_target
    from gpulint.util.factcache import digest

    read: list[tuple[Target, bytes]] = []
    unread: list[Unread] = []
    for target in found:
        if target.path is None:
            continue
        where, info = None, None
        try:
            info = os.lstat(target.path)
            if stat.S_ISREG(info.st_mode):
                where = os.path.relpath(os.path.abspath(target.path), cache.root)
        except (OSError, ValueError):
            pass
        if where is not None and info is not None:
            kept = cache.unchanged(where, info.st_size, info.st_mtime_ns)
            if kept is not None and len(kept) == 3 and all(isinstance(f, bool) for f in kept[1:]):
                unread.append((target, kept[0], kept[1], kept[2]))
                continue
        raw, _ = read_target(target)
        if raw is None:
            continue
        read.append((target, raw))
        if where is not None and info is not None and not needs_bytes(raw):
            flags = (b"tolerations" in raw, may_hold_gpu_pods(raw))
            cache.saw(where, info.st_size, info.st_mtime_ns, digest(raw), *flags)
    return read, unread


def cluster_objects(cluster: Cluster | None, found: Read) -> Cluster | None:
    """``cluster`` with the node-pool objects of the files to lint (Karpenter NodePools,
    Kueue ResourceFlavors), read in a pre-pass so that every worker sees the same cluster
    (gpulint.cluster.objects). Standard input is not pre-read; unreadable files add
    nothing (the lint reports them)."""
    from gpulint.cluster.objects import merged, scan

    return merged(cluster, scan((target.label, raw) for target, raw in found))


#: The rules that judge the GPU nodes' taints, and read the run's cluster picture.
EVIDENCE_RULES = frozenset({"GPU020", "GPU021", "GPU023"})


def cluster_picture(
    settings: Settings,
    found: Read,
    cache: FactCache | None = None,
    unread: Sequence[Unread] = (),
) -> Picture:
    """What the files to lint say about the GPU nodes when the configuration describes no
    cluster (gpulint.cluster.evidence): the taints their GPU pods agree on and their GPU
    node-pool objects' taints, read in a pre-pass so that every worker sees the same
    picture. Standard input is not pre-read."""
    from gpulint.cluster.evidence import Gatherer
    from gpulint.cluster.objects import scan
    from gpulint.cluster.poolkinds import markers
    from gpulint.k8s.devices import builtin_registry
    from gpulint.k8s.workloads import builtin_table

    gatherer = Gatherer(
        settings.registry or builtin_registry(), settings.workloads or builtin_table(), cache
    )
    pools: list[tuple[str, bytes]] = []  # read together: templates and overlays cross files
    wanted = markers()
    later: list[tuple[Target, bytes]] = []  # GPU files without tolerations: counted if it matters
    for target, raw in [*found, *_known(gatherer, unread)]:
        if gatherer.add(target.label, raw):
            later.append((target, raw))
        if any(m in raw for m in wanted):
            pools.append((target.label, raw))
    if (later or unread) and gatherer.wants_counts():
        for target, raw in later:
            gatherer.count(target.label, raw)
        for target, key, tolerations, hint in unread:
            if hint and not tolerations and not gatherer.count_known(key):
                got = _read(target)
                if got is not None:
                    gatherer.count(target.label, got)
    return gatherer.picture(scan(pools))


def _known(gatherer: Gatherer, unread: Sequence[Unread]) -> list[tuple[Target, bytes]]:
    """The unread files added by their digests; those whose record is not kept, read."""
    out = []
    for target, key, tolerations, hint in unread:
        if gatherer.add_known(target.label, key, tolerations, hint) is None:
            raw = _read(target)
            if raw is not None:
                out.append((target, raw))
    return out


def _read(target: Target) -> bytes | None:
    from gpulint.loader.target import read_target

    return read_target(target)[0]


def dra_objects(found: Read) -> DraFacts | None:
    """The DeviceClasses, ResourceClaims and ResourceClaimTemplates of every file of the
    project (gpulint.k8s.dra), read in a pre-pass so a pod can name a claim, and a claim a
    class, that another file defines; None when no file defines one. Only files that can hold
    one are parsed. Standard input is not pre-read."""
    from gpulint.k8s.dra import project_dra
    from gpulint.loader.decoding import decode

    def texts() -> Iterator[tuple[str, str]]:
        for target, raw in found:
            if b"DeviceClass" not in raw and b"ResourceClaim" not in raw:
                continue  # no DRA object defined: not decoded (the 50 MB dump costs one read)
            text = decode(raw)[0]
            if text is not None:
                yield target.label, text

    facts = project_dra(texts())
    return facts if facts else None


#: The rules that read a container's variables from the run's ConfigMaps.
VALUE_RULES = frozenset({"GPU041"})


def config_maps(found: Read) -> ConfigMaps | None:
    """The ConfigMaps of every file to lint (gpulint.k8s.envvalues), read in a pre-pass so a
    container's ``configMapKeyRef`` or ``envFrom`` can name a ConfigMap another file
    defines; None when no file defines one. Only files that name a ConfigMap are parsed,
    and only when a file references one; a chart or overlay (its rendered output is linted
    as one text, which knows its own ConfigMaps) and standard input are not pre-read."""
    from gpulint.k8s.envvalues import ConfigMaps
    from gpulint.loader.decoding import decode

    maps = ConfigMaps()
    defining: list[tuple[Target, bytes]] = []
    read = False  # a container of the run reads a ConfigMap: else none is parsed
    for target, raw in found:
        if target.render is not None:
            continue
        read = read or b"configMapKeyRef" in raw or b"configMapRef" in raw
        if b"ConfigMap" in raw:
            defining.append((target, raw))
    for target, raw in defining if read else ():
        text = decode(raw)[0]
        if text is not None:
            maps.add_text(target.label, text)
    return maps or None


def assumption(settings: Settings) -> str | None:
    """What GPU020, GPU021, GPU023 and GPU040 assume of the cluster when nothing describes
    it (None: something does), for the text report to say once, on one short line, after an
    assumed finding: what was assumed, and the configuration line that makes it certain.
    Other vendors' taints and the rest are in docs/cluster.md and ``gpulint rule GPU020``."""
    cluster = settings.cluster
    if cluster is not None and (cluster.nodes or cluster.gpu_taints is not None):
        return None
    from gpulint.cluster.evidence import certain_line
    from gpulint.k8s.taints import DEFAULT_TAINTS, Taint

    rows = settings.options.get("GPU020", {}).get("taints", DEFAULT_TAINTS)
    taints = [Taint.from_option(r) for r in rows]
    first = [t for t in taints if t.hardware is None or "nvidia" in t.hardware] or taints
    shown = ", ".join(str(t) for t in first) or "none"
    most = settings.options.get("GPU040", {}).get("max_per_node", 8)
    return (
        f"assumed GPU taint {shown} and {most} GPUs per node; "
        f"`{certain_line(first)}` in .gpulint.yaml makes it certain (docs/cluster.md)"
    )


def device_plugins(settings: Settings, found: Read) -> Registry | None:
    """The run's registry with what its own device plugins are configured to advertise
    (gpulint.cluster.deviceplugins: the NVIDIA plugin's sharing configuration, HAMi's
    resource names, gpushare's unit when GPU017's ``memory_unit`` is not configured), each
    learned entry with where it is said; None when they say nothing. One read of each file;
    only the files that hold a configuration's markers are parsed. Standard input is not
    pre-read."""
    from gpulint.cluster.deviceplugins import learned, scan, wanted
    from gpulint.k8s.devices import builtin_registry

    wants_unit = "memory_unit" not in settings.options.get("GPU017", {})
    units: dict[str, str] = {}
    configs: list[tuple[str, bytes]] = []
    for target, raw in found:
        if wants_unit:
            _gpushare_units(target.label, raw, units)
        if wanted(raw):
            configs.append((target.label, raw))
    gpushare = next(iter(units.items())) if len(units) == 1 else None
    registry = settings.registry or builtin_registry()
    run = learned(registry, scan(configs), gpushare)
    return None if run is registry else run


@functools.cache
def _memory_unit() -> re.Pattern[bytes]:
    """How gpushare's device plugin is told its unit (``--memory-unit=MiB``, or the flag and
    the unit as two list items); compiled on first use. Only blanks and tabs between the
    parts, so no run of white space is scanned more than once (a hostile file stays linear)."""
    return re.compile(
        rb"""--memory-unit(?:=|["']?(?:[ \t]*,[ \t]*|[ \t]*\r?\n[ \t]*-[ \t]*|[ \t]+)["']?)"""
        rb"(MiB|GiB)\b"
    )


def _gpushare_units(label: str, raw: bytes, units: dict[str, str]) -> None:
    """The units a file's gpushare device plugin advertises ``aliyun.com/gpu-mem`` in, each
    with where it says so (``device-plugin-ds.yaml:28``), added to ``units``; nothing for a
    file that does not name the plugin and the flag. A textual scan: the flag's value is
    what the plugin reads. Two plugins that disagree leave GPU017 its default."""
    if b"--memory-unit" not in raw or b"gpushare" not in raw:
        return
    for match in _memory_unit().finditer(raw):
        line = raw.count(b"\n", 0, match.start()) + 1
        units.setdefault(match.group(1).decode(), f"{label}:{line}")
