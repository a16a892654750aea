"""What a hostile tree can make the renderers do: nothing outside their bounds.

A pull request's ``.gpulint.yaml`` sets the release name, namespace and Kubernetes version
helm gets; its chart's ``values.schema.json`` is read by helm; its templates decide how
much memory and time helm uses; its files can stand where a PATH lookup looks. Each test
is a real reproduction with the real helm (and kubectl): a marker file a planted program
would write, a listener a request would reach.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, gpulint_in_process, gpulint_subprocess
from tests.externals import Listener, helm, helms, needs_helm, needs_kustomize

CHART = FIXTURES / "render" / "charts" / "inference"
OVERLAY = FIXTURES / "render" / "kustomize" / "overlays" / "gpu"
HELMS = helms()


def _repo(tmp_path: Path, config: str | None = None) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(CHART, repo / "chart")
    if config is not None:
        (repo / ".gpulint.yaml").write_text(config, encoding="utf-8")
    return repo


def _planted(folder: Path, marker: Path, name: str = "x") -> Path:
    """A program in the tree that records that it ran."""
    script = folder / name
    script.write_text(f"#!/bin/sh\n/usr/bin/touch {marker}\ncat\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def _report(proc: Any) -> dict[str, Any]:
    assert proc.returncode in (0, 1, 2), proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


# -- item 1: configuration values never become helm options -----------------------------------


@needs_helm
@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("release-name", "--post-renderer=./x"),
        ("release-name", "--output-dir=OUT"),
        ("namespace", "--post-renderer=./x"),
        ("kube-version", "--output-dir=OUT"),
        ("kube-version", "--post-renderer=./x"),
    ],
)
def test_a_configured_option_is_refused_at_its_line(tmp_path: Path, key: str, value: str) -> None:
    out = tmp_path / "out"
    value = value.replace("OUT", str(out))
    repo = _repo(tmp_path, f"# the pull request's\nrender:\n  {key}: {json.dumps(value)}\n")
    marker = tmp_path / "ran"
    _planted(repo / "chart", marker)
    _planted(repo, marker)
    proc = gpulint_in_process("check", "--render", "--helm", str(helm()), "chart", cwd=repo)
    assert proc.returncode == 2, proc.stdout
    assert ".gpulint.yaml:3:" in proc.stderr and f"render.{key}" in proc.stderr, proc.stderr
    assert "as helm requires" in proc.stderr
    assert not marker.exists() and not out.exists()
    assert "All checks passed" not in proc.stdout


@needs_helm
def test_a_per_chart_option_is_refused_at_its_line(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        "render:\n  charts:\n    chart:\n      namespace: gpu\n"
        '      release-name: "--post-renderer=./x"\n',
    )
    proc = gpulint_in_process("check", "--render", "--helm", str(helm()), "chart", cwd=repo)
    assert proc.returncode == 2
    assert ".gpulint.yaml:5: render.charts.chart.release-name:" in proc.stderr


def test_valid_options_are_accepted(tmp_path: Path) -> None:
    from gpulint.render import option_problem

    for key, value in (
        ("release-name", "release-name"),
        ("release-name", "my.release-2"),
        ("namespace", "gpu-inference"),
        ("kube-version", "1.30"),
        ("kube-version", "v1.31.2"),
        ("kube-version", "1.29.4-gke.1030000"),
    ):
        assert option_problem(key, value) is None, (key, value)
    for key, value in (
        ("release-name", "-x"),
        ("release-name", "A"),
        ("release-name", "a" * 54),
        ("namespace", "a.b"),
        ("namespace", "a" * 64),
        ("kube-version", "latest"),
        ("kube-version", "-1.30"),
    ):
        assert option_problem(key, value) is not None, (key, value)


@pytest.mark.parametrize("helm_path", HELMS)
def test_values_reach_helm_as_values_never_as_options(tmp_path: Path, helm_path: str) -> None:
    """Past the configuration check too (a command line's values, a later change): every
    value is ``--flag=value`` and the positionals come after ``--``."""
    from gpulint.render import ChartOptions, RenderOptions
    from gpulint.render.helm import chart as helm_render

    repo = _repo(tmp_path)
    marker = tmp_path / "ran"
    _planted(repo / "chart", marker)
    out = tmp_path / "out"
    for chart in (
        ChartOptions(release_name="--post-renderer=./x"),
        ChartOptions(release_name=f"--output-dir={out}"),
        ChartOptions(set=("--post-renderer=./x",)),
        ChartOptions(namespace="--post-renderer=./x"),
    ):
        result = helm_render.render(
            str(repo / "chart"), RenderOptions(True, helm_path, None, chart)
        )
        assert not marker.exists() and not out.exists()
        if isinstance(result, str):
            assert "# Source:" in result


def test_command_line_options_are_checked_as_the_configuration_is(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    proc = gpulint_in_process(
        "check", "--render", "--release-name", "--post-renderer=./x", "chart", cwd=repo
    )
    assert proc.returncode == 2 and "--release-name '--post-renderer=./x' is not" in proc.stderr


# -- item 6: a values schema's $ref is never resolved --------------------------------------


def _schema_chart(tmp_path: Path, schema: dict[str, Any]) -> Path:
    repo = _repo(tmp_path)
    (repo / "chart" / "values.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    return repo


@pytest.mark.parametrize("helm_path", HELMS)
def test_a_schema_ref_to_a_loopback_service_is_never_fetched(
    tmp_path: Path, helm_path: str
) -> None:
    listener = Listener()
    try:
        repo = _schema_chart(tmp_path, {"$ref": f"http://127.0.0.1:{listener.port}/x.json"})
        proc = gpulint_in_process(
            "check", "--format", "json", "--render", "--helm", helm_path, "chart", cwd=repo
        )
    finally:
        seen = listener.close()
    assert seen == 0
    assert "GL200" not in {f["rule"] for f in _report(proc)["findings"]}


@pytest.mark.parametrize("helm_path", HELMS)
def test_a_schema_ref_to_a_local_file_is_never_read(tmp_path: Path, helm_path: str) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text('{"type": "string", "title": "s3cr3t"}', encoding="utf-8")
    repo = _schema_chart(tmp_path, {"$ref": secret.as_uri()})
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, "chart", cwd=repo
    )
    report = _report(proc)
    # Read, the schema would say the values must be a string: helm would fail.
    assert "GL200" not in {f["rule"] for f in report["findings"]}
    assert "s3cr3t" not in proc.stdout + proc.stderr


def _old_helm(tmp_path: Path, real: str) -> tuple[Path, Path]:
    """A helm before 3.16: no --skip-schema-validation (the real one does the rendering)."""
    marker = tmp_path / "old-helm-rendered"
    script = tmp_path / "old-helm"
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do if [ "$a" = --skip-schema-validation ]; then\n'
        '  echo "Error: unknown flag: --skip-schema-validation" >&2; exit 1; fi; done\n'
        f"/usr/bin/touch {marker}\n"
        f'exec {real} "$@"\n',
        encoding="utf-8",
    )
    script.chmod(0o755)
    return script, marker


def _packaged(name: str, schema: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member, text in (
            ("Chart.yaml", f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n"),
            ("values.schema.json", json.dumps(schema)),
        ):
            data = text.encode()
            info = tarfile.TarInfo(f"{name}/{member}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@needs_helm
def test_a_helm_without_schema_skipping_renders_only_self_contained_schemas(
    tmp_path: Path,
) -> None:
    script, marker = _old_helm(tmp_path, str(helm()))
    listener = Listener()
    url = f"http://127.0.0.1:{listener.port}/x.json"
    try:
        cases: list[tuple[str, Any]] = [
            ("chart", {"$ref": url}),
            ("subchart", {"properties": {"a": {"items": [{"$dynamicRef": "x.json"}]}}}),
            ("packaged", {"$ref": url}),
            ("nested", {"$ref": url}),
        ]
        for where, schema in cases:
            case = tmp_path / where
            repo = _repo(case)
            chart = repo / "chart"
            if where == "chart":
                (chart / "values.schema.json").write_text(json.dumps(schema), encoding="utf-8")
            elif where == "subchart":
                sub = chart / "charts" / "metrics" / "values.schema.json"
                sub.write_text(json.dumps(schema), encoding="utf-8")
            elif where == "packaged":
                (chart / "charts" / "extra-0.1.0.tgz").write_bytes(_packaged("extra", schema))
            else:  # a packaged chart holding a packaged chart
                inner = _packaged("inner", schema)
                buffer = io.BytesIO()
                with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
                    info = tarfile.TarInfo("outer/charts/inner-0.1.0.tgz")
                    info.size = len(inner)
                    archive.addfile(info, io.BytesIO(inner))
                (chart / "charts" / "outer-0.1.0.tgz").write_bytes(buffer.getvalue())
            proc = gpulint_in_process(
                "check", "--format", "json", "--render", "--helm", script, "chart", cwd=repo
            )
            (finding,) = [f for f in _report(proc)["findings"] if f["rule"] == "GL200"]
            assert "schema reference" in finding["message"], (where, finding["message"])
            assert not marker.exists(), where
    finally:
        assert listener.close() == 0
    repo = _schema_chart(tmp_path / "fine", {"$defs": {"a": {}}, "$ref": "#/$defs/a"})
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", script, "chart", cwd=repo
    )
    assert marker.exists()  # rendered, without the flag
    assert "GL200" not in {f["rule"] for f in _report(proc)["findings"]}


# -- item 10: memory -------------------------------------------------------------------------


def _chart(folder: Path, template: str) -> Path:
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text(
        f"apiVersion: v2\nname: {folder.name}\nversion: 0.1.0\n", encoding="utf-8"
    )
    (folder / "templates" / "a.yaml").write_text(template, encoding="utf-8")
    return folder


#: A string doubled 30 times: 1 GiB, and the copies on the way.
DOUBLING = '{{ $s := "x" }}{{ range until 30 }}{{ $s = print $s $s }}{{ end }}{{ $s }}\n'


@pytest.mark.parametrize("helm_path", HELMS)
def test_a_chart_that_allocates_without_end_is_stopped_by_the_memory_limit(
    tmp_path: Path, helm_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gpulint.render import tools

    # A lower limit than the real one keeps this test cheap; the other render tests run
    # helm and kubectl under the real one.
    monkeypatch.setattr(tools, "MAX_MEMORY_BYTES", 3 << 29)  # 1.5 GiB
    (tmp_path / ".git").mkdir()
    _chart(tmp_path / "hog", DOUBLING)
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, "hog", cwd=tmp_path
    )
    (finding,) = _report(proc)["findings"]
    assert finding["rule"] == "GL200"
    assert "needed more than 1.5 GiB of memory" in finding["message"]


# -- item 11: the run's render budget --------------------------------------------------------

SPIN = "{{ range until 100000000 }}{{ end }}\n"


@needs_helm
def test_spinning_charts_share_one_render_budget(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    names = [f"spin{i}" for i in range(4)]
    for name in names:
        _chart(tmp_path / name, SPIN)
    started = time.monotonic()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", str(helm()),
        "--render-timeout", "2", *names, cwd=tmp_path,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    findings = _report(proc)["findings"]
    assert [f["rule"] for f in findings] == ["GL200"] * 4
    assert "render budget is spent" in findings[-1]["message"]
    assert elapsed < 30  # 4 x 60 s without the budget


@needs_helm
def test_worker_processes_share_the_render_budget(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    names = [f"spin{i}" for i in range(4)]
    for name in names:
        _chart(tmp_path / name, SPIN)
    proc = gpulint_subprocess(
        "check", "--format", "json", "--render", "--helm", str(helm()), "--jobs", "2",
        "--render-timeout", "1.5", *names, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    findings = _report(proc)["findings"]
    assert [f["rule"] for f in findings] == ["GL200"] * 4
    assert sum("render budget is spent" in f["message"] for f in findings) >= 1


def test_render_timeout_must_be_positive(tmp_path: Path) -> None:
    proc = gpulint_in_process("check", "--render-timeout", "0", ".", cwd=tmp_path)
    assert proc.returncode == 2 and "--render-timeout" in proc.stderr


def test_the_configuration_cannot_set_the_render_budget(tmp_path: Path) -> None:
    (tmp_path / ".gpulint.yaml").write_text("render:\n  render-timeout: 1000\n", encoding="utf-8")
    proc = gpulint_in_process("check", ".", cwd=tmp_path)
    assert proc.returncode == 2 and "render-timeout" in proc.stderr


# -- item 16: a PATH lookup never finds the tree's program ------------------------------------


@needs_helm
@pytest.mark.parametrize("entry", [".", "", "REPO", "REPO/chart"])
def test_a_helm_in_the_tree_is_never_found_on_path(tmp_path: Path, entry: str) -> None:
    repo = _repo(tmp_path)
    marker = tmp_path / "ran"
    _planted(repo, marker, "helm")
    _planted(repo / "chart", marker, "helm")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "helm").symlink_to(str(helm()))
    path = os.pathsep.join([entry.replace("REPO", str(repo)), str(bin_dir), "/usr/bin", "/bin"])
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "chart", cwd=repo, env={**os.environ, "PATH": path}
    )
    assert not marker.exists()
    report = _report(proc)
    assert report["findings"] and "GL200" not in {f["rule"] for f in report["findings"]}


def test_a_helm_named_on_the_command_line_is_the_users_choice(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    marker = tmp_path / "ran"
    _planted(repo, marker, "helm")
    gpulint_in_process("check", "--render", "--helm", "./helm", "chart", cwd=repo)
    assert marker.exists()


# -- the renderers' environment --------------------------------------------------------------


def test_renderers_find_no_program_and_no_git(tmp_path: Path) -> None:
    from gpulint.render import tools

    result = tools.run_tool(["/usr/bin/env"], cwd=str(tmp_path))
    env = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert env["PATH"] == os.devnull
    assert env["GIT_ALLOW_PROTOCOL"] == "none" and env["GIT_SSH_COMMAND"] == "/bin/false"
    assert env["GIT_CONFIG_NOSYSTEM"] == "1" and env["GIT_CONFIG_GLOBAL"] == os.devnull
    sh = tools.run_tool(["/bin/sh", "-c", "git --version"], cwd=str(tmp_path))
    assert sh.returncode != 0 and "not found" in sh.stderr


def _own_network() -> bool:
    from gpulint.render import tools

    interfaces = tools.run_tool(["/bin/cat", "/proc/self/net/dev"], cwd="/").stdout
    return [line.split(":")[0].strip() for line in interfaces.splitlines()[2:]] == ["lo"]


def test_renderers_reach_no_loopback_service(tmp_path: Path) -> None:
    import sys

    from gpulint.render import tools

    if not _own_network():
        pytest.skip("no unprivileged network namespace here: renderers get the proxy only")
    listener = Listener()
    try:
        code = (
            "import socket,sys\n"
            f"try: socket.create_connection(('127.0.0.1', {listener.port}), 2)\n"
            "except OSError as e: sys.exit(f'refused: {e}')\n"
        )
        result = tools.run_tool([sys.executable, "-c", code], cwd=str(tmp_path))
    finally:
        seen = listener.close()
    assert seen == 0 and "refused" in result.stderr


@needs_kustomize
def test_kubectl_renders_under_the_limits(tmp_path: Path) -> None:
    proc = gpulint_in_process("check", "--format", "json", "--render", str(OVERLAY), cwd=tmp_path)
    report = _report(proc)
    assert report["findings"] and "GL200" not in {f["rule"] for f in report["findings"]}
