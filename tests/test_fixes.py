"""Fixes (``gpulint check --fix``): every fixable rule's failing fixtures, fixed.

For each fixture: the fixes of the rule are applied (``--unsafe-fixes``: all of them), and
the result must lint clean for that rule except for the findings that had no fix, parse as
the input did, and differ from the input only on the lines the fixes' edits claimed (a line
diff, computed independently of how the edits were applied).
"""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from gpulint.fix.loop import SAFE, UNSAFE, apply, fix_text
from gpulint.fix.places import Places, Skip
from gpulint.fix.text import BREAK, Source
from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.loader.stream import load_text
from gpulint.model import Edit, Finding
from gpulint.settings import Settings
from tests.conftest import RULE_FIXTURES

#: The rules that offer fixes, and whether their fixes are safe: what each declares (``FIX``).
FIXABLE = {r.code: r.fix for r in load_rules() if r.fix is not None}

CASES = [
    pytest.param(code, path, id=f"{code}/{path.name}")
    for code in FIXABLE
    for path in sorted((RULE_FIXTURES / code).glob("fail-*.yaml"))
]


@pytest.fixture(scope="module")
def rules() -> list:  # type: ignore[type-arg]
    return load_rules()


def linter_for(rules: list, code: str) -> Linter:  # type: ignore[type-arg]
    return Linter(rules, Settings(select=(code,)))


def available(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.fix is not None and f.fix.available]


def problems(text: str) -> tuple[int, list[str]]:
    result = load_text(text)
    codes = [p.code for p in result.problems]
    for doc in result.documents:
        codes.extend(p.code for p in doc.problems)
    return len(result.documents), sorted(codes)


def changed_lines_are_claimed(old: str, new: str, edits: list[Edit]) -> None:
    """Every line the line diff says changed is a line an edit covers (insertions: next to
    one), so nothing else in the file moved."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    claimed: list[tuple[int, int]] = []  # 0-based line ranges, inclusive
    for e in edits:
        last = e.span.end_line - 1 if e.span.end_column > 1 else e.span.end_line - 2
        claimed.append((e.span.line - 1, max(last, e.span.line - 1)))
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i1 == i2:  # an insertion before old line i1
            assert any(a <= i1 <= b + 1 for a, b in claimed), (i1, claimed)
            continue
        for line in range(i1, i2):
            if not any(a <= line <= b for a, b in claimed):
                # a line the edits moved (a key and its comment, to `limits:`) can make the
                # line diff align the other way round: every line no edit claims must then
                # still be there, in order
                _unclaimed_kept(old_lines, new_lines, claimed)
                return


def _unclaimed_kept(old: list[str], new: list[str], claimed: list[tuple[int, int]]) -> None:
    kept = [text for i, text in enumerate(old) if not any(a <= i <= b for a, b in claimed)]
    rest = iter(new)
    for text in kept:
        assert any(text == other for other in rest), text


@pytest.mark.parametrize(("code", "path"), CASES)
def test_fixed_fixture_lints_clean_parses_and_changes_only_the_fixed_lines(
    rules: list,  # type: ignore[type-arg]
    code: str,
    path: Path,
) -> None:
    text = path.read_text(encoding="utf-8")
    linter = linter_for(rules, code)
    before = [f for f in linter.lint_text(path.name, text) if f.rule == code]
    fixable = available(before)
    for f in fixable:
        assert f.fix is not None and f.fix.applicability == FIXABLE[code]
    result = fix_text(linter.lint_shaped, path.name, text, UNSAFE)
    after = [f for f in linter.lint_text(path.name, result.text) if f.rule == code]
    # Clean for the rule: what is left is what had no fix (an ambiguous case, content shared
    # through an anchor), and none of it has a fix to apply.
    assert available(after) == []
    assert len(after) == len(before) - len(fixable) or not fixable
    assert result.fixed >= len({f.fix.edits for f in fixable if f.fix is not None}) > 0 or (
        not fixable
    )
    assert problems(result.text) == problems(text)
    # One round, checked line by line: the lines that changed are the edits' lines.
    edits: list[Edit] = []
    taken: list[tuple[int, int]] = []
    for f in fixable:
        assert f.fix is not None
        if any(e.start < b and a < e.end for e in f.fix.edits for a, b in taken):
            continue
        if any(e.start == e.end and (e.start, e.start) in taken for e in f.fix.edits):
            continue
        taken.extend((e.start, e.end) for e in f.fix.edits)
        edits.extend(f.fix.edits)
    once = apply(text, edits)
    changed_lines_are_claimed(text, once, edits)
    assert problems(once) == problems(text)


def test_every_fixable_rule_fixes_one_of_its_fixtures(rules: list) -> None:  # type: ignore[type-arg]
    for code in FIXABLE:
        linter = linter_for(rules, code)
        found = [
            f
            for path in sorted((RULE_FIXTURES / code).glob("fail-*.yaml"))
            for f in linter.lint_text(path.name, path.read_text(encoding="utf-8"))
        ]
        assert available([f for f in found if f.rule == code]), code


def lint_fix(rules: list, text: str, code: str, mode: str = UNSAFE) -> str:  # type: ignore[type-arg]
    return fix_text(linter_for(rules, code).lint_shaped, "t.yaml", text, mode).text


GPU001_BLOCK = """\
apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  containers:
  - name: train
    image: pytorch/pytorch
    resources:
      requests:
        nvidia.com/gpu: 1   # one GPU
