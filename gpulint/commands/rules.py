"""The rule catalog as text, Markdown (``docs/rules.md``) or JSON, from the rules themselves,
and the docs site's rule pages.

``docs/rules.md`` is generated with ``gpulint rules --isolated --format markdown`` and a test
fails when it is stale, so the rule docstrings stay the single source. The docs site
(``make docs``, docs/development.md) has one page per rule, :func:`render_rule_page`, and an
index, :func:`render_rule_index`, made while the site is built: nothing of them is committed.
SARIF's ``helpUri`` and ``gpulint rule CODE`` name the page, :func:`rule_url`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from gpulint.rule import Rule
from gpulint.util.textsafe import escape, escape_lines, json_text, plain

SCOPE_WORDS = {
    "pod": "each pod spec",
    "object": "each Kubernetes object",
    "input": "the YAML input itself",
}


def rule_page(code: str) -> str:
    """A rule's page in the docs site, relative to its root: ``rules/gpu001.html``."""
    from gpulint.reporters.sarif import rule_page as page

    return page(code)


def rule_url(rule: Rule) -> str | None:
    """The absolute address of a rule's page; None for a rule that has none (not built in)."""
    from gpulint.reporters.sarif import help_uri

    return help_uri(rule)


#: Width of ``gpulint rules`` output when stdout is not a terminal and COLUMNS is unset.
DEFAULT_WIDTH = 100
#: The narrowest summary column worth printing beside the name; narrower, it goes below.
MIN_SUMMARY = 40


def _family(rule: Rule) -> tuple[int, str]:
    """GPU rules first, then the YAML rules, then gpulint's own (GL), then the rest."""
    order = {"GPU": 0, "YML": 1, "GL": 2}
    prefix = rule.code.rstrip("0123456789")
    return order.get(prefix, 3), rule.code


def render_lines(rules: Sequence[Rule], width: int | None = None) -> str:
    """``gpulint rules``: one line per rule, GPU rules first: code, name, default severity,
    ``fix`` and ``opt-in`` flags, and the start of its summary cut to fit ``width`` (the
    terminal's; ``DEFAULT_WIDTH`` when stdout is not one). ``--long`` is :func:`render_text`."""
    if width is None:
        import shutil

        width = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    ordered = sorted(rules, key=_family)
    codes = max((len(r.code) for r in ordered), default=0)
    names = max((len(r.name) for r in ordered), default=0)
    lines = []
    for rule in ordered:
        fix = "fix" if rule.fix == "safe" else "unsafe-fix"
        flags = " ".join(f for f, on in ((fix, rule.fixable), ("opt-in", rule.opt_in)) if on)
        origin = "" if rule.origin == "built-in" else f"[{escape(rule.origin)}]  "
        head = (
            f"{rule.code:<{codes}}  {rule.name:<{names}}  {rule.severity.label:<7}  {flags:<10}  "
        )
        if len(head) > width:  # a narrow terminal: the columns without their padding
            head = f"{rule.code}  {rule.name}  {rule.severity.label}  {flags}  "
        head += origin
        summary = escape(rule.summary).split(". ", 1)[0].rstrip(".")
        room = width - len(head)
        if room < 30:
            summary = ""  # a narrow terminal: the flags, not a stub of the summary
        elif len(summary) > room:
            summary = summary[: room - 1].rstrip() + "\u2026"
        lines.append((head + summary).rstrip())
    return plain("\n".join(lines) + "\n") if lines else ""


