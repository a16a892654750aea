"""GPU node agents: the DaemonSets that must run on every GPU node (``rules/agents.json``).

A device plugin, GPU Feature Discovery, the NFD worker, the DCGM exporter, the driver and
the container toolkit are recognised by data, not code: the repository of a container's
image (without registry host, tag or digest) or the object's own name, matched as
lower-case shell globs against the rows of ``rules/agents.json`` in order, names first.
"""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any, NamedTuple

from gpulint.data import data_path
from gpulint.workloads import PodSpec


class Agent(NamedTuple):
    """One row of ``rules/agents.json``."""

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
    data = json.loads(data_path("gpulint.rules", "agents.json").read_text(encoding="utf-8"))
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
    agents = builtin_agents()
    # The object's name first: one image may hold several agents (GPU Feature Discovery
    # ships in the device plugin's image), and the name says which one this is.
    for agent in agents if name else ():
        if any(fnmatchcase(name, p) for p in agent.names):
            return agent
    for agent in agents:
        if any(fnmatchcase(image, p) for image in images for p in agent.images):
            return agent
    for pattern in extra_images:
        if any(fnmatchcase(image, pattern.lower()) for image in images):
            return Agent("GPU node agent", (pattern,), (), None, "warning", "it never runs there")
    return None
