"""Path globs for ``exclude`` and ``per-file-ignores``, matched the way .gitignore matches.

* Paths are compared relative to a root (the configuration file's folder), with ``/``.
* A pattern without a ``/`` matches any single path component: ``vendor`` matches
  ``vendor/a.yaml`` and ``charts/vendor/b.yaml``; ``*.tpl.yaml`` matches every such file.
* A pattern with a ``/`` is anchored at the root: ``charts/*/values.yaml``. A leading ``/`` or
  ``./`` is allowed and ignored.
* ``*`` and ``?`` never cross a ``/``; ``**`` as a whole component (``**/x``, ``x/**``,
  ``x/**/y``) matches any number of components (also none); elsewhere (``a**b``) it is one
  ``*``, as in git. ``[abc]``, ``[a-z]`` and ``[!abc]`` are character classes, which never
  match ``/``.
* ``\\`` escapes the next character, in a class too: ``\\*`` is a star, ``\\!x`` a name
  starting with ``!``.
* An unclosed ``[``, a reversed range (``[z-a]``) or a trailing ``\\`` is an error
  (GlobError; the configuration reports it with its line).
* Matching takes time linear in the path, whatever the pattern (see ``_Matcher``).
* A pattern that matches a folder matches everything below it: ``charts/vendor`` is the same
  as ``charts/vendor/**``. A trailing ``/`` matches folders only (``build/`` is not the file
  ``build``).
* In a list (``exclude``), ``!pattern`` takes back what an earlier pattern matched, and the
  last pattern that matches a path decides; as in git, a file below a matched folder stays
  matched (``vendor`` then ``!vendor/keep.yaml`` keeps nothing; ``vendor/*`` then
  ``!vendor/keep.yaml`` keeps the file). ``per-file-ignores`` and ``per-object-ignores``
  take one pattern each, where ``!`` is an error.
* Differences from .gitignore, on purpose (a pattern is one YAML list item, not a line of
  a file): white space around a pattern is dropped, a leading ``./`` is ignored as a
  leading ``/`` is, and ``#`` starts no comment.
"""

import os
from collections.abc import Callable, Iterable
from typing import NamedTuple


class GlobError(ValueError):
    """A pattern that is not a valid glob (an unclosed ``[``, an empty or reversed range)."""


# Token kinds. ONE matches one character (a literal, ``?`` or a class); the other three
# repeat: STAR is ``*`` (``[^/]*``), ANY is a final ``**`` (``.*``) and DIRS is ``**/``
# (``(?:[^/]*/)*``: nothing, or anything that ends with ``/``).
_ONE, _STAR, _ANY, _DIRS = range(4)

#: A token: (kind, test for ONE). ``test`` gets one character.
_Token = tuple[int, "Callable[[str], bool] | None"]


def _class(pattern: str, i: int) -> tuple[Callable[[str], bool], int]:
    """The character class starting at ``pattern[i] == "["``: its test and the index after
    its ``]``. A ``]`` right after ``[``, ``[!`` or ``[^`` is a member, as in .gitignore."""
    j = i + 1
    negate = j < len(pattern) and pattern[j] in "!^"
    if negate:
        j += 1
    members: set[str] = set()
    ranges: list[tuple[str, str]] = []
    first = True

    def char_at(k: int) -> tuple[str, int]:
        """The member at ``pattern[k]`` (``\\x`` is ``x``) and the index after it."""
        if pattern[k] == "\\" and k + 1 < len(pattern):
            return pattern[k + 1], k + 2
        return pattern[k], k + 1

    while True:
        if j >= len(pattern):
            raise GlobError(f"unclosed character class starting at column {i + 1}")
        if pattern[j] == "]" and not first:
            break
        first = False
        c, after = char_at(j)
        if after + 1 < len(pattern) and pattern[after] == "-" and pattern[after + 1] != "]":
            high, j = char_at(after + 1)
            if c > high:
                raise GlobError(f"reversed range {c}-{high} in a character class")
            ranges.append((c, high))
        else:
            members.add(c)
            j = after
    frozen = frozenset(members)

    def test(char: str) -> bool:
        if char == "/":
            return False  # a class never matches the separator (as in .gitignore)
        inside = char in frozen or any(low <= char <= high for low, high in ranges)
        return inside != negate

    return test, j + 1


def _tokens(pattern: str) -> tuple[_Token, ...]:
    out: list[_Token] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            run = i
            while i < n and pattern[i] == "*":
                i += 1
            # Two or more stars are "**" only as a whole component, as in .gitignore
            # (git's wildmatch); elsewhere (``a**b``) they are one "*".
            whole = i - run >= 2 and (run == 0 or pattern[run - 1] == "/")
            if whole and pattern.startswith("/", i):
                out.append((_DIRS, None))
                i += 1
            elif whole and i == n:
                out.append((_ANY, None))
            else:
                out.append((_STAR, None))
            continue
        if c == "?":
            out.append((_ONE, _not_separator))
        elif c == "[":
            test, i = _class(pattern, i)
            out.append((_ONE, test))
            continue
        elif c == "\\":
            if i + 1 >= n:
                raise GlobError("a trailing \\ escapes nothing (write \\\\ for a backslash)")
            i += 1
            out.append((_ONE, pattern[i].__eq__))
        else:
            out.append((_ONE, c.__eq__))
        i += 1
    return tuple(out)


def _not_separator(char: str) -> bool:
    return char != "/"


