"""The loader's limits and its three composing paths (the gpulint.loader package).

The C composer recurses once per nesting level and would overflow the C stack on a deep
enough document; load_text bounds the depth from the text first and picks a path that
cannot crash. These tests pin the bound, the 10,000-level limit Kubernetes' decoder has, and
that a text reads the same whichever path its longest line sends it down (inline,
large-stack thread, iterative events). What the many-document paths cost is in
bench/scaling.py (``many-docs``, ``many-docs-anchor``), not timed or counted here.
The very deep inputs (100,000 and 1,000,000 levels) run through the CLI in
test_robustness.py, in a subprocess, where a crash could not take pytest down.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from gpulint.loader import stream
from gpulint.loader.build import COMPACT_TEXT, POSITION_DEPTH
from gpulint.loader.compose import INLINE_LEVELS, MAX_DEPTH, THREAD_LEVELS, nesting_bound
from gpulint.loader.decoding import decode
from gpulint.loader.document import Document, LoadResult
from gpulint.loader.positions import Positions
from gpulint.loader.stream import load_text
from gpulint.model import Span

from .conftest import CORPUS, FIXTURES, ROOT, YAML_TEST_SUITE, gpulint_in_process


def flow(depth: int) -> str:
    return "a: " + "[" * depth + "]" * depth + "\n"


def compact(depth: int) -> str:
    """Block sequences nested ``depth`` deep on one line: ``- - - x``."""
    return "- " * depth + "x\n"


def block(depth: int) -> str:
    """Block mappings nested ``depth`` deep, one level of indentation each."""
    return "".join(" " * i + f"k{i}:\n" for i in range(depth)) + " " * depth + "leaf\n"


def deepest(data: Any) -> int:
    """How many collections are nested at the deepest point (iteratively)."""
    best, stack = 0, [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        if isinstance(node, list):
            best = max(best, depth)
            stack.extend((child, depth + 1) for child in node)
    return best


def codes(result: LoadResult) -> list[str]:
    return [p.code for p in result.problems] + [
        p.code for doc in result.documents for p in doc.problems
    ]


def summary(result: LoadResult) -> Any:
    """Everything a load produced, comparable between composing paths."""

    def norm(value: Any) -> Any:
        if isinstance(value, float) and math.isnan(value):
            return "NaN"
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items()}
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value

    return (
        [(p.code, p.span, p.message) for p in result.problems],
        [
            (
                doc.index,
                norm(doc.data),
                doc.start,
                dict(doc.positions.items()),
                [(p.code, p.span, p.message, p.doc_path) for p in doc.problems],
            )
            for doc in result.documents
        ],
    )


# -- the depth bound ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        flow(3000),
        compact(1500),
        block(300),
        "- " * 300 + "[" * 400 + "]" * 400,
        "{a: " * 900 + "}" * 900,
    ],
    ids=["flow", "compact", "block", "mixed", "flow-map"],
)
def test_nesting_bound_is_an_upper_bound(text: str) -> None:
    result = load_text(text)
    assert result.documents, codes(result)
    assert deepest(result.documents[0].data) <= nesting_bound(text)


def test_short_texts_need_no_counting() -> None:
    assert nesting_bound("a: b\n") == len("a: b\n")


# -- the 10,000-level limit -----------------------------------------------------------------


@pytest.mark.parametrize("make", [flow, compact], ids=["flow", "compact"])
def test_ten_thousand_levels_load(make: Any) -> None:
    """10,000 flow levels (inside a block mapping) or 10,000 block levels: as go-yaml, which
    counts flow levels and block indentation levels apart."""
    result = load_text(make(MAX_DEPTH))
    assert not result.problems
    assert deepest(result.documents[0].data) == MAX_DEPTH + (make is flow)


def test_both_limits_together() -> None:
    result = load_text("- " * MAX_DEPTH + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "\n")
    assert not result.problems
    assert deepest(result.documents[0].data) == 2 * MAX_DEPTH


@pytest.mark.parametrize("make", [flow, compact], ids=["flow", "compact"])
def test_one_level_more_is_kubernetes_max_depth_error(make: Any) -> None:
    result = load_text(make(MAX_DEPTH + 1))
    assert codes(result) == ["YML001"]
    message = result.problems[0].message
    assert "exceeded max depth of 10000" in message
    assert result.problems[0].span.line == 1


def test_documents_before_a_too_deep_one_are_kept() -> None:
    text = "apiVersion: v1\nkind: Pod\n---\n" + compact(MAX_DEPTH + 1)
    result = load_text(text)
    assert [doc.data["kind"] for doc in result.documents] == ["Pod"]
    assert codes(result) == ["YML001"]
    assert result.problems[0].span.line == 4


def test_deep_document_positions_are_linear() -> None:
    """Full paths are kept for the first POSITION_DEPTH levels only; deeper nodes report
    their nearest recorded ancestor, so memory stays linear in the depth."""
    doc = load_text(compact(5000)).documents[0]
    assert max(len(path) for path in doc.positions) == POSITION_DEPTH - 1
    deep_path = (0,) * 4000
    assert doc.value_span(deep_path) == doc.value_span((0,) * (POSITION_DEPTH - 1))


# -- many documents in one text --------------------------------------------------------------


DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{i}\n"
    "  labels: {{app: train}}\nspec:\n  template:\n    spec:\n      containers:\n"
    "      - name: main\n        image: registry.example/train:{i}\n"
    "        resources:\n          limits: {{nvidia.com/gpu: 2}}\n"
)


def test_an_anchor_is_read_in_its_own_document_only() -> None:
    """Aliases expand in the document that writes the anchor; later documents, with or
    without a ``&`` of their own, read as they would alone (whether one anchor at the top
    of a stream makes every later document pay for alias bookkeeping is the
    ``many-docs-anchor`` row of bench/scaling.py)."""
    text = "a: &x [1, 2]\nb: *x\n---\nc: [1, 2]\n---\nd: '&'\n---\ne: 1\n"
    result = load_text(text)
    assert [doc.data for doc in result.documents] == [
        {"a": [1, 2], "b": [1, 2]},
        {"c": [1, 2]},
        {"d": "&"},
        {"e": 1},
    ]
    assert not result.problems


# -- the three composing paths build the same thing -----------------------------------------


def sample_texts() -> list[Path]:
    """The repository's own manifests always; the optional data folders when they are set."""
    own = sorted((ROOT / "examples").glob("*.yaml")) + sorted(FIXTURES.rglob("*.yaml"))
    # Some fixtures are deliberately not text (YML005); the composers only see text.
    files = [p for p in own if decode(p.read_bytes())[0] is not None]
    if YAML_TEST_SUITE:
        files += sorted(YAML_TEST_SUITE.glob("*.yaml"))
    if CORPUS:
        files += sorted(CORPUS.rglob("*.yaml"))[:80]
    return files


