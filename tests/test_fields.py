"""GPU024's field names (``gpulint/data/k8s-fields.json``) against the kubernetes Python client.

The client's models are generated from the Kubernetes OpenAPI document, and its decoder
keeps only the fields a type defines: it is the oracle for "Kubernetes drops this key".
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from gpulint.rules.gpu024_misplaced_pod_field import field_names, misplaced_keys

from gpulint.k8s.devices import builtin_registry
from gpulint.k8s.manifest import Manifest
from gpulint.k8s.workloads import builtin_table
from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.loader.stream import load_text
from gpulint.rule import RuleContext
from tests.conftest import ROOT, RULE_FIXTURES
from tests.k8s_fields import TYPES, generate, model


def test_the_field_data_matches_its_schema() -> None:
    schema = json.loads((ROOT / "schemas" / "k8s-fields.schema.json").read_text("utf-8"))
    data = json.loads((ROOT / "gpulint" / "data" / "k8s-fields.json").read_text("utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(data, schema)


def test_the_field_data_is_generated_from_the_client() -> None:
    # Regenerate with `python -m tests.k8s_fields` when this fails.
    data = json.loads((ROOT / "gpulint" / "data" / "k8s-fields.json").read_text("utf-8"))
    assert data == generate()


@pytest.mark.parametrize("name", sorted(TYPES))
def test_every_field_the_api_defines_is_known(name: str) -> None:
    # A field missing here would be reported as misplaced: regenerate the data from the
    # client's models when this fails (see the data file's description).
    api = set(model(name).attribute_map.values())
    assert api <= field_names()[name], sorted(api - field_names()[name])


def _quantities_as_text(data: Any, parent: str = "") -> Any:
    """Resource values as the strings the client's Quantity type holds (``1`` -> ``"1"``)."""
    if isinstance(data, dict):
        return {
            k: (
                str(v)
                if parent in ("limits", "requests") and not isinstance(v, (dict, list))
                else _quantities_as_text(v, k)
            )
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [_quantities_as_text(v, parent) for v in data]
    return data


def _round_trip(obj: dict[str, Any]) -> Any:
    """The object as the API's types decode it: unknown keys are gone."""
    from kubernetes import client as k8s  # not at collection: see tests.k8s_fields.model

    model = {"Deployment": k8s.V1Deployment, "Job": k8s.V1Job, "Pod": k8s.V1Pod}[obj["kind"]]
    decoded = model.from_dict(_quantities_as_text(copy.deepcopy(obj)))
    return k8s.ApiClient().sanitize_for_serialization(decoded)


def _lookup(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        data = data[part]
    return data


def _documents(path: Path) -> list[Any]:
    return [doc.data for doc in load_text(path.read_text("utf-8")).documents]


@pytest.mark.parametrize(
    ("fixture", "count"), [("fail-misplaced-fields.yaml", 9), ("fail-nested-levels.yaml", 10)]
)
def test_every_reported_key_is_dropped_by_the_api_types(fixture: str, count: int) -> None:
    path = RULE_FIXTURES / "GPU024" / fixture
    linter = Linter([r for r in load_rules() if r.code == "GPU024"])
    findings = linter.lint_bytes(str(path), path.read_bytes())
    assert len(findings) == count
    documents = _documents(path)

    ctx = RuleContext(builtin_registry())
    seen = 0
    for index, view in enumerate(
        Manifest(str(path), path.read_text("utf-8"), builtin_table()).views()
    ):
        decoded = _round_trip(documents[index])
        for position, _ in enumerate(view.objects):
            for pod in view.pod_specs(position):
                for found in misplaced_keys(pod, ctx):
                    seen += 1
                    *parent, key = found.path
                    assert key in _lookup(documents[index], tuple(parent))
                    assert key not in (_lookup(decoded, tuple(parent)) or {})
    assert seen == len(findings)


@pytest.mark.parametrize("fixture", ["pass-fields.yaml", "pass-nested-levels.yaml"])
def test_the_pass_fixture_survives_the_api_types(fixture: str) -> None:
    path = RULE_FIXTURES / "GPU024" / fixture
    deployment = _documents(path)[0]
    template = _quantities_as_text(deployment)["spec"]["template"]
    assert _round_trip(deployment)["spec"]["template"] == template
