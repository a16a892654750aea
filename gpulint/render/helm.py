"""A chart rendered with ``helm template``, and findings moved to the template or values line.

Rendering: ``helm template --skip-schema-validation [--namespace=NS] [--kube-version=V]
[--values=FILE]... [--set=KEY=VALUE]... -- RELEASE CHART`` with the bounds of
:mod:`gpulint.render.tools`. Never ``--dependency-update``: a chart whose
dependencies are not in its ``charts/`` folder fails to render (GL200) and the user vendors
them (``helm dependency build``) when they trust them. Before helm runs, what it would read
is checked with every link resolved (:func:`refused_inputs`): a chart holding a symbolic link
that leaves the repository, through linked folders too, a link loop, a FIFO or a device, or a
values file that is a link out of the repository, a system file (``/dev/stdin``, ``/proc``)
or not a regular file, is not rendered (GL200): ``.Files.Get`` and ``.Values`` would copy
the target, a credential, into the output, and a finding's message would show it.

Mapping: each rendered document starts with helm's ``# Source: <chart>/templates/x.yaml``
header, which names the template. Within it the finding's key path is matched line by line
(:mod:`gpulint.render.textmap`). When the value was written by ``{{ .Values.x }}`` (or a
``toYaml .Values.x`` block holds it) and a values file sets ``x``, the finding points at the
values line, names the template that uses it, and keeps the template as a related place.
Values files are searched as helm merges them, last applied first: ``--values``/``--set``
files, then the parent chart's ``values.yaml`` under the subchart's name, then the chart's.
"""

from __future__ import annotations

import bisect
import os
import re
from typing import NamedTuple, cast

from gpulint.loader.document import Document
from gpulint.model import Finding, Related, Span
from gpulint.render import ChartOptions, RenderOptions, textmap
from gpulint.render.mapping import (
    Place,
    Rendered,
    at_key,
    label_of,
    load_documents,
    lookup,
    read_text,
)
from gpulint.render.schemaref import remote_schema_ref
from gpulint.render.tools import BUDGET_SPENT, ToolResult, find_tool, run_tool, time_left

_SOURCE = re.compile(r"^# Source: (.+?)\s*$", re.MULTILINE)

#: How a helm before 3.16 refuses the flag (cobra's words, first on its error output).
_NO_SKIP = "Error: unknown flag: --skip-schema-validation"

INSTALL_HELM = (
    "helm was not found: install Helm 3 or later (https://helm.sh/docs/intro/install/) or "
    "pass --helm PATH"
)


class Failure(NamedTuple):
    """Why a folder was not rendered: ``code`` GL200 (it failed) or GL202 (no program)."""

    code: str
    message: str
    line: int = 1


