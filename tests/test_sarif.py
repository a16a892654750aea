"""``--format sarif`` checked by real consumers: the SARIF 2.1.0 JSON schema (jsonschema)
and Microsoft's SARIF Multitool with its SARIF and GitHub rule kinds, on the bundled
examples, the rule fixtures and, when ``GPULINT_CORPUS`` names it, the real-world corpus
(relative paths, absolute paths, paths outside the working directory, stdin), plus
suppressed findings built directly.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from gpulint.lint.finder import load_rules
from gpulint.model import Finding, ObjectRef, Severity, Span, Suppression
from gpulint.report import Report
from gpulint.reporters import ReportContext, sarif as sarif_reporter
from tests.conftest import CORPUS, FIXTURES, ROOT, needs_corpus
from tests.externals import (
    assert_schema_valid,
    describe,
    file_uri_path,
    gpulint,
    multitool_validate_each,
    sarif_validator,
)

EXAMPLES = ROOT / "examples"
BAD = EXAMPLES / "bad-inference.yaml"

UNICODE_MANIFEST = """\
apiVersion: v1
kind: Pod
metadata:
  name: ünïcødé-pod
  annotations: {note: "😀 GPU für alle"}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - {name: "😀-main", image: "busybox", resources: {limits: {nvidia.com/gpu: 0.5}}}
"""


def _sarif(*args: str, cwd: Path, stdin: str | None = None) -> tuple[dict[str, Any], int]:
    proc = gpulint("check", "--format", "sarif", *args, cwd=cwd, stdin=stdin)
    assert proc.returncode in (0, 1, 2), proc.stderr
    return json.loads(proc.stdout), proc.returncode


def _suppressed_log(workdir: Path) -> dict[str, Any]:
    """Suppressed findings, built directly as the engine's suppression stage makes them."""
    ref = ObjectRef("apps/v1", "Deployment", "serving", "llama")
    findings = [
        Finding(
            "GPU001",
            "extended-resource-requests-without-limits",
            Severity.ERROR,
            "k8s/app.yaml",
            Span(25, 13, 25, 27),
            "nvidia.com/gpu is requested without a limit",
            ref,
            ("spec", "template", "spec", "containers", 0, "resources", "requests"),
            suppression=Suppression("inSource", "comment", "capacity reserved by the operator"),
        ),
        Finding(
            "GPU021",
            "cpu-pod-tolerates-gpu-taint",
            Severity.WARNING,
            "k8s/app.yaml",
            Span(40, 9, 40, 20),
            "the pod requests no GPU but tolerates the GPU taint",
            ObjectRef("batch/v1", "Job", None, "report"),
            ("spec", "template", "spec", "tolerations", 0),
            suppression=Suppression("external", "config", None),
        ),
        Finding(
            "GPU004",
            "fractional-extended-resource",
            Severity.ERROR,
            "k8s/app.yaml",
            Span(30, 29, 30, 32),
            "nvidia.com/gpu: 0.5 is not a whole number",
            ref,
            ("spec", "template", "spec", "containers", 1, "resources", "limits", "nvidia.com/gpu"),
        ),
    ]
    ctx = ReportContext(load_rules(), Severity.ERROR, 1, cwd=str(workdir), argv=["gpulint"])
    log: dict[str, Any] = json.loads(sarif_reporter.render(Report(findings, files=1), ctx))
    return log


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], int]]:
    """Every SARIF variant, produced once: name -> (log, exit code)."""
    tmp = tmp_path_factory.mktemp("sarif")
    (tmp / "k8s").mkdir()
    (tmp / "k8s" / "unicode.yaml").write_text(UNICODE_MANIFEST, encoding="utf-8")
    (tmp / "with space").mkdir()
    shutil.copy(BAD, tmp / "with space" / "bad #1.yaml")
    out: dict[str, tuple[dict[str, Any], int]] = {
        "examples": _sarif("examples", cwd=ROOT),
        "clean": _sarif("examples/good-training-job.yaml", cwd=ROOT),
        "fixtures": _sarif("tests/fixtures/rules", cwd=ROOT),
        # Every rule, GPU003 (opt-in, whose fix deletes) included.
        "fixtures-all": _sarif("--select", "ALL", "tests/fixtures/rules", cwd=ROOT),
        "absolute": _sarif(str(FIXTURES / "rules"), str(BAD), cwd=tmp),
        "outside-cwd": _sarif("../examples/bad-inference.yaml", cwd=ROOT / "tests"),
        "stdin": _sarif("-", cwd=ROOT, stdin=BAD.read_text(encoding="utf-8")),
        "stdin-named": _sarif(
            "--stdin-filename",
            "deploy/bad.yaml",
            "-",
            cwd=ROOT,
            stdin=BAD.read_text(encoding="utf-8"),
        ),
        "missing-path": _sarif("examples", "no/such/file.yaml", cwd=ROOT),
        "unicode": _sarif("k8s/unicode.yaml", cwd=tmp),
        "odd-names": _sarif("with space", cwd=tmp),
        "suppressed": (_suppressed_log(tmp), 1),
        "rule-folder": _rule_folder_log(tmp / "repo"),
    }
    if CORPUS:
        out["corpus-relative"] = _sarif(".", cwd=CORPUS)
        out["corpus-absolute"] = _sarif(str(CORPUS), str(BAD), cwd=tmp)
    return out


