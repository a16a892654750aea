"""A Kustomize root built with ``kubectl kustomize`` (or ``kustomize build``), and findings
moved to the patch or base file the field came from.

Building: ``kubectl kustomize DIR`` with kustomize's defaults, which keep plugins off (exec
and container functions need ``--enable-alpha-plugins``/``--enable-exec``, Helm inflation
``--enable-helm``: none is passed) and the load restrictor on (files outside the root's
folder tree are refused). Before building, the kustomizations it reads are checked: a
resource that is not a local path (a remote base: kustomize would run ``git`` or fetch a
URL), a plugin field, or a path that leaves the repository is GL200 and nothing is built.
The kustomization files are read as kustomize reads them (field names ignoring case, see
:mod:`gpulint.render.trees`), and every field that holds a path is checked: no URL or git
reference anywhere (kustomize fetches them from ``configurations``, ``openapi.path``, patches
and generator files too), no key that is no kustomize field.

Mapping (:mod:`gpulint.render.kustomize.origins`): the rendered object is followed back through the
build exactly (its kind and final name, after renames, ``namePrefix``/``nameSuffix``), and a
finding goes where its value is last written, when that writer wrote the rendered value: a
resource file, a strategic-merge patch (a file or inline), an operation of a JSON6902 patch
(a file or inline; the line inside the kustomization for an inline one). Otherwise it goes to
the root's kustomization entry that brings the object in (the kustomization file itself when
the object is not found) and the message says it is a fallback.
"""

from __future__ import annotations

import os
import re
from typing import Any, NamedTuple

from gpulint import codes
from gpulint.model import Finding, Span
from gpulint.render import RenderOptions
from gpulint.render.kustomize.files import PLUGIN_FIELDS, kustomization_file, read_folder
from gpulint.render.kustomize.origins import Builds, written
from gpulint.render.kustomize.unmatched import unmatched_patch
from gpulint.render.mapping import Place, Rendered, at_key, label_of
from gpulint.render.tools import BUDGET_SPENT, find_tool, run_tool, time_left
from gpulint.render.trees import Trees, inside, project_root

INSTALL_KUSTOMIZE = (
    "kubectl was not found: install kubectl (https://kubernetes.io/docs/tasks/tools/) or "
    "kustomize, or pass --kustomize PATH"
)


class Failure(NamedTuple):
    """Why a root was not built: ``code`` GL200 (it failed) or GL202 (no program), and the
    file and line that say why (``path`` None: the root's kustomization file)."""

    code: str
    message: str
    line: int = 1
    path: str | None = None


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")  # http:, ssh:, file:, git:: ...
_USER = re.compile(r"[A-Za-z][A-Za-z0-9-]*@")  # git@host:org/repo (kustomize's extractUsername)


def remote_reference(text: str) -> bool:
    """Whether kustomize could take ``text`` for something to fetch rather than a local path:
    a URL (``https://``, ``//host``, any ``scheme:``), a git repository as kustomize's
    api/internal/git/repospec.go reads one (``git@host:org/repo``, ``github.com/org/repo``,
    ``...?ref=v1``). kustomize tries a git URL before a local folder of the same name, so
    these are refused even when such a folder exists."""
    t = text.strip()
    return (
        "://" in t
        or "?" in t
        or t.startswith("//")
        or t.lower().startswith("github.com")
        or _SCHEME.match(t) is not None
        or _USER.match(t) is not None
    )


