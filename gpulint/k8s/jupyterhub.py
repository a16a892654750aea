"""KubeSpawner's settings in JupyterHub's Helm chart values: the pods each user may get.

JupyterHub's chart (zero-to-jupyterhub-k8s) turns its ``singleuser`` values into KubeSpawner's
settings, and KubeSpawner makes each user's pod from them: ``extraResource.limits`` and
``guarantees`` become ``extra_resource_limits`` and ``extra_resource_guarantees`` (the
container's ``limits`` and ``requests``), ``extraEnv`` the container's environment,
``extraPodConfig`` fields of the pod spec. Each ``profileList`` entry a user may pick carries a
``kubespawner_override`` applied over those settings (and each choice of its
``profile_options`` one more): a mapping is merged key by key into the setting's mapping,
anything else replaces it (KubeSpawner's ``_apply_overrides``). A key that is no KubeSpawner
setting is set as a plain attribute of the spawner, which nothing reads.

This module finds those settings where they are written: a values file of the chart (a
document with no ``apiVersion`` and ``kind`` whose top-level keys are the chart's, with a
``singleuser`` mapping; or the same under a ``jupyterhub:`` key, a chart that depends on it),
and the values a Flux ``HelmRelease`` (``spec.values``) or an Argo CD ``Application``
(``spec.source.helm.valuesObject``, ``spec.sources[].helm.valuesObject``) hands the chart.
Values in a string (a ConfigMap's text, Argo CD's ``values``, k3s's ``valuesContent``) are not
read.

Sources: the chart's ``values.schema.yaml`` and ``templates/hub/_helpers-*.tpl`` /
``files/hub/jupyterhub_config.py`` (jupyterhub/zero-to-jupyterhub-k8s@48ea50e), KubeSpawner's
traits and ``_apply_overrides`` (jupyterhub/kubespawner@4161d54, ``kubespawner/spawner.py``),
JupyterHub's ``Spawner`` traits (jupyterhub/jupyterhub@2841153, ``jupyterhub/spawner.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import cache
from typing import Any, NamedTuple

from gpulint.k8s.objects import expand
from gpulint.model import Path

#: The chart's top-level values (values.schema.yaml's ``properties``): a document whose keys
#: are all among them, with a ``singleuser`` mapping, is the chart's values.
CHART_KEYS = frozenset(
    {
        "cull",
        "custom",
        "debug",
        "enabled",
        "fullnameOverride",
        "global",
        "hub",
        "imagePullSecret",
        "imagePullSecrets",
        "ingress",
        "nameOverride",
        "prePuller",
        "proxy",
        "rbac",
        "scheduling",
        "singleuser",
    }
)

#: KubeSpawner's settings (its traits and those of JupyterHub's ``Spawner`` it inherits) whose
#: names are a pod's or a container's field written in snake case: a key of an override that
#: names such a field and is not among these is not a setting.
FIELD_SETTINGS = frozenset(
    {
        "args",
        "automount_service_account_token",
        "env",
        "image",
        "image_pull_policy",
        "image_pull_secrets",
        "init_containers",
        "node_selector",
        "priority_class_name",
        "scheduler_name",
        "service_account",
        "tolerations",
        "volume_mounts",
        "volumes",
        "working_dir",
    }
)


#: At most this many settings, summed over the choices a user can make (each holds what it
#: inherits): profiles past it are not read. Real values hold a few dozen; a file of many
#: profiles under a large ``extraEnv`` would otherwise cost their product.
MAX_SETTINGS = 200_000


class Setting(NamedTuple):
    """One value a user's pod gets: what it is and where it is written."""

    value: Any
    path: Path


class Spawn(NamedTuple):
    """The settings one choice of a user makes: the chart's ``singleuser`` values, or those
    with a profile's (and an option's) overrides applied."""

    #: ``singleuser``, or the profile's ``display_name`` (its ``slug`` else, its index last),
    #: with the option's choice after a colon.
    name: str
    #: The profile's (or the choice's) ``kubespawner_override``, or ``singleuser``.
    path: Path
    limits: dict[str, Setting]
    guarantees: dict[str, Setting]
    env: dict[str, Setting]
    #: Keys of the override that name a pod or container field KubeSpawner has no setting
    #: for: (key, its path, the field, "pod" or "container").
    strays: tuple[tuple[str, Path, str, str], ...]


