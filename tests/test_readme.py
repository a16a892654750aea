"""The README's examples work as written: a new user copies them."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.conftest import ROOT, gpulint_cmd

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    start = README.index(f"## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end >= 0 else None]


def _blocks(text: str, lang: str, fence: str = "```") -> list[str]:
    pattern = re.escape(fence) + re.escape(lang) + r"\n(.*?)\n" + re.escape(fence) + r"\n"
    return re.findall(pattern, text, re.S)


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*gpulint_cmd(), *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_complete_configuration_example_is_valid(tmp_path: Path) -> None:
    full = _blocks(_section("Configuration"), "yaml")[0]
    (tmp_path / ".git").mkdir()
    (tmp_path / "policy" / "gpulint").mkdir(parents=True)
    (tmp_path / ".gpulint.yaml").write_text(full.replace("plugins: [acme_gpulint.rules]\n", ""))
    proc = run(["config", "-f", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    settings = json.loads(proc.stdout)["settings"]
    assert settings["rules.GPU021.taints"]["value"] == [
        {"key": "sku", "value": "gpu", "effect": "NoSchedule"}
    ]
    assert settings["rules.GPU020.taints"]["origin"].startswith(".gpulint.yaml:")
    toml = _blocks(_section("Configuration"), "toml")[0]
    (tmp_path / "pyproject.toml").write_text(toml)
    proc = run(["config", "--config", "pyproject.toml", "-f", "json"], tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_the_python_rule_example_loads_and_fires(tmp_path: Path) -> None:
    module = _blocks(README, "python", fence="~~~")[0]
    (tmp_path / ".git").mkdir()
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "acme010_priority.py").write_text(module + "\n")
    (tmp_path / ".gpulint.yaml").write_text("rule-dirs: [policy]\n")
    (tmp_path / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n"
        "    resources:\n      limits:\n        nvidia.com/gpu: 1\n"
    )
    args = ["check", "--allow-plugins", "-f", "json", "--select", "ACME", "pod.yaml"]
    proc = run(args, tmp_path)
    found = json.loads(proc.stdout)["findings"]
    assert [(f["rule"], f["line"]) for f in found] == [("ACME010", 5)], proc.stderr
    doc = run(["rule", "ACME010", "--allow-plugins"], tmp_path).stdout
    assert "## Use instead" in doc
