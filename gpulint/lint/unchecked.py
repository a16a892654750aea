"""GPU content gpulint cannot place (GL204): said once per document, never skipped in silence.

Three shapes hold GPU resources that no rule checks:

* a document that is no Kubernetes object (no ``apiVersion`` and ``kind``: a Kustomize patch
  written without them, a values file) with a registry-known accelerator under a
  ``limits`` / ``requests`` mapping, or a JSON patch operation whose ``path`` ends at one;
* a ConfigMap ``data`` (or Secret ``stringData``) value that is itself YAML or JSON with
  one (a pod template kept for clearml-agent, Determined or KubeAI);
* a container's ``command`` / ``args`` string with a heredoc that holds one (``kubectl
  apply -f - <<EOF`` in a CronJob).

Only names the registry knows count, and an embedded text is read lazily: only a string
that names such a resource, of at most ``MAX_EMBEDDED`` characters, with the project's
loader, one level deep (a manifest inside the embedded manifest is not opened).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gpulint import codes
from gpulint.k8s.devices import Registry
from gpulint.k8s.manifest import DocumentView
from gpulint.k8s.mentions import MAX_EMBEDDED as MENTIONS_MAX, names_accelerator as _names
from gpulint.loader.stream import DocumentStream
from gpulint.model import Path, Span

if TYPE_CHECKING:
    from gpulint.util.discover import Part

CODE = codes.GPU_CONTENT_NOT_CHECKED
#: The longest embedded text (characters) read as YAML; a longer one is left alone.
MAX_EMBEDDED = MENTIONS_MAX
#: The most documents read from one embedded text, and the deepest walk into data.
MAX_DOCUMENTS = 32
MAX_DEPTH = 48
_AMOUNTS = frozenset({"limits", "requests"})
#: A here-document's opening in a line (``<<EOF``, ``<<-'EOF'``): its delimiter is group 2.
_HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
_KIND = re.compile(r"^kind:[ \t]*['\"]?([A-Za-z0-9]+)", re.M)
_HOW = "lint it as its own file (or the file it is written from) so its checks run"


def gpu_key(data: Any, registry: Registry) -> tuple[Path, str] | None:
    """The path of the first registry-known accelerator under a ``limits`` / ``requests``
    mapping in ``data`` (or a JSON patch ``path`` that ends at one), and its name."""
    stack: list[tuple[Any, Path]] = [(data, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > MAX_DEPTH:
            continue
        if isinstance(node, dict):
            amounts = bool(path) and path[-1] in _AMOUNTS
            inner: list[tuple[Any, Path]] = []
            for key, value in node.items():
                if amounts and isinstance(key, str) and registry.is_accelerator(key):
                    return (*path, key), key
                if key == "path" and isinstance(value, str) and "/resources/" in value:
                    name = value.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~")
                    if registry.is_accelerator(name):
                        return (*path, key), name
                if isinstance(value, (dict, list)):
                    inner.append((value, (*path, key)))
            stack.extend(reversed(inner))  # the first in the text is found first
        elif isinstance(node, list):
            for i in range(len(node) - 1, -1, -1):
                if isinstance(node[i], (dict, list)):
                    stack.append((node[i], (*path, i)))
    return None


def embedded(text: str, registry: Registry) -> tuple[str, str] | None:
    """What GPU-bearing manifest ``text`` holds, parsed once, one level deep: its label
    (``Kind/name`` or ``a pod template``) and the accelerator; heredocs are read when the
    text itself is no YAML that holds one (a shell script)."""
    if not _names(text, registry):
        return None
    found = _parsed(text, registry)
    if found is None:
        for body in _heredoc_bodies(text):
            found = _parsed(body, registry)
            if found is not None:
                break
    return found


def _heredoc_bodies(text: str) -> Iterator[str]:
    """The bodies of the shell here-documents in ``text``: from the line after one that
    opens one (``<<EOF``) to the line that is its delimiter, indented or not. One pass over
    the lines (a regular expression that looks ahead for each opening is quadratic in the
    openings a hostile text repeats); a body with no delimiter after it is dropped."""
    body: list[str] = []
    delimiter: str | None = None
    for line in text.split("\n"):
        if delimiter is not None:
            if re.match(rf"[ \t]*{re.escape(delimiter)}\b", line):
                yield "\n".join(body)
                delimiter = None
                body = []
            else:
                body.append(line)
            continue
        if "<<" in line:
            found = _HEREDOC.search(line)
            if found is not None:
                delimiter = found.group(2)


def _parsed(text: str, registry: Registry) -> tuple[str, str] | None:
    stream = DocumentStream(text)
    try:
        for count, doc in enumerate(stream):
            if count >= MAX_DOCUMENTS:
                break
            hit = gpu_key(doc.data, registry)
            if hit is not None:
                return _label(doc.data, hit[0]), hit[1]
    except Exception:  # a text the loader gives up on is read as lines
        return _lines(text, registry)
    if any(p.code in (codes.SYNTAX_ERROR, codes.TEMPLATE_NOT_RENDERED) for p in stream.problems):
        return _lines(text, registry)  # a template's placeholders: `name: {job}-`
    return None


def _lines(text: str, registry: Registry) -> tuple[str, str] | None:
    """A text that is no YAML (a template with ``{placeholders}``) read as lines: an
    accelerator key indented under a ``limits:`` / ``requests:`` line."""
    under: int | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if under is not None and indent <= under:
            under = None
        if stripped.rstrip() in ("limits:", "requests:"):
            under = indent
        elif under is not None:
            key = stripped.partition(":")[0].strip().strip("'\"")
            if registry.is_accelerator(key):
                kind = _KIND.search(text)
                return (kind.group(1) if kind else "a pod template"), key
    return None


def _label(data: Any, path: Path) -> str:
    """``Kind/name`` of an embedded object; else what the text is: a pod template (the GPU is
    a container's) or a text (a values file, a profile)."""
    if isinstance(data, dict) and isinstance(data.get("kind"), str):
        meta = data.get("metadata")
        name = meta.get("name") if isinstance(meta, dict) else None
        return f"{data['kind']}/{name}" if isinstance(name, str) else str(data["kind"])
    return "a pod template" if "containers" in path else "a YAML or JSON text"


def findings(
    view: DocumentView, registry: Registry, part: Part | None
) -> Iterator[tuple[Span, Path, str]]:
    """GL204's place (a span and a document path) and message in one document, at most once;
    ``part``: what a kustomization makes of the file (a patch), if anything."""
    doc = view.doc
    if not view.objects:
        if not isinstance(doc.data, (dict, list)):
            return
        hit = gpu_key(doc.data, registry)
        if hit is not None:
            yield doc.key_span(hit[0]), hit[0], _loose(hit[1], doc.data, part)
        return
    for position in range(len(view.objects)):
        hit = _in_object(view, position, registry)
        if hit is not None:
            path, message = hit
            yield doc.key_span(path), path, message
            return


def _loose(name: str, data: Any, part: Part | None) -> str:
    """The message for a document that is no Kubernetes object."""
    # A file only named as a patch is not known to be a Kustomize one: said as any document.
    patch = part is not None and part.patch is None and not part.by_name
    lacks = " and ".join(
        k for k in ("apiVersion", "kind") if not isinstance(data, dict) or not data.get(k)
    )
    where = f" ({part.kustomization}:{part.line})" if part is not None and patch else ""
    if patch and isinstance(data, list):
        return (
            f"the {name} this JSON 6902 patch{where} writes was not checked; "
            "`gpulint check --render` lints the overlay it is applied to"
        )
    if patch:
        return (
            f"the {name} of this Kustomize patch{where} was not checked: it has no {lacks}; "
            "give it its target's apiVersion and kind and a metadata.name to lint it as a "
            "patch, or lint the overlay: `gpulint check --render`"
        )
    slip = _misspelt_field(data)
    if slip is not None:
        key, field = slip
        kind = data.get("kind") if isinstance(data.get("kind"), str) else "object"
        return (
            f"the {name} of this {kind} was not checked: it has {key} but no {field}, and "
            f"kubectl refuses a document without one; did you mean {field}?"
        )
    return (
        f"the {name} of this document was not checked: it is no Kubernetes object (no "
        f"{lacks}); give it an apiVersion, kind and metadata.name to lint it as one, or lint "
        "what applies it: `gpulint check --render` on the overlay, or on the chart with "
        "`--values` this file"
    )


def _misspelt_field(data: Any) -> tuple[str, str] | None:
    """A top-level key one typo from ``apiVersion`` or ``kind`` where that field is missing
    and the other is there (``piVersion: apps/v1`` beside ``kind: Deployment``): the key, and
    the field it misspells."""
    if not isinstance(data, dict):
        return None
    from gpulint.util.nearmiss import one_typo_from

    for field, other in (("apiVersion", "kind"), ("kind", "apiVersion")):
        if data.get(field) or not isinstance(data.get(other), str):
            continue
        for key in data:
            if isinstance(key, str) and key != field and one_typo_from(key, [field]):
                return key, field
    return None


def _in_object(view: DocumentView, position: int, registry: Registry) -> tuple[Path, str] | None:
    obj = view.objects[position]
    if obj.group == "" and obj.kind in ("ConfigMap", "Secret"):
        field = "data" if obj.kind == "ConfigMap" else "stringData"
        values = obj.data.get(field)
        if not isinstance(values, dict):
            return None
        for key, value in values.items():
            if not isinstance(value, str):
                continue
            found = embedded(value, registry)
            if found is not None:
                what, name = found
                return (*obj.path, field, key), (
                    f"{what} with {name} inside {obj.ref.label()} key {key}: not checked; {_HOW}"
                )
        return None
    for pod in view.pod_specs(position):
        for container in pod.containers:
            for field in ("command", "args"):
                words = container.data.get(field)
                if not isinstance(words, list):
                    continue
                for i, word in enumerate(words):
                    if not isinstance(word, str) or "<<" not in word:
                        continue
                    found = embedded(word, registry)
                    if found is not None:
                        what, name = found
                        where = f"container {container.name}" if container.name else "a container"
                        return (*container.path, field, i), (
                            f"{what} with {name} in the {field} of {where}'s script: not "
                            f"checked; {_HOW}"
                        )
    return None
