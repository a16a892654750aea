"""Multi-GPU training or inference pod without a memory-backed /dev/shm.

## What it does
Flags a training container, or one that starts a multi-process inference engine, that
holds two or more whole GPUs but does not mount a
memory-backed volume at `/dev/shm` (an `emptyDir` with `medium: Memory`, or
the host's `/dev/shm` through `hostPath`). A pod with `hostIPC: true` uses the node's
`/dev/shm` and is not flagged, nor a KubeRay pod (`RayCluster`, `RayService`, `RayJob`,
AIBrix's `RayClusterFleet`): KubeRay mounts a memory-backed `/dev/shm` itself, nor a KServe
`LLMInferenceService`, whose default template (merged into every one) mounts one — a kind
whose workload row says `mounts_shm` (docs/workloads.md; a configuration's rows may too). A
mount at `/dev/shm` of a disk-backed volume is reported with its own message. Whole GPUs a
container gets through DRA claims (`resources.claims`, exact counts of a class such as
`gpu.nvidia.com`; the claim or template in any file of the project) count as its requested
ones do, and the finding names where each claim is defined as a related location. A
container an operator's resource holds in a field of its own (a KServe predictor's `model`)
counts as a pod's container; when the predictor takes its container from a serving runtime
(KServe merges the runtime's container and volumes into the pod), the runtime of that name
that the project defines (in any of its files) is read: one that mounts a memory-backed
`/dev/shm` is enough, and one that mounts it on disk is reported. When the project does not
define it, the finding assumes the runtime mounts no `/dev/shm` either, and says so.

A pod is a training pod when its object is a training operator's kind (Kubeflow
`PyTorchJob`, `TFJob`, `MPIJob`, `TrainJob` and its runtimes, ...) or a GPU container
starts a distributed launcher (`torchrun`, `torch.distributed.run`, `deepspeed`,
`accelerate launch`, `horovodrun`, `--nproc-per-node`, or LLaMA-Factory's
`FORCE_TORCHRUN=1`, in its command line or as a variable, which makes `llamafactory-cli
train` start torchrun over every GPU). A plain `Job` without a launcher is
not taken for training: it may build an engine, burn in GPUs or run a benchmark. A pod is
also flagged when a GPU container starts any engine or launcher of `gpulint/data/engines.json`
(vLLM, SGLang, TGI, LMDeploy, TensorRT-LLM, DeepSpeed, Ray, `mpirun`, ..., the table GPU041
reads) with more than one process, or with a number of processes its command line does not
fix (`deepspeed` without `--num_gpus` starts one per GPU): vLLM at tensor parallel 1 is one
process and is not flagged. TPU chips (`google.com/tpu`) are never counted: a TPU host's
chips are driven by one TPU runtime process, with no NCCL or MPI between processes (a
TPU `TFJob` or `JobSet` is not flagged). The finding is at the GPU container's
`volumeMounts` key (else its name), as information, and calls the devices as their vendor
does: Ascend NPUs and Gaudi HPUs between which HCCL runs, AMD GPUs with RCCL.

vLLM production stack's models (`servingEngineSpec.modelSpec`, read as GPU041 reads them:
the command and `requestGPU` the chart writes) get the chart's memory `emptyDir` at
`/dev/shm` only when their `vllmConfig` has `tensorParallelSize`: a model that holds two
GPUs and passes its parallelism through `vllmConfig.extraArgs` keeps the 64 MiB, reported at
the option in `extraArgs`. A mount at `/dev/shm` among the model's `extraVolumeMounts` is its
own and not judged.

## Why it matters
A container's `/dev/shm` is 64 MiB unless something mounts over it. PyTorch's DataLoader
workers hand batches to the training process through shared memory, and NCCL and MPI use it
between the processes of one pod's GPUs: with 64 MiB the workers die with `Bus error` ("This
might be caused by insufficient shared memory (shm)") or NCCL fails, often hours into a run.
An inference engine's tensor-parallel workers exchange tensors the same way: vLLM's
documentation asks for `--ipc=host` or a large `--shm-size` for tensor parallelism. It is
information, not a warning: a job with `num_workers=0` and one process per pod does not
need it, and NCCL falls back to other transports on some systems. A training kind's container
that starts no launcher (`python train.py` in a PyTorchJob: one process a pod) is said to hold
its GPUs "for training", not "for several processes": its DataLoader workers still share the
memory.

## Example
```yaml
spec:
  containers:
  - name: trainer
    command: ["torchrun", "--nproc-per-node=4", "train.py"]
    resources:
      limits:
        nvidia.com/gpu: 4          # GPU042: no /dev/shm volume
```

## Use instead
```yaml
spec:
  volumes:
  - name: dshm
    emptyDir:
      medium: Memory
      sizeLimit: 16Gi
  containers:
  - name: trainer
    command: ["torchrun", "--nproc-per-node=4", "train.py"]
    volumeMounts:
    - name: dshm
      mountPath: /dev/shm
    resources:
      limits:
        nvidia.com/gpu: 4
```

## Options
None.

## References
- https://github.com/pytorch/pytorch/issues/16979 (DataLoader "Unexpected bus error ...
  insufficient shared memory (shm)" on Kubernetes)
- https://github.com/pytorch/pytorch/issues/5040 (the Bus error message)
- https://github.com/meta-pytorch/torchx/issues/428 (the 64 MB default; a memory `emptyDir`
  mounted at `/dev/shm` on Kubernetes)
- https://kubernetes.io/docs/concepts/storage/volumes/#emptydir (`medium: Memory`, tmpfs)
- KubeRay, ray-operator/controllers/ray/common/pod.go (`SharedMemoryVolumeMountPath`: a
  memory `emptyDir` at `/dev/shm` in the Ray container)
- KServe, config/llmisvc/config-llm-template.yaml (`kserve-config-llm-template`: `dshm`, a
  memory `emptyDir` at `/dev/shm` in the `main` container)
- vLLM documentation, "Using Docker" (https://docs.vllm.ai/en/latest/deployment/docker.html:
  `--ipc=host` or `--shm-size`, shared memory between processes for tensor parallel inference)
- vllm-project/production-stack, `helm/templates/deployment-vllm-multi.yaml` (the `shm`
  volume and mount only `if hasKey $modelSpec.vllmConfig "tensorParallelSize"`)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    Container,
    Path,
    PodSpec,
    Related,
    RuleContext,
    Started,
    Violation,
    claimed_devices,
    command_words,
    completed_by_runtime,
    find_engine,
    flag_value,
    int_value,
    literal_env,
    may_start_engine,
    resource_lists,
    shm_mount,
    volume_media,
    whole_gpu_count,
)

CODE = "GPU042"
NAME = "multi-gpu-training-without-shm"
SEVERITY = "info"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
PLACEMENT_FREE = True  # runs on a base whose patches change only where its pods run
OPTIONS: dict[str, Any] = {}

#: The training operators' kinds (Kubeflow, Kubeflow Trainer, DLRover, SageMaker HyperPod).
#: A plain batch Job is a training pod only when it starts a launcher: it may as well build
#: an engine, burn in GPUs or run a benchmark.
#: Kinds whose pods run several MPI ranks each (``slotsPerWorker``).
_MPI_KINDS = frozenset({"MPIJob"})
TRAINING_KINDS = {
    "PyTorchJob",
    "TFJob",
    "MPIJob",
    "MXJob",
    "XGBoostJob",
    "PaddleJob",
    "JAXJob",
    "TrainJob",
    "TrainingRuntime",
    "ClusterTrainingRuntime",
    "ElasticJob",
    "HyperPodPyTorchJob",
}
#: Distributed training launchers in a container's command line.
#: (A pattern: compiled on first use, see docs/architecture.md.)
_LAUNCHER = (
    r"(^|[\s/\"'])(torchrun|torch\.distributed\.(run|launch)|deepspeed|horovodrun)([\s\"']|$)"
    r"|accelerate\s+launch|--nproc[-_]per[-_]node"
    r"|\bFORCE_TORCHRUN=[\"']?(1|true)\b"
)
#: LLaMA-Factory's switch that makes ``llamafactory-cli train`` start torchrun over every
#: visible GPU (its README, "Distributed training": ``FORCE_TORCHRUN=1``), as a variable.
_TORCHRUN_SWITCH = "FORCE_TORCHRUN"
SHM = "/dev/shm"
#: Accelerators whose engines do not exchange tensors through NCCL and shared memory.
NOT_GPUS = {"google.com/tpu", "aws.amazon.com/neuron", "aws.amazon.com/neuroncore"}
#: A TPU host's chips are driven by one TPU runtime process (Cloud TPU "TPU architecture":
#: one host process per TPU VM): no pod of TPU chips is a multi-process pod.
TPU = "google.com/tpu"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    made = any(c.made is not None for c in pod.containers)  # a chart's values' pod
    if (pod.location != "pod" and not made) or pod.spec.get("hostIPC") is True:
        return
    root = pod.obj.root
    row = ctx.workloads.lookup(root.group, root.kind) if ctx.workloads else None
    if row is not None and row.mounts_shm:
        return  # the operator mounts a memory emptyDir at /dev/shm (KubeRay, KServe's template)
    gpu_containers = [
        (c, n)
        for c in pod.containers
        if c.section in ("containers", "container") or c.sidecar
        for n in [whole_gpu_count(c, ctx.registry) or _claimed(pod, c, ctx)]
        if n
    ]
    # Two GPUs in one container: several processes (or DataLoader workers feeding several
    # GPUs) share that container's /dev/shm.
    # A TPU host runs one TPU runtime process for its chips, with no NCCL or MPI between
    # processes: TPU chips are not GPUs here, in a training kind either.
    gpu_containers = [(c, n) for c, n in gpu_containers if n >= 2 and not _tpu(c)]
    if not gpu_containers:
        return
    kinds = {pod.obj.kind, pod.obj.root.kind}
    training = bool(kinds & TRAINING_KINDS) or any(_launches(c) for c, _ in gpu_containers)
    engines = {} if training else {c.path: e for c, _ in gpu_containers if (e := _engine(c))}
    if not training and not engines:
        return
    volumes = volume_media(pod.spec)
    for container, count in gpu_containers:
        if not training and container.path not in engines:
            continue  # beside an engine, a container that starts none
        if container.made is not None:
            if container.made.shm is False:
                yield _chart_without_shm(pod, container, count, engines.get(container.path))
            continue
        mount = shm_mount(container.data)
        # KServe merges the serving runtime's container and volumes into the predictor's
        # pod: what the project's runtime of that name mounts is the pod's too.
        runtime = _runtime_shm(pod, ctx) if mount is None else None
        if runtime in ("memory", "other"):
            continue
        if runtime == "disk":
            problem = f"its ServingRuntime's volume at {SHM} is on disk, not in memory"
        elif mount is None:
            problem = f"no volume is mounted at {SHM}, so it is the container runtime's 64 MiB"
        elif volumes.get(mount) == "memory":
            continue
        elif volumes.get(mount) == "disk":
            problem = f"the volume {mount} mounted at {SHM} is on disk, not in memory"
        else:
            continue  # a volume defined elsewhere, or one gpulint cannot judge
        where: tuple[Any, ...] = container.path
        if "volumeMounts" in container.data:
            where = (*container.path, "volumeMounts")
        elif isinstance(container.data.get("name"), str):
            where = (*container.path, "name")
        started = engines.get(container.path)
        noun, library = _devices(container, ctx)
        if started is not None:
            effect = (
                f"{library} between the {started.engine.name} worker processes can fail or "
                f'hang, or they die with "Bus error"'
            )
        else:
            effect = (
                f"PyTorch DataLoader workers, {library} and MPI between them can fail with "
                '"Bus error"'
            )
        assumed = ""
        if mount is None and runtime is None and completed_by_runtime(pod):
            # A runtime the project does not define: what it mounts is not known.
            assumed = "; assumed: its ServingRuntime mounts none either"
        # A training kind's container that starts no launcher (`python train.py` in a
        # PyTorchJob: one process a pod) is not known to run several processes; its
        # DataLoader workers still share the memory.
        several = started is not None or _launches(container) or bool(kinds & _MPI_KINDS)
        use = "for several processes" if several else "for training"
        yield Violation(
            where,
            f"container {container.label} of this {pod.obj.kind} holds {count} {noun} {use} "
            f"but {problem}",
            help=f"mount an emptyDir with medium: Memory at {SHM} (else {effect}){assumed}",
            related=_claims_of(pod, container, ctx),
        )


def _runtime_shm(pod: PodSpec, ctx: RuleContext) -> str | None:
    """What the project's serving runtime a KServe predictor names mounts at /dev/shm
    (``memory``, ``disk``, ``other``, ``none``); None when it names none the project
    defines."""
    if ctx.runtimes is None or not completed_by_runtime(pod):
        return None
    model = pod.spec.get("model")
    name = model.get("runtime") if isinstance(model, dict) else None
    return ctx.runtimes.shm(name) if isinstance(name, str) else None


#: What the devices of a vendor's resource are called, and the collective library between
#: its processes (Ascend's and Gaudi's HCCL, AMD's RCCL); NVIDIA's GPUs and NCCL otherwise.
DEVICES = {
    "huawei-ascend": ("NPUs", "HCCL"),
    "habana": ("HPUs", "HCCL"),
    "amd": ("GPUs", "RCCL"),
}


def _chart_without_shm(
    pod: PodSpec, container: Container, count: int, started: Started | None
) -> Violation:
    """A production stack model whose parallelism is passed where the chart does not look
    for it (``vllmConfig.extraArgs``): the chart mounts its /dev/shm only for
    ``vllmConfig.tensorParallelSize``. Reported at the option that sets the parallelism."""
    where: Path = container.path
    if started is not None:
        flags = {f for factor in started.engine.factors for f in factor.flags}
        for word in started.own:
            if word.text.partition("=")[0] in flags and "extraArgs" in word.path:
                where = word.path
                break
    engine = started.engine.name if started is not None else "the engine"
    return Violation(
        where,
        f"model {container.label} holds {count} GPUs for several "
        f"{engine} processes, but the chart mounts {SHM} only for vllmConfig.tensorParallelSize",
        help=f"set vllmConfig.tensorParallelSize instead of the option in extraArgs (the chart "
        f"then mounts a memory emptyDir of shmSize at {SHM}; else its 64 MiB can make NCCL "
        'fail or hang, or "Bus error")',
    )


def _devices(container: Container, ctx: RuleContext) -> tuple[str, str]:
    """How the container's accelerators are called, and their collective library."""
    for _, mapping in resource_lists(container):
        for name in mapping:
            resource = ctx.registry.get(name)
            if resource is not None and resource.hardware in DEVICES:
                return DEVICES[resource.hardware]
    return "GPUs", "NCCL"