class _Matcher:
    """A glob as an automaton simulated over the text: time linear in the text (times the
    pattern's length at worst), whatever the pattern.

    Python's ``re`` backtracks: ``[^/]*a[^/]*a[^/]*a[^/]*a[^/]*a[^/]*a[^/]*b`` against
    a name of 60 ``a`` took minutes. ``pathspec`` (the .gitignore library on PyPI) compiles
    its patterns to the same ``re`` expressions, so it would not help; a linear-time regex
    engine (google-re2) is a compiled dependency without wheels everywhere gpulint runs.
    The automaton here is built lazily: each set of states met and each character read
    from it is computed once and cached, so matching is one dict lookup per character.
    """

    __slots__ = ("_cache", "_start", "tokens")

    def __init__(self, tokens: tuple[_Token, ...]) -> None:
        self.tokens = tokens
        self._start = self._closure({0})
        self._cache: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def _closure(self, states: set[int]) -> frozenset[int]:
        out: set[int] = set()
        todo = list(states)
        tokens = self.tokens
        while todo:
            state = todo.pop()
            if state in out:
                continue
            out.add(state)
            if 0 <= state < len(tokens) and tokens[state][0] != _ONE:
                todo.append(state + 1)  # a repeat may match nothing
        return frozenset(out)

    def _step(self, states: frozenset[int], char: str) -> frozenset[int]:
        key = (states, char)
        found = self._cache.get(key)
        if found is not None:
            return found
        tokens = self.tokens
        nxt: set[int] = set()
        for state in states:
            if state < 0:  # inside a "**/": stays until a "/" lets it out
                index = -state - 1
                nxt.add(state)
                if char == "/":
                    nxt.add(index + 1)
                continue
            if state >= len(tokens):
                continue
            kind, test = tokens[state]
            if kind == _ONE:
                assert test is not None
                if test(char):
                    nxt.add(state + 1)
            elif kind == _STAR:
                if char != "/":
                    nxt.add(state)
            elif kind == _ANY:
                nxt.add(state)
            else:  # _DIRS
                nxt.add(-state - 1)
                if char == "/":
                    nxt.add(state + 1)
        found = self._closure(nxt)
        if len(self._cache) > 4096:
            self._cache.clear()
        self._cache[key] = found
        return found

    def ends(self, text: str) -> list[int]:
        """Every ``i`` such that the pattern matches ``text[:i]``, in one pass."""
        accept = len(self.tokens)
        states = self._start
        out = [0] if accept in states else []
        for i, char in enumerate(text, start=1):
            states = self._step(states, char)
            if not states:
                break
            if accept in states:
                out.append(i)
        return out

    def fullmatch(self, text: str) -> bool:
        found = self.ends(text)
        return bool(found) and found[-1] == len(text)


def validate(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid glob, or None."""
    try:
        _tokens(pattern)
    except GlobError as exc:
        return str(exc)
    return None


class Glob(NamedTuple):
    """One compiled pattern."""

    pattern: str
    matcher: _Matcher
    anchored: bool
    #: ``!pattern``: a path it matches is matched by none of the patterns before it.
    negated: bool = False
    #: ``pattern/``: matches folders only (and so everything below them), not a file.
    dir_only: bool = False

    @classmethod
    def compile(cls, pattern: str) -> "Glob":
        """The compiled glob; GlobError for an invalid one."""
        text = pattern.strip()
        negated = text.startswith("!")
        if negated:
            text = text[1:]
        dir_only = text.endswith("/") and text.strip("/") != ""
        leading = text.startswith("/")
        if text.startswith("./"):
            text = text[2:]
        text = text.strip("/") if text != "/" else text
        anchored = "/" in text or leading
        return cls(pattern, _Matcher(_tokens(text)), anchored, negated, dir_only)

    def levels(self, parts: list[str], is_dir: bool) -> list[bool]:
        """For each folder of ``parts`` and the path itself (``is_dir``: a folder too),
        whether the pattern matches it: ``levels(...)[k]`` is about ``parts[: k + 1]``.
        One pass over the path whatever its depth."""
        out = [False] * len(parts)
        last = len(parts) - (0 if is_dir or not self.dir_only else 1)
        if not self.anchored:
            for k in range(last):
                out[k] = self.matcher.fullmatch(parts[k])
            return out
        joined = "/".join(parts)
        boundary: dict[int, int] = {}
        position = 0
        for k, part in enumerate(parts):
            position += len(part)
            boundary[position] = k
            position += 1
        for end in self.matcher.ends(joined):
            at = boundary.get(end)
            if at is not None and at < last:
                out[at] = True
        return out

    def matches(self, relpath: str, is_dir: bool = False) -> bool:
        """Does the pattern match ``relpath`` (``/``-separated) or a folder above it?

        ``is_dir`` says whether ``relpath`` itself is a folder: a ``dir/`` pattern matches
        a file only through a folder above it."""
        return any(self.levels(_parts(relpath), is_dir))


def _parts(relpath: str) -> list[str]:
    return [p for p in relpath.split("/") if p and p != "."]


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
        """As git decides whether a path is ignored: a path below a matched folder is
        matched; otherwise the last pattern that matches the path itself decides (matched,
        unless it is a ``!`` pattern). So ``!`` cannot bring back a file below a matched
        folder, and a walk that prunes matched folders finds what git would."""
        parts = _parts(relative(path, self.root))
        if not parts:
            return False
        is_dir = any(g.dir_only for g in self.globs) and os.path.isdir(path)
        if not any(g.negated for g in self.globs):  # nothing to take back: any match will do
            return any(any(g.levels(parts, is_dir)) for g in self.globs)
        decided: list[bool | None] = [None] * len(parts)
        for glob in self.globs:
            for k, hit in enumerate(glob.levels(parts, is_dir)):
                if hit:
                    decided[k] = not glob.negated
        return any(bool(d) for d in decided)
