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
    from collections.abc import Callable, Iterable, Sequence

    from gpulint.commands.nearest import Nearest
    from gpulint.commands.projects import Projects
    from gpulint.lint.engine import Linter
    from gpulint.rule import Rule
    from gpulint.settings import Settings
    from gpulint.util.discover import Target
    from gpulint.util.factcache import FactCache


def project_settings(
    settings: Settings,
    files: Iterable[Target],
    codes: set[str],
    cache_in: str | None = None,
    jobs: int = 1,
    terraform: Sequence[Target] = (),
) -> Settings:
    """``settings`` with the facts of a project's ``files`` (:mod:`gpulint.lint.gather`): its
    node pools (when a cluster is described), what its device plugins advertise, its DRA
    claims and DeviceClasses, its ConfigMaps (when a rule of ``codes`` reads them) and its cluster
    picture (when no cluster is described and a rule of ``codes`` judges taints).
    ``cache_in``: the project's folder, whose ``.gpulint_cache`` keeps what each file said
    (:mod:`gpulint.util.factcache`; None: no cache). ``jobs``: the processes that may parse
    the files the cache cannot answer for."""
    from gpulint.lint.gather import project_facts
    from gpulint.lint.prepass import EVIDENCE_RULES, VALUE_RULES

    cache = open_cache(cache_in, settings)
    picture = settings.cluster is None and bool(codes & EVIDENCE_RULES)
    own = project_facts(
        settings, files, picture, bool(codes & VALUE_RULES), cache, jobs, terraform=terraform
    )
    if cache is not None:
        cache.save()
    return own


def open_cache(cache_in: str | None, settings: Settings) -> FactCache | None:
    """The facts cache of the project at ``cache_in`` (None: none is kept there, or this user
    has no folder of gpulint's own to keep its key in)."""
    if cache_in is None:
        return None
    from gpulint.config.validate import cache_dir
    from gpulint.util.factcache import FactCache, user_secret

    key = cache_key(settings.registry, settings.workloads)
    secret = user_secret(cache_dir()) if key is not None else None
    return FactCache(cache_in, key, secret) if key is not None and secret else None


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
        jobs: int = 1,
        findings: bool = False,
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
        #: The processes that may parse a project's files for its facts.
        self.jobs = jobs
        #: Keep each file's findings in its project's cache as well (gpulint.lint.kept): a
        #: plain run, not one that fixes or records the objects it linted.
        self.findings = findings
        self._settings_key: str | None = None
        if cache and findings:
            from gpulint.lint.kept import fingerprint

            self._settings_key = fingerprint(rules, settings)
        #: Each project's cache, saved once the run is linted (:meth:`save`).
        self._caches: dict[str, FactCache] = {}
        self._built: dict[str, tuple[Linter, Settings]] = {}
        #: The files the run lints, by project: absolute path -> label (:meth:`prepare`).
        #: What the facts stage parses of them is handed to the lint, not parsed again.
        self._named: dict[str, dict[str, str]] = {}
        #: The bytes of documents kept for the lint, in all projects (loader/handoff.py).
        self._spent = [0]

    def project(self, root: str) -> tuple[Linter, Settings]:
        """The linter of the project at ``root`` (gathered once) and its settings."""
        from gpulint.lint.engine import Linter

        built = self._built.get(root)
        if built is None:
            terraform: list[Target] = []
            files = self.projects.files(root, self.excluded, terraform)
            cache_in = root if self.cache and self.projects.is_root(root) else None
            from gpulint.lint.gather import project_facts
            from gpulint.lint.prepass import EVIDENCE_RULES, VALUE_RULES
            from gpulint.loader.handoff import Handoff

            cache = open_cache(cache_in, self.settings)
            picture = self.settings.cluster is None and bool(self.codes & EVIDENCE_RULES)
            maps = bool(self.codes & VALUE_RULES)
            prints: list[str] = []
            handoff = Handoff(self._named.get(root, {}), self._spent)
            own = project_facts(
                self.settings, files, picture, maps, cache, self.jobs, prints, handoff, terraform
            )
            linter = Linter(self.rules, own)
            linter.loads = handoff.loads
            if cache is not None:
                self._caches[root] = cache
                if self._settings_key is not None and prints:
                    from gpulint.lint.kept import KeptFindings

                    linter.kept = KeptFindings(cache, root, self._settings_key, prints[0])
            built = self._built[root] = (linter, own)
        return built

    def keep(self, entry: tuple[str, str, Any]) -> None:
        """Keep a file's findings in its project's cache (:func:`gpulint.lint.runner.run`)."""
        root, key, found = entry
        built = self._built.get(root)
        kept = built[0].kept if built is not None else None
        if kept is not None:
            kept.put(key, found)

    def save(self) -> None:
        """Write each project's cache (what its files said, and their findings)."""
        for cache in self._caches.values():
            cache.save()

    def linter_for(self, target: Target) -> Linter:
        root = self.projects.of(target)
        linter, settings = self.project(root)
        if self.nearest is None:
            return linter
        closest = self.nearest.linter_in(target, root, linter, settings)
        closest.loads = linter.loads  # the same files, parsed once
        return closest

    def prepare(self, targets: Iterable[Target]) -> Linter:
        """Every linter the ``targets`` need, built now (before workers are forked); the
        linter of the first (the run's, for what is not a file's: GL101 and the like)."""
        import os

        from gpulint.lint.engine import Linter

        targets = list(targets)
        for target in targets:
            if target.path is not None and target.render is None and target.part is None:
                named = self._named.setdefault(self.projects.of(target), {})
                named[os.path.abspath(target.path)] = target.label
        first: Linter | None = None
        for target in targets:
            linter = self.linter_for(target)
            first = first or linter
        return first or Linter(self.rules, self.settings)


def cache_key(registry: Any, workloads: Any) -> str | None:
    """What decides every per-file fact besides the file: gpulint's code (its version; in a
    source checkout its files too: :func:`gpulint.util.codekey.code_key`) and the format
    (the device registry, which decides the picture's records, is in each of their keys:
    :func:`gpulint.lint.gather.registry_key`). None: a custom workload table (no cache is
    kept)."""
    import hashlib

    from gpulint.util.codekey import code_key
    from gpulint.util.factcache import FORMAT

    if workloads is not None:
        return None
    return hashlib.sha256(f"{code_key()}\n{FORMAT}".encode()).hexdigest()


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
    import os

    from gpulint.lint.gather import project_facts
    from gpulint.loader.handoff import Handoff

    found = list(found)
    # The files inspected, by project: what the facts stage parses of them is inspected from
    # its documents, not parsed again (as check lints them).
    named: dict[str, dict[str, str]] = {}
    for target in found:
        if target.path is not None and target.render is None:
            named.setdefault(projects.of(target), {})[os.path.abspath(target.path)] = target.label
    spent = [0]
    inspectors: dict[str, Any] = {}
    for target in found:
        root = projects.of(target)
        made = inspectors.get(root)
        if made is None:
            terraform: list[Target] = []
            files = projects.files(root, excluded, terraform)
            handoff = Handoff(named.get(root, {}), spent)
            # As check: the files' picture stands in for a cluster only when none is described.
            got = project_facts(
                settings, files, settings.cluster is None, False, handoff=handoff,
                terraform=terraform,
            )  # fmt: skip
            own = settings.copy()
            own.registry = got.registry
            own.dra = got.dra
            own.crds = got.crds
            own.runtimes = got.runtimes
            picture = got.evidence
            made = inspectors[root] = inspector(own, picture)
            made.loads = handoff.loads
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
