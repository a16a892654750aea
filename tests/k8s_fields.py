"""Regenerate ``gpulint/data/k8s-fields.json`` from the kubernetes Python client's models.

The client's models are generated from the Kubernetes OpenAPI document: ``attribute_map``
gives a type's JSON field names, ``openapi_types`` the type each field holds. Run
``.venv/bin/python -m tests.k8s_fields`` after upgrading the client.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.conftest import ROOT

#: The core/v1 types GPU024 walks, from a pod template down, and the workload specs above it.
TYPES = (
    "PodTemplateSpec",
    "PodSpec",
    "Container",
    "EphemeralContainer",
    "ResourceRequirements",
    "Toleration",
    "EnvVar",
    "EnvVarSource",
    "ConfigMapKeySelector",
    "SecretKeySelector",
    "ObjectFieldSelector",
    "ResourceFieldSelector",
    "EnvFromSource",
    "ConfigMapEnvSource",
    "SecretEnvSource",
    "VolumeMount",
    "Volume",
    "ConfigMapVolumeSource",
    "SecretVolumeSource",
    "PersistentVolumeClaimVolumeSource",
    "EmptyDirVolumeSource",
    "HostPathVolumeSource",
    "KeyToPath",
    "ContainerPort",
    "Probe",
    "ExecAction",
    "HTTPGetAction",
    "HTTPHeader",
    "TCPSocketAction",
    "GRPCAction",
    "Lifecycle",
    "LifecycleHandler",
    "SecurityContext",
    "Capabilities",
    "PodSecurityContext",
    "Affinity",
    "NodeAffinity",
    "NodeSelector",
    "NodeSelectorTerm",
    "NodeSelectorRequirement",
    "PreferredSchedulingTerm",
    "PodAffinity",
    "PodAntiAffinity",
    "PodAffinityTerm",
    "WeightedPodAffinityTerm",
    "TopologySpreadConstraint",
    # The built-in workloads' specs that hold a pod template (apps/v1, batch/v1): a pod
    # spec field written beside ``template`` is none of theirs.
    "DeploymentSpec",
    "StatefulSetSpec",
    "DaemonSetSpec",
    "ReplicaSetSpec",
    "JobSpec",
)


def model(name: str) -> Any:
    # Imported here, not at the top: the client's models take a second of each pytest
    # worker's start when test_fields is collected, though only one worker runs it.
    from kubernetes import client as k8s

    return getattr(k8s, f"V1{name}")


def generate() -> dict[str, Any]:
    import kubernetes

    types: dict[str, list[str]] = {}
    children: dict[str, dict[str, str]] = {}
    for name in TYPES:
        cls = model(name)
        types[name] = sorted(cls.attribute_map.values())
        held: dict[str, str] = {}
        for attribute, kind in cls.openapi_types.items():
            match = re.fullmatch(r"(?:[Ll]ist\[)?V1(\w+?)\]?", kind)
            if match and match.group(1) in TYPES:
                held[cls.attribute_map[attribute]] = match.group(1)
        if held:
            children[name] = dict(sorted(held.items()))
    return {
        "$schema": "../schemas/k8s-fields.schema.json",
        "description": (
            "The JSON field names of the core/v1 types a pod spec is made of and of the "
            "built-in workloads' specs that hold a pod template (apps/v1, batch/v1), as the "
            "Kubernetes API (OpenAPI v3) defines them (types), and the "
            "field of each type that holds another of them, one object or a list of them "
            "(children). GPU024 reports a key at one of these levels that is not one of its "
            "fields but is close to one, or is a field of another level. Generated from the "
            "kubernetes Python client's models (attribute_map, openapi_types), which are "
            "generated from the same OpenAPI document: `python -m tests.k8s_fields`; "
            "tests/test_fields.py compares the two."
        ),
        "source": (
            "kubernetes/kubernetes api/openapi-spec/v3/api__v1_openapi.json "
            "(io.k8s.api.core.v1.*), apis__apps__v1_openapi.json and "
            "apis__batch__v1_openapi.json (the workload specs), through the kubernetes "
            "Python client "
            f"{kubernetes.__version__} models"
        ),
        "types": types,
        "children": children,
    }


def main() -> None:
    text = json.dumps(generate(), indent=2) + "\n"
    (ROOT / "gpulint" / "data" / "k8s-fields.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
