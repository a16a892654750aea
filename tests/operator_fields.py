"""Regenerate ``gpulint/data/operator-fields.json`` from the NVIDIA GPU Operator's history.

The field names of each kind are the union of every version of its CustomResourceDefinition
the operator's repository ever held (``config/crd/bases/``, ``bundle/*/manifests/``,
``deployments/gpu-operator/crds/``, ``deploy/crds/``), so a field an older release had and a
newer one dropped is still a field. A schema level that keeps unknown fields
(``x-kubernetes-preserve-unknown-fields``) or is a map (``additionalProperties``) is open:
anything goes below it. Run with a clone of https://github.com/NVIDIA/gpu-operator::

    .venv/bin/python -m tests.operator_fields PATH/TO/gpu-operator/.git
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from tests.conftest import ROOT

#: The kinds kept, by the group of the operator's API.
KINDS = {"ClusterPolicy": "nvidia.com", "NVIDIADriver": "nvidia.com"}
PATHS = ("*clusterpolicies*", "*nvidiadrivers*")


def _tree(schema: Any) -> Any:
    """``{field: subtree}`` for a closed object level, ``0`` for a leaf or an open level.
    (A CRD schema nests as deep as its types: a few dozen levels, its own repository's.)"""
    if not isinstance(schema, dict) or schema.get("x-kubernetes-preserve-unknown-fields"):
        return 0
    if schema.get("type") == "array" or ("items" in schema and "properties" not in schema):
        return _tree(schema.get("items", {}))
    properties = schema.get("properties")
    if isinstance(properties, dict) and properties:
        return {name: _tree(sub) for name, sub in properties.items()}
    return 0


def _merge(a: Any, b: Any) -> Any:
    if not isinstance(a, dict) or not isinstance(b, dict):
        return a if isinstance(a, dict) else b
    out = dict(a)
    for name, sub in b.items():
        out[name] = _merge(out[name], sub) if name in out else sub
    return out


def _git(gitdir: str, *args: str) -> str:
    """The command's output; empty when it fails (a path a commit deleted)."""
    command = ["git", f"--git-dir={gitdir}", *args]
    return subprocess.run(command, capture_output=True, text=True, check=False).stdout


def main(gitdir: str) -> None:
    import yaml

    head = _git(gitdir, "rev-parse", "HEAD").strip()
    listing = _git(gitdir, "log", "--all", "--format=%H", "--name-only", "--", *PATHS)
    blobs: dict[str, None] = {}
    commit = ""
    for line in listing.splitlines():
        if len(line) == 40 and " " not in line and "/" not in line:
            commit = line
        elif line.strip():
            blob = _git(gitdir, "rev-parse", "--verify", "-q", f"{commit}:{line}").strip()
            if blob:
                blobs.setdefault(blob)
    kinds: dict[str, Any] = {}
    for blob in blobs:
        text = _git(gitdir, "cat-file", "blob", blob)
        for doc in yaml.load_all(text, Loader=yaml.CSafeLoader):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc.get("spec") or {}
            kind = (spec.get("names") or {}).get("kind")
            if kind not in KINDS:
                continue
            schemas = [spec.get("validation")]
            schemas += [v.get("schema") for v in spec.get("versions") or []]
            for holder in schemas:
                tree = _tree((holder or {}).get("openAPIV3Schema"))
                if isinstance(tree, dict) and isinstance(tree.get("spec"), dict):
                    kinds[kind] = _merge(kinds.get(kind, {}), tree["spec"])
    data = {
        "source": {
            "repository": "https://github.com/NVIDIA/gpu-operator",
            "commit": head,
            "schemas": len(blobs),
        },
        "kinds": {f"{KINDS[kind]}/{kind}": kinds[kind] for kind in sorted(kinds)},
    }
    target = ROOT / "gpulint" / "data" / "operator-fields.json"
    target.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
