"""A container uses a path that only an init container mounts.

## What it does
Flags a path in a container's `command` or `args` that lies at or under the `mountPath` of
a volume only the pod's init containers mount, when the container mounts nothing at that
path, above it or under it, at the first `command` or `args` item that names it. The usual
shape is a research pod whose init container clones a repository into an `emptyDir` at
`/opt/repo`, and whose GPU container runs `cd /opt/repo/project && python train.py` without
mounting that volume. A mount path of `/`, and a path that appears only inside a longer
one (`/data` in `/data2`), are left alone, and so is a Kustomize patch linted alone (GL203):
its base may hold the mount. A written path is compared at its first 32 components (a mount
path deeper than that is not judged).

## Why it matters
A volume is seen only by the containers that mount it. What the init container put in the
volume is not at that path in the other container, which sees its image's own directory
there, usually none: `cd` fails, the training script is missing, and a pod that holds GPUs
runs nothing (or its script's fallback, often `sleep infinity`).

## Example
```yaml
initContainers:
  - name: init-clone-repo
    image: alpine/git
    args: [clone, --single-branch, https://github.com/example/project, /opt/repo/project]
    volumeMounts: [{name: git-repo, mountPath: /opt/repo}]
containers:
  - name: gpu-container
    command: [sh, -c, "cd /opt/repo/project && python3 train.py"]   # GPU071
    volumeMounts: [{name: data, mountPath: /data}]
```

## Use instead
```yaml
containers:
  - name: gpu-container
    command: [sh, -c, "cd /opt/repo/project && python3 train.py"]
    volumeMounts:
      - {name: data, mountPath: /data}
      - {name: git-repo, mountPath: /opt/repo}
```

## Options
None.

## References
- https://kubernetes.io/docs/concepts/storage/volumes/ ("a process in a container sees a
  filesystem view composed from the initial contents of the container image, plus volumes
  (if defined) mounted inside the container")
- https://kubernetes.io/docs/concepts/workloads/pods/init-containers/
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import Any

from gpulint.api import Container, PodSpec, RuleContext, Violation

CODE = "GPU071"
NAME = "init-output-not-mounted"
SEVERITY = "warning"
SCOPE = "pod"
OPTIONS: dict[str, object] = {}
WHOLE_OBJECT = True  # GL203: a patch, or the base a patch completes, may add the mount
PLACEMENT_FREE = True  # runs on a base whose patches change only where its pods run

#: A path written in a command line: a ``/`` that no word, path or option name runs into,
#: and what a path may hold (up to a space, a quote, a shell operator, ``:``, ``,`` or ``=``).
_PATH = r"(?<![\w./-])/[^\s'\";&|)`:,=]*"
#: The deepest mount path compared, in components: a written path is looked up at each of
#: its first components only, so a long one costs no more than this many look-ups.
MAX_DEPTH = 32


def _mounts(container: Container) -> dict[str, str]:
    """The container's mounts: normalised mount path -> volume name."""
    out: dict[str, str] = {}
    mounts = container.data.get("volumeMounts")
    for mount in mounts if isinstance(mounts, list) else ():
        if not isinstance(mount, dict):
            continue
        name, path = mount.get("name"), mount.get("mountPath")
        if isinstance(name, str) and isinstance(path, str) and path.startswith("/"):
            out.setdefault(posixpath.normpath(path), name)
    return out


def _prefixes(path: str) -> Iterator[str]:
    """``path`` cut after each of its first components (``/opt``, ``/opt/repo``, ...),
    then whole, at most ``MAX_DEPTH`` of them."""
    at = 0
    for _ in range(MAX_DEPTH):
        at = path.find("/", at + 1)
        if at < 0:
            break
        yield path[:at]
    yield path.rstrip("/") or "/"


class _Mounted:
    """What a container mounts, asked whether a path is at, under or above one of its
    mounts (each question costs the path's components, not the container's mounts)."""

    def __init__(self, container: Container) -> None:
        self.paths = set(_mounts(container))
        #: Every directory above a mount: a path among them holds a mount below it.
        self.above = {p for path in self.paths for p in list(_prefixes(path))[:-1]}

    def related(self, path: str) -> bool:
        if "/" in self.paths or path in self.above:
            return True
        return any(p in self.paths for p in _prefixes(path))


def check(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    inits = [c for c in pod.containers if c.section == "initContainers"]
    if not inits:
        return
    apps = [c for c in pod.containers if c.section == "containers"]
    app_volumes = {name for c in apps for name in _mounts(c).values()}
    # Volumes only init containers mount: mount path -> (volume, the init container).
    init_only: dict[str, tuple[str, Container]] = {}
    for init in inits:
        for path, volume in _mounts(init).items():
            if volume not in app_volumes and path != "/":
                init_only.setdefault(path, (volume, init))
    if not init_only:
        return
    for container in apps:
        found = _first_use(container, init_only, _Mounted(container))
        if found is None:
            continue
        field, index, at, used = found
        volume, init = init_only[used]
        yield Violation(
            (*container.path, field, index),
            f"container {container.label} uses {used}, where only init container "
            f"{init.label} mounts volume {volume}: this container does not see its files",
            at="value",
            within=at,
            help=f"mount {volume} at {used} in {container.label} too (a volume is seen only by "
            "the containers that mount it)",
        )


def _first_use(
    container: Container, init_only: dict[str, Any], mounted: _Mounted
) -> tuple[str, int, tuple[int, int], str] | None:
    """The first ``command`` or ``args`` item that writes a path at or under one of
    ``init_only``'s that the container does not mount: field, index, the place in the item
    and the init container's path. One pass over each item's paths."""
    pattern = re.compile(_PATH)  # re caches the compiled pattern
    for field in ("command", "args"):
        items = container.data.get(field)
        for index, item in enumerate(items if isinstance(items, list) else ()):
            if not isinstance(item, str) or "/" not in item:
                continue
            for match in pattern.finditer(item):
                written = match.group(0)
                for prefix in _prefixes(written):
                    if prefix in init_only and not mounted.related(prefix):
                        return field, index, (match.start(), len(prefix)), prefix
    return None
