"""What decides what a run reports (:class:`Settings`): built by ``gpulint.config.resolve`` from the
configuration file and the command line, read by the engine.

A module of its own, below both, so that the configuration and the engine share one typed
value without either importing the other for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from gpulint.model import ObjectIgnore, PathIgnore, Severity

if TYPE_CHECKING:
    from gpulint.cluster.evidence import Picture
    from gpulint.cluster.model import Cluster
    from gpulint.k8s.crds import CrdFields
    from gpulint.k8s.devices import Registry
    from gpulint.k8s.dra import DraFacts
    from gpulint.k8s.envvalues import ConfigMaps, EnvValues
    from gpulint.k8s.servingruntimes import ServingRuntimes
    from gpulint.k8s.workloads import WorkloadTable


class Settings:
    """Everything that decides what a run reports (already validated)."""

    __slots__ = (
        "cluster",
        "config_maps",
        "crds",
        "dra",
        "evidence",
        "extend_select",
        "fail_on",
        "ignore",
        "options",
        "per_file_ignores",
        "per_object_ignores",
        "registry",
        "runtimes",
        "select",
        "severities",
        "workloads",
    )

    def __init__(
        self,
        select: frozenset[str] | None = None,  # None: every rule
        ignore: frozenset[str] = frozenset(),
        extend_select: frozenset[str] = frozenset(),
        severities: Mapping[str, Severity] = MappingProxyType({}),
        options: Mapping[str, Mapping[str, Any]] = MappingProxyType({}),
        fail_on: Severity = Severity.ERROR,
        registry: Registry | None = None,
        workloads: WorkloadTable | None = None,
        per_file_ignores: tuple[PathIgnore, ...] = (),
        per_object_ignores: tuple[ObjectIgnore, ...] = (),
        cluster: Cluster | None = None,
        evidence: Picture | None = None,
        dra: DraFacts | None = None,
        config_maps: ConfigMaps | None = None,
        crds: CrdFields | None = None,
        runtimes: ServingRuntimes | None = None,
    ) -> None:
        self.select = select
        self.ignore = ignore
        self.extend_select = extend_select
        self.severities = severities
        self.options = options
        self.fail_on = fail_on
        self.registry = registry
        self.workloads = workloads
        self.per_file_ignores = per_file_ignores
        self.per_object_ignores = per_object_ignores
        self.cluster = cluster
        #: What the linted files say about the GPU nodes when no cluster is described
        #: (gpulint.cluster.evidence; None: not gathered).
        self.evidence = evidence
        #: The DRA claims, templates and DeviceClasses of every file of the project
        #: (gpulint.k8s.dra.project_dra; None: not gathered, each file knows its own).
        self.dra = dra
        #: The ConfigMaps of every file the run lints (gpulint.k8s.envvalues; None: not
        #: gathered, each file knows its own).
        self.config_maps = config_maps
        #: The fields the project's CustomResourceDefinitions declare (gpulint.k8s.crds;
        #: None: not gathered, or the project ships none).
        self.crds = crds
        #: What the project's KServe serving runtimes mount (gpulint.k8s.servingruntimes;
        #: None: not gathered, or the project defines none).
        self.runtimes = runtimes

    def copy(self) -> Settings:
        """A copy, to which one project's facts are given (gpulint.commands.projects)."""
        new = Settings.__new__(Settings)
        for name in Settings.__slots__:
            setattr(new, name, getattr(self, name))
        return new

    def env_values(self) -> EnvValues:
        """A linter's view of the ConfigMaps its rules read variables from: the file it
        lints (named per file), then the run's (``config_maps``)."""
        from gpulint.k8s.envvalues import EnvValues

        return EnvValues(self.config_maps)
