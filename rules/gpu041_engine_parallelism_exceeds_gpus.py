"""An engine or launcher told to use more GPUs than its container has, or fewer.

## What it does
Reads the command line of inference engines and distributed launchers and compares the GPUs
it says it will use with the whole GPUs the container requests, in both directions. The
engines and their options are data, `gpulint/data/engines.json` (each row citing the engine's
documentation):

- vLLM: `--tensor-parallel-size` / `-tp` times `--pipeline-parallel-size` / `-pp`;
- SGLang: `--tp-size` / `--tp` times `--pp-size`;
- TGI: `--num-shard`, else the variable `NUM_SHARD`;
- LMDeploy: `lmdeploy serve ... --tp`;
- TensorRT-LLM: `trtllm-serve --tp_size` times `--pp_size`; Triton's
  `launch_triton_server.py --world_size`;
- per node, against the container's GPUs alone: torchrun `--nproc-per-node`
  (`torch.distributed.run`, `.launch`), `deepspeed --num_gpus`, `accelerate launch
  --num_processes` (a total over `--num_machines`: each machine's container runs
  `num_processes / num_machines`; with `--config_file`, only when the command line gives
  both, since it overrides the file), `horovodrun -np`, `tf_cnn_benchmarks
  --num_gpus`, `ray start --num-gpus`.

A process count is a device count only where the launcher gives each process a device:
torchrun (`--nproc-per-node`: PyTorch's launcher documents one process per GPU, each
on `cuda:LOCAL_RANK`), Accelerate (it sets each process's device to its local index),
DeepSpeed (`--num_gpus` names GPUs) and Horovod (its documented setup pins one GPU per
process, `hvd.local_rank()`). `mpirun -np` / `mpiexec -n` counts MPI ranks, and Open MPI binds
no GPU to them (a rank may drive several GPUs, or several share one through MPS): it is
not compared with the GPUs. On Intel Gaudi it is: HCCL runs one process per HPU (Optimum
Habana's `gaudi_spawn.py --world_size <HPUs> --use_mpi` starts one MPI rank per card), so a
Job that holds eight HPUs and runs `mpirun -n 2` leaves six idle, and more ranks than HPUs
have none.

MIG devices are counted apart: a CUDA process enumerates a single MIG device, however many
the container holds (NVIDIA's MIG User Guide, "CUDA Device Enumeration"), so an engine or
launcher that needs more than one device (`--tensor-parallel-size 2`, `--nproc-per-node 2`)
over MIG devices (`nvidia.com/mig-4g.96gb: 2`) fails at start-up: an error at the
parallelism, whatever the count of MIG devices.

An engine is recognised by its command (`vllm serve`, `python -m sglang.launch_server`,
`text-generation-launcher`, `torchrun`, ...) or its image (`vllm/vllm-openai`,
`lmsysorg/sglang`, `huggingface/text-generation-inference`, `openmmlab/lmdeploy`), else by
the long option `--tensor-parallel-size` alone (a KServe predictor whose runtime supplies
the image). Options are read from `command` and `args` lists, `--flag N` and `--flag=N`,
and from shell scripts (`sh -c "vllm serve ... --tensor-parallel-size 4"`, split as a POSIX
shell splits words, line continuations included), from the engine's own command only: up
to the next `;`, `&&`, `|` or line, and for a launcher up to the program it starts (whose
own `--num_gpus` is not the launcher's). `$(VAR)`, `$VAR` and `${VAR}` are replaced by the
values of the container's variables as Kubernetes sets them (`envFrom`, then `env`; `$$` is
an escaped `$`): a literal `env` value, or a `configMapKeyRef` or `envFrom: configMapRef`
into a ConfigMap of the same run, in the same file (a rendered chart or overlay is one file)
or in another linted file. A variable from a Secret, a field, a ConfigMap the run does not
hold (or holds twice with different values), is not known, and an engine whose option is
still not a number is skipped. The finding is at the list item that holds the value (or
the `NUM_SHARD` value), and names the ConfigMap key or `env` value the variable took as a
related location.

A parallelism option written with its value in one item of `command` or `args`
(`- --tensor-parallel-size 2`) in a container that runs no shell reaches the engine as one
argument, `--tensor-parallel-size 2`, which its parser (argparse, clap, click) takes for no
option of its own: the engine stops at start-up. That is an error when the container's
`command` starts the program or the engine runs from its own image (whose entrypoint passes
the arguments on as they are), `info` otherwise (an entrypoint script may split them again),
and the parallelism is not compared then. A shell script (`sh -c "... --tensor-parallel-size
2"`) is split by the shell and is read as above. Likewise a device variable's assignment
written among vLLM's or SGLang's options (`--tensor-parallel-size 2 CUDA_VISIBLE_DEVICES=0,1`,
also `HIP_VISIBLE_DEVICES`, `ROCR_VISIBLE_DEVICES`, `ASCEND_RT_VISIBLE_DEVICES`) sets no
variable: it is an argument their parser (argparse) does not know, and they stop at start-up
("unrecognized arguments"). An error under the same conditions, `info` otherwise. A
command line with an option written with three hyphens or a typographic dash (`—tp 2`) is
GPU069's, and not measured here: the engine stops at it.

vLLM production stack's models (`servingEngineSpec.modelSpec` in the chart's values or a
HelmRelease's) are read as the chart writes their container
(`helm/templates/deployment-vllm-multi.yaml`): `vllm serve MODEL`, an option for each key of
`vllmConfig` it knows (`tensorParallelSize` is `--tensor-parallel-size`, `maxModelLen`,
`dtype`, `maxNumSeqs`, `gpuMemoryUtilization`, `maxLoras`), then `vllmConfig.extraArgs` one
argument each; the model's `requestGPU` devices (of `requestGPUType`, `nvidia.com/gpu` by
default) when it gives no `resources`. Each word is reported at the value it comes from.

More GPUs than held is an error where the engine itself fails at start-up (vLLM, SGLang,
TGI, LMDeploy, TensorRT-LLM, DeepSpeed), a warning where the program a launcher starts picks
its devices (torchrun, Accelerate, Horovod, tf_cnn_benchmarks, Ray). Fewer is a warning
that counts the GPUs reserved and idle, reported only when the engine's total is fully
determined: its options are given, it is started once, on one node of no pod group, with
no data-parallel replicas (vLLM `--data-parallel-size`, SGLang `--dp` or
`--enable-dp-attention`, LMDeploy `--dp`) and no `CUDA_VISIBLE_DEVICES`, and it is an engine
that leaves the rest idle. For torchrun, Accelerate and Horovod (`torchrun --nproc-per-node 1`
holding eight GPUs) it is `info`: a single process may drive several GPUs (DataParallel, a
model split by hand), and the finding says it assumed their documented setup of one GPU a
process. Where the project's NVIDIA device plugin configuration time-slices
the requested name under its own name on some nodes (one configuration per node label, one
sharing and one not), a request counts replicas there, and six replicas may be one GPU: the
finding is `info`, names the configuration, and says it assumed whole GPUs (a pod may ask
for several replicas on purpose, to keep other pods off the GPU it shares).

An engine started with none of its parallelism options runs at its defaults, and where
those are documented (`implied_defaults` in `engines.json`: vLLM, SGLang, LMDeploy and
TensorRT-LLM, tensor and pipeline parallelism 1) a container holding more is reported as
`info` at the item that starts the engine (`vllm serve microsoft/phi-4` holding two GPUs:
one is reserved and idle), saying it assumed the default and that `--tensor-parallel-size`
makes it certain. Only when the engine's whole command line is in the manifest: its own
command starts it from the container's `command`, as a program the shell runs (first in a
shell command, after `exec` or `python -m`; not `pip install vllm`, not an image's
entrypoint, nor the options alone), no variable feeds its words (`$(VLLM_ARGS)`,
`$EXTRA_ARGS`, `"$@"`), no option names a file of options (`--config`, TensorRT-LLM's
`--extra_llm_api_options`), no `env` variable of arguments (`VLLM_ARGS`) is set beside
it, and it is not a KServe `ServingRuntime` or `InferenceService` (the runtime and the
predictor add options), nor over Ray or several nodes, nor data-parallel, as above. TGI,
whose default shards over every visible GPU, and the launchers are not measured so.

An engine spread over nodes has the container's devices on each node: `--nnodes N`
(SGLang, vLLM) gives N nodes, `$(LWS_GROUP_SIZE)` and `$(RBG_LWP_GROUP_SIZE)` the size of
the pod group; any engine in a group's pods (a LeaderWorkerSet's
`spec.leaderWorkerTemplate.size`, an llmaz Service's `spec.workloadTemplate.size`, a
RoleBasedGroup's `leaderWorkerPattern.size`) spans the group, as vLLM does over the Ray
cluster its pods form. When the nodes are not known the engine is not checked: a group
whose size is not a number, `--nnodes` of no literal value, vLLM over Ray outside a group
(`--distributed-executor-backend ray`, `ray start` or a Ray launcher script such as
`multi-node-serving.sh` first), a data-parallel node (`--headless`), a Ray object's pods.

Other vendors' devices count one to one, and messages name them as the engines do: AMD
and Intel GPUs (`amd.com/gpu`: vLLM on ROCm), Gaudi HPUs (`habana.ai/gaudi`), Ascend NPUs
(vLLM Ascend, `quay.io/ascend/vllm-ascend`). An Ascend resource named after its chip
(`huawei.com/Ascend910B`, `huawei.com/Ascend310P`: HAMi's and the Ascend device plugin's)
requested alone is whole NPUs; with its `-memory` or `-core` share beside it, or as a vNPU
template (`huawei.com/Ascend910-2c`), it is part of one and not checked. MindIE reads its
parallelism from its configuration file, which the manifest does not show.

TPU chips (`google.com/tpu`) count as the JAX devices vLLM TPU counts, by the pod's
`cloud.google.com/gke-tpu-accelerator`: one per chip on v4, v5e, v5p and v6e, two on
TPU7x; a TPU pod of no known accelerator is not checked, nor AWS Neuron devices (vLLM
counts NeuronCores, whose number per device depends on the instance). A launcher's
processes are counted against GPUs only. Data parallelism is not counted, and containers
asking for a share of a GPU are skipped, since the number of devices is not their value.
GPUs a container gets through DRA claims it names (`resources.claims`) count when the claims
are in a file of the project (the pod's own first) and every request it names asks for an
exact number of whole GPUs (`exactly.count`, 1 when left out, of a class such as
`gpu.nvidia.com`); `allocationMode: All`, MIG devices and `firstAvailable` alternatives of
different counts are not counted. The finding names where each claim is defined as a
related location.

## Why it matters
The engine starts one worker per GPU of its tensor-parallel times pipeline-parallel group.
With fewer GPUs visible than that it stops at start-up with an error about the number of
GPUs (vLLM and SGLang check the world size against the devices CUDA sees, TGI checks
`num_shard` against them), and the pod crash-loops although it was scheduled. With more
GPUs than it uses, the rest are reserved for the pod and no other pod can have them: a
2-GPU container serving at `--tensor-parallel-size=1` wastes a GPU for as long as it runs.

## Example
```yaml
containers:
- name: vllm
  image: vllm/vllm-openai:v0.6.3
  args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "8"]  # GPU041
  resources:
    limits:
      nvidia.com/gpu: 4
```

## Use instead
```yaml
  args: ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "4"]
  resources:
    limits:
      nvidia.com/gpu: 4
```

## Options
None.

## References
- `gpulint/data/engines.json`: each engine's row names its documentation (vLLM "Parallelism and
  Scaling", SGLang "Server Arguments", TGI "Launcher arguments", LMDeploy "api server",
  TensorRT-LLM `trtllm-serve`, PyTorch `torchrun`, DeepSpeed "Resource Configuration",
  Accelerate CLI, Horovod `horovodrun`, Open MPI `mpirun(1)`, tensorflow/benchmarks, Ray
  "Resources")
- vLLM documentation, "Distributed inference and serving" (tensor-parallel times
  pipeline-parallel GPUs on one node; Ray or multi-node for more), and
  examples/online_serving/multi-node-serving.sh
- NVIDIA Multi-Instance GPU User Guide, "CUDA Device Enumeration" (a single CUDA process
  can only enumerate a single MIG device):
  https://docs.nvidia.com/datacenter/tesla/mig-user-guide/
- LeaderWorkerSet API (`leaderWorkerTemplate.size`, default 1; `LWS_GROUP_SIZE`):
  https://lws.sigs.k8s.io/docs/reference/leaderworkerset.v1/
- Cloud TPU documentation, https://cloud.google.com/tpu/docs/tpu7x ("Dual-chiplet
  architecture": two devices per TPU7x chip) and the v5e / v6e / v5p pages
- SGLang documentation, "Server arguments" (`--tp-size`, `--pp-size`, `--nnodes`)
- Text Generation Inference documentation, "Launcher arguments" (`--num-shard`, env
  `NUM_SHARD`)
- https://kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/
  (`$(VAR)` in `command` and `args`)
- vllm-project/production-stack, `helm/templates/deployment-vllm-multi.yaml` (the model's
  command, its requests, its /dev/shm)
- vllm-project/vllm#27389 ("api_server.py: error: unrecognized arguments": an argument the
  parser does not know stops vLLM)
"""

