"""Hostile input never crashes, hangs or leaks (issue: "impossible to knock over").

Every case runs the installed ``gpulint`` in a subprocess, with a timeout, and checks the
contract: a clear finding or message, the other files still linted, exit code 0, 1 or 2 and
never a traceback or a signal. Findings are read from ``--format json``; ``--select`` keeps
the expectations to the rules each case is about.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from gpulint.lint.engine import Linter
from gpulint.lint.foreign import kubernetes_text
from gpulint.loader.decoding import decode

from .conftest import (
    CORPUS,
    FIXTURES,
    ROOT,
    YAML_TEST_SUITE,
    data_cases,
    gpulint_cmd,
    gpulint_in_process,
    gpulint_subprocess,
    needs_corpus,
    needs_yaml_test_suite,
    said,
)

SUITE = YAML_TEST_SUITE or Path()

#: A GPU pod with a fractional GPU count: GPU004 at line 11, column 25.
GPU_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
  - name: main
    image: nvcr.io/nvidia/pytorch:24.01-py3
    resources:
      limits:
        nvidia.com/gpu: 0.5
"""
GPU_POD_AT = (11, 25)
YAML_BREAKS = re.compile(r"\r\n|\r|\n|\x85|\u2028|\u2029")


def limit_memory(gib: float) -> Callable[[], None]:
    """A preexec_fn capping the child's address space: an unbounded expansion fails loudly."""

    def apply() -> None:
        size = int(gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))

    return apply


def gpulint(
    *args: str,
    cwd: Path,
    stdin: bytes | None = None,
    timeout: float | None = None,
    memory_gib: float | None = None,
    select: str | None = "YML,GPU004",
) -> subprocess.CompletedProcess[bytes]:
    """``gpulint check --format json [--select ...] ARGS`` (the expectations of these
    tests are about the input rules and one GPU rule, whatever else the catalog holds).

    A test of bounded time or memory (``timeout``, ``memory_gib``) runs the console script in
    a process of its own that can be stopped and limited; the others run in-process."""
    options = ["check", "--format", "json", *(["--select", select] if select else [])]
    if timeout is None and memory_gib is None:
        proc = gpulint_in_process(*options, *args, cwd=cwd, stdin=stdin, text=False)
    else:
        proc = gpulint_subprocess(
            *options,
            *args,
            cwd=cwd,
            stdin=stdin,
            text=False,
            timeout=timeout or 120,
            preexec_fn=limit_memory(memory_gib) if memory_gib else None,
        )
    assert proc.returncode in (0, 1, 2), (proc.returncode, proc.stderr.decode()[-2000:])
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()[-2000:]
    return proc


