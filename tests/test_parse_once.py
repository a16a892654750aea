"""Each file is parsed once per run: the documents the facts stage builds for a file the run
also lints are the ones the lint reads (gpulint.loader.handoff), and what the run says is the
same as when the lint parses every file itself."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import gpulint_in_process
from tests.test_projects import SKU, job, write

#: A time-slicing configuration the project's device plugin reads (a fact for every file).
PLUGIN = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
  namespace: gpu-operator
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
"""
#: A configuration that renames the shared GPUs: the project's pods that ask for the new
#: name are GPU pods, which the facts stage learns only once it has read this file.
RENAME = PLUGIN.replace(
    "- name: nvidia.com/gpu\n", "- name: nvidia.com/gpu\n          rename: nvidia.com/a100-shared\n"
)
#: Tolerations and a syntax error past the first document (a problem of the text).
BROKEN = job("broken", SKU) + "---\nkind: [unclosed\n"
#: A suppression comment, a YAML 1.2 pitfall, and a GPU pod that tolerates nothing.
QUIRKS = (
    "# gpulint: disable-next-line=GPU001 -- measured\n"
    + job("quirks").replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 2")
    + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: flags}\ndata:\n  on: yes\n"
)


def project(root: Path, plugin: str = PLUGIN) -> Path:
    files = {f"k8s/train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"}
    files["k8s/train-d.yaml"] = job("train-d")
    files["k8s/shared.yaml"] = job("shared", SKU).replace(
        "nvidia.com/gpu", "nvidia.com/a100-shared"
    )
    files["k8s/plugin.yaml"] = plugin
    files["k8s/broken.yaml"] = BROKEN
    files["k8s/quirks.yaml"] = QUIRKS
    return write(root, files)


def run(cwd: Path, *paths: str) -> tuple[Any, int]:
    proc = gpulint_in_process("check", "--no-cache", "-f", "json", *paths, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)["findings"], proc.returncode


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How many times each text was parsed in the run."""
    from gpulint.loader import stream

    counted: Counter[str] = Counter()
    original = stream.DocumentStream.__iter__

    def counting(self: stream.DocumentStream) -> Iterator[Any]:
        counted[self.text] += 1
        return original(self)

    monkeypatch.setattr(stream.DocumentStream, "__iter__", counting)
    return counted


@pytest.mark.parametrize("plugin", [PLUGIN, RENAME], ids=["sharing", "renaming"])
@pytest.mark.parametrize(
    "paths", [(".",), ("k8s/train-d.yaml",), ("k8s/train-a.yaml", "k8s/quirks.yaml")]
)
def test_each_file_is_parsed_once_and_judged_as_when_the_lint_parses_it(
    tmp_path: Path,
    parses: Counter[str],
    monkeypatch: pytest.MonkeyPatch,
    paths: tuple[str, ...],
    plugin: str,
) -> None:
    root = project(tmp_path, plugin)
    found, code = run(root, *paths)
    texts = {p.read_text(): p.name for p in (root / "k8s").iterdir()}
    twice = {texts[text]: n for text, n in parses.items() if n > 1 and text in texts}
    assert twice == {}
    # A device plugin configuration written as a ConfigMap's text (a few lines, not a file)
    # is read by the facts stage and again by GPU035, which judges it: no more.
    assert all(n <= 2 for text, n in parses.items() if text not in texts)
    # Files the facts stage parsed were linted from its documents, not parsed again: a
    # run whose facts stage hands nothing over parses them twice, and says the same.
    assert parses[(root / "k8s/train-d.yaml").read_text()] == 1
    from gpulint.loader import handoff

    monkeypatch.setattr(handoff, "MAX_RUN_BYTES", 0)
    parses.clear()
    again, again_code = run(root, *paths)
    assert (again, again_code) == (found, code)
    assert max(parses.values()) >= 2  # three times when the plugin renames the GPUs
    assert "GPU020" in {f["rule"] for f in found}


def test_a_file_over_the_bound_is_parsed_by_the_lint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpulint.loader import handoff

    root = project(tmp_path)
    found = run(root, ".")
    monkeypatch.setattr(handoff, "MAX_TEXT", 10)
    assert run(root, ".") == found


def test_two_projects_in_one_run_each_parse_their_files_once(
    tmp_path: Path, parses: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project(tmp_path / "one")
    project(tmp_path / "two", RENAME)
    for path in (tmp_path / "two/k8s").iterdir():  # texts of its own: parses counted by text
        path.write_text(path.read_text() + "# the second repository\n")
    found = run(tmp_path, "one", "two")
    files = {p.read_text() for p in tmp_path.glob("*/k8s/*")}
    assert max(n for text, n in parses.items() if text in files) == 1
    from gpulint.loader import handoff

    monkeypatch.setattr(handoff, "MAX_RUN_BYTES", 0)
    assert run(tmp_path, "one", "two") == found


#: Rare files: facts of their own (DRA objects a pod's claim names, a ConfigMap a container
#: reads, a Karpenter pool's taint), each read by a fact of its own before the lint.
DRA = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.nvidia.com"
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: one-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
"""
CLAIMING = """\
apiVersion: v1
kind: Pod
metadata: {name: serve}
spec:
  tolerations:
  - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: one-gpu
  containers:
  - name: c
    image: vllm/vllm-openai:v0.6.0
    args: ["--tensor-parallel-size", "$(TP)"]
    env:
    - name: TP
      valueFrom: {configMapKeyRef: {name: cfg, key: tp}}
    resources:
      claims: [{name: gpu}]
      limits: {nvidia.com/gpu: 2}
"""
CONFIG = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata:\n  tp: "4"\n'
POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      taints:
      - {key: nvidia.com/gpu, value: "true", effect: NoSchedule}
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [p4d]}
"""

#: A KServe serving runtime whose /dev/shm is on disk, and a predictor on two GPUs that
#: names it (GPU042 reads the runtime from the project's facts).
RUNTIME = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {name: vllm}
spec:
  supportedModelFormats: [{name: vLLM}]
  containers:
  - name: kserve-container
    image: vllm/vllm-openai:v0.8.5
    volumeMounts: [{name: scratch, mountPath: /dev/shm}]
  volumes: [{name: scratch, emptyDir: {}}]
"""
PREDICTOR = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llm}
spec:
  predictor:
    model:
      runtime: vllm
      modelFormat: {name: vLLM}
      args: [--tensor-parallel-size=2]
      resources: {limits: {nvidia.com/gpu: 2}}
