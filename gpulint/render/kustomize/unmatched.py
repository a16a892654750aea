"""Where an overlay's strategic-merge patch that no resource matches is to be mended.

kustomize's error names only the object the patch is for (``no resource matches strategic
merge patch "Deployment.v1.apps/triton.triton"``), not the patch nor why. Two places say
more: when a base the overlay builds on holds that object in a file its kustomization does
not name (a ``resources: []`` that forgot ``deployment.yaml``), the base's ``resources:``
line, where the file is added; otherwise the overlay's one patch entry written for that
object (its kind and name), where the patch is named. Anything else is not known, and the
error stays where kustomize's message puts it.
"""

from __future__ import annotations

import os
import re
from typing import Any

from gpulint.render.kustomize.files import Kustomization, read_folder
from gpulint.render.mapping import read_text

#: kustomize's error for a strategic-merge patch no resource of the build matches: its
#: ResId, ``Kind.version.group/name.namespace``.
_NO_TARGET = re.compile(
    r'no resource matches strategic merge patch "([A-Za-z0-9]+)\.[^"/]*/([^"]+)\.[^".]*"'
)
#: Files of a base folder looked at for the object, at most.
MAX_FILES = 200


def unmatched_patch(text: str, folder: str) -> tuple[str, int, str] | None:
    """The file and line to show kustomize's "no resource matches" error at for the
    kustomization in ``folder``, and a clause saying why, when one is known."""
    m = _NO_TARGET.search(text)
    k = read_folder(folder) if m else None
    if m is None or k is None or k.problem is not None:
        return None
    kind, name = m.group(1), m.group(2)
    forgotten = _forgotten(k, kind, name)
    if forgotten is not None:
        return forgotten
    hits = []
    for ref in k.refs:
        if not (ref.field == "inline" or ref.field.startswith("patch")) or ref.target:
            continue
        body = ref.text if ref.field == "inline" else read_text(ref.path) if ref.path else None
        if body is not None and _defines(body, kind, name):
            shown = "written inline" if ref.field == "inline" else f"`{ref.text}`"
            hits.append((k.file, ref.line, shown))
    if len(hits) != 1:
        return None
    file, line, shown = hits[0]
    why = (
        f" (the patch {shown} is written for that object, and no resource this build reaches is it)"
    )
    return file, line, why


def _forgotten(k: Kustomization, kind: str, name: str) -> tuple[str, int, str] | None:
    """The one base of ``k`` whose folder holds the object in a file its kustomization does
    not name: that kustomization's ``resources:`` line."""
    found = []
    for sub in k.folders():
        base = read_folder(sub)
        if base is None or base.problem is not None:
            continue
        named = {os.path.realpath(p) for p in base.files()}
        try:
            names = sorted(os.listdir(sub))[:MAX_FILES]
        except OSError:
            continue
        for entry in names:
            path = os.path.join(sub, entry)
            if not entry.endswith((".yaml", ".yml")) or os.path.realpath(path) in named:
                continue
            if path == base.file or not os.path.isfile(path):
                continue
            body = read_text(path)
            if body is not None and _defines(body, kind, name):
                found.append((base, entry))
    if len(found) != 1:
        return None
    base, entry = found[0]
    line = _field_line(base.file, "resources")
    why = (
        f" ({kind} {name} is written in {entry} beside {os.path.basename(base.file)}, whose "
        "resources do not name it: no resource this build reaches is it)"
    )
    return base.file, line, why


def _defines(body: str, kind: str, name: str) -> bool:
    """Does the YAML text hold an object of that kind and name?"""
    from gpulint.loader.stream import load_text

    try:
        docs = load_text(body).documents
    except Exception:  # not YAML gpulint reads: not the object, then
        return False
    for doc in docs:
        data: Any = doc.data
        meta = data.get("metadata") if isinstance(data, dict) else None
        if isinstance(meta, dict) and data.get("kind") == kind and meta.get("name") == name:
            return True
    return False


def _field_line(file: str, field: str) -> int:
    """The line of ``file`` where the top-level ``field`` is written (1 when not found)."""
    for number, text in enumerate((read_text(file) or "").splitlines(), 1):
        if text.lower().startswith(field.lower() + ":"):
            return number
    return 1
