"""The NVIDIA device plugin's configuration files written in an object, and what its parser
refuses.

The plugin (NVIDIA/k8s-device-plugin, ``api/config/v1``) reads one configuration file, YAML
turned into JSON (``config.go`` ``parseConfigFrom``: ``sigs.k8s.io/yaml``, so unknown keys
are dropped, not refused), and decodes its ``sharing`` blocks with decoders of their own
(``replicas.go``): a ``timeSlicing`` or ``mps`` block must hold a non-empty ``resources``
list ("no resources specified"), each row a ``name`` ("no resource name specified") and a
whole ``replicas`` of at least 2 ("no replicas specified", "number of replicas must be >=
2", since v0.12.0 of 2022, when configuration files came in); a row's ``devices`` is
``all``, a count above 0 or a list. A ``version`` other than ``v1`` is "unknown version".
A configuration the plugin refuses stops it: the nodes that use it advertise no GPUs.

Configurations are found as the deviceplugins facts find them
(:mod:`gpulint.cluster.deviceplugins`): a mapping with ``version`` and a ``sharing`` block
of ``timeSlicing`` or ``mps``, or such a text (a ConfigMap's ``data``, the plugin chart's
``config.map`` in a HelmRelease's values, a patch's text), read to two texts deep.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from gpulint.model import Path

#: The sharing blocks the plugin decodes (``Sharing``: ``timeSlicing``, ``mps``).
BLOCKS = ("timeSlicing", "mps")
#: How many mappings, lists and strings of an object are looked at, at most.
_NODES = 20_000
#: Texts inside texts read at most this deep (a kustomize patch's ConfigMap data).
_NESTED = 2
#: A text longer than this is not read as a configuration (a configuration is a few lines).
_TEXT_MAX = 64 * 1024


class Refusal(NamedTuple):
    """Why the plugin refuses a configuration, and where.

    ``path`` is in the object's data: the offending key of a configuration written as
    YAML, or the text holding a configuration written as a string; then ``within`` is the
    offending key's (offset, length) in that text, when the text is the string at ``path``
    itself (None for a text inside a text). ``inner`` names the key inside a text.
    ``several``: the configuration is one of several named ones (a ConfigMap of one per
    node label), so only the nodes labelled for it are hurt."""

    path: Path
    detail: str
    within: tuple[int, int] | None
    inner: str
    several: bool
    #: Whether ``path`` is a text holding the configuration (else the offending key).
    in_text: bool = False


def device_plugin_refusals(data: Any) -> Iterator[Refusal]:
    """The refusals of every NVIDIA device plugin configuration in ``data``."""
    yield from _search(data, 0, None)


def _search(data: Any, nested: int, text_at: Path | None) -> Iterator[Refusal]:
    """``text_at``: the path of the outermost text ``data`` was read from (None: ``data`` is
    the object's own)."""
    budget = _NODES
    counted: dict[int, int] = {}  # id of a mapping -> how many configuration texts it holds
    stack: list[tuple[Path, Any, Any]] = [((), data, None)]
    while stack and budget > 0:
        path, value, parent = stack.pop()
        budget -= 1
        if isinstance(value, str):
            if nested < _NESTED and _may_hold(value):
                where = text_at if text_at is not None else path
                several = False
                if isinstance(parent, Mapping):
                    if id(parent) not in counted:
                        counted[id(parent)] = _named_configs(parent)
                    several = counted[id(parent)] > 1
                yield from _text(value, nested + 1, where, several)
            continue
        if isinstance(value, Mapping):
            if is_config(value, root=False):
                for refusal in _config(value, several=False):
                    if text_at is None:
                        yield refusal._replace(path=(*path, *refusal.path))
                    else:
                        yield refusal._replace(path=text_at, in_text=True)
            stack.extend(
                ((*path, k), v, value)
                for k, v in reversed(list(value.items()))
                if isinstance(v, (Mapping, list, str))
            )
        elif isinstance(value, list):
            stack.extend(
                ((*path, i), v, value)
                for i, v in reversed(list(enumerate(value)))
                if isinstance(v, (Mapping, list, str))
            )


def _may_hold(text: str) -> bool:
    """A text that may hold a configuration (only those are parsed)."""
    if len(text) > _TEXT_MAX or "sharing:" not in text:
        return False
    return "timeSlicing:" in text or "mps:" in text


def _named_configs(mapping: Mapping[Any, Any]) -> int:
    """How many values of ``mapping`` are configuration texts (one per node label)."""
    return sum(
        1
        for v in mapping.values()
        if isinstance(v, str) and ("version:" in v or "sharing:" in v or "flags:" in v)
    )


def _text(text: str, nested: int, where: Path, several: bool) -> Iterator[Refusal]:
    from gpulint.loader.inscalar import line_starts
    from gpulint.loader.stream import DocumentStream

    starts: list[int] | None = None
    try:
        docs = list(DocumentStream(text))
    except Exception:  # a text that is not YAML configures nothing here
        return
    for doc in docs:
        data = doc.data
        if isinstance(data, Mapping) and is_config(data, root=True):
            for refusal in _config(data, several):
                inner_path = refusal.path
                within = None
                if nested == 1:
                    span = doc.key_span(inner_path)
                    starts = starts if starts is not None else line_starts(text)
                    if 1 <= span.line <= len(starts):
                        offset = starts[span.line - 1] + span.column - 1
                        within = (offset, len(str(inner_path[-1])) if inner_path else 1)
                yield refusal._replace(path=where, within=within, in_text=True)
        elif nested < _NESTED:
            # A text that holds configurations as text again (a patch of a ConfigMap).
            for found in _search(data, nested, where):
                yield found._replace(path=where, within=None, in_text=True)


def is_config(value: Mapping[Any, Any], *, root: bool) -> bool:
    """A device plugin configuration: a ``sharing`` block of ``timeSlicing`` or ``mps``
    beside a ``version`` (or, at the root of a text, without one)."""
    sharing = value.get("sharing")
    if not isinstance(sharing, Mapping) or not any(b in sharing for b in BLOCKS):
        return False
    return root or isinstance(value.get("version"), str)


def _config(config: Mapping[Any, Any], several: bool) -> Iterator[Refusal]:
    """The refusals of one configuration, each at its path inside the configuration."""

    def refusal(at: Path, detail: str) -> Refusal:
        return Refusal(at, detail, None, ".".join(str(p) for p in at), several)

    version = config.get("version")
    if isinstance(version, str) and version.strip() != "v1" and not _placeholder(version):
        yield refusal(("version",), f"unknown version {version.strip()[:20]}; write version: v1")
        return
    sharing = config["sharing"]
    for block in BLOCKS:
        body = sharing.get(block)
        if not isinstance(body, Mapping):
            continue  # absent, empty or written otherwise: not judged here
        base = ("sharing", block)
        resources = body.get("resources")
        if resources is None or (isinstance(resources, list) and not resources):
            misplaced = [k for k in ("replicas", "name", "devices", "rename") if k in body]
            if misplaced:
                hint = (
                    f"; {misplaced[0]} belongs in a resources row: "
                    "resources: [{name: nvidia.com/gpu, replicas: N}]"
                )
                yield refusal((*base, misplaced[0]), f"no resources specified in {block}{hint}")
            else:
                at = (*base, "resources") if "resources" in body else base
                yield refusal(
                    at,
                    f"no resources specified in {block}; "
                    "add resources: [{name: nvidia.com/gpu, replicas: N}]",
                )
            continue
        if not isinstance(resources, list):
            continue
        for index, row in enumerate(resources):
            if isinstance(row, Mapping):
                yield from (refusal((*base, "resources", index, *p), d) for p, d in _row(row))


def _row(row: Mapping[Any, Any]) -> Iterator[tuple[Path, str]]:
    if any(isinstance(v, str) and _placeholder(v) for v in row.values()):
        return  # filled in before the plugin reads it
    if "name" not in row:
        yield (), "no resource name specified in a resources row; add name: nvidia.com/gpu"
    if "replicas" not in row:
        yield (), "no replicas specified in a resources row; add replicas: N (2 or more)"
    else:
        replicas = row["replicas"]
        if isinstance(replicas, bool) or not isinstance(replicas, (int, str)):
            pass  # a float or a list: rare, and not judged here
        elif isinstance(replicas, str):
            yield (
                ("replicas",),
                f"replicas is the string {replicas.strip()[:20]!s}, not a number; "
                "write it unquoted",
            )
        elif replicas < 2:
            yield (
                ("replicas",),
                f"replicas: {replicas}, and the number of replicas must be >= 2; "
                "leave the GPU out of sharing to keep it whole",
            )
    devices = row.get("devices")
    if isinstance(devices, str) and devices.strip() != "all":
        yield (
            ("devices",),
            f"devices: {devices.strip()[:20]}, and the only word devices takes is all; "
            "write all, a count or a list of GPU indexes or UUIDs",
        )
    elif isinstance(devices, int) and not isinstance(devices, bool) and devices <= 0:
        yield ("devices",), f"devices: {devices}, and a count of devices must be > 0"


def _placeholder(value: str) -> bool:
    return "{{" in value or "${" in value or "$(" in value
