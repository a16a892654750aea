"""The facts each project of a run holds, and the linter of each file: its project's.

A file is judged with the facts of its project (:mod:`gpulint.commands.projects`): the node-pool
objects, the device plugins' configurations, the DeviceClasses and ConfigMaps, and the
cluster picture of every file of the project (:mod:`gpulint.lint.prepass`), whether or not
the run was given them, and of no other project. Each project's facts are gathered once,
the first time one of its files asks, and give one :class:`~gpulint.lint.engine.Linter`
per project (and per closer configuration, :mod:`gpulint.commands.nearest`); the runner's
workers are forked with every linter of the listed files already built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from gpulint.commands.nearest import Nearest
    from gpulint.commands.projects import Projects
    from gpulint.lint.engine import Linter
    from gpulint.rule import Rule
    from gpulint.settings import Settings
    from gpulint.util.discover import Target


def project_settings(
    settings: Settings, files: Iterable[Target], codes: set[str], cache_in: str | None = None
) -> Settings:
    """``settings`` with the facts of a project's ``files``: its node pools (when a cluster
    is described), what its device plugins advertise, its DRA claims and DeviceClasses, its
    ConfigMaps (when a rule of ``codes`` reads them) and its cluster picture (when no cluster
    is described and a rule of ``codes`` judges taints). ``cache_in``: the project's folder, whose
    ``.gpulint_cache`` keeps what each file said (:mod:`gpulint.util.factcache`; None:
    no cache)."""
    from gpulint.lint.prepass import (
        EVIDENCE_RULES,
        VALUE_RULES,
        cluster_objects,
        cluster_picture,
        config_maps,
        device_plugins,
        dra_objects,
        read_project,
    )

    own = settings.copy()
    # The cache (its folder's, when the project keeps one) says which files are unchanged
    # before any is read; what it keeps of each is for the registry learned below.
    cache = None
    if cache_in is not None and own.cluster is None and codes & EVIDENCE_RULES:
        from gpulint.config.validate import cache_dir
        from gpulint.util.factcache import FactCache, user_secret

        key = cache_key(own.registry, own.workloads)
        secret = user_secret(cache_dir()) if key is not None else None
        cache = FactCache(cache_in, key, secret) if key is not None and secret else None
    listed, unread = read_project(files, cache)  # each file read once, for every pass
    if own.cluster is not None:
        own.cluster = cluster_objects(own.cluster, listed)
    own.registry = device_plugins(own, listed) or own.registry
    own.dra = dra_objects(listed)
    if codes & VALUE_RULES:
        own.config_maps = config_maps(listed)
    if own.cluster is None and codes & EVIDENCE_RULES:
        if cache is not None:
            learned = cache_key(own.registry, own.workloads)
            if learned is not None:
                cache.rekey(learned)
        own.evidence = cluster_picture(own, listed, cache, unread)
        if cache is not None:
            cache.save()
    return own


class RunFacts:
    """The linter of each target: its project's facts, its closest configuration's rules."""

    def __init__(
        self,
        rules: list[Rule],
        settings: Settings,
        projects: Projects,
        excluded: Callable[[str], bool] | None,
        codes: set[str],
        nearest: Nearest | None = None,
        cache: bool = True,
    ) -> None:
        self.rules = rules
        self.settings = settings
        self.projects = projects
        self.excluded = excluded
        self.codes = codes
        self.nearest = nearest
        #: Keep each project's per-file facts in its ``.gpulint_cache`` (a repository or a
        #: declared project only: never in a folder that is just the path given).
        self.cache = cache
        self._built: dict[str, tuple[Linter, Settings]] = {}

    def project(self, root: str) -> tuple[Linter, Settings]:
        """The linter of the project at ``root`` (gathered once) and its settings."""
        from gpulint.lint.engine import Linter

        built = self._built.get(root)
        if built is None:
            files = self.projects.files(root, self.excluded)
            cache_in = root if self.cache and self.projects.is_root(root) else None
            own = project_settings(self.settings, files, self.codes, cache_in)
            built = self._built[root] = (Linter(self.rules, own), own)
        return built

    def linter_for(self, target: Target) -> Linter:
        root = self.projects.of(target)
        linter, settings = self.project(root)
        if self.nearest is None:
            return linter
        return self.nearest.linter_in(target, root, linter, settings)

    def prepare(self, targets: Iterable[Target]) -> Linter:
        """Every linter the ``targets`` need, built now (before workers are forked); the
        linter of the first (the run's, for what is not a file's: GL101 and the like)."""
        from gpulint.lint.engine import Linter

        first: Linter | None = None
        for target in targets:
            linter = self.linter_for(target)
            first = first or linter
        return first or Linter(self.rules, self.settings)


def cache_key(registry: Any, workloads: Any) -> str | None:
    """What decides the per-file facts besides the file: gpulint's version, the format, and
    the device registry's resource names and hardware (a learned or configured registry
    makes other pods GPU pods). None: a custom workload table (no cache is kept)."""
    import hashlib

    from gpulint import __version__
    from gpulint.util.factcache import FORMAT

    if workloads is not None:
        return None
    names = (
        sorted(f"{name}\t{getattr(r, 'hardware', '')}" for name, r in registry.resources.items())
        if registry is not None
        else ["builtin"]
    )
    classes = sorted(registry.device_classes) if registry is not None else []
    text = "\n".join([__version__, str(FORMAT), *names, "--", *classes])
    return hashlib.sha256(text.encode()).hexdigest()


def inspect_projects(
    found: Iterable[Target],
    projects: Projects,
    settings: Settings,
    excluded: Callable[[str], bool] | None,
    inspector: Callable[[Settings, Any], Any],
    report: Any,
) -> None:
    """``gpulint inspect``'s ``report`` of the ``found`` targets, each inspected by an
    ``inspector`` made for its project's facts (its settings with the names its device
    plugins advertise, and the cluster picture its files give), whatever the run was given;
    ``cluster`` is the first project's picture, ``projects`` every project's."""
    from gpulint.lint.prepass import cluster_picture, device_plugins, dra_objects, read_files

    inspectors: dict[str, Any] = {}
    for target in found:
        root = projects.of(target)
        made = inspectors.get(root)
        if made is None:
            files = read_files(projects.files(root, excluded))
            own = settings.copy()
            own.registry = device_plugins(own, files) or own.registry
            own.dra = dra_objects(files)
            # As check: the files' picture stands in for a cluster only when none is described.
            picture = cluster_picture(own, files) if own.cluster is None else None
            made = inspectors[root] = inspector(own, picture)
        report.files.extend(made.inspect_targets([target]).files)
    clusters = []
    for root, made in inspectors.items():
        cluster = made.inspect_targets([])
        project = {"root": projects.shown(root), "from": projects.why(root)}
        cluster.cluster["project"] = project
        cluster.picture.insert(0, f"project {project['root']}: {project['from']}")
        clusters.append(cluster)
    if clusters:
        report.cluster, report.picture = clusters[0].cluster, clusters[0].picture
    report.projects = [(c.cluster, c.picture) for c in clusters]