import re
from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    RAY_KINDS,
    SHELL_PROGRAMS,
    TPU_ACCELERATOR,
    TPU_DEVICES_PER_CHIP,
    Container,
    DeviceResource,
    Path,
    PodSpec,
    Related,
    RuleContext,
    Source,
    Started,
    Violation,
    Word,
    claimed_devices,
    command_words,
    container_env,
    find_engine,
    flag_value,
    has_flag,
    int_value,
    malformed_option,
    may_start_engine,
    resource_lists,
    runs_own_image,
    started_by_command,
    whole_gpu_count,
)

CODE = "GPU041"
NAME = "engine-parallelism-exceeds-gpus"
SEVERITY = "error"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
PLACEMENT_FREE = True  # runs on a base whose patches change only where its pods run
OPTIONS: dict[str, Any] = {}

#: (Kinds whose pods form a Ray cluster, gpulint.api's RAY_KINDS: an engine there runs in
#: Ray's placement groups, over worker groups whose size the manifest does not fix.)
#: Fields that hold a group of pods started together and its ``size``: a LeaderWorkerSet's
#: ``spec.leaderWorkerTemplate``, an llmaz Service's ``spec.workloadTemplate`` (an LWS
#: template), a RoleBasedGroup role's ``leaderWorkerPattern`` (v1alpha2); and, beside the
#: template of a v1alpha1 role whose workload is a LeaderWorkerSet, ``leaderWorkerSet``.
GROUP_FIELDS = ("leaderWorkerTemplate", "workloadTemplate", "leaderWorkerPattern")
#: The variables those controllers set in every container of the group to its size.
GROUP_SIZE_VARS = ("LWS_GROUP_SIZE", "RBG_LWP_GROUP_SIZE")
#: Variables that choose the GPUs a process sees: a container that sets one may run
#: several engines side by side, or on chosen GPUs.
VISIBLE_VARS = ("CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES")
#: Scripts that start or join a Ray cluster for vLLM (vLLM's
#: examples/online_serving/multi-node-serving.sh, the LWS vLLM example's ray_init.sh).
RAY_SCRIPTS = ("multi-node-serving.sh", "ray_init.sh")
#: Accelerators the engine does not count one to one and whose ratio the manifest does not
#: show: vLLM on Neuron counts NeuronCores, two per device on Inf2 and Trn1, more on Trn2.
UNCOUNTED = {"aws.amazon.com/neuron"}
#: What the engines count, by the registry's ``hardware``, as messages name it: vLLM Ascend
#: and MindIE count NPUs, vLLM on Gaudi HPUs; NVIDIA, AMD and Intel GPUs are GPUs.
UNITS = {"huawei-ascend": "NPU", "habana": "HPU"}
#: Units an engine or launcher counts one to one (a TPU chip is not: its JAX devices are).
COUNTED_UNITS = ("GPU", "NPU", "HPU")
#: Devices a launcher's process each takes one of: Intel Gaudi's HCCL runs one process per
#: HPU (Optimum Habana's `gaudi_spawn.py --world_size <HPUs> --use_mpi` starts that many MPI
#: ranks), so `mpirun -n N` on HPUs uses N of them.
BOUND_BY_PROCESS = ("HPU",)
#: An Ascend resource named after its chip (``huawei.com/Ascend910B``, ``huawei.com/Ascend310P``),
#: not a vNPU template (``huawei.com/Ascend910-2c``) nor a share (``-memory``, ``-core``).
#: (A pattern: compiled on first use, see docs/architecture.md.)
_ASCEND_CHIP = r"huawei\.com/Ascend[0-9]+[A-Z]?[0-9]?"


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    if pod.obj.root.kind in RAY_KINDS:
        return
    group: int | None = None
    grouped = False  # group is read (once per pod spec, for the first engine container)
    for container in pod.containers:
        if container.section == "ephemeralContainers":
            continue
        # The GPU count first: it is cheap, and most containers (sidecars, CPU pods) have
        # none, so their command lines are never split.
        gpus, mig = _device_count(container, ctx)
        through = ""
        claimed: tuple[Related, ...] = ()
        if gpus is None:
            gpus, through, claimed = _claimed(pod, container, ctx)
        if gpus is None or not may_start_engine(container):
            continue
        devices = _devices(pod, container, ctx)
        if devices is None:
            continue
        if not grouped:
            group, grouped = _group_size(pod), True
        env = container_env(container, pod.obj.root.ref.namespace, ctx.values)
        if group:
            for var in GROUP_SIZE_VARS:
                env.setdefault(var, Source(str(group), container.path))
        launched = _launched(container, env, devices[1])
        if launched is None:
            continue
        started, bound = launched
        if (refused := _refused(container, started)) is not None:
            yield refused
            continue  # the engine stops at the argument: its parallelism is moot
        used: list[tuple[str, Source]] = []
        factors = _factors(started, env, used)
        if factors is None:
            continue
        per_unit, unit, noun = devices
        if mig is not None:  # a CUDA process enumerates one MIG device, however many it holds
            yield from _over_mig(pod, ctx, container, started, factors, used, mig)
            continue
        nodes = _node_count(started, per_unit, unit, group)
        if nodes is None:
            continue
        have = gpus * per_unit * nodes
        given = [(n, v, p) for n, v, p in factors if p is not None]
        measured = _per_machine(started, factors, given)
        if measured is None:
            continue
        total, size = measured
        engine = started.engine
        if total > have:
            # At the option that alone exceeds the devices, else at the first one given.
            first = (given[0][1], given[0][2]) if given else None
            chosen = next(((v, p) for _, v, p in given if v > have), first)
            if chosen is None:  # cannot happen: total > have >= 1 means one was given
                continue
            sources = _sources(started.words, chosen, used)
            size += _from(sources)
            asked, need = _asked(gpus, devices, nodes, total, through)
            effect = (
                "else the engine fails at start-up and the pod crash-loops"
                if engine.over == "error"
                else f"else the processes beyond them have no {unit} of their own"
            )
            yield Violation(
                chosen[1],
                f"container {container.label} starts {engine.name} with {size} = {total} "
                f"{noun}, but requests {asked}",
                help=f"request {need}, or lower the parallelism to {have} ({effect})",
                at="value",
                severity=engine.over,
                related=_related(pod, ctx, sources) + claimed,
            )
        elif (
            total < have
            and given
            and _fully_known(
                started,
                env,
                nodes,
                group,
                unit,
                per_unit,
                bound or _one_each(started),
            )
        ):
            sources = _sources(started.words, (given[0][1], given[0][2]), used)
            yield _idle(
                container,
                ctx,
                f"{engine.name} with {size}{_from(sources)}",
                total,
                have,
                (unit, through),
                given[0][2],
                _related(pod, ctx, sources) + claimed,
                # A launcher's process may drive several GPUs (DataParallel, a model split
                # by hand): its documented one-GPU-a-process setup is assumed, so info.
                assumed=(
                    f"one {unit} a process, {engine.name}'s documented setup (each on its "
                    "local rank's device); a process that drives several makes it right"
                )
                if not bound and not engine.under
                else None,
            )
        elif (
            total < have
            and not given
            and _whole_command_line(pod, container, started)
            and _fully_known(started, env, nodes, group, unit, per_unit, bound)
        ):
            yield _idle_by_default(container, ctx, started, total, have, (unit, through), claimed)


