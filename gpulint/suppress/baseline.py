"""A baseline: the findings a repository already had, recorded so that only new ones count.

``gpulint check --write-baseline FILE`` records every finding of the run (not the suppressed
ones, nor GL900: a rule that raised is a tool error, never accepted); ``--baseline FILE`` (or
``baseline:`` in the configuration) reads it back, and a finding that matches an entry is
suppressed (kind ``external``, source ``baseline``: not printed, not counted toward
``--fail-on``, and a SARIF result with a suppression, which code scanning shows as closed).

Matching is by the SARIF fingerprint (:func:`gpulint.model.fingerprint`): the
rule, the file, the object (kind, namespace, name) and the YAML path inside the object,
never a line or a column. Moving lines, reordering documents or reformatting a file keeps
every entry matching; renaming the object, or moving the value to another key, does not.
The file is named relative to the baseline's own folder, so the baseline matches from any
working directory. Findings that share a fingerprint (the same mistake twice at one path,
through an alias) are entries of their own: each entry matches one finding.

An entry whose file was linted in the run (or no longer exists) and that matched nothing is
stale when its rule ran in the run: the mistake was fixed, or the object renamed (an entry of
a rule the run did not select, as a plain run reading a ``--select ALL`` baseline, is left
alone). Each is a GL101 finding at the entry's
line in the baseline file, so the baseline shrinks as the code is fixed (as GL100 does for
``# gpulint: disable`` comments). An entry of a file the run did not lint (a pre-commit run
on the changed files only) is left alone.

An entry's file is looked at (does it still exist?) only inside the repository the baseline
is in (:func:`gpulint.render.trees.project_root`): a name that is absolute, climbs out with
``..`` or leads out through a symbolic link is never stat()ed, and is a GL101 finding of
its own ("names a file outside the repository"), the same whether or not that path exists.
The lines of the stale entries are found in one pass over the baseline's text
(:func:`fingerprint_spans`), whatever their number.

The file is JSON, sorted by file, rule, object and fingerprint, one key per line: a change
to it reads well in a diff. A file that is not a baseline (not JSON, another version,
larger than :data:`MAX_BYTES`, entries of the wrong shape) is a one-line error and exit 2:
a broken baseline must not turn into "every finding is new", nor into "nothing is".
"""

import functools
import json
import os
import re
from collections import Counter
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from pathlib import Path as FsPath
from typing import Any, NamedTuple

from gpulint import codes
from gpulint.errors import GpulintError
from gpulint.model import (
    RULE_ERROR_CODE,
    Finding,
    Span,
    Suppression,
    file_location,
    fingerprint,
)
from gpulint.util.discover import Target

#: The format's name and version, the first key of the file.
FORMAT_KEY = "gpulint-baseline"
VERSION = 1
#: A larger file is refused: 64 MiB is some 200,000 entries, far beyond any repository's.
MAX_BYTES = 64 << 20
#: The code of the finding for an entry that matches nothing any more.
STALE_CODE = codes.STALE_BASELINE_ENTRY
#: The suppression a matched finding gets.
SOURCE = "baseline"


class BaselineError(GpulintError):
    """The baseline file cannot be used; the message is one line, naming the file."""


class Entry(NamedTuple):
    file: str
    rule: str
    object: str | None
    fingerprint: str
    message: str

    def as_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "rule": self.rule,
            "object": self.object,
            "fingerprint": self.fingerprint,
            "message": self.message,
        }


def _key(entry: Entry) -> tuple[str, str, str, str, str]:
    return (entry.file, entry.rule, entry.object or "", entry.fingerprint, entry.message)


class Keys:
    """How findings are named in a baseline whose file is in ``folder``."""

    def __init__(self, folder: str, stdin_label: str | None) -> None:
        self.folder = os.path.abspath(folder)
        self.stdin_label = stdin_label

    def file(self, label: str) -> str:
        """The file as the baseline names it: relative to its folder, ``/``-separated."""
        if label == self.stdin_label:
            return label
        absolute = os.path.abspath(label)
        try:
            relative = os.path.relpath(absolute, self.folder)
        except ValueError:  # another drive (Windows)
            return absolute.replace(os.sep, "/")
        return relative.replace(os.sep, "/")

    def entry(self, f: Finding) -> Entry:
        # Relative to the baseline's folder: the same key from any working directory.
        path = f.path if f.path == self.stdin_label else os.path.abspath(f.path)
        uri = file_location(path, self.folder, self.stdin_label)["uri"]
        ref = f.object
        return Entry(
            self.file(f.path),
            f.rule,
            ref.label() if ref is not None else None,
            fingerprint(f, uri),
            f.message,
        )


