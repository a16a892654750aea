"""Small hostile inputs end in a finding or a configuration error, never in a hang.

Each test runs a smaller instance of an input that used to hang or grow quadratically
(issue: merge-key bombs, stacked suppressions, many templates, paths, ignores and globs).
Timings are measured in bench/scaling.py, never asserted here: these tests pin the
behaviour -- the finding, the error and its line -- that the fixed code gives.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.loader.stream import DocumentStream, load_text
from gpulint.settings import Settings
from gpulint.suppress.findings import ObjectIgnore
from gpulint.util.globs import Glob
from tests.conftest import gpulint_in_process

MERGE_BOMB = "a: &a {<<: [*a, *a, *a, *a, *a, *a, *a, *a], k: 1}\n"


def chain_bomb(levels: int, fanout: int = 8) -> str:
    """``a1`` merges ``a0`` eight times, ``a2`` merges ``a1`` eight times, ...: 8^levels reads."""
    lines = ["a0: &a0 {k: 1}"]
    for level in range(1, levels + 1):
        sources = ", ".join([f"*a{level - 1}"] * fanout)
        lines.append(f"a{level}: &a{level} {{<<: [{sources}], k{level}: {level}}}")
    return "\n".join(lines) + "\n"


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """What gpulint prints for a command line (in-process: these tests are about the
    finding or the error, not the process)."""
    return gpulint_in_process(*args, cwd=cwd)


# -- merge keys count against the alias budget ----------------------------------------------


def test_self_merge_is_yml004_naming_the_anchor() -> None:
    result = load_text(MERGE_BOMB)
    assert result.documents == []
    [problem] = result.problems
    assert problem.code == "YML004"
    assert "anchor &a merges itself" in problem.message


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("a: &a {b: {<<: *a}}\n", id="merge-of-an-ancestor"),
        pytest.param("a: &a\n  <<: *a\n  k: 1\n", id="block-self-merge"),
        pytest.param(chain_bomb(32), id="chain-8^32"),
    ],
)
def test_merge_bombs_are_yml004(text: str) -> None:
    result = load_text(text)
    assert [p.code for p in result.problems] == ["YML004"]
    assert result.documents == []


def test_ordinary_merges_still_load() -> None:
    text = (
        "base: &base {cpu: 1, memory: 1Gi}\n"
        "gpu: &gpu {<<: *base, nvidia.com/gpu: 1}\n"
        "both: {<<: [*gpu, *base], memory: 2Gi}\n"
    )
    result = load_text(text)
    assert result.problems == []
    assert result.documents[0].data["both"] == {
        "memory": "2Gi",
        "cpu": 1,
        "nvidia.com/gpu": 1,
    }


def test_merge_bomb_in_a_manifest_is_a_finding_and_the_next_file_is_linted(
    tmp_path: Path,
) -> None:
    (tmp_path / "a-bomb.yaml").write_text(MERGE_BOMB)
    (tmp_path / "b-pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 0.5}}}\n"
    )
    proc = run(["check", "."], tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "a-bomb.yaml:1:1: YML004" in proc.stdout
    assert "b-pod.yaml" in proc.stdout


def test_merge_bomb_in_the_configuration_is_a_config_error_with_its_line(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gpulint.yaml").write_text("ignore: [GPU021]\n" + MERGE_BOMB)
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    proc = run(["check", "pod.yaml"], tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("gpulint: error: .gpulint.yaml:1: anchor &a merges itself")


# -- suppressions by the thousand -------------------------------------------------------------

GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  namespace: {namespace}
spec:
  tolerations:
  - {{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}}
  containers:
  - name: main
    image: registry.example/train:1
    resources:
      limits:
{above}        nvidia.com/gpu: 0.5
"""


def linter(**settings: Any) -> Linter:
    return Linter(load_rules(), Settings(**settings))


def test_stacked_next_line_comments_all_silence_the_same_line() -> None:
    above = (
        "        # gpulint: disable-next-line=GPU004 -- one\n"
        "\n"
        "        # an ordinary comment between them\n"
    ) * 200
    text = GPU_POD.format(name="p", namespace="ml", above=above)
    found = linter().lint_text("p.yaml", text)
    gpu004 = [f for f in found if f.rule == "GPU004"]
    assert len(gpu004) == 1 and gpu004[0].suppression is not None
    assert gpu004[0].suppression.justification == "one"
    assert [f for f in found if f.rule == "GL100"] == []


def test_next_line_comments_after_the_last_content_line_are_dangling() -> None:
    text = GPU_POD.format(name="p", namespace="ml", above="") + (
        "# gpulint: disable-next-line=GPU004\n" * 50
    )
    stale = [f for f in linter().lint_text("p.yaml", text) if f.rule == "GL100"]
    assert len(stale) == 50
    assert all("no YAML line follows" in f.message for f in stale)


