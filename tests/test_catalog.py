"""The rule catalog: every rule is documented and tested, and docs/rules.md is current."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpulint.commands.rules import render_markdown
from gpulint.lint.finder import load_rules
from gpulint.rule import DOC_SECTIONS, Rule
from tests.conftest import (
    NOT_FROM_MANIFESTS,
    ROOT,
    RULE_FIXTURES,
    gpulint_in_process,
    rule_fixtures,
)

BUILTIN: list[Rule] = [r for r in load_rules() if r.origin == "built-in"]


@pytest.mark.parametrize("rule", BUILTIN, ids=[r.code for r in BUILTIN])
def test_rule_has_every_doc_section(rule: Rule) -> None:
    missing = [s for s in DOC_SECTIONS if not rule.section(s)]
    assert not missing, f"{rule.code} docstring lacks sections: {missing}"
    assert rule.doc.splitlines()[0].strip(), f"{rule.code} docstring has no title line"


@pytest.mark.parametrize("rule", BUILTIN, ids=[r.code for r in BUILTIN])
def test_rule_has_failing_and_passing_fixtures(rule: Rule) -> None:
    if rule.code in NOT_FROM_MANIFESTS:
        assert (ROOT / NOT_FROM_MANIFESTS[rule.code]).is_file()
        return
    folder = RULE_FIXTURES / rule.code
    assert rule_fixtures(rule.code, "fail"), f"{rule.code}: no {folder}/fail-*.yaml"
    assert rule_fixtures(rule.code, "pass"), f"{rule.code}: no {folder}/pass-*.yaml"


def test_every_fixture_folder_is_a_rule() -> None:
    codes = {r.code for r in BUILTIN}
    folders = {p.name for p in RULE_FIXTURES.iterdir() if p.is_dir()}
    assert folders <= codes, f"fixture folders without a rule: {sorted(folders - codes)}"


def test_docs_rules_md_is_current() -> None:
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == render_markdown(BUILTIN), "docs/rules.md is stale: run `make generate`"


def test_rules_command_formats() -> None:
    markdown = gpulint_in_process("rules", "--isolated", "--format", "markdown", cwd=ROOT)
    assert markdown.returncode == 0, markdown.stderr
    assert markdown.stdout == render_markdown(load_rules())
    listed_json = gpulint_in_process("rules", "--isolated", "--format", "json", cwd=ROOT)
    assert listed_json.returncode == 0, listed_json.stderr
    listed = json.loads(listed_json.stdout)
    by_code = {r["code"]: r for r in listed}
    assert by_code["GPU020"]["options"]["taints"]["default"][0]["key"] == "nvidia.com/gpu"
    assert by_code["GL100"]["scope"] == "input"
    assert all(r["doc"] and r["summary"] for r in listed)


def test_a_scaffolded_rule_is_found_documented_and_its_fixtures_hold(tmp_path: Path) -> None:
    """``make new-rule``: the module, a failing and a passing fixture, and nothing else to
    touch -- the rule is found by its file name and its fixtures pass as written."""
    from gpulint.lint.engine import Linter
    from gpulint.lint.finder import RuleSource, load_rules, package_sources
    from gpulint.settings import Settings
    from tests.conftest import expectations
    from tests.new_rule import main, scaffold

    (tmp_path / "rules").mkdir()
    module, fail, passing = scaffold("ZZZ901", "example-rule", tmp_path)
    assert module == tmp_path / "rules" / "zzz901_example_rule.py"
    with pytest.raises(ValueError, match="ZZZ901 is taken"):
        scaffold("ZZZ901", "other-name", tmp_path)
    assert main(["ZZZ902", "Not_Kebab", "--root", str(tmp_path)]) == 2
    # Found by file name, as the built-in rules are (here under a private package).
    sources = package_sources("zzz_rules", [str(tmp_path / "rules")], "built-in")
    assert [s.code for s in sources] == ["ZZZ901"]
    rule = load_rules([RuleSource("ZZZ901", str(module), "rule-dir x", str(module))])[0]
    assert [s for s in DOC_SECTIONS if not rule.section(s)] == []
    linter = Linter([*load_rules(), rule], Settings(select=frozenset({"ALL"})))
    for path, expected in ((fail, [("ZZZ901", 12)]), (passing, [])):
        text = path.read_text()
        found = linter.lint_text(str(path), text)
        # Every other rule stays quiet on the fixtures, except one scaffolded into rules/ and
        # not written yet: it reports the same example, with the skeleton's message.
        skeleton = "what is wrong, and what to write"
        ours = [f for f in found if f.rule == "ZZZ901" or skeleton not in f.message]
        assert sorted((f.rule, f.line) for f in ours) == expected, path.name
        assert sorted((code, line) for line, code, _ in expectations(text)) == expected


def _codes(text: str) -> set[str]:
    """The rule codes a text names, ranges (``GPU050 to GPU054``) spelt out."""
    import re

    codes = set(re.findall(r"\bGPU\d{3}\b", text))
    for a, b in re.findall(r"\bGPU(\d{3}) to GPU(\d{3})\b", text):
        codes |= {f"GPU{i:03d}" for i in range(int(a), int(b) + 1)}
    return codes


def test_templates_as_written_are_judged_by_the_as_written_rules() -> None:
    # docs/rendering.md's "Templates as written" names the rules that judge what a chart's
    # templates write as plain text: exactly those that declare AS_WRITTEN, each of whose
    # documentation says so (and no other rule's but GL201's, which names the mechanism).
    text = (ROOT / "docs" / "rendering.md").read_text(encoding="utf-8")
    bullet = text.split("- **Templates as written.**", 1)[1].split("\n- **", 1)[0]
    listed = bullet.split("Only the rules", 1)[1].split("What a value", 1)[0]
    as_written = {r.code for r in BUILTIN if r.as_written}
    assert as_written and _codes(listed) == as_written
    said = {r.code for r in BUILTIN if '"Templates as written"' in r.doc}
    assert said - {"GL201"} == as_written  # GL201 names the mechanism for its notice


def test_gl203_names_every_whole_object_rule() -> None:
    # GL203's documentation is where a user reads which checks a patch skips: every rule
    # that declares WHOLE_OBJECT is named there, and its PLACEMENT_FREE list is the rules'.
    doc = next(r for r in BUILTIN if r.code == "GL203").doc
    whole = {r.code for r in BUILTIN if r.whole_object}
    assert whole - _codes(doc) == set()
    listed = doc.split("(`PLACEMENT_FREE = True`:", 1)[1].split(")", 1)[0]
    assert _codes(listed) == {r.code for r in BUILTIN if r.whole_object and r.placement_free}
