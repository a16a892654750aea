"""The loader: positions, scalar typing as Kubernetes reads it, merge keys, duplicates,
Lists, non-Kubernetes YAML, encodings and hostile input."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import pytest

from gpulint.k8s.workloads import objects
from gpulint.lint.engine import Linter
from gpulint.loader.decoding import decode
from gpulint.loader.document import Document
from gpulint.loader.scalars import resolve_plain
from gpulint.loader.stream import load_text
from gpulint.model import Finding, Span


def only_document(text: str) -> Document:
    result = load_text(text)
    assert not result.problems
    assert len(result.documents) == 1
    return result.documents[0]


def lint(linter: Linter, text: str) -> list[Finding]:
    return linter.lint_bytes("manifest.yaml", text.encode("utf-8"))


GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists}
  containers:
  - name: train
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits:
        nvidia.com/gpu: 0.5
"""


# -- positions --------------------------------------------------------------------------------


def test_positions_are_one_based_with_exclusive_end() -> None:
    doc = only_document(GPU_POD)
    path = ("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")
    # `        nvidia.com/gpu: 0.5` -- the key starts at column 9, the value at column 25.
    assert doc.key_span(path) == Span(13, 9, 13, 23)
    assert doc.value_span(path) == Span(13, 25, 13, 28)
    assert doc.key_span(("apiVersion",)) == Span(1, 1, 1, 11)
    # A sequence item has no key: its key span is the item itself.
    assert doc.key_span(("spec", "containers", 0)) == doc.value_span(("spec", "containers", 0))
    assert doc.value_span(("spec", "containers", 0)).line == 9


def test_findings_on_key_and_on_value(linter: Linter) -> None:
    text = GPU_POD.replace(
        "      limits:\n", "      requests:\n        nvidia.com/gpu: 1\n      limits:\n"
    )
    found = {f.rule: f for f in lint(linter, text)}
    # GPU002 is reported on the key under requests, GPU004 on the value under limits.
    assert found["GPU002"].span == Span(13, 9, 13, 23)
    assert found["GPU004"].span == Span(15, 25, 15, 28)
    assert found["GPU004"].object is not None
    assert found["GPU004"].object.as_json() == {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": None,
        "name": "trainer",
    }


def test_quoted_and_block_values_span_their_markup() -> None:
    doc = only_document("a: \"2\"\nb: |\n  one\n  two\nc: 'x'\n")
    assert doc.value_span(("a",)) == Span(1, 4, 1, 7)  # the quotes are part of the value
    assert doc.value_span(("c",)) == Span(5, 4, 5, 7)
    block = doc.value_span(("b",))
    assert (block.line, block.column) == (2, 4)
    assert block.end_line == 5  # a block scalar ends where the next line starts


def test_columns_count_unicode_code_points(linter: Linter) -> None:
    # Two non-ASCII characters (one outside the BMP, two UTF-16 units) before the value.
    text = GPU_POD.replace(
        "      limits:\n        nvidia.com/gpu: 0.5\n",
        '      limits: {"é🚀": 1, nvidia.com/gpu: 0.5}\n',
    )
    (finding,) = (f for f in lint(linter, text) if f.rule == "GPU004")
    assert finding.span == Span(12, 41, 12, 44)
    line = text.splitlines()[finding.line - 1]
    assert line[finding.column - 1 : finding.span.end_column - 1] == "0.5"


def test_crlf_line_endings_keep_lines_and_columns(linter: Linter) -> None:
    crlf = GPU_POD.replace("\n", "\r\n")
    (lf,) = (f.span for f in lint(linter, GPU_POD) if f.rule == "GPU004")
    (got,) = (f.span for f in lint(linter, crlf) if f.rule == "GPU004")
    assert got == lf


