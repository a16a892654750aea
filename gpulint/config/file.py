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
from gpulint.util.walk import Listings

CONFIG_NAMES = (".gpulint.yaml", ".gpulint.yml")

PYPROJECT = "pyproject.toml"
#: The largest configuration file read, YAML or TOML (a pyproject.toml larger than this
#: that holds no ``[tool.gpulint]`` is not a configuration file, and is left alone).
MAX_CONFIG_BYTES = 1 << 20
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
#: The lines that may start gpulint's table or set one of its keys, in a pyproject.toml too
#: large to parse: a table header (``[tool.gpulint]``, ``[tool]``, any other), a dotted key
#: ``tool.gpulint.x =`` (at the top, before any header), a ``gpulint`` key (under ``[tool]``).
_HEADER = re.compile(
    rb"""\s*\[\s*\[?\s*(?P<tool>tool\s*\])?(?P<ours>tool\s*\.\s*["']?gpulint["']?\s*[\].])?"""
)
_TOP_KEY = re.compile(rb"""\s*tool\s*\.\s*["']?gpulint["']?\s*[.=]""")
_TOOL_KEY = re.compile(rb"""\s*["']?gpulint["']?\s*[.=]""")


class _Toml:
    """A TOML configuration file as read once per run (:func:`_toml`): its text (None when
    larger than :data:`MAX_CONFIG_BYTES`), whether it may hold ``[tool.gpulint]``, and,
    parsed on first use, its data and the line of each key."""

    __slots__ = ("_data", "_error", "_lines", "hinted", "path", "text")

    def __init__(self, path: FsPath) -> None:
        from gpulint.loader.ownfiles import read_regular

        self.path = path
        self._data: dict[str, Any] | None = None
        self._error: str | None = None
        self._lines: Callable[[Path], int] | None = None
        self.text: str | None = None
        try:
            raw = read_regular(path, MAX_CONFIG_BYTES)
        except OSError as exc:
            self._error = f"{display_path(path)}: cannot read: {exc.strerror or exc}"
            self.hinted = False
            return
        if len(raw) > MAX_CONFIG_BYTES:
            self._error = (
                f"{display_path(path)}: larger than {MAX_CONFIG_BYTES >> 20} MiB, the most a "
                "configuration file may be: not read (write gpulint's configuration in a "
                ".gpulint.yaml)"
            )
            self.hinted = _table_line(path)
            return
        try:
            self.text = raw.decode("utf-8")
        except UnicodeDecodeError:
            self.hinted = False
            self._error = f"{display_path(path)}: invalid TOML: not UTF-8"
            return
        text = self.text
        self.hinted = (
            "tool.gpulint" in text or re.search(r"^\s*\[\s*tool\s*\]", text, re.M) is not None
        )

    def data(self) -> dict[str, Any]:
        """The file's data (parsed once); ConfigError when it cannot be."""
        if self._data is None and self._error is None:
            try:
                self._data = _parse_toml(self.text or "")
            except ConfigError as exc:
                self._error = str(exc).replace("<file>", display_path(self.path), 1)
        if self._error is not None:
            raise ConfigError(self._error)
        assert self._data is not None
        return self._data

    def line_of(self) -> Callable[[Path], int]:
        if self._lines is None:
            self._lines = _toml_line_finder(self.text or "")
        return self._lines


def _table_line(path: FsPath) -> bool:
    """Whether a line of the (large) file may start gpulint's table (:data:`_HEADER`), read
    a piece at a time, never the whole file at once. Lines inside multi-line strings are
    read as lines too: at worst a file is taken for a configuration, and refused as too large.
    """
    table = "top"  # the table the line is in: "top", "tool", or "other"
    try:
        with path.open("rb") as fh:
            at_start = True
            while piece := fh.readline(1 << 16):
                if at_start:
                    header = _HEADER.match(piece) if piece.lstrip().startswith(b"[") else None
                    if header is not None:
                        if header["ours"]:
                            return True
                        table = "tool" if header["tool"] else "other"
                    elif (table == "top" and _TOP_KEY.match(piece)) or (
                        table == "tool" and _TOOL_KEY.match(piece)
                    ):
                        return True
                at_start = piece.endswith(b"\n")
    except OSError:
        return False
    return False


#: What a run has read of each configuration file, by path, real path and stat: every file is
#: read and parsed once per run, however many folders look at it (:func:`forget_warnings`
#: starts a new run).
_read: dict[tuple[Any, ...], Any] = {}


