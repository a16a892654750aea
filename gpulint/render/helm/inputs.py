"""What helm may read of a tree: every link of a chart resolved (links to folders too, as
helm follows them) and every values file, refused when it leaves the repository, is a
system file, or is not a regular file or folder (a FIFO or device helm could wait on). And
what ``--fix`` may not write through (:func:`through_link`).
"""

import os
import stat

from gpulint.render.trees import inside
from gpulint.util.walk import Listings

#: Folders whose files are the system's, not the repository's (``/dev/stdin``,
#: ``/proc/self/environ``): never read, even by a link the user named.
SYSTEM_FOLDERS = ("/dev", "/proc", "/sys")

OUTSIDE = "is a symbolic link to a file outside the repository, which the chart could read"
OUTSIDE += " into its output"


def system_path(real: str) -> bool:
    """Is a resolved path one of the system's (a device, a process's file)?"""
    return any(inside(real, folder) for folder in SYSTEM_FOLDERS)


def links_outside(
    folder: str, root: str, listings: Listings | None = None
) -> tuple[str, str] | None:
    """The first entry under ``folder`` that helm must not read, and why (a sentence that
    follows the entry's name), if any.

    helm loads a chart folder following every symbolic link, to files and to folders, the
    ``.helmignore``'d ones too (it resolves a link before it asks whether it is ignored).
    So this walk follows links to folders as helm does, and refuses:

    * a link whose real target is outside ``root`` (``.Files.Get`` would copy the target,
      a credential, into the output) or one of the system's (``/dev``, ``/proc``, ``/sys``);
    * a link to nothing, and an entry (or a link's target) that is neither a regular file
      nor a folder: a FIFO or a device that helm would wait on or read forever;
    * a folder reached a second time through a link (a loop, or a link to a folder the
      chart already holds): helm would read it again on every pass, without end for a loop,
      exponentially for links to links.

    ``.helmignore`` is not consulted: what helm skips is checked all the same. Each real
    folder is listed once (a set of real paths), so the walk ends and is linear in the
    entries; it holds its folders on a list (no recursion). A folder the run has listed
    (``listings``, :class:`gpulint.util.walk.Listings`) is not listed again, and its
    subfolders and regular files, as listed, are not looked up again (a lookup costs as many
    steps as the folder is deep); its links and any other entry are.
    """
    real_root = os.path.realpath(root)
    top = os.path.realpath(folder)
    if not inside(top, real_root) or system_path(top):
        return folder, OUTSIDE
    seen = {top: folder}
    stack = [(folder, top)]  # (the path as helm sees it, the real folder)
    while stack:
        shown, real = stack.pop()
        listed = listings.get(real) if listings is not None else None
        if listed is not None and not listed.searchable:
            listed = None  # every lookup in it fails: asked, as without the listing
        try:
            names = sorted(listed.names if listed is not None else os.listdir(real))
        except OSError as exc:
            return shown, f"cannot be listed ({exc.strerror or exc}), so its links are unknown"
        inners: list[tuple[str, str]] = []
        for name in names:
            path, at = os.path.join(shown, name), os.path.join(real, name)
            if listed is None or name in listed.links or name in listed.others:
                why, inner = _entry(at, real_root)
            else:  # a folder or a regular file as listed, not a link: nothing to look up
                why, inner = None, (at if name in listed.subfolders else None)
            if why is not None:
                return path, why
            if inner is None:
                continue
            if inner in seen:
                again = os.path.relpath(seen[inner], folder)
                return path, (
                    f"is a symbolic link to a folder the chart already holds ({again}), which "
                    "helm would read again"
                )
            seen[inner] = path
            inners.append((path, inner))
        stack.extend(reversed(inners))  # walked in sorted order: the first problem is stable
    return None


def refused_file(path: str, root: str, stay_in: str | None = None) -> str | None:
    """Why helm must not be given ``path`` (a values file) to read, if it must not: the link
    resolves outside ``root`` (a path written inside it, from the repository, must stay
    there; a path the user names elsewhere is theirs; with ``stay_in``, the name of
    ``root`` in the message, the path must resolve inside it wherever it is written), or to
    one of the system's files (``/dev/stdin``, ``/proc/...``), or to something that is not
    a regular file (a FIFO, a device: helm would wait on it). A path that does not exist is
    left to helm, which says so. ``root`` is a real path."""
    written = os.path.abspath(path)
    real = os.path.realpath(written)
    if (stay_in is not None or inside(written, root)) and not inside(real, root):
        where = stay_in or "the repository"
        return f"is a symbolic link to a file outside {where}, which helm would read"
    if system_path(real):
        return "is one of the system's files (a device or a process's), not a values file"
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return None
    if not stat.S_ISREG(mode):
        return "is not a regular file (a folder, a FIFO, a device or a socket)"
    return None


def _entry(at: str, root: str) -> tuple[str | None, str | None]:
    """For the entry ``at`` of a real folder: why helm must not read it, else the real
    folder to walk when it is (or links to) a folder; (None, None) for a regular file."""
    try:
        mode = os.lstat(at).st_mode
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})", None
    real = at
    if stat.S_ISLNK(mode):
        real = os.path.realpath(at)
        if not inside(real, root) or system_path(real):
            return OUTSIDE, None
        try:
            mode = os.stat(real).st_mode
        except OSError:
            return "is a symbolic link to nothing, which helm cannot load", None
    if stat.S_ISDIR(mode):
        return None, real
    if stat.S_ISREG(mode):
        return None, None
    why = "is not a regular file or folder (a FIFO, a device or a socket), which helm could wait on"
    return why, None


def through_link(path: str) -> str | None:
    """The file itself or a folder above it that is a symbolic link, below its repository
    (the nearest folder holding ``.git``) or below the working directory when it is inside
    it: ``--fix`` writes through none (:func:`gpulint.commands.outfiles.write_fixed`), so
    ``--diff`` offers no such fix either."""
    if os.path.islink(path):
        return path

    def below(folder: str, top: str | None) -> bool:
        return top is not None and folder.startswith(top.rstrip(os.sep) + os.sep)

    folder, repo = os.path.dirname(path), None
    while repo is None:
        if os.path.exists(os.path.join(folder, ".git")):
            repo = folder
        elif os.path.dirname(folder) == folder:
            break
        folder = os.path.dirname(folder)
    cwd = os.getcwd() if below(path, os.getcwd()) else None
    folder = os.path.dirname(path)
    while below(folder, repo) or below(folder, cwd):
        if os.path.islink(folder):
            return folder
        folder = os.path.dirname(folder)
    return None
