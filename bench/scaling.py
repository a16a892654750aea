"""Hostile inputs at size n and 4n: linear paths take ~4x as long at 4n, quadratic ones ~16x.

Every case generates its input under bench/out/scaling/ and runs ``gpulint check`` on it in a
fresh process (stdout and stderr to /dev/null), recording wall time, CPU time (user + system
of the process and the children it waited for) and peak RSS (GNU ``time``). The CPU ratio 4n/n
is what the verdict reads: the machine is shared, and CPU time moves less with its load
than wall time.

    .venv/bin/python bench/scaling.py                    # every case, default sizes
    .venv/bin/python bench/scaling.py --case globs -n 60
    .venv/bin/python bench/scaling.py --gpulint /path/to/other/venv/bin/gpulint
    .venv/bin/python bench/scaling.py --markdown         # the table for RESULTS.md
    .venv/bin/python bench/scaling.py --case findings-per-template --helm /usr/bin/helm

Memory cases (``big-file``, ``tiny-docs``, ``small-docs``, ``file-size``) also report peak RSS
against the input's size.
The fixed-size cases (``merge-bomb``, ``huge-quantity``) report time and output size.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out" / "scaling"

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
spec:
  containers:
  - name: main
    image: registry.example/train:1
    resources:
      limits:
        nvidia.com/gpu: 1
      requests:
        nvidia.com/gpu: 1
"""


#: Folders made by this run (removed at the end unless --keep).
_made: list[Path] = []


class Input(NamedTuple):
    args: list[str]
    cwd: Path
    #: Bytes of YAML the case reads (memory cases compare peak RSS with it).
    size: int = 0
    #: The exit codes of a run that measured the path (2, a tool error, is usually not).
    exits: tuple[int, ...] = (0, 1)


class Result(NamedTuple):
    wall: float
    cpu: float
    max_rss: int
    exit_code: int
    timed_out: bool
    output: int


def _rmtree(top: Path) -> None:
    """shutil.rmtree without recursion (it recurses per level before Python 3.12, and the
    ``deep-folders`` input is more levels deep than the recursion limit)."""
    stack: list[tuple[str, bool]] = [(str(top), False)]
    while stack:
        path, emptied = stack.pop()
        if emptied:
            os.rmdir(path)
            continue
        stack.append((path, True))
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    stack.append((entry.path, False))
                else:
                    os.unlink(entry.path)


def _fresh(name: str, n: int) -> Path:
    folder = OUT / f"{name}-{n}"
    _made.append(folder)
    if folder.exists():
        _rmtree(folder)
    folder.mkdir(parents=True)
    (folder / ".git").mkdir()  # the configuration search stops here
    return folder


def _write(folder: Path, name: str, text: str) -> int:
    (folder / name).write_text(text, encoding="utf-8")
    return len(text.encode())


# -- cases: each writes its input for size n -------------------------------------------------


def stacked_next_line(n: int) -> Input:
    """n stacked ``# gpulint: disable-next-line`` comments above one pod (8,000: 72 s)."""
    folder = _fresh("stacked-next-line", n)
    text = "# gpulint: disable-next-line=GPU003 -- intended\n" * n + POD.format(name="p")
    return Input(["check", "pod.yaml"], folder, _write(folder, "pod.yaml", text))


def stale_suppressions(n: int) -> Input:
    """n documents, each with a ``disable`` comment that silences nothing (10,000: 211 s)."""
    folder = _fresh("stale-suppressions", n)
    doc = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}  "
        "# gpulint: disable=GPU001 -- stale\ndata: {{k: v}}\n"
    )
    text = "---\n".join(doc.format(i=i) for i in range(n))
    return Input(["check", "cms.yaml"], folder, _write(folder, "cms.yaml", text))


def argo_templates(n: int) -> Input:
    """An Argo Workflow with n container templates (20,000: 152 s)."""
    folder = _fresh("argo-templates", n)
    template = (
        "  - name: t{i}\n    container:\n      image: x\n"
        "      resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    )
    text = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: wf}\n"
        "spec:\n  entrypoint: t0\n  templates:\n" + "".join(template.format(i=i) for i in range(n))
    )
    return Input(["check", "wf.yaml"], folder, _write(folder, "wf.yaml", text))


def placeholders_in_block_scalars(n: int) -> Input:
    """A ConfigMap of n prompt templates, each a block scalar holding ``value: {field}``
    lines, then a GPU pod: every placeholder is in a block scalar's text, so the file is
    linted; the block scalars are found in one pass over the lines, not one per placeholder."""
    folder = _fresh("placeholders-in-block-scalars", n)
    prompt = "  p{i}.yaml: |\n    value: {{question}}\n    name: {{user.name}}\n    kind: MY_KIND\n"
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: prompts}\ndata:\n"
        + "".join(prompt.format(i=i) for i in range(n))
        + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - name: c\n    image: x\n    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return Input(["check", "prompts.yaml"], folder, _write(folder, "prompts.yaml", text))


def operator_gpu_services(n: int) -> Input:
    """A DynamoGraphDeployment with n services, each asking for its GPU in Dynamo's own
    field (``operator_gpus``): each unit's pods are found by path, not by a scan of all."""
    folder = _fresh("operator-gpu-services", n)
    service = (
        '    s{i}:\n      resources: {{limits: {{gpu: "1"}}}}\n'
        "      extraPodSpec:\n        mainContainer: {{image: x}}\n"
    )
    text = (
        "apiVersion: nvidia.com/v1alpha1\nkind: DynamoGraphDeployment\nmetadata: {name: g}\n"
        "spec:\n  services:\n" + "".join(service.format(i=i) for i in range(n))
    )
    return Input(["check", "dgd.yaml"], folder, _write(folder, "dgd.yaml", text))


def chart_gpu_blocks(n: int) -> Input:
    """A HelmRelease whose values hold n components, each with its own ``resources``, an
    enabled ``gpu:`` block and ``extraEnv``: every block is given to the container of the
    values that hold it by a walk of its enclosing paths, not a scan of all containers."""
    folder = _fresh("chart-gpu-blocks", n)
    component = (
        "    c{i}:\n      gpu: {{enabled: true, type: nvidia, number: 1}}\n"
        "      extraEnv: [{{name: NVIDIA_VISIBLE_DEVICES, value: all}}]\n"
        "      resources: {{limits: {{memory: 1Gi}}}}\n"
    )
    text = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: r}\n"
        "spec:\n  values:\n" + "".join(component.format(i=i) for i in range(n))
    )
    return Input(["check", "release.yaml"], folder, _write(folder, "release.yaml", text))


def ollama_values_blocks(n: int) -> Input:
    """A values file of n Ollama-like components with an image and an enabled ``gpu:`` block
    but no ``resources``, beside n with ``resources``: each block without a container is
    given the values mapping with its image by a walk up its own path, looked up in a set of
    the pods found, not a scan of them."""
    folder = _fresh("ollama-values-blocks", n)
    bare = (
        "c{i}:\n  image: {{tag: 0.6.8-rocm}}\n  ollama:\n    gpu: {{enabled: true, type: nvidia}}\n"
    )
    held = "r{i}:\n  image: {{tag: 0.6.8}}\n  resources: {{limits: {{memory: 1Gi}}}}\n"
    text = "ollama:\n  gpu: {enabled: true, type: nvidia}\n"
    text += "".join(bare.format(i=i) + held.format(i=i) for i in range(n))
    return Input(["check", "values.yaml"], folder, _write(folder, "values.yaml", text))


def production_stack_models(n: int) -> Input:
    """A chart's values file (the chart has templates of its own) that sets n vLLM production
    stack models, each with an init container and variables: each model is one pod, found
    by the walk, whose engine settings are looked up once along its own path."""
    folder = _fresh("production-stack-models", n)
    chart = folder / "llm"
    chart.mkdir()
    (chart / "templates").mkdir()
    _write(chart, "Chart.yaml", "apiVersion: v2\nname: llm\nversion: 0.1.0\n")
    model = (
        "    - name: m{i}\n      repository: vllm/vllm-openai\n      tag: v0.10.1\n"
        "      modelURL: org/m{i}\n      requestCPU: 2\n      requestMemory: 8Gi\n"
        "      requestGPU: 1\n"
        "      initContainer: {{name: wait, image: busybox, env: [{{name: A, value: b}}]}}\n"
        "      env: [{{name: NVIDIA_VISIBLE_DEVICES, value: all}}]\n"
    )
    text = "vllm-stack:\n  servingEngineSpec:\n    runtimeClassName: nvidia\n    modelSpec:\n"
    text += "".join(model.format(i=i) for i in range(n))
    return Input(["check", "."], folder, _write(chart, "values.yaml", text))


def gpu_operator_values_text(n: int) -> Input:
    """An Argo CD Application handing the GPU Operator's chart a values text of n top-level
    keys the chart does not have: the text is parsed once and each finding is placed inside
    it from one table of line offsets."""
    folder = _fresh("gpu-operator-values-text", n)
    values = "".join(f"        unknownKey{i}:\n          enabled: true\n" for i in range(n))
    text = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: gpu-operator}\n"
        "spec:\n  source:\n    chart: gpu-operator\n    helm:\n      values: |\n"
        "        driver:\n          enabled: true\n" + values
    )
    return Input(["check", "app.yaml"], folder, _write(folder, "app.yaml", text))


def dcgm_metrics_records(n: int) -> Input:
    """A ConfigMap holding the DCGM exporter's metrics file of n records, every one of them
    refused (two fields): GPU080 reads the text once, reports the first record and counts
    the others."""
    folder = _fresh("dcgm-metrics-records", n)
    records = "".join(f"    DCGM_FI_DEV_FIELD_{i}, help text {i}\n" for i in range(n))
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: dcgm-metrics}\n"
        "data:\n  metrics.csv: |\n" + records
    )
    return Input(["check", "metrics.yaml"], folder, _write(folder, "metrics.yaml", text))


def umbrella_dependency_values(n: int) -> Input:
    """An umbrella chart's values.yaml whose device plugin dependency's values hold n
    configurations under ``config.map`` and one key the chart has not: read without
    --render (the values file is found by one search of its head), each key judged once."""
    folder = _fresh("umbrella-dependency-values", n)
    (folder / "templates").mkdir()
    _write(folder, "Chart.yaml", "apiVersion: v2\nname: platform\nversion: 0.1.0\n")
    _write(folder / "templates", "ns.yaml", "apiVersion: v1\nkind: Namespace\n")
    configs = "".join(f"      c{i}.yaml: x\n" for i in range(n))
    text = (
        "nvidia-device-plugin:\n  enabled: true\n  namespaceOverride: kube-system\n"
        "  config:\n    map:\n" + configs + "  args: [--fail-on-init-error=false]\n"
    )
    return Input(["check", "."], folder, _write(folder, "values.yaml", text))


def unread_chart_values(n: int) -> Input:
    """A GPU chart whose values.yaml holds n components, each with its own `tolerations`
    that no template reads, and whose template reads n other values (n actions): the
    templates' actions are scanned once for their words and the fields they take whole,
    each values key looked up once (GPU082, without --render)."""
    folder = _fresh("unread-chart-values", n)
    (folder / "templates").mkdir()
    _write(folder, "Chart.yaml", "apiVersion: v2\nname: gpu-stack\nversion: 0.1.0\n")
    reads = "".join(f"  v{i}: {{{{ .Values.c{i}.image }}}}\n" for i in range(n))
    template = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n"
        + reads
        + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
        "    - name: c\n      image: i\n      resources:\n        limits:\n"
        "          nvidia.com/gpu: 1\n"
    )
    _write(folder / "templates", "all.yaml", template)
    values = "".join(
        f"c{i}:\n  image: img{i}\n  tolerations:\n    - key: nvidia.com/gpu\n"
        "      operator: Exists\n"
        for i in range(n)
    )
    return Input(["check", "."], folder, _write(folder, "values.yaml", values))


def unread_chart_text(n: int) -> Input:
    """A GPU chart whose template holds n action openings never closed and a run of n
    dotted name characters without a slash, and whose Chart.yaml has n blank lines:
    each is scanned once (GPU082's action search stops at the first unclosed one, its
    resource-name search looks a bounded way from each position)."""
    folder = _fresh("unread-chart-text", n)
    (folder / "templates").mkdir()
    _write(folder, "Chart.yaml", "apiVersion: v2\nname: gpu\n" + "\n" * n + "version: 0.1.0\n")
    template = "# nvidia.com/gpu\n" + "a." * n + "\n" + "{{ x " * n + "\n"
    _write(folder / "templates", "pod.yaml", template)
    return Input(["check", "."], folder, _write(folder, "values.yaml", "tolerations: []\n"))


def chart_template_versions(n: int) -> Input:
    """A chart (not rendered) whose template holds n documents, each a DaemonSet of a
    removed version written literally outside any block, with actions and blocks between
    its lines: the template is scanned once for its blocks and parents, and the copy of
    the lines helm renders as written linted once (n GPU026)."""
    folder = _fresh("chart-template-versions", n)
    (folder / "templates").mkdir()
    _write(folder, "Chart.yaml", "apiVersion: v2\nname: old\nversion: 0.1.0\n")
    doc = (
        "---\napiVersion: extensions/v1beta1\nkind: DaemonSet\nmetadata:\n  name: d{i}\n"
        "spec:\n  template:\n    spec:\n      containers:\n"
        "        - image: {{{{ .Values.image }}}}\n"
        "          {{{{- if .Values.gpu }}}}\n"
        "          resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
        "          {{{{- end }}}}\n"
    )
    _write(folder / "templates", "all.yaml", "".join(doc.format(i=i) for i in range(n)))
    return Input(["check", "."], folder, _write(folder, "values.yaml", "image: x\n"))


