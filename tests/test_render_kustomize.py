"""Kustomize overlays built with the real ``kubectl kustomize``: each finding at the file,
line and column where its value is written, or at the kustomization entry that brings its
object in, saying it is a fallback (tests/fixtures/render/kpos/)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, ROOT, gpulint_in_process, said
from tests.externals import needs_kustomize

CASES = FIXTURES / "render" / "kpos"
FALLBACK = "gpulint could not tell"


def placed(folder: Path, cwd: Path = ROOT) -> set[tuple[str, int, int, str, bool]]:
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", str(folder.relative_to(cwd)), cwd=cwd
    )
    assert proc.returncode in (0, 1, 2), proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return {
        (
            Path(f["path"]).relative_to(folder.relative_to(cwd)).as_posix(),
            f["line"],
            f["column"],
            f["rule"],
            FALLBACK in said(f),
        )
        for f in report["findings"]
    }


@needs_kustomize
@pytest.mark.parametrize(
    ("case", "expected"),
    [
        # Deployment/prod-vllm-router is router.yaml's vllm-router, not vllm.yaml's vllm
        # (whose name is part of it): names are matched exactly after the namePrefix.
        ("names", {("base/router.yaml", 20, 31, "GPU004", False)}),
        # The last writer of each value: a JSON6902 patch file after an earlier strategic
        # merge patch of another value, an inline strategic merge patch, an inline op list.
        (
            "patched",
            {
                ("gpu/trainer-gpus.yaml", 4, 10, "GPU004", False),
                ("gpu/kustomization.yaml", 21, 37, "GPU004", False),
                ("gpu/kustomization.yaml", 28, 16, "GPU004", False),
            },
        ),
        # Operations on list items by index, a later one moving the earlier one's item:
        # each named item is the one its operation wrote, wherever it is now.
        (
            "shifted",
            {
                ("server.yaml", 19, 31, "GPU004", False),
                ("kustomization.yaml", 20, 31, "GPU004", False),
            },
        ),
        # Renamed by a /metadata/name JSON patch, then suffixed: still the base's object.
        ("renamed", {("base/server.yaml", 19, 31, "GPU004", False)}),
        # Written by a component's patch (after the resources, before the namePrefix).
        ("component", {("a100/a100.yaml", 14, 31, "GPU004", False)}),
        # Written by a patch whose target selects by label (not followed): a fallback.
        ("selected", {("kustomization.yaml", 6, 1, "GPU004", True)}),
        # Written by a replacement from a ConfigMap's data: where that value is written
        # (server.yaml's own value is another).
        ("replaced", {("sizing.yaml", 6, 9, "GPU004", False)}),
        # A ConfigMap made by configMapGenerator from values.yaml (its hashed name): at the
        # `files` entry that makes the key holding the GPU request, not a fallback.
        ("generated", {("kustomization.yaml", 12, 9, "GL204", False)}),
    ],
)  # fmt: skip
def test_a_finding_is_where_its_value_is_written(
    case: str, expected: set[tuple[str, int, int, str, bool]]
) -> None:
    assert placed(CASES / case) == expected


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")
    return repo


def _report(repo: Path) -> list[dict[str, Any]]:
    proc = gpulint_in_process("check", "--format", "json", "--render", ".", cwd=repo)
    assert proc.returncode in (0, 1, 2), proc.stderr
    findings: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return findings


SERVER = (CASES / "renamed" / "base" / "server.yaml").read_text(encoding="utf-8")


@needs_kustomize
def test_a_kustomize_error_is_at_the_file_and_line_it_names(tmp_path: Path) -> None:
    repo = _tree(
        tmp_path,
        {
            "broken/kustomization.yaml": "resources:\n  - server.yaml\n  - config.yaml\n",
            "broken/server.yaml": SERVER,
            "broken/config.yaml": "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: [b\n",
            "twice/kustomization.yaml": "resources:\n  - server.yaml\n  - copy.yaml\n",
            "twice/server.yaml": SERVER,
            "twice/copy.yaml": SERVER,
        },
    )
    got = {(f["path"], f["line"], f["rule"]): f["message"] for f in _report(repo)}
    assert set(got) == {
        ("broken/config.yaml", 5, "GL200"),  # the YAML error's own line, in its own file
        ("twice/kustomization.yaml", 3, "GL200"),  # the entry that adds the object again
        # the files the roots name are still linted, as they are, saying why
        ("broken/server.yaml", 19, "GPU004"),
        ("twice/server.yaml", 19, "GPU004"),
        ("twice/copy.yaml", 19, "GPU004"),
    }
    assert got[("broken/server.yaml", 19, "GPU004")].endswith(
        "(linted as it is: broken/kustomization.yaml, which names it, does not build)"
    )
    for message in (m for (_, _, rule), m in got.items() if rule == "GL200"):
        assert (
            "\n" not in message and ";" not in message and "must build at directory" not in message
        )
    assert got[("twice/kustomization.yaml", 3, "GL200")].endswith(
        "copy.yaml: may not add resource with an already registered id: "
        "Deployment.v1.apps/vllm.[noNs]"
    )


@needs_kustomize
def test_a_missing_generator_file_is_not_blamed_on_remote_bases(tmp_path: Path) -> None:
    repo = _tree(
        tmp_path,
        {
            "app/kustomization.yaml": (
                "resources:\n  - server.yaml\nconfigMapGenerator:\n  - name: engine\n"
                "    files:\n      - engine.conf\n"
            ),
            "app/server.yaml": SERVER,
        },
    )
    finding, server = sorted(_report(repo), key=lambda f: f["path"])
    assert (server["path"], server["rule"]) == ("app/server.yaml", "GPU004")  # linted as it is
    assert (finding["path"], finding["line"]) == ("app/kustomization.yaml", 6)
    assert "engine.conf' is not a file or folder in the repository" in said(finding)
    assert "remote" not in said(finding)


@needs_kustomize
def test_overlays_that_build_are_linted_when_the_root_naming_them_fails(tmp_path: Path) -> None:
    """A root that names every environment (kubeflow/manifests' example/) and fails on one
    of them: the failure is reported where it is, and the others are still linted."""
    repo = _tree(
        tmp_path,
        {
            "all/kustomization.yaml": "resources:\n  - ../gpu\n  - ../remote\n",
            "also/kustomization.yaml": "resources:\n  - ../remote\n  - ../gpu\n",
            "gpu/kustomization.yaml": "resources:\n  - server.yaml\n",
            "gpu/server.yaml": SERVER,
            "remote/kustomization.yaml": (
                "resources:\n  - https://github.com/kubernetes-sigs/lws//config/default?ref=v0.8.0\n"
            ),
        },
    )
    got = [(f["path"], f["line"], f["rule"]) for f in _report(repo)]
    # Two roots fail on the same base and both name gpu/: each finding once.
    assert sorted(got) == [
        ("gpu/server.yaml", 19, "GPU004"),
        ("remote/kustomization.yaml", 2, "GL200"),
    ]


@needs_kustomize
def test_a_placeholder_a_script_fills_in_is_where_it_is_written(tmp_path: Path) -> None:
    """A tree whose deploy script substitutes ``{{CACHE_PVC_SIZE}}`` before building: the
    build fails at that placeholder's line, and the GPU Job beside it is still linted, as it
    is; a GPU file that is not YAML until filled in is said to be unchecked (GL204)."""
    job = SERVER.replace("nvidia.com/gpu: 0.5", "nvidia.com/gpu: {{ GPUS }}")
    repo = _tree(
        tmp_path,
        {
            "app/kustomization.yaml": "resources:\n  - pvc.yaml\n  - server.yaml\n",
            "app/pvc.yaml": (
                "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: cache\n"
                "spec:\n  resources:\n    requests:\n      storage: {{CACHE_PVC_SIZE}}\n"
            ),
            "app/server.yaml": SERVER,
            "gpus/kustomization.yaml": "resources:\n  - job.yaml\n",
            "gpus/job.yaml": job + "  paused: [true\n",  # not YAML as it is
        },
    )
    got = {(f["path"], f["line"], f["rule"]): said(f) for f in _report(repo)}
    assert ("app/pvc.yaml", 8, "GL200") in got
    assert "{{CACHE_PVC_SIZE}} is a placeholder" in got[("app/pvc.yaml", 8, "GL200")]
    assert ("app/server.yaml", 19, "GPU004") in got
    assert ("gpus/kustomization.yaml", 2, "GL204") in got


@needs_kustomize
def test_a_component_that_breaks_two_roots_names_both_once(tmp_path: Path) -> None:
    component = (
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n"
        "  - patch: |-\n      - op: add\n        path: /spec/template/spec/volumes/-\n"
        "        value: {name: shm, emptyDir: {medium: Memory}}\n"
        "    target:\n      kind: Deployment\n"
    )
    root = "resources:\n  - ../base\ncomponents:\n  - ../shm\n"
    repo = _tree(
        tmp_path,
        {
            "base/kustomization.yaml": "resources:\n  - server.yaml\n",
            "base/server.yaml": SERVER,
            "shm/kustomization.yaml": component,
            "a/kustomization.yaml": root,
            "b/kustomization.yaml": root,
        },
    )
    (failure,) = [f for f in _report(repo) if f["rule"] == "GL200"]
    # at the patch's `path:` line of the component, once, naming both roots it breaks
    assert (failure["path"], failure["line"]) == ("shm/kustomization.yaml", 6)
    assert "building a/kustomization.yaml, b/kustomization.yaml)" in said(failure)


@needs_kustomize
def test_a_component_s_finding_two_roots_build_is_one_row(tmp_path: Path) -> None:
    component = (
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n"
        "  - path: patch-deployment.yaml\n    target:\n      kind: Deployment\n"
    )
    patch = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nim\nspec:\n"
        "  template:\n    spec:\n      containers:\n        - name: nim\n"
        "          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )
    base = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nim\nspec:\n"
        "  selector:\n    matchLabels:\n      app: nim\n  template:\n    metadata:\n"
        "      labels:\n        app: nim\n    spec:\n      containers:\n        - name: nim\n"
        "          image: nvcr.io/nim/meta/llama-3.1-8b-instruct:1.3.3\n"
    )
    repo = _tree(
        tmp_path,
        {
            "base/kustomization.yaml": "resources:\n  - deployment.yaml\n",
            "base/deployment.yaml": base,
            "components/gpu/kustomization.yaml": component,
            "components/gpu/patch-deployment.yaml": patch,
            "overlays/gpu/kustomization.yaml": (
                "resources:\n  - ../../base\ncomponents:\n  - ../../components/gpu\n"
            ),
            "overlays/demo/kustomization.yaml": (
                "namespace: demo-nim\nresources:\n  - ../../base\n"
                "components:\n  - ../../components/gpu\n"
            ),
        },
    )
    rows = [(f["path"], f["line"]) for f in _report(repo) if f["rule"] == "GPU020"]
    # the patch's pod spec, where the toleration is added: once, for both roots
    assert rows == [("components/gpu/patch-deployment.yaml", 7)]


@needs_kustomize
def test_a_patch_no_resource_matches_is_at_its_entry(tmp_path: Path) -> None:
    """An overlay whose strategic-merge patch is written for a Deployment its base does not
    hold (the base's ``resources:`` forgot the file): kustomize names only the object, so
    the build's GL200 is at the ``patches:`` entry written for it, saying so; the entry of
    the patch before it, written for the base's Service, is not blamed."""
    patch = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: triton\n"
        "  namespace: triton\nspec:\n  replicas: 1\n"
    )
    service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: triton\n"
    port = "spec:\n  ports:\n    - port: 8000\n"
    repo = _tree(
        tmp_path,
        {
            "base/kustomization.yaml": "namespace: triton\nresources:\n  - service.yaml\n",
            "base/service.yaml": service + port,
            "base/deployment.yaml": SERVER,
            "prod/kustomization.yaml": (
                "namespace: triton\nresources:\n  - ../base\npatches:\n"
                "  - path: service-patch.yaml\n  - path: replica-patch.yaml\n"
            ),
            "prod/replica-patch.yaml": patch,
            "prod/service-patch.yaml": service,
        },
    )
    (failure,) = [f for f in _report(repo) if f["rule"] == "GL200"]
    assert (failure["path"], failure["line"]) == ("prod/kustomization.yaml", 6)
    assert "the patch `replica-patch.yaml` is written for that object" in said(failure)


@needs_kustomize
def test_a_component_s_replace_of_a_missing_path_is_at_that_path(tmp_path: Path) -> None:
    """kustomize names the JSON pointer of a ``replace`` that finds nothing without quotes:
    the GL200 is at the component's ``path:`` line all the same, its message without the
    quote kustomize wraps the inner error in."""
    component = (
        "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n"
        "- patch: |-\n    - op: replace\n      path: /spec/template/spec/nodeSelector/pool\n"
        "      value: a100\n  target: {kind: Deployment}\n"
    )
    repo = _tree(
        tmp_path,
        {
            "base/kustomization.yaml": "resources:\n  - server.yaml\n",
            "base/server.yaml": SERVER,
            "pool/kustomization.yaml": component,
            "a/kustomization.yaml": "resources:\n  - ../base\ncomponents:\n  - ../pool\n",
        },
    )
    (failure,) = [f for f in _report(repo) if f["rule"] == "GL200"]
    assert (failure["path"], failure["line"]) == ("pool/kustomization.yaml", 6)
    assert not said(failure).endswith('"')


@needs_kustomize
def test_a_patched_object_its_base_forgot_is_at_the_base_s_resources(tmp_path: Path) -> None:
    """The object the unmatched patch is for is written beside the base's kustomization, in
    a file its ``resources:`` does not name: the GL200 is at that ``resources:`` line, where
    the file is added, naming it."""
    server = SERVER.replace("name: vllm", "name: triton", 1)
    patch = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: triton\nspec:\n  replicas: 2\n"
    )
    repo = _tree(
        tmp_path,
        {
            "base/kustomization.yaml": "namespace: triton\nresources: []\n",
            "base/deployment.yaml": server,
            "prod/kustomization.yaml": (
                "resources:\n  - ../base\npatches:\n  - path: replicas.yaml\n"
            ),
            "prod/replicas.yaml": patch,
        },
    )
    (failure,) = [f for f in _report(repo) if f["rule"] == "GL200"]
    assert (failure["path"], failure["line"]) == ("base/kustomization.yaml", 2)
    assert "Deployment triton is written in deployment.yaml" in said(failure)


