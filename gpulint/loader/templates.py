"""A file that is a template, not YAML: Go or Jinja actions (``{{ }}``, ``{% %}``, ``{# #}``),
envsubst variables (``${VAR}``) or a program's bare placeholders glued to the text before them
(``annotations:NLB_ANNOTATIONS``, ``"All"LOG_CONFIG``: a name in capitals with an underscore
right after a ``:`` or a quote, where the program inserts YAML) or between double underscores
(``__TLS_PORT__``, on a line of its own) that keep it from parsing until they are filled in.

When a text fails to parse, ``template_check`` blanks every template action it holds (a
line that holds only actions becomes an empty line, an action inside a line becomes as many
``x``, a bare placeholder as many spaces: what is inserted there is YAML of its own; line
numbers and columns stay) and parses again. If the text parses then, the actions
were what broke it: the file is a template outside a chart, reported once as GL205 (info)
instead of a syntax error. If it still does not parse, the syntax error stands. A text that
parses is a template too when a placeholder stands where a string is due
(``parsed_placeholder``: ``value: {job_id}``, ``image: [IMAGE_IDENTIFIER]``).

Linear in the text: each opener's closer is searched for once, and an opener without a
closer ends the search for that kind of action.
"""

from __future__ import annotations

from typing import Any

from gpulint import codes
from gpulint.loader.document import Problem
from gpulint.loader.library import YamlLib
from gpulint.model import Span

#: Openers and closers of template actions, and what each is, for the message.
_ACTIONS = {
    "{{": ("}}", "a Go or Jinja template action ({{ ... }})"),
    "{%": ("%}", "a Jinja template tag ({% ... %})"),
    "{#": ("#}", "a Jinja template comment ({# ... #})"),
    "${": ("}", "an envsubst variable (${...})"),
    "": ("", "a placeholder another program fills in"),
    "[": ("]", "a placeholder the reader fills in"),
}
#: A bare placeholder: capitals with an underscore, glued to the ``:`` or quote before it
#: (``annotations:NLB_ANNOTATIONS``), where a value or a key would have a space; or capitals
#: between double underscores anywhere (``__TLS_PORT__`` on a line of its own, which an
#: install script's ``sed`` replaces with YAML); capitals with an underscore in brackets
#: glued to text (``[GCLOUD_PROJECT]-media``), and lower-case ones (``name:
#: [your_alias]@[your_domain].com``, a sample's address for the reader to fill in); a name
#: between double ``@`` (``@@IMAGE@@``);
#: a ``{name}`` format field glued to text (``{REGISTRY}/app:1``, ``{job_id}-launcher``), or
#: as a key (``{GPU_RESOURCE_NAME}: 8``: blanked as a name, so the line keeps its key);
#: a name between ``%`` (``code: %EKS_ACTIVATION_CODE%``, ``name: %NAMESPACE%``: a ``%``
#: starts no plain value); a ``<name>`` or a ``{NAME}`` format field alone on its line
#: (``<hostNet>`` where a generator writes ``hostNetwork: true`` or nothing, ``{RDMA_RESOURCES}``
#: where a program's ``str.format`` writes the resource lines).
_PLACEHOLDER = (
    r"(?<=[:\"'])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b"
    r"|(?<![A-Za-z0-9_%])%[A-Za-z][A-Za-z0-9_]*%(?![A-Za-z0-9_%])"
    r"|(?m:^[ \t]*(?P<alone><[A-Za-z][A-Za-z0-9_]*>|\{[A-Za-z_][A-Za-z0-9_]*\})"
    r"[ \t\r]*(?:#[^\n]*)?$)"
    r"|(?<![A-Za-z0-9_])__[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*__(?![A-Za-z0-9_])"
    r"|\[[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\](?=[^\s,\]#])"
    r"|(?P<inline>\[[a-z][a-z0-9]*(?:_[a-z0-9]+)+\](?=[^\s,\]#]))"
    r"|@@[A-Za-z][A-Za-z0-9_]*@@"
    r"|(?m:^[ \t]*(?:- +)?(?P<key>\{[A-Za-z_][A-Za-z0-9_.]*\})(?=:[ \t\r\n]))"
    r"|\{[A-Za-z_][A-Za-z0-9_.]*\}(?=[A-Za-z0-9_/.:-])"
    r"|(?<=[A-Za-z0-9_/.:-])\{[A-Za-z_][A-Za-z0-9_.]*\}"
)
#: A placeholder that parses as YAML where a string is due, the whole value of its key on its
#: line: a Python format field (``value: {job_id}``, ``nvidia.com/gpu: {descriptor.gpus}``: a
#: flow mapping of one key and no value) as the value of ``value``, ``image``, ``name``,
#: ``namespace`` or a key with a ``/`` (a label, an annotation, a resource name), or capitals
#: with an underscore in brackets as the value of ``value`` or ``image`` (``value:
#: [GCLOUD_PROJECT]``: a list of one name; ``add: [NET_RAW]`` is a real list), or capitals
#: with an underscore as an object's ``apiVersion`` or ``kind`` (``apiVersion: DAEMONSET_API``:
#: a version is lower-case, a kind has no ``_``), which a program or the reader replaces
#: before the file is applied; and an envsubst variable where a list or YAML of its own is
#: inserted: the whole value of ``command`` or ``args`` (``command: ${CMD}``), or alone on its
#: line below a key (``limits:`` over ``${MEM_LIMIT}``; ``- ${MODEL}`` is a list's string).
_PARSED_PLACEHOLDER = (
    r"(?m)^[ \t]*(?:(?:- +)?(?:"
    r"(?:value|image|name|namespace|[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+): +"
    r"(\{[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\})"
    r"|(?:value|image): +(\[[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\])"
    r"|(?:apiVersion|kind): +([\"']?)([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\3"
    r"|(?:command|args): +(\$\{[A-Za-z_][A-Za-z0-9_]*\})"
    r")|(\$\{[A-Za-z_][A-Za-z0-9_]*\}))[ \t]*(?:#[^\n]*)?$"
)
#: A line that starts a block scalar (``script: |``, ``- >-``): the lines below it that are
#: indented deeper are its text, not YAML.
_BLOCK_START = r"(?:^|[ \t]|:)[|>][-+0-9]*[ \t]*(?:#.*)?$"


