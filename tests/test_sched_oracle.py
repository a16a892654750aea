"""kube-scheduler's own table tests, as data, run through gpulint's filters.

Each file of tests/fixtures/sched/ ports the table of one test of kubernetes/kubernetes (the
filter plugins' ``*_test.go`` and component-helpers' ``nodeaffinity_test.go``), each case
naming the Go test function and case it came from. The pod goes through the same path as a
linted manifest (a ``v1 Pod`` document, its pod spec found by the workload table, its
effective request computed by gpulint.k8s.podrequest); the node is a ``cluster.model.Node``. A
case passes when the reasons of the plugin under test are the Go test's, word for word.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpulint.cluster.filters import failures
from gpulint.cluster.model import Node
from gpulint.cluster.schedpod import sched_pod
from gpulint.k8s.manifest import Manifest
from gpulint.k8s.quantity.parse import parse_quantity
from gpulint.k8s.taints import Taint
from gpulint.k8s.workloads import builtin_table
from gpulint.loader.stream import load_text
from tests.conftest import ROOT

FOLDER = ROOT / "tests" / "fixtures" / "sched"


def _load(path: Path) -> dict[str, Any]:
    docs = load_text(path.read_text(encoding="utf-8")).documents
    data = docs[0].data
    assert isinstance(data, dict)
    return data


def _cases() -> list[Any]:
    out = []
    for path in sorted(FOLDER.glob("*.yaml")):
        data = _load(path)
        for case in data["cases"]:
            out.append(pytest.param(data, case, id=f"{path.stem}::{case['test']}::{case['name']}"))
    return out


def _container(i: int, requests: dict[str, Any], section: str) -> dict[str, Any]:
    requests = dict(requests)
    container: dict[str, Any] = {"name": f"{section}-{i}", "image": "registry.k8s.io/pause:3.9"}
    policy = requests.pop("restartPolicy", None)
    if policy is not None:
        container["restartPolicy"] = policy
    if requests:
        container["resources"] = {"requests": requests}
    return container


def _pod_spec(data: dict[str, Any], case: dict[str, Any]) -> dict[str, Any]:
    spec = dict(case["pod"])
    if data["plugin"] == "NodeResourcesFit":  # containers written as their requests
        spec = {
            key: [_container(i, c, key) for i, c in enumerate(value)]
            if key in ("containers", "initContainers")
            else value
            for key, value in spec.items()
        }
    spec.setdefault("containers", [_container(0, {}, "containers")])
    return spec


def _node(data: dict[str, Any], case: dict[str, Any]) -> Node:
    raw = case.get("node", {})
    allocatable = {
        k: parse_quantity(str(v))
        for k, v in case.get("allocatable", data.get("allocatable", {})).items()
    }
    for k, v in case.get("used", {}).items():  # a running pod's requests, taken off
        allocatable[k] = allocatable.get(k, Decimal(0)) - parse_quantity(str(v))
    running = case.get("running_pods", data.get("running_pods", 0))
    if "pods" in allocatable:
        allocatable["pods"] -= running
    return Node(
        name=raw.get("name", ""),
        labels=raw.get("labels", {}),
        taints=tuple(
            Taint(t["key"], t.get("value", ""), t["effect"]) for t in raw.get("taints", [])
        ),
        allocatable=allocatable,
        unschedulable=bool(raw.get("unschedulable", False)),
    )


@pytest.mark.parametrize(("data", "case"), _cases())
def test_scheduler_table_case(data: dict[str, Any], case: dict[str, Any]) -> None:
    pod_doc = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}
    pod_doc["spec"] = _pod_spec(data, case)
    docs = load_text(json.dumps(pod_doc)).documents
    views = list(Manifest.of_documents(docs, builtin_table()))
    pods = views[0].pod_specs(0)
    assert len(pods) == 1
    pod = sched_pod(pods[0])
    assert pod is not None
    node = _node(data, case)
    plugin = data["plugin"]
    got = [
        r for f in failures(pod, node, all_plugins=True) if f.plugin == plugin for r in f.reasons
    ]
    if "match" in case:  # component-helpers: does the required node affinity match?
        assert (not got) is case["match"], got
    else:
        assert got == case["want"]


def test_every_file_names_its_plugin_and_source() -> None:
    files = sorted(FOLDER.glob("*.yaml"))
    assert {_load(p)["plugin"] for p in files} == {
        "NodeUnschedulable",
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
    }
    for path in files:
        head = path.read_text(encoding="utf-8").splitlines()[0]
        assert head.startswith("# kubernetes/kubernetes "), path.name
        for case in _load(path)["cases"]:
            assert case["test"].startswith("Test") and case["name"], (path.name, case)
