"""A chart or overlay could not be rendered.

## What it does
Reports that `gpulint check --render` could not render a chart or overlay, at the line
helm's error names (`templates/x.yaml:12:3` for a template error or a `fail`/`required`,
the dependency's `name:` in `Chart.yaml` for one missing from `charts/`), else at the chart's
`Chart.yaml` (or the overlay's kustomization file), with the renderer's own error in one
line: `helm template`
failed (a template error, a missing value marked `required`, dependencies missing from
`charts/`), `kubectl kustomize` failed, it ran too long, used too much memory or wrote too
much, the run's render budget (`--render-timeout`) was spent before its turn, or gpulint
refused to run it (a remote base, a plugin, a path or symbolic link leaving the repository,
through a linked folder too; a values file that is not a regular file; a FIFO, a device or a
link loop in a chart; a values schema referring outside itself for a helm that cannot skip
schema validation).
An overlay is refused when any kustomization it reads names a URL or git repository in any
field that holds paths (`resources`, `configurations`, `openapi.path`, patches, generator
files: kustomize would fetch it), has a key that is no kustomize field (kustomize reads
`Resources:` as `resources`), or is itself a link out of the repository, not a regular file
(`/dev/stdin`), over 1 MiB, or YAML that kustomize could read otherwise (a syntax error, a
duplicate key, a tag).
An overlay's failure is reported at the file and line it names: a refused entry at its line
in the kustomization that holds it (a base's too), a YAML error at its line in its file, an
error of a resource entry at that entry, else the overlay's kustomization file. When a root
overlay that names other overlays fails, each overlay it builds on is built alone: those
that build are linted, those that fail are reported once per distinct failure.

## Why it matters
Nothing in the chart or overlay was checked. A template error is also what `helm install`
would stop at; a refusal is gpulint keeping its promise that linting a tree runs no code and
fetches nothing the user did not ask for.

## Example
```yaml
# Chart.yaml
apiVersion: v2
name: trainer
version: 0.1.0
dependencies:
  - name: gpu-metrics            # GL200: helm template failed: ... found in Chart.yaml,
    version: 1.x                 #        but missing in charts/ directory: gpu-metrics
    repository: https://charts.example.com
```

## Use instead
Fix the template, or vendor the dependencies you trust (`helm dependency build`) so that
rendering needs no network; build an overlay that needs plugins or remote bases yourself and
pipe its output: `kustomize build --enable-helm overlays/prod | gpulint check -`.

## Options
None.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/rendering.md
- https://helm.sh/docs/helm/helm_template/
- https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/
"""

CODE = "GL200"
NAME = "render-failed"
SEVERITY = "error"
SCOPE = "input"
