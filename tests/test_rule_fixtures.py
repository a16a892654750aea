"""Every rule fixture lints to exactly the findings written next to its lines.

All rules run on every fixture, so a fixture written for one rule also proves that the other
rules stay quiet on it. Findings are compared as a multiset of (line, code): aliased content
used twice is reported twice, at the anchor, and must be expected twice.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gpulint.cluster.model import Cluster
from gpulint.cluster.pools import build_cluster
from gpulint.k8s.devices import Registry
from gpulint.k8s.workloads import PodSpec
from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.model import RULE_ERROR_CODE, Severity
from gpulint.rule import Rule, RuleContext, Violation
from gpulint.settings import Settings
from tests.conftest import (
    FIXTURES,
    NOT_FROM_MANIFESTS,
    ROOT,
    RULE_FIXTURES,
    expectation_list,
    rule_fixtures,
)

FIXTURE_FILES = sorted(RULE_FIXTURES.glob("*/*.yaml"))


def _buggy_priority_class(pod: PodSpec, ctx: RuleContext) -> Iterator[Violation]:
    """A plugin rule with the bug GL900's documentation shows: it assumes every pod sets
    ``priorityClassName`` and raises KeyError on one that does not."""
    if pod.spec["priorityClassName"] != "gpu-batch":
        yield Violation((*pod.path, "priorityClassName"), "not an allowed priority class")


#: No built-in rule raises, so GL900's fixtures are linted with this plugin rule as well.
FIXTURE_RULES: dict[str, list[Rule]] = {
    RULE_ERROR_CODE: [
        Rule(
            "ACME010",
            "gpu-pod-priority-class",
            Severity.WARNING,
            "pod",
            {},
            "A buggy plugin rule.",
            _buggy_priority_class,
            "tests.test_rule_fixtures",
            "test",
        )
    ]
}


#: The rules that judge pods against a described cluster lint their fixtures with these node
#: inventories (as `--cluster FILE`); the other fixtures are linted without a cluster.
FIXTURE_CLUSTERS: dict[str, str] = {"GPU050": "gke-a100-12.yaml"}


@pytest.fixture(scope="module")
def linters() -> dict[str, Linter]:
    from gpulint.cluster.inventory import read_inventory
    from gpulint.cluster.model import Cluster
    from gpulint.settings import Settings
    from tests.conftest import ROOT

    rules = load_rules()
    # Every rule, the opt-in ones too (GPU003): a fixture names every finding on its lines.
    every = Settings(select=frozenset({"ALL"}))
    clusters = {
        code: Linter(
            rules,
            Settings(
                select=frozenset({"ALL"}),
                cluster=Cluster(tuple(read_inventory(ROOT / "tests/fixtures/cluster" / name))),
            ),
        )
        for code, name in FIXTURE_CLUSTERS.items()
    }
    return (
        {code: Linter([*rules, *extra], every) for code, extra in FIXTURE_RULES.items()}
        | clusters
        | {"": Linter(rules, every)}
    )


#: ``# cluster: <name>`` on a fixture's first line lints it with the cluster
#: tests/fixtures/clusters/<name>.json describes (``platform`` and ``node-pools``, as in a
#: configuration file): the rules that judge pods against the cluster's nodes need one.
CLUSTER_HEADER = "# cluster: "


def fixture_cluster(path: Path) -> Cluster | None:
    first = path.read_bytes().split(b"\n", 1)[0].decode("utf-8", "replace")
    if not first.startswith(CLUSTER_HEADER):
        return None
    source = FIXTURES / "clusters" / f"{first[len(CLUSTER_HEADER) :].strip()}.json"
    data = json.loads(source.read_text(encoding="utf-8"))
    return build_cluster(data.get("platform"), data.get("node-pools", []))


def fixture_registry(path: Path) -> Registry | None:
    """The registry a fixture holding a device plugin's configuration teaches, as the
    pre-pass of a run over that file learns it (gpulint.cluster.deviceplugins)."""
    from gpulint.cluster.deviceplugins import learned, scan
    from gpulint.k8s.devices import builtin_registry

    registry = builtin_registry()
    label = path.relative_to(ROOT).as_posix()  # as a run from the checkout names it
    run = learned(registry, scan([(label, path.read_bytes())]), None)
    return None if run is registry else run


def fixture_evidence(path: Path) -> Any:
    """What a fixture's own RuntimeClasses add to its pods (their ``scheduling.tolerations``),
    as the facts stage of a run over that file gathers them (gpulint.cluster.objects)."""
    from gpulint.cluster.evidence import Picture
    from gpulint.cluster.objects import scan

    found = scan([(path.name, path.read_bytes())])
    return Picture(runtime_tolerations=found.runtime) if found.runtime else None


@pytest.fixture
def linter(linters: dict[str, Linter], request: Any) -> Linter:
    path = request.node.callspec.params["path"]
    cluster = fixture_cluster(path)
    registry = fixture_registry(path)
    evidence = fixture_evidence(path)
    if cluster is not None or registry is not None or evidence is not None:
        settings = Settings(
            select=frozenset({"ALL"}), cluster=cluster, registry=registry, evidence=evidence
        )
        return Linter(load_rules(), settings)
    return linters.get(path.parent.name, linters[""])


def test_every_rule_has_fail_and_pass_fixtures() -> None:
    codes = sorted(r.code for r in load_rules() if r.code not in NOT_FROM_MANIFESTS)
    for code in codes:
        assert rule_fixtures(code, "fail"), f"{code} has no fail-*.yaml fixture"
    # Pass fixtures prove the absence of false alarms; every GPU rule needs its own.
    for code in (c for c in codes if c.startswith("GPU")):
        assert rule_fixtures(code, "pass"), f"{code} has no pass fixture"


@pytest.mark.parametrize(
    "path", FIXTURE_FILES, ids=[f"{p.parent.name}/{p.name}" for p in FIXTURE_FILES]
)
def test_fixture(path: Path, linter: Linter) -> None:
    raw = path.read_bytes()
    expected = expectation_list(raw.decode("utf-8", "replace"))
    if path.name.startswith("pass"):
        assert not expected, "pass fixtures carry no expectations"
    else:
        assert path.name.startswith("fail-"), "fixtures are named fail-*.yaml or pass-*.yaml"
        assert any(code == path.parent.name for _, code, _ in expected), (
            f"a fail fixture of {path.parent.name} must expect {path.parent.name}"
        )
    # Suppressed findings do not count (a fixture may show a suppression at work).
    findings = [f for f in linter.lint_bytes(str(path), raw) if f.suppression is None]
    got = Counter((f.line, f.rule) for f in findings)
    want = Counter((line, code) for line, code, _ in expected)
    assert got == want, "\n".join(
        [f"unexpected: {line} {code} x{n}" for (line, code), n in sorted((got - want).items())]
        + [
            f"  {f.line}:{f.column} {f.rule} {f.message}"
            for f in findings
            if (f.line, f.rule) in got - want
        ]
        + [f"missing: {line} {code} x{n}" for (line, code), n in sorted((want - got).items())]
    )
    columns = {(f.line, f.rule, f.column) for f in findings}
    for line, code, col in expected:
        if col is not None:
            assert (line, code, col) in columns, f"{code} at line {line} not at column {col}"
    # YAML problems, GL204 on a document that is no Kubernetes object, GL205 on a
    # template that does not parse and findings on a chart's values file (READS_CHART_VALUES,
    # or a pod rule on the pods a chart's values make: gpulint.k8s.chartvalues) have none.
    values = {r.code for r in load_rules() if r.reads_chart_values or r.scope == "pod"}
    for f in findings:
        assert (
            f.object is not None
            or f.rule.startswith("YML")
            or f.rule in ("GL204", "GL205")
            or (f.rule in values and "apiVersion" not in raw.decode("utf-8", "replace"))
        ), f"{f.rule} at line {f.line} names no object"