def test_a_finding_in_aliased_content_points_at_the_anchor(linter: Linter) -> None:
    text = """\
apiVersion: v1
kind: Pod
metadata:
  name: shared
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists}
  containers:
  - name: a
    image: busybox
    resources: &res
      limits:
        nvidia.com/gpu: 0.5
  - name: b
    image: busybox
    resources: *res
"""
    spans = [f.span for f in lint(linter, text) if f.rule == "GPU004"]
    assert spans == [Span(13, 25, 13, 28)] * 2
    doc = only_document(text)
    # The alias key itself is where it is written; its content where the anchor is.
    assert doc.key_span(("spec", "containers", 1, "resources")).line == 16
    path = ("spec", "containers", 1, "resources", "limits", "nvidia.com/gpu")
    assert doc.value_span(path) == Span(13, 25, 13, 28)


def test_an_anchor_name_written_twice_names_its_latest_node(linter: Linter) -> None:
    # go-yaml (kubectl, Flux, the API server) and YAML 1.2 take a reused anchor name, an
    # alias naming the latest node with it: a Helm values block with two `&port` is common.
    text = """\
apiVersion: v1
kind: Pod
metadata:
  name: shared
spec:
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists}
  containers:
  - name: a
    image: busybox
    ports: [{containerPort: &port 8080}]
    resources: {limits: {nvidia.com/gpu: 1}}
  - name: b
    image: busybox
    ports: [{containerPort: &port 9090}, {containerPort: *port, name: again}]
"""
    assert not [f for f in lint(linter, text) if f.rule.startswith("YML")]
    doc = only_document(text)
    assert doc.data["spec"]["containers"][1]["ports"][1]["containerPort"] == 9090
    # A document too deep for the C composer's stack is read by the event composer: same.
    deep = text + "  nested: " + "[" * 300 + "]" * 300 + "\n"
    result = load_text(deep)
    assert not [p for p in result.problems if "anchor" in p.message]
    (document,) = result.documents
    assert document.data["spec"]["containers"][1]["ports"][1]["containerPort"] == 9090


def test_an_absent_path_falls_back_to_its_nearest_ancestor() -> None:
    doc = only_document(GPU_POD)
    assert doc.key_span(("spec", "tolerations")) == Span(6, 3, 6, 14)
    assert doc.key_span(("spec", "no-such-key", "deeper")) == doc.key_span(("spec",))


# -- scalars as Kubernetes reads them (go-yaml v2, YAML 1.1) ---------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2", 2),
        ("2.0", 2.0),
        ("+1", 1),
        ("-1", -1),
        ("0x10", 16),
        ("0X10", 16),
        ("017", 15),  # a leading 0 is octal, as in Go's ParseInt(s, 0, 64)
        ("0o17", 15),
        ("0b101", 5),
        ("-0b11", -3),
        ("08", 8.0),  # not octal, not an int: go-yaml falls back to a float
        ("1_000", 1000),  # YAML 1.1 digit separators
        ("1e3", 1000.0),
        (".5", 0.5),
        ("1.", 1.0),
        ("18446744073709551616", float(2**64)),  # beyond uint64: a float
        ("2e70684", "2e70684"),  # past float64: ParseFloat fails, go-yaml keeps the text
        ("-1e400", "-1e400"),
        ("yes", True),
        ("Yes", True),
        ("on", True),
        ("y", True),
        ("no", False),
        ("OFF", False),
        ("n", False),
        ("~", None),
        ("null", None),
        ("Null", None),
        ("", None),
        ("500m", "500m"),
        ("1Gi", "1Gi"),
        ("2024-05-27", "2024-05-27"),  # timestamps stay strings in an interface{}
        ("0o9", "0o9"),
        ("1.2.3", "1.2.3"),
        ("-", "-"),
        ("yes please", "yes please"),
    ],
)
def test_plain_scalars_resolve_as_go_yaml_v2(text: str, expected: Any) -> None:
    got = resolve_plain(text)
    assert got == expected
    assert type(got) is type(expected)


@pytest.mark.parametrize(
    ("text", "expected"), [(".inf", math.inf), ("-.Inf", -math.inf), ("+.INF", math.inf)]
)
def test_infinities(text: str, expected: float) -> None:
    assert resolve_plain(text) == expected


def test_nan() -> None:
    assert math.isnan(resolve_plain(".nan"))


