"""GKE GPU pod without a valid GKE accelerator node selector.

## What it does
With `platform: gke-autopilot`, flags a pod that requests `nvidia.com/gpu` without a
`cloud.google.com/gke-accelerator` node selector (in `nodeSelector` or a required node
affinity term). A pod that selects a custom ComputeClass (`cloud.google.com/compute-class`
in its node selector or a required affinity term, any class but the built-in
`Accelerator`) is not flagged: the class's own priority rules (`gpu: {type, count}`) name
the GPU, and Autopilot creates the node from them. With `platform: gke` or `gke-autopilot`,
flags a
`cloud.google.com/gke-accelerator` node selector whose value is not a GKE accelerator
(`nvidia-l4`, `nvidia-tesla-t4`, `nvidia-a100-80gb`, ...: the catalog's list), naming the
closest one. Other platforms: silent.

## Why it matters
Autopilot picks the GPU node to create from that selector: a GPU pod without it is not
placed on the GPU type the workload needs. A misspelt value matches no node GKE can create,
and the pod stays `Pending`.

## Example
```yaml
nodeSelector:
  cloud.google.com/gke-accelerator: nvidia-tesla-l4   # GPU054: the value is nvidia-l4
containers:
- resources:
    limits:
      nvidia.com/gpu: 1
```

## Use instead
```yaml
nodeSelector:
  cloud.google.com/gke-accelerator: nvidia-l4
```

## Options
None. The platform is `platform:` / `--platform`, else the one a `--cluster` inventory's node
labels show (`cloud.google.com/gke-nodepool`, ...), which the finding then names.

## References
- https://cloud.google.com/kubernetes-engine/docs/how-to/autopilot-gpus (request GPUs with the
  `cloud.google.com/gke-accelerator` node selector)
- https://cloud.google.com/kubernetes-engine/docs/how-to/gpus (the accelerator values)
- https://cloud.google.com/kubernetes-engine/docs/concepts/about-custom-compute-classes
  (a custom ComputeClass's priority rules choose the GPU type and count; pods select the
  class with `cloud.google.com/compute-class`)
- https://cloud.google.com/kubernetes-engine/docs/how-to/autopilot-gpus (the built-in
  `Accelerator` class still takes the `cloud.google.com/gke-accelerator` selector)
- https://github.com/gpulint/gpulint/blob/main/docs/cluster.md
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from gpulint.api import PodSpec, RuleContext, Violation, gpu_demand

CODE = "GPU054"
NAME = "gke-accelerator-selector"
SEVERITY = "error"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
OPTIONS: dict[str, Any] = {}

LABEL = "cloud.google.com/gke-accelerator"
#: The label a pod selects a ComputeClass with; a custom class names its GPU in its own
#: priority rules. The built-in ``Accelerator`` class does not: its pods still select the
#: GPU type with :data:`LABEL`.
COMPUTE_CLASS = "cloud.google.com/compute-class"
BUILTIN_ACCELERATOR_CLASS = "Accelerator"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    cluster = ctx.cluster
    if cluster is None or cluster.platform not in ("gke", "gke-autopilot") or pod.location != "pod":
        return
    from gpulint.api import builtin_catalog  # GKE only: imported then

    known = builtin_catalog().gke_accelerators
    selector = pod.spec.get("nodeSelector")
    value = selector.get(LABEL) if isinstance(selector, dict) else None
    if value is not None:
        if isinstance(value, str) and value not in known:
            import difflib

            # GKE dropped "tesla-" from the names of newer GPUs (nvidia-l4, nvidia-a100-80gb).
            untesla = value.replace("tesla-", "")
            near = [untesla] if untesla in known else []
            near = near or difflib.get_close_matches(value, list(known), n=1, cutoff=0.5)
            hint = f"; did you mean {near[0]}?" if near else f" (one of: {', '.join(known)})"
            yield Violation(
                (*pod.path, "nodeSelector", LABEL),
                f"{value!r} is not a GKE accelerator{_why(cluster)}: no GPU node carries it, so "
                f"the pod stays Pending{hint}",
                at="value",
                related=_where(cluster),
            )
        return
    if cluster.platform != "gke-autopilot" or _in_affinity(pod.spec, LABEL):
        return
    if _custom_class(pod.spec):
        return  # the ComputeClass's priority rules choose the GPU
    if not any(e.name == "nvidia.com/gpu" for e in gpu_demand(pod, ctx.registry).entries):
        return
    yield Violation(
        (*pod.path, "nodeSelector") if isinstance(selector, dict) else pod.path,
        f"on GKE Autopilot a GPU pod selects its GPU type with the {LABEL} node selector; add "
        f"nodeSelector: {{{LABEL}: nvidia-l4}} (or another of {', '.join(known)})",
    )


def _why(cluster: Any) -> str:
    """Where the platform comes from when no configuration names it: `` (GKE, from the
    inventory's node labels cloud.google.com/gke-nodepool (nodes.yaml:3))``."""
    source = getattr(cluster, "platform_source", "")
    return f" (GKE, from {source})" if source else ""


def _where(cluster: Any) -> tuple[Any, ...]:
    """The inventory node whose labels show GKE, as a ``related`` place of kind evidence."""
    place = getattr(cluster, "platform_place", None)
    if place is None:
        return ()
    from gpulint.api import Evidence

    return Evidence("GKE", (place,)).related("the node labels that show GKE")


def _custom_class(spec: dict[str, Any]) -> bool:
    """The pod selects a ComputeClass other than the built-in ``Accelerator``, by node
    selector or a required affinity term (whose values are not all ``Accelerator``)."""
    selector = spec.get("nodeSelector")
    if isinstance(selector, dict) and COMPUTE_CLASS in selector:
        return bool(selector[COMPUTE_CLASS] != BUILTIN_ACCELERATOR_CLASS)
    return _in_affinity(spec, COMPUTE_CLASS, BUILTIN_ACCELERATOR_CLASS)


def _in_affinity(spec: dict[str, Any], label: str, unless: str | None = None) -> bool:
    """A required node affinity term names the label (with a value other than ``unless``,
    when given)."""
    try:
        terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ]
    except (KeyError, TypeError):
        return False
    if not isinstance(terms, list):
        return False
    for term in terms:
        exprs = term.get("matchExpressions") if isinstance(term, dict) else None
        for expr in exprs if isinstance(exprs, list) else ():
            if not isinstance(expr, dict) or expr.get("key") != label:
                continue
            values = expr.get("values")
            if unless is None or not (isinstance(values, list) and values == [unless]):
                return True
    return False
