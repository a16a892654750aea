"""The program that renders a chart or overlay is not installed.

## What it does
Reports, at the chart's `Chart.yaml` (or the overlay's kustomization file), that
`gpulint check --render` found no `helm` (for a chart) or no `kubectl`/`kustomize` (for an
overlay), or that the program named with `--helm`/`--kustomize` is not an executable file.
The message says what to install or which option to pass.

Like GL900, this is a tool error: the run's exit code is 2 whatever `--fail-on` says, and
the rest of the run goes on (other charts, overlays and files are linted).

## Why it matters
The chart was not checked. A CI job that lints charts must fail loudly when the renderer
went missing from its image, not pass with nothing checked.

## Example
```console
$ gpulint check --render charts/trainer
charts/trainer/Chart.yaml:1:1: GL202 error: helm was not found: install Helm 3 or later
(https://helm.sh/docs/intro/install/) or pass --helm PATH
```

## Use instead
Install helm (charts) or kubectl (overlays), or pass `--helm PATH` / `--kustomize PATH`.

## Options
None.

## References
- https://github.com/gpulint/gpulint/blob/main/docs/rendering.md
- https://helm.sh/docs/intro/install/
"""

CODE = "GL202"
NAME = "renderer-missing"
SEVERITY = "error"
SCOPE = "input"
