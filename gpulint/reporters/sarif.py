"""``--format sarif``: a SARIF 2.1.0 log for GitHub code scanning, editors and other viewers.

One run. ``tool.driver.rules`` describes every rule loaded (id, PascalCase name, short and
full description, the rule's docs as help text and markdown, ``helpUri``, default level;
the docs of a rule from a rule folder or a declarative rule, the tree's text, as help text
only: :func:`trusted_docs`);
each finding is a result with ``ruleIndex``, ``level`` (error, warning, or note for info),
a message that names the object, and a region of the offending key or value.

Positions: ``startLine``/``startColumn``/``endLine``/``endColumn`` are 1-based, the end is
exclusive and columns count Unicode code points, so the run sets ``columnKind`` to
``unicodeCodePoints``.

Artifact URIs: a file inside the working directory is a relative URI with
``uriBaseId: %SRCROOT%``, and ``originalUriBaseIds`` maps ``%SRCROOT%`` to the working
directory as an absolute ``file:`` URI; a file outside it (``../x.yaml``, ``/tmp/x.yaml``) is
an absolute ``file:`` URI. Standard input read without ``--stdin-filename`` is the relative
URI ``%3Cstdin%3E`` (the ``<stdin>`` label) without a base; with ``--stdin-filename`` it is
that path, like any file. A URI percent-encodes the file name's bytes (``artifactLocation.uri``
is an RFC 3986 URI reference): UTF-8 for text, and a byte that is not UTF-8 as itself
(``bad%FF.yaml``, as a ``file:`` URI names such a file), so every file name has a valid URI
that names exactly that file.
Other strings (messages, object names, the command line) keep their exact value, except an
undecodable byte of a file name, which is written ``\\xff``
(:func:`gpulint.util.textsafe.json_text`).

Fingerprints: ``partialFingerprints["gpulint/v1"]`` hashes the rule, the artifact URI, the
object (kind, namespace, name) and the YAML path inside the document — never a line or
column — so an alert keeps its identity when unrelated lines move. A numeric suffix
(``:1``, ``:2``) tells apart results that would otherwise share a fingerprint.

Suppressed findings are results with ``suppressions`` (kind ``inSource`` or ``external``,
status ``accepted``, the justification). The invocation records the command line, working
directory, start and end time, exit code, ``executionSuccessful`` (false only for exit
code 2) and tool errors as notifications: paths that do not exist, and each rule that raised
(GL900, also a result) with the object's location.
"""

from __future__ import annotations

import os
import shlex
from collections import Counter
from datetime import datetime, timezone
from pathlib import PurePath
from typing import Any

from gpulint import __version__
from gpulint.model import (
    RULE_ERROR_CODE,
    SRCROOT,
    Finding,
    Fix,
    ObjectRef,
    Related,
    Severity,
    Span,
    file_location,
    fingerprint,
)
from gpulint.report import Report
from gpulint.reporters import ReportContext
from gpulint.rule import Rule
from gpulint.util.textsafe import json_text

SCHEMA_URI = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
INFORMATION_URI = "https://github.com/gpulint/gpulint"
#: The docs site (``make docs``; mkdocs.yml's ``site_url``, pyproject.toml's
#: ``[project.urls] Documentation``), where each built-in rule has a page.
DOCS_URL = "https://gpulint.github.io/gpulint/"
FINGERPRINT_KEY = "gpulint/v1"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _sentence(text: str) -> str:
    """SARIF messages are complete sentences: end them with a period (or ? or !)."""
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + "."


def _plain(markdown: str) -> str:
    return markdown.replace("`", "")


def pascal_name(name: str) -> str:
    """``gpu-pod-missing-toleration`` -> ``GpuPodMissingToleration`` (SARIF friendly name)."""
    return "".join(part[:1].upper() + part[1:] for part in name.replace("_", "-").split("-"))


def title(rule: Rule) -> str:
    """The rule's one-line title: the docstring's first line."""
    first = rule.doc.strip().split("\n", 1)[0].strip()
    return first if first and not first.startswith("#") else rule.summary


def trusted_docs(rule: Rule) -> bool:
    """Whether the rule's documentation is gpulint's or an installed plugin's, not the tree's.

    A rule folder's rules (``rule-dirs``, ``--rule-dir``: origin ``rule-dir ...``) and
    declarative rules are files of the linted repository, maybe a stranger's pull request.
    Code scanning renders ``markdown`` on the alerts it shows for gpulint, so their docs are
    only ``text`` (shown as written, no link or image of the pull request's choosing) and
    their rules have no ``helpUri``.
    """
    return rule.origin == "built-in" or rule.origin.startswith("plugin ")