@needs_kustomize
def test_a_generated_literal_is_at_its_item_and_an_envs_key_at_its_line(
    tmp_path: Path,
) -> None:
    """A key made by a ``literals`` item is at that item (the name not hashed, as
    ``generatorOptions`` says); a key an ``envs`` file makes is at its line in that file."""
    pod = '{"containers": [{"name": "w", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}'
    repo = _tree(
        tmp_path,
        {
            "kustomization.yaml": (
                "generatorOptions:\n"
                "  disableNameSuffixHash: true\n"
                "configMapGenerator:\n"
                "  - name: agent\n"
                "    literals:\n"
                "      - queue=gpu\n"
                f"      - 'pod.json={pod}'\n"
                "  - name: runner\n"
                "    envs:\n"
                "      - runner.env\n"
            ),
            "runner.env": f"TEMPLATE={pod}\n",
        },
    )
    got = {
        (f["path"], f["line"], f["column"], f["rule"], FALLBACK in said(f)) for f in _report(repo)
    }
    assert got == {
        ("kustomization.yaml", 7, 9, "GL204", False),
        ("runner.env", 1, 1, "GL204", False),
    }


@needs_kustomize
def test_a_replaced_value_is_at_the_literal_it_is_copied_from(tmp_path: Path) -> None:
    """A replacement copying a configMapGenerator literal into the GPU limit: the finding
    is at that literal, saying which replacement copied it; one whose source is cut by
    ``options`` (a delimiter) is not followed, and falls back saying so."""
    deployment = SERVER.replace("nvidia.com/gpu: 0.5", "nvidia.com/gpu: 1  # from sizing")
    replacement = (
        "  - source:\n"
        "      kind: ConfigMap\n"
        "      name: sizing\n"
        "      fieldPath: data.GPUS\n"
        "{options}"
        "    targets:\n"
        "      - select:\n"
        "          kind: Deployment\n"
        "        fieldPaths:\n"
        "          - spec.template.spec.containers.[name=server]"
        ".resources.limits.nvidia\\.com/gpu\n"
    )
    kustomization = (
        "resources:\n"
        "  - server.yaml\n"
        "configMapGenerator:\n"
        "  - name: sizing\n"
        "    literals:\n"
        "      - MODEL=llama\n"
        "      - GPUS=16\n"
        "replacements:\n"
    )
    whole = _tree(
        tmp_path / "whole",
        {
            "kustomization.yaml": kustomization + replacement.format(options=""),
            "server.yaml": deployment,
        },
    )
    cut = _tree(
        tmp_path / "cut",
        {
            "kustomization.yaml": kustomization
            + replacement.format(options="      options: {delimiter: '-', index: 0}\n"),
            "server.yaml": deployment,
        },
    )
    [copied] = [f for f in _report(whole) if f["rule"] == "GPU040"]
    assert (copied["path"], copied["line"], copied["column"]) == ("kustomization.yaml", 7, 9)
    assert (
        "copied from ConfigMap/sizing data.GPUS by the replacement at kustomization.yaml:9"
        in (copied["message"])
    )
    from_env = _tree(
        tmp_path / "env",
        {
            "kustomization.yaml": kustomization.replace(
                "  literals:\n      - MODEL=llama\n      - GPUS=16\n",
                "  envs:\n      - shape.env\n",
            )
            + replacement.format(options=""),
            "shape.env": "# the pod's shape\nMODEL=llama\nGPUS=16\n",
            "server.yaml": deployment,
        },
    )
    [env] = [f for f in _report(from_env) if f["rule"] == "GPU040"]
    assert (env["path"], env["line"], FALLBACK in said(env)) == ("shape.env", 3, False)
    [fallback] = [f for f in _report(cut) if f["rule"] == "GPU040"]
    assert (fallback["path"], fallback["line"]) == ("kustomization.yaml", 2)
    assert FALLBACK in said(fallback)


