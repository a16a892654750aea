"""A configuration found valid is not validated again until it, gpulint or the rules change.

The verdict lives in the user's cache folder (``GPULINT_CACHE_DIR`` here: conftest gives the
test run its own), never in the linted tree. Whatever happens to the cache, the behaviour and
the messages are those of a run without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import gpulint.config.validate as config_module
from gpulint.config.file import ConfigError, load_config
from gpulint.config.resolve import resolve
from gpulint.config.validate import cache_dir
from gpulint.lint.finder import load_rules
from tests.conftest import ROOT

VALID = """\
select: [GPU0, GL]
fail-on: warning
gpu-taints:
  - {key: sku, value: gpu, effect: NoSchedule}
rules:
  GPU040:
    max_per_node: 4
per-file-ignores:
  "legacy/*.yaml": [GPU001]
"""

#: The same file with one mistake: an unknown fail-on level.
INVALID = VALID.replace("fail-on: warning", "fail-on: warnings")


@pytest.fixture
def rules() -> list[Any]:
    return load_rules()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times jsonschema validation ran (in this process)."""
    calls: list[int] = []
    original = config_module._problems

    def spy(*args: Any) -> list[str]:
        calls.append(1)
        return original(*args)

    monkeypatch.setattr(config_module, "_problems", spy)
    return calls


def _resolve(folder: Path, rules: list[Any]) -> str:
    """The error message of resolving ``folder``'s configuration ("" when valid)."""
    try:
        resolve(load_config(cwd=folder), rules, cwd=folder)
    except ConfigError as exc:
        return str(exc)
    return ""


def _repo(tmp_path: Path, text: str) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True, exist_ok=True)
    (repo / ".gpulint.yaml").write_text(text, encoding="utf-8")
    return repo


def _use_cache(monkeypatch: pytest.MonkeyPatch, folder: Path | str) -> Path:
    monkeypatch.setenv("GPULINT_CACHE_DIR", str(folder))
    return Path(folder) / "valid-configs.json"


