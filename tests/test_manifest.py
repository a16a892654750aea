"""The per-file view: each document's objects walked once, each object's pod specs found once.

The walker (``objects``) and ``WorkloadTable.pod_specs`` are wrapped with counters wherever
gpulint imports them; a lint of a file with directives (stale ones too), annotations, YAML
problems and every built-in rule, and an inspect of it, must walk each document once and
find each object's pod specs once.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import gpulint.k8s.dra
import gpulint.k8s.manifest
import gpulint.k8s.objects
import gpulint.k8s.workloads
from gpulint.commands.inspect import Inspector
from gpulint.k8s.devices import builtin_registry
from gpulint.k8s.manifest import DocumentView, Manifest
from gpulint.k8s.resources import gpu_demand
from gpulint.k8s.workloads import K8sObject, PodSpec, WorkloadTable, builtin_table
from gpulint.lint.declarative import load_declarative
from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.loader.document import Document
from gpulint.model import ObjectRef

TEXT = """\
# gpulint: disable-file=GPU099 -- names no rule that fires: stale
apiVersion: v1
kind: List
items:
  - apiVersion: apps/v1
    kind: Deployment
    metadata:
      name: trainer
      annotations:
        gpulint.io/ignore: GPU003
        gpulint.io/ignore-reson: typo
    spec:
      template:
        metadata:
          annotations:
            gpulint.io/ignore: GPU020
        spec:
          containers:
            - name: train
              image: trainer:1.0
              resources:
                limits:
                  nvidia.com/gpu: 1  # gpulint: disable=GPU001
                requests:
                  nvidia.com/gpu: 1
  - apiVersion: batch/v1
    kind: Job
    metadata:
      name: eval
    spec:
      template:
        spec:
          # gpulint: disable-next-line=GPU004
          containers:
            - name: eval
              image: eval:1.0
              resources:
                limits:
                  nvidia.com/gpu: 1.5
---
apiVersion: v1
kind: Pod
metadata:
  name: single
  labels: {a: 1, a: 2}
spec:
  containers:
    - name: main
      image: main:1.0
      resources:
        limits:
          nvidia.com/gpu: 2  # gpulint: disable-next-line
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  key: value
"""


class Counts:
    def __init__(self) -> None:
        self.walks: Counter[int] = Counter()  # per document index
        self.pods: Counter[tuple[int, tuple[Any, ...]]] = Counter()  # per object


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counts:
    found = Counts()
    walker = gpulint.k8s.objects.objects

    def counting_objects(doc: Document) -> Iterator[K8sObject]:
        found.walks[doc.index] += 1
        return walker(doc)

    k8s = gpulint.k8s
    for module in (k8s.objects, k8s.workloads, k8s.dra, k8s.manifest):
        monkeypatch.setattr(module, "objects", counting_objects)
    pod_specs = WorkloadTable.pod_specs

    def counting_pod_specs(self: WorkloadTable, obj: K8sObject) -> list[PodSpec]:
        found.pods[(obj.doc.index, obj.path)] += 1
        return pod_specs(self, obj)

    monkeypatch.setattr(WorkloadTable, "pod_specs", counting_pod_specs)
    return found


def test_a_lint_walks_each_document_once(counts: Counts) -> None:
    findings = Linter(load_rules()).lint_text("manifest.yaml", TEXT)
    codes = {f.rule for f in findings}
    assert {"GL100", "GPU004"} <= codes  # directives, annotations and rules all ran
    assert any(f.suppression is not None for f in findings)
    assert counts.walks == Counter({0: 1, 1: 1, 2: 1})
    assert counts.pods and set(counts.pods.values()) == {1}
    assert len(counts.pods) == 4  # Deployment, Job, Pod, ConfigMap


def test_inspect_walks_each_document_once(counts: Counts) -> None:
    entry = Inspector().inspect_text("manifest.yaml", TEXT)
    assert len(entry["workloads"]) == 3
    assert counts.walks == Counter({0: 1, 1: 1, 2: 1})
    assert set(counts.pods.values()) == {1}


def test_a_dra_file_adds_only_the_claim_pass(counts: Counts) -> None:
    """The claim index is read in its own first pass (documents are dropped as they are
    linted), so a file that can hold DRA objects is walked twice: once for claims, once
    by the view."""
    text = (
        TEXT.replace("kind: ConfigMap", "kind: ResourceClaim")
        .replace(
            "apiVersion: v1\nkind: ResourceClaim",
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim",
        )
        .replace(
            "spec:\n  containers:",
            "spec:\n  resourceClaims: [{name: g, resourceClaimName: settings}]\n  containers:",
        )
    )
    Linter(load_rules()).lint_text("manifest.yaml", text)
    assert counts.walks == Counter({0: 2, 1: 2, 2: 2})
    assert set(counts.pods.values()) == {1}


def test_owner_and_owners_at_lines() -> None:
    (view,) = [
        v
        for v in Manifest("m.yaml", TEXT, builtin_table()).views()
        if v.index == 0  # the List
    ]
    trainer = ObjectRef("apps/v1", "Deployment", None, "trainer")
    path = ("items", 0, "spec", "template", "spec", "containers", 0)
    assert view.owner(path) == trainer
    assert view.owner(("items",)) is None  # a List is not an object: its items are
    # lines 1 (the comment before the document) and 70 (another document) are left out
    assert view.owners_at_lines([1, 20, 70]) == {20: trainer}
    assert [o.ref.name for o in view.objects] == ["trainer", "eval"]


def test_a_view_of_one_document_finds_its_own_claims() -> None:
    text = """\
