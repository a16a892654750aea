"""Configuration: find it, validate it, and turn it (plus the command line) into Settings.

Where it is (ruff's rules): the first of ``.gpulint.yaml``, ``.gpulint.yml`` or a
``pyproject.toml`` with a ``[tool.gpulint]`` table, looking in the working directory and then
each folder above it, up to and including the repository root (the folder holding ``.git``).
``--config PATH`` names the file instead; ``--isolated`` ignores every file. Paths in the file
(``exclude``, ``per-file-ignores``, ``rule-dirs``) are relative to the file's folder.

What it says is checked against a JSON Schema generated from the loaded rules
(:func:`config_schema`): the keys are ``schemas/config-base.schema.json`` and each rule's
``OPTIONS`` are the schema of ``rules.<CODE>``, so the options and the schema cannot drift;
``schemas/config.schema.json`` is the whole schema for the built-in rules, for editors, and a
test keeps it current. Any problem is a
:class:`ConfigError` whose lines name the file, the line, the key and the allowed values.

Validating needs jsonschema, which costs more than the rest of a one-file check, so a file
found valid is remembered (:func:`_cached_problems`) in the user's cache folder -- never in
the linted tree, where a pull request could plant a verdict -- and validated again only when
what it says, gpulint or the loaded rules change.

Precedence: built-in defaults < configuration file < command line. ``--select`` replaces the
file's ``select``; ``--extend-select`` and ``--ignore`` add to the file's lists.
"""

from __future__ import annotations

import copy
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

from gpulint.data import schema_path
from gpulint.model import Path, Severity, selects
from gpulint.settings import Settings

if TYPE_CHECKING:
    from gpulint.globs import PathMatcher
    from gpulint.rule import Rule

CONFIG_NAMES = (".gpulint.yaml", ".gpulint.yml")
PYPROJECT = "pyproject.toml"
#: The single key that sets the ``taints`` option of every rule that has one.
GPU_TAINTS = "gpu-taints"
SEVERITIES = tuple(s.label for s in sorted(Severity, reverse=True))
COMMAND_LINE = "command line"
DEFAULT = "default"


