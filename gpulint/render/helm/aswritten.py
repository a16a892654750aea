"""A Helm chart read as written, without rendering it: its templates' text, read once.

Two checks read it: GPU082 (:mod:`gpulint.render.helm.unread`: values no template reads,
rendered or not) and, without ``--render``, the API version a template writes literally
(GPU026). A template's top-level ``apiVersion:`` and ``kind:`` lines with no action on them
and outside every block (``if``, ``with``, ``range``, ``define``, ``block``) are rendered as
written whenever the chart is: :func:`literal_kinds` keeps those lines, in place, and blanks
the rest, so the real rule judges them at their own line and column. A line inside a block
is left alone: charts choose the version with ``.Capabilities`` or a ``semverCompare`` there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from gpulint.util import safefile
from gpulint.util.walk import Listings, walk

#: Bytes of a chart's templates read at most (all files together); a larger chart is not
#: read as written.
MAX_TEMPLATE_BYTES = 8 << 20
#: Template files looked at, at most.
MAX_TEMPLATE_FILES = 2048
#: Actions that open a block closed by ``{{ end }}``.
_OPENERS = frozenset({"if", "with", "range", "define", "block"})
#: The lines of a template document kept by :func:`literal_kinds`.
_KEPT = re.compile(r"(?:apiVersion|kind)[ \t]*:[ \t]*[\"']?[A-Za-z0-9./-]+[\"']?[ \t]*(?:#.*)?")
_NAME = re.compile(r"  name[ \t]*:[ \t]*[\"']?[a-z0-9.-]+[\"']?[ \t]*(?:#.*)?")
_DIRECTIVE = re.compile(r"[ \t]*#[ \t]*gpulint[ \t]*:")
#: A Chart.yaml's ``kubeVersion`` with an upper bound: a chart for older clusters.
_OLD_CLUSTERS = re.compile(rb"(?m)^kubeVersion[ \t]*:[^\n]*<")


def chart_templates(chart: str, listings: Listings | None) -> list[tuple[str, str]] | None:
    """Each file under the chart's ``templates/`` with its text, or None when they are more
    than the bounds allow (bytes read, files)."""
    found: list[tuple[str, str]] = []
    total = files = 0
    for dirpath, _, names in walk(os.path.join(chart, "templates"), None, listings):
        for name in sorted(names):
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


def action_spans(text: str) -> Iterator[tuple[int, int]]:
    """The offsets of each Go-template action (``{{`` to after ``}}``) of ``text``, in one
    pass: an action never closed ends the search (helm refuses such a template)."""
    at = 0
    while True:
        start = text.find("{{", at)
        if start < 0:
            return
        end = text.find("}}", start + 2)
        if end < 0:
            return
        yield start, end + 2
        at = end + 2


def actions_of(text: str) -> Iterator[str]:
    """The text inside each action of ``text``."""
    for start, end in action_spans(text):
        yield text[start + 2 : end - 2]


def _step(body: str) -> int:
    """How an action changes the block depth: +1 for an opener, -1 for ``end``."""
    word = body.strip().lstrip("-").strip().split(None, 1)
    if not word:
        return 0
    if word[0] in _OPENERS:
        return 1
    return -1 if word[0] == "end" else 0


def for_older_clusters(chart: str) -> bool:
    """Does the chart's Chart.yaml say it is for clusters below some version
    (``kubeVersion: "<1.16"``)? Then its old API versions are what it means."""
    try:
        head, _ = safefile.read_regular(os.path.join(chart, "Chart.yaml"), 1 << 20)
    except OSError:
        return False
    return head is not None and _OLD_CLUSTERS.search(head) is not None


def rendered_template(path: str) -> bool:
    """Is the file one helm renders as a manifest (a YAML file of ``templates/``, not a
    partial named ``_*``)?"""
    name = os.path.basename(path)
    return not name.startswith("_") and name.endswith((".yaml", ".yml"))


def literal_kinds(text: str) -> str | None:
    """``text`` (a template) with every line blanked but those written literally outside
    any block that say what each document is: ``apiVersion:`` and ``kind:`` at its top,
    ``metadata:`` and its ``name:`` when literal, the ``---`` between documents and
    ``# gpulint:`` directives; None when no ``apiVersion`` line is kept."""
    spans = list(action_spans(text))
    out: list[str] = []
    depth = i = pos = 0
    kept_version = in_metadata = False
    for line in text.split("\n"):
        end = pos + len(line)
        at_start = depth
        touched = i > 0 and spans[i - 1][1] > pos  # an action from a line above runs on
        while i < len(spans) and spans[i][0] <= end:
            touched = True
            start, stop = spans[i]
            depth = max(0, depth + _step(text[start + 2 : stop - 2]))
            i += 1
        bare = line.rstrip("\r")
        literal = at_start == 0 and not touched
        if bare[:1].strip() and not bare.startswith("#"):
            in_metadata = literal and bare.rstrip() == "metadata:"
        keep = ""
        if bare.startswith("---") or _DIRECTIVE.match(bare):
            keep = line
        elif literal and _KEPT.fullmatch(bare):
            keep = line
            kept_version = kept_version or bare.startswith("apiVersion")
        elif in_metadata and (bare.rstrip() == "metadata:" or (literal and _NAME.fullmatch(bare))):
            keep = line
        out.append(keep)
        pos = end + 1
    return "\n".join(out) if kept_version else None
