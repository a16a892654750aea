"""The values helm merges for a chart, each leaf knowing the file and path that set it.

The values of the chart and of each unpacked subchart (under the name its parent gives it,
a dependency's ``alias`` else the chart's name), then the ``--values`` files, as helm
merges them: maps merged, anything else replaced, ``null`` deletes. Values tracing
(:mod:`gpulint.render.helm.markers`) marks these leaves and reads a rendered marker back to
the :class:`Origin` that wrote it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
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
    from gpulint.render.helm.helmignore import subchart_entries

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


#: Levels of a values file whose leaves know where they are written (deeper, the data is
#: kept as it is and traces nothing: the loader keeps no position so deep either, and a
#: path per leaf would make memory grow with the square of the depth).
TRACED_DEPTH = 256


def rebuild(
    tree: Any,
    leaf: Callable[[Any, tuple[Any, ...]], Any],
    key: Callable[[Any], Any] = lambda k: k,
    drop_none: bool = False,
    at: tuple[Any, ...] = (),
    stop: int | None = None,
) -> Any:
    """A copy of ``tree``'s mappings and lists (keys through ``key``; with ``drop_none``, a
    mapping's null values left out) whose every other value is ``leaf(value, path)``, the
    path from ``at``; below ``stop`` levels a value is kept as it is. Walked in the order a
    recursive copy would take, with the open containers on a list: any depth."""

    def opened(value: Any) -> tuple[Iterator[tuple[Any, Any]], Any]:
        if isinstance(value, dict):
            return iter(value.items()), {}
        return iter(enumerate(value)), []

    if not isinstance(tree, (dict, list)):
        return leaf(tree, at)
    items, top = opened(tree)
    stack = [(items, top, at)]
    while stack:
        items, out, path = stack[-1]
        for k, v in items:
            if drop_none and v is None and isinstance(out, dict):
                continue
            here = (*path, k)
            if stop is not None and len(here) > stop:
                child = v
            elif isinstance(v, (dict, list)):
                inner, child = opened(v)
                stack.append((inner, child, here))
            else:
                child = leaf(v, here)
            if isinstance(out, dict):
                out[key(k)] = child
            else:
                out.append(child)
            if stack[-1][1] is child:
                break  # the child first, as a recursive copy would
        else:
            stack.pop()
    return top


def _wrap(data: Any, file: str, at: tuple[Any, ...], prefix: tuple[Any, ...]) -> Any:
    def leaf(value: Any, path: tuple[Any, ...]) -> Leaf:
        return Leaf(value, Origin(file, path, (*prefix, *path)))

    return rebuild(data, leaf, drop_none=True, at=at, stop=TRACED_DEPTH)


def _merge(
    base: dict[Any, Any],
    over: dict[Any, Any],
    file: str,
    at: tuple[Any, ...],
    prefix: tuple[Any, ...],
) -> None:
    """helm's coalescing of ``over`` onto ``base``: maps merged, ``null`` deletes, anything
    else replaces. The pairs of mappings to merge are held on a list (any depth)."""
    todo = [(base, over, at)]
    while todo:
        into, source, path = todo.pop()
        for k, v in source.items():
            if v is None:
                into.pop(k, None)
            elif isinstance(v, dict) and isinstance(into.get(k), dict):
                todo.append((into[k], v, (*path, k)))
            else:
                into[k] = _wrap(v, file, (*path, k), prefix)


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
    return rebuild(tree, lambda value, _: value.value if isinstance(value, Leaf) else value)
