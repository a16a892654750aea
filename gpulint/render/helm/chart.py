"""A chart rendered with ``helm template``, and findings moved to the template or values line.

Rendering: ``helm template --skip-schema-validation [--namespace=NS]
--api-versions=apiregistration.k8s.io/v1 [--kube-version=V] [--values=FILE]...
[--set=KEY=VALUE]... -- RELEASE CHART`` with the bounds of
:mod:`gpulint.render.tools`. Never ``--dependency-update``: a chart whose
dependencies are not in its ``charts/`` folder fails to render (GL200) and the user vendors
them (``helm dependency build``) when they trust them. Before helm runs, what it would read
is checked with every link resolved (:func:`refused_inputs`): a chart holding a symbolic link
that leaves the repository, through linked folders too, a link loop, a FIFO or a device, or a
values file that is a link out of the repository, a system file (``/dev/stdin``, ``/proc``)
or not a regular file, is not rendered (GL200): ``.Files.Get`` and ``.Values`` would copy
the target, a credential, into the output, and a finding's message would show it.

Mapping: helm's ``---`` and ``# Source: <chart>/templates/x.yaml`` header names each
document's template (:class:`HelmRendered`); the finding's key path is matched in it line by
line (:mod:`gpulint.render.helm.templatetext`), in the document of several it came from
(:mod:`gpulint.render.helm.documents`). When the value was written by ``{{ .Values.x }}`` (or a
``toYaml .Values.x`` block holds it) and a values file sets ``x``, the finding points at the
values line, names the template that uses it, and keeps the template as a related place.
Values are searched as helm merges them, last applied first: ``--set`` (the finding stays
at the template line, naming the flag), ``--values`` files, the parent's ``values.yaml``
under the subchart's name, the chart's. :mod:`gpulint.render.helm.sources` maps the rest:
packaged ``.tgz`` subcharts, ``.Files.Get`` files, helm's errors.
"""

from __future__ import annotations

import bisect
import functools
import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from gpulint import codes
from gpulint.loader.document import Document
from gpulint.model import Finding, Span
from gpulint.render import ChartOptions, RenderOptions
from gpulint.render.helm import (
    duplicatekeys,
    failcalls,
    fieldreads,
    markers,
    run as helmrun,
    templatetext,
)
from gpulint.render.helm.documents import Cut, Resolved, Sections
from gpulint.render.helm.literalitems import literal_item
from gpulint.render.helm.run import INSTALL_HELM, Failure, refused_inputs
from gpulint.render.helm.samelines import same_line
from gpulint.render.helm.sources import headers, not_a_template
from gpulint.render.helm.untraced import guessed_item, item_place, noted, partial, unknown_part
from gpulint.render.helm.valuelines import values_place
from gpulint.render.mapping import (
    Place,
    Rendered,
    at_key,
    label_of,
    load_documents,
    lookup,
    read_text,
)
from gpulint.render.tools import ToolResult, find_tool

if TYPE_CHECKING:
    from gpulint.render.helm.sources import Archive
    from gpulint.util.walk import Listings


def render(
    folder: str,
    options: RenderOptions,
    marks: tuple[str, ...] = (),
    listings: Listings | None = None,
) -> str | Failure:
    """The chart's rendered output, or why there is none (``marks``: values files gpulint
    wrote, passed after the user's: :mod:`gpulint.render.helm.markers`; ``listings``: the
    run's, which answer for the folders its walks listed when the chart's entries are
    checked).

    Every value is passed as ``--flag=value`` and the positionals after ``--``: no value
    can become an option (``--post-renderer``, ``--output-dir``). Schema validation is
    skipped (``--skip-schema-validation``): helm would resolve a ``values.schema.json``'s
    ``$ref`` over HTTP or from any file. A helm older than 3.16, without that flag, renders
    only a chart whose schemas refer to nothing outside themselves.
    """
    from gpulint.render.trees import project_root

    root = project_root(folder)
    helm = find_tool(options.helm, ("helm",), root)
    if helm is None:
        if options.helm:
            return Failure(codes.RENDERER_MISSING, f"--helm {options.helm}: not an executable file")
        return Failure(codes.RENDERER_MISSING, INSTALL_HELM)
    refused = refused_inputs(folder, options, listings)
    if refused is not None:
        return refused
    opts = options.for_chart(folder)
    out = helmrun.template(helm, folder, opts, options.deadline, marks)
    return failed(folder, opts, out) if isinstance(out, ToolResult) else out


