"""Engines and launchers that start one process per GPU (``gpulint/data/engines.json``), and the
command lines that start them.

An engine is recognised by a word of a container's command line or by its image; the number
of GPUs it uses is the product of its factors (tensor times pipeline parallelism, processes
per node), read from the options of its own command: the words from the engine's command to
the end of its shell command (``;``, ``&&``, ``|``, a new line), and for a launcher only up
to the program it starts (whose own options are not the launcher's). ``command`` and
``args`` are read as lists and shell scripts (``sh -c "..."``, split as a POSIX shell splits
words); ``$(VAR)``, ``$VAR`` and ``${VAR}`` are replaced by the values the caller knows
(``gpulint.k8s.envvalues``). GPU041 compares the number with the GPUs the container holds,
GPU042 asks whether several processes share the container.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from gpulint.data import data_path
from gpulint.k8s.envvalues import Source
from gpulint.k8s.shellwords import SEPARATORS as _SEPARATORS, split as _split
from gpulint.k8s.workloads import Container, K8sObject
from gpulint.model import Path

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


class Factor:
    """One multiplier of the GPUs an engine uses, and the options that set it."""

    __slots__ = ("default", "env", "flags", "name")

    def __init__(self, row: dict[str, Any]) -> None:
        self.name: str = row["name"]
        self.flags: tuple[str, ...] = tuple(row["flags"])
        #: A variable the engine reads the value from when no option gives it.
        self.env: str | None = row.get("env")
        #: The value when nothing gives it; None: not known.
        self.default: int | None = row.get("default")


class Engine:
    """One row of ``gpulint/data/engines.json``. (A plain class: a NamedTuple costs every start-up
    ten times as much to define, see docs/architecture.md.)"""

    __slots__ = (
        "commands", "config_files", "divided_by", "factors", "images", "implied_unless",
        "launcher", "name", "over", "processes_only",
        "replicas", "scope", "single_process", "under", "unknown_if",
    )  # fmt: skip

    def __init__(self, row: dict[str, Any]) -> None:
        self.name: str = row["engine"]
        #: Words of the command line that start the engine (two words: one after the other).
        self.commands: tuple[str, ...] = tuple(row["commands"])
        #: Globs over the image repository.
        self.images: tuple[str, ...] = tuple(row.get("images", ()))
        self.factors = tuple(Factor(f) for f in row["factors"])
        #: Options whose value divides the product: a total over that many machines.
        self.divided_by: tuple[str, ...] = tuple(row.get("divided_by", ()))
        #: Options naming a configuration file that gives what the command line leaves unset.
        self.config_files: tuple[str, ...] = tuple(row.get("config_files", ()))
        self.replicas: tuple[str, ...] = tuple(row.get("replicas", ()))
        self.unknown_if: tuple[str, ...] = tuple(row.get("unknown_if", ()))
        #: "engine": the product counts the GPUs of every node the engine spans; "node":
        #: one node's (the container's).
        self.scope: str = row["scope"]
        self.over: str = row["over"]
        self.under: bool = row["under"]
        #: Its options end at the program it starts.
        self.launcher: bool = row.get("launcher", False)
        #: It drives every GPU from one process.
        self.single_process: bool = row.get("single_process", False)
        #: Its factors count processes it binds no device to (mpirun): not GPUs.
        self.processes_only: bool = row.get("processes_only", False)
        #: Its factors' defaults are documented (``implied_defaults``): the options that name
        #: a file which may set them all the same; None: the defaults are not assumed.
        implied = row.get("implied_defaults")
        self.implied_unless: tuple[str, ...] | None = (
            tuple(implied["unless"]) if isinstance(implied, dict) else None
        )


@lru_cache(maxsize=1)
def builtin_engines() -> tuple[Engine, ...]:
    data = json.loads(data_path("gpulint.data", "engines.json").read_text(encoding="utf-8"))
    return tuple(Engine(row) for row in data["engines"])


@lru_cache(maxsize=1)
def generic_engine() -> Engine:
    """Any container whose options use vLLM's long flags (KServe's vLLM runtime, with no
    command or image of its own): vLLM and SGLang, and engines built on them, mean the same.
    Not measured for under-use: the runtime may add options the manifest does not show."""
    return Engine(
        {
            "engine": "vLLM/SGLang",
            "commands": [],
            "factors": [
                {"name": "tensor parallel", "flags": ["--tensor-parallel-size"], "default": 1},
                {"name": "pipeline parallel", "flags": ["--pipeline-parallel-size"], "default": 1},
            ],
            "scope": "engine",
            "over": "error",
            "under": False,
        }
    )


class Word:
    __slots__ = ("path", "text", "used")

    def __init__(self, text: str, path: Path, used: tuple[tuple[str, Source], ...] = ()) -> None:
        self.text = text
        #: The list item (or env value) the word was read from.
        self.path = path
        #: The variables expanded in that item, with their sources.
        self.used = used


class Started:
    """An engine a container starts: its row, every word of the command line, and the words
    of the engine's own command (where its options are read)."""

    __slots__ = ("engine", "own", "starts", "words")

    def __init__(self, engine: Engine, words: list[Word], own: list[Word], starts: int) -> None:
        self.engine = engine
        self.words = words
        self.own = own
        #: How many times the command line starts the engine.
        self.starts = starts


