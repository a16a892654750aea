"""``gpulint config``: the effective configuration, each value with where it came from.

The values and their origins are :func:`gpulint.config.resolve.resolve`'s
(:class:`~gpulint.config.resolve.Entry`); this module only writes them, as JSON or as YAML
that can be pasted into ``.gpulint.yaml``
(each value with its origin as a comment; the default selection, which ``select: [ALL]``
would not reproduce, as a comment of its own).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpulint.config.resolve import Effective
    from gpulint.rule import Rule


def applies_to(target: str) -> tuple[str | None, list[str]]:
    """The configuration ``gpulint check`` lints ``target`` with (its closest one, as
    :mod:`gpulint.commands.nearest` finds it; None: the built-in defaults), and comment
    lines that say so (exit 2 when ``target`` does not exist)."""
    from pathlib import Path

    from gpulint.commands.common import fail
    from gpulint.commands.nearest import RUN_WIDE
    from gpulint.config.file import display_path, find_config

    path = Path(target)
    if not path.exists():
        fail(f"{target}: no such file or directory")
    found = find_config(path if path.is_dir() else path.parent)
    here = find_config(Path.cwd())
    note = [f"# applies to: {target} (its closest configuration)"]
    if found is not None and here is not None and found != here:
        note.append(
            f"# run-wide keys ({', '.join(RUN_WIDE)}) come from the run's configuration, "
            f"{display_path(here)} when gpulint runs from here"
        )
    if found is None:  # no configuration above it: the run's applies, as in `check`
        found = here
    return (str(found) if found is not None else None), note


def describe(
    effective: Effective,
    rules: Sequence[Rule],
    json_output: bool = False,
    note: Sequence[str] = (),
) -> str:
    """The effective configuration, one value per line with where it came from (``note``:
    comment lines after the first, on what the configuration applies to)."""
    from gpulint.config.resolve import DEFAULT
    from gpulint.lint.engine import is_enabled
    from gpulint.model import RULE_ERROR_CODE
    from gpulint.util.textsafe import escape_line, json_text

    file = effective.file
    enabled = [r.code for r in rules if is_enabled(r.code, effective.settings, r.opt_in)]
    if json_output:
        doc = {
            "file": str(file.path) if file is not None else None,
            "root": str(effective.root),
            "settings": {
                key: {"value": e.value, "origin": e.origin} for key, e in effective.entries.items()
            },
            "enabled": enabled,
        }
        return json_text(doc) + "\n"
    head = (
        f"# configuration file: {file.shown}"
        if file is not None
        else ("# configuration file: none (built-in defaults)")
    )
    lines = [
        head,
        *note,
        "# Each value is what this run uses, with where it came from: a line pasted",
    ]
    lines.append("# into .gpulint.yaml sets it.")
    tree: dict[str, Any] = {}
    for key, e in effective.entries.items():
        if key == "select" and e.origin == DEFAULT:
            continue  # [ALL] would select the opt-in rules too: said below instead
        if key == f"severity.{RULE_ERROR_CODE}":
            continue  # a rule that raised is always an error: not configurable
        node = tree
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = e
    select = effective.entries.get("select")
    if select is not None and select.origin == DEFAULT:
        waiting = [r.code for r in rules if r.opt_in]
        extra = f" ({', '.join(waiting)}: `extend-select` adds them)" if waiting else ""
        lines.append(f"# select: not set, so every rule but the opt-in ones{extra}")
    rows: list[tuple[str, str]] = []
    _rows(tree, 0, rows)
    width = min(max((len(text) for text, _ in rows), default=0), 72)
    lines += [f"{text:<{width}}  # {origin}" if origin else text for text, origin in rows]
    lines.append(f"# enabled rules: {', '.join(enabled) or 'none'}")
    # Values and paths from the configuration file, one visible line each (gpulint.util.textsafe).
    return "\n".join(escape_line(line) for line in lines) + "\n"


def _rows(tree: dict[str, Any], depth: int, rows: list[tuple[str, str]]) -> None:
    """``tree`` as YAML lines: a mapping per dotted part, each value in flow style (JSON,
    which YAML reads as written) with its origin beside it."""
    indent = "  " * depth
    for key, node in tree.items():
        name = key if _plain_key(key) else json.dumps(key)
        if isinstance(node, dict):
            # A mapping with nothing set would read back as null, which no key takes.
            rows.append((f"{indent}{'' if _any_set(node) else '# '}{name}:", ""))
            _rows(node, depth + 1, rows)
        elif node.value is None:  # not set: the key takes no null, so a comment
            rows.append((f"{indent}# {name}: not set", node.origin))
        else:
            rows.append(
                (f"{indent}{name}: {json.dumps(node.value, ensure_ascii=False)}", node.origin)
            )


def _any_set(tree: dict[str, Any]) -> bool:
    """Whether any value under ``tree`` is set (a walk of the configuration's own keys)."""
    stack = [tree]
    while stack:
        for node in stack.pop().values():
            if isinstance(node, dict):
                stack.append(node)
            elif node.value is not None:
                return True
    return False


def _plain_key(key: str) -> bool:
    return bool(key) and all(c.isalnum() or c in "-_." for c in key) and not key[0].isdigit()
