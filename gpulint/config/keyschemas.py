"""The larger schemas of :data:`gpulint.config.keys.KEYS` (``render``, ``node-pools``), kept
here so that the table reads as one row per key."""

from typing import Any

RENDER: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "values": {
            "type": "array",
            "description": (
                "Values files (relative to this file, inside its folder), as `helm template "
                "--values`."
            ),
            "items": {
                "type": "string",
                "minLength": 1,
            },
        },
        "set": {
            "type": "array",
            "description": "Values as `helm template --set KEY=VALUE`.",
            "items": {
                "type": "string",
                "minLength": 1,
            },
        },
        "kube-version": {
            "type": "string",
            "minLength": 1,
            "description": "The Kubernetes version the chart sees (`--kube-version`).",
        },
        "release-name": {
            "type": "string",
            "minLength": 1,
            "description": "The release name (default `release-name`).",
        },
        "namespace": {
            "type": "string",
            "minLength": 1,
            "description": "The namespace the chart is rendered into.",
        },
        "charts": {
            "type": "object",
            "description": (
                "Options for one chart, by its folder (relative to this file); values files and"
                " `set` add to the defaults."
            ),
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "values": {
                        "type": "array",
                        "description": (
                            "Values files (relative to this file, inside its folder), as `helm "
                            "template --values`."
                        ),
                        "items": {
                            "type": "string",
                            "minLength": 1,
                        },
                    },
                    "set": {
                        "type": "array",
                        "description": "Values as `helm template --set KEY=VALUE`.",
                        "items": {
                            "type": "string",
                            "minLength": 1,
                        },
                    },
                    "kube-version": {
                        "type": "string",
                        "minLength": 1,
                        "description": (
                            "The Kubernetes version the chart sees (`--kube-version`)."
                        ),
                    },
                    "release-name": {
                        "type": "string",
                        "minLength": 1,
                        "description": "The release name (default `release-name`).",
                    },
                    "namespace": {
                        "type": "string",
                        "minLength": 1,
                        "description": "The namespace the chart is rendered into.",
                    },
                },
            },
        },
    },
    "description": (
        "How `gpulint check --render` renders Helm charts: for every chart, and per chart "
        "folder under `charts`. Whether to render, and with which program, is the command "
        'line\'s choice (README "Security").'
    ),
}

NODE_POOLS: dict[str, Any] = {
    "type": "array",
    "description": (
        "The cluster's node pools (docs/cluster.md): with them, GPU020, GPU021 and GPU040 judge"
        " pods against these nodes instead of their options, and GPU051-GPU053 check MIG and "
        "sharing resource names against what the pools advertise."
    ),
    "items": {
        "type": "object",
        "additionalProperties": False,
        "required": [
            "name",
        ],
        "properties": {
            "name": {
                "type": "string",
                "minLength": 1,
                "description": "The pool's name (shown in findings).",
            },
            "instance-type": {
                "type": "string",
                "minLength": 1,
                "description": (
                    "An instance type of the built-in catalog "
                    "(gpulint/data/instance-types.json): its GPUs, vCPUs, memory and labels."
                ),
            },
            "nodes": {
                "type": "integer",
                "minimum": 0,
                "description": "How many nodes the pool has (default 1).",
            },
            "gpus": {
                "type": "integer",
                "minimum": 0,
                "description": "Accelerator devices per node (default: the instance type's).",
            },
            "gpu-model": {
                "type": "string",
                "minLength": 1,
                "description": (
                    "The GPU model (default: the instance type's), for MIG product labels."
                ),
            },
            "gpu-memory": {
                "type": "integer",
                "minimum": 1,
                "description": (
                    "GiB of memory per GPU (default: the instance type's); cGPU, gpushare and "
                    "HAMi advertise it."
                ),
            },
            "resource": {
                "type": "string",
                "minLength": 1,
                "description": (
                    "The resource the devices are advertised as (default: the instance type's, "
                    "else nvidia.com/gpu)."
                ),
            },
            "labels": {
                "type": "object",
                "additionalProperties": {
                    "type": "string",
                },
                "description": "Labels of the pool's nodes, over the instance type's.",
            },
            "taints": {
                "type": "array",
                "items": {
                    "description": (
                        "a taint as kubectl writes it (`key=value:Effect` or `key:Effect`, "
                        "Effect one of NoSchedule, PreferNoSchedule, NoExecute) or a mapping "
                        "with `key`"
                    ),
                    "anyOf": [
                        {
                            "type": "string",
                            "pattern": (
                                "^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?(=([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?)?:(NoSchedule|PreferNoSchedule|NoExecute)$"
                            ),
                            "description": (
                                "As kubectl writes it: `key=value:Effect` or `key:Effect`."
                            ),
                        },
                        {
                            "type": "object",
                            "additionalProperties": False,
                            "required": [
                                "key",
                            ],
                            "properties": {
                                "key": {
                                    "type": "string",
                                    "minLength": 1,
                                },
                                "value": {
                                    "type": "string",
                                },
                                "effect": {
                                    "enum": [
                                        "NoSchedule",
                                        "PreferNoSchedule",
                                        "NoExecute",
                                    ],
                                },
                            },
                        },
                    ],
                },
                "description": (
                    "The pool's taints. Left out: the taints the platform gives GPU pools (GKE:"
                    " nvidia.com/gpu=present:NoSchedule), else none."
                ),
            },
            "allocatable": {
                "type": "object",
                "additionalProperties": {
                    "type": [
                        "string",
                        "integer",
                        "number",
                    ],
                },
                "description": (
                    "More allocatable resources per node (Kubernetes quantities), over what the"
                    " instance type and sharing give."
                ),
            },
            "mig": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "strategy",
                ],
                "properties": {
                    "strategy": {
                        "enum": [
                            "none",
                            "single",
                            "mixed",
                        ],
                        "description": "The NVIDIA device plugin's MIG strategy.",
                    },
                    "layout": {
                        "type": "object",
                        "additionalProperties": {
                            "type": "integer",
                            "minimum": 1,
                        },
                        "description": (
                            "MIG instances per partitioned GPU, by profile (1g.10gb: 7)."
                        ),
                    },
                    "partitioned": {
                        "type": "integer",
                        "minimum": 0,
                        "description": (
                            "mixed: how many of the node's GPUs are partitioned (default: all)."
                        ),
                    },
                },
            },
            "sharing": {
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "strategy",
                ],
                "properties": {
                    "strategy": {
                        "enum": [
                            "time-slicing",
                            "mps",
                            "cgpu",
                            "gpushare",
                            "hami",
                        ],
                    },
                    "replicas": {
                        "type": "integer",
                        "minimum": 1,
                        "description": (
                            "time-slicing and MPS: replicas per device; HAMi: vGPUs per GPU "
                            "(deviceSplitCount, default 10)."
                        ),
                    },
                    "rename-by-default": {
                        "type": "boolean",
                        "description": (
                            "time-slicing and MPS: advertise <resource>.shared instead of "
                            "<resource>."
                        ),
                    },
                },
            },
        },
    },
}
