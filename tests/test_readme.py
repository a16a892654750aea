"""The README's and the docs site's examples work as written: a new user copies them.

Every fenced block of README.md and docs/*.md (the site's pages) is listed in BLOCKS with the
test that runs it (here, or in another test module), or with the reason it cannot run; a
block that is not listed fails ``test_every_block_is_run``. Blocks are found by
tests/docblocks.py, which also compares documented console output with the real output
(``...`` conventions there).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from tests.conftest import ROOT, gpulint_cmd, gpulint_in_process
from tests.docblocks import DOCUMENTS, Block, assert_output, block, blocks, console
from tests.externals import helm, needs_helm

README = (ROOT / "README.md").read_text(encoding="utf-8")
NOT_RUN = "not run: "

#: Every block, by (document, section, language, index among that language's blocks in the
#: section): the test that runs it ("test_x" here, "tests/file.py::test_x" elsewhere), or
#: "not run: <why>".
BLOCKS: dict[tuple[str, str, str, int], str] = {
    ("README.md", "Quick start", "console", 0): "test_the_quick_start_commands",
    ("README.md", "What it catches", "console", 1): "test_make_demo_prints_what_the_readme_shows",
    ("README.md", "Installing", "console", 0): "test_the_install_commands",
    ("README.md", "Your first run: describe your platform", "console", 0): (
        "test_the_first_run_commands"
    ),
    ("README.md", "Your first run: describe your platform", "yaml", 0): (
        "test_the_platform_configuration"
    ),
    ("README.md", "What it catches", "yaml", 0): "test_the_real_before_and_after",
    ("README.md", "What it catches", "console", 0): "test_the_real_before_and_after",
    ("README.md", "What it catches", "yaml", 1): "test_the_real_before_and_after",
    ("README.md", "pre-commit, CI and editors", "yaml", 0): (
        "test_the_readme_hook_is_the_documented_one"
    ),
    ("docs/usage.md", "Using it", "console", 0): "test_the_usage_commands",
    (
        "docs/usage.md",
        "Using it",
        "console",
        1,
    ): "tests/test_fix_cli.py::test_the_readme_fix_commands",
    ("docs/workloads.md", "Supported workloads", "yaml", 0): "test_the_workloads_row_example",
    ("docs/usage.md", "Seeing what gpulint sees: `gpulint inspect`", "console", 0): (
        "test_the_inspect_example"
    ),
    ("docs/usage.md", "Seeing what gpulint sees: `gpulint inspect`", "console", 1): (
        "tests/test_inspect.py::test_the_docs_render_example"
    ),
    ("docs/cluster.md", "Will it schedule? `--cluster`", "console", 0): "test_the_cluster_tutorial",
    ("docs/cluster.md", "Will it schedule? `--cluster`", "console", 1): "test_the_cluster_tutorial",
    ("docs/cluster.md", "Will it schedule? `--cluster`", "console", 2): "test_the_cluster_tutorial",
    ("docs/cluster.md", "Will it schedule? `--cluster`", "console", 3): (
        "tests/test_dra_nodes.py::test_inspect_shows_the_published_devices_each_request_may_get"
    ),
    ("docs/cluster.md", "Will it schedule? `--cluster`", "console", 4): (
        "tests/test_inspect.py::test_inspect_lists_every_claim_of_a_pod_and_what_its_requests_resolve_to"
    ),
    (
        "docs/configuration.md",
        "Configuration",
        "yaml",
        0,
    ): "test_the_complete_configuration_example",
    (
        "docs/configuration.md",
        "Configuration",
        "toml",
        0,
    ): "test_the_complete_configuration_example",
    ("docs/configuration.md", "Configuration", "yaml", 1): "test_the_configuration_error_example",
    (
        "docs/configuration.md",
        "Configuration",
        "console",
        0,
    ): "test_the_configuration_error_example",
    ("docs/configuration.md", "Configuration", "yaml", 2): "test_the_config_command_example",
    ("docs/configuration.md", "Configuration", "console", 1): "test_the_config_command_example",
    (
        "docs/rendering.md",
        "Helm charts and Kustomize overlays",
        "console",
        0,
    ): "test_the_render_example",
    ("docs/rendering.md", "Helm charts and Kustomize overlays", "yaml", 0): (
        "test_the_render_configuration_example"
    ),
    ("docs/rendering.md", "Helm charts and Kustomize overlays", "console", 1): (
        "test_the_render_fix_example"
    ),
    (
        "docs/suppressing.md",
        "Suppressing findings",
        "yaml",
        0,
    ): "test_the_comment_suppression_example",
    (
        "docs/suppressing.md",
        "Suppressing findings",
        "console",
        0,
    ): "test_the_comment_suppression_example",
    ("docs/suppressing.md", "Suppressing findings", "yaml", 1): "test_the_annotation_example",
    ("docs/suppressing.md", "Suppressing findings", "console", 1): "test_the_annotation_example",
    ("docs/suppressing.md", "Adopting gpulint on a repository with findings", "console", 0): (
        "test_the_baseline_example"
    ),
    (
        "docs/writing-rules.md",
        "A declarative rule (no Python)",
        "yaml",
        0,
    ): "test_the_declarative_rule_example",
    (
        "docs/writing-rules.md",
        "A declarative rule (no Python)",
        "console",
        0,
    ): "test_the_bundled_example_rules_console",
    (
        "docs/writing-rules.md",
        "A Python rule module",
        "python",
        0,
    ): "test_the_python_rule_example_loads_and_fires",
    ("docs/writing-rules.md", "A Python rule module", "python", 1): (
        "tests/test_fix_cli.py::test_the_readme_fix_api_example"
    ),
    ("docs/writing-rules.md", "A plugin package", "toml", 0): "test_the_plugin_package_example",
    ("docs/output.md", "JSON output", "json", 0): "test_the_json_output_example",
    ("docs/pre-commit.md", "pre-commit", "yaml", 0): (
        "tests/test_precommit_hook.py::test_the_hook_definition_is_what_the_readme_promises"
    ),
    ("docs/pre-commit.md", "pre-commit", "yaml", 1): (
        "tests/test_precommit_hook.py::"
        "test_a_commit_with_a_gpu_mistake_is_refused_and_the_fix_goes_through"
    ),
    ("docs/development.md", "Development", "console", 0): (
        NOT_RUN + "it is `make test` itself with the optional data folders; CI runs the suite "
        "that way (.ci/run)"
    ),
    (
        "docs/cluster.md",
        "Describing the cluster: node pools, instance types, platforms",
        "text",
        0,
    ): ("tests/test_cluster_pools.py::test_the_assumption_note_is_what_the_docs_show"),
    (
        "docs/cluster.md",
        "Describing the cluster: node pools, instance types, platforms",
        "text",
        1,
    ): ("tests/test_cluster_pool_kinds.py::test_the_inspect_picture_is_what_the_docs_show"),
    ("docs/cluster.md", "The repository's own device-plugin settings", "text", 0): (
        "tests/test_projects.py::test_inspect_shows_the_device_plugins_facts_with_their_places"
    ),
    ("docs/cluster.md", "Projects: where the facts come from", "yaml", 0): (
        "tests/test_projects.py::test_the_documented_project_line_keeps_the_facts_apart"
    ),
    ("docs/cluster.md", "Node pools", "yaml", 0): (
        "tests/test_cluster_pools.py::test_the_node_pools_example_is_a_valid_configuration"
    ),
    ("docs/cluster.md", "An example", "yaml", 0): (
        "tests/test_cluster_pools.py::test_the_cluster_example"
    ),
    ("docs/cluster.md", "An example", "yaml", 1): (
        "tests/test_cluster_pools.py::test_the_cluster_example"
    ),
    ("docs/cluster.md", "An example", "console", 0): (
        "tests/test_cluster_pools.py::test_the_cluster_example"
    ),
    ("docs/ci.md", "GitHub Actions: code scanning alerts", "yaml", 0): (
        "tests/test_docs_recipes.py::"
        "test_github_workflow_fails_with_text_and_leaves_the_sarif_to_upload"
    ),
    ("docs/ci.md", "GitHub Actions: code scanning alerts", "yaml", 1): (
        "tests/test_docs_recipes.py::test_github_annotations_step"
    ),
    ("docs/ci.md", "GitLab CI: JUnit report in the merge request", "yaml", 0): (
        "tests/test_docs_recipes.py::test_gitlab_job_writes_the_junit_report_it_declares"
    ),
    ("docs/ci.md", "GitLab CI: Code Quality in the merge request", "yaml", 0): (
        "tests/test_gitlab_format.py::test_the_gitlab_code_quality_job_writes_the_report_it_declares"
    ),
    ("docs/ci.md", "GitHub Actions: the gpulint action", "yaml", 0): (
        "tests/test_action.py::test_the_documented_workflows_pass_actionlint"
    ),
    ("docs/ci.md", "GitHub Actions: the gpulint action", "yaml", 1): (
        "tests/test_action.py::test_the_documented_chart_workflow_renders_with_the_installed_helm"
    ),
    ("docs/ci.md", "Only the files a pull request changes", "yaml", 0): (
        "tests/test_docs_recipes.py::"
        "test_github_changed_files_recipe_lints_only_what_the_branch_changed"
    ),
    ("docs/ci.md", "Only the files a pull request changes", "yaml", 1): (
        "tests/test_docs_recipes.py::test_gitlab_changed_files_recipe"
    ),
    ("docs/ci.md", "Security: pull requests from strangers", "yaml", 0): (
        "tests/test_security.py::test_ci_recipes_never_opt_in_on_pull_requests"
    ),
    (
        "docs/corpus-review.md",
        "Review of gpulint's findings on the real-world corpus",
        "console",
        0,
    ): (
        NOT_RUN + "it rewrites tests/golden/corpus-findings.txt from the optional corpus; "
        "tests/test_corpus_golden.py checks that file against the corpus (GPULINT_CORPUS)"
    ),
    ("docs/editors.md", "gpulint in your editor", "text", 0): (
        "tests/test_docs_recipes.py::test_the_sample_output_line_is_real"
    ),
    ("docs/editors.md", "The language server: `gpulint lsp`", "console", 0): (
        NOT_RUN + "its last line installs from PyPI; `make test` installs the same extra through "
        "the test extra, tests/test_lsp.py runs the server it installs, and "
        "tests/test_package.py checks gpulint lsp names these commands when it is missing"
    ),
    ("docs/editors.md", "Neovim", "lua", 0): (
        "tests/test_editors_lsp.py::test_neovim_with_the_documented_config_gets_the_cli_findings"
    ),
    ("docs/editors.md", "VS Code", "console", 0): (
        "tests/test_package.py::test_make_vsix_packages_the_extension"
    ),
    ("docs/editors.md", "VS Code", "jsonc", 0): (
        "tests/test_editors_lsp.py::test_the_vscode_extension_starts_gpulint_lsp_for_yaml"
    ),
    ("docs/editors.md", "Helix", "toml", 0): (
        "tests/test_editors_lsp.py::test_the_helix_configuration_names_the_server"
    ),
    ("docs/editors.md", "Emacs", "elisp", 0): (
        NOT_RUN + "Emacs is not installed here; the snippet is Eglot's documented "
        "eglot-server-programs form, with the command the other editors' tests run"
    ),
    ("docs/editors.md", "VS Code: a task with a problem matcher", "json", 0): (
        "tests/test_docs_recipes.py::test_the_problem_matcher_reads_every_finding_of_real_output"
    ),
}

#: Documents whose blocks are covered as a whole.
DOCUMENTS_RUN_ELSEWHERE = {
    "docs/rules.md": (
        "generated from the rules' docstrings (tests/test_catalog.py checks it is current); "
        "its Example and Use instead blocks are fragments whose runnable form is each rule's "
        "fixtures in tests/fixtures/rules (tests/test_rule_fixtures.py)"
    ),
}


def _defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_every_block_is_run() -> None:
    found = [b for doc in DOCUMENTS if doc not in DOCUMENTS_RUN_ELSEWHERE for b in blocks(doc)]
    assert found
    unlisted = [f"{b.doc}:{b.line} {b.key}" for b in found if b.key not in BLOCKS]
    assert not unlisted, "blocks no test runs; add them to BLOCKS:\n" + "\n".join(unlisted)
    stale = set(BLOCKS) - {b.key for b in found}
    assert not stale, f"BLOCKS names blocks that no longer exist: {sorted(stale)}"
    for key, how in BLOCKS.items():
        if how.startswith(NOT_RUN):
            assert len(how) > len(NOT_RUN) + 20, key  # a real reason
            continue
        module, _, name = how.rpartition("::")
        source = ROOT / module if module else Path(__file__)
        assert name in _defined_tests(source), f"{key}: {how} is not a test"
    assert set(DOCUMENTS_RUN_ELSEWHERE) <= set(DOCUMENTS)


# -- helpers ------------------------------------------------------------------------------------


def _section(title: str, doc: str = "README.md") -> str:
    """The text of a document's section: from its heading (``#`` or ``##``) to the next
    heading of the same or a higher level outside a code block."""
    lines = (ROOT / doc).read_text(encoding="utf-8").split("\n")
    start = next(
        i for i, line in enumerate(lines) if re.fullmatch(rf"#{{1,2}} {re.escape(title)}", line)
    )
    level = len(lines[start].split(" ", 1)[0])
    end, fenced = len(lines), False
    for i in range(start + 1, len(lines)):
        if re.match(r"^\s*(```|~~~)", lines[i]):
            fenced = not fenced
        elif not fenced and re.match(rf"#{{1,{level}}} ", lines[i]):
            end = i
            break
    return "\n".join(lines[start:end])


def run(args: list[str], cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return gpulint_in_process(*args, cwd=cwd, stdin=stdin)


def _env(**extra: str) -> dict[str, str]:
    """The environment with this interpreter's scripts (gpulint, pip) first on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


