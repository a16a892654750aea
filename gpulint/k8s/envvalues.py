"""The values a container's environment variables take, for ``$(VAR)`` in its command line.

Kubernetes expands ``$(VAR)`` in ``command`` and ``args`` with the container's variables:
``envFrom`` first (in order, a later source winning, each key with its ``prefix``), then
``env`` (in order, overriding), where an ``env`` value may itself use ``$(VAR)`` of the
variables before it. ``$$`` is an escaped ``$``, and a reference to a variable that is not
defined stays as written. A variable's value is known when it is a literal ``value`` or a
``configMapKeyRef`` / ``envFrom: configMapRef`` into a ConfigMap of the same run:

* the ConfigMaps of the file being linted (a rendered chart or overlay is one text, its
  ConfigMaps beside its workloads), read only when a rule first asks;
* else those of every file of the file's project (:meth:`ConfigMaps.add_text`, read with
  the project's facts, gpulint.lint.gather; never another project's, docs/cluster.md); a
  ConfigMap that two files define with different values for a key leaves that key unknown.

GPU041 reads them for ``$(VAR)``; GPU016 and GPU043 read the variables ``envFrom`` takes
from them (:func:`envfrom_configmaps`).

A ConfigMap is matched by name, and by namespace when both it and the pod write one (an
object without a namespace is applied into the namespace of the command). Anything else (a
Secret, a field reference, a ConfigMap that is not in the run) is a variable of no known
value: a rule skips what rests on it, never guesses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from gpulint.k8s.objects import Container, objects
from gpulint.loader.document import Parse
from gpulint.loader.stream import DocumentStream
from gpulint.model import Path, Related, Span

#: Data values longer than this are not kept: no engine option is that long.
MAX_VALUE = 256
#: ``$$`` (an escaped ``$``) or ``$(VAR)``, Kubernetes' syntax (compiled on first use).
_KUBE_VAR = r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)"


def may_read_configmaps(text: str) -> bool:
    """Whether a container of ``text`` can read a ConfigMap that ``text`` defines (a
    ConfigMap, and a ``configMapKeyRef`` or ``configMapRef``): a text that cannot is
    never read for its ConfigMaps, and each of its documents can be linted alone."""
    return "ConfigMap" in text and ("configMapKeyRef" in text or "configMapRef" in text)


class Source(NamedTuple):
    """Where a variable's value comes from: the value, and the place that sets it (``path``
    in the pod's document for a literal ``env`` value; ``label`` and ``span`` of a
    ConfigMap's key, and the ConfigMap's name, for one read from a ConfigMap)."""

    value: str | None  # None: defined, value not known
    path: Path = ()
    label: str | None = None
    span: Span | None = None
    configmap: str | None = None
    key: str | None = None

    def related(self, variable: str) -> tuple[Related, ...]:
        """The ConfigMap key as a related place of a finding (none for a literal value)."""
        if self.label is None or self.span is None:
            return ()
        return (
            Related(
                "value",
                self.label,
                self.span,
                f"where {variable} is set to {self.value}: key {self.key} of ConfigMap "
                f"{self.configmap}",
            ),
        )


#: A defined variable whose value is not known.
UNKNOWN = Source(None)


class ConfigMaps:
    """ConfigMaps by name: each definition's namespace and data keys; and the names of the
    keys of Secrets (never their values), which an ``envFrom: secretRef`` may set."""

    __slots__ = ("_maps", "_secrets")

    def __init__(self) -> None:
        self._maps: dict[str, list[tuple[str | None, dict[str, Source]]]] = {}
        self._secrets: dict[str, list[tuple[str | None, frozenset[str]]]] = {}

    def __bool__(self) -> bool:
        return bool(self._maps)

    def add_text(self, label: str, text: str, parse: Parse | None = None) -> None:
        """The ConfigMaps of a file's documents, and its Secrets' key names (a text that
        names neither is not parsed; ``parse``: its documents, when the caller parsed it
        already)."""
        if "ConfigMap" not in text and "Secret" not in text:
            return
        for doc in DocumentStream(text) if parse is None else parse(label, text):
            for obj in objects(doc):
                if obj.ref.kind == "Secret" and obj.group == "" and obj.ref.name is not None:
                    self._add_secret(obj.ref.name, obj.ref.namespace, obj.data)
                    continue
                if obj.ref.kind != "ConfigMap" or obj.group != "":
                    continue
                data = obj.data.get("data")
                if obj.ref.name is None or not isinstance(data, dict):
                    continue
                keys: dict[str, Source] = {}
                for key, value in data.items():
                    if not isinstance(key, str):
                        continue
                    # A value that is not a string is rejected by the API server.
                    known = isinstance(value, str) and len(value) <= MAX_VALUE
                    span = doc.value_span((*obj.path, "data", key))
                    keys[key] = Source(value if known else None, (), label, span, obj.ref.name, key)
                self._maps.setdefault(obj.ref.name, []).append((obj.ref.namespace, keys))

    def _add_secret(self, name: str, namespace: str | None, data: Any) -> None:
        keys: set[str] = set()
        for field in ("data", "stringData"):
            value = data.get(field) if isinstance(data, dict) else None
            if value is None:
                continue
            if not isinstance(value, dict):
                return  # not a mapping: its keys are not known
            keys.update(k for k in value if isinstance(k, str))
        self._secrets.setdefault(name, []).append((namespace, frozenset(keys)))

    def secret_keys(self, name: str, namespace: str | None) -> frozenset[str] | None:
        """The keys Secret ``name`` seen from ``namespace`` may hold (those of every
        definition that matches); None when no Secret of that name matches."""
        found = [
            keys
            for ns, keys in self._secrets.get(name, ())
            if ns is None or namespace is None or ns == namespace
        ]
        return frozenset().union(*found) if found else None

    def data(self, name: str, namespace: str | None) -> dict[str, Source] | None:
        """The keys of ConfigMap ``name`` seen from ``namespace``; None when no ConfigMap of
        that name matches. A key that the matching definitions disagree on, or that some
        of them lack, is ``UNKNOWN``."""
        found = [
            keys
            for ns, keys in self._maps.get(name, ())
            if ns is None or namespace is None or ns == namespace
        ]
        if not found:
            return None
        if len(found) == 1:
            return found[0]
        out: dict[str, Source] = {}
        for key in {k for keys in found for k in keys}:
            values = {keys[key].value if key in keys else None for keys in found}
            first = found[0].get(key)
            out[key] = first if len(values) == 1 and first is not None else UNKNOWN
        return out


class EnvValues:
    """The ConfigMaps a container's variables may read: the current file's, then the run's.
    One per linter; the engine names the file being linted (:meth:`begin_file`)."""

    __slots__ = ("_file", "_text", "label", "run")

    def __init__(self, run: ConfigMaps | None = None) -> None:
        self.run = run
        #: The file being linted, as findings name it.
        self.label = ""
        self._text: str | None = None
        self._file: ConfigMaps | None = None

    def begin_file(self, label: str, text: str) -> None:
        """The file now linted: its ConfigMaps are read when a rule first asks."""
        self.label, self._file = label, None
        self._text = text if may_read_configmaps(text) else None

    def _own(self) -> None:
        """Read the file's own ConfigMaps and Secrets, on first use."""
        if self._text is not None and self._file is None:
            self._file = ConfigMaps()
            self._file.add_text(self.label, self._text)

    def data(self, name: str, namespace: str | None) -> dict[str, Source] | None:
        self._own()
        for maps in (self._file, self.run):
            found = maps.data(name, namespace) if maps else None
            if found is not None:
                return found
        return None

    def secret_keys(self, name: str, namespace: str | None) -> frozenset[str] | None:
        """The key names of a Secret of the file or its project (None: not known)."""
        self._own()
        for maps in (self._file, self.run):
            found = maps.secret_keys(name, namespace) if maps is not None else None
            if found is not None:
                return found
        return None


