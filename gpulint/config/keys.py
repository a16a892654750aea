"""Every key of a configuration file, one row each (:data:`KEYS`): its JSON Schema, its
default, the command-line flag that overrides it and how, whether it holds rule selectors,
and the :class:`~gpulint.settings.Settings` value it feeds.

The rest is derived from this table: the static part of the configuration schema
(:func:`base_schema`, which :func:`gpulint.config.schema.config_schema` completes with what
is made from code), the precedence and provenance of each value
(:func:`gpulint.config.resolve.resolve`: default < file < command line), the selectors and
globs checked and the codes of rules not loaded set aside (:mod:`gpulint.config.validate`,
which finds them through each row's :attr:`Key.selectors` and :attr:`Key.globs`); tests
check the command line's options (``gpulint.commands.checkoptions``: every option that
overrides a key is the row's flag, and every row's flag such an option) and the settings
against it. A new key is a row here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Literal

from gpulint.config import keyschemas

#: The origins of a value no file gave: the command line's flags, or the default.
COMMAND_LINE = "command line"
DEFAULT = "default"

#: How a command-line flag meets the file's value: it replaces it, or adds to its list.
Combine = Literal["replace", "extend"]


class Entry:
    """One effective value and where it came from."""

    __slots__ = ("origin", "value")

    def __init__(self, value: Any, origin: str) -> None:
        self.value = value
        self.origin = origin

    def __repr__(self) -> str:
        return f"Entry({self.value!r}, {self.origin!r})"


#: Steps of a place inside a key's value (:data:`Where`): ``EVERY`` item of a list or value
#: of a mapping, or each of a mapping's ``NAMES`` (a name as a value of its own); any other
#: step is a key of a mapping.
EVERY, NAMES = "*", "<names>"
#: A place inside a key's value, as steps from the value down: ``(EVERY, "rules", EVERY)``
#: is each item of the ``rules`` list of each item.
Where = tuple[str, ...]


def places(value: Any, where: Where, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, Any]]:
    """Each ``(path, value)`` at ``where`` inside ``value`` (the path from the key, with
    ``at`` before it); what is not of the shape the steps say is skipped (the schema says
    what is wrong with it). A loop over the steps, not a recursion: ``where`` is a row's."""
    found: list[tuple[tuple[Any, ...], Any]] = [(at, value)]
    for step in where:
        deeper: list[tuple[tuple[Any, ...], Any]] = []
        for path, node in found:
            if step == EVERY and isinstance(node, list):
                deeper += [((*path, i), item) for i, item in enumerate(node)]
            elif step == EVERY and isinstance(node, dict):
                deeper += [((*path, k), item) for k, item in node.items()]
            elif step == NAMES and isinstance(node, dict):
                deeper += [((*path, k), k) for k in node]
            elif step not in (EVERY, NAMES) and isinstance(node, dict) and step in node:
                deeper.append(((*path, step), node[step]))
        found = deeper
    yield from found


def upper_selectors(values: Iterable[str]) -> list[str]:
    """The file's rule selectors in upper case (already checked by
    :func:`gpulint.config.validate.selector`)."""
    return [v.strip().upper() for v in values]


class Key:
    """One configuration key (a plain class: this module is on every run's start-up)."""

    __slots__ = (
        "by_code",
        "combine",
        "default",
        "flag",
        "globs",
        "name",
        "ordered_globs",
        "schema",
        "selectors",
        "setting",
    )

    def __init__(
        self,
        name: str,
        *,
        schema: dict[str, Any],
        default: Any = None,
        flag: str | None = None,
        combine: Combine = "replace",
        setting: str | None = None,
        selectors: tuple[Where, ...] = (),
        globs: tuple[Where, ...] = (),
        ordered_globs: bool = False,
        by_code: bool = False,
    ) -> None:
        self.name = name
        #: The key's JSON Schema (its shape and description; a test validates it).
        self.schema = schema
        #: Its value when neither the file nor the command line says one.
        self.default = default
        #: The ``check`` option that overrides it (``--no-`` + the name when it is false).
        self.flag = flag
        self.combine = combine
        #: The :class:`~gpulint.settings.Settings` attribute it feeds (None: the run's
        #: options, gpulint.config.resolve.Effective, or the rules' loading).
        self.setting = setting
        #: Where its value holds rule selectors (codes, prefixes, ALL), each checked against
        #: the loaded rules; ``((EVERY,),)``: the value is a list of them, upper-cased.
        self.selectors = selectors
        #: Where its value holds file or name globs, each checked to be one.
        self.globs = globs
        #: Whether its globs are read in order, a later ``!`` taking back an earlier one
        #: (``exclude``); elsewhere a glob stands alone and ``!`` would match nothing.
        self.ordered_globs = ordered_globs
        #: Whether its value is a mapping by rule code (``severity``, ``rules``).
        self.by_code = by_code

    @property
    def selector_list(self) -> bool:
        """Whether the value itself is a list of selectors (``select``, ``ignore``)."""
        return (EVERY,) in self.selectors


