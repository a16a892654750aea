"""GPU resources in a document gpulint cannot read as a workload: said, not skipped.

## What it does
Reports, once per document, GPU resources that no rule checked because gpulint cannot place
them:

- a document that is no Kubernetes object (no `apiVersion` and `kind`: a Kustomize patch
  written without them, a values file) that holds a GPU resource under a `limits` or
  `requests` mapping, or a JSON patch operation whose `path` ends at one;
- a ConfigMap `data` (or Secret `stringData`) value whose text is itself YAML or JSON
  holding one: the pod templates that clearml-agent, Determined or KubeAI profiles keep;
- a container's `command` or `args` string whose heredoc holds one (a CronJob that runs
  `kubectl apply -f - <<EOF`).

A document with `kind` whose other top-level key is one typo from `apiVersion` (or the
reverse: `piVersion: apps/v1` beside `kind: Deployment`) is said to misspell it: kubectl
refuses a document without `apiVersion` and `kind`.

Only resource names the registry knows count (`nvidia.com/gpu`, `amd.com/gpu`, ...; see
`gpulint devices`). An embedded text is read only when it names one, up to 256 KiB, with
gpulint's own loader, and one level deep.

## Why it matters
Everything else gpulint checks in such a pod (a fractional GPU, a GPU under `requests`
only, a missing toleration) is invisible in these shapes, and a run that says nothing about
them looks like a pass.

## Example
```yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: clearml-agent-pod-template
data:
  template.yaml: |  # GL204: a pod template with nvidia.com/gpu inside ConfigMap/...
    spec:
      containers:
        - name: agent
          resources:
            limits:
              nvidia.com/gpu: 1
```

## Use instead
Keep the template in its own file and lint that file (the ConfigMap can be generated from
it: Kustomize's `configMapGenerator`, `kubectl create configmap --from-file`); give a
patch its `apiVersion`, `kind` and `metadata.name`, or lint the rendered overlay or chart
(`gpulint check --render`). Or ignore GL204 where the content is checked another way.

## Options
None.

## References
- https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/configmapgenerator/
- https://github.com/gpulint/gpulint/blob/main/docs/rendering.md
"""

CODE = "GL204"
NAME = "gpu-content-not-checked"
SEVERITY = "info"
SCOPE = "input"