def _run(log: dict[str, Any]) -> dict[str, Any]:
    assert len(log["runs"]) == 1
    run: dict[str, Any] = log["runs"][0]
    return run


def _resolve(run: dict[str, Any], artifact: dict[str, Any]) -> str:
    """An artifact location as an absolute URI, per SARIF §3.4.4 (uriBaseId resolution)."""
    uri: str = artifact["uri"]
    base_id = artifact.get("uriBaseId")
    if base_id is None:
        return uri
    base = run["originalUriBaseIds"][base_id]["uri"]
    assert base.startswith("file:///") and base.endswith("/")
    return urljoin(base, uri)


# -- real consumers -----------------------------------------------------------------------------


def test_every_variant_is_valid_against_the_official_schema(
    logs: dict[str, tuple[dict[str, Any], int]],
) -> None:
    for name, (log, _) in logs.items():
        try:
            assert_schema_valid(log)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


def test_the_validated_logs_carry_fixes(logs: dict[str, tuple[dict[str, Any], int]]) -> None:
    """The logs both consumers validate hold fixes of every shape: an insertion (an empty
    region), a deletion (no insertedContent) and a replacement, safe and unsafe."""
    replacements = []
    applicability = set()
    for result in _run(logs["fixtures-all"][0])["results"]:
        for fix in result.get("fixes", ()):
            applicability.add(fix["properties"]["applicability"])
            for change in fix["artifactChanges"]:
                replacements.extend(change["replacements"])
    assert applicability == {"safe", "unsafe"}
    kinds = set()
    for r in replacements:
        region = r["deletedRegion"]
        empty = (region["startLine"], region["startColumn"]) == (
            region["endLine"],
            region["endColumn"],
        )
        kinds.add("insert" if empty else "delete" if "insertedContent" not in r else "replace")
    assert kinds == {"insert", "delete", "replace"}


def test_the_schema_check_is_not_vacuous(logs: dict[str, tuple[dict[str, Any], int]]) -> None:
    log = json.loads(json.dumps(logs["examples"][0]))
    result = _run(log)["results"][0]
    result["level"] = "fatal"
    result["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    errors = {e.validator for e in sarif_validator().iter_errors(log)}
    assert errors == {"enum", "minimum"}, errors


#: A log GitHub would reject: no rules, no schema, a region that ends before it starts.
BROKEN_LOG = {
    "version": "2.1.0",
    "runs": [
        {
            "tool": {"driver": {"name": "gpulint"}},
            "results": [
                {
                    "ruleId": "GPU001",
                    "message": {"text": "no period"},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": {"uri": "/abs/k8s.yaml"},
                                "region": {"startLine": 3, "endLine": 2},
                            }
                        }
                    ],
                }
            ],
        }
    ],
}


