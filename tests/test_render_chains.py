"""A field read through a fallback chain (``index $module "tolerations" | default
$.Values.tolerations`` inside ``range $name, $module := .Values.modules``) is placed at the
key that chain uses for *this* object: the module's own when it is set, else the global one,
and a missing field at the module's own key (the global one would change every module), never
claiming the template reads it "only from" one of them. The fixture chart
tests/fixtures/render/charts/modules is rendered with the real helm (3 and 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, gpulint_in_process
from tests.externals import helms, needs_helm

MODULES = FIXTURES / "render" / "charts" / "modules"
HELMS = helms()


def _gpu020(tmp_path: Path, helm_path: str, *args: str) -> dict[str, dict[str, Any]]:
    shutil.copytree(MODULES, tmp_path / "modules")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, *args, "modules", cwd=tmp_path
    )
    assert proc.returncode in (0, 1), proc.stderr
    hits = [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "GPU020"]
    return {
        f["object"]["name"].rsplit("-", 1)[-1]: f
        for f in hits
        if f["object"]["kind"] == "StatefulSet"
    }


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_module_s_own_empty_list_is_the_place(tmp_path: Path, helm_path: str) -> None:
    found = _gpu020(tmp_path, helm_path)
    assert set(found) == {"inference", "trainer"}  # the CPU module `api` has no finding
    inference = found["inference"]
    assert (inference["path"], inference["line"]) == ("modules/values.yaml", 13)
    assert "as .Values.modules.inference.tolerations, this object's own" in inference["message"]
    assert "only from" not in inference["message"]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_module_without_its_own_key_is_at_the_module(tmp_path: Path, helm_path: str) -> None:
    trainer = _gpu020(tmp_path, helm_path)["trainer"]
    # `trainer:` (values.yaml:17): adding the toleration there leaves the CPU module alone
    assert (trainer["path"], trainer["line"], trainer["column"]) == ("modules/values.yaml", 17, 3)
    message = trainer["message"]
    assert "as .Values.modules.trainer.tolerations, this object's own, which no values" in message
    assert "else .Values.tolerations, which is empty here: add it under modules.trainer" in message
    assert "only from" not in message


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_the_global_list_a_module_falls_back_to(tmp_path: Path, helm_path: str) -> None:
    extra = tmp_path / "site.yaml"
    # A toleration any node may need (one of particular nodes, `dedicated`, would name the
    # GPU nodes' taint itself, and GPU020 would hold the pod to nothing)
    extra.write_text(
        "tolerations:\n  - key: node.kubernetes.io/not-ready\n    operator: Exists\n",
        encoding="utf-8",
    )
    found = _gpu020(tmp_path, helm_path, f"--values={extra}")
    trainer = found["trainer"]  # the global list is the one rendered for it
    assert (trainer["path"], trainer["line"]) == ("site.yaml", 1)
    assert "as .Values.tolerations, which writes these tolerations" in trainer["message"]
    own = ".Values.modules.trainer.tolerations, this object's own, is not set"
    assert own in trainer["message"]
    # `index ... | default` takes the global list when the module's own is empty too
    inference = found["inference"]
    assert (inference["path"], inference["line"]) == ("site.yaml", 1)
    assert "inference.tolerations, this object's own, is empty" in inference["message"]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_copies_a_range_renders_alike_are_one_row(tmp_path: Path, helm_path: str) -> None:
    shutil.copytree(MODULES, tmp_path / "modules")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, "modules", cwd=tmp_path
    )
    findings = json.loads(proc.stdout)["findings"]
    smoke = [f for f in findings if f["path"] == "modules/templates/smoke-test.yaml"]
    # three identical pods (`range until 3`), reported alike at the same line: one row
    assert [(f["rule"], f["line"]) for f in smoke] == [("GPU020", 9)]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_each_pod_spec_of_a_wrapper_is_at_its_own_line(tmp_path: Path, helm_path: str) -> None:
    shutil.copytree(MODULES, tmp_path / "modules")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, "modules", cwd=tmp_path
    )
    findings = json.loads(proc.stdout)["findings"]
    wrapped = [f for f in findings if f["path"] == "modules/templates/appwrapper.yaml"]
    # the AppWrapper's `- template:` holds a PyTorchJob: the Master's pod `spec:` (line 17)
    # and the Worker's (line 27), each with its container's `volumeMounts` place
    assert sorted((f["rule"], f["line"]) for f in wrapped) == [
        ("GPU020", 17),
        ("GPU020", 27),
        ("GPU042", 19),
        ("GPU042", 29),
    ]
    assert all("(shown at" not in f["message"] for f in wrapped)


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_the_toleration_fix_is_written_into_the_list_the_template_reads(
    tmp_path: Path, helm_path: str
) -> None:
    shutil.copytree(MODULES, tmp_path / "modules")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--render", "--helm", helm_path, "--unsafe-fixes", "--diff", "modules",
        cwd=tmp_path,
    )  # fmt: skip
    diff = proc.stdout
    # into the module's own empty list, and under the module that has none (not the global)
    assert "-    tolerations: []" in diff
    assert "+    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]" in diff
    assert "+    tolerations:\n+      - key: nvidia.com/gpu\n" in diff
    assert "\n-tolerations: []" not in diff
    # the three copies of the smoke test pod (written whole in its template): said once
    refused = [line for line in proc.stderr.splitlines() if "smoke-test.yaml" in line]
    assert len(refused) == 1 and "written in the template itself" in refused[0]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_chain_of_two_values_keys_is_followed_in_its_order(
    tmp_path: Path, helm_path: str
) -> None:
    shutil.copytree(MODULES, tmp_path / "modules")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, "modules", cwd=tmp_path
    )
    (found,) = [
        f for f in json.loads(proc.stdout)["findings"] if f["object"]["name"].endswith("-eval")
    ]
    # `default .Values.tolerations .Values.eval.tolerations`: the Job's own key first
    assert (found["rule"], found["path"], found["line"]) == ("GPU020", "modules/values.yaml", 33)
    assert (
        "as .Values.eval.tolerations, the one it reads first, which no values" in (found["message"])
    )
    assert "only from" not in found["message"]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_another_object_s_values_read_is_no_chain(tmp_path: Path, helm_path: str) -> None:
    """A Dynamo graph whose worker services sit under keys the template names (`{{ $worker.name
    | title }}:`): the worker's own list, and not a fallback to the frontend's, which the
    template reads for the frontend only."""
    shutil.copytree(MODULES, tmp_path / "modules")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, "modules", cwd=tmp_path
    )
    (found,) = [
        f for f in json.loads(proc.stdout)["findings"] if f["object"]["name"].endswith("-graph")
    ]
    assert (found["rule"], found["path"], found["line"]) == ("GPU020", "modules/values.yaml", 43)
    assert "as .Values.graph.workers.0.tolerations, which is empty here" in found["message"]
    assert "frontend" not in found["message"]
