"""The helpers that replaced copies of one piece of code: each still does what every copy
did (the byte-order marks both ways, the kustomization walk, the trust options)."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest

from gpulint.cli import app
from gpulint.fix.loop import encode_like
from gpulint.loader.decoding import BOMS, byte_order_mark, decode
from gpulint.render.trees import Trees

TEXT = "kind: Pod  # é\n"


@pytest.mark.parametrize(("bom", "codec"), BOMS)
def test_a_file_with_a_byte_order_mark_is_read_and_written_back_alike(
    bom: bytes, codec: str
) -> None:
    raw = bom + TEXT.encode(codec)
    assert byte_order_mark(raw) == (bom, codec)
    assert decode(raw) == (TEXT, None)
    assert encode_like(raw, TEXT + "x\n") == bom + (TEXT + "x\n").encode(codec)


def test_a_file_without_a_mark_is_utf8() -> None:
    assert byte_order_mark(TEXT.encode()) is None
    assert encode_like(TEXT.encode(), TEXT) == TEXT.encode()


def test_the_kustomization_walk_reads_each_once_through_a_cycle(tmp_path: Path) -> None:
    (tmp_path / "base").mkdir()
    (tmp_path / "overlay").mkdir()
    (tmp_path / "base" / "kustomization.yaml").write_text("resources: [../overlay, pod.yaml]\n")
    (tmp_path / "base" / "pod.yaml").write_text("kind: Pod\n")
    (tmp_path / "overlay" / "kustomization.yaml").write_text("resources: [../base]\n")
    trees = Trees(render=True)
    top = os.path.join(tmp_path, "overlay")
    walked = [k.folder for k in trees.builds_on(top)]
    assert walked == [top, os.path.join(tmp_path, "base")]
    assert set(trees.kustomizations) == set(walked)
    assert trees.consumed_by(top) == {
        os.path.join(tmp_path, "overlay", "kustomization.yaml"),
        os.path.join(tmp_path, "base", "kustomization.yaml"),
        os.path.join(tmp_path, "base", "pod.yaml"),
    }


@pytest.mark.parametrize(
    "command", [app.inspect_cmd, app.list_rules, app.show_rule, app.show_config]
)
def test_trust_options_stand_where_the_trust_parameter_was(command: object) -> None:
    """Every command that loads rules takes the same three trust options, in the same
    order (their declarations are check's table rows: tests/test_entry.py)."""
    names = list(inspect.signature(command).parameters)  # type: ignore[arg-type]
    at = names.index("allow_plugins")
    assert names[at : at + 3] == ["allow_plugins", "plugin", "rule_dir"]
    assert "trust" not in names
