"""A file's findings kept in its project's cache (:mod:`gpulint.util.factcache`), so that a run
on an unchanged file does not parse it again.

An entry's key is the file's label and the SHA-256 of its bytes, under a fingerprint of all
else its findings depend on (:func:`fingerprint`): gpulint's version, the rules and each
one's severity and options, the selection, the ignores, the configured cluster and devices,
and the project's facts (every file that says something of the cluster: its label, digest
and what its bytes hold). A run with other options, or a project one of whose facts
changed, finds no entry and lints. Only plain files are kept: not a chart or overlay
rendered, a Kustomize part, a file fixed, a run that records the objects it linted (JUnit),
nor any run with a rule that is not built in (a plugin's, a rule folder's or a declarative
rule can change without gpulint's version).

Entries are JSON data, read back field by field (:func:`from_json`): a cache file is data a
pull request can write, and the file is signed besides. An entry that is not what gpulint
wrote is dropped with a warning and the file is linted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpulint.model import Edit, Finding, Fix, ObjectRef, Related, Severity, Span, Suppression

if TYPE_CHECKING:
    from gpulint.rule import Rule
    from gpulint.settings import Settings
    from gpulint.util.factcache import FactCache

#: Bumped when an entry's form changes.
FORMAT = 2
#: How deep :func:`canonical` follows the settings (the configuration nests a few levels).
_DEPTH = 24


class Unstable(Exception):
    """A value with no stable text (a function, an object of unknown make): no cache."""


def canonical(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON data that is the same in every process for the same settings (sets
    sorted, records named by their type)."""
    import enum
    import re
    from decimal import Decimal

    if depth > _DEPTH:
        raise Unstable("too deep")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return [type(value).__name__, value.name]
    stands_for = getattr(type(value), "canonical_key", None)
    if callable(stands_for):
        # A large value many others share (a ResourceSlice's devices, on every node it is
        # for) gives a short key of its own, once: the settings' text stays linear.
        return [type(value).__name__, stands_for(value)]
    if isinstance(value, Decimal):
        return ["Decimal", str(value)]
    if isinstance(value, re.Pattern):
        return ["re", str(value.pattern)]
    if isinstance(value, (set, frozenset)):
        import json

        items = [canonical(v, depth + 1) for v in value]
        return ["set", sorted(json.dumps(i, sort_keys=True) for i in items)]
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return [type(value).__name__, [canonical(v, depth + 1) for v in value]]
    if isinstance(value, (list, tuple)):
        return [canonical(v, depth + 1) for v in value]
    if hasattr(value, "items") and callable(value.items):
        import json

        pairs = [(canonical(k, depth + 1), canonical(v, depth + 1)) for k, v in value.items()]
        return ["map", sorted([json.dumps(k, sort_keys=True), v] for k, v in pairs)]
    slots = getattr(type(value), "__slots__", None)
    if isinstance(slots, str):
        slots = (slots,)
    fields = (
        {s: getattr(value, s, None) for s in slots}
        if slots is not None and not hasattr(value, "__dict__")
        else getattr(value, "__dict__", None)
    )
    if fields is None or callable(value):
        raise Unstable(type(value).__name__)
    return [type(value).__name__, canonical(dict(fields), depth + 1)]


#: What a run's settings hold that comes from the project's files: its facts, which the
#: project's own fingerprint stands for.
_FACTS = ("evidence", "dra", "config_maps")