def render_text(rules: Sequence[Rule], width: int | None = None) -> str:
    """``gpulint rules --long``: one entry per rule: code, name, default severity (and
    origin), then the summary.

    Lines fit ``width`` (default: the terminal's, from ``shutil.get_terminal_size``, which
    honours ``COLUMNS``; ``DEFAULT_WIDTH`` when stdout is not a terminal). Summaries wrap
    between words, beside the name when that leaves them ``MIN_SUMMARY`` columns, else on
    indented lines below it. A word longer than the line (a URL) is never split.
    """
    import textwrap

    if width is None:
        import shutil

        width = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    codes = max((len(r.code) for r in rules), default=0)
    names = max((len(r.name) for r in rules), default=0)
    lines = []
    for rule in rules:
        origin = "" if rule.origin == "built-in" else f"[{escape(rule.origin)}]  "
        summary = escape(rule.summary)
        head = f"{rule.code:<{codes}}  {rule.name:<{names}}  {rule.severity.label:<7}  "
        beside = width - len(head)
        if beside >= MIN_SUMMARY:
            wrapped = textwrap.wrap(
                origin + summary,
                width=beside,
                break_long_words=False,
                break_on_hyphens=False,
            )
            lines.append(head + (wrapped[0] if wrapped else ""))
            lines.extend(" " * len(head) + more for more in wrapped[1:])
        else:
            lines.append(f"{rule.code}  {rule.name}  {rule.severity.label}  {origin}".rstrip())
            lines.extend(
                textwrap.wrap(
                    summary,
                    width=max(width, 20),
                    initial_indent="    ",
                    subsequent_indent="    ",
                    break_long_words=False,
                    break_on_hyphens=False,
                )
            )
    # A wrapped summary's indented line may start with the tree's `::` (gpulint.util.textsafe).
    return plain("\n".join(lines) + "\n") if lines else ""


def printable(text: str) -> str:
    """A rule's documentation, safe for a terminal: each line escaped, the lines kept.

    A declarative rule's ``docs`` (and a rule folder's docstrings) come from the repository
    being linted: an escape sequence in them must not reach the terminal when someone runs
    ``gpulint rules`` or ``gpulint rule CODE`` on a pull request.
    """
    return "\n".join(escape_lines(text))


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _type(spec: Any) -> str:
    kind = spec.get("type") if isinstance(spec, dict) else None
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind:
        return str(kind)
    if isinstance(spec, dict) and "enum" in spec:
        return "one of " + ", ".join(json.dumps(v) for v in spec["enum"])
    return "any"


def _demote(doc: str) -> str:
    """Rule docstrings use ``##`` sections; under a rule's ``##`` heading they become ``###``."""
    out, fenced = [], False
    for line in doc.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and re.match(r"^#{1,5} ", line):
            line = "#" + line
        out.append(line)
    return "\n".join(out).strip()


def _anchor(rule: Rule) -> str:
    return f"{rule.code.lower()}-{rule.name}"