def _launched(
    container: Container, env: dict[str, Source], unit: str
) -> tuple[Started, bool] | None:
    """The engine the container starts, and whether each of its processes takes one device
    (``unit``); None when it starts none, or one whose options make its devices unknown or
    that stops at an option no parser knows (GPU069), or a launcher of processes that binds
    no device to them (mpirun on GPUs; on HPUs each rank takes one, as HCCL runs them)."""
    started = find_engine(container, command_words(container, env))
    if started is None or has_flag(started.own, started.engine.unknown_if):
        return None
    if not started.engine.processes_only and any(malformed_option(w.text) for w in started.own):
        return None  # it stops at an option no parser knows (GPU069's): nothing to measure
    bound = started.engine.processes_only and unit in BOUND_BY_PROCESS
    if started.engine.processes_only and not bound:
        return None
    return started, bound


#: Launchers whose documented setup gives each process one device of its node (torchrun:
#: ``cuda:LOCAL_RANK``; Accelerate sets each process's device to its local index; Horovod
#: pins ``hvd.local_rank()``), though a process may drive several: fewer processes than
#: devices is reported as ``info``.
ONE_DEVICE_A_PROCESS = frozenset({"torchrun", "Accelerate", "Horovod"})


#: Words of a launched program's options that say one process drives several devices
#: (Transformers' ``device_map="auto"`` spreads a model over every visible GPU).
SEVERAL_A_PROCESS = ("device_map", "device-map", "model_parallel", "model-parallel")


