"""Where pod specs are found: the workload table, its pattern semantics and row validation.

The fixtures under tests/fixtures/workloads/ are hand-written manifests of every supported
kind, shaped after each operator's API types; a ``# pod: a, b`` comment marks the line where a
pod spec must be found and names its containers (``?`` for an unnamed one), and
``# pod(container): ...`` / ``# pod(resources): ...`` mark pod-less containers and bare
ResourceRequirements.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from gpulint.k8s.workloads import (
    LOCATIONS,
    PodSpec,
    WorkloadKind,
    WorkloadRowError,
    WorkloadTable,
    builtin_table,
    expand,
    objects,
    parse_pattern,
    parse_row,
    validate_row,
)
from gpulint.loader.stream import load_text
from tests.conftest import FIXTURES, ROOT

WORKLOAD_FIXTURES = sorted((FIXTURES / "workloads").glob("*.yaml"))
_POD = re.compile(r"#\s*pod(?:\((?P<loc>\w+)\))?:\s*(?P<names>.*?)\s*$")


def _expected(text: str) -> set[tuple[int, str, tuple[str, ...]]]:
    out = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = _POD.search(line)
        if match:
            names = tuple(sorted(n.strip() for n in match.group("names").split(",") if n.strip()))
            out.add((number, match.group("loc") or "pod", names))
    return out


def _found(text: str, table: WorkloadTable) -> tuple[set[tuple[int, str, tuple[str, ...]]], set]:
    got = set()
    kinds = set()
    for doc in load_text(text).documents:
        for obj in objects(doc):
            for pod in table.pod_specs(obj):
                kinds.add((pod.obj.group, pod.obj.kind))
                kinds.add((pod.obj.root.group, pod.obj.root.kind))
                line = doc.key_span(pod.path).line
                names = tuple(sorted(c.name or "?" for c in pod.containers))
                got.add((line, pod.location, names))
    return got, kinds


@pytest.mark.parametrize("path", WORKLOAD_FIXTURES, ids=[p.name for p in WORKLOAD_FIXTURES])
def test_pod_specs_found_where_the_api_types_put_them(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    got, _ = _found(text, builtin_table())
    want = _expected(text)
    assert got == want, f"unexpected: {sorted(got - want)}\nmissing: {sorted(want - got)}"


def test_every_builtin_row_is_exercised_by_a_fixture() -> None:
    covered: set[tuple[str, str]] = set()
    for path in WORKLOAD_FIXTURES:
        _, kinds = _found(path.read_text(encoding="utf-8"), builtin_table())
        covered |= kinds
    rows = {(r.group, r.kind) for r in builtin_table().rows()}
    assert rows - covered == set(), f"rows without a fixture: {sorted(rows - covered)}"


def test_builtin_table_matches_its_schema() -> None:
    schema = json.loads((ROOT / "schemas" / "workloads.schema.json").read_text())
    data = json.loads((ROOT / "gpulint" / "data" / "workloads.json").read_text())
    Draft202012Validator.check_schema(schema)
    errors = list(Draft202012Validator(schema).iter_errors(data))
    assert not errors, [e.message for e in errors]
    for row in data["workloads"]:
        assert validate_row(row) == [], row


def test_group_and_kind_are_both_matched() -> None:
    table = builtin_table()
    assert table.lookup("batch.volcano.sh", "Job") is not None
    assert table.lookup("batch", "Job") is not None
    volcano = table.lookup("batch.volcano.sh", "Job")
    batch = table.lookup("batch", "Job")
    assert volcano is not None and batch is not None
    assert volcano.pods != batch.pods
    assert table.lookup("example.com", "Job") is None


# -- pattern semantics ------------------------------------------------------------------------


def test_star_matches_list_items_and_map_values() -> None:
    data = {"spec": {"a": [{"x": 1}, {"x": 2}], "m": {"A": {"x": 3}, "B": {"x": 4}}}}
    assert list(expand(data, parse_pattern("spec.a.*.x"))) == [
        (("spec", "a", 0, "x"), 1),
        (("spec", "a", 1, "x"), 2),
    ]
    assert list(expand(data, parse_pattern("spec.m.*.x"))) == [
        (("spec", "m", "A", "x"), 3),
        (("spec", "m", "B", "x"), 4),
    ]


def test_a_number_selects_one_list_item_or_a_numeric_key() -> None:
    data = {"spec": {"a": [{"x": 1}, {"x": 2}], "m": {"0": {"x": 9}}}}
    assert list(expand(data, parse_pattern("spec.a.1.x"))) == [(("spec", "a", 1, "x"), 2)]
    assert list(expand(data, parse_pattern("spec.a.5.x"))) == []
    assert list(expand(data, parse_pattern("spec.m.0.x"))) == [(("spec", "m", "0", "x"), 9)]


def test_a_pattern_that_does_not_match_is_not_an_error() -> None:
    assert list(expand({"spec": "text"}, parse_pattern("spec.template.spec"))) == []
    assert list(expand({"spec": [1, 2]}, parse_pattern("spec.*.spec"))) == []


def _pods(text: str, table: WorkloadTable) -> list[PodSpec]:
    out: list[PodSpec] = []
    for doc in load_text(text).documents:
        for obj in objects(doc):
            out.extend(table.pod_specs(obj))
    return out


def test_a_user_row_adds_an_operator_without_code() -> None:
    row = parse_row(
        {
            "group": "example.com",
            "kind": "GPUJob",
            "pods": ["spec.roles.*.template.spec"],
            "containers": ["spec.sidecar"],
        },
        origin=".gpulint.yaml",
    )
    table = builtin_table().extended([row])
    text = """