def env_entries(container: Container) -> Iterator[tuple[int | str | Path, dict[str, Any]]]:
    """The container's ``env`` entries with their index; in a chart's values (a container
    found by its ``resources``), an ``env`` mapping too, variable to value or to an entry
    (``{NVIDIA_VISIBLE_DEVICES: all}``: bjw-s app-template's form, rendered as the list),
    keyed by the variable's name.

    A chart's values also give their one container the variables the chart adds to it:
    ``extraEnv`` and ``extraEnvVars`` beside ``resources`` (the Ollama chart's, Bitnami's),
    and the ``env`` of a mapping there that holds the container's ``image`` and no
    ``resources`` of its own (the local-ai chart's ``deployment: {image, env}``); their
    entries come with their place under the values, a path."""
    yield from _entries(container.data.get("env"), container.section == "resources", None)
    if container.section != "resources" or container.resources_key != "resources":
        return
    data = container.data
    for key in ("extraEnv", "extraEnvVars"):
        yield from _entries(data.get(key), True, (key,))
    for key, value in data.items():
        if (
            isinstance(key, str)
            and isinstance(value, dict)
            and "resources" not in value
            and "env" in value
            and _holds_image(value.get("image"))
        ):
            yield from _entries(value.get("env"), True, (key, "env"))


