"""``gpulint.util.globs`` against ``pathspec`` (the .gitignore library on PyPI) as the oracle.

The docs promise .gitignore-style globs for ``exclude`` and ``per-file-ignores``; these
properties generate patterns and paths and ask both. Where the two differ on purpose, the
difference is listed below (``DIFFERENCES``, each a test) and written in the README.

Where pathspec itself differs from git (checked with ``git check-ignore``), git wins and the
pattern given to pathspec is adjusted (:func:`_for_pathspec`):

* a negated class ``[!a]`` in pathspec can match ``/``; in git no class matches ``/``
  (the properties use positive classes; the negated ones are examples checked with git);
* two or more stars inside a component (``a**b``) are one ``*`` in git; pathspec lets them
  cross ``/``, so the properties use ``**`` only as a whole component;
* a pattern ending in ``/**`` or ``/**/`` matches the folder itself in pathspec (``a/**``
  and the folder ``a``) and a file in ``a/**/``; in git neither (:func:`_pathspec_differs`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings, strategies as st

from gpulint.util.globs import Glob, GlobError, PathMatcher, validate

pathspec = pytest.importorskip("pathspec")

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROOT = "/nonexistent-gpulint-glob-root"

# Pieces of one path component in a pattern: literals, wildcards, classes and escapes.
PIECES = ["a", "b", ".", "*", "?", "[ab]", "[a-b]", "\\*", "\\[", "\\a", "!"]


def _joined(pieces: list[str], most: int, keep: Callable[[str], bool]) -> st.SearchStrategy[str]:
    """One to ``most`` pieces joined, those ``keep`` accepts: the strings of
    ``st.lists(st.sampled_from(pieces), min_size=1, max_size=most).map("".join)
    .filter(keep)``, listed once and drawn with two choices (a length, then one string of
    that length) instead of one choice per piece and a retry per string filtered out.
    Each length is as likely as the others, about as a list's length was (2.5 on average)."""
    by_length = []
    for length in range(1, most + 1):
        joined = dict.fromkeys("".join(p) for p in itertools.product(pieces, repeat=length))
        by_length.append(st.sampled_from([c for c in joined if keep(c)]))
    return st.one_of(*by_length)


# "." and ".." are not names (gpulint ignores a leading "./", a listed difference); two stars
# in a row inside a component ("a**", "***") are where pathspec and git differ (module
# docstring), so they come only as the whole component "**" below.
component = _joined(PIECES, 4, lambda c: c not in (".", "..") and "**" not in c.replace("\\*", ""))
# A whole-component "**" (any number of folders) is a component of its own.
pattern_component = st.one_of(component, component, st.just("**"))


# A last component that does not end in "**", for a pattern asked about folders.
last_component = component.filter(lambda c: not c.endswith("**"))


@st.composite
def patterns(draw: st.DrawFn, negatable: bool = False, is_dir: bool | None = None) -> str:
    """A pattern; with ``is_dir``, only those :func:`_pathspec_differs` keeps for a folder
    (True) or a file (False). Drawn so, not drawn and then rejected by ``assume``: a
    rejected example costs its whole generation (the list of four patterns was rejected
    twice for each example it kept), and the examples kept are the same patterns."""
    parts = draw(st.lists(pattern_component, min_size=1, max_size=3))
    if is_dir and parts[-1].endswith("**"):
        parts[-1] = draw(last_component)
    text = "/".join(parts)
    if draw(st.booleans()):
        text = "/" + text  # anchored at the root
    if not (is_dir is False and text.endswith("**")) and draw(st.booleans()):
        text += "/"  # folders only
    if text.startswith("!"):
        text = "\\" + text  # a literal "!" at the start is written "\!"
    if negatable and draw(st.booleans()):
        text = "!" + text
    return text


names = _joined(["a", "b", ".", "*", "[", "!"], 3, lambda c: c not in (".", ".."))
paths = st.lists(names, min_size=1, max_size=4).map("/".join)


def _pathspec_differs(pattern: str, is_dir: bool) -> bool:
    """pathspec and git disagree on a pattern ending in ``**`` for folders, and on one
    ending in ``**/`` for files (see the module docstring): git is followed."""
    ends = pattern.lstrip("!").rstrip("/")
    return ends.endswith("**") and (is_dir or pattern.endswith("/"))


