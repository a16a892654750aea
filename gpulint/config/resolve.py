"""The configuration of a run: defaults < configuration file < command line.

:func:`resolve` validates the file (:func:`gpulint.config.validate.validate_config`) and builds
the run's :class:`~gpulint.settings.Settings`, remembering where each value came from
(:class:`Entry`), which :func:`gpulint.commands.config.describe` shows for ``gpulint config``.
The file is found and read by :mod:`gpulint.config.file`.

Precedence: built-in defaults < configuration file < command line. ``--select`` replaces the
file's ``select``; ``--extend-select`` and ``--ignore`` add to the file's lists.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

from gpulint.config.file import GPU_TAINTS, ConfigError, ConfigFile
from gpulint.config.validate import validate_config
from gpulint.model import Path, Severity
from gpulint.settings import Settings

if TYPE_CHECKING:
    from gpulint.cluster.model import Cluster, Node
    from gpulint.render import RenderOptions
    from gpulint.rule import Rule
    from gpulint.suppress.findings import ObjectIgnore, PathIgnore
    from gpulint.util.globs import PathMatcher

COMMAND_LINE = "command line"

DEFAULT = "default"


def _codes(values: Iterable[str]) -> list[str]:
    """The file's selectors in upper case (already checked by ``selector``)."""
    return [v.strip().upper() for v in values]


class Overrides:
    """What the command line says (None or empty: not given)."""

    __slots__ = (
        "cluster",
        "extend_select",
        "fail_if_no_files",
        "fail_on",
        "ignore",
        "platform",
        "select",
    )

    def __init__(
        self,
        select: list[str] | None = None,
        extend_select: Sequence[str] = (),
        ignore: Sequence[str] = (),
        fail_on: str | None = None,
        fail_if_no_files: bool | None = None,
        cluster: Sequence[str] = (),
        platform: str | None = None,
    ) -> None:
        self.platform = platform
        self.select = select
        self.extend_select = extend_select
        self.ignore = ignore
        self.fail_on = fail_on
        self.fail_if_no_files = fail_if_no_files
        #: ``--cluster`` files (relative to the working directory); they replace ``cluster:``.
        self.cluster = cluster


class Entry:
    """One effective value and where it came from."""

    __slots__ = ("origin", "value")

    def __init__(self, value: Any, origin: str) -> None:
        self.value = value
        self.origin = origin

    def __repr__(self) -> str:
        return f"Entry({self.value!r}, {self.origin!r})"


class Effective:
    """The configuration of a run, ready to use."""

    __slots__ = (
        "baseline",
        "entries",
        "exclude",
        "fail_if_no_files",
        "file",
        "force_exclude",
        "overrides",
        "render",
        "root",
        "settings",
    )

    def __init__(
        self,
        settings: Settings,
        file: ConfigFile | None,
        root: FsPath,
        exclude: PathMatcher,
        force_exclude: bool,
        entries: dict[str, Entry],
        fail_if_no_files: bool = False,
        render: RenderOptions | None = None,
        baseline: FsPath | None = None,
    ) -> None:
        self.settings = settings
        #: How charts are rendered (``render:``); whether to render is the command line's.
        self.render = render
        self.file = file
        self.root = root
        self.exclude = exclude
        self.force_exclude = force_exclude
        self.entries = entries
        #: Exit 1 when no file was linted (``fail-if-no-files``, ``--fail-if-no-files``).
        self.fail_if_no_files = fail_if_no_files
        #: The configuration's ``baseline:`` file (resolved, inside its repository).
        self.baseline = baseline
        #: What the command line said (a nested configuration is resolved with it too).
        self.overrides = Overrides()


