"""``--diff`` of a plain file compares only the lines around its fixes' edits, composed over
the fix loop's rounds (each round plans on the previous round's text): the same unified
diff, in time linear in the file however many of its lines repeat."""

from __future__ import annotations

import difflib
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from gpulint.fix.diff import composed
from gpulint.fix.loop import apply, unified_diff
from gpulint.model import Edit, Span
from tests.conftest import gpulint_in_process

SPAN = Span(1, 1, 1, 1)


@st.composite
def _edits(draw: st.DrawFn, text: str) -> list[Edit]:
    """Non-overlapping edits of ``text``, as a fix round makes them."""
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    out: list[Edit] = []
    at = 0
    for a, b in zip(cuts[::2], cuts[1::2], strict=False):
        if a < at:
            continue
        out.append(Edit(SPAN, a, b, draw(st.sampled_from(("", "x", "y\n", "  z: 1\n")))))
        at = b
    return draw(st.permutations(out))


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab\n", max_size=40), st.data())
def test_two_rounds_of_edits_compose_into_edits_of_the_first_text(
    text: str, data: st.DataObject
) -> None:
    first = data.draw(_edits(text))
    middle = apply(text, first)
    then = data.draw(_edits(middle))
    made = composed(text, first, then)
    assert made is not None
    assert apply(text, made) == apply(middle, then)


def test_the_diff_of_composed_edits_is_difflibs(tmp_path: Path) -> None:
    old = "".join(f"k{i}: v\n" for i in range(30))
    first = [Edit(SPAN, old.index("k3:"), old.index("k3:") + 2, "K3")]
    middle = apply(old, first)
    then = [Edit(SPAN, middle.index("k20:"), middle.index("k20:") + 3, "K20")]
    new = apply(middle, then)
    made = composed(old, first, then)
    expected = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True), new.splitlines(keepends=True), "f.yaml", "f.yaml"
        )
    )
    assert unified_diff("f.yaml", old, new, made) == expected


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p{i}
spec:
  containers:
  - name: main
    image: registry.example/train:1
    resources:
      requests:
        nvidia.com/gpu: 1
"""


def test_a_plain_files_diff_of_many_identical_lines_applies(tmp_path: Path) -> None:
    """Many identical lines, a fix in each document: ``git apply`` makes the fixed file of
    the diff (as ``--fix`` writes it), and ``--diff`` writes nothing."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("needs git (git apply reads the diff)")
    text = "---\n".join(POD.format(i=i) for i in range(40))
    (tmp_path / ".git").mkdir()
    (tmp_path / "pods.yaml").write_text(text)
    run = gpulint_in_process("check", "--no-cache", "--diff", "pods.yaml", cwd=tmp_path)
    assert run.returncode in (0, 1), run.stderr
    assert (tmp_path / "pods.yaml").read_text() == text  # --diff writes nothing
    patch = run.stdout[run.stdout.index("--- pods.yaml") :]
    assert patch.count("\n+      limits:") == 40
    fixed = tmp_path / "fixed"
    fixed.mkdir()
    (fixed / "pods.yaml").write_text(text)
    gpulint_in_process("check", "--no-cache", "--fix", str(fixed / "pods.yaml"), cwd=tmp_path)
    applied = tmp_path / "applied"
    applied.mkdir()
    (applied / "pods.yaml").write_text(text)
    (applied / "fix.patch").write_text(patch)
    subprocess.run([git, "apply", "--unidiff-zero", "-p0", "fix.patch"], cwd=applied, check=True)
    assert (applied / "pods.yaml").read_text() == (fixed / "pods.yaml").read_text() != text
