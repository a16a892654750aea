"""A node inventory (``--cluster FILE``, ``cluster:``): ``kubectl get nodes -o yaml|json``
(or ``kubectl get nodes,resourceslices -o yaml``: the devices DRA drivers publish on each
node, :mod:`gpulint.cluster.slices`).

What ``kubectl get nodes -o yaml`` (or ``-o json``) prints is a ``v1 List`` whose items are
``Node`` objects; a single ``Node``, a ``NodeList`` and a multi-document YAML stream of
Nodes are read too. Of each node the scheduler's filters need its name, labels, taints,
``spec.unschedulable`` and ``status.allocatable`` (capacity minus what the kubelet reserves:
what kube-scheduler's NodeResourcesFit compares requests with). A node written by hand
without ``status.allocatable`` is read with ``status.capacity`` instead (the kubelet makes
them equal when it reserves nothing); one with neither offers nothing.

The file is the user's own, named on the command line or in the configuration, but it is
still read as untrusted text: a size bound, gpulint's YAML loader (no tags, no alias bombs,
bounded nesting) or Python's JSON decoder, and exact quantity parsing. Anything gpulint cannot
use is an :class:`InventoryError` with one line that names the file and what is wrong;
the commands turn it into exit 2.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping
from decimal import Decimal
from typing import Any

from gpulint import codes
from gpulint.cluster.model import Node
from gpulint.errors import GpulintError
from gpulint.k8s.taints import Taint

#: ``kubectl get nodes -o yaml`` of a 5,000-node cluster, images included, is about 100 MiB.
MAX_INVENTORY_BYTES = 256 << 20

#: Labels naming the node pool a node belongs to, most specific first (GKE, EKS managed node
#: groups, Karpenter, AKS, ACK, OpenShift machine sets, then the instance type).
POOL_LABELS = (
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "alpha.eksctl.io/nodegroup-name",
    "karpenter.sh/nodepool",
    "karpenter.sh/provisioner-name",
    "kubernetes.azure.com/agentpool",
    "agentpool",
    "alibabacloud.com/nodepool-id",
    "machine.openshift.io/cluster-api-machineset",
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
)

_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")


class InventoryError(GpulintError):
    """A node inventory gpulint cannot use; ``str()`` is the one-line message."""


def read_inventory(
    path: str | os.PathLike[str], shown: str | None = None, cache: str | None = None
) -> list[Node]:
    """The nodes of the inventory file at ``path`` (``shown``: its name in messages).

    ``cache``: a folder where the nodes of a large YAML inventory are kept, by the digest
    of its bytes (:data:`CACHE_MIN_BYTES`). Composing YAML costs about 3 s for 1,000 nodes
    as kubectl prints them (JSON: under 0.1 s), and the same inventory is read on every run:
    the second run reads the few fields the filters need from the cache instead. Only
    inventories that were read without error are kept; a cache gpulint cannot use (absent,
    another user's, corrupt) only means reading the file again.
    """
    label = shown if shown is not None else os.fspath(path)
    raw = _read(path, label)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InventoryError(
            f"{label}: not a node inventory: not UTF-8 text (byte {exc.start})"
        ) from None
    if cache is None or len(raw) < CACHE_MIN_BYTES or text.lstrip()[:1] in ("{", "["):
        return nodes_from_text(text, label)
    digest = _digest(raw, label)
    entry = os.path.join(cache, CACHE_FOLDER, f"{digest}.json")
    nodes = _cached(entry)
    if nodes is None:
        nodes = nodes_from_text(text, label)
        _store(cache, entry, nodes)
    return nodes


#: YAML inventories at least this large are cached (a few hundred nodes and more).
CACHE_MIN_BYTES = 256 << 10
#: The cache's folder (under gpulint's cache folder) and how many inventories it keeps.
CACHE_FOLDER = "inventories"
CACHE_KEEP = 16
_CACHE_FORMAT = "gpulint node inventory 2"


def _digest(raw: bytes, label: str) -> str:
    """The bytes, the name shown in messages (node sources name it), gpulint's version and
    this module's size and time (an editable install changes without a new version)."""
    import hashlib

    from gpulint import __version__

    st = os.stat(__file__)
    head = f"{_CACHE_FORMAT}\0{__version__}\0{st.st_size}\0{st.st_mtime_ns}\0{label}\0"
    return hashlib.sha256(head.encode("utf-8", "backslashreplace") + raw).hexdigest()


def _cached(entry: str) -> list[Node] | None:
    from gpulint.cluster.slices import DeviceGroup, Published
    from gpulint.util.cachefile import read_own

    # Only what this user wrote counts: not a file another user could have placed.
    raw = read_own(entry, MAX_INVENTORY_BYTES)
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
        if doc.get("format") != _CACHE_FORMAT:
            return None
        groups = [DeviceGroup(Published(*d) for d in group) for group in doc["groups"]]
        return [
            Node(
                name=row["name"],
                labels=row["labels"],
                taints=tuple(Taint(k, v, e) for k, v, e in row["taints"]),
                allocatable={k: Decimal(v) for k, v in row["allocatable"].items()},
                unschedulable=row["unschedulable"],
                node_count=1,
                pool=row["pool"],
                source=row["source"],
                devices=tuple(groups[g] for g in row["devices"]),
            )
            for row in doc["nodes"]
        ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError, ArithmeticError):
        return None


def _store(cache: str, entry: str, nodes: list[Node]) -> None:
    """Write the entry atomically and keep the newest CACHE_KEEP; silent on failure."""
    from gpulint.util.cachefile import write_atomic

    folder = os.path.dirname(entry)
    # Device groups are shared by the nodes a slice is for: each is written once.
    groups: dict[int, int] = {}
    for n in nodes:
        for group in n.devices:
            groups.setdefault(id(group), len(groups))
    unique = {id(g): g for n in nodes for g in n.devices}
    doc = {
        "format": _CACHE_FORMAT,
        "groups": [[list(d) for d in unique[key]] for key in groups],
        "nodes": [
            {
                "name": n.name,
                "labels": dict(n.labels),
                "taints": [[t.key, t.value, t.effect] for t in n.taints],
                "allocatable": {k: str(v) for k, v in n.allocatable.items()},
                "unschedulable": n.unschedulable,
                "pool": n.pool,
                "source": n.source,
                "devices": [groups[id(g)] for g in n.devices],
            }
            for n in nodes
        ],
    }
    if not write_atomic(folder, entry, doc, ".inventory."):
        return
    try:
        kept = sorted(
            (e for e in os.scandir(folder) if e.name.endswith(".json")),
            key=lambda e: e.stat().st_mtime_ns,
            reverse=True,
        )
        for old in kept[CACHE_KEEP:]:
            os.unlink(old.path)
    except OSError:
        return


def _read(path: str | os.PathLike[str], label: str) -> bytes:
    from gpulint.loader.ownfiles import read_regular

    try:
        raw = read_regular(path, MAX_INVENTORY_BYTES)
    except FileNotFoundError:
        raise InventoryError(f"{label}: no such file (--cluster / cluster:)") from None
    except OSError as exc:
        raise InventoryError(f"{label}: cannot read: {exc.strerror or exc}") from None
    if len(raw) > MAX_INVENTORY_BYTES:
        raise InventoryError(f"{label}: larger than {MAX_INVENTORY_BYTES >> 20} MiB: not read")
    return raw


def nodes_from_text(text: str, label: str) -> list[Node]:
    """The nodes of an inventory's text: JSON when it is JSON, else YAML."""
    stripped = text.lstrip()
    documents: list[tuple[Any, Any]]  # (data, the Document for line numbers, or None)
    if stripped[:1] in ("{", "["):
        try:
            documents = [(json.loads(text), None)]
        except (ValueError, RecursionError):
            documents = _yaml_documents(text, label)  # JSON is YAML; its errors have lines
    else:
        documents = _yaml_documents(text, label)
    nodes: list[Node] = []
    slices: list[Any] = []  # each ResourceSlice device, with the nodes it is for
    for data, doc in documents:
        nodes.extend(_nodes_of(data, doc, label, slices))
    if not nodes:
        raise InventoryError(
            f"{label}: not a node inventory: no Node in it (expected the output of "
            "`kubectl get nodes -o yaml`)"
        )
    if slices:
        from gpulint.cluster.slices import TooManySelectors, attach

        try:
            nodes = attach(nodes, slices)
        except TooManySelectors as exc:
            raise InventoryError(
                f"{label}: {exc}: more than gpulint matches; list the ResourceSlices of "
                "one node each (spec.nodeName), or fewer shared ones"
            ) from None
    return nodes


def _yaml_documents(text: str, label: str) -> list[tuple[Any, Any]]:
    from gpulint.loader.stream import load_text

    result = load_text(text)
    stopped = (codes.SYNTAX_ERROR, codes.TEMPLATE_NOT_RENDERED, codes.EXCESSIVE_ALIASING)
    fatal = [p for p in result.problems if p.code in stopped]
    fatal += [p for d in result.documents for p in d.problems if p.code in stopped]
    if fatal:
        first = fatal[0]
        raise InventoryError(
            f"{label}:{first.span.line}: not a node inventory: not YAML or JSON: {first.message}"
        )
    return [(d.data, d) for d in result.documents if d.data is not None]


def _line(doc: Any, path: tuple[Any, ...]) -> int | None:
    if doc is None:
        return None
    return int(doc.key_span(path).line)


def _nodes_of(data: Any, doc: Any, label: str, slices: list[Any]) -> Iterator[Node]:
    """The Nodes of one document; its ResourceSlices' devices go to ``slices``
    (:mod:`gpulint.cluster.slices`)."""
    from gpulint.cluster.slices import is_slice, slice_devices

    if not isinstance(data, Mapping):
        raise InventoryError(
            f"{label}:{_line(doc, ()) or 1}: not a node inventory: a "
            f"{_type(data)} where a Node or a List of Nodes was expected"
        )
    kind = data.get("kind")
    if kind == "Node":
        yield _node(data, doc, (), label)
        return
    if is_slice(data) or kind == "ResourceSliceList":
        for item in [data] if is_slice(data) else _list(data.get("items")):
            if is_slice(item):
                slices.extend(slice_devices(item))
        return
    if kind in ("List", "NodeList"):
        items = data.get("items")
        if items is None:
            return
        if not isinstance(items, list):
            raise InventoryError(
                f"{label}:{_line(doc, ('items',)) or 1}: not a node inventory: items is a "
                f"{_type(items)}, not a list"
            )
        for index, item in enumerate(items):
            item_kind = item.get("kind") if isinstance(item, Mapping) else None
            if isinstance(item, Mapping) and (
                item_kind == "Node" or (item_kind is None and kind == "NodeList")
            ):
                yield _node(item, doc, ("items", index), label)
                continue
            if is_slice(item):
                slices.extend(slice_devices(item))
                continue
            what = f"a {item_kind}" if isinstance(item_kind, str) else f"a {_type(item)}"
            raise InventoryError(
                f"{label}:{_line(doc, ('items', index)) or 1}: not a node inventory: item "
                f"{index} is {what}, not a Node"
            )
        return
    shown = kind if isinstance(kind, str) else "an object without a kind"
    raise InventoryError(
        f"{label}:{_line(doc, ()) or 1}: not a node inventory: {shown} is not a Node or a "
        "List of Nodes (expected the output of `kubectl get nodes -o yaml`)"
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _type(value: Any) -> str:
    if isinstance(value, Mapping):
        return "mapping"
    if isinstance(value, list):
        return "list"
    if value is None:
        return "null"
    return "scalar"


def _node(data: Mapping[str, Any], doc: Any, path: tuple[Any, ...], label: str) -> Node:
    def where(*sub: Any) -> str:
        line = _line(doc, (*path, *sub))
        return f"{label}:{line}" if line is not None else label

    meta = data.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        item = f"item {path[1]}" if path else "the Node"
        raise InventoryError(f"{where('metadata')}: {item} has no metadata.name")
    labels = _labels(meta.get("labels"), where("metadata", "labels"), name)
    spec = data.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    taints = tuple(_taints(spec.get("taints"), where("spec", "taints"), name))
    unschedulable = spec.get("unschedulable")
    if unschedulable is not None and not isinstance(unschedulable, bool):
        raise InventoryError(
            f"{where('spec', 'unschedulable')}: node {name}: spec.unschedulable is not a boolean"
        )
    status = data.get("status")
    status = status if isinstance(status, Mapping) else {}
    section = "allocatable" if isinstance(status.get("allocatable"), Mapping) else "capacity"
    allocatable = _quantities(
        status.get(section), where("status", section), name, f"status.{section}"
    )
    pool = next((labels[k] for k in POOL_LABELS if labels.get(k)), None)
    return Node(
        name=name,
        labels=labels,
        taints=taints,
        allocatable=allocatable,
        unschedulable=bool(unschedulable),
        node_count=1,
        pool=pool,
        source=where(),
    )


def _labels(raw: Any, where: str, name: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InventoryError(f"{where}: node {name}: metadata.labels is not a mapping")
    out: dict[str, str] = {}
    for key, value in raw.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise InventoryError(
                f"{where}: node {name}: label {key!s} has a value that is not a string "
                "(quote it as kubectl does)"
            )
        out[key] = value
    return out


def _taints(raw: Any, where: str, name: str) -> Iterable[Taint]:
    if raw is None:
        return
    if not isinstance(raw, list):
        raise InventoryError(f"{where}: node {name}: spec.taints is not a list")
    for index, row in enumerate(raw):
        if not isinstance(row, Mapping) or not isinstance(row.get("key"), str):
            raise InventoryError(f"{where}: node {name}: taint {index} has no key")
        value = row.get("value", "")
        effect = row.get("effect")
        if not isinstance(value, str) or effect not in _TAINT_EFFECTS:
            raise InventoryError(
                f"{where}: node {name}: taint {row['key']} needs a string value and an effect "
                f"of {', '.join(_TAINT_EFFECTS)}"
            )
        yield Taint(row["key"], value, effect)


def _quantities(raw: Any, where: str, name: str, field: str) -> dict[str, Decimal]:
    from gpulint.k8s.quantity.parse import QuantityError, parse_quantity

    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise InventoryError(f"{where}: node {name}: {field} is not a mapping")
    out: dict[str, Decimal] = {}
    for resource, value in raw.items():
        text = value if isinstance(value, str) else None
        if isinstance(value, int) and not isinstance(value, bool):
            text = str(value)
        try:
            if text is None:
                raise QuantityError("not a string")
            out[str(resource)] = parse_quantity(text)
        except QuantityError as exc:
            raise InventoryError(
                f"{where}: node {name}: {field}.{resource}: {value!r} is not a quantity ({exc})"
            ) from None
    return out
