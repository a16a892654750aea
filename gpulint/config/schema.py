"""The JSON Schema of a configuration file.

The schema is generated from the loaded rules (:func:`config_schema`): the keys are
:data:`gpulint.config.keys.KEYS` and each rule's ``OPTIONS`` are the schema of
``rules.<CODE>``, so the options and the schema cannot drift; ``schemas/config.schema.json``
is the whole schema for the built-in rules, for editors, and a test keeps it current.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from gpulint import codes
from gpulint.config.file import GPU_TAINTS
from gpulint.data import schema_path
from gpulint.model import Severity

if TYPE_CHECKING:
    from gpulint.rule import Rule


SEVERITIES = tuple(s.label for s in sorted(Severity, reverse=True))


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
    from gpulint.k8s.taints import TAINTS_OPTION

    rule_codes = sorted(r.code for r in rules)
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
    from gpulint.config.keys import base_schema

    schema = base_schema()
    properties = schema["properties"]
    properties["fail-on"] = {"enum": list(SEVERITIES), **properties["fail-on"]}
    # GL900 (a rule raised, gpulint.model.RULE_ERROR_CODE) is always an error.
    properties["severity"]["properties"] = {
        c: {"enum": list(SEVERITIES)} for c in rule_codes if c != codes.RULE_ERROR
    }
    properties["rules"]["properties"] = {
        r.code: _options_schema(r.code, r.options_schema) for r in rules
    }
    from gpulint.cluster.platforms import CHOICES

    properties["platform"] = {"enum": list(CHOICES), **properties["platform"]}
    taints = {k: v for k, v in TAINTS_OPTION.items() if k != "default"}
    taints.update(properties[GPU_TAINTS])
    properties[GPU_TAINTS] = taints
    schema["$defs"] = dict(sorted(defs.items()))
    return schema