def kustomization_duplicates(n: int) -> Input:
    """A kustomization of n patches, each with its key written twice, the first naming a GPU:
    parsed once, each duplicate's dropped value read once."""
    folder = _fresh("kustomization-duplicates", n)
    item = (
        "- target: {{kind: Deployment, name: d{i}}}\n"
        "  patch: |-\n    - {{op: add, path: /x, value: {{nvidia.com/gpu: 1}}}}\n"
        "  patch: |-\n    - {{op: add, path: /y, value: 1}}\n"
    )
    text = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n"
    text += "".join(item.format(i=i) for i in range(n))
    return Input(
        ["check", "kustomization.yaml"], folder, _write(folder, "kustomization.yaml", text)
    )


def terraform_node_groups(n: int) -> Input:
    """A pod and a project whose Terraform writes n EKS node groups (n resources with a taint
    block, n keys of the EKS module's map): each file parsed once, each pool's line looked
    up for the first pools only (gpulint/cluster/terraform.py)."""
    folder = _fresh("terraform-node-groups", n)
    resource = (
        'resource "aws_eks_node_group" "g{i}" {{\n  node_group_name = "g{i}"\n'
        '  instance_types = ["g5.xlarge"]\n  taint {{\n    key = "team-{i}"\n'
        '    value = "true"\n    effect = "NO_SCHEDULE"\n  }}\n}}\n'
    )
    group = (
        '    m{i} = {{\n      instance_types = ["g5.xlarge"]\n'
        '      taints = {{ gpu = {{ key = "m-{i}", effect = "NO_SCHEDULE" }} }}\n    }}\n'
    )
    module = (
        'module "eks" {\n  source = "terraform-aws-modules/eks/aws"\n'
        "  eks_managed_node_groups = {\n"
        + "".join(group.format(i=i) for i in range(n))
        + "  }\n}\n"
    )
    size = _write(folder, "nodes.tf", "".join(resource.format(i=i) for i in range(n)))
    size += _write(folder, "eks.tf", module)
    size += _write(folder, "pod.yaml", POD.format(name="p"))
    return Input(["check", "--no-cache", "pod.yaml"], folder, size)


def cluster_folders(n: int) -> Input:
    """A repository of n clusters' folders, each with a GPU node pool and an NVIDIA device
    plugin DaemonSet that misses the first folder's pool taint: each DaemonSet asks whether a
    pool's file is nearer to it (GPU023), the pools' folders indexed once, each question the
    length of the DaemonSet's own path (pairs of DaemonSets and pools would be n x n)."""
    folder = _fresh("cluster-folders", n)
    pool = (
        "apiVersion: karpenter.sh/v1\nkind: NodePool\nmetadata: {{name: gpu-{i}}}\nspec:\n"
        "  template:\n    spec:\n      requirements:\n"
        "      - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [g5]}}\n"
        "      taints:\n      - {{key: nvidia.com/gpu, value: 'true', effect: NoSchedule}}\n"
        "{extra}"
    )
    plugin = (
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: nvidia-device-plugin-{i}}}\n"
        "spec:\n  template:\n    spec:\n      tolerations:\n"
        "      - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}\n"
        "      containers:\n      - name: plugin\n"
        "        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0\n"
    )
    size = 0
    for i in range(n):
        sub = folder / "clusters" / f"c{i}"
        (sub / "pools").mkdir(parents=True)
        (sub / "addons").mkdir()
        extra = "      - {key: team/train, value: 'true', effect: NoSchedule}\n" if i == 0 else ""
        size += _write(sub / "pools", "gpu.yaml", pool.format(i=i, extra=extra))
        size += _write(sub / "addons", "plugin.yaml", plugin.format(i=i))
    return Input(["check", "--no-cache", "--jobs", "1", "."], folder, size)


def markdown_blocks(n: int) -> Input:
    """A README of n fenced examples, each a GPU pod asking for half a GPU (GPU004 in each),
    with prose, a shell block that applies the same pod from a here-document, and a chart's
    values between them: the fences and here-documents are found in one pass over the lines,
    each block linted alone and moved to its place."""
    folder = _fresh("markdown-blocks", n)
    example = (
        "## Example {i}\n\nRun it:\n\n```yaml\napiVersion: v1\nkind: Pod\n"
        "metadata: {{name: cuda-{i}}}\nspec:\n  containers:\n  - name: cuda\n"
        "    image: nvidia/cuda:12.4.0-base-ubuntu22.04\n"
        "    resources: {{limits: {{nvidia.com/gpu: 0.5}}}}\n```\n\n"
        "```bash\nkubectl apply -f - <<EOF\napiVersion: v1\nkind: Pod\n"
        "metadata: {{name: cuda-sh-{i}}}\nspec:\n  containers:\n  - name: cuda\n"
        "    image: nvidia/cuda:12.4.0-base-ubuntu22.04\n"
        "    resources: {{limits: {{nvidia.com/gpu: 0.5}}}}\nEOF\n```\n\n"
        "```yaml\nresources: {{limits: {{nvidia.com/gpu: 1}}}}\n```\n\n"
    )
    size = _write(folder, "README.md", "".join(example.format(i=i) for i in range(n)))
    return Input(["check", "--no-cache", "--jobs", "1", "."], folder, size)


def many_paths(n: int) -> Input:
    """n directories named on the command line, one pod each (20,000: 425 s)."""
    folder = _fresh("many-paths", n)
    size = 0
    for i in range(n):
        sub = folder / f"d{i}"
        sub.mkdir()
        size += _write(sub, "pod.yaml", POD.format(name=f"p{i}"))
    return Input(["check", "--jobs", "1", *(f"d{i}" for i in range(n))], folder, size)


def per_object_ignores(n: int) -> Input:
    """n ``per-object-ignores`` entries and n/10 objects with findings (50,000: > 12 min;
    a configuration file is read up to 1 MiB, about 14,000 entries, so 4n stays under)."""
    folder = _fresh("per-object-ignores", n)
    rows = "".join(
        f"  - {{kind: Pod, name: p{i}, rules: [GPU003], reason: vendored {i}}}\n" for i in range(n)
    )
    rows += "  - {name: 'ba*t*', namespace: '*', reason: globbed}\n"
    _write(folder, ".gpulint.yaml", "per-object-ignores:\n" + rows)
    text = "---\n".join(POD.format(name=f"p{i * 10}") for i in range(n // 10))
    return Input(["check", "pods.yaml"], folder, _write(folder, "pods.yaml", text))


def globs(n: int) -> Input:
    """An ``exclude`` glob ``*a*a*a*a*a*a*b`` against names of n a's (60: > 120 s)."""
    folder = _fresh("globs", n)
    patterns = ["*a*a*a*a*a*a*b", "**/*a*a*a*a*a*a*b/**", "x/**/*a*a*a*a*a*a*b"]
    _write(folder, ".gpulint.yaml", "exclude:\n" + "".join(f"  - '{p}'\n" for p in patterns))
    sub = folder / ("a" * n)
    sub.mkdir()
    size = 0
    for i in range(20):
        size += _write(sub, f"{'a' * n}{i}.yaml", POD.format(name=f"p{i}"))
    return Input(["check", "."], folder, size)


def deep_folders(n: int) -> Input:
    """A folder n levels deep (``a/a/.../a``) with a pod at the bottom and one on top, walked
    with ``--render`` (the Kustomize scan walks it too): os.walk recursed once per level, so
    1,000 levels ended the run with RecursionError. 4n levels must fit in PATH_MAX (4,096
    bytes) with this folder's path: n up to about 450."""
    folder = _fresh("deep-folders", n)
    size = _write(folder, "top.yaml", POD.format(name="top"))
    deep = _mkdirs(folder, n)
    size += _write(deep, "pod.yaml", POD.format(name="deep"))
    return Input(["check", "--render", "."], folder, size)


def _mkdirs(folder: Path, n: int) -> Path:
    """``folder/a/a/...`` n levels deep, one mkdir at a time (os.makedirs recurses)."""
    path = folder
    for _ in range(n):
        path = path / "a"
        path.mkdir()
    return path


#: A GPU Deployment of ~750 bytes (GPU020 on each: no toleration of the GPU taint).
DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{i}\n  namespace: ml\n"
    "  labels: {{app: train, tier: gpu, team: research}}\n"
    "spec:\n  replicas: 2\n  selector: {{matchLabels: {{app: train}}}}\n  template:\n"
    "    metadata: {{labels: {{app: train}}}}\n    spec:\n      containers:\n"
    "      - name: main\n        image: registry.example/train:{i}\n"
    "        args: [--epochs, '10', --batch, '64', --data, /data/set-{i}]\n"
    "        env:\n        - {{name: A, value: '1'}}\n        - {{name: B, value: two}}\n"
    "        resources:\n          limits: {{nvidia.com/gpu: 2, cpu: '8', memory: 32Gi}}\n"
)


def big_file(n: int) -> Input:
    """One file of n MB of GPU Deployments (peak RSS over its size)."""
    folder = _fresh("big-file", n)
    target = n << 20
    parts, size, i = [], 0, 0
    while size < target:
        part = DEPLOYMENT.format(i=i)
        parts.append(part)
        size += len(part) + 4
        i += 1
    return Input(["check", "big.yaml"], folder, _write(folder, "big.yaml", "---\n".join(parts)))


def tiny_docs(n: int) -> Input:
    """n MB of one-line documents (``--- {a: 1}``): the most objects per byte."""
    folder = _fresh("tiny-docs", n)
    line = "--- {a: 1}\n"
    text = line * ((n << 20) // len(line))
    return Input(["check", "tiny.yaml"], folder, _write(folder, "tiny.yaml", text))


def many_docs(n: int) -> Input:
    """One file of n GPU Deployments (~750 bytes each), no ``&`` anywhere (20,000: 45 s)."""
    folder = _fresh("many-docs", n)
    text = "---\n".join(DEPLOYMENT.format(i=i) for i in range(n))
    return Input(["check", "many.yaml"], folder, _write(folder, "many.yaml", text))


def many_docs_anchor(n: int) -> Input:
    """``many-docs`` with one anchor and its alias in the first document (20,000: 16 s)."""
    folder = _fresh("many-docs-anchor", n)
    first = (
        DEPLOYMENT.format(i=0)
        .replace("  labels: {app: train,", "  labels: &labels {app: train,")
        .replace("    metadata: {labels: {app: train}}", "    metadata: {labels: *labels}")
    )
    text = "---\n".join([first, *(DEPLOYMENT.format(i=i) for i in range(1, n))])
    return Input(["check", "many.yaml"], folder, _write(folder, "many.yaml", text))


def distinct_scalars(n: int) -> Input:
    """One file of n ConfigMaps of ten plain values each, no two alike: the loader's table of
    typed plain scalars fills after the first few hundred and every later value is typed on
    its own, so the cost stays the same per value."""
    folder = _fresh("distinct-scalars", n)
    config = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata:\n{data}"
    text = "---\n".join(
        config.format(i=i, data="".join(f"  k{j}: v{i}x{j}\n" for j in range(10))) for i in range(n)
    )
    return Input(["check", "distinct.yaml"], folder, _write(folder, "distinct.yaml", text))


def small_docs(n: int) -> Input:
    """n documents of ~180 bytes, half of them GPU pods with a finding: at 4n = 280,000, the
    50 MB file the issue names (60 s of CPU and 1 GiB at most)."""
    folder = _fresh("small-docs", n)
    config = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\n  namespace: ml\n"
        "  labels: {{app: train, team: research}}\ndata:\n  train.yaml: 'epochs: 10'\n"
    )
    text = "---\n".join(POD.format(name=f"p{i}") if i % 2 else config.format(i=i) for i in range(n))
    return Input(["check", "small.yaml"], folder, _write(folder, "small.yaml", text))


def file_size(n: int) -> Input:
    """One ConfigMap of n MB (a block scalar of 100-character lines), then a GPU pod."""
    folder = _fresh("file-size", n)
    line = "    " + "x" * 95 + "\n"
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  blob: |\n"
        + line * ((n << 20) // len(line))
        + "---\n"
        + POD.format(name="p")
    )
    return Input(["check", "big.yaml"], folder, _write(folder, "big.yaml", text))


def many_files(n: int) -> Input:
    """n files of one pod each, 100 to a folder, found by walking ``.``."""
    folder = _fresh("many-files", n)
    size = 0
    for i in range(n):
        sub = folder / f"d{i // 100}"
        sub.mkdir(exist_ok=True)
        size += _write(sub, f"p{i}.yaml", POD.format(name=f"p{i}"))
    return Input(["check", "--jobs", "1", "."], folder, size)


def nested_configs(n: int) -> Input:
    """n folders of one pod each, every folder with a ``.gpulint.yaml`` of its own (each file
    is linted with its closest configuration: one read and one linter per configuration)."""
    folder = _fresh("nested-configs", n)
    _write(folder, ".gpulint.yaml", "ignore: []\n")
    size = 0
    for i in range(n):
        sub = folder / f"d{i}"
        sub.mkdir()
        _write(sub, ".gpulint.yaml", f"ignore: [GPU0{20 + i % 3}]\nseverity: {{GPU003: info}}\n")
        size += _write(sub, "pod.yaml", POD.format(name=f"p{i}"))
    return Input(["check", "--jobs", "1", "."], folder, size)


def consensus_files(n: int) -> Input:
    """n files of one GPU pod each, two in three tolerating ``sku=gpu:NoSchedule``: the
    cluster picture's pre-pass parses every file (the tolerating ones, then the others to
    count their GPU pods) and every third pod is a GPU020 error naming its evidence."""
    folder = _fresh("consensus-files", n)
    tolerating = POD.replace(
        "spec:\n", "spec:\n  tolerations:\n  - {{key: sku, value: gpu, effect: NoSchedule}}\n", 1
    )
    size = 0
    for i in range(n):
        sub = folder / f"d{i // 100}"
        sub.mkdir(exist_ok=True)
        text = (POD if i % 3 == 0 else tolerating).format(name=f"p{i}")
        size += _write(sub, f"p{i}.yaml", text)
    return Input(["check", "--jobs", "1", "."], folder, size)


def renamed_gpus_in_a_project(n: int) -> Input:
    """``consensus-files`` in a repository whose time-slicing configuration renames the
    shared GPUs, and n/10 device plugin DaemonSets that tolerate the taint: the device
    plugins' files are read first, so each file's tolerations are read once, with the
    renamed registry."""
    folder = _fresh("renamed-gpus-in-a-project", n)
    (folder / ".git").mkdir(exist_ok=True)
    tolerating = POD.replace(
        "spec:\n", "spec:\n  tolerations:\n  - {{key: sku, value: gpu, effect: NoSchedule}}\n", 1
    )
    size = _write(folder, "time-slicing.yaml", PLUGIN_CONFIG.format(i=0))
    for i in range(n):
        sub = folder / f"d{i // 100}"
        sub.mkdir(exist_ok=True)
        text = (POD if i % 3 == 0 else tolerating).format(name=f"p{i}")
        if i % 10 == 0:
            text += "---\n" + PLUGIN_DAEMONSET.format(i=i)
        size += _write(sub, f"p{i}.yaml", text)
    return Input(["check", "--jobs", "1", "--no-cache", "."], folder, size)


PLUGIN_DAEMONSET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {{name: nvidia-device-plugin-{i}, namespace: kube-system}}
spec:
  selector: {{matchLabels: {{app: plugin-{i}}}}}
  template:
    metadata: {{labels: {{app: plugin-{i}}}}}
    spec:
      tolerations:
      - {{key: sku, value: gpu, effect: NoSchedule}}
      containers:
      - name: nvidia-device-plugin-ctr
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.0
        args: ["--config-file=/config/config.yaml"]
"""


def one_file_of_a_project(n: int) -> Input:
    """``gpulint check`` of one file (as pre-commit runs it) in a project of n files of one
    GPU pod each, two in three tolerating ``sku=gpu:NoSchedule``: the file's facts are its
    project's, so the project's files are read (gpulint.commands.projects)."""
    folder = consensus_files(n).cwd
    return Input(["check", "--jobs", "1", "d0/p0.yaml"], folder, 0)


def _warm(case: Input) -> None:
    """Run ``gpulint check .`` on the case's folder once, so that its project's cache
    (.gpulint_cache: facts and findings) is warm for the measured run."""
    subprocess.run(
        [GPULINT, "check", "--jobs", "1", "."],
        cwd=case.cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


def warm_project(n: int) -> Input:
    """``consensus-files`` a second time: every file's facts and findings come from the
    project's cache (gpulint.lint.kept), so no file is parsed; what is left is a stat and a
    cache lookup per file."""
    case = consensus_files(n)
    _warm(case)
    return case


def warm_one_file_of_a_project(n: int) -> Input:
    """``one-file-of-a-project`` with the project's cache warm (a pre-commit run after the
    first): the other files are not read, their facts come from the cache by size and
    modification time."""
    folder = consensus_files(n).cwd
    _warm(Input([], folder))
    return Input(["check", "--jobs", "1", "d0/p0.yaml"], folder, 0)


def warm_one_file_a_fact_changed(n: int) -> Input:
    """``warm-one-file-of-a-project`` after another file that tolerates the taint was edited:
    the project's facts as built no longer hold, so they are built again from every other
    file's record in the cache (the edited file alone is parsed)."""
    folder = consensus_files(n).cwd
    _warm(Input([], folder))
    edited = folder / "d0" / "p1.yaml"
    edited.write_text(edited.read_text().replace("name: p1\n", "name: p1-edited\n", 1))
    return Input(["check", "--jobs", "1", "d0/p0.yaml"], folder, 0)


