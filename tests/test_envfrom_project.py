"""GPU016 and GPU043 read the variables a container takes through ``envFrom`` from a
ConfigMap in another file of its project, never from another project's files, and judge a
file the same whichever files the run was given."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import gpulint_in_process

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: jellyfin
data:
  TZ: America/New_York
  {variable}
"""
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: jellyfin
spec:
  selector:
    matchLabels: {app: jellyfin}
  template:
    metadata:
      labels: {app: jellyfin}
    spec:
      runtimeClassName: nvidia
      containers:
      - name: jellyfin
        image: docker.io/linuxserver/jellyfin:10.10.7
        envFrom:
        - configMapRef:
            name: jellyfin
"""


def _findings(root: Path, *paths: str) -> list[dict[str, object]]:
    proc = gpulint_in_process(
        "check", "-f", "json", "--isolated", "--select", "GPU016,GPU043", *paths, cwd=root
    )
    assert proc.returncode in (0, 1), proc.stderr
    found: list[dict[str, object]] = json.loads(proc.stdout)["findings"]
    return found


def _project(root: Path, variable: str) -> Path:
    root.mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "jellyfin").mkdir()
    (root / "jellyfin" / "deployment.yaml").write_text(DEPLOYMENT)
    (root / "jellyfin" / "configmap.yaml").write_text(CONFIGMAP.format(variable=variable))
    return root


def test_visible_devices_from_a_configmap_of_the_project(tmp_path: Path) -> None:
    root = _project(tmp_path / "homelab", "NVIDIA_VISIBLE_DEVICES: all")
    # The whole project, and the deployment's file alone: the same verdict.
    for given in (".", "jellyfin/deployment.yaml"):
        [finding] = _findings(root, given)
        assert finding["rule"] == "GPU016" and finding["severity"] == "warning"
        assert (finding["path"], finding["line"]) == ("jellyfin/deployment.yaml", 18)
        assert "NVIDIA_VISIBLE_DEVICES=all from ConfigMap jellyfin" in str(finding["message"])
        [related] = finding["related"]  # type: ignore[misc]
        assert (related["path"], related["line"]) == ("jellyfin/configmap.yaml", 7)


def test_a_gpu_switch_from_a_configmap_of_the_project(tmp_path: Path) -> None:
    root = _project(tmp_path / "homelab", 'USE_GPU: "true"')
    [finding] = _findings(root, ".")
    assert finding["rule"] == "GPU043" and finding["severity"] == "info"
    assert "sets USE_GPU=true" in str(finding["message"])


def test_another_project_s_configmap_is_never_read(tmp_path: Path) -> None:
    # Two repositories linted in one run: the ConfigMap of one says nothing of the other.
    root = _project(tmp_path / "media", "TZ2: UTC")
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "configmap.yaml").write_text(CONFIGMAP.format(variable="NVIDIA_VISIBLE_DEVICES: all"))
    (root / "jellyfin" / "configmap.yaml").unlink()
    assert _findings(tmp_path, ".") == []
    assert _findings(tmp_path, "media/jellyfin/deployment.yaml", "other") == []


def test_a_secret_of_the_project_sets_only_its_keys(tmp_path: Path) -> None:
    root = _project(tmp_path / "homelab", "NVIDIA_VISIBLE_DEVICES: all")
    deployment = root / "jellyfin" / "deployment.yaml"
    deployment.write_text(DEPLOYMENT + "        - secretRef:\n            name: jellyfin\n")
    [finding] = _findings(root, ".")
    assert finding["severity"] == "info"  # a Secret the project does not hold: assumed
    secret = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: jellyfin\ndata:\n"
    (root / "jellyfin" / "secret.yaml").write_text(secret)
    for given in (".", "jellyfin/deployment.yaml"):
        [finding] = _findings(root, given)
        assert finding["severity"] == "warning"
    (root / "jellyfin" / "secret.yaml").write_text(secret + "  NVIDIA_VISIBLE_DEVICES: bm9uZQ==\n")
    assert _findings(root, ".") == []  # the Secret sets it again: its value is not known
