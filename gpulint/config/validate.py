"""Validating a configuration file, and remembering the files found valid.

What a file says is checked against the schema (:mod:`gpulint.config.schema`), its
``workloads`` rows by :func:`gpulint.k8s.workloads.validate_row`, its selectors and its globs
(:func:`validate_config`). Any problem is a :class:`~gpulint.config.file.ConfigError` whose
lines name the file, the line, the key and the allowed values.

Validating needs jsonschema, which costs more than the rest of a one-file check, so a file
found valid is remembered (:func:`_cached_problems`) in the user's cache folder -- never in
the linted tree, where a pull request could plant a verdict -- and validated again only when
what it says, gpulint or the loaded rules change.

Also here: the keys read before rules are loaded (:func:`rule_locations`) and what is set
aside when the rules a file names were not loaded (:func:`forget_codes`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path as FsPath
from typing import TYPE_CHECKING, Any

from gpulint.config.file import ConfigError, ConfigFile, project_root
from gpulint.config.keys import EVERY, KEYS, LOADING_KEYS, SELECTOR_HELP, Where, places
from gpulint.data import schema_path
from gpulint.model import Path, selects

if TYPE_CHECKING:
    from gpulint.rule import Rule


def _problems(
    config: ConfigFile, schema: Mapping[str, Any], data: Any, skip: Sequence[Path] = ()
) -> list[str]:
    """Schema problems of ``data``, leaving out those inside the ``skip`` paths."""
    from gpulint.loader.schemacheck import check

    problems = check(schema, data, config.line_of)
    return [
        config.error(p.path, p.message)
        for p in problems
        if not any(p.path[: len(s)] == s for s in skip)
    ]


#: ``pods[0]: ...``, ``group: ...``, ``pod_defaults.tolerations[1]: ...``: the field a
#: :func:`gpulint.k8s.workloads.validate_row` message is about.
#: A pattern text, compiled by ``re``'s cache on first use: compiling it costs more at
#: start-up (0.5 ms) than the rest of this module, and only a bad row needs it.
_ROW_FIELD = r"([A-Za-z_]+)(?:\[(\d+)\])?(?:\.([A-Za-z_]+)(?:\[(\d+)\])?)?: "


def _workload_row_problems(config: ConfigFile, rows: Any) -> dict[int, list[str]]:
    """``validate_row``'s messages for each bad ``workloads`` row, by row index.

    Its messages say what to write instead (``'spec.tasks[].template.spec': list items are
    written as '.*' ...``) where the JSON Schema can only say "not allowed", and it knows
    what the schema cannot (``pods`` naming a container list): its messages replace the
    schema's for the rows it rejects. Each is at the line of the field it names.
    """
    if not isinstance(rows, list) or not rows:
        # Most files have no rows: then neither module below (schemacheck brings in
        # dataclasses and inspect, 14 ms) is imported on a start-up that found the file valid.
        return {}
    from gpulint.k8s.workloads import validate_row
    from gpulint.loader.schemacheck import dotted

    out: dict[int, list[str]] = {}
    for i, row in enumerate(rows):
        for message in validate_row(row):
            base: Path = ("workloads", i)
            field = re.match(_ROW_FIELD, message)
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
    names = ("schema", "validate", "keys", "keyschemas", "../loader/schemacheck", "../k8s/taints")
    schemas = ("devices.schema.json", "workloads.schema.json")
    return [os.path.normpath(os.path.join(here, f"{n}.py")) for n in names] + [
        str(schema_path(n)) for n in schemas
    ]


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
    from gpulint.util.cachefile import read_own

    raw = read_own(path, 1 << 20)
    if raw is None:
        return []
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
    from gpulint.util.cachefile import write_atomic

    write_atomic(
        folder, path, {"format": _CACHE_FORMAT, "valid": digests[:_CACHE_SIZE]}, ".valid-configs."
    )


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


# -- before the rules are loaded ---------------------------------------------------------------
def rule_locations(config: ConfigFile) -> tuple[list[str], list[FsPath]]:
    """The ``plugins`` and ``rule-dirs`` of a file, checked, with folders resolved.

    A rule folder must be a relative path that resolves (symbolic links followed) inside
    the file's repository (:func:`project_root`): a configuration in a pull request cannot
    point gpulint at ``/home/you/.ssh`` or ``../../other-checkout``.
    """
    too_deep(config)
    data = {k: config.data[k] for k in LOADING_KEYS if k in config.data}
    if not data:
        return [], []

    def partial() -> dict[str, Any]:
        from gpulint.config.schema import config_schema

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
    codes are set aside wherever a key's row says it holds codes (:attr:`Key.by_code
    <gpulint.config.keys.Key.by_code>`: ``severity``, ``rules``) or selectors
    (:attr:`Key.selectors <gpulint.config.keys.Key.selectors>`: ``select``,
    ``extend-select``, ``ignore``, ``per-file-ignores``, ``per-object-ignores``); an ignore
    entry left with no code is dropped, so it never widens to every rule. Anything else is
    still checked.
    """

    def unknown(value: Any) -> bool:
        # A code as `severity` and `rules` keys write it: exactly, in upper case.
        return isinstance(value, str) and _matches_none(value, known)

    def unknown_selector(value: Any) -> bool:
        # A selector in any case, as `selector` reads it (`org010` is ORG010).
        return isinstance(value, str) and _matches_none(value.strip().upper(), known)

    data = dict(config.data)
    for key in KEYS:
        if key.by_code and isinstance(data.get(key.name), dict):
            data[key.name] = {k: v for k, v in data[key.name].items() if not unknown(k)}
        for where in key.selectors if key.name in data else ():
            data[key.name] = _set_aside(data[key.name], where, unknown_selector)
    return ConfigFile(config.path, data, config.line_of, config.prefix)