#: The openers, for one search (compiled on first use by ``re``: only broken files need it).
_OPENER = r"\{\{|\{%|\{#|\$\{"
#: An envsubst variable's name (``${VAR}``, ``${VAR:-default}``): other ``${`` (a shell
#: expansion in a script) are left as written.
_ENV_NAME = r"[A-Za-z_][A-Za-z0-9_]*(?:}|:?[-=+?])"


#: What an action's characters become before each line is judged (never in a text that
#: parses: libyaml refuses a NUL).
_MARK = "\x00"


class _Action:
    __slots__ = ("end", "kind", "start")

    def __init__(self, start: int, end: int, kind: str) -> None:
        self.start, self.end, self.kind = start, end, kind


def _actions(text: str) -> list[_Action]:
    """The template actions of ``text``, in order (at most one pass over the text)."""
    import re

    found: list[_Action] = []
    dead: set[str] = set()  # openers whose closer is not in the rest of the text
    at = 0
    while True:
        match = re.compile(_OPENER).search(text, at)  # re caches the compiled pattern
        if match is None:
            break
        opener = match.group()
        start = match.start()
        if opener in dead:
            at = start + 2
            continue
        if opener == "${" and re.compile(_ENV_NAME).match(text, start + 2) is None:  # cached
            at = start + 2
            continue
        closer = _ACTIONS[opener][0]
        close = _go_close(text, start + 2) if opener == "{{" else text.find(closer, start + 2)
        if close < 0:
            dead.add(opener)
            at = start + 2
            continue
        found.append(_Action(start, close + len(closer), opener))
        at = close + len(closer)
    # Bare placeholders outside the actions (found in order, and not overlapping: the action
    # each one might be inside is the last to start before it).
    from bisect import bisect_right

    starts = [a.start for a in found]
    # A bracketed lower-case name stands for part of a value (``[your_alias]@...``): blanked
    # as text, not as YAML inserted there.
    bare = [
        _Action(
            *m.span("alone" if m.group("alone") else "key" if m.group("key") else 0),
            "[" if m.group("inline") or m.group("key") else "",
        )
        for m in re.compile(_PLACEHOLDER).finditer(text)  # re caches the compiled pattern
        if (i := bisect_right(starts, m.start()) - 1) < 0 or found[i].end <= m.start()
    ]
    if bare:
        found = sorted(found + bare, key=lambda a: a.start)
    return found


