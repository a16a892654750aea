"""MPIJob worker that only sleeps, so the launcher cannot reach it.

## What it does
Flags a `kubeflow.org/v2beta1` MPIJob's `Worker` whose first container sets a `command` or
`args` that only sleeps (`sleep infinity`, `sh -c "sleep infinity"`, `tail -f /dev/null`),
at that `command` (or `args`). A worker that sets neither is fine, and so is one whose
command line does anything else (it may start `sshd` itself, or through a script).
MPIJobs of `kubeflow.org/v1` (the training operator's), whose launcher reaches the workers
through `kubectl exec`, are not judged.

## Why it matters
The MPI operator's launcher starts the ranks on the workers over SSH (Open MPI's `plm_rsh`,
Intel MPI's and MPICH's Hydra bootstrap), and the operator runs `/usr/sbin/sshd -De` in a
worker only when its first container sets no command and no args. A worker told to sleep
runs no SSH server: `mpirun` fails with "ssh: connect to host ... Connection refused", and
the job's GPUs, held by the workers, are never used.

## Example
```yaml
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
spec:
  mpiReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: mpioperator/tensorflow-benchmarks:latest
            command: [sh, -c, "sleep infinity"]   # GPU072
```

## Use instead
```yaml
          containers:
          - name: worker
            image: mpioperator/tensorflow-benchmarks:latest
            # no command: the operator runs /usr/sbin/sshd -De
```

## Options
None.

## References
- kubeflow/mpi-operator `pkg/controller/mpi_job_controller.go` (`newWorker`: "if
  len(container.Command) == 0 && len(container.Args) == 0 { container.Command =
  []string{"/usr/sbin/sshd", "-De"} }"; the launcher's `OMPI_MCA_plm_rsh_args`,
  `I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS`, `HYDRA_LAUNCH_EXTRA_ARGS` for its SSH)
- kubeflow/mpi-operator `examples/v2beta1/pi/pi.yaml` (a worker that sets its command runs
  `/usr/sbin/sshd -De -f /home/mpiuser/.sshd_config` itself)
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpulint.api import (
    SHELL_PROGRAMS,
    PodSpec,
    RuleContext,
    Violation,
    command_words,
    literal_env,
)

CODE = "GPU072"
NAME = "mpi-worker-without-sshd"
SEVERITY = "error"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}

#: What a command line that only waits runs: a shell around it, ``sleep``, ``tail -f
#: /dev/null`` (programs by their base name), and the words between them.
_IDLE_PROGRAMS = SHELL_PROGRAMS | {"sleep", "tail", "true", "wait", "exec"}
_IDLE_WORDS = frozenset({"-c", "infinity", "inf", "-f", "/dev/null", ";", "&&", "||"})
#: A duration ``sleep`` takes (``3600``, ``365d``, ``1.5h``).
_DURATION = r"[0-9]+(?:\.[0-9]+)?[smhd]?"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    root = pod.obj.root
    if root.kind != "MPIJob" or root.group != "kubeflow.org" or not root.version.startswith("v2"):
        return
    if "Worker" not in pod.path:
        return
    workers = [c for c in pod.containers if c.section == "containers"]
    if not workers:
        return
    first = workers[0]
    field = next((f for f in ("command", "args") if first.data.get(f)), None)
    if field is None:
        return  # the operator runs sshd
    words = [w.text for w in command_words(first, literal_env(first))]
    if not words or not any(w.rsplit("/", 1)[-1] in ("sleep", "tail") for w in words):
        return
    if not all(_idle(w) for w in words):
        return  # it does something else, which may start sshd
    yield Violation(
        (*first.path, field),
        f"the MPIJob's worker container {first.label} only sleeps: the MPI operator starts "
        "sshd only in a worker that sets no command or args, so mpirun cannot reach it",
        help="leave the worker's command and args out (the operator runs /usr/sbin/sshd -De), "
        "or start sshd in it",
    )


def _idle(word: str) -> bool:
    return (
        word in _IDLE_WORDS
        or word.rsplit("/", 1)[-1] in _IDLE_PROGRAMS
        or re.fullmatch(_DURATION, word) is not None
    )
