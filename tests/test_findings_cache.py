"""A file's findings kept in its project's cache (docs/cluster.md, "Projects"): a warm run
reports what a cold one does, a changed file or other options are linted afresh, and a cache
that is not what gpulint wrote is ignored with a warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import gpulint_in_process
from tests.test_projects import SKU, job, write

#: A pod with a suppressed finding (a comment) and a fix GPU020 offers.
SUPPRESSED = job("train-e").replace(
    "            nvidia.com/gpu: 1\n",
    "            nvidia.com/gpu: 1\n          requests:\n"
    "            nvidia.com/gpu: 2  # gpulint: disable=GPU002 the operator sets it\n",
)


def repo(root: Path) -> Path:
    files = {f"train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"}
    files["train-d.yaml"] = job("train-d")
    files["train-e.yaml"] = SUPPRESSED
    return write(root, files)


def run(cwd: Path, *args: str) -> tuple[list[dict[str, Any]], int, str]:
    """The JSON findings, the exit code and stderr of ``gpulint check -f json ARGS``."""
    proc = gpulint_in_process("check", "-f", "json", *args, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)["findings"], proc.returncode, proc.stderr


def shards(root: Path) -> list[Path]:
    return sorted((root / ".gpulint_cache").glob("findings-*/*.json"))


def test_a_warm_run_reports_what_a_cold_run_reports(tmp_path: Path) -> None:
    root = repo(tmp_path)
    cold = run(root, ".")
    assert shards(root), "the findings are kept"
    assert {f["rule"] for f in cold[0]} >= {"GPU020"}
    assert any(f.get("suppression") for f in cold[0]) or any(f["rule"] == "GPU002" for f in cold[0])
    for paths in ((".",), ("train-d.yaml",), ("train-d.yaml", "train-e.yaml")):
        warm = run(root, *paths)
        wanted = [f for f in cold[0] if paths == (".",) or f["path"] in paths]
        assert warm[0] == wanted
        assert warm[1] == (1 if any(f["severity"] == "error" for f in wanted) else 0)
    text = gpulint_in_process("check", ".", cwd=root).stdout
    assert text == gpulint_in_process("check", "--no-cache", ".", cwd=root).stdout


def test_a_file_changed_since_the_cache_is_judged_afresh(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / "train-e.yaml").write_text(job("train-e", SKU))  # every pod but train-d's
    run(root, ".")
    # The file itself changed: it now tolerates the taint its siblings agree on.
    (root / "train-d.yaml").write_text(job("train-d", SKU))
    assert run(root, "train-d.yaml")[:2] == ([], 0)
    # A sibling changed: the facts (the consensus) are read again, and the unchanged file's
    # finding follows them.
    (root / "train-d.yaml").write_text(job("train-d"))
    before = run(root, "train-d.yaml")[0]
    assert [(f["rule"], f["severity"]) for f in before] == [("GPU020", "warning")]
    for c in "ab":
        (root / f"train-{c}.yaml").write_text(job(f"train-{c}"))
    after = run(root, "train-d.yaml")
    assert after[:2] == (run(root, "--no-cache", "train-d.yaml")[0], 0)
    assert [(f["rule"], f["severity"]) for f in after[0]] == [("GPU020", "info")]


def test_other_options_are_not_answered_from_the_cache(tmp_path: Path) -> None:
    root = repo(tmp_path)
    run(root, ".")
    for args in (["--select", "GPU020"], ["--ignore", "GPU020"], ["--select", "GPU002"]):
        assert run(root, *args, ".")[:2] == run(root, "--no-cache", *args, ".")[:2]
    selected = run(root, "--select", "GPU020", ".")[0]
    assert {f["rule"] for f in selected} == {"GPU020"}
    # The configuration's contents count too: a severity set there is the finding's.
    (root / ".gpulint.yaml").write_text("severity:\n  GPU020: warning\n")
    found = run(root, "train-d.yaml")
    assert [(f["rule"], f["severity"]) for f in found[0]] == [("GPU020", "warning")]
    assert found[1] == 0


def test_a_corrupt_or_hostile_findings_cache_is_ignored_with_a_warning(tmp_path: Path) -> None:
    import pickle

    root = repo(tmp_path)
    cold = run(root, ".")
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[Any, ...]:
            return (open, (str(marker), "w"))

    for content in (b"{not json", pickle.dumps(Payload()), b'{"mac": 1, "data": []}'):
        for shard in shards(root):
            shard.write_bytes(content)
        found, code, stderr = run(root, ".")
        assert (found, code) == cold[:2]
        assert "not a cache gpulint wrote" in stderr, stderr
    assert not marker.exists()
    # Rewritten by the runs: the next one is quiet and says the same.
    assert run(root, ".") == (cold[0], cold[1], "")