#: ``$$`` (Kubernetes' escaped ``$``), ``$(VAR)``, ``${VAR}``, ``$VAR``.
#: (A pattern: compiled on first use, see docs/architecture.md.)
_VAR = (
    r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)"
)
#: What a shell removes from a word (quotes, escapes): ``"vl"lm`` is the word ``vllm``.
_UNQUOTE = str.maketrans("", "", "'\"\\")


@lru_cache(maxsize=1)
def _keywords() -> tuple[str, ...]:
    """A command line that starts an engine holds one of these."""
    words = {c.split(" ", 1)[0] for e in builtin_engines() for c in e.commands}
    return tuple(sorted(words | {f for f in generic_engine().factors[0].flags}))


#: KubeRay's kinds (``ray.io``): each head and worker group holds a pod template, KubeRay
#: runs ``ray start`` in its first container (ray-project/kuberay#1379) and mounts a memory
#: emptyDir at /dev/shm there (``ray-operator/controllers/ray/common/pod.go``).
KUBERAY_KINDS = frozenset({"RayCluster", "RayService", "RayJob"})
#: The kinds whose pods form a Ray cluster: KubeRay's, and AIBrix's fleet of RayClusters.
RAY_KINDS = KUBERAY_KINDS | {"RayClusterFleet"}


def kuberay_pod(obj: K8sObject) -> bool:
    """``obj`` (a pod spec's object) is a KubeRay resource, whose groups' pods KubeRay
    builds."""
    return obj.root.group == "ray.io" and obj.root.kind in KUBERAY_KINDS


def literal_env(container: Container) -> dict[str, Source]:
    """The container's literal ``env`` values (all ``may_start_engine`` needs to decide)."""
    out: dict[str, Source] = {}
    env = container.data.get("env")
    for item in env if isinstance(env, list) else ():
        if isinstance(item, dict) and isinstance(item.get("name"), str) and "value" in item:
            value = item["value"]
            if isinstance(value, (str, int)) and not isinstance(value, bool):
                out[item["name"]] = Source(str(value))
    return out


def may_start_engine(container: Container) -> bool:
    """False when ``find_engine`` cannot find an engine: no keyword in the command line
    (less quotes and escapes, once its variables are expanded) and no engine image.

    Most GPU containers run something else, and splitting their command lines as a shell
    does would be most of the time spent on them.
    """
    if container.made is not None:  # a chart's values: the command the chart writes
        made = "\n".join(text for text, _ in container.made.argv)
        return any(keyword in made for keyword in _keywords())
    texts = []
    for field in ("command", "args"):
        items = container.data.get(field)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, (str, int)) and not isinstance(item, bool):
                texts.append(str(item))
    blob = "\n".join(texts)
    if "$" in blob:
        env = literal_env(container)
        blob = "\n".join(expand(text, env) for text in texts)
    blob = blob.translate(_UNQUOTE)
    if any(keyword in blob for keyword in _keywords()):
        return True
    image = container.data.get("image")
    return isinstance(image, str) and _image_engine(image) is not None


def _image_engine(image: str) -> Engine | None:
    from gpulint.k8s.agents import image_repository  # GPU containers only

    return _repository_engine(image_repository(image))


@lru_cache(maxsize=1024)
def _repository_engine(repository: str) -> Engine | None:
    """Remembered by repository, not by image: tags change from one manifest to the next."""
    from gpulint.k8s.agents import glob_match

    for engine in builtin_engines():
        if any(glob_match(repository, p) for p in engine.images):
            return engine
    return None


def runs_own_image(image: str, started: Started) -> bool:
    """Is ``image`` one of the started engine's own images (whose entrypoint runs it and
    passes the arguments on as they are)?"""
    from gpulint.k8s.agents import glob_match, image_repository

    repository = image_repository(image)
    return any(glob_match(repository, p) for p in started.engine.images)