@pytest.fixture(scope="module")
def multitool_results(
    logs: dict[str, tuple[dict[str, Any], int]], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[dict[str, Any]]]:
    """The Multitool's errors and warnings for every variant and for BROKEN_LOG ("broken"),
    from one start of it (it takes many files): name -> the results about ``name.sarif``."""
    tmp = tmp_path_factory.mktemp("multitool")
    texts = {name: json.dumps(log, indent=2, ensure_ascii=False) for name, (log, _) in logs.items()}
    assert "broken" not in texts
    texts["broken"] = json.dumps(BROKEN_LOG)
    paths = {name: tmp / f"{name}.sarif" for name in texts}
    for name, path in paths.items():
        path.write_text(texts[name], encoding="utf-8")
    by_path = multitool_validate_each(list(paths.values()), tmp)
    return {name: by_path[path] for name, path in paths.items()}


def test_the_sarif_multitool_reports_no_error_and_no_warning(
    multitool_results: dict[str, list[dict[str, Any]]],
) -> None:
    problems = {
        name: results for name, results in multitool_results.items() if name != "broken" and results
    }
    assert not problems, "\n".join(f"{name}.sarif:\n{describe(r)}" for name, r in problems.items())


def test_the_multitool_check_is_not_vacuous(
    multitool_results: dict[str, list[dict[str, Any]]],
) -> None:
    """The same harness, in the same run as the variants, flags a log GitHub would reject
    (BROKEN_LOG), under that log's name."""
    found = {r["ruleId"].split("/")[0] for r in multitool_results["broken"]}
    assert {"SARIF1007", "SARIF2008", "GH1018"} <= found, found


# -- contents -----------------------------------------------------------------------------------


def test_results_match_the_json_findings_field_by_field(
    logs: dict[str, tuple[dict[str, Any], int]],
) -> None:
    findings = json.loads(gpulint("check", "--format", "json", "examples", cwd=ROOT).stdout)
    run = _run(logs["examples"][0])
    results = run["results"]
    assert run["columnKind"] == "unicodeCodePoints"
    assert len(results) == len(findings["findings"]) > 0
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for result, f in zip(results, findings["findings"], strict=True):
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region == {
            "startLine": f["line"],
            "startColumn": f["column"],
            "endLine": f["end_line"],
            "endColumn": f["end_column"],
        }
        assert result["ruleId"] == f["rule"]
        assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == f["rule"]
        assert result["level"] == levels[f["severity"]]
        assert f["message"] in result["message"]["text"]
        obj = f["object"]
        assert result["message"]["text"][-1] in ".?!"
        if obj is None:  # a finding outside any object (YML001, YML005): no logical location
            continue
        # A namespaced object as "Kind 'namespace/name'", a cluster-scoped one (a
        # DeviceClass) as "Kind 'name'"; an object without a name (metadata misspelt) as '?'.
        name = obj["name"] if obj["name"] is not None else "?"
        shown = f"{obj['namespace']}/" if obj["namespace"] else f"{name}'"
        assert result["message"]["text"].startswith(f"{obj['kind']} '{shown}")
        assert result["message"]["text"][-1] in ".?!"
        logical = result["locations"][0]["logicalLocations"][0]
        assert logical["name"] == name
        assert logical["properties"]["kind"] == obj["kind"]


def test_columns_count_unicode_code_points(logs: dict[str, tuple[dict[str, Any], int]]) -> None:
    (result,) = _run(logs["unicode"][0])["results"]
    line = UNICODE_MANIFEST.splitlines()[8]
    region = result["locations"][0]["physicalLocation"]["region"]
    start = line.index("0.5") + 1  # a str index counts code points, not UTF-16 units
    assert region == {"startLine": 9, "startColumn": start, "endLine": 9, "endColumn": start + 3}
    assert len(line[: start - 1].encode("utf-16-le")) // 2 != start - 1  # the emoji counts once