def _once(kind: str, path: FsPath, read: Callable[[FsPath], Any]) -> Any:
    """``read(path)``, or what it gave (or raised: a ConfigError) earlier in this run."""
    try:
        real = os.path.realpath(path)
        st = os.stat(real)
    except OSError:
        return read(path)
    key = (kind, str(path), real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _read:
        try:
            _read[key] = (read(path), None)
        except ConfigError as exc:
            _read[key] = (None, str(exc))
    value, error = _read[key]
    if error is not None:
        raise ConfigError(error)
    return value


def _toml(path: FsPath) -> _Toml:
    """The TOML file, read once per run."""
    value: _Toml = _once("toml", path, _Toml)
    return value


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


def _shared(folder: str, listings: Listings | None) -> bool:
    """A folder anyone may write in (``/tmp``): a configuration there could be anyone's."""
    import stat

    if os.name == "nt":  # no POSIX permission bits: every folder reads as 0o777
        return False
    mode = listings.mode_of(folder) if listings is not None else None  # as the run listed it
    if mode is None:
        try:
            mode = os.stat(folder).st_mode
        except OSError:
            return False
    return bool(mode & stat.S_IWOTH)


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
    """A new run: read every configuration file again, and warn again about skipped files
    (the language server, after reading every configuration again)."""
    _warned.clear()
    _read.clear()


def find_config(start: FsPath, listings: Listings | None = None) -> FsPath | None:
    """The configuration file that applies in ``start``, or None.

    The search climbs from ``start`` and stops after the repository root (a folder holding
    ``.git``) or the user's home folder, and before a folder anyone may write in (a shared
    ``/tmp``): a ``.gpulint.yaml`` planted above a checkout never applies to it. A file owned
    by another user, or a symbolic link out of the repository, is skipped with a warning.

    ``listings``: the folders the run has listed (:class:`gpulint.util.walk.Listings`). A climb
    out of a folder n levels deep asks about five names at each of n levels, each a lookup n
    levels deep: a folder the run listed answers "not there" (and its mode) at no cost.
    """
    known = listings if listings is not None else Listings(0)  # an empty one: ask the system
    folder = known.real(str(start.absolute())) or str(start.resolve())
    home = _home()
    candidate = folder
    while True:
        if _shared(candidate, known):
            return None
        for name in (*CONFIG_NAMES, PYPROJECT):
            if known.lacks(candidate, name):
                continue
            path = FsPath(candidate, name)
            if not path.is_file() or (name == PYPROJECT and not _toml(path).hinted):
                continue
            problem = _owner_problem(path) or _link_problem(path)
            if problem is not None:
                if problem not in _warned:
                    _warned.add(problem)
                    warn(problem)
                continue
            if name == PYPROJECT:
                data = _toml(path).data()
                if not (isinstance(data.get("tool"), dict) and "gpulint" in data["tool"]):
                    continue
            return path
        if not known.lacks(candidate, ".git") and FsPath(candidate, ".git").exists():
            return None
        if home is not None and candidate == str(home):
            return None
        parent = os.path.dirname(candidate)
        if parent == candidate:
            return None
        candidate = parent


def _parse_toml(text: str) -> dict[str, Any]:
    """The data of a TOML text; ConfigError naming ``<file>`` when it is not TOML."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: the same parser, before it joined the standard library
        import tomli as tomllib  # type: ignore[import-not-found,no-redef,unused-ignore]

    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"<file>: invalid TOML: {exc}") from None
    except RecursionError:  # tomllib parses nested arrays and tables recursively
        raise ConfigError("<file>: invalid TOML: nested too deeply") from None
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
        toml = _toml(path)
        data = toml.data()
        tool = data.get("tool", {})
        if path.name == PYPROJECT or "tool" in data:
            if not isinstance(tool, dict) or "gpulint" not in tool:
                raise ConfigError(f"{shown}: has no [tool.gpulint] table")
            data = tool["gpulint"]
        if not isinstance(data, dict):
            raise ConfigError(f"{shown}:1: tool.gpulint must be a table")
        return ConfigFile(path, data, toml.line_of(), "tool.gpulint")
    return _read_yaml(path, shown)


def _load_yaml(path: FsPath) -> Any:
    """The YAML file's one document (None: empty); ConfigError when it cannot be read."""
    from gpulint.loader.ownfiles import SourceError, load_one_document

    shown = display_path(path)
    try:
        return load_one_document(path)
    except SourceError as exc:
        raise ConfigError(
            "\n".join(
                f"{shown}:{line}: {message}" if line else f"{shown}: {message}"
                for line, message in exc.problems
            )
        ) from None


def _read_yaml(path: FsPath, shown: str) -> ConfigFile:
    doc = _once("yaml", path, _load_yaml)
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
