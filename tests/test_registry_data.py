"""Checks on the device registry data (gpulint/data/devices.json) and its schema.

The registry is hand-maintained data, so these tests guard what a JSON Schema cannot:
cross references (schemes, replacements), Kubernetes name rules, the MIG profile table,
and coverage of every GPU resource key that appears in the real-world manifest corpus.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from tests.conftest import CORPUS, needs_corpus

PROJECT_ROOT = Path(__file__).resolve().parents[1]
REGISTRY_PATH = PROJECT_ROOT / "gpulint" / "data" / "devices.json"
SCHEMA_PATH = PROJECT_ROOT / "schemas" / "devices.schema.json"
# The real-world corpus is optional data (GPULINT_CORPUS, see tests/conftest.py).
MANIFEST_PATH = (CORPUS or Path()) / "MANIFEST.tsv"

# Keys from the corpus's gpu_resource_keys column that are deliberately NOT in the
# registry because no device plugin advertises them as a container GPU resource.
# Each entry says why. Retired names belong in the registry's "legacy" list instead
# (alpha.kubernetes.io/nvidia-gpu is there), and renamed-but-real vendor names (HAMi's
# older hygon.com/dcu*, cambricon.com/mlunum, iluvatar.ai/vgpu, enflame.com/vgcu, ...)
# are registry resources with a note, so this list is currently empty.
NOT_ADVERTISED: dict[str, str] = {}

# DNS-1123 subdomain (the prefix of a qualified name) and the name part of a qualified
# name, as in k8s.io/apimachinery/pkg/util/validation (IsQualifiedName).
_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"^{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*$")
_QUALIFIED_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")

# What the real MIG table needs: '<n>g.<m>gb' plus the variants mig-parted uses
# ('+me' media extensions, '+me.all', '+gfx' graphics, '-me' without media engines).
MIG_PROFILE = re.compile(r"^\d+g\.\d+gb(\+me|\+me\.all|\+gfx|-me)?$")

# Percentage resources capped at 100 (docs/domain.md#sharing-schemes-and-their-values).
PERCENT_CAPPED = [
    "nvidia.com/gpucores",
    "nvidia.com/gpumem-percentage",
    "volcano.sh/vgpu-memory-percentage",
    "volcano.sh/vgpu-cores",
    "hygon.com/dcucores",
    "aliyun.com/gpu-core.percentage",
]


def _load_json(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="module")
def registry() -> dict[str, Any]:
    data = _load_json(REGISTRY_PATH)
    assert isinstance(data, dict)
    return data


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    data = _load_json(SCHEMA_PATH)
    assert isinstance(data, dict)
    return data


def is_qualified_name(name: str) -> bool:
    """IsQualifiedName: optional DNS-subdomain prefix (<= 253) + '/' + name part (<= 63)."""
    prefix, sep, part = name.rpartition("/")
    if sep and (not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        return False
    return 0 < len(part) <= 63 and bool(_QUALIFIED_NAME_PART.match(part))


def is_extended_resource_name(name: str) -> bool:
    """helper.IsExtendedResourceName from pkg/apis/core/helper/helpers.go."""
    if "/" not in name or "kubernetes.io/" in name:  # IsNativeResource
        return False
    if name.startswith("requests."):
        return False
    # The quota form "requests.<name>" must itself be a qualified name.
    return is_qualified_name("requests." + name)


def is_domain_prefixed(name: str) -> bool:
    """A vendor resource name: '<domain with a dot>/<name>'."""
    prefix, sep, _ = name.partition("/")
    return bool(sep) and "." in prefix


def mig_resource_name(mig: dict[str, Any], profile: str) -> str:
    replacement = mig.get("plus_replacement", ".")
    template: str = mig["resource_template"]
    return template.format(profile=profile.replace("+", replacement))


def mig_profiles(mig: dict[str, Any]) -> set[str]:
    profiles = {p for plist in mig["models"].values() for p in plist}
    profiles.update(extra["profile"] for extra in mig.get("additional_profiles", []))
    return profiles


def mig_names(mig: dict[str, Any]) -> set[str]:
    return {mig_resource_name(mig, p) for p in mig_profiles(mig)}


def shared_names(registry: dict[str, Any]) -> set[str]:
    shared = registry["shared_suffix"]
    names: set[str] = set()
    for base in shared["applies_to"]:
        bases = mig_names(registry["mig"]) if base == "mig" else {base}
        names.update(b + shared["suffix"] for b in bases)
    return names


def corpus_keys() -> Iterator[tuple[str, str]]:
    """(key, corpus file) for every key in the gpu_resource_keys column."""
    with MANIFEST_PATH.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            for key in row["gpu_resource_keys"].split(","):
                key = key.strip()
                if key and key != "-":
                    yield key, row["file"]


# --- schema ---------------------------------------------------------------------------


def test_schema_is_a_valid_draft_2020_12_schema(schema: dict[str, Any]) -> None:
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_registry_matches_schema(registry: dict[str, Any], schema: dict[str, Any]) -> None:
    validator = Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(registry), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in errors
    )


def test_schema_documents_every_property(schema: dict[str, Any]) -> None:
    """Every declared property and definition carries a description."""
    missing: list[str] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            for name, sub in node.get("properties", {}).items():
                if isinstance(sub, dict) and "description" not in sub:
                    missing.append(f"{path}/properties/{name}")
            for name, sub in node.get("$defs", {}).items():
                if isinstance(sub, dict) and "description" not in sub:
                    missing.append(f"{path}/$defs/{name}")
            for key, sub in node.items():
                if key not in ("if", "then"):  # conditions, not field declarations
                    walk(sub, f"{path}/{key}")
        elif isinstance(node, list):
            for index, sub in enumerate(node):
                walk(sub, f"{path}/{index}")

    walk(schema, "#")
    assert not missing, missing


def test_schema_rejects_unknown_fields_and_missing_advice(schema: dict[str, Any]) -> None:
    validator = Draft202012Validator(schema)
    resource = {
        "name": "aliyun.com/gpu-count",
        "family": "aliyun",
        "hardware": "nvidia",
        "unit": "GPUs",
        "schemes": ["s"],
        "container_request": False,
        "source": "x",
    }
    doc = {
        "schemes": {"s": {"description": "d", "source": "x"}},
        "resources": [resource],
        "mig": {
            "resource_template": "nvidia.com/mig-{profile}",
            "me_suffix": ".me",
            "schemes": ["s"],
            "hardware": "nvidia",
            "source": "x",
            "models": {"A30-24GB": ["1g.6gb"]},
        },
        "shared_suffix": {
            "suffix": ".shared",
            "applies_to": ["mig"],
            "schemes": ["s"],
            "source": "x",
        },
        "legacy": [],
    }
    assert not validator.is_valid(doc)  # advice is required when container_request is false
    resource["advice"] = "use the pod label"
    assert validator.is_valid(doc)
    resource["typo"] = True
    assert not validator.is_valid(doc)


# --- resource names -------------------------------------------------------------------


def test_resource_names_are_unique(registry: dict[str, Any]) -> None:
    names = [r["name"] for r in registry["resources"]] + [e["name"] for e in registry["legacy"]]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    assert not duplicates, duplicates


def test_resource_names_are_domain_prefixed_extended_resources(registry: dict[str, Any]) -> None:
    bad = [
        r["name"]
        for r in registry["resources"]
        if not (is_extended_resource_name(r["name"]) and is_domain_prefixed(r["name"]))
    ]
    assert not bad, bad


def test_generated_names_are_extended_resources_and_do_not_collide(
    registry: dict[str, Any],
) -> None:
    generated = mig_names(registry["mig"]) | shared_names(registry)
    listed = {r["name"] for r in registry["resources"]} | {e["name"] for e in registry["legacy"]}
    assert not generated & listed, sorted(generated & listed)
    bad = sorted(n for n in generated if not is_extended_resource_name(n))
    assert not bad, bad
    assert "nvidia.com/gpu.shared" in generated
    assert "nvidia.com/mig-1g.5gb.me" in generated
    assert "nvidia.com/mig-1g.5gb.me.shared" in generated


def test_legacy_names(registry: dict[str, Any]) -> None:
    current = {r["name"] for r in registry["resources"]}
    for entry in registry["legacy"]:
        name = entry["name"]
        assert is_qualified_name(name), name
        assert is_domain_prefixed(name), name
        # kubernetes.io/ names are allowed only here (alpha.kubernetes.io/nvidia-gpu).
        assert "kubernetes.io/" in name or is_extended_resource_name(name), name
        assert entry["replacement"] in current, entry
    assert "alpha.kubernetes.io/nvidia-gpu" in {e["name"] for e in registry["legacy"]}


def test_only_legacy_names_use_the_kubernetes_io_namespace(registry: dict[str, Any]) -> None:
    assert not [r["name"] for r in registry["resources"] if "kubernetes.io/" in r["name"]]


# --- schemes --------------------------------------------------------------------------


def _scheme_users(registry: dict[str, Any]) -> Iterator[tuple[str, list[str]]]:
    for resource in registry["resources"]:
        yield resource["name"], resource["schemes"]
    yield "mig", registry["mig"]["schemes"]
    yield "shared_suffix", registry["shared_suffix"]["schemes"]


def test_every_referenced_scheme_exists(registry: dict[str, Any]) -> None:
    known = set(registry["schemes"])
    unknown = [
        (user, s) for user, schemes in _scheme_users(registry) for s in schemes if s not in known
    ]
    assert not unknown, unknown


def test_every_scheme_is_used(registry: dict[str, Any]) -> None:
    used = {s for _, schemes in _scheme_users(registry) for s in schemes}
    assert not set(registry["schemes"]) - used, sorted(set(registry["schemes"]) - used)


def test_a_scheme_runs_on_one_kind_of_hardware(registry: dict[str, Any]) -> None:
    """A scheme is a node mode, so all of its resources sit on the same accelerator."""
    hardware: dict[str, set[str]] = {}
    for resource in registry["resources"]:
        for scheme in resource["schemes"]:
            hardware.setdefault(scheme, set()).add(resource["hardware"])
    for section in ("mig", "shared_suffix"):
        for scheme in registry[section]["schemes"]:
            hardware.setdefault(scheme, set()).add(registry[section].get("hardware", "nvidia"))
    mixed = {s: sorted(h) for s, h in hardware.items() if len(h) > 1}
    assert not mixed, mixed


def _common_scheme(registry: dict[str, Any], *names: str) -> set[str]:
    by_name = {r["name"]: set(r["schemes"]) for r in registry["resources"]}
    mig_schemes = set(registry["mig"]["schemes"])
    sets = [mig_schemes if n.startswith("nvidia.com/mig-") else by_name[n] for n in names]
    return set.intersection(*sets)


def test_scheme_examples_from_the_brief(registry: dict[str, Any]) -> None:
    assert not _common_scheme(registry, "nvidia.com/gpu", "aliyun.com/gpu-mem")
    assert _common_scheme(registry, "nvidia.com/gpu", "nvidia.com/gpumem") == {"hami"}
    assert _common_scheme(registry, "tencent.com/vcuda-core", "tencent.com/vcuda-memory")
    assert _common_scheme(registry, "aliyun.com/gpu-mem", "aliyun.com/gpu-core.percentage")
    assert "nvidia-mig-mixed" in _common_scheme(registry, "nvidia.com/gpu", "nvidia.com/mig-1g.5gb")
    assert not _common_scheme(registry, "volcano.sh/gpu-memory", "volcano.sh/gpu-number")
    assert not _common_scheme(registry, "nvidia.com/gpu", "amd.com/gpu")


# --- per-resource fields --------------------------------------------------------------


def test_node_level_resources_carry_advice(registry: dict[str, Any]) -> None:
    node_level = [r for r in registry["resources"] if not r["container_request"]]
    assert [r["name"] for r in node_level] == ["aliyun.com/gpu-count", "alibabacloud.com/gpu-count"]
    for resource in node_level:
        assert resource["name"] in resource["advice"]
    assert "aliyun.com/gpu-core.percentage" in node_level[0]["advice"]
    assert "alibabacloud.com/gpu-mem" in node_level[1]["advice"]


def _terms(constraints: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield constraints
    yield from constraints.get("any_of", [])


def test_constraints_are_satisfiable(registry: dict[str, Any]) -> None:
    for resource in registry["resources"]:
        constraints = resource.get("constraints")
        if constraints is None:
            continue
        for term in _terms(constraints):
            low, high = term.get("min", 0), term.get("max")
            assert high is None or low <= high, resource["name"]
            step = term.get("multiple_of")
            if step is not None and high is not None:
                first = -(-low // step) * step
                assert first <= high, resource["name"]


def _allowed(constraints: dict[str, Any], value: int) -> bool:
    def ok(term: dict[str, Any]) -> bool:
        return (
            value >= term.get("min", value)
            and value <= term.get("max", value)
            and value % term.get("multiple_of", 1) == 0
        )

    alternatives = constraints.get("any_of")
    return ok(constraints) and (not alternatives or any(ok(t) for t in alternatives))


def test_domain_constraints(registry: dict[str, Any]) -> None:
    by_name = {r["name"]: r for r in registry["resources"]}
    for name in PERCENT_CAPPED:
        assert by_name[name]["constraints"]["max"] == 100, name

    cgpu = by_name["aliyun.com/gpu-core.percentage"]["constraints"]
    assert [v for v in range(0, 106) if _allowed(cgpu, v)] == list(range(5, 101, 5))

    vcuda = by_name["tencent.com/vcuda-core"]["constraints"]
    for value in (0, 20, 50, 99, 100, 200, 300):
        assert _allowed(vcuda, value), value
    for value in (101, 150, 250):
        assert not _allowed(vcuda, value), value


# --- MIG ------------------------------------------------------------------------------


def test_mig_profiles_match_the_profile_grammar(registry: dict[str, Any]) -> None:
    bad = sorted(p for p in mig_profiles(registry["mig"]) if not MIG_PROFILE.match(p))
    assert not bad, bad


def test_mig_suffixes(registry: dict[str, Any]) -> None:
    mig = registry["mig"]
    assert mig["me_suffix"] == mig.get("plus_replacement", ".") + "me"
    assert mig_resource_name(mig, "1g.5gb+me") == "nvidia.com/mig-1g.5gb.me"
    assert mig_resource_name(mig, "1g.24gb+me.all") == "nvidia.com/mig-1g.24gb.me.all"
    assert mig_resource_name(mig, "2g.48gb-me") == "nvidia.com/mig-2g.48gb-me"


def test_mig_table_contains_domain_md_profiles(registry: dict[str, Any]) -> None:
    """The per-model profiles of docs/domain.md#mig-profiles (from mig-parted's default config)."""
    models = registry["mig"]["models"]
    expected = {
        "A100-40GB": ["1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"],
        "A100-80GB": [
            "1g.10gb",
            "1g.10gb+me",
            "1g.20gb",
            "2g.20gb",
            "3g.40gb",
            "4g.40gb",
            "7g.80gb",
        ],
        "H100-80GB": [
            "1g.10gb",
            "1g.10gb+me",
            "1g.20gb",
            "2g.20gb",
            "3g.40gb",
            "4g.40gb",
            "7g.80gb",
        ],
        "H100-NVL": [
            "1g.12gb",
            "1g.12gb+me",
            "1g.24gb",
            "2g.24gb",
            "3g.47gb",
            "4g.47gb",
            "7g.94gb",
        ],
        "H100-96GB": ["3g.48gb", "4g.48gb", "7g.96gb"],
        "GH200": ["3g.48gb", "4g.48gb", "7g.96gb"],
        "H200-141GB": [
            "1g.18gb",
            "1g.18gb+me",
            "1g.35gb",
            "2g.35gb",
            "3g.71gb",
            "4g.71gb",
            "7g.141gb",
        ],
        "A30-24GB": ["1g.6gb", "1g.6gb+me", "2g.12gb", "2g.12gb+me", "4g.24gb"],
    }
    for model, profiles in expected.items():
        missing = set(profiles) - set(models[model])
        assert not missing, (model, sorted(missing))


# --- corpus coverage ------------------------------------------------------------------


@needs_corpus
def test_every_corpus_gpu_key_is_known(registry: dict[str, Any]) -> None:
    known = (
        {r["name"] for r in registry["resources"]}
        | {e["name"] for e in registry["legacy"]}
        | mig_names(registry["mig"])
        | shared_names(registry)
    )
    unknown: dict[str, list[str]] = {}
    for key, source in corpus_keys():
        if key not in known and key not in NOT_ADVERTISED:
            unknown.setdefault(key, []).append(source)
    assert not unknown, unknown


@needs_corpus
def test_not_advertised_allow_list_is_current(registry: dict[str, Any]) -> None:
    in_corpus = {key for key, _ in corpus_keys()}
    listed = {r["name"] for r in registry["resources"]} | {e["name"] for e in registry["legacy"]}
    for key, reason in NOT_ADVERTISED.items():
        assert reason.strip(), key
        assert key in in_corpus, f"{key} no longer appears in the corpus"
        assert key not in listed, f"{key} is in the registry; drop it from NOT_ADVERTISED"