apiVersion: example.com/v1
kind: GPUJob
metadata: {name: x}
spec:
  sidecar: {name: helper, image: busybox}
  roles:
    trainer:
      template:
        spec:
          containers: [{name: main, image: cuda}]
"""
    pods = _pods(text, table)
    assert [(p.path, p.location) for p in pods] == [
        (("spec", "roles", "trainer", "template", "spec"), "pod"),
        (("spec", "sidecar"), "container"),
    ]
    assert table.lookup("example.com", "GPUJob") is row
    assert row.origin == ".gpulint.yaml"


def test_a_user_row_replaces_the_builtin_row_of_the_same_kind() -> None:
    row = parse_row({"group": "ray.io", "kind": "RayCluster", "pods": ["spec.custom.spec"]})
    table = builtin_table().extended([row])
    assert table.lookup("ray.io", "RayCluster") is row
    assert builtin_table().lookup("ray.io", "RayCluster") is not row


def test_argo_templates_take_workflow_tolerations_when_they_have_none() -> None:
    text = (FIXTURES / "workloads" / "argo.yaml").read_text()
    pods = _pods(text, builtin_table())
    train = next(p for p in pods if p.spec.get("name") == "train" and p.obj.kind == "Workflow")
    assert train.own_tolerations == []
    assert train.tolerations == [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
    ]
    assert train.tolerations_path == ("spec", "tolerations")
    cron = next(p for p in pods if p.obj.kind == "CronWorkflow")
    assert cron.tolerations == [] and cron.tolerations_path is None


def test_template_defaults_win_over_workflow_tolerations() -> None:
    text = """
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {name: w}
spec:
  tolerations: [{key: a, operator: Exists}]
  templateDefaults:
    tolerations: [{key: b, operator: Exists}]
  templates:
  - name: own
    tolerations: [{key: c, operator: Exists}]
    container: {image: x}
  - name: inherited
    container: {image: x}