def _one_each(started: Started) -> bool:
    """A launcher of :data:`ONE_DEVICE_A_PROCESS` whose program says nothing of driving
    several devices from one process (:data:`SEVERAL_A_PROCESS`)."""
    return started.engine.name in ONE_DEVICE_A_PROCESS and not any(
        word in w.text for w in started.words for word in SEVERAL_A_PROCESS
    )


#: Kinds whose pods' engine options a serving runtime completes: KServe merges a
#: ServingRuntime's container with the InferenceService's predictor (its args added).
RUNTIME_KINDS = {"ServingRuntime", "ClusterServingRuntime", "InferenceService"}


def _whole_command_line(pod: PodSpec, container: Container, started: Started) -> bool:
    """Whether the engine's whole command line is in the manifest, so that the absence of
    its parallelism options means its documented defaults: the engine's defaults are
    documented (``implied_defaults``), its own command starts it (not an image's entrypoint
    or a serving runtime that may add options), from the container's ``command``, with no
    variable in its words (``$(VLLM_ARGS)``, ``$EXTRA_ARGS``, ``"$@"``), no option naming
    a file of options (``--config``), and no variable of arguments beside it."""
    engine = started.engine
    if engine.implied_unless is None or pod.obj.root.kind in RUNTIME_KINDS:
        return False
    written = container.made is not None or isinstance(container.data.get("command"), list)
    if not written or not started_by_command(started):
        return False
    if any("$" in w.text or w.used for w in started.own):
        return False
    if has_flag(started.own, engine.implied_unless):
        return False
    env = container.data.get("env")
    names = [i.get("name") for i in env if isinstance(i, dict)] if isinstance(env, list) else []
    return not any(isinstance(n, str) and "ARGS" in n.upper() for n in names)