def projects_per_run(n: int) -> Input:
    """n repositories in one folder, three GPU pods each (two tolerating a taint of their
    own): each project's facts are gathered from its files alone."""
    folder = _fresh("projects-per-run", n)
    size = 0
    for i in range(n):
        sub = folder / f"repo{i}"
        (sub / ".git").mkdir(parents=True)
        tolerating = POD.replace(
            "spec:\n",
            f"spec:\n  tolerations:\n  - {{{{key: sku{i}, value: gpu, effect: NoSchedule}}}}\n",
            1,
        )
        for j in range(3):
            text = (POD if j == 0 else tolerating).format(name=f"p{j}")
            size += _write(sub, f"p{j}.yaml", text)
    return Input(["check", "--jobs", "1", "."], folder, size)


DRA_TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: {name}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly: {{deviceClassName: gpu.nvidia.com, count: 2}}
"""
DRA_POD = """\
---
apiVersion: v1
kind: Pod
metadata:
  name: p{i}
spec:
  resourceClaims:
  - {{name: shared, resourceClaimTemplateName: shared}}
  - {{name: own, resourceClaimTemplateName: t{i}}}
  containers:
  - name: main
    image: registry.example/train:1
    command: ["torchrun", "--nproc-per-node=8", "train.py"]
    resources:
      claims: [{{name: shared}}, {{name: own}}]
"""


def dra_claims_in_a_project(n: int) -> Input:
    """One repository of n files that each define the template every pod names (``shared``)
    and one of their own, and one file of n pods that name both: each pod's claims are the
    project's (gpulint.k8s.dra), looked up once per name however often it is defined."""
    folder = _fresh("dra-claims-in-a-project", n)
    (folder / ".git").mkdir(exist_ok=True)
    size = 0
    for i in range(n):
        text = DRA_TEMPLATE.format(name="shared") + "---\n" + DRA_TEMPLATE.format(name=f"t{i}")
        size += _write(folder, f"claims{i}.yaml", text)
    size += _write(folder, "pods.yaml", "".join(DRA_POD.format(i=i) for i in range(n)))
    return Input(["check", "--jobs", "1", "pods.yaml"], folder, size)


RARE = (
    """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {{name: gpu{i}}}
spec:
  template:
    spec:
      taints: [{{key: nvidia.com/gpu, value: "true", effect: NoSchedule}}]
      requirements:
      - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [p4d]}}
---
apiVersion: v1
kind: ConfigMap
metadata: {{name: cfg{i}}}
data: {{tp: "2"}}
---
"""
    + DRA_TEMPLATE
)
RARE_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: serve}
spec:
  containers:
  - name: main
    image: vllm/vllm-openai:v0.6.0
    args: ["--tensor-parallel-size", "$(TP)"]
    env:
    - name: TP
      valueFrom: {configMapKeyRef: {name: cfg0, key: tp}}
    resources:
      limits: {nvidia.com/gpu: 2}
"""


def rare_files(n: int) -> Input:
    """One repository of n rare files (each a Karpenter NodePool, a ConfigMap and a DRA
    ResourceClaimTemplate) and a pod that reads a ConfigMap: every fact reads every rare
    file, which is parsed once for all of them and for the lint."""
    folder = _fresh("rare-files", n)
    (folder / ".git").mkdir(exist_ok=True)
    size = _write(folder, "serve.yaml", RARE_POD)
    for i in range(n):
        size += _write(folder, f"rare{i}.yaml", RARE.format(i=i, name=f"t{i}"))
    return Input(["check", "--jobs", "1", "."], folder, size)


TORCHRUN_JOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: ddp}}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: nvcr.io/nvidia/pytorch:24.08-py3
            command: [bash, -c, "{line}"]
            resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def torchrun_command_words(n: int) -> Input:
    """One PyTorchJob whose shell command holds n launcher words and then n ``--nnodes``
    options (GPU045 reads torchrun's options as GPU041 reads an engine's): the work grows
    with the command's length, not with launchers times the words after them."""
    folder = _fresh("torchrun-command-words", n)
    (folder / ".git").mkdir(exist_ok=True)
    line = " ".join(["torchrun"] * n + ["--nnodes=3"] * n)
    size = _write(folder, "ddp.yaml", TORCHRUN_JOB.format(line=line))
    return Input(["check", "--jobs", "1", "--select", "GPU045", "."], folder, size)


VLLM_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: vllm}}
spec:
  selector: {{matchLabels: {{app: vllm}}}}
  template:
    metadata: {{labels: {{app: vllm}}}}
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        command: [bash, -c, "{line}"]
        resources: {{limits: {{nvidia.com/gpu: 1}}}}
"""


def malformed_engine_options(n: int) -> Input:
    """One vLLM Deployment whose shell command holds n options written with three hyphens
    and n with an em dash (GPU069): each word is looked at once, and the command line is
    reported once, whatever its length."""
    folder = _fresh("malformed-engine-options", n)
    (folder / ".git").mkdir(exist_ok=True)
    line = " ".join(["vllm serve m"] + ["---trust-remote-code"] * n + ["\u2014tp"] * n)
    size = _write(folder, "serve.yaml", VLLM_DEPLOYMENT.format(line=line))
    return Input(["check", "--jobs", "1", "--select", "GPU069", "."], folder, size)


def _one_container_job(case: str, n: int, image: str, fields: str, code: str) -> Input:
    """A folder (of its own project) holding one Job whose one container has ``image`` and
    ``fields`` (container fields, written at the container's indentation), linted with
    ``code`` only."""
    folder = _fresh(case, n)
    (folder / ".git").mkdir(exist_ok=True)
    text = (
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: steps}\nspec:\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers:\n      - name: steps\n"
        f"        image: {image}\n" + fields
    )
    size = _write(folder, "job.yaml", text)
    return Input(["check", "--jobs", "1", "--select", code, "."], folder, size)


def broken_continuations(n: int) -> Input:
    """One Job whose shell script has n lines, each ending in a backslash and a space
    (GPU070, a finding for each): a line's number is counted on from the last finding's,
    not from the script's start."""
    script = "".join(f"            echo step{i} \\ \n" for i in range(n))
    fields = "        command: [sh, -c]\n        args:\n        - |\n" + script
    return _one_container_job("broken-continuations", n, "busybox:1.36", fields, "GPU070")


def folded_arguments(n: int) -> Input:
    """One Job whose container's command has n items, each written over two lines (GPU073,
    a finding for each): the loader notes each such item's path in the layout pass that
    visits every multi-line item already, and the rule asks that set once per item."""
    items = "".join(f"        - --option-{i}=value\n          --next-{i}=1\n" for i in range(n))
    fields = "        command:\n        - /app/run\n" + items
    return _one_container_job(
        "folded-arguments", n, "registry.example.com/app:1.0", fields, "GPU073"
    )


def env_references(n: int) -> Input:
    """One Job whose container has n env entries, each referring to the one above it and to
    the image's PATH (GPU074, a finding for each but the first's reference): the variables
    set so far are kept in a set, so each reference is looked up once."""
    entries = "".join(
        f"        - name: V{i}\n          value: $(V{i - 1}):$(PATH)\n" for i in range(n)
    )
    fields = "        env:\n" + entries
    return _one_container_job("env-references", n, "registry.example.com/app:1.0", fields, "GPU074")


def init_only_mounts(n: int) -> Input:
    """One Job whose pod has n init containers, each mounting a volume of its own at a path
    20 levels deep, and n containers, each mounting a volume of its own beside them and
    running a script that names two of the init containers' paths (GPU071, a finding for
    each container): each written path is looked up at a
    bounded number of its components, and each container's mounts are indexed once, so the
    work grows with the pod, not with containers times the init containers' paths."""
    folder = _fresh("init-only-mounts", n)
    (folder / ".git").mkdir(exist_ok=True)
    deep = "/".join(f"d{j}" for j in range(20))
    paths = [f"/work/{deep}/v{i}" for i in range(n)]
    lines = [
        "apiVersion: batch/v1",
        "kind: Job",
        "metadata: {name: many-inits}",
        "spec:",
        "  template:",
        "    spec:",
        "      restartPolicy: Never",
        "      initContainers:",
    ]
    for i, path in enumerate(paths):
        lines += [
            f"      - name: init{i}",
            "        image: busybox:1.36",
            f"        volumeMounts: [{{name: v{i}, mountPath: {path}}}]",
        ]
    lines.append("      containers:")
    for i in range(n):
        lines += [
            f"      - name: app{i}",
            "        image: busybox:1.36",
            f'        command: [sh, -c, "ls {paths[i]}/x && ls {paths[(i + 1) % n]}/x"]',
            f"        volumeMounts: [{{name: a{i}, mountPath: /work/{deep}/a{i}}}]",
        ]
    lines.append("      volumes:")
    lines += [f"      - {{name: {v}{i}, emptyDir: {{}}}}" for v in "va" for i in range(n)]
    size = _write(folder, "job.yaml", "\n".join(lines) + "\n")
    return Input(["check", "--jobs", "1", "--select", "GPU071", "."], folder, size)


SERVING_PAIR = """\
apiVersion: serving.kserve.io/v1alpha1
kind: ServingRuntime
metadata: {{name: rt{i}}}
spec:
  supportedModelFormats: [{{name: vLLM}}]
  containers:
  - name: kserve-container
    image: vllm/vllm-openai:v0.8.5
    volumeMounts: [{{name: shm, mountPath: /dev/shm}}]
  volumes: [{{name: shm, emptyDir: {{medium: Memory}}}}]
"""
SERVING_PREDICTOR = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {{name: llm{i}}}
spec:
  predictor:
    tolerations: [{{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}]
    model:
      runtime: rt{i}
      modelFormat: {{name: vLLM}}
      args: [--tensor-parallel-size=2]
      resources: {{limits: {{nvidia.com/gpu: 2}}}}
"""


def serving_runtimes_in_a_project(n: int) -> Input:
    """One repository of n KServe serving runtimes, each in a file of its own, and n
    InferenceServices in another folder, each naming one: every predictor's /dev/shm is its
    runtime's (GPU042), found by name among the project's runtimes."""
    folder = _fresh("serving-runtimes", n)
    for sub in (".git", "runtimes", "services"):
        (folder / sub).mkdir(exist_ok=True)
    size = 0
    for i in range(n):
        size += _write(folder / "runtimes", f"rt{i}.yaml", SERVING_PAIR.format(i=i))
        size += _write(folder / "services", f"llm{i}.yaml", SERVING_PREDICTOR.format(i=i))
    return Input(["check", "--jobs", "1", "."], folder, size)


ENVFROM_CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: media}
data: {TZ: UTC, NVIDIA_VISIBLE_DEVICES: all}
"""
ENVFROM_APP = """\
apiVersion: v1
kind: Secret
metadata: {{name: app{i}}}
stringData: {{API_KEY{i}: change-me}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: app{i}}}
spec:
  selector: {{matchLabels: {{app: app{i}}}}}
  template:
    metadata: {{labels: {{app: app{i}}}}}
    spec:
      runtimeClassName: nvidia
      containers:
      - name: main
        image: registry.example.internal/media:1.0
        envFrom:
        - configMapRef: {{name: media}}
        - secretRef: {{name: app{i}}}
"""


def envfrom_secrets_in_a_project(n: int) -> Input:
    """One repository of n files, each a Secret and a workload that takes its variables
    through ``envFrom`` from the project's ConfigMap, then from its Secret: every Secret's
    key names are read once for the project (GPU016, GPU043), never its values."""
    folder = _fresh("envfrom-secrets-in-a-project", n)
    (folder / ".git").mkdir(exist_ok=True)
    size = _write(folder, "config.yaml", ENVFROM_CONFIG)
    for i in range(n):
        size += _write(folder, f"app{i}.yaml", ENVFROM_APP.format(i=i))
    return Input(["check", "--jobs", "1", "."], folder, size)


PLUGIN_CONFIG = """\
apiVersion: v1
kind: ConfigMap
metadata: {{name: time-slicing-{i}}}
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
          rename: nvidia.com/shared-{i}
"""


def plugin_facts_inspected(n: int) -> Input:
    """``gpulint inspect`` of one pod in a repository of n device plugin configurations,
    each renaming the shared GPUs: every learned name is shown with its place."""
    folder = _fresh("plugin-facts-inspected", n)
    (folder / ".git").mkdir(exist_ok=True)
    size = _write(folder, "pod.yaml", POD.format(name="p"))
    for i in range(n):
        size += _write(folder, f"plugin{i}.yaml", PLUGIN_CONFIG.format(i=i))
    return Input(["inspect", "pod.yaml"], folder, size, (0,))


def toleration_shapes(n: int) -> Input:
    """n GPU pods that each tolerate the same key with a value of their own: no taint is
    agreed on, and looking for one stays linear (a bounded number of candidates)."""
    folder = _fresh("toleration-shapes", n)
    docs = [
        POD.replace(
            "spec:\n",
            f"spec:\n  tolerations:\n  - {{{{key: sku, value: v{i}, effect: NoSchedule}}}}\n",
            1,
        ).format(name=f"p{i}")
        for i in range(n)
    ]
    size = _write(folder, "pods.yaml", "---\n".join(docs))
    return Input(["check", "--jobs", "1", "."], folder, size)


def tolerations_per_pod(n: int) -> Input:
    """Twenty GPU pods in one repository, each tolerating the same n taints (keys of their
    own) and one pod tolerating none: the project's pods agree on n taints, and each pod's
    tolerations are matched against every agreed taint."""
    folder = _fresh("tolerations-per-pod", n)
    rows = "".join(
        f"  - {{{{key: example.com/k{j}, value: v, effect: NoSchedule}}}}\n" for j in range(n)
    )
    tolerating = POD.replace("spec:\n", f"spec:\n  tolerations:\n{rows}", 1)
    docs = [tolerating.format(name=f"p{i}") for i in range(20)] + [POD.format(name="lone")]
    size = _write(folder, "pods.yaml", "---\n".join(docs))
    return Input(["check", "--jobs", "1", "--no-cache", "."], folder, size)


def kueue_flavor_resources(n: int) -> Input:
    """One Kueue ClusterQueue whose flavor lists n resources (n covered) and one of them
    again: GPU031 looks for a repeated name once per resource, not against every other."""
    folder = _fresh("kueue-flavor-resources", n)
    names = [f"example.com/r{i}" for i in range(n)]
    covered = "".join(f"    - {name}\n" for name in names)
    rows = "".join(f"      - {{name: {name}, nominalQuota: 1}}\n" for name in [*names, names[0]])
    text = (
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: q\n"
        "spec:\n  resourceGroups:\n  - coveredResources:\n"
        + covered
        + "    flavors:\n    - name: f\n      resources:\n"
        + rows
    )
    return Input(["check", "cq.yaml"], folder, _write(folder, "cq.yaml", text))


_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: model{i}s.serving.example.org}}
spec:
  group: serving.example.org
  names: {{kind: Model{i}, plural: model{i}s}}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              resources:
                type: object
                properties:
                  gpu: {{type: object, properties: {{count: {{type: integer}}}}}}
                  limits:
                    type: object
                    additionalProperties: {{x-kubernetes-int-or-string: true}}
