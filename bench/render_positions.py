"""How often a rendered chart's finding points at the line a user edits (docs/render-positions.md).

Each chart of ``CHARTS`` and overlay tree of ``TREES`` (a folder of a repository fetched at
the commit named) is linted with ``gpulint check --render``, the real helm and ``kubectl
kustomize``; every finding becomes a row of the review
sheet (docs/render-positions.tsv): chart, finding, where it is reported, and -- filled in
by hand -- the line a user would edit and the verdict:

* ``edit``: reported at the line a user edits (the values or template line holding the value);
* ``fallback``: reported at a coarser place that says so (the template line of a ``--set``
  value, an archive's member, a chart's Chart.yaml with a reason);
* ``wrong``: reported at a line whose value is not the rendered one, without a word;
* ``plain``: a file of the tree no kustomization names, linted as it is (not rendered: not
  counted).

The rate is ``edit / findings`` over the rendered findings (every verdict but ``plain``),
and also over those that have a line to edit (an ``expected`` that is not ``(none ...)``). Usage::

    python -m bench.render_positions sheet CHARTS_DIR HELM > new.tsv   # lint, new rows
    python -m bench.render_positions sheet2 CHARTS_DIR HELM > new2.tsv  # the second set
    python -m bench.render_positions sheet3 CHARTS_DIR HELM > new3.tsv  # the third (test half)
    python -m bench.render_positions sheet3-dev CHARTS_DIR HELM         # its development half
    python -m bench.render_positions sheet4 CHARTS_DIR HELM > new4.tsv  # the fourth (test half)
    python -m bench.render_positions sheet4-dev CHARTS_DIR HELM         # its development half
    python -m bench.render_positions sheet5 CHARTS_DIR HELM > new5.tsv  # the fifth (test half)
    python -m bench.render_positions sheet5-dev CHARTS_DIR HELM         # its development half
    python -m bench.render_positions sheet6 CHARTS_DIR HELM > new6.tsv  # the sixth (test half)
    python -m bench.render_positions sheet6-dev CHARTS_DIR HELM         # its development half
    python -m bench.render_positions sheet7 CHARTS_DIR HELM > new7.tsv  # the seventh (test half)
    python -m bench.render_positions sheet8 CHARTS_DIR HELM > new8.tsv  # the eighth (test half)
    python -m bench.render_positions sheet8-dev CHARTS_DIR HELM         # its development half
    python -m bench.render_positions merge OLD.tsv NEW.tsv > docs/render-positions.tsv
    python -m bench.render_positions tally docs/render-positions.tsv

``CHARTS_DIR`` holds one folder per repository, ``owner__repo`` (its ``.git`` a marker of the
repository root); ``merge`` keeps the verdicts of rows that did not change. The module
imports without the charts.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from collections import Counter
from typing import NamedTuple


class Chart(NamedTuple):
    repo: str  # owner/name
    commit: str
    folder: str  # the chart, inside the repository
    values: tuple[str, ...] = ()  # values files of the repository passed with --values
    sets: tuple[str, ...] = ()  # --set assignments
    namespace: str | None = None  # --namespace (charts that refuse `default`)
    extra: tuple[str, ...] = ()  # other flags (--kube-version)


#: Values files a user would write, for the second set (``@name`` in ``values``).
OWN_VALUES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "render_values")


_TRITON_SERVER = "e1db8a603d863b1317ee859bdeea2be19959462e"
_TRITON = "Deployment/Kubernetes/TensorRT-LLM_Autoscaling_and_Load_Balancing/chart"

#: The charts measured, with the values files and flags they are documented with.
CHARTS: tuple[Chart, ...] = (
    Chart(
        "NVIDIA/gpu-operator",
        "a22dbf671f2e26f9a1e342f8eea28e196235e110",
        "deployments/gpu-operator",
    ),
    Chart(
        "NVIDIA/k8s-device-plugin",
        "1b826acc6af3079d8923bac395c3124b8861a9a6",
        "deployments/helm/nvidia-device-plugin",
        namespace="nvidia-device-plugin",
    ),
    Chart("NVIDIA/dcgm-exporter", "d5e5f510a1b6b393f39a43293ccd9dc985defc79", "deployment"),
    Chart(
        "NVIDIA/k8s-dra-driver-gpu",
        "22407113785e78c7763b4637689a201eb39c6199",
        "deployments/helm/dra-driver-nvidia-gpu",
        namespace="nvidia-dra-driver-gpu",
    ),
    Chart(
        "NVIDIA/KAI-Scheduler",
        "72de64fc8eca10fa8cca26a20156178f3edbe092",
        "deployments/kai-scheduler",
    ),
    Chart(
        "NVIDIA/gpu-feature-discovery",
        "47a1ea6862f69844c5364c98a77aa97fe9ea7b74",
        "deployments/helm/gpu-feature-discovery",
        namespace="gpu-feature-discovery",
    ),
    Chart(
        "ray-project/kuberay",
        "feeaf72facab4881ba2b179248bb67315634e229",
        "helm-chart/ray-cluster",
        sets=("worker.resources.limits.nvidia\\.com/gpu=1",),
    ),
    Chart(
        "ray-project/kuberay",
        "feeaf72facab4881ba2b179248bb67315634e229",
        "helm-chart/kuberay-operator",
    ),
    Chart(
        "vllm-project/production-stack",
        "a6c01db05f65f556235413ba8dbcfb0c01132fff",
        "helm",
        values=("tutorials/assets/values-01-minimal-example.yaml",),
    ),
    Chart("Project-HAMi/HAMi", "4707fb02c91c545bc7343ce26dba4c32919f9a3e", "charts/hami"),
    Chart(
        "volcano-sh/volcano",
        "ed72c7c815a9fd547a787134676f73d42e9d049c",
        "installer/helm/chart/volcano",
    ),
    Chart(
        "substratusai/kubeai",
        "2f32ef498da629f96fd417ddfaaf22c28d40787e",
        "charts/kubeai",
        values=("charts/kubeai/values-nvidia-k8s-device-plugin.yaml",),
    ),
    Chart("substratusai/kubeai", "2f32ef498da629f96fd417ddfaaf22c28d40787e", "charts/models"),
    Chart(
        "otwld/ollama-helm",
        "eadf03e6d6885b4042b2d7623e2e4741f4799f78",
        ".",
        sets=("ollama.gpu.enabled=true", "ollama.gpu.number=1"),
    ),
    Chart("kubernetes-sigs/lws", "060ab4da17eea1f0865fcbd3236bb1075e2cea32", "charts/lws"),
    Chart(
        "triton-inference-server/server",
        "e1db8a603d863b1317ee859bdeea2be19959462e",
        "deploy/k8s-onprem",
    ),
    Chart(
        "kaito-project/kaito", "056b8280b1a8debf644bc6f4399e913a1f9c7e70", "charts/kaito/workspace"
    ),
    Chart("gpustack/gpustack", "47277d79f4a5bae12a2d25e9ecbed2a2177a5f2d", "charts/gpustack-chart"),
    Chart("llm-d/llm-d-deployer", "c9e16e91d264ff719d4e9885fbe5e1b239eb87a1", "charts/llm-d"),
    Chart("ROCm/k8s-device-plugin", "ed7646843003e8f0b6a0630346f01bb4d1ecff2e", "helm/amd-gpu"),
    Chart(
        "aws-neuron/neuron-helm-charts",
        "8172e5e144bd49fec836619d2a41ab8cc10e83a8",
        "charts/neuron-helm-chart",
    ),
    Chart(
        "NVIDIA/NeMo-Framework-Launcher",
        "26e42fa91d9e608897ce485b4911c263a4b57008",
        "launcher_scripts/nemo_launcher/core/k8s_templates/training",
    ),
    Chart(
        "triton-inference-server/tutorials",
        "e84895253165a887db5e25cd69d24def7a90b1ee",
        "Deployment/Kubernetes/TensorRT-LLM_Autoscaling_and_Load_Balancing/chart",
        values=(f"{_TRITON}/values.yaml", f"{_TRITON}/gpt2_values.yaml"),
        sets=("triton.image.name=nvcr.io/nvidia/tritonserver:24.08-trtllm-python-py3",),
    ),
    # the variants' own values files (GPU vendors)
    Chart(
        "opea-project/GenAIInfra",
        "9200b371d3eb08a33607b23e6f66b7ae5afc4346",
        "helm-charts/common/tgi",
        values=("helm-charts/common/tgi/nv-values.yaml",),
    ),
    Chart(
        "opea-project/GenAIInfra",
        "9200b371d3eb08a33607b23e6f66b7ae5afc4346",
        "helm-charts/common/vllm",
        values=("helm-charts/common/vllm/rocm-values.yaml",),
    ),
    Chart(
        "opea-project/GenAIInfra",
        "9200b371d3eb08a33607b23e6f66b7ae5afc4346",
        "helm-charts/common/tei",
        values=("helm-charts/common/tei/gaudi-values.yaml",),
    ),
    Chart("triton-inference-server/server", _TRITON_SERVER, "deploy/aws"),
    Chart("triton-inference-server/server", _TRITON_SERVER, "deploy/gcp"),
    Chart("pytorch/serve", "62c4d6a1fdc1d071dbcf758ebd756029af20bd5e", "kubernetes/Helm"),
    Chart("InftyAI/llmaz", "3c13ff343e28cdbe842fd3c659e3daf0d1e27e91", "chart"),
    Chart("kubeflow/arena", "e30882c143cc2be32b7ed767ae0f78681892741b", "arena-artifacts"),
    # the recipes' own values files and --set flags (their READMEs' `helm install`)
    Chart(
        "AI-Hypercomputer/gpu-recipes",
        "2e1fd5efbf1af9c08f8ac50b9d7fef2cfa675b68",
        "src/helm-charts/a3mega/vllm-inference/multi-host",
        values=("inference/a3mega/deepseek-r1-671b/vllm-serving-gke/values.yaml",),
        sets=(
            "job.image.repository=us-docker.pkg.dev/p/r/vllm",
            "clusterName=a3mega",
            "job.image.tag=v0.7.2",
            "volumes.gcsMounts[0].bucketName=models",
        ),
    ),
    Chart(
        "AI-Hypercomputer/gpu-recipes",
        "2e1fd5efbf1af9c08f8ac50b9d7fef2cfa675b68",
        "src/helm-charts/a3mega/vllm-inference/single-host",
        values=("inference/a3mega/llama-4/vllm-serving-gke/values.yaml",),
        sets=(
            "volumes.gcsMounts[0].bucketName=models",
            "job.image.repository=us-docker.pkg.dev/p/r/vllm",
            "model.name=meta-llama/Llama-4-Scout-17B-16E-Instruct",
            "vllm.serverArgs.max-model-len=1000000",
            "job.image.tag=v0.8.3",
        ),
    ),
)

#: The Kustomize overlay trees measured: each folder is linted with ``--render``, every root
#: kustomization in it built with ``kubectl kustomize``.
TREES: tuple[Chart, ...] = (
    Chart(
        "kubeflow/manifests",
        "009c88084074904c7743384ff50d3bd70012ef55",
        "applications/training-operator",
    ),
    Chart("kubeflow/manifests", "009c88084074904c7743384ff50d3bd70012ef55", "applications/kserve"),
    Chart("kserve/kserve", "aaac4e294dae2c7b1aa1886447793f3aa1c30912", "config"),
    Chart("NVIDIA/gpu-operator", "a22dbf671f2e26f9a1e342f8eea28e196235e110", "config"),
    Chart("kubeflow/trainer", "8c0f5059bd51ec3ba6d6a6a7b2e1471de7bc13b3", "manifests"),
    Chart("kubernetes-sigs/kueue", "ff69552e79ad21652c36caa97038382e55625cf7", "config"),
    Chart("ray-project/kuberay", "feeaf72facab4881ba2b179248bb67315634e229", "ray-operator/config"),
    Chart("kubernetes-sigs/lws", "060ab4da17eea1f0865fcbd3236bb1075e2cea32", "config"),
    Chart("vllm-project/aibrix", "e3e10f9e4aebe9aac5e7d992fb87d2648e01628b", "config"),
    Chart(
        "kubernetes-sigs/gateway-api-inference-extension",
        "84436a96b9e6ce2b59ddacd3d04c31b4fbd442de",
        "config",
    ),
)


#: The second, held-out set (docs/render-positions.md, "A second set"): charts the first
#: did not use, with GPUs enabled as their documentation says or by a values file a user
#: would write (bench/render_values/, ``@name``).
SECOND: tuple[Chart, ...] = (
    Chart("go-skynet/helm-charts", "d6712a40e94a5c2786c45796938d7d96534b7c82", "charts/local-ai"),
    Chart(
        "go-skynet/helm-charts",
        "d6712a40e94a5c2786c45796938d7d96534b7c82",
        "charts/local-ai",
        values=("@localai-gpu.yaml",),
    ),
    Chart(
        "allegroai/clearml-helm-charts",
        "4cd31fa843e489a905358dc8aea6fa669b5545bc",
        "charts/clearml-agent",
    ),
    Chart(
        "allegroai/clearml-helm-charts",
        "4cd31fa843e489a905358dc8aea6fa669b5545bc",
        "charts/clearml-agent",
        values=("@clearml-agent-gpu.yaml",),
    ),
    Chart(
        "allegroai/clearml-helm-charts",
        "4cd31fa843e489a905358dc8aea6fa669b5545bc",
        "charts/clearml-agent",
        values=("@clearml-agent-gpu.yaml",),
        extra=("--kube-version=1.31.0",),
    ),
    Chart(
        "allegroai/clearml-helm-charts",
        "4cd31fa843e489a905358dc8aea6fa669b5545bc",
        "charts/clearml-serving",
    ),
    Chart(
        "allegroai/clearml-helm-charts",
        "4cd31fa843e489a905358dc8aea6fa669b5545bc",
        "charts/clearml-serving",
        extra=("--kube-version=1.31.0",),
    ),
    Chart(
        "determined-ai/determined",
        "c1e9c6d7b821ef246d612bb9922f7fb1b58dcf2e",
        "helm/charts/determined",
    ),
    Chart(
        "determined-ai/determined",
        "c1e9c6d7b821ef246d612bb9922f7fb1b58dcf2e",
        "helm/charts/determined",
        values=("@determined-gpu.yaml",),
    ),
    Chart(
        "jupyterhub/zero-to-jupyterhub-k8s",
        "48ea50e34daddde55d76e30df6ecd47e4abd4d8e",
        "jupyterhub",
    ),
    Chart(
        "jupyterhub/zero-to-jupyterhub-k8s",
        "48ea50e34daddde55d76e30df6ecd47e4abd4d8e",
        "jupyterhub",
        values=("@jupyterhub-gpu.yaml",),
    ),
    Chart(
        "open-webui/helm-charts", "a6305e705ee18571c772687e1ffc3db6415a9226", "charts/open-webui"
    ),
    Chart("open-webui/helm-charts", "a6305e705ee18571c772687e1ffc3db6415a9226", "charts/pipelines"),
    Chart("h2oai/h2ogpt", "a0ad1920a847cf12a4e9c3453f6cdb736fe97ba0", "helm/h2ogpt-chart"),
    Chart(
        "h2oai/h2ogpt",
        "a0ad1920a847cf12a4e9c3453f6cdb736fe97ba0",
        "helm/h2ogpt-chart",
        values=("@h2o-gpu.yaml",),
    ),
    Chart(
        "h2oai/h2ogpt",
        "a0ad1920a847cf12a4e9c3453f6cdb736fe97ba0",
        "helm/h2ogpt-chart",
        values=("@h2o-stack-gpu.yaml",),
    ),
    Chart(
        "kubeflow/arena",
        "e30882c143cc2be32b7ed767ae0f78681892741b",
        "charts/pytorchjob",
        values=("@arena-gpu.yaml",),
    ),
    Chart(
        "kubeflow/arena",
        "e30882c143cc2be32b7ed767ae0f78681892741b",
        "charts/tfjob",
        values=("@arena-tfjob-gpu.yaml",),
    ),
    Chart(
        "kubeflow/arena",
        "e30882c143cc2be32b7ed767ae0f78681892741b",
        "charts/mpijob",
        values=("@arena-gpu.yaml",),
    ),
    Chart(
        "kubeflow/arena",
        "e30882c143cc2be32b7ed767ae0f78681892741b",
        "charts/tfserving",
        values=("@arena-gpu.yaml",),
    ),
    Chart(
        "kubeflow/arena",
        "e30882c143cc2be32b7ed767ae0f78681892741b",
        "charts/triton",
        values=("@arena-gpu.yaml",),
    ),
    Chart(
        "kubeflow/arena",
        "e30882c143cc2be32b7ed767ae0f78681892741b",
        "charts/custom-serving",
        values=("@arena-gpu.yaml",),
    ),
    Chart(
        "kubeflow/arena",
        "e30882c143cc2be32b7ed767ae0f78681892741b",
        "charts/distributed-serving",
        values=("@arena-gpu.yaml",),
    ),
    Chart(
        "llm-d-incubation/llm-d-modelservice",
        "3051935eb5a49f6df21cd6aeb5e4f05b98799262",
        "charts/llm-d-modelservice",
    ),
    Chart(
        "llm-d-incubation/llm-d-modelservice",
        "3051935eb5a49f6df21cd6aeb5e4f05b98799262",
        "charts/llm-d-modelservice",
        values=("examples/values-pd.yaml",),
    ),
    Chart(
        "llm-d-incubation/llm-d-modelservice",
        "3051935eb5a49f6df21cd6aeb5e4f05b98799262",
        "charts/llm-d-modelservice",
        values=("examples/values-dra.yaml",),
    ),
    Chart(
        "llm-d-incubation/llm-d-modelservice",
        "3051935eb5a49f6df21cd6aeb5e4f05b98799262",
        "charts/llm-d-modelservice",
        values=("examples/values-xpu.yaml",),
    ),
    Chart(
        "NVIDIA/k8s-nim-operator",
        "f63f74d7ad22eaea7943cc640e545f4ccdbb8077",
        "deployments/helm/k8s-nim-operator",
    ),
    Chart(
        "NVIDIA/nim-deploy",
        "3c6bcbd05f0c70612d2ed96112248e623035ed05",
        "cloud-service-providers/google-cloud/gke/terraform/infra/3-config/helm/ngc-cache",
    ),
    Chart(
        "NVIDIA/nim-deploy",
        "3c6bcbd05f0c70612d2ed96112248e623035ed05",
        "cloud-service-providers/azure/blueprints/cds-blueprint-aks/triton-cosmos-embed",
    ),
    Chart("sgl-project/ome", "17b77edad23bae262e0c9adb7f12039397a5d33d", "charts/ome-resources"),
    Chart(
        "sgl-project/ome",
        "17b77edad23bae262e0c9adb7f12039397a5d33d",
        "charts/ome-serving",
        sets=("models.qwen3-8b.enabled=true", "models.deepseek-r1-distill-llama-70b.enabled=true"),
    ),
    Chart(
        "ray-project/kuberay",
        "feeaf72facab4881ba2b179248bb67315634e229",
        "helm-chart/ray-cluster",
        values=("@ray-gpu.yaml",),
    ),
    Chart(
        "ray-project/kuberay",
        "feeaf72facab4881ba2b179248bb67315634e229",
        "helm-chart/ray-cluster",
        values=("@ray-gpu-notol.yaml",),
    ),
    Chart(
        "substratusai/kubeai",
        "2f32ef498da629f96fd417ddfaaf22c28d40787e",
        "charts/models",
        sets=("catalog.llama-3.1-8b-instruct-fp8-l4.enabled=true",),
    ),
)


_TF = ("truefoundry/infra-charts", "8e7de5121b9d2792f3a62db6c3c310b0948ffa13")
_SR = ("vllm-project/semantic-router", "3d48f8c9cc0d5b15067ce324a03ec6cc25f192c3")
_AI = ("redhat-ai-services/ai-accelerator", "f241ba28f3597eab06d13c2eeada2160a5e99a5e")
_WG = ("kubernetes-sigs/wg-serving", "05a48e53cbb1a23a7a51ad0fc1c7d271df84974c")
_NOS = ("nebuly-ai/nos", "12e0a7289f5b9bc3fa80036d0075467fd32cfb33")
_INTEL = ("intel/ai-containers", "2fe0df996ab408d61169045a3ba7ca34c2b91ccf")
_AZ = ("stackhpc/azimuth-llm", "e3e787ae3775223400c5d5e2ba6556f9de0c718c")
_MLB = ("project-codeflare/mlbatch", "7ca98253d83f035f5603b85dd2be0ff2cd3c927f")
_GEN = "tools/pytorchjob-generator"

#: The third set (issue 40), split by repository before any lint (the last hex digit of
#: sha256 of the lower-cased ``owner/name``: even is the development half, odd the test half);
#: charts and Kustomize trees together, each tree a folder with every root in it built.
THIRD_DEV: tuple[Chart, ...] = (
    Chart("rapidsai/helm-chart", "978f5b91b498676497f33ee8520cf33918c6663d", "rapidsai"),
    Chart(*_NOS, "helm-charts/nos"),
    Chart(
        "xorbitsai/xinference-helm-charts",
        "33cd7fb15c35a363b009c97bca1bb98a94c74658",
        "charts/xinference",
    ),
    Chart(
        "NVIDIA/knavigator",
        "06bab3726a1401761252ac62306300b7c0bc06b2",
        "charts/virtual-nodes",
        values=("charts/virtual-nodes/values-example.yaml",),
    ),
    Chart(
        "NVIDIA/knavigator",
        "06bab3726a1401761252ac62306300b7c0bc06b2",
        "charts/node-resource-exporter",
    ),
    Chart(*_INTEL, "workflows/charts/tensorflow-serving"),
    Chart(*_INTEL, "workflows/charts/torchserve"),
    Chart(*_INTEL, "workflows/charts/text-generation-inference"),
    Chart(*_AZ, "charts/azimuth-llm"),
    Chart(*_AZ, "charts/azimuth-chat"),
    Chart(*_AZ, "charts/azimuth-image-analysis"),
    Chart(*_NOS, "helm-charts/nos", namespace="nebuly-nos"),
    Chart(*_INTEL, "workflows/charts/tensorflow-serving", sets=("deploy.modelName=resnet50",)),
    Chart(
        *_INTEL,
        "workflows/charts/text-generation-inference",
        sets=("secret.encodedToken=aGZfdG9rZW4=",),
    ),
    Chart(*_MLB, f"{_GEN}/chart", values=(f"{_GEN}/examples/helloworld.settings.yaml",)),
    Chart(*_MLB, f"{_GEN}/chart", values=(f"{_GEN}/examples/helloworld-sakkara.settings.yaml",)),
    Chart(*_WG, "serving-catalog/core/deployment"),
    Chart(*_WG, "serving-catalog/core/lws"),
    Chart(*_NOS, "config"),
    Chart(*_NOS, "demos/gpu-sharing-comparison/manifests"),
    Chart(*_MLB, "setup.k8s"),
)
THIRD_TEST: tuple[Chart, ...] = (
    Chart("neuralmagic/helm-charts", "e0c03d093474ad5bcde94fa5ae5644642e9c5fa6", "charts/nm-vllm"),
    Chart("neuralmagic/helm-charts", "e0c03d093474ad5bcde94fa5ae5644642e9c5fa6", "charts/nm-vllm",
          values=("charts/nm-vllm/examples/basic/values.yaml",)),
    Chart("neuralmagic/helm-charts", "e0c03d093474ad5bcde94fa5ae5644642e9c5fa6",
          "charts/nm-vllm-production-monitoring"),
    Chart("dask/helm-chart", "e25bf5116067684b0ca2f99924b3f0b183c2dcfd", "dask",
          values=("@dask-gpu.yaml",)),
    Chart("predibase/lorax", "a7394ba386ece427d5a6125b419aa38b46d966dc", "charts/lorax"),
    Chart("chenhunghan/ialacol", "410f6729b6d3a3829fc16b720b0f71af4ec458d2", "charts/ialacol",
          values=("examples/values/llama2-7b-chat-cuda12.yaml",)),
    Chart("weaviate/weaviate-helm", "4213da523db355527cf9cb2ae80821dfdbb84f03", "weaviate",
          values=("@weaviate-gpu.yaml",)),
    Chart("SlinkyProject/slurm-operator", "f2ed3fc5325271cef6311c1f92c6c75efe122bb1",
          "helm/slurm", values=("@slurm-gpu.yaml",)),
    Chart("volcano-sh/kthena", "3cc057284c34469fcb0ed22a12dac84b1d120719", "cli/kthena/helm"),
    Chart("ROCm/gpu-operator", "6df13c1788c99dca734337287ebd317b15df9c71", "helm-charts-k8s"),
    Chart(*_SR, "deploy/kubernetes/dynamo/helm-chart"),
    Chart(*_SR, "deploy/kubernetes/dynamo/helm-chart",
          values=("deploy/kubernetes/dynamo/helm-chart/examples/values-multi-node.yaml",)),
    Chart("NVIDIA-AI-Blueprints/rag", "329875af6899d324157763ab021611e357b28213",
          "deploy/helm/nvidia-blueprint-rag"),
    *(Chart(*_TF, f"charts/{name}") for name in (
        "tfy-gpu-operator", "tfy-karpenter-config", "tfy-inferentia-operator",
        "tfy-prometheus-config", "tfy-k8s-generic-inframold", "tfy-k8s-aws-eks-inframold",
    )),
    Chart("rh-aiservices-bu/llm-on-openshift", "2b63898660f1ac651003e73a8ffe2a06b3d611f7",
          "llm-servers"),
    Chart(*_AI, "components/operators/gpu-operator-certified"),
    Chart(*_AI, "components/operators/openshift-ai"),
    Chart(*_SR, "deploy/kserve"),
    Chart(*_SR, "deploy/kubernetes/istio"),
    Chart(*_SR, "deploy/openshift"),
    Chart("project-codeflare/appwrapper", "b47a99ee8e289ddd9f968069f1fe61decbb5ef8c", "config"),
    Chart("sgl-project/rbg", "993491fba9bfdf377d3cd18c8833da20ce0ec87b", "config"),
    Chart("ROCm/gpu-operator", "6df13c1788c99dca734337287ebd317b15df9c71", "config"),
)  # fmt: skip

_SOP = ("nebius/soperator", "c238d993341a9f52b132062fbc3cb22f0fb63578")
_ARC = ("kubeagi/arcadia", "9e81fbedbf9d667c83f307fac2fa3c11cf2a055f")
_KAI = ("silogen/kaiwo", "067a6db8e714c6199c5960c8d98b0fc5c564e75e")
_IHC = ("intel/helm-charts", "110e39ef75d1f94611b8d28bb2b97d395866d1c7")
_KOO = ("koordinator-sh/charts", "a1963c5d2091853f71012c6790f9d1b1364b7734")
_TL = ("tensorleap/helm-charts", "b49dd56ac07605730d73a7dbd9c0485e4fb25001")
_CAT = ("redhat-na-ssa/demo-ai-gitops-catalog", "6545b581e3dd20115529e71222d7c861e5ba6dba")
_PAR = ("rh-aiservices-bu/parasol-insurance", "8e2aab9aa0116fffcac7ea6d738ff38d26d5d19e")

#: The fourth set (issue 40, second round), split by repository before any lint (the last
#: hex digit of sha256 of ``"issue40-r2:" + owner/name``, lower-cased: even is the
#: development half, odd the test half).
FOURTH_DEV: tuple[Chart, ...] = (
    *(
        Chart(*_IHC, f"charts/{name}")
        for name in (
            "gpu-device-plugin",
            "device-plugin-operator",
            "text-generation-inference-0.2.1",
            "tensorflow-serving-0.1.0",
            "evi-ai-inference-gpu-3.0.3",
        )
    ),
    Chart(*_KOO, "hami-daemon/v0.2.0"),
    Chart(*_KOO, "versions/v1.8.0"),
    Chart("qdrant/qdrant-helm", "fd6321f1ff0a9538a7fffc6829f012a017ce1e86", "charts/qdrant"),
    Chart(*_TL, "charts/tensorleap"),
    Chart(*_TL, "charts/tensorleap-infra"),
    Chart("infiniflow/ragflow", "b1b8cd623520b97b2526ffb1514bd812bdcc7eaf", "helm"),
    Chart(
        "NVIDIA-AI-Blueprints/ai-virtual-assistant",
        "558b4c83968f5ab61b494f981f4f0bef09217d41",
        "deploy/helm",
    ),
    Chart("jellyfin/jellyfin-helm", "410d21fa0a553e7446a25893e3ca9fade13ae6dd", "charts/jellyfin"),
    Chart(
        "kubernetes-sigs/inference-perf",
        "7de5ef2ed6f7934e0ecbc8297e593f79e68430c0",
        "deploy/inference-perf",
    ),
    Chart(*_CAT, "components/app-configs/gpu-verification-nvidia"),
    Chart(*_CAT, "components/app-configs/gpu-verification-amd"),
    Chart(*_CAT, "components/app-configs/nim"),
    Chart(*_CAT, "components/app-configs/notebook-standalone"),
    Chart(*_PAR, "bootstrap/ic-shared-llm"),
    Chart(*_PAR, "lab-materials/05/app"),
    Chart("nekomeowww/ollama-operator", "ece318891898796aaabec9ae1ebaa44192b60b79", "config"),
)
FOURTH_TEST: tuple[Chart, ...] = (
    Chart("NVIDIA-AI-Blueprints/data-flywheel", "419e2cc9e51140e2ca21380df07c9cde3f2161e1",
          "deploy/helm/data-flywheel"),
    Chart("Project-HAMi/volcano-vgpu-device-plugin", "4fb76ba16a1744b161e9e2fbfc0b9ec3a546dd9b",
          "deployments/helm/volcano-vgpu-device-plugin"),
    Chart("immich-app/immich-charts", "086caa9e53c473f9e73249ab51a5488a7f85aac5", "charts/immich"),
    *(Chart(*_ARC, f"deploy/charts/{name}") for name in (
        "llm-worker", "llama-factory", "gpu-operator", "arcadia",
    )),
    *(Chart(*_SOP, f"helm/{name}") for name in (
        "slurm-cluster", "nodesets", "soperator-dcgm-exporter",
    )),
    Chart("oracle-quickstart/oci-hpc-oke", "61d210acc37f1990f27012aa4f108c5db4e52ab2",
          "terraform/files/oci-hpc-oke-utils"),
    Chart("rh-ai-quickstart/RAG", "d1f0847ae92a9c17e827a854334e035e2750a660", "deploy/helm/rag"),
    Chart("rh-ai-quickstart/ai-virtual-agent", "abcdf69c1f6ad5a54fdc75843f01cc748d0fe2f5",
          "deploy/cluster/helm"),
    Chart("nebius/nebius-solution-library", "b2a14f037112b218bc7b80482e371ad3295ce8b3",
          "modules/nccl-test/files/helm/nccl-test"),
    Chart("NVIDIA/nv-ingest", "2b3488c6e7c63b57a7be35f7226a7dc6189a80b1", "helm"),
    Chart(*_KAI, "chart"),
    Chart("NVIDIA-AI-Blueprints/aiq-research-assistant",
          "841d60e4d31604f9aa5d4f9e08112c8d30ab738d", "deploy/helm/aiq-aira"),
    Chart("blakeblackshear/blakeshome-charts", "a1336f5cdad268c955f690c2238c69835f0e9d83",
          "charts/frigate", sets=("gpu.nvidia.enabled=true",)),
    Chart("substratusai/substratus", "7352fb05897b42d2cf31022e528f93f60fdc931b", "config"),
    Chart(*_SOP, "config"),
    Chart(*_SOP, "fluxcd"),
    Chart(*_ARC, "config"),
    Chart(*_KAI, "config"),
    Chart(*_KAI, "dependencies"),
    Chart(*_KAI, "hack"),
    Chart("llm-d/llm-d-benchmark", "8bc9f1ddd873a24f1657d6cca2e0d0fb6947dd36", "util/deploy"),
)  # fmt: skip

_T9K = ("t9k/apps", "85c5c0d532aee36f503cb52cebf34691ba920dac")
_UNI = ("UNINETTSigma2/helm-charts", "427300a4b073032f4429cb6c38c8664ab5613aa5")
_SUB = ("substratusai/helm", "aca799410e55e339a4539366d5e7db0e38ad8c53")
_RHS = ("redhat-ai-services/helm-charts", "0feb7830996e2d9d515e8b079bde5a0fdbb550e4")
_SIL = ("silogen/docs", "232fb016c2c536616b6c67230dc7adf267a026aa")
_IMK = ("inf-monkeys/helm-charts", "6e6787b2a043d78d152051ab8b346c0ab0b8d87d")
_MTX = ("mitchross/talos-argocd-proxmox", "38e5c2f87d13d8b5037bd9f999195fa97956a8f3")
_NAI = ("jesse-gonzalez/nai-llm-fleet-infra", "c183e6d036b32151a9d3bad2a9325d556a822319")

#: The fifth set (issue 40, third round), split by repository before any lint (the last
#: hex digit of sha256 of ``"issue40-r3:" + owner/name``, lower-cased: even is the
#: development half, odd the test half).
FIFTH_DEV: tuple[Chart, ...] = (
    *(Chart(*_T9K, f"user-console/{name}/chart") for name in (
        "comfyui", "stable-diffusion-webui-aki", "fish-speech", "vllm",
    )),
    Chart(*_T9K, "user-console/ollama/chart", sets=("ollama.gpu.enabled=true",)),
    Chart(*_T9K, "user-console/open-webui/chart",
          values=("user-console/open-webui/chart/values-gke-min.yaml",)),
    Chart(*_UNI, "repos/stable/deep-learning-tools"),
    Chart(*_UNI, "repos/stable/jupyter",
          sets=("resources.requests.gpu=1", "resources.limits.gpu=1")),
    Chart(*_UNI, "repos/stable/jupyterhub"),
    Chart("dyerinnovation/convene-ai", "f87faaf2f2e6588b74e7a118b1f39d383ac746a2", "charts/stt"),
    Chart("fastmachinelearning/SuperSONIC", "e5788010d54a1799287507cb0aa5527143be11c2",
          "helm/supersonic", values=("values/values-geddes-cms.yaml",)),
    Chart("salilkadam/Infrastructure", "bf869cd554433fa64ee3a2fa54389cf4bcc02174",
          "applications/triton"),
    Chart("rrumana/k8s-homelab-2", "3e8775d58e4833738d973b4b35dc39f77d6a0d2f", "cluster/apps/ai"),
)  # fmt: skip
FIFTH_TEST: tuple[Chart, ...] = (
    Chart(*_IMK, "charts/comfyui"),
    Chart(*_IMK, "charts/vllm"),
    *(Chart(*_SUB, f"charts/{name}") for name in ("vllm", "text-generation-inference", "stapi")),
    Chart(*_RHS, "charts/vllm-kserve"),
    Chart(*_RHS, "charts/guardrails-hf-detector-kserve"),
    Chart("Overseer66/comfyui-helm-chart", "5d0d629936bbf1be736b077ef8a430988ddb93c6", "chart"),
    *(Chart(*_SIL, f"docs/ai-workloads-manifests/{name}/helm") for name in (
        "llm-inference-vllm", "llm-inference-tgi", "llm-inference-ollama", "llm-inference-sglang",
        "dev-text2image-comfyui", "dev-workspace-jupyterlab", "llm-finetune-axolotl",
        "rag-embedding-infinity", "llm-pretraining-megatron-lm",
    )),
    Chart("NVIDIA/GenerativeAIExamples", "401cb446f550c6dee8048a246e6c5dbc57f38dae",
          "community/ai-vws-sizing-advisor/deploy/helm/rag-server"),
    Chart("alpha-hack-program/doc-bot", "3f0a9a76e5daa66694c336ed31f5d5fc075e8296",
          "gitops/doc-bot"),
    Chart(*_MTX, "my-apps/ai"),
    Chart(*_MTX, "my-apps/media/immich"),
    Chart(*_MTX, "infrastructure/controllers/nvidia-gpu-operator"),
    Chart(*_NAI, "apps/gptnvd-reference-app"),
    Chart(*_NAI, "platform/gpu-operator"),
    Chart(*_NAI, "platform/jupyterhub"),
)  # fmt: skip

_DEL = ("huggingface/dell-helm-chart", "b10a57393826889fcbbbf050484cbe13a0fcfd08")
_LFA = ("defenseunicorns/leapfrogai", "1562db1fda4c64b8bd39ca246736c6cd5cd64a39")
_K3S = ("mitchross/k3s-argocd-proxmox", "0ef8377d44e5ba1221efb35a35a8b2828916030c")
_TAL = ("TheBranchDriftCatalyst/talos-homelab", "b57b645c6887a1d39186ce5b2a2fa92c1f9e340b")
_BJW = ("bjw-s/home-ops", "143c271bba615426248632e0f36c97b7caf3beb5")
_KAH = ("k8s-at-home/charts", "2463dec153a8c2eaf9c6783ce0cd5a3502f5dfb5")
_ASE = ("ai-solution-eng/blueprints", "5159085078e1412034ce8d7b3cafbda6a1e6f65a")
_JHR = ("jharmison-redhat/openshift-setup", "a7c329ed8c104eca215595ce5df9c5dc0c7f61c5")
_AMD = ("amd-enterprise-ai/solution-blueprints", "ff3eef3a74ae21a2c08ce433cf5f164d0506cfb6")
_MTH = ("mithr4ndir/k8s-argocd", "4576fec08eb68130bd7300243d2df43073c90ed8")
_LFA_GPU = ("resources.limits.nvidia\\.com/gpu=1", "gpu.runtimeClassName=nvidia")

#: The sixth set (issue 40, fourth round), split by repository before any lint (the last
#: hex digit of sha256 of ``"issue40-r4:" + owner/name``, lower-cased: even is the
#: development half, odd the test half); charts, trees and flags fixed before the first lint.
SIXTH_DEV: tuple[Chart, ...] = (
    Chart(*_DEL, "charts/models"),
    Chart(*_DEL, "charts/apps/agentic-smart-router"),
    Chart(*_LFA, "packages/vllm/chart"),
    Chart(*_LFA, "packages/vllm/chart", values=("packages/vllm/values/upstream-values.yaml",)),
    *(Chart(*_LFA, f"packages/{name}/chart", sets=_LFA_GPU) for name in (
        "whisper", "text-embeddings", "llama-cpp-python",
    )),
    *(Chart(*_KAH, f"charts/stable/{name}") for name in ("frigate", "plex", "jellyfin")),
    Chart(*_ASE, "ai-virtual-assistant"),
    Chart(*_ASE, "enterprise-rag/2.1.0-hybrid"),
    Chart(*_ASE, "video-search-and-summarization/2.3.0-hybrid"),
    Chart(*_ASE, "omniverse-rtdt-fluid-sim/2026.01"),
    Chart(*_ASE, "vulnerability-analysis/helm"),
    Chart("castai/helm-charts", "daa46281449593e410adc31f7fe169043c116895",
          "charts/castai-hosted-model"),
    Chart("DreamingRaven/raven-helm-charts", "7ec1db3dd983fa1ed8e5cf33b027e5acdc385f70",
          "charts/ollama"),
    *(Chart(*_JHR, f"charts/{name}") for name in (
        "kserve-vllm-model", "llmisvc", "nvidia-gpu-enablement",
    )),
    Chart(*_K3S, "my-apps/ai"),
    Chart(*_K3S, "my-apps/home/frigate"),
    Chart(*_K3S, "infrastructure/controllers/nvidia-device-plugin"),
    Chart(*_K3S, "infrastructure/controllers/nvidia-gpu-operator"),
    Chart(*_TAL, "applications/arr-stack"),
    Chart(*_TAL, "applications/tdarr"),
    Chart(*_TAL, "infrastructure/base/intel-gpu"),
    Chart(*_BJW, "kubernetes/main/apps/media/plex"),
    Chart(*_BJW, "kubernetes/main/apps/home-automation/scrypted"),
    Chart(*_BJW, "kubernetes/main/apps/downloads/ytdl-sub"),
    Chart("toboshii/home-ops", "b16119e828316df78f73d378bf7c386bad9dac12", "cluster/apps/media"),
    Chart("budimanjojo/home-cluster", "5ff6e745c1fb4bf9e468d7f61a965b8bed960282",
          "cluster/apps/default/jellyfin"),
)  # fmt: skip
SIXTH_TEST: tuple[Chart, ...] = (
    Chart("abd-km/whisperx-docker", "654254e9cef7a9fb80757b4540e568f6012f9be0",
          "helm/whisperx-api"),
    Chart("hnatekmarorg/devops-cluster", "893b40614058164c1dbfcfd61e6f77f884925a6d",
          "charts/llama-cpp"),
    Chart("Lintasarta/sglang-helm", "eb547ade3e948430174a9329536eaa0d915391f4", "."),
    Chart("Lintasarta/vllm-helm", "1a4ef6c5b766f3b593ebc5f9f424a64b914b4388", "."),
    Chart("braveokafor/ollama-webui-helm", "2c58714f7e6025e5d45390f51b82264ffc1c9f1d",
          "charts/ollama-webui-helm", sets=("ollama.gpu.enabled=true",)),
    *(Chart(*_AMD, f"aimcharts/aimchart-{name}") for name in (
        "llm", "embedding", "qwen-asr", "qwen-tts",
    )),
    *(Chart(*_AMD, f"solution-blueprints/{name}") for name in ("llm-chat", "agentic-translation")),
    Chart(*_MTH, "apps/media/jellyfin"),
    Chart(*_MTH, "infrastructure/nvidia"),
    Chart("jmuchovej/homelab", "8d5f49a45840c087716d5b18488635e4f0899ac5",
          "src/kubernetes/apps/media/plex"),
    Chart("petebeegle/homelab", "a0f92c819b8208103174d894f853615328625556",
          "kubernetes/apps/jellyfin"),
)  # fmt: skip

_IFC = ("infracloudio/charts", "1bc5062fcb66c8e584ad22b081b438291e2ccdef")
_C2C = ("camptocamp/llm-charts", "1d3f57ea328486626b8aaced1b8c6adcf5da0b6d")
_DSF = ("dseif0x/helm-charts", "07a57c5d3bdffcab311349f90789ed5d458e77a5")
_TTW = ("tylertitsworth/ai-cluster", "1053879bb50bde7b21d6d0440b26c06d915ef368")
_HAA = ("Haasie/home-ops", "ecaf22ba70820eb8e51c143aad1b67c84e6c1056")
_PHY = ("phybros/home-ops", "cb9c998995c4a713f860aa007b0c00e7001a7e60")
_AMA = ("amasolov/home-ops", "b387824e33dd3cc6e98d8fa4acba38ff2010221e")
_IMD = ("ImDevinC/homelab", "b35d04de6a15fabdcb543399dc977b607c36d4f5")
_UND = ("underpass-ai/underpass-vllms", "4eb49f4c2da4a7e86e884682cddb2ea56c57ba4e")
_CPK = ("Curt-Park/comfyui-onprem-k8s", "f01f5d3d9de12050f4451a495b727b52c5ec8242")
_RKA = ("RamazanKara/private-ai-platform-kit", "6f50287f8c2a3a24c7149270ae6c7ce012193403")
_WES = ("wesparish/rancher-catalog", "7376a8d368dfdf9f79cf82ba44edf1e7894748b6")
_LIA = ("Liana64/k8s-gitops", "d1531e2dac67775ec9f8c9f54f8f7dcb525cc41e")
_NEA = ("nea0d/homelab-ops", "cba1ae6da7c35bda9ab972def0e4d146f3b6ddb0")
_RKA_VALUES = "deploy/clusters/customer/values"
_IFC_GPU = ("resources.limits.nvidia\\.com/gpu=1", "resources.requests.nvidia\\.com/gpu=1")

#: The seventh set (issue 40, fifth round), split by repository before any lint (the last
#: hex digit of sha256 of ``"issue40-r5:" + owner/name``, lower-cased: even is the
#: development half, odd the test half); charts, trees and flags fixed before the first lint.
SEVENTH_DEV: tuple[Chart, ...] = (
    Chart(*_IFC, "charts/vllm", sets=_IFC_GPU),
    Chart(*_IFC, "charts/text-generation-inference", sets=_IFC_GPU),
    Chart(*_IFC, "charts/text-embeddings-inference", sets=_IFC_GPU),
    Chart(*_IFC, "charts/kf-notebooks"),
    Chart(*_IFC, "charts/ai-stack"),
    Chart(*_IFC, "charts/opea-tgi", values=("charts/opea-tgi/nv-values.yaml",)),
    Chart(*_C2C, "charts/llama-cpp"),
    Chart(*_C2C, "charts/nvidia-utilities"),
    Chart("open-source-ai-dev/vllm-helm-chart", "96a8b51ea80943ee7d0a53b352dcd36d293243d6",
          "charts/vllm"),
    *(Chart(*_DSF, f"charts/{name}") for name in ("comfyui", "chatterbox-tts-server", "arr")),
    Chart(*_TTW, "charts/vllm"),
    Chart(*_TTW, "charts/servarr/plex"),
    Chart("halkeye/home-k8s", "c9e1cd48e98b770e64891f6ea405eccf3fefbb07", "charts/ollama"),
    Chart(*_HAA, "kubernetes/apps/default/ollama"),
    Chart(*_HAA, "kubernetes/apps/default/plex"),
    Chart(*_PHY, "kubernetes/apps/default/ollama"),
    Chart(*_PHY, "kubernetes/apps/default/plex"),
    Chart("Tomyail/talos-cluster", "c78601337aa8bec61d829af369d690789b7c0000",
          "kubernetes/apps/default/jellyfin"),
    Chart(*_AMA, "kubernetes/apps/ai/local-ai"),
    Chart(*_AMA, "kubernetes/apps/default/scrypted"),
    *(Chart(*_IMD, f"charts/{name}") for name in ("comfyui", "whisper", "mediaserver")),
)  # fmt: skip
SEVENTH_TEST: tuple[Chart, ...] = (
    Chart("rh-aiservices-bu/vllm-quickstart", "5295cff817fbff3df035c42f1c42621e23afe989",
          "charts/vllm"),
    Chart("rhai-code/vllm", "f4d36614374b0d679553bfcd7082a8ea25675b05", "charts/vllm"),
    Chart(*_UND, "charts/vllm", values=("env/prod/gemma-4-31b.yaml",)),
    Chart(*_UND, "charts/vllm", values=("env/lab/gpt-oss-120b.yaml",)),
    Chart(*_CPK, "charts/comfyui"),
    Chart(*_CPK, "charts/jupyterhub"),
    Chart("cyberun-cloud/wrapper-charts", "00811bbdc721fa8cb80f199981e7a6ea8fd9fe46",
          "charts/comfyui"),
    Chart("mmmateusz/comfyui-helm-chart", "f6736a429d73de9e9ef97a7720e7faa9c37caafe",
          "charts/comfyui"),
    Chart("swan2913/infra", "30c80692e5f290b55fd7b6650288de9024f07e6f", "charts/vllm"),
    Chart("arch-anes/charts", "66a799c8915105acac71204317cfd4a2ee3293d1", "charts/llama-cpp",
          sets=("gpu.enabled=true",)),
    Chart("NickCao/comfyui-vllm-omni-on-openshift",
          "4b330703c221c97870c04d10847e043316b5c228", "charts/vllm-omni",
          values=("values/vllm-omni.yaml",)),
    Chart(*_RKA, "deploy/charts/vllm", values=(f"{_RKA_VALUES}/vllm-nvidia.yaml",)),
    Chart(*_RKA, "deploy/charts/vllm", values=(f"{_RKA_VALUES}/vllm-amd.yaml",)),
    Chart(*_RKA, "deploy/charts/ollama", values=(f"{_RKA_VALUES}/ollama.yaml",)),
    *(Chart(*_WES, f"charts/{name}") for name in (
        "claymore-nvidia-scalable", "claymore-amd-scalable", "games-on-whales-wes",
    )),
    Chart(*_LIA, "kubernetes/main/apps/ai/ollama"),
    Chart(*_LIA, "kubernetes/main/apps/media/jellyfin"),
    Chart(*_NEA, "kubernetes/main/apps/ai/ollama"),
    Chart(*_NEA, "kubernetes/main/apps/media/plex"),
    Chart("jsimcina/k8s-home", "62554ecb4ce881bc4aae969430bd757d8c6c12fb",
          "kubernetes/apps/media/plex"),
    Chart("hacrex/AI-Infra-Ollama-K8s", "ef538db85acd6e456aea55840eaaf4c27f100c25", "overlays/gpu"),
    Chart("appleparan/saegim", "402812534e00a73249c264db7fc24441ff68ab6b", "k8s/overlays/gpu"),
)  # fmt: skip

_PPM = ("rh-ai-quickstart/peoplemesh", "b275fe570d42b026b9f058dc7ec28997dcec9d37")
_SPJ = ("spaceoutjson/helm", "7a82beb4cfc9d8090602b745aee391a3a08eb314")
_DFM = ("dafrenchyman/dockers_and_helm", "1435549467a67f2ff6ae08f8b5c7c05bc60019cb")
_RBC = ("robo-cap/helm-charts", "29e500208850b832f385674424dfb4df9f9eeb7f")
_DYR = ("dyerinnovation/agent-skill-adapter", "cdd271e01511be14ddd421d308c093cf3c2e6efc")
_WQL = ("wiredquill/helm-charts", "84d6a4638c821a45a8fdd0798528ee2a51acfa49")
_RMZ = ("romangzz/homelab", "876008903543040f38ef363ac3efaa1d5c608850")
_LYZ = ("lyzetam/fako-cluster", "6cd47bf7526ce46efef9f1733a2d6b936a2e5b9f")
_TRT = ("charts/triton",)
_DCH = ("danchev/helm-charts", "4c24259a2cf204c73e0444df1d82df065aede16d")
_KLV = ("kalavai-net/kalavai-templates", "4cb15a7bed4d682d6ddff7167b6555d7277d3146")
_GXF = ("geekxflood/helm-charts", "c13d1eee264c71a998ce1e4c8f0a28fa65d337d1")
_OBN = ("obeone/charts", "991c83dd5756427ec757e845fee0757ad525ff8f")
_CKW = ("codekow/container-xmrig", "e7cd4cc4a20025f29dbea84ec2f9dcadd1c541b6")
_SYN = "deployments/synaplan-with-triton"

#: The eighth set (issue 40, sixth round), split by repository before any lint (the last
#: hex digit of sha256 of ``"issue40-r6:" + owner/name``, lower-cased: even is the
#: development half, odd the test half); charts, trees and flags fixed before the first lint.
EIGHTH_DEV: tuple[Chart, ...] = (
    Chart("amithkk/stable-diffusion-k8s", "c864b6abbb44064b7518fd1348e6f7f12005352f",
          "charts/stable-diffusion"),
    Chart("alpineworks/helm-charts", "5dbd5c3d1e971e0f5782400b97f72bcfbb8dea3b",
          "charts/stable-diffusion"),
    Chart("tom333/my-kluster", "dceadc7e4f5ece2cc82406e911264401e5cfbb11", "charts/localai"),
    Chart("Curt-Park/serving-codegen-gptj-triton", "e5b87d570bdedc2779900156b397ac30e2168c80",
          *_TRT),
    Chart("MrSyee/SAM-remove-background", "a35e01e4112f78ca7bfca72e2cb516a89a93f4aa", *_TRT),
    Chart("RRoundTable/serving-dinov2", "e151896788d4be488e30b390527a76607f293fd8", *_TRT),
    Chart("metadist/synaplan-charts", "85520535aadf6dc38fbbf0af8c8add4aae249737", *_TRT,
          values=(f"{_SYN}/values-triton-common.yaml", f"{_SYN}/values-triton-gpu.yaml")),
    Chart("rnaarla/medical-image-training", "22d053d1ed8417b049d33b9170de68b0d3910160", *_TRT),
    Chart("brojaza/kind-ai-cluster", "e2b898fa5d09ea0a72802b3a07d22a8e83b8bc39", "charts/vllm"),
    Chart(*_DCH, "charts/vllm"),
    Chart(*_DCH, "charts/unsloth"),
    Chart(*_DCH, "charts/aibrix", values=("charts/aibrix/vke.yaml",)),
    *(Chart(*_KLV, f"charts/{name}") for name in ("vllm", "llamacpp", "speaches", "personaplex")),
    Chart("lfoss0612/homelab-gitops", "f82267d54ba65c44af5001c20198a268c8f9c0c4", "charts/vllm"),
    Chart("undy-io/mlrun", "21fe8624bf67ddad82bdb4f353a6a9649274e165", "charts/vllm"),
    Chart(*_GXF, "charts/ollama"),
    Chart(*_GXF, "charts/whisper", sets=("gpu.enabled=true",)),
    Chart(*_GXF, "charts/jellyfin", sets=("gpu.enabled=true",)),
    Chart(*_GXF, "charts/tdarr_node"),
    Chart(*_OBN, "charts/draw-things"),
    Chart(*_OBN, "charts/ollama"),
    Chart("Kare0638/D-Gate", "01691ee9eea402924023b16025af66e4fd641762", "k8s/overlays/gpu"),
    Chart("Kare0638/V-Gate", "e8cc73380a40d687b12f94b0c4ec60dc3b65c87e", "k8s/overlays/gpu"),
    Chart(*_CKW, "k8s/overlays/cuda"),
    Chart(*_CKW, "k8s/overlays/cuda-x2"),
    Chart("5stackgg/5stack-panel", "8f8d69662b214edc188fffb53659b0d1b00ce237", "overlays/nvidia"),
    Chart("giannisalinetti/personal-investment-assistant",
          "75196671638c4b1c1c7bffdcc4bff59a0a814ba5", "deploy/k8s/overlays/gpu"),
)  # fmt: skip
EIGHTH_TEST: tuple[Chart, ...] = (
    Chart(*_PPM, "charts/ollama", sets=("gpu.enabled=true",)),
    Chart(*_PPM, "charts/vllm"),
    Chart(*_PPM, "peoplemesh-umbrella"),
    Chart(*_SPJ, "charts/vllm"),
    Chart(*_SPJ, "charts/vllm", values=("charts/vllm/examples/mixtral-8x7b-awq-gcp-l4.yaml",)),
    Chart(*_SPJ, "charts/text-generation-inference"),
    Chart(*_SPJ, "charts/stapi", values=("charts/stapi/examples/gpu.yaml",)),
    Chart(*_DFM, "charts/ace-step-1-5"),
    Chart(*_DFM, "charts/fooocus_extend"),
    Chart(*_RBC, "charts/nim-llm"),
    Chart(*_RBC, "charts/vllm"),
    *(Chart(*_DYR, f"charts/{name}") for name in ("tgi", "skill-adapter", "training-job")),
    Chart(*_WQL, "charts/ollama-upstream"),
    Chart(*_WQL, "charts/genai-observability-demo", sets=("ollama.gpu.enabled=true",)),
    Chart("testifysec/judge-helm-charts", "4029e2c56ee5bac96d3c60da4c0f88c53dbae36f",
          "charts/ollama", sets=("gpu.enabled=true",)),
    Chart("greenCircuit/cluster-at-home", "ea17bcc16deed06c1e965b586c7dd7e063b18a94",
          "charts/ollama-llm"),
    *(Chart("SUSE/suse-ai-deployer", "e500d69849ee55541c8e6e992e6d3427497c03a0", ".",
            values=(f"examples/{name}.yaml",)) for name in ("suse-gen-ai", "suse-gen-ai-vllm")),
    Chart("Improwised/charts", "0068f8a90bc62a31649f2c8484ebabe48b185505", "charts/frigate",
          sets=("gpu.nvidia.enabled=true",)),
    Chart("smarman85/kindSampleCluster", "84d1fec7f190c962d3b1bd4ad75e6561f2fcca33",
          "charts/ollama"),
    Chart("moophlo/moophlo.github.io", "b736a9f7f21b7d481685245035f63c591e1bfa13",
          "charts/stable-diffusion"),
    Chart("keonhoban/mlops-infra-gitops", "4255bbacde7e93e914ee208027e28a08baf3373b", *_TRT,
          sets=("gpu.enabled=true",)),
    Chart("dminnear-rh/vp-rag-llm", "44bc932bb51a390997991954f9cc2f0facbe8db8", "charts/vllm"),
    Chart("braveokafor/ollama-helm", "a6cf7709cbc19ad6868deec917b753c502c0c190",
          "charts/ollama", sets=("ollama.gpu.enabled=true",)),
    Chart("mlops-laboratory/mlops-lab-on-prem-platform",
          "bbc59d658c714f6dc18ac16f26f68ac48c9f97e6", "charts/vllm",
          values=("values/vllm/dev.yaml",)),
    Chart("dtandersen/charts", "bee46f37386bcc49fdb981e4d1408a4c9a7331ab", "charts/vllm-xe"),
    Chart("Alvis1337/ollama-helm", "a8370108dfa3b8a462999021e974cb66b98a87fe", "helm/ollama",
          sets=("ollama.gpu.enabled=true",)),
    *(Chart("davidtestdocker/hpc", "df5e73cefc587f7e1bebf047dcbdab7fe2b85d35", f"helm/{name}")
      for name in ("pytorch-runtime", "vllm")),
    Chart("girishn/rag-platform-eks", "056503d240582b21300ad961f3ec0604d713a88b", "helm/vllm"),
    Chart("negimagss/gpu-orchestration-lab", "9e74ea06eb6fdb2c0d386c38452c29d3439d08c6",
          "helm/vllm"),
    Chart("nwthomas/gitops", "09f0bdbf554cfc38f8e04dd5af8999fd8d8ad4c6", "helm/vllm"),
    Chart("pkstaz/pdf-comparator-ai", "d0764aea33c7816aae33085fde86d2aee7f0a869", "helm/vllm"),
    Chart("pseudorm/eks-vllm-terraform", "6bb713b16bac6b3022b5ecb2313e6888e536cef3", "helm/vllm"),
    Chart("woodez-kubernetes/k8s-inference", "0f22cc6ac6f9f89805eabd01a2816fb5b2a41ec7",
          "helm/ollama", sets=("gpu.enabled=true",)),
    Chart("hs3434/k8s-llm-runtime", "2803b88de0268e219877edb222e14e79a3b7104d",
          "charts/llm-inference", sets=("gpu.vendor=nvidia",)),
    Chart("optiplex331/MLOps-infrastructure", "ce54740e274661c347c1293c88c5f207d18abd33",
          "charts/llm-inference"),
    Chart("andreclaudino/comfyui-doker", "e90855614477d411c5cf0c997fac2310cf6d0c78",
          "helm/comfyui"),
    Chart("loaspra/audio-transcriber-service", "e40069af320049cd533199e4b0b236c10707f950",
          "k8s/base"),
    Chart("Pranav5255/llm-on-kube-cluster-local", "7cc365663993f9a22f35d12eca31653b50aba1a0",
          "k8s/overlays/gpu"),
    Chart("AGenNext/Agent-IDE", "c439b768f88485048b20f439fe48b6076ef9f81a", "k8s/overlays/gpu"),
    Chart("AEndrix03/openai-embeddings-adapter-hf", "9e570844a6ecc5c878e57173eeebf19682f42b6c",
          "k8s/overlays/gpu"),
    Chart("nohdol97/Nexus", "7011bae95a21723d3895d679c379e1b2ce7c09da", "k8s/overlays/gpu"),
    Chart("Odinyg/homelab", "507bd2ce59f75eae7ab4c6f0bc4652f68599a2bc", "apps/base/ollama"),
    Chart("Caos-Ordenado/mlops", "619cfc7f93ca9bc9b424b035f4a11c20aa7795f0", "k8s/ollama"),
    Chart(*_RMZ, "apps/ollama"),
    Chart(*_RMZ, "apps/media"),
    Chart("tpural/flux", "3f85be5136a5040822c7faf9f5fe6b27adbe9efd", "apps/ollama"),
    *(Chart(*_LYZ, f"apps/base/{name}") for name in (
        "ollama", "whisper", "whisperx", "parakeet", "ollama-jetson",
    )),
    Chart("progist1/home-k3s", "48778bc16602d83612dcf0900d7d900ec54436c9", "apps/jellyfin"),
    Chart("maxjeffwell/devops-portfolio-manager", "cc0f2b1d778ea73ad32b61f3533cdc983c48490b",
          "k8s/ollama"),
)  # fmt: skip

#: The sets whose rows say each finding's severity (false errors and warnings are counted).
SIXTH = frozenset(SIXTH_DEV + SIXTH_TEST + SEVENTH_DEV + SEVENTH_TEST + EIGHTH_DEV + EIGHTH_TEST)

FIELDS = ("chart", "rule", "object", "reported", "expected", "verdict", "message")


def _name(chart: Chart) -> str:
    folder = "" if chart.folder == "." else f"/{chart.folder}"
    flagged = SECOND + THIRD_DEV + THIRD_TEST + FOURTH_DEV + FOURTH_TEST + FIFTH_DEV + FIFTH_TEST
    flagged += SIXTH_DEV + SIXTH_TEST + SEVENTH_DEV + SEVENTH_TEST + EIGHTH_DEV + EIGHTH_TEST
    if chart not in flagged:
        return f"{chart.repo}{folder}"
    flags = [f"-f {os.path.basename(v).lstrip('@')}" for v in chart.values]
    flags += [f"--set {s}" for s in chart.sets] + list(chart.extra)
    flags += [f"--namespace {chart.namespace}"] if chart.namespace else []
    return f"{chart.repo}{folder}" + (f" [{' '.join(flags)}]" if flags else "")


def lint(
    charts_dir: str, chart: Chart, helm: str, gpulint: str = "gpulint"
) -> list[dict[str, str]]:
    """The review rows of one chart: one per finding, the hand-filled fields empty."""
    root = os.path.join(charts_dir, chart.repo.replace("/", "__"))
    args = [gpulint, "check", "--format", "json", "--jobs", "1", "--render", "--helm", helm]
    own = [os.path.join(OWN_VALUES, v[1:]) if v.startswith("@") else v for v in chart.values]
    args += [f"--values={v}" for v in own] + [f"--set={s}" for s in chart.sets]
    args += [f"--namespace={chart.namespace}"] if chart.namespace else []
    args += list(chart.extra)
    proc = subprocess.run([*args, chart.folder], cwd=root, capture_output=True, text=True)
    try:
        findings = json.loads(proc.stdout)["findings"]
    except (ValueError, KeyError):
        return [_row(chart, "-", "-", "-", f"no report: {proc.stderr.strip()[:200]}")]
    return [
        _row(
            chart,
            f["rule"],
            "{kind}/{name}".format(**f["object"]) if f.get("object") else "-",
            f"{f['path']}:{f['line']}:{f['column']}",
            f"[{f['severity']}] {f['message']}" if chart in SIXTH else f["message"],
        )
        for f in findings
    ]


def _row(chart: Chart, rule: str, obj: str, reported: str, message: str) -> dict[str, str]:
    return {
        "chart": _name(chart),
        "rule": rule,
        "object": obj,
        "reported": reported,
        "expected": "",
        "verdict": "",
        "message": " ".join(message.split())[:700],
    }


def _write(rows: list[dict[str, str]]) -> None:
    out = csv.DictWriter(sys.stdout, FIELDS, delimiter="\t", lineterminator="\n")
    out.writeheader()
    out.writerows(rows)


def _read(path: str) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def tally(rows: list[dict[str, str]]) -> dict[str, object]:
    """Findings, verdict counts and the rate, over every row and per chart."""
    verdicts = Counter(r["verdict"] for r in rows)
    per_chart: dict[str, Counter[str]] = {}
    for r in rows:
        per_chart.setdefault(r["chart"], Counter())[r["verdict"]] += 1
    total = len(rows) - verdicts["plain"]
    # findings with a line to edit (not a chart that needs `helm dependency build`, ...)
    editable = [r for r in rows if r["verdict"] != "plain" and not r["expected"].startswith("(")]
    at_edit = sum(r["verdict"] == "edit" for r in editable)
    return {
        "findings": total,
        "verdicts": dict(verdicts),
        "rate": round(verdicts["edit"] / total, 3) if total else None,
        "with a line to edit": len(editable),
        "rate with a line to edit": round(at_edit / len(editable), 3) if editable else None,
        "charts": {c: dict(v) for c, v in per_chart.items()},
    }


def main(argv: list[str]) -> int:
    sets = {
        "sheet": CHARTS + TREES,
        "sheet2": SECOND,
        "sheet3": THIRD_TEST,
        "sheet3-dev": THIRD_DEV,
        "sheet4": FOURTH_TEST,
        "sheet4-dev": FOURTH_DEV,
        "sheet5": FIFTH_TEST,
        "sheet5-dev": FIFTH_DEV,
        "sheet6": SIXTH_TEST,
        "sheet6-dev": SIXTH_DEV,
        "sheet7": SEVENTH_TEST,
        "sheet7-dev": SEVENTH_DEV,
        "sheet8": EIGHTH_TEST,
        "sheet8-dev": EIGHTH_DEV,
    }
    if argv[:1] and argv[0] in sets and len(argv) >= 3:
        gpulint = argv[3] if len(argv) > 3 else "gpulint"
        measured = sets[argv[0]]
        _write([row for c in measured for row in lint(argv[1], c, argv[2], gpulint)])
        return 0
    if argv[:1] == ["merge"] and len(argv) == 3:
        old = {(r["chart"], r["rule"], r["object"], r["reported"]): r for r in _read(argv[1])}
        rows = []
        for r in _read(argv[2]):
            kept = old.get((r["chart"], r["rule"], r["object"], r["reported"]))
            if kept is not None:
                r["expected"], r["verdict"] = kept["expected"], kept["verdict"]
            rows.append(r)
        _write(rows)
        return 0
    if argv[:1] == ["tally"] and len(argv) == 2:
        print(json.dumps(tally(_read(argv[1])), indent=1))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
