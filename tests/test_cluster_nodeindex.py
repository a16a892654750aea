"""The described cluster's nodes indexed once per run: a pod is weighed against the nodes
that may take it, with the same verdicts as weighing it against every node, and a cluster
too large to judge a pod within the budget gives an ``info``, never an error.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from hypothesis import given, settings, strategies as st

from gpulint.api import (
    Fewest,
    Node,
    Unjudged,
    feasibility,
    fewest_untolerated,
    fits_somewhere,
    placement,
)
from gpulint.cluster.filters import failures
from gpulint.cluster.model import Cluster
from gpulint.cluster.schedpod import SchedPod
from gpulint.cluster.selectors import parse_terms
from gpulint.k8s.taints import Taint, tolerates
from tests.conftest import gpulint_in_process

KEYS = ("a", "b", "kubernetes.io/hostname")
VALUES = ("x", "y")
TAINTS = (
    Taint("nvidia.com/gpu", "present", "NoSchedule"),
    Taint("dedicated", "ml", "NoSchedule"),
    Taint("spot", "", "NoExecute"),
    Taint("soft", "", "PreferNoSchedule"),
)

nodes_st = st.lists(
    st.builds(
        lambda name, labels, taints, gpus, cordoned, count: Node(
            name,
            labels,
            tuple(taints),
            {"nvidia.com/gpu": Decimal(gpus), "cpu": Decimal(8), "pods": Decimal(110)},
            cordoned,
            count,
        ),
        st.sampled_from(("n1", "n2", "n3", "")),
        st.dictionaries(st.sampled_from(KEYS), st.sampled_from((*VALUES, "n1"))),
        st.lists(st.sampled_from(TAINTS), max_size=3),
        st.integers(0, 2),
        st.booleans(),
        st.integers(1, 3),
    ),
    min_size=1,
    max_size=8,
)
toleration_st = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from(("nvidia.com/gpu", "dedicated", "spot", "")),
        "operator": st.sampled_from(("Exists", "Equal")),
        "value": st.sampled_from(("present", "ml", "")),
        "effect": st.sampled_from(("NoSchedule", "NoExecute", "")),
    },
)
expr_st = st.builds(
    lambda key, op, values: (
        {"key": key, "operator": op, "values": values}
        if op in ("In", "NotIn")
        else {"key": key, "operator": op}
    ),
    st.sampled_from(KEYS),
    st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist")),
    st.lists(st.sampled_from(VALUES), min_size=1, max_size=2),
)
term_st = st.fixed_dictionaries(
    {"matchExpressions": st.lists(expr_st, max_size=2)},
    optional={
        "matchFields": st.just([{"key": "metadata.name", "operator": "In", "values": ["n1"]}])
    },
)
pods_st = st.builds(
    lambda tolerations, name, selector, terms, gpus: SchedPod(
        tuple(tolerations),
        name,
        selector or None,
        parse_terms({"nodeSelectorTerms": terms}) if terms is not None else None,
        {"nvidia.com/gpu": Decimal(gpus)} if gpus else {},
    ),
    st.lists(toleration_st, max_size=3),
    st.one_of(st.none(), st.sampled_from(("n1", "n2"))),
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from((*VALUES, "n1")), max_size=2),
    st.one_of(st.none(), st.lists(term_st, max_size=2)),
    st.integers(0, 2),
)


@settings(max_examples=300, deadline=None)
@given(nodes_st, pods_st)
def test_the_index_judges_as_every_node_would(nodes: list[Node], pod: SchedPod) -> None:
    cluster = Cluster(tuple(nodes))
    every = any(not failures(pod, n) for n in nodes)
    assert fits_somewhere(pod, cluster) is every
    verdict = placement(pod, cluster)
    if every:
        assert verdict is None
    else:
        assert verdict == feasibility(pod, cluster)


@settings(max_examples=300, deadline=None)
@given(nodes_st, st.lists(toleration_st, max_size=3), st.booleans())
def test_the_fewest_untolerated_taints_as_a_walk_of_every_node(
    nodes: list[Node], tolerations: list[dict[str, str]], bound: bool
) -> None:
    cluster = Cluster(tuple(nodes))
    allowed = ("NoExecute",) if bound else ("NoSchedule", "NoExecute")
    best: tuple[list[Taint], Node] | None = None
    offering = [n for n in nodes if n.allocatable["nvidia.com/gpu"] > 0]
    for node in offering:
        left = [
            t
            for t in node.taints
            if t.effect in allowed and not any(tolerates(t2, t) for t2 in tolerations)
        ]
        if not left:
            best = None
            break
        if best is None or len(left) < len(best[0]):
            best = (left, node)
    found = fewest_untolerated(cluster, ["nvidia.com/gpu"], lambda _: True, tolerations, bound)
    if best is None:
        assert found is None
    else:
        assert found == Fewest(best[0], best[1], len(offering) - 1)
    # No name (a DRA claim): any node offering an accelerator.
    assert (
        fewest_untolerated(cluster, None, lambda k: k == "nvidia.com/gpu", tolerations, bound)
        == found
    )


def _inventory(n: int) -> str:
    """n GPU nodes, each of a shape of its own (a label and a taint of its own)."""
    items: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": f"gpu-{i}", "labels": {"example.com/rack": f"r{i}"}},
            "spec": {"taints": [{"key": f"example.com/pool-{i}", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"nvidia.com/gpu": "8", "cpu": "96", "pods": "110"}},
        }
        for i in range(n)
    ]
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items})


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  tolerations:
  - {operator: Exists, effect: NoExecute}  # GPU020 info: too large to judge exactly
  containers:
  - name: main
    image: registry.example/train:1
    resources:
      limits:
        nvidia.com/gpu: 1  # GPU050 info: too large to judge exactly
"""


def test_a_cluster_too_large_to_judge_a_pod_is_info(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "nodes.json").write_text(_inventory(600))
    (tmp_path / "pod.yaml").write_text(POD)
    run = gpulint_in_process(
        "check",
        "--no-cache",
        "--cluster",
        "nodes.json",
        "--format",
        "json",
        "pod.yaml",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    found = {f["rule"]: f for f in json.loads(run.stdout)["findings"]}
    assert found["GPU050"]["severity"] == "info"
    assert (
        "the cluster is too large to judge this pod exactly (600 nodes"
        in (found["GPU050"]["message"])
    )
    assert found["GPU020"]["severity"] == "info"
    assert "too large to judge exactly" in found["GPU020"]["message"]


def test_a_large_cluster_still_judges_a_pod_its_selector_narrows(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "nodes.json").write_text(_inventory(600))
    pod = POD.replace(
        "  - {operator: Exists, effect: NoExecute}  # GPU020 info: too large to judge exactly\n",
        "  - {key: example.com/pool-7, operator: Exists}\n",
    ).replace("spec:\n", "spec:\n  nodeSelector: {example.com/rack: r7}\n", 1)
    (tmp_path / "pod.yaml").write_text(pod)
    run = gpulint_in_process(
        "check",
        "--no-cache",
        "--cluster",
        "nodes.json",
        "--format",
        "json",
        "pod.yaml",
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert [f["rule"] for f in json.loads(run.stdout)["findings"]] == []
    assert isinstance(
        placement(
            SchedPod(requests={"nvidia.com/gpu": Decimal(1)}),
            Cluster(tuple(Node(f"n{i}", {"r": str(i)}, (), {}) for i in range(600))),
        ),
        Unjudged,
    )
