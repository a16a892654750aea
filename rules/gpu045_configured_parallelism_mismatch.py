"""A trainer's or operator's parallelism configuration that does not fit the devices.

## What it does
Compares the parallelism a workload sets outside an engine's command-line flags with the
devices its pods get:

- **Kthena ModelBooster** (`workload.serving.volcano.sh`): each worker of a `vLLM` or
  `vLLMDisaggregated` backend carries vLLM's options in its `config` mapping, which the
  controller turns into the engine's command line. `tensor-parallel-size` times
  `pipeline-parallel-size` is compared with the whole devices of the worker's `resources`
  times its `pods` (a worker of several pods spans them; a worker that leaves `pods` out is
  not checked, the controller's default decides). More than that is an **error**:
  vLLM stops at start-up. Finding at the `tensor-parallel-size` value.
- **MaxText on Cloud TPU** (a Job, or a JobSet's replicated Job, that runs `MaxText/train.py`
  or `MaxText.train` with `ici_*_parallelism=N` and `dcn_*_parallelism=N` arguments): the
  product of the ICI axes given must divide the JAX devices of one slice -- the chips of
  the pod's `cloud.google.com/gke-tpu-topology` times the devices per chip of its
  `cloud.google.com/gke-tpu-accelerator` (as GPU041 counts them) -- and the product of the
  DCN axes the number of slices (the replicated Job's `replicas`, written in the object).
  An ICI product that does not divide the slice is an **error**: MaxText's mesh cannot be
  built and the job fails at start. A DCN product that does not divide the slices is an
  **error** on several slices; on one slice it is a **warning**, since MaxText releases
  differ there (older ones fail, newer ones build a single-slice mesh and leave the DCN axes
  unused). Axes not given (or `-1`) are filled by MaxText, so only the given ones are
  compared, and a run that sets `num_slices` itself is not checked.

- **A multi-host Cloud TPU slice** (a Job, or a JobSet's replicated Job, whose pods select a
  `cloud.google.com/gke-tpu-accelerator` and a `cloud.google.com/gke-tpu-topology`): each pod
  takes every chip of its host (the `google.com/tpu` it requests), so the slice has as many
  hosts as its chips divided by that request, and the Job must run one pod per host. A
  `parallelism` (default 1) or a written `completions` that differs is a **warning**: with
  fewer pods the slice never starts (the TPU runtime waits for every host), with more the
  others stay Pending. A slice of one host is not judged.

- **A Kubeflow PyTorchJob's torchrun** (`torchrun`, `python -m torch.distributed.run`) told a
  fixed number of nodes, `--nnodes=N`, other than the job's pods (its replica types'
  `replicas`, each 1 when left out): torchrun's rendezvous waits for N nodes, so with fewer
  pods the job never starts and with more the others fail to join. A **warning**; `info` for
  an elastic job (`elasticPolicy`), whose pods may be scaled. A range (`--nnodes=1:4`), a
  variable, or no `--nnodes` (the operator sets `PET_NNODES`) is not judged. The command
  line is read as GPU041 reads an engine's (a shell script split into words, the launcher's
  own options up to the script it starts); the finding is at the item that sets the option.

- **An Open MPI MPIJob's launcher** (kubeflow.org `MPIJob`, `mpiImplementation` left out or
  `OpenMPI`) whose `mpirun -np N` (`-n`, `--np`, `-c`) asks for more processes than the
  hostfile the MPI operator writes has slots: the `Worker`'s `replicas` times
  `slotsPerWorker` (1 when left out). An **error**: Open MPI refuses to start ("There are
  not enough slots available in the system to satisfy the N slots that were requested").
  Not judged when the launcher is also a worker (`runLauncherAsWorker`), when `mpirun`
  names its hosts or hostfile (`-H`, `--hostfile`, ...), allows oversubscription
  (`--oversubscribe`, a `--map-by` with `:OVERSUBSCRIBE` or `ppr:`, an
  `OMPI_MCA_rmaps_base_*` variable) or places by count (`-npernode`), or when the
  replicas are not written.

Values a template or variable leaves open are not read. The rule reads only what the object
writes, so it also runs on a Kustomize patch: a JobSet without `replicas` on its replicated
Job says nothing about its slices and is not checked.

## Why it matters
vLLM starts one worker per device of its tensor-parallel times pipeline-parallel group and
stops when fewer are visible; the operator's pods crash-loop although they were scheduled.
MaxText builds its device mesh from the `ici_*` (within a slice) and `dcn_*` (across slices)
axes and asserts that their products match the devices per slice and the slices; a mismatch
stops the job before the first step, after the TPU slices were provisioned.

## Example
```yaml
workers:
- type: prefill
  pods: 1
  config:
    tensor-parallel-size: 16   # GPU045
  resources:
    limits:
      nvidia.com/gpu: "2"
```

## Use instead
```yaml
  config:
    tensor-parallel-size: 2
  resources:
    limits:
      nvidia.com/gpu: "2"
```

## Options
None.

## References
- volcano-sh/kthena `pkg/model-booster-controller/convert` (the ModelBooster's `backend.type`
  and each worker's `config`, `resources` and `pods` become a ModelServing's vLLM pods)
- AI-Hypercomputer/maxtext `MaxText/max_utils.py` (`create_device_mesh`,
  `fill_unspecified_mesh_axes`: "Number of devices per slice ... does not match the product of
  the ICI parallelism")
- https://cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus (topology and
  accelerator node labels); GPU041 for the same comparison on engines' command lines
- kubeflow/mpi-operator `pkg/controller/mpi_job_controller.go` (`newConfigMap`: the
  hostfile, one line per worker with `slots=` its `slotsPerWorker`, 1 when unset, and the
  launcher's line only with `runLauncherAsWorker`); Open MPI mpirun(1), "Specifying Host Nodes"
  and "--oversubscribe" (https://docs.open-mpi.org/en/main/man-openmpi/man1/mpirun.1.html)
- https://pytorch.org/docs/stable/elastic/run.html (`--nnodes`: "Number of nodes, or the
  range of nodes in form <minimum_nodes>:<maximum_nodes>"; options also read from `PET_`
  variables, which kubeflow/training-operator sets for a PyTorchJob)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    TPU_ACCELERATOR,
    TPU_DEVICES_PER_CHIP,
    K8sObject,
    RuleContext,
    Violation,
    command_words,
    find_engine,
    flag_text,
    flag_value,
    has_flag,
    literal_env,
    tpu_topology_chips,
)

CODE = "GPU045"
NAME = "configured-parallelism-mismatch"
SEVERITY = "error"
SCOPE = "object"

#: Kthena's ModelBooster API group and the backend types whose workers run vLLM
#: (volcano-sh/kthena pkg/apis/workload/v1alpha1: ModelBackendTypeVLLM, ...VLLMDisaggregated).
KTHENA_GROUP = "workload.serving.volcano.sh"
VLLM_BACKENDS = frozenset({"vLLM", "vLLMDisaggregated"})
#: vLLM's options that multiply into the devices one engine uses.
VLLM_FACTORS = ("tensor-parallel-size", "pipeline-parallel-size")
#: A MaxText training or decoding entry point, as a command word.
_MAXTEXT = r"(?:^|/)MaxText/(?:train|decode)\.py$|^MaxText\.(?:train|decode)$"
#: A MaxText mesh axis given on the command line: ``ici_fsdp_parallelism=8``.
_AXIS = r"^(ici|dcn)_[a-z_]+_parallelism=(-?[0-9]{1,6})$"
TOPOLOGY = "cloud.google.com/gke-tpu-topology"
#: The resource a Cloud TPU pod requests its chips by.
TPU = "google.com/tpu"
JOBSET_GROUP = "jobset.x-k8s.io"
KUBEFLOW_GROUP = "kubeflow.org"
#: torchrun's option for the number of nodes (a number, or a range ``MIN:MAX``).
NNODES = ("--nnodes",)
#: mpirun's options for the number of processes (Open MPI's mpirun(1)).
MPIRUN_NP = ("-np", "-n", "--np", "-c")
#: mpirun's mapping option: ``slot`` or ``node`` keeps to the slots, ``ppr:N:node`` and the
#: ``:OVERSUBSCRIBE`` modifier do not.
MPIRUN_MAP_BY = ("--map-by", "-map-by")
#: mpirun's options that place processes other than by the hostfile's slots.
MPIRUN_PLACES = (
    "-H", "-host", "--host", "-hostfile", "--hostfile", "-machinefile", "--machinefile",
    "--default-hostfile", "-oversubscribe", "--oversubscribe", "-npernode", "--npernode",
    "-npersocket", "--npersocket", "--use-hwthread-cpus",
)  # fmt: skip


def check(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    if obj.kind == "ModelBooster" and obj.group == KTHENA_GROUP:
        yield from _booster(obj, ctx)
    elif obj.kind == "JobSet" and obj.group == JOBSET_GROUP:
        spec = obj.data.get("spec")
        jobs = spec.get("replicatedJobs") if isinstance(spec, dict) else None
        for i, job in enumerate(jobs if isinstance(jobs, list) else ()):
            template = job.get("template") if isinstance(job, dict) else None
            jobspec = template.get("spec") if isinstance(template, dict) else None
            yield from _hosts(jobspec, ("spec", "replicatedJobs", i, "template", "spec"))
            slices = job.get("replicas") if isinstance(job, dict) else None
            if isinstance(slices, int) and not isinstance(slices, bool) and slices >= 1:
                path = ("spec", "replicatedJobs", i, "template", "spec", "template", "spec")
                plural = "s" if slices != 1 else ""
                runs = f"the JobSet runs {slices} slice{plural} (replicas: {slices})"
                yield from _maxtext(_pod(jobspec), path, slices, runs)
    elif obj.kind == "PyTorchJob" and obj.group == KUBEFLOW_GROUP:
        yield from _torchrun_nodes(obj, ctx)
    elif obj.kind == "MPIJob" and obj.group == KUBEFLOW_GROUP:
        yield from _mpi_slots(obj, ctx)
    elif obj.kind == "Job" and obj.group == "batch":
        where = ("spec", "template", "spec")
        yield from _maxtext(_pod(obj.data.get("spec")), where, 1, "a Job runs 1 slice")
        yield from _hosts(obj.data.get("spec"), ("spec",))


def _hosts(jobspec: Any, at: tuple[Any, ...]) -> Iterator[Violation]:
    """A Job (or a JobSet's replicated Job) on a multi-host TPU slice must run one pod per
    host of the slice: the chips of its ``gke-tpu-topology`` divided by the ``google.com/tpu``
    each pod requests (a pod takes every chip of its host). Its ``parallelism`` (default 1)
    and, when written, ``completions`` are compared with that."""
    pod = _pod(jobspec)
    if pod is None or not isinstance(jobspec, dict):
        return
    selector = pod.get("nodeSelector")
    if not isinstance(selector, dict):
        return
    accelerator = selector.get(TPU_ACCELERATOR)
    chips = tpu_topology_chips(selector.get(TOPOLOGY))
    if not isinstance(accelerator, str) or chips is None:
        return
    per_pod = 0
    containers = pod.get("containers")
    for container in containers if isinstance(containers, list) else ():
        resources = container.get("resources") if isinstance(container, dict) else None
        limits = resources.get("limits") if isinstance(resources, dict) else None
        count = _number(limits.get(TPU)) if isinstance(limits, dict) else None
        per_pod += count or 0
    if per_pod < 1 or chips <= per_pod or chips % per_pod:
        return  # one host, or chips a pod's request does not divide (another rule's)
    hosts = chips // per_pod
    for field, default in (("parallelism", 1), ("completions", None)):
        written = jobspec.get(field, default)
        value = _number(written) if written is not None else None
        if value is None or value == hosts:
            continue
        where = (*at, field) if field in jobspec else (*at, "template", "spec", "nodeSelector")
        yield Violation(
            where,
            f"the {accelerator} slice {selector.get(TOPOLOGY)} has {chips} chips, {hosts} hosts "
            f"of the {per_pod} each pod requests, but the Job's {field} is {value}",
            help=f"run one pod per host: {field}: {hosts} (with fewer the slice never starts, "
            "with more the rest stay Pending)",
            at="value" if field in jobspec else "key",
            severity="warning",
        )


def _torchrun_nodes(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    """A Kubeflow PyTorchJob whose containers start torchrun with a fixed ``--nnodes`` other
    than the number of its pods (its replica types' ``replicas``, each 1 when left out):
    torchrun's rendezvous waits for that many nodes."""
    spec = obj.data.get("spec")
    kinds = spec.get("pytorchReplicaSpecs") if isinstance(spec, dict) else None
    if not isinstance(kinds, dict) or not kinds:
        return
    pods = 0
    for replica in kinds.values():
        count = replica.get("replicas") if isinstance(replica, dict) else None
        number = 1 if count is None else _number(count)
        if number is None:
            return  # a value a template fills in
        pods += number
    elastic = isinstance(spec, dict) and "elasticPolicy" in spec
    for pod in ctx.pod_specs(obj):
        for container in pod.containers:
            # The launcher's own options, as GPU041 reads --nproc-per-node: a range
            # (``1:4``) or a variable is no number and is not judged.
            started = find_engine(container, command_words(container, literal_env(container)))
            if started is None or started.engine.name != "torchrun":
                continue
            given = flag_value(started.own, NNODES)
            if given is None or given[0] is None or given[0] == pods:
                continue
            nodes, path = given
            yield Violation(
                path,
                f"torchrun waits for {nodes} nodes (--nnodes), but this PyTorchJob "
                f"runs {pods} pod{'s' if pods != 1 else ''}"
                + (" (assumed: its elastic policy keeps them)" if elastic else ""),
                help=f"write --nnodes={pods}, or leave it out: the training operator "
                "tells torchrun the number of nodes (PET_NNODES)",
                at="value",
                severity="info" if elastic else "warning",
            )


def _mpi_slots(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    """An Open MPI MPIJob whose launcher's ``mpirun -np N`` asks for more processes than
    the hostfile the operator writes has slots: ``Worker.replicas`` times
    ``slotsPerWorker`` (1 when left out)."""
    spec = obj.data.get("spec")
    if not isinstance(spec, dict) or spec.get("runLauncherAsWorker") is True:
        return
    if spec.get("mpiImplementation", "OpenMPI") != "OpenMPI":
        return  # Intel MPI's and MPICH's launchers place extra processes anyway
    kinds = spec.get("mpiReplicaSpecs")
    worker = kinds.get("Worker") if isinstance(kinds, dict) else None
    replicas = _number(worker.get("replicas")) if isinstance(worker, dict) else None
    per_worker = _number(spec.get("slotsPerWorker", 1))
    if replicas is None or per_worker is None or per_worker < 1:
        return  # no workers written, or values a template fills in
    slots = replicas * per_worker
    for pod in ctx.pod_specs(obj):
        if "Launcher" not in pod.path:
            continue
        for container in pod.containers:
            env = literal_env(container)
            if any(name.startswith("OMPI_MCA_rmaps_base_") for name in env):
                continue  # the mapping policy is set (oversubscription allowed, ...)
            started = find_engine(container, command_words(container, env))
            if started is None or started.engine.name != "mpirun":
                continue
            mapping = flag_text(started.own, MPIRUN_MAP_BY)
            if has_flag(started.own, MPIRUN_PLACES) or (
                mapping is not None and re.search(r"(?i)oversubscribe|ppr", mapping[0])
            ):
                continue  # hosts, a hostfile or a placement of its own
            given = flag_value(started.own, MPIRUN_NP)
            if given is None or given[0] is None or given[0] <= slots:
                continue
            processes, path = given
            plural = "s" if replicas != 1 else ""
            yield Violation(
                path,
                f"mpirun starts {processes} processes, but the MPIJob's hostfile has {slots} "
                f"slot{'s' if slots != 1 else ''} ({replicas} worker{plural} of "
                f"slotsPerWorker {per_worker}): Open MPI refuses to start",
                help=f"run at most {slots} process{'es' if slots != 1 else ''}, or raise "
                "the Worker replicas or "
                'slotsPerWorker (Open MPI: "There are not enough slots available")',
                at="value",
            )


def _pod(spec: Any) -> dict[str, Any] | None:
    template = spec.get("template") if isinstance(spec, dict) else None
    pod = template.get("spec") if isinstance(template, dict) else None
    return pod if isinstance(pod, dict) else None


def _number(value: Any) -> int | None:
    """A whole number written as one (``16``, ``"16"``); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 6:
        return int(value.strip())
    return None


def _booster(obj: K8sObject, ctx: RuleContext) -> Iterator[Violation]:
    spec = obj.data.get("spec")
    backend = spec.get("backend") if isinstance(spec, dict) else None
    if not isinstance(backend, dict) or backend.get("type") not in VLLM_BACKENDS:
        return
    workers = backend.get("workers")
    for i, worker in enumerate(workers if isinstance(workers, list) else ()):
        if not isinstance(worker, dict) or not isinstance(worker.get("config"), dict):
            continue
        config = worker["config"]
        factors = [(k, _number(config.get(k))) for k in VLLM_FACTORS if k in config]
        if not factors or any(v is None or v < 1 for _, v in factors):
            continue
        devices = _devices(worker.get("resources"), ctx)
        pods = _number(worker.get("pods"))  # left out: the controller's default decides
        if devices is None or pods is None or pods < 1:
            continue
        count, name = devices
        total = 1
        for _, value in factors:
            total *= value or 1
        have = count * pods
        if total <= have:
            continue
        size = " times ".join(f"{k} {v}" for k, v in factors)
        spread = f" on each of {pods} pods" if pods > 1 else ""
        key = factors[0][0]
        yield Violation(
            ("spec", "backend", "workers", i, "config", key),
            f"worker {worker.get('type', i)} runs vLLM with {size} = {total} devices, but "
            f"requests {count} {name}{spread}: vLLM fails at start-up; request {total}, or "
            f"lower the parallelism to {have}",
            at="value",
        )


def _devices(resources: Any, ctx: RuleContext) -> tuple[int, str] | None:
    """The whole devices a worker's ``resources`` ask for (limits, else requests) and the
    resource's name; None for none, a share or several kinds."""
    if not isinstance(resources, dict):
        return None
    found: dict[str, int] = {}
    for section in ("limits", "requests"):
        values = resources.get(section)
        if not isinstance(values, dict):
            continue
        for name, value in values.items():
            entry = ctx.registry.get(name) if isinstance(name, str) else None
            if entry is None or not entry.whole_devices or name in found:
                continue
            count = _number(value)
            if count is None:
                return None
            found[name] = count
    if len(found) != 1:
        return None
    ((name, count),) = found.items()
    return (count, name) if count >= 1 else None


def _maxtext(
    pod: dict[str, Any] | None, path: tuple[Any, ...], slices: int, owner: str
) -> Iterator[Violation]:
    if pod is None:
        return
    selector = pod.get("nodeSelector")
    if not isinstance(selector, dict):
        return
    per_chip = TPU_DEVICES_PER_CHIP.get(str(selector.get(TPU_ACCELERATOR)))
    chips = tpu_topology_chips(selector.get(TOPOLOGY))
    if per_chip is None or chips is None:
        return
    per_slice = chips * per_chip
    containers = pod.get("containers")
    for c, container in enumerate(containers if isinstance(containers, list) else ()):
        if not isinstance(container, dict):
            continue
        axes = _axes(container)
        if axes is None:
            continue
        for kind, target, what in (
            ("ici", per_slice, "devices per slice"),
            ("dcn", slices, "slices"),
        ):
            given = [(name, value, at) for k, name, value, at in axes if k == kind and value > 0]
            product = 1
            for _, value, _ in given:
                product *= value
            if not given or target % product == 0:
                continue
            at = max(given, key=lambda g: g[1])[2]
            shown = " times ".join(f"{n} {v}" for n, v, _ in given)
            if kind == "ici":
                basis = (
                    f"one slice ({selector.get(TPU_ACCELERATOR)} {selector.get(TOPOLOGY)}) has "
                    f"{per_slice} devices"
                )
                severity = None
            else:
                basis = owner
                severity = None if slices > 1 else "warning"
            effect = (
                "the mesh cannot be built and the job fails at start"
                if severity is None
                else "older MaxText releases fail to build the mesh, newer ones leave the "
                "DCN axes unused"
            )
            yield Violation(
                (*path, "containers", c, *at),
                f"MaxText's mesh asks {shown} = {product} {what}, but {basis}",
                help=f"make the {kind}_* product divide {target} (else {effect})",
                at="value",
                severity=severity,
            )


def _axes(container: dict[str, Any]) -> list[tuple[str, str, int, tuple[Any, ...]]] | None:
    """The mesh axes a MaxText command line gives, each with its place (``command`` or
    ``args`` item); None when the container runs no MaxText or sets ``num_slices``."""
    items: list[tuple[tuple[Any, ...], str]] = []
    for key in ("command", "args"):
        values = container.get(key)
        if isinstance(values, list):
            items.extend(((key, i), v) for i, v in enumerate(values) if isinstance(v, str))
    started = False
    axes: list[tuple[str, str, int, tuple[Any, ...]]] = []
    for at, text in items:
        for word in text[:65536].split():
            if not started:
                started = re.search(_MAXTEXT, word) is not None
                continue
            if word.startswith("num_slices="):
                return None
            match = re.match(_AXIS, word)
            if match is not None:
                axes.append((match.group(1), word.partition("=")[0], int(match.group(2)), at))
    return axes if started else None
