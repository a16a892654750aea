"""The built-in instance-type catalog (``gpulint/data/instance-types.json``): what a cloud GPU
instance type has (GPU model, count and memory, vCPUs, memory) and the labels such nodes
carry, each row with the vendor page it was read from.

A ``node-pools:`` entry names an instance type and gets its nodes from here; an unknown name
is an error that offers the closest names (:func:`closest`).
"""

import json
from collections.abc import Mapping
from functools import cache
from typing import Any, NamedTuple

from gpulint.data import data_path

#: The kubelet's well-known label for the instance type, on every cloud node.
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


class InstanceType(NamedTuple):
    name: str
    provider: str
    gpu_model: str
    gpus: int
    gpu_memory_gib: int
    resource: str
    vcpus: int
    memory_gib: int
    labels: Mapping[str, str]
    source: str


class Catalog(NamedTuple):
    instance_types: Mapping[str, InstanceType]
    #: GKE's ``cloud.google.com/gke-accelerator`` values -> (GPU model, GiB per GPU).
    gke_accelerators: Mapping[str, tuple[str, int]]

    def get(self, name: str) -> InstanceType | None:
        return self.instance_types.get(name)

    def closest(self, name: str, n: int = 3) -> list[str]:
        """The catalog's names nearest ``name`` (case-insensitively), best first."""
        import difflib

        lowered = {k.lower(): k for k in self.instance_types}
        hits = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.6)
        return [lowered[h] for h in hits]


def catalog_path() -> Any:
    return data_path("gpulint.data", "instance-types.json")


@cache
def builtin_catalog() -> Catalog:
    with open(catalog_path(), encoding="utf-8") as fh:
        data = json.load(fh)
    types = {}
    for row in data["instance_types"]:
        labels = {INSTANCE_TYPE_LABEL: row["name"], **row["labels"]}
        types[row["name"]] = InstanceType(**{**row, "labels": labels})
    accelerators = {
        row["value"]: (row["gpu_model"], row["gpu_memory_gib"]) for row in data["gke_accelerators"]
    }
    return Catalog(types, accelerators)
