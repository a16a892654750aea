"""A chart's ``.helmignore``, read and applied exactly as helm applies it.

helm loads a chart folder (``loader.LoadDir``) walking every path below it, relative and
with ``/`` separators, and skips each path its rules ignore (a folder with all it holds);
a ``charts/<sub>.tgz`` or ``charts/<sub>/`` it skipped is no subchart. Only the chart's own
``.helmignore`` is read (not a subchart folder's), and ``templates/.?*`` is always added.

The rules are helm's ``pkg/ignore`` (the same in helm 3.17 and 4):

* one rule per line (a UTF-8 byte order mark before the first is dropped), blank lines and
  lines starting with ``#`` skipped, each line trimmed of white space; a rule holding
  ``**``, one Go's ``filepath.Match`` calls malformed, or a line longer than Go's line
  scanner takes (64 KiB) fails the whole chart (:class:`BadRules`: helm does not render it);
* a leading ``!`` negates, a trailing ``/`` matches folders only, a leading ``/`` matches
  the whole path, a rule with a ``/`` inside matches the whole path, any other matches the
  last part of the path;
* the rules are tried in order and the first that decides wins: a rule that matches ignores
  the path; a negated rule *ignores* every path it does not match (and every file, when it
  is for folders) and lets the next rule decide for a path it matches.

Matching is Go's ``filepath.Match`` on a Unix system (:func:`go_match`): ``*`` and ``?``
never match ``/``, ``[^...]`` negates a class, ``\\`` escapes, and it works on bytes of
UTF-8 but reads a class's or a ``?``'s character as one code point.
"""

from __future__ import annotations

import os

HELMIGNORE = ".helmignore"
#: Go's ``bufio.Scanner`` refuses a longer line (``bufio.MaxScanTokenSize``).
MAX_LINE = 64 * 1024
#: The largest ``.helmignore`` read; a larger one is read as one helm refuses (a chart's
#: ignore file is a few hundred bytes).
MAX_FILE = 1 << 20


class BadPattern(ValueError):
    """``filepath.ErrBadPattern``: the pattern is malformed."""


class BadRules(ValueError):
    """A ``.helmignore`` helm refuses to load, failing the chart."""


# -- Go's filepath.Match ------------------------------------------------------------------------

_SLASH = ord("/")
_BACKSLASH = ord("\\")
_RUNE_ERROR = 0xFFFD


def go_match(pattern: str, name: str) -> bool:
    """Go's ``filepath.Match(pattern, name)`` with ``/`` as the separator, on the UTF-8
    bytes of both (a name from the file system keeps its bytes: ``surrogateescape``);
    raises :class:`BadPattern` when Go returns ``ErrBadPattern``."""
    return _match(_bytes(pattern), _bytes(name))


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _match(pat: bytes, name: bytes) -> bool:
    while pat:
        star, chunk, pat = _scan_chunk(pat)
        if star and not chunk:
            return _SLASH not in name  # a trailing * matches the rest unless it has a /
        rest, ok = _match_chunk(chunk, name)
        if ok and (not rest or pat):  # the last chunk must use up the name
            name = rest
            continue
        if star:  # the chunk after a star, at each later byte (a star never crosses /)
            found = False
            for i in range(len(name)):
                if name[i] == _SLASH:
                    break
                rest, ok = _match_chunk(chunk, name[i + 1 :])
                if ok:
                    if not pat and rest:
                        continue
                    name = rest
                    found = True
                    break
            if found:
                continue
        while pat:  # no match: the rest of the pattern must still be well formed
            _, chunk, pat = _scan_chunk(pat)
            _match_chunk(chunk, b"")
        return False
    return not name


def _scan_chunk(pattern: bytes) -> tuple[bool, bytes, bytes]:
    star = False
    while pattern[:1] == b"*":
        pattern = pattern[1:]
        star = True
    in_range = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == _BACKSLASH:
            if i + 1 < len(pattern):
                i += 1
        elif c == ord("["):
            in_range = True
        elif c == ord("]"):
            in_range = False
        elif c == ord("*") and not in_range:
            break
        i += 1
    return star, pattern[:i], pattern[i:]


