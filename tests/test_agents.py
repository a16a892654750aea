"""GPU node agents (``gpulint/data/agents.json``): the data is valid and recognises real agents."""

from __future__ import annotations

import json
from fnmatch import fnmatchcase

import jsonschema
import pytest
from hypothesis import given, strategies as st

from gpulint.data import data_path
from gpulint.k8s.agents import builtin_agents, glob_match, image_repository
from tests.conftest import ROOT


def test_agents_data_matches_its_schema() -> None:
    schema = json.loads((ROOT / "schemas" / "agents.schema.json").read_text(encoding="utf-8"))
    data = json.loads(data_path("gpulint.data", "agents.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(data, schema)
    assert all(p == p.lower() for a in builtin_agents() for p in (*a.images, *a.names))


@pytest.mark.parametrize(
    ("image", "repository"),
    [
        ("nvcr.io/nvidia/k8s-device-plugin:v0.17.0", "nvidia/k8s-device-plugin"),
        ("nvidia/k8s-device-plugin:1.0.0-beta4", "nvidia/k8s-device-plugin"),
        ("localhost:5000/rocm/k8s-device-plugin@sha256:0123abcd", "rocm/k8s-device-plugin"),
        ("registry.k8s.io/nfd/node-feature-discovery:v0.17.3", "nfd/node-feature-discovery"),
        ("k8s-device-plugin", "k8s-device-plugin"),
        ("FILLED BY THE OPERATOR", "filled by the operator"),
    ],
)
def test_image_repository(image: str, repository: str) -> None:
    assert image_repository(image) == repository


# Texts and patterns over a small alphabet, so that wildcards meet their text often.
_GLOB_TEXT = st.text(alphabet="ab/-.", max_size=8)
_GLOB_PATTERN = st.text(alphabet="ab/-.*?[]!", max_size=8)


@given(_GLOB_TEXT, _GLOB_PATTERN)
def test_glob_match_agrees_with_fnmatch(text: str, pattern: str) -> None:
    assert glob_match(text, pattern) == fnmatchcase(text, pattern)


@pytest.mark.parametrize(
    ("text", "pattern", "matches"),
    [
        ("nvidia/k8s-device-plugin", "*/k8s-device-plugin", True),
        ("k8s-device-plugin", "*/k8s-device-plugin", False),
        ("aba", "ab*ba", False),  # the prefix and the suffix may not share the text's "b"
        ("abba", "a*b*a", True),
        ("ab", "ab*", True),
        ("x-habana-y-device-plugin-z", "*habana*device-plugin*", True),
        ("device-plugin-habana", "*habana*device-plugin*", False),
    ],
)
def test_glob_match_cases(text: str, pattern: str, matches: bool) -> None:
    assert glob_match(text, pattern) is matches
    assert fnmatchcase(text, pattern) is matches
