"""JupyterHub's chart values: the settings each user's pod gets (gpulint.k8s.jupyterhub), read
by GPU034 alone, on a file that holds no Kubernetes object."""

from __future__ import annotations

import textwrap

import pytest

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.model import Finding, Severity
from gpulint.settings import Settings

RULES = load_rules()

VALUES = """\
hub:
  config:
    KubeSpawner:
      extra_resource_limits:
        nvidia.com/gpu: "1"
singleuser:
  extraEnv:
    NVIDIA_VISIBLE_DEVICES: "0"
  extraContainers:
    - name: sidecar
      image: busybox:1.36
      resources:
        limits:
          nvidia.com/gpu: 0.5
  profileList:
    - display_name: "Big"
      kubespawner_override:
        extra_resource_limits:
          nvidia.com/gpu: "4"
      profile_options:
        size:
          choices:
            none:
              kubespawner_override:
                extra_resource_limits:
                  nvidia.com/gpu: null
                extra_resource_guarantees:
                  nvidia.com/gpu: "1"
"""


def lint(text: str, name: str = "config.yaml") -> list[Finding]:
    return Linter(RULES, Settings()).lint_bytes(name, text.encode())


def test_a_values_file_is_read_by_gpu034_alone_and_names_no_object() -> None:
    findings = lint(VALUES)
    # The sidecar's half GPU is a chart's container no pod rule reads in a values file.
    assert {f.rule for f in findings} == {"GPU034"}
    assert all(f.object is None for f in findings)


def test_an_override_merges_into_the_settings_and_null_removes_a_key() -> None:
    by_line = {f.line: f for f in lint(VALUES)}
    # hub.config.KubeSpawner gives every profile one GPU; "Big" holds four.
    env = by_line[8]
    assert env.severity == Severity.INFO and "'Big' holds 4 nvidia.com/gpu" in env.message
    # The choice removes the limit (KubeSpawner's recursive_update) and keeps a guarantee.
    guarantee = by_line[28]
    assert guarantee.severity == Severity.ERROR and "'Big: none'" in guarantee.message


def test_values_of_another_chart_are_not_read() -> None:
    other = "myapp:\n  replicas: 1\n" + VALUES
    assert [f for f in lint(other) if f.rule == "GPU034"] == []


def test_values_a_helmrelease_hands_the_chart_are_read_in_the_object() -> None:
    indented = "".join(f"    {line}\n" for line in VALUES.splitlines())
    release = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\n"
        "metadata: {name: hub}\nspec:\n  values:\n" + indented
    )
    findings = [f for f in lint(release, "release.yaml") if f.rule == "GPU034"]
    assert len(findings) == 2
    assert all(f.object is not None and f.object.kind == "HelmRelease" for f in findings)


@pytest.mark.parametrize("field", ["source", "sources"])
def test_values_an_argo_cd_application_hands_the_chart_are_read(field: str) -> None:
    """An Application's `helm.valuesObject`, in its `source` or in one of its `sources`."""
    head = "source:\n" if field == "source" else "sources:\n- "
    body = "chart: jupyterhub\nhelm:\n  valuesObject:\n" + textwrap.indent(VALUES, "    ")
    source = head + textwrap.indent(body, "  ")[2 if field == "sources" else 0 :]
    app = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: hub}\nspec:\n"
        + textwrap.indent(source, "  ")
    )
    findings = [f for f in lint(app, "app.yaml") if f.rule == "GPU034"]
    assert len(findings) == 2
    assert all(f.object is not None and f.object.kind == "Application" for f in findings)


def test_a_null_in_an_overrides_environment_removes_the_variable() -> None:
    """KubeSpawner merges an override's `environment` into the settings, a null removing a
    variable: a profile that unsets singleuser's NVIDIA_VISIBLE_DEVICES is not reported."""
    text = """\
singleuser:
  extraEnv:
    NVIDIA_VISIBLE_DEVICES: "0"
  profileList:
    - display_name: "GPU"
      kubespawner_override:
        extra_resource_limits:
          nvidia.com/gpu: "1"
        environment:
          NVIDIA_VISIBLE_DEVICES: null
"""
    findings = lint(text)
    # singleuser itself (no GPU) still sets it; the profile holding the GPU does not.
    assert [(f.rule, f.line, "holds no GPU" in f.message) for f in findings] == [
        ("GPU034", 3, True)
    ]