def render(folder: str, options: RenderOptions) -> str | Failure:
    """The chart's rendered output, or why there is none.

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
            return Failure("GL202", f"--helm {options.helm}: not an executable file")
        return Failure("GL202", INSTALL_HELM)
    refused = refused_inputs(folder, options)
    if refused is not None:
        return refused
    opts = options.for_chart(folder)
    flags = [f"--namespace={opts.namespace}"] if opts.namespace else []
    if opts.kube_version:
        flags.append(f"--kube-version={opts.kube_version}")
    flags += [f"--values={os.path.abspath(values)}" for values in opts.values]
    flags += [f"--set={assignment}" for assignment in opts.set]
    args = [*flags, "--", opts.release_name, os.path.abspath(folder)]
    result = _template(helm, ["--skip-schema-validation", *args], folder, options.deadline)
    if isinstance(result, ToolResult) and result.stderr.startswith(_NO_SKIP):
        why = remote_schema_ref(folder)  # a helm before 3.16 validates every schema
        if why is not None:
            return Failure("GL200", why)
        result = _template(helm, args, folder, options.deadline)
    if isinstance(result, Failure):
        return result
    if result.reason is not None:
        return Failure("GL200", f"helm template {result.reason}")
    if result.returncode != 0:
        return Failure(
            "GL200", f"helm template failed: {tool_error(result.stderr, result.returncode)}"
        )
    return result.stdout


def _template(
    helm: str, args: list[str], folder: str, deadline: float | None
) -> ToolResult | Failure:
    """``helm template ARGS`` in the chart's folder, for what is left of the run's budget."""
    timeout = time_left(deadline)
    if timeout is None:
        return Failure("GL200", BUDGET_SPENT)
    return run_tool([helm, "template", *args], cwd=os.path.abspath(folder), timeout=timeout)


def refused_inputs(folder: str, options: RenderOptions) -> Failure | None:
    """Why helm must not render the chart (GL200), if it must not: an entry of the chart it
    must not read (:func:`gpulint.render.links.links_outside`: a link out of the repository,
    a FIFO, a device, a link loop), or a values file that is a link out of the repository,
    a system file or not a regular file (:func:`gpulint.render.links.refused_file`)."""
    from gpulint.render.links import links_outside, refused_file
    from gpulint.render.trees import project_root

    root = project_root(folder)
    entry = links_outside(folder, root)
    if entry is not None:
        return Failure("GL200", f"not rendered: {label_of(entry[0])} {entry[1]}")
    for values in options.for_chart(folder).values:
        why = refused_file(values, root)
        if why is not None:
            return Failure("GL200", f"not rendered: values file {label_of(values)} {why}")
    return None


def tool_error(stderr: str, returncode: int | None) -> str:
    """A program's error output as one line: its own words, without the "Error: " prefix,
    blank lines and hints about flags gpulint does not pass."""
    lines = [
        line.strip()
        for line in stderr.splitlines()
        if line.strip() and not line.startswith("Use --debug flag")
    ]
    text = "; ".join(_message(line) for line in lines)
    return text or f"exit status {returncode}"


#: kubectl logs through klog: `E1201 00:47:47.778079   20428 run.go:72] "command failed" err="..."`.
_KLOG = re.compile(r'^[EWIF]\d{4} [\d:.]+\s+\d+ \S+\] (?:"command failed" err=)?"?(.*?)"?$')


def _message(line: str) -> str:
    m = _KLOG.match(line)
    if m:
        line = m.group(1).replace('\\"', '"')
    return line.removeprefix("Error: ").removeprefix("error: ")


class HelmRendered(Rendered):
    command = "helm template"

    def __init__(self, label: str, folder: str, text: str, options: ChartOptions) -> None:
        super().__init__(label, folder, text)
        self.options = options
        # (line of the `# Source:` header, the template it names)
        self.sources: list[tuple[int, str]] = [
            (text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _SOURCE.finditer(text)
        ]
        self._starts = [line for line, _ in self.sources]
        self._values: dict[str, Document | None] = {}

    def fallback(self) -> str:
        return label_of(os.path.join(self.folder, "Chart.yaml"))

    def template_of(self, line: int) -> str | None:
        """The template file a rendered line came from (absolute), if it exists."""
        at = bisect.bisect_right(self._starts, line) - 1
        if at < 0:
            return None
        source = self.sources[at][1]
        parts = source.split("/")
        path = os.path.join(self.folder, *parts[1:])
        return path if os.path.isfile(path) else None

    def place(self, finding: Finding) -> Place:
        template = self.template_of(finding.line)
        if template is None:
            return Place(self.fallback(), Span(1, 1, 1, 1))
        text = read_text(template) or ""
        doc = self.document(finding.document)
        path = finding.doc_path
        match = textmap.find(text, path)
        shown = label_of(template)
        on_key = at_key(doc, finding)
        if match.lines and match.depth == len(path):
            line = match.lines[-1]
            ref = textmap.values_ref(line.value)
            if ref is not None and not on_key:
                found = self._values_place(template, ref, (), shown, line.number, key=False)
                if found is not None:
                    return found
            return Place(shown, _line_span(text, line, on_key))
        ref = textmap.inserted_values(text, match)
        if ref is not None:
            rest = path[_matched_path_length(path, match) :]
            found = self._values_place(template, ref, rest, shown, _line_of(match), on_key)
            if found is not None:
                return found
        if match.lines:
            return Place(shown, _line_span(text, match.lines[-1], True))
        return Place(shown, Span(1, 1, 1, 1))

    # -- values files ------------------------------------------------------------------

    def _values_doc(self, path: str) -> Document | None:
        if path not in self._values:
            text = read_text(path)
            docs = load_documents(text) if text is not None else []
            self._values[path] = docs[0] if docs else None
        return self._values[path]

    def _values_files(self, template: str) -> list[tuple[str, tuple[str, ...]]]:
        """Values files that can set a template's values, the one applied last first, each
        with the prefix its keys are under (a subchart's name in its parents' files)."""
        rel = os.path.relpath(template, self.folder).split(os.sep)
        chain: list[tuple[str, tuple[str, ...]]] = []  # (chart folder, prefix), outermost first
        folder, prefix = self.folder, cast("tuple[str, ...]", ())
        chain.append((folder, prefix))
        i = 0
        while i + 1 < len(rel) and rel[i] == "charts":
            folder = os.path.join(folder, rel[i], rel[i + 1])
            prefix = (*prefix, rel[i + 1])
            chain.append((folder, prefix))
            i += 2
        ours = chain[-1][1]
        out: list[tuple[str, tuple[str, ...]]] = [
            (os.path.abspath(v), ours) for v in reversed(self.options.values)
        ]
        for folder, prefix in chain:  # a parent's values override its subchart's
            out.append((os.path.join(folder, "values.yaml"), ours[len(prefix) :]))
        return out

    def _values_place(
        self,
        template: str,
        ref: tuple[str, ...],
        rest: tuple[object, ...],
        shown: str,
        template_line: int,
        key: bool,
    ) -> Place | None:
        path = (*ref, *rest)
        for file, prefix in self._values_files(template):
            doc = self._values_doc(file)
            if doc is None:
                continue
            full = (*prefix, *path)
            present, _ = lookup(doc.data, full)
            if not present:
                continue
            span = doc.key_span(full) if key else doc.value_span(full)
            values_label = label_of(file)
            dotted = ".".join(str(p) for p in ref)
            used = os.path.relpath(template, self.folder)
            note = f" (used by {used}:{template_line} as .Values.{dotted})"
            related = Related(
                "template",
                shown,
                Span(template_line, 1, template_line, 1),
                f"the template that uses .Values.{dotted}",
            )
            return Place(values_label, span, note, (related,))
        return None


def _matched_path_length(path: tuple[object, ...], match: textmap.Match) -> int:
    return match.depth


def _line_of(match: textmap.Match) -> int:
    return match.lines[-1].number if match.lines else 1


def _line_span(text: str, line: textmap.Line, on_key: bool) -> Span:
    raw = text.splitlines()[line.number - 1]
    if on_key or not line.value.strip():
        start = line.key_column
        key_text = raw[start:].split(":", 1)[0]
        return Span(line.number, start + 1, line.number, start + 1 + len(key_text.rstrip()))
    value = line.value.strip()
    at = raw.rfind(value)
    return Span(line.number, at + 1, line.number, at + 1 + len(value))
