"""Which files to lint: the paths given, with directories walked for ``*.yaml``/``*.yml``
and Markdown (``*.md``, ``*.markdown``: their fenced manifests, ``gpulint.loader.markdown``).

Helm charts and Kustomize roots are targets of their own (``Target.render``), found by the
``trees`` a caller passes (``gpulint.render.trees.Trees``): a chart folder is one target, and
only the files in it that rendering does not read (``examples/``, ``crds/``) are linted as
plain YAML; the files a built Kustomize root consumes are not linted alone.
"""

import bisect
import errno
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple, Protocol

from gpulint.util.walk import Listings, walk

YAML_SUFFIXES = (".yaml", ".yml")
#: Markdown files: a walk lints the manifests of their fenced ``yaml`` blocks. Not project
#: files (``gpulint.commands.projects``): an example says nothing of the cluster.
MARKDOWN_SUFFIXES = (".md", ".markdown")

#: Version-control, dependency and tool folders never walked (ruff's default excludes).
SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", ".jj", ".direnv", ".eggs", ".mypy_cache", ".nox",
        ".pytest_cache", ".ruff_cache", ".tox", ".venv", "__pycache__", "__pypackages__",
        ".gpulint_cache",
        "_build", "buck-out", "dist", "node_modules", "site-packages", "venv",
    }
)  # fmt: skip

#: Files beside a ``vendor`` folder that say it is Go's vendored dependencies (Go modules,
#: dep, glide, govendor): third-party trees a walk leaves out, as golangci-lint does.
GO_VENDOR_MARKERS = frozenset(
    {"go.mod", "Gopkg.toml", "Gopkg.lock", "glide.yaml", "glide.lock", "vendor.conf"}
)


def go_vendor(folder: str, name: str, filenames: Sequence[str]) -> bool:
    """Whether ``folder/name`` is a Go project's ``vendor`` folder: copies of its
    dependencies' trees (a vendored Kubernetes holds thousands of old manifests), not the
    project's own files. Said by a Go build file beside it, by the ``modules.txt`` Go
    modules write into it, or by its folders named as import paths' hosts (``github.com``,
    ``k8s.io``, ``golang.org``) and nothing else."""
    if name != "vendor":
        return False
    if not GO_VENDOR_MARKERS.isdisjoint(filenames):
        return True
    path = os.path.join(folder, name)
    if os.path.isfile(os.path.join(path, "modules.txt")):
        return True
    try:
        entries = os.listdir(path)
    except OSError:
        return False
    return bool(entries) and all("." in e and os.path.isdir(os.path.join(path, e)) for e in entries)


#: gpulint's own configuration files (gpulint.config.file.CONFIG_NAMES): YAML, never a manifest,
#: so a walk leaves them out (naming one explicitly still lints it).
SKIP_FILES = frozenset({".gpulint.yaml", ".gpulint.yml"})

STDIN = "-"


#: A file name that says the file is a patch: ``kube-proxy.patch.yaml``, ``gpu-patch.yml``,
#: ``patch_tolerations.yaml``, ``patch.yaml`` (a pattern: compiled on first use).
PATCH_NAME = r"(?:.*[._-])?patch(?:es)?(?:[._-].*)?\.ya?ml"


def named_patch(path: str) -> bool:
    """Whether a file's name, or its folder (``patches/``), says it is a patch."""
    import re

    name = os.path.basename(path).lower()
    folder = os.path.basename(os.path.dirname(path)).lower()
    return folder == "patches" or re.fullmatch(PATCH_NAME, name) is not None


