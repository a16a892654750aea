"""A chart's ``.helmignore`` is applied as helm applies it: helm's own test table for its
``pkg/ignore`` (TestParse, TestParseFail, TestParseFile, TestIgnore, as data), then the real
helm as the oracle of which ``charts/`` entries it loads as subcharts."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from gpulint.render.helm.helmignore import BadRules, Rules, go_match, subchart_entries
from tests.externals import helms, needs_helm

# helm's pkg/ignore/testdata: which names are folders (the rest are files).
FOLDERS = {"cargo", "cargo/", "mast/", "templates", "."}

#: helm's TestIgnore: (pattern, name, ignored).
IGNORE_TABLE = [
    # Glob tests
    ("helm.txt", "helm.txt", True),
    ("helm.*", "helm.txt", True),
    ("helm.*", "rudder.txt", False),
    ("*.txt", "tiller.txt", True),
    ("*.txt", "cargo/a.txt", True),
    ("cargo/*.txt", "cargo/a.txt", True),
    ("cargo/*.*", "cargo/a.txt", True),
    ("cargo/*.txt", "mast/a.txt", False),
    ("ru[c-e]?er.txt", "rudder.txt", True),
    ("templates/.?*", "templates/.dotfile", True),
    # "." should never get ignored. https://github.com/helm/helm/issues/1776
    (".*", ".", False),
    (".*", "./", False),
    (".*", ".joonix", True),
    (".*", "helm.txt", False),
    (".*", "", False),
    # Directory tests
    ("cargo/", "cargo", True),
    ("cargo/", "cargo/", True),
    ("cargo/", "mast/", False),
    ("helm.txt/", "helm.txt", False),
    # Negation tests
    ("!helm.txt", "helm.txt", False),
    ("!helm.txt", "tiller.txt", True),
    ("!*.txt", "cargo", True),
    ("!cargo/", "mast/", True),
    # Absolute path tests
    ("/a.txt", "a.txt", True),
    ("/a.txt", "cargo/a.txt", False),
    ("/cargo/a.txt", "cargo/a.txt", True),
]


@pytest.mark.parametrize(("pattern", "name", "expected"), IGNORE_TABLE)
def test_helms_ignore_table(pattern: str, name: str, expected: bool) -> None:
    rules = Rules.parse(pattern)
    assert rules.ignore(name, name in FOLDERS) is expected


def test_helms_parse_table() -> None:
    text = "#ignore\n\n\t#ignore\nfoo\nbar/*\nbaz/bar/foo.txt\n\none/more\n"
    assert [r.raw for r in Rules.parse(text).rules] == [
        "foo",
        "bar/*",
        "baz/bar/foo.txt",
        "one/more",
    ]
    # TestParseFile: helm's testdata/.helmignore has three rules
    assert len(Rules.parse("mast/a.txt\n.DS_Store\n.git\n").rules) == 3


@pytest.mark.parametrize("text", ["foo/**/bar", "[z-", "x" * (64 * 1024)])
def test_rules_helm_refuses_fail_the_chart(text: str) -> None:
    with pytest.raises(BadRules):
        Rules.parse(text)


@pytest.mark.parametrize(
    ("pattern", "name", "expected"),
    [
        ("*", "a/b", False),  # a star never crosses a slash
        ("a*/b", "abc/b", True),
        ("[^a]x", "bx", True),  # Go negates a class with ^, not !
        ("[!a]x", "!x", True),
        ("\\*", "*", True),
        ("?", "é", True),  # one code point, two bytes
        ("a?b", "a/b", False),
    ],
)
def test_patterns_are_gos_filepath_match(pattern: str, name: str, expected: bool) -> None:
    assert go_match(pattern, name) is expected


def test_a_bom_and_white_space_around_rules_are_dropped() -> None:
    rules = Rules.parse("\ufeff  zbomb.tgz \r\n")
    assert rules.ignore("charts/zbomb.tgz", False)


# -- the real helm decides --------------------------------------------------------------------

CHART = "apiVersion: v2\nname: {name}\nversion: 0.1.0\n"
POD = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  from: {name}\n"


def _subchart_folder(path: Path, name: str) -> None:
    (path / "templates").mkdir(parents=True)
    (path / "Chart.yaml").write_text(CHART.format(name=name), encoding="utf-8")
    (path / "templates" / "cm.yaml").write_text(POD.format(name=name), encoding="utf-8")


def _subchart_archive(path: Path, name: str) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member, text in (
            (f"{name}/Chart.yaml", CHART.format(name=name)),
            (f"{name}/templates/cm.yaml", POD.format(name=name)),
        ):
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buffer.getvalue())


HELMIGNORES = [
    "zbomb.tgz\n",
    "charts/*.tgz\n",
    "/charts/b*\n",
    "*.tgz\n!*.yaml\n",
    "bfold/\n",
    "!*\n",
    "charts/\n",
    "# nothing\n",
    "a?*\ncharts/[bc]fold\n",
]


@needs_helm
@pytest.mark.parametrize("helm_path", helms())
@pytest.mark.parametrize("helmignore", HELMIGNORES)
def test_the_subcharts_listed_are_the_ones_helm_loads(
    tmp_path: Path, helm_path: str, helmignore: str
) -> None:
    chart = tmp_path / "parent"
    _subchart_folder(chart, "parent")
    (chart / ".helmignore").write_text(helmignore, encoding="utf-8")
    charts = chart / "charts"
    charts.mkdir()
    for name in ("afold", "bfold", "cfold"):
        _subchart_folder(charts / name, name)
    for name in ("atar", "btar", "zbomb"):
        _subchart_archive(charts / f"{name}.tgz", name)
    run = subprocess.run(
        [helm_path, "template", "--", "r", str(chart)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    loaded = sorted(
        line.split("/")[2]
        for line in run.stdout.splitlines()
        if line.startswith("# Source: parent/charts/")
    )
    listed = sorted(e.removesuffix(".tgz") for e in subchart_entries(str(chart)))
    assert listed == loaded


def test_an_unreadable_helmignore_lists_no_subchart(tmp_path: Path) -> None:
    chart = tmp_path / "c"
    _subchart_folder(chart / "charts" / "sub", "sub")
    (chart / ".helmignore").write_text("a/**/b\n", encoding="utf-8")
    assert subchart_entries(str(chart)) == []
    (chart / ".helmignore").unlink()
    assert subchart_entries(str(chart)) == ["sub"]
    shutil.rmtree(chart / "charts")
    assert subchart_entries(str(chart)) == []
