"""A list item the template writes as text, among items template logic writes, is found by
its text (gpulint/render/helm/literalitems.py): Frigate's container ``env`` writes two
literal items inside ``{{- if .Values.gpu.nvidia.enabled }}`` and then one per key of
``.Values.env``. The fixture chart tests/fixtures/render/charts/camera is rendered with the
real helm (3 and 4)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES, gpulint_in_process
from tests.externals import helms, needs_helm

CAMERA = FIXTURES / "render" / "charts" / "camera"
HELMS = helms()
UNKNOWN = "which of its items in the template this one is is not known"


def _gpu016(tmp_path: Path, helm_path: str, *flags: str) -> list[dict[str, Any]]:
    shutil.copytree(CAMERA, tmp_path / "camera")
    (tmp_path / ".git").mkdir()
    (tmp_path / "mine.yaml").write_text("env:\n  TZ: UTC\n  NVIDIA_VISIBLE_DEVICES: all\n")
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, *flags, "camera",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    found: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return sorted((f for f in found if f["rule"] == "GPU016"), key=lambda f: f["path"])


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_an_env_item_written_as_text_inside_an_if_is_at_its_value(
    tmp_path: Path, helm_path: str
) -> None:
    (found,) = _gpu016(tmp_path, helm_path, "--set", "gpu.nvidia.enabled=true")
    assert (found["path"], found["line"], found["column"]) == (
        "camera/templates/deployment.yaml",
        22,
        22,
    )
    assert UNKNOWN not in found["message"]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_the_same_item_the_values_could_write_is_not_guessed(
    tmp_path: Path, helm_path: str
) -> None:
    """The values hold ``NVIDIA_VISIBLE_DEVICES: all`` too: the range writes a copy of the
    literal item, so the literal one's finding stays at ``env:``, saying so, and the range's
    is at its values line (traced by the marked render)."""
    template, values = _gpu016(
        tmp_path, helm_path, "--set", "gpu.nvidia.enabled=true", "--values", "mine.yaml"
    )
    assert (template["path"], template["line"]) == ("camera/templates/deployment.yaml", 17)
    assert UNKNOWN in template["message"]
    assert (values["path"], values["line"]) == ("mine.yaml", 3)


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_set_flag_under_the_range_s_values_is_not_guessed(tmp_path: Path, helm_path: str) -> None:
    (found,) = _gpu016(
        tmp_path, helm_path, "--set", "gpu.nvidia.enabled=true", "--set", "env.X=all"
    )
    assert (found["path"], found["line"]) == ("camera/templates/deployment.yaml", 17)
    assert UNKNOWN in found["message"]


SPEECH = FIXTURES / "render" / "charts" / "speech"


def _speech(tmp_path: Path, helm_path: str, *flags: str) -> list[dict[str, Any]]:
    shutil.copytree(SPEECH, tmp_path / "speech")
    (tmp_path / ".git").mkdir()
    proc = gpulint_in_process(
        "check", "--format", "json", "--render", "--helm", helm_path, *flags, "speech",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    found: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return [f for f in found if f["rule"] == "GPU016"]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_items_whose_values_are_read_from_values_do_not_hide_the_literal_item(
    tmp_path: Path, helm_path: str
) -> None:
    """A Whisper chart's ``env``: literal items whose ``value:`` reads a values key (one
    scalar each, never an item), an optional item inside an ``if`` before the GPU's: the
    rendered ``NVIDIA_VISIBLE_DEVICES`` item is the one literal item that reads the same."""
    (found,) = _speech(tmp_path, helm_path, "--set", "gpu.enabled=true")
    assert (found["path"], found["line"], found["column"]) == (
        "speech/templates/deployment.yaml",
        30,
        18,
    )
    assert UNKNOWN not in found["message"]


@needs_helm
@pytest.mark.parametrize("helm_path", HELMS)
def test_a_value_read_into_an_item_that_holds_the_item_s_text_is_not_guessed(
    tmp_path: Path, helm_path: str
) -> None:
    """``whisper.asrDevice`` set to ``all``: the values read into the other items hold the
    reported item's text, so which item it is stays unknown, and the finding says so."""
    (found,) = _speech(
        tmp_path, helm_path, "--set", "gpu.enabled=true", "--set", "whisper.asrDevice=all"
    )
    assert (found["path"], found["line"]) == ("speech/templates/deployment.yaml", 17)
    assert UNKNOWN in found["message"]
