"""One verdict per file: what gpulint says of a file comes from the file's project (its
repository, or a folder whose configuration says ``project: true``), never from which other
files the run was given, and one project's facts never reach another's (gpulint.commands.projects,
docs/cluster.md "Projects")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import gpulint_in_process, said

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
spec:
  template:
    spec:
{extra}      containers:
      - name: train
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            nvidia.com/gpu: 1
      restartPolicy: Never
"""
SKU = "      tolerations:\n      - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}\n"


def job(name: str, extra: str = "") -> str:
    return JOB.format(name=name, extra=extra)


def write(root: Path, files: dict[str, str], git: bool = True) -> Path:
    if git:
        (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def check(cwd: Path, *paths: str) -> tuple[list[tuple[Any, ...]], int]:
    """The findings (file, line, rule, severity, message) and the exit code."""
    # A taint every other GPU pod tolerates makes a warning (docs/cluster.md): failing on
    # warnings keeps the exit code part of the verdict compared.
    proc = gpulint_in_process("check", "-f", "json", "--fail-on", "warning", *paths, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    found = json.loads(proc.stdout)["findings"]
    return [(f["path"], f["line"], f["rule"], f["severity"], said(f)) for f in found], (
        proc.returncode
    )


def of(findings: list[tuple[Any, ...]], path: str) -> list[tuple[Any, ...]]:
    return [f for f in findings if f[0] == path]


def test_a_file_is_judged_the_same_alone_with_siblings_and_with_its_repository(
    tmp_path: Path,
) -> None:
    # Three Jobs tolerate the GPU nodes' taint; the fourth does not.
    files = {f"k8s/train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"}
    files["k8s/train-d.yaml"] = job("train-d")
    root = write(tmp_path, files)
    alone, alone_code = check(root, "k8s/train-d.yaml")
    staged, staged_code = check(root, "k8s/train-a.yaml", "k8s/train-d.yaml")
    folder, _ = check(root, "k8s")
    everything, _ = check(root, ".")
    assert alone == staged == of(folder, "k8s/train-d.yaml") == of(everything, "k8s/train-d.yaml")
    assert alone_code == staged_code == 1
    ((_, _, rule, severity, message),) = alone
    assert (rule, severity) == ("GPU020", "warning")
    assert "tolerated by 3 of the 4 GPU pods of this project" in message
    # And from inside the folder: the same project, the same verdict.
    inside, inside_code = check(root / "k8s", "train-d.yaml")
    assert [f[2:4] for f in inside] == [("GPU020", "warning")] and inside_code == 1


def test_two_repositories_in_one_run_are_each_judged_as_alone(tmp_path: Path) -> None:
    # One repository's pods agree on a taint; the other's pod tolerates nothing.
    write(tmp_path / "a", {f"train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"})
    write(tmp_path / "b", {"train.yaml": job("train")})
    together, _ = check(tmp_path, "a", "b")
    alone_b, code_b = check(tmp_path, "b")
    alone_a, _ = check(tmp_path, "a")
    assert of(together, "b/train.yaml") == alone_b
    assert of(together, "a/train-a.yaml") == of(alone_a, "a/train-a.yaml")
    # b's pod is judged on gpulint's assumption (info), not on a's taint.
    assert [f[2:4] for f in alone_b] == [("GPU020", "info")] and code_b == 0
    assert "sku" not in alone_b[0][4]


def test_a_folder_declared_a_project_keeps_its_facts_apart(tmp_path: Path) -> None:
    files = {f"clusters/a/train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"}
    files["clusters/a/.gpulint.yaml"] = "project: true\n"
    files["clusters/b/.gpulint.yaml"] = "project: true\n"
    files["clusters/b/train.yaml"] = job("train")
    root = write(tmp_path, files)
    everything, code = check(root, ".")
    assert [f[2:4] for f in of(everything, "clusters/b/train.yaml")] == [("GPU020", "info")]
    assert code == 0
    # Without the declaration the repository is one project: a's taint is b's evidence.
    (root / "clusters/b/.gpulint.yaml").write_text("select: [ALL]\n")
    (root / "clusters/a/.gpulint.yaml").write_text("select: [ALL]\n")
    joined, joined_code = check(root, "clusters/b/train.yaml")
    assert [f[2:4] for f in joined if f[2] == "GPU020"] == [("GPU020", "warning")]
    assert joined_code == 1


def test_outside_a_repository_the_project_is_the_path_given(tmp_path: Path) -> None:
    files = {f"train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"}
    files["train-d.yaml"] = job("train-d")
    root = write(tmp_path / "work", files, git=False)
    folder, _ = check(root, ".")
    assert [f[2:4] for f in of(folder, "train-d.yaml")] == [("GPU020", "warning")]
    alone, code = check(root, "train-d.yaml")
    assert [f[2:4] for f in alone] == [("GPU020", "info")] and code == 0


def test_pods_that_tolerate_the_key_differently_make_no_consensus(tmp_path: Path) -> None:
    """Three pods tolerate nvidia.com/gpu each in its own way: no taint is the one they
    agree on (a majority per field would invent nvidia.com/gpu=true:NoSchedule), so the pod
    that tolerates the documented taint is not an error, and the others are judged on the
    assumption, at info, saying the pods disagree."""
    exists = (
        "      tolerations:\n      - {key: nvidia.com/gpu, operator: Exists, effect: NoExecute}\n"
    )
    true = '      tolerations:\n      - {key: nvidia.com/gpu, operator: Equal, value: "true"}\n'
    present = "      tolerations:\n      - {key: nvidia.com/gpu, value: present}\n"
    files = {
        "a.yaml": job("a", exists),
        "b.yaml": job("b", true),
        "c.yaml": job("c", present),
        "d.yaml": job("d"),
    }
    root = write(tmp_path, files)
    findings, code = check(root, ".")
    assert {f[3] for f in findings if f[2] == "GPU020"} <= {"info"}
    assert code == 0
    assert not of(findings, "c.yaml")  # it tolerates nvidia.com/gpu=present:NoSchedule
    (d,) = of(findings, "d.yaml")
    assert "tolerate different taints of nvidia.com/gpu" in d[4]
    assert "tolerated by" not in d[4]


def test_a_pod_is_no_evidence_against_itself(tmp_path: Path) -> None:
    """Two pods tolerate sku=gpu; a third tolerates sku=cpu. The third is not judged against a
    taint its own toleration was counted for: the key is disputed, and nothing is an error."""
    cpu = SKU.replace("value: gpu", "value: cpu")
    files = {"a.yaml": job("a", SKU), "b.yaml": job("b", SKU), "c.yaml": job("c", cpu)}
    findings, code = check(write(tmp_path, files), ".")
    assert code == 0 and all(f[3] == "info" for f in findings)


EXISTS = "      tolerations:\n      - {key: sku, operator: Exists, effect: NoSchedule}\n"


def test_pods_that_agree_on_one_whole_taint_make_it_the_evidence(tmp_path: Path) -> None:
    files = {
        "a.yaml": job("a", SKU),
        "a2.yaml": job("a2", SKU),
        "b.yaml": job("b", EXISTS),
        "c.yaml": job("c"),
    }
    findings, code = check(write(tmp_path, files), ".")
    ((path, _, rule, severity, message),) = findings
    assert (path, rule, severity, code) == ("c.yaml", "GPU020", "warning", 1)
    assert (
        "sku=gpu:NoSchedule" in message
        and "(tolerated by 3 of the 4 GPU pods of this project" in message
    )


def test_one_pod_naming_a_value_leaves_the_agreed_value_open(tmp_path: Path) -> None:
    """Pods that tolerate sku with Exists tolerate sku=gpu too, but say nothing of the
    value: with one pod naming it, the agreed taint is sku with any value."""
    files = {"a.yaml": job("a", SKU), "b.yaml": job("b", EXISTS), "c.yaml": job("c")}
    findings, code = check(write(tmp_path, files), ".")
    ((path, _, rule, severity, message),) = findings
    assert (path, rule, severity, code) == ("c.yaml", "GPU020", "warning", 1)
    assert (
        "sku:NoSchedule" in message
        and "(tolerated by 2 of the 3 GPU pods of this project" in message
    )


PLUGIN = """\
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: nvidia-device-plugin-daemonset
spec:
  template:
    spec:
      tolerations:
      - {{key: sku, operator: Equal, value: {value}, effect: NoSchedule}}
      containers:
      - name: nvidia-device-plugin-ctr
        image: nvcr.io/nvidia/k8s-device-plugin:v0.15.0
"""


def test_an_open_value_proves_no_agents_value_wrong(tmp_path: Path) -> None:
    """GPU pods that tolerate sku with Exists (and one that names gpu) agree on sku with
    any value: the device plugin's sku=gpu, or any other value, is not shown wrong by them;
    two pods naming gpu make sku=gpu the agreed taint, and sku=nvidia an error."""
    files = {f"{c}.yaml": job(c, EXISTS) for c in "ab"}
    files["c.yaml"] = job("c", SKU)
    files["plugin.yaml"] = PLUGIN.format(value="gpu")
    files["other.yaml"] = PLUGIN.format(value="nvidia").replace("-daemonset", "-copy")
    findings, code = check(write(tmp_path, files), ".")
    assert (findings, code) == ([], 0)
    (tmp_path / "b.yaml").write_text(job("b", SKU))
    findings, code = check(tmp_path, ".")
    ((path, _, rule, severity, message),) = findings
    assert (path, rule, severity, code) == ("other.yaml", "GPU023", "error", 1)
    assert "sku=gpu:NoSchedule; " in message
    assert "(tolerated by 3 of the 3 GPU pods" in message


def test_inspect_shows_the_same_project_and_facts_for_one_file_as_for_the_project(
    tmp_path: Path,
) -> None:
    files = {f"k8s/train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"}
    files["k8s/train-d.yaml"] = job("train-d")
    root = write(tmp_path, files)

    def cluster(*paths: str) -> dict[str, Any]:
        proc = gpulint_in_process("inspect", "--format", "json", *paths, cwd=root)
        assert proc.returncode == 0, proc.stderr
        picture: dict[str, Any] = json.loads(proc.stdout)["cluster"]
        return picture

    alone = cluster("k8s/train-d.yaml")
    assert alone == cluster(".") == cluster("k8s")
    assert alone["project"] == {"root": ".", "from": "the repository (.git)"}
    ((taint),) = alone["taints"]
    assert (taint["key"], taint["value"], taint["effect"]) == ("sku", "gpu", "NoSchedule")
    assert [e["path"] for e in taint["evidence"]] == [f"k8s/train-{c}.yaml" for c in "abc"]
    text = gpulint_in_process("inspect", "k8s/train-d.yaml", cwd=root).stdout
    assert "project .: the repository (.git)" in text
    assert "GPU node taint sku=gpu:NoSchedule: tolerated by 3 of the 4 GPU pods" in text


TIME_SLICING = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: time-slicing-config
data:
  any: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
          rename: nvidia.com/gpu.shared
"""


def test_inspect_shows_the_device_plugins_facts_with_their_places(tmp_path: Path) -> None:
    """What the project's device plugin configuration advertises is shown with the line
    that says it, the same for a file alone as for the project, and only in its project."""
    from jsonschema import Draft202012Validator

    from tests.conftest import ROOT

    schema = json.loads((ROOT / "schemas" / "inspect.schema.json").read_text())
    root = write(tmp_path / "repo", {"ops/plugin.yaml": TIME_SLICING, "train.yaml": job("t")})
    other = write(tmp_path / "other", {"train.yaml": job("t")})

    def inspected(cwd: Path, *paths: str) -> dict[str, Any]:
        proc = gpulint_in_process("inspect", "--format", "json", *paths, cwd=cwd)
        assert proc.returncode == 0, proc.stderr
        found: dict[str, Any] = json.loads(proc.stdout)
        Draft202012Validator(schema).validate(found)
        return found

    alone = inspected(root, "train.yaml")["cluster"]
    assert alone == inspected(root, ".")["cluster"]
    shared = [f for f in alone["device_plugins"] if f["resource"] == "nvidia.com/gpu.shared"]
    assert shared == [
        {
            "resource": "nvidia.com/gpu.shared",
            "what": "sharing.timeSlicing: nvidia.com/gpu as nvidia.com/gpu.shared, 4 replicas",
            "evidence": [{"path": "ops/plugin.yaml", "line": 13}],
        }
    ]
    # The lines docs/cluster.md shows are the run's.
    from tests.docblocks import block

    title = "The repository's own device-plugin settings"
    shown = block("docs/cluster.md", title, "text", 0).text.splitlines()
    lines = gpulint_in_process("inspect", "train.yaml", cwd=root).stdout.splitlines()
    assert shown and all(line in lines for line in shown), lines
    # Another repository of the same run learns nothing from this one's plugin.
    both = inspected(tmp_path, "repo/train.yaml", "other/train.yaml")
    assert [bool(c.get("device_plugins")) for c in both["projects"]] == [True, False]
    assert "device_plugins" not in inspected(other, "train.yaml")["cluster"]


def test_the_project_is_read_within_the_runs_bounds(tmp_path: Path) -> None:
    """Files the run was not given are read as a walk reads them: an excluded folder, a
    nested repository and a link out of the repository say nothing of this project."""
    outside = write(tmp_path / "elsewhere", {"train.yaml": job("train", SKU)}, git=False)
    files = {f"vendor/train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"}
    files.update({f"sub/train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"})
    files[".gpulint.yaml"] = "exclude: [vendor/]\n"
    files["train.yaml"] = job("train")
    files["other.yaml"] = job("other", SKU)
    root = write(tmp_path / "repo", files)
    (root / "sub" / ".git").mkdir()
    (root / "linked.yaml").symlink_to(outside / "train.yaml")
    findings, code = check(root, "train.yaml")
    assert [f[2:4] for f in findings] == [("GPU020", "info")] and code == 0


# -- the cache -------------------------------------------------------------------------------


def _repo_with_consensus(root: Path) -> Path:
    files = {f"train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"}
    files["train-d.yaml"] = job("train-d")
    return write(root, files)


def test_a_warm_run_says_what_a_cold_one_says_and_the_cache_ignores_itself(
    tmp_path: Path,
) -> None:
    root = _repo_with_consensus(tmp_path)
    cold = check(root, "train-d.yaml")
    cache = root / ".gpulint_cache"
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert json.loads(json.loads(next(cache.glob("records-*.json")).read_text())["data"])["files"]
    # The project's facts as built are kept beside each file's size, time and digest.
    assert json.loads(json.loads(next(cache.glob("facts-*.json")).read_text())["data"])["built"]
    assert check(root, "train-d.yaml") == cold
    # A changed file is read again: the taint is no longer agreed on.
    (root / "train-a.yaml").write_text(job("train-a"))
    (root / "train-b.yaml").write_text(job("train-b"))
    after, code = check(root, "train-d.yaml")
    assert [f[2:4] for f in after] == [("GPU020", "info")] and code == 0


def test_no_cache_keeps_none(tmp_path: Path) -> None:
    root = _repo_with_consensus(tmp_path)
    assert check(root, "--no-cache", "train-d.yaml")[1] == 1
    (root / ".gpulint.yaml").write_text("cache: false\n")
    assert check(root, "train-d.yaml")[1] == 1
    assert not (root / ".gpulint_cache").exists()


def test_a_corrupt_or_hostile_cache_is_ignored_with_a_warning(tmp_path: Path) -> None:
    import pickle

    root = _repo_with_consensus(tmp_path)
    cold = check(root, "train-d.yaml")
    facts = next((root / ".gpulint_cache").glob("facts-*.json"))
    records = next((root / ".gpulint_cache").glob("records-*.json"))
    key = json.loads(json.loads(facts.read_text())["data"])["key"]
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self) -> tuple[Any, ...]:
            return (open, (str(marker), "w"))

    hostile = [
        b"{not json",
        pickle.dumps(Payload()),
        json.dumps({"key": key, "files": {"0" * 64: {"p": "x"}}}).encode(),
    ]
    # Every record, and the facts as built, replaced by ones of the pull request's choosing,
    # without this user's key: not taken for this machine's (the HMAC does not match).
    forged = {"p": [[["nvidia"], [["sku", [["cpu", "NoSchedule"]], 9]]]] * 3, "a": []}
    outer = json.loads(records.read_text())
    data = json.loads(outer["data"])
    data["files"] = {k: forged for k in data["files"]}
    forged_records = json.dumps({"mac": outer["mac"], "data": json.dumps(data)}).encode()
    outer = json.loads(facts.read_text())
    data = json.loads(outer["data"])
    data["built"][1]["b"]["t"] = []
    forged_built = json.dumps({"mac": outer["mac"], "data": json.dumps(data)}).encode()
    # Each file of the cache in turn: a cold run writes it again before the next one. The
    # records are read only when the facts are built again (here: none kept as built).
    cases = [(name, c) for name in (facts, records) for c in hostile]
    cases += [(records, forged_records), (facts, forged_built)]
    for where, content in cases:
        if where == records:
            facts.unlink()
        where.write_bytes(content)
        proc = gpulint_in_process(
            "check", "-f", "json", "--fail-on", "warning", "train-d.yaml", cwd=root
        )
        assert proc.returncode == 1, proc.stderr
        assert "Traceback" not in proc.stderr
        found = json.loads(proc.stdout)["findings"]
        assert [(f["rule"], f["severity"]) for f in found] == [(f[2], f[3]) for f in cold[0]]
        # A corrupt file is said; one signed with another key (another user's, a committed
        # one) is someone else's cache, ignored quietly.
        corrupt = content in hostile
        assert ("not a cache gpulint wrote" in proc.stderr) == corrupt, proc.stderr
    assert not marker.exists()


def test_the_cache_folder_is_never_written_through_a_link(tmp_path: Path) -> None:
    root = _repo_with_consensus(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".gpulint_cache").symlink_to(elsewhere, target_is_directory=True)
    findings, code = check(root, "train-d.yaml")
    assert code == 1 and [f[2] for f in findings] == ["GPU020"]
    assert list(elsewhere.iterdir()) == []


def test_the_documented_project_line_keeps_the_facts_apart(tmp_path: Path) -> None:
    from tests.docblocks import block

    line = block("docs/cluster.md", "Projects: where the facts come from", "yaml", 0).text
    files = {f"a/train-{c}.yaml": job(f"train-{c}", SKU) for c in "abc"}
    files["b/train.yaml"] = job("train")
    files["b/.gpulint.yaml"] = line
    root = write(tmp_path, files)
    findings, code = check(root, ".")
    assert [f[2:4] for f in of(findings, "b/train.yaml")] == [("GPU020", "info")] and code == 0


def test_the_cache_key_follows_the_code_in_a_checkout(tmp_path: Path) -> None:
    """Run from a source checkout, an edit to gpulint's files (a branch checked out) gives
    the project's cache another key; an installed release is keyed by its version."""
    import os
    import shutil
    import subprocess
    import sys

    from gpulint import __version__
    from tests.conftest import ROOT

    shutil.copytree(
        ROOT / "gpulint", tmp_path / "gpulint", ignore=shutil.ignore_patterns("__pycache__")
    )
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'gpulint'\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"}

    def key() -> str:
        code = "from gpulint.util.codekey import code_key; print(code_key())"
        proc = subprocess.run(
            [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.strip()

    first = key()
    assert first.startswith(f"{__version__}+") and key() == first
    with open(tmp_path / "gpulint" / "codes.py", "a", encoding="utf-8") as fh:
        fh.write("# edited\n")
    edited = key()
    assert edited.startswith(f"{__version__}+") and edited != first
    (tmp_path / "pyproject.toml").unlink()
    assert key() == __version__


def test_a_rule_reads_the_projects_facts_from_its_context() -> None:
    """GPU020 judges a pod against the picture its linter was given (``Settings.evidence``,
    read by the rule as ``ctx.evidence``), not against files it finds or a run's state: the
    same text is an assumption without it and cites the given evidence with it."""
    from gpulint.cluster.known import Evidence, KnownTaint, Picture
    from gpulint.k8s.taints import Taint
    from gpulint.settings import Settings
    from tests.conftest import lint

    text = job("train-d")
    (alone,) = [f for f in lint(text) if f.rule == "GPU020"]
    assert alone.severity.name == "INFO" and "sku" not in alone.message
    taint = Taint("sku", "gpu", "NoSchedule")
    places = (("elsewhere/train-a.yaml", 9), ("elsewhere/train-b.yaml", 9))
    evidence = Evidence("tolerated by 2 of the 3 GPU pods of this project", places)
    settings = Settings()
    settings.evidence = Picture((KnownTaint(taint, False, evidence, witnesses=2, pods=3),), 3)
    (judged,) = [f for f in lint(text, settings=settings) if f.rule == "GPU020"]
    assert judged.severity.name == "WARNING" and "sku=gpu:NoSchedule" in judged.message
    assert [(r.path, r.span.line) for r in judged.related] == list(places)
