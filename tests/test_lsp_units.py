"""The language server's pieces without the protocol: positions, incremental linting and
the conversion of fixes to code actions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as t

from gpulint.commands.common import load_rules
from gpulint.lint.engine import Linter
from gpulint.loader.decoding import decode
from gpulint.lsp import features
from gpulint.lsp.incremental import IncrementalLinter, cuttable, document_text
from gpulint.lsp.text import LineIndex
from gpulint.model import Edit, Finding, Fix, ObjectRef, Severity, Span
from tests.conftest import FIXTURES, ROOT
from tests.lsp_support import apply_edits

LINTER = Linter(load_rules())
#: Every fixture and example gpulint can decode (a few fixtures are bytes that are no text).
MANIFESTS = [
    p
    for p in sorted([*FIXTURES.rglob("*.yaml"), *(ROOT / "examples").glob("*.yaml")])
    if decode(p.read_bytes())[0] is not None
]


def test_positions_in_utf16_units_and_back() -> None:
    text = "a: 🚀x\r\nb: \U0001d524y\n\nc: z"
    index = LineIndex(text)
    # gpulint: line 1, column 5 is "x" (after "a: " and one code point).
    assert index.position(index.offset(1, 5)) == (0, 5)  # the rocket is two units
    assert index.position(index.offset(2, 5)) == (1, 5)
    assert index.to_offset(1, 5) == text.index("y")
    assert index.to_offset(0, 99) == text.index("\r")  # past the end: the line's end
    assert index.position(index.offset(4, 4)) == (3, 3)
    assert index.lsp_line_text(0) == "a: 🚀x"


def test_lines_gpulint_breaks_and_the_protocol_does_not() -> None:
    """NEL, LS and PS end a line for YAML's C scanner (gpulint's lines), not for LSP."""
    text = "a: 1\u2028b: 2\nc: 3"
    index = LineIndex(text)
    assert index.position(index.offset(2, 1)) == (0, 5)  # gpulint's line 2 is LSP's line 0
    assert index.position(index.offset(3, 1)) == (1, 0)
    assert index.gpulint_line(text.index("c")) == 3


def _key(findings: list[Finding]) -> list[tuple[object, ...]]:
    """Everything of each finding; of its fix, all but the new text's layout (a fix writes
    new lines in the style of the text it sees: alone, a document's own)."""

    def fix(f: Finding) -> object:
        if f.fix is None:
            return None
        edits = tuple((e.span, e.start, e.end, e.content.strip().split()[:1]) for e in f.fix.edits)
        return (f.fix.message, f.fix.applicability, f.fix.skipped, edits)

    return [(*f[:9], fix(f), f.suppression) for f in findings]


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_incremental_linting_gives_the_whole_files_findings(path: Path) -> None:
    """Cut at document markers, each piece linted alone (and found again in the cache
    after another text): the findings of the whole text, positions, messages, documents,
    suppressions and all."""
    # Decoded as gpulint decodes a file (UTF-16 and UTF-32 with a byte-order mark too): an
    # editor hands the server text, whatever the file's encoding.
    text, problem = decode(path.read_bytes())
    assert text is not None, problem
    whole = LINTER.lint_text(str(path), text)
    incremental = IncrementalLinter(LINTER, str(path), min_chars=0)
    assert _key(incremental.lint(text)) == _key(whole)
    incremental.lint("# an edit above everything\n---\n" + text)
    assert _key(incremental.lint(text)) == _key(whole)


def test_a_large_multi_document_text_is_cut_and_relinted_in_part() -> None:
    pod = (ROOT / "examples" / "bad-inference.yaml").read_text(encoding="utf-8")
    text = "\n---\n".join([pod] * 40)
    assert cuttable(text)
    incremental = IncrementalLinter(LINTER, "big.yaml", min_chars=0)
    first = incremental.lint(text)
    assert _key(first) == _key(LINTER.lint_text("big.yaml", text))
    calls: list[str] = []
    lint_shaped = LINTER.lint_shaped

    def counting(label: str, piece: str, kubernetes: bool | None = None) -> Any:
        calls.append(piece)
        return lint_shaped(label, piece, kubernetes=kubernetes)

    incremental.linter = type("L", (), {"lint_shaped": staticmethod(counting)})()  # type: ignore[assignment]
    edited = text.replace("name: llama-server", "name: llama-server-2", 1)
    again = incremental.lint(edited)
    assert len(calls) == 1  # only the edited document was linted again
    assert _key(again) == _key(LINTER.lint_text("big.yaml", edited))
    piece = document_text(edited, edited.index("llama-server-2"))
    assert "llama-server-2" in piece.text and piece.documents == 0


def _finding_with_fix(text: str, applicability: str) -> Finding:
    start = text.index("0.5")
    line = text[:start].count("\n") + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    span = Span(line, column, line, column + 3)
    return Finding(
        rule="GPU004",
        name="non-integer-gpu-quantity",
        severity=Severity.ERROR,
        path="pod.yaml",
        span=span,
        message="nvidia.com/gpu: 0.5 is not a whole number",
        object=ObjectRef("v1", "Pod", None, "p"),
        fix=Fix("round up to 1", (Edit(span, start, start + 3, "1"),), applicability),
    )


@pytest.mark.parametrize("applicability", ["safe", "unsafe"])
def test_a_rules_fix_is_a_code_action(applicability: str) -> None:
    """``Finding.fix`` to a quick fix: UTF-16 ranges, the safe fix preferred, the unsafe
    one marked, with astral characters before the edit."""
    text = 'k: "🚀🚀", v: {nvidia.com/gpu: 0.5}\n'
    finding = _finding_with_fix(text, applicability)
    index = LineIndex(text)
    actions = features.code_actions(
        "file:///pod.yaml", text, index, [finding], t.Range(t.Position(0, 0), t.Position(0, 40))
    )
    fix = actions[0]
    assert fix.is_preferred is (applicability == "safe")
    assert fix.title.endswith("(unsafe fix)") is (applicability == "unsafe")
    assert fix.kind == t.CodeActionKind.QuickFix
    assert fix.edit is not None and fix.edit.changes is not None
    (edit,) = fix.edit.changes["file:///pod.yaml"]
    assert edit.range.start.character == text.index("0.5") + 2  # two astral characters
    assert apply_edits(text, [edit]) == text.replace("0.5", "1")