#: Where an object hands a chart its values, by kind: a Flux HelmRelease's, an Argo CD
#: Application's source or sources (patterns of :func:`gpulint.k8s.objects.expand`).
HANDED = {
    "HelmRelease": (("spec", "values"),),
    "Application": (
        ("spec", "source", "helm", "valuesObject"),
        ("spec", "sources", "*", "helm", "valuesObject"),
    ),
}


def chart_values(data: Any, path: Path = ()) -> Iterator[tuple[dict[str, Any], Path]]:
    """The JupyterHub chart's values in a document that is no Kubernetes object (``data``),
    or in an object that hands them to the chart (:data:`HANDED`)."""
    if not isinstance(data, dict):
        return
    kind = data.get("kind")
    if isinstance(kind, str) and isinstance(data.get("apiVersion"), str):
        for pattern in HANDED.get(kind, ()):
            for where, values in expand(data, pattern, path):
                yield from _values_at(values, where, handed=True)
        return
    if "apiVersion" in data or "kind" in data:
        return
    yield from _values_at(data, path, handed=False)


def _values_at(data: Any, path: Path, handed: bool) -> Iterator[tuple[dict[str, Any], Path]]:
    if not isinstance(data, dict):
        return
    if _is_values(data, handed):
        yield data, path
        return
    inner = data.get("jupyterhub")  # a chart that depends on JupyterHub's, as it names it
    if isinstance(inner, dict) and _is_values(inner, handed):
        yield inner, (*path, "jupyterhub")


def _is_values(data: dict[str, Any], handed: bool) -> bool:
    if not isinstance(data.get("singleuser"), dict) and _spawner_config(data) is None:
        return False
    # Values handed to a chart are that chart's; a file alone is the chart's only when
    # every key is one of the chart's.
    return handed or all(isinstance(k, str) and k in CHART_KEYS for k in data)


def _spawner_config(data: dict[str, Any]) -> dict[str, Any] | None:
    """``hub.config.KubeSpawner``: KubeSpawner's settings by their own names, which the chart
    applies after those it makes from ``singleuser``."""
    config = _get(data.get("hub"), "config")
    spawner = _get(config, "KubeSpawner")
    return spawner if isinstance(spawner, dict) else None


def spawns(values: dict[str, Any], path: Path) -> list[Spawn]:
    """The settings each choice of a user makes, the chart's ``singleuser`` first (until
    they add up to :data:`MAX_SETTINGS`)."""
    single = values.get("singleuser")
    single = single if isinstance(single, dict) else {}
    base_path = (*path, "singleuser")
    resource = single.get("extraResource")
    res_path = (*base_path, "extraResource")
    base = _State(
        _settings(_get(resource, "limits"), (*res_path, "limits")),
        _settings(_get(resource, "guarantees"), (*res_path, "guarantees")),
        _env(single.get("extraEnv"), (*base_path, "extraEnv")),
    )
    profiles: Any = single.get("profileList")
    list_path = (*base_path, "profileList")
    spawner = _spawner_config(values)
    if spawner is not None:
        spawner_path = (*path, "hub", "config", "KubeSpawner")
        base = base.applied(spawner, spawner_path)
        if isinstance(spawner.get("profile_list"), list):
            profiles, list_path = spawner["profile_list"], (*spawner_path, "profile_list")
    out = [Spawn("singleuser", base_path, base.limits, base.guarantees, base.env, ())]
    if not isinstance(profiles, list):
        return out
    work = _size(out[0])
    for i, profile in enumerate(profiles):
        if work > MAX_SETTINGS:
            break  # every profile costs the settings it inherits: a bound on their sum
        if not isinstance(profile, dict):
            continue
        name = _name(profile, i)
        at = (*list_path, i)
        override = profile.get("kubespawner_override")
        state = base.applied(override, (*at, "kubespawner_override"))
        out.append(state.spawn(name, (*at, "kubespawner_override"), override))
        work += _size(out[-1])
        options = profile.get("profile_options")
        for key, option in options.items() if isinstance(options, dict) else ():
            choices = option.get("choices") if isinstance(option, dict) else None
            for slug, choice in choices.items() if isinstance(choices, dict) else ():
                if not isinstance(choice, dict):
                    continue
                inner = choice.get("kubespawner_override")
                where = (*at, "profile_options", key, "choices", slug, "kubespawner_override")
                if isinstance(inner, dict) and work <= MAX_SETTINGS:
                    picked = state.applied(inner, where)
                    out.append(picked.spawn(f"{name}: {slug}", where, inner))
                    work += _size(out[-1])
    return out


def _size(spawn: Spawn) -> int:
    return 1 + len(spawn.limits) + len(spawn.guarantees) + len(spawn.env) + len(spawn.strays)