def test_a_valid_file_is_validated_once(
    tmp_path: Path, rules: list[Any], counted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _use_cache(monkeypatch, tmp_path / "cache")
    repo = _repo(tmp_path, VALID)
    assert _resolve(repo, rules) == ""
    assert len(counted) == 1
    assert cache.is_file()
    assert _resolve(repo, rules) == ""
    assert len(counted) == 1  # remembered
    # Another run in the same repository with different rules loaded: validated again.
    assert _resolve(repo, rules[:-1]) == ""
    assert len(counted) == 2


def test_an_edit_to_invalid_after_a_valid_cached_one_reports_the_same_error(
    tmp_path: Path, rules: list[Any], counted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_cache(monkeypatch, "")
    uncached = _resolve(_repo(tmp_path / "a", INVALID), rules)
    assert "fail-on" in uncached and "allowed values" in uncached

    _use_cache(monkeypatch, tmp_path / "cache")
    repo = _repo(tmp_path / "b", VALID)
    assert _resolve(repo, rules) == ""
    assert _resolve(repo, rules) == ""
    (repo / ".gpulint.yaml").write_text(INVALID, encoding="utf-8")
    assert _resolve(repo, rules) == uncached.replace(str(tmp_path / "a"), str(tmp_path / "b"))
    assert _resolve(repo, rules) == _resolve(repo, rules)  # an invalid file is never cached
    (repo / ".gpulint.yaml").write_text(VALID, encoding="utf-8")
    before = len(counted)
    assert _resolve(repo, rules) == ""
    assert len(counted) == before  # back to a content found valid before


def test_the_same_content_elsewhere_shares_the_verdict(
    tmp_path: Path, rules: list[Any], counted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_cache(monkeypatch, tmp_path / "cache")
    assert _resolve(_repo(tmp_path / "a", VALID), rules) == ""
    assert _resolve(_repo(tmp_path / "b", VALID + "\n# a comment\n"), rules) == ""
    assert len(counted) == 1  # the parsed content is what was validated


def test_types_are_kept_apart(
    tmp_path: Path, rules: list[Any], counted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_cache(monkeypatch, tmp_path / "cache")
    assert _resolve(_repo(tmp_path, "force-exclude: true\n"), rules) == ""
    message = _resolve(_repo(tmp_path, "force-exclude: 'true'\n"), rules)
    assert "force-exclude: expected true or false, got a string" in message


@pytest.mark.parametrize(
    "setup",
    ["a file where the folder should be", "a folder where the cache file should be"],
)
def test_an_unwritable_cache_is_no_error(
    setup: str,
    tmp_path: Path,
    rules: list[Any],
    counted: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    blocker = tmp_path / "blocker"
    if setup.startswith("a file"):
        blocker.write_text("not a folder\n")
        _use_cache(monkeypatch, blocker / "gpulint")
    else:
        _use_cache(monkeypatch, blocker).mkdir(parents=True)
    repo = _repo(tmp_path, VALID)
    assert _resolve(repo, rules) == ""
    assert _resolve(repo, rules) == ""
    assert len(counted) == 2  # nothing remembered, nothing failed
    (repo / ".gpulint.yaml").write_text(INVALID, encoding="utf-8")
    assert "fail-on" in _resolve(repo, rules)
    assert not list(tmp_path.rglob(".valid-configs.*"))  # no temporary file left behind


@pytest.mark.parametrize(
    "content",
    [b"", b"{", b"\xff\xfe", b"[]", b'{"format": "something else", "valid": []}', b"null"],
)
def test_a_corrupt_cache_file_means_validating_again(
    content: bytes,
    tmp_path: Path,
    rules: list[Any],
    counted: list[int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = _use_cache(monkeypatch, tmp_path / "cache")
    cache.parent.mkdir(mode=0o700)
    cache.write_bytes(content)
    cache.chmod(0o600)
    repo = _repo(tmp_path, VALID)
    assert _resolve(repo, rules) == ""
    assert len(counted) == 1
    assert json.loads(cache.read_text())["valid"]  # rewritten whole
    assert _resolve(repo, rules) == ""
    assert len(counted) == 1


def _forge(cache: Path, tmp_path: Path, rules: list[Any], monkeypatch: pytest.MonkeyPatch) -> str:
    """Validate VALID once (so the cache holds its digest) and return the cache's text."""
    repo = _repo(tmp_path / "seed", VALID)
    assert _resolve(repo, rules) == ""
    return cache.read_text()


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership and modes")
def test_a_cache_file_others_can_write_is_not_trusted(
    tmp_path: Path, rules: list[Any], counted: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _use_cache(monkeypatch, tmp_path / "cache")
    text = _forge(cache, tmp_path, rules, monkeypatch)
    cache.chmod(0o666)
    assert _resolve(_repo(tmp_path / "b", VALID), rules) == ""
    assert len(counted) == 2
    # A symbolic link in its place is not followed either.
    real = tmp_path / "elsewhere.json"
    real.write_text(text)
    real.chmod(0o600)
    cache.unlink()
    cache.symlink_to(real)
    assert _resolve(_repo(tmp_path / "c", VALID), rules) == ""
    assert len(counted) == 3


def test_the_cache_is_bounded(
    tmp_path: Path, rules: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = _use_cache(monkeypatch, tmp_path / "cache")
    for n in range(70):
        assert _resolve(_repo(tmp_path, f"exclude: ['x{n}/']\n"), rules) == ""
    assert len(json.loads(cache.read_text())["valid"]) == 64


def test_where_the_cache_lives(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GPULINT_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_dir() == str(tmp_path / "home" / ".cache" / "gpulint")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    assert cache_dir() == str(tmp_path / "home" / ".cache" / "gpulint")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == str(tmp_path / "xdg" / "gpulint")
    monkeypatch.setenv("GPULINT_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == str(tmp_path / "mine")
    monkeypatch.setenv("GPULINT_CACHE_DIR", "")
    assert cache_dir() is None


def _check(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = (
        "import sys\n"
        "from gpulint.cli.entry import main\n"
        "try:\n    main(sys.argv[1:])\n"
        "finally:\n"
        "    loaded = [m for m in ('jsonschema', 'typer') if m in sys.modules]\n"
        "    sys.stderr.write('imported: %s\\n' % loaded)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", script, "check", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
    )


def test_a_pre_commit_run_with_a_config_imports_neither_jsonschema_nor_typer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_cache(monkeypatch, tmp_path / "cache")
    repo = _repo(tmp_path, VALID)
    (repo / "pod.yaml").write_text((ROOT / "examples" / "bad-inference.yaml").read_text())
    args = ("--select", "GPU0", "--fail-on", "warning", "--format", "json", "pod.yaml")
    first = _check(repo, *args)
    assert first.stderr.endswith("imported: ['jsonschema']\n")
    second = _check(repo, *args)
    assert second.stderr.endswith("imported: []\n")
    assert (second.returncode, second.stdout) == (first.returncode, first.stdout)
    assert json.loads(second.stdout)["findings"]
    (repo / ".gpulint.yaml").write_text(INVALID, encoding="utf-8")
    broken = _check(repo, *args)
    assert broken.returncode == 2
    assert broken.stderr.startswith("gpulint: error: .gpulint.yaml:2: fail-on: ")
