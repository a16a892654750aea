"""Kubernetes ``resource.Quantity``: parsed as the Go code parses it (``parse``), exact
arithmetic on it (``arith``) and written short for people (``display``).

May import: nothing of gpulint outside this package.
"""
