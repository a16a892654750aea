"""DCGM exporter metrics file the exporter refuses.

## What it does
Reads the metrics files of NVIDIA's DCGM exporter written in a `ConfigMap` (a value of its
`data` whose first record names a DCGM field, `DCGM_FI_...` or `DCGM_EXP_...`: the file the
exporter's `-f`/`--collectors` option or the GPU Operator's `dcgmExporter.config` names) and
reports the first record the exporter refuses:

- a record of other than three fields (`DCGM_FI_DEV_GPU_UTIL, gauge` without its help
  text, a trailing comma, a field name alone, a help text with a comma that is not quoted);
- a DCGM field whose Prometheus type is not one the exporter knows (`gauge`, `counter`,
  `histogram`, `summary`, `label`).

The finding is on the record inside the value when the file's text proves where it is,
else on the value with the record's place named; it says how many more records are refused.
Lines starting with `#` are comments, as the exporter reads them; a value with a template
placeholder (`{{ }}`) or a quote is not judged.

## Why it matters
The exporter reads the whole file when it starts (`ExtractCounters`: "malformed CSV record
... expected 3 fields", "could not find Prometheus metric type") and stops on the first
record it refuses: its pods restart again and again and no GPU metric reaches Prometheus,
so dashboards, alerts and autoscalers on GPU metrics see nothing. It is a warning, not an
error: the `ConfigMap` itself is accepted, and only an exporter told to read it stops.

## Example
```yaml
kind: ConfigMap
metadata:
  name: dcgm-metrics
data:
  metrics.csv: |
    DCGM_FI_DEV_GPU_UTIL, GPU utilization   # GPU080: no Prometheus type
```

## Use instead
```yaml
data:
  metrics.csv: |
    # DCGM field, Prometheus metric type, help message
    DCGM_FI_DEV_GPU_UTIL, gauge, GPU utilization (in %).
```

## Options
None.

## References
- NVIDIA/dcgm-exporter `internal/pkg/counters/counter_config.go` (`ReadCSVFile`: Go's
  `encoding/csv` with `#` comments; `ExtractCounters`: three fields a record, else
  "malformed CSV record ... expected 3 fields") and `variables.go` (`promMetricType`)
- https://github.com/NVIDIA/dcgm-exporter#changing-metrics (the file's format)
"""

from __future__ import annotations

from collections.abc import Iterator

from gpulint.api import K8sObject, RuleContext, Violation

CODE = "GPU080"
NAME = "dcgm-metrics-csv-refused"
SEVERITY = "warning"
SCOPE = "object"
OPTIONS: dict[str, object] = {}

#: The first field of a record the exporter reads: a DCGM field or one of its own counters.
FIELD_PREFIXES = ("DCGM_FI_", "DCGM_EXP_")
#: ``promMetricType`` in dcgm-exporter's ``internal/pkg/counters/variables.go``.
PROMETHEUS_TYPES = frozenset({"gauge", "counter", "histogram", "summary", "label"})


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.parent is not None or obj.kind != "ConfigMap":
        return
    data = obj.data.get("data")
    if not isinstance(data, dict):
        return
    for key, value in data.items():
        if isinstance(key, str) and isinstance(value, str):
            found = _refused(value)
            if found is not None:
                offset, length, problem, advice, more = found
                others = f" ({more} more record{'s' if more > 1 else ''} too)" if more else ""
                yield Violation(
                    (*obj.path, "data", key),
                    f"the DCGM exporter refuses this metrics file{others}: {problem}",
                    help=f"{advice} (else the exporter stops when it starts and exports no "
                    "GPU metric)",
                    at="value",
                    within=(offset, length),
                )


def _refused(text: str) -> tuple[int, int, str, str, int] | None:
    """The first record of a DCGM metrics file that the exporter refuses: its offset and
    length in ``text``, what is wrong and what to write, and how many other records are
    refused; None when ``text`` is not such a file or every record is read."""
    if "{{" in text or '"' in text:
        return None  # a template, or quoted fields: not judged
    first: tuple[int, int, str, str] | None = None
    more = 0
    seen = False
    offset = 0
    for line in text.splitlines(keepends=True):
        start = offset
        offset += len(line)
        record = line.rstrip("\r\n")
        if not record.strip() or record.startswith("#"):
            continue  # encoding/csv skips empty lines and comments
        fields = [f.strip(" ") for f in record.split(",")]
        if not seen:
            if not fields[0].startswith(FIELD_PREFIXES):
                return None  # not a DCGM metrics file
            seen = True
        problem = _problem(fields)
        if problem is None:
            continue
        if first is None:
            first = (start, len(record), *problem)
        else:
            more += 1
    return None if first is None else (*first, more)


def _problem(fields: list[str]) -> tuple[str, str] | None:
    """What is wrong with a record of the exporter's file, and what to write instead."""
    name = (fields[0].split() or [""])[0]
    if len(fields) != 3:
        named = "field" if len(fields) == 1 else "fields"
        return (
            f"{name} has {len(fields)} {named}, not 3",
            "write each record as: DCGM field, Prometheus type, help text",
        )
    if fields[0].startswith("DCGM_FI_") and fields[1] not in PROMETHEUS_TYPES:
        return (
            f"{name} has the Prometheus type {fields[1] or 'nothing'}, not one it knows",
            "use gauge, counter, histogram, summary or label",
        )
    return None