def fingerprint(rules: list[Rule], settings: Settings) -> str | None:
    """What a file's findings depend on besides the file and its project's facts: gpulint's
    code (its version; in a source checkout its files too: :mod:`gpulint.util.codekey`),
    the rules (each one's code, severity, options and origin) and the settings (selection,
    severities, options, ignores, the configured cluster and devices). None:
    something cannot be told apart from another run's (a rule that is not built in)."""
    import hashlib
    import json

    from gpulint.util.codekey import code_key

    if any(r.origin != "built-in" for r in rules):
        return None
    try:
        shown = {
            name: canonical(getattr(settings, name))
            for name in type(settings).__slots__
            if name not in _FACTS
        }
        ruled = [[r.code, r.severity.name, canonical(r.default_options()), r.module] for r in rules]
    except (Unstable, RecursionError):
        return None
    text = json.dumps([code_key(), FORMAT, shown, ruled], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class KeptFindings:
    """The findings a project's cache keeps for the files of one linter: :meth:`key` of a
    file's bytes, :meth:`get` what is kept, :meth:`entry` what to keep (the process that
    forked the workers keeps it: :meth:`put`)."""

    __slots__ = ("_prefix", "_shards", "root")

    def __init__(self, cache: FactCache, root: str, settings_key: str, facts_key: str) -> None:
        #: The project's cache's shards, by the file's digest (gpulint.util.shards).
        self._shards = cache.sharded()
        #: Which project's cache the entries go to (the run holds one per project).
        self.root = root
        self._prefix = f"{settings_key}:{facts_key}:"
        self._shards.keep(self._prefix)  # a shard rewritten keeps only the current entries

    def key(self, label: str, raw: bytes) -> str:
        from gpulint.util.factcache import digest

        return f"{self._prefix}{digest(raw)}:{label}"

    def get(self, key: str) -> list[Finding] | None:
        digest = key[len(self._prefix) :]
        entry = self._shards.get(digest, key)
        if entry is None:
            return None
        found = from_json(entry)
        if found is None:
            self._shards.drop(digest, key)
        return found

    def put(self, key: str, entry: Any) -> None:
        self._shards.put(key[len(self._prefix) :], key, entry)


def to_json(findings: list[Finding]) -> list[Any] | None:
    """The findings as JSON data; None when one cannot be written so (a document path with a
    key JSON cannot hold)."""
    out: list[Any] = []
    for f in findings:
        if not all(isinstance(p, (str, int)) for p in f.doc_path):
            return None
        fix = None
        if f.fix is not None:
            edits = [[list(e.span), e.start, e.end, e.content] for e in f.fix.edits]
            fix = [f.fix.message, edits, f.fix.applicability, f.fix.skipped]
        obj = list(f.object) if f.object is not None else None
        related = [[r.kind, r.path, list(r.span), r.message] for r in f.related]
        suppression = list(f.suppression) if f.suppression is not None else None
        out.append(
            [
                f.rule, f.name, int(f.severity), f.path, list(f.span), f.message, obj,
                list(f.doc_path), f.document, fix, related, f.help, suppression,
            ]
        )  # fmt: skip
    return out


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _span(value: Any) -> Span | None:
    if isinstance(value, list) and len(value) == 4 and all(_int(v) for v in value):
        return Span(*value)
    return None


def from_json(entry: Any) -> list[Finding] | None:
    """Findings as :func:`to_json` writes them, checked field by field; None when the entry
    is not such data."""
    if not isinstance(entry, list):
        return None
    out: list[Finding] = []
    for row in entry:
        if not (isinstance(row, list) and len(row) == 13):
            return None
        rule, name, severity, path, span, message, obj, doc_path, document, fix, related = row[:11]
        help, sup = row[11:]
        where = _span(span)
        if not (
            _text(rule)
            and _text(name)
            and severity in (1, 2, 3)
            and _text(path)
            and where is not None
            and _text(message)
            and isinstance(doc_path, list)
            and all(_text(p) or _int(p) for p in doc_path)
            and _int(document)
            and isinstance(related, list)
            and (help is None or _text(help))
        ):
            return None
        ref = None
        if obj is not None:
            if not (isinstance(obj, list) and len(obj) == 4):
                return None
            if not all(v is None or _text(v) for v in obj):
                return None
            ref = ObjectRef(*obj)
        repair = _fix(fix) if fix is not None else None
        if fix is not None and repair is None:
            return None
        places = []
        for r in related:
            if not (isinstance(r, list) and len(r) == 4 and _text(r[0]) and _text(r[1])):
                return None
            at = _span(r[2])
            if at is None or not _text(r[3]):
                return None
            places.append(Related(r[0], r[1], at, r[3]))
        why = None
        if sup is not None:
            if not (isinstance(sup, list) and len(sup) == 3 and _text(sup[0]) and _text(sup[1])):
                return None
            if not (sup[2] is None or _text(sup[2])):
                return None
            why = Suppression(*sup)
        out.append(
            Finding(
                rule, name, Severity(severity), path, where, message, ref, tuple(doc_path),
                document, repair, tuple(places), help, why,
            )
        )  # fmt: skip
    return out


def _fix(value: Any) -> Fix | None:
    if not (isinstance(value, list) and len(value) == 4):
        return None
    message, edits, applicability, skipped = value
    if not (
        _text(message)
        and isinstance(edits, list)
        and applicability in ("safe", "unsafe")
        and (skipped is None or _text(skipped))
    ):
        return None
    out = []
    for e in edits:
        if not (isinstance(e, list) and len(e) == 4):
            return None
        span = _span(e[0])
        if span is None or not (_int(e[1]) and _int(e[2]) and _text(e[3])):
            return None
        out.append(Edit(span, e[1], e[2], e[3]))
    return Fix(message, tuple(out), applicability, skipped)