def test_quoted_tagged_and_block_scalars_keep_their_type() -> None:
    doc = only_document('a: "2"\nb: \'017\'\nc: !!str 2\nd: !!int "3"\ne: !!float 1\nf: |\n  2\n')
    assert doc.data == {"a": "2", "b": "017", "c": "2", "d": 3, "e": 1, "f": "2\n"}


def test_resource_values_are_typed_like_kubernetes(linter: Linter) -> None:
    template = GPU_POD.replace("nvidia.com/gpu: 0.5", "nvidia.com/gpu: VALUE")
    for value, rules in [
        ("2.0", set()),  # a float that is the integer quantity 2
        ('"2"', set()),
        ("0x8", set()),  # 8 GPUs: odd, but an integer
        ("010", set()),  # octal 8
        ("yes", {"GPU005"}),  # a boolean is not a quantity
        ("~", {"GPU006"}),  # null: the API server reads zero GPUs (GPU006)
        ("'1.5'", {"GPU004"}),
    ]:
        found = {f.rule for f in lint(linter, template.replace("VALUE", value))}
        assert found == rules, value


# -- merge keys and duplicates ---------------------------------------------------------------


def test_merge_keys_explicit_keys_win_then_earlier_sources() -> None:
    doc = only_document(
        """\
base: &base {image: busybox, cpu: "1", memory: 1Gi}
gpu: &gpu {cpu: "8", gpu: 1}
merged:
  cpu: "2"
  <<: [*gpu, *base]
  name: worker
"""
    )
    assert doc.data["merged"] == {
        "cpu": "2",
        "name": "worker",
        "gpu": 1,
        "image": "busybox",
        "memory": "1Gi",
    }
    # A merged value is positioned where it is written: in the anchored mapping.
    assert doc.value_span(("merged", "gpu")).line == 2
    assert doc.value_span(("merged", "memory")).line == 1
    assert doc.value_span(("merged", "cpu")).line == 4


def test_merge_key_written_after_explicit_keys_does_not_override() -> None:
    doc = only_document("defaults: &d {replicas: 1, gpu: 1}\nspec:\n  gpu: 2\n  <<: *d\n")
    assert doc.data["spec"] == {"gpu": 2, "replicas": 1}


def test_a_quoted_merge_key_is_an_ordinary_key() -> None:
    doc = only_document("a: &a {x: 1}\nb:\n  '<<': *a\n")
    assert doc.data["b"] == {"<<": {"x": 1}}


def test_duplicate_keys_keep_the_last_value_and_report_the_second() -> None:
    result = load_text("limits:\n  nvidia.com/gpu: 1\n  nvidia.com/gpu: 2\n")
    (doc,) = result.documents
    assert doc.data == {"limits": {"nvidia.com/gpu": 2}}
    (problem,) = doc.problems
    assert problem.code == "YML002"
    assert problem.span == Span(3, 3, 3, 17)
    assert "first at line 2" in problem.message


def test_merged_keys_repeating_explicit_ones_are_not_duplicates() -> None:
    result = load_text("a: &a {x: 1, y: 2}\nb:\n  <<: *a\n  x: 3\n")
    assert result.documents[0].problems == []
    assert result.documents[0].data["b"] == {"x": 3, "y": 2}


# -- documents, Lists and what is not Kubernetes ---------------------------------------------


def test_comment_only_and_empty_documents_are_harmless(linter: Linter) -> None:
    text = "---\n# nothing here\n---\n---\n...\n---\n" + GPU_POD + "---\n"
    result = load_text(text)
    assert [d.data for d in result.documents[:3]] == [None, None, None]
    assert [f.rule for f in lint(linter, text)] == ["GPU004"]
    assert lint(linter, "") == []
    assert lint(linter, "# just a comment\n") == []


def test_list_items_are_objects_with_their_own_paths() -> None:
    doc = only_document(
        """\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Pod
  metadata: {name: a, namespace: ns}
- just a string
- apiVersion: v1
  kind: ConfigMapList
  items:
  - {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}
"""
    )
    found = [(o.path, o.kind, o.ref.name, o.ref.namespace) for o in objects(doc)]
    assert found == [
        (("items", 0), "Pod", "a", "ns"),
        (("items", 2, "items", 0), "ConfigMap", "b", None),
    ]