class ConfigError(Exception):
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
        from gpulint.schemacheck import dotted

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
    from gpulint.textsafe import escape

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
    folder = path.parent.resolve()
    root = next((p for p in (folder, *folder.parents) if (p / ".git").exists()), folder)
    if path.resolve().is_relative_to(root):
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
#: ``[``, and before ``=``, ``]`` or ``.`` (bare, basic-quoted or literal-quoted).
_TOML_KEY = re.compile(
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
        for match in _TOML_KEY.finditer(line):
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
    if explicit is not None:
        return read_config(FsPath(explicit))
    if isolated:
        return None
    found = find_config(cwd or FsPath.cwd())
    return read_config(found) if found is not None else None


# -- the schema -------------------------------------------------------------------------------
def _load_schema(name: str) -> dict[str, Any]:
    with open(schema_path(name), encoding="utf-8") as fh:
        data: dict[str, Any] = json.load(fh)
    return data


def _import_defs(schema: Mapping[str, Any], root: str, prefix: str) -> dict[str, Any]:
    """``root`` and every definition it refers to, renamed ``prefix + name``."""
    defs = schema["$defs"]
    out: dict[str, Any] = {}
    todo = [root]

    def rename(node: Any) -> Any:
        if isinstance(node, dict):
            result = {}
            for key, value in node.items():
                if key == "$ref" and isinstance(value, str) and value.startswith("#/$defs/"):
                    name, _, rest = value[len("#/$defs/") :].partition("/")
                    todo.append(name)
                    result[key] = f"#/$defs/{prefix}{name}" + (f"/{rest}" if rest else "")
                else:
                    result[key] = rename(value)
            return result
        if isinstance(node, list):
            return [rename(v) for v in node]
        return node

    while todo:
        name = todo.pop()
        if prefix + name not in out:
            out[prefix + name] = rename(copy.deepcopy(defs[name]))
    return out


#: What a rule selector is, in error messages and the schema.
SELECTOR_HELP = "a rule code (GPU001), a prefix of codes (GPU0, GPU) or ALL, in any case"
_SELECTOR = re.compile(r"[A-Z][A-Z0-9]*")


def selector(value: str, known: Sequence[str]) -> tuple[str, str | None]:
    """One rule selector as ``--select``/``--ignore``/``--extend-select`` and the file's
    ``select``, ``ignore``, ``extend-select``, ``per-file-ignores`` and
    ``per-object-ignores[].rules`` all take it: the code in upper case, and what is wrong
    with it (None when nothing is).

    Codes and prefixes are case-insensitive (`gpu0` is `GPU0`), as ruff's are; `ALL` is
    every rule. An empty selector is an error rather than "select nothing": `--select ''`
    is a mistake far more often than a request to run no rule (`--ignore ALL` says that).
    """
    code = value.strip().upper()
    if not code:
        return code, f"an empty selector selects no rule; give {SELECTOR_HELP}"
    if not _SELECTOR.fullmatch(code):
        return code, f"{value!r} is not {SELECTOR_HELP}"
    if code != "ALL" and not any(selects(k, (code,)) for k in known):
        import difflib

        close = difflib.get_close_matches(code, known, n=1, cutoff=0.8)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return code, (
            f"{value!r} matches no rule{hint}; allowed values: {', '.join(known)}, a prefix of "
            "them, or ALL"
        )
    return code, None


def _codes(values: Iterable[str]) -> list[str]:
    """The file's selectors in upper case (already checked by ``selector``)."""
    return [v.strip().upper() for v in values]


def _options_schema(code: str, options: Mapping[str, Any]) -> dict[str, Any]:
    names = ", ".join(sorted(options)) or "none"
    return {
        "type": "object",
        "description": f"Options of {code} (options: {names}).",
        "additionalProperties": False,
        "properties": {k: copy.deepcopy(dict(v)) for k, v in options.items()},
    }


def config_schema(rules: Sequence[Rule]) -> dict[str, Any]:
    """The JSON Schema of a configuration file for these rules (``gpulint.rule.Rule``)."""
    from gpulint.taints import TAINTS_OPTION

    codes = sorted(r.code for r in rules)
    devices = _load_schema("devices.schema.json")
    workloads = _load_schema("workloads.schema.json")
    defs = {
        **_import_defs(devices, "resource", "registry-"),
        **_import_defs(workloads, "workload", "workloads-"),
    }
    # A configuration entry needs only a name: the registry supplies the other defaults.
    device = defs.pop("registry-resource")
    device["required"] = ["name"]
    device["description"] = (
        "An extended resource to add to (or replace in) the device registry; "
        "`family` defaults to 'custom', `hardware` to the family, `unit` to 'devices'."
    )
    defs["device"] = device
    # The static part (every key, its shape and description) is data; what is made from
    # code is added here: the severities, each rule's code and OPTIONS, the taints option.
    schema = _load_schema("config-base.schema.json")
    del schema["$comment"]
    properties = schema["properties"]
    properties["fail-on"] = {"enum": list(SEVERITIES), **properties["fail-on"]}
    # GL900 (a rule raised, gpulint.model.RULE_ERROR_CODE) is always an error.
    properties["severity"]["properties"] = {
        c: {"enum": list(SEVERITIES)} for c in codes if c != "GL900"
    }
    properties["rules"]["properties"] = {
        r.code: _options_schema(r.code, r.options_schema) for r in rules
    }
    taints = {k: v for k, v in TAINTS_OPTION.items() if k != "default"}
    taints.update(properties[GPU_TAINTS])
    properties[GPU_TAINTS] = taints
    schema["$defs"] = dict(sorted(defs.items()))
    return schema


#: Keys read before rules are loaded (they say which rules exist).
LOADING_KEYS = ("plugins", "rule-dirs")


def _problems(
    config: ConfigFile, schema: Mapping[str, Any], data: Any, skip: Sequence[Path] = ()
) -> list[str]:
    """Schema problems of ``data``, leaving out those inside the ``skip`` paths."""
    from gpulint.schemacheck import check

    problems = check(schema, data, config.line_of)
    return [
        config.error(p.path, p.message)
        for p in problems
        if not any(p.path[: len(s)] == s for s in skip)
    ]


#: ``pods[0]: ...``, ``group: ...``, ``pod_defaults.tolerations[1]: ...``: the field a
#: :func:`gpulint.workloads.validate_row` message is about.
_ROW_FIELD = re.compile(r"([A-Za-z_]+)(?:\[(\d+)\])?(?:\.([A-Za-z_]+)(?:\[(\d+)\])?)?: ")


def _workload_row_problems(config: ConfigFile, rows: Any) -> dict[int, list[str]]:
    """``validate_row``'s messages for each bad ``workloads`` row, by row index.

    Its messages say what to write instead (``'spec.tasks[].template.spec': list items are
    written as '.*' ...``) where the JSON Schema can only say "not allowed", and it knows
    what the schema cannot (``pods`` naming a container list): its messages replace the
    schema's for the rows it rejects. Each is at the line of the field it names.
    """
    from gpulint.schemacheck import dotted
    from gpulint.workloads import validate_row

    out: dict[int, list[str]] = {}
    for i, row in enumerate(rows if isinstance(rows, list) else ()):
        for message in validate_row(row):
            base: Path = ("workloads", i)
            field = _ROW_FIELD.match(message)
            if field is None:
                out.setdefault(i, []).append(f"{config.where(base)}: {dotted(base)}: {message}")
                continue
            path: Path = base
            for part in field.groups():
                if part is not None:
                    path = (*path, int(part) if part.isdigit() else part)
            # The line of the field when the row writes it (not for "group: required").
            at = path
            while len(at) > len(base) and not _has(row, at[len(base) :]):
                at = at[:-1]
            out.setdefault(i, []).append(
                f"{config.where(at)}: {dotted(path)}: {message[field.end() :]}"
            )
    return out


def _line_in(error: str, config: ConfigFile) -> int:
    """The line a ``file:line: ...`` message is at, to put messages in file order."""
    head = error[len(config.shown) + 1 :].partition(":")[0]
    return int(head) if error.startswith(config.shown + ":") and head.isdigit() else 0


def _has(data: Any, path: Path) -> bool:
    for part in path:
        in_list = isinstance(part, int) and isinstance(data, list) and 0 <= part < len(data)
        if not (in_list or (isinstance(data, Mapping) and part in data)):
            return False
        data = data[part]
    return True


def project_root(config: ConfigFile) -> FsPath:
    """The repository a configuration file belongs to: the nearest folder at or above the
    file's holding ``.git``, else the file's own folder. Its ``rule-dirs`` must be inside."""
    folder = config.folder.resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


# -- remembering valid files ------------------------------------------------------------------
#: Overrides the cache folder; empty turns the cache off.
CACHE_ENV = "GPULINT_CACHE_DIR"
_CACHE_FILE = "valid-configs.json"
_CACHE_FORMAT = "gpulint valid configurations 1"
_CACHE_SIZE = 64  # digests kept, the most recent first: a few repositories and branches


def cache_dir() -> str | None:
    """``$GPULINT_CACHE_DIR``, else ``$XDG_CACHE_HOME/gpulint``, else ``~/.cache/gpulint``.

    None when ``GPULINT_CACHE_DIR`` is set but empty. A relative ``XDG_CACHE_HOME`` is
    ignored, as the XDG specification says.
    """
    explicit = os.environ.get(CACHE_ENV)
    if explicit is not None:
        return explicit or None
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gpulint")


def _schema_sources() -> list[str]:
    """The files the configuration schema is made from (their stat is in the digest)."""
    here = os.path.dirname(os.path.abspath(__file__))
    names = ("config.py", "schemacheck.py", "taints.py")
    schemas = ("config-base.schema.json", "devices.schema.json", "workloads.schema.json")
    return [os.path.join(here, n) for n in names] + [str(schema_path(n)) for n in schemas]


def _digest(kind: str, data: Any, rules: Sequence[Rule]) -> str:
    """What a verdict on ``data`` depends on, hashed.

    The parsed content is hashed rather than the file's bytes read again: the digest is then
    of exactly what is validated, and a file replaced between parsing and hashing cannot
    borrow another version's verdict. ``repr`` keeps types apart (``1``, ``"1"``, ``True``).
    Also hashed: gpulint's version, the size and time of the files the schema is built from
    (an editable install changes without a new version) and each rule's code, module,
    origin and option schema.
    """
    import hashlib

    from gpulint import __version__

    parts: list[object] = [_CACHE_FORMAT, kind, __version__]
    for source in _schema_sources():
        try:
            st = os.stat(source)
        except OSError:
            parts.append((source, None))
        else:
            parts.append((source, st.st_size, st.st_mtime_ns))
    for rule in sorted(rules, key=lambda r: (r.code, r.module, r.origin)):
        parts.append((rule.code, rule.module, rule.origin, repr(dict(rule.options_schema))))
    parts.append(data)
    return hashlib.sha256(repr(parts).encode("utf-8", "backslashreplace")).hexdigest()


def _read_cache(path: str) -> list[str]:
    """The digests of files found valid; nothing when the cache is absent, unsafe or corrupt."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return []
    try:
        st = os.fstat(fd)
        # Only a verdict this user wrote counts: not one another user could have placed.
        if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
            return []
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(1 << 20)
    except OSError:
        return []
    finally:
        os.close(fd)
    try:
        doc = json.loads(raw)
    except ValueError:
        return []
    if not isinstance(doc, dict) or doc.get("format") != _CACHE_FORMAT:
        return []
    valid = doc.get("valid")
    if not isinstance(valid, list):
        return []
    return [d for d in valid if isinstance(d, str)]


def _write_cache(folder: str, path: str, digests: list[str]) -> None:
    """Write the cache atomically (a temporary file renamed over it); silent on failure."""
    import tempfile

    doc = {"format": _CACHE_FORMAT, "valid": digests[:_CACHE_SIZE]}
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".valid-configs.", suffix=".tmp", dir=folder)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh)
        os.replace(tmp, path)
    except OSError:
        import contextlib

        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _cached_problems(
    config: ConfigFile,
    kind: str,
    rules: Sequence[Rule],
    schema: Callable[[], Mapping[str, Any]],
    data: Any,
    skip: Sequence[Path] = (),
) -> list[str]:
    """:func:`_problems`, skipped when the same content was found valid before.

    Only "valid" is remembered: an invalid file is validated every time, so its messages are
    always jsonschema's. Any trouble with the cache (no home, a read-only or foreign folder,
    a corrupt file) only means validating again; it is never an error.
    """
    folder = cache_dir()
    if folder is None:
        return _problems(config, schema(), data, skip)
    digest = _digest(kind, data, rules)
    path = os.path.join(folder, _CACHE_FILE)
    known = _read_cache(path)
    if digest in known:
        return []
    errors = _problems(config, schema(), data, skip)
    if not errors and not skip:
        _write_cache(folder, path, [digest, *(d for d in known if d != digest)])
    return errors


def rule_locations(config: ConfigFile) -> tuple[list[str], list[FsPath]]:
    """The ``plugins`` and ``rule-dirs`` of a file, checked, with folders resolved.

    A rule folder must be a relative path that resolves (symbolic links followed) inside
    the file's repository (:func:`project_root`): a configuration in a pull request cannot
    point gpulint at ``/home/you/.ssh`` or ``../../other-checkout``.
    """
    data = {k: config.data[k] for k in LOADING_KEYS if k in config.data}
    if not data:
        return [], []

    def partial() -> dict[str, Any]:
        schema = config_schema([])
        return {**schema, "properties": {k: schema["properties"][k] for k in LOADING_KEYS}}

    errors = _cached_problems(config, "loading", [], partial, data)
    dirs: list[FsPath] = []
    root = project_root(config) if not errors else config.folder
    for i, text in enumerate(data.get("rule-dirs", []) if not errors else []):
        where = ("rule-dirs", i)
        if FsPath(text).is_absolute():
            errors.append(
                config.error(where, f"{text!r} is absolute: write a folder relative to this file")
            )
            continue
        try:
            folder = (config.folder / text).resolve()
            is_dir = folder.is_dir()
        except (OSError, RuntimeError, ValueError) as exc:  # NUL, name too long, link loop
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            errors.append(config.error(where, f"{text!r} is not a usable folder: {reason}"))
            continue
        if not folder.is_relative_to(root):
            errors.append(
                config.error(where, f"{text!r} resolves to {folder}, outside the repository {root}")
            )
        elif not is_dir:
            errors.append(config.error(where, f"{text!r} is not a folder"))
        dirs.append(folder)
    if errors:
        raise ConfigError("\n".join(errors))
    return list(data.get("plugins", [])), dirs


def forget_codes(config: ConfigFile, known: Sequence[str]) -> ConfigFile:
    """``config`` without what it says about rule codes that match none of ``known``.

    Used when the Python rules a configuration names were not loaded (not trusted): their
    codes in ``select``, ``extend-select``, ``ignore``, ``severity``, ``rules``,
    ``per-file-ignores`` and ``per-object-ignores`` are set aside (an ignore entry left with
    no code is dropped, so it never widens to every rule). Anything else is still checked.
    """
    code = re.compile(r"[A-Z][A-Z0-9]*")

    def unknown(value: Any) -> bool:
        return (
            isinstance(value, str)
            and value != "ALL"
            and code.fullmatch(value) is not None
            and not any(selects(k, (value,)) for k in known)
        )

    def kept(values: Any) -> Any:
        return [v for v in values if not unknown(v)] if isinstance(values, list) else values

    data = dict(config.data)
    for key in ("select", "extend-select", "ignore"):
        if key in data:
            data[key] = kept(data[key])
    for key in ("severity", "rules"):
        if isinstance(data.get(key), dict):
            data[key] = {k: v for k, v in data[key].items() if not unknown(k)}
    if isinstance(data.get("per-file-ignores"), dict):
        data["per-file-ignores"] = {
            glob: kept(codes)
            for glob, codes in data["per-file-ignores"].items()
            if kept(codes) != [] or codes == []
        }
    if isinstance(data.get("per-object-ignores"), list):
        rows = []
        for row in data["per-object-ignores"]:
            if isinstance(row, dict) and isinstance(row.get("rules"), list):
                if row["rules"] and not kept(row["rules"]):
                    continue
                row = {**row, "rules": kept(row["rules"])}
            rows.append(row)
        data["per-object-ignores"] = rows
    return ConfigFile(config.path, data, config.line_of, config.prefix)


# -- resolving --------------------------------------------------------------------------------
class Overrides:
    """What the command line says (None or empty: not given)."""

    __slots__ = ("extend_select", "fail_if_no_files", "fail_on", "ignore", "select")

    def __init__(
        self,
        select: list[str] | None = None,
        extend_select: Sequence[str] = (),
        ignore: Sequence[str] = (),
        fail_on: str | None = None,
        fail_if_no_files: bool | None = None,
    ) -> None:
        self.select = select
        self.extend_select = extend_select
        self.ignore = ignore
        self.fail_on = fail_on
        self.fail_if_no_files = fail_if_no_files


class Entry:
    """One effective value and where it came from."""

    __slots__ = ("origin", "value")

    def __init__(self, value: Any, origin: str) -> None:
        self.value = value
        self.origin = origin

    def __repr__(self) -> str:
        return f"Entry({self.value!r}, {self.origin!r})"


class Effective:
    """The configuration of a run, ready to use."""

    __slots__ = (
        "entries",
        "exclude",
        "fail_if_no_files",
        "file",
        "force_exclude",
        "root",
        "settings",
    )

    def __init__(
        self,
        settings: Settings,
        file: ConfigFile | None,
        root: FsPath,
        exclude: PathMatcher,
        force_exclude: bool,
        entries: dict[str, Entry],
        fail_if_no_files: bool = False,
    ) -> None:
        self.settings = settings
        self.file = file
        self.root = root
        self.exclude = exclude
        self.force_exclude = force_exclude
        self.entries = entries
        #: Exit 1 when no file was linted (``fail-if-no-files``, ``--fail-if-no-files``).
        self.fail_if_no_files = fail_if_no_files


def _check_selectors(
    config: ConfigFile | None, path: Path, values: Iterable[str], known: Sequence[str]
) -> list[str]:
    errors = []
    for i, value in enumerate(values):
        _, message = selector(value, known)
        if message is not None:
            if config is None:
                errors.append(f"{dotted_cli(path)}: {message}")
            else:
                errors.append(config.error((*path, i), message))
    return errors


def _check_globs(config: ConfigFile, data: Mapping[str, Any]) -> list[str]:
    """Every glob of the file that is not valid (an unclosed ``[``, a reversed range), with
    its line: a pattern that cannot mean what it says is an error, not a silent no-match."""
    from gpulint.globs import validate

    places: list[tuple[Path, Any]] = [
        (("exclude", i), pattern) for i, pattern in enumerate(data.get("exclude", ()))
    ]
    places += [
        (("per-file-ignores", pattern), pattern) for pattern in data.get("per-file-ignores", {})
    ]
    for i, row in enumerate(data.get("per-object-ignores", ())):
        places += [
            (("per-object-ignores", i, key), row[key])
            for key in ("kind", "namespace", "name", "path")
            if key in row
        ]
    errors = []
    for path, pattern in places:
        if not isinstance(pattern, str):
            continue
        problem = validate(pattern)
        if problem is not None:
            errors.append(config.error(path, f"{pattern!r} is not a valid glob: {problem}"))
    return errors


def dotted_cli(path: Path) -> str:
    return "--" + str(path[0])


def resolve(
    config: ConfigFile | None,
    rules: Sequence[Rule],
    overrides: Overrides | None = None,
    cwd: FsPath | None = None,
) -> Effective:
    """Validate ``config`` for ``rules`` and build the run's Settings (ConfigError if bad)."""
    from gpulint.globs import PathMatcher, compile_all
    from gpulint.suppress import ObjectIgnore, PathIgnore

    cli = overrides or Overrides()
    data: dict[str, Any] = config.data if config is not None else {}
    if config is not None and data:
        bad_rows = _workload_row_problems(config, data.get("workloads"))
        errors = _cached_problems(
            config,
            "full",
            rules,
            lambda: config_schema(rules),
            data,
            skip=[("workloads", i) for i in bad_rows],
        )
        errors += [message for messages in bad_rows.values() for message in messages]
        errors.sort(key=lambda e: _line_in(e, config))
        if errors:
            raise ConfigError("\n".join(errors))
    known = [r.code for r in rules]
    errors = []
    if config is not None and data.get("select") == []:
        # As `--select ''`: an empty selection runs no rule and passes every file.
        errors.append(
            config.error(
                ("select",),
                "an empty list selects no rule; leave `select` out to run every rule, or list "
                "the rules to run",
            )
        )
    for key in ("select", "extend-select", "ignore"):
        errors += _check_selectors(config, (key,), data.get(key, ()), known)
    for pattern, codes in data.get("per-file-ignores", {}).items():
        errors += _check_selectors(config, ("per-file-ignores", pattern), codes, known)
    for i, entry in enumerate(data.get("per-object-ignores", ())):
        errors += _check_selectors(
            config, ("per-object-ignores", i, "rules"), entry.get("rules", ()), known
        )
    if config is not None:
        errors += _check_globs(config, data)
    if errors:
        raise ConfigError("\n".join(errors))

    root = config.folder if config is not None else (cwd or FsPath.cwd())
    entries: dict[str, Entry] = {}

    def origin(key: Path) -> str:
        assert config is not None
        return config.where(key)

    def value(key: str, default: Any) -> Entry:
        if key in data:
            return Entry(data[key], origin((key,)))
        return Entry(default, DEFAULT)

    # Rule selection.
    if cli.select is not None:
        entries["select"] = Entry(cli.select, f"{COMMAND_LINE} (--select)")
    elif "select" in data:
        entries["select"] = Entry(_codes(data["select"]), origin(("select",)))
    else:
        entries["select"] = Entry(["ALL"], DEFAULT)
    for key, extra, flag in (
        ("extend-select", cli.extend_select, "--extend-select"),
        ("ignore", cli.ignore, "--ignore"),
    ):
        entry = value(key, [])
        entry = Entry(_codes(entry.value), entry.origin)
        if extra:
            base = entry.origin if entry.value else ""
            joined = f"{base} + " if base and base != DEFAULT else ""
            entry = Entry([*entry.value, *extra], f"{joined}{COMMAND_LINE} ({flag})")
        entries[key] = entry
    if cli.fail_on is not None:
        entries["fail-on"] = Entry(cli.fail_on, f"{COMMAND_LINE} (--fail-on)")
    else:
        entries["fail-on"] = value("fail-on", Severity.ERROR.label)
    if cli.fail_if_no_files is not None:
        flag = "--fail-if-no-files" if cli.fail_if_no_files else "--no-fail-if-no-files"
        entries["fail-if-no-files"] = Entry(cli.fail_if_no_files, f"{COMMAND_LINE} ({flag})")
    else:
        entries["fail-if-no-files"] = value("fail-if-no-files", False)

    # Severities and options, per rule.
    severities: dict[str, Severity] = {}
    configured = data.get("severity", {})
    options: dict[str, dict[str, Any]] = {}
    rule_options = data.get("rules", {})
    taints = data.get(GPU_TAINTS)
    for rule in sorted(rules, key=lambda r: r.code):
        if rule.code in configured:
            level = configured[rule.code]
            severities[rule.code] = Severity.parse(level)
            entries[f"severity.{rule.code}"] = Entry(level, origin(("severity", rule.code)))
        else:
            entries[f"severity.{rule.code}"] = Entry(rule.severity.label, DEFAULT)
        chosen: dict[str, Any] = {}
        for name, spec in rule.options_schema.items():
            key = f"rules.{rule.code}.{name}"
            mine = rule_options.get(rule.code, {})
            if name in mine:
                chosen[name] = mine[name]
                entries[key] = Entry(mine[name], origin(("rules", rule.code, name)))
            elif name == "taints" and taints is not None:
                chosen[name] = taints
                entries[key] = Entry(taints, f"{origin((GPU_TAINTS,))} ({GPU_TAINTS})")
            else:
                entries[key] = Entry(spec.get("default"), DEFAULT)
        if chosen:
            options[rule.code] = chosen

    # Files.
    exclude = value("exclude", [])
    entries["exclude"] = exclude
    entries["force-exclude"] = value("force-exclude", False)
    per_file: list[PathIgnore] = []
    entries["per-file-ignores"] = value("per-file-ignores", {})
    for pattern, codes in data.get("per-file-ignores", {}).items():
        matcher = PathMatcher(str(root), compile_all([pattern]))
        where = origin(("per-file-ignores", pattern))
        per_file.append(PathIgnore(pattern, matcher, tuple(_codes(codes)), where))
    per_object: list[ObjectIgnore] = []
    entries["per-object-ignores"] = value("per-object-ignores", [])
    for i, row in enumerate(data.get("per-object-ignores", ())):
        paths = PathMatcher(str(root), compile_all([row["path"]])) if "path" in row else None
        per_object.append(
            ObjectIgnore(
                reason=row["reason"],
                kind=row.get("kind", "*"),
                namespace=row.get("namespace", "*"),
                name=row.get("name", "*"),
                rules=tuple(_codes(row.get("rules", ()))),
                paths=paths,
                origin=origin(("per-object-ignores", i)),
            )
        )

    # Data merged over the built-in tables.
    registry = None
    entries["devices"] = value("devices", [])
    if data.get("devices"):
        from gpulint.registry import builtin_registry

        registry = builtin_registry().merged(data["devices"])
    table = None
    entries["workloads"] = value("workloads", [])
    if data.get("workloads"):
        from gpulint.workloads import WorkloadKind, builtin_table

        rows = [
            WorkloadKind.from_json(row, origin(("workloads", i)))
            for i, row in enumerate(data["workloads"])
        ]
        table = builtin_table().extended(rows)
    entries["plugins"] = value("plugins", [])
    entries["rule-dirs"] = value("rule-dirs", [])

    select = entries["select"].value
    settings = Settings(
        select=None if select == ["ALL"] else frozenset(select),
        extend_select=frozenset(entries["extend-select"].value),
        ignore=frozenset(entries["ignore"].value),
        severities=severities,
        options=options,
        fail_on=Severity.parse(entries["fail-on"].value),
        registry=registry,
        workloads=table,
        per_file_ignores=tuple(per_file),
        per_object_ignores=tuple(per_object),
    )
    return Effective(
        settings=settings,
        file=config,
        root=root,
        exclude=PathMatcher(str(root), compile_all(exclude.value)),
        force_exclude=bool(entries["force-exclude"].value),
        entries=entries,
        fail_if_no_files=bool(entries["fail-if-no-files"].value),
    )


# -- showing ------------------------------------------------------------------------------------
def describe(effective: Effective, rules: Sequence[Rule], json_output: bool = False) -> str:
    """The effective configuration, one value per line with where it came from."""
    from gpulint.engine import is_enabled
    from gpulint.textsafe import escape, json_text

    file = effective.file
    enabled = [r.code for r in rules if is_enabled(r.code, effective.settings)]
    if json_output:
        doc = {
            "file": str(file.path) if file is not None else None,
            "root": str(effective.root),
            "settings": {
                key: {"value": e.value, "origin": e.origin} for key, e in effective.entries.items()
            },
            "enabled": enabled,
        }
        return json_text(doc) + "\n"
    head = (
        f"# configuration file: {file.shown}"
        if file is not None
        else ("# configuration file: none (built-in defaults)")
    )
    rows = [
        (f"{key} = {json.dumps(e.value, ensure_ascii=False)}", e.origin)
        for key, e in effective.entries.items()
    ]
    width = min(max(len(text) for text, _ in rows), 72)
    lines = [head]
    lines += [f"{text:<{width}}  # {origin}" for text, origin in rows]
    lines.append(f"# enabled rules: {', '.join(enabled) or 'none'}")
    # Values and paths from the configuration file, one visible line each (gpulint.textsafe).
    return "\n".join(escape(line) for line in lines) + "\n"
