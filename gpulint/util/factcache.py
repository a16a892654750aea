"""What each file of a project said about the cluster, kept between runs in the project's
``.gpulint_cache/`` folder, as ruff keeps ``.ruff_cache``.

A project's facts are read from every one of its files (:mod:`gpulint.commands.projects`), so a
pre-commit run on one staged file would parse the whole repository. The per-file facts the
cluster picture needs (the tolerations of each GPU pod, the node agents' tolerations) are
kept by the SHA-256 of the file's bytes, and each file's size and modification time by its
path: a warm run does not read a file that did not change (unless another fact needs its
bytes) and parses only the files that changed. A record is the file's own, never its name
or place in the tree (its label is applied when it is read back).

Two files: ``facts-N.json`` holds each file's size, modification time and digest, and the
project's facts as built (:meth:`FactCache.built`: the device plugins' names and the cluster
picture before its node pools, under a fingerprint of every file that can say something of
the cluster); ``records-N.json`` the per-file records, read only when the facts must be
built again (a file that says something changed), so that a warm run on an unchanged project
reads one small file and parses no record.

The cache is data, never code: one JSON file, read with a size cap, every entry checked
before it is used, signed with an HMAC whose key is this user's, kept in gpulint's own cache
folder outside every tree (:func:`user_secret`), so that a cache committed by a pull request
cannot forge facts; a file that is not what gpulint wrote (truncated, edited, hostile,
another machine's) is ignored with a warning on stderr and written again. It is kept only
in a real folder of the project (``.gpulint_cache`` may not be a link, nor its files), created
with a ``.gitignore`` of ``*`` so that it is never committed. Its key holds gpulint's code
(the version; in a source checkout its files too: :mod:`gpulint.util.codekey`), the format
and what decides the facts (the device registry's names, the workload table): a run with
another of them starts empty. ``--no-cache`` or ``cache: false`` in the configuration keep none.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpulint.util.shards import Shards

#: The cache folder's name, in the project's root folder.
FOLDER = ".gpulint_cache"
#: The facts file in it; the number changes with the format of its entries.
FORMAT = 4
_NAME = f"facts-{FORMAT}.json"
#: The per-file records, read on the first :meth:`FactCache.get` or :meth:`FactCache.put`.
_RECORDS = f"records-{FORMAT}.json"
#: A cache file larger than this is not read (a project's facts are far smaller).
_MAX_BYTES = 64 << 20


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


class FactCache:
    """The per-file facts of one project: :meth:`get` and :meth:`put` by content digest,
    :meth:`save` at the end (only the entries this run used are kept)."""

    __slots__ = (
        "_built",
        "_built_changed",
        "_changed",
        "_entries",
        "_folder",
        "_key",
        "_paths",
        "_paths_changed",
        "_records",
        "_secret",
        "_seen",
        "_shards",
        "_stored",
        "_used",
        "_warned",
        "root",
        "shown",
    )  # fmt: skip

    def __init__(self, root: str, key: str, secret: bytes) -> None:
        self.root = root
        self._folder = os.path.join(root, FOLDER)
        #: A file's path in the project -> ``[size, mtime_ns, digest, *flags]``: a file that
        #: did not change since is not read again (:meth:`unchanged`).
        self._paths: dict[str, Any] = {}
        self._seen: dict[str, Any] = {}
        #: What the cache file held: its key and its entries.
        self._stored: tuple[str, dict[str, Any]] = ("", {})
        self._key = key
        #: This user's key (kept outside the tree): a cache file carries its HMAC, so that a
        #: cache a pull request commits cannot pass for one this machine wrote.
        self._secret = secret
        self._entries: dict[str, Any] = {}
        self._used: dict[str, Any] = {}
        #: The records file was read (or found wanting): :meth:`save` writes it when changed.
        self._records = False
        self._changed = False
        self._paths_changed = False
        #: The project's facts as built: ``[fingerprint, data]`` (:meth:`built`).
        self._built: list[Any] | None = None
        self._built_changed = False
        self._warned: set[str] = set()  # each said once
        #: How messages name the cache file.
        self.shown = os.path.join(os.path.relpath(self._folder), _NAME)
        self._shards: Shards | None = None
        self._load()

    def _warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            from gpulint.util.textsafe import escape_line

            sys.stderr.write(f"gpulint: warning: {escape_line(message)}\n")

    def _read(self, name: str) -> dict[str, Any] | None:
        """The signed data of the cache file ``name``: None when there is none, it cannot be
        read or it is another key's (quietly); a file that is not what gpulint wrote is said
        once and written again."""
        path = os.path.join(self._folder, name)
        try:
            if not _real_folder(self._folder):
                return None
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | _CLOEXEC)
        except OSError:
            return None  # no cache yet, or one that cannot be read: a cold run
        try:
            with os.fdopen(fd, "rb") as fh:
                raw = fh.read(_MAX_BYTES + 1)
            outer = json.loads(raw) if len(raw) <= _MAX_BYTES else None
            body = outer.get("data") if isinstance(outer, dict) else None
            mac = outer.get("mac") if isinstance(outer, dict) else None
            if isinstance(body, str) and isinstance(mac, str) and not self._signed(body, mac):
                # Signed with another key (another user's or machine's, or committed to the
                # tree): not ours to trust, and nothing wrong with it: read afresh, quietly.
                return None
            data = json.loads(body) if isinstance(body, str) and isinstance(mac, str) else None
        except (OSError, ValueError, RecursionError):
            data = None
        if not (isinstance(data, dict) and isinstance(data.get("key"), str)):
            self._warn(f"{self.shown}: not a cache gpulint wrote; ignored, and written again")
            return {}
        return data

    def _load(self) -> None:
        data = self._read(_NAME)
        if data is None:
            return
        paths, built = data.get("paths"), data.get("built")
        if not isinstance(paths, dict) or not (built is None or isinstance(built, list)):
            if data:
                self._warn(f"{self.shown}: not a cache gpulint wrote; ignored, and written again")
            self._paths_changed = True
            return
        # Which files are unchanged holds whatever the key; what they say, for its key only.
        self._paths = paths
        if data["key"] == self._key and isinstance(built, list) and len(built) == 2:
            self._built = built

    def _load_records(self) -> None:
        """The per-file records, read on the first question about them."""
        if self._records:
            return
        self._records = True
        data = self._read(_RECORDS)
        if data is None:
            return
        files = data.get("files")
        if not isinstance(files, dict):
            if data:
                self._warn(f"{self.shown}: not a cache gpulint wrote; ignored, and written again")
            self._changed = True
            return
        self._stored = (data["key"], files)
        self.rekey(self._key)

    def built(self, fingerprint: str) -> Any:
        """The project's facts as built by a run before whose files said the same
        (``fingerprint``), or None."""
        built = self._built
        return built[1] if built is not None and built[0] == fingerprint else None

    def keep_built(self, fingerprint: str, data: Any) -> None:
        """Keep the project's facts as built from files that say ``fingerprint``."""
        if self._built != [fingerprint, data]:
            self._built = [fingerprint, data]
            self._built_changed = True

    def _mac(self, body: str) -> str:
        import hmac

        return hmac.new(self._secret, body.encode(), hashlib.sha256).hexdigest()

    def _signed(self, body: str, mac: str) -> bool:
        import hmac

        return hmac.compare_digest(self._mac(body), mac)

    def rekey(self, key: str) -> None:
        """What decides the entries is ``key`` after all (the project's own device plugins
        were read): the entries kept for another are dropped."""
        self._key = key
        if not self._records:
            self._load_records()
            return
        stored_key, stored = self._stored
        self._entries = stored if stored_key == key else {}  # another version or registry
        self._used = {}
        self._changed = self._changed or stored_key != key

    def get(self, key: str) -> Any:
        """The entry of a file's digest, or None."""
        self._load_records()
        entry = self._entries.get(key)
        if entry is not None:
            self._used[key] = entry
        return entry

    def sharded(self) -> Shards:
        """The entries kept in shards by digest (a file's findings: gpulint.lint.kept), read
        shard by shard as they are asked for."""
        if self._shards is None:
            from gpulint.util.shards import Shards

            folder = os.path.join(self._folder, f"findings-{FORMAT}")
            self._shards = Shards(folder, self._key, self._mac, self._warn, _write_new)
        return self._shards

    def bad(self, key: str) -> None:
        """The entry of ``key`` is not one gpulint wrote: dropped, with a warning once."""
        self._warn(f"{self.shown}: an entry is not one gpulint wrote; ignored, and written again")
        self._load_records()
        self._entries.pop(key, None)
        self._used.pop(key, None)
        self._changed = True

    def unchanged(self, path: str, size: int, mtime: int) -> list[Any] | None:
        """The digest and flags kept for the file at ``path`` (relative to the project) when
        its size and modification time are still those it had (None: read it)."""
        row = self._paths.get(path)
        if not (
            isinstance(row, list) and len(row) >= 3 and row[0] == size and row[1] == mtime
        ) or not isinstance(row[2], str):
            return None
        self._seen[path] = row
        return row[2:]

    def saw(self, path: str, size: int, mtime: int, digest: str, *flags: bool) -> None:
        """What was read of the file at ``path``, to skip it next time while it is unchanged."""
        row = [size, mtime, digest, *flags]
        if self._paths.get(path) != row:
            self._paths_changed = True
        self._paths[path] = self._seen[path] = row

    def put(self, key: str, entry: Any) -> None:
        self._load_records()
        self._entries[key] = entry
        self._used[key] = entry
        self._changed = True

    def save(self) -> None:
        """Write the entries this run used (and no other) when something changed; a folder
        that cannot be written, or is a link, keeps no cache (silently: a read-only
        checkout)."""
        self._save()
        if self._shards is not None and _real_folder(self._folder):
            self._shards.save(_real_folder)

    def _save(self) -> None:
        records = self._records and (self._changed or len(self._used) != len(self._entries))
        facts = self._paths_changed or self._built_changed or len(self._seen) != len(self._paths)
        if not (records or facts):
            return
        try:
            if not os.path.lexists(self._folder):
                os.mkdir(self._folder)
                _write_new(os.path.join(self._folder, ".gitignore"), b"# gpulint's cache\n*\n")
            if not _real_folder(self._folder):
                self._warn(f"{self.shown}: its folder is a link or not a folder: no cache kept")
                return
            if records:
                self._write(_RECORDS, {"key": self._key, "files": self._used})
            if facts:
                made = {"key": self._key, "paths": self._seen, "built": self._built}
                self._write(_NAME, made)
        except OSError:
            return

    def _write(self, name: str, made: dict[str, Any]) -> None:
        body = json.dumps(made, separators=(",", ":"))
        data = json.dumps({"mac": self._mac(body), "data": body}, separators=(",", ":"))
        temporary = os.path.join(self._folder, f".{name}.{os.getpid()}.tmp")
        _write_new(temporary, data.encode())
        os.replace(temporary, os.path.join(self._folder, name))


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


def user_secret(folder: str | None) -> bytes | None:
    """This user's key for signing project caches, kept in ``folder`` (gpulint's own cache
    folder, outside every linted tree), made on first use; None when there is no such
    folder or it cannot be written (then no project cache is kept)."""
    if not folder:
        return None
    from gpulint.util.cachefile import read_own, write_atomic

    path = os.path.join(folder, "facts-key.json")
    for _ in range(2):
        raw = read_own(path, 4096)
        try:
            got = json.loads(raw) if raw is not None else None
        except ValueError:
            got = None
        if isinstance(got, dict) and isinstance(got.get("key"), str) and len(got["key"]) == 64:
            return bytes.fromhex(got["key"]) if _hex(got["key"]) else None
        if not write_atomic(folder, path, {"key": os.urandom(32).hex()}, ".facts-key-"):
            return None
    return None


def _hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)
