"""The docs site (``make docs``, mkdocs.yml): it builds offline with ``--strict``, has one page
per rule generated from the rule's docstring, SARIF's ``helpUri`` and ``gpulint rule CODE``
name those pages, and a real browser (headless Chromium) renders every rule page with no
broken link and no request that leaves the site. A screenshot of one rule page is kept in
``.test-output/docs-site/`` (git-ignored) and its path printed.

Chromium is a system package (``make ci-tools`` installs it, as root): without it the browser
test is skipped and says so. The build runs with its proxies pointed at a closed port, so a
theme or plugin that reached the network would fail it.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gpulint.lint.finder import load_rules
from gpulint.reporters.sarif import DOCS_URL, rule_page
from tests.conftest import ROOT, gpulint_in_process

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MKDOCS = Path(sys.executable).with_name("mkdocs")
OUTPUT = ROOT / ".test-output" / "docs-site"
BUILTIN = [r for r in load_rules() if r.origin == "built-in"]
#: The sections of a rule's documentation, as the ids of the page's headings.
SECTIONS = {
    "What it does": "what-it-does",
    "Why it matters": "why-it-matters",
    "Example": "example",
    "Use instead": "use-instead",
    "Options": "options",
    "References": "references",
}
#: No address off the site may be loaded by a page: scripts, stylesheets, images, fonts.
_REMOTE_ASSET = re.compile(
    r"<(?:script|img|iframe|source)\b[^>]*\bsrc=\"https?://"
    r"|<link\b(?=[^>]*\brel=\"(?:stylesheet|preload|preconnect|icon|manifest)\")[^>]*\bhref=\"https?://"
    r"|@import\s+url\(\s*[\"']?https?://|fonts\.googleapis|fonts\.gstatic",
)


def _offline_env() -> dict[str, str]:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env[name] = "http://127.0.0.1:9"  # the discard port: nothing answers
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    return env


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as `make docs` builds it (`mkdocs build --strict`), into a folder of its own."""
    out = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=_offline_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stderr, proc.stderr
    return out


def test_make_docs_builds_strict() -> None:
    dry = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", "docs"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    ).stdout  # fmt: skip
    assert "mkdocs build --strict --site-dir site" in dry


def test_every_rule_has_a_page_made_from_its_docstring(site: Path) -> None:
    for rule in BUILTIN:
        page = site / rule_page(rule.code)
        assert page.is_file(), rule.code
        html = page.read_text(encoding="utf-8")
        assert re.search(rf"<h1 id=\"[^\"]+\">{rule.code}: {re.escape(rule.name)}", html), rule.code
        for heading, anchor in SECTIONS.items():
            if f"## {heading}\n" in rule.doc:
                assert f'<h2 id="{anchor}">' in html, (rule.code, heading)
        if rule.options_schema:
            assert '<h2 id="option-reference">' in html, rule.code
            for option in rule.options_schema:
                assert f"<code>{option}</code>" in html, (rule.code, option)
    index = (site / "rules.html").read_text(encoding="utf-8")
    for rule in BUILTIN:
        assert f'href="{rule_page(rule.code).removeprefix("rules/")}"' in index or (
            f'href="{rule_page(rule.code)}"' in index
        ), rule.code


def test_the_home_page_keeps_no_rule_table_by_hand() -> None:
    """The rule index is generated (render_rule_index): a table written by hand on the home
    page would be one more list a new rule must remember (CONTRIBUTING.md)."""
    text = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    assert not re.findall(r"^\| \[(GPU|GL|YML)\d+\]", text, flags=re.M)
    assert "(rules.md)" in text


def test_every_page_of_the_docs_folder_is_in_the_site(site: Path) -> None:
    """docs/rules.md is the one page left out: the rule index and the rule pages replace it."""
    for page in (ROOT / "docs").glob("*.md"):
        if page.name != "rules.md":
            assert (site / page.with_suffix(".html").name).is_file(), page.name
    assert (site / "changelog.html").is_file()


def test_no_page_loads_anything_from_another_site(site: Path) -> None:
    found = []
    for path in sorted(site.rglob("*")):
        if path.suffix in (".html", ".css"):
            text = path.read_text(encoding="utf-8", errors="replace")
            found += [f"{path.relative_to(site)}: {m[0]}" for m in _REMOTE_ASSET.finditer(text)]
    assert not found, "\n".join(found)


