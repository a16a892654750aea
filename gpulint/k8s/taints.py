"""Taints and tolerations, matched exactly as Kubernetes does.

The facts: docs/domain.md#taints-and-tolerations.

``k8s.io/api/core/v1/toleration.go`` ``ToleratesTaint``: an empty effect matches every effect;
an empty key matches every key (with ``Exists``, a blanket toleration); ``Exists`` matches any
value; a missing operator means ``Equal``; any other operator tolerates nothing.
"""

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from gpulint.model import Path

#: The taints each accelerator vendor's nodes carry by convention, per vendor (``hardware``,
#: the device registry's): the taints assumed when none is configured. Only vendors that
#: document a node taint have a row (docs/domain.md#taints-and-tolerations):
#:
#: - NVIDIA: ``kubectl taint nodes <gpu-node> nvidia.com/gpu=present:NoSchedule``, GKE's GPU
#:   pools (https://cloud.google.com/kubernetes-engine/docs/how-to/gpus) and NVIDIA's
#:   device plugin manifest, which tolerates ``nvidia.com/gpu``.
#: - AWS Neuron (Inferentia, Trainium): ``aws.amazon.com/neuron=true:NoSchedule``, the taint
#:   the Neuron device plugin manifest tolerates (aws-neuron-sdk
#:   ``src/k8/k8s-neuron-device-plugin.yml``) and Neuron node pools on EKS carry
#:   (https://docs.cast.ai/docs/neuron: Neuron pods need a toleration of
#:   ``aws.amazon.com/neuron=true:NoSchedule``).
#: - Google TPU: GKE taints TPU slice nodes ``google.com/tpu=present:NoSchedule``
#:   (https://cloud.google.com/kubernetes-engine/docs/how-to/tpus).
#:
#: AMD (``rocm/k8s-device-plugin``'s ``k8s-ds-amdgpu-dp.yaml`` tolerates only
#: ``CriticalAddonsOnly``; the AMD GPU Operator docs name no taint), Intel
#: (intel-device-plugins-for-kubernetes' ``gpu_plugin.yaml`` names none), Intel Gaudi (the
#: Habana device plugin docs name none) and Huawei Ascend (whose device plugin tolerates a
#: taint keyed by its resource name, ``huawei.com/Ascend910``: the ExtendedResourceToleration
#: convention, not a fixed node taint) document none: they have no row.
DEFAULT_TAINTS: list[dict[str, Any]] = [
    {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule", "hardware": ["nvidia"]},
    {
        "key": "aws.amazon.com/neuron",
        "value": "true",
        "effect": "NoSchedule",
        "hardware": ["aws-neuron"],
    },
    {
        "key": "google.com/tpu",
        "value": "present",
        "effect": "NoSchedule",
        "hardware": ["google-tpu"],
    },
]

#: Taint keys that say how a node is bought, not what it holds: Spot and preemptible
#: capacity. A GPU pod that tolerates one runs on cheap capacity, a CPU pod too; such a
#: taint is never the GPU nodes' taint, whichever pods tolerate it. Each key is the
#: platform's documented label or taint:
#:
#: - ``kubernetes.azure.com/scalesetpriority`` (AKS Spot node pools are tainted
#:   ``kubernetes.azure.com/scalesetpriority=spot:NoSchedule``,
#:   https://learn.microsoft.com/azure/aks/spot-node-pool);
#: - ``cloud.google.com/gke-spot`` and ``cloud.google.com/gke-preemptible`` (GKE Spot and
#:   preemptible VMs, tainted ``...=true:NoSchedule`` on request,
#:   https://cloud.google.com/kubernetes-engine/docs/concepts/spot-vms and
#:   .../preemptible-vms);
#: - ``eks.amazonaws.com/capacityType`` (the EKS managed node group's ``ON_DEMAND``/``SPOT``
#:   label, https://docs.aws.amazon.com/eks/latest/userguide/managed-node-groups.html);
#: - ``karpenter.sh/capacity-type`` (Karpenter's well-known ``spot``/``on-demand`` label,
#:   https://karpenter.sh/docs/concepts/scheduling/#well-known-labels);
#: - ``eks.amazonaws.com/compute-type`` is not one: it is Fargate's, no capacity choice.
CAPACITY_TAINT_KEYS = frozenset(
    {
        "kubernetes.azure.com/scalesetpriority",
        "cloud.google.com/gke-spot",
        "cloud.google.com/gke-preemptible",
        "eks.amazonaws.com/capacityType",
        "karpenter.sh/capacity-type",
    }
)


#: Names (the key's part after any ``/``, in lower case) that clusters give their own Spot or
#: preemptible taints: ``spot=true``, ``example.com/preemptible``, ``lifecycle=Ec2Spot``.
CAPACITY_TAINT_NAMES = frozenset(
    {"spot", "spot-instance", "spotinstance", "preemptible", "capacity-type", "lifecycle"}
)


def capacity_taint(key: str) -> bool:
    """Whether ``key`` is a Spot or preemptible capacity taint: a provider's
    (:data:`CAPACITY_TAINT_KEYS`) or a cluster's own name for one (:data:`CAPACITY_TAINT_NAMES`)."""
    return key in CAPACITY_TAINT_KEYS or key.rsplit("/", 1)[-1].lower() in CAPACITY_TAINT_NAMES


#: A taint as ``kubectl taint nodes NODE`` writes it: ``key=value:Effect`` or ``key:Effect``
#: (a key is an optional DNS-subdomain prefix and ``/`` and a name; a value is a label value).
TAINT_PATTERN = (
    r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
    r"(=([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?)?:(NoSchedule|PreferNoSchedule|NoExecute)$"
)
#: JSON Schema of one taint: kubectl's string, or a mapping.
TAINT_ITEM: dict[str, Any] = {
    "description": (
        "a taint as kubectl writes it (`key=value:Effect` or `key:Effect`, Effect one of "
        "NoSchedule, PreferNoSchedule, NoExecute) or a mapping with `key`"
    ),
    "anyOf": [
        {
            "type": "string",
            "pattern": TAINT_PATTERN,
            "description": "As kubectl writes it: `key=value:Effect` or `key:Effect`.",
        },
        {
            "type": "object",
            "required": ["key"],
            "additionalProperties": False,
            "properties": {
                "key": {"type": "string", "minLength": 1},
                "value": {"type": "string"},
                "effect": {"enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"]},
                "hardware": {"type": "array", "items": {"type": "string"}},
            },
        },
    ],
}