def _check(folder: str, trees: Trees) -> Failure | None:
    """Why the root must not be built, if it must not: a kustomization it reads that could
    not be read safely or has a key that is no kustomize field (kustomize folds case, so
    ``Resources:`` is ``resources``), a plugin field, a remote reference (URL or git) in any
    field that holds paths, or a path that is missing, leaves the repository or is not a
    regular file (a folder, for resources, bases and components)."""
    root = project_root(folder)
    top = os.path.abspath(folder)
    for k in trees.builds_on(top):
        where = label_of(k.file)

        def refused(message: str, line: int, where: str = where, file: str = k.file) -> Failure:
            return Failure(codes.RENDER_FAILED, f"not built: {where}:{line}: {message}", line, file)

        if k.problem is not None:
            return refused(k.problem, k.line)
        for field in PLUGIN_FIELDS:
            if field in k.data:
                return Failure(
                    codes.RENDER_FAILED,
                    f"not built: {where} uses `{field}`, which runs plugins or fetches "
                    "charts; build it yourself and lint the output (`... | gpulint check -`)",
                    _field_line(k.file, field),
                    k.file,
                )
        for ref in k.refs:
            if ref.field == "inline":
                continue  # a patch written in the kustomization: no path to check
            entry = f"{ref.field} entry {ref.text!r}"
            if remote_reference(ref.text):
                return refused(
                    f"{entry} is a URL or git repository: gpulint never fetches remote bases",
                    ref.line,
                )
            if not os.path.lexists(ref.path):  # a stale entry, or a file a script generates
                return refused(f"{entry} is not a file or folder in the repository", ref.line)
            real = os.path.realpath(ref.path)
            if not inside(real, root):
                return refused(f"{entry} is outside the repository", ref.line)
            folders = ref.field in _BASES
            if not (os.path.isfile(real) or (folders and os.path.isdir(real))):
                return refused(f"{entry} is not a regular file", ref.line)
    return None


def render(folder: str, options: RenderOptions, trees: Trees) -> str | Failure:
    """The root's built output, or why there is none."""
    tool = find_tool(options.kustomize, ("kubectl", "kustomize"), project_root(folder))
    if tool is None:
        if options.kustomize:
            return Failure(
                codes.RENDERER_MISSING, f"--kustomize {options.kustomize}: not an executable file"
            )
        return Failure(codes.RENDERER_MISSING, INSTALL_KUSTOMIZE)
    refused = _check(folder, trees)
    if refused is not None:
        return refused
    built = _as_deployed(tool, folder, options, trees)
    if isinstance(built, Failure) and built.code == codes.RENDER_FAILED:
        return _with_roots(built, folder, tool, options, trees)
    return built


def same_failure(message: str) -> str:
    """A failure's message without the roots it names (``, building a/...``): a base's
    failure built alone is the one its roots report."""
    return _BUILDING.sub(")", message, count=1)


_BUILDING = re.compile(r", building [^)]*\)")

#: Other roots built, at most, to name those a failing base or component breaks.
MAX_OTHER_ROOTS = 8
#: Roots named in the message, at most (the others are counted).
MAX_NAMED_ROOTS = 4


def _with_roots(
    failure: Failure, folder: str, tool: str, options: RenderOptions, trees: Trees
) -> Failure:
    """A failure in a base or component (not the root's own kustomization) names the roots
    of the repository that read that file and fail there the same way, sorted, so each root
    reports the same finding (and a run shows it once): ``building a/kustomization.yaml,
    b/kustomization.yaml``; past :data:`MAX_NAMED_ROOTS` the rest are counted. The roots
    are those of the whole repository, whatever the run was given. A file the load
    restrictor refuses is refused for every root that reads it, except those Flux builds
    (:func:`_as_deployed`): nothing is built to know it. Any other failure depends on the
    root (a patch's target): the first :data:`MAX_OTHER_ROOTS` other roots are built, once
    a run (kept in ``trees``), and those that fail the same way are named."""
    own = kustomization_file(folder)
    if own is None or failure.path is None or failure.path == own:
        return failure
    clause = f", building {label_of(own)})"
    if clause not in failure.message:
        return failure
    top = os.path.abspath(folder)
    readers = [r for r in trees.whole(project_root(folder)).readers(failure.path) if r != top]
    names = [label_of(own)]
    if restricted(failure):
        for other in readers:
            file = kustomization_file(other)
            if file is not None and not flux_builds(other, trees):
                names.append(label_of(file))
    else:
        for other in readers[:MAX_OTHER_ROOTS]:
            if other not in trees.failures:
                refused = _check(other, trees)
                out = refused or _as_deployed(tool, other, options, trees)
                trees.failures[other] = out if isinstance(out, Failure) else None
            theirs, file = trees.failures[other], kustomization_file(other)
            if theirs is None or file is None:
                continue
            if (theirs.path, theirs.line) != (failure.path, failure.line):
                continue
            if theirs.message.replace(f", building {label_of(file)})", clause) == failure.message:
                names.append(label_of(file))
    if len(names) == 1:
        return failure
    names.sort()
    shown = ", ".join(names[:MAX_NAMED_ROOTS])
    if len(names) > MAX_NAMED_ROOTS:
        shown += f" and {len(names) - MAX_NAMED_ROOTS} other roots"
    joined = f", building {shown})"
    return failure._replace(message=failure.message.replace(clause, joined, 1))