"""
_MODEL = """\
apiVersion: serving.example.org/v1
kind: Model{i}
metadata: {{name: m{i}}}
spec:
  resources:
    gpu: {{count: 1}}
    limits: {{memory: 16Gi}}
"""


def chart_crds_and_examples(n: int) -> Input:
    """A repository holding one chart folder: n templates that each insert a file of its
    own (``.Files.Get``), n CRDs in its ``crds/`` and n resources of those kinds in its
    ``examples/``, each with the field its CRD declares beside its limits. The walk matches
    each file of the folder against the inserted names once (not every template again), the
    examples and CRDs are linted as plain YAML, and each resource's field is looked up in
    the project's CRDs by its kind."""
    folder = _fresh("chart-crds-and-examples", n)
    (folder / ".git").mkdir(exist_ok=True)
    chart = folder / "chart"
    for sub in ("templates", "files", "crds", "examples"):
        (chart / sub).mkdir(parents=True, exist_ok=True)
    size = _write(chart, "Chart.yaml", "apiVersion: v2\nname: models\nversion: 0.1.0\n")
    for i in range(n):
        insert = f'{{{{ .Files.Get "files/f{i}.yaml" }}}}\n'
        size += _write(chart / "templates", f"t{i}.yaml", insert)
        size += _write(chart / "files", f"f{i}.yaml", POD.format(name=f"f{i}"))
        size += _write(chart / "crds", f"crd{i}.yaml", _CRD.format(i=i))
        size += _write(chart / "examples", f"m{i}.yaml", _MODEL.format(i=i))
    return Input(["check", "--jobs", "1", "--no-cache", "."], folder, size)


_CONTAINER = (
    "  - name: c{i}\n    image: registry.example/train:1\n    resources:\n"
    "      requests:\n{comment}        nvidia.com/gpu: 1\n"
)
_POD_HEAD = (
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
    "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
    "  containers:\n"
)


def findings_per_file(n: int) -> Input:
    """One pod of n containers, each requesting a GPU without a limit (n GPU001 findings)."""
    folder = _fresh("findings-per-file", n)
    text = _POD_HEAD + "".join(_CONTAINER.format(i=i, comment="") for i in range(n))
    return Input(["check", "pod.yaml"], folder, _write(folder, "pod.yaml", text))


def suppression_comments(n: int) -> Input:
    """``findings-per-file`` with each finding silenced by its own ``disable-next-line``."""
    folder = _fresh("suppression-comments", n)
    comment = "        # gpulint: disable-next-line=GPU001 -- limits set by the operator\n"
    text = _POD_HEAD + "".join(_CONTAINER.format(i=i, comment=comment) for i in range(n))
    return Input(["check", "pod.yaml"], folder, _write(folder, "pod.yaml", text))


def inventory_nodes(n: int) -> Input:
    """A ``--cluster`` inventory (``kubectl get nodes -o json``) of n nodes, ten GPU pods."""
    import json

    from cluster import inventory  # bench/cluster.py: nodes as kubectl prints them

    folder = _fresh("inventory-nodes", n)
    size = _write(folder, "nodes.json", json.dumps(inventory(n), indent=4, sort_keys=True))
    text = "---\n".join(POD.format(name=f"p{i}") for i in range(10))
    size += _write(folder, "pods.yaml", text)
    return Input(["check", "--cluster", "nodes.json", "pods.yaml"], folder, size)