def _rune(b: bytes) -> tuple[int, int]:
    """Go's ``utf8.DecodeRune``: the code point and its width; ``RuneError`` and 1 for a
    byte that does not start valid UTF-8 (``(RuneError, 0)`` for no bytes)."""
    if not b:
        return _RUNE_ERROR, 0
    lead = b[0]
    width = 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
    try:
        return ord(b[:width].decode("utf-8")), width
    except UnicodeDecodeError:
        return _RUNE_ERROR, 1


def _match_chunk(chunk: bytes, s: bytes) -> tuple[bytes, bool]:
    """Go's ``matchChunk``: the rest of ``s`` after ``chunk`` and whether it matched; the
    whole chunk is read (and :class:`BadPattern` raised) even after a mismatch."""
    failed = False
    while chunk:
        if not failed and not s:
            failed = True
        c = chunk[0]
        if c == ord("["):
            r = 0
            if not failed:
                r, n = _rune(s)
                s = s[n:]
            chunk = chunk[1:]
            negated = chunk[:1] == b"^"
            if negated:
                chunk = chunk[1:]
            matched = False
            ranges = 0
            while True:
                if chunk[:1] == b"]" and ranges > 0:
                    chunk = chunk[1:]
                    break
                lo, chunk = _get_esc(chunk)
                hi = lo
                if chunk[0] == ord("-"):
                    hi, chunk = _get_esc(chunk[1:])
                if lo <= r <= hi:
                    matched = True
                ranges += 1
            if matched == negated:
                failed = True
        elif c == ord("?"):
            if not failed:
                if s[0] == _SLASH:
                    failed = True
                _, n = _rune(s)
                s = s[n:]
            chunk = chunk[1:]
        else:
            if c == _BACKSLASH:
                chunk = chunk[1:]
                if not chunk:
                    raise BadPattern("a pattern ends with a backslash")
            if not failed:
                if chunk[0] != s[0]:
                    failed = True
                s = s[1:]
            chunk = chunk[1:]
    if failed:
        return b"", False
    return s, True


def _get_esc(chunk: bytes) -> tuple[int, bytes]:
    if not chunk or chunk[0] in b"-]":
        raise BadPattern("a character class is malformed")
    if chunk[0] == _BACKSLASH:
        chunk = chunk[1:]
        if not chunk:
            raise BadPattern("a character class is malformed")
    r, n = _rune(chunk)
    if r == _RUNE_ERROR and n == 1:
        raise BadPattern("a character class holds a byte that is not UTF-8")
    rest = chunk[n:]
    if not rest:
        raise BadPattern("a character class is not closed")
    return r, rest


# -- helm's rules -------------------------------------------------------------------------------


#: Go's ``unicode.IsSpace``, what ``strings.TrimSpace`` trims (``str.strip()`` also trims
#: the separators U+001C to U+001F).
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
_GO_SPACE += "\u2028\u2029\u202f\u205f\u3000"


class _Rule:
    __slots__ = ("base_only", "must_dir", "negate", "pattern", "raw")

    def __init__(self, raw: str, pattern: str, negate: bool, must_dir: bool, base: bool) -> None:
        self.raw = raw
        self.pattern = pattern
        self.negate = negate
        self.must_dir = must_dir
        self.base_only = base

    def match(self, path: str) -> bool:
        name = _go_base(path) if self.base_only else path
        try:
            return go_match(self.pattern, name)
        except BadPattern:  # helm logs it and calls it no match
            return False


def _go_base(path: str) -> str:
    """Go's ``filepath.Base``: the last element, trailing slashes dropped; ``/`` for only
    slashes, ``.`` for the empty path."""
    if path == "":
        return "."
    stripped = path.rstrip("/")
    if stripped == "":
        return "/"
    return stripped.rsplit("/", 1)[-1]


