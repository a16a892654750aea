"""Every reference from the docs and the code's documentation to a file of this repository
resolves: the file exists and, where an anchor is given, the heading is there.

Checked: markdown links (``[text](target)``) in README.md, CHANGELOG.md, docs/*.md and
bench/README.md; links to this repository's own GitHub pages
(``https://github.com/gpulint/gpulint/blob/main/PATH#anchor``) anywhere in those files, in
every rule's documentation and in the code; and bare repository paths with an anchor
(``docs/domain.md#quantities``) in the code and data under gpulint/ and rules/. External
links are not fetched (the tests run without a network).
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

from gpulint.lint.finder import load_rules
from tests.conftest import ROOT

REPO_URL = "https://github.com/gpulint/gpulint/blob/main/"
DOCS = ROOT / "docs"
MARKDOWN = sorted(
    [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "bench" / "README.md", *DOCS.glob("*.md")]
)
RULES = ROOT / "rules"
CODE = sorted([*(ROOT / "gpulint").rglob("*.py"), *RULES.glob("*.py"), *RULES.glob("*.json")])

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REPO_LINK = re.compile(re.escape(REPO_URL) + r"([\w./-]+)(#[\w-]+)?")
_PATH_WITH_ANCHOR = re.compile(
    r"(?<![\w/.])((?:docs|rules|schemas|examples|bench)/[\w./-]+\.md)(#[\w-]+)"
)


def _prose(text: str) -> str:
    """Markdown without code blocks and inline code, where a link is only an example."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading)  # inline HTML
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link counts by its text
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    """The anchors of a markdown file: its headings (repeats numbered as GitHub does) and
    explicit ``id``/``name`` attributes."""
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set(re.findall(r"""<a\s+(?:id|name)=["']([^"']+)["']""", text))
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, flags=re.M):
        base = slug(heading)
        count = seen.get(base, 0)
        out.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return frozenset(out)


def problem(target: Path, anchor: str | None, where: str) -> str | None:
    """Why ``target#anchor`` does not resolve, or None."""
    if not target.exists():
        return f"{where}: {target.relative_to(ROOT) if target.is_relative_to(ROOT) else target}"
    if anchor and target.suffix == ".md" and anchor not in anchors(target):
        return f"{where}: #{anchor} is not a heading of {target.relative_to(ROOT)}"
    return None


def _check_repo_links(text: str, where: str) -> list[str]:
    problems = []
    for path, anchor in _REPO_LINK.findall(text):
        found = problem(ROOT / path.rstrip("."), anchor[1:] or None, f"{where} -> {path}")
        if found:
            problems.append(found)
    return problems


@pytest.mark.parametrize("doc", MARKDOWN, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_markdown_links_resolve(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    where = doc.relative_to(ROOT).as_posix()
    problems = _check_repo_links(text, where)
    for target in _LINK.findall(_prose(text)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        resolved = (doc.parent / path).resolve() if path else doc
        found = problem(resolved, anchor or None, f"{where} -> {target}")
        if found:
            problems.append(found)
    assert not problems, "\n".join(problems)


def test_rule_documentation_links_resolve() -> None:
    problems = []
    for rule in load_rules():
        problems += _check_repo_links(rule.doc, rule.code)
        # SARIF's helpUri is the rule's page on the docs site: tests/test_docs_site.py.
        for path, anchor in _PATH_WITH_ANCHOR.findall(rule.doc):
            found = problem(ROOT / path, anchor[1:], f"{rule.code} -> {path}{anchor}")
            if found:
                problems.append(found)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("source", CODE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_references_in_code_resolve(source: Path) -> None:
    text = source.read_text(encoding="utf-8")
    where = source.relative_to(ROOT).as_posix()
    problems = _check_repo_links(text, where)
    for path, anchor in _PATH_WITH_ANCHOR.findall(text):
        found = problem(ROOT / path, anchor[1:], f"{where} -> {path}{anchor}")
        if found:
            problems.append(found)
    assert not problems, "\n".join(problems)


def test_no_reference_to_files_outside_the_repository() -> None:
    """The rules' facts live in docs/domain.md; nothing cites a document kept elsewhere."""
    offenders = [
        p.relative_to(ROOT).as_posix()
        for p in [*MARKDOWN, *CODE]
        if "DOMAIN.md" in p.read_text(encoding="utf-8")
        # bench/ may name the developers' reference folder: it generates its corpora there.
        or (p.parent.name != "bench" and "../shared" in p.read_text(encoding="utf-8"))
    ]
    offenders += [r.code for r in load_rules() if "DOMAIN.md" in r.doc]
    assert not offenders


def test_the_checker_sees_broken_links(tmp_path: Path) -> None:
    """Not vacuous: a missing file, a missing anchor and a missing repository page are found."""
    doc = ROOT / "docs" / "domain.md"
    assert "quantities" in anchors(doc) and "gpu-taints-on-managed-clusters" in anchors(doc)
    assert problem(doc, "no-such-heading", "x") is not None
    assert problem(ROOT / "docs" / "nope.md", None, "x") is not None
    assert _check_repo_links(REPO_URL + "docs/domain.md#nope", "x")
    assert not _check_repo_links(REPO_URL + "docs/domain.md#quantities", "x")
    assert _PATH_WITH_ANCHOR.findall("see docs/domain.md#quantities.") == [
        ("docs/domain.md", "#quantities")
    ]
    assert slug("GPU001: extended-resource-requests-without-limits") == (
        "gpu001-extended-resource-requests-without-limits"
    )
    assert slug("Seeing what gpulint sees: `gpulint inspect`") == (
        "seeing-what-gpulint-sees-gpulint-inspect"
    )
    assert slug("The [yaml-test-suite](https://example.com) cases") == "the-yaml-test-suite-cases"