#: kustomize's load restrictor refusing a file outside the folder of the kustomization.
_RESTRICTED = re.compile(r"security; file '[^']*' is not in or below '[^']*'")


def _as_deployed(tool: str, folder: str, options: RenderOptions, trees: Trees) -> str | Failure:
    """The root built as what deploys it builds it: a root a Flux ``Kustomization`` of the
    repository builds (:mod:`gpulint.render.kustomize.flux`) that fails only in kustomize's
    load restrictor is built again with the restrictor off, as Flux's kustomize-controller
    builds it (``LoadRestrictionsNone``). Every path its kustomizations name was checked to
    stay inside the repository (:func:`_check`), as Flux keeps a build inside its source."""
    built = build(tool, folder, options.deadline)
    if not restricted(built) or not isinstance(built, Failure):
        return built
    if flux_builds(folder, trees):
        return build(tool, folder, options.deadline, unrestricted=True)
    return built._replace(message=built.message + NOT_FLUX)


#: Said of a root that fails in the load restrictor and that no Flux Kustomization builds.
NOT_FLUX = (
    " (kustomize's load restrictor: a kustomization reads files only in or below its own "
    "folder, as kubectl kustomize and Argo CD build by default; Flux builds with it off, "
    "and no Flux Kustomization of this repository names this root in its spec.path)"
)


def restricted(built: str | Failure) -> bool:
    """Whether a build failed in kustomize's load restrictor."""
    return isinstance(built, Failure) and _RESTRICTED.search(built.message) is not None


def flux_builds(folder: str, trees: Trees) -> bool:
    """Whether a Flux ``Kustomization`` of the repository builds the root in ``folder``."""
    from gpulint.render.kustomize.flux import built_by_flux

    return built_by_flux(folder, trees.flux_paths(project_root(folder)))


def build(
    tool: str, folder: str, deadline: float | None, unrestricted: bool = False
) -> str | Failure:
    """``kubectl kustomize`` (or ``kustomize build``) of a root once what it reads has been
    checked (:func:`render`; :mod:`gpulint.render.fixcopy` builds a copy of a checked one);
    ``unrestricted``: with the load restrictor off (a root Flux builds)."""
    name = os.path.basename(tool)
    target = os.path.abspath(folder)
    argv = [tool, "kustomize", target] if name.startswith("kubectl") else [tool, "build", target]
    if unrestricted:
        argv[2:2] = ["--load-restrictor", "LoadRestrictionsNone"]
    timeout = time_left(deadline)
    if timeout is None:
        return Failure(codes.RENDER_FAILED, BUDGET_SPENT)
    result = run_tool(argv, cwd=target, timeout=timeout)
    what = "kubectl kustomize" if name.startswith("kubectl") else "kustomize build"
    if result.reason is not None:
        return Failure(codes.RENDER_FAILED, f"{what} {result.reason}")
    if result.returncode != 0:
        return failed(what, result.stderr, result.returncode, target)
    return result.stdout


