"""``--format gitlab``: a GitLab Code Quality report (the Code Climate subset GitLab reads).

A JSON array with one issue per finding, for ``artifacts: reports: codequality:`` in
``.gitlab-ci.yml`` (docs/ci.md): GitLab shows them in the merge request widget and the
diff. The format is GitLab's "Code Quality report format"
(https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format): each issue has
``description``, ``check_name``, ``fingerprint``, ``severity`` and ``location.path`` with
``location.lines.begin``; ``type`` and ``categories`` are added so the file is also a
valid Code Climate issue list.

* ``description``: the message with the object, as in SARIF (``Deployment 'llama': ...``).
* ``check_name``: the rule code.
* ``fingerprint``: the SARIF fingerprint (:func:`gpulint.model.fingerprint`: rule,
  file, object and YAML path, never a line), so an issue keeps its identity when lines move
  and GitLab tells new issues from fixed ones between the branch and its target. Findings
  that would share one get the hash of it and their rank (GitLab keeps only the first issue
  of a fingerprint).
* ``severity``: ``error`` is ``critical`` (the API server rejects the object, or the pod never
  runs), ``warning`` is ``major``, ``info`` is ``info``.
* ``location.path``: relative to the working directory (the repository root, where a CI
  job runs), ``/``-separated; ``lines`` the first and last line of the offending value.

Suppressed findings (comments, annotations, configuration, a baseline) are left out.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Any

from gpulint.model import Finding, Severity, fingerprint
from gpulint.report import Report
from gpulint.reporters import ReportContext
from gpulint.reporters.github import display_path
from gpulint.reporters.sarif import artifact_location, message_text
from gpulint.util.textsafe import json_text

SEVERITIES = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "info"}


def issue(f: Finding, ctx: ReportContext, seen: Counter[str]) -> dict[str, Any]:
    digest = fingerprint(f, artifact_location(f.path, ctx)["uri"])
    seen[digest] += 1
    if seen[digest] > 1:
        digest = hashlib.sha256(f"{digest}:{seen[digest]}".encode()).hexdigest()[:32]
    return {
        "type": "issue",
        "check_name": f.rule,
        "description": message_text(f),
        "categories": ["Bug Risk"],
        "fingerprint": digest,
        "severity": SEVERITIES[f.severity],
        "location": {
            "path": display_path(f.path, ctx.cwd),
            "lines": {"begin": f.span.line, "end": max(f.span.end_line, f.span.line)},
        },
    }


def render(report: Report, ctx: ReportContext) -> str:
    seen: Counter[str] = Counter()
    issues = [issue(f, ctx, seen) for f in report.findings if f.suppression is None]
    return json_text(issues, indent=2) + "\n"
