"""The files in gpulint's cache folder: read only when this user wrote them, written atomically.

Shared by the valid-configuration cache (:mod:`gpulint.config.validate`) and the node inventory
cache (:mod:`gpulint.cluster.inventory`), so both trust and replace their files the same way.
"""

from __future__ import annotations

import json
import os
from typing import Any


def read_own(path: str, limit: int) -> bytes | None:
    """At most ``limit`` bytes of ``path``; None when absent, unreadable, a symlink, or a file
    another user owns or could have written (a cache must not be planted by someone else)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
                return None
            return fh.read(limit)
    except OSError:
        return None


def write_atomic(folder: str, path: str, doc: Any, prefix: str) -> bool:
    """Write ``doc`` as JSON to ``path`` in ``folder`` (made 0700 when absent) through a
    temporary file renamed over it; False, and nothing left behind, on failure."""
    import contextlib
    import tempfile

    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False
    return True
