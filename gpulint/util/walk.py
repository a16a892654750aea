"""A directory walk that holds its folders on a list, not on the call stack, and the folders one
run has listed.

``os.walk`` recurses one generator per level before Python 3.12: a tree 1,000 folders deep
(a pull request can commit one) raises ``RecursionError`` and ends the whole run. :func:`walk`
is the 3.12 ``os.walk`` (top-down, links to folders not followed): the same folders in the
same order, ``onerror`` called at the same moment (when a folder is about to be listed), and
the caller may prune or reorder ``dirnames`` in place; whether a subfolder is a link comes
from the listing (no ``lstat`` per folder, which costs a path lookup as deep as the folder).
Its depth is bounded by memory only;
a path the system will not take (longer than ``PATH_MAX``) is an ``OSError`` given to
``onerror``, like any folder that cannot be listed.

The system resolves every path it is given from the root, component by component: a folder n
levels deep costs n lookups, whatever is asked of it. A run walks its tree more than once (the
files given, each file's project, the charts and overlays) and climbs from each file's folder
to its configuration and its project (is there a ``.gpulint.yaml``, a ``.git``, is the folder
writable by anyone?), so a tree n folders deep cost about fifteen times n²/2 lookups. A run
holds one :class:`Listings`, given to each of its walks: each folder is listed once a run
(through a descriptor, with its mode), every later walk reuses the listing, and a climb asks
:meth:`Listings.lacks`, :meth:`Listings.mode_of` and :meth:`Listings.real` before it asks the
system. A listing is of the moment it was made, as one walk's is: a file made during the run
in a folder already listed is not seen by a later walk of the same run. What the listings
hold is bounded by their names' bytes (:data:`MAX_LISTED_BYTES`); past it, a folder is
listed again by each walk, as without them.
"""

import os
from collections.abc import Callable, Iterator
from typing import NamedTuple

#: What a walk yields: the folder, its subfolders' names and its other entries' names.
Step = tuple[str, list[str], list[str]]

#: The bytes of names (plus :data:`ENTRY_BYTES` an entry) one run's listings may hold: about
#: 200,000 entries of ordinary names. A tree larger than that is listed again by each walk
#: past the bound, as it was before listings were shared.
MAX_LISTED_BYTES = 32 << 20
#: What an entry costs beside its name (its string object, its slot in a tuple and in the
#: sets of names).
ENTRY_BYTES = 128

#: Listed through a descriptor where the system allows it: the folder's mode then comes with
#: the listing (``fstat``, no second lookup of the path).
_BY_FD = os.scandir in os.supports_fd
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NONBLOCK", 0)


class Listing(NamedTuple):
    """One folder as listed: its subfolders (links to folders among them), its other
    entries, the names among all of them that are symbolic links, those that are neither a
    folder, a link nor a regular file (a FIFO, a device, a socket, or an entry whose kind
    the listing could not tell: ask the system), the folder's own ``st_mode`` (links
    followed, as ``os.stat``; None where the system lists by path only), and whether a name
    in it can be looked up (a folder may be readable, not searchable: then ``lstat`` of any
    name in it fails with EACCES, whether or not the name is listed)."""

    dirs: tuple[str, ...]
    nondirs: tuple[str, ...]
    links: frozenset[str]
    others: frozenset[str]
    mode: int | None
    searchable: bool
    #: Every name, and the subfolders' (asked of each entry: a set, not the lists).
    names: frozenset[str]
    subfolders: frozenset[str]


def _list(folder: str) -> Listing:
    """List ``folder``; OSError (its ``filename`` the folder) when it cannot be listed."""
    if not _BY_FD:
        with os.scandir(folder) as entries:
            return _entries(entries, folder, None, False)
    fd = os.open(folder, _OPEN_FLAGS)
    try:
        mode = os.fstat(fd).st_mode
        try:
            os.stat(os.curdir, dir_fd=fd)  # a lookup in it: the system's own permission check
            searchable = True
        except OSError:
            searchable = False
        with os.scandir(fd) as entries:
            return _entries(entries, folder, mode, searchable)
    finally:
        os.close(fd)


def _entries(
    entries: Iterator[os.DirEntry[str]], folder: str, mode: int | None, searchable: bool
) -> Listing:
    dirs: list[str] = []
    nondirs: list[str] = []
    links: set[str] = set()
    others: set[str] = set()
    try:
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
                others.add(name)
            (dirs if is_dir else nondirs).append(name)
            try:
                if entry.is_symlink():
                    links.add(name)
                elif not is_dir and not entry.is_file(follow_symlinks=False):
                    others.add(name)
            except OSError:  # as os.path.islink: not a link (for the walk); its kind unknown
                others.add(name)
    except OSError as error:  # listing failed half-way: named as a listing by path names it
        raise OSError(error.errno, error.strerror, folder) from None
    subfolders = frozenset(dirs)
    return Listing(
        tuple(dirs),
        tuple(nondirs),
        frozenset(links),
        frozenset(others),
        mode,
        searchable,
        subfolders.union(nondirs),
        subfolders,
    )


