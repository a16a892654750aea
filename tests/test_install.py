"""``pip install .`` (a real wheel, not editable) into a fresh venv works on its own.

How it stays fast (measured on the 2-core CI machine): creating a venv with pip and letting
pip resolve every dependency from the index took 22-38 s; building the wheel in pip's
isolated build environment takes 5-15 s of that. So the venv is created without pip, the
wheel is the run's (conftest's ``gpulint_wheel``: built once from the files a fresh clone
has, what ``pip install .`` builds before it installs; the pre-commit hook test does the
isolated build), installed into the venv with the test environment's pip (``--python``,
``--no-deps``), and the venv borrows the test environment's already-installed
dependencies through a ``.pth`` line. That the borrowing hides nothing is checked: every
module the installed gpulint imports must come from the fresh venv, the standard library,
or a distribution the wheel's own metadata requires (transitively).
"""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement

from gpulint import __version__
from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from tests.conftest import ROOT, bare_venv_with

EXAMPLE = ROOT / "examples" / "bad-inference.yaml"


@dataclass(frozen=True)
class Venv:
    root: Path
    python: Path
    site_packages: Path

    def bin(self, name: str) -> Path:
        return self.python.with_name(name)

    def run(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NO_COLOR")}
        return subprocess.run(
            [str(a) for a in args],
            capture_output=True,
            text=True,
            env=env,
            cwd=self.root,
            timeout=300,
        )


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, gpulint_wheel: Path) -> Iterator[Venv]:
    _, python, site_packages = bare_venv_with((), tmp_path_factory.mktemp("install"))
    root = python.parent.parent
    installed = subprocess.run(
        [
            sys.executable,
            *("-m", "pip", "--python", str(python), "install"),
            *("--quiet", "--no-deps", "--no-index", "--no-compile", "--disable-pip-version-check"),
            str(gpulint_wheel),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert installed.returncode == 0, installed.stderr
    # Borrow the test environment's dependencies (after the venv's own site-packages).
    borrowed = [
        sysconfig.get_paths()["purelib"],
        sysconfig.get_paths()["platlib"],
        *site.getsitepackages(),
    ]
    (site_packages / "zz-borrowed-dependencies.pth").write_text(
        "\n".join(dict.fromkeys(borrowed)) + "\n", encoding="utf-8"
    )
    yield Venv(root, python, site_packages)


def test_the_installed_package_is_the_wheel(venv: Venv) -> None:
    proc = venv.run(
        venv.python,
        "-c",
        "import gpulint, importlib.metadata as m; "
        "d = m.distribution('gpulint'); "
        "print(gpulint.__file__); print(d.read_text('direct_url.json') or '{}')",
    )
    assert proc.returncode == 0, proc.stderr
    module_file, direct_url = proc.stdout.splitlines()
    assert Path(module_file).is_relative_to(venv.site_packages)
    assert not json.loads(direct_url).get("dir_info", {}).get("editable", False)


def test_data_files_are_in_the_package(venv: Venv) -> None:
    package = venv.site_packages / "gpulint"
    for name in ("devices.json", "workloads.json"):
        assert (package / "data" / name).is_file()
    for name in ("devices.schema.json", "workloads.schema.json", "report.schema.json"):
        assert (package / "schemas" / name).is_file()
    assert (package / "py.typed").is_file()
    # The repository's top-level folders are not installed as packages of their own.
    assert not (venv.site_packages / "rules").exists()
    assert not (venv.site_packages / "schemas").exists()
    assert not (venv.site_packages / "tests").exists()
    proc = venv.run(
        venv.python,
        "-c",
        "from gpulint.k8s.devices import devices_path, builtin_registry; "
        "from gpulint.k8s.workloads import builtin_table; from gpulint.data import schema_path; "
        "print(devices_path()); print(schema_path('report.schema.json')); "
        "print(len(builtin_registry().resources), len(builtin_table().rows()))",
    )
    assert proc.returncode == 0, proc.stderr
    devices, schema, counts = proc.stdout.splitlines()
    assert Path(devices).is_relative_to(venv.site_packages)
    assert Path(schema).is_relative_to(venv.site_packages)
    assert all(int(n) > 0 for n in counts.split())


def test_rules_are_found_from_the_installed_package(venv: Venv) -> None:
    proc = venv.run(venv.bin("gpulint"), "rules", "--long")
    assert proc.returncode == 0, proc.stderr
    # One entry per rule; a summary wrapped to the width goes on indented lines.
    firsts = [line for line in proc.stdout.splitlines() if not line.startswith(" ")]
    assert [line.split()[0] for line in firsts] == [r.code for r in load_rules()]
    doc = venv.run(venv.bin("gpulint"), "rule", "GPU012")
    assert doc.returncode == 0
    assert "aliyun.com/gpu-core.percentage" in doc.stdout
    version = venv.run(venv.bin("gpulint"), "--version")
    assert version.stdout == f"gpulint {__version__}\n"


def test_check_from_the_installed_package(venv: Venv) -> None:
    proc = venv.run(venv.bin("gpulint"), "check", "--format", "json", EXAMPLE)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == ""
    got = [(f["rule"], f["line"], f["column"]) for f in json.loads(proc.stdout)["findings"]]
    expected = Linter(load_rules()).lint_bytes(str(EXAMPLE), EXAMPLE.read_bytes())
    assert got == [(f.rule, f.line, f.column) for f in expected]
    assert got


def _closure(names: list[str]) -> set[str]:
    """The distributions ``names`` need, transitively, in the test environment."""
    env = default_environment()
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = metadata.distribution(todo.pop()).metadata["Name"].lower().replace("_", "-")
        if name in seen:
            continue
        seen.add(name)
        for text in metadata.requires(name) or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({**env, "extra": ""}):
                todo.append(req.name)
    return seen


def test_nothing_undeclared_is_borrowed(venv: Venv, tmp_path: Path) -> None:
    """Every module the installed gpulint imports comes from the venv, the standard
    library, or a dependency its wheel declares."""
    dump = tmp_path / "modules.json"
    script = (
        "import json, sys; import importlib.metadata as m\n"
        f"sys.argv = ['gpulint', 'check', {str(EXAMPLE)!r}]\n"
        "import gpulint.cli.entry\n"
        "try:\n    gpulint.cli.entry.main()\nexcept SystemExit:\n    pass\n"
        "mods = {n: getattr(v, '__file__', None) for n, v in list(sys.modules.items())}\n"
        "data = {'modules': mods, 'requires': m.requires('gpulint')}\n"
        f"json.dump(data, open({str(dump)!r}, 'w'))\n"
    )
    proc = venv.run(venv.python, "-c", script)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(dump.read_text(encoding="utf-8"))
    env = default_environment()
    declared = [
        req.name
        for req in map(Requirement, data["requires"])
        if req.marker is None or req.marker.evaluate({**env, "extra": ""})
    ]
    assert {"ruamel.yaml", "jsonschema", "typer"} <= set(declared)
    allowed_files: set[Path] = set()
    for name in _closure(declared):
        dist = metadata.distribution(name)
        allowed_files.update(Path(str(dist.locate_file(f))).resolve() for f in dist.files or [])
    stdlib = [Path(sysconfig.get_paths()[k]).resolve() for k in ("stdlib", "platstdlib")]
    for module, file in sorted(data["modules"].items()):
        if file is None:
            continue
        path = Path(file).resolve()
        if path.is_relative_to(venv.site_packages.resolve()):
            continue
        if any(path.is_relative_to(s) and "site-packages" not in path.parts for s in stdlib):
            continue
        assert path in allowed_files, f"{module} ({path}) is not from a declared dependency"
