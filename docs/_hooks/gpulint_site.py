"""MkDocs hooks of the docs site (mkdocs.yml): what is generated while the site is built.

- One page per built-in rule, ``rules/<code>.md``, and the rule index ``rules.md``, from the
  rules themselves (gpulint.commands.rules.render_rule_page, render_rule_index): nothing generated
  is committed, so nothing can drift. The repository's docs/rules.md (the whole catalog on
  one page, for reading on the hosting site) is left out of the site, replaced by the index.
- ``changelog.md``, from the repository's CHANGELOG.md.
- Links: the Markdown files link the way the hosting site reads them (``../rules/x.py``,
  ``cluster-tutorial/``, ``https://github.com/gpulint/gpulint/blob/main/docs/x.md#a``). A link
  to another page of the site stays (or becomes) a link between pages; a link to any other
  file of the repository becomes its address on the hosting site, and a link to a rule's
  entry in docs/rules.md (``rules.md#gpu020``) a link to the rule's page.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
REPO = "https://github.com/gpulint/gpulint/"
_BLOB = re.compile(re.escape(REPO) + r"(?:blob|tree)/main/docs/([\w./-]+\.md)(#[\w-]+)?")
_LINK = re.compile(r"(\]\()(<?)([^)\s>]+)(>?(?:\s+\"[^\"]*\")?\))")
_FENCE = re.compile(r"^\s*(```|~~~)")
#: Where each generated page's text stands in the repository, for its relative links.
_SOURCES: dict[str, str] = {"changelog.md": "CHANGELOG.md"}


def _rules() -> list[Any]:
    from gpulint.lint.finder import load_rules

    return [r for r in load_rules() if r.origin == "built-in"]


def on_config(config: Any) -> Any:
    """The nav's ``Rules: rules.md`` becomes the index followed by every rule's page."""
    from gpulint.commands.rules import _family

    pages = [{"All rules": "rules.md"}] + [
        {f"{r.code} {r.name}": f"rules/{r.code.lower()}.md"} for r in sorted(_rules(), key=_family)
    ]
    config.nav = [
        {"Rules": pages} if item == {"Rules": "rules.md"} else item for item in config.nav or []
    ]
    return config


def on_files(files: Files, config: Any) -> Files:
    from gpulint.commands.rules import render_rule_index, render_rule_page

    catalog = files.get_file_from_path("rules.md")
    if catalog is not None:
        files.remove(catalog)
    rules = _rules()
    files.append(File.generated(config, "rules.md", content=render_rule_index(rules)))
    for rule in rules:
        path = f"rules/{rule.code.lower()}.md"
        files.append(File.generated(config, path, content=render_rule_page(rule)))
        _SOURCES[path] = f"docs/{path}"
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "changelog.md", content=changelog))
    return files


def _target(source: str, link: str) -> str:
    """A link of the Markdown file ``source`` (a repository path), as the site links it."""
    blob = _BLOB.fullmatch(link)
    if blob:  # an address of a docs page on the hosting site: the page of the site
        here = posixpath.dirname(source.removeprefix("docs/"))
        return posixpath.relpath(blob[1], here or ".") + (blob[2] or "")
    if re.match(r"^[a-z][a-z0-9+.-]*:|^#|^/", link):
        return link
    path, _, anchor = link.partition("#")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(source), path))
    if resolved == "docs/rules.md" and re.fullmatch(r"[a-z]+\d+", anchor):
        # docs/rules.md#gpu020 (the rule's entry on the one-page catalog): its own page.
        here = posixpath.dirname(source.removeprefix("docs/"))
        return posixpath.relpath(f"rules/{anchor}.md", here or ".")
    if resolved.startswith("docs/") and resolved.endswith(".md"):
        if source.startswith("docs/"):
            return link
        here = posixpath.dirname(source.removeprefix("docs/"))
        return posixpath.relpath(resolved[5:], here or ".") + (f"#{anchor}" if anchor else "")
    kind = "tree" if (ROOT / resolved).is_dir() else "blob"
    return f"{REPO}{kind}/main/{resolved}" + (f"#{anchor}" if anchor else "")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    source = _SOURCES.get(page.file.src_uri, f"docs/{page.file.src_uri}")
    out, fenced = [], False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            line = _LINK.sub(lambda m: m[1] + m[2] + _target(source, m[3]) + m[4], line)
            # A bare address of a docs page (rule references): a link to the site's page.
            line = re.sub(
                r"(?<![(<\[])" + _BLOB.pattern,
                lambda m: f"[{m[0]}]({_target(source, m[0])})",
                line,
            )
        out.append(line)
    return "\n".join(out)