#: kubectl logs through klog: `E1201 00:47:47.778079   20428 run.go:72] "command failed" err="..."`.
_KLOG = re.compile(r'^[EWIF]\d{4} [\d:.]+\s+\d+ \S+\] (?:"command failed" err=)?"?(.*?)"?$')
#: The fields whose entries may be kustomizations (or, to kustomize, remote ones).
_BASES = ("resources", "bases", "components")
#: kustomize's wrapping of an error in a base: the innermost one is the error.
_RECURSED = re.compile(r"recursed (?:accumulation|merging) of path '([^']+)': ")
_FROM = re.compile(
    r"^(?:accumulating resources: )?(?:accumulating|merging) resources from '([^']+)': "
)
#: A file entry's error, then the error of trying the same entry as a folder.
_BOTH = re.compile(
    r"^accumulating resources: accumulation err='(.*)': must build at directory: .*$"
)
#: A folder entry's error: trying it as a file says it must be one, then the folder's own
#: error (a cycle, a kustomization that does not load) follows.
_FOLDER = re.compile(
    r"^accumulating resources: accumulation err='accumulating resources from '([^']+)': "
    r"'[^']*' must resolve to a file': (.*)$",
    re.DOTALL,
)
#: kustomize's cycle check: a base that holds the folder of the kustomization naming it.
_CYCLE = re.compile(r"^cycle detected: candidate root '([^']+)' contains visited root '([^']+)'$")
_INVALID = re.compile(r"^invalid Kustomization: yaml: line (\d+): (.*)$")
_YAML = re.compile(r"^(?:MalformedYAMLError: )?yaml: line (\d+): (.*?)(?: in File: (.+))?$")


def _error_lines(stderr: str) -> list[str]:
    """kustomize's error lines, its deprecation warnings and klog's framing left out."""
    lines = []
    for raw in stderr.splitlines():
        said = raw.strip()
        if not said or said.startswith("# Warning:"):
            continue
        m = _KLOG.match(said)
        if m:  # klog quotes the error: its lines are written \n
            said = m.group(1).replace('\\"', '"').replace("\\n", "\n").replace("\\t", " ")
        for part in said.splitlines():
            if part.strip():
                lines.append(part.strip().removeprefix("Error: ").removeprefix("error: "))
    return lines


def _innermost(first: str, folder: str) -> tuple[str, str]:
    """The folder of the base whose own error ``first`` wraps (``folder`` when none), and
    that error."""
    text = re.sub(r'\\+"', '"', first)  # quotes klog escaped twice
    if text.endswith('"') and text.count('"') % 2:
        text = text[:-1]  # klog's closing quote
    base = folder
    inner = list(_RECURSED.finditer(text))
    if inner:
        base = inner[-1].group(1)
        text = text[inner[-1].end() :]
        if text.endswith('"') and text.count('"') % 2:
            text = text[:-1]  # the quote kustomize opened before "recursed"
    return base, text


