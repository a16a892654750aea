"""The folders a repository's Flux ``Kustomization`` objects build, read without running
anything.

Flux's kustomize-controller builds the folder a ``kustomize.toolkit.fluxcd.io``
``Kustomization`` names in ``spec.path`` (relative to its source's root, the repository)
with kustomize's load restrictor off (``LoadRestrictionsNone``): a base may name a file
outside its own folder (``../resources/claim.yaml``), which ``kubectl kustomize`` refuses.
A folder with no kustomization file is built from a kustomization Flux writes for it, whose
resources are its manifests and, for each subfolder with a kustomization file of its own,
that subfolder (not walked further). So a root is built by Flux when a ``spec.path`` is
its folder, or a folder above it with no kustomization file on the way down.

Read only when a root fails in the load restrictor (:mod:`gpulint.render.kustomize.build`),
once per repository and run; the files read are bounded in number and bytes.
"""

from __future__ import annotations

import os

from gpulint.render.kustomize.files import kustomization_file
from gpulint.util.walk import walk

#: The API group of Flux's Kustomization (its spec.path names the folder built).
FLUX_GROUP = "kustomize.toolkit.fluxcd.io/"
#: Files read at most, and bytes of each and of all, when looking for Flux Kustomizations.
MAX_FILES = 20_000
MAX_FILE_BYTES = 1 << 20
MAX_BYTES = 64 << 20
_SKIP = frozenset({".git", ".hg", ".svn", ".venv", "node_modules", "venv", "__pycache__"})


def flux_paths(repo: str) -> frozenset[str]:
    """The absolute folders the Flux Kustomizations written in ``repo`` name in
    ``spec.path`` (those inside the repository)."""
    from gpulint.loader.stream import load_text
    from gpulint.util import safefile

    top = os.path.realpath(repo)
    marker = FLUX_GROUP.encode()
    found: set[str] = set()
    files = spent = 0
    for dirpath, dirnames, filenames in walk(top):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP)
        for name in sorted(filenames):
            if not name.endswith((".yaml", ".yml")):
                continue
            files += 1
            if files > MAX_FILES or spent >= MAX_BYTES:
                return frozenset(found)
            path = os.path.join(dirpath, name)
            try:
                raw, _ = safefile.read_regular(path, MAX_FILE_BYTES)
            except OSError:
                continue
            if raw is None:
                continue
            spent += len(raw)
            if marker not in raw:
                continue
            try:
                docs = load_text(raw.decode("utf-8", "replace")).documents
            except Exception:  # a file gpulint cannot read names no folder
                continue
            for doc in docs:
                folder = _spec_path(doc.data, top)
                if folder is not None:
                    found.add(folder)
    return frozenset(found)


def _spec_path(data: object, top: str) -> str | None:
    if not isinstance(data, dict) or data.get("kind") != "Kustomization":
        return None
    api = data.get("apiVersion")
    spec = data.get("spec")
    if not isinstance(api, str) or not api.startswith(FLUX_GROUP) or not isinstance(spec, dict):
        return None
    path = spec.get("path")
    if path is None:
        path = "."  # Flux builds the source's root
    if not isinstance(path, str) or "$" in path:
        return None
    folder = os.path.normpath(os.path.join(top, path.strip().lstrip("/")))
    inside = folder == top or folder.startswith(top + os.sep)
    return folder if inside else None


def built_by_flux(folder: str, paths: frozenset[str]) -> bool:
    """Whether Flux builds the kustomization in ``folder``: a ``spec.path`` is the folder,
    or a folder above it from which no kustomization file stands in the way."""
    current = os.path.realpath(folder)
    if current in paths:
        return True
    while True:
        parent = os.path.dirname(current)
        if parent == current:
            return False
        current = parent
        if current in paths:
            return kustomization_file(current) is None
        if kustomization_file(current) is not None:
            return False