def _go_close(text: str, at: int) -> int:
    """Where the ``}}`` that ends a Go or Jinja action begun before ``at`` is, or -1: a
    ``}}`` inside the action's quoted strings (``"{a: {b: 1}}"``, a raw `` `...` ``, Jinja's
    ``'...'`` and Go's rune ``'"'``) does not end it. One pass: each match moves past a
    string (an unclosed one to its line's end, or the text's for a raw string) or stops at
    the closer, and is never read again."""
    import re

    step = re.compile(r'\}\}|"(?:\\.|[^"\\\n])*"?|\'(?:\\.|[^\'\\\n])*\'?|`[^`]*`?')  # re caches it
    while True:
        match = step.search(text, at)
        if match is None:
            return -1
        if match.group() == "}}":
            return match.start()
        at = max(match.end(), at + 1)


def _blanked(text: str, actions: list[_Action]) -> str:
    """``text`` with each action blanked, its lines and columns kept: a line holding only
    actions (and white space, or a comment) becomes blank, an action among other text
    becomes ``x``s."""
    parts: list[str] = []
    at = 0
    for action in actions:
        parts.append(text[at : action.start])
        if not action.kind:  # a bare placeholder: YAML is inserted there, read as nothing
            parts.append(" " * (action.end - action.start))
        else:
            parts.append(
                "".join(c if c == "\n" else _MARK for c in text[action.start : action.end])
            )
        at = action.end
    parts.append(text[at:])
    lines = "".join(parts).split("\n")
    for number, line in enumerate(lines):
        if _MARK in line:
            rest = line.replace(_MARK, "").strip()
            if not rest:  # nothing else: an empty line, which a block scalar's first
                lines[number] = ""  # lines may be (spaces deeper than its text may not)
                continue
            alone = rest.startswith("#")  # a comment
            lines[number] = line.replace(_MARK, " " if alone else "x")
    return "\n".join(lines)


#: A control action (Go's ``if``, ``range``, ``with``, ``define``, ``template``, ``block``,
#: ``else`` and ``end``; any Jinja tag): the text it shapes is not known until it runs.
_CONTROL = r"\{\{-?\s*(?:if|range|with|define|template|block|else|end)\b|\{%"


def _controls(text: str, actions: list[_Action]) -> bool:
    """Does ``text`` hold a control action? Its branches and loops write keys and items that
    blanking cannot stand in for (an ``if`` around a key whose items a ``range`` writes),
    so a text that still does not parse once blanked is a template all the same."""
    import re

    pattern = re.compile(_CONTROL)  # re caches the compiled pattern
    return any(a.kind in ("{{", "{%") and pattern.match(text, a.start) for a in actions)


def _event_error(text: str, lib: YamlLib) -> Exception | None:
    """What stops ``text`` from parsing (events only, nothing built); None when it parses."""
    parser: Any = lib.event_parser(text)
    try:
        while parser.check_event():
            parser.get_event()
        return None
    except lib.YAMLError as exc:
        return exc
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()


def _parses(text: str, lib: YamlLib, failure: Exception | None) -> bool:
    """Does ``text`` parse, given what stopped libyaml's events (``failure``, None: nothing)?"""
    if failure is None:
        return True
    if "found unexpected ':'" not in str(getattr(failure, "problem", "")):
        return False
    # libyaml refuses a ':' in a flow plain scalar that go-yaml reads: ask ruamel's scanner.
    from ruamel.yaml.loader import BaseLoader

    pure: Any = BaseLoader(text)
    try:
        while pure.check_event():
            pure.get_event()
        return True
    except lib.YAMLError:
        return False