def _idle_by_default(
    container: Container,
    ctx: RuleContext,
    started: Started,
    total: int,
    have: int,
    unit_through: tuple[str, str],
    claimed: tuple[Related, ...],
) -> Violation:
    """An engine started with none of its parallelism options, at its documented defaults
    (``total`` devices), in a container that holds more (``have``): info, since it assumes
    the defaults; the first factor's option makes it certain."""
    unit, through = unit_through
    engine = started.engine
    idle = have - total
    option = engine.factors[0].flags[0]
    sliced = _sometimes_replica(container, ctx)
    shared = (
        f"; where {sliced.name} is time-sliced ({sliced.sometimes_replica}) the request may "
        "be replicas of one GPU"
        if sliced is not None
        else ""
    )
    return Violation(
        started.own[0].path,
        f"container {container.label} starts {engine.name} with no parallelism option, "
        f"{_count(total, unit)} by default, but requests {have}{through}: "
        f"{_count(idle, unit)} {'is' if idle == 1 else 'are'} reserved and "
        f"stay{'s' if idle == 1 else ''} idle",
        help=f"pass {option} {have}, or request {_count(total, unit)} (assumed: "
        f"{engine.name}'s documented default of {total}, since the command line gives no "
        f"parallelism; {option} makes it certain{shared})",
        at="value",
        severity="info",
        related=claimed,
    )


def _idle(
    container: Container,
    ctx: RuleContext,
    started: str,
    total: int,
    have: int,
    unit_through: tuple[str, str],
    at: Path,
    related: tuple[Related, ...],
    assumed: str | None = None,
) -> Violation:
    """An engine started with fewer devices (``total``) than the container holds (``have``):
    a warning counting the idle ones, ``info`` where the project time-slices the name on some
    nodes (the request may count replicas of one GPU there) or where the count rests on an
    assumption (``assumed``: a launcher's one device a process)."""
    unit, through = unit_through
    idle = have - total
    if assumed is not None:
        return Violation(
            at,
            f"container {container.label} starts {started} = {_count(total, unit)}, but "
            f"requests {have}{through}: {_count(idle, unit)} "
            f"{'is' if idle == 1 else 'are'} reserved and stay{'s' if idle == 1 else ''} idle",
            help=f"raise the parallelism to {have}, or request {_count(total, unit)} "
            f"(assumed: {assumed})",
            at="value",
            severity="info",
            related=related,
        )
    sliced = _sometimes_replica(container, ctx)
    if sliced is not None:
        return Violation(
            at,
            f"container {container.label} starts {started} = {_count(total, unit)}, but "
            f"requests {have} {sliced.name}: whole GPUs, {idle} stay idle; time-sliced "
            "replicas, they may be one GPU",
            help=f"request {total}, or raise the parallelism to {have} (assumed: whole GPUs; "
            f"the project's device plugin shares {sliced.name} on some nodes, "
            f"{sliced.sometimes_replica}, where a request counts replicas)",
            at="value",
            severity="info",
            related=related,
        )
    return Violation(
        at,
        f"container {container.label} starts {started} = {_count(total, unit)}, but requests "
        f"{have}{through}: {_count(idle, unit)} {'is' if idle == 1 else 'are'} reserved and "
        f"stay{'s' if idle == 1 else ''} idle; request {_count(total, unit)}, or raise the "
        f"parallelism to {have}",
        at="value",
        severity="warning",
        related=related,
    )


#: A list item holding an option and its value (``--tensor-parallel-size 2``): one argument.
#: (A pattern: compiled on first use, see docs/architecture.md.)
_JOINED = r"(--?[A-Za-z][\w.-]*)[ \t]+([^\s=][^\s]*)"


def _refused(container: Container, started: Started) -> Violation | None:
    """An argument the engine refuses, so that it stops at start-up."""
    return _joined_option(container, started) or _assignment_argument(container, started)


