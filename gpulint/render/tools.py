"""Running a rendering program (``helm``, ``kubectl``, ``kustomize``) on the linted tree.

The program is found by absolute path (:func:`find_tool`: never a program of the linted
tree, never through a relative PATH entry such as ``.``), and runs (:func:`run_tool`):

* in a scrubbed environment: no credentials, no kubeconfig, no plugins, a fresh empty home,
  a PATH that finds nothing (it cannot start ``git`` or any other program by name), git
  switched off (no protocol allowed, ``ssh`` replaced by ``/bin/false``, no system or global
  git configuration) and an unreachable proxy;
* where the kernel allows it, in a network namespace of its own, which holds nothing but a
  loopback interface that is down: nothing it could fetch -- a remote ``$ref``, a
  repository, a loopback service -- is reachable (unprivileged user namespaces may be
  disabled, e.g. by a container's seccomp profile or Ubuntu's AppArmor policy: then the
  proxy above is all there is, which HTTP and HTTPS clients honour and ``file://`` does
  not need);
* with bounds: a wall-clock time limit (``TIMEOUT_SECONDS``, less when the run's render
  budget has less left: :mod:`gpulint.render.target`), as much CPU time, an address-space
  limit (``MAX_MEMORY_BYTES``) and a bound on what it may write (``MAX_OUTPUT_BYTES``).

A chart that loops, allocates without end or writes gigabytes is a finding, never a hung,
swamped or killed run.
"""

from __future__ import annotations

import math
import os
import signal
import subprocess
import tempfile
from collections.abc import Callable
from typing import NamedTuple

#: Seconds a rendering program may run.
TIMEOUT_SECONDS = 60.0
#: Bytes a rendering program may write to its output (the API server takes objects of at
#: most 3 MiB; a chart's whole output is rarely above a few).
MAX_OUTPUT_BYTES = 64 << 20
#: Bytes of its error output kept for a message.
MAX_ERROR_BYTES = 64 << 10
#: Bytes of address space a rendering program may map (RLIMIT_AS). Go programs reserve
#: address space before they allocate anything: measured, helm 3.17 and 4.1 need 768 MiB to
#: render a small chart (512 fail with "failed to reserve page summary memory"), kubectl
#: 1.32's kustomize 1 GiB. 4 GiB leaves some 3 GiB of heap, hundreds of times what a large
#: chart needs, and stops a template that doubles a string 40 times long before the machine
#: runs out.
MAX_MEMORY_BYTES = 4 << 30

#: Every network request the program could make goes to this proxy, which refuses it.
_NOWHERE = "http://127.0.0.1:9"
#: A PATH that finds no program: ``/dev/null`` is not a folder.
_NO_PATH = os.devnull
#: unshare(2) flags: a user namespace (so that no privilege is needed) and a network one.
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000


#: A chart or overlay reached once the run's render budget (``--render-timeout``) is spent.
BUDGET_SPENT = (
    "not rendered: the run's render budget is spent (the charts and overlays before it used "
    "it up); raise it with --render-timeout SECONDS"
)


def time_left(deadline: float | None) -> float | None:
    """Seconds the next program may run: ``TIMEOUT_SECONDS``, or less when the run's render
    budget ends at ``deadline`` (``time.monotonic()``) before that; None once it is spent."""
    if deadline is None:
        return TIMEOUT_SECONDS
    import time

    left = deadline - time.monotonic()
    return min(TIMEOUT_SECONDS, left) if left > 0 else None


class ToolResult(NamedTuple):
    """What a program did: its exit status (None when it was stopped), output, errors."""

    returncode: int | None
    stdout: str
    stderr: str
    reason: str | None = None  # why it was stopped: time, CPU, memory or too much output


def find_tool(explicit: str | None, names: tuple[str, ...], tree: str | None = None) -> str | None:
    """The program to run, as an absolute path: ``explicit`` (a path the user gave on the
    command line: their choice, wherever it is) or the first of ``names`` on PATH.

    A PATH lookup (also of an ``explicit`` name without a folder, ``--helm helm``) skips
    relative entries (``.``, an empty entry: the working directory, which may be the linted
    tree) and any program that resolves inside ``tree`` (the linted repository): a pull
    request's ``chart/helm`` never stands in for the real one.
    """
    if explicit and os.sep in explicit:
        if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
            return os.path.abspath(explicit)
        return None
    for name in (explicit,) if explicit else names:
        found = _on_path(name, tree)
        if found:
            return found
    return None


