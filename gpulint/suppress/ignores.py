"""Configuration ignores: ``per-file-ignores`` and ``per-object-ignores`` entries."""

import fnmatch
import re
from collections.abc import Sequence
from typing import Any

# The entries themselves are values of the settings (gpulint.model); their index is here.
from gpulint.model import ObjectIgnore, ObjectRef, PathIgnore

__all__ = ["ObjectIgnore", "ObjectIgnores", "PathIgnore"]


def _literal(pattern: str) -> bool:
    return not any(c in pattern for c in "*?[")


class ObjectIgnores:
    """``per-object-ignores`` indexed by their literal kind, namespace or name.

    Each entry is filed under the first of name, namespace and kind that it writes without
    a glob character, so an object is tested only against the entries that can match it
    (plus those whose three fields are all globs); each glob is compiled once (fnmatch's
    own cache holds 32,768 patterns and thrashed on 50,000 entries, which took over 12
    minutes).
    """

    def __init__(self, entries: Sequence[ObjectIgnore]) -> None:
        self.entries = tuple(entries)
        self.by_field: tuple[dict[str, list[int]], ...] = ({}, {}, {})  # name, ns, kind
        self.wild: list[int] = []
        self._compiled: dict[str, Any] = {}
        for order, entry in enumerate(self.entries):
            for slot, pattern in enumerate((entry.name, entry.namespace, entry.kind)):
                if _literal(pattern):
                    self.by_field[slot].setdefault(pattern, []).append(order)
                    break
            else:
                self.wild.append(order)

    def _match(self, pattern: str, value: str) -> bool:
        if _literal(pattern):
            return pattern == value
        matcher = self._compiled.get(pattern)
        if matcher is None:
            matcher = self._compiled[pattern] = re.compile(fnmatch.translate(pattern)).match
        return matcher(value) is not None

    def matching(self, ref: ObjectRef, label: str) -> list[ObjectIgnore]:
        """The entries that match the object in the file ``label``, in configuration order."""
        kind, namespace, name = ref.kind or "", ref.namespace or "", ref.name or ""
        by_name, by_ns, by_kind = self.by_field
        candidates = sorted(
            {
                *by_name.get(name, ()),
                *by_ns.get(namespace, ()),
                *by_kind.get(kind, ()),
                *self.wild,
            }
        )
        out = []
        for order in candidates:
            entry = self.entries[order]
            if (
                self._match(entry.kind, kind)
                and self._match(entry.namespace, namespace)
                and self._match(entry.name, name)
                and (entry.paths is None or entry.paths.matches(label))
            ):
                out.append(entry)
        return out
