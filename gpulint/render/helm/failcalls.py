"""A chart's ``fail`` put on the values key that made it run.

A chart refuses a setting with a guarded ``fail``::

    {{- if and .Values.resources.gpus.enabled (not .Values.gpuResourcesEnabledOverride) }}
    {{- fail "..." }}
    {{- end }}

helm names the ``fail``'s template line, but the user edits the values key: since the
``fail`` ran, every operand of the ``if`` it is in (the innermost block around it, in its
first branch) that is a plain ``.Values.<path>``, alone or an argument of a top-level
``and``, was true. Of those, the key the error's message names (else the first) is the
place, when the values file helm applies it from writes a true value there (a ``--set``
value stays at the template line, naming the flag). Anything else -- a condition of
``or``, ``not``, ``eq`` or an ``include``, a ``fail`` in an ``else`` branch or inside a
``range``, ``with`` or ``define``, a key no values file writes -- leaves the error at the
template line helm names, as before.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Protocol

from gpulint import codes
from gpulint.model import Span
from gpulint.render.helm.conditions import truthy
from gpulint.render.helm.templatetext import OPENS, actions
from gpulint.render.helm.valuelines import ChartValues
from gpulint.render.mapping import lookup, read_text

if TYPE_CHECKING:
    from gpulint.render.helm.documents import Resolved
    from gpulint.render.helm.run import Failure
    from gpulint.render.tools import ToolResult


class HelmRendered(ChartValues, Protocol):
    """What explaining helm's failure needs of the rendered chart (``chart.HelmRendered``,
    which calls this module): its values and the templates its headers name."""

    def resolve(self, source: str) -> Resolved | str: ...


_VALUES = re.compile(r"^\$?\.Values((?:\.[A-Za-z0-9_-]+)+)$")
_FAIL = re.compile(r"(?:^|[\s(|])fail\b")
#: Bytes of a template read to find the guard.
MAX_TEMPLATE = 1 << 20


def guard_keys(text: str, line: int) -> list[tuple[str, ...]]:
    """The ``.Values`` paths that were true for the ``fail`` on ``line`` (1-based) of a
    template's ``text`` to run, in the order its ``if`` reads them; [] when it proves none."""
    stack: list[tuple[str, str, bool]] = []  # (block, its condition, past an else)
    for m in actions(text):
        body = m.body
        if body.startswith("/*"):
            continue
        word = m.word
        if word in OPENS:
            stack.append((word, body[len(word) :].strip(), False))
        elif word == "else" and stack:
            stack[-1] = (stack[-1][0], stack[-1][1], True)
        elif word == "end" and stack:
            stack.pop()
        elif _FAIL.search(body) and _line(text, m.begin) <= line <= _line(text, m.stop):
            if not stack or stack[-1][0] != "if" or stack[-1][2]:
                return []
            return _true_operands(stack[-1][1])
    return []


