"""An inference engine told to use more GPUs than its container has.

## What it does
Reads the command line of vLLM, SGLang and Text Generation Inference containers and flags
one whose tensor parallelism times pipeline parallelism is larger than the whole GPUs the
container requests:

- vLLM: `--tensor-parallel-size` / `-tp`, `--pipeline-parallel-size` / `-pp`;
- SGLang: `--tensor-parallel-size` / `--tp-size` / `--tp`, `--pipeline-parallel-size` /
  `--pp-size`;
- TGI: `--num-shard`, or the `NUM_SHARD` variable it reads its options from.

The engine is recognised by its command (`vllm serve`, `vllm.entrypoints`,
`sglang.launch_server`, `text-generation-launcher`) or its image (`vllm/vllm-openai`,
`lmsysorg/sglang`, `huggingface/text-generation-inference`), else by the long option
`--tensor-parallel-size` alone (a KServe predictor whose runtime supplies the image).
Options are read from `command` and `args` lists, `--flag N` and `--flag=N`, and from shell scripts
(`sh -c "vllm serve ... --tensor-parallel-size 4"`, split as a POSIX shell splits words,
line continuations included). `$(VAR)`, `$VAR` and `${VAR}` are replaced by the values
of the container's variables as Kubernetes sets them (`envFrom`, then `env`; `$$` is an
escaped `$`): a literal `env` value, or a `configMapKeyRef` or `envFrom: configMapRef` into a
ConfigMap of the same run, in the same file (a rendered chart or overlay is one file) or in
another linted file. A variable from a Secret, a field, a ConfigMap the run does not hold
(or holds twice with different values), is not known, and an option whose value is still
not a number is skipped. The finding is at the list item that holds the value (or the
`NUM_SHARD` value), and names the ConfigMap key or `env` value the variable took as a
related location.

An engine spread over nodes has the container's devices on each node: `--nnodes N`
(SGLang, vLLM) gives N nodes, `$(LWS_GROUP_SIZE)` and `$(RBG_LWP_GROUP_SIZE)` the size of
the pod group; any engine in a group's pods (a LeaderWorkerSet's
`spec.leaderWorkerTemplate.size`, an llmaz Service's `spec.workloadTemplate.size`, a
RoleBasedGroup's `leaderWorkerPattern.size`) spans the group, as vLLM does over the Ray
cluster its pods form. When the nodes are not known the engine is not checked: a group
whose size is not a number, `--nnodes` of no literal value, vLLM over Ray outside a group
(`--distributed-executor-backend ray`, `ray start` or a Ray launcher script such as
`multi-node-serving.sh` first), a data-parallel node (`--headless`), a Ray object's pods.

TPU chips (`google.com/tpu`) count as the JAX devices vLLM TPU counts, by the pod's
`cloud.google.com/gke-tpu-accelerator`: one per chip on v4, v5e, v5p and v6e, two on
TPU7x; a TPU pod of no known accelerator is not checked, nor AWS Neuron devices (vLLM
counts NeuronCores, whose number per device depends on the instance). Data parallelism
is not counted, and containers asking for a share of a GPU or for GPUs through DRA claims
are skipped, since the number of devices is not their value.

## Why it matters
The engine starts one worker per GPU of its tensor-parallel times pipeline-parallel group.
With fewer GPUs visible than that it stops at start-up with an error about the number of
GPUs (vLLM and SGLang check the world size against the devices CUDA sees, TGI checks
`num_shard` against them), and the pod crash-loops although it was scheduled.

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
- vLLM documentation, "Distributed inference and serving" (tensor-parallel times
  pipeline-parallel GPUs on one node; Ray or multi-node for more), and
  examples/online_serving/multi-node-serving.sh
- LeaderWorkerSet API (`leaderWorkerTemplate.size`, default 1; `LWS_GROUP_SIZE`):
  https://lws.sigs.k8s.io/docs/reference/leaderworkerset.v1/
- Cloud TPU documentation, https://cloud.google.com/tpu/docs/tpu7x ("Dual-chiplet
  architecture": two devices per TPU7x chip) and the v5e / v6e / v5p pages
- SGLang documentation, "Server arguments" (`--tp-size`, `--pp-size`, `--nnodes`)
- Text Generation Inference documentation, "Launcher arguments" (`--num-shard`, env
  `NUM_SHARD`)
- https://kubernetes.io/docs/tasks/inject-data-application/define-command-argument-container/
  (`$(VAR)` in `command` and `args`)
"""