def recordable(f: Finding) -> bool:
    """Whether a finding goes into a baseline: not suppressed, not a rule's crash."""
    return f.suppression is None and f.rule not in (RULE_ERROR_CODE, STALE_CODE)


def render(entries: Iterable[Entry]) -> str:
    """The baseline file's text (sorted, one key per line, ending in a newline)."""
    doc = {FORMAT_KEY: VERSION, "findings": [e.as_json() for e in sorted(entries, key=_key)]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _fail(shown: str, reason: str) -> BaselineError:
    return BaselineError(f"baseline {shown}: {reason}")


def read(path: str, shown: str | None = None) -> tuple[list[Entry], str]:
    """The entries of the baseline at ``path`` and its text (BaselineError if unusable)."""
    shown = shown or path
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise _fail(shown, f"cannot read it: {exc.strerror or type(exc).__name__}") from None
    if len(raw) > MAX_BYTES:
        raise _fail(shown, f"larger than {MAX_BYTES >> 20} MiB: not a gpulint baseline")
    try:
        text = raw.decode("utf-8")
        doc = json.loads(text)
    except UnicodeDecodeError:
        raise _fail(shown, "not UTF-8 text: not a gpulint baseline") from None
    except json.JSONDecodeError as exc:
        raise _fail(shown, f"not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    except RecursionError:
        raise _fail(shown, "not JSON gpulint can read (nested too deeply)") from None
    if not isinstance(doc, dict) or FORMAT_KEY not in doc:
        raise _fail(shown, f'not a gpulint baseline (no "{FORMAT_KEY}" key)')
    version = doc[FORMAT_KEY]
    if version != VERSION or isinstance(version, bool):
        raise _fail(
            shown,
            f"version {json.dumps(version)[:40]} is not supported (this gpulint reads "
            f"version {VERSION}): write it again with --write-baseline",
        )
    findings = doc.get("findings")
    if not isinstance(findings, list):
        raise _fail(shown, '"findings" must be a list')
    entries = []
    for i, item in enumerate(findings):
        if not isinstance(item, dict):
            raise _fail(shown, f"entry {i + 1} is not an object")
        file, rule, digest, message = (
            item.get(k) for k in ("file", "rule", "fingerprint", "message")
        )
        obj = item.get("object")
        if not (
            isinstance(file, str)
            and isinstance(rule, str)
            and isinstance(digest, str)
            and isinstance(message, str)
            and (obj is None or isinstance(obj, str))
        ):
            raise _fail(
                shown,
                f"entry {i + 1} needs the strings file, rule, fingerprint and message "
                "(and object: a string or null)",
            )
        entries.append(Entry(file, rule, obj, digest, message))
    return entries, text


class Baseline:
    """A baseline read for a run: marks the findings it holds, then names the stale entries."""

    def __init__(self, path: str, entries: Sequence[Entry], text: str, keys: Keys) -> None:
        self.path = path
        self.keys = keys
        self.entries = list(entries)
        self._text = text
        self._left = Counter(e.fingerprint for e in entries)
        self._linted: set[str] = set()
        #: How many findings of the run the baseline matched.
        self.matched = 0

    def watch(self, targets: Iterable[Target]) -> Iterator[Target]:
        """``targets``, remembering each file linted (for stale entries)."""
        for target in targets:
            self._linted.add(self.keys.file(target.label))
            yield target

    def mark(self, findings: list[Finding]) -> list[Finding]:
        """``findings`` with those in the baseline suppressed (one entry per finding)."""
        out = []
        for f in findings:
            if recordable(f):
                digest = self.keys.entry(f).fingerprint
                if self._left[digest] > 0:
                    self._left[digest] -= 1
                    self.matched += 1
                    f = f._replace(
                        suppression=Suppression("external", SOURCE, f"in the baseline {self.path}")
                    )
            out.append(f)
        return out

    def stale(self, ran: Container[str] | None = None) -> list[tuple[Entry, Span, bool]]:
        """Entries that matched no finding of a file the run linted with the entry's rule
        among those that ran (``ran``; None: every rule), or of a file that is gone or
        outside the repository, each with its span in the baseline file and whether its file
        is outside the repository, in the file's order. An entry of a rule this run did not
        select (a baseline written with ``--select ALL``, read by a plain run) is left
        alone."""
        total = Counter(e.fingerprint for e in self.entries)
        seen: Counter[str] = Counter()
        spans: dict[tuple[str, int], Span] | None = None
        out = []
        for entry in self.entries:
            digest = entry.fingerprint
            nth = seen[digest]
            seen[digest] += 1
            # The first copies of a fingerprint are the ones that matched.
            if nth < total[digest] - self._left[digest]:
                continue
            outside = False
            if ran is not None and entry.file in self._linted and entry.rule not in ran:
                continue
            if entry.file not in self._linted:
                place = self.place(entry.file)
                outside = place is None
                if place is not None and os.path.lexists(place):
                    continue
            if spans is None:
                spans = fingerprint_spans(self._text)  # one pass, for every stale entry
            out.append((entry, spans.get((digest, nth), Span(1, 1, 1, 1)), outside))
        return out

    def place(self, file: str) -> str | None:
        """Where the entry's ``file`` is on disk, or None when it is outside the repository
        (absolute, climbing out with ``..``, or through a symbolic link): such a path is
        never looked at, so no entry can ask whether ``/etc/hostname`` exists."""
        if file == self.keys.stdin_label:
            return self.keys.folder  # stdin's entries: never "gone"
        return inside_path(*self._root, file)

    @functools.cached_property
    def _root(self) -> tuple[str, str]:
        """The repository the baseline is in (its entries name files inside it) and the
        baseline's folder, both resolved."""
        from gpulint.render.trees import project_root

        folder = os.path.realpath(self.keys.folder)
        return project_root(folder), folder


#: A JSON string token (JSON has no quote outside strings: lexing them finds every key).
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_COLON = re.compile(r"\s*:\s*")


def fingerprint_spans(text: str) -> dict[tuple[str, int], Span]:
    """Where each ``"fingerprint"`` key is in a baseline's text, by (fingerprint, how many
    came before it with that fingerprint): one pass over the text, lines counted as it goes
    (a search per entry took 10 s for 8,000 stale entries, hours for a 36 MB baseline)."""
    out: dict[tuple[str, int], Span] = {}
    seen: Counter[str] = Counter()
    line, line_start, counted = 1, 0, 0
    tokens = _STRING.finditer(text)
    for token in tokens:
        if token.group() != '"fingerprint"':
            continue
        colon = _COLON.match(text, token.end())
        value = _STRING.match(text, colon.end()) if colon is not None else None
        if value is None:
            continue
        try:
            digest = json.loads(value.group())
        except ValueError:
            continue
        start = token.start()
        newlines = text.count("\n", counted, start)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", counted, start) + 1
        counted = start
        column = start - line_start + 1
        nth = seen[digest]
        seen[digest] += 1
        out[digest, nth] = Span(line, column, line, column + value.end() - start)
        # The value is a string token of its own: go on after it.
        for skipped in tokens:
            if skipped.end() >= value.end():
                break
    return out


def inside_path(root: str, folder: str, file: str) -> str | None:
    """``file`` (``/``-separated, relative to ``folder``, which is inside ``root``; both
    resolved) resolved one component at a time, or None as soon as it leaves ``root``.

    A component is only looked at (``lstat``, ``readlink``) when the folder holding it is
    inside ``root``: an absolute name, a ``..`` that climbs out or a link that points out
    ends the walk before anything outside is touched.
    """
    if not file or os.path.isabs(file) or file.startswith(("/", "\\")) or "\0" in file:
        return None
    if not _within(folder, root):
        return None
    current = folder
    todo = file.replace("\\", "/").split("/")
    todo.reverse()
    links = 0
    while todo:
        part = todo.pop()
        if part in ("", "."):
            continue
        if part == "..":
            current = os.path.dirname(current)
            if not _within(current, root):
                return None
            continue
        candidate = os.path.join(current, part)
        try:
            target = os.readlink(candidate) if os.path.islink(candidate) else None
        except (OSError, ValueError):
            target = None
        if target is None:
            current = candidate
            continue
        links += 1
        if links > 40:
            return None  # a link loop
        if os.path.isabs(target):
            # Followed only into ``root`` (read as text: nothing outside is looked at).
            target = os.path.normpath(target)
            if not _within(target, root):
                return None
            current = root
            target = os.path.relpath(target, root)
        todo.extend(reversed(target.split(os.sep)))
    return current


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def stale_message(entry: Entry, outside: bool = False) -> str:
    where = f"{entry.file} ({entry.object})" if entry.object else entry.file
    if outside:
        return (
            f"baseline entry {entry.rule} in {where} names a file outside the repository: "
            "it can match no finding of this repository and is not checked; delete the entry"
        )
    return (
        f"baseline entry {entry.rule} in {where} matches no finding any more (fixed, or the "
        "object was renamed): delete the entry, or write the baseline again with "
        "--write-baseline"
    )


class RunBaseline:
    """The baseline of one ``check`` run: none, one read (``--baseline`` or the
    configuration's ``baseline:``), or one being written (``--write-baseline``)."""

    def __init__(
        self,
        read_from: str | None,
        write_to: str | None,
        configured: FsPath | None,
        stdin_label: str | None,
    ) -> None:
        self.write_to = write_to
        self.recorded: list[Entry] = []
        self.baseline: Baseline | None = None
        self._stale = 0
        if write_to is not None:
            self.keys = Keys(os.path.dirname(os.path.abspath(write_to)), stdin_label)
            return
        if read_from is None and configured is not None:
            read_from = _shown(configured)
        self.keys = Keys(os.path.dirname(os.path.abspath(read_from or ".")), stdin_label)
        if read_from is not None:
            entries, text = read(read_from)
            self.baseline = Baseline(read_from, entries, text, self.keys)

    def watch(self, found: Iterator[Target]) -> Iterator[Target]:
        return self.baseline.watch(found) if self.baseline is not None else found

    @property
    def prepare(self) -> Callable[[list[Finding]], list[Finding]] | None:
        if self.baseline is not None:
            return self.baseline.mark
        return self._record if self.write_to is not None else None

    def _record(self, findings: list[Finding]) -> list[Finding]:
        """Record each finding, and accept it: the baseline written is this run's."""
        accepted = Suppression("external", SOURCE, f"written to the baseline {self.write_to}")
        out = []
        for f in findings:
            if recordable(f):
                self.recorded.append(self.keys.entry(f))
                f = f._replace(suppression=accepted)
            out.append(f)
        return out

    def text(self) -> str:
        """The baseline to write."""
        return render(self.recorded)

    def stale(self, active: Mapping[str, Any]) -> list[Finding]:
        """GL101 findings for the stale entries of the baseline read (if GL101 is on)."""
        rule = active.get(STALE_CODE)
        if self.baseline is None or rule is None:
            return []
        found = [
            rule.finding(self.baseline.path, span, stale_message(entry, outside), None, (), 0)
            for entry, span, outside in self.baseline.stale(active)
        ]
        self._stale = len(found)
        return list(found)

    def note(self) -> str:
        """The line to write on stderr about the baseline ("" without one)."""
        from gpulint.util.textsafe import escape  # the path may be a pull request's name

        text = self._note()
        return escape(f"gpulint: {text}") + "\n" if text else ""

    def _note(self) -> str:
        if self.write_to is not None:
            n = len(self.recorded)
            return f"wrote {n} finding{'s' * (n != 1)} to the baseline {self.write_to}"
        if self.baseline is None:
            return ""
        n = self.baseline.matched
        text = f"{n} finding{'s' * (n != 1)} in the baseline {self.baseline.path} not reported"
        if self._stale:
            text += f"; {self._stale} stale entr{'y' if self._stale == 1 else 'ies'} ({STALE_CODE})"
        return text


def _shown(path: FsPath) -> str:
    """``path`` relative to the working directory when inside it (as findings name files)."""
    try:
        return str(path.relative_to(FsPath.cwd().resolve()))
    except ValueError:
        return str(path)
