"""The facts of a project's rarer files, for the facts stage (gpulint.lint.gather), so that
every worker process and every file, whatever its order, sees the same facts: the
node-pool objects of a described cluster, the DRA claims and DeviceClasses every file's
pods and claims may name, the ConfigMaps every file's containers may read variables from,
gpushare's unit; and what the text report says was assumed of the cluster. Each reads only
the files its markers say it needs; standard input is never pre-read (it streams).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from gpulint.cluster.model import Cluster
    from gpulint.k8s.crds import CrdFields
    from gpulint.k8s.dra import DraFacts
    from gpulint.k8s.envvalues import ConfigMaps
    from gpulint.k8s.servingruntimes import ServingRuntimes
    from gpulint.loader.document import Parse
    from gpulint.settings import Settings
    from gpulint.util.discover import Target

    #: A project's files, each with its bytes.
    Read = Sequence[tuple[Target, bytes]]


def cluster_objects(
    cluster: Cluster | None,
    found: Read,
    parse: Parse | None = None,
    terraform: Sequence[tuple[str, bytes]] = (),
) -> Cluster | None:
    """``cluster`` with the node-pool objects of a project's files (Karpenter NodePools,
    Kueue ResourceFlavors, ``terraform``'s node groups), read before any file is linted so
    that every worker sees the same cluster (gpulint.cluster.objects). Unreadable files add
    nothing (the lint reports them)."""
    from gpulint.cluster.objects import merged, scan

    files = ((target.label, raw) for target, raw in found)
    return merged(cluster, scan(files, parse, terraform))


#: The rules that judge the GPU nodes' taints, and read the project's cluster picture.
EVIDENCE_RULES = frozenset({"GPU020", "GPU021", "GPU023"})


def dra_objects(found: Read, parse: Parse | None = None) -> DraFacts | None:
    """The DeviceClasses, ResourceClaims and ResourceClaimTemplates of every file of the
    project (gpulint.k8s.dra), read in a pre-pass so a pod can name a claim, and a claim a
    class, that another file defines; None when no file defines one. Only files that can hold
    one are parsed. Standard input is not pre-read."""
    from gpulint.k8s.dra import project_dra

    facts = project_dra(_texts(found, (b"DeviceClass", b"ResourceClaim")), parse)
    return facts if facts else None


def _texts(found: Read, markers: tuple[bytes, ...]) -> Iterator[tuple[str, str]]:
    """The label and text of each file whose bytes name one of ``markers``: the others are
    not decoded (a 50 MB dump without one costs one read)."""
    from gpulint.loader.decoding import decode

    for target, raw in found:
        if any(marker in raw for marker in markers):
            text = decode(raw)[0]
            if text is not None:
                yield target.label, text


def _documents(found: Read, marker: bytes, parse: Parse | None) -> Iterator[object]:
    """The data of every document of the files whose bytes name ``marker``, parsed as the
    facts stage parses them (``parse``: once for the facts and the lint), else here."""
    from gpulint.loader.stream import DocumentStream

    for label, text in _texts(found, (marker,)):
        for doc in DocumentStream(text) if parse is None else parse(label, text):
            yield doc.data


#: What a file's bytes hold when it may define a CustomResourceDefinition.
CRD_MARKER = b"CustomResourceDefinition"


def crd_objects(found: Read, parse: Parse | None = None) -> CrdFields | None:
    """The fields the project's CustomResourceDefinitions declare for their kinds
    (gpulint.k8s.crds), read in a pre-pass so a resource of an operator whose CRD the
    project ships (a chart's ``crds/``) is judged against it from any file; None when no
    file defines one. Only files whose bytes name the kind are parsed."""
    from gpulint.k8s.crds import project_crds

    return project_crds(_documents(found, CRD_MARKER, parse))  # type: ignore[arg-type]


#: What a file's bytes hold when it may define a KServe serving runtime.
RUNTIME_MARKER = b"ServingRuntime"


def serving_runtimes(found: Read, parse: Parse | None = None) -> ServingRuntimes | None:
    """What the project's KServe serving runtimes mount (gpulint.k8s.servingruntimes), read
    in a pre-pass so a predictor that names its runtime is judged with it from any file;
    None when no file defines one. Only files whose bytes name the kind are parsed."""
    from gpulint.k8s.servingruntimes import project_runtimes

    return project_runtimes(_documents(found, RUNTIME_MARKER, parse))


#: The rules that read a container's variables from the project's ConfigMaps.
VALUE_RULES = frozenset({"GPU016", "GPU041", "GPU043"})


#: The bytes of a file that may define a Secret (whose key names an ``envFrom`` reads).
SECRET = b"kind: Secret"


def config_maps(found: Read, parse: Parse | None = None) -> ConfigMaps | None:
    """The ConfigMaps of every file to lint (gpulint.k8s.envvalues), read in a pre-pass so a
    container's ``configMapKeyRef`` or ``envFrom`` can name a ConfigMap another file
    defines (and the key names of Secrets, which a later ``envFrom: secretRef`` may set);
    None when no file defines a ConfigMap. Only files that name a ConfigMap or a Secret are parsed,
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
        if b"ConfigMap" in raw or SECRET in raw:
            defining.append((target, raw))
    for target, raw in defining if read else ():
        text = decode(raw)[0]
        if text is not None:
            maps.add_text(target.label, text, parse)
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


@functools.cache
def _memory_unit() -> re.Pattern[bytes]:
    """How gpushare's device plugin is told its unit (``--memory-unit=MiB``, or the flag and
    the unit as two list items); compiled on first use. Only blanks and tabs between the
    parts, so no run of white space is scanned more than once (a hostile file stays linear)."""
    return re.compile(
        rb"""--memory-unit(?:=|["']?(?:[ \t]*,[ \t]*|[ \t]*\r?\n[ \t]*-[ \t]*|[ \t]+)["']?)"""
        rb"(MiB|GiB)\b"
    )


def gpushare_units(label: str, raw: bytes, units: dict[str, str]) -> None:
    """The units a file's gpushare device plugin advertises ``aliyun.com/gpu-mem`` in, each
    with where it says so (``device-plugin-ds.yaml:28``), added to ``units``; nothing for a
    file that does not name the plugin and the flag. A textual scan: the flag's value is
    what the plugin reads. Two plugins that disagree leave GPU017 its default."""
    if b"--memory-unit" not in raw or b"gpushare" not in raw:
        return
    for match in _memory_unit().finditer(raw):
        line = raw.count(b"\n", 0, match.start()) + 1
        units.setdefault(match.group(1).decode(), f"{label}:{line}")