# -- resolving --------------------------------------------------------------------------------
def resolve(
    config: ConfigFile | None,
    rules: Sequence[Rule],
    overrides: Overrides | None = None,
    cwd: FsPath | None = None,
) -> Effective:
    """Validate ``config`` for ``rules`` and build the run's Settings (ConfigError if bad)."""
    from gpulint.util.globs import PathMatcher, compile_all

    cli = overrides or Overrides()
    data: dict[str, Any] = config.data if config is not None else {}
    validate_config(config, rules)

    root = config.folder if config is not None else (cwd or FsPath.cwd())
    entries: dict[str, Entry] = {}

    def origin(key: Path) -> str:
        assert config is not None
        return config.where(key)

    def value(key: str, default: Any) -> Entry:
        if key in data:
            return Entry(data[key], origin((key,)))
        return Entry(default, DEFAULT)

    # Rule selection.
    if cli.select is not None:
        entries["select"] = Entry(cli.select, f"{COMMAND_LINE} (--select)")
    elif "select" in data:
        entries["select"] = Entry(_codes(data["select"]), origin(("select",)))
    else:
        entries["select"] = Entry(["ALL"], DEFAULT)
    for key, extra, flag in (
        ("extend-select", cli.extend_select, "--extend-select"),
        ("ignore", cli.ignore, "--ignore"),
    ):
        entry = value(key, [])
        entry = Entry(_codes(entry.value), entry.origin)
        if extra:
            base = entry.origin if entry.value else ""
            joined = f"{base} + " if base and base != DEFAULT else ""
            entry = Entry([*entry.value, *extra], f"{joined}{COMMAND_LINE} ({flag})")
        entries[key] = entry
    if cli.fail_on is not None:
        entries["fail-on"] = Entry(cli.fail_on, f"{COMMAND_LINE} (--fail-on)")
    else:
        entries["fail-on"] = value("fail-on", Severity.ERROR.label)
    if cli.fail_if_no_files is not None:
        flag = "--fail-if-no-files" if cli.fail_if_no_files else "--no-fail-if-no-files"
        entries["fail-if-no-files"] = Entry(cli.fail_if_no_files, f"{COMMAND_LINE} ({flag})")
    else:
        entries["fail-if-no-files"] = value("fail-if-no-files", False)
    entries["project"] = value("project", False)
    entries["cache"] = value("cache", True)

    # Severities and options, per rule.
    severities: dict[str, Severity] = {}
    configured = data.get("severity", {})
    options: dict[str, dict[str, Any]] = {}
    rule_options = data.get("rules", {})
    taints = data.get(GPU_TAINTS)
    for rule in sorted(rules, key=lambda r: r.code):
        if rule.code in configured:
            level = configured[rule.code]
            severities[rule.code] = Severity.parse(level)
            entries[f"severity.{rule.code}"] = Entry(level, origin(("severity", rule.code)))
        else:
            entries[f"severity.{rule.code}"] = Entry(rule.severity.label, DEFAULT)
        chosen: dict[str, Any] = {}
        for name, spec in rule.options_schema.items():
            key = f"rules.{rule.code}.{name}"
            mine = rule_options.get(rule.code, {})
            if name in mine:
                chosen[name] = mine[name]
                entries[key] = Entry(mine[name], origin(("rules", rule.code, name)))
            elif name == "taints" and taints is not None:
                chosen[name] = taints
                entries[key] = Entry(taints, f"{origin((GPU_TAINTS,))} ({GPU_TAINTS})")
            else:
                entries[key] = Entry(spec.get("default"), DEFAULT)
        if chosen:
            options[rule.code] = chosen

    # Files.
    exclude = value("exclude", [])
    entries["exclude"] = exclude
    entries["force-exclude"] = value("force-exclude", False)
    entries["per-file-ignores"] = value("per-file-ignores", {})
    entries["per-object-ignores"] = value("per-object-ignores", [])
    per_file, per_object = _ignores(config, root)

    # Data merged over the built-in tables.
    registry = None
    entries["devices"] = value("devices", [])
    if data.get("devices"):
        from gpulint.k8s.devices import builtin_registry

        registry = builtin_registry().merged(data["devices"])
    table = None
    entries["workloads"] = value("workloads", [])
    if data.get("workloads"):
        from gpulint.k8s.workloads import WorkloadKind, builtin_table

        rows = [
            WorkloadKind.from_json(row, origin(("workloads", i)))
            for i, row in enumerate(data["workloads"])
        ]
        table = builtin_table().extended(rows)
    entries["plugins"] = value("plugins", [])
    entries["rule-dirs"] = value("rule-dirs", [])
    entries["render"] = value("render", {})
    render = _render(config, root)

    # The cluster the manifests are applied to.
    if cli.cluster:
        entries["cluster"] = Entry(list(cli.cluster), f"{COMMAND_LINE} (--cluster)")
        inventories = [(FsPath(p), p) for p in cli.cluster]
    else:
        entries["cluster"] = value("cluster", [])
        inventories = _inventory_paths(config)
    described = cluster_from(inventories)

    # The cluster: the platform profile and the declared node pools (gpulint.cluster.pools).
    if cli.platform is not None:
        entries["platform"] = Entry(cli.platform, f"{COMMAND_LINE} (--platform)")
    else:
        entries["platform"] = value("platform", None)
    entries["node-pools"] = value("node-pools", [])
    cluster = _cluster(config, entries["platform"].value, data.get("node-pools") or [])
    # Inventory nodes and declared pools together: the platform's facts with every node.
    if described is not None:
        cluster = (
            described
            if cluster is None
            else cluster._replace(nodes=(*described.nodes, *cluster.nodes))
        )
        if entries["platform"].value is None:  # the platform the nodes' labels show
            from gpulint.cluster.platforms import with_inferred_platform

            cluster = with_inferred_platform(cluster)
    entries["baseline"] = value("baseline", None)
    baseline = _baseline(config) if config is not None and "baseline" in data else None

    select = entries["select"].value
    settings = Settings(
        # The default selection (None) leaves opt-in rules out; an explicit ALL runs them.
        select=None if entries["select"].origin == DEFAULT else frozenset(select),
        extend_select=frozenset(entries["extend-select"].value),
        ignore=frozenset(entries["ignore"].value),
        severities=severities,
        options=options,
        fail_on=Severity.parse(entries["fail-on"].value),
        registry=registry,
        workloads=table,
        per_file_ignores=per_file,
        per_object_ignores=per_object,
        cluster=cluster,
    )
    effective = Effective(
        settings=settings,
        file=config,
        root=root,
        exclude=PathMatcher(str(root), compile_all(exclude.value)),
        force_exclude=bool(entries["force-exclude"].value),
        entries=entries,
        fail_if_no_files=bool(entries["fail-if-no-files"].value),
        render=render,
        baseline=baseline,
    )
    effective.overrides = cli
    return effective


