"""Property-based: whatever the input, gpulint never raises and points inside the file.

Three generators: Kubernetes-shaped documents (pods and workloads with random resources,
quantities and tolerations) written out in random YAML styles; random text over YAML's
special characters; random bytes. For the first, the YAML is valid by construction, so two
more properties hold: no YML001 (the YAML 1.2 checks raise no false alarm) and the data
read back equals the data written (the builder's resolution and structure).
"""

from __future__ import annotations

import random
import re
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from gpulint.lint.engine import Linter
from gpulint.lint.finder import load_rules
from gpulint.loader.decoding import decode
from gpulint.loader.scalars import resolve_plain
from gpulint.loader.stream import load_text
from gpulint.model import Finding

LINTER = Linter(load_rules())
BREAKS = re.compile(r"\r\n|\r|\n|\x85|\u2028|\u2029")
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def assert_inside(text: str, found: list[Finding]) -> None:
    lines = BREAKS.split(text)
    for f in found:
        span = f.span
        for line, col in ((span.line, span.column), (span.end_line, span.end_column)):
            assert 1 <= line <= len(lines), (f, len(lines))
            assert 1 <= col <= len(lines[line - 1]) + 1, (f, lines[line - 1])


# -- Kubernetes-shaped documents --------------------------------------------------------------

RESOURCE_NAMES = [
    "nvidia.com/gpu", "nvidia.com/GPU", "nvidia.com/gpus", "amd.com/gpu", "gpu", "cpu",
    "memory", "ephemeral-storage", "hugepages-2Mi", "aliyun.com/gpu-mem",
    "aliyun.com/gpu-core.percentage", "aliyun.com/gpu-count", "tencent.com/vcuda-core",
    "nvidia.com/mig-1g.5gb", "nvidia.com/mig-9g.99gb", "nvidia.com/gpu.shared",
    "example.com/widget", "requests.nvidia.com/gpu",
]  # fmt: skip
QUANTITY_TEXT = [
    "1", "2", "0", "0.5", "500m", "1.5", "1K", "1Ki", "one", "-1", "", " 2 ", "1e3", "0x10",
    "${GPUS}", "{{ .Values.gpu }}", "<count>", "25", "150", "5", "1.0001", "2Gi",
]  # fmt: skip
TAINT_KEYS = ["nvidia.com/gpu", "amd.com/gpu", "", "node-role.kubernetes.io/master"]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.sampled_from(QUANTITY_TEXT),
    st.text(max_size=12),
)
quantities = st.one_of(
    st.integers(-2, 200),
    st.sampled_from(QUANTITY_TEXT),
    st.floats(0, 10, allow_nan=False),
    st.none(),
    st.booleans(),
    st.lists(st.integers(0, 3), max_size=2),
)
resource_maps = st.dictionaries(
    st.sampled_from(RESOURCE_NAMES) | st.text(max_size=10), quantities, max_size=4
)
requirements = st.dictionaries(
    st.sampled_from(["limits", "requests", "claims"]), resource_maps | scalars, max_size=3
)
containers = st.lists(
    st.fixed_dictionaries(
        {"name": st.text(min_size=1, max_size=8), "image": st.just("nvcr.io/x:1")},
        optional={"resources": requirements | scalars, "restartPolicy": st.just("Always")},
    ),
    max_size=3,
)
tolerations = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "key": st.sampled_from(TAINT_KEYS),
            "operator": st.sampled_from(["Exists", "Equal", "Bogus"]),
            "value": st.sampled_from(["present", "true", ""]),
            "effect": st.sampled_from(["NoSchedule", "NoExecute", "PreferNoSchedule", ""]),
        },
    ),
    max_size=3,
)
pod_specs = st.fixed_dictionaries(
    {"containers": containers | scalars},
    optional={
        "initContainers": containers,
        "ephemeralContainers": containers,
        "tolerations": tolerations | scalars,
        "resources": requirements,
        "nodeName": st.text(max_size=6),
    },
)
metadata = st.fixed_dictionaries(
    {"name": st.text(max_size=10)},
    optional={
        "namespace": st.text(max_size=6),
        "annotations": st.dictionaries(st.text(max_size=10), st.text(max_size=10), max_size=2),
    },
)

KINDS = {
    "Pod": ("v1", lambda spec: spec),
    "Deployment": ("apps/v1", lambda spec: {"template": {"spec": spec}}),
    "DaemonSet": ("apps/v1", lambda spec: {"template": {"spec": spec}}),
    "Job": ("batch/v1", lambda spec: {"template": {"spec": spec}}),
    "CronJob": ("batch/v1", lambda spec: {"jobTemplate": {"spec": {"template": {"spec": spec}}}}),
    "PyTorchJob": (
        "kubeflow.org/v1",
        lambda spec: {"pytorchReplicaSpecs": {"Worker": {"template": {"spec": spec}}}},
    ),
    "ConfigMap": ("v1", lambda spec: spec),
}