class Part(NamedTuple):
    """What a kustomization makes of a file linted without ``--render``: a patch, or a
    resource that a patch completes (``gpulint.render.kustomize.patches``).

    ``kustomization`` (a label) and ``line`` are the entry that names the patch; ``patch``
    is the patch's label when this file is the resource it patches (``""``: the patch is
    written inline), ``None`` when this file is the patch. ``objects`` are the
    ``(kind, name)`` of the resource's objects the patch reaches the pod spec of (a name of
    ``None``: every object of the kind); for a patch, every object is part of one.
    ``labels``: a kustomization adds labels to the resource's pod templates (``commonLabels``,
    or ``labels`` with ``includeSelectors`` or ``includeTemplates``), so the labels and
    selectors written are not those applied (a resource only labelled is no patch's:
    ``patch`` is ``""`` and ``objects`` empty).
    """

    kustomization: str
    line: int
    patch: str | None = None
    objects: frozenset[tuple[str, str | None]] = frozenset()
    labels: bool = False
    #: No kustomization names the file, but its name says it is a patch (``*.patch.yaml``,
    #: ``*-patch.yaml``, ``patch-*.yaml``, a file of a ``patches/`` folder: applied with
    #: ``kubectl patch`` or by a tool onto an object it does not hold).
    by_name: bool = False
    #: The objects of ``objects`` a patch changes beyond where the pod runs: a patch that
    #: sets only the pod's ``nodeSelector``, ``affinity`` or ``tolerations`` leaves its
    #: containers, their GPUs and their environment as the resource writes them.
    beyond_placement: frozenset[tuple[str, str | None]] = frozenset()

    def covers(self, kind: str | None, name: str | None) -> bool:
        """Is the object of this kind and name only a part of what is applied?"""
        if self.patch is None:
            return True
        return (kind, name) in self.objects or (kind, None) in self.objects

    def placement_only(self, kind: str | None, name: str | None) -> bool:
        """Do the patches that complete this object (:meth:`covers`) change only where its
        pods run? Never for a patch itself, which is half an object."""
        if self.patch is None or self.by_name:
            return False
        return not {(kind, name), (kind, None)} & self.beyond_placement

    def message(self, obj: str, held: Sequence[str] = ()) -> str:
        """GL203's message for the first object of the file the checks were skipped on
        (``held``: for a file named as a patch, the rules whose findings were held back)."""
        if self.by_name:
            return (
                f"this file is named as a patch, half of {obj}: what {', '.join(held)} found, "
                "which needs the whole object, was held back; rename the file if it is a whole "
                "manifest, or lint what applies it"
            )
        where = f"{self.kustomization}:{self.line}"
        if self.patch is None:
            what = f"this file is a Kustomize patch, half of {obj}"
        elif self.patch:
            what = f"{obj} is completed by the Kustomize patch {self.patch}"
        else:
            what = f"{obj} is completed by the Kustomize patch written in {where}"
        # What was skipped and where the patch is applied: the help line (`; `).
        return (
            f"{what}: the checks that need the whole object were skipped; lint the rendered "
            f"overlay, `gpulint check --render` ({where} applies the patch; the skipped checks: "
            "tolerations against the GPU request, the pod's GPU total, the cluster's nodes)"
        )


class Target(NamedTuple):
    """A file to lint: its display path and the path to open (None for stdin).

    ``render`` is ``"helm"`` for a chart folder, ``"kustomize"`` for a Kustomize root:
    the folder is rendered and its output linted (``gpulint.render``). ``part`` says that a
    kustomization patches the file or completes it with a patch (without ``--render``):
    the rules that need the whole object are not run on those objects (GL203).
    """

    label: str
    path: str | None
    render: str | None = None
    part: Part | None = None


class Trees(Protocol):
    """What ``targets`` asks about charts and Kustomize folders (``gpulint.render.trees``)."""

    render: bool

    def scan(self, root: str) -> None: ...

    def folder(self, dirpath: str, filenames: list[str]) -> tuple[str, str] | None: ...

    def enclosing_chart(self, root: str) -> str | None: ...

    def consumed(self, path: str) -> bool: ...

    def chart_reads(self, chart: str, path: str, folder: bool = False) -> bool: ...

    def owners(self, path: str) -> Iterator[tuple[str, str]]: ...

    def part(self, path: str, named: bool = False) -> Part | None: ...


#: Why ``os.stat`` says a path does not exist. Any other failure (``EACCES``: a folder on
#: the way cannot be searched) is a path that exists but cannot be read: it is linted, and
#: reading it reports the reason (YML005), never "no such file".
_MISSING = (errno.ENOENT, errno.ENOTDIR)


#: Is this path excluded by the configuration (``exclude``)?
Excluded = Callable[[str], bool]


