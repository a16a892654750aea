"""Regenerate ``gpulint/data/operator-fields.json`` from operators' release history.

The field names of each kind are the union of its CustomResourceDefinition's schema in every
release of the operator (tags ``vX.Y.Z``) and at the newest commit, so a field an older
release had and a newer one dropped is still a field. A level that any release left open
(``x-kubernetes-preserve-unknown-fields``, a map's ``additionalProperties``, no schema) stays
open: anything goes below it. A pod template (``metadata`` and a ``spec`` with
``containers``) is left open too: GPU024 checks pod specs against Kubernetes' own types.
Run with clones of the operators' repositories::

    .venv/bin/python -m tests.operator_fields gpu-operator=PATH/.git kuberay=PATH/.git
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
from typing import Any

from tests.conftest import ROOT

#: Operator -> its repository, and the CRD files of the kinds kept (by file name).
OPERATORS: dict[str, dict[str, Any]] = {
    "gpu-operator": {
        "repository": "https://github.com/NVIDIA/gpu-operator",
        "files": ("*nvidia.com_clusterpolicies*.yaml", "*nvidia.com_nvidiadrivers*.yaml"),
    },
    "kuberay": {
        "repository": "https://github.com/ray-project/kuberay",
        "files": (
            "ray.io_rayclusters.yaml",
            "ray.io_rayjobs.yaml",
            "ray.io_rayservices.yaml",
            "ray.io_raycronjobs.yaml",
        ),
    },
}


def _tree(schema: Any) -> Any:
    """``{field: subtree}`` for a closed object level, ``0`` for a leaf or an open level.
    (A CRD schema nests as deep as its types: a few dozen levels, its own repository's.)"""
    if not isinstance(schema, dict) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return 0
    if schema.get("type") == "array" or ("items" in schema and "properties" not in schema):
        return _tree(schema.get("items", {}))
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return 0
    spec = properties.get("spec")
    if (
        "metadata" in properties
        and isinstance(spec, dict)
        and "containers" in (spec.get("properties") or {})
    ):
        return 0  # a pod template: GPU024's
    return {name: _tree(sub) for name, sub in properties.items()}


def _merge(a: Any, b: Any) -> Any:
    """The union of two trees; a level open in either is open."""
    if not isinstance(a, dict) or not isinstance(b, dict):
        return 0
    out = dict(a)
    for name, sub in b.items():
        out[name] = _merge(out[name], sub) if name in out else sub
    return out


def _git(gitdir: str, *args: str) -> str:
    """The command's output; empty when it fails."""
    command = ["git", f"--git-dir={gitdir}", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False).stdout


def _releases(gitdir: str) -> list[str]:
    """The release tags (``vX.Y.Z`` or ``X.Y.Z``), oldest first, then ``HEAD``."""
    tags = _git(gitdir, "tag", "--list").split()
    released = [t for t in tags if t.lstrip("v").replace(".", "").isdigit() and t.count(".") == 2]
    released.sort(key=lambda tag: tuple(int(part) for part in tag.lstrip("v").split(".")))
    return [*released, "HEAD"]


def operator_kinds(gitdir: str, files: tuple[str, ...]) -> dict[str, Any]:
    import yaml

    kinds: dict[str, Any] = {}
    blobs: dict[str, None] = {}
    for rev in _releases(gitdir):
        for line in _git(gitdir, "ls-tree", "-r", rev).splitlines():
            meta, _, path = line.partition("\t")
            name = path.rsplit("/", 1)[-1]
            if "crd" in path.lower() and any(fnmatch.fnmatch(name, f) for f in files):
                blobs.setdefault(meta.split()[2])
    for blob in blobs:
        text = _git(gitdir, "cat-file", "blob", blob)
        try:
            docs = list(yaml.load_all(text, Loader=yaml.CSafeLoader))
        except yaml.YAMLError:
            continue  # a templated copy
        for doc in docs:
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc.get("spec") or {}
            kind, group = (spec.get("names") or {}).get("kind"), spec.get("group")
            holders = [spec.get("validation")]
            holders += [v.get("schema") for v in spec.get("versions") or []]
            for holder in holders:
                tree = _tree((holder or {}).get("openAPIV3Schema"))
                if isinstance(tree, dict) and isinstance(tree.get("spec"), dict):
                    key = f"{group}/{kind}"
                    kinds[key] = _merge(kinds[key], tree["spec"]) if key in kinds else tree["spec"]
    return kinds


def main(args: list[str]) -> None:
    sources: dict[str, Any] = {}
    kinds: dict[str, Any] = {}
    for arg in args:
        name, _, gitdir = arg.partition("=")
        operator = OPERATORS[name]
        found = operator_kinds(gitdir, operator["files"])
        releases = [r for r in _releases(gitdir) if r != "HEAD"]
        sources[name] = {
            "repository": operator["repository"],
            "commit": _git(gitdir, "rev-parse", "HEAD").strip(),
            "releases": f"{releases[0]}..{releases[-1]}" if releases else "",
            "kinds": sorted(found),
        }
        kinds.update(found)
    data = {"sources": sources, "kinds": {k: kinds[k] for k in sorted(kinds)}}
    target = ROOT / "gpulint" / "data" / "operator-fields.json"
    target.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