@pytest.mark.parametrize(
    "text",
    [
        # A GitHub Actions workflow
        "name: ci\non: [push]\njobs:\n  gpu:\n    runs-on: gpu\n    steps: [{run: nvidia-smi}]\n",
        # A compose file
        "services:\n  train:\n    image: pytorch\n    deploy: {resources: {limits: {cpus: '1'}}}\n",
        # Helm values with a GPU under requests only
        "resources:\n  requests:\n    nvidia.com/gpu: 0.5\ntolerations: []\n",
        # A scalar and a list at the top
        "just text\n",
        "- a\n- b\n",
        # kind without apiVersion, apiVersion that is not a string
        "kind: Pod\nspec: {containers: [{resources: {requests: {nvidia.com/gpu: 1}}}]}\n",
        "apiVersion: 1\nkind: Pod\nspec: {containers: [{resources: {requests: {x.io/gpu: 1}}}]}\n",
    ],
)
def test_yaml_that_is_not_a_kubernetes_object_is_skipped(linter: Linter, text: str) -> None:
    assert list(objects(only_document(text))) == []
    # Not linted as objects; a known GPU resource in one is said once, as not checked (GL204).
    known_gpu = "nvidia.com/gpu" in text
    assert [f.rule for f in lint(linter, text)] == (["GL204"] if known_gpu else [])


def test_unknown_kinds_are_objects_without_pod_specs(linter: Linter) -> None:
    # Without a workload row, only what has a pod spec's or a ResourceRequirements' shape is
    # linted (gpulint/k8s/shapes.py); a quota's hard limits and a pool's limits are neither.
    text = (
        "apiVersion: example.com/v1\nkind: GpuQuota\nmetadata: {name: q}\n"
        "spec: {hard: {requests.nvidia.com/gpu: 1},\n"
        "  pool: {replicas: 2, limits: {nvidia.com/gpu: 1.5}}}\n"
    )
    assert lint(linter, text) == []


# -- safety and hostile input ----------------------------------------------------------------


