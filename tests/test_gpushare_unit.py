"""GPU017 with the repository's own gpushare device plugin: its ``--memory-unit`` is the
unit of ``aliyun.com/gpu-mem`` for the run (gpulint.lint.gather.project_facts), and the finding
names the plugin's line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import gpulint_in_process, said

PLUGIN = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: gpushare-device-plugin-ds, namespace: kube-system}
spec:
  selector: {matchLabels: {app: gpushare}}
  template:
    metadata: {labels: {app: gpushare}}
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists}]
      containers:
      - name: gpushare
        image: registry.cn-hangzhou.aliyuncs.com/acs/k8s-gpushare-plugin:v2-1.11-aff8a23
        command:
        - gpushare-device-plugin-v2
        - -logtostderr
        - {flag}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: notebook}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists}]
  containers:
  - name: jupyter
    image: tensorflow/tensorflow:2.15.0-gpu
    resources:
      limits:
        aliyun.com/gpu-mem: {amount}
"""


def _run(tmp_path: Path, flag: str, amount: int, config: str = "") -> list[dict[str, Any]]:
    (tmp_path / ".git").mkdir(exist_ok=True)
    (tmp_path / "plugin.yaml").write_text(PLUGIN.replace("{flag}", flag))
    (tmp_path / "pod.yaml").write_text(POD.replace("{amount}", str(amount)))
    if config:
        (tmp_path / ".gpulint.yaml").write_text(config)
    proc = gpulint_in_process("check", "-f", "json", "--select", "GPU017", ".", cwd=tmp_path)
    findings: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return findings


@pytest.mark.parametrize(
    "flag", ["--memory-unit=MiB", '"--memory-unit"\n        - "MiB"', "--memory-unit MiB"]
)
def test_a_gib_count_left_under_the_plugins_mib_unit(tmp_path: Path, flag: str) -> None:
    findings = _run(tmp_path, flag, 3)
    (finding,) = findings
    assert finding["path"] == "pod.yaml" and finding["severity"] == "warning"
    assert "asks for 3 MiB of GPU memory (the gpushare device plugin runs with " in (said(finding))
    assert "if you meant 3 GiB, write aliyun.com/gpu-mem: 3072" in said(finding)
    assert [(r["kind"], r["path"]) for r in finding["related"]] == [("evidence", "plugin.yaml")]


def test_under_the_default_gib_unit_a_small_count_is_fine(tmp_path: Path) -> None:
    assert _run(tmp_path, "--memory-unit=GiB", 3) == []
    assert _run(tmp_path, "-logtostderr", 3) == []  # no flag: the plugin's default, GiB


def test_the_configured_unit_wins_over_the_plugins(tmp_path: Path) -> None:
    config = "rules:\n  GPU017: {memory_unit: GiB}\n"
    assert _run(tmp_path, "--memory-unit=MiB", 3, config) == []


def test_plugins_that_disagree_leave_the_default(tmp_path: Path) -> None:
    (tmp_path / "other.yaml").write_text(PLUGIN.replace("{flag}", "--memory-unit=GiB"))
    assert _run(tmp_path, "--memory-unit=MiB", 3) == []
