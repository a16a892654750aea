"""Where helm took a rendered value or an error from, besides a template and values files:
``--set`` flags (:mod:`gpulint.render.helm.setflags`: applied after every values file, a value
they set is theirs); helm's error output (:func:`error_place`: the template and line it
names; :func:`.dependencies.missing_dependency`); packaged subcharts (:class:`Archive`, read
bounded, never extracted); files a template inserts (:func:`inserted_file`: ``.Files.Get``,
``tpl (.Files.Get ...)``, ``.Files.Glob ... AsConfig``); the files of a chart folder rendering
reads (:func:`renders`, for a file named on the command line). Which of a template's
documents a rendered one is: :mod:`gpulint.render.helm.documents`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from gpulint.model import Related, Span
from gpulint.render.mapping import Place, label_of, load_documents, lookup, read_text
from gpulint.util.walk import (  # os.walk without recursion: a folder of any depth
    Listings,
    walk,
)

if TYPE_CHECKING:
    from gpulint.render.helm import templatetext
    from gpulint.render.helm.documents import Resolved

# -- errors ----------------------------------------------------------------------------------


class ErrorPlace(NamedTuple):
    """A place helm's error names: the template as helm prints it, a line and column (0:
    not said), and whether the line counts in what the template rendered (a YAML error)."""

    source: str
    line: int
    column: int
    rendered: bool


_NAME = r"([^\s():]+\.(?:ya?ml|tpl|txt|json))"
_ERROR_PLACES = (
    re.compile(rf"(?:execution|parse) error at \({_NAME}:(\d+)(?::(\d+))?\)"),
    re.compile(rf"^(?:Error: )?(?:template: )?{_NAME}:(\d+):(\d+)"),
    re.compile(rf"YAML parse error on {_NAME}:.*?\byaml: line (\d+)()"),
)


def error_place(stderr: str) -> ErrorPlace | None:
    """The first template place helm's error output names, if it names one."""
    for line in stderr.splitlines():
        for i, pattern in enumerate(_ERROR_PLACES):
            m = pattern.search(line)
            if m:
                column = int(m.group(3)) if m.group(3) else 0
                return ErrorPlace(m.group(1), int(m.group(2)), column, i == 2)
    return None


# -- files named on the command line ----------------------------------------------------------

#: Folders of a chart whose files are read by ``helm template``: ``templates/`` and the
#: subcharts under ``charts/`` (its files at the top, Chart.yaml and values files, are too).
#: ``ci/`` holds chart-testing's values files.
RENDERED_FOLDERS = ("templates", "charts", "ci")

_FILES_CALL = re.compile(r"\.Files\.(?:Get|Glob|Lines|AsSecrets|AsConfig)\s+\"([^\"]+)\"")


#: The files at a chart's top that ``helm`` reads besides values files (Chart.lock and
#: requirements.lock are not YAML files a walk finds, but a name on the command line can be).
CHART_TOP_FILES = frozenset({"Chart.yaml", "Chart.lock", "requirements.yaml", "requirements.lock"})


def renders(chart: str, path: str, inserted: InsertedFiles | None = None) -> bool:
    """Is ``path`` (a file inside ``chart``) something rendering the chart reads: a file at
    the chart's top that helm reads (Chart.yaml, requirements.yaml) or a values file there
    (any name holding ``values``: ``values.yaml``, ``values-prod.yaml``, given with
    ``-f``), or under its ``templates/``, ``charts/`` or ``ci/``, or a file a template
    inserts (``.Files.Get``)? A manifest elsewhere in the chart's folder
    (``examples/job.yaml``, ``crds/``, which ``helm template`` leaves out, or a Deployment
    kept at its top beside Chart.yaml) is linted as a file of its own; a template written at
    the top (template actions in its first 64 KiB: GL201 names it, helm renders it not) stays
    the chart's. ``inserted``: the
    chart's :func:`inserted_names`, when the caller asks of many files (else its
    templates are read for this one)."""
    rel = os.path.relpath(os.path.abspath(path), chart).split(os.sep)
    if len(rel) == 1 and (
        rel[0] in CHART_TOP_FILES or "values" in rel[0].lower() or _has_actions(path)
    ):
        return True
    if len(rel) > 1 and rel[0] in RENDERED_FOLDERS:
        return True
    import fnmatch

    name = "/".join(rel)
    names = inserted_names(chart) if inserted is None else inserted
    if names.every is not None:
        return names.every
    return name in names.exact or any(fnmatch.fnmatchcase(name, p) for p in names.patterns)


