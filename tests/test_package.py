"""The release artifacts: ``python -m build`` makes a wheel and an sdist that ``twine check``
accepts, without a warning; the sdist carries the data; the wheel installed alone in a fresh
venv lints the examples as they say; ``make vsix`` packages the VS Code extension.

How it stays offline: the build uses this environment's setuptools (``--no-isolation``; an
isolated build downloads setuptools, which the pre-commit hook test does). The fresh venv is
a real one (``python -m venv``, no system site-packages; this environment's pip installs into
it with ``--python``) and pip resolves gpulint's dependencies for it from a folder of wheels
(``--no-index --find-links``), so the wheel's declared requirements are what is installed,
with nothing borrowed. Those wheels are this environment's installed distributions packed
back into wheels (the files each one's RECORD lists, under the tag its WHEEL file names;
``dependency_wheels`` in tests/conftest.py, made once per run).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from gpulint import __version__
from tests.conftest import (
    ROOT,
    WHEEL_SOURCES,
    copy_repository,
    dependency_closure,
    expectation_list,
)

EXAMPLES = sorted(p for p in (ROOT / "examples").iterdir() if p.suffix == ".yaml")


def _env() -> dict[str, str]:
    """This environment without what would change a build or an install: no PYTHONPATH, no
    pip settings from the machine (its indexes), bytecode on (setuptools warns when off)."""
    drop = ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONHOME", "VIRTUAL_ENV", "NO_COLOR")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@dataclass(frozen=True)
class Built:
    output: str
    wheel: Path
    sdist: Path


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """``python -m build`` of the files a fresh clone has (WHEEL_SOURCES), run elsewhere."""
    base = tmp_path_factory.mktemp("build")
    source = base / "src"
    copy_repository(WHEEL_SOURCES, source)
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(base / "dist"),
         str(source)],
        capture_output=True, text=True, env=_env(), cwd=base, timeout=600, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = (base / "dist").glob("gpulint-*.whl")
    (sdist,) = (base / "dist").glob("gpulint-*.tar.gz")
    return Built(proc.stdout + proc.stderr, wheel, sdist)


def test_the_build_warns_of_nothing(built: Built) -> None:
    assert built.wheel.name == f"gpulint-{__version__}-py3-none-any.whl"
    assert built.sdist.name == f"gpulint-{__version__}.tar.gz"
    noisy = [
        line
        for line in built.output.splitlines()
        if re.search(r"warn|deprecat", line, flags=re.IGNORECASE)
        # the build's listing of the files it copies names them (GPU061's module says
        # "deprecated" in its name), and is no warning
        and not re.match(r"(copying|adding) ", line)
    ]
    assert not noisy, "\n".join(noisy)


def test_twine_check_accepts_the_wheel_and_the_sdist(built: Built) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(built.wheel), str(built.sdist)],
        capture_output=True, text=True, env={**_env(), "NO_COLOR": "1"}, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("PASSED") == 2, proc.stdout


def test_the_sdist_carries_the_data_and_the_license(built: Built) -> None:
    with tarfile.open(built.sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        pkg_info = tar.extractfile(f"gpulint-{__version__}/PKG-INFO")
        assert pkg_info is not None
        info = pkg_info.read().decode("utf-8")
    for folder, patterns in (
        ("rules", ("*.py",)),
        ("gpulint/data", ("*.json",)),
        ("schemas", ("*.json",)),
    ):
        files = [p for pattern in patterns for p in (ROOT / folder).glob(pattern)]
        assert files
        missing = [p.name for p in files if f"{folder}/{p.name}" not in names]
        assert not missing, f"{folder}/ files not in the sdist: {missing}"
    assert {"LICENSE", "README.md", "pyproject.toml"} <= names
    assert "License-Expression: Apache-2.0" in info
    assert "License-File: LICENSE" in info


# -- the wheel alone, in a fresh venv ------------------------------------------------------------


@dataclass(frozen=True)
class Venv:
    root: Path
    bin: Path
    work: Path

    def run(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(a) for a in args], capture_output=True, text=True, env=_env(), cwd=self.work,
            timeout=600,
        )  # fmt: skip


@pytest.fixture(scope="module")
def venv(
    tmp_path_factory: pytest.TempPathFactory, built: Built, dependency_wheels: Path
) -> Iterator[Venv]:
    base = tmp_path_factory.mktemp("fresh")
    root = base / "venv"
    # The interpreter itself, not this environment's venv: nothing of it is seen.
    python = getattr(sys, "_base_executable", sys.executable)
    subprocess.run(
        [python, "-m", "venv", "--without-pip", str(root)], check=True, env=_env(), timeout=300
    )
    bin_dir = root / ("Scripts" if os.name == "nt" else "bin")
    work = base / "work"
    work.mkdir()
    v = Venv(root, bin_dir, work)
    # This environment's pip installs into the venv (--python): the venv needs no pip of its
    # own, and making one (ensurepip) took a third of the module's time.
    proc = v.run(
        sys.executable, "-m", "pip", "--python", bin_dir / "python", "install", "--quiet",
        "--no-index", "--no-compile", "--find-links", dependency_wheels, built.wheel,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    yield v


def test_the_fresh_venv_sees_only_its_own_packages(venv: Venv) -> None:
    proc = venv.run(
        venv.bin / "python", "-c",
        "import json, sys, site, gpulint, importlib.metadata as m; "
        "print(json.dumps({'file': gpulint.__file__, 'path': sys.path, "
        "'system': site.ENABLE_USER_SITE, 'dists': sorted(d.metadata['Name'] for d in "
        "m.distributions())}))",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert Path(data["file"]).is_relative_to(venv.root)
    source = str(ROOT)
    assert not [p for p in data["path"] if p.startswith(source)], data["path"]
    cfg = (venv.root / "pyvenv.cfg").read_text(encoding="utf-8")
    assert "include-system-site-packages = false" in cfg
    declared = {re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower() for d in dependency_closure()}
    got = {re.sub(r"[-_.]+", "-", n).lower() for n in data["dists"]}
    assert got == declared | {"gpulint"}


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_the_installed_wheel_lints_the_examples_as_they_say(venv: Venv, example: Path) -> None:
    copy = venv.work / example.name
    shutil.copyfile(example, copy)
    proc = venv.run(venv.bin / "gpulint", "check", "--isolated", "--format", "json", copy.name)
    expected = expectation_list(example.read_bytes().decode("utf-8", "replace"))
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.returncode == (1 if example.name.startswith("bad-") else 0), proc.stdout
    findings = json.loads(proc.stdout)["findings"]
    got = Counter((f["line"], f["rule"]) for f in findings)
    assert got == Counter((line, code) for line, code, _ in expected)


def test_the_installed_wheel_s_lsp_hint_names_every_way_to_install(venv: Venv) -> None:
    """pygls is not installed in the fresh venv (the lsp extra was not asked for)."""
    proc = venv.run(venv.bin / "gpulint", "lsp")
    assert proc.returncode == 2
    assert "pip install 'gpulint[lsp]'" in proc.stderr
    assert "pip install '.[lsp]'" in proc.stderr
    assert ".whl[lsp]'" in proc.stderr


# -- the VS Code extension -----------------------------------------------------------------------


NPM = shutil.which("npm")


@pytest.mark.skipif(NPM is None, reason="npm is not installed: `make vsix` needs it (Node.js)")
def test_make_vsix_packages_the_extension() -> None:
    package = json.loads((ROOT / "editors" / "vscode" / "package.json").read_text("utf-8"))
    vsix = ROOT / "dist" / f"{package['name']}-{package['version']}.vsix"
    proc = subprocess.run(
        ["make", "--no-print-directory", "vsix"], cwd=ROOT, capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "WARNING" not in proc.stdout + proc.stderr
    assert zipfile.is_zipfile(vsix)
    with zipfile.ZipFile(vsix) as z:
        manifest = z.read("extension.vsixmanifest").decode("utf-8")
        packed = json.loads(z.read("extension/package.json"))
        bundle = z.read("extension/extension.js").decode("utf-8")
        names = set(z.namelist())
    assert f'Id="{package["name"]}"' in manifest
    assert f'Version="{package["version"]}"' in manifest
    assert f'Publisher="{package["publisher"]}"' in manifest
    assert packed["main"] == "./extension.js"
    assert packed["contributes"] == package["contributes"]
    assert "extension/LICENSE.txt" in names
    # One file: vscode-languageclient is bundled in, only VS Code's own `vscode` is required.
    assert not [n for n in names if "node_modules" in n]
    assert 'require("vscode")' in bundle
    assert not re.search(r"require\(\"vscode-", bundle)
