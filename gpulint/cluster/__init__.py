"""What gpulint knows of the cluster the manifests are applied to (``--cluster``,
``node-pools:``, ``platform:``): its nodes, as the scheduler sees them.

Without a cluster description the rules judge each pod against their options (the default
GPU taint, ``max-per-node``); with one, the facts replace the guesses.

May import: :mod:`gpulint.util`, :mod:`gpulint.model`, :mod:`gpulint.data`,
:mod:`gpulint.loader`, :mod:`gpulint.k8s` (and the errors and codes below everything).
"""