#: JSON Schema of the ``taints`` option shared by GPU020 and GPU021.
TAINTS_OPTION: dict[str, Any] = {
    "type": "array",
    "description": (
        "The taints on the cluster's GPU nodes, as kubectl writes them "
        "(`nvidia.com/gpu=present:NoSchedule`, `sku=gpu:NoSchedule`) or as mappings. An empty "
        "list turns the toleration rules off (GKE adds the toleration itself). `hardware` (in "
        "a mapping) limits a taint to pods asking for that accelerator vendor's resources "
        "(registry `hardware`); omit it for every accelerator."
    ),
    "items": TAINT_ITEM,
    "default": DEFAULT_TAINTS,
}


class Taint(NamedTuple):
    key: str
    value: str
    effect: str
    hardware: frozenset[str] | None = None

    @classmethod
    def from_option(cls, row: Mapping[str, Any] | str) -> "Taint":
        """A taint of the configuration: a mapping, or kubectl's ``key=value:Effect``."""
        if isinstance(row, str):
            rest, _, effect = row.rpartition(":")
            key, _, value = rest.partition("=")
            return cls(key, value, effect)
        hw = row.get("hardware")
        return cls(
            row["key"],
            row.get("value", ""),
            row.get("effect", "NoSchedule"),
            frozenset(hw) if hw is not None else None,
        )

    def __str__(self) -> str:
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect}"

    def toleration_hint(self) -> str:
        return f"{{key: {self.key}, operator: Exists, effect: {self.effect}}}"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def tolerates(toleration: Any, taint: Taint) -> bool:
    """ToleratesTaint, line for line."""
    if not isinstance(toleration, Mapping):
        return False
    effect = _text(toleration.get("effect"))
    if effect and effect != taint.effect:
        return False
    key = _text(toleration.get("key"))
    if key and key != taint.key:
        return False
    operator = _text(toleration.get("operator"))
    if operator in ("", "Equal"):
        return _text(toleration.get("value")) == taint.value
    return operator == "Exists"


