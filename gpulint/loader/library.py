"""ruamel.yaml, imported on first use: a plain ``import`` of the loader costs nothing of it.

The names here are private to the loader package; other modules use the public functions of
``gpulint.loader.comments`` and ``gpulint.loader.stream``.
"""

from __future__ import annotations

from typing import Any

from gpulint.loader.scalars import TAG_PREFIX


class YamlLib:
    """ruamel.yaml classes, the fast parser and the shared tags (imported lazily)."""

    def __init__(self) -> None:
        from ruamel.yaml import events, tokens
        from ruamel.yaml.composer import ComposerError
        from ruamel.yaml.error import MarkedYAMLError, YAMLError
        from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode
        from ruamel.yaml.tag import Tag

        def shared(suffix: str) -> Any:
            tag = Tag(suffix=TAG_PREFIX + suffix)
            tag.trval  # noqa: B018 - computes and caches the tag text once
            return tag

        self.str_tag, self.seq_tag, self.map_tag = shared("str"), shared("seq"), shared("map")
        tags = {ScalarNode: self.str_tag, SequenceNode: self.seq_tag, MappingNode: self.map_tag}
        self.ScalarNode, self.SequenceNode, self.MappingNode = ScalarNode, SequenceNode, MappingNode
        self.events = events
        self.tokens = tokens
        self.ComposerError = ComposerError
        self.MarkedYAMLError, self.YAMLError = MarkedYAMLError, YAMLError

        def resolve(_self: Any, kind: Any, value: Any, implicit: Any) -> Any:
            # Every untagged node gets the generic tag; scalars are typed by resolve_plain.
            # Returning shared Tag objects spares a Tag per node and lets the builder test
            # tags by identity.
            return tags[kind]

        # The C composer also calls ``self.descend_resolver(parent, index)`` and
        # ``self.ascend_resolver()`` around every node, for resolvers that type a scalar by
        # its path, and ignores what they return. gpulint types no scalar by its path, so
        # any callable that takes those arguments will do: builtins (which do not bind to
        # the parser, unlike functions) cost a fraction of two Python calls per node. An
        # empty dict's ``get`` hashes the parent node (by identity) and returns the index:
        # unlike ``slice`` it allocates nothing; ``tuple()`` is the empty-tuple singleton.
        hooks = {"resolve": resolve, "descend_resolver": {}.get, "ascend_resolver": tuple}
        self.c_parser: Any = None
        try:
            from ruamel.yaml.cyaml import CParser  # type: ignore[attr-defined]

            # A bare CParser with the resolver hooks the C composer calls back for every
            # node: a third faster than CBaseLoader, whose hooks are general Python code.
            self.c_parser = type("FastParser", (CParser,), hooks)
        except ImportError:  # pragma: no cover - no compiler for ruamel.yaml.clib
            pass
        self.resolve = resolve

    def event_parser(self, text: str) -> Any:
        """An object with ``get_event()`` and ``dispose()`` over ``text``."""
        if self.c_parser is not None:
            return self.c_parser(text)
        from ruamel.yaml.loader import BaseLoader  # pragma: no cover - pure-Python fallback

        return BaseLoader(text)  # pragma: no cover


_LIB: YamlLib | None = None


def yaml_lib() -> YamlLib:
    global _LIB
    if _LIB is None:
        _LIB = YamlLib()
    return _LIB