apiVersion: v1
kind: List
items:
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: gpu}
    spec:
      devices:
        requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com}}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      resourceClaims: [{name: g, resourceClaimName: gpu}]
      containers: [{name: c, image: "c:1"}]
"""
    (view,) = Manifest.of_documents(
        [v.doc for v in Manifest("m.yaml", text, builtin_table()).views()], builtin_table()
    )
    alone = DocumentView(view.doc, builtin_table())
    for candidate in (view, alone):
        pod = candidate.pod_specs(1)[0]
        assert candidate.claims.claim("ResourceClaim", "gpu", None) is not None
        # The claims are the view's, handed to whoever asks: objects carry no file state.
        assert gpu_demand(pod, builtin_registry(), candidate.claims).gpu
        assert not gpu_demand(pod, builtin_registry()).gpu
        assert not hasattr(pod.obj, "stream")


def test_a_declarative_object_rule_reuses_the_pod_specs(counts: Counts, tmp_path: Path) -> None:
    """`when: {gpu: ...}` on an object needs its pod specs: the view's, not a second search."""
    rule = tmp_path / "TOBJ1.yaml"
    rule.write_text(
        "code: TOBJ1\nname: t-object-gpu\ntarget: object\n"
        "when: {gpu: true, kinds: [Pod]}\nmessage: matched\n"
        "schema: {required: [never-there]}\n",
        encoding="utf-8",
    )
    findings = Linter([*load_rules(), load_declarative(rule)]).lint_text("m.yaml", TEXT)
    assert "TOBJ1" in {f.rule for f in findings}  # the Pod asks for GPUs
    assert counts.walks == Counter({0: 1, 1: 1, 2: 1})
    assert set(counts.pods.values()) == {1}


def test_the_view_leaves_no_reference_cycle() -> None:
    """A document's nodes and data go when its view does, not when the garbage collector
    runs: the view, its objects, pod specs and claim index hold no cycle."""
    linter = Linter(load_rules())
    dra = TEXT.replace("kind: ConfigMap", "kind: ResourceClaim").replace(
        "apiVersion: v1\nkind: ResourceClaim", "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim"
    )
    linter.lint_text("m.yaml", TEXT)  # imports and caches warmed up
    Inspector().inspect_text("m.yaml", TEXT)
    gc.collect()
    gc.disable()
    try:
        for text in (TEXT, dra):
            linter.lint_text("m.yaml", text)
            Inspector().inspect_text("m.yaml", text)
            for view in Manifest("m.yaml", text, builtin_table()).views():
                linter.lint_view("m.yaml", view)
            del view
            assert gc.collect() == 0
    finally:
        gc.enable()
