"""Kustomize roots: built with ``kubectl kustomize`` (or ``kustomize build``), and each
finding moved to the patch or base file its field came from.

* ``build``: one root built, and the mapping of a finding back.
* ``origins``: where a value of a built root is written, following its objects through the
  build as kustomize makes it.
* ``patches``: without ``--render``, which files the tree's kustomizations patch with and
  which objects of their resources those patches complete.

Imports nothing: each caller pays only for the modules it uses.
"""
