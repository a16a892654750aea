"""Which project each linted file belongs to, and the files whose facts the project holds.

A file's project is the nearest folder at or above it whose configuration declares
``project: true``, else the repository it is in (the nearest folder holding ``.git``), else
the path the run was given that holds it. What gpulint learns from a repository's files (the
taints its GPU pods tolerate, its node pools, its device plugins' configurations, its
ConfigMaps and DeviceClasses: :mod:`gpulint.lint.prepass`) is gathered from every file of
the file's project, whether or not the run was given them, and from no other project's: a
file is judged the same alone, with some of its siblings (pre-commit's staged files) or with
its whole repository, and two repositories linted in one run never share a fact.

The project's files are found as a walk of the run finds them (:mod:`gpulint.util.discover`:
the same skipped folders, the run's ``exclude``, links to folders not followed, files read
by :func:`gpulint.loader.target.read_target` with its size cap and its refusal of links out
of the repository), leaving out the folders that are projects of their own (a nested
``.git``, or a nested configuration that declares ``project: true``). Each folder is looked
at once: the lookup of a file's project climbs from its folder and remembers every folder
it passed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING

from gpulint.util.safefile import ancestors

if TYPE_CHECKING:
    from gpulint.util.discover import Target
    from gpulint.util.walk import Listings

#: The configuration key that makes a folder a project of its own.
PROJECT_KEY = "project"

#: The project of standard input linted without ``--stdin-filename``: itself alone.
STDIN_ALONE = ""


class Projects:
    """The project of each target of one run (:meth:`of`), and its files (:meth:`files`).

    ``given``: the paths the run was given (for a file in no repository and under no
    ``project: true`` configuration, the project is the given path that holds it);
    ``declared``: whether nested configurations may declare projects (not with
    ``--isolated``); ``listings``: the run's (:class:`gpulint.util.walk.Listings`), shared
    with its other walks, which answer the climbs' questions about the folders they listed."""

    def __init__(
        self,
        given: Iterable[str],
        stdin_filename: str | None = None,
        declared: bool = True,
        listings: Listings | None = None,
    ) -> None:
        from gpulint.util.discover import STDIN
        from gpulint.util.walk import Listings

        self.stdin_filename = stdin_filename
        self.declared = declared
        #: The given paths, absolute: a file outside every repository belongs to the widest
        #: one holding it.
        self.given = frozenset(os.path.abspath(p) for p in given if p != STDIN)
        self._root_of: dict[str, str | None] = {}
        self._declares: dict[str, bool] = {}
        self.listings = listings if listings is not None else Listings(0)

    # -- which project ---------------------------------------------------------------------
    def of(self, target: Target) -> str:
        """The project of ``target``: its root folder (or the file itself, given alone
        outside any repository), absolute; :data:`STDIN_ALONE` for standard input without
        ``--stdin-filename``."""
        if target.path is None:
            if not self.stdin_filename:
                return STDIN_ALONE
            path = os.path.abspath(self.stdin_filename)
            folder = os.path.dirname(path)
        else:
            path = os.path.abspath(target.path)
            is_dir = target.render is not None and os.path.isdir(path)
            folder = path if is_dir else os.path.dirname(path)
        root = self.root_of(folder)
        if root is not None:
            return root
        # The widest given path holding it: the topmost of its folders that was given (a
        # climb, not a look at every path given: a run may be given 20,000 folders).
        given = [folder for folder in ancestors(path) if folder in self.given]
        return given[-1] if given else path

    def root_of(self, folder: str) -> str | None:
        """The nearest folder at or above ``folder`` that is a project root (a ``project:
        true`` configuration, else ``.git``); None when there is none. Every folder passed
        on the way is remembered, so a run looks at each folder once."""
        passed: list[str] = []
        found: str | None = None
        current = folder
        while True:
            if current in self._root_of:
                found = self._root_of[current]
                break
            passed.append(current)
            if self.declares(current) or self._holds(current, ".git"):
                found = current
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for seen in passed:
            self._root_of[seen] = found
        return found

    def declares(self, folder: str) -> bool:
        """Whether ``folder``'s configuration declares it a project (``project: true``)."""
        if not self.declared:
            return False
        known = self._declares.get(folder)
        if known is None:
            known = self._declares[folder] = _declares_project(folder, self.listings)
        return known

    def _holds(self, folder: str, name: str) -> bool:
        """``os.path.exists(folder/name)``, answered by the run's listing of ``folder`` when
        it has one."""
        listed = self.listings
        return not listed.lacks(folder, name) and os.path.exists(os.path.join(folder, name))

    def is_root(self, root: str) -> bool:
        """Whether ``root`` is a repository or a declared project (not a path given)."""
        return os.path.isdir(root) and (
            self.declares(root) or os.path.exists(os.path.join(root, ".git"))
        )

    def why(self, root: str) -> str:
        """Why ``root`` is a project, as ``gpulint inspect`` says it."""
        if root == STDIN_ALONE:
            return "standard input alone (no --stdin-filename)"
        if os.path.isdir(root) and self.declares(root):
            return "its configuration says project: true"
        if os.path.exists(os.path.join(root, ".git")):
            return "the repository (.git)"
        return "the path given (no repository or project: true above it)"

    def shown(self, root: str) -> str:
        """``root`` as a run from the working directory names it."""
        return "-" if root == STDIN_ALONE else _label(root)

    # -- its files ---------------------------------------------------------------------------
    def files(
        self,
        root: str,
        excluded: Callable[[str], bool] | None = None,
        terraform: list[Target] | None = None,
    ) -> Iterator[Target]:
        """The files of the project at ``root`` whose facts it holds, labelled as a run from
        the working directory labels them (``k8s/pool.yaml``). Nothing for standard input
        alone; the file itself for a file given alone outside any repository.
        ``terraform``: filled, as the walk goes, with the project's ``*.tf`` files (its node
        pools may be written there: :mod:`gpulint.cluster.terraform`), outside the folders
        Terraform keeps its downloads in (``.terraform``)."""
        from gpulint.util.discover import Target

        if root == STDIN_ALONE:
            return
        label = _label(root)
        if not os.path.isdir(root):
            if not (excluded and excluded(label)):
                yield Target(label, label)
            return
        tf: list[str] | None = [] if terraform is not None else None
        yield from (Target(path, path) for path in self._walk(root, label, excluded, tf))
        if terraform is not None and tf:
            terraform.extend(Target(path, path) for path in tf)

    def _walk(
        self,
        root: str,
        top: str,
        excluded: Callable[[str], bool] | None,
        terraform: list[str] | None = None,
    ) -> Iterator[str]:
        from gpulint.util.discover import SKIP_DIRS, SKIP_FILES, YAML_SUFFIXES, go_vendor
        from gpulint.util.walk import walk

        # A plain top (as a relative or absolute path names it) keeps every path below it
        # plain: a file's path is its folder's joined to its name, not normalised again.
        plain = os.sep == "/" and os.path.normpath(top) == top
        for dirpath, dirnames, filenames in walk(top, None, self.listings):
            if dirpath != top and self._own_project(dirpath, dirnames, filenames):
                dirnames[:] = []
                continue
            dirnames[:] = sorted(
                d
                for d in dirnames
                if d not in SKIP_DIRS
                and not go_vendor(dirpath, d, filenames)
                and not (excluded and excluded(os.path.join(dirpath, d)))
            )
            if not plain:
                folder = None
            elif dirpath == ".":
                folder = ""
            else:
                folder = (dirpath[2:] if dirpath.startswith("./") else dirpath).rstrip("/") + "/"
            for name in sorted(filenames):
                tf = terraform is not None and name.endswith(".tf")
                if (name.endswith(YAML_SUFFIXES) and name not in SKIP_FILES) or tf:
                    if folder is not None:
                        path = folder + name
                    else:
                        path = os.path.normpath(os.path.join(dirpath, name))
                    if excluded and excluded(path):
                        continue
                    if not tf:
                        yield path
                    elif "/.terraform/" not in f"/{path}":
                        terraform.append(path)  # type: ignore[union-attr]

    def _own_project(self, dirpath: str, dirnames: list[str], filenames: list[str]) -> bool:
        """A folder below a project's root that is a project of its own."""
        if ".git" in dirnames or ".git" in filenames:  # a nested repository (or a submodule)
            return True
        from gpulint.config.file import CONFIG_NAMES, PYPROJECT

        if any(n in filenames for n in (*CONFIG_NAMES, PYPROJECT)):
            return self.declares(os.path.abspath(dirpath))
        return False


