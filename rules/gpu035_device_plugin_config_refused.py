"""NVIDIA device plugin configuration the plugin refuses.

## What it does
Reads the NVIDIA device plugin's configuration files written in the repository (a
`version: v1` configuration with a `sharing` block of `timeSlicing` or `mps`: a ConfigMap's
`data`, the plugin chart's or the GPU Operator's values in a Flux `HelmRelease`, an Argo CD
`Application` or `ApplicationSet`, a k3s `HelmChart` or `HelmChartConfig`, a patch's text in
a `Kustomization`) and reports what the plugin's decoder refuses:

- a `timeSlicing` or `mps` block without `resources`, or with an empty list ("no resources
  specified"), often because `replicas` was written on the block instead of in a row;
- a `resources` row without `name` or `replicas`, with `replicas` below 2 ("number of
  replicas must be >= 2") or written as a quoted string;
- a row's `devices` that is a string other than `all`, or a count of 0 or less;
- a `version` other than `v1`.

The finding is on the offending key inside the configuration's text when the text is the
value written there (a literal block), else on the text. Rows whose values are template
placeholders (`{{ }}`, `${VAR}`) are not judged.

## Why it matters
The plugin decodes its configuration when it starts (NVIDIA/k8s-device-plugin
`api/config/v1` `replicas.go`), and a configuration it refuses stops it: the nodes that use
that configuration advertise no GPUs, and every GPU pod bound for them stays Pending. YAML
keys the decoder does not know are dropped silently, so `sharing: {mps: {replicas: 4}}`
reads as an MPS block with no resources. The finding is an `error` when the configuration
is the only one written there; a `warning` when it is one of several named ones (one per
node label), which hurts only the nodes labelled to use it, and when the ConfigMap is a
Kustomize patch linted without `--render` (the base it patches may hold other
configurations).

## Example
```yaml
kind: ConfigMap
data:
  config.yaml: |
    version: v1
    sharing:
      mps:
        replicas: 4   # GPU035
```

## Use instead
```yaml
    sharing:
      mps:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
```

## Options
None.

## References
- NVIDIA/k8s-device-plugin `api/config/v1/config.go` (`parseConfigFrom`),
  `sharing.go`, `replicas.go` (`ReplicatedResources.UnmarshalJSON`,
  `ReplicatedResource.UnmarshalJSON`, `ReplicatedDevices.UnmarshalJSON`)
- https://github.com/NVIDIA/k8s-device-plugin#shared-access-to-gpus
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import K8sObject, RuleContext, Violation, device_plugin_refusals

CODE = "GPU035"
NAME = "device-plugin-config-refused"
SEVERITY = "error"
SCOPE = "object"
OPTIONS: dict[str, object] = {}


#: The kinds that hold the plugin's configuration: a ConfigMap's data, the values a Flux
#: HelmRelease, an Argo CD Application or ApplicationSet, or a k3s HelmChart hands the plugin
#: chart or the GPU Operator's, a patch of a kustomization. Other objects are not walked.
HOLDERS = frozenset(
    (
        "ConfigMap",
        "HelmRelease",
        "Application",
        "ApplicationSet",
        "HelmChart",
        "HelmChartConfig",
        "Kustomization",
    )
)


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.parent is not None or obj.kind not in HOLDERS:
        return  # an object inside another is read with the one that holds it
    for refusal in device_plugin_refusals(obj.data):
        inside = refusal.in_text and refusal.within is None and refusal.inner
        where = f" ({refusal.inner})" if inside else ""
        # the detail's text after "; " is the help line (Violation.help)
        yield Violation(
            (*obj.path, *refusal.path),
            f"the NVIDIA device plugin refuses this configuration{where}: {refusal.detail}",
            at="value" if refusal.in_text else "key",
            severity="warning" if refusal.several or ctx.part else None,
            within=refusal.within,
        )