@st.composite
def objects(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(sorted(KINDS)))
    api, wrap = KINDS[kind]
    obj = {"apiVersion": api, "kind": kind, "metadata": draw(metadata)}
    obj["spec" if kind != "ConfigMap" else "data"] = wrap(draw(pod_specs))
    if draw(st.booleans()):
        obj = {"apiVersion": "v1", "kind": "List", "items": [obj, draw(st.just(obj))]}
    return obj


documents = st.one_of(objects(), st.dictionaries(st.text(max_size=5), scalars, max_size=3))


# -- a YAML writer with random styles ---------------------------------------------------------

_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./-]*\Z")  # \Z: "$" would take "A\n"


def scalar_text(value: Any, rnd: random.Random) -> str:
    if value is None:
        return rnd.choice(["null", "~", "Null"])
    if isinstance(value, bool):
        return rnd.choice(["true", "True"]) if value else rnd.choice(["false", "FALSE"])
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    assert isinstance(value, str)
    if _PLAIN.match(value) and resolve_plain(value) == value and rnd.random() < 0.7:
        return value
    if value.isascii() and value.isprintable() and "'" not in value and rnd.random() < 0.3:
        return "'" + value + "'"
    return double_quoted(value)


def double_quoted(value: str) -> str:
    """A YAML double-quoted scalar (JSON's \\ud83d\\ude00 pairs are not YAML)."""
    out = []
    for ch in value:
        code = ord(ch)
        if ch in '\\"':
            out.append("\\" + ch)
        elif 0x20 <= code < 0x7F or 0xA0 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD:
            out.append(ch)
        elif code > 0xFFFF:
            out.append(ch if code <= 0x10FFFF else f"\\U{code:08x}")
        else:
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
    return '"' + "".join(out) + '"'


def flow(value: Any, rnd: random.Random) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{flow(k, rnd)}: {flow(v, rnd)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(v, rnd) for v in value) + "]"
    return scalar_text(value, rnd)  # plain text never holds a flow indicator


def block(value: Any, rnd: random.Random, indent: int) -> list[str]:
    """Lines of ``value`` as a block collection at ``indent`` (value is a non-empty dict or
    list)."""
    pad = " " * indent
    out: list[str] = []
    items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
    for key, child in items:
        head = pad + ("- " if key is None else f"{flow(key, rnd)}:")
        if isinstance(child, (dict, list)) and child and rnd.random() < 0.8:
            if key is None and isinstance(child, dict):
                inner = block(child, rnd, indent + 2)
                out.append(head + inner[0][indent + 2 :])
                out.extend(inner[1:])
            else:
                step = (
                    0 if isinstance(child, list) and key is not None and rnd.random() < 0.5 else 2
                )
                out.append(head.rstrip())
                out.extend(block(child, rnd, indent + step))
        else:
            text = flow(child, rnd) if isinstance(child, (dict, list)) else scalar_text(child, rnd)
            out.append(head + ("" if head.endswith(" ") else " ") + text)
        if rnd.random() < 0.1:
            out.append(pad + "# a comment")
        if rnd.random() < 0.05:
            out.append("")
    return out


def write_yaml(docs: list[Any], rnd: random.Random) -> str:
    parts = []
    for doc in docs:
        lines = block(doc, rnd, 0) if doc else [flow(doc, rnd)]
        parts.append("\n".join(lines) + "\n")
    text = "---\n".join(parts)
    if rnd.random() < 0.3:
        text = "---\n" + text
    if rnd.random() < 0.3:
        text = text.replace("\n", "\r\n")
    return text


@SETTINGS
@given(st.lists(documents, min_size=1, max_size=3), st.randoms(use_true_random=False))
def test_kubernetes_shaped_documents(docs: list[Any], rnd: random.Random) -> None:
    text = write_yaml(docs, rnd)
    found = LINTER.lint_text("x.yaml", text)
    assert_inside(text, found)
    assert [f for f in found if f.rule == "YML001"] == [], text
    result = load_text(text)
    assert [doc.data for doc in result.documents] == docs
    raw = ("\ufeff" + text).encode("utf-16") if rnd.random() < 0.2 else text.encode()
    assert [(f.rule, f.span) for f in LINTER.lint_bytes("x.yaml", raw)] == [
        (f.rule, f.span) for f in found
    ]


# -- random text and bytes --------------------------------------------------------------------

YAML_ALPHABET = st.sampled_from(
    [*"-:?,[]{}#&*!|>'\"%@`\\ \t\n\r.~0123456789abcxyz=+<",
     "---\n", "...\n", "- ", ": ", "&a ", "*a", "!!str ", "!!python/object:x ", "<<: ",
     "\ufeff", "\x85", "\u2028", "é", "😀", "\x00", "nvidia.com/gpu: ", "\t"]
)  # fmt: skip


@SETTINGS
@given(st.lists(YAML_ALPHABET, max_size=120).map("".join))
def test_random_yaml_text(text: str) -> None:
    found = LINTER.lint_text("x.yaml", text)
    assert_inside(text, found)


@SETTINGS
@given(st.binary(max_size=300))
def test_random_bytes(raw: bytes) -> None:
    found = LINTER.lint_bytes("x.yaml", raw)
    text, _problem = decode(raw)
    if text is not None:
        assert_inside(text, found)
    else:
        assert [f.rule for f in found] == ["YML005"]
