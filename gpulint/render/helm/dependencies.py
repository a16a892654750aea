"""The dependency helm's error says a chart has not vendored, at its ``name:`` line.

``helm template`` never fetches dependencies: a chart whose ``charts/`` folder lacks one
fails with ``found in Chart.yaml, but missing in charts/ directory: a, b``. The first one
named is shown at its ``name:`` in ``Chart.yaml`` (``apiVersion: v2``), or in
``requirements.yaml`` for a chart of ``apiVersion: v1``.
"""

from __future__ import annotations

import os
import re

from gpulint.render.mapping import load_documents, read_text

_MISSING = re.compile(r"missing in charts/ directory: ([^\n;]+)")


def missing_dependency(stderr: str, chart: str) -> tuple[int, int, str | None] | None:
    """The line and column of the first dependency helm's error says is missing from
    ``charts/`` (``found in Chart.yaml, but missing in charts/ directory: a, b``): its
    ``name:`` in the chart's Chart.yaml (None: that file), or in the ``requirements.yaml``
    of a chart of ``apiVersion: v1`` (its path), or None."""
    m = _MISSING.search(stderr)
    if m is None:
        return None
    first = m.group(1).split(",")[0].strip()
    for name in ("Chart.yaml", "requirements.yaml"):
        path = os.path.join(chart, name)
        text = read_text(path, 1 << 20)
        docs = load_documents(text) if text is not None else []
        data = docs[0].data if docs and isinstance(docs[0].data, dict) else {}
        deps = data.get("dependencies")
        for i, dep in enumerate(deps if isinstance(deps, list) else []):
            if isinstance(dep, dict) and first in (dep.get("name"), dep.get("alias")):
                span = docs[0].value_span(("dependencies", i, "name"))
                return span.line, span.column, (None if name == "Chart.yaml" else path)
    return None