KFAIL = FIXTURES / "render" / "kfail"


def _copied(tmp_path: Path, case: str, leave_out: str = "") -> Path:
    """A fixture tree of tests/fixtures/render/kfail as a repository of its own."""
    repo = tmp_path / case
    shutil.copytree(KFAIL / case, repo, ignore=shutil.ignore_patterns(leave_out or "-"))
    (repo / ".git").mkdir()
    return repo


@needs_kustomize
def test_a_cycle_is_at_the_entry_that_names_the_folder_holding_the_overlay(
    tmp_path: Path,
) -> None:
    """An overlay naming ``../../``, the folder that holds it: kustomize's cycle error,
    wrapped in ``accumulation err='…'``, is at that entry, and the GPU request its patch
    writes is said to be unchecked."""
    repo = _copied(tmp_path, "cycle")
    got = {(f["path"], f["line"], f["rule"]): said(f) for f in _report(repo)}
    assert set(got) == {
        ("overlays/gpu/kustomization.yaml", 4, "GL200"),
        ("overlays/gpu/kustomization.yaml", 6, "GL204"),
    }
    cycle = got[("overlays/gpu/kustomization.yaml", 4, "GL200")]
    assert "../../: cycle detected: the folder it names (.) holds overlays/gpu" in cycle
    assert "accumulation err" not in cycle and str(tmp_path) not in cycle
    assert (
        "gpu-patch.yaml writes GPU resources that were not checked"
        in got[("overlays/gpu/kustomization.yaml", 6, "GL204")]
    )


