"""Regenerate ``gpulint/data/operator-fields.json`` from operators' release history.

The field names of each kind are the union of its CustomResourceDefinition's schema in every
release of the operator (tags ``vX.Y.Z``) and at the newest commit, so a field an older
release had and a newer one dropped is still a field. A level that any release left open
(``x-kubernetes-preserve-unknown-fields``, a map's ``additionalProperties``, no schema) stays
open: anything goes below it. A pod template (``metadata`` and a ``spec`` with
``containers``) is left open too: GPU024 checks pod specs against Kubernetes' own types.
For an operator that ships a Helm chart (``chart``), the chart's top-level values are kept
too: the union of the keys of its ``values.yaml`` and of the ``.Values.<key>`` its templates
read, in every release and at the newest commit, and ``global`` (Helm's own); for a chart
marked ``components``, also the keys under each of its top-level mappings
(``chart_components``: the ROCm device plugin chart's ``dp`` and ``lbl``, the GPU
Operator chart's ``operator``, ``daemonsets``, ``driver``, ...).
Run with clones of the operators' repositories::

    .venv/bin/python -m tests.operator_fields gpu-operator=PATH/.git kuberay=PATH/.git \\
        nvidia-device-plugin=PATH/.git intel-device-plugins-gpu=PATH/.git

Entries not named keep what the file holds.
"""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
from typing import Any

from tests.conftest import ROOT

