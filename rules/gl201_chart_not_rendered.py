"""A Helm chart was found but not rendered.

## What it does
Reports, once per chart at its `Chart.yaml`, that a folder holding `Chart.yaml` was found
(walked, or named through one of its files) in a run without `--render`. A walk that starts
inside a chart (`gpulint check chart/templates`, a subchart, a chart kept in another chart's
`templates/`) finds the outermost chart holding it, as a walk from above does. Its
`templates/` are not YAML until helm renders them, so they were not linted as YAML; neither
were `values.yaml` and `Chart.yaml`, which are not manifests. Only what the templates write
as plain text is checked: the lines helm renders as written (no action, outside every
block), by the rules whose findings rest on what a line writes (docs/rendering.md,
"Templates as written": GPU026's removed API versions, GPU024's misplaced fields, ...), and
a GPU chart's `values.yaml` against its templates' text (GPU082: placement values no
template reads). A
manifest in the chart's folder that helm does not read (`examples/job.yaml`, `crds/`, a
Deployment kept beside `Chart.yaml`) is linted as a file of its own, from above or from its
own folder.

A `Chart.yaml` written inside a folder named `templates/`, beside templates (YAML files
with `{{ }}` actions), in a folder with no `templates/` or `charts/` of its own, is reported
so, with `--render` too: that folder is a chart without templates, helm renders none of
them and they are not linted; the finding names them and says where `Chart.yaml` belongs.

## Why it matters
Linting a template as plain YAML reports noise (`{{ .Values.gpus }}` reads as a mapping) and
misses what is applied. Saying nothing would let a chart pass unchecked.

## Example
```console
$ gpulint check deploy/
deploy/charts/trainer/Chart.yaml:1:1: GL201 info: a Helm chart: its templates are not YAML
until rendered, and only what they write as plain text was checked
  help: pass --render to lint what it renders (runs helm template)
```

## Use instead
`gpulint check --render deploy/` (needs `helm`; see docs/rendering.md),
or ignore GL201 where charts are linted another way.

## Options
None.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/rendering.md
"""

CODE = "GL201"
NAME = "chart-not-rendered"
SEVERITY = "info"
SCOPE = "input"