def _on_path(name: str, tree: str | None) -> str | None:
    root = os.path.realpath(tree) if tree else None
    for entry in os.environ.get("PATH", os.defpath).split(os.pathsep):
        if not os.path.isabs(entry):
            continue
        path = os.path.join(entry, name)
        if not (os.path.isfile(path) and os.access(path, os.X_OK)):
            continue
        real = os.path.realpath(path)
        if root is not None and (real == root or real.startswith(root.rstrip(os.sep) + os.sep)):
            continue
        return os.path.normpath(path)
    return None


def scrubbed_env(home: str) -> dict[str, str]:
    """The environment a rendering program gets: nothing of the user's but a locale."""
    env = {
        "PATH": _NO_PATH,
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
        # git, should anything start it: no protocol is allowed ("none" is none of them),
        # ssh is a program that fails, no configuration but the repository's own.
        "GIT_ALLOW_PROTOCOL": "none",
        "GIT_SSH": "/bin/false",
        "GIT_SSH_COMMAND": "/bin/false",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
    }
    return env


def _unshare() -> Callable[[int], int] | None:
    """libc's unshare(2), looked up in this process (the child only calls it), or None."""
    if not hasattr(os, "uname") or os.uname().sysname != "Linux":
        return None
    try:
        import ctypes

        unshare: Callable[[int], int] = ctypes.CDLL(None, use_errno=True).unshare
        return unshare
    except (OSError, AttributeError):  # no libc unshare: a static or unusual build
        return None


def _child_setup(cpu_seconds: int) -> Callable[[], None]:
    """What the child does between fork and exec: its limits, then its own network."""
    import resource

    unshare = _unshare()
    limits = (
        (resource.RLIMIT_FSIZE, MAX_OUTPUT_BYTES, MAX_OUTPUT_BYTES),
        (resource.RLIMIT_AS, MAX_MEMORY_BYTES, MAX_MEMORY_BYTES),
        # SIGXCPU at the soft limit (Go programs ignore it), SIGKILL a second later.
        (resource.RLIMIT_CPU, cpu_seconds, cpu_seconds + 1),
    )

    def setup() -> None:  # pragma: no cover - runs in the child, between fork and exec
        for which, soft, hard in limits:
            _, held = resource.getrlimit(which)
            if held != resource.RLIM_INFINITY:  # never above what this process may have
                soft, hard = min(soft, held), min(hard, held)
            resource.setrlimit(which, (soft, hard))
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        if unshare is not None:
            # Fails (-1) where unprivileged user namespaces are off: the proxy remains.
            unshare(_CLONE_NEWUSER | _CLONE_NEWNET)

    return setup


def _out_of_memory(stderr: str) -> bool:
    # Go: "fatal error: runtime: out of memory"; C programs: ENOMEM's "Cannot allocate memory".
    head = stderr[:4096].lower()
    return "out of memory" in head or "cannot allocate memory" in head


def run_tool(argv: list[str], cwd: str, timeout: float = TIMEOUT_SECONDS) -> ToolResult:
    """Run ``argv`` in ``cwd`` (never through a shell) with the bounds above: ``timeout``
    seconds of wall-clock time and as many of CPU time.

    Output goes to unlinked temporary files whose size the kernel bounds (RLIMIT_FSIZE):
    a program that writes more is stopped by SIGXFSZ, and its run is reported as too large.
    """
    cpu_seconds = max(1, math.ceil(timeout))
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
                preexec_fn=_child_setup(cpu_seconds) if os.name == "posix" else None,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            return ToolResult(None, "", "", f"cannot run {argv[0]}: {why}")
        reason = None
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            reason = f"stopped after {round(timeout, 1):g} seconds"
            if timeout < TIMEOUT_SECONDS:
                reason += ", what was left of the run's render budget (--render-timeout)"
        finally:
            if proc.returncode is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    proc.kill()
                proc.wait()
        out.seek(0)
        stdout = out.read(MAX_OUTPUT_BYTES).decode("utf-8", "replace")
        err.seek(0)
        stderr = err.read(MAX_ERROR_BYTES).decode("utf-8", "replace")
    if reason is None:
        reason = _stopped(proc.returncode, cpu_seconds, stderr)
    return ToolResult(None if reason else proc.returncode, stdout, stderr, reason)


def _stopped(returncode: int, cpu_seconds: int, stderr: str) -> str | None:
    """Why a program that exited was stopped by one of its limits, if it was."""
    if returncode == -signal.SIGXFSZ:
        return f"stopped: it wrote more than {MAX_OUTPUT_BYTES >> 20} MiB"
    if returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return f"stopped after {cpu_seconds} seconds of CPU time"
    if returncode != 0 and _out_of_memory(stderr):
        return f"stopped: it needed more than {MAX_MEMORY_BYTES / (1 << 30):g} GiB of memory"
    return None
