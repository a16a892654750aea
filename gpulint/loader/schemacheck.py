"""JSON Schema validation with messages a person can act on: line, key, allowed values.

Used for configuration files and declarative rule files. jsonschema is imported here, and
this module is imported only when there is something to validate, so a plain
``gpulint check`` never pays for it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gpulint.model import Path


@dataclass(frozen=True, slots=True)
class SchemaProblem:
    """One reason a document does not match its schema."""

    path: Path
    line: int
    message: str

    @property
    def key(self) -> str:
        return dotted(self.path)

    def render(self, file: str) -> str:
        where = f"{file}:{self.line}"
        return f"{where}: {self.key}: {self.message}" if self.path else f"{where}: {self.message}"


def dotted(path: Sequence[Any]) -> str:
    """``("rules", "GPU020", "taints", 0, "key")`` -> ``rules.GPU020.taints[0].key``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            text = str(part)
            plain = text and all(c.isalnum() or c in "-_" for c in text)
            shown = text if plain else json.dumps(text)
            out += f".{shown}" if out else shown
    return out


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


_TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "null": "null",
}


def _show(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _describe(error: Any) -> Iterator[tuple[Path, str]]:
    """(path, message) for one jsonschema ValidationError."""
    from jsonschema.exceptions import best_match

    path: Path = tuple(error.absolute_path)
    kind = error.validator
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    instance = error.instance
    if kind == "additionalProperties" and isinstance(instance, Mapping):
        props = schema.get("properties", {})
        patterns = schema.get("patternProperties", {})
        import re

        allowed = ", ".join(sorted(props))
        hint = f"allowed keys: {allowed}" if allowed else "no keys are allowed here"
        for key in instance:
            if key in props or any(re.search(p, str(key)) for p in patterns):
                continue
            import difflib

            close = difflib.get_close_matches(str(key), list(props), n=1, cutoff=0.75)
            mean = f"did you mean {close[0]}? " if close else ""
            yield (*path, key), f"unknown key; {mean}{hint}"
        return
    if kind == "enum":
        allowed = ", ".join(_show(v) for v in error.validator_value)
        yield path, f"{_show(instance)} is not allowed; allowed values: {allowed}"
        return
    if kind == "const":
        yield (
            path,
            f"{_show(instance)} is not allowed; the only allowed value is "
            + _show(error.validator_value),
        )
        return
    if kind == "type":
        types = error.validator_value
        names = [
            _TYPE_NAMES.get(t, str(t)) for t in (types if isinstance(types, list) else [types])
        ]
        yield path, f"expected {' or '.join(names)}, got {_json_type(instance)}"
        return
    if kind == "required" and isinstance(instance, Mapping):
        missing = [k for k in error.validator_value if k not in instance]
        yield path, "missing required key " + ", ".join(repr(k) for k in missing)
        return
    if kind in ("anyOf", "oneOf") and error.context:
        # The branches of the instance's own type say what is wrong with it (a mapping
        # given where a string or a mapping is allowed: the mapping branch's problem).
        typed = [e for e in error.context if e.validator != "type"]
        deepest = best_match(typed or error.context)
        if deepest is not None and tuple(deepest.absolute_path) != path:
            yield from _describe(deepest)
            return
        if isinstance(schema.get("description"), str):
            yield path, f"{_show(instance)} is not allowed: expected {schema['description']}"
            return
    if kind == "pattern":
        described = schema.get("description")
        extra = f"expected to match {error.validator_value}"
        yield path, f"{_show(instance)} is not allowed ({described or extra})"
        return
    yield path, error.message


def check(
    schema: Mapping[str, Any], data: Any, line_of: Callable[[Path], int]
) -> list[SchemaProblem]:
    """Every problem of ``data`` against ``schema``, ordered by line."""
    from jsonschema import Draft202012Validator

    validator = Draft202012Validator(schema)
    out: dict[tuple[Path, str], SchemaProblem] = {}
    for error in validator.iter_errors(data):
        for path, message in _describe(error):
            out.setdefault((path, message), SchemaProblem(path, line_of(path), message))
    return sorted(out.values(), key=lambda p: (p.line, dotted(p.path), p.message))


def schema_error(schema: Any) -> str | None:
    """Why ``schema`` is not a valid JSON Schema (Draft 2020-12), or None."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = dotted(tuple(exc.absolute_path))
        return f"{where}: {exc.message}" if where else exc.message
    return None
