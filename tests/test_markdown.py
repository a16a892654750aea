"""A Markdown file's fenced manifests (docs/usage.md "Markdown examples"): linted where they
are written, never louder than a warning, never a fact of the project. What each example is
told is in tests/fixtures/projects/markdown-*; these are the run's behaviours around it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import FIXTURES, gpulint_in_process

EXAMPLES = FIXTURES / "projects" / "markdown-fail-readme-examples"

HALF_GPU = """\
# Serving

```yaml
apiVersion: v1
kind: Pod
metadata: {name: cuda}
spec:
  containers:
  - name: cuda
    image: nvidia/cuda:12.4.0-base-ubuntu22.04
    resources: {limits: {nvidia.com/gpu: 0.5}}
```
"""


def _findings(cwd: Path, *args: str) -> tuple[int, list[dict[str, object]]]:
    proc = gpulint_in_process("check", "-f", "json", "--no-cache", *args, cwd=cwd)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.returncode, json.loads(proc.stdout)["findings"]


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_an_example_is_linted_where_it_is_written_and_fails_only_at_warning(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, {"README.md": HALF_GPU})
    code, found = _findings(root)
    (gpu004,) = [f for f in found if f["rule"] == "GPU004"]
    assert (gpu004["path"], gpu004["line"], gpu004["column"]) == ("README.md", 11, 42)
    assert gpu004["severity"] == "warning"  # the same pod in a .yaml file is an error
    assert code == 0
    code, _ = _findings(root, "--fail-on", "warning")
    assert code == 1
    (root / "pod.yaml").write_text(HALF_GPU.split("```yaml\n")[1].split("```")[0], "utf-8")
    _, found = _findings(root, "pod.yaml")
    assert [f["severity"] for f in found if f["rule"] == "GPU004"] == ["error"]


def test_a_markdown_file_named_on_the_command_line_is_read_as_markdown(tmp_path: Path) -> None:
    root = _project(tmp_path, {"docs/gpus.md": HALF_GPU})
    _, found = _findings(root, "docs/gpus.md")
    assert [f["rule"] for f in found if f["severity"] != "info"] == ["GPU004"]
    assert not [f for f in found if f["rule"].startswith("YML")]


def test_an_example_never_reaches_another_files_verdict(tmp_path: Path) -> None:
    # The README shows a tainted g5 pool; deploy/whisper.yaml is judged by the default taint,
    # as it is when the README is not there at all.
    root = tmp_path / "p"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "deploy").mkdir()
    whisper = (EXAMPLES / "deploy" / "whisper.yaml").read_text(encoding="utf-8")
    (root / "deploy" / "whisper.yaml").write_text(whisper, encoding="utf-8")
    _, alone = _findings(root)
    (root / "README.md").write_text((EXAMPLES / "README.md").read_text("utf-8"), "utf-8")
    _, beside = _findings(root)
    assert [f for f in beside if f["path"] == "deploy/whisper.yaml"] == alone
    (gpu020,) = alone
    assert "nvidia.com/gpu=present:NoSchedule" in str(gpu020["message"])


def test_exclude_leaves_markdown_out(tmp_path: Path) -> None:
    root = _project(tmp_path, {"README.md": HALF_GPU, ".gpulint.yaml": 'exclude: ["*.md"]\n'})
    proc = gpulint_in_process("check", "--no-cache", ".", cwd=root)
    assert proc.returncode == 0
    assert "No files linted" in proc.stdout


def test_a_suppression_comment_in_an_example_silences_it(tmp_path: Path) -> None:
    text = HALF_GPU.replace("0.5}}\n", "0.5}}  # gpulint: disable=GPU004\n")
    root = _project(tmp_path, {"README.md": text})
    _, found = _findings(root)
    (gpu004,) = [f for f in found if f["rule"] == "GPU004"]
    assert gpu004["suppressed"] is True
    assert not [f for f in found if f["rule"] == "GL100"]


def test_unclosed_and_nested_fences_are_read_as_commonmark_reads_them(tmp_path: Path) -> None:
    # A four-backtick block holds a three-backtick one (a Markdown example of Markdown): its
    # inner text is the outer block's, not a manifest. A fence never closed runs to the end.
    nested = "````markdown\n" + HALF_GPU + "````\n"
    root = _project(tmp_path, {"a.md": nested, "b.md": "text\n" + HALF_GPU.rsplit("```", 1)[0]})
    _, found = _findings(root)
    assert {(f["path"], f["line"]) for f in found if f["rule"] == "GPU004"} == {("b.md", 12)}


def test_inspect_shows_an_examples_objects_at_their_lines(tmp_path: Path) -> None:
    listed = "1. Apply:\n\n" + "".join(
        "   " + line if line.strip() else line for line in HALF_GPU.splitlines(keepends=True)
    )
    root = _project(tmp_path, {"README.md": HALF_GPU, "docs/list.md": listed})
    proc = gpulint_in_process("inspect", "--format", "json", ".", cwd=root)
    assert proc.returncode == 0, proc.stderr
    files = {f["path"]: f for f in json.loads(proc.stdout)["files"]}
    for label, line, column in (("README.md", 4, 1), ("docs/list.md", 6, 4)):
        (pod,) = files[label]["workloads"]
        assert (pod["kind"], pod["line"], pod["column"], files[label]["problems"]) == (
            "Pod",
            line,
            column,
            [],
        )


def test_markdown_that_is_not_text_is_left_alone(tmp_path: Path) -> None:
    # A NUL byte pasted into a README, and a Latin-1 one: not YAML problems of the project.
    root = _project(tmp_path, {})
    (root / "README.md").write_bytes(b"# Tools\n\n1. Visit [x](https://example.cn/\x000\x00\n")
    (root / "LISEZMOI.md").write_bytes("# Démo\n".encode("latin-1") + HALF_GPU.encode())
    code, found = _findings(root)
    assert (code, found) == (0, [])
    proc = gpulint_in_process("inspect", "--format", "json", ".", cwd=root)
    assert [f["problems"] for f in json.loads(proc.stdout)["files"]] == [[], []]


def test_a_design_proposal_shows_apis_as_proposed(tmp_path: Path) -> None:
    # Karpenter's designs/ propose fields and policies no release serves yet.
    root = _project(tmp_path, {"designs/fractional-gpus.md": HALF_GPU, "docs/gpus.md": HALF_GPU})
    _, found = _findings(root)
    assert {f["path"] for f in found} == {"docs/gpus.md"}


def test_a_here_document_in_a_shell_block_is_linted_where_it_is_written(tmp_path: Path) -> None:
    """``<<-"END"`` to its delimiter, or to the block's end when it has none; a here-string
    (``<<<``) is no here-document."""
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n"
    pod += "  - {name: a, image: cuda, resources: {limits: {nvidia.com/gpu: 0.5}}}\n"
    readme = (
        '# Smoke test\n\n```sh\ncat <<-"END" | kubectl apply -f -\n' + pod + "END\n```\n\n"
        "```console\n$ kubectl apply -f - <<EOF\n" + pod + "```\n\n"
        '```bash\ngrep -c gpu <<< "$(kubectl get pods)"\n' + pod + "```\n"
    )
    root = _project(tmp_path, {"README.md": readme})
    _, found = _findings(root)
    assert [(f["rule"], f["line"]) for f in found if f["rule"] == "GPU004"] == [
        ("GPU004", 10),
        ("GPU004", 21),
    ]


def test_a_here_document_inside_a_manifest_is_its_scripts(tmp_path: Path) -> None:
    """A yaml block that starts as a manifest is one, whatever its container's script writes."""
    readme = (
        "```yaml\napiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n"
        "  - name: a\n    image: cuda\n    command:\n    - sh\n    - -c\n    - |\n"
        "      cat <<EOF > /tmp/job.yaml\n      steps: 10\n      EOF\n"
        "    resources: {limits: {nvidia.com/gpu: 0.5}}\n```\n"
    )
    root = _project(tmp_path, {"README.md": readme})
    _, found = _findings(root)
    assert [(f["rule"], f["line"]) for f in found if f["rule"] == "GPU004"] == [("GPU004", 16)]
