"""The configuration file: where it is, whether to trust it, and reading it.

Where it is (ruff's rules): the first of ``.gpulint.yaml``, ``.gpulint.yml`` or a
``pyproject.toml`` with a ``[tool.gpulint]`` table, looking in the working directory and then
each folder above it, up to and including the repository root (the folder holding ``.git``).
The search starts from each linted file's folder (:mod:`gpulint.commands.nearest`: the
closest file applies to it, as ruff's does) and from the working directory for the run's
own configuration. ``--config PATH`` names the file instead; ``--isolated`` ignores every
file. Paths in the file
(``exclude``, ``per-file-ignores``, ``rule-dirs``) are relative to the file's folder.

A file is a :class:`ConfigFile`: its data and the line of each key, for messages. Any problem
reading it is a :class:`ConfigError` whose lines name the file and the line. What the file
says is checked by :mod:`gpulint.config.validate` and turned into settings by
:mod:`gpulint.config.resolve`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path as FsPath
from typing import Any

from gpulint.errors import GpulintError
from gpulint.model import Path

CONFIG_NAMES = (".gpulint.yaml", ".gpulint.yml")

PYPROJECT = "pyproject.toml"
#: The single key that sets the ``taints`` option of every rule that has one.
GPU_TAINTS = "gpu-taints"


class ConfigError(GpulintError):
    """A configuration problem: each line of the message is one ``file:line: key: why``."""


class ConfigFile:
    """A parsed configuration file: its ``gpulint`` data and where each key is written."""

    __slots__ = ("data", "line_of", "path", "prefix")

    def __init__(
        self, path: FsPath, data: dict[str, Any], line_of: Callable[[Path], int], prefix: str = ""
    ) -> None:
        self.path = path
        self.data = data
        self.line_of = line_of
        #: The prefix of every key's path in the file (``tool.gpulint`` for pyproject.toml).
        self.prefix = prefix

    @property
    def folder(self) -> FsPath:
        return self.path.parent

    @property
    def shown(self) -> str:
        return display_path(self.path)

    def where(self, path: Path) -> str:
        return f"{self.shown}:{self.line_of(path)}"

    def error(self, path: Path, message: str) -> str:
        from gpulint.loader.schemacheck import dotted

        key = dotted(path)
        return f"{self.where(path)}: {key}: {message}" if key else f"{self.where(path)}: {message}"


def display_path(path: FsPath) -> str:
    """Relative to the working directory when inside it."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel


# -- finding and reading ----------------------------------------------------------------------
def _pyproject_has_table(path: FsPath) -> bool:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return "tool.gpulint" in text or re.search(r"^\s*\[\s*tool\s*\]", text, re.M) is not None


def warn(message: str) -> None:
    """A one-line warning on stderr; the run goes on. It names paths and values from the
    linted tree (a folder, a ``plugins`` entry), so it is escaped as every message is."""
    from gpulint.util.textsafe import escape

    sys.stderr.write(f"gpulint: warning: {escape(message)}\n")


def _owner_problem(path: FsPath) -> str | None:
    """Why a discovered file must not be used (owned by another user), or None.

    The file's owner must be the user running gpulint (``st_uid == os.getuid()``, root
    included: root does not trust a file another user owns either), as git's
    ``safe.directory`` asks of repositories.
    """
    getuid = getattr(os, "getuid", None)
    if getuid is None:  # Windows: no owner ids to compare
        return None
    try:
        owner = path.stat().st_uid
    except OSError:
        return None
    me = getuid()
    if owner == me:
        return None
    return f"ignoring {display_path(path)}: owned by another user (uid {owner}, not {me})"


def _link_problem(path: FsPath) -> str | None:
    """Why a discovered file must not be used (a symbolic link out of its repository: the
    nearest folder at or above it holding ``.git``, else its own folder), or None.

    A pull request can commit ``.gpulint.yaml -> /home/runner/.config/some.yaml``: read, the
    errors about its keys and values would print the other file's content.
    """
    if not path.is_symlink():
        return None
    if path.resolve().is_relative_to(_repository(path.parent)):
        return None
    return f"ignoring {display_path(path)}: a symbolic link to a file outside the repository"


def _shared(folder: FsPath) -> bool:
    """A folder anyone may write in (``/tmp``): a configuration there could be anyone's."""
    import stat

    if os.name == "nt":  # no POSIX permission bits: every folder reads as 0o777
        return False
    try:
        return bool(folder.stat().st_mode & stat.S_IWOTH)
    except OSError:
        return False


def _home() -> FsPath | None:
    home = os.path.expanduser("~")
    if home == "~":
        return None
    try:
        return FsPath(home).resolve()
    except OSError:
        return None


#: The skipped files already warned about: the run's search and each file's own
#: (gpulint.commands.nearest) pass the same folders, and a warning is said once.
_warned: set[str] = set()


def forget_warnings() -> None:
    """Warn again about skipped files (the language server, after reading every
    configuration again)."""
    _warned.clear()


def find_config(start: FsPath) -> FsPath | None:
    """The configuration file that applies in ``start``, or None.

    The search climbs from ``start`` and stops after the repository root (a folder holding
    ``.git``) or the user's home folder, and before a folder anyone may write in (a shared
    ``/tmp``): a ``.gpulint.yaml`` planted above a checkout never applies to it. A file owned
    by another user, or a symbolic link out of the repository, is skipped with a warning.
    """
    folder = start.resolve()
    home = _home()
    for candidate in (folder, *folder.parents):
        if _shared(candidate):
            return None
        names = [candidate / name for name in CONFIG_NAMES]
        pyproject = candidate / PYPROJECT
        for path in [*names, pyproject]:
            if not path.is_file() or (path is pyproject and not _pyproject_has_table(path)):
                continue
            problem = _owner_problem(path) or _link_problem(path)
            if problem is not None:
                if problem not in _warned:
                    _warned.add(problem)
                    warn(problem)
                continue
            if path is pyproject:
                data = _read_toml(path)
                if not (isinstance(data.get("tool"), dict) and "gpulint" in data["tool"]):
                    continue
            return path
        if (candidate / ".git").exists() or candidate == home:
            return None
    return None