def render_markdown(rules: Sequence[Rule]) -> str:
    out = [
        "# Rules",
        "",
        "<!-- Generated by `gpulint rules --isolated --format markdown`: do not edit. -->",
        "",
        "Each rule's page is also printed by `gpulint rule CODE`, and the docs site has one",
        "page per rule (`make docs`). Severities are defaults; configuration can change them",
        "(`severity:`), turn rules off (`ignore:`) and set their options (`rules:`): see",
        "[Configuration](configuration.md).",
        "",
        "| Code | Name | Severity | Checks | What it does |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rule in rules:
        out.append(
            f"| [{rule.code}](#{_anchor(rule)}) | {rule.name} | {rule.severity.label} | "
            f"{SCOPE_WORDS.get(rule.scope, rule.scope)} | {_cell(escape(rule.summary))} |"
        )
    for rule in rules:
        doc = printable(rule.doc)
        title = doc.splitlines()[0].strip() if doc else rule.name
        body = doc.split("\n", 1)[1] if "\n" in doc else ""
        out += [
            "",
            # The short anchor other pages link to (docs/rules.md#gpu001; on the site, the
            # rule's own page).
            f'<a id="{rule.code.lower()}"></a>',
            "",
            f"## {rule.code}: {rule.name}",
            "",
            f"{title}",
            "",
            f"Default severity: **{rule.severity.label}** · checks "
            f"{SCOPE_WORDS.get(rule.scope, rule.scope)}"
            + (" · opt-in: not in the default selection" if rule.opt_in else "")
            + ("" if rule.origin == "built-in" else f" · from {escape(rule.origin)}"),
            "",
            _demote(body),
        ]
        if rule.options_schema:
            out += ["", "#### Option reference", "", *_options_table(rule)]
    return plain("\n".join(out) + "\n")


def _options_table(rule: Rule) -> list[str]:
    out = ["| Option | Type | Default | Description |", "| --- | --- | --- | --- |"]
    for name, spec in rule.options_schema.items():
        default = json.dumps(spec.get("default"), ensure_ascii=False)
        out.append(
            f"| `{name}` | {_type(spec)} | `{_cell(default)}` | "
            f"{_cell(spec.get('description', ''))} |"
        )
    return out


#: The sections ``gpulint rule CODE`` prints right after the summary: what to look for and
#: what to write instead, before the long explanation (ruff's rule pages open the same way).
FIRST_SECTIONS = ("Example", "Use instead")


def example_first(doc: str) -> str:
    """A rule's docstring with its ``## Example`` and ``## Use instead`` sections moved right
    after the summary, the other sections after them in their order. A ``## `` line inside a
    fenced code block is not a heading."""
    head: list[str] = []
    sections: list[tuple[str, list[str]]] = []
    fenced = False
    for line in doc.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            sections.append((line[3:].strip(), [line]))
        elif sections:
            sections[-1][1].append(line)
        else:
            head.append(line)
    first = [s for name in FIRST_SECTIONS for s in sections if s[0] == name]
    rest = [s for s in sections if s[0] not in FIRST_SECTIONS]
    out = list(head)
    for _, lines in first + rest:
        if out and out[-1].strip():
            out.append("")
        out.extend(lines)
    return "\n".join(out).rstrip("\n") + ("\n" if doc.endswith("\n") else "")


def render_rule_page(rule: Rule) -> str:
    """One rule's page of the docs site: its docstring (What it does, Why it matters,
    Example, Use instead, Options, References) under the code and name, with the default
    severity, what it checks, and the option reference from its option schema."""
    doc = printable(rule.doc)
    title = doc.splitlines()[0].strip() if doc else rule.name
    body = doc.split("\n", 1)[1].strip() if "\n" in doc else ""
    out = [
        f"# {rule.code}: {rule.name}",
        "",
        f"{title}",
        "",
        f"Default severity: **{rule.severity.label}** · checks "
        f"{SCOPE_WORDS.get(rule.scope, rule.scope)}"
        + (" · opt-in: not in the default selection" if rule.opt_in else "")
        + (" · has a fix (`--fix`)" if rule.fixable else ""),
        "",
        body,
    ]
    if rule.options_schema:
        out += ["", "## Option reference", "", *_options_table(rule)]
    out += [
        "",
        "---",
        "",
        f"`gpulint rule {rule.code}` prints this page. Severity, selection and options are "
        "set in the [configuration](../configuration.md); the [rule index](../rules.md) lists "
        "every rule.",
    ]
    return plain("\n".join(out) + "\n")


def render_rule_index(rules: Sequence[Rule]) -> str:
    """The docs site's rule index: one row per rule, linking to its page."""
    out = [
        "# Rules",
        "",
        "Every rule has a page, generated from its documentation (`gpulint rule CODE` prints",
        "the same text). Severities are defaults: the [configuration](configuration.md) changes",
        "them (`severity:`), turns rules off (`ignore:`) and sets their options (`rules:`).",
        "",
        "| Code | Name | Severity | Checks | What it does |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rule in sorted(rules, key=_family):
        out.append(
            f'| <a id="{rule.code.lower()}"></a>[{rule.code}]({rule_page(rule.code)[:-5]}.md) '
            f"| {rule.name} | {rule.severity.label} | "
            f"{SCOPE_WORDS.get(rule.scope, rule.scope)} | {_cell(_first_sentence(rule))} |"
        )
    return plain("\n".join(out) + "\n")


def _first_sentence(rule: Rule) -> str:
    """The summary's first sentence: the rule's page has the rest."""
    first = escape(rule.summary).split(". ", 1)[0].rstrip(".")
    return first + "."


def rule_json(rule: Rule) -> dict[str, Any]:
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity.label,
        "scope": rule.scope,
        "origin": rule.origin,
        "module": rule.module,
        "summary": rule.summary,
        "options": dict(rule.options_schema),
        "doc": rule.doc,
    }


def render_json(rules: Sequence[Rule]) -> str:
    # The documentation of a rule folder's rules is the tree's text (gpulint.util.textsafe).
    return json_text([rule_json(r) for r in rules]) + "\n"
