"""What each file of a project said about the cluster, kept between runs in the project's
``.gpulint_cache/`` folder, as ruff keeps ``.ruff_cache``.

A project's facts are read from every one of its files (:mod:`gpulint.commands.projects`), so a
pre-commit run on one staged file would parse the whole repository. The per-file facts the
cluster picture needs (the tolerations of each GPU pod, the node agents' tolerations) are
kept by the SHA-256 of the file's bytes: a warm run reads each file, hashes it, and parses
only the files that changed. An entry is the file's own, never its name or place in the tree
(a moved file keeps its entry; its label is applied when it is read back).

The cache is data, never code: one JSON file, read with a size cap, every entry checked
before it is used; a file that is not what gpulint wrote (truncated, edited, hostile) is
ignored with a warning on stderr and written again. It is kept only in a real folder of the
project (``.gpulint_cache`` may not be a link, nor its files), created with a ``.gitignore``
of ``*`` so that it is never committed. Its key holds gpulint's version, the format and what
decides the facts (the device registry's names, the workload table): a run with another of
them starts empty. ``--no-cache`` or ``cache: false`` in the configuration keep none.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any

#: The cache folder's name, in the project's root folder.
FOLDER = ".gpulint_cache"
#: The facts file in it; the number changes with the format of its entries.
FORMAT = 1
_NAME = f"facts-{FORMAT}.json"
#: A cache file larger than this is not read (a project's facts are far smaller).
_MAX_BYTES = 64 << 20


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


class FactCache:
    """The per-file facts of one project: :meth:`get` and :meth:`put` by content digest,
    :meth:`save` at the end (only the entries this run used are kept)."""

    __slots__ = ("_changed", "_entries", "_folder", "_key", "_used", "_warned", "shown")

    def __init__(self, root: str, key: str) -> None:
        self._folder = os.path.join(root, FOLDER)
        self._key = key
        self._entries: dict[str, Any] = {}
        self._used: dict[str, Any] = {}
        self._changed = False
        self._warned: set[str] = set()  # each said once
        #: How messages name the cache file.
        self.shown = os.path.join(os.path.relpath(self._folder), _NAME)
        self._load()

    def _warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            from gpulint.util.textsafe import escape_line

            sys.stderr.write(f"gpulint: warning: {escape_line(message)}\n")

    def _load(self) -> None:
        path = os.path.join(self._folder, _NAME)
        try:
            if not _real_folder(self._folder):
                return
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC)
        except OSError:
            return  # no cache yet, or one that cannot be read: a cold run
        try:
            with os.fdopen(fd, "rb") as fh:
                raw = fh.read(_MAX_BYTES + 1)
            data = json.loads(raw) if len(raw) <= _MAX_BYTES else None
        except (OSError, ValueError, RecursionError):
            data = None
        if not (
            isinstance(data, dict)
            and isinstance(data.get("key"), str)
            and isinstance(data.get("files"), dict)
        ):
            self._warn(f"{self.shown}: not a cache gpulint wrote; ignored, and written again")
            self._changed = True
            return
        if data["key"] != self._key:
            self._changed = True  # another version or registry: start again
            return
        self._entries = data["files"]

    def get(self, key: str) -> Any:
        """The entry of a file's digest, or None."""
        entry = self._entries.get(key)
        if entry is not None:
            self._used[key] = entry
        return entry

    def bad(self, key: str) -> None:
        """The entry of ``key`` is not one gpulint wrote: dropped, with a warning once."""
        self._warn(f"{self.shown}: an entry is not one gpulint wrote; ignored, and written again")
        self._entries.pop(key, None)
        self._used.pop(key, None)
        self._changed = True

    def put(self, key: str, entry: Any) -> None:
        self._entries[key] = entry
        self._used[key] = entry
        self._changed = True

    def save(self) -> None:
        """Write the entries this run used (and no other) when something changed; a folder
        that cannot be written, or is a link, keeps no cache (silently: a read-only
        checkout)."""
        if not self._changed and len(self._used) == len(self._entries):
            return
        try:
            if not os.path.lexists(self._folder):
                os.mkdir(self._folder)
                _write_new(os.path.join(self._folder, ".gitignore"), b"# gpulint's cache\n*\n")
            if not _real_folder(self._folder):
                self._warn(f"{self.shown}: its folder is a link or not a folder: no cache kept")
                return
            data = json.dumps({"key": self._key, "files": self._used}, separators=(",", ":"))
            temporary = os.path.join(self._folder, f".{_NAME}.{os.getpid()}.tmp")
            _write_new(temporary, data.encode())
            os.replace(temporary, os.path.join(self._folder, _NAME))
        except OSError:
            return


_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _real_folder(path: str) -> bool:
    """A folder, not a link to one (the cache never writes through a link)."""
    import stat

    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _write_new(path: str, data: bytes) -> None:
    """Write a file that does not exist yet, never through a link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC
    fd = os.open(path, flags, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