def _oracle(patterns: list[str], path: str, is_dir: bool = False) -> bool:
    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    return bool(spec.match_file(path + "/" if is_dir else path))


def _self_match(regex: Any, path: str) -> bool:
    """Whether a pathspec pattern matches ``path`` itself, as git asks each path: pathspec
    also matches what lies below a matching folder (its ``ps_d`` group, the slash after the
    folder), which for ``/a`` would take ``a/a/`` back although git asks ``/a`` only about
    ``a``. pathspec searches with the pattern's regex; so does this, from every start: an
    unanchored folder pattern (``*/`` is the regex ``(?P<ps_d>/)``) first finds the slash
    after the top folder, and ``a/a/`` is still a folder it matches itself."""
    for start in range(len(path) + 1):
        found = regex.match(path, start) if start else regex.search(path)
        if found is None:
            if start == 0:
                return False
            continue
        if found.groupdict().get("ps_d") is None or found.end("ps_d") == len(path):
            return True
    return False


def _git_decides(spec: Any, path: str) -> bool:
    """The last pattern that matches ``path`` itself decides."""
    decision = False
    for pattern in spec.patterns:
        if pattern.include is not None and _self_match(pattern.regex, path):
            decision = pattern.include
    return decision


def _git_oracle(patterns: list[str], path: str) -> bool:
    """As git decides: a file below an ignored folder is ignored, whatever ``!`` patterns
    say about the file, so each folder is asked first, then the file."""
    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    parts = path.split("/")
    folders = ["/".join(parts[:k]) + "/" for k in range(1, len(parts))]
    return any(_git_decides(spec, f) for f in folders) or _git_decides(spec, path)


@SETTINGS
@given(patterns(is_dir=False), paths)
def test_one_pattern_matches_a_file_as_gitignore_does(pattern: str, path: str) -> None:
    assert validate(pattern) is None
    assume(not _pathspec_differs(pattern, False))
    assert Glob.compile(pattern).matches(path) == _oracle([pattern], path)


@SETTINGS
@given(patterns(is_dir=True), paths)
def test_one_pattern_matches_a_folder_as_gitignore_does(pattern: str, path: str) -> None:
    assume(not _pathspec_differs(pattern, True))
    assert Glob.compile(pattern).matches(path, is_dir=True) == _oracle([pattern], path, True)


@SETTINGS
@given(st.lists(patterns(negatable=True, is_dir=True), min_size=1, max_size=4), paths)
@example(["a/", "!/a"], "a/a/a")  # "!/a" takes back the folder a, not a/a (git check-ignore)
@example(["*/", "!/a"], "a/a/a")  # ... and "*/" still ignores the folder a/a (git check-ignore)
@example(["aa", "*/"], "a/a")  # a folder pattern ignores what lies below the folder
@example(["!a", "a/", "!*/"], "a/a")
@example(["a", "*", "!a"], "a/a")  # the last match, "!a", takes back both a and a/a (git)
def test_a_list_with_negations_matches_as_gitignore_does(
    pattern_list: list[str], path: str
) -> None:
    """The last pattern that matches decides; a ``!`` pattern takes a path back."""
    assume(not any(_pathspec_differs(p, True) for p in pattern_list))
    matcher = PathMatcher(ROOT, tuple(Glob.compile(p) for p in pattern_list))
    assert matcher.matches(f"{ROOT}/{path}") == _git_oracle(pattern_list, path)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("\\*.yaml", "*.yaml", True),  # an escaped star is a star
        ("\\*.yaml", "a.yaml", False),
        ("[\\]]", "]", True),  # an escaped "]" inside a class is a member
        ("\\!keep.yaml", "!keep.yaml", True),
        ("build/", "build", False),  # folders only: not the file "build"
        ("build/", "build/a.yaml", True),
        ("charts/a**b", "charts/a/x/b", False),  # "**" inside a component is "*"
        ("[!a]", "b", True),  # negated classes, checked with git check-ignore
        ("d/x[!a]y", "d/x/y", False),  # no class matches "/"
        ("aa/**", "aa/b.yaml", True),
        ("a/**/", "a/a", False),  # a file is no folder
        ("**/b", "b/a/b", True),
        ("***/a", "a", True),  # a whole component of stars is "**" (git check-ignore)
    ],
)
def test_gitignore_examples(pattern: str, path: str, expected: bool) -> None:
    assert Glob.compile(pattern).matches(path) is expected