import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from gpulint.envvalues import Source, container_env
from gpulint.model import Path, Related
from gpulint.resources import whole_gpu_count
from gpulint.rule import RuleContext, Violation
from gpulint.workloads import Container, PodSpec

CODE = "GPU041"
NAME = "engine-parallelism-exceeds-gpus"
SEVERITY = "warning"
SCOPE = "pod"
WHOLE_OBJECT = True  # GL203: not run on a Kustomize patch linted alone
OPTIONS: dict[str, Any] = {}


class Engine:
    """An inference engine: how its command line and image are recognised, and the options
    that set its parallelism. (Records of this module are plain classes: a NamedTuple costs
    every start-up ten times as much to define, see docs/architecture.md.)"""

    __slots__ = ("commands", "images", "name", "pipeline", "tensor", "tensor_env")

    def __init__(
        self,
        name: str,
        commands: tuple[str, ...],
        images: tuple[str, ...],
        tensor: tuple[str, ...],
        pipeline: tuple[str, ...],
        tensor_env: str | None = None,
    ) -> None:
        self.name = name
        #: Words of the command line that start the engine.
        self.commands = commands
        #: Globs over the image repository.
        self.images = images
        self.tensor = tensor
        self.pipeline = pipeline
        #: An environment variable the engine reads its tensor parallelism from.
        self.tensor_env = tensor_env


ENGINES = (
    Engine(
        "vLLM",
        ("vllm.entrypoints", "vllm"),
        ("vllm/vllm-openai*", "*/vllm-openai*", "*/vllm"),
        ("--tensor-parallel-size", "-tp"),
        ("--pipeline-parallel-size", "-pp"),
    ),
    Engine(
        "SGLang",
        ("sglang.launch_server", "sglang"),
        ("lmsysorg/sglang*", "*/sglang"),
        ("--tensor-parallel-size", "--tp-size", "--tp"),
        ("--pipeline-parallel-size", "--pp-size"),
    ),
    Engine(
        "TGI",
        ("text-generation-launcher",),
        ("huggingface/text-generation-inference*", "*/text-generation-inference*"),
        ("--num-shard",),
        (),
        "NUM_SHARD",
    ),
)
#: Any container whose options use these long flags (kserve's vLLM runtime, with no command
#: or image of its own): vLLM and SGLang, and the engines built on them, mean the same.
GENERIC = Engine("vLLM/SGLang", (), (), ("--tensor-parallel-size",), ("--pipeline-parallel-size",))
#: Kinds whose pods form a Ray cluster: an engine there runs in Ray's placement groups, over
#: worker groups whose size the manifest does not fix (autoscaling, several groups).
RAY_KINDS = {"RayCluster", "RayService", "RayJob", "RayClusterFleet"}
#: Fields that hold a group of pods started together and its ``size``: a LeaderWorkerSet's
#: ``spec.leaderWorkerTemplate``, an llmaz Service's ``spec.workloadTemplate`` (an LWS
#: template), a RoleBasedGroup role's ``leaderWorkerPattern`` (v1alpha2); and, beside the
#: template of a v1alpha1 role whose workload is a LeaderWorkerSet, ``leaderWorkerSet``.
GROUP_FIELDS = ("leaderWorkerTemplate", "workloadTemplate", "leaderWorkerPattern")
#: The variables those controllers set in every container of the group to its size.
GROUP_SIZE_VARS = ("LWS_GROUP_SIZE", "RBG_LWP_GROUP_SIZE")
#: Scripts that start or join a Ray cluster for vLLM (vLLM's
#: examples/online_serving/multi-node-serving.sh, the LWS vLLM example's ray_init.sh).
RAY_SCRIPTS = ("multi-node-serving.sh", "ray_init.sh")
#: JAX devices per TPU chip, by GKE's ``cloud.google.com/gke-tpu-accelerator`` value: vLLM
#: TPU (and any JAX engine) counts its tensor parallelism in JAX devices. One per chip on v4
#: and v5p (megacore: two TensorCores as one device) and on v5e and v6e (one TensorCore);
#: two on TPU7x, whose two chiplets are two devices. Sources: cloud.google.com/tpu/docs/v4,
#: /v5p, /v5e, /v6e ("TensorCores per chip"), /tpu7x ("Dual-chiplet architecture": two TPU
#: devices per chip instead of one megacore); accelerator values from
#: cloud.google.com/kubernetes-engine/docs/concepts/plan-tpus.
TPU_ACCELERATOR = "cloud.google.com/gke-tpu-accelerator"
TPU_DEVICES_PER_CHIP = {
    "tpu-v4-podslice": 1,
    "tpu-v5p-slice": 1,
    "tpu-v5-lite-podslice": 1,
    "tpu-v5-lite-device": 1,
    "tpu-v6e-slice": 1,
    "tpu7x": 2,
}
#: Accelerators the engine does not count one to one and whose ratio the manifest does not
#: show: vLLM on Neuron counts NeuronCores, two per device on Inf2 and Trn1, more on Trn2.
UNCOUNTED = {"aws.amazon.com/neuron"}
#: ``$$`` (Kubernetes' escaped ``$``), ``$(VAR)``, ``${VAR}``, ``$VAR``.
#: (A pattern: compiled on first use, see docs/architecture.md.)
_VAR = (
    r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)"
)


