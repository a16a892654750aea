"""A snapshot per rule fixture: what ``gpulint check`` says about it and what its fixes change.

``tests/test_rule_fixtures.py`` pins each finding's line and code, as the ``# expect:``
comments write them; a change of message, column or severity, or of what a fix writes, would
pass there unseen. Each fixture therefore has a snapshot, ``tests/snapshots/<CODE>/<file>.snap``:
its findings as the text format prints them (``line:column CODE severity: message`` and the
``help:`` line below it) and the unified diff of its fixes (``--diff --unsafe-fixes``: every
fix, safe or not). Every run
compares them; after reviewing a change, ``make snapshots`` writes them anew (as ruff's
``cargo insta review``), and the diff of the snapshots is part of the commit.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from gpulint.fix.loop import UNSAFE, fix_text
from gpulint.lint.engine import Linter
from gpulint.model import Finding
from tests.conftest import ROOT
from tests.test_rule_fixtures import (
    FIXTURE_FILES,
    RULE_FIXTURES,
    linter as linter,
    linters as linters,
)

SNAPSHOTS = ROOT / "tests" / "snapshots"
#: Where the fixtures a message may name (a cluster inventory) are, from the root.
FIXTURES = "tests/fixtures/cluster/"
#: ``make snapshots`` sets it: write the snapshots instead of comparing them.
UPDATE = os.environ.get("GPULINT_UPDATE_SNAPSHOTS") == "1"


def snapshot_path(fixture: Path) -> Path:
    return SNAPSHOTS / fixture.parent.name / f"{fixture.name}.snap"


def snapshot(path: Path, linter: Linter) -> str:
    label = path.relative_to(ROOT).as_posix()
    raw = path.read_bytes()
    findings = linter.lint_bytes(label, raw)
    lines = [f"# {label}", "# findings"]
    for f in findings:
        mark = f" [suppressed by {f.suppression.source}]" if f.suppression is not None else ""
        fix = f" [fix: {f.fix.applicability}]" if f.fix is not None and f.fix.available else ""
        lines.append(f"{f.line}:{f.column} {f.rule} {f.severity.label}: {f.message}{mark}{fix}")
        if f.help:
            lines.append(f"  help: {f.help}")
    lines.append("# fixes (--diff --unsafe-fixes)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:  # YML005's fixtures: not text, nothing to fix
        return "\n".join(lines) + "\n"
    fixed = fix_text(linter.lint_shaped, label, text, UNSAFE).text
    diff = difflib.unified_diff(
        text.splitlines(keepends=True), fixed.splitlines(keepends=True), label, label
    )
    lines.extend(line.rstrip("\n") for line in diff)
    # A message may name a file by its absolute path (a cluster inventory): the snapshot
    # names it from the checkout, wherever that is.
    return ("\n".join(lines) + "\n").replace(f"{ROOT}/", "")


@pytest.mark.parametrize(
    "path", FIXTURE_FILES, ids=[f"{p.parent.name}/{p.name}" for p in FIXTURE_FILES]
)
def test_fixture_snapshot(path: Path, linter: Linter) -> None:
    now = snapshot(path, linter)
    stored = snapshot_path(path)
    if UPDATE:
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_text(now, encoding="utf-8")
        return
    assert stored.is_file(), f"no snapshot for {path.name}: run `make snapshots` and review it"
    before = stored.read_text(encoding="utf-8")
    assert now == before, "the findings or fixes changed; review, then `make snapshots`:\n" + (
        "".join(difflib.unified_diff(before.splitlines(True), now.splitlines(True), "was", "now"))
    )


def test_every_snapshot_has_its_fixture() -> None:
    fixtures = {snapshot_path(p) for p in FIXTURE_FILES}
    stale = sorted(
        str(p.relative_to(ROOT)) for p in SNAPSHOTS.glob("*/*.snap") if p not in fixtures
    )
    assert stale == [], "snapshots of fixtures that are gone: delete them"
    assert RULE_FIXTURES.is_dir()


#: A finding's message at most, in characters: what is wrong and where, in one sentence, as
#: ruff's and kube-linter's are; what to do is its help line, why it matters
#: ``gpulint rule CODE``. The names a message quotes from the manifest count, the fixture's
#: folder in a path does not (a user lints from the repository's root, with the inventory
#: beside the manifests).
MAX_MESSAGE = 160
#: GL900 quotes the exception a rule raised (up to ``gpulint.lint.engine.MAX_DETAIL``
#: characters of it): its length is the rule's, not gpulint's.
NOT_YET_SHORT = frozenset({"GL900"})


def long_messages(findings: list[Finding], folder: str) -> list[str]:
    """The findings whose message is over :data:`MAX_MESSAGE`, each with its length."""
    out = []
    for f in findings:
        message = f.message.replace(folder, "").replace(f"{ROOT}/", "").replace(FIXTURES, "")
        if len(message) > MAX_MESSAGE and f.rule not in NOT_YET_SHORT:
            out.append(f"{f.rule} ({len(message)}): {message}")
    return out


@pytest.mark.parametrize(
    "path", FIXTURE_FILES, ids=[f"{p.parent.name}/{p.name}" for p in FIXTURE_FILES]
)
def test_every_rules_messages_are_short(path: Path, linter: Linter) -> None:
    label = path.relative_to(ROOT).as_posix()
    findings = linter.lint_bytes(label, path.read_bytes())
    folder = path.parent.relative_to(ROOT).as_posix() + "/"
    assert long_messages(findings, folder) == []