def test_many_stale_suppressions_each_name_their_object() -> None:
    doc = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}  "
        "# gpulint: disable=GPU001 -- stale\ndata: {{k: v}}\n"
    )
    text = "---\n".join(doc.format(i=i) for i in range(300))
    stale = [f for f in linter().lint_text("cms.yaml", text) if f.rule == "GL100"]
    assert [(f.line, f.document, f.object.name if f.object else None) for f in stale] == [
        (4 + 6 * i, i, f"cm{i}") for i in range(300)
    ]


def test_many_per_object_ignores_match_by_name_namespace_kind_and_glob() -> None:
    entries = [
        ObjectIgnore(reason=f"exact {i}", kind="Pod", name=f"p{i}", rules=("GPU004",))
        for i in range(2000)
    ]
    entries += [
        ObjectIgnore(reason="team namespace", namespace="team-*", name="q*"),
        ObjectIgnore(reason="any pod", kind="P?d", name="r[0-9]"),
        ObjectIgnore(reason="not reached", kind="Pod", name="p1"),
    ]
    text = "---\n".join(
        [
            GPU_POD.format(name="p1", namespace="ml", above=""),
            GPU_POD.format(name="p1999", namespace="ml", above=""),
            GPU_POD.format(name="q7", namespace="team-a", above=""),
            GPU_POD.format(name="r5", namespace="ml", above=""),
            GPU_POD.format(name="unlisted", namespace="ml", above=""),
        ]
    )
    found = linter(per_object_ignores=tuple(entries)).lint_text("p.yaml", text)
    reasons = {
        f.object.name: f.suppression.justification if f.suppression else None
        for f in found
        if f.rule == "GPU004" and f.object is not None
    }
    assert reasons == {
        "p1": "exact 1",
        "p1999": "exact 1999",
        "q7": "team namespace",
        "r5": "any pod",
        "unlisted": None,
    }


# -- many templates, many paths ---------------------------------------------------------------


def test_argo_workflow_with_many_templates_reports_each_container() -> None:
    template = (
        "  - name: t{i}\n    container:\n      image: x\n"
        "      resources: {{limits: {{nvidia.com/gpu: 0.5}}}}\n"
        "    sidecars:\n    - {{name: s, image: y}}\n"
    )
    text = (
        "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: wf}\n"
        "spec:\n  entrypoint: t0\n  tolerations:\n"
        "  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n  templates:\n"
        + "".join(template.format(i=i) for i in range(500))
    )
    found = [f for f in linter().lint_text("wf.yaml", text) if f.suppression is None]
    assert {f.rule for f in found} == {"GPU004"}
    assert [f.doc_path[:3] for f in found] == [("spec", "templates", i) for i in range(500)]


def test_many_directories_on_the_command_line_are_each_linted_once(tmp_path: Path) -> None:
    names = [f"d{i}" for i in range(300)]
    for name in names:
        (tmp_path / name).mkdir()
        (tmp_path / name / "pod.yaml").write_text(
            GPU_POD.format(name=name, namespace="ml", above="")
        )
    # Overlapping paths: a folder twice, a file inside a folder given, "." around them all.
    args = ["check", "--format", "json", *names, "d1", "d2/pod.yaml", "."]
    proc = run(args, tmp_path)
    assert proc.returncode == 1, proc.stderr
    files = sorted({f["path"] for f in json.loads(proc.stdout)["findings"]})
    assert files == sorted(f"{name}/pod.yaml" for name in names)


# -- globs ------------------------------------------------------------------------------------


