"""The real-world corpus (``GPULINT_CORPUS``) as a test: findings kept in a reviewed golden file.

``tests/golden/corpus-findings.txt`` holds one line per finding, ``file:line:col CODE``, with
the file relative to the corpus folder, for every file of the corpus and ``_invalid/``, linted
with every rule (opt-in ones included: ``select: [ALL]``) and the default options. Every
line there was reviewed as a true positive;
``docs/corpus-review.md`` explains the non-obvious ones.

Regenerate it after a deliberate change, then review the diff::

    GPULINT_CORPUS=/path/to/corpus .venv/bin/python -m tests.corpus
"""

from __future__ import annotations

import sys
from pathlib import Path

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.lint.runner import run
from gpulint.settings import Settings
from gpulint.util.discover import targets
from tests.conftest import CORPUS, ROOT, missing_reason

GOLDEN = ROOT / "tests" / "golden" / "corpus-findings.txt"


def corpus_findings() -> list[str]:
    """``file:line:col CODE`` for every finding in the corpus, sorted."""
    assert CORPUS is not None, missing_reason("GPULINT_CORPUS")
    found, missing = targets([str(CORPUS)])
    assert not missing
    # Every rule, the opt-in ones (GPU003) too: their findings stay reviewed.
    report = run(Linter(load_rules(), Settings(select=frozenset({"ALL"}))), found)
    rows = []
    for finding in report.findings:
        rel = Path(finding.path).resolve().relative_to(CORPUS.resolve()).as_posix()
        rows.append((rel, finding.line, finding.column, finding.rule))
    return [f"{f}:{line}:{col} {code}" for f, line, col, code in sorted(rows)]


def main() -> int:
    if CORPUS is None:
        sys.stderr.write(missing_reason("GPULINT_CORPUS") + "\n")
        return 2
    lines = corpus_findings()
    GOLDEN.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sys.stdout.write(f"wrote {len(lines)} findings to {GOLDEN.relative_to(ROOT)}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
