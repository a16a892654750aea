"""GPU infrastructure: the node agents that must run on every GPU node and the pods that set
the GPUs up (``gpulint/data/agents.json``).

A device plugin, GPU Feature Discovery, the NFD worker, the DCGM exporter, the driver and
the container toolkit are recognised by data, not code: the repository of a container's
image (without registry host, tag or digest) or the object's own name, matched as
lower-case shell globs against the rows of ``gpulint/data/agents.json`` in order, names first.
A pod that sets the GPUs up with a generic image (an MPS control daemon started with
``nvidia-cuda-mps-control``, a Job that runs ``nvidia-smi -c EXCLUSIVE_PROCESS``) is
recognised by its command line last: a row's ``commands`` name a program and the options
that must follow it in the same shell command.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, NamedTuple

from gpulint.data import data_path
from gpulint.k8s.shellwords import SEPARATORS as _SEPARATORS, split
from gpulint.k8s.workloads import PodSpec


class Agent(NamedTuple):
    """One row of ``gpulint/data/agents.json``."""

    agent: str
    images: tuple[str, ...]
    names: tuple[str, ...]
    #: The accelerator vendor (the device registry's ``hardware``); None: every vendor.
    hardware: str | None
    severity: str
    effect: str
    source: str = ""
    #: Programs and the options that follow them: ``("nvidia-smi", "-c")``.
    commands: tuple[tuple[str, ...], ...] = ()
    #: It works on its node's GPUs (False: a controller or webhook shipped in an agent's
    #: image, which runs anywhere).
    node: bool = True
    #: It serves GPUs passed through to virtual machines (vfio-pci), on nodes the container
    #: GPU taint does not mark: held only to taints the configuration names.
    passthrough: bool = False

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Agent:
        return cls(
            row["agent"],
            tuple(p.lower() for p in row.get("images", ())),
            tuple(p.lower() for p in row.get("names", ())),
            row.get("hardware"),
            row.get("severity", "warning"),
            row.get("effect", ""),
            row.get("source", ""),
            tuple(tuple(c.split()) for c in row.get("commands", ())),
            bool(row.get("node", True)),
            bool(row.get("passthrough", False)),
        )

    def runs_image(self, image: str) -> bool:
        """Is ``image`` (a container's reference, as written) one of this agent's images?
        An agent found by its object's name or its command may run an image of its own."""
        repository = image_repository(image)
        return any(glob_match(repository, pattern) for pattern in self.images)


@lru_cache(maxsize=1)
def builtin_agents() -> tuple[Agent, ...]:
    data = json.loads(data_path("gpulint.data", "agents.json").read_text(encoding="utf-8"))
    return tuple(Agent.from_row(row) for row in data["agents"])


def image_registry(image: str) -> str:
    """``nvcr.io/nvidia/cuda:12.4.1-base`` -> ``nvcr.io``: the registry host of an image
    reference, in lower case, or ``""`` when it names none (Docker Hub). The host is the
    first component when it has a ``.`` or a ``:`` or is ``localhost`` (the Docker reference
    grammar)."""
    first, sep, _ = image.strip().lower().partition("/")
    return first if sep and ("." in first or ":" in first or first == "localhost") else ""


def image_repository(image: str) -> str:
    """``nvcr.io/nvidia/k8s-device-plugin:v0.17.0@sha256:...`` -> ``nvidia/k8s-device-plugin``:
    the reference without its registry host (:func:`image_registry`), tag and digest."""
    ref = image.strip().lower().split("@", 1)[0]
    host = image_registry(ref)
    if host:
        ref = ref[len(host) + 1 :]
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        ref = ref[:colon]
    return ref


def image_tag(image: str) -> str:
    """``nvcr.io/nvidia/cuda:12.4.1-base@sha256:...`` -> ``12.4.1-base``: the tag of an image
    reference, in lower case, without the digest; "" when it has none (a registry host's
    port is not a tag)."""
    last = image.strip().lower().split("@", 1)[0].rpartition("/")[2]
    return last.partition(":")[2]


#: NVIDIA's CUDA and NGC framework images (repository, without registry host, tag or
#: digest): built on CUDA, they set NVIDIA_VISIBLE_DEVICES=all in their environment
#: (gitlab.com/nvidia/container-images/cuda). GPU043 and GPU028 read them.
NVIDIA_CUDA_IMAGES = (
    "nvidia/cuda",
    "nvidia/pytorch",
    "nvidia/tensorflow",
    "nvidia/tritonserver",
    "nvidia/tensorrt",
    "nvidia/nemo",
    "nvidia/jax",
    "nvidia/cuda-dl-base",
    "nvidia/cuquantum-appliance",
)


def glob_match(text: str, pattern: str) -> bool:
    """``fnmatch.fnmatchcase(text, pattern)``, without compiling a regular expression for
    a pattern whose only wildcard is ``*`` (every pattern of ``gpulint/data/agents.json``).

    fnmatch translates each pattern into a regular expression on first use: for the 75
    agent patterns that was ~8 ms, paid by every run that meets a DaemonSet, a one-file
    pre-commit run included. ``*`` matches any run of characters (``/`` too), so a pattern
    ``a*b*c`` matches when the text starts with ``a``, ends with ``c`` and holds ``b`` in
    between; ``?`` and ``[...]`` still go to fnmatch.
    """
    if "?" in pattern or "[" in pattern:
        from fnmatch import fnmatchcase

        return fnmatchcase(text, pattern)
    parts = pattern.split("*")
    if len(parts) == 1:
        return text == pattern
    first, last = parts[0], parts[-1]
    if len(text) < len(first) + len(last) or not (text.startswith(first) and text.endswith(last)):
        return False
    at, end = len(first), len(text) - len(last)
    for part in parts[1:-1]:
        found = text.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return True


@lru_cache(maxsize=4096)
def _first_agent(text: str, field: str) -> int | None:
    """The index of the first agent whose ``field`` globs match ``text``: a repository's
    manifests name the same few images and DaemonSets again and again."""
    for index, agent in enumerate(builtin_agents()):
        if any(glob_match(text, p) for p in getattr(agent, field)):
            return index
    return None


#: A DaemonSet named for its vendor's device plugin (``xdxct-device-plugin-ds``).
_VENDOR_PLUGIN = re.compile(r"^([a-z0-9]+)-(?:k8s-|gpu-)?device-plugin")
#: Words before ``-device-plugin`` that name no vendor.
_NO_VENDOR = frozenset({"gpu", "k8s", "kube", "kubernetes", "node", "accel", "accelerator"})


def _names_other_vendor(name: str, agent: Agent) -> bool:
    """Whether a DaemonSet's name says it runs another vendor's device plugin than the
    ``agent`` its image matched: a fork keeps NVIDIA's repository name (``k8s-device-plugin``,
    which ``*/k8s-device-plugin`` matches) under its own name (``xdxct-device-plugin-ds``),
    and serves its own vendor's GPUs, not NVIDIA's."""
    match = _VENDOR_PLUGIN.match(name)
    if match is None or agent.hardware is None:
        return False
    vendor = match.group(1)
    return vendor not in _NO_VENDOR and agent.hardware not in vendor


def find_agent(pod: PodSpec, extra_images: tuple[str, ...] = ()) -> Agent | None:
    """The GPU node agent this pod spec runs, if it is one (any kind; callers decide
    whether only DaemonSets count). ``extra_images`` are more image globs, reported as a
    generic agent with warning severity."""
    images = [
        image_repository(c.data["image"])
        for c in pod.containers
        if isinstance(c.data.get("image"), str) and c.section != "ephemeralContainers"
    ]
    name = (pod.obj.ref.name or "").lower()
    # The object's name first: one image may hold several agents (GPU Feature Discovery
    # ships in the device plugin's image), and the name says which one this is.
    first = _first_agent(name, "names") if name else None
    if first is None:
        # The first agent in the table's order that any image matches.
        found = [_first_agent(image, "images") for image in images]
        first = min((i for i in found if i is not None), default=None)
        if first is not None and _names_other_vendor(name, builtin_agents()[first]):
            first = None
    if first is None:
        first = _command_agent(pod)
    if first is not None:
        return builtin_agents()[first]
    for pattern in extra_images:
        if any(glob_match(image, pattern.lower()) for image in images):
            return Agent("GPU node agent", (pattern,), (), None, "warning", "it never runs there")
    return None


@lru_cache(maxsize=1)
def _programs() -> frozenset[str]:
    """The programs of every row's ``commands``."""
    return frozenset(c[0] for a in builtin_agents() for c in a.commands)


def _command_agent(pod: PodSpec) -> int | None:
    """The index of the first row one of whose ``commands`` a container of the pod runs: the
    program (a word's base name) followed, before the end of its shell command, by each of
    the row's options (``-c`` or ``-c=3``). Command lines are split only when they name a
    program of the table."""
    programs = _programs()
    for container in pod.containers:
        if container.section == "ephemeralContainers" or not _names_program(container, programs):
            continue
        texts = _words(container)
        for index, agent in enumerate(builtin_agents()):
            if any(_runs(texts, command) for command in agent.commands):
                return index
    return None


def _words(container: Any) -> list[str]:
    """The words of ``command`` then ``args``, a shell script's split (variables as written)."""
    out: list[str] = []
    for field in ("command", "args"):
        items = container.data.get(field)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, str):
                out.extend(split(item) if any(c.isspace() for c in item.strip()) else [item])
    return out


def _names_program(container: Any, programs: frozenset[str]) -> bool:
    for field in ("command", "args"):
        items = container.data.get(field)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, str) and any(p in item for p in programs):
                return True
    return False


def _runs(texts: list[str], command: tuple[str, ...]) -> bool:
    """Whether ``texts`` run ``command``. A command whose first option is a word
    (``nvidia-smi mig``) is that subcommand; one whose options are flags is the program
    itself, not a subcommand of it (``nvidia-smi dmon -c 10`` counts samples)."""
    program, options = command[0], command[1:]
    for i, text in enumerate(texts):
        if text.rsplit("/", 1)[-1] != program:
            continue
        following = texts[i + 1] if i + 1 < len(texts) else ""
        subcommand = bool(options) and not options[0].startswith("-")
        if subcommand and following != options[0]:
            continue
        if (
            not subcommand
            and options
            and following
            and not following.startswith("-")
            and following not in _SEPARATORS
        ):
            continue  # a subcommand's options are not the program's
        rest: set[str] = set()
        for word in texts[i + 1 :]:
            if word in _SEPARATORS:
                break
            rest.add(word.partition("=")[0].lower())
        if all(option in rest for option in options):
            return True
    return False
