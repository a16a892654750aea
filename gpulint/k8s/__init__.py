"""Kubernetes as gpulint reads it: objects, workloads and their pod specs, resources and
quantities (:mod:`gpulint.k8s.quantity`), devices (the registry of accelerator resource
names), taints, DRA claims, node agents and engines, and one file's view (``manifest``).

May import: :mod:`gpulint.util`, :mod:`gpulint.model`, :mod:`gpulint.data`,
:mod:`gpulint.loader`.
"""
