"""``helm template`` run: its argv (every value ``--flag=value``, the positionals after
``--``), the bounds of :mod:`gpulint.render.tools`, the checks of what helm would read
(:func:`refused_inputs`) and helm's errors as GL200 at the place they name. Split from
:mod:`gpulint.render.helm.chart`, which maps the rendered output back to templates and values.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, NamedTuple

from gpulint import codes
from gpulint.render import ChartOptions, RenderOptions
from gpulint.render.helm.schemarefs import remote_schema_ref
from gpulint.render.mapping import label_of
from gpulint.render.tools import BUDGET_SPENT, ToolResult, run_tool, time_left

if TYPE_CHECKING:
    from gpulint.util.walk import Listings

#: How a helm before 3.16 refuses the flag (cobra's words, first on its error output).
NO_SKIP = "Error: unknown flag: --skip-schema-validation"

INSTALL_HELM = (
    "helm was not found: install Helm 3 or later (https://helm.sh/docs/intro/install/) or "
    "pass --helm PATH"
)


class Failure(NamedTuple):
    """Why a folder was not rendered: ``code`` GL200 (it failed) or GL202 (no program);
    ``path``: a template helm's error names, to show it at (None: the chart's own file)."""

    code: str
    message: str
    line: int = 1
    path: str | None = None
    column: int = 1


def helm_template(
    helm: str, args: list[str], folder: str, deadline: float | None
) -> ToolResult | Failure:
    """``helm template ARGS`` in the chart's folder, for what is left of the run's budget."""
    timeout = time_left(deadline)
    if timeout is None:
        return Failure(codes.RENDER_FAILED, BUDGET_SPENT)
    return run_tool([helm, "template", *args], cwd=os.path.abspath(folder), timeout=timeout)


def refused_inputs(
    folder: str, options: RenderOptions, listings: Listings | None = None
) -> Failure | None:
    """Why helm must not render the chart (GL200), if it must not: an entry of the chart it
    must not read (:func:`gpulint.render.helm.inputs.links_outside`: a link out of the repository,
    a FIFO, a device, a link loop), or a values file that is a link out of the repository,
    a system file or not a regular file (:func:`gpulint.render.helm.inputs.refused_file`).
    ``listings``: the run's, which answer for the folders its walks listed."""
    from gpulint.render.helm.inputs import links_outside, refused_file
    from gpulint.render.trees import project_root

    root = project_root(folder)
    entry = links_outside(folder, root, listings)
    if entry is not None:
        return Failure(codes.RENDER_FAILED, f"not rendered: {label_of(entry[0])} {entry[1]}")
    for values in options.for_chart(folder).values:
        why = refused_file(values, root)
        if why is not None:
            return Failure(
                codes.RENDER_FAILED, f"not rendered: values file {label_of(values)} {why}"
            )
    return None


#: API versions every Kubernetes release still maintained serves that helm's offline
#: default set lacks (it lists client-go's groups; the aggregator's is not one of them): a
#: template that asks ``.Capabilities.APIVersions.Has "apiregistration.k8s.io/v1"`` renders
#: what any cluster would, not the ``v1beta1`` no cluster serves since 1.22.
SERVED_EVERYWHERE = ("apiregistration.k8s.io/v1",)


def template(
    helm: str,
    folder: str,
    opts: ChartOptions,
    deadline: float | None,
    marks: tuple[str, ...] = (),
    schemas: str | None = None,
) -> str | Failure | ToolResult:
    """``helm template`` of the chart in ``folder`` once what helm reads has been checked
    (:func:`gpulint.render.helm.chart.render`; :mod:`gpulint.render.fixcopy` renders a checked
    chart again): the argv of ``render`` and its bounds; helm's own failure is its result
    (exit status, error output). ``schemas``: the
    chart folder whose schemas a helm older than 3.16 would validate, if not ``folder``."""
    flags = [f"--namespace={opts.namespace}"] if opts.namespace else []
    flags += [f"--api-versions={version}" for version in SERVED_EVERYWHERE]
    if opts.kube_version:
        flags.append(f"--kube-version={opts.kube_version}")
    flags += [f"--values={os.path.abspath(values)}" for values in (*opts.values, *marks)]
    flags += [f"--set={assignment}" for assignment in opts.set]
    args = [*flags, "--", opts.release_name, os.path.abspath(folder)]
    result = helm_template(helm, ["--skip-schema-validation", *args], folder, deadline)
    if isinstance(result, ToolResult) and result.stderr.startswith(NO_SKIP):
        why = remote_schema_ref(schemas or folder)  # a helm before 3.16 validates every schema
        if why is not None:
            return Failure(codes.RENDER_FAILED, why)
        result = helm_template(helm, args, folder, deadline)
    if isinstance(result, Failure):
        return result
    if result.reason is not None:
        return Failure(codes.RENDER_FAILED, f"helm template {result.reason}")
    if result.returncode != 0:
        return result  # helm's error: the caller says where (gpulint.render.helm.chart.failed)
    return result.stdout
