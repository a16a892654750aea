"""Helm charts and Kustomize overlays: rendered with the real programs, linted, and every
finding mapped back to the line a user edits.

* ``trees``: which folders are charts and Kustomize roots, what files they consume.
* ``tools``: running ``helm`` / ``kubectl`` bounded and in a scrubbed environment.
* ``mapping``: a finding on rendered output moved to the file a user edits; ``target``: one
  chart or root linted; ``fixvalues``, ``fixchanges``, ``fixcopy``: a rendered finding's
  fix made where its value is written, and checked by rendering again.
* ``helm/``: a chart rendered with ``helm template`` and mapped back to its template and
  values lines (its ``__init__`` lists the modules).
* ``kustomize/``: a root built with ``kubectl kustomize`` and mapped back to its patch or
  base file.

Rendering runs programs on the linted tree, so it happens only when the user asks for it
(``--render``); README "Security" says what each program may and may not do.

May import: :mod:`gpulint.util`, :mod:`gpulint.model`, :mod:`gpulint.loader`; never the
rules, linting or configuration (the configuration hands it :class:`ChartOptions`).
"""

from collections.abc import Mapping
from types import MappingProxyType

#: Seconds a run may spend rendering, every chart and overlay together (``--render-timeout``;
#: each program also has its own limit, ``tools.TIMEOUT_SECONDS``).
RENDER_BUDGET_SECONDS = 300.0

_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS = "lower-case letters, digits and '-', starting and ending with a letter or digit"
#: What helm accepts for each option the configuration may set, checked as helm checks it:
#: (pattern, most characters, what it is). A release name is a DNS-1123 subdomain of at
#: most 53 characters (helm's pkg/chartutil/validate_name.go), a namespace a DNS-1123 label.
#: Pattern texts, compiled by ``re``'s cache on first use: every check imports this package.
_SHAPES = {
    "release-name": (
        rf"{_LABEL}(\.{_LABEL})*",
        53,
        f"a DNS-1123 subdomain ({_DNS}, in parts joined by '.'; at most 53 characters)",
    ),
    "namespace": (_LABEL, 63, f"a DNS-1123 label ({_DNS}; at most 63 characters)"),
    "kube-version": (
        r"v?[0-9]+(\.[0-9]+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?",
        64,
        "a Kubernetes version such as 1.30 or v1.30.2",
    ),
}


def option_problem(option: str, value: str) -> str | None:
    """Why ``value`` is not a valid ``option`` (``release-name``, ``namespace``,
    ``kube-version``) for helm, or None. A value from the linted tree's configuration is
    thereby never taken for an option (``--post-renderer=./x``) or anything else."""
    import re

    pattern, most, what = _SHAPES[option]
    # The length first: it bounds the pattern's work.
    if len(value) <= most and re.fullmatch(pattern, value, re.ASCII):
        return None
    return f"{option} {value!r} is not {what}, as helm requires"


# Plain classes, not NamedTuples: every check imports this package (``trees`` finds the
# charts it reports as GL201), and a NamedTuple costs start-up ten times as much to define
# (docs/architecture.md). Nothing unpacks or compares these.


class ChartOptions:
    """How a chart is rendered (``helm template`` options)."""

    __slots__ = ("configured_set", "kube_version", "namespace", "release_name", "set", "values")

    def __init__(
        self,
        values: tuple[str, ...] = (),
        set: tuple[str, ...] = (),
        kube_version: str | None = None,
        release_name: str = "release-name",
        namespace: str | None = None,
        configured_set: int = 0,
    ) -> None:
        self.values = values
        self.set = set
        #: How many of ``set``, the first ones, come from the configuration's ``render:``
        #: (the rest from the command line): a finding names where its value was set.
        self.configured_set = configured_set
        self.kube_version = kube_version
        self.release_name = release_name
        self.namespace = namespace


class RenderOptions:
    """Whether and how the run renders charts and Kustomize roots."""

    __slots__ = ("chart", "charts", "deadline", "enabled", "helm", "kustomize", "leaves_plain")

    def __init__(
        self,
        enabled: bool = False,
        helm: str | None = None,
        kustomize: str | None = None,
        chart: ChartOptions | None = None,
        charts: Mapping[str, ChartOptions] | None = None,
        deadline: float | None = None,
        leaves_plain: bool = False,
    ) -> None:
        self.enabled = enabled
        #: What a run without --render reports of a chart is left to it (--rendered-only:
        #: pre-commit's gpulint-render hook beside gpulint): the chart's values no template
        #: reads, and what its templates write as plain text (gpulint.render.target).
        self.leaves_plain = leaves_plain
        #: A path given with --helm; else `helm` on PATH.
        self.helm = helm
        #: A path given with --kustomize; else kubectl, kustomize.
        self.kustomize = kustomize
        self.chart = chart if chart is not None else ChartOptions()
        #: Per-chart options from the configuration, by absolute chart folder.
        self.charts: Mapping[str, ChartOptions] = (
            charts if charts is not None else MappingProxyType({})
        )
        #: When the run's render budget (--render-timeout) is spent, on ``time.monotonic()``'s
        #: clock (one clock for the whole machine: forked workers share the deadline);
        #: None: no budget but each program's own limit.
        self.deadline = deadline

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
            configured_set=len(own.set) + cli.configured_set,
            kube_version=cli.kube_version or own.kube_version,
            release_name=(
                cli.release_name
                if cli.release_name != ChartOptions().release_name
                else own.release_name
            ),
            namespace=cli.namespace or own.namespace,
        )