class Word:
    __slots__ = ("path", "text", "used")

    def __init__(self, text: str, path: Path, used: tuple[tuple[str, Source], ...] = ()) -> None:
        self.text = text
        #: The list item (or env value) the word was read from.
        self.path = path
        #: The variables expanded in that item, with their sources.
        self.used = used


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
        gpus = whole_gpu_count(container, ctx.registry)
        if gpus is None:
            continue
        if not _may_start_engine(container):
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
        words = _words(container, env)
        engine = _engine(container, words)
        if engine is None:
            continue
        nodes = _nodes(words, group)
        if nodes is None:
            continue
        tensor = _option(words, engine.tensor)
        used: list[tuple[str, Source]] = []
        if tensor is None and engine.tensor_env is not None and engine.tensor_env in env:
            source = env[engine.tensor_env]
            tensor = (_int(source.value or ""), source.path)
            used = [(engine.tensor_env, source)]
        pipeline = _option(words, engine.pipeline)
        tp = tensor[0] if tensor else 1
        pp = pipeline[0] if pipeline else 1
        have = gpus * devices[0] * nodes
        if tp is None or pp is None or tp * pp <= have:
            continue
        # At the option that alone exceeds the devices, else at the tensor parallelism.
        chosen = pipeline if pipeline and (tensor is None or pp > have >= tp) else tensor
        if chosen is None:  # cannot happen: tp * pp > have >= 1 means one was given
            continue
        per_unit, unit, noun = devices
        sources = _sources(words, chosen, used)
        size = f"tensor parallel {tp}" + (f" times pipeline parallel {pp}" if pipeline else "")
        size += _from(sources)
        asked = _count(gpus, unit) + (f" ({gpus * per_unit} {noun})" if per_unit > 1 else "")
        need = _count(-(-tp * pp // (per_unit * nodes)), unit)
        if nodes > 1:
            asked += f" on each of {nodes} nodes, {have} {noun} in all"
            need += " on each node"
        yield Violation(
            chosen[1],
            f"container {container.label} starts {engine.name} with {size} = {tp * pp} {noun}, "
            f"but requests {asked}: the engine fails at start-up and the pod crash-loops; "
            f"request {need}, or lower the parallelism to {have}",
            at="value",
            related=_related(pod, ctx, sources),
        )


def _count(n: int, unit: str) -> str:
    return f"{n} {unit}{'s' if n != 1 else ''}"


def _devices(pod: PodSpec, container: Container, ctx: RuleContext) -> tuple[int, str, str] | None:
    """The devices the engine counts per accelerator the container requests, the
    accelerator's name and the devices' (GPUs one to one; a TPU chip as the JAX devices of
    the pod's TPU accelerator); None when that is not known."""
    from gpulint.resources import resource_lists  # a GPU container that may start an engine

    names = {n for _, m in resource_lists(container) for n in m if ctx.registry.is_accelerator(n)}
    name = next(iter(names), "")  # one name: whole_gpu_count answers None for several
    if name in UNCOUNTED:
        return None
    if name != "google.com/tpu":
        return 1, "GPU", "GPUs"
    selector = pod.spec.get("nodeSelector")
    accelerator = selector.get(TPU_ACCELERATOR) if isinstance(selector, dict) else None
    per_chip = TPU_DEVICES_PER_CHIP.get(accelerator) if isinstance(accelerator, str) else None
    # None: a TPU pod whose generation is not written, devices per chip unknown.
    return None if per_chip is None else (per_chip, "TPU chip", "TPU devices")


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
            found = (_int(str(size)) if literal else None) or 0
        node = node.get(key)
    return found


def _lws_workload(role: dict[str, Any]) -> bool:
    workload = role.get("workload")
    return isinstance(workload, dict) and workload.get("kind") == "LeaderWorkerSet"


def _literal_env(container: Container) -> dict[str, Source]:
    out: dict[str, Source] = {}
    env = container.data.get("env")
    for item in env if isinstance(env, list) else ():
        if isinstance(item, dict) and isinstance(item.get("name"), str) and "value" in item:
            value = item["value"]
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                out[item["name"]] = Source(str(value))
    return out


#: A command line that starts an engine holds one of these (see ``_engine``).
_KEYWORDS = tuple(sorted({c for e in ENGINES for c in e.commands} | set(GENERIC.tensor)))
#: What a shell removes from a word (quotes, escapes): ``"vl"lm`` is the word ``vllm``.
_UNQUOTE = str.maketrans("", "", "'\"\\")


def _may_start_engine(container: Container) -> bool:
    """False when ``_engine`` cannot find an engine: no keyword in the command line (each
    word ``_words`` makes is a piece of it, less quotes and escapes, once its variables are
    expanded) and no engine image.

    Most GPU containers run something else (a training script, a notebook, a shell loop),
    and splitting their command lines as a shell does was most of this rule's time.
    """
    texts = []
    for field in ("command", "args"):
        items = container.data.get(field)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, (str, int)) and not isinstance(item, bool):
                texts.append(str(item))
    blob = "\n".join(texts)
    if "$" in blob:
        env = _literal_env(container)
        blob = "\n".join(_expand(text, env) for text in texts)
    blob = blob.translate(_UNQUOTE)
    if any(keyword in blob for keyword in _KEYWORDS):
        return True
    image = container.data.get("image")
    return isinstance(image, str) and _image_engine(image) is not None


def _image_engine(image: str) -> Engine | None:
    """The engine whose image globs match the image's repository."""
    from gpulint.agents import image_repository  # GPU containers only

    return _repository_engine(image_repository(image))


@lru_cache(maxsize=1024)
def _repository_engine(repository: str) -> Engine | None:
    """Remembered by repository, not by image: a repository's tags change from one
    manifest to the next (``train:0``, ``train:1``), its repositories far less."""
    from gpulint.agents import glob_match

    for engine in ENGINES:
        if any(glob_match(repository, p) for p in engine.images):
            return engine
    return None


def _words(container: Container, env: Mapping[str, Source]) -> list[Word]:
    """The words of ``command`` then ``args``; a shell script (``-c SCRIPT``) split."""
    words: list[Word] = []
    for field in ("command", "args"):
        items = container.data.get(field)
        if not isinstance(items, list):
            continue
        for index, item in enumerate(items):
            if isinstance(item, bool) or not isinstance(item, (str, int)):
                continue
            used: list[tuple[str, Source]] = []
            text = _expand(str(item), env, used)
            path = (*container.path, field, index)
            if any(c.isspace() for c in text.strip()):
                words.extend(Word(w, path, tuple(used)) for w in _split(text))
            else:
                words.append(Word(text, path, tuple(used)))
    return words


def _expand(
    text: str, env: Mapping[str, Source], used: list[tuple[str, Source]] | None = None
) -> str:
    """``text`` with the variables of known value replaced (``$$`` is Kubernetes' escaped
    ``$``); an undefined variable, or one of no known value, stays as written."""
    if "$" not in text:
        return text  # nothing to expand: most words

    def repl(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2) or match.group(3)
        if name is None:
            return "$"
        source = env.get(name)
        if source is None or source.value is None:
            return match.group(0)
        if used is not None:
            used.append((name, source))
        return source.value

    return re.sub(_VAR, repl, text)


def _sources(
    words: list[Word], chosen: tuple[int | None, Path], used: list[tuple[str, Source]]
) -> list[tuple[str, Source]]:
    """The variables the finding's option took its value from (those of its list item
    whose value is the option's), ``used`` first."""
    found = list(used)
    for word in words:
        if word.path == chosen[1]:
            found.extend(u for u in word.used if _int(u[1].value or "") == chosen[0])
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


def _split(script: str) -> list[str]:
    """Words of a shell script, as a POSIX shell splits them (whitespace on a quote error)."""
    import shlex  # only for a command line that may start an engine

    script = script.replace("\\\r\n", " ").replace("\\\n", " ")
    try:
        lexer = shlex.shlex(script, posix=True, punctuation_chars=";&|()<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        return list(lexer)
    except ValueError:
        return script.split()


def _engine(container: Container, words: list[Word]) -> Engine | None:
    texts = [w.text for w in words]
    for engine in ENGINES:
        for text in texts:
            base = text.rsplit("/", 1)[-1]
            if base in engine.commands or any(text.startswith(c + ".") for c in engine.commands):
                return engine
            if any(c in text for c in engine.commands if "." in c or "-" in c):
                return engine
    image = container.data.get("image")
    if isinstance(image, str) and (found := _image_engine(image)) is not None:
        return found
    if any(t.partition("=")[0] in GENERIC.tensor for t in texts):
        return GENERIC
    return None


def _nodes(words: list[Word], group: int | None) -> int | None:
    """The nodes the engine spans, each with the container's devices; None when not known.

    ``--nnodes`` (SGLang, vLLM) says it; else an engine in a pod group spans the group
    (vLLM over a Ray cluster the group's pods form, or a launcher script); else an engine
    started over Ray (``--distributed-executor-backend ray``, ``ray start`` or a Ray launcher
    script first) spans a cluster of unknown size, and a data-parallel node (``--headless``,
    ``--data-parallel-address``) shares the engine with others the manifest does not show.
    """
    texts = [w.text for w in words]
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
            nnodes = _int(value)
            if nnodes is None:
                return None  # $(VAR) of no literal value: not known
    if nnodes is not None:
        return nnodes
    if group is not None:
        return group or None
    return None if ray else 1


def _option(words: list[Word], flags: tuple[str, ...]) -> tuple[int | None, Path] | None:
    """The last value given to any of ``flags`` (argparse: the last one wins)."""
    found: tuple[int | None, Path] | None = None
    for i, word in enumerate(words):
        name, eq, value = word.text.partition("=")
        if name not in flags:
            continue
        if eq:
            found = (_int(value), word.path)
        elif i + 1 < len(words):
            found = (_int(words[i + 1].text), words[i + 1].path)
    return found


def _int(text: str) -> int | None:
    text = text.strip().strip("'\"")
    # ASCII digits, and few of them: int() of 5,000 digits raises, of '²' too.
    if not (text.isascii() and text.isdigit() and len(text) <= 6):
        return None
    return int(text) if 0 < int(text) < 1_000_000 else None
