"""The cluster picture as ``gpulint inspect`` shows it (:class:`gpulint.cluster.evidence.Picture`):
text lines, and the JSON of ``schemas/inspect.schema.json``'s ``cluster``, each fact with where
it came from."""

from __future__ import annotations

from typing import Any

from gpulint.cluster.evidence import Evidence, Picture, platform_name
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
