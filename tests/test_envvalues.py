"""A container's variables for ``$(VAR)``: literal values and ConfigMaps of the same run."""

from __future__ import annotations

import json
from pathlib import Path

from gpulint.k8s.envvalues import UNKNOWN, ConfigMaps, EnvValues, container_env, expand
from gpulint.k8s.workloads import builtin_table, objects
from gpulint.loader.stream import load_text
from tests.conftest import gpulint_in_process
from tests.externals import needs_kustomize

CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata: {{name: vllm-config{namespace}}}
data:
  TP: "{tp}"
"""
WORKLOAD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llama, namespace: inference}
spec:
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama}}
    spec:
      tolerations: [{key: nvidia.com/gpu, operator: Exists}]
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        env:
        - name: TP
          valueFrom: {configMapKeyRef: {name: vllm-config, key: TP}}
        args: ["--tensor-parallel-size=$(TP)"]
        resources: {limits: {nvidia.com/gpu: 2}}
"""


def _findings(root: Path) -> list[dict[str, object]]:
    proc = gpulint_in_process(
        "check", "-f", "json", "--isolated", "--select", "GPU041", ".", cwd=root
    )
    assert proc.returncode in (0, 1), proc.stderr
    found: list[dict[str, object]] = json.loads(proc.stdout)["findings"]
    return found


def test_a_configmap_of_another_file_of_the_run_sets_the_flag(tmp_path: Path) -> None:
    (tmp_path / "deployment.yaml").write_text(WORKLOAD)
    assert _findings(tmp_path) == []  # TP of no known value: not checked
    (tmp_path / "config.yaml").write_text(CONFIG.format(tp=4, namespace=", namespace: inference"))
    [finding] = _findings(tmp_path)
    assert finding["path"] == "deployment.yaml" and finding["line"] == 16
    assert "key TP of ConfigMap vllm-config" in str(finding["message"])
    [related] = finding["related"]  # type: ignore[misc]
    assert related["kind"] == "value"
    assert (related["path"], related["line"]) == ("config.yaml", 5)


def test_a_configmap_of_another_namespace_or_of_two_values_is_not_known(tmp_path: Path) -> None:
    (tmp_path / "deployment.yaml").write_text(WORKLOAD)
    (tmp_path / "config.yaml").write_text(CONFIG.format(tp=4, namespace=", namespace: staging"))
    assert _findings(tmp_path) == []
    # Two overlays' ConfigMaps of one name that disagree: which one is applied is not known.
    (tmp_path / "a.yaml").write_text(CONFIG.format(tp=4, namespace=""))
    (tmp_path / "b.yaml").write_text(CONFIG.format(tp=2, namespace=""))
    assert _findings(tmp_path) == []
    (tmp_path / "b.yaml").write_text(CONFIG.format(tp=4, namespace=""))
    assert len(_findings(tmp_path)) == 1


def test_the_file_s_own_configmap_wins_over_the_run_s() -> None:
    run = ConfigMaps()
    run.add_text("other.yaml", CONFIG.format(tp=8, namespace=""))
    values = EnvValues(run)
    values.begin_file("chart", CONFIG.format(tp=2, namespace="") + "---\n" + WORKLOAD)
    data = values.data("vllm-config", "inference")
    assert data is not None and data["TP"].value == "2" and data["TP"].label == "chart"
    values.begin_file("deployment.yaml", WORKLOAD)
    data = values.data("vllm-config", "inference")
    assert data is not None and data["TP"].value == "8"


def _container_env(fields: str, config: str = "") -> dict[str, str | None]:
    start = WORKLOAD.index("        env:")
    text = (
        f"{config}---\n" + WORKLOAD[:start] + fields + WORKLOAD[WORKLOAD.index("        args:") :]
    )
    values = EnvValues()
    values.begin_file("f.yaml", text)
    for doc in load_text(text).documents:
        for obj in objects(doc):
            for pod in builtin_table().pod_specs(obj):
                env = container_env(pod.containers[0], obj.ref.namespace, values)
                return {name: source.value for name, source in env.items()}
    raise AssertionError("no pod")


def test_envfrom_then_env_in_order_with_prefixes() -> None:
    config = CONFIG.format(tp=4, namespace="")
    fields = (
        "        envFrom:\n"
        "        - configMapRef: {name: vllm-config}\n"
        "        - {prefix: CM_, configMapRef: {name: vllm-config}}\n"
        "        env:\n"
        "        - {name: PP, value: $(TP)0}\n"
        "        - {name: TP, value: '2'}\n"
        "        - {name: ESC, value: $$(TP)}\n"
        "        - {name: NOPE, value: $(UNDEFINED)}\n"
    )
    assert _container_env(fields, config) == {
        "TP": "2",
        "CM_TP": "4",
        "PP": "40",
        "ESC": "$(TP)",
        "NOPE": "$(UNDEFINED)",
    }


def test_a_secret_after_a_configmap_may_replace_its_keys() -> None:
    config = CONFIG.format(tp=4, namespace="")
    fields = (
        "        envFrom:\n"
        "        - configMapRef: {name: vllm-config}\n"
        "        - secretRef: {name: tokens}\n"
        "        env:\n"
        "        - {name: PP, value: $(TP)}\n"
        "        - name: DP\n"
        "          valueFrom: {secretKeyRef: {name: tokens, key: DP}}\n"
    )
    assert _container_env(fields, config) == {"TP": None, "PP": None, "DP": None}


def test_expand_follows_kubernetes() -> None:
    env = {"A": UNKNOWN._replace(value="1"), "B": UNKNOWN}
    assert expand("$(A)-$$(A)-$(C)", env) == "1-$(A)-$(C)"
    assert expand("$(B)", env) is None


@needs_kustomize
def test_a_configmap_an_overlay_generates_sets_the_flag(tmp_path: Path) -> None:
    # The generated ConfigMap's name gets a hash, and the reference with it: the rendered
    # output is one text, which knows its own ConfigMaps.
    (tmp_path / "deployment.yaml").write_text(WORKLOAD)
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [deployment.yaml]\n"
        "namespace: inference\n"
        "configMapGenerator:\n"
        "- name: vllm-config\n"
        "  literals: [TP=4]\n"
    )
    proc = gpulint_in_process(
        "check", "-f", "json", "--isolated", "--render", "--select", "GPU041", ".", cwd=tmp_path
    )
    assert proc.returncode == 1, proc.stderr  # an error: the engine fails at start-up
    [finding] = json.loads(proc.stdout)["findings"]
    assert "key TP of ConfigMap vllm-config-" in finding["message"]
    assert [r["kind"] for r in finding["related"]] == ["value", "rendered"]