def failed(folder: str, opts: ChartOptions, result: ToolResult) -> Failure:
    """helm's error as GL200 where it says (:func:`gpulint.render.helm.failcalls.failure`)."""
    return failcalls.failure(HelmRendered("", folder, "", opts), result)


def marked_render(
    folder: str, options: RenderOptions, listings: Listings | None = None
) -> Callable[[str], str | None]:
    """How :class:`markers.Tracer` renders the chart once more, with a values file of
    markers: the same command with the same bounds and what is left of the run's budget.
    Why a render failed is kept on the callable (``error``): a marker a template refuses
    is named there."""

    def run(marks: str) -> str | None:
        out = render(folder, options, (marks,), listings)
        run.error = out.message if not isinstance(out, str) else ""  # type: ignore[attr-defined]
        return out if isinstance(out, str) else None

    return run


class _Instead(NamedTuple):
    """A note that replaces the template place's own (it names what was traced)."""

    note: str


class HelmRendered(Rendered):
    """A chart's rendered output; :meth:`place` moves a finding to its template or values line.

    The template is the one helm's header names: the ``# Source:`` line right after each
    ``---`` that helm writes. helm splits a template's output at every ``---`` line and writes
    its own header after each, so a ``# Source:`` line a template prints never follows a
    ``---`` and is not read. The header's name is taken only as ``<chart>/templates/...`` or
    ``<chart>/charts/<sub>/.../templates/...`` (chart names as helm prints them: ``name:``
    of Chart.yaml, or the dependency's ``alias``), without empty, ``.`` or ``..`` parts or
    backslashes, naming a regular file whose real path is inside that (sub)chart's folder.
    A ``<sub>`` that is a packaged ``charts/*.tgz`` (by its Chart.yaml's name or an alias)
    names a member of the archive, read from it. Any other name leaves the finding at the
    chart's ``Chart.yaml``, saying so; the named file is never opened.

    Each template is read and indexed once (:class:`templatetext.Template`) and each values file
    loaded once, however many findings its output has.
    """

    command = "helm template"

    def __init__(
        self,
        label: str,
        folder: str,
        text: str,
        options: ChartOptions,
        rerun: Callable[[str], str | None] | None = None,
        listings: Listings | None = None,
    ) -> None:
        super().__init__(label, folder, text)
        self.options = options
        tracer = markers.Tracer(folder, options.values, rerun, listings) if rerun else None
        self._tracer = tracer
        # (line of the `# Source:` header, the template it names)
        self.sources: list[tuple[int, str]] = headers(text)
        self._starts = [line for line, _ in self.sources]
        self._values: dict[str, Document | None] = {}
        self._resolved: dict[str, Resolved | str] = {}
        self._subcharts: dict[str, dict[str, str | None]] = {}
        self._archives: dict[str, dict[str, Archive | None]] = {}
        self._helpers: dict[str, dict[str, tuple[str, int, str]]] = {}
        self._charts: dict[str, dict[str, object]] = {}
        self._sections: Sections | None = None
        self._places: dict[tuple[str, tuple[object, ...], bool, int], Place] = {}
        self._lines_of: dict[str, list[str]] = {}

    def fallback(self) -> str:
        return label_of(os.path.join(self.folder, "Chart.yaml"))

    def template_of(self, line: int) -> Resolved | str | None:
        """The template a rendered line came from, why its header cannot be used (a
        message), or None before the first header."""
        at = bisect.bisect_right(self._starts, line) - 1
        if at < 0:
            return None
        source = self.sources[at][1]
        return self.resolve(source)

    def resolve(self, source: str) -> Resolved | str:
        """The template file a header (or an error) names, or why it is none (a message)."""
        if source not in self._resolved:
            self._resolved[source] = self._resolve(source)
        return self._resolved[source]

    def place(self, finding: Finding) -> Place:
        found = self._placed(finding)
        first = found.span.line == 1 and found.span.column == 1
        if not first or found.note or found.related or found.message is not None:
            return found
        resolved = self.template_of(finding.line)
        if isinstance(resolved, Resolved) and resolved.archive is None:
            same = self._same_text(resolved.real, finding.line)
            if same is not None:
                return Place(found.path, same)
        if found.path == self.fallback():
            why = "helm's output names no template for it"
        else:
            why = "no line of the template was matched to it"
        return found._replace(note=f" (shown at the file's first line: {why})")

    def _same_text(self, template: str, line: int) -> Span | None:
        """The template line the rendered ``line`` is a copy of (:func:`.samelines.same_line`)."""
        if "" not in self._lines_of:  # the output's lines, split once
            self._lines_of[""] = self.text.splitlines()
        if template not in self._lines_of:  # each template read once, however many findings
            self._lines_of[template] = [
                t.rstrip() for t in (read_text(template) or "").splitlines()
            ]
        at = bisect.bisect_right(self._starts, line) - 1
        lo = self._starts[at] if at >= 0 else 1
        hi = self._starts[at + 1] if at + 1 < len(self._starts) else len(self._lines_of[""]) + 1
        return same_line(self._lines_of[""], (lo, hi), self._lines_of[template], line)

    def _placed(self, finding: Finding) -> Place:
        resolved = self.template_of(finding.line)
        if resolved is None:
            return Place(self.fallback(), Span(1, 1, 1, 1))
        doc = self.document(finding.document)
        on_key = at_key(doc, finding)
        if isinstance(resolved, str):
            traced = self._traced(finding, doc, on_key, None, None)
            return (
                traced
                if isinstance(traced, Place)
                else Place(self.fallback(), Span(1, 1, 1, 1), resolved)
            )
        resolved = resolved._replace(part=self._cuts().parts.of(finding.line))
        archived = resolved.archive is not None
        if finding.rule == codes.DUPLICATE_KEY:  # at the repeat's template line, if written
            t, shown = self._cut(resolved).template, label_of(resolved.path)
            files = [(f, p, self.values_doc(f)) for f, p in self.values_files(resolved)]
            dup = duplicatekeys.duplicate_place(
                self.text, self._starts, finding, t, shown, files, doc
            )
            if dup is not None:
                return dup
        key = (resolved.real, finding.doc_path, on_key, finding.document)
        found = self._places.get(key)
        if found is None:
            present, value = lookup(doc.data, finding.doc_path) if doc else (False, None)
            rendered = (value,) if present else ()
            found = self._places[key] = self._place(resolved, finding.doc_path, on_key, rendered)
        cut = self._cut(resolved)
        if found.related and cut.known:  # on a values line already
            return found
        match = templatetext.find(cut.template, finding.doc_path)
        guess = match.guessed >= 0
        if guess and doc is not None and cut.known and not archived:
            literal = self._literal(resolved, cut.template, match, finding, doc)
            if literal is not None:
                return literal
        at = None if found.related or guess else found  # not a line that uses the value
        traced = self._traced(finding, doc, on_key, resolved if cut.known else None, at)
        if isinstance(traced, _Instead):  # a values list found, shared: why, in full
            found, traced = found._replace(note=traced.note), None
        if isinstance(traced, str):  # a field the template reads, at the object: why
            found, traced = found._replace(note=found.note + traced), None
        return traced or unknown_part(noted(found, cut.template, on_key, archived), cut.known)

    def _literal(
        self, resolved: Resolved, t: templatetext.Template, match: Any, finding: Finding, doc: Any
    ) -> Place | None:
        """An item template logic writes beside, placed by its text (:mod:`.literalitems`)."""
        files = [(p, self.values_doc(f)) for f, p in self.values_files(resolved)]

        def values(path: tuple[str, ...]) -> list[Any]:
            found = [lookup(d.data, (*p, *path)) for p, d in files if d is not None]
            return [value for present, value in found if present]

        span = literal_item(t, match, finding.doc_path, doc.data, self.options.set, values)
        return Place(label_of(resolved.path), span) if span is not None else None

    def _traced(
        self,
        finding: Finding,
        doc: Document | None,
        on_key: bool,
        resolved: Resolved | None,
        template: Place | None,
    ) -> Place | _Instead | str | None:
        """The values line the marked render traces the finding's value to, or for a field
        the object lacks, the values key its template reads for it (:mod:`.markers`),
        or why it stays at the template (a note, :func:`.fieldreads.missing_place`)."""
        if doc is None:
            return None
        if resolved is not None:
            missing = fieldreads.missing_field(finding.rule, doc.data, finding.doc_path)
            if missing is not None:
                t, tracer, ours = self._cut(resolved).template, self._tracer, resolved.chain[0][1]
                fs = [(f, p, self.values_doc(f)) for f, p in self.values_files(resolved)]
                at = (self.text, self.documents, doc, missing[0], ours)
                entry = functools.partial(tracer.entry, *at) if tracer else None
                library = self._library(resolved)
                found = fieldreads.missing_place(
                    t, resolved.path, self.folder, fs, *missing, entry, library=library
                )
                if isinstance(found, Place) or tracer is None:
                    return found
                return self._listed(tracer, doc, resolved, *missing) or found
        if self._tracer is None:
            return None
        path = finding.doc_path
        depth = (
            (lambda: templatetext.find(self._cut(resolved).template, path).depth)
            if resolved
            else None
        )
        got = self._tracer.trace(self.text, self.documents, doc, path, on_key, depth)
        values_doc = self.values_doc(got[0].file) if got is not None else None
        if got is None or values_doc is None:
            return None
        return markers.traced_place(got[0], values_doc, template, self.folder, got[1])

    def _listed(
        self,
        tracer: markers.Tracer,
        doc: Document,
        resolved: Resolved,
        obj: tuple[Any, ...],
        field: str,
        written: Any,
    ) -> Place | _Instead | None:
        """A list field the object lacks (or has empty) that no reading of the template
        traced, put on the values list a render of its own finds it written from
        (:meth:`.markers.Tracer.list_origin`); when other objects render that list too,
        why it stays at the template."""
        if written is not fieldreads.ABSENT and written != []:
            return None
        listed = tracer.list_origin(self.text, self.documents, doc, obj, field)
        values_doc = self.values_doc(listed[0].file) if listed is not None else None
        if listed is None or values_doc is None:
            return None
        used = os.path.relpath(label_of(resolved.path), label_of(self.folder))
        placed = markers.list_place(listed[0], values_doc, field, listed[1], used)
        return placed if isinstance(placed, Place) else _Instead(placed)

    def _cuts(self) -> Sections:
        if self._sections is None:
            self._sections = Sections(self.sources, self.documents, self.folder, self.options)
        return self._sections

    def _cut(
        self, resolved: Resolved
    ) -> Cut:  # the finding's document (:mod:`gpulint.render.helm.documents`)
        return self._cuts().cut(resolved)

    def _place(
        self,
        resolved: Resolved,
        path: tuple[object, ...],
        on_key: bool,
        rendered: tuple[object, ...] = (),
    ) -> Place:
        found = self._template_place(resolved, path, on_key, rendered)
        if resolved.archive is None or found.path != label_of(resolved.archive):
            return found
        from gpulint.render.helm.sources import in_archive

        return in_archive(found, resolved)

    def _template_place(
        self,
        resolved: Resolved,
        path: tuple[object, ...],
        on_key: bool,
        rendered: tuple[object, ...],
    ) -> Place:
        t = self._cut(resolved).template
        match = templatetext.find(t, path)
        shown = label_of(resolved.path)
        if match.guessed >= 0:
            return guessed_item(Place(shown, Span(1, 1, 1, 1)), t, match)
        if match.lines and match.depth == len(path):
            line = match.lines[-1]
            span = _line_span(t, line, on_key)
            ref = templatetext.values_ref(line.value)
            if ref is not None and not on_key:
                found = values_place(
                    self, resolved, ref, (), shown, line.number, span, False, rendered
                )
                if found is not None:
                    return found
            return item_place(Place(shown, span), t, match, path, rendered)
        span = _line_span(t, match.lines[-1], True) if match.lines else Span(1, 1, 1, 1)
        fallback = Place(shown, span)
        ref = templatetext.inserted_values(t, match)
        if ref is not None:
            rest = path[_matched_path_length(path, match) :]
            found = values_place(
                self, resolved, ref, rest, shown, _line_of(match), fallback.span, on_key, rendered
            )
            if found is not None:
                return found
        if rendered and resolved.archive is None:
            from gpulint.render.helm.sources import file_place

            found = file_place(resolved, self.folder, t, match, path, on_key, rendered[0])
            if found is not None:
                return found
        return partial(fallback, match, path)

    # -- the template a header names -------------------------------------------------------

    def _resolve(self, source: str) -> Resolved | str:
        """The template file ``source`` (a header's name) is, or why it is none."""
        parts = source.split("/")
        bad = "\\" in source or any(p in ("", ".", "..") for p in parts)
        if bad or len(parts) < 3 or parts[0] != self._name(self.folder):
            return not_a_template(source)
        folder, prefix = self.folder, cast("tuple[str, ...]", ())
        chain = [(folder, prefix)]
        i = 1
        while parts[i] == "charts" and i + 3 < len(parts):
            sub = self._subchart(folder, parts[i + 1])
            if sub is None:
                archive = self._archive(folder, parts[i + 1])
                if archive is None or parts[i + 2] != "templates":
                    return not_a_template(source, self._archive(folder, ""))
                member = "/".join((archive.top, *parts[i + 2 :]))
                if member not in archive.members:
                    return not_a_template(source)
                ours = (*prefix, parts[i + 1])
                keys = tuple((f, ours[len(p) :]) for f, p in (*chain, (archive.path, ours)))
                return Resolved(archive.path, member, keys, archive.path, archive.members[member])
            folder, prefix = sub, (*prefix, parts[i + 1])
            chain.append((folder, prefix))
            i += 2
        if parts[i] != "templates" or i + 1 >= len(parts):
            return not_a_template(source)
        path = os.path.join(folder, *parts[i:])
        root = os.path.realpath(folder)
        try:
            real = os.path.realpath(path)
            regular = stat.S_ISREG(os.stat(real).st_mode)
        except (OSError, ValueError):  # ValueError: a NUL in the name
            real, regular = path, False
        if not regular or not real.startswith(root.rstrip(os.sep) + os.sep):
            return not_a_template(source)
        ours = prefix
        return Resolved(path, real, tuple((f, ours[len(p) :]) for f, p in chain))

    def _library(self, resolved: Resolved) -> dict[str, tuple[str, int, str]] | None:
        """The helpers of the packaged subchart a template is a member of (and of the
        library charts packaged in it), read once per archive."""
        if resolved.archive is None:
            return None
        if resolved.archive not in self._helpers:
            found = next(
                (
                    a
                    for by_name in self._archives.values()
                    for a in by_name.values()
                    if a is not None and a.path == resolved.archive
                ),
                None,
            )
            self._helpers[resolved.archive] = (
                fieldreads.archive_helpers(found.path, found.members) if found else {}
            )
        return self._helpers[resolved.archive]

    def _archive(self, folder: str, name: str) -> Archive | None:
        """The packaged subchart in ``folder``/charts that helm prints as ``name``."""
        from gpulint.render.helm.sources import archives

        if folder not in self._archives:
            deps = self._chart_yaml(folder).get("dependencies")
            self._archives[folder] = archives(folder, deps, self.folder)
        return self._archives[folder].get(name)

    def _name(self, folder: str) -> str | None:
        """The chart's ``name:`` in its Chart.yaml (what helm prints)."""
        data = self._chart_yaml(folder)
        name = data.get("name")
        return name if isinstance(name, str) else None

    def _chart_yaml(self, folder: str) -> dict[str, object]:
        """A chart folder's Chart.yaml, read once."""
        if folder not in self._charts:
            text = read_text(os.path.join(folder, "Chart.yaml"), 1 << 20)
            docs = load_documents(text) if text is not None else []
            data = docs[0].data if docs else None
            self._charts[folder] = data if isinstance(data, dict) else {}
        return self._charts[folder]

    def _subchart(self, folder: str, name: str) -> str | None:
        """The folder under ``folder``/charts of the subchart helm prints as ``name``."""
        if folder not in self._subcharts:
            from gpulint.render.helm.helmignore import subchart_entries

            by_name: dict[str, str | None] = {}
            charts = os.path.join(folder, "charts")
            for entry in subchart_entries(folder, self.folder):  # what .helmignore leaves
                sub = os.path.join(charts, entry)
                if not os.path.isdir(sub):
                    continue  # a packaged subchart: its templates are not files here
                own = self._name(sub)
                if own is not None:  # two folders of one name: neither is known to be it
                    by_name[own] = None if own in by_name else sub
            deps = self._chart_yaml(folder).get("dependencies")
            for dep in deps if isinstance(deps, list) else []:
                if isinstance(dep, dict):
                    alias, dep_name = dep.get("alias"), dep.get("name")
                    if isinstance(alias, str) and isinstance(dep_name, str):
                        by_name.setdefault(alias, by_name.get(dep_name))
            self._subcharts[folder] = by_name
        return self._subcharts[folder].get(name)

    # -- values files ------------------------------------------------------------------

    def values_doc(self, path: str) -> Document | None:
        if path not in self._values:
            text = read_text(path)
            docs = load_documents(text) if text is not None else []
            self._values[path] = docs[0] if docs else None
        return self._values[path]

    def values_files(self, resolved: Resolved) -> list[tuple[str, tuple[str, ...]]]:
        """Values files that can set a template's values, the one applied last first, each
        with the prefix its keys are under (a subchart's name in its parents' files)."""
        ours = resolved.chain[0][1]
        out: list[tuple[str, tuple[str, ...]]] = [
            (os.path.abspath(v), ours) for v in reversed(self.options.values)
        ]
        for folder, prefix in resolved.chain:  # a parent's values override its subchart's
            out.append((os.path.join(folder, "values.yaml"), prefix))
        return out


def _matched_path_length(path: tuple[object, ...], match: templatetext.Match) -> int:
    return match.depth


def _line_of(match: templatetext.Match) -> int:
    return match.lines[-1].number if match.lines else 1


def _line_span(template: templatetext.Template, line: templatetext.Line, on_key: bool) -> Span:
    raw = template.raw[line.number - 1]
    if on_key or not line.value.strip():
        start = line.key_column
        key_text = raw[start:].split(":", 1)[0]
        return Span(line.number, start + 1, line.number, start + 1 + len(key_text.rstrip()))
    value = line.value.strip()
    at = raw.rfind(value)
    return Span(line.number, at + 1, line.number, at + 1 + len(value))
