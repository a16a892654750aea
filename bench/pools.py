#!/usr/bin/env python3
"""The cost of a described cluster: ``gpulint check`` on 2,000 gen_corpus files without a
cluster, with ``platform:`` and ``node-pools:`` in the configuration, and with Karpenter
NodePools and Kueue ResourceFlavors in the linted tree (the pre-pass of
gpulint/cluster/objects.py).

Usage: bench/pools.py [--files N] [--runs R]

The three commands take turns round by round (the machine is shared); the table gives the
median wall time of R rounds and the ratio to the run without a cluster.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import OUT, Series, corpus, load_average, timed

CONFIG = """\
platform: eks
node-pools:
  - {name: p4d, instance-type: p4d.24xlarge, nodes: 8,
     taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}
  - {name: p5, instance-type: p5.48xlarge, nodes: 4,
     mig: {strategy: mixed, layout: {3g.40gb: 2}, partitioned: 4}}
  - {name: g5, instance-type: g5.12xlarge, nodes: 16,
     sharing: {strategy: time-slicing, replicas: 4}}
  - {name: g6e, instance-type: g6e.48xlarge, nodes: 2}
  - {name: inf2, instance-type: inf2.48xlarge, nodes: 2}
  - {name: cpu, gpus: 0, allocatable: {cpu: "16", memory: 64Gi}, nodes: 40}
"""

OBJECTS = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    spec:
      requirements:
      - {key: karpenter.k8s.aws/instance-family, operator: In, values: [g5, g6, g6e, p4d, p5]}
      taints:
      - {key: nvidia.com/gpu, effect: NoSchedule}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: a100}
spec:
  nodeLabels: {node.kubernetes.io/instance-type: p4d.24xlarge}
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("gpulint"))
    source = corpus(args.files)
    # The corpus plus one file of node-pool objects, and a configuration with pools.
    tree = OUT / f"pools-{args.files}"
    if not tree.exists():
        shutil.copytree(source, tree / "corpus")
        (tree / "nodepools.yaml").write_text(OBJECTS, encoding="utf-8")
    config = OUT / "pools.gpulint.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    # The objects are read once a cluster is described: a platform alone is enough.
    platform = OUT / "platform.gpulint.yaml"
    platform.write_text("platform: eks\n", encoding="utf-8")
    cases = {
        "no cluster": [exe, "check", "--isolated", str(tree / "corpus")],
        "node-pools + platform": [exe, "check", "--config", str(config), str(tree / "corpus")],
        "platform + NodePool/ResourceFlavor in the tree": [
            exe,
            "check",
            "--config",
            str(platform),
            str(tree),
        ],
    }
    for cmd in cases.values():
        timed(cmd)  # warm the page cache and the bytecode
    series = {name: Series(name) for name in cases}
    for _ in range(args.runs):
        for name, cmd in cases.items():
            run = timed(cmd)
            if run.exit_code not in (0, 1):
                print(f"{name}: gpulint exited {run.exit_code}", file=sys.stderr)
                return 2
            series[name].runs.append(run)
    base = series["no cluster"].median
    print(f"{args.files} gen_corpus files, median of {args.runs}; load average {load_average()}")
    print("| case | median wall | best | vs no cluster |")
    print("|---|---|---|---|")
    for name, s in series.items():
        print(f"| {name} | {s.median:.2f} s | {s.best:.2f} s | {s.median / base:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