#: What only a shell does with a command line: quoting, escapes, pipes, redirections, lists,
#: expansions (variables, globs, ~, history), comments.
_SHELL_SYNTAX = re.compile(r"[|&;<>()$`*?\[\]{}~!#\\'\"]")


def shell(command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """A documented command line, run by bash as a user would type it; a plain
    ``gpulint ARGS`` line (nothing in it for a shell to do: no quote, pipe, redirection or
    expansion) runs through the console entry point in this process instead, with the same
    argv, directory and environment: what it prints and its exit status are the subject
    here, not the process (tests/test_install.py runs the installed console script)."""
    words = command.split()
    if words[:1] == ["gpulint"] and not _SHELL_SYNTAX.search(command):
        return gpulint_in_process(*words[1:], cwd=cwd, env=_env(**env))
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def run_console(b: Block, cwd: Path) -> list[int]:
    """Run every ``$ command`` of a console block; its documented output must be the real one.
    Returns the exit codes."""
    codes = []
    for command, expected in console(b.text):
        proc = shell(command, cwd)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert_output(
            expected, proc.stdout + proc.stderr, b.shortened, f"{b.doc}:{b.line} $ {command}"
        )
        codes.append(proc.returncode)
    return codes


def _findings(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return out


def _project(tmp_path: Path) -> Path:
    """A scratch repository root (the configuration search stops at its .git)."""
    (tmp_path / ".git").mkdir()
    return tmp_path


GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  containers:
  - name: a
    image: registry.example/a:1
    resources:
      limits:
        nvidia.com/gpu: 1
"""


# -- Quick start, Installing, Using it --------------------------------------------------------


def _make(*args: str) -> str:
    proc = subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return proc.stdout


def test_the_readme_is_short_and_names_the_platform_on_its_first_screen() -> None:
    """Under 20 KB; the platform is described on the first screen (40 lines), where a first
    run's findings are decided; everything else is on the docs site, which it links to."""
    assert len(README.encode("utf-8")) < 20_000
    first_screen = README.splitlines()[:40]
    assert "## Your first run: describe your platform" in first_screen
    assert "https://gpulint.github.io/gpulint/" in README


def test_the_quick_start_commands() -> None:
    b = block("README.md", "Quick start", "console", 0)
    targets = [line.split("#")[0].split() for line in b.text.splitlines()]
    assert targets == [["make", "demo"], ["make", "test"]]
    # `make demo` installs gpulint alone; `make test` the test extra and the npm tools, as the
    # quick start says.
    demo = _make("-n", "-B", "demo")
    assert "pip install --quiet --no-compile -e .\n" in demo
    assert "[test]" not in demo and "npm" not in demo
    test = _make("-n", "-B", "test")
    assert "-e '.[test]'" in test and "npm install" in test and "pytest" in test
    quick_start = _section("Quick start")
    assert "npm" in quick_start and "Python 3.10+" in quick_start


def test_make_demo_prints_what_the_readme_shows(tmp_path: Path) -> None:
    """`make demo` itself, with a virtual environment that is already installed: a folder
    whose bin/ is this interpreter's and whose demo stamp is newer than pyproject.toml."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name in ("python", "gpulint"):
        (venv / "bin" / name).symlink_to(Path(sys.executable).with_name(name))
    (venv / ".installed-demo").touch()
    b = block("README.md", "What it catches", "console", 1)
    # The demo echoes the command it runs, so its output has a `$ ` line of its own.
    command, *expected = b.text.rstrip("\n").split("\n")
    assert command == "$ make demo"
    proc = shell(f"make --no-print-directory demo VENV={venv}", ROOT)
    assert proc.returncode == 0, proc.stderr
    assert_output(expected, proc.stdout, b.shortened, "make demo")


def _snapshot(dest: Path) -> str:
    """This checkout's files (tracked or new, not ignored) as a one-commit git repository."""
    env = _env(
        GIT_AUTHOR_NAME="T",
        GIT_AUTHOR_EMAIL="t@example.com",
        GIT_COMMITTER_NAME="T",
        GIT_COMMITTER_EMAIL="t@example.com",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
    )
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run(["git", *args], cwd=dest, env=env, check=True, capture_output=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=dest, capture_output=True, text=True, check=True
    ).stdout.strip()


def test_the_install_commands(tmp_path: Path) -> None:
    """The clone and wheel install commands, as written, with pip working offline (no
    dependencies, this environment's setuptools), installing into a folder of its own
    without compiling it; the wheel is built in the clone as the README says. The release
    line is only checked for its form: there is no release to install yet."""
    b = block("README.md", "Installing", "console", 0)
    commands = [line.split("  #")[0].strip() for line in b.text.splitlines()]
    from gpulint import __version__

    wheel = f"./dist/gpulint-{__version__}-py3-none-any.whl"
    assert commands == ["pip install .", f"pip install {wheel}", "pip install gpulint"]
    commands = commands[:2]
    clone = tmp_path / "clone"
    clone.mkdir()
    _snapshot(clone)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "-w", "dist", "."],
        cwd=clone, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert (clone / wheel).is_file()
    # --no-compile: the one module the check imports is compiled when it is imported.
    offline = "--no-deps --no-build-isolation --no-index --no-compile --quiet"
    for n, command in enumerate(commands):
        target = tmp_path / f"site-{n}"
        line = command.replace("pip install", f"python -m pip install {offline} --target {target}")
        proc = shell(line, clone)
        assert proc.returncode == 0, proc.stderr
        check = subprocess.run(
            [sys.executable, "-c", "import gpulint, sys; print(gpulint.__file__)"],
            env=_env(PYTHONPATH=str(target)),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        assert Path(check.stdout.strip()).is_relative_to(target)
        assert (target / "rules" / "devices.json").is_file() or any(target.glob("**/devices.json"))
    # No release is claimed until there is one.
    assert not re.search(r"gpulint==|rev: v\d", README + (ROOT / "docs" / "ci.md").read_text())


def test_the_usage_commands(tmp_path: Path) -> None:
    """Each line of "Using it" in a folder with the files it names. `helm` is a stand-in
    that prints a rendered chart, so the gpulint half of each pipe runs as written."""
    b = block("docs/usage.md", "Using it", "console", 0)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    rendered = ROOT / "examples" / "bad-inference.yaml"
    helm = bin_dir / "helm"
    helm.write_text(f"#!/bin/sh\n# helm template CHART\ncat '{rendered}'\n", encoding="utf-8")
    helm.chmod(0o755)
    shutil.copytree(ROOT / "examples", tmp_path / "manifests")
    shutil.copytree(ROOT / "examples", tmp_path / "k8s")
    for line in b.text.splitlines():
        command = line.split("  #")[0].strip()
        proc = shell(command, tmp_path, PATH=f"{bin_dir}{os.pathsep}{_env()['PATH']}")
        assert proc.returncode in (0, 1), (command, proc.stderr)
        assert proc.stderr == "", (command, proc.stderr)
        if "> findings.json" in command:
            assert json.loads((tmp_path / "findings.json").read_text())["summary"]["files"] > 1
        elif "--stdin-filename charts/trainer/rendered.yaml" in command:
            assert "charts/trainer/rendered.yaml:16:5: GPU020" in proc.stdout
        elif "| gpulint check -" in command:
            assert "<stdin>:16:5: GPU020" in proc.stdout
        else:
            assert proc.stdout.strip(), command


def test_the_first_run_commands(tmp_path: Path) -> None:
    """`pip install .` is the Installing section's; `gpulint check k8s/` lints a folder."""
    b = block("README.md", "Your first run: describe your platform", "console", 0)
    install, check = (line.split("  #")[0].strip() for line in b.text.strip().splitlines())
    assert install in block("README.md", "Installing", "console", 0).text
    # After `make demo` the command is in .venv, not on PATH: the section says how to reach it.
    section = _section("Your first run: describe your platform")
    assert "`. .venv/bin/activate`" in section and "`.venv/bin/gpulint`" in section
    demo = _make("-n", "-B", "demo")
    assert "python3 -m venv --without-pip .venv\n" in demo and ".venv/bin/gpulint check" in demo
    project = _project(tmp_path)
    shutil.copytree(ROOT / "examples", project / "k8s", ignore=shutil.ignore_patterns("rules"))
    proc = shell(check, project)
    assert proc.returncode == 1 and "GPU001 error" in proc.stdout, proc.stderr


def test_the_platform_configuration(tmp_path: Path) -> None:
    """The platform block is a valid .gpulint.yaml, read as written, and with it no taint
    finding of the examples rests on an assumption."""
    config = block("README.md", "Your first run: describe your platform", "yaml", 0).text
    project = _project(tmp_path)
    (project / ".gpulint.yaml").write_text(config, encoding="utf-8")
    proc = run(["config", "-f", "json"], project)
    assert proc.returncode == 0, proc.stderr
    settings = json.loads(proc.stdout)["settings"]
    assert settings["platform"]["value"] == "gke"
    assert settings["platform"]["origin"].startswith(".gpulint.yaml:")
    shutil.copytree(ROOT / "examples", project / "k8s", ignore=shutil.ignore_patterns("rules"))
    found = _findings(run(["check", "-f", "json", "k8s"], project))
    taints = [f for f in found if f["rule"] in ("GPU020", "GPU021", "GPU023")]
    assert taints and not [f for f in taints if "assumed" in f["message"]]


def test_the_real_before_and_after(tmp_path: Path) -> None:
    """The README's real manifest gives the finding shown; the one-word fix gives none."""
    before = block("README.md", "What it catches", "yaml", 0).text
    after = block("README.md", "What it catches", "yaml", 1).text
    (name,) = re.findall(
        r"\$ gpulint check (\S+)", block("README.md", "What it catches", "console").text
    )
    project = _project(tmp_path)
    (project / name).write_text(before, encoding="utf-8")
    assert run_console(block("README.md", "What it catches", "console"), project) == [1]
    # The fix, as shown: the block replaces the manifest's `resources:` and what follows.
    head = before[: before.index("      resources:")]
    assert after.startswith("resources:\n  limits:")
    (project / name).write_text(head + textwrap.indent(after, " " * 6), encoding="utf-8")
    fixed = run(["check", "-f", "json", name], project)
    assert fixed.returncode == 0 and _findings(fixed) == [], fixed.stdout


def test_the_readme_hook_is_the_documented_one() -> None:
    """The README's pre-commit snippet is docs/pre-commit.md's first (which its tests run)."""
    readme = block("README.md", "pre-commit, CI and editors", "yaml", 0).text
    assert readme == block("docs/pre-commit.md", "pre-commit", "yaml", 0).text


# -- Supported workloads, inspect ----------------------------------------------------------------


def test_the_workloads_row_example(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / ".gpulint.yaml").write_text(
        block("docs/workloads.md", "Supported workloads", "yaml").text, encoding="utf-8"
    )
    (project / "trainer.yaml").write_text(
        """\
apiVersion: batch.example.com/v1
kind: Trainer
metadata: {name: t}
spec:
  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
  workers:
  - template:
      spec:
        containers:
        - name: w
          resources: {limits: {nvidia.com/gpu: 2}}
  driver:
    name: d
    resources: {limits: {nvidia.com/gpu: 1}}
  defaults:
    resourcesPerNode: {requests: {nvidia.com/gpu: 4}}
""",
        encoding="utf-8",
    )
    proc = run(["inspect", "trainer.yaml"], project)
    assert proc.returncode == 0, proc.stderr
    assert "Trainer/t (batch.example.com/v1, row from .gpulint.yaml:2)" in proc.stdout
    assert "pod spec spec.workers.0.template.spec" in proc.stdout
    check = run(["check", "-f", "json", "trainer.yaml"], project)
    # The bare ResourceRequirements row is checked too: a request without a limit.
    assert ("GPU001", 16) in {(f["rule"], f["line"]) for f in _findings(check)}


def test_the_inspect_example() -> None:
    b = block("docs/usage.md", "Seeing what gpulint sees: `gpulint inspect`", "console")
    run_console(b, ROOT / "tests" / "fixtures" / "readme")
    assert "tests/fixtures/readme/train.yaml" in _section(b.section, b.doc)


def test_the_cluster_tutorial() -> None:
    """The tutorial's three broken workloads, their one-line fixes, and inspect."""
    import difflib

    section = "Will it schedule? `--cluster`"
    tutorial = ROOT / "docs" / "cluster-tutorial"
    assert run_console(block("docs/cluster.md", section, "console", 0), tutorial) == [1]
    assert run_console(block("docs/cluster.md", section, "console", 1), tutorial) == [0]
    assert run_console(block("docs/cluster.md", section, "console", 2), tutorial) == [0]
    text = _section(section, "docs/cluster.md")
    for broken in sorted((tutorial / "deploy").glob("*.yaml")):
        fixed = (tutorial / "fixed" / broken.name).read_text().splitlines()
        diff = [
            line
            for line in difflib.unified_diff(broken.read_text().splitlines(), fixed, lineterm="")
            if line[:1] in "+-" and not line.startswith(("+++", "---"))
        ]
        added = [line[1:].strip() for line in diff if line.startswith("+")]
        assert len(added) == 1 and len(diff) <= 2, (broken.name, diff)
        assert f"`{added[0]}`" in text, added[0]  # the README names the line


# -- Configuration ------------------------------------------------------------------------------


def test_the_complete_configuration_example(tmp_path: Path) -> None:
    full = block("docs/configuration.md", "Configuration", "yaml", 0).text
    project = _project(tmp_path)
    (project / "policy" / "gpulint").mkdir(parents=True)
    (project / "ops").mkdir()
    nodes = ROOT / "docs" / "cluster-tutorial" / "nodes.yaml"
    (project / "ops" / "nodes.yaml").write_text(nodes.read_text())
    # The plugin it names is a placeholder module; everything else is loaded as written.
    assert "plugins: [acme_gpulint.rules]\n" in full
    (project / ".gpulint.yaml").write_text(full.replace("plugins: [acme_gpulint.rules]\n", ""))
    proc = run(["config", "-f", "json"], project)
    assert proc.returncode == 0, proc.stderr
    settings = json.loads(proc.stdout)["settings"]
    assert settings["rules.GPU021.taints"]["value"] == [
        {"key": "sku", "value": "gpu", "effect": "NoSchedule"}
    ]
    assert settings["rules.GPU020.taints"]["origin"].startswith(".gpulint.yaml:")
    toml = block("docs/configuration.md", "Configuration", "toml", 0).text
    (project / "pyproject.toml").write_text(toml)
    proc = run(["config", "--config", "pyproject.toml", "-f", "json"], project)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["settings"]["ignore"]["value"] == ["GPU021"]


def test_the_configuration_error_example(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / ".gpulint.yaml").write_text(
        block("docs/configuration.md", "Configuration", "yaml", 1).text
    )
    assert run_console(block("docs/configuration.md", "Configuration", "console", 0), project) == [
        2
    ]


def test_the_config_command_example(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (project / ".gpulint.yaml").write_text(
        block("docs/configuration.md", "Configuration", "yaml", 2).text
    )
    assert run_console(block("docs/configuration.md", "Configuration", "console", 1), project) == [
        0
    ]


# -- Helm charts and Kustomize overlays ------------------------------------------------------


def _chart_project(tmp_path: Path) -> Path:
    project = _project(tmp_path)
    shutil.copytree(ROOT / "tests" / "fixtures" / "render" / "charts" / "inference",
                    project / "charts" / "inference")  # fmt: skip
    return project


@needs_helm
def test_the_render_example(tmp_path: Path) -> None:
    project = _chart_project(tmp_path)
    b = block("docs/rendering.md", "Helm charts and Kustomize overlays", "console", 0)
    helm_dir = str(Path(str(helm())).parent)
    for command, expected in console(b.text):
        proc = shell(command, project, PATH=helm_dir + os.pathsep + _env()["PATH"])
        assert "Traceback" not in proc.stderr, proc.stderr
        assert_output(expected, proc.stdout + proc.stderr, b.shortened, f"{b.doc}:{b.line}")
        assert proc.returncode == 1


@needs_helm
def test_the_render_fix_example(tmp_path: Path) -> None:
    project = _project(tmp_path)
    shutil.copytree(ROOT / "tests" / "fixtures" / "render" / "fixvalues" / "trainer",
                    project / "charts" / "trainer")  # fmt: skip
    b = block("docs/rendering.md", "Helm charts and Kustomize overlays", "console", 1)
    helm_dir = str(Path(str(helm())).parent)
    for command, expected in console(b.text):
        proc = shell(command, project, PATH=helm_dir + os.pathsep + _env()["PATH"])
        assert "Traceback" not in proc.stderr, proc.stderr
        assert_output(expected, proc.stdout + proc.stderr, b.shortened, f"{b.doc}:{b.line}")
        assert proc.returncode == 1


@needs_helm
def test_the_render_configuration_example(tmp_path: Path) -> None:
    project = _chart_project(tmp_path)
    config = block("docs/rendering.md", "Helm charts and Kustomize overlays", "yaml", 0).text
    (project / ".gpulint.yaml").write_text(textwrap.dedent(config), encoding="utf-8")
    (project / "ci").mkdir()
    (project / "ci" / "values-gpu.yaml").write_text("gpu:\n  count: 2\n", encoding="utf-8")
    found = _findings(run(["check", "-f", "json", "--render", "--helm", str(helm()),
                           "charts/inference"], project))  # fmt: skip
    rules = {f["rule"] for f in found}
    assert "GPU004" not in rules and "GPU001" not in rules  # ci/values-gpu.yaml, --set
    assert {(f["object"]["name"], f["object"]["namespace"]) for f in found} == {
        ("inference-inference", None),  # its template writes no namespace
        ("inference-metrics-gateway", "serving"),  # `namespace: {{ .Release.Namespace }}`
    }


def test_the_baseline_example(tmp_path: Path) -> None:
    """The examples (without their rule folder) as a repository's manifests."""
    project = _project(tmp_path)
    shutil.copytree(ROOT / "examples", project / "k8s", ignore=shutil.ignore_patterns("rules"))
    b = block("docs/suppressing.md", "Adopting gpulint on a repository with findings", "console", 0)
    assert run_console(b, project) == [0, 0, 0]


# -- Suppressing findings -----------------------------------------------------------------------


def _named_file(b: Block) -> str:
    """The file name the prose gives the manifest, such as `gpu-pod.yaml`."""
    (name,) = re.findall(r"`([\w.-]+\.yaml)`", b.before)
    return name


def test_the_comment_suppression_example(tmp_path: Path) -> None:
    manifest = block("docs/suppressing.md", "Suppressing findings", "yaml", 0)
    name = _named_file(manifest)
    (tmp_path / name).write_text(manifest.text, encoding="utf-8")
    assert run_console(
        block("docs/suppressing.md", "Suppressing findings", "console", 0), tmp_path
    ) == [0]
    # "Both findings (GPU003 on line 12, GPU004 on line 20) are suppressed, with their reasons"
    section = _section("Suppressing findings", "docs/suppressing.md")
    promised = re.search(r"Both findings \(([^)]*)\) are suppressed", section)
    assert promised
    expected = {(code, int(line)) for code, line in re.findall(r"(\w+) on line (\d+)", promised[1])}
    found = _findings(run(["check", "-f", "json", "--extend-select", "GPU003", name], tmp_path))
    assert {(f["rule"], f["line"]) for f in found} == expected
    reasons = {f["rule"]: f["suppression"]["justification"] for f in found if f["suppressed"]}
    for code, line in expected:
        written = manifest.text.splitlines()[line - 1] + manifest.text.splitlines()[line - 2]
        assert code in reasons and reasons[code] in written


def test_the_annotation_example(tmp_path: Path) -> None:
    manifest = block("docs/suppressing.md", "Suppressing findings", "yaml", 1)
    name = _named_file(manifest)
    (tmp_path / name).write_text(manifest.text, encoding="utf-8")
    assert run_console(
        block("docs/suppressing.md", "Suppressing findings", "console", 1), tmp_path
    ) == [0]
    found = _findings(run(["check", "-f", "json", name], tmp_path))
    assert [(f["rule"], f["suppressed"], f["suppression"]) for f in found] == [
        (
            "GPU020",
            True,
            {
                "kind": "inSource",
                "source": "annotation",
                "justification": "GKE adds the toleration",
            },
        )
    ]


# -- Writing rules ------------------------------------------------------------------------------


def test_the_declarative_rule_example(tmp_path: Path) -> None:
    b = block("docs/writing-rules.md", "A declarative rule (no Python)", "yaml", 0)
    section = _section("Writing rules", "docs/writing-rules.md")
    (path,) = re.findall(r"1\. Create `([^`]+)`:", section)
    (config,) = re.findall(r"2\. Name the folder in `\.gpulint\.yaml`: `([^`]+)`", section)
    project = _project(tmp_path)
    (project / path).parent.mkdir(parents=True)
    (project / path).write_text(b.text, encoding="utf-8")
    (project / ".gpulint.yaml").write_text(config + "\n", encoding="utf-8")
    # 3. `gpulint rules` lists ACME001, and `gpulint check` runs it.
    listed = run(["rules"], project)
    assert listed.returncode == 0, listed.stderr
    assert "ACME001" in listed.stdout
    (project / "bad.yaml").write_text(GPU_POD, encoding="utf-8")
    (project / "good.yaml").write_text(
        GPU_POD.replace("nvidia.com/gpu: 1", "nvidia.com/gpu: 1\n        memory: 8Gi"),
        encoding="utf-8",
    )
    found = _findings(run(["check", "-f", "json", "bad.yaml", "good.yaml"], project))
    assert [(f["rule"], f["path"], f["severity"]) for f in found] == [
        ("ACME001", "bad.yaml", "warning")
    ]
    assert found[0]["message"] == "GPU container a of Pod p sets no memory limit"


def test_the_bundled_example_rules_console(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    codes = run_console(
        block("docs/writing-rules.md", "A declarative rule (no Python)", "console", 0), tmp_path
    )
    assert codes == [0, 1]


def test_the_python_rule_example_loads_and_fires(tmp_path: Path) -> None:
    module = block("docs/writing-rules.md", "A Python rule module", "python").text
    project = _project(tmp_path)
    (project / "policy").mkdir()
    (project / "policy" / "acme010_priority.py").write_text(module)
    (project / ".gpulint.yaml").write_text("rule-dirs: [policy]\n")
    (project / "pod.yaml").write_text(GPU_POD)
    proc = run(["check", "--allow-plugins", "-f", "json", "--select", "ACME", "pod.yaml"], project)
    found = _findings(proc)
    assert [(f["rule"], f["line"]) for f in found] == [("ACME010", 5)], proc.stderr
    doc = run(["rule", "ACME010", "--allow-plugins"], project).stdout
    assert "## Use instead" in doc


def test_the_plugin_package_example(tmp_path: Path) -> None:
    """The README's pyproject.toml with its Python rule as acme_gpulint/acme010_priority_class.py,
    built and installed (offline, into a folder of its own): its rule loads from the entry
    point, with no configuration, and `gpulint rules` names the package."""
    toml = block("docs/writing-rules.md", "A plugin package", "toml").text
    package = tmp_path / "acme-gpulint"
    (package / "acme_gpulint").mkdir(parents=True)
    (package / "pyproject.toml").write_text(toml, encoding="utf-8")
    (package / "acme_gpulint" / "__init__.py").write_text("", encoding="utf-8")
    (package / "acme_gpulint" / "acme010_priority_class.py").write_text(
        block("docs/writing-rules.md", "A Python rule module", "python").text, encoding="utf-8"
    )
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--no-index", "--target", str(target), str(package)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    (tmp_path / "project").mkdir()
    project = _project(tmp_path / "project")
    (project / "pod.yaml").write_text(GPU_POD)
    env = _env(PYTHONPATH=str(target))
    listed = subprocess.run(
        [*gpulint_cmd(), "rules"], cwd=project, env=env, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    (line,) = [x for x in listed.stdout.splitlines() if "ACME010" in x]
    assert "[plugin acme-gpulint]" in line
    proc = subprocess.run(
        [*gpulint_cmd(), "check", "-f", "json", "--select", "ACME", "pod.yaml"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    assert [f["rule"] for f in _findings(proc)] == ["ACME010"], proc.stderr


# -- JSON output --------------------------------------------------------------------------------


def test_the_json_output_example() -> None:
    shown = json.loads(block("docs/output.md", "JSON output", "json").text)
    schema = json.loads((ROOT / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
    Draft202012Validator(schema).validate(shown)
    real = json.loads(run(["check", "-f", "json", "examples/bad-inference.yaml"], ROOT).stdout)
    (same,) = [f for f in real["findings"] if f["rule"] == shown["findings"][0]["rule"]]
    assert same.keys() == shown["findings"][0].keys()
    message = shown["findings"][0]["message"]
    assert same["message"].startswith(message.removesuffix("..."))
    for key in ("path", "line", "column", "end_line", "end_column", "object", "yaml_path"):
        assert same[key] == shown["findings"][0][key], key
    assert real.keys() == shown.keys() and real["summary"].keys() == shown["summary"].keys()


#: The editors' own configuration languages, in docs/editors.md only.
EDITOR_LANGUAGES = {"lua", "jsonc", "elisp"}


@pytest.mark.parametrize("doc", [d for d in DOCUMENTS if d not in DOCUMENTS_RUN_ELSEWHERE])
def test_no_block_of_an_unknown_kind(doc: str) -> None:
    """Blocks of the README and the site's pages are yaml, toml, json, python, console or
    text (and an editor's language in docs/editors.md); yaml blocks are valid YAML."""
    known = {"yaml", "toml", "json", "python", "console", "text"}
    if doc == "docs/editors.md":
        known |= EDITOR_LANGUAGES
    for b in blocks(doc):
        assert b.lang in known, b.key
        if b.lang == "yaml":
            list(yaml.safe_load_all(b.text))


@pytest.mark.parametrize("doc", DOCUMENTS)
def test_documents_have_blocks_that_close(doc: str) -> None:
    # blocks() fails on an unclosed fence (list.index raises).
    assert isinstance(blocks(doc), tuple)
