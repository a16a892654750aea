"""A Helm chart read as written, without rendering it: its templates' text, read once.

Two checks read it: GPU082 (:mod:`gpulint.render.helm.unread`: values no template reads,
rendered or not) and, without ``--render``, the rules that judge what a line writes
(``Rule.as_written``: GPU024, GPU026, ...). :func:`literal_skeleton` keeps, in place, the
lines of a template that helm renders as written — no action on them, outside every block
(``if``, ``with``, ``range``, ``define``, ``block``) but one that wraps the whole template on
a value, under parents that are so too — and blanks the rest, so the rules judge them at
their own line and column. A line inside a block is left alone: charts choose API versions
with ``.Capabilities`` or a ``semverCompare`` there, and turn parts on with values.
"""

from __future__ import annotations

import os
import re

from gpulint.render.helm.templatetext import OPENS, Action, actions
from gpulint.util import safefile
from gpulint.util.walk import Listings, walk

#: Bytes of a chart's templates read at most (all files together); a larger chart is not
#: read as written.
MAX_TEMPLATE_BYTES = 8 << 20
#: Template files looked at, at most.
MAX_TEMPLATE_FILES = 2048
#: A line that is a ``# gpulint:`` directive and nothing else (kept in the copy), as
#: :mod:`gpulint.suppress.directives` finds them (a layer above: not imported here).
_DIRECTIVE = re.compile(r"[ \t]*#\s*gpulint:")
#: A Chart.yaml's ``kubeVersion`` with an upper bound: a chart for older clusters.
_OLD_CLUSTERS = re.compile(rb"(?m)^kubeVersion[ \t]*:[^\n]*<")


def chart_templates(chart: str, listings: Listings | None) -> list[tuple[str, str]] | None:
    """Each file under the chart's ``templates/`` that helm loads (its ``.helmignore``
    applied as helm applies it) with its text, or None when they are more than the bounds
    allow (bytes read, files) or helm refuses the chart's ``.helmignore``."""
    from gpulint.render.helm.helmignore import chart_rules

    rules = chart_rules(chart)
    if rules is None:
        return None
    found: list[tuple[str, str]] = []
    total = files = 0
    for dirpath, dirs, names in walk(os.path.join(chart, "templates"), None, listings):
        rel = os.path.relpath(dirpath, chart).replace(os.sep, "/")
        dirs[:] = [d for d in dirs if not rules.ignore(f"{rel}/{d}", True)]
        for name in sorted(names):
            if rules.ignore(f"{rel}/{name}", False):
                continue
            files += 1
            if files > MAX_TEMPLATE_FILES:
                return None
            path = os.path.join(dirpath, name)
            try:
                raw, why = safefile.read_regular(path, MAX_TEMPLATE_BYTES - total)
            except OSError:
                continue
            if raw is None:
                if why == safefile.LARGE:
                    return None
                continue
            total += len(raw)
            found.append((path, raw.decode("utf-8", "replace")))
    return found


def _step(action: Action) -> int:
    """How an action changes the block depth: +1 for an opener, -1 for ``end``."""
    if action.word in OPENS:
        return 1
    return -1 if action.word == "end" else 0


def chart_file(chart: str) -> bytes | None:
    """The chart's ``Chart.yaml`` (its first MiB), read once for the checks that ask of it;
    None when it cannot be read."""
    try:
        head, _ = safefile.read_regular(os.path.join(chart, "Chart.yaml"), 1 << 20)
    except OSError:
        return None
    return head


def for_older_clusters(chart_yaml: bytes | None) -> bool:
    """Does the chart's Chart.yaml (:func:`chart_file`) say it is for clusters below some
    version (``kubeVersion: "<1.16"``)? Then its old API versions are what it means."""
    return chart_yaml is not None and _OLD_CLUSTERS.search(chart_yaml) is not None


def rendered_template(path: str) -> bool:
    """Is the file one helm renders as a manifest (a YAML file of ``templates/``, not a
    partial named ``_*``)?"""
    name = os.path.basename(path)
    return not name.startswith("_") and name.endswith((".yaml", ".yml"))


#: Actions that write nothing: control, variables, comments.
_SILENT = frozenset({"if", "else", "end", "with", "range", "define", "break", "continue"})
_INDENTED = re.compile(r"\|\s*n?indent\s+(\d+)")
_ASSIGNS = re.compile(r"\$[A-Za-z0-9_]*\s*:?=")


def _output_indent(line_actions: list[Action]) -> int | None:
    """Where the output of a line of actions may start: None when they write nothing,
    else the ``indent``/``nindent`` they ask for (0 when none: anywhere)."""
    writes = None
    for action in line_actions:
        text = action.body
        if not text or text.startswith("/*") or action.word in _SILENT or _ASSIGNS.match(text):
            continue
        found = _INDENTED.search(text)
        indent = int(found.group(1)) if found else 0
        writes = indent if writes is None else min(writes, indent)
    return writes


