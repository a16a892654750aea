"""The values helm merges for a chart, each leaf knowing the file and path that set it.

The values of the chart and of each unpacked subchart (under the name its parent gives it,
a dependency's ``alias`` else the chart's name), then the ``--values`` files, as helm
merges them: maps merged, anything else replaced, ``null`` deletes. Values tracing
(:mod:`gpulint.render.valuemarks`) marks these leaves and reads a rendered marker back to
the :class:`Origin` that wrote it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any, NamedTuple

from gpulint.render.mapping import load_documents, read_text

#: Values files read at most, a chart and its subcharts together.
MAX_FILES = 200


class Origin(NamedTuple):
    """Where a rendered value is written: a values file and the path in it."""

    file: str
    path: tuple[Any, ...]
    #: The path in the chart's merged values (``.Values.<this>``, a subchart's under its name).
    values_path: tuple[Any, ...]


class Leaf:
    __slots__ = ("origin", "value")

    def __init__(self, value: Any, origin: Origin) -> None:
        self.value = value
        self.origin = origin


def chart_values(folder: str) -> list[tuple[str, tuple[str, ...]]]:
    """The values files of a chart and its unpacked subcharts, each with the prefix its
    keys have in the chart's merged values, the one helm applies first first (a
    subchart's own values before its parent's)."""
    out: list[tuple[str, tuple[str, ...]]] = []
    # (chart, prefix, depth, its subcharts done): a list, not the call stack; a chart's
    # subcharts (in order) come out before it.
    todo: list[tuple[str, tuple[str, ...], int, bool]] = [(folder, (), 0, False)]
    while todo:
        chart, prefix, depth, done = todo.pop()
        if done:  # a chart whose subcharts were walked is always kept
            out.append((os.path.join(chart, "values.yaml"), prefix))
            continue
        if len(out) >= MAX_FILES:
            continue
        todo.append((chart, prefix, depth, True))
        if depth < 8:
            subs = list(_subcharts(chart, folder))
            todo.extend((sub, (*prefix, key), depth + 1, False) for sub, key in reversed(subs))
    return out


def _chart_data(folder: str) -> dict[str, Any]:
    text = read_text(os.path.join(folder, "Chart.yaml"), 1 << 20)
    docs = load_documents(text) if text is not None else []
    data = docs[0].data if docs else None
    return data if isinstance(data, dict) else {}


def _subcharts(folder: str, top: str) -> Iterator[tuple[str, str]]:
    """(folder, key in the parent's values) of each unpacked subchart under ``charts/``
    that helm loads (``top``'s ``.helmignore`` does not skip it): the key is the
    dependency's ``alias``, else the chart's name."""
    from gpulint.render.helmignore import subchart_entries

    charts = os.path.join(folder, "charts")
    by_name: dict[str, str] = {}
    for entry in subchart_entries(folder, top):
        sub = os.path.join(charts, entry)
        if os.path.isdir(sub) and not os.path.islink(sub):
            name = _chart_data(sub).get("name")
            if isinstance(name, str) and name not in by_name:
                by_name[name] = sub
    deps = _chart_data(folder).get("dependencies")
    keys: dict[str, list[str]] = {}
    for dep in deps if isinstance(deps, list) else []:
        if isinstance(dep, dict) and isinstance(dep.get("name"), str):
            alias = dep.get("alias")
            keys.setdefault(dep["name"], []).append(
                alias if isinstance(alias, str) else dep["name"]
            )
    for name, sub in by_name.items():
        for key in keys.get(name, [name]):
            yield sub, key


def _wrap(data: Any, file: str, at: tuple[Any, ...], prefix: tuple[Any, ...]) -> Any:
    if isinstance(data, dict):
        return {k: _wrap(v, file, (*at, k), prefix) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_wrap(v, file, (*at, i), prefix) for i, v in enumerate(data)]
    return Leaf(data, Origin(file, at, (*prefix, *at)))


def _merge(
    base: dict[Any, Any],
    over: dict[Any, Any],
    file: str,
    at: tuple[Any, ...],
    prefix: tuple[Any, ...],
) -> None:
    """helm's coalescing of ``over`` onto ``base``: maps merged, ``null`` deletes, anything
    else replaces."""
    for k, v in over.items():
        if v is None:
            base.pop(k, None)
        elif isinstance(v, dict) and isinstance(base.get(k), dict):
            _merge(base[k], v, file, (*at, k), prefix)
        else:
            base[k] = _wrap(v, file, (*at, k), prefix)


def merged(files: list[tuple[str, tuple[str, ...]]]) -> dict[Any, Any]:
    """The values of ``files`` (applied first first, each under its prefix) merged, each
    leaf knowing the file and path that set it."""
    tree: dict[Any, Any] = {}
    for file, prefix in files:
        text = read_text(file)
        docs = load_documents(text) if text is not None else []
        data = docs[0].data if docs else None
        if not isinstance(data, dict):
            continue
        node = tree
        for part in prefix:
            if not isinstance(node.get(part), dict):
                node[part] = {}
            node = node[part]
        _merge(node, data, file, (), prefix)
    return tree


def plain(tree: Any) -> Any:
    """The merged values without where each leaf came from."""
    if isinstance(tree, dict):
        return {k: plain(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [plain(v) for v in tree]
    return tree.value if isinstance(tree, Leaf) else tree