#: Operator -> its repository, and the CRD files of the kinds kept (by file name).
OPERATORS: dict[str, dict[str, Any]] = {
    "gpu-operator": {
        "repository": "https://github.com/NVIDIA/gpu-operator",
        "files": ("*nvidia.com_clusterpolicies*.yaml", "*nvidia.com_nvidiadrivers*.yaml"),
        "chart": "deployments/gpu-operator",
        "components": True,
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
    "karpenter": {
        "repository": "https://github.com/kubernetes-sigs/karpenter",
        "files": ("karpenter.sh_nodepools.yaml",),
    },
    "kaiwo": {
        "repository": "https://github.com/silogen/kaiwo",
        "files": (
            "kaiwo.silogen.ai_kaiwojobs.yaml",
            "kaiwo.silogen.ai_kaiwoservices.yaml",
            "config.kaiwo.silogen.ai_kaiwoconfigs.yaml",
        ),
    },
    "helm-controller": {
        # k3s's and RKE2's Helm controller: the HelmChart that installs the GPU Operator or the
        # device plugin on a k3s cluster (its CRD file from v0.16; older releases built the
        # CRD in Go, with the same fields).
        "repository": "https://github.com/k3s-io/helm-controller",
        "files": ("helm.cattle.io_helmcharts.yaml",),
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
    released = [t for t in tags if re.fullmatch(r"v?[0-9]+\.[0-9]+\.[0-9]+", t)]
    released.sort(key=lambda tag: tuple(int(part) for part in tag.lstrip("v").split(".")))
    return [*released, "HEAD"]


def operator_kinds(gitdir: str, files: tuple[str, ...]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The field trees of the kinds the CRD ``files`` define, and for each kind and API
    version the fields its ``spec`` requires in the newest release that serves it, each with
    the first release from which every release requires it (``"all"`` when every release
    with a schema does). Each version of a CRD file is read once."""
    crds: dict[str, list[dict[str, Any]]] = {}  # blob -> its CustomResourceDefinitions
    #: kind/version -> [(release, the fields its spec requires)], oldest first
    required: dict[str, list[tuple[str, set[str]]]] = {}
    for rev in _releases(gitdir):
        seen: dict[str, set[str]] = {}
        for line in _git(gitdir, "ls-tree", "-r", rev).splitlines():
            meta, _, path = line.partition("\t")
            name = path.rsplit("/", 1)[-1]
            if "crd" in path.lower() and any(fnmatch.fnmatch(name, f) for f in files):
                blob = meta.split()[2]
                if blob not in crds:
                    crds[blob] = _crds(_git(gitdir, "cat-file", "blob", blob))
                for key, fields in _spec_required(crds[blob]):
                    seen.setdefault(key, set()).update(fields)
        for key, fields in seen.items():
            required.setdefault(key, []).append((rev, fields))
    kinds: dict[str, Any] = {}
    for doc in (doc for docs in crds.values() for doc in docs):
        spec = doc.get("spec") or {}
        key = f"{spec.get('group')}/{(spec.get('names') or {}).get('kind')}"
        holders = [spec.get("validation")]
        holders += [v.get("schema") for v in spec.get("versions") or []]
        for holder in holders:
            tree = _tree((holder or {}).get("openAPIV3Schema"))
            if isinstance(tree, dict) and isinstance(tree.get("spec"), dict):
                kinds[key] = _merge(kinds[key], tree["spec"]) if key in kinds else tree["spec"]
    needs: dict[str, dict[str, dict[str, str]]] = {}
    for key, history in required.items():
        kind, _, version = key.rpartition("/")
        since = _since(history)
        if kind in kinds and since:
            needs.setdefault(kind, {})[version] = since
    return kinds, needs


def _crds(text: str) -> list[dict[str, Any]]:
    """The CustomResourceDefinitions of a file (none when it does not parse: a templated
    copy). ruamel's safe loader, the project's own YAML library."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    try:
        docs = list(YAML(typ="safe", pure=False).load_all(text))
    except YAMLError:
        return []
    return [d for d in docs if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"]


def _spec_required(crds: list[dict[str, Any]]) -> list[tuple[str, set[str]]]:
    """``group/kind/version`` and the fields its ``spec`` requires (less those the schema gives
    a default: the API server fills them in before it validates), for each CRD schema."""
    out: list[tuple[str, set[str]]] = []
    for doc in crds:
        spec = doc.get("spec") or {}
        key = f"{spec.get('group')}/{(spec.get('names') or {}).get('kind')}"
        versions = [v for v in spec.get("versions") or [] if isinstance(v, dict)]
        shared = spec.get("validation")  # apiextensions v1beta1: one schema for every version
        holders = [(v.get("name"), v.get("schema") or shared) for v in versions]
        if not holders and spec.get("version"):
            holders = [(spec.get("version"), shared)]
        for version, holder in holders:
            schema = (holder or {}).get("openAPIV3Schema") or {}
            inner = (schema.get("properties") or {}).get("spec")
            properties = inner.get("properties") if isinstance(inner, dict) else None
            if isinstance(inner, dict) and isinstance(properties, dict) and properties:
                # a required field with a default is filled in before it is validated
                fields = set(inner.get("required") or ())
                kept = {f for f in fields if "default" not in (properties.get(f) or {})}
                out.append((f"{key}/{version}", kept))
    return out


def _since(history: list[tuple[str, set[str]]]) -> dict[str, str]:
    """Each field the newest release requires -> the first release of the run of releases
    up to the newest that all require it; ``"all"`` when that run is every release."""
    newest = history[-1][1]
    out: dict[str, str] = {}
    for field in sorted(newest):
        first = len(history) - 1
        while first > 0 and field in history[first - 1][1]:
            first -= 1
        out[field] = "all" if first == 0 else history[first][0]
    return out


#: Charts read for their values only (no CRD of their own): name -> repository and folder;
#: ``by_commit``: the repository holds many charts and tags none of them, so every commit that
#: changed the chart's folder is read, and its releases are the chart's own versions.
CHARTS: dict[str, dict[str, Any]] = {
    "nvidia-device-plugin": {
        "repository": "https://github.com/NVIDIA/k8s-device-plugin",
        "chart": "deployments/helm/nvidia-device-plugin",
    },
    "intel-device-plugins-gpu": {
        "repository": "https://github.com/intel/helm-charts",
        "chart": "charts/gpu-device-plugin",
        "by_commit": True,
    },
    "amd-gpu": {
        "repository": "https://github.com/ROCm/k8s-device-plugin",
        "chart": "helm/amd-gpu",
        "by_commit": True,
        "components": True,
    },
    "kai-scheduler": {
        "repository": "https://github.com/NVIDIA/KAI-Scheduler",
        "chart": "deployments/kai-scheduler",
        "components": True,
    },
    "volcano": {
        "repository": "https://github.com/volcano-sh/volcano",
        "chart": "installer/helm/chart/volcano",
        "components": True,
    },
    "hami": {
        "repository": "https://github.com/Project-HAMi/HAMi",
        "chart": "charts/hami",
        "by_commit": True,
        "components": True,
    },
}


def _chart_commits(gitdir: str, chart: str) -> list[str]:
    """Every commit that changed the chart's folder, oldest first, then ``HEAD``."""
    commits = _git(gitdir, "log", "--reverse", "--format=%H", "--", chart).split()
    return [*commits, "HEAD"]


def _chart_versions(gitdir: str, chart: str, revisions: list[str]) -> str:
    """``first..last`` of the chart's ``version`` over ``revisions``."""
    import re

    versions = []
    for rev in revisions:
        found = re.search(
            r"(?m)^version:\s*\"?([^\s\"]+)", _git(gitdir, "show", f"{rev}:{chart}/Chart.yaml")
        )
        if found:
            versions.append(found.group(1))
    return f"{versions[0]}..{versions[-1]}" if versions else ""


def _yaml_at(gitdir: str, rev: str, path: str) -> Any:
    """The YAML file at ``path`` in revision ``rev``, read; None when absent or not YAML."""
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    text = _git(gitdir, "show", f"{rev}:{path}")
    try:
        return YAML(typ="safe", pure=True).load(text) if text else None
    except YAMLError:
        return None


def chart_values_keys(gitdir: str, chart: str, by_commit: bool = False) -> list[str]:
    """The top-level values the chart at ``chart`` has in any release or at the newest commit
    (``by_commit``: in any commit that changed it): the keys of its ``values.yaml``, the
    ``.Values.<key>`` its own templates read and the names (or aliases) of the charts it
    depends on, whose values sit under them."""
    import re

    keys = {"global"}
    revisions = _chart_commits(gitdir, chart) if by_commit else _releases(gitdir)
    for rev in revisions:
        values = _yaml_at(gitdir, rev, f"{chart}/values.yaml")
        if isinstance(values, dict):
            keys.update(k for k in values if isinstance(k, str))
        read = _git(
            gitdir, "grep", "-ohE", r"\.Values\.[A-Za-z_-]+", rev, "--", f"{chart}/templates"
        )
        keys.update(m.group(1) for m in re.finditer(r"\.Values\.([A-Za-z_][A-Za-z0-9_-]*)", read))
        keys.update(_dependencies(gitdir, rev, chart))
    return sorted(keys)


def _dependencies(gitdir: str, rev: str, chart: str) -> set[str]:
    """The keys the values of the charts the chart at ``chart`` depends on in ``rev`` sit
    under: each one's ``alias``, else its ``name`` (``Chart.yaml``'s ``dependencies``,
    Helm 3's, or ``requirements.yaml``, Helm 2's)."""
    names: set[str] = set()
    for name in ("Chart.yaml", "requirements.yaml"):
        meta = _yaml_at(gitdir, rev, f"{chart}/{name}")
        entries = meta.get("dependencies") if isinstance(meta, dict) else None
        for entry in entries if isinstance(entries, list) else ():
            if isinstance(entry, dict):
                key = entry.get("alias") or entry.get("name")
                if key is not None:
                    names.add(str(key))
    return names


def chart_component_keys(gitdir: str, chart: str, by_commit: bool) -> dict[str, list[str]]:
    """The second-level values the chart at ``chart`` has under each of its top-level
    mappings, in any release (``by_commit``: any commit that changed it) or at the newest
    commit: the keys of the mapping in its ``values.yaml`` and the ``.Values.<key>.<key>``
    its templates read. Not under the names (or aliases) of the charts it depends on, whose
    values are theirs, nor ``global``, nor under a mapping a template takes whole
    (``toYaml .Values.securityContext``: any key of it reaches the object)."""
    import re

    nested: dict[str, set[str]] = {}
    dependencies = {"global"}
    whole: set[str] = set()  # mappings a template takes whole (`toYaml .Values.x`): open
    revisions = _chart_commits(gitdir, chart) if by_commit else _releases(gitdir)
    pattern = r"\.Values\.([A-Za-z_][A-Za-z0-9_-]*)\.([A-Za-z_][A-Za-z0-9_-]*)"
    alone = r"\.Values\.([A-Za-z_][A-Za-z0-9_-]*)(?![A-Za-z0-9_.-])"
    for rev in revisions:
        values = _yaml_at(gitdir, rev, f"{chart}/values.yaml")
        for key, value in values.items() if isinstance(values, dict) else ():
            if isinstance(key, str) and isinstance(value, dict):
                nested.setdefault(key, set()).update(k for k in value if isinstance(k, str))
        read = _git(gitdir, "grep", "-ohE", pattern, rev, "--", f"{chart}/templates")
        for match in re.finditer(pattern, read):
            nested.setdefault(match.group(1), set()).add(match.group(2))
        uses = _git(gitdir, "grep", "-hE", r"\.Values\.", rev, "--", f"{chart}/templates")
        whole.update(re.findall(alone, uses))
        dependencies.update(_dependencies(gitdir, rev, chart))
    closed = {k: v for k, v in nested.items() if k not in dependencies and k not in whole}
    return {k: sorted(v) for k, v in sorted(closed.items())}


def main(args: list[str]) -> None:
    """Regenerate the entries of the operators and charts named in ``args``; the file's other
    entries are kept as they are."""
    target = ROOT / "gpulint" / "data" / "operator-fields.json"
    old = json.loads(target.read_text()) if target.exists() else {}
    sources: dict[str, Any] = dict(old.get("sources", {}))
    kinds: dict[str, Any] = dict(old.get("kinds", {}))
    required: dict[str, Any] = dict(old.get("required", {}))
    charts: dict[str, Any] = dict(old.get("charts", {}))
    components: dict[str, Any] = dict(old.get("chart_components", {}))
    for arg in args:
        name, _, gitdir = arg.partition("=")
        if name in CHARTS:
            chart = CHARTS[name]
            by_commit = bool(chart.get("by_commit"))
            if by_commit:
                span = _chart_versions(
                    gitdir, chart["chart"], _chart_commits(gitdir, chart["chart"])
                )
            else:
                releases = [r for r in _releases(gitdir) if r != "HEAD"]
                span = f"{releases[0]}..{releases[-1]}" if releases else ""
            sources[name] = {
                "repository": chart["repository"],
                "commit": _git(gitdir, "rev-parse", "HEAD").strip(),
                "releases": span,
                "kinds": [],
            }
            charts[name] = chart_values_keys(gitdir, chart["chart"], by_commit)
            if chart.get("components"):
                components[name] = chart_component_keys(gitdir, chart["chart"], by_commit)
            continue
        operator = OPERATORS[name]
        found, needs = operator_kinds(gitdir, operator["files"])
        required.update(needs)
        releases = [r for r in _releases(gitdir) if r != "HEAD"]
        sources[name] = {
            "repository": operator["repository"],
            "commit": _git(gitdir, "rev-parse", "HEAD").strip(),
            "releases": f"{releases[0]}..{releases[-1]}" if releases else "",
            "kinds": sorted(found),
        }
        kinds.update(found)
        if "chart" in operator:
            charts[name] = chart_values_keys(gitdir, operator["chart"])
            if operator.get("components"):
                components[name] = chart_component_keys(gitdir, operator["chart"], False)
    data = {
        "charts": charts,
        "chart_components": components,
        "sources": sources,
        "kinds": {k: kinds[k] for k in sorted(kinds)},
        "required": {k: required[k] for k in sorted(required) if required[k]},
    }
    target.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
