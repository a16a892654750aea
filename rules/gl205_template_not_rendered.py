"""A file that is a template (Go, Jinja, envsubst) outside a chart: not YAML until rendered.

## What it does
Reports, once per file, a file that does not parse as YAML because of template actions left
in it: Go or Jinja `{{ ... }}`, Jinja `{% ... %}` and `{# ... #}`, envsubst `${VAR}`, and
the bare placeholders a program replaces by string (a name in capitals with an underscore glued
to the `:` or quote before it, where the program inserts YAML: `env:HF_TOKEN_ENV`,
`annotations:NLB_ANNOTATIONS`, `cleanPodPolicy: "All"LOG_CONFIG`; blanked as spaces).
gpulint blanks the actions and parses the file again: if it parses then, the actions were
what broke it, and GL205 (info) is reported at the action on or before the line where
parsing stopped, instead of a YML001 syntax error. A file with control actions (`{{ if }}`,
`{{ range }}`, `{% ... %}`) whose blanked text still fails on its structure (an item where a
key was due: the branches write keys and items blanking cannot stand in for) is a template
too. Otherwise, if the file still does not parse (a tab, a character no token starts with),
the YML001 error stands. Documents before the one that does not parse are linted as usual.

Capitals with an underscore in brackets glued to other text (`value: [GCLOUD_PROJECT]-media`,
which a course's reader replaces with `sed`), a name between double `@` (`@@IMAGE_TAG@@`) and
a `{name}` format field glued to other text (`{REGISTRY}/app:1`, `{job_id}-launcher`),
a name between `%` (`code: %ACTIVATION_CODE%`, `name: %NAMESPACE%`: a `%` starts no plain
value) and a `<name>` or a `{NAME}` format field alone on its line (`<hostNet>`,
`{RDMA_RESOURCES}`: where a generator writes keys or nothing) are such placeholders too.

A placeholder that parses as YAML where a string is due is reported the same way, once, at the
first one, and the file is not linted from its document on: a Python `str.format` field as the
whole value of `value`, `image`, `name`, `namespace` or a key with a `/` (a label, an
annotation, a resource name: `name: {job_id}`, `nvidia.com/gpu: {descriptor.gpus}`, which YAML
reads as a mapping of one key), or capitals with an underscore in brackets as the whole value
of `value` or `image` (`value: [GCLOUD_PROJECT]`, a list of one name), or capitals with an
underscore as an object's `apiVersion` or `kind` (`apiVersion: DAEMONSET_API`: an API version
is lower-case and a kind has no `_`, so no API server has it), or an envsubst variable where
YAML of its own or a list is inserted: the whole value of `command` or `args` (`command:
${CMD}`), or alone on its line below a key (`limits:` over `${GPU_LIMITS}`; an item `-
${MODEL}` is a list's string and is linted). Not in the text of a
block scalar (a prompt, a script), and not where a list is due (`add: [NET_RAW]`).

A template that parses as YAML (`image: "{{ .Values.image }}"`) is otherwise linted: its
placeholders are reported by the rules that meet them (GPU007). Templates inside a Helm
chart are never linted as files; GL201 reports the chart.

## Why it matters
Such a file is not applied as written: a renderer (Helm, Ansible, envsubst, a CI script)
turns it into YAML first. Calling it a syntax error fails the run for a file nothing is
wrong with; saying nothing would let it pass unchecked.

## Example
```yaml
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.05-py3
{{- if .Values.gpu }}   # GL205
    resources:
      limits:
        nvidia.com/gpu: 1
{{- end }}
```

## Use instead
Lint what the template renders: `gpulint check --render` for a Helm chart or a Kustomize
overlay, `envsubst < pod.yaml.tpl | gpulint check -` (or any other renderer's output) for
the rest; or leave the file out with `exclude` in `.gpulint.yaml`.

## Options
None.

## References
- https://pkg.go.dev/text/template
- https://jinja.palletsprojects.com/en/stable/templates/
- https://www.gnu.org/software/gettext/manual/html_node/envsubst-Invocation.html
"""

CODE = "GL205"
NAME = "template-not-rendered"
SEVERITY = "info"
SCOPE = "input"
