"""Does a chart's values schema refer outside itself? For a helm without schema skipping.

helm validates the values against every ``values.schema.json`` of a chart and of its
subcharts, folders under ``charts/`` and packaged ``.tgz`` archives (which may hold more),
and its JSON Schema library resolves a ``$ref`` that is not a fragment (``#/$defs/x``):
over HTTP (a loopback service, the cloud's metadata address) or from any file
(``file:///etc/hostname``). gpulint runs helm with ``--skip-schema-validation``; a helm
before 3.16 has no such flag, and a chart is rendered with it only when no schema has such
a reference (:func:`remote_schema_ref`).

Reading is bounded: archives are read up to ``MAX_ARCHIVE_BYTES`` in all and
``MAX_NESTING`` archives deep, each header before it is read
(:func:`gpulint.render.helm.tgz.open_chart`), and a schema that cannot be read within those
bounds is refused as one that might refer outside. What the chart's ``.helmignore`` hides
from helm is not read (:mod:`gpulint.render.helm.helmignore`).
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from collections.abc import Iterator
from typing import IO, Any

SCHEMA_FILE = "values.schema.json"
#: The keys whose value is a reference a JSON Schema library resolves.
REFERENCE_KEYS = ("$ref", "$dynamicRef", "$recursiveRef")
#: Bytes of archive members read for one chart, in all (a chart's packaged subcharts
#: are kilobytes; the bound only stops an archive bomb).
MAX_ARCHIVE_BYTES = 64 << 20
#: Archives within archives read (a subchart's subchart's ...).
MAX_NESTING = 4


class _TooMuch(Exception):
    """An archive beyond the bounds."""


def remote_schema_ref(folder: str) -> str | None:
    """Why the chart in ``folder`` must not be rendered by a helm that validates schemas:
    a schema, in the chart or a subchart helm loads (its ``.helmignore`` applied as helm
    applies it), whose reference is not a fragment, or an archive that cannot be read
    within the bounds; or None. Folders are held on a list (no recursion), links to folders
    followed as helm follows them, each real folder once."""
    from gpulint.render.helm.helmignore import chart_rules
    from gpulint.render.helm.tgz import Refused
    from gpulint.render.mapping import label_of

    rules = chart_rules(folder)
    if rules is None:  # helm refuses the .helmignore: it loads nothing
        return None
    budget = [MAX_ARCHIVE_BYTES]
    seen = {os.path.realpath(folder)}
    todo = [(folder, "")]  # (folder, its path in the chart, "" for the chart, else "x/")
    while todo:
        dirpath, rel = todo.pop()
        try:
            names = sorted(os.listdir(dirpath))
        except OSError:
            continue
        subfolders = []
        for name in names:
            path = os.path.join(dirpath, name)
            is_dir = os.path.isdir(path)
            if rules.ignore(rel + name, is_dir):
                continue
            if is_dir:
                real = os.path.realpath(path)
                if real not in seen:
                    seen.add(real)
                    subfolders.append((path, f"{rel}{name}/"))
                continue
            where = label_of(path)
            try:
                if name == SCHEMA_FILE:
                    with open(path, "rb") as fh:
                        found = _bad_ref(fh.read(MAX_ARCHIVE_BYTES + 1))
                    if found is not None:
                        return _refused(where, found)
                elif name.endswith(".tgz"):
                    with open(path, "rb") as fh:
                        inner = next(_archive_refs(fh, budget, 1), None)
                    if inner is not None:
                        return _refused(f"{where} ({inner[0]})", inner[1])
            except Refused as exc:
                return f"not rendered: {where} {exc}"
            except (OSError, tarfile.TarError, EOFError, _TooMuch, ValueError) as exc:
                if name == SCHEMA_FILE or isinstance(exc, _TooMuch):
                    return f"not rendered: {where} could not be checked for schema references"
                continue  # not an archive helm can load either: helm says so
        todo.extend(reversed(subfolders))
    return None


def _refused(where: str, ref: str) -> str:
    return (
        f"not rendered: {where} has a schema reference {ref!r} outside the schema, which "
        "this helm (before 3.16, with no --skip-schema-validation) would fetch or read; "
        "use helm 3.16 or later"
    )


def _archive_refs(fh: IO[bytes], budget: list[int], depth: int) -> Iterator[tuple[str, str]]:
    """(member, reference) for each schema in a packaged chart with a bad reference."""
    if depth > MAX_NESTING:
        raise _TooMuch
    from gpulint.render.helm.tgz import open_chart

    with open_chart(fh, MAX_ARCHIVE_BYTES + (1 << 20)) as archive:
        for member in archive:
            name = member.name
            wanted = name.endswith("/" + SCHEMA_FILE) or name == SCHEMA_FILE
            if not member.isfile() or not (wanted or name.endswith(".tgz")):
                continue
            budget[0] -= member.size
            if budget[0] < 0:
                raise _TooMuch
            data = archive.extractfile(member)
            if data is None:
                continue
            raw = data.read()
            if wanted:
                found = _bad_ref(raw)
                if found is not None:
                    yield name, found
            else:
                for inner, found in _archive_refs(io.BytesIO(raw), budget, depth + 1):
                    yield f"{name}: {inner}", found


def _bad_ref(raw: bytes) -> str | None:
    """The first reference of a schema that is not a fragment, if any. A schema that is not
    JSON refers to nothing (helm fails on it); one nested too deep to parse is refused."""
    if len(raw) > MAX_ARCHIVE_BYTES:
        raise _TooMuch
    try:
        doc: Any = json.loads(raw)
    except RecursionError:
        raise _TooMuch from None
    except ValueError:
        return None
    todo = [doc]
    while todo:  # each value once: linear in the schema's size
        value = todo.pop()
        if isinstance(value, dict):
            for key in REFERENCE_KEYS:
                ref = value.get(key)
                if key in value and not (isinstance(ref, str) and ref.startswith("#")):
                    return str(ref)
            todo.extend(value.values())
        elif isinstance(value, list):
            todo.extend(value)
    return None