def _joined_option(container: Container, started: Started) -> Violation | None:
    """A parallelism option of the engine written with its value in one ``command`` or
    ``args`` item (``- --tensor-parallel-size 2``), in a container that runs no shell: the
    engine gets ``--tensor-parallel-size 2`` as one argument, which its parser (argparse,
    clap) takes for no option of its own and refuses, so it stops at start-up. Certain (an
    error) when the container's ``command`` starts the program, or the engine's own image
    does (its entrypoint passes the arguments on as they are); else ``info``, since an
    entrypoint script may split them again."""
    import re

    command = container.data.get("command")
    args = container.data.get("args")
    items = [
        (field, i, item)
        for field, value in (("command", command), ("args", args))
        if isinstance(value, list)
        for i, item in enumerate(value)
        if isinstance(item, str)
    ]
    if not items:
        return None
    first = items[0][2].strip().rsplit("/", 1)[-1]
    if first in SHELL_PROGRAMS or any(item.strip() in ("-c", "-lc", "-ec") for _, _, item in items):
        return None  # a shell script: its words are the shell's to split
    flags = {f for factor in started.engine.factors for f in factor.flags}
    for field, i, item in items:
        m = re.fullmatch(_JOINED, item.strip())
        if m is None or m.group(1) not in flags:
            continue
        image = container.data.get("image")
        by_image = isinstance(image, str) and runs_own_image(image, started)
        certain = isinstance(command, list) or by_image
        return Violation(
            (*container.path, field, i),
            f"container {container.label} passes '{item.strip()}' as one argument: "
            f"{started.engine.name} takes it for no option of its own and stops at start-up",
            help=f"write the option and its value as two items, '{m.group(1)}' then "
            f"'{m.group(2)}', or as '{m.group(1)}={m.group(2)}'"
            + (
                ""
                if certain
                else " (assumed: the image's entrypoint passes its arguments on as they are)"
            ),
            at="value",
            severity="error" if certain else "info",
        )
    return None


#: Variables that choose the devices a process sees (CUDA, ROCm, Ascend): written as an
#: argument of the engine, ``CUDA_VISIBLE_DEVICES=0,1`` sets nothing.
DEVICE_VARIABLES = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "NVIDIA_VISIBLE_DEVICES",
        "HIP_VISIBLE_DEVICES",
        "ROCR_VISIBLE_DEVICES",
        "ASCEND_RT_VISIBLE_DEVICES",
        "ASCEND_VISIBLE_DEVICES",
    }
)
#: Engines whose parser (argparse) refuses an argument it does not know and stops.
REFUSES_UNKNOWN = frozenset({"vLLM", "SGLang"})


def _assignment_argument(container: Container, started: Started) -> Violation | None:
    """A device variable's assignment (:data:`DEVICE_VARIABLES`) among the options of an
    engine that refuses unknown arguments (``vllm serve MODEL --tensor-parallel-size 2
    CUDA_VISIBLE_DEVICES=0,1``): the variable is not set, and the engine stops at start-up
    ("unrecognized arguments"). After the engine's first option only: before it, a shell
    takes ``NAME=value`` for an assignment."""
    if started.engine.name not in REFUSES_UNKNOWN:
        return None
    options = False
    for word in started.own:
        if word.text.startswith("--"):
            options = True
            continue
        name, equals, value = word.text.partition("=")
        if not (options and equals and name in DEVICE_VARIABLES):
            continue
        certain = container.made is not None or isinstance(container.data.get("command"), list)
        return Violation(
            word.path,
            f"container {container.label} passes '{word.text}' to {started.engine.name} as an "
            "argument: that sets no variable, and an unknown argument stops it at start-up",
            help=f"set {name} under env (value '{value}'), or drop it: the pod sees only the "
            "devices it requests"
            + ("" if certain else " (assumed: the image's entrypoint passes its arguments on)"),
            at="value",
            severity="error" if certain else "info",
        )
    return None


def _per_machine(
    started: Started, factors: list[tuple[str, int, Any]], given: list[tuple[str, int, Any]]
) -> tuple[int, str] | None:
    """The product of the engine's factors on one machine, and its words: a total over
    ``divided_by`` machines is divided. None when not known: a value that is not a literal
    number or not whole processes per machine, or a configuration file that may set what
    the command line does not give (its options override the file)."""
    total = 1
    for _, value, _ in factors:
        total *= value
    size = " times ".join(f"{n} {v}" for n, v, _ in given) or "its defaults"
    engine = started.engine
    if has_flag(started.own, engine.config_files) and not _all_given(started):
        return None
    machines = flag_value(started.own, engine.divided_by) if engine.divided_by else None
    if machines is None:
        return total, size
    count = machines[0]
    if not count or total % count:
        return None
    return total // count, f"{size} over {_flag_name(started)} {count}"


def _all_given(started: Started) -> bool:
    """Whether the command line gives every factor and dividing option of its engine."""
    engine = started.engine
    wanted = [f.flags for f in engine.factors]
    if engine.divided_by:
        wanted.append(engine.divided_by)
    return all(has_flag(started.own, flags) for flags in wanted)


def _flag_name(started: Started) -> str:
    """The dividing option as the command line writes it (``--num_machines``)."""
    names = [w.text.partition("=")[0] for w in started.own]
    return next(
        (n for n in reversed(names) if n in started.engine.divided_by),
        started.engine.divided_by[0],
    )


