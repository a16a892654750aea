"""The taints a vendor's node agent of the linted files is prepared for: evidence of the
taint that vendor's nodes carry (gpulint.cluster.evidence).

A DaemonSet of ``gpulint/data/agents.json`` with a vendor (the Neuron device plugin, an AMD
exporter) that tolerates its vendor's default taint (:data:`gpulint.k8s.taints.DEFAULT_TAINTS`:
``aws.amazon.com/neuron``) or a taint keyed by one of its vendor's resources
(``huawei.com/Ascend910``) says its nodes may carry that taint. Agents that serve every
vendor (the NFD worker) and other tolerations say nothing of one vendor's nodes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from gpulint.k8s.taints import DEFAULT_TAINTS, Taint

if TYPE_CHECKING:
    from gpulint.k8s.devices import Registry
    from gpulint.k8s.workloads import PodSpec


class AgentTaint(NamedTuple):
    """A toleration of a vendor's node agent, as the taint it tolerates."""

    #: Its index in the pod spec's own tolerations.
    position: int
    #: The taint, limited to the agent's vendor (``hardware``).
    taint: Taint
    #: Tolerated with ``Exists``: the taint's value is unknown.
    any_value: bool
    #: The agent, as messages name it ("AWS Neuron device plugin").
    agent: str


def vendor_keys(hardware: str) -> frozenset[str]:
    """The keys of one vendor's default taints."""
    return frozenset(
        str(row["key"]) for row in DEFAULT_TAINTS if hardware in row.get("hardware", ())
    )


def agent_taints(pod: PodSpec, registry: Registry) -> list[AgentTaint]:
    """The vendor taints a node agent's pod spec tolerates (none for a pod of no vendor's
    agent)."""
    from gpulint.k8s.agents import find_agent

    agent = find_agent(pod)
    if agent is None or agent.hardware is None:
        return []
    keys = vendor_keys(agent.hardware)
    found = []
    for position, toleration in enumerate(pod.own_tolerations):
        if not isinstance(toleration, Mapping):
            continue
        key = toleration.get("key")
        if not isinstance(key, str) or not key:
            continue
        resource = registry.get(key)
        if key not in keys and (resource is None or resource.hardware != agent.hardware):
            continue
        effect = toleration.get("effect") or "NoSchedule"
        operator = toleration.get("operator") or "Equal"
        raw = toleration.get("value")
        if effect not in ("NoSchedule", "NoExecute") or operator not in ("Equal", "Exists"):
            continue  # a preference says nothing; an invalid toleration is GPU022's
        if operator == "Equal" and raw is not None and not isinstance(raw, str):
            continue
        value = (raw or "") if operator == "Equal" else ""
        taint = Taint(key, value, effect, frozenset({agent.hardware}))
        found.append(AgentTaint(position, taint, operator == "Exists", agent.agent))
    return found


#: Places of evidence kept per taint.
_KEPT = 20


class AgentTally:
    """The vendor taints the node agents of a run tolerate, per taint key, with where."""

    __slots__ = ("_rows",)

    def __init__(self) -> None:
        self._rows: dict[str, tuple[AgentTaint, list[tuple[str, int]], list[str]]] = {}

    def add(self, label: str, pod: PodSpec, registry: Registry, doc: Any) -> None:
        """A node agent's pod spec of the file ``label`` (``doc``: its document, for lines)."""
        base = (*pod.path, "tolerations")
        for found in agent_taints(pod, registry):
            self.add_found(label, found, doc.value_span((*base, found.position)).line)

    def add_found(self, label: str, found: AgentTaint, line: int) -> None:
        """One toleration of a node agent, at ``line`` of the file ``label``."""
        _, places, agents = self._rows.setdefault(found.taint.key, (found, [], []))
        places.append((label, line))
        if found.agent not in agents:
            agents.append(found.agent)

    def rows(
        self, known: set[str]
    ) -> Iterator[tuple[Taint, bool, str, tuple[tuple[str, int], ...]]]:
        """``(taint, any value, what, places)`` of each taint whose key is not ``known``
        (which it adds)."""
        for key, (found, places, agents) in self._rows.items():
            if key in known:
                continue
            known.add(key)
            if len(agents) == 1:
                what = f"tolerated by the {agents[0]} DaemonSet of this project"
            else:
                named = ", ".join(agents)
                what = f"tolerated by {len(agents)} node agents of this project ({named})"
            yield found.taint, found.any_value, what, tuple(places[:_KEPT])