def reference_regex(pattern: str) -> re.Pattern[str]:
    """The backtracking translation globs.py used before, for patterns it handled right
    (no classes): the linear matcher must accept exactly the same paths."""
    out, i = [], 0
    while i < len(pattern):
        whole = i == 0 or pattern[i - 1] == "/"  # "**" is special only as a whole component
        stars = len(pattern[i:]) - len(pattern[i:].lstrip("*"))
        if whole and stars >= 2 and pattern.startswith("/", i + stars):
            out.append("(?:[^/]*/)*")
            i += stars + 1
        elif whole and stars >= 2 and i + stars == len(pattern):
            out.append(".*")
            i += stars
        elif stars:
            out.append("[^/]*")
            i += stars
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def reference_matches(pattern: str, relpath: str) -> bool:
    text = pattern.strip()
    text = text[2:] if text.startswith("./") else text
    text = text.strip("/")
    regex = reference_regex(text)
    parts = [p for p in relpath.split("/") if p and p != "."]
    # "dir/" matches folders only: the file at the end of ``relpath`` is no candidate.
    folders_only = pattern.strip().endswith("/") and text != ""
    candidates = parts[:-1] if folders_only else parts
    if "/" not in text and not pattern.strip().startswith("/"):
        return any(regex.match(part) for part in candidates)
    return any(regex.match("/".join(parts[:k])) for k in range(len(candidates), 0, -1))


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "*", "**", "**/", "?", "/", "."]), min_size=1, max_size=7),
    st.lists(st.sampled_from(["a", "b", "ab", "ba", ".", "aa"]), min_size=1, max_size=4),
)
def test_linear_matcher_agrees_with_the_regex_translation(
    pattern_parts: list[str], path_parts: list[str]
) -> None:
    pattern = "".join(pattern_parts)
    relpath = "/".join(path_parts)
    assert Glob.compile(pattern).matches(relpath) == reference_matches(pattern, relpath)


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.tpl.yaml", "charts/x.tpl.yaml", True),
        ("vendor", "a/vendor/b.yaml", True),
        ("charts/*/values.yaml", "charts/gpu/values.yaml", True),
        ("charts/*/values.yaml", "x/charts/gpu/values.yaml", False),
        ("**/gen/*.yaml", "a/b/gen/c.yaml", True),
        ("k8s/**", "k8s/a/b.yaml", True),
        ("[!a]*.yaml", "b.yaml", True),
        ("[!a]*.yaml", "a.yaml", False),
        ("[a-c]x", "bx", True),
        ("[]]x", "]x", True),
        ("a[/]b", "a/b", False),
    ],
)
def test_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    assert Glob.compile(pattern).matches(path) is expected


def test_backtracking_globs_match_a_long_name() -> None:
    name = "a" * 240
    for pattern in ("*a*a*a*a*a*a*b", "**/*a*a*a*a*a*a*b/**", f"{name}/**/*a*a*a*a*a*a*b"):
        glob = Glob.compile(pattern)
        assert not glob.matches(f"{name}/{name}/{name}.yaml")
    assert Glob.compile("*a*a*a*a*a*a*b").matches(f"x/{name}b")


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("k8s/[abc", "unclosed character class starting at column 5"),
        ("[z-a].yaml", "reversed range z-a in a character class"),
    ],
)
def test_an_invalid_glob_is_a_config_error_with_its_line(
    tmp_path: Path, pattern: str, problem: str
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gpulint.yaml").write_text(
        f"ignore: [GPU021]\nexclude:\n  - vendor\n  - '{pattern}'\n"
        f"per-object-ignores:\n  - {{name: 'x[', reason: r}}\n"
    )
    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    proc = run(["check", "pod.yaml"], tmp_path)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"gpulint: error: .gpulint.yaml:4: exclude[1]: '{pattern}' is not a valid glob: {problem}",
        "gpulint: error: .gpulint.yaml:6: per-object-ignores[0].name: 'x[' is not a valid "
        "glob: unclosed "
        "character class starting at column 2",
    ]


def test_a_backtracking_exclude_still_excludes(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gpulint.yaml").write_text("exclude: ['*a*a*a*a*a*a*b']\n")
    long = "a" * 200
    (tmp_path / f"{long}.yaml").write_text(GPU_POD.format(name="p", namespace="n", above=""))
    (tmp_path / f"{long}b").mkdir()
    (tmp_path / f"{long}b" / "x.yaml").write_text(GPU_POD.format(name="q", namespace="n", above=""))
    proc = run(["check", "--format", "json", "."], tmp_path)
    files = {f["path"] for f in json.loads(proc.stdout)["findings"]}
    assert files == {f"{long}.yaml"}


# -- document by document -------------------------------------------------------------------

DRA_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  resourceClaims: [{name: g, resourceClaimTemplateName: one-gpu}]
  containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]
"""
DRA_TEMPLATE = """\
apiVersion: {api}
kind: ResourceClaimTemplate
metadata: {{name: one-gpu, namespace: ml}}
spec:
  spec:
    devices:
      requests: [{{name: g, deviceClassName: gpu.nvidia.com}}]