def taints_from_options(options: Mapping[str, Any]) -> list[Taint]:
    rows: Sequence[Mapping[str, Any] | str] = options.get("taints", DEFAULT_TAINTS)
    return [Taint.from_option(r) for r in rows]


def default_taints_assumed(options: Mapping[str, Any]) -> bool:
    """The rule runs with the built-in taint: nobody configured the cluster's own."""
    return bool(options.get("taints", DEFAULT_TAINTS) == DEFAULT_TAINTS)


class NearMiss:
    """A toleration that would tolerate the taint after the changes it lists. (A plain
    class: no caller unpacks or compares one, see docs/architecture.md.)"""

    __slots__ = ("changes", "field", "position", "variant")

    def __init__(
        self, position: int, field: str | None, changes: tuple[str, ...], variant: bool = False
    ) -> None:
        #: Its index in the tolerations list.
        self.position = position
        #: The toleration key to point at (the first thing to change).
        self.field = field
        #: What to write instead, one phrase per change.
        self.changes = changes
        #: It writes the taint's key as the taint does and differs only in the value or the
        #: effect: what another cluster's taint of that key may well be (``nvidia.com/gpu=true``).
        self.variant = variant


def near_miss(tolerations: Sequence[Any], taint: Taint) -> NearMiss | None:
    """The toleration meant for ``taint`` that does not tolerate it, with the fewest changes.

    A toleration is meant for the taint when its key is the taint's (or empty, or the same in
    another case, or one or two edits away). What it gets wrong: the operator's case
    (`exists`), the value under `Equal` (a missing operator is `Equal`, and a missing value is
    `""`), an unknown operator, or the effect.
    """
    best: NearMiss | None = None
    for index, toleration in enumerate(tolerations):
        if not isinstance(toleration, Mapping) or tolerates(toleration, taint):
            continue
        found = _changes(toleration, taint)
        if found is None or (best is not None and len(found) >= len(best.changes)):
            continue
        field = found[0][0]
        variant = all(kind in ("value", "effect", None) for kind, _ in found)
        if field is None:
            field = "key" if "key" in toleration else None
        best = NearMiss(index, field, tuple(text for _, text in found), variant)
    return best


def _keys_close(key: str, other: str) -> bool:
    """Is ``key`` a slip of ``other``? Under the same domain, its name is at most two edits
    away and fewer than half its length (``nvidia.com/gpus``; not ``nautilus.io/bharadia``
    for ``nautilus.io/amraj``, whose shared domain made them look alike); else the whole key
    is close (a misspelt domain, ``nvida.com/gpu``). Keys that differ only in digits are
    numbered apart, not slips (``g6-gpu`` beside ``g5-gpu``: two pools)."""
    if len(key) == len(other) and all(
        a == b or (a.isdigit() and b.isdigit()) for a, b in zip(key, other, strict=True)
    ):
        return False  # numbered apart: another pool's or node's (g5-gpu, g6-gpu), no slip
    domain, slash, name = key.rpartition("/")
    other_domain, other_slash, other_name = other.rpartition("/")
    if slash and other_slash and domain == other_domain:
        from gpulint.util.nearmiss import edits

        apart = edits(name, other_name)
        return apart <= 2 and 2 * apart < max(len(name), len(other_name))
    import difflib  # only for a pod that misses its toleration

    return difflib.SequenceMatcher(None, key, other).ratio() >= 0.8