def _label(path: str) -> str:
    """``path`` (absolute) as a run from the working directory names it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if rel.startswith(os.pardir + os.sep + os.pardir) else rel


def _declares_project(folder: str, listings: Listings) -> bool:
    """Whether the configuration in ``folder`` (not above it) sets ``project: true``. A file
    that cannot be trusted (another user's, a link out of the repository) or read declares
    nothing: the run reports it where it applies."""
    from pathlib import Path as FsPath

    from gpulint.config.file import CONFIG_NAMES, PYPROJECT, ConfigError, find_config, read_config

    try:
        # Strings, not paths, for the probe every folder of a climb makes: a Path parses its
        # whole path again, level by level, so a climb out of a folder n levels deep cost
        # the square of n in Python alone (os.path.isfile is False wherever is_file is).
        # A folder the run listed answers without the system (each probe is a lookup as
        # deep as the folder: the square of n in the kernel).
        if not any(
            not listings.lacks(folder, n) and os.path.isfile(os.path.join(folder, n))
            for n in (*CONFIG_NAMES, PYPROJECT)
        ):
            return False
        here = FsPath(folder)
        found = find_config(here, listings)
        if found is None or found.parent != here.resolve():
            return False
        return read_config(found).data.get(PROJECT_KEY) is True
    except (ConfigError, OSError):
        return False
