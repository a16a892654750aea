"""A GPU chart's values offer pod placement that no template of the chart reads.

## What it does
Reads a Helm chart's `values.yaml` against its templates as text, rendered or not: a
`resources`, `nodeSelector`, `tolerations`, `affinity` or `runtimeClassName` key of the
values (at any depth) whose name no Go-template action of the chart's `templates/` (nor a
`{{ }}` of the values file, for `tpl`) mentions, and none of whose enclosing keys an action
takes whole (`toYaml .Values.server`, `range .Values.workers`, `with .Values.pod`), is read
by nothing. It is reported at the key: a **warning** when the key sets something (the
chart's own `resources.limits` with `nvidia.com/gpu: 1`, a toleration of the GPU pool's
taint) that the pods therefore do not get, `info` when it is empty (`tolerations: []`, as
`helm create` writes it): a value a user sets there is dropped.

Only GPU charts are read (an accelerator resource name of gpulint's registry in the
templates or the values), and only when the answer is sure: not a chart whose templates take
`.Values` whole (`toYaml .Values`, `include "x" .Values`), that has dependencies (a library
chart's templates read the parent's values; a subchart reads its key), that is a library
chart, whose values file is linted as a file of its own (an umbrella chart's values for a
GPU chart, app-template's), or whose templates are more than 8 MiB or 2,048 files. Keys
under `global` are left alone (subcharts read them).

## Why it matters
Helm drops a value no template reads without a word. A chart made with `helm create` offers
`tolerations` and `resources` in its values; when its templates were then written by hand
with the GPU limit and the toleration in them, a user who adds the toleration of the GPU
pool's taint in the values gets a pod without it, Pending, and the chart's own
`resources.limits.nvidia.com/gpu` is not what the pod holds.

## Example
```yaml
# values.yaml; templates/deployment.yaml writes `nvidia.com/gpu: 1` itself
resources:          # GPU082 (warning): read by no template
  limits:
    nvidia.com/gpu: 2
tolerations: []     # GPU082 (info)
```

## Use instead
```yaml
# templates/deployment.yaml
          resources:
            {{- toYaml .Values.resources | nindent 12 }}
      {{- with .Values.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
```
or remove the keys the chart does not offer.

## Options
None.

## References
- https://helm.sh/docs/chart_template_guide/values_files/ (values reach a template only
  through `.Values`)
- https://helm.sh/docs/chart_template_guide/subcharts_and_globals/ (a subchart reads its
  key and `global`)
"""

CODE = "GPU082"
NAME = "unread-chart-value"
SEVERITY = "warning"
SCOPE = "input"
