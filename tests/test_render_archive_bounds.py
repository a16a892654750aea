"""A packaged subchart cannot exhaust gpulint's memory: a 1 MiB ``charts/zbomb.tgz`` whose
first header declares a 1 GiB PAX header is never read when the chart's ``.helmignore``
hides it from helm, and refused with a sentence when it is not, while gpulint runs with a
cap on its address space (``RLIMIT_AS``): reading the header whole needed a gigabyte."""

from __future__ import annotations

import gzip
import json
import os
import resource
import stat
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.externals import helm, needs_helm

#: The address space gpulint may map in these runs (helm, its child, gets its own 4 GiB).
CAP = 768 << 20

CHART = "apiVersion: v2\nname: {name}\nversion: 0.1.0\n"
POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: worker
spec:
  containers:
  - name: main
    image: registry.example/train:1
    resources:
      limits:
        nvidia.com/gpu: 0.5
"""


def _bomb(path: Path, size: int = 1 << 30) -> None:
    """A gzip archive of about 1 MiB: a PAX header declaring ``size`` bytes and that many
    zeros (gzip members of 1 MiB of zeros each, one after the other, as gzip allows)."""
    info = tarfile.TarInfo("././@PaxHeader")
    info.type = tarfile.XHDTYPE
    info.size = size
    zeros = gzip.compress(bytes(1 << 20), 9, mtime=0)
    head = gzip.compress(info.tobuf(tarfile.USTAR_FORMAT), 9, mtime=0)
    path.write_bytes(head + zeros * ((size >> 20) + 1))


def _worker(path: Path) -> None:
    """A packaged subchart (as `helm package` leaves it) whose pod asks for half a GPU."""
    import io

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member, text in (
            ("worker/Chart.yaml", CHART.format(name="worker")),
            ("worker/templates/pod.yaml", POD),
        ):
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buffer.getvalue())


def _chart(tmp_path: Path, helmignore: str | None) -> Path:
    (tmp_path / ".git").mkdir()
    chart = tmp_path / "demo"
    (chart / "charts").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(CHART.format(name="demo"), encoding="utf-8")
    _worker(chart / "charts" / "worker-0.1.0.tgz")
    _bomb(chart / "charts" / "zbomb.tgz")
    assert (chart / "charts" / "zbomb.tgz").stat().st_size < 1.1 * 2**20
    if helmignore is not None:
        (chart / ".helmignore").write_text(helmignore, encoding="utf-8")
    return tmp_path


def _capped() -> None:  # pragma: no cover - runs in the child
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (CAP, hard))


def _check(cwd: Path, helm_path: str) -> tuple[subprocess.CompletedProcess[str], Any]:
    command = ["check", "--format", "json", "--render", "--helm", helm_path, "demo"]
    proc = subprocess.run(
        [str(Path(sys.executable).with_name("gpulint")), *command, "--select", "GPU004,GL200"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_capped,
        check=False,
    )
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr
    return proc, json.loads(proc.stdout)["findings"] if proc.stdout else []


@needs_helm
def test_a_subchart_helmignore_hides_is_never_opened(tmp_path: Path) -> None:
    """helm skips the archive; the finding in the real packaged subchart is mapped into it
    without the bomb being read."""
    cwd = _chart(tmp_path, "# packaged by hand\nzbomb.tgz\n")
    proc, findings = _check(cwd, str(helm()))
    assert proc.returncode == 1, proc.stderr
    [found] = findings
    assert found["rule"] == "GPU004"
    assert found["path"] == "demo/charts/worker-0.1.0.tgz"
    assert "member worker/templates/pod.yaml" in found["message"]


@needs_helm
def test_a_subchart_helm_loads_fails_in_helm_within_the_cap(tmp_path: Path) -> None:
    """Not hidden: helm (whose tar reader refuses a header over 1 MiB) fails the chart,
    GL200, and gpulint reads nothing of it."""
    cwd = _chart(tmp_path, None)
    proc, findings = _check(cwd, str(helm()))
    assert proc.returncode == 1, proc.stderr
    assert [f["rule"] for f in findings] == ["GL200"]


@needs_helm
def test_an_old_helm_s_schema_check_refuses_the_archive_with_a_sentence(tmp_path: Path) -> None:
    """A helm before 3.16 (no --skip-schema-validation: here a stand-in that says so, then
    runs the real helm) has every schema of the chart's archives read first: the archive
    is refused at its header, GL200 saying why, and helm never runs."""
    cwd = _chart(tmp_path, None)
    real = helm()
    old = tmp_path / "old-helm"
    old.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$a" = --skip-schema-validation ] && '
        '{ echo "Error: unknown flag: --skip-schema-validation" >&2; exit 1; }; done\n'
        f': > "{tmp_path}/ran"; exec "{real}" "$@"\n',
        encoding="utf-8",
    )
    old.chmod(old.stat().st_mode | stat.S_IXUSR)
    proc, findings = _check(cwd, str(old))
    assert proc.returncode == 1, proc.stderr
    [found] = findings
    assert found["rule"] == "GL200"
    assert found["message"].startswith(
        "not rendered: demo/charts/zbomb.tgz declares a PAX extended header of 1,073,741,824 "
        "bytes, more than the 1,048,576 helm reads, so it is not read"
    )
    assert not (tmp_path / "ran").exists()
    # Hidden by the .helmignore, it is not read at all: the old helm renders the chart.
    (cwd / "demo" / ".helmignore").write_text("zbomb.tgz\n", encoding="utf-8")
    proc, findings = _check(cwd, str(old))
    assert [f["rule"] for f in findings] == ["GPU004"], proc.stderr
    assert (tmp_path / "ran").exists()


@pytest.mark.parametrize(
    "kind", [tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK, tarfile.XGLTYPE]
)
def test_every_long_header_kind_is_bounded_before_it_is_read(tmp_path: Path, kind: bytes) -> None:
    """GNU long names and links and PAX global headers too: the packaged subchart reader
    refuses them, in a process whose address space could not hold them."""
    path = tmp_path / "x.tgz"
    info = tarfile.TarInfo("././@LongLink")
    info.type = kind
    info.size = 1 << 30
    zeros = gzip.compress(bytes(1 << 20), 9, mtime=0)
    path.write_bytes(gzip.compress(info.tobuf(tarfile.USTAR_FORMAT), mtime=0) + zeros * 1025)
    code = (
        "import sys; from gpulint.render.helm.sources import Archive; "
        f"a = Archive({str(path)!r}); print(a.refused); sys.exit(a.members != {{}})"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_capped,
        check=False,
        env={**os.environ},
    )
    assert proc.returncode == 0, proc.stderr
    assert "of 1,073,741,824 bytes, more than the 1,048,576 helm reads" in proc.stdout
