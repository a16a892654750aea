"""A directory walk that holds its folders on a list, not on the call stack.

``os.walk`` recurses one generator per level before Python 3.12: a tree 1,000 folders deep
(a pull request can commit one) raises ``RecursionError`` and ends the whole run. :func:`walk`
is the 3.12 ``os.walk`` (top-down, links to folders not followed): the same folders in the
same order, ``onerror`` called at the same moment (when a folder is about to be listed), and
the caller may prune or reorder ``dirnames`` in place; whether a subfolder is a link comes
from the listing (no ``lstat`` per folder, which costs a path lookup as deep as the folder).
Its depth is bounded by memory only;
a path the system will not take (longer than ``PATH_MAX``) is an ``OSError`` given to
``onerror``, like any folder that cannot be listed.
"""

import os
from collections.abc import Callable, Iterator

#: What a walk yields: the folder, its subfolders' names and its other entries' names.
Step = tuple[str, list[str], list[str]]


def walk(top: str, onerror: Callable[[OSError], object] | None = None) -> Iterator[Step]:
    """``os.walk(top, onerror=onerror)`` without recursion (see the module docstring)."""
    stack: list[str] = [top]
    while stack:
        folder = stack.pop()
        dirs: list[str] = []
        nondirs: list[str] = []
        links: set[str] = set()  # subfolders that are links (from the listing: no lstat)
        try:
            entries = os.scandir(folder)
        except OSError as error:
            if onerror is not None:
                onerror(error)
            continue
        with entries:
            try:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                    except OSError:
                        is_dir = False
                    (dirs if is_dir else nondirs).append(entry.name)
                    try:
                        if is_dir and entry.is_symlink():
                            links.add(entry.name)
                    except OSError:  # as os.path.islink: not a link
                        pass
            except OSError as error:  # listing failed half-way: the folder is not yielded
                if onerror is not None:
                    onerror(error)
                continue
        listed = set(dirs)
        yield folder, dirs, nondirs
        for name in reversed(dirs):
            path = os.path.join(folder, name)
            # A link as listed; a name the caller added to ``dirnames``: ask the system.
            if not (name in links if name in listed else os.path.islink(path)):
                stack.append(path)
