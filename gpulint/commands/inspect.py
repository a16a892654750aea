"""``gpulint inspect``: what gpulint sees in a manifest, so a user can tell why a rule fired.

For every Kubernetes object whose API group and kind are in the workload table it lists the
pod specs found inside (their YAML path, line and column, and the table pattern that found
them; for a kind without a row, the pod specs and resource requirements found by their
shape, :mod:`gpulint.k8s.shapes`, marked so), each container's requests after defaulting, the
pod's effective request computed with the scheduler's arithmetic (:mod:`gpulint.k8s.podrequest`),
the DRA claims that give it GPUs and where its tolerations come from. Objects of unknown kinds
where nothing was found by shape yet that hold GPU resource keys under ``limits`` /
``requests`` are listed too, as a hint that a workload row is missing.

The JSON form (``--format json``) is described by ``schemas/inspect.schema.json``; it keeps
the exact values (:func:`gpulint.util.textsafe.json_text`). The text form escapes every line
(:func:`gpulint.util.textsafe.escape_line`): names, keys and paths from the manifests cannot start a
line of their own, send control sequences to the terminal or make a line a GitHub workflow
command (a path that starts with ``:`` is written ``./:...``, :func:`gpulint.util.textsafe.lead`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gpulint import codes
from gpulint.cluster.evidence import Picture, pod_platform
from gpulint.cluster.model import Cluster
from gpulint.cluster.pictures import picture_json, picture_lines, plugin_facts, plugin_lines
from gpulint.k8s.devices import Registry, builtin_registry
from gpulint.k8s.dra import pod_claims
from gpulint.k8s.drafields import container_claim_names
from gpulint.k8s.manifest import DocumentView, Manifest
from gpulint.k8s.podrequest import pod_requests
from gpulint.k8s.resources import format_amount, gpu_demand
from gpulint.k8s.workloads import K8sObject, PodSpec, WorkloadTable, builtin_table
from gpulint.loader.decoding import decode
from gpulint.loader.document import LoadResult, Loads
from gpulint.loader.handoff import Loaded
from gpulint.loader.markdown import manifest_blocks, markdown_file
from gpulint.loader.stream import load_text
from gpulint.loader.target import read_target
from gpulint.model import Path
from gpulint.util.discover import Target
from gpulint.util.textsafe import json_text

if TYPE_CHECKING:
    from gpulint.cluster.model import Node
    from gpulint.cluster.schedpod import SchedPod
    from gpulint.cluster.slices import Reach
    from gpulint.commands.common import Trust
    from gpulint.k8s.dra import ClaimIndex, DraFacts, PodClaim
    from gpulint.render import RenderOptions
    from gpulint.render.mapping import Rendered
    from gpulint.render.trees import Trees
    from gpulint.settings import Settings


#: How deep the scan for GPU keys in objects of unknown kinds goes.
_SCAN_DEPTH = 12


def dotted(path: Path) -> str:
    """``("spec", "tasks", 0, "template")`` -> ``spec.tasks.0.template``."""
    return ".".join(str(p) for p in path)


@dataclass(slots=True)
class InspectReport:
    files: list[dict[str, Any]] = field(default_factory=list)
    #: What the run's files and configuration say about the GPU nodes (the cluster picture).
    cluster: dict[str, Any] = field(
        default_factory=lambda: {"platform": None, **picture_json(Picture())}
    )
    #: The picture as text lines (:func:`gpulint.cluster.pictures.picture_lines`).
    picture: list[str] = field(default_factory=list)
    #: Each project's ``cluster`` and picture lines, when the files are of several.
    projects: list[tuple[dict[str, Any], list[str]]] = field(default_factory=list)

    def summary(self) -> dict[str, int]:
        workloads = [w for f in self.files for w in f["workloads"]]
        pods = [p for w in workloads for p in w["pods"]]
        return {
            "files": len(self.files),
            "workloads": len(workloads),
            "pod_specs": len(pods),
            "gpu_pod_specs": sum(1 for p in pods if p["gpu"]),
            "unrecognised": sum(len(f["unrecognised"]) for f in self.files),
        }

    def as_json(self) -> dict[str, Any]:
        out = {"files": self.files, "cluster": self.cluster, "summary": self.summary()}
        if len(self.projects) > 1:
            out["projects"] = [cluster for cluster, _ in self.projects]
        return out


class Inspector:
    def __init__(
        self,
        table: WorkloadTable | None = None,
        registry: Registry | None = None,
        cluster: Cluster | None = None,
        picture: Picture | None = None,
        rendering: tuple[RenderOptions, Trees] | None = None,
        dra: DraFacts | None = None,
    ) -> None:
        self.table = table or builtin_table()
        self.registry = registry or builtin_registry()
        #: With a cluster (``--cluster``), each GPU pod says which nodes fit and why not.
        self.cluster = cluster
        #: What the files say about the GPU nodes (:func:`gpulint.lint.gather.project_facts`).
        self.picture = picture if picture is not None else Picture()
        #: How charts and Kustomize roots are rendered (``--render`` and its options).
        self.rendering = rendering
        #: While a rendered output is inspected: where each object and GPU value came from.
        self._placer: Placer | None = None
        self.dra = dra  #: The project's DRA objects (gpulint.k8s.dra).
        #: Files the facts stage parsed already (gpulint.loader.handoff): not parsed again.
        self.loads = Loads()
        self._devices = ClaimDevices(cluster)  #: what DRA requests may get of its devices

    # -- entry points ------------------------------------------------------------------------
    def inspect_targets(self, targets: Iterable[Target]) -> InspectReport:
        platform = None
        if self.cluster is not None and self.cluster.platform is not None:
            source = self.cluster.platform_source or "the configuration (platform:, --platform)"
            platform = {"name": self.cluster.platform, "from": source}
        cluster = {"platform": platform, **picture_json(self.picture)}
        lines = picture_lines(self.picture)
        plugins = plugin_facts(self.registry)
        if plugins:  # what the project's device plugins advertise, with its places
            cluster["device_plugins"] = plugins
            lines.extend(plugin_lines(plugins))
        report = InspectReport(cluster=cluster, picture=lines)
        for target in targets:
            if target.render is not None:
                report.files.append(self.inspect_rendered(target))
                continue
            read = self.loads.read(target.label)
            raw, problem = read_target(target) if read is None else read
            if raw is None:
                assert problem is not None
                report.files.append(_file(target.label, [problem.message]))
                continue
            report.files.append(self.inspect_bytes(target.label, raw))
        return report

    def inspect_bytes(self, label: str, raw: bytes) -> dict[str, Any]:
        text, problem = decode(raw)
        if text is None:
            assert problem is not None
            # Markdown that is not text is left alone, as `check` leaves it.
            return _file(label, [] if markdown_file(label) else [problem.message])
        return self.inspect_text(label, text, self.loads.take(label, raw))

    def inspect_text(self, label: str, text: str, loaded: bytes | None = None) -> dict[str, Any]:
        """``loaded``: the text's documents as the facts stage parsed them (not parsed
        again). A Markdown file: its fenced manifests, each at its place in the file (their
        YAML problems are not told, as ``check`` does not)."""
        if markdown_file(label):
            return self._inspect_markdown(label, text)
        if loaded is not None:
            stream = Loaded(loaded)
            result = LoadResult(list(stream), stream.problems)
        else:
            result = load_text(text)
        problems = [
            f"{p.span.line}:{p.span.column}: {p.code} {p.message}"
            for p in result.problems
            if p.code in (codes.SYNTAX_ERROR, codes.TEMPLATE_NOT_RENDERED)
        ]
        entry = _file(label, problems)
        # The same per-document view the linter builds: objects and pod specs found once.
        for view in Manifest.of_documents(result.documents, self.table, label, self.dra):
            for position, obj in enumerate(view.objects):
                self._object(entry, view, position, obj)
        return entry

    def _inspect_markdown(self, label: str, text: str) -> dict[str, Any]:
        entry = _file(label, [])
        documents = 0
        for block in manifest_blocks(text, label):
            result = load_text(block.text)
            shown = _file(label, [])
            for view in Manifest.of_documents(result.documents, self.table, label, self.dra):
                for position, obj in enumerate(view.objects):
                    self._object(shown, view, position, obj)
            _move(shown, block.line, block.indent, documents)
            entry["workloads"].extend(shown["workloads"])
            entry["unrecognised"].extend(shown["unrecognised"])
            documents += len(result.documents)
        return entry

    def inspect_rendered(self, target: Target) -> dict[str, Any]:
        """A chart or Kustomize root: GL201's line without ``--render`` (its templates are
        never read as YAML), else the objects it renders, each with its ``source``: the
        template, values or patch line it came from (:meth:`Rendered.place`)."""
        from gpulint.render import RenderOptions
        from gpulint.render.target import Unrendered, render_target
        from gpulint.render.trees import Trees

        options, trees = self.rendering or (RenderOptions(), Trees(False))
        out = render_target(target, options, trees)
        if isinstance(out, Unrendered):
            p = out.problem
            return _file(out.path, [f"{p.span.line}:{p.span.column}: {p.code} {p.message}"])
        self._placer = placer(out)
        try:
            entry = self.inspect_text(target.label, out.text)
        finally:
            self._placer = None
        entry["rendered"] = out.command
        return entry

    # -- building ----------------------------------------------------------------------------
    def _object(
        self, entry: dict[str, Any], view: DocumentView, position: int, obj: K8sObject
    ) -> None:
        doc = view.doc
        row = self.table.lookup(obj.group, obj.kind)
        # A kind without a row is a workload when pod specs were found in it by shape.
        found = view.pod_specs(position)
        if row is None and self.table.off_cluster.group(obj.group):
            return  # another platform's object (Cloud Run): no workload of the cluster
        if row is None and not found:
            keys = list(self._gpu_keys(obj.data, obj.path, 0))
            if keys:
                span = doc.key_span(obj.path) if obj.path else doc.start
                entry["unrecognised"].append(
                    {
                        **_ref(obj),
                        "document": doc.index,
                        "line": span.line,
                        "column": span.column,
                        "gpu_keys": [
                            {"path": dotted(path), "line": doc.key_span(path).line} for path in keys
                        ],
                    }
                )
            return
        span = doc.key_span(obj.path) if obj.path else doc.start
        pods = [self._pod(view, pod) for pod in found]
        workload = {
            **_ref(obj),
            "document": doc.index,
            "line": span.line,
            "column": span.column,
            "table_row": row.origin if row is not None else None,
            "found_by": "table" if row is not None else "shape",
            "pods": pods,
        }
        if self._placer is not None:  # at the template's `kind:`
            kind = (*obj.path, "kind")
            workload["source"] = self._placer(obj.ref, doc.index, kind, doc.key_span(kind))
        entry["workloads"].append(workload)

    def _pod(self, view: DocumentView, pod: PodSpec) -> dict[str, Any]:
        doc = view.doc
        span = doc.key_span(pod.path)
        result = pod_requests(pod)
        registry = self.registry
        demand = gpu_demand(pod, registry, view.claims)
        # What the pod's chart or operator writes into it from a field of its own (an
        # enabled gpu: block, a model's requestGPU, Dynamo's gpu: "1"): (name, where, shown)
        operated = [(name, at, _operator_amount(doc.data, at)) for name, at in demand.operator]
        containers = []
        gpu_names: set[str] = set()
        for c in result.containers:
            cspan = doc.key_span(c.container.path)
            raw = _raw_requests(c.container.resources)
            requests = {}
            for name, value in raw.items():
                is_gpu = registry.may_be_accelerator(name)
                if not is_gpu:
                    continue
                gpu_names.add(name)
                requests[name] = _shown(value)
            for name, at, shown in operated:
                if at[: len(c.container.path)] == c.container.path:
                    requests.setdefault(name, shown)
            placed = None
            if self._placer is not None and requests:  # at the line writing its GPU value
                where = gpu_path(c.container.path, c.container.resources, requests)
                placed = self._placer(pod.obj.ref, doc.index, where, doc.value_span(where))
            containers.append(
                {
                    **({"source": placed} if placed is not None else {}),
                    "name": c.container.label,
                    "role": c.role,
                    "path": dotted(c.container.path),
                    "line": cspan.line,
                    "column": cspan.column,
                    "gpu_requests": requests,
                    "dra_claims": container_claim_names(c.container.resources),
                    "null_values": list(c.nulls),
                }
            )
        effective = {
            name: format_amount(value)
            for name, value in sorted(result.requests.items())
            if name in gpu_names
        }
        for name, _, shown in operated:
            effective.setdefault(name, shown)
        tolerations = None
        source = pod.tolerations_path
        if pod.location == "pod" and source is not None:
            tolerations = {
                "path": dotted(source),
                "count": len(pod.tolerations),
                "inherited": source != (*pod.path, "tolerations"),
            }
        embedded = pod.obj.parent is not None
        own_name = pod.spec.get("name") if pod.location == "pod" else None
        return {
            "path": dotted(pod.path),
            "name": own_name if isinstance(own_name, str) else None,
            "line": span.line,
            "column": span.column,
            "location": pod.location,
            "pattern": pod.pattern,
            "found_by": pod.found_by,
            "embedded_object": (
                {
                    "apiVersion": pod.obj.ref.api_version,
                    "kind": pod.obj.kind,
                    "path": dotted(pod.obj.path),
                }
                if embedded
                else None
            ),
            "containers": containers,
            "effective_gpu_request": effective,
            "unevaluated": [
                {
                    "container": u.container,
                    "resource": u.resource,
                    "value": _shown(u.value),
                    "reason": u.reason,
                    "line": doc.value_span(u.path).line,
                }
                for u in result.unevaluated
                if u.resource in gpu_names
            ],
            "dra_claims": [
                self._devices.shown(c, doc.key_span(c.path).line, registry, view.claims)
                for c in pod_claims(pod, view.claims)
            ],
            "tolerations": tolerations,
            "platform": self._platform(view, pod),
            "gpu": demand.gpu,
            "hints": _hints(pod),
            "scheduling": self._scheduling(pod, view) if demand.gpu else None,
        }

    def _platform(self, view: DocumentView, pod: PodSpec) -> dict[str, Any] | None:
        """The platform the pod is judged on: the configured (or inventory's) one, else the
        one its node selector or required node affinity names."""
        if pod.location != "pod":
            return None
        if self.cluster is not None and self.cluster.platform is not None:
            source = self.cluster.platform_source or "the configuration (platform:, --platform)"
            return {"name": self.cluster.platform, "from": source, "line": None}
        found = pod_platform(pod)
        if found is None:
            return None
        name, label, path = found
        line = view.doc.key_span(path).line
        return {"name": name, "from": f"this pod's node selector {label}", "line": line}

    def _scheduling(self, pod: PodSpec, view: DocumentView) -> dict[str, Any] | None:
        """Which nodes of the cluster the pod fits, and why each other one does not."""
        if self.cluster is None or not self.cluster.nodes:
            return None
        from gpulint.cluster.filters import failures, feasibility
        from gpulint.cluster.schedpod import sched_pod

        sched = sched_pod(pod)
        if sched is None:
            return None
        sched = with_claims(sched, pod, self.registry, view.claims, self.cluster.nodes)
        result = feasibility(sched, self.cluster)
        rows = []
        for v in result.verdicts:
            single = len(v.nodes) == 1 and v.size == 1
            every = failures(sched, v.nodes[0], all_plugins=True) if v.failure else []
            rows.append(
                {
                    "name": v.nodes[0].name if single else v.group.label,
                    "pool": v.group.pool,
                    "nodes": v.size,
                    "fits": v.failure is None,
                    "plugin": v.failure.plugin if v.failure else None,
                    "reasons": list(v.failure.reasons) if v.failure else [],
                    "fixes": [fix for f in every for fix in f.fixes],
                }
            )
        return {
            "nodes": result.total,
            "fitting": result.fitting,
            "message": None if result.fitting else result.message(),
            "groups": rows,
        }

    def _gpu_keys(self, data: Any, path: Path, depth: int) -> Iterator[Path]:
        if depth > _SCAN_DEPTH:
            return
        if isinstance(data, dict):
            for key, value in data.items():
                if key in ("limits", "requests") and isinstance(value, dict):
                    for name in value:
                        if isinstance(name, str) and self.registry.may_be_accelerator(name):
                            yield (*path, key, name)
                elif key not in ("metadata", "status"):
                    yield from self._gpu_keys(value, (*path, key), depth + 1)
        elif isinstance(data, list):
            for i, item in enumerate(data):
                yield from self._gpu_keys(item, (*path, i), depth + 1)


def _hints(pod: PodSpec) -> list[str]:
    """Why a table pattern probably names the wrong place (for users writing rows)."""
    if pod.location != "pod" or pod.containers:
        return []
    inner = pod.spec.get("spec")
    if isinstance(inner, dict) and isinstance(inner.get("containers"), list):
        return [
            f"this is a pod template (metadata + spec), not a pod spec: the pattern "
            f"{pod.pattern!r} should end in '.spec'"
        ]
    template = pod.spec.get("template")
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        return [
            f"no containers here, but a pod template below it: the pattern {pod.pattern!r} "
            "should probably end in '.template.spec'"
        ]
    return []


def _move(entry: dict[str, Any], lines: int, columns: int, documents: int) -> None:
    """Every ``line``, ``column`` and ``document`` of an inspected Markdown block's ``entry``
    moved to the block's place in the file (a loop over the entry's own few levels)."""
    moves = {"line": lines, "column": columns, "document": documents}
    stack: list[Any] = [entry]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            for key, value in item.items():
                if key in moves and isinstance(value, int) and not isinstance(value, bool):
                    item[key] = value + moves[key]
                elif isinstance(value, (dict, list)):
                    stack.append(value)


def _file(label: str, problems: list[str]) -> dict[str, Any]:
    return {"path": label, "problems": problems, "workloads": [], "unrecognised": []}


def _ref(obj: K8sObject) -> dict[str, Any]:
    return {
        "apiVersion": obj.ref.api_version,
        "kind": obj.ref.kind,
        "namespace": obj.ref.namespace,
        "name": obj.ref.name,
    }


def _operator_amount(data: Any, at: tuple[Any, ...]) -> str:
    """The amount an operator's or chart's own field at ``at`` asks for, as shown: the field's
    value, or 1 for a switch (an enabled ``gpu:`` block without a count)."""
    from gpulint.k8s.objects import value_at

    value = value_at(data, at)
    return "1" if value is True else "?" if value is None else _shown(value)


def _raw_requests(resources: dict[str, Any] | None) -> dict[str, Any]:
    """Limits with requests over them: what SetDefaults_Pod leaves as the requests."""
    out: dict[str, Any] = {}
    for section in ("limits", "requests"):
        values = (resources or {}).get(section)
        if isinstance(values, dict):
            out.update(values)
    return out


def _shown(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# -- rendering ------------------------------------------------------------------------------


def render_json(report: InspectReport) -> str:
    return json_text(report.as_json()) + "\n"


def render_text(report: InspectReport) -> str:
    from gpulint.commands.inspecttext import as_text

    picture = [line for _, lines in report.projects for line in lines] or report.picture
    return as_text(report.files, report.cluster, picture, report.summary())


def run_inspect(
    paths: list[str] | None,
    *,
    json_output: bool,
    stdin_filename: str | None,
    config: str | None,
    isolated: bool,
    trust: Trust,
    cluster: list[str] | None,
    platform: str | None,
    **render: Any,
) -> list[str]:
    """``gpulint inspect``: the report on standard output; the paths that do not exist
    (each an error on stderr) are returned. Charts and Kustomize roots are found as
    ``check`` finds them, and rendered with ``check``'s options (``render``: the keywords
    of :func:`gpulint.commands.check.render_options`)."""
    import sys

    from gpulint.commands.check import render_options
    from gpulint.commands.common import check_stdin_filename, configure, error
    from gpulint.commands.facts import inspect_projects
    from gpulint.commands.projects import Projects
    from gpulint.util.discover import targets
    from gpulint.util.walk import Listings

    check_stdin_filename(paths, stdin_filename)
    _, effective = configure(
        config, isolated, trust=trust, cluster=cluster or (), platform=platform
    )
    settings = effective.settings
    exclude = effective.exclude.matches if effective.exclude else None
    from gpulint.commands.checkoptions import CheckOptions

    # Every folder the run lists, listed once: its walks and climbs share them.
    listings = Listings()
    rendering = render_options(effective, CheckOptions(**render), listings)
    given, label = paths or ["."], stdin_filename or "<stdin>"
    found, missing = targets(
        given, label, exclude, effective.force_exclude, trees=rendering[1], listings=listings
    )
    for path in missing:
        error(f"{path}: no such file or directory")
    # Each file with its project's facts, as check reads them (gpulint.commands.facts).
    projects = Projects(given, stdin_filename, declared=not isolated, listings=listings)
    report = InspectReport()

    def inspector(own: Settings, picture: Picture | None) -> Inspector:
        return Inspector(own.workloads, own.registry, own.cluster, picture, rendering, own.dra)

    inspect_projects(found, projects, settings, exclude, inspector, report)
    sys.stdout.write(render_json(report) if json_output else render_text(report))
    sys.stdout.flush()
    return missing


# -- a pod's DRA claims against a node inventory: the devices its ResourceSlices publish
# that each request may get (gpulint.cluster.slices), and the whole devices the claims ask
# for, which its scheduling counts as GPU050 does
class ClaimDevices:
    """The inventory's device groups, read once, and what each device class may get of
    them, worked out once per class."""

    def __init__(self, cluster: Cluster | None) -> None:
        self._nodes = cluster.nodes if cluster is not None else ()
        self._reach: Reach | None = None  # read on the first claim shown
        self._available: dict[tuple[str, tuple[str, ...]], dict[str, Any]] = {}

    def shown(
        self, claim: PodClaim, line: int, registry: Registry, claims: ClaimIndex
    ) -> dict[str, Any]:
        """The pod's claim entry as inspect shows it, each request with ``available``: the
        published devices its classes may get (None: no ResourceSlice in the inventory)."""
        from gpulint.cluster.slices import available, device_reach

        if self._reach is None:
            self._reach = device_reach(self._nodes)
        shown = claim.shown(line, registry, claims)
        for request in shown["requests"]:
            request["available"] = None
            if not self._reach:
                continue
            rows = []
            for name in request["device_classes"]:
                drivers = claims.class_drivers(name)
                key = (name, drivers)
                if key not in self._available:
                    self._available[key] = available(self._reach, name, drivers)
                rows.append(self._available[key])
            known = [r["selected_by"] for r in rows if r["selected_by"] is not None]
            request["available"] = {
                "selected_by": "; ".join(known) if len(known) == len(rows) else None,
                "count": sum(r["count"] for r in rows),
                "pools": [p for r in rows for p in r["pools"]],
            }
        return shown


def with_claims(
    sched: SchedPod, pod: PodSpec, registry: Registry, claims: ClaimIndex, nodes: Sequence[Node]
) -> SchedPod:
    """``sched`` with the whole devices the pod's DRA claims ask for, by the key the nodes'
    ResourceSlices publish them under, where some node publishes them (as GPU050 counts
    them, for the scheduler's DynamicResources filter)."""
    if not pod.spec.get("resourceClaims"):
        return sched
    from gpulint.cluster.slices import class_key
    from gpulint.k8s.dracount import pod_claimed

    wanted: dict[str, int] = {}
    for claimed in pod_claimed(pod, registry, claims):
        for claim, devices in claimed.claims:
            key = class_key(claim.device_class)
            if key is not None and any(key in n.allocatable for n in nodes):
                wanted[key] = wanted.get(key, 0) + devices
    return sched._replace(devices=tuple(sorted(wanted.items()))) if wanted else sched


# -- inspect --render: where each object and GPU value of a rendered chart or Kustomize
# root came from, found as a finding there is mapped back (Rendered.place), and whether
# that place is a fallback
#: Where a rendered object or value came from: (its object, document, YAML path, span) ->
#: its ``source``.
Placer = Callable[[Any, int, Path, Any], dict[str, Any]]


def gpu_path(container: Path, resources: dict[str, Any] | None, names: Iterable[str]) -> Path:
    """The path of the container's first GPU value that counts (requests over limits)."""
    for section in ("requests", "limits"):
        values = (resources or {}).get(section)
        if isinstance(values, dict):
            for name in names:
                if name in values:
                    return (*container, "resources", section, name)
    return (*container, "resources")


#: How the note of a place that is a fallback begins (gpulint.render.kustomize.build,
#: gpulint.render.helm.sources).
_FALLBACK = "shown at the "


def placer(rendered: Rendered) -> Placer:
    """Where a rendered place came from, as :meth:`Rendered.place` maps a finding there:
    ``fallback`` when no closer line than the chart's or root's own file can be named."""
    from gpulint.model import Finding, Severity

    fallback = rendered.fallback()

    def place(ref: Any, document: int, path: Path, span: Any) -> dict[str, Any]:
        probe = Finding("", "", Severity.INFO, rendered.label, span, "", ref, path, document)
        try:
            where = rendered.place(probe)
        except Exception:  # mapping is best effort, as for a finding
            return {"path": fallback, "line": 1, "column": 1, "fallback": True, "note": None}
        note = where.note.strip().removeprefix("(").removesuffix(")").strip() or None
        # A fallback says so ("shown at the chart: ...", "shown at the kustomization entry
        # ..."), or is the chart's or root's own file at its first line with nothing said.
        at_top = where.path == fallback and where.span.line == 1 and note is None
        return {
            "path": where.path,
            "line": where.span.line,
            "column": where.span.column,
            "fallback": at_top or (note is not None and note.startswith(_FALLBACK)),
            "note": note,
        }

    return place