def test_rules_are_described_for_code_scanning(logs: dict[str, tuple[dict[str, Any], int]]) -> None:
    driver = _run(logs["clean"][0])["tool"]["driver"]
    rules = {r.code: r for r in load_rules()}
    assert [d["id"] for d in driver["rules"]] == sorted(rules)
    assert driver["name"] == "gpulint"
    assert driver["version"] == driver["semanticVersion"]
    levels = {"error": "error", "warning": "warning", "info": "note"}
    for descriptor in driver["rules"]:
        rule = rules[descriptor["id"]]
        assert descriptor["name"][0].isupper() and "-" not in descriptor["name"]
        assert descriptor["properties"]["gpulint/name"] == rule.name
        assert descriptor["shortDescription"]["text"] == rule.doc.splitlines()[0]
        assert descriptor["fullDescription"]["markdown"] == rule.summary
        assert descriptor["help"]["markdown"] == rule.doc
        assert "## Why it matters" in descriptor["help"]["markdown"]
        # The rule's page on the docs site (tests/test_docs_site.py: a page of the built site).
        assert descriptor["helpUri"] == (
            f"https://gpulint.github.io/gpulint/rules/{rule.code.lower()}.html"
        )
        assert descriptor["defaultConfiguration"]["level"] == levels[rule.severity.label]


def test_clean_run_has_no_results_and_a_successful_invocation(
    logs: dict[str, tuple[dict[str, Any], int]],
) -> None:
    log, code = logs["clean"]
    run = _run(log)
    assert code == 0 and run["results"] == []
    (invocation,) = run["invocations"]
    assert invocation["exitCode"] == 0 and invocation["executionSuccessful"] is True
    assert invocation["startTimeUtc"] <= invocation["endTimeUtc"]
    assert invocation["arguments"][:3] == ["check", "--format", "sarif"]


def test_invocation_records_findings_exit_code_and_tool_errors(
    logs: dict[str, tuple[dict[str, Any], int]],
) -> None:
    log, code = logs["examples"]
    (invocation,) = _run(log)["invocations"]
    assert code == 1 and invocation["exitCode"] == 1
    assert invocation["executionSuccessful"] is True  # findings are not a tool failure

    log, code = logs["missing-path"]
    (invocation,) = _run(log)["invocations"]
    assert code == 2 and invocation["exitCode"] == 2
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error"
    assert note["message"]["text"] == "no/such/file.yaml: no such file or directory."
    assert _run(log)["results"], "the files that exist are still reported"


# -- artifact locations -------------------------------------------------------------------------


def _locations(run: dict[str, Any]) -> list[dict[str, Any]]:
    return [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run["results"]]


