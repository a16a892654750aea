"""The objects a configuration makes, built in one place (:func:`build`): the run's
:class:`~gpulint.settings.Settings` (device registry, workloads table, ignores, cluster) and
how charts are rendered, from the values :func:`gpulint.config.resolve.resolve` chose.

Each value from the file that names a path is checked to stay inside its repository (a
configuration in a pull request cannot make gpulint read ``/etc`` or ``~``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

from gpulint.config.file import ConfigError, ConfigFile
from gpulint.config.keys import COMMAND_LINE, DEFAULT, upper_selectors
from gpulint.model import ObjectIgnore, PathIgnore, Severity
from gpulint.settings import Settings

if TYPE_CHECKING:
    from gpulint.cluster.model import Cluster, Node
    from gpulint.config.keys import Entry
    from gpulint.k8s.devices import Registry
    from gpulint.k8s.workloads import WorkloadTable
    from gpulint.render import RenderOptions


def build(
    config: ConfigFile | None,
    root: FsPath,
    entries: Mapping[str, Entry],
    severities: dict[str, Severity],
    options: dict[str, dict[str, Any]],
) -> tuple[Settings, RenderOptions | None, FsPath | None]:
    """The run's settings, how it renders charts (``render:``) and its ``baseline:`` file,
    from the chosen ``entries`` (ConfigError naming the key when one cannot be used)."""
    data: Mapping[str, Any] = config.data if config is not None else {}
    per_file, per_object = _ignores(config, root)
    select = entries["select"]
    settings = Settings(
        # The default selection (None) leaves opt-in rules out; an explicit ALL runs them.
        select=None if select.origin == DEFAULT else frozenset(select.value),
        extend_select=frozenset(entries["extend-select"].value),
        ignore=frozenset(entries["ignore"].value),
        severities=severities,
        options=options,
        fail_on=Severity.parse(entries["fail-on"].value),
        registry=_registry(data),
        workloads=_workloads(config),
        per_file_ignores=per_file,
        per_object_ignores=per_object,
        cluster=_run_cluster(config, entries),
    )
    render = _render(config, root)
    baseline = _baseline(config) if config is not None and "baseline" in data else None
    return settings, render, baseline


def _registry(data: Mapping[str, Any]) -> Registry | None:
    """The built-in device registry with the file's ``devices:`` merged over it."""
    if not data.get("devices"):
        return None
    from gpulint.k8s.devices import builtin_registry

    return builtin_registry().merged(data["devices"])


def _workloads(config: ConfigFile | None) -> WorkloadTable | None:
    """The built-in workloads table extended with the file's ``workloads:`` rows."""
    if config is None or not config.data.get("workloads"):
        return None
    from gpulint.k8s.workloads import WorkloadKind, builtin_table

    rows = [
        WorkloadKind.from_json(row, config.where(("workloads", i)))
        for i, row in enumerate(config.data["workloads"])
    ]
    return builtin_table().extended(rows)


def _run_cluster(config: ConfigFile | None, entries: Mapping[str, Entry]) -> Cluster | None:
    """The cluster of the run: the inventories' nodes (``--cluster`` or ``cluster:``) with
    the platform's profile and the declared node pools; the platform the nodes' labels
    show when none is said."""
    chosen = entries["cluster"]
    if chosen.origin.startswith(COMMAND_LINE):
        inventories = [(FsPath(p), p) for p in chosen.value]
    else:
        inventories = _inventory_paths(config)
    described = cluster_from(inventories)
    platform = entries["platform"].value
    pools = (config.data.get("node-pools") if config is not None else None) or []
    cluster = _cluster(config, platform, pools)
    # Inventory nodes and declared pools together: the platform's facts with every node.
    if described is not None:
        cluster = (
            described
            if cluster is None
            else cluster._replace(nodes=(*described.nodes, *cluster.nodes))
        )
        if platform is None:  # the platform the nodes' labels show
            from gpulint.cluster.platforms import with_inferred_platform

            cluster = with_inferred_platform(cluster)
    return cluster


def _render(config: ConfigFile | None, root: FsPath) -> RenderOptions | None:
    """The file's ``render:``: how charts are rendered, by default and per chart folder.

    Paths are relative to the configuration file's folder and must stay inside it, their
    links resolved, and be regular files when they exist (not a FIFO, a device or
    ``/dev/stdin``): the file may come with the tree being linted, and helm reads every
    values file it is given. A values file that breaks this is a configuration error at its
    line.
    """
    from gpulint.render import ChartOptions, RenderOptions

    if config is None or not isinstance(config.data.get("render"), dict):
        return None
    from gpulint.render.helm.inputs import refused_file

    data = config.data["render"]
    errors: list[str] = []

    def chart(entry: dict[str, Any], at: tuple[Any, ...]) -> ChartOptions:
        files = []
        for i, text in enumerate(entry.get("values", ())):
            full = os.path.normpath(os.path.join(root, text))
            if not (full == str(root) or full.startswith(str(root).rstrip(os.sep) + os.sep)):
                errors.append(
                    f"{config.where((*at, 'values', i))}: render values file {text!r} is "
                    "outside the configuration's folder"
                )
            elif why := refused_file(full, os.path.realpath(root), "the configuration's folder"):
                errors.append(
                    f"{config.where((*at, 'values', i))}: render values file {text!r} {why}"
                )
            files.append(full)
        return ChartOptions(
            values=tuple(files),
            set=tuple(entry.get("set", ())),
            configured_set=len(entry.get("set", ())),
            kube_version=entry.get("kube-version"),
            release_name=entry.get("release-name", ChartOptions().release_name),
            namespace=entry.get("namespace"),
        )

    default = chart(data, ("render",))
    charts = {
        os.path.normpath(os.path.join(root, folder)): chart(entry, ("render", "charts", folder))
        for folder, entry in data.get("charts", {}).items()
    }
    if errors:
        raise ConfigError("\n".join(errors))
    return RenderOptions(chart=default, charts=charts)