def _walk(
    root: str,
    excluded: Excluded | None = None,
    trees: Trees | None = None,
    listings: Listings | None = None,
) -> Iterator[str | Target]:
    """The YAML files under ``root``, and the folders it cannot read (as ruff reports them:
    a finding on the folder, here YML005 when the runner fails to read it).

    The walk (:func:`gpulint.util.walk.walk`, ``os.walk`` without recursion: a folder any number
    of levels deep is walked) reports a folder it cannot list to ``onerror`` when it is
    about to descend into it, before it yields the next folder, so the folder is yielded in
    its place in the walk's sorted order. A folder whose path is longer than the system
    takes is such a folder (YML005, "File name too long"). ``listings``: the run's, shared
    by its walks.
    """
    unreadable: list[OSError] = []
    #: The chart folders met so far, absolute (a walk is top-down: a folder inside one is
    #: met after it); what rendering them does not read is walked as plain YAML.
    charts: list[str] = []
    if trees is not None:
        chart = trees.enclosing_chart(root)
        if chart is not None:
            if trees.chart_reads(chart, root, True):
                # A folder inside a chart that rendering reads (its templates/, a subchart,
                # a chart nested in another chart's templates/) is linted as walking from
                # above lints it: as the outermost chart, one target, never its templates
                # as plain YAML.
                yield Target(os.path.normpath(chart), chart, "helm")
                return
            charts.append(os.path.abspath(chart))  # its examples/: plain YAML, as from above
        trees.scan(root)
    # The walk does not follow directory symlinks, so symlink loops cannot trap it.
    for dirpath, dirnames, filenames in walk(root, unreadable.append, listings):
        while unreadable:
            yield _failed_folder(unreadable.pop(0), root)
        render = trees.folder(dirpath, filenames) if trees is not None else None
        here = os.path.abspath(dirpath) if charts or render is not None else dirpath
        chart = next((c for c in reversed(charts) if _inside(here, c)), None)
        if render is not None:
            kind, folder = render
            yield Target(os.path.normpath(folder), folder, kind)
            if kind == "helm":  # one target; what rendering does not read is plain YAML
                charts.append(here)
                chart = here
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS
            and not go_vendor(dirpath, d, filenames)
            and not (excluded and excluded(os.path.join(dirpath, d)))
            and not (chart and trees and trees.chart_reads(chart, os.path.join(dirpath, d), True))
        )
        for name in sorted(filenames):
            if (
                name.endswith(YAML_SUFFIXES) or name.lower().endswith(MARKDOWN_SUFFIXES)
            ) and name not in SKIP_FILES:
                path = os.path.join(dirpath, name)
                if (
                    not (excluded and excluded(path))
                    and not (trees and trees.consumed(path))
                    and not (chart and trees and trees.chart_reads(chart, path))
                ):
                    yield path
    for error in unreadable:
        yield _failed_folder(error, root)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _failed_folder(error: OSError, root: str) -> str:
    return error.filename if isinstance(error.filename, str) else root


def _under(label: str, base: str) -> bool:
    """Whether walking ``base`` can find a file labelled ``label`` (both normalised)."""
    if base == os.curdir:
        outside = label == os.pardir or label.startswith(os.pardir + os.sep)
        return not (outside or os.path.isabs(label))
    return label == base or label.startswith(base.rstrip(os.sep) + os.sep)