def _asked(
    gpus: int, devices: tuple[int, str, str], nodes: int, total: int, through: str
) -> tuple[str, str]:
    """What the pod requests, and what it would need for ``total`` devices, in words."""
    per_unit, unit, noun = devices
    asked = _count(gpus, unit) + (f" ({gpus * per_unit} {noun})" if per_unit > 1 else "")
    asked += through
    need = _count(-(-total // (per_unit * nodes)), unit)
    if nodes > 1:
        asked += f" on each of {nodes} nodes, {gpus * per_unit * nodes} {noun} in all"
        need += " on each node"
    return asked, need


def _factors(
    started: Started, env: dict[str, Source], used: list[tuple[str, Source]]
) -> list[tuple[str, int, Any]] | None:
    """Each factor's name, value and the place that gives it (None: the default); None
    when a value is not a literal number or nothing gives one the engine has no default for."""
    out: list[tuple[str, int, Any]] = []
    for factor in started.engine.factors:
        found = flag_value(started.own, factor.flags)
        if found is None and factor.env is not None and factor.env in env:
            source = env[factor.env]
            found = (int_value(source.value or ""), source.path)
            used.append((factor.env, source))
        if found is None:
            if factor.default is None:
                return None
            out.append((factor.name, factor.default, None))
        elif found[0] is None:
            return None
        else:
            out.append((factor.name, found[0], found[1]))
    return out


def _fully_known(
    started: Started,
    env: dict[str, Source],
    nodes: int,
    group: int | None,
    unit: str,
    per_unit: int,
    bound: bool = False,
) -> bool:
    """Whether the engine uses no more GPUs than its factors say: under-use is reported only
    for an engine that starts one process per GPU (the table's ``under``, or ``bound``: a
    launcher whose processes each take one device), once, on one node of no group, with no
    data-parallel replicas and no choice of visible GPUs."""
    engine = started.engine
    under = engine.under or bound
    if not under or started.starts != 1 or unit not in COUNTED_UNITS or per_unit != 1:
        return False
    if engine.scope == "engine" and (nodes != 1 or group is not None):
        return False
    if has_flag(started.own, engine.replicas) or any(v in env for v in VISIBLE_VARS):
        return False
    return not any(w.text.startswith(VISIBLE_VARS) for w in started.words)


def _sources(
    words: list[Word], chosen: tuple[int, Path], used: list[tuple[str, Source]]
) -> list[tuple[str, Source]]:
    """The variables the finding's option took its value from (those of its list item
    whose value is the option's), ``used`` first."""
    found = list(used)
    for word in words:
        if word.path == chosen[1]:
            found.extend(u for u in word.used if int_value(u[1].value or "") == chosen[0])
    out: dict[str, Source] = {}
    for name, source in found:
        if name not in GROUP_SIZE_VARS:
            out.setdefault(name, source)
    return list(out.items())


def _related(
    pod: PodSpec, ctx: RuleContext, sources: list[tuple[str, Source]]
) -> tuple[Related, ...]:
    """Where those variables are set: a ConfigMap's key (in this file or another of the
    run), or the container's literal ``env`` value."""
    out: list[Related] = []
    for name, source in sources:
        if source.label is None and source.path and ctx.values is not None:
            span = pod.obj.doc.value_span(source.path)
            message = f"where {name} is set to {source.value}"
            out.append(Related("value", ctx.values.label, span, message))
        out.extend(source.related(name))
    return tuple(out)


def _from(sources: list[tuple[str, Source]]) -> str:
    """`` (from variable TP, key TP of ConfigMap vllm)``: the variables read from
    ConfigMaps."""
    shown = [
        f"variable {name}, key {s.key} of ConfigMap {s.configmap}"
        for name, s in sources
        if s.configmap is not None
    ]
    return f" (from {'; '.join(shown)})" if shown else ""


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}{'s' if n != 1 else ''}"


def _claimed(
    pod: PodSpec, container: Container, ctx: RuleContext
) -> tuple[int | None, str, tuple[Related, ...]]:
    """The whole devices a container gets through DRA claims, when their count is exact,
    the words that name the claims and where they are defined; (None, "", ()) otherwise."""
    claimed = claimed_devices(
        pod, (container.resources or {}).get("claims"), ctx.registry, ctx.claims
    )
    if claimed is None or claimed.devices is None:
        return None, "", ()
    named = ", ".join(c.describe() for c in claimed.claims)
    return claimed.devices, f" through {named}", claimed.related()


def _devices(pod: PodSpec, container: Container, ctx: RuleContext) -> tuple[int, str, str] | None:
    """The devices the engine counts per accelerator the container requests, the
    accelerator's name and the devices' (GPUs one to one; a TPU chip as the JAX devices of
    the pod's TPU accelerator); None when that is not known."""
    from gpulint.api import resource_lists  # a GPU container that may start an engine

    names = {n for _, m in resource_lists(container) for n in m if ctx.registry.is_accelerator(n)}
    name = next(iter(names), "")  # one name: whole_gpu_count answers None for several
    if name in UNCOUNTED:
        return None
    if name != "google.com/tpu":
        resource = ctx.registry.get(name)
        unit = UNITS.get(resource.hardware if resource is not None else "", "GPU")
        return 1, unit, f"{unit}s"
    selector = pod.spec.get("nodeSelector")
    accelerator = selector.get(TPU_ACCELERATOR) if isinstance(selector, dict) else None
    per_chip = TPU_DEVICES_PER_CHIP.get(accelerator) if isinstance(accelerator, str) else None
    # None: a TPU pod whose generation is not written, devices per chip unknown.
    return None if per_chip is None else (per_chip, "TPU chip", "TPU devices")


def _node_count(started: Started, per_unit: int, unit: str, group: int | None) -> int | None:
    """The nodes the engine spans (one for a launcher of one node's processes); None when
    unknown, or for a launcher's processes on TPU chips (not counted here)."""
    if started.engine.scope != "node":
        return _nodes(started.words, group)
    return 1 if per_unit == 1 and unit in COUNTED_UNITS else None


def _sometimes_replica(container: Container, ctx: RuleContext) -> DeviceResource | None:
    """The accelerator the container requests when some sharing configurations of the
    project replicate it under its own name (``nvidia.com/gpu`` time-sliced on the nodes of
    one configuration, whole on another's), else None."""
    for _, mapping in resource_lists(container):
        for name in mapping:
            entry = ctx.registry.get(name) if isinstance(name, str) else None
            if entry is not None and entry.sometimes_replica:
                return entry
    return None


def _device_count(container: Container, ctx: RuleContext) -> tuple[int | None, str | None]:
    """The whole devices the container requests (GPUs, NPUs), else its MIG devices with
    their names as written (the second item, None for whole devices)."""
    gpus = whole_gpu_count(container, ctx.registry) or _npu_count(container, ctx)
    if gpus is not None:
        return gpus, None
    mig = _mig_count(container, ctx)
    return (None, None) if mig is None else mig


def _over_mig(
    pod: PodSpec,
    ctx: RuleContext,
    container: Container,
    started: Started,
    factors: list[tuple[str, int, Any]],
    used: list[tuple[str, Source]],
    mig: str,
) -> Iterator[Violation]:
    """An engine that needs more than one device over MIG devices: each of its processes
    enumerates a single one (NVIDIA's MIG User Guide), so it fails at start-up."""
    total = 1
    for _, value, _ in factors:
        total *= value
    given = [(n, v, p) for n, v, p in factors if p is not None]
    if total <= 1 or not given:
        return
    size = " times ".join(f"{n} {v}" for n, v, _ in given)
    sources = _sources(started.words, (given[0][1], given[0][2]), used)
    yield Violation(
        given[0][2],
        f"container {container.label} starts {started.engine.name} with {size}{_from(sources)}"
        f" = {total} GPUs over MIG devices ({mig}): a CUDA process sees one",
        help=(
            "run one engine per MIG device (parallelism 1), or request whole GPUs (else the "
            "engine fails at start-up: each process finds a single MIG device, whatever the "
            "container holds)"
        ),
        at="value",
        related=_related(pod, ctx, sources),
    )


def _mig_count(container: Container, ctx: RuleContext) -> tuple[int, str] | None:
    """The MIG devices a container requests, when every accelerator it asks for is a MIG
    profile (``nvidia.com/mig-4g.96gb: 2``), with the names as written; None otherwise."""
    from gpulint.api import amount, resource_lists

    counts: dict[str, int] = {}
    for section, mapping in resource_lists(container):
        for name, written in mapping.items():
            if not ctx.registry.is_accelerator(name):
                continue
            resource = ctx.registry.get(name)
            if resource is None or resource.kind != "mig":
                return None
            value = amount(written).value
            if value is None or value <= 0 or value > 1024 or value != int(value):
                return None
            if section == "limits" or name not in counts:
                counts[name] = int(value)
    if not counts:
        return None
    shown = ", ".join(f"{n}: {c}" for n, c in sorted(counts.items()))
    return sum(counts.values()), shown


def _npu_count(container: Container, ctx: RuleContext) -> int | None:
    """The Ascend NPUs a container requests by count alone: HAMi's and the Ascend device
    plugin's per-chip names (``huawei.com/Ascend910B: 8``, ``huawei.com/Ascend310P: 1``) are
    whole NPUs unless a memory or core share of the chip is requested beside them (a vNPU),
    or the name is a vNPU template (``huawei.com/Ascend910-2c``). None otherwise."""
    from gpulint.api import amount, resource_lists  # a container that holds no GPU count

    names: set[str] = set()
    value: Any = None
    for section, mapping in resource_lists(container):
        for name, written in mapping.items():
            if not ctx.registry.is_accelerator(name):
                continue
            names.add(name)
            if section == "limits" or value is None:
                value = written
    if len(names) != 1:
        return None  # none, or a count with its memory or core share: a vNPU
    name = next(iter(names))
    resource = ctx.registry.get(name)
    if resource is None or resource.hardware != "huawei-ascend":
        return None
    if not re.fullmatch(_ASCEND_CHIP, name):
        return None
    count = amount(value).value
    # Bounded before int(): a hostile 1e2147483647 must not be expanded.
    if count is None or not 0 < count <= 1024 or count != count.to_integral_value():
        return None
    return int(count)


def _group_size(pod: PodSpec) -> int | None:
    """The size of the pod group (a LeaderWorkerSet and the like) whose template holds this
    pod spec: None when the pod is in no group, 0 when the size is not a literal number."""
    node: Any = pod.obj.doc.data
    found: int | None = None
    for key in pod.path:
        if isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            node = node[key]
            continue
        if not isinstance(node, dict):
            break
        group = None
        if key in GROUP_FIELDS:
            group = node[key]
        elif key == "template" and _lws_workload(node):
            group = node.get("leaderWorkerSet")  # a v1alpha1 role: the size beside the template
        if isinstance(group, dict):
            # The LeaderWorkerSet API defaults the size to 1.
            size = group.get("size", 1)
            literal = isinstance(size, (int, str)) and not isinstance(size, bool)
            found = (int_value(str(size)) if literal else None) or 0
        node = node.get(key)
    return found


def _lws_workload(role: dict[str, Any]) -> bool:
    workload = role.get("workload")
    return isinstance(workload, dict) and workload.get("kind") == "LeaderWorkerSet"


def _nodes(found: list[Word], group: int | None) -> int | None:
    """The nodes the engine spans, each with the container's devices; None when not known.

    ``--nnodes`` (SGLang, vLLM) says it; else an engine in a pod group spans the group
    (vLLM over a Ray cluster the group's pods form, or a launcher script); else an engine
    started over Ray (``--distributed-executor-backend ray``, ``ray start`` or a Ray launcher
    script first) spans a cluster of unknown size, and a data-parallel node (``--headless``,
    ``--data-parallel-address``) shares the engine with others the manifest does not show.
    """
    texts = [w.text for w in found]
    nnodes: int | None = None
    ray = False
    for i, text in enumerate(texts):
        if text in ("--headless",) or text.startswith("--data-parallel-address"):
            return None
        if text == "ray" and i + 1 < len(texts) and texts[i + 1] == "start":
            ray = True
        if text.rsplit("/", 1)[-1] in RAY_SCRIPTS:
            ray = True
        name, eq, value = text.partition("=")
        if not eq and i + 1 < len(texts):
            value = texts[i + 1]
        if name == "--distributed-executor-backend" and value == "ray":
            ray = True
        if name in ("--nnodes", "--num-nodes"):
            nnodes = int_value(value)
            if nnodes is None:
                return None  # $(VAR) of no literal value: not known
    if nnodes is not None:
        return nnodes
    if group is not None:
        return group or None
    return None if ray else 1
