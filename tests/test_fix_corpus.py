"""``--fix --unsafe-fixes`` over every file of the real-world corpus (``GPULINT_CORPUS``), on a
copy: afterwards none of the fixed rules fires, and ``kubectl apply --dry-run=client``
accepts every fixed file it accepted before.

kubectl needs an API server even for a client-side dry run (it maps each kind to its
resource through the server's discovery, and ``apply`` reads the live object): the test
serves the built-in groups' discovery documents, and "not found" for every object, from a
local stub, so it runs offline. Schema validation needs the server's OpenAPI document and is
off (``--validate=false``); what kubectl checks is that each file still decodes and each
object still maps to a resource with a name.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.settings import Settings
from tests.conftest import CORPUS, gpulint_subprocess, needs_corpus
from tests.test_fixes import FIXABLE

pytestmark = needs_corpus

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(
    KUBECTL is None, reason="needs kubectl on PATH (kubectl apply --dry-run=client)"
)


@pytest.fixture(scope="module")
def fixed_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert CORPUS is not None
    copy = tmp_path_factory.mktemp("corpus") / "corpus"
    shutil.copytree(CORPUS, copy)
    # GPU003 is opt-in: it is selected here for its (safe) fix to be applied too.
    proc = gpulint_subprocess(
        "check",
        "--isolated",
        "--extend-select",
        "GPU003",
        "--fix",
        "--unsafe-fixes",
        ".",
        cwd=copy,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    assert re.search(r"^Fixed [1-9]\d* problems\.$", proc.stdout, flags=re.M), proc.stdout
    return copy


def test_no_fixed_rule_fires_after_fix(fixed_copy: Path) -> None:
    linter = Linter(load_rules(), Settings(select=frozenset(FIXABLE)))
    left = [
        f"{f.path}:{f.line}: {f.rule}"
        for path in sorted(fixed_copy.rglob("*"))
        if path.is_file() and path.suffix in (".yaml", ".yml")
        for f in linter.lint_bytes(str(path.relative_to(fixed_copy)), path.read_bytes())
        # What is left must be what no fix was offered for (GPU024's imagePullPolicy in a
        # pod spec belongs to a container: moving it is left to the author).
        if f.suppression is None and f.fix is not None and f.fix.available
    ]
    assert left == []


def test_a_second_fix_changes_nothing(fixed_copy: Path) -> None:
    proc = gpulint_subprocess(
        "check",
        "--isolated",
        "--extend-select",
        "GPU003",
        "--diff",
        "--unsafe-fixes",
        ".",
        cwd=fixed_copy,
    )
    assert proc.stdout == "" and proc.returncode == 0, proc.stdout[:2000]


# -- kubectl -------------------------------------------------------------------------------------

_CORE = {
    "pods": "Pod",
    "services": "Service",
    "configmaps": "ConfigMap",
    "secrets": "Secret",
    "serviceaccounts": "ServiceAccount",
    "namespaces": "Namespace",
    "resourcequotas": "ResourceQuota",
    "limitranges": "LimitRange",
    "replicationcontrollers": "ReplicationController",
    "podtemplates": "PodTemplate",
    "persistentvolumeclaims": "PersistentVolumeClaim",
}
_GROUPS = {
    "apps/v1": {
        "deployments": "Deployment",
        "statefulsets": "StatefulSet",
        "daemonsets": "DaemonSet",
        "replicasets": "ReplicaSet",
    },
    "batch/v1": {"jobs": "Job", "cronjobs": "CronJob"},
}


def _resources(gv: str, kinds: dict[str, str]) -> dict[str, Any]:
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv,
        "resources": [
            {
                "name": name,
                "singularName": "",
                "namespaced": name != "namespaces",
                "kind": kind,
                "verbs": ["create", "get", "list", "patch", "update", "delete"],
            }
            for name, kind in kinds.items()
        ],
    }


class _Discovery(BaseHTTPRequestHandler):
    """The discovery documents of the built-in groups; every object is "not found"."""

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path == "/api":
            self._send(200, {"kind": "APIVersions", "versions": ["v1"]})
        elif path == "/apis":
            groups = [
                {
                    "name": gv.split("/")[0],
                    "versions": [{"groupVersion": gv, "version": "v1"}],
                    "preferredVersion": {"groupVersion": gv, "version": "v1"},
                }
                for gv in _GROUPS
            ]
            self._send(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
        elif path == "/api/v1":
            self._send(200, _resources("v1", _CORE))
        elif path.removeprefix("/apis/") in _GROUPS:
            gv = path.removeprefix("/apis/")
            self._send(200, _resources(gv, _GROUPS[gv]))
        else:
            status = {"kind": "Status", "apiVersion": "v1", "status": "Failure"}
            self._send(404, {**status, "reason": "NotFound", "code": 404})


@pytest.fixture(scope="module")
def kubeconfig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Discovery)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    folder = tmp_path_factory.mktemp("kube")
    config = folder / "config"
    port = server.server_address[1]
    config.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: stub, cluster: {{server: 'http://127.0.0.1:{port}'}}}}]\n"
        "contexts: [{name: stub, context: {cluster: stub, user: stub, namespace: default}}]\n"
        "current-context: stub\nusers: [{name: stub, user: {}}]\n",
        encoding="utf-8",
    )
    try:
        yield config
    finally:
        server.shutdown()
        server.server_close()


def _kubectl(root: Path, kubeconfig: Path, cache: Path) -> tuple[set[str], int]:
    """The files kubectl rejects (relative to ``root``) and the objects it accepts."""
    assert KUBECTL is not None
    proc = subprocess.run(
        [KUBECTL, "apply", "--dry-run=client", "--validate=false", "-o", "name", "-R", "-f", "."],
        cwd=root,
        env={"KUBECONFIG": str(kubeconfig), "HOME": str(cache), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    rejected = set()
    for line in proc.stderr.splitlines():
        named = re.search(r'from "([^"]+)"|error parsing (\S+?):', line)
        if named:
            rejected.add(str(Path(named.group(1) or named.group(2))))
    return rejected, len(proc.stdout.splitlines())


@needs_kubectl
def test_kubectl_accepts_every_fixed_file_it_accepted_before(
    fixed_copy: Path, kubeconfig: Path, tmp_path: Path
) -> None:
    assert CORPUS is not None
    original = tmp_path / "original"
    shutil.copytree(CORPUS, original)
    rejected_before, objects_before = _kubectl(original, kubeconfig, tmp_path)
    rejected_after, objects_after = _kubectl(fixed_copy, kubeconfig, tmp_path)
    files = {
        str(p.relative_to(original))
        for p in original.rglob("*")
        if p.is_file() and p.suffix in (".yaml", ".yml")
    }
    accepted = files - rejected_before
    assert objects_before > 100 and len(accepted) > 50  # the stub serves what the corpus uses
    assert accepted - (files - rejected_after) == set()
    assert objects_after == objects_before