def targets(
    paths: Iterable[str],
    stdin_label: str = "<stdin>",
    excluded: Excluded | None = None,
    force_exclude: bool = False,
    trees: Trees | None = None,
    listings: Listings | None = None,
) -> tuple[Iterator[Target], list[str]]:
    """Expand ``paths`` into targets in a deterministic order, and the paths that are missing.

    Files named explicitly are linted whatever their extension; directories contribute
    ``*.yaml``, ``*.yml`` and Markdown files. Each file appears once. ``excluded`` prunes
    what a walk finds; with ``force_exclude`` it also drops paths named explicitly (ruff's
    ``force-exclude``, for pre-commit, which names every file).

    The paths are checked at once (the missing ones are known before anything is linted),
    but directories are walked lazily, as the targets are consumed: a walk of 100,000 files
    holds none of them (with ``listings``, the run's folders' listings are kept, within
    their bound, :data:`gpulint.util.walk.MAX_LISTED_BYTES`). Files found are remembered (to
    list each once) only under a path that overlaps another one given, such as
    ``k8s k8s/gpu.yaml``.

    With ``trees``, a file named explicitly that a chart or a built Kustomize root renders
    (a changed template, values file or patch, as pre-commit names them) is replaced by
    that chart or root; each chart or root is linted once. ``listings`` are the run's
    (:class:`gpulint.util.walk.Listings`): a folder another walk of the run listed is not
    listed again.
    """
    forced = excluded if force_exclude else None
    roots: list[tuple[str, str, bool]] = []  # (path, its label, is a directory)
    missing: list[str] = []
    for path in paths:
        if path == STDIN:
            if not (forced and forced(stdin_label)):
                roots.append((path, stdin_label, False))
            continue
        if forced and forced(path):
            continue
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            # A dangling symlink is a file we cannot read; a path we may not look at
            # (permission denied) is reported when it is read.
            if exc.errno in _MISSING and not os.path.islink(path):
                missing.append(path)
                continue
            mode = 0
        roots.append((path, os.path.normpath(path), stat.S_ISDIR(mode)))
    return _expand(roots, excluded, trees, listings), missing


def _expand(
    roots: list[tuple[str, str, bool]],
    excluded: Excluded | None,
    trees: Trees | None = None,
    listings: Listings | None = None,
) -> Iterator[Target]:
    # Files named explicitly are always remembered (they are on the command line anyway, and
    # pre-commit names thousands); a directory's files only when another path given
    # overlaps it (``k8s k8s/gpu.yaml``, ``. k8s``, ``k8s k8s``).
    overlapping = _Overlaps([label for path, label, _ in roots if path != STDIN])
    seen: set[str] = set()
    rendered: set[tuple[str, str]] = set()
    for path, label, is_dir in roots:
        if path == STDIN:
            yield Target(label, None)
            continue
        remember = not is_dir or overlapping(label)
        found: Iterator[str | Target]
        if is_dir:
            found = _walk(path, excluded, trees, listings)
        else:
            owners = list(trees.owners(path)) if trees is not None else []
            rendered_by: list[str | Target] = [Target(os.path.normpath(f), f, k) for k, f in owners]
            found = iter(rendered_by or [path])
        for file in found:
            if isinstance(file, Target):
                key = (file.render or "", os.path.abspath(file.label))
                if key not in rendered:
                    rendered.add(key)
                    yield file
                continue
            name = os.path.normpath(file)
            if remember:
                if name in seen:
                    continue
                seen.add(name)
            yield Target(name, file, None, trees.part(file, not is_dir) if trees else None)


class _Overlaps:
    """Does a label overlap another of the labels given (``_under`` either way, or equal)?

    Answered from a sorted list and a set in O(depth + log n) a question: comparing every
    pair was quadratic (20,000 folders on the command line took 425 s).
    """

    def __init__(self, labels: list[str]) -> None:
        self.counts: dict[str, int] = {}
        for label in labels:
            self.counts[label] = self.counts.get(label, 0) + 1
        self.sorted = sorted(self.counts)
        #: Labels a walk of "." can find (relative, not climbing out), "." itself aside.
        self.below_curdir = sum(
            n for label, n in self.counts.items() if label != os.curdir and _under(label, os.curdir)
        )

    def __call__(self, label: str) -> bool:
        counts = self.counts
        if counts.get(label, 0) > 1:
            return True
        # Another label above this one: "." or a prefix of it that ends at a separator
        # (``_under(label, other)``: other plus a separator starts the label).
        if label != os.curdir and os.curdir in counts and _under(label, os.curdir):
            return True
        for i, char in enumerate(label):
            if char != os.sep:
                continue
            if i == 0:
                if any(root in counts and root != label for root in (os.sep, os.sep * 2)):
                    return True
            elif label[:i] in counts:
                return True
        # Another label below this one.
        if label == os.curdir:
            return self.below_curdir > 0
        prefix = label.rstrip(os.sep) + os.sep
        at = bisect.bisect_left(self.sorted, prefix)
        while at < len(self.sorted) and self.sorted[at] == label:
            at += 1
        return at < len(self.sorted) and self.sorted[at].startswith(prefix)