def _has_actions(path: str) -> bool:
    """Does the file hold a template action (``{{``) in its first 64 KiB? A link is not
    followed (it may lead out of the tree): it is no template here."""
    try:
        if os.path.islink(path):
            return False
        with open(path, "rb") as fh:
            return b"{{" in fh.read(1 << 16)
    except OSError:  # a folder, a file that cannot be read
        return False


#: ``.Files.Glob`` patterns of a chart's templates kept at most: past them every file of
#: the chart's folder is taken for the chart's (a walk then lints none of them alone), so
#: matching the folder's files costs at most this many comparisons a file.
MAX_PATTERNS = 64


class InsertedFiles(NamedTuple):
    """The files a chart's templates insert: ``exact`` names and ``patterns``; ``every``
    is True when there were more patterns than :data:`MAX_PATTERNS` (None: look them up)."""

    exact: frozenset[str]
    patterns: tuple[str, ...]
    every: bool | None = None


def inserted_names(chart: str, listings: Listings | None = None) -> InsertedFiles:
    """The files the chart's templates insert: the names and patterns of their
    ``.Files.Get "rel"`` (``Glob``, ``Lines``, ``AsSecrets``, ``AsConfig``) calls, each
    template read once (its first MiB). Those files' findings are the chart's. ``listings``:
    the run's, shared with its other walks."""
    exact: set[str] = set()
    patterns: list[str] = []
    templates = os.path.join(chart, "templates")
    for dirpath, _, files in walk(templates, None, listings):
        for name in files:
            path = os.path.join(dirpath, name)
            try:
                if os.path.islink(path):  # never followed out of the tree
                    continue
                with open(path, "rb") as fh:
                    text = fh.read(1 << 20).decode("utf-8", "replace")
            except OSError:
                continue
            for m in _FILES_CALL.finditer(text):
                value = m.group(1)
                if any(c in value for c in "*?["):
                    if len(patterns) >= MAX_PATTERNS:
                        return InsertedFiles(frozenset(), (), True)
                    patterns.append(value)
                else:
                    exact.add(value)
    return InsertedFiles(frozenset(exact), tuple(patterns))


# -- packaged subcharts ------------------------------------------------------------------------

#: Bytes of a packaged subchart read at most (compressed), and members looked at.
MAX_ARCHIVE_BYTES = 16 << 20
MAX_MEMBERS = 4096
MAX_MEMBER_BYTES = 4 << 20
MAX_UNPACKED_BYTES = 64 << 20


