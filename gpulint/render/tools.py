"""Running a rendering program (``helm``, ``kubectl``, ``kustomize``) on the linted tree.

The program gets a scrubbed environment (no credentials, no kubeconfig, no plugins, no proxy
but an unreachable one, so that nothing it could fetch is fetched), a fresh empty home, a
time limit and a bound on what it may write: a chart that loops or writes gigabytes is a
finding, never a hung or swamped run.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from typing import NamedTuple

#: Seconds a rendering program may run.
TIMEOUT_SECONDS = 60.0
#: Bytes a rendering program may write to its output (the API server takes objects of at
#: most 3 MiB; a chart's whole output is rarely above a few).
MAX_OUTPUT_BYTES = 64 << 20
#: Bytes of its error output kept for a message.
MAX_ERROR_BYTES = 64 << 10

#: Every network request the program could make goes to this proxy, which refuses it.
_NOWHERE = "http://127.0.0.1:9"


class ToolResult(NamedTuple):
    """What a program did: its exit status (None when it was stopped), output, errors."""

    returncode: int | None
    stdout: str
    stderr: str
    reason: str | None = None  # why it was stopped: a timeout or too much output


def find_tool(explicit: str | None, names: tuple[str, ...]) -> str | None:
    """The program to run: ``explicit`` (a path the user gave) or the first of ``names`` on
    PATH."""
    if explicit:
        found = shutil.which(explicit) if os.sep not in explicit else explicit
        if found and os.path.isfile(found) and os.access(found, os.X_OK):
            return os.path.abspath(found)
        return None
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


def scrubbed_env(home: str) -> dict[str, str]:
    """The environment a rendering program gets: nothing of the user's but a locale."""
    env = {
        "PATH": os.pathsep.join(p for p in ("/usr/local/bin", "/usr/bin", "/bin")),
        "HOME": home,
        "XDG_CACHE_HOME": os.path.join(home, "cache"),
        "XDG_CONFIG_HOME": os.path.join(home, "config"),
        "XDG_DATA_HOME": os.path.join(home, "data"),
        "HELM_PLUGINS": os.path.join(home, "plugins"),
        "HELM_REGISTRY_CONFIG": os.path.join(home, "registry.json"),
        "HELM_REPOSITORY_CONFIG": os.path.join(home, "repositories.yaml"),
        "HELM_REPOSITORY_CACHE": os.path.join(home, "repository"),
        "KUBECONFIG": os.devnull,
        "HTTP_PROXY": _NOWHERE,
        "HTTPS_PROXY": _NOWHERE,
        "http_proxy": _NOWHERE,
        "https_proxy": _NOWHERE,
        "NO_PROXY": "",
        "no_proxy": "",
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
    }
    return env


def _limit_output() -> None:  # pragma: no cover - runs in the child, between fork and exec
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_OUTPUT_BYTES, MAX_OUTPUT_BYTES))
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)


def run_tool(argv: list[str], cwd: str, timeout: float = TIMEOUT_SECONDS) -> ToolResult:
    """Run ``argv`` in ``cwd`` (never through a shell) with the bounds above.

    Output goes to unlinked temporary files whose size the kernel bounds (RLIMIT_FSIZE):
    a program that writes more is stopped by SIGXFSZ, and its run is reported as too large.
    """
    with (
        tempfile.TemporaryDirectory(prefix="gpulint-render-") as home,
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
    ):
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=scrubbed_env(home),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                preexec_fn=_limit_output if os.name == "posix" else None,
            )
        except OSError as exc:
            return ToolResult(None, "", "", f"cannot run {argv[0]}: {exc.strerror or exc}")
        reason = None
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            reason = f"stopped after {timeout:g} seconds"
        finally:
            if proc.returncode is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    proc.kill()
                proc.wait()
        if reason is None and proc.returncode == -signal.SIGXFSZ:
            reason = f"stopped: it wrote more than {MAX_OUTPUT_BYTES >> 20} MiB"
        out.seek(0)
        stdout = out.read(MAX_OUTPUT_BYTES).decode("utf-8", "replace")
        err.seek(0)
        stderr = err.read(MAX_ERROR_BYTES).decode("utf-8", "replace")
    return ToolResult(None if reason else proc.returncode, stdout, stderr, reason)