def _case_id(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


def _as_without(value: Any, line: int) -> Any:
    """``value`` with every span that starts or ends at ``line + 1``, column 1 (the end of
    a text one line longer) moved to ``line``: the end of the same text without that line.
    A mark at the start of ``line`` is the end of the shorter text, an empty span there; in
    the longer text the added line's first character is under it, so its one-character
    span reads as the empty one."""
    if isinstance(value, Span):
        if value == Span(line, 1, line, 2):
            return Span(line, 1, line, 1)
        if (value.line, value.column) == (line + 1, 1):
            value = value._replace(line=line, end_line=max(line, value.end_line - 1))
        if (value.end_line, value.end_column) == (line + 1, 1):
            value = value._replace(end_line=line)
        return value
    if isinstance(value, dict):
        return {_as_without(k, line): _as_without(v, line) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_as_without(v, line) for v in value)
    return value


#: A last line long enough that the text is composed in the large-stack thread, and one
#: long enough that it is composed from events (a CA bundle, a minified JSON value).
LONG_LINES = {
    "thread": "#" + " " * INLINE_LEVELS + "\n",
    "events": "#" + " " * (THREAD_LEVELS // 2 + 1) + "\n",
}


@pytest.mark.parametrize("path", sample_texts(), ids=_case_id)
def test_a_long_last_line_changes_nothing_else(path: Path) -> None:
    """The same documents, positions and problems when a long comment line ends the text,
    whatever path that line sends the text down (a short text is composed inline)."""
    text, problem = decode(path.read_bytes())
    if text is None:
        pytest.fail(f"{path}: {problem}")
    if not text.endswith("\n"):
        text += "\n"
    alone = summary(load_text(text))
    for how, line in LONG_LINES.items():
        longer = text + line
        assert nesting_bound(longer) > (INLINE_LEVELS if how == "thread" else THREAD_LEVELS)
        got = _as_without(summary(load_text(longer)), text.count("\n") + 1)
        assert got == alone, how


def test_a_long_line_in_a_stream_of_documents() -> None:
    """Texts between INLINE_LEVELS and THREAD_LEVELS (here: a long line, like a CA bundle)
    are composed apart from the caller and handed over one document at a time: each
    document whole, at its lines."""
    source = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
        "  annotations:\n    ca: " + "Q" * 3000 + "\n"
        "spec:\n  containers:\n  - name: c\n    resources:\n      limits:\n"
        "        nvidia.com/gpu: 0.5\n"
    )
    assert INLINE_LEVELS < nesting_bound(source) <= THREAD_LEVELS
    result = load_text(source + "---\n" + source)
    assert not result.problems
    gpu = ("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")
    assert [doc.value_span(gpu) for doc in result.documents] == [
        Span(12, 25, 12, 28),
        Span(25, 25, 25, 28),
    ]
    assert [doc.data["metadata"]["annotations"]["ca"] for doc in result.documents] == [
        "Q" * 3000
    ] * 2


def test_a_syntax_error_past_a_long_line_reaches_the_caller() -> None:
    """What goes wrong while a text is composed apart from the caller is reported to it:
    the documents before the error kept, the error at its line."""
    text = "a: " + "x" * 3000 + "\n---\nb: [1, 2\nc: 3\n"
    assert INLINE_LEVELS < nesting_bound(text) <= THREAD_LEVELS
    result = load_text(text)
    assert [doc.data for doc in result.documents] == [{"a": "x" * 3000}]
    assert codes(result) == ["YML001"]
    assert result.problems[0].span.line in (3, 4)


# -- the side table -------------------------------------------------------------------------


def test_positions_make_spans_on_lookup() -> None:
    doc = load_text("a:\n  b: [1, 2]\n").documents[0]
    assert isinstance(doc.positions, Positions)
    assert doc.positions[("a", "b", 1)] == (None, Span(2, 10, 2, 11))
    assert doc.positions.get(("a", "b")) == (Span(2, 3, 2, 4), Span(2, 6, 2, 12))
    assert doc.positions.get(("nope",)) is None
    assert ("a",) in doc.positions and len(doc.positions) == 5
    # an index past the end: the nearest enclosing node, the flow sequence
    assert doc.key_span(("a", "b", 7)) == Span(2, 3, 2, 4)
    assert doc.value_span(("a", "b", 7)) == Span(2, 6, 2, 12)


def test_a_big_text_kept_whole_or_streamed_has_the_same_spans() -> None:
    """``load_text`` keeps every document of a big text, so it packs their spans and frees
    the nodes; a stream read one document at a time (what the engine lints) does not pack
    them (what each costs: the ``big-file`` rows of bench/scaling.py). Same spans."""
    text = "# vendored\n" * (COMPACT_TEXT // 11 + 1) + DEPLOYMENT.format(i=1)
    assert len(text) > COMPACT_TEXT
    kept = load_text(text).documents[-1]
    streamed = next(iter(stream.DocumentStream(text)))
    assert dict(kept.positions) == dict(streamed.positions)
    assert kept.value_span(("metadata", "name")) == streamed.value_span(("metadata", "name"))


def test_hand_built_tables_of_spans_still_work() -> None:
    span = Span(1, 1, 1, 2)
    doc = Document(0, {}, {(): (None, span)}, span)
    assert doc.value_span(("x",)) == span


def test_explicit_str_tags_stay_strings() -> None:
    data = load_text("a: !!str 5\nb: !!str\nc: 5\nd: !!int '7'\n").documents[0].data
    assert data == {"a": "5", "b": "", "c": 5, "d": 7}


def test_plain_values_met_again_are_typed_and_checked_as_the_first_time() -> None:
    """The loader keeps the plain scalars it has typed (a bounded table): a value read a
    second time, in another document or another file, is typed the same, and a lone ``-``
    is reported wherever it is written, not only the first time."""
    values = "a: 08\nb: yes\nc: ~\nd: 1e3\ne: 0x1F\nf: [-]\ng: .nan\nh: 12_000\n"
    long = "x" * 100
    text = f"{values}i: {long}\n---\n{values}i: {long}\n---\nj: [-, -]\n"
    for _ in range(2):  # the second load finds every value in the table
        result = load_text(text)
        first, second, third = (doc.data for doc in result.documents)
        assert first == second
        assert {k: v for k, v in first.items() if k != "g"} == {
            "a": 8.0,
            "b": True,
            "c": None,
            "d": 1000.0,
            "e": 31,
            "f": ["-"],
            "h": 12000,
            "i": long,
        }
        assert math.isnan(first["g"])
        assert type(first["a"]) is float and type(first["e"]) is int
        assert third == {"j": ["-", "-"]}
        dashes = [p for doc in result.documents for p in doc.problems if "lone '-'" in p.message]
        assert [(p.span.line, p.span.column) for p in dashes] == [(6, 5), (16, 5), (21, 5), (21, 8)]
    # Past the table's bound every value is still typed.
    many = "".join(f"k{i}: {i}\n" for i in range(10_000))
    assert load_text(many).documents[0].data == {f"k{i}": i for i in range(10_000)}


# -- YAML 1.2 rules libyaml lets through ----------------------------------------------------

STRICT = [
    ("[ a, b, c,#x\n]\n", (1, 11), "comment needs white space"),
    ('key: "value"# x\n', (1, 13), "comment needs white space"),
    ("block: ># x\n  text\n", (1, 9), "comment needs white space"),
    ("%YAML 1.1#x\n---\na\n", (1, 10), "comment needs white space"),
    ("---\nkey: value\n%YAML 1.2\n---\nb\n", (3, 1), "directive must follow"),
    ('quoted: "a\nb"\n', (2, 1), "indented more than its parent"),
    ("flow: [a,\nb]\n", (2, 1), "indented more than its parent"),
    ('foo: "bar\n\tbaz"\n', (2, 1), "tabs do not count"),
    ("- [-, x]\n", (1, 4), "lone '-'"),
    ("- !!str, xxx\n", (1, 3), "cannot contain ','"),
    ("s: >\n \n  \n   \n # text\n", (4, 1), "leading empty line"),
]


@pytest.mark.parametrize(("text", "where", "words"), STRICT, ids=[s[2][:20] for s in STRICT])
def test_yaml12_errors_libyaml_accepts(text: str, where: tuple[int, int], words: str) -> None:
    result = load_text(text)
    problems = result.problems + [p for doc in result.documents for p in doc.problems]
    hits = [p for p in problems if p.code == "YML001"]
    assert hits, problems
    assert (hits[0].span.line, hits[0].span.column) == where
    assert words in hits[0].message
    assert "Kubernetes' parser (go-yaml, kubectl) reads it" in hits[0].message
    assert hits[0].severity == "info"  # the cluster takes the file


def test_a_file_breaking_yaml12_on_many_lines_gets_one_note_naming_them(tmp_path: Path) -> None:
    """A generated CRD continues quoted descriptions at its key's indentation on dozens of
    lines: one YML001 note, at the first, its help naming the others."""
    field = "      f{i}:\n        description: 'a long\n        description'\n"
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: crd\ndata:\n  x: y\n"
        "schema:\n  properties:\n" + "".join(field.format(i=i) for i in range(9))
    )
    (tmp_path / ".git").mkdir()
    (tmp_path / "crd.yaml").write_text(text, encoding="utf-8")
    proc = gpulint_in_process("check", "-f", "json", "--no-cache", ".", cwd=tmp_path)
    findings = json.loads(proc.stdout)["findings"]
    assert [(f["rule"], f["line"]) for f in findings] == [("YML001", 11)]
    assert findings[0]["help"].endswith("; also lines 14, 17, 20, 23, 26 and 3 more")


ALLOWED = [
    'annotations: {\n  a: "1",\n  b: "2"\n}\n',  # closing bracket at the key's column
    "metadata:\n  annotations: {\n    a: b\n  }\n",
    'args: ["--a",\n  "--b"]\n',
    'url: "http://x/#frag"\ncolor: "#fff"\n',
    "a: b # comment\nc: [1, 2] # comment\n",
    "s: |\n\n  text\n",
    "s: |2\n   \n  text\n",
    "? a\n  b\n: c\n  d\n",
    '- "a\n  b"\n',
    "%YAML 1.1\n---\na: 1\n...\n%YAML 1.1\n---\nb: 2\n",
    "x: [-1, -a, a-]\n",
]


@pytest.mark.parametrize("text", ALLOWED)
def test_valid_layouts_are_not_flagged(text: str) -> None:
    result = load_text(text)
    problems = result.problems + [p for doc in result.documents for p in doc.problems]
    assert [p for p in problems if p.code == "YML001"] == []
