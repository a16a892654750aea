"""The baseline (`--write-baseline`, `--baseline`, `baseline:`): adopt gpulint on a repository
that already has findings.

A fixture repository with findings; its baseline written; then lines shifted, documents
reordered and one new mistake added: exactly the new one is reported. A fixed mistake or a
renamed object leaves a stale entry (GL101, at the entry's line in the baseline). Hostile
baseline files are one line on stderr and exit 2.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import gpulint_in_process as gpulint

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: finetune
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: train
        image: pytorch/pytorch:2.3.1
        resources:
          requests:
            nvidia.com/gpu: 2
"""
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: notebook
  namespace: ml
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
  containers:
  - name: jupyter
    image: jupyter/base:1
    resources:
      limits:
        nvidia.com/gpu: 0.5
"""
SERVE = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llama
  namespace: serving
spec:
  selector: {matchLabels: {app: llama}}
  template:
    metadata: {labels: {app: llama}}
    spec:
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: server
        image: vllm/vllm-openai:v0.5.0
        resources:
          limits:
            nvidia.com/gpu: 1
"""
BASELINE = ".gpulint-baseline.json"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "k8s").mkdir(parents=True)
    (repo / ".git").mkdir()  # the repository root (configuration search, baseline: paths)
    (repo / "k8s" / "train.yaml").write_text(JOB + "---\n" + POD, encoding="utf-8")
    (repo / "k8s" / "serve.yaml").write_text(SERVE, encoding="utf-8")
    return repo


def _findings(proc: Any) -> list[dict[str, Any]]:
    return [f for f in json.loads(proc.stdout)["findings"] if not f["suppressed"]]