def shared_slices_nodes(n: int) -> Input:
    """A ``--cluster`` inventory of n nodes and n ResourceSlices of four GPUs each: a quarter
    one node's own (``nodeName``), a quarter for one node by a ``kubernetes.io/hostname``
    selector, a quarter for a node pool by its label, a quarter one device per node
    (``perDeviceNodeSelection``); one slice for all nodes; ten pods whose claim asks for
    four GPUs. Each shared slice is matched against the nodes its selector's label index
    leaves (gpulint.cluster.slices), not against every node."""
    import json

    from cluster import inventory

    folder = _fresh("shared-slices-nodes", n)
    data = inventory(n)
    nodes: list[Any] = data["items"]  # type: ignore[assignment]
    labels = [x["metadata"]["labels"] for x in nodes]

    def gpus(count: int, **where: Any) -> list[dict[str, Any]]:
        return [
            {"name": f"gpu-{i}", "attributes": {"type": {"string": "gpu"}}, **where}
            for i in range(count)
        ]

    def piece(i: int, **spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"slice-{i}"},
            "spec": {"driver": "gpu.nvidia.com", "pool": {"name": f"p{i}"}, **spec},
        }

    def selector(key: str, value: str) -> dict[str, Any]:
        term = {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
        return {"nodeSelectorTerms": [term]}

    host, pool = "kubernetes.io/hostname", "cloud.google.com/gke-nodepool"
    slices = [piece(n, allNodes=True, devices=gpus(1))]
    for i in range(n):
        mine = labels[i % len(labels)]
        if i % 4 == 0:
            slices.append(piece(i, nodeName=mine[host], devices=gpus(4)))
        elif i % 4 == 1:
            slices.append(piece(i, nodeSelector=selector(host, mine[host]), devices=gpus(4)))
        elif i % 4 == 2:
            slices.append(piece(i, nodeSelector=selector(pool, mine[pool]), devices=gpus(4)))
        else:
            each = [{**d, "nodeName": mine[host]} for d in gpus(4)]
            slices.append(piece(i, perDeviceNodeSelection=True, devices=each))
    data["items"] = [*nodes, *slices]
    size = _write(folder, "nodes.json", json.dumps(data, indent=1, sort_keys=True))
    claim = DRA_TEMPLATE.format(name="four").replace("count: 2", "count: 4")
    pods = "".join(
        DRA_POD.format(i=i)
        .replace("  - {name: own, resourceClaimTemplateName: t" + str(i) + "}\n", "")
        .replace("shared", "four")
        .replace(", {name: own}", "")
        for i in range(10)
    )
    size += _write(folder, "pods.yaml", claim + pods)
    return Input(["check", "--cluster", "nodes.json", "pods.yaml"], folder, size)


def merge_bomb(n: int) -> Input:
    """The 50-byte merge-key bomb, in a manifest (used to hang)."""
    folder = _fresh("merge-bomb", n)
    text = "a: &a {<<: [*a, *a, *a, *a, *a, *a, *a, *a], k: 1}\n"
    return Input(["check", "bomb.yaml"], folder, _write(folder, "bomb.yaml", text))


def huge_quantity(n: int) -> Input:
    """A pod with ``nvidia.com/gpu: "1e999990"`` (printed 161 MB before)."""
    folder = _fresh("huge-quantity", n)
    text = POD.format(name="p").replace("nvidia.com/gpu: 1\n", 'nvidia.com/gpu: "1e999990"\n')
    return Input(["check", "pod.yaml"], folder, _write(folder, "pod.yaml", text))


def hostile_quantities(n: int) -> Input:
    """Pods whose GPU quantities are the hostile shapes of tests/test_quantity.py, each about
    ``n`` characters long: parsing and comparing them stays linear in their digits."""
    folder = _fresh("hostile-quantities", n)
    shapes = [
        "0." + "0" * n + "1",
        "9" * n + "Ei",
        "9" * n + "." + "9" * n + "Ki",
        "1e" + "0" * n + "1",
        "1e" + "9" * n,
        "1." * (n // 2),
        "e" * n,
        "-" + "0" * n,
        "--a" + "-" * n + "x",  # almost a placeholder between runs of dashes
        "--a" + "-b" * (n // 2) + "--x",
    ]
    text = "---\n".join(
        POD.format(name=f"p{i}").replace("nvidia.com/gpu: 1\n", f'nvidia.com/gpu: "{shape}"\n')
        for i, shape in enumerate(shapes)
    )
    return Input(["check", "pods.yaml"], folder, _write(folder, "pods.yaml", text))


def conflict_markers(n: int) -> Input:
    """A values file (no ``apiVersion``) and a CI workflow (another tool's file, not parsed),
    each holding one merge conflict of n lines a side, and a third file of n ``<<<<<<<``
    lines, a ``=======`` and no closer: each text is scanned once for the markers."""
    folder = _fresh("conflict-markers", n)
    ours, theirs = "  version: '535.104.05'\n" * n, "  version: '470.82.01'\n" * n
    conflict = f"<<<<<<< HEAD\n{ours}=======\n{theirs}>>>>>>> feature/bump\n"
    (folder / ".github").mkdir()
    size = _write(folder, "values.yaml", "driver:\n  enabled: true\n" + conflict)
    size += _write(folder / ".github", "ci.yml", "on: push\njobs:\n  a:\n" + conflict)
    size += _write(folder, "open.yaml", "a: 1\n" + "<<<<<<< HEAD\n" * n + "=======\n")
    return Input(["check", "."], folder, size)


def crlf_comments(n: int) -> Input:
    """A file of n comment lines with Windows line ends and no object (a manifest commented
    out on Windows), and a Job whose command holds n here-document openings none of which is
    closed, beside a GPU request in its text: the MIME test reads each comment line one way,
    and the here-documents are found in one pass over the lines."""
    folder = _fresh("crlf-comments", n)
    size = _write(folder, "commented.yaml", "# kind: Job\r\n" * n + "#   nvidia.com/gpu: 1")
    script = "echo nvidia.com/gpu: 1\n" + "cat <<EOF\n" * n
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: apply\nspec:\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers:\n      - name: kubectl\n"
        "        image: bitnami/kubectl:1.33\n        command: [sh, -c]\n        args:\n"
        f"        - {json.dumps(script)}\n"
    )
    size += _write(folder, "job.yaml", job)
    return Input(["check", "."], folder, size)


def bare_placeholders(n: int) -> Input:
    """A file another program fills in that fails to parse, with n bare placeholders glued to
    their keys (``annotations:NLB_ANNOTATIONS``), between ``%`` and alone on their lines as
    ``<name>``, among n Go actions: each placeholder is told from the actions with one search
    (GL205)."""
    folder = _fresh("bare-placeholders", n)
    lines = "".join(
        f"  a{i}:ANNOTATIONS_{i}\n  b{i}: '{{{{ .Values.v{i} }}}}'\n  c{i}: %CODE_{i}%\n"
        f"  <key{i}>\n"
        for i in range(n)
    )
    size = _write(
        folder, "service-template.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n" + lines
    )
    return Input(["check", "."], folder, size)


def values_duplicates(n: int) -> Input:
    """A chart's values file (no ``apiVersion``) that writes ``singleuser:`` n times, each
    block setting a GPU: each duplicate's dropped block is read for an accelerator from the
    text's lines, split once for the file (YML002)."""
    folder = _fresh("values-duplicates", n)
    block = "singleuser:\n  extraResource:\n    limits:\n      nvidia.com/gpu: 1\n"
    size = _write(folder, "values.yaml", block * n)
    return Input(["check", "."], folder, size)


def operator_fields(n: int) -> Input:
    """A ClusterPolicy whose ``spec.driver`` holds n keys that are no field: each is looked up
    in the level's field table once and searched for a near miss among that level's few dozen
    fields (GPU049)."""
    folder = _fresh("operator-fields", n)
    keys = "".join(f"    option{i}: true\n" for i in range(n))
    head = "apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nmetadata:\n  name: p\n"
    text = f"{head}spec:\n  driver:\n{keys}"
    size = _write(folder, "cluster-policy.yaml", text)
    return Input(["check", "."], folder, size)


def mounts_without_volumes(n: int) -> Input:
    """A Deployment whose container mounts n volumes of which the pod defines n/2: each mount
    is looked up in the pod's volume names once (GPU032)."""
    folder = _fresh("mounts-without-volumes", n)
    mounts = "".join(f"        - name: v{i}\n          mountPath: /m{i}\n" for i in range(n))
    volumes = "".join(f"      - name: v{i}\n        emptyDir: {{}}\n" for i in range(0, n, 2))
    text = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n"
        "  selector:\n    matchLabels: {app: d}\n  template:\n    metadata:\n"
        "      labels: {app: d}\n    spec:\n      containers:\n      - name: c\n"
        "        image: x\n        volumeMounts:\n" + mounts + "      volumes:\n" + volumes
    )
    size = _write(folder, "deployment.yaml", text)
    return Input(["check", "."], folder, size)


def jupyterhub_profiles(n: int) -> Input:
    """JupyterHub chart values with n profiles, each overriding the environment, under an
    ``extraEnv`` of n variables: every profile inherits them all, so the settings read are
    bounded by their sum (``MAX_SETTINGS``), not by n squared (GPU034)."""
    folder = _fresh("jupyterhub-profiles", n)
    env = "".join(f"    VAR_{i}: v\n" for i in range(n))
    profiles = "".join(
        f"    - display_name: p{i}\n      kubespawner_override:\n"
        f"        extra_resource_limits: {{nvidia.com/gpu: '1'}}\n"
        f"        environment: {{NVIDIA_VISIBLE_DEVICES: '{i % 8}'}}\n"
        for i in range(n)
    )
    text = f"proxy:\n  secretToken: x\nsingleuser:\n  extraEnv:\n{env}  profileList:\n{profiles}"
    size = _write(folder, "config.yaml", text)
    return Input(["check", "."], folder, size)


def plugin_configs(n: int) -> Input:
    """A ConfigMap of n named NVIDIA device plugin configurations, each an MPS block with
    ``replicas`` outside ``resources``, and n/10 ConfigMaps that hold ten such configurations
    inside a patch's text: each text is read once, a text inside a text once more, and the
    findings inside texts are placed with the file's line index made once (GPU035)."""
    folder = _fresh("plugin-configs", n)
    config = "version: v1\nsharing:\n  mps:\n    replicas: 4\n"
    data = "".join(f"  c{i}: |\n" + _indent(config, 4) for i in range(n))
    inner = "".join(f"        c{i}: |\n" + _indent(config, 10) for i in range(10))
    patched = "".join(
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: patched-{j}\n"
        "data:\n  patch: |\n    - op: add\n      path: /data\n      value:\n" + inner
        for j in range(max(1, n // 10))
    )
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: plugin\ndata:\n" + data + patched
    size = _write(folder, "plugin.yaml", text)
    return Input(["check", "."], folder, size)


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "".join(pad + line + "\n" for line in text.splitlines())


def umbrella_values(n: int) -> Input:
    """A chart with no templates of its own that hands app-template the values of n
    controllers, each a container under NVIDIA's runtime: linted as written without
    --render, its containers found by their shape once each (GPU016)."""
    folder = _fresh("umbrella-values", n)
    chart = folder / "app"
    chart.mkdir()
    _write(chart, "Chart.yaml", "apiVersion: v2\nname: app\nversion: 0.0.0\n")
    controllers = "".join(
        f"    c{i}:\n      containers:\n        main:\n          image:\n"
        f"            repository: lscr.io/linuxserver/jellyfin\n            tag: '10'\n"
        f"          env:\n            NVIDIA_VISIBLE_DEVICES: all\n"
        for i in range(n)
    )
    text = "app-template:\n  defaultPodOptions:\n    runtimeClassName: nvidia\n"
    size = _write(chart, "values.yaml", text + "  controllers:\n" + controllers)
    return Input(["check", "."], folder, size)


#: The helm the chart cases render with (--helm, else $GPULINT_BENCH_HELM, else .tools/helm).
HELM = os.environ.get("GPULINT_BENCH_HELM", str(ROOT / ".tools" / "helm"))
#: The gpulint measured (``--gpulint``): the warm cases run it once before they are timed.
GPULINT = str(Path(sys.executable).with_name("gpulint"))

_RANGED_POD = "{{- range until %d }}\n---\n" + POD.format(name="p{{ . }}") + "{{- end }}\n"


def _chart(name: str, n: int, template: str) -> Input:
    folder = _fresh(name, n)
    chart = folder / "demo"
    (chart / "templates").mkdir(parents=True)
    _write(chart, "Chart.yaml", "apiVersion: v2\nname: demo\nversion: 0.1.0\n")
    size = _write(chart / "templates", "pods.yaml", template)
    return Input(["check", "--render", "--helm", HELM, "demo"], folder, size)


def packaged_library_helpers(n: int) -> Input:
    """A parent chart whose packaged subchart renders n GPU Deployments through its packaged
    library's loader, a chain of n helpers each including the next (``-}}``), the last
    reading ``.Values.tolerations``: each GPU020 is at the subchart's key in the parent's
    values, the archive's helpers read once and the chain followed once per object."""
    import io
    import tarfile

    folder = _fresh("packaged-library-helpers", n)
    chart = folder / "demo"
    (chart / "charts").mkdir(parents=True)
    _write(
        chart,
        "Chart.yaml",
        "apiVersion: v2\nname: demo\nversion: 0.1.0\ndependencies:\n"
        "- {name: streaming, version: 2.0.0, repository: https://charts.example.com}\n",
    )
    size = _write(chart, "values.yaml", "streaming:\n  gpus: 1\n")
    chain = "".join(
        f'{{{{- define "lib.h{i}" -}}}}\n{{{{- include "lib.h{i + 1}" . -}}}}\n{{{{- end -}}}}\n'
        for i in range(n)
    )
    last = (
        f'{{{{- define "lib.h{n}" -}}}}\n{{{{- range until {n} }}}}\n---\n'
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: s{{ . }}\nspec:\n"
        "  selector: {matchLabels: {app: s}}\n  template:\n    metadata: {labels: {app: s}}\n"
        "    spec:\n      {{- with $.Values.tolerations }}\n      tolerations:\n"
        "        {{- toYaml . | nindent 8 }}\n      {{- end }}\n      containers:\n"
        "      - name: main\n        image: registry.example/stream:1\n"
        "        resources: {limits: {nvidia.com/gpu: {{ $.Values.gpus }}}}\n"
        "{{- end }}\n{{- end -}}\n"
    )
    members = {
        "streaming/Chart.yaml": "apiVersion: v2\nname: streaming\nversion: 2.0.0\n"
        "dependencies:\n- {name: common, version: 1.0.0, repository: https://x.example}\n",
        "streaming/values.yaml": "gpus: 0\n",
        "streaming/templates/common.yaml": '{{ include "lib.h0" . }}\n',
        "streaming/charts/common/Chart.yaml": "apiVersion: v2\nname: common\ntype: library\n"
        "version: 1.0.0\n",
        "streaming/charts/common/templates/_chain.tpl": chain + last,
    }
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w:gz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (chart / "charts" / "streaming-2.0.0.tgz").write_bytes(packed.getvalue())
    size += len(packed.getvalue())
    return Input(["check", "--render", "--helm", HELM, "demo"], folder, size)


def findings_per_template(n: int) -> Input:
    """One template of n lines that renders n GPU pods, a finding each (was F x S: a 3.6 MB
    template with ``range until 2000`` did not finish in 300 s)."""
    pad = "".join(f"{{{{- /* line {i} of a long template */}}}}\n" for i in range(n))
    return _chart("findings-per-template", n, pad + _RANGED_POD % n)


def template_size_findings(n: int) -> Input:
    """A template holding a Go comment of n times 4 KB and n pod documents, a finding each
    (each document's cut of the template copied and indexed the whole template again, and
    each range scanned it whole: 100 pods and a 3.6 MB comment took 28.5 s)."""
    comment = "{{/*\n" + ("x" * 99 + "\n") * (40 * n) + "*/}}\n"
    pods = "".join("---\n" + POD.format(name=f"p{i}") for i in range(n))
    return _chart("template-size-findings", n, comment + pods)


def rendered_output_size(n: int) -> Input:
    """One small template that renders n documents (helm's headers were each counted from
    the start of the output)."""
    doc = "{{- range until %d }}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n"
    doc += "  name: c{{ . }}\ndata: {a: b}\n{{- end }}\n"
    return _chart("rendered-output-size", n, doc % n)


_WORKERS = """\
{{- range $name, $w := .Values.workers }}
---
apiVersion: v1
kind: Pod
metadata:
  name: {{ $name }}
spec:
  tolerations:
    {{- range $w.tolerations }}
    - key: {{ .key }}
      operator: {{ .operator }}
      effect: {{ .effect }}
    {{- end }}
  containers:
  - name: main
    image: registry.example/train:1
    resources:
      {{- toYaml $w.resources | nindent 6 }}
{{- end }}
"""


def traced_values(n: int) -> Input:
    """A chart whose values hold n workers that one ``range`` renders, each with a typo in a
    toleration (traced to its values line through the marked render) and in a resource
    name (traced through the one values mapping equal to the rendered one)."""
    found = _chart("traced-values", n, _WORKERS)
    chart = found.cwd / "demo"
    worker = (
        "  w{i}:\n    tolerations:\n    - {{key: nvidia.com/gpu, operator: Exists, "
        "effect: NoSchedul}}\n    resources:\n      limits: {{nvidia.com/gpus: {n}}}\n"
    )
    values = "workers:\n" + "".join(worker.format(i=i, n=i + 1) for i in range(n))
    return found._replace(size=found.size + _write(chart, "values.yaml", values))


_NUMBERED = _WORKERS.replace(
    "{{- toYaml $w.resources | nindent 6 }}", "limits:\n        nvidia.com/gpu: {{ $w.gpus }}"
)


def traced_numbers(n: int) -> Input:
    """A chart whose values hold n workers that one ``range`` renders as n documents of one
    template, each with a fractional GPU count (a number: traced through the numbers'
    marked render, each document placed among the template's by kind and order)."""
    found = _chart("traced-numbers", n, _NUMBERED)
    chart = found.cwd / "demo"
    worker = (
        "  w{i}:\n    tolerations: [{{key: nvidia.com/gpu, operator: Exists}}]\n    gpus: 0.5\n"
    )
    values = "workers:\n" + "".join(worker.format(i=i) for i in range(n))
    return found._replace(size=found.size + _write(chart, "values.yaml", values))


_UNLIMITED = """\
apiVersion: v1
kind: Pod
metadata:
  name: p{i}
spec:
  containers:
  - name: main
    image: registry.example/train:1
    resources:
      requests:
        nvidia.com/gpu: 1
"""


def fixable_lines(n: int) -> Input:
    """``--diff`` of one plain file of n identical pods (only their names differ), each with
    a GPU requested and not limited: n fixes among lines that repeat n times (difflib over
    the whole file is quadratic in repeated lines; the diff compares the lines around the
    edits only)."""
    folder = _fresh("fixable-lines", n)
    text = "---\n".join(_UNLIMITED.format(i=i) for i in range(n))
    size = _write(folder, "pods.yaml", text)
    return Input(["check", "--no-cache", "--diff", "pods.yaml"], folder, size)


def render_set_size(n: int) -> Input:
    """A chart rendering n pods whose GPU count a values line sets (a finding each), with a
    configuration whose ``render: set:`` holds n assignments of 200 bytes (every finding
    parsed the whole ``set:`` again: 960 KB and 150 findings took 22.8 s)."""
    template = (
        f"{{{{- range until {n} }}}}\n---\n"
        + POD.format(name="p{{ . }}").replace(
            "nvidia.com/gpu: 1", "nvidia.com/gpu: {{ $.Values.gpus }}"
        )
        + "{{- end }}\n"
    )
    found = _chart("render-set-size", n, template)
    chart = found.cwd / "demo"
    size = _write(chart, "values.yaml", "gpus: 0.5\n")
    pads = "".join(f"    - pad{i}={'x' * 200}\n" for i in range(n))
    size += _write(found.cwd, ".gpulint.yaml", "render:\n  set:\n" + pads)
    return found._replace(size=found.size + size)


def fixable_values(n: int) -> Input:
    """``check --render --diff`` of a chart holding n files (in a ``.helmignore``'d folder)
    whose values hold n/50 workers, each with a GPU requested and not limited: n/50 fixes,
    each checked by rendering again (the whole chart was copied once per fix: 60 fixes
    beside 4,900 ignored files took 77.5 s)."""
    found = _chart("fixable-values", n, _WORKERS)
    chart = found.cwd / "demo"
    _write(chart, ".helmignore", "cache/\n")
    (chart / "cache").mkdir()
    for i in range(n):
        _write(chart / "cache", f"f{i}.txt", f"cached {i}\n")
    worker = (
        "  w{i}:\n    tolerations: [{{key: nvidia.com/gpu, operator: Exists}}]\n"
        "    resources:\n      requests:\n        memory: {i}Mi\n        nvidia.com/gpu: 1\n"
    )
    values = "workers:\n" + "".join(worker.format(i=i) for i in range(max(1, n // 50)))
    size = found.size + _write(chart, "values.yaml", values)
    return Input(["check", "--render", "--helm", HELM, "--diff", "demo"], found.cwd, size)


def fixable_output(n: int) -> Input:
    """``check --render --diff`` of a chart whose values hold n workers, each with a GPU
    requested and not limited, rendered as n documents of one template: n fixes planned on
    one large rendered output (each fix re-parsed the whole output, and looked up its
    document and its values line by walking them all)."""
    found = _chart("fixable-output", n, _WORKERS)
    chart = found.cwd / "demo"
    worker = (
        "  w{i}:\n    tolerations: [{{key: nvidia.com/gpu, operator: Exists}}]\n"
        "    resources:\n      requests:\n        memory: {i}Mi\n        nvidia.com/gpu: 1\n"
    )
    values = "workers:\n" + "".join(worker.format(i=i) for i in range(n))
    size = found.size + _write(chart, "values.yaml", values)
    return Input(["check", "--render", "--helm", HELM, "--diff", "demo"], found.cwd, size)


def _pod_of_gpu_containers(n: int) -> str:
    """A pod that tolerates the GPU taint, of n containers c0..c(n-1) asking for a GPU each."""
    container = (
        "  - name: c{i}\n    image: registry.example/train:1\n"
        "    resources: {{requests: {{nvidia.com/gpu: 1}}}}\n"
    )
    return (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: train\nspec:\n  tolerations:\n"
        "  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n  containers:\n"
        + "".join(container.format(i=i) for i in range(n))
    )


def overlay_findings(n: int) -> Input:
    """A Kustomize root whose one resource is a pod of n containers, a finding each (every
    finding re-read and re-parsed the file). One object: kustomize's own time grows with
    the square of the objects' count."""
    folder = _fresh("overlay-findings", n)
    root = folder / "deploy"
    root.mkdir()
    _write(root, "kustomization.yaml", "resources:\n- pod.yaml\nnamePrefix: prod-\n")
    text = _pod_of_gpu_containers(n)
    return Input(["check", "--render", "deploy"], folder, _write(root, "pod.yaml", text))


def overlay_replacements(n: int) -> Input:
    """A Kustomize root whose pod of n containers gets each container's GPU request from a
    configMapGenerator literal through a replacement of its own (n replacements, a finding
    each, placed at its literal): each replacement's target is resolved once per object,
    and each list indexed by its key once, not once per finding."""
    folder = _fresh("overlay-replacements", n)
    root = folder / "deploy"
    root.mkdir()
    text = _pod_of_gpu_containers(n)
    replacement = (
        "- source: {{kind: ConfigMap, name: sizes, fieldPath: data.G{i}}}\n"
        "  targets:\n  - select: {{kind: Pod}}\n    fieldPaths:\n"
        "    - spec.containers.[name=c{i}].resources.requests.nvidia\\.com/gpu\n"
    )
    kustomization = (
        "resources:\n- pod.yaml\nconfigMapGenerator:\n- name: sizes\n  literals:\n"
        + "".join(f"  - G{i}=2\n" for i in range(n))
        + "replacements:\n"
        + "".join(replacement.format(i=i) for i in range(n))
    )
    size = _write(root, "kustomization.yaml", kustomization)
    return Input(["check", "--render", "deploy"], folder, size + _write(root, "pod.yaml", text))


def broken_component_roots(n: int) -> Input:
    """n Kustomize roots on one base, each naming the same two components, one of them
    broken (a patch of a path the base lacks): every root's GL200 names the roots it
    breaks, each other root built at most once a run, not once per root that fails."""
    folder = _fresh("broken-component-roots", n)
    tree = folder / "deploy"
    tree.mkdir()
    base, shm, broken = tree / "base", tree / "shm", tree / "broken"
    for d in (base, shm, broken):
        d.mkdir()
    size = _write(base, "kustomization.yaml", "resources:\n- job.yaml\n")
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\nspec:\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n"
        "        image: registry.example/train:1\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    size += _write(base, "job.yaml", job)
    head = "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n"
    size += _write(
        shm,
        "kustomization.yaml",
        head + "- patch: |-\n    - op: add\n      path: /spec/template/spec/volumes\n"
        "      value: [{name: shm, emptyDir: {medium: Memory}}]\n  target: {kind: Job}\n",
    )
    size += _write(
        broken,
        "kustomization.yaml",
        head + "- patch: |-\n    - op: replace\n      path: /spec/template/spec/nodeSelector/pool\n"
        "      value: a100\n  target: {kind: Job}\n",
    )
    root = "resources:\n- ../base\ncomponents:\n- ../shm\n- ../broken\nnameSuffix: -r{i}\n"
    for i in range(n):
        (tree / f"r{i}").mkdir()
        size += _write(tree / f"r{i}", "kustomization.yaml", root.format(i=i))
    return Input(["check", "--render", "deploy"], folder, size)


def restricted_base_roots(n: int) -> Input:
    """n Kustomize roots on one shared folder that names a file beside it (kustomize's load
    restrictor refuses it), in a repository of n Flux Kustomizations that build other
    folders: the repository's YAML is read for them once a run, and each root's GL200
    names the roots that read the folder without building them."""
    folder = _fresh("restricted-base-roots", n)
    tree = folder / "deploy"
    shared, resources, flux = tree / "shared" / "full", tree / "shared" / "resources", tree / "flux"
    for d in (shared, resources, flux):
        d.mkdir(parents=True)
    size = _write(shared, "kustomization.yaml", "resources:\n- ../resources/claim.yaml\n")
    size += _write(
        resources,
        "claim.yaml",
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec:\n"
        "  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 20Gi}}\n",
    )
    job = (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train-{i}\nspec:\n  template:\n"
        "    spec:\n      restartPolicy: Never\n      containers:\n      - name: main\n"
        "        image: registry.example/train:1\n"
        "        resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
    )
    ks = (
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n"
        "  name: other-{i}\n  namespace: flux-system\nspec:\n  path: ./elsewhere/{i}\n"
        "  interval: 30m\n  sourceRef: {{kind: GitRepository, name: home}}\n"
    )
    for i in range(n):
        root = tree / f"r{i}"
        root.mkdir()
        size += _write(root, "kustomization.yaml", "resources:\n- job.yaml\n- ../shared/full\n")
        size += _write(root, "job.yaml", job.format(i=i))
        size += _write(flux, f"ks-{i}.yaml", ks.format(i=i))
    return Input(["check", "--render", "deploy"], folder, size)


def baseline_entries(n: int) -> Input:
    """A baseline of n stale entries, half of a linted file, half of files gone (5,000: 3.6 s)."""
    import hashlib
    import json

    folder = _fresh("baseline-entries", n)
    (folder / "k8s").mkdir()
    size = _write(
        folder / "k8s", "a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
    )
    entries = [
        {
            "file": "k8s/a.yaml" if i % 2 else f"k8s/gone/{i}.yaml",
            "rule": "GPU001",
            "object": f"Pod/p{i}",
            "fingerprint": hashlib.sha256(str(i).encode()).hexdigest(),
            "message": "nvidia.com/gpu is requested without a limit",
        }
        for i in range(n)
    ]
    text = json.dumps({"gpulint-baseline": 1, "findings": entries}, indent=2) + "\n"
    _write(folder, "baseline.json", text)
    return Input(["check", "--isolated", "--baseline", "baseline.json", "k8s"], folder, size)


def declarative_schema_size(n: int) -> Input:
    """A declarative rule whose schema has n label properties (each a ``$ref`` to one
    definition), over 200 pods: loading measures the schema, every pod walks it."""
    folder = _fresh("declarative-schema-size", n)
    (folder / "policy").mkdir()
    labels = "".join(f"            l{i}: {{$ref: '#/$defs/label'}}\n" for i in range(n))
    rule = (
        "code: ORG001\nname: labels\ntarget: object\nmessage: '{name}: {error}'\n"
        "schema:\n  properties:\n    metadata:\n      properties:\n        labels:\n"
        "          required: [team]\n          properties:\n"
        + labels
        + "  $defs:\n    label: {type: string, maxLength: 63, pattern: '^[a-z0-9-]*$'}\n"
    )
    _write(folder / "policy", "labels.yaml", rule)
    _write(folder, ".gpulint.yaml", "rule-dirs: [policy]\n")
    text = "---\n".join(
        POD.format(name=f"p{i}").replace(
            "  name: p", f"  labels: {{l{i}: x, app: a}}\n  name: p", 1
        )
        for i in range(200)
    )
    return Input(["check", "pods.yaml"], folder, _write(folder, "pods.yaml", text))


_NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-{i}
spec:
  template:
    spec:
      requirements:
      - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}}
      taints:
      - {{key: example.com/pool-{i}, value: "true", effect: NoSchedule}}
"""


def pools_and_pods(n: int) -> Input:
    """n Karpenter GPU NodePools of one taint each and n GPU pods in one file, no cluster
    configured: the pools' taints are the cluster picture's evidence, and every pod may land
    on every pool (GPU020 asks of each pod which pool's taints it misses fewest of)."""
    folder = _fresh("pools-and-pods", n)
    docs = [_NODEPOOL.format(i=i) for i in range(n)]
    docs += [POD.format(name=f"p{i}") for i in range(n)]
    return Input(
        ["check", "--jobs", "1", "."], folder, _write(folder, "all.yaml", "---\n".join(docs))
    )


_OPEN_NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-{i}
spec:
  template:
    spec:
      requirements:
      - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}}
"""


def open_pools_and_pods(n: int) -> Input:
    """n untainted Karpenter GPU NodePools and n GPU pods in one file that each name a pool
    no file describes, no cluster configured: GPU020 looks for a pool that takes each pod as
    it is (through the pool index: a pool-name selector is one lookup) before it assumes
    the default taint."""
    folder = _fresh("open-pools-and-pods", n)
    docs = [_OPEN_NODEPOOL.format(i=i) for i in range(n)]
    named = "  nodeSelector: {karpenter.sh/nodepool: elsewhere}\n"
    docs += [POD.format(name=f"p{i}").replace("spec:\n", "spec:\n" + named, 1) for i in range(n)]
    return Input(
        ["check", "--jobs", "1", "."], folder, _write(folder, "all.yaml", "---\n".join(docs))
    )


_DISTINCT_POOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu-{i}
spec:
  template:
    metadata:
      labels: {{team: t{i}, example.com/rack: r{i}}}
    spec:
      requirements:
      - {{key: karpenter.k8s.aws/instance-family, operator: In, values: [g6e]}}
      taints:
      - {{key: example.com/pool-{i}, value: "true", effect: NoSchedule}}
      - {{key: example.com/tier, value: t{i}, effect: NoSchedule}}
"""

_DISTINCT_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p{i}
spec:
  nodeSelector: {{{selector}}}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {{key: example.com/zone, operator: In, values: [z{i}]}}
  tolerations:
  - {{key: example.com/other-{i}, operator: Exists, effect: NoSchedule}}
  - {{key: example.com/tier, value: t{j}, effect: NoSchedule}}
  containers:
  - name: main
    image: registry.example/train:1
    resources:
      limits:
        nvidia.com/gpu: 1
"""


def distinct_pods_pools(n: int) -> Input:
    """n Karpenter GPU NodePools and n GPU pods, every one different: each pool has labels and
    taints of its own, each pod a node selector, a node affinity and tolerations of its own
    (no two pods share a shape, so nothing is answered once for many). A third of the pods
    select one pool's label, a third select a label no pool has (every pool may take them),
    a third select a pool-name label; each pool is asked about by the pods that may land on
    it, through indexes by label and by taint, never by a walk of every pool per pod."""
    folder = _fresh("distinct-pods-pools", n)
    docs = [_DISTINCT_POOL.format(i=i) for i in range(n)]
    for i in range(n):
        selector = (
            f"team: t{i}",
            f"example.com/disk: d{i}",
            f"karpenter.sh/nodepool: gpu-{(i * 7) % n}",
        )[i % 3]
        docs.append(_DISTINCT_POD.format(i=i, j=(i * 3) % n, selector=selector))
    return Input(
        ["check", "--jobs", "1", "."], folder, _write(folder, "all.yaml", "---\n".join(docs))
    )


def described_cluster(n: int) -> Input:
    """``distinct-pods-pools`` with the cluster described (``platform: eks`` in the tree's own
    .gpulint.yaml): the n NodePools become n x 8 node shapes (one per g6e instance type) that
    the scheduler's filters (GPU050) and GPU020 judge; each pod is compared with the nodes the
    index hands it (by label, name, taint key and resource), at most 512 per pod."""
    case = distinct_pods_pools(n)
    folder = case.cwd.with_name(f"described-cluster-{n}")
    if folder.exists():
        _rmtree(folder)
    folder = case.cwd.rename(folder)
    _made.append(folder)
    _write(folder, ".gpulint.yaml", "platform: eks\n")
    return case._replace(cwd=folder)


_AGENT = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent-{i}
  namespace: gpu-operator
spec:
  selector: {{matchLabels: {{app: agent-{i}}}}}
  template:
    metadata: {{labels: {{app: agent-{i}}}}}
    spec:
      nodeSelector: {{nvidia.com/gpu.present: "true"}}
      tolerations:
      - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}
      - {{key: example.com/agent-{i}, operator: Exists, effect: NoSchedule}}
      containers:
      - name: dcgm-exporter
        image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.5-3.4.0-ubuntu22.04
"""


def agents_and_taints(n: int) -> Input:
    """n GPU node-agent DaemonSets (NVIDIA's DCGM exporter), each tolerating a key of its
    own, and n GPU NodePools of one taint each: GPU023 asks of each agent which known taints
    it misses, looked up by key, not by a walk of every taint per agent."""
    folder = _fresh("agents-and-taints", n)
    docs = [_NODEPOOL.format(i=i) for i in range(n)]
    docs += [_AGENT.format(i=i) for i in range(n)]
    return Input(
        ["check", "--jobs", "1", "."], folder, _write(folder, "all.yaml", "---\n".join(docs))
    )


def pattern_work(n: int) -> Input:
    """A rule folder of the tree whose 12 patterns are RE2's slowest kind (454 instructions
    each: RE2's DFA gives up on them and its NFA scans a value in time proportional to its
    length times the pattern's program), over one annotation of n KB: the patterns' work is
    counted against a budget that grows with the file (gpulint.util.schemacost), past which
    the object is GL900 (exit 2)."""
    folder = _fresh("pattern-work", n)
    (folder / "policy").mkdir()
    slow = "^(?:a|b)*a(?:a|b){450}$"
    shown = "".join(f"              - pattern: '{slow}{'|x' * i}'\n" for i in range(12))
    rule = (
        "code: ORG001\nname: annotations\ntarget: object\nmessage: '{name}: {error}'\n"
        "schema:\n  properties:\n    metadata:\n      properties:\n        annotations:\n"
        "          additionalProperties:\n            allOf:\n" + shown
    )
    _write(folder / "policy", "slow.yaml", rule)
    _write(folder, ".gpulint.yaml", "rule-dirs: [policy]\n")
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n"
    import random

    letters = random.Random(n).choices("ab", k=n * 1024)  # periodic text keeps RE2's DFA small
    text += f"    note: {''.join(letters)}\n"
    return Input(["check", "cm.yaml"], folder, _write(folder, "cm.yaml", text), exits=(2,))


def pyproject_folders(n: int) -> Input:
    """n folders of one pod each under a root pyproject.toml of n x 2 KB that names gpulint
    in a comment only (no table): every folder's configuration search meets it, and it is
    read and parsed once per run."""
    folder = _fresh("pyproject-folders", n)
    rows = "".join(f'dep{i} = "{"x" * 2_000}"\n' for i in range(n))
    _write(folder, "pyproject.toml", f"# tool.gpulint: not configured here\n[project]\n{rows}")
    size = 0
    for i in range(n):
        sub = folder / f"d{i}"
        sub.mkdir()
        size += _write(sub, "pod.yaml", POD.format(name=f"p{i}"))
    return Input(["check", "--jobs", "1", "."], folder, size)


def daemonset_names(n: int) -> Input:
    """n device plugin DaemonSets, each naming the resource it advertises in its args and
    env, n ConfigMaps each setting a plugin's ``resourceName``, and n pods asking for those
    names: read once in the device-plugin pre-pass."""
    folder = _fresh("daemonset-names", n)
    ds = (
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {{name: dp{i}}}\nspec:\n  template:\n"
        "    spec:\n      containers:\n      - name: p\n        image: r.example.com/dp:1\n"
        "        args: [--resource-name=nvidia.com/cc-gpu-{i}]\n"
        "        env: [{{name: NAME, value: nvidia.com/cc-gpu-{i}}}]\n"
    )
    cm = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: ix{i}}}\ndata:\n  ix-config: |-\n"
        '    resourceName: "iluvatar.com/vgpu-{i}"\n    flags: {{splitboard: false}}\n'
    )
    docs = [ds.format(i=i) for i in range(n)] + [cm.format(i=i) for i in range(n)]
    docs += [
        POD.format(name=f"p{i}").replace("nvidia.com/gpu", f"nvidia.com/cc-gpu-{i}")
        for i in range(n)
    ]
    docs += [
        POD.format(name=f"q{i}").replace("nvidia.com/gpu", f"iluvatar.com/vgpu-{i}")
        for i in range(n)
    ]
    return Input(["check", "all.yaml"], folder, _write(folder, "all.yaml", "---\n".join(docs)))