def _only_actions(line: str, line_actions: list[Action], pos: int) -> bool:
    """Is the line (starting at offset ``pos``) nothing but actions (``{{- if ... }}``,
    ``{{ toYaml . | nindent 8 }}``)?"""
    rest = []
    at = pos
    for action in line_actions:
        rest.append(line[max(0, at - pos) : max(0, action.begin - pos)])
        at = action.stop
    rest.append(line[max(0, at - pos) :])
    return not "".join(rest).strip()


#: A wrapper's condition that is not on the values: the cluster's version or APIs.
_CLUSTER_TEST = re.compile(r"Capabilities|KubeVersion|semver", re.IGNORECASE)


def _wrapped(text: str, spans: list[Action]) -> str | None:
    """Is the whole template one ``if`` or ``with`` on the values (``{{- if
    .Values.gpu.enabled }}`` ... ``{{- end }}``, nothing written outside it, no ``else`` of
    its own)? Its lines are then rendered as written whenever the values turn it on. Not
    a test of the cluster (``.Capabilities``, ``semverCompare``): that chooses versions.
    The wrapper's condition (``if .Values.gpu.enabled``), or None."""
    if not spans:
        return None
    first = spans[0]
    if first.word not in ("if", "with") or ".Values" not in first.body:
        return None
    if _CLUSTER_TEST.search(first.body):
        return None
    if text[: first.begin].strip() or text[spans[-1].stop :].strip():
        return None
    depth = 0
    for n, action in enumerate(spans):
        if depth == 1 and action.word == "else":
            return None
        depth = max(0, depth + _step(action))
        if depth == 0:
            return first.body if n == len(spans) - 1 else None  # its end is the last action
    return None


def literal_skeleton(text: str) -> tuple[str, str | None] | None:
    """``text`` (a template) with every line blanked but those helm renders as written:
    a line with no action on it, outside every block (but the one that wraps the whole
    template on a value, :func:`_wrapped`), whose parents (the lines it is indented under)
    are kept too; the ``---`` between documents and ``# gpulint:``
    directives are kept. Lines keep their places, so a rule's finding on the copy is at the
    template's line and column. With the copy, the condition of the switch that wraps the
    template, if any. None when no line of YAML is kept."""
    spans = list(actions(text))
    out: list[str] = []
    depth = i = pos = 0
    switch = _wrapped(text, spans)
    base = 0 if switch is None else 1
    kept_any = False
    #: The open parents: (indent, kept, is a sequence item).
    stack: list[tuple[int, bool, bool]] = []
    for line in text.split("\n"):
        end = pos + len(line)
        at_start = depth
        touched = i > 0 and spans[i - 1].stop > pos  # an action from a line above runs on
        on_line: list[Action] = []
        while i < len(spans) and spans[i].begin <= end:
            touched = True
            on_line.append(spans[i])
            depth = max(0, depth + _step(spans[i]))
            i += 1
        bare = line.rstrip("\r")
        stripped = bare.strip()
        keep = ""
        if bare.startswith("---"):
            stack.clear()
            keep = line
        elif _DIRECTIVE.match(bare):
            keep = line
        elif stripped and not stripped.startswith("#"):
            if on_line and _only_actions(line, on_line, pos):
                # A line of actions that writes lines (an include, a toYaml): what follows
                # deeper than where they start may be their child, not the line above's.
                writes = _output_indent(on_line)
                if writes is not None:
                    while stack and stack[-1][0] >= writes:
                        stack.pop()
                    stack.append((writes, False, False))
            else:
                indent = len(bare) - len(bare.lstrip(" "))
                item = stripped == "-" or stripped.startswith("- ")
                while stack and (
                    stack[-1][0] > indent or (stack[-1][0] == indent and (stack[-1][2] or not item))
                ):
                    stack.pop()
                parent = stack[-1][1] if stack else True
                literal = parent and at_start == base and not touched
                stack.append((indent, literal, item))
                if literal:
                    keep = line
                    kept_any = True
        out.append(keep)
        pos = end + 1
    return ("\n".join(out), switch) if kept_any else None


_SWITCH = re.compile(r"(?:if|with)\s+\.Values((?:\.[A-Za-z0-9_-]+)+)")


def on_by_default(switch: str, values: object) -> bool:
    """Does the chart's ``values.yaml`` (``values``, its data) turn on the switch
    ``switch`` (``if .Values.gpu.enabled``: a value Go templates take as true: not false,
    zero, empty or missing)? A condition of another shape (``and``, ``not``, ``eq``) is
    taken as off."""
    found = _SWITCH.fullmatch(switch)
    if found is None:
        return False
    node = values
    for key in found.group(1).split(".")[1:]:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return bool(node)
