"""A Helm chart or Kustomize root linted: rendered, linted as one file, mapped back.

The runner (:mod:`gpulint.runner`) hands a target with ``Target.render`` here; the
rendering itself is :mod:`gpulint.render`'s.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from gpulint.loader.document import Problem
from gpulint.model import Finding, LintedObject, Span
from gpulint.readtarget import collector_paused

if TYPE_CHECKING:
    from gpulint.discover import Target
    from gpulint.engine import Linter
    from gpulint.render import RenderOptions
    from gpulint.render.trees import Trees


#: How the run renders charts and Kustomize roots (set by :func:`gpulint.runner.run`; forked
#: workers inherit it): the options, and the trees ``discover`` found them in.
rendering: tuple[RenderOptions, Trees] | None = None

NOT_RENDERED = (
    "a Helm chart: its templates are not YAML until rendered and were not linted; pass "
    "--render to lint what it renders (runs helm template)"
)


def lint_rendered(
    linter: Linter, target: Target, seen: list[LintedObject] | None = None
) -> list[Finding]:
    """A chart's or Kustomize root's findings: rendered, linted, mapped back to its files.

    Without ``--render`` a chart is one GL201 (info) at its ``Chart.yaml``. A program that
    is missing is GL202 (a tool error: exit 2) and one that fails GL200, both at the
    chart's ``Chart.yaml`` or the root's kustomization file; the rest of the run goes on.
    """
    from gpulint.render import RenderOptions
    from gpulint.render.mapping import Rendered, label_of
    from gpulint.render.trees import Trees, kustomization_file

    folder = target.path or target.label
    options, trees = rendering if rendering is not None else (RenderOptions(), Trees(False))
    if target.render == "helm":
        anchor = label_of(os.path.join(folder, "Chart.yaml"))
    else:
        anchor = label_of(kustomization_file(folder) or folder)
    if not options.enabled:
        return linter.problem(anchor, Problem("GL201", Span(1, 1, 1, 1), NOT_RENDERED))
    rendered: Rendered
    if target.render == "helm":
        from gpulint.render import helm

        out = helm.render(folder, options)
        if isinstance(out, helm.Failure):  # at the template helm's error names, if any
            span = Span(out.line, out.column, out.line, out.column)
            return linter.problem(out.path or anchor, Problem(out.code, span, out.message))
        rendered = helm.HelmRendered(target.label, folder, out, options.for_chart(folder))
    else:
        from gpulint.render import kustomize
        from gpulint.render.helm import Failure

        built = kustomize.render(folder, options, trees)
        if isinstance(built, Failure):
            span = Span(built.line, 1, built.line, 1)
            return linter.problem(anchor, Problem(built.code, span, built.message))
        rendered = kustomize.KustomizeRendered(target.label, folder, built, trees)
    with collector_paused():
        findings = linter.lint_bytes(target.label, rendered.text.encode("utf-8"), seen)
    # Comments in templates reach the rendered output, so `# gpulint:` directives there
    # have applied; `per-file-ignores` are matched again against the file each finding
    # now names (a template, a values file, a patch).
    mapped: list[Finding] = []
    for f in rendered.remap(findings):
        if f.suppression is None and f.path != target.label:
            file = linter.suppressor.for_file(f.path, None)
            if file:
                f = file.apply([f])[0]
        mapped.append(f)
    return mapped