def command_words(container: Container, env: Mapping[str, Source]) -> list[Word]:
    """The words of ``command`` then ``args``; a shell script (``-c SCRIPT``) split."""
    out: list[Word] = []
    if container.made is not None:  # the chart's words, each one argument as it quotes them
        for text, path in container.made.argv:
            expanded: list[tuple[str, Source]] = []
            out.append(Word(expand(text, env, expanded), path, tuple(expanded)))
        return out
    for field in ("command", "args"):
        items = container.data.get(field)
        if not isinstance(items, list):
            continue
        for index, item in enumerate(items):
            if isinstance(item, bool) or not isinstance(item, (str, int)):
                continue
            used: list[tuple[str, Source]] = []
            text = expand(str(item), env, used)
            path = (*container.path, field, index)
            if any(c.isspace() for c in text.strip()):
                out.extend(Word(w, path, tuple(used)) for w in _split(text))
            else:
                out.append(Word(text, path, tuple(used)))
    return out


def expand(
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


def find_engine(container: Container, found: list[Word]) -> Started | None:
    """The first engine of the table the command line starts, else the image's, else the
    generic one when vLLM's long options are given."""
    texts = [w.text for w in found]
    for engine in builtin_engines():
        own: list[Word] = []
        end = starts = 0
        for i in range(len(texts)):
            # A start inside the previous one's command is a word of it (a path ending in
            # /vllm): its words are already taken, and its command ends where that one
            # does (looking for the end again from each such word was quadratic).
            if i >= end and _starts(engine, texts, i):
                starts += 1
                end = _end(engine, found, i)
                own.extend(found[i:end])
        if starts:
            return Started(engine, found, own, starts)
    image = container.data.get("image")
    if isinstance(image, str) and (by_image := _image_engine(image)) is not None:
        return Started(by_image, found, found, 1)
    generic = generic_engine()
    if any(t.partition("=")[0] in generic.factors[0].flags for t in texts):
        return Started(generic, found, found, 1)
    return None


#: Words after which a word is a program the shell runs: ``exec vllm``, ``python -m vllm``,
#: ``nohup``, ``env``.
_RUNNERS = frozenset({"exec", "-m", "nohup", "env", "time"})
#: The option of a shell that takes a script (``sh -c``, ``bash -ec``, ``bash -exc``).
#: (A pattern: compiled on first use, see docs/architecture.md.)
_SCRIPT_OPTION = r"-[a-z]*c[a-z]*"


#: Programs that run a script given after ``-c``.
SHELL_PROGRAMS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})


def shell_script(container: Container) -> tuple[Path, str] | None:
    """The ``command`` or ``args`` item a shell runs as its script, with its path: the item
    after the ``-c`` option (``-c``, ``-ec``, ``-lc``, ...) of a shell that ``command``
    starts (``[/bin/bash, -c, SCRIPT]``, or ``[sh, -c]`` with the script first in
    ``args``; a ``--`` after the option ends the options, and the script follows it).
    None when ``command`` starts no shell (an image's entrypoint may be one, unseen)."""
    command = container.data.get("command")
    first = command[0] if isinstance(command, list) and command else None
    if not isinstance(first, str) or first.strip().rsplit("/", 1)[-1] not in SHELL_PROGRAMS:
        return None  # what most containers are: asked first, nothing built
    items: list[tuple[Path, object]] = []
    for field in ("command", "args"):
        value = container.data.get(field)
        if isinstance(value, list):
            items.extend(((*container.path, field, i), v) for i, v in enumerate(value))
    for i, (_, item) in enumerate(items[1:], 1):
        if not isinstance(item, str) or not item.startswith("-"):
            break  # the shell's options end at its first operand
        if re.fullmatch(_SCRIPT_OPTION, item.strip()):
            at = i + 1
            if at < len(items) and items[at][1] == "--":
                at += 1  # ``bash -c -- SCRIPT``: the end of the options, then the script
            if at >= len(items):
                return None
            path, script = items[at]
            return (path, script) if isinstance(script, str) else None
    return None


def started_by_command(started: Started) -> bool:
    """Whether the engine's own command starts it (``vllm serve``), as a program the shell
    runs (first of the command line or of a shell command, after ``exec`` or ``python -m``;
    not ``pip install vllm``), not its image or its options alone (an entrypoint or a
    serving runtime may add options the manifest does not show)."""
    own = started.own
    if not own or not _starts(started.engine, [own[0].text], 0):
        return False
    words = started.words
    at = next((i for i, w in enumerate(words) if w is own[0]), None)
    if at is None:
        return False
    if at == 0 or words[at - 1].text in _SEPARATORS or words[at - 1].text in _RUNNERS:
        return True
    before = words[at - 1].text
    if re.fullmatch(_SCRIPT_OPTION, before) and at >= 2:
        return words[at - 2].text.rsplit("/", 1)[-1] in SHELL_PROGRAMS
    return before.rsplit("/", 1)[-1].startswith("python")


