"""A declarative rule's schema has a bounded cost: references that multiply are refused at
load, a validation that runs away on one object is a GL900 finding there, and a subschema's
``$schema`` never swaps RE2 for Python's backtracking ``re``.

The assertions are on what gpulint counts (schemas measured, steps taken), never on timers.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

import gpulint.util.schemacost as schemacost
from gpulint.lint.declarative import load_declarative
from gpulint.lint.engine import Linter
from gpulint.rule import RuleLoadError
from tests.conftest import gpulint_in_process

HEAD = "code: ORG001\nname: chain\ntarget: pod\nmessage: '{name}: {error}'\n"


def chain(depth: int) -> str:
    """A rule whose schema doubles per level: ``a<i>`` is an anyOf of two refs to ``a<i+1>``."""
    lines = [HEAD.rstrip("\n"), "schema:", "  $ref: '#/$defs/a0'", "  $defs:"]
    for i in range(depth):
        lines.append(
            f"    a{i}: {{anyOf: [{{$ref: '#/$defs/a{i + 1}'}}, {{$ref: '#/$defs/a{i + 1}'}}]}}"
        )
    lines.append(f"    a{depth}: {{required: [team]}}")
    return "\n".join(lines) + "\n"


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: notebook
spec:
  containers:
  - name: jupyter
    image: jupyter/tensorflow-notebook:latest
    resources:
      limits:
        nvidia.com/gpu: 1
"""


