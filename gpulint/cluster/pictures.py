"""The cluster picture as ``gpulint inspect`` shows it (:class:`gpulint.cluster.evidence.Picture`):
text lines, and the JSON of ``schemas/inspect.schema.json``'s ``cluster``, each fact with where
it came from."""

from __future__ import annotations

from typing import Any

from gpulint.cluster.evidence import Evidence, Picture, platform_name
from gpulint.k8s.devices import Registry
from gpulint.k8s.taints import Taint


def picture_lines(picture: Picture) -> list[str]:
    """The picture as ``gpulint inspect`` prints it."""
    out = []
    for known in picture.taints:
        out.append(
            f"GPU node taint {known.shown()}: {known.evidence.what} ({known.evidence.cited()})"
        )
    for disputed in picture.disputed:
        out.append(
            f"no GPU node taint of {disputed.key} agreed on: {disputed.evidence.what} "
            f"({disputed.evidence.cited()})"
        )
    for pool in picture.pools:
        platform = f", {platform_name(pool.platform)}" if pool.platform else ""
        types = f"; {', '.join(pool.instance_types)}" if pool.instance_types else ""
        plural = "s" * (pool.gpus != 1)
        gpus = f"; up to {pool.gpus} GPU{plural} a node" if pool.gpus else "; no GPU known"
        taints = ", ".join(map(str, pool.taints)) or "none"
        out.append(
            f"node pool {pool.shown()} ({pool.api}{platform}) at {pool.source}{types}{gpus}; "
            f"taints: {taints}"
        )
    return out


def picture_json(picture: Picture) -> dict[str, Any]:
    """The picture as ``gpulint inspect --format json`` writes it."""

    def places(evidence: Evidence) -> list[dict[str, Any]]:
        return [{"path": label, "line": line} for label, line in evidence.places]

    def taint(t: Taint) -> dict[str, str]:
        return {"key": t.key, "value": t.value, "effect": t.effect}

    return {
        "gpu_pods": picture.gpu_pods,
        "taints": [
            {
                **taint(k.taint),
                "any_value": k.any_value,
                "what": k.evidence.what,
                "evidence": places(k.evidence),
            }
            for k in picture.taints
        ],
        "node_pools": [
            {
                "api": p.api,
                "what": p.what,
                "name": p.name,
                "source": p.source,
                "platform": p.platform,
                "instance_types": list(p.instance_types),
                "gpus": p.gpus,
                "taints": [taint(t) for t in p.taints],
            }
            for p in picture.pools
        ],
        "queue_tolerations": [dict(t) for t in picture.queue_tolerations],
        "disputed": [
            {"key": d.key, "what": d.evidence.what, "evidence": places(d.evidence)}
            for d in picture.disputed
        ],
    }


def plugin_facts(registry: Registry) -> list[dict[str, Any]]:
    """What the project's device plugins say (:func:`gpulint.cluster.deviceplugins.learned`),
    each fact with its place, as ``gpulint inspect --format json`` writes them: a resource
    name learned (shared, renamed, advertised, a unit), a retired name the deployed release
    no longer advertises, a vendor domain whose names the plugin's configuration says in
    full. Empty when the project has none (configured and built-in names are not facts of
    the project)."""
    out: list[dict[str, Any]] = []
    for name, entry in registry.resources.items():
        if entry.said:
            what = entry.setting or name
            out.append({"resource": name, "what": what, "evidence": _places(entry.said)})
    for name, old in registry.legacy.items():
        if old.deployed:
            image, _, said = old.deployed.rpartition(" at ")
            what = f"not advertised by the release the project deploys ({image})"
            out.append({"resource": name, "what": what, "evidence": _places(said)})
    for domain, said in registry.definitive.items():
        what = f"no {domain} name but those the project's device plugin configuration advertises"
        out.append({"resource": f"{domain}/*", "what": what, "evidence": _places(said)})
    out.sort(key=lambda f: (f["resource"], f["what"]))
    return out


def plugin_lines(facts: list[dict[str, Any]]) -> list[str]:
    """:func:`plugin_facts` as ``gpulint inspect`` prints them."""
    out = []
    for fact in facts:
        where = ", ".join(f"{p['path']}:{p['line']}" for p in fact["evidence"]) or "unplaced"
        out.append(f"device plugin fact {fact['resource']}: {fact['what']} ({where})")
    return out


def _places(said: str) -> list[dict[str, Any]]:
    """``file:line`` as the JSON's evidence places (none when it names no line)."""
    label, _, line = said.rpartition(":")
    return [{"path": label, "line": int(line)}] if label and line.isdigit() and int(line) else []
