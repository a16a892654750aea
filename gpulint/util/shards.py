"""Entries kept in 256 small signed JSON files by the first two hex digits of a digest, so that
a run that needs a few entries reads a few small files, not all of them: the findings a
project's cache keeps (gpulint.util.factcache), one shard per ``xx`` under
``.gpulint_cache/findings-N/``.

Each shard is what :class:`gpulint.util.factcache.FactCache` writes: JSON data under an HMAC
of this user's key, read with a size cap; a shard that is not what gpulint wrote is ignored
with a warning (the caller's) and written again; one signed with another key is ignored
quietly. A shard is rewritten only when this run changed it, keeping the entries under the
prefix the run keeps (the current options' and facts') and dropping the others.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

#: A shard larger than this is not read.
_MAX_BYTES = 16 << 20


class Shards:
    """Entries by key, each in the shard of its digest (:meth:`get`, :meth:`put`,
    :meth:`save`)."""

    __slots__ = ("_changed", "_folder", "_keep", "_key", "_loaded", "_sign", "_warn", "_write")

    def __init__(
        self,
        folder: str,
        key: str,
        sign: Callable[[str], str],
        warn: Callable[[str], None],
        write: Callable[[str, bytes], None],
    ) -> None:
        self._folder = folder
        self._key = key
        self._sign = sign
        self._warn = warn
        self._write = write
        self._loaded: dict[str, dict[str, Any]] = {}
        self._changed: set[str] = set()
        self._keep = ""

    def keep(self, prefix: str) -> None:
        """The entries a rewritten shard keeps: those whose key starts with ``prefix``."""
        self._keep = prefix

    def _shard(self, digest: str) -> dict[str, Any]:
        name = _name(digest)
        got = self._loaded.get(name)
        if got is None:
            got = self._loaded[name] = self._read(name)
        return got

    def _read(self, name: str) -> dict[str, Any]:
        path = os.path.join(self._folder, f"{name}.json")
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC)
        except OSError:
            return {}
        try:
            with os.fdopen(fd, "rb") as fh:
                raw = fh.read(_MAX_BYTES + 1)
            outer = json.loads(raw) if len(raw) <= _MAX_BYTES else None
            body = outer.get("data") if isinstance(outer, dict) else None
            mac = outer.get("mac") if isinstance(outer, dict) else None
            if isinstance(body, str) and isinstance(mac, str) and not _same(self._sign(body), mac):
                return {}  # another user's or machine's: not ours to trust, quietly
            data = json.loads(body) if isinstance(body, str) and isinstance(mac, str) else None
        except (OSError, ValueError, RecursionError):
            data = None
        if not (isinstance(data, dict) and isinstance(data.get("entries"), dict)):
            self._warn(f"{path}: not a cache gpulint wrote; ignored, and written again")
            self._changed.add(name)
            return {}
        if data.get("key") != self._key:
            return {}  # another version's
        entries: dict[str, Any] = data["entries"]
        return entries

    def get(self, digest: str, key: str) -> Any:
        return self._shard(digest).get(key)

    def put(self, digest: str, key: str, entry: Any) -> None:
        shard = self._shard(digest)
        if shard.get(key) != entry:
            shard[key] = entry
            self._changed.add(_name(digest))

    def drop(self, digest: str, key: str) -> None:
        """An entry that is not what gpulint wrote: dropped, with a warning."""
        if self._shard(digest).pop(key, None) is not None:
            name = _name(digest)
            self._warn(
                f"{os.path.join(self._folder, name)}.json: an entry is not one gpulint "
                "wrote; ignored, and written again"
            )
            self._changed.add(name)

    def save(self, real_folder: Callable[[str], bool]) -> None:
        """Write the shards this run changed (a folder that cannot be written keeps none)."""
        if not self._changed:
            return
        try:
            if not os.path.lexists(self._folder):
                os.mkdir(self._folder)
            if not real_folder(self._folder):
                return
            for name in sorted(self._changed):
                shard = self._loaded.get(name, {})
                kept = {k: v for k, v in shard.items() if k.startswith(self._keep)}
                body = json.dumps({"key": self._key, "entries": kept}, separators=(",", ":"))
                data = json.dumps({"mac": self._sign(body), "data": body}, separators=(",", ":"))
                path = os.path.join(self._folder, f"{name}.json")
                temporary = os.path.join(self._folder, f".{name}.{os.getpid()}.tmp")
                self._write(temporary, data.encode())
                os.replace(temporary, path)
        except OSError:
            return


_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _name(digest: str) -> str:
    """The shard of a digest: its first two hex digits."""
    name = digest[:2].lower()
    return name if len(name) == 2 and all(c in "0123456789abcdef" for c in name) else "00"


def _same(a: str, b: str) -> bool:
    import hmac

    return hmac.compare_digest(a, b)