def template_check(text: str, lib: YamlLib, error: int) -> tuple[Problem | None, Any]:
    """GL205 for a text that failed to parse (at offset ``error``) and parses once its
    template actions are blanked, or holds a control action (``{{ if }}``, ``{{ range }}``,
    ``{% ... %}``), at the last action on or before the line of the error; else None, with
    what still stops the blanked text from parsing (the parser's error, at the same offsets as
    in the text; None when the text holds no action): a text that is a template *and* broken
    is broken where the filled-in text is, not at its first placeholder."""
    if _MARK in text:
        return None, None
    actions = _actions(text)
    if not actions:
        return None, None
    blanked = _blanked(text, actions)
    failure = _event_error(blanked, lib)
    # With control actions, what blanking leaves wrong may be the branches' structure (an
    # item where a key was due: a parser's error), which rendering settles; a token's error
    # (a scanner's: a tab, a character no token starts with) no branch explains.
    structure = failure is not None and type(failure).__name__ == "ParserError"
    if not _parses(blanked, lib, failure) and not (structure and _controls(text, actions)):
        return None, failure
    line_end = text.find("\n", error)
    limit = len(text) if line_end < 0 else line_end
    first = next((a for a in reversed(actions) if a.start <= limit), actions[0])
    what = _ACTIONS[first.kind][1]
    if first.kind in ("", "["):
        what = f"{what} ({text[first.start : first.end]})"
    return _template_at(
        text, first.start, first.end, f"{what} here makes this file a template"
    ), None


def _template_at(text: str, start: int, end: int, what: str) -> Problem:
    """GL205 at ``text[start:end]`` (cut at its line's end), saying ``what``."""
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    end = end if line_end < 0 else min(end, line_end)
    line, column = text.count("\n", 0, start) + 1, start - line_start + 1
    return Problem(
        codes.TEMPLATE_NOT_RENDERED,
        Span(line, column, line, column + max(end - start, 1)),
        f"{what}, not YAML: it was not linted from this document on; lint what it renders "
        "(`gpulint check --render` for a Helm chart or Kustomize overlay, `gpulint check -` "
        "for another renderer's output), or leave it out with `exclude` in .gpulint.yaml",
    )


def parsed_placeholder(text: str) -> tuple[int, int] | None:
    """Where the first placeholder of :data:`_PARSED_PLACEHOLDER` outside a block scalar is
    in ``text`` (a text that parses), as offsets; None when it holds none. Linear: one search
    for the placeholders, and one pass over the lines for the block scalars when one is
    found."""
    import re

    if not re.search(r"[{\[][A-Za-z_]|(?:apiVersion|kind): +[\"']?[A-Z][A-Z0-9]*_", text):
        return None
    from bisect import bisect_right

    blocks: list[tuple[int, int]] | None = None
    for match in re.compile(_PARSED_PLACEHOLDER).finditer(text):  # re caches it
        group = next(g for g in (1, 2, 4, 5, 6) if match.group(g) is not None)
        if blocks is None:
            blocks = _block_scalars(text)
        i = bisect_right(blocks, (match.start(), len(text))) - 1
        if i >= 0 and blocks[i][0] <= match.start() < blocks[i][1]:
            continue  # the text of a block scalar (a script, a prompt)
        return match.span(group)
    return None


def _block_scalars(text: str) -> list[tuple[int, int]]:
    """The offsets of the block scalars' texts in ``text``, in order: from the line after a
    line that ends with ``|`` or ``>`` to the first later line, not blank, indented no deeper
    than that line."""
    import re

    start_pattern = re.compile(_BLOCK_START)  # re caches it
    out: list[tuple[int, int]] = []
    inside: tuple[int, int] | None = None  # (indentation of the starting line, offset)
    at = 0
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if inside is not None and stripped.strip() and indent <= inside[0]:
            out.append((inside[1], at))
            inside = None
        if inside is None and start_pattern.search(line):
            inside = (indent, at + len(line) + 1)
        at += len(line) + 1
    if inside is not None:
        out.append((inside[1], len(text)))
    return out


def placeholder_problem(text: str, start: int, end: int) -> Problem:
    """GL205 at a placeholder that parses (``value: {job_id}``): the file is a template."""
    shown = text[start:end] if end - start <= 40 else text[start : start + 37] + "..."
    what = f"a placeholder another program fills in ({shown}) makes this file a template"
    return _template_at(text, start, end, what)
