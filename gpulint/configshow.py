"""``gpulint config``: the effective configuration, each value with where it came from.

The values and their origins are :func:`gpulint.config.resolve`'s (:class:`~gpulint.config.Entry`);
this module only writes them, as text or JSON.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulint.config import Effective
    from gpulint.rule import Rule


def describe(effective: Effective, rules: Sequence[Rule], json_output: bool = False) -> str:
    """The effective configuration, one value per line with where it came from."""
    from gpulint.engine import is_enabled
    from gpulint.textsafe import escape_line, json_text

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
    rows = [
        (f"{key} = {json.dumps(e.value, ensure_ascii=False)}", e.origin)
        for key, e in effective.entries.items()
    ]
    width = min(max(len(text) for text, _ in rows), 72)
    lines = [head]
    lines += [f"{text:<{width}}  # {origin}" for text, origin in rows]
    lines.append(f"# enabled rules: {', '.join(enabled) or 'none'}")
    waiting = [r.code for r in rules if r.opt_in and r.code not in enabled]
    if waiting:
        # "select = ALL  # default" is the default selection, which leaves these out.
        lines.append(f"# opt-in rules, not selected: {', '.join(waiting)}")
    # Values and paths from the configuration file, one visible line each (gpulint.textsafe).
    return "\n".join(escape_line(line) for line in lines) + "\n"
