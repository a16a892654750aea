"""The copy of a chart or Kustomize root a fix made in its source files is rendered in.

:mod:`gpulint.render.fixvalues` checks a fix by rendering the target again with the edited
files; nothing is written in the tree for that (``--diff`` writes nothing at all). The copy is
made in a temporary folder: the chart's folder (``helm template`` reads only it and the
``--values`` files) or, for a Kustomize root, the folder holding everything its
kustomizations name, followed through each (:func:`_read_by`); at most
:data:`MAX_COPY_FILES` files and :data:`MAX_COPY_BYTES` bytes. Symbolic links are copied as
links, never followed, and the render's own checks run on the copy as on the tree; the
program run is the one the run found for the real tree, with the chart's options.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulint.render import RenderOptions
    from gpulint.render.trees import Trees

#: The largest tree copied to re-render a fix (files, bytes).
MAX_COPY_FILES = 5000
MAX_COPY_BYTES = 64 << 20

#: Renders the tree with some files' text replaced (absolute path -> text): the output, or
#: None when it cannot.
Rerender = Callable[[dict[str, str]], "str | None"]


def rerenderer(kind: str, folder: str, options: RenderOptions, trees: Trees) -> Rerender:
    """How the target is rendered again with some files changed: on a copy (module doc),
    with the program the run found for the real tree and the chart's options."""
    from gpulint.render import ChartOptions, RenderOptions as Options
    from gpulint.render.tools import find_tool
    from gpulint.render.trees import Trees as Fresh, inside, project_root

    root = project_root(folder)
    helm = kind == "helm"
    top = os.path.abspath(folder) if helm else _read_by(folder, trees)
    tool = (
        find_tool(options.helm, ("helm",), root)
        if helm
        else find_tool(options.kustomize, ("kubectl", "kustomize"), root)
    )
    chart = options.for_chart(folder)
    where = os.path.relpath(os.path.abspath(folder), top)

    def run(copy: str, moved: dict[str, str]) -> str | None:
        here = os.path.normpath(os.path.join(copy, where))
        if not helm:
            from gpulint.render import kustomize

            opts = Options(True, None, tool, None, None, options.deadline)
            built = kustomize.render(here, opts, Fresh(True))
            return built if isinstance(built, str) else None
        from gpulint.render import helm as helm_render

        values = []
        for v in chart.values:
            a = os.path.abspath(v)
            here_too = os.path.join(copy, os.path.relpath(a, top)) if inside(a, top) else a
            values.append(moved.get(a) or here_too)
        same = ChartOptions(
            tuple(values),
            chart.set,
            chart.kube_version,
            chart.release_name,
            chart.namespace,
            chart.configured_set,
        )
        out = helm_render.render(here, Options(True, tool, None, same, None, options.deadline))
        return out if isinstance(out, str) else None

    def rerender(files: dict[str, str]) -> str | None:
        if tool is None:
            return None
        return copied(top, files, run)

    return rerender


def _read_by(folder: str, trees: Trees) -> str:
    """The folder holding everything a Kustomize root reads (its kustomizations, and the
    files and folders they name, followed through every one)."""
    from gpulint.render.trees import kustomization_file, read_kustomization

    top = os.path.abspath(folder)
    todo, seen, paths = [top], set(), [top]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        k = trees.kustomizations.get(current)
        if k is None:
            file = kustomization_file(current)
            k = read_kustomization(current, file) if file else None
        for ref in k.refs if k is not None else ():
            if not ref.path:  # an inline patch
                continue
            paths.append(ref.path)
            if os.path.isdir(ref.path):
                todo.append(ref.path)
    return os.path.commonpath(paths)


def copied(
    top: str, files: dict[str, str], run: Callable[[str, dict[str, str]], str | None]
) -> str | None:
    """``run`` on a copy of the folder ``top`` in which ``files`` (absolute paths) hold the
    given text (a file outside ``top``, a ``--values`` file, is written beside the copy);
    ``run`` gets the copy's folder and where each of ``files`` is. ``None`` when the copy
    would be too big."""
    top = os.path.abspath(top)
    count, size = 0, 0
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        count += len(filenames)
        for name in filenames:
            with contextlib.suppress(OSError):
                size += os.lstat(os.path.join(dirpath, name)).st_size
        if count > MAX_COPY_FILES or size > MAX_COPY_BYTES:
            return None
    with tempfile.TemporaryDirectory(prefix="gpulint-fix-") as tmp:
        copy = os.path.join(tmp, "tree")
        shutil.copytree(top, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        os.mkdir(os.path.join(copy, ".git"))  # the copy is its own repository
        moved: dict[str, str] = {}
        for n, (path, text) in enumerate(sorted(files.items())):
            rel = os.path.relpath(path, top)
            if rel == os.pardir or rel.startswith(os.pardir + os.sep):
                dest = os.path.join(tmp, f"values-{n}.yaml")
            else:
                dest = os.path.join(copy, rel)
                if os.path.islink(dest):
                    return None
            with open(dest, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
            moved[path] = dest
        return run(copy, moved)