def _changes(toleration: Mapping[str, Any], taint: Taint) -> list[tuple[str | None, str]] | None:
    changes: list[tuple[str | None, str]] = []
    key = _text(toleration.get("key"))
    if key and key != taint.key:
        if key.lower() != taint.key.lower() and not _keys_close(key, taint.key):
            return None  # a toleration for some other taint
        case = " (taint keys are case-sensitive)" if key.lower() == taint.key.lower() else ""
        changes.append(("key", f"write key: {taint.key}{case}"))
    operator = _text(toleration.get("operator"))
    value = _text(toleration.get("value"))
    exists = f"operator: Exists (and no value) to tolerate any value of {taint.key}"
    if operator == "Exists":
        pass
    elif operator.lower() == "exists":
        changes.append(("operator", "write operator: Exists (operators are case-sensitive)"))
    elif operator in ("", "Equal") or operator.lower() == "equal":
        if value != taint.value and not taint.value:
            # A taint without a value (`kubectl taint nodes n gpu:NoSchedule`).
            changes.append(
                ("value", f"the taint has no value: remove value: {value}, or write {exists}")
            )
        elif value != taint.value:
            shown = f'"{value}"' if value else "empty"
            if "operator" not in toleration:
                what = (
                    f"with no operator the toleration means Equal, and its value is {shown}, "
                    f'not the taint\'s "{taint.value}": add {exists}'
                )
            else:
                what = (
                    f'its value is {shown}, not the taint\'s "{taint.value}": write '
                    f"value: {taint.value}, or {exists}"
                )
            changes.append(("value" if "value" in toleration else None, what))
        if operator not in ("", "Equal"):
            changes.append(("operator", "write operator: Equal (operators are case-sensitive)"))
    else:
        changes.append(
            (
                "operator",
                f"operator {operator or '(not text)'} is neither Exists nor Equal: "
                "write operator: Exists",
            )
        )
    effect = _text(toleration.get("effect"))
    if effect and effect != taint.effect:
        changes.append(
            (
                "effect",
                f"write effect: {taint.effect}, or leave effect out to tolerate every effect",
            )
        )
    return changes


def describe_toleration(toleration: Mapping[str, Any]) -> str:
    """``{key: k, operator: o, value: v, effect: e}`` with the fields it writes as text."""
    parts = [
        f"{name}: {toleration[name]}"
        for name in ("key", "operator", "value", "effect")
        if isinstance(toleration.get(name), str)
    ]
    return "{" + ", ".join(parts) + "}"


class Almost(NamedTuple):
    """A toleration meant for a missing taint that gets something wrong
    (:func:`toleration_near_miss`)."""

    #: What to tell the user: the toleration, and what to change in it.
    advice: str
    #: Where to point: the toleration's first wrong field (the item when it has no key).
    where: tuple[Any, ...]
    #: ``value`` when ``where`` is a field, else ``key``.
    at: str
    #: The toleration differs from the taint only in the value or the effect
    #: (:attr:`NearMiss.variant`): right for a cluster whose taint is written so.
    variant: bool = False


def toleration_near_miss(
    tolerations: Sequence[Any], missing: Sequence[Taint], source: Path | None
) -> Almost | None:
    """The first of the ``missing`` taints a toleration almost tolerates (:func:`near_miss`),
    the toleration found at ``source`` (the path of the pod's tolerations, ``None`` when the
    pod writes none): what GPU020 and GPU023 advise instead of adding a toleration."""
    if source is None:
        return None
    for taint in missing:
        miss = near_miss(tolerations, taint)
        if miss is None:
            continue
        shown = describe_toleration(tolerations[miss.position])
        item = (*source, miss.position)
        return Almost(
            f"the toleration {shown} almost matches: {'; '.join(miss.changes)}",
            (*item, miss.field) if miss.field is not None else item,
            "value" if miss.field is not None else "key",
            miss.variant,
        )
    return None
