"""GPU node agents: the DaemonSets that must run on every GPU node (``gpulint/data/agents.json``).

A device plugin, GPU Feature Discovery, the NFD worker, the DCGM exporter, the driver and
the container toolkit are recognised by data, not code: the repository of a container's
image (without registry host, tag or digest) or the object's own name, matched as
lower-case shell globs against the rows of ``gpulint/data/agents.json`` in order, names first.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, NamedTuple

from gpulint.data import data_path
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
        )


@lru_cache(maxsize=1)
def builtin_agents() -> tuple[Agent, ...]:
    data = json.loads(data_path("gpulint.data", "agents.json").read_text(encoding="utf-8"))
    return tuple(Agent.from_row(row) for row in data["agents"])


def image_repository(image: str) -> str:
    """``nvcr.io/nvidia/k8s-device-plugin:v0.17.0@sha256:...`` -> ``nvidia/k8s-device-plugin``.

    The registry host is the first component when it has a ``.`` or a ``:`` or is
    ``localhost`` (the Docker reference grammar); the tag and digest are dropped.
    """
    ref = image.strip().lower().split("@", 1)[0]
    first, sep, rest = ref.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        ref = rest
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        ref = ref[:colon]
    return ref


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
    if first is not None:
        return builtin_agents()[first]
    for pattern in extra_images:
        if any(glob_match(image, pattern.lower()) for image in images):
            return Agent("GPU node agent", (pattern,), (), None, "warning", "it never runs there")
    return None