def _holds_image(image: Any) -> bool:
    """An image reference, or a chart's ``{repository, tag}``."""
    if isinstance(image, str):
        return bool(image.strip())
    return isinstance(image, dict) and isinstance(image.get("repository"), str)


def _entries(
    env: Any, mapping: bool, place: Path | None
) -> Iterator[tuple[int | str | Path, dict[str, Any]]]:
    """``env``'s entries: a list's items (a mapping's too when ``mapping``), each with its
    index, or, with ``place``, its path relative to the container."""
    if isinstance(env, list):
        for index, item in enumerate(env):
            if isinstance(item, dict):
                yield (index if place is None else (*place, index)), item
    elif isinstance(env, dict) and mapping:
        for key, value in env.items():
            if isinstance(key, str):
                entry = value if isinstance(value, dict) else {"value": value}
                yield (key if place is None else (*place, key)), {**entry, "name": key}


def container_env(
    container: Container, namespace: str | None, values: EnvValues | None
) -> dict[str, Source]:
    """The container's variables and where their values come from (``UNKNOWN`` for a
    variable whose value is not known)."""
    out: dict[str, Source] = {}
    sources = container.data.get("envFrom")
    for index, item in enumerate(sources if isinstance(sources, list) else ()):
        if not isinstance(item, dict):
            continue
        prefix = item.get("prefix", "")
        ref = item.get("configMapRef")
        name = ref.get("name") if isinstance(ref, dict) else None
        data = values.data(name, namespace) if values and isinstance(name, str) else None
        if data is None or not isinstance(prefix, str):
            # A Secret or a ConfigMap not in the run: any variable so far may be replaced.
            out = dict.fromkeys(out, UNKNOWN)
            continue
        path = (*container.path, "envFrom", index)
        for key, source in data.items():
            out[prefix + key] = source._replace(path=path)
    env = container.data.get("env")
    for index, item in enumerate(env if isinstance(env, list) else ()):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        out[item["name"]] = _env_source(
            item, (*container.path, "env", index), out, namespace, values
        )
    return out


class FromConfigMap(NamedTuple):
    """A variable a container takes from a ConfigMap of its project through ``envFrom``."""

    name: str
    #: Its value and where it is set (``path``: the ``envFrom`` item's ConfigMap name).
    source: Source
    #: A later ``envFrom`` source whose keys are not known (a Secret, a ConfigMap the
    #: project does not hold) may replace it.
    doubtful: bool