class Archive:
    """A packaged subchart (``.tgz``): its members' text, read once and bounded
    (:func:`gpulint.render.helm.tgz.open_chart`: every header checked before it is read)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.members: dict[str, str] = {}
        #: The chart's ``name:`` and the archive's top folder (``<top>/Chart.yaml``).
        self.name: str | None = None
        self.top = ""
        #: Why the archive was not read (a phrase after its name), if it was refused.
        self.refused: str | None = None
        self._read()

    def _read(self) -> None:
        import tarfile

        from gpulint.render.helm.tgz import Refused, open_chart

        try:
            if os.path.getsize(self.path) > MAX_ARCHIVE_BYTES:
                return
            with open(self.path, "rb") as fh, open_chart(fh, MAX_UNPACKED_BYTES + (1 << 20)) as tar:
                for i, member in enumerate(tar):
                    # helm loaded the archive within its limits; this bounds the reading too
                    if i >= MAX_MEMBERS or member.offset_data > MAX_UNPACKED_BYTES:
                        break
                    if not member.isfile() or member.size > MAX_MEMBER_BYTES:
                        continue
                    fh2 = tar.extractfile(member)
                    if fh2 is not None:
                        text = fh2.read(MAX_MEMBER_BYTES).decode("utf-8", "replace")
                        self.members[member.name] = text
        except Refused as exc:
            self.members, self.refused = {}, str(exc)
            return
        except (OSError, tarfile.TarError, EOFError, ValueError):
            self.members = {}
            return
        for name, text in self.members.items():  # `<dir>/Chart.yaml`, the chart's own
            if name.count("/") == 1 and name.endswith("/Chart.yaml"):
                m = re.search(r"^name:\s*['\"]?([^'\"\s#]+)", text, re.MULTILINE)
                if m:
                    self.name = m.group(1)
                    self.top = name.split("/")[0]
                    return


# -- files a template inserts -------------------------------------------------------------------

_FILES_GET = re.compile(r"\.Files\.Get\s+\"([^\"]+)\"")
_FILES_GLOB = re.compile(r"\.Files\.Glob\s+\"([^\"]+)\"\s*\)\s*\.AsConfig")


class Inserted(NamedTuple):
    """A file (or a glob whose files become a ConfigMap's keys) a template line inserts."""

    name: str
    glob: bool
    line: int  # 1-based, in the template


def inserted_file(raw: Sequence[str], first: int, last: int) -> Inserted | None:
    """The first ``.Files.Get``/``.Files.Glob ... AsConfig`` in raw lines ``first..last``
    (1-based, inclusive)."""
    for number in range(max(first, 1), min(last, len(raw)) + 1):
        text = raw[number - 1]
        m = _FILES_GLOB.search(text)
        if m:
            return Inserted(m.group(1), True, number)
        m = _FILES_GET.search(text)
        if m:
            return Inserted(m.group(1), False, number)
    return None


def archives(folder: str, deps: object, top: str | None = None) -> dict[str, Archive | None]:
    """The packaged subcharts (``folder``/charts/*.tgz) helm loads (those the ``.helmignore``
    of ``top``, the chart rendered, does not skip: :func:`.helmignore.subchart_entries`) by
    the names helm prints: each archive's Chart.yaml ``name:``, and the aliases of the
    dependencies (``deps``). An archive that was refused is under ``""``, the first one."""
    from gpulint.render.helm.helmignore import subchart_entries

    found: dict[str, Archive | None] = {}
    charts = os.path.join(folder, "charts")
    for entry in subchart_entries(folder, top):
        path = os.path.join(charts, entry)
        if entry.endswith((".tgz", ".tar.gz")) and os.path.isfile(path):
            archive = Archive(path)
            if archive.refused is not None:
                found.setdefault("", archive)
            if archive.name is not None:  # two of one name: neither is known to be it
                found[archive.name] = None if archive.name in found else archive
    for dep in deps if isinstance(deps, list) else []:
        if isinstance(dep, dict):
            alias, dep_name = dep.get("alias"), dep.get("name")
            if isinstance(alias, str) and isinstance(dep_name, str):
                found.setdefault(alias, found.get(dep_name))
    return found


def file_place(
    resolved: Resolved,
    folder: str,
    t: templatetext.Template,
    match: templatetext.Match,
    path: tuple[object, ...],
    on_key: bool,
    value: object,
) -> Place | None:
    """The file under the chart a ``.Files.Get``/``.Files.Glob`` of the template inserted
    the finding's value from, when the value written there equals the rendered one."""
    import fnmatch

    if match.lines:
        first = match.lines[-1].number
        end = match.block[1]
        last = t.lines[end].number - 1 if end < len(t.lines) else len(t.raw)
    else:
        first, last = 1, len(t.raw)
    inserted = inserted_file(t.raw, first, last)
    if inserted is None:
        return None
    chart = resolved.chain[-1][0]
    root = os.path.realpath(chart).rstrip(os.sep) + os.sep
    rest = path[match.depth :]
    used = f"{os.path.relpath(resolved.path, folder)}:{inserted.line}"
    how = ".Files.Glob" if inserted.glob else ".Files.Get"
    note = f" (inserted by {used} with {how} {inserted.name!r})"
    related = (
        Related(
            "template",
            label_of(resolved.path),
            Span(inserted.line, 1, inserted.line, 1),
            f"the template that inserts the file with {how}",
        ),
    )
    if inserted.glob:  # a ConfigMap's data: each key a file's name, its value the text
        if len(rest) != 1 or not isinstance(rest[0], str):
            return None
        for dirpath, _, names in walk(chart):
            for name in sorted(names):
                file = os.path.join(dirpath, name)
                rel = os.path.relpath(file, chart).replace(os.sep, "/")
                if (
                    name == rest[0]
                    and fnmatch.fnmatchcase(rel, inserted.name)
                    and _same_text(file, root, value)
                ):
                    return Place(label_of(file), Span(1, 1, 1, 1), note, related)
        return None
    file = os.path.join(chart, *inserted.name.split("/"))
    if not rest:  # the file's text is the value
        if _same_text(file, root, value):
            return Place(label_of(file), Span(1, 1, 1, 1), note, related)
        return None
    if not os.path.realpath(file).startswith(root):
        return None
    text = read_text(file)
    for doc in load_documents(text) if text is not None else []:
        if lookup(doc.data, rest) == (True, value):
            span = doc.key_span(rest) if on_key else doc.value_span(rest)
            return Place(label_of(file), span, note, related)
    return None


def _same_text(file: str, root: str, value: object) -> bool:
    if not isinstance(value, str) or not os.path.realpath(file).startswith(root):
        return False
    text = read_text(file)
    return text is not None and text.strip() == value.strip()


def in_archive(found: Place, resolved: Resolved) -> Place:
    """A place in a member of a packaged subchart, which no editor opens: the archive, the
    member and its line named."""
    where = f"line {found.span.line}" if found.span.line > 1 else "no line of it found"
    unset = "" if found.note else "; the parent chart's values do not set it"
    note = (
        f" (in the packaged subchart {label_of(resolved.archive or '')}: member "
        f"{resolved.real}, {where}; inside an archive, so shown at the archive{unset})"
        f"{found.note}"
    )
    return Place(found.path, Span(1, 1, 1, 1), note, found.related)


def placed_error(
    stderr: str, returncode: int | None, resolve: Callable[[str], Resolved | str], chart: str
) -> tuple[str, int, str | None, int]:
    """helm's error (:func:`readable`) and where to show it: (message, line, file, column);
    the file is None (the chart's Chart.yaml: at the missing dependency's ``name:`` when
    that is the error) unless the error names a template of the chart that ``resolve``
    finds (not a member of a packaged subchart)."""
    where = error_place(stderr)
    text = readable(stderr, returncode, where is not None)
    if where is None:
        from gpulint.render.helm.dependencies import missing_dependency

        got = missing_dependency(stderr, chart)
        if got is None:
            return text, 1, None, 1
        line, column, file = got
        return text, line, None if file is None else label_of(file), column
    resolved = resolve(where.source)
    if isinstance(resolved, str) or resolved.archive is not None:
        return readable(stderr, returncode, False), 1, None, 1
    if where.rendered:
        text += f" (helm counts line {where.line} in what the template rendered)"
    return text, where.line, label_of(resolved.path), max(where.column, 1)


#: The place helm's error starts with, or names in parentheses, which the finding's position
#: then says.
_LEADING_PLACE = re.compile(r"^(?:template: )?[^\s():]+:\d+:\d+:?\s*")
_PLACE_IN = re.compile(r"\s*at \([^\s()]+:\d+(?::\d+)?\)")


def readable(stderr: str, returncode: int | None, placed: bool) -> str:
    """helm's error as one readable line. helm 4 writes ``NAME:L:C`` on a line of its own
    with the error's parts indented below it, and a chart's ``fail`` message may run over
    several lines: each error (a line starting ``Error:``) is joined up with spaces, the
    place left out when the finding is put there, and separate errors joined with "; "."""
    errors: list[str] = []
    for line in stderr.splitlines():
        text = line.strip()
        if not text or line.startswith("Use --debug flag"):
            continue
        if errors and not line.startswith(("Error: ", "error: ")):
            errors[-1] = f"{errors[-1]} {text}"
        else:
            errors.append(_message(text))
    if placed:
        errors = [_PLACE_IN.sub("", _LEADING_PLACE.sub("", e), count=1) for e in errors]
    return "; ".join(e.strip() for e in errors if e.strip()) or f"exit status {returncode}"


def _message(line: str) -> str:
    return line.removeprefix("Error: ").removeprefix("error: ")


# -- helm's output ----------------------------------------------------------------------------

#: helm's header, the first line of every document it prints: `---` then `# Source: NAME`.
_HEADER = re.compile(r"^---\n# Source: (.+?)\s*$", re.MULTILINE)


def headers(text: str) -> list[tuple[int, str]]:
    """helm's ``# Source:`` headers: (line, the name), counting lines once through the text."""
    out: list[tuple[int, str]] = []
    line, pos = 1, 0
    for m in _HEADER.finditer(text):
        line += text.count("\n", pos, m.start(1))
        pos = m.start(1)
        out.append((line, m.group(1)))
    return out


def not_a_template(source: str, refused: Archive | None = None) -> str:
    """Why a finding stays at the chart: the name its document's header gives is no
    template gpulint may read (``refused``: a packaged subchart of the chart that was not
    read, which may be the one)."""
    shown = "".join(c if c.isprintable() else "?" for c in source[:80])
    more = "..." if len(source) > 80 else ""
    why = ""
    if refused is not None:
        why = f"; {label_of(refused.path)} {refused.refused}"
    return (
        f" (shown at the chart: its rendered document names `{shown}{more}`, which is not a "
        f"template file in the chart's folder{why})"
    )
