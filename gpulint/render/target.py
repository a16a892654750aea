"""A Helm chart or Kustomize root linted: rendered, linted as one file, mapped back.

The runner (:mod:`gpulint.lint.runner`) hands a target with ``Target.render`` here, with
how the run renders and what of linting this needs (:class:`FileLinter`, which
:class:`gpulint.lint.engine.Linter` is); the rendering itself is :mod:`gpulint.render`'s.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from gpulint import codes
from gpulint.loader.document import Document, Problem
from gpulint.loader.target import collector_paused
from gpulint.model import Finding, LintedObject, Span

if TYPE_CHECKING:
    from gpulint.fix.loop import FileFix
    from gpulint.k8s.devices import Registry
    from gpulint.render import RenderOptions
    from gpulint.render.kustomize.build import Failure
    from gpulint.render.mapping import Fixes, Rendered
    from gpulint.render.trees import Trees
    from gpulint.util.discover import Target


class FileLinter(Protocol):
    """What rendering needs of linting: a text linted as one file, a problem outside the
    YAML as its finding, and the ``per-file-ignores`` of the file a finding is mapped to.
    Passed down by the caller (the runner, the language server), never imported."""

    @property
    def registry(self) -> Registry: ...

    @property
    def as_written_codes(self) -> frozenset[str]: ...

    def lint_bytes(
        self,
        label: str,
        raw: bytes,
        seen: list[LintedObject] | None = None,
        *,
        as_written: bool = False,
    ) -> list[Finding]: ...

    def problem(self, label: str, problem: Problem) -> list[Finding]: ...

    def file_ignores(self, label: str, findings: list[Finding]) -> list[Finding]: ...


#: GPU026's code: a chart says whether its old API versions are what it means.
REMOVED_API_VERSION = "GPU026"


#: How a run renders: its options, and the trees discover found the charts and roots in.
Rendering = tuple["RenderOptions", "Trees"]


NOT_RENDERED = (
    "a Helm chart: its templates are not YAML until rendered, and only what they write as "
    "plain text was checked; pass --render to lint what it renders (runs helm template)"
)


#: Files at a chart's top that are not templates (helm reads them as the chart's own).
_CHART_FILES = ("Chart.yaml", "Chart.lock", "requirements.yaml", "requirements.lock")
#: YAML files at a chart's top looked at, at most, to name those helm never renders.
MAX_TOP_FILES = 4096


def stray_templates(folder: str) -> list[str]:
    """The templates beside a ``Chart.yaml`` written inside a folder named ``templates/``
    that has no ``templates/`` (nor ``charts/``) of its own: YAML files with template
    actions, other than Chart.yaml and values files. That folder is a chart with no
    templates, so helm renders none of them. Empty for any other chart."""
    full = os.path.abspath(folder)
    if os.path.basename(full) != "templates":
        return []
    if any(os.path.isdir(os.path.join(full, d)) for d in ("templates", "charts")):
        return []
    try:
        with os.scandir(full) as entries:
            names = []
            for i, entry in enumerate(entries):
                if i >= MAX_TOP_FILES:
                    break
                names.append(entry.name)
    except OSError:
        return []
    return sorted(
        n
        for n in names
        if n.endswith((".yaml", ".yml"))
        and n not in _CHART_FILES
        and not n.startswith("values")
        and _has_actions(os.path.join(full, n))
    )


def _has_actions(path: str) -> bool:
    """Does the file hold a template action (``{{``) in its first 64 KiB?"""
    try:
        with open(path, "rb") as fh:
            return b"{{" in fh.read(1 << 16)
    except OSError:  # a folder, a file that cannot be read
        return False


def _no_templates(files: list[str]) -> str:
    """GL201's words for a Chart.yaml written among its templates (:func:`stray_templates`)."""
    count = f"the {len(files)} templates" if len(files) > 1 else "the template"
    return (
        f"a Helm chart whose Chart.yaml sits in templates/, beside {count} ({files[0]}"
        f"{', ...' if len(files) > 1 else ''}): helm renders none of them, and they were not "
        "linted; move Chart.yaml to the folder above, the chart's (values.yaml beside it, "
        "templates/ under it), and pass --render to lint what it renders"
    )


#: What a chart says as written: GPU082's findings on its values, and the findings on
#: what its templates write as plain text.
Written = tuple[list[Finding], list[Finding]]


def lint_rendered(
    linter: FileLinter,
    target: Target,
    run: Rendering | None,
    seen: list[LintedObject] | None = None,
) -> list[Finding]:
    """A chart's or Kustomize root's findings: rendered, linted, mapped back to its files.

    Without ``--render`` a chart is one GL201 (info) at its ``Chart.yaml``. A program that
    is missing is GL202 (a tool error: exit 2) and one that fails GL200, both at the
    chart's ``Chart.yaml`` or the root's kustomization file (a Kustomize failure at the
    file and line it names, and the kustomizations a failing root builds on linted alone:
    :func:`_unbuilt`); the rest of the run goes on. ``run``: how the run renders (None:
    nothing is rendered).
    """
    rendered = _rendered(linter, target, seen, run)
    found = rendered if isinstance(rendered, list) else _lint(linter, target.label, rendered, seen)
    return _with_written(found, _as_written(linter, target, rendered, run), run)


def _with_written(found: list[Finding], written: Written, run: Rendering | None) -> list[Finding]:
    """A chart's findings with what it says as written: without ``--render``, its unread
    values and what its templates write as plain text; rendered, its unread values (the
    rules read the output); rendered with ``--rendered-only``, neither, and not the rendered
    findings a run without ``--render`` reports at the same place (pre-commit's two hooks:
    one report of each)."""
    unread, literal = written
    options = run[0] if run is not None else None
    if options is None or not options.enabled:
        return found + unread + literal
    if not options.leaves_plain:
        return found + unread
    plain = {_place(f) for f in literal}
    return [f for f in found if _place(f) not in plain]


def _place(f: Finding) -> tuple[str, int, int, str]:
    return (f.path, f.span.line, f.span.column, f.rule)


def _as_written(
    linter: FileLinter, target: Target, rendered: Rendered | list[Finding], run: Rendering | None
) -> Written:
    """What a chart says as written (:mod:`gpulint.render.helm.aswritten`), its templates
    read once and its ``values.yaml`` parsed once: GPU082's findings on the values, and,
    unless the run renders it for itself alone, the findings of the ``Rule.as_written``
    rules on the lines its templates write as plain text (:func:`_with_written` says which
    are reported). Nothing for a chart whose Chart.yaml sits among its templates (GL201
    says helm renders none of them)."""
    if target.render != "helm":
        return [], []
    from gpulint.render.helm.aswritten import chart_file, chart_templates

    folder = target.path or target.label
    if stray_templates(folder):
        return [], []
    options = run[0] if run is not None else None
    listings = run[1].listings if run is not None else None
    templates = chart_templates(folder, listings)
    values = _chart_values(folder, rendered)
    chart_yaml = chart_file(folder)
    unread = _unread(linter, folder, values, templates, chart_yaml)
    literal: list[Finding] = []
    if templates and (options is None or not options.enabled or options.leaves_plain):
        literal = _literal_lines(linter, templates, values, chart_yaml)
    return unread, literal


def _chart_values(folder: str, rendered: Rendered | list[Finding]) -> tuple[str, Document] | None:
    """The chart's ``values.yaml``, its text and its document, parsed once: the rendered
    chart's parse of it, else here. None when there is none, or when it is linted as a file
    of its own (:func:`gpulint.render.trees.values_as_written`: parsed there)."""
    from gpulint.render.helm.unread import MAX_VALUES_BYTES
    from gpulint.render.mapping import load_documents
    from gpulint.render.trees import values_as_written
    from gpulint.util import safefile

    path = os.path.join(folder, "values.yaml")
    if values_as_written(folder, path):
        return None
    try:
        raw, _ = safefile.read_regular(path, MAX_VALUES_BYTES)
    except OSError:
        return None
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    shared = getattr(rendered, "values_doc", None)
    if shared is not None:
        doc = shared(path)
    else:
        docs = load_documents(text)
        doc = docs[0] if docs else None
    return None if doc is None else (text, doc)


def _literal_lines(
    linter: FileLinter,
    templates: list[tuple[str, str]],
    values: tuple[str, Document] | None,
    chart_yaml: bytes | None,
) -> list[Finding]:
    """The findings of the ``Rule.as_written`` rules on each template's lines that helm
    renders as written (:func:`gpulint.render.helm.aswritten.literal_skeleton`), judged by
    the rules themselves on a copy of the template that keeps those lines in place (the
    copy's YAML problems and notices are not the template's). GPU026 not
    for a chart that says it is for older clusters (``kubeVersion: "<1.16"``), nor in a
    template wrapped in a switch its values leave off (``{{- if .Values.psp.enabled }}``,
    ``enabled: false``): a removed version kept behind a switch is the chart's
    compatibility with older clusters."""
    from gpulint.render.helm.aswritten import (
        for_older_clusters,
        literal_skeleton,
        on_by_default,
        rendered_template,
    )
    from gpulint.render.mapping import label_of

    wanted = linter.as_written_codes | {codes.RULE_ERROR}
    if for_older_clusters(chart_yaml):
        wanted = wanted - {REMOVED_API_VERSION}
    data = values[1].data if values is not None else None
    found: list[Finding] = []
    for path, text in templates:
        if not rendered_template(path):
            continue
        skeleton = literal_skeleton(text)
        if skeleton is None:
            continue
        kept, switch = skeleton
        rules = wanted
        if switch is not None and not on_by_default(switch, data):
            rules = rules - {REMOVED_API_VERSION}
        with collector_paused():
            findings = linter.lint_bytes(label_of(path), kept.encode("utf-8"), as_written=True)
        found.extend(f for f in findings if f.rule in rules)
    return found


def _unread(
    linter: FileLinter,
    folder: str,
    values: tuple[str, Document] | None,
    templates: list[tuple[str, str]] | None,
    chart_yaml: bytes | None,
) -> list[Finding]:
    """GPU082's findings on a chart's ``values.yaml``, rendered or not: placement values no
    template reads."""
    from gpulint.render.helm.unread import unread_values
    from gpulint.render.mapping import label_of

    if values is None:
        return []
    problems = unread_values(folder, values, linter.registry.is_accelerator, templates, chart_yaml)
    label = label_of(os.path.join(folder, "values.yaml"))
    return [f for p in problems for f in linter.problem(label, p)]


def _rendered(
    linter: FileLinter,
    target: Target,
    seen: list[LintedObject] | None,
    run: Rendering | None,
) -> Rendered | list[Finding]:
    """The target rendered, or the findings of why it is not."""
    from gpulint.render import RenderOptions
    from gpulint.render.trees import Trees

    options, trees = run if run is not None else (RenderOptions(), Trees(False))
    out = render_target(target, options, trees)
    if isinstance(out, Unrendered):
        if out.failure is not None:  # a Kustomize root: its parts built alone, if they build
            folder = target.path or target.label
            return _unbuilt(linter, folder, out.path, out.failure, (options, trees), seen)
        return linter.problem(out.path, out.problem)
    return out


class Unrendered:
    """Why a chart or root has no output: where to say so (a label) and what to say;
    ``failure`` is a Kustomize root's (its parts may build alone). A plain class: the
    runner imports this module on every run (a NamedTuple costs start-up)."""

    __slots__ = ("failure", "path", "problem")

    def __init__(self, path: str, problem: Problem, failure: Failure | None = None) -> None:
        self.path = path
        self.problem = problem
        self.failure = failure


def render_target(target: Target, options: RenderOptions, trees: Trees) -> Rendered | Unrendered:
    """A chart's or Kustomize root's output, ready to map back, or why there is none: not
    rendered without ``--render`` (GL201, at ``Chart.yaml`` or the kustomization file), the
    program missing (GL202) or failing (GL200, at the file and line it names)."""
    from gpulint.render.kustomize.files import kustomization_file
    from gpulint.render.mapping import label_of

    folder = target.path or target.label
    if target.render == "helm":
        anchor = label_of(os.path.join(folder, "Chart.yaml"))
    else:
        anchor = label_of(kustomization_file(folder) or folder)
    stray = stray_templates(folder) if target.render == "helm" else []
    if stray:  # rendered or not, helm makes nothing of them
        message = _no_templates(stray)
        return Unrendered(anchor, Problem(codes.CHART_NOT_RENDERED, Span(1, 1, 1, 1), message))
    if not options.enabled:
        return Unrendered(anchor, Problem(codes.CHART_NOT_RENDERED, Span(1, 1, 1, 1), NOT_RENDERED))
    if target.render == "helm":
        from gpulint.render.helm import chart as helm, run as helmrun

        out = helm.render(folder, options, listings=trees.listings)
        if isinstance(out, helmrun.Failure):  # at the template helm's error names, if any
            span = Span(out.line, out.column, out.line, out.column)
            return Unrendered(out.path or anchor, Problem(out.code, span, out.message))
        return helm.HelmRendered(
            target.label,
            folder,
            out,
            options.for_chart(folder),
            rerun=helm.marked_render(folder, options, trees.listings),
            listings=trees.listings,
        )
    from gpulint.render.kustomize import build as kustomize

    built = kustomize.render(folder, options, trees)
    if isinstance(built, kustomize.Failure):
        path = label_of(built.path) if built.path else anchor
        span = Span(built.line, 1, built.line, 1)
        return Unrendered(path, Problem(built.code, span, built.message), built)
    return kustomize.KustomizeRendered(target.label, folder, built, trees)


def fix_rendered(
    linter: FileLinter, target: Target, fixing: tuple[str, bool], rendering: Rendering
) -> tuple[list[Finding], list[FileFix]]:
    """A chart's or Kustomize root's findings with ``--fix`` / ``--diff`` (``fixing``: the
    mode and whether only the diff is wanted), and what fixing changed, per file
    (:mod:`gpulint.render.fixvalues`). With ``--fix`` the findings the fixes removed are
    left out: the re-render of the fixed files no longer reports them."""
    from gpulint.render.fixcopy import rerenderer
    from gpulint.render.fixvalues import ValuesFixer, key_of

    rendered = _rendered(linter, target, None, rendering)
    written = _as_written(linter, target, rendered, rendering)  # nothing it fixes
    if isinstance(rendered, list):
        return _with_written(rendered, written, rendering), []
    label = target.label

    def relint(text: str) -> set[tuple[str, object, tuple[object, ...]]]:
        with collector_paused():
            return {key_of(f) for f in linter.lint_bytes(label, text.encode("utf-8"))}

    folder = target.path or label
    trees = rendering[1]
    readers: Callable[[str], list[str]] = lambda path: []  # noqa: E731
    if target.render == "kustomize":
        from gpulint.render.trees import project_root

        # A base other roots of the repository build too is theirs as well: every root
        # that reads a file is known before it is edited.
        trees.scan(project_root(folder))
        readers = trees.readers
    # Fixes are rendered again in a private temporary folder, removed when they are checked.
    with rerenderer(target.render or "", folder, *rendering) as again:
        fixer = ValuesFixer(
            fixing[0], rendered.text, rendered.documents, again, relint, folder, readers
        )
        findings = _lint(linter, label, rendered, None, fixer.fixes)
    changed = fixer.file_fixes(label, fixing[1])
    if not fixing[1]:
        findings = [f for f in findings if f.fix is None or not f.fix.available]
    return _with_written(findings, written, rendering), changed


def _lint(
    linter: FileLinter,
    label: str,
    rendered: Rendered,
    seen: list[LintedObject] | None,
    fixes: Fixes | None = None,
) -> list[Finding]:
    with collector_paused():
        findings = linter.lint_bytes(label, rendered.text.encode("utf-8"), seen)
    # Comments in templates reach the rendered output, so `# gpulint:` directives there
    # have applied; `per-file-ignores` are matched again against the file each finding
    # now names (a template, a values file, a patch).
    mapped: list[Finding] = []
    for f in rendered.remap(findings, fixes):
        if f.suppression is None and f.path != label:
            f = linter.file_ignores(f.path, [f])[0]
        mapped.append(f)
    return mapped


def _unbuilt(
    linter: FileLinter,
    folder: str,
    anchor: str,
    failure: Failure,
    run: Rendering,
    seen: list[LintedObject] | None,
) -> list[Finding]:
    """A Kustomize root that failed: its failure at the file and line it names, and every
    kustomization it builds on that builds alone linted (those that fail too, the same
    way for their own parts; one finding per distinct failure)."""
    from gpulint.render.kustomize import build as kustomize
    from gpulint.render.kustomize.files import kustomization_file
    from gpulint.render.mapping import label_of

    options, trees = run
    out: list[Finding] = []
    reported: set[tuple[str, int, str]] = set()
    todo, done = [(folder, anchor, failure)], {os.path.abspath(folder)}
    while todo:
        current, where, why = todo.pop(0)
        path = label_of(why.path) if why.path else where
        said = (path, why.line, kustomize.same_failure(why.message))
        if said not in reported:  # a base built alone fails as the root that names it did
            reported.add(said)
            span = Span(why.line, 1, why.line, 1)
            out.extend(linter.problem(path, Problem(why.code, span, why.message)))
        if why.code != codes.RENDER_FAILED:
            continue
        out.extend(_named_files(linter, current, trees, seen))
        for part in kustomize.parts(current, trees):
            if part in done:
                continue
            done.add(part)
            built = kustomize.render(part, options, trees)
            label = label_of(part)
            if isinstance(built, kustomize.Failure):
                todo.append((part, label_of(kustomization_file(part) or part), built))
            else:
                rendered = kustomize.KustomizeRendered(label, part, built, trees)
                out.extend(_lint(linter, label, rendered, seen))
    return out


#: Said of a file a root names that is linted as it is because the root does not build.
UNBUILT = " (linted as it is: {root}, which names it, does not build)"


def _named_files(
    linter: FileLinter, folder: str, trees: Trees, seen: list[LintedObject] | None
) -> list[Finding]:
    """The files a root that does not build names under ``resources``, each linted as it
    is (saying so), or, when one is not YAML as it is (a placeholder a script fills in)
    and holds a GPU resource, GL204 at the entry that names it, saying it was not checked."""
    from gpulint.k8s.mentions import names_accelerator
    from gpulint.render.kustomize.files import kustomization_file, read_folder
    from gpulint.render.mapping import label_of, read_text

    top = os.path.abspath(folder)
    k = trees.kustomizations.get(top) or read_folder(top)
    file = kustomization_file(top)
    if k is None or k.problem is not None or file is None:
        return []
    root = label_of(file)
    out: list[Finding] = []
    for ref in k.refs:
        if ref.field == "inline" or ref.field.startswith("patch"):
            out.extend(_unbuilt_patch(linter, root, ref))
            continue
        if ref.field != "resources" or not os.path.isfile(ref.path):
            continue
        text = read_text(ref.path)
        if text is None:
            continue
        label = label_of(ref.path)
        with collector_paused():
            found = linter.lint_bytes(label, text.encode("utf-8"), seen)
        if any(f.rule == codes.SYNTAX_ERROR for f in found):
            if names_accelerator(text, linter.registry):
                message = (
                    f"{ref.text} holds GPU resources that were not checked: this root does "
                    "not build, and the file is not YAML as it is (a placeholder filled in "
                    "before the build?); lint it once it is, or lint the built output"
                )
                span = Span(ref.line, 1, ref.line, 1)
                out.extend(
                    linter.problem(root, Problem(codes.GPU_CONTENT_NOT_CHECKED, span, message))
                )
            continue
        note = UNBUILT.format(root=root)
        out.extend(f._replace(message=f.message + note) for f in found)
    return out


def _unbuilt_patch(linter: FileLinter, root: str, ref: Any) -> list[Finding]:
    """GL204 at the entry of a root that does not build for a patch that writes GPU
    resources: a patch is half an object, so nothing of it was checked."""
    from gpulint.k8s.mentions import names_accelerator
    from gpulint.render.mapping import read_text

    text = ref.text if ref.field == "inline" else read_text(ref.path)
    if text is None or not names_accelerator(text, linter.registry):
        return []
    what = "the patch written here" if ref.field == "inline" else f"the patch {ref.text}"
    message = (
        f"{what} writes GPU resources that were not checked: this root does not build, and "
        "a patch is half an object; lint the built output once it builds"
    )
    span = Span(ref.line, 1, ref.line, 1)
    return linter.problem(root, Problem(codes.GPU_CONTENT_NOT_CHECKED, span, message))