def envfrom_configmaps(
    container: Container, namespace: str | None, values: EnvValues | None
) -> list[FromConfigMap]:
    """The variables the container takes through ``envFrom: configMapRef`` from a ConfigMap
    the file or its project defines (``values``), of known value, that its ``env`` does not
    set again (``env`` wins over ``envFrom``; a later ``envFrom`` source over an earlier)."""
    sources = container.data.get("envFrom")
    if values is None or not isinstance(sources, list):
        return []
    found: dict[str, FromConfigMap] = {}
    for index, item in enumerate(sources):
        if not isinstance(item, dict):
            continue
        prefix = item.get("prefix", "")
        ref = item.get("configMapRef")
        name = ref.get("name") if isinstance(ref, dict) else None
        data = values.data(name, namespace) if isinstance(name, str) else None
        if data is None or not isinstance(prefix, str):
            # A Secret of the project sets only its keys; anything else may set any variable.
            ref = item.get("secretRef")
            secret = ref.get("name") if isinstance(ref, dict) else None
            keys = values.secret_keys(secret, namespace) if isinstance(secret, str) else None
            if keys is not None and isinstance(prefix, str):
                for key in keys:
                    found.pop(prefix + key, None)
                continue
            found = {k: v._replace(doubtful=True) for k, v in found.items()}
            continue
        path = (*container.path, "envFrom", index, "configMapRef", "name")
        for key, source in data.items():
            found[prefix + key] = FromConfigMap(prefix + key, source._replace(path=path), False)
    env = container.data.get("env")
    for item in env if isinstance(env, list) else ():
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            found.pop(item["name"], None)
    return [v for v in found.values() if v.source.value is not None]


def _env_source(
    item: dict[str, Any],
    path: Path,
    defined: dict[str, Source],
    namespace: str | None,
    values: EnvValues | None,
) -> Source:
    if "value" in item:
        value = item["value"]
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            return UNKNOWN
        text: str | None = str(value)
        if text is not None and "$" in text:
            text = expand(text, defined)
        return UNKNOWN if text is None else Source(text, (*path, "value"))
    source = item.get("valueFrom")
    ref = source.get("configMapKeyRef") if isinstance(source, dict) else None
    if not isinstance(ref, dict) or values is None:
        return UNKNOWN
    name, key = ref.get("name"), ref.get("key")
    if not isinstance(name, str) or not isinstance(key, str):
        return UNKNOWN
    data = values.data(name, namespace)
    found = data.get(key) if data is not None else None
    return UNKNOWN if found is None else found._replace(path=(*path, "valueFrom"))


def expand(text: str, env: dict[str, Source]) -> str | None:
    """``text`` with Kubernetes' ``$(VAR)`` expanded from ``env`` (``$$`` is ``$``, an
    undefined variable stays as written); None when a variable of no known value is used."""
    unknown = False

    def repl(match: re.Match[str]) -> str:
        nonlocal unknown
        name = match.group(1)
        if name is None:
            return "$"
        source = env.get(name)
        if source is None:
            return match.group(0)
        if source.value is None:
            unknown = True
            return match.group(0)
        return source.value

    out = re.sub(_KUBE_VAR, repl, text)
    return None if unknown else out


#: What YAML made of a value that is no string, as the API server's decoder would name it.
_NOT_STRING = ((bool, "a boolean"), (int, "a number"), (float, "a number"), (list, "a list"))


def non_string_kind(value: Any) -> str:
    """``a boolean``, ``a number``, ``a list`` or ``a mapping``: what YAML read a value the
    API takes as a string as (GPU025's ``env`` values, GPU027's labels and selectors)."""
    for kind, name in _NOT_STRING:
        if isinstance(value, kind):
            return name
    return "a mapping"


def as_written(value: Any) -> str:
    """A scalar as YAML wrote it, for a message that says to quote it: ``true`` stays
    ``true``, 10 stays 10 (at most 40 characters)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    return text if len(text) <= 40 else text[:40] + "..."
