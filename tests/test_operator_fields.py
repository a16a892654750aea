"""gpulint/data/operator-fields.json holds together: what GPU049 and GPU033 read of it.

The table is generated (``python -m tests.operator_fields``) from the operators' releases,
which a clone of this project does not hold; these checks read the table as the rules do.
"""

from __future__ import annotations

import re

from gpulint.api import operator_fields, operator_releases, version_of


def test_every_kind_comes_from_one_operator_whose_releases_it_names() -> None:
    data = operator_fields()
    owners = [k for source in data["sources"].values() for k in source["kinds"]]
    assert sorted(owners) == sorted(data["kinds"])  # each kind once, from one operator
    for kind in data["kinds"]:
        name, first, last = operator_releases(kind)
        assert name in data["sources"]
        assert version_of(first) and version_of(last) and version_of(first) <= version_of(last)
    assert operator_releases("example.com/Unknown") == ("operator", "?", "?")


def test_required_fields_are_fields_of_their_kind_and_name_a_release() -> None:
    data = operator_fields()
    assert data["required"]["nvidia.com/ClusterPolicy"]["v1"]["toolkit"] == "all"
    for kind, versions in data["required"].items():
        tree = data["kinds"][kind]
        for version, fields in versions.items():
            assert re.fullmatch(r"v\d+((alpha|beta)\d+)?", version), version
            for field, since in fields.items():
                assert field in tree, (kind, field)
                assert since == "all" or version_of(since), (kind, field, since)


def test_field_trees_are_mappings_of_fields_to_levels_or_leaves() -> None:
    todo = list(operator_fields()["kinds"].values())
    while todo:
        level = todo.pop()
        assert isinstance(level, dict) and level
        for name, sub in level.items():
            assert isinstance(name, str) and (sub == 0 or isinstance(sub, dict))
            if isinstance(sub, dict):
                todo.append(sub)


def test_each_chart_names_its_releases_and_holds_its_components() -> None:
    """The charts' top-level values (GPU049 checks the values handed to them) come from a
    source that names the releases read, and hold the keys every release has."""
    data = operator_fields()
    charts = data["charts"]
    assert {"gpu-operator", "nvidia-device-plugin"} <= set(charts)
    for chart, keys in charts.items():
        assert chart in data["sources"] and ".." in data["sources"][chart]["releases"]
        assert keys == sorted(set(keys)) and "global" in keys
    assert {"driver", "toolkit", "devicePlugin", "node-feature-discovery"} <= set(
        charts["gpu-operator"]
    )
    assert {"config", "migStrategy", "nfd", "gfd"} <= set(charts["nvidia-device-plugin"])
    assert "timeSlicing" not in charts["gpu-operator"]
    assert "sharing" not in charts["nvidia-device-plugin"]
