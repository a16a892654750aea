"""Engines and launchers (``gpulint/data/engines.json``): the data is valid, and command lines
find the engine they start and its own options."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from gpulint.data import data_path
from gpulint.k8s.engines import builtin_engines, command_words, find_engine, flag_value
from gpulint.k8s.workloads import Container
from tests.conftest import ROOT


def test_engines_data_matches_its_schema() -> None:
    schema = json.loads((ROOT / "schemas" / "engines.schema.json").read_text(encoding="utf-8"))
    data = json.loads(data_path("gpulint.data", "engines.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(data, schema)
    names = [e.name for e in builtin_engines()]
    assert len(names) == len(set(names))
    assert all(p == p.lower() for e in builtin_engines() for p in e.images)


def _container(data: dict[str, Any]) -> Container:
    return Container("c", ("spec", "containers", 0), data, "containers")


@pytest.mark.parametrize(
    ("data", "engine", "flags", "value"),
    [
        (
            {"command": ["vllm", "serve", "m", "--tensor-parallel-size=2"]},
            "vLLM",
            ("-tp", "--tensor-parallel-size"),
            2,
        ),
        (
            {"args": ["python -m sglang.launch_server --tp 4"], "command": ["sh", "-c"]},
            "SGLang",
            ("--tp",),
            4,
        ),
        (
            {"command": ["sh", "-c", "ray start --head --num-gpus=2 --block"]},
            "Ray",
            ("--num-gpus",),
            2,
        ),
        (
            {"command": ["python", "-m", "torch.distributed.run", "--nproc_per_node", "8", "t.py"]},
            "torchrun",
            ("--nproc_per_node",),
            8,
        ),
        # The program's own options are not the launcher's.
        (
            {"command": ["torchrun", "train.py", "--nproc_per_node", "8"]},
            "torchrun",
            ("--nproc_per_node",),
            None,
        ),
        # Another command of the script is not the engine's.
        (
            {"command": ["sh", "-c", "mpirun -np 2 python t.py | tail -n 50"]},
            "mpirun",
            ("-np", "-n"),
            2,
        ),
        (
            {"command": ["sh", "-c", "head -n 9 f\nmpirun python t.py"]},
            "mpirun",
            ("-np", "-n"),
            None,
        ),
        (
            {"command": ["accelerate", "launch", "--num_processes", "2", "t.py"]},
            "Accelerate",
            ("--num_processes",),
            2,
        ),
        # A path ending in /vllm inside vLLM's own command is not a second start.
        (
            {"command": ["vllm", "serve", "--download-dir", "/data/vllm", "-tp", "2"]},
            "vLLM",
            ("-tp",),
            2,
        ),
    ],
)
def test_find_engine(
    data: dict[str, Any], engine: str, flags: tuple[str, ...], value: int | None
) -> None:
    container = _container(data)
    started = find_engine(container, command_words(container, {}))
    assert started is not None and started.engine.name == engine
    found = flag_value(started.own, flags)
    assert (found[0] if found else None) == value
    assert started.starts == 1
