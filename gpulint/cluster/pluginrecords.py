"""What a file's device plugins configure (:class:`gpulint.cluster.deviceplugins.Found`) as JSON
data, for the project's cache (gpulint.util.factcache), and read back field by field: a
cache file is data a pull request can write."""

from __future__ import annotations

from typing import Any

from gpulint.cluster.deviceplugins import Found, Renamed, Replicated


def found_json(found: Found) -> dict[str, Any]:
    """``found`` as JSON data (the project's cache keeps what each file configures)."""
    return {
        "c": [[list(row) for row in config] for config in found.configs],
        "h": [list(row) for row in found.hami],
        "v": [list(row) for row in found.advertised],
        "p": [list(row) for row in found.places],
        "i": [list(row) for row in found.images],
    }


def found_from_json(entry: Any, into: Found) -> bool:
    """Add what :func:`found_json` wrote to ``into``, checked field by field (a cache file is
    data a pull request can write): False, and nothing added, when it is not such data."""
    if not isinstance(entry, dict):
        return False
    configs, hami, advertised = entry.get("c"), entry.get("h"), entry.get("v")
    places, images = entry.get("p"), entry.get("i")
    if not all(isinstance(v, list) for v in (configs, hami, advertised, places, images)):
        return False
    assert isinstance(configs, list) and isinstance(hami, list)
    assert isinstance(advertised, list) and isinstance(places, list) and isinstance(images, list)
    got = Found([], [], [], [], [])
    for config in configs:
        if not isinstance(config, list):
            return False
        rows = []
        for row in config:
            if not (isinstance(row, list) and len(row) == 6):
                return False
            name, base, replicas, strategy, single, said = row
            if not (
                all(isinstance(v, str) for v in (name, base, strategy, said))
                and isinstance(replicas, int)
                and not isinstance(replicas, bool)
                and isinstance(single, bool)
            ):
                return False
            rows.append(Replicated(name, base, replicas, strategy, single, said))
        got.configs.append(rows)
    for row in hami:
        if not (isinstance(row, list) and len(row) == 4 and all(isinstance(v, str) for v in row)):
            return False
        got.hami.append(Renamed(*row))
    for row in advertised:
        if not (isinstance(row, list) and len(row) == 2 and all(isinstance(v, str) for v in row)):
            return False
        got.advertised.append((row[0], row[1]))
    for row in places:
        if not (isinstance(row, list) and len(row) == 2 and isinstance(row[0], str)):
            return False
        if not isinstance(row[1], bool):
            return False
        got.places.append((row[0], row[1]))
    for row in images:
        if not (isinstance(row, list) and len(row) == 2 and all(isinstance(v, str) for v in row)):
            return False
        got.images.append((row[0], row[1]))
    into.configs.extend(got.configs)
    into.hami.extend(got.hami)
    into.advertised.extend(got.advertised)
    into.places.extend(got.places)
    into.images.extend(got.images)
    return True