def rule_page(code: str) -> str:
    """A rule's page in the docs site, relative to its root: ``rules/gpu001.html``."""
    return f"rules/{code.lower()}.html"


def help_uri(rule: Rule) -> str | None:
    """The address of a built-in rule's page; a plugin's or a rule folder's rule has none."""
    return DOCS_URL + rule_page(rule.code) if rule.origin == "built-in" else None


def rule_descriptor(rule: Rule) -> dict[str, Any]:
    summary = rule.summary
    trusted = trusted_docs(rule)
    full: dict[str, str] = {"text": _sentence(_plain(summary))}
    help_: dict[str, str] = {"text": rule.doc}
    if trusted:
        full["markdown"] = summary
        help_["markdown"] = rule.doc
    descriptor: dict[str, Any] = {
        "id": rule.code,
        "name": pascal_name(rule.name),
        "shortDescription": {"text": _sentence(_plain(title(rule)))},
        "fullDescription": full,
        "help": help_,
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {
            "tags": ["yaml"] if rule.scope == "input" else ["kubernetes", "gpu"],
            "gpulint/name": rule.name,
            "gpulint/scope": rule.scope,
        },
    }
    uri = help_uri(rule)
    if uri:
        descriptor["helpUri"] = uri
    return descriptor


def _placeholder_descriptor(finding: Finding) -> dict[str, Any]:
    """A rule that reported but was not passed in ``ctx.rules`` (never for the CLI)."""
    return {
        "id": finding.rule,
        "name": pascal_name(finding.name),
        "shortDescription": {"text": _sentence(finding.name)},
        "fullDescription": {"text": _sentence(finding.name)},
        "help": {"text": _sentence(finding.name)},
        "defaultConfiguration": {"level": LEVELS[finding.severity]},
    }


# -- locations -------------------------------------------------------------------------------


def srcroot_uri(cwd: str) -> str:
    uri = PurePath(os.path.abspath(cwd)).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def artifact_location(path: str, ctx: ReportContext) -> dict[str, Any]:
    """Relative to ``%SRCROOT%`` when the file is inside the working directory
    (:func:`gpulint.model.file_location`)."""
    return file_location(path, ctx.cwd, ctx.stdin_label)


def _region(f: Finding) -> dict[str, int]:
    return _span_region(f.span)


def _span_region(s: Span) -> dict[str, int]:
    return {
        "startLine": s.line,
        "startColumn": s.column,
        "endLine": s.end_line,
        "endColumn": s.end_column,
    }


def _object_name(ref: ObjectRef) -> str:
    name = ref.name or "?"
    return f"{ref.namespace}/{name}" if ref.namespace else name


def _logical_location(ref: ObjectRef) -> dict[str, Any]:
    props = {k: v for k, v in ref.as_json().items() if v is not None}
    return {
        "name": ref.name or "?",
        "fullyQualifiedName": f"{ref.kind or '?'}/{_object_name(ref)}",
        "kind": "resource",
        "properties": props,
    }


def message_text(f: Finding) -> str:
    """``Deployment 'serving/llama': <message>. <help>.`` -- reads on its own in an alert
    list, with what to do."""
    said = f" {_sentence(f.help[:1].upper() + f.help[1:])}" if f.help else ""
    if f.object is None:
        return _sentence(f.message) + said
    head = f"{f.object.kind or 'Object'} '{_object_name(f.object)}': {f.message}"
    return _sentence(head) + said


def _location(f: Finding, ctx: ReportContext) -> dict[str, Any]:
    """Where a finding is: the file and region, and the object when there is one."""
    location: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": artifact_location(f.path, ctx),
            "region": _region(f),
        }
    }
    if f.object is not None:
        location["logicalLocations"] = [_logical_location(f.object)]
    return location


def _related(index: int, r: Related, ctx: ReportContext) -> dict[str, Any]:
    """Another place a finding is about. A template is a repository file; a place in a
    chart's or overlay's rendered output is in no file, so it is a message (and the folder
    and the line in ``properties``), never a location code scanning would open."""
    location: dict[str, Any] = {"id": index, "message": {"text": r.message}}
    if r.kind == "rendered":
        location["properties"] = {
            "kind": r.kind,
            "renderedFrom": r.path,
            "line": r.span.line,
            "column": r.span.column,
        }
        return location
    location["physicalLocation"] = {
        "artifactLocation": artifact_location(r.path, ctx),
        "region": {"startLine": r.span.line, "startColumn": r.span.column},
    }
    location["properties"] = {"kind": r.kind}
    return location