def findings(proc: subprocess.CompletedProcess[bytes]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(proc.stdout)["findings"]
    return found


def by_file(proc: subprocess.CompletedProcess[bytes]) -> dict[str, list[tuple[str, int, int]]]:
    out: dict[str, list[tuple[str, int, int]]] = {}
    for f in findings(proc):
        out.setdefault(Path(f["path"]).name, []).append((f["rule"], f["line"], f["column"]))
    return out


def assert_inside(text: str, items: Sequence[dict[str, Any]]) -> None:
    """Every reported position lies inside the text (a column may be one past the end)."""
    lines = YAML_BREAKS.split(text)
    for f in items:
        for line, col in ((f["line"], f["column"]), (f["end_line"], f["end_column"])):
            assert 1 <= line <= len(lines), (f, len(lines))
            assert 1 <= col <= len(lines[line - 1]) + 1, (f, lines[line - 1])


def write(folder: Path, name: str, content: str | bytes) -> Path:
    path = folder / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8", newline="")
    else:
        path.write_bytes(content)
    return path


# -- the YAML test suite ----------------------------------------------------------------------


@needs_yaml_test_suite
def test_yaml_test_suite_in_one_run(tmp_path: Path) -> None:
    # Hundreds of files: forked workers, a process of its own.
    proc = gpulint(str(SUITE), cwd=tmp_path, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    assert report["summary"]["files"] == 402 + 1  # its README.md: walked as Markdown
    grouped = by_file(proc)
    invalid = sorted(p.name for p in SUITE.glob("*.invalid.yaml"))
    assert len(invalid) == 94
    # A file that writes no apiVersion and kind is no manifest: its YAML is not reported
    # (each case is linted as a manifest in test_yaml_test_suite_case).
    kube = [n for n in invalid if kubernetes_text(decode((SUITE / n).read_bytes())[0] or "")]
    assert [n for n in kube if not any(c == "YML001" for c, *_ in grouped.get(n, []))] == []
    for name in {Path(f["path"]).name for f in report["findings"]}:
        text, _ = decode((SUITE / name).read_bytes())
        assert text is not None
        assert_inside(text, [f for f in report["findings"] if Path(f["path"]).name == name])


@pytest.mark.parametrize(
    "case",
    data_cases("GPULINT_YAML_TEST_SUITE", lambda suite: sorted(suite.glob("*.yaml"))),
    ids=lambda p: p.name,
)
def test_yaml_test_suite_case(case: Path, linter: Linter) -> None:
    """Each case on its own, in process, read as a manifest: never an exception, YML001
    exactly where the suite says the input is invalid or libyaml rejects it, positions
    inside the file."""
    raw = case.read_bytes()
    text, _ = decode(raw)
    assert text is not None
    found = linter.lint_shaped(case.name, text, kubernetes=True)[0]
    codes = {f.rule for f in found}
    if case.name.endswith(".invalid.yaml"):
        assert "YML001" in codes
    assert_inside(
        text,
        [
            {"line": f.line, "column": f.column, "end_line": f.span[2], "end_column": f.span[3]}
            for f in found
        ],
    )


# -- expansion and depth ----------------------------------------------------------------------


def billion_laughs() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def test_alias_bomb_is_refused_in_bounded_time_and_memory(tmp_path: Path) -> None:
    write(tmp_path, "bomb.yaml", billion_laughs() + "---\n" + GPU_POD)
    write(tmp_path, "pod.yaml", GPU_POD)
    proc = gpulint(".",
        cwd=tmp_path, timeout=60, memory_gib=1.5,
    )  # fmt: skip
    assert proc.returncode == 1
    grouped = by_file(proc)
    assert grouped["bomb.yaml"] == [("YML004", 1, 1), ("GPU004", 11 + 10, 25)]
    assert grouped["pod.yaml"] == [("GPU004", *GPU_POD_AT)]
    message = next(said(f) for f in findings(proc) if f["rule"] == "YML004")
    assert "excessive aliasing" in message


def test_alias_bomb_on_stdin(tmp_path: Path) -> None:
    proc = gpulint("-",
        cwd=tmp_path, stdin=billion_laughs().encode(), timeout=60, memory_gib=1.5,
    )  # fmt: skip
    assert [f["rule"] for f in findings(proc)] == ["YML004"]
    assert findings(proc)[0]["path"] == "<stdin>"


def test_self_referencing_anchor(tmp_path: Path) -> None:
    write(tmp_path, "loop.yaml", "apiVersion: v1\nkind: List\na: &a [*a, *a]\nb: &b {x: *b}\n")
    proc = gpulint("loop.yaml", cwd=tmp_path, timeout=60)
    assert {f["rule"] for f in findings(proc)} <= {"YML001", "YML004"}
    assert findings(proc)


DEEP = {
    "flow-10000.yaml": ("a: " + "[" * 10_000 + "]" * 10_000 + "\n", None),
    "compact-10000.yaml": ("- " * 10_000 + "x\n", None),
    "block-3000.yaml": (
        "".join(" " * i + f"k{i}:\n" for i in range(3000)) + " " * 3000 + "x\n",
        None,
    ),
    "compact-10001.yaml": ("- " * 10_001 + "x\n", (1, 20_001)),
    "flow-100000.yaml": ("[" * 100_000 + "]" * 100_000 + "\n", (1, 10_001)),
    "compact-100000.yaml": ("- " * 100_000 + "x\n", (1, 20_001)),
    "flow-1000000.yaml": ("a: " + "{a: " * 1_000_000 + "}" * 1_000_000 + "\n", (1, 40_004)),
    "compact-1000000.yaml": ("- " * 1_000_000 + "x\n", (1, 20_001)),
    "mixed-1000000.yaml": ("- " * 500_000 + "[" * 500_000 + "\n", (1, 20_001)),
}


def test_deep_nesting_never_crashes(tmp_path: Path) -> None:
    """10,000 levels load; beyond, YML001 at the first level too deep, as kubectl says;
    100,000 and 1,000,000 levels (which overflow the C composer's stack) the same."""
    for name, (text, _) in DEEP.items():
        write(tmp_path, name, text)
    write(tmp_path, "pod.yaml", GPU_POD)
    proc = gpulint(".",
        cwd=tmp_path, timeout=120, memory_gib=2,
    )  # fmt: skip
    assert proc.returncode == 1
    grouped = by_file(proc)
    for name, (_, where) in DEEP.items():
        if where is None:
            assert name not in grouped, grouped.get(name)
        else:
            assert grouped[name] == [("YML001", *where)], name
    assert grouped["pod.yaml"] == [("GPU004", *GPU_POD_AT)]
    messages = {said(f) for f in findings(proc) if f["rule"] == "YML001"}
    assert all("exceeded max depth of 10000" in m for m in messages)


def test_deep_nesting_on_stdin(tmp_path: Path) -> None:
    proc = gpulint("-", cwd=tmp_path, stdin=b"[" * 1_000_000, timeout=60)
    assert [(f["rule"], f["line"], f["column"]) for f in findings(proc)] == [("YML001", 1, 10_001)]


# -- size -------------------------------------------------------------------------------------


def test_50_mb_manifest(tmp_path: Path) -> None:
    """A 50 MB ConfigMap, then a GPU pod: linted to the end, the finding on its exact line."""
    lines = 50 * 2**20 // 80
    blob = "    " + "QUJD" * 19 + "\n"
    head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: weights\ndata:\n  blob: |\n"
    path = tmp_path / "big.yaml"
    with path.open("w", encoding="utf-8") as fh:
        fh.write(head)
        fh.write(blob * lines)
        fh.write("---\n")
        fh.write(GPU_POD)
    assert path.stat().st_size > 50 * 2**20
    write(tmp_path, "pod.yaml", GPU_POD)
    proc = gpulint(".", cwd=tmp_path, timeout=120, memory_gib=3)
    grouped = by_file(proc)
    offset = head.count("\n") + lines + 1
    assert grouped["big.yaml"] == [("GPU004", GPU_POD_AT[0] + offset, GPU_POD_AT[1])]
    assert grouped["pod.yaml"] == [("GPU004", *GPU_POD_AT)]


def test_many_documents_in_one_file(tmp_path: Path) -> None:
    """5,000 documents (2.5 MB) in one file: every one linted, in order."""
    write(tmp_path, "stream.yaml", "---\n".join([GPU_POD] * 5000))
    proc = gpulint("stream.yaml", cwd=tmp_path, timeout=120)
    lines = [f["line"] for f in findings(proc) if f["rule"] == "GPU004"]
    step = GPU_POD.count("\n") + 1
    assert lines == [GPU_POD_AT[0] + i * step for i in range(5000)]


def test_over_256_mib_is_not_read(tmp_path: Path) -> None:
    with (tmp_path / "huge.yaml").open("wb") as fh:
        fh.truncate(300 * 2**20)  # sparse: no disk used
    write(tmp_path, "pod.yaml", GPU_POD)
    proc = gpulint(".", cwd=tmp_path, timeout=60, memory_gib=1)
    grouped = by_file(proc)
    assert grouped["huge.yaml"] == [("YML005", 1, 1)]
    assert "256 MiB" in findings(proc)[0]["message"]
    assert grouped["pod.yaml"] == [("GPU004", *GPU_POD_AT)]


# -- bytes and encodings ----------------------------------------------------------------------


def test_binary_and_bad_encodings(tmp_path: Path) -> None:
    write(tmp_path, "nul.yaml", "a: 1\nb: 2\x00\nc: 3\n")
    write(tmp_path, "binary.yaml", bytes(range(256)) * 64)
    write(tmp_path, "latin1.yaml", "a: 1\n# caf\xe9\n".encode("latin-1"))
    write(tmp_path, "pod.yaml", GPU_POD)
    proc = gpulint(".", cwd=tmp_path)
    grouped = by_file(proc)
    assert grouped["nul.yaml"] == [("YML005", 2, 1)]
    assert grouped["binary.yaml"] == [("YML005", 1, 1)]
    assert grouped["latin1.yaml"] == [("YML005", 2, 6)]
    assert grouped["pod.yaml"] == [("GPU004", *GPU_POD_AT)]
    messages = {Path(f["path"]).name: said(f) for f in findings(proc)}
    assert "NUL" in messages["nul.yaml"] and "UTF-8" in messages["latin1.yaml"]


@pytest.mark.parametrize(
    ("name", "encode"),
    [
        ("utf8-bom", lambda t: b"\xef\xbb\xbf" + t.encode("utf-8")),
        ("utf16-le", lambda t: b"\xff\xfe" + t.encode("utf-16-le")),
        ("utf16-be", lambda t: b"\xfe\xff" + t.encode("utf-16-be")),
        ("utf32-le", lambda t: b"\xff\xfe\x00\x00" + t.encode("utf-32-le")),
    ],
)
def test_byte_order_marks(tmp_path: Path, name: str, encode: Callable[[str], bytes]) -> None:
    text = "# ünïcödé\n" + GPU_POD
    write(tmp_path, f"{name}.yaml", encode(text))
    proc = gpulint(f"{name}.yaml", cwd=tmp_path)
    assert [(f["rule"], f["line"], f["column"]) for f in findings(proc)] == [
        ("GPU004", GPU_POD_AT[0] + 1, GPU_POD_AT[1])
    ]


def test_crlf_positions_are_exact(tmp_path: Path) -> None:
    write(tmp_path, "lf.yaml", GPU_POD)
    write(tmp_path, "crlf.yaml", GPU_POD.replace("\n", "\r\n"))
    write(tmp_path, "cr.yaml", GPU_POD.replace("\n", "\r"))
    proc = gpulint(".", cwd=tmp_path)
    grouped = by_file(proc)
    assert grouped["crlf.yaml"] == grouped["lf.yaml"] == grouped["cr.yaml"]
    assert grouped["lf.yaml"] == [("GPU004", *GPU_POD_AT)]
    for f in findings(proc):
        assert f["end_column"] == GPU_POD_AT[1] + 3  # "0.5", not "0.5\r"


def test_tabs(tmp_path: Path) -> None:
    write(tmp_path, "tab-indent.yaml", GPU_POD.replace("      limits:", "\tlimits:"))
    write(tmp_path, "tab-in-value.yaml", GPU_POD.replace("name: main", "name: 'a\tb'\t# tab"))
    proc = gpulint(".", cwd=tmp_path)
    grouped = by_file(proc)
    assert grouped["tab-indent.yaml"] == [("YML001", 10, 1)]
    assert grouped["tab-in-value.yaml"] == [("GPU004", *GPU_POD_AT)]


# -- what the YAML says -----------------------------------------------------------------------


def test_duplicate_gpu_key(tmp_path: Path) -> None:
    text = GPU_POD.replace("nvidia.com/gpu: 0.5", "nvidia.com/gpu: 1\n        nvidia.com/gpu: 2")
    write(tmp_path, "dup.yaml", text)
    proc = gpulint("dup.yaml", cwd=tmp_path)
    assert [(f["rule"], f["line"], f["column"]) for f in findings(proc)] == [("YML002", 12, 9)]
    message = findings(proc)[0]["message"]
    assert "'nvidia.com/gpu'" in message and "line 11" in message
    assert proc.returncode == 1


def test_object_tags_are_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    text = (
        "apiVersion: v1\nkind: ConfigMap\n"
        f'a: !!python/object/apply:os.system ["touch {marker}"]\n'
        f'b: !!python/object/new:os.system ["touch {marker}"]\n'
        f"c: !!python/object/apply:builtins.exec [\"open('{marker}', 'w')\"]\n"
        "d: !!python/name:os.system\n"
        "e: !Ref SomeParameter\n"
        "f: !!binary aGk=\n"
        f"g: !!python/object/apply:subprocess.call [[touch, {marker}]]\n"
    )
    write(tmp_path, "tags.yaml", text)
    for args, stdin in ((["tags.yaml"], None), (["-"], text.encode())):
        proc = gpulint(*args, cwd=tmp_path, stdin=stdin)
        got = [(f["rule"], f["line"], f["column"]) for f in findings(proc)]
        assert got == [("YML003", line, 4) for line in range(3, 10)]
        assert not marker.exists()
    assert "constructed nothing" in said(findings(proc)[0])


# -- paths ------------------------------------------------------------------------------------


def test_unreadable_files(tmp_path: Path) -> None:
    """Running as root makes chmod 000 readable; a dangling symlink and a file whose read
    fails (/proc/self/mem: EIO) are unreadable for everyone. (A link to /proc/self/mem is a
    link out of the tree, not read at all: the file itself is named to get EIO.)"""
    (tmp_path / "dangling.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (tmp_path / "eio.yaml").symlink_to("/proc/self/mem")
    write(tmp_path, "pod.yaml", GPU_POD)
    for args in (["."], ["dangling.yaml", "eio.yaml", "pod.yaml"]):
        proc = gpulint(*args, cwd=tmp_path)
        grouped = by_file(proc)
        assert grouped["dangling.yaml"] == [("YML005", 1, 1)]
        assert grouped["eio.yaml"] == [("YML005", 1, 1)]
        assert grouped["pod.yaml"] == [("GPU004", *GPU_POD_AT)]
        assert proc.returncode == 1
    messages = {Path(f["path"]).name: said(f) for f in findings(proc)}
    assert "link to a file that does not exist" in messages["dangling.yaml"]
    assert "outside the repository" in messages["eio.yaml"]
    severity = {Path(f["path"]).name: f["severity"] for f in findings(proc)}
    assert severity["dangling.yaml"] == "info"  # its content is unknown, not wrong
    assert severity["eio.yaml"] == "error"
    # A link a docs folder keeps to a moved file fails no run.
    (tmp_path / "eio.yaml").unlink()
    (tmp_path / "pod.yaml").unlink()
    assert gpulint(".", cwd=tmp_path).returncode == 0
    eio = findings(gpulint("/proc/self/mem", cwd=tmp_path))
    assert [(f["rule"], f["path"]) for f in eio] == [("YML005", "/proc/self/mem")]
    assert "Input/output error" in said(eio[0])


def test_missing_paths_exit_2_and_the_rest_is_linted(tmp_path: Path) -> None:
    write(tmp_path, "pod.yaml", GPU_POD)
    proc = gpulint("missing.yaml", "pod.yaml", "gone/", cwd=tmp_path)
    assert proc.returncode == 2
    assert by_file(proc) == {"pod.yaml": [("GPU004", *GPU_POD_AT)]}
    err = proc.stderr.decode()
    assert "missing.yaml: no such file or directory" in err
    assert "gone/: no such file or directory" in err


def test_directory_symlink_loops(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "up").symlink_to(tmp_path / "a")
    (tmp_path / "a" / "self").symlink_to(".")
    (tmp_path / "dir.yaml").mkdir()  # a folder named like a manifest is walked, not read
    write(tmp_path / "a" / "b", "pod.yaml", GPU_POD)
    write(tmp_path / "dir.yaml", "inner.yaml", GPU_POD)
    proc = gpulint(".", cwd=tmp_path, timeout=30)
    paths = sorted(f["path"] for f in findings(proc))
    assert paths == [os.path.join("a", "b", "pod.yaml"), os.path.join("dir.yaml", "inner.yaml")]


def test_fifo_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    write(tmp_path, "pod.yaml", GPU_POD)
    for args in (["pipe.yaml", "pod.yaml"], ["."]):
        proc = gpulint(*args, cwd=tmp_path, timeout=30)
        grouped = by_file(proc)
        assert grouped["pipe.yaml"] == [("YML005", 1, 1)]
        assert grouped["pod.yaml"] == [("GPU004", *GPU_POD_AT)]
    assert "FIFO" in findings(proc)[0]["message"] or "FIFO" in findings(proc)[1]["message"]


def test_hostile_stdin(tmp_path: Path) -> None:
    head = "apiVersion: v1\nkind: ConfigMap\n"
    cases = {
        b"\x00\x01\x02 binary": "YML005",
        f"{head}a: [1, 2\n".encode(): "YML001",
        b"\xff\xfe"
        + f"{head}a: !!python/object/apply:os.system [x]\n".encode("utf-16-le"): "YML003",
    }
    for data, code in cases.items():
        proc = gpulint("--stdin-filename", "in.yaml", "-",
                       cwd=tmp_path, stdin=data)  # fmt: skip
        assert [f["rule"] for f in findings(proc)] == [code]
        assert findings(proc)[0]["path"] == "in.yaml"


# -- parallel runs ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [
        # The repository's 110 manifests: above the 64 files a parallel run starts at.
        pytest.param((ROOT / "examples", FIXTURES), id="repository"),
        pytest.param((CORPUS,), id="corpus", marks=needs_corpus),
    ],
)
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_parallel_output_is_byte_identical(
    tmp_path: Path, fmt: str, data: tuple[Path, ...]
) -> None:
    args = ["check", "--format", fmt, *map(str, data)]
    # The workers need processes of their own; the serial run they are compared with does not
    # (in-process runs are serial: conftest.py), and spares a start of the interpreter.
    serial = gpulint_in_process(*args, cwd=tmp_path, text=False)
    parallel = subprocess.run(
        [*gpulint_cmd(), *args[:3], "--jobs", "4", *args[3:]],
        cwd=tmp_path,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert parallel.stdout == serial.stdout
    assert parallel.returncode == serial.returncode
    assert serial.stdout.count(b"\n") > 100
