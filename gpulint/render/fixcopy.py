"""Where a fix made in a chart's values file or an overlay's file is rendered again.

:mod:`gpulint.render.fixvalues` checks a fix by rendering the target again with the edited
files. Nothing is written in the linted tree for that (``--diff`` writes nothing there at
all): everything it writes goes into one private temporary folder per chart or overlay
(:class:`gpulint.util.scratch.Scratch`: ``mkdtemp``, written only through folder handles
opened with ``O_NOFOLLOW``, removed at the end), made when the first fix is checked and
reused for the next ones. The tree's links are resolved in the real tree, where the render's
link checks ran; nothing is resolved again from a copy.

* **A values file given with ``--values``** (or ``render: values:``) outside the chart: the
  chart is rendered in place, the edited text written to the private folder
  (``values-N.yaml``) and given to helm instead, as every ``--values`` is
  (``--values=ABS``, the positionals after ``--``).
* **A file in the chart's folder** (its ``values.yaml``, a subchart's under ``charts/``):
  helm reads a chart's own values only from the chart, and a ``--values`` file under the
  subchart's key is not the same (it comes before the parent's values, and its ``null``
  deletes a key where the chart's keeps it). So the chart is *shadowed* in the private
  folder: the folders on the way to the edited file are made there, and every other entry
  of them is a symbolic link to the real entry's path in the real tree (the real folder's
  path, the entry's name), so helm reads exactly what it read in the tree, and the edited
  file is a new file. The work is one link per entry of those folders, once per chart,
  whatever the chart's size.
* **An overlay**: kustomize refuses a file whose real path leaves the root (its load
  restrictor), so links would not do: every file kustomize reads (each kustomization on the
  way, followed as kustomize follows it, from real folder to real folder, and the files it
  names) is copied there, at its place relative to the others, at most
  :data:`MAX_COPY_FILES` files and :data:`MAX_COPY_BYTES` bytes, each read after its real
  path is checked to be a regular file inside the repository. The folders in between are
  made, not copied; nothing else of the tree is read.

The program run is the one the run found for the real tree, with the chart's options, for
what is left of the run's render budget (checked before each render; a fix not checked for
want of it says so).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpulint.render import ChartOptions, RenderOptions
    from gpulint.render.kustomize.files import Kustomization
    from gpulint.render.trees import Trees
    from gpulint.util.scratch import Scratch

#: The most an overlay's files copied to check a fix may be (files, bytes).
MAX_COPY_FILES = 5000
MAX_COPY_BYTES = 64 << 20

BUDGET = "the run's render budget is spent, so the fix was not checked (--render-timeout)"
NO_SCRATCH = "this system cannot write a private folder without following links (openat)"

#: Renders the target with some files' text replaced (absolute path -> text): the output,
#: or None when it does not render (:class:`Rerenderer`).
Rerender = Callable[[dict[str, str]], "str | None"]


class NotChecked(Exception):
    """Why a fix could not be rendered again (not that it renders badly)."""


class Rerenderer:
    """Renders a chart or overlay again with some files' text replaced: call it with
    ``{absolute path: text}`` for the output, ``None`` when it does not render; raises
    :class:`NotChecked` when it cannot be tried. :meth:`close` removes its folder."""

    def __init__(self, folder: str, deadline: float | None) -> None:
        self.folder = os.path.abspath(folder)
        self.deadline = deadline
        self._scratch: Scratch | None = None

    def __call__(self, files: dict[str, str]) -> str | None:
        from gpulint.render.tools import time_left

        if time_left(self.deadline) is None:  # before any work
            raise NotChecked(BUDGET)
        return self.render(files)

    def render(self, files: dict[str, str]) -> str | None:
        raise NotImplementedError

    def scratch(self) -> Scratch:
        from gpulint.util.scratch import Scratch, available

        if self._scratch is None:
            if not available():
                raise NotChecked(NO_SCRATCH)
            try:
                self._scratch = Scratch("gpulint-fix-")
            except OSError as exc:
                raise NotChecked(f"no temporary folder to check it in ({_why(exc)})") from exc
        return self._scratch

    def close(self) -> None:
        if self._scratch is not None:
            self._scratch.close()
            self._scratch = None

    def __enter__(self) -> Rerenderer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def rerenderer(kind: str, folder: str, options: RenderOptions, trees: Trees) -> Rerenderer:
    """How the chart or overlay in ``folder`` is rendered again (module doc)."""
    from gpulint.render.tools import find_tool
    from gpulint.render.trees import project_root

    root = project_root(folder)
    if kind == "helm":
        helm = find_tool(options.helm, ("helm",), root)
        return _Chart(folder, options.deadline, helm, options.for_chart(folder), root)
    tool = find_tool(options.kustomize, ("kubectl", "kustomize"), root)
    return _Overlay(folder, options.deadline, tool, trees, root)


def _shown(path: str) -> str:
    from gpulint.render.mapping import label_of

    return label_of(path)


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _parts(rel: str) -> tuple[str, ...] | None:
    """A relative path as names, or None when it leaves its folder."""
    parts = tuple(p for p in rel.split(os.sep) if p and p != os.curdir)
    return None if not parts or os.pardir in parts else parts


class _Chart(Rerenderer):
    def __init__(
        self,
        folder: str,
        deadline: float | None,
        helm: str | None,
        chart: ChartOptions,
        root: str,
    ) -> None:
        super().__init__(folder, deadline)
        self.helm, self.chart, self.root = helm, chart, root
        self.values = [os.path.abspath(v) for v in chart.values]
        #: Shadow folders made (names below the chart) -> the real folder each mirrors.
        self.made: dict[tuple[str, ...], str] = {}
        #: The chart's files written in the shadow (names below the chart).
        self.edited: set[tuple[str, ...]] = set()

    def render(self, files: dict[str, str]) -> str | None:
        from gpulint.render import ChartOptions
        from gpulint.render.helm.run import template

        if self.helm is None:
            return None
        inner: dict[tuple[str, ...], str] = {}
        for path, text in files.items():
            parts = _parts(os.path.relpath(path, self.folder))
            if parts is not None:
                inner[parts] = text
            elif path not in self.values:
                raise NotChecked(f"{_shown(path)} is neither in the chart nor a values file")
        folder = self.shadow(inner) if inner else self.folder
        values = []
        for n, path in enumerate(self.values):
            parts = _parts(os.path.relpath(path, self.folder))
            if path not in files:
                values.append(path)
            elif parts is not None:  # in the chart: helm reads the shadow's
                values.append(self.scratch().join(("chart", *parts)))
            else:
                name = f"values-{n}.yaml"
                self._write((name,), files[path])
                values.append(self.scratch().join((name,)))
        c = self.chart
        same = ChartOptions(
            tuple(values), c.set, c.kube_version, c.release_name, c.namespace, c.configured_set
        )
        out = template(self.helm, folder, same, self.deadline, schemas=self.folder)
        return out if isinstance(out, str) else None

    def _write(self, parts: tuple[str, ...], text: str) -> None:
        try:
            self.scratch().write(parts, text.encode("utf-8"))
        except OSError as exc:
            raise NotChecked(f"it could not be written to check it ({_why(exc)})") from exc

    def shadow(self, files: dict[tuple[str, ...], str]) -> str:
        """The chart's shadow with ``files`` (names below the chart) holding the given
        text and every file edited before back to a link: its path."""
        scratch = self.scratch()
        try:
            for parts in self.edited - files.keys():
                scratch.link(("chart", *parts), os.path.join(self.made[parts[:-1]], parts[-1]))
            self.edited -= self.edited - files.keys()
            for parts, text in files.items():
                real = self._folders(parts[:-1])
                if not stat.S_ISREG(os.stat(os.path.join(real, parts[-1])).st_mode):
                    raise NotChecked(f"{'/'.join(parts)} is not a regular file of the chart")
                self.edited.add(parts)
                self._write(("chart", *parts), text)
        except OSError as exc:
            raise NotChecked(f"the chart could not be shadowed to check it ({_why(exc)})") from exc
        return scratch.join(("chart",))

    def _folders(self, parts: tuple[str, ...]) -> str:
        """Make the shadow folders down to ``parts``: each a real folder of the private
        one whose entries link to the real folder's (resolved in the real tree, inside the
        repository); the real folder ``parts`` mirrors."""
        from gpulint.render.trees import inside

        scratch = self.scratch()
        for depth in range(len(parts) + 1):
            here = parts[:depth]
            if here in self.made:
                continue
            above = self.made[here[:-1]] if here else None
            real = os.path.realpath(os.path.join(above, here[-1]) if above else self.folder)
            if not (os.path.isdir(real) and inside(real, self.root)):
                raise NotChecked(f"{'/'.join(here) or 'the chart'} is not a folder of the chart")
            if here:
                scratch.unlink(("chart", *here))  # the link made for it in the folder above
            scratch.mkdir(("chart", *here))
            for name in sorted(os.listdir(real)):
                scratch.link(("chart", *here, name), os.path.join(real, name))
            self.made[here] = real
        return self.made[parts]


class _Overlay(Rerenderer):
    def __init__(
        self, folder: str, deadline: float | None, tool: str | None, trees: Trees, root: str
    ) -> None:
        super().__init__(folder, deadline)
        self.tool, self.trees, self.root = tool, trees, root
        #: The real path of each file copied -> where it is in the copy (names).
        self.copies: dict[str, list[tuple[str, ...]]] | None = None
        self.top = ""
        self.edited: set[str] = set()
        #: Why the copy could not be made, once it could not.
        self.refused: str | None = None
        #: Bases named through a link (the path kustomize joins -> the real folder).
        self.linked: dict[str, str] = {}

    def render(self, files: dict[str, str]) -> str | None:
        from gpulint.render.kustomize import build as kustomize

        if self.tool is None:
            return None
        copies = self._copy()
        scratch = self.scratch()
        wanted = {os.path.realpath(path): text for path, text in files.items()}
        try:
            for real in self.edited - wanted.keys():  # a fix not kept: the file as it is
                data = self._read(real)
                for parts in copies[real]:
                    scratch.write(parts, data)
            self.edited -= self.edited - wanted.keys()
            for real, text in wanted.items():
                if real not in copies:
                    raise NotChecked("the file edited is not one the overlay reads")
                self.edited.add(real)
                for parts in copies[real]:
                    scratch.write(parts, text.encode("utf-8"))
        except OSError as exc:
            raise NotChecked(f"the overlay could not be copied to check it ({_why(exc)})") from exc
        rel = _parts(os.path.relpath(os.path.realpath(self.folder), self.top))
        copy = scratch.join(("tree", *(rel or ())))
        out = kustomize.build(self.tool, copy, self.deadline)
        if kustomize.restricted(out) and kustomize.flux_builds(self.folder, self.trees):
            out = kustomize.build(self.tool, copy, self.deadline, unrestricted=True)
        return out if isinstance(out, str) else None

    def _copy(self) -> dict[str, list[tuple[str, ...]]]:
        """The copy, made at the first check; why not, said again at every other check
        without trying again (the work is once per overlay, not once per fix)."""
        if self.refused is not None:
            raise NotChecked(self.refused)
        if self.copies is None:
            try:
                self.copies = self._made()
            except OSError as exc:
                self.refused = f"the overlay could not be copied to check it ({_why(exc)})"
                raise NotChecked(self.refused) from exc
            except NotChecked as exc:
                self.refused = str(exc)
                raise
        return self.copies

    def _made(self) -> dict[str, list[tuple[str, ...]]]:
        """Copy what kustomize reads (module doc): {real path: places in the copy}."""
        from gpulint.render.trees import inside

        reads = self._reads()
        self.top = os.path.commonpath(
            [os.path.dirname(p) for p in (*reads, *self.linked, *self.linked.values())]
        )
        count, size = 0, 0
        for path in reads:
            real = os.path.realpath(path)
            mode = os.stat(real)
            if not (inside(real, self.root) and stat.S_ISREG(mode.st_mode)):
                raise NotChecked(f"{_shown(path)} is not a regular file inside the repository")
            count, size = count + 1, size + mode.st_size
            if count > MAX_COPY_FILES or size > MAX_COPY_BYTES:
                raise NotChecked(
                    f"the overlay reads more than {MAX_COPY_FILES:,} files or "
                    f"{MAX_COPY_BYTES >> 20} MiB, too much to copy to check the fix"
                )
        copies: dict[str, list[tuple[str, ...]]] = {}
        scratch = self.scratch()
        for path in reads:
            real = os.path.realpath(path)
            parts = _parts(os.path.relpath(path, self.top))
            if parts is None:
                raise NotChecked(f"{_shown(path)} is outside the folder copied")
            scratch.write(("tree", *parts), self._read(real))
            copies.setdefault(real, []).append(("tree", *parts))
        for path in self.linked:  # a base named through a link: a link to its copy
            at = _parts(os.path.relpath(path, self.top))
            to = _parts(os.path.relpath(self.linked[path], self.top))
            if at is None or to is None:
                raise NotChecked(f"{_shown(path)} is outside the folder copied")
            scratch.link(("tree", *at), scratch.join(("tree", *to)))
        return copies

    def _reads(self) -> list[str]:
        """Every file kustomize reads to build the root: each kustomization, followed from
        the real folder of each (as kustomize confirms a folder), and the files it names,
        as kustomize joins them (from that real folder)."""
        from gpulint.render.kustomize.files import kustomization_file, read_kustomization
        from gpulint.render.trees import inside

        todo, seen = [os.path.realpath(self.folder)], set()
        files: dict[str, None] = {}
        while todo:
            folder = todo.pop()
            if folder in seen:
                continue
            seen.add(folder)
            if not (inside(folder, self.root) and os.path.isdir(folder)):
                raise NotChecked(f"{_shown(folder)} is not a folder inside the repository")
            file = kustomization_file(folder)
            if file is None:
                raise NotChecked(f"{_shown(folder)} holds no kustomization")
            k: Kustomization | None = self.trees.kustomizations.get(folder)
            if k is None or k.file != file:
                k = read_kustomization(folder, file)
            if k.problem is not None:
                raise NotChecked(f"{_shown(file)}: {k.problem}")
            files[file] = None
            for ref in k.refs:
                if not ref.path:  # an inline patch
                    continue
                if os.path.isdir(ref.path):
                    real = os.path.realpath(ref.path)
                    if real != ref.path:
                        self.linked[ref.path] = real
                    todo.append(real)
                else:
                    files[ref.path] = None
        return list(files)

    def _read(self, real: str) -> bytes:
        with open(real, "rb") as fh:
            return fh.read(MAX_COPY_BYTES + 1)
