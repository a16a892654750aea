"""The NVIDIA GPU Operator chart's values, where a repository writes them.

The chart (NVIDIA/gpu-operator ``deployments/gpu-operator``) reads its top-level values by
name and ignores any other: a setting under a key it does not have (``timeSlicing:`` at the
top, ``containerToolkit:`` for ``toolkit:``) is dropped without a word. Its values are found

* in a Flux ``HelmRelease`` whose ``spec.chart.spec.chart`` is ``gpu-operator``
  (``spec.values``);
* in an Argo CD ``Application`` (or ``ApplicationSet`` template) source whose ``chart`` is
  ``gpu-operator``: ``helm.valuesObject``, or the YAML text of ``helm.values`` (read as
  Helm reads it; a finding on one of its keys is placed inside the text);
* in a values file (no ``apiVersion`` and ``kind``) that is plainly the chart's: at least
  three of its top-level keys are the chart's own components, two of them ones no other
  NVIDIA chart has (``driver``, ``toolkit``, ``devicePlugin``, ...; the device plugin's
  chart has ``gfd`` and ``nfd`` too), and most of its keys are the chart's; or under a
  ``gpu-operator:`` key of a chart that depends on it.

The chart's keys are ``charts.gpu-operator`` of ``gpulint/data/operator-fields.json``: the
union, over every release and the newest commit read, of its ``values.yaml`` keys and the
``.Values.<key>`` its templates read (``python -m tests.operator_fields``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

from gpulint.k8s.crds import operator_fields
from gpulint.k8s.objects import expand
from gpulint.model import Path

CHART = "gpu-operator"
#: A values text longer than this is not read (the chart's own values.yaml is ~20 kB).
_TEXT_MAX = 256 * 1024


class OperatorValues(NamedTuple):
    """The chart's values found in a document: ``data``, at ``path`` in the document; for
    values written as a YAML text (Argo CD's ``helm.values``), ``path`` is that string's and
    ``starts``/``spans`` place its keys: ``spans[key]`` is the key's (line, column) in the
    text, ``starts`` the text's line offsets."""

    data: Mapping[str, Any]
    path: Path
    spans: Mapping[str, tuple[int, int]] | None = None
    starts: tuple[int, ...] = ()

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


def gpu_operator_chart_keys() -> frozenset[str]:
    """The top-level values the GPU Operator's chart has in any release read."""
    charts = operator_fields().get("charts", {})
    return frozenset(charts.get(CHART, ()))


def gpu_operator_releases() -> tuple[str, str]:
    """The first and last release of the GPU Operator read."""
    source = operator_fields()["sources"].get(CHART, {})
    first, _, last = str(source.get("releases", "?..?")).partition("..")
    return first, last


def _names_chart(chart: Any) -> bool:
    return isinstance(chart, str) and chart.strip().rsplit("/", 1)[-1] == CHART


def gpu_operator_values(data: Any, base: Path = ()) -> Iterator[OperatorValues]:
    """The GPU Operator chart's values in document ``data`` (at ``base``), with their paths:
    handed to the chart by a HelmRelease or an Argo CD Application, or a values file."""
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
            name = chart_spec.get("chart") if isinstance(chart_spec, Mapping) else None
            values = spec.get("values")
            if _names_chart(name) and isinstance(values, Mapping):
                yield OperatorValues(values, (*base, "spec", "values"))
        elif kind in ("Application", "ApplicationSet"):
            patterns: tuple[tuple[str, ...], ...] = (
                ("spec", "source"),
                ("spec", "sources", "*"),
                ("spec", "template", "spec", "source"),
                ("spec", "template", "spec", "sources", "*"),
            )
            for pattern in patterns:
                for where, source in expand(data, pattern, base):
                    if not isinstance(source, Mapping) or not _names_chart(source.get("chart")):
                        continue
                    helm = source.get("helm")
                    if not isinstance(helm, Mapping):
                        continue
                    values = helm.get("valuesObject")
                    if isinstance(values, Mapping):
                        yield OperatorValues(values, (*where, "helm", "valuesObject"))
                    elif isinstance(helm.get("values"), str):
                        found = _text(helm["values"], (*where, "helm", "values"))
                        if found is not None:
                            yield found
        return
    if "apiVersion" in data or "kind" in data:
        return
    if is_values(data):
        yield OperatorValues(data, base)
    inner = data.get(CHART)  # a chart that depends on the GPU Operator's, under its name
    if isinstance(inner, Mapping) and any(isinstance(k, str) and k in _OWN for k in inner):
        yield OperatorValues(inner, (*base, CHART))


def _text(text: str, path: Path) -> OperatorValues | None:
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
    return OperatorValues(doc.data, path, spans, tuple(line_starts(text)))


def is_values(data: Mapping[str, Any]) -> bool:
    """A values file that is plainly the GPU Operator chart's (see the module docstring)."""
    keys = [k for k in data if isinstance(k, str)]
    known = gpu_operator_chart_keys()
    ours = [k for k in keys if k in known]
    own = [k for k in keys if k in _OWN]
    return len(ours) >= 3 and len(own) >= 2 and len(ours) * 2 > len(keys)


def is_values_document(data: Mapping[str, Any]) -> bool:
    """``data`` (a document with no ``apiVersion`` and ``kind``) holds the chart's values."""
    return next(gpu_operator_values(data), None) is not None
