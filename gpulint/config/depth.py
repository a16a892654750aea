"""How deep a configuration file's values may nest (:func:`too_deep`).

gpulint's deepest setting is a few levels; a file nested deeper (thousands of brackets) is
refused, at its line, before anything that recurses walks it: the validation cache's digest
(``repr``) and the schema's validation recursed once per level.
"""

from __future__ import annotations

from typing import Any

from gpulint.config.file import ConfigError, ConfigFile

#: Levels a configuration's values may nest.
MAX_DEPTH = 64


def too_deep(config: ConfigFile) -> None:
    """:class:`ConfigError` at the first value nested more than ``MAX_DEPTH`` levels deep,
    found with the open values on a list (any depth)."""
    todo: list[tuple[Any, tuple[Any, ...]]] = [(config.data, ())]
    while todo:
        node, path = todo.pop()
        if len(path) > MAX_DEPTH:
            why = f"nested more than {MAX_DEPTH} levels deep, which no setting of gpulint is"
            raise ConfigError(config.error(path[:2], why))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        todo.extend((v, (*path, k)) for k, v in items if isinstance(v, (dict, list)))