class Rules:
    """helm's ``ignore.Rules``: :meth:`parse` a ``.helmignore``, :meth:`ignore` a path."""

    def __init__(self, rules: list[_Rule] | None = None) -> None:
        self.rules: list[_Rule] = rules if rules is not None else []

    @classmethod
    def parse(cls, text: str) -> Rules:
        """The rules of a ``.helmignore`` text; :class:`BadRules` where helm fails."""
        rules = cls()
        text = text.removeprefix("\ufeff")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for line in lines:
            if len(line.encode("utf-8", "surrogateescape")) >= MAX_LINE:
                raise BadRules("a line of .helmignore is longer than helm reads (64 KiB)")
            rules.add(line)
        return rules

    def add(self, line: str) -> None:
        """helm's ``parseRule``."""
        rule = line.strip(_GO_SPACE)
        if rule == "" or rule.startswith("#"):
            return
        if "**" in rule:
            raise BadRules(f"{rule!r}: double-star (**) syntax is not supported")
        try:
            go_match(rule, "abc")
        except BadPattern:
            raise BadRules(f"{rule!r}: syntax error in pattern") from None
        raw = rule
        negate = rule.startswith("!")
        if negate:
            rule = rule[1:]
        must_dir = rule.endswith("/")
        if must_dir:
            rule = rule[:-1]
        if rule.startswith("/"):
            self.rules.append(_Rule(raw, rule[1:], negate, must_dir, False))
        else:
            self.rules.append(_Rule(raw, rule, negate, must_dir, "/" not in rule))

    def add_defaults(self) -> None:
        """helm's ``AddDefaults``: every dot file under ``templates/``."""
        self.add("templates/.?*")

    def ignore(self, path: str, is_dir: bool) -> bool:
        """Does helm skip ``path`` (relative to the chart, ``/``-separated)?"""
        if path in ("", ".", "./"):
            return False
        for rule in self.rules:
            if rule.negate:
                if rule.must_dir and not is_dir:
                    return True
                if not rule.match(path):
                    return True
                continue
            if rule.must_dir and not is_dir:
                continue
            if rule.match(path):
                return True
        return False


def chart_rules(folder: str) -> Rules | None:
    """The rules helm loads the chart in ``folder`` with (its ``.helmignore``, if any, and
    the default); None when helm refuses the ``.helmignore`` and so the chart."""
    path = os.path.join(folder, HELMIGNORE)
    rules = Rules()
    if os.path.exists(path):  # helm: os.Stat, then read it (a folder fails to read)
        try:
            with open(path, "rb") as fh:
                raw = fh.read(MAX_FILE + 1)
            if len(raw) > MAX_FILE:
                return None
            rules = Rules.parse(raw.decode("utf-8", "surrogateescape"))
        except (OSError, BadRules):
            return None
    rules.add_defaults()
    return rules


def subchart_entries(folder: str, top: str | None = None) -> list[str]:
    """The names under ``folder``/charts that helm loads as subcharts, sorted: every entry
    the ``.helmignore`` of ``top`` (the chart helm is given; ``folder`` itself by default)
    does not skip, nor ``charts/`` as a whole -- helm reads only the outermost chart's
    ``.helmignore``, with paths from its folder (``charts/sub/charts/x``). None when that
    ``.helmignore`` fails the chart (helm renders nothing) or ``charts/`` cannot be listed.
    Whether an entry is a folder is its target's, for a link (helm follows links)."""
    top = folder if top is None else top
    rules = chart_rules(top)
    charts = os.path.join(folder, "charts")
    rel = os.path.relpath(charts, top).replace(os.sep, "/")
    if rules is None or rel.startswith("../") or rules.ignore(rel, os.path.isdir(charts)):
        return []
    try:
        names = sorted(os.listdir(charts))
    except OSError:
        return []
    return [
        name
        for name in names
        if not rules.ignore(f"{rel}/{name}", os.path.isdir(os.path.join(charts, name)))
    ]
