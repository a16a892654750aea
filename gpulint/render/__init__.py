"""Helm charts and Kustomize overlays: rendered with the real programs, linted, and every
finding mapped back to the line a user edits.

* ``trees``: which folders are charts and Kustomize roots, what files they consume.
* ``tools``: running ``helm`` / ``kubectl`` bounded and in a scrubbed environment.
* ``helm`` and ``kustomize``: one render each, and where a rendered line came from.
* ``textmap``: finding a key path in a template's text (which is not YAML yet).

Rendering runs programs on the linted tree, so it happens only when the user asks for it
(``--render``); README "Security" says what each program may and may not do.
"""

from collections.abc import Mapping
from types import MappingProxyType

# Plain classes, not NamedTuples: every check imports this package (``trees`` finds the
# charts it reports as GL201), and a NamedTuple costs start-up ten times as much to define
# (docs/architecture.md). Nothing unpacks or compares these.


class ChartOptions:
    """How a chart is rendered (``helm template`` options)."""

    __slots__ = ("kube_version", "namespace", "release_name", "set", "values")

    def __init__(
        self,
        values: tuple[str, ...] = (),
        set: tuple[str, ...] = (),
        kube_version: str | None = None,
        release_name: str = "release-name",
        namespace: str | None = None,
    ) -> None:
        self.values = values
        self.set = set
        self.kube_version = kube_version
        self.release_name = release_name
        self.namespace = namespace


class RenderOptions:
    """Whether and how the run renders charts and Kustomize roots."""

    __slots__ = ("chart", "charts", "enabled", "helm", "kustomize")

    def __init__(
        self,
        enabled: bool = False,
        helm: str | None = None,
        kustomize: str | None = None,
        chart: ChartOptions | None = None,
        charts: Mapping[str, ChartOptions] | None = None,
    ) -> None:
        self.enabled = enabled
        #: A path given with --helm; else `helm` on PATH.
        self.helm = helm
        #: A path given with --kustomize; else kubectl, kustomize.
        self.kustomize = kustomize
        self.chart = chart if chart is not None else ChartOptions()
        #: Per-chart options from the configuration, by absolute chart folder.
        self.charts: Mapping[str, ChartOptions] = (
            charts if charts is not None else MappingProxyType({})
        )

    def for_chart(self, folder: str) -> ChartOptions:
        """The chart's options: the configuration's for that chart, then the command line's
        (values files and ``--set`` from both, the command line's last so that they win)."""
        import os

        own = self.charts.get(os.path.abspath(folder))
        if own is None:
            return self.chart
        cli = self.chart
        return ChartOptions(
            values=own.values + cli.values,
            set=own.set + cli.set,
            kube_version=cli.kube_version or own.kube_version,
            release_name=(
                cli.release_name
                if cli.release_name != ChartOptions().release_name
                else own.release_name
            ),
            namespace=cli.namespace or own.namespace,
        )
