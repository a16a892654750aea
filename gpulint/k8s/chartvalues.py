"""Helm chart values files read as what the chart makes of them, without rendering it.

A values file holds no Kubernetes object, so a run does not read it as one (it is GL204's
"not checked"). Some charts' values are read as written, because what they make is known
from the values alone:

* **JupyterHub's** (zero-to-jupyterhub-k8s): the settings KubeSpawner makes each user's pod
  from (:mod:`gpulint.k8s.jupyterhub`). Only the rules that declare ``READS_CHART_VALUES``
  read them (GPU034); the document holds no pod spec.
* **bjw-s app-template's** (``controllers.<name>.containers.<name>``, chart versions 2 and
  later, at the top of the file or under ``app-template:``, the key of a chart that depends
  on it): the pods its controllers make, found by their shape as in a Flux HelmRelease's
  ``spec.values`` (:mod:`gpulint.k8s.shapes`), with the controller's ``pod:`` and the
  values' ``defaultPodOptions`` as their pod options. Every pod rule reads them; object
  rules only if they declare ``READS_CHART_VALUES``. Such a file is a Flux HelmRelease's
  ``valuesFrom`` (a ConfigMap kustomize generates from it) or an Argo CD source's values.
* **the NVIDIA GPU Operator's** (:mod:`gpulint.k8s.operatorvalues`): its top-level values,
  which GPU049 checks against the chart's; the document holds no pod spec.
* **vLLM production stack's** (``servingEngineSpec.modelSpec``, at the top or under the key
  of a chart that depends on it): each model's pod, found as in a HelmRelease's values
  (:func:`gpulint.k8s.shapes.is_model_spec`).
* **the Ollama chart's** (otwld/ollama-helm: ``ollama.gpu`` with ``enabled: true``, at the
  top or under ``ollama:``, the key of a chart that depends on it, as Open WebUI's does):
  the Ollama pod, whose container the values' top holds, with the accelerators of the GPU
  block (:func:`gpulint.k8s.shapes.chart_block_gpus`) whether or not it sets ``resources``.
* **GitHub Actions Runner Controller's** ``gha-runner-scale-set`` (``githubConfigUrl`` or
  ``githubConfigSecret`` beside ``template.spec.containers``): the runner pods' template,
  which the chart uses as written, found by its shape as in a HelmRelease's values.

The document is represented by an object with no API version, kind or name
(:data:`VALUES_REF`): findings on it name no object.
"""

from __future__ import annotations

from typing import Any

from gpulint.k8s.jupyterhub import is_values_document
from gpulint.k8s.objects import K8sObject, sops_encrypted
from gpulint.k8s.operatorvalues import (
    FILE_CHART,
    chart_of_file,
    is_values_document as is_gpu_operator_values,
)
from gpulint.loader.document import Document
from gpulint.model import ObjectRef, Path

#: What a finding on a chart's values file names as its object: none (the engine reports
#: such findings without one).
VALUES_REF = ObjectRef(None, None, None, None)


#: The keys under which an object hands values to a chart: a Flux HelmRelease's
#: ``spec.values``, an Argo CD source's ``helm.valuesObject``.
_VALUES_KEYS = frozenset({"values", "valuesObject"})


def in_chart_values(obj: K8sObject, path: Path) -> bool:
    """Whether ``path`` (a pod spec's or resources block's, in ``obj``'s document) is in a
    chart's values: a values file's (an object of no kind), or values an object hands to a
    chart, which the chart writes into its pods (not an operator's own resource's fields)."""
    return not obj.kind or any(k in _VALUES_KEYS for k in path[len(obj.path) :])


def named(obj: K8sObject) -> ObjectRef | None:
    """The object a finding on ``obj`` names: None for a chart's values file."""
    return None if obj.ref is VALUES_REF else obj.ref


def values_object(doc: Document, label: str = "") -> tuple[K8sObject, bool] | None:
    """A document that is no Kubernetes object but a values file of a chart read as written
    (``label``: the file's name, which may name the chart), as the object that stands for it,
    and whether its pod specs are found by their shape (app-template's) or it holds none
    (JupyterHub's, the GPU charts')."""
    data = doc.data
    if not isinstance(data, dict) or "apiVersion" in data or "kind" in data:
        return None
    if sops_encrypted(data):
        return None  # ciphertext values
    if is_values_document(data):
        return K8sObject(doc, (), data, VALUES_REF, "", ""), False
    chart = chart_of_file(label, data) if label else None
    if chart is not None or is_gpu_operator_values(data):
        obj = K8sObject(doc, (), data, VALUES_REF, "", "")
        if chart is not None:
            obj.memo[FILE_CHART] = chart  # the chart the file is named for
        return obj, False
    if app_template_values(data) or app_template_values(data.get("app-template")):
        return K8sObject(doc, (), data, VALUES_REF, "", ""), True
    if _production_stack(data) or any(_production_stack(v) for v in data.values()):
        return K8sObject(doc, (), data, VALUES_REF, "", ""), True
    if _runner_scale_set(data):
        return K8sObject(doc, (), data, VALUES_REF, "", ""), True
    if _ollama(data) or _ollama(data.get("ollama")):
        return K8sObject(doc, (), data, VALUES_REF, "", ""), True
    return None


def _ollama(values: Any) -> bool:
    """``values`` are the Ollama chart's (otwld/ollama-helm): an ``ollama`` mapping with a
    ``gpu`` mapping that turns it on (``enabled: true``), the block the chart writes the
    container's accelerator request from (:func:`gpulint.k8s.shapes.chart_block_gpus`)."""
    if not isinstance(values, dict):
        return False
    ollama = values.get("ollama")
    gpu = ollama.get("gpu") if isinstance(ollama, dict) else None
    return isinstance(gpu, dict) and gpu.get("enabled") is True


def _runner_scale_set(values: dict[str, Any]) -> bool:
    """``values`` are GitHub Actions Runner Controller's ``gha-runner-scale-set`` chart's:
    its ``githubConfigUrl`` or ``githubConfigSecret`` beside a ``template`` whose ``spec``
    lists containers (the chart's values.yaml: ``template`` is the runner pods'
    PodTemplateSpec, used as written)."""
    if "githubConfigUrl" not in values and "githubConfigSecret" not in values:
        return False
    template = values.get("template")
    spec = template.get("spec") if isinstance(template, dict) else None
    return isinstance(spec, dict) and isinstance(spec.get("containers"), list)


def _production_stack(values: Any) -> bool:
    """``values`` are vLLM production stack's: a ``servingEngineSpec`` whose ``modelSpec``
    lists a model with a ``repository``."""
    engine = values.get("servingEngineSpec") if isinstance(values, dict) else None
    models = engine.get("modelSpec") if isinstance(engine, dict) else None
    return isinstance(models, list) and any(
        isinstance(m, dict) and isinstance(m.get("repository"), str) for m in models
    )


def app_template_values(values: Any) -> bool:
    """``values`` are app-template's: a ``controllers`` mapping of which a controller has a
    ``containers`` mapping of containers with an ``image`` mapping."""
    controllers = values.get("controllers") if isinstance(values, dict) else None
    if not isinstance(controllers, dict):
        return False
    for controller in controllers.values():
        containers = controller.get("containers") if isinstance(controller, dict) else None
        if isinstance(containers, dict) and any(
            isinstance(c, dict) and isinstance(c.get("image"), dict) for c in containers.values()
        ):
            return True
    return False