@pytest.mark.parametrize("depth", [18, 26])
def test_a_ref_chain_that_doubles_is_refused_at_load_with_its_line(
    tmp_path: Path, depth: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    measured: list[int] = []
    real = schemacost._children

    def counted(resource: object, resolver: object) -> object:
        measured.append(1)
        return real(resource, resolver)

    monkeypatch.setattr(schemacost, "_children", counted)
    path = tmp_path / "chain.yaml"
    path.write_text(chain(depth))
    with pytest.raises(RuleLoadError) as info:
        load_declarative(path)
    assert str(info.value) == (
        f"declarative rule {path}:5: schema: the schema expands to more than 100,000 schemas "
        "when its $ref are followed (references under anyOf/oneOf/allOf that multiply per "
        "level): a rule may use at most that many"
    )
    # Memoised: each schema of the file is expanded once, whatever the depth.
    assert len(measured) <= 3 * depth + 5


def test_the_refusal_through_the_cli_is_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "chain.yaml").write_text(chain(26))
    (tmp_path / ".gpulint.yaml").write_text("rule-dirs: [policy]\n")
    (tmp_path / "pod.yaml").write_text(POD)
    proc = gpulint_in_process("check", "pod.yaml", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("gpulint: error: declarative rule ")
    assert "chain.yaml:5: schema: the schema expands to more than 100,000" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_a_chain_under_the_bound_and_recursion_are_measured_not_refused(tmp_path: Path) -> None:
    path = tmp_path / "chain.yaml"
    path.write_text(chain(10))
    load_declarative(path)
    recursive = tmp_path / "tree.yaml"
    recursive.write_text(
        HEAD
        + textwrap.dedent(
            """\
            schema:
              $ref: '#/$defs/node'
              $defs:
                node:
                  properties:
                    children: {items: {$ref: '#/$defs/node'}}
            """
        )
    )
    load_declarative(recursive)


NESTED_RULE = """\
code: ORG002
name: nested
target: object
message: '{name}: {error}'
schema:
  properties:
    data: {$ref: '#/$defs/n'}
  $defs:
    n:
      required: [stop]
      properties:
        x: {anyOf: [{$ref: '#/$defs/n'}, {$ref: '#/$defs/n'}]}
"""


def nested_config_map(depth: int) -> str:
    value = "{}"
    for _ in range(depth):
        value = "{x: " + value + "}"
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata: {value}\n"


SHALLOW = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shallow\ndata: {x: {}}\n"


def test_a_validation_past_its_budget_is_gl900_and_the_rest_is_still_checked(
    tmp_path: Path,
) -> None:
    """Recursion through the value doubles per level of it: small at load, 2**30 steps on
    a value 30 deep. The object gets GL900; the other object still gets its finding."""
    path = tmp_path / "nested.yaml"
    path.write_text(NESTED_RULE)
    rule = load_declarative(path)
    text = nested_config_map(30) + "---\n" + SHALLOW
    found = Linter([rule]).lint_text("cm.yaml", text)
    assert [(f.rule, f.object and f.object.name) for f in found] == [
        ("GL900", "deep"),
        ("ORG002", "shallow"),
    ]
    assert (
        "raised BudgetExceeded: checking this object entered more than 10,000 JSON Schema "
        "subschemas" in found[0].message
    )


def test_the_budget_is_per_object_and_counts_every_subschema(tmp_path: Path) -> None:
    path = tmp_path / "nested.yaml"
    path.write_text(NESTED_RULE)
    rule = load_declarative(path)
    # Each object's budget is fresh: many shallow objects never add up to GL900.
    text = "---\n".join([nested_config_map(8)] * 40)
    found = Linter([rule]).lint_text("cm.yaml", text)
    assert {f.rule for f in found} == {"ORG002"}
    assert len(found) == 40


def test_a_subschema_s_schema_keyword_cannot_swap_in_python_re(tmp_path: Path) -> None:
    path = tmp_path / "rule.yaml"
    path.write_text(
        HEAD
        + textwrap.dedent(
            """\
            schema:
              properties:
                metadata:
                  $schema: "http://json-schema.org/draft-07/schema#"
                  properties:
                    name: {pattern: '^(a+)+$'}
            """
        )
    )
    with pytest.raises(RuleLoadError) as info:
        load_declarative(path)
    assert str(info.value).startswith(
        f"declarative rule {path}:5: schema: $schema 'http://json-schema.org/draft-07/schema#': "
        "a declarative rule's schema is JSON Schema 2020-12"
    )


def test_a_schema_reached_only_by_reference_keeps_the_rule_s_validator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``$ref`` into an ``enum`` value reaches a mapping no subschema walk sees: its
    ``$schema`` must still not change the validator (RE2 stays)."""
    path = tmp_path / "rule.yaml"
    path.write_text(
        HEAD
        + textwrap.dedent(
            """\
            schema:
              properties:
                metadata: {$ref: '#/$defs/holder/enum/0'}
              $defs:
                holder:
                  enum:
                  - $schema: "http://json-schema.org/draft-07/schema#"
                    properties:
                      name: {pattern: '^(a+)+$'}
            """
        )
    )
    rule = load_declarative(path)
    searched: list[object] = []
    real = re.search

    def spy(pattern: object, *args: object, **kwargs: object) -> object:
        searched.append(pattern)
        return real(pattern, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(re, "search", spy)
    text = POD.replace("name: notebook", "name: " + "a" * 16 + "!")
    found = Linter([rule]).lint_text("pod.yaml", text)
    assert [f.rule for f in found] == ["ORG001"]
    assert "does not match" in found[0].message
    assert "^(a+)+$" not in searched  # RE2 ran it, not Python's re


def test_the_language_server_loads_rules_the_same_way(tmp_path: Path) -> None:
    """The server's project load (no opt-in) refuses the chain too: a problem on the
    configuration, the built-in rules still run, and no validation is ever attempted."""
    from gpulint.commands.common import Trust
    from gpulint.lsp.project import load_project

    (tmp_path / ".git").mkdir()
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "chain.yaml").write_text(chain(26))
    config = tmp_path / ".gpulint.yaml"
    config.write_text("rule-dirs: [policy]\n")
    project = load_project(config, Trust())
    assert project.problem is not None
    assert (
        "chain.yaml:5: schema: the schema expands to more than 100,000" in project.problem.message
    )
    assert "ORG001" not in {r.code for r in project.rules}


#: RE2 runs this in time linear in the value, times its 454 instructions: its DFA would need
#: a state per set of the last 450 positions, so it falls back to its NFA (~3 s a MB).
SLOW = "^(?:a|b)*a(?:a|b){450}$"


def slow_rule(patterns: int) -> str:
    shown = "\n".join(f"              - pattern: '{SLOW}{'|x' * i}'" for i in range(patterns))
    return (
        "code: ORG003\nname: annotations\ntarget: object\nmessage: '{name}: {error}'\n"
        "schema:\n  properties:\n    metadata:\n      properties:\n        annotations:\n"
        "          additionalProperties:\n            allOf:\n" + shown + "\n"
    )


def annotated(name: str, value: str) -> str:
    return (
        f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n"
        f"  annotations:\n    note: {value}\n"
    )


def test_patterns_that_would_scan_past_the_file_s_budget_are_gl900_not_a_hang(
    tmp_path: Path,
) -> None:
    """A rule folder of the tree with slow patterns over a large value: the search that
    would pass the file's pattern budget is not run (GL900 on that object, one line, no
    traceback), the file's other objects are skipped by the rule, and another file, with a
    budget of its own, is checked as usual."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "policy").mkdir()
    (tmp_path / "policy" / "slow.yaml").write_text(slow_rule(3))
    (tmp_path / ".gpulint.yaml").write_text("rule-dirs: [policy]\n")
    big = annotated("big", "ab" * 64_000) + "---\n" + annotated("after", "zz")
    (tmp_path / "big.yaml").write_text(big)
    (tmp_path / "small.yaml").write_text(annotated("small", "zz"))
    proc = gpulint_in_process("check", "-f", "json", ".", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    import json

    found = [
        (f["path"], f["rule"], f["object"]["name"]) for f in json.loads(proc.stdout)["findings"]
    ]
    assert found == [("big.yaml", "GL900", "big"), ("small.yaml", "ORG003", "small")]
    message = json.loads(proc.stdout)["findings"][0]["message"]
    assert "patterns would scan more than this file's budget of" in message
    assert message.endswith(
        "it did not finish checking this object (the rule costs more than gpulint allows on "
        "this input)"
    )
    assert "\n" not in message


def test_usual_patterns_on_a_large_file_stay_within_its_budget(tmp_path: Path) -> None:
    """The budget grows with the file: an image and a label pattern on each of 2,000 pods
    never reach it."""
    path = tmp_path / "images.yaml"
    path.write_text(
        "code: ORG004\nname: images\ntarget: container\nmessage: '{container}: {error}'\n"
        "schema:\n  properties:\n"
        "    image: {pattern: '^registry\\.example/[a-z0-9/._-]+:[0-9]+$'}\n"
    )
    labels = tmp_path / "labels.yaml"
    labels.write_text(
        "code: ORG005\nname: labels\ntarget: object\nmessage: '{name}: {error}'\n"
        "schema:\n  properties:\n    metadata:\n      properties:\n        labels:\n"
        "          patternProperties:\n"
        "            '^[a-z0-9.-/]{1,63}$': {pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'}\n"
    )
    rules = [load_declarative(path), load_declarative(labels)]
    pod = POD.replace("  name: notebook\n", "  name: notebook\n  labels: {team: ml, app: nb}\n")
    pod = pod.replace("jupyter/tensorflow-notebook:latest", "registry.example/nb:1")
    found = Linter(rules).lint_text("pods.yaml", "---\n".join([pod] * 2_000))
    assert found == []