def failed(what: str, stderr: str, returncode: int | None, folder: str) -> Failure:
    """kustomize's error as one readable message at the file and line it names: its
    deprecation warnings left out, an error in a base unwrapped to the base's own error
    (kustomize wraps it once per level, in one line), a YAML error at its file's line."""
    lines = _error_lines(stderr)
    if not lines:
        return Failure(codes.RENDER_FAILED, f"{what} failed: exit status {returncode}")
    base, text = _innermost(lines[0], folder)
    file, line = None, 1
    named = kustomization_file(base) if os.path.isabs(base) else None
    m = _BOTH.match(text)
    if m:
        text = m.group(1)
    m = _FOLDER.match(text)
    if m:  # the folder's own error, at the entry that names the folder
        text = f"accumulating resources from '{m.group(1)}': {_cycle(m.group(2))}"
    m = _INVALID.match(text)
    if m and named is not None:
        file, line, text = named, int(m.group(1)), f"invalid kustomization: {m.group(2)}"
    m = _FROM.match(text)
    entry = ""
    if m:
        entry, text = f"{m.group(1)}: ", text[m.end() :]
        if named is not None:
            file, line = named, _entry_line(named, m.group(1))
    m = _YAML.match(text)
    where = os.path.join(base, m.group(3)) if m and m.group(3) else None
    if m and where is not None and os.path.isfile(where):
        file, line, entry = where, _syntax_line(where, int(m.group(1))), ""
        text = f"YAML error: {m.group(2)}"
    text = entry + text
    held = _placeholder(text, base if os.path.isabs(base) else folder)
    if file is None and held is not None:
        file, line, token = held
        text += (
            f" ({token} is a placeholder, not YAML: kustomize cannot read the file until it is "
            "filled in)"
        )
    unmatched = unmatched_patch(text, base if os.path.isabs(base) else folder)
    if file is None and unmatched is not None:
        file, line, why = unmatched
        text += why
    if file is None and named is not None and base != folder:
        file = named
    pointer = _POINTER.search(text)
    if file is not None and line == 1 and pointer is not None:
        line = _text_line(file, pointer.group(1)) or line
    rest = "".join(f"\n  {extra}" for extra in lines[1:5])
    own = kustomization_file(folder)
    building = f", building {label_of(own)}" if own is not None and file != own else ""
    at = f" ({label_of(file)}:{line}{building})" if file is not None else ""
    if file is None:
        text += UNPLACED
    said = _QUOTED_PATH.sub(lambda q: _shown_path(q, folder), f"{text}{rest}")
    return Failure(codes.RENDER_FAILED, f"{what} failed{at}: {said}", line, file)


#: An absolute path kustomize quotes in its message.
_QUOTED_PATH = re.compile(r"'(/[^'\n]{1,4096})'")


def _shown_path(quoted: re.Match[str], folder: str) -> str:
    """A path kustomize quotes, as findings name files when it is in the repository."""
    path = quoted.group(1)
    if not inside(os.path.realpath(path), project_root(folder)):
        return quoted.group(0)
    return f"'{label_of(path)}'"


#: Said of a build failure shown at the root kustomization's first line.
UNPLACED = (
    " (shown at the kustomization's first line: kustomize's message names no line of the "
    "tree that gpulint could find)"
)


def _cycle(text: str) -> str:
    """kustomize's cycle error said with the folders as labels: the entry names a folder
    that holds the kustomization naming it (``- ../../`` in ``overlays/gpu``), or one
    already being built (kustomizations that name each other)."""
    m = _CYCLE.match(text)
    if m is None:
        return text
    named, visited = label_of(m.group(1)), label_of(m.group(2))
    if named == visited:
        return (
            f"cycle detected: {named} is already being built (kustomizations that name "
            "each other); remove one of the entries of the loop"
        )
    return (
        f"cycle detected: the folder it names ({named}) holds {visited}, the "
        "kustomization's own folder; a base cannot contain the overlay built on it (name "
        "the base's files, or move them to a folder of their own)"
    )


#: go-yaml's error for ``{{NAME}}`` where a value or key goes: a map used as a key.
_MAP_KEY = re.compile(r'invalid map key: map\[[^\]]*\][^"]{0,40}\{"([^"\\]{1,200})"')


def _placeholder(text: str, folder: str) -> tuple[str, int, str] | None:
    """The file and line of the ``{{NAME}}`` placeholder that go-yaml's "invalid map key"
    error names, in the first file the kustomization in ``folder`` names that holds it."""
    m = _MAP_KEY.search(text)
    k = read_folder(folder) if m else None
    if m is None or k is None or k.problem is not None:
        return None
    token = re.compile(r"\{\{\s*" + re.escape(m.group(1)) + r"\s*\}\}")
    for ref in k.refs:
        if ref.field != "resources" or not os.path.isfile(ref.path):
            continue
        from gpulint.render.mapping import read_text

        lines = (read_text(ref.path) or "").splitlines()
        for number, raw in enumerate(lines, 1):
            hit = token.search(raw)
            if hit:
                return ref.path, number, hit.group(0)
    return None