def _line(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _true_operands(condition: str) -> list[tuple[str, ...]]:
    """``.Values.a.b`` or ``and .Values.a.b (not ...) ...`` -> the plain keys at top level."""
    cond = condition.strip()
    while cond.startswith("(") and cond.endswith(")") and _balanced(cond[1:-1]):
        cond = cond[1:-1].strip()
    args = _top_level(cond)
    if args[:1] == ["and"]:
        args = args[1:]
    elif len(args) != 1:
        return []
    keys = []
    for arg in args:
        m = _VALUES.match(arg)
        if m:
            keys.append(tuple(m.group(1)[1:].split(".")))
    return keys


def _balanced(text: str) -> bool:
    depth = 0
    for c in text:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


def _top_level(cond: str) -> list[str]:
    """Arguments of a pipeline's command at depth 0 (a parenthesised one is one argument)."""
    out: list[str] = []
    depth, cur, quote = 0, "", ""
    for c in cond:
        if quote:
            cur += c
            quote = "" if c == quote else quote
        elif c in "\"'`":
            cur, quote = cur + c, c
        elif c == "(":
            depth, cur = depth + 1, cur + c
        elif c == ")":
            depth, cur = depth - 1, cur + c
        elif c.isspace() and depth == 0:
            out, cur = [*out, cur] if cur else out, ""
        else:
            cur += c
    return [*out, cur] if cur else out


def failure(rendered: HelmRendered, result: ToolResult) -> Failure:
    """helm's error (``result``) as GL200: at the template line helm names
    (:func:`gpulint.render.helm.sources.placed_error`), or the values line of the key that made a
    ``fail`` there run (:func:`on_guard`)."""
    from gpulint.render.helm.run import Failure
    from gpulint.render.helm.sources import placed_error

    stderr, code = result.stderr, result.returncode
    message, line, path, column = placed_error(stderr, code, rendered.resolve, rendered.folder)
    failed = Failure(codes.RENDER_FAILED, f"helm template failed: {message}", line, path, column)
    if path is None and "requires kubeVersion" in stderr:
        return _at_kube_version(failed, rendered.folder)
    guarded = on_guard(failed, stderr, rendered)
    return _placeholder(failed) if guarded is failed else guarded


#: helm's parse error for a bare word in braces: ``{{litellm_key}}`` is a call of a function.
_UNDEFINED = re.compile(r'function "([A-Za-z_][A-Za-z0-9_]*)" not defined')


def _placeholder(failed: Failure) -> Failure:
    """A template line holding ``{{name}}`` that helm reads as a call of a function it does
    not know: a placeholder another tool fills in (a Jinja or deploy-script template in the
    chart's folder), said so."""
    m = _UNDEFINED.search(failed.message)
    if m is None or failed.path is None:
        return failed
    from gpulint.render.mapping import read_text

    lines = (read_text(failed.path) or "").splitlines()
    raw = lines[failed.line - 1] if 0 < failed.line <= len(lines) else ""
    token = re.search(r"\{\{-?\s*" + re.escape(m.group(1)) + r"\s*-?\}\}", raw)
    if token is None:
        return failed
    return failed._replace(
        message=failed.message + f" ({token.group(0)} is a placeholder another tool fills in, "
        "not a Helm action: helm renders this template only once it is filled in)",
        column=token.start() + 1,
    )


_KUBE_VERSION = re.compile(r"^kubeVersion:[ \t]*", re.MULTILINE)


def _at_kube_version(failed: Failure, chart: str) -> Failure:
    """A chart whose ``kubeVersion:`` excludes the version helm renders for: at that line
    of its Chart.yaml, saying how to render for another version."""
    text = read_text(os.path.join(chart, "Chart.yaml"), 1 << 20) or ""
    m = _KUBE_VERSION.search(text)
    if m is None:
        return failed
    line = text.count("\n", 0, m.start()) + 1
    note = (
        " (render for a version it accepts with --kube-version, or `render: kube-version:` "
        "in the configuration)"
    )
    return failed._replace(message=failed.message + note, line=line, column=m.end() - m.start() + 1)


def on_guard(failure: Failure, stderr: str, rendered: HelmRendered) -> Failure:
    """``failure`` (helm's error at a template line) moved to the values line of the key
    that made the ``fail`` there run, if one is proven (the module's docstring)."""
    import json

    from gpulint.render.helm.sources import error_place
    from gpulint.render.helm.valuelines import values_place

    where = error_place(stderr)
    if failure.path is None or where is None or where.rendered:
        return failure
    tpl = _TPL.search(stderr)
    compare = _COMPARE.search(stderr)
    if "execution error" not in stderr and tpl is None and compare is None:
        return failure
    resolved = rendered.resolve(where.source)
    if isinstance(resolved, str) or resolved.archive is not None:
        return failure
    if compare is not None:
        return _on_compare(failure, rendered, resolved, compare)
    if tpl is not None:
        return _on_tpl(failure, rendered, resolved, tpl, stderr, where.line)
    text = read_text(resolved.real, MAX_TEMPLATE) or ""
    asked = required_key(text, where.line)
    if asked is not None:
        return _on_required(failure, rendered, resolved, asked, where.line)
    keys = guard_keys(text, where.line)
    named = [k for k in keys if re.search(rf"(?<![\w.]){re.escape('.'.join(k))}(?!\w)", stderr)]
    if not keys:
        return failure
    key = (named or keys)[0]
    span = Span(where.line, 1, where.line, 1)
    place = values_place(rendered, resolved, key, (), failure.path, where.line, span, key=False)
    if place is None:
        return failure
    if place.path == failure.path:  # a --set value: no file holds it
        return failure._replace(message=failure.message + place.note)
    value = next(
        (
            got
            for file, prefix in rendered.values_files(resolved)
            if (doc := rendered.values_doc(file)) is not None
            for present, got in [lookup(doc.data, (*prefix, *key))]
            if present
        ),
        None,
    )
    if not truthy(value):
        return failure
    shown = os.path.relpath(resolved.path, rendered.folder)
    note = (
        f" (the chart's `fail` at {shown}:{where.line} runs because .Values.{'.'.join(key)} "
        f"is {json.dumps(value, default=str)}, set at this line: the `if` around it reads it)"
    )
    return failure._replace(
        message=failure.message + note,
        path=place.path,
        line=place.span.line,
        column=place.span.column,
    )


_REQUIRED = re.compile(
    r"""\{\{-?\s*(?:\$[\w]+\s*:?=\s*)?(?:"""
    r"""required\s+(?:"[^"]*"|`[^`]*`)\s+\$?\.Values((?:\.[A-Za-z0-9_-]+)+)"""
    r"""|\$?\.Values((?:\.[A-Za-z0-9_-]+)+)\s*\|\s*required\s+(?:"[^"]*"|`[^`]*`))\s*-?\}\}"""
)


def required_key(text: str, line: int) -> tuple[str, ...] | None:
    """The values path the one ``required`` action on the template's ``line`` asks for
    (``{{ required "msg" .Values.x }}``, ``{{ .Values.x | required "msg" }}``), if one is."""
    lines = text.splitlines()
    if not 0 < line <= len(lines):
        return None
    found = [m.group(1) or m.group(2) for m in _REQUIRED.finditer(lines[line - 1])]
    if len(found) != 1:
        return None
    return tuple(found[0].strip(".").split("."))


def _on_required(
    failure: Failure, rendered: HelmRendered, resolved: Resolved, key: tuple[str, ...], line: int
) -> Failure:
    """A ``required`` value left empty: at the values line that leaves it empty, or the
    mapping it goes under when no values file sets it (a ``--set`` value: as it was)."""
    from gpulint.render.helm.setflags import set_by

    options = rendered.options
    if set_by(options.set, (*resolved.chain[0][1], *key), options.configured_set) is not None:
        return failure  # a --set value: helm's line, naming it, is where it is said
    shown = os.path.relpath(resolved.path, rendered.folder)
    dotted = ".".join(key)
    for file, prefix in rendered.values_files(resolved):
        doc = rendered.values_doc(file)
        if doc is None:
            continue
        present, value = lookup(doc.data, (*prefix, *key))
        if present:
            if truthy(value):
                return failure  # set, yet refused: the template decides why
            span = doc.key_span((*prefix, *key))
            note = (
                f" (the chart's `required` at {shown}:{line} asks for .Values.{dotted}, "
                "which is empty here: set it at this line)"
            )
            return _moved(failure, file, span, note)
    if len(key) < 2:
        return failure
    for file, prefix in rendered.values_files(resolved):
        doc = rendered.values_doc(file)
        if doc is None:
            continue
        present, value = lookup(doc.data, (*prefix, *key[:-1]))
        if present and isinstance(value, dict):
            note = (
                f" (the chart's `required` at {shown}:{line} asks for .Values.{dotted}, which "
                f"no values file sets: add {key[-1]} under {'.'.join(key[:-1])} here)"
            )
            return _moved(failure, file, doc.key_span((*prefix, *key[:-1])), note)
    return failure


def _moved(failure: Failure, file: str, span: Span, note: str) -> Failure:
    from gpulint.render.mapping import label_of

    return failure._replace(
        message=failure.message + note, path=label_of(file), line=span.line, column=span.column
    )


#: helm's error for a comparison of a whole number with a decimal (``gt $gpuLimit 0.0``):
#: the function and its operands.
_COMPARE = re.compile(
    r"at <(eq|ne|lt|le|gt|ge) ([^<>\n]{1,200})>: error calling \1: "
    r"incompatible types for comparison"
)
_OPERAND = re.compile(r"\$?\.Values((?:\.[A-Za-z0-9_-]+)+)|\$([A-Za-z0-9_]+)")
_INDEXED = re.compile(r'^(?:index\s+)?\$?\.Values((?:\.[A-Za-z0-9_-]+)*)((?:\s+"[^"\\]*")*)$')


def _compared_key(text: str, operands: str) -> tuple[str, ...] | None:
    """The values path the one operand of a comparison that reads values reads: a plain
    ``.Values.<path>``, or a variable first bound to one (``$gpuLimit := index
    .Values.resources.limits "nvidia.com/gpu"``), written with literal keys."""
    found: list[tuple[str, ...]] = []
    for m in _OPERAND.finditer(operands):
        if m.group(1):
            found.append(tuple(m.group(1).strip(".").split(".")))
            continue
        bound = re.search(r"\{\{-?\s*\$" + re.escape(m.group(2)) + r"\s*:=\s*(.*?)\s*-?\}\}", text)
        expr = _INDEXED.match(bound.group(1).strip()) if bound else None
        if expr is None:
            return None
        dotted = tuple(p for p in expr.group(1).split(".") if p)
        found.append((*dotted, *re.findall(r'"([^"\\]*)"', expr.group(2))))
    return found[0] if len(found) == 1 else None


def _on_compare(
    failure: Failure, rendered: HelmRendered, resolved: Resolved, compare: re.Match[str]
) -> Failure:
    """A comparison helm refused for its operands' types, when the value it compares is a
    ``--set`` flag's: helm reads a ``--set`` number as a whole number and a values file's as
    a decimal, so a chart written for the second fails with the first. The message names
    the flag (no file holds it: the error stays at helm's line)."""
    from gpulint.render.helm.setflags import set_by

    text = read_text(resolved.real, MAX_TEMPLATE) or ""
    key = _compared_key(text, compare.group(2))
    if key is None:
        return failure
    options = rendered.options
    where = set_by(options.set, (*resolved.chain[0][1], *key), options.configured_set)
    if where is None:
        return failure
    note = (
        f" (the value `{compare.group(1)}` compares, .Values.{'.'.join(key)}, is {where}: "
        "helm reads a --set number as a whole number and a values file's number as a "
        "decimal, and the template compares it with a value of another type; pass it in a "
        "values file, or with --set-string if the template converts text)"
    )
    return failure._replace(message=failure.message + note)


#: helm's error for a values text ``tpl`` could not run: the action and the values it read.
_TPL = re.compile(r"at <tpl \(?[^>]*?\$?\.Values((?:\.[A-Za-z0-9_-]+)+)[^>]*>: error calling tpl")
_UNDEFINED = re.compile(r'function "([^"]{1,100})" not defined')


def _on_tpl(
    failure: Failure,
    rendered: HelmRendered,
    resolved: Resolved,
    tpl: re.Match[str],
    stderr: str,
    line: int,
) -> Failure:
    """A values text that ``tpl`` runs as a template and cannot parse (a Grafana
    dashboard's ``{{instance}}`` legend): at the values line holding the placeholder helm
    names (else the key ``tpl`` reads), when a values file sets it."""
    from gpulint.render.helm.setflags import set_by

    key = tuple(tpl.group(1).strip(".").split("."))
    options = rendered.options
    if set_by(options.set, (*resolved.chain[0][1], *key), options.configured_set) is not None:
        return failure  # a --set value: no file holds it
    name = _UNDEFINED.search(stderr)
    shown = os.path.relpath(resolved.path, rendered.folder)
    for file, prefix in rendered.values_files(resolved):
        doc = rendered.values_doc(file)
        if doc is None:
            continue
        present, value = lookup(doc.data, (*prefix, *key))
        if not present:
            continue
        at: tuple[object, ...] = (*prefix, *key)
        span = doc.key_span(at)
        held = ""
        token = (
            re.compile(r"\{\{-?\s*" + re.escape(name.group(1)) + r"\b[^}]*\}\}") if name else None
        )
        todo: list[tuple[tuple[object, ...], object]] = [(at, value)]
        while todo and token is not None:  # the first text that holds the placeholder
            where, node = todo.pop(0)
            if isinstance(node, dict):
                todo.extend(((*where, k), v) for k, v in node.items())
            elif isinstance(node, list):
                todo.extend(((*where, i), v) for i, v in enumerate(node))
            elif isinstance(node, str) and (m := token.search(node)):
                span, held = doc.value_span(where), m.group(0)
                break
        what = f"`{held}` here" if held else f".Values.{'.'.join(key)}"
        note = (
            f" ({what} is run as a template by `tpl` at {shown}:{line}: escape it, "
            f'{{{{ "{held or "{{...}}"}" }}}}, or keep it out of what tpl reads)'
        )
        return _moved(failure, file, span, note)
    return failure
