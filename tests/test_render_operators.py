"""An operator's resource rendered by a chart is linted as the pods its operator makes, and
its findings are at the values line: Slinky's NodeSet, whose ``slurmd`` container sits at
``spec.slurmd`` beside the pod template, gets GPU020 at the nodeset's own empty
``podSpec.tolerations`` (read as ``$nodeset.podSpec.tolerations`` in a ``range`` over
``.Values.nodesets``); it got no finding. The fixture chart tests/fixtures/render/charts/slurm
is rendered with the real helm (3 and 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, gpulint_in_process
from tests.externals import helms, needs_helm

SLURM = FIXTURES / "render" / "charts" / "slurm"
HELMS = helms()


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_gpu_nodeset_s_missing_toleration_is_at_its_values_line(
    tmp_path: Path, helm_path: str
) -> None:
    shutil.copytree(SLURM, tmp_path / "slurm")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, "slurm", cwd=tmp_path
    )
    assert proc.returncode in (0, 1), proc.stderr
    (found,) = json.loads(proc.stdout)["findings"]
    assert found["rule"] == "GPU020"
    assert found["object"]["kind"] == "NodeSet"
    assert (found["path"], found["line"], found["column"]) == ("slurm/values.yaml", 10, 7)
    assert "as .Values.nodesets.gpu.podSpec.tolerations, which is empty here" in found["message"]


SLURM_DEFAULTS = FIXTURES / "render" / "charts" / "slurm-defaults"


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_nodeset_merged_over_defaults_names_both_keys(tmp_path: Path, helm_path: str) -> None:
    """Slinky's chart merges each nodeset over ``nodesetDefaults`` (``$nodeset =
    mergeOverwrite (dict) (deepCopy ($.Values.nodesetDefaults | default dict)) (deepCopy
    $nodeset)``): the GPU nodeset that has no tolerations of its own, and whose defaults
    are empty, is at its own ``podSpec:``, and the message names the defaults it falls back
    to instead of saying the template reads the nodeset's key only. The nodeset with its
    own toleration, and the CPU one, have no finding."""
    shutil.copytree(SLURM_DEFAULTS, tmp_path / "slurm")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, "slurm", cwd=tmp_path
    )
    assert proc.returncode in (0, 1), proc.stderr
    (found,) = json.loads(proc.stdout)["findings"]
    assert found["rule"] == "GPU020"
    assert found["object"]["name"] == "release-name-h100"
    assert (found["path"], found["line"], found["column"]) == ("slurm/values.yaml", 14, 5)
    message = found["message"]
    assert "as .Values.nodesets.h100.podSpec.tolerations, this object's own" in message
    assert "else .Values.nodesetDefaults.podSpec.tolerations, which is empty here" in message
    assert "only from it" not in message


SLURM_HELPERS = FIXTURES / "render" / "charts" / "slurm-helpers"


def _slurm_helpers(tmp_path: Path, helm_path: str, *values: str) -> dict[str, object]:
    shutil.copytree(SLURM_HELPERS, tmp_path / "slurm")
    (tmp_path / ".git").mkdir()
    args = [f"--values={v}" for v in values]
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, *args, "slurm",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    (found,) = json.loads(proc.stdout)["findings"]
    assert (found["rule"], found["object"]["name"]) == ("GPU020", "release-name-gpu")
    return found  # type: ignore[no-any-return]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_pod_template_written_by_helpers_is_traced_to_its_values_list(
    tmp_path: Path, helm_path: str
) -> None:
    """Slinky's own chart writes a NodeSet's pod spec with ``toYaml`` in a helper, given a
    ``dict`` of the nodeset merged over ``nodesetDefaults`` that went through ``toYaml`` and
    ``fromYaml`` in another helper: no reading of the template's text follows that, so the
    empty list is found by a render of its own, and the finding is at the
    ``nodesetDefaults.podSpec.tolerations: []`` this object's tolerations come from."""
    found = _slurm_helpers(tmp_path, helm_path)
    assert (found["path"], found["line"], found["column"]) == ("slurm/values.yaml", 9, 18)
    assert "as .Values.nodesetDefaults.podSpec.tolerations, which is empty here" in str(
        found["message"]
    )


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_values_list_other_objects_render_too_is_named_not_pointed_at(
    tmp_path: Path, helm_path: str
) -> None:
    """With a CPU nodeset beside it, the defaults' list is every nodeset's: a toleration
    added there would go to the CPU pods too, so the finding stays at the template and
    says which list it comes from and who else renders it."""
    (tmp_path / "cpu.yaml").write_text("nodesets:\n  cpu:\n    replicas: 4\n")
    found = _slurm_helpers(tmp_path, helm_path, str(tmp_path / "cpu.yaml"))
    assert found["path"] == "slurm/templates/nodeset-cr.yaml"
    message = str(found["message"])
    assert ".Values.nodesetDefaults.podSpec.tolerations (slurm/values.yaml:9)" in message
    assert "NodeSet/release-name-cpu also renders" in message
