"""A packaged chart (``.tgz``) opened with every header bounded before it is read.

``tarfile`` reads a PAX extended header (``x``, ``g``) or a GNU long name or link (``L``,
``K``) whole, as one ``read`` of the size its 512-byte header declares, before any bound of
the caller's applies: a 1 MiB archive of zeros declaring a 1 GiB PAX header cost a gigabyte
of memory. :func:`open_chart` reads each raw header first (``tarfile``'s own ``frombuf``,
through the ``tarinfo=`` class it is given) and refuses the archive (:class:`Refused`, with
a sentence saying why) when such a header declares more than ``MAX_SPECIAL_BYTES`` -- Go's
``archive/tar`` limit, so helm cannot load such an archive either -- or when it holds an
old GNU sparse member (its map continues over blocks ``tarfile`` reads without a bound; helm
never packages one). Only gzip is read (helm's ``LoadArchive`` reads nothing else), and the
stream ``tarfile`` reads ends after ``max_bytes`` unpacked bytes, whatever its headers say.
"""

from __future__ import annotations

import gzip
import tarfile
from typing import IO, Any, cast

#: Go's ``archive/tar`` ``maxSpecialFileSize``: a PAX header or GNU long name beyond it is
#: ``ErrFieldTooLong`` to helm.
MAX_SPECIAL_BYTES = 1 << 20
_SPECIAL = {
    tarfile.XHDTYPE: "a PAX extended header",
    tarfile.XGLTYPE: "a PAX global header",
    tarfile.SOLARIS_XHDTYPE: "a Solaris extended header",
    tarfile.GNUTYPE_LONGNAME: "a GNU long name",
    tarfile.GNUTYPE_LONGLINK: "a GNU long link name",
}


class Refused(Exception):
    """An archive not read: ``str(exc)`` says why, as a phrase after its name."""


class _Bounded(tarfile.TarInfo):
    """A member whose raw header is checked before ``tarfile`` reads what follows it."""

    @classmethod
    def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> _Bounded:
        info = super().frombuf(buf, encoding, errors)
        what = _SPECIAL.get(info.type)
        if what is not None and info.size > MAX_SPECIAL_BYTES:
            raise Refused(
                f"declares {what} of {info.size:,} bytes, more than the "
                f"{MAX_SPECIAL_BYTES:,} helm reads, so it is not read"
            )
        if info.type == tarfile.GNUTYPE_SPARSE:
            raise Refused("holds a GNU sparse file, which no packaged chart holds; not read")
        return info


class _Capped:
    """The unpacked stream, ending after ``limit`` bytes (a seek past it lands at it)."""

    def __init__(self, raw: gzip.GzipFile, limit: int) -> None:
        self._raw = raw
        self._limit = limit
        self._at = 0

    def read(self, size: int = -1) -> bytes:
        left = self._limit - self._at
        if left <= 0:
            return b""
        data = self._raw.read(left if size is None or size < 0 else min(size, left))
        self._at += len(data)
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        target = {0: offset, 1: self._at + offset}.get(whence)
        if target is None or target < 0:
            raise OSError("only seeks from the start or the current place")
        target = min(target, self._limit)
        self._at = self._raw.seek(target)
        return self._at

    def tell(self) -> int:
        return self._at


def open_chart(fh: IO[bytes], max_bytes: int) -> tarfile.TarFile:
    """The gzip-compressed tar archive ``fh`` as a ``TarFile`` whose headers are bounded
    (:class:`Refused` while iterating: a header that declares too much), reading at most
    ``max_bytes`` unpacked bytes. Not gzip: ``tarfile.ReadError``."""
    if fh.read(2) != b"\x1f\x8b":
        raise tarfile.ReadError("not a gzip-compressed archive")
    fh.seek(0)
    unpacked = _Capped(gzip.GzipFile(fileobj=fh, mode="rb"), max_bytes)
    return tarfile.TarFile(fileobj=cast(Any, unpacked), mode="r", tarinfo=_Bounded)
