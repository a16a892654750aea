"""An image tag its publisher deleted (NVIDIA's old CUDA tags, Bitnami's), so the pull fails.

## What it does
Flags a container's `image` whose tag the registry it names no longer serves, for the two
publishers that deleted tags in bulk:

- NVIDIA's CUDA images on Docker Hub or NGC (`nvidia/cuda`, `docker.io/nvidia/cuda`,
  `nvcr.io/nvidia/cuda`): `latest`, or no tag at all (which pulls `latest`; NVIDIA stopped
  publishing it for its CUDA, CUDAGL and OpenGL images in 2021, so `nvidia/cudagl` and
  `nvidia/opengl` too); a tag of CUDA 10 or older (`10.0-base`, `9.0-devel`), or of CUDA 11
  written without its update number (`11.0-base`); a tag of a CUDA release up to 12.6.3 that
  NVIDIA's tag lists no longer hold (`11.4.2-base-ubuntu20.04`, `11.7.0-runtime-ubuntu22.04`):
  only the last update of each release stays; or a tag of such a release without its
  operating system (`12.2.0-base`), which was never published.
- Bitnami's images on Docker Hub (`bitnami/<name>`, `docker.io/bitnami/<name>`) with any tag
  but `latest` (`bitnami/kubectl:1.29`, `docker.io/bitnami/postgresql:16.1.0-debian-11-r15`):
  since September 2025 `docker.io/bitnami` holds only the `latest` tag of a few hardened
  images, and the versioned tags moved to `docker.io/bitnamilegacy`, frozen. Sealed Secrets'
  images (`bitnami/sealed-secrets-controller`, ...), `bitnami/minideb` and `v`-prefixed
  release tags of Bitnami's other projects are not part of that catalog and are left alone.

A tag of a CUDA release newer than 12.6.3, a tag that is not a CUDA version, an image pinned
by digest, an image from any other registry (a mirror may keep what was deleted) and a
chart's `{repository, tag}` values are left alone, as is an image that a chart's values give
without a tag (the chart supplies it).

## Why it matters
The kubelet's pull fails with `manifest unknown` or `not found`: the pod stays in
`ErrImagePull` / `ImagePullBackOff` and never runs. NVIDIA's CUDA container support policy
deletes a tag from Docker Hub and NGC six months after the last driver branch it shipped
with reaches its end of life, or once a newer update of the same CUDA release is out; the
deletions began in May 2023, and every CUDA 10 tag is gone. Old device plugin READMEs and
tutorials still show `nvidia/cuda:10.0-base` and `nvidia/cuda:latest`. Bitnami's images
were the default of countless charts and Jobs (`bitnami/kubectl` to label GPU nodes,
`bitnami/redis` beside a model server): pinned versions stopped pulling when the catalog
moved.

## Example
```yaml
containers:
- name: cuda-test
  image: nvidia/cuda:10.0-base   # GPU077
  resources:
    limits:
      nvidia.com/gpu: 1
```

## Use instead
```yaml
containers:
- name: cuda-test
  image: nvidia/cuda:12.6.3-base-ubuntu22.04
  resources:
    limits:
      nvidia.com/gpu: 1
```

## Options
None. NVIDIA's published tags are those of its tag lists at the CUDA 12.6.3 update
(2024-12-03); a newer release is not judged.

## References
- NVIDIA CUDA container images, `doc/README.md` ("Deprecated: latest tag": `manifest for
  nvidia/cuda:latest not found: manifest unknown`),
  https://gitlab.com/nvidia/container-images/cuda/-/blob/master/doc/README.md
- NVIDIA CUDA container support policy (tags deleted six months after their driver's end of
  life), https://gitlab.com/nvidia/container-images/cuda/-/blob/master/doc/support-policy.md
- `doc/supported-tags.md` and `doc/unsupported-tags.md` ("these tags still exist") at the
  CUDA 12.6.3 update, https://gitlab.com/nvidia/container-images/cuda/-/tree/master/doc
- NVIDIA/nvidia-docker issues 1735, 1768 and 1790 (`11.0-base-ubuntu20.04`, CUDA 10.2 and
  10.0 tags: `manifest unknown`)
- "Upcoming changes to the Bitnami catalog", https://github.com/bitnami/containers/issues/83267
  (versioned tags moved to `docker.io/bitnamilegacy`; `docker.io/bitnami` deleted on
  2025-09-29 but for a subset of `latest` tags); bitnami/containers issue 96169 (versioned
  tags `not found`, 2026); bitnami/sealed-secrets issue 1790 (Sealed Secrets unaffected);
  bitnami/charts issue 36229 (tags of `debian-10` and older bases not copied)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from gpulint.api import (
    PodSpec,
    RuleContext,
    Violation,
    image_registry,
    image_repository,
    image_tag,
    in_chart_values,
)

CODE = "GPU077"
NAME = "image-tag-not-published"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, Any] = {}

#: NVIDIA's repositories whose ``latest`` tag is gone (doc/README.md, "Deprecated").
LATEST_GONE = frozenset({"nvidia/cuda", "nvidia/cudagl", "nvidia/opengl"})

#: Docker Hub's names (no host at all is Docker Hub too).
DOCKER_HUB = frozenset({"", "docker.io", "index.docker.io", "registry-1.docker.io"})

#: Registries that serve NVIDIA's own copies: Docker Hub and NGC.
NVIDIA_REGISTRIES = DOCKER_HUB | {"nvcr.io"}

#: The CUDA releases with tags still published on Docker Hub and NGC, from NVIDIA's
#: ``doc/supported-tags.md`` and ``doc/unsupported-tags.md`` at the CUDA 12.6.3 update
#: (gitlab.com/nvidia/container-images/cuda, 2024-12-03).
PUBLISHED = frozenset(
    {
        (11, 0, 3), (11, 1, 1), (11, 2, 2), (11, 3, 1), (11, 4, 3), (11, 5, 2), (11, 6, 1),
        (11, 6, 2), (11, 7, 1), (11, 8, 0), (12, 0, 0), (12, 0, 1), (12, 1, 0), (12, 1, 1),
        (12, 2, 0), (12, 2, 2), (12, 3, 0), (12, 3, 1), (12, 3, 2), (12, 4, 0), (12, 4, 1),
        (12, 5, 0), (12, 5, 1), (12, 6, 0), (12, 6, 1), (12, 6, 2), (12, 6, 3),
    }
)  # fmt: skip

#: The newest release the lists know: a later one is not judged.
NEWEST = (12, 6, 3)

#: Images under ``docker.io/bitnami`` that are no part of Bitnami's application catalog:
#: Sealed Secrets' (bitnami/sealed-secrets issue 1790) and the minideb base image.
BITNAMI_OTHERS = ("sealed-secrets", "minideb")

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?(?=-|$)")
#: A tag of a release with no operating system (``12.2.0-base``): every published tag of a
#: release names one (``12.2.0-base-ubuntu22.04``, ``-ubi9``, ``-rockylinux9``).
_NO_OS = re.compile(r"\d+\.\d+\.\d+(?:-(?:cudnn\d*-)?(?:base|runtime|devel))?")

#: Bases whose tags Bitnami did not copy to bitnamilegacy (bitnami/charts issue 36229).
_OLD_BASE = re.compile(r"-(debian-(8|9|10)|centos-7|ol-7)(-|$)")

#: Why a tag is gone, as the message says it.
_WHY = {
    "latest": "NVIDIA stopped publishing latest in 2021",
    "old": "NVIDIA deleted the tags of CUDA 10 and older, and 11.x tags without an update",
    "retired": "only the last update of a CUDA release stays published",
    "no-os": "every CUDA tag names its operating system, such as -ubuntu22.04",
    "bitnami": "docker.io/bitnami keeps only a few latest tags since September 2025",
}


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    for container in pod.containers:
        image = container.data.get("image")
        if not isinstance(image, str) or not image.strip():
            continue  # a chart's {repository, tag}: the chart may supply the tag
        image = image.strip()
        why = _gone(image)
        if why is None:
            continue
        if why == "untagged" and (pod.found_by != "table" or in_chart_values(pod.obj, pod.path)):
            continue  # values a chart writes into its pods: the tag may be another key
        repository, tag = _split(image)
        if why == "untagged":
            message = (
                f"{repository} has no tag, so it pulls latest, which NVIDIA no longer "
                "publishes: the pull fails"
            )
        else:
            state = "was never published" if why == "no-os" else "is no longer published"
            message = f"{repository}:{tag} {state} ({_WHY[why]}): the image pull fails"
        yield Violation(
            (*container.path, "image"), message, at="value", help=_help(repository, tag, why)
        )


def _split(image: str) -> tuple[str, str]:
    """``nvcr.io/nvidia/cuda:10.0-base`` -> (``nvcr.io/nvidia/cuda``, ``10.0-base``), as
    written (the message shows the reference as the manifest has it)."""
    head, _, last = image.rpartition("/")
    name, _, tag = last.partition(":")
    return (f"{head}/{name}" if head else name), tag


def _gone(image: str) -> str | None:
    """Why ``image``'s tag is not published ("untagged", "latest", "old", "retired",
    "no-os", "bitnami"), or None when it is, or when gpulint cannot know."""
    if "@" in image or any(c in image for c in "{}$<>"):
        return None  # pinned by digest, or a placeholder
    host, repository, tag = image_registry(image), image_repository(image), image_tag(image)
    if host in DOCKER_HUB and repository.startswith("bitnami/"):
        name = repository.partition("/")[2]
        if not tag or tag == "latest" or tag.startswith("v") or "/" in name:
            return None
        if any(name.startswith(other) for other in BITNAMI_OTHERS):
            return None
        return "bitnami"
    if host not in NVIDIA_REGISTRIES:
        return None
    if repository in LATEST_GONE and tag in ("", "latest"):
        return "untagged" if not tag else "latest"
    if repository != "nvidia/cuda":
        return None
    match = _VERSION.match(tag)
    if match is None:
        return None
    major = int(match[1])
    if major <= 10:
        return "old"
    if match[3] is None:
        return "old" if major == 11 else None
    version = (major, int(match[2]), int(match[3]))
    if version > NEWEST:
        return None
    if version not in PUBLISHED:
        return "retired"
    if _NO_OS.fullmatch(tag):
        return "no-os"
    return None


def _help(repository: str, tag: str, why: str) -> str:
    if why == "bitnami":
        legacy = repository.replace("bitnami/", "bitnamilegacy/", 1)
        if _OLD_BASE.search(tag):
            return (
                "use another image of the program (Bitnami copied no tags of debian-10 and "
                "older bases to bitnamilegacy)"
            )
        return (
            f"pull {legacy}:{tag} (a frozen copy, no security updates) or another image of "
            "the program"
        )
    if why == "no-os":
        flavoured = tag if "-" in tag else f"{tag}-base"
        major, minor = (int(p) for p in tag.split(".")[:2])
        system = "ubuntu22.04" if (major, minor) >= (11, 7) else "ubuntu20.04"
        return (
            f"name the operating system: {repository}:{flavoured}-{system} (NVIDIA's "
            "doc/supported-tags.md lists the tags)"
        )
    return (
        f"use a published tag, such as {repository}:{_suggestion(tag)} (NVIDIA's "
        "doc/supported-tags.md lists them)"
    )


def _suggestion(tag: str) -> str:
    """A published tag of the flavour ``tag`` names (base, runtime, devel; with cuDNN)."""
    words = set(tag.lower().split("-"))
    cudnn = any(w.startswith("cudnn") for w in words)
    for flavour in ("devel", "runtime"):
        if flavour in words:
            return f"12.6.3-{'cudnn-' if cudnn else ''}{flavour}-ubuntu22.04"
    return "12.6.3-base-ubuntu22.04"