def _fix(fix: Fix, artifact: dict[str, Any]) -> dict[str, Any]:
    """A SARIF ``fix``: the edits as replacements of exact regions (an empty region inserts).

    SARIF has no notion of a fix's safety: it is in the fix's ``properties``.
    """
    return {
        "description": {"text": fix.message},
        "artifactChanges": [
            {
                "artifactLocation": artifact,
                # A deletion has no insertedContent (SARIF 3.57.3).
                "replacements": [
                    {"deletedRegion": _span_region(e.span)}
                    | ({"insertedContent": {"text": e.content}} if e.content else {})
                    for e in fix.edits
                ],
            }
        ],
        "properties": {"applicability": fix.applicability},
    }


def _result(f: Finding, rule_index: int, ctx: ReportContext, seen: Counter[str]) -> dict[str, Any]:
    location = _location(f, ctx)
    digest = fingerprint(f, location["physicalLocation"]["artifactLocation"]["uri"])
    seen[digest] += 1
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": rule_index,
        "level": LEVELS[f.severity],
        "message": {"text": message_text(f)},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT_KEY: f"{digest}:{seen[digest]}"},
        "properties": {"yamlPath": list(f.doc_path), "document": f.document},
    }
    if f.related:
        result["relatedLocations"] = [_related(i, r, ctx) for i, r in enumerate(f.related, start=1)]
    fix = f.fix
    if fix is not None and fix.available:
        result["fixes"] = [_fix(fix, location["physicalLocation"]["artifactLocation"])]
    sup = f.suppression
    if sup is not None:
        suppression: dict[str, Any] = {
            "kind": sup.kind,
            "status": "accepted",
            "properties": {"source": sup.source},
        }
        if sup.justification:
            suppression["justification"] = sup.justification
        result["suppressions"] = [suppression]
    return result


# -- the log ---------------------------------------------------------------------------------


def _utc(moment: datetime) -> str:
    moment = moment.astimezone(timezone.utc) if moment.tzinfo else moment
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def _rule_error_notification(f: Finding, ctx: ReportContext) -> dict[str, Any]:
    """A rule that raised (GL900), as a tool execution notification at the object."""
    return {
        "level": "error",
        "message": {"text": message_text(f)},
        "locations": [_location(f, ctx)],
    }


def _invocation(ctx: ReportContext, report: Report) -> dict[str, Any]:
    invocation: dict[str, Any] = {
        "executionSuccessful": ctx.exit_code != 2,
        "exitCode": ctx.exit_code,
    }
    if ctx.argv:
        invocation["commandLine"] = shlex.join(ctx.argv)
        invocation["arguments"] = list(ctx.argv[1:])
    invocation["workingDirectory"] = {"uri": srcroot_uri(ctx.cwd)}
    if ctx.start_time is not None:
        invocation["startTimeUtc"] = _utc(ctx.start_time)
    if ctx.end_time is not None:
        invocation["endTimeUtc"] = _utc(ctx.end_time)
    notifications = [{"level": "error", "message": {"text": _sentence(e)}} for e in ctx.errors]
    if report.rule_errors:
        notifications += [
            _rule_error_notification(f, ctx) for f in report.findings if f.rule == RULE_ERROR_CODE
        ]
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    invocation["properties"] = {"failOn": ctx.fail_on.label}
    return invocation


def sarif_log(report: Report, ctx: ReportContext) -> dict[str, Any]:
    descriptors = [rule_descriptor(r) for r in ctx.rules]
    index = {r.code: i for i, r in enumerate(ctx.rules)}
    for f in report.findings:
        if f.rule not in index:
            index[f.rule] = len(descriptors)
            descriptors.append(_placeholder_descriptor(f))
    seen: Counter[str] = Counter()
    results = [_result(f, index[f.rule], ctx, seen) for f in report.findings]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "gpulint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": INFORMATION_URI,
                "rules": descriptors,
            }
        },
        "invocations": [_invocation(ctx, report)],
        "originalUriBaseIds": {
            SRCROOT: {
                "uri": srcroot_uri(ctx.cwd),
                "description": {"text": "The working directory gpulint ran in."},
            }
        },
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def render(report: Report, ctx: ReportContext) -> str:
    return json_text(sarif_log(report, ctx)) + "\n"