def _render(config: ConfigFile | None, root: FsPath) -> RenderOptions | None:
    """The file's ``render:``: how charts are rendered, by default and per chart folder.

    Paths are relative to the configuration file's folder and must stay inside it, their
    links resolved, and be regular files when they exist (not a FIFO, a device or
    ``/dev/stdin``): the file may come with the tree being linted, and helm reads every
    values file it is given. A values file that breaks this is a configuration error at its
    line.
    """
    from gpulint.config.file import ConfigError
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
    from gpulint.config.file import ConfigError

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
    from gpulint.config.file import ConfigError, project_root

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
    from gpulint.suppress.findings import ObjectIgnore, PathIgnore
    from gpulint.util.globs import PathMatcher, compile_all

    if config is None:
        return (), ()
    data = config.data
    per_file: list[PathIgnore] = []
    for pattern, codes in data.get("per-file-ignores", {}).items():
        matcher = PathMatcher(str(root), compile_all([pattern]))
        where = config.where(("per-file-ignores", pattern))
        per_file.append(PathIgnore(pattern, matcher, tuple(_codes(codes)), where))
    per_object: list[ObjectIgnore] = []
    for i, row in enumerate(data.get("per-object-ignores", ())):
        paths = PathMatcher(str(root), compile_all([row["path"]])) if "path" in row else None
        per_object.append(
            ObjectIgnore(
                reason=row["reason"],
                kind=row.get("kind", "*"),
                namespace=row.get("namespace", "*"),
                name=row.get("name", "*"),
                rules=tuple(_codes(row.get("rules", ()))),
                paths=paths,
                origin=config.where(("per-object-ignores", i)),
            )
        )
    return tuple(per_file), tuple(per_object)