def _set_aside(value: Any, where: Where, unknown: Callable[[Any], bool]) -> Any:
    """``value`` without the selectors at ``where`` that are ``unknown``. ``where`` is a
    list of selectors (``(EVERY,)``) or a list inside each entry of the value
    (``(EVERY, "rules", EVERY)``); an entry whose list held selectors, all unknown, is
    dropped."""

    def kept(values: Any) -> Any:
        return [v for v in values if not unknown(v)] if isinstance(values, list) else values

    if where == (EVERY,):
        return kept(value)
    inside = where[1:-1]  # the keys from an entry to its list of selectors

    def entry(node: Any) -> Any:
        # The entry with its list kept; None: drop it. A loop over the row's few keys.
        parents: list[tuple[dict[str, Any], str]] = []
        for step in inside:
            if not isinstance(node, dict) or step not in node:
                return parents[0][0] if parents else node
            parents.append((node, step))
            node = node[step]
        new = kept(node)
        if isinstance(node, list) and node and not new:
            return None
        for parent, step in reversed(parents):
            new = {**parent, step: new}
        return new

    if isinstance(value, list):
        return [e for e in map(entry, value) if e is not None]
    if isinstance(value, dict):
        return {k: e for k, v in value.items() if (e := entry(v)) is not None}
    return value


# -- selectors and globs -----------------------------------------------------------------------
#: What a rule selector is, in error messages and the schema.

_SELECTOR = r"[A-Z][A-Z0-9]*"  # compiled on first use (re's cache), not at import


def _matches_none(code: str, known: Sequence[str]) -> bool:
    """Is ``code`` (upper case) a well-formed selector other than ALL that selects none of
    ``known``? What :func:`selector` rejects and :func:`forget_codes` sets aside."""
    return (
        code != "ALL"
        and re.fullmatch(_SELECTOR, code) is not None
        and not any(selects(k, (code,)) for k in known)
    )


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
    if not re.fullmatch(_SELECTOR, code):
        return code, f"{value!r} is not {SELECTOR_HELP}"
    if _matches_none(code, known):
        import difflib

        close = difflib.get_close_matches(code, known, n=1, cutoff=0.8)
        hint = f" (did you mean {close[0]}?)" if close else ""
        return code, (
            f"{value!r} matches no rule{hint}; allowed values: {', '.join(known)}, a prefix of "
            "them, or ALL"
        )
    return code, None


def _check_selector(config: ConfigFile, path: Path, value: str, known: Sequence[str]) -> list[str]:
    _, message = selector(value, known)
    return [] if message is None else [config.error(path, message)]


def _check_globs(config: ConfigFile, data: Mapping[str, Any]) -> list[str]:
    """Every glob of the file that is not valid (an unclosed ``[``, a reversed range), with
    its line: a pattern that cannot mean what it says is an error, not a silent no-match.
    Where the globs are is each key's row (:attr:`gpulint.config.keys.Key.globs`)."""
    from gpulint.util.globs import validate

    found = [
        (path, pattern, key.ordered_globs)
        for key in KEYS
        if key.name in data
        for where in key.globs
        for path, pattern in places(data[key.name], where, (key.name,))
    ]
    errors = []
    for path, pattern, ordered in found:
        if not isinstance(pattern, str):
            continue
        problem = validate(pattern)
        if problem is None and not ordered and pattern.strip().startswith("!"):
            # A lone pattern has nothing before it to take back: "!x" would match nothing.
            problem = (
                "'!' (take back an earlier pattern) works in `exclude` only; "
                "write \\! for a name that starts with '!'"
            )
        if problem is not None:
            errors.append(config.error(path, f"{pattern!r} is not a valid glob: {problem}"))
    return errors