"""


@pytest.mark.parametrize("paths", [(".",), ("k8s/serve.yaml",), ("k8s/dra.yaml", "k8s/pool.yaml")])
def test_rare_files_are_parsed_once_for_all_they_say(
    tmp_path: Path, parses: Counter[str], monkeypatch: pytest.MonkeyPatch, paths: tuple[str, ...]
) -> None:
    """A DRA file, a ConfigMap a container reads, a node pool and a serving runtime are each
    a fact of their own and a file to lint: each is parsed once, and the run says what it
    says when every fact and the lint parse the file themselves."""
    files = {"k8s/dra.yaml": DRA, "k8s/serve.yaml": CLAIMING, "k8s/cfg.yaml": CONFIG}
    files["k8s/pool.yaml"] = POOL
    files["k8s/runtime.yaml"] = RUNTIME
    files["k8s/llm.yaml"] = PREDICTOR
    root = write(tmp_path, files)
    assert {"GPU041", "GPU042", "GPU066"} <= {f["rule"] for f in run(root, ".")[0]}
    parses.clear()
    found, code = run(root, *paths)
    assert max(parses.values()) == 1, parses
    from gpulint.loader import handoff

    monkeypatch.setattr(handoff, "MAX_TEXT", 0)
    assert run(root, *paths) == (found, code)
    # Past the bound of rare documents held at once, each fact parses the file again.
    from gpulint.lint import gather

    monkeypatch.setattr(handoff, "MAX_TEXT", 256 * 1024)
    monkeypatch.setattr(gather, "RARE_HELD", 0)
    assert run(root, *paths) == (found, code)


@pytest.mark.parametrize("paths", [(".",), ("k8s/serve.yaml", "k8s/train-a.yaml")])
def test_inspect_parses_each_file_once(
    tmp_path: Path, parses: Counter[str], monkeypatch: pytest.MonkeyPatch, paths: tuple[str, ...]
) -> None:
    """``gpulint inspect`` reads a file's documents from the facts stage's parse, and shows
    what it shows when it parses every file itself."""
    root = project(tmp_path / "repo")
    for name, text in (("dra", DRA), ("serve", CLAIMING), ("cfg", CONFIG), ("pool", POOL)):
        (root / "k8s" / f"{name}.yaml").write_text(text)

    def inspected() -> str:
        proc = gpulint_in_process("inspect", "--format", "json", *paths, cwd=root)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    shown = inspected()
    assert max(parses.values()) == 1, parses
    from gpulint.loader import handoff

    monkeypatch.setattr(handoff, "MAX_RUN_BYTES", 0)
    parses.clear()
    assert inspected() == shown
    assert max(parses.values()) >= 2  # the facts stage parsed them, and inspect again