class Listings:
    """The folders one run has listed, by absolute path (bounded: :data:`MAX_LISTED_BYTES`)."""

    def __init__(self, budget: int = MAX_LISTED_BYTES) -> None:
        self._cwd: str | None = None  # the working folder, asked when first needed
        self._by_folder: dict[str, Listing] = {}
        self._left = budget
        self._real: dict[str, str] = {}
        self._last: tuple[str | None, str | None] = (None, None)

    def key(self, folder: str) -> str | None:
        """``folder`` absolute and normal; as given when it climbs (``..``: after a link,
        the system's parent is not the name's), None when it cannot be made absolute."""
        if folder == self._last[0]:  # a climb asks several names of one folder in a row
            return self._last[1]
        path = folder
        if not os.path.isabs(path):
            if self._cwd is None:
                try:
                    self._cwd = os.getcwd()
                except OSError:  # the working folder is gone: only absolute paths are kept
                    return None
            path = os.path.join(self._cwd, path)
        sep, up = os.sep, os.pardir
        climbs = path.endswith(sep + up) or (sep + up + sep) in path
        key = path if climbs else os.path.normpath(path)
        self._last = (folder, key)
        return key

    def get(self, folder: str) -> Listing | None:
        """``folder``'s listing if this run has one."""
        if not self._by_folder:
            return None
        key = self.key(folder)
        return self._by_folder.get(key) if key is not None else None

    def lacks(self, folder: str, name: str) -> bool:
        """Whether this run listed ``folder`` (searchable) and no entry of it is called
        ``name``: then asking the system for ``folder/name`` (``stat``, ``exists``,
        ``is_file``) finds nothing. False when the folder was not listed, cannot be
        searched, or holds the name (ask the system)."""
        found = self.get(folder)
        return found is not None and found.searchable and name not in found.names

    def mode_of(self, folder: str) -> int | None:
        """``os.stat(folder).st_mode`` as this run listed the folder, or None (ask the
        system)."""
        found = self.get(folder)
        return found.mode if found is not None else None

    def real(self, folder: str) -> str | None:
        """``os.path.realpath(folder)`` for an absolute, normal ``folder``, answered from
        this run's listings: every folder on the way down from the top of the walk that
        listed it is a folder of its parent's listing and not a link, so only the top is
        resolved by the system (once a run). None when that is not known (ask the system)."""
        if not os.path.isabs(folder) or os.path.normpath(folder) != folder:
            return None
        current = folder
        while True:
            parent, name = os.path.split(current)
            if parent == current or not name:
                return None
            above = self.get(parent)
            if above is None:
                break
            if name not in above.subfolders or name in above.links:
                return None
            current = parent
        if current == folder:
            return None  # its parent was not listed: nothing known
        top = self._real.get(current)
        if top is None:
            top = self._real[current] = os.path.realpath(current)
        return top + folder[len(current) :] if top != current else folder

    def keep(self, folder: str, listing: Listing) -> None:
        key = self.key(folder)
        if key is None or key in self._by_folder:
            return
        cost = sum(len(n) + ENTRY_BYTES for n in listing.dirs) + ENTRY_BYTES * (
            1 + len(listing.nondirs) + len(listing.links) + len(listing.others)
        )
        cost += sum(len(n) for n in listing.nondirs) + len(key)
        if cost > self._left:
            return
        self._left -= cost
        self._by_folder[key] = listing


def walk(
    top: str,
    onerror: Callable[[OSError], object] | None = None,
    listings: Listings | None = None,
) -> Iterator[Step]:
    """``os.walk(top, onerror=onerror)`` without recursion; with ``listings`` (the run's),
    a folder listed before in the run is not listed again (see the module docstring)."""
    stack: list[str] = [top]
    while stack:
        folder = stack.pop()
        listing = listings.get(folder) if listings is not None else None
        if listing is None:
            try:
                listing = _list(folder)
            except OSError as error:
                if onerror is not None:
                    onerror(error)
                continue
            if listings is not None:
                listings.keep(folder, listing)
        dirs = list(listing.dirs)
        yield folder, dirs, list(listing.nondirs)
        known, links = listing.subfolders, listing.links
        for name in reversed(dirs):
            path = os.path.join(folder, name)
            # A link as listed; a name the caller added to ``dirnames``: ask the system.
            if not (name in links if name in known else os.path.islink(path)):
                stack.append(path)