"""


@pytest.mark.parametrize(
    "api",
    [
        pytest.param("resource.k8s.io/v1beta1", id="written-out"),
        pytest.param('"resource.k8s\\x2eio/v1beta1"', id="escaped"),
        pytest.param('"resource.k8s\\\n  .io/v1beta1"', id="escaped-line-break"),
    ],
)
def test_a_claim_in_a_later_document_still_resolves(api: str) -> None:
    text = DRA_POD + "---\n" + DRA_TEMPLATE.format(api=api)
    found = linter().lint_text("p.yaml", text)
    assert [f.rule for f in found if f.rule == "GPU020"] == ["GPU020"]


def test_documents_are_built_one_at_a_time() -> None:
    text = "a: 1\n---\nb: 2\n---\nc: [\n"
    stream = DocumentStream(text)
    documents = iter(stream)
    first = next(documents)
    assert first.data == {"a": 1}
    assert stream.problems == []  # the syntax error further down is not read yet
    assert [d.data for d in documents] == [{"b": 2}]
    assert [p.code for p in stream.problems] == ["YML001"]


def test_suppressions_reach_across_documents_linted_one_at_a_time() -> None:
    text = (
        "# gpulint: disable-file=GPU004 -- vendored\n"
        + GPU_POD.format(name="a", namespace="ml", above="")
        + "---\n"
        + GPU_POD.format(
            name="b", namespace="ml", above="        # gpulint: disable-next-line=GPU002\n"
        )
    )
    found = linter().lint_text("p.yaml", text)
    assert all(f.suppression is not None for f in found if f.rule == "GPU004")
    [stale] = [f for f in found if f.rule == "GL100"]
    assert (stale.document, stale.object.name if stale.object else None) == (1, "b")


#: Numbers a rule must read without expanding them or handing them to int(): a count with
#: thousands of digits (int() refuses more than 4,300), a superscript digit (str.isdigit()
#: accepts it, int() does not), and a quantity of 2**31 decimal digits.
ODD_NUMBERS = ["9" * 5000, "\u00b2", "1e2147483647", "1E+999999999"]


@pytest.mark.parametrize("number", ODD_NUMBERS, ids=["5000-digits", "superscript", "e31", "E9"])
def test_odd_numbers_give_findings_not_rule_errors(number: str) -> None:
    text = f"""\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: odd}}
spec:
  pytorchReplicaSpecs:
    Worker:
      template:
        spec:
          containers:
          - name: engine
            image: vllm/vllm-openai
            args: ["--tensor-parallel-size", "{number}", "--tp={number}"]
            env:
            - {{name: NUM_SHARD, value: "{number}"}}
            - {{name: NVIDIA_VISIBLE_DEVICES, value: "0,{number}"}}
            resources:
              limits:
                nvidia.com/gpu: "{number}"
                nvidia.com/gpu.shared: "{number}"
                aliyun.com/gpu-count: "{number}"
                aliyun.com/gpu-mem: "{number}"
"""
    linter = Linter(load_rules(), Settings(select=frozenset({"ALL"})))
    found = linter.lint_text("odd.yaml", text)
    assert [f.message for f in found if f.rule == "GL900"] == []


# -- texts whose lines a pattern could read several ways ---------------------------------------


def test_a_manifest_commented_out_with_windows_line_ends_is_no_object(tmp_path: Path) -> None:
    """Forty comment lines ending in CRLF (a Job commented out on Windows): a text with no
    object, so no finding; the MIME test reads each line one way (it tried 2^40)."""
    lines = ["# apiVersion: batch/v1", "# kind: Job", "#   nvidia.com/gpu: 1"] * 14
    (tmp_path / "job.yaml").write_bytes("\r\n".join(lines).encode())
    (tmp_path / "userdata.yaml").write_bytes(
        b"# boot\r\n# node\r\nMIME-Version: 1.0\r\nkind: x\r\napiVersion: y\r\n"
    )
    result = run(["check", "--isolated", "--select", "ALL", "."], tmp_path)
    assert result.returncode == 0, result.stdout
    assert "no findings in 2 files" in result.stdout


def test_a_closed_here_document_is_read_after_a_thousand_unclosed_ones(tmp_path: Path) -> None:
    """A Job whose script opens a thousand here-documents it never closes, then one that
    applies a GPU Job: the closed one is still found (GL204). That the openings are read in
    one pass is the bench row `crlf-comments`'s (its 4n/n ratio), not a timer here."""
    script = "cat <<EOF\n" * 1000 + (
        "kubectl apply -f - <<JOB\nkind: Job\nspec:\n  template:\n    spec:\n      containers:\n"
        "      - name: t\n        resources:\n          limits:\n"
        "            nvidia.com/gpu: 1\nJOB\n"
    )
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "apply"},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {"name": "k", "image": "bitnami/kubectl:1.33", "args": [script]}
                    ],
                }
            }
        },
    }
    (tmp_path / "job.yaml").write_text(json.dumps(job))
    result = run(["check", "--isolated", "--select", "GL204", "."], tmp_path)
    assert "GL204" in result.stdout, result.stdout