def test_no_tag_constructs_an_object(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    result = load_text(f'x: !!python/object/apply:os.system ["touch {marker}"]\n')
    assert not marker.exists()
    assert result.documents[0].data == {"x": [f"touch {marker}"]}
    assert [p.code for p in result.documents[0].problems] == ["YML003"]


def test_deep_nesting_does_not_recurse() -> None:
    depth = 3000  # far beyond Python's default recursion limit
    result = load_text("[" * depth + "]" * depth)
    data = result.documents[0].data
    for _ in range(depth - 1):
        data = data[0]
    assert data == []


def test_an_alias_bomb_stops_early() -> None:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, name in zip("abcdefghi", "bcdefghij", strict=True):
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
    started = time.perf_counter()
    result = load_text("\n".join(lines) + "\n---\nok: 1\n")
    assert time.perf_counter() - started < 30  # a sanity bound, not a benchmark
    assert [p.code for p in result.problems] == ["YML004"]
    assert [d.data for d in result.documents] == [{"ok": 1}]


def test_a_syntax_error_keeps_the_documents_before_it(linter: Linter) -> None:
    text = GPU_POD + "---\nmetadata:\n  name: [x]-y\n---\n" + GPU_POD
    found = [(f.rule, f.line) for f in lint(linter, text)]
    assert found == [("GPU004", 13), ("YML001", 16)]


#: A GPU operator ClusterPolicy whose ``{}`` sits at its key's indentation under
#: ``validator:``: the scanner reads it as a key, looks for its ':' on the next line and
#: gives up there.
CLUSTER_POLICY = """\
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  validator:
  {}
  daemonsets: {}
"""


def test_a_key_with_no_colon_is_reported_at_the_key(linter: Linter) -> None:
    """The line to edit is the ``{}`` (line 7), not line 8 where the parser stopped; the
    message names both."""
    (finding,) = lint(linter, CLUSTER_POLICY)
    assert (finding.rule, finding.line, finding.column) == ("YML001", 7, 3)
    assert "the parser stopped at line 8" in finding.message


def test_a_quote_never_closed_is_reported_at_the_quote(linter: Linter) -> None:
    text = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "gpu-pod\nspec: {}\n'
    (finding,) = lint(linter, text)
    assert (finding.rule, finding.line, finding.column) == ("YML001", 4, 9)
    assert "the parser stopped at the end of the text" in finding.message


def test_an_error_of_a_collection_stays_where_the_parser_stopped(linter: Linter) -> None:
    """A flow list never closed is reported where the parser found what it did not expect,
    not at the ``[`` far above (that context marks where the list began)."""
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  labels: [a, b\nspec: {}\n"
    (finding,) = lint(linter, text)
    assert (finding.rule, finding.line) == ("YML001", 6)
    assert "the parser stopped" not in finding.message


# -- encodings (YML005) ----------------------------------------------------------------------


def test_utf8_with_and_without_bom() -> None:
    assert decode(b"a: 1\n") == ("a: 1\n", None)
    assert decode(b"\xef\xbb\xbfa: 1\n") == ("a: 1\n", None)


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_utf16_and_utf32_with_a_bom_are_read(linter: Linter, encoding: str) -> None:
    raw = "\ufeff".encode(encoding) + GPU_POD.encode(encoding)
    assert [(f.rule, f.line, f.column) for f in linter.lint_bytes("x.yaml", raw)] == [
        ("GPU004", 13, 25)
    ]


def test_utf16_without_a_bom_is_unreadable(linter: Linter) -> None:
    (finding,) = linter.lint_bytes("x.yaml", GPU_POD.encode("utf-16-le"))
    assert finding.rule == "YML005"


def test_a_nul_byte_is_reported_on_its_line(linter: Linter) -> None:
    raw = b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\x00b\n"
    (finding,) = linter.lint_bytes("x.yaml", raw)
    assert (finding.rule, finding.line, finding.column) == ("YML005", 4, 1)
    assert "NUL" in finding.message


def test_a_file_git_crypt_encrypted_is_not_reported(linter: Linter) -> None:
    # A GitOps repository's secrets, encrypted in place: git-crypt's header, then cipher text
    # (NUL bytes among it). It is decrypted where it is applied; a NUL elsewhere still counts.
    raw = b"\x00GITCRYPT\x00" + bytes(range(256)) * 4
    assert linter.lint_bytes("apps/n8n/.secrets.yaml", raw) == []
    (finding,) = linter.lint_bytes("x.yaml", b"a: 1\n" + raw)
    assert finding.rule == "YML005"


def test_invalid_utf8_is_reported_at_the_bad_byte_in_code_points(linter: Linter) -> None:
    # "é" is two bytes in UTF-8 but one column: the Latin-1 byte after it is column 5.
    raw = "apiVersion: v1\n# né".encode() + b"\xe9 ok\n"
    (finding,) = linter.lint_bytes("x.yaml", raw)
    assert (finding.rule, finding.line, finding.column) == ("YML005", 2, 5)
    raw = 'a: "é'.encode() + b"\xe9\n"
    (finding,) = linter.lint_bytes("x.yaml", raw)
    assert (finding.line, finding.column, finding.span.end_column) == (1, 6, 7)


def test_a_colon_inside_a_flow_plain_scalar_is_read_as_kubectl_reads_it() -> None:
    # libyaml refuses `[https://...]` ("found unexpected ':'"); YAML 1.2 and go-yaml (kubectl,
    # helm) read a URL there, as JupyterHub's Chart.yaml writes `sources:`. Each document is
    # read once, and positions are the text's.
    text = (
        "kind: ConfigMap\ndata: {a: b}\n---\n"
        "apiVersion: v2\nname: jupyterhub\nsources: [https://github.com/jupyterhub/z2jh, x]\n"
        "---\nkind: Pod\n"
    )
    result = load_text(text)
    assert not result.problems
    assert [d.index for d in result.documents] == [0, 1, 2]
    chart = result.documents[1]
    assert chart.data["sources"] == ["https://github.com/jupyterhub/z2jh", "x"]
    assert chart.value_span(("sources", 0)).line == 6
    assert result.documents[2].data == {"kind": "Pod"}
