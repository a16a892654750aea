"""A private temporary folder, written only through folder handles that follow no link.

gpulint checks a fix in a chart or an overlay by rendering it again with the edited file
(:mod:`gpulint.render.fixcopy`). What that writes goes here and nowhere else: a folder made
by ``tempfile.mkdtemp`` (mode 0700, a fresh name), into which every file and folder is made
by walking down from the folder's own handle one name at a time, each opened with
``O_NOFOLLOW`` (``openat``): a name the linted tree chose cannot lead a write through a
symbolic link, at any depth, wherever the link points. Files are made with ``O_CREAT |
O_EXCL``: never one that was there. Links made here (:meth:`Scratch.link`) are for the
programs that read the folder; gpulint never writes through them.

Removing it walks down the same way, with one folder open at a time and no recursion, so a
folder of any depth goes. Needs ``dir_fd`` support (every POSIX system); elsewhere
:func:`available` is false and nothing is made.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Sequence

_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)


def available() -> bool:
    """Can this system write a folder the way :class:`Scratch` does (``openat``)?"""
    return (
        os.open in os.supports_dir_fd
        and os.mkdir in os.supports_dir_fd
        and os.symlink in os.supports_dir_fd
        and os.unlink in os.supports_dir_fd
        and os.stat in os.supports_dir_fd
        and os.rmdir in os.supports_dir_fd
        and hasattr(os, "O_NOFOLLOW")
    )


class Scratch:
    """A private temporary folder; paths in it are sequences of names below it."""

    def __init__(self, prefix: str = "gpulint-") -> None:
        self.path = tempfile.mkdtemp(prefix=prefix)
        self._fd: int | None = os.open(self.path, _DIR)

    def join(self, parts: Sequence[str]) -> str:
        """The path of ``parts`` below the folder (for a program to read)."""
        return os.path.join(self.path, *parts)

    def _folder(self, parts: Sequence[str], make: bool) -> int:
        """A new handle of the folder ``parts``, each name opened without following a
        link, the missing ones made (``make``)."""
        if self._fd is None:
            raise OSError("the temporary folder is gone")
        fd = os.dup(self._fd)
        try:
            for name in parts:
                _name_ok(name)
                if make:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o700, dir_fd=fd)
                inner = os.open(name, _DIR, dir_fd=fd)
                os.close(fd)
                fd = inner
        except BaseException:
            os.close(fd)
            raise
        return fd

    def mkdir(self, parts: Sequence[str]) -> None:
        """Make the folder ``parts`` (and those above it)."""
        os.close(self._folder(parts, True))

    def write(self, parts: Sequence[str], data: bytes) -> None:
        """``data`` as the file ``parts``, a new file (what was at that name, a file or a
        link, is removed first, never followed); the folders above it are made."""
        fd = self._folder(parts[:-1], True)
        try:
            name = parts[-1]
            _name_ok(name)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=fd)
            out = os.open(name, _NEW, 0o600, dir_fd=fd)
            with open(out, "wb") as fh:
                fh.write(data)
        finally:
            os.close(fd)

    def link(self, parts: Sequence[str], target: str) -> None:
        """A symbolic link ``parts`` to ``target`` (what was at that name is removed)."""
        fd = self._folder(parts[:-1], True)
        try:
            name = parts[-1]
            _name_ok(name)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(name, dir_fd=fd)
            os.symlink(target, name, dir_fd=fd)
        finally:
            os.close(fd)

    def unlink(self, parts: Sequence[str]) -> None:
        """Remove the file or link ``parts``, if there is one."""
        fd = self._folder(parts[:-1], False)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(parts[-1], dir_fd=fd)
        finally:
            os.close(fd)

    def close(self) -> None:
        """Remove the folder and all it holds (once; errors are ignored)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            _empty(fd)
        with contextlib.suppress(OSError):
            os.rmdir(self.path)

    def __enter__(self) -> Scratch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _name_ok(name: str) -> None:
    if not name or name in (os.curdir, os.pardir) or os.sep in name:
        raise OSError(f"not a name in a folder: {name!r}")


def _empty(fd: int) -> None:
    """Remove everything in the folder open as ``fd`` (the handle is closed), one folder
    open at a time and without recursion: a stack of the names left in each folder from it
    down, climbing back through ``..`` (a folder only gpulint writes in)."""
    left: list[list[str]] = [os.listdir(fd)]
    down: list[str] = []
    try:
        while left:
            names = left[-1]
            if names:
                name = names.pop()
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                if stat.S_ISDIR(mode):
                    inner = os.open(name, _DIR, dir_fd=fd)
                    os.close(fd)
                    fd = inner
                    down.append(name)
                    left.append(os.listdir(fd))
                else:
                    os.unlink(name, dir_fd=fd)
                continue
            left.pop()
            if down:
                parent = os.open(os.pardir, _DIR, dir_fd=fd)
                os.close(fd)
                fd = parent
                os.rmdir(down.pop(), dir_fd=fd)
    finally:
        os.close(fd)