@needs_kustomize
def test_a_shared_folder_the_load_restrictor_refuses_is_one_row_naming_its_roots(
    tmp_path: Path,
) -> None:
    """Two roots build a shared folder that names a file beside it: the load restrictor
    refuses it for both, and no Flux Kustomization builds them. One GL200 at the entry,
    naming both roots, the same whichever root the run is given; the shared folder built
    alone (it fails the same way) adds no row."""
    repo = _copied(tmp_path, "shared", leave_out="flux")
    failures = [f for f in _report(repo) if f["rule"] == "GL200"]
    assert [(f["path"], f["line"]) for f in failures] == [
        ("shared/volsync/full/kustomization.yaml", 5)
    ]
    message = said(failures[0])
    assert (
        "building apps/ai/ollama/app/kustomization.yaml, apps/media/plex/app/kustomization.yaml)"
        in message
    )
    assert "Flux builds with it off" in message
    proc = gpulint_in_process("check", "--format", "json", "--render", "apps/media/plex", cwd=repo)
    alone = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "GL200"]
    assert [f["message"] for f in alone] == [failures[0]["message"]]


@needs_kustomize
def test_a_root_flux_builds_is_built_without_the_load_restrictor(tmp_path: Path) -> None:
    """The same tree with the Flux Kustomizations that build each root: Flux's
    kustomize-controller builds with ``LoadRestrictionsNone``, so the roots build and their
    objects are linted as built (no GL200, no "linted as it is")."""
    repo = _copied(tmp_path, "shared")
    got = {(f["path"], f["line"], f["rule"]): said(f) for f in _report(repo)}
    assert set(got) == {("apps/ai/ollama/app/deployment.yaml", 19, "GPU004")}
    assert "linted as it is" not in got[("apps/ai/ollama/app/deployment.yaml", 19, "GPU004")]


@needs_kustomize
def test_a_failure_kustomize_names_no_line_of_says_it_is_shown_at_line_one(
    tmp_path: Path,
) -> None:
    """A replacement whose source object does not exist: kustomize's message names no file
    or line, so GL200 is at the kustomization's first line and says it is a fallback."""
    repo = _tree(
        tmp_path,
        {
            "app/kustomization.yaml": (
                "resources:\n  - server.yaml\nreplacements:\n  - source:\n"
                "      kind: ConfigMap\n      name: sizing\n      fieldPath: data.replicas\n"
                "    targets:\n      - select: {kind: Deployment}\n"
                "        fieldPaths: [spec.replicas]\n"
            ),
            "app/server.yaml": SERVER,
        },
    )
    (failure,) = [f for f in _report(repo) if f["rule"] == "GL200"]
    assert (failure["path"], failure["line"]) == ("app/kustomization.yaml", 1)
    assert said(failure).endswith(
        "(shown at the kustomization's first line: kustomize's message names no line of the "
        "tree that gpulint could find)"
    )