def _launches(container: Container) -> bool:
    parts = [
        str(item)
        for field in ("command", "args")
        for item in _list(container.data.get(field))
        if isinstance(item, (str, int)) and not isinstance(item, bool)
    ]
    if re.search(_LAUNCHER, " ".join(parts)):
        return True
    switch = literal_env(container).get(_TORCHRUN_SWITCH)
    return switch is not None and (switch.value or "").strip().lower() in ("1", "true")


def _engine(container: Container) -> Started | None:
    """The engine of ``gpulint/data/engines.json`` the container starts with more than one process
    (or a number of them its command line does not fix)."""
    if not may_start_engine(container) or _not_gpu(container):
        return None
    env = literal_env(container)
    started = find_engine(container, command_words(container, env))
    if started is None or started.engine.single_process:
        return None
    processes = 1
    for factor in started.engine.factors:
        found = flag_value(started.own, factor.flags)
        if found is None and factor.env is not None and factor.env in env:
            found = (int_value(env[factor.env].value or ""), ())
        value = found[0] if found is not None else factor.default
        if value is None:
            return started  # not known: as many as the GPUs, as deepspeed without --num_gpus
        processes *= value
    return started if processes > 1 else None


def _tpu(container: Container) -> bool:
    from gpulint.api import resource_lists  # a container of several devices

    return any(TPU in m for _, m in resource_lists(container))


def _not_gpu(container: Container) -> bool:
    """TPU chips and Neuron devices: their engines do not share tensors through NCCL."""
    from gpulint.api import resource_lists  # a container that may start an engine

    names = {n for _, m in resource_lists(container) for n in m}
    return any(n in NOT_GPUS for n in names)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _claimed(pod: PodSpec, container: Container, ctx: RuleContext) -> int | None:
    """Whole GPUs the container gets through DRA claims of its project, when exact."""
    claims = (container.resources or {}).get("claims")
    claimed = claimed_devices(pod, claims, ctx.registry, ctx.claims) if claims else None
    return claimed.devices if claimed is not None else None


def _claims_of(pod: PodSpec, container: Container, ctx: RuleContext) -> tuple[Related, ...]:
    """Where the DRA claims whose GPUs the container counts are defined (related places),
    when its GPUs are those claims' and not requested ones."""
    if whole_gpu_count(container, ctx.registry):
        return ()
    claims = (container.resources or {}).get("claims")
    claimed = claimed_devices(pod, claims, ctx.registry, ctx.claims) if claims else None
    return claimed.related() if claimed is not None else ()
