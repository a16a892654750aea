"""The hand-written entry-point scanner (gpulint.rule._scan_entry_points) against its oracle.

The scanner reads ``entry_points.txt`` itself to keep importlib.metadata (and the email
package) off gpulint's start-up path; it promises to return what
``importlib.metadata.entry_points(group=...)`` returns over the installation folders
(``sys.path`` without the working directory). importlib.metadata is the oracle here: for the
environment the tests run in, every group it knows, and for small installation folders
written to show the format's corners (comments, spacing, extras, egg-info, metadata names
that differ from the folder's, the same distribution installed twice).
"""

from __future__ import annotations

import importlib.metadata as metadata
import sys
from pathlib import Path

import pytest

from gpulint.lint.finder import GROUP, _scan_entry_points, install_paths


def oracle(group: str) -> list[tuple[str, str, str]]:
    """(name, value, distribution) of ``group`` as importlib.metadata sees the installation
    folders: first distribution of a (normalised) name wins, as for entry_points()."""
    eps = metadata.entry_points(group=group)
    return sorted((ep.name, ep.value, ep.dist.name if ep.dist else "") for ep in eps)


@pytest.fixture
def outside_the_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from an empty folder with '' off sys.path: both sides then search the same
    folders (the scanner always leaves the working directory out)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", install_paths())


def test_the_installed_environment_has_something_to_compare() -> None:
    # Not vacuous: pytest's plugins and the console scripts (gpulint's among them) are
    # registered here. (gpulint's own rules are found by their file names, not here.)
    assert len(oracle("pytest11")) >= 2
    assert "gpulint" in {name for name, _, _ in oracle("console_scripts")}


@pytest.mark.usefixtures("outside_the_tree")
def test_the_installed_environment_matches_importlib_metadata() -> None:
    # Every group installed here (which ones depends on the environment, hence one test).
    for group in [*sorted(metadata.entry_points().groups), "no.such.group"]:
        found = _scan_entry_points(group)
        assert found is not None, "the scanner gave up on this environment's sys.path"
        assert sorted(found) == oracle(group), group


def dist_info(
    site: Path, folder: str, entry_points: str | None, name: str | None = None, meta: str = ""
) -> None:
    path = site / folder
    path.mkdir(parents=True)
    stem = folder.rpartition(".")[0].partition("-")[0]
    metadata_file = "PKG-INFO" if folder.endswith(".egg-info") else "METADATA"
    (path / metadata_file).write_text(
        meta or f"Metadata-Version: 2.1\nName: {name or stem}\nVersion: 1.0\n\nA description\n",
        encoding="utf-8",
    )
    if entry_points is not None:
        (path / "entry_points.txt").write_text(entry_points, encoding="utf-8")


CORNERS = """\
# a comment line
; another comment
[console_scripts]
acme = acme.cli:main

[gpulint.rules]
ACME001 = acme.rules.first
  ACME002=acme.rules.second
ACME003   =   acme.rules:third [extra]
# ACME009 = commented.out
[ other.group ]
x = y
"""


@pytest.mark.usefixtures("outside_the_tree")
def test_the_formats_corners_match_importlib_metadata(tmp_path: Path) -> None:
    first, second = tmp_path / "site-a", tmp_path / "site-b"
    dist_info(first, "acme_rules-1.0.dist-info", CORNERS, name="Acme-Rules")
    # The same distribution again, later on the path (and spelt differently): shadowed.
    dist_info(second, "Acme.Rules-2.0.dist-info", "[gpulint.rules]\nSHADOW1 = shadow.rule\n")
    # An egg-info folder (setup.py develop) with PKG-INFO, no version in the folder name.
    dist_info(first, "legacy.egg-info", "[gpulint.rules]\nOLD001 = legacy.old\n", name="legacy")
    # Metadata Name: differing from the folder's name; no entry_points.txt; another group only.
    dist_info(first, "folder_name-0.1.dist-info", "[gpulint.rules]\nNM001 = nm.r\n", name="real")
    dist_info(first, "plain-1.0.dist-info", None)
    dist_info(second, "other-1.0.dist-info", "[console_scripts]\nother = other:main\n")
    sys.path[:0] = [str(first), str(second)]
    for group in (GROUP, "console_scripts", "other.group", "absent"):
        found = _scan_entry_points(group)
        assert found is not None
        assert sorted(found) == oracle(group), group
    assert ("ACME003", "acme.rules:third [extra]", "Acme-Rules") in oracle(GROUP)
    assert "SHADOW1" not in {name for name, _, _ in oracle(GROUP)}


@pytest.mark.usefixtures("outside_the_tree")
def test_a_zipped_path_entry_is_left_to_importlib_metadata(tmp_path: Path) -> None:
    archive = tmp_path / "bundle.zip"
    archive.write_bytes(b"PK\x05\x06" + bytes(18))  # an empty zip archive
    sys.path.insert(0, str(archive))
    assert _scan_entry_points(GROUP) is None
