#!/usr/bin/env python3
"""What a node inventory costs: ``gpulint check`` with and without ``--cluster``.

Usage: bench/cluster.py [--files N] [--nodes M] [--runs R]

Writes a ``kubectl get nodes -o yaml`` (and ``-o json``) of M nodes under bench/out/ -- four
pools as a GPU cluster has them: CPU nodes, A100 and L4 nodes tainted
``nvidia.com/gpu=present:NoSchedule``, H100 nodes with GPU Feature Discovery labels; each
node with its own name, hostname, zone, addresses, conditions, node info and a few images,
as kubectl prints them -- then times ``gpulint check`` on the N-file gen_corpus corpus
without a cluster, with the YAML inventory and with the JSON one (commands taking turns,
median wall time of R runs, output to /dev/null) and prints the ratios. The target (issue
13): with 1,000 nodes, at most 1.5 times the run without.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import OUT, Series, corpus, load_average, timed

POOLS = (
    # name, share, instance type, cpu, memory Ki, GPUs, accelerator label, tainted
    ("default-pool", 0.5, "n2-standard-16", "15890m", "57895940Ki", 0, None, False),
    ("a100-pool", 0.3, "a2-highgpu-8g", "95690m", "1317624744Ki", 8, "nvidia-tesla-a100", True),
    ("l4-pool", 0.15, "g2-standard-24", "23890m", "92448296Ki", 2, "nvidia-l4", True),
    ("h100-pool", 0.05, "a3-highgpu-8g", "207690m", "1913932408Ki", 8, "nvidia-h100-80gb", False),
)


def node(i: int, pool: tuple[object, ...]) -> dict[str, object]:
    name_, _, instance, cpu, memory, gpus, accel, tainted = pool
    name = f"gke-prod-{name_}-5f2c9a1e-{i:04x}"
    zone = f"us-central1-{'abc'[i % 3]}"
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/instance-type": instance,
        "beta.kubernetes.io/os": "linux",
        "cloud.google.com/gke-boot-disk": "pd-balanced",
        "cloud.google.com/gke-container-runtime": "containerd",
        "cloud.google.com/gke-nodepool": name_,
        "cloud.google.com/gke-os-distribution": "cos",
        "cloud.google.com/machine-family": str(instance).split("-")[0],
        "failure-domain.beta.kubernetes.io/region": "us-central1",
        "failure-domain.beta.kubernetes.io/zone": zone,
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": instance,
        "topology.gke.io/zone": zone,
        "topology.kubernetes.io/region": "us-central1",
        "topology.kubernetes.io/zone": zone,
    }
    allocatable = {
        "cpu": cpu,
        "ephemeral-storage": "47060071478",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": memory,
        "pods": "110",
    }
    if gpus:
        labels["cloud.google.com/gke-accelerator"] = str(accel)
        labels["cloud.google.com/gke-accelerator-count"] = str(gpus)
        labels["nvidia.com/gpu.present"] = "true"
        allocatable["nvidia.com/gpu"] = str(gpus)
        if name_ == "h100-pool":
            labels.update(
                {
                    "nvidia.com/cuda.driver.major": "550",
                    "nvidia.com/gpu.count": "8",
                    "nvidia.com/gpu.family": "hopper",
                    "nvidia.com/gpu.memory": "81559",
                    "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                    "nvidia.com/mig.capable": "true",
                }
            )
    spec: dict[str, object] = {
        "podCIDR": f"10.{i // 256}.{i % 256}.0/24",
        "providerID": f"gce://prod/{zone}/{name}",
    }
    if tainted:
        spec["taints"] = [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"}]
    condition = {
        "lastHeartbeatTime": "2026-11-30T22:14:05Z",
        "lastTransitionTime": "2026-11-02T08:00:41Z",
        "message": "kubelet is posting ready status",
        "reason": "KubeletReady",
        "status": "True",
        "type": "Ready",
    }
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
            "creationTimestamp": "2026-11-02T08:00:12Z",
            "labels": labels,
            "name": name,
            "resourceVersion": str(81234567 + i),
            "uid": f"5f2c9a1e-0000-4000-8000-{i:012x}",
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"address": f"10.128.{i // 256}.{i % 256}", "type": "InternalIP"},
                {"address": name, "type": "Hostname"},
            ],
            "allocatable": allocatable,
            "capacity": allocatable,
            "conditions": [condition],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": [
                {"names": [f"gke.gcr.io/gke-metrics-agent@sha256:{i:064x}"], "sizeBytes": 31500000},
                {"names": ["registry.k8s.io/pause:3.9"], "sizeBytes": 268051},
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "6.1.100+",
                "kubeProxyVersion": "v1.31.1-gke.1678000",
                "kubeletVersion": "v1.31.1-gke.1678000",
                "operatingSystem": "linux",
                "osImage": "Container-Optimized OS from Google",
            },
        },
    }


def inventory(nodes: int) -> dict[str, object]:
    items = []
    for pool in POOLS:
        for _ in range(round(nodes * float(pool[1]))):  # type: ignore[arg-type]
            items.append(node(len(items), pool))
    return {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}


def write_inventories(nodes: int) -> tuple[Path, Path]:
    import yaml  # PyYAML: only to write the bench's input, as kubectl's YAML printer would

    data = inventory(nodes)
    folder = OUT / f"cluster-{nodes}"
    folder.mkdir(parents=True, exist_ok=True)
    as_yaml, as_json = folder / "nodes.yaml", folder / "nodes.json"
    as_yaml.write_text(yaml.safe_dump(data, sort_keys=True, default_flow_style=False))
    as_json.write_text(json.dumps(data, indent=4, sort_keys=True))
    return as_yaml, as_json


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    exe = str(Path(sys.executable).with_name("gpulint"))
    if not Path(exe).exists():
        exe = shutil.which("gpulint") or ""
    if not exe:
        print("gpulint is not installed: run `make venv` first", file=sys.stderr)
        return 2
    folder = corpus(args.files)
    as_yaml, as_json = write_inventories(args.nodes)
    commands = {
        "no cluster": [exe, "check", "--isolated", str(folder)],
        f"--cluster {args.nodes} nodes (YAML)": [
            exe, "check", "--isolated", "--cluster", str(as_yaml), str(folder),
        ],
        f"--cluster {args.nodes} nodes (JSON)": [
            exe, "check", "--isolated", "--cluster", str(as_json), str(folder),
        ],
    }  # fmt: skip
    series = {label: Series(label) for label in commands}
    for cmd in commands.values():
        timed(cmd)  # warm the page cache and the bytecode
    for _ in range(args.runs):
        for label, cmd in commands.items():
            run = timed(cmd)
            if run.exit_code not in (0, 1):
                print(f"{label}: gpulint exited {run.exit_code}", file=sys.stderr)
                return 2
            series[label].runs.append(run)
    base = series["no cluster"].median
    size = as_yaml.stat().st_size >> 10
    print(f"{args.files} gen_corpus files, inventory of {args.nodes} nodes ({size} KiB of YAML)")
    for label, s in series.items():
        print(
            f"  {label:32} median {s.median:.2f} s (best {s.best:.2f} s, CPU "
            f"{sorted(r.cpu for r in s.runs)[len(s.runs) // 2]:.2f} s)  x{s.median / base:.2f}"
        )
    print(f"  load average {load_average()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