def test_the_docs_address_is_one(site: Path) -> None:
    """pyproject.toml's [project.urls] Documentation, mkdocs.yml's site_url and the address
    SARIF's helpUri is made from are the same."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["urls"]["Documentation"] == DOCS_URL
    (site_url,) = re.findall(r"^site_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert site_url == DOCS_URL
    assert f'<link rel="canonical" href="{DOCS_URL}{rule_page("GPU020")}"' in (
        site / rule_page("GPU020")
    ).read_text(encoding="utf-8")


def test_sarif_help_uris_are_pages_of_the_site(site: Path) -> None:
    """Every helpUri of a run over the rule fixtures names a page the build wrote."""
    proc = gpulint_in_process(
        "check", "--isolated", "--select", "ALL", "-f", "sarif", "tests/fixtures/rules", cwd=ROOT
    )
    log = json.loads(proc.stdout)
    (run,) = log["runs"]
    descriptors = run["tool"]["driver"]["rules"]
    reported = {r["ruleId"] for r in run["results"]}
    assert len(reported) > 30  # the fixtures fire most rules
    by_id = {d["id"]: d for d in descriptors}
    for code in reported:
        uri = by_id[code]["helpUri"]
        assert uri.startswith(DOCS_URL), uri
        assert (site / uri.removeprefix(DOCS_URL)).is_file(), uri
    assert {d["id"] for d in descriptors} == {r.code for r in BUILTIN}
    for d in descriptors:
        assert (site / d["helpUri"].removeprefix(DOCS_URL)).is_file(), d["helpUri"]


def test_the_rule_command_names_the_page() -> None:
    proc = gpulint_in_process("rule", "GPU020", "--isolated", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.rstrip().splitlines()[-1] == (f"Documentation: {DOCS_URL}rules/gpu020.html")


# -- in a real browser ---------------------------------------------------------------------------

_HARNESS = """<!doctype html><meta charset="utf-8"><title>checking</title><body><script>
const pages = %(pages)s;
const results = {pages: {}, remote: []};
const texts = {};
function load(path) {
  if (!(path in texts)) texts[path] = fetch(path).then(r => r.ok ? r.text() : null);
  return texts[path];
}
async function check(path) {
  const frame = document.createElement("iframe");
  frame.style.width = "1280px"; frame.style.height = "900px";
  const loaded = new Promise(resolve => frame.onload = resolve);
  frame.src = path;
  document.body.appendChild(frame);
  await loaded;
  const win = frame.contentWindow, doc = frame.contentDocument;
  const h1 = doc.querySelector("article h1");
  const content = doc.querySelector(".md-content");
  const entry = {
    h1: h1 ? [...h1.childNodes].filter(n => !(n.classList && n.classList.contains("headerlink")))
      .map(n => n.textContent).join("").trim() : null,
    h2: [...doc.querySelectorAll("article h2")].map(h => h.id),
    stylesheets: doc.styleSheets.length,
    header_position: getComputedStyle(doc.querySelector(".md-header")).position,
    content_height: content ? content.getBoundingClientRect().height : 0,
    links: 0,
    broken: [],
  };
  for (const a of doc.querySelectorAll("a[href]")) {
    const href = a.getAttribute("href");
    const url = new URL(href, win.location.href);
    if (url.origin !== location.origin) continue;
    entry.links += 1;
    const text = await load(url.pathname);
    if (text === null) { entry.broken.push(href); continue; }
    if (url.hash.length > 1) {
      const id = decodeURIComponent(url.hash.slice(1));
      const target = new DOMParser().parseFromString(text, "text/html");
      if (!target.getElementById(id)) entry.broken.push(href);
    }
  }
  for (const e of win.performance.getEntriesByType("resource")) {
    if (!e.name.startsWith(location.origin)) results.remote.push(path + ": " + e.name);
  }
  results.pages[path] = entry;
  frame.remove();
}
(async () => {
  try { for (const p of pages) await check(p); } catch (e) { results.error = String(e); }
  await fetch("/__results__", {method: "POST", body: JSON.stringify(results)});
  document.title = "done";
})();
</script>
"""


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


class _Server:
    """The built site over HTTP on 127.0.0.1, taking the harness's results by POST."""

    def __init__(self, root: Path) -> None:
        self.results: dict[str, Any] = {}
        self.done = threading.Event()
        outer = self

        class Handler(SimpleHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.results = json.loads(body)
                outer.done.set()
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                pass

        handler = functools.partial(Handler, directory=str(root))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _browser_args(chromium: str, profile: Path) -> list[str]:
    return [
        chromium,
        "--headless",
        "--no-sandbox",  # the suite may run as root (CI does)
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        f"--user-data-dir={profile}",
    ]


def test_every_rule_page_renders_in_chromium_with_no_broken_link(
    site: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chromium = _chromium()
    if chromium is None:
        pytest.skip("chromium is not installed: `make ci-tools` installs it (as root, apt-get)")
    pages = [rule_page(r.code) for r in BUILTIN] + ["rules.html", "index.html"]
    (site / "__check__.html").write_text(_HARNESS % {"pages": json.dumps(pages)}, encoding="utf-8")
    server = _Server(site)
    try:
        browser = subprocess.Popen(
            [*_browser_args(chromium, tmp_path / "profile"), server.url + "__check__.html"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            finished = server.done.wait(timeout=300)
        finally:
            browser.terminate()
            try:
                _, stderr = browser.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                browser.kill()
                _, stderr = browser.communicate()
        assert finished, "the browser never reported: " + stderr.decode(errors="replace")[-2000:]
        results = server.results
        assert "error" not in results, results.get("error")
        assert results["remote"] == []
        assert sorted(results["pages"]) == sorted(pages)
        for rule in BUILTIN:
            entry = results["pages"][rule_page(rule.code)]
            assert entry["h1"] == f"{rule.code}: {rule.name}", entry
            assert entry["broken"] == [], (rule.code, entry["broken"])
            assert entry["links"] > 20, entry  # the navigation and the page's own links
            assert entry["stylesheets"] >= 1 and entry["header_position"] == "sticky", entry
            assert entry["content_height"] > 300, entry
            assert {"what-it-does", "why-it-matters"} <= set(entry["h2"]), entry
        for other in ("rules.html", "index.html"):
            assert results["pages"][other]["broken"] == [], results["pages"][other]
        # A screenshot of one rule page, kept for a person to look at.
        OUTPUT.mkdir(parents=True, exist_ok=True)
        shot = OUTPUT / "gpu020.png"
        shot.unlink(missing_ok=True)
        subprocess.run(
            [*_browser_args(chromium, tmp_path / "profile-shot"), "--hide-scrollbars",
             "--window-size=1280,1400", f"--screenshot={shot}",
             server.url + rule_page("GPU020")],
            capture_output=True, timeout=120, check=True,
        )  # fmt: skip
        assert shot.is_file() and shot.stat().st_size > 20_000
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        with capsys.disabled():
            print(f"\nscreenshot of the GPU020 page: {shot}")
    finally:
        server.close()