"""


def test_gpu001_moves_the_request_by_renaming_requests(rules: list) -> None:  # type: ignore[type-arg]
    fixed = lint_fix(rules, GPU001_BLOCK, "GPU001", SAFE)
    assert fixed == GPU001_BLOCK.replace("requests:", "limits:")


def test_gpu001_keeps_crlf_bom_comments_and_other_requests(rules: list) -> None:  # type: ignore[type-arg]
    text = GPU001_BLOCK.replace(
        "      requests:\n", '      requests:\n        cpu: "2"  # cpus\n'
    ).replace("\n", "\r\n")
    fixed = lint_fix(rules, text, "GPU001", SAFE)
    assert "\n" not in fixed.replace("\r\n", "")
    # the GPU moves to limits with its comment; cpu and its comment stay
    assert fixed == text.replace("        nvidia.com/gpu: 1   # one GPU\r\n", "").replace(
        "      requests:\r\n",
        "      limits:\r\n        nvidia.com/gpu: 1   # one GPU\r\n      requests:\r\n",
    )


def test_gpu001_in_flow_style(rules: list) -> None:  # type: ignore[type-arg]
    text = GPU001_BLOCK.replace(
        "    resources:\n      requests:\n        nvidia.com/gpu: 1   # one GPU\n",
        '    resources: {limits: {cpu: "2"}, requests: {nvidia.com/gpu: 1, cpu: "2"}}\n',
    )
    fixed = lint_fix(rules, text, "GPU001", SAFE)
    assert '{limits: {cpu: "2", nvidia.com/gpu: 1}, requests: {cpu: "2"}}' in fixed


def test_gpu003_deletes_the_request_and_an_emptied_requests(rules: list) -> None:  # type: ignore[type-arg]
    text = GPU001_BLOCK.replace(
        "      requests:\n", "      limits:\n        nvidia.com/gpu: 1\n      requests:\n"
    )
    fixed = lint_fix(rules, text, "GPU003", SAFE)
    assert fixed == GPU001_BLOCK.replace("requests:", "limits:").replace(
        "nvidia.com/gpu: 1   # one GPU\n", "nvidia.com/gpu: 1\n      # one GPU\n"
    )


def test_gpu020_adds_tolerations(rules: list) -> None:  # type: ignore[type-arg]
    text = GPU001_BLOCK.replace("requests:", "limits:")
    fixed = lint_fix(rules, text, "GPU020")
    assert fixed == text.replace(
        "  containers:\n",
        "  tolerations:\n  - key: nvidia.com/gpu\n    operator: Exists\n    effect: NoSchedule\n"
        "  containers:\n",
    )
    assert lint_fix(rules, text, "GPU020", SAFE) == text  # unsafe: not with --fix alone


def test_a_fix_in_aliased_content_is_skipped_with_the_reason(rules: list) -> None:  # type: ignore[type-arg]
    text = GPU001_BLOCK.replace("    resources:\n", "    resources: &res\n") + (
        "  - name: two\n    image: pytorch/pytorch\n    resources: *res\n"
    )
    linter = linter_for(rules, "GPU001")
    found = [f for f in linter.lint_text("t.yaml", text) if f.rule == "GPU001"]
    assert found and all(f.fix is not None and f.fix.skipped for f in found)
    assert "anchor" in (found[0].fix.skipped or "")  # type: ignore[union-attr]
    result = fix_text(linter.lint_shaped, "t.yaml", text, UNSAFE)
    assert result.text == text and result.fixed == 0
    assert any("not fixed" in note and "anchor" in note for note in result.notes)


def test_a_fix_on_a_go_template_line_is_skipped(rules: list) -> None:  # type: ignore[type-arg]
    text = GPU001_BLOCK.replace(
        "nvidia.com/gpu: 1   # one GPU", 'nvidia.com/gpu: "{{ .Values.gpus }}"'
    )
    linter = linter_for(rules, "GPU001")
    found = [f for f in linter.lint_text("t.yaml", text) if f.rule == "GPU001"]
    assert found and all(f.fix is not None and "template" in (f.fix.skipped or "") for f in found)


def test_source_offsets_count_lines_as_libyaml() -> None:
    src = Source("a\r\nb\rc\nd")
    assert src.starts == [0, 3, 5, 7]
    assert src.offset(3, 2) == 6 and src.point(6) == (3, 2)
    assert src.newline == "\r\n"


@settings(max_examples=300)
@given(st.text(alphabet="ab \n\r\x85\u2028\u2029", max_size=40))
def test_source_line_starts_match_libyaml_breaks(text: str) -> None:
    """The split taken for texts with LF breaks only gives the starts the break pattern
    gives (and texts with other breaks take the pattern itself)."""
    starts = [0, *(m.end() for m in BREAK.finditer(text))]
    first = BREAK.search(text)
    src = Source(text)
    assert src.starts == starts
    written = first.group() if first is not None else None
    assert src.newline == (written if written in ("\n", "\r\n", "\r") else "\n")


def _own_verdicts(text: str, plain: bool) -> dict[tuple[int, tuple[object, ...]], str]:
    verdicts = {}
    for doc in load_text(text).documents:
        src = Source(text)
        src._plain = plain  # force the fast answer, or the full check
        for path in doc.positions:
            try:
                Places(src, doc, {}).own(path)
                verdicts[doc.index, path] = "own"
            except Skip as exc:
                verdicts[doc.index, path] = str(exc)
    return verdicts


PLAIN_EDGES = ["-\n", "a:\n  b: 1\n  c:\n  - x: 1\n    y: 2\n", "{a: {b: 1}, c: [1, 2]}\n"]


def _yaml_texts(folder: Path) -> list[str]:
    texts = []
    for p in sorted(folder.rglob("*.yaml")):
        try:
            texts.append(p.read_text(encoding="utf-8"))
        except UnicodeDecodeError:  # the decoding fixtures
            continue
    return texts


@pytest.mark.parametrize("where", ["edges", "fixtures", "examples"])
def test_plain_text_skips_the_ownership_check_with_the_same_verdicts(where: str) -> None:
    """``Source.plain`` lets ``Places.own`` skip its checks: on every text it calls plain
    (edge cases, the rule fixtures, the examples), the full check finds every path owned
    too."""
    if where == "edges":
        texts = PLAIN_EDGES
    else:
        root = Path(__file__).resolve().parent.parent
        texts = _yaml_texts(RULE_FIXTURES if where == "fixtures" else root / "examples")
    plain = [t for t in texts if Source(t).plain]
    assert len(plain) >= min(3, len(texts)), "too few plain texts to compare on"
    for text in plain:
        verdicts = _own_verdicts(text, False)
        assert set(verdicts.values()) <= {"own"}  # an empty or broken text has no paths
        assert _own_verdicts(text, True) == verdicts


def test_text_without_a_final_break_is_not_plain() -> None:
    """Why ``plain`` needs the final line break: the full check refuses an empty value at
    the very end of a text without one (outside its parent's region), so the fast answer
    would differ there; with the break, the two agree."""
    assert not Source("-").plain and Source("-\n").plain
    assert _own_verdicts("-", False)[0, (0,)] != "own"
    assert _own_verdicts("-\n", False)[0, (0,)] == "own"


MERGED = """\
apiVersion: v1
kind: Pod
metadata:
  name: train
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  resources:
    limits:
      nvidia.com/gpu: 1
  containers:
  - name: train
    image: pytorch/pytorch
    resources:
      <<: &defaults
        requests:
          memory: 1Gi
---
apiVersion: v1
kind: Pod
metadata:
  name: other
spec:
  containers:
  - name: other
    image: busybox
    resources: {<<: *defaults}
"""


def test_nothing_is_added_into_merged_content(rules: list) -> None:  # type: ignore[type-arg]
    """The container's resources hold only merged keys: a new `limits` must not land among
    them (that text is the anchor, shared with the other pod)."""
    linter = linter_for(rules, "GPU030")
    (found,) = [f for f in linter.lint_text("t.yaml", MERGED) if f.rule == "GPU030"]
    assert found.fix is not None and found.fix.skipped
    assert fix_text(linter.lint_shaped, "t.yaml", MERGED, UNSAFE).text == MERGED


def test_a_key_without_a_value_is_filled(rules: list) -> None:  # type: ignore[type-arg]
    """`tolerations:` or `limits: null` written empty: the fix gives it the value, below the
    key, and a comment after the key stays there."""
    empty = "  tolerations: null  # none yet\n"
    text = GPU001_BLOCK.replace("  containers:\n", empty + "  containers:\n")
    text = text.replace("      requests:\n", "      limits:\n      requests:\n")
    linter = linter_for(rules, "GPU001")
    once = fix_text(linter.lint_shaped, "t.yaml", text, SAFE).text
    assert once == text.replace("      limits:\n      requests:\n", "      limits:\n").replace(
        "        nvidia.com/gpu: 1   # one GPU\n", "        nvidia.com/gpu: 1\n      # one GPU\n"
    )
    fixed = lint_fix(rules, text, "GPU020")
    assert fixed == text.replace(
        "  tolerations: null  # none yet\n",
        "  tolerations:   # none yet\n  - key: nvidia.com/gpu\n    operator: Exists\n"
        "    effect: NoSchedule\n",
    )


def test_the_rules_that_say_how_their_fix_is_safe_are_the_fixable_ones(rules: list) -> None:  # type: ignore[type-arg]
    # A rule declares FIX; its documentation's "Fix safety" section says the same: the two
    # cannot drift apart (a fixable rule without the section, or a section without FIX).
    assert FIXABLE, "no rule declares a fix"
    for rule in rules:
        section = rule.section("Fix safety")
        if rule.fix is None:
            assert section is None, rule.code
        else:
            assert section is not None, rule.code
            assert section.split(":")[0].lower() == rule.fix, rule.code