def _write(repo: Path) -> dict[str, Any]:
    proc = gpulint("check", "--isolated", "--write-baseline", BASELINE, "k8s", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads((repo / BASELINE).read_text(encoding="utf-8"))
    n = len(data["findings"])
    want = f"gpulint: wrote {n} finding{'s' * (n != 1)} to the baseline {BASELINE}\n"
    assert proc.stderr == want
    assert "All checks passed" in proc.stdout  # the findings written are accepted
    return data


def _check(repo: Path, *args: str, cwd: Path | None = None) -> Any:
    return gpulint("check", "--isolated", "-f", "json", *args, cwd=cwd or repo)


def test_the_baseline_file_is_sorted_readable_and_complete(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    before = _findings(_check(repo, "k8s"))
    data = _write(repo)
    assert list(data) == ["gpulint-baseline", "findings"] and data["gpulint-baseline"] == 1
    entries = data["findings"]
    assert len(entries) == len(before) >= 2
    keys = [(e["file"], e["rule"], e["object"] or "", e["fingerprint"]) for e in entries]
    assert keys == sorted(keys)
    assert {e["file"] for e in entries} == {"k8s/train.yaml"}
    assert {e["object"] for e in entries} == {"Job/finetune", "Pod/notebook"}
    assert all(set(e) == {"file", "rule", "object", "fingerprint", "message"} for e in entries)
    # The same run again writes the same bytes (a diff shows only real changes).
    first = (repo / BASELINE).read_bytes()
    _write(repo)
    assert (repo / BASELINE).read_bytes() == first


def test_moved_lines_and_reordered_documents_still_match_and_only_the_new_one_is_reported(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    _write(repo)
    # Lines shifted, the documents of train.yaml swapped, and one new mistake in serve.yaml.
    (repo / "k8s" / "train.yaml").write_text(
        "# owned by the ML platform team\n\n" + POD + "---\n# the nightly job\n" + JOB,
        encoding="utf-8",
    )
    (repo / "k8s" / "serve.yaml").write_text(
        SERVE.replace(
            "limits:\n            nvidia.com/gpu: 1", "requests:\n            nvidia.com/gpu: 1"
        ),
        encoding="utf-8",
    )
    proc = _check(repo, "--baseline", BASELINE, "k8s")
    new = _findings(proc)
    assert [(f["path"], f["rule"], f["object"]["name"]) for f in new] == [
        ("k8s/serve.yaml", "GPU001", "llama")
    ]
    assert proc.returncode == 1
    total = len(json.loads((repo / BASELINE).read_text(encoding="utf-8"))["findings"])
    assert proc.stderr == f"gpulint: {total} findings in the baseline {BASELINE} not reported\n"


def test_a_fixed_mistake_leaves_one_stale_entry_at_its_line(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    data = _write(repo)
    fixed = POD.replace("nvidia.com/gpu: 0.5", "nvidia.com/gpu: 1")
    (repo / "k8s" / "train.yaml").write_text(JOB + "---\n" + fixed, encoding="utf-8")
    proc = _check(repo, "--baseline", BASELINE, "k8s")
    (stale,) = _findings(proc)
    (gone,) = [e for e in data["findings"] if e["object"] == "Pod/notebook"]
    assert stale["rule"] == "GL101" and stale["path"] == BASELINE
    lines = (repo / BASELINE).read_text(encoding="utf-8").splitlines()
    assert f'"fingerprint": "{gone["fingerprint"]}"' in lines[stale["line"] - 1]
    assert "GPU004 in k8s/train.yaml (Pod/notebook)" in stale["message"]
    assert proc.returncode == 0  # GL101 is a warning; the default --fail-on is error
    assert proc.stderr.endswith("not reported; 1 stale entry (GL101)\n")
    # Written again, the baseline no longer holds it.
    _write(repo)
    assert _findings(_check(repo, "--baseline", BASELINE, "k8s")) == []


def test_a_renamed_object_is_new_and_its_old_entries_stale(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    data = _write(repo)
    pod_entries = [e for e in data["findings"] if e["object"] == "Pod/notebook"]
    assert pod_entries  # else the stale count below compares two empty lists
    renamed = POD.replace("name: notebook", "name: notebook-2")
    (repo / "k8s" / "train.yaml").write_text(JOB + "---\n" + renamed, encoding="utf-8")
    found = _findings(_check(repo, "--baseline", BASELINE, "k8s"))
    assert sorted(f["rule"] for f in found if f["rule"] == "GL101") == ["GL101"] * len(pod_entries)
    assert {f["object"]["name"] for f in found if f["rule"] != "GL101"} == {"notebook-2"}


def test_a_run_over_other_files_leaves_their_entries_alone(tmp_path: Path) -> None:
    """A pre-commit hook lints the changed files only: entries of the others are not stale."""
    repo = _repo(tmp_path)
    _write(repo)
    proc = _check(repo, "--baseline", BASELINE, "k8s/serve.yaml")
    assert _findings(proc) == [] and proc.returncode == 0
    # A file that no longer exists can never match again: its entries are stale.
    (repo / "k8s" / "train.yaml").unlink()
    stale = _findings(_check(repo, "--baseline", BASELINE, "k8s/serve.yaml"))
    assert stale and {f["rule"] for f in stale} == {"GL101"}


def test_the_baseline_matches_from_another_working_directory(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(repo)
    proc = _check(repo, "--baseline", f"../{BASELINE}", ".", cwd=repo / "k8s")
    assert _findings(proc) == [], proc.stdout


def test_the_configuration_names_the_baseline(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    _write(repo)
    (repo / ".gpulint.yaml").write_text(f"baseline: {BASELINE}\n", encoding="utf-8")
    proc = gpulint("check", "-f", "json", "k8s", cwd=repo)
    assert _findings(proc) == [] and proc.returncode == 0, proc.stdout
    # The command line's --baseline wins over the configuration's.
    (repo / "other.json").write_text('{"gpulint-baseline": 1, "findings": []}\n')
    assert _findings(gpulint("check", "-f", "json", "--baseline", "other.json", "k8s", cwd=repo))
    # GL101 can be switched off like any rule.
    (repo / "k8s" / "train.yaml").write_text(JOB, encoding="utf-8")
    assert _findings(gpulint("check", "-f", "json", "k8s", cwd=repo))
    assert not _findings(gpulint("check", "-f", "json", "--ignore", "GL101", "k8s", cwd=repo))


@pytest.mark.parametrize(
    "value",
    ["/etc/passwd", "../outside.json"],
    ids=["absolute", "outside"],
)
def test_a_configuration_cannot_point_the_baseline_outside_its_repository(
    tmp_path: Path, value: str
) -> None:
    repo = _repo(tmp_path)
    (tmp_path / "outside.json").write_text('{"gpulint-baseline": 1, "findings": []}\n')
    (repo / ".gpulint.yaml").write_text(f"baseline: {value}\n", encoding="utf-8")
    proc = gpulint("check", "k8s", cwd=repo)
    assert proc.returncode == 2
    assert "baseline" in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"not json at all", "not JSON (line 1, column 1"),
        (b'{"gpulint-baseline": 2, "findings": []}', "version 2 is not supported"),
        (b'{"gpulint-baseline": true, "findings": []}', "version true is not supported"),
        (b'{"findings": []}', 'not a gpulint baseline (no "gpulint-baseline" key)'),
        (b"[1, 2]", "not a gpulint baseline"),
        (b'{"gpulint-baseline": 1, "findings": {}}', '"findings" must be a list'),
        (b'{"gpulint-baseline": 1, "findings": [{"file": 1}]}', "entry 1 needs the strings"),
        (b"\xff\xfe{}", "not UTF-8 text"),
        (b"[" * 100_000, "not JSON"),
        (
            b'{"gpulint-baseline": 1, "findings": ["\\u001b[31m\\u2028"]}',
            "entry 1 is not an object",
        ),
    ],
    ids=[
        "text",
        "version",
        "bool-version",
        "no-key",
        "list",
        "findings",
        "entry",
        "binary",
        "deep",
        "control",
    ],
)
def test_a_hostile_baseline_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    repo = _repo(tmp_path)
    (repo / "b.json").write_bytes(content)
    proc = _check(repo, "--baseline", "b.json", "k8s")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith(
        "gpulint: error: baseline b.json: "
    )
    assert reason in proc.stderr, proc.stderr


def test_a_huge_or_missing_baseline_is_refused_before_linting(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    huge = repo / "huge.json"
    with open(huge, "wb") as fh:
        fh.truncate((64 << 20) + 1)  # sparse: no 64 MiB written
    proc = _check(repo, "--baseline", "huge.json", "k8s")
    assert proc.returncode == 2 and "larger than 64 MiB" in proc.stderr
    assert proc.stderr.count("\n") == 1
    proc = _check(repo, "--baseline", "missing.json", "k8s")
    assert proc.returncode == 2
    assert (
        proc.stderr
        == "gpulint: error: baseline missing.json: cannot read it: No such file or directory\n"
    )


def test_write_baseline_refuses_a_symbolic_link(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    target = tmp_path / "elsewhere.json"
    target.write_text("keep\n")
    os.symlink(target, repo / BASELINE)
    proc = gpulint("check", "--isolated", "--write-baseline", BASELINE, "k8s", cwd=repo)
    assert proc.returncode == 2
    assert "refusing to write" in proc.stderr
    assert target.read_text() == "keep\n"


def test_baselined_findings_are_suppressed_results_in_sarif(tmp_path: Path) -> None:
    from tests.externals import assert_schema_valid

    repo = _repo(tmp_path)
    _write(repo)
    log = json.loads(_check(repo, "--baseline", BASELINE, "-f", "sarif", "k8s").stdout)
    assert_schema_valid(log)
    results = log["runs"][0]["results"]
    assert results and all(r["suppressions"][0]["kind"] == "external" for r in results)


# -- entries outside the repository; many stale entries ---------------------------------------
def _entry(file: str, n: int) -> dict[str, Any]:
    return {
        "file": file,
        "rule": "GPU001",
        "object": f"Pod/p{n}",
        "fingerprint": f"{n:064x}",
        "message": "nvidia.com/gpu is requested without a limit",
    }


def _baseline_of(repo: Path, entries: list[dict[str, Any]]) -> None:
    text = json.dumps({"gpulint-baseline": 1, "findings": entries}, indent=2) + "\n"
    (repo / BASELINE).write_text(text, encoding="utf-8")


OUTSIDE = [
    "/etc/passwd",  # exists
    "/etc/no-such-file-gpulint",  # does not
    "../../../../../../../../etc/hostname",  # exists, climbing out
    "../../../../../../../../no-such-dir-gpulint/x.yaml",  # does not
    "k8s/../../outside.yaml",  # climbs out through a folder of the repository
    "out/passwd",  # through a link to /etc
    "outer/gone.yaml",  # through a relative link out of the repository
]


def test_entries_outside_the_repository_are_reported_alike_and_never_looked_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry naming ``/etc/passwd`` or ``../../etc/hostname`` must not tell whether that
    file exists: each is the same GL101, and nothing outside the repository is stat()ed."""
    from gpulint.suppress.baseline import Baseline, Keys, read

    repo = _repo(tmp_path)
    (tmp_path / "outside.yaml").write_text("kind: Secret\n", encoding="utf-8")
    (repo / "out").symlink_to("/etc")
    (repo / "outer").symlink_to("../..")
    _baseline_of(repo, [_entry(file, n) for n, file in enumerate(OUTSIDE)])

    proc = _check(repo, "--baseline", BASELINE, "k8s/serve.yaml")
    stale = _findings(proc)
    assert [f["rule"] for f in stale] == ["GL101"] * len(OUTSIDE)
    assert [(f["message"], f["help"]) for f in stale] == [
        (
            f"baseline entry GPU001 in {file} (Pod/p{n}) names a file outside the repository: "
            "it can match no finding of this repository and is not checked",
            "delete the entry",
        )
        for n, file in enumerate(OUTSIDE)
    ]
    lines = (repo / BASELINE).read_text(encoding="utf-8").splitlines()
    assert [f'"fingerprint": "{n:064x}"' in lines[f["line"] - 1] for n, f in enumerate(stale)] == [
        True
    ] * len(OUTSIDE)

    # In process: every path looked at is inside the repository.
    looked: list[str] = []
    for name in ("stat", "lstat", "readlink"):
        real = getattr(os, name)

        def spy(path: Any, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            looked.append(os.fspath(path))
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, spy)
    entries, text = read(str(repo / BASELINE))
    baseline = Baseline(str(repo / BASELINE), entries, text, Keys(str(repo), None))
    assert [outside for _, _, outside in baseline.stale()] == [True] * len(OUTSIDE)
    root = str(repo.resolve())
    outside_looked = [p for p in looked if not (p == root or p.startswith(root + os.sep))]
    # realpath/project_root of the baseline's own folder go up from it; nothing else.
    print("LOOKED", looked)
    # Outside the repository, only the folders above it (resolving the baseline's own
    # folder, finding its ``.git``) are looked at: never a path an entry names.
    assert all(root.startswith(p.rstrip(os.sep) + os.sep) for p in outside_looked)


def test_entries_inside_the_repository_still_go_stale_when_their_file_is_gone(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    (repo / "k8s" / "link").symlink_to(".")  # a link inside the repository is followed
    _baseline_of(
        repo,
        [
            _entry("k8s/train.yaml", 1),  # exists, not linted: left alone
            _entry("k8s/link/train.yaml", 2),  # the same file through the link: left alone
            _entry("k8s/./gone.yaml", 3),  # gone: stale
            _entry("k8s/../k8s/gone.yaml", 4),  # gone: stale
        ],
    )
    stale = _findings(_check(repo, "--baseline", BASELINE, "k8s/serve.yaml"))
    assert [f["message"].split(" matches")[0] for f in stale] == [
        "baseline entry GPU001 in k8s/./gone.yaml (Pod/p3)",
        "baseline entry GPU001 in k8s/../k8s/gone.yaml (Pod/p4)",
    ]


def test_many_stale_entries_are_placed_in_one_pass_over_the_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each stale entry's line is found in one pass over the text for all of them, not by a
    search of the whole text per entry (8,000 entries took 10 s, a 36 MB baseline hours)."""
    import re

    import gpulint.suppress.baseline as baseline_module
    from gpulint.suppress.baseline import Baseline, Keys, read

    repo = _repo(tmp_path)
    n = 2000
    # Two copies of some fingerprints: the nth copy is placed at the nth key.
    entries = [_entry("k8s/gone.yaml", i // 2 if i < 10 else i) for i in range(n)]
    _baseline_of(repo, entries)
    parsed, text = read(str(repo / BASELINE))
    baseline = Baseline(str(repo / BASELINE), parsed, text, Keys(str(repo), None))

    passes: list[int] = []
    real_spans = baseline_module.fingerprint_spans
    monkeypatch.setattr(
        baseline_module,
        "fingerprint_spans",
        lambda t: passes.append(len(t)) or real_spans(t),
    )
    compiled: list[str] = []
    real_compile = re.compile
    monkeypatch.setattr(re, "compile", lambda p, *a: compiled.append(p) or real_compile(p, *a))
    stale = baseline.stale()
    assert passes == [len(text)] and compiled == []
    assert len(stale) == n
    lines = text.splitlines()
    for (entry, span, outside), want in zip(stale, entries, strict=True):
        assert not outside and entry.fingerprint == want["fingerprint"]
        assert lines[span.line - 1][span.column - 1 :].startswith(
            f'"fingerprint": "{entry.fingerprint}"'
        )
    # The copies of one fingerprint are at successive keys.
    assert stale[0][1].line < stale[1][1].line