@pytest.mark.parametrize(
    ("name", "cwd"),
    [
        ("examples", ROOT),
        ("fixtures", ROOT),
        pytest.param("corpus-relative", CORPUS, marks=needs_corpus, id="corpus-relative"),
    ],
)
def test_relative_paths_resolve_against_srcroot_to_the_real_files(
    logs: dict[str, tuple[dict[str, Any], int]], name: str, cwd: Path
) -> None:
    run = _run(logs[name][0])
    srcroot = run["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert file_uri_path(srcroot).resolve() == cwd.resolve()
    assert run["invocations"][0]["workingDirectory"]["uri"] == srcroot
    for artifact in _locations(run):
        assert artifact["uriBaseId"] == "%SRCROOT%", artifact
        assert not artifact["uri"].startswith(("/", "file:", "..")), artifact
        assert file_uri_path(_resolve(run, artifact)).is_file(), artifact


@pytest.mark.parametrize(
    ("name", "folder"),
    [
        ("absolute", FIXTURES / "rules"),
        pytest.param("corpus-absolute", CORPUS, marks=needs_corpus, id="corpus-absolute"),
    ],
)
def test_absolute_paths_inside_and_outside_the_working_directory(
    logs: dict[str, tuple[dict[str, Any], int]], name: str, folder: Path
) -> None:
    run = _run(logs[name][0])
    uris = set()
    for artifact in _locations(run):
        assert "uriBaseId" not in artifact  # outside %SRCROOT%: an absolute file URI
        path = file_uri_path(artifact["uri"])
        assert path.is_absolute() and path.is_file(), artifact
        uris.add(path)
    assert BAD.resolve() in uris
    assert any(folder.resolve() in p.parents for p in uris)


def test_paths_that_climb_out_of_the_working_directory_become_absolute(
    logs: dict[str, tuple[dict[str, Any], int]],
) -> None:
    run = _run(logs["outside-cwd"][0])  # `gpulint check ../examples` run in tests/
    artifacts = _locations(run)
    assert artifacts
    for artifact in artifacts:
        assert artifact == {"uri": BAD.resolve().as_uri()}
    ctx = ReportContext([], Severity.ERROR, 0, cwd=str(EXAMPLES))
    location = sarif_reporter.artifact_location("../README.md", ctx)
    assert location == {"uri": (ROOT / "README.md").as_uri()}
    location = sarif_reporter.artifact_location(str(BAD), ctx)
    assert location == {"uri": "bad-inference.yaml", "uriBaseId": "%SRCROOT%"}


def test_file_names_are_percent_encoded(logs: dict[str, tuple[dict[str, Any], int]]) -> None:
    run = _run(logs["odd-names"][0])
    artifacts = _locations(run)
    assert artifacts and {a["uri"] for a in artifacts} == {"with%20space/bad%20%231.yaml"}
    assert all(file_uri_path(_resolve(run, a)).is_file() for a in artifacts)


def test_stdin_without_and_with_a_file_name(logs: dict[str, tuple[dict[str, Any], int]]) -> None:
    run = _run(logs["stdin"][0])
    artifacts = _locations(run)
    assert artifacts
    for artifact in artifacts:
        # Not a file under %SRCROOT%: a relative reference with no base, described as stdin.
        assert artifact["uri"] == "%3Cstdin%3E" and "uriBaseId" not in artifact
        assert artifact["description"]["text"] == "Standard input."
    run = _run(logs["stdin-named"][0])
    for artifact in _locations(run):
        assert artifact == {"uri": "deploy/bad.yaml", "uriBaseId": "%SRCROOT%"}


# -- fingerprints -------------------------------------------------------------------------------


def _fingerprints(run: dict[str, Any]) -> dict[tuple[str, str], str]:
    out = {}
    for r in run["results"]:
        key = (r["ruleId"], r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"])
        out[key] = r["partialFingerprints"]["gpulint/v1"]
    return out


def test_fingerprints_stay_when_unrelated_lines_move(tmp_path: Path) -> None:
    original = BAD.read_text(encoding="utf-8")
    (tmp_path / "k8s").mkdir()
    target = tmp_path / "k8s" / "app.yaml"
    target.write_text(original, encoding="utf-8")
    before, _ = _sarif("k8s/app.yaml", cwd=tmp_path)

    moved = (
        "# Owned by the serving team.\n\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n---\n"
        + original.replace("  replicas: 2\n", "  replicas: 2\n  # scaled by KEDA\n\n")
    )
    target.write_text(moved, encoding="utf-8")
    after, _ = _sarif("k8s/app.yaml", cwd=tmp_path)

    def starts(log: dict[str, Any]) -> list[int]:
        return [
            r["locations"][0]["physicalLocation"]["region"]["startLine"]
            for r in _run(log)["results"]
        ]

    assert all(a > b for a, b in zip(starts(after), starts(before), strict=True))
    assert _fingerprints(_run(after)) == _fingerprints(_run(before))
    values = list(_fingerprints(_run(before)).values())
    assert len(set(values)) == len(values) == 7


def test_fingerprints_change_with_what_the_finding_is_about(tmp_path: Path) -> None:
    original = BAD.read_text(encoding="utf-8")
    target = tmp_path / "app.yaml"
    target.write_text(original, encoding="utf-8")
    before = _fingerprints(_run(_sarif("app.yaml", cwd=tmp_path)[0]))
    target.write_text(original.replace("name: llama-server", "name: llama-server-v2"), "utf-8")
    after = _fingerprints(_run(_sarif("app.yaml", cwd=tmp_path)[0]))
    renamed = {k: v for k, v in before.items() if "llama-server" in k[1]}
    kept = {k: v for k, v in before.items() if "llama-server" not in k[1]}
    assert renamed and kept
    assert not set(renamed.values()) & set(after.values())
    assert all(after[k] == v for k, v in kept.items())


def test_findings_that_would_share_a_fingerprint_are_numbered() -> None:
    ref = ObjectRef("v1", "Pod", None, "p")
    twin = Finding("YML002", "duplicate-key", Severity.ERROR, "a.yaml", Span(3, 1, 3, 4), "m", ref)
    report = Report([twin, twin], files=1)
    ctx = ReportContext(load_rules(), Severity.ERROR, 1, cwd=os.getcwd())
    run = _run(json.loads(sarif_reporter.render(report, ctx)))
    first, second = (r["partialFingerprints"]["gpulint/v1"] for r in run["results"])
    assert first.endswith(":1") and second.endswith(":2")
    assert first.split(":")[0] == second.split(":")[0]


# -- suppressions -------------------------------------------------------------------------------


def test_suppressed_findings_carry_sarif_suppressions(
    logs: dict[str, tuple[dict[str, Any], int]],
) -> None:
    results = _run(logs["suppressed"][0])["results"]
    by_rule = {r["ruleId"]: r for r in results}
    assert by_rule["GPU001"]["suppressions"] == [
        {
            "kind": "inSource",
            "status": "accepted",
            "properties": {"source": "comment"},
            "justification": "capacity reserved by the operator",
        }
    ]
    assert by_rule["GPU021"]["suppressions"] == [
        {"kind": "external", "status": "accepted", "properties": {"source": "config"}}
    ]
    assert "suppressions" not in by_rule["GPU004"]
    assert by_rule["GPU021"]["message"]["text"].startswith("Job 'report': ")


#: A rule folder's declarative rule whose documentation links and embeds what it likes.
LINKING_RULE = """\
code: EVIL001
name: evil-docs
target: object
message: "x"
schema: {type: object}
docs: |
  Looks harmless. [click](https://evil.example) ![x](https://evil.example/i.png)
"""


def _rule_folder_log(repo: Path) -> tuple[dict[str, Any], int]:
    """The log of a repository whose rule folder holds LINKING_RULE, written with ``-o``."""
    (repo / ".git").mkdir(parents=True)
    (repo / "policy").mkdir()
    (repo / "policy" / "evil.yaml").write_text(LINKING_RULE, "utf-8")
    (repo / ".gpulint.yaml").write_text("rule-dirs: [policy]\n", "utf-8")
    shutil.copy(BAD, repo / "pod.yaml")
    proc = gpulint("check", "-f", "sarif", "-o", "out.sarif", "pod.yaml", cwd=repo)
    assert proc.returncode == 1, proc.stderr
    return json.loads((repo / "out.sarif").read_text("utf-8")), proc.returncode


def test_rule_folder_docs_are_help_text_only(
    logs: dict[str, tuple[dict[str, Any], int]],
    multitool_results: dict[str, list[dict[str, Any]]],
) -> None:
    """Code scanning renders ``markdown`` on gpulint's alerts: the tree's rules give text.
    The log is one of the module's variants: the Multitool validates it with the others."""
    log, code = logs["rule-folder"]
    assert code == 1
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    evil = rules["EVIL001"]
    assert set(evil["help"]) == {"text"}  # shown as written: no link, no image
    assert evil["help"]["text"].startswith("Looks harmless. [click](https://evil.example) ![x]")
    assert set(evil["fullDescription"]) == {"text"}
    assert "helpUri" not in evil
    # gpulint's own rules keep their markdown and their page.
    assert set(rules["GPU001"]["help"]) == {"text", "markdown"}
    assert set(rules["GPU001"]["fullDescription"]) == {"text", "markdown"}
    assert rules["GPU001"]["helpUri"].startswith("https://")
    assert multitool_results["rule-folder"] == [], describe(multitool_results["rule-folder"])