def _starts(engine: Engine, texts: list[str], i: int) -> bool:
    text = texts[i]
    base = text.rsplit("/", 1)[-1]
    for command in engine.commands:
        first, _, second = command.partition(" ")
        if second:
            if base == first and i + 1 < len(texts) and texts[i + 1] == second:
                return True
        elif (
            base == command
            or text.startswith(command + ".")
            or (any(c in command for c in "._-") and command in text)
        ):
            return True
    return False


def _end(engine: Engine, found: list[Word], start: int) -> int:
    """Where the engine's own command that starts at ``start`` ends: at the end of the shell
    command, and for a launcher at the program it starts (``x.py``, ``python``, ``--``)."""
    end = start + 1
    while end < len(found):
        text = found[end].text
        if text in _SEPARATORS:
            break
        base = text.rsplit("/", 1)[-1]
        program = text == "--" or base.endswith((".py", ".sh")) or base.startswith("python")
        if engine.launcher and program:
            break
        end += 1
    return end


def flag_value(found: list[Word], flags: tuple[str, ...]) -> tuple[int | None, Path] | None:
    """The last value given to any of ``flags`` (argparse: the last one wins), as a count."""
    given = flag_text(found, flags)
    return None if given is None else (int_value(given[0]), given[1])


def flag_text(found: list[Word], flags: tuple[str, ...]) -> tuple[str, Path] | None:
    """The last value given to any of ``flags`` as written (``--num-gpus=0``: ``0``), and
    its path; None when none is given."""
    out: tuple[str, Path] | None = None
    for i, word in enumerate(found):
        name, eq, value = word.text.partition("=")
        if name not in flags:
            continue
        if eq:
            out = (value, word.path)
        elif i + 1 < len(found):
            out = (found[i + 1].text, found[i + 1].path)
    return out


#: Dashes that are not the hyphen-minus an option starts with (text pasted from a web page or
#: a word processor), by name.
TYPOGRAPHIC_DASHES = {
    "\u2010": "a hyphen (U+2010)",
    "\u2011": "a non-breaking hyphen (U+2011)",
    "\u2012": "a figure dash (U+2012)",
    "\u2013": "an en dash (U+2013)",
    "\u2014": "an em dash (U+2014)",
    "\u2015": "a horizontal bar (U+2015)",
    "\u2212": "a minus sign (U+2212)",
    "\ufe63": "a small hyphen-minus (U+FE63)",
    "\uff0d": "a full-width hyphen-minus (U+FF0D)",
}
_DASHES = "".join(TYPOGRAPHIC_DASHES) + "-"


def malformed_option(text: str) -> str | None:
    """What makes ``text`` an option no engine's parser knows: ``"three hyphens"``
    (``---trust-remote-code``) or the typographic dash it starts with (``\u2014tp``); None
    for any other word (``---`` alone, a separator line, a value, a placeholder that a script
    replaces: between runs of dashes, ``---ADD-ARGS---``, as no option ends with a dash, or
    in capitals, ``---EXTRA``, as the engines' options are lower-case)."""
    name = text.partition("=")[0]
    if name.endswith(("-", *TYPOGRAPHIC_DASHES)) or not any(c.islower() for c in name):
        return None
    if text.startswith("---") and text.lstrip("-")[:1].isalpha():
        hyphens = len(text) - len(text.lstrip("-"))
        return "three hyphens" if hyphens == 3 else f"{hyphens} hyphens"
    if text[:1] in TYPOGRAPHIC_DASHES and text.lstrip(_DASHES)[:1].isalpha():
        return TYPOGRAPHIC_DASHES[text[0]]
    return None


def option_name(text: str) -> str:
    """The name of a malformed option (``malformed_option``), without its dashes or value."""
    return text.partition("=")[0].lstrip(_DASHES)


def has_flag(found: list[Word], flags: tuple[str, ...]) -> bool:
    return any(w.text.partition("=")[0] in flags or w.text in flags for w in found)


def int_value(text: str) -> int | None:
    text = text.strip().strip("'\"")
    # ASCII digits, and few of them: int() of 5,000 digits raises, of '²' too.
    if not (text.isascii() and text.isdigit() and len(text) <= 6):
        return None
    return int(text) if 0 < int(text) < 1_000_000 else None