def runtime_classes(n: int) -> Input:
    """n RuntimeClasses, each tolerating a taint of its own, and n GPU pods each naming one:
    each pod looks its class up once (the project's facts stage reads the classes once)."""
    folder = _fresh("runtime-classes", n)
    rc = (
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {{name: rc{i}}}\n"
        "handler: nvidia\nscheduling:\n  tolerations:\n"
        "  - {{key: pool-{i}, operator: Exists, effect: NoSchedule}}\n"
        "  - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}\n"
    )
    size = _write(folder, "classes.yaml", "---\n".join(rc.format(i=i) for i in range(n)))
    pods = [
        POD.format(name=f"p{i}").replace("spec:\n", f"spec:\n  runtimeClassName: rc{i}\n", 1)
        for i in range(n)
    ]
    size += _write(folder, "pods.yaml", "---\n".join(pods))
    return Input(["check", "--jobs", "1", "."], folder, size)


def post_renderer_patches(n: int) -> Input:
    """A Flux HelmRelease with n post-renderer patches, each a text that sets another
    runtime class: each text is parsed once, and the values are walked once."""
    folder = _fresh("post-renderer-patches", n)
    patch = (
        "      - target: {{kind: Deployment, name: d{i}}}\n"
        "        patch: |\n"
        "          - op: add\n"
        "            path: /spec/template/spec/runtimeClassName\n"
        "            value: runc-{i}\n"
    )
    text = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: r}\n"
        "spec:\n  values:\n    ollama:\n      gpu: {enabled: false}\n"
        "  postRenderers:\n  - kustomize:\n      patches:\n"
        + "".join(patch.format(i=i) for i in range(n))
    )
    return Input(["check", "release.yaml"], folder, _write(folder, "release.yaml", text))