#: What a rule selector is, as the messages about one say it.
SELECTOR_HELP = "a rule code (GPU001), a prefix of codes (GPU0, GPU) or ALL, in any case"
#: The schema of one rule selector.
SELECTOR: dict[str, Any] = {"type": "string", "description": SELECTOR_HELP}

#: The place of each item of a list value.
ITEMS: tuple[Where, ...] = ((EVERY,),)

#: Every key, in the order ``gpulint config`` shows them.
KEYS: tuple[Key, ...] = (
    Key(
        "select",
        default=["ALL"],
        flag="--select",
        combine="replace",
        setting="select",
        selectors=ITEMS,
        schema={
            "type": "array",
            "description": (
                "Only these rules (codes, prefixes or ALL). Default: every rule but the opt-in "
                "ones (GPU003); ALL, a prefix or a code selects those too."
            ),
            "items": SELECTOR,
        },
    ),
    Key(
        "extend-select",
        default=[],
        flag="--extend-select",
        combine="extend",
        setting="extend_select",
        selectors=ITEMS,
        schema={
            "type": "array",
            "description": "Rules to enable on top of `select`.",
            "items": SELECTOR,
        },
    ),
    Key(
        "ignore",
        default=[],
        flag="--ignore",
        combine="extend",
        setting="ignore",
        selectors=ITEMS,
        schema={
            "type": "array",
            "description": "Rules to turn off (codes or prefixes).",
            "items": SELECTOR,
        },
    ),
    Key(
        "fail-on",
        default="error",
        flag="--fail-on",
        combine="replace",
        setting="fail_on",
        schema={
            "description": "Exit 1 when a finding at or above this severity is found.",
        },
    ),
    Key(
        "fail-if-no-files",
        default=False,
        flag="--fail-if-no-files",
        combine="replace",
        schema={
            "type": "boolean",
            "description": (
                "Exit 1 when no file was linted (the paths held no *.yaml, *.yml or Markdown "
                "file, or every one was excluded). Default: false, a warning only."
            ),
        },
    ),
    Key(
        "project",
        default=False,
        schema={
            "type": "boolean",
            "description": (
                "This folder is a project of its own: the facts gpulint gathers from the files "
                "(the taints the GPU pods tolerate, node pools, device plugins' configurations,"
                " ConfigMaps, DeviceClasses) are this folder's, kept apart from the repository "
                "around it (docs/cluster.md#projects-where-the-facts-come-from). Default: false"
                " (the project is the repository)."
            ),
        },
    ),
    Key(
        "cache",
        default=True,
        schema={
            "type": "boolean",
            "description": (
                "Keep what each file says about the cluster in the project's .gpulint_cache "
                "folder, so a run reads only the files that changed "
                "(docs/cluster.md#projects-where-the-facts-come-from). Default: true; "
                "--no-cache turns it off for one run."
            ),
        },
    ),
    Key(
        "severity",
        setting="severities",
        by_code=True,
        schema={
            "type": "object",
            "description": "The severity of a rule, by code.",
            "additionalProperties": False,
        },
    ),
    Key(
        "rules",
        setting="options",
        by_code=True,
        schema={
            "type": "object",
            "description": "Options of a rule, by code.",
            "additionalProperties": False,
        },
    ),
    Key(
        "gpu-taints",
        setting="options",
        schema={
            "description": (
                "The taints on the cluster's GPU nodes, for every rule with a `taints` option "
                "(GPU020, GPU021, GPU023); `[]` turns them off (GKE). `rules.<CODE>.taints` "
                "wins over it."
            ),
        },
    ),
    Key(
        "exclude",
        default=[],
        globs=ITEMS,
        ordered_globs=True,
        schema={
            "type": "array",
            "description": (
                "Globs of files and folders not to lint when walking folders (relative to this "
                "file; .gitignore-style)."
            ),
            "items": {
                "type": "string",
                "minLength": 1,
            },
        },
    ),
    Key(
        "force-exclude",
        default=False,
        schema={
            "type": "boolean",
            "description": (
                "Apply `exclude` to files named on the command line too (pre-commit passes file"
                " names)."
            ),
        },
    ),
    Key(
        "per-file-ignores",
        default={},
        setting="per_file_ignores",
        selectors=((EVERY, EVERY),),
        globs=((NAMES,),),
        schema={
            "type": "object",
            "description": "Rules to ignore in files matching a glob (relative to this file).",
            "additionalProperties": {
                "type": "array",
                "description": "Rule codes or prefixes ignored in these files.",
                "items": SELECTOR,
            },
        },
    ),
    Key(
        "per-object-ignores",
        default=[],
        setting="per_object_ignores",
        selectors=((EVERY, "rules", EVERY),),
        globs=tuple((EVERY, field) for field in ("kind", "namespace", "name", "path")),
        schema={
            "type": "array",
            "description": (
                "Objects whose findings are suppressed, by kind/namespace/name glob, for "
                "vendored manifests that cannot carry annotations."
            ),
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "reason",
                ],
                "properties": {
                    "kind": {
                        "type": "string",
                        "minLength": 1,
                        "description": "Kind glob.",
                    },
                    "namespace": {
                        "type": "string",
                        "description": "Namespace glob.",
                    },
                    "name": {
                        "type": "string",
                        "minLength": 1,
                        "description": "Name glob.",
                    },
                    "path": {
                        "type": "string",
                        "minLength": 1,
                        "description": "File glob.",
                    },
                    "rules": {
                        "type": "array",
                        "description": "Rules to suppress (default: every rule).",
                        "items": SELECTOR,
                    },
                    "reason": {
                        "type": "string",
                        "minLength": 1,
                        "description": "Why: reported as the suppression's justification.",
                    },
                },
            },
        },
    ),
    Key(
        "devices",
        default=[],
        setting="registry",
        schema={
            "type": "array",
            "description": "Extra device registry entries, merged over the built-in registry.",
            "items": {
                "$ref": "#/$defs/device",
            },
        },
    ),
    Key(
        "workloads",
        default=[],
        setting="workloads",
        schema={
            "type": "array",
            "description": (
                "Extra kinds and where their pod specs are (the shape of "
                "gpulint/data/workloads.json rows)."
            ),
            "items": {
                "$ref": "#/$defs/workloads-workload",
            },
        },
    ),
    Key(
        "plugins",
        default=[],
        flag="--plugin",
        combine="extend",
        schema={
            "type": "array",
            "description": (
                "Importable rule modules to load (rules installed with a `gpulint.rules` entry "
                "point load without this). Imported only with --allow-plugins or "
                "GPULINT_ALLOW_PLUGINS=1."
            ),
            "items": {
                "type": "string",
                "pattern": "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$",
                "description": "a dotted module name",
            },
        },
    ),
    Key(
        "rule-dirs",
        default=[],
        flag="--rule-dir",
        combine="extend",
        schema={
            "type": "array",
            "description": (
                "Folders (relative to this file, inside its repository) of rule modules (*.py, "
                "imported only with --allow-plugins or GPULINT_ALLOW_PLUGINS=1) and declarative"
                " rules (*.yaml)."
            ),
            "items": {
                "type": "string",
                "minLength": 1,
            },
        },
    ),
    Key(
        "render",
        default={},
        schema=keyschemas.RENDER,
    ),
    Key(
        "cluster",
        default=[],
        flag="--cluster",
        combine="replace",
        setting="cluster",
        schema={
            "type": "array",
            "description": (
                "Node inventories (the output of `kubectl get nodes -o yaml` or `-o json`), "
                "relative to this file and inside its repository: GPU050 and `gpulint inspect` "
                "judge each GPU pod against these nodes as kube-scheduler's filters do. "
                "`--cluster` on the command line replaces this list."
            ),
            "items": {
                "type": "string",
                "minLength": 1,
            },
        },
    ),
    Key(
        "platform",
        default=None,
        flag="--platform",
        combine="replace",
        setting="cluster",
        schema={
            "description": (
                "The platform that runs the cluster (its profile: what it does on its own, "
                "docs/cluster.md): ack, gke, gke-autopilot, eks, aks, openshift or generic. "
                "`--platform` wins over it."
            ),
        },
    ),
    Key(
        "node-pools",
        default=[],
        setting="cluster",
        schema=keyschemas.NODE_POOLS,
    ),
    Key(
        "baseline",
        default=None,
        flag="--baseline",
        combine="replace",
        schema={
            "type": "string",
            "minLength": 1,
            "description": (
                "A baseline file written by `gpulint check --write-baseline` (relative to this "
                "file, inside its repository): findings recorded in it are not reported, and "
                "entries that match nothing any more are GL101 findings."
            ),
        },
    ),
)

#: Each key by its name.
BY_NAME = {key.name: key for key in KEYS}

#: Keys read before rules are loaded (they say which rules exist).
LOADING_KEYS = ("plugins", "rule-dirs")


def base_schema() -> dict[str, Any]:
    """The static part of the configuration's JSON Schema: every key, its shape and
    description (a fresh copy; :func:`gpulint.config.schema.config_schema` adds the rules,
    the severities, the platforms and the taints option)."""
    import copy

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://gpulint.dev/schemas/config.schema.json",
        "title": "gpulint configuration",
        "description": (
            "`.gpulint.yaml`, or the `[tool.gpulint]` table of pyproject.toml. Generated "
            "from the rules' OPTIONS by `gpulint config --schema`."
        ),
        "type": "object",
        "properties": {key.name: copy.deepcopy(key.schema) for key in KEYS},
        "additionalProperties": False,
    }