def cluster_from(inventories: Sequence[tuple[FsPath, str]]) -> Cluster | None:
    """The cluster of a run: the nodes of every inventory file (``(path, name shown)``), in
    order; None when nothing describes one. A file gpulint cannot use is a ConfigError."""
    if not inventories:
        return None
    from gpulint.cluster.filters import cluster_groups
    from gpulint.cluster.inventory import InventoryError, read_inventory
    from gpulint.cluster.model import Cluster
    from gpulint.config.validate import cache_dir

    nodes: list[Node] = []
    cache = cache_dir()
    for path, shown in inventories:
        try:
            nodes.extend(read_inventory(path, shown, cache))
        except InventoryError as exc:
            raise ConfigError(str(exc)) from None
    if not nodes:
        return None
    cluster = Cluster(tuple(nodes))
    cluster_groups(cluster)  # grouped once here, before the linting workers are forked
    return cluster


def _inventory_paths(config: ConfigFile | None) -> list[tuple[FsPath, str]]:
    """The file's ``cluster:`` entries: relative paths that resolve inside its repository
    (a configuration in a pull request cannot make gpulint read ``/etc`` or ``~``)."""
    from gpulint.config.file import display_path, project_root

    if config is None or not config.data.get("cluster"):
        return []
    root = project_root(config)
    out: list[tuple[FsPath, str]] = []
    errors: list[str] = []
    for i, text in enumerate(config.data["cluster"]):
        where = ("cluster", i)
        if FsPath(text).is_absolute():
            errors.append(
                config.error(where, f"{text!r} is absolute: write a path relative to this file")
            )
            continue
        try:
            path = (config.folder / text).resolve()
        except (OSError, RuntimeError, ValueError) as exc:
            errors.append(config.error(where, f"{text!r} is not a usable path: {exc}"))
            continue
        if not path.is_relative_to(root):
            errors.append(config.error(where, f"{text!r} resolves outside the repository {root}"))
            continue
        out.append((path, display_path(path)))
    if errors:
        raise ConfigError("\n".join(errors))
    return out


def _cluster(config: ConfigFile | None, platform: str | None, pools: list[Any]) -> Cluster | None:
    """The cluster ``platform:`` and ``node-pools:`` describe (ConfigError naming the key)."""
    if platform is None and not pools:
        return None
    from gpulint.cluster.platforms import UnknownPlatform
    from gpulint.cluster.pools import PoolError, build_cluster

    def where(i: int) -> str:
        return config.where(("node-pools", i)) if config is not None else f"node-pools[{i}]"

    try:
        return build_cluster(platform, pools, where)
    except UnknownPlatform as exc:
        if config is not None and "platform" in config.data and platform == config.data["platform"]:
            raise ConfigError(config.error(("platform",), str(exc))) from None
        raise ConfigError(f"--platform: {exc}") from None
    except PoolError as exc:
        assert config is not None  # pools come from a configuration file only
        raise ConfigError(config.error(("node-pools", *exc.path), str(exc))) from None


def _baseline(config: ConfigFile) -> FsPath:
    """The ``baseline:`` file: relative to the configuration, inside its repository (a
    configuration in a pull request cannot make gpulint read ``/home/you/.kube/config``)."""
    from gpulint.config.file import project_root

    text = str(config.data["baseline"])
    where = ("baseline",)
    if FsPath(text).is_absolute():
        raise ConfigError(
            config.error(where, f"{text!r} is absolute: write a file relative to this file")
        )
    try:
        path: FsPath = (config.folder / text).resolve()
    except (OSError, RuntimeError, ValueError) as exc:  # NUL, name too long, link loop
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise ConfigError(config.error(where, f"{text!r} is not a usable file: {reason}")) from None
    root = project_root(config)
    if not path.is_relative_to(root):
        raise ConfigError(
            config.error(where, f"{text!r} resolves to {path}, outside the repository {root}")
        )
    return path


def _ignores(
    config: ConfigFile | None, root: FsPath
) -> tuple[tuple[PathIgnore, ...], tuple[ObjectIgnore, ...]]:
    """The file's ``per-file-ignores`` and ``per-object-ignores``, ready to match (globs
    relative to ``root``; each remembers the line it was written at)."""
    from gpulint.util.globs import PathMatcher, compile_all

    if config is None:
        return (), ()
    data = config.data
    per_file: list[PathIgnore] = []
    for pattern, codes in data.get("per-file-ignores", {}).items():
        matcher = PathMatcher(str(root), compile_all([pattern]))
        where = config.where(("per-file-ignores", pattern))
        per_file.append(PathIgnore(pattern, matcher, tuple(upper_selectors(codes)), where))
    per_object: list[ObjectIgnore] = []
    for i, row in enumerate(data.get("per-object-ignores", ())):
        paths = PathMatcher(str(root), compile_all([row["path"]])) if "path" in row else None
        per_object.append(
            ObjectIgnore(
                reason=row["reason"],
                kind=row.get("kind", "*"),
                namespace=row.get("namespace", "*"),
                name=row.get("name", "*"),
                rules=tuple(upper_selectors(row.get("rules", ()))),
                paths=paths,
                origin=config.where(("per-object-ignores", i)),
            )
        )
    return tuple(per_file), tuple(per_object)