def pod_webhooks(n: int) -> Input:
    """n MutatingWebhookConfigurations of one pod webhook each, and n GPU pods that miss the
    taint two tolerating pods agree on: each configuration's rules are read once in the
    facts stage, and each finding names the first webhook, not a scan of them."""
    folder = _fresh("pod-webhooks", n)
    hook = (
        "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
        "metadata: {{name: w{i}}}\nwebhooks:\n- name: w{i}.example.com\n  rules:\n"
        "  - {{apiGroups: [''], apiVersions: [v1], operations: [CREATE], resources: [pods]}}\n"
    )
    size = _write(folder, "hooks.yaml", "---\n".join(hook.format(i=i) for i in range(n)))
    tolerating = POD.replace(
        "spec:\n", "spec:\n  tolerations: [{{key: sku, operator: Exists}}]\n", 1
    )
    pods = [tolerating.format(name="t0"), tolerating.format(name="t1")]
    pods += [POD.format(name=f"p{i}") for i in range(n)]
    size += _write(folder, "pods.yaml", "---\n".join(pods))
    return Input(["check", "--jobs", "1", "."], folder, size)


def chart_host_devices(n: int) -> Input:
    """An app-template HelmRelease with n containers without resources and n hostPath items
    of /dev/dri, each mounted into one container: the values are searched for host GPU
    devices once, not once per container."""
    folder = _fresh("chart-host-devices", n)
    head = (
        "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: media}\n"
        "spec:\n  values:\n    controllers:\n      media:\n        containers:\n"
    )
    containers = "".join(
        f"          c{i}:\n            image: {{repository: r.example.com/m, tag: '{i}'}}\n"
        "            securityContext: {privileged: true}\n"
        for i in range(n)
    )
    persistence = "".join(
        f"      d{i}:\n        type: hostPath\n        hostPath: /dev/dri/renderD{128 + i}\n"
        f"        advancedMounts: {{media: {{c{i}: [{{path: /dev/dri}}]}}}}\n"
        for i in range(n)
    )
    text = head + containers + "    persistence:\n" + persistence
    return Input(["check", "media.yaml"], folder, _write(folder, "media.yaml", text))


def booster_workers(n: int) -> Input:
    """A Kthena ModelBooster with n vLLM workers, each too parallel for its pod (GPU045), and a
    MaxText JobSet whose command line gives n mesh axes: each read once."""
    folder = _fresh("booster-workers", n)
    worker = (
        "    - type: w{i}\n      pods: 1\n      config: {{tensor-parallel-size: 4}}\n"
        '      resources: {{limits: {{nvidia.com/gpu: "2"}}}}\n'
    )
    booster = (
        "apiVersion: workload.serving.volcano.sh/v1alpha1\nkind: ModelBooster\n"
        "metadata: {name: b}\nspec:\n  backend:\n    type: vLLM\n    workers:\n"
        + "".join(worker.format(i=i) for i in range(n))
    )
    axes = ", ".join(f"ici_a{i}_parallelism=1" for i in range(n))
    jobset = (
        "apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: m}\nspec:\n"
        "  replicatedJobs:\n  - name: s\n    replicas: 1\n    template:\n      spec:\n"
        "        template:\n          spec:\n            nodeSelector:\n"
        "              cloud.google.com/gke-tpu-accelerator: tpu-v4-podslice\n"
        "              cloud.google.com/gke-tpu-topology: 2x2x2\n            containers:\n"
        f"            - name: t\n              command: [python3, MaxText/train.py, {axes}]\n"
    )
    text = booster + "---\n" + jobset
    return Input(["check", "all.yaml"], folder, _write(folder, "all.yaml", text))


def template_actions(n: int) -> Input:
    """A Go template of n unquoted actions and n ``{{- if }}`` lines that keep it from
    parsing, then n openers with no closer: blanked and parsed again once (GL205)."""
    folder = _fresh("template-actions", n)
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: t", "data:"]
    for i in range(n):
        lines += [f"  k{i}: {{{{ .Values.v{i} }}}}", "{{- if .Values.on }}", f"  e{i}: x"]
        lines.append("{{- end }}")
    lines += ["# {{ never closed ${ALSO_OPEN"] * n
    text = "\n".join(lines) + "\n"
    return Input(["check", "cm.yaml"], folder, _write(folder, "cm.yaml", text))


def template_action_strings(n: int) -> Input:
    """A Go template of n actions whose strings hold ``}}`` (``"{a: {b: 1}}"``) at column 1,
    then one action of n unclosed escaped quotes (``"\\"``) on one line and no closer: each
    string read once, the unclosed ones to the line's end (GL205)."""
    folder = _fresh("template-action-strings", n)
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: t", "data:"]
    for i in range(n):
        lines += [f'{{{{- $v{i} := "{{a: {{b: {i}}}}}" -}}}}', f"  k{i}: x"]
    lines.append("  z: " + "{{ " + '"\\' * n)
    text = "\n".join(lines) + "\n"
    return Input(["check", "cm.yaml"], folder, _write(folder, "cm.yaml", text))


def nccl_commands(n: int) -> Input:
    """n Jobs without a GPU, each running an inline script of 40 lines that starts a process
    group on NCCL, and n whose scripts name neither NCCL nor gloo: GPU043 looks for the
    backend in every command line, and splits into words only those that name NCCL."""
    folder = _fresh("nccl-commands", n)
    script = "".join(f"          echo step {j} of the warm-up\n" for j in range(40))
    code = "          python -c 'import torch.distributed as d; d.init_process_group(\"nccl\")'\n"
    docs = []
    for i in range(2 * n):
        docs.append(
            f"apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j{i}}}\nspec:\n  template:\n"
            "    spec:\n      restartPolicy: Never\n      containers:\n      - name: train\n"
            "        image: python:3.11-slim\n        command: [/bin/sh, -c]\n        args:\n"
            "        - |\n" + script + (code if i % 2 == 0 else "")
        )
    text = "---\n".join(docs)
    return Input(["check", "jobs.yaml"], folder, _write(folder, "jobs.yaml", text))


class Case(NamedTuple):
    make: Callable[[int], Input]
    n: int
    kind: str  # "scaling", "memory" or "once"


