"""The values of GPU vendors' and GPU schedulers' charts, where a repository writes them.

Seven charts read their top-level values by name and ignore any other: the GPU Operator's
(NVIDIA/gpu-operator ``deployments/gpu-operator``), NVIDIA's device plugin's
(NVIDIA/k8s-device-plugin ``deployments/helm/nvidia-device-plugin``), Intel's GPU device
plugin's (intel/helm-charts ``charts/gpu-device-plugin``, ``intel-device-plugins-gpu``),
the ROCm device plugin's (ROCm/k8s-device-plugin ``helm/amd-gpu``, whose ``dp`` and ``lbl``
mappings are read key by key too: ``chart_component_keys``), the KAI Scheduler's and
Volcano's (``kai-scheduler``, ``volcano``: their components' mappings too) and HAMi's
(``hami``: its ``scheduler``, ``devicePlugin`` and ``devices`` too). A setting under a key
the chart does not have (``timeSlicing:`` at the top of the operator's values, ``sharing:``
at the top of the plugin's, ``containerToolkit:`` for ``toolkit:``) is dropped without a
word. Their values are found

* in a Flux ``HelmRelease`` whose ``spec.chart.spec.chart`` names the chart
  (``spec.values``);
* in an Argo CD ``Application`` (or ``ApplicationSet`` template) source whose ``chart`` names
  it: ``helm.valuesObject``, or the YAML text of ``helm.values`` (read as Helm reads it; a
  finding on one of its keys is placed inside the text);
* in a k3s or RKE2 ``HelmChart`` (``helm.cattle.io``) whose ``spec.chart`` names it: the YAML
  text of ``spec.valuesContent``, as Argo CD's ``helm.values``;
* in a values file (no ``apiVersion`` and ``kind``) that is plainly the GPU Operator's: at
  least three of its top-level keys are the chart's own components, two of them ones no
  other NVIDIA chart has (``driver``, ``toolkit``, ``devicePlugin``, ...; the device
  plugin's chart has ``gfd`` and ``nfd`` too), and most of its keys are the chart's; or
  under a ``gpu-operator:`` key of a chart that depends on it; or under the name of another
  of these charts (``nvidia-device-plugin:``, an umbrella chart's values for its
  dependency) when most of the keys there, two at least, are that chart's;
* in a values file named for the chart (``nvidia-device-plugin.yaml``,
  ``gpu-operator-values.yaml``, or a ``values*.yaml`` in a folder of that name) most of whose
  keys are the chart's, or named for it in a folder of values (``values/volcano.yaml``)
  whatever its keys, and which is no device plugin configuration file (``version:`` with
  ``sharing:`` or ``flags:``): :func:`chart_of_file`, told by the engine.

The charts' keys are ``charts`` of ``gpulint/data/operator-fields.json``: the union, over
every release and the newest commit read, of each chart's ``values.yaml`` keys, the
``.Values.<key>`` its templates read and the names of the charts it depends on
(``python -m tests.operator_fields``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any, NamedTuple

from gpulint.k8s.crds import operator_fields
from gpulint.k8s.objects import K8sObject, expand
from gpulint.model import Path

CHART = "gpu-operator"
PLUGIN_CHART = "nvidia-device-plugin"
#: Intel's GPU device plugin chart (intel/helm-charts ``charts/gpu-device-plugin``), which
#: makes a GpuDevicePlugin resource of its values for Intel's device plugin operator.
INTEL_GPU_CHART = "intel-device-plugins-gpu"
#: The ROCm device plugin's chart (ROCm/k8s-device-plugin ``helm/amd-gpu``).
AMD_GPU_CHART = "amd-gpu"
#: The GPU batch schedulers' charts: NVIDIA/KAI-Scheduler ``deployments/kai-scheduler`` and
#: volcano-sh/volcano ``installer/helm/chart/volcano``, whose top-level mappings
#: (``scheduler``, ``custom``) are read key by key too.
KAI_CHART = "kai-scheduler"
VOLCANO_CHART = "volcano"
#: HAMi's chart (Project-HAMi/HAMi ``charts/hami``): its scheduler extender and device plugin.
HAMI_CHART = "hami"
CHARTS = (
    CHART, PLUGIN_CHART, INTEL_GPU_CHART, AMD_GPU_CHART, KAI_CHART, VOLCANO_CHART, HAMI_CHART
)  # fmt: skip
#: The key of a values file's object memo that holds the chart its file is named for.
FILE_CHART = "values_chart"
#: The key of an object's memo that holds its charts' values (:func:`chart_values_of`).
_FOUND = "nvidia_chart_values"
#: A values text longer than this is not read (the chart's own values.yaml is ~20 kB).
_TEXT_MAX = 256 * 1024


class OperatorValues(NamedTuple):
    """A chart's values found in a document: ``data``, at ``path`` in the document, for
    ``chart``; for values written as a YAML text (Argo CD's ``helm.values``), ``path`` is
    that string's and ``starts``/``spans`` place its keys: ``spans[key]`` is the key's
    (line, column) in the text, ``starts`` the text's line offsets. ``version``: the chart
    release the object that hands the values pins, as written (a HelmRelease's
    ``chart.spec.version``, an Argo CD source's ``targetRevision``), ``""`` for a HelmRelease
    that pins none (Flux takes the newest), None when not known (a values file)."""

    data: Mapping[str, Any]
    path: Path
    spans: Mapping[str, tuple[int, int]] | None = None
    starts: tuple[int, ...] = ()
    chart: str = CHART
    version: str | None = None

    @property
    def text_prefix(self) -> str:
        """How a message names the text the values are written in (``helm.values ``, a
        HelmChart's ``valuesContent ``), or ``""`` for values written as YAML."""
        if self.spans is None:
            return ""
        return "valuesContent " if self.path[-1:] == ("valuesContent",) else "helm.values "

    def place(self, key: str) -> tuple[Path, tuple[int, int] | None]:
        """Where a finding on top-level ``key`` goes: its path, or the text's path and the
        key's (offset, length) in the text."""
        if self.spans is None:
            return (*self.path, key), None
        line, column = self.spans.get(key, (0, 0))
        if not 1 <= line <= len(self.starts):
            return self.path, None
        return self.path, (self.starts[line - 1] + column - 1, len(key))


#: Components only the GPU Operator's chart configures (not the device plugin's chart).
_OWN = frozenset(
    {
        "operator",
        "driver",
        "toolkit",
        "devicePlugin",
        "dcgmExporter",
        "migManager",
        "validator",
        "nodeStatusExporter",
        "daemonsets",
        "vgpuManager",
        "sandboxWorkloads",
    }
)


@cache
def chart_value_keys(chart: str = CHART) -> frozenset[str]:
    """The top-level values ``chart`` has in any release read (made once a chart)."""
    charts = operator_fields().get("charts", {})
    return frozenset(charts.get(chart, ()))


@cache
def chart_component_keys(chart: str) -> dict[str, frozenset[str]]:
    """The second-level values ``chart`` has under each of its top-level mappings that its
    templates read key by key (``chart_components``; empty for a chart not read so)."""
    table = operator_fields().get("chart_components", {}).get(chart, {})
    return {k: frozenset(v) for k, v in table.items()}


def chart_releases(chart: str = CHART) -> tuple[str, str]:
    """The first and last release of ``chart``'s repository read."""
    source = operator_fields()["sources"].get(chart, {})
    first, _, last = str(source.get("releases", "?..?")).partition("..")
    return first, last


def _chart_named(chart: Any) -> str | None:
    if not isinstance(chart, str):
        return None
    name = chart.strip().rsplit("/", 1)[-1]
    return name if name in CHARTS else None


def chart_of_file(label: str, data: Mapping[Any, Any]) -> str | None:
    """The chart a values file ``label`` (no ``apiVersion`` and ``kind``) is named
    for, when most of its keys are that chart's: ``nvidia-device-plugin.yaml``, a
    ``values.yaml`` in a folder ``gpu-operator``; or, whatever its keys, when it is named for
    the chart in a folder of values (``values/kai-scheduler.yaml``). None for any other
    file, and for a device plugin configuration file (``version`` beside ``sharing`` or
    ``flags``)."""
    parts = label.replace("\\", "/").lower().split("/")
    name = parts[-1].rsplit(".", 1)[0]
    folder = parts[-2] if len(parts) > 1 else ""
    if "version" in data and ("sharing" in data or "flags" in data):
        return None
    for chart in CHARTS:
        if name.startswith(chart) or (folder == chart and "values" in name):
            if "values" in folder and name in (chart, f"{chart}-values", f"{chart}_values"):
                # A file named for the chart in a folder of values (``values/volcano.yaml``):
                # its values whatever keys it holds (wrong ones are what GPU049 is for).
                return chart
            return chart if _mostly(data, chart_value_keys(chart)) else None
    return None


def gpu_operator_values(
    data: Any, base: Path = (), file_chart: str | None = None
) -> Iterator[OperatorValues]:
    """The values of these charts in document ``data`` (at ``base``), with their paths:
    handed to a chart by a HelmRelease or an Argo CD Application, or a values file
    (``file_chart``: the chart the file is named for, :func:`chart_of_file`)."""
    if not isinstance(data, Mapping):
        return
    kind = data.get("kind")
    if isinstance(kind, str) and isinstance(data.get("apiVersion"), str):
        spec = data.get("spec")
        if not isinstance(spec, Mapping):
            return
        if kind == "HelmRelease":
            chart = spec.get("chart")
            chart_spec = chart.get("spec") if isinstance(chart, Mapping) else None
            name = _chart_named(
                chart_spec.get("chart") if isinstance(chart_spec, Mapping) else None
            )
            values = spec.get("values")
            if name is not None and isinstance(values, Mapping):
                assert isinstance(chart_spec, Mapping)  # it names the chart
                version = chart_spec.get("version", "")
                yield OperatorValues(
                    values,
                    (*base, "spec", "values"),
                    chart=name,
                    version=version if isinstance(version, str) else None,
                )
        elif kind == "HelmChart" and str(data["apiVersion"]).startswith("helm.cattle.io/"):
            # k3s and RKE2's Helm controller: the chart by name, its values as a YAML text.
            name = _chart_named(spec.get("chart"))
            text = spec.get("valuesContent")
            if name is not None and isinstance(text, str):
                found = _text(text, (*base, "spec", "valuesContent"), name)
                version = spec.get("version")
                if found is not None:
                    yield found._replace(version=version if isinstance(version, str) else None)
        elif kind in ("Application", "ApplicationSet"):
            patterns: tuple[tuple[str, ...], ...] = (
                ("spec", "source"),
                ("spec", "sources", "*"),
                ("spec", "template", "spec", "source"),
                ("spec", "template", "spec", "sources", "*"),
            )
            for pattern in patterns:
                for where, source in expand(data, pattern, base):
                    name = (
                        _chart_named(source.get("chart")) if isinstance(source, Mapping) else None
                    )
                    helm = source.get("helm") if name is not None else None
                    if name is None or not isinstance(helm, Mapping):
                        continue
                    revision = source.get("targetRevision")
                    version = revision if isinstance(revision, str) else None
                    values = helm.get("valuesObject")
                    if isinstance(values, Mapping):
                        yield OperatorValues(
                            values,
                            (*where, "helm", "valuesObject"),
                            chart=name,
                            version=version,
                        )
                    elif isinstance(helm.get("values"), str):
                        found = _text(helm["values"], (*where, "helm", "values"), name)
                        if found is not None:
                            yield found._replace(version=version)
        return
    if "apiVersion" not in data and "kind" not in data:
        yield from _values_file(data, base, file_chart)


def _values_file(
    data: Mapping[str, Any], base: Path, file_chart: str | None
) -> Iterator[OperatorValues]:
    """The values of these charts in a values file (no ``apiVersion`` and ``kind``)."""
    if file_chart is not None:
        yield OperatorValues(data, base, chart=file_chart)
        return
    if is_values(data):
        yield OperatorValues(data, base)
    inner = data.get(CHART)  # a chart that depends on the GPU Operator's, under its name
    if isinstance(inner, Mapping) and any(isinstance(k, str) and k in _OWN for k in inner):
        yield OperatorValues(inner, (*base, CHART))
    for chart in CHARTS[1:]:
        # A chart that depends on another of these: its values under the dependency's name,
        # when most of their keys (two at least) are that chart's.
        inner = data.get(chart)
        if isinstance(inner, Mapping) and _mostly(inner, chart_value_keys(chart)):
            yield OperatorValues(inner, (*base, chart), chart=chart)


def _mostly(values: Mapping[Any, Any], known: frozenset[str]) -> bool:
    """Most of the keys of ``values`` (two at least) are in ``known``; ``enabled`` (an
    umbrella chart's condition for its dependency) counts neither way."""
    keys = [k for k in values if isinstance(k, str) and k != "enabled"]
    ours = sum(k in known for k in keys)
    return ours >= 2 and ours * 2 > len(keys)


def chart_values_of(obj: K8sObject) -> list[OperatorValues]:
    """The values of these charts in object ``obj`` (a HelmRelease, an Application, or a
    values file's stand-in, which knows the chart its file is named for), found once per
    object: GPU038 and GPU049 both ask, and an Argo CD values text is parsed to answer."""
    found = obj.memo.get(_FOUND)
    if found is None:
        chart = obj.memo.get(FILE_CHART)
        file_chart = chart if isinstance(chart, str) else None
        found = obj.memo[_FOUND] = list(gpu_operator_values(obj.data, obj.path, file_chart))
    return list(found)


def is_values(data: Mapping[str, Any]) -> bool:
    """A values file that is plainly the GPU Operator chart's (see the module docstring)."""
    keys = [k for k in data if isinstance(k, str)]
    known = chart_value_keys(CHART)
    ours = [k for k in keys if k in known]
    own = [k for k in keys if k in _OWN]
    return len(ours) >= 3 and len(own) >= 2 and len(ours) * 2 > len(keys)


def is_values_document(data: Mapping[str, Any]) -> bool:
    """``data`` (a document with no ``apiVersion`` and ``kind``) holds the GPU Operator
    chart's values by its keys (a file named for a chart: :func:`chart_of_file`)."""
    return next(gpu_operator_values(data), None) is not None


def _text(text: str, path: Path, chart: str) -> OperatorValues | None:
    """Values written as a YAML text at ``path``, with the places of their top-level keys."""
    if len(text) > _TEXT_MAX:
        return None
    from gpulint.loader.inscalar import line_starts
    from gpulint.loader.stream import DocumentStream

    try:
        docs = list(DocumentStream(text))
    except Exception:  # a text that is not YAML: Helm refuses it, nothing is read here
        return None
    if len(docs) != 1 or not isinstance(docs[0].data, Mapping):
        return None
    doc = docs[0]
    spans = {}
    for key in doc.data:
        if isinstance(key, str):
            span = doc.key_span((key,))
            spans[key] = (span.line, span.column)
    return OperatorValues(doc.data, path, spans, tuple(line_starts(text)), chart)