def test_a_trailing_backslash_is_an_error() -> None:
    with pytest.raises(GlobError, match="escapes nothing"):
        Glob.compile("vendor\\")


# Deliberate differences from .gitignore (README, "Configuration"): a pattern is one list
# item of a YAML file, not a line of a file of patterns.
DIFFERENCES = [
    # Surrounding white space is not part of the pattern (git keeps leading spaces).
    (" vendor", "vendor/a.yaml", True, False),
    # A leading "./" is ignored, as a leading "/" is (git matches no such path).
    ("./vendor", "vendor/a.yaml", True, False),
    # "#" starts no comment: a YAML comment is outside the quotes.
    ("#notes.yaml", "#notes.yaml", True, False),
]


@pytest.mark.parametrize(("pattern", "path", "ours", "gitignore"), DIFFERENCES)
def test_deliberate_differences(pattern: str, path: str, ours: bool, gitignore: bool) -> None:
    assert Glob.compile(pattern).matches(path) is ours
    assert _oracle([pattern], path) is gitignore


def test_a_negation_cannot_bring_back_a_file_below_an_excluded_folder_in_a_walk(
    tmp_path: Path,
) -> None:
    """As in git: ``!vendor/keep.yaml`` cannot take back a file below the excluded folder
    ``vendor``, whether a walk finds it or the command line names it (``force-exclude``)."""
    from gpulint.util.discover import targets

    root = str(tmp_path)
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "keep.yaml").write_text("a: 1\n")
    (tmp_path / "vendor" / "drop.yaml").write_text("a: 1\n")
    (tmp_path / "app.yaml").write_text("a: 1\n")
    matcher = PathMatcher(root, tuple(Glob.compile(p) for p in ["vendor", "!vendor/keep.yaml"]))
    assert matcher.matches(f"{root}/vendor/drop.yaml")
    assert matcher.matches(f"{root}/vendor/keep.yaml")
    again = PathMatcher(root, tuple(Glob.compile(p) for p in ["vendor/*", "!vendor/keep.yaml"]))
    assert not again.matches(f"{root}/vendor/keep.yaml")  # the files, not the folder
    found, _ = targets([root], "-", matcher.matches, False)
    assert sorted(str(t.path) for t in found) == [f"{root}/app.yaml"]


@pytest.mark.parametrize(
    "config",
    ['per-file-ignores: {"!legacy/**": [GPU004]}\n',
     "per-object-ignores:\n  - {path: '!vendor/*', reason: vendored}\n"],
)  # fmt: skip
def test_a_lone_negation_is_a_configuration_error(tmp_path: Path, config: str) -> None:
    """A pattern on its own has nothing before it to take back: "!x" would match nothing."""
    from gpulint.config.file import ConfigError, read_config
    from gpulint.config.resolve import resolve
    from gpulint.lint.finder import load_rules

    (tmp_path / ".gpulint.yaml").write_text(config)
    with pytest.raises(ConfigError, match="works in `exclude` only"):
        resolve(read_config(tmp_path / ".gpulint.yaml"), load_rules(), cwd=tmp_path)


def test_exclude_takes_a_file_back_in_a_real_run(tmp_path: Path) -> None:
    from gpulint.config.file import read_config
    from gpulint.config.resolve import resolve
    from gpulint.lint.finder import load_rules

    (tmp_path / ".gpulint.yaml").write_text('exclude: ["vendor/*", "!vendor/keep.yaml"]\n')
    effective = resolve(read_config(tmp_path / ".gpulint.yaml"), load_rules(), cwd=tmp_path)
    assert effective.exclude.matches(str(tmp_path / "vendor" / "drop.yaml"))
    assert not effective.exclude.matches(str(tmp_path / "vendor" / "keep.yaml"))