CASES: dict[str, Case] = {
    "stacked-next-line": Case(stacked_next_line, 4_000, "scaling"),
    "stale-suppressions": Case(stale_suppressions, 5_000, "scaling"),
    "argo-templates": Case(argo_templates, 5_000, "scaling"),
    "operator-gpu-services": Case(operator_gpu_services, 2_000, "scaling"),
    "placeholders-in-block-scalars": Case(placeholders_in_block_scalars, 5_000, "scaling"),
    "chart-gpu-blocks": Case(chart_gpu_blocks, 2_000, "scaling"),
    "production-stack-models": Case(production_stack_models, 1_000, "scaling"),
    "ollama-values-blocks": Case(ollama_values_blocks, 1_000, "scaling"),
    "gpu-operator-values-text": Case(gpu_operator_values_text, 2_000, "scaling"),
    "dcgm-metrics-records": Case(dcgm_metrics_records, 50_000, "scaling"),
    "umbrella-dependency-values": Case(umbrella_dependency_values, 10_000, "scaling"),
    "unread-chart-values": Case(unread_chart_values, 5_000, "scaling"),
    "unread-chart-text": Case(unread_chart_text, 500_000, "scaling"),
    "chart-template-versions": Case(chart_template_versions, 2_000, "scaling"),
    "kustomization-duplicates": Case(kustomization_duplicates, 1_000, "scaling"),
    "terraform-node-groups": Case(terraform_node_groups, 500, "scaling"),
    "many-paths": Case(many_paths, 5_000, "scaling"),
    "cluster-folders": Case(cluster_folders, 500, "scaling"),
    "markdown-blocks": Case(markdown_blocks, 1_000, "scaling"),
    "per-object-ignores": Case(per_object_ignores, 3_000, "scaling"),
    "globs": Case(globs, 60, "scaling"),
    "deep-folders": Case(deep_folders, 300, "scaling"),
    "baseline-entries": Case(baseline_entries, 5_000, "scaling"),
    "declarative-schema-size": Case(declarative_schema_size, 5_000, "scaling"),
    "pattern-work": Case(pattern_work, 256, "scaling"),
    "big-file": Case(big_file, 10, "memory"),
    "tiny-docs": Case(tiny_docs, 5, "memory"),
    "findings-per-template": Case(findings_per_template, 2_000, "scaling"),
    "rendered-output-size": Case(rendered_output_size, 10_000, "scaling"),
    "template-size-findings": Case(template_size_findings, 100, "scaling"),
    "overlay-findings": Case(overlay_findings, 500, "scaling"),
    "overlay-replacements": Case(overlay_replacements, 200, "scaling"),
    "broken-component-roots": Case(broken_component_roots, 10, "scaling"),
    "restricted-base-roots": Case(restricted_base_roots, 10, "scaling"),
    "packaged-library-helpers": Case(packaged_library_helpers, 50, "scaling"),
    "fixable-values": Case(fixable_values, 1_000, "scaling"),
    "fixable-output": Case(fixable_output, 250, "scaling"),
    "fixable-lines": Case(fixable_lines, 1_000, "scaling"),
    "traced-values": Case(traced_values, 500, "scaling"),
    "traced-numbers": Case(traced_numbers, 500, "scaling"),
    "render-set-size": Case(render_set_size, 500, "scaling"),
    "many-docs": Case(many_docs, 5_000, "scaling"),
    "many-docs-anchor": Case(many_docs_anchor, 5_000, "scaling"),
    "distinct-scalars": Case(distinct_scalars, 5_000, "scaling"),
    "small-docs": Case(small_docs, 70_000, "memory"),
    "file-size": Case(file_size, 10, "memory"),
    "many-files": Case(many_files, 2_500, "scaling"),
    "consensus-files": Case(consensus_files, 2_500, "scaling"),
    "renamed-gpus-in-a-project": Case(renamed_gpus_in_a_project, 1_000, "scaling"),
    "one-file-of-a-project": Case(one_file_of_a_project, 2_500, "scaling"),
    "projects-per-run": Case(projects_per_run, 500, "scaling"),
    "warm-project": Case(warm_project, 2_500, "scaling"),
    "warm-one-file-of-a-project": Case(warm_one_file_of_a_project, 2_500, "scaling"),
    "warm-one-file-a-fact-changed": Case(warm_one_file_a_fact_changed, 2_500, "scaling"),
    "dra-claims-in-a-project": Case(dra_claims_in_a_project, 1_000, "scaling"),
    "rare-files": Case(rare_files, 500, "scaling"),
    "serving-runtimes-in-a-project": Case(serving_runtimes_in_a_project, 500, "scaling"),
    "torchrun-command-words": Case(torchrun_command_words, 20_000, "scaling"),
    "malformed-engine-options": Case(malformed_engine_options, 20_000, "scaling"),
    "init-only-mounts": Case(init_only_mounts, 2_000, "scaling"),
    "folded-arguments": Case(folded_arguments, 10_000, "scaling"),
    "env-references": Case(env_references, 10_000, "scaling"),
    "broken-continuations": Case(broken_continuations, 5_000, "scaling"),
    "envfrom-secrets-in-a-project": Case(envfrom_secrets_in_a_project, 500, "scaling"),
    "plugin-facts-inspected": Case(plugin_facts_inspected, 500, "scaling"),
    "toleration-shapes": Case(toleration_shapes, 2_500, "scaling"),
    "tolerations-per-pod": Case(tolerations_per_pod, 250, "scaling"),
    "kueue-flavor-resources": Case(kueue_flavor_resources, 5_000, "scaling"),
    "chart-crds-and-examples": Case(chart_crds_and_examples, 500, "scaling"),
    "nested-configs": Case(nested_configs, 250, "scaling"),
    "pyproject-folders": Case(pyproject_folders, 100, "scaling"),
    "findings-per-file": Case(findings_per_file, 10_000, "scaling"),
    "suppression-comments": Case(suppression_comments, 10_000, "scaling"),
    "inventory-nodes": Case(inventory_nodes, 2_500, "scaling"),
    "shared-slices-nodes": Case(shared_slices_nodes, 1_000, "scaling"),
    "pools-and-pods": Case(pools_and_pods, 600, "scaling"),
    "open-pools-and-pods": Case(open_pools_and_pods, 120, "scaling"),
    "distinct-pods-pools": Case(distinct_pods_pools, 600, "scaling"),
    "described-cluster": Case(described_cluster, 300, "scaling"),
    "agents-and-taints": Case(agents_and_taints, 600, "scaling"),
    "template-actions": Case(template_actions, 20_000, "scaling"),
    "template-action-strings": Case(template_action_strings, 20_000, "scaling"),
    "daemonset-names": Case(daemonset_names, 2_000, "scaling"),
    "runtime-classes": Case(runtime_classes, 2_000, "scaling"),
    "pod-webhooks": Case(pod_webhooks, 2_000, "scaling"),
    "post-renderer-patches": Case(post_renderer_patches, 2_000, "scaling"),
    "booster-workers": Case(booster_workers, 2_000, "scaling"),
    "chart-host-devices": Case(chart_host_devices, 2_000, "scaling"),
    "nccl-commands": Case(nccl_commands, 1_000, "scaling"),
    "merge-bomb": Case(merge_bomb, 1, "once"),
    "huge-quantity": Case(huge_quantity, 1, "once"),
    "hostile-quantities": Case(hostile_quantities, 25_000, "scaling"),
    "conflict-markers": Case(conflict_markers, 50_000, "scaling"),
    "crlf-comments": Case(crlf_comments, 20_000, "scaling"),
    "bare-placeholders": Case(bare_placeholders, 20_000, "scaling"),
    "values-duplicates": Case(values_duplicates, 5_000, "scaling"),
    "operator-fields": Case(operator_fields, 5_000, "scaling"),
    "mounts-without-volumes": Case(mounts_without_volumes, 5_000, "scaling"),
    "jupyterhub-profiles": Case(jupyterhub_profiles, 10_000, "scaling"),
    "umbrella-values": Case(umbrella_values, 1_000, "scaling"),
    "plugin-configs": Case(plugin_configs, 1_000, "scaling"),
}


#: GNU time reports the command's own peak RSS. ``wait4`` would do, but Linux carries a
#: process's peak over ``exec`` from the process that forked it: this script, which may
#: have just written a 40 MB input, would be counted in.
GNU_TIME = "/usr/bin/time"


def run(gpulint: str, case: Input, timeout: float) -> Result:
    out_path = case.cwd / "stdout.txt"
    rss_path = case.cwd / "maxrss.txt"
    prefix = [GNU_TIME, "-f", "%M", "-o", str(rss_path)] if os.path.exists(GNU_TIME) else []
    start = time.perf_counter()
    with open(out_path, "wb") as out:
        proc = subprocess.Popen(
            [*prefix, gpulint, *case.args],
            cwd=case.cwd,
            stdout=out,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        timed_out = threading.Event()

        def kill() -> None:
            timed_out.set()
            os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
    wall = time.perf_counter() - start
    output = out_path.stat().st_size
    out_path.unlink()
    max_rss = usage.ru_maxrss * 1024
    if prefix:
        with contextlib.suppress(OSError, ValueError, IndexError):  # killed before it wrote
            max_rss = int(rss_path.read_text().split()[-1]) * 1024
    return Result(
        wall,
        usage.ru_utime + usage.ru_stime,
        max_rss,
        os.waitstatus_to_exitcode(status),
        timed_out.is_set(),
        output,
    )


def _time(r: Result) -> str:
    return f"> {r.wall:.0f} s (killed)" if r.timed_out else f"{r.cpu:.2f} s"


def _ratio(a: Result, b: Result, exits: tuple[int, ...] = (0, 1)) -> str:
    """The CPU ratio, or why there is none: a run killed, or one that did not lint (a
    usage or tool error, exit 2, is no measure of the path unless the case expects it)."""
    if a.timed_out or b.timed_out:
        return "4n/n CPU n/a"
    runs = (("n", a), ("4n", b))
    bad = [f"{size} exited {r.exit_code}" for size, r in runs if r.exit_code not in exits]
    if bad:
        return "4n/n CPU n/a: " + ", ".join(bad)
    return f"4n/n CPU {b.cpu / max(a.cpu, 1e-3):.1f}x"


def main() -> int:
    global OUT, HELM, GPULINT
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="repeatable")
    parser.add_argument("-n", type=int, help="the size n (default: each case's own)")
    parser.add_argument("--gpulint", default=str(Path(sys.executable).with_name("gpulint")))
    parser.add_argument("--helm", default=HELM, help="the helm of the chart cases")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds a run may take")
    parser.add_argument("--markdown", action="store_true", help="print a RESULTS.md table")
    parser.add_argument("--out", type=Path, default=OUT, help="where inputs are written")
    parser.add_argument("--keep", action="store_true", help="keep the generated inputs")
    parser.add_argument(
        "--results", type=Path, help="write the table into this file's scaling section"
    )
    parser.add_argument("--label", default="", help="a name for the build measured")
    ns = parser.parse_args()
    OUT = ns.out
    HELM = os.path.abspath(ns.helm)
    GPULINT = ns.gpulint
    rows: list[str] = []
    for name in ns.case or list(CASES):
        case = CASES[name]
        n = ns.n or case.n
        if case.kind == "once":
            r = run(ns.gpulint, case.make(n), ns.timeout)
            rows.append(
                f"| {name} | 1 input | {_time(r)} | exit {r.exit_code}, {r.output:,} bytes "
                f"of output, {r.max_rss / 2**20:.0f} MiB |"
            )
        elif case.kind == "memory":
            small, large = case.make(n), case.make(4 * n)
            a = run(ns.gpulint, small, ns.timeout)
            b = run(ns.gpulint, large, ns.timeout)
            rows.append(
                f"| {name} | {small.size / 2**20:.0f} MB / {large.size / 2**20:.0f} MB | "
                f"{_time(a)} / {_time(b)} | {_ratio(a, b)}, peak RSS {a.max_rss / 2**20:.0f} / "
                f"{b.max_rss / 2**20:.0f} MiB = {a.max_rss / small.size:.1f}x / "
                f"{b.max_rss / large.size:.1f}x the input |"
            )
        else:
            small, large = case.make(n), case.make(4 * n)
            a = run(ns.gpulint, small, ns.timeout)
            b = run(ns.gpulint, large, ns.timeout)
            ratio = _ratio(a, b, small.exits)
            rows.append(f"| {name} | {n:,} / {4 * n:,} | {_time(a)} / {_time(b)} | {ratio} |")
        print(rows[-1], flush=True)
    if not ns.keep:
        for folder in _made:
            with contextlib.suppress(OSError):
                _rmtree(folder)
    table = "| case | size n / 4n | CPU time n / 4n | result |\n|---|---|---|---|\n"
    table += "\n".join(rows) + "\n"
    if ns.markdown:
        print("\n" + table, end="")
    if ns.results:
        write_section(ns.results, ns.label, ns.gpulint, table)
    return 0


BEGIN, END = "<!-- scaling.py: begin -->", "<!-- scaling.py: end -->"


def write_section(results: Path, label: str, gpulint: str, table: str) -> None:
    """Put ``table`` into the scaling section of ``results`` (one section per label),
    keeping the rest of the file (compare.py writes the other sections)."""
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    heading = f"### {label or gpulint}"
    body = (
        f"{heading}\n\nMeasured: `{gpulint}`. By `bench/scaling.py` (checkout {commit}) on "
        f"{when}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, load average {load}."
        f"\n\n{table}"
    )
    text = results.read_text(encoding="utf-8") if results.exists() else ""
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        section, tail = rest.split(END, 1)
    else:
        head, section, tail = text.rstrip("\n") + "\n\n", "", "\n"
    # The section: an intro, then one "### label" part per build measured.
    parts = ["### " + p.strip("\n") + "\n" for p in section.split("\n### ")[1:]]
    parts = [p for p in parts if not p.startswith(heading + "\n")] + [body]
    intro = (
        "## Hostile inputs: n against 4n\n\n"
        "Written by `bench/scaling.py --results` (this section only); CPU time of the process, "
        "4n/n near 4 is linear, near 16 quadratic.\n\n"
    )
    results.write_text(
        head + BEGIN + "\n" + intro + "\n".join(parts) + END + tail, encoding="utf-8"
    )


if __name__ == "__main__":
    raise SystemExit(main())