def _read_toml(path: FsPath) -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: the same parser, before it joined the standard library
        import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]

    try:
        with path.open("rb") as fh:
            data: dict[str, Any] = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{display_path(path)}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{display_path(path)}: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise ConfigError(f"{display_path(path)}: invalid TOML: nested too deeply") from None
    return data


#: A key as a TOML line writes it: after the line's start, a space, ``{``, ``,``, ``.`` or
#: ``[``, and before ``=``, ``]`` or ``.`` (bare, basic-quoted or literal-quoted). A pattern,
#: compiled on first use (docs/architecture.md): only a pyproject.toml with a mistake needs it.
_TOML_KEY = (
    r"""(?:^|(?<=[\s{,.\[]))(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))\s*(?=[=\].])"""
)


def _toml_line_finder(text: str) -> Callable[[Path], int]:
    """The line of a key under ``[tool.gpulint]``, by a simple search (tomllib keeps none).

    Every line is read once for the keys written on it (bare, ``"quoted"`` or ``'literal'``,
    before ``=``, ``]`` or ``.``); a key's line is then a binary search. Searching the file
    again for each key made a ``[tool.gpulint]`` with thousands of unknown keys, each an
    error that needs its line, take minutes.
    """
    import bisect

    lines = text.splitlines()
    base = next((i for i, line in enumerate(lines) if "tool.gpulint" in line), 0)
    rows: dict[str, list[int]] = {}
    for i, line in enumerate(lines):
        for match in re.finditer(_TOML_KEY, line):
            key = next(g for g in match.groups() if g is not None)
            found_in = rows.setdefault(key, [])
            if not found_in or found_in[-1] != i:
                found_in.append(i)

    def line_of(path: Path) -> int:
        start = found = base
        for part in path:
            if isinstance(part, int):
                continue
            where = rows.get(str(part), [])
            j = bisect.bisect_left(where, start)
            if j < len(where):
                start = found = where[j]
        return found + 1

    return line_of


def read_config(path: FsPath) -> ConfigFile:
    """Parse a configuration file (YAML, or a pyproject.toml with ``[tool.gpulint]``)."""
    shown = display_path(path)
    if path.is_dir():
        inside = [n for n in (*CONFIG_NAMES, PYPROJECT) if (path / n).is_file()]
        hint = f" (did you mean {display_path(path / inside[0])}?)" if inside else ""
        raise ConfigError(
            f"{shown}: is a directory; --config takes a configuration file (.gpulint.yaml, "
            f".gpulint.yml or pyproject.toml){hint}"
        )
    if not path.is_file():
        if path.exists():
            raise ConfigError(
                f"{shown}: not a regular file (a device, a FIFO or a socket); --config takes a "
                "configuration file (.gpulint.yaml, .gpulint.yml or pyproject.toml); "
                "--isolated ignores every configuration"
            )
        raise ConfigError(f"{shown}: no such configuration file")
    if path.suffix == ".toml":
        data = _read_toml(path)
        tool = data.get("tool", {})
        if path.name == PYPROJECT or "tool" in data:
            if not isinstance(tool, dict) or "gpulint" not in tool:
                raise ConfigError(f"{shown}: has no [tool.gpulint] table")
            data = tool["gpulint"]
        text = path.read_text(encoding="utf-8")
        if not isinstance(data, dict):
            raise ConfigError(f"{shown}:1: tool.gpulint must be a table")
        return ConfigFile(path, data, _toml_line_finder(text), "tool.gpulint")
    return _read_yaml(path, shown)


def _read_yaml(path: FsPath, shown: str) -> ConfigFile:
    from gpulint.loader.ownfiles import SourceError, load_one_document

    try:
        doc = load_one_document(path)
    except SourceError as exc:
        raise ConfigError(
            "\n".join(
                f"{shown}:{line}: {message}" if line else f"{shown}: {message}"
                for line, message in exc.problems
            )
        ) from None
    if doc is None:
        return ConfigFile(path, {}, lambda p: 1)
    if not isinstance(doc.data, dict):
        raise ConfigError(f"{shown}:{doc.start.line}: the configuration must be a mapping")
    return ConfigFile(path, doc.data, lambda p: doc.key_span(p).line)


def load_config(
    explicit: str | None = None, isolated: bool = False, cwd: FsPath | None = None
) -> ConfigFile | None:
    """The configuration for this run: ``--config``, else the discovered file, else None."""
    forget_warnings()  # a new run (a program may start several in one process)
    if explicit is not None:
        return read_config(FsPath(explicit))
    if isolated:
        return None
    found = find_config(cwd or FsPath.cwd())
    return read_config(found) if found is not None else None


def project_root(config: ConfigFile) -> FsPath:
    """The repository a configuration file belongs to: the nearest folder at or above the
    file's holding ``.git``, else the file's own folder. Its ``rule-dirs`` must be inside."""
    return _repository(config.folder)


def _repository(folder: FsPath) -> FsPath:
    """The nearest folder at or above ``folder`` (resolved) holding ``.git``, else ``folder``."""
    folder = folder.resolve()
    return next((p for p in (folder, *folder.parents) if (p / ".git").exists()), folder)