class _State:
    __slots__ = ("env", "guarantees", "limits")

    def __init__(
        self, limits: dict[str, Setting], guarantees: dict[str, Setting], env: dict[str, Setting]
    ) -> None:
        self.limits, self.guarantees, self.env = limits, guarantees, env

    def applied(self, override: Any, path: Path) -> _State:
        """These settings with a ``kubespawner_override`` applied (mappings merged)."""
        if not isinstance(override, dict):
            return self
        return _State(
            _merged(self.limits, override, "extra_resource_limits", path),
            _merged(self.guarantees, override, "extra_resource_guarantees", path),
            _merged(self.env, override, "environment", path, _env),
        )

    def spawn(self, name: str, path: Path, override: Any) -> Spawn:
        strays = _strays(override, path) if isinstance(override, dict) else ()
        return Spawn(name, path, self.limits, self.guarantees, self.env, strays)


def _merged(
    before: dict[str, Setting],
    override: dict[str, Any],
    key: str,
    path: Path,
    read: Callable[[Any, Path], dict[str, Setting]] | None = None,
) -> dict[str, Setting]:
    """The setting ``key`` after ``override``: a mapping merged into it key by key (a null
    value removes the key: KubeSpawner's ``recursive_update``), anything else replacing it.
    ``read`` reads the override's value (default: :func:`_settings`)."""
    if key not in override:
        return before
    value = override[key]
    given = (read or _settings)(value, (*path, key))
    if not isinstance(value, dict):
        return given
    merged = dict(before)
    for name, setting in given.items():
        if setting.value is None:
            merged.pop(name, None)
        else:
            merged[name] = setting
    return merged


def _settings(mapping: Any, path: Path) -> dict[str, Setting]:
    if not isinstance(mapping, dict):
        return {}
    return {k: Setting(v, (*path, k)) for k, v in mapping.items() if isinstance(k, str)}


def _env(env: Any, path: Path) -> dict[str, Setting]:
    """``extraEnv`` or ``environment``: a mapping of names to values (or to an env entry's
    ``value``), or the chart's list of env entries. Only literal values are kept."""
    out: dict[str, Setting] = {}
    if isinstance(env, dict):
        for name, value in env.items():
            if not isinstance(name, str):
                continue
            if isinstance(value, dict):
                if "value" in value:
                    out[name] = Setting(value["value"], (*path, name, "value"))
            else:
                out[name] = Setting(value, (*path, name))
    elif isinstance(env, list):
        for i, entry in enumerate(env):
            if isinstance(entry, dict) and isinstance(entry.get("name"), str) and "value" in entry:
                out[entry["name"]] = Setting(entry["value"], (*path, i, "value"))
    return out


def _get(mapping: Any, key: str) -> Any:
    return mapping.get(key) if isinstance(mapping, dict) else None


def _name(profile: dict[str, Any], index: int) -> str:
    for key in ("display_name", "slug"):
        value = profile.get(key)
        if isinstance(value, str) and value.strip():
            return " ".join(value.split())
    return f"profile {index + 1}"


def _strays(override: dict[str, Any], path: Path) -> tuple[tuple[str, Path, str, str], ...]:
    pod, container = _fields()
    out = []
    for key in override:
        if not isinstance(key, str) or key in FIELD_SETTINGS:
            continue
        folded = key.replace("_", "").lower()
        for level, fields in (("container", container), ("pod", pod)):
            field = fields.get(folded)
            if field is not None:
                out.append((key, (*path, key), field, level))
                break
    return tuple(out)


@cache
def _fields() -> tuple[dict[str, str], dict[str, str]]:
    """A pod spec's and a container's field names, by their letters in lower case (a field
    both have is read as the container's: ``resources``, ``securityContext``)."""
    import json

    from gpulint.data import data_path

    with open(data_path("gpulint.data", "k8s-fields.json"), encoding="utf-8") as fh:
        types = json.load(fh)["types"]
    pod = {f.lower(): f for f in types["PodSpec"] if f != "containers"}
    container = {f.lower(): f for f in types["Container"]}
    return pod, container


#: Top-level keys one of which the chart's values (or a chart's that depends on it) hold.
SIGNS = ("singleuser", "hub", "jupyterhub")


def is_values_document(data: dict[str, Any]) -> bool:
    """``data`` (a document with no ``apiVersion`` and ``kind``) is the chart's values."""
    return any(k in data for k in SIGNS) and next(chart_values(data), None) is not None
