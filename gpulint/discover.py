"""Which files to lint: the paths given, with directories walked for ``*.yaml``/``*.yml``."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

YAML_SUFFIXES = (".yaml", ".yml")

#: Version-control, dependency and tool folders never walked (ruff's default excludes).
SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", ".jj", ".direnv", ".eggs", ".mypy_cache", ".nox",
        ".pytest_cache", ".ruff_cache", ".tox", ".venv", "__pycache__", "__pypackages__",
        "_build", "buck-out", "dist", "node_modules", "site-packages", "venv",
    }
)  # fmt: skip

STDIN = "-"


@dataclass(frozen=True, slots=True)
class Target:
    """A file to lint: its display path and the path to open (None for stdin)."""

    label: str
    path: str | None


class MissingPath(Exception):
    """A path on the command line that does not exist."""


#: Is this path excluded by the configuration (``exclude``)?
Excluded = Callable[[str], bool]


def _walk(root: str, excluded: Excluded | None = None) -> Iterator[str]:
    # os.walk does not follow directory symlinks, so symlink loops cannot trap it.
    for dirpath, dirnames, filenames in os.walk(root, onerror=None):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS and not (excluded and excluded(os.path.join(dirpath, d)))
        )
        for name in sorted(filenames):
            if name.endswith(YAML_SUFFIXES):
                path = os.path.join(dirpath, name)
                if not (excluded and excluded(path)):
                    yield path


def targets(
    paths: Iterable[str],
    stdin_label: str = "<stdin>",
    excluded: Excluded | None = None,
    force_exclude: bool = False,
) -> tuple[list[Target], list[str]]:
    """Expand ``paths`` into targets in a deterministic order, and the paths that are missing.

    Files named explicitly are linted whatever their extension; directories contribute
    ``*.yaml`` and ``*.yml`` files. Each file appears once. ``excluded`` prunes what a walk
    finds; with ``force_exclude`` it also drops paths named explicitly (ruff's
    ``force-exclude``, for pre-commit, which names every file).
    """
    forced = excluded if force_exclude else None
    out: list[Target] = []
    missing: list[str] = []
    seen: set[str] = set()
    for path in paths:
        if path == STDIN:
            if not (forced and forced(stdin_label)):
                out.append(Target(stdin_label, None))
            continue
        if forced and forced(path):
            continue
        try:
            mode = os.stat(path).st_mode
        except OSError:
            if os.path.islink(path):  # a dangling symlink is a file we cannot read
                mode = 0
            else:
                missing.append(path)
                continue
        found = _walk(path, excluded) if stat.S_ISDIR(mode) else iter((path,))
        for file in found:
            label = os.path.normpath(file)
            if label not in seen:
                seen.add(label)
                out.append(Target(label, file))
    return out, missing