"""
    own, inherited = _pods(text, builtin_table())
    assert own.tolerations == [{"key": "c", "operator": "Exists"}]
    assert inherited.tolerations == [{"key": "b", "operator": "Exists"}]
    assert inherited.tolerations_path == ("spec", "templateDefaults", "tolerations")


def test_embedded_objects_are_found_by_their_own_kind() -> None:
    text = (FIXTURES / "workloads" / "kubeflow.yaml").read_text()
    pods = _pods(text, builtin_table())
    nested = [p for p in pods if p.obj.parent is not None]
    assert {(p.obj.group, p.obj.kind, p.obj.root.kind) for p in nested} == {
        ("batch", "Job", "Experiment"),
        ("kubeflow.org", "PyTorchJob", "Experiment"),
        ("batch", "Job", "Trial"),
    }


def test_embedded_objects_do_not_recurse_forever() -> None:
    row = parse_row({"group": "example.com", "kind": "Box", "objects": ["spec.inner"]})
    table = builtin_table().extended([row])
    inner: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "spec": {"containers": [{"name": "c"}]},
    }
    for _ in range(20):
        inner = {"apiVersion": "example.com/v1", "kind": "Box", "spec": {"inner": inner}}
    text = json.dumps(inner)
    assert _pods(text, table) == []


def test_bare_resource_requirements_keep_their_real_path() -> None:
    text = (FIXTURES / "workloads" / "kubeflow.yaml").read_text()
    pod = next(p for p in _pods(text, builtin_table()) if p.location == "resources")
    (container,) = pod.containers
    assert container.resources_path == ("spec", "trainer", "resourcesPerNode")
    assert container.resources == {"limits": {"nvidia.com/gpu": 4}}


# -- row validation ---------------------------------------------------------------------------

VALID = {"group": "example.com", "kind": "GPUJob", "pods": ["spec.template.spec"]}


@pytest.mark.parametrize(
    ("row", "fragment"),
    [
        ("not a row", "must be a mapping"),
        ({"kind": "GPUJob", "pods": ["spec"]}, "group: required"),
        ({"group": "example.com/v1", "kind": "GPUJob", "pods": ["spec"]}, "write the API group"),
        ({"group": "v1", "kind": "Pod", "pods": ["spec"]}, "the core API group is ''"),
        ({"group": "x.io", "pods": ["spec"]}, "kind: required"),
        ({"group": "x.io", "kind": "", "pods": ["spec"]}, "kind: must be a non-empty string"),
        ({"group": "x.io", "kind": "GPUJob"}, "names no location"),
        ({"group": "x.io", "kind": "GPUJob", "pods": []}, "names no location"),
        ({**VALID, "pod": ["spec"]}, "did you mean 'pods'?"),
        ({**VALID, "pods": "spec.template.spec"}, "must be a list of path patterns"),
        ({**VALID, "pods": ["spec.tasks[].template.spec"]}, "'spec.tasks.*.template.spec'"),
        ({**VALID, "pods": ["spec.tasks[0].template.spec"]}, "'spec.tasks.0.template.spec'"),
        ({**VALID, "pods": ["$.spec.template.spec"]}, "without '$' or '.'"),
        ({**VALID, "pods": ["spec..template"]}, "empty segment"),
        ({**VALID, "pods": ["spec.template.spec."]}, "empty segment"),
        ({**VALID, "pods": ["spec.**.spec"]}, "'**' is not supported"),
        ({**VALID, "pods": ["spec.temp late"]}, "whitespace"),
        ({**VALID, "pods": ["spec.a/b"]}, "segment 'a/b' is not a key"),
        ({**VALID, "pods": [3]}, "must be a dotted path string"),
        ({**VALID, "pods": ["spec.template.spec.containers"]}, "names a container list"),
        ({**VALID, "containers": ["spec.sidecars"]}, "add '.*' to match each one"),
        ({**VALID, "resources": ["spec.trainer.res.limits"]}, "'spec.trainer.res'"),
        ({**VALID, "pod_defaults": {"nodeSelector": ["spec.x"]}}, "unsupported field"),
        ({**VALID, "pod_defaults": {"tolerations": []}}, "non-empty list"),
        ({**VALID, "pod_defaults": ["spec.tolerations"]}, "pod_defaults: must be a mapping"),
        ({**VALID, "node_agent": "yes"}, "node_agent: must be true or false"),
        ({**VALID, "mounts_shm": "yes"}, "mounts_shm: must be true or false"),
        ({**VALID, "container_pod": "spec.template[0].spec"}, "container_pod: 'spec.template[0]"),
        ({**VALID, "container_pod": 3}, "container_pod: must be a dotted path string"),
        ({**VALID, "core_pods": ["spec.worker"]}, "core_pods[0]: 'spec.worker' is not one of"),
        ({**VALID, "core_pods": "spec.template.spec"}, "core_pods: must be a list"),
        ({**VALID, "operator_gpus": {"at": "spec"}}, "operator_gpus: must be a list"),
        ({**VALID, "operator_gpus": [{"at": "spec"}]}, "operator_gpus[0].amount: required"),
        (
            {**VALID, "operator_gpus": [{"at": "spec[0]", "amount": "gpu", "resource": "x/y"}]},
            "operator_gpus[0].at:",
        ),
        (
            {
                **VALID,
                "operator_gpus": [
                    {"at": "spec", "amount": "gpus", "resource": "r", "resource_values": {"a": "b"}}
                ],
            },
            "resource_values: needs resource_field",
        ),
        (
            {
                **VALID,
                "operator_gpus": [
                    {"at": "spec", "amount": "gpus", "resource": "r", "every_container": "yes"}
                ],
            },
            "every_container: must be true or false",
        ),
    ],
)
def test_a_wrong_row_is_a_clear_error(row: Any, fragment: str) -> None:
    messages = validate_row(row)
    assert any(fragment in m for m in messages), messages
    with pytest.raises(WorkloadRowError) as info:
        parse_row(row)
    assert info.value.messages == messages
    assert fragment in str(info.value)


@pytest.mark.parametrize(
    "row",
    [
        VALID,
        {"group": "", "kind": "Pod", "pods": ["spec"]},
        {"group": "x.io", "kind": "A", "containers": ["spec.tasks.0.main"]},
        {"group": "x.io", "kind": "A", "resources": ["spec.trainer.resourcesPerNode"]},
        {"group": "x.io", "kind": "A", "objects": ["spec.items.*"], "source": "docs"},
        {
            "group": "x.io",
            "kind": "A",
            "pods": ["spec.steps.*"],
            "pod_defaults": {"tolerations": ["spec.tolerations"]},
            "require_containers": True,
            "node_agent": False,
        },
        {
            "group": "x.io",
            "kind": "A",
            "pods": ["spec.services.*.podSpec"],
            "operator_gpus": [
                {"at": "spec.services.*", "amount": "gpus", "resource": "nvidia.com/gpu"}
            ],
        },
    ],
)
def test_valid_rows_pass(row: dict[str, Any]) -> None:
    assert validate_row(row) == []
    assert isinstance(parse_row(row), WorkloadKind)


def test_schema_and_validator_agree() -> None:
    """Every row the JSON Schema rejects, validate_row rejects too (and the reverse)."""
    schema = json.loads((ROOT / "schemas" / "workloads.schema.json").read_text())
    validator = Draft202012Validator(schema)
    rows: list[Any] = [
        VALID,
        {"group": "x.io", "kind": "A", "objects": ["spec.x"]},
        {"group": "x.io", "kind": "A"},
        {"group": "x.io/v1", "kind": "A", "pods": ["spec"]},
        {"group": "x.io", "kind": "A", "pods": ["spec..x"]},
        {"group": "x.io", "kind": "A", "pods": ["spec[0]"]},
        {"group": "x.io", "kind": "A", "pods": ["spec"], "extra": 1},
        {"group": "x.io", "kind": "A", "pods": ["spec"], "pod_defaults": {"affinity": ["a"]}},
        {"group": "x.io", "kind": "A", "pods": ["spec"], "operator_gpus": [{"at": "spec"}]},
        {
            "group": "x.io",
            "kind": "A",
            "pods": ["spec"],
            "operator_gpus": [{"at": "spec", "amount": "gpu", "resource": "r", "extra": 1}],
        },
        {
            "group": "x.io",
            "kind": "A",
            "pods": ["spec"],
            "operator_gpus": [
                {"at": "spec", "amount": "g", "resource": "r", "resource_values": {"a": "b"}}
            ],
        },
        {
            "group": "x.io",
            "kind": "A",
            "pods": ["spec"],
            "operator_gpus": [
                {
                    "at": "spec",
                    "amount": "g",
                    "resource": "r",
                    "resource_field": "v",
                    "resource_values": {"a": ""},
                }
            ],
        },
    ]
    for row in rows:
        by_schema = validator.is_valid({"workloads": [row]})
        by_code = validate_row(row) == []
        assert by_schema == by_code, row


def test_every_location_key_is_in_the_schema() -> None:
    schema = json.loads((ROOT / "schemas" / "workloads.schema.json").read_text())
    props = schema["$defs"]["workload"]["properties"]
    assert set(LOCATIONS) <= set(props)