def _check_render(config: ConfigFile, data: Mapping[str, Any]) -> list[str]:
    """The ``render:`` options that helm would refuse or take for something else: a release
    name, namespace or Kubernetes version from the linted tree reaches helm, and one such
    as ``--post-renderer=./x`` must be an error here, at its line, not an option there."""
    render = data.get("render")
    if not isinstance(render, dict):
        return []
    from gpulint.render import option_problem

    places: list[tuple[Path, Any]] = [(("render",), render)]
    charts = render.get("charts")
    if isinstance(charts, dict):
        places += [(("render", "charts", k), v) for k, v in charts.items() if isinstance(v, dict)]
    errors = []
    for at, entry in places:
        for option in ("release-name", "namespace", "kube-version"):
            value = entry.get(option)
            problem = option_problem(option, value) if isinstance(value, str) else None
            if problem is not None:
                errors.append(config.error((*at, option), problem))
    return errors


# -- how deep values may nest -----------------------------------------------------------------
# gpulint's deepest setting is a few levels; a file nested deeper (thousands of brackets) is
# refused, at its line, before anything that recurses walks it: the validation cache's digest
# (``repr``) and the schema's validation recursed once per level.
#: Levels a configuration's values may nest.
MAX_DEPTH = 64


def too_deep(config: ConfigFile) -> None:
    """:class:`ConfigError` at the first value nested more than ``MAX_DEPTH`` levels deep,
    found with the open values on a list (any depth)."""
    todo: list[tuple[Any, tuple[Any, ...]]] = [(config.data, ())]
    while todo:
        node, path = todo.pop()
        if len(path) > MAX_DEPTH:
            why = f"nested more than {MAX_DEPTH} levels deep, which no setting of gpulint is"
            raise ConfigError(config.error(path[:2], why))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        todo.extend((v, (*path, k)) for k, v in items if isinstance(v, (dict, list)))


# -- the whole file ------------------------------------------------------------------------------
def _schema(rules: Sequence[Rule]) -> dict[str, Any]:
    # Imported here: a file found valid before (the usual pre-commit run) needs no schema.
    from gpulint.config.schema import config_schema

    return config_schema(rules)


def validate_config(config: ConfigFile | None, rules: Sequence[Rule]) -> None:
    """Every problem of ``config`` for ``rules``, as one :class:`ConfigError`: the schema
    (skipped for a file found valid before), the ``workloads`` rows, the selectors, the
    globs and the ``render:`` options helm takes, in file order where they have a line."""
    if config is None or not config.data:
        return
    too_deep(config)
    data = config.data
    bad_rows = _workload_row_problems(config, data.get("workloads"))
    errors = _cached_problems(
        config,
        "full",
        rules,
        lambda: _schema(rules),
        data,
        skip=[("workloads", i) for i in bad_rows],
    )
    errors += [message for messages in bad_rows.values() for message in messages]
    # The checks below read what the schema let through: a key the schema already faults is
    # left to its message, every other key is checked too, so one run says every problem.
    faulted = {_top_key(e) for e in errors}
    errors += _semantic_problems(config, rules, {k: v for k, v in data.items() if k not in faulted})
    errors.sort(key=lambda e: _line_in(e, config))
    if errors:
        raise ConfigError("\n".join(errors))


def _top_key(error: str) -> str:
    """The top-level key a ``file:line: key.path: why`` message is about."""
    parts = error.split(": ", 2)
    return (parts[1] if len(parts) > 2 else "").split(".", 1)[0].split("[", 1)[0]


def _semantic_problems(
    config: ConfigFile, rules: Sequence[Rule], data: dict[str, Any]
) -> list[str]:
    """The problems past the schema: selectors that match no rule, globs, render options."""
    errors: list[str] = []
    known = [r.code for r in rules]
    if data.get("select") == []:
        # As `--select ''`: an empty selection runs no rule and passes every file.
        errors.append(
            config.error(
                ("select",),
                "an empty list selects no rule; leave `select` out to run every rule, or list "
                "the rules to run",
            )
        )
    # Where the selectors are is each key's row (gpulint.config.keys.Key.selectors).
    for key in KEYS:
        for where in key.selectors if key.name in data else ():
            for path, value in places(data[key.name], where, (key.name,)):
                if isinstance(value, str):
                    errors += _check_selector(config, path, value, known)
    errors += _check_globs(config, data)
    errors += _check_render(config, data)
    return errors
