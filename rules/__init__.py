"""The built-in rules: one module per rule, named ``<code>_<name>.py`` (``gpu020_...`` is GPU020).

In the repository this is the top-level ``rules/`` folder; the wheel ships it as
``gpulint.rules``. :mod:`gpulint.lint.finder` finds the rules by their file names: a new
rule is its module, its fixtures and ``make generate`` (CONTRIBUTING.md). Rule modules
import nothing of gpulint but :mod:`gpulint.api`. The data the rules read (the device
registry, the workload table, ...) is in :mod:`gpulint.data`.
"""
