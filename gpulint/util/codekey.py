"""What stands for gpulint's own code in the keys of a project's cache (``.gpulint_cache``:
the per-file facts, :func:`gpulint.commands.facts.cache_key`, and the findings,
:func:`gpulint.lint.kept.fingerprint`).

An installed release is its version: the same version is the same code. A source checkout
(the folder above the ``gpulint`` package holds ``pyproject.toml``: an editable install, or the
package on ``PYTHONPATH``) changes without a new version, each time a file is edited or a
branch checked out, and a cache keyed by the version alone would answer with what other
code said. There the key is also a hash of every source and data file of the packages
(``gpulint``, its rules and schemas): each one's path, size and modification time, read with
one ``stat`` a file (about 280 files, 1 to 5 ms), once per process.
"""

from __future__ import annotations

import functools
import os

#: The packages whose files are gpulint's code and data (the rules and schemas are
#: ``rules/`` and ``schemas/`` in a checkout).
PACKAGES = ("gpulint", "gpulint.rules", "gpulint.schemas")
#: The files that count: what is imported or read at run time.
SUFFIXES = (".py", ".json")


def is_checkout() -> bool:
    """Whether gpulint runs from a source checkout (not an installed release)."""
    import gpulint

    top = os.path.dirname(os.path.dirname(os.path.abspath(gpulint.__file__)))
    return os.path.isfile(os.path.join(top, "pyproject.toml"))


@functools.cache
def code_key() -> str:
    """``version`` for an installed release; ``version+<hash of the files>`` in a source
    checkout (:func:`is_checkout`). Computed once per process."""
    from gpulint import __version__

    if not is_checkout():
        return __version__
    import hashlib
    import importlib.util

    made = hashlib.sha256()
    for name in PACKAGES:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        for top in (spec.submodule_search_locations or ()) if spec is not None else ():
            made.update(f"{name}\0{top}\n".encode("utf-8", "surrogateescape"))
            for path, size, mtime in sorted(_files(top)):
                made.update(f"{path}\0{size}\0{mtime}\n".encode("utf-8", "surrogateescape"))
    return f"{__version__}+{made.hexdigest()[:16]}"


def _files(top: str) -> list[tuple[str, int, int]]:
    """Each source or data file under ``top`` (no ``__pycache__``, no link followed): its
    path relative to ``top``, size and modification time."""
    out: list[tuple[str, int, int]] = []
    folders = [top]
    while folders:
        folder = folders.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        folders.append(entry.path)
                elif entry.name.endswith(SUFFIXES):
                    st = entry.stat(follow_symlinks=False)
                    out.append((os.path.relpath(entry.path, top), st.st_size, st.st_mtime_ns))
            except OSError:
                continue
    return out
