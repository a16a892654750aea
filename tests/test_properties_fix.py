"""Property-based: random manifests with random GPU mistakes, written with random comments,
block and flow styles, indentation and CRLF line endings, fixed with ``--unsafe-fixes``.

Fixing never breaks parsing, never loses a comment, is idempotent (a second fix changes
nothing), and the decoded objects equal the input's except for the intended change (which
this test computes on the data, independently of the edits).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from gpulint.fix.loop import UNSAFE, fix_text
from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.loader.stream import load_text
from gpulint.settings import Settings
from tests.test_fixes import FIXABLE

GPU = "nvidia.com/gpu"
TOLERATION = {"key": GPU, "operator": "Exists", "effect": "NoSchedule"}
MISTAKES = ("GPU001", "GPU003", "GPU010", "GPU020", "GPU030", "none")

LINTER = Linter(load_rules(), Settings(select=frozenset(FIXABLE)))


# -- the data, and what the fixes are meant to do to it ---------------------------------------


@st.composite
def pods(draw: st.DrawFn) -> tuple[dict[str, Any], set[str]]:
    """A GPU pod (as data) and the mistakes in it."""
    containers = []
    mistakes: set[str] = set()
    count = draw(st.integers(1, 2))
    for i in range(count):
        mistake = draw(st.sampled_from((*MISTAKES[:3], "none")))
        other = {"cpu": "500m"} if draw(st.booleans()) else {}
        n = draw(st.integers(1, 4))
        if mistake == "GPU001":
            resources = {"requests": {**other, GPU: n}}
            if draw(st.booleans()):
                resources["limits"] = {"memory": "1Gi"}
        elif mistake == "GPU003":
            resources = {"limits": {GPU: n}, "requests": {GPU: n, **other}}
        elif mistake == "GPU010":
            resources = {"limits": {"nvidia.com/gpus": n, **other}}
        else:
            resources = {"limits": {**other, GPU: n}}
        mistakes.add(mistake)
        containers.append({"name": f"c{i}", "image": "pytorch/pytorch", "resources": resources})
    spec: dict[str, Any] = {"containers": containers}
    if count == 1 and draw(st.booleans()):
        spec["resources"] = {
            "limits": {"rdma/ib": 1, **({"memory": "2Gi"} if draw(st.booleans()) else {})}
        }
        mistakes.add("GPU030")
    if draw(st.booleans()):
        spec["tolerations"] = [TOLERATION]
    else:
        mistakes.add("GPU020")
        if draw(st.booleans()):
            # A toleration every cluster's nodes may need (a pod tolerating a taint of
            # particular nodes, `dedicated`, names its GPU nodes' taint: GPU020 then says
            # nothing, and there is no fix to make).
            spec["tolerations"] = [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}
            ]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec}
    return pod, mistakes - {"none"}


def intended(pod: dict[str, Any]) -> dict[str, Any]:
    """The pod as the fixes are meant to leave it."""
    out = copy.deepcopy(pod)
    spec = out["spec"]
    for c in spec["containers"]:
        res = c["resources"]
        requests, limits = res.get("requests", {}), res.setdefault("limits", {})
        if "nvidia.com/gpus" in limits:
            limits[GPU] = limits.pop("nvidia.com/gpus")
        if GPU in requests:
            limits.setdefault(GPU, requests[GPU])
            del requests[GPU]
    pod_limits = spec.get("resources", {}).get("limits", {})
    if "rdma/ib" in pod_limits:
        target = spec["containers"][0]["resources"].setdefault("limits", {})
        target["rdma/ib"] = pod_limits.pop("rdma/ib")
    tolerations = spec.setdefault("tolerations", [])
    if TOLERATION not in tolerations:
        tolerations.append(TOLERATION)
    return out


def normal(data: Any) -> Any:
    """Data with empty or null mappings dropped (a fix deletes a mapping it empties) and
    sequences of tolerations in a fixed order (a fix adds one at the top)."""
    if isinstance(data, dict):
        kept = {k: normal(v) for k, v in data.items()}
        return {k: v for k, v in kept.items() if v not in ({}, None)}
    if isinstance(data, list):
        items = [normal(v) for v in data]
        if all(isinstance(v, dict) and "operator" in v for v in items):
            return sorted(items, key=lambda v: json.dumps(v, sort_keys=True))
        return items
    return data


# -- writing it as YAML, in random styles ------------------------------------------------------


class Writer:
    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.comments = 0
        self.indentless = draw(st.booleans())
        self.step = draw(st.sampled_from([2, 4]))

    def comment(self) -> str:
        if not self.draw(st.booleans()):
            return ""
        self.comments += 1
        return f"  # c{self.comments}"

    def scalar(self, value: Any) -> str:
        if isinstance(value, str) and self.draw(st.booleans()):
            return json.dumps(value)
        return str(value)

    def flow(self, value: Any) -> str:
        if isinstance(value, dict):
            return "{" + ", ".join(f"{k}: {self.flow(v)}" for k, v in value.items()) + "}"
        if isinstance(value, list):
            return "[" + ", ".join(self.flow(v) for v in value) + "]"
        return self.scalar(value)

    def mapping(self, data: dict[str, Any], indent: int, first: str = "") -> list[str]:
        """Block lines of ``data`` at ``indent``; ``first`` replaces the first line's
        indentation (a sequence item's ``- ``)."""
        lines: list[str] = []
        for key, value in data.items():
            pad = " " * indent
            if lines or not first:
                if self.draw(st.integers(0, 5)) == 0:
                    self.comments += 1
                    lines.append(f"{pad}# c{self.comments}")
                lead = pad
            else:
                lead = first
            if isinstance(value, dict) and value and self.draw(st.integers(0, 3)) != 0:
                lines.append(f"{lead}{key}:{self.comment()}")
                lines.extend(self.mapping(value, indent + self.step))
            elif isinstance(value, list) and value:
                lines.append(f"{lead}{key}:{self.comment()}")
                dash = indent if self.indentless else indent + self.step
                for item in value:
                    if isinstance(item, dict) and self.draw(st.integers(0, 3)) != 0:
                        lines.extend(self.mapping(item, dash + 2, " " * dash + "- "))
                    else:
                        lines.append(f"{' ' * dash}- {self.flow(item)}{self.comment()}")
            else:
                lines.append(f"{lead}{key}: {self.flow(value)}{self.comment()}")
        return lines


@st.composite
def manifests(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], int]:
    """YAML text, the pods it holds, and how many comments it has."""
    writer = Writer(draw)
    pods_ = [draw(pods()) for _ in range(draw(st.integers(1, 2)))]
    docs = ["\n".join(writer.mapping(pod, 0)) + "\n" for pod, _ in pods_]
    text = "---\n".join(docs)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text, [pod for pod, _ in pods_], writer.comments


def decoded(text: str) -> list[Any]:
    result = load_text(text)
    assert result.problems == [] and all(d.problems == [] for d in result.documents), text
    return [d.data for d in result.documents]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifests())
def test_fixing_keeps_parsing_comments_and_meaning(case: tuple[str, list[Any], int]) -> None:
    text, pods_, comments = case
    assert decoded(text) == pods_
    result = fix_text(LINTER.lint_shaped, "t.yaml", text, UNSAFE)
    fixed = result.text
    # Parses, and means what the fixes intend and nothing else.
    assert [normal(d) for d in decoded(fixed)] == [normal(intended(p)) for p in pods_], fixed
    # Not one comment lost.
    found = re.findall(r"# c(\d+)\b", fixed)
    assert sorted(map(int, found)) == list(range(1, comments + 1)), fixed
    # CRLF stays CRLF.
    if "\r\n" in text:
        assert "\n" not in fixed.replace("\r\n", "")
    # Idempotent, and nothing fixable is left.
    again = fix_text(LINTER.lint_shaped, "t.yaml", fixed, UNSAFE)
    assert again.text == fixed and again.fixed == 0
    assert [f for f in again.findings if f.rule in FIXABLE] == []