#: A JSON patch operation's path kustomize could not apply (quoted by some versions).
_POINTER = re.compile(r'(?:missing path|path): "?(/[^"\s:]{1,500})')


def _text_line(file: str, text: str) -> int | None:
    """The one line of ``file`` that holds ``text`` (a patch's ``path:``), if one does."""
    from gpulint.render.mapping import read_text

    hits = [n for n, raw in enumerate((read_text(file) or "").splitlines(), 1) if text in raw]
    return hits[0] if len(hits) == 1 else None


def _syntax_line(file: str, named: int) -> int:
    """The line of the first YAML error in ``file`` as gpulint reads it (go-yaml names the
    line before it for some errors), else the line kustomize names."""
    from gpulint.loader.stream import load_text
    from gpulint.render.mapping import read_text

    text = read_text(file)
    try:
        problems = load_text(text).problems if text is not None else []
    except Exception:  # the line kustomize names, then
        return named
    stopped = (codes.SYNTAX_ERROR, codes.TEMPLATE_NOT_RENDERED)
    syntax = [p.span.line for p in problems if p.code in stopped]
    return min(syntax) if syntax else named


def _entry_line(file: str, entry: str) -> int:
    """The line of ``file`` that names ``entry`` (1 when none does)."""
    try:
        with open(file, encoding="utf-8", errors="replace") as fh:
            for number, text in enumerate(fh, 1):
                if re.search(rf"(^|[\s\-'\"]){re.escape(entry)}(['\"]|\s*(#.*)?$)", text):
                    return number
    except OSError:
        pass
    return 1


def _field_line(file: str, field: str) -> int:
    """The line of ``file`` where the top-level ``field`` is written (1 when not found)."""
    try:
        with open(file, encoding="utf-8", errors="replace") as fh:
            for number, text in enumerate(fh, 1):
                if text.lower().startswith(field.lower() + ":"):
                    return number
    except OSError:
        pass
    return 1


def parts(folder: str, trees: Trees) -> list[str]:
    """The kustomizations a root builds on through ``resources`` and ``bases`` (not its
    components, which build nothing alone): built on their own when the root fails."""
    top = os.path.abspath(folder)
    k = trees.kustomizations.get(top) or read_folder(top)
    if k is None or k.problem is not None:
        return []
    out = []
    for ref in k.refs:
        if ref.field in ("resources", "bases") and os.path.isdir(ref.path):
            inner = trees.kustomizations.get(ref.path) or read_folder(ref.path)
            if inner is not None and inner.data.get("kind") != "Component":
                out.append(ref.path)
    return out


class KustomizeRendered(Rendered):
    command = "kubectl kustomize"

    def __init__(self, label: str, folder: str, text: str, trees: Trees) -> None:
        super().__init__(label, folder, text)
        self.trees = trees
        self.builds = Builds(trees.kustomizations)
        self._memo: dict[Any, Any] = {}  # the paths replacements write (origins.written)

    def fallback(self) -> str:
        file = kustomization_file(self.folder)
        return label_of(file or self.folder)

    def place(self, finding: Finding) -> Place:
        doc = self.document(finding.document)
        ref = finding.object
        if doc is None or ref is None:
            return Place(self.fallback(), Span(1, 1, 1, 1))
        found = self.builds.find(os.path.abspath(self.folder), ref.kind, ref.name, ref.namespace)
        if found is None:
            return Place(self.fallback(), Span(1, 1, 1, 1), UNKNOWN_OBJECT)
        where = written(found, doc.data, finding.doc_path, at_key(doc, finding), self._memo)
        if where is None:
            file, line = found.entry
            return Place(label_of(file), Span(line, 1, line, 1), UNKNOWN_WRITER)
        return Place(label_of(where.file), where.span, where.note)


#: What a finding placed at a fallback says.
UNKNOWN_OBJECT = (
    " (shown at the kustomization file: gpulint could not tell which file defines this object)"
)
UNKNOWN_WRITER = (
    " (shown at the kustomization entry that brings this object in: gpulint could not tell "
    "which file writes this value)"
)
