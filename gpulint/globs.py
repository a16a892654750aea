"""Path globs for ``exclude`` and ``per-file-ignores``, matched the way .gitignore matches.

* Paths are compared relative to a root (the configuration file's folder), with ``/``.
* A pattern without a ``/`` matches any single path component: ``vendor`` matches
  ``vendor/a.yaml`` and ``charts/vendor/b.yaml``; ``*.tpl.yaml`` matches every such file.
* A pattern with a ``/`` is anchored at the root: ``charts/*/values.yaml``. A leading ``/`` or
  ``./`` is allowed and ignored.
* ``*`` and ``?`` never cross a ``/``; ``**`` matches any number of components (also none);
  ``[abc]`` is a character class.
* A pattern that matches a folder matches everything below it: ``charts/vendor`` is the same
  as ``charts/vendor/**``. A trailing ``/`` is allowed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import NamedTuple


def _translate(pattern: str) -> str:
    """A glob to a regular expression over a whole relative path."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                # "**/" = zero or more folders; a final "**" = anything below.
                if pattern.startswith("**/", i):
                    out.append("(?:[^/]*/)*")
                    i += 3
                else:
                    out.append(".*")
                    i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern.startswith(("[!", "[^"), i) else i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


class Glob(NamedTuple):
    """One compiled pattern."""

    pattern: str
    regex: re.Pattern[str]
    anchored: bool

    @classmethod
    def compile(cls, pattern: str) -> Glob:
        text = pattern.strip()
        if text.startswith("./"):
            text = text[2:]
        text = text.strip("/") if text != "/" else text
        anchored = "/" in text or pattern.strip().startswith("/")
        return cls(pattern, re.compile(_translate(text) + r"\Z"), anchored)

    def matches(self, relpath: str) -> bool:
        """Does the pattern match ``relpath`` (``/``-separated) or a folder above it?"""
        parts = [p for p in relpath.split("/") if p and p != "."]
        if not self.anchored:
            return any(self.regex.match(part) for part in parts)
        return any(self.regex.match("/".join(parts[:k])) for k in range(len(parts), 0, -1))


def compile_all(patterns: Iterable[str]) -> tuple[Glob, ...]:
    return tuple(Glob.compile(p) for p in patterns)


def relative(path: str, root: str) -> str:
    """``path`` relative to ``root`` with ``/`` separators (``../x`` when outside it)."""
    try:
        rel = os.path.relpath(os.path.abspath(path), root)
    except ValueError:  # a different drive on Windows
        rel = os.path.abspath(path)
    return rel.replace(os.sep, "/")


class PathMatcher(NamedTuple):
    """A set of globs relative to one root."""

    root: str
    globs: tuple[Glob, ...]

    def __bool__(self) -> bool:
        return bool(self.globs)

    def matches(self, path: str) -> bool:
        rel = relative(path, self.root)
        return any(g.matches(rel) for g in self.globs)
